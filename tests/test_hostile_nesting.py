"""Hostile nesting: input that controls how deep a reader recurses (placeholder chains, deeply
nested package JSON) ends in a diagnostic or a clear message, never a RecursionError (issue 20);
SQL without a statement is a user error."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from diting.config.spring import MAX_PLACEHOLDER_DEPTH, load_spring_config, spring_config_files
from diting.graph.store import build
from diting.ir.canonical import MAX_JSON_DEPTH, JsonTooDeep, loads, too_deep_line
from tests.conftest import make_repo, run_cli
from tests.test_hostile import diags, scan_json, shop, svc_pkg

SAMPLES = Path(__file__).resolve().parents[1] / "ir_samples" / "estate"
DEEP = "[" * 100_000 + "]" * 100_000


def _chain(n: int, yaml: bool) -> str:
    sep = ": " if yaml else "="
    return f"k0{sep}end\n" + "".join(f"k{i}{sep}${{k{i - 1}}}\n" for i in range(1, n))


def _cfg(name: str, text: str):
    files = {f"m/src/main/resources/{name}": text}
    found = spring_config_files(sorted(files), ["m/src/main/resources"])
    return load_spring_config(found, lambda p: (files[p], "0" * 40), lambda n: None, None)


@pytest.mark.parametrize("name", ["application.properties", "application.yml"])
def test_placeholder_chains_1000_deep_are_budget_exhausted_in_any_order(name):
    text = _chain(1000, name.endswith(".yml"))
    cfg = _cfg(name, text)
    rv = cfg.get("k999")
    assert (rv.status, rv.basis, rv.value) == ("UNKNOWN", "BUDGET_EXHAUSTED", None)
    assert rv.entry is not None and rv.entry.line == 1000          # the key is there: never 'absent'
    assert cfg.too_deep == {"k999": (f"m/src/main/resources/{name}", 1000)}
    # a chain of MAX_PLACEHOLDER_DEPTH hops still resolves; the outcome of a key is the same whatever was asked first
    up = [_cfg(name, text).get(f"k{i}").status for i in range(1000)]
    fresh = _cfg(name, text)
    down = [fresh.get(f"k{i}").status for i in reversed(range(1000))][::-1]
    assert up == down == ["RESOLVED"] * (MAX_PLACEHOLDER_DEPTH + 1) + ["UNKNOWN"] * (999 - MAX_PLACEHOLDER_DEPTH)
    assert fresh.get(f"k{MAX_PLACEHOLDER_DEPTH}").value == "end"
    # no default stands in for a value too deep to follow; nested defaults count as levels too
    nested = _cfg(name, text.replace("${k998}", "${k998:fallback}").replace(
        "k1" + (": " if name.endswith(".yml") else "="), "k1" + (": " if name.endswith(".yml") else "=") + "${x:", 1))
    assert nested.get("k999").basis == "BUDGET_EXHAUSTED"
    assert _cfg(name, "a: ${b}\n" if name.endswith(".yml") else "a=${b}\n").expand("${k:${a:x}}") == "x"


def test_a_deep_chain_read_by_value_is_budget_exhausted_naming_the_key(tmp_path):
    java = ("package shop;\n@org.springframework.stereotype.Component\npublic class C {\n"
            "  @org.springframework.beans.factory.annotation.Value(\"${k999}\") String v;\n}\n")
    repo, _ = make_repo(tmp_path, shop({"svc/src/main/resources/application.properties": _chain(1000, False),
                                        "svc/src/main/java/shop/C.java": java}))
    pkg = svc_pkg(scan_json(repo, tmp_path / "out"))
    by_code = {d["code"]: d for d in diags(pkg)}
    assert by_code["BUDGET_EXHAUSTED"]["message"] == (
        f"config key k999 (svc/src/main/resources/application.properties:1000): its placeholders name keys more "
        f"than {MAX_PLACEHOLDER_DEPTH} levels deep; its value is not resolved")
    assert "has the key" not in by_code["CONFIG_VALUE_UNKNOWN"]["message"]
    assert "BUDGET_EXHAUSTED" in by_code["CONFIG_VALUE_UNKNOWN"]["message"]
    assert pkg["status"] == "PARTIAL"
    assert run_cli("verify", "--deep", pkg["path"]).returncode == 0


def test_deep_json_is_found_without_recursion():
    assert too_deep_line(DEEP) == 1
    assert too_deep_line("[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH) is None
    assert too_deep_line('{"a": "' + "[" * 500 + '"}') is None                  # brackets in a string
    assert too_deep_line('{"a\\"[[": 1}\n' + "[" * 200 + "]" * 200 + "\n", per_line=True) == 2
    assert too_deep_line("{}\n" + "[\n" * 200 + "]" * 200) == MAX_JSON_DEPTH + 2  # one value over many lines
    with pytest.raises(JsonTooDeep) as exc:
        loads(DEEP)
    assert isinstance(exc.value, ValueError) and exc.value.line == 1


def _reseal(pkg: Path) -> None:
    """Rewrite the manifest's checksums (and input digest) to match the files: an altered package
    that passes the file checks."""
    m = json.loads((pkg / "manifest.json").read_text())
    for f in m["files"]:
        f["sha256"] = hashlib.sha256((pkg / f["path"]).read_bytes()).hexdigest()
    (pkg / "manifest.json").write_text(json.dumps(m, sort_keys=True, separators=(",", ":")) + "\n")


@pytest.fixture(scope="module")
def small_package(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("nest")
    repo, _ = make_repo(tmp, shop({}))
    r = run_cli("scan", str(repo), "--commit", "HEAD", "--out", str(tmp / "out"), "--quiet", "--json")
    assert r.returncode == 0, r.stderr
    return Path(svc_pkg(json.loads(r.stdout))["path"])


@pytest.mark.parametrize("where", ["manifest.json", "entities.jsonl", "relations.jsonl", "coverage.json"])
def test_package_json_nested_100000_deep_is_refused_by_every_reader(tmp_path, small_package, where):
    bad = tmp_path / small_package.name
    shutil.copytree(small_package, bad)
    path = bad / where
    if where.endswith(".jsonl"):
        lines = path.read_text().splitlines()
        lines[1] = lines[1].replace('"attributes":{', '"attributes":{"deep":' + DEEP + ",", 1)
        path.write_text("\n".join(lines) + "\n")
        line = 2
    else:
        path.write_text(path.read_text().replace("{", '{"deep":' + DEEP + ",", 1))
        line = 1
    if where != "manifest.json":
        _reseal(bad)
    said = f"{where}:{line}: JSON nested more than {MAX_JSON_DEPTH} levels deep"
    for deep in ([], ["--deep"]):
        r = run_cli("verify", *deep, str(bad))
        assert r.returncode == 1 and said in r.stdout and "Traceback" not in r.stderr, r.stderr
    for args in (["graph", "build", "--db", str(tmp_path / "g.duckdb"), str(bad)], ["coverage", str(bad)],
                 ["diff", str(small_package), str(bad)], ["diff", str(bad), str(small_package)]):
        r = run_cli(*args)
        assert r.returncode == 2 and said in r.stderr and "Traceback" not in r.stderr, (args, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "g.duckdb").exists() or run_cli("query", "--db", str(tmp_path / "g.duckdb"),
                                                           "SELECT count(*) FROM packages").returncode == 0


def test_a_query_without_a_statement_is_a_user_error(tmp_path):
    db = tmp_path / "g.duckdb"
    build(db, [SAMPLES])
    for sql in (" ", "", ";", "/* c */", " -- a comment\n;;"):
        r = run_cli("query", "--db", str(db), sql)
        assert r.returncode == 2, (sql, r.stderr)
        if not sql.strip():  # refused as it is parsed, as every empty or blank value is
            assert "Invalid value for 'SQL'" in r.stderr and "value names nothing" in r.stderr
            continue
        assert r.stderr.strip() == "error: the query holds no SQL statement (only blanks, comments or semicolons)"
    assert run_cli("query", "--db", str(db), "SELECT 1;").returncode == 0


def test_a_topic_pattern_of_thousands_of_words_matches_without_recursion():
    from diting.graph.align_mq import _rabbit_key_matches
    words = ".".join(["a"] * 3000)
    assert _rabbit_key_matches(".".join(["#"] * 3000) + ".a", words)            # was a RecursionError
    assert not _rabbit_key_matches(".".join(["#"] * 3000) + ".z", words)        # and exponential with '#'
    assert _rabbit_key_matches("a.#.b", "a.x.y.b") and not _rabbit_key_matches("a.*.#", "a")
