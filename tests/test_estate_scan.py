"""``diting estate scan`` and ``diting estate graph`` (docs/estates.md): many repositories scanned into one
folder, what did not change reused, one failure reported while the others go on, the same packages
as a scan of each repository alone, on local processes and on a Dask LocalCluster, and a graph that
loads only what changed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from diting.cache import chosen_cache, default_cache_dir
from diting.errors import UserError
from diting.estate.graph import update_graph
from diting.estate.run import STATE_FILE, locked, scan_estate
from diting.estate.spec import load_estate
from tests.conftest import estate_on_lib, make_repo, run_cli, scan_repo
from tests.estate_changes import commit

FEIGN = ('<dependencies><dependency><groupId>org.springframework.cloud</groupId>'
         '<artifactId>spring-cloud-starter-openfeign</artifactId></dependency></dependencies>')


def _shop(parent: str, services: dict[str, str]) -> dict[str, str]:
    """A reactor ``parent`` of a library and one Spring Boot service per name, each with a controller
    whose path is its value."""
    files = estate_on_lib("shop-lib", {"src/main/java/com/example/lib/Money.java":
                                       "package com.example.lib;\npublic class Money { public long cents; }\n"}, {
        name: {f"src/main/java/com/example/{name.replace('-', '')}/Api.java":
               "package com.example.PKG;\nimport org.springframework.web.bind.annotation.*;\n"
               f"@RestController\npublic class Api {{\n  @GetMapping(\"{path}\")\n"
               "  public String get() { return \"ok\"; }\n}\n"} for name, path in services.items()})
    return {k: v.replace("shop-parent", parent) for k, v in files.items()}


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def two_repos(tmp_path):
    """Two repositories and an estate file naming them and a third that does not exist."""
    a, _ = make_repo(tmp_path, _shop("shop-a", {"order-svc": "/orders", "pay-svc": "/pay"}), name="shop-a")
    b, _ = make_repo(tmp_path, _shop("shop-b", {"stock-svc": "/stock"}), name="shop-b")
    est = tmp_path / "estate.yaml"
    est.write_text("defaults:\n  profiles: [dev]\nrepositories:\n"
                   "  - path: shop-a\n    repo_id: example/shop-a\n"
                   "  - path: shop-b\n    url: https://git.example.com/team/shop-b.git\n    rev: main\n"
                   "  - path: missing\n    name: gone\n", encoding="utf-8")
    return tmp_path, a, b, est


def test_the_estate_file_is_read_with_defaults_relative_paths_and_names(two_repos):
    root, a, b, est = two_repos
    spec = load_estate(est)
    by = {r.name: r for r in spec.repositories}
    assert sorted(by) == ["example+shop-a", "gone", "team+shop-b"]
    assert by["team+shop-b"].repo_id == "git.example.com/team/shop-b" and by["team+shop-b"].rev == "main"
    assert by["example+shop-a"].path == root / "shop-a" and by["example+shop-a"].profiles == ("dev",)
    assert by["gone"].rev == "HEAD"


@pytest.mark.parametrize("text, says", [
    ("repositories:\n  - {path: a, colour: red}\n", "unknown field(s) colour"),
    ("repositories:\n  - {name: x}\n", "path (the repository's clone"),
    ("repositories:\n  - {path: a, name: x}\n  - {path: b, name: X}\n", "is taken by repositories #1"),
    ("repositories:\n  - {path: a, url: /local/folder}\n", "names no repository"),
    ("repositories:\n  - {path: a, rev: 2024}\n", "rev must be text"),
    ("repositories:\n  - {path: a, name: ../up}\n", "must be letters"),
    ("repositories: {path: a}\n", "repositories"),
    ("defaults: {jobs: 3}\nrepositories: []\n", "defaults: unknown field(s) jobs"),
])
def test_a_malformed_estate_file_is_one_clear_error(tmp_path, text, says):
    est = tmp_path / "e.yaml"
    est.write_text(text, encoding="utf-8")
    with pytest.raises(UserError) as exc:
        load_estate(est)
    assert says in exc.value.message


def test_packages_equal_a_scan_of_each_repository_and_a_second_run_reuses_them(two_repos):
    root, a, b, est = two_repos
    out = root / "out"
    first = scan_estate(load_estate(est), out)
    status = {o.name: o.status for o in first.repositories}
    assert status == {"example+shop-a": "scanned", "team+shop-b": "scanned", "gone": "failed"}
    assert "does not exist" in first.failed[0].message
    alone = root / "alone"
    scan_repo(a, alone, repo_id="example/shop-a", profiles=["dev"])
    assert _tree(out / "example+shop-a") == _tree(alone)
    state = json.loads((out / STATE_FILE).read_text())
    assert [p["service_id"] for p in state["repositories"]["example+shop-a"]["packages"]] == [
        "lib:shop-a", "order-svc", "pay-svc"]
    before = _tree(out)
    second = scan_estate(load_estate(est), out)
    assert {o.name: o.status for o in second.repositories} == dict(status, **{"example+shop-a": "reused",
                                                                               "team+shop-b": "reused"})
    assert _tree(out) == before


def test_a_changed_repository_alone_is_scanned_again_and_its_old_packages_go(two_repos):
    root, a, b, est = two_repos
    out = root / "out"
    scan_estate(load_estate(est), out)
    old = sorted(p.name for p in (out / "example+shop-a").iterdir())
    api = a / "order-svc/src/main/java/com/example/ordersvc/Api.java"
    api.write_text(api.read_text().replace("/orders", "/orders/v2"))
    shutil.rmtree(a / "pay-svc")
    pom = a / "pom.xml"
    pom.write_text(pom.read_text().replace("<module>pay-svc</module>", ""))
    commit(a)
    again = scan_estate(load_estate(est), out)
    assert {o.name: o.status for o in again.repositories}["example+shop-a"] == "scanned"
    assert {o.name: o.status for o in again.repositories}["team+shop-b"] == "reused"
    new = sorted(p.name for p in (out / "example+shop-a").iterdir())
    assert len(new) == 2 and not set(new) & set(old)  # the old commit's packages are gone


def test_a_repository_that_fails_keeps_its_earlier_packages_and_the_others_go_on(two_repos):
    root, a, b, est = two_repos
    out = root / "out"
    scan_estate(load_estate(est), out)
    kept = _tree(out / "team+shop-b")
    (b / "pom.xml").unlink()
    shutil.rmtree(b / "stock-svc")
    shutil.rmtree(b / "shop-lib")
    (b / "README").write_text("no build here\n")
    commit(b)
    got = scan_estate(load_estate(est), out)
    assert {o.name: o.status for o in got.repositories} == {"example+shop-a": "reused", "team+shop-b": "failed",
                                                            "gone": "failed"}
    assert _tree(out / "team+shop-b") == kept
    state = json.loads((out / STATE_FILE).read_text())
    assert state["repositories"]["team+shop-b"]["status"] == "failed"


def test_local_processes_and_a_dask_local_cluster_write_the_same_bytes(two_repos):
    distributed = pytest.importorskip("distributed")
    root, a, b, est = two_repos
    scan_estate(load_estate(est), root / "seq")
    scan_estate(load_estate(est), root / "jobs", jobs=2)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cl:
        got = scan_estate(load_estate(est), root / "dask", scheduler=cl.scheduler_address)
    assert [o.status for o in got.repositories] == ["scanned", "scanned", "failed"]
    for name in ("example+shop-a", "team+shop-b"):
        assert _tree(root / "seq" / name) == _tree(root / "jobs" / name) == _tree(root / "dask" / name)


def test_an_unreachable_scheduler_is_one_clear_error(two_repos):
    pytest.importorskip("distributed")
    root, a, b, est = two_repos
    with pytest.raises(UserError, match="cannot connect"):
        scan_estate(load_estate(est), root / "out", scheduler="tcp://127.0.0.1:9")


def test_the_graph_loads_only_what_changed_and_retires_what_is_gone(two_repos):
    root, a, b, est = two_repos
    out, db = root / "out", root / "g.duckdb"
    scan_estate(load_estate(est), out)
    first = update_graph(db, out)
    assert len(first.loaded) == 5 and first.kept == 0
    assert update_graph(db, out).load is None  # nothing changed: nothing opened for writing
    shutil.rmtree(a / "pay-svc")
    pom = a / "pom.xml"
    pom.write_text(pom.read_text().replace("<module>pay-svc</module>", ""))
    commit(a)
    scan_estate(load_estate(est), out)
    third = update_graph(db, out)
    assert len(third.loaded) == 2 and third.kept == 2 and len(third.retired) == 1
    import duckdb
    con = duckdb.connect(str(db), read_only=True)
    current = sorted(r[0] for r in con.execute("SELECT service_id FROM packages WHERE is_current").fetchall())
    con.close()
    assert current == ["lib:shop-a", "lib:shop-b", "order-svc", "stock-svc"]


def test_the_command_line_prints_a_table_exits_1_on_a_failure_and_refuses_a_second_writer(two_repos):
    root, a, b, est = two_repos
    out = root / "out"
    proc = run_cli("estate", "scan", str(est), "--out", str(out), "--no-cache")
    assert proc.returncode == 1, proc.stderr
    assert "2 scanned, 0 reused, 1 failed" in proc.stdout and "failed: gone:" in proc.stdout
    proc = run_cli("estate", "scan", str(est), "--out", str(out), "--json", "--repo", "example+shop-a")
    assert proc.returncode == 0 and json.loads(proc.stdout)["repositories"][0]["status"] == "reused"
    with locked(out):
        proc = run_cli("estate", "scan", str(est), "--out", str(out))
    assert proc.returncode == 2 and "another estate scan" in proc.stderr
    proc = run_cli("estate", "graph", str(out), "--db", str(root / "g.duckdb"))
    assert proc.returncode == 0 and "loaded 5" in proc.stdout
    proc = run_cli("estate", "graph", str(root), "--db", str(root / "g.duckdb"))
    assert proc.returncode == 2 and "no estate.json" in proc.stderr


def test_the_default_cache_is_under_the_users_cache_folder_and_never_stops_a_scan(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "diting"
    assert chosen_cache(None, False, tmp_path / "out") == (tmp_path / "xdg" / "diting", None)
    assert chosen_cache(None, True, tmp_path / "out") == (None, None)
    with pytest.raises(UserError, match="give one of them"):
        chosen_cache(tmp_path / "c", True, tmp_path / "out")
    (tmp_path / "file").write_text("x")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "file"))
    cache, note = chosen_cache(None, False, tmp_path / "out")
    assert cache is None and "cannot be used" in note
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    cache, note = chosen_cache(None, False, tmp_path / "xdg" / "diting" / "out")
    assert cache is None and "holds the output" in note


def test_a_repository_dropped_from_the_file_loses_its_packages_and_leaves_the_graph(two_repos):
    root, a, b, est = two_repos
    out, db = root / "out", root / "g.duckdb"
    scan_estate(load_estate(est), out)
    update_graph(db, out)
    est.write_text(est.read_text().split("  - path: shop-b")[0], encoding="utf-8")  # shop-a alone
    got = scan_estate(load_estate(est), out)
    assert got.dropped == ["gone", "team+shop-b"] and not any((out / "team+shop-b").iterdir())
    graph = update_graph(db, out)
    assert len(graph.retired) == 2 and not graph.loaded  # lib:shop-b and stock-svc
    import duckdb
    con = duckdb.connect(str(db), read_only=True)
    assert sorted(r[0] for r in con.execute("SELECT service_id FROM packages WHERE is_current").fetchall()) == [
        "lib:shop-a", "order-svc", "pay-svc"]
    con.close()


def test_rescan_scans_what_could_be_reused_and_writes_the_same_bytes(two_repos):
    root, a, b, est = two_repos
    out = root / "out"
    scan_estate(load_estate(est), out)
    before = _tree(out / "example+shop-a")
    got = scan_estate(load_estate(est), out, only=["example+shop-a"], rescan=True)
    assert [o.status for o in got.repositories] == ["scanned"]
    assert _tree(out / "example+shop-a") == before


def test_a_tampered_state_never_reaches_outside_its_repository_folder(two_repos):
    root, a, b, est = two_repos
    out = root / "out"
    scan_estate(load_estate(est), out)
    victim = root / "victim"
    (victim / "pkg").mkdir(parents=True)
    (victim / "pkg" / "manifest.json").write_text("{}")
    state = json.loads((out / STATE_FILE).read_text())
    state["repositories"]["example+shop-a"]["packages"] += [{"dir": "../../victim/pkg"}, {"dir": ".."}, {"dir": 3}]
    state["repositories"]["example+shop-a"]["key"] = "changed"  # scanned again: the old listing is swept
    (out / STATE_FILE).write_text(json.dumps(state))
    scan_estate(load_estate(est), out)
    assert (victim / "pkg" / "manifest.json").is_file()
    assert update_graph(root / "g.duckdb", out).loaded  # the bad entries are passed over, not followed


def test_two_repositories_of_one_service_id_are_named_before_anything_loads(tmp_path):
    a, _ = make_repo(tmp_path, _shop("shop-a", {"order-svc": "/a"}), name="shop-a")
    b, _ = make_repo(tmp_path, _shop("shop-b", {"order-svc": "/b"}), name="shop-b")
    est = tmp_path / "estate.yaml"
    est.write_text("repositories:\n  - {path: shop-a, repo_id: x/a}\n  - {path: shop-b, repo_id: x/b}\n")
    scan_estate(load_estate(est), tmp_path / "out")
    with pytest.raises(UserError) as exc:
        update_graph(tmp_path / "g.duckdb", tmp_path / "out")
    assert "order-svc (profiles default): x+a/order-svc@" in exc.value.message and "inventory" in exc.value.message
    assert not (tmp_path / "g.duckdb").exists()


@pytest.mark.parametrize("entry, says", [
    ("{path: a, name: estate.json}", "not estate.json"),
    ("{path: a, max_file_bytes: 99999999999999999999}", "max_file_bytes must be an integer from 1"),
])
def test_names_and_budgets_an_estate_cannot_take_are_refused(tmp_path, entry, says):
    est = tmp_path / "e.yaml"
    est.write_text(f"repositories:\n  - {entry}\n", encoding="utf-8")
    with pytest.raises(UserError, match=says):
        load_estate(est)


def test_paths_of_an_estate_file_named_relatively_are_absolute(two_repos, monkeypatch):
    root, a, b, est = two_repos
    monkeypatch.chdir(root)
    spec = load_estate(Path("estate.yaml"))
    assert all(r.path.is_absolute() for r in spec.repositories)


def test_a_state_of_another_shape_is_forgotten_and_the_repositories_scanned_again(two_repos):
    root, a, b, est = two_repos
    out = root / "out"
    scan_estate(load_estate(est), out)
    state = json.loads((out / STATE_FILE).read_text())
    state["repositories"]["example+shop-a"]["packages"] = "abc"
    state["repositories"]["team+shop-b"] = 7
    (out / STATE_FILE).write_text(json.dumps(state))
    got = scan_estate(load_estate(est), out)
    assert [o.status for o in got.repositories] == ["scanned", "scanned", "failed"]
    assert update_graph(root / "g.duckdb", out).loaded


def test_a_linked_repository_folder_and_a_lock_in_the_way_are_refused(two_repos):
    root, a, b, est = two_repos
    out = root / "out"
    scan_estate(load_estate(est), out)
    victim = root / "victim"
    victim.mkdir()
    shutil.rmtree(out / "example+shop-a")
    (out / "example+shop-a").symlink_to(victim)
    got = scan_estate(load_estate(est), out)
    assert got.repositories[0].status == "failed" and "is a link" in got.repositories[0].message
    assert not any(victim.iterdir())
    (out / ".estate.lock").unlink()
    (out / ".estate.lock").mkdir()
    with pytest.raises(UserError, match="cannot take its lock"):
        scan_estate(load_estate(est), out)


def test_a_cache_inside_the_output_is_refused_and_a_killed_runs_folders_are_swept(two_repos):
    root, a, b, est = two_repos
    out = root / "out"
    with pytest.raises(UserError, match="one holds the other"):
        scan_estate(load_estate(est), out, cache=out / "cache")
    (out / ".diting-estate-scan-left").mkdir(parents=True)
    scan_estate(load_estate(est), out, only=["team+shop-b"])
    assert not (out / ".diting-estate-scan-left").exists()
