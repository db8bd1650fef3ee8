"""The console script's entry point (docs/cli.md §1): interrupts are handled from the first instruction.

Importing the command line takes a noticeable fraction of a second; a SIGINT or SIGTERM in that time
must end the command as one at any later moment does — "interrupted", exit 130 — never as an
internal error from a half-imported module. This module imports nothing of diting's before its
handler is in place; the handler only records the signal, which the command line acts on once its
own handlers are installed.
"""

from __future__ import annotations

import signal

#: the signals that came while the command line was being imported (held, never raised there: an
#: exception inside a native module's initialisation may abort the process); the command line's own
#: handlers, once installed, act on them (:func:`diting.cli.main.run`)
PENDING: list[int] = []


def _hold(signum: int, frame: object) -> None:
    PENDING.append(signum)


def run() -> None:
    """Hold interrupts, import the command line and run it (:func:`diting.cli.main.run`, which
    installs its handlers and then acts on an interrupt held here)."""
    signal.signal(signal.SIGINT, _hold)
    signal.signal(signal.SIGTERM, _hold)
    from diting.cli.main import run as main_run
    main_run(PENDING)
