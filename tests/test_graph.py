"""graph/store.py and ``diting graph build`` / ``diting query``: packages loaded into typed DuckDB tables,
the current set (replace, labels), refusals, all-or-nothing loads, read-only queries."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from diting.cli.main import app
from diting.errors import UserError
from diting.graph import store
from diting.graph.store import build
from diting.graph.query import query
from diting.scan.pipeline import ScanOptions, scan
from tests.conftest import run_cli

SAMPLES = Path(__file__).resolve().parents[1] / "ir_samples" / "estate"


def _state(db: Path) -> list:
    """Everything a load can change, for before/after comparisons."""
    return [query(db, f"SELECT * FROM {t} ORDER BY ALL")[1] for t in
            ("packages", "entities", "relations", "segments", "config_bindings", "diagnostics", "branch_ledger",
             "coverage", "alignment", "graph_findings", "impact_nodes", "impact_edges", "impact_packages",
             "impact_package_hops", "impact_unresolved_calls")]


def test_packages_load_into_typed_tables(tmp_path):
    db = tmp_path / "g.duckdb"
    result = build(db, [SAMPLES])
    assert len(result.loaded) == 7 and not result.unchanged
    for pkg in sorted(p for p in SAMPLES.iterdir() if (p / "manifest.json").is_file()):
        m = json.loads((pkg / "manifest.json").read_text(encoding="utf-8"))
        counts = {f["path"]: f["record_count"] for f in m["files"]}
        for fname, (table, _) in store.TABLES.items():
            if table in store.SHARED:
                continue
            (n,), = query(db, f"SELECT count(*) FROM {table} WHERE scan_id = '{m['scan_id']}'")[1]
            assert n == counts[fname], (pkg.name, table)
    # segments are facts of the commit: stored once, however many packages of it cite them
    ids = {json.loads(line)["record_id"] for pkg in SAMPLES.iterdir() if (pkg / "source_segments.jsonl").is_file()
           for line in (pkg / "source_segments.jsonl").read_text(encoding="utf-8").splitlines()}
    (n,), = query(db, "SELECT count(*) FROM segments")[1]
    assert n == len(ids)
    _, rows = query(db, "SELECT count(*) FROM relations r JOIN evidence s ON s.scan_id = r.scan_id "
                        "AND s.record_id = r.evidence_refs[1].record_id")
    (total,), = query(db, "SELECT count(*) FROM relations WHERE len(evidence_refs) > 0")[1]
    assert rows == [(total,)]  # every first evidence ref resolves through the evidence view
    # references are structs, attributes JSON
    _, rows = query(db, "SELECT source_ref.record_id, attributes->>'dispatch_kind' FROM relations "
                        "WHERE kind = 'CALLS' AND attributes->>'dispatch_kind' = 'RPC' ORDER BY 1 LIMIT 1")
    assert rows and rows[0][1] == "RPC"
    _, rows = query(db, "SELECT service_id, profile_set, is_current FROM packages WHERE service_id = 'order-center'")
    assert rows == [("order-center", "dev", True)]


def test_loading_again_changes_nothing(tmp_path):
    db = tmp_path / "g.duckdb"
    build(db, [SAMPLES])
    before = _state(db)
    result = build(db, [SAMPLES])
    assert not result.loaded and len(result.unchanged) == 7
    assert _state(db) == before


def test_a_build_works_within_its_memory_limit(tmp_path, monkeypatch):
    from diting.graph.store import connect

    def limit_bytes() -> float:
        con = connect(db)
        number, unit = con.execute("SELECT current_setting('memory_limit')").fetchone()[0].split()
        con.close()
        return float(number) * {"MiB": 2**20, "GiB": 2**30}[unit]

    db = tmp_path / "g.duckdb"
    build(db, [SAMPLES])
    assert abs(limit_bytes() - 1e9) < 0.05e9  # DuckDB shows one decimal
    monkeypatch.setenv("DITING_GRAPH_MEMORY", "2GB")
    assert abs(limit_bytes() - 2e9) < 0.05 * 2e9
    for bad in ("lots", "1KB", "0GB", "9999999999TB", "\u0661GB", "1GB'; ATTACH 'x.db'"):
        monkeypatch.setenv("DITING_GRAPH_MEMORY", bad)
        r = run_cli("graph", "build", "--db", str(tmp_path / "h.duckdb"), str(SAMPLES))
        assert r.returncode == 2 and "DITING_GRAPH_MEMORY=" in r.stderr and "Traceback" not in r.stderr, (bad, r.stderr)
        assert not list(tmp_path.glob(".h.duckdb*")) and not (tmp_path / "h.duckdb").exists()


@pytest.fixture(scope="module")
def other_scan(estate, tmp_path_factory):
    """The estate scanned under another repo id: every package has another scan_id."""
    repo, sha = estate
    out = tmp_path_factory.mktemp("other")
    scan(repo, sha, ScanOptions(out=out, repo_id="elsewhere/estate", quiet=True))
    return out


def test_a_current_package_is_replaced_only_when_asked(tmp_path, other_scan):
    db = tmp_path / "g.duckdb"
    build(db, [SAMPLES])
    before = _state(db)
    stock = next(p for p in other_scan.iterdir() if p.name.startswith("stock-center@"))
    with pytest.raises(UserError, match="--replace"):
        build(db, [stock])
    assert _state(db) == before
    result = build(db, [stock], replace=True)
    assert len(result.loaded) == 1 and len(result.replaced) == 1
    _, rows = query(db, "SELECT repo_id FROM packages WHERE service_id = 'stock-center' AND is_current")
    assert rows == [("elsewhere/estate",)]
    # a gray version sits beside the current one
    pay = next(p for p in other_scan.iterdir() if p.name.startswith("payment-center@"))
    build(db, [pay], label="gray")
    _, rows = query(db, "SELECT label FROM packages WHERE service_id = 'payment-center' AND is_current ORDER BY 1")
    assert rows == [("",), ("gray",)]


def test_a_tampered_package_is_refused_and_nothing_loads(tmp_path):
    pkgs = tmp_path / "pkgs"
    shutil.copytree(SAMPLES, pkgs)
    victim = next(p for p in pkgs.iterdir() if p.name.startswith("order-center@"))
    with open(victim / "relations.jsonl", "ab") as fh:
        fh.write(b"\n")
    db = tmp_path / "g.duckdb"
    with pytest.raises(UserError, match="does not verify"):
        build(db, [pkgs])
    assert not db.exists() or query(db, "SELECT count(*) FROM packages")[1] == [(0,)]


def test_a_failed_load_leaves_the_database_as_it_was(tmp_path, monkeypatch, other_scan):
    db = tmp_path / "g.duckdb"
    build(db, [SAMPLES])
    before = _state(db)
    loaded = store._load

    def fail_after_loading(*args, **kwargs):
        loaded(*args, **kwargs)
        raise KeyboardInterrupt  # interrupted once every row is in

    monkeypatch.setattr(store, "_load", fail_after_loading)
    with pytest.raises(KeyboardInterrupt):
        build(db, [other_scan], replace=True)
    assert _state(db) == before


def test_a_failure_while_aligning_leaves_the_database_as_it_was(tmp_path, monkeypatch, other_scan):
    db = tmp_path / "g.duckdb"
    build(db, [SAMPLES])
    before = _state(db)
    from diting.graph import impact

    def broken(con):
        con.execute("DELETE FROM impact_edges")  # half done, then it fails
        raise RuntimeError("disk full")

    monkeypatch.setattr(impact, "materialise", broken)
    with pytest.raises(RuntimeError):
        build(db, [other_scan], replace=True)
    assert _state(db) == before


def test_the_cli_builds_and_queries_read_only(tmp_path):
    db = tmp_path / "g.duckdb"
    runner = CliRunner()
    r = runner.invoke(app, ["graph", "build", str(SAMPLES), "--db", str(db)])
    assert r.exit_code == 0 and "loaded 7" in r.output
    r = runner.invoke(app, ["query", "--db", str(db), "--format", "json",
                            "SELECT service_id FROM packages WHERE service_id LIKE 'stock%'"])
    assert r.exit_code == 0 and json.loads(r.output) == [{"service_id": "stock-center"}]
    for sql in ("SELEC 1", "DELETE FROM packages"):
        r = runner.invoke(app, ["query", "--db", str(db), sql])
        assert r.exit_code == 2 and "query failed" in r.output and "Traceback" not in r.output
    r = runner.invoke(app, ["query", "--db", str(tmp_path / "none.duckdb"), "SELECT 1"])
    assert r.exit_code == 2 and "no such graph database" in r.output
    r = runner.invoke(app, ["graph", "build", str(tmp_path / "nothing"), "--db", str(db)])
    assert r.exit_code == 2 and "package not found" in r.output


def test_views_read_current_packages(tmp_path, other_scan):
    db = tmp_path / "g.duckdb"
    build(db, [SAMPLES])
    assert query(db, "SELECT count(*) FROM services")[1] == [(7,)]
    _, rows = query(db, "SELECT entry_kind, urn FROM entries WHERE service_id = 'stock-center' "
                        "AND entry_kind = 'SCHEDULED_JOB'")
    assert rows == [("SCHEDULED_JOB", "com.jd.trade.stock.job.StockResyncJob#resync")]
    _, rows = query(db, "SELECT role, urn FROM contracts WHERE service_id = 'payment-center' AND role = 'PROVIDED' "
                        "ORDER BY urn LIMIT 1")
    assert rows and rows[0][1].startswith("jsf://com.jd.trade.payment.api.PaymentService#")
    # order_item is read by selectSkuIds, which no method of order-center calls (DECLARED_ONLY): not counted
    _, rows = query(db, "SELECT DISTINCT op, shard_key_status FROM table_access WHERE service_id = 'order-center' "
                        "AND logical_table = 'table://order_item'")
    assert rows == [("WRITE", "CONFIRMED")]
    # fulfillment-core is in both fulfillment deployables: each of its methods is one code unit of two services
    _, rows = query(db, "SELECT services, len(revisions) FROM code_units WHERE stable_id = "
                        "'com.jd.trade:fulfillment-core/com.jd.trade.fulfillment.service.StockService#canShip(long)'")
    assert rows == [(["fulfillment-center", "fulfillment-worker"], 1)]  # the same code: one revision
    _, rows = query(db, "SELECT count(*), count(DISTINCT (repo_id, commit_sha, stable_id)) FROM code_units")
    assert rows[0][0] == rows[0][1]
    # after a replacement the views show the new package only
    stock = next(p for p in other_scan.iterdir() if p.name.startswith("stock-center@"))
    build(db, [stock], replace=True)
    assert query(db, "SELECT repo_id FROM services WHERE service_id = 'stock-center'")[1] == [("elsewhere/estate",)]
    assert query(db, "SELECT count(*) FROM services")[1] == [(7,)]


def _resign(pkg: Path) -> None:
    """Recompute the manifest's sha256 and record counts after an edit (what a careful forger does)."""
    import hashlib
    m = json.loads((pkg / "manifest.json").read_text(encoding="utf-8"))
    for f in m["files"]:
        data = (pkg / f["path"]).read_bytes()
        f["sha256"] = hashlib.sha256(data).hexdigest()
        if f["path"].endswith(".jsonl"):
            f["record_count"] = data.count(b"\n")
    (pkg / "manifest.json").write_text(json.dumps(m, sort_keys=True, separators=(",", ":")) + "\n", encoding="utf-8")


def _copy(tmp_path: Path, prefix: str, name: str = "stock") -> Path:
    dest = tmp_path / name
    src = next(p for p in SAMPLES.iterdir() if p.name.startswith(prefix))
    shutil.copytree(src, dest / src.name)
    return dest / src.name


def test_relabelling_keeps_one_current_package_per_label(tmp_path, other_scan):
    db = tmp_path / "g.duckdb"
    build(db, [SAMPLES])
    v2 = next(p for p in other_scan.iterdir() if p.name.startswith("stock-center@"))
    build(db, [v2], label="gray")
    build(db, [_copy(tmp_path, "stock-center@")], label="gray", replace=True)  # the original, now as gray
    build(db, [v2], label="canary")
    _, rows = query(db, "SELECT label, repo_id FROM services WHERE service_id = 'stock-center' ORDER BY 1")
    assert rows == [("canary", "elsewhere/estate"), ("gray", "fixtures/estate")]


def test_an_altered_and_resigned_package_never_passes_for_the_original(tmp_path):
    db = tmp_path / "g.duckdb"
    build(db, [SAMPLES])
    before = _state(db)
    forged = _copy(tmp_path, "stock-center@")
    ents = forged / "entities.jsonl"
    ents.write_text(ents.read_text(encoding="utf-8").replace('"name":"com.jd.trade.stock', '"name":"EVIL.stock', 1),
                    encoding="utf-8")
    _resign(forged)
    with pytest.raises(UserError, match="does not verify .*revision_id does not match"):
        build(db, [forged])  # every record is checked by default: the forged name breaks its revision
    with pytest.raises(UserError, match="files differ"):
        build(db, [forged], deep=False)  # --fast: the same scan_id with other files is still refused
    assert _state(db) == before
    build(db, [forged], replace=True, deep=False)  # asked for: the loaded copy is replaced, not kept beside
    _, rows = query(db, "SELECT count(*) FROM entities WHERE name LIKE 'EVIL%'")
    assert rows == [(1,)]
    build(db, [_copy(tmp_path, "stock-center@", "orig")], replace=True)
    assert _state(db)[1:] == before[1:]  # every record as before (the package row notes where it came from)


@pytest.mark.parametrize("edit", ["bad_type", "duplicate", "null_line", "empty_line", "coverage"])
def test_bad_records_are_refused_with_or_without_the_record_checks(tmp_path, edit):
    pkg = _copy(tmp_path, "order-center@")
    path = pkg / "entities.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    if edit == "bad_type":
        i = next(i for i, ln in enumerate(lines) if '"is_sharded":' in ln)
        lines[i] = lines[i].replace('"is_sharded":true', '"is_sharded":"banana"').replace(
            '"is_sharded":false', '"is_sharded":"banana"')
    elif edit == "duplicate":
        lines.insert(1, lines[1])
    elif edit == "null_line":
        lines[1] = "null\n"
    elif edit == "empty_line":
        lines[1] = "\n"
    else:
        (pkg / "coverage.json").write_text("[1,2,3]\n", encoding="utf-8")
    path.write_text("".join(lines), encoding="utf-8")
    _resign(pkg)
    db = tmp_path / "new.duckdb"
    with pytest.raises(UserError, match="does not verify"):
        build(db, [pkg])  # every record is checked by default
    assert not db.exists()
    # with --fast (records not checked) the load itself still refuses them
    with pytest.raises(UserError, match="could not be loaded|more than once|no record_id|record\\(s\\) read|not a (valid )?"
                                         "coverage report"):
        build(db, [pkg], deep=False)
    assert not db.exists()  # a database the failed build created is removed
    old = tmp_path / "old.duckdb"
    build(old, [SAMPLES])
    before = _state(old)
    with pytest.raises(UserError):
        build(old, [pkg], replace=True, deep=False)
    assert _state(old) == before


@pytest.mark.parametrize("table", ["packages (id INTEGER, name VARCHAR)", "stuff (x INTEGER)"])
def test_a_foreign_database_is_refused_untouched(tmp_path, table):
    import duckdb
    db = tmp_path / "other.duckdb"
    con = duckdb.connect(str(db))
    con.execute(f"CREATE TABLE {table}")
    con.close()
    with pytest.raises(UserError, match="not a .*graph database"):
        build(db, [SAMPLES])
    con = duckdb.connect(str(db))
    assert con.execute("SELECT table_name FROM information_schema.tables").fetchall() == [(table.split()[0],)]
    con.close()


def test_a_package_named_twice_is_loaded_once(tmp_path):
    db = tmp_path / "g.duckdb"
    copy = tmp_path / "again"
    shutil.copytree(SAMPLES, copy)
    result = build(db, [SAMPLES, copy])
    assert len(result.loaded) == 7 and result.duplicates == 7 and not result.unchanged


def test_an_interrupt_while_aligning_rolls_back_and_says_so(tmp_path, monkeypatch, other_scan):
    import duckdb
    db = tmp_path / "g.duckdb"
    build(db, [SAMPLES])
    before = _state(db)
    from diting.graph import impact

    def interrupted(con):
        raise duckdb.InterruptException("Query interrupted")

    monkeypatch.setattr(impact, "materialise", interrupted)
    with pytest.raises(KeyboardInterrupt):
        build(db, [other_scan], replace=True)
    assert _state(db) == before
