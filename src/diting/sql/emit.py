"""The SQL stage of one package: its statements, from mapper files and Java (docs/sql.md).

For every MyBatis mapper file of the package's modules, each statement becomes a SQL_STATEMENT
(``{namespace}.{id}``; a ``<selectKey>`` is ``{namespace}.{id}!selectKey``, as MyBatis names it)
contained by its MODULE and bound from the mapper interface's methods of that name (BINDS_TO);
annotations and library calls add theirs (sql/java_statements.py), MyBatis-Plus base mappers
theirs (sql/plus.py). Its variants are parsed with sqlglot in the datasource's dialect
(sql/variants.py, sql/config.py); every table position becomes READS or WRITES to a TABLE
(sql/tables.py). Conditional fragments are ledger items of their statement
(sql/fragment_ledger.py). What does not parse is SQL_PARSE_FAILED or SQL_UNSUPPORTED and counts
as failed; a ``${}`` table name that folds to nothing is DYNAMIC_TABLE_NAME.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from diting.ir import ids
from diting.sql import fragment_ledger
from diting.sql.config import SqlConfig
from diting.sql.dynamic import fragment_lookup
from diting.sql.java_statements import JavaStatements
from diting.sql.mybatis import MapperFile, MapperStatement
from diting.sql.plus import PlusStatements
from diting.sql.statements import StageStatement
from diting.sql.tables import TableRecords, table_use
from diting.sql.variants import budget_reason, mapper_fragments, statement_lineage

if TYPE_CHECKING:
    from diting.probes.context import ProbeContext

#: resultMap ``extends`` links followed at most
MAX_RESULT_MAP_CHAIN = 32
#: the databaseId values (lower-case) a dialect's statements carry
_DATABASE_IDS = {"mysql": ("mysql", "mariadb"), "postgres": ("postgresql", "postgres", "pg"),
                 "oracle": ("oracle",), "tsql": ("sqlserver", "mssql"), "sqlite": ("sqlite",),
                 "clickhouse": ("clickhouse",)}
#: a mapper namespace: a Java-like dotted name (MyBatis binds it to the interface of that name)
_NAMESPACE = re.compile(r"^[\w$]+(?:[.\-][\w$]+)*$")


@dataclass
class SqlStats:
    """What coverage counts of the SQL stage."""

    discovered: int = 0
    parsed: int = 0
    partial: int = 0
    failed: int = 0
    #: statements not analysed, by reason: other_database_id (a databaseId variant for another
    #: database), duplicate_id (an id the package declares twice: MyBatis refuses to start)
    excluded: dict[str, int] = field(default_factory=dict)
    ledger_items: int = 0  # conditional fragments recorded as ledger items
    ledger_unresolved: int = 0  # UNRESOLVED items no rule excludes
    #: items excluded, by LEDGER_EXCLUSION rule id
    ledger_excluded: dict[str, int] = field(default_factory=dict)


def _qualify(ns: str, ref: str) -> tuple[str, str]:
    """``(namespace, id)`` of a reference made from namespace ``ns`` (MyBatis: a dotted reference is
    already qualified)."""
    if "." in ref:
        head, _, tail = ref.rpartition(".")
        return head, tail
    return ns, ref


class SqlStage:
    """Runs the SQL stage for one package through the probes' helpers (segments, diagnostics)."""

    def __init__(self, p: "ProbeContext") -> None:
        self.p = p
        self.rs = p.rs
        self.stats = SqlStats()
        self.mappers: list[tuple[str, MapperFile]] = []
        for m in sorted(p.plan.modules):
            for mf in p.s.module_results[m].mappers:
                self.mappers.append((m, mf))
        self._lookup = fragment_lookup(mapper_fragments([mf for _, mf in self.mappers]))
        #: (namespace, id) → the <resultMap>'s type and extends, over the package's mappers
        self.result_maps: dict[tuple[str, str], dict[str, str]] = {
            (mf.namespace, rid): rm for _, mf in self.mappers if mf.namespace for rid, rm in mf.result_maps.items()}
        #: the package's datasource, dialect, mapper locations and routing (sql/config.py)
        self.config = SqlConfig(p)
        #: statement ids recorded so far (a repeat is a duplicate: :meth:`declare`)
        self.declared: set[str] = set()

    # ------------------------------------------------------------ run
    def run(self) -> SqlStats:
        """Record the package's statements (mapper files, annotations, calls, MyBatis-Plus base
        mappers), their tables and the READS / WRITES between them; returns the stage's counts."""
        stmts = self._mapper_statements()
        stmts.extend(JavaStatements(self).build(stmts))
        stmts.extend(PlusStatements(self).build({s.stable: s for s in stmts}))
        tables = TableRecords(self.p, self.config)
        tables.record(stmts)
        for s in stmts:
            tables.relations(s)
            fragment_ledger.queue(self.p, s)
        tables.shard_checks()
        return self.stats

    def _mapper_statements(self) -> list[StageStatement]:
        """The statements of the package's MyBatis mapper files, one per id (:meth:`_for_database`,
        :meth:`declare`); an iBatis 2 file's statements and those of a namespace that is no Java name
        are SQL_UNSUPPORTED."""
        stmts: list[StageStatement] = []
        for module, mf in self.mappers:
            if mf.dialect == "IBATIS":
                for name, line in mf.unsupported:
                    self._unsupported(module, mf.path, line, line, f"{mf.path}|ibatis|{line}", f"{mf.path}:{line}: "
                                      f"<{name}> of an iBatis 2 <sqlMap> file, which is not a MyBatis mapper; not "
                                      "analysed")
                continue
            if not mf.namespace:
                continue
            if not _NAMESPACE.match(mf.namespace):  # statement ids of calls hold ':', '/', '#', '@'
                for st in mf.statements:
                    self._unsupported(module, mf.path, st.line, st.end_line, f"{mf.path}|namespace|{st.line}",
                                      f"{mf.path}:{st.line}: statement {st.id[:200]!r} of mapper namespace "
                                      f"{mf.namespace[:200]!r}, which is no Java name; not analysed")
                continue
            for st in self._for_database(module, mf):
                if not self.declare(module, f"{mf.namespace}.{st.id}", mf.path, st.line, st.end_line):
                    continue
                stmts.append(self.statement(module, mf, st))
        return stmts

    def declare(self, module: str, stable: str, path: str, line: int, end: int) -> bool:
        """Whether ``stable`` is a statement id the package has not declared yet; a repeat (another
        mapper file or an annotation of the same namespace and id) is excluded as ``duplicate_id``
        with a diagnostic — MyBatis refuses to start with it, and the two are never merged."""
        if stable not in self.declared:
            self.declared.add(stable)
            return True
        self._exclude("duplicate_id")
        self.p.diag("SQL_DUPLICATE_ID", f"{stable}|duplicate|{path}:{line}", f"{path}:{line} declares statement "
                    f"{stable} again (MyBatis refuses to start with a duplicate id); this copy is not analysed",
                    [self._module_rid(module)], {"path": path, "lines": [line, end]})
        return False

    def _exclude(self, reason: str, n: int = 1) -> None:
        self.stats.excluded[reason] = self.stats.excluded.get(reason, 0) + n

    def _unsupported(self, module: str, path: str, line: int, end: int, key: str, message: str) -> None:
        """A statement diting cannot analyse and records no entity for: counted discovered and failed,
        with a SQL_UNSUPPORTED diagnostic of its own (the record coverage counts it from)."""
        self.stats.discovered += 1
        self.stats.failed += 1
        self.p.diag("SQL_UNSUPPORTED", key, message, [self._module_rid(module)],
                    {"path": path, "lines": [line, max(line, end)]})

    def _for_database(self, mf_module: str, mf: MapperFile) -> list[MapperStatement]:
        """One statement per id: where a mapper repeats an id with ``databaseId`` variants, the one
        for the datasource's database (else the one without ``databaseId``, else the first); the
        others are counted as excluded (``other_database_id``), as MyBatis never runs them here. An id
        repeated without any ``databaseId`` is a duplicate (:meth:`declare`)."""
        by_id: dict[str, list[MapperStatement]] = {}
        for st in mf.statements:
            by_id.setdefault(st.id, []).append(st)
        out: list[MapperStatement] = []
        names = _DATABASE_IDS.get(self.config.dialect, (self.config.dialect,))
        for group in by_id.values():
            if len(group) == 1 or not any(st.attrs.get("databaseId") for st in group):
                out.extend(group)  # repeats of an id without databaseId: declare excludes them
                continue
            pick = next((st for st in group if (st.attrs.get("databaseId") or "").lower() in names), None) or \
                next((st for st in group if not st.attrs.get("databaseId")), None) or group[0]
            out.append(pick)
            for st in group:
                if st is not pick:
                    self._exclude("other_database_id")
                    self.p.diag("SQL_OTHER_DATABASE", f"{mf.path}|{st.id}|{st.line}|database-id", f"{mf.path}:"
                                f"{st.line}: the databaseId={st.attrs.get('databaseId')!r} variant of {st.id} is for "
                                f"another database than {self.config.dialect}; not analysed",
                                [self._module_rid(mf_module)], {"path": mf.path, "lines": [st.line, st.end_line]})
        return out

    def _module_rid(self, module: str) -> str:
        return ids.entity_record_id("MODULE", self.p.s.inv.ns[module])


    def statement(self, module: str, mf: MapperFile, st: MapperStatement, source: str = "MAPPER_XML",
                   stable: str | None = None) -> StageStatement:
        """Statement ``st`` of ``mf`` (``stable``: its id when not ``{namespace}.{id}``) with its
        variants parsed: its status and why, its table uses; recorded (:meth:`record_statement`)."""
        ns = mf.namespace or ""
        stable = stable or f"{ns}.{st.id}"
        seg = self.p.seg(mf.path, st.line, st.end_line)
        exp_, dropped, results = statement_lineage(st.body, ns, self._lookup, self.config.dialect)
        s = StageStatement(stable, ids.entity_record_id("SQL_STATEMENT", stable), seg, mf.path, st, expansion=exp_)
        self.stats.discovered += 1
        s.unresolved_fragments = dropped
        if source == "CALL":  # no element names the operation: the parsed SQL does
            ops = sorted({r.operation for _, r in results if r.status == "PARSED" and r.operation})
            st.kind = ops[0] if len(ops) == 1 else "UNKNOWN"
        failed = [r for _, r in results if r.status != "PARSED"]
        includes = exp_.include_problem()
        if failed and len(failed) == len(results) and includes:
            # the text is incomplete (empty, or cut where a fragment belongs): that is why, whatever it parses as
            s.status, s.reason = "UNSUPPORTED", includes
        elif failed and len(failed) == len(results):
            s.status = failed[0].status
            s.reason = failed[0].reason if not exp_.budget_exhausted else \
                f"{budget_reason(exp_)}, and what was rendered does not parse: {failed[0].reason}"
        elif failed or exp_.budget_exhausted or includes:
            s.status = "PARTIAL"
            s.reason = failed[0].reason if failed else (
                budget_reason(exp_) if exp_.budget_exhausted else includes)
            s.code = ("SQL_PARSE_FAILED" if failed[0].status == "PARSE_FAILED" else "SQL_UNSUPPORTED") if failed else (
                "BUDGET_EXHAUSTED" if exp_.budget_exhausted else "SQL_UNSUPPORTED")
        for v, r in results:
            if r.status != "PARSED":
                continue
            for u in r.tables:
                s.uses.append(table_use(u, v, exp_))
        routed = self.config.routed_db(ns, mf.path) if self.config.routes_by_file or self.config.routes_by_package else None
        for u in s.uses:
            u.routed_db = routed
        if any(u.physical is None for u in s.uses) and s.status == "PARSED":
            s.status = "PARTIAL"
            s.reason = "a dynamic table name does not fold"
        elif any(u.dynamic_db for u in s.uses) and s.status == "PARSED":
            s.status = "PARTIAL"
            s.reason = "a table's schema is decided at run time"
        if st.entities and s.status in ("PARSED", "PARTIAL"):
            s.status, s.code = "PARTIAL", "SQL_UNSUPPORTED"
            s.reason = (f"XML entity references ({', '.join('&' + e + ';' for e in st.entities[:5])}) are never "
                        "expanded: the text they stand for is not analysed")
        self.record_statement(module, mf, s, results, source)
        return s
    def record_statement(self, module: str, mf: MapperFile, s: StageStatement, results, source: str = "MAPPER_XML") -> None:
        """The SQL_STATEMENT entity of ``s`` (``results``: its parsed variants) with its attributes,
        CONTAINS from its module, BINDS_TO from the mapper interface's methods of its name, and its count."""
        st = s.st
        exp_ = s.expansion
        assert exp_ is not None
        attrs = {"operation": st.kind, "source": source, "namespace": mf.namespace, "statement_id": st.id,
                 "parse_status": s.status, "variants": len(exp_.variants), "dialect": self.config.dialect,
                 "dialect_basis": self.config.dialect_basis,
                 "parameter_type": st.attrs.get("parameterType"), "result_map": st.attrs.get("resultMap"),
                 "result_type": st.attrs.get("resultType")}
        if source == "MAPPER_XML":
            attrs["mapper_location"] = self.config.mapper_location(module, mf)
        if st.parent_id:
            attrs["selectkey_of"] = f"{mf.namespace}.{st.parent_id}"
        if st.attrs.get("resultMap") and mf.namespace:
            attrs["result_maps"] = [self._result_map(mf.namespace, ref.strip())
                                    for ref in st.attrs["resultMap"].split(",") if ref.strip()]
        ops = sorted({r.operation for _, r in results if r.status == "PARSED" and r.operation})
        if source != "CALL" and ops and st.kind not in ops and \
                not (st.kind == "INSERT" and {"REPLACE", "UPSERT"} & set(ops)):
            attrs["parsed_operations"] = ops  # the element says one thing, the SQL another: not fully parsed
            if s.status == "PARSED":
                s.status, s.reason, s.code = "PARTIAL", f"<{st.kind.lower()}> holds {', '.join(ops)} SQL", \
                    "SQL_UNSUPPORTED"
                attrs["parse_status"] = s.status
        if s.reason:
            attrs["reason"] = s.reason
        dynamic = sorted({f"${{{e}}}" for v in exp_.variants for e, frag in v.markers.values() if frag is None}
                         - {f"${{{u.expression}}}" for u in s.uses if u.expression})
        if dynamic:  # ${} outside a table position and outside any conditional fragment
            attrs["dynamic_fragments"] = dynamic
        self._enter(module, s, attrs)
        # the mapper interface's methods of that name bind to the statement
        for m in self.p.methods_of(mf.namespace or "") if not st.parent_id else []:
            if m["name"] == st.id:
                self.rs.relation("BINDS_TO", m["rid"], m["stable"], target_rid=s.rid, target_key=s.stable,
                                 status="RESOLVED", evidence=[s.seg], attributes={"binding": "MAPPER_NAMESPACE"})
        self._tally(s)

    def record_plain_statement(self, module: str, s: StageStatement, attrs: dict[str, Any]) -> None:
        """Record a statement whose SQL is not text (a MyBatis-Plus inherited one, sql/plus.py): the
        entity, CONTAINS from its module, and its count; an UNSUPPORTED one gets SQL_UNSUPPORTED."""
        self._enter(module, s, attrs)
        self.stats.discovered += 1
        self._tally(s)

    def _enter(self, module: str, s: StageStatement, attrs: dict[str, Any]) -> None:
        """The SQL_STATEMENT entity and the module's CONTAINS of it."""
        self.rs.entity("SQL_STATEMENT", s.stable, s.stable, [s.seg], attrs)
        self.rs.relation("CONTAINS", self._module_rid(module), self.p.s.inv.ns[module], target_rid=s.rid,
                         target_key=s.stable, status="RESOLVED", evidence=[s.seg])

    def _tally(self, s: StageStatement) -> None:
        """Count a recorded statement as parsed, partial or failed, with the diagnostic that says why."""
        c = {"path": s.path, "lines": [s.st.line, s.st.end_line]}
        if s.status in ("PARSE_FAILED", "UNSUPPORTED"):
            self.stats.failed += 1
            code = "SQL_PARSE_FAILED" if s.status == "PARSE_FAILED" else "SQL_UNSUPPORTED"
            self.p.diag(code, s.stable, f"{s.stable} ({s.path}:{s.st.line}): {s.reason}", [s.rid], c)
        elif s.status == "PARTIAL":
            self.stats.partial += 1
            if s.expansion is not None and s.expansion.budget_exhausted:
                self.p.diag("BUDGET_EXHAUSTED", f"{s.stable}|variants", f"{s.stable}: "
                            f"{budget_reason(s.expansion)}; the rest is not parsed", [s.rid], c)
            if s.code and s.code != "BUDGET_EXHAUSTED":
                self.p.diag(s.code, f"{s.stable}|partial", f"{s.stable} ({s.path}:{s.st.line}): {s.reason}",
                            [s.rid], c)
        else:
            self.stats.parsed += 1

    def _result_map(self, ns: str, ref: str) -> dict[str, Any]:
        """A ``resultMap`` reference as MyBatis resolves it: an id without a dot is in the referring
        namespace, one with a dot names ``namespace.id``; ``extends`` is followed the same way from
        each map's own namespace. ``{"id", "type", "extends": [qualified ids, nearest first]}``, or
        ``resolved: false`` when the package declares no such map."""
        key = (ns, ref) if (ns, ref) in self.result_maps else _qualify(ns, ref)
        rm = self.result_maps.get(key)
        if rm is None:
            return {"id": ".".join(key), "resolved": False}
        chain: list[str] = []
        seen = {key}
        cur_ns, cur = key[0], rm
        while cur.get("extends"):
            ext = cur["extends"].strip()
            parent = (cur_ns, ext) if (cur_ns, ext) in self.result_maps else _qualify(cur_ns, ext)
            chain.append(".".join(parent))
            nxt = self.result_maps.get(parent)
            if nxt is None or parent in seen or len(chain) >= MAX_RESULT_MAP_CHAIN:
                why = "undeclared" if nxt is None else "cycle" if parent in seen else "too long"
                return {"id": ".".join(key), "type": rm.get("type"), "extends": chain, "resolved": False,
                        "unresolved_reason": why}
            seen.add(parent)
            cur_ns, cur = parent[0], nxt
        return {"id": ".".join(key), "type": rm.get("type"), "extends": chain, "resolved": True}

