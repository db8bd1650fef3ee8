"""``diting coverage``: the coverage report of packages or of a graph (docs/coverage.md).

The per-package dimensions are read from each package's ``coverage.json`` (counted from its records
at scan time). Over a graph the report fills the two dimensions a package cannot count:

* ``applications`` — the denominator is the inventory file when one is given (docs/coverage.md §3:
  the estate as its owners list it, not the repositories that happen to be scanned), else the
  services of the loaded packages. An application counts as resolved, partial or failed by its
  package's manifest status (COMPLETE / PARTIAL / FAILED); an inventory service with no package is
  failed (``no_package``); an inventory entry with an ``exclusion_reason`` is excluded with that
  reason; a ``lib:`` package (its recorded kind LIB, never read from the id) is excluded as
  ``module_not_deployed``; with an inventory, a package
  the inventory does not name is excluded as ``not_in_inventory``.
* ``cross_service_edges`` — one item per RPC, HTTP or MQ alignment row that has a source (a call
  or a send): RESOLVED → resolved, AMBIGUOUS → partial, UNRESOLVED → failed; consumer declarations
  nobody calls (their DECLARED_UNUSED diagnostics) are excluded as ``declared_unused``.

Catalogue differences (docs/coverage.md §6) list what the inventory, the packages and the edges disagree
on: inventory service without package, package without inventory entry, consumer with no provider
in the estate, provider nobody consumes, module not deployed.

Estate totals of the per-package dimensions are sums over the packages (a module several services
contain counts once per package: each package is a separate analysis).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from diting import __version__
from diting.coverage.model import DIMENSIONS, TERMS
from diting.coverage.package import dimension
from diting.errors import UserError
from diting.ir.canonical import loads as json_loads

GRAPH_DIMENSIONS = ("applications", "cross_service_edges")
EDGE_KINDS = ("RPC", "HTTP", "MQ")
_EDGE_TERM = {"RESOLVED": "resolved", "AMBIGUOUS": "partial", "UNRESOLVED": "failed"}
_STATUS_TERM = {"COMPLETE": "resolved", "PARTIAL": "partial", "FAILED": "failed"}


@dataclass
class _Pkg:
    """What the report needs of one package."""

    scan_id: str
    service_id: str
    label: str
    commit_sha: str
    status: str
    coverage: dict[str, Any]
    repo_id: str = ""
    profile_set: str = "default"
    analyzer_version: str | None = None
    commit_time: str | None = None
    #: the package's recorded kind (analysis_input.service.kind), never its id's prefix
    kind: str = "SERVICE"


@dataclass
class _Estate:
    """Packages plus the record counts the report draws (from files or from a graph)."""

    packages: list[_Pkg]
    unresolved: Counter = field(default_factory=Counter)  # (relation kind, status) → n
    diagnostics: Counter = field(default_factory=Counter)  # code → n
    declared_unused: int = 0
    graph: bool = False
    edges: list[dict[str, Any]] = field(default_factory=list)  # alignment rows with a source
    consumers_without_provider: list[dict[str, Any]] = field(default_factory=list)
    providers_without_consumer: list[dict[str, Any]] = field(default_factory=list)


def _empty(source: str, why: list[str]) -> dict[str, Any]:
    return dimension({}, {}, source, why)


def _dimension(items: list[tuple[str, str | None]], source: str, not_examined: list[str]) -> dict[str, Any]:
    """A dimension from its items ``(term, excluded reason)``: every term is a count of items."""
    terms = Counter(term for term, _ in items if term != "excluded")
    reasons = Counter(reason or "unspecified" for term, reason in items if term == "excluded")
    return dimension(dict(terms), dict(reasons), source, not_examined)


# ---------------------------------------------------------------- reading


def _from_packages(paths: list[Path], deep: bool = True) -> _Estate:
    from diting.coverage.package import checked_coverage
    from diting.demo import read_jsonl
    from diting.graph.store import package_profile_set, analysis_input, commit_time, package_kind
    from diting.ir.writer import package_dirs
    from diting.ir.verify import verify_packages
    dirs = package_dirs(paths)
    if not dirs:
        raise UserError("no IR package under " + ", ".join(str(p) for p in paths))
    est = _Estate([])
    seen: set[str] = set()
    for d, findings in zip(dirs, verify_packages(dirs, deep=deep), strict=True):
        if findings:
            raise UserError(f"{d}: the package does not verify ({len(findings)} finding(s), first: {findings[0]})")
        m = json_loads((d / "manifest.json").read_text(encoding="utf-8"))
        if m["scan_id"] in seen:
            continue
        seen.add(m["scan_id"])
        cov = checked_coverage((d / "coverage.json").read_text(encoding="utf-8"), str(d / "coverage.json"))
        ai = analysis_input(d)
        kind = package_kind(ai)
        if kind is None:
            raise UserError(f"{d}/analysis_input.json: service.kind is neither SERVICE nor LIB")
        est.packages.append(_Pkg(m["scan_id"], m["service_id"], "", m["commit_sha"], m["status"], cov,
                                 m["repo_id"], package_profile_set(d, ai), m.get("analyzer_version"), commit_time(ai), kind))
        try:
            for r in read_jsonl(d / "relations.jsonl"):
                if r["resolution_status"] != "RESOLVED":
                    est.unresolved[(str(r["kind"]), str(r["resolution_status"]))] += 1
            for x in read_jsonl(d / "diagnostics.jsonl"):
                est.diagnostics[str(x["code"])] += 1
        except (KeyError, TypeError) as exc:  # re-signed records of the wrong shape
            raise UserError(f"{d}: a record is malformed ({type(exc).__name__}: {exc}); 'diting verify --deep' "
                            "names it") from exc
    est.declared_unused = est.diagnostics.get("DECLARED_UNUSED", 0)
    return est


def _from_graph(con) -> _Estate:
    from diting.coverage.package import checked_coverage
    cur = "scan_id IN (SELECT scan_id FROM packages WHERE is_current)"
    est = _Estate([], graph=True)
    docs = dict(con.execute(f"SELECT scan_id, CAST(document AS VARCHAR) FROM coverage WHERE {cur}").fetchall())
    # a graph an older diting built has no commit_time column: its commits' times are unknown here
    timed = con.execute("SELECT count(*) FROM information_schema.columns WHERE table_schema = 'main' AND "
                        "table_name = 'packages' AND column_name = 'commit_time'").fetchone()[0]
    for scan_id, service_id, label, commit, status, repo_id, profiles, version, committed, kind in con.execute(
            "SELECT scan_id, service_id, label, commit_sha, status, repo_id, profile_set, analyzer_version, "
            f"{'commit_time' if timed else 'NULL'}, kind FROM packages WHERE is_current "
            "ORDER BY service_id, label, scan_id").fetchall():
        if docs.get(scan_id) is None:
            raise UserError(f"the graph holds no coverage report for {scan_id}; rebuild it with 'diting graph build'")
        cov = checked_coverage(docs[scan_id], f"the coverage report of {scan_id} in the graph")
        est.packages.append(_Pkg(scan_id, service_id, label, commit, status, cov, repo_id or "", profiles, version,
                                 committed, kind))
    for kind, status, n in con.execute(f"SELECT kind, resolution_status, count(*) FROM relations WHERE {cur} AND "
                                       "resolution_status <> 'RESOLVED' GROUP BY ALL").fetchall():
        est.unresolved[(kind, status)] = n
    for code, n in con.execute(f"SELECT code, count(*) FROM diagnostics WHERE {cur} GROUP BY ALL").fetchall():
        est.diagnostics[code] = n
    est.declared_unused = est.diagnostics.get("DECLARED_UNUSED", 0)
    cols = ["edge_kind", "urn", "src_service", "dst_service", "resolution_status", "match_basis"]
    kinds = ", ".join(f"'{k}'" for k in EDGE_KINDS)
    for row in con.execute(f"SELECT {', '.join(cols)} FROM alignment WHERE edge_kind IN ({kinds}) "
                           "ORDER BY ALL").fetchall():
        r = dict(zip(cols, row))
        if r["src_service"] is not None:
            est.edges.append(r)
        if r["resolution_status"] == "UNRESOLVED" and (
                r["edge_kind"] in ("RPC", "HTTP") and r["dst_service"] is None or r["match_basis"] == "NO_PUBLISHER"):
            est.consumers_without_provider.append(r)
    sends: dict[tuple[str, str], int] = {}
    for svc, urn, msg, kind, sig in con.execute(
            "SELECT f.service_id, f.urn, f.message, e.kind, CAST(e.signature AS VARCHAR) FROM graph_findings f "
            "LEFT JOIN entities e ON e.scan_id = f.subject_refs[1].scan_id AND e.record_id = f.subject_refs[1].record_id "
            "WHERE f.code = 'ORPHAN_ENTRY' ORDER BY ALL").fetchall():
        if kind == "CONTRACT":  # named with its signature: overloads are separate providers
            params = ",".join(json.loads(sig or "[]"))
            est.providers_without_consumer.append({"service_id": svc, "urn": f"{urn}({params})", "message": msg})
        else:  # a topic nobody subscribes to: once per topic, however many methods send it
            sends[(svc, urn or "?")] = sends.get((svc, urn or "?"), 0) + 1
    for (svc, urn), n in sorted(sends.items()):
        est.providers_without_consumer.append({"service_id": svc, "urn": urn, "message": f"{svc} publishes {urn} "
                                               f"({n} send(s)); no current package subscribes to it"})
    return est


# ---------------------------------------------------------------- computing


def _sum(dims: list[dict[str, Any]], count: int) -> dict[str, Any]:
    """Estate total of one per-package dimension over ``count`` packages."""
    total = _empty(f"sum over {count} service package(s) of their coverage.json, lib: packages not included "
                   f"({dims[0]['denominator_source']})" if dims else "no service package", [])
    reasons: Counter = Counter()
    external = None
    notes: Counter = Counter()
    for d in dims:
        total["discovered"] += d["discovered"]
        for t in TERMS:
            total[t] += d[t]
        reasons.update(d["excluded_by_reason"])
        if d.get("resolved_external") is not None:
            external = (external or 0) + d["resolved_external"]
        notes.update(dict.fromkeys(d["not_examined"], 1))
    total["excluded_by_reason"] = dict(sorted(reasons.items()))
    # a note some packages make holds for those only: say how many
    total["not_examined"] = [n if k == len(dims) else f"{n} ({k} of {len(dims)} packages)"
                             for n, k in sorted(notes.items())]
    if external is not None:
        total["resolved_external"] = external
    if dims and all(d["denominator_source"] == "not examined" for d in dims):
        total["denominator_source"] = "not examined"
    return total


def _matching(pkgs: list[_Pkg], entry: dict[str, Any]) -> list[_Pkg]:
    """The packages an inventory entry names: its repo_id and profile, where it gives them, must agree."""
    out = []
    for p in pkgs:
        if entry.get("repo_id") and entry["repo_id"] != p.repo_id:
            continue
        if entry.get("profile") and entry["profile"] not in p.profile_set.split(","):
            continue
        out.append(p)
    return out


def _applications(est: _Estate, inventory) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
    by_service: dict[str, list[_Pkg]] = {}
    for p in est.packages:
        by_service.setdefault(p.service_id, []).append(p)
    apps: list[dict[str, Any]] = []
    diffs: list[dict[str, Any]] = []
    from diting.inventory.services import unreserved_service_id
    # an inventory id with the reserved prefix names the service the scan renamed (lib:x → lib_x)
    named = {unreserved_service_id(e["service_id"]): e for e in inventory.entries} if inventory is not None else {}

    def app(service_id: str, term: str, reason: str | None, pkgs: list[_Pkg]) -> None:
        apps.append({"service_id": service_id, "term": term, "reason": reason,
                     "scan_ids": sorted(p.scan_id for p in pkgs)})

    for sid in sorted(set(by_service) | set(named)):
        libs = [p for p in by_service.get(sid, []) if p.kind == "LIB"]
        pkgs = [p for p in by_service.get(sid, []) if p.kind != "LIB"]
        entry = named.get(sid)
        if entry is not None and entry.get("exclusion_reason"):
            app(sid, "excluded", entry["exclusion_reason"], pkgs + libs)
        elif libs and not pkgs:
            app(sid, "excluded", "module_not_deployed", libs)
            diffs.append({"kind": "MODULE_NOT_DEPLOYED", "service_id": sid, "subject": sid,
                          "detail": "in-repo modules no deployable unit contains (a lib: package)"})
        elif entry is not None and not _matching(pkgs, entry):
            app(sid, "failed", "no_package", [])
            wanted = ", ".join(f"{k} {entry[k]}" for k in ("repo_id", "profile") if entry.get(k))
            diffs.append({"kind": "INVENTORY_WITHOUT_PACKAGE", "service_id": sid, "subject": sid,
                          "detail": "the inventory names the service; no package of it is loaded" +
                                    (f" with {wanted} ({len(pkgs)} of other repositories or profiles)"
                                     if pkgs else "")})
        elif inventory is not None and entry is None:
            app(sid, "excluded", "not_in_inventory", pkgs)
            diffs.append({"kind": "PACKAGE_WITHOUT_INVENTORY", "service_id": sid, "subject": sid,
                          "detail": f"{len(pkgs)} package(s) of a service the inventory does not name"})
        else:
            pkgs = _matching(pkgs, entry) if entry is not None else pkgs
            # the least complete of the service's packages (a labelled gray package included)
            worst = max(pkgs, key=lambda p: list(_STATUS_TERM).index(p.status) if p.status in _STATUS_TERM else 3)
            term = _STATUS_TERM.get(worst.status, "failed")
            app(sid, term, None if term == "resolved" else f"package status {worst.status}", pkgs)
    if inventory is not None:
        source = f"services of the inventory file (sha256 {inventory.sha256[:12]}) and of the loaded packages"
        why = []
    else:
        source = "services of the loaded packages (no --inventory given)"
        why = ["services that have no package are unknown without an inventory file (--inventory)"]
    items = [(a["term"], a["reason"] if a["term"] == "excluded" else None) for a in apps]
    return _dimension(items, source, why), apps, diffs


def _edges(est: _Estate) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    if not est.graph:
        return _empty("not examined", ["counted over a graph (diting coverage --db): aligning calls and "
                                       "messages needs every package of the estate"]), []
    items = [("excluded", "same_service") if e["src_service"] == e["dst_service"] else
             (_EDGE_TERM.get(e["resolution_status"], "failed"), None) for e in est.edges]
    items += [("excluded", "declared_unused")] * est.declared_unused
    dim = _dimension(items, "RPC, HTTP and MQ alignment rows with a source (a call or a send) over the current "
                            "packages (a row within one service excluded as same_service), and consumer "
                            "declarations nobody calls (declared_unused)",
                     ["HTTP calls by address (URL_ONLY rows count as failed) and Spring application events "
                      "are not aligned; a gateway route to every registered service (discovery locator, Zuul's "
                      "default) draws no edge (UNDETERMINED_DYNAMIC_EDGE)",
                      "shared tables (DATA rows) are reported as findings, not as edges"])
    seen: set[tuple[str, str]] = set()
    diffs = []
    for e in est.consumers_without_provider:
        svc = e["src_service"] or e["dst_service"]
        if (svc, e["urn"] or "?") in seen:
            continue
        seen.add((svc, e["urn"] or "?"))
        what = "subscription; no current package publishes what it admits" if e["match_basis"] == "NO_PUBLISHER" \
            else f"consumer; no current package provides it ({e['match_basis']})"
        diffs.append({"kind": "CONSUMER_WITHOUT_PROVIDER", "service_id": svc, "subject": e["urn"] or "?",
                      "detail": f"{e['edge_kind']} {what}"})
    diffs += [{"kind": "PROVIDER_WITHOUT_CONSUMER", "service_id": f["service_id"], "subject": f["urn"] or "?",
               "detail": f["message"]} for f in est.providers_without_consumer]
    return dim, diffs


def build_report(est: _Estate, inventory=None, inventory_path: Path | None = None) -> dict[str, Any]:
    """The report document (``coverage-report.schema.json``) of an estate read by
    :func:`coverage_of_packages` or :func:`coverage_of_graph`."""
    services = []
    for p in sorted(est.packages, key=lambda p: (p.service_id, p.label, p.scan_id)):
        dims = {d: p.coverage["dimensions"][d] for d in DIMENSIONS if d in p.coverage["dimensions"]}
        services.append({"service_id": p.service_id, "label": p.label, "kind": p.kind, "scan_id": p.scan_id,
                         "repo_id": p.repo_id, "commit_sha": p.commit_sha, "commit_time": p.commit_time,
                         "analyzer_version": p.analyzer_version, "status": p.status, "dimensions": dims})
    # the estate is its deployables: lib: packages keep their own figures but are not summed
    deployed = [s for s in services if s["kind"] == "SERVICE"]
    totals = {d: _sum([s["dimensions"][d] for s in deployed if d in s["dimensions"]], len(deployed))
              for d in DIMENSIONS if d not in GRAPH_DIMENSIONS}
    apps_dim, apps, diffs = _applications(est, inventory)
    edges_dim, edge_diffs = _edges(est)
    totals["applications"], totals["cross_service_edges"] = apps_dim, edges_dim
    unresolved: dict[str, dict[str, int]] = {}
    for (kind, status), n in sorted(est.unresolved.items()):
        unresolved.setdefault(kind, {})[status] = n
    for e in est.edges:
        if e["resolution_status"] != "RESOLVED":
            row = unresolved.setdefault(f"edge:{e['edge_kind']}", {})
            row[e["resolution_status"]] = row.get(e["resolution_status"], 0) + 1
    order = {k: i for i, k in enumerate(("INVENTORY_WITHOUT_PACKAGE", "PACKAGE_WITHOUT_INVENTORY",
                                         "CONSUMER_WITHOUT_PROVIDER", "PROVIDER_WITHOUT_CONSUMER",
                                         "MODULE_NOT_DEPLOYED"))}
    all_diffs = sorted(diffs + edge_diffs, key=lambda d: (order[d["kind"]], d["service_id"] or "", d["subject"]))
    return {
        "schema_version": "0.1",
        "source": {"graph": est.graph, "packages": len(est.packages), "diting_version": __version__,
                   "inventory": {"path": str(inventory_path), "sha256": inventory.sha256} if inventory else None},
        "dimensions": {d: totals[d] for d in DIMENSIONS},
        "services": services,
        "applications": apps,
        "catalogue_differences": all_diffs,
        "unresolved_by_kind": dict(sorted(unresolved.items())),
        "diagnostics_by_code": dict(sorted(est.diagnostics.items())),
    }


def _inventory(path: Path | None):
    if path is None:
        return None
    from diting.inventory.inventory_file import InventoryFile
    return InventoryFile.load(path)


def coverage_of_packages(paths: list[Path], inventory: Path | None = None, deep: bool = True) -> dict[str, Any]:
    """The report of the packages under ``paths`` (each verified first, every record unless not
    ``deep``; a package that does not verify is a :class:`UserError`). ``cross_service_edges``
    stays not examined: it needs a graph."""
    inv = _inventory(inventory)
    return build_report(_from_packages(paths, deep), inv, inventory)


def coverage_of_graph(db: Path, inventory: Path | None = None) -> dict[str, Any]:
    """The report of the current packages of a graph database, with ``applications`` and
    ``cross_service_edges`` filled. Raises :class:`UserError` for a database that cannot be read."""
    from diting.graph.store import with_graph
    inv = _inventory(inventory)
    return build_report(with_graph(db, _from_graph), inv, inventory)
