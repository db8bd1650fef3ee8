"""Worker processes that never outlive the command that started them.

Used by the scan (parsing, records, packages) and by package verification: forked where the
platform can, each worker dies with its parent (Linux: a parent-death signal), ignores the
terminal's Ctrl-C (the parent handles it and ends the workers), and when the parent's work ends
with an exception the workers are killed and the work not started is dropped.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import sys
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from typing import Any, Callable, TypeVar

from diting.limits import MAX_WORKERS

T = TypeVar("T")
R = TypeVar("R")
S = TypeVar("S")

#: in a worker of :func:`shared_map`: the read-only state its pool was forked with
_SHARED: Any = None


def _worker_init(parent: int, owner: int = 0) -> None:
    """Start of a worker process: it dies with the command that started it, and a Ctrl-C to the
    terminal's process group is the command's to handle (it ends the workers).

    ``parent``: the process that forked it (Linux: the kernel sends it SIGKILL when that process
    ends; it may already have ended before that was asked). ``owner``: the command's process when
    another process forked the worker (a fork server, which lives as long as its workers do): a
    thread of the worker waits for the owner's end and ends the worker then."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if sys.platform.startswith("linux"):
        try:
            import ctypes
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    if parent and os.getppid() != parent:  # the parent ended before the kernel was asked to watch it
        os._exit(1)
    if owner:
        import threading
        threading.Thread(target=_end_with, args=(owner,), daemon=True, name="owner-watch").start()


def _end_with(owner: int) -> None:
    """Block until process ``owner`` ends, then end this process at once."""
    import select
    import time
    try:
        fd = os.pidfd_open(owner)  # Linux 5.3+: readable when the process ends
    except (AttributeError, OSError):
        fd = None
    if fd is not None:
        select.select([fd], [], [])
        os._exit(1)
    while True:  # elsewhere: ask every half second
        try:
            os.kill(owner, 0)
        except ProcessLookupError:
            os._exit(1)
        except PermissionError:
            pass
        time.sleep(0.5)


def _shared_init(parent: int, owner: int, shared: Any) -> None:
    """:func:`_worker_init`, then keep ``shared`` (inherited through the fork, never pickled)."""
    global _SHARED
    _worker_init(parent, owner)
    _SHARED = shared


def _call_shared(fn: Callable[[Any, T], R], item: T) -> R:
    return fn(_SHARED, item)


def shared_map(fn: Callable[[S, T], R], shared: S, items: list[T], jobs: int) -> list[R]:
    """``[fn(shared, item) for item in items]``, in forked workers when more than one is worth it
    (:func:`worker_count` of ``jobs``): each worker inherits ``shared`` through the fork (a large,
    read-only state such as a frozen fact store is never pickled), items go one at a time, results
    come back in order. Inline when one worker suffices or the platform cannot fork."""
    workers = worker_count(jobs, len(items))
    if workers > 1 and "fork" in multiprocessing.get_all_start_methods():
        with worker_pool(workers, shared=shared) as pool:
            return list(pool.map(partial(_call_shared, fn), items, chunksize=1))
    return [fn(shared, item) for item in items]


@contextlib.contextmanager
def worker_pool(workers: int, fresh: tuple[str, ...] = (), shared: Any = None):
    """A pool of ``workers`` processes that do not outlive this one: each dies with it
    (:func:`_worker_init`), and when the work here ends with an exception (an interrupt, SIGTERM)
    the workers are killed and the work not started is dropped, not finished.

    Workers are forked from this process where the platform can (they share what it has read). With
    ``fresh`` (modules to preload), they are forked from a fresh single-threaded server process
    instead (``forkserver``): for work that runs native code which does not survive a fork of a
    process with other threads (pydantic-core's validators crash in a child forked while DuckDB's
    threads run); the server ends with this process, and the workers with the server. ``shared``
    (fork only): state each worker keeps for :func:`shared_map`."""
    methods = multiprocessing.get_all_start_methods()
    if fresh and "forkserver" in methods:
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(list(fresh))
        parent, owner = 0, os.getpid()  # the server is their parent, and lives as long as they do
    elif "fork" in methods:
        ctx, parent, owner = multiprocessing.get_context("fork"), os.getpid(), 0
    else:
        ctx, parent, owner = None, 0, os.getpid()
    if shared is not None:
        if ctx is None or ctx.get_start_method() != "fork":
            raise RuntimeError("shared state reaches workers only through a fork")
        pool = ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_shared_init,
                                   initargs=(parent, owner, shared))
    else:
        pool = ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_worker_init,
                                   initargs=(parent, owner))
    try:
        yield pool
    except BaseException:
        procs = list((getattr(pool, "_processes", None) or {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        for proc in procs:
            with contextlib.suppress(OSError, ValueError):
                proc.kill()
        for proc in procs:
            with contextlib.suppress(OSError, ValueError, AssertionError):
                proc.join(5)
        raise
    else:
        pool.shutdown(wait=True)


def worker_count(jobs: int, items: int) -> int:
    """Workers for ``items`` independent pieces of work: ``jobs`` (0: one per CPU), never more
    than the work or :data:`MAX_WORKERS`; one (the work runs inline) in a daemonic process, which may
    not start processes of its own (a Dask worker, a pool's worker)."""
    if multiprocessing.current_process().daemon:
        return 1
    return max(1, min(jobs or (os.cpu_count() or 1), items, MAX_WORKERS))
