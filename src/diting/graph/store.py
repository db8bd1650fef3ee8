"""The relation graph in DuckDB (SPEC §9): packages loaded into typed tables, the current set kept.

:func:`build` verifies each package (:func:`diting.ir.verify.verify_package`; ``deep`` checks every
record) and refuses a tampered one before anything is written; then, in one transaction, it loads
the packages' records into the tables below and makes them current. Another package of the same
``(service_id, profile set, label)`` replaces a current one only with ``replace``; packages with
distinct labels (gray versions) are current together; loading a package already in the database
changes nothing. Any failure rolls the transaction back: the database stays as it was.

Tables (one row per record; every record carries its package's ``scan_id``; references are
``STRUCT(scan_id, record_id)``): ``packages``, ``entities``, ``relations``, ``segments``,
``config_bindings``, ``diagnostics``, ``branch_ledger``, ``coverage``. Attributes, match keys and
other open-ended fields are JSON. Views over the current packages (:data:`VIEWS`): ``services``,
``entries``, ``contracts``, ``table_access``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from diting.errors import UserError

REF = "STRUCT(scan_id VARCHAR, record_id VARCHAR)"
IMPL = "STRUCT(stable_id VARCHAR, implementation_scope VARCHAR, revision_id VARCHAR)"
LOCATOR = "STRUCT(repo_id VARCHAR, commit_sha VARCHAR, path VARCHAR, start_line INTEGER, end_line INTEGER)"

#: jsonl file → (table, typed columns read from each record)
TABLES: dict[str, tuple[str, dict[str, str]]] = {
    "entities.jsonl": ("entities", {
        "record_id": "VARCHAR", "kind": "VARCHAR", "stable_id": "VARCHAR", "name": "VARCHAR",
        "implementation_ref": IMPL, "evidence_refs": f"{REF}[]", "attributes": "JSON",
        "entry_kind": "VARCHAR", "urn": "VARCHAR", "handler_ref": REF, "role": "VARCHAR", "signature": "JSON",
        "datasource": "VARCHAR", "physical_names": "JSON", "is_sharded": "BOOLEAN", "shard_evidence": "JSON",
        "candidate_shard_keys": "JSON", "confirmed_shard_key": "VARCHAR", "declaring_type": REF,
        "symbol_kind": "VARCHAR", "artifact": "VARCHAR"}),
    "relations.jsonl": ("relations", {
        "record_id": "VARCHAR", "kind": "VARCHAR", "stable_id": "VARCHAR", "source_ref": REF, "target_ref": REF,
        "candidate_target_refs": f"{REF}[]", "resolution_status": "VARCHAR", "evidence_refs": f"{REF}[]",
        "diagnostic_refs": f"{REF}[]", "match_keys": "JSON", "callsite_id": "VARCHAR", "guard_ref": REF,
        "attributes": "JSON"}),
    # stored once per (repo_id, commit_sha, record_id): packages of one commit share their segments
    "source_segments.jsonl": ("segments", {
        "record_id": "VARCHAR", "source_type": "VARCHAR", "locator": LOCATOR, "encoding": "VARCHAR",
        "content": "VARCHAR", "content_hash": "VARCHAR", "source_content_hash": "VARCHAR", "redactions": "JSON"}),
    "config_bindings.jsonl": ("config_bindings", {
        "record_id": "VARCHAR", "consumer_ref": REF, "config_key": "VARCHAR", "source_refs": f"{REF}[]",
        "value_resolution": "VARCHAR", "value": "VARCHAR", "default_value": "VARCHAR",
        "evidence_refs": f"{REF}[]", "attributes": "JSON"}),
    "diagnostics.jsonl": ("diagnostics", {
        "record_id": "VARCHAR", "code": "VARCHAR", "severity": "VARCHAR", "affected_refs": f"{REF}[]",
        "message": "VARCHAR", "evidence_refs": f"{REF}[]"}),
    "branch_ledger.jsonl": ("branch_ledger", {
        "record_id": "VARCHAR", "branch_id": "VARCHAR", "branch_kind": "VARCHAR", "parent_branch_id": "VARCHAR",
        "symbol_ref": REF, "symbol_revision": "VARCHAR", "condition_ref": REF, "outcome_kind": "VARCHAR",
        "effect_refs": f"{REF}[]", "exit_ref": REF, "evidence_refs": f"{REF}[]", "resolution_status": "VARCHAR",
        "exclusion_rule_id": "VARCHAR"}),
}

#: tables whose records are facts of a commit, not of a package: stored once per (repo_id, commit_sha,
#: record_id) — a segment's record_id is a digest of its path and lines, its content fixed by the commit
SHARED = {"segments"}

PACKAGES_DDL = """CREATE TABLE IF NOT EXISTS packages (
    scan_id VARCHAR PRIMARY KEY, service_id VARCHAR NOT NULL, repo_id VARCHAR, commit_sha VARCHAR,
    profile_set VARCHAR NOT NULL, label VARCHAR NOT NULL, status VARCHAR, input_digest VARCHAR,
    analyzer_version VARCHAR, package_dir VARCHAR, is_current BOOLEAN NOT NULL, load_seq INTEGER NOT NULL)"""


@dataclass
class LoadResult:
    """What one build did: packages loaded, already present, replaced (scan ids)."""

    loaded: list[str]
    unchanged: list[str]
    replaced: list[str]
    #: alignment rows by edge kind and estate findings by code, over the current packages
    aligned: dict[str, int] = field(default_factory=dict)


def package_dirs(paths: list[Path]) -> list[Path]:
    """The package directories named: a directory with a manifest.json, or every such directory
    below one (symbolic links are not followed; a package's own subdirectories are not searched).
    Raises :class:`UserError` for a path that is neither."""
    import os
    out: list[Path] = []
    for p in paths:
        if (p / "manifest.json").is_file():
            out.append(p)
        elif p.is_dir():
            found: list[Path] = []
            for root, dirs, files in os.walk(p):
                if "manifest.json" in files:
                    found.append(Path(root))
                    dirs[:] = []
                else:
                    dirs[:] = sorted(d for d in dirs if not (Path(root) / d).is_symlink())
            if not found:
                raise UserError(f"{p}: no IR package here (no manifest.json in it or below it)")
            out.extend(sorted(found))
        else:
            raise UserError(f"{p}: not an IR package directory")
    return out


def _profile_set(pkg: Path) -> str:
    try:
        ai = json.loads((pkg / "analysis_input.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return "default"
    profiles = ai.get("spring_profiles") or []
    return ",".join(sorted(str(p) for p in profiles)) if profiles else "default"


#: the SPEC §9 views over current packages (column names are the public interface)
VIEWS = {
    "services": """
SELECT service_id, scan_id, repo_id, commit_sha, profile_set, label, status
FROM packages WHERE is_current""",
    "entries": """
SELECT p.service_id, e.entry_kind, e.urn, e.handler_ref
FROM entities e JOIN packages p ON p.scan_id = e.scan_id AND p.is_current
WHERE e.kind = 'ENTRY'""",
    "contracts": """
SELECT p.service_id, e.urn, e.role, e.signature, e.attributes
FROM entities e JOIN packages p ON p.scan_id = e.scan_id AND p.is_current
WHERE e.kind = 'CONTRACT'""",
    # counted accesses only: a statement no loaded method of the service reaches is DECLARED_ONLY
    "table_access": """
SELECT p.service_id, t.urn AS logical_table, t.datasource,
       unnest(CASE WHEN json_array_length(coalesce(t.physical_names, '[]')) = 0 THEN [NULL::VARCHAR]
                   ELSE CAST(t.physical_names AS VARCHAR[]) END) AS physical_table,
       CASE r.kind WHEN 'WRITES' THEN 'WRITE' ELSE 'READ' END AS op, t.is_sharded, t.confirmed_shard_key,
       t.candidate_shard_keys,
       CASE WHEN t.confirmed_shard_key IS NOT NULL THEN 'CONFIRMED'
            WHEN json_array_length(coalesce(t.candidate_shard_keys, '[]')) > 0 THEN 'CANDIDATE'
            ELSE 'NONE' END AS shard_key_status,
       r.source_ref AS via_ref
FROM relations r
JOIN packages p ON p.scan_id = r.scan_id AND p.is_current
JOIN entities t ON t.scan_id = r.scan_id AND t.record_id = r.target_ref.record_id AND t.kind = 'TABLE'
WHERE r.kind IN ('READS', 'WRITES') AND coalesce(r.attributes->>'access', 'CALLED') <> 'DECLARED_ONLY'""",
    # one row per (source relation, target candidate); the alignment table is rebuilt over the
    # current packages by every build (diting.graph.align)
    "cross_service_edges": """
SELECT src_service, dst_service, edge_kind, urn, resolution_status, match_basis, candidate_targets, src_ref, dst_ref
FROM alignment""",
    "service_dependencies": """
SELECT src_service, dst_service, edge_kind,
       count(*) FILTER (WHERE resolution_status = 'RESOLVED') AS resolved,
       count(*) FILTER (WHERE resolution_status = 'AMBIGUOUS') AS ambiguous,
       count(*) FILTER (WHERE resolution_status = 'UNRESOLVED') AS unresolved,
       list(DISTINCT urn ORDER BY urn) FILTER (WHERE urn IS NOT NULL) AS urns
FROM alignment GROUP BY ALL""",
    # a reference (scan_id, record_id) to a source segment, resolved to its text
    "evidence": """
SELECT p.scan_id, s.record_id, s.source_type, s.locator.path AS path, s.locator.start_line AS start_line,
       s.locator.end_line AS end_line, s.content
FROM packages p JOIN segments s ON s.repo_id = p.repo_id AND s.commit_sha = p.commit_sha""",
    # code shared by several packages of one commit (a common module) is one unit here
    "code_units": """
SELECT p.repo_id, p.commit_sha, e.stable_id, any_value(e.kind) AS kind, any_value(e.name) AS name,
       list(DISTINCT e.implementation_ref.revision_id ORDER BY e.implementation_ref.revision_id) AS revisions,
       list(DISTINCT p.service_id ORDER BY p.service_id) AS services
FROM entities e JOIN packages p ON p.scan_id = e.scan_id AND p.is_current
WHERE e.kind IN ('MODULE', 'TYPE', 'METHOD', 'FIELD', 'SQL_STATEMENT')
GROUP BY p.repo_id, p.commit_sha, e.stable_id""",
}


def _create(con) -> None:
    con.execute(PACKAGES_DDL)
    for table, cols in TABLES.values():
        body = ", ".join(f'"{c}" {t}' for c, t in cols.items())
        key = "repo_id VARCHAR NOT NULL, commit_sha VARCHAR NOT NULL" if table in SHARED else "scan_id VARCHAR NOT NULL"
        con.execute(f"CREATE TABLE IF NOT EXISTS {table} ({key}, {body})")
    from diting.graph.align import ALIGNMENT_DDL, FINDINGS_DDL
    from diting.graph.impact import IMPACT_DDL
    for ddl in (ALIGNMENT_DDL, FINDINGS_DDL, *IMPACT_DDL):
        con.execute(ddl)
    con.execute("CREATE TABLE IF NOT EXISTS coverage (scan_id VARCHAR NOT NULL, document JSON)")
    for name, sql in VIEWS.items():
        con.execute(f"CREATE OR REPLACE VIEW {name} AS {sql}")


def connect(db: Path, read_only: bool = False):
    """A DuckDB connection to ``db``; raises :class:`UserError` when it cannot be opened."""
    import duckdb
    if read_only and not db.is_file():
        raise UserError(f"{db}: no such graph database (build one with 'diting graph build --db {db} …')")
    try:
        return duckdb.connect(str(db), read_only=read_only)
    except duckdb.Error as exc:
        raise UserError(f"{db}: cannot open the graph database: {str(exc).splitlines()[0]}") from exc


def with_graph(db: Path, fn):
    """Run ``fn(con)`` on a read-only connection to ``db``; a DuckDB error (a database an older
    diting built, a damaged file) becomes a :class:`UserError`."""
    import duckdb
    con = connect(db, read_only=True)
    try:
        return fn(con)
    except duckdb.Error as exc:
        raise UserError(f"{db}: {str(exc).splitlines()[0]} (rebuild the graph with 'diting graph build')") from exc
    finally:
        con.close()


def build(db: Path, paths: list[Path], replace: bool = False, label: str = "", deep: bool = False) -> LoadResult:
    """Load the packages under ``paths`` into ``db`` (see the module docstring).

    Raises :class:`UserError` for a path that is no package, a package that does not verify, two
    packages of one (service, profile set, label) in one run, or a current package that would be
    replaced without ``replace``; the database is then unchanged."""
    from diting.ir.verify import verify_package
    pkgs = package_dirs(paths)
    manifests: list[tuple[Path, dict[str, Any], str]] = []
    for pkg in pkgs:
        findings = verify_package(pkg, deep=deep)
        if findings:
            raise UserError(f"{pkg}: the package does not verify ({len(findings)} finding(s), first: {findings[0]}); "
                            "nothing was loaded")
        manifests.append((pkg, json.loads((pkg / "manifest.json").read_text(encoding="utf-8")), _profile_set(pkg)))
    keys: dict[tuple[str, str], str] = {}
    for pkg, m, prof in manifests:
        key = (m["service_id"], prof)
        if key in keys and keys[key] != m["scan_id"]:
            raise UserError(f"two packages of service {m['service_id']} (profiles {prof}) in one build: {pkg} and "
                            f"another; load one of them (or give them labels in separate builds)")
        keys[key] = m["scan_id"]
    con = connect(db)
    try:
        _create(con)
        con.execute("BEGIN TRANSACTION")
        try:
            result = _load(con, manifests, replace, label)
            from diting.graph.align import realign
            from diting.graph.impact import materialise
            result.aligned = realign(con)
            result.aligned["impact_edges"] = materialise(con)
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
    finally:
        con.close()
    return result


def _load(con, manifests: list[tuple[Path, dict[str, Any], str]], replace: bool, label: str) -> LoadResult:
    seq = con.execute("SELECT coalesce(max(load_seq), 0) + 1 FROM packages").fetchone()[0]
    loaded, unchanged, replaced = [], [], []
    for pkg, m, prof in manifests:
        scan_id = m["scan_id"]
        if con.execute("SELECT count(*) FROM packages WHERE scan_id = ?", [scan_id]).fetchone()[0]:
            current = con.execute("SELECT is_current FROM packages WHERE scan_id = ?", [scan_id]).fetchone()[0]
            if current:
                unchanged.append(scan_id)
                continue
        others = [r[0] for r in con.execute(
            "SELECT scan_id FROM packages WHERE service_id = ? AND profile_set = ? AND label = ? AND is_current "
            "AND scan_id <> ?", [m["service_id"], prof, label, scan_id]).fetchall()]
        if others and not replace:
            raise UserError(f"{pkg}: service {m['service_id']} (profiles {prof}{', label ' + label if label else ''}) "
                            f"already has a current package ({others[0]}); pass --replace to replace it, or --label "
                            "to load it beside it; nothing was loaded")
        for old in others:
            con.execute("UPDATE packages SET is_current = false WHERE scan_id = ?", [old])
            replaced.append(old)
        if con.execute("SELECT count(*) FROM packages WHERE scan_id = ?", [scan_id]).fetchone()[0]:
            con.execute("UPDATE packages SET is_current = true, load_seq = ? WHERE scan_id = ?", [seq, scan_id])
            loaded.append(scan_id)
            continue
        con.execute("INSERT INTO packages VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, true, ?)",
                    [scan_id, m["service_id"], m["repo_id"], m["commit_sha"], prof, label, m["status"],
                     m["input_digest"], m["analyzer_version"], str(pkg.resolve()), seq])
        for fname, (table, cols) in TABLES.items():
            path = pkg / fname
            if not path.is_file() or path.stat().st_size == 0:
                continue
            spec = ", ".join(f"'{c}': '{t}'" for c, t in cols.items())
            names = ", ".join(f'"{c}"' for c in cols)
            source = f"read_json(?, format = 'newline_delimited', columns = {{{spec}}})"
            if table in SHARED:  # once per commit: only the records no earlier package of it brought
                con.execute(f"INSERT INTO {table} SELECT ?, ?, {names} FROM {source} n WHERE NOT EXISTS "
                            f"(SELECT 1 FROM {table} o WHERE o.repo_id = ? AND o.commit_sha = ? "
                            "AND o.record_id = n.record_id)",
                            [m["repo_id"], m["commit_sha"], str(path), m["repo_id"], m["commit_sha"]])
            else:
                con.execute(f"INSERT INTO {table} SELECT ? AS scan_id, {names} FROM {source}", [scan_id, str(path)])
        cov = (pkg / "coverage.json").read_text(encoding="utf-8")
        con.execute("INSERT INTO coverage VALUES (?, ?)", [scan_id, cov])
        loaded.append(scan_id)
    return LoadResult(loaded, unchanged, replaced)


@dataclass
class SavedQuery:
    """A canned query shipped in ``diting/graph/queries/{name}.sql``: its description (the leading
    ``--`` comment lines), its ``$name`` parameters and its SQL."""

    name: str
    description: str
    params: list[str]
    sql: str


def saved_queries() -> dict[str, SavedQuery]:
    """Every shipped canned query by name."""
    from importlib.resources import files
    out: dict[str, SavedQuery] = {}
    for f in sorted(files("diting.graph").joinpath("queries").iterdir(), key=lambda f: f.name):
        if not f.name.endswith(".sql"):
            continue
        text = f.read_text(encoding="utf-8")
        head = [ln[2:].strip() for ln in text.splitlines() if ln.startswith("--")]
        params = next((h.split(":", 1)[1].replace(",", " ").split() for h in head if h.startswith("params:")), [])
        desc = " ".join(h for h in head if not h.startswith("params:"))
        out[f.name[:-4]] = SavedQuery(f.name[:-4], desc, params, text)
    return out


def query(db: Path, sql: str, params: dict[str, str] | None = None) -> tuple[list[str], list[tuple]]:
    """Run ``sql`` on a read-only connection with ``$name`` parameters; returns column names and
    rows. A SQL error is a :class:`UserError` with DuckDB's first line."""
    import duckdb
    con = connect(db, read_only=True)
    try:
        cur = con.execute(sql, params) if params else con.execute(sql)
        return [d[0] for d in cur.description] if cur.description else [], cur.fetchall()
    except duckdb.Error as exc:
        raise UserError(f"query failed: {str(exc).splitlines()[0]}") from exc
    finally:
        con.close()
