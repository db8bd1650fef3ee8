"""scan/: the estate end to end — services and why, packages, coverage, determinism, atomic writes."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

import pytest

from diting.ir.verify import verify_package
from diting.ir.writer import write_atomically
from tests.conftest import run_cli


def _by_id(result):
    return {p.service_id: p for p in result.packages}


def _lines(pkg: Path, name: str) -> list[dict]:
    return [json.loads(x) for x in (pkg / name).read_text(encoding="utf-8").splitlines()]


def test_services_found_and_why(estate_scan):
    result, _ = estate_scan
    pk = _by_id(result)
    assert sorted(pk) == ["fulfillment-center", "fulfillment-worker", "lib:trade-parent", "order-center",
                          "payment-center", "promotion-center", "stock-center"]
    # two deployables built from one core module, each with its own package of it
    for app in ("fulfillment-center", "fulfillment-worker"):
        assert "fulfillment/fulfillment-core/pom.xml" in pk[app].modules
    assert sorted(set(pk["order-center"].basis)) == ["BOOT_PLUGIN", "SPRING_BOOT_APPLICATION"]
    assert pk["promotion-center"].basis == ["WAR_PACKAGING"]
    assert pk["order-center"].path.name.endswith("+dev")  # spring.profiles.active: @profile.active@ → dev
    assert set(pk["order-center"].modules) == {"order/order-service/pom.xml", "order/order-export/pom.xml",
                                               "order/order-dao/pom.xml", "trade-common/pom.xml",
                                               "stock/stock-export/pom.xml", "payment/payment-export/pom.xml"}
    # the released order-export 1.3.0 is not this repository's source
    assert set(pk["promotion-center"].modules) == {"promotion/promotion-service/pom.xml", "trade-common/pom.xml"}
    assert pk["lib:trade-parent"].kind == "LIB"
    svc = next(e for e in _lines(pk["order-center"].path, "entities.jsonl") if e["kind"] == "SERVICE")
    assert svc["attributes"]["service_id_basis"]["source"] == "spring.application.name"
    assert svc["attributes"]["service_id_basis"]["path"] == "order/order-service/src/main/resources/application.yml"


def test_statuses_and_diagnostics(estate_scan):
    result, _ = estate_scan
    pk = _by_id(result)
    assert pk["order-center"].status == "COMPLETE"
    assert pk["promotion-center"].status == "PARTIAL"  # BrokenRule.java has a syntax error
    codes = {d["code"] for d in _lines(pk["promotion-center"].path, "diagnostics.jsonl")}
    # UNRESOLVED_CALL: a call on what the released order-export 1.3.0 returns (its types are not in the repository)
    # ENCODING_GUESSED: trade-common's GbkNotes.java, read as GB18030 where the module declares UTF-8
    assert codes == {"PARSE_ERROR", "SOURCE_UNMAPPED", "POM_PARENT_EXTERNAL", "UNRESOLVED_CALL", "ENCODING_GUESSED"}
    lib_entries = [e for e in _lines(pk["lib:trade-parent"].path, "entities.jsonl") if e["kind"] == "ENTRY"]
    assert [(e["entry_kind"], e["urn"]) for e in lib_entries] == [("MAIN", "com.jd.trade.tools.CodeGenerator#main")]


def test_every_package_verifies_deeply_against_the_repository(estate, estate_scan):
    repo, _ = estate
    result, _ = estate_scan
    for p in result.packages:
        assert verify_package(p.path, deep=True, repo=repo) == [], p.service_id


def test_gbk_source_and_crlf_config_are_read(estate_scan):
    result, _ = estate_scan
    pk = _by_id(result)
    segs = _lines(pk["order-center"].path, "source_segments.jsonl")
    gbk = [s for s in segs if s["locator"]["path"].endswith("GbkNotes.java")]
    assert gbk and all(s["encoding"] == "gb18030" for s in gbk)
    assert any("无备注" in s["content"] for s in gbk)
    crlf = [s for s in _lines(pk["promotion-center"].path, "source_segments.jsonl")
            if s["locator"]["path"].endswith("bootstrap.properties")]
    assert crlf and crlf[0]["content"] == "spring.application.name=promotion-center\r"


def test_coverage_counts_add_up_and_name_exclusions(estate_scan):
    result, _ = estate_scan
    pk = _by_id(result)
    cov = json.loads((pk["order-center"].path / "coverage.json").read_text())
    files = cov["dimensions"]["files"]
    assert files["discovered"] == files["resolved"] + files["partial"] + files["failed"] + files["excluded"]
    assert files["excluded_by_reason"]["test_source"] == 1
    assert files["excluded_by_reason"]["build_output"] == 1
    assert cov["dimensions"]["call_sites"]["not_examined"]
    assert cov["analysis_level"] == {}
    promo = json.loads((pk["promotion-center"].path / "coverage.json").read_text())["dimensions"]["files"]
    assert promo["partial"] == 1


def _digest(out: Path) -> dict[str, str]:
    return {str(p.relative_to(out)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(out.rglob("*")) if p.is_file()}


def test_determinism_across_jobs_seeds_dirs_and_clones(estate, tmp_path):
    repo, sha = estate
    runs = []
    for i, (jobs, seed) in enumerate([("1", "1"), ("2", "4242")]):
        out = tmp_path / f"out{i}"
        cwd = tmp_path / f"cwd{i}"
        tmp = tmp_path / f"tmp{i}"
        cwd.mkdir()
        tmp.mkdir()
        r = run_cli("scan", str(repo), "--commit", sha, "--out", str(out), "--jobs", jobs, "--quiet",
                    "--repo-id", "fixtures/estate", cwd=cwd, env={"PYTHONHASHSEED": seed, "TMPDIR": str(tmp)})
        assert r.returncode == 0, r.stderr
        runs.append(_digest(out))
    # a bare clone, and a working clone with uncommitted edits
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(repo), str(bare)], check=True)
    work = tmp_path / "work"
    subprocess.run(["git", "clone", "-q", str(repo), str(work)], check=True)
    (work / "pom.xml").write_text("<project>edited but not committed</project>")
    (work / "trade-common" / "New.java").write_text("class New {}")
    for src, name in ((bare, "bare"), (work, "work")):
        out = tmp_path / f"out-{name}"
        r = run_cli("scan", str(src), "--commit", sha, "--out", str(out), "--quiet", "--repo-id", "fixtures/estate")
        assert r.returncode == 0, r.stderr
        runs.append(_digest(out))
    assert all(run == runs[0] for run in runs[1:])
    assert len(runs[0]) == 7 * 9  # seven packages of nine files


def test_rescan_is_unchanged_and_writes_are_atomic(estate, tmp_path, monkeypatch):
    repo, sha = estate
    out = tmp_path / "out"
    first = run_cli("scan", str(repo), "--commit", sha, "--out", str(out), "--quiet", "--json")
    again = run_cli("scan", str(repo), "--commit", sha, "--out", str(out), "--quiet", "--json")
    assert {p["written"] for p in json.loads(first.stdout)["packages"]} == {"written"}
    assert {p["written"] for p in json.loads(again.stdout)["packages"]} == {"unchanged"}
    # a write that fails half-way leaves neither a package nor a temporary directory
    calls = {"n": 0}
    real_open = open

    def failing_open(path, mode="r", *a, **kw):
        if "w" in mode and ".tmp-" in str(path):
            calls["n"] += 1
            if calls["n"] == 3:
                raise OSError(28, "No space left on device")
        return real_open(path, mode, *a, **kw)

    monkeypatch.setattr("builtins.open", failing_open)
    target = tmp_path / "atomic"
    with pytest.raises(OSError):
        write_atomically(target, "pkg@1", {"a.json": b"1", "b.json": b"2", "c.json": b"3", "manifest.json": b"{}"})
    assert list(target.iterdir()) == []
    monkeypatch.setattr("builtins.open", real_open)
    # replacing an existing package swaps it whole
    path, status = write_atomically(target, "pkg@1", {"manifest.json": b"{}", "a.json": b"1"})
    path, status = write_atomically(target, "pkg@1", {"manifest.json": b"{\"v\":2}", "a.json": b"2"})
    assert status == "replaced" and sorted(p.name for p in target.iterdir()) == ["pkg@1"]
    assert (path / "a.json").read_bytes() == b"2"


def test_service_filter_and_unknown_service(estate, tmp_path):
    repo, sha = estate
    r = run_cli("scan", str(repo), "--commit", sha, "--out", str(tmp_path / "o"), "--service", "order-center",
                "--quiet", "--json")
    assert r.returncode == 0 and [p["service_id"] for p in json.loads(r.stdout)["packages"]] == ["order-center"]
    r = run_cli("scan", str(repo), "--commit", sha, "--out", str(tmp_path / "o"), "--service", "nope", "--quiet")
    assert r.returncode == 2 and "no service named nope" in r.stderr and "order-center" in r.stderr
    assert "Traceback" not in r.stderr


def test_profile_option_and_inventory_file(estate, tmp_path):
    repo, sha = estate
    inv = tmp_path / "inventory.yaml"
    inv.write_text("services:\n"
                   "  - {service_id: code-gen, module_path: tools/code-generator, owner: tools-team}\n"
                   "  - {service_id: promotion-center, module_path: promotion/promotion-service, "
                   "exclusion_reason: decommissioned}\n"
                   "  - {service_id: ghost, module_path: ghost/service}\n")
    r = run_cli("scan", str(repo), "--commit", sha, "--out", str(tmp_path / "o"), "--profile", "prod",
                "--inventory", str(inv), "--quiet", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    ids = {p["service_id"]: p for p in doc["packages"]}
    assert set(ids) == {"code-gen", "order-center", "lib:trade-parent", "payment-center", "stock-center",
                        "fulfillment-center", "fulfillment-worker"}
    assert ids["code-gen"]["deployable_basis"] == ["INVENTORY"]
    assert ids["order-center"]["path"].endswith("+prod")
    assert doc["excluded_services"] == [{"service_id": "promotion-center",
                                         "module": "promotion/promotion-service/pom.xml"}]
    assert doc["inventory_unmapped"] == ["ghost"]
    ai = json.loads((Path(ids["order-center"]["path"]) / "analysis_input.json").read_text())
    assert ai["spring_profiles"] == ["prod"] and "missing" not in ai["inventory"]


def _one_module_repo(tmp_path):
    from tests.conftest import make_repo, pom
    return make_repo(tmp_path, {"pom.xml": pom("shop", parent=None),
                                "src/main/java/com/ex/A.java": "package com.ex;\nclass A { }\n"})


@pytest.mark.parametrize("second", [
    "{service_id: b, module_path: pom.xml}",
    "{service_id: b, module_path: .}",  # the same module spelt another way
    "{service_id: b, module_path: /, profile: prod}",  # a profile makes no second service of a module
    "{service_id: b, module_path: pom.xml, exclusion_reason: retired}",  # nor does an exclusion, half of it
])
def test_two_inventory_entries_for_one_module_are_a_user_error(tmp_path, second):
    """Two entries naming one module of the scanned repository: the first was silently dropped (only
    ``b`` was scanned, ``a`` was not even unmapped). A module is one service: refused, naming both."""
    repo, sha = _one_module_repo(tmp_path)
    inv = tmp_path / "inventory.yaml"
    inv.write_text(f"services:\n  - {{service_id: a, module_path: pom.xml}}\n  - {second}\n")
    r = run_cli("scan", str(repo), "--commit", sha, "--out", str(tmp_path / "o"), "--inventory", str(inv),
                "--repo-id", "x/shop", "--quiet")
    path = second.split("module_path: ")[1].split(",")[0].rstrip("}")
    assert (r.returncode, r.stderr.strip().splitlines()) == (2, [
        f"error: inventory file {inv}: entries 'a' (module_path 'pom.xml') and 'b' (module_path {path!r}) both "
        "name the module pom.xml of x/shop; a module is one service: keep one entry (scan again with --profile for "
        "another environment)"])
    assert not (tmp_path / "o").exists()


def test_inventory_entries_of_other_repositories_or_without_a_module_name_none_here(tmp_path):
    """One module path in two repositories is two modules; an entry without ``module_path`` names a
    service for coverage's denominator, not the root module (it made the root a service)."""
    repo, sha = _one_module_repo(tmp_path)
    inv = tmp_path / "inventory.yaml"
    inv.write_text("services:\n  - {service_id: a, repo_id: x/shop, module_path: pom.xml}\n"
                   "  - {service_id: b, repo_id: x/other, module_path: pom.xml}\n"
                   "  - {service_id: c}\n  - {service_id: d, module_path: ' '}\n")
    r = run_cli("scan", str(repo), "--commit", sha, "--out", str(tmp_path / "o"), "--inventory", str(inv),
                "--repo-id", "x/shop", "--quiet", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert [(p["service_id"], p["deployable_basis"]) for p in doc["packages"]] == [("a", ["INVENTORY"])]
    assert doc["inventory_unmapped"] == []
    inv.write_text("services:\n  - {service_id: c}\n")
    r = run_cli("scan", str(repo), "--commit", sha, "--out", str(tmp_path / "o2"), "--inventory", str(inv),
                "--repo-id", "x/shop", "--quiet", "--json")
    assert [p["service_id"] for p in json.loads(r.stdout)["packages"]] == ["lib:shop"]


def test_writer_sweeps_leftovers_and_replaces_whatever_is_in_the_way(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    dead = out / ".pkg@1.tmp-999999999-abcd"  # a pid that cannot be running
    dead.mkdir()
    (dead / "analysis_input.json").write_text("{}")
    alive = out / f".pkg@1.tmp-{os.getpid()}-abcd"
    alive.mkdir()
    target = tmp_path / "elsewhere"
    target.mkdir()
    (target / "keep.txt").write_text("keep")
    (out / "pkg@1").symlink_to(target)
    path, status = write_atomically(out, "pkg@1", {"manifest.json": b"{}", "a.json": b"1"})
    assert status == "replaced" and path.is_dir() and not path.is_symlink()
    assert (target / "keep.txt").read_text() == "keep"  # a symlink in the way is removed, never followed
    assert not dead.exists() and alive.exists()
    assert sorted(p.name for p in out.iterdir()) == sorted([alive.name, "pkg@1"])
    assert oct(path.stat().st_mode & 0o777) == oct(0o777 & ~_umask())


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_concurrent_writers_end_with_one_whole_package(tmp_path):
    import threading
    out = tmp_path / "out"
    files_a = {"manifest.json": b'{"a":1}', "x.json": b"a" * 1000}
    files_b = {"manifest.json": b'{"b":1}', "x.json": b"b" * 1000}
    errors = []

    def writer(files):
        try:
            for _ in range(30):
                write_atomically(out, "pkg@1", files)
        except OSError as exc:  # pragma: no cover - a failure is what the test looks for
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(f,)) for f in (files_a, files_b, files_a)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    final = out / "pkg@1"
    assert (final / "manifest.json").read_bytes() in (files_a["manifest.json"], files_b["manifest.json"])
    assert (final / "x.json").read_bytes()[:1] == (final / "manifest.json").read_bytes()[2:3]
    assert [p.name for p in out.iterdir()] == ["pkg@1"]
