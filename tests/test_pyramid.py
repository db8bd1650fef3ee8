"""The pyramid (docs/pyramid.md): entry cards, business rules, service profiles and flows derived from the
fixture estate's graph — every statement cites records of the family its role requires, each card's
ledger is exactly its entry's, flows are never more certain than their weakest hop, and a deleted
call line changes only what was built on that call."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT, run_cli
from diting.graph.store import build, with_graph
from diting.graph.query import query
from diting.pyramid import flows as flows_mod
from diting.pyramid.build import build_pyramid, derive
from diting.pyramid.templates import TEMPLATES, TemplateError, templates_table, statement
from diting.scan.pipeline import ScanOptions, scan

SAMPLES = ROOT / "ir_samples" / "estate"

#: docs/pyramid.md §3: the records each role's statements stand on (checked against the graph, not the templates)
ROLE_FAMILIES = {
    "TRIGGER": {"entry"}, "INPUT": {"method"}, "CONDITION": {"branch"}, "FAILURE": {"branch"},
    "ACTION": {"relation:CALLS", "relation:WRITES", "relation:PUBLISHES"},
    "RESULT": {"method", "relation:WRITES"}, "DEPENDENCY": {"relation:READS", "relation:GUARDS"},
    "RESPONSIBILITY": {"entry", "contract", "table"},
    # a caller of a contract it provides, of a gateway route it is, or of the whole service (a gateway's route)
    "BOUNDARY": {"contract", "topic", "table", "entry", "service"},
}


@pytest.fixture(scope="module")
def graph(tmp_path_factory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("pyr")
    db = tmp / "g.duckdb"
    build(db, [SAMPLES])
    out = tmp / "pages"
    build_pyramid(db, out)
    return db, out


def _table(db: Path, sql: str, params=None) -> list[dict]:
    cols, rows = query(db, sql, params)
    out = []
    for r in rows:
        d = dict(zip(cols, r))
        out.append({k: _maybe_json(v) for k, v in d.items()})
    return out


def _maybe_json(v):
    if isinstance(v, str) and v[:1] in "[{":
        try:
            return json.loads(v)
        except ValueError:
            return v
    return v


def _families(db: Path) -> dict[tuple[str, str], str]:
    """(scan_id, record_id) → family, for every entity, relation and ledger item of the graph."""
    fam = {}
    for scan_id, rid in query(db, "SELECT scan_id, record_id FROM entities")[1]:
        fam[(scan_id, rid)] = rid.split(":", 1)[0]
    for scan_id, rid, kind in query(db, "SELECT scan_id, record_id, kind FROM relations")[1]:
        fam[(scan_id, rid)] = f"relation:{kind}"
    for scan_id, rid in query(db, "SELECT scan_id, record_id FROM branch_ledger")[1]:
        fam[(scan_id, rid)] = "branch"
    return fam


def test_every_statement_cites_records_of_its_roles_family(graph):
    db, _ = graph
    fam = _families(db)
    cards = _table(db, "SELECT card_id, entry_ref, statements FROM entry_cards")
    profiles = _table(db, "SELECT p.service_id, p.statements, s.scan_id FROM service_profiles p JOIN services s "
                          "USING (service_id)")
    assert len(cards) == 28 and len(profiles) == 6
    checked = 0
    for owner, scan_id, stmts in [(c["card_id"], c["entry_ref"]["scan_id"], c["statements"]) for c in cards] + \
                                 [(p["service_id"], p["scan_id"], p["statements"]) for p in profiles]:
        for s in stmts:
            assert s["source_ref_ids"], (owner, s)
            for rid in s["source_ref_ids"]:
                got = fam.get((scan_id, rid))
                assert got is not None, f"{owner}: {rid} is no record of its package"
                assert got in ROLE_FAMILIES[s["role"]], (owner, s["role"], rid, got)
                assert got in TEMPLATES[s["template"]].cites
                checked += 1
    assert checked > 200
    # every card has its TRIGGER citing exactly its own entry
    for c in cards:
        trig = [s for s in c["statements"] if s["role"] == "TRIGGER"]
        assert [s["source_ref_ids"] for s in trig] == [[c["entry_ref"]["record_id"]]]
    # a profile states a responsibility and a boundary, or says why it cannot
    for p in _table(db, "SELECT service_id, statements, gaps FROM service_profiles"):
        for role, gap in (("RESPONSIBILITY", "NO_RESPONSIBILITY_EVIDENCE"), ("BOUNDARY", "NO_BOUNDARY_EVIDENCE")):
            assert any(s["role"] == role for s in p["statements"]) != any(g["code"] == gap for g in p["gaps"])


REACH_SQL = """
WITH RECURSIVE reach(m) AS (
    SELECT $handler
    UNION
    SELECT r.target_ref.record_id FROM relations r JOIN reach ON r.source_ref.record_id = reach.m
    WHERE r.scan_id = $scan AND r.kind = 'CALLS' AND r.resolution_status = 'RESOLVED'
      AND r.target_ref.record_id LIKE 'method:%'
), symbols AS (
    SELECT m FROM reach
    UNION
    SELECT r.target_ref.record_id FROM relations r JOIN reach ON r.source_ref.record_id = reach.m
    WHERE r.scan_id = $scan AND r.kind = 'BINDS_TO' AND r.target_ref.record_id LIKE 'stmt:%'
)
SELECT record_id FROM branch_ledger WHERE scan_id = $scan AND symbol_ref.record_id IN (SELECT m FROM symbols)
"""


def test_each_cards_ledger_is_exactly_its_entrys_ledger(graph):
    db, _ = graph
    cards = _table(db, "SELECT c.card_id, c.entry_ref, c.ledger_mapped, c.ledger_excluded, c.ledger_unknown, "
                       "c.statements, c.rule_ref_ids, e.handler_ref.record_id AS handler FROM entry_cards c JOIN "
                       "entities e ON e.scan_id = c.entry_ref.scan_id AND e.record_id = c.entry_ref.record_id")
    rules = {r["rule_id"]: r["document"] for r in _table(db, "SELECT rule_id, document FROM business_rules")}
    nonempty = 0
    for c in cards:
        scan = c["entry_ref"]["scan_id"]
        expected = {r[0] for r in query(db, REACH_SQL, {"handler": c["handler"], "scan": scan})[1]}
        mapped, unknown = set(c["ledger_mapped"]), set(c["ledger_unknown"])
        excluded = {i for items in c["ledger_excluded"].values() for i in items}
        assert not (mapped & unknown or mapped & excluded or unknown & excluded), c["card_id"]
        assert mapped | excluded | unknown == expected, c["card_id"]
        nonempty += bool(expected)
        # the mapped items are exactly the ones CONDITION and FAILURE statements cite
        cited = {rid for s in c["statements"] if s["role"] in ("CONDITION", "FAILURE") for rid in s["source_ref_ids"]}
        assert cited == mapped
        for rid in c["rule_ref_ids"]:
            rule = rules[rid]
            assert rule["derivation_kind"] == "STATIC_DERIVATION" and rule["review_status"] == "UNREVIEWED"
            assert rule["evidence_ids"][0] in mapped and rule["effects"]
            for field in ("schema_version", "rule_id", "revision_id", "subject", "scope", "predicate", "effects",
                          "exceptions", "evidence_ids", "freshness", "resolution_status", "config_dependencies",
                          "entity_refs"):
                assert field in rule
    assert nonempty >= 15


def test_flows_follow_only_resolved_hops_and_are_never_more_certain_than_the_weakest(graph):
    db, _ = graph
    flows = _table(db, "SELECT * FROM flows")
    steps = _table(db, "SELECT * FROM flow_steps")
    order = ["UNRESOLVED", "AMBIGUOUS", "RESOLVED"]
    by_flow: dict[str, list] = {}
    for s in steps:
        by_flow.setdefault(s["flow_id"], []).append(s)
    writes = {(r[0], r[1]) for r in query(db, "SELECT scan_id, record_id FROM relations WHERE kind = 'WRITES'")[1]}
    for f in flows:
        fs = by_flow[f["flow_id"]]
        assert f["step_count"] == len(fs)
        assert f["weakest_status"] == min([s["resolution_status"] for s in fs if s["parent_step_id"]] or ["RESOLVED"],
                                          key=order.index)
        parents = {s["parent_step_id"] for s in fs}
        for s in fs:
            if s["resolution_status"] != "RESOLVED" or s["terminal"] == "TRUNCATED" or s["is_back_edge"]:
                assert s["step_id"] not in parents  # shown, never followed (or not again)
            if s["terminal"] == "COMPLETED":
                assert s["completion_refs"] and all((s["scan_id"], w) in writes for w in s["completion_refs"])
    relay = next(f for f in flows if "OutboxRelayJob#relay" in f["flow_id"])
    services = [s["service_id"] for s in by_flow[relay["flow_id"]]]
    assert {"order-center", "fulfillment-center", "stock-center"} <= set(services)
    # the producer wrapper's own send (topic unknown in its body) is resolved at the relay's call site, so it is
    # no unknown of this flow
    assert relay["weakest_status"] == "RESOLVED"
    assert not any(s["resolution_status"] != "RESOLVED" for s in by_flow[relay["flow_id"]])
    # an RPC call nobody in the estate provides is shown, not followed, and makes its flow UNRESOLVED
    invoice = next(f for f in flows if "InvoiceRetryJob" in f["flow_id"])
    assert invoice["weakest_status"] == "UNRESOLVED"
    assert [s["terminal"] for s in by_flow[invoice["flow_id"]] if s["resolution_status"] == "UNRESOLVED"] == \
        ["UNRESOLVED"]
    assert not any(f["root_entry_ref"]["record_id"].startswith("entry:MAIN:") for f in flows)


def test_budgets_end_in_truncated_with_the_frontier(graph, monkeypatch):
    db, _ = graph
    monkeypatch.setattr(flows_mod, "MAX_HOPS", 1)
    p = with_graph(db, derive)
    relay = next(f for f in p.flows if "OutboxRelayJob#relay" in f["flow_id"])
    assert relay["truncated"] and relay["frontier"]
    assert any(s["terminal"] == "TRUNCATED" and s["flow_id"] == relay["flow_id"] for s in p.steps)
    assert all(s["hop"] <= 2 for s in p.steps if s["flow_id"] == relay["flow_id"])


def test_pages_are_deterministic_and_cite_what_the_tables_hold(graph, tmp_path):
    db, out = graph
    again = tmp_path / "again"
    build_pyramid(db, again)
    files = sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(again) for p in again.rglob("*") if p.is_file())
    assert all((out / f).read_bytes() == (again / f).read_bytes() for f in files)
    index = json.loads((out / "index.json").read_text())
    assert {r["service_id"] for r in index["services"]} == {"fulfillment-center", "fulfillment-worker", "order-center",
                                                           "payment-center", "promotion-center", "stock-center"}
    page = (out / "services" / "order-center.md").read_text()
    assert "```mermaid\nsequenceDiagram" in page and "## Entry cards (9)" in page
    doc = json.loads((out / "services" / "order-center.json").read_text())
    assert len(doc["entry_cards"]) == 9 and doc["profile"]["service_id"] == "order-center"


def test_templates_refuse_statements_without_sources_and_the_docs_list_them():
    with pytest.raises(TemplateError):
        statement("TRIGGER", [], entry_kind="x", urn="y", handler="z")
    with pytest.raises(TemplateError):
        statement("CONDITION", [("relation:CALLS|a|b|0", "relation:CALLS")], method="m", kind="if", condition="c",
                  outcome="o")
    assert templates_table() in (ROOT / "docs" / "pyramid.md").read_text(encoding="utf-8")


def test_cli_and_a_rebuilt_graph_drops_the_stale_pyramid(graph, tmp_path):
    db, _ = graph
    copy = tmp_path / "g.duckdb"
    shutil.copy(db, copy)
    r = run_cli("pyramid", "--db", str(copy), "--out", str(tmp_path / "p"))
    assert r.returncode == 0 and "28 entry card(s)" in r.stdout, r.stdout + r.stderr
    build(copy, [SAMPLES])  # nothing changes, but the build drops the derived tables
    assert query(copy, "SELECT count(*) FROM information_schema.tables WHERE table_name = 'entry_cards'")[1] == [(0,)]
    for args, msg in [(("--db", str(tmp_path / "none.duckdb")), "no such graph database"),
                      (("--db", str(copy), "--out", str(ROOT / "fixtures")), "other files than a pyramid output"),
                      (("--db", str(copy), "--out", str(tmp_path / "g.duckdb")), "not a directory")]:
        r = run_cli("pyramid", *args)
        assert r.returncode == 2 and msg in r.stderr and "Traceback" not in r.stderr, r.stderr


CALL_LINE = "        stockService.canShip(Long.parseLong(orderNo.substring(1)));\n"
PLANNER = "fulfillment/fulfillment-core/src/main/java/com/jd/trade/fulfillment/service/ShipmentPlanner.java"


def _snapshot(db: Path) -> tuple[set, dict]:
    stmts = set()
    for row in _table(db, "SELECT card_id, statements FROM entry_cards"):
        stmts |= {(row["card_id"], s["statement_id"], s["text"], tuple(s["source_ref_ids"])) for s in row["statements"]}
    for row in _table(db, "SELECT service_id, statements FROM service_profiles"):
        stmts |= {(row["service_id"], s["statement_id"], s["text"], tuple(s["source_ref_ids"]))
                  for s in row["statements"]}
    # a rescanned package has a new scan_id: compare steps by what they say, not by the package id
    steps = {s["step_id"]: {k: v for k, v in s.items() if k != "scan_id"}
             for s in _table(db, "SELECT * FROM flow_steps")}
    return stmts, steps


def test_deleting_one_call_line_changes_only_what_was_built_on_it(graph, estate, tmp_path):
    db, _ = graph
    before_stmts, before_steps = _snapshot(db)
    repo, sha = estate
    work = tmp_path / "work"
    subprocess.run(["git", "clone", "-q", str(repo), str(work)], check=True)
    planner = work / PLANNER
    text = planner.read_text(encoding="utf-8")
    assert CALL_LINE in text
    planner.write_text(text.replace(CALL_LINE, ""), encoding="utf-8")
    subprocess.run(["git", "-C", str(work), "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qam", "drop call"],
                   check=True)
    out = tmp_path / "ir"
    scan(work, "HEAD", ScanOptions(out=out, services=["fulfillment-center", "fulfillment-worker"],
                                   repo_id="fixtures/estate", quiet=True))
    mutated = tmp_path / "g.duckdb"
    shutil.copy(db, mutated)
    build(mutated, [out], replace=True)
    build_pyramid(mutated, None)
    after_stmts, after_steps = _snapshot(mutated)
    call = "relation:CALLS|com.jd.trade:fulfillment-core/com.jd.trade.fulfillment.service.ShipmentPlanner#plan(" \
           "java.lang.String)|com.jd.trade:fulfillment-core/com.jd.trade.fulfillment.service.StockService#canShip(long)|0"
    callee = "com.jd.trade.fulfillment.service.StockService#canShip(long)"
    # statements: nothing added or reworded; every removed one stands on what only the call reached
    assert after_stmts <= before_stmts
    removed = before_stmts - after_stmts
    assert removed, "the call's effects were on the cards"
    for card, _, text, sources in removed:
        assert card.startswith("card:fulfillment-"), card
        assert any(callee in src or src == call for src in sources), (card, text, sources)
    # flow steps: the ones reached through the call are gone; the step that made it lost its child and
    # may end differently now; nothing else changed
    gone = {k for k in before_steps if k not in after_steps}
    assert gone and all(callee in (before_steps[k]["via_ref"] or "") or "StockClient" in (before_steps[k]["via_ref"]
                                                                                         or "") for k in gone)
    assert not set(after_steps) - set(before_steps)
    parents = {before_steps[k]["parent_step_id"] for k in gone}
    for k, s in after_steps.items():
        if s != before_steps[k]:
            assert k in parents, (k, s, before_steps[k])


def _facts(service: str, scan: str, entries: dict[str, str], sends: dict[str, str]):
    """A package with MQ consumer entries (rid → topic urn) whose handler sends (handler rid → topic urn)."""
    from diting.pyramid.facts import PackageFacts
    ents, rels = {}, {}
    for erid, topic in entries.items():
        handler = f"method:{service}/H#{erid.split(':')[-1]}()"
        ents[erid] = {"record_id": erid, "kind": "ENTRY", "stable_id": erid[6:], "name": "", "urn": topic,
                      "entry_kind": "MQ_CONSUMER", "handler": handler, "role": None, "signature": [],
                      "attributes": {}}
        ents[handler] = {"record_id": handler, "kind": "METHOD", "stable_id": handler[7:], "name": "h", "urn": None,
                         "entry_kind": None, "handler": None, "role": None, "signature": [], "attributes": {}}
        if handler in sends:
            rid = f"relation:PUBLISHES|{handler}|{sends[handler]}"
            rels[rid] = {"record_id": rid, "kind": "PUBLISHES", "source": handler, "target": f"topic:{sends[handler]}",
                         "status": "RESOLVED", "candidates": [], "guard": None, "attributes": {}, "callsite": None,
                         "match_keys": {}}
    f = PackageFacts(scan, service, "0" * 40, f"sv:{service}:{'0' * 40}", ents, rels, {})
    for rid, r in rels.items():
        f.out.setdefault(r["source"], {}).setdefault(r["kind"], []).append(rid)
    return f


def test_a_cycle_between_services_is_kept_as_a_back_edge_and_expanded_once():
    from diting.pyramid.facts import reach
    from diting.pyramid.flows import EntryInfo, FlowBuilder
    a = _facts("svc-a", "scan:a", {"entry:a:onU": "mq://u"}, {"method:svc-a/H#onU()": "mq://t"})
    b = _facts("svc-b", "scan:b", {"entry:b:onT": "mq://t"}, {"method:svc-b/H#onT()": "mq://u"})
    infos = {}
    for f in (a, b):
        for rid, e in f.entities.items():
            if e["kind"] == "ENTRY":
                infos[(f.scan_id, rid)] = EntryInfo(f.scan_id, f.service_id, "", rid, e["stable_id"], e["urn"], {}, f,
                                                    reach(f, e["handler"]))

    def row(src_f, via, dst_f, dst):
        return {"edge_kind": "MQ", "urn": "", "src_service": src_f.service_id, "src_scan_id": src_f.scan_id,
                "src_ref": via, "src_node_ref": None, "dst_service": dst_f.service_id, "dst_scan_id": dst_f.scan_id,
                "dst_ref": dst, "resolution_status": "RESOLVED", "match_basis": "TOPIC"}
    rows = [row(a, next(iter(a.relations)), b, "entry:b:onT"), row(b, next(iter(b.relations)), a, "entry:a:onU")]
    flow, steps = FlowBuilder(infos, rows).flow(infos[("scan:a", "entry:a:onU")])
    assert [s["service_id"] for s in steps] == ["svc-a", "svc-b", "svc-a"]
    assert [s["is_back_edge"] for s in steps] == [False, False, True]
    assert steps[2]["node_ref"] == "entry:a:onU" and not flow["truncated"]
    assert flow["weakest_status"] == "RESOLVED" and flow["hop_count"] == 2
    # a fan-out far beyond the step budget ends TRUNCATED, the frontier listed
    many = {f"entry:c:on{i}": "mq://t" for i in range(3000)}
    c = _facts("svc-c", "scan:c", many, {})
    infos_c = dict(infos)
    for rid, e in c.entities.items():
        if e["kind"] == "ENTRY":
            infos_c[("scan:c", rid)] = EntryInfo("scan:c", "svc-c", "", rid, e["stable_id"], e["urn"], {}, c,
                                                 reach(c, e["handler"]))
    fan = [row(a, next(iter(a.relations)), c, rid) for rid in many]
    flow, steps = FlowBuilder(infos_c, fan).flow(infos_c[("scan:a", "entry:a:onU")])
    assert flow["truncated"] and len(steps) == flows_mod.MAX_STEPS
    # every entry not expanded is on the frontier: the 1,001 not shown and the 1,999 shown but still queued,
    # which end TRUNCATED
    assert len(flow["frontier"]) == 3000
    assert sum(1 for s in steps if s["terminal"] == "TRUNCATED") == flows_mod.MAX_STEPS - 1


def test_out_is_replaced_only_when_it_holds_a_former_output_alone(graph, tmp_path):
    db, _ = graph
    copy = tmp_path / "g.duckdb"
    shutil.copy(db, copy)
    out = tmp_path / "P"
    build_pyramid(copy, out)
    (out / "notes.txt").write_text("mine")
    r = run_cli("pyramid", "--db", str(copy), "--out", str(out))
    assert r.returncode == 2 and "other files than a pyramid output" in r.stderr and (out / "notes.txt").exists()
    (out / "notes.txt").unlink()
    inside = out / "mine.duckdb"
    shutil.copy(copy, inside)
    r = run_cli("pyramid", "--db", str(inside), "--out", str(out))
    assert r.returncode == 2 and inside.exists(), r.stderr
    inside.unlink()
    # a path through '..' names the same directory
    r = run_cli("pyramid", "--db", str(copy), "--out", str(out / ".." / "P"))
    assert r.returncode == 0 and (out / "index.md").is_file(), r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["P", "g.duckdb"]  # nothing left beside it


def test_a_failure_while_writing_pages_leaves_database_and_out_unchanged(graph, tmp_path, monkeypatch):
    from diting.pyramid import pages
    db, _ = graph
    copy = tmp_path / "g.duckdb"
    shutil.copy(db, copy)
    build(copy, [SAMPLES])  # drops the pyramid tables
    out = tmp_path / "P"

    def boom(p, d):
        (d / "index.md").write_text("half")
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(pages, "write_pages", boom)
    with pytest.raises(Exception, match="No space left"):
        build_pyramid(copy, out)
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["g.duckdb"]
    assert query(copy, "SELECT count(*) FROM information_schema.tables WHERE table_name = 'entry_cards'")[1] == [(0,)]


def test_two_profile_sets_of_one_service_keep_apart(graph, estate, tmp_path):
    db, _ = graph
    repo, sha = estate
    copy = tmp_path / "g.duckdb"
    shutil.copy(db, copy)
    out = tmp_path / "ir"
    scan(repo, sha, ScanOptions(out=out, services=["order-center"], profiles=["prod"], repo_id="fixtures/estate",
                                quiet=True))
    build(copy, [out])
    p = build_pyramid(copy, tmp_path / "pages")
    for items, key in ((p.cards, "card_id"), (p.rules, "rule_id"), (p.flows, "flow_id"), (p.steps, "step_id")):
        ids = [x[key] for x in items]
        assert len(ids) == len(set(ids)), key
    pages_ = sorted(x.name for x in (tmp_path / "pages" / "services").glob("order-center*.md"))
    assert len(pages_) == 2, pages_


def test_a_branch_calling_a_helper_that_always_throws_rejects_under_its_condition(tmp_path):
    from conftest import BOOT_PLUGIN, pom
    from tests.stagekit import scan_memory
    files = {
        "pom.xml": pom("shop-app", parent=None, body=BOOT_PLUGIN),
        "src/main/java/com/example/App.java": "package com.example;\n"
        "@org.springframework.boot.autoconfigure.SpringBootApplication\n"
        "public class App { public static void main(String[] a) { } }\n",
        "src/main/java/com/example/Asserts.java": "package com.example;\n"
        "public class Asserts { public static void fail(String m) { throw new IllegalStateException(m); } }\n",
        "src/main/java/com/example/LoginController.java": "package com.example;\n"
        "@org.springframework.web.bind.annotation.RestController\n"
        "public class LoginController {\n"
        "  @org.springframework.web.bind.annotation.PostMapping(\"/login\")\n"
        "  public String login(String user) {\n"
        "    if (user == null) {\n"
        "      Asserts.fail(\"no user\");\n"
        "    }\n"
        "    return user;\n"
        "  }\n"
        "}\n",
    }
    scan_memory(files, tmp_path / "ir", repo_id="t/shop", quiet=True)
    db = tmp_path / "g.duckdb"
    build(db, [tmp_path / "ir"])
    p = build_pyramid(db, None)
    card = next(c for c in p.cards if c["urn"].endswith("/login#POST"))
    cond = [s["text"] for s in card["statements"] if s["role"] == "CONDITION" and "user == null" in s["text"]]
    assert cond and "rejects (calls Asserts#fail(String), which always throws)" in cond[0]
    rule = next(r for r in p.rules if "user == null" in (r["predicate"]["text"] or ""))
    assert rule["effects"][0]["kind"] == "REJECT"
    flow = next(f for f in p.flows if f["flow_id"].endswith("LoginController#login(java.lang.String)"))
    rejected = [s for s in p.steps if s["flow_id"] == flow["flow_id"] and s["terminal"] == "REJECTED"]
    # one rejection, at the call, under the if — not the helper's own unguarded throw
    assert len(rejected) == 1 and rejected[0]["guard_refs"] and rejected[0]["via_ref"].startswith("relation:")
    assert "Asserts" in rejected[0]["reason"]


def test_data_stores_no_probe_models_are_gaps_not_silence():
    from diting.pyramid.facts import PackageFacts
    from diting.pyramid.profiles import _unmodelled_stores

    def rel(rid, kind, src, dst, status="RESOLVED", site=None, mk=None):
        return {"record_id": rid, "kind": kind, "source": src, "target": dst, "status": status, "candidates": [],
                "guard": None, "attributes": {}, "callsite": site, "match_keys": mk or {}}
    rels = {r["record_id"]: r for r in [
        rel("r1", "CALLS", "method:a", "ext:org.springframework.data.mongodb.repository.MongoRepository#save(?)",
            site="a@0"),
        rel("r2", "CALLS", "method:a", "ext:org.springframework.data.redis.core.ValueOperations#get(?)", site="a@1"),
        rel("r3", "READS", "method:a", "cache:redis://x:", site="a@1"),  # a probe modelled this one
        rel("r4", "CALLS", "method:b", "ext:org.springframework.data.mongodb.repository.MongoRepository#save(?)",
            site="b@0"),  # not reached
        rel("r5", "WRITES", "method:a", None, "UNRESOLVED", "a@2", {"protocol": "redis", "key_expression": "key"})]}
    f = PackageFacts("s", "svc", "0" * 40, "sv:svc:" + "0" * 40, {}, rels, {})
    gaps = {g["code"] + ":" + g["target"]: g["reason"] for g in _unmodelled_stores(f, {"method:a"})}
    assert set(gaps) == {"DATA_STORE_NOT_MODELLED:MongoDB", "CACHE_KEY_UNRESOLVED:s"}
    assert gaps["DATA_STORE_NOT_MODELLED:MongoDB"].startswith("1 call(s)")



def test_profiles_state_inbound_boundaries_from_the_alignment():
    """stock provides reserve, which four services call; ledger writes stock_level, which report reads on
    the same datasource and legacy writes on an unknown one."""
    from diting.pyramid.facts import PackageFacts
    from diting.pyramid.profiles import alignment_rows, data_rows, service_profile

    from .test_align import Estate
    e = Estate()
    stock = e.package("stock")
    e.rpc(stock, "PROVIDED", "jsf://Stock#reserve", ["long"])
    for name in ("order", "cart", "shop", "audit"):
        e.rpc(e.package(name), "CONSUMED", "jsf://Stock#reserve", ["long"])
    ledger, report, legacy = e.package("ledger"), e.package("report"), e.package("legacy")
    e.table(ledger, "table://stock_level", "inv", "WRITE")
    e.table(report, "table://stock_level", "inv", "READ")
    e.table(legacy, "table://stock_level", None, "WRITE")
    lone = e.package("lone")
    e.align()

    def profile(scan: str) -> dict:
        return service_profile(e.con, PackageFacts.load(e.con, scan), "", [], data_rows(e.con), alignment_rows(e.con))

    def said(p: dict, template: str) -> list[str]:
        return [s["text"] for s in p["statements"] if s["template"] == template]

    p = profile(stock)
    # on its own it calls, publishes and shares nothing: its boundary is who calls it
    assert said(p, "BOUNDARY_CALLED_BY") == ["stock is called on jsf://Stock#reserve(long) by audit, cart, order, shop."]
    assert not any(g["code"] == "NO_BOUNDARY_EVIDENCE" for g in p["gaps"])
    assert {(b["direction"], b["edge_kind"], b["service_id"], b["resolution_status"]) for b in p["boundaries"]} == \
        {("INBOUND", "RPC", s, "RESOLVED") for s in ("audit", "cart", "order", "shop")}
    p = profile(ledger)
    assert said(p, "BOUNDARY_SHARED_TABLE") == [
        "ledger writes table://stock_level; legacy (AMBIGUOUS) writes it, report reads it."]
    # another service may write it too: ledger is not said to be its only writer
    assert p["sole_writer_of"] == [] and not said(p, "RESPONSIBILITY_SOLE_WRITER")
    assert [(b["direction"], b["service_id"], b["resolution_status"]) for b in p["boundaries"]] == [
        ("INBOUND", "legacy", "AMBIGUOUS"), ("INBOUND", "report", "RESOLVED"), ("OUTBOUND", "legacy", "AMBIGUOUS")]
    assert said(profile(report), "BOUNDARY_SHARED_TABLE") == [
        "report reads table://stock_level; ledger writes it, legacy (AMBIGUOUS) writes it."]
    # a service nothing crosses to or from says so
    assert any(g["code"] == "NO_BOUNDARY_EVIDENCE" for g in profile(lone)["gaps"])


def test_out_keeps_user_files_under_services_and_a_database_reached_through_a_link(graph, tmp_path):
    db, _ = graph
    out = tmp_path / "out"
    copy = tmp_path / "g.duckdb"
    shutil.copy(db, copy)
    build_pyramid(copy, out)
    (out / "services" / "notes.txt").write_text("mine")
    r = run_cli("pyramid", "--db", str(copy), "--out", str(out))
    assert r.returncode == 2 and "services/notes.txt" in r.stderr and (out / "services" / "notes.txt").exists()
    (out / "services" / "notes.txt").unlink()
    inside = out / "services" / "g.duckdb"
    shutil.copy(copy, inside)
    link = tmp_path / "link.duckdb"
    link.symlink_to(inside)
    r = run_cli("pyramid", "--db", str(link), "--out", str(out))
    assert r.returncode == 2 and inside.exists(), r.stderr


def test_a_failure_at_commit_puts_the_former_output_back(graph, tmp_path, monkeypatch):
    from diting.pyramid import build as build_mod
    db, _ = graph
    copy = tmp_path / "g.duckdb"
    shutil.copy(db, copy)
    out = tmp_path / "out"
    build_pyramid(copy, out)
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    (out / "index.md").write_text("former")  # mark the former output
    real = build_mod._swap

    def swap_then_fail(tmp, o, aside):
        real(tmp, o, aside)
        raise KeyboardInterrupt  # as a Ctrl-C between the swap and the commit would
    monkeypatch.setattr(build_mod, "_swap", swap_then_fail)
    with pytest.raises(KeyboardInterrupt):
        build_pyramid(copy, out)
    assert (out / "index.md").read_text() == "former" and len(before) == sum(1 for p in out.rglob("*") if p.is_file())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.duckdb", "out"]


def _shop_pyramid(tmp_path: Path, classes: dict[str, str], files: dict[str, str] | None = None):
    """The pyramid of a one-service repository whose ``com.example`` classes are ``classes`` (name → body
    lines after the package line), with other ``files`` of the repository."""
    from conftest import BOOT_PLUGIN, pom
    from tests.stagekit import scan_memory
    tree = {"pom.xml": pom("shop-app", parent=None, body=BOOT_PLUGIN),
            "src/main/java/com/example/App.java": "package com.example;\n"
            "@org.springframework.boot.autoconfigure.SpringBootApplication\n"
            "public class App { public static void main(String[] a) { } }\n", **(files or {})}
    for name, body in classes.items():
        tree[f"src/main/java/com/example/{name}.java"] = "package com.example;\n" + body
    scan_memory(tree, tmp_path / "ir", repo_id="t/shop", quiet=True)
    db = tmp_path / "g.duckdb"
    build(db, [tmp_path / "ir"])
    return build_pyramid(db, None)


LOCKER = (
    "@org.springframework.web.bind.annotation.RestController\n"               # line 2
    "public class LockerController {\n"
    "  @org.springframework.web.bind.annotation.PostMapping(\"/open\")\n"
    "  public String open(int code, java.util.List<String> doors, boolean audit) {\n"   # line 5
    "    for (String d : doors) { System.out.println(d); }\n"                   # line 6
    "    for (String d : doors) { System.out.println(d + 1); }\n"               # line 7
    "    for (String d : doors) { System.out.println(d + 2); }\n"               # line 8
    "    if (audit) { System.out.println(\"a\"); }\n"                           # line 9
    "    if (audit) { System.out.println(\"b\"); }\n"                           # line 10
    "    cabinet.unlock(code);\n"                                               # line 11
    "    if (code == 200) {\n"                                                  # line 12
    "      return \"open\";\n"
    "    } else {\n"
    "      throw new IllegalStateException(\"jammed\");\n"                      # line 15
    "    }\n"
    "  }\n"
    "}\n")


def test_conditions_are_worded_per_arm_and_loops_repeats_and_unknown_calls_carry_their_line(tmp_path):
    """The else arm that rejects is named as the else ("when not"), never as the if; three alike loops and
    two alike conditions read apart by their lines; an unresolved call is named by its text and line."""
    p = _shop_pyramid(tmp_path, {"LockerController": LOCKER})
    card = next(c for c in p.cards if c["urn"].endswith("/open#POST"))
    texts = [s["text"] for s in card["statements"]]
    conds = [t for t in texts if t.startswith("In LockerController#open(")]
    assert "In LockerController#open(int,List,boolean), when not `code == 200`: rejects (throws)." in conds
    assert "In LockerController#open(int,List,boolean), when `code == 200`: returns." in conds
    assert not [t for t in conds if "if (code == 200)" in t]  # no arm is worded as the guard's head
    failure = next(t for t in texts if t.startswith("LockerController#open(int,List,boolean) throws"))
    assert failure.endswith("throws `throw new IllegalStateException(\"jammed\");` when not 'code == 200'.")
    loops = [t for t in conds if "in each pass of `for (String d : doors)`" in t]
    assert [t.split("`")[2] for t in loops] == [" (line 6): continues.", " (line 7): continues.",
                                                " (line 8): continues."]
    audits = sorted(t for t in conds if "when `audit`" in t)
    assert audits == ["In LockerController#open(int,List,boolean), when `audit` (line 10): continues.",
                      "In LockerController#open(int,List,boolean), when `audit` (line 9): continues."]
    assert len(set(texts)) == len(texts)
    # the rule of the else arm says it holds when its guard does not
    rule = next(r for r in p.rules if r["subject"]["branch_kind"] == "ELSE")
    assert rule["predicate"]["text"] == "code == 200" and rule["predicate"]["negated"] is True
    unknown = [u for u in card["unresolved"] if u["code"] == "UNRESOLVED_CALL"]
    assert [p.names[u["target"]] for u in unknown] == [
        "LockerController#open(int,List,boolean) calls cabinet.unlock(…) at line 11"]
    assert "receiver type unknown" in unknown[0]["reason"]
    flow = next(f for f in p.flows if f["flow_id"].endswith("LockerController#open(int,java.util.List,boolean)"))
    assert "rejected when not code == 200 - throw new IllegalStateException(" in flow["mermaid"]


DEPOT = {
    "DepotExample": (
        "import java.util.ArrayList;\nimport java.util.List;\n"
        "public class DepotExample {\n"
        "  protected List<Criteria> oredCriteria = new ArrayList<>();\n"
        "  public Criteria createCriteria() {\n"
        "    Criteria c = new Criteria();\n"
        "    if (oredCriteria.size() == 0) { oredCriteria.add(c); }\n"
        "    return c;\n"
        "  }\n"
        "  protected abstract static class GeneratedCriteria {\n"
        "    protected List<Criterion> criteria = new ArrayList<>();\n"
        "    protected void addCriterion(String condition, Object value, String property) {\n"
        "      if (value == null) { throw new RuntimeException(\"Value for \" + property + \" cannot be null\"); }\n"
        "      criteria.add(new Criterion());\n"
        "    }\n"
        "    public Criteria andCityEqualTo(String value) { addCriterion(\"city =\", value, \"city\"); return (Criteria) this; }\n"
        "  }\n"
        "  public static class Criteria extends GeneratedCriteria { }\n"
        "  public static class Criterion { }\n"
        "}\n"),
    "DepotMapper": (
        "@org.apache.ibatis.annotations.Mapper\n"
        "public interface DepotMapper {\n"
        "  java.util.List<String> countByExample(DepotExample example);\n"
        "  java.util.List<String> find(String city);\n"
        "}\n"),
    "DepotController": (
        "@org.springframework.web.bind.annotation.RestController\n"
        "public class DepotController {\n"
        "  private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(DepotController.class);\n"
        "  @org.springframework.beans.factory.annotation.Autowired private DepotMapper depotMapper;\n"
        "  @org.springframework.web.bind.annotation.GetMapping(\"/depots\")\n"
        "  public java.util.List<String> list(String city, Integer limit) {\n"
        "    if (limit == null) { throw new IllegalArgumentException(\"limit\"); }\n"
        "    if (log.isDebugEnabled()) { log.debug(\"city {}\", city); }\n"
        "    DepotExample example = new DepotExample();\n"
        "    if (city != null) { example.createCriteria().andCityEqualTo(city); }\n"
        "    if (limit > 100) { throw new IllegalStateException(\"too many\"); }\n"
        "    depotMapper.countByExample(example);\n"
        "    return depotMapper.find(city);\n"
        "  }\n"
        "}\n"),
}
DEPOT_XML = ('<?xml version="1.0" encoding="UTF-8"?>\n<mapper namespace="com.example.DepotMapper">\n'
             '  <select id="countByExample" resultType="string">select <if test="distinct">distinct</if> city from t_depot\n'
             '    <where><if test="criteria.valid">and ${criteria.sql}</if></where></select>\n'
             '  <select id="find" resultType="string">select city from t_depot\n'
             '    <where><if test="city != null and city != \'\'">and city = #{city}</if>\n'
             '    <if test="city == \'NORTH\'">and zone = 1</if></where></select>\n'
             '</mapper>\n')


def test_noise_the_ledger_rules_exclude_is_off_the_cards_and_the_flows(tmp_path):
    """A parameter check that only throws an argument error, a logging guard, a criteria null guard, the
    Example class's own branches and MyBatis null guards are excluded by their rules: on the card's
    ledger_excluded by rule id, in no CONDITION or FAILURE, no business rule and no REJECTED step; the
    code's own decisions stay."""
    p = _shop_pyramid(tmp_path, DEPOT, {"src/main/resources/mapper/DepotMapper.xml": DEPOT_XML})
    card = next(c for c in p.cards if c["urn"].endswith("/depots#GET"))
    assert set(card["ledger_excluded"]) == {
        "ledger.argument-null-check", "ledger.logging-guard", "ledger.mybatis-generator-criteria-guard",
        "ledger.mybatis-generator-example-class", "ledger.mybatis-generator-example-sql",
        "ledger.mybatis-generator-criteria-sql", "ledger.mybatis-null-guard"}
    texts = [s["text"] for s in card["statements"] if s["role"] in ("CONDITION", "FAILURE")]
    assert not [t for t in texts if "cannot be null" in t or "limit == null" in t or "isDebugEnabled" in t
                or "city != null" in t or "oredCriteria" in t or "distinct" in t or "criteria.valid" in t]
    assert any("when `limit > 100`: rejects (throws)" in t for t in texts)
    assert any("when SQL test `city == 'NORTH'`" in t for t in texts)
    kept = sorted(r["predicate"]["text"] for r in p.rules if r["rule_id"] in card["rule_ref_ids"])
    assert kept == ["city == 'NORTH'", "limit > 100", "throw new IllegalStateException(\"too many\");"]
    flow = next(f for f in p.flows if f["flow_id"].endswith("DepotController#list(java.lang.String,java.lang.Integer)"))
    rejected = [s["reason"] for s in p.steps if s["flow_id"] == flow["flow_id"] and s["terminal"] == "REJECTED"]
    assert rejected == ['throw new IllegalStateException("too many");']
    assert card["complete"], card["unresolved"]  # the generated criteria SQL's ${} is excluded, not unknown



def test_an_arm_that_returns_inside_before_it_fails_is_not_said_to_reject(tmp_path):
    """`if (saved > 0) { if (linesSaved > 0) return no; Fail.now(); }` — the arm ends in a call that
    always throws, but an inner branch returns first: it rejects only unless that inner branch
    leaves, and says so; an arm whose last call always throws and holds no return rejects."""
    till = (
        "public class Till {\n"
        "  static void fail(String m) { throw new IllegalStateException(m); }\n"
        "  @org.springframework.web.bind.annotation.PostMapping(\"/save\")\n"
        "  public String save(int saved, int lines) {\n"
        "    if (saved > 0) {\n"
        "      if (lines > 0) { return \"no-1\"; }\n"
        "      fail(\"lines\");\n"
        "    }\n"
        "    if (saved < 0) { fail(\"negative\"); }\n"
        "    fail(\"db\");\n"
        "    return \"x\";\n"
        "  }\n"
        "}\n")
    p = _shop_pyramid(tmp_path, {"Till": "@org.springframework.web.bind.annotation.RestController\n" + till})
    card = next(c for c in p.cards if c["urn"].endswith("/save#POST"))
    texts = [s["text"] for s in card["statements"] if s["text"].startswith("In Till#save(")]
    assert any("when `saved > 0`: rejects unless an inner branch returns first (calls Till#fail(String)" in t
               for t in texts), texts
    assert any("when `saved < 0`: rejects (calls Till#fail(String)" in t for t in texts), texts
