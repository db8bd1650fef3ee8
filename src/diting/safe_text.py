"""Text from scanned code made safe for each output: terminal and table text, JSON, Markdown.

Paths, ids, URLs and values come from repositories anyone may write: a control character would end
a table row or drive a terminal, a bidirectional mark would make text read in another order than it
is stored, Markdown or HTML in a name would become markup (docs/cli.md §1). Every renderer writes such
text through one of these functions; they import nothing of diting's, so any stage may use them.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

#: control characters — newlines and tabs too: one value, one line — and the bidirectional overrides and
#: isolates that make text read in another order than it is stored
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
#: the same, but a tab or a newline stays (a multi-line message on a terminal)
_CONTROL_BUT_LINES = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def printable(text: str, lines: bool = False) -> str:
    """Text from scanned code made safe to show: control characters (a newline would end a Mermaid
    line or a table cell; XML forbids most of them; escape sequences drive a terminal) and
    bidirectional overrides written as ``\\xNN`` / ``\\uNNNN``; with ``lines``, tabs and newlines
    are kept."""
    return (_CONTROL_BUT_LINES if lines else _CONTROL).sub(
        lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}", text)


#: what ``json.dumps(ensure_ascii=False)`` leaves unescaped of :data:`_CONTROL`: DEL, the C1 controls
#: (U+009B is a terminal's CSI) and the bidirectional marks (it escapes U+0000–U+001F itself)
_CONTROL_JSON_KEEPS = re.compile(r"[\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def json_text(value: Any, **dumps: Any) -> str:
    """``json.dumps(value, ensure_ascii=False, **dumps)`` with every character :func:`printable` would
    escape written as a JSON ``\\uNNNN`` escape: the same JSON to a parser, safe on a terminal. A float
    JSON cannot hold (NaN, ±infinity) is written as the string ``"NaN"``, ``"Infinity"`` or
    ``"-Infinity"``, a mapping key JSON cannot name as its text: the text is strict JSON. Raises what ``json.dumps`` raises (``TypeError`` for a
    value JSON cannot hold, without ``default``)."""
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False, **dumps)
    except (ValueError, TypeError):  # a non-finite float, or a mapping key JSON cannot name: walked only then
        text = json.dumps(_jsonable(value), ensure_ascii=False, allow_nan=False, **dumps)
    return _CONTROL_JSON_KEEPS.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _finite(value: float) -> float | str:
    """A float as JSON holds it: NaN and ±infinity as their names."""
    if math.isfinite(value):
        return value
    return "NaN" if value != value else ("Infinity" if value > 0 else "-Infinity")


def _jsonable(value: Any) -> Any:
    """``value`` with each non-finite float (in lists, tuples and mappings) as its name and each mapping
    key JSON cannot name (a float that is not finite, a date, bytes, a decimal …) as its text. The
    nesting is walked with a stack of its own (no recursion: a query may return any depth)."""
    def convert(v: Any) -> Any:
        if isinstance(v, float):
            return _finite(v)
        if isinstance(v, dict):
            out: Any = {}
        elif isinstance(v, (list, tuple)):
            out = []
        else:
            return v
        stack.append((v, out))
        return out

    def key(k: Any) -> Any:
        if isinstance(k, float):
            return _finite(k)
        return k if k is None or isinstance(k, (str, int, bool)) else str(k)

    stack: list[tuple[Any, Any]] = []
    root = convert(value)
    while stack:
        src, dst = stack.pop()
        if isinstance(src, dict):
            for k, v in src.items():
                dst[key(k)] = convert(v)
        else:
            dst.extend(convert(v) for v in src)
    return root


def markdown_text(text: object) -> str:
    """Text from scanned code as it may appear in Markdown prose or a table cell: :func:`printable`,
    HTML markup escaped (``<`` ``>`` ``&``), ``|`` escaped, backticks made quotes, Markdown's emphasis
    and link marks escaped — it can neither end a cell or a ``<details>`` nor inject markup."""
    import html
    out = html.escape(printable(str(text)), quote=False).replace("|", "\\|").replace("`", "'")
    return "".join("\\" + ch if ch in "*_[]#~" else ch for ch in out)


def markdown_code(text: object, in_table: bool = True) -> str:
    """Text for the inside of a Markdown code span (literal there: no HTML is interpreted):
    :func:`printable`, backticks made quotes (a backtick would end the span), and in a table cell
    ``|`` escaped (GFM tables split on it even inside a span; elsewhere the backslash would show)."""
    out = printable(str(text)).replace("`", "'")
    return out.replace("|", "\\|") if in_table else out


def markdown_with_code(text: object) -> str:
    """Text whose backtick pairs mark code spans (a template's quoting): the prose escaped with
    :func:`markdown_text`, the spans with :func:`markdown_code`."""
    parts = str(text).split("`")
    if len(parts) % 2 == 0:  # an unpaired backtick: no span at all
        return markdown_text(text)
    return "".join(markdown_code(p, in_table=False).join("``") if i % 2 else markdown_text(p)
                   for i, p in enumerate(parts))
