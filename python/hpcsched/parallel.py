"""Running many runs at once: in this process, on a local process pool, or on a Ray cluster.

Every backend calls ``on_done(index, outcome)`` in the driver as each run finishes, where
``outcome`` is the run's :class:`Result` or the exception it raised; the caller decides what a
failure means. Results come back to the driver, which writes them: a Ray cluster needs the
input files on every node but no shared output folder.

Local workers die with their driver: on Linux the kernel kills them when it dies
(``PR_SET_PDEATHSIG``), elsewhere a watchdog thread in each worker exits when its parent is
gone; with them goes multiprocessing's resource tracker (it exits when the last process holding
its pipe does). Workers ignore Ctrl-C: the driver gets it, kills them and re-raises, so an
interruption stops at once and prints no worker traceback.
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import os
import pickle
import signal
import socket
import sys
import threading
import time
import types
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from hpcsched.exceptions import OptionError, shown
from hpcsched.experiment import RunConfig
from hpcsched.run import Result

Outcome = Result | BaseException
OnDone = Callable[[int, Outcome], None]


def check_processes(processes: object) -> int | None:
    """A pool size: None (one process per core) or an integer of at least 1; the one check of
    ``--processes``, a sweep file's ``processes`` and the API's ``processes``."""
    if processes is not None and (
        isinstance(processes, bool) or not isinstance(processes, int) or processes < 1
    ):
        raise OptionError(f"must be at least 1, not {shown(processes)}", option="--processes")
    return processes


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
    check_processes(processes)
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


#: Said when worker processes cannot start because they import a script that starts runs.
UNGUARDED_SCRIPT = (
    "the script starts hpcsched runs when it is imported, and the worker processes import it "
    "to find a policy class defined in it: put the calls under "
    '`if __name__ == "__main__":`, or define the policy in a module of its own'
)


def _in_worker_start_up() -> bool:
    """This process is a pool worker still importing the driver's script (which then starts
    runs itself: multiprocessing's "bootstrapping phase" error)."""
    return bool(getattr(multiprocessing.current_process(), "_inheriting", False))


def _needs_main(configs: Sequence[RunConfig]) -> bool:
    """Whether a config refers to the driver's ``__main__`` (a Python policy class defined in
    the script), which workers then must import."""
    for config in configs:
        try:
            data = pickle.dumps(config)
        except Exception:
            return True  # let the pool report it
        if b"__main__" in data:
            return True
    return False


@contextlib.contextmanager
def _main_hidden(hide: bool) -> Iterator[None]:
    """While workers start: a ``__main__`` without a file, so that spawned workers do not run
    the driver's script again (a plain script without a ``__main__`` guard then works)."""
    if not hide:
        yield
        return
    real = sys.modules["__main__"]
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        sys.modules["__main__"] = real


def _run_on_pool(configs: Sequence[RunConfig], on_done: OnDone, workers: int) -> None:
    if _in_worker_start_up():
        # a worker importing an unguarded script: it ends quietly (instead of multiprocessing's
        # traceback) and the driver says why, once
        os._exit(1)
    # spawn, not fork: the engine's thread pool must not be forked mid-flight
    context = multiprocessing.get_context("spawn")
    pool = ProcessPoolExecutor(
        max_workers=workers,
        mp_context=context,
        initializer=_worker_start,
        initargs=(os.getpid(),),
    )
    finished = False
    try:
        # workers start (in submit) with Ctrl-C blocked, and without the script when they
        # do not need it
        with _sigint_blocked(), _main_hidden(not _needs_main(configs)):
            pending: dict[Future[Outcome], int] = {
                pool.submit(execute, c): i for i, c in enumerate(configs)
            }
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in sorted(done, key=pending.__getitem__):
                index = pending.pop(future)
                try:
                    outcome = future.result()
                except BrokenProcessPool as exc:  # a worker died (e.g. out of memory)
                    if _script_failed(exc):
                        raise OptionError(UNGUARDED_SCRIPT) from None
                    outcome = exc
                except Exception as exc:
                    outcome = exc
                on_done(index, outcome)
        finished = True
    finally:
        if finished:
            pool.shutdown(wait=True)
        else:
            # an interruption (Ctrl-C, an error in on_done): what has not started is cancelled
            # and the runs under way are killed, not waited for (they may last hours)
            _stop(pool)


def _script_failed(exc: BrokenProcessPool) -> bool:
    """The pool broke because its workers could not start: they import the driver's script,
    which starts runs without a ``__main__`` guard (the workers exit at once, see
    :func:`_run_on_pool`)."""
    main = sys.modules.get("__main__")
    return getattr(main, "__file__", None) is not None and "terminated abruptly" in str(exc)


def _stop(pool: ProcessPoolExecutor) -> None:
    processes = list((getattr(pool, "_processes", None) or {}).values())
    for process in processes:
        with contextlib.suppress(OSError, ValueError):
            process.kill()
    # the pool's own thread sees the dead workers, fails what was pending and ends
    pool.shutdown(wait=True, cancel_futures=True)


@contextlib.contextmanager
def _sigint_blocked() -> Iterator[None]:
    """Blocks SIGINT in this thread: a process started meanwhile inherits the mask, so a
    Ctrl-C while a worker starts up (before its initializer) prints no traceback there. A
    Ctrl-C meanwhile reaches the driver when the block ends."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


#: prctl(2) option: the signal a process gets when its parent dies (Linux).
_PR_SET_PDEATHSIG = 1


def _worker_start(parent: int) -> None:
    """Initializer of every pool worker: ignore Ctrl-C (the driver handles it), and die with
    the driver, so that no worker outlives a killed ``compare`` or ``sweep``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # the driver died before the line above
        os._exit(1)
    # everywhere (and should prctl be refused): a thread that watches the parent
    threading.Thread(
        target=_watch_parent, args=(parent,), name="hpcsched-watch", daemon=True
    ).start()


def _watch_parent(parent: int) -> None:
    """Exits this process once its parent is gone (the worker is then adopted by another)."""
    while os.getppid() == parent:
        time.sleep(1.0)
    os._exit(1)


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
