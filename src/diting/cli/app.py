"""The ``diting`` typer app and its ``graph`` sub-app, on which the command modules register their
commands: help lists commands in job order and names every value, and every command refuses blank
values (docs/cli.md)."""

from __future__ import annotations

from typing import Annotated

import typer
from typer.core import TyperGroup

from diting import __version__
from diting.cli.common import answer

#: the commands in the order of the job: try it, scan and check, build and ask the graph, report, extend;
#: then the same for many repositories at once
WORKFLOW = ("demo", "scan", "verify", "graph", "build", "query", "impact", "coverage", "pyramid", "diff", "export",
            "rules", "schema", "estate")
#: the value each option takes, as help shows it (an option not here shows its name in capitals)
METAVARS = {
    "--commit": "REV", "--out": "PATH", "--db": "FILE", "--service": "ID", "--profile": "P[,Q]", "--repo-id": "ID",
    "--inventory": "FILE", "--jobs": "N", "--max-file-bytes": "BYTES", "--rules": "DIR", "--config-snapshot": "FILE",
    "--sql-dialect": "[DS=]DIALECT", "--config-dir": "DIR", "--repo": "REPO", "--format": "FORMAT",
    "--saved": "NAME", "--param": "NAME=VALUE", "--max-rows": "N", "--timeout": "SECONDS", "--max-value-chars": "N",
    "--change-type": "TYPE", "--depth": "N", "--budget": "N", "--work": "DIR", "--class": "CLASS",
    "--label": "LABEL", "--only": "TEXT", "--workdir": "DIR", "--rederive-out": "DIR", "--cache": "DIR",
    "--scheduler": "ADDRESS",
}


#: options whose empty value means something: ``--label ''`` is no label, as leaving it out is
_EMPTY_MEANS_SOMETHING = frozenset({"--label"})


def _refuse_blank_values(cmd: object) -> None:
    """Make ``cmd`` refuse an empty or blank value for any option or argument (an empty one, not a
    blank one, is taken by :data:`_EMPTY_MEANS_SOMETHING`), read from the command line as given,
    before any conversion:
    converted, an empty path (``--out ""``, ``--rules ""``, ``REPO``, ``PACKAGES``) is the current
    folder, and an empty ``--repo-id`` or ``--profile`` no value at all — never what was meant (an unset
    shell variable, mostly). Raises typer's ``BadParameter`` as the command parses (exit 2, one
    message naming the option)."""
    parse = cmd.parse_args  # type: ignore[attr-defined]

    def parse_args(ctx, args: list[str]) -> list[str]:
        given, _, _ = cmd.make_parser(ctx).parse_args(args=list(args))  # type: ignore[attr-defined]
        for param in cmd.get_params(ctx):  # type: ignore[attr-defined]
            if getattr(param, "is_flag", False):
                continue
            empty_ok = bool(set(param.opts) & _EMPTY_MEANS_SOMETHING)
            raw = given.get(param.name)
            for v in raw if isinstance(raw, (list, tuple)) else [raw]:
                if isinstance(v, str) and not v.strip() and not (empty_ok and v == ""):
                    what = "an empty" if v == "" else "a blank"
                    hint = "give one" if param.param_type_name == "argument" else "give one, or leave the option out"
                    raise typer.BadParameter(f"{what} value names nothing: {hint}", ctx=ctx, param=param)
        return parse(ctx, args)

    cmd.parse_args = parse_args  # type: ignore[attr-defined]


class _Workflow(TyperGroup):
    """A command group whose help lists commands in :data:`WORKFLOW` order and names every value
    (``--commit REV``, ``PACKAGES...``; a flag shows none), in plain text: what an agent or a CI
    log reads as well as a person (docs/cli.md is made from it)."""

    def __init__(self, **attrs: object) -> None:
        super().__init__(**attrs)
        for cmd in self.commands.values():
            if not isinstance(cmd, TyperGroup):  # a group's own commands are its own _Workflow's
                _refuse_blank_values(cmd)
            for param in cmd.params:
                if param.metavar is not None or getattr(param, "is_flag", False):
                    continue
                if param.param_type_name == "argument":
                    param.metavar = param.name.upper()
                else:
                    long = max(param.opts, key=len)
                    param.metavar = METAVARS.get(long, long.lstrip("-").upper())

    def list_commands(self, ctx: object) -> list[str]:
        return sorted(self.commands, key=lambda n: (WORKFLOW.index(n) if n in WORKFLOW else len(WORKFLOW), n))


app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False, cls=_Workflow,
                  rich_markup_mode=None,
                  help="diting: what the Java source of a microservice estate provably does. The job, in order: "
                       "scan a repository at a commit into packages, verify them, build the graph, then query it, "
                       "see what a change reaches, report coverage, render the pyramid, diff two commits "
                       "(docs/cli.md).")


def _version(value: bool) -> None:
    if value:
        answer(f"diting {__version__}\n")


@app.callback()
def _main(version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                                help="Show the version and exit.")] = False) -> None:
    pass


graph_app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False, cls=_Workflow,
                        rich_markup_mode=None,
                        help="The cross-service relation graph in DuckDB.")
app.add_typer(graph_app, name="graph")

estate_app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False, cls=_Workflow,
                         rich_markup_mode=None,
                         help="Many repositories at once: scan an estate file's repositories, reusing what did not "
                              "change, and keep a graph current with them (docs/estates.md).")
app.add_typer(estate_app, name="estate")
