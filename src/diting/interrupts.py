"""Interrupts (Ctrl-C, SIGTERM) around a commit point, and after a command's work.

Work that commits (a graph build) answers one of two ways: interrupted before the commit, it is
rolled back and the command says "interrupted"; from the commit point on, it finishes, says what it
did, and notes that an interrupt came too late to undo it. Never "interrupted" over committed work.

Once a command's work is done (its result written and printed, its exit code decided),
:func:`ignore_interrupts` makes a later signal change nothing: the interpreter's own shutdown puts
Python-level handlers back to the default, so a SIGTERM or SIGINT there would otherwise end a
finished command as a death by signal.
"""

from __future__ import annotations

import importlib
import os
import signal
import sys
import threading
from contextlib import contextmanager
from types import ModuleType

#: the signals that interrupt a command
SIGNALS = (signal.SIGINT, signal.SIGTERM)


class CommitGate:
    """A context in which SIGINT and SIGTERM go to the handlers in place before (an interrupt: the
    work is rolled back) until :meth:`commit` is called; from then on they are only recorded
    (:attr:`late`) and the work goes on to its end. The handlers are restored on leaving; with
    ``redeliver`` a recorded interrupt is then raised again (for a caller with more work to stop).
    Signal handlers belong to the main thread: elsewhere the gate changes nothing."""

    def __init__(self, redeliver: bool = False) -> None:
        self.committed = False
        self.late: int | None = None
        self.redeliver = redeliver
        self._prev: dict[int, object] = {}

    def __enter__(self) -> "CommitGate":
        if threading.current_thread() is threading.main_thread():
            for sig in SIGNALS:
                self._prev[sig] = signal.getsignal(sig)
                signal.signal(sig, self._on_signal)
        return self

    def commit(self) -> None:
        """The commit point: interrupts from now on no longer stop the work."""
        self.committed = True

    def _on_signal(self, signum: int, frame: object) -> None:
        if self.committed:
            self.late = signum
            return
        prev = self._prev.get(signum)
        if callable(prev):
            prev(signum, frame)
        elif prev != signal.SIG_IGN:
            raise KeyboardInterrupt

    def __exit__(self, *exc: object) -> None:
        for sig, prev in self._prev.items():
            if signal.getsignal(sig) == self._on_signal:  # not when an interrupt handler replaced it meanwhile
                signal.signal(sig, prev)  # type: ignore[arg-type]
        if self.redeliver and self.late is not None and exc[0] is None:
            signal.raise_signal(self.late)


def ignore_interrupts() -> None:
    """SIGINT and SIGTERM are ignored from now on (in the main thread; elsewhere nothing changes):
    the command's work is done or its exit code decided, and no signal may turn that into a death by
    signal. Ignoring (unlike a Python handler) survives the interpreter's shutdown."""
    if threading.current_thread() is threading.main_thread():
        for sig in SIGNALS:
            signal.signal(sig, signal.SIG_IGN)


def import_native(name: str) -> ModuleType:
    """Module ``name``, imported with SIGINT and SIGTERM held until the import is complete and then
    delivered: a native extension whose initialisation an exception interrupts may abort the
    process (DuckDB's bindings do: "Critical nanobind error"), where an interrupt just after it is
    the usual exit 130. Raises what the import raises."""
    module = sys.modules.get(name)
    if module is not None:
        return module
    with CommitGate(redeliver=True) as gate:
        gate.commit()
        module = importlib.import_module(name)
    return module


#: how to stop work in progress at once when a signal comes (a DuckDB connection's ``interrupt``): native
#: code that runs a query may take the signal without stopping, and would then run on until the
#: interrupt's grace period ends the process
_CANCELS: list = []


@contextmanager
def cancelled_by_interrupt(cancel):
    """A context during which an interrupt (SIGINT, SIGTERM; :func:`cancel_running`) calls ``cancel()``
    before the command stops: a running DuckDB query is interrupted where it is."""
    _CANCELS.append(cancel)
    try:
        yield
    finally:
        _CANCELS.remove(cancel)


def cancel_running() -> None:
    """Call every cancel function registered with :func:`cancelled_by_interrupt` (from a signal
    handler: it imports nothing); a failing one is passed over."""
    for cancel in list(_CANCELS):
        try:
            cancel()
        except Exception:  # noqa: BLE001 - a connection already closed: nothing left to stop
            pass


def say_interrupted() -> None:
    """Write "interrupted" to stderr without importing anything (safe inside a signal handler and
    while modules are half-imported); a closed stderr is ignored."""
    try:
        os.write(2, b"interrupted\n")
    except OSError:
        pass
