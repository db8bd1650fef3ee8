"""HTTP wiring of small estates, end to end (scan → graph → cross_service_edges): Feign clients
handed to objects built by @Bean methods, client calls whose URL does not fold, calls to a
gateway matched against its routes, collided service ids, Zuul's default routes."""

from __future__ import annotations

import json
from pathlib import Path

from diting.graph.store import build
from diting.graph.query import query
from tests.conftest import BOOT_PLUGIN, pom
from tests.stagekit import scan_memory

SB = "org.springframework.boot.autoconfigure.SpringBootApplication"
WEB = "org.springframework.web.bind.annotation"


def _module(name: str, pkg: str, app_extra: str = "", yml: str = "") -> dict[str, str]:
    base = f"{name}/src/main"
    return {
        f"{name}/pom.xml": pom(name, body=BOOT_PLUGIN),
        f"{base}/java/{pkg.replace('.', '/')}/App.java":
            f"package {pkg};\n{app_extra}@{SB}\npublic class App {{ public static void main(String[] a) {{ }} }}\n",
        f"{base}/resources/application.yml": f"spring:\n  application:\n    name: {name}\n{yml}",
    }


def _estate(modules: list[str], files: dict[str, str]) -> dict[str, str]:
    mods = "".join(f"<module>{m}</module>" for m in modules)
    return {"pom.xml": pom("shop-parent", parent=None, packaging="pom", body=f"<modules>{mods}</modules>"), **files}


def _graph(tmp_path: Path, files: dict[str, str]) -> tuple[Path, Path]:
    """Scan ``files`` as one repository and build its graph: (packages directory, database)."""
    out = tmp_path / "out"
    scan_memory(files, out)
    db = tmp_path / "g.duckdb"
    build(db, [p for p in sorted(out.iterdir()) if p.is_dir()])
    return out, db


def _records(out: Path, service: str) -> tuple[list[dict], list[dict]]:
    """The relations and diagnostics of the package of ``service`` under ``out``."""
    pkg = next(p for p in out.iterdir() if p.is_dir() and p.name.startswith(service + "@"))
    return [[json.loads(x) for x in (pkg / f).read_text().splitlines()] for f in ("relations.jsonl", "diagnostics.jsonl")]


def _edges(tmp_path: Path, files: dict[str, str]) -> list[dict]:
    _, db = _graph(tmp_path, files)
    cols, rows = query(db, "SELECT src_service, dst_service, urn, resolution_status, match_basis, "
                           "candidate_targets, dst_ref FROM cross_service_edges ORDER BY ALL")
    return [dict(zip(cols, r)) for r in rows]


PRESENTING = {
    **_module("presenting", "com.ex.presenting"),
    "presenting/src/main/java/com/ex/presenting/FeedController.java":
        f"package com.ex.presenting;\n@{WEB}.RestController\n@{WEB}.RequestMapping(\"/feed\")\n"
        "public class FeedController {\n"
        f"    @{WEB}.PutMapping(\"/bottles/{{id}}\") public void bottles(@{WEB}.PathVariable String id) {{ }}\n"
        f"    @{WEB}.PutMapping(\"/maturing\") public void maturing() {{ }}\n}}\n",
}


def test_feign_client_reaches_its_caller_through_a_bean_method_parameter(tmp_path):
    # the client is a parameter of a @Bean method and kept by the object the method builds
    files = _estate(["brewing", "presenting"], {
        **PRESENTING,
        **_module("brewing", "com.ex.brewing", "@org.springframework.cloud.openfeign.EnableFeignClients\n"),
        "brewing/src/main/java/com/ex/brewing/PresentingClient.java":
            "package com.ex.brewing;\n@org.springframework.cloud.openfeign.FeignClient(\"presenting\")\n"
            "public interface PresentingClient {\n"
            f"    @{WEB}.PutMapping(\"/feed/bottles/{{id}}\") void bottles(@{WEB}.PathVariable(\"id\") String id);\n}}\n",
        "brewing/src/main/java/com/ex/brewing/Worker.java":
            "package com.ex.brewing;\nclass Worker {\n    private final PresentingClient client;\n"
            "    private final int size;\n"
            "    Worker(int size, PresentingClient client) { this.size = size; this.client = client; }\n"
            "    void bottle(String id) { client.bottles(id); }\n}\n",
        "brewing/src/main/java/com/ex/brewing/WorkerConfig.java":
            "package com.ex.brewing;\n@org.springframework.context.annotation.Configuration\nclass WorkerConfig {\n"
            "    @org.springframework.context.annotation.Bean\n"
            "    Worker worker(PresentingClient presentingClient) {\n"
            "        Worker w = new Worker(4, presentingClient);\n        return w;\n    }\n}\n",
    })
    edges = _edges(tmp_path, files)
    got = [(e["src_service"], e["dst_service"], e["urn"], e["resolution_status"], e["match_basis"]) for e in edges]
    assert ("brewing", "presenting", "http://presenting/feed/bottles/{}#PUT", "RESOLVED", "PATH_METHOD") in got


def test_set_path_uses_the_variables_of_the_path_predicate():
    from diting.probes.gateway import forward
    assert forward("/ingredients/{segment}", [("SetPath", ["/{segment}"])]) == "/{}"
    assert forward("/a/{x}/{y}", [("SetPath", ["/b/{y}/{x}"])]) == "/b/{}/{}"
    assert forward("/ingredients/{segment}", [("SetPath", ["/{other}"])]) is None  # not a variable of the pattern
    assert forward("/ingredients/**", [("SetPath", ["/fixed"])]) == "/fixed"


GATEWAY_YML = """  cloud:
    gateway:
      routes:
        - id: stock
          uri: lb://stock
          predicates:
            - Path=/stock/**
          filters:
            - StripPrefix=1
        - id: stock-one
          uri: lb://stock
          predicates:
            - Path=/one/{item}
          filters:
            - SetPath=/{item}
"""


def test_calls_to_a_gateway_match_its_routes(tmp_path):
    files = _estate(["edge", "stock", "shop"], {
        **_module("edge", "com.ex.edge", yml=GATEWAY_YML),
        **_module("stock", "com.ex.stock"),
        "stock/src/main/java/com/ex/stock/StockController.java":
            f"package com.ex.stock;\n@{WEB}.RestController\npublic class StockController {{\n"
            f"    @{WEB}.PostMapping(\"/{{name}}\") public String take(@{WEB}.PathVariable String name) {{ return name; }}\n}}\n",
        **_module("shop", "com.ex.shop", "@org.springframework.cloud.openfeign.EnableFeignClients\n"),
        "shop/src/main/java/com/ex/shop/EdgeClient.java":
            "package com.ex.shop;\n@org.springframework.cloud.openfeign.FeignClient(\"edge\")\npublic interface EdgeClient {\n"
            f"    @{WEB}.PostMapping(\"/stock/{{name}}\") String take(@{WEB}.PathVariable(\"name\") String name);\n"
            f"    @{WEB}.PostMapping(\"/one/{{name}}\") String one(@{WEB}.PathVariable(\"name\") String name);\n"
            f"    @{WEB}.GetMapping(\"/nowhere\") String none();\n}}\n",
        "shop/src/main/java/com/ex/shop/Buyer.java":
            "package com.ex.shop;\n@org.springframework.stereotype.Service\npublic class Buyer {\n"
            "    private final EdgeClient edge;\n    Buyer(EdgeClient edge) { this.edge = edge; }\n"
            "    void buy() { edge.take(\"x\"); edge.one(\"y\"); edge.none(); }\n}\n",
    })
    edges = _edges(tmp_path, files)
    shop = {(e["urn"], e["resolution_status"], e["match_basis"], e["dst_ref"]["record_id"] if e["dst_ref"] else None)
            for e in edges if e["src_service"] == "shop"}
    assert ("http://edge/stock/{}#POST", "RESOLVED", "ROUTE_ENTRY", "entry:GATEWAY_ROUTE:http://edge/stock/**#ANY@edge") in shop
    assert ("http://edge/one/{}#POST", "RESOLVED", "ROUTE_ENTRY", "entry:GATEWAY_ROUTE:http://edge/one/{}#ANY@edge") in shop
    assert ("http://edge/nowhere#GET", "UNRESOLVED", "PATH_NOT_FOUND", None) in shop
    # SetPath=/{item} forwards one segment: the route reaches POST /{} of stock
    routed = {(e["urn"], e["match_basis"]) for e in edges if e["src_service"] == "edge"}
    assert ("http://stock/{}#ANY", "ROUTE_PREFIX") in routed


def _standalone(dirname: str, name: str, pkg: str, files: dict[str, str], app_extra: str = "") -> dict[str, str]:
    """An independent Maven project (no parent) in ``dirname`` whose service is ``name``."""
    base = f"{dirname}/src/main"
    out = {
        f"{dirname}/pom.xml": pom(dirname.rsplit("/", 1)[-1], parent=None, body=BOOT_PLUGIN),
        f"{base}/java/{pkg.replace('.', '/')}/App.java":
            f"package {pkg};\n{app_extra}@{SB}\npublic class App {{ public static void main(String[] a) {{ }} }}\n",
        f"{base}/resources/application.yml": f"spring:\n  application:\n    name: {name}\n",
    }
    out.update({f"{base}/java/{pkg.replace('.', '/')}/{k}": v for k, v in files.items()})
    return out


PING = f"package com.ex.order;\n@{WEB}.RestController\npublic class Ping {{ @{WEB}.GetMapping(\"/ping\") public String ping() {{ return \"\"; }} }}\n"


def _orders(prefix: str) -> str:
    return (f"package com.ex.order;\n@{WEB}.RestController\n@{WEB}.RequestMapping(\"{prefix}\")\n"
            f"public class OrderController {{\n    @{WEB}.PostMapping public void create() {{ }}\n"
            f"    @{WEB}.GetMapping(\"/status\") public String status() {{ return \"\"; }}\n}}\n")


def test_collided_copies_keep_their_registered_name_and_one_serving_copy_resolves(tmp_path):
    lb = "org.springframework.cloud.client.loadbalancer.LoadBalanced"
    files = {
        **_standalone("order", "order", "com.ex.order", {"OrderController.java": _orders("/orders"), "Ping.java": PING}),
        **_standalone("kafka/order", "order", "com.ex.order", {"OrderController.java": _orders("/v1/orders"),
                                                              "Ping.java": PING}),
        **_standalone("front", "front", "com.ex.front", {
            "Beans.java": "package com.ex.front;\n@org.springframework.context.annotation.Configuration\nclass Beans {\n"
                          f"    @org.springframework.context.annotation.Bean @{lb}\n"
                          "    org.springframework.web.client.RestTemplate rest() { return new org.springframework.web.client.RestTemplate(); }\n}\n",
            "Orders.java": "package com.ex.front;\n@org.springframework.stereotype.Service\nclass Orders {\n"
                           "    @org.springframework.beans.factory.annotation.Autowired org.springframework.web.client.RestTemplate rest;\n"
                           "    void create() { rest.postForObject(\"http://order/v1/orders\", null, String.class); }\n"
                           "    void status() { rest.getForObject(\"http://order/orders/status\", String.class); }\n"
                           "    void both() { rest.getForObject(\"http://order/ping\", String.class); }\n}\n"}),
    }
    edges = [e for e in _edges(tmp_path, files) if e["src_service"] == "front"]
    got = {(e["urn"], e["resolution_status"], e["dst_service"], len(e["candidate_targets"])) for e in edges}
    copies = sorted({e["dst_service"] for e in edges if e["dst_service"]})
    assert len(copies) == 2 and all(c.startswith("order~") for c in copies)
    kafka = next(c for c in copies if "kafka" in c)
    root = next(c for c in copies if c != kafka)
    assert ("http://order/v1/orders#POST", "RESOLVED", kafka, 1) in got
    assert ("http://order/orders/status#GET", "RESOLVED", root, 1) in got
    # no AMBIGUOUS row with a single candidate: both copies serve /ping
    assert {(u, s, n) for u, s, _, n in got if u == "http://order/ping#GET"} == {("http://order/ping#GET", "AMBIGUOUS", 2)}
    # the provider urn keeps the registered name as host: who-calls by urn finds the caller
    assert {e["dst_ref"]["record_id"] for e in edges if e["urn"] == "http://order/v1/orders#POST"} == {
        "contract:PROVIDED:http://order/v1/orders#POST()"}


def test_zuul_without_routes_routes_every_service_by_default(tmp_path):
    zuul = "@org.springframework.cloud.netflix.zuul.EnableZuulProxy\n"
    files = _estate(["zuul", "shop"], {
        **_module("zuul", "com.ex.zuul", zuul),
        **_module("shop", "com.ex.shop", "@org.springframework.cloud.openfeign.EnableFeignClients\n"),
        "shop/src/main/java/com/ex/shop/ZuulClient.java":
            "package com.ex.shop;\n@org.springframework.cloud.openfeign.FeignClient(\"zuul\")\npublic interface ZuulClient {\n"
            f"    @{WEB}.GetMapping(\"/stock/items\") String items();\n}}\n",
        "shop/src/main/java/com/ex/shop/Buyer.java":
            "package com.ex.shop;\n@org.springframework.stereotype.Service\npublic class Buyer {\n"
            "    @org.springframework.beans.factory.annotation.Autowired ZuulClient zuul;\n"
            "    String items() { return zuul.items(); }\n}\n",
    })
    out, db = _graph(tmp_path, files)
    _, diags = _records(out, "zuul")
    assert [d["code"] for d in diags if "every service" in d["message"]] == ["UNDETERMINED_DYNAMIC_EDGE"]
    _, rows = query(db, "SELECT urn, resolution_status, match_basis, dst_ref.record_id FROM cross_service_edges "
                        "WHERE src_service = 'shop'")
    assert rows == [("http://zuul/stock/items#GET", "RESOLVED", "ROUTE_ENTRY",
                     "entry:GATEWAY_ROUTE:http://zuul/{}/**#ANY@zuul")]


def test_a_client_call_whose_url_does_not_name_a_host_is_an_unresolved_call(tmp_path):
    files = _estate(["shop"], {
        **_module("shop", "com.ex.shop"),
        "shop/src/main/java/com/ex/shop/Users.java":
            "package com.ex.shop;\n@org.springframework.stereotype.Service\nclass Users {\n"
            "    private final org.springframework.web.client.RestTemplate rest = new org.springframework.web.client.RestTemplate();\n"
            "    String all() { return rest.getForObject(\"/users\", String.class); }\n"
            "    String one(String url) { return rest.getForObject(url, String.class); }\n}\n",
    })
    out, db = _graph(tmp_path, files)
    rels, diags = _records(out, "shop")
    calls = sorted((r["match_keys"]["url_expression"], r["attributes"]["load_balanced"]) for r in rels
                   if r["kind"] == "CALLS" and r["resolution_status"] == "UNRESOLVED"
                   and r["attributes"].get("protocol") == "http")
    assert calls == [("/users", False), ("url", False)]
    assert any("is relative" in d["message"] for d in diags if d["code"] == "CONSTANT_UNRESOLVED")
    _, rows = query(db, "SELECT count(*) FROM cross_service_edges WHERE match_basis = 'SOURCE_UNRESOLVED'")
    assert rows == [(2,)]
