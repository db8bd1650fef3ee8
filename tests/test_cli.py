"""The command line as a user reads it: flags look like flags, every value is named, commands come
in the order of the job, --db is marked required wherever it is, and docs/cli.md is its help."""

from __future__ import annotations

import re

import pytest

from typer.testing import CliRunner

from diting.cli.app import WORKFLOW
from diting.cli.main import app

runner = CliRunner()


def _help(*path: str) -> str:
    result = runner.invoke(app, [*path, "--help"], terminal_width=100, prog_name="diting")
    assert result.exit_code == 0, result.output
    return result.output


def _commands(text: str) -> list[str]:
    if "\nCommands:\n" not in text:
        return []
    return [ln.split()[0] for ln in text.split("\nCommands:\n", 1)[1].splitlines() if ln.startswith("  ") and ln.split()]


def _every_help() -> dict[tuple[str, ...], str]:
    out, todo = {}, [()]
    while todo:
        path = todo.pop(0)
        out[path] = text = _help(*path)
        todo += [(*path, c) for c in _commands(text)]
    return out


def test_flags_look_like_flags_and_every_value_is_named():
    helps = _every_help()
    assert len(helps) >= 13
    for path, text in helps.items():
        options = text.split("\nOptions:\n", 1)[-1]  # an argument's type reads as what it is: REPO <path>
        assert not re.search(r"<(bool|str|int|list\[[a-z]+\]|int range)>", options), (path, options)
        for line in text.splitlines():
            m = re.match(r"\s+(--[a-z-]+)(?: ([^ ].*?))?\s{2,}", line)
            if m and m.group(1) not in ("--help", "--version"):
                name, value = m.groups()
                if value is not None:  # a value is named in capitals (REV, FILE, [DS=]DIALECT, P[,Q] …)
                    assert re.fullmatch(r"[A-Z\[\]=,.]*[A-Z\]]", value), (path, line)


def test_commands_come_in_the_order_of_the_job():
    listed = _commands(_help())
    assert listed == [c for c in WORKFLOW if c in listed], listed
    assert listed[:4] == ["demo", "scan", "verify", "graph"]


def test_db_is_marked_required_wherever_it_is():
    for path in (("graph", "build"), ("impact",), ("pyramid",), ("export",)):
        text = _help(*path)
        block = text[text.index("--db FILE"):].split("\n  --", 1)[0]
        assert "[required]" in block, (path, block)
    assert "required, except with --saved list" in " ".join(_help("query").split())


def test_demo_help_says_what_the_demo_shows():
    text = " ".join(_help("demo").split())
    for step in ("scan it into packages", "verify every package", "example SQL", "the relation graph",
                 "the pyramid"):
        assert step in text


def test_user_errors_exit_2_with_one_line():
    for args in (["scan", "/nonexistent/repo", "--commit", "HEAD"], ["verify", "/nonexistent"],
                 ["query", "SELECT 1"], ["impact", "x", "--db", "/nonexistent.duckdb", "--change-type", "LOGIC"],
                 ["scan", ".", "--commit", "HEAD", "--jobs", "-1"], ["nosuchcommand"]):
        result = runner.invoke(app, args, prog_name="diting")
        assert result.exit_code == 2, (args, result.output)
        assert "Traceback" not in result.output


def test_a_reader_gone_away_is_exit_141_never_a_finding(tmp_path):
    """`diting verify … | head`: the pipe closes before everything is written. Exit 1 means
    findings for verify; a closed pipe is 141 (128 + SIGPIPE), quietly."""
    import os
    import subprocess
    import sys
    from pathlib import Path
    samples = Path(__file__).resolve().parents[1] / "ir_samples" / "estate"
    for args in (["verify", str(samples)], ["rules", "--only", "dubbo"]):
        r, w = os.pipe()
        os.close(r)  # the reader is gone before the first write
        proc = subprocess.run([sys.executable, "-m", "diting", *args], stdout=w, stderr=subprocess.PIPE)
        os.close(w)
        assert proc.returncode == 141, (args, proc.returncode, proc.stderr)
        assert b"Traceback" not in proc.stderr and b"Exception ignored" not in proc.stderr, proc.stderr


@pytest.mark.parametrize("args", [["--version"], ["scan", "--stages"], ["rules"]])
def test_a_reader_gone_or_a_full_device_is_141_or_one_message(args):
    import os
    import subprocess
    import sys
    env = dict(os.environ)
    cmd = [sys.executable, "-m", "diting", *args]
    gone = subprocess.run(f"{' '.join(cmd)} | true; exit ${{PIPESTATUS[0]}}", shell=True, executable="/bin/bash",
                          env=env, capture_output=True, text=True)
    assert gone.returncode == 141 and "Traceback" not in gone.stderr
    if os.path.exists("/dev/full"):
        with open("/dev/full", "w") as full:
            r = subprocess.run(cmd, stdout=full, stderr=subprocess.PIPE, text=True, env=env)
        assert r.returncode == 2 and r.stderr.startswith("error: cannot write the standard output")


@pytest.mark.parametrize("args", [["--help"], ["scan", "--help"], ["graph", "build", "--help"], ["--version"]])
def test_help_to_a_full_or_closed_standard_output_is_one_message_and_exit_2(args):
    """Help is written while the options are parsed, before any command runs; a standard output that is
    full, or closed before the process started (``>&-``: Python then has none), still ends in one line
    and exit 2 — not an internal error, not output silently lost."""
    import os
    import subprocess
    import sys
    cmd = [sys.executable, "-m", "diting", *args]
    if os.path.exists("/dev/full"):
        with open("/dev/full", "w") as full:
            r = subprocess.run(cmd, stdout=full, stderr=subprocess.PIPE, text=True)
        assert r.returncode == 2 and r.stderr.startswith("error: cannot write the standard output"), r.stderr
    closed = subprocess.run(" ".join(cmd) + " >&-", shell=True, executable="/bin/bash", capture_output=True, text=True)
    assert closed.returncode == 2, closed.stderr
    assert closed.stderr == "error: cannot write the standard output: the standard output is closed\n"


def test_a_package_file_verify_cannot_read_is_a_finding_and_an_unreadable_folder_an_error():
    """A listed file that cannot be opened (its permissions) is never passed over as valid; a folder of
    packages that cannot be listed is exit 2 for verify and diff, one line (as a user without rights
    to it runs them: the test drops to an unprivileged uid when it runs as root)."""
    import os
    import shutil
    import subprocess
    import sys
    from pathlib import Path
    import tempfile
    samples = Path(__file__).resolve().parents[1] / "ir_samples" / "estate"
    src = next(p for p in sorted(samples.iterdir()) if (p / "manifest.json").is_file())
    tmp_path = Path(tempfile.mkdtemp(prefix="diting-perm-", dir="/tmp"))  # pytest's own is the owner's only
    pkg, other = tmp_path / "pkgs" / "a", tmp_path / "other"
    shutil.copytree(src, pkg)
    shutil.copytree(src, other)
    os.chmod(pkg / "entities.jsonl", 0)
    locked = tmp_path / "locked"
    shutil.copytree(src, locked / "b")
    os.chmod(locked, 0)
    for p in (tmp_path, tmp_path / "pkgs", pkg, other):
        os.chmod(p, 0o755)
    user = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] if os.geteuid() == 0 else []
    if user and shutil.which("setpriv") is None:
        pytest.skip("runs as root without setpriv: permissions would not bite")
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1] / "src"))

    def diting(*args):
        return subprocess.run(user + [sys.executable, "-m", "diting", *args], capture_output=True, text=True, env=env)
    try:
        r = diting("verify", str(pkg))
        assert r.returncode == 1 and "entities.jsonl: cannot be read (Permission denied)" in r.stdout, (r.stdout, r.stderr)
        r = diting("verify", str(tmp_path / "pkgs"))
        assert r.returncode == 1, (r.stdout, r.stderr)
        for args in (("verify", str(tmp_path)), ("diff", str(locked / "b"), str(other))):
            r = diting(*args)
            assert r.returncode == 2 and "not readable (Permission denied)" in r.stderr, (args, r.stdout, r.stderr)
            assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    finally:
        os.chmod(locked, 0o755)
        os.chmod(pkg / "entities.jsonl", 0o644)
        shutil.rmtree(tmp_path)


def test_an_interrupt_stops_a_running_query_at_once(tmp_path):
    """SIGINT or SIGTERM while DuckDB runs a query interrupts the query itself (the connection's
    interrupt), not only the Python side: exit 130 well before the grace period ends the process."""
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    from diting.cli.main import INTERRUPT_GRACE_SECONDS
    from diting.graph.store import build
    db = tmp_path / "g.duckdb"
    build(db, [Path(__file__).resolve().parents[1] / "ir_samples" / "estate"])
    heavy = "select sum(hash(a.range * b.range)) from range(1000000) a, range(1000000) b"
    for sig in (signal.SIGINT, signal.SIGTERM):
        proc = subprocess.Popen([sys.executable, "-m", "diting", "query", "--db", str(db), heavy, "--timeout", "600"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        time.sleep(3)  # the query runs in DuckDB by now
        sent = time.monotonic()
        proc.send_signal(sig)
        _, stderr = proc.communicate(timeout=60)
        assert proc.returncode == 130 and "interrupted" in stderr, (sig, proc.returncode, stderr)
        assert time.monotonic() - sent < INTERRUPT_GRACE_SECONDS / 2, sig


def test_a_canned_querys_errors_stay_on_one_line_of_stderr(tmp_path):
    """An unknown canned query lists the known ones with the error, on stderr (standard output stays
    empty for a script); a parameter value holding control characters or a newline is shown escaped."""
    import subprocess
    import sys
    from pathlib import Path

    from diting.graph.store import build
    db = tmp_path / "g.duckdb"
    build(db, [Path(__file__).resolve().parents[1] / "ir_samples" / "estate"])
    r = subprocess.run([sys.executable, "-m", "diting", "query", "--saved", "nosuch", "--db", str(db)],
                       capture_output=True, text=True)
    assert r.returncode == 2 and r.stdout == "" and "who-calls" in r.stderr
    r = subprocess.run([sys.executable, "-m", "diting", "query", "--saved", "who-calls", "--db", str(db),
                        "--param", "urn=\x1b[31mX\nline2"], capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr == "error: no contract named \\x1b[31mX\\x0aline2\n", r.stderr
