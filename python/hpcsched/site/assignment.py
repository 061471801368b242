"""The partitions each job may run in (its candidates) and its node count in each.

Where a job's partitions come from, first that applies:

- ``named``: the partition the trace recorded: the ``partition_name`` column (text, e.g. from
  a Batsim JSON ``partition`` field), else SWF field 16 through the header's
  ``; Partition: 3 batch`` lines (a number without a name there stands for itself, "3");
  matched against partition names and aliases; ``"test,batch"`` names two candidates;
- ``unknown_name``: a recorded name no partition or alias matches: the default partition
  (counted in ``unknown_names``: a site file may need an alias);
- ``routed``: no partition recorded: the first route whose queue (SWF field 15 through the
  header's ``; Queue:`` lines), node count and requested time match;
- ``default``: the default partition.

A job's node count in a candidate is ``ceil(procs / cores)`` of that partition's nodes, with
``procs`` the ``procs`` column when present, else ``nodes * procs_per_node``; and at least the
``recorded_nodes`` column when present (a Slurm record of the nodes a job ran on: a job of
one CPU per node on 4 nodes still needs 4). Whether a job is
within its partition's limits is the engine's decision, not made here.

All of it works on the few distinct recorded names and queues, then on whole columns: one
pass over the jobs per distinct value, not per job (Curie has 312,826 jobs).

:func:`fit_partitions` sizes a workload in the nodes of its jobs' partitions, as a run and
``inspect`` replay it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from hpcsched.site.partitions import Partition, Route, Site
from hpcsched.workload.sacct import NO_MACHINE_SIZE

if TYPE_CHECKING:
    import pandas as pd

    from hpcsched.site.platform import Platform
    from hpcsched.workload.model import Workload

HOW = ("named", "routed", "default", "unknown_name")
_NAMED, _ROUTED, _DEFAULT, _UNKNOWN = range(4)


@dataclass(frozen=True, eq=False)  # numpy arrays: no field-wise ==
class Assignment:
    """Jobs' candidate partitions, in CSR form: job ``j``'s candidates are
    ``partitions[offsets[j]:offsets[j+1]]`` (indices into ``Site.partitions``, in the order
    the job named them) and its node count in each is ``nodes`` at the same positions."""

    offsets: np.ndarray  # int64, len(jobs) + 1
    partitions: np.ndarray  # int64
    nodes: np.ndarray  # int64
    how: dict[str, int] = field(default_factory=dict)  # jobs by how they were placed (HOW)
    unknown_names: dict[str, int] = field(default_factory=dict)  # recorded name -> jobs

    def candidates(self, job: int) -> list[tuple[int, int]]:
        """(partition index, nodes) of each candidate of the job at row ``job``."""
        start, end = self.offsets[job], self.offsets[job + 1]
        return list(
            zip(self.partitions[start:end].tolist(), self.nodes[start:end].tolist(), strict=True)
        )


def assign_partitions(workload: Workload, platform: Platform) -> Assignment:
    """The candidate partitions of every job of ``workload`` on ``platform``'s site (one
    partition of the whole machine when the platform has none)."""
    site = platform.site or Site((Partition("all", ((0, platform.nodes),), 1),))
    jobs = workload.jobs
    procs = _procs(jobs, workload.procs_per_node)
    cores = np.array([p.cores for p in site.partitions], dtype=np.int64)

    # each job's candidate list, as an index into `lists`, and how it got it
    lists: list[tuple[int, ...]] = [(site.index(site.default.name),)]
    choice = np.zeros(len(jobs), dtype=np.int64)
    how = np.full(len(jobs), _DEFAULT, dtype=np.int8)
    unknown: dict[str, int] = {}
    names, named_codes = _recorded(jobs, workload.partition_names, "partition_name", "partition")
    for code, name in enumerate(names):
        rows = named_codes == code
        found, missing = _candidates(site, name)
        if found:
            choice[rows], how[rows] = len(lists), _NAMED
            lists.append(found)
        else:
            how[rows] = _UNKNOWN
        for piece in missing:
            unknown[piece] = unknown.get(piece, 0) + int(rows.sum())
    if site.routes:
        unnamed = named_codes < 0
        queues, queue_codes = _recorded(jobs, workload.queue_names, "queue_name", "queue")
        requested = jobs["requested_time"].to_numpy(np.float64)
        for route in site.routes:
            if route.queue is None:
                queue_rows = unnamed
            elif route.queue in queues:
                queue_rows = unnamed & (queue_codes == queues.index(route.queue))
            else:
                continue  # no job recorded that queue
            target = site.index(route.partition)
            nodes = _ceil_div(procs, cores[target])
            rows = queue_rows & (how == _DEFAULT) & _within(route, nodes, requested)
            choice[rows], how[rows] = len(lists), _ROUTED
            lists.append((target,))

    floor = jobs["recorded_nodes"].to_numpy(np.int64) if "recorded_nodes" in jobs else None
    return _csr(lists, choice, procs, cores, how, unknown, floor)


def _procs(jobs: pd.DataFrame, procs_per_node: int) -> np.ndarray:
    if "procs" in jobs:
        return jobs["procs"].to_numpy(np.int64)
    return jobs["nodes"].to_numpy(np.int64) * int(procs_per_node)


def _recorded(
    jobs: pd.DataFrame, numbered: dict[int, str], text_column: str, number_column: str
) -> tuple[list[str], np.ndarray]:
    """The distinct names the jobs recorded and each job's code among them (-1: none), from
    ``text_column`` (names) or ``number_column`` (numbers, named through ``numbered``; a
    negative number is no record)."""
    import pandas as pd

    if text_column in jobs:
        values = jobs[text_column].astype("string").str.strip()
        codes, uniques = pd.factorize(values.mask(values == ""))
        return [str(u) for u in uniques], np.asarray(codes, dtype=np.int64)
    if number_column not in jobs:
        return [], np.full(len(jobs), -1, dtype=np.int64)
    numbers = jobs[number_column].to_numpy(np.int64)
    codes, distinct = pd.factorize(numbers)  # hashing: no sort of a million numbers
    # one code per name (two numbers may share one); none for a negative number (unknown)
    named = {int(n): numbered.get(int(n), str(int(n))) for n in distinct if n >= 0}
    names = list(dict.fromkeys(named.values()))
    remap = np.array(
        [names.index(named[int(n)]) if n >= 0 else -1 for n in distinct], dtype=np.int64
    )
    return names, remap[codes] if len(numbers) else np.asarray(codes, np.int64)


def _candidates(site: Site, recorded: str) -> tuple[tuple[int, ...], list[str]]:
    """The partitions a recorded name designates ("test,batch": two, in that order, each
    once) and the pieces of it that name no partition."""
    found: list[int] = []
    missing: list[str] = []
    for piece in (p.strip() for p in recorded.split(",")):
        if not piece:
            continue
        try:
            index = site.index(piece)
        except KeyError:
            missing.append(piece)
            continue
        if index not in found:
            found.append(index)
    return tuple(found), missing


def _within(route: Route, nodes: np.ndarray, requested: np.ndarray) -> np.ndarray:
    inside = np.ones(len(nodes), dtype=bool)
    if route.min_nodes is not None:
        inside &= nodes >= route.min_nodes
    if route.max_nodes is not None:
        inside &= nodes <= route.max_nodes
    if route.max_time is not None:
        inside &= requested <= route.max_time
    return inside


def _ceil_div(procs: np.ndarray, cores: np.ndarray | np.integer) -> np.ndarray:
    """``ceil(procs / cores)`` in integers (no float rounding of large counts)."""
    out: np.ndarray = -(-procs // cores)
    return out


def _csr(
    lists: list[tuple[int, ...]],
    choice: np.ndarray,
    procs: np.ndarray,
    cores: np.ndarray,
    how: np.ndarray,
    unknown: dict[str, int],
    floor: np.ndarray | None = None,
) -> Assignment:
    """The assignment from each job's ``choice`` among the candidate ``lists`` (``floor``: each
    job's fewest nodes, if any)."""
    width = max(len(c) for c in lists)
    table = np.full((len(lists), width), -1, dtype=np.int64)
    for k, candidates in enumerate(lists):
        table[k, : len(candidates)] = candidates
    counts = np.array([len(c) for c in lists], dtype=np.int64)[choice]
    offsets = np.zeros(len(choice) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    if width == 1:  # every job one candidate: no masking of a jobs-by-width table
        partitions = table[choice, 0]
    else:
        rows = table[choice]
        partitions = rows[rows >= 0]  # row by row, in each job's order
    nodes = _ceil_div(np.repeat(procs, counts), cores[partitions])
    if floor is not None:
        nodes = np.maximum(nodes, np.repeat(floor, counts))
    placed = np.bincount(how, minlength=len(HOW))
    return Assignment(
        offsets=offsets,
        partitions=partitions,
        nodes=nodes,
        how={name: int(placed[k]) for k, name in enumerate(HOW)},
        unknown_names=unknown,
    )


def fit_partitions(workload: Workload, platform: Platform) -> tuple[Workload, Assignment]:
    """``workload`` (read in its own units: processors for an SWF trace) sized in nodes of the
    partitions its jobs name, on ``platform``'s machine, with each job's candidates. A job's
    size is its size in its first candidate; candidates whose nodes have another number of
    cores (another size) are dropped. Jobs larger than the whole machine are skipped and
    counted, as the reader skips them on one pool."""
    assignment = assign_partitions(workload, platform)
    offsets, partitions, nodes = assignment.offsets, assignment.partitions, assignment.nodes
    first = nodes[offsets[:-1]]
    counts = np.diff(offsets)
    keep = nodes == np.repeat(first, counts)
    too_big = first > platform.nodes
    keep &= ~np.repeat(too_big, counts)
    kept_counts = np.add.reduceat(keep.astype(np.int64), offsets[:-1]) if len(first) else counts
    kept_counts = kept_counts[~too_big]
    new_offsets = np.zeros(len(kept_counts) + 1, dtype=np.int64)
    np.cumsum(kept_counts, out=new_offsets[1:])
    jobs = workload.jobs[~too_big].reset_index(drop=True)
    jobs["nodes"] = first[~too_big]
    skipped = dict(workload.skipped)
    # (a record read without a machine size is sized here, by the platform)
    warnings = [w for w in workload.warnings if not w.startswith(NO_MACHINE_SIZE)]
    if too_big.any():
        skipped["larger than the machine"] = int(too_big.sum())
        warnings.append(
            f"{int(too_big.sum())} jobs need more than the {platform.nodes} nodes of "
            f"{platform.name} in their partitions: skipped"
        )
    sized = replace(
        workload,
        jobs=jobs,
        nodes=platform.nodes,
        procs_per_node=1,
        skipped=skipped,
        warnings=warnings,
    )
    fitted = replace(
        assignment,
        offsets=new_offsets,
        partitions=partitions[keep],
        nodes=nodes[keep],
    )
    return sized, fitted


def describe_assignment(workload: Workload, platform: Platform) -> dict[str, object]:
    """Where ``workload``'s jobs would run on ``platform``'s partitions (``inspect
    --platform``): per partition its nodes and the jobs whose first candidate it is, with the
    largest of them in its nodes; how jobs were placed; the recorded names no partition
    matched."""
    assignment = assign_partitions(workload, platform)
    site = platform.site or Site((Partition("all", ((0, platform.nodes),), 1),))
    first = assignment.offsets[:-1]
    partition, nodes = assignment.partitions[first], assignment.nodes[first]
    per_partition: dict[str, dict[str, Any]] = {}
    resources = None
    if platform.shared:
        from hpcsched.site.resources import asked, partition_resources

        resources = partition_resources(platform)
    for k, part in enumerate(site.partitions):
        mine = nodes[partition == k]
        per_partition[part.name] = {
            "nodes": part.nodes,
            "cores": part.cores,
            "tier": part.tier,
            "jobs": len(mine),
            "largest_job_nodes": int(mine.max()) if len(mine) else None,
        }
        if resources is not None:
            # where jobs share nodes: what the partition holds and what its jobs ask
            per_partition[part.name].update(resources[k])
            per_partition[part.name]["asked"] = asked(workload, partition == k)
    return {
        "partitions": per_partition,
        "how": assignment.how,
        "unknown_names": dict(sorted(assignment.unknown_names.items(), key=lambda item: -item[1])),
    }
