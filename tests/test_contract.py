"""The shipped contract: JSON Schemas match the models, ir_samples are current, rules load."""

from __future__ import annotations

import json
import sys

import jsonschema

from diting.ir.schema_export import SHIPPED_DIR, render, schemas
from diting.ir.writer import manifest_schema
from diting.rules import load_rules
from tests.conftest import ROOT, run_cli


def test_shipped_schemas_match_the_models():
    generated = schemas()
    shipped = {p.name: p.read_text(encoding="utf-8") for p in SHIPPED_DIR.glob("*.json")}
    assert sorted(shipped) == sorted(generated), "run: diting schema --out src/diting/ir/schemas"
    for name, schema in generated.items():
        assert shipped[name] == render(schema), f"{name} drifted from the models; run diting schema"


def test_schema_command_exports_every_schema(tmp_path):
    r = run_cli("schema", "--out", str(tmp_path))
    assert r.returncode == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(schemas())


def test_manifest_schema_is_the_frozen_0_1():
    s = manifest_schema()
    assert s["$id"] == "urn:jd-kb:ir-manifest:0.1" and s["additionalProperties"] is False
    assert sorted(s["required"]) == sorted(["schema_version", "scan_id", "service_id", "repo_id", "commit_sha",
                                            "analyzer_version", "input_digest", "status", "files", "coverage_ref"])


def test_samples_validate_against_the_exported_schemas():
    validators = {}
    for name in ("entity.schema.json", "relation.schema.json"):  # each schema checked once, then reused
        schema = schemas()[name]
        cls = jsonschema.validators.validator_for(schema)
        cls.check_schema(schema)
        validators[name] = cls(schema)
    samples = sorted((ROOT / "ir_samples").glob("*/*/entities.jsonl"))
    assert samples
    for ents in samples:
        for line in ents.read_text(encoding="utf-8").splitlines():
            validators["entity.schema.json"].validate(json.loads(line))
        for line in (ents.parent / "relations.jsonl").read_text(encoding="utf-8").splitlines():
            validators["relation.schema.json"].validate(json.loads(line))


def test_ir_samples_are_current():
    sys.path.insert(0, str(ROOT / "fixtures"))
    try:
        import refresh_ir_samples
    finally:
        sys.path.pop(0)
    assert refresh_ir_samples.main(["--check"]) == 0, "run: python fixtures/refresh_ir_samples.py"


def test_rules_load_and_have_required_fields():
    rs = load_rules()
    assert rs.well_known_parent("org.springframework.boot")
    assert rs.well_known_parent("org.apache.dubbo")
    assert not rs.well_known_parent("com.jd.trade")
    assert "org.springframework.boot.autoconfigure.SpringBootApplication" in rs.application_annotations()
    ids = [e["id"] for e in rs.digest_entries()]
    assert ids == sorted(ids) and len(ids) == len(set(ids))


def test_each_vocabulary_is_declared_once():
    """Entity kinds come from the entity models (each kind's prefix in ids); the engine's entry kinds
    from the models, every other entry kind from a protocol of the rule files."""
    from diting.ir import ids
    from diting.ir.models import ENGINE_ENTRY_KINDS, ENTITY_KINDS
    assert len(set(ENTITY_KINDS)) == len(ENTITY_KINDS) == 16
    assert set(ids.ENTITY_PREFIX) == set(ENTITY_KINDS)
    shipped = {k for p in load_rules().protocols.values() for k in p.entry_kinds}
    assert not shipped & set(ENGINE_ENTRY_KINDS)
    assert {"JSF_PROVIDER", "HTTP_ENDPOINT", "MQ_CONSUMER", "GATEWAY_ROUTE", "DUBBO_PROVIDER"} <= shipped
