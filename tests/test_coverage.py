"""diting coverage (docs/coverage.md): the report over packages and over a graph, its inventory denominator,
catalogue differences, and its four formats (the HTML numbers equal the JSON's)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from lxml import html as lxml_html

from conftest import ROOT, run_cli
from coverage_recount import check, load
from diting import __version__
from diting.coverage.model import DIMENSIONS, TERMS, CoverageReport
from diting.coverage.render import to_html, to_markdown, to_table
from diting.coverage.report import coverage_of_graph, coverage_of_packages
from diting.graph.store import build
from diting.graph.query import query

SAMPLES = ROOT / "ir_samples" / "estate"


def _adds_up(d: dict) -> None:
    assert d["discovered"] == sum(d[t] for t in TERMS), d
    assert d["excluded"] == sum(d["excluded_by_reason"].values()), d


@pytest.fixture(scope="module")
def graph(tmp_path_factory) -> Path:
    db = tmp_path_factory.mktemp("cov") / "g.duckdb"
    build(db, [SAMPLES])
    return db


def test_every_term_of_every_sample_package_is_recounted_from_its_records(estate):
    """The checked-in packages, recounted from their records and the fixture repository's tree."""
    repo, _ = estate
    pkgs = sorted(p.parent for p in SAMPLES.glob("*/manifest.json"))
    assert len(pkgs) == 7
    for pkg in pkgs:
        check(pkg, repo)


def test_report_over_packages_keeps_each_package_and_sums_the_estate():
    doc = coverage_of_packages([SAMPLES])
    CoverageReport.model_validate(doc)
    assert doc["source"] == {"graph": False, "packages": 7, "inventory": None, "diting_version": __version__}
    for name in DIMENSIONS:
        _adds_up(doc["dimensions"][name])
    for s in doc["services"]:
        pkg = next(p.parent for p in SAMPLES.glob("*/manifest.json")
                   if json.loads(p.read_text())["scan_id"] == s["scan_id"])
        assert s["dimensions"] == load(pkg)["coverage"]["dimensions"]
    # the estate's sums are over its deployables; a lib: package keeps its own figures
    assert [s["service_id"] for s in doc["services"] if s["kind"] == "LIB"] == ["lib:trade-parent"]
    for name in ("entries", "files", "call_sites", "config_keys", "sql_statements", "branch_ledger"):
        for t in ("discovered", *TERMS):
            assert doc["dimensions"][name][t] == sum(s["dimensions"][name][t] for s in doc["services"]
                                                     if s["kind"] == "SERVICE")
    # edges need a graph: not examined, and said so
    edges = doc["dimensions"]["cross_service_edges"]
    assert edges["discovered"] == 0 and edges["not_examined"]
    # applications without an inventory: the loaded packages, the lib: package excluded
    apps = {a["service_id"]: a for a in doc["applications"]}
    assert apps["lib:trade-parent"]["term"] == "excluded" and apps["lib:trade-parent"]["reason"] == "module_not_deployed"
    statuses = {json.loads(p.read_text())["service_id"]: json.loads(p.read_text())["status"]
                for p in SAMPLES.glob("*/manifest.json")}
    kinds = {s["service_id"]: s["kind"] for s in doc["services"]}  # the packages' recorded kinds
    for sid, a in apps.items():
        if kinds[sid] == "SERVICE":
            assert a["term"] == {"COMPLETE": "resolved", "PARTIAL": "partial", "FAILED": "failed"}[statuses[sid]]
    assert "without an inventory" in doc["dimensions"]["applications"]["not_examined"][0]


def test_report_over_a_graph_counts_edges_from_the_alignment(graph):
    doc = coverage_of_graph(graph)
    CoverageReport.model_validate(doc)
    edges = doc["dimensions"]["cross_service_edges"]
    _adds_up(edges)
    # independently: alignment rows with a source, by status; DECLARED_UNUSED diagnostics in the packages
    _, rows = query(graph, "SELECT resolution_status, count(*) FROM alignment WHERE edge_kind IN ('RPC','HTTP','MQ') "
                           "AND src_service IS NOT NULL GROUP BY ALL")
    by = dict(rows)
    assert edges["resolved"] == by.get("RESOLVED", 0) == 10
    assert edges["partial"] == by.get("AMBIGUOUS", 0)
    assert edges["failed"] == by.get("UNRESOLVED", 0) == 12
    unused = sum(1 for p in SAMPLES.glob("*/diagnostics.jsonl") for line in p.read_text().splitlines()
                 if json.loads(line)["code"] == "DECLARED_UNUSED")
    assert edges["excluded_by_reason"].get("declared_unused", 0) == unused
    assert edges["discovered"] == sum(by.values()) + unused
    kinds = Counter(d["kind"] for d in doc["catalogue_differences"])
    # consumers with no provider: fulfillment-worker's InvoiceService (nobody provides it), promotion-center's
    # two OrderQueryService calls (the alias matches no provider), three subscriptions nobody feeds
    consumers = {(d["service_id"], d["subject"]) for d in doc["catalogue_differences"]
                 if d["kind"] == "CONSUMER_WITHOUT_PROVIDER"}
    assert consumers == {("fulfillment-worker", "jsf://com.jd.trade.invoice.api.InvoiceService#issuePending"),
                         ("promotion-center", "jsf://com.jd.trade.order.api.OrderQueryService#getOrder"),
                         ("promotion-center", "jsf://com.jd.trade.order.api.OrderQueryService#listOrders"),
                         ("order-center", "jmq://trade_delivery_signed"), ("payment-center", "jmq://cashier_refund_apply"),
                         ("stock-center", "rocketmq://trade_order_closed")}
    # the graph's findings say the same: each UNRESOLVED_CALL names one of them
    _, unresolved = query(graph, "SELECT DISTINCT service_id, urn FROM graph_findings WHERE code = 'UNRESOLVED_CALL'")
    assert {(s, u) for s, u in unresolved} == consumers
    # providers nobody consumes: each contract (overloads apart) and each topic once, however many methods send it
    _, orphans = query(graph, "SELECT count(DISTINCT coalesce(subject_refs[1].record_id, urn)) FILTER (WHERE "
                              "subject_refs[1].record_id LIKE 'contract:%') + count(DISTINCT urn) FILTER (WHERE NOT "
                              "subject_refs[1].record_id LIKE 'contract:%') FROM graph_findings WHERE code = "
                              "'ORPHAN_ENTRY'")
    assert kinds["PROVIDER_WITHOUT_CONSUMER"] == orphans[0][0] > 0
    # overloads are separate providers, named with their signatures
    subjects = [d["subject"] for d in doc["catalogue_differences"] if d["kind"] == "PROVIDER_WITHOUT_CONSUMER"]
    assert len(subjects) == len(set(subjects))
    assert doc["unresolved_by_kind"]["edge:RPC"]["UNRESOLVED"] == by_kind(graph, "RPC")


def by_kind(db: Path, kind: str) -> int:
    return query(db, "SELECT count(*) FROM alignment WHERE edge_kind = $k AND src_service IS NOT NULL AND "
                     "resolution_status = 'UNRESOLVED'", {"k": kind})[1][0][0]


def test_inventory_is_the_application_denominator(graph, tmp_path):
    inv = tmp_path / "inventory.yaml"
    inv.write_text("services:\n"
                   "  - {service_id: order-center, owner: trade}\n"
                   "  - {service_id: payment-center}\n"
                   "  - {service_id: invoice-center, repo_id: trade/invoice}\n"
                   "  - {service_id: legacy-center, exclusion_reason: no_permission}\n"
                   "  - {service_id: stock-center, exclusion_reason: not_java}\n")
    doc = coverage_of_graph(graph, inv)
    apps = {a["service_id"]: a for a in doc["applications"]}
    assert apps["invoice-center"] == {"service_id": "invoice-center", "term": "failed", "reason": "no_package",
                                      "scan_ids": []}
    assert apps["legacy-center"]["term"] == "excluded" and apps["legacy-center"]["reason"] == "no_permission"
    # named with an exclusion, even though a package exists
    assert apps["stock-center"]["reason"] == "not_java" and apps["stock-center"]["scan_ids"]
    for sid in ("fulfillment-center", "fulfillment-worker", "promotion-center"):
        assert apps[sid]["term"] == "excluded" and apps[sid]["reason"] == "not_in_inventory"
    dim = doc["dimensions"]["applications"]
    _adds_up(dim)
    assert dim["discovered"] == 9  # 5 named + 3 packages not named + the lib package
    assert dim["excluded_by_reason"] == {"module_not_deployed": 1, "no_permission": 1, "not_in_inventory": 3,
                                         "not_java": 1}
    assert dim["failed"] == 1 and not dim["not_examined"]
    diffs = {(d["kind"], d["service_id"]) for d in doc["catalogue_differences"]}
    assert ("INVENTORY_WITHOUT_PACKAGE", "invoice-center") in diffs
    assert ("PACKAGE_WITHOUT_INVENTORY", "promotion-center") in diffs
    assert ("MODULE_NOT_DEPLOYED", "lib:trade-parent") in diffs
    assert doc["source"]["inventory"]["sha256"]


def _cells(tree, **attrs) -> list:
    sel = "".join(f'[@data-{k}]' for k in attrs)
    return [c for c in tree.xpath(f"//td{sel}") if all(c.get(f"data-{k}") is not None for k in attrs)]


def test_html_numbers_equal_the_json_report(graph):
    doc = coverage_of_graph(graph)
    page = to_html(doc)
    assert page == to_html(coverage_of_graph(graph))  # equal input, equal bytes
    tree = lxml_html.fromstring(page)
    assert not tree.xpath("//script") and not tree.xpath("//*[@src]") and not tree.xpath("//link")
    assert len(tree.xpath("//*[local-name()='svg']")) >= 3
    seen = 0
    for td in tree.xpath("//td[@data-dim][@data-term]"):
        dim, term, svc = td.get("data-dim"), td.get("data-term"), td.get("data-service")
        if svc is None:
            want = doc["dimensions"][dim][term]
        else:
            want = next(s for s in doc["services"] if s["scan_id"] == svc)["dimensions"][dim][term]
        assert int(td.text_content()) == want, (dim, term, svc)
        seen += 1
    # per package: the dimensions a package counts (applications and cross-service edges are the graph's)
    per_package = [d for d in DIMENSIONS if d not in ("applications", "cross_service_edges")]
    assert seen == len(DIMENSIONS) * 5 + sum(len(set(s["dimensions"]) & set(per_package)) * 5 for s in doc["services"])
    for td in tree.xpath("//td[@data-kind]"):
        assert int(td.text_content()) == doc["unresolved_by_kind"][td.get("data-kind")].get(td.get("data-status"), 0)
    for td in tree.xpath("//td[@data-code]"):
        assert int(td.text_content()) == doc["diagnostics_by_code"][td.get("data-code")]


def test_hostile_names_are_escaped_in_every_format(graph):
    doc = coverage_of_graph(graph)
    evil = '<script>alert(1)</script>|\x1b[31m"\n'
    doc["services"][0]["service_id"] = evil
    doc["catalogue_differences"][0]["subject"] = evil
    page = to_html(doc)
    tree = lxml_html.fromstring(page)
    assert not tree.xpath("//script")
    assert "\x1b" not in page and "<script>alert" not in page
    for text in (to_markdown(doc), to_table(doc)):
        assert "\x1b" not in text
    md_rows = [line for line in to_markdown(doc).splitlines() if "alert" in line]
    assert md_rows and all("\\|" in line for line in md_rows)


def test_ratios_are_not_stored_and_show_n_a_for_nothing_discovered(graph):
    doc = coverage_of_graph(graph)
    def numbers(v):
        if isinstance(v, dict):
            for x in v.values():
                yield from numbers(x)
        elif isinstance(v, list):
            for x in v:
                yield from numbers(x)
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            yield v
    assert all(isinstance(n, int) for n in numbers(doc))  # counts only: a ratio is computed on display
    text = to_table(coverage_of_packages([SAMPLES]))
    edges_line = next(line for line in text.splitlines() if line.startswith("cross_service_edges"))
    assert edges_line.split()[-1] == "N/A"


def test_cli_formats_files_and_errors(graph, tmp_path):
    r = run_cli("coverage", "--db", str(graph), "--format", "json")
    assert r.returncode == 0, r.stderr
    CoverageReport.model_validate(json.loads(r.stdout))
    out = tmp_path / "cov.html"
    r1 = run_cli("coverage", "--db", str(graph), "--format", "html", "--out", str(out))
    first = out.read_bytes()
    r2 = run_cli("coverage", "--db", str(graph), "--format", "html", "--out", str(out))
    assert r1.returncode == r2.returncode == 0 and out.read_bytes() == first
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]
    r = run_cli("coverage", str(SAMPLES), "--format", "md")
    assert r.returncode == 0 and r.stdout.startswith("## Coverage")
    for args, msg in [((), "give package directories or --db"),
                      (("--db", str(graph), str(SAMPLES)), "one of the two"),
                      (("--db", str(graph), "--format", "pdf"), "--format must be"),
                      (("--db", str(tmp_path / "none.duckdb")), "no such graph database"),
                      ((str(tmp_path),), "no IR package"),
                      (("--db", str(graph), "--inventory", str(tmp_path / "missing.yaml")), "inventory"),
                      (("--db", str(graph), "--format", "html", "--out", str(tmp_path)), "is a directory")]:
        r = run_cli("coverage", *args)
        assert r.returncode == 2 and msg in r.stderr and "Traceback" not in r.stderr, (args, r.stderr)


def test_a_tampered_package_is_refused(tmp_path):
    import shutil
    pkg = tmp_path / "p"
    shutil.copytree(next(p.parent for p in SAMPLES.glob("order-center*/manifest.json")), pkg)
    cov = pkg / "coverage.json"
    text = cov.read_text()
    assert '"resolved":46' in text
    cov.write_text(text.replace('"resolved":46', '"resolved":47', 1))
    r = run_cli("coverage", str(pkg))
    assert r.returncode == 2 and "does not verify" in r.stderr


def _resign(pkg: Path, name: str) -> None:
    """Recompute the package's digests in the manifest, as someone altering a package would."""
    from tests.test_verify import reseal
    reseal(pkg)


def test_a_re_signed_report_that_does_not_add_up_is_refused(tmp_path):
    import shutil
    pkg = tmp_path / "stock"
    shutil.copytree(next(p.parent for p in SAMPLES.glob("stock-center*/manifest.json")), pkg)
    cov = pkg / "coverage.json"
    doc = json.loads(cov.read_text())
    doc["dimensions"]["branch_ledger"]["discovered"] = 9000
    cov.write_text(json.dumps(doc))
    _resign(pkg, "coverage.json")
    assert run_cli("verify", str(pkg)).returncode == 0  # the checksums agree now
    for args in (("coverage", str(pkg)), ("graph", "build", "--db", str(tmp_path / "g.duckdb"), str(pkg))):
        r = run_cli(*args)  # the record checks (default) find it
        assert r.returncode == 2 and "does not verify" in r.stderr, r.stderr
        r = run_cli(*args, "--fast")  # without them, the reader's own check does
        assert r.returncode == 2 and "not a valid coverage report" in r.stderr and "Traceback" not in r.stderr, r.stderr
    doc["dimensions"]["branch_ledger"]["discovered"] = "7"
    cov.write_text(json.dumps(doc))
    _resign(pkg, "coverage.json")
    r = run_cli("coverage", "--fast", str(pkg))
    assert r.returncode == 2 and "not a valid coverage report" in r.stderr


def test_out_never_replaces_a_device_a_fifo_or_a_link(graph, tmp_path):
    import os
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    target = tmp_path / "target.txt"
    target.write_text("keep")
    link = tmp_path / "link.html"
    link.symlink_to(target)
    for out in (fifo, link):
        r = run_cli("coverage", "--db", str(graph), "--format", "html", "--out", str(out))
        assert r.returncode == 2 and "not a regular file" in r.stderr, r.stderr
    assert fifo.is_fifo() and link.is_symlink() and target.read_text() == "keep"


def test_inventory_entries_must_be_unique_text_and_name_the_right_package(graph, tmp_path):
    inv = tmp_path / "inv.yaml"
    for body, msg in [("services:\n  - {service_id: order-center}\n  - {service_id: Order-Center}\n", "listed twice"),
                      ("services:\n  - {service_id: a, owner: [1, 2]}\n", "not text"),
                      ("services:\n  - {service_id: a\n", "not valid YAML (line")]:
        inv.write_text(body)
        r = run_cli("coverage", "--db", str(graph), "--inventory", str(inv))
        assert r.returncode == 2 and msg in r.stderr and "Traceback" not in r.stderr, (body, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1
    # a repo_id or profile no loaded package has: the application has no package
    inv.write_text("services:\n  - {service_id: order-center, repo_id: github.com/other/repo}\n"
                   "  - {service_id: stock-center, profile: prod}\n  - {service_id: payment-center, "
                   "repo_id: fixtures/estate}\n")
    apps = {a["service_id"]: a for a in coverage_of_graph(graph, inv)["applications"]}
    assert apps["order-center"]["term"] == "failed" and apps["order-center"]["reason"] == "no_package"
    assert apps["stock-center"]["term"] == "failed"
    assert apps["payment-center"]["term"] == "resolved"


def test_a_report_missing_a_dimension_or_with_an_absurd_count_is_refused(tmp_path):
    import shutil
    for edit in ("missing", "huge"):
        pkg = tmp_path / edit
        shutil.copytree(next(p.parent for p in SAMPLES.glob("stock-center*/manifest.json")), pkg)
        doc = json.loads((pkg / "coverage.json").read_text())
        if edit == "missing":
            del doc["dimensions"]["entries"]
        else:
            d = doc["dimensions"]["files"]
            d["discovered"] += 10 ** 30
            d["resolved"] += 10 ** 30
        (pkg / "coverage.json").write_text(json.dumps(doc))
        _resign(pkg, "coverage.json")
        r = run_cli("coverage", "--fast", str(pkg))
        assert r.returncode == 2 and "not a valid coverage report" in r.stderr, r.stderr
        r = run_cli("coverage", str(pkg))
        assert r.returncode == 2 and "does not verify" in r.stderr, r.stderr
        # verify --deep applies the same check: a finding, never an internal error
        r = run_cli("verify", "--deep", str(pkg))
        assert r.returncode == 1 and ("missing" if edit == "missing" else "beyond a 64-bit count") in \
            r.stdout + r.stderr, r.stdout + r.stderr


def test_graph_files_that_are_no_regular_files_are_refused(tmp_path):
    import os
    fifo = tmp_path / "g.duckdb"
    os.mkfifo(fifo)
    for args in (("graph", "build", "--db", str(fifo), str(SAMPLES)), ("coverage", "--db", str(fifo))):
        r = run_cli(*args)
        assert r.returncode == 2 and "not a regular file" in r.stderr, r.stderr
    assert fifo.is_fifo()


def test_parquet_export_never_replaces_a_link_or_a_fifo(graph, tmp_path):
    import os
    out = tmp_path / "pq"
    out.mkdir()
    (tmp_path / "keep.txt").write_text("keep")
    (out / ".diting-export").write_text("written by diting export --format parquet\n")  # a former export
    (out / "entities.parquet").symlink_to(tmp_path / "keep.txt")
    os.mkfifo(out / "relations.parquet")
    r = run_cli("export", "--db", str(graph), "--format", "parquet", "--out", str(out))
    assert r.returncode == 2 and "not a regular file" in r.stderr, r.stderr
    assert (out / "entities.parquet").is_symlink() and (out / "relations.parquet").is_fifo()
    assert (tmp_path / "keep.txt").read_text() == "keep" and len(list(out.iterdir())) == 3


def test_an_overwritten_report_keeps_its_mode(graph, tmp_path):
    out = tmp_path / "cov.md"
    out.write_text("old")
    out.chmod(0o600)
    assert run_cli("coverage", "--db", str(graph), "--format", "md", "--out", str(out)).returncode == 0
    assert out.stat().st_mode & 0o777 == 0o600 and out.read_text().startswith("## Coverage")


def test_inventory_values_are_text(graph, tmp_path):
    inv = tmp_path / "inv.yaml"
    for body in ("services:\n  - {service_id: 123}\n", "services:\n  - {service_id: a, exclusion_reason: yes}\n"):
        inv.write_text(body)
        r = run_cli("coverage", "--db", str(graph), "--inventory", str(inv))
        assert r.returncode == 2 and "not text" in r.stderr, r.stderr


# ---------------------------------------------------------------- the page a reader sees (issue 21)

#: the commit date the fixture estate's packages record (the fixture's committer time)
FIXTURE_COMMITTED = "2026-01-01T00:00:00+00:00"


def test_every_format_names_repository_commit_its_date_and_the_diting_versions(graph, tmp_path):
    import duckdb
    sha = json.loads(next(SAMPLES.glob("*/manifest.json")).read_text())["commit_sha"]
    for doc in (coverage_of_packages([SAMPLES]), coverage_of_graph(graph)):
        assert doc["source"]["diting_version"] == __version__
        for s in doc["services"]:
            assert (s["repo_id"], s["commit_sha"], s["commit_time"], s["analyzer_version"]) == \
                ("fixtures/estate", sha, FIXTURE_COMMITTED, __version__)
        tree = lxml_html.fromstring(to_html(doc))
        rows = [(tr.xpath("./th")[0].text_content(), tr.xpath("./td")[0].text_content())
                for tr in tree.xpath('//table[@id="inputs"]//tr')]
        assert rows[:4] == [("repository", "fixtures/estate"), ("commit", sha),
                            ("committed", f"{FIXTURE_COMMITTED} (committer time)"),
                            ("packages", f"7, written by diting {__version__}")]
        assert rows[4][0] == "report" and rows[4][1].endswith(f"computed by diting {__version__}")
        assert "records no time of its own scan" in tree.text_content()
        for text in (to_table(doc), to_markdown(doc)):
            assert f"repository fixtures/estate at commit {sha}, committed {FIXTURE_COMMITTED}" in text
            assert f"written by diting {__version__}" in text and f"computed by diting {__version__}" in text
    # a graph an older diting built has no commit_time column: the date is "not recorded", never an error
    old = tmp_path / "old.duckdb"
    old.write_bytes(graph.read_bytes())
    con = duckdb.connect(str(old))
    con.execute("ALTER TABLE packages DROP COLUMN commit_time")
    con.close()
    doc = coverage_of_graph(old)
    assert {s["commit_time"] for s in doc["services"]} == {None}
    assert "not recorded (packages of an older diting)" in to_html(doc) and "(not recorded" in to_table(doc)


def test_a_report_an_older_diting_wrote_still_validates_and_renders(graph):
    """repo_id, commit_time, analyzer_version and diting_version are additions: a report without them
    is still a valid report and every format renders it, saying what is not recorded."""
    doc = json.loads(json.dumps(coverage_of_graph(graph)))
    del doc["source"]["diting_version"]
    for s in doc["services"]:
        for k in ("repo_id", "commit_time", "analyzer_version"):
            del s[k]
    CoverageReport.model_validate(doc)
    page = to_html(doc)
    assert "repository" in page and "(not recorded)" in page and "computed by diting" not in page
    assert "(not recorded)" in to_table(doc) and "(not recorded)" in to_markdown(doc)


def _mostly_excluded(doc: dict) -> dict:
    """``doc`` with its lib: package's files made 1 resolved of 105 discovered, 104 excluded (as
    mall-swarm's root module: its sources are tests and kinds diting does not read)."""
    lib = next(s for s in doc["services"] if s["kind"] == "LIB")
    lib["dimensions"]["files"] = {**lib["dimensions"]["files"], "discovered": 105, "resolved": 1, "partial": 0,
                                  "failed": 0, "excluded": 104, "excluded_by_reason": {"test_source": 104}}
    CoverageReport.model_validate(doc)
    return doc


def _rows(svg) -> dict:
    """``{label: (scale, {term: (n, x, width)}, text beside)}`` of a chart."""
    out = {}
    for g in svg.xpath(".//*[local-name()='g'][@class='row']"):
        segs = {r.get("data-term"): (int(r.get("data-n")), int(r.get("x")), int(r.get("width")))
                for r in g.xpath(".//*[local-name()='rect'][@class='seg']")}
        out[g.get("data-label")] = (int(g.get("data-scale")), segs, g.xpath("./*[local-name()='text']")[-1].text)
    return out


def test_bars_are_shares_of_the_examined_items_on_a_0_to_100_axis_with_the_counts_beside(graph):
    doc = _mostly_excluded(coverage_of_graph(graph))
    tree = lxml_html.fromstring(to_html(doc))
    charts = tree.xpath("//figure/*[local-name()='svg']")
    per_package = [d for d in DIMENSIONS if d not in ("applications", "cross_service_edges")]
    share = [c for c in charts if "resolved of examined" in c.xpath("./*[local-name()='title']")[0].text]
    assert len(share) == 1 + sum(1 for d in per_package if any(s["dimensions"][d]["discovered"]
                                                               for s in doc["services"]))
    checked = 0
    for svg in share:
        bar = int(svg.get("data-bar-width"))
        ticks = [(t.text, int(t.get("x"))) for t in svg.xpath(".//*[local-name()='text'][@class='tick']")]
        assert [t for t, _ in ticks] == ["0%", "25%", "50%", "75%", "100%"]
        assert ticks[-1][1] - ticks[0][1] == bar  # the axis spans the bar: 100 % is a full bar
        title = svg.xpath("./*[local-name()='title']")[0].text
        dims = {name: doc["dimensions"][name] for name in DIMENSIONS} if title.startswith("the estate") else {
            s["service_id"] + (f" [{s['label']}]" if s["label"] else ""): s["dimensions"][title.split(":")[0]]
            for s in doc["services"]}
        for label, (scale, segs, beside) in _rows(svg).items():
            d = dims[label]
            examined = d["discovered"] - d["excluded"]
            assert scale == examined
            if examined:
                # every examined item is in the bar and a full bar is 100 %: a fully resolved package is a
                # full bar however few its items
                assert sum(w for _, _, w in segs.values()) == bar
                assert abs(segs.get("resolved", (0, 0, 0))[2] - bar * d["resolved"] / examined) <= 1
                assert f"{d['resolved']}/{examined}" in beside
            else:
                assert not segs and "N/A" in beside
            assert (f"+{d['excluded']} excluded" in beside) == bool(d["excluded"])
            checked += 1
    assert checked > 20
    # the package of 104 excluded files and 1 resolved one: a full resolved bar, the exclusions beside it
    files = next(c for c in share if c.xpath("./*[local-name()='title']")[0].text.startswith("files:"))
    scale, segs, beside = _rows(files)["lib:trade-parent"]
    assert scale == 1 and segs["resolved"][2] == int(files.get("data-bar-width"))
    assert beside == "100.0% · 1/1 · +104 excluded"


def test_a_mostly_excluded_package_does_not_read_as_failing_in_any_format(graph):
    doc = _mostly_excluded(coverage_of_graph(graph))
    for text in (to_table(doc), to_markdown(doc)):
        row = next(line for line in text.splitlines() if "lib:trade-parent" in line and "/" in line)
        assert "1/1 +104 excl." in row and "1/105" not in row, row
        assert "examined is discovered less excluded" in text
    tree = lxml_html.fromstring(to_html(doc))
    lib = next(s for s in doc["services"] if s["kind"] == "LIB")
    cells = {c.get("data-term"): int(c.text_content()) for c in
             tree.xpath(f'//table[@id="services"]//td[@data-service="{lib["scan_id"]}"][@data-dim="files"]')}
    assert cells == {"discovered": 105, "resolved": 1, "partial": 0, "failed": 0, "excluded": 104}
    row = tree.xpath(f'//table[@id="services"]//td[@data-service="{lib["scan_id"]}"][@data-dim="files"]/..')[0]
    assert row.xpath("./td")[-1].text == "100.0%"


LONG = "yudao-module-iot-net-component-emqx-gateway-server-with-a-name-longer-than-any-column"


def test_long_names_are_never_cut(graph):
    """A name is whole in every table; a chart shortens it only in its middle (start and end kept,
    the whole name its tooltip) and never draws it left of the chart."""
    doc = coverage_of_graph(graph)
    doc["services"][0]["service_id"] = LONG
    doc["services"][1]["label"] = "gray-canary-2024-with-a-long-label"
    doc["catalogue_differences"][0]["subject"] = "http://" + LONG + "/admin-api/" + "segment/" * 12
    tree = lxml_html.fromstring(to_html(doc))
    groups = [" ".join(th.text_content().split()) for th in tree.xpath('//table[@id="services"]//tbody/tr/th')]
    assert groups[0].startswith(LONG + " ·")
    assert groups[1].startswith(doc["services"][1]["service_id"] + " [gray-canary-2024-with-a-long-label] ·")
    assert tree.xpath('//table[@id="differences"]//code')[0].text == doc["catalogue_differences"][0]["subject"]
    seen = 0
    for svg in tree.xpath("//*[local-name()='svg']"):
        for g in svg.xpath(".//*[local-name()='g'][@class='row']"):
            label = g.xpath("./*[local-name()='text']")[0]
            title = label.xpath("./*[local-name()='title']")[0]
            full, shown = title.text, title.tail  # the tooltip, then the text drawn
            assert full == g.get("data-label")
            assert int(label.get("x")) >= 0 and label.get("text-anchor") in (None, "start")
            if shown != full:
                head, _, tail = shown.partition("…")
                assert full.startswith(head) and full.endswith(tail) and len(head) > 5 and len(tail) > 5, shown
            if full == LONG:
                seen += 1
                assert shown != full  # too wide for the label column: shortened, not cut
    assert seen == sum(1 for name in DIMENSIONS if name not in ("applications", "cross_service_edges")
                       and doc["services"][0]["dimensions"][name]["discovered"])


def _chromium() -> str | None:
    import shutil
    return next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None)


def _layout(browser: str, page: Path, width: int) -> dict:
    """The layout metrics (DevTools ``Page.getLayoutMetrics``) of ``page`` loaded in headless
    ``browser`` with a window ``width`` CSS px wide: the browser's own layout, no script in the page.
    The DevTools protocol runs over the pipe pair ``--remote-debugging-pipe`` reads (fd 3) and
    writes (fd 4): NUL-separated JSON messages."""
    import os
    import select
    import signal
    import subprocess
    import tempfile
    import time
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as profile:
        proc = subprocess.Popen(
            ["sh", "-c", 'exec "$@" 3<&0 4>&1 0</dev/null 1>/dev/null', "sh", browser, "--headless", "--no-sandbox",
             "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-component-update",
             "--disable-sync", "--hide-scrollbars", f"--user-data-dir={profile}", "--remote-debugging-pipe"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)
        buf, ids = b"", iter(range(1, 1000))
        deadline = time.monotonic() + 90

        def receive() -> dict:
            nonlocal buf
            while b"\0" not in buf:
                left = deadline - time.monotonic()
                assert left > 0 and select.select([proc.stdout], [], [], left)[0], "the browser did not answer"
                chunk = os.read(proc.stdout.fileno(), 1 << 16)
                assert chunk, "the browser closed the pipe"
                buf += chunk
            msg, _, buf = buf.partition(b"\0")
            return json.loads(msg)

        def send(method: str, params: dict | None = None, session: str | None = None) -> int:
            n = next(ids)
            msg = {"id": n, "method": method, "params": params or {}, **({"sessionId": session} if session else {})}
            proc.stdin.write(json.dumps(msg).encode() + b"\0")
            proc.stdin.flush()
            return n

        def call(method: str, params: dict | None = None, session: str | None = None, until: str | None = None):
            n = send(method, params, session)
            result, event = None, until is None
            while result is None or not event:
                m = receive()
                if m.get("id") == n:
                    assert "error" not in m, m
                    result = m["result"]
                elif until is not None and m.get("method") == until and m.get("sessionId") == session:
                    event = True
            return result

        try:
            target = call("Target.createTarget", {"url": "about:blank"})["targetId"]
            session = call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
            call("Emulation.setDeviceMetricsOverride", {"width": width, "height": 900, "deviceScaleFactor": 1,
                                                        "mobile": False}, session)
            call("Page.enable", session=session)
            call("Page.navigate", {"url": page.resolve().as_uri()}, session, until="Page.loadEventFired")
            metrics = call("Page.getLayoutMetrics", session=session)
            send("Browser.close")  # it may exit before it answers
            proc.wait(30)
            return metrics
        finally:
            if proc.poll() is None:  # the browser and its helpers: the process group it leads
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


@pytest.mark.skipif(_chromium() is None, reason="no chromium on this machine")
def test_the_page_reads_at_700_px_without_sideways_scrolling(graph, tmp_path):
    """Rendered by a real browser 700 px wide, the page — long names, long subjects and all — is no
    wider than the window: tables wrap, charts fit."""
    doc = _mostly_excluded(coverage_of_graph(graph))
    doc["services"][0]["service_id"] = LONG
    doc["catalogue_differences"][0]["subject"] = "http://" + LONG + "/admin-api/" + "segment/" * 12
    page = tmp_path / "coverage.html"
    page.write_text(to_html(doc), encoding="utf-8")
    for width in (700, 1280):
        m = _layout(_chromium(), page, width)
        assert m["cssLayoutViewport"]["clientWidth"] == width
        assert m["cssContentSize"]["width"] <= width, (width, m["cssContentSize"])
    assert m["cssContentSize"]["height"] > 2000  # the page was laid out, not an empty document
