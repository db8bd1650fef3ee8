"""The fixture estate against its answer key, fixtures/estate/expected.json.

Every fact the estate contains is listed with the fixture line that proves it; the scan must find
exactly those (precision and recall 1.0 per family), each cited line must hold the named identifier
and lie inside the evidence diting recorded for the fact, and no must-not fact may appear.
Mutation tests change a temporary copy of the estate and check that exactly the facts a change
touches move.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from diting.demo import build_fixture_repo, commit_tree, fixtures_dir
from diting.scan.pipeline import ScanOptions, scan

from .estate_facts import FAMILIES, holds, project_all, read_lines

ESTATE = fixtures_dir() / "estate"
EXPECTED = json.loads((ESTATE / "expected.json").read_text(encoding="utf-8"))
FACTS = {(f["service"], f["family"], f["key"]): f for f in EXPECTED["facts"]}


@pytest.fixture(scope="module")
def extracted(estate_scan):
    _, out = estate_scan
    return project_all(out)


def test_the_estate_commit_is_pinned(estate):
    """The same fixture sources give the same commit everywhere; expected.json names it."""
    _, sha = estate
    assert sha == EXPECTED["commit"]


def test_expected_rows_are_unique_and_of_known_families():
    assert len(FACTS) == len(EXPECTED["facts"])
    assert {f["family"] for f in EXPECTED["facts"]} <= set(FAMILIES)


@pytest.mark.parametrize("fact", EXPECTED["facts"], ids=lambda f: f"{f['family']}:{f['cite']}")
def test_each_cited_line_holds_its_identifier(fact):
    path, _, line = fact["cite"].partition(":")
    src = ESTATE / path
    assert src.is_file(), f"{path} is not a fixture file"
    if not line:  # a file diting cannot read as text: the identifier is somewhere in its bytes
        assert fact["ident"].encode() in src.read_bytes()
        return
    lines = read_lines(src)
    assert holds(lines[int(line) - 1], fact["ident"]), f"{fact['cite']} does not hold {fact['ident']!r}"


def test_each_citation_lies_inside_the_recorded_evidence(extracted):
    outside = []
    for key, fact in FACTS.items():
        path, _, line = fact["cite"].partition(":")
        got = extracted.get(key)
        if got is None or not line:
            continue  # a missing fact is reported by the precision/recall test
        if not any(p == path and a <= int(line) <= b for p, a, b in got["evidence"]):
            outside.append(f"{key}: {fact['cite']} not in {got['evidence']}")
    assert not outside, "\n".join(outside)


def _score(expected: dict, extracted: dict) -> dict[str, tuple[int, int, int]]:
    """Per family: (true positives, false positives, false negatives); a fact counts as found only
    with its status and detail equal."""
    out: dict[str, list[int]] = {f: [0, 0, 0] for f in FAMILIES}
    for key, got in extracted.items():
        want = expected.get(key)
        if want is not None and want["status"] == got["status"] and want["detail"] == got["detail"]:
            out[key[1]][0] += 1
        else:
            out[key[1]][1] += 1
    for key in expected:
        if key not in extracted or not (expected[key]["status"] == extracted[key]["status"]
                                        and expected[key]["detail"] == extracted[key]["detail"]):
            out[key[1]][2] += 1
    return {f: (tp, fp, fn) for f, (tp, fp, fn) in out.items()}


def test_extraction_equals_the_answer_key(extracted):
    """Precision and recall 1.0 in every family (statuses and details included)."""
    scores = _score(FACTS, extracted)
    lines = [f"{'family':<14}{'expected':>9}{'found':>7}{'precision':>11}{'recall':>8}"]
    for fam, (tp, fp, fn) in scores.items():
        lines.append(f"{fam:<14}{tp + fn:>9}{tp + fp:>7}{tp / (tp + fp) if tp + fp else 1:>11.3f}"
                     f"{tp / (tp + fn) if tp + fn else 1:>8.3f}")
    print("\n".join(lines))
    extra = sorted(k for k in extracted if k not in FACTS)
    missing = sorted(k for k in FACTS if k not in extracted)
    changed = sorted(f"{k}: expected {FACTS[k]['status']} {FACTS[k]['detail']}, got {v['status']} {v['detail']}"
                     for k, v in extracted.items() if k in FACTS and
                     (FACTS[k]["status"], FACTS[k]["detail"]) != (v["status"], v["detail"]))
    assert not (extra or missing or changed), (
        "\n".join(["not in expected.json:", *map(str, extra), "missing:", *map(str, missing), "different:", *changed]))
    assert all(fp == 0 and fn == 0 for _, fp, fn in scores.values())
    assert all(tp > 0 for fam, (tp, _, _) in scores.items()), "every family is exercised"


def _violations(extracted: dict) -> list[str]:
    out = []
    for rule in EXPECTED["must_not"]:
        for service, family, key in extracted:
            if rule["service"] in ("*", service) and rule["family"] in ("*", family) and rule["key_contains"] in key:
                out.append(f"{service} {family} {key}: {rule['why']}")
    return out


def test_no_must_not_fact_appears(extracted):
    assert not _violations(extracted)


def test_the_must_not_check_can_fail():
    """A fabricated fact of each must-not rule is caught (the check is not vacuous)."""
    for rule in EXPECTED["must_not"]:
        service = "x" if rule["service"] == "*" else rule["service"]
        family = FAMILIES[0] if rule["family"] == "*" else rule["family"]
        assert _violations({(service, family, f"a {rule['key_contains']} b"): {}})


@pytest.mark.parametrize("gap", EXPECTED["known_gaps"], ids=lambda g: g["cite"])
def test_known_gaps_are_cited_and_still_gaps(extracted, gap):
    """A fact the estate contains and this version does not extract: its line holds what the gap
    names, and the fact is still absent — when it appears, move it from known_gaps into facts."""
    path, _, line = gap["cite"].partition(":")
    assert holds(read_lines(ESTATE / path)[int(line) - 1], gap["ident"])
    assert gap["until"].startswith("issue ")
    absent = gap["absent"]
    if absent:
        now = [k for k in extracted if k[0] == gap["service"] and k[1] == absent["family"]
               and absent["key_contains"] in k[2]]
        assert not now, f"known gap now extracted ({gap['what']}): move it into facts: {now}"


def test_the_estate_has_every_trap_the_issue_names(extracted):
    """The estate keeps its traps: each is a fact (or must-not) of the answer key."""
    fams = Counter(k[1] for k in FACTS)
    keys = "\n".join(k[2] for k in FACTS)
    services = {k[0] for k in FACTS}
    assert {"order-center", "payment-center", "stock-center", "fulfillment-center", "fulfillment-worker",
            "promotion-center"} <= services
    assert "alias=pay-main" in keys and "alias=pay-gray" in keys  # one interface, two aliases
    assert "getOrder(long)" in keys and "getOrder(long,boolean)" in keys  # overloads
    assert "InvoiceService" in keys  # a consumer with no provider
    assert "table://pay_flow_202601@" in keys and "table://stock_sku_bak@" in keys
    assert any(f["detail"].get("shard_evidence") == ["ROUTING_CONFIG"] for f in FACTS.values())
    assert any("BIND" in (f["detail"].get("shard_evidence") or ()) for f in FACTS.values())
    statuses = Counter(f["status"] for f in FACTS.values() if f["family"] == "config")
    assert statuses["UNKNOWN"] and statuses["DEFAULT_ONLY"] and statuses["RESOLVED"]
    assert sum(1 for k in FACTS if k[1] == "topic" and "trade_order_status" in k[2] and "PUBLISHES" in k[2]) >= 2
    assert fams["diagnostic"] and any("PARSE_ERROR" in k[2] for k in FACTS)
    assert any("rocketmq://" in k[2] for k in FACTS) and any("http://stock-center" in k[2] for k in FACTS)


# ---------------------------------------------------------------------------------------------
# mutation tests: a temporary copy of the estate, changed, rebuilt and rescanned


def _scan_variant(tmp_path: Path, edit) -> dict:
    src = tmp_path / "src"
    shutil.copytree(ESTATE, src, symlinks=True)
    edit(src)
    repo = tmp_path / "repo"
    sha = commit_tree(src, repo)
    out = tmp_path / "ir"
    scan(repo, sha, ScanOptions(out=out, repo_id="fixtures/estate", quiet=True, jobs=1))
    return project_all(out)


def _comparable(facts: dict) -> dict:
    return {k: (v["status"], v["detail"]) for k, v in facts.items()}


#: single lines whose deletion leaves the file well-formed; each proves the facts citing it
DELETABLE = [
    "order/order-service/src/main/java/com/jd/trade/order/mq/OrderEventPublisher.java:34",
    "order/order-service/src/main/resources/spring/jmq-context.xml:15",
    "payment/payment-service/src/main/java/com/jd/trade/payment/job/PayTimeoutCompensateJob.java:24",
    "fulfillment/fulfillment-worker/src/main/java/com/jd/trade/fulfillment/worker/InvoiceRetryJob.java:19",
    "stock/stock-service/src/main/java/com/jd/trade/stock/cache/ReserveGuard.java:23",
]


@pytest.mark.parametrize("cite", DELETABLE)
def test_deleting_a_line_removes_exactly_the_facts_it_proved(tmp_path, extracted, cite):
    path, _, line = cite.partition(":")
    proved = {k for k, f in FACTS.items() if f["cite"] == cite}
    assert proved, f"no fact cites {cite}"

    def delete(src: Path) -> None:
        data = (src / path).read_bytes().split(b"\n")
        del data[int(line) - 1]
        (src / path).write_bytes(b"\n".join(data))

    after = _comparable(_scan_variant(tmp_path, delete))
    before = _comparable(extracted)
    # a listener class whose binding line is gone is no silent non-entry: it gets ENTRY_UNRESOLVED (entry hints)
    hinted = {k for k in set(after) - set(before) if k[1] == "diagnostic" and k[2].startswith("ENTRY_UNRESOLVED ")
              and "yields no entry" in k[2]}
    assert not hinted or any(k[1] == "entry" for k in proved)  # only where the deleted line made an entry
    assert set(before) - set(after) == proved
    assert {k: v for k, v in before.items() if k not in proved} == {k: v for k, v in after.items() if k not in hinted}


def test_removing_the_shard_key_from_a_where_raises_shard_broadcast(tmp_path, extracted):
    """order_item is routed by order_id (ShardingSphere); a select without it reads every shard."""
    mapper = "order/order-dao/src/main/resources/mapper/OrderItemMapper.xml"
    assert not any("SHARD_BROADCAST" in k[2] for k in extracted)

    def drop_key(src: Path) -> None:
        text = (src / mapper).read_text(encoding="utf-8")
        assert "where order_id = #{orderId}" in text
        (src / mapper).write_text(text.replace("where order_id = #{orderId}", "where sku_id > 0"), encoding="utf-8")

    after = _scan_variant(tmp_path, drop_key)
    broadcast = [k for k in after if k[1] == "diagnostic" and k[2].startswith("SHARD_BROADCAST")]
    assert len(broadcast) == 1 and "selectSkuIds" in broadcast[0][2] and broadcast[0][0] == "order-center"
    assert set(_comparable(extracted)) - set(_comparable(after)) == set()


def test_the_fixture_build_leaves_the_answer_key_out(estate):
    repo, sha = estate
    import subprocess
    names = subprocess.run(["git", "-C", str(repo), "ls-tree", "-r", "--name-only", sha],
                           capture_output=True, text=True, check=True).stdout.split()
    assert "expected.json" not in names and "pom.xml" in names
    assert build_fixture_repo  # the same builder the demo and the samples use


def test_removing_the_resync_job_leaves_a_send_without_compensation(tmp_path, extracted):
    """StockChangedNotifier.corrected only logs a lost send; StockResyncJob (a scheduled scan of
    drifted stock that sends again) covers it. Without the job's @Scheduled there is no worker and
    exactly one more NO_COMPENSATION appears, for that send."""
    job = "stock/stock-service/src/main/java/com/jd/trade/stock/job/StockResyncJob.java"
    before = {k for k in extracted if k[1] == "diagnostic" and k[2].startswith("NO_COMPENSATION")}
    assert len(before) == 1 and "stock_released_topic" in next(iter(before))[2]

    def unschedule(src: Path) -> None:
        text = (src / job).read_text(encoding="utf-8")
        assert "    @Scheduled(fixedDelay = 300000)\n" in text
        (src / job).write_text(text.replace("    @Scheduled(fixedDelay = 300000)\n", ""), encoding="utf-8")

    after = _scan_variant(tmp_path, unschedule)
    new = {k for k in after if k[1] == "diagnostic" and k[2].startswith("NO_COMPENSATION")} - before
    assert len(new) == 1
    (key,) = new
    assert key[0] == "stock-center" and "StockChangedNotifier.java:28" in key[2] and "stock_changed_topic" in key[2]
