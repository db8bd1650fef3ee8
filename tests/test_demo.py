"""`diting demo`: the README's first command, run as a user would (a subprocess), and its answers
checked against the estate's answer key rather than against themselves."""

from __future__ import annotations

import json
import re
import subprocess
import sys

from diting.demo import example_queries, format_table, run_query, fixtures_dir

from .conftest import run_cli

EXPECTED = json.loads((fixtures_dir() / "estate" / "expected.json").read_text(encoding="utf-8"))


def _topic_sides() -> dict[str, dict[str, set[str]]]:
    """topic → {PUBLISHES: services, SUBSCRIBES: services} from expected.json (resolved topics only)."""
    out: dict[str, dict[str, set[str]]] = {}
    for f in EXPECTED["facts"]:
        m = re.match(r"(PUBLISHES|SUBSCRIBES) \S+ -> topic:(\S+)$", f["key"]) if f["family"] == "topic" else None
        if m:
            out.setdefault(m.group(2), {"PUBLISHES": set(), "SUBSCRIBES": set()})[m.group(1)].add(f["service"])
    return out


def test_demo_runs_end_to_end_and_its_answers_match_the_answer_key(tmp_path):
    work = tmp_path / "demo"
    r = run_cli("demo", "--workdir", str(work))
    assert r.returncode == 0, r.stdout + r.stderr
    text = r.stdout
    assert "Traceback" not in text + r.stderr
    assert f"at commit {EXPECTED['commit']}" in text
    assert "all valid" in text
    for heading in ("4. what each package holds", "5. coverage", "6. example queries", "7. the relation graph",
                    "8. coverage of the estate over the graph", "9. the pyramid", "10. try next"):
        assert heading in text
    # the estate's cross-service edges: 10 resolved of 22 (the alignment's rows with a source)
    assert re.search(r"^\s+cross_service_edges\s+22\s+10\s+0\s+12\s+0\s+45\.5%\s*$", text, re.M)
    assert (work / "coverage.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert "9. the pyramid: 28 entry cards" in text and (work / "pyramid" / "index.md").is_file()
    assert re.search(r"^\s+order-center\s+9\s+1\s+", text, re.M)  # the outbox relay leaves order-center
    # the graph: order-center's dev alias is not the alias promotion-center asks for
    assert re.search(r"^\s+promotion-center\s+-\s+RPC\s+0\s+0\s+2\s*$", text, re.M)
    assert re.search(r"^\s+order-center\s+stock-center\s+RPC\s+3\s+0\s+0\s*$", text, re.M)
    assert (work / "graph.duckdb").is_file()
    # every package, with its status
    for service in {f["service"] for f in EXPECTED["facts"]}:
        assert service in text
    # the topics answer, rebuilt independently from expected.json
    sides = _topic_sides()
    for topic, by in sides.items():
        pubs = ", ".join(sorted(by["PUBLISHES"])) or "-"
        subs = ", ".join(sorted(by["SUBSCRIBES"])) or "-"
        assert re.search(rf"^\s+{re.escape(topic)}\s+{re.escape(pubs)}\s+{re.escape(subs)}\s*$", text, re.M), topic
    # each query was saved and reruns to the same answer with the command the demo prints
    saved = sorted(p.name for p in (work / "queries").iterdir())
    assert saved == sorted(f"{name}.sql" for name, _, _ in example_queries(work / "ir"))
    rerun = subprocess.run([sys.executable, "-c", "import duckdb,sys; print(duckdb.sql(open(sys.argv[1]).read()))",
                            str(work / "queries" / "table_writers.sql")], capture_output=True, text=True)
    assert rerun.returncode == 0 and "stock_sku_bak@trade_stock" in rerun.stdout
    # a second run replaces its own directory
    again = run_cli("demo", "--workdir", str(work))
    assert again.returncode == 0 and again.stdout == text


def test_table_writers_answer_equals_the_write_facts(estate_scan):
    _, out = estate_scan
    (sql,) = [q for name, _, q in example_queries(out) if name == "table_writers"]
    headers, rows = run_query(sql)
    got = {r[0]: r[1] for r in rows}
    want: dict[str, set[str]] = {}
    for f in EXPECTED["facts"]:
        m = re.match(r"WRITES \S+ -> table:table://(\S+)$", f["key"]) if f["family"] == "table_access" else None
        if m:
            want.setdefault(m.group(1), set()).add(f["service"])
    assert got == {t: ", ".join(sorted(s)) for t, s in want.items()}
    assert format_table(headers, rows)[0].split() == headers


def test_demo_refuses_a_directory_it_did_not_make(tmp_path):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me")
    r = run_cli("demo", "--workdir", str(mine))
    assert r.returncode == 2 and "not a diting demo directory" in r.stderr
    assert (mine / "notes.txt").read_text() == "keep me"


def test_demo_workdirs_it_must_refuse(tmp_path):
    """One clear message and exit 2 for each; nothing outside is touched."""
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / ".diting-demo").write_text("x")
    (tmp_path / "link").symlink_to(tmp_path / "real")
    cases = {
        "link": "is a symbolic link",
        ".": "current directory",
        "back\\slash": "without a backslash",
        str(fixtures_dir() / "estate" / "demo"): "inside the bundled fixture sources",
    }
    for workdir, message in cases.items():
        r = run_cli("demo", "--workdir", workdir, cwd=tmp_path)
        assert r.returncode == 2 and message in r.stderr and "Traceback" not in r.stderr, (workdir, r.stderr)
    assert (tmp_path / "real" / ".diting-demo").read_text() == "x"
    assert not (fixtures_dir() / "estate" / "demo").exists()


def test_a_second_demo_on_the_same_parent_is_refused_while_one_runs(tmp_path):
    import fcntl
    import os
    fd = os.open(tmp_path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # as a running demo holds it
        r = run_cli("demo", "--workdir", str(tmp_path / "demo"))
    finally:
        os.close(fd)
    assert r.returncode == 2 and "another diting demo is running" in r.stderr
    assert not (tmp_path / "demo").exists()


def test_glob_characters_in_the_workdir_read_only_that_directory(tmp_path):
    """DuckDB globs paths: a workdir named demo* must not also read demo-a's packages."""
    other = tmp_path / "demo-a" / "ir" / "x@0123456789ab"
    other.mkdir(parents=True)
    (other / "relations.jsonl").write_text(json.dumps({
        "kind": "WRITES", "target_ref": {"record_id": "table:table://intruder@x"}, "source_ref": None,
        "attributes": {}, "match_keys": None, "resolution_status": "RESOLVED"}) + "\n")
    r = run_cli("demo", "--workdir", "demo*[1]", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "intruder" not in r.stdout and "order_info@trade_order" in r.stdout
