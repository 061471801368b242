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
from pathlib import Path
from typing import Any

from hpcsched.exceptions import InputError

_GZIP_MAGIC = b"\x1f\x8b"


def read_bytes(path: str | os.PathLike[str]) -> bytes:
    """The content of ``path``, decompressed when it is gzip; ``InputError`` when unreadable."""
    name = os.fspath(path)
    try:
        data = Path(name).read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read file: {exc.strerror or exc}", path=name) from None
    if data[:2] == _GZIP_MAGIC:
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as exc:
            raise InputError(f"corrupt gzip data: {exc}", path=name) from None
    return data


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
