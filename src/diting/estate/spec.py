"""The estate file: which repositories an estate scan reads, at which revisions, with which options
(docs/estates.md §1).

An estate file is YAML: optional ``defaults`` (scan options every repository takes unless it sets
its own) and ``rules`` (extra rule folders for every scan), then ``repositories``, a list of
mappings. Paths in the file are relative to the file's folder. Nothing here touches a repository:
:meth:`RepoSpec.resolve` does, once per run.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from diting.errors import UserError
from diting.source.git import checked_repo_id, repo_id_from_url
from diting.userfiles import load_yaml_list

#: fields a repository entry (and ``defaults``, for the scan options) may set
OPTION_FIELDS = ("profiles", "services", "config_dirs", "sql_dialects", "config_snapshot", "inventory",
                 "max_file_bytes")
REPO_FIELDS = ("name", "path", "url", "rev", "repo_id") + OPTION_FIELDS
#: a repository's name: its folder under the estate's output
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,99}$")
#: names an estate's output keeps for itself (its state file)
RESERVED_NAMES = frozenset({"estate.json"})


@dataclass(frozen=True)
class RepoSpec:
    """One repository of the estate: where it is cloned, the revision to scan, and its scan options
    (``None``: the scan's default)."""

    name: str
    path: Path
    rev: str
    repo_id: str | None = None
    url: str | None = None
    profiles: tuple[str, ...] | None = None
    services: tuple[str, ...] = ()
    config_dirs: tuple[str, ...] = ()
    sql_dialects: tuple[str, ...] = ()
    config_snapshot: Path | None = None
    inventory: Path | None = None
    max_file_bytes: int | None = None


@dataclass(frozen=True)
class EstateSpec:
    """A loaded estate file: its repositories (names unique) and the extra rule folders."""

    path: Path
    repositories: tuple[RepoSpec, ...]
    rules: tuple[Path, ...] = field(default=())


def load_estate(path: Path) -> EstateSpec:
    """Read and check the estate file at ``path``. Raises :class:`UserError` (one line naming the
    entry and field) for a missing or malformed file, an unknown field, a value of the wrong type,
    a missing ``path``, two entries of one name, or a ``url`` that names no repository."""
    doc, _ = load_yaml_list(path, "estate file", "repositories")
    unknown = set(doc) - {"repositories", "defaults", "rules"}
    if unknown:
        raise UserError(f"estate file {path}: unknown top-level field(s) {', '.join(sorted(unknown))} "
                        "(fields: repositories, defaults, rules)")
    base = Path(os.path.abspath(path)).parent  # absolute: a worker elsewhere reads the same files
    defaults = doc.get("defaults") or {}
    if not isinstance(defaults, dict):
        raise UserError(f"estate file {path}: defaults must be a mapping of scan options")
    bad = set(defaults) - set(OPTION_FIELDS)
    if bad:
        raise UserError(f"estate file {path}: defaults: unknown field(s) {', '.join(sorted(bad))} "
                        f"(fields: {', '.join(OPTION_FIELDS)})")
    rules = tuple(base / p for p in _strings(doc.get("rules"), path, "rules"))
    repos: list[RepoSpec] = []
    seen: dict[str, int] = {}
    for i, entry in enumerate(doc["repositories"]):
        where = f"estate file {path}: repositories #{i + 1}"
        if not isinstance(entry, dict):
            raise UserError(f"{where} must be a mapping with at least a path")
        bad = set(entry) - set(REPO_FIELDS)
        if bad:
            raise UserError(f"{where}: unknown field(s) {', '.join(sorted(bad))} (fields: {', '.join(REPO_FIELDS)})")
        repo = _repo(dict(defaults, **entry), base, where)
        if repo.name.casefold() in seen:
            raise UserError(f"{where}: the name {repo.name!r} is taken by repositories #{seen[repo.name.casefold()]};"
                            " give one of them another name")
        seen[repo.name.casefold()] = i + 1
        repos.append(repo)
    return EstateSpec(path, tuple(repos), rules)


def _repo(e: dict[str, Any], base: Path, where: str) -> RepoSpec:
    raw_path = _string(e.get("path"), where, "path")
    if not raw_path:
        raise UserError(f"{where}: path (the repository's clone, relative to the estate file) is required")
    url = _string(e.get("url"), where, "url")
    repo_id = _string(e.get("repo_id"), where, "repo_id")
    if repo_id:
        checked_repo_id(repo_id)
    elif url:
        repo_id = repo_id_from_url(url)
        if repo_id is None:
            raise UserError(f"{where}: url {url!r} names no repository (write repo_id instead)")
    name = _string(e.get("name"), where, "name") or _name_of(repo_id or Path(raw_path).name)
    if not NAME.match(name) or name.casefold() in RESERVED_NAMES:
        raise UserError(f"{where}: name {name!r} must be letters, digits and . _ + - (it names the repository's "
                        f"folder under --out), and not {', '.join(sorted(RESERVED_NAMES))}")
    mfb = e.get("max_file_bytes")
    if mfb is not None:
        from diting.limits import MAX_FILE_BYTES_LIMIT
        from diting.scan.options import bounded_int
        try:
            bounded_int("max_file_bytes", mfb, 1, MAX_FILE_BYTES_LIMIT)
        except UserError as exc:
            raise UserError(f"{where}: {exc.message}") from None
    profiles = e.get("profiles")
    return RepoSpec(
        name=name, path=base / raw_path, rev=_string(e.get("rev"), where, "rev") or "HEAD", repo_id=repo_id, url=url,
        profiles=None if profiles is None else _strings(profiles, where, "profiles"),
        services=_strings(e.get("services"), where, "services"),
        config_dirs=_strings(e.get("config_dirs"), where, "config_dirs"),
        sql_dialects=_strings(e.get("sql_dialects"), where, "sql_dialects"),
        config_snapshot=_file(e.get("config_snapshot"), base, where, "config_snapshot"),
        inventory=_file(e.get("inventory"), base, where, "inventory"), max_file_bytes=mfb)


def _name_of(text: str) -> str:
    """A folder name from a repository id or a folder: its segments joined by ``+``."""
    return re.sub(r"[^A-Za-z0-9._+-]", "_", "+".join(s for s in text.strip("/").split("/")[-2:] if s)) or "repo"


def _string(value: Any, where: str, name: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise UserError(f"{where}: {name} must be text (quote it), not {value!r}")
    return value.strip() or None


def _strings(value: Any, where: Any, name: str) -> tuple[str, ...]:
    """A list of text, or one text item (``profiles: dev``; comma-separated for profiles)."""
    if value is None:
        return ()
    if isinstance(value, str):
        value = [v for v in value.split(",")] if name == "profiles" else [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UserError(f"{where}: {name} must be a list of text")
    return tuple(v.strip() for v in value)


def _file(value: Any, base: Path, where: str, name: str) -> Path | None:
    text = _string(value, where, name)
    return base / text if text else None
