"""Comparing policies on one workload: ``compare(...) -> Comparison``.

The module is named for what it holds rather than for its function, so that the package's
``hpcsched.compare`` is always the function (a submodule of that name would, once imported,
replace it as an attribute of the package)."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import pandas as pd

from hpcsched.exceptions import HpcschedError, OptionError
from hpcsched.experiment import RunConfig, WorkloadSpec, slice_workload, summary_row
from hpcsched.output import RUN_MARKER, check_writable
from hpcsched.parallel import run_configs
from hpcsched.policies import RECORDED, PolicySpec
from hpcsched.protocol import Policy, PythonPolicySpec, load_policy
from hpcsched.run import Result, as_policy_spec, check_overrun, read_run, resolve_platform
from hpcsched.workload import Workload
from hpcsched.workload.record import has_record


@dataclass
class Comparison:
    """The runs of a comparison: ``results`` maps each policy's label to its :class:`Result`
    (in the order given); ``table`` has one row of headline metrics per policy; ``reused``
    the labels whose complete run was read back from ``out`` instead of run again."""

    results: dict[str, Result]
    configs: dict[str, RunConfig] = field(repr=False)
    reused: tuple[str, ...] = ()

    @property
    def table(self) -> pd.DataFrame:
        rows = [
            {"policy": label, **summary_row(result.info)} for label, result in self.results.items()
        ]
        return pd.DataFrame(rows)

    @property
    def workload(self) -> str:
        return next(iter(self.configs.values())).workload_label

    def write(self, out: str | os.PathLike[str]) -> dict[str, str]:
        """Writes one run directory per policy under ``out``; returns label -> path."""
        paths = {}
        for label, result in self.results.items():
            paths[label] = result.write(os.path.join(os.fspath(out), slug(label)))
        return paths

    def report(self, path: str | os.PathLike[str], *, title: str | None = None) -> str:
        """Writes the self-contained HTML report; returns its path."""
        # (here, not at the top: a comparison without a report never loads matplotlib; the
        # report reads a comparison through its own protocol and imports nothing of this module)
        from hpcsched.report import comparison_report

        return comparison_report(self, path, title=title)


def compare(
    workload: Workload | str | os.PathLike[str],
    policies: Sequence[str | PolicySpec | PythonPolicySpec | Policy],
    *,
    platform: str | None = None,
    slurm_accounts: str | os.PathLike[str] | None = None,
    downtime: str | os.PathLike[str] | None = None,
    announce_lead: float | None = None,
    overrun: str = "continue",
    nodes: int | None = None,
    procs_per_node: int | str = 1,
    format: str | None = None,
    start: int = 0,
    stop: int | None = None,
    processes: int | None = None,
    out: str | os.PathLike[str] | None = None,
    on_done: Callable[[str, Result], None] | None = None,
    resume: bool = False,
    decision_log: str = "compact",
    recorded: bool = True,
) -> Comparison:
    """Replays ``workload`` (a trace path or a :class:`Workload`) under each policy (a name
    such as ``"wfp3:256"`` — name and window —, a :class:`PolicySpec`, ``"python:..."`` or a
    Python policy object; objects not picklable need ``processes=1``), in parallel processes
    (``processes``; default one per core). With ``out``, writes one run directory per policy
    there as each run finishes (so an interruption keeps the runs that finished; ``out`` is
    checked writable before anything runs). ``on_done`` is called with each policy's label as
    its run finishes (and is written).

    With ``resume`` (what the command line does unless ``--force``), a policy whose run
    directory in ``out`` holds a complete run of the same configuration (its ``config.json``
    key) is read back instead of run again, so that a comparison interrupted by Ctrl-C
    resumes; a run directory holding anything else is then an ``OptionError``. Without it,
    existing run directories are replaced.

    ``start`` and ``stop`` replay only the jobs ``[start, stop)`` in replay order, resubmitted
    from time 0 (as a sweep's ``slice``).

    ``slurm_accounts`` (with ``platform``) gives ``--policy slurm`` the site's associations and
    QOS (a ``sacctmgr dump`` file, ``sacctmgr show assoc -P`` output or TOML).

    With ``recorded`` (the default), a workload that records its schedule (SWF waits) is also
    replayed as recorded (``--policy recorded``), first, labelled ``Recorded``: every other
    run's summary then says how close it comes to it (:mod:`hpcsched.agreement`)."""
    # names may carry a window (wfp3:256); specs and Python policy objects as simulate takes them
    specs = [parse_policy(p) if isinstance(p, str) else as_policy_spec(p) for p in policies]
    if not specs:
        raise OptionError("give at least one policy", option="--policy")
    for i, spec in enumerate(specs):
        if spec in specs[:i]:  # the same run twice would only cost time
            raise OptionError(f"{spec.label} is given twice", option="--policy")
    check_overrun(overrun)
    resolve_platform(platform, nodes)  # fails early on an unknown platform
    source = _source(workload, format, procs_per_node, start, stop)
    if recorded and RECORDED not in (s.name for s in specs) and _records_waits(source):
        specs = [PolicySpec(RECORDED), *specs]  # what happened, first: the reference
    labels = unique_labels([s.label for s in specs])
    configs = {
        label: RunConfig(
            workload=source,
            policy=spec,
            platform=platform,
            slurm_accounts=None if slurm_accounts is None else os.fspath(slurm_accounts),
            downtime=None if downtime is None else os.fspath(downtime),
            announce_lead=announce_lead,
            # the record is what ran: its jobs ran their recorded times, whatever --overrun
            overrun="continue" if spec.name == RECORDED else overrun,
            nodes=nodes,
            decision_log=decision_log,
        )
        for label, spec in zip(labels, specs, strict=True)
    }
    targets: dict[str, str] = {}
    keys = {label: config.key() for label, config in configs.items()}
    results: dict[str, Result] = {}
    if out is not None:
        folder = check_writable(out, kind="folder")
        for label in labels:
            target = check_writable(os.path.join(folder, slug(label)), kind="run")
            targets[label] = target
            if resume and _holds_run(target, keys[label]):
                results[label] = read_run(target)
            elif resume:
                check_writable(target, kind="run", replace=False)  # holds another run
    for label, result in results.items():  # resumed
        if on_done is not None:
            on_done(label, result)
    todo = [label for label in labels if label not in results]

    def collect(index: int, outcome: Result | BaseException) -> None:
        label = todo[index]
        if isinstance(outcome, BaseException):
            if isinstance(outcome, HpcschedError):
                raise outcome
            raise RuntimeError(f"{label} failed: {outcome!r}") from outcome
        results[label] = outcome
        if targets:
            config = {"key": keys[label], **configs[label].to_dict()}
            outcome.write(targets[label], extra={"config.json": config})
        if on_done is not None:
            on_done(label, outcome)

    run_configs([configs[label] for label in todo], collect, processes=processes)
    reused = tuple(label for label in labels if label not in todo)
    return Comparison({label: results[label] for label in labels}, configs, reused)


def _source(
    workload: Workload | str | os.PathLike[str],
    format: str | None,
    procs_per_node: int | str,
    start: int,
    stop: int | None,
) -> WorkloadSpec | Workload:
    """What the runs replay: the workload in memory (sliced here), or the spec each run reads."""
    if isinstance(workload, Workload):
        return slice_workload(workload, start, stop) if start or stop is not None else workload
    return WorkloadSpec(
        path=os.fspath(workload),
        format=format,
        procs_per_node=procs_per_node,
        start=start,
        stop=stop,
    )


def _records_waits(source: WorkloadSpec | Workload) -> bool:
    """Whether the workload records its schedule (read once here when given as a path)."""
    if isinstance(source, WorkloadSpec):
        if source.path is None:
            return False
        source = source.load()
    return has_record(source)


def records_schedule(
    workload: Workload | str | os.PathLike[str],
    *,
    format: str | None = None,
    procs_per_node: int | str = 1,
    start: int = 0,
    stop: int | None = None,
) -> bool:
    """Whether ``compare`` adds the recorded schedule for this workload (its jobs
    ``[start, stop)``): whether it records its waits."""
    source = _source(workload, format, procs_per_node, start, stop)
    return _records_waits(source)


def _holds_run(folder: str, key: str) -> bool:
    """The folder holds a complete run of the configuration with this key."""
    try:
        with open(os.path.join(folder, "config.json"), encoding="utf-8") as f:
            config = json.load(f)
    except (OSError, ValueError, RecursionError):
        return False
    return (
        isinstance(config, dict)
        and config.get("key") == key
        and os.path.isfile(os.path.join(folder, RUN_MARKER))
    )


def parse_policy(text: str) -> PolicySpec | PythonPolicySpec:
    """``name`` or ``name:window`` (e.g. ``wfp3:256``) as a :class:`PolicySpec`;
    ``python:MODULE:CLASS`` as a Python policy."""
    if text.startswith("python:"):
        return load_policy(text)
    return PolicySpec(*split_policy(text))


def split_policy(text: str) -> tuple[str, int | None]:
    """``wfp3:256`` -> (``wfp3``, 256); ``fcfs`` -> (``fcfs``, None); ``python:...`` whole."""
    if text.startswith("python:"):
        return text, None
    name, sep, window = text.partition(":")
    if not sep:
        return name, None
    try:
        return name, int(window)
    except ValueError:
        raise OptionError(
            f"{text!r}: the window after ':' must be a whole number", option="--policy"
        ) from None


def unique_labels(labels: Sequence[str]) -> list[str]:
    """The labels, with ``#2``, ``#3`` ... appended to repeats."""
    seen: dict[str, int] = {}
    unique = []
    for label in labels:
        seen[label] = seen.get(label, 0) + 1
        unique.append(label if seen[label] == 1 else f"{label} #{seen[label]}")
    return unique


def slug(label: str) -> str:
    """A folder name for a label: ``WFP3 w=256 +EASY`` -> ``wfp3-w256-easy``."""
    text = re.sub(r"[^a-z0-9]+", "-", label.lower().replace("=", "")).strip("-")
    return text or "run"
