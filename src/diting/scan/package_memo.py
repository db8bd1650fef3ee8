"""Packages kept in the scan cache and written again at another commit (docs/scanning.md §14).

A package's bytes depend on the commit in three places only: the ``commit_sha`` of every segment's
locator, the implementation scope ``sv:{service}:{commit}``, and the scan id, which digests the
analysis input (where the commit and its time are). Everything else is a function of the files the
package's modules hold, the repository's build files, the package plan (the service's identity,
modules, deployable basis and findings, which the whole repository decides) and the analysis input
without the commit. :func:`package_key` digests exactly that; a scan that finds an entry under its
package's key writes the kept files with the old commit and scan id replaced by the new ones instead
of assembling the package again.

Replacing text is exact here: an entry is used only when every input is unchanged, so its content
came from files that existed before the old commit was made — none can hold that commit's id or a
scan id derived from it (a file cannot hold the hash of the commit that holds it).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from diting.cache import cache_key

if TYPE_CHECKING:
    from diting.inventory.services import PackagePlan
    from diting.scan.facts import ScanFacts

#: the cache kind of kept packages (diting/cache.py)
KIND = "package"
#: the analysis input's fields that name the commit (the rest is part of the key)
COMMIT_FIELDS = ("commit_sha", "commit_time")


@functools.cache
def code_digest() -> str:
    """sha256 over every Python source file of diting: a package depends on all of it."""
    root = Path(__file__).resolve().parent.parent
    h = hashlib.sha256()
    for f in sorted(root.rglob("*.py")):
        h.update(str(f.relative_to(root)).encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


def package_key(s: "ScanFacts", plan: "PackagePlan", analysis_input: dict[str, Any]) -> str:
    """The key of the package of ``plan``: diting's code, the analysis input without the commit,
    the plan, the repository id, and ``(path, mode, blob)`` of every file of the package's modules
    and of every build file of the repository."""
    from diting.ir.canonical import dumps
    ai = {k: v for k, v in analysis_input.items() if k not in COMMIT_FIELDS}
    files = sorted((f.path, f.entry.mode, f.entry.oid) for m in plan.modules for f in s.inv.files_by_module.get(m, []))
    builds = sorted({(p, s.snapshot.by_path[p].oid) for mod in s.inv.model.modules.values()
                     for p in mod.build_inputs if p in s.snapshot.by_path})
    return cache_key(code_digest(), dumps(ai), s.repo_id, _plan_text(plan), json.dumps(files), json.dumps(builds))


def _plan_text(plan: "PackagePlan") -> str:
    """The plan as text: every field but the folder it is written to (named after the commit, and no
    part of the package's files) and its configuration, of which the sources' ranks and blobs."""
    fields = {f.name: getattr(plan, f.name) for f in dataclasses.fields(plan) if f.name not in ("config", "dir_name")}
    fields["config"] = None if plan.config is None else {
        "profiles": plan.config.profiles, "profile_basis": plan.config.profile_basis,
        "sources": [(src.rank, src.path, src.profile, src.by_name) for src in plan.config.sources],
        "files_read": [(r.path, r.blob) for r in plan.config.files_read],
        "unreadable": sorted(map(repr, plan.config.unreadable)), "unfiltered": sorted(map(repr, plan.config.unfiltered)),
        "too_deep": sorted(map(repr, plan.config.too_deep.items()))}
    return json.dumps(fields, sort_keys=True, default=_plain)


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=repr)
    return repr(value)


def kept_entry(files: dict[str, bytes], commit: str, scan_id: str, status: str, status_reason: str,
               counts: dict[str, int], sql_datasource: str | None) -> dict[str, Any]:
    """What the cache keeps of a written package (plain values only): its files but the analysis
    input and the manifest, which are made again, and what its result says."""
    return {"files": {n: d for n, d in files.items() if n not in ("analysis_input.json", "manifest.json")},
            "commit": commit, "scan_id": scan_id, "status": status, "status_reason": status_reason,
            "counts": counts, "sql_datasource": sql_datasource}


def restamped(entry: dict[str, Any], commit: str, scan_id: str) -> dict[str, bytes] | None:
    """The kept files with the kept commit and scan id replaced by ``commit`` and ``scan_id``; None
    when the entry is not of the expected shape."""
    try:
        old_commit, old_scan = entry["commit"].encode("ascii"), _json_text(entry["scan_id"])
        files = entry["files"]
        if not all(isinstance(n, str) and isinstance(d, bytes) for n, d in files.items()):
            return None
    except (KeyError, AttributeError, TypeError, UnicodeError):
        return None
    new_commit, new_scan = commit.encode("ascii"), _json_text(scan_id)
    return {n: d.replace(old_scan, new_scan).replace(old_commit, new_commit) for n, d in files.items()}


def _json_text(value: str) -> bytes:
    """``value`` as it stands inside a JSON string of a package file."""
    return json.dumps(value, ensure_ascii=False)[1:-1].encode("utf-8")
