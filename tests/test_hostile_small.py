"""Hostile input, the smaller items of issue 20: line ends, config files Spring refuses, MySQL ``#``
comments, crafted tree paths and record sizes — each a class, each with its correct expected value."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

from diting.ir.verify import verify_package
from tests.conftest import BOOT_PLUGIN, make_repo, pom, run_cli, scan_repo

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


# ---------------------------------------------------------------- 2. config files Spring Boot refuses


def test_config_files_spring_boot_refuses_are_parse_errors_never_half_read(tmp_path):
    """A ``.properties`` file with a malformed ``\\uXXXX`` (``Properties.load`` and Spring Boot's loader
    throw) and a YAML mapping that repeats a key (SnakeYAML with allowDuplicateKeys=false) are no
    config source, as at run time: a PARSE_ERROR names the file and line, and no key of the file is
    used; in a file the user hands over, a repeated key is a user error naming the file and line."""
    from diting.config.sources import parse_properties, parse_yaml
    bad = parse_properties("a.properties", "a=1\nb=x\\\n  y\\u00zz\n")
    assert (bad.error_line, bad.documents) == (3, []) and "malformed \\uxxxx" in bad.error
    assert parse_properties("a.properties", "# \\uzz\na=\\\\u00zz\n").documents[0].entries[0].value == "\\u00zz"
    dup = parse_yaml("a.yml", "x:\n  on: 1\n  true: 2\n")  # YAML 1.1: one boolean key
    assert (dup.error_line, dup.documents) == (3, []) and "duplicate key 'true' (first at line 2)" in dup.error
    assert not parse_yaml("a.yml", 'x:\n  "1": a\n  1: b\n---\nx: 2\n').error  # a string and an int; two documents
    files = _app("esc-app", {
        f"{RES}/application.properties": "spring.application.name=from-props\nbad.key=\\uZZZZ\n",
        f"{RES}/application.yml": "order:\n  size: 3\n  size: 4\n",
        "src/main/java/com/example/Orders.java": "package com.example;\n@org.springframework.stereotype.Service\n"
        'public class Orders {\n  @org.springframework.beans.factory.annotation.Value("${order.size}") int size;\n}\n'})
    repo, sha = make_repo(tmp_path, files)
    scan_repo(repo, tmp_path / "out", sha)
    pkg, recs = _records(tmp_path / "out", "esc-app")  # not from-props: the file is no config source
    errors = sorted(d["message"] for d in recs["diagnostics"] if d["code"] == "PARSE_ERROR")
    assert errors == [f"{RES}/application.properties: malformed \\uxxxx encoding (java.util.Properties and Spring "
                      "Boot refuse the file) (line 2)",
                      f"{RES}/application.yml: duplicate key 'size' (first at line 2): Spring Boot refuses the file "
                      "(line 3)"]
    segs = {s["record_id"]: s["locator"] for s in recs["source_segments"]}
    cited = sorted((segs[r["record_id"]]["path"], segs[r["record_id"]]["start_line"]) for d in recs["diagnostics"]
                   if d["code"] == "PARSE_ERROR" for r in d["evidence_refs"])
    assert cited == [(f"{RES}/application.properties", 2), (f"{RES}/application.yml", 3)]
    size = next(b for b in recs["config_bindings"] if b["config_key"].endswith("order.size"))
    assert (size["value_resolution"], size["value"]) == ("UNKNOWN", None)
    files_dim = json.loads((pkg / "coverage.json").read_text())["dimensions"]["files"]
    assert files_dim["failed"] == 2
    inv = tmp_path / "inventory.yaml"
    inv.write_text("services:\n  - service_id: esc-app\n    module_path: .\n    service_id: other\n")
    r = run_cli("scan", str(repo), "--commit", sha, "--out", str(tmp_path / "o2"), "--inventory", str(inv), "--quiet")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.strip().splitlines() == [f"error: inventory file {inv} repeats the key 'service_id' in one "
                                             "mapping (line 4, first at line 2)"]


def test_a_yaml_tag_spring_boot_does_not_construct_is_a_parse_error(tmp_path):
    """``!!python/object/apply:…`` (or any tag SnakeYAML's SafeConstructor has no constructor for) was
    read as a plain string; Spring Boot refuses the file. In a file Spring Boot loads — by its name,
    or imported — it is a PARSE_ERROR and no key of it is used; another loader's YAML resource
    (ShardingSphere's ``!SHARDING``) keeps its tags without a word. YAML's standard tags stay fine."""
    from diting.config.sources import parse_yaml
    bad = parse_yaml("a.yml", "a: 1\nx: !!python/object/apply:os.system ['id']\n")
    assert (bad.documents, bad.error_line, bad.error) == (
        [], 2, "tag '!!python/object/apply:os.system': Spring Boot's YAML loader constructs only YAML's standard "
        "types and refuses the file")
    assert parse_yaml("a.yml", "? !custom k\n: v\n").error_line == 1  # a key's tag too
    assert parse_yaml("a.yml", "- !SHARDING\n  t: 1\n", allow_any_tag=True).error is None
    standard = ("b: !!binary aGk=\ni: !!int '3'\ns: !!str 4\nt: !!timestamp 2024-01-01\nset: !!set {a}\n"
                "o: !!omap [a: 1]\np: !!pairs [a: 1]\nf: !!float 1\nn: !!null ''\nq: =\nbase: &b {k: 1}\n"
                "m: {<<: *b}\ne: ! tagged-as-text\nl: !!seq [1]\nd: !!map {a: 1}\nv: !!bool yes\n")
    assert parse_yaml("a.yml", standard).error is None
    files = _app("tag-app", {
        f"{RES}/application.properties": "spring.application.name=tag-app\nspring.config.import=classpath:extra.yml\n",
        f"{RES}/application.yml": "order:\n  size: !!python/object/apply:os.system ['id']\n",
        f"{RES}/extra.yml": "order:\n  limit: !java.util.Date 1\n",
        f"{RES}/config-sharding.yaml": "rules:\n- !SHARDING\n  tables: {}\n",
        "src/main/java/com/example/Orders.java": "package com.example;\n@org.springframework.stereotype.Service\n"
        'public class Orders {\n  @org.springframework.beans.factory.annotation.Value("${order.size:5}") String size;\n'
        '  @org.springframework.beans.factory.annotation.Value("${order.limit:9}") String limit;\n}\n'})
    repo, sha = make_repo(tmp_path, files)
    scan_repo(repo, tmp_path / "out", sha)
    pkg, recs = _records(tmp_path / "out", "tag-app")
    errors = sorted(d["message"] for d in recs["diagnostics"] if d["code"] == "PARSE_ERROR")
    assert errors == [
        f"{RES}/application.yml: tag '!!python/object/apply:os.system': Spring Boot's YAML loader constructs only "
        "YAML's standard types and refuses the file (line 2)",
        f"{RES}/extra.yml: config source not read: tag '!java.util.Date': Spring Boot's YAML loader constructs only "
        "YAML's standard types and refuses the file"]
    values = {b["config_key"]: b["value_resolution"] for b in recs["config_bindings"]}
    assert values == {"config://order.size": "DEFAULT_ONLY", "config://order.limit": "DEFAULT_ONLY"}
    files_dim = json.loads((pkg / "coverage.json").read_text())["dimensions"]["files"]
    assert (files_dim["resolved"], files_dim["failed"]) == (5, 2)  # pom, App, Orders, .properties, sharding


def test_gradle_properties_with_a_malformed_escape_are_a_parse_error():
    """Gradle loads ``gradle.properties`` with java.util.Properties: a malformed ``\\uXXXX`` fails the
    build, so none of its properties is used and a PARSE_ERROR names the file and line."""
    from tests.test_gradle import model, project
    m = model({"settings.gradle": "rootProject.name = 'shop'\n",
               "gradle.properties": "springVersion=6.1.2\nbad=\\u12\n",
               "build.gradle": "apply plugin: 'java'\ndependencies { implementation \"a:b:$springVersion\" }\n"})
    (f,) = [f for f in m.findings if f.code == "PARSE_ERROR"]
    assert (f.path, f.start_line) == ("gradle.properties", 2) and "malformed \\uxxxx" in f.message
    assert all(d.version != "6.1.2" for d in project(m, ":").dependencies)  # springVersion is unknown


# ---------------------------------------------------------------- 3. MySQL comments


def _statement_tables(tmp_path: Path, files: dict[str, str | bytes], service: str) -> dict[str, tuple[str, set[str]]]:
    """Scan ``files``: statement stable id → (parse status, names of the tables it reads or writes)."""
    repo, sha = make_repo(tmp_path, files)
    scan_repo(repo, tmp_path / "out", sha)
    _, recs = _records(tmp_path / "out", service)
    ents = {e["record_id"]: e for e in recs["entities"]}
    out = {e["stable_id"]: (e["attributes"]["parse_status"], set()) for e in ents.values() if e["kind"] == "SQL_STATEMENT"}
    for r in recs["relations"]:
        if r["kind"] in ("READS", "WRITES") and r["target_ref"]:
            out[ents[r["source_ref"]["record_id"]]["stable_id"]][1].add(ents[r["target_ref"]["record_id"]]["name"])
    return out


def test_a_mysql_hash_comment_line_keeps_its_statement(tmp_path):
    """MySQL reads ``# …`` to the end of the line as a comment (``-- `` only before a blank): a comment
    line before a statement — in a mapper or in annotation SQL — is cut before whitespace is folded,
    never swallowing the statement. ``#{…}``/``${…}`` placeholders, ``#`` inside quotes or a block
    comment, and ``a--1`` (a minus minus) are no comments; in PostgreSQL ``#`` is an operator."""
    mapper = HEAD + '''<mapper namespace="com.example.OrderMapper">
  <select id="one"># find orders
    SELECT * FROM t_order WHERE id = #{id}</select>
  <select id="quoted">select * from t_note where body = '# not a comment' /* # nor this */ and id = #{id}
    # trailing comment
    and shop_id in (select id from t_shop)</select>
  <select id="minus">select price--1 from t_price # the cheapest
    join t_discount on 1 = 1</select>
</mapper>
'''
    java = ("package com.example;\n@org.apache.ibatis.annotations.Mapper\npublic interface OrderMapper {\n"
            '  @org.apache.ibatis.annotations.Select("# by user\\nSELECT * FROM t_user_order WHERE user_id = #{u}")\n'
            "  Object byUser(long u);\n}\n")
    got = _statement_tables(tmp_path / "my", _app("my-app", {
        f"{RES}/application.properties": "mybatis.mapper-locations=classpath:mapper/*.xml\n",
        f"{RES}/mapper/OrderMapper.xml": mapper, "src/main/java/com/example/OrderMapper.java": java}), "my-app")
    assert got["com.example.OrderMapper.one"] == ("PARSED", {"t_order"})
    assert got["com.example.OrderMapper.quoted"] == ("PARSED", {"t_note", "t_shop"})
    assert got["com.example.OrderMapper.minus"] == ("PARSED", {"t_price", "t_discount"})
    assert got["com.example.OrderMapper.byUser"] == ("PARSED", {"t_user_order"})
    pg = _statement_tables(tmp_path / "pg", _app("pg-app", {
        f"{RES}/application.properties": "spring.datasource.url=jdbc:postgresql://db:5432/trade\n"
                                         "mybatis.mapper-locations=classpath:mapper/*.xml\n",
        f"{RES}/mapper/M.xml": HEAD + '<mapper namespace="com.example.M">\n  <select id="xor">select flags # mask\n'
                               "    from t_flag</select>\n</mapper>\n"}), "pg-app")
    assert pg["com.example.M.xor"] == ("PARSED", {"t_flag"})


# ---------------------------------------------------------------- 4. crafted tree paths


def _git(repo: Path, *args: str, data: bytes | None = None) -> str:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
           "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z"}
    return subprocess.run(["git", "-C", str(repo), *args], input=data, capture_output=True, check=True,
                          env=env).stdout.decode().strip()


def _literal_tree(repo: Path, entries: list[tuple[str, str, bytes]]) -> str:
    """A tree object written as given (``(mode, sha, name)``; a name may hold ``/``), as only
    ``hash-object --literally`` writes one."""
    body = b"".join(mode.encode() + b" " + name + b"\0" + bytes.fromhex(sha) for mode, sha, name in entries)
    return _git(repo, "hash-object", "-w", "-t", "tree", "--literally", "--stdin", data=body)


def test_crafted_tree_entries_git_refuses_to_check_out_are_never_read(tmp_path):
    """Tree entries whose path has a ``..``, ``.``, ``.git`` or empty segment, an absolute path, or a
    path another entry also has (a crafted name holding ``/``) are refused by a git checkout; ``git
    mktree`` and ``hash-object --literally`` still write them. None is read as a file of the
    repository: each path gets a PATH_OUTSIDE_TREE diagnostic, coverage counts it excluded as
    ``refused_path``, and what it says (an application name, a class) is in no record."""
    repo, sha = make_repo(tmp_path, _app("tree-app", {f"{RES}/application.properties": "x=1\n"}))
    evil_java = _git(repo, "hash-object", "-w", "--stdin", data=b"package com.example;\npublic class Evil {}\n")
    evil_props = _git(repo, "hash-object", "-w", "--stdin", data=b"spring.application.name=evil\n")
    dotdot = _git(repo, "mktree", data=f"100644 blob {evil_java}\tEvil.java\n".encode())
    dotgit = _git(repo, "mktree", data=f"100644 blob {evil_props}\tconfig\n".encode())
    with_empty = _literal_tree(repo, [("100644", evil_java, b"/Evil.java")])
    top = _git(repo, "ls-tree", sha).splitlines()
    listing = "".join(f"{row}\n" for row in top) + (
        f"040000 tree {dotdot}\t..\n100644 blob {evil_props}\t.\n040000 tree {dotgit}\t.git\n"
        f"040000 tree {with_empty}\tempty\n")
    crafted = _git(repo, "mktree", data=listing.encode())
    rows = [(r.split()[0], r.split()[2], r.split("\t", 1)[1].encode()) for r in _git(repo, "ls-tree", crafted).splitlines()]
    rows += [("100644", evil_props, f"{RES}/application.properties".encode()), ("100644", evil_java, b"/etc")]
    commit = _git(repo, "commit-tree", _literal_tree(repo, sorted(rows, key=lambda r: r[2])), "-m", "crafted")
    scan_repo(repo, tmp_path / "out", commit)
    pkg, recs = _records(tmp_path / "out", "tree-app")  # not 'evil': the crafted copy of the config is refused
    refused = sorted(d["message"] for d in recs["diagnostics"] if d["code"] == "PATH_OUTSIDE_TREE")
    assert refused == sorted([
        "../Evil.java is a tree entry git refuses to check out (a path segment '..'); it is not read as a file of "
        "the repository",
        ". is a tree entry git refuses to check out (a path segment '.'); it is not read as a file of the repository",
        ".git/config is a tree entry git refuses to check out (a '.git' path segment); it is not read as a file of "
        "the repository",
        "/etc is a tree entry git refuses to check out (an absolute path); it is not read as a file of the repository",
        "empty//Evil.java is a tree entry git refuses to check out (an empty path segment); it is not read as a file "
        "of the repository",
        f"{RES}/application.properties is a tree entry git refuses to check out (another tree entry has the same "
        "path); it is not read as a file of the repository"])
    assert not any("Evil" in e["name"] for e in recs["entities"])
    assert not any(s["locator"]["path"] != "pom.xml" and "src/" not in s["locator"]["path"]
                   for s in recs["source_segments"])
    files = json.loads((pkg / "coverage.json").read_text())["dimensions"]["files"]
    assert files["excluded_by_reason"]["refused_path"] == 7  # the two entries of one path each count
    assert verify_package(pkg, deep=True, repo=repo) == []


# ---------------------------------------------------------------- 5. record sizes


def test_a_span_too_long_for_one_record_is_cut_to_its_first_lines(monkeypatch):
    """A segment whose record would be longer than MAX_RECORD_BYTES cites its longest first lines
    that fit, and says so (BUDGET_EXHAUSTED naming the span); asked again, the same cut record."""
    import diting.ir.builder as builder
    from diting.ir.canonical import dumps_bytes
    monkeypatch.setattr(builder, "MAX_RECORD_BYTES", 4096)
    lines = [f"db{i}.host=10.0.{i % 200}.{i % 250 + 1}" for i in range(400)]
    rs = builder.RecordSet("test/repo", "0" * 40)
    rid = rs.segment("a.properties", lines, 3, 400, "CONFIG", "utf-8")
    assert rs.segment("a.properties", lines, 3, 400, "CONFIG", "utf-8") == rid
    seg = rs.segments[rid]
    end = seg["locator"]["end_line"]
    assert seg["locator"]["start_line"] == 3 and 3 < end < 400
    assert len(dumps_bytes(seg)) <= 4096 < len(dumps_bytes(rs._segment_lines("a.properties", lines, 3, end + 1,
                                                                             "CONFIG", "utf-8")))
    (d,) = rs.diagnostics.values()
    assert d["code"] == "BUDGET_EXHAUSTED" and [r.rid for r in d["evidence_refs"]] == [rid]
    assert d["message"].startswith(f"a.properties:3-400: evidence cut to lines 3-{end}: the whole span would be a "
                                   "record longer than the 4096 bytes")


def test_a_file_with_a_line_too_long_to_cite_is_not_read(tmp_path):
    """Evidence cites whole lines: a file with a line longer than MAX_LINE_BYTES could give a record
    longer than any reader takes, so it is not read (FILE_TOO_LARGE) — in any line-end style."""
    from diting.source.snapshot import MAX_LINE_BYTES
    long_value = "x" * (MAX_LINE_BYTES + 1)
    files = _app("long-app", {f"{RES}/application.properties": f"spring.application.name=named\rk={long_value}\r"})
    repo, sha = make_repo(tmp_path, files)
    scan_repo(repo, tmp_path / "out", sha)
    pkg, recs = _records(tmp_path / "out", "long-app")  # the file is not read: not 'named'
    (d,) = [d for d in recs["diagnostics"] if d["code"] == "FILE_TOO_LARGE"]
    assert d["message"] == (f"{RES}/application.properties has a line of more than {MAX_LINE_BYTES} bytes: evidence "
                            "cites whole lines, and one that long could not be a record; not read")
    assert verify_package(pkg, deep=True, repo=repo) == []


def _write_long_line(path: Path, prefix: bytes, n: int, suffix: bytes) -> None:
    """Append one line ``prefix + b"x" * n + suffix`` to ``path`` without holding it whole."""
    with path.open("ab") as fh:
        fh.write(prefix)
        chunk = b"x" * (1 << 20)
        for _ in range(n >> 20):
            fh.write(chunk)
        fh.write(b"x" * (n & ((1 << 20) - 1)) + suffix + b"\n")


def _reseal(pkg: Path) -> None:
    """The manifest's checksums and record counts made those of the files (read in chunks)."""
    m = json.loads((pkg / "manifest.json").read_text())
    for f in m["files"]:
        h, lines = hashlib.sha256(), 0
        with (pkg / f["path"]).open("rb") as fh:
            while chunk := fh.read(1 << 22):
                h.update(chunk)
                lines += chunk.count(b"\n")
        f["sha256"] = h.hexdigest()
        if f["path"].endswith(".jsonl"):
            f["record_count"] = lines
    (pkg / "manifest.json").write_text(json.dumps(m, sort_keys=True, separators=(",", ":")) + "\n")


def test_verify_and_graph_build_agree_on_the_longest_record(tmp_path):
    """One bound for every reader: a jsonl line over MAX_RECORD_BYTES is refused by verify (file:line)
    and by graph build (exit 2, one message), before any JSON parser holds it; a line between
    DuckDB's default object size and the bound loads."""
    from diting.ir.canonical import MAX_RECORD_BYTES
    repo, sha = make_repo(tmp_path, _app("rec-app", {}))
    scan_repo(repo, tmp_path / "out", sha)
    pkg, _ = _records(tmp_path / "out", "rec-app")
    big = tmp_path / "big" / pkg.name
    shutil.copytree(pkg, big)
    segs = (big / "source_segments.jsonl").read_text().splitlines()
    first = json.loads(segs[0])
    first["content"] = "y" * 34_000_000  # DuckDB's default maximum_object_size reads up to about 32 MiB
    (big / "source_segments.jsonl").write_text("\n".join([json.dumps(first, sort_keys=True, separators=(",", ":")),
                                                          *segs[1:]]) + "\n")
    del first
    _reseal(big)
    assert verify_package(big) == []
    db = tmp_path / "g.duckdb"
    r = run_cli("graph", "build", "--fast", "--db", str(db), str(big))  # the content was forged: --fast
    assert r.returncode == 0, r.stderr
    import duckdb
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT max(length(content)) FROM segments").fetchone()[0] == 34_000_000
    over = tmp_path / "over" / pkg.name
    shutil.copytree(pkg, over)
    lines = (over / "diagnostics.jsonl").read_bytes().count(b"\n")
    _write_long_line(over / "diagnostics.jsonl", b'{"message":"', MAX_RECORD_BYTES, b'"}')
    _reseal(over)
    said = (f"diagnostics.jsonl:{lines + 1}: a record of {MAX_RECORD_BYTES + 14} bytes, longer than the "
            f"{MAX_RECORD_BYTES} bytes a record may be")
    r = run_cli("verify", str(over))
    assert r.returncode == 1 and said in r.stdout and "Traceback" not in r.stderr
    r = run_cli("graph", "build", "--db", str(tmp_path / "g2.duckdb"), str(over))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.strip().splitlines() == [f"error: {over}: the package does not verify (1 finding(s), first: "
                                             f"{said}); nothing was loaded"]


def test_an_unread_pom_cites_its_real_first_line(tmp_path):
    """A module whose pom is not read (a line too long to cite, a Git LFS pointer) is skipped, never
    dropped; the evidence of its MODULE record is the blob's real first line, so ``verify --repo``
    finds it at the commit."""
    from diting.source.snapshot import MAX_LINE_BYTES
    root = pom("shop", parent=None, packaging="pom", body="<modules><module>a</module><module>b</module></modules>")
    files = {"pom.xml": root,
             "a/pom.xml": pom("a", body=f"<!-- {'x' * (MAX_LINE_BYTES + 1)} -->"),
             "b/pom.xml": "version https://git-lfs.github.com/spec/v1\noid sha256:abc\nsize 12\n"}
    repo, sha = make_repo(tmp_path, files)
    scan_repo(repo, tmp_path / "out", sha)
    (pkg,) = list((tmp_path / "out").iterdir())
    segs = [json.loads(x) for x in (pkg / "source_segments.jsonl").read_text().splitlines()]
    cited = {s["locator"]["path"]: s["content"] for s in segs if s["locator"]["path"] != "pom.xml"}
    assert cited == {"a/pom.xml": '<?xml version="1.0"?>', "b/pom.xml": "version https://******************/spec/v1"}  # its host redacted
    assert verify_package(pkg, deep=True, repo=repo) == []
