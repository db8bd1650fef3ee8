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
