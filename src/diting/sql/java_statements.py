"""SQL statements written in Java (docs/sql.md): the ``@Select`` / ``@Insert`` / ``@Update`` /
``@Delete`` (and ``@SelectKey``) annotations of mapper methods, and the SQL argument of a library
call (``jdbcTemplate.update("…", …)``, ``connection.prepareStatement("…")``), from the package's
SQL_ANNOTATION and SQL_CALL candidates. They go through the SQL stage like a mapper file's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from diting.ir import ids
from diting.probes.resolved import ResolvedText
from diting.sql.dynamic import Expansion
from diting.sql.mybatis import MapperFile, MapperStatement, SqlNode, script_body
from diting.sql.statements import StageStatement

if TYPE_CHECKING:
    from diting.probes.matches import Candidate, Outcome
    from diting.sql.emit import SqlStage


class JavaStatements:
    """The statements of one package's SQL annotations and SQL calls."""

    def __init__(self, stage: "SqlStage") -> None:
        self.stage = stage
        self.p = stage.p
        self.rs = stage.rs

    def build(self, stmts: list[StageStatement]) -> list[StageStatement]:
        """Record the statements of the package's SQL annotations and SQL calls; returns them
        (``stmts``: the statements recorded so far, from mapper files). An annotation repeating a
        declared id is a duplicate (:meth:`SqlStage.declare`); a call site already recorded is
        not recorded again."""
        out: list[StageStatement] = []
        for c in self.p.ctx.by_emit.get("SQL_ANNOTATION", []):
            if c.get("member") and not self.stage.declare(c["module"], f"{c['type']['binary'].replace('$', '.')}."
                                                          f"{self._annotation_id(c)}", c["path"], *c["lines"]):
                continue
            got = self._annotation_statement(c)
            if got is not None:
                out.append(got)
        for c in sorted(self.p.ctx.by_emit.get("SQL_CALL", []), key=lambda c: (c["call"]["callsite_id"], c["rule"])):
            got = self._call_statement(c, {s.stable for s in stmts + out})
            if got is not None:
                out.append(got)
        return out

    def _annotation_statement(self, c: Candidate) -> StageStatement | None:
        """A statement of a ``@Select``/``@Insert``/``@Update``/``@Delete`` mapper method: its string
        parts folded and joined with spaces (``<script>`` bodies are dynamic SQL); a ``@*Provider``
        builds its SQL in code and is SQL_UNSUPPORTED."""
        rule = self.p.s.rules.by_id[c["rule"]]
        m = c.get("member")
        if m is None:
            return None
        ns = c["type"]["binary"].replace("$", ".")
        sid = self._annotation_id(c)
        parent = m["name"] if sid != m["name"] else None
        line, end = c["lines"]
        kind = str(rule.emits.attributes.get("operation", "SELECT"))
        mf = MapperFile(c["path"], "MYBATIS", ns)
        # the folded text as written: its #{…} and ${…} are MyBatis's, never config placeholders
        parts = c.get("roles", {}).get("sql", [])
        bad = next((p for p in parts if "value" not in p), None)
        if rule.emits.attributes.get("provider") or bad is not None or not parts:
            reason = ("its SQL is built by a provider method at run time" if rule.emits.attributes.get("provider")
                      else f"the SQL {bad.get('unresolved', bad.get('ref', '?')) if bad else '(none)'} does not fold")
            st = MapperStatement(sid, kind, {}, SqlNode("script"), line, end, parent_id=parent)
            return self._unsupported(c, mf, st, f"{ns}.{sid}", self.p.seg(c["path"], line, end), reason, "ANNOTATION")
        text = " ".join(str(p["value"]) for p in parts)
        body = script_body(text, line, end)
        return self.stage.statement(c["module"], mf, MapperStatement(sid, kind, {}, body, line, end, parent_id=parent),
                                    source="ANNOTATION")

    def _annotation_id(self, c: Candidate) -> str:
        """The statement id of annotation SQL: the method's name; ``{name}!selectKey`` for a ``@SelectKey``."""
        rule = self.p.s.rules.by_id[c["rule"]]
        name = c["member"]["name"]
        return f"{name}!selectKey" if rule.emits.attributes.get("select_key") else name

    def _call_statement(self, c: Candidate, done: set[str]) -> StageStatement | None:
        """A statement whose SQL is an argument of a library call (``jdbcTemplate.update("…", …)``,
        ``connection.prepareStatement("…")``): named by its call site, its operation that of the
        parsed SQL, bound from the calling method (``binding = CALL_SITE``). An argument that is no
        string (a lambda, a PreparedStatementCreator) is no SQL. Java values concatenated into the
        text (``"… where id = " + id``) stand as ``${java:…}`` markers: a bind elsewhere, a
        concatenated suffix (CONCATENATION) or DYNAMIC_TABLE_NAME in a table position. A string that
        does not fold at all is SQL_UNSUPPORTED."""
        call, m = c["call"], c["member"]
        kind = call.get("arg_kinds", {}).get("sql")
        typ = call.get("arg_types", {}).get("sql")
        if kind in ("lambda", "ref") or (typ is not None and typ not in ("java.lang.String", "java.lang.CharSequence")):
            return None
        stable = call["callsite_id"]
        if stable in done:
            return None
        line, end = c["lines"]
        mf = MapperFile(c["path"], "MYBATIS", None)
        text, reason = self._call_sql(c)
        seg = self.p.seg(c["path"], line, end)
        if text is None:
            st = MapperStatement(call["name"], "UNKNOWN", {}, SqlNode("script"), line, end)
            s = self._unsupported(c, mf, st, stable, seg, reason, "CALL")
        else:
            st = MapperStatement(call["name"], "UNKNOWN", {}, script_body(text, line, end), line, end)
            s = self.stage.statement(c["module"], mf, st, source="CALL", stable=stable)
        self.rs.relation("BINDS_TO", m["rid"], m["stable"], target_rid=s.rid, target_key=s.stable, status="RESOLVED",
                         evidence=[seg], ordinal=call["ordinal"], callsite_id=call["callsite_id"],
                         attributes={"binding": "CALL_SITE", "call": call["name"],
                                     "receiver_type": call["receiver_type"]})
        return s

    def _unsupported(self, c: Candidate, mf: MapperFile, st: MapperStatement, stable: str, seg: str, reason: str,
                     source: str) -> StageStatement:
        """Record statement ``stable`` of candidate ``c`` whose SQL diting cannot read: UNSUPPORTED
        for ``reason``, with no variants."""
        s = StageStatement(stable, ids.entity_record_id("SQL_STATEMENT", stable), seg, c["path"], st,
                           status="UNSUPPORTED", reason=reason, expansion=Expansion([], []))
        self.stage.stats.discovered += 1
        self.stage.record_statement(c["module"], mf, s, [], source=source)
        return s

    def _call_sql(self, c: Candidate) -> tuple[str | None, str]:
        """The SQL text of a call's ``sql`` argument with the package's configuration applied, Java
        values concatenated into it as ``${java:…}``; ``(None, reason)`` when it does not fold."""
        template = c.get("attrs", {}).get("sql_template")
        if template:
            out = []
            for part in template:
                if "runtime" in part:
                    out.append("${java:" + part["runtime"].replace("{", "(").replace("}", ")") + "}")
                    continue
                rt = self._sql_part(part)
                if rt.value is None:
                    return None, f"the SQL part {rt.expression} does not fold ({rt.reason})"
                out.append(rt.value)
            return "".join(out), ""
        outs = [self._sql_part(o) for o in c.get("roles", {}).get("sql", [])]
        bad = next((o for o in outs if o.value is None), None)
        if bad is not None or not outs:
            return None, (f"the SQL argument ({bad.expression if bad else 'none'}) is built at run time and "
                          "does not fold")
        if len(outs) > 1:
            return None, f"the SQL folds to {len(outs)} alternatives"
        return outs[0].value, ""

    def _sql_part(self, outcome: Outcome) -> "ResolvedText":
        """A folded part of JDBC SQL: configuration values (``@Value`` fields) resolve their
        ``${…}``; a string literal is sent as written, so one holding ``${``/``#{`` is no SQL diting
        can read (never resolved as a placeholder, never a MyBatis marker)."""
        if "value" in outcome and (not outcome.get("placeholders") or outcome.get("basis") != "CONFIG"):
            text = str(outcome["value"])
            if "${" in text or "#{" in text:
                return ResolvedText("UNKNOWN", None, expression=text[:200],
                                    reason="JDBC sends ${…} and #{…} in a string literal as written; no SQL "
                                           "database reads them")
            return ResolvedText("RESOLVED", text)
        return self.p.resolve(outcome)
