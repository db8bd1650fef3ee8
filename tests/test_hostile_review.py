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
                 "query": ["SELECT 1", "--db", "no.duckdb"]}


def _numeric_options() -> list[tuple[str, str, object]]:
    """``(command, option, typer.Option)`` for every int or float option of every command."""
    from diting.cli.main import app, graph_app
    found = []
    for group in (app, graph_app):
        for cmd in group.registered_commands:
            for hint in typing.get_type_hints(cmd.callback, include_extras=True).values():
                if typing.get_origin(hint) is typing.Annotated and typing.get_args(hint)[0] in (int, float):
                    opt = typing.get_args(hint)[1]
                    found.append((cmd.name or cmd.callback.__name__, opt.default, opt))
    return found


def test_every_numeric_option_has_bounds():
    options = _numeric_options()
    assert {(c, o) for c, o, _ in options} >= {("scan", "--jobs"), ("scan", "--max-file-bytes"), ("verify", "--jobs"),
                                              ("impact", "--depth"), ("impact", "--budget")}
    assert [(c, o) for c, o, opt in options if opt.min is None or opt.max is None] == []
    assert {c for c, _, _ in options} <= set(_COMMAND_ARGS)


@pytest.mark.parametrize("command,option", [(c, o) for c, o, _ in _numeric_options()])
def test_a_number_beyond_64_bits_is_a_user_error(tmp_path, command, option):
    r = run_cli(command, *_COMMAND_ARGS[command], option, str(2 ** 64), cwd=tmp_path)
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
