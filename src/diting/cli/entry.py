"""The console script's entry point (docs/cli.md §1): interrupts are handled from the first instruction.

Importing the command line takes a noticeable fraction of a second; a SIGINT or SIGTERM in that time
must end the command as one at any later moment does — "interrupted", exit 130 — never as an
internal error from a half-imported module. This module imports nothing of diting's before its
handler is in place, and the handler imports nothing at all.
"""

from __future__ import annotations

import os
import signal
import sys

#: the exit code of an interrupted command (128 + SIGINT, as a shell reports it)
EXIT_INTERRUPTED = 130


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def say_interrupted() -> None:
    """Write "interrupted" to stderr without importing anything (safe inside a signal handler and
    while modules are half-imported); a closed stderr is ignored."""
    try:
        os.write(2, b"interrupted\n")
    except OSError:
        pass


def run() -> None:
    """Install the interrupt handlers, import the command line and run it (:func:`diting.cli.main.run`)."""
    signal.signal(signal.SIGINT, _interrupt)
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        from diting.cli.main import run as main_run
        main_run()  # its own handlers take over once it has set them up
    except KeyboardInterrupt:
        say_interrupted()
        sys.exit(EXIT_INTERRUPTED)
