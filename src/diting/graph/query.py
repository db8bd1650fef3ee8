"""Queries of the relation graph (docs/graph.md §6, §7): SQL against a built graph with bounds on rows,
value sizes and time, and the canned queries shipped in ``graph/queries/`` with their parameters,
whose values may name something in the graph (a service, a topic …) that is matched and resolved."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from diting.errors import UserError
from diting.interrupts import import_native
from diting.graph.store import interrupted, with_graph
from diting.limits import DEFAULT_MAX_ROWS, DEFAULT_MAX_VALUE_CHARS, DEFAULT_QUERY_TIMEOUT


@dataclass
class SavedQuery:
    """A canned query shipped in ``diting/graph/queries/{name}.sql``: its description (the leading
    ``--`` comment lines), its ``$name`` parameters, its SQL, and for a parameter that names
    something in the graph what it names and the SQL listing every such name (a
    ``-- names PARAM (WHAT): SELECT …`` line), for :func:`resolve_params`."""

    name: str
    description: str
    params: list[str]
    sql: str
    #: parameter → (what it names, SQL listing the graph's names of it)
    names: dict[str, tuple[str, str]] = field(default_factory=dict)


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
        names = {m.group(1): (m.group(2) or m.group(1), m.group(3)) for h in head
                 if (m := re.fullmatch(r"names (\w+)(?: \(([^)]+)\))?: (.+)", h))}
        desc = " ".join(h for h in head if not h.startswith(("params:", "names ")))
        out[f.name[:-4]] = SavedQuery(f.name[:-4], desc, params, text, names)
    return out


def _bare(name: str) -> str:
    """A name without its scheme: ``table://t_order`` → ``t_order``."""
    return name.split("://", 1)[1] if "://" in name else name


def match_name(value: str, known: list[str], what: str) -> str:
    """The name among ``known`` (the graph's) that ``value`` gives: itself, or written without its
    scheme (``t_order`` for ``table://t_order``), or with the ``@datasource`` the tool prints after a
    table (``table://t_order@trade``). Raises :class:`UserError` when it names none ("no table named
    …; did you mean …?", the close names from ``known``) or several (each named)."""
    import difflib

    from diting.safe_text import printable
    shown = printable(value)  # one line, whatever the value holds
    have = set(known)
    head, at, tail = value.rpartition("@")
    forms = [value] + ([head] if at and head and re.fullmatch(r"[\w.\-]+", tail) else [])
    for f in forms:
        if f in have:
            return f
    by_bare: dict[str, list[str]] = {}
    for k in sorted(have):
        by_bare.setdefault(_bare(k), []).append(k)
    for f in forms:
        hits = by_bare.get(f, []) if "://" not in f else []
        if len(hits) == 1:
            return hits[0]
        if hits:
            raise UserError(f"{what} {shown!r} names several: {', '.join(hits)}; give one")
    if not have:
        raise UserError(f"no {what} named {shown}: the graph has none")
    lower = {b.lower(): ks for b, ks in by_bare.items()}
    near = [k for b in difflib.get_close_matches(_bare(forms[-1]).lower(), sorted(lower), n=3, cutoff=0.6)
            for k in lower[b]][:3]
    raise UserError(f"no {what} named {shown}" + (f"; did you mean {' or '.join(near)}?" if near else ""))


def resolve_params(db: Path, names: dict[str, tuple[str, str]],
                   params: dict[str, str]) -> tuple[dict[str, str], list[str]]:
    """The parameters of a canned query with each one that names something in the graph (``names``:
    parameter → (what it names, SQL listing the graph's names of it), :attr:`SavedQuery.names`)
    replaced by the name it gives (:func:`match_name`), and a note for each one rewritten
    (``table=t_order is table://t_order``). Raises :class:`UserError` for a value that names
    nothing, or several things."""
    wanted = {p: how for p, how in names.items() if p in params}
    if not wanted:
        return dict(params), []
    known = with_graph(db, lambda con: {p: [r[0] for r in con.execute(sql).fetchall() if r[0] is not None]
                                        for p, (_, sql) in wanted.items()})
    out, notes = dict(params), []
    for p in sorted(wanted):
        out[p] = match_name(params[p], known[p], wanted[p][0])
        if out[p] != params[p]:
            notes.append(f"{p}={params[p]} is {out[p]}")
    return out, notes


@dataclass(frozen=True)
class QueryLimits:
    """The bounds of one sandboxed query (None: no bound): rows returned (more are cut, and
    :attr:`QueryResult.truncated` says so), seconds of run time (then DuckDB is interrupted and the
    query is a :class:`UserError`), and characters of one text value (a longer one is cut, its length
    said in the value; :attr:`QueryResult.cut_values` counts them)."""

    max_rows: int | None = DEFAULT_MAX_ROWS
    timeout: int | None = DEFAULT_QUERY_TIMEOUT
    max_value_chars: int | None = DEFAULT_MAX_VALUE_CHARS


#: no bound at all (diting's own queries)
NO_LIMITS = QueryLimits(None, None, None)


@dataclass
class QueryResult:
    """Column names and rows of a query, whether rows were cut at ``max_rows`` and how many text
    values were cut at ``max_value_chars``."""

    headers: list[str]
    rows: list[tuple]
    truncated: bool = False
    cut_values: int = 0


def query(db: Path, sql: str, params: dict[str, str] | None = None) -> tuple[list[str], list[tuple]]:
    """``(column names, rows)`` of :func:`run_query` with no limits (diting's own SQL, or a caller
    that bounds it otherwise). Raises :class:`UserError` as :func:`run_query` does."""
    got = run_query(db, sql, params, NO_LIMITS)
    return got.headers, got.rows


def run_query(db: Path, sql: str, params: dict[str, str] | None = None,
              limits: QueryLimits = QueryLimits()) -> QueryResult:
    """Run ``sql`` on a read-only connection with ``$name`` parameters (no file, network or extension
    access) within ``limits``: at most ``max_rows`` rows are read (DuckDB stops there), a text value
    (VARCHAR, JSON) longer than ``max_value_chars`` is cut in the database and ends in ``… (N more
    characters)``, and a query still running after ``timeout`` seconds is interrupted. A value is
    still computed whole before it is cut (the timeout bounds that).

    Raises :class:`UserError` with DuckDB's first line for a SQL error, SQL without a statement
    (blanks, comments, semicolons), a parameter the SQL does not use or lacks, or a query that ran
    over its timeout."""
    import threading
    used = set(re.findall(r"\$([A-Za-z_][A-Za-z0-9_]*)", sql))
    if used - set(params or {}):
        raise UserError("the query needs " + ", ".join(f"--param {n}=VALUE" for n in sorted(used - set(params or {}))))
    if set(params or {}) - used:
        raise UserError("the query has no parameter " + ", ".join(f"${n}" for n in sorted(set(params or {}) - used)))

    def run(con) -> QueryResult:
        duckdb = import_native("duckdb")
        fired = threading.Event()

        def stop() -> None:
            fired.set()
            con.interrupt()
        timer = threading.Timer(limits.timeout, stop) if limits.timeout is not None else None
        if timer is not None:
            timer.daemon = True
            timer.start()
        try:
            rel = con.sql(sql, params=params) if params else con.sql(sql)
            if rel is None:  # DuckDB runs nothing and returns no relation for SQL without a statement
                raise UserError("the query holds no SQL statement (only blanks, comments or semicolons)")
            return _bounded_rows(rel, limits)
        except (duckdb.Error, RuntimeError) as exc:
            if fired.is_set() and interrupted(exc):
                raise UserError(f"the query ran longer than {limits.timeout} s and was stopped (--timeout "
                                f"{limits.timeout}); nothing was printed") from None
            raise
        finally:
            if timer is not None:
                timer.cancel()

    return with_graph(db, run, user_sql=True)


#: DuckDB types whose values are text the database can cut before they reach Python
_TEXT_TYPES = ("VARCHAR", "JSON")


#: the deepest nesting of lists, structs and maps a query's value may have to be printed (a table's
#: text and JSON are written by recursive code; DuckDB itself nests to about 1,000 levels)
MAX_VALUE_DEPTH = 100


def _refuse_deep_values(headers: list[str], rows: list[tuple]) -> None:
    """Raise :class:`UserError` naming the first value (row, column) nested deeper than
    :data:`MAX_VALUE_DEPTH` levels; walked with a stack of its own."""
    for r, row in enumerate(rows, 1):
        for c, value in enumerate(row):
            if not isinstance(value, (list, tuple, dict)):
                continue
            stack = [(value, 1)]
            while stack:
                v, depth = stack.pop()
                if depth > MAX_VALUE_DEPTH:
                    name = str(headers[c]) if c < len(headers) else str(c + 1)
                    name = name if len(name) <= 60 else f"{name[:57]}…"
                    raise UserError(f"row {r}, column {name}: a value nested "
                                    f"more than {MAX_VALUE_DEPTH} levels deep cannot be printed; select a part of it")
                items = v.values() if isinstance(v, dict) else v
                stack.extend((x, depth + 1) for x in items if isinstance(x, (list, tuple, dict)))


def _bounded_rows(rel, limits: QueryLimits) -> QueryResult:
    """The rows of relation ``rel`` within ``limits`` (see :func:`run_query`): its text columns cut in
    the database, at most ``max_rows`` + 1 rows read to learn whether there are more."""
    headers = list(rel.columns)
    n = limits.max_value_chars
    text = [i for i, t in enumerate(rel.types) if str(t) in _TEXT_TYPES] if n is not None else []
    if text:  # each text column's first n characters and its length, by position (names may repeat)
        cols = [f"left(CAST(#{i + 1} AS VARCHAR), {n})" if i in text else f"#{i + 1}" for i in range(len(headers))]
        rel = rel.select(", ".join(cols + [f"length(CAST(#{i + 1} AS VARCHAR))" for i in text]))
    rows = rel.limit(limits.max_rows + 1).fetchall() if limits.max_rows is not None else rel.fetchall()
    truncated = limits.max_rows is not None and len(rows) > limits.max_rows
    rows = rows[:limits.max_rows] if truncated else rows
    _refuse_deep_values(headers, rows)
    if n is None:
        return QueryResult(headers, rows, truncated)
    width = len(headers)
    cut = [0]
    out = []
    for row in rows:
        values = [_cut_value(v, n, cut) if i not in text else v for i, v in enumerate(row[:width])]
        for k, i in enumerate(text):
            length = row[width + k]
            if length is not None and length > n:
                values[i] = f"{values[i]}… ({length - n:,} more characters)"
                cut[0] += 1
        out.append(tuple(values))
    return QueryResult(headers, out, truncated, cut[0])


def _cut_value(value: Any, n: int, cut: list[int]) -> Any:
    """``value`` (a list, struct or map of the row, or bytes) with every string or bytes in it longer
    than ``n`` cut as a text column is (Python-side: nested values are not cut by the database);
    ``cut[0]`` counts the cuts."""
    if isinstance(value, (str, bytes)) and len(value) > n:
        cut[0] += 1
        more = f"… ({len(value) - n:,} more {'characters' if isinstance(value, str) else 'bytes'})"
        return value[:n] + (more if isinstance(value, str) else more.encode())
    if isinstance(value, (list, tuple)):
        return type(value)(_cut_value(v, n, cut) for v in value)
    if isinstance(value, dict):
        return {k: _cut_value(v, n, cut) for k, v in value.items()}
    return value
