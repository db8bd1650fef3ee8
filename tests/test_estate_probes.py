"""Middleware probes on the fixture estate: the JD forms (JSF, JMQ, Ducc, JimDB) it carries.

order-center (order/order-service) provides OrderQueryService over JSF (spring/jsf-provider.xml,
alias from the dev profile), listens to JMQ (an XML listener and a @JmqListener), publishes
directly and through a wrapper producer bean whose topic is an application.yml placeholder,
reads two Ducc keys and locks orders in JimDB. promotion-center (a war) consumes
OrderQueryService twice — an XML <jsf:consumer> loaded through web.xml and a @Consumer field —
against the released order-export 1.3.0, which is not this repository's source.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from diting.scan.pipeline import ScanOptions, scan

ORDER = "com.jd.trade:order-service"
PROMO = "com.jd.trade:promotion-service"
IFACE = "com.jd.trade.order.api.OrderQueryService"
IMPL = f"{ORDER}/com.jd.trade.order.service.OrderQueryServiceImpl"
PUBLISHER = f"{ORDER}/com.jd.trade.order.mq.OrderEventPublisher"
LOCKS = f"{ORDER}/com.jd.trade.order.cache.OrderLockCache"
SWITCHES = f"{ORDER}/com.jd.trade.order.config.OrderSwitches"

#: every method of OrderQueryService as order-center's source declares it
PROVIDED = {
    ("getOrder", ("long",)),
    ("getOrder", ("long", "boolean")),
    ("getOrder", ("java.lang.String",)),
    ("listOrders", ("java.lang.String", "int", "int")),
    ("batchGet", ("java.util.List", "java.lang.String[]")),
}


class Pkg:
    """One package's records, by file and by record_id."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.files = {name: [json.loads(x) for x in (path / name).read_text(encoding="utf-8").splitlines()]
                      for name in ("entities.jsonl", "relations.jsonl", "config_bindings.jsonl",
                                   "diagnostics.jsonl", "source_segments.jsonl")}
        self.by_id = {r["record_id"]: r for recs in self.files.values() for r in recs}

    def entities(self, kind: str) -> list[dict]:
        return [e for e in self.files["entities.jsonl"] if e["kind"] == kind]

    def relations(self, kind: str) -> list[dict]:
        return [r for r in self.files["relations.jsonl"] if r["kind"] == kind]

    def bindings(self) -> dict[tuple[str, str], dict]:
        return {(b["consumer_ref"]["record_id"], b["config_key"]): b for b in self.files["config_bindings.jsonl"]}

    def diagnostics(self, code: str) -> list[dict]:
        return [d for d in self.files["diagnostics.jsonl"] if d["code"] == code]


def _target(r: dict) -> str | None:
    return r["target_ref"]["record_id"] if r["target_ref"] else None


def _package(result, service_id: str) -> Pkg:
    (p,) = [p for p in result.packages if p.service_id == service_id]
    return Pkg(p.path)


@pytest.fixture(scope="module")
def order(estate_scan) -> Pkg:
    return _package(estate_scan[0], "order-center")


@pytest.fixture(scope="module")
def promo(estate_scan) -> Pkg:
    return _package(estate_scan[0], "promotion-center")


# ------------------------------------------------------------------ JSF provider (XML)
def _sig(name: str, sig: tuple[str, ...]) -> str:
    return f"{name}({','.join(sig)})"


def test_jsf_xml_provider_contracts_and_alias_from_the_active_profile(order):
    contracts = [c for c in order.entities("CONTRACT") if c["role"] == "PROVIDED"]
    assert {(c["urn"], tuple(c["signature"])) for c in contracts} == \
        {(f"jsf://{IFACE}#{n}", s) for n, s in PROVIDED}
    for c in contracts:
        name = c["urn"].rsplit("#", 1)[1]
        assert c["record_id"] == f"contract:PROVIDED:jsf://{IFACE}#{_sig(name, tuple(c['signature']))}"
        assert c["attributes"]["interface"] == IFACE
        assert c["attributes"]["protocol"] == "jsf"
        assert c["attributes"]["loaded"] is True
    exposes = order.relations("EXPOSES")
    # the ref bean (the @Service implementation) exposes every method under the dev alias
    assert sorted(_target(r) for r in exposes) == sorted(c["record_id"] for c in contracts)
    for r in exposes:
        assert r["source_ref"]["record_id"] == f"bean:{ORDER}/orderQueryServiceImpl"
        assert r["resolution_status"] == "RESOLVED"
        assert r["attributes"] == {"alias": "trade-order-dev", "timeout": "800", "protocol": "jsf"}
    # ${jsf.order.alias}: application-dev.yml (active) wins; application-prod.yml is never read
    b = order.bindings()[(f"bean:{ORDER}/orderQueryServiceImpl", "config://jsf.order.alias")]
    assert (b["value_resolution"], b["value"]) == ("RESOLVED", "trade-order-dev")
    (src,) = b["source_refs"]
    seg = order.by_id[src["record_id"]]
    assert seg["locator"]["path"] == "order/order-service/src/main/resources/application-dev.yml"
    assert seg["content"] == "    alias: trade-order-dev"


def test_jsf_provider_entries_of_methods_without_overloads(order):
    entries = {(e["urn"], e["handler_ref"]["record_id"]): e for e in order.entities("ENTRY")
               if e["entry_kind"] == "JSF_PROVIDER"}
    for name, sig in (("listOrders", ("java.lang.String", "int", "int")),
                      ("batchGet", ("java.util.List", "java.lang.String[]"))):
        e = entries[(f"jsf://{IFACE}#{name}", f"method:{IMPL}#{_sig(name, sig)}")]
        assert e["attributes"]["alias"] == "trade-order-dev"
        assert e["attributes"]["interface"] == IFACE


def test_jsf_provider_entry_per_overload(order):
    entries = {(e["urn"], e["handler_ref"]["record_id"]) for e in order.entities("ENTRY")
               if e["entry_kind"] == "JSF_PROVIDER"}
    assert entries == {(f"jsf://{IFACE}#{n}", f"method:{IMPL}#{_sig(n, s)}") for n, s in PROVIDED}


# ------------------------------------------------------------------ JSF consumers (XML and @Consumer)
def test_jsf_consumers_in_the_war_against_the_released_contract(promo):
    # order-export 1.3.0 is not this repository's source: the interface's parameter types are unknown,
    # and the in-repo 1.4.0-SNAPSHOT interface (getOrder(long,boolean)) must not be borrowed
    contracts = {c["record_id"]: c for c in promo.entities("CONTRACT")}
    get_rid = f"contract:CONSUMED:jsf://{IFACE}#getOrder(?,?)"
    list_rid = f"contract:CONSUMED:jsf://{IFACE}#listOrders(?,?,?)"
    assert set(contracts) == {get_rid, list_rid}
    for rid, urn, sig in ((get_rid, f"jsf://{IFACE}#getOrder", ["?", "?"]),
                          (list_rid, f"jsf://{IFACE}#listOrders", ["?", "?", "?"])):
        c = contracts[rid]
        assert (c["role"], c["urn"], c["signature"]) == ("CONSUMED", urn, sig)
        assert c["attributes"]["signature_known"] is False
        assert c["attributes"]["interface"] == IFACE

    binds = {(r["source_ref"]["record_id"], _target(r)): r for r in promo.relations("BINDS_TO")
             if _target(r) in contracts}
    xml_bean = f"bean:{PROMO}/orderQueryService"
    ann_bean = f"bean:{PROMO}/com.jd.trade.promotion.service.NewBuyerChecker#orderReader"
    assert set(binds) == {(xml_bean, get_rid), (ann_bean, list_rid)}
    assert binds[(xml_bean, get_rid)]["attributes"] == \
        {"alias": "trade-order", "timeout": "500", "retries": "1", "protocol": "jsf"}
    assert binds[(ann_bean, list_rid)]["attributes"] == {"alias": "trade-order", "timeout": "300", "protocol": "jsf"}

    # the XML consumer bean is injected by name into the @Service that calls it
    injects = {r["source_ref"]["record_id"]: r for r in promo.relations("INJECTS")}
    inj = injects[f"field:{PROMO}/com.jd.trade.promotion.service.OrderCouponService.orderQueryService"]
    assert (_target(inj), inj["resolution_status"]) == (xml_bean, "RESOLVED")

    calls = {_target(r): r for r in promo.relations("CALLS") if _target(r) in contracts}
    assert set(calls) == {get_rid, list_rid}
    issue = f"{PROMO}/com.jd.trade.promotion.service.OrderCouponService#issueAfterPurchase(long)"
    new_buyer = f"{PROMO}/com.jd.trade.promotion.service.NewBuyerChecker#isNewBuyer(java.lang.String)"
    for rid, caller, site, field in ((get_rid, issue, 0, "orderQueryService"),
                                     (list_rid, new_buyer, 1, "orderReader")):
        r = calls[rid]
        assert r["source_ref"]["record_id"] == f"method:{caller}"
        assert r["resolution_status"] == "RESOLVED"
        assert r["candidate_target_refs"] == []
        assert r["callsite_id"] == f"{caller}@{site}"  # isNewBuyer: getTotal() is call 0, listOrders call 1
        assert r["attributes"]["dispatch_kind"] == "RPC"
        assert r["attributes"]["binding_evidence"] == f"field {field}"
        assert r["attributes"]["declared_target"] == contracts[rid]["urn"]
    assert promo.diagnostics("DECLARED_UNUSED") == []
    # the war's context comes from web.xml: nothing is provided, nothing else appears
    assert [e["entry_kind"] for e in promo.entities("ENTRY")] == []


# ------------------------------------------------------------------ JMQ
def test_jmq_subscriptions_xml_listener_and_annotation(order):
    entries = {e["urn"]: e for e in order.entities("ENTRY") if e["entry_kind"] == "MQ_CONSUMER"}
    assert set(entries) == {"jmq://cashier_pay_result", "jmq://trade_delivery_signed"}
    xml = entries["jmq://cashier_pay_result"]
    assert xml["handler_ref"]["record_id"] == \
        f"method:{ORDER}/com.jd.trade.order.mq.PayResultListener#onMessage(java.util.List)"
    ann = entries["jmq://trade_delivery_signed"]  # TradeConstants.TOPIC_PREFIX + "delivery_signed", across modules
    assert ann["handler_ref"]["record_id"] == \
        f"method:{ORDER}/com.jd.trade.order.mq.DeliverySignedListener#onSigned(java.lang.String)"
    assert ann["attributes"]["consumer_group"] == "order-delivery"
    subs = {r["source_ref"]["record_id"]: r for r in order.relations("SUBSCRIBES")}
    assert set(subs) == {e["record_id"] for e in entries.values()}
    for urn, e in entries.items():
        r = subs[e["record_id"]]
        assert (_target(r), r["resolution_status"]) == (f"topic:{urn}", "RESOLVED")
        assert r["attributes"]["value_basis"] == "RESOLVED"


def test_jmq_publishes_direct_send_and_wrapper_bean_topic_from_application_yml(order):
    resolved = {(r["source_ref"]["record_id"], _target(r)): r for r in order.relations("PUBLISHES")
                if r["resolution_status"] == "RESOLVED"}
    created = f"{PUBLISHER}#orderCreated(long,java.lang.String)"
    status = f"{PUBLISHER}#statusChanged(com.jd.trade.order.api.dto.OrderDTO)"
    paid = f"{PUBLISHER}#orderPaid(java.lang.String,java.lang.String)"
    closed = f"{PUBLISHER}#orderClosed(java.lang.String,java.lang.String)"
    relay = f"{ORDER}/com.jd.trade.order.job.OutboxRelayJob#relay()"
    # one topic, two event types (paid and closed) and the outbox scanner, all through the wrapper bean
    assert set(resolved) == {(f"method:{created}", "topic:jmq://trade_order_created"),
                             (f"method:{status}", "topic:jmq://trade_order_status"),
                             (f"method:{paid}", "topic:jmq://trade_order_status"),
                             (f"method:{closed}", "topic:jmq://trade_order_status"),
                             (f"method:{relay}", "topic:jmq://trade_order_status")}
    assert resolved[(f"method:{created}", "topic:jmq://trade_order_created")]["callsite_id"] == f"{created}@2"
    wrapped = resolved[(f"method:{status}", "topic:jmq://trade_order_status")]
    assert wrapped["callsite_id"] == f"{status}@0"
    assert wrapped["attributes"]["value_basis"] == "RESOLVED"
    assert {t["urn"] for t in order.entities("TOPIC")} == {
        "jmq://cashier_pay_result", "jmq://trade_delivery_signed", "jmq://trade_order_created",
        "jmq://trade_order_status"}
    # the wrapper's topic is the bean property <property name="topic" value="${jmq.topic.order-status}"/>
    bean = order.by_id[f"bean:{ORDER}/orderStatusProducer"]
    assert bean["attributes"]["type"] == "com.jd.trade.order.mq.TradeTopicProducer"
    assert bean["attributes"]["properties"]["topic"] == {"ref": None, "value": "${jmq.topic.order-status}"}
    b = order.bindings()[(f"method:{status}", "config://jmq.topic.order-status")]
    assert (b["value_resolution"], b["value"]) == ("RESOLVED", "trade_order_status")
    (src,) = b["source_refs"]
    seg = order.by_id[src["record_id"]]
    assert seg["locator"]["path"] == "order/order-service/src/main/resources/application.yml"
    assert seg["content"] == "    order-status: trade_order_status"
    # inside the wrapper the topic is a plain field: honestly unresolved
    inner = [r for r in order.relations("PUBLISHES")
             if r["source_ref"]["record_id"] == f"method:{ORDER}/com.jd.trade.order.mq.TradeTopicProducer#send(java.lang.Object)"]
    assert [(r["resolution_status"], r["match_keys"]) for r in inner] == \
        [("UNRESOLVED", {"topic_expression": "topic", "protocol": "jmq"})]
    (d,) = [order.by_id[x["record_id"]] for x in inner[0]["diagnostic_refs"]]
    assert d["code"] == "TOPIC_UNRESOLVED"


def test_resource_injection_of_the_jmq_producer_by_name(order):
    (inj,) = [r for r in order.relations("INJECTS")
              if r["source_ref"]["record_id"] == f"field:{PUBLISHER}.jmqProducer"]
    assert _target(inj) == f"bean:{ORDER}/jmqProducer"


# ------------------------------------------------------------------ Ducc
def test_ducc_keys_without_a_snapshot_are_unknown(order):
    keys = {e["urn"]: e for e in order.entities("CONFIG_KEY") if e["urn"].startswith("ducc://")}
    assert set(keys) == {"ducc://order.query.degrade", "ducc://order.audit.permille", "ducc://order.submit.reserve-stock"}
    assert all(k["attributes"]["scheme"] == "ducc" for k in keys.values())
    bindings = order.bindings()
    field = bindings[(f"field:{SWITCHES}.queryDegrade", "ducc://order.query.degrade")]
    read = bindings[(f"method:{SWITCHES}#auditPermille()", "ducc://order.audit.permille")]
    for b, by in ((field, "@LafValue"), (read, "getProperty")):
        assert (b["value_resolution"], b["value"], b["default_value"]) == ("UNKNOWN", None, None)
        assert b["attributes"]["read_by"] == by
        assert b["attributes"]["missing"] == "no config snapshot, and no config file of the active profiles has the key"
        assert b["source_refs"] == []
    (reads,) = [r for r in order.relations("READS") if r["source_ref"]["record_id"] == f"method:{SWITCHES}#auditPermille()"]
    assert (_target(reads), reads["resolution_status"]) == ("config:ducc://order.audit.permille", "RESOLVED")
    assert reads["attributes"]["value_resolution"] == "UNKNOWN"
    unknown = {tuple(sorted(a["record_id"] for a in d["affected_refs"])) for d in order.diagnostics("CONFIG_VALUE_UNKNOWN")}
    submit = f"{ORDER}/com.jd.trade.order.service.OrderSubmitService"
    assert unknown == {tuple(sorted([f"field:{SWITCHES}.queryDegrade", "config:ducc://order.query.degrade"])),
                       tuple(sorted([f"method:{SWITCHES}#auditPermille()", "config:ducc://order.audit.permille"])),
                       tuple(sorted([f"field:{submit}.reserveStock", "config:ducc://order.submit.reserve-stock"]))}


SNAPSHOT_ID = "ducc-trade-dev-2026-01"


@pytest.fixture(scope="module")
def order_with_snapshot(estate, tmp_path_factory) -> Pkg:
    """order-center scanned with a Ducc snapshot that holds one of its two keys."""
    repo, sha = estate
    tmp = tmp_path_factory.mktemp("ducc-snapshot")
    snap = tmp / "snapshot.json"
    snap.write_text(json.dumps({"snapshot_id": SNAPSHOT_ID, "environment": "dev",
                                "captured_at": "2026-01-01T00:00:00Z",
                                "entries": [{"scheme": "ducc", "key": "order.query.degrade", "value": "true"},
                                            {"scheme": "ducc", "key": "order.unrelated.switch", "value": "on"}]}),
                    encoding="utf-8")
    result = scan(repo, sha, ScanOptions(out=tmp / "out", services=["order-center"], repo_id="fixtures/estate",
                                         quiet=True, config_snapshot=snap))
    return _package(result, "order-center")


def test_ducc_key_in_the_snapshot_resolves_and_the_missing_one_stays_unknown(order_with_snapshot):
    bindings = order_with_snapshot.bindings()
    present = bindings[(f"field:{SWITCHES}.queryDegrade", "ducc://order.query.degrade")]
    assert (present["value_resolution"], present["value"]) == ("RESOLVED", "true")
    assert present["attributes"]["snapshot_id"] == SNAPSHOT_ID
    assert present["attributes"]["missing"] is None
    missing = bindings[(f"method:{SWITCHES}#auditPermille()", "ducc://order.audit.permille")]
    assert (missing["value_resolution"], missing["value"], missing["default_value"]) == ("UNKNOWN", None, None)
    unknown = {a["record_id"] for d in order_with_snapshot.diagnostics("CONFIG_VALUE_UNKNOWN") for a in d["affected_refs"]}
    assert "config:ducc://order.audit.permille" in unknown and "config:ducc://order.query.degrade" not in unknown
    # a snapshot key nobody reads makes no key entity
    assert "config:ducc://order.unrelated.switch" not in order_with_snapshot.by_id


def test_ducc_key_missing_from_a_given_snapshot_names_the_snapshot(order_with_snapshot):
    missing = order_with_snapshot.bindings()[(f"method:{SWITCHES}#auditPermille()", "ducc://order.audit.permille")]
    assert missing["attributes"]["missing"] == \
        f"neither config snapshot {SNAPSHOT_ID} nor any config file of the active profiles has the key"


# ------------------------------------------------------------------ JimDB
def test_jimdb_lock_key_prefix_written_and_read(order):
    # PAY_LOCK_KEY = TradeConstants.LOCK_KEY_PREFIX + ":pay:" and LOCK_KEY_PREFIX = "trade:lock:" + MAX_PAGE_SIZE (200)
    (key,) = order.entities("CACHE_KEY")
    assert (key["record_id"], key["urn"], key["attributes"]["protocol"]) == \
        ("cache:jimdb://trade:lock:200:pay:", "jimdb://trade:lock:200:pay:", "jimdb")
    ops = {(r["kind"], r["source_ref"]["record_id"]): r for r in order.relations("WRITES") + order.relations("READS")
           if _target(r) == key["record_id"]}
    assert {k: (r["attributes"]["operation"], r["resolution_status"], r["attributes"]["key_basis"])
            for k, r in ops.items()} == {
        ("WRITES", f"method:{LOCKS}#lock(long,java.lang.String)"): ("setEx", "RESOLVED", "PREFIX"),
        ("WRITES", f"method:{LOCKS}#release(long)"): ("del", "RESOLVED", "PREFIX"),
        ("READS", f"method:{LOCKS}#holder(long)"): ("get", "RESOLVED", "PREFIX"),
    }
    assert all(r["attributes"]["protocol"] == "jimdb" for r in ops.values())
    assert order.diagnostics("CONSTANT_UNRESOLVED") == []


def test_new_probe_forms_keep_order_center_complete(order, estate_scan):
    (p,) = [p for p in estate_scan[0].packages if p.service_id == "order-center"]
    assert p.status == "COMPLETE"  # warnings only: TOPIC_UNRESOLVED inside the wrapper, CONFIG_VALUE_UNKNOWN
    assert {d["severity"] for d in order.files["diagnostics.jsonl"]} <= {"WARNING", "INFO"}
