"""Adding a protocol the engine has no construct for (docs/rules.md §10): rule files plus one small
mechanism, registered by name. The made-up "beacon" framework routes a signal to the public method of
a ``Station`` subclass named like the signal's channel — a construct no built-in mechanism reads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from diting.errors import UserError
from diting.graph.store import build
from diting.graph.query import query
from diting.probes import mechanisms
from diting.probes.mechanisms import Mechanism, register
from diting.rules import load_rules
from tests.conftest import estate_on_lib, make_repo, scan_repo

RULES = """
family: acme-beacon
version: 1
owner: acme
description: A made-up signal framework; its stations need a mechanism of their own.
protocols:
  - {scheme: beacon, alignment: MQ, entry_kinds: [BEACON_HANDLER], description: beacon channels}
rules:
  - id: acme.station
    version: 1
    owner: acme
    family: acme-beacon
    description: "A Station subclass handles every channel named like one of its public methods."
    source: the framework's manual (made up)
    match: {type: {supertype: com.acme.beacon.Station}}
    emits: {kind: BEACON_STATION, protocol: beacon}
  - id: acme.fire
    version: 1
    owner: acme
    family: acme-beacon
    description: "Beacon.fire(channel, payload) sends a signal."
    source: the framework's manual (made up)
    match: {call: {receiver_type: com.acme.beacon.Beacon, method: fire, min_arity: 2, args: {0: topic, 1: payload}}}
    emits: {kind: MQ_SEND, protocol: beacon}
"""


def beacon_stations(pc) -> None:
    """Each public method of a loaded Station subclass: a handler entry subscribed to the channel of its name."""
    for c in pc.ctx.by_emit.get("BEACON_STATION", []):
        if not pc.live_handler_class(c):
            continue
        rule = pc.s.rules.by_id[c["rule"]]
        proto = rule.emits.protocol
        kind = rule.emits.entry_kind or pc.s.rules.default_entry_kind(proto, "OTHER")
        for m in pc.methods_of(c["type"]["binary"], c["module"]):
            if "public" not in m["modifiers"] or not m["has_body"]:
                continue
            urn = f"{proto}://{m['name']}"
            erid = pc.entry(kind, urn, m, c, {"protocol": proto}, rule.emits.kind)
            trid = pc.topic(urn, c, {"protocol": proto})
            pc.rs.relation("SUBSCRIBES", erid, pc.rs.entities[erid]["stable_id"], target_rid=trid, target_key=urn,
                           status="RESOLVED", evidence=[pc.cseg(c)], attributes={"protocol": proto})


BEACON = Mechanism("beacon_stations", beacon_stations, {"BEACON_STATION": frozenset({"type"})})

ESTATE = estate_on_lib("beacon-lib", {
    "src/main/java/com/acme/beacon/Station.java": "package com.acme.beacon;\npublic abstract class Station { }\n",
    "src/main/java/com/acme/beacon/Beacon.java":
        "package com.acme.beacon;\npublic interface Beacon { void fire(String channel, Object payload); }\n",
}, {
    "stock": {"src/main/java/com/example/PKG/StockStation.java": """package com.example.PKG;
@org.springframework.stereotype.Component
public class StockStation extends com.acme.beacon.Station {
    public void orderPlaced(String order) { }
    private void audit() { }
}
"""},
    "order": {"src/main/java/com/example/PKG/OrderService.java": """package com.example.PKG;
@org.springframework.stereotype.Service
public class OrderService {
    @org.springframework.beans.factory.annotation.Autowired private com.acme.beacon.Beacon beacon;
    public void place(long sku) { beacon.fire("orderPlaced", "o-" + sku); }
}
"""},
})


@pytest.fixture()
def beacon():
    register(BEACON)
    yield BEACON
    mechanisms.unregister(BEACON.name)


def test_a_protocol_with_its_own_construct_is_rule_files_and_one_registered_mechanism(beacon, tmp_path):
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "acme-beacon.yaml").write_text(RULES, encoding="utf-8")
    repo, _ = make_repo(tmp_path, ESTATE)
    result = scan_repo(repo, tmp_path / "ir", rules_dirs=[rules], jobs=1)
    db = tmp_path / "g.duckdb"
    build(db, [tmp_path / "ir"])
    _, entries = query(db, "SELECT service_id, entry_kind, urn FROM entries WHERE entry_kind <> 'MAIN' ORDER BY ALL")
    assert entries == [("stock", "BEACON_HANDLER", "beacon://orderPlaced")]  # the private method is no handler
    _, rows = query(db, "SELECT src_service, dst_service, edge_kind, urn, resolution_status FROM cross_service_edges "
                        "WHERE src_service <> coalesce(dst_service, '') ORDER BY ALL")
    assert rows == [("order", "stock", "MQ", "beacon://orderPlaced", "RESOLVED")]
    for p in result.packages:  # a registered mechanism changes what a scan writes: every package says so
        tools = json.loads((Path(p.path) / "analysis_input.json").read_text(encoding="utf-8"))["tool_versions"]
        assert tools["mechanism:beacon_stations"] == "tests.test_mechanisms.beacon_stations"


def test_without_its_mechanism_the_emit_kind_is_refused(tmp_path):
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "acme-beacon.yaml").write_text(RULES.replace("BEACON_STATION", "BEACON_STATION2"), encoding="utf-8")
    with pytest.raises(UserError, match="BEACON_STATION2 is no emit kind"):
        load_rules([rules])


def test_a_mechanism_name_or_emit_kind_is_taken_once(beacon):
    with pytest.raises(UserError, match="already registered"):
        register(Mechanism("beacon_stations", beacon_stations))
    with pytest.raises(UserError, match="already registered"):
        register(Mechanism("mq_sends", beacon_stations))
    with pytest.raises(UserError, match="one of the engine's"):
        register(Mechanism("beacon_two", beacon_stations, {"MQ_SEND": frozenset({"call"})}))
    with pytest.raises(UserError, match="lower-case"):
        register(Mechanism("Beacon", beacon_stations))
    assert [m.name for m in mechanisms.mechanisms()][-4:] == ["beacon_stations", "sql", "loaded", "sql_ledger"]


def test_a_failing_registered_mechanism_is_named(tmp_path):
    def broken(pc) -> None:
        raise KeyError("type")

    register(Mechanism("broken_family", broken))
    try:
        repo, _ = make_repo(tmp_path, ESTATE)
        with pytest.raises(UserError, match=r"mechanism broken_family \(tests.test_mechanisms.*broken\) failed in "
                                            r"package .*: KeyError: 'type'"):
            scan_repo(repo, tmp_path / "ir", jobs=1)
    finally:
        mechanisms.unregister("broken_family")


def test_a_mechanism_is_registered_whole_or_not_at_all():
    with pytest.raises(UserError, match="one of the engine's"):
        register(Mechanism("half_done", beacon_stations, {"AAA_GOOD": frozenset({"type"}), "MQ_SEND": frozenset({"call"})}))
    register(Mechanism("half_done", beacon_stations, {"AAA_GOOD": frozenset({"type"})}))  # nothing was left behind
    mechanisms.unregister("half_done")
    for bad in (Mechanism("name\n", beacon_stations), Mechanism(7, beacon_stations),  # type: ignore[arg-type]
                Mechanism("listy", beacon_stations, ["X"])):  # type: ignore[arg-type]
        with pytest.raises(UserError):
            register(bad)


def test_a_huge_failure_message_is_cut_and_the_scan_ends(tmp_path):
    def loud(pc) -> None:
        raise ValueError("x" * 700_000 + "\nsecond line")

    register(Mechanism("loud_family", loud))
    try:
        repo, _ = make_repo(tmp_path, ESTATE)
        with pytest.raises(UserError) as got:
            scan_repo(repo, tmp_path / "ir", jobs=2)
        assert len(got.value.message) < 1000 and "\n" not in got.value.message
        assert len(str(got.value.__cause__ or "")) < 5000  # what comes back from the worker is small too
    finally:
        mechanisms.unregister("loud_family")
