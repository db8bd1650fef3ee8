"""An independent recount of a package's coverage.json from its records (and, for files, from git).

Written apart from ``diting.coverage`` and the scan's tallies: each term is a count of items found
in the package's records — never a remainder of other terms — so a test can require the report's
numbers to equal these. The one term with no record per item is ``call_sites.excluded``: pruned
noise calls (trivial accessors, logging) are deliberately not recorded, and are counted only in
``pruned_by_rule``; the recount takes that map as the item list and checks its sum.
"""

from __future__ import annotations

import functools
import json
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any


def _jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def load(pkg: Path) -> dict[str, Any]:
    """Every file of a package, parsed."""
    return {
        "manifest": json.loads((pkg / "manifest.json").read_text(encoding="utf-8")),
        "input": json.loads((pkg / "analysis_input.json").read_text(encoding="utf-8")),
        "coverage": json.loads((pkg / "coverage.json").read_text(encoding="utf-8")),
        "entities": _jsonl(pkg / "entities.jsonl"),
        "relations": _jsonl(pkg / "relations.jsonl"),
        "diagnostics": _jsonl(pkg / "diagnostics.jsonl"),
        "bindings": _jsonl(pkg / "config_bindings.jsonl"),
        "ledger": _jsonl(pkg / "branch_ledger.jsonl"),
        "segments": _jsonl(pkg / "source_segments.jsonl"),
    }


def _terms(items: list[tuple[str, str | None]]) -> dict[str, Any]:
    t = Counter(term for term, _ in items)
    return {"discovered": len(items), "resolved": t["resolved"], "partial": t["partial"], "failed": t["failed"],
            "excluded": t["excluded"],
            "excluded_by_reason": dict(sorted(Counter(r for term, r in items if term == "excluded").items()))}


def _affected(d: dict[str, Any]) -> set[str]:
    return {r["record_id"] for r in d["affected_refs"]}


def entries(p: dict[str, Any]) -> dict[str, Any]:
    """ENTRY entities (partial when a TOPIC_UNRESOLVED or a reach BUDGET_EXHAUSTED names them),
    ENTRY_UNRESOLVED diagnostics (failed), ENTRY_NOT_LOADED diagnostics (excluded; the reason by
    package kind)."""
    lib = p["input"]["service"]["kind"] == "LIB"
    partial_rids = set()
    for d in p["diagnostics"]:
        if d["code"] in ("TOPIC_UNRESOLVED", "BUDGET_EXHAUSTED"):
            partial_rids |= _affected(d)
    items = [("partial" if e["record_id"] in partial_rids else "resolved", None)
             for e in p["entities"] if e["kind"] == "ENTRY"]
    items += [("failed", None) for d in p["diagnostics"] if d["code"] == "ENTRY_UNRESOLVED"]
    items += [("excluded", "module_not_deployed" if lib else "not_loaded_by_context")
              for d in p["diagnostics"] if d["code"] == "ENTRY_NOT_LOADED"]
    return _terms(items)


_STATUS = {"RESOLVED": "resolved", "AMBIGUOUS": "partial", "UNRESOLVED": "failed"}


def branch_ledger(p: dict[str, Any]) -> dict[str, Any]:
    """Ledger items by resolution status; an item with an exclusion_rule_id is excluded by that rule."""
    return _terms([("excluded", i["exclusion_rule_id"]) if i.get("exclusion_rule_id") else
                   (_STATUS[i["resolution_status"]], None) for i in p["ledger"]])


def sql_statements(p: dict[str, Any]) -> dict[str, Any]:
    """SQL_STATEMENT entities by parse_status, statement-less SQL_UNSUPPORTED diagnostics (an iBatis
    statement, a statement of a namespace that is no Java name), SQL_DUPLICATE_ID and
    SQL_OTHER_DATABASE diagnostics (excluded)."""
    stmts = {e["record_id"]: e for e in p["entities"] if e["kind"] == "SQL_STATEMENT"}
    term = {"PARSED": "resolved", "PARTIAL": "partial", "PARSE_FAILED": "failed", "UNSUPPORTED": "failed"}
    items = [(term[e["attributes"]["parse_status"]], None) for e in stmts.values()]
    for d in p["diagnostics"]:
        if d["code"] == "SQL_UNSUPPORTED" and not (_affected(d) & set(stmts)):
            items.append(("failed", None))
        elif d["code"] == "SQL_DUPLICATE_ID":
            items.append(("excluded", "duplicate_id"))
        elif d["code"] == "SQL_OTHER_DATABASE":
            items.append(("excluded", "other_database_id"))
    return _terms(items)


def config_keys(p: dict[str, Any]) -> dict[str, Any]:
    """Config bindings by value_resolution, and unresolved READS of a config key expression that does
    not fold."""
    term = {"RESOLVED": "resolved", "DEFAULT_ONLY": "partial", "AMBIGUOUS": "partial", "UNKNOWN": "failed"}
    items = [(term[b["value_resolution"]], None) for b in p["bindings"]]
    # a config read names its scheme (config, ducc, …); a cache read names its protocol instead
    items += [("failed", None) for r in p["relations"] if r["kind"] == "READS" and r["resolution_status"] ==
              "UNRESOLVED" and {"key_expression", "scheme"} <= set(r.get("match_keys") or {})]
    return _terms(items)


def call_sites(p: dict[str, Any]) -> dict[str, Any]:
    """CALLS relations by resolution status (resolved_external: RESOLVED to an EXTERNAL method);
    the pruned sites from ``pruned_by_rule`` (see the module docstring)."""
    external = {e["record_id"] for e in p["entities"] if e["kind"] == "EXTERNAL"}
    calls = [r for r in p["relations"] if r["kind"] == "CALLS"]
    items = [(_STATUS[r["resolution_status"]], None) for r in calls]
    for rule, n in p["coverage"]["pruned_by_rule"].items():
        items += [("excluded", rule)] * n
    out = _terms(items)
    out["resolved_external"] = sum(1 for r in calls if r["resolution_status"] == "RESOLVED"
                                   and r["target_ref"]["record_id"] in external)
    return out


# ---------------------------------------------------------------- files, from git


_FAILED_FILE_CODES = {"FILE_UNREADABLE", "FILE_TOO_LARGE"}


def _listing(repo: Path, tree: str, recursive: bool) -> list[tuple[str, str, str, str]] | None:
    """``(mode, type, oid, name)`` of ``git ls-tree`` of ``tree``, None when git cannot list it."""
    proc = subprocess.run(["git", "-C", str(repo), "ls-tree", *(["-r"] if recursive else []), "-z", "--full-tree",
                           tree], capture_output=True)
    if proc.returncode:
        return None
    rows = []
    for rec in proc.stdout.decode("utf-8", "surrogateescape").split("\0"):
        if rec:
            meta, path = rec.split("\t", 1)
            rows.append((*meta.split(" "), path))
    return rows


def _ls_tree(repo: Path, commit: str) -> list[tuple[str, str]]:
    """``(mode, path)`` of every entry of the commit's tree; the mode is ``refused`` for an entry git
    would not check out (an absolute path; an empty, ``.``, ``..`` or ``.git`` segment; a path two
    entries share), ``unlisted`` for a subtree git cannot list (walked level by level when the
    recursive listing fails)."""
    def walk(tree: str, prefix: str) -> list[tuple[str, str]]:
        out = []
        for mode, typ, oid, name in _listing(repo, tree, False) or []:
            if typ != "tree":
                out.append((mode, prefix + name))
            elif _listing(repo, oid, False) is None:
                out.append(("unlisted", prefix + name))
            else:
                out += walk(oid, prefix + name + "/")
        return out
    listed = _listing(repo, commit, True)
    rows = [(mode, path) for mode, _, _, path in listed] if listed is not None else walk(commit, "")
    twice = {path for path, n in Counter(path for _, path in rows).items() if n > 1}
    return [("refused" if path in twice or path.startswith("/") or
             any(seg in ("", ".", "..") or seg.lower() == ".git" for seg in path.split("/")) else mode, path)
            for mode, path in rows]


def _reason(rel: str) -> str | None:
    """The exclusions of docs/scanning.md §6 for a module-relative path (written here from the page's words)."""
    parts = rel.split("/")
    if parts[0] in ("target", "build"):
        return "build_output"
    if parts[0] == "buildSrc":
        return "build_logic"
    dirs = parts[:-1]
    if ".mvn" in dirs:
        return "maven_wrapper"
    if ".gradle" in dirs or dirs[:2] == ["gradle", "wrapper"]:
        return "gradle_wrapper"
    if "generated-sources" in dirs or "generated-test-sources" in dirs:
        return "generated_sources"
    for i in range(len(dirs) - 1):
        if dirs[i] == "src" and "test" in dirs[i + 1].lower():
            return "test_source"
    return None


def _dir(pom: str) -> str:
    return pom.rsplit("/", 1)[0] if "/" in pom else ""


def files(p: dict[str, Any], repo: Path, module_dirs: frozenset[str] = frozenset()) -> dict[str, Any]:
    """Every blob of the package's modules at the commit (git ls-tree; a file belongs to the module
    whose directory is its longest prefix among all modules of the repository), classified: excluded
    by the path rules of docs/scanning.md §6 or because diting does not read its kind; failed when a file diagnostic
    (unreadable, too large, a module whose POM failed) names it or when a problem diagnostic names it
    and no segment was recorded from it; partial when a problem diagnostic names it and segments were;
    resolved when no diagnostic names it."""
    modules = {m["build_file"]: m for m in p["input"]["modules"]}
    mod_entities = {e["attributes"]["build_file"]: e for e in p["entities"] if e["kind"] == "MODULE"}
    build_files = {b["path"] for b in p["input"]["build_inputs"]}
    owned = _owned(str(repo), p["manifest"]["commit_sha"],
                   frozenset(e["attributes"]["dir"] for e in mod_entities.values()) | module_dirs)
    # segments a fact cites (a diagnostic's own evidence is no fact extracted from the file)
    diag_only = {r["record_id"] for d in p["diagnostics"] for r in d.get("evidence_refs") or []}
    diag_only -= {r["record_id"] for rec in (*p["entities"], *p["relations"], *p["bindings"], *p["ledger"])
                  for r in rec.get("evidence_refs") or []}
    seg_paths = Counter(s["locator"]["path"] for s in p["segments"] if s["record_id"] not in diag_only)
    named: dict[str, set[str]] = {}
    for d in p["diagnostics"]:
        for path in _paths_named(d):
            named.setdefault(path, set()).add(d["code"])
    items: list[tuple[str, str | None]] = []
    for pom in sorted(modules):
        attrs = mod_entities.get(pom, {}).get("attributes", {})
        owner = attrs.get("dir", _dir(pom))
        for mode, path in owned.get(owner, []):
            reason = _file_exclusion(mode, path, owner, pom, attrs, build_files)
            if reason is not None:
                items.append(("excluded", reason))
                continue
            codes = named.get(path, set())
            if mode in ("160000", "unlisted") or codes & _FAILED_FILE_CODES or attrs.get("failed"):
                items.append(("failed", None))
            elif codes:
                items.append(("partial" if seg_paths.get(path) else "failed", None))
            else:
                items.append(("resolved", None))
    return _terms(items)


def _file_exclusion(mode: str, path: str, owner: str, pom: str, attrs: dict[str, Any],
                    build_files: set[str]) -> str | None:
    if mode == "refused":
        return "refused_path"
    if mode == "120000":
        return "symlink"
    if mode == "160000":
        return None
    rel = path[len(owner) + 1:] if owner else path
    reason = _reason(rel + "/-" if mode == "unlisted" else rel)  # a subtree: what its files would be
    if reason is not None or mode == "unlisted":
        return reason
    if path == pom or path in build_files:
        return None
    if path.endswith((".kt", ".kts")) and not path.endswith(".gradle.kts"):
        return "kotlin_source"
    src_roots = attrs.get("source_roots") or [f"{owner}/src/main/java".lstrip("/")]
    res_roots = attrs.get("resource_roots") or [f"{owner}/src/main/resources".lstrip("/")]

    def under(roots: list[str]) -> bool:
        return any(not r or path.startswith(r + "/") for r in roots)
    if path.endswith(".java"):
        return None if under(src_roots) else "outside_source_root"
    spring_list = "META-INF/spring" in path and path.endswith(("spring.factories", ".imports"))
    if path.endswith((".properties", ".yml", ".yaml", ".xml")) or spring_list:
        webapp = f"{owner}/src/main/webapp".lstrip("/")
        return None if under(res_roots) or (path.endswith(".xml") and under([webapp])) else "outside_source_root"
    return "not_analyzed_type"


_BUILD_NAMES = ("pom.xml", "build.gradle", "build.gradle.kts", "settings.gradle", "settings.gradle.kts")


@functools.lru_cache(maxsize=8)
def _owned(repo: str, commit: str, package_dirs: frozenset[str] = frozenset()) -> dict[str, list[tuple[str, str]]]:
    """Module directory → ``(mode, path)`` of the blobs it owns at the commit (longest prefix)."""
    tree = _ls_tree(Path(repo), commit)
    # the repository's module directories: every pom.xml and Gradle script outside source trees and
    # build output, and the package's own module directories (a Gradle project needs no script)
    dirs = {_dir(path) for mode, path in tree if mode != "refused" and path.rsplit("/", 1)[-1] in _BUILD_NAMES
            and "src" not in path.split("/")[:-1] and _reason(path) is None} | set(package_dirs)
    out: dict[str, list[tuple[str, str]]] = {}
    for mode, path in tree:
        d = path
        while True:
            d = d.rsplit("/", 1)[0] if "/" in d else ""
            if d in dirs:
                out.setdefault(d, []).append((mode, path))
                break
            if not d:
                break
    return out

_FILE_CODES = {"FILE_UNREADABLE", "FILE_TOO_LARGE", "PARSE_ERROR", "ENCODING_FALLBACK"}


def _paths_named(d: dict[str, Any]) -> list[str]:
    """The file a file-level diagnostic is about: its message starts with the path."""
    if d["code"] not in _FILE_CODES:
        return []
    head = d["message"].split(" ", 1)[0].rstrip(":")
    return [head] if "/" in head or "." in head else []


def recount(pkg: Path, repo: Path | None, module_dirs: frozenset[str] = frozenset()) -> dict[str, dict[str, Any]]:
    """The recounted dimensions of ``pkg`` (files only with ``repo``; ``module_dirs``: module
    directories of the scan's other packages, which own their files)."""
    p = load(pkg)
    out = {"entries": entries(p), "branch_ledger": branch_ledger(p), "sql_statements": sql_statements(p),
           "config_keys": config_keys(p), "call_sites": call_sites(p)}
    if repo is not None:
        out["files"] = files(p, repo, module_dirs)
    return out


def module_dirs_of(pkgs: list[Path]) -> frozenset[str]:
    """The module directories the MODULE records of ``pkgs`` name."""
    return frozenset(e["attributes"]["dir"] for pkg in pkgs for e in _jsonl(pkg / "entities.jsonl")
                     if e["kind"] == "MODULE")


def check(pkg: Path, repo: Path | None, module_dirs: frozenset[str] = frozenset()) -> None:
    """Raise AssertionError when a recounted term differs from ``pkg``'s coverage.json, or when a
    dimension's terms do not add up to ``discovered`` (or its reasons to ``excluded``)."""
    dims = json.loads((pkg / "coverage.json").read_text(encoding="utf-8"))["dimensions"]
    for name, d in dims.items():
        assert d["discovered"] == d["resolved"] + d["partial"] + d["failed"] + d["excluded"], (pkg, name, d)
        assert d["excluded"] == sum(d["excluded_by_reason"].values()), (pkg, name, d)
    if repo is not None and not (repo / ".git").exists() and not (repo / "HEAD").is_file():
        repo = None  # not a repository the recount can list
    for name, got in recount(pkg, repo, module_dirs).items():
        want = {k: dims[name].get(k, 0) for k in got}  # resolved_external is absent where nothing was examined
        assert got == want, f"{pkg.name} {name}: recounted {got}, coverage.json says {want}"
