"""What every command of the command line shares: the consoles, terminal-safe printing, and ending a
command on a user error or a failed standard output (one line on stderr and an exit code, never a
traceback; docs/cli.md §1)."""

from __future__ import annotations

import errno
import io
import sys

import typer
from rich.console import Console
from rich.text import Text

#: the exit code when standard output is closed before everything was written (128 + SIGPIPE, as a
#: shell reports a process a closed pipe ended): never 1, which means findings
EXIT_BROKEN_PIPE = 141

# markup is off everywhere: text from a scanned repository (paths, ids, URLs) is never markup
err = Console(stderr=True, soft_wrap=True, markup=False, highlight=False)
out = Console(soft_wrap=True, markup=False, highlight=False)


def _broken_pipe() -> None:
    raise BrokenPipeError  # rich would exit 1 here, which means findings: the command wrapper says 141


out.on_broken_pipe = _broken_pipe  # type: ignore[method-assign]
stdout = out  # for the commands whose --out parameter hides the name


def terminal_safe(value: object) -> str:
    """Text for a terminal: control characters (escape sequences …) shown as ``\\xNN``, lines kept."""
    from diting.safe_text import printable
    return printable(str(value), lines=True)


def say(console: Console, *parts: str | tuple[str, str]) -> None:
    """Print plain parts (made terminal-safe) and ``(text, style)`` parts on one line."""
    console.print(Text.assemble(*[(terminal_safe(p[0]), p[1]) if isinstance(p, tuple) else terminal_safe(p)
                                  for p in parts]))


def note_directory_repo_id(repo_id: str) -> None:
    """Say on stderr that the repository id came from the directory's name (``scan``, ``diff --repo``
    without ``--repo-id``): packages of the estate would not share one repository id."""
    say(err, f"note: repo id {repo_id!r} is the directory name (no origin remote with a host: none, or a local "
             "path); pass --repo-id to name the repository")


def fail(message: str, code: int = 2) -> None:
    """End the command on a user error: ``error: message`` on stderr, exit ``code`` (2 unless given)."""
    say(err, ("error: ", "bold red"), message)
    raise typer.Exit(code)


def answer(text: str) -> None:
    """Print an eager option's answer and end: written and flushed here, so a reader gone away is
    exit 141 and a full device exit 2, as for every command (docs/cli.md §1)."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except OSError as exc:
        stdout_failed(exc)
    raise typer.Exit(0)


#: errno values of a standard output that cannot be written: a full or failing device, a closed one
OUTPUT_ERRNOS = frozenset({errno.ENOSPC, errno.EIO, errno.EFBIG, errno.EDQUOT, errno.EBADF, errno.EPIPE})


def is_output_failure(exc: BaseException) -> bool:
    """Whether ``exc`` is the standard output failing (no file named: a reader gone away, a full,
    failing or closed device), not a file of the command's own."""
    return isinstance(exc, OSError) and (isinstance(exc, BrokenPipeError) or
                                         (exc.filename is None and exc.errno in OUTPUT_ERRNOS))


def output_failed_code(exc: OSError) -> int:
    """Say why the standard output failed and give the exit code: 141 when the reader went away
    (``| head``, nothing said), else one message and 2 (a full device, a closed standard output);
    what is still buffered goes nowhere."""
    import os
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, AttributeError, ValueError):  # a closed standard output has no descriptor to reuse
        sys.stdout = ClosedOutput(quiet=True)
    if isinstance(exc, BrokenPipeError):
        return EXIT_BROKEN_PIPE
    say(err, ("error: ", "bold red"), f"cannot write the standard output: {exc.strerror or exc}")
    return 2


def stdout_failed(exc: OSError) -> None:
    """End a command whose standard output failed (:func:`output_failed_code`)."""
    raise typer.Exit(output_failed_code(exc)) from None


class ClosedOutput(io.TextIOBase):
    """The standard output of a process started with it closed (``>&-``; Python then has none):
    writing to it fails as writing to a closed descriptor does, so the command ends with one message
    and exit 2 instead of losing its output silently. ``quiet``: swallow writes (after that message)."""

    def __init__(self, quiet: bool = False) -> None:
        self.quiet = quiet

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if self.quiet:
            return len(text)
        raise OSError(errno.EBADF, "the standard output is closed")

    def flush(self) -> None:
        return None

    def fileno(self) -> int:
        raise OSError(errno.EBADF, "the standard output is closed")



def scan_cache(given, no_cache: bool, out, quiet: bool):
    """The cache directory a scanning command uses (:func:`diting.cache.chosen_cache`), its note on
    stderr unless ``quiet``. Raises :class:`~diting.errors.UserError` as that does."""
    from diting.cache import chosen_cache
    cache, note = chosen_cache(given, no_cache, out)
    if note and not quiet:
        say(err, note)
    return cache
