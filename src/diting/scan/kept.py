"""Packages and module records kept in the scan cache and used again at another commit (docs/scanning.md §14).

A package's bytes depend on the commit in three places only: the ``commit_sha`` of every segment's
locator, the implementation scope ``sv:{service}:{commit}``, and the scan id, which digests the
analysis input (where the commit and its time are). Everything else is a function of the files the
package's modules hold, the repository's build files, the package plan (the service's identity,
modules, deployable basis and findings, which the whole repository decides) and the analysis input
without the commit. :func:`package_key` digests exactly that; a scan that finds an entry under its
package's key writes the kept files with the old commit and scan id replaced by the new ones instead
of assembling the package again. The analysis input a package is written with is made after its
probes, which add the config sources they read (a ``@PropertySource`` file) to it: the entry keeps
that one, used with the new commit's fields while every config file it lists has the same blob
(:func:`kept_analysis_input`).

A module's records (one chunk of its files: ``scan/modules.py``) are kept the same way, under
:func:`module_key`: the files of the module and of its closure (whose types and constants its files
see), the build files, every module's namespace, the rules and options that shape records, and
diting's code. Their encoded lines carry the scan's placeholders and the commit, replaced on reuse.

Replacing text is exact here: an entry is used only when every input is unchanged, so what it holds
of the repository came from files that existed before the old commit was made — none can hold that
commit's id, a scan id derived from it, or the random placeholders of the scan that kept it (a file
cannot hold the hash of the commit that holds it). What the scan reads from elsewhere (the repository
id, a config snapshot, an inventory, rule files) could hold any text, so an entry whose old ids occur
there is not used (:func:`usable`).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from diting.cache import cache_key
from diting.ir.models import PACKAGE_FILES

if TYPE_CHECKING:
    from diting.inventory.services import PackagePlan
    from diting.scan.facts import ScanFacts

#: the cache kinds of kept packages and of kept module records (diting/cache.py)
PACKAGE = "package"
MODULE = "module"
#: the analysis input's fields that name the commit (the rest is part of the key)
COMMIT_FIELDS = ("commit_sha", "commit_time")


@functools.cache
def code_digest() -> str:
    """sha256 over every Python source file of diting and the Python version running it: a package
    depends on all of it (the libraries' versions are in the analysis input)."""
    import sys
    root = Path(__file__).resolve().parent.parent
    h = hashlib.sha256(f"python={sys.version_info[:3]}\0".encode())
    for f in sorted(root.rglob("*.py")):
        h.update(str(f.relative_to(root)).encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


@functools.cache
def library_versions() -> dict[str, str]:
    """The installed versions of the libraries whose behaviour shapes records (``not installed`` for
    one that is not), by lower-case distribution name."""
    import importlib.metadata as md
    out = {}
    for dist in ("tree-sitter", "tree-sitter-java", "lxml", "sqlglot", "sqlglotc", "PyYAML"):
        try:
            out[dist.lower()] = md.version(dist)
        except md.PackageNotFoundError:
            out[dist.lower()] = "not installed"
    return out


def package_key(s: "ScanFacts", plan: "PackagePlan", analysis_input: dict[str, Any]) -> str:
    """The key of the package of ``plan``: diting's code, the analysis input without the commit,
    the plan, the repository id, and ``(path, mode, blob)`` of every file of the package's modules
    and of every build file of the repository."""
    from diting.ir.canonical import dumps
    ai = {k: v for k, v in analysis_input.items() if k not in COMMIT_FIELDS}
    return cache_key(code_digest(), dumps(ai), s.repo_id, _plan_text(plan), _files_of(s, plan.modules),
                     _build_files(s))


def module_key(s: "ScanFacts", module: str, index: int, paths: list[str]) -> str:
    """The key of chunk ``index`` (files ``paths``) of ``module``'s records: diting's code, the
    repository id, the chunk, ``(path, mode, blob)`` of every file of the module and of its closure,
    the build files, every module's namespace, the rules, the application annotations, the file
    size budget and the libraries' versions."""
    return cache_key(_module_scope(s), module, str(index), json.dumps(paths),
                     _files_of(s, s.closures.get(module, [module])))


def _files_of(s: "ScanFacts", modules: list[str]) -> str:
    """``(path, mode, blob)`` of every file of ``modules``, as text."""
    return json.dumps(sorted((f.path, f.entry.mode, f.entry.oid) for m in modules
                             for f in s.inv.files_by_module.get(m, [])))


def _module_scope(s: "ScanFacts") -> str:
    """What every module key of the scan shares (made once per process): diting's code, the repository
    id, the build files, every module's namespace, the rules, the application annotations, the file
    size budget and the libraries' versions."""
    got = s.memo.get("kept_module_scope")
    if got is None:
        from diting.ir.canonical import dumps
        got = s.memo["kept_module_scope"] = cache_key(
            code_digest(), s.repo_id, _build_files(s), json.dumps(sorted(s.inv.ns.items())),
            dumps(s.rules.digest_entries()), json.dumps(sorted(s.apps)), str(s.options.max_file_bytes),
            json.dumps(library_versions()))
    return got


def _build_files(s: "ScanFacts") -> str:
    """``(path, blob)`` of every build file of the repository and of ``.mvn/maven.config`` (its user
    properties shape every module's model), as text (made once per process)."""
    got = s.memo.get("kept_build_files")
    if got is None:
        files = {(p, s.snapshot.by_path[p].oid) for mod in s.inv.model.modules.values()
                 for p in mod.build_inputs if p in s.snapshot.by_path}
        if s.inv.maven_config:
            files.add((s.inv.maven_config, s.inv.maven_config_blob or ""))
        got = s.memo["kept_build_files"] = json.dumps(sorted(files))
    return got


def outside_text(s: "ScanFacts") -> bytes:
    """What a scan reads from outside the repository, as bytes: the repository id, the options, the
    config snapshot, the inventory and the extra rule files (read once per process). A kept entry is
    used only when its old commit, scan id and placeholders occur nowhere in it
    (:func:`usable`): there the replacement could not tell them from text of the user's."""
    got = s.memo.get("outside_text")
    if got is None:
        from diting.userfiles import read_regular
        o = s.options
        parts = [s.repo_id.encode("utf-8", "surrogatepass"),
                 json.dumps([o.profiles, o.services, o.sql_dialects, o.config_dirs], default=str).encode()]
        files = [o.config_snapshot, o.inventory] + [f for d in o.rules_dirs for f in sorted(Path(d).glob("*.y*ml"))]
        for f in files:
            if f is not None:
                parts.append(read_regular(Path(f), 64 * 1024 * 1024) or b"")
        got = s.memo["outside_text"] = b"\0".join(parts)
    return got


def usable(s: "ScanFacts", *old: str) -> bool:
    """Whether none of ``old`` (a kept entry's commit, scan id, placeholders) occurs in
    :func:`outside_text`, as written or as it stands in JSON."""
    text = outside_text(s)
    return not any(o and (o.encode() in text or _json_text(o) in text) for o in old)


def kept_module(result: Any, commit: str, markers: tuple[str, str]) -> dict[str, Any]:
    """What the cache keeps of a chunk's records: the result, the commit and the scan's placeholder
    markers (scan id, scope) its encoded lines hold."""
    return {"result": result, "commit": commit, "markers": list(markers)}


def restamped_module(s: "ScanFacts", entry: Any, cls: type) -> Any | None:
    """The kept chunk result (an instance of ``cls``) with its commit and placeholder markers replaced
    by the scan's, or None when the entry is not of the expected shape or is not :func:`usable`."""
    from diting.ir.builder import EncodedSet
    commit, markers = s.commit, (s.placeholders.scan, s.placeholders.scope)
    try:
        result, old_commit, old = entry["result"], entry["commit"], entry["markers"]
        if not isinstance(result, cls) or not isinstance(result.encoded, EncodedSet) or not (
                isinstance(old_commit, str) and len(old) == 2 and all(isinstance(m, str) for m in old)):
            return None
    except (KeyError, TypeError):
        return None
    if not usable(s, old_commit, *old):
        return None
    pairs = [(a, b) for a, b in zip((*old, old_commit), (*markers, commit), strict=True) if a != b]
    if pairs:
        for lines in result.encoded.lines.values():
            for rid, line in lines.items():
                for a, b in pairs:
                    line = line.replace(a, b)
                lines[rid] = line
    return result


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


def kept_entry(files: dict[str, bytes], analysis_input: dict[str, Any], commit: str, scan_id: str, status: str,
               status_reason: str, counts: dict[str, int], sql_datasource: str | None) -> dict[str, Any]:
    """What the cache keeps of a written package (plain values only): its files but the analysis
    input and the manifest, which are made again, its analysis input as written (the config sources
    the probes read are in it), and what its result says."""
    return {"files": {n: d for n, d in files.items() if n not in ("analysis_input.json", "manifest.json")},
            "analysis_input": analysis_input, "commit": commit, "scan_id": scan_id, "status": status,
            "status_reason": status_reason, "counts": counts, "sql_datasource": sql_datasource}


def kept_analysis_input(s: "ScanFacts", entry: dict[str, Any], commit_fields: dict[str, Any]) -> dict[str, Any] | None:
    """The kept package's analysis input at this scan's commit (``commit_fields`` replace the kept
    ones), or None when the entry holds none or a config file it lists has another blob now (the
    probes read config sources the key cannot name before the package is assembled)."""
    ai = entry.get("analysis_input")
    if not isinstance(ai, dict) or not isinstance(ai.get("config_files"), list):
        return None
    for ref in ai["config_files"]:
        if not isinstance(ref, dict):
            return None
        got = s.snapshot.by_path.get(ref.get("path"))
        if got is None or got.oid != ref.get("blob"):
            return None
    return dict(ai, **commit_fields)


def restamped(s: "ScanFacts", entry: dict[str, Any], scan_id: str) -> dict[str, bytes] | None:
    """The kept files with the kept commit and scan id replaced by the scan's commit and ``scan_id``;
    None when the entry is not of the expected shape (its result's status and counts too) or is not
    :func:`usable`."""
    commit = s.commit
    try:
        old_commit, old_scan = entry["commit"].encode("ascii"), _json_text(entry["scan_id"])
        files = entry["files"]
        if not all(n in PACKAGE_FILES and isinstance(d, bytes) for n, d in files.items()):
            return None  # a package's own files only: nothing else is ever written from an entry
        if not isinstance(entry.get("counts"), dict) or not isinstance(entry.get("status"), str):
            return None
    except (KeyError, AttributeError, TypeError, UnicodeError):
        return None
    if not usable(s, entry["commit"], entry["scan_id"]):
        return None
    new_commit, new_scan = commit.encode("ascii"), _json_text(scan_id)
    return {n: d.replace(old_scan, new_scan).replace(old_commit, new_commit) for n, d in files.items()}


def _json_text(value: str) -> bytes:
    """``value`` as it stands inside a JSON string of a package file."""
    return json.dumps(value, ensure_ascii=False)[1:-1].encode("utf-8")
