"""Decoding source bytes into text, treating every file as hostile.

Policy (a pure function of the bytes and the module's declared source
encoding):

1. a byte-order mark decides (UTF-8, UTF-16 LE/BE); the BOM is removed;
2. strict UTF-8;
3. the module's declared ``project.build.sourceEncoding`` (strict), when given;
4. GB18030 (a superset of GBK, the usual legacy encoding of Chinese estates) when
   the bytes decode strictly and the non-ASCII text is mostly CJK — short GBK
   files are otherwise easily mistaken for EUC-KR or Big5 by statistical detection;
5. the encoding detector (charset-normalizer) restricted to the encodings seen
   in Chinese and Western Java estates, then a strict decode with its answer;
6. otherwise UTF-8 with replacement characters: the decode is *lossy* and the
   caller records ENCODING_FALLBACK.

Line ends (one rule for the scanner and ``diting verify``): a line ends at ``\\r\\n``, at a lone
``\\r`` (old Mac files) or at ``\\n`` — where javac, ``java.util.Properties``, XML and YAML end
lines. :func:`decode_bytes` and :func:`decode_as` return the text with every lone ``\\r`` made a
``\\n`` (:func:`normalize_line_ends`): one character for one, and CR and LF have one width in every
encoding diting decodes (one byte in UTF-8, GB18030 and the other ASCII-compatible codecs, two in
UTF-16), so character offsets — and the byte offsets of the re-encoded UTF-8 a parser reads — stay
those of the file. Every reader then counts lines on ``\\n`` alone (tree-sitter rows, lxml's
``sourceline``, YAML marks, regex line counts, :func:`split_lines`) and they all agree with the
verifier. The ``\\r`` of a CRLF stays in its line (SPEC §3.4: ``\\r`` kept), so a segment's content
is its lines joined by ``\\n``: a CRLF file's text as written, a lone-CR file's with LF for CR.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

import charset_normalizer

#: encodings the detector may choose among (order is irrelevant to it)
DETECTOR_CANDIDATES = ["gb18030", "big5", "shift_jis", "euc_kr", "cp1252", "latin_1"]

DETECTOR_NAME = "charset-normalizer"
DETECTOR_VERSION = charset_normalizer.__version__


@dataclass(frozen=True)
class DecodedText:
    """Decoded text of a file: ``encoding`` is a Python codec name, ``lossy`` is True
    when bytes had to be replaced, ``bom`` when a byte-order mark was removed."""

    text: str
    encoding: str
    lossy: bool
    bom: bool


_SURROGATES = re.compile("[\ud800-\udbff][\udc00-\udfff]|[\ud800-\udfff]")
_ANY_SURROGATE = re.compile("[\ud800-\udfff]")


def has_surrogates(text: str) -> bool:
    """True when ``text`` holds a surrogate code point (a C-speed scan)."""
    return not text.isascii() and _ANY_SURROGATE.search(text) is not None


def scrub_surrogates(text: str) -> str:
    """``text`` with every surrogate pair joined into its character and every lone surrogate
    replaced by U+FFFD, so that it can be written as UTF-8 (escapes in Java, properties and
    YAML can spell surrogates one by one)."""
    if not has_surrogates(text):
        return text

    def repl(m: re.Match[str]) -> str:
        g = m.group()
        if len(g) == 2:
            return chr(0x10000 + ((ord(g[0]) - 0xD800) << 10) + (ord(g[1]) - 0xDC00))
        return "\ufffd"

    return _SURROGATES.sub(repl, text)


def _strict(data: bytes, encoding: str) -> str | None:
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError, ValueError):
        return None
    if has_surrogates(text):
        return None  # no text encoding yields surrogates; an escape codec does
    return text


#: codecs that turn bytes into text by interpreting escapes or transforms, never a charset
_NOT_CHARSETS = ("unicode_escape", "raw_unicode_escape", "punycode", "idna", "undefined", "unicode_internal")


def _codec_name(encoding: str) -> str | None:
    try:
        info = codecs.lookup(encoding)
    except LookupError:
        return None
    if not getattr(info, "_is_text_encoding", True) or info.name.replace("-", "_") in _NOT_CHARSETS:
        return None
    return info.name


_LONE_CR = re.compile("\r(?!\n)")


def normalize_line_ends(text: str) -> str:
    """``text`` with each lone ``\\r`` (one not followed by ``\\n``) replaced by ``\\n``; same length,
    CRLF kept (see the module docstring)."""
    return _LONE_CR.sub("\n", text) if "\r" in text else text


def decode_bytes(data: bytes, declared: str | None = None) -> DecodedText:
    """Decode ``data`` by the policy above, lone CRs made LFs (:func:`normalize_line_ends`). Never raises."""
    d = _decode(data, declared)
    text = normalize_line_ends(d.text)
    return d if text is d.text else DecodedText(text, d.encoding, d.lossy, d.bom)


def decode_as(data: bytes, encoding: str) -> str:
    """``data`` decoded as a scan recorded it: ``encoding`` (a Python codec name; an unknown one
    reads as UTF-8) with replacement characters, its byte-order mark removed, lone CRs made LFs —
    the text :func:`decode_bytes` gave when it chose ``encoding``. Never raises."""
    for bom, enc in ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be")):
        if encoding == enc and data.startswith(bom):
            data = data[len(bom):]
            break
    try:
        text = data.decode(encoding, "replace")
    except LookupError:
        text = data.decode("utf-8", "replace")
    return normalize_line_ends(text)


def _decode(data: bytes, declared: str | None) -> DecodedText:
    if data.startswith(codecs.BOM_UTF8):
        body = data[len(codecs.BOM_UTF8):]
        text = _strict(body, "utf-8")
        if text is not None:
            return DecodedText(text, "utf-8", False, True)
        return DecodedText(body.decode("utf-8", "replace"), "utf-8", True, True)
    for bom, enc in ((codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be")):
        if data.startswith(bom):
            body = data[len(bom):]
            text = _strict(body, enc)
            if text is not None:
                return DecodedText(text, enc, False, True)
            return DecodedText(body.decode(enc, "replace"), enc, True, True)
    text = _strict(data, "utf-8")
    if text is not None:
        return DecodedText(text, "utf-8", False, False)
    if declared:
        name = _codec_name(declared)
        if name and name != "utf-8":
            text = _strict(data, name)
            if text is not None:
                return DecodedText(text, name, False, False)
    text = _strict(data, "gb18030")
    if text is not None and _mostly_cjk(text):
        return DecodedText(text, "gb18030", False, False)
    best = charset_normalizer.from_bytes(data, cp_isolation=DETECTOR_CANDIDATES).best()
    if best is not None:
        name = _codec_name(best.encoding)
        if name:
            text = _strict(data, name)
            if text is not None:
                return DecodedText(text, name, False, False)
    return DecodedText(data.decode("utf-8", "replace"), "utf-8", True, False)


def _mostly_cjk(text: str) -> bool:
    """True when at least 60% of the non-ASCII characters are CJK ideographs, CJK
    punctuation or full-width forms — what a GBK/GB18030 source looks like once decoded."""
    non_ascii = [c for c in text if ord(c) > 0x7F]
    if not non_ascii:
        return False
    cjk = sum(1 for c in non_ascii if 0x4E00 <= ord(c) <= 0x9FFF or 0x3000 <= ord(c) <= 0x303F
              or 0xFF00 <= ord(c) <= 0xFFEF or 0x3400 <= ord(c) <= 0x4DBF or 0x20000 <= ord(c) <= 0x2FFFF)
    return cjk * 10 >= len(non_ascii) * 6


def split_lines(text: str) -> list[str]:
    """Lines of ``text`` by the rule of the module docstring: split on ``\\n`` and on a lone ``\\r``
    (the ``\\r`` of a CRLF kept in its line). A trailing line end gives no extra line."""
    lines = normalize_line_ends(text).split("\n")
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    return lines


def line_span_text(lines: list[str], start_line: int, end_line: int) -> str:
    """Text of 1-based inclusive lines ``start_line..end_line``, without the last terminator."""
    return "\n".join(lines[start_line - 1:end_line])


def looks_binary(data: bytes) -> bool:
    """git's heuristic: a NUL byte in the first 8000 bytes means binary content."""
    return b"\x00" in data[:8000]


LFS_POINTER_PREFIX = b"version https://git-lfs.github.com/spec/v1"


def is_lfs_pointer(data: bytes) -> bool:
    """A Git LFS pointer file in place of the real content."""
    return len(data) < 1024 and data.startswith(LFS_POINTER_PREFIX)
