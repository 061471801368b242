"""The text of a slurm.conf: its files (``Include`` inlined where the line stands), their
logical lines and each line's ``Key=Value`` pairs, read within bounds (docs/semantics.md,
"Hostile slurm.conf and platform files").

- Every file, the top one and each included, must be a regular file (a pipe or ``/dev/zero``
  is refused before it is opened, as every other input: ``_io.check_regular_file``); an
  included file's fault names the ``Include`` line too.
- ``Include`` is followed without recursion (a chain of any depth), a loop is refused, and the
  files read are bounded: at most :data:`MAX_FILES` files and :data:`MAX_TEXT_CHARS` characters
  in all, a file included twice counted twice (Slurm re-reads it each time: 23 files each
  including the next twice would be read 8 million times).
- A logical line (``\\``-continued lines joined) is at most :data:`MAX_LINE_CHARS` long, and is
  split in linear time (``shlex`` is quadratic on a long line), with its quoting: ``"..."``
  (``\\"`` and ``\\\\`` escaped inside), ``'...'``, a backslash escaping the next character.
"""

from __future__ import annotations

import glob
import os
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from hpcsched._io import check_regular_file, read_text
from hpcsched.exceptions import InputError, shown

#: Characters of one logical line (continued lines joined): 1 MiB, far above any real line (a
#: partition's node list is a few kilobytes) and read in well under a second.
MAX_LINE_CHARS = 1 << 20
#: Characters read in all (the top file and its includes, each time read): 32 MiB, a node
#: line per node of a 100,000-node machine.
MAX_TEXT_CHARS = 32 << 20
#: Files read in all, each inclusion counted (a site's conf.d holds tens).
MAX_FILES = 10_000

_INCLUDE = re.compile(r"^include\s+(\S.*)$", re.IGNORECASE)
#: What ends a run of plain characters in a word (shlex's whitespace, quotes, backslash).
_SPECIAL = re.compile(r"[ \t\r\n'\"\\]")
_IN_DOUBLE_QUOTES = re.compile(r"[\"\\]")


@dataclass(frozen=True)
class Where:
    """A line of a file (for messages)."""

    path: str
    line: int

    def error(self, message: str, field: str | None = None) -> InputError:
        """An input error at this line (of ``field``, when given)."""
        return InputError(message, path=self.path, line=self.line, field=field)


#: A setting line: its ``Key=Value`` pairs and where it is.
Line = tuple[list[tuple[str, str]], Where]


def read_lines(top: str) -> tuple[list[Line], list[str]]:
    """The setting lines of the slurm.conf ``top`` with its includes inlined (a relative
    ``Include`` is taken from ``top``'s folder, ``%c`` is the ``ClusterName`` read so far, a
    wildcard includes every file it matches in name order), and the files included, in the
    order first read. An :class:`InputError` naming the file and line otherwise."""
    reader = _Reader(Path(top).parent)
    reader.push(top, None)
    out: list[Line] = []
    while reader.stack:
        frame = reader.stack[-1]
        if frame.targets:
            reader.push(frame.targets.pop(0), frame.include)
            continue
        item = next(frame.lines, None)
        if item is None:
            reader.pop()
            continue
        text, where = item
        include = _INCLUDE.match(text)
        if include:
            frame.targets = reader.targets(include.group(1), where)
            frame.include = where
            continue
        pairs = split_pairs(text, where)
        for key, value in pairs:
            if key.lower() == "clustername":
                reader.cluster = value
        out.append((pairs, where))
    return out, list(dict.fromkeys(reader.included))


@dataclass
class _Frame:
    """A file being read: its lines still to come, and the files an ``Include`` of it still
    has to read (a wildcard's matches), with that line."""

    path: str
    lines: Iterator[tuple[str, Where]]
    targets: list[str] = field(default_factory=list)
    include: Where | None = None


class _Reader:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.stack: list[_Frame] = []
        self.active: Counter[str] = Counter()  # the files of the stack, by real path
        self.cluster: str | None = None
        self.included: list[str] = []
        self.files = 0
        self.chars = 0
        self.texts: dict[str, str] = {}  # (a file included again is not read again)

    def push(self, path: str, include: Where | None) -> None:
        """Reads ``path`` (the top file when ``include`` is None) onto the stack."""
        key = os.path.realpath(path)
        if include is not None and self.active[key]:
            raise include.error(f"Include {path!r}: an include loop (it includes this file)")
        text = self._text(path, key, include)
        if include is not None:
            self.included.append(path)
        self.active[key] += 1
        self.stack.append(_Frame(path, logical_lines(text, path)))

    def pop(self) -> None:
        frame = self.stack.pop()
        self.active[os.path.realpath(frame.path)] -= 1

    def targets(self, written: str, where: Where) -> list[str]:
        """The files an ``Include`` line names (module docstring of read_lines)."""
        name = written.strip().strip('"')
        if "%c" in name:
            if self.cluster is None:
                raise where.error("Include names %c before ClusterName is set")
            name = name.replace("%c", self.cluster)
        pattern = name if os.path.isabs(name) else str(self.folder / name)
        found = sorted(glob.glob(pattern)) if glob.has_magic(pattern) else [pattern]
        if not found or not all(os.path.exists(t) for t in found):
            raise where.error(f"Include {shown(name)}: no such file ({pattern})")
        return found

    def _text(self, path: str, key: str, include: Where | None) -> str:
        self.files += 1
        if self.files > MAX_FILES:
            raise _fault(
                include,
                path,
                f"more than {MAX_FILES} files read, a file included again counted again (do "
                "includes include themselves twice?)",
            )
        text = self.texts.get(key)
        if text is None:
            text = _read(path, include, MAX_TEXT_CHARS - self.chars)
            self.texts[key] = text
        self.chars += len(text)
        if self.chars > MAX_TEXT_CHARS:
            raise _fault(include, path, _TOO_MUCH)
        return text


_TOO_MUCH = (
    f"more than {MAX_TEXT_CHARS >> 20} MiB read in all, a file included again counted again: "
    "not a slurm.conf"
)


def _fault(include: Where | None, path: str, reason: str) -> InputError:
    """An error of the file ``path``, at the ``Include`` line that names it when there is one."""
    if include is None:
        return InputError(reason, path=path)
    return include.error(f"Include {path!r}: {reason}")


def _read(path: str, include: Where | None, room: int) -> str:
    """A file's text; what keeps it from being read (a pipe, a folder, a device, no such
    file, no permission) names the ``Include`` line that names it, and the file."""
    try:
        check_regular_file(path)
        size = os.path.getsize(path)
    except InputError as exc:
        raise _fault(include, path, exc.reason) from None
    except OSError as exc:
        raise _fault(include, path, f"cannot read file: {exc.strerror or exc}") from None
    if size > room:  # (before reading it: a huge file stays unread)
        raise _fault(include, path, _TOO_MUCH)
    return read_text(path)


def logical_lines(text: str, path: str) -> Iterator[tuple[str, Where]]:
    """The non-empty logical lines of a file's text, comments cut (``#`` to the end of a line),
    a line ending with a backslash joined to the next, each named by its first line; at most
    :data:`MAX_LINE_CHARS` characters each."""
    pieces: list[str] = []
    length, first, number = 0, 0, 0
    raws = text.split("\n")  # (Slurm's lines: no other separator)
    if raws[-1] == "":
        raws.pop()  # (the end of the last line)
    for number, raw in enumerate(raws, start=1):
        if not pieces:
            first = number
        piece = raw.split("#", 1)[0]
        length += len(piece)
        if length > MAX_LINE_CHARS:
            raise InputError(
                f"a line longer than {MAX_LINE_CHARS >> 20} MiB (continued lines joined): not "
                "a slurm.conf line",
                path=path,
                line=first,
            )
        stripped = piece.rstrip()
        if stripped.endswith("\\"):  # continued on the next line
            pieces.append(stripped[:-1] + " ")
            continue
        pieces.append(piece)
        line = "".join(pieces).strip()
        pieces, length = [], 0
        if line:
            yield line, Where(path, first)
    if pieces:
        raise InputError("the last line ends with a backslash", path=path, line=number)


def split_pairs(line: str, where: Where) -> list[tuple[str, str]]:
    """``Key=Value`` pairs of a line (values may be quoted)."""
    try:
        words = split_words(line)
    except ValueError as exc:
        raise where.error(f"cannot be split ({exc})") from None
    pairs = []
    for word in words:
        key, eq, value = word.partition("=")
        if not eq or not key:
            raise where.error(f"{shown(word)} is not Key=Value")
        pairs.append((key, value))
    return pairs


def split_words(line: str) -> list[str]:
    """``line`` split as ``shlex.split(line, posix=True)`` splits it, in linear time: words
    between spaces and tabs; ``'...'`` kept as it is, ``"..."`` with ``\\"`` and ``\\\\``
    escaped, a backslash elsewhere escaping the next character; quotes join the word around
    them (``a"b c"`` is one word). A ValueError for an unclosed quote or a final backslash."""
    words: list[str] = []
    word: list[str] = []
    in_word = False  # (a word may be empty: ``""``)
    at, end = 0, len(line)
    while at < end:
        special = _SPECIAL.search(line, at)
        stop = special.start() if special else end
        if stop > at:
            word.append(line[at:stop])
            in_word = True
        if special is None:
            break
        char = line[stop]
        if char in " \t\r\n":
            if in_word:
                words.append("".join(word))
                word, in_word = [], False
            at = stop + 1
            continue
        if char == "'":
            close = line.find("'", stop + 1)
            if close < 0:
                raise ValueError("No closing quotation")
            word.append(line[stop + 1 : close])
            at = close + 1
        elif char == '"':
            quoted, at = _double_quoted(line, stop + 1)
            word.append(quoted)
        else:  # a backslash
            if stop + 1 >= end:
                raise ValueError("No escaped character")
            word.append(line[stop + 1])
            at = stop + 2
        in_word = True
    if in_word:
        words.append("".join(word))
    return words


def _double_quoted(line: str, at: int) -> tuple[str, int]:
    """The text of a ``"...`` whose opening quote is just before ``at`` (``\\"`` and ``\\\\``
    unescaped, any other backslash kept), and where it ends."""
    pieces: list[str] = []
    while True:
        special = _IN_DOUBLE_QUOTES.search(line, at)
        if special is None:
            raise ValueError("No closing quotation")
        stop = special.start()
        if stop + 1 >= len(line) and line[stop] == "\\":
            raise ValueError("No escaped character")
        pieces.append(line[at:stop])
        if line[stop] == '"':
            return "".join(pieces), stop + 1
        after = line[stop + 1]
        pieces.append(after if after in '"\\' else "\\" + after)
        at = stop + 2
