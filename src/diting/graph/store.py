"""The relation graph in DuckDB (docs/graph.md §1): packages loaded into typed tables, the current set kept.

:func:`build` verifies each package (:func:`diting.ir.verify.verify_package`; every record unless
``deep`` is off, ``graph build --fast``) and refuses a tampered one before anything is written; then, in one transaction, it loads
the packages' records into the tables below and makes them current. Another package of the same
``(service_id, profile set, label)`` replaces a current one only with ``replace``; packages with
distinct labels (gray versions) are current together; loading a package already in the database
changes nothing. Any failure rolls the transaction back: the database stays as it was.

Tables (one row per record; every record carries its package's ``scan_id``; references are
``STRUCT(scan_id, record_id)``): ``packages``, ``entities``, ``relations``, ``segments``,
``config_bindings``, ``diagnostics``, ``branch_ledger``, ``coverage``. Attributes, match keys and
other open-ended fields are JSON. Views over the current packages (:data:`VIEWS`, docs/graph.md §4):
``services``, ``entries``, ``contracts``, ``table_access``, ``cross_service_edges``,
``service_dependencies``, ``evidence``, ``code_units``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, get_args

from diting.errors import UserError
from diting.interrupts import CommitGate, cancelled_by_interrupt, import_native
from diting.ir.canonical import READ_JSONL_OPTIONS
from diting.ir.canonical import loads as json_loads
from diting.ir.columns import JSONL_COLUMNS
from diting.ir.models import ProtocolAlignment, ProtocolRouting
from diting.ir.writer import package_dirs, refuse_inside_package

#: jsonl file → its table in the graph
TABLE_NAMES: dict[str, str] = {
    "entities.jsonl": "entities", "relations.jsonl": "relations",
    # stored once per (repo_id, commit_sha, record_id): packages of one commit share their segments
    "source_segments.jsonl": "segments", "config_bindings.jsonl": "config_bindings",
    "diagnostics.jsonl": "diagnostics", "branch_ledger.jsonl": "branch_ledger",
}

#: jsonl file → (table, typed columns read from each record): the columns are the record model's fields
#: (diting.ir.columns), so a field a model gains is a column here with nothing else to edit
TABLES: dict[str, tuple[str, dict[str, str]]] = {name: (TABLE_NAMES[name], cols) for name, cols in JSONL_COLUMNS.items()}

#: the pyramid's tables, table → columns (JSON for lists and objects): written by 'diting pyramid'
#: (diting.pyramid.build, docs/pyramid.md §2), declared here with every other table of the graph
#: database, so that a build drops them and a query names the command that makes them
PYRAMID_TABLES: dict[str, dict[str, str]] = {
    "entry_cards": {"card_id": "VARCHAR", "revision_id": "VARCHAR", "service_id": "VARCHAR", "label": "VARCHAR",
                    "entry_ref": "STRUCT(scan_id VARCHAR, record_id VARCHAR)", "entry_kind": "VARCHAR",
                    "urn": "VARCHAR", "statements": "JSON", "db_reads": "JSON", "db_writes": "JSON",
                    "cache_keys": "JSON", "downstream_calls": "JSON", "topics_out": "JSON",
                    "config_switches": "JSON", "ledger_mapped": "JSON", "ledger_excluded": "JSON",
                    "ledger_unknown": "JSON", "rule_ref_ids": "JSON", "unresolved": "JSON", "complete": "BOOLEAN"},
    "business_rules": {"rule_id": "VARCHAR", "revision_id": "VARCHAR", "service_id": "VARCHAR", "document": "JSON"},
    "service_profiles": {"service_id": "VARCHAR", "label": "VARCHAR", "implementation_scope": "VARCHAR",
                         "revision_id": "VARCHAR", "entries": "JSON", "contracts_exposed": "JSON",
                         "contracts_consumed": "JSON", "topics_in": "JSON", "topics_out": "JSON",
                         "tables_written": "JSON", "tables_read": "JSON", "sole_writer_of": "JSON",
                         "sharded_tables": "JSON", "config_keys": "JSON", "cache_prefixes": "JSON",
                         "boundaries": "JSON", "statements": "JSON", "gaps": "JSON", "complete": "BOOLEAN"},
    "flows": {"flow_id": "VARCHAR", "root_entry_ref": "STRUCT(scan_id VARCHAR, record_id VARCHAR)",
              "root_service_id": "VARCHAR", "label": "VARCHAR", "weakest_status": "VARCHAR", "hop_count": "INTEGER",
              "step_count": "INTEGER", "truncated": "BOOLEAN", "frontier": "JSON", "mermaid": "VARCHAR"},
    "flow_steps": {"flow_id": "VARCHAR", "step_id": "VARCHAR", "parent_step_id": "VARCHAR", "service_id": "VARCHAR",
                   "scan_id": "VARCHAR", "hop": "INTEGER", "node_ref": "VARCHAR", "via_ref": "VARCHAR", "edge_type": "VARCHAR", "guard_refs": "JSON",
                   "resolution_status": "VARCHAR", "is_back_edge": "BOOLEAN", "terminal": "VARCHAR",
                   "reason": "VARCHAR", "completion_refs": "JSON"},
}

#: tables whose records are facts of a commit, not of a package: stored once per (repo_id, commit_sha,
#: record_id) — a segment's record_id is a digest of its path and lines, its content fixed by the commit
SHARED = {"segments"}

PACKAGES_DDL = """CREATE TABLE IF NOT EXISTS packages (
    scan_id VARCHAR PRIMARY KEY, service_id VARCHAR NOT NULL, kind VARCHAR NOT NULL, repo_id VARCHAR, commit_sha VARCHAR,
    profile_set VARCHAR NOT NULL, label VARCHAR NOT NULL, status VARCHAR, input_digest VARCHAR,
    analyzer_version VARCHAR, package_dir VARCHAR, manifest_sha256 VARCHAR, is_current BOOLEAN NOT NULL,
    load_seq INTEGER NOT NULL, commit_time VARCHAR)"""


#: each package's protocol table (analysis_input.json ``protocols``): how the graph aligns a scheme
PROTOCOLS_DDL = """CREATE TABLE IF NOT EXISTS protocols (
    scan_id VARCHAR NOT NULL, scheme VARCHAR NOT NULL, alignment VARCHAR NOT NULL, routing VARCHAR)"""


def package_protocols(pkg: Path, ai: dict[str, Any]) -> list[tuple[str, str, str | None]]:
    """``[(scheme, alignment, routing)]`` of a package's analysis_input ``protocols`` (``ai``, the
    parsed analysis_input.json); a package written before protocols were recorded gets the shipped
    table. Raises :class:`UserError` for a table that is not of that shape."""
    table = ai.get("protocols")
    if table is None:
        table = _shipped_protocols()
    out = []
    if not isinstance(table, dict):
        raise UserError(f"{pkg}/analysis_input.json: protocols is not a mapping; nothing was loaded")
    for scheme, spec in sorted(table.items()):
        if not (isinstance(scheme, str) and re.fullmatch(r"[a-z][a-z0-9+.-]{0,31}", scheme) and isinstance(spec, dict)
                and spec.get("alignment") in get_args(ProtocolAlignment)
                and spec.get("routing") in (None, *get_args(ProtocolRouting))):
            raise UserError(f"{pkg}/analysis_input.json: protocol {str(scheme)[:40]!r} is malformed; nothing was loaded")
        out.append((scheme, spec["alignment"], spec.get("routing")))
    return out


def _shipped_protocols() -> dict[str, Any]:
    """The shipped rules' protocol table, loaded once per process."""
    if "table" not in _SHIPPED:
        from diting.rules import load_rules
        _SHIPPED["table"] = load_rules().protocol_table()
    return _SHIPPED["table"]


_SHIPPED: dict[str, dict[str, Any]] = {}


def package_kind(ai: dict[str, Any]) -> str | None:
    """What a package is by its recorded kind (``analysis_input.service.kind``): ``SERVICE`` (a
    deployable) or ``LIB`` (modules outside every service); ``None`` when it records neither. Never
    read from the service id's prefix: a package is what its analysis input says."""
    service = ai.get("service")
    kind = service.get("kind") if isinstance(service, dict) else None
    return kind if kind in ("SERVICE", "LIB") else None


def analysis_input(pkg: Path) -> dict[str, Any]:
    """A package's parsed analysis_input.json, ``{}`` when it cannot be read or is no mapping."""
    try:
        ai = json_loads((pkg / "analysis_input.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return ai if isinstance(ai, dict) else {}


@dataclass
class LoadResult:
    """What one build did: packages loaded, already present, replaced (scan ids)."""

    loaded: list[str]
    unchanged: list[str]
    replaced: list[str]
    #: alignment rows by edge kind and estate findings by code, over the current packages
    aligned: dict[str, int] = field(default_factory=dict)
    #: impact hops materialised over the current packages
    hops: int = 0
    #: copies of a package named more than once in the run (same scan_id, same files), skipped
    duplicates: int = 0

    def alignment_summary(self) -> str:
        """``cross-service edges: RPC n, …; findings: CODE n, …; impact hops: n``."""
        from diting.graph.align_rows import EDGE_KINDS
        edges = ", ".join(f"{k} {v}" for k, v in self.aligned.items() if k in EDGE_KINDS) or "none"
        findings = ", ".join(f"{k} {v}" for k, v in self.aligned.items() if k not in EDGE_KINDS) or "none"
        return f"cross-service edges: {edges}; findings: {findings}; impact hops: {self.hops}"


def package_profile_set(pkg: Path, ai: dict[str, Any] | None = None) -> str:
    """A package's profile set (``a,b`` sorted, ``default`` when none); ``ai`` its analysis input
    when already read."""
    profiles = (analysis_input(pkg) if ai is None else ai).get("spring_profiles") or []
    return ",".join(sorted(str(p) for p in profiles)) if profiles else "default"


#: the views over current packages (docs/graph.md §4) (column names are the public interface)
VIEWS = {
    "services": """
SELECT service_id, scan_id, repo_id, commit_sha, profile_set, label, status, kind
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
    from diting.graph.align_rows import ALIGNMENT_DDL, FINDINGS_DDL
    from diting.graph.impact import IMPACT_DDL
    for ddl in (ALIGNMENT_DDL, FINDINGS_DDL, *IMPACT_DDL):
        con.execute(ddl)
    con.execute("CREATE TABLE IF NOT EXISTS coverage (scan_id VARCHAR NOT NULL, document JSON)")
    con.execute(PROTOCOLS_DDL)
    for name, sql in VIEWS.items():
        con.execute(f"CREATE OR REPLACE VIEW {name} AS {sql}")


#: DuckDB's working memory for a connection that writes a graph (``DITING_GRAPH_MEMORY`` overrides):
#: beyond it DuckDB spills to its temporary directory beside the database instead of growing (replacing
#: one package in a large graph otherwise takes several GB)
DEFAULT_GRAPH_MEMORY = "1GB"
#: the bounds of ``DITING_GRAPH_MEMORY`` (bytes): DuckDB cannot open a graph in less, nor count more
MIN_GRAPH_MEMORY, MAX_GRAPH_MEMORY = 64 * 10**6, 10**15
_MEMORY = re.compile(r"([0-9]+(?:\.[0-9]+)?)\s*(KB|MB|GB|TB|KiB|MiB|GiB|TiB)", re.I | re.ASCII)
_UNITS = {"kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12, "kib": 2**10, "mib": 2**20, "gib": 2**30,
          "tib": 2**40}


def graph_memory() -> str:
    """The memory limit of a writing connection: ``DITING_GRAPH_MEMORY`` (``512MB``, ``4GB`` …, from
    64 MiB to 1 PiB) or :data:`DEFAULT_GRAPH_MEMORY`, as DuckDB reads it. Raises :class:`UserError`
    for any other value."""
    value = os.environ.get("DITING_GRAPH_MEMORY", "").strip() or DEFAULT_GRAPH_MEMORY
    m = _MEMORY.fullmatch(value)
    size = float(m.group(1)) * _UNITS[m.group(2).lower()] if m else None
    if size is None or not MIN_GRAPH_MEMORY <= size <= MAX_GRAPH_MEMORY:
        raise UserError(f"DITING_GRAPH_MEMORY={value[:40]!r}: write a size from 64MB to 1000TB, such as 512MB or "
                        "4GB")
    return f"{int(size // 2**20)}MiB"


def out_of_memory(exc: BaseException) -> str | None:
    """What to say when DuckDB ran out of the memory a writing connection has (:func:`graph_memory`),
    or None for another error."""
    duckdb = import_native("duckdb")
    if isinstance(exc, duckdb.OutOfMemoryException):
        return (f"DuckDB needed more than its memory limit ({graph_memory()}; set DITING_GRAPH_MEMORY higher, "
                "such as 4GB)")
    return None


def connect(db: Path, read_only: bool = False):
    """A DuckDB connection to ``db`` (one that writes works within :func:`graph_memory`); raises
    :class:`UserError` when it cannot be opened."""
    duckdb = import_native("duckdb")
    if db.is_dir():
        raise UserError(f"{db}: is a directory, not a graph database file")
    if db.exists() and not db.is_file():  # a FIFO or a device would block or be destroyed
        raise UserError(f"{db}: is not a regular file, not a graph database file")
    if read_only and not db.is_file():
        raise UserError(f"{db}: no such graph database (build one with 'diting graph build --db {db} …')")
    limit = None if read_only else graph_memory()
    try:
        con = duckdb.connect(str(db), read_only=read_only)
    except duckdb.Error as exc:
        raise UserError(f"{db}: cannot open the graph database: {str(exc).splitlines()[0]}") from exc
    if limit is not None:
        con.execute(f"SET memory_limit = '{limit}'")
    return con


def interrupted(exc: BaseException) -> bool:
    """Whether ``exc`` is DuckDB reporting a Ctrl-C (an InterruptException, or a RuntimeError
    "Query interrupted" from some versions)."""
    duckdb = import_native("duckdb")
    return isinstance(exc, duckdb.InterruptException) or (
        isinstance(exc, RuntimeError) and "interrupted" in str(exc).lower())


def _sandbox(con) -> None:
    """Leave user SQL no filesystem at all, no attached databases, no extensions, and no way to turn
    that back on. With external access off DuckDB still allows its spill directory (``<db>.tmp``,
    readable and writable when present) and the database's own files; so spilling is off (a query
    needing more memory than the limit fails) and the local file system is disabled outright (the
    open database reads through the handle it already holds)."""
    con.execute("SET temp_directory = ''")
    con.execute("SET enable_external_access = false")
    con.execute("SET disabled_filesystems = 'LocalFileSystem'")
    con.execute("SET lock_configuration = true")


def with_graph(db: Path, fn, user_sql: bool = False):
    """Run ``fn(con)`` on a read-only connection to ``db``. A DuckDB error becomes a
    :class:`UserError` — the query's when ``user_sql`` (the connection then has no file, network or
    extension access: the SQL may come from anyone), else the database's (an older diting built it,
    or it is damaged); a Ctrl-C DuckDB reports is a ``KeyboardInterrupt``."""
    duckdb = import_native("duckdb")
    con = connect(db, read_only=True)
    try:
        _check_graph(con, db)
    except BaseException:
        con.close()
        raise
    if user_sql:
        _sandbox(con)
    try:
        with cancelled_by_interrupt(con.interrupt):
            return fn(con)
    except (duckdb.Error, RuntimeError) as exc:
        if interrupted(exc):
            raise KeyboardInterrupt from exc
        if not isinstance(exc, duckdb.Error):
            raise
        first = str(exc).splitlines()[0]
        if not user_sql and (oom := out_of_memory(exc)) is not None:
            raise UserError(f"{db}: {oom}") from exc
        if user_sql and isinstance(exc, duckdb.CatalogException) and (made := _made_by(first, db)):
            raise UserError(made) from exc
        if user_sql and isinstance(exc, duckdb.PermissionException):
            first = f"a query reads only the graph, never a file, a database or an extension ({first})"
        raise UserError(f"query failed: {first}" if user_sql else
                        f"{db}: {first} (rebuild the graph with 'diting graph build')") from exc
    finally:
        con.close()


def _check_graph(con, db: Path) -> None:
    """Refuse (:class:`UserError`) a database that is not a graph this diting built: another tool's
    tables (:func:`check_schema`, columns aside: an older graph is read as far as it goes), or no
    ``packages`` table (an empty database)."""
    if "packages" not in check_schema(con, db, columns=False):
        raise UserError(f"{db}: not a diting graph database (it has no packages table); build one with "
                        "'diting graph build'")


def _made_by(message: str, db: Path) -> str | None:
    """For DuckDB's "no such table" naming a table another command makes (the pyramid's, which a
    graph build drops), which command that is; else None."""
    import shlex
    for table in sorted(PYRAMID_TABLES):
        if re.search(rf"\b{table}\b", message):
            return (f"{db} has no table {table}: 'diting pyramid --db {shlex.quote(str(db))}' makes it (a graph "
                    "build drops the pyramid's tables, which derive from the packages it replaces)")
    return None


def check_schema(con, db: Path, columns: bool = True) -> set[str]:
    """Refuse a database whose tables are not this version's graph tables (another tool's file, or —
    with ``columns`` — a graph an older diting built): loading into it would fail half-way or mix
    meanings. Readers pass ``columns=False``: what they read of an older graph they read or explain.
    Returns the names of the tables and views the database holds (all of them the graph's)."""
    expected: dict[str, list[str]] = {t: [c.split()[0] for c in ddl.split("(", 1)[1].rsplit(")", 1)[0].split(",")]
                                      for t, ddl in (("packages", PACKAGES_DDL), ("protocols", PROTOCOLS_DDL))}
    for table, cols in TABLES.values():
        expected[table] = (["repo_id", "commit_sha"] if table in SHARED else ["scan_id"]) + list(cols)
    present = {name: kind for name, kind in con.execute(
        "SELECT table_name, table_type FROM information_schema.tables WHERE table_schema = 'main'").fetchall()}
    elsewhere = sorted(f"{schema}.{name}" for schema, name in con.execute(
        "SELECT table_schema, table_name FROM information_schema.tables WHERE table_schema NOT IN ('main', "
        "'information_schema', 'pg_catalog') AND table_catalog = current_database()").fetchall())
    from diting.graph.align_rows import ALIGNMENT_DDL, FINDINGS_DDL
    from diting.graph.impact import IMPACT_DDL
    ours = set(expected) | set(VIEWS) | {"coverage"} | set(PYRAMID_TABLES) | {
        re.search(r"EXISTS (\w+)", ddl).group(1) for ddl in (ALIGNMENT_DDL, FINDINGS_DDL, *IMPACT_DDL)}
    foreign = elsewhere + sorted(set(present) - ours)  # a table in another schema is another tool's too
    if foreign:
        raise UserError(f"{db}: not a diting graph database (it holds {', '.join(foreign[:3])}"
                        f"{' …' if len(foreign) > 3 else ''}); build into a new --db file")
    for name, kind in present.items():
        if name in VIEWS and kind != "VIEW" or name in expected and kind != "BASE TABLE":
            raise UserError(f"{db}: not a diting graph database ({name} is a {kind.lower()} here); build into a new "
                            "--db file")
    for name, cols in expected.items():
        if columns and name in present:
            have = [r[0] for r in con.execute("SELECT column_name FROM information_schema.columns WHERE "
                                              "table_schema = 'main' AND table_name = ? ORDER BY ordinal_position",
                                              [name]).fetchall()]
            if have != [c.strip('"') for c in cols]:
                raise UserError(f"{db}: not a graph database of this diting version (table {name} has other columns); "
                                "build into a new --db file")
    return set(present)


#: a package as :func:`build` loads it: (dir, manifest, profile set, manifest sha256, protocols, commit time)
_Read = tuple[Path, dict[str, Any], str, str, list[tuple[str, str, str | None]], str | None]


def commit_time(ai: dict[str, Any]) -> str | None:
    """The committer time a package's analysis input records (``ai``), None when it records none (a
    package of an older diting, or a commit object without a well-formed committer line)."""
    t = ai.get("commit_time")
    return t if isinstance(t, str) else None


def _read_packages(paths: list[Path], deep: bool) -> tuple[list[_Read], int]:
    """Verify and read the packages named (see :data:`_Read`) once per scan_id (the manifest with the
    package's recorded ``kind`` added), and how many duplicate copies were skipped. Raises
    :class:`UserError`."""
    import hashlib
    from diting.ir.verify import verify_packages
    out: list[_Read] = []
    seen: dict[str, tuple[Path, str]] = {}
    duplicates = 0
    dirs = package_dirs(paths)
    for pkg, findings in zip(dirs, verify_packages(dirs, deep=deep), strict=True):
        if findings:
            raise UserError(f"{pkg}: the package does not verify ({len(findings)} finding(s), first: {findings[0]}); "
                            "nothing was loaded")
        raw = (pkg / "manifest.json").read_bytes()
        m, digest = json_loads(raw.decode("utf-8")), hashlib.sha256(raw).hexdigest()
        if m["scan_id"] in seen:
            if seen[m["scan_id"]][1] != digest:
                raise UserError(f"{pkg} and {seen[m['scan_id']][0]} claim one scan_id ({m['scan_id']}) with different "
                                "files: one of them was altered after the scan; nothing was loaded")
            duplicates += 1
            continue
        seen[m["scan_id"]] = (pkg, digest)
        ai = analysis_input(pkg)  # verified with the package: read once for its kind, profiles and protocols
        m["kind"] = package_kind(ai)
        if m["kind"] is None:
            raise UserError(f"{pkg}/analysis_input.json: service.kind is neither SERVICE nor LIB; nothing was loaded")
        out.append((pkg, m, package_profile_set(pkg, ai), digest, package_protocols(pkg, ai), commit_time(ai)))
    keys: dict[tuple[str, str], Path] = {}
    for pkg, m, prof, *_ in out:
        key = (m["service_id"], prof)
        if key in keys:
            raise UserError(f"two packages of service {m['service_id']} (profiles {prof}) in one build: {keys[key]} and "
                            f"{pkg}; load one of them (or give them labels in separate builds)")
        keys[key] = pkg
    return out, duplicates


def build(db: Path, paths: list[Path], replace: bool = False, label: str = "", deep: bool = True,
          gate: CommitGate | None = None, retire: list[str] | None = None) -> LoadResult:
    """Load the packages under ``paths`` into ``db`` (see the module docstring).

    An existing database is changed in one transaction; a new one is built in a temporary file
    beside it (``.{name}.tmp-{pid}-{hex}``, what a killed build left there is removed) and moved into
    place when complete, so ``db`` never exists without its tables. ``gate`` (a
    :class:`~diting.interrupts.CommitGate` the caller entered) learns the commit point: an interrupt
    before it rolls back, one after it is recorded there and the build completes; without one, an
    interrupt recorded past the commit point is raised again when the build is done. ``retire``:
    scan ids of current packages to make no longer current in the same transaction (the services an
    estate no longer has; they are listed in :attr:`LoadResult.replaced`).

    Raises :class:`UserError` for a path that is no package, a package that does not verify or
    cannot be loaded (bad records the default check does not read), two packages of one (service,
    profile set) in one run, a current package that would be replaced without ``replace``, or a
    database that is not a graph database of this version; the database is then unchanged (a
    new one is not created). ``KeyboardInterrupt`` is re-raised after the rollback."""
    import contextlib
    if gate is None:
        with CommitGate(redeliver=True) as own:
            return build(db, paths, replace, label, deep, own, retire)
    duckdb = import_native("duckdb")
    from diting.ir.writer import fsync_path, sweep_leftovers
    refuse_inside_package(db, "--db")
    graph_memory()  # a bad DITING_GRAPH_MEMORY is refused before anything is read or written
    manifests, duplicates = _read_packages(paths, deep) if paths else ([], 0)
    existed = db.exists() or db.is_symlink()
    if existed:
        target = db
        con = connect(db)
    else:
        if db.parent.is_dir():
            sweep_leftovers(db.parent, db.name)
        target = db.with_name(f".{db.name}.tmp-{os.getpid()}-{os.urandom(4).hex()}")
        try:
            con = connect(target)
        except UserError:
            raise UserError(f"{db}: cannot create the graph database (is {db.parent} a writable directory?)") from None
    ok = False
    try:
        check_schema(con, db)
        con.execute("BEGIN TRANSACTION")
        try:
            _create(con)
            result = _load(con, manifests, replace, label)
            for scan_id in retire or []:
                if con.execute("UPDATE packages SET is_current = false WHERE scan_id = ? AND is_current RETURNING 1",
                               [scan_id]).fetchall():
                    result.replaced.append(scan_id)
            result.duplicates = duplicates
            from diting.graph.align import realign
            from diting.graph.impact import materialise
            result.aligned = realign(con)
            result.hops = materialise(con)
            for table in PYRAMID_TABLES:  # derived from the packages just changed: stale ('diting pyramid' remakes them)
                con.execute(f"DROP TABLE IF EXISTS {table}")
            if existed:
                gate.commit()  # from here on the build completes: an interrupt no longer undoes it
            con.execute("COMMIT")
            if not existed:
                con.execute("CHECKPOINT")  # everything in the file itself, none in a write-ahead log
                con.close()
                fsync_path(target)
                gate.commit()
                os.replace(target, db)
                fsync_path(db.parent)
            ok = True
        except BaseException as exc:
            if gate.committed and not ok:
                gate.committed = False  # the commit itself failed: nothing was loaded
            with contextlib.suppress(duckdb.Error, RuntimeError):
                con.execute("ROLLBACK")  # fails when the transaction is already gone (an interrupt during COMMIT)
            if interrupted(exc):
                raise KeyboardInterrupt from exc
            if isinstance(exc, OSError):
                raise UserError(f"{db}: cannot write the graph database: {exc.strerror or exc}; nothing was "
                                "loaded") from exc
            if (oom := out_of_memory(exc)) is not None:
                raise UserError(f"{db}: {oom}; nothing was loaded") from exc
            if isinstance(exc, duckdb.Error):
                raise UserError(f"{db}: the packages could not be loaded ({str(exc).splitlines()[0]}); nothing was "
                                "loaded — 'diting verify --deep' on the packages says which record is bad") from exc
            raise
    finally:
        con.close()
        if not ok and not existed:
            for f in (target, target.with_name(target.name + ".wal")):
                f.unlink(missing_ok=True)
    return result


#: the tables holding a package's own records (deleted when another package of its scan_id replaces it)
PER_PACKAGE = [t for t, _ in TABLES.values() if t not in SHARED] + ["coverage", "protocols"]


def _load(con, manifests: list[_Read], replace: bool, label: str) -> LoadResult:
    seq = con.execute("SELECT coalesce(max(load_seq), 0) + 1 FROM packages").fetchone()[0]
    loaded, unchanged, replaced = [], [], []
    for pkg, m, prof, digest, protocols, committed in manifests:
        scan_id = m["scan_id"]
        row = con.execute("SELECT is_current, label, manifest_sha256 FROM packages WHERE scan_id = ?",
                          [scan_id]).fetchone()
        if row is not None and row[2] != digest:
            # the same identity, other files: one of the two copies was altered after its scan
            if not replace:
                raise UserError(f"{pkg}: another package with scan_id {scan_id} is loaded and its files differ (one "
                                "of them was altered after the scan); pass --replace to load this one instead; "
                                "nothing was loaded")
            for table in PER_PACKAGE:
                con.execute(f"DELETE FROM {table} WHERE scan_id = ?", [scan_id])
            con.execute("DELETE FROM packages WHERE scan_id = ?", [scan_id])
            replaced.append(scan_id)
            row = None
        if row is not None and row[0] and row[1] == label:
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
        if row is not None:  # loaded before: current again, under the label asked for now
            con.execute("UPDATE packages SET is_current = true, label = ?, load_seq = ? WHERE scan_id = ?",
                        [label, seq, scan_id])
            loaded.append(scan_id)
            continue
        counts = {f["path"]: f["record_count"] for f in m["files"]}
        con.execute("INSERT INTO packages VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, true, ?, ?)",
                    [scan_id, m["service_id"], m["kind"], m["repo_id"], m["commit_sha"], prof, label, m["status"],
                     m["input_digest"], m["analyzer_version"], str(pkg.resolve()), digest, seq, committed])
        for fname, (table, cols) in TABLES.items():
            path = pkg / fname
            if not path.is_file() or path.stat().st_size == 0:
                continue
            spec = ", ".join(f"'{c}': '{t}'" for c, t in cols.items())
            names = ", ".join(f'"{c}"' for c in cols)
            source = f"read_json(?, {READ_JSONL_OPTIONS}, columns = {{{spec}}})"
            if table in SHARED:  # once per commit: only the records no earlier package of it brought
                con.execute(f"INSERT INTO {table} SELECT ?, ?, {names} FROM {source} n WHERE NOT EXISTS "
                            f"(SELECT 1 FROM {table} o WHERE o.repo_id = ? AND o.commit_sha = ? "
                            "AND o.record_id = n.record_id)",
                            [m["repo_id"], m["commit_sha"], str(path), m["repo_id"], m["commit_sha"]])
            else:
                n = con.execute(f"INSERT INTO {table} SELECT ? AS scan_id, {names} FROM {source}",
                                [scan_id, str(path)]).fetchone()[0]
                if n != counts.get(fname, n):  # an empty line is no record to DuckDB: the counts part
                    raise UserError(f"{path}: {n} record(s) read where the manifest lists {counts[fname]} ('diting "
                                    "verify --deep' says which line is bad); nothing was loaded")
        from diting.coverage.package import checked_coverage
        cov = (pkg / "coverage.json").read_text(encoding="utf-8")
        try:
            checked_coverage(cov, str(pkg / "coverage.json"))
        except UserError as exc:
            raise UserError(f"{exc.message}; nothing was loaded") from None
        con.execute("INSERT INTO coverage VALUES (?, ?)", [scan_id, cov])
        for scheme, alignment, routing in protocols:
            con.execute("INSERT INTO protocols VALUES (?, ?, ?, ?)", [scan_id, scheme, alignment, routing])
        loaded.append(scan_id)
    # a record_id twice in one package (the default check reads counts, not records): one pass per table
    for fname, (table, _) in TABLES.items():
        if table in SHARED or not loaded:
            continue
        dup = con.execute(f"SELECT scan_id, record_id FROM {table} WHERE scan_id IN (SELECT unnest(?)) "
                          "GROUP BY ALL HAVING count(*) > 1 OR record_id IS NULL ORDER BY ALL LIMIT 1",
                          [loaded]).fetchone()
        if dup:
            what = f"record_id {dup[1]} appears more than once" if dup[1] is not None else "a record has no record_id"
            raise UserError(f"package {dup[0]}: {what} in {fname} ('diting verify --deep' reports it); nothing was "
                            "loaded")
    return LoadResult(loaded, unchanged, replaced)
