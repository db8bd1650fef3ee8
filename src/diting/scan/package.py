"""Assembling and writing one package: its stages over its own fact store (docs/architecture.md §2.7, docs/ir.md).

A package is self-contained: the module record blueprints of every module in
the service's closure, the SERVICE entity (for a deployable), DEPENDS_ON
relations (to in-package modules or ARTIFACT entities), MAIN entries, config
evidence, and the diagnostics of every finding about its modules and files.
"""

from __future__ import annotations

import functools

from typing import TYPE_CHECKING, Any

from diting import __version__
from diting.coverage.package import package_coverage, parse_failed
from diting.errors import UserError
from diting.findings import Finding
from diting.ir import ids
from diting.ir.builder import EncodedSet, RecordSet, RefTo
from diting.ir.canonical import MAX_RECORD_BYTES, dumps, sha256_hex
from diting.ir.models import PACKAGE_FORMAT
from diting.ir.writer import manifest_for, package_dir_name, package_files, write_atomically
from diting.java.names import jdk_catalog
from diting.java.expressions import MAX_EXPR_DEPTH
from diting.config.sources import MAX_YAML_NODES
from diting.config.spring import MAX_PLACEHOLDER_DEPTH
from diting.inventory.services import PackagePlan
from diting.source.snapshot import MAX_LINE_BYTES
from diting.source.text import DETECTOR_NAME, DETECTOR_VERSION
from diting.ledger.java import JavaLedger
from diting.ledger.recovery import RecoveryEvidence
from diting.probes.context import ProbeContext, ProbeStats
from diting.probes.mechanisms import registered, run_mechanisms
from diting.probes.wrappers import WrapperSends
from diting.resolve.callgraph import CallGraphStats, PackageCallGraph
from diting.cache import ScanCache
from diting.scan import kept
from diting.scan.facts import FactStore, ScanFacts
from diting.scan.module_entity import finding_diagnostic
from diting.scan.options import PackageResult
from diting.scan.stages import Stage, describe, run_stages

if TYPE_CHECKING:
    from diting.scan.progress import Progress

MISSING = "missing"


def _missing(reason: str) -> dict[str, str]:
    """The explicit missing marker of the analysis input (never an empty value)."""
    return {MISSING: reason}


def tool_versions() -> dict[str, str]:
    """Exact versions of the libraries whose behaviour shapes the result (looked up once per process),
    and every registered emit mechanism (``mechanism:NAME`` → where its function is defined)."""
    return dict(_tool_versions(), **{f"mechanism:{m.name}": m.origin for m in registered()})


@functools.cache
def _tool_versions() -> dict[str, str]:
    return {"diting": __version__, "diting-package-format": str(PACKAGE_FORMAT), DETECTOR_NAME: DETECTOR_VERSION,
            **kept.library_versions()}


#: findings of an in-repo parent POM that shape its children's effective models
INHERITED_CODES = ("POM_PARENT_EXTERNAL", "POM_PARENT_MISSING")


class PackageFacts(FactStore):
    """The facts of one package's assembly. ``records`` is the package's record set: every stage
    that needs it adds records to it, so a stage that reads what an earlier one added needs a fact
    that stage makes (the count of records it added)."""

    # ---- given
    #: the scan's facts, frozen (the view of stage ``packages``)
    scan: ScanFacts
    plan: PackagePlan
    #: the key the package is kept under in the scan cache (None: the scan has no cache)
    kept_key: str | None

    # ---- modules: the records of every module in the package, merged
    records: RecordSet
    #: the modules' records, encoded once by stage ``modules`` of the scan
    module_records: EncodedSet
    #: module build file → its MODULE entity's record_id
    module_rids: dict[str, str]

    # ---- service: SERVICE, DEPENDS_ON, MAIN entries
    service_rid: str | None
    entry_rids: list[str]

    # ---- probes (with the SQL stage inside), call graph
    #: the package's probe context: Spring context, configuration, candidates (probes/context.py)
    probes: ProbeContext
    probe_stats: ProbeStats
    call_graph: PackageCallGraph
    call_stats: CallGraphStats

    # ---- what later stages add, counted (each reads the records of the stage before)
    wrapper_records: int
    ledger_records: int
    recovery_records: int
    finding_records: int

    # ---- written
    result: PackageResult


def merge_modules(p: PackageFacts, progress: "Progress | None") -> dict[str, Any]:
    """Merge the records of every module in the package (equal EXTERNAL entities unite their evidence)."""
    s, plan = p.scan, p.plan
    rs = RecordSet(s.repo_id, s.commit)
    rs.segment_cache = s.memo.setdefault("segment_cache", {})  # shared by this worker's packages
    encoded = EncodedSet()
    module_rids: dict[str, str] = {}
    for m in plan.modules:
        res = s.module_results[m]
        encoded.merge(res.encoded)
        module_rids[m] = res.module_rid
        rs.foreign_hashes.update(res.segment_hashes)
        ext = RecordSet(s.repo_id, s.commit)
        ext.entities = res.externals
        rs.merge(ext)
    return {"records": rs, "module_records": encoded, "module_rids": module_rids}


def service_records(p: PackageFacts, progress: "Progress | None") -> dict[str, Any]:
    """The SERVICE entity and its CONTAINS, every module's DEPENDS_ON, the MAIN entries of the roots."""
    s, plan, rs = p.scan, p.plan, p.records
    service_rid = _service(s, rs, plan, p.module_rids) if plan.kind == "SERVICE" else None
    _depends_on(s, rs, plan, p.module_rids)
    return {"service_rid": service_rid, "entry_rids": _mains(s, rs, plan)}


def run_probes(p: PackageFacts, progress: "Progress | None") -> dict[str, Any]:
    """The package's Spring context, then every emit mechanism and the SQL stage (probes/mechanisms.py)."""
    pc = ProbeContext(p.scan, p.plan, p.records, p.service_rid)
    return {"probes": pc, "probe_stats": run_mechanisms(pc)}


def build_call_graph(p: PackageFacts, progress: "Progress | None") -> dict[str, Any]:
    """CALLS relations of every call site, through the package's beans (resolve/callgraph.py)."""
    graph = PackageCallGraph(p.probes, set(p.module_records.lines["entities.jsonl"]))
    return {"call_graph": graph, "call_stats": graph.run()}


def wrapper_sends(p: PackageFacts, progress: "Progress | None") -> dict[str, Any]:
    """Sends of wrapper methods, per caller (probes/wrappers.py)."""
    return {"wrapper_records": _added(p.records, WrapperSends(p.probes, p.call_graph).run)}


def java_ledger(p: PackageFacts, progress: "Progress | None") -> dict[str, Any]:
    """Branch ledger items of the package's methods (ledger/java.py)."""
    return {"ledger_records": _added(p.records, JavaLedger(p.probes, p.call_graph).run)}


def recovery_evidence(p: PackageFacts, progress: "Progress | None") -> dict[str, Any]:
    """Idempotency, transactions, retry workers and NO_COMPENSATION (ledger/recovery.py)."""
    return {"recovery_records": _added(p.records, RecoveryEvidence(p.probes, p.call_graph).run)}


def package_findings(p: PackageFacts, progress: "Progress | None") -> dict[str, Any]:
    """Diagnostics of the plan's findings, inherited build findings and the configuration's problems."""
    return {"finding_records": _added(p.records, lambda: _findings(p.scan, p.records, p.plan, p.module_rids,
                                                                   p.service_rid))}


def write_package(p: PackageFacts, progress: "Progress | None") -> dict[str, Any]:
    """Analysis input, coverage, manifest; the package's files written atomically and kept in the cache.

    A scan without a cache keeps nothing (``scan/kept.py``)."""
    s, plan, rs = p.scan, p.plan, p.records
    analysis_input = _analysis_input(s, plan)  # after the probes: they add the config sources they read
    ai_bytes, digest, scan_id = _identity(analysis_input, plan)
    scope = ids.implementation_scope_for(plan.service_id, s.commit)
    coverage = package_coverage(s, plan, rs, scan_id, p.entry_rids, p.probe_stats, p.call_stats)
    encoded_pkg = rs.encode(s.placeholders)
    rs.clear()  # every record is encoded now; a large package keeps one form of it in memory
    encoded_pkg.merge(p.module_records)
    status, status_reason = _status(s, plan, encoded_pkg)
    coverage["package_status"] = {"status": status, "reason": status_reason}
    severities = encoded_pkg.severities
    files = package_files(encoded_pkg, s.placeholders, scan_id, scope, ai_bytes, coverage, consume=True)
    counts = {n.split(".")[0]: c for n, (_, c) in files.items() if n.endswith(".jsonl")}
    counts["errors"] = sum(1 for sev in severities.values() if sev == "ERROR")
    counts["warnings"] = sum(1 for sev in severities.values() if sev == "WARNING")
    blobs = {name: data for name, (data, _) in files.items()}
    result = _write(s, plan, blobs, digest, scan_id, status, counts, p.probe_stats.sql_datasource)
    if p.kept_key is not None:
        _cache(s).put(kept.PACKAGE, p.kept_key, kept.kept_entry(
            blobs, analysis_input, s.commit, scan_id, status, status_reason, counts, p.probe_stats.sql_datasource))
    return {"result": result}


def _identity(analysis_input: dict[str, Any], plan: PackagePlan) -> tuple[bytes, str, str]:
    """The analysis input's bytes, their sha256 (the input digest) and the scan id."""
    ai_bytes = (dumps(analysis_input) + "\n").encode("utf-8")
    digest = sha256_hex(ai_bytes)
    return ai_bytes, digest, ids.scan_id_for(plan.service_id, digest)


def _write(s: ScanFacts, plan: PackagePlan, blobs: dict[str, bytes], digest: str, scan_id: str, status: str,
           counts: dict[str, int], sql_datasource: str | None) -> PackageResult:
    """The manifest of ``blobs`` (every file but it) added, the package written atomically; its result.
    Raises :class:`UserError` when it cannot be written."""
    files = {n: (d, counts.get(n.split(".")[0], 1) if n.endswith(".jsonl") else 1) for n, d in blobs.items()}
    manifest = manifest_for(scan_id=scan_id, service_id=plan.service_id, repo_id=s.repo_id, commit_sha=s.commit,
                            input_digest=digest, status=status, files=files,
                            config_snapshot_refs=[s.config_snapshot.snapshot_id] if s.config_snapshot else None)
    blobs = dict(blobs, **{"manifest.json": (dumps(manifest) + "\n").encode("utf-8")})
    name = plan.dir_name or package_dir_name(plan.service_id, s.commit, plan.profiles)
    try:
        path, write_status = write_atomically(s.options.out, name, blobs)
    except OSError as exc:
        raise UserError(f"cannot write package {name} into {s.options.out}: {exc.strerror or exc}") from exc
    return PackageResult(plan.service_id, plan.kind, path, status, write_status, scan_id, counts,
                         [b.basis for b in plan.basis], list(plan.modules), sql_datasource)


def _cache(s: ScanFacts) -> ScanCache:
    """The scan's cache directory, as a package worker uses it."""
    return ScanCache.opened(s.options.cache)


def _replayed(s: ScanFacts, plan: PackagePlan, entry: Any) -> PackageResult | None:
    """The package of ``plan`` written from a kept ``entry`` (``scan/kept.py``), or None when
    the entry is not of the expected shape or a config file it read changed (it is then assembled)."""
    analysis_input = kept.kept_analysis_input(s, entry, _commit_fields(s)) if isinstance(entry, dict) else None
    if analysis_input is None:
        return None
    ai_bytes, digest, scan_id = _identity(analysis_input, plan)
    files = kept.restamped(s, entry, scan_id)
    if files is None:
        return None
    files["analysis_input.json"] = ai_bytes
    result = _write(s, plan, files, digest, scan_id, entry["status"], entry["counts"], entry.get("sql_datasource"))
    result.from_cache = True
    return result


#: what a package's stages begin from
PACKAGE_GIVEN = ("scan", "plan", "kept_key")

PACKAGE_STAGES: tuple[Stage, ...] = (
    Stage("modules", "merging module records", ("scan", "plan"), ("records", "module_records", "module_rids"),
          merge_modules),
    Stage("service", "service records", ("scan", "plan", "records", "module_rids"), ("service_rid", "entry_rids"),
          service_records),
    Stage("probes", "probes", ("scan", "plan", "records", "service_rid"), ("probes", "probe_stats"), run_probes),
    Stage("callgraph", "call graph", ("probes", "module_records"), ("call_graph", "call_stats"), build_call_graph),
    Stage("wrappers", "wrapper sends", ("records", "probes", "call_graph"), ("wrapper_records",), wrapper_sends),
    Stage("ledger", "branch ledger", ("records", "probes", "call_graph", "wrapper_records"), ("ledger_records",),
          java_ledger),
    Stage("recovery", "recovery evidence", ("records", "probes", "call_graph", "ledger_records"),
          ("recovery_records",), recovery_evidence),
    Stage("findings", "package findings", ("scan", "plan", "records", "module_rids", "service_rid"),
          ("finding_records",), package_findings),
    # encodes every record the stages before added
    Stage("write", "writing the package", ("scan", "plan", "kept_key", "records", "module_records", "entry_rids",
                                           "probe_stats",
                                           "call_stats", "wrapper_records", "ledger_records", "recovery_records",
                                           "finding_records"), ("result",), write_package),
)


def package_stage_graph() -> str:
    """A package's stage graph as text (what ``diting scan --stages`` prints after the scan's)."""
    return describe(PACKAGE_STAGES, PACKAGE_GIVEN, PackageFacts)


def assemble(s: ScanFacts, plan: PackagePlan) -> PackageResult:
    """Assemble and write the package of ``plan``: :data:`PACKAGE_STAGES` over a new
    :class:`PackageFacts` — or, when the scan's cache keeps a package of the same inputs
    (``scan/kept.py``), that package with this commit's identity. Raises
    :class:`~diting.errors.UserError` when the package cannot be written."""
    key = None
    if s.options.cache is not None:
        key = kept.package_key(s, plan, _analysis_input(s, plan))
        entry = _cache(s).get(kept.PACKAGE, key)
        if entry is not None and (done := _replayed(s, plan, entry)) is not None:
            return done
    p = PackageFacts()
    p.put(scan=s, plan=plan, kept_key=key)
    run_stages(PACKAGE_STAGES, p, None)
    return p.result


def _added(rs: RecordSet, step) -> int:
    """Run ``step()`` and return how many records it added to ``rs``."""
    before = rs.size()
    step()
    return rs.size() - before


def _artifact(s: "ScanFacts", rs: RecordSet, coordinate_ga: str, dep, ev: str, in_repo_module: str | None) -> str:
    rid = ids.entity_record_id("ARTIFACT", coordinate_ga)
    if rid in rs.entities:
        rs.add_evidence(rid, [ev])
        return rid
    attrs = {"group_id": dep.group_id, "artifact_id": dep.artifact_id, "version": dep.version,
             "version_source": dep.version_source, "type": dep.type, "classifier": dep.classifier or None}
    if in_repo_module:
        attrs["in_repo_module"] = in_repo_module
    return rs.entity("ARTIFACT", coordinate_ga, dep.coordinate, [ev], attrs)


def _depends_on(s: "ScanFacts", rs: RecordSet, plan: PackagePlan, module_rids: dict[str, str]) -> None:
    for m in plan.modules:
        mod = s.inv.modules[m]
        if mod.failed:
            continue
        src_rid, src_ns = module_rids[m], s.inv.ns[m]
        links = s.links[m]
        in_repo = {d.ga + "|" + d.type + "|" + d.classifier: t for d, t in links.in_repo}
        for dep in mod.dependencies:
            if dep.scope == "test":
                continue
            lines, enc = s.text_lines(dep.declared_in)
            ev = rs.segment(dep.declared_in, lines, dep.span.start, dep.span.end, "BUILD", enc)
            target = in_repo.get(dep.ga + "|" + dep.type + "|" + dep.classifier)
            attrs = {"scope": dep.scope, "version": dep.version, "version_source": dep.version_source,
                     "optional": dep.optional, "type": dep.type}
            if target is not None and target in module_rids:
                rs.relation("DEPENDS_ON", src_rid, src_ns, target_rid=module_rids[target],
                            target_key=s.inv.ns[target], status="RESOLVED", evidence=[ev], attributes=attrs)
            else:
                arid = _artifact(s, rs, dep.ga, dep, ev, target)
                rs.relation("DEPENDS_ON", src_rid, src_ns, target_rid=arid, target_key=dep.ga,
                            status="RESOLVED", evidence=[ev], attributes=attrs)


def _service(s: "ScanFacts", rs: RecordSet, plan: PackagePlan, module_rids: dict[str, str]) -> str:
    root = plan.roots[0]
    evs: list[str] = []
    basis_json = []
    for b in plan.basis:
        kind = "CODE" if b.path.endswith(".java") else "BUILD"
        lines, enc = s.text_lines(b.path)
        evs.append(rs.segment(b.path, lines, b.start, b.end, kind, enc))
        basis_json.append({"basis": b.basis, "path": b.path, "start_line": b.start, "end_line": b.end,
                           "detail": b.detail})
    if plan.id_basis.get("source") == "spring.application.name":
        path, line = str(plan.id_basis["path"]), int(plan.id_basis["line"])
        lines, enc = s.text_lines(path)
        evs.append(rs.segment(path, lines, line, line, "CONFIG", enc))
    attrs = {"deployable_basis": basis_json, "service_id_basis": plan.id_basis, "module": root,
             "spring_profiles": plan.profiles,
             "profile_basis": plan.config.profile_basis if plan.config else "default"}
    if plan.owner:
        attrs["owner"] = plan.owner
    rid = rs.entity("SERVICE", plan.service_id, plan.service_id, evs, attrs)
    for m in plan.modules:
        rs.relation("CONTAINS", rid, plan.service_id, target_rid=module_rids[m], target_key=s.inv.ns[m],
                    status="RESOLVED", evidence=s.module_results[m].module_evidence)
    return rid


def _mains(s: "ScanFacts", rs: RecordSet, plan: PackagePlan) -> list[str]:
    out = []
    for m in plan.roots:
        for mm in s.module_results[m].java.mains:
            urn = f"{mm.type_binary}#main"
            stable = f"MAIN:{urn}@{mm.method_stable}"
            attrs = {"application_class": mm.application_annotation is not None,
                     "application_annotation": mm.application_annotation}
            out.append(rs.entity("ENTRY", stable, urn, [mm.evidence], attrs, entry_kind="MAIN", urn=urn,
                                 handler_ref=RefTo(mm.method_rid)))
    return out


def _inherited_findings(s: "ScanFacts", rs: RecordSet, plan: PackagePlan, module_rids: dict[str, str]) -> None:
    """Findings of in-repo ancestors outside the package that shape its modules' effective POMs."""
    affected: dict[Finding, set[str]] = {}
    for m in plan.modules:
        cur = s.inv.modules[m]
        while cur.parent_path and cur.parent_path in s.inv.modules:
            cur = s.inv.modules[cur.parent_path]
            if cur.build_file in module_rids:
                continue
            for f in cur.findings:
                if f.code in INHERITED_CODES:
                    affected.setdefault(f, set()).add(module_rids[m])
    for f, rids in sorted(affected.items(), key=lambda kv: kv[0].identity):
        finding_diagnostic(s, rs, f, sorted(rids))


def _commit_fields(s: "ScanFacts") -> dict[str, Any]:
    """The analysis input's fields that name the commit (``scan/kept.py`` replaces them in a kept one)."""
    return {"commit_sha": s.commit,
            "commit_time": s.commit_time or _missing("the commit object has no well-formed committer line")}


def _analysis_input(s: "ScanFacts", plan: PackagePlan) -> dict[str, Any]:
    model = s.inv.model
    root = model.modules[plan.roots[0]]
    modules = []
    build_inputs: set[tuple[str, str]] = set()
    for m in sorted(plan.modules):
        mod = model.modules[m]
        for path in mod.build_inputs:
            if path in s.snapshot.by_path:
                build_inputs.add((path, s.snapshot.by_path[path].oid))
        modules.append({
            "build_file": m, "build_system": mod.build_system, "coordinate": mod.coordinate, "packaging": mod.packaging,
            "active_maven_profiles": sorted(mod.active_profiles), "java_level": mod.java_level or _missing(
                "no compiler release/source property"), "source_encoding": mod.source_encoding or _missing(
                "project.build.sourceEncoding not set"),
            "parent": mod.parent_path or mod.parent_external or _missing("no parent"),
            "dependencies": sorted(f"{d.coordinate}|{d.scope}" for d in mod.dependencies),
            "imported_boms": sorted(mod.imported_boms),
        })
    cfg = plan.config
    return {
        "repo_id": s.repo_id,
        # when the commit was made (committer time): the date of the code read. A package records no
        # time of its own scan — equal inputs give equal bytes
        **_commit_fields(s),
        "service": {"service_id": plan.service_id, "kind": plan.kind, "module_path": plan.roots[0],
                    "coordinate": root.coordinate, "roots": sorted(plan.roots)},
        "modules": modules,
        "build_inputs": [{"path": p, "blob": b} for p, b in sorted(build_inputs)],
        "maven_user_properties": ({"path": s.inv.maven_config, "blob": s.inv.maven_config_blob,
                                   "properties": s.inv.model.user_properties}
                                  if s.inv.maven_config else _missing("no .mvn/maven.config")),
        "spring_profiles": cfg.profiles if cfg else ["default"],
        "spring_profile_basis": cfg.profile_basis if cfg else "default (not a deployable service)",
        "config_files": [{"path": src.path, "blob": s.snapshot.by_path[src.path].oid}
                         for src in cfg.sources] if cfg else [],
        "config_snapshot_refs": [s.config_snapshot.ref()] if s.config_snapshot else
        _missing("no --config-snapshot given"),
        "sql_dialects": dict(sorted(s.sql_dialects.items())) if s.sql_dialects else
        _missing("no --sql-dialect given: each datasource's JDBC URL, else mysql"),
        "requested_capabilities": ["all"],
        # the options given that shape a package (files given are recorded by their digests:
        # rule_files, inventory, config_snapshot_refs): what 'diting verify --rederive' re-runs
        "scan_options": {"profile": s.options.profiles if s.options.profiles else _missing("no --profile given"),
                         "config_dir": list(s.config_dirs), "sql_dialect": list(s.options.sql_dialects),
                         "max_file_bytes": s.options.max_file_bytes},
        "budgets": {"max_file_bytes": s.options.max_file_bytes, "max_expr_depth": MAX_EXPR_DEPTH,
                    "max_yaml_nodes": MAX_YAML_NODES, "max_placeholder_depth": MAX_PLACEHOLDER_DEPTH,
                    "max_line_bytes": MAX_LINE_BYTES, "max_record_bytes": MAX_RECORD_BYTES},
        "rules": s.rules.digest_entries(),
        "rule_files": [{"path": f.path, "sha256": f.sha256} for f in sorted(s.rules.files, key=lambda f: f.path)],
        # how the graph aligns each URN scheme (the rule files' protocol declarations)
        "protocols": s.rules.protocol_table(),
        "catalogs": [{"name": "jdk-types", "sha256": jdk_catalog().sha256}],
        "inventory": {"sha256": s.inventory_file.sha256} if s.inventory_file else _missing("no --inventory given"),
        "tool_versions": tool_versions(),
        "dependency_artifacts_read": [],
    }


def _status(s: "ScanFacts", plan: PackagePlan, encoded: EncodedSet) -> tuple[str, str]:
    """The package's status and why: FAILED when its root build file or every Java file could
    not be read, PARTIAL with an ERROR diagnostic, else COMPLETE."""
    root = s.inv.modules[plan.roots[0]]
    if plan.kind == "SERVICE" and root.failed:
        return "FAILED", f"the service's build file {plan.roots[0]} could not be read"
    java = [f for m in plan.modules for f in s.inv.files_by_module.get(m, []) if f.kind == "JAVA"]
    if java and all(f.path in s.file_problems for f in java):
        return "FAILED", f"none of the package's {len(java)} Java file(s) could be read"
    errors = sum(1 for sev in encoded.severities.values() if sev == "ERROR")
    if errors:
        return "PARTIAL", f"{errors} ERROR diagnostic(s)"
    return "COMPLETE", "no ERROR diagnostic"


def _findings(s: ScanFacts, rs: RecordSet, plan: PackagePlan, module_rids: dict[str, str],
              service_rid: str | None) -> None:
    """Record the package's own findings (see :func:`package_findings`)."""
    _inherited_findings(s, rs, plan, module_rids)
    for f in plan.findings:
        finding_diagnostic(s, rs, f, service_rid or module_rids.get(plan.roots[0]))
    if plan.config is not None:
        for path, error, line in sorted(plan.config.unreadable, key=lambda u: (u[0], u[2] or 0)):
            if parse_failed(s.config_states.get(path)):
                continue  # a module's own config file: its file diagnostic is already there
            code = "FILE_UNREADABLE" if "could not be read" in error else "PARSE_ERROR"
            finding_diagnostic(s, rs, Finding(code, f"{path}: config source not read: {error}",
                                              path if line else None, line or 0, line or 0, plan.roots[0],
                                              f"config-source|{path}", "CONFIG"), service_rid)
        for path, name in plan.config.unfiltered:
            finding_diagnostic(s, rs, Finding("PROPERTY_UNRESOLVED", f"{path}: @{name}@ is not a Maven property "
                                              "of the module; left unfiltered", path, 0, 0, plan.roots[0],
                                              f"filter|{name}", "CONFIG"), service_rid)
        for key, (path, line) in sorted(plan.config.too_deep.items()):
            where = f" ({path}:{line})" if path else ""
            finding_diagnostic(s, rs, Finding("BUDGET_EXHAUSTED", f"config key {key}{where}: its placeholders "
                                              f"name keys more than {MAX_PLACEHOLDER_DEPTH} levels deep; its value "
                                              "is not resolved", path, line, line, plan.roots[0],
                                              f"placeholder-depth|{key}", "CONFIG"), service_rid)
        name_state = plan.id_basis.get("spring_application_name")
        if plan.id_basis.get("source") == "artifactId" and name_state in ("AMBIGUOUS", "UNKNOWN") and (
                name_state == "AMBIGUOUS" or plan.id_basis.get("unresolved_value") is not None):
            line = int(plan.id_basis.get("line", 0) or 0)
            finding_diagnostic(s, rs, Finding(
                "CONFIG_VALUE_UNKNOWN", f"spring.application.name is {plan.id_basis.get('spring_application_name')}"
                f" ({plan.id_basis.get('unresolved_value', 'equal-rank sources disagree')}); the service id falls "
                "back to the artifactId", str(plan.id_basis.get("path")) if line else None, line, line,
                plan.roots[0], "service-id", "CONFIG"), service_rid)
