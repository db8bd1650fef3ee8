"""Repository-relative paths that can never leave the tree.

Every path diting derives from repository content (``<module>``,
``relativePath``, resource directories, XML imports) goes through
:func:`join_inside`; a path that would escape the repository root, or an
absolute path, gives None and the caller reports PATH_OUTSIDE_TREE. A tree
entry whose own path git would refuse to check out (:func:`tree_path_problem`)
is no file of the repository either.
"""

from __future__ import annotations

import posixpath


def join_inside(base_dir: str, rel: str) -> str | None:
    """Join ``rel`` to the repository-relative ``base_dir`` and normalise.

    Returns a repository-relative POSIX path ('' for the root), or None when the
    result is absolute or leaves the repository (``..`` past the root).
    """
    rel = rel.strip().replace("\\", "/")
    if rel.startswith("/") or (len(rel) > 1 and rel[1] == ":"):
        return None
    joined = posixpath.normpath(posixpath.join(base_dir or ".", rel or "."))
    if joined == ".":
        return ""
    if joined.startswith("../") or joined == ".." or joined.startswith("/"):
        return None
    return joined


def parent_dir(path: str) -> str:
    """Directory of a repository-relative path ('' at the root)."""
    return path.rsplit("/", 1)[0] if "/" in path else ""


def tree_path_problem(path: str) -> str | None:
    """Why git refuses to check out a tree entry at ``path`` (as ``git ls-tree`` prints it), or None
    when a checkout writes it: an absolute path, an empty, ``.`` or ``..`` segment, or a ``.git``
    segment (any case). Real trees hold none; ``git mktree`` and ``hash-object --literally`` write
    them."""
    if path.startswith("/"):
        return "an absolute path"
    for seg in path.split("/"):
        if seg in ("", ".", ".."):
            return f"a path segment {seg!r}" if seg else "an empty path segment"
        if seg.lower() == ".git":
            return "a '.git' path segment"
    return None
