"""Hostile input to the probes, rule files, config snapshots and the Spring context: every case ends
in a clear refusal or a valid scan — never code execution, a write outside a sample, a hang or a
traceback (regressions of a review that tried to break them)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from diting.config.sources import canonical_key
from tests.stagekit import scan_memory
from tests.conftest import BOOT_PLUGIN, make_repo, pom, run_cli, scan_repo

HDR = ("family: x\nversion: 1\nowner: o\ndescription: d\nrules:\n  - id: x.one\n    version: 1\n    owner: o\n"
       "    family: x\n    description: d\n    source: s\n")


def _rules(tmp: Path, body: str) -> Path:
    d = tmp / "rules"
    d.mkdir()
    (d / "r.yaml").write_text(HDR + body, encoding="utf-8")
    return d


def test_sample_inputs_cannot_escape_or_bring_a_git_config(tmp_path):
    marker = tmp_path / "PWNED"
    d = _rules(tmp_path, f"""    match: {{annotation: {{fqn: com.acme.Foo}}}}
    emits: {{kind: NOISE}}
    samples:
      - form: declared
        input:
          ".git/config": "[core]\\n\\tfsmonitor = \\"touch {marker}\\"\\n"
      - form: lookalike
        input:
          "../../../../../../../../{marker.relative_to('/')}": "x"
          "{marker}": "x"
""")
    p = run_cli("rules", "--rules", str(d))
    assert p.returncode == 1, p.stderr
    assert "a .git entry" in p.stdout and "not a relative path" in p.stdout and "'..'" in p.stdout
    assert not marker.exists()


def test_rule_files_that_expand_without_bound_or_block_are_refused(tmp_path):
    levels = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"] + [
        f"a{i}: &a{i} [*a{i-1}, *a{i-1}, *a{i-1}, *a{i-1}, *a{i-1}, *a{i-1}, *a{i-1}, *a{i-1}, *a{i-1}]"
        for i in range(1, 9)]
    d = _rules(tmp_path, "    match: {annotation: {fqn: com.acme.Foo}}\n    emits: {kind: NOISE, attributes: {bomb: *a8}}\n")
    (d / "r.yaml").write_text("\n".join(levels) + "\n" + (d / "r.yaml").read_text(), encoding="utf-8")
    p = run_cli("rules", "--rules", str(d))
    assert p.returncode == 2 and "expands to more than" in p.stderr and "Traceback" not in p.stderr
    fifo_dir = tmp_path / "fifo"
    fifo_dir.mkdir()
    os.mkfifo(fifo_dir / "r.yaml")
    p = run_cli("rules", "--rules", str(fifo_dir))
    assert p.returncode == 2 and "not a regular file" in p.stderr


def test_a_rule_pairing_a_kind_with_a_form_it_cannot_read_is_refused(tmp_path):
    d = _rules(tmp_path, "    match: {annotation: {fqn: org.springframework.stereotype.Service}}\n"
                         "    emits: {kind: CACHE_OP, protocol: redis}\n")
    p = run_cli("rules", "--rules", str(d))
    assert p.returncode == 2 and "CACHE_OP works on matches of form call, not annotation" in p.stderr


def test_long_bracket_keys_are_linear():
    assert canonical_key("[" * 300_000 + "x") == "[" * 300_000 + "x"
    assert canonical_key("list[0][1].myKey") == "list[0][1].my-key"


def _app(extra: dict[str, str]) -> dict[str, str]:
    files = {"pom.xml": pom("app", parent=None, body=BOOT_PLUGIN),
             "src/main/java/com/example/App.java": "package com.example;\n"
             "@org.springframework.boot.autoconfigure.SpringBootApplication\n"
             "public class App { public static void main(String[] a) { } }\n"}
    files.update(extra)
    return files


def _bindings(out: Path) -> dict[str, tuple[str, str | None]]:
    (pkg,) = [p for p in out.iterdir() if (p / "manifest.json").is_file()]
    return {b["config_key"]: (b["value_resolution"], b["value"]) for b in
            map(json.loads, (pkg / "config_bindings.jsonl").read_text(encoding="utf-8").splitlines())}


def test_long_import_chains_resolve_and_nested_defaults_list_profiles(tmp_path):
    res = "src/main/resources"
    files = {f"{res}/spring/b{i}.xml": '<beans xmlns="http://www.springframework.org/schema/beans">'
             f'<import resource="classpath:spring/b{i - 1}.xml"/></beans>' for i in range(1, 400)}
    files[f"{res}/spring/b0.xml"] = ('<beans xmlns="http://www.springframework.org/schema/beans">'
                                     '<bean id="tailBean" class="com.example.Tail"/></beans>')
    files["src/main/java/com/example/Tail.java"] = (
        "package com.example;\n@org.springframework.context.annotation.ImportResource(\"classpath:spring/b399.xml\")\n"
        "@org.springframework.context.annotation.Configuration\npublic class Tail {\n"
        "  @org.springframework.beans.factory.annotation.Value(\"${order.timeout:${default.timeout:30}}\") int t;\n"
        "  @org.springframework.beans.factory.annotation.Value(\"${only.prod:none}\") String p;\n}\n")
    files[f"{res}/application.yml"] = ("order:\n  timeout: 5\n---\nspring:\n  config:\n    activate:\n"
                                       "      on-profile: [prod]\nonly:\n  prod: yes\n")
    out = tmp_path / "out"
    scan_memory(_app(files), out)
    (pkg,) = [p for p in out.iterdir() if (p / "manifest.json").is_file()]
    beans = [json.loads(x) for x in (pkg / "entities.jsonl").read_text().splitlines()]
    assert any(b["record_id"].endswith("/tailBean") and b["attributes"]["loaded"] for b in beans if b["kind"] == "BEAN")
    got = _bindings(out)
    assert got["config://order.timeout"] == ("RESOLVED", "5")          # not the nested default's key
    assert got["config://only.prod"] == ("DEFAULT_ONLY", None)         # the prod document is not active


def test_snapshot_placeholders_unreadable_nacos_files_and_bad_snapshot_json(tmp_path):
    res = "src/main/resources"
    files = _app({
        f"{res}/bootstrap.yml": "spring:\n  application:\n    name: app\n  profiles:\n    active: dev\n"
                                "  cloud:\n    nacos:\n      config:\n        server-addr: n:8848\n"
                                "        file-extension: yaml\n",
        f"{res}/application.yml": "e: hello\n",
        "config/app-dev.yaml": "a: [unclosed\n",
        "src/main/java/com/example/Reader.java": "package com.example;\n@org.springframework.stereotype.Component\n"
        "public class Reader { @org.springframework.beans.factory.annotation.Value(\"${d}\") String d; }\n"})
    repo, sha = make_repo(tmp_path, files)
    snap = tmp_path / "snap.json"
    snap.write_text(json.dumps({"snapshot_id": "s1", "environment": "dev", "captured_at": "now",
                                "entries": [{"scheme": "config", "key": "d", "value": "${e}-x"}]}))
    out = tmp_path / "out"
    scan_repo(repo, out, sha, config_snapshot=snap)
    assert _bindings(out)["config://d"] == ("RESOLVED", "hello-x")
    (pkg,) = [p for p in out.iterdir() if (p / "manifest.json").is_file()]
    diags = [json.loads(x) for x in (pkg / "diagnostics.jsonl").read_text().splitlines()]
    assert any(d["code"] == "PARSE_ERROR" and "config/app-dev.yaml" in d["message"] for d in diags)
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000)
    p = run_cli("scan", str(repo), "--commit", sha, "--out", str(tmp_path / "o2"), "--config-snapshot", str(deep))
    assert p.returncode == 2 and "nests too deeply" in p.stderr and "Traceback" not in p.stderr
