"""Redaction of secrets, personal numbers, hosts and IP addresses in config evidence (SPEC §3.4; seed L1581–1586, L2191).

Applied to CONFIG and BUILD segments (config files, Spring/Maven XML, pom
properties), never to Java code. Masking is length-preserving (each code point
of a redacted span becomes ``*``), so every redaction's offsets are valid both in
the original text and in ``content``; offsets are Unicode code points,
zero-based, half-open, merged so that they never overlap. :func:`redact` is a
pure function of the text, so ``verify --repo`` re-applies it and compares.
"""

from __future__ import annotations

import ipaddress
import re

SECRET_WORDS = (r"password|passwd|pwd|secret|token|access[-_.]?key|accesskey|private[-_.]?key|privatekey|"
                r"secret[-_.]?key|api[-_.]?key|credentials?|auth[-_.]?key")
_SECRET_KEY = rf"[\w.\-\[\]]*(?:{SECRET_WORDS})[\w.\-\[\]]*"

_PATTERNS: list[tuple[str, re.Pattern[str], str]] = [
    # key = value / key: value (properties, yaml, query strings)
    ("secret", re.compile(rf"(?i)(?<![\w.\-]){_SECRET_KEY}\s*[:=]\s*[\"']?(?P<v>[^\s\"'&;,#<>]+)"), "v"),
    # <password>value</password>
    ("secret", re.compile(rf"(?i)<(?P<t>[\w.:\-]*(?:{SECRET_WORDS})[\w.:\-]*)(?:\s[^>]*)?>(?P<v>[^<]+)</(?P=t)\s*>"),
     "v"),
    # <property name="password" value="..."/>
    ("secret", re.compile(rf"(?i)(?:name|key)\s*=\s*[\"'][^\"']*(?:{SECRET_WORDS})[^\"']*[\"']\s+value\s*=\s*"
                          rf"[\"'](?P<v>[^\"']+)[\"']"), "v"),
    # scheme://user:password@host
    ("secret", re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://[^/\s:@]+:(?P<v>[^@\s/]+)@"), "v"),
    # host of a URL (jdbc:mysql://host:3306/db, http://host/...)
    ("host", re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://(?:[^/\s@]+@)?(?P<v>[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)+)"), "v"),
    # phone numbers (mainland China mobile): mask the middle four digits
    ("phone", re.compile(r"(?<!\d)1[3-9]\d(?P<v>\d{4})\d{4}(?!\d)"), "v"),
    # resident ID-card numbers (18 digits, last may be X)
    ("id_card", re.compile(r"(?<![\dA-Za-z])(?P<v>[1-9]\d{5}(?:19|20)\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])\d{3}"
                           r"[\dXx])(?![\dA-Za-z])"), "v"),
    # IPv4 addresses
    ("ip", re.compile(r"(?<![\d.])(?P<v>(?:\d{1,3}\.){3}\d{1,3})(?![\d.])"), "v"),
    # host:port with a dotted host name
    ("host", re.compile(r"(?<![\w.\-/@])(?P<v>[A-Za-z][A-Za-z0-9\-]*(?:\.[A-Za-z0-9\-]+)+):\d{2,5}(?!\d)"), "v"),
]

#: addresses that identify no infrastructure
_HARMLESS_IPS = {"127.0.0.1", "0.0.0.0", "255.255.255.255"}
_HARMLESS_HOSTS = {"localhost"}


def find_redactions(text: str) -> list[tuple[int, int, str]]:
    """Spans to redact in ``text``: sorted, merged, non-overlapping ``(start, end, reason)``."""
    spans: list[tuple[int, int, str]] = []
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
            if reason == "secret" and value.startswith("${") and value.endswith("}") and ":" not in value:
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
    """``text`` with each span masked by ``*`` (length-preserving)."""
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
