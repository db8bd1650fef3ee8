"""Canonical JSON bytes for IR files (SPEC §3).

Rules: keys sorted, no insignificant whitespace, UTF-8 (no ASCII escaping),
no floating-point numbers anywhere. One JSON value per line in ``.jsonl``
files, one trailing newline per line.
"""

from __future__ import annotations

import hashlib
from typing import Any, Callable

import orjson


class CanonicalError(ValueError):
    """Raised when a value cannot be written canonically (a float, NaN, a non-string key)."""


def _check(value: Any, path: str = "$") -> None:
    if isinstance(value, bool) or value is None or isinstance(value, (int, str)):
        return
    if isinstance(value, float):
        raise CanonicalError(f"floating-point number at {path}: IR values never hold floats")
    if isinstance(value, dict):
        for k, v in value.items():
            if not isinstance(k, str):
                raise CanonicalError(f"non-string key {k!r} at {path}")
            _check(v, f"{path}.{k}")
        return
    if isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            _check(v, f"{path}[{i}]")
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
    _check(value)
    try:
        return dumps_bytes(value).decode("utf-8")
    except (orjson.JSONEncodeError, UnicodeDecodeError) as exc:
        raise CanonicalError(str(exc)) from exc


def sha256_hex(data: bytes | str) -> str:
    """Lower-case hex sha256 of ``data`` (str is encoded as UTF-8)."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    return hashlib.sha256(data).hexdigest()


def jsonl_bytes(records: list[dict[str, Any]]) -> bytes:
    """Canonical jsonl: one canonical line per record, each ending in ``\\n``."""
    return b"".join(dumps(r).encode("utf-8") + b"\n" for r in records)
