"""Running many runs at once: in this process, on a local process pool, or on a Ray cluster.

Every backend calls ``on_done(index, outcome)`` in the driver as each run finishes, where
``outcome`` is the run's :class:`Result` or the exception it raised; the caller decides what a
failure means. Results come back to the driver, which writes them: a Ray cluster needs the
input files on every node but no shared output folder.
"""

from __future__ import annotations

import multiprocessing
import os
import socket
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import Any

from hpcsched.exceptions import OptionError
from hpcsched.experiment import RunConfig
from hpcsched.run import Result

Outcome = Result | BaseException
OnDone = Callable[[int, Outcome], None]


def run_configs(
    configs: Sequence[RunConfig],
    on_done: OnDone,
    *,
    processes: int | None = None,
    ray: str | None = None,
) -> None:
    """Runs every config; ``processes`` caps the local pool (default: the number of cores; 1
    runs in this process); ``ray`` is a Ray address, or ``"local"`` to start a local
    instance."""
    if processes is not None and (isinstance(processes, bool) or processes < 1):
        raise OptionError(f"must be at least 1, not {processes!r}", option="--processes")
    if not configs:
        return
    if ray is not None:
        _run_on_ray(configs, on_done, ray)
        return
    workers = min(processes or os.cpu_count() or 1, len(configs))
    if workers == 1:
        for index, config in enumerate(configs):
            on_done(index, execute(config))
        return
    _run_on_pool(configs, on_done, workers)


def execute(config: RunConfig) -> Outcome:
    """Runs one config, returning the exception instead of raising it (so it can travel back
    from a worker and be reported against its run)."""
    try:
        return config.execute()
    except Exception as exc:
        return exc


def _run_on_pool(configs: Sequence[RunConfig], on_done: OnDone, workers: int) -> None:
    # spawn, not fork: the engine's thread pool must not be forked mid-flight
    context = multiprocessing.get_context("spawn")
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=context)
    pending: dict[Future[Outcome], int] = {}
    try:
        pending = {pool.submit(execute, c): i for i, c in enumerate(configs)}
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in sorted(done, key=pending.__getitem__):
                index = pending.pop(future)
                try:
                    outcome = future.result()
                except Exception as exc:  # the worker died (e.g. out of memory)
                    outcome = exc
                on_done(index, outcome)
    finally:
        # an interruption (Ctrl-C, an error in on_done) cancels what has not started
        pool.shutdown(wait=not pending, cancel_futures=True)


def _run_on_ray(configs: Sequence[RunConfig], on_done: OnDone, address: str) -> None:
    try:
        import ray
    except ImportError:
        raise OptionError(
            "Ray is not installed; install the extra: pip install 'hpcsched[ray]'",
            option="--ray",
        ) from None
    started_here = not ray.is_initialized()
    if started_here:
        _connect(ray, address)
    try:
        remote = ray.remote(execute)
        refs: dict[Any, int] = {remote.remote(c): i for i, c in enumerate(configs)}
        pending = list(refs)
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            for ref in done:
                try:
                    outcome = ray.get(ref)
                except Exception as exc:  # the task or its worker failed inside Ray
                    outcome = exc
                on_done(refs[ref], outcome)
    finally:
        if started_here:
            ray.shutdown()


def _reachable(address: str) -> None:
    """Fails fast on a head node that does not answer: Ray itself waits minutes for it."""
    target = address.removeprefix("ray://")
    host, sep, port = target.rpartition(":")
    if not sep or not port.isdigit():
        return  # "auto" or a form Ray resolves itself
    try:
        socket.create_connection((host or "127.0.0.1", int(port)), timeout=5).close()
    except OSError as exc:
        raise OptionError(
            f"no Ray head answers at {address!r} ({exc.strerror or exc}); start one with "
            "`ray start --head`, or use --ray local",
            option="--ray",
        ) from None


def _connect(ray: Any, address: str) -> None:
    if address != "local":
        _reachable(address)
    options: dict[str, Any] = {
        "include_dashboard": False,
        "log_to_driver": False,
        "configure_logging": False,
    }
    try:
        if address == "local":
            ray.init(**options)
        else:
            ray.init(address=address, **options)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise OptionError(
            f"cannot reach a Ray cluster at {address!r}: {exc}", option="--ray"
        ) from None
