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


_TOKEN = re.compile(
    r"<!--.*?-->|<!\[CDATA\[.*?\]\]>|<\?.*?\?>|<!DOCTYPE(?:[^\[>]|\[.*?\])*>"
    r"|<(/?)([A-Za-z_][\w.:-]*)((?:[^>\"']|\"[^\"]*\"|'[^']*')*?)(/?)>", re.S)


def element_ends(text: str, root: etree._Element) -> dict[etree._Element, int]:
    """End line (1-based) of every element of ``root``, from one pass over the text.

    lxml records only where an element starts; this lexer walks the start and end tags
    once (comments, CDATA, processing instructions and the DOCTYPE skipped), pairs them
    with a stack and matches them to the parsed elements in document order. Linear in
    the size of the document. An element the lexer cannot pair ends where it starts.
    """
    spans: list[int] = []  # end line per start tag, in document order
    stack: list[int] = []
    line = 1
    pos = 0
    for m in _TOKEN.finditer(text):
        line += text.count("\n", pos, m.start())
        pos = m.start()
        if m.group(2) is None:
            continue
        end_line = line + text.count("\n", m.start(), m.end())
        if m.group(1):  # an end tag closes the innermost open element
            if stack:
                spans[stack.pop()] = end_line
        else:
            spans.append(line)
            if m.group(4):
                spans[-1] = end_line
            else:
                stack.append(len(spans) - 1)
    out: dict[etree._Element, int] = {}
    elements = [el for el in root.iter() if isinstance(el.tag, str)]
    if len(elements) == len(spans):
        for el, end in zip(elements, spans, strict=True):
            out[el] = max(end, el.sourceline or 1)
    return out


def element_end_line(lines: list[str], el: etree._Element, ends: dict[etree._Element, int] | None = None) -> int:
    """Line of the end of ``el``'s declaration (from :func:`element_ends` when given)."""
    if ends is not None and el in ends:
        return ends[el]
    start = el.sourceline or 1
    root = el.getroottree().getroot()
    return element_ends("\n".join(lines), root).get(el, start)
