"""Reading and writing input/output files, plain or gzip-compressed (and TOML files).

Reading recognises gzip by its magic bytes (so a compressed file without ``.gz`` still reads);
writing compresses when the name ends in ``.gz``. Writes are atomic: the data goes to a temporary
file in the destination folder, which then replaces the destination with ``os.replace``.

Staging (the temporary files here and the run directories' staging folders of
:mod:`hpcsched.output`) is named ``.<name>.<pid>.<random>.tmp`` and locked (``flock``) by its
writer for as long as it writes, so that a later writer of the same destination can remove what
a killed writer left, and only that: a staging entry is stale when its pid is no live process
here *and* nobody holds its lock (the lock speaks for a writer on another machine of a shared
file system, whose pid means nothing here).
"""

from __future__ import annotations

import codecs
import contextlib
import gzip
import json
import os
import re
import shutil
import stat
import tempfile
import tomllib
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from hpcsched.exceptions import InputError

try:
    import fcntl
except ImportError:  # not POSIX: no locks, so no staging is ever judged stale
    fcntl = None  # type: ignore[assignment]

_GZIP_MAGIC = b"\x1f\x8b"
#: After ``.<name>``: the writer's pid, tempfile's 8 random characters, ``-old`` for the run
#: directory a new one replaces, ``.tmp``.
_STAGING_TAIL = r"\.(?P<pid>[0-9]+)\.[a-z0-9_]{8}(?:-old)?\.tmp"


#: What ``check_regular_file`` calls the files it refuses.
_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a pipe"),
    (stat.S_ISSOCK, "a socket"),
)


def check_regular_file(name: str) -> None:
    """``InputError`` unless ``name`` is (or links to) a regular file that exists. Inputs are
    read whole and capped by their size (a gzip may inflate to a multiple of it): a device such
    as /dev/zero has no size and no end, and a pipe read here would be consumed for nothing."""
    try:
        mode = os.stat(name).st_mode
    except OSError as exc:
        raise InputError(f"cannot read file: {exc.strerror or exc}", path=name) from None
    if not stat.S_ISREG(mode):
        kind = next((text for test, text in _KINDS if test(mode)), "not a file")
        raise InputError(
            f"{kind}, not a regular file: inputs are read from files (save a stream to a file "
            "first)",
            path=name,
        )


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
    check_regular_file(name)
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
    out = bytearray()
    for piece in _inflated(data, name, check_head, _STEP):
        out += piece
    return out  # not bytes(out): that would hold the text twice


def _inflated(
    data: bytes, name: str, check_head: Callable[[bytes], None] | None, step: int
) -> Iterator[bytes]:
    """The gzip members of ``data`` inflated ``step`` bytes at a time, within the cap."""
    from hpcsched import _core

    cap = _core.inflated_cap(len(data))
    total = 0
    rest = data
    while rest:
        stream = zlib.decompressobj(wbits=31)
        while not stream.eof:
            piece = stream.decompress(rest, _HEAD_BYTES if check_head and not total else step)
            rest = stream.unconsumed_tail
            if not piece and not rest:
                raise EOFError("the stream ends before its end marker (a truncated file?)")
            first = not total
            total += len(piece)
            if total > cap:
                raise InputError(
                    f"decompresses to more than {cap >> 20} MiB (over {cap // len(data)}x its "
                    f"{len(data)} bytes): not an input file; decompress it yourself to read it "
                    "anyway",
                    path=name,
                )
            if check_head is not None and first:
                check_head(bytes(piece[:_HEAD_BYTES]))
            yield piece
        rest = stream.unused_data
        if rest[:2] != _GZIP_MAGIC:
            if rest.strip(b"\x00"):
                raise OSError("trailing data after the last gzip member")
            break  # zero padding after the last member, as tar and some tools leave


def read_blocks(path: str | os.PathLike[str], size: int = 1 << 24) -> Iterator[bytes]:
    """The content of ``path`` (decompressed when it is gzip, within ``read_bytes``'s cap)
    ``size`` bytes at a time, for a reader that parses as it goes: it holds a block, not the
    whole file. ``InputError`` as ``read_bytes``."""
    name = os.fspath(path)
    check_regular_file(name)
    try:
        with open(name, "rb") as f:
            head = f.read(2)
            if head != _GZIP_MAGIC:
                if name.endswith(".gz"):
                    raise InputError("named .gz but not gzip data", path=name)
                block = head + f.read(size - len(head))
                while block:
                    yield block
                    block = f.read(size)
                return
            data = head + f.read()
    except OSError as exc:
        raise InputError(f"cannot read file: {exc.strerror or exc}", path=name) from None
    try:
        yield from _inflated(data, name, None, size)
    except (OSError, EOFError, zlib.error) as exc:
        raise InputError(f"corrupt gzip data: {exc}", path=name) from None


def read_text(path: str | os.PathLike[str]) -> str:
    """A text file (plain or gzip), UTF-8 with or without a byte-order mark; ``InputError``
    naming the file and the line when it is not."""
    name = os.fspath(path)
    data = read_bytes(name)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise not_utf8(data, exc.start, name) from None


def not_utf8(
    data: bytes | bytearray | memoryview, position: int, name: str, first_line: int = 1
) -> InputError:
    """The error for the byte at ``position`` that is no UTF-8: its line (``data`` opening at
    line ``first_line``) and its byte in the line (an editor shows lines, not offsets)."""
    before = bytes(memoryview(data)[:position])  # (an error's copy)
    line_start = before.rfind(b"\n") + 1
    return InputError(
        f"not UTF-8 text (byte {position - line_start + 1} of the line: "
        f"{bytes(memoryview(data)[position : position + 1])!r})",
        path=name,
        line=first_line + before.count(b"\n"),
    )


#: UTF-8 is checked this many bytes at a time (a check keeps no decoded text).
_UTF8_STEP = 1 << 22


def check_utf8(
    data: bytes | bytearray | memoryview, name: str, start: int = 0, first_line: int = 1
) -> None:
    """``InputError`` (naming the line, ``data`` opening at line ``first_line``) unless
    ``data[start:]`` is UTF-8, without holding a decoded copy: a reader that parses the bytes
    itself needs no text as large again. ``data`` must not end inside a character."""
    if not isinstance(data, memoryview) and data.isascii():
        return
    decoder = codecs.getincrementaldecoder("utf-8")()
    view = memoryview(data)
    for offset in range(start, len(view), _UTF8_STEP):
        pending = len(decoder.getstate()[0])
        last = offset + _UTF8_STEP >= len(view)
        try:
            decoder.decode(view[offset : offset + _UTF8_STEP], final=last)
        except UnicodeDecodeError as exc:
            raise not_utf8(data, offset - pending + exc.start, name, first_line) from None


def loads_json(text: str | bytes | bytearray, name: str) -> Any:
    """A JSON document; ``InputError`` naming the file (and line) when it is not one, also
    when it nests deeper than Python's recursion limit (json raises RecursionError there)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"not JSON: {exc.msg} (column {exc.colno})", path=name, line=exc.lineno
        ) from None
    except RecursionError:
        raise InputError("JSON nested too deep to read", path=name) from None
    except ValueError as exc:  # an integer of more than 4300 digits, ...
        raise InputError(f"not JSON: {str(exc)[:80]}", path=name) from None


def read_toml(path: str | os.PathLike[str]) -> dict[str, Any]:
    """A TOML file as a dict; ``InputError`` naming the file when unreadable or invalid."""
    name = os.fspath(path)
    data = read_bytes(name)
    try:
        return tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise not_utf8(data, exc.start, name) from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"invalid TOML: {exc}", path=name) from None
    except ValueError:  # an integer past Python's digits: tomllib's message says to raise them
        raise InputError("invalid TOML: a number of thousands of digits", path=name) from None


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` atomically, gzip-compressed when the name ends in ``.gz``."""
    name = os.fspath(path)
    if name.endswith(".gz"):
        # mtime=0: the same content gives the same bytes (reproducible outputs)
        data = gzip.compress(data, compresslevel=6, mtime=0)
    folder = os.path.dirname(os.path.abspath(name))
    base = os.path.basename(name)
    try:
        os.makedirs(folder, exist_ok=True)  # as run directories: missing folders are made
        remove_stale_staging(folder, re.escape(base))
        fd, tmp = tempfile.mkstemp(prefix=staging_prefix(base), suffix=".tmp", dir=folder)
    except OSError as exc:
        raise InputError(f"cannot write here: {exc.strerror or exc}", path=name) from None
    try:
        lock_descriptor(fd)
        # mkstemp creates the file private (0600); give it the usual umask-based mode
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, name)
    except OSError as exc:  # a full disk, a folder in the way, ...: the user's to fix
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise InputError(f"cannot write: {exc.strerror or exc}", path=name) from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def staging_prefix(name: str) -> str:
    """The prefix of a staging file or folder for the destination ``name`` (tempfile adds 8
    random characters and the suffix ``.tmp``): hidden, and naming this process."""
    return f".{name}.{os.getpid()}."


def lock_descriptor(fd: int) -> bool:
    """Takes an exclusive ``flock`` on an open file or folder, held until the descriptor is
    closed or the process dies; False where the file system has no locks."""
    if fcntl is None:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True


def hold_staging(path: str) -> int | None:
    """Opens and locks a staging folder this process just made; returns the descriptor to
    close once the folder is renamed into place (None where locks are not available)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    if not lock_descriptor(fd):
        os.close(fd)
        return None
    return fd


def remove_stale_staging(folder: str, name_pattern: str) -> list[str]:
    """Removes the staging files and folders in ``folder`` for destinations whose name matches
    ``name_pattern`` (a regular expression) that a dead writer left; returns their paths."""
    pattern = re.compile(rf"\.(?:{name_pattern}){_STAGING_TAIL}")
    try:
        entries = os.listdir(folder)
    except OSError:
        return []
    removed = []
    for entry in entries:
        match = pattern.fullmatch(entry)
        path = os.path.join(folder, entry)
        if match is None or not _writer_is_dead(path, int(match["pid"])):
            continue
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                os.unlink(path)
        removed.append(path)
    return removed


def pid_is_alive(pid: int) -> bool:
    """A process with this id runs on this machine (or may: another user's, a reused id)."""
    if pid <= 0:
        return True  # not a process id: never proof of anything
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, belongs to someone else
    return True


def _writer_is_dead(path: str, pid: int) -> bool:
    """Provably: the pid is no live process here, and the writer's lock is free (a live
    writer on another machine of a shared file system still holds it)."""
    if fcntl is None or pid == os.getpid() or pid_is_alive(pid):
        return False
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        return lock_descriptor(fd)
    finally:
        os.close(fd)
