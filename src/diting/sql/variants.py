"""A mapper statement's dynamic-SQL variants and their lineage (docs/sql.md).

Each statement is expanded into its variants (sql/dynamic.py) and each variant parsed by sqlglot
(sql/lineage.py); a conditional fragment holding a ``${}`` outside a table position is left out
of parsing. The result is memoised on the statement for as long as its includes find the same
fragments, and :func:`warm_lineage` fills those memos for all mappers before package workers fork.
"""

from __future__ import annotations

from typing import Any

from diting.sql.dynamic import (MARKER, MAX_RENDER_ELEMENTS, MAX_RENDER_NESTING, MAX_VARIANTS, Expansion, expand,
                                fragment_lookup)
from diting.sql.lineage import Lineage, analyze, known, prime
from diting.sql.mybatis import MapperFile, SqlNode


def statement_lineage(body: SqlNode, ns: str, lookup, dialect: str,
                      first: tuple[Expansion, dict[tuple[str, str], int | None]] | None = None
                      ) -> tuple[Expansion, set[str], list[tuple[Any, Lineage]]]:
    """A statement's variants and their lineage: ``(expansion, fragments left out, [(variant,
    lineage)])``. A ``${}`` outside a table position inside a conditional fragment leaves that
    fragment out of parsing (it becomes an UNRESOLVED ledger item); a marker is in a table position
    only when a parsed variant shows it in a table name."""
    memo = body.__dict__.setdefault("_lineage", {})
    hit = memo.get((ns, dialect))
    if hit is not None and all(_node_id(lookup(n, r)) == nid for (n, r), nid in hit[0].items()):
        return hit[1]
    used: dict[tuple[str, str], int | None] = {}
    recording = _recorder(lookup, used)
    if first is not None:  # the first expansion is already made, with the fragments it looked up
        used.update(first[1])
    result = _statement_lineage(body, ns, recording, dialect, first[0] if first is not None else None)
    memo[(ns, dialect)] = (used, result)  # valid wherever the same includes find the same fragments
    return result


def budget_reason(exp_: Expansion) -> str:
    """Why an expansion stopped short: too many variants, or too many (or too deeply nested) elements."""
    if len(exp_.variants) >= MAX_VARIANTS:
        return f"more than {MAX_VARIANTS} dynamic-SQL variants"
    return (f"more than {MAX_RENDER_ELEMENTS} dynamic-SQL elements (<include> fan-out) or elements nested more "
            f"than {MAX_RENDER_NESTING} deep")


def _recorder(lookup, used: dict[tuple[str, str], int | None]):
    """``lookup`` that notes in ``used`` which fragment (by identity) each (namespace, refid) found."""

    def recording(n: str, r: str) -> tuple[str, SqlNode] | None:
        got = lookup(n, r)
        used[(n, r)] = _node_id(got)
        return got

    return recording


def _node_id(got: tuple[str, SqlNode] | None) -> int | None:
    return id(got[1]) if got is not None else None


def _statement_lineage(body: SqlNode, ns: str, lookup, dialect: str, first: Expansion | None = None
                       ) -> tuple[Expansion, set[str], list[tuple[Any, Lineage]]]:
    exp_ = first if first is not None else expand(body, ns, lookup, dialect=dialect)
    dropped = _dropped_fragments(exp_, dialect)
    if dropped:
        exp_ = expand(body, ns, lookup, dropped, dialect)
    return exp_, dropped, [(v, analyze(v.sql, dialect)) for v in exp_.variants]


def _dropped_fragments(exp_: Expansion, dialect: str) -> set[str]:
    """Conditional fragments holding a ``${}`` that no parsed variant shows in a table name."""
    dropped: set[str] = set()
    for v in exp_.variants:
        if not any(frag is not None for _, frag in v.markers.values()):
            continue
        got = analyze(v.sql, dialect)
        in_tables = {int(n) for u in got.tables for n in MARKER.findall(u.name)} if got.status == "PARSED" else set()
        for n, (_, frag) in v.markers.items():
            if n not in in_tables and frag is not None:
                dropped.add(frag)
    return dropped


def mapper_fragments(mappers: list[MapperFile]) -> dict[tuple[str, str], SqlNode]:
    """The ``<sql>`` fragments of MyBatis mappers by (namespace, id); the first of a repeated id wins."""
    out: dict[tuple[str, str], SqlNode] = {}
    for m in mappers:
        if m.dialect == "MYBATIS" and m.namespace:
            for fid, node in m.fragments.items():
                out.setdefault((m.namespace, fid), node)
    return out


def warm_lineage(mappers: list[MapperFile], parse_many=None, dialect: str = "mysql") -> int:
    """Parse every statement of ``mappers`` once (fragments looked up across all of them), filling
    the lineage memo before package workers fork, so packages that share a mapper module do not each
    parse it again. ``parse_many(chunks)`` maps :func:`analyze_many` over chunks of ``(text,
    dialect)`` (in workers); the texts of two rounds — the variants, then the variants left once
    ``${}`` fragments are dropped — go through it. Returns the number of statements. Results never
    depend on it: it only fills memos."""
    lookup = fragment_lookup(mapper_fragments(mappers))
    stmts = [(st.body, m.namespace) for m in mappers if m.dialect == "MYBATIS" and m.namespace for st in m.statements]
    first: list[tuple[Expansion, dict[tuple[str, str], int | None]]] = []
    for body, ns in stmts:
        used: dict[tuple[str, str], int | None] = {}
        first.append((expand(body, ns, _recorder(lookup, used), dialect=dialect), used))
    if parse_many is not None:
        for dropping in (False, True):
            texts: set[str] = set()
            for (body, ns), (e, _) in zip(stmts, first):
                if dropping:
                    if not any(v.markers for v in e.variants):
                        continue  # no ${}: nothing to drop, the first round parsed its texts
                    gone = _dropped_fragments(e, dialect)
                    e = expand(body, ns, lookup, gone, dialect) if gone else e
                texts.update(v.sql for v in e.variants)
            todo = sorted((t, dialect) for t in texts if not known(t, dialect))
            chunks = [todo[i::8] for i in range(8) if todo[i::8]]
            for got in parse_many(chunks):
                prime(got)
    for (body, ns), got in zip(stmts, first):
        statement_lineage(body, ns, lookup, dialect, got)
    return len(stmts)
