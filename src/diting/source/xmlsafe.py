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


_LATE_DECL = re.compile(r"(\s+)(<\?xml\s[^>]*\?>)")


def _blank_late_declaration(text: str, tolerated: int) -> str:
    """``text`` with an XML declaration preceded by at most ``tolerated`` whitespace characters
    overwritten by blanks (newlines kept, so every line and column stays where it was). XML forbids
    anything before the declaration; the declared encoding was already honoured by decoding."""
    m = _LATE_DECL.match(text) if tolerated else None
    if m is None or len(m.group(1)) > tolerated:
        return text
    blank = re.sub(r"[^\n]", " ", m.group(2))
    return text[: m.start(2)] + blank + text[m.end(2):]


#: the entities XML defines itself (every parser expands them)
PREDEFINED_ENTITIES = frozenset(("amp", "lt", "gt", "quot", "apos"))
_NAMED_REF = re.compile(r"&([A-Za-z_:][A-Za-z0-9_.:\-]*);")
#: markup whose text expands no entity reference, and where it ends (a DOCTYPE is found apart: its
#: internal subset may hold ``>``)
_INERT = (("<!--", "-->"), ("<![CDATA[", "]]>"), ("<?", "?>"))


def _expanding(text: str) -> list[tuple[int, int]]:
    """``[start, end)`` spans of ``text`` where a reader expands entity references: everything but
    comments, CDATA sections, processing instructions and the DOCTYPE declaration (one that does
    not end runs to the end of the text). Linear."""
    spans, pos, i = [], 0, text.find("<")
    while i >= 0:
        end = None
        if text.startswith("<!DOCTYPE", i):
            end = _doctype_end(text, i)
        else:
            for opener, closer in _INERT:
                if text.startswith(opener, i):
                    j = text.find(closer, i + len(opener))
                    end = len(text) if j < 0 else j + len(closer)
                    break
        if end is None:
            i = text.find("<", i + 1)
            continue
        spans.append((pos, i))
        pos = end
        i = text.find("<", pos)
    spans.append((pos, len(text)))
    return [(a, b) for a, b in spans if a < b]


def named_references(text: str, known: frozenset[str] | dict[str, str] = frozenset()) -> list[tuple[str, int]]:
    """``(name, line)`` of each reference to a named entity in ``text`` — in element content or an
    attribute value, not in a comment, CDATA section, processing instruction or the DOCTYPE —
    that is neither one of XML's :data:`PREDEFINED_ENTITIES` nor in ``known``; in text order."""
    out = []
    for a, b in _expanding(text):
        for m in _NAMED_REF.finditer(text, a, b):
            if m.group(1) not in PREDEFINED_ENTITIES and m.group(1) not in known:
                out.append((m.group(1), text.count("\n", 0, m.start()) + 1))
    return out


def _replace_references(text: str, table: dict[str, str]) -> str:
    """``text`` with each reference to an entity of ``table`` (names to one-line replacement text) in
    the spans :func:`_expanding` gives replaced by its text: lines stay where they are."""
    parts, pos = [], 0
    for a, b in _expanding(text):
        for m in _NAMED_REF.finditer(text, a, b):
            if m.group(1) in table and m.group(1) not in PREDEFINED_ENTITIES:
                parts += [text[pos:m.start()], table[m.group(1)]]
                pos = m.end()
    return "".join(parts) + text[pos:] if parts else text


def parse_xml(data: bytes, *, declaration_after: int = 0, entities: dict[str, str] | None = None) -> XmlDocument:
    """Parse ``data`` safely. Never raises for malformed input: ``error`` says why.

    ``declaration_after`` is how many whitespace characters the reader being modelled accepts
    before the XML declaration (XML allows none; Maven 3's POM parser accepts one, e.g. a leading
    blank line). ``entities``: named entities the reader being modelled knows without any
    declaration (Maven's XHTML set), each replaced by its text before parsing — never one the
    document declares itself. Lines of the parsed tree are those of ``data`` (and so are columns on
    a line without such a reference)."""
    decoded = decode_xml(data)
    text = _replace_references(decoded.text, entities) if entities else decoded.text
    # the decoded text re-encoded as UTF-8; the parser's encoding overrides the prolog
    body = _blank_late_declaration(text, declaration_after).encode("utf-8")
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
    r"<!--.*?-->|<!\[CDATA\[.*?\]\]>|<\?.*?\?>|(?P<doctype><!DOCTYPE)"
    r"|<(?P<close>/?)(?P<name>[^\s/<>!?\"'=][^\s/<>\"'=]*)(?:[^>\"']|\"[^\"]*\"|'[^']*')*?(?P<empty>/?)>", re.S)


def _doctype_end(text: str, i: int) -> int:
    """Index just after the DOCTYPE declaration starting at ``i``: its internal subset (``[…]``) may
    hold quoted entity values with markup, comments and processing instructions, any of which may
    contain ``]`` or ``>``. Linear."""
    n = len(text)
    i += len("<!DOCTYPE")
    depth = 0
    while i < n:
        c = text[i]
        if c in "\"'":
            j = text.find(c, i + 1)
            i = n if j < 0 else j + 1
            continue
        if depth and text.startswith("<!--", i):
            j = text.find("-->", i + 4)
            i = n if j < 0 else j + 3
            continue
        if depth and text.startswith("<?", i):
            j = text.find("?>", i + 2)
            i = n if j < 0 else j + 2
            continue
        if c == "[":
            depth += 1
        elif c == "]":
            depth = max(0, depth - 1)
        elif c == ">" and depth == 0:
            return i + 1
        i += 1
    return n


#: an element's lines: where its start tag begins, where its start tag ends, where the element ends
ElementLines = tuple[int, int, int]


def element_lines(text: str, root: etree._Element) -> dict[etree._Element, ElementLines]:
    """``(first line, last line of the start tag, last line)`` (1-based) of every element of ``root``,
    from one pass over the text.

    lxml's ``sourceline`` is the line where an element's start tag *ends* (libxml2 reports the
    parser position; past line 65,535 it is not even that), so a start tag written over several
    lines would be cited by its last line. This lexer walks the start and end tags once (comments,
    CDATA, processing instructions and the DOCTYPE with its internal subset skipped), takes the line
    of each ``<`` and of each closing ``>``, pairs start and end tags with a stack and matches them to
    the parsed elements in document order. Linear in the size of the document (each character is
    read a bounded number of times: the document lxml accepted has no stray ``<`` outside the
    DOCTYPE). When the lexer and the parser disagree on the element count, every element spans its
    ``sourceline`` alone.
    """
    starts: list[int] = []  # line of '<' per start tag, in document order
    opens: list[int] = []  # line of the start tag's '>'
    ends: list[int] = []  # line of the element's last '>'
    stack: list[int] = []
    line = 1
    pos = 0  # text[:pos] has been counted into line
    at = 0
    while True:
        m = _TOKEN.search(text, at)
        if m is None:
            break
        line += text.count("\n", pos, m.start())
        pos = m.start()
        if m.group("doctype"):
            at = _doctype_end(text, m.start())
            continue
        at = m.end()
        if m.group("name") is None:
            continue
        end_line = line + text.count("\n", m.start(), m.end())
        if m.group("close"):  # an end tag closes the innermost open element
            if stack:
                ends[stack.pop()] = end_line
        else:
            starts.append(line)
            opens.append(end_line)
            ends.append(end_line)
            if not m.group("empty"):
                stack.append(len(ends) - 1)
    elements = [el for el in root.iter() if isinstance(el.tag, str)]
    if len(elements) == len(starts):
        return {el: (a, o, max(o, b)) for el, a, o, b in zip(elements, starts, opens, ends, strict=True)}
    return {el: (el.sourceline or 1,) * 3 for el in elements}


def element_spans(text: str, root: etree._Element) -> dict[etree._Element, tuple[int, int]]:
    """``(first line, last line)`` of every element of ``root`` (see :func:`element_lines`)."""
    return {el: (a, b) for el, (a, _, b) in element_lines(text, root).items()}


def element_span(lines: list[str], el: etree._Element) -> tuple[int, int]:
    """``(first line, last line)`` of ``el`` (see :func:`element_spans`). Lexes the whole document:
    for many elements of one document call :func:`element_spans` once."""
    start = el.sourceline or 1
    return element_spans("\n".join(lines), el.getroottree().getroot()).get(el, (start, start))
