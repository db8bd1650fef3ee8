"""diff/: two commits of the fixture estate whose changes are the ones issue 8 mandates
(tests/estate_changes.py), each found in the class it belongs to; commit relations; the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from diting.cli.main import app
from diting.demo import build_fixture_repo
from diting.diff.report import diff
from diting.scan.pipeline import ScanOptions, scan

from . import estate_changes

SERVICES = ["stock-center", "order-center", "payment-center", "fulfillment-center"]


@pytest.fixture(scope="module")
def two_commits(tmp_path_factory):
    """(repo, {service: (old package, new package)})."""
    root = tmp_path_factory.mktemp("diff")
    repo = root / "repo"
    build_fixture_repo(repo)
    estate_changes.apply(repo)
    estate_changes.commit(repo)
    out = {}
    for rev, name in (("HEAD~1", "old"), ("HEAD", "new")):
        scan(repo, rev, ScanOptions(out=root / name, services=SERVICES, repo_id="fixtures/estate", quiet=True))
    for s in SERVICES:
        out[s] = (next((root / "old").glob(f"{s}@*")), next((root / "new").glob(f"{s}@*")))
    return repo, out


def _rows(doc: dict, cls: str) -> list[dict]:
    return [c for c in doc["changes"] if c["class"] == cls]


def test_a_moved_method_an_overload_and_a_renamed_class(two_commits):
    repo, pkgs = two_commits
    doc = diff(*pkgs["stock-center"], repo=repo)
    assert doc["commit_relation"] == "ANCESTOR"
    moved = "com.jd.trade:stock-service/com.jd.trade.stock.provider.StockReserveServiceImpl#release(java.lang.String)"
    assert moved in {c["stable_id"] for c in _rows(doc, "EVIDENCE_MOVED")}
    assert "PROVIDED:jsf://com.jd.trade.stock.api.StockReserveService#release(java.lang.String,java.lang.String)" in \
        {c["stable_id"] for c in _rows(doc, "CONTRACT_ADDED")}
    assert {"kind": "TYPE", "before": "com.jd.trade:stock-service/com.jd.trade.stock.cache.ReserveGuard",
            "after": "com.jd.trade:stock-service/com.jd.trade.stock.cache.ReserveLedger",
            "basis": "3 of 3 member signatures shared"} in doc["rename_candidates"]
    # the moved method's revision is unchanged: it is not reported as edited anywhere
    assert all(c["stable_id"] != moved for c in doc["changes"] if c["class"] != "EVIDENCE_MOVED")


def test_a_removed_consumer_call_and_a_topic_renamed_through_a_constant(two_commits):
    repo, pkgs = two_commits
    doc = diff(*pkgs["order-center"], repo=repo)
    assert "CONSUMED:jsf://com.jd.trade.stock.api.StockReserveService#release(java.lang.String)" in \
        {c["stable_id"] for c in _rows(doc, "CONSUMER_REMOVED")}
    pub = [c for c in _rows(doc, "TOPIC_PUBLISH_CHANGED") if c["stable_id"].startswith("PUBLISHES|")]
    assert [(c["before"]["target_ref"], c["after"]["target_ref"]) for c in pub] == \
        [("jmq://trade_order_created", "jmq://trade_order_placed")]


def test_a_config_value_changed_without_code(two_commits):
    repo, pkgs = two_commits
    doc = diff(*pkgs["payment-center"], repo=repo)
    cfg = _rows(doc, "CONFIG_CHANGED")
    assert [(c["before"]["value"], c["after"]["value"]) for c in cfg] == [("unionpay", "alipay")]
    assert not any("payment-service/" in c["stable_id"] for c in doc["changes"] if c["class"] != "CONFIG_CHANGED")
    assert "config_files" in doc["input_differences"]


def test_a_resolution_status_changed_at_one_call_site(two_commits):
    repo, pkgs = two_commits
    doc = diff(*pkgs["fulfillment-center"], repo=repo)
    rows = _rows(doc, "RESOLUTION_STATUS_CHANGED")
    assert [(r["before"]["resolution_status"], r["after"]["resolution_status"], r["after"]["callsite_id"])
            for r in rows] == [("RESOLVED", "UNRESOLVED",
                                "com.jd.trade:fulfillment-core/com.jd.trade.fulfillment.service.StockService#canShip(long)@0")]


def test_commit_relations_and_the_cli(two_commits, tmp_path):
    repo, pkgs = two_commits
    old, new = pkgs["stock-center"]
    assert diff(new, old, repo=repo)["commit_relation"] == "AHEAD"
    same = diff(old, old, repo=repo)
    assert same["commit_relation"] == "EXACT" and same["changes"] == []
    runner = CliRunner()
    r = runner.invoke(app, ["diff", str(old), str(old)])
    assert r.exit_code == 0
    r = runner.invoke(app, ["diff", str(old), str(new), "--repo", str(repo), "--format", "json"])
    assert r.exit_code == 1 and json.loads(r.output)["summary"]["CONTRACT_ADDED"] == 1  # the EXPOSES folded in
    r = runner.invoke(app, ["diff", str(old), str(new), "--format", "md"])
    assert r.exit_code == 1 and r.output.startswith("### diting diff — `stock-center`")
    assert "**CONTRACT_ADDED** (1)" in r.output and "(commits: **UNKNOWN (--repo relates them)**)" in r.output
    for args in ([str(old), str(pkgs["order-center"][1])], [str(old), str(tmp_path)], [str(old), str(new), "--repo",
                                                                                        str(tmp_path)]):
        r = runner.invoke(app, ["diff", *args])
        assert r.exit_code == 2 and "Traceback" not in r.output, args


def test_the_json_follows_the_shipped_schema(two_commits):
    import jsonschema
    from diting.ir.schema_export import SHIPPED_DIR
    schema = json.loads((SHIPPED_DIR / "diff-report.schema.json").read_text(encoding="utf-8"))
    repo, pkgs = two_commits
    for s in SERVICES:
        jsonschema.validate(json.loads(json.dumps(diff(*pkgs[s], repo=repo))), schema)


def test_with_a_graph_the_diff_names_the_services_that_depend_on_a_change(tmp_path):
    from diting.diff.report import consumer_impact
    from diting.graph.store import build, with_graph
    db = tmp_path / "g.duckdb"
    build(db, [Path(__file__).resolve().parents[1] / "ir_samples" / "estate"])
    removed = {"class": "CONTRACT_REMOVED", "stable_id": "PROVIDED:jsf://com.jd.trade.stock.api.StockReserveService"
               "#release(java.lang.String)", "before": {"kind": "CONTRACT", "urn":
               "jsf://com.jd.trade.stock.api.StockReserveService#release"}, "after": None}
    sent = {"class": "TOPIC_PUBLISH_CHANGED", "stable_id": "PUBLISHES|x", "after": None,
            "before": {"kind": "PUBLISHES", "target_ref": "jmq://trade_order_status"}}
    got = with_graph(db, lambda con: consumer_impact(con, "stock-center", [removed]) +
                     consumer_impact(con, "order-center", [sent]))
    assert [(g["urn"], g["services"], g["edges"]) for g in got] == [
        ("jsf://com.jd.trade.stock.api.StockReserveService#release", ["order-center"], 1),
        ("jmq://trade_order_status", ["fulfillment-center"], 4)]


def test_a_commit_range_scans_once_and_reuses(two_commits, tmp_path):
    from diting.diff.commits import diff_range
    repo, _ = two_commits
    doc = diff_range(repo, "HEAD~1..HEAD", tmp_path / "work", repo_id="fixtures/estate")
    assert doc["reused"] == [] and not doc["only_old"] and not doc["only_new"]
    by = {r["service_id"]: r for r in doc["services"]}
    assert by["payment-center"]["summary"] == {"CONFIG_CHANGED": 1, "OTHER": 1}  # the value, and TradeConstants
    assert by["promotion-center"]["changes"] and all(c["class"] in ("OTHER", "EVIDENCE_MOVED")
                                                     for c in by["promotion-center"]["changes"])
    again = diff_range(repo, "HEAD~1..HEAD", tmp_path / "work", repo_id="fixtures/estate")
    assert sorted(again["reused"]) == sorted([doc["old_commit"], doc["new_commit"]])
    assert again["services"] == doc["services"]
    r = CliRunner().invoke(app, ["diff", "HEAD~1..HEAD", "--repo", str(repo), "--work", str(tmp_path / "work"),
                                 "--repo-id", "fixtures/estate", "--format", "md"])
    assert r.exit_code == 1 and "### diting diff — `stock-center`" in r.output
    assert "### diting diff — `promotion-center`" not in r.output  # only OTHER and EVIDENCE_MOVED there
    assert r.output.strip().splitlines()[-1].startswith("Not listed: ")
    r = CliRunner().invoke(app, ["diff", "HEAD~1..HEAD", "--repo", str(repo), "--work", str(tmp_path / "work"),
                                 "--repo-id", "fixtures/estate", "--format", "json", "--service", "payment-center"])
    got = json.loads(r.output)
    assert r.exit_code == 1 and [s["service_id"] for s in got["services"]] == ["payment-center"]
    assert "stock-center" in got["omitted_services"]
    r = CliRunner().invoke(app, ["diff", "HEAD~1..HEAD", "--repo", str(repo), "--work", str(tmp_path / "work"),
                                 "--repo-id", "fixtures/estate", "--service", "payment-centre"])
    assert r.exit_code == 2 and "did you mean payment-center" in r.output
    # without --repo-id, a repository with no origin gets its directory's name, and the range says so
    r = CliRunner().invoke(app, ["diff", "HEAD~1..HEAD", "--repo", str(repo), "--work", str(tmp_path / "w-noid"),
                                 "--service", "payment-center"])
    assert r.exit_code == 1 and f"note: repo id '{repo.name}' is the directory name" in r.output
    for args in (["HEAD~1", "--repo", str(repo)], ["nope..HEAD", "--repo", str(repo)], ["a..b"]):
        r = CliRunner().invoke(app, ["diff", *args, "--work", str(tmp_path / "w2")])
        assert r.exit_code == 2 and "Traceback" not in r.output, args
    # --work is a folder the range diff owns: one holding anything else is refused, and left as it was
    foreign = tmp_path / "someones"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine\n")
    r = CliRunner().invoke(app, ["diff", "HEAD~1..HEAD", "--repo", str(repo), "--work", str(foreign),
                                 "--repo-id", "fixtures/estate"])
    assert r.exit_code == 2 and "no scan of a range diff" in r.output
    assert sorted(p.name for p in foreign.iterdir()) == ["notes.txt"]


def test_the_json_equals_the_checked_in_report(two_commits):
    """ir_samples/estate-diff/diff.json (kept current by fixtures/refresh_ir_samples.py, reviewed by
    hand when it changes) is exactly what the diff of the mandated changes gives."""
    repo, pkgs = two_commits
    expected = json.loads((Path(__file__).resolve().parents[1] / "ir_samples" / "estate-diff" / "diff.json")
                          .read_text(encoding="utf-8"))
    got = json.loads(json.dumps({s: diff(*pkgs[s], repo=repo) for s in SERVICES}))
    assert got == expected


def test_markdown_escapes_what_the_scanned_code_names():
    from diting.diff.report import to_markdown
    evil = "t1\n| FAKE | row |\n# Heading\n</details><img src=x onerror=alert(1)>`x`\x1b[2J\u202egnp.exe"
    side = {"scan_id": "s", "commit_sha": "0" * 40, "input_digest": "0" * 64}
    doc = {"service_id": evil, "old": side, "new": side, "commit_relation": "EXACT", "merge_bases": [],
           "input_differences": [], "summary": {"TOPIC_PUBLISH_CHANGED": 1}, "folded_summary": {}, "omitted": {},
           "changes": [{"class": "TOPIC_PUBLISH_CHANGED", "stable_id": evil, "before": {"urn": evil},
                        "after": None}],
           "rename_candidates": [{"kind": "TYPE", "before": evil, "after": evil, "basis": evil}],
           "impact": [{"stable_id": evil, "urn": evil, "change": "TOPIC_PUBLISH_CHANGED", "services": [evil],
                       "edges": 1}] * 3}
    md = to_markdown(doc)
    assert "\x1b" not in md and "\u202e" not in md
    assert "\n# Heading" not in md and "\n| FAKE" not in md
    # outside code spans (literal in Markdown) no markup from the code survives; spans never break
    import re
    for line in md.splitlines():
        assert line.count("`") % 2 == 0, line
        prose = re.sub(r"`[^`]*`", "", line)
        assert "<img" not in prose and "</details><" not in prose, line
    assert md.count("depend") == 1 and md.count("- TOPIC_PUBLISH_CHANGED") == 1  # impact lines merged per urn


def test_a_range_pairs_services_by_their_manifests(tmp_path):
    from diting.diff.commits import _by_service
    for d, sid in (("pay_center@abc", "pay/center"), ("pay_center@abc~1234abcd", "pay_center")):
        (tmp_path / d).mkdir()
        (tmp_path / d / "manifest.json").write_text(json.dumps({"service_id": sid}))
        (tmp_path / d / "analysis_input.json").write_text(json.dumps({"spring_profiles": ["dev"]}))
    assert sorted(_by_service(tmp_path)) == ["pay/center+dev", "pay_center+dev"]


def test_exact_needs_the_commit_in_the_repository(tmp_path):
    from diting.source.git import GitRepo
    repo, sha = tmp_path / "r", None
    sha = build_fixture_repo(repo)
    assert GitRepo(repo).relation(sha, sha) == ("EXACT", [sha])
    assert GitRepo(repo).relation("1" * 40, "1" * 40) == ("UNKNOWN", [])


def test_what_changed_shows_the_difference_not_a_cut_prefix():
    from diting.diff.report import describe
    long = "PROVIDED:jsf://com.jd.trade.stock.api.StockReserveService#reserve(java.lang.String,java.util.List)"
    row = {"class": "OTHER", "stable_id": "x",
           "before": {"signature": ["java.lang.String", "java.util.List"], "id": long},
           "after": {"signature": ["java.lang.String", "java.util.List", "int"], "id": long.replace("List)", "List,int)")}}
    text = describe(row)
    assert 'signature: + ["int"]' in text
    assert "List)" in text and "List,int)" in text  # the long ids shown where they differ
    # what the change is about comes before its new revision; a revision alone is the code behind it
    row["before"]["implementation_ref"] = {"revision_id": "rev:" + "1" * 64}
    row["after"]["implementation_ref"] = {"revision_id": "rev:" + "2" * 64}
    assert "implementation_ref" not in describe(row) and describe(row).endswith('signature: + ["int"]; +1 more')
    same = {"class": "ENTRY_CHANGED", "stable_id": "x", "before": {"implementation_ref": row["before"]["implementation_ref"]},
            "after": {"implementation_ref": row["after"]["implementation_ref"]}}
    assert describe(same) == "its code changed (rev:11111111111… → rev:22222222222…)"


SHIPMENT = "fulfillment/fulfillment-web/src/main/java/com/jd/trade/fulfillment/web/ShipmentController.java"


@pytest.fixture(scope="module")
def retyped(tmp_path_factory):
    """The fulfillment-center packages before and after one endpoint's parameter changed type
    (``ship(String)`` → ``ship(CharSequence)``): (repo, old package, new package)."""
    root = tmp_path_factory.mktemp("retyped")
    repo = root / "repo"
    build_fixture_repo(repo)
    path = repo / SHIPMENT
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace('@PathVariable("orderNo") String orderNo', '@PathVariable("orderNo") CharSequence orderNo')
                    .replace("shipmentPlanner.plan(orderNo);", "shipmentPlanner.plan(orderNo.toString());"),
                    encoding="utf-8")
    assert path.read_text(encoding="utf-8") != text
    estate_changes.commit(repo)
    for rev, name in (("HEAD~1", "old"), ("HEAD", "new")):
        scan(repo, rev, ScanOptions(out=root / name, services=["fulfillment-center"], repo_id="fixtures/estate",
                                    quiet=True))
    return repo, next((root / "old").glob("fulfillment-center@*")), next((root / "new").glob("fulfillment-center@*"))


def test_a_changed_parameter_type_is_one_signature_change(retyped):
    """The contract's signature change is the one change: the EXPOSES that came and went, the
    endpoint's entry and the handler method's own records are folded into it."""
    repo, old, new = retyped
    doc = diff(old, new, repo=repo)
    assert doc["summary"] == {"CONTRACT_SIGNATURE_CHANGED": 1}
    (row,) = doc["changes"]
    assert (row["before"]["signature"], row["after"]["signature"]) == (["java.lang.String"], ["java.lang.CharSequence"])
    assert {"CONTRACT_ADDED", "CONTRACT_REMOVED", "ENTRY_CHANGED"} <= {f["class"] for f in row["folded"]}
    handler = "com.jd.trade:fulfillment-web/com.jd.trade.fulfillment.web.ShipmentController#ship(java.lang.CharSequence)"
    assert handler in {f["stable_id"] for f in row["folded"]}
    assert doc["folded_summary"]["CONTRACT_ADDED"] == doc["folded_summary"]["CONTRACT_REMOVED"] == 1
    assert sum(doc["folded_summary"].values()) == len(row["folded"])
    r = CliRunner().invoke(app, ["diff", str(old), str(new), "--repo", str(repo), "--format", "md"])
    assert r.exit_code == 1, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) <= 12 and "**CONTRACT_SIGNATURE_CHANGED** (1)" in r.output
    assert 'signature: - \\["java.lang.String"\\], + \\["java.lang.CharSequence"\\]' in r.output
    assert lines[-1] == f"Not listed: {len(row['folded'])} records folded into the changes they belong to " \
                        "(--format json has them)."


def test_other_and_evidence_moved_are_counted_and_listed_when_asked(two_commits):
    """OTHER and EVIDENCE_MOVED are left out of the listing and counted in its last line; --all lists
    them, --class lists one class, --service names the service; a wrong name is one message."""
    from diting.diff.report import narrow
    _, pkgs = two_commits
    old, new = pkgs["stock-center"]
    doc = diff(old, new)
    hidden = {k: v for k, v in doc["summary"].items() if k in ("OTHER", "EVIDENCE_MOVED")}
    assert hidden["OTHER"] and hidden["EVIDENCE_MOVED"] and narrow(doc)["omitted"] == hidden
    runner = CliRunner()
    r = runner.invoke(app, ["diff", str(old), str(new), "--format", "md"])
    assert r.exit_code == 1 and "EVIDENCE_MOVED" not in r.output.strip().splitlines()[-2]
    assert r.output.strip().splitlines()[-1].startswith(
        f"Not listed: EVIDENCE_MOVED {hidden['EVIDENCE_MOVED']}, OTHER {hidden['OTHER']} (--all or --class lists them); ")
    r = runner.invoke(app, ["diff", str(old), str(new), "--all", "--format", "md"])
    assert f"**OTHER** ({hidden['OTHER']})" in r.output or f"<summary>OTHER ({hidden['OTHER']})" in r.output
    r = runner.invoke(app, ["diff", str(old), str(new), "--class", "other", "--class", "CONTRACT_ADDED",
                            "--format", "json", "--service", "stock-center"])
    got = json.loads(r.output)
    assert {c["class"] for c in got["changes"]} == {"OTHER", "CONTRACT_ADDED"}
    assert got["omitted"] == {k: v for k, v in doc["summary"].items() if k not in ("OTHER", "CONTRACT_ADDED")}
    assert got["summary"] == doc["summary"]
    r = runner.invoke(app, ["diff", str(old), str(new), "--class", "TABLE_WRITE_CHANGED"])
    assert r.exit_code == 0, r.output  # nothing of that class
    for args, said in ((["--class", "CONTRACT_CHANGED"], "did you mean"), (["--service", "order-center"],
                                                                            "stock-center")):
        r = runner.invoke(app, ["diff", str(old), str(new), *args])
        assert r.exit_code == 2 and said in r.output and "Traceback" not in r.output, r.output


def test_two_packages_of_one_commit_are_of_the_same_commit(two_commits):
    _, pkgs = two_commits
    old, _ = pkgs["stock-center"]
    doc = diff(old, old)
    assert doc["commit_relation"] == "EXACT" and doc["merge_bases"] == [doc["new"]["commit_sha"]]
    for fmt in ("md", "table"):
        r = CliRunner().invoke(app, ["diff", str(old), str(old), "--format", fmt])
        assert r.exit_code == 0 and "same commit" in r.output and "UNKNOWN" not in r.output, r.output


def test_a_config_binding_whose_evidence_only_moved_is_evidence_moved(tmp_path):
    """A binding read by a field that moved lines (an import removed above it) is the same binding:
    EVIDENCE_MOVED, hidden by default — a changed value or default is still CONFIG_CHANGED."""
    from diting.diff.packages import Package, compare

    def binding(line_ref: str, value: str = "true") -> dict:
        return {"record_id": "config-binding:1", "consumer_ref": {"scan_id": "s", "record_id": "field:a"},
                "config_key": "pig.log.enabled", "source_refs": [], "value_resolution": "RESOLVED",
                "value": value, "default_value": None, "evidence_refs": [{"scan_id": "s", "record_id": line_ref}],
                "attributes": {}}

    def package(rec: dict) -> Package:
        return Package(tmp_path, {}, {}, {}, {}, {"field:a|config://pig.log.enabled": rec}, {"field:a": "A#f"})

    moved = compare(package(binding("source:1")), package(binding("source:2")))
    assert [c.cls for c in moved] == ["EVIDENCE_MOVED"]
    changed = compare(package(binding("source:1")), package(binding("source:2", value="false")))
    assert [c.cls for c in changed] == ["CONFIG_CHANGED"]


def test_a_graph_that_already_holds_the_new_commit_still_names_the_callers_of_a_removed_endpoint(tmp_path):
    """After the provider's new package is loaded, its callers' edges of the removed urn are
    UNRESOLVED with no provider side: they are the dependants (as after 'diting estate graph')."""
    from diting.graph.store import build
    from tests.conftest import boot_module, make_repo, pom, scan_repo
    from tests.estate_changes import commit
    feign = ("package com.example.PKG;\n@org.springframework.cloud.openfeign.FeignClient(name = \"goods-svc\")\n"
             "public interface GoodsClient {\n  @org.springframework.web.bind.annotation.GetMapping(\"/goods/list\")\n"
             "  String list();\n}\n")
    api = ("package com.example.PKG;\n@org.springframework.web.bind.annotation.RestController\npublic class Api {\n"
           "  @org.springframework.web.bind.annotation.GetMapping(\"/goods/list\") public String list() { return \"\"; }\n"
           "}\n")
    files = {"pom.xml": pom("shop", parent=None, packaging="pom",
                            body="<modules><module>goods-svc</module><module>cart-svc</module></modules>"),
             **boot_module("goods-svc", "", {"src/main/java/com/example/goodssvc/Api.java": api,
                                             "src/main/resources/application.properties":
                                                 "spring.application.name=goods-svc\n"}),
             **boot_module("cart-svc", "", {"src/main/java/com/example/cartsvc/GoodsClient.java": feign,
                                            "src/main/java/com/example/cartsvc/Cart.java":
                                                "package com.example.cartsvc;\n@org.springframework.web.bind."
                                                "annotation.RestController\npublic class Cart {\n  @org.springframework."
                                                "beans.factory.annotation.Autowired GoodsClient goods;\n  @org."
                                                "springframework.web.bind.annotation.GetMapping(\"/cart\") public String "
                                                "cart() { return goods.list(); }\n}\n",
                                            "src/main/java/com/example/cartsvc/App.java":
                                                "package com.example.cartsvc;\n@org.springframework.cloud.openfeign."
                                                "EnableFeignClients\n@org.springframework.boot.autoconfigure."
                                                "SpringBootApplication\npublic class App { public static void "
                                                "main(String[] a) { } }\n",
                                            "src/main/resources/application.properties":
                                                "spring.application.name=cart-svc\n"})}
    files = {k: v.replace("<parent><groupId>com.example</groupId><artifactId>shop-parent</artifactId>",
                          "<parent><groupId>com.example</groupId><artifactId>shop</artifactId>") for k, v in files.items()}
    repo, first = make_repo(tmp_path, files)
    old = scan_repo(repo, tmp_path / "old", rev=first)
    (repo / "goods-svc/src/main/java/com/example/goodssvc/Api.java").write_text(api.replace("/goods/list", "/goods/all"))
    new = scan_repo(repo, tmp_path / "new", rev=commit(repo))
    db = tmp_path / "g.duckdb"
    build(db, [p.path for p in new.packages])
    pkg = {p.service_id: p.path for p in old.packages}, {p.service_id: p.path for p in new.packages}
    doc = diff(pkg[0]["goods-svc"], pkg[1]["goods-svc"], db=db)
    removed = [i for i in doc["impact"] if i["change"] == "CONTRACT_REMOVED"]
    assert removed and removed[0]["services"] == ["cart-svc"], doc["impact"]
