"""The graph's columns come from the record models (docs/ir.md §1): no field without a column."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel

from diting.graph.store import TABLES, connect
from diting.graph.store import _create as create_tables
from diting.ir.columns import JSONL_COLUMNS, column_type, model_columns
from diting.ir.models import JSONL_MODELS, EntityRecord, Ref, Relation
from tests.conftest import ROOT


def _fields(model: type[BaseModel]) -> set[str]:
    if model is EntityRecord:
        union = EntityRecord.model_fields["root"].annotation
        kinds = getattr(union, "__args__", None) or union.__origin__.__args__  # Annotated[Union[...], ...]
        return {f for k in kinds for f in k.model_fields}
    return set(model.model_fields)


def test_every_model_field_is_a_column_of_the_graph(tmp_path):
    con = connect(tmp_path / "g.duckdb")
    create_tables(con)
    for fname, model in JSONL_MODELS.items():
        table = TABLES[fname][0]
        have = {r[0]: r[1] for r in con.execute(
            "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = ?", [table]).fetchall()}
        missing = _fields(model) - set(have)
        assert not missing, f"{table} lacks columns for {sorted(missing)}"
    con.close()


def test_every_key_of_the_sample_records_has_a_column():
    """What a scan writes is what the graph keeps: each key of each record of the fixture estate's
    packages is a column (DuckDB would drop any other silently)."""
    seen = 0
    for path in sorted((ROOT / "ir_samples").rglob("*.jsonl")):
        cols = JSONL_COLUMNS[path.name]
        for line in path.read_text(encoding="utf-8").splitlines():
            extra = set(json.loads(line)) - set(cols)
            assert not extra, f"{path}: keys {sorted(extra)} have no column"
            seen += 1
    assert seen > 1000


def test_a_field_a_model_gains_is_a_column():
    class Weighted(Relation):
        weight: int
        tags: list[str]
        hops: list[Ref] = []
        note: str | None = None

    cols = model_columns(Weighted)
    assert list(cols)[:3] == ["record_id", "kind", "stable_id"]
    assert cols["weight"] == "INTEGER" and cols["tags"] == "JSON" and cols["note"] == "VARCHAR"
    assert cols["hops"] == "STRUCT(scan_id VARCHAR, record_id VARCHAR)[]"


def test_column_types():
    assert column_type(Ref) == "STRUCT(scan_id VARCHAR, record_id VARCHAR)"
    assert column_type(bool) == "BOOLEAN" and column_type(dict[str, int]) == "JSON"


def test_two_kinds_giving_one_field_two_types_are_refused(monkeypatch):
    class A(BaseModel):
        x: int

    class B(BaseModel):
        x: str

    import diting.ir.columns as columns
    monkeypatch.setattr(columns, "_record_models", lambda model: [A, B])
    with pytest.raises(ValueError, match="x"):
        model_columns(A)


def test_every_record_is_built_with_its_models_fields_and_no_other(monkeypatch):
    """Always on, not only under DITING_VALIDATE: a field no model declares would never reach the graph."""
    import pytest

    from diting.ir import builder
    from diting.ir.builder import BlueprintError, RecordSet

    monkeypatch.setattr(builder, "VALIDATE", False)
    rs = RecordSet("t/r", "0" * 40)
    seg = rs.segment("a.java", ["class A {}"], 1, 1, "CODE", "utf-8")
    rs.entity("TOPIC", "kafka://t", "t", [seg], urn="kafka://t")  # declared extras pass
    with pytest.raises(BlueprintError, match=r"\['priority'\] not in the TOPIC model"):
        rs.entity("TOPIC", "kafka://u", "u", [seg], urn="kafka://u", priority=1)
    with pytest.raises(BlueprintError, match=r"\['urn'\] missing"):
        rs.entity("TOPIC", "kafka://v", "v", [seg])


def test_full_validation_reads_the_reference_markers_in_place(monkeypatch):
    """With validation on (tests, DITING_VALIDATE=1) a blueprint is checked against its model with its
    RefTo/ImplRef markers read as attributes (no stamped copy): a wrong value fails, a right one passes."""
    import pytest

    from diting.ir import builder
    from diting.ir.builder import BlueprintError, RecordSet

    monkeypatch.setattr(builder, "VALIDATE", True)
    rs = RecordSet("t/r", "0" * 40)
    seg = rs.segment("a.java", ["class A {}"], 1, 1, "CODE", "utf-8")
    rs.entity("TOPIC", "kafka://t", "t", [seg], urn="kafka://t")
    with pytest.raises(BlueprintError, match="name"):
        rs.entity("TOPIC", "kafka://w", 7, [seg], urn="kafka://w")  # a name must be a string
    with pytest.raises(BlueprintError, match="floating-point"):
        rs.entity("TOPIC", "kafka://x", "x", [seg], urn="kafka://x", attributes={"weight": 0.5})
