"""JSON Schemas of the IR records and of rule files, generated from the models (``diting schema``).

The exported schemas also ship inside the package (``diting/ir/schemas``);
a test fails when they drift from the models.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

from diting.coverage.model import CoverageReport
from diting.diff.model import DiffRangeReport, DiffReport
from diting.ir.models import (
    ConfigBinding,
    Coverage,
    Diagnostic,
    Entity,
    LedgerItem,
    Relation,
    SourceSegment,
)
from diting.ir.writer import manifest_schema
from diting.probes.model import RuleFile

SHIPPED_DIR = Path(__file__).parent / "schemas"


def schemas() -> dict[str, dict[str, Any]]:
    """File name → JSON Schema for every record kind and package file."""
    out: dict[str, dict[str, Any]] = {
        "entity.schema.json": TypeAdapter(Entity).json_schema(),
        "relation.schema.json": Relation.model_json_schema(),
        "source_segment.schema.json": SourceSegment.model_json_schema(),
        "config_binding.schema.json": ConfigBinding.model_json_schema(),
        "diagnostic.schema.json": Diagnostic.model_json_schema(),
        "branch_ledger_item.schema.json": LedgerItem.model_json_schema(),
        "coverage.schema.json": Coverage.model_json_schema(),
        "ir-manifest-0.1.schema.json": manifest_schema(),
        "rule-file.schema.json": RuleFile.model_json_schema(),
        "diff-report.schema.json": DiffReport.model_json_schema(by_alias=True),
        "diff-range-report.schema.json": DiffRangeReport.model_json_schema(by_alias=True),
        "coverage-report.schema.json": CoverageReport.model_json_schema(),
    }
    for name, s in out.items():
        if name != "ir-manifest-0.1.schema.json":
            s.setdefault("$schema", "https://json-schema.org/draft/2020-12/schema")
            s.setdefault("$id", "urn:diting:ir:" + name.replace(".schema.json", "") + ":0.1")
    return out


def render(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def export_schemas(out_dir: Path) -> list[Path]:
    """Write every schema into ``out_dir``; returns the written paths. Raises OSError."""
    from diting.ir.writer import refuse_inside_package
    refuse_inside_package(out_dir, "--out")
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, s in sorted(schemas().items()):
        p = out_dir / name
        p.write_text(render(s), encoding="utf-8")
        written.append(p)
    return written
