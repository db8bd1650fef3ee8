"""XML parsing that never resolves entities, never loads a DTD and never touches the network.

Every XML file diting reads (pom.xml, Spring/JSF/JMQ XML, MyBatis mappers) goes
through :func:`parse_xml`. Entity references stay unexpanded (so billion-laughs
documents cost nothing), external DTDs and schemas are never fetched, and
huge-tree mode stays off so libxml2's own depth and size limits apply.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lxml import etree

from diting.source.text import DecodedText, decode_bytes

_DECL = re.compile(rb"^\s*<\?xml[^>]*encoding\s*=\s*[\"']([A-Za-z0-9._-]+)[\"']")


class _RefuseResolver(etree.Resolver):
    """Answers every request for an external resource with an empty document."""

    def resolve(self, system_url, public_id, context):  # noqa: D401 - lxml API
        return self.resolve_string("", context)


def _parser() -> etree.XMLParser:
    parser = etree.XMLParser(
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        dtd_validation=False,
        huge_tree=False,
        remove_blank_text=False,
        recover=False,
        encoding="utf-8",
    )
    parser.resolvers.add(_RefuseResolver())
    return parser


@dataclass
class XmlDocument:
    """A parsed XML file: its decoded text and root element (or ``error`` when it is malformed)."""

    decoded: DecodedText
    root: etree._Element | None
    error: str | None
    error_line: int | None


def decode_xml(data: bytes) -> DecodedText:
    """Decode an XML file: a declared encoding in the prolog is tried first (strictly)."""
    m = _DECL.match(data[:200])
    declared = m.group(1).decode("ascii") if m else None
    return decode_bytes(data, declared)


def parse_xml(data: bytes) -> XmlDocument:
    """Parse ``data`` safely. Never raises for malformed input: ``error`` says why."""
    decoded = decode_xml(data)
    # the decoded text re-encoded as UTF-8; the parser's encoding overrides the prolog
    body = decoded.text.encode("utf-8")
    try:
        root = etree.fromstring(body, _parser())
    except etree.XMLSyntaxError as exc:
        line = exc.lineno if isinstance(exc.lineno, int) and exc.lineno > 0 else None
        return XmlDocument(decoded, None, str(exc.msg or exc), line)
    except (ValueError, etree.LxmlError) as exc:
        return XmlDocument(decoded, None, str(exc), None)
    return XmlDocument(decoded, root, None, None)


def local_name(el: etree._Element) -> str:
    """Element name without namespace; '' for comments and processing instructions."""
    tag = el.tag
    if not isinstance(tag, str):
        return ""
    return tag.rsplit("}", 1)[-1]


def namespace(el: etree._Element) -> str | None:
    tag = el.tag
    if isinstance(tag, str) and tag.startswith("{"):
        return tag[1:].split("}", 1)[0]
    return None


def children(el: etree._Element, name: str | None = None) -> list[etree._Element]:
    """Element children (comments skipped), optionally only those with local name ``name``."""
    return [c for c in el if isinstance(c.tag, str) and (name is None or local_name(c) == name)]


def child(el: etree._Element | None, name: str) -> etree._Element | None:
    if el is None:
        return None
    for c in el:
        if isinstance(c.tag, str) and local_name(c) == name:
            return c
    return None


def child_text(el: etree._Element | None, name: str) -> str | None:
    """Stripped text of the first child called ``name`` (entity references kept as ``&name;``)."""
    c = child(el, name)
    if c is None:
        return None
    return element_text(c)


def element_text(el: etree._Element) -> str:
    parts: list[str] = [el.text or ""]
    for c in el:
        if isinstance(c, etree._Entity):
            parts.append(f"&{c.name};")
        parts.append(c.tail or "")
    return "".join(parts).strip()


_TAG_TOKEN = re.compile(r"<!--.*?-->|<!\[CDATA\[.*?\]\]>|<\?.*?\?>|<(/?)([A-Za-z_][\w.:-]*)([^>]*?)(/?)>", re.S)


def element_end_line(lines: list[str], el: etree._Element) -> int:
    """Line (1-based) of the end of ``el``'s declaration, found by scanning its tags.

    lxml records only where an element starts; this lexer walks from that line,
    counts nested start and end tags of the same name (comments and CDATA
    skipped) and returns the line of the matching end tag. Falls back to the
    start line for a document it cannot follow.
    """
    start = el.sourceline or 1
    qname = el.prefix + ":" + local_name(el) if el.prefix else local_name(el)
    text = "\n".join(lines[start - 1:])
    depth = 0
    for m in _TAG_TOKEN.finditer(text):
        name = m.group(2)
        if name != qname:
            continue
        if m.group(1):  # end tag
            depth -= 1
            if depth == 0:
                return start + text.count("\n", 0, m.end())
        elif m.group(4):  # self-closing
            if depth == 0:
                return start + text.count("\n", 0, m.end())
        else:
            depth += 1
    return start
