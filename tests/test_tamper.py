"""Tampering with a package: edits that re-hash what they changed pass every digest, so
``verify --rederive`` scans the commit again and compares byte for byte; edits that need no
re-hash (the manifest's status, a symlinked file) are caught by the default checks, and
``graph build`` and ``coverage`` run the record-level checks by default."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from diting.ir.canonical import dumps
from diting.ir.verify import verify_package
from tests.conftest import run_cli
from tests.test_verify import _pkg, _read, _write, messages, reseal


def _drop_unresolved_call(pkg: Path) -> str:
    rels = _read(pkg, "relations.jsonl")
    victim = next(r for r in rels if r["kind"] == "CALLS" and r["resolution_status"] == "UNRESOLVED")
    _write(pkg, "relations.jsonl", [r for r in rels if r is not victim])
    items = _read(pkg, "branch_ledger.jsonl")  # no ledger item may name it any more
    for it in items:
        it["effect_refs"] = [e for e in it.get("effect_refs", []) if e["record_id"] != victim["record_id"]]
    _write(pkg, "branch_ledger.jsonl", items)
    return victim["record_id"]


def _drop_artifact(pkg: Path) -> str:
    ents = _read(pkg, "entities.jsonl")
    victim = next(e for e in ents if e["kind"] == "ARTIFACT")
    rid = victim["record_id"]
    rels = [r for r in _read(pkg, "relations.jsonl") if rid not in json.dumps(r)]
    dropped = {r["record_id"] for r in _read(pkg, "relations.jsonl")} - {r["record_id"] for r in rels}
    _write(pkg, "entities.jsonl", [e for e in ents if e is not victim])
    _write(pkg, "relations.jsonl", rels)
    _write(pkg, "diagnostics.jsonl", [d for d in _read(pkg, "diagnostics.jsonl") if rid not in json.dumps(d)])
    items = _read(pkg, "branch_ledger.jsonl")
    for it in items:
        it["effect_refs"] = [e for e in it.get("effect_refs", []) if e["record_id"] not in dropped]
    _write(pkg, "branch_ledger.jsonl", items)
    return rid


def _change_binding_value(pkg: Path) -> str:
    binds = _read(pkg, "config_bindings.jsonl")
    victim = next(b for b in binds if isinstance(b.get("value"), str))
    victim["value"] = victim["value"] + "-forged"
    _write(pkg, "config_bindings.jsonl", binds)
    return victim["record_id"]


def _raise_coverage(pkg: Path) -> str:
    cov = json.loads((pkg / "coverage.json").read_text())
    dim = cov["dimensions"]["files"]
    dim["resolved"] += 5
    dim["discovered"] += 5
    (pkg / "coverage.json").write_bytes((dumps(cov) + "\n").encode("utf-8"))
    return "dimensions.files"


@pytest.mark.parametrize("tamper, service", [
    (_drop_unresolved_call, "promotion-center"), (_drop_artifact, "payment-center"),
    (_change_binding_value, "order-center"), (_raise_coverage, "stock-center"),
], ids=lambda v: v.__name__.strip("_") if callable(v) else v)
def test_rederive_catches_a_resealed_edit(estate, estate_scan, tmp_path, tamper, service):
    """Each edit re-hashes what it changed: deep verification against the repository still
    passes, and --rederive names the record (or key) that differs."""
    repo, _ = estate
    pkg = _pkg(estate_scan, tmp_path, service)
    what = tamper(pkg)
    reseal(pkg)
    assert verify_package(pkg, deep=True, repo=repo) == [], "the edit passes every digest (the premise)"
    r = run_cli("verify", "--rederive", "--repo-id", "fixtures/estate", "--repo", str(repo), str(pkg))
    assert r.returncode == 1, r.stdout + r.stderr
    assert what in r.stdout, r.stdout
    assert "Traceback" not in r.stderr


def test_rederive_passes_an_untouched_package_and_groups_one_scan(estate, estate_scan, tmp_path):
    repo, _ = estate
    pkgs = [_pkg(estate_scan, tmp_path, s) for s in ("order-center", "lib:trade-parent", "payment-center")]
    r = run_cli("verify", "--rederive", "--repo-id", "fixtures/estate", "--repo", str(repo), *map(str, pkgs))
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count("re-derived: byte-identical") == 3


def test_the_manifest_status_is_bound_without_a_rehash(estate_scan, tmp_path):
    """The status is repeated in coverage.json (listed with its sha256): flipping it in the
    manifest alone is found by the default checks, either way."""
    for service, forged in (("order-center", "FAILED"), ("fulfillment-center", "COMPLETE")):
        pkg = _pkg(estate_scan, tmp_path / service, service)
        m = json.loads((pkg / "manifest.json").read_text())
        assert m["status"] != forged
        m["status"] = forged
        (pkg / "manifest.json").write_bytes((dumps(m) + "\n").encode("utf-8"))
        out = messages(verify_package(pkg))
        assert f"status '{forged}' differs from coverage.json's package_status" in out


@pytest.mark.parametrize("field, value", [("repo_id", "elsewhere/repo"), ("analyzer_version", "9.9.9"),
                                          ("config_snapshot_refs", ["snap-1"]), ("deployment_refs", ["prod"])])
def test_every_manifest_field_is_bound(estate_scan, tmp_path, field, value):
    pkg = _pkg(estate_scan, tmp_path)
    m = json.loads((pkg / "manifest.json").read_text())
    m[field] = value
    (pkg / "manifest.json").write_bytes((dumps(m) + "\n").encode("utf-8"))
    assert f"{field} {value!r} differs from what analysis_input.json records" in messages(verify_package(pkg))


def test_a_package_holds_regular_files_only(estate_scan, tmp_path):
    """entities.jsonl replaced by a symlink to an exact copy outside the package: every digest
    matches, and it is refused — by verify, graph build and coverage."""
    pkg = _pkg(estate_scan, tmp_path / "pkgs")
    outside = tmp_path / "elsewhere.jsonl"
    shutil.copyfile(pkg / "entities.jsonl", outside)
    (pkg / "entities.jsonl").unlink()
    os.symlink(outside, pkg / "entities.jsonl")
    assert "entities.jsonl: a package holds regular files only; this is a symbolic link" in messages(
        verify_package(pkg))
    r = run_cli("graph", "build", "--db", str(tmp_path / "g.duckdb"), str(tmp_path / "pkgs"))
    assert r.returncode == 2 and "regular files only" in r.stderr
    r = run_cli("coverage", str(pkg))
    assert r.returncode == 2 and "regular files only" in r.stderr
    os.unlink(pkg / "entities.jsonl")
    os.mkfifo(pkg / "entities.jsonl")  # a pipe is never opened for reading (it would block)
    assert "a special file" in messages(verify_package(pkg))


def test_graph_build_and_coverage_check_records_by_default(estate_scan, tmp_path):
    """A resealed package whose record no longer validates loads with --fast only."""
    pkg = _pkg(estate_scan, tmp_path / "pkgs")
    rels = _read(pkg, "relations.jsonl")
    calls = next(r for r in rels if r["kind"] == "CALLS")
    calls["attributes"]["dispatch_kind"] = "TELEPORT"
    _write(pkg, "relations.jsonl", rels)
    reseal(pkg)
    assert verify_package(pkg) == []
    db = tmp_path / "g.duckdb"
    r = run_cli("graph", "build", "--db", str(db), str(pkg))
    assert r.returncode == 2 and "TELEPORT" in r.stderr and not db.exists()
    r = run_cli("coverage", str(pkg))
    assert r.returncode == 2 and "TELEPORT" in r.stderr
    assert run_cli("coverage", "--fast", str(pkg)).returncode == 0
    assert run_cli("graph", "build", "--fast", "--db", str(db), str(pkg)).returncode == 0


def test_rederive_needs_the_inputs_it_cannot_read_from_the_package(estate, estate_scan, tmp_path):
    repo, _ = estate
    pkg = _pkg(estate_scan, tmp_path)
    assert run_cli("verify", "--rederive", str(pkg)).returncode == 2
    rules = tmp_path / "rules"
    rules.mkdir()
    shutil.copyfile(Path(__file__).resolve().parents[1] / "rules" / "dubbo.yaml", rules / "extra.yaml")
    text = (rules / "extra.yaml").read_text().replace("id: dubbo.", "id: extra.")
    (rules / "extra.yaml").write_text(text)
    r = run_cli("verify", "--rederive", "--repo-id", "fixtures/estate", "--repo", str(repo), "--rules", str(rules), str(pkg))
    assert r.returncode == 2 and "scanned with other rules" in r.stderr, r.stderr
    ai = json.loads((pkg / "analysis_input.json").read_text())
    ai["tool_versions"]["tree-sitter-java"] = "0.0.1"
    (pkg / "analysis_input.json").write_bytes((dumps(ai) + "\n").encode("utf-8"))
    r = run_cli("verify", "--rederive", "--repo-id", "fixtures/estate", "--repo", str(repo), str(pkg))
    assert r.returncode == 1  # the digest no longer matches: the default checks already refuse it


def _reinput(pkg: Path, edit) -> None:
    """Edit analysis_input.json and re-derive everything that follows from it, as a forger (or
    another build of diting) would: input_digest, scan_id in every file, every digest."""
    from diting.ir import ids
    from diting.ir.canonical import sha256_hex
    ai = json.loads((pkg / "analysis_input.json").read_text())
    edit(ai)
    data = (dumps(ai) + "\n").encode("utf-8")
    (pkg / "analysis_input.json").write_bytes(data)
    m = json.loads((pkg / "manifest.json").read_text())
    old, m["input_digest"] = m["scan_id"], sha256_hex(data)
    m["scan_id"] = ids.scan_id_for(m["service_id"], m["input_digest"])
    (pkg / "manifest.json").write_bytes((dumps(m) + "\n").encode("utf-8"))
    for f in pkg.iterdir():
        if f.name not in ("manifest.json", "analysis_input.json"):
            f.write_bytes(f.read_bytes().replace(old.encode(), m["scan_id"].encode()))
    reseal(pkg)


def test_rederive_tells_another_build_from_an_edit(estate, estate_scan, tmp_path):
    """Other tool versions recorded: another build made the package — exit 2, nothing vouched for.
    The same versions with other budgets, or no scan options, or a config value changed beside
    them: an edit, found (exit 1) with the records compared all the same; an analysis input that
    differs in what the repository decides: named first, and the records are compared with the
    package's own scan id (no cascade of scan_id differences)."""
    repo, _ = estate
    other = _pkg(estate_scan, tmp_path / "other")
    _reinput(other, lambda ai: ai["tool_versions"].update({"sqlglot": "0.0.1"}))
    r = run_cli("verify", "--rederive", "--repo-id", "fixtures/estate", "--repo", str(repo), str(other))
    assert r.returncode == 2 and "other tool versions" in r.stderr and "sqlglot 0.0.1" in r.stderr, r.stderr
    build_pkg = _pkg(estate_scan, tmp_path / "build")
    _change_binding_value(build_pkg)
    _reinput(build_pkg, lambda ai: ai["budgets"].update({"max_expr_depth": 65}))
    assert verify_package(build_pkg, deep=True) == []
    r = run_cli("verify", "--rederive", "--repo-id", "fixtures/estate", "--repo", str(repo), str(build_pkg))
    assert r.returncode == 1 and "budgets.max_expr_depth is 65 here, 64 when re-derived" in r.stdout, r.stdout
    assert "binding of" in r.stdout and "-forged" in r.stdout
    gone = _pkg(estate_scan, tmp_path / "gone")
    _reinput(gone, lambda ai: ai.pop("scan_options"))
    r = run_cli("verify", "--rederive", "--repo-id", "fixtures/estate", "--repo", str(repo), str(gone))
    assert r.returncode == 1 and "records no scan_options" in r.stdout, r.stdout
    edit_pkg = _pkg(estate_scan, tmp_path / "edit")
    _reinput(edit_pkg, lambda ai: ai["config_files"].pop())
    assert verify_package(edit_pkg, deep=True) == []
    r = run_cli("verify", "--rederive", "--repo-id", "fixtures/estate", "--repo", str(repo), str(edit_pkg))
    assert r.returncode == 1
    findings = [ln for ln in r.stdout.splitlines() if ln.startswith("  ")]
    assert findings[0].startswith("  analysis_input.json: differs from the re-derived file: config_files[")
    assert "scan_id" not in r.stdout, r.stdout


def test_rederive_names_a_retargeted_call_and_keeps_what_it_made(estate, estate_scan, tmp_path):
    """A call pointed at another method with its stable_id and record_id rewritten to match (so
    --deep passes): --rederive pairs it with the record it replaced and shows both targets;
    --rederive-out keeps the package made again."""
    from diting.ir import ids
    repo, _ = estate
    pkg = _pkg(estate_scan, tmp_path)
    rels = _read(pkg, "relations.jsonl")
    ents = {e["record_id"]: e for e in _read(pkg, "entities.jsonl")}
    victim = next(r for r in rels if r["kind"] == "CALLS" and r["resolution_status"] == "RESOLVED"
                  and ents[r["target_ref"]["record_id"]]["kind"] == "METHOD")
    other = next(rid for rid, e in sorted(ents.items()) if e["kind"] == "METHOD"
                 and rid != victim["target_ref"]["record_id"])
    old_target, old_rid = victim["target_ref"]["record_id"], victim["record_id"]
    victim["target_ref"]["record_id"] = other
    head, _, ordinal = victim["stable_id"].rpartition("|")
    victim["stable_id"] = f"CALLS|{ents[victim['source_ref']['record_id']]['stable_id']}|{ents[other]['stable_id']}|" \
                          f"{ordinal}"
    victim["record_id"] = ids.record_id_for(ids.RELATION_PREFIX, victim["stable_id"])
    _write(pkg, "relations.jsonl", rels)
    items = _read(pkg, "branch_ledger.jsonl")
    for it in items:
        for e in it.get("effect_refs", []):
            if e["record_id"] == old_rid:
                e["record_id"] = victim["record_id"]
    _write(pkg, "branch_ledger.jsonl", items)
    reseal(pkg)
    assert verify_package(pkg, deep=True, repo=repo) == []
    keep = tmp_path / "again"
    r = run_cli("verify", "--rederive", "--repo-id", "fixtures/estate", "--repo", str(repo), "--rederive-out", str(keep), str(pkg))
    assert r.returncode == 1
    line = next(ln for ln in r.stdout.splitlines() if "replaces the re-derived" in ln)
    assert "target_ref.record_id is" in line and old_target[-20:-1] in line.replace("…", ""), line
    assert (keep / pkg.name / "manifest.json").is_file()


def test_a_relation_names_its_ends_in_its_stable_id(estate_scan, tmp_path):
    """Retargeting a call without rewriting its identity is found by --deep."""
    pkg = _pkg(estate_scan, tmp_path)
    rels = _read(pkg, "relations.jsonl")
    ents = {e["record_id"]: e for e in _read(pkg, "entities.jsonl")}
    victim = next(r for r in rels if r["kind"] == "CALLS" and r["resolution_status"] == "RESOLVED"
                  and ents[r["target_ref"]["record_id"]]["kind"] == "METHOD")
    victim["target_ref"]["record_id"] = next(rid for rid, e in sorted(ents.items()) if e["kind"] == "METHOD"
                                             and rid != victim["target_ref"]["record_id"])
    _write(pkg, "relations.jsonl", rels)
    reseal(pkg)
    assert "stable_id does not name the target's stable_id" in messages(verify_package(pkg, deep=True))


def test_verify_takes_directories_of_packages_and_each_level_includes_the_one_before(estate, estate_scan, tmp_path):
    repo, _ = estate
    pkg = _pkg(estate_scan, tmp_path / "pkgs")
    _pkg(estate_scan, tmp_path / "pkgs", "stock-center")
    r = run_cli("verify", str(tmp_path / "pkgs"))
    assert r.returncode == 0 and r.stdout.count("valid") == 2, r.stdout
    rels = _read(pkg, "relations.jsonl")
    calls = next(r for r in rels if r["kind"] == "CALLS")
    calls["attributes"]["dispatch_kind"] = "TELEPORT"
    _write(pkg, "relations.jsonl", rels)
    reseal(pkg)
    r = run_cli("verify", "--repo", str(repo), str(pkg))  # --repo runs the record checks too
    assert r.returncode == 1 and "TELEPORT" in r.stdout, r.stdout
    r = run_cli("coverage", "--fast", "--db", str(tmp_path / "g.duckdb"))
    assert r.returncode == 2 and "--fast" in r.stderr


def test_rederive_finds_a_renamed_package_and_refuses_a_foreign_repository(estate, estate_scan, tmp_path):
    repo, _ = estate
    pkg = _pkg(estate_scan, tmp_path)
    renamed = pkg.rename(tmp_path / "my-copy")
    r = run_cli("verify", "--rederive", "--repo-id", "fixtures/estate", "--repo", str(repo), str(renamed))
    assert r.returncode == 0 and "byte-identical" in r.stdout, r.stdout + r.stderr
    other = tmp_path / "other-repo"
    other.mkdir()
    import subprocess
    subprocess.run(["git", "init", "-q", str(other)], check=True)
    subprocess.run(["git", "-C", str(other), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q",
                    "--allow-empty", "-m", "x"], check=True)
    for args in (("--repo", str(other)), ("--rederive", "--repo", str(other))):
        r = run_cli("verify", *args, str(renamed))
        assert r.returncode == 2 and "is not in" in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_no_command_writes_into_a_package(estate, estate_scan, tmp_path):
    """A package holds its own files only: every command that writes (a database, a report, an
    export, packages, schemas) refuses a target inside a package, through a symbolic link too, and
    the package still verifies."""
    repo, sha = estate
    pkg = _pkg(estate_scan, tmp_path)
    link = tmp_path / "link.duckdb"
    link.symlink_to(pkg / "g.duckdb")  # dangling: it would create the file inside the package
    db = tmp_path / "ok.duckdb"
    assert run_cli("graph", "build", "--fast", "--db", str(db), str(pkg)).returncode == 0
    for args in (("graph", "build", "--db", str(pkg / "g.duckdb"), str(pkg)),
                 ("graph", "build", "--db", str(link), str(pkg)),
                 ("coverage", str(pkg), "--out", str(pkg / "coverage.json")),
                 ("export", "--db", str(db), "--format", "dot", "--out", str(pkg / "entities.jsonl")),
                 ("export", "--db", str(db), "--format", "parquet", "--out", str(pkg)),
                 ("scan", str(repo), "--commit", sha, "--out", str(pkg), "--quiet"),
                 ("schema", "--out", str(pkg / "schemas")),
                 ("verify", "--rederive", "--repo-id", "fixtures/estate", "--repo", str(repo), "--rederive-out",
                  str(pkg), str(pkg))):
        r = run_cli(*args)
        assert r.returncode == 2 and "inside the package" in r.stderr, (args, r.stderr)
    assert verify_package(pkg, deep=True) == []
    listed = [f["path"] for f in json.loads((pkg / "manifest.json").read_text())["files"]]
    assert sorted(p.name for p in pkg.iterdir()) == sorted([*listed, "manifest.json"])


_WRONG = [True, 5, "x", {}, [5], [{}], {"scan_id": {}, "record_id": {}}, None]


def _mutations(rec: dict, depth: int = 2):
    """(path, value) pairs: every field of ``rec`` (and of its objects and first list items, to
    ``depth`` levels) set to each wrongly typed value."""
    todo = [((), rec, depth)]
    while todo:
        path, obj, d = todo.pop()
        keys = list(obj) if isinstance(obj, dict) else [0] if isinstance(obj, list) and obj else []
        for k in keys:
            for wrong in _WRONG:
                yield (*path, k), wrong
            if d > 1 and isinstance(obj[k], (dict, list)):
                todo.append(((*path, k), obj[k], d - 1))


def test_no_wrongly_typed_field_crashes_a_reader(tmp_path):
    """Every field of a record of every file, at two levels, set to a wrongly typed value and the
    package re-hashed: verify --deep reports it (file and line) and graph build and coverage refuse
    it with one message, never an internal error."""
    from diting.errors import UserError
    from diting.graph.store import build
    samples = Path(__file__).resolve().parents[1] / "ir_samples" / "estate"
    src = next(p for p in samples.iterdir() if p.name.startswith("stock-center@"))
    n = 0
    for name in ("entities.jsonl", "relations.jsonl", "source_segments.jsonl", "config_bindings.jsonl",
                 "diagnostics.jsonl", "branch_ledger.jsonl"):
        first = json.loads((src / name).read_text().splitlines()[0])
        for path, wrong in _mutations(first):
            pkg = tmp_path / f"m{n}" / src.name
            shutil.copytree(src, pkg)
            lines = (pkg / name).read_text().splitlines()
            rec = json.loads(lines[0])
            target = rec
            for k in path[:-1]:
                target = target[k]
            target[path[-1]] = wrong
            lines[0] = json.dumps(rec, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
            (pkg / name).write_text("\n".join(lines) + "\n")
            reseal(pkg)
            verify_package(pkg, deep=True)  # findings or none, never an exception
            if n % 7 == 0:  # the readers that check records by default, on a sample of the edits
                try:
                    build(tmp_path / f"g{n}.duckdb", [pkg])
                except UserError:
                    pass
            shutil.rmtree(tmp_path / f"m{n}")
            n += 1
    assert n > 300


def test_rederive_checks_the_repository_a_package_names(estate, estate_scan, tmp_path):
    """A package relabelled to another repository (repo_id rewritten everywhere, re-hashed) is
    self-consistent and re-derives byte for byte under its own claim — so the claim is an input:
    without --repo-id it must be the repository's default id, with it the two must agree."""
    repo, _ = estate
    pkg = _pkg(estate_scan, tmp_path)
    for name in ("analysis_input.json", "manifest.json", "source_segments.jsonl"):
        f = pkg / name
        f.write_text(f.read_text().replace('"repo_id":"fixtures/estate"', '"repo_id":"github.com/evil/x"'))
    _reinput(pkg, lambda ai: None)  # input_digest, scan_id and digests follow the edit
    assert verify_package(pkg, deep=True) == []
    r = run_cli("verify", "--rederive", "--repo", str(repo), str(pkg))
    assert r.returncode == 2 and "names repository 'github.com/evil/x'" in r.stderr, r.stderr
    r = run_cli("verify", "--rederive", "--repo-id", "fixtures/estate", "--repo", str(repo), str(pkg))
    assert r.returncode == 1 and "not 'fixtures/estate' (--repo-id)" in r.stdout, r.stdout
