"""The lexer of Gradle build scripts (Groovy and Kotlin DSL): tokens, strings with their templates,
Groovy slashy strings (docs/gradle.md, "How scripts are read"). It never raises: what it cannot read
becomes an error (line, message) and lexing goes on."""

from __future__ import annotations

import re

from diting.inventory.gradle_ast import Tok


_OPS3 = ("===", "!==", "?.[", "...", "..<", "<=>", ">>>", "**=", "<<=", ">>=")


_OPS2 = ("==", "!=", "<=", ">=", "&&", "||", "?:", "?.", "->", "+=", "-=", "*=", "/=", "%=", "++", "--", "..",
         "::", "<<", ">>", "=~", "==~", "!!", "*.", ".&", ".@", "**")


#: the common tokens in one pattern (a compiled regex scans them far faster than a loop over
#: characters): blanks, a newline, a line comment, an identifier, a number, an operator
_FAST = re.compile(r"(?P<ws>[ \t\f\ufeff]+|\r(?=\n))|(?P<nl>\n)|(?P<cm>//[^\n\r]*)"
                   r"|(?P<id>(?:[^\W\d]|\$)[\w$]*)|(?P<num>\d(?:\w|\.(?!\.))*)"
                   r"|(?P<op>" + "|".join(re.escape(o) for o in sorted(_OPS3 + _OPS2, key=len, reverse=True)) + r"|[^\s\w'\"`/\\])")


#: after these tokens a Groovy ``/`` starts a slashy string, not a division
_SLASHY_AFTER = {"=", "(", ",", "[", ":", "{", "==~", "=~", "~", "!", "&&", "||", "?", "+", "->", "return", "nl"}


def lex(text: str, errors: list[tuple[int, str]], dsl: str = "groovy") -> list[Tok]:
    """Tokens of a script whose lone ``\\r`` are already ``\\n`` (:func:`read_script`); Groovy slashy
    (``/…/``) and dollar-slashy (``$/…/$``) strings are strings, so that text inside them is never
    read as code."""
    toks: list[Tok] = []
    append = toks.append
    i, n, line = 0, len(text), 1
    if text.startswith("#!"):
        i = text.find("\n")
        i = n if i < 0 else i
    match = _FAST.match
    while i < n:
        c = text[i]
        if dsl == "groovy" and (c == "/" or text.startswith("$/", i)) and _slashy_here(toks, text, i):
            tok, i, line = _slashy(text, i, line, errors)
            append(tok)
            continue
        m = match(text, i)
        if m is not None:
            kind = m.lastgroup
            if kind == "nl":
                append(Tok("nl", "\n", line))
                line += 1
            elif kind in ("id", "num", "op"):
                append(Tok(kind, m.group(), line))
            i = m.end()
            continue
        if c == "\\" and text.startswith("\\\n", i):
            line += 1
            i += 2
            continue
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            if j < 0:
                errors.append((line, "unterminated comment"))
                j = n
            line += text.count("\n", i, j)
            i = j + 2
            continue
        if c in "'\"":
            triple = text.startswith(c * 3, i)
            tok, i, line = _string(text, i, line, c, triple, errors, raw=triple and dsl == "kotlin")
            append(tok)
            continue
        if c == "`":
            j = text.find("`", i + 1)
            nl = text.find("\n", i + 1, j if j >= 0 else n)
            if j < 0 or nl >= 0:
                errors.append((line, "unterminated backtick name"))
                i += 1
                continue
            append(Tok("id", text[i + 1:j], line))
            i = j + 1
            continue
        append(Tok("op", c, line))  # '/', a lone backslash, other whitespace
        i += 1
    append(Tok("eof", "", line))
    return toks


def _slashy_here(toks: list[Tok], text: str, i: int) -> bool:
    """Whether a ``/`` (or ``$/``) at ``i`` starts a Groovy slashy string: where an expression starts
    (after an operator, an opening bracket, a newline or the start), not before a blank or a comment."""
    if text.startswith("$/", i):
        return True
    nxt = text[i + 1:i + 2]
    if nxt in ("", " ", "\t", "\n", "\r", "/", "*", "="):
        return False
    prev = toks[-1] if toks else None
    return prev is None or (prev.kind == "nl" or prev.kind in ("op", "id") and prev.value in _SLASHY_AFTER)


def _slashy(text: str, i: int, line: int, errors) -> tuple[Tok, int, int]:
    """A slashy string ``/…/`` (``\\/`` escapes the slash) or dollar-slashy ``$/…/$``: kept whole,
    its templates are not evaluated (it is a pattern or a text, never a coordinate of the build)."""
    start = line
    dollar = text.startswith("$/", i)
    end = text.find("/$", i + 2) if dollar else -1
    if not dollar:
        j = i + 1
        while j < len(text):
            if text[j] == "\\" and j + 1 < len(text):
                j += 2
                continue
            if text[j] == "/":
                end = j
                break
            j += 1
    if end < 0:
        errors.append((start, "unterminated slashy string"))
        end = len(text)
    body = text[i + (2 if dollar else 1):end]
    line += body.count("\n")
    return Tok("str", "", start, (("$", "slashy"),)), min(len(text), end + (2 if dollar else 1)), line


def _string(text: str, i: int, line: int, q: str, triple: bool, errors, raw: bool = False) -> tuple[Tok, int, int]:
    """One string literal from ``text[i]``: (token, next index, line after it). ``raw``: a Kotlin
    raw string (``\"\"\"…\"\"\"``), where a backslash escapes nothing."""
    start_line = line
    n = len(text)
    i += 3 if triple else 1
    templates = q == '"'
    parts: list = []
    buf: list[str] = []
    while True:
        if i >= n:
            errors.append((start_line, "unterminated string"))
            break
        c = text[i]
        if triple and text.startswith(q * 3, i):
            i += 3
            break
        if not triple and c == q:
            i += 1
            break
        if c == "\n":
            if not triple:
                errors.append((start_line, "unterminated string"))
                break
            line += 1
        if c == "\\" and i + 1 < n and not raw:
            nxt = text[i + 1]
            if nxt == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", text[i + 2:i + 6]):
                buf.append(chr(int(text[i + 2:i + 6], 16)))
                i += 6
                continue
            buf.append({"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "0": "\0"}.get(nxt, nxt))
            if nxt == "\n":
                line += 1
            i += 2
            continue
        if templates and c == "$" and i + 1 < n:
            if text[i + 1] == "{":
                depth, j = 1, i + 2
                while j < n and depth:
                    if text[j] == "{":
                        depth += 1
                    elif text[j] == "}":
                        depth -= 1
                    elif text[j] == "\n":
                        line += 1
                    j += 1
                if buf:
                    parts.append("".join(buf))
                    buf = []
                parts.append(("$", text[i + 2:j - 1].strip()))
                i = j
                continue
            if text[i + 1].isalpha() or text[i + 1] == "_":
                j = i + 1
                while j < n and (text[j].isalnum() or text[j] in "_."):
                    j += 1
                name = text[i + 1:j].rstrip(".")
                j = i + 1 + len(name)
                if buf:
                    parts.append("".join(buf))
                    buf = []
                parts.append(("$", name))
                i = j
                continue
        buf.append(c)
        i += 1
    if buf or not parts:
        parts.append("".join(buf))
    merged: list = []
    for p in parts:
        if isinstance(p, str) and merged and isinstance(merged[-1], str):
            merged[-1] += p
        else:
            merged.append(p)
    return Tok("str", "", start_line, tuple(merged)), i, line
