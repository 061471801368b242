"""Fuzzing both readers (and the calendar reader) through the command line.

Inputs are mutated SWF traces and Batsim JSON workloads (odd numbers, huge and long tokens,
NUL bytes, byte-order marks, cut lines, random bytes), plain or gzip. For every input:

- the command exits 0 or 2, never 1 (an internal error) and never with a traceback;
- what it prints on stderr stays short, whatever the input holds;
- reading costs bounded time and memory per input byte;
- a workload that reads is replayable, and its replay keeps the engine's invariants.

Bounded in CI by the number of examples (no deadline: the machine may be loaded).
"""

from __future__ import annotations

import gzip
import json
import os
import time
import tracemalloc

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.invariants import check_capacity, check_jobs

import hpcsched
from hpcsched.cli import main
from hpcsched.exceptions import HpcschedError
from hpcsched.workload import load_workload, read_calendar

#: the longest stderr any input may cause (a message names file, line and field, and quotes
#: at most 40 characters of a token)
MAX_STDERR = 600

SETTINGS = settings(
    # HPCSCHED_FUZZ_EXAMPLES=5000 for a longer session by hand
    max_examples=int(os.environ.get("HPCSCHED_FUZZ_EXAMPLES", "120")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

numbers = st.one_of(
    st.integers(-5, 5000).map(str),
    st.sampled_from(["-1", "0", "1e30", "1e308", "-1e308", "1e-300", "inf", "nan", "4294967296"]),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.integers(-(2**70), 2**70).map(str),
)
tokens = st.one_of(
    numbers,
    st.text(min_size=1, max_size=8).filter(lambda t: not any(c.isspace() for c in t)),
    st.sampled_from(["[/x]", ":smile:", "\x00", "\ufeff", "{task}", "x" * 5000]),
)


@st.composite
def swf_texts(draw) -> bytes:
    lines = []
    if draw(st.booleans()):
        lines.append(f"; MaxProcs: {draw(numbers)}")
    if draw(st.booleans()):
        lines.append(f"; MaxNodes: {draw(numbers)}")
    for i in range(draw(st.integers(0, 12))):
        fields = [str(i + 1), str(10 * i), "-1", "100", "4", "-1", "-1", "4", "200"]
        fields += ["-1", "1", "1", "1", "-1", "1", "-1", "-1", "-1"]
        for _ in range(draw(st.integers(0, 3))):
            fields[draw(st.integers(0, 17))] = draw(tokens)
        cut = draw(st.one_of(st.none(), st.integers(0, 18)))
        lines.append(" ".join(fields[:cut] if cut is not None else fields))
    text = "\n".join(lines).encode("utf-8", "surrogatepass")
    if draw(st.booleans()):
        text = b"\xef\xbb\xbf" + text
    if draw(st.integers(0, 9)) == 0:
        text += draw(st.binary(max_size=200))
    return text


json_values = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(2**70), 2**70),
        st.floats(allow_nan=False),
        st.text(max_size=10),
        st.sampled_from(["x" * 5000, "[/x]", "w0!12"]),
    ),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=6,
)


@st.composite
def json_texts(draw) -> bytes:
    jobs = []
    for i in range(draw(st.integers(0, 10))):
        entry: dict = {"id": i, "res": 2, "subtime": 10 * i, "runtime": 100, "reqtime": 200}
        for _ in range(draw(st.integers(0, 2))):
            key = draw(st.sampled_from(["id", "job_id", "res", "subtime", "runtime", "reqtime"]))
            entry[key] = draw(json_values)
        jobs.append(entry)
    document: dict = {"jobs": jobs}
    if draw(st.booleans()):
        document["nb_res"] = draw(st.one_of(st.integers(-5, 2**40), json_values))
    text = json.dumps(document, allow_nan=True).encode()
    mutation = draw(st.integers(0, 9))
    if mutation == 0:
        text = text[: draw(st.integers(0, len(text)))]
    elif mutation == 1:
        text = b"\xef\xbb\xbf" + text
    elif mutation == 2:
        text = draw(st.binary(max_size=200))
    return text


def read_bounded(path, size: int) -> object:
    """Reads through the command line and the API; asserts the bounds. Returns the workload or
    the error."""
    tracemalloc.start()
    started = time.perf_counter()
    try:
        outcome: object = load_workload(path, lenient=True)
    except HpcschedError as exc:
        outcome = exc
    seconds = time.perf_counter() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    # generous: a fixed allowance for a loaded machine, then linear in the input's size
    assert seconds < 5.0 + 20e-6 * size, f"{seconds:.2f} s for {size} bytes"
    assert peak < (32 << 20) + 200 * size, f"{peak >> 20} MiB for {size} bytes"
    return outcome


def check_command(path, capsys) -> int:
    code = main(["inspect", str(path)])
    _, err = capsys.readouterr()
    assert code in (0, 2), err
    assert "Traceback" not in err
    assert len(err) < MAX_STDERR, err[:300]
    return code


def check_replay(outcome: object) -> None:
    if isinstance(outcome, hpcsched.Workload) and len(outcome):
        result = hpcsched.simulate(outcome, "fcfs")
        check_jobs(result)
        check_capacity(result)


@SETTINGS
@given(text=swf_texts(), compress=st.booleans())
def test_swf_reader_fuzz(tmp_path_factory, capsys, text, compress):
    path = tmp_path_factory.mktemp("swf") / ("t.swf.gz" if compress else "t.swf")
    path.write_bytes(gzip.compress(text) if compress else text)
    outcome = read_bounded(path, len(text))
    check_command(path, capsys)
    check_replay(outcome)


@SETTINGS
@given(text=json_texts(), compress=st.booleans())
def test_json_reader_fuzz(tmp_path_factory, capsys, text, compress):
    path = tmp_path_factory.mktemp("json") / ("t.json.gz" if compress else "t.json")
    path.write_bytes(gzip.compress(text) if compress else text)
    outcome = read_bounded(path, len(text))
    check_command(path, capsys)
    check_replay(outcome)


@SETTINGS
@given(lines=st.lists(st.lists(tokens, min_size=0, max_size=6).map(" ".join), max_size=6))
def test_calendar_reader_fuzz(tmp_path_factory, lines):
    path = tmp_path_factory.mktemp("cal") / "c.txt"
    path.write_text("\n".join(lines), encoding="utf-8", errors="surrogatepass")
    try:
        calendar = read_calendar(path)
    except HpcschedError as exc:
        assert len(str(exc)) < MAX_STDERR
    else:
        for window in calendar.windows:
            assert window.end > window.start


#: Inputs that are not regular files: endless devices (through a symlink with a trace's name,
#: as a user may make one), a pipe nobody writes to, a folder.
NON_REGULAR = {
    "zero": lambda p: p.symlink_to("/dev/zero"),
    "urandom": lambda p: p.symlink_to("/dev/urandom"),
    "fifo": os.mkfifo,
    "folder": os.mkdir,
}
#: Every command-line place an input file goes, with the file's name there.
READERS = {
    "swf": ("t.swf", lambda f, w: ["inspect", f]),
    "swf format": ("t.txt", lambda f, w: ["simulate", f, "--format", "swf"]),
    "json": ("t.json.gz", lambda f, w: ["inspect", f]),
    "calendar": ("c.txt", lambda f, w: ["simulate", w, "--downtime", f]),
    "platform": ("p.toml", lambda f, w: ["simulate", w, "--platform", f]),
    "reward": ("r.toml", lambda f, w: ["simulate", w, "--policy", "mars", "--reward", f]),
    "sweep": ("s.toml", lambda f, w: ["sweep", f, "--out", "sweep-out"]),
}


@pytest.fixture(scope="module")
def small_workload(tmp_path_factory):
    path = tmp_path_factory.mktemp("small") / "w.json"
    assert main(["generate", "markovian", str(path), "--jobs", "20"]) == 0
    return path


@pytest.mark.slow  # a process each
@pytest.mark.parametrize("kind", NON_REGULAR)
@pytest.mark.parametrize("reader", READERS)
def test_inputs_that_are_not_regular_files_are_refused_at_once(
    tmp_path, small_workload, kind, reader
):
    # /dev/zero behind a trace's name used to grow to gigabytes, deaf to Ctrl-C; a pipe hung.
    import subprocess
    import sys

    name, args = READERS[reader]
    workload = small_workload
    path = tmp_path / name
    NON_REGULAR[kind](path)
    done = subprocess.run(
        [sys.executable, "-m", "hpcsched", *map(str, args(path, workload))],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert done.returncode == 2, done.stderr
    said = "folder" if kind == "folder" else "not a regular file"
    assert said in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr) < MAX_STDERR
