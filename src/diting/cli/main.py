"""The ``diting`` command line.

Errors a user can cause end with one line on stderr and a non-zero exit code,
never a traceback. Results go to stdout (``--json`` for machines); progress
goes to stderr.
"""

from __future__ import annotations

import json
import errno
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console
from typer.core import TyperGroup
from rich.text import Text

from diting import __version__
from diting.errors import UserError
from diting.limits import (DEFAULT_MAX_ROWS, DEFAULT_MAX_VALUE_CHARS, DEFAULT_QUERY_TIMEOUT, MAX_FILE_BYTES_LIMIT,
                           MAX_IMPACT_BUDGET, MAX_IMPACT_DEPTH, MAX_QUERY_ROWS, MAX_QUERY_TIMEOUT,
                           MAX_VALUE_CHARS_LIMIT, MAX_WORKERS, MIN_IMPACT_DEPTH)

#: the commands in the order of the job: try it, scan and check, build and ask the graph, report, extend
WORKFLOW = ("demo", "scan", "verify", "graph", "build", "query", "impact", "coverage", "pyramid", "diff", "export",
            "rules", "schema")
#: the value each option takes, as help shows it (an option not here shows its name in capitals)
METAVARS = {
    "--commit": "REV", "--out": "PATH", "--db": "FILE", "--service": "ID", "--profile": "P[,Q]", "--repo-id": "ID",
    "--inventory": "FILE", "--jobs": "N", "--max-file-bytes": "BYTES", "--rules": "DIR", "--config-snapshot": "FILE",
    "--sql-dialect": "[DS=]DIALECT", "--config-dir": "DIR", "--repo": "REPO", "--format": "FORMAT",
    "--saved": "NAME", "--param": "NAME=VALUE", "--max-rows": "N", "--timeout": "SECONDS", "--max-value-chars": "N",
    "--change-type": "TYPE", "--depth": "N", "--budget": "N", "--work": "DIR", "--class": "CLASS",
    "--label": "LABEL", "--only": "TEXT", "--workdir": "DIR", "--rederive-out": "DIR",
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
# markup is off everywhere: text from a scanned repository (paths, ids, URLs) is never markup
err = Console(stderr=True, soft_wrap=True, markup=False, highlight=False)
out = Console(soft_wrap=True, markup=False, highlight=False)


def _broken_pipe() -> None:
    raise BrokenPipeError  # rich would exit 1 here, which means findings: the command wrapper says 141


out.on_broken_pipe = _broken_pipe  # type: ignore[method-assign]
stdout = out  # for the commands whose --out parameter hides the name


def _safe(value: object) -> str:
    """Text for a terminal: control characters (escape sequences …) shown as ``\\xNN``, lines kept."""
    from diting.safe_text import printable
    return printable(str(value), lines=True)


def say(console: Console, *parts: str | tuple[str, str]) -> None:
    """Print plain parts (made terminal-safe) and ``(text, style)`` parts on one line."""
    console.print(Text.assemble(*[(_safe(p[0]), p[1]) if isinstance(p, tuple) else _safe(p) for p in parts]))


def _fail(message: str, code: int = 2) -> None:
    say(err, ("error: ", "bold red"), message)
    raise typer.Exit(code)


def _answer(text: str) -> None:
    """Print an eager option's answer and end: written and flushed here, so a reader gone away is
    exit 141 and a full device exit 2, as for every command (docs/cli.md §1)."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except OSError as exc:
        _stdout_failed(exc)
    raise typer.Exit(0)


def _stdout_failed(exc: OSError) -> None:
    """End a command whose standard output failed: exit 141 when the reader went away (``| head``),
    else one message and exit 2 (a full device …); what is still buffered goes nowhere."""
    import os
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    if isinstance(exc, BrokenPipeError):
        raise typer.Exit(EXIT_BROKEN_PIPE) from None
    say(err, ("error: ", "bold red"), f"cannot write the standard output: {exc.strerror or exc}")
    raise typer.Exit(2) from None


def _version(value: bool) -> None:
    if value:
        _answer(f"diting {__version__}\n")


def _stages(value: bool) -> None:
    if value:
        from diting.scan.pipeline import stage_graph
        _answer(stage_graph())


@app.callback()
def _main(version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                                help="Show the version and exit.")] = False) -> None:
    pass


@app.command()
def scan(
    repo: Annotated[Path, typer.Argument(help="Path of the git repository (bare or working clone).")],
    commit: Annotated[str, typer.Option("--commit", help="Revision to scan; resolved once to its full SHA.")],
    out_dir: Annotated[Path, typer.Option("--out", help="Directory that receives the packages.")] = Path("ir-out"),
    service: Annotated[Optional[list[str]], typer.Option("--service", help="Only this service id (repeatable).")] = None,
    profile: Annotated[Optional[str], typer.Option("--profile", help="Spring profile set, comma-separated.")] = None,
    repo_id: Annotated[Optional[str], typer.Option("--repo-id", help="Repository id (default: origin URL).")] = None,
    inventory: Annotated[Optional[Path], typer.Option("--inventory", help="Inventory YAML naming services.")] = None,
    jobs: Annotated[int, typer.Option("--jobs", min=0, max=MAX_WORKERS,
                                      help=f"Worker processes (0: one per CPU; at most {MAX_WORKERS}).")] = 0,
    max_file_bytes: Annotated[int, typer.Option("--max-file-bytes", min=1, max=MAX_FILE_BYTES_LIMIT,
                                                help="Files larger than this are not read (FILE_TOO_LARGE; at most "
                                                     "1 GiB).")]
    = 8 * 1024 * 1024,
    rules: Annotated[Optional[list[Path]], typer.Option("--rules", help="Extra rule directory (repeatable).")] = None,
    config_snapshot: Annotated[Optional[Path], typer.Option(
        "--config-snapshot", help="JSON snapshot of a config centre (Ducc, Nacos …): first source of values.")] = None,
    sql_dialect: Annotated[Optional[list[str]], typer.Option(
        "--sql-dialect", help="SQL dialect of every datasource (postgres) or of one (trade=oracle); repeatable. "
                              "Default: each datasource's JDBC URL, else mysql.")] = None,
    config_dir: Annotated[Optional[list[str]], typer.Option(
        "--config-dir", help="Repository folder of config-centre exports (Nacos data ids); repeatable. "
                             "Default: export trees and config-centre folders.")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", help="No progress output.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
    stages: Annotated[bool, typer.Option("--stages", callback=_stages, is_eager=True,
                                         help="Print the scan's stages, what each needs and makes, and exit "
                                              "(docs/architecture.md §2).")] = False,
) -> None:
    """Scan REPO at --commit into one IR package per service (and per lib: unit; docs/scanning.md)."""
    from diting.scan.pipeline import ScanOptions
    from diting.scan.pipeline import scan as run_scan
    try:
        opts = ScanOptions(out=out_dir, services=service or [],
                           profiles=profile.split(",") if profile is not None else None,
                           repo_id=repo_id, inventory=inventory, jobs=jobs, max_file_bytes=max_file_bytes,
                           rules_dirs=rules or [], config_snapshot=config_snapshot, quiet=quiet or as_json,
                           sql_dialects=sql_dialect or [], config_dirs=config_dir or [])
        result = run_scan(repo, commit, opts)
    except UserError as exc:
        _fail(exc.message, exc.exit_code)
        return
    if result.repo_id_basis == "directory name" and not quiet and not as_json:
        say(err, f"note: repo id {result.repo_id!r} is the directory name (no origin remote with a host: none, "
                 "or a local path); pass --repo-id to name the repository")
    for spec in result.unused_sql_dialects if not as_json else []:
        say(err, f"note: --sql-dialect {spec} names a datasource no package connects to "
                 f"(datasources: {', '.join(sorted({p.sql_datasource for p in result.packages if p.sql_datasource})) or 'none known'})")
    if as_json:
        print(json.dumps({
            "repo_id": result.repo_id, "repo_id_basis": result.repo_id_basis, "commit_sha": result.commit_sha,
            "unused_sql_dialects": result.unused_sql_dialects,
            "packages": [{"service_id": p.service_id, "kind": p.kind, "path": str(p.path), "status": p.status,
                          "written": p.write_status, "scan_id": p.scan_id, "counts": p.counts,
                          "deployable_basis": p.basis, "modules": p.modules} for p in result.packages],
            "excluded_services": [{"service_id": s, "module": m} for s, m in result.excluded_services],
            "inventory_unmapped": result.inventory_unmapped,
        }, indent=2, sort_keys=True))
        return
    say(out, f"{result.repo_id} @ {result.commit_sha}: {len(result.packages)} package(s)")
    for p in result.packages:
        why = ",".join(sorted(set(p.basis))) or ("module outside every service" if p.kind == "LIB" else "-")
        say(out, f"  {p.status:<8} {p.kind:<7} {p.service_id}  [{why}]  modules={len(p.modules)} "
                 f"entities={p.counts.get('entities', 0)} relations={p.counts.get('relations', 0)} "
                 f"errors={p.counts.get('errors', 0)} warnings={p.counts.get('warnings', 0)}")
        say(out, f"           → {p.path} ({p.write_status})")
    for s, m in result.excluded_services:
        say(out, f"excluded by the inventory: {s} ({m})")
    for s in result.inventory_unmapped:
        say(out, f"inventory service without a module here: {s}")


@app.command()
def verify(
    packages: Annotated[list[Path], typer.Argument(help="Package directories to verify.")],
    repo: Annotated[Optional[Path], typer.Option("--repo", help="Re-read every segment from this repository.")] = None,
    deep: Annotated[bool, typer.Option("--deep", help="Check every record, not only files and counts.")] = False,
    rederive: Annotated[bool, typer.Option("--rederive", help="Scan each package's commit again (needs --repo) with "
                                                             "its recorded options and compare byte for byte: catches "
                                                             "any edit, re-hashed or not.")] = False,
    rules: Annotated[Optional[list[Path]], typer.Option("--rules", help="With --rederive: the extra rule directories "
                                                                        "of the scan (repeatable).")] = None,
    inventory: Annotated[Optional[Path], typer.Option("--inventory", help="With --rederive: the scan's inventory "
                                                                          "file.")] = None,
    config_snapshot: Annotated[Optional[Path], typer.Option("--config-snapshot", help="With --rederive: the scan's "
                                                                                      "config snapshot.")] = None,
    jobs: Annotated[int, typer.Option("--jobs", min=0, max=MAX_WORKERS,
                                      help="Worker processes for the record checks and the re-derivation (0: one "
                                           "per CPU).")] = 0,
    rederive_repo_id: Annotated[Optional[str], typer.Option("--repo-id", help="With --rederive: the repository id "
                                                                           "the scan was given (default: the "
                                                                           "repository's origin URL, else its "
                                                                           "directory name).")] = None,
    rederive_out: Annotated[Optional[Path], typer.Option("--rederive-out", help="With --rederive: keep the packages "
                                                                                "made again here (to 'diting diff' "
                                                                                "them).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print findings as JSON.")] = False,
) -> None:
    """Verify IR packages: manifest, checksums and counts; --deep every record; --repo every segment;
    --rederive a new scan compared byte for byte (docs/ir.md, "Verifying a package")."""
    from diting.ir.writer import package_dirs
    from diting.ir.verify import verify_packages
    if rederive and repo is None:
        _fail("--rederive scans the package's commit again: give the repository with --repo")
    if not rederive and (rules or inventory or config_snapshot or rederive_out or rederive_repo_id is not None):
        _fail("--rules, --inventory, --config-snapshot, --repo-id and --rederive-out go with --rederive")
    total = 0
    report = []
    try:
        deep = deep or repo is not None  # each level includes the ones before it (docs/ir.md)
        dirs = package_dirs(packages)
        if not dirs:
            _fail("no IR package under " + ", ".join(str(p) for p in packages))
        found = dict(zip(dirs, verify_packages(dirs, deep=deep, repo=repo, jobs=jobs), strict=True))
        if rederive:
            from diting.scan.rederive import RederiveInputs
            from diting.scan.rederive import rederive as rederive_packages
            again = rederive_packages([p for p, f in found.items() if not f], RederiveInputs(
                repo, rules or [], inventory, config_snapshot, jobs, rederive_repo_id), keep=rederive_out)
            for pkg, findings in again.items():
                found[pkg] = findings
        for pkg, findings in found.items():
            total += len(findings)
            report.append({"package": str(pkg), "valid": not findings,
                           "findings": [f.as_dict() for f in findings]})
            if not as_json:
                if findings:
                    say(out, ("INVALID", "red"), f" {pkg}: {len(findings)} finding(s)")
                    for f in findings[:200]:
                        say(out, f"  {f}")
                    if len(findings) > 200:
                        say(out, f"  … and {len(findings) - 200} more")
                else:
                    say(out, ("valid", "green"), f" {pkg}" + (" (deep)" if deep else "")
                        + (" (segments re-read)" if repo else "") + (" (re-derived: byte-identical)" if rederive
                                                                     else ""))
    except UserError as exc:
        _fail(exc.message, exc.exit_code)
    if as_json:
        print(json.dumps(report, indent=2, sort_keys=True))
    raise typer.Exit(1 if total else 0)


graph_app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False, cls=_Workflow,
                        rich_markup_mode=None,
                         help="The cross-service relation graph in DuckDB.")
app.add_typer(graph_app, name="graph")


@graph_app.command("build")
def graph_build(
    packages: Annotated[list[Path], typer.Argument(help="Package directories, or directories of packages.")],
    db: Annotated[Path, typer.Option("--db", help="The DuckDB database file (created when missing).")],
    replace: Annotated[bool, typer.Option("--replace", help="Replace a current package of the same service.")] = False,
    label: Annotated[str, typer.Option("--label", help="Load beside the current packages (a gray version).")] = "",
    fast: Annotated[bool, typer.Option("--fast", help="Check manifests, files and digests only, not every record "
                                                     "(trust packages you made yourself).")] = False,
    deep: Annotated[bool, typer.Option("--deep", hidden=True, help="Every record is checked by default now.")]
    = False,
) -> None:
    """Verify packages (every record, unless --fast) and load them into the graph database (one
    transaction: all or nothing), aligned across services (docs/graph.md §1)."""
    from diting.graph.store import build
    from diting.interrupts import CommitGate
    with CommitGate() as gate:  # interrupted before the commit: rolled back; after it: finished and said
        try:
            if fast and deep:
                _fail("--fast skips the record checks --deep asks for: give one of them")
            result = build(db, packages, replace=replace, label=label, deep=not fast, gate=gate)
        except UserError as exc:
            _fail(exc.message, exc.exit_code)
        say(out, f"loaded {len(result.loaded)}, already current {len(result.unchanged)}, "
                 f"replaced {len(result.replaced)} package(s) into {db}"
                 + (f" ({result.duplicates} duplicate cop{'y' if result.duplicates == 1 else 'ies'} of a package "
                    "named twice skipped)" if result.duplicates else ""))
        say(out, result.alignment_summary())
    if gate.late is not None:
        say(err, "note: interrupted after the commit point: the build completed and is committed")


@app.command()
def query(
    sql: Annotated[Optional[str], typer.Argument(help="The SQL to run (read-only); $name marks a parameter.")] = None,
    db: Annotated[Optional[Path], typer.Option("--db", help="The graph database built by 'diting graph build' "
                                                      "(required, except with --saved list).")] = None,
    fmt: Annotated[str, typer.Option("--format", help="table, json or csv.")] = "table",
    saved: Annotated[Optional[str], typer.Option("--saved", help="Run a canned query by name ('--saved list' "
                                                                 "lists them).")] = None,
    param: Annotated[Optional[list[str]], typer.Option("--param", help="NAME=VALUE for a $NAME parameter "
                                                                       "(repeatable).")] = None,
    max_rows: Annotated[int, typer.Option("--max-rows", min=1, max=MAX_QUERY_ROWS,
                                          help=f"Print at most this many rows (default {DEFAULT_MAX_ROWS:,}); more "
                                               "are cut, with a note on stderr (exit 0).")] = DEFAULT_MAX_ROWS,
    timeout: Annotated[int, typer.Option("--timeout", min=1, max=MAX_QUERY_TIMEOUT,
                                         help=f"Seconds a query may run (default {DEFAULT_QUERY_TIMEOUT}); a longer "
                                              "one is stopped and nothing is printed (exit 2).")]
    = DEFAULT_QUERY_TIMEOUT,
    max_value_chars: Annotated[int, typer.Option("--max-value-chars", min=1, max=MAX_VALUE_CHARS_LIMIT,
                                                 help=f"Characters of one text value printed at most (default "
                                                      f"{DEFAULT_MAX_VALUE_CHARS:,}); a longer one is cut, ending in "
                                                      "'… (N more characters)', with a note on stderr.")]
    = DEFAULT_MAX_VALUE_CHARS,
) -> None:
    """Run SQL, or a canned query, on the graph database over a read-only connection, within
    --max-rows, --timeout and --max-value-chars (docs/graph.md §6)."""
    import csv
    import io
    from diting.demo import format_table
    from diting.safe_text import json_text, printable
    from diting.graph.query import QueryLimits, run_query, saved_queries
    if fmt not in ("table", "json", "csv"):
        _fail(f"--format must be table, json or csv, not {fmt!r}")
    if saved is not None:
        known = saved_queries()
        if saved == "list" or saved not in known:
            if saved != "list":
                import difflib
                near = difflib.get_close_matches(saved, known, n=1)
                say(err, f"error: no canned query {saved!r}" + (f" (did you mean {near[0]}?)" if near else "")
                    + "; these exist:")
            for q in known.values():
                print(f"{q.name:<24} {q.description}" + (f"  (--param {' --param '.join(p + '=…' for p in q.params)})"
                                                         if q.params else ""))
            raise typer.Exit(0 if saved == "list" else 2)
        if sql is not None:
            _fail("give either SQL or --saved NAME, not both")
        sql = known[saved].sql
    if sql is None:
        _fail("give the SQL to run, or --saved NAME ('--saved list' lists the canned queries)")
    if db is None:
        _fail("--db FILE is required (the database 'diting graph build' wrote)")
    params: dict[str, str] = {}
    for p in param or []:
        name, eq, value = p.partition("=")
        if not eq or not name.strip():
            _fail(f"--param takes NAME=VALUE, not {p!r}")
        params[name.strip().lstrip("$")] = value
    try:
        if saved is not None:  # a name written without its scheme, or with the @datasource findings print
            from diting.graph.query import resolve_params
            params, notes = resolve_params(db, known[saved].names, params)
            for note in notes:
                say(err, f"note: {note}")
        got = run_query(db, sql, params or None, QueryLimits(max_rows, timeout, max_value_chars))
    except UserError as exc:
        _fail(exc.message, exc.exit_code)
    headers, rows = got.headers, got.rows
    if fmt == "json":
        print(json_text([dict(zip(headers, r, strict=True)) for r in rows], default=str, indent=1))
    elif fmt == "csv":  # csv quotes a value holding a newline; any other control character is escaped
        buf = io.StringIO()
        w = csv.writer(buf)
        w.writerow([printable(str(h), lines=True) for h in headers])
        w.writerows([["" if v is None else printable(str(v), lines=True) for v in r] for r in rows])
        sys.stdout.write(buf.getvalue())
    else:
        for line in format_table([printable(str(h)) for h in headers],
                                 [["-" if v is None else printable(str(v)) for v in r] for r in rows], indent=""):
            print(line)
    if got.truncated:
        say(err, f"note: the query returned more than {max_rows:,} rows; the first {max_rows:,} are printed "
                 "(--max-rows)")
    if got.cut_values:
        say(err, f"note: {got.cut_values:,} value(s) longer than {max_value_chars:,} characters (bytes of a BLOB) are "
                 "cut, each ending in '… (N more characters)' (--max-value-chars)")


@app.command()
def impact(
    target: Annotated[str, typer.Argument(help="A contract, topic, table or config key urn, or a method stable_id.")],
    db: Annotated[Path, typer.Option("--db", help="The graph database built by 'diting graph build'.")],
    change_type: Annotated[str, typer.Option("--change-type", help="LOGIC, FIELD, STATE, TABLE_FIELD or CONFIG.")],
    depth: Annotated[int, typer.Option("--depth", min=MIN_IMPACT_DEPTH, max=MAX_IMPACT_DEPTH,
                                       help="Cross-service hops to follow (1..3).")] = 2,
    budget: Annotated[int, typer.Option("--budget", min=1, max=MAX_IMPACT_BUDGET,
                                        help=f"Walk states to expand at most (1..{MAX_IMPACT_BUDGET:,}).")] = 20_000,
    fmt: Annotated[str, typer.Option("--format", help="table or json.")] = "table",
    potential: Annotated[bool, typer.Option("--potential", help="List the POTENTIAL and DEPENDENCY_ONLY items too, "
                                            "ranked (the table; JSON always lists every item).")] = False,
) -> None:
    """What a change to TARGET may reach: the SUPPORTED items, each with why it is reached and where the
    evidence stands (POTENTIAL ones counted, listed with --potential), the frontier a limit left, and
    whether the enumeration is complete (docs/graph.md §8)."""
    from diting.graph.impact import impact as run_impact, render_table, to_json
    from diting.graph.store import with_graph
    if fmt not in ("table", "json"):
        _fail(f"--format must be table or json, not {fmt!r}")
    try:
        result = with_graph(db, lambda con: run_impact(con, target, change_type.upper(), depth=depth, budget=budget))
    except UserError as exc:
        _fail(exc.message, exc.exit_code)
    print(to_json(result) if fmt == "json" else "\n".join(_safe(line) for line in render_table(result, potential).splitlines()))


@app.command("diff")
def diff_cmd(
    old: Annotated[str, typer.Argument(help="The older package directory, or A..B with --repo.")],
    new: Annotated[Optional[Path], typer.Argument(help="The newer package directory (the same service).")] = None,
    repo: Annotated[Optional[Path], typer.Option("--repo", help="The repository, to relate the two commits.")] = None,
    db: Annotated[Optional[Path], typer.Option("--db", help="A graph database: which other services depend on "
                                                          "what was removed or changed.")] = None,
    work: Annotated[Path, typer.Option("--work", help="Where A..B scans are kept (and reused).")] = Path("diting-diff"),
    repo_id: Annotated[Optional[str], typer.Option("--repo-id", help="Repository id for A..B scans.")] = None,
    fmt: Annotated[str, typer.Option("--format", help="table, json or md.")] = "table",
    classes: Annotated[Optional[list[str]], typer.Option("--class", help="List only this change class "
                                                                         "(repeatable).")] = None,
    services: Annotated[Optional[list[str]], typer.Option("--service", help="Only this service (repeatable).")]
    = None,
    show_all: Annotated[bool, typer.Option("--all", help="Also list OTHER and EVIDENCE_MOVED (always counted; "
                                                         "JSON lists them anyway).")] = False,
) -> None:
    """Compare two packages of one service by stable_id, or every service between two commits
    (A..B with --repo): each change once, by its most specific class (docs/diff.md). Exit 0 no change
    (of --class, --service), 1 changes, 2 error."""
    from diting.diff.report import (check_classes, diff, narrow, narrow_range, range_markdown, range_table,
                                    to_json, to_markdown, to_table)
    if fmt not in ("table", "json", "md"):
        _fail(f"--format must be table, json or md, not {fmt!r}")
    show_all = show_all or fmt == "json"  # the JSON is complete unless --class narrows it
    try:
        wanted = check_classes(classes or [])
        if new is None:
            if repo is None or ".." not in old:
                _fail("give two package directories, or --repo REPO and a range A..B")
            from diting.diff.commits import diff_range
            doc = narrow_range(diff_range(repo, old, work, db, repo_id), wanted, services, show_all)
            changed = any(narrow(r, wanted, True)["changes"] for r in doc["services"]) or doc["only_old"] or \
                doc["only_new"]
            sys.stdout.write({"json": to_json, "md": range_markdown, "table": range_table}[fmt](doc))
            raise typer.Exit(1 if changed else 0)
        doc = diff(Path(old), new, repo, db)
        if services and doc["service_id"] not in services:
            raise UserError(f"--service: the packages are of {doc['service_id']}, not {', '.join(services)}")
    except UserError as exc:
        _fail(exc.message, exc.exit_code)
    sys.stdout.write({"json": to_json, "md": to_markdown, "table": to_table}[fmt](narrow(doc, wanted, show_all)))
    raise typer.Exit(1 if narrow(doc, wanted, True)["changes"] else 0)


@app.command("coverage")
def coverage_cmd(
    packages: Annotated[Optional[list[Path]], typer.Argument(help="IR package directories (or directories holding "
                                                                  "packages).")] = None,
    db: Annotated[Optional[Path], typer.Option("--db", help="A graph database: the report also counts applications "
                                                          "and cross-service edges.")] = None,
    inventory: Annotated[Optional[Path], typer.Option("--inventory", help="Inventory file (YAML services [...]): "
                                                                        "the application denominator.")] = None,
    fmt: Annotated[str, typer.Option("--format", help="table, json, md or html.")] = "table",
    out: Annotated[Path, typer.Option("--out", help="File to write ('-' for standard output).")] = Path("-"),
    fast: Annotated[bool, typer.Option("--fast", help="Packages: check manifests, files and digests only, not every "
                                                     "record.")] = False,
) -> None:
    """Coverage per dimension (docs/coverage.md) of packages, or of a graph with applications (against an
    inventory) and cross-service edges; catalogue differences; unresolved items by kind."""
    from diting.coverage.render import RENDERERS
    from diting.coverage.report import coverage_of_graph, coverage_of_packages
    if fmt not in RENDERERS:
        _fail(f"--format must be one of {', '.join(RENDERERS)}, not {fmt!r}")
    if bool(packages) == (db is not None):
        _fail("give package directories or --db FILE (one of the two)")
    if fast and db is not None:
        _fail("--fast skips the record checks of packages; a graph (--db) was checked when it was built")
    try:
        doc = coverage_of_graph(db, inventory) if db is not None else coverage_of_packages(packages, inventory, deep=not fast)
        text = RENDERERS[fmt](doc)
        if str(out) == "-":
            sys.stdout.write(text)
        else:
            from diting.graph.export import write_text_atomic
            write_text_atomic(out, text)
            say(err, f"wrote {out}")
    except UserError as exc:
        _fail(exc.message, exc.exit_code)


@app.command("pyramid")
def pyramid_cmd(
    db: Annotated[Path, typer.Option("--db", help="The graph database built by 'diting graph build'.")],
    out: Annotated[Optional[Path], typer.Option("--out", help="Directory for the JSON and Markdown pages (replaced "
                                                            "when it is a former pyramid output).")] = None,
) -> None:
    """L2 entry cards, L3 service profiles and L4 flows from the graph (docs/pyramid.md): stored in the graph's
    pyramid tables, and written as one page per service and an index under --out."""
    from diting.pyramid.build import build_pyramid
    try:
        p = build_pyramid(db, out)
    except UserError as exc:
        _fail(exc.message, exc.exit_code)
    say(stdout, f"{len(p.profiles)} service profile(s), {len(p.cards)} entry card(s) "
             f"({sum(1 for c in p.cards if c['complete'])} complete), {len(p.rules)} business rule(s), "
             f"{len(p.flows)} flow(s) with {len(p.steps)} step(s) in {db}" + (f"; pages in {out}" if out else ""))


@app.command("export")
def export_cmd(
    db: Annotated[Path, typer.Option("--db", help="The graph database built by 'diting graph build'.")],
    fmt: Annotated[str, typer.Option("--format", help="parquet, graphml, dot or mermaid.")],
    out: Annotated[Path, typer.Option("--out", help="Directory (parquet: new, empty or a former export) or file ('-' for stdout).")] = Path("-"),
    service: Annotated[Optional[str], typer.Option("--service", help="Only this service and its edges.")] = None,
) -> None:
    """Export every table as Parquet, or the service graph as GraphML, DOT or Mermaid (docs/graph.md §9)."""
    from diting.graph.export import export
    from diting.graph.store import with_graph
    if fmt == "parquet" and str(out) == "-":
        _fail("--format parquet writes a directory: give --out DIR")
    try:
        written = with_graph(db, lambda con: export(con, fmt, out, service))
    except UserError as exc:
        _fail(exc.message, exc.exit_code)
    if written:
        say(err, f"wrote {len(written)} file(s) to {out}")


@app.command()
def schema(out_dir: Annotated[Path, typer.Option("--out", help="Directory for the JSON Schemas.")]) -> None:
    """Export the JSON Schemas of every IR record kind."""
    from diting.ir.schema_export import export_schemas
    try:
        written = export_schemas(out_dir)
    except UserError as exc:
        _fail(exc.message, exc.exit_code)
        return
    except OSError as exc:
        _fail(f"cannot write schemas into {out_dir}: {exc.strerror or exc}")
        return
    for p in written:
        say(out, str(p))


@app.command()
def rules(
    rules_dirs: Annotated[Optional[list[Path]], typer.Option("--rules", help="Rule directory to check (repeatable).")]
    = None,
    only: Annotated[Optional[str], typer.Option("--only", help="Only rules whose id contains this text.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the results as JSON.")] = False,
) -> None:
    """Validate rule files against the rule schema and run their samples (docs/rules.md §6).

    With --rules, the rules of those directories are checked (with the shipped rules loaded
    too, as a scan would); without, every shipped rule is."""
    from diting.probes.samples import run_rule_samples
    from diting.rules import load_rules
    try:
        rs = load_rules(rules_dirs or [])
    except UserError as exc:
        _fail(exc.message, exc.exit_code)
        return
    pool = rs.from_dirs(rules_dirs) if rules_dirs else [r for _, r in sorted(rs.by_id.items())]
    chosen = [r for r in pool if not only or only in r.id]
    results = run_rule_samples(chosen, rules_dirs or [])
    failed = [r for r in results if not r.passed]
    without = [r.id for r in chosen if not r.samples]
    if as_json:
        print(json.dumps({"rules": len(chosen), "samples": len(results), "failed": [
            {"rule": r.rule_id, "sample": r.index, "form": r.form, "failures": r.failures} for r in failed],
            "rules_without_samples": without}, indent=2, sort_keys=True))
    else:
        for r in failed:
            say(out, ("FAIL ", "bold red"), f"{r.rule_id} sample #{r.index} ({r.form})")
            for f in r.failures:
                say(out, "     ", f[:2000])
        for rid in without:
            say(out, ("note ", "yellow"), f"{rid} has no samples")
        say(out, f"{len(chosen)} rule(s), {len(results)} sample(s), ",
            (f"{len(failed)} failed", "bold red") if failed else ("all passed", "green"))
    raise typer.Exit(1 if failed else 0)


@app.command()
def demo(
    workdir: Annotated[Path, typer.Option("--workdir", help="Directory for the fixture repository and packages.")]
    = Path("diting-demo"),
) -> None:
    """The whole job on the bundled fixture estate (six services of order, payment, stock,
    fulfillment and promotion in one repository), in nine printed steps and a tenth of what to try next: 1 build it into a git repository; 2 scan it into
    packages; 3 verify every package (--deep, segments re-read); 4 what each package holds; 5 its
    coverage; 6 example SQL over the package files, with the answers; 7 the relation graph, aligned
    across services; 8 the estate's coverage over the graph; 9 the pyramid (entry cards, service
    profiles, flows). Everything is written under --workdir, to look at or query afterwards."""
    from diting import demo as d
    try:
        with d.DemoLock(workdir):
            repo, ir, bad = _demo_run(d, workdir)
    except UserError as exc:
        _fail(exc.message, exc.exit_code)
        return
    import shlex
    qdir = workdir / "queries"
    exe = Path(sys.executable).parent / "diting"
    cmd = shlex.quote(str(exe)) if exe.is_file() else "diting"
    db = shlex.quote(str(workdir / "graph.duckdb"))
    say(out, "10. try next:")
    say(out, f"   {cmd} verify --deep --repo {shlex.quote(str(repo))} {shlex.quote(str(ir))}/*"
             "      # check the packages yourself")
    say(out, f"   {cmd} query --db {db} --saved list                 # canned questions over the graph")
    say(out, f"   {cmd} impact --db {db} jsf://com.jd.trade.stock.api.StockReserveService#reserve "
             "--change-type FIELD   # what a payload change reaches")
    say(out, f"   {cmd} export --db {db} --format mermaid            # the service graph as a diagram")
    say(out, f"   {cmd} coverage --db {db} --format md               # the estate's coverage as Markdown")
    say(out, f"   {shlex.quote(sys.executable)} -c \"import duckdb,sys; print(duckdb.sql(open(sys.argv[1]).read()))\" "
             f"{shlex.quote(str(qdir / 'topics.sql'))}   # rerun or edit a query")
    say(out, f"   {cmd} scan path/to/your/repo --commit HEAD --out ir-out/   # scan your own estate")
    say(out, f"   {cmd} rules --only jmq                 # check the JMQ rules (rules/jmq.yaml) against their samples")
    raise typer.Exit(1 if bad else 0)


def _demo_run(d, workdir: Path):
    """Steps 1-9 of ``diting demo`` (build, scan, verify, summarise, coverage, queries, graph, estate
    coverage, pyramid), inside the demo lock: ``(repository, package directory, verify findings)``. Raises :class:`UserError`."""
    from diting.ir.verify import verify_package
    from diting.scan.pipeline import ScanOptions
    from diting.scan.pipeline import scan as run_scan
    d.prepare_workdir(workdir)
    repo = workdir / "estate-repo"
    sha = d.build_fixture_repo(repo)
    say(out, f"1. built the fixture estate (order, payment, stock, fulfillment, promotion) into {repo} "
             f"at commit {sha}")
    ir = workdir / "ir"
    result = run_scan(repo, sha, ScanOptions(out=ir, repo_id="fixtures/estate", quiet=True))
    services = sum(1 for p in result.packages if p.kind == "SERVICE")
    say(out, f"2. scanned it: {len(result.packages)} packages under {ir} ({services} services, "
             f"{len(result.packages) - services} for modules outside every service)")
    bad = 0
    for p in result.packages:
        findings = verify_package(p.path, deep=True, repo=repo)
        bad += len(findings)
        for f in findings[:20]:
            say(out, f"   INVALID {p.service_id}: {f}")
    say(out, "3. verified every package (--deep, segments re-read from the repository): "
             f"{'all valid' if not bad else f'{bad} finding(s)'}")
    say(out, "4. what each package holds (unknowns: diagnostics above INFO):")
    for line in d.format_table(*d.package_rows(result.packages)):
        say(out, line)
    for p in result.packages:
        for diag in d.read_jsonl(p.path / "diagnostics.jsonl"):
            if diag["severity"] == "ERROR":
                say(out, f"   why {p.service_id} is {p.status}: {diag['code']}: {diag['message']}")
    headers, rows, not_examined = d.coverage_rows(result.packages)
    say(out, "5. coverage (resolved/discovered per dimension, from each package's coverage.json):")
    for line in d.format_table(headers, rows):
        say(out, line)
    for line in not_examined:
        say(out, f"   not examined yet — {line}")
    qdir = workdir / "queries"
    qdir.mkdir()
    say(out, f"6. example queries: DuckDB SQL over the package files (saved in {qdir}):")
    answers = {}
    for name, question, sql in d.example_queries(ir):
        (qdir / f"{name}.sql").write_text(sql + "\n", encoding="utf-8")
        say(out, f"   Q: {question}  [{name}.sql]")
        answers[name] = d.run_query(sql)
        for line in d.format_table(*answers[name], indent="      "):
            say(out, line)
    headers, rows = answers["unresolved_sends"]
    wrappers = sum(1 for r in rows if r[headers.index("topic_parameter")] != "-")
    say(out, "   A topic without a publisher above is published outside these packages. A send inside a wrapper "
             f"method that takes the topic as a parameter ({wrappers} among the unresolved ones) stays unresolved "
             "in the wrapper's own body; each caller the call graph resolves publishes the topic it passes "
             "(attribute via_wrapper) and appears as a publisher above. Calls on a wrapper bean resolve through "
             "the bean's configured topic.")
    from diting.graph.store import build
    from diting.graph.query import query
    db = workdir / "graph.duckdb"
    loaded = build(db, [ir])
    say(out, f"7. the relation graph: {len(loaded.loaded)} packages loaded into {db} and aligned across services "
             f"({loaded.alignment_summary()})")
    for sql in ("SELECT src_service, dst_service, edge_kind, resolved, ambiguous, unresolved FROM service_dependencies "
                "ORDER BY src_service NULLS LAST, dst_service NULLS LAST, edge_kind",
                "SELECT code, coalesce(service_id, '-') AS service, urn, message FROM graph_findings "
                "WHERE code <> 'ORPHAN_ENTRY' ORDER BY ALL"):
        headers, rows = query(db, sql)
        for line in d.format_table(headers, [["-" if v is None else str(v) for v in r] for r in rows]):
            say(out, line)
    from diting.coverage.render import COLUMNS, RATIO, ratio, to_html
    from diting.coverage.report import coverage_of_graph
    from diting.graph.export import write_text_atomic
    report = coverage_of_graph(db)
    page = workdir / "coverage.html"
    write_text_atomic(page, to_html(report))
    say(out, f"8. coverage of the estate over the graph (applications and cross-service edges filled; the "
             f"full report with charts: {page}):")
    rows = [[name, *(str(dim[c]) for c in COLUMNS), ratio(dim)] for name, dim in report["dimensions"].items()]
    for line in d.format_table(["dimension", *COLUMNS, RATIO], rows):
        say(out, line)
    from diting.pyramid.build import build_pyramid
    pages = workdir / "pyramid"
    p = build_pyramid(db, pages)
    say(out, f"9. the pyramid: {len(p.cards)} entry cards ({sum(1 for c in p.cards if c['complete'])} complete), "
             f"{len(p.rules)} static business rules, {len(p.profiles)} service profiles and {len(p.flows)} flows, "
             f"every sentence citing its records (pages: {pages / 'index.md'}):")
    rows = [[prof["service_id"], str(len(prof["entries"])),
             str(sum(1 for f in p.flows if f["root_service_id"] == prof["service_id"] and f["hop_count"])),
             ", ".join(sorted({g["code"] for g in prof["gaps"]})) or "-"] for prof in p.profiles]
    for line in d.format_table(["service", "entries", "flows into other services", "gaps"], rows):
        say(out, line)
    return repo, ir, bad


#: the exit code when standard output is closed before everything was written (128 + SIGPIPE, as a
#: shell reports a process a closed pipe ended): never 1, which means findings
EXIT_BROKEN_PIPE = 141
#: seconds between Ctrl-C and a forced exit, when the interrupted work does not stop by itself
INTERRUPT_GRACE_SECONDS = 10


def run(pending: list[int] | None = None) -> None:
    """The command line (:mod:`diting.cli.entry` calls it). An unexpected failure is one line (exit 3),
    never a traceback, unless ``DITING_DEBUG=1``. ``pending``: the signals held while the command line
    was imported; the first of them interrupts the command as soon as its handlers are in place."""
    import os
    import signal
    import threading

    from diting.interrupts import ignore_interrupts, say_interrupted
    main_pid = os.getpid()
    signalled: list[int] = []  # the interrupts the main process took: what follows them is their doing

    def on_sigint(signum: int, frame: object) -> None:
        # SIGINT and SIGTERM alike; typer turns Ctrl-C into a silent exit 130 before the handler below sees it: say it here
        # (once, from the main process; workers share the process group). It imports nothing: the
        # signal may come while a module is half-imported
        if os.getpid() == main_pid:
            signalled.append(signum)
            say_interrupted()
            # a query DuckDB cannot cancel (its executor can spin) must not keep the process alive: an
            # unfinished graph transaction is discarded when the database is next opened, and package
            # writes are atomic, so leaving after a grace period loses nothing written
            watchdog = threading.Timer(INTERRUPT_GRACE_SECONDS, os._exit, [130])
            watchdog.daemon = True
            watchdog.start()
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, signal.default_int_handler)
        raise KeyboardInterrupt

    # worker pools register their semaphores with multiprocessing's resource tracker, which warns on
    # stderr about "leaked" ones when this process is killed (-9) — it cleans them up all the same;
    # it is started with this process's warning options
    sys.warnoptions.append("ignore::UserWarning:multiprocessing.resource_tracker")
    for group in (app, graph_app):
        for cmd in group.registered_commands:
            if cmd.callback is not None and not hasattr(cmd.callback, "__wrapped__"):
                cmd.callback = _ends_interruptible(cmd.callback)
    signal.signal(signal.SIGINT, on_sigint)
    signal.signal(signal.SIGTERM, on_sigint)  # kill, a service manager, a timeout: ended as Ctrl-C is
    try:
        if pending:  # a signal came while the command line was being imported (diting.cli.entry)
            on_sigint(pending[0], None)
        app()
    except KeyboardInterrupt:
        sys.exit(130)
    except SystemExit as exc:
        # an interrupt some library swallowed ("Exception ignored in …") after "interrupted" was said:
        # the command did not end as asked, and says so by its code
        if signalled and exc.code in (0, None):
            sys.exit(130)
        raise
    except Exception as exc:  # noqa: BLE001 - the last line of defence
        if signalled:  # a failure an interrupt caused (DuckDB's "Query interrupted" outside a query …)
            sys.exit(130)
        if os.environ.get("DITING_DEBUG") == "1":
            raise
        say(err, ("internal error: ", "bold red"), f"{type(exc).__name__}: {exc} (run with DITING_DEBUG=1 for "
            "details; please report it)")
        sys.exit(3)
    finally:  # the exit code is decided: the interpreter's shutdown must not end in a death by signal
        ignore_interrupts()


def _ends_interruptible(callback):
    """``callback`` (a command), after whose return — or exit with a code of its own — SIGINT and
    SIGTERM are ignored: the work is done and printed, and a signal now would only turn the
    command's exit code into a death by signal. An interrupt during the work still ends it
    ("interrupted", exit 130)."""
    import functools
    from diting.interrupts import ignore_interrupts

    @functools.wraps(callback)
    def command(*args, **kwargs):
        try:
            try:
                result = callback(*args, **kwargs)
            finally:
                sys.stdout.flush()  # here, so a reader gone away is seen as that (below)
        except (typer.Exit, SystemExit):
            ignore_interrupts()
            raise
        except BrokenPipeError as exc:  # the reader went away (| head): not a finding, not an error of ours
            ignore_interrupts()
            _stdout_failed(exc)
        except OSError as exc:
            # writing the standard output (no file name) to a full or failing device
            if exc.filename is not None or exc.errno not in (errno.ENOSPC, errno.EIO, errno.EFBIG, errno.EDQUOT):
                raise
            ignore_interrupts()
            _stdout_failed(exc)
        ignore_interrupts()
        return result
    return command


if __name__ == "__main__":  # pragma: no cover
    run()
