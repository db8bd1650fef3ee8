"""graph/align.py: the alignment rules of docs/alignment.md (RPC, HTTP, MQ, DATA), one small estate per rule built
straight into the graph tables, and the fixture estate's cross-service edges end to end."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb

from diting.graph import align, align_mq, align_rows, store
from diting.graph.align_mq import filter_admits
from diting.graph.align_rpc import bindings_match, signature_match
from diting.graph.store import build
from diting.graph.query import query
from diting.rules import load_rules

SAMPLES = Path(__file__).resolve().parents[1] / "ir_samples" / "estate"
SHIPPED_PROTOCOLS = load_rules().protocol_table()


class Estate:
    """A hand-made graph: packages with the few entities and relations a rule reads."""

    def __init__(self) -> None:
        self.con = duckdb.connect()
        store._create(self.con)
        self.ents: list[dict] = []
        self.rels: list[dict] = []
        self.n = 0

    def package(self, service: str, label: str = "", kind: str = "SERVICE") -> str:
        scan = f"scan:{service}:{label or '0'}"
        self.con.execute("INSERT INTO packages (scan_id, service_id, kind, repo_id, commit_sha, profile_set, label, "
                         "status, input_digest, analyzer_version, package_dir, manifest_sha256, is_current, load_seq) "
                         "VALUES (?, ?, ?, 'r', 'c', 'default', ?, 'COMPLETE', 'd', 'a', '.', 'm', true, 1)",
                         [scan, service, kind, label])
        for scheme, spec in SHIPPED_PROTOCOLS.items():  # as a scan records them in analysis_input.json
            self.con.execute("INSERT INTO protocols VALUES (?, ?, ?, ?)", [scan, scheme, spec["alignment"],
                                                                           spec.get("routing")])
        return scan

    def entity(self, scan: str, rid: str, kind: str, **fields) -> dict:
        if not any(e["scan_id"] == scan and e["record_id"] == rid for e in self.ents):  # record ids are unique
            self.ents.append(dict(scan_id=scan, record_id=rid, kind=kind, stable_id=rid, **fields))
        return {"scan_id": scan, "record_id": rid}

    def relation(self, scan: str, kind: str, src: str, dst: str | None, status: str = "RESOLVED", **fields) -> str:
        self.n += 1
        rid = f"relation:{self.n}"
        self.rels.append(dict(scan_id=scan, record_id=rid, kind=kind, resolution_status=status,
                              source_ref={"scan_id": scan, "record_id": src},
                              target_ref={"scan_id": scan, "record_id": dst} if dst else None, **fields))
        return rid

    # ---- the constructs the rules read
    def rpc(self, scan: str, role: str, urn: str, sig: list[str], binding: dict | None = None, n: int = 0) -> str:
        crid = f"contract:{role}:{urn}({','.join(sig)})"
        self.entity(scan, crid, "CONTRACT", urn=urn, role=role, signature=sig,
                    attributes={"protocol": urn.split("://")[0], "loaded": True})
        self.relation(scan, "BINDS_TO" if role == "CONSUMED" else "EXPOSES", f"bean:b{n}", crid,
                      attributes={"protocol": urn.split("://")[0], **(binding or {})})
        return crid

    def http(self, scan: str, role: str, urn: str, url: str | None = None, **attrs) -> str:
        crid = f"contract:{role}:{urn}()"
        self.entity(scan, crid, "CONTRACT", urn=urn, role=role, signature=[],
                    attributes={"protocol": "http", "loaded": True, "url": url, **attrs})
        self.relation(scan, "BINDS_TO" if role == "CONSUMED" else "EXPOSES", "bean:x", crid,
                      attributes={"protocol": "http"})
        return crid

    def publish(self, scan: str, urn: str, method: str = "method:pub", **attrs) -> str:
        trid = f"topic:{urn}"
        self.entity(scan, trid, "TOPIC", urn=urn)
        return self.relation(scan, "PUBLISHES", method, trid, attributes={"loaded": True, **attrs})

    def subscribe(self, scan: str, urn: str, entry: str, tag_filter: str | None = None) -> str:
        trid = f"topic:{urn}"
        self.entity(scan, trid, "TOPIC", urn=urn)
        self.entity(scan, entry, "ENTRY", entry_kind="MQ_CONSUMER", urn=urn)
        return self.relation(scan, "SUBSCRIBES", entry, trid, attributes={"tag_filter": tag_filter})

    def table(self, scan: str, urn: str, ds: str | None, op: str, access: str = "CALLED") -> None:
        trid = f"table:{urn}@{ds or '?'}"
        self.entity(scan, trid, "TABLE", urn=urn, datasource=ds)
        self.relation(scan, "WRITES" if op == "WRITE" else "READS", f"stmt:{op}{self.n}", trid,
                      attributes={"access": access})

    def align(self) -> tuple[list[dict], list[dict]]:
        ecols = {"scan_id": "VARCHAR", **store.TABLES["entities.jsonl"][1]}
        rcols = {"scan_id": "VARCHAR", **store.TABLES["relations.jsonl"][1]}
        align._insert(self.con, "entities", ecols, self.ents)
        align._insert(self.con, "relations", rcols, self.rels)
        align.realign(self.con)
        rows = [dict(zip([d[0] for d in c.description], r)) for c in [self.con.execute(
            "SELECT * FROM alignment ORDER BY edge_kind, src_service NULLS FIRST, dst_service NULLS FIRST, urn")]
            for r in c.fetchall()]
        findings = [dict(zip([d[0] for d in c.description], r)) for c in [self.con.execute(
            "SELECT * FROM graph_findings ORDER BY code, service_id, urn")] for r in c.fetchall()]
        return rows, findings


def _edges(rows, kind):
    return [(r["src_service"], r["dst_service"], r["resolution_status"], r["match_basis"]) for r in rows
            if r["edge_kind"] == kind]


# ------------------------------------------------------------------------------------------ RPC

def test_rpc_binding_attributes():
    assert bindings_match({"alias": "a"}, {"alias": "a"})
    assert not bindings_match({"alias": "a"}, {"alias": "b"})
    assert bindings_match({"alias": "*"}, {"alias": "b"}) and bindings_match({"alias": "a"}, {"alias": "*"})
    # the consumer's value is unknown: it matches; the provider's unknown against a known one does not
    assert bindings_match({"alias": None, "alias_resolution": "UNKNOWN"}, {"alias": "b"})
    assert not bindings_match({"alias": "a"}, {"alias": None, "alias_resolution": "UNKNOWN"})
    # undeclared is known and empty (Dubbo's default group): a grouped provider does not match
    assert bindings_match({}, {}) and not bindings_match({}, {"group": "g1"})
    assert bindings_match({"group": "g", "version": "1.0"}, {"group": "g", "version": "1.0"})
    assert not bindings_match({"group": "g", "version": "1.0"}, {"group": "g", "version": "2.0"})
    # a consumer's group list (Dubbo group merging) matches each group it lists, and only those
    assert bindings_match({"group": "m2, m3"}, {"group": "m3"}) and bindings_match({"group": "m2,m3"}, {"group": "m2"})
    assert not bindings_match({"group": "m2,m3"}, {"group": "m1"}) and not bindings_match({"group": "m2,m3"}, {})
    assert not bindings_match({"group": "m2"}, {"group": "m2,m3"})  # a provider registers under one group
    assert not bindings_match({"alias": "a,b"}, {"alias": "a"})  # alias lists are no JSF form


def test_rpc_signatures():
    assert signature_match(["long"], ["long"]) == "SIGNATURE"
    assert signature_match(["?", "?"], ["long", "boolean"]) == "SIGNATURE_PARTIAL"
    assert signature_match(["?PayRequest"], ["com.x.dto.PayRequest"]) == "SIGNATURE_PARTIAL"
    assert signature_match(["?PayRequest"], ["com.x.dto.Other"]) is None
    assert signature_match(["long"], ["long", "int"]) is None
    assert signature_match(["int"], ["long"]) is None


def test_rpc_one_provider_resolves_two_are_ambiguous_none_unresolved():
    e = Estate()
    shop, pay, pay2, misc = (e.package(s) for s in ("shop", "pay", "pay-copy", "misc"))
    urn = "jsf://com.x.PayService#pay"
    e.rpc(shop, "CONSUMED", urn, ["java.lang.String"], {"alias": "main"})
    e.rpc(pay, "PROVIDED", urn, ["java.lang.String"], {"alias": "main"})
    e.rpc(pay, "PROVIDED", urn, ["java.lang.String"], {"alias": "gray"}, n=1)  # second alias: one target
    e.rpc(misc, "CONSUMED", "jsf://com.x.Nobody#call", ["int"], {"alias": "main"})
    rows, findings = e.align()
    assert _edges(rows, "RPC") == [("misc", None, "UNRESOLVED", "NO_PROVIDER"), ("shop", "pay", "RESOLVED", "SIGNATURE")]
    resolved = next(r for r in rows if r["resolution_status"] == "RESOLVED")
    assert resolved["dst_ref"] == {"scan_id": pay, "record_id": f"contract:PROVIDED:{urn}(java.lang.String)"}
    assert resolved["candidate_targets"] == [{"service_id": "pay", "scan_id": pay,
                                               "record_id": f"contract:PROVIDED:{urn}(java.lang.String)"}]
    assert [f["code"] for f in findings] == ["UNRESOLVED_CALL"]
    # a second service provides the same contract under the same alias: AMBIGUOUS, one row each
    e2 = Estate()
    shop, pay, pay2 = (e2.package(s) for s in ("shop", "pay", "pay-copy"))
    e2.rpc(shop, "CONSUMED", urn, ["java.lang.String"], {"alias": "main"})
    e2.rpc(pay, "PROVIDED", urn, ["java.lang.String"], {"alias": "main"})
    e2.rpc(pay2, "PROVIDED", urn, ["java.lang.String"], {"alias": "main"})
    rows, _ = e2.align()
    assert _edges(rows, "RPC") == [("shop", "pay", "AMBIGUOUS", "SIGNATURE"), ("shop", "pay-copy", "AMBIGUOUS", "SIGNATURE")]
    assert all(len(r["candidate_targets"]) == 2 and r["dst_ref"] is not None for r in rows)


def test_rpc_alias_mismatch_and_untyped_consumer_parameters():
    e = Estate()
    shop, order = e.package("shop"), e.package("order")
    e.rpc(shop, "CONSUMED", "jsf://com.x.OrderQuery#get", ["?", "?"], {"alias": "trade"})
    e.rpc(shop, "CONSUMED", "jsf://com.x.OrderQuery#list", ["?"], {"alias": None, "alias_resolution": "UNKNOWN"})
    e.rpc(order, "PROVIDED", "jsf://com.x.OrderQuery#get", ["long", "boolean"], {"alias": "trade-dev"})
    e.rpc(order, "PROVIDED", "jsf://com.x.OrderQuery#list", ["int"], {"alias": "trade-dev"})
    e.rpc(order, "PROVIDED", "jsf://com.x.OrderQuery#list", ["long"], {"alias": "trade-dev"})
    rows, findings = e.align()
    by_urn = {(r["urn"], r["dst_ref"]["record_id"] if r["dst_ref"] else None): (r["resolution_status"], r["match_basis"])
              for r in rows}
    assert by_urn[("jsf://com.x.OrderQuery#get", None)] == ("UNRESOLVED", "BINDING_MISMATCH")
    # two overloads of one arity fit an untyped call: the service is one, the method is not
    assert by_urn[("jsf://com.x.OrderQuery#list", "contract:PROVIDED:jsf://com.x.OrderQuery#list(int)")] == \
        ("AMBIGUOUS", "SIGNATURE_PARTIAL")
    assert len(rows) == 3
    unresolved = [f for f in findings if f["code"] == "UNRESOLVED_CALL"]
    assert len(unresolved) == 1
    assert "alias=trade" in unresolved[0]["message"] and "none with a matching" in unresolved[0]["message"]
    # the provider nobody could bind to is an orphan
    assert [f["urn"] for f in findings if f["code"] == "ORPHAN_ENTRY"] == ["jsf://com.x.OrderQuery#get"]


def test_orphan_rpc_provider():
    e = Estate()
    pay = e.package("pay")
    e.rpc(pay, "PROVIDED", "dubbo://com.x.Refund#apply", ["long"])
    lib = e.package("lib:common", kind="LIB")
    e.rpc(lib, "CONSUMED", "dubbo://com.x.Refund#apply", ["long"])  # a lib package deploys nothing
    rows, findings = e.align()
    assert rows == [] and [(f["code"], f["service_id"]) for f in findings] == [("ORPHAN_ENTRY", "pay")]


# ----------------------------------------------------------------------------------------- HTTP

def test_http_rule():
    e = Estate()
    auth, admin, portal = e.package("mall-auth"), e.package("mall-admin"), e.package("mall-portal")
    e.http(auth, "CONSUMED", "http://mall-admin/admin/login#POST")
    e.http(auth, "CONSUMED", "http://Mall-Portal/sso/login#ANY")  # folded name in another case, no method
    e.http(auth, "CONSUMED", "http://mall-admin/admin/logout#POST")  # the service has no such path
    e.http(auth, "CONSUMED", "http://mall-search/esProduct#GET")  # no such service
    e.http(auth, "CONSUMED", "http://mall-admin/brand#GET", url="http://10.0.0.8:8080")  # Feign url=
    e.http(auth, "CONSUMED", "http://10.1.2.3:8080/x#GET")
    e.http(admin, "PROVIDED", "http://mall-admin/admin/login#POST")
    e.http(admin, "PROVIDED", "http://mall-admin/admin/logout#GET")
    e.http(portal, "PROVIDED", "http://mall-portal/sso/login#POST")
    rows, findings = e.align()
    got = {r["urn"]: (r["dst_service"], r["resolution_status"], r["match_basis"]) for r in rows}
    assert got == {
        "http://mall-admin/admin/login#POST": ("mall-admin", "RESOLVED", "PATH_METHOD"),
        "http://Mall-Portal/sso/login#ANY": ("mall-portal", "RESOLVED", "PATH_METHOD"),
        "http://mall-admin/admin/logout#POST": (None, "UNRESOLVED", "PATH_NOT_FOUND"),
        "http://mall-search/esProduct#GET": (None, "UNRESOLVED", "NO_PROVIDER"),
        "http://mall-admin/brand#GET": (None, "UNRESOLVED", "URL_ONLY"),
        "http://10.1.2.3:8080/x#GET": (None, "UNRESOLVED", "URL_ONLY"),
    }
    miss = next(r for r in rows if r["match_basis"] == "PATH_NOT_FOUND")
    assert json.loads(miss["match_keys"]) == {"service": "mall-admin", "path": "/admin/logout", "method": "POST"}
    assert sum(f["code"] == "UNRESOLVED_CALL" for f in findings) == 4
    # HTTP endpoints nobody calls are no orphans (browsers and gateways call them)
    assert not any(f["code"] == "ORPHAN_ENTRY" for f in findings)


def test_http_two_packages_of_one_service_are_ambiguous():
    e = Estate()
    auth = e.package("auth")
    a, b = e.package("admin"), e.package("admin", label="gray")
    e.http(auth, "CONSUMED", "http://admin/login#POST")
    e.http(a, "PROVIDED", "http://admin/login#POST")
    e.http(b, "PROVIDED", "http://admin/login#POST")
    rows, _ = e.align()
    assert [(r["dst_scan_id"], r["resolution_status"]) for r in rows] == [(a, "AMBIGUOUS"), (b, "AMBIGUOUS")] or \
        sorted((r["dst_scan_id"], r["resolution_status"]) for r in rows) == [(a, "AMBIGUOUS"), (b, "AMBIGUOUS")]


def test_http_holes_plain_clients_and_collided_ids():
    e = Estate()
    web, users, ex1, ex2 = e.package("web"), e.package("users"), e.package("rates~rates-v1"), e.package("rates~rates-v2")
    e.http(users, "PROVIDED", "http://users/users/{}#GET")
    e.http(users, "PROVIDED", "http://users/users/{}/orders#GET")
    e.http(users, "PROVIDED", "http://users/users/v{}#PUT")
    e.http(ex1, "PROVIDED", "http://rates~rates-v1/rates#GET")
    e.http(ex2, "PROVIDED", "http://rates~rates-v2/rates#GET")
    for scan in (ex1, ex2):  # as a scan renames deployables that collided on one name
        e.entity(scan, "service:rates", "SERVICE", attributes={"service_id_basis": {"collided_with": "rates"}})
    e.http(web, "CONSUMED", "http://users/users/{}/orders#GET")           # a hole from an unfolded id
    e.http(web, "CONSUMED", "http://users/users/42#GET", load_balanced=False)  # plain client, host is a service id
    e.http(web, "CONSUMED", "http://users/users/v2#PUT")                   # a literal against a partial hole
    e.http(web, "CONSUMED", "http://billing/pay#POST", load_balanced=False)   # plain client, no such service
    e.http(web, "CONSUMED", "http://localhost/users/1#GET")                # an address
    e.http(web, "CONSUMED", "http://rates/rates#GET")                      # two deployables named rates
    e.http(users, "PROVIDED", "http://users/ping#GET")
    e.http(web, "CONSUMED", "http://users/{}#GET")          # "http://users/" + path: a path of holes names nothing
    rows, _ = e.align()
    got = sorted((r["urn"], r["dst_service"], r["resolution_status"], r["match_basis"]) for r in rows)
    assert got == sorted([
        ("http://users/users/{}/orders#GET", "users", "RESOLVED", "PATH_METHOD"),
        ("http://users/users/42#GET", "users", "RESOLVED", "HOST_SERVICE_ID"),
        ("http://users/users/v2#PUT", "users", "RESOLVED", "PATH_METHOD"),
        ("http://billing/pay#POST", None, "UNRESOLVED", "URL_ONLY"),
        ("http://localhost/users/1#GET", None, "UNRESOLVED", "URL_ONLY"),
        ("http://rates/rates#GET", "rates~rates-v1", "AMBIGUOUS", "PATH_METHOD"),
        ("http://rates/rates#GET", "rates~rates-v2", "AMBIGUOUS", "PATH_METHOD"),
        ("http://users/{}#GET", None, "UNRESOLVED", "PATH_NOT_FOUND"),
    ])


def test_gateway_routes_align_by_prefix_or_to_the_service():
    e = Estate()
    gw, admin = e.package("edge"), e.package("admin")
    e.http(admin, "PROVIDED", "http://admin/admin/users#GET")
    e.http(admin, "PROVIDED", "http://admin/admin/users/{}#DELETE")
    e.http(admin, "PROVIDED", "http://admin/health#GET")
    route = {"load_balanced": True, "forward_known": True}
    e.http(gw, "CONSUMED", "http://admin/admin/**#ANY", gateway_route="a", route_pattern="/admin/**", **route)
    e.http(gw, "CONSUMED", "http://admin/**#ANY", gateway_route="b", route_pattern="/b/**", **route)
    e.http(gw, "CONSUMED", "http://admin/nothing/**#ANY", gateway_route="c", route_pattern="/c/**", **route)
    e.http(gw, "CONSUMED", "http://ghost/**#ANY", gateway_route="d", route_pattern="/d/**", **route)
    e.http(gw, "CONSUMED", "http://localhost:8080/get#ANY", gateway_route="e",
           route_pattern="/get", load_balanced=False, forward_known=True)
    e.http(gw, "CONSUMED", "http://admin/health#ANY", gateway_route="f",     # grayLb://admin: the host is a service id
           route_pattern="/health", load_balanced=False, forward_known=True)
    rows, _ = e.align()
    got = sorted((r["urn"], r["dst_service"], r["dst_ref"]["record_id"] if r["dst_ref"] else None,
                  r["resolution_status"], r["match_basis"]) for r in rows)
    assert got == sorted([
        ("http://admin/admin/**#ANY", "admin", "contract:PROVIDED:http://admin/admin/users#GET()", "RESOLVED",
         "ROUTE_PREFIX"),
        ("http://admin/admin/**#ANY", "admin", "contract:PROVIDED:http://admin/admin/users/{}#DELETE()", "RESOLVED",
         "ROUTE_PREFIX"),
        ("http://admin/**#ANY", "admin", None, "RESOLVED", "ROUTE_SERVICE"),   # no SERVICE entity in this graph
        ("http://admin/nothing/**#ANY", "admin", None, "RESOLVED", "ROUTE_SERVICE"),
        ("http://ghost/**#ANY", None, None, "UNRESOLVED", "NO_PROVIDER"),
        ("http://localhost:8080/get#ANY", None, None, "UNRESOLVED", "URL_ONLY"),
        ("http://admin/health#ANY", "admin", "contract:PROVIDED:http://admin/health#GET()", "RESOLVED", "ROUTE_PREFIX"),
    ])
    health = next(r for r in rows if r["urn"] == "http://admin/health#ANY")
    assert json.loads(health["match_keys"])["service_basis"] == "HOST_SERVICE_ID"
    nothing = next(r for r in rows if r["urn"] == "http://admin/nothing/**#ANY")
    assert json.loads(nothing["match_keys"])["endpoints_covered"] == 0


def test_gateway_forwarded_paths():
    from diting.probes.gateway import forward, target
    assert forward("/api/orders/**", [("StripPrefix", ["1"])]) == "/orders/**"
    assert forward("/mall-admin/**", [("StripPrefix", ["1"])]) == "/**"
    assert forward("/x/**", [("PrefixPath", ["/v1"])]) == "/v1/x/**"
    assert forward("/new/**", [("RewritePath", ["/new/(?<s>.*)", "/old/$\\{s}"])]) == "/old/**"
    assert forward("/**", [("StripPrefix", ["1"])]) is None  # a segment dropped from a **
    assert forward("/v3/api-docs/**", [("RewritePath", ["/v3/api-docs/(?<p>.*)", "/${p}/v3/api-docs"])]) is None
    assert target("lb://order-center") == ("SERVICE", "order-center")
    assert target("lb:ws://chat") == ("SERVICE", "chat")
    assert target("http://localhost:8080") == ("HOST", "localhost:8080")
    assert target("grayLb://system-server") == ("HOST", "system-server")
    assert target("forward:/fallback") == ("OTHER", None) and target("no://op") == ("OTHER", None)


# ------------------------------------------------------------------------------------------- MQ

def test_filters():
    assert filter_admits(None, None) is True and filter_admits("*", "x") is True
    assert filter_admits("paid || closed", "paid") is True
    assert filter_admits("paid || closed", "created") is False
    assert filter_admits("paid", None) is None
    assert filter_admits("a > 5", "x") is None  # an SQL92 selector is not a tag list
    assert filter_admits("TRUE", "x", {"tag_filter_type": "SQL92"}) is None
    # a selector that did not fold is unknown, never "no filter"
    assert filter_admits(None, "x", {"tag_filter_resolution": "UNKNOWN"}) is None


def test_mq_fan_out_filters_and_orphans():
    e = Estate()
    order, ship, bill, audit, stock = (e.package(s) for s in ("order", "ship", "bill", "audit", "stock"))
    e.publish(order, "rocketmq://order_status", tag="PAID")
    e.publish(order, "rocketmq://order_status", method="method:pub2", tag=None, tag_resolution="UNKNOWN",
              tag_expression="evt.name()")
    e.subscribe(ship, "rocketmq://order_status", "entry:ship")                       # no filter: all
    e.subscribe(bill, "rocketmq://order_status", "entry:bill", tag_filter="PAID || REFUNDED")
    e.subscribe(audit, "rocketmq://order_status", "entry:audit", tag_filter="CLOSED")
    e.publish(stock, "rocketmq://stock_changed", tag="deduct")                      # nobody listens
    e.subscribe(stock, "jmq://delivery_signed", "entry:signed")                     # nobody sends
    rows, findings = e.align()
    got = sorted(((r["src_ref"]["record_id"] if r["src_ref"] else None, r["dst_service"], r["resolution_status"],
                  r["match_basis"]) for r in rows), key=str)
    p1, p2, p3 = sorted({r["src_ref"]["record_id"] for r in rows if r["src_ref"]})
    assert got == sorted([
        (p1, "ship", "RESOLVED", "TOPIC"), (p1, "bill", "RESOLVED", "TOPIC_TAG"),          # PAID: audit filters it out
        (p2, "ship", "RESOLVED", "TOPIC"), (p2, "bill", "AMBIGUOUS", "TOPIC_ONLY"),         # unknown tag
        (p2, "audit", "AMBIGUOUS", "TOPIC_ONLY"),
        (p3, None, "UNRESOLVED", "NO_SUBSCRIBER"),
        (None, "stock", "UNRESOLVED", "NO_PUBLISHER")], key=str)
    amb = [r for r in rows if r["resolution_status"] == "AMBIGUOUS"]
    assert all(len(r["candidate_targets"]) == 2 for r in amb)
    assert sorted(f["code"] for f in findings) == ["ORPHAN_ENTRY", "UNRESOLVED_CALL"]


def test_rabbit_binding_joins_exchange_to_queue():
    e = Estate()
    portal, worker = e.package("portal"), e.package("worker")
    e.publish(portal, "amqp://order.direct/order.cancel")
    e.publish(portal, "amqp://events/order.paid.eu", method="method:pub2")
    ex1, q1 = e.entity(worker, "topic:amqp://order.direct/order.cancel", "TOPIC", urn="amqp://order.direct/order.cancel"), \
        e.entity(worker, "topic:amqp-queue://order.cancel", "TOPIC", urn="amqp-queue://order.cancel")
    e.relation(worker, "BINDS_TO", ex1["record_id"], q1["record_id"])
    ex2, q2 = e.entity(worker, "topic:amqp://events/order.#", "TOPIC", urn="amqp://events/order.#"), \
        e.entity(worker, "topic:amqp-queue://orders", "TOPIC", urn="amqp-queue://orders")
    e.relation(worker, "BINDS_TO", ex2["record_id"], q2["record_id"])
    e.entity(worker, "entry:cancel", "ENTRY", entry_kind="MQ_CONSUMER", urn="amqp-queue://order.cancel")
    e.relation(worker, "SUBSCRIBES", "entry:cancel", "topic:amqp-queue://order.cancel", attributes={})
    e.entity(worker, "entry:orders", "ENTRY", entry_kind="MQ_CONSUMER", urn="amqp-queue://orders")
    e.relation(worker, "SUBSCRIBES", "entry:orders", "topic:amqp-queue://orders", attributes={})
    rows, _ = e.align()
    assert sorted((r["urn"], r["dst_ref"]["record_id"], r["match_basis"]) for r in rows) == [
        ("amqp://events/order.paid.eu", "entry:orders", "RABBIT_BINDING"),
        ("amqp://order.direct/order.cancel", "entry:cancel", "RABBIT_BINDING")]
    assert align_mq._rabbit_key_matches("order.*", "order.paid") and not align_mq._rabbit_key_matches("order.*", "order.a.b")
    assert align_mq._rabbit_key_matches("#.paid", "paid") and align_mq._rabbit_key_matches("#", "a.b")


# ----------------------------------------------------------------------------------------- DATA

def test_data_rule_ownership_and_direct_access():
    e = Estate()
    order, report, admin, misc = (e.package(s) for s in ("order", "report", "admin", "misc"))
    e.table(order, "table://t_order", "trade", "WRITE")
    e.table(report, "table://t_order", "trade", "READ")            # reads a table order alone writes
    e.table(misc, "table://t_order", None, "READ")                 # unknown datasource: AMBIGUOUS
    e.table(admin, "table://t_order", "archive", "READ")           # another database: not shared
    e.table(report, "table://t_sku", "trade", "READ")
    e.table(admin, "table://t_sku", "trade", "READ")               # reader-reader: no row
    e.table(order, "table://t_coupon", "trade", "WRITE")
    e.table(admin, "table://t_coupon", "trade", "WRITE")           # two writers: a violation
    e.table(report, "table://t_coupon", "trade", "WRITE", access="DECLARED_ONLY")  # not counted
    rows, findings = e.align()
    assert sorted(_edges(rows, "DATA")) == sorted([
        ("order", "report", "RESOLVED", "TABLE_DATASOURCE"), ("order", "misc", "AMBIGUOUS", "TABLE_ONLY"),
        ("order", "admin", "RESOLVED", "TABLE_DATASOURCE"), ("admin", "order", "RESOLVED", "TABLE_DATASOURCE")])
    got = sorted((f["code"], f["service_id"], f["urn"], f["resolution_status"], tuple(f["related_services"]))
                 for f in findings)
    assert got == [
        ("CROSS_SERVICE_DATA_ACCESS", "misc", "table://t_order", "AMBIGUOUS", ("order",)),
        ("CROSS_SERVICE_DATA_ACCESS", "report", "table://t_order", "AMBIGUOUS", ("order",)),
        ("SINGLE_WRITER_VIOLATION", None, "table://t_coupon", "RESOLVED", ("admin", "order"))]


# ----------------------------------------------------------------------------- the fixture estate

#: every cross-service edge of the fixture estate (order-center under its dev profile), checked by
#: hand against the sources: the dev alias trade-order-dev is not the alias promotion-center asks for
ESTATE_EDGES = sorted([
    ("fulfillment-center", "stock-center", "HTTP", "http://stock-center/stock/sku/{}#GET", "RESOLVED", "PATH_METHOD"),
    ("order-center", "payment-center", "RPC", "jsf://com.jd.trade.payment.api.PaymentService#pay", "RESOLVED",
     "SIGNATURE"),
    ("order-center", "stock-center", "RPC", "jsf://com.jd.trade.stock.api.StockReserveService#release", "RESOLVED",
     "SIGNATURE"),
    ("order-center", "stock-center", "RPC", "jsf://com.jd.trade.stock.api.StockReserveService#reserve", "RESOLVED",
     "SIGNATURE"),
    ("order-center", "stock-center", "RPC", "jsf://com.jd.trade.stock.api.StockReserveService#reserve", "RESOLVED",
     "SIGNATURE"),
    ("promotion-center", None, "RPC", "jsf://com.jd.trade.order.api.OrderQueryService#getOrder", "UNRESOLVED",
     "BINDING_MISMATCH"),
    ("promotion-center", None, "RPC", "jsf://com.jd.trade.order.api.OrderQueryService#listOrders", "UNRESOLVED",
     "BINDING_MISMATCH"),
    ("fulfillment-worker", None, "RPC", "jsf://com.jd.trade.invoice.api.InvoiceService#issuePending", "UNRESOLVED",
     "NO_PROVIDER"),
    *[("order-center", "fulfillment-center", "MQ", "jmq://trade_order_status", "RESOLVED", "TOPIC")] * 4,
    ("payment-center", "order-center", "MQ", "jmq://cashier_pay_result", "RESOLVED", "TOPIC"),
    ("order-center", None, "MQ", "jmq://trade_order_created", "UNRESOLVED", "NO_SUBSCRIBER"),
    ("payment-center", None, "MQ", "jmq://cashier_refund_result", "UNRESOLVED", "NO_SUBSCRIBER"),
    *[("stock-center", None, "MQ", "rocketmq://stock_changed_topic", "UNRESOLVED", "NO_SUBSCRIBER")] * 2,
    ("stock-center", None, "MQ", "rocketmq://stock_released_topic", "UNRESOLVED", "NO_SUBSCRIBER"),
    (None, "payment-center", "MQ", "jmq://cashier_refund_apply", "UNRESOLVED", "NO_PUBLISHER"),
    (None, "order-center", "MQ", "jmq://trade_delivery_signed", "UNRESOLVED", "NO_PUBLISHER"),
    (None, "stock-center", "MQ", "rocketmq://trade_order_closed", "UNRESOLVED", "NO_PUBLISHER"),
    *[("order-center", None, "MQ", None, "UNRESOLVED", "SOURCE_UNRESOLVED")] * 3,
    ("payment-center", None, "MQ", None, "UNRESOLVED", "SOURCE_UNRESOLVED"),
], key=str)


def test_fixture_estate_edges(tmp_path):
    db = tmp_path / "g.duckdb"
    result = build(db, [SAMPLES])
    _, rows = query(db, "SELECT src_service, dst_service, edge_kind, urn, resolution_status, match_basis "
                        "FROM cross_service_edges")
    assert sorted(rows, key=str) == ESTATE_EDGES
    assert result.aligned["RPC"] == 7 and result.aligned["UNRESOLVED_CALL"] == 6
    # each RESOLVED RPC row names the provider's contract of the consumer's signature
    _, rows = query(db, "SELECT c.signature = p.signature FROM alignment a "
                        "JOIN entities c ON c.scan_id = a.src_node_ref.scan_id AND c.record_id = a.src_node_ref.record_id "
                        "JOIN entities p ON p.scan_id = a.dst_ref.scan_id AND p.record_id = a.dst_ref.record_id "
                        "WHERE a.edge_kind = 'RPC'")
    assert rows == [(True,)] * 4
    _, deps = query(db, "SELECT src_service, dst_service, edge_kind, resolved, ambiguous, unresolved FROM "
                        "service_dependencies WHERE src_service = 'order-center' ORDER BY 2 NULLS LAST, 3")
    assert deps == [("order-center", "fulfillment-center", "MQ", 4, 0, 0), ("order-center", "payment-center", "RPC", 1, 0, 0),
                    ("order-center", "stock-center", "RPC", 3, 0, 0), ("order-center", None, "MQ", 0, 0, 4)]


def test_a_prod_package_beside_resolves_the_alias(estate, tmp_path):
    """order-center scanned under its prod profile (alias trade-order) and loaded with a label beside
    the dev package: promotion-center's calls now find a provider."""
    from diting.scan.pipeline import ScanOptions, scan
    repo, sha = estate
    out = tmp_path / "prod"
    scan(repo, sha, ScanOptions(out=out, services=["order-center"], profiles=["prod"], quiet=True,
                                repo_id="github.com/diting/estate"))
    db = tmp_path / "g.duckdb"
    build(db, [SAMPLES])
    build(db, [next(out.iterdir())], label="prod")
    _, rows = query(db, "SELECT urn, dst_service, resolution_status, match_basis FROM cross_service_edges "
                        "WHERE src_service = 'promotion-center' ORDER BY ALL")
    assert rows == [("jsf://com.jd.trade.order.api.OrderQueryService#getOrder", "order-center", "RESOLVED",
                     "SIGNATURE_PARTIAL"),
                    ("jsf://com.jd.trade.order.api.OrderQueryService#listOrders", "order-center", "RESOLVED",
                     "SIGNATURE_PARTIAL")]


def test_an_unknown_or_sql92_filter_is_ambiguous_never_open():
    e = Estate()
    order, a, b = e.package("order"), e.package("a"), e.package("b")
    e.publish(order, "rocketmq://price", tag="UP")
    sid = e.subscribe(a, "rocketmq://price", "entry:a")
    sid2 = e.subscribe(b, "rocketmq://price", "entry:b", tag_filter="TRUE")
    for r in e.rels:
        if r["record_id"] == sid:
            r["attributes"] = {"tag_filter": None, "tag_filter_resolution": "UNKNOWN", "tag_filter_expression": "${t}"}
        if r["record_id"] == sid2:
            r["attributes"]["tag_filter_type"] = "SQL92"
    rows, _ = e.align()
    assert sorted((r["dst_service"], r["resolution_status"], r["match_basis"]) for r in rows) == [
        ("a", "AMBIGUOUS", "TOPIC_ONLY"), ("b", "AMBIGUOUS", "TOPIC_ONLY")]


def test_a_delay_queue_dead_letters_to_its_consumer():
    """The delay-queue pattern: sends go to a TTL queue nobody consumes, whose dead-letter exchange
    and key lead to the queue the consumer listens on."""
    e = Estate()
    portal = e.package("portal")
    e.publish(portal, "amqp://order.ttl.x/order.cancel.ttl")
    for src, dst, attrs in (("amqp://order.ttl.x/order.cancel.ttl", "amqp-queue://order.cancel.ttl", {}),
                            ("amqp-queue://order.cancel.ttl", "amqp://order.x/order.cancel", {"dead_letter": True}),
                            ("amqp://order.x/order.cancel", "amqp-queue://order.cancel", {})):
        a = e.entity(portal, f"topic:{src}", "TOPIC", urn=src)
        b = e.entity(portal, f"topic:{dst}", "TOPIC", urn=dst)
        e.relation(portal, "BINDS_TO", a["record_id"], b["record_id"], attributes=attrs)
    e.entity(portal, "entry:cancel", "ENTRY", entry_kind="MQ_CONSUMER", urn="amqp-queue://order.cancel")
    e.relation(portal, "SUBSCRIBES", "entry:cancel", "topic:amqp-queue://order.cancel", attributes={})
    rows, findings = e.align()
    assert [(r["dst_ref"]["record_id"], r["resolution_status"], r["match_basis"]) for r in rows] == [
        ("entry:cancel", "RESOLVED", "RABBIT_DEAD_LETTER")]
    assert findings == []
    # a route without a key keeps the message's own routing key; routes that loop end
    routes = align_mq.RabbitRoutes(align_rows.Protocols({s: (p["alignment"], p.get("routing"))
                                                 for s, p in SHIPPED_PROTOCOLS.items()}, {}))
    routes.add("amqp://x/k", "amqp-queue://q1")
    routes.add("amqp-queue://q1", "amqp://y/", keeps_key=True)
    routes.add("amqp://y/k", "amqp-queue://q2")
    routes.add("amqp-queue://q2", "amqp://x/k")
    assert routes.queues("amqp://x/k") == [("amqp-queue://q1", "RABBIT_BINDING"),
                                           ("amqp-queue://q2", "RABBIT_DEAD_LETTER")]


def test_http_deployables_renamed_after_a_collision_are_each_candidates_of_the_shared_name():
    e = Estate()
    caller = e.package("conv")
    a, b = e.package("exchange~03.ex"), e.package("exchange~04.ex")
    for scan in (a, b):
        e.entity(scan, "service:x", "SERVICE", attributes={"service_id_basis": {"collided_with": "exchange"}})
        e.http(scan, "PROVIDED", f"http://{'exchange~03.ex' if scan == a else 'exchange~04.ex'}/rate#GET")
    e.http(caller, "CONSUMED", "http://exchange/rate#GET")
    rows, _ = e.align()
    assert sorted((r["dst_service"], r["resolution_status"]) for r in rows) == [
        ("exchange~03.ex", "AMBIGUOUS"), ("exchange~04.ex", "AMBIGUOUS")]


def test_gateway_routes_to_a_collided_name_are_ambiguous_among_its_copies():
    e = Estate()
    gw = e.package("edge")
    a, b = e.package("exchange~03.ex"), e.package("exchange~04.ex")
    for scan, sid in ((a, "exchange~03.ex"), (b, "exchange~04.ex")):
        e.entity(scan, "service:x", "SERVICE", attributes={"service_id_basis": {"collided_with": "exchange"}})
        e.http(scan, "PROVIDED", f"http://{sid}/exchange/rate#GET")
    route = {"load_balanced": True, "forward_known": True}
    e.http(gw, "CONSUMED", "http://exchange/exchange/**#ANY", gateway_route="r1", route_pattern="/exchange/**", **route)
    e.http(gw, "CONSUMED", "http://exchange/**#ANY", gateway_route="r2", route_pattern="/x/**", **route)
    rows, _ = e.align()
    got = sorted((r["urn"], r["dst_service"], r["resolution_status"], r["match_basis"]) for r in rows)
    assert got == sorted([
        ("http://exchange/exchange/**#ANY", "exchange~03.ex", "AMBIGUOUS", "ROUTE_PREFIX"),
        ("http://exchange/exchange/**#ANY", "exchange~04.ex", "AMBIGUOUS", "ROUTE_PREFIX"),
        ("http://exchange/**#ANY", "exchange~03.ex", "AMBIGUOUS", "ROUTE_SERVICE"),
        ("http://exchange/**#ANY", "exchange~04.ex", "AMBIGUOUS", "ROUTE_SERVICE"),
    ])
    for r in rows:
        assert sorted(c["service_id"] for c in r["candidate_targets"]) == ["exchange~03.ex", "exchange~04.ex"]
