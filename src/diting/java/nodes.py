"""Tree-sitter node helpers the Java readers share: a node's text, its file lines, and ranges that nest.

The extractor (:mod:`diting.java.syntax`, :mod:`diting.java.expressions`, :mod:`diting.java.bodies`)
and :mod:`diting.java.branches` (the arms of a body) read node text and place nodes by line and by
the innermost enclosing byte range; all read these from here.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import tree_sitter as ts

#: the file line of each parser row while a file whose Unicode escapes break lines is extracted
#: (:func:`diting.java.lexical.translate_unicode_escapes`); None when rows and lines are one (every other file)
_ROW_LINES: list[int] | None = None  # set by rows_as_lines for one file's extraction


def node_text(node: ts.Node, src: bytes) -> str:
    """A node's source text (bytes that are not UTF-8 replaced)."""
    return src[node.start_byte:node.end_byte].decode("utf-8", "replace")


def snippet(node: ts.Node, src: bytes, limit: int = 400) -> str:
    """At most ``limit`` characters of a node's text, without decoding the rest of it."""
    start = node.start_byte
    return src[start:min(node.end_byte, start + limit * 4)].decode("utf-8", "ignore")[:limit]


def row_line(row: int) -> int:
    """The 1-based line of a parser row: the decoded text has no lone CR (a LF stands for it,
    :mod:`diting.source.text`), so the parser's rows and evidence lines are both counted on LF —
    but for a line holding an escaped line terminator (``\\u000a``), which is several parser rows
    on one line of the file (:data:`_ROW_LINES`)."""
    if _ROW_LINES is None:
        return row + 1
    return _ROW_LINES[min(row, len(_ROW_LINES) - 1)]


def line_of(node: ts.Node) -> int:
    """The 1-based file line a node starts on."""
    return row_line(node.start_point[0])


def end_line_of(node: ts.Node) -> int:
    """The 1-based file line a node ends on (one ending at column 0 ends on the line before)."""
    end = node.end_point
    # a node that ends at column 0 ends on the previous line
    row = end[0] - (0 if end[1] > 0 or end[0] == node.start_point[0] else 1)
    return row_line(row)


@contextmanager
def rows_as_lines(row_lines: list[int] | None) -> Iterator[None]:
    """While one file is extracted: ``row_lines`` maps each parser row to its file line (None when
    rows and lines are one)."""
    global _ROW_LINES
    _ROW_LINES = row_lines
    try:
        yield
    finally:
        _ROW_LINES = None


class Nesting:
    """Byte ranges that nest or are disjoint (members, lambdas …), each with the innermost range
    around it, so the range holding a node is found in O(log n + nesting depth) however many sibling
    ranges precede it. ``ranges`` are ``(start, end, payload)``."""

    def __init__(self, ranges: list[tuple[int, int, Any]]) -> None:
        self.ranges = sorted(ranges, key=lambda m: (m[0], -m[1]))
        self.starts = [m[0] for m in self.ranges]
        self.parent: list[int] = []
        stack: list[int] = []
        for start, end, _ in self.ranges:
            while stack and self.ranges[stack[-1]][1] < end:
                stack.pop()
            self.parent.append(stack[-1] if stack else -1)
            stack.append(len(self.parent) - 1)

    def find(self, start: int, end: int, floor: int = -1) -> int:
        """Index of the innermost range holding ``start..end`` that starts after ``floor``; -1."""
        i = bisect.bisect_right(self.starts, start) - 1
        while i >= 0 and self.ranges[i][0] > floor:
            if end <= self.ranges[i][1]:
                return i
            i = self.parent[i]
        return -1

    def innermost(self, node: ts.Node) -> Any:
        """The payload of the innermost range holding ``node`` (None when none does)."""
        i = self.find(node.start_byte, node.end_byte)
        return self.ranges[i][2] if i >= 0 else None
