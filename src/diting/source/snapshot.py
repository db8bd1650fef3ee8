"""A repository at one commit: its tree entries and blob reading with size limits.

Everything the scan reads goes through :class:`Snapshot`; it reads only blobs
of the pinned commit's tree, never the working tree and never a path outside
the repository (paths are looked up in the tree, not on disk).
"""

from __future__ import annotations

from dataclasses import dataclass

from diting.ir.canonical import MAX_RECORD_BYTES
from diting.source.git import GitRepo, TreeEntry
from diting.source.text import is_lfs_pointer

#: a file with a longer line (bytes; ends at CRLF, a lone CR or LF) is not read: evidence cites whole
#: lines, and one line's segment must stay one record (:data:`~diting.ir.canonical.MAX_RECORD_BYTES`).
#: A character costs a record at most ~43 bytes (6 for a ``\\u00XX`` escape, ~37 for a redaction
#: masking every other character), so 64 per byte of the line leaves room.
MAX_LINE_BYTES = MAX_RECORD_BYTES // 64


@dataclass(frozen=True)
class BlobRead:
    """Result of reading a blob: ``data`` or the reason it was not read
    (``too_large``, ``too_large_line``: a line over :data:`MAX_LINE_BYTES`, ``lfs_pointer``,
    ``symlink``, ``submodule``, ``missing``, ``missing_object``, ``refused_path``: an entry git
    refuses to check out, ``not_a_blob``: a file's entry naming a tree or a commit)."""

    data: bytes | None
    problem: str | None = None
    size: int = 0


class Snapshot:
    """The tree of ``commit`` in ``repo``; ``max_file_bytes`` bounds what is read."""

    def __init__(self, repo: GitRepo, commit: str, entries: list[TreeEntry], max_file_bytes: int) -> None:
        self.repo = repo
        self.commit = commit
        self.entries = entries
        self.by_path: dict[str, TreeEntry] = {e.path: e for e in entries}
        self.gitlinks: set[str] = {e.path for e in entries if e.is_gitlink}
        self.max_file_bytes = max_file_bytes

    def exists(self, path: str) -> bool:
        e = self.by_path.get(path)
        return e is not None and e.is_regular

    def read(self, path: str) -> BlobRead:
        """Read a regular blob of the tree, never following symlinks or submodules."""
        e = self.by_path.get(path)
        if e is None:
            return BlobRead(None, "missing")
        if e.refused is not None:
            return BlobRead(None, "refused_path")
        if e.is_symlink:
            return BlobRead(None, "symlink")
        if e.is_gitlink:
            return BlobRead(None, "submodule")
        if not e.is_regular:
            return BlobRead(None, "missing")
        if e.missing:
            return BlobRead(None, "missing_object")
        size = e.size or 0
        if size > self.max_file_bytes:
            return BlobRead(None, "too_large", size)
        kind, data = self.repo.read_object(e.oid)
        if kind != "blob":  # a crafted entry of a file's mode naming a tree or a commit
            return BlobRead(None, "not_a_blob", size)
        if is_lfs_pointer(data):
            return BlobRead(None, "lfs_pointer", size)
        if len(data) > MAX_LINE_BYTES and max(map(len, data.splitlines())) > MAX_LINE_BYTES:
            return BlobRead(None, "too_large_line", size)
        return BlobRead(data, None, size)

    def first_line(self, path: str) -> tuple[str, str]:
        """The decoded first line of a file and its encoding, read without loading the whole
        blob (evidence for a file too large to read)."""
        from diting.source.text import decode_bytes
        e = self.by_path.get(path)
        if e is None or not e.is_regular or e.missing:
            return "", "utf-8"
        head = self.repo.read_blob_head(e.oid, MAX_LINE_BYTES + 2)  # a line evidence may cite, and its end
        d = decode_bytes(head.splitlines()[0] if head else b"")  # ends at CRLF, a lone CR or LF
        return d.text, d.encoding
