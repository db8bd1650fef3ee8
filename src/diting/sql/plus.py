"""MyBatis-Plus inherited statements (docs/sql.md §6).

A mapper interface that extends ``BaseMapper<T>`` (directly, through in-repo generic mappers, or
through a base a rule names, such as ``MPJBaseMapper<T>``) gets MyBatis-Plus's injected CRUD
statements at run time, named ``{mapper}.{method}`` like every MappedStatement, on the table of its
entity ``T``: ``@TableName(value)`` when the entity carries one, else the naming convention
(``mybatis-plus.global-config.db-config.table-prefix`` + the class name in snake case), marked
``table_name_basis = CONVENTION``.

Only statements something calls are recorded, each once: a call of an inherited method on the
mapper (a field, local, parameter, or ServiceImpl's ``baseMapper``), or of an IService/ServiceImpl
method the rule maps to statements (``getById`` → ``selectById``; a chain starter such as
``lambdaQuery()`` by the terminal call of its chain). The calling method BINDS_TO each statement it
reaches (``binding = INHERITED_CALL``); which mapper an IService call reaches is the one its
ServiceImpl binds, else the only mapper of its entity (AMBIGUOUS with every candidate when there are
several, UNRESOLVED with UNRESOLVED_CALL when there is none). A statement the mapper declares
itself (XML or annotation) is the one MyBatis-Plus leaves in place: calls bind to it.

Rules: ``rules/mybatis-plus.yaml`` (SQL_MAPPER_BASE, SQL_TABLE_NAME, SQL_INHERITED_CALL).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from diting.ir import ids
from diting.resolve.types import TypeOf
from diting.sql.mybatis import MapperStatement, SqlNode
from diting.sql.statements import StageStatement, TableUse

if TYPE_CHECKING:
    from diting.probes.matches import Candidate
    from diting.sql.emit import SqlStage

_UPPER = re.compile(r"(?<!^)(?=[A-Z])")
_ONE_PLACEHOLDER = re.compile(r"^\$\{([^{}]+)\}$")
_WRITE_OPS = {"INSERT", "UPDATE", "DELETE", "REPLACE", "UPSERT"}
_DB_CONFIG = "mybatis-plus.global-config.db-config."


def convention_table(simple: str, prefix: str = "", underline: bool = True, capital: bool = False) -> str:
    """MyBatis-Plus's table name for an entity class without ``@TableName``: ``prefix`` + the simple
    name in snake case (``OAuthClient`` → ``o_auth_client``, an underscore before every upper-case
    letter but the first), or with its first letter lower-cased when ``table-underline`` is false;
    the name (not the prefix) upper-cased in ``capital-mode``."""
    name = _UPPER.sub("_", simple).lower() if underline else simple
    name = name.upper() if capital else name[:1].lower() + name[1:]
    return prefix + name  # the prefix as configured, after capital mode (TableInfoHelper.initTableName)


@dataclass
class PlusMapper:
    """A mapper interface with inherited statements: its entity (None when no type argument names
    it) and the operation of each inherited method."""

    binary: str
    module: str
    path: str
    lines: tuple[int, int]
    supertype: str
    entity: TypeOf | None
    statements: dict[str, str]
    #: statements whose other tables are decided at run time (MyBatis-Plus-Join's join queries)
    partial: frozenset[str] = frozenset()


class PlusStatements:
    """The inherited statements one package calls, as :class:`~diting.sql.statements.StageStatement` records of the
    SQL stage (their tables go through the stage's TABLE and shard logic like any statement)."""

    def __init__(self, stage: "SqlStage") -> None:
        self.stage = stage
        self.p = stage.p
        self.oracle = self.p.s.oracle
        #: in-repo generic mappers between a mapper and its base (``BaseMapperX<T>``): no statements of their own
        self.generic: set[str] = set()
        self.mappers = self._mappers()
        self.table_names = self._table_names()
        self.made: dict[str, "StageStatement"] = {}

    # ------------------------------------------------------------ what the package declares
    def _mappers(self) -> dict[str, PlusMapper]:
        out: dict[str, PlusMapper] = {}
        for c in sorted(self.p.ctx.by_emit.get("SQL_MAPPER_BASE", []), key=lambda c: (c["type"]["binary"], c["rule"])):
            rule = self.p.s.rules.by_id[c["rule"]]
            binary = c["type"]["binary"]
            if binary in out or rule.match.type is None:
                continue
            attrs = rule.emits.attributes
            args = self.oracle.supertype_args(TypeOf(binary, c["module"]), rule.match.type.supertype)
            i = int(attrs.get("entity_type_arg", 0))
            entity = args[i] if args and 0 <= i < len(args) else None
            if entity is None and self._declares_type_params(c["module"], binary):
                self.generic.add(binary)  # its entity is the type argument of each subinterface
                continue
            joins = {m: "SELECT" for m in attrs.get("joins") or []}
            out[binary] = PlusMapper(binary, c["module"], c["path"], (c["lines"][0], c["lines"][1]),
                                     rule.match.type.supertype, entity, dict(attrs.get("statements") or {}, **joins),
                                     frozenset(joins))
        return out

    def _declares_type_params(self, module: str, binary: str) -> bool:
        found = self.oracle.decl(module, binary)
        return found is not None and bool(found[0].facts.types[found[1]].type_params)

    def _table_names(self) -> dict[str, dict[str, Any]]:
        """Entity binary → its ``@TableName`` candidate (a blank value keeps the convention)."""
        out: dict[str, dict[str, Any]] = {}
        for c in self.p.ctx.by_emit.get("SQL_TABLE_NAME", []):
            vals = c.get("roles", {}).get("table", [])
            if vals and not (len(vals) == 1 and vals[0].get("value") == ""):
                out.setdefault(c["type"]["binary"], c)
        return out

    # ------------------------------------------------------------ run
    def build(self, explicit: dict[str, "StageStatement"]) -> list["StageStatement"]:
        """Record the statements the package's calls reach and the BINDS_TO of each call; returns
        the new statements (``explicit``: statements recorded from XML and annotations, by stable id)."""
        calls = sorted(self.p.ctx.by_emit.get("SQL_INHERITED_CALL", []),
                       key=lambda c: (c["member"]["stable"], c["call"]["ordinal"], c["rule"]))
        for c in calls:
            status, targets, reason = self._targets(c)
            call = c["call"]
            m = c["member"]
            attrs = {"binding": "INHERITED_CALL", "call": call["name"], "receiver_type": call["receiver_type"],
                     "loaded": self.p.ctx.class_loaded(c["type"]["binary"])}
            evidence = [self.p.cseg(c)]
            if status == "UNRESOLVED":
                d = self.p.diag("UNRESOLVED_CALL", f"{call['callsite_id']}|plus", f"{call['expression']} at "
                                f"{c['path']}:{c['lines'][0]}: {reason}", [m["rid"]], c)
                self.p.rs.relation("BINDS_TO", m["rid"], m["stable"], target_rid=None,
                                   target_key=f"?{call['receiver_type']}.{call['name']}", status="UNRESOLVED",
                                   evidence=evidence, diagnostics=[d], ordinal=call["ordinal"],
                                   callsite_id=call["callsite_id"],
                                   match_keys={"call": call["expression"], "receiver_type": call["receiver_type"]},
                                   attributes=attrs)
                continue
            for group in targets:  # one group per statement the call runs (saveOrUpdate: three)
                stmts = [self._statement(mp, method, explicit) for mp, method in group]
                if len(stmts) == 1:
                    self.p.rs.relation("BINDS_TO", m["rid"], m["stable"], target_rid=stmts[0].rid,
                                       target_key=stmts[0].stable, status="RESOLVED", evidence=evidence,
                                       ordinal=call["ordinal"], callsite_id=call["callsite_id"], attributes=attrs)
                else:
                    method = group[0][1]
                    self.p.rs.relation("BINDS_TO", m["rid"], m["stable"], target_rid=None,
                                       target_key=f"?{call['receiver_type']}.{method}", status="AMBIGUOUS",
                                       candidates=[s.rid for s in stmts], evidence=evidence,
                                       ordinal=call["ordinal"], callsite_id=call["callsite_id"],
                                       match_keys={"call": call["expression"], "statement": method},
                                       attributes=attrs)
        return list(self.made.values())

    def _targets(self, c: Candidate) -> tuple[str, list[list[tuple[PlusMapper, str]]], str]:
        """``(status, [[(mapper, method), …] per statement the call runs], reason)``: RESOLVED groups
        hold one mapper, AMBIGUOUS ones several."""
        rule = self.p.s.rules.by_id[c["rule"]]
        attrs = rule.emits.attributes
        call = c["call"]
        recv = call["receiver_type"]
        if attrs.get("layer") == "MAPPER":
            mp = self.mappers.get(recv or "")
            if recv in self.generic:
                return "UNRESOLVED", [], (f"{recv} is a generic base mapper: which mapper (and table) the call "
                                          "reaches is its subinterface's, decided by the caller")
            if mp is None:
                return "UNRESOLVED", [], (f"the receiver's type {recv or '(unknown)'} is no mapper of this package "
                                          "with a known entity; which statement runs is decided at run time")
            if call["name"] not in mp.statements:
                return "UNRESOLVED", [], f"{call['name']} is no statement MyBatis-Plus injects"
            return "RESOLVED", [[(mp, call["name"])]], ""
        chains = attrs.get("chains") or {}
        if call["name"] in chains and call["arity"] == 0:
            terminals = chains[call["name"]]
            end = next((n for n in call.get("chain", []) if n in terminals), None)
            if end is None:
                return "UNRESOLVED", [], (f"the chain {call['name']}() ends in no call that runs a statement here "
                                          "(the wrapper is handed on, or the chain is longer than diting follows)")
            methods = list(terminals[end])
        else:
            methods = list((attrs.get("service") or {}).get(call["name"], []))
        if not methods:
            return "UNRESOLVED", [], f"{call['name']} runs no statement the rule knows"
        if call.get("receiver_kind") == "super":  # super.getById(…): the calling class binds the mapper
            recv = c["type"]["binary"]
        mappers, why = self._service_mappers(recv, c["module"], attrs)
        if not mappers:
            return "UNRESOLVED", [], why
        groups = [[(mp, method) for mp in mappers if method in mp.statements] for method in methods]
        groups = [g for g in groups if g]
        if not groups:
            return "UNRESOLVED", [], f"{', '.join(methods)} is no statement MyBatis-Plus injects"
        return ("RESOLVED" if len(mappers) == 1 else "AMBIGUOUS"), groups, ""

    def _service_mappers(self, recv: str | None, near: str, attrs: dict[str, Any]) -> tuple[list[PlusMapper], str]:
        """The mapper(s) an IService/ServiceImpl receiver reaches: the type argument a ServiceImpl
        base binds (``mapper_of``), else every mapper of the entity (``entity_of``)."""
        if not recv:
            return [], "the receiver's type is not known"
        home = self.p.ctx.home(recv, near)
        t = TypeOf(recv, home)
        for base, i in sorted((attrs.get("mapper_of") or {}).items()):
            args = self.oracle.supertype_args(t, base)
            if args and 0 <= int(i) < len(args) and args[int(i)] is not None:
                mp = self.mappers.get(args[int(i)].name)
                if mp is not None:
                    return [mp], ""
                return [], f"{recv} binds mapper {args[int(i)].name}, which inherits no statements in this package"
        for base, i in sorted((attrs.get("entity_of") or {}).items()):
            args = self.oracle.supertype_args(t, base)
            if args and 0 <= int(i) < len(args) and args[int(i)] is not None:
                entity = args[int(i)].name
                found = [mp for _, mp in sorted(self.mappers.items()) if mp.entity and mp.entity.name == entity]
                if found:
                    return found, ""
                return [], f"no mapper of this package has entity {entity}"
        return [], f"{recv} binds no mapper or entity type statically"

    # ------------------------------------------------------------ statements
    def _statement(self, mp: PlusMapper, method: str, explicit: dict[str, "StageStatement"]) -> "StageStatement":
        stable = f"{mp.binary.replace('$', '.')}.{method}"
        if stable in explicit:
            return explicit[stable]
        if stable in self.made:
            return self.made[stable]
        op = mp.statements[method]
        seg = self.p.seg(mp.path, mp.lines[0], mp.lines[1])
        st = MapperStatement(method, op, {}, SqlNode("script"), mp.lines[0], mp.lines[1])
        s = StageStatement(stable, ids.entity_record_id("SQL_STATEMENT", stable), seg, mp.path, st)
        attrs: dict[str, Any] = {"operation": op, "source": "MYBATIS_PLUS", "namespace": mp.binary.replace("$", "."),
                                 "statement_id": method, "inherited_from": mp.supertype,
                                 "entity": mp.entity.name if mp.entity else None}
        if mp.entity is None:
            s.status = "UNSUPPORTED"
            s.reason = f"{mp.binary} names no entity type for {mp.supertype}; its table is not known"
        else:
            table, schema, basis, expr, display = self._table(mp.entity)
            attrs["table_name_basis"] = basis
            s.uses.append(TableUse(table, schema, op in _WRITE_OPS, op, set(), set(), expression=expr,
                               name_basis=basis, display=display))
            if table is None:
                s.status, s.reason = "PARTIAL", "the entity's table name does not fold"
            elif method in mp.partial:
                s.status, s.reason = "PARTIAL", (f"{method} joins the tables a MyBatis-Plus-Join wrapper names at "
                                                 "run time; only the mapper's own table is known")
                s.code = "SQL_UNSUPPORTED"
        attrs["parse_status"] = s.status
        if s.reason:
            attrs["reason"] = s.reason
        self.stage.record_plain_statement(mp.module, s, attrs)
        self.made[stable] = s
        return s

    def _table(self, entity: TypeOf) -> tuple[str | None, str | None, str, str | None, str | None]:
        """``(table name or None, schema, basis, unfolded placeholder or expression, how to show it)``
        of an entity (a ``${key}`` shows as itself, any other expression as written). The configured
        table prefix applies to convention names, and to ``@TableName`` ones with keepGlobalPrefix."""
        prefix, prefix_known = self._db_config("table-prefix")
        default_schema = self._db_config("schema")[0]
        c = self.table_names.get(entity.name)
        uses_prefix = c is None
        if c is not None:
            rt = self.p.resolve(c["roles"]["table"][0])
            schema = next((o.value for o in self.p.role(c, "schema") if o.value), None) or default_schema
            keep = next((o.value for o in self.p.role(c, "keep_prefix") if o.value), "false")
            uses_prefix = keep.strip().lower() == "true"
            if rt.value is None or rt.status not in ("RESOLVED", "DEFAULT_ONLY") or not rt.value.strip():
                expr = rt.expression or "?"
                m = _ONE_PLACEHOLDER.match(expr)
                return None, schema, "TABLE_NAME", (m.group(1) if m else expr), (None if m else expr)
            name, basis = rt.value.strip(), "TABLE_NAME"
            if "." in name:  # @TableName("archive.t_order"): schema-qualified, as SQL text would be
                schema, name = name.rsplit(".", 1)
        else:
            simple = entity.name.rsplit(".", 1)[-1].rsplit("$", 1)[-1]
            name, basis = convention_table(simple, "", (self._db_config("table-underline")[0] or "true").lower() != "false",
                                           (self._db_config("capital-mode")[0] or "false").lower() == "true"), "CONVENTION"
            schema = default_schema
        if uses_prefix and not prefix_known:
            key = _DB_CONFIG + "table-prefix"
            return None, schema, basis, key, f"${{{key}}}{name}"
        return (prefix or "") + name if uses_prefix else name, schema, basis, None, None

    def _db_config(self, key: str) -> tuple[str | None, bool]:
        """A ``mybatis-plus.global-config.db-config.*`` value of the package (stripped) and whether it is
        known: a key the configuration does not set is known to be absent; one it sets to a value that
        does not resolve is not known."""
        if self.p.config is None:
            return None, True
        got = self.p.config.get(_DB_CONFIG + key)
        if got.status == "RESOLVED":
            return (got.value.strip() or None) if got.value else None, True
        return None, got.status == "UNKNOWN" and got.entry is None  # no source sets it
