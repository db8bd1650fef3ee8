"""A scan's fact store built in memory, for unit tests of single stages (docs/architecture.md §2):
no git repository, no scan. The blobs live in a dict (``source/memory.py``); everything else is what
the stages make."""

from __future__ import annotations

from pathlib import Path

from diting.scan.facts import ScanFacts
from diting.scan.options import ScanOptions
from diting.scan.pipeline import SCAN_STAGES, ScanResult, memory_facts, scan_files
from diting.scan.progress import Progress
from diting.scan.stages import run_stages


def _bytes(files: dict[str, str | bytes]) -> dict[str, bytes]:
    """Path → content, text encoded as UTF-8."""
    return {p: c.encode("utf-8") if isinstance(c, str) else c for p, c in files.items()}


def facts_of(files: dict[str, str | bytes], out: Path, **options) -> ScanFacts:
    """The facts a scan of ``files`` (path → content) has after its ``tree`` stage: repository id
    ``t/mem``, the shipped rules. ``options``: :class:`ScanOptions` fields (``jobs`` defaults to 1)."""
    return memory_facts(_bytes(files), ScanOptions(out=out, **{"jobs": 1, "quiet": True, "repo_id": "t/mem", **options}),
                        commit_time="2026-01-01T00:00:00+00:00")


def run_until(facts: ScanFacts, last: str) -> ScanFacts:
    """Run the scan's stages after ``tree`` up to and including stage ``last``."""
    names = [st.name for st in SCAN_STAGES]
    chosen = [st for st in SCAN_STAGES[names.index("tree") + 1:names.index(last) + 1]]
    return run_stages(chosen, facts, Progress(quiet=True))


def scan_memory(files: dict[str, str | bytes], out: Path, **options) -> ScanResult:
    """A whole scan of ``files`` (path → content) held in memory, into packages under ``out``: every
    stage after ``tree``, no git (``tests/conftest.scan_repo``'s twin for the probe tests). Repository id
    ``test/repo``; ``options``: :class:`ScanOptions` fields (``jobs`` defaults to 1)."""
    return scan_files(_bytes(files), ScanOptions(out=out, **{"jobs": 1, "quiet": True, "repo_id": "test/repo", **options}))
