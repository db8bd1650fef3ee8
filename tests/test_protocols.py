"""Protocols as data (rules/protocols.yaml, docs/middleware.md §5, docs/rules.md §2.3): a URN scheme, its entry kinds
and the alignment rule it takes part in are declared in rule files; a made-up protocol added by rule
files alone is scanned, recorded in every package and aligned by the graph."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from diting.errors import UserError
from diting.graph.store import build
from diting.graph.query import query
from diting.rules import load_rules
from tests.conftest import estate_on_lib, run_cli
from tests.stagekit import scan_memory

#: a made-up RPC framework: @Servant provides an interface, @Proxy fields consume it
RPC_RULES = """
family: acme-rpc
version: 1
owner: acme
description: A made-up RPC framework, declared by rule files alone.
protocols:
  - scheme: acmerpc
    alignment: RPC
    entry_kinds: [ACME_SERVANT]
    description: providers bound by interface and group
rules:
  - id: acme.servant
    version: 1
    owner: acme
    family: acme-rpc
    description: "@Servant(group) provides the class's interface."
    source: the framework's manual (made up)
    match: {annotation: {fqn: com.acme.rpc.Servant, targets: [TYPE], attributes: {group: group}}}
    emits: {kind: RPC_PROVIDER, protocol: acmerpc}
  - id: acme.servant-bean
    version: 1
    owner: acme
    family: acme-rpc
    description: "@Servant classes are beans."
    source: the framework's manual (made up)
    match: {annotation: {fqn: com.acme.rpc.Servant, targets: [TYPE]}}
    emits: {kind: BEAN}
  - id: acme.proxy
    version: 1
    owner: acme
    family: acme-rpc
    description: "@Proxy(group) fields consume their interface."
    source: the framework's manual (made up)
    match: {annotation: {fqn: com.acme.rpc.Proxy, targets: [FIELD], attributes: {group: group}}}
    emits: {kind: RPC_CONSUMER, protocol: acmerpc}
"""

#: a made-up message bus: @OnMessage(topic) methods consume, Bus.post(topic, payload) publishes
MQ_RULES = """
family: acme-bus
version: 1
owner: acme
description: A made-up message bus, declared by rule files alone.
protocols:
  - {scheme: acmebus, alignment: MQ, entry_kinds: [MQ_CONSUMER], description: topics of the bus}
rules:
  - id: acme.on-message
    version: 1
    owner: acme
    family: acme-bus
    description: "@OnMessage(topic) methods consume the topic."
    source: the bus's manual (made up)
    match: {annotation: {fqn: com.acme.bus.OnMessage, targets: [METHOD], attributes: {value: topic}}}
    emits: {kind: MQ_LISTENER, protocol: acmebus}
  - id: acme.post
    version: 1
    owner: acme
    family: acme-bus
    description: "Bus.post(topic, payload) publishes."
    source: the bus's manual (made up)
    match: {call: {receiver_type: com.acme.bus.Bus, method: post, min_arity: 2, args: {0: topic, 1: payload}}}
    emits: {kind: MQ_SEND, protocol: acmebus}
"""

LIB = {
    "src/main/java/com/acme/rpc/Servant.java": "package com.acme.rpc;\npublic @interface Servant { String group() default \"\"; }\n",
    "src/main/java/com/acme/rpc/Proxy.java": "package com.acme.rpc;\npublic @interface Proxy { String group() default \"\"; }\n",
    "src/main/java/com/acme/bus/OnMessage.java": "package com.acme.bus;\npublic @interface OnMessage { String value(); }\n",
    "src/main/java/com/acme/bus/Bus.java": "package com.acme.bus;\npublic interface Bus { void post(String topic, Object payload); }\n",
    "src/main/java/com/acme/api/StockApi.java": "package com.acme.api;\npublic interface StockApi { boolean lock(long sku); }\n",
}


ESTATE = estate_on_lib("acme-lib", LIB, {
    "stock": {
        "src/main/java/com/example/PKG/StockServant.java": """package com.example.PKG;
@com.acme.rpc.Servant(group = "trade")
public class StockServant implements com.acme.api.StockApi {
    public boolean lock(long sku) { return true; }
}
""",
        "src/main/java/com/example/PKG/Restock.java": """package com.example.PKG;
@org.springframework.stereotype.Component
public class Restock {
    @com.acme.bus.OnMessage("order.placed") public void on(String order) { }
}
"""},
    "order": {
        "src/main/java/com/example/PKG/OrderService.java": """package com.example.PKG;
@org.springframework.stereotype.Service
public class OrderService {
    @com.acme.rpc.Proxy(group = "trade") private com.acme.api.StockApi stock;
    @org.springframework.beans.factory.annotation.Autowired private com.acme.bus.Bus bus;
    public void place(long sku) {
        if (stock.lock(sku)) { bus.post("order.placed", "o-" + sku); }
    }
}
"""},
})


@pytest.fixture(scope="module")
def graph(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("protocols")
    rules = tmp / "rules"
    rules.mkdir()
    (rules / "acme-rpc.yaml").write_text(RPC_RULES, encoding="utf-8")
    (rules / "acme-bus.yaml").write_text(MQ_RULES, encoding="utf-8")
    result = scan_memory(ESTATE, tmp / "ir", rules_dirs=[rules])
    db = tmp / "g.duckdb"
    build(db, [tmp / "ir"])
    return result, db


def test_a_protocol_added_by_rule_files_alone_is_aligned(graph):
    result, db = graph
    _, rows = query(db, "SELECT src_service, dst_service, edge_kind, urn, resolution_status, match_basis "
                        "FROM cross_service_edges WHERE src_service <> coalesce(dst_service, '') ORDER BY ALL")
    assert rows == [
        ("order", "stock", "MQ", "acmebus://order.placed", "RESOLVED", "TOPIC"),
        ("order", "stock", "RPC", "acmerpc://com.acme.api.StockApi#lock", "RESOLVED", "SIGNATURE"),
    ]
    _, entries = query(db, "SELECT service_id, entry_kind, urn FROM entries WHERE entry_kind <> 'MAIN' ORDER BY ALL")
    assert ("stock", "ACME_SERVANT", "acmerpc://com.acme.api.StockApi#lock") in entries  # the protocol's own kind


def test_every_package_records_the_protocol_table(graph):
    result, db = graph
    for p in result.packages:
        table = json.loads((Path(p.path) / "analysis_input.json").read_text(encoding="utf-8"))["protocols"]
        assert table["acmerpc"] == {"alignment": "RPC", "entry_kinds": ["ACME_SERVANT"]}
        assert table["amqp"]["routing"] == "amqp-exchange" and table["event"]["alignment"] == "IN_PROCESS"
    _, rows = query(db, "SELECT DISTINCT scheme, alignment FROM protocols WHERE scheme LIKE 'acme%' ORDER BY 1")
    assert rows == [("acmebus", "MQ"), ("acmerpc", "RPC")]


def test_the_shipped_table_declares_every_scheme_the_shipped_rules_emit():
    rs = load_rules()
    emitted = {r.emits.protocol for r in rs.by_id.values() if r.emits.protocol}
    assert emitted <= set(rs.protocols)
    assert rs.protocol_table()["jsf"] == {"alignment": "RPC", "entry_kinds": ["JSF_PROVIDER"]}


def test_a_rule_naming_an_undeclared_protocol_or_entry_kind_is_refused(tmp_path):
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "bad.yaml").write_text(RPC_RULES.replace("protocol: acmerpc}\n  - id: acme.servant-bean",
                                                      "protocol: acmerpc2}\n  - id: acme.servant-bean"),
                                    encoding="utf-8")
    with pytest.raises(UserError, match="acmerpc2.*not a declared protocol"):
        load_rules([rules])
    (rules / "bad.yaml").write_text(RPC_RULES.replace("protocol: acmerpc}\n  - id: acme.servant-bean",
                                                      "protocol: acmerpc, entry_kind: NOPE}\n  - id: acme.servant-bean"),
                                    encoding="utf-8")
    with pytest.raises(UserError, match="entry_kind 'NOPE'"):
        load_rules([rules])
    r = run_cli("rules", "--rules", str(rules))
    assert r.returncode == 2 and "NOPE" in r.stderr and "Traceback" not in r.stderr


def test_conflicting_declarations_align_under_neither(graph, tmp_path):
    """Two packages of one graph that declare a scheme differently: no row on it, one finding."""
    import shutil
    result, db = graph
    order = next(Path(p.path) for p in result.packages if p.service_id == "order")
    from diting.graph import align_rows, align_rpc
    con_db = tmp_path / "g.duckdb"
    shutil.copy(db, con_db)
    import duckdb
    con = duckdb.connect(str(con_db))
    scan = json.loads((order / "manifest.json").read_text(encoding="utf-8"))["scan_id"]
    con.execute("UPDATE protocols SET alignment = 'NONE' WHERE scheme = 'acmerpc' AND scan_id = ?", [scan])
    protos = align_rows.protocols(con)
    assert "acmerpc" not in protos.table and protos.conflicts["acmerpc"] == ["NONE", "RPC"]
    rows, findings = align_rpc.align_rpc(con)
    assert not [r for r in rows if (r.urn or "").startswith("acmerpc://")]
    assert [f.code for f in findings] == ["PROTOCOL_CONFLICT"]
    con.close()
