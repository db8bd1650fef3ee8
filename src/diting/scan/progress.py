"""Progress on stderr through one API (rich); silent with ``--quiet`` or when stderr is not a terminal.

Results never go through here: they go to files or to stdout in a declared format.
"""

from __future__ import annotations

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
from rich.progress import Progress as _RichProgress


class Progress:
    """Stage-by-stage progress: :meth:`stage` starts a stage (optionally with a total),
    :meth:`advance` moves it on."""

    def __init__(self, quiet: bool = False) -> None:
        self.quiet = quiet
        self._console = Console(stderr=True)
        self._progress: _RichProgress | None = None
        self._task = None

    def __enter__(self) -> "Progress":
        if not self.quiet and self._console.is_terminal:
            self._progress = _RichProgress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                           TimeElapsedColumn(), console=self._console, transient=True)
            self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None

    def stage(self, name: str, total: int | None = None) -> None:
        if self._progress is None:
            return
        if self._task is not None:
            self._progress.remove_task(self._task)
        self._task = self._progress.add_task(name, total=total)

    def advance(self, n: int = 1) -> None:
        if self._progress is not None and self._task is not None:
            self._progress.advance(self._task, n)
