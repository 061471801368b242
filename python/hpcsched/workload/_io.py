"""Reading and writing input/output files, plain or gzip-compressed (and TOML files).

Reading recognises gzip by its magic bytes (so a compressed file without ``.gz`` still reads);
writing compresses when the name ends in ``.gz``. Writes are atomic: the data goes to a temporary
file in the destination folder, which then replaces the destination with ``os.replace``.
"""

from __future__ import annotations

import contextlib
import gzip
import os
import tempfile
import tomllib
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hpcsched.exceptions import InputError

_GZIP_MAGIC = b"\x1f\x8b"


def read_bytes(
    path: str | os.PathLike[str], *, check_head: Callable[[bytes], None] | None = None
) -> bytes | bytearray:
    """The content of ``path``, decompressed when it is gzip; ``InputError`` when unreadable.

    Decompression stops with an ``InputError`` past ``_core.inflated_cap`` of the file's size
    (the SWF reader's cap: real inputs compress 5 to 25 times, a gzip bomb a thousand times),
    and ``check_head`` sees the first decompressed bytes before the rest is inflated, so that
    an input that is plainly not of its format fails at once.
    """
    name = os.fspath(path)
    try:
        data = Path(name).read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read file: {exc.strerror or exc}", path=name) from None
    if data[:2] != _GZIP_MAGIC:
        if name.endswith(".gz"):
            raise InputError("named .gz but not gzip data", path=name)
        if check_head is not None:
            check_head(data[:_HEAD_BYTES])
        return data
    try:
        return _inflate(data, name, check_head)
    except (OSError, EOFError, zlib.error) as exc:
        raise InputError(f"corrupt gzip data: {exc}", path=name) from None


#: Decompressed bytes shown to ``check_head``, and inflated per step.
_HEAD_BYTES = 1 << 16
_STEP = 1 << 20


def _inflate(data: bytes, name: str, check_head: Callable[[bytes], None] | None) -> bytearray:
    """The gzip members of ``data``, one step at a time, within the cap."""
    from hpcsched import _core

    cap = _core.inflated_cap(len(data))
    out = bytearray()
    rest = data
    while rest:
        stream = zlib.decompressobj(wbits=31)
        while not stream.eof:
            piece = stream.decompress(rest, _HEAD_BYTES if check_head and not out else _STEP)
            rest = stream.unconsumed_tail
            if not piece and not rest:
                raise EOFError("the stream ends before its end marker (a truncated file?)")
            out += piece
            if len(out) > cap:
                raise InputError(
                    f"decompresses to more than {cap >> 20} MiB (over {cap // len(data)}x its "
                    f"{len(data)} bytes): not an input file; decompress it yourself to read it "
                    "anyway",
                    path=name,
                )
            if check_head is not None and len(out) == len(piece):
                check_head(bytes(out[:_HEAD_BYTES]))
        rest = stream.unused_data
        if rest[:2] != _GZIP_MAGIC:
            if rest.strip(b"\x00"):
                raise OSError("trailing data after the last gzip member")
            break  # zero padding after the last member, as tar and some tools leave
    return out  # not bytes(out): that would hold the text twice


def read_toml(path: str | os.PathLike[str]) -> dict[str, Any]:
    """A TOML file as a dict; ``InputError`` naming the file when unreadable or invalid."""
    name = os.fspath(path)
    data = read_bytes(name)
    try:
        return tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text (byte {exc.start})", path=name) from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"invalid TOML: {exc}", path=name) from None


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` atomically, gzip-compressed when the name ends in ``.gz``."""
    name = os.fspath(path)
    if name.endswith(".gz"):
        # mtime=0: the same content gives the same bytes (reproducible outputs)
        data = gzip.compress(data, compresslevel=6, mtime=0)
    folder = os.path.dirname(os.path.abspath(name))
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(name)}.", suffix=".tmp", dir=folder)
    try:
        # mkstemp creates the file private (0600); give it the usual umask-based mode
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, name)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
