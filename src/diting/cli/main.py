"""The ``diting`` command line.

Errors a user can cause end with one line on stderr and a non-zero exit code,
never a traceback. Results go to stdout (``--json`` for machines); progress
goes to stderr.

This module is the app with every command registered (the command modules register theirs on
:mod:`diting.cli.app` when imported here) and :func:`run`, which runs it.
"""

from __future__ import annotations

import sys

import typer

# imported for what importing does: each registers its commands on the app
from diting.cli import demo_command, estate_commands, graph_commands, package_commands, rule_commands  # noqa: F401
from diting.cli.app import app, estate_app, graph_app
from diting.cli.common import ClosedOutput, err, is_output_failure, output_failed_code, say, stdout_failed

#: seconds between Ctrl-C and a forced exit, when the interrupted work does not stop by itself
INTERRUPT_GRACE_SECONDS = 10


def run(pending: list[int] | None = None) -> None:
    """The command line (:mod:`diting.cli.entry` calls it). An unexpected failure is one line (exit 3),
    never a traceback, unless ``DITING_DEBUG=1``. ``pending``: the signals held while the command line
    was imported; the first of them interrupts the command as soon as its handlers are in place."""
    import os
    import signal
    import threading

    from diting.interrupts import cancel_running, ignore_interrupts, say_interrupted
    main_pid = os.getpid()
    signalled: list[int] = []  # the interrupts the main process took: what follows them is their doing

    def on_sigint(signum: int, frame: object) -> None:
        # SIGINT and SIGTERM alike; typer turns Ctrl-C into a silent exit 130 before the handler below sees it: say it here
        # (once, from the main process; workers share the process group). It imports nothing: the
        # signal may come while a module is half-imported
        if os.getpid() == main_pid:
            signalled.append(signum)
            say_interrupted()
            # a query DuckDB cannot cancel (its executor can spin) must not keep the process alive: an
            # unfinished graph transaction is discarded when the database is next opened, and package
            # writes are atomic, so leaving after a grace period loses nothing written
            watchdog = threading.Timer(INTERRUPT_GRACE_SECONDS, os._exit, [130])
            watchdog.daemon = True
            watchdog.start()
            cancel_running()  # a query running in native code stops now, not at the grace period's end
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, signal.default_int_handler)
        raise KeyboardInterrupt

    # worker pools register their semaphores with multiprocessing's resource tracker, which warns on
    # stderr about "leaked" ones when this process is killed (-9) — it cleans them up all the same;
    # it is started with this process's warning options
    sys.warnoptions.append("ignore::UserWarning:multiprocessing.resource_tracker")
    for group in (app, graph_app, estate_app):
        for cmd in group.registered_commands:
            if cmd.callback is not None and not hasattr(cmd.callback, "__wrapped__"):
                cmd.callback = _ends_interruptible(cmd.callback)
    signal.signal(signal.SIGINT, on_sigint)
    signal.signal(signal.SIGTERM, on_sigint)  # kill, a service manager, a timeout: ended as Ctrl-C is
    if sys.stdout is None:  # started with its standard output closed (>&-): say so when it is written
        sys.stdout = ClosedOutput()
    try:
        if pending:  # a signal came while the command line was being imported (diting.cli.entry)
            on_sigint(pending[0], None)
        app()
    except KeyboardInterrupt:
        sys.exit(130)
    except SystemExit as exc:
        # an interrupt some library swallowed ("Exception ignored in …") after "interrupted" was said:
        # the command did not end as asked, and says so by its code
        if signalled and exc.code in (0, None):
            sys.exit(130)
        raise
    except Exception as exc:  # noqa: BLE001 - the last line of defence
        if signalled:  # a failure an interrupt caused (DuckDB's "Query interrupted" outside a query …)
            sys.exit(130)
        if is_output_failure(exc):  # the standard output failing where no command wraps it (--help, usage)
            sys.exit(output_failed_code(exc))
        if os.environ.get("DITING_DEBUG") == "1":
            raise
        say(err, ("internal error: ", "bold red"), f"{type(exc).__name__}: {exc} (run with DITING_DEBUG=1 for "
            "details; please report it)")
        sys.exit(3)
    finally:  # the exit code is decided: the interpreter's shutdown must not end in a death by signal
        ignore_interrupts()


def _ends_interruptible(callback):
    """``callback`` (a command), after whose return — or exit with a code of its own — SIGINT and
    SIGTERM are ignored: the work is done and printed, and a signal now would only turn the
    command's exit code into a death by signal. An interrupt during the work still ends it
    ("interrupted", exit 130)."""
    import functools
    from diting.interrupts import ignore_interrupts

    @functools.wraps(callback)
    def command(*args, **kwargs):
        try:
            try:
                result = callback(*args, **kwargs)
            finally:
                sys.stdout.flush()  # here, so a reader gone away is seen as that (below)
        except (typer.Exit, SystemExit):
            ignore_interrupts()
            raise
        except OSError as exc:
            # the reader went away (| head), or the standard output is full, failing or closed: not a
            # finding, not an error of ours (is_output_failure; a file of the command's own is raised on)
            if not is_output_failure(exc):
                raise
            ignore_interrupts()
            stdout_failed(exc)
        ignore_interrupts()
        return result
    return command


if __name__ == "__main__":  # pragma: no cover
    run()
