"""Hostile input to the gateway, context and Stream mechanisms: patterns from the repository are
never run by a backtracking engine in a shape that can run for ever, deep nesting is bounded, and a
configured value that does not resolve is never replaced by a default guessed from a name."""

from __future__ import annotations

import json
import time
from pathlib import Path

from diting.probes.gateway import backtracking_risk, forward
from diting.resolve.spring_locations import ant_pattern
from tests.conftest import boot_module, make_repo, pom, scan_repo


def test_rewrite_path_regexes_of_catastrophic_shape_are_not_run():
    for rx in ("/(a+)+b", "(x*)*", "([a-z]+){2,}", "/api/(?<seg>([a-z]+)+)/(?<rest>.*)", "(" * 1200 + "a" + ")" * 1200):
        assert backtracking_risk(rx), rx
    for rx in ("/api/(?<segment>.*)", "/(?<rest>[^/]*)/x", "(ab)+", "/red/(?<segment>.*)"):
        assert not backtracking_risk(rx), rx
    t = time.perf_counter()
    assert forward("/" + "a" * 38 + "!", [("RewritePath", ["/(a+)+b", "/x"])]) is None  # unknown, at once
    assert forward("/x/**", [("RewritePath", ["(" * 1200 + "x" + ")" * 1200, "/y"])]) is None
    assert time.perf_counter() - t < 1.0
    assert forward("/api/foo/**", [("RewritePath", ["/api/(?<segment>.*)", "/${segment}"])]) == "/foo/**"


def test_a_negative_strip_prefix_strips_nothing():
    assert forward("/a/b/c/**", [("StripPrefix", ["-1"])]) == "/a/b/c/**"
    assert forward("/a/b/c/**", [("StripPrefix", ["2"])]) == "/c/**"


def test_ant_patterns_match_in_linear_time():
    t = time.perf_counter()
    assert not ant_pattern("spring/" + "*a" * 12 + "b.xml").match("spring/" + "a" * 44 + ".xml")
    assert not ant_pattern("/".join(["**"] * 200) + "/x").match("/".join(["a"] * 400))
    assert time.perf_counter() - t < 1.0
    assert ant_pattern("spring/*.xml").match("spring/a.xml") and not ant_pattern("spring/*.xml").match("spring/x/a.xml")
    assert ant_pattern("**/*-beans.xml").match("c-beans.xml") and ant_pattern("**/*-beans.xml").match("a/b/c-beans.xml")
    assert ant_pattern("com/acme/**/feign").match("com/acme/feign") and ant_pattern("com/acme/*/api").match("com/acme/x/api")
    assert not ant_pattern("com/acme/*/api").match("com/acme/x/y/api") and not ant_pattern("a?c").match("a/c")


def test_a_stream_destination_that_does_not_resolve_is_no_guess(tmp_path):
    files = {
        "pom.xml": pom("shop-parent", parent=None, packaging="pom", body="<modules><module>sink</module></modules>"),
        **boot_module("sink", "<dependencies><dependency><groupId>org.springframework.cloud</groupId>"
                              "<artifactId>spring-cloud-stream-binder-kafka</artifactId></dependency></dependencies>", {
            "src/main/resources/application.properties":
                "spring.cloud.stream.bindings.f0-in-0.destination=${topic.missing}\n",
            "src/main/java/com/example/PKG/Fns.java": """package com.example.PKG;
@org.springframework.context.annotation.Configuration
public class Fns {
    @org.springframework.context.annotation.Bean
    public java.util.function.Consumer<String> f0() { return s -> { }; }
}
"""}),
    }
    repo, _ = make_repo(tmp_path, files)
    result = scan_repo(repo, tmp_path / "out")
    pkg = Path(next(p.path for p in result.packages if p.service_id == "sink"))
    rels = [json.loads(x) for x in (pkg / "relations.jsonl").read_text().splitlines() if x]
    subs = [r for r in rels if r["kind"] == "SUBSCRIBES"]
    assert subs and all(r["target_ref"] is None or "f0-in-0" not in r["target_ref"]["record_id"] for r in subs)
    assert all(r["resolution_status"] != "RESOLVED" for r in subs)


def _bindings(tmp_path, files: dict[str, str]) -> dict[str, tuple[str, str | None]]:
    repo, _ = make_repo(tmp_path, files)
    result = scan_repo(repo, tmp_path / "out")
    pkg = Path(next(p.path for p in result.packages if p.kind == "SERVICE"))
    return {b["config_key"]: (b["value_resolution"], b["value"]) for b in
            (json.loads(x) for x in (pkg / "config_bindings.jsonl").read_text().splitlines() if x)}


def test_one_import_that_does_not_resolve_drops_only_itself(tmp_path):
    files = {
        "pom.xml": pom("shop-parent", parent=None, packaging="pom", body="<modules><module>app</module></modules>"),
        **boot_module("app", "", {
            "src/main/resources/application.yml":
                "spring:\n  config:\n    import:\n      - classpath:a.yml\n      - optional:file:${user.home}/x.yml\n",
            "src/main/resources/a.yml": "from:\n  a: A\n",
            "src/main/java/com/example/PKG/Reader.java": """package com.example.PKG;
@org.springframework.stereotype.Component
public class Reader { @org.springframework.beans.factory.annotation.Value("${from.a}") private String a; }
"""}),
    }
    assert _bindings(tmp_path, files)["config://from.a"] == ("RESOLVED", "A")


def test_deeply_nested_pointcuts_are_undecided_not_a_crash():
    from diting.resolve.aop import UNKNOWN, PointcutReader
    ev = PointcutReader(lambda fqn: True, lambda name: None, {})
    assert ev.verdict("(" * 5000 + "@annotation(com.x.Log)" + ")" * 5000).status == UNKNOWN
    assert ev.verdict("!" * 5000 + "@annotation(com.x.Log)").status == UNKNOWN
    assert ev.verdict("@annotation(com.x.Log)").status != UNKNOWN
