"""ir/verify: forged tampering is caught even after checksums and counts are recomputed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from diting.ir.canonical import dumps, sha256_hex
from diting.ir.verify import verify_package
from tests.conftest import run_cli


def _pkg(estate_scan, tmp_path: Path, service: str = "order-center") -> Path:
    result, _ = estate_scan
    src = next(p.path for p in result.packages if p.service_id == service)
    dest = tmp_path / src.name
    shutil.copytree(src, dest)
    return dest


def _read(pkg: Path, name: str) -> list[dict]:
    return [json.loads(x) for x in (pkg / name).read_text(encoding="utf-8").splitlines()]


def _write(pkg: Path, name: str, records: list[dict]) -> None:
    records = sorted(records, key=lambda r: r["record_id"])
    (pkg / name).write_bytes("".join(dumps(r) + "\n" for r in records).encode("utf-8"))


def reseal(pkg: Path) -> None:
    """Recompute every file's sha256 and record count in the manifest (a forger's last step)."""
    m = json.loads((pkg / "manifest.json").read_text())
    for f in m["files"]:
        data = (pkg / f["path"]).read_bytes()
        f["sha256"] = sha256_hex(data)
        f["record_count"] = 1 if f["path"].endswith(".json") else data.count(b"\n")
    (pkg / "manifest.json").write_bytes((dumps(m) + "\n").encode("utf-8"))


def messages(findings) -> str:
    return "\n".join(str(f) for f in findings)


def test_untouched_package_is_valid(estate_scan, tmp_path):
    assert verify_package(_pkg(estate_scan, tmp_path), deep=True) == []


def test_edit_without_resealing_breaks_checksums(estate_scan, tmp_path):
    pkg = _pkg(estate_scan, tmp_path)
    with open(pkg / "entities.jsonl", "ab") as fh:
        fh.write(b"\n")
    out = messages(verify_package(pkg))
    assert "sha256" in out and "records, the manifest says" in out


def test_dangling_reference(estate_scan, tmp_path):
    pkg = _pkg(estate_scan, tmp_path)
    rels = _read(pkg, "relations.jsonl")
    victim = next(r for r in rels if r["kind"] == "CONTAINS")
    victim["target_ref"]["record_id"] = "method:nowhere#gone()"
    _write(pkg, "relations.jsonl", rels)
    reseal(pkg)
    assert verify_package(pkg) == []  # checksums and counts agree again
    out = messages(verify_package(pkg, deep=True))
    assert "method:nowhere#gone()" in out and "not in the package" in out


@pytest.mark.parametrize("forge", ["record:zz on CONTAINS", "another call site", "not a call site",
                                   "empty discovery_source"])
def test_a_callsite_or_discovery_source_no_scan_writes_fails_deep(estate_scan, tmp_path, forge):
    """A callsite_id on a relation kind no call site makes, one naming another call site than the
    relation's own, and an empty coverage ``discovery_source`` passed ``verify --deep`` (only
    ``--rederive`` caught them): the models check them now."""
    pkg = _pkg(estate_scan, tmp_path)
    rels = _read(pkg, "relations.jsonl")
    if forge == "empty discovery_source":
        cov = json.loads((pkg / "coverage.json").read_text())
        cov["entries"][0]["discovery_source"] = ""
        (pkg / "coverage.json").write_bytes((dumps(cov) + "\n").encode("utf-8"))
        expected = "discovery_source"
    elif forge == "record:zz on CONTAINS":
        victim = next(r for r in rels if r["kind"] == "CONTAINS")
        victim["callsite_id"] = "record:zz@0"
        expected = "a CONTAINS relation is made by no call site"
    else:
        victim, other = [r for r in rels if r["kind"] == "CALLS" and r.get("callsite_id")][:2]
        victim["callsite_id"] = other["callsite_id"] if forge == "another call site" else "record:zz"
        expected = "callsite_id names another call site" if forge == "another call site" else "callsite_id"
    _write(pkg, "relations.jsonl", rels)
    reseal(pkg)
    assert verify_package(pkg) == []  # checksums and counts agree again
    out = messages(verify_package(pkg, deep=True))
    assert expected in out, out


def test_resolved_relation_with_candidates(estate_scan, tmp_path):
    pkg = _pkg(estate_scan, tmp_path)
    rels = _read(pkg, "relations.jsonl")
    victim = next(r for r in rels if r["resolution_status"] == "RESOLVED")
    victim["candidate_target_refs"] = [dict(victim["target_ref"]), dict(victim["source_ref"])]
    _write(pkg, "relations.jsonl", rels)
    reseal(pkg)
    out = messages(verify_package(pkg, deep=True))
    assert victim["record_id"] in out and "RESOLVED needs exactly one target_ref and no candidates" in out


def test_record_id_duplicated_across_files(estate_scan, tmp_path):
    pkg = _pkg(estate_scan, tmp_path)
    ent = _read(pkg, "entities.jsonl")[0]
    binding = {"record_id": ent["record_id"], "consumer_ref": {"scan_id": ent["evidence_refs"][0]["scan_id"],
                                                                "record_id": ent["record_id"]},
               "config_key": "config://x", "source_refs": [], "value_resolution": "UNKNOWN", "value": None,
               "default_value": None, "evidence_refs": [], "attributes": {}}
    _write(pkg, "config_bindings.jsonl", [binding])
    reseal(pkg)
    out = messages(verify_package(pkg, deep=True))
    assert f"[{ent['record_id']}]: record_id also used in entities.jsonl:1" in out


def test_edited_segment_with_recomputed_hash_is_caught_against_the_repository(estate, estate_scan, tmp_path):
    repo, _ = estate
    pkg = _pkg(estate_scan, tmp_path)
    segs = _read(pkg, "source_segments.jsonl")
    victim = next(s for s in segs if s["source_type"] == "CODE" and "class" in s["content"])
    victim["content"] = victim["content"].replace("class", "klass")
    victim["content_hash"] = sha256_hex(victim["content"])
    victim["source_content_hash"] = victim["content_hash"]
    _write(pkg, "source_segments.jsonl", segs)
    reseal(pkg)
    out = messages(verify_package(pkg, deep=True, repo=repo))
    assert f"[{victim['record_id']}]: content differs from" in out
    assert "source_content_hash differs" in out


def test_edited_analysis_input_with_digest_updated(estate_scan, tmp_path):
    pkg = _pkg(estate_scan, tmp_path)
    ai = json.loads((pkg / "analysis_input.json").read_text())
    ai["requested_capabilities"] = ["entries"]
    data = (dumps(ai) + "\n").encode("utf-8")
    (pkg / "analysis_input.json").write_bytes(data)
    m = json.loads((pkg / "manifest.json").read_text())
    m["input_digest"] = sha256_hex(data)
    (pkg / "manifest.json").write_bytes((dumps(m) + "\n").encode("utf-8"))
    reseal(pkg)
    out = messages(verify_package(pkg, deep=True))
    assert "scan_id" in out and "does not derive from service_id and input_digest" in out


def test_manifest_schema_is_enforced(estate_scan, tmp_path):
    pkg = _pkg(estate_scan, tmp_path)
    m = json.loads((pkg / "manifest.json").read_text())
    m["extra"] = 1
    (pkg / "manifest.json").write_bytes((dumps(m) + "\n").encode("utf-8"))
    assert "Additional properties are not allowed" in messages(verify_package(pkg))


def test_cli_exit_codes(estate_scan, tmp_path):
    pkg = _pkg(estate_scan, tmp_path)
    assert run_cli("verify", "--deep", str(pkg)).returncode == 0
    (pkg / "diagnostics.jsonl").write_text("not json\n")
    r = run_cli("verify", "--deep", str(pkg))
    assert r.returncode == 1 and "diagnostics.jsonl" in r.stdout and "Traceback" not in r.stderr
    r = run_cli("verify", str(tmp_path / "missing"))
    assert r.returncode == 2 and "package not found" in r.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    r = run_cli("verify", str(empty))
    assert r.returncode == 2 and "no IR package here" in r.stderr


@pytest.mark.parametrize("tamper, expected", [
    ("dispatch", "dispatch_kind 'TELEPORT'"),
    ("callsite", "callsite_id"),  # the model refuses its shape (or verify, its derivation)
    ("branch", "record_id does not derive from branch_id"),
    ("exit", "names its exit"),
    ("effect", "is not a CALLS, PUBLISHES, READS or WRITES relation"),
    ("parent", "parent_branch_id is not a ledger item"),
])
def test_call_graph_and_ledger_fields_are_checked(estate_scan, tmp_path, tamper, expected):
    """A forged CALLS dispatch kind or callsite_id, a ledger item whose id no longer derives from its
    branch_id, a RETURN without its exit, an effect that is no effect, a missing parent."""
    pkg = _pkg(estate_scan, tmp_path)
    rels = _read(pkg, "relations.jsonl")
    items = _read(pkg, "branch_ledger.jsonl")
    if tamper in ("dispatch", "callsite"):
        victim = next(r for r in rels if r["kind"] == "CALLS")
        if tamper == "dispatch":
            victim["attributes"]["dispatch_kind"] = "TELEPORT"
        else:
            victim["callsite_id"] = "garbage"
        _write(pkg, "relations.jsonl", rels)
    else:
        if tamper == "branch":
            victim = next(i for i in items if i["branch_kind"] == "IF")
            victim["branch_id"] += "x"
        elif tamper == "exit":
            victim = next(i for i in items if i["branch_kind"] == "RETURN")
            victim["exit_ref"] = None
        elif tamper == "effect":
            victim = next(i for i in items if i["effect_refs"])
            method = next(r for r in rels if r["kind"] == "CONTAINS")
            victim["effect_refs"] = [dict(victim["effect_refs"][0], record_id=method["record_id"])]
        else:
            victim = next(i for i in items if i["parent_branch_id"])
            victim["parent_branch_id"] += "/nowhere"
        _write(pkg, "branch_ledger.jsonl", items)
    reseal(pkg)
    assert expected in messages(verify_package(pkg, deep=True))
