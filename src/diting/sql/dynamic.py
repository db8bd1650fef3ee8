"""Dynamic SQL of a MyBatis statement: ``<include>`` expansion and the variant rule (docs/sql.md §2).

Variant 0 takes every ``<if>`` and the first ``<when>`` of each ``<choose>``; each further
``<when>``/``<otherwise>`` adds one variant (that choice, every other choice at its default);
``<foreach>`` is expanded once; at most :data:`MAX_VARIANTS` variants (then the statement is
BUDGET_EXHAUSTED and only the first variants are parsed). ``<where>``, ``<set>`` and ``<trim>``
apply their prefixes and overrides as MyBatis does. ``#{…}`` binds become ``?``. ``${…}``
becomes a marker identifier (``__dt{n}__``, :data:`MARKER`) whose expression is kept, so the
lineage stage can tell a dynamic table name from a dynamic fragment elsewhere.

Every ``<if>``, ``<when>`` and ``<otherwise>`` is a :class:`Fragment` with a structural branch
path (``where[0]/if[1]``, ``choose[0]/when[1]``, ``include[0]/if[0]``) — the SQL_IF / SQL_WHEN /
SQL_OTHERWISE ledger items of its statement.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from sqlglot.dialects.dialect import Dialect
from sqlglot.dialects.mysql import MySQL

from diting.sql.dialect import DEFAULT
from diting.sql.mybatis import SqlNode

MAX_VARIANTS = 64
#: include chains deeper than this are cut (a fragment bomb; a cycle is found before: the same fragment
#: twice on one chain)
MAX_INCLUDE_DEPTH = 16
#: dynamic-SQL elements one rendering visits at most (``<include>`` fan-out grows exponentially)
MAX_RENDER_ELEMENTS = 2_000
#: elements nested inside one another at most, across includes (the renderer recurses per level)
MAX_RENDER_NESTING = 150
MARKER = re.compile(r"__dt(\d+)__")
_BIND = re.compile(r"#\{[^{}]*\}")
_DOLLAR = re.compile(r"\$\{([^{}]*)\}")
_WS = re.compile(r"\s+")


@dataclass
class Fragment:
    """A conditional fragment of a statement: ``kind`` SQL_IF, SQL_WHEN or SQL_OTHERWISE."""

    path: str
    kind: str
    parent: str | None
    test: str | None
    line: int
    end_line: int
    #: the last line of the element's start tag (where its ``test`` ends)
    test_end_line: int = 0


@dataclass
class Variant:
    """One rendering of a statement: its SQL text, the fragments it takes, and the ``${}``
    expressions behind each marker (marker number → (expression, innermost fragment path or None))."""

    sql: str
    taken: list[str]
    markers: dict[int, tuple[str, str | None]] = field(default_factory=dict)


@dataclass
class Expansion:
    """The variants of a statement and everything learnt on the way."""

    variants: list[Variant]
    fragments: list[Fragment]
    budget_exhausted: bool = False
    #: refids of ``<include>`` that named no fragment (the include renders as nothing)
    missing_includes: list[str] = field(default_factory=list)
    #: ``<bind name value>`` of the statement
    binds: dict[str, str] = field(default_factory=dict)
    #: fragments that include each other: each cycle as the refids of its chain, the first again last
    #: (``("rec2", "rec3", "rec2")``); the include that closes it renders as nothing
    include_cycles: list[tuple[str, ...]] = field(default_factory=list)
    #: refids of ``<include>`` cut more than :data:`MAX_INCLUDE_DEPTH` fragments deep (render as nothing)
    includes_too_deep: list[str] = field(default_factory=list)

    def include_problem(self) -> str | None:
        """Why ``<include>`` left text out of the statement (a missing fragment, a cycle, a chain too
        deep), one clause each; None when every include rendered."""
        said = []
        if self.missing_includes:
            said.append(f"<include refid> names no fragment: {', '.join(self.missing_includes)}")
        for cycle in self.include_cycles:
            said.append(f"<include> fragments include each other: {' → '.join(cycle)}")
        if self.includes_too_deep:
            said.append(f"<include> chains deeper than {MAX_INCLUDE_DEPTH} fragments are cut at: "
                        f"{', '.join(self.includes_too_deep)}")
        return "; ".join(said) or None


Lookup = Callable[[str, str], tuple[str, SqlNode] | None]


def fragment_lookup(fragments: dict[tuple[str, str], SqlNode]) -> Lookup:
    """``lookup(ns, refid)`` over ``<sql>`` fragments by (namespace, id): a local refid first, then
    ``namespace.id`` of another mapper (MyBatis's rule)."""

    def lookup(ns: str, refid: str) -> tuple[str, SqlNode] | None:
        if (ns, refid) in fragments:
            return ns, fragments[(ns, refid)]
        fns, _, fid = refid.rpartition(".")
        return (fns, fragments[(fns, fid)]) if fns and (fns, fid) in fragments else None

    return lookup


class _Renderer:
    def __init__(self, lookup: Lookup, choices: dict[str, int], dropped: set[str], dialect: str) -> None:
        self.lookup = lookup
        self.dialect = dialect  # whose line comments are cut before whitespace is folded
        self.choices = choices  # choose path → branch index taken
        self.dropped = dropped  # fragment paths left out (their ${} is outside a table position)
        self.taken: list[str] = []
        self.markers: dict[int, tuple[str, str | None]] = {}
        self.fragments: list[Fragment] = []
        self.chooses: list[tuple[str, int]] = []
        self.missing: list[str] = []
        self.cycles: list[tuple[str, ...]] = []
        self.too_deep: list[str] = []
        #: the fragments being rendered, outermost first: (identity, refid as written)
        self.chain: list[tuple[int, str]] = []
        self.binds: dict[str, str] = {}
        self.elements = 0
        self.nesting = 0
        self.exhausted = False  # a budget stopped the rendering: the text is incomplete

    def render(self, node: SqlNode, ns: str, path: str, frag: str | None, props: dict[str, str],
               depth: int = 0) -> str:
        parts: list[str] = []
        counts: dict[str, int] = {}
        self.nesting += 1
        try:
            for c in node.children:
                if c.tag is None:
                    parts.append(self.text(c.text, frag, props))
                    continue
                self.elements += 1
                if self.elements > MAX_RENDER_ELEMENTS or self.nesting > MAX_RENDER_NESTING:
                    self.exhausted = True
                    break
                n = counts.get(c.tag, 0)
                counts[c.tag] = n + 1
                here = f"{path}/{c.tag}[{n}]" if path else f"{c.tag}[{n}]"
                parts.append(self.element(c, ns, here, frag, props, depth))
        finally:
            self.nesting -= 1
        return " ".join(p for p in parts if p)

    def text(self, text: str, frag: str | None, props: dict[str, str]) -> str:
        text = strip_comments(text, self.dialect)
        if props:
            text = _DOLLAR.sub(lambda m: props.get(m.group(1).strip(), m.group(0)), text)
        text = _BIND.sub("?", text)

        def mark(m: re.Match[str]) -> str:
            n = len(self.markers)
            self.markers[n] = (m.group(1).strip(), frag)
            return f"__dt{n}__"

        return _DOLLAR.sub(mark, text)

    def element(self, c: SqlNode, ns: str, here: str, frag: str | None, props: dict[str, str], depth: int) -> str:
        tag = c.tag
        if tag == "if":
            self.fragments.append(Fragment(here, "SQL_IF", frag, c.attrs.get("test"), c.line, c.end_line, c.open_line))
            if here in self.dropped:
                return ""
            self.taken.append(here)
            return self.render(c, ns, here, here, props, depth)
        if tag == "choose":
            branches = [b for b in c.children if b.tag in ("when", "otherwise")]
            self.chooses.append((here, len(branches)))
            pick = self.choices.get(here, 0)
            out = ""
            counts: dict[str, int] = {}
            for i, b in enumerate(branches):
                k = counts.get(b.tag or "", 0)
                counts[b.tag or ""] = k + 1
                bpath = f"{here}/{b.tag}[{k}]" if b.tag == "when" else f"{here}/otherwise"
                kind = "SQL_WHEN" if b.tag == "when" else "SQL_OTHERWISE"
                self.fragments.append(Fragment(bpath, kind, frag, b.attrs.get("test"), b.line, b.end_line, b.open_line))
                if i == pick and bpath not in self.dropped:
                    self.taken.append(bpath)
                    out = self.render(b, ns, bpath, bpath, props, depth)
            return out
        if tag in ("where", "set", "trim"):
            inner = self.render(c, ns, here, frag, props, depth).strip()
            if tag == "where":
                return _trim(inner, "WHERE", "", "AND |OR |AND\n|OR\n", "")
            if tag == "set":
                return _trim(inner, "SET", "", "", ",")
            return _trim(inner, c.attrs.get("prefix", ""), c.attrs.get("suffix", ""),
                         c.attrs.get("prefixOverrides", ""), c.attrs.get("suffixOverrides", ""))
        if tag == "foreach":
            inner = self.render(c, ns, here, frag, props, depth)
            return f"{c.attrs.get('open', '')} {inner} {c.attrs.get('close', '')}"
        if tag == "bind":
            if c.attrs.get("name"):
                self.binds[c.attrs["name"]] = c.attrs.get("value", "")
            return ""
        if tag == "include":
            refid = c.attrs.get("refid", "")
            refid = _DOLLAR.sub(lambda m: props.get(m.group(1).strip(), m.group(0)), refid)
            got = self.lookup(ns, refid)
            if got is None:
                self.missing.append(refid)
                return ""
            fns, fnode = got
            on_chain = [i for i, (k, _) in enumerate(self.chain) if k == id(fnode)]
            if on_chain:  # MyBatis refuses a statement whose fragments include each other
                self.cycles.append((*(r for _, r in self.chain[on_chain[0]:]), refid))
                return ""
            if depth >= MAX_INCLUDE_DEPTH:
                self.too_deep.append(refid)
                return ""
            sub = dict(props)
            for p in c.children:
                if p.tag == "property" and p.attrs.get("name"):
                    sub[p.attrs["name"]] = _DOLLAR.sub(lambda m: props.get(m.group(1).strip(), m.group(0)),
                                                       p.attrs.get("value", ""))
            self.chain.append((id(fnode), refid))
            try:
                return self.render(fnode, fns, here, frag, sub, depth + 1)
            finally:
                self.chain.pop()
        if tag in ("selectKey", "property"):
            return ""
        return self.render(c, ns, here, frag, props, depth)


@functools.lru_cache(maxsize=64)
def _comment_pattern(dialect: str) -> tuple[re.Pattern[str], tuple[str, ...]]:
    """The pattern :func:`strip_comments` scans ``dialect``'s text with, and the dialect's line
    comment markers. The markers are its sqlglot tokenizer's (``--`` everywhere, ``#`` in MySQL's
    family, BigQuery and ClickHouse, ``//`` in Snowflake's …); in MySQL's family ``--`` starts a
    comment only before a blank or control character (``a--1`` is ``a - -1``) and a backslash escapes
    inside quotes, as the tokenizer says (its STRING_ESCAPES)."""
    try:
        d = Dialect.get_or_raise(dialect)
    except ValueError:
        d = Dialect.get_or_raise(DEFAULT)
    tok = d.tokenizer_class
    markers = tuple(sorted((c for c in tok.COMMENTS if isinstance(c, str)), key=len, reverse=True))
    esc = "\\" in tok.STRING_ESCAPES
    quoted = "|".join(rf"{q}(?:\\.|[^{q}\\])*(?:{q}|\Z)" if esc else rf"{q}[^{q}]*(?:{q}|\Z)" for q in ("'", '"', "`"))
    comments = "|".join(r"--(?=[\x00-\x20]|\Z)" if m == "--" and isinstance(d, MySQL) else re.escape(m) for m in markers)
    pattern = re.compile(rf"(?P<keep>{quoted}|/\*.*?(?:\*/|\Z)|[#$]\{{[^}}]*(?:\}}|\Z))|(?:{comments})[^\n]*", re.S)
    return pattern, markers


def strip_comments(text: str, dialect: str) -> str:
    """``text`` without its line comments as ``dialect`` reads them (:func:`_comment_pattern`), each
    cut to the end of its line; quoted text, ``/* … */`` block comments (kept as written) and MyBatis
    placeholders (``#{…}``, ``${…}``: MyBatis replaces them before the database reads a comment) are
    never cut. Statements are parsed with their whitespace folded into single spaces, where a line
    comment would swallow the rest of the statement."""
    pattern, markers = _comment_pattern(dialect)
    if not any(m in text for m in markers):
        return text
    return pattern.sub(lambda m: m.group() if m.group("keep") is not None else "", text)


def _overrides(spec: str) -> list[str]:
    return [o for o in spec.split("|") if o]


def _trim(inner: str, prefix: str, suffix: str, prefix_overrides: str, suffix_overrides: str) -> str:
    """MyBatis's ``<trim>``: strip the first matching prefix override and the last matching suffix
    override (case-insensitive), then add the prefix and suffix when anything is left."""
    if not inner:
        return ""
    for o in _overrides(prefix_overrides):
        if inner.upper().startswith(o.upper().rstrip()) and (
                len(inner) == len(o.rstrip()) or not (inner[len(o.rstrip())].isalnum() or inner[len(o.rstrip())] == "_")):
            inner = inner[len(o.rstrip()):].lstrip()
            break
    for o in _overrides(suffix_overrides):
        if inner.upper().endswith(o.upper().strip()):
            inner = inner[: len(inner) - len(o.strip())].rstrip()
            break
    if not inner:
        return ""
    return f"{prefix} {inner} {suffix}".strip()


def expand(body: SqlNode, ns: str, lookup: Lookup, dropped: set[str] | None = None, dialect: str = DEFAULT) -> Expansion:
    """The variants of a statement body in namespace ``ns`` (``lookup(ns, refid)`` finds a
    ``<sql>`` fragment, local or ``namespace.id``); ``dropped`` fragments are left out of every
    variant; ``dialect`` (sqlglot's name) says which line comments the text has."""
    dropped = dropped or set()
    first = _Renderer(lookup, {}, dropped, dialect)
    sql0 = _WS.sub(" ", first.render(body, ns, "", None, {})).strip()
    variants = [Variant(sql0, first.taken, first.markers)]
    renderers = [first]
    exhausted = first.exhausted
    for cpath, nbranches in first.chooses:
        for k in range(1, nbranches):
            if len(variants) >= MAX_VARIANTS:
                exhausted = True
                break
            r = _Renderer(lookup, {cpath: k}, dropped, dialect)
            sql = _WS.sub(" ", r.render(body, ns, "", None, {})).strip()
            exhausted = exhausted or r.exhausted
            variants.append(Variant(sql, r.taken, r.markers))
            renderers.append(r)
    seen: set[str] = set()
    frags: list[Fragment] = []
    for r in renderers:  # fragments nested in a branch only a later variant takes are found there
        for f in r.fragments:
            if f.path not in seen:
                seen.add(f.path)
                frags.append(f)
    return Expansion(variants, frags, exhausted, sorted({m for r in renderers for m in r.missing}), first.binds,
                     sorted({c for r in renderers for c in r.cycles}), sorted({t for r in renderers for t in r.too_deep}))
