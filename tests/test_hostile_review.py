"""Hostile input from the review of issue 20 (second round): option bounds, reserved service ids,
corrupt trees, late signals, guessed encodings, circular placeholders, include cycles and the query
sandbox's limits — each a class, each with its correct expected value."""

from __future__ import annotations

import typing


import pytest

from diting.errors import UserError
from tests.conftest import run_cli

#: the smallest arguments each command needs besides the option under test (never reached: the
#: option is refused as it is parsed)
_COMMAND_ARGS = {"scan": ["no-repo", "--commit", "HEAD"], "verify": ["no-package"],
                 "impact": ["no-target", "--db", "no.duckdb", "--change-type", "LOGIC"],
                 "query": ["SELECT 1", "--db", "no.duckdb"], "estate scan": ["no-estate.yaml", "--out", "o"]}


def _numeric_options() -> list[tuple[str, str, object]]:
    """``(command, option, typer.Option)`` for every int or float option of every command."""
    from diting.cli.main import app, estate_app, graph_app
    found = []
    for prefix, group in (("", app), ("", graph_app), ("estate ", estate_app)):
        for cmd in group.registered_commands:
            for hint in typing.get_type_hints(cmd.callback, include_extras=True).values():
                if typing.get_origin(hint) is typing.Annotated and typing.get_args(hint)[0] in (int, float):
                    opt = typing.get_args(hint)[1]
                    found.append((prefix + (cmd.name or cmd.callback.__name__), opt.default, opt))
    return found


def test_every_numeric_option_has_bounds():
    options = _numeric_options()
    assert {(c, o) for c, o, _ in options} >= {("scan", "--jobs"), ("scan", "--max-file-bytes"), ("verify", "--jobs"),
                                              ("impact", "--depth"), ("impact", "--budget"),
                                              ("estate scan", "--jobs")}
    assert [(c, o) for c, o, opt in options if opt.min is None or opt.max is None] == []
    assert {c for c, _, _ in options} <= set(_COMMAND_ARGS)


@pytest.mark.parametrize("command,option", [(c, o) for c, o, _ in _numeric_options()])
def test_a_number_beyond_64_bits_is_a_user_error(tmp_path, command, option):
    r = run_cli(*command.split(), *_COMMAND_ARGS[command], option, str(2 ** 64), cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    assert "internal error" not in r.stderr and "Traceback" not in r.stderr
    assert f"'{option}'" in r.stderr and "less than or equal to" in r.stderr


def test_scan_options_refuse_what_the_cli_would_not_parse(tmp_path):
    from diting.scan.pipeline import ScanOptions
    with pytest.raises(UserError, match="--max-file-bytes must be an integer from 1 to 1073741824"):
        ScanOptions(out=tmp_path, max_file_bytes=2 ** 64)
    with pytest.raises(UserError, match="--jobs must be an integer from 0 to 64"):
        ScanOptions(out=tmp_path, jobs=-1)
    assert ScanOptions(out=tmp_path, jobs=64, max_file_bytes=1).jobs == 64


def _value_params() -> list[tuple[list[str], str, bool]]:
    """``(command path and the arguments before it, option or argument, is an argument)`` for every
    parameter of every command that takes a value."""
    import typer.main
    from diting.cli.main import app
    found = []

    def walk(group, path):
        for name, cmd in group.commands.items():
            if hasattr(cmd, "commands"):
                walk(cmd, [*path, name])
                continue
            before: list[str] = []  # an argument is reached past the ones before it
            for param in cmd.params:
                if not getattr(param, "is_flag", False):
                    arg = param.param_type_name == "argument"
                    found.append(([*path, name, *before], param.name.upper() if arg else max(param.opts, key=len),
                                  arg))
                    before += ["x"] if arg else []
    walk(typer.main.get_command(app), [])
    return found


@pytest.mark.parametrize("path,param,arg", _value_params(), ids=lambda v: v if isinstance(v, str) else None)
def test_an_empty_or_blank_value_is_refused_for_every_option(path, param, arg, tmp_path, monkeypatch):
    """``scan --profile ''``, ``--repo-id ''`` or ``' '``, ``--out ''`` (the current folder, converted)
    were taken as no value or as '.'; every option and argument refuses an empty or blank value as it
    is parsed (exit 2, one message naming it) — but ``--label ''``, which is no label. (Run in an empty
    folder: where the refusal is missing, ``schema --out ''`` writes into the current one.)"""
    from typer.testing import CliRunner
    from diting.cli.main import app
    monkeypatch.chdir(tmp_path)
    for value in ("", "  "):
        r = CliRunner().invoke(app, [*path, value] if arg else [*path, param, value])
        if param == "--label" and value == "":
            assert "Invalid value for '--label'" not in r.output
            continue
        what = "an empty" if value == "" else "a blank"
        hint = "give one" if arg else "give one, or leave the option out"
        assert r.exit_code == 2 and f"Invalid value for '{param}': {what} value names nothing: {hint}" in r.output, \
            (path, param, r.output)


def test_a_profile_set_or_a_repo_id_that_names_nothing_is_a_user_error(tmp_path):
    """``--profile ,,`` was an empty set (taken as the default), ``--profile a,,b`` dropped the empty
    name; a repo id with white space around it or a control character was written into packages. The
    same holds for every caller of ScanOptions, and for an inventory entry's profile."""
    from diting.inventory.inventory_file import InventoryFile
    from diting.scan.pipeline import ScanOptions
    assert ScanOptions(out=tmp_path, profiles=[" dev", "local "]).profiles == ["dev", "local"]
    for bad in ([], [""], ["a", " "]):
        with pytest.raises(UserError, match="names (no|an empty) profile"):
            ScanOptions(out=tmp_path, profiles=bad)
    for bad, why in (("", "names no repository"), (" x/y", "white space around it"), ("x/\x1by", "control char")):
        with pytest.raises(UserError, match=why):
            ScanOptions(out=tmp_path, repo_id=bad)
    r = run_cli("scan", "no-repo", "--commit", "HEAD", "--profile", "dev,,local")
    assert (r.returncode, r.stderr.strip().splitlines()) == (2, [
        "error: --profile 'dev,,local' names an empty profile: give profile names separated by commas, or leave it "
        "out for the default profile set"])
    inv = tmp_path / "inventory.yaml"
    inv.write_text("services:\n  - {service_id: a, module_path: ., profile: 'prod,'}\n")
    with pytest.raises(UserError, match=r"the profile of a, 'prod,' names an empty profile"):
        InventoryFile.load(inv)


# ------------------------------------------------------------------ 3: the lib: prefix is reserved

def _estate_with_a_lib_named_service(tmp_path):
    """A reactor of two boot services, one naming itself ``lib:fake`` by spring.application.name and
    one named ``LIB:inv`` by the inventory, and a root pom no service contains (a real lib package)."""
    from tests.conftest import boot_module, make_repo, pom
    files = {"pom.xml": pom("shop-parent", parent=None, packaging="pom",
                            body="<modules><module>fake</module><module>inv</module></modules>")}
    files.update(boot_module("fake", "", {"src/main/resources/application.properties": "spring.application.name=lib:fake\n"}))
    files.update(boot_module("inv", "", {}))
    repo, sha = make_repo(tmp_path, files)
    inventory = tmp_path / "inventory.yaml"
    inventory.write_text("services:\n  - {service_id: 'LIB:inv', module_path: inv}\n", encoding="utf-8")
    return repo, sha, inventory


def test_a_service_never_takes_the_lib_prefix(tmp_path):
    import json
    from diting.coverage.report import coverage_of_graph, coverage_of_packages
    from diting.graph.store import build
    from diting.pyramid.build import build_pyramid
    from tests.conftest import scan_repo
    repo, _, inventory = _estate_with_a_lib_named_service(tmp_path)
    result = scan_repo(repo, tmp_path / "ir", inventory=inventory)
    assert sorted((p.kind, p.service_id) for p in result.packages) == [
        ("LIB", "lib:shop-parent"), ("SERVICE", "LIB_inv"), ("SERVICE", "lib_fake")]
    fake = next(p for p in result.packages if p.service_id == "lib_fake")
    diags = [json.loads(x) for x in (fake.path / "diagnostics.jsonl").read_text().splitlines()]
    reserved = [d for d in diags if d["code"] == "SERVICE_ID_RESERVED"]
    assert len(reserved) == 1 and reserved[0]["severity"] == "WARNING"
    assert "'lib:fake' (from spring.application.name in fake/src/main/resources/application.properties)" in \
        reserved[0]["message"] and "this service is named 'lib_fake'" in reserved[0]["message"]
    ent = next(json.loads(x) for x in (fake.path / "entities.jsonl").read_text().splitlines()
               if json.loads(x)["kind"] == "SERVICE")
    assert ent["attributes"]["service_id_basis"]["raw_value"] == "lib:fake"
    inv = next(p for p in result.packages if p.service_id == "LIB_inv")
    assert "from the inventory file" in (inv.path / "diagnostics.jsonl").read_text()
    # the estate counts both services, and the lib package as not deployed
    db = tmp_path / "g.duckdb"
    build(db, [tmp_path / "ir"])
    assert sorted(p["service_id"] for p in build_pyramid(db, None).profiles) == ["LIB_inv", "lib_fake"]
    lib = ("excluded", "module_not_deployed")
    assert _apps(coverage_of_graph(db)) == {"LIB_inv": ("resolved", None), "lib:shop-parent": lib,
                                            "lib_fake": ("resolved", None)}
    # the inventory's LIB:inv names the service the scan renamed; lib_fake is no inventory service
    for doc in (coverage_of_graph(db, inventory), coverage_of_packages([tmp_path / "ir"], inventory)):
        assert _apps(doc) == {"LIB_inv": ("resolved", None), "lib:shop-parent": lib,
                              "lib_fake": ("excluded", "not_in_inventory")}


def _apps(doc: dict) -> dict[str, tuple[str, str | None]]:
    return {a["service_id"]: (a["term"], a["reason"]) for a in doc["applications"]}


def test_the_graph_reads_a_packages_kind_never_its_id():
    """A package is what its analysis input records (an older build wrote ``SERVICE lib:x``)."""
    from tests.test_align import Estate
    e = Estate()
    old = e.package("lib:old", kind="SERVICE")
    e.rpc(old, "PROVIDED", "dubbo://com.x.Refund#apply", ["long"])
    lib = e.package("common", kind="LIB")
    e.rpc(lib, "CONSUMED", "dubbo://com.x.Refund#apply", ["long"])  # a lib package deploys nothing
    rows, findings = e.align()
    assert rows == [] and [(f["code"], f["service_id"]) for f in findings] == [("ORPHAN_ENTRY", "lib:old")]


# ------------------------------------------------------------------ 4: a corrupt tree entry

def _git(repo, *args: str, data: bytes | None = None) -> bytes:
    import subprocess
    return subprocess.run(["git", "-C", str(repo), *args], input=data, capture_output=True, check=True).stdout


def _tree_with(repo, tree: str, path: list[str], mode: bytes, oid: str) -> str:
    """``tree`` with the entry ``path`` (its last name added or replaced) of ``mode`` pointing at
    ``oid``, written with ``hash-object --literally`` (no check of the entry's type against its mode)."""
    entries = {}
    for raw in _git(repo, "ls-tree", "-z", tree).split(b"\x00"):
        if raw:
            meta, name = raw.split(b"\t", 1)
            m, _, sha = meta.split(b" ")
            entries[name] = (m.lstrip(b"0"), sha.decode())
    name = path[0].encode()
    if len(path) == 1:
        entries[name] = (mode, oid)
    else:
        entries[name] = (b"40000", _tree_with(repo, entries[name][1], path[1:], mode, oid))
    body = b"".join(m + b" " + n + b"\x00" + bytes.fromhex(sha) for n, (m, sha) in
                    sorted(entries.items(), key=lambda kv: kv[0] + (b"/" if kv[1][0] == b"40000" else b"")))
    return _git(repo, "hash-object", "-w", "-t", "tree", "--literally", "--stdin", data=body).decode().strip()


def _commit_tree(repo, tree: str) -> str:
    sha = _git(repo, "commit-tree", tree, "-m", "crafted").decode().strip()
    _git(repo, "update-ref", "HEAD", sha)
    return sha


def _shop_with_two_packages(tmp_path):
    from tests.conftest import BOOT_PLUGIN, make_repo, pom
    return make_repo(tmp_path, {
        "pom.xml": pom("svc", parent=None, body=BOOT_PLUGIN),
        "src/main/java/shop/App.java": "package shop;\n@org.springframework.boot.autoconfigure.SpringBootApplication\n"
                                       "public class App { public static void main(String[] a) { } }\n",
        "src/main/java/shop/good/Good.java": "package shop.good;\npublic class Good { void ok() { } }\n",
        "src/main/java/shop/bad/Lost.java": "package shop.bad;\npublic class Lost { }\n",
        "src/main/java/shop/bad/deeper/Gone.java": "package shop.bad.deeper;\npublic class Gone { }\n"})


def _scanned_files(tmp_path, repo, sha):
    import json
    from tests.conftest import scan_repo
    (pkg,) = [p for p in scan_repo(repo, tmp_path / "out", sha).packages]
    diags = [json.loads(x) for x in (pkg.path / "diagnostics.jsonl").read_text().splitlines()]
    names = {json.loads(x)["name"] for x in (pkg.path / "entities.jsonl").read_text().splitlines()}
    files = json.loads((pkg.path / "coverage.json").read_text())["dimensions"]["files"]
    return pkg, diags, names, files


def test_a_tree_entry_pointing_at_a_blob_is_one_unread_subtree(tmp_path):
    repo, _ = _shop_with_two_packages(tmp_path)
    blob = _git(repo, "hash-object", "-w", "--stdin", data=b"not a tree\n").decode().strip()
    root = _git(repo, "rev-parse", "HEAD^{tree}").decode().strip()
    sha = _commit_tree(repo, _tree_with(repo, root, ["src", "main", "java", "shop", "bad"], b"40000", blob))
    pkg, diags, names, files = _scanned_files(tmp_path, repo, sha)
    bad = [d for d in diags if "src/main/java/shop/bad" in d["message"]]
    assert [(d["code"], d["severity"]) for d in bad] == [("FILE_UNREADABLE", "ERROR")]
    assert bad[0]["message"] == (f"src/main/java/shop/bad: the tree entry names object {blob[:12]}, a blob, not a "
                                 "tree; the files below it are not read")
    assert {"shop.App", "shop.good.Good", "shop.good.Good#ok()"} <= names and "shop.bad.Lost" not in names
    # pom.xml, App.java and Good.java read; the subtree one failed item
    assert (files["discovered"], files["resolved"], files["failed"]) == (4, 3, 1)
    assert pkg.status == "PARTIAL"


def test_a_missing_tree_object_is_one_unread_subtree(tmp_path):
    import os
    repo, sha = _shop_with_two_packages(tmp_path)
    lost = _git(repo, "rev-parse", f"{sha}:src/main/java/shop/bad").decode().strip()
    os.remove(repo / ".git" / "objects" / lost[:2] / lost[2:])  # as a partial clone with a tree filter leaves it
    pkg, diags, names, files = _scanned_files(tmp_path, repo, sha)
    bad = [d for d in diags if "src/main/java/shop/bad" in d["message"]]
    assert [d["code"] for d in bad] == ["FILE_UNREADABLE"]
    assert bad[0]["message"] == (f"src/main/java/shop/bad: tree {lost[:12]} is missing from the object database (a "
                                 "partial clone with a tree filter?); the files below it are not read")
    assert {"shop.App", "shop.good.Good"} <= names and "shop.bad.Lost" not in names
    assert (files["discovered"], files["resolved"], files["failed"]) == (4, 3, 1)


def test_a_file_entry_naming_a_tree_is_not_read(tmp_path):
    repo, sha = _shop_with_two_packages(tmp_path)
    sub = _git(repo, "rev-parse", f"{sha}:src/main/java/shop/good").decode().strip()
    root = _git(repo, "rev-parse", "HEAD^{tree}").decode().strip()
    sha = _commit_tree(repo, _tree_with(repo, root, ["src", "main", "java", "shop", "Fake.java"], b"100644", sub))
    _, diags, names, files = _scanned_files(tmp_path, repo, sha)
    assert [d["message"] for d in diags if "Fake.java" in d["message"]] == [
        f"src/main/java/shop/Fake.java: the tree entry names object {sub[:12]}, which is not a blob; not read"]
    assert {"shop.App", "shop.good.Good", "shop.bad.Lost"} <= names
    assert (files["discovered"], files["failed"]) == (6, 1)


# ------------------------------------------------------------------ 5: a signal at the end of a command

#: runs ``diting ARGS`` with a signal sent from inside the process at a chosen moment: ``late`` while
#: the interpreter shuts down after the command's work (an object's finaliser, run after Python's
#: signal handlers are reset), ``during`` as the scan chooses its services (before any package)
_SIGNAL_AT = """
import os, signal, sys
moment, sig = sys.argv[1], getattr(signal, sys.argv[2])
del sys.argv[1:3]
sys.argv[0] = "diting"

class Late:
    def __del__(self):
        os.kill(os.getpid(), sig)

if moment == "late":
    late = Late()  # a module global: finalised as the interpreter shuts down
else:
    from diting.scan.plans import ServicePlanner
    plans = ServicePlanner.plans

    def interrupted_plans(self):
        os.kill(os.getpid(), sig)
        return plans(self)
    ServicePlanner.plans = interrupted_plans
from diting.cli.main import run
run()
"""


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGINT"])
def test_a_signal_after_the_work_is_done_changes_nothing(tmp_path, sig):
    import os
    import subprocess
    import sys
    from tests.conftest import ROOT
    repo, sha = _shop_with_two_packages(tmp_path)
    script = tmp_path / "signal_at.py"
    script.write_text(_SIGNAL_AT, encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    for moment, code, said in (("late", 0, ""), ("during", 130, "interrupted")):
        out = tmp_path / moment
        r = subprocess.run([sys.executable, str(script), moment, sig, "scan", str(repo), "--commit", sha, "--out",
                            str(out), "--quiet", "--repo-id", "t/r"], env=env, capture_output=True, text=True)
        assert (r.returncode, r.stderr.strip()) == (code, said), (moment, r.stderr)
        written = sorted(p.name for p in out.iterdir()) if out.exists() else []
        assert written == ([f"svc@{sha[:12]}"] if moment == "late" else []), written


# ------------------------------------------------------------------ 7: a guessed encoding is never silent

_GBK_LONG = ("package shop;\n/**\n * 订单服务：创建订单、取消订单、查询订单状态。\n * 注意：库存不足时抛出异常。\n */\n"
             "public class Long {\n  // 用户余额不足，请充值\n  String s = \"支付失败，请稍后重试\";\n}\n")


def _encoding_scan(tmp_path, files: dict[str, bytes], body: str = ""):
    import json
    from tests.conftest import BOOT_PLUGIN, make_repo, pom, scan_repo
    app = ("package shop;\n@org.springframework.boot.autoconfigure.SpringBootApplication\n"
           "public class App { public static void main(String[] a) { } }\n")
    repo, _ = make_repo(tmp_path, {"pom.xml": pom("svc", parent=None, body=body + BOOT_PLUGIN),
                                   "src/main/java/shop/App.java": app,
                                   **{f"src/main/java/shop/{k}": v for k, v in files.items()}})
    (pkg,) = scan_repo(repo, tmp_path / "out").packages
    diags = [json.loads(x) for x in (pkg.path / "diagnostics.jsonl").read_text().splitlines()]
    segs = [json.loads(x) for x in (pkg.path / "source_segments.jsonl").read_text().splitlines()]
    from diting.ir.verify import verify_package
    assert verify_package(pkg.path, deep=True, repo=repo) == []  # every segment re-decodes as recorded
    return [d for d in diags if d["code"].startswith("ENCODING")], segs


def test_a_shift_jis_file_is_read_as_japanese_and_the_guess_is_said(tmp_path):
    diags, segs = _encoding_scan(tmp_path, {
        "Jp.java": "package shop;\npublic class Jp { String s = \"テスト\"; }\n".encode("shift_jis")})
    jp = [s for s in segs if s["locator"]["path"].endswith("Jp.java")]
    assert jp and {s["encoding"] for s in jp} == {"shift_jis"}
    assert any("テスト" in s["content"] for s in jp) and not any("僥僗僩" in s["content"] for s in jp)
    assert [(d["code"], d["severity"], d["message"]) for d in diags] == [(
        "ENCODING_GUESSED", "INFO", "1 file(s) of this module read as shift_jis, a guess: they are not UTF-8 and the "
        "module declares no project.build.sourceEncoding, and Shift-JIS reads a fifth or more of their non-ASCII "
        "text as Japanese kana (src/main/java/shop/Jp.java)")]


def test_plain_gbk_files_stay_gb18030_in_one_info_per_module(tmp_path):
    from diting.source.text import decode_bytes
    files = {"Gbk.java": "package shop;\n// 订单状态\npublic class Gbk { String s = \"支付\"; }\n".encode("gbk"),
             "Short.java": "package shop;\npublic class Short { String s = \"获取配置项\"; }\n".encode("gbk"),
             "Long.java": _GBK_LONG.encode("gbk")}
    for data in files.values():  # each exactly as written
        assert (decode_bytes(data).encoding, decode_bytes(data).text) == ("gb18030", data.decode("gbk"))
    diags, _ = _encoding_scan(tmp_path, files)
    assert [(d["code"], d["message"]) for d in diags] == [(
        "ENCODING_GUESSED", "3 file(s) of this module read as gb18030, a guess: they are not UTF-8 and the module "
        "declares no project.build.sourceEncoding, and GB18030 reads their non-ASCII text as mostly CJK ideographs "
        "(src/main/java/shop/Gbk.java, src/main/java/shop/Long.java, src/main/java/shop/Short.java)")]
    # declared, the encoding is no guess
    declared, _ = _encoding_scan(tmp_path / "declared", files,
                                 "<properties><project.build.sourceEncoding>GBK</project.build.sourceEncoding></properties>")
    assert declared == []


def test_a_utf8_line_inside_a_gbk_file_is_said(tmp_path):
    mixed = ("package shop;\n// 订单状态\npublic class Mixed {\n".encode("gbk")
             + "  String s = \"支付成功\";\n}\n".encode("utf-8"))
    diags, segs = _encoding_scan(tmp_path, {"Mixed.java": mixed})
    (doubt,) = [d for d in diags if d["code"] == "ENCODING_UNCERTAIN"]
    assert doubt["severity"] == "WARNING" and doubt["message"] == (
        "src/main/java/shop/Mixed.java: read as gb18030 (a guess), but line 4 is valid UTF-8 with non-ASCII text "
        "although the file as a whole is not: it mixes encodings, and that line is likely misread as gb18030")
    cited = {s["record_id"]: s for s in segs}[doubt["evidence_refs"][0]["record_id"]]
    assert (cited["locator"]["start_line"], cited["locator"]["end_line"]) == (4, 4)


def test_korean_is_chosen_over_gb18030_only_when_the_detector_rejects_gb18030():
    from diting.source.text import decode_bytes
    korean = 'package a;\n// 로그인 시간이 초과되었습니다. 다시 로그인하십시오\npublic class A { }\n'
    d = decode_bytes(korean.encode("euc_kr"))
    assert (d.encoding, d.basis, d.text) == ("euc_kr", "hangul", korean)
    # a short GBK text EUC-KR also reads as Hangul, which the detector cannot tell apart: GB18030
    gbk = decode_bytes('package a;\nclass A { String s = "获取配置项"; }\n'.encode("gbk"))
    assert (gbk.encoding, gbk.basis) == ("gb18030", "cjk")


# ------------------------------------------------------------------ 8: why a placeholder has no value

def test_a_circular_or_oversized_placeholder_says_so():
    from diting.config.spring import MAX_VALUE_CHARS
    from tests.test_config import _cfg
    x = "x" * 30  # 30^5 characters five levels up: far over the budget
    levels = "".join(f"l{i}=" + f"${{l{i - 1}}}" * 30 + "\n" for i in range(1, 5))
    cfg = _cfg({"m/src/main/resources/application.properties":
                f"c=${{c}}\na=${{b}}\nb=${{a}}\nuses-a=${{a}}\nm=${{nowhere}}\nl0={x}\n{levels}big=${{l4}}\n"
                "d=${d:dflt}\n"})
    got = {k: (cfg.get(k).status, cfg.get(k).basis, cfg.get(k).missing) for k in ("c", "a", "b", "uses-a", "big", "m")}
    assert got == {"c": ("UNKNOWN", "PLACEHOLDER_CYCLE", ("c", "c")),
                   "a": ("UNKNOWN", "PLACEHOLDER_CYCLE", ("a", "b", "a")),
                   "b": ("UNKNOWN", "PLACEHOLDER_CYCLE", ("a", "b", "a")),  # the cycle as first met (memoised)
                   "uses-a": ("UNKNOWN", "PLACEHOLDER_CYCLE", ("a", "b", "a")),
                   "big": ("UNKNOWN", "VALUE_TOO_LONG", ()),
                   "m": ("UNKNOWN", "PLACEHOLDER_UNRESOLVED", ("nowhere",))}
    # a default does not break a cycle: Spring's placeholder parser refuses a placeholder met again
    # before it looks at the default ("Circular placeholder reference 'd:dflt'")
    assert (cfg.get("d").value, cfg.get("d").basis, cfg.get("d").missing) == (None, "PLACEHOLDER_CYCLE", ("d", "d"))
    assert MAX_VALUE_CHARS < 30 ** 5
    cfg = _cfg({"m/src/main/resources/application.properties": "p=${q}\nq=${p:x}\nr=${p:y}\ns=${nowhere:z}\n"})
    assert [(cfg.get(k).basis, cfg.get(k).value) for k in "pqrs"] == [
        ("PLACEHOLDER_CYCLE", None)] * 3 + [("PLACEHOLDER_DEFAULT", "z")]


def test_a_placeholder_inside_a_key_is_filled_first_as_spring_fills_it():
    """``w: ${w.${w}}`` was "leads to ${w.${w}}, which no config file has": Spring fills the key's own
    placeholder first, meets ``w`` again and reports a circular reference. A nested key that does
    resolve names the key Spring reads; a default is split off the filled key."""
    from tests.test_config import _cfg
    cfg = _cfg({"m/src/main/resources/application.properties":
                "w=${w.${w}}\nenv=prod\ndb.prod.url=jdbc:x\nurl=${db.${env}.url}\nlost=${db.${nope}.url}\n"
                "dflt=${db.${env}.port:3306}\nvia=${x.${w}}\n"})
    got = {k: (cfg.get(k).status, cfg.get(k).value, cfg.get(k).basis, cfg.get(k).missing)
           for k in ("w", "url", "lost", "dflt", "via", "db.${env}.url", "z.${w}")}
    assert got == {"w": ("UNKNOWN", None, "PLACEHOLDER_CYCLE", ("w", "w")),
                   "url": ("RESOLVED", "jdbc:x", "CONFIG_FILE", ()),
                   "lost": ("UNKNOWN", None, "PLACEHOLDER_UNRESOLVED", ("nope",)),
                   "dflt": ("RESOLVED", "3306", "PLACEHOLDER_DEFAULT", ()),
                   "via": ("UNKNOWN", None, "PLACEHOLDER_CYCLE", ("w", "w")),
                   "db.${env}.url": ("RESOLVED", "jdbc:x", "CONFIG_FILE", ()),  # a key read from code
                   "z.${w}": ("UNKNOWN", None, "PLACEHOLDER_CYCLE", ("w", "w"))}


def test_the_config_diagnostic_names_the_cycle_or_the_budget(tmp_path):
    import json
    from tests.conftest import BOOT_PLUGIN, make_repo, pom, scan_repo
    use = ("package shop;\n@org.springframework.stereotype.Component\npublic class Use {\n" + "".join(
        f"  @org.springframework.beans.factory.annotation.Value(\"${{{k}}}\") String f{i};\n"
        for i, k in enumerate(("c", "a", "big", "m", "absent", "w", "q.${env}:9", "long"))) + "}\n")
    x = "x" * 30
    props = ("c=${c}\na=${b}\nb=${a}\nm=${nowhere}\nw=${w.${w}}\nenv=prod\nq.prod=7\nl0=" + x + "\n"
             + "".join(f"l{i}=" + f"${{l{i - 1}}}" * 30 + "\n" for i in range(1, 5)) + "big=${l4}\n"
             + "long=" + "y" * 65_537 + "\n")  # no placeholder: the value itself is over the budget
    repo, _ = make_repo(tmp_path, {
        "pom.xml": pom("svc", parent=None, body=BOOT_PLUGIN),
        "src/main/java/shop/App.java": "package shop;\n@org.springframework.boot.autoconfigure.SpringBootApplication\n"
                                       "public class App { public static void main(String[] a) { } }\n",
        "src/main/java/shop/Use.java": use, "src/main/resources/application.properties": props})
    (pkg,) = scan_repo(repo, tmp_path / "out").packages
    said = sorted(json.loads(x)["message"] for x in (pkg.path / "diagnostics.jsonl").read_text().splitlines()
                  if json.loads(x)["code"] == "CONFIG_VALUE_UNKNOWN")
    assert said == [
        "config://a has no value for profiles default (its placeholders are circular: ${a} → ${b} → ${a})",
        "config://absent has no value for profiles default (no config file of the active profiles has the key)",
        "config://big has no value for profiles default (its placeholders expand to more than 65,536 characters, "
        "the budget of one value; not expanded further)",
        "config://c has no value for profiles default (its placeholders are circular: ${c} → ${c})",
        "config://long has no value for profiles default (its value is longer than 65,536 characters, the budget "
        "of one value; not read)",
        "config://m has no value for profiles default (its placeholders lead to ${nowhere}, which no config file "
        "of the active profiles has)",
        "config://w has no value for profiles default (its placeholders are circular: ${w} → ${w})"]
    bound = {json.loads(x)["config_key"]: json.loads(x)["value"]
             for x in (pkg.path / "config_bindings.jsonl").read_text().splitlines()}
    assert bound["config://q.prod"] == "7"  # the key Spring reads, its default split off after filling


# ------------------------------------------------------------------ 9: why an <include> rendered nothing

_MAPPER = ('<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE mapper PUBLIC "-//mybatis.org//DTD Mapper 3.0//EN" '
           '"http://mybatis.org/dtd/mybatis-3-mapper.dtd">\n<mapper namespace="com.example.M">\n'
           '  <sql id="rec2">id, <include refid="rec3"/></sql>\n'
           '  <sql id="rec3">name, <include refid="rec2"/></sql>\n'
           '  <sql id="cols">id, name</sql>\n'
           '  <select id="cyclic"><include refid="rec2"/></select>\n'
           '  <select id="unknown"><include refid="nowhere"/></select>\n'
           '  <select id="partly">select <include refid="cols"/> from t_user <include refid="nowhere"/></select>\n'
           '  <select id="cyclicInside">select <include refid="rec2"/> from t_user</select>\n'
           '</mapper>\n')


def test_an_include_cycle_or_unknown_refid_is_named_never_an_empty_statement(tmp_path):
    import json
    from tests.test_sql import _boot_app, _scanned_statements
    p, _, st, _ = _scanned_statements(tmp_path, _boot_app("svc", **{
        "src/main/resources/mapper/M.xml": _MAPPER}), "svc")
    said = {d["message"].split(" (", 1)[0]: (d["code"], d["message"].split("): ", 1)[1])
            for d in p["diagnostics.jsonl"] if d["code"] in ("SQL_UNSUPPORTED", "SQL_PARSE_FAILED")}
    assert said == {
        "com.example.M.cyclic": ("SQL_UNSUPPORTED", "<include> fragments include each other: rec2 → rec3 → rec2"),
        "com.example.M.unknown": ("SQL_UNSUPPORTED", "<include refid> names no fragment: nowhere"),
        "com.example.M.partly": ("SQL_UNSUPPORTED", "<include refid> names no fragment: nowhere"),
        "com.example.M.cyclicInside": ("SQL_UNSUPPORTED",
                                       "<include> fragments include each other: rec2 → rec3 → rec2")}
    assert not any("empty statement" in json.dumps(d) for d in p["diagnostics.jsonl"])
    assert {k: v["parse_status"] for k, v in st.items()} == {
        "com.example.M.cyclic": "UNSUPPORTED", "com.example.M.unknown": "UNSUPPORTED",
        "com.example.M.partly": "PARTIAL", "com.example.M.cyclicInside": "PARTIAL"}


def test_an_include_chain_too_deep_is_a_budget_not_a_missing_fragment():
    from diting.sql.dynamic import MAX_INCLUDE_DEPTH
    from tests.test_sql import _expand, _mapper
    chain = "".join(f'<sql id="f{i}">c{i}, <include refid="f{i + 1}"/></sql>' for i in range(MAX_INCLUDE_DEPTH + 4))
    e = _expand(_mapper("a.M", chain + f'<sql id="f{MAX_INCLUDE_DEPTH + 4}">x</sql>'
                        '<select id="q">select <include refid="f0"/> from t</select>'), "q")
    assert (e.missing_includes, e.include_cycles, e.includes_too_deep) == ([], [], [f"f{MAX_INCLUDE_DEPTH}"])
    assert e.include_problem() == f"<include> chains deeper than {MAX_INCLUDE_DEPTH} fragments are cut at: f16"


# ------------------------------------------------------------------ 11: the query sandbox's limits

@pytest.fixture(scope="module")
def small_graph(tmp_path_factory):
    """A graph database of one small scanned service."""
    from diting.graph.store import build
    from tests.conftest import scan_repo
    tmp = tmp_path_factory.mktemp("graph")
    repo, sha = _shop_with_two_packages(tmp)
    scan_repo(repo, tmp / "out", sha)
    build(tmp / "g.duckdb", [tmp / "out"])
    return tmp / "g.duckdb"


def test_a_query_over_its_time_is_stopped_with_one_message(small_graph):
    import time
    started = time.monotonic()
    r = run_cli("query", "--db", str(small_graph), "--timeout", "1",
                "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM r) SELECT max(n) FROM r")
    assert time.monotonic() - started < 30
    assert (r.returncode, r.stdout, r.stderr) == (
        2, "", "error: the query ran longer than 1 s and was stopped (--timeout 1); nothing was printed\n")


def test_a_query_prints_at_most_max_rows_and_says_it_cut(small_graph):
    import time
    started = time.monotonic()
    r = run_cli("query", "--db", str(small_graph), "--max-rows", "3", "--format", "csv",
                "SELECT * FROM range(10000000000)")
    assert time.monotonic() - started < 30  # DuckDB stops at the fourth row
    assert (r.returncode, r.stdout.splitlines()) == (0, ["range", "0", "1", "2"])
    assert r.stderr == "note: the query returned more than 3 rows; the first 3 are printed (--max-rows)\n"
    whole = run_cli("query", "--db", str(small_graph), "--max-rows", "3", "--format", "csv", "SELECT * FROM range(3)")
    assert (whole.returncode, whole.stdout.splitlines(), whole.stderr) == (0, ["range", "0", "1", "2"], "")


def test_a_long_value_is_cut_in_the_database_and_said(small_graph):
    from diting.graph.query import QueryLimits, run_query
    got = run_query(small_graph, "SELECT repeat('x', 200000) AS a, 1 AS a, [repeat('y', 12)] AS l, "
                                 "CAST(NULL AS VARCHAR) AS n", limits=QueryLimits(10, 60, 10))
    assert (got.headers, got.rows, got.truncated, got.cut_values) == (
        ["a", "a", "l", "n"], [("xxxxxxxxxx… (199,990 more characters)", 1, ["yyyyyyyyyy… (2 more characters)"],
                                None)], False, 2)
    r = run_cli("query", "--db", str(small_graph), "--max-value-chars", "4", "SELECT repeat('ab', 3) AS v")
    assert (r.returncode, r.stdout.splitlines()[-1]) == (0, "abab… (2 more characters)")
    assert "1 value(s) longer than 4 characters (bytes of a BLOB) are cut" in r.stderr


def test_the_query_limits_are_stated_in_help_and_docs():
    from tests.conftest import ROOT
    r = run_cli("query", "--help")
    page = (ROOT / "docs" / "graph.md").read_text(encoding="utf-8")
    for option in ("--max-rows", "--timeout", "--max-value-chars"):
        assert option in r.stdout and option in page.split("## 6. Queries", 1)[1].split("\n## ", 1)[0]
