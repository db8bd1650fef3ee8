"""``coverage.json`` of one package (docs/ir.md §10; the terms: docs/coverage.md §5).

Every term is counted from the package's own files and records, never as a
remainder: ``discovered = resolved + partial + failed + excluded`` is checked
by the model, not assumed. Dimensions a stage of this version does not
examine are present with zeros and ``not_examined`` saying why.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from diting.inventory.layout import BUILD, CONFIG, JAVA
from diting.inventory.services import PackagePlan
from diting.ir.builder import RecordSet
from diting.ir.canonical import loads as json_loads

if TYPE_CHECKING:
    from diting.probes.context import ProbeStats
    from diting.resolve.callgraph import CallGraphStats
    from diting.scan.facts import ScanFacts

#: dimensions filled by later stages, and why they are empty here
NOT_EXAMINED = {
    "applications": "counted over the graph of all packages of an estate, not inside one package",
    "cross_service_edges": "counted over the graph of all packages of an estate, not inside one package",
    "branch_ledger": "the package has no member body with a branch and no SQL statement with a conditional "
                     "fragment",
    "call_sites": "the package has no member body with a call",
}


def _empty(why: str) -> dict[str, Any]:
    return {"discovered": 0, "resolved": 0, "partial": 0, "failed": 0, "excluded": 0, "excluded_by_reason": {},
            "denominator_source": "not examined", "not_examined": [why]}


def parse_failed(state: Any) -> bool:
    """Whether a config file's :class:`~diting.scan.sources.ConfigFileState` (or None) records that the
    file itself did not parse (not a lossy decoding, not a node budget reached)."""
    return state is not None and state.problem not in (None, "lossy") and state.code != "BUDGET_EXHAUSTED"


def file_outcome(s: "ScanFacts", path: str, kind: str | None, excluded: str | None,
                 module_failed: bool, unloaded: frozenset[str] = frozenset()) -> tuple[str, str | None]:
    """``(term, reason)`` of one file: resolved, partial, failed or excluded (with its reason).
    ``unloaded``: config files the package's Spring configuration refused to load although they
    parsed as resources (a YAML tag Spring Boot's loader refuses in a file it imports): failed."""
    if excluded is not None:
        return "excluded", excluded
    if module_failed:
        return "failed", None
    if path in s.file_problems:
        return "failed", None
    if kind is None:  # a gitlink without a recorded problem cannot happen; be explicit anyway
        return "failed", None
    if kind == JAVA:
        facts = s.file_facts.get(path)
        if facts is None:
            return "failed", None
        if facts.errors or facts.orphans or facts.lossy:
            return "partial", None
        return "resolved", None
    if kind == CONFIG:
        cs = s.config_states.get(path)
        if cs is None:
            return "failed", None
        if path in unloaded and not parse_failed(cs):
            return "failed", None
        if cs.problem == "lossy" or cs.code == "BUDGET_EXHAUSTED":
            return "partial", None
        return ("failed", None) if cs.problem else ("resolved", None)
    if kind == BUILD:
        mod = s.inv.modules.get(path)
        if mod is None:  # a settings file, gradle.properties, a catalog or an applied script
            unread = path in s.file_problems or path in s.inv.model.unread_build_files
            return ("failed", None) if unread else ("resolved", None)
        return ("failed", None) if mod.failed else ("resolved", None)
    return "failed", None


def _unread_build(s: "ScanFacts", plan: PackagePlan) -> list[str]:
    """What the package's build scripts hold that a static reader cannot follow (GRADLE_NOT_STATIC),
    one note per construct: projects, plugins or dependencies it would add are not examined."""
    out = []
    for m in plan.modules:
        for f in s.inv.modules[m].findings:
            if f.code == "GRADLE_NOT_STATIC":
                out.append(f"{f.path}:{f.start_line}: build logic decided at build time (GRADLE_NOT_STATIC)")
    return sorted(set(out))


def dimension(terms: dict[str, int], reasons: dict[str, int], source: str, not_examined: list[str]) -> dict[str, Any]:
    """A dimension (docs/coverage.md §2) from its counts by term (resolved, partial, failed) and its excluded
    items by reason; ``discovered`` is their sum."""
    d = {"discovered": sum(terms.values()) + sum(reasons.values()), "resolved": terms.get("resolved", 0),
         "partial": terms.get("partial", 0), "failed": terms.get("failed", 0), "excluded": sum(reasons.values()),
         "excluded_by_reason": dict(sorted(reasons.items())), "denominator_source": source,
         "not_examined": not_examined}
    return d


#: config binding value_resolution → coverage term (docs/coverage.md §5)
_BINDING_TERM = {"RESOLVED": "resolved", "DEFAULT_ONLY": "partial", "AMBIGUOUS": "partial", "UNKNOWN": "failed"}


def _files(s: "ScanFacts", plan: PackagePlan) -> tuple[dict[str, Any], dict[str, str]]:
    """The ``files`` dimension of the package's modules (each file's term: :func:`file_outcome`) and
    its ``analysis_level``: ``path → "SYNTAX_ONLY"`` for a Java file with unresolved names."""
    files = {"discovered": 0, "resolved": 0, "partial": 0, "failed": 0, "excluded": 0}
    reasons: dict[str, int] = {}
    analysis_level: dict[str, str] = {}
    unloaded = frozenset(u[0] for u in plan.config.unreadable) if plan.config is not None else frozenset()
    for m in plan.modules:
        mod_failed = s.inv.modules[m].failed
        for summary in s.module_results[m].java.files:
            if summary.unresolved:
                analysis_level[summary.path] = "SYNTAX_ONLY"
        for f in s.inv.files_by_module.get(m, []):
            files["discovered"] += 1
            term, reason = file_outcome(s, f.path, f.kind, f.excluded, mod_failed and f.path != m, unloaded)
            files[term] += 1
            if reason:
                reasons[reason] = reasons.get(reason, 0) + 1
    dim = dict(files, excluded_by_reason=dict(sorted(reasons.items())),
               denominator_source="git ls-tree of the package's modules at the commit",
               not_examined=["files outside every Maven module and Gradle project are in no package"]
               + _unread_build(s, plan))
    return dim, analysis_level


def _listed_entries(entry_rids: list[str], probes: "ProbeStats",
                    calls: "CallGraphStats") -> list[tuple[str, str, bool, str | None]]:
    """Every entry of the package, ``(record id, discovery source, symbols resolved, stop reason)``:
    the MAIN entries and those the probes found. An entry whose reachability walk ran over a budget
    (its stop reason) stays in the denominator, as not resolved (partial)."""
    listed = [(rid, "MAIN_METHOD", True, None) for rid in entry_rids]
    listed += probes.entries
    return [(rid, src, ok and calls.reach.get(rid, (0, None))[1] is None, calls.reach.get(rid, (0, None))[1])
            for rid, src, ok, _ in listed]


def _config_keys(probes: "ProbeStats") -> dict[str, Any]:
    """The ``config_keys`` dimension: each config binding by its value resolution
    (:data:`_BINDING_TERM`), and key reads whose key does not fold as failed."""
    kterms: dict[str, int] = {}
    for resolution in probes.bindings.values():
        t = _BINDING_TERM[resolution]
        kterms[t] = kterms.get(t, 0) + 1
    kterms["failed"] = kterms.get("failed", 0) + probes.key_reads_failed
    return dimension(kterms, {}, "config bindings of the package (one per consumer and key) and "
                     "key reads whose key does not fold",
                     ["keys read through APIs no rule describes"])


def _branch_ledger(probes: "ProbeStats", calls: "CallGraphStats") -> dict[str, Any] | None:
    """The ``branch_ledger`` dimension over the branches of member bodies (``calls``) and the
    conditional fragments of SQL statements (``probes.sql``), excluded items by rule id; None when
    the package has neither."""
    sql = probes.sql
    sql_items = sql.ledger_items if sql is not None else 0
    sql_unresolved = sql.ledger_unresolved if sql is not None else 0
    ledger_excluded = dict(calls.ledger_excluded)
    for rule, n in (sql.ledger_excluded.items() if sql is not None else ()):
        ledger_excluded[rule] = ledger_excluded.get(rule, 0) + n
    if not (sql_items or calls.ledger_items):
        return None
    failed = sql_unresolved + calls.ledger_unresolved
    return dimension(
        {"resolved": sql_items + calls.ledger_items - failed - sum(ledger_excluded.values()), "failed": failed},
        ledger_excluded,
        "branches (if/else, switch cases, early returns, throws, catch/finally, loops, ambiguous dispatch) of "
        "the package's member bodies, and conditional fragments (<if>, <when>, <otherwise>) of its SQL statements; "
        "items a ledger exclusion rule matches are excluded by rule id",
        ["conditional expressions (?:) and short-circuit operators are not branches of the ledger"]
        + ([f"{calls.ledger_truncated} member(s) nest branches deeper than the extractor records"]
           if calls.ledger_truncated else []))


def package_coverage(s: "ScanFacts", plan: PackagePlan, rs: RecordSet, scan_id: str,
                     entry_rids: list[str], probes: "ProbeStats", calls: "CallGraphStats") -> dict[str, Any]:
    """The coverage document of one package; ``rs`` holds the package-level records (entries
    among them), ``entry_rids`` the MAIN entries, ``probes`` what the middleware probes counted and
    ``calls`` what the call graph and the branch ledger counted."""
    dims: dict[str, Any] = {k: _empty(v) for k, v in NOT_EXAMINED.items()}
    dims["files"], analysis_level = _files(s, plan)
    listed = _listed_entries(entry_rids, probes, calls)
    terms = {"resolved": sum(1 for e in listed if e[2]), "partial": sum(1 for e in listed if not e[2]),
             "failed": probes.entries_failed}
    dims["entries"] = dimension(terms, probes.entries_excluded,
                                 "MAIN methods of the root modules and entry declarations matched by the rules",
                                 ["entry forms no rule describes (add rules with --rules)"])
    dims["config_keys"] = _config_keys(probes)
    sql = probes.sql
    if sql is not None:
        dims["sql_statements"] = dimension(
            {"resolved": sql.parsed, "partial": sql.partial, "failed": sql.failed},
            dict(sql.excluded),
            "<select|insert|update|delete> elements (and <selectKey>) of the package's MyBatis mapper files, "
            "@Select/@Insert/@Update/@Delete/@SelectProvider mapper methods, MyBatis-Plus inherited statements a "
            "method of the package calls, SQL strings handed to JDBC/JdbcTemplate calls, and statements of iBatis "
            "<sqlMap> files (unsupported, failed)",
            ["MyBatis-Plus inherited statements no method calls; calls whose receiver type is not known statically "
             "(a lambda's Connection parameter, a generic base mapper); SQL built by code (SQL builders, "
             "MyBatis-Plus-Join wrappers) beyond what the rules fold"])
    ledger = _branch_ledger(probes, calls)
    if ledger is not None:
        dims["branch_ledger"] = ledger
    sites = calls.sites
    if sum(sites[t] for t in ("resolved", "partial", "failed")) or calls.pruned_by_rule:
        dims["call_sites"] = dict(dimension(
            {t: sites[t] for t in ("resolved", "partial", "failed")}, dict(calls.pruned_by_rule),
            "call sites (calls, new, this(…)/super(…), method references run by a call) of the package's member "
            "bodies; pruned noise is excluded by rule id",
            ["calls inside field initializers; lambdas stored in a variable before they are submitted"]),
            resolved_external=sites["resolved_external"])
    dims["cross_service_edges"]["not_examined"].append(
        f"{probes.declared_unused} consumer declaration(s) of this package are never called (declared_unused); "
        f"{probes.consumers_not_loaded} are outside its Spring context (not loaded)")
    return {
        "schema_version": "0.1",
        "scan_id": scan_id,
        "dimensions": dims,
        "entries": [{"entry_ref": {"scan_id": scan_id, "record_id": rid}, "discovery_source": source,
                     "symbols_resolved": resolved, "branches_analysed": rid in calls.reach, "stop_reason": stop}
                    for rid, source, resolved, stop in sorted(listed)],
        "analysis_level": dict(sorted(analysis_level.items())),
        "pruned_by_rule": dict(sorted(calls.pruned_by_rule.items())),
    }


def coverage_problem(text: str | bytes) -> tuple[dict[str, Any] | None, str | None]:
    """``coverage.json`` text parsed and checked against the model, strictly ("7" is no count):
    terms add up to ``discovered``, reasons to ``excluded``, every dimension is stated, no count
    is beyond 64 bits. ``(document, None)``, or ``(None, why)``."""
    from pydantic import ValidationError

    from diting.ir.models import Coverage
    try:
        doc = json_loads(text)
        Coverage.model_validate(doc, strict=True)
        missing = sorted((set(NOT_EXAMINED) | {"entries", "files", "sql_statements", "config_keys"})
                         - set(doc["dimensions"]))
        if missing:  # a package states every dimension, examined or not (docs/coverage.md §2)
            return None, f"dimension(s) {', '.join(missing)} missing"
        big = [k for d in doc["dimensions"].values() for k, v in d.items() if isinstance(v, int) and v >= 2 ** 63]
        if big:
            return None, f"{big[0]} is beyond a 64-bit count"
    except ValueError as exc:  # JSON and UTF-8 errors and pydantic's ValidationError (a ValueError) alike
        first = exc.errors()[0] if isinstance(exc, ValidationError) else None
        where_in = ".".join(str(x) for x in first["loc"]) if first else ""
        return None, (f"{where_in + ': ' if where_in else ''}{first['msg']}" if first else str(exc).splitlines()[0])
    return doc, None


def checked_coverage(text: str, where: str) -> dict[str, Any]:
    """The document of :func:`coverage_problem`; raises :class:`UserError` naming ``where`` for a
    report that fails it (a re-signed package passes the checksums but not this)."""
    from diting.errors import UserError
    doc, why = coverage_problem(text)
    if why is not None:
        raise UserError(f"{where}: not a valid coverage report ({why})")
    return doc
