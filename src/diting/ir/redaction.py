"""Redaction of secrets, personal numbers, hosts and IP addresses in config evidence
(docs/ir.md §6).

Applied to CONFIG and BUILD segments (config files, Spring/Maven XML, pom
properties and plugin configuration), never to Java code. Masking is
length-preserving (each code point of a redacted span becomes ``*``, line
breaks kept), so every redaction's offsets are valid both in the original text
and in ``content``; offsets are Unicode code points, zero-based, half-open,
merged so that they never overlap. :func:`redact` is a pure function of the
text, so ``verify --repo`` re-applies it and compares.

What counts as a secret: the value after a key whose name contains password,
secret, token, access/private/api key or credentials (``key=value``,
``key: value`` to the end of the value, YAML block scalars after such a key),
the text of an XML element so named (CDATA and comments included), and the
``value`` attribute or text of an element whose ``name``/``key``/``id``
attribute names a secret; the password in ``scheme://user:password@host``.
Escaped spellings of key names (``pass\\u0077ord``) are not recognised. Hosts: of a URL, before a
port, or the dotted value of a key naming a host (``host``, ``endpoint``, ``domain``, ``…addr``);
``localhost`` and loopback addresses identify nothing and stay.
"""

from __future__ import annotations

import bisect
import ipaddress
import re

SECRET_WORDS = (r"password|passwd|pwd|secret|token|access[-_.]?key|accesskey|private[-_.]?key|privatekey|"
                r"secret[-_.]?key|api[-_.]?key|credentials?|auth[-_.]?key")
#: a key naming a secret: a run of key characters holding a secret word (the lookahead finds the word
#: lazily inside the run, the possessive run never backtracks: linear in the run's length)
_SECRET_KEY = rf"(?=[\w.\-\[\]]*?(?:{SECRET_WORDS}))[\w.\-\[\]]++"

_PATTERNS: list[tuple[str, re.Pattern[str], str]] = [
    # key = value / key: value (properties, yaml, query strings): to the end of the value
    # (every pattern starts only where its leading run starts — a lookbehind — so a long run of
    # key or scheme characters is scanned once, not once per position: linear time)
    ("secret", re.compile(rf"(?i)(?<![\w.\-\[\]]){_SECRET_KEY}\s*[:=][ \t]*[\"']?(?P<v>[^\s\"'&;<>|][^\"'&;<>\r\n]*)"),
     "v"),
    # scheme://user:password@host
    ("secret", re.compile(r"(?<![A-Za-z0-9+.\-])[A-Za-z][A-Za-z0-9+.\-]*://[^/\s:@]+:(?P<v>[^@\s/]+)@"), "v"),
    # host of a URL (jdbc:mysql://host:3306/db, http://host/...)
    ("host", re.compile(r"(?<![A-Za-z0-9+.\-])[A-Za-z][A-Za-z0-9+.\-]*://(?:[^/\s@]+@)?"
                        r"(?P<v>[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)+)"), "v"),
    # phone numbers (mainland China mobile): mask the middle four digits
    ("phone", re.compile(r"(?<!\d)1[3-9]\d(?P<v>\d{4})\d{4}(?!\d)"), "v"),
    # resident ID-card numbers (18 digits, last may be X)
    ("id_card", re.compile(r"(?<![\dA-Za-z])(?P<v>[1-9]\d{5}(?:19|20)\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])\d{3}"
                           r"[\dXx])(?![\dA-Za-z])"), "v"),
    # IPv4 addresses
    ("ip", re.compile(r"(?<![\d.])(?P<v>(?:\d{1,3}\.){3}\d{1,3})(?![\d.])"), "v"),
    # a dotted host name as the value of a key naming a host (host, endpoint, domain, server-addr …),
    # with no scheme or port to tell it by: aliyun.oss.endpoint: oss-cn-shenzhen.aliyuncs.com
    ("host", re.compile(r"(?i)(?<![\w.\-\[\]])(?=[\w.\-\[\]]*?(?:host|endpoint|domain|addr))[\w.\-\[\]]++"
                        r"\s*[:=][ \t]*[\"']?(?P<v>[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)+)(?![\w.\-])"), "v"),
    # host:port with a dotted host name
    ("host", re.compile(r"(?<![\w.\-/@])(?P<v>[A-Za-z][A-Za-z0-9\-]*(?:\.[A-Za-z0-9\-]+)+):\d{2,5}(?!\d)"), "v"),
]

_SECRET_WORD = re.compile(rf"(?i){SECRET_WORDS}")
#: a start tag; no '<' inside (XML forbids it in attribute values), so a failed attempt stops at the
#: next '<' and the scan stays linear
_START_TAG = re.compile(r"<(?P<tag>[A-Za-z_][\w.:-]*)(?P<attrs>(?:[^<>\"']|\"[^\"<]*\"|'[^'<]*')*?)(?P<close>/?)>",
                        re.S)
_END_TAG = re.compile(r"</(?P<tag>[A-Za-z_][\w.:-]*)\s*>")
_NAMING_ATTR = re.compile(r"""\b(?:name|key|id)\s*=\s*(["'])(?P<n>[^"']*)\1""")
_VALUE_ATTR = re.compile(r"""\bvalue\s*=\s*(["'])(?P<v>[^"']*)\1""")
_MARKUP = re.compile(r"<!\[CDATA\[|\]\]>|<!--|-->|<[^>]*>")
_BLOCK = re.compile(rf"(?im)^(?P<indent>[ \t]*)(?:-[ \t]+)?{_SECRET_KEY}\s*:\s*[|>][+-]?\d*[ \t]*(?:#.*)?$")

#: addresses that identify no infrastructure
_HARMLESS_IPS = {"127.0.0.1", "0.0.0.0", "255.255.255.255"}
_HARMLESS_HOSTS = {"localhost"}


def _xml_spans(text: str) -> list[tuple[int, int, str]]:
    """Secret text of XML elements named like a secret, or named so by a name/key/id attribute."""
    out: list[tuple[int, int, str]] = []
    ends: dict[str, list[int]] | None = None  # end-tag positions by name, found in one pass when needed
    masked_to_end = False
    for m in _START_TAG.finditer(text):
        tag, attrs = m.group("tag"), m.group("attrs")
        naming = _NAMING_ATTR.search(attrs)
        by_tag = _SECRET_WORD.search(tag) is not None
        by_attr = naming is not None and _SECRET_WORD.search(naming.group("n")) is not None
        if not by_tag and not by_attr:
            continue
        if by_attr:
            for v in _VALUE_ATTR.finditer(attrs):
                start = m.start("attrs") + v.start("v")
                out.append((start, start + len(v.group("v")), "secret"))
        if m.group("close"):
            continue
        if ends is None:
            ends = {}
            for e in _END_TAG.finditer(text):
                ends.setdefault(e.group("tag"), []).append(e.start())
        positions = ends.get(tag, [])
        i = bisect.bisect_left(positions, m.end())
        if i < len(positions):
            body_end = positions[i]
        elif masked_to_end:  # an earlier unclosed secret element already masks the rest
            continue
        else:  # no end tag (the segment ends inside the element): the rest of the text
            body_end = len(text)
            masked_to_end = True
        pos = m.end()
        for mk in _MARKUP.finditer(text, pos, body_end):
            if mk.start() > pos:
                out.append((pos, mk.start(), "secret"))
            pos = mk.end()
        if body_end > pos:
            out.append((pos, body_end, "secret"))
    return out


def _block_spans(text: str) -> list[tuple[int, int, str]]:
    """The more-indented lines of a YAML block scalar after a secret key (``password: |``)."""
    out: list[tuple[int, int, str]] = []
    for m in _BLOCK.finditer(text):
        indent = len(m.group("indent").expandtabs())
        pos = m.end() + 1
        while pos < len(text):
            nl = text.find("\n", pos)
            line = text[pos:] if nl < 0 else text[pos:nl]
            if line.strip() and len(line.expandtabs()) - len(line.expandtabs().lstrip(" ")) <= indent:
                break
            if line.strip():
                out.append((pos, pos + len(line.rstrip("\r")), "secret"))
            if nl < 0:
                break
            pos = nl + 1
    return out


def find_redactions(text: str) -> list[tuple[int, int, str]]:
    """Spans to redact in ``text``: sorted, merged, non-overlapping ``(start, end, reason)``."""
    spans: list[tuple[int, int, str]] = _xml_spans(text) + _block_spans(text)
    for reason, pattern, group in _PATTERNS:
        for m in pattern.finditer(text):
            s, e = m.span(group)
            if s < 0 or e <= s:
                continue
            value = m.group(group)
            if reason == "ip":
                try:
                    ipaddress.IPv4Address(value)
                except ValueError:
                    continue
                if value in _HARMLESS_IPS:
                    continue
            if reason == "host" and (value.lower() in _HARMLESS_HOSTS or _is_version_like(value)):
                continue
            if reason == "secret":
                value = value.rstrip()
                e = s + len(value)
                if not value or (value.startswith("${") and value.endswith("}") and ":" not in value):
                    continue  # a placeholder names a key; it holds no secret
            spans.append((s, e, reason))
    spans.sort()
    merged: list[tuple[int, int, str]] = []
    for s, e, r in spans:
        if merged and s < merged[-1][1]:
            ps, pe, pr = merged[-1]
            merged[-1] = (ps, max(pe, e), pr)
        else:
            merged.append((s, e, r))
    return merged


def _is_version_like(value: str) -> bool:
    return all(part.isdigit() for part in value.split("."))


def apply_redactions(text: str, spans: list[tuple[int, int, str]]) -> str:
    """``text`` with each span masked by ``*`` (length-preserving; line breaks kept)."""
    if not spans:
        return text
    chars = list(text)
    for s, e, _ in spans:
        for i in range(s, min(e, len(chars))):
            if chars[i] not in "\r\n":
                chars[i] = "*"
    return "".join(chars)


def redact(text: str) -> tuple[str, list[tuple[int, int, str]]]:
    """Redacted text and its redactions."""
    spans = find_redactions(text)
    return apply_redactions(text, spans), spans


def redact_value(key: str, value: str) -> str:
    """A config value as records may carry it (config bindings, docs/ir.md §7): wholly masked when
    the key names a secret, else with the spans :func:`redact` finds in it (hosts, addresses,
    personal numbers, URL passwords) masked. Length-preserving, like the evidence."""
    if _SECRET_WORD.search(key):
        return apply_redactions(value, [(0, len(value), "secret")])
    return redact(value)[0]
