"""A tree held in memory: files given as bytes, read through the same :class:`~diting.source.snapshot.Snapshot`
as a commit's (rule samples, docs/rules.md §6; stage tests). Nothing is written to disk and no git runs."""

from __future__ import annotations

import hashlib

from diting.source.git import MODE_FILE, TreeEntry
from diting.source.snapshot import Snapshot


class MemoryObjects:
    """The two reads a :class:`Snapshot` makes of an object database, from blobs by id."""

    def __init__(self, blobs: dict[str, bytes]) -> None:
        self.blobs = blobs

    def read_object(self, oid: str) -> tuple[str, bytes]:
        return "blob", self.blobs[oid]

    def read_blob_head(self, oid: str, limit: int) -> bytes:
        return self.blobs[oid][:limit]


def memory_snapshot(files: dict[str, bytes], max_file_bytes: int) -> Snapshot:
    """A snapshot of ``files`` (repository path → bytes; paths are the caller's to check). Blob ids
    are git's; the commit id is the sha1 of the sorted ``path blob`` lines, so equal files give an
    equal commit."""
    blobs: dict[str, bytes] = {}
    entries: list[TreeEntry] = []
    for path, data in sorted(files.items()):
        oid = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
        blobs[oid] = data
        entries.append(TreeEntry(path, MODE_FILE, "blob", oid, len(data)))
    commit = hashlib.sha1("".join(f"{e.path} {e.oid}\n" for e in entries).encode("utf-8")).hexdigest()
    return Snapshot(MemoryObjects(blobs), commit, entries, max_file_bytes)  # type: ignore[arg-type]
