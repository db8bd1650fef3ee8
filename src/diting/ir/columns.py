"""The graph's columns of each jsonl file, read from the record models (docs/graph.md §3).

The models of :mod:`diting.ir.models` are the one owner of a record's fields; the graph stores a
record as one row whose columns are generated here, so a field added to a model is a column of the
graph without a second list to keep (DuckDB's ``read_json`` drops a key its column list lacks,
silently). Types map as follows:

- a string, an enum or a string ``Literal`` → ``VARCHAR``; ``bool`` → ``BOOLEAN``; ``int`` → ``INTEGER``;
- a nested record (:class:`~diting.ir.models.Ref`, an implementation ref, a locator) → a ``STRUCT`` of
  its own columns; a list of :class:`~diting.ir.models.Ref` → that struct's list (``[]``);
- anything else (free-form mappings, lists of strings or of other records) → ``JSON``.

An optional field (``X | None``) takes X's column. Columns come in field order, ``record_id`` and
``kind`` first; a union of record models (the entity kinds) gives the union of their fields, each
once, where it first appears.
"""

from __future__ import annotations

import enum
import types
import typing
from typing import Any, Literal, Union

from pydantic import BaseModel

from diting.ir.models import JSONL_MODELS, EntityRecord, Ref

#: the fields every record keeps in front, in this order, when it has them
_LEADING = ("record_id", "kind")


def _optional_inner(annotation: Any) -> Any:
    """``X`` of ``X | None``; ``annotation`` itself otherwise."""
    if typing.get_origin(annotation) in (Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return args[0]
    return annotation


def column_type(annotation: Any) -> str:
    """The DuckDB type of a model field's annotation (the mapping in the module docstring)."""
    annotation = _optional_inner(annotation)
    origin = typing.get_origin(annotation)
    if annotation is str or origin is Literal and all(isinstance(a, str) for a in typing.get_args(annotation)):
        return "VARCHAR"
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return "VARCHAR"
    if annotation is bool:
        return "BOOLEAN"
    if annotation is int:
        return "INTEGER"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        body = ", ".join(f"{name} {column_type(f.annotation)}" for name, f in annotation.model_fields.items())
        return f"STRUCT({body})"
    if origin is list and typing.get_args(annotation) == (Ref,):
        return f"{column_type(Ref)}[]"
    return "JSON"


def _record_models(model: type[BaseModel]) -> list[type[BaseModel]]:
    """The record models one line of a jsonl file can be: the entity kinds for entities, else ``model``."""
    if model is EntityRecord:
        union = _optional_inner(EntityRecord.model_fields["root"].annotation)
        return list(typing.get_args(union))
    return [model]


def model_columns(model: type[BaseModel]) -> dict[str, str]:
    """``{column: DuckDB type}`` of one jsonl file's record model (``EntityRecord``: every entity kind's
    fields). Raises ``ValueError`` when two kinds give one field different types."""
    cols: dict[str, str] = {}
    for m in _record_models(model):
        for name, f in m.model_fields.items():
            kind = column_type(f.annotation)
            if cols.setdefault(name, kind) != kind:
                raise ValueError(f"{m.__name__}.{name}: {kind} where another record kind has {cols[name]}")
    leading = {name: cols.pop(name) for name in _LEADING if name in cols}
    return {**leading, **cols}


#: jsonl file → ``{column: DuckDB type}`` of its records, in :data:`~diting.ir.models.JSONL_MODELS` order
JSONL_COLUMNS: dict[str, dict[str, str]] = {name: model_columns(model) for name, model in JSONL_MODELS.items()}
