"""MyBatis mapper XML read into a small, picklable tree (docs/sql.md §1).

A mapper file is an XML document whose root is ``<mapper namespace="…">``; its
``<select|insert|update|delete>`` elements are statements, ``<sql id>`` elements
reusable fragments, ``<resultMap id type extends>`` result maps. The dynamic-SQL
body of each statement is kept as a tree of :class:`SqlNode` (text and tags with
their attributes and lines) so the package stage can expand ``<include>``
across namespaces and build variants (sql/dynamic.py). iBatis 2 ``<sqlMap>``
files are recognised and counted as unsupported, never parsed as MyBatis.

Parsing goes through :func:`diting.source.xmlsafe.parse_xml` (no entities, no
DTD, no network); a malformed file is reported by the caller.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass, field

from lxml import etree

from diting.source.xmlsafe import element_lines, local_name, parse_xml

STATEMENT_TAGS = ("select", "insert", "update", "delete")
#: dynamic-SQL tags MyBatis 3 knows; any other element inside a statement is kept as text-less
DYNAMIC_TAGS = ("if", "choose", "when", "otherwise", "where", "set", "trim", "foreach", "bind", "include",
                "selectKey", "property")


@dataclass
class SqlNode:
    """A node of a statement body: ``tag`` None for text (``text`` holds it, entities decoded),
    else a dynamic-SQL element with its attributes, children and 1-based line span."""

    tag: str | None
    text: str = ""
    attrs: dict[str, str] = field(default_factory=dict)
    children: list["SqlNode"] = field(default_factory=list)
    line: int = 0
    end_line: int = 0
    #: the line where the start tag ends (its attributes — a ``test`` — may run over several lines)
    open_line: int = 0


@dataclass
class MapperStatement:
    """One ``<select|insert|update|delete>`` (or a ``<selectKey>`` lifted out of one)."""

    id: str
    kind: str  # SELECT, INSERT, UPDATE, DELETE
    attrs: dict[str, str]
    body: SqlNode
    line: int
    end_line: int
    parent_id: str | None = None  # the statement a <selectKey> belongs to
    #: XML entity references in the statement (``&more;``): never expanded, so their text is missing
    entities: list[str] = field(default_factory=list)


@dataclass
class MapperFile:
    """What one mapper file declares. ``dialect`` is MYBATIS, IBATIS (``<sqlMap>``, unsupported)
    or None (not a mapper)."""

    path: str
    dialect: str | None
    namespace: str | None = None
    statements: list[MapperStatement] = field(default_factory=list)
    fragments: dict[str, SqlNode] = field(default_factory=dict)
    result_maps: dict[str, dict[str, str]] = field(default_factory=dict)
    error: str | None = None
    error_line: int | None = None
    #: iBatis statements, each ``(element name, line)`` (never parsed)
    unsupported: list[tuple[str, int]] = field(default_factory=list)


def looks_like_mapper(data: bytes) -> bool:
    """Cheap pre-check before a full parse: the file mentions a mapper or sqlMap element anywhere
    (a long leading comment does not hide it), in UTF-8/ASCII or, after its byte-order mark, UTF-16."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        data = data.decode("utf-16", errors="replace").encode("utf-8")
    return b"<mapper" in data or b"<sqlMap" in data


def read_mapper(path: str, data: bytes) -> MapperFile:
    """Parse ``data`` (the bytes of ``path``) as a mapper file."""
    if not looks_like_mapper(data):
        return MapperFile(path, None)
    doc = parse_xml(data)
    if doc.root is None:
        return MapperFile(path, None, error=doc.error, error_line=doc.error_line)
    root = doc.root
    name = local_name(root)
    if name == "sqlMap":
        found = [(local_name(el), el.sourceline or 1) for el in root.iter() if isinstance(el.tag, str) and
                 local_name(el) in ("select", "insert", "update", "delete", "statement", "procedure")]
        return MapperFile(path, "IBATIS", root.get("namespace"), unsupported=found)
    if name != "mapper":
        return MapperFile(path, None)
    spans = element_lines(doc.decoded.text, root)
    out = MapperFile(path, "MYBATIS", (root.get("namespace") or "").strip() or None)
    for el in root:
        if not isinstance(el.tag, str):
            continue
        tag = local_name(el)
        if tag in STATEMENT_TAGS and el.get("id"):
            body = _node(el, spans)
            sid = el.get("id", "").strip()
            out.statements.append(MapperStatement(sid, tag.upper(), dict(_attrs(el)), body, body.line, body.end_line,
                                                  entities=sorted({str(e.name) for e in el.iter(etree.Entity)})))
            for key in _select_keys(body):
                out.statements.append(MapperStatement(
                    f"{sid}!selectKey", "SELECT", dict(key.attrs), key, key.line, key.end_line, parent_id=sid))
        elif tag == "sql" and el.get("id"):
            out.fragments[el.get("id", "").strip()] = _node(el, spans)
        elif tag == "resultMap" and el.get("id"):
            out.result_maps[el.get("id", "").strip()] = {k: v for k, v in _attrs(el) if k in ("type", "extends")}
    return out


def _attrs(el) -> list[tuple[str, str]]:
    return [(str(k), str(v)) for k, v in el.attrib.items()]


def _node(el, spans) -> SqlNode:
    """The element as a :class:`SqlNode` (comments and processing instructions dropped): it spans
    its start tag's ``<`` to its end tag; its text starts where the start tag ends, a child's tail
    where that child ends (lines from :func:`element_lines`)."""
    start, opened, end = spans.get(el, (el.sourceline or 0,) * 3)
    node = SqlNode(local_name(el), attrs=dict(_attrs(el)), line=start, end_line=max(start, end),
                   open_line=max(start, opened))
    if el.text:
        node.children.append(SqlNode(None, el.text, line=opened, end_line=opened))
    for c in el:
        if isinstance(c.tag, str):
            node.children.append(_node(c, spans))
        if c.tail:
            line = spans.get(c, (0, 0, c.sourceline or start))[2]
            node.children.append(SqlNode(None, c.tail, line=line, end_line=line))
    return node


def _select_keys(body: SqlNode) -> list[SqlNode]:
    return [c for c in body.children if c.tag == "selectKey"]


def script_body(text: str, line: int, end_line: int) -> SqlNode:
    """The body of annotation SQL: a ``<script>`` document parsed like a mapper statement, else
    plain text. Every node carries the annotation's lines (the text has no lines of its own in
    the Java file). A ``<script>`` that is not well-formed XML is kept as text."""
    stripped = text.strip()
    if stripped.startswith("<script>"):
        doc = parse_xml(stripped.encode("utf-8"))
        if doc.root is not None:
            node = _node(doc.root, {})
            _reline(node, line, end_line)
            return node
    return SqlNode("script", children=[SqlNode(None, text, line=line, end_line=end_line)], line=line,
                   end_line=end_line)


def _reline(node: SqlNode, line: int, end_line: int) -> None:
    node.line, node.end_line = line, end_line
    for c in node.children:
        _reline(c, line, end_line)
