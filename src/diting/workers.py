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

from diting.limits import MAX_WORKERS


def _worker_init(parent: int) -> None:
    """Start of a worker process: it dies with the scan that forked it (Linux: the kernel sends it
    SIGKILL when its parent ends; the parent may already have ended before that was asked), and a
    Ctrl-C to the terminal's process group is the parent's to handle (it ends the workers)."""
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


@contextlib.contextmanager
def worker_pool(workers: int):
    """A pool of ``workers`` processes (forked where the platform can) that do not outlive this one:
    each dies with it (:func:`_worker_init`), and when the work here ends with an exception (an
    interrupt, SIGTERM) the workers are killed and the work not started is dropped, not finished."""
    ctx = multiprocessing.get_context("fork") if "fork" in multiprocessing.get_all_start_methods() else None
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_worker_init,
                               initargs=(os.getpid() if ctx is not None else 0,))
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
    than the work or :data:`MAX_WORKERS`."""
    return max(1, min(jobs or (os.cpu_count() or 1), items, MAX_WORKERS))
