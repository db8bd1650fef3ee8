"""Hostile input: every case ends in a diagnostic or a clear message, never a traceback (issue 2 §8)."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path


from diting.ir.verify import verify_package
from tests.conftest import BOOT_PLUGIN, make_repo, pom, run_cli

ROOT_POM = pom("shop-parent", parent=None, packaging="pom",
               body="<modules><module>svc</module></modules>")
APP = ("package shop;\nimport org.springframework.boot.autoconfigure.SpringBootApplication;\n"
       "@SpringBootApplication\npublic class App {\n    public static void main(String[] args) {}\n}\n")


def shop(extra: dict[str, bytes | str], root_pom: str = ROOT_POM) -> dict[str, bytes | str]:
    files: dict[str, bytes | str] = {"pom.xml": root_pom, "svc/pom.xml": pom("svc", body=BOOT_PLUGIN),
                                     "svc/src/main/java/shop/App.java": APP}
    files.update(extra)
    return files


def scan_json(repo: Path, out: Path, *extra: str) -> dict:
    r = run_cli("scan", str(repo), "--commit", "HEAD", "--out", str(out), "--quiet", "--json", *extra)
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    return json.loads(r.stdout)


def diags(pkg: dict) -> list[dict]:
    return [json.loads(x) for x in (Path(pkg["path"]) / "diagnostics.jsonl").read_text().splitlines()]


def entity_names(pkg: dict) -> set[str]:
    return {json.loads(x)["name"] for x in (Path(pkg["path"]) / "entities.jsonl").read_text().splitlines()}


def svc_pkg(doc: dict) -> dict:
    return next(p for p in doc["packages"] if p["service_id"] == "svc")


def test_encodings_bom_and_crlf(tmp_path):
    files = shop({
        "svc/src/main/java/shop/Gbk.java": "package shop;\n// 订单状态\npublic class Gbk { String s = \"支付\"; }\n"
                                              .encode("gbk"),
        "svc/src/main/java/shop/Gb18030.java": "package shop;\n// 𠀀 扩展字\npublic class Gb18030 {}\n"
                                                  .encode("gb18030"),
        "svc/src/main/java/shop/Latin.java": "package shop;\n// déjà vu, naïve café\npublic class Latin {}\n"
                                                .encode("latin-1"),
        "svc/src/main/java/shop/Bom.java": b"\xef\xbb\xbfpackage shop;\npublic class Bom {}\n",
        "svc/src/main/java/shop/Crlf.java": b"package shop;\r\npublic class Crlf {\r\n  void f() {}\r\n}\r\n",
    })
    repo, _ = make_repo(tmp_path, files)
    doc = scan_json(repo, tmp_path / "out")
    pkg = svc_pkg(doc)
    assert {"shop.Gbk", "shop.Gb18030", "shop.Latin", "shop.Bom", "shop.Crlf", "shop.Crlf#f()"} <= entity_names(pkg)
    assert pkg["status"] == "COMPLETE"
    assert verify_package(Path(pkg["path"]), deep=True, repo=repo) == []
    segs = [json.loads(x) for x in (Path(pkg["path"]) / "source_segments.jsonl").read_text().splitlines()]
    enc = {s["locator"]["path"].rsplit("/", 1)[-1]: s["encoding"] for s in segs}
    assert enc["Bom.java"] == "utf-8" and enc["Crlf.java"] == "utf-8"
    assert enc["Gbk.java"] in ("gb18030", "gbk") and enc["Latin.java"] in ("cp1252", "latin_1", "iso8859-1")
    crlf = next(s for s in segs if s["locator"]["path"].endswith("Crlf.java") and "void f" in s["content"])
    assert crlf["content"].endswith("\r")


def test_nul_bytes_and_binary_java(tmp_path):
    files = shop({
        "svc/src/main/java/shop/Nul.java": b"package shop;\npublic class Nul {\n  int a;\x00\n  void ok() {}\n}\n",
        "svc/src/main/java/shop/Blob.java": bytes(range(256)) * 64,
    })
    repo, _ = make_repo(tmp_path, files)
    pkg = svc_pkg(scan_json(repo, tmp_path / "out"))
    by_code = {d["code"]: d for d in diags(pkg)}
    assert "NUL" in by_code["PARSE_ERROR"]["message"]
    assert "binary content" in by_code["FILE_UNREADABLE"]["message"]
    assert "shop.Nul#ok()" in entity_names(pkg)
    assert pkg["status"] == "PARTIAL"


def test_a_20_mb_generated_file_is_too_large(tmp_path):
    big = "package shop;\npublic class Gen {\n" + "    public static final String C%d = \"x\";\n" * 1 + "}\n"
    body = "".join(f"    public static final String C{i} = \"{'x' * 40}\";\n" for i in range(300_000))
    data = ("package shop;\npublic class Gen {\n" + body + "}\n").encode()
    assert len(data) > 20_000_000
    repo, _ = make_repo(tmp_path, shop({"svc/src/main/java/shop/Gen.java": data}))
    pkg = svc_pkg(scan_json(repo, tmp_path / "out"))
    tl = [d for d in diags(pkg) if d["code"] == "FILE_TOO_LARGE"]
    assert len(tl) == 1 and "over the limit of 8388608" in tl[0]["message"]
    cov = json.loads((Path(pkg["path"]) / "coverage.json").read_text())["dimensions"]["files"]
    assert cov["failed"] == 1
    del big


def test_the_size_limit_is_configurable(tmp_path):
    big = "package shop;\npublic class Big {\n" + "    int f;\n" * 500 + "}\n"
    repo, _ = make_repo(tmp_path, shop({"svc/src/main/java/shop/Big.java": big}))
    assert not [d for d in diags(svc_pkg(scan_json(repo, tmp_path / "a"))) if d["code"] == "FILE_TOO_LARGE"]
    pkg = svc_pkg(scan_json(repo, tmp_path / "b", "--max-file-bytes", "4000"))
    assert [d["code"] for d in diags(pkg) if d["severity"] == "ERROR"] == ["FILE_TOO_LARGE"]
    # a pom over the limit is a skipped module, never a silently missing one
    doc = scan_json(repo, tmp_path / "c", "--max-file-bytes", "100")
    assert [(p["service_id"], p["status"]) for p in doc["packages"]] == [("lib:root", "PARTIAL"),
                                                                         ("lib:svc", "PARTIAL")]
    assert [d["message"] for d in diags(doc["packages"][1])] == [
        "svc/pom.xml is not readable: not read (too_large, 426 bytes)"]


def test_deeply_nested_expressions(tmp_path):
    nested = "(" * 20000 + "1" + ")" * 20000
    chain = " + ".join(['"a"'] * 50000)
    src = f"package shop;\npublic class Deep {{\n  static final int X = {nested};\n  static final String S = {chain};\n}}\n"
    repo, _ = make_repo(tmp_path, shop({"svc/src/main/java/shop/Deep.java": src}))
    start = time.monotonic()
    pkg = svc_pkg(scan_json(repo, tmp_path / "out"))
    assert time.monotonic() - start < 120
    assert "shop.Deep.S" in entity_names(pkg)


def test_pom_with_doctype_entities_and_billion_laughs(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-VALUE")
    xxe = ('<?xml version="1.0"?>\n<!DOCTYPE project [<!ENTITY x SYSTEM "file://' + str(secret) + '">]>\n'
           + pom("svc", body=BOOT_PLUGIN + "<description>&x;</description>").split("\n", 1)[1])
    lol = ['<!ENTITY l0 "lol">'] + [f'<!ENTITY l{i} "{("&l" + str(i - 1) + ";") * 10}">' for i in range(1, 10)]
    laughs = ('<?xml version="1.0"?>\n<!DOCTYPE project [' + "".join(lol) + ']>\n'
              + pom("laughs", body="<name>&l9;</name>").split("\n", 1)[1])
    root = pom("shop-parent", parent=None, packaging="pom",
               body="<modules><module>svc</module><module>laughs</module></modules>")
    repo, _ = make_repo(tmp_path, shop({"svc/pom.xml": xxe, "laughs/pom.xml": laughs}, root))
    doc = scan_json(repo, tmp_path / "out")
    text = "".join(Path(p["path"], f).read_text() for p in doc["packages"] for f in ("entities.jsonl",
                                                                                    "source_segments.jsonl"))
    assert "TOP-SECRET-VALUE" not in text
    lib = next(p for p in doc["packages"] if p["kind"] == "LIB")
    skipped = sorted(d["message"] for d in diags(lib) if d["code"] == "MODULE_SKIPPED")
    # the amplification is refused by the parser; the external entity is never expanded, and Maven's reader
    # refuses a reference to it: svc is no service (its pom is not read)
    assert len(skipped) == 2 and "amplification" in skipped[0] and skipped[0].startswith("laughs/pom.xml")
    assert skipped[1].startswith("svc/pom.xml is not readable: the entity reference &x; (line ")
    assert [p["service_id"] for p in doc["packages"]] == ["lib:shop-parent"]


def test_malformed_pom_skips_its_module_only(tmp_path):
    root = pom("shop-parent", parent=None, packaging="pom",
               body="<modules><module>svc</module><module>broken</module></modules>")
    repo, _ = make_repo(tmp_path, shop({"broken/pom.xml": "<project><artifactId>broken</artifactId>",
                                        "broken/src/main/java/b/B.java": "package b; class B {}"}, root))
    doc = scan_json(repo, tmp_path / "out")
    assert svc_pkg(doc)["status"] == "COMPLETE"
    lib = next(p for p in doc["packages"] if p["kind"] == "LIB")
    assert lib["status"] == "PARTIAL"
    assert [d["code"] for d in diags(lib) if d["severity"] == "ERROR"] == ["MODULE_SKIPPED"]
    assert verify_package(Path(lib["path"]), deep=True, repo=repo) == []


def test_repository_without_pom(tmp_path):
    repo, _ = make_repo(tmp_path, {"README.md": "gradle project\n", "src/main/java/A.java": "class A {}"})
    r = run_cli("scan", str(repo), "--commit", "HEAD", "--out", str(tmp_path / "o"))
    assert r.returncode == 2 and "no pom.xml" in r.stderr and "Traceback" not in r.stderr


def test_paths_leaving_the_tree_and_symlinks(tmp_path):
    root = pom("shop-parent", parent=None, packaging="pom",
               body="<modules><module>svc</module><module>../../etc</module></modules>")
    escaping_parent = pom("svc2", body="").replace(
        "<parent>", "<parent><relativePath>../../../outside/pom.xml</relativePath>")
    repo, _ = make_repo(tmp_path, shop({"svc2/pom.xml": escaping_parent}, root), symlinks={
        "svc/src/main/java/shop/Evil.java": "/etc/passwd",
        "svc/src/main/resources/application.yml": "../../../../../../etc/hostname",
    })
    doc = scan_json(repo, tmp_path / "out")
    everything = "".join(Path(p["path"], f).read_text() for p in doc["packages"]
                         for f in ("source_segments.jsonl", "entities.jsonl"))
    assert "root:x:0:0" not in everything
    codes = [d["code"] for p in doc["packages"] for d in diags(p)]
    assert codes.count("PATH_OUTSIDE_TREE") == 2
    cov = json.loads((Path(svc_pkg(doc)["path"]) / "coverage.json").read_text())["dimensions"]["files"]
    assert cov["excluded_by_reason"]["symlink"] == 2


def test_submodules_and_lfs_pointers(tmp_path):
    repo, _ = make_repo(tmp_path, shop({
        "svc/src/main/java/shop/Lfs.java": "version https://git-lfs.github.com/spec/v1\noid sha256:"
                                           + "0" * 64 + "\nsize 123\n"}))
    sub, _ = make_repo(tmp_path, {"x.txt": "x"}, name="sub")
    subprocess.run(["git", "-C", str(repo), "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub),
                    "svc/src/main/java/vendored"], check=True, capture_output=True)
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "sub"],
                   check=True)
    pkg = svc_pkg(scan_json(repo, tmp_path / "out"))
    msgs = [d["message"] for d in diags(pkg) if d["code"] == "FILE_UNREADABLE"]
    assert any("Git LFS pointer" in m for m in msgs) and any("git submodule" in m for m in msgs)


def test_config_redaction_in_evidence(tmp_path):
    yml = "spring:\n  application:\n    name: svc-center  # oncall 13812345678, db 10.1.2.3\n"
    repo, _ = make_repo(tmp_path, shop({"svc/src/main/resources/application.yml": yml}))
    doc = scan_json(repo, tmp_path / "out")
    pkg = next(p for p in doc["packages"] if p["service_id"] == "svc-center")
    seg = next(json.loads(x) for x in (Path(pkg["path"]) / "source_segments.jsonl").read_text().splitlines()
               if "svc-center" in x)
    assert "13812345678" not in seg["content"] and "10.1.2.3" not in seg["content"]
    assert [r["reason"] for r in seg["redactions"]] == ["phone", "ip"]
    assert verify_package(Path(pkg["path"]), deep=True, repo=repo) == []


def test_user_errors_are_one_line(tmp_path):
    r = run_cli("scan", str(tmp_path / "nowhere"), "--commit", "HEAD")
    assert r.returncode == 2 and "does not exist" in r.stderr
    (tmp_path / "plain").mkdir()
    r = run_cli("scan", str(tmp_path / "plain"), "--commit", "HEAD")
    assert r.returncode == 2 and "not a git repository" in r.stderr
    repo, _ = make_repo(tmp_path, shop({}))
    r = run_cli("scan", str(repo), "--commit", "v9.9.9")
    assert r.returncode == 2 and "unknown revision" in r.stderr
    empty = tmp_path / "empty"
    subprocess.run(["git", "init", "-q", str(empty)], check=True)
    subprocess.run(["git", "-C", str(empty), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q",
                    "--allow-empty", "-m", "empty"], check=True)
    r = run_cli("scan", str(empty), "--commit", "HEAD")
    assert r.returncode == 2 and "empty tree" in r.stderr
    for res in (r,):
        assert "Traceback" not in res.stderr


def test_terminal_output_is_never_markup_or_escapes(tmp_path):
    repo, _ = make_repo(tmp_path, shop({"svc/src/main/resources/application.properties":
                                        "spring.application.name=svc[/]\\u001b[31mred\n"}))
    subprocess.run(["git", "-C", str(repo), "config", "remote.origin.url", "https://h/[/]"], check=True)
    r = run_cli("scan", str(repo), "--commit", "HEAD", "--out", str(tmp_path / "o"))
    assert r.returncode == 0, r.stderr
    assert "\x1b" not in r.stdout and "svc[/]_[31mred" in r.stdout and r.stderr == ""
    r = run_cli("scan", str(tmp_path / "no[/]pe"), "--commit", "HEAD")
    assert r.returncode == 2 and "no[/]pe" in r.stderr and "Traceback" not in r.stderr


#: what a terminal acts on or reorders: ESC, BEL, DEL, a C1 CSI, a right-to-left override
_EVIL = "\x1b[2J\x07\x7f\u009b31m\u202eX"
_RAW = __import__("re").compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def test_query_output_escapes_control_characters_in_every_format(tmp_path):
    """``query --format csv`` printed ESC and BEL raw, and ``--format json`` DEL, C1 controls and
    bidirectional overrides (``json.dumps`` escapes only U+0000–U+001F). The table escapes them, CSV
    alike (a newline in a value stays, quoted), and JSON as ``\\uNNNN`` so a parser reads the value."""
    web = ("<dependencies><dependency><groupId>org.springframework.boot</groupId>"
           "<artifactId>spring-boot-starter-web</artifactId></dependency></dependencies>")
    files = shop({"svc/pom.xml": pom("svc", body=web + BOOT_PLUGIN),
                  "svc/src/main/java/shop/Web.java": "package shop;\n@org.springframework.web.bind.annotation."
                  f'RestController\npublic class Web {{\n  @org.springframework.web.bind.annotation.GetMapping("/a{_EVIL}")'
                  ' public String a() { return "y"; }\n}\n'})
    repo, _ = make_repo(tmp_path, files)
    scan_json(repo, tmp_path / "o")
    db = str(tmp_path / "g.duckdb")
    assert run_cli("graph", "build", "--db", db, str(tmp_path / "o")).returncode == 0
    sql = "SELECT name, 'x' || chr(10) || 'y' AS two_lines FROM entities WHERE kind = 'ENTRY' AND name LIKE 'http%'"
    name = f"http://svc/a{_EVIL}#GET"
    printed = "http://svc/a\\x1b[2J\\x07\\x7f\\x9b31m\\u202eX#GET"
    got = {fmt: run_cli("query", "--db", db, sql, "--format", fmt) for fmt in ("csv", "json", "table")}
    for fmt, r in got.items():
        assert r.returncode == 0 and not _RAW.search(r.stdout), (fmt, r.stdout)
    assert got["csv"].stdout == f'name,two_lines\n{printed},"x\ny"\n'  # (read as text: CRLF ends are LF)
    assert json.loads(got["json"].stdout) == [{"name": name, "two_lines": "x\ny"}]
    assert printed in got["table"].stdout


def test_every_json_renderer_escapes_what_json_dumps_leaves(tmp_path):
    """coverage, diff, impact and the pyramid's pages write JSON through one function: the value is
    the same to a parser, and nothing a terminal acts on is left raw."""
    from diting.coverage.render import to_json as coverage_json
    from diting.diff.report import to_json as diff_json
    from diting.safe_text import json_text
    from diting.graph.impact import to_json as impact_json
    from diting.pyramid.pages import _dump
    doc = {"service_id": _EVIL, "lines": "a\nb", "n": [1, None]}
    for render in (coverage_json, diff_json, impact_json, _dump, lambda d: json_text(d, indent=1)):
        text = render(doc)
        assert not _RAW.search(text) and json.loads(text) == doc, render
    assert json_text(_EVIL) == '"\\u001b[2J\\u0007\\u007f\\u009b31m\\u202eX"'


def test_service_ids_never_share_or_escape_a_directory(tmp_path):
    root = pom("shop-parent", parent=None, packaging="pom",
               body="<modules><module>a</module><module>b</module><module>c</module><module>d</module></modules>")
    files = {"pom.xml": root}
    names = {"a": "订单服务", "b": "支付服务", "c": "order/../api", "d": "x" * 300}
    for m, name in names.items():
        files[f"{m}/pom.xml"] = pom(m, body=BOOT_PLUGIN)
        files[f"{m}/src/main/java/shop/App.java"] = APP
        files[f"{m}/src/main/resources/application.properties"] = f"spring.application.name={name}\n"
    repo, _ = make_repo(tmp_path, files)
    out = tmp_path / "out"
    doc = scan_json(repo, out)
    dirs = {Path(p["path"]).name for p in doc["packages"]}
    assert len(dirs) == len(doc["packages"]) == 5
    assert all(Path(p["path"]).parent == out for p in doc["packages"])
    assert "订单服务@" + doc["commit_sha"][:12] in dirs
    assert all(len(d.encode()) <= 180 for d in dirs)
    for p in doc["packages"]:
        assert verify_package(Path(p["path"]), deep=True, repo=repo) == []


def test_surrogates_and_escape_codecs_never_break_a_scan(tmp_path):
    files = shop({
        "svc/src/main/resources/application.properties": "spring.application.name=svc\\uD800x\n",
        "svc/src/main/java/shop/Emoji.java": 'package shop;\nclass Emoji { static final String E = "\\uD83D" + '
                                               '"\\uDE00"; static final String L = "\\uD800"; }\n',
        "svc/src/main/java/shop/U16.java": b"\xff\xfe" + "package shop;\nclass U16 {}\n".encode("utf-16-le"),
    })
    files["lib/pom.xml"] = ('<?xml version="1.0" encoding="unicode_escape"?>\n<project><modelVersion>4.0.0'
                            '</modelVersion><groupId>g</groupId><artifactId>lib\\ud800</artifactId><version>1'
                            '</version></project>\xff').encode("latin-1")
    root = pom("shop-parent", parent=None, packaging="pom",
               body="<modules><module>svc</module><module>lib</module></modules>")
    files["pom.xml"] = root
    repo, _ = make_repo(tmp_path, files)
    doc = scan_json(repo, tmp_path / "out")
    svc = next(p for p in doc["packages"] if p["kind"] == "SERVICE")
    assert svc["service_id"] == "svc\ufffdx"
    names = entity_names(svc)
    assert {"shop.Emoji", "shop.U16"} <= names
    for p in doc["packages"]:
        assert verify_package(Path(p["path"]), deep=True, repo=repo) == []


def test_non_utf8_file_names_stay_distinct(tmp_path):
    src = tmp_path / "src"
    (src / "svc/src/main/java/shop").mkdir(parents=True)
    for rel, content in shop({}).items():
        p = src / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(content) if isinstance(content, str) else p.write_bytes(content)
    base = bytes(src / "svc/src/main/java/shop")
    for i, b in enumerate((b"\xff", b"\xfe")):
        open(base + b"/Bad" + b + b".java", "wb").write(f"package shop; class Bad{i} {{}}".encode())
    from diting.demo import commit_tree
    repo = tmp_path / "repo"
    commit_tree(src, repo)
    pkg = svc_pkg(scan_json(repo, tmp_path / "out"))
    assert {"shop.Bad0", "shop.Bad1"} <= entity_names(pkg)
    assert verify_package(Path(pkg["path"]), deep=True, repo=repo) == []


def test_a_raw_byte_and_its_spelled_escape_are_two_files(tmp_path):
    # Bad<0xFF>.java and a name spelled B-a-d-\-x-f-f: both must reach the package, each its own path
    raw = os.fsdecode(b"svc/src/main/java/shop/Bad\xff.java")  # written back as the byte 0xFF
    spelled = "svc/src/main/java/shop/Bad\\xff.java"
    repo, _ = make_repo(tmp_path, shop({raw: "package shop;\npublic class BadRaw { void r() {} }\n",
                                        spelled: "package shop;\npublic class BadSpelled { void s() {} }\n"}))
    pkg = svc_pkg(scan_json(repo, tmp_path / "out"))
    assert {"shop.BadRaw", "shop.BadSpelled"} <= entity_names(pkg)
    assert not [d for d in diags(pkg) if d["code"] == "DUPLICATE_DECLARATION"]
    seg_paths = {json.loads(x)["locator"]["path"]
                 for x in (Path(pkg["path"]) / "source_segments.jsonl").read_text().splitlines()}
    assert {"svc/src/main/java/shop/Bad\\xff.java", "svc/src/main/java/shop/Bad\\\\xff.java"} <= seg_paths
    files = json.loads((Path(pkg["path"]) / "coverage.json").read_text())["dimensions"]["files"]
    assert (files["discovered"], files["resolved"]) == (4, 4)
    assert verify_package(Path(pkg["path"]), deep=True, repo=repo) == []
