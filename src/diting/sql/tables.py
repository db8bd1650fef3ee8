"""The tables of one package's statements (docs/sql.md §5): each table position a parsed variant
shows becomes a :class:`TableUse` (a ``${}`` / bind / concatenated suffix standing for shards), the
uses collapse into logical TABLE records with their shard evidence (sql/shards.py), and each
statement READS or WRITES its tables; a statement whose WHERE misses a routing column is
SHARD_BROADCAST.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from diting.ir.builder import RefTo
from diting.sql import shards
from diting.sql.dynamic import MARKER, Expansion
from diting.sql.statements import StageStatement, TableUse

if TYPE_CHECKING:
    from diting.probes.context import ProbeContext
    from diting.sql.config import SqlConfig

#: a bind whose value is a quoted literal head concatenated with an expression (``'order_' + id % 8``)
_BIND_HEAD = re.compile(r"""^\s*(['"])(?P<head>[A-Za-z0-9_]+)\1\s*\+\s*(?P<rest>.+)$""")
#: a quoted literal inside a bind or Java expression
_QUOTED = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")
#: a dotted name not preceded by a member dot or an OGNL '@' / '#', and whether a call follows it
_CHAIN = re.compile(r"(?<![\w.@#$])([A-Za-z_]\w*(?:\s*\.\s*[A-Za-z_]\w*)*)(\s*\()?")
_GETTER = re.compile(r"^(?:get|is)([A-Z]\w*)$")
_NOT_KEYS = {"null", "true", "false", "this", "_parameter", "new", "instanceof"}


def key_hints(expr: str) -> set[str]:
    """Candidate shard-key names in a bind (OGNL) or concatenated Java expression: of each
    dotted chain, the last property (a getter's property; a method call dropped) —
    ``userPin.hashCode() % 16`` → ``userPin``, ``order.getUserId() % 4`` → ``userId``,
    ``@java.lang.Math@abs(userId)`` → ``userId``. Capitalised names (classes, constants) are no keys."""
    out: set[str] = set()
    for m in _CHAIN.finditer(_QUOTED.sub(" ", expr)):
        parts = [p.strip() for p in m.group(1).split(".")]
        if m.group(2):  # the last segment is called: a getter names a property, anything else is dropped
            g = _GETTER.match(parts.pop())
            if g and parts:
                parts.append(g.group(1)[0].lower() + g.group(1)[1:])
        if parts and parts[-1] not in _NOT_KEYS and not parts[-1][0].isupper() and not parts[0][0].isupper():
            out.add(parts[-1])
    return out


def table_use(u: Any, v: Any, exp_: Expansion) -> TableUse:
    """The use of table position ``u`` (sql/lineage.py) of variant ``v`` of expansion ``exp_``: a
    literal name as it is; a name ending in a ``${}`` (or a bind or Java value concatenated in)
    by its stem, with the evidence and the shard-key hints it gives; a schema a ``${}`` names
    leaves the datasource unknown."""
    got = _use_of(u, v, exp_)
    if u.db and MARKER.search(u.db):  # ${schema}.t_order: the table is known, its database is not
        got.db = None
        got.dynamic_db = v.markers.get(int(MARKER.findall(u.db)[0]), ("?", None))[0]
    return got


def _use_of(u: Any, v: Any, exp_: Expansion) -> TableUse:
    """:func:`table_use` but for a schema a ``${}`` names."""
    name = u.name
    markers = MARKER.findall(name)
    cols = {c for c in u.columns if not MARKER.search(c)}
    where = {c for c in u.where_columns if not MARKER.search(c)}
    if not markers:
        return TableUse(name, u.db, u.write, u.operation, cols, where)
    n = int(markers[0])
    expr = v.markers.get(n, ("?", None))[0]
    java = expr[5:] if expr.startswith("java:") else None  # a Java value concatenated in (a CALL's SQL)
    head, _, tail = name.partition(f"__dt{n}__")
    if tail:  # a name that goes on after its placeholder (t_${x}_log): no stem to stand for it
        return TableUse(None, u.db, u.write, u.operation, cols, where, expression=expr, display=java)
    bind = exp_.binds.get(expr)
    hints: set[str] = set()
    evidence = "PLACEHOLDER"
    if java is not None:
        evidence = "CONCATENATION"
        hints = key_hints(java)
    elif bind is not None:
        m = _BIND_HEAD.match(bind)
        if m:
            head = head + m.group("head") if not head else head
            hints = key_hints(m.group("rest"))
            evidence = "BIND"
    stem = head.rstrip("_")
    if not stem:
        return TableUse(None, u.db, u.write, u.operation, cols, where, expression=expr, display=java)
    return TableUse(stem, u.db, u.write, u.operation, cols, where, evidence, expr, hints)


class TableRecords:
    """The TABLE records of one package's statements and the statements' READS / WRITES of them."""

    def __init__(self, p: "ProbeContext", config: "SqlConfig") -> None:
        self.p = p
        self.rs = p.rs
        self.config = config
        #: logical tables by (logical name lower-cased, datasource) with their TABLE record fields
        self.tables: dict[tuple[str, str | None], dict[str, Any]] = {}

    def _ds(self, u: TableUse) -> str | None:
        """The datasource of a table use: its schema, else the package's; None when a ``${}`` names it."""
        return None if u.dynamic_db else (u.db or u.routed_db or self.config.datasource)

    def record(self, stmts: list[StageStatement]) -> None:
        """Collapse the table uses of ``stmts`` into logical tables (:attr:`tables`; each use now
        names its logical table) and record each as a TABLE."""
        literal: dict[str | None, set[str]] = {}
        for s in stmts:
            for u in s.uses:
                if u.physical is not None and u.evidence is None:
                    literal.setdefault(self._ds(u), set()).add(u.physical)
        logical_of: dict[tuple[str, str | None], shards.LogicalName] = {}
        for ds, names in literal.items():
            for n, ln in shards.collapse(names, self.config.routing).items():
                logical_of[(n.lower(), ds)] = ln
        tables = self.tables
        for s in stmts:
            for u in s.uses:
                if u.physical is None:
                    continue
                ds = self._ds(u)
                if u.evidence:
                    r = self.config.routing.get(u.physical.lower())
                    ln = shards.LogicalName(u.physical, [u.evidence] + (["ROUTING_CONFIG"] if r else []),
                                            confirmed_key=sorted(r.sharding_columns)[0] if r and
                                            len(r.sharding_columns) == 1 else None)
                    physical = f"{u.physical}_${{{u.expression}}}"
                else:
                    ln = logical_of.get((u.physical.lower(), ds), shards.LogicalName(u.physical))
                    physical = u.physical
                key = (ln.logical.lower(), ds)
                t = tables.setdefault(key, {"logical": ln.logical, "datasource": ds, "physical": set(),
                                            "evidence": {}, "confirmed": ln.confirmed_key, "hints": set(),
                                            "candidate_of": ln.candidate_of, "statements": []})
                t["physical"].add(physical)
                for ev in ln.evidence:
                    t["evidence"].setdefault(ev, s.seg)
                t["hints"] |= u.key_hints
                t["confirmed"] = t["confirmed"] or ln.confirmed_key
                t["statements"].append((s, u))
                u.physical = ln.logical  # the statement now reads the logical table
        for t in tables.values():
            self._record_table(t)

    def _record_table(self, t: dict[str, Any]) -> None:
        """The TABLE entity of logical table ``t`` (its rid and stable id set on ``t``), with
        SHARD_KEY_UNCONFIRMED when it is sharded and nothing names its shard key."""
        r = self.config.routing.get(t["logical"].lower())
        if r is not None and r.source:
            t["evidence"]["ROUTING_CONFIG"] = self.p.seg(r.source[0], r.source[1], kind="CONFIG")
        sharded = bool(t["evidence"])
        # candidate keys: bind/concatenation identifiers, and columns every statement's WHERE constrains
        wheres = [u.where_columns for s, u in t["statements"] if not (u.write and u.operation == "INSERT")]
        common = set.intersection(*wheres) if wheres and sharded else set()
        cands = sorted((t["hints"] | common) - ({t["confirmed"]} if t["confirmed"] else set()))
        urn = f"table://{t['logical']}"
        stable = f"{urn}@{t['datasource'] or '?'}"
        attrs: dict[str, Any] = {}
        if t["candidate_of"]:
            attrs["shard_candidate_of"] = t["candidate_of"]
        t["routing"] = r
        if r is not None and len(r.sharding_columns) > 1:  # several routing columns: no single key
            attrs["routing_columns"] = {k: sorted(v) for k, v in r.columns.items() if v}
        evs = sorted({s.seg for s, _ in t["statements"]})
        t["rid"] = self.rs.entity(
            "TABLE", stable, t["logical"], evs[:8], attrs, urn=urn, datasource=t["datasource"],
            physical_names=sorted(t["physical"]), is_sharded=sharded,
            shard_evidence=[{"kind": k, "evidence_ref": RefTo(v)} for k, v in sorted(t["evidence"].items())],
            candidate_shard_keys=cands, confirmed_shard_key=t["confirmed"])
        t["stable"] = stable
        if sharded and not t["confirmed"] and not (r is not None and r.sharding_columns):
            # cites the evidence that makes the table sharded
            self.rs.diagnostic("SHARD_KEY_UNCONFIRMED", f"{stable}|key", f"{t['logical']} is sharded "
                               f"({', '.join(sorted(t['evidence']))}) but no routing configuration names its "
                               "shard key" + (f"; candidates: {', '.join(cands)}" if cands else ""), [t["rid"]],
                               sorted(set(t["evidence"].values())))

    def relations(self, s: StageStatement) -> None:
        """READS / WRITES from statement ``s`` to each of its tables (:meth:`record` first), one per
        kind and table with the operations, columns and idempotency guard of its uses; a table
        name decided at run time is an UNRESOLVED relation with DYNAMIC_TABLE_NAME."""
        seen: dict[tuple[str, str], dict[str, Any]] = {}
        for u in s.uses:
            kind = "WRITES" if u.write else "READS"
            if u.physical is None:
                shown = u.display or f"${{{u.expression}}}"
                d = self.p.diag("DYNAMIC_TABLE_NAME", f"{s.stable}|{u.expression}", f"{s.stable}: table name "
                                f"{shown} is decided at run time", [s.rid],
                                {"path": s.path, "lines": [s.st.line, s.st.end_line]})
                attrs = {"operation": u.operation}
                if u.name_basis:
                    attrs["table_name_basis"] = u.name_basis
                self.rs.relation(kind, s.rid, s.stable, target_rid=None, target_key=f"?{shown}",
                                 status="UNRESOLVED", evidence=[s.seg], diagnostics=[d],
                                 match_keys={"table_expression": shown}, attributes=attrs)
                continue
            t = self.tables.get((u.physical.lower(), self._ds(u)))
            if t is None:
                continue
            if u.dynamic_db:
                self.p.diag("DYNAMIC_TABLE_NAME", f"{s.stable}|{u.dynamic_db}", f"{s.stable}: the schema "
                            f"${{{u.dynamic_db}}} of {u.physical} is decided at run time; its datasource is not known",
                            [s.rid], {"path": s.path, "lines": [s.st.line, s.st.end_line]})
            cur = seen.setdefault((kind, t["rid"]), {"t": t, "ops": set(), "cols": set(), "basis": set(),
                                                     "guards": set(), "guard_cols": set()})
            cur["ops"].add(u.operation)
            cur["cols"] |= u.columns
            if u.write and u.operation == "UPDATE":
                # compare-and-set: a column the UPDATE assigns is also tested in its WHERE
                # (``set status = #{to} where id = #{id} and status = #{from}``): a repeat changes nothing
                cas = {c.lower() for c in u.columns} & {c.lower() for c in u.where_columns}
                if cas:
                    cur["guards"].add("CONDITIONAL_UPDATE")
                    cur["guard_cols"] |= cas
            elif u.write and u.operation == "UPSERT":
                cur["guards"].add("UPSERT")  # INSERT … ON DUPLICATE KEY UPDATE / ON CONFLICT: a unique key decides
            if u.name_basis:
                cur["basis"].add(u.name_basis)
        for (kind, _), cur in sorted(seen.items()):
            t = cur["t"]
            attrs = {"operations": sorted(cur["ops"]), "columns": sorted(cur["cols"])}
            if cur["guards"]:
                attrs["idempotency_guard"] = sorted(cur["guards"])[0] if len(cur["guards"]) == 1 else \
                    sorted(cur["guards"])
                if cur["guard_cols"]:
                    attrs["guard_columns"] = sorted(cur["guard_cols"])
            if cur["basis"]:
                attrs["table_name_basis"] = sorted(cur["basis"])[0] if len(cur["basis"]) == 1 else sorted(cur["basis"])
            self.rs.relation(kind, s.rid, s.stable, target_rid=t["rid"], target_key=t["stable"], status="RESOLVED",
                             evidence=[s.seg], attributes=attrs)

    def shard_checks(self) -> None:
        """SHARD_BROADCAST for a statement whose WHERE misses a routing column of its table: the
        confirmed shard key, or each of the database and table routing columns."""
        for t in self.tables.values():
            r = t.get("routing")
            if r is not None and len(r.sharding_columns) > 1:
                keys = [(c, f"{kind} routing column") for kind, cs in sorted(r.columns.items()) for c in sorted(cs)]
            elif t["confirmed"]:
                keys = [(t["confirmed"], "shard key")]
            else:
                continue
            for s, u in t["statements"]:
                if u.write and u.operation == "INSERT":
                    continue
                where = {c.lower() for c in u.where_columns}
                missing = [f"{what} {c}" for c, what in keys if c.lower() not in where]
                if missing:
                    self.p.diag("SHARD_BROADCAST", f"{s.stable}|{t['logical']}", f"{s.stable}: its WHERE does not "
                                f"constrain {t['logical']}'s {', '.join(missing)}; the statement goes to every "
                                "shard", [s.rid, t["rid"]], {"path": s.path, "lines": [s.st.line, s.st.end_line]})
