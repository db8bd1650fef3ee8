"""Java's lexical translation (JLS §3): Unicode escapes translated before the parser reads a file
(§3.3), and the values of string, text-block, character and integer literals (§3.10)."""

from __future__ import annotations

import re

from diting.source.text import has_surrogates, scrub_surrogates

_UNICODE_ESCAPE = re.compile(r"(?<!\\)((?:\\\\)*)\\u+([0-9a-fA-F]{4})")
#: control characters an escape is translated to: line terminators (the parser's rows are mapped back
#: to the file's lines) and the two other white-space characters (JLS §3.6)
_TRANSLATED_CONTROLS = {"\n": "\n", "\r": "\n", "\t": "\t", "\f": "\f"}


def translate_unicode_escapes(text: str) -> tuple[str, list[int] | None]:
    """Java's first translation step (JLS §3.3): ``\\uXXXX`` escapes become characters before
    lexing, so the parser reads what javac reads. A backslash preceded by an odd number of
    backslashes starts no escape, and a backslash an escape makes (``\\u005c``) starts none either.

    Returns the translated text and, when an escape was a line terminator (``\\u000a``,
    ``\\u000d``: it ends a ``//`` comment, and what follows is code javac compiles), the file line
    of each row of the translated text; else None (rows are lines). A line terminator becomes LF,
    tab and form feed themselves; other control characters and surrogates are kept as written (a
    literal such as ``'\\u0000'`` stays an escape sequence the parser reads, of the same value)."""
    if "\\u" not in text:
        return text, None
    breaks = False

    def repl(m: re.Match[str]) -> str:
        nonlocal breaks
        ch = chr(int(m.group(2), 16))
        if ch in _TRANSLATED_CONTROLS:
            breaks = breaks or ch in "\n\r"
            return m.group(1) + _TRANSLATED_CONTROLS[ch]
        if ord(ch) < 0x20 or 0x7F <= ord(ch) <= 0x9F or 0xD800 <= ord(ch) <= 0xDFFF:
            return m.group(0)
        return m.group(1) + ch

    # an escape never spans a line: each line is translated alone, and its rows counted
    lines = text.split("\n")
    out = [_UNICODE_ESCAPE.sub(repl, ln) if "\\u" in ln else ln for ln in lines]
    if not breaks:
        return "\n".join(out), None
    rows = [n for n, ln in enumerate(out, 1) for _ in range(ln.count("\n") + 1)]
    return "\n".join(out), rows


_ESCAPES = {"b": "\b", "t": "\t", "n": "\n", "f": "\f", "r": "\r", "s": " ", '"': '"', "'": "'", "\\": "\\"}


def unescape_java(body: str) -> str | None:
    """Java string/char literal body → value; None on an invalid escape."""
    out: list[str] = []
    i, n = 0, len(body)
    while i < n:
        ch = body[i]
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        i += 1
        if i >= n:
            return None
        e = body[i]
        if e in _ESCAPES:
            out.append(_ESCAPES[e])
            i += 1
        elif e == "u":
            while i < n and body[i] == "u":
                i += 1
            hexd = body[i:i + 4]
            if len(hexd) != 4:
                return None
            try:
                out.append(chr(int(hexd, 16)))
            except ValueError:
                return None
            i += 4
        elif e in "01234567":
            j = i
            limit = 3 if e in "0123" else 2
            while j < n and j - i < limit and body[j] in "01234567":
                j += 1
            out.append(chr(int(body[i:j], 8)))
            i = j
        elif e == "\n":  # line continuation in text blocks
            i += 1
        else:
            return None
    text = "".join(out)
    if has_surrogates(text):
        joined = scrub_surrogates(text)
        return None if "\ufffd" in joined and "\ufffd" not in text else joined
    return text


def text_block_value(raw: str) -> str | None:
    """Value of a Java text block (``\"\"\"`` … ``\"\"\"``), indentation stripped (JLS 3.10.6)."""
    inner = raw[3:-3]
    nl = inner.find("\n")
    if nl < 0:
        return None
    content = inner[nl + 1:]
    lines = content.replace("\r\n", "\n").split("\n")  # line terminators read as LF (JLS 3.10.6)
    significant = [ln for ln in lines if ln.strip()] + [lines[-1]]
    indent = min((len(ln) - len(ln.lstrip(" \t")) for ln in significant), default=0)
    stripped = [ln[indent:].rstrip(" \t") for ln in lines]
    return unescape_java("\n".join(stripped))


def int_literal_value(text: str) -> str | None:
    """Value of an integer literal (JLS §3.10.1): hex, octal and binary literals up to the
    type's width in two's complement, decimals up to its maximum; None when out of range."""
    is_long = text[-1:] in "lL"
    t = text.replace("_", "").rstrip("lL")
    bits = 64 if is_long else 32
    try:
        if t.lower().startswith(("0x", "0b")) or (len(t) > 1 and t.startswith("0")):
            base, digits = (16, t[2:]) if t.lower().startswith("0x") else (2, t[2:]) if t.lower().startswith("0b") \
                else (8, t[1:])
            v = int(digits, base)
            if v >= 1 << bits:
                return None
            return str(v - (1 << bits) if v >= 1 << (bits - 1) else v)
        v = int(t)
        # 2147483648 is legal only as the operand of unary minus; folding keeps it and wraps
        return str(v) if v <= 1 << (bits - 1) else None
    except ValueError:
        return None

