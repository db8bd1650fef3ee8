"""Files a user hands to diting (rule files, the inventory, packages, cache entries): read safely —
regular files only, bounded, YAML without surprises — and errors as one line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from diting.config.sources import duplicate_key
from diting.errors import UserError

#: PyYAML's safe loader, in C (libyaml) when the installed wheel has it (same documents, ~20x faster)
SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
#: a rule or inventory file larger than this is refused
MAX_USER_FILE_BYTES = 16 * 1024 * 1024


def read_user_file(path: Path, what: str) -> bytes:
    """The bytes of a file the user handed over (at most :data:`MAX_USER_FILE_BYTES`).
    Raises :class:`UserError` when it cannot be read or is too large."""
    try:
        if path.exists() and not path.is_dir() and not path.is_file():
            raise UserError(f"{what} {path} is not a regular file")  # a FIFO or device would block or never end
        with open(path, "rb") as fh:
            data = fh.read(MAX_USER_FILE_BYTES + 1)
    except OSError as exc:
        raise UserError(f"cannot read {what} {path}: {exc.strerror}") from exc
    if len(data) > MAX_USER_FILE_BYTES:
        raise UserError(f"{what} {path} is larger than {MAX_USER_FILE_BYTES} bytes")
    return data


def read_regular(path: Path, limit: int | None = None) -> bytes | None:
    """The bytes of ``path`` when it is a regular file (of at most ``limit`` bytes, when given), opened
    without following a symlink (so a link swapped in after a check is refused too) and without
    waiting on a pipe; None otherwise."""
    import os
    import stat
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or (limit is not None and st.st_size > limit):
            return None
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read() if limit is None else f.read(limit + 1)
        return None if limit is not None and len(data) > limit else data
    finally:
        os.close(fd)


def parse_yaml_list(data: bytes, path: Path, what: str, key: str) -> dict[str, Any]:
    """The YAML mapping in ``data`` whose ``key`` is a list. Raises :class:`UserError`."""
    try:
        loader = SAFE_LOADER(data.decode("utf-8"))
        try:
            node = loader.get_single_node()  # composed once: checked, then constructed
            _check_node_budget(node, path, what)
            doc = loader.construct_document(node) if node is not None else None
        finally:
            loader.dispose()
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        why = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise UserError(f"{what} {path} is not valid YAML{where}: {why}") from exc
    except RecursionError as exc:
        raise UserError(f"{what} {path} nests too deeply") from exc
    except ValueError as exc:  # a value the loader cannot make (an integer of thousands of digits)
        raise UserError(f"{what} {path} is not valid YAML: {str(exc).splitlines()[0][:200]}") from exc
    if not isinstance(doc, dict) or not isinstance(doc.get(key), list):
        raise UserError(f"{what} {path} must be a mapping with a '{key}' list")
    return doc


#: YAML nodes a user file may stand for once its aliases are expanded (a small file of nested
#: aliases can stand for billions)
MAX_USER_YAML_NODES = 1_000_000


def _check_node_budget(root: Any, path: Path, what: str) -> None:
    """Refuse a document whose aliases expand beyond :data:`MAX_USER_YAML_NODES` nodes, or one of
    whose mappings repeats a key (:func:`diting.config.sources.duplicate_key`: the loader would keep
    one value silently). Raises :class:`UserError` naming the file and the line."""
    budget = MAX_USER_YAML_NODES
    stack = [root] if root is not None else []
    while stack:
        node = stack.pop()
        budget -= 1
        if budget < 0:
            raise UserError(f"{what} {path} expands to more than {MAX_USER_YAML_NODES} YAML nodes "
                            "(aliases of aliases); write it out instead")
        if isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
        elif isinstance(node, yaml.MappingNode):
            dup = duplicate_key(node)
            if dup is not None:
                first, again = dup
                raise UserError(f"{what} {path} repeats the key {str(again.value)[:80]!r} in one mapping (line "
                                f"{again.start_mark.line + 1}, first at line {first.start_mark.line + 1})")
            for k, v in node.value:
                stack.append(k)
                stack.append(v)


def load_yaml_list(path: Path, what: str, key: str) -> tuple[dict[str, Any], bytes]:
    """The YAML mapping in ``path`` (whose ``key`` is a list), and the file's bytes.

    ``what`` names the file in messages ("inventory file", "rule file"). Raises
    :class:`UserError` when the file cannot be read, is not YAML, or has no such list."""
    data = read_user_file(path, what)
    return parse_yaml_list(data, path, what, key), data
