"""Canonical JSON bytes for IR files (docs/ir.md §1.2).

Rules: keys sorted, no insignificant whitespace, UTF-8 (no ASCII escaping),
no floating-point numbers anywhere. One JSON value per line in ``.jsonl``
files, one trailing newline per line.
"""

from __future__ import annotations

import hashlib
import json
import re
from itertools import accumulate
from typing import Any, Callable

import orjson


class CanonicalError(ValueError):
    """Raised when a value cannot be written canonically (a float, NaN, a non-string key)."""


def check_ir_value(value: Any, path: str = "$") -> None:
    """Raise :class:`CanonicalError` naming the JSON path of the first value an IR record may not hold:
    a float, a non-string key, or a type JSON has no form for (records are built from our own
    values; a package read back is depth-checked on its bytes first)."""
    if isinstance(value, bool) or value is None or isinstance(value, (int, str)):
        return
    if isinstance(value, float):
        raise CanonicalError(f"floating-point number at {path}: IR values never hold floats")
    if isinstance(value, dict):
        for k, v in value.items():
            if not isinstance(k, str):
                raise CanonicalError(f"non-string key {k!r} at {path}")
            check_ir_value(v, f"{path}.{k}")
        return
    if isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            check_ir_value(v, f"{path}[{i}]")
        return
    raise CanonicalError(f"unsupported type {type(value).__name__} at {path}")


def dumps_bytes(value: Any, default: Callable[[Any], Any] | None = None) -> bytes:
    """Canonical JSON as UTF-8 bytes (no trailing newline), without the float check: for values
    already known to be float-free (validated records). ``default`` converts other objects.

    orjson with sorted keys writes exactly what ``json.dumps(sort_keys=True,
    separators=(",", ":"), ensure_ascii=False)`` writes, several times faster."""
    return orjson.dumps(value, default=default, option=orjson.OPT_SORT_KEYS)


def dumps(value: Any) -> str:
    """Return the canonical JSON text of ``value`` (no trailing newline).

    Raises :class:`CanonicalError` for floats or other non-JSON values.
    """
    check_ir_value(value)
    try:
        return dumps_bytes(value).decode("utf-8")
    except (orjson.JSONEncodeError, UnicodeDecodeError) as exc:
        raise CanonicalError(str(exc)) from exc


def sha256_hex(data: bytes | str) -> str:
    """Lower-case hex sha256 of ``data`` (str is encoded as UTF-8)."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    return hashlib.sha256(data).hexdigest()


#: The longest line of a package's jsonl file (bytes, without its newline) the product accepts:
#: ``verify`` refuses a longer one (file:line), ``graph build`` has DuckDB read any line this long
#: (its default ``maximum_object_size`` admits about 32 MiB), and no scan writes a longer one (a
#: segment whose record would be longer is cut to its first lines, BUDGET_EXHAUSTED; a file with a
#: line too long to cite is not read, FILE_TOO_LARGE — :data:`diting.source.snapshot.MAX_LINE_BYTES`).
MAX_RECORD_BYTES = 64 * 1024 * 1024
#: the options of every DuckDB ``read_json`` of jsonl diting wrote: any line verify admits loads
READ_JSONL_OPTIONS = f"format = 'newline_delimited', maximum_object_size = {MAX_RECORD_BYTES}"


def long_line(data: bytes, limit: int = MAX_RECORD_BYTES) -> tuple[int, int] | None:
    """``(1-based line, length in bytes)`` of the first line of ``data`` (split on ``\\n``, the
    newline not counted) longer than ``limit``; None when none is. A byte scan: ``data`` no longer
    than ``limit`` is not even split."""
    if len(data) <= limit:
        return None
    start, n = 0, 1
    while True:
        nl = data.find(b"\n", start)
        end = len(data) if nl < 0 else nl
        if end - start > limit:
            return n, end - start
        if nl < 0:
            return None
        start, n = nl + 1, n + 1


#: JSON in an IR package nests at most this deep (records nest about a dozen levels): deeper is
#: hostile input, refused before a recursive parser or walker meets it
MAX_JSON_DEPTH = 100
JSON_STRING = re.compile(rb'"[^"\\\n]*(?:\\.[^"\\\n]*)*"')
_NOT_BRACKET = re.compile(rb"[^\[\]{}\n]+")
_DELTA = [0] * 256
_DELTA[ord("[")] = _DELTA[ord("{")] = 1
_DELTA[ord("]")] = _DELTA[ord("}")] = -1


class JsonTooDeep(ValueError):
    """JSON nested deeper than :data:`MAX_JSON_DEPTH`; ``line`` is the 1-based line where it gets too deep."""

    def __init__(self, line: int) -> None:
        super().__init__(f"line {line}: JSON nested more than {MAX_JSON_DEPTH} levels deep")
        self.line = line


def too_deep_line(data: bytes | str, per_line: bool = False) -> int | None:
    """The first 1-based line where the JSON in ``data`` nests deeper than :data:`MAX_JSON_DEPTH`,
    None when it never does. ``per_line``: each line is a value of its own (jsonl). Strings are
    skipped; linear, and no recursion, whatever the input."""
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    for n, chunk in enumerate(data.split(b"\n") if per_line else [data], 1):
        if chunk.count(b"[") + chunk.count(b"{") <= MAX_JSON_DEPTH:
            continue  # too few brackets to nest that deep (the common case: no regex, no walk)
        skeleton = _NOT_BRACKET.sub(b"", JSON_STRING.sub(b"", chunk))  # brackets and line breaks
        if max(accumulate(map(_DELTA.__getitem__, skeleton)), default=0) > MAX_JSON_DEPTH:
            if per_line:
                return n
            first = next(i for i, d in enumerate(accumulate(map(_DELTA.__getitem__, skeleton))) if d > MAX_JSON_DEPTH)
            return skeleton.count(b"\n", 0, first) + 1
    return None


def loads(data: bytes | str) -> Any:
    """``json.loads`` of package JSON (one file, or one jsonl line), refusing nesting deeper than
    :data:`MAX_JSON_DEPTH` with :class:`JsonTooDeep` (a ``ValueError``, as every JSON error is)."""
    line = too_deep_line(data)
    if line is not None:
        raise JsonTooDeep(line)
    return json.loads(data)
