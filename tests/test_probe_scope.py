"""Probe facts in a package of many modules: every declaration keeps its own record, and a type is
looked up on the declaring module's classpath (a lib package of samples repeats class names)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import pom
from tests.stagekit import scan_memory

API = "package org.sample.api;\npublic interface DemoService { String hello(String n); }\n"
IMPL = ("package org.sample.impl;\npublic class DemoServiceImpl implements org.sample.api.DemoService {\n"
        "    public String hello(String n) { return n; }\n}\n")


def _xml(body: str) -> str:
    return ('<?xml version="1.0"?>\n<beans xmlns="http://www.springframework.org/schema/beans"\n'
            '       xmlns:dubbo="http://dubbo.apache.org/schema/dubbo">\n' + body + "</beans>\n")


def _records(out: Path) -> list[dict]:
    recs = []
    for pkg in out.iterdir():
        for f in ("entities.jsonl", "relations.jsonl"):
            p = pkg / f
            if p.is_file():
                recs.extend(json.loads(line) for line in p.read_text().splitlines())
    return recs


def test_same_bean_name_in_separate_xml_contexts_and_same_class_in_two_modules(tmp_path):
    files = {
        "pom.xml": pom("samples-all", parent=None, packaging="pom",
                       body="<modules><module>router-a</module><module>router-b</module></modules>"),
        "router-a/pom.xml": pom("router-a", parent="samples-all"),
        "router-b/pom.xml": pom("router-b", parent="samples-all"),
    }
    for m in ("router-a", "router-b"):
        files[f"{m}/src/main/java/org/sample/api/DemoService.java"] = API
        files[f"{m}/src/main/java/org/sample/impl/DemoServiceImpl.java"] = IMPL
    files["router-a/src/main/resources/spring/provider.xml"] = _xml(
        '  <bean id="demoService" class="org.sample.impl.DemoServiceImpl"/>\n'
        '  <dubbo:service interface="org.sample.api.DemoService" ref="demoService"/>\n')
    files["router-a/src/main/resources/spring/consumer.xml"] = _xml(
        '  <dubbo:reference id="demoService" interface="org.sample.api.DemoService"/>\n')
    files["router-a/src/main/resources/spring/consumer2.xml"] = _xml(
        '  <dubbo:reference id="demoService" interface="org.sample.api.DemoService"/>\n')
    out = tmp_path / "out"
    scan_memory(files, out)
    recs = _records(out)
    beans = {r["record_id"]: r for r in recs if r.get("kind") == "BEAN"}
    named = sorted(rid for rid in beans if "router-a/demoService" in rid)
    assert len(named) == 3, named  # the provider's impl bean and both references, each its own record
    assert any(rid.endswith("@router-a/src/main/resources/spring/consumer2.xml") for rid in named)
    kinds = sorted(b["attributes"]["declared_by"] for rid, b in beans.items() if rid in named)
    assert kinds == ["RPC_CONSUMER", "RPC_CONSUMER", "XML"]
    # each bean binds to the type of its own module, never to router-b's copy of the same name
    binds = [r for r in recs if r.get("kind") == "BINDS_TO" and r["source_ref"]["record_id"] in named]
    assert len(binds) == 3
    assert all("router-a/org.sample." in r["target_ref"]["record_id"] for r in binds), binds
    # the provider's contract is made from router-a's declarations (ref resolved in its own file)
    contracts = [r for r in recs if r.get("kind") == "CONTRACT" and r["role"] == "PROVIDED"]
    assert [(c["urn"], c["signature"], c["attributes"]["loaded"]) for c in contracts] == \
        [("dubbo://org.sample.api.DemoService#hello", ["java.lang.String"], False)]  # a lib package loads nothing


def test_auto_configuration_listing_registers_its_classes_as_beans(tmp_path):
    from tests.conftest import BOOT_PLUGIN
    dep = ("<dependencies><dependency><groupId>com.example</groupId><artifactId>common-security</artifactId>"
           "<version>1.0</version></dependency></dependencies>")
    files = {
        "pom.xml": pom("shop-parent", parent=None, packaging="pom",
                       body="<modules><module>common-security</module><module>auth</module></modules>"),
        "common-security/pom.xml": pom("common-security"),
        "common-security/src/main/java/com/example/security/TokenStore.java":
            "package com.example.security;\npublic interface TokenStore { void remove(String user); }\n",
        # no stereotype annotation: the auto-configuration listing alone makes it a bean
        "common-security/src/main/java/com/example/security/RedisTokenStore.java":
            "package com.example.security;\npublic class RedisTokenStore implements TokenStore {\n"
            "    public void remove(String user) { }\n}\n",
        "common-security/src/main/resources/META-INF/spring/"
        "org.springframework.boot.autoconfigure.AutoConfiguration.imports":
            "# security beans\ncom.example.security.RedisTokenStore\n",
        "auth/pom.xml": pom("auth", body=dep + BOOT_PLUGIN),
        "auth/src/main/java/com/example/auth/AuthApplication.java":
            "package com.example.auth;\n@org.springframework.boot.autoconfigure.SpringBootApplication\n"
            "public class AuthApplication { public static void main(String[] a) { } }\n",
        "auth/src/main/java/com/example/auth/LogoutHandler.java":
            "package com.example.auth;\n@org.springframework.stereotype.Component\npublic class LogoutHandler {\n"
            "    @org.springframework.beans.factory.annotation.Autowired\n"
            "    private com.example.security.TokenStore tokenStore;\n}\n",
    }
    out = tmp_path / "out"
    scan_memory(files, out)
    auth = [p for p in out.iterdir() if p.name.startswith("auth@")]
    assert len(auth) == 1
    rels = [json.loads(x) for x in (auth[0] / "relations.jsonl").read_text().splitlines()]
    ents = {json.loads(x)["record_id"]: json.loads(x) for x in (auth[0] / "entities.jsonl").read_text().splitlines()}
    injects = [r for r in rels if r["kind"] == "INJECTS" and r["source_ref"]["record_id"].endswith("LogoutHandler.tokenStore")]
    assert len(injects) == 1 and injects[0]["resolution_status"] == "RESOLVED", injects
    bean = ents[injects[0]["target_ref"]["record_id"]]
    assert bean["name"] == "com.example.security.RedisTokenStore"
    assert bean["attributes"]["declared_by"] == "IMPORTED" and bean["attributes"]["loaded"] is True
