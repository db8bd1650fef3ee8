"""Optional: the relation graph on public repositories, when a local copy exists (DITING_REAL_REPOS,
default /work/.mirror). Each test skips cleanly when its repository is not present."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from diting.coverage.report import coverage_of_graph
from diting.graph.store import build
from diting.graph.query import query
from diting.scan.pipeline import ScanOptions, scan

from tests.conftest import scan_real

from .test_real_repos import BASE

MALL_SWARM = ("macrozheng+mall-swarm", "56ed16211a706d34604d272813c5778ecfb7db79")
SEATA = ("apache+incubator-seata-samples", "b28057970d43df5050971713dd6143892062f32a")
ROCKETMQ_SPRING = ("apache+rocketmq-spring", "ce5f729705154fe5d12e48ddcd529521725592ee")


def _mirror(folder: str, sha: str) -> Path:
    path = BASE / folder / "repo"
    if not path.is_dir():
        pytest.skip(f"{folder} is not present under {BASE}")
    if subprocess.run(["git", "-C", str(path), "cat-file", "-e", f"{sha}^{{commit}}"], capture_output=True).returncode:
        pytest.skip(f"{folder} does not contain {sha}")
    return path


def _scan_and_build(spec: tuple[str, str], tmp_path: Path, repo_id: str) -> tuple[Path, Path, Path]:
    """Scan the mirror at its commit and build a graph of every package: (repository, packages, db)."""
    repo = _mirror(*spec)
    out = tmp_path / "ir"
    scan_real(repo, spec[1], ScanOptions(out=out, repo_id=repo_id, quiet=True))
    db = tmp_path / "g.duckdb"
    build(db, [out])
    return repo, out, db


def _edges(db: Path, where: str = "TRUE") -> list[tuple]:
    return query(db, "SELECT src_service, dst_service, edge_kind, urn, resolution_status, match_basis "
                     f"FROM cross_service_edges WHERE {where} ORDER BY ALL")[1]


FEIGN = [  # every Feign call of mall-swarm, and the endpoint it reaches
    ("mall-auth", "mall-admin", "HTTP", "http://mall-admin/admin/login#POST", "RESOLVED", "PATH_METHOD"),
    ("mall-auth", "mall-portal", "HTTP", "http://mall-portal/sso/login#POST", "RESOLVED", "PATH_METHOD"),
    ("mall-demo", "mall-admin", "HTTP", "http://mall-admin/admin/login#POST", "RESOLVED", "PATH_METHOD"),
    ("mall-demo", "mall-admin", "HTTP", "http://mall-admin/brand/listAll#GET", "RESOLVED", "PATH_METHOD"),
    ("mall-demo", "mall-portal", "HTTP", "http://mall-portal/cart/list#GET", "RESOLVED", "PATH_METHOD"),
    ("mall-demo", "mall-portal", "HTTP", "http://mall-portal/sso/login#POST", "RESOLVED", "PATH_METHOD"),
    ("mall-demo", "mall-search", "HTTP", "http://mall-search/esProduct/search/simple#GET", "RESOLVED", "PATH_METHOD"),
]


#: mall-gateway's routes (mall-gateway/src/main/resources/application.yml): Path=/mall-x/** with StripPrefix=1 to
#: lb://mall-x forwards every path of the service
GATEWAY = [("mall-gateway", s, "HTTP", f"http://{s}/**#ANY", "RESOLVED", "ROUTE_SERVICE")
           for s in ("mall-admin", "mall-auth", "mall-demo", "mall-portal", "mall-search")]


@pytest.mark.realrepo
def test_mall_swarm_feign_calls_and_a_mutated_path(tmp_path):
    repo, _, db = _scan_and_build(MALL_SWARM, tmp_path, "github.com/macrozheng/mall-swarm")
    assert _edges(db, "edge_kind = 'HTTP'") == sorted(FEIGN + GATEWAY)
    # each Feign row points at the endpoint of equal path and method
    _, rows = query(db, "SELECT a.urn, p.urn, p.attributes->>'path', c.attributes->>'path' FROM alignment a "
                        "JOIN entities p ON p.scan_id = a.dst_ref.scan_id AND p.record_id = a.dst_ref.record_id "
                        "JOIN entities c ON c.scan_id = a.src_node_ref.scan_id AND c.record_id = a.src_node_ref.record_id "
                        "WHERE a.edge_kind = 'HTTP' AND a.match_basis = 'PATH_METHOD'")
    assert len(rows) == 7 and all(r[0] == r[1] and r[2] == r[3] for r in rows)
    # each route row points at the target's SERVICE entity
    _, rows = query(db, "SELECT a.dst_service, p.kind, p.name FROM alignment a JOIN entities p ON "
                        "p.scan_id = a.dst_ref.scan_id AND p.record_id = a.dst_ref.record_id "
                        "WHERE a.match_basis = 'ROUTE_SERVICE' ORDER BY 1")
    assert [(r[0], r[1]) for r in rows] == [(g[1], "SERVICE") for g in GATEWAY]
    # the discovery locator (spring.cloud.gateway.discovery.locator.enabled) is one entry, no edge
    _, rows = query(db, "SELECT e.urn FROM entities e WHERE e.entry_kind = 'GATEWAY_ROUTE' AND "
                        "e.attributes->>'gateway' = 'discovery-locator'")
    assert rows == [("http://mall-gateway/{}/**#ANY",)]
    # the delayed order cancel: a TTL queue nobody consumes dead-letters to the queue mall-portal listens on
    assert _edges(db, "edge_kind = 'MQ'") == [("mall-portal", "mall-portal", "MQ",
                                               "amqp://mall.order.direct.ttl/mall.order.cancel.ttl", "RESOLVED",
                                               "RABBIT_DEAD_LETTER")]
    assert query(db, "SELECT count(*) FROM graph_findings WHERE code IN ('ORPHAN_ENTRY', 'UNRESOLVED_CALL')")[1] == [(0,)]
    # coverage over the graph: the 7 Feign calls and 5 routes resolved, the dead-letter route within mall-portal
    # excluded
    cov = coverage_of_graph(db)
    edges = cov["dimensions"]["cross_service_edges"]
    assert (edges["resolved"], edges["partial"], edges["failed"]) == (12, 0, 0)
    assert edges["excluded_by_reason"] == {"same_service": 1}  # the dead-letter route back into mall-portal
    for d in cov["dimensions"].values():
        assert d["discovered"] == d["resolved"] + d["partial"] + d["failed"] + d["excluded"]
    assert {a["service_id"] for a in cov["applications"] if a["term"] != "excluded"} >= {
        "mall-admin", "mall-auth", "mall-demo", "mall-gateway", "mall-portal", "mall-search"}
    assert not [d for d in cov["catalogue_differences"] if d["kind"] != "MODULE_NOT_DEPLOYED"]
    before = _edges(db)
    # mutation: mall-auth's Feign client asks for /admin/login2; rescan mall-auth, replace it
    work = tmp_path / "work"
    subprocess.run(["git", "clone", "-q", "--no-checkout", str(repo), str(work)], check=True)
    subprocess.run(["git", "-C", str(work), "checkout", "-q", MALL_SWARM[1]], check=True)
    feign = work / "mall-auth/src/main/java/com/macro/mall/auth/service/UmsAdminService.java"
    feign.write_text(feign.read_text(encoding="utf-8").replace('@PostMapping("/admin/login")',
                                                               '@PostMapping("/admin/login2")'), encoding="utf-8")
    subprocess.run(["git", "-C", str(work), "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qam", "mutate"],
                   check=True)
    out2 = tmp_path / "ir2"
    scan(work, "HEAD", ScanOptions(out=out2, services=["mall-auth"], repo_id="github.com/macrozheng/mall-swarm",
                                   quiet=True))
    build(db, [out2], replace=True)
    after = _edges(db)
    changed_before = sorted(set(before) - set(after))
    changed_after = sorted(set(after) - set(before))
    assert changed_before == [FEIGN[0]]
    assert changed_after == [("mall-auth", None, "HTTP", "http://mall-admin/admin/login2#POST", "UNRESOLVED",
                              "PATH_NOT_FOUND")]
    _, keys = query(db, "SELECT match_keys FROM alignment WHERE match_basis = 'PATH_NOT_FOUND'")
    assert [json.loads(k[0]) for k in keys] == [{"service": "mall-admin", "path": "/admin/login2", "method": "POST"}]


SEATA_INVENTORY = """services:
""" + "".join(f"  - {{service_id: spring-dubbo-seata-{m}, repo_id: github.com/apache/incubator-seata-samples, "
              f"module_path: at-sample/spring-dubbo-seata/spring-dubbo-seata-{m}}}\n"
              for m in ("account", "order", "storage", "business"))


@pytest.mark.realrepo
def test_seata_samples_dubbo_sets_alone_and_together(tmp_path):
    repo = _mirror(*SEATA)
    inv = tmp_path / "inventory.yml"
    inv.write_text(SEATA_INVENTORY, encoding="utf-8")
    out = tmp_path / "ir"
    scan(repo, SEATA[1], ScanOptions(out=out, repo_id="github.com/apache/incubator-seata-samples", inventory=inv,
                                     quiet=True))
    boot = sorted(p for p in out.iterdir() if p.name.startswith("springboot-dubbo-seata-"))
    plain = sorted(p for p in out.iterdir() if p.name.startswith("spring-dubbo-seata-"))
    assert len(boot) == 4 and len(plain) == 4
    for name, pkgs in (("boot", boot), ("plain", plain)):
        db = tmp_path / f"{name}.duckdb"
        build(db, pkgs)
        rows = _edges(db, "edge_kind = 'RPC'")
        assert sorted(r[3].rsplit(".", 1)[-1] for r in rows) == ["AccountService#debit", "OrderService#create",
                                                                 "StorageService#deduct"]
        assert {r[4] for r in rows} == {"RESOLVED"}, (name, rows)
        assert all(r[0].rsplit("-", 1)[0] == r[1].rsplit("-", 1)[0] for r in rows)  # within the set
    db = tmp_path / "both.duckdb"
    build(db, boot + plain)
    rows = _edges(db, "edge_kind = 'RPC'")
    # each consumer of the one interface now has two candidate providers, one per sample set
    assert len(rows) == 12 and {r[4] for r in rows} == {"AMBIGUOUS"}
    _, cands = query(db, "SELECT DISTINCT len(candidate_targets) FROM alignment WHERE edge_kind = 'RPC'")
    assert cands == [(2,)]


@pytest.mark.realrepo
def test_rocketmq_spring_producers_reach_each_subscriber(tmp_path):
    _, _, db = _scan_and_build(ROCKETMQ_SPRING, tmp_path, "github.com/apache/rocketmq-spring")
    rows = _edges(db, "urn = 'rocketmq://demo-topic'")
    # push listeners and template pulls (RocketMQTemplate.receive, the v5 client template's) alike
    assert rows == [("rocketmq-producer-simple-demo", f"rocketmq-{c}", "MQ", "rocketmq://demo-topic", "RESOLVED", "TOPIC")
                    for c in ("consumer-pull-simple-demo", "consumer-push-simple-demo",
                              "v5-client-consumer-push-simple-demo", "v5-client-consumer-simple-demo")]
    # a subscriber filtering on tagA never sees a send whose tag is known to be absent and whose payload
    # is a String; sends of an unknown payload stay AMBIGUOUS for it
    _, rows = query(db, "SELECT DISTINCT a.resolution_status, a.match_basis FROM alignment a JOIN relations s "
                        "ON s.scan_id = a.dst_binding_ref.scan_id AND s.record_id = a.dst_binding_ref.record_id "
                        "WHERE s.attributes->>'tag_filter' = 'tagA' AND a.urn = 'rocketmq://string-topic'")
    assert rows == [("AMBIGUOUS", "TOPIC_ONLY")]
    _, rows = query(db, "SELECT count(*) FROM cross_service_edges WHERE edge_kind = 'MQ' AND src_service IS NOT NULL "
                        "AND dst_service IS NOT NULL")
    assert rows[0][0] >= 30


DUBBO_SAMPLES = ("apache+dubbo-samples", "fcda5252cdb7a1c5c0b75c7f4d7d88a3cb9e7c5e")


@pytest.mark.realrepo
def test_dubbo_samples_coverage_and_pyramid_over_the_graph(tmp_path):
    """185 packages: coverage over the graph adds up and names providers nobody consumes by signature
    (contracts with long names have hashed record ids); the pyramid cites only records of its families."""
    from diting.pyramid.build import build_pyramid
    sha = subprocess.run(["git", "-C", str(BASE / DUBBO_SAMPLES[0] / "repo"), "rev-parse", "HEAD"],
                         capture_output=True, text=True).stdout.strip() if (BASE / DUBBO_SAMPLES[0]).is_dir() else ""
    if not sha.startswith("fcda5252"):
        pytest.skip("apache/dubbo-samples @fcda5252 is not present")
    _, out, db = _scan_and_build((DUBBO_SAMPLES[0], sha), tmp_path, "github.com/apache/dubbo-samples")
    cov = coverage_of_graph(db)
    for d in cov["dimensions"].values():
        assert d["discovered"] == d["resolved"] + d["partial"] + d["failed"] + d["excluded"]
    providers = [d["subject"] for d in cov["catalogue_differences"] if d["kind"] == "PROVIDER_WITHOUT_CONSUMER"
                 and d["subject"].startswith("dubbo://")]
    assert providers and all(s.endswith(")") for s in providers)
    p = build_pyramid(db, tmp_path / "pages")
    assert len(p.profiles) == sum(1 for x in out.iterdir() if (x / "manifest.json").is_file()
                                  and json.loads((x / "analysis_input.json").read_text())["service"]["kind"] == "SERVICE")
    assert all(s["source_ref_ids"] for c in p.cards for s in c["statements"])
