"""Table lineage of one SQL text through sqlglot (docs/sql.md §3).

:func:`analyze` parses a statement (MySQL by default) and returns every table it touches with
the operation: the written table of an INSERT / REPLACE / UPSERT / UPDATE / DELETE, and every
table read — by a SELECT, and inside a write (``INSERT … SELECT``, joins and subqueries of an
UPDATE or DELETE). CTE names are not tables. Columns are kept when the text names them: the
INSERT column list, the SET columns of an UPDATE, the columns a single-table or aliased SELECT
reads, and per table the columns its WHERE constrains (for the shard-key check).

``REPLACE INTO`` is a MySQL statement sqlglot returns as a generic Command; it is parsed as the
INSERT it is shaped like and recorded as REPLACE. A text sqlglot cannot parse is ``PARSE_FAILED``;
one it returns as a generic Command (DDL, ``CALL``, vendor syntax) is ``UNSUPPORTED`` — both are
failures, never "touches no table".
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

logging.getLogger("sqlglot").setLevel(logging.ERROR)

_REPLACE = re.compile(r"^\s*replace\s+(?:low_priority\s+|delayed\s+)?into\b", re.I)
_WRITES = {exp.Insert: "INSERT", exp.Update: "UPDATE", exp.Delete: "DELETE", exp.Merge: "UPSERT"}
#: the JDBC escape syntax of a stored-procedure call (``{call p(?)}``, ``{? = call f(?)}``)
_CALL_ESCAPE = re.compile(r"^\{\s*(?:\?\s*=\s*)?call\b", re.I)


@dataclass
class TableUse:
    """One table position: ``name`` as written (without quotes), ``db`` its qualifier or None."""

    name: str
    db: str | None
    operation: str  # SELECT, INSERT, UPDATE, DELETE, REPLACE, UPSERT
    write: bool
    columns: set[str] = field(default_factory=set)
    where_columns: set[str] = field(default_factory=set)


@dataclass
class Lineage:
    """``status`` PARSED, PARSE_FAILED or UNSUPPORTED (with ``reason``)."""

    status: str
    tables: list[TableUse] = field(default_factory=list)
    reason: str = ""
    operation: str | None = None


#: lineage by (text, dialect): a pure function of its key, so a scan's workers may share it
_MEMO: dict[tuple[str, str], "Lineage"] = {}
MAX_MEMO = 65536


def analyze(sql: str, dialect: str = "mysql") -> Lineage:
    """Tables of ``sql`` (see the module docstring). Memoised per (text, dialect): packages that
    share a mapper module parse its statements once; callers must not change the result."""
    got = _MEMO.get((sql, dialect))
    if got is None:
        got = _analyze(sql, dialect)
        if len(_MEMO) < MAX_MEMO:
            _MEMO[(sql, dialect)] = got
    return got


def forget() -> None:
    """Empty the memo (a benchmark measuring parse cost calls it between rounds)."""
    _MEMO.clear()


def known(sql: str, dialect: str) -> bool:
    """Whether the lineage of ``sql`` in ``dialect`` is already memoised in this process."""
    return (sql, dialect) in _MEMO


def prime(results: list[tuple[str, str, "Lineage"]]) -> None:
    """Add lineage computed elsewhere (a worker) to the memo."""
    for sql, dialect, lineage in results:
        if len(_MEMO) < MAX_MEMO:
            _MEMO[(sql, dialect)] = lineage


def analyze_many(items: list[tuple[str, str]]) -> list[tuple[str, str, "Lineage"]]:
    """``analyze`` over ``(text, dialect)`` pairs, for a worker to hand back to :func:`prime`."""
    return [(sql, dialect, analyze(sql, dialect)) for sql, dialect in items]


def _analyze(sql: str, dialect: str) -> Lineage:
    text = sql.strip().rstrip(";")
    if not text:
        return Lineage("UNSUPPORTED", reason="empty statement")
    if _CALL_ESCAPE.match(text):
        return Lineage("UNSUPPORTED", reason="a stored-procedure call: the tables it touches are in the database")
    replace = bool(_REPLACE.match(text))
    if replace:
        text = _REPLACE.sub("INSERT INTO", text, count=1)
    try:
        trees = [t for t in sqlglot.parse(text, read=dialect) if t is not None]
    except SqlglotError as exc:
        return Lineage("PARSE_FAILED", reason=str(exc).splitlines()[0][:300])
    except RecursionError:
        return Lineage("PARSE_FAILED", reason="nesting too deep for the parser")
    if not trees:
        return Lineage("UNSUPPORTED", reason="empty statement")
    out = Lineage("PARSED")
    for tree in trees:
        if isinstance(tree, exp.Command):
            return Lineage("UNSUPPORTED", reason=f"{tree.this!s} statements are not analysed".strip()[:200])
        got = _tables(tree, replace)
        if got is None:
            return Lineage("UNSUPPORTED", reason=f"{type(tree).__name__} statements are not analysed")
        op, uses = got
        out.operation = out.operation or op
        out.tables.extend(uses)
    return out


def _name(t: exp.Table) -> tuple[str, str | None]:
    return t.name, (t.db or None)


def _tables(tree: exp.Expression, replace: bool) -> tuple[str, list[TableUse]] | None:
    """The operation of one statement and each table it touches (a CTE name is none); None for a
    statement that is neither a query nor a write."""
    op = _operation(tree, replace)
    if op is None:
        return None
    ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
    written, named_only = _written_tables(tree)
    written_ids = {id(t) for t in written}
    aliases: dict[str, tuple[str, str | None]] = {}
    all_tables = [t for t in tree.find_all(exp.Table)
                  if t.name and t.name.lower() not in ctes and id(t) not in named_only]
    for t in all_tables:
        aliases[(t.alias or t.name).lower()] = _name(t)
    uses: dict[tuple[str, str | None, bool], TableUse] = {}
    for t in all_tables:
        w = id(t) in written_ids or any(_name(t) == _name(x) and t is x for x in written)
        key = (*_name(t), w)
        if key not in uses:
            uses[key] = TableUse(t.name, t.db or None, op if w else "SELECT", w)
    _written_columns(tree, uses, aliases)
    _read_columns(tree, uses, aliases)
    _where_columns(tree, uses, aliases)
    return op, sorted(uses.values(), key=lambda u: (u.name, u.db or "", u.write))


def _operation(tree: exp.Expression, replace: bool) -> str | None:
    """SELECT for a query, else the write: INSERT (REPLACE for a MySQL ``REPLACE INTO``, UPSERT with
    an ``ON CONFLICT`` / ``ON DUPLICATE KEY`` clause), UPDATE, DELETE, UPSERT (MERGE); None for
    another statement."""
    op = "SELECT"
    for cls, name in _WRITES.items():
        if isinstance(tree, cls):
            op = name
            break
    else:
        if not isinstance(tree, (exp.Select, exp.Union, exp.Subquery)) and not isinstance(tree, exp.Query):
            return None
    if isinstance(tree, exp.Insert):
        if replace:
            op = "REPLACE"
        elif tree.args.get("conflict") is not None:
            op = "UPSERT"
    return op


def _written_tables(tree: exp.Expression) -> tuple[list[exp.Table], set[int]]:
    """The table nodes a write writes (an UPDATE's joined tables among them), and the ids of the
    nodes that only name another table (the targets of a multi-table DELETE)."""
    written: list[exp.Table] = []
    if isinstance(tree, exp.Insert):
        target = tree.this.this if isinstance(tree.this, exp.Schema) else tree.this
        if isinstance(target, exp.Table):
            written.append(target)
    elif isinstance(tree, exp.Update):
        if isinstance(tree.this, exp.Table):
            written.append(tree.this)
        for j in tree.this.find_all(exp.Table) if not isinstance(tree.this, exp.Table) else []:
            written.append(j)
    named_only: set[int] = set()
    if isinstance(tree, exp.Delete):
        targets = [t for t in tree.args.get("tables") or [] if isinstance(t, exp.Table)]
        if targets:  # MySQL ``DELETE a, b FROM x a JOIN y b …``: the targets name FROM/JOIN tables
            named_only = {id(t) for t in targets}
            written += _delete_targets(tree, targets, named_only)
        elif isinstance(tree.this, exp.Table):
            written.append(tree.this)
    elif isinstance(tree, exp.Merge) and isinstance(tree.this, exp.Table):
        written.append(tree.this)  # MERGE INTO target USING source: the source is read
    return written, named_only


def _delete_targets(tree: exp.Delete, targets: list[exp.Table], named_only: set[int]) -> list[exp.Table]:
    """The FROM / JOIN tables a multi-table DELETE's targets name, by table name or alias."""
    real: dict[str, exp.Table] = {}
    for t in tree.find_all(exp.Table):
        if id(t) not in named_only and t.name:
            real.setdefault(t.name.lower(), t)
            if t.alias:
                real[t.alias.lower()] = t
    return [r for t in targets if (r := real.get(t.name.lower())) is not None]


def _written_columns(tree: exp.Expression, uses: dict[tuple[str, str | None, bool], TableUse],
                     aliases: dict[str, tuple[str, str | None]]) -> None:
    """The columns a write names: an INSERT's column list, the columns an UPDATE's SET assigns."""
    if isinstance(tree, exp.Insert) and isinstance(tree.this, exp.Schema):
        cols = {c.name for c in tree.this.expressions if isinstance(c, exp.Identifier) or hasattr(c, "name")}
        for u in uses.values():
            if u.write:
                u.columns |= {c for c in cols if c}
    if isinstance(tree, exp.Update):
        for e in tree.expressions:
            if isinstance(e, exp.EQ) and isinstance(e.this, exp.Column):
                _assign(uses, aliases, e.this, write=True)


def _read_columns(tree: exp.Expression, uses: dict[tuple[str, str | None, bool], TableUse],
                  aliases: dict[str, tuple[str, str | None]]) -> None:
    """The columns the statement reads, each on the table its qualifier (an alias or table name)
    names, an unqualified one when a single table is read."""
    single = _names([u for u in uses.values() if not u.write])
    for col in tree.find_all(exp.Column):
        if isinstance(col.parent, exp.EQ) and isinstance(tree, exp.Update) and col.parent.parent is tree and \
                col.parent.this is col:
            continue  # the column a SET assigns (the value side is read)
        target = _owner(col, aliases, single)
        if target is not None:
            for u in uses.values():
                if (u.name, u.db) == target and not u.write:
                    u.columns.add(col.name)


def _where_columns(tree: exp.Expression, uses: dict[tuple[str, str | None, bool], TableUse],
                   aliases: dict[str, tuple[str, str | None]]) -> None:
    """The columns the statement's WHERE constrains, per table (read or written)."""
    every = _names(list(uses.values()))
    where = tree.args.get("where")
    if where is not None:
        for col in where.find_all(exp.Column):
            target = _owner(col, aliases, every)
            if target is not None:
                for u in uses.values():
                    if (u.name, u.db) == target:
                        u.where_columns.add(col.name)


def _names(candidates: list[TableUse]) -> set[tuple[str, str | None]]:
    return {(u.name, u.db) for u in candidates}


def _owner(col: exp.Column, aliases: dict[str, tuple[str, str | None]], names: set[tuple[str, str | None]]
           ) -> tuple[str, str | None] | None:
    """The table an unqualified column belongs to when only one of ``names`` can own it."""
    if col.table:
        return aliases.get(col.table.lower())
    return next(iter(names)) if len(names) == 1 else None


def _assign(uses, aliases, col: exp.Column, write: bool) -> None:
    target = _owner(col, aliases, _names([u for u in uses.values() if u.write]))
    for u in uses.values():
        if u.write and (target is None or (u.name, u.db) == target):
            u.columns.add(col.name)
