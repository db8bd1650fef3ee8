"""A scan's fact store built in memory, for unit tests of single stages (docs/architecture.md §2):
no git repository, no scan. The blobs live in a dict; everything else is what the stages make."""

from __future__ import annotations

import hashlib
from pathlib import Path

from diting.rules import load_rules
from diting.scan.facts import ScanFacts
from diting.scan.options import ScanOptions
from diting.scan.pipeline import SCAN_STAGES
from diting.scan.progress import Progress
from diting.scan.stages import run_stages
from diting.source.git import MODE_FILE, TreeEntry
from diting.source.snapshot import Snapshot


class MemoryObjects:
    """The two reads a :class:`Snapshot` makes of a repository's object database, from a dict."""

    def __init__(self, blobs: dict[str, bytes]) -> None:
        self.blobs = blobs

    def read_object(self, oid: str) -> tuple[str, bytes]:
        return "blob", self.blobs[oid]

    def read_blob_head(self, oid: str, limit: int) -> bytes:
        return self.blobs[oid][:limit]


def memory_facts(files: dict[str, str | bytes], out: Path, **options) -> ScanFacts:
    """The facts a scan has after its ``tree`` stage, for ``files`` (path → content): the given
    facts (repo id ``t/mem``, the shipped rules) and the snapshot. ``options``: :class:`ScanOptions`
    fields (``jobs`` defaults to 1)."""
    blobs, entries = {}, []
    for path, content in sorted(files.items()):
        data = content.encode("utf-8") if isinstance(content, str) else content
        oid = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()  # git's blob id
        blobs[oid] = data
        entries.append(TreeEntry(path, MODE_FILE, "blob", oid, len(data)))
    opts = ScanOptions(out=out, **{"jobs": 1, "quiet": True, **options})
    commit = "0" * 40
    facts = ScanFacts()
    facts.put(commit=commit, repo_id="t/mem", repo_id_basis="--repo-id", options=opts,
              rules=load_rules(opts.rules_dirs), inventory_file=None, config_snapshot=None, sql_dialects={},
              snapshot=Snapshot(MemoryObjects(blobs), commit, entries, opts.max_file_bytes),  # type: ignore[arg-type]
              commit_time="2026-01-01T00:00:00+00:00", config_dirs=[])
    return facts


def run_until(facts: ScanFacts, last: str) -> ScanFacts:
    """Run the scan's stages after ``tree`` up to and including stage ``last``."""
    names = [st.name for st in SCAN_STAGES]
    chosen = [st for st in SCAN_STAGES[names.index("tree") + 1:names.index(last) + 1]]
    return run_stages(chosen, facts, Progress(quiet=True))
