"""Each scan stage on a fact store built in memory (tests/stagekit.py): no git, no scan."""

from __future__ import annotations

import json

from diting.scan.facts import ScanFacts
from tests.conftest import BOOT_PLUGIN, pom
from tests.stagekit import facts_of, run_until

APP = """package com.example.order;
@org.springframework.boot.autoconfigure.SpringBootApplication
public class App { public static void main(String[] a) { } }
"""
PUBLISHER = """package com.example.order;
@org.springframework.stereotype.Service
public class Orders {
    @org.springframework.beans.factory.annotation.Autowired
    private org.springframework.kafka.core.KafkaTemplate<String, String> kafka;
    public void place(String id) { kafka.send("order-created", id); }
}
"""
FILES = {
    "pom.xml": pom("shop-parent", parent=None, packaging="pom", body="<modules><module>order</module></modules>"),
    "order/pom.xml": pom("order", body=BOOT_PLUGIN),
    "order/src/main/java/com/example/order/App.java": APP,
    "order/src/main/java/com/example/order/Orders.java": PUBLISHER,
    "order/src/main/java/com/example/order/Broken.java": b"\x00\x01\x02\x03" * 100,
    "order/src/main/resources/application.yml": "spring:\n  application:\n    name: order-service\n",
}


def test_build_finds_the_modules_and_their_closures(tmp_path):
    facts = run_until(facts_of(FILES, tmp_path / "out"), "build")
    assert sorted(facts.inv.modules) == ["order/pom.xml", "pom.xml"]
    assert facts.closures["order/pom.xml"] == ["order/pom.xml"]
    assert "file_facts" not in facts  # later stages did not run


def test_sources_parse_java_and_keep_what_they_could_not_read(tmp_path):
    facts = run_until(facts_of(FILES, tmp_path / "out"), "sources")
    assert sorted(facts.file_facts) == ["order/src/main/java/com/example/order/App.java",
                                        "order/src/main/java/com/example/order/Orders.java"]
    problem = facts.file_problems["order/src/main/java/com/example/order/Broken.java"]
    assert problem.code == "FILE_UNREADABLE" and "binary content" in problem.message
    assert facts.config_states["order/src/main/resources/application.yml"].problem is None


def test_modules_make_candidates_and_services_name_the_deployable(tmp_path):
    facts = run_until(facts_of(FILES, tmp_path / "out"), "services")
    sends = [c for c in facts.module_results["order/pom.xml"].candidates if c["emit"] == "MQ_SEND"]
    assert [c["call"]["name"] for c in sends] == ["send"]
    assert [(p.service_id, p.kind) for p in facts.plans] == [("lib:shop-parent", "LIB"), ("order-service", "SERVICE")]


def test_packages_write_the_service_with_its_send(tmp_path):
    facts: ScanFacts = run_until(facts_of(FILES, tmp_path / "out"), "packages")
    (order,) = [r for r in facts.package_results if r.service_id == "order-service"]
    assert order.status == "PARTIAL"  # the binary file's ERROR diagnostic
    rels = [json.loads(line) for line in (order.path / "relations.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [r["target_ref"] and r["stable_id"].rsplit("|", 2)[-2] for r in rels if r["kind"] == "PUBLISHES"] == \
        ["kafka://order-created"]


def test_a_listener_rule_that_matches_a_field_yields_no_entry_and_says_why(tmp_path):
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "acme.yaml").write_text(
        "family: acme\nversion: 1\nowner: o\ndescription: d\nrules:\n  - id: acme.listen\n    version: 1\n"
        "    owner: o\n    family: acme\n    description: d\n    source: s\n"
        "    match: {annotation: {fqn: com.acme.Listen, attributes: {value: topic}}}\n"
        "    emits: {kind: MQ_LISTENER, protocol: kafka}\n", encoding="utf-8")
    files = dict(FILES, **{"order/src/main/java/com/example/order/Holder.java":
                           "package com.example.order;\n@org.springframework.stereotype.Component\npublic class Holder {\n"
                           "    @com.acme.Listen(\"t\") private String field;\n}\n"})
    facts = run_until(facts_of(files, tmp_path / "out", rules_dirs=[rules]), "packages")
    (order,) = [r for r in facts.package_results if r.service_id == "order-service"]
    diags = [json.loads(line) for line in (order.path / "diagnostics.jsonl").read_text(encoding="utf-8").splitlines()]
    assert any(d["code"] == "ENTRY_UNRESOLVED" and "matched a FIELD" in d["message"] for d in diags)
