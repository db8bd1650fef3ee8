"""graph/impact.py and ``diting impact``: hops, impact types, depth, frontier, unknowns; graph/export.py
and ``diting export``; canned queries (``diting query --saved``)."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from diting.cli.main import app
from diting.errors import UserError
from diting.graph import align_rows, store
from diting.graph import impact as impact_mod
from diting.graph.impact import impact
from diting.graph.query import query, saved_queries
from diting.graph.store import build

from .test_align import Estate

SAMPLES = Path(__file__).resolve().parents[1] / "ir_samples" / "estate"
RESERVE = "jsf://com.jd.trade.stock.api.StockReserveService#reserve"


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("g") / "g.duckdb"
    build(path, [SAMPLES])
    return path


def _run(db: Path, target: str, change: str, **kw) -> dict:
    return store.with_graph(db, lambda con: impact(con, target, change, **kw))


def _by_type(result: dict, kind: str = "METHOD") -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for it in result["items"]:
        if it["target"]["kind"] == kind:
            out.setdefault(it["impact_type"], set()).add(it["target"]["stable_id"].rsplit("/", 1)[-1])
    return out


def test_a_payload_field_reaches_provider_code_and_consumer_callers(db):
    r = _run(db, RESERVE, "FIELD")
    assert {s["kind"] for s in r["start"]} == {"CONTRACT", "ENTRY"}
    assert _by_type(r)["SUPPORTED"] == {
        "com.jd.trade.order.service.OrderSubmitService#submit(java.lang.String,java.util.List,java.math.BigDecimal)",
        "com.jd.trade.order.service.OrderSubmitService#addOne(java.lang.String,long)",
        "com.jd.trade.stock.provider.StockReserveServiceImpl#reserve(java.lang.String,java.util.List)",
        "com.jd.trade.stock.provider.StockReserveServiceImpl#reserve(java.lang.String,long,int)"}
    starts = {(s["scan_id"], s["record_id"]) for s in r["start"]}
    for it in r["items"]:
        assert it["paths"], it["target"]
        for path in it["paths"]:
            assert (path[0]["from"]["scan_id"], path[0]["from"]["record_id"]) in starts
            assert path[-1]["to"] == {"scan_id": it["target"]["scan_id"], "record_id": it["target"]["record_id"]}
            assert all(a["to"] == b["from"] for a, b in zip(path, path[1:]))
        # a path is never stronger than its weakest hop
        if any(s["status"] != "RESOLVED" for p in it["paths"] for s in p):
            assert it["impact_type"] != "SUPPORTED"
    # every evidence ref names a record of the graph
    refs = {(e["scan_id"], e["record_id"]) for it in r["items"] for e in it["evidence_refs"]}
    _, rows = query(db, "SELECT scan_id, record_id FROM relations UNION ALL SELECT scan_id, record_id FROM entities")
    assert refs and refs <= set(rows)


def test_a_topic_state_change_reaches_its_subscriber(db):
    r = _run(db, "jmq://trade_order_status", "STATE")
    got = _by_type(r)
    assert got["SUPPORTED"] == {"com.jd.trade.fulfillment.mq.OrderStatusListener#onStatus(java.lang.String)"}
    assert "com.jd.trade.fulfillment.service.ShipmentPlanner#plan(java.lang.String)" in got["POTENTIAL"]
    # the publishers are where the change is made: not items of a downstream walk
    assert not any("OrderEventPublisher" in s for v in got.values() for s in v)


def test_a_column_change_reaches_readers_and_writers(db):
    r = _run(db, "table://order_info", "TABLE_FIELD")
    assert _by_type(r)["SUPPORTED"] == {
        "com.jd.trade.order.dao.OrderInfoMapper#insertOrder(long,java.lang.String,java.math.BigDecimal,int)",
        "com.jd.trade.order.dao.OrderInfoMapper#selectByOrderId(long,int)",
        "com.jd.trade.order.dao.OrderInfoMapper#updateStatus(long,int,int)"}
    # the pay-result listener writes order_info through updateStatus: its entry is reached
    assert any(it["target"].get("urn") == "jmq://cashier_pay_result" for it in r["items"])


def test_a_config_switch_reaches_the_method_it_guards(db):
    r = _run(db, "ducc://order.submit.reserve-stock", "CONFIG")
    guarded = [it for it in r["items"] if it["paths"][0][0]["hop"] == "GUARDS" and len(it["paths"][0]) == 1]
    assert [g["target"]["stable_id"].rsplit("#", 1)[-1] for g in guarded] == \
        ["submit(java.lang.String,java.util.List,java.math.BigDecimal)"]
    assert guarded[0]["impact_type"] == "SUPPORTED"


def _chain() -> Estate:
    """stock provides reserve; order's submit (the handler of order's own contract) calls it; shop calls
    order's contract: two cross-service hops from stock."""
    e = Estate()
    stock, order, shop = e.package("stock"), e.package("order"), e.package("shop")
    for scan, urn, handler, sig in ((stock, "jsf://S#reserve", "method:stock/Impl#reserve(long)", ["long"]),
                                    (order, "jsf://O#submit", "method:order/Impl#submit(int)", ["int"])):
        e.entity(scan, handler, "METHOD", signature=sig)
        e.entity(scan, f"entry:{urn}", "ENTRY", entry_kind="JSF_PROVIDER", urn=urn,
                 handler_ref={"scan_id": scan, "record_id": handler})
        e.rpc(scan, "PROVIDED", urn, sig)
    reserve = e.rpc(order, "CONSUMED", "jsf://S#reserve", ["long"])
    e.relation(order, "CALLS", "method:order/Impl#submit(int)", reserve)
    submit = e.rpc(shop, "CONSUMED", "jsf://O#submit", ["int"])
    e.entity(shop, "method:shop/Cart#checkout()", "METHOD", signature=[])
    e.relation(shop, "CALLS", "method:shop/Cart#checkout()", submit)
    return e


def _chain_impact(e: Estate, **kw) -> dict:
    e.align()
    impact_mod.materialise(e.con)
    return impact(e.con, "method:stock/Impl#reserve(long)", "LOGIC", **kw)


def test_depth_bounds_cross_service_hops_and_leaves_a_frontier():
    r = _chain_impact(_chain(), depth=1)
    services = {it["target"]["service_id"] for it in r["items"]}
    assert services == {"stock", "order"}
    assert [f["reason"] for f in r["frontier"]] == ["DEPTH"] and not r["enumeration_complete"]
    r = _chain_impact(_chain(), depth=2)
    checkout = [it for it in r["items"] if it["target"]["record_id"] == "method:shop/Cart#checkout()"]
    assert checkout and checkout[0]["impact_type"] == "SUPPORTED" and checkout[0]["cross_service_hops"] == 2
    assert [s["hop"] for s in checkout[0]["paths"][0]] == ["HANDLES", "PROVIDES", "CONSUMES", "INVOKES", "HANDLES",
                                                           "PROVIDES", "CONSUMES", "INVOKES"]
    assert r["frontier"] == [] and r["enumeration_complete"]


def test_budget_and_unknown_callers_make_the_enumeration_incomplete():
    r = _chain_impact(_chain(), depth=3, budget=2)
    assert any(f["reason"] == "BUDGET" for f in r["frontier"]) and not r["enumeration_complete"]
    e = _chain()
    # a call site the scan could not resolve, by the name and arity of a reached method
    e.relation(e.con.execute("SELECT scan_id FROM packages WHERE service_id = 'order'").fetchone()[0], "CALLS",
               "method:order/Other#run()", None, status="UNRESOLVED", match_keys={"name": "submit", "arity": 1})
    r = _chain_impact(e, depth=3)
    assert [u["kind"] for u in r["unknowns"]] == ["UNRESOLVED_CALLER"] and not r["enumeration_complete"]


def test_an_ambiguous_hop_is_potential_at_most():
    e = _chain()
    order = e.con.execute("SELECT scan_id FROM packages WHERE service_id = 'order'").fetchone()[0]
    e.entity(order, "method:order/Job#run()", "METHOD", signature=[])
    e.relation(order, "CALLS", "method:order/Job#run()", None, status="AMBIGUOUS",
               candidate_target_refs=[{"scan_id": order, "record_id": "method:order/Impl#submit(int)"},
                                      {"scan_id": order, "record_id": "method:order/Other#submit(int)"}])
    r = _chain_impact(e, depth=1)
    job = next(it for it in r["items"] if it["target"]["record_id"] == "method:order/Job#run()")
    assert job["impact_type"] == "POTENTIAL"


def _cart() -> Estate:
    """shop: CartController#checkout calls Cart#pay (CartController.java:42); pay writes table cart;
    report reads cart on the same datasource."""
    e = Estate()
    shop, report = e.package("shop"), e.package("report")
    for i, (path, line) in enumerate([("shop/src/CartController.java", 42), ("shop/src/Cart.java", 7),
                                      ("report/src/Daily.java", 12), ("report/src/cart.xml", 3)]):
        e.con.execute("INSERT INTO segments (repo_id, commit_sha, record_id, locator) VALUES ('r', 'c', ?, ?)",
                      [f"seg:{i}", {"repo_id": "r", "commit_sha": "c", "path": path, "start_line": line,
                                    "end_line": line}])
    pay, checkout, total = "method:shop/a.Cart#pay()", "method:shop/a.CartController#checkout()", "method:report/b.Daily#sum()"
    for scan, m in ((shop, pay), (shop, checkout), (report, total)):
        e.entity(scan, m, "METHOD", signature=[])
    e.relation(shop, "CALLS", checkout, pay, evidence_refs=[{"scan_id": shop, "record_id": "seg:0"}])
    e.entity(shop, "table:table://cart@db", "TABLE", urn="table://cart", datasource="db")
    e.relation(shop, "WRITES", pay, "table:table://cart@db", evidence_refs=[{"scan_id": shop, "record_id": "seg:1"}])
    e.entity(report, "table:table://cart@db", "TABLE", urn="table://cart", datasource="db",
             evidence_refs=[{"scan_id": report, "record_id": "seg:3"}])
    e.relation(report, "READS", total, "table:table://cart@db", evidence_refs=[{"scan_id": report, "record_id": "seg:2"}])
    e.align()
    impact_mod.materialise(e.con)
    return e


def test_supported_items_say_why_and_potential_ones_are_counted_then_ranked():
    r = impact(_cart().con, "method:shop/a.Cart#pay()", "LOGIC")
    assert r["counts"] == {"SUPPORTED": 1, "POTENTIAL": 3, "DEPENDENCY_ONLY": 0}
    by_id = {it["target"]["record_id"]: it for it in r["items"]}
    checkout = by_id["method:shop/a.CartController#checkout()"]
    assert checkout["impact_type"] == "SUPPORTED" and checkout["rank"] == 1
    assert checkout["reason"] == "CartController#checkout calls Cart#pay at CartController.java:42"
    step, = checkout["paths"][0]
    assert step["location"] == {"path": "shop/src/CartController.java", "start_line": 42}
    assert step["impact_type"] == "SUPPORTED"
    # what pay writes, the other service's use of that table and its reader: potential, nearest first
    ranked = sorted((it for it in r["items"] if it["impact_type"] == "POTENTIAL"), key=lambda it: it["rank"])
    assert [(it["target"]["service_id"], it["target"]["kind"], it["path_length"], it["uncertain_hops"])
            for it in ranked] == [("shop", "TABLE", 1, 1), ("report", "TABLE", 2, 2), ("report", "METHOD", 3, 3)]
    assert ranked[2]["reason"] == ("Cart#pay writes table://cart at Cart.java:7; report also uses table://cart at "
                                   "cart.xml:3; Daily#sum reads table://cart at Daily.java:12")
    text = impact_mod.render_table(r)
    assert "1 supported; 3 potential (--potential lists them)" in text
    assert "because CartController#checkout calls Cart#pay at CartController.java:42" in text
    assert "Daily" not in text and "POTENTIAL" not in text.split("by service")[0]
    text = impact_mod.render_table(r, potential=True)
    lines = text.splitlines()
    order = [i for i, line in enumerate(lines) if "table://cart  [STORES]" in line or "Daily#sum()  [" in line]
    assert len(order) == 2 and "Daily" in lines[order[1]]
    assert "(3 of 3 hops uncertain: STORES, SHARES, READ_BY)" in text


def test_user_errors(db):
    with pytest.raises(UserError, match="no entity"):
        _run(db, "jsf://nope#x", "LOGIC")
    with pytest.raises(UserError, match="did you mean"):
        _run(db, "StockReserveService#reserve", "LOGIC")
    with pytest.raises(UserError, match="change type"):
        _run(db, RESERVE, "COLOR")
    with pytest.raises(UserError, match="depth"):
        _run(db, RESERVE, "LOGIC", depth=4)
    runner = CliRunner()
    for args in (["impact", RESERVE, "--db", str(db), "--change-type", "bogus"],
                 ["impact", "nothing", "--db", str(db), "--change-type", "LOGIC"],
                 ["impact", RESERVE, "--db", str(db.parent / "none.db"), "--change-type", "LOGIC"]):
        res = runner.invoke(app, args)
        assert res.exit_code == 2 and "Traceback" not in res.output, res.output
    res = runner.invoke(app, ["impact", RESERVE, "--db", str(db), "--change-type", "field"])
    assert res.exit_code == 0 and "SUPPORTED" in res.output and "enumeration_complete: true" in res.output
    assert "potential (--potential lists them)" in res.output and "\nPOTENTIAL" not in res.output
    res = runner.invoke(app, ["impact", RESERVE, "--db", str(db), "--change-type", "field", "--potential"])
    assert res.exit_code == 0 and "\nPOTENTIAL (fewest hops first" in res.output
    res = runner.invoke(app, ["impact", RESERVE, "--db", str(db), "--change-type", "FIELD", "--format", "json"])
    assert json.loads(res.output)["change_type"] == "FIELD"


def test_an_old_or_foreign_database_is_a_clear_error(tmp_path):
    db = tmp_path / "old.duckdb"
    con = duckdb.connect(str(db))
    con.execute("CREATE TABLE packages (x INTEGER)")
    con.close()
    res = CliRunner().invoke(app, ["impact", RESERVE, "--db", str(db), "--change-type", "LOGIC"])
    assert res.exit_code == 2 and "rebuild the graph" in res.output


# ---------------------------------------------------------------------------------------- export

def test_exports(db, tmp_path):
    runner = CliRunner()
    res = runner.invoke(app, ["export", "--db", str(db), "--format", "dot"])
    assert res.exit_code == 0
    dot = res.output
    assert dot.startswith("digraph services {") and '"order-center" -> "stock-center" [label="RPC 3"];' in dot
    assert '"promotion-center" -> "?" [label="RPC 0 ?2", style=dashed];' in dot
    res = runner.invoke(app, ["export", "--db", str(db), "--format", "mermaid", "--service", "payment-center"])
    assert res.exit_code == 0 and res.output.startswith("flowchart LR")
    assert "stock-center" not in res.output and "order-center" in res.output
    out = tmp_path / "g.graphml"
    res = runner.invoke(app, ["export", "--db", str(db), "--format", "graphml", "--out", str(out)])
    assert res.exit_code == 0
    import networkx as nx
    g = nx.read_graphml(out)
    assert g.has_edge("order-center", "payment-center") and "?" in g
    # equal databases, equal bytes
    res2 = runner.invoke(app, ["export", "--db", str(db), "--format", "dot"])
    assert res2.output == dot
    pq = tmp_path / "parquet"
    res = runner.invoke(app, ["export", "--db", str(db), "--format", "parquet", "--out", str(pq)])
    assert res.exit_code == 0
    con = duckdb.connect()
    for name in ("relations", "cross_service_edges", "segments", "impact_edges"):
        (n,), = con.execute(f"SELECT count(*) FROM '{pq / (name + '.parquet')}'").fetchall()
        assert [(n,)] == query(db, f"SELECT count(*) FROM {name}")[1], name
    assert {"evidence.parquet", "code_units.parquet", "impact_unresolved_calls.parquet", "packages.parquet"} <= \
        {p.name for p in pq.iterdir()}
    pq2 = tmp_path / "one"
    res = runner.invoke(app, ["export", "--db", str(db), "--format", "parquet", "--out", str(pq2),
                              "--service", "stock-center"])
    assert res.exit_code == 0
    (services,), = con.execute(f"SELECT list(DISTINCT service_id) FROM '{pq2 / 'packages.parquet'}'").fetchall()
    assert services == ["stock-center"]
    for args in (["--format", "png"], ["--format", "parquet"], ["--format", "dot", "--service", "nobody"]):
        res = runner.invoke(app, ["export", "--db", str(db), *args])
        assert res.exit_code == 2 and "Traceback" not in res.output, args


# ----------------------------------------------------------------------------------- saved queries

def test_saved_queries(db):
    known = saved_queries()
    assert {"who-calls", "writers-of", "unresolved-per-service", "topic-reach", "service-graph", "ownership"} <= set(known)
    runner = CliRunner()
    res = runner.invoke(app, ["query", "--saved", "list"])
    assert res.exit_code == 0 and "who-calls" in res.output and "--param urn=" in res.output
    # every canned query runs on the estate
    params = {"urn": RESERVE, "table": "table://order_info", "topic": "jmq://trade_order_status"}
    for q in known.values():
        args = ["query", "--db", str(db), "--saved", q.name, "--format", "json"]
        for p in q.params:
            args += ["--param", f"{p}={params[p]}"]
        res = runner.invoke(app, args)
        assert res.exit_code == 0, (q.name, res.output)
    res = runner.invoke(app, ["query", "--db", str(db), "--saved", "who-calls", "--param", f"urn={RESERVE}",
                              "--format", "json"])
    rows = json.loads(res.output)
    assert {r["consumer"] for r in rows} == {"order-center"} and all(r["resolution_status"] == "RESOLVED" for r in rows)
    assert {r["calling_method"].rsplit("#", 1)[-1].split("(")[0] for r in rows} == {"submit", "addOne"}
    res = runner.invoke(app, ["query", "--db", str(db), "--saved", "writers-of", "--param", "table=table://order_info",
                              "--format", "json"])
    assert [r["service_id"] for r in json.loads(res.output)] == ["order-center"]
    res = runner.invoke(app, ["query", "--db", str(db), "--saved", "unresolved-per-service", "--format", "json"])
    assert {"service_id": "promotion-center", "edge_kind": "RPC", "match_basis": "BINDING_MISMATCH",
            "unresolved": 2} in json.loads(res.output)
    for args in (["--saved", "nope"], ["--saved", "who-calls"], ["--param", "x"], []):
        res = runner.invoke(app, ["query", "--db", str(db), *args] + ([] if args and args[0] == "--saved" else
                                                                       (["SELECT $x"] if args else [])))
        assert res.exit_code == 2 and "Traceback" not in res.output, (args, res.output)
    # a parameter in ad-hoc SQL
    res = runner.invoke(app, ["query", "--db", str(db), "--param", "s=stock-center", "--format", "csv",
                              "SELECT count(*) AS n FROM services WHERE service_id = $s"])
    assert res.output.splitlines() == ["n", "1"]
    # views and canned queries only read: the database is unchanged by all of the above
    assert query(db, "SELECT count(*) FROM packages")[1] == [(7,)]
    assert align_rows.MATCH_BASIS.keys() >= set(r[0] for r in query(db, "SELECT DISTINCT match_basis FROM alignment")[1])


def test_query_parameters_and_no_file_access(db, tmp_path):
    runner = CliRunner()
    res = runner.invoke(app, ["query", "--db", str(db), "--saved", "who-calls"])
    assert res.exit_code == 2 and "--param urn=VALUE" in res.output
    res = runner.invoke(app, ["query", "--db", str(db), "--saved", "service-graph", "--param", "urn=x"])
    assert res.exit_code == 2 and "no parameter $urn" in res.output
    res = runner.invoke(app, ["query", "--db", str(db), "--saved", "who-call"])
    assert res.exit_code == 2 and "did you mean who-calls" in res.output
    res = runner.invoke(app, ["query", "--db", str(tmp_path), "SELECT 1"])
    assert res.exit_code == 2 and "is a directory" in res.output
    secret = tmp_path / "secret.csv"
    secret.write_text("a\n1\n", encoding="utf-8")
    for sql in (f"SELECT * FROM read_csv('{secret}')", f"COPY (SELECT 1) TO '{tmp_path / 'x.csv'}'",
                f"ATTACH '{tmp_path / 'x.duckdb'}'", "INSTALL httpfs", "SET enable_external_access = true"):
        res = runner.invoke(app, ["query", "--db", str(db), sql])
        assert res.exit_code == 2 and "query failed" in res.output, sql
    assert sorted(p.name for p in tmp_path.iterdir()) == ["secret.csv"]


def test_query_may_not_use_the_spill_directory_or_the_database_file(db, tmp_path):
    # DuckDB allows its spill directory <db>.tmp (and the database's own files) even with external
    # access off: a user query must reach neither
    copy = tmp_path / "G.duckdb"
    copy.write_bytes(db.read_bytes())
    spill = tmp_path / "G.duckdb.tmp"
    spill.mkdir()
    (spill / "note.txt").write_text("a\n1\n", encoding="utf-8")
    runner = CliRunner()
    for sql in (f"COPY (SELECT 1) TO '{spill / 'w.csv'}'",
                f"SELECT * FROM read_csv('{spill / 'note.txt'}')", f"SELECT * FROM read_text('{spill}/*')",
                f"SELECT count(*) FROM read_blob('{copy}')"):
        res = runner.invoke(app, ["query", "--db", str(copy), sql])
        assert res.exit_code == 2 and "query failed: a query reads only the graph" in res.output, sql
        assert "Traceback" not in res.output
    assert sorted(p.name for p in spill.iterdir()) == ["note.txt"]
    assert query(copy, "SELECT count(*) FROM packages")[1] == [(7,)]


def test_diagram_exports_are_safe_and_plain_files(tmp_path):
    import os
    e = Estate()
    a, b = e.package("svc\nclick n0 href x"), e.package('b"\x1b[31m')
    e.rpc(a, "CONSUMED", "jsf://X#y", ["int"])
    e.rpc(b, "PROVIDED", "jsf://X#y", ["int"])
    e.align()
    from diting.graph import export as ex
    for fmt in ("dot", "mermaid", "graphml"):
        out = tmp_path / f"g.{fmt}"
        ex.export(e.con, fmt, out)
        text = out.read_text(encoding="utf-8")
        assert "\n click" not in text and "\x1b" not in text and "\\x0a" in text, fmt
        assert oct(os.stat(out).st_mode & 0o777) == oct(0o666 & ~_umask()), fmt
    import networkx as nx
    assert nx.read_graphml(tmp_path / "g.graphml").number_of_edges() == 1
    with pytest.raises(UserError, match="is a directory"):
        ex.export(e.con, "dot", tmp_path)
    with pytest.raises(UserError, match="no such directory"):
        ex.export(e.con, "dot", tmp_path / "g.dot" / "inside.dot")
    with pytest.raises(UserError, match="no such directory"):
        ex.export(e.con, "dot", tmp_path / "missing" / "deeper" / "x.dot")
    assert not (tmp_path / "missing").exists()  # an export never makes a directory tree


def _umask() -> int:
    import os
    m = os.umask(0)
    os.umask(m)
    return m


def test_canned_queries_take_a_name_as_the_tool_prints_it(db):
    """A table without its scheme, or with the @datasource findings print after it, names the table;
    so does a contract urn or a topic without its scheme; each rewrite is said on stderr."""
    runner = CliRunner()

    def rows(saved: str, param: str) -> tuple[list[dict], str]:
        res = runner.invoke(app, ["query", "--db", str(db), "--saved", saved, "--param", param, "--format", "json"])
        assert res.exit_code == 0, res.output
        return json.loads(res.stdout), res.stderr

    full, note = rows("writers-of", "table=table://order_info")
    assert full and note == ""
    for given in ("order_info", "table://order_info@trade_order", "order_info@trade_order"):
        got, note = rows("writers-of", f"table={given}")
        assert got == full and note.strip() == f"note: table={given} is table://order_info"
    assert rows("who-calls", "urn=" + RESERVE.split("://", 1)[1])[0] == rows("who-calls", f"urn={RESERVE}")[0]
    assert rows("topic-reach", "topic=trade_order_status")[0] == rows("topic-reach", "topic=jmq://trade_order_status")[0]


def test_a_name_that_matches_nothing_is_said_with_the_close_names(db):
    runner = CliRunner()
    for saved, param, said in (
            ("writers-of", "table=order_infos", "no table named order_infos; did you mean table://order_info"),
            ("writers-of", "table=table://nope_at_all", "no table named table://nope_at_all"),
            ("who-calls", "urn=jsf://com.jd.trade.stock.api.StockReserveService#reserv",
             f"no contract named jsf://com.jd.trade.stock.api.StockReserveService#reserv; did you mean {RESERVE}"),
            ("topic-reach", "topic=kafka://trade_order_status", "no topic named kafka://trade_order_status")):
        res = runner.invoke(app, ["query", "--db", str(db), "--saved", saved, "--param", param])
        assert res.exit_code == 2 and said in res.output and "Traceback" not in res.output, res.output


def test_canned_queries_name_methods_and_entries_by_stable_id_not_record_id(db):
    from diting.ir.ids import ENTITY_PREFIX, HASHED_ID
    params = {"urn": RESERVE, "table": "table://order_info", "topic": "jmq://trade_order_status"}
    seen = 0
    record_prefixes = set(ENTITY_PREFIX.values()) - {"bean:", "ext:"}  # a bean's, an external's record_id is its stable_id
    for q in saved_queries().values():
        _, rows = query(db, q.sql, {p: params[p] for p in q.params} or None)
        for row in rows:
            for cell in row:
                if isinstance(cell, str):
                    seen += 1
                    prefix = cell.split(":", 1)[0] + ":"
                    assert not (prefix in record_prefixes and not cell.startswith(prefix + "//")) \
                        and not HASHED_ID.match(cell), (q.name, cell)
    assert seen
    _, rows = query(db, saved_queries()["topic-reach"].sql, {"topic": "jmq://trade_order_status"})
    assert "MQ_CONSUMER:jmq://trade_order_status@com.jd.trade:fulfillment-core/com.jd.trade.fulfillment.mq." \
           "OrderStatusListener#onStatus(java.lang.String)" in {r[-1] for r in rows}


def test_a_pyramid_table_a_build_dropped_names_the_command_that_makes_it(db):
    res = CliRunner().invoke(app, ["query", "--db", str(db), "SELECT count(*) FROM entry_cards"])
    assert res.exit_code == 2 and f"'diting pyramid --db {db}' makes it" in res.output
    assert "Catalog Error" not in res.output and "Traceback" not in res.output
