"""Hostile input from the third review of issue 20: a signal while modules are still being imported,
writers that must not write among other files (inside a package, over someone's files), a query on a
database that is no graph, JSON that a strict parser refuses, and a remote URL naming a command —
each a class, each with its correct expected value."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT, run_cli

# ------------------------------------------------------------------ 1: a signal during start-up

#: runs the console script's entry point with a signal sent from inside the process as the module
#: named on the command line is about to be imported (the first time only): the interrupt then lands
#: while other modules are half-imported, as a Ctrl-C in the first fraction of a second does
_SIGNAL_IN_IMPORT = """
import os, signal, sys
target, sig = sys.argv[1], getattr(signal, sys.argv[2])
del sys.argv[1:3]
sys.argv[0] = "diting"

class Fire:
    fired = False
    def find_spec(self, name, path=None, target_=None):
        if name == target and not Fire.fired:
            Fire.fired = True
            os.kill(os.getpid(), sig)
        return None

sys.meta_path.insert(0, Fire())
from diting.cli.entry import run
run()
"""


@pytest.mark.parametrize("module", ["diting.cli.main", "typer", "diting.ir.redaction", "diting.ir.models",
                                    "diting.inventory.gradle_script", "diting.graph.export"])
@pytest.mark.parametrize("sig", ["SIGTERM", "SIGINT"])
def test_a_signal_while_modules_are_imported_is_an_interrupt(tmp_path, module, sig):
    script = tmp_path / "signal_in_import.py"
    script.write_text(_SIGNAL_IN_IMPORT, encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    repo = tmp_path / "none"
    repo.mkdir()
    r = subprocess.run([sys.executable, str(script), module, sig, "scan", str(repo), "--commit", "HEAD", "--out",
                        str(tmp_path / "out"), "--quiet"], env=env, capture_output=True, text=True)
    # a module the command never imports fires nothing: it then ends as a user error (no repository)
    assert r.returncode in (130, 2), r.stderr
    assert "internal error" not in r.stderr and "Traceback" not in r.stderr, r.stderr
    if r.returncode == 130:
        assert r.stderr.strip() == "interrupted"


def test_the_console_script_imports_nothing_before_its_handlers():
    """The entry point's module imports no diting module (and no third-party one) at its top."""
    import ast
    tree = ast.parse((ROOT / "src/diting/cli/entry.py").read_text(encoding="utf-8"))
    top = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    names = {a.name for n in top if isinstance(n, ast.Import) for a in n.names}
    names |= {n.module for n in top if isinstance(n, ast.ImportFrom)}
    assert names <= {"__future__", "os", "signal", "sys"}, names
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert 'diting = "diting.cli.entry:run"' in pyproject


# ------------------------------------------------------------------ 2, 3: writers among other files

@pytest.fixture(scope="module")
def graph(tmp_path_factory):
    """``(database, package directory)`` of one small scanned service."""
    from diting.graph.store import build
    from tests.conftest import BOOT_PLUGIN, make_repo, pom, scan_repo
    tmp = tmp_path_factory.mktemp("third")
    repo, sha = make_repo(tmp, {
        "pom.xml": pom("svc", parent=None, body=BOOT_PLUGIN),
        "src/main/java/shop/App.java": "package shop;\n@org.springframework.boot.autoconfigure.SpringBootApplication\n"
                                       "public class App { public static void main(String[] a) { } }\n"})
    (pkg,) = scan_repo(repo, tmp / "out", sha).packages
    build(tmp / "g.duckdb", [tmp / "out"])
    return tmp / "g.duckdb", pkg.path


def test_pyramid_never_writes_inside_a_package(graph):
    db, pkg = graph
    before = sorted(p.name for p in pkg.iterdir())
    for out in (pkg / "pyramid", pkg):
        r = run_cli("pyramid", "--db", str(db), "--out", str(out))
        assert r.returncode == 2, r.stderr
        assert "inside the package" in r.stderr
    assert sorted(p.name for p in pkg.iterdir()) == before
    assert run_cli("verify", str(pkg)).returncode == 0


def test_a_parquet_export_never_writes_among_other_files(graph, tmp_path):
    db, _ = graph
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "services.parquet").write_text("precious\n")
    r = run_cli("export", "--db", str(db), "--format", "parquet", "--out", str(theirs))
    assert r.returncode == 2 and "other files than a Parquet export" in r.stderr, r.stderr
    assert sorted(p.name for p in theirs.iterdir()) == ["services.parquet"]
    assert (theirs / "services.parquet").read_text() == "precious\n"
    # a new or empty directory, and then the same directory again (a former export), are written
    ours = tmp_path / "ours"
    for _ in range(2):
        r = run_cli("export", "--db", str(db), "--format", "parquet", "--out", str(ours))
        assert r.returncode == 0, r.stderr
    names = sorted(p.name for p in ours.iterdir())
    assert ".diting-export" in names and "packages.parquet" in names
    assert all(n == ".diting-export" or n.endswith(".parquet") for n in names)
    # a former export a user added a file to is theirs again
    (ours / "notes.txt").write_text("mine\n")
    r = run_cli("export", "--db", str(db), "--format", "parquet", "--out", str(ours))
    assert r.returncode == 2 and "notes.txt" in r.stderr


# ------------------------------------------------------------------ 4: a database that is no graph

def test_a_query_on_a_database_that_is_no_graph_is_a_user_error(tmp_path):
    import duckdb
    other = tmp_path / "other.duckdb"
    con = duckdb.connect(str(other))
    con.execute("CREATE TABLE x (a INTEGER)")
    con.close()
    empty = tmp_path / "empty.duckdb"
    duckdb.connect(str(empty)).close()
    for db, said in ((other, "it holds x"), (empty, "no packages table")):
        r = run_cli("query", "--db", str(db), "SELECT 1")
        assert r.returncode == 2, r.stderr
        assert "not a diting graph database" in r.stderr and said in r.stderr


# ------------------------------------------------------------------ 5: strict JSON

def _strict(text: str):
    def refuse(name: str):
        raise ValueError(f"not JSON: {name}")
    return json.loads(text, parse_constant=refuse)


def test_query_json_is_strict_json_for_floats_it_cannot_hold(graph):
    db, _ = graph
    r = run_cli("query", "--db", str(db), "--format", "json",
                "SELECT 'nan'::DOUBLE AS a, 'inf'::DOUBLE AS b, ['-inf'::DOUBLE, 1.5] AS c, {'x': 'nan'::DOUBLE} AS d")
    assert r.returncode == 0, r.stderr
    assert _strict(r.stdout) == [{"a": "NaN", "b": "Infinity", "c": ["-Infinity", 1.5], "d": {"x": "NaN"}}]


def test_every_json_renderer_writes_strict_json():
    from diting.safe_text import json_text
    assert _strict(json_text({"k": [float("nan"), (float("inf"),)], "n": 2.5})) == {"k": ["NaN", ["Infinity"]], "n": 2.5}


# ------------------------------------------------------------------ 6: a remote helper's address

@pytest.mark.parametrize("url,expected", [
    ("ext::sh -c touch% /tmp/x", None),
    ("ext::git@github.com:a/b.git", None),
    ("fd::17", None),
    ("persistent-https::https://github.com/a/b.git", "github.com/a/b"),
    ("my host:a/b", None),
    ("git@github.com:a/b.git", "github.com/a/b"),
])
def test_a_remote_helper_url_names_a_repository_only_through_a_url(url, expected):
    from diting.source.git import repo_id_from_url
    assert repo_id_from_url(url) == expected


def test_an_ext_origin_falls_back_to_the_directory_name(tmp_path):
    from tests.conftest import BOOT_PLUGIN, make_repo, pom
    repo, sha = make_repo(tmp_path, {"pom.xml": pom("svc", parent=None, body=BOOT_PLUGIN)}, name="f6")
    subprocess.run(["git", "-C", str(repo), "remote", "add", "origin", "ext::sh -c touch% /tmp/x"], check=True)
    r = run_cli("scan", str(repo), "--commit", sha, "--out", str(tmp_path / "out"), "--quiet")
    assert r.returncode == 0, r.stderr
    (pkg,) = [p for p in (tmp_path / "out").iterdir() if not p.name.startswith(".")]
    manifest = json.loads((pkg / "manifest.json").read_text())
    assert manifest["repo_id"] == repo.name


# ------------------------------------------------------------------ re-check: interrupts inside libraries

#: runs ``diting query`` with ``_bounded_rows`` replaced: the signal arrives inside it and a library
#: either swallows the KeyboardInterrupt (an object's finaliser: "Exception ignored in …") or turns it
#: into an error of its own (as DuckDB's RuntimeError "Query interrupted" does outside a query)
_SIGNAL_IN_LIBRARY = """
import os, signal, sys, time
how, sig = sys.argv[1], getattr(signal, sys.argv[2])
del sys.argv[1:3]
sys.argv[0] = "diting"
import diting.graph.query as store
rows = store._bounded_rows

class Finaliser:
    def __del__(self):
        os.kill(os.getpid(), sig)

def patched(rel, limits):
    if how == "swallowed":
        f = Finaliser()
        del f
    else:
        try:
            os.kill(os.getpid(), sig)
            time.sleep(1)
        except KeyboardInterrupt:
            raise ValueError("the library's own error, caused by the interrupt") from None
    return rows(rel, limits)

store._bounded_rows = patched
from diting.cli.entry import run
run()
"""


@pytest.mark.parametrize("how", ["swallowed", "converted"])
def test_an_interrupt_a_library_swallows_or_converts_still_exits_130(graph, tmp_path, how):
    db, _ = graph
    script = tmp_path / "signal_in_library.py"
    script.write_text(_SIGNAL_IN_LIBRARY, encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    r = subprocess.run([sys.executable, str(script), how, "SIGTERM", "query", "--db", str(db), "SELECT 1"],
                       env=env, capture_output=True, text=True)
    assert r.returncode == 130, (r.returncode, r.stderr)
    assert "interrupted" in r.stderr and "internal error" not in r.stderr


def test_a_native_module_is_imported_whole_and_the_interrupt_delivered_after(tmp_path, monkeypatch):
    from diting.interrupts import import_native
    (tmp_path / "selfsignal_mod.py").write_text(
        "import os, signal\nos.kill(os.getpid(), signal.SIGINT)\nDONE = True\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(KeyboardInterrupt):
        import_native("selfsignal_mod")
    assert sys.modules["selfsignal_mod"].DONE  # the import was not cut in the middle
    assert import_native("selfsignal_mod") is sys.modules["selfsignal_mod"]


# ------------------------------------------------------------------ re-check: JSON and databases

def test_map_keys_json_cannot_name_are_written_as_text(graph):
    db, _ = graph
    r = run_cli("query", "--db", str(db), "--format", "json",
                "SELECT map(['nan'::DOUBLE], [1]) AS m, map([DATE '2020-01-02'], [2]) AS d, "
                "[map(['-inf'::DOUBLE], ['x'])] AS l")
    assert r.returncode == 0, r.stderr
    assert _strict(r.stdout) == [{"m": {"NaN": 1}, "d": {"2020-01-02": 2}, "l": [{"-Infinity": "x"}]}]


@pytest.mark.parametrize("fmt", ["json", "table", "csv"])
def test_a_value_nested_too_deep_to_print_is_a_user_error(graph, fmt):
    from diting.graph.query import MAX_VALUE_DEPTH
    db, _ = graph
    ok, deep = "1", "1"
    for i in range(MAX_VALUE_DEPTH):
        ok = f"list_value({ok})"
    for i in range(600):
        deep = f"list_value({deep})"
    assert run_cli("query", "--db", str(db), "--format", fmt, f"SELECT {ok} AS v").returncode == 0
    r = run_cli("query", "--db", str(db), "--format", fmt, f"SELECT {deep} AS v")
    assert r.returncode == 2, r.stderr
    assert "nested more than" in r.stderr and "internal error" not in r.stderr


def test_every_reader_of_a_graph_refuses_another_database(graph, tmp_path):
    import duckdb
    other = tmp_path / "aux.duckdb"
    con = duckdb.connect(str(other))
    con.execute("CREATE SCHEMA extra; CREATE TABLE extra.t (a INTEGER)")
    con.close()
    plain = tmp_path / "plain.duckdb"
    con = duckdb.connect(str(plain))
    con.execute("CREATE TABLE foo (a INTEGER)")
    con.close()
    for db, said in ((other, "extra.t"), (plain, "foo")):
        for args in (["query", "--db", str(db), "SELECT 1"],
                     ["export", "--db", str(db), "--format", "parquet", "--out", str(tmp_path / "e")],
                     ["coverage", "--db", str(db)]):
            r = run_cli(*args)
            assert r.returncode == 2 and "not a diting graph database" in r.stderr and said in r.stderr, (args, r.stderr)
    assert not (tmp_path / "e").exists()
