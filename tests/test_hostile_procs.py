"""Faults of processes and files: a scan ended by a signal takes its workers with it, a package left
half-written by a killed scan blocks no reader and is swept by the next scan, and a graph build
interrupted says what the database holds (loaded, or unchanged) and never leaves a database without
tables."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from diting.cli.main import app
from tests.conftest import boot_module, make_repo, pom, scan_repo


def _children(pid: int) -> set[int]:
    """The ids of the live processes whose parent is ``pid``."""
    out: set[int] = set()
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            stat = Path(f"/proc/{d}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[1]) == pid and fields[0] != "Z":
            out.add(int(d))
    return out


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _many_java_files(tmp_path: Path, n: int = 1500) -> tuple[Path, str]:
    body = "".join(f"    public int m{i}(int a) {{ return a + {i}; }}\n" for i in range(40))
    files = {f"src/main/java/com/example/svc/C{i}.java":
             f"package com.example.svc;\npublic class C{i} {{\n{body}}}\n" for i in range(n)}
    return make_repo(tmp_path, {"pom.xml": pom("svc", parent=None), **boot_module("svc", "", {})} | {
        f"svc/{k}": v for k, v in files.items()})


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_a_signal_to_a_scan_ends_its_workers(tmp_path, sig):
    """SIGTERM ends a scan as Ctrl-C does (exit 130, "interrupted"); after SIGTERM or SIGKILL no
    worker of it lives on."""
    repo, sha = _many_java_files(tmp_path)
    proc = subprocess.Popen([sys.executable, "-m", "diting", "scan", str(repo), "--commit", sha, "--jobs", "2",
                             "--out", str(tmp_path / "out"), "--quiet", "--repo-id", "t/r"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    workers: set[int] = set()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and proc.poll() is None:
        workers |= {c for c in _children(proc.pid)
                    if "multiprocessing" in Path(f"/proc/{c}/cmdline").read_bytes().decode(errors="replace")
                    or Path(f"/proc/{c}/cmdline").read_bytes().startswith(sys.executable.encode())}
        if len(workers) >= 2:
            break
        time.sleep(0.05)
    assert len(workers) >= 2, "the scan ended before its workers started: make the repository bigger"
    time.sleep(0.3)
    proc.send_signal(sig)
    try:
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and any(_alive(w) for w in workers):
            time.sleep(0.05)
        assert not [w for w in workers if _alive(w)]
        _, err = proc.communicate(timeout=10)  # the pipes close: no worker holds them
        if sig == signal.SIGTERM:
            assert proc.returncode == 130, err
            assert err.decode().strip() == "interrupted", err
    finally:
        for w in workers:
            with contextlib.suppress(OSError):
                os.kill(w, signal.SIGKILL)
        proc.kill()
        proc.wait()


@pytest.fixture(scope="module")
def small_out(tmp_path_factory) -> tuple[Path, Path, str]:
    """A repository of one service and the packages a scan of it wrote."""
    tmp = tmp_path_factory.mktemp("small")
    repo, sha = make_repo(tmp, {"pom.xml": pom("svc", parent=None), **boot_module("svc", "", {
        "src/main/java/com/example/PKG/Hello.java": "package com.example.PKG;\n"
        "@org.springframework.web.bind.annotation.RestController\npublic class Hello {\n"
        "  @org.springframework.web.bind.annotation.GetMapping(\"/hi\") public String hi() { return \"hi\"; }\n}\n"})})
    out = tmp / "out"
    scan_repo(repo, out)
    return repo, out, sha


def _plant_leftover(out: Path, pid: int) -> Path:
    """A package half-written by the process ``pid``: a copy of one with its files after the
    manifest missing (the order the writer writes them in)."""
    pkg = next(p for p in sorted(out.iterdir()) if not p.name.startswith("."))
    tmp = out / f".{pkg.name}.tmp-{pid}-0badc0de"
    shutil.copytree(pkg, tmp)
    for f in sorted(tmp.iterdir()):
        if f.name > "manifest.json":
            f.unlink()
    return tmp


def test_a_half_written_package_blocks_no_reader_and_is_swept_by_the_next_scan(small_out, tmp_path):
    repo, src, _ = small_out
    out = tmp_path / "out"
    shutil.copytree(src, out)
    dead = _plant_leftover(out, 99999999)
    live = _plant_leftover(out, os.getpid())
    runner = CliRunner()
    r = runner.invoke(app, ["graph", "build", str(out), "--db", str(tmp_path / "g.duckdb")])
    assert r.exit_code == 0, r.output
    assert "loaded 2," in r.stdout
    assert f"skipped {dead}" in r.stderr and f"skipped {live}" in r.stderr
    r = runner.invoke(app, ["coverage", str(out), "--format", "json"])
    assert r.exit_code == 0, r.output
    assert len(json.loads(r.stdout)["applications"]) == 2
    assert f"skipped {dead}" in r.stderr
    gone = out / ".gone@000000000000.tmp-99999999-ab"  # of a package this scan does not write
    gone.mkdir()
    scan_repo(repo, out)
    assert not dead.exists() and not gone.exists()  # a dead writer's leftovers go
    assert live.is_dir()  # a live one's stays


def _patched_build(monkeypatch, where: str, action) -> None:
    """Make ``action()`` happen inside the build: during ``materialise`` (before the commit), or
    ``after`` the commit point: right after DuckDB's COMMIT of an existing database, right after a new
    one is moved into place."""
    import diting.graph.impact as impact
    import diting.graph.store as store
    if where == "before":
        real = impact.materialise

        def materialise(con):
            action()
            return real(con)
        monkeypatch.setattr(impact, "materialise", materialise)
        return
    real_connect, real_replace = store.connect, os.replace

    def replace(src, dst):
        real_replace(src, dst)
        if Path(dst).suffix == ".duckdb":
            action()
    monkeypatch.setattr(os, "replace", replace)

    class Con:
        def __init__(self, con, existed):
            self._con, self._existed = con, existed

        def execute(self, sql, *a):
            got = self._con.execute(sql, *a)
            if sql == "COMMIT" and self._existed:
                action()
            return got

        def __getattr__(self, name):
            return getattr(self._con, name)
    monkeypatch.setattr(store, "connect", lambda db, read_only=False: Con(real_connect(db, read_only),
                                                                           db.name == "g.duckdb"))


@pytest.mark.parametrize("new", [True, False])
def test_an_interrupt_past_the_commit_point_completes_the_build_and_says_so(small_out, tmp_path, monkeypatch, new):
    _, out, _ = small_out
    db = tmp_path / "g.duckdb"
    if not new:
        from diting.graph.store import build
        build(db, [out], label="old")
    _patched_build(monkeypatch, "after", lambda: signal.raise_signal(signal.SIGINT))
    r = CliRunner().invoke(app, ["graph", "build", str(out), "--db", str(db)])
    assert r.exit_code == 0, r.output
    assert "loaded 2," in r.stdout
    assert "the build completed and is committed" in r.stderr
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # the handler is back
    from diting.graph.query import query
    assert query(db, "SELECT count(*) FROM packages WHERE label = ''")[1] == [(2,)]


def test_an_interrupt_before_the_commit_point_leaves_no_new_database(small_out, tmp_path, monkeypatch):
    from diting.graph.store import build
    from diting.graph.query import query
    _, out, _ = small_out
    db = tmp_path / "g.duckdb"
    armed = [True]
    _patched_build(monkeypatch, "before", lambda: armed[0] and signal.raise_signal(signal.SIGINT))
    with pytest.raises(KeyboardInterrupt):
        build(db, [out])
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    armed[0] = False
    build(db, [out], label="old")
    armed[0] = True
    with pytest.raises(KeyboardInterrupt):
        build(db, [out], replace=True)  # an existing database: its transaction is rolled back
    assert query(db, "SELECT label, count(*) FROM packages GROUP BY label")[1] == [("old", 2)]


def test_a_build_killed_into_a_new_database_leaves_none(small_out, tmp_path):
    _, out, _ = small_out
    db = tmp_path / "g.duckdb"
    code = ("import os, signal, sys\n"
            "import diting.graph.impact as impact\n"
            "from diting.graph.store import build\n"
            "impact.materialise = lambda con: os.kill(os.getpid(), signal.SIGKILL)\n"
            "build(__import__('pathlib').Path(sys.argv[1]), [__import__('pathlib').Path(sys.argv[2])])\n")
    proc = subprocess.run([sys.executable, "-c", code, str(db), str(out)], capture_output=True, text=True)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert not db.exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".g.duckdb.tmp-")]  # the killed build's file
    r = CliRunner().invoke(app, ["graph", "build", str(out), "--db", str(db)])
    assert r.exit_code == 0, r.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.duckdb"]  # the dead build's file swept
    r = CliRunner().invoke(app, ["query", "SELECT count(*) AS n FROM services", "--db", str(db), "--format", "json"])
    assert r.exit_code == 0, r.output


def _descendants(pid: int) -> set[int]:
    out, todo = set(), [pid]
    while todo:
        kids = _children(todo.pop())
        out |= kids
        todo.extend(kids)
    return out


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_killed_verification_leaves_no_worker(estate_scan, tmp_path):
    """Record checks run in workers forked from a fresh server process (not from the command, whose
    other threads native validators do not survive); a kill -9 of the command ends the server's
    workers too, although the server itself would outlive them."""
    result, _ = estate_scan
    src = next(p.path for p in result.packages if p.service_id == "order-center")
    for i in range(60):
        shutil.copytree(src, tmp_path / "pkgs" / f"copy{i}" / src.name)
    proc = subprocess.Popen([sys.executable, "-m", "diting", "verify", "--deep", "--jobs", "2",
                             str(tmp_path / "pkgs")], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    workers: set[int] = set()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and proc.poll() is None and len(workers) < 3:
        workers = _descendants(proc.pid)  # the fork server and its workers
        time.sleep(0.05)
    assert len(workers) >= 3, "the verification ended before its workers started: verify more copies"
    proc.kill()
    try:
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and any(_alive(w) for w in workers):
            time.sleep(0.05)
        assert not [w for w in workers if _alive(w)]
    finally:
        for w in workers:
            with contextlib.suppress(OSError):
                os.kill(w, signal.SIGKILL)
        proc.wait()
