"""Shape checks of the plain-dict contracts between stages: expression JSON (``java/facts.Expr``),
rule-match candidates (``probes/matches.Candidate``) and records (``ir/builder``). They are declared
as TypedDicts, which cost nothing at scan time; with validation on (the test suite, and
``DITING_VALIDATE=1``) every value crossing a stage is checked against its declaration, extra keys
included, so a key one stage writes and no declaration names fails the tests instead of being read
by nobody (docs/architecture.md §3)."""

from __future__ import annotations

import os
from functools import lru_cache
from typing import Any

from pydantic import TypeAdapter, ValidationError

#: check every value crossing a stage against its declared shape (tests and ``DITING_VALIDATE=1``)
VALIDATE = os.environ.get("DITING_VALIDATE") == "1"


class ShapeError(ValueError):
    """A value that does not have its declared shape: a bug in diting, never in the input."""


@lru_cache(maxsize=None)
def _adapter(shape: Any) -> TypeAdapter:
    return TypeAdapter(shape)


def check_each(shape: Any, items: list[tuple[str, Any]], what: str) -> None:
    """Check every value of ``items`` (``(where, value)`` pairs) against ``shape`` in one call; when one
    fails, raise :class:`ShapeError` naming the first that does (``what: where: …``)."""
    try:
        check_shape(list[shape], [v for _, v in items], what)
    except ShapeError:
        for where, v in items:
            check_shape(shape, v, f"{what}: {where}")
        raise


def check_shape(shape: Any, value: Any, what: str) -> None:
    """Raise :class:`ShapeError` naming ``what`` when ``value`` does not validate against ``shape``
    (a TypedDict, or a union or list of them). The value is not changed."""
    try:
        _adapter(shape).validate_python(value, strict=True)
    except ValidationError as exc:
        raise ShapeError(f"{what}: {exc}") from exc
