"""Hostile input, the smaller items of issue 20: line ends, config files Spring refuses, MySQL ``#``
comments, crafted tree paths and record sizes — each a class, each with its correct expected value."""

from __future__ import annotations

import json
from pathlib import Path

from diting.ir.verify import verify_package
from tests.conftest import BOOT_PLUGIN, make_repo, pom, scan_repo

HEAD = ('<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE mapper PUBLIC "-//mybatis.org//DTD Mapper 3.0//EN" '
        '"http://mybatis.org/dtd/mybatis-3-mapper.dtd">\n')
APP = ("package com.example;\n@org.springframework.boot.autoconfigure.SpringBootApplication\n"
       "public class App { public static void main(String[] a) { } }\n")
RES = "src/main/resources"


def _app(artifact: str, files: dict[str, str | bytes]) -> dict[str, str | bytes]:
    """A one-module Spring Boot service ``artifact`` with ``files``."""
    return {"pom.xml": pom(artifact, parent=None, body=BOOT_PLUGIN), "src/main/java/com/example/App.java": APP,
            **files}


def _records(out: Path, service: str) -> tuple[Path, dict[str, list[dict]]]:
    (pkg,) = [p for p in out.iterdir() if p.name.startswith(service + "@")]
    return pkg, {f[:-6]: [json.loads(x) for x in (pkg / f).read_text(encoding="utf-8").splitlines()]
                 for f in ("entities.jsonl", "relations.jsonl", "source_segments.jsonl", "diagnostics.jsonl",
                           "config_bindings.jsonl")}


def _evidence(recs: dict[str, list[dict]], name: str) -> list[tuple[str, int, int, str]]:
    """``(path, start, end, content)`` of the evidence of the entity named ``name``."""
    segs = {s["record_id"]: s for s in recs["source_segments"]}
    ent = next(e for e in recs["entities"] if e["name"] == name)
    return [(s["locator"]["path"], s["locator"]["start_line"], s["locator"]["end_line"], s["content"])
            for s in (segs[r["record_id"]] for r in ent["evidence_refs"])]


# ---------------------------------------------------------------- 1. line ends


def _cr(text: str) -> bytes:
    """``text`` with every LF a lone CR (an old Mac file)."""
    return text.replace("\n", "\r").encode("utf-8")


def test_lone_cr_and_mixed_line_ends_give_every_segment_its_lines(tmp_path):
    """A file whose lines end in a lone CR (Java, a MyBatis mapper, a pom, .properties, YAML) or in a
    mix of CRLF, CR and LF is as many lines as javac, XML, Properties and YAML see: every evidence
    segment cites its own lines (never the whole file as line 1), and ``verify --deep --repo`` re-reads
    them from git by the same rule."""
    files = _app("cr-app", {
        "pom.xml": _cr(pom("cr-app", parent=None, body=BOOT_PLUGIN)),
        "src/main/java/com/example/Orders.java": _cr(
            "package com.example;\n\n@org.springframework.stereotype.Service\npublic class Orders {\n"
            '    @org.springframework.beans.factory.annotation.Value("${order.size}") int size;\n'
            "    public void a() {}\n\n    public void b() {\n        a();\n    }\n}\n"),
        "src/main/java/com/example/Mixed.java":
            b"package com.example;\r\npublic class Mixed {\r    public void c() {}\n    public void d() {\r\n"
            b"    }\r}\n",
        f"{RES}/application.properties": _cr("# cr\nspring.application.name=cr-app\n"
                                             "mybatis.mapper-locations=classpath:mapper/*.xml\n"),
        f"{RES}/application.yml": b"order:\r  prefix: ord\r\n  size: 3\r",
        f"{RES}/mapper/OrderMapper.xml": _cr(
            HEAD + '<mapper namespace="com.example.OrderMapper">\n  <select id="one">\n'
            "    select * from t_order\n  </select>\n</mapper>\n"),
    })
    repo, sha = make_repo(tmp_path, files)
    scan_repo(repo, tmp_path / "out", sha)
    pkg, recs = _records(tmp_path / "out", "cr-app")
    java = "src/main/java/com/example"
    assert _evidence(recs, "com.example.Orders#b()") == [
        (f"{java}/Orders.java", 8, 10, "    public void b() {\n        a();\n    }")]
    assert _evidence(recs, "com.example.Mixed#c()") == [(f"{java}/Mixed.java", 3, 3, "    public void c() {}")]
    assert _evidence(recs, "com.example.Mixed#d()") == [(f"{java}/Mixed.java", 4, 5, "    public void d() {\r\n    }")]
    assert _evidence(recs, "com.example.OrderMapper.one") == [
        (f"{RES}/mapper/OrderMapper.xml", 4, 6, '  <select id="one">\n    select * from t_order\n  </select>')]
    cited = {(s["locator"]["path"], s["locator"]["start_line"], s["locator"]["end_line"]): s["content"]
             for s in recs["source_segments"]}
    assert cited[(f"{RES}/application.properties", 2, 2)] == "spring.application.name=cr-app"
    assert cited[("pom.xml", 5, 5)] == "<artifactId>cr-app</artifactId>"
    assert cited[(f"{RES}/application.yml", 3, 3)] == "  size: 3"
    assert not [d for d in recs["diagnostics"] if d["code"] == "PARSE_ERROR"]
    assert verify_package(pkg, deep=True, repo=repo) == []
