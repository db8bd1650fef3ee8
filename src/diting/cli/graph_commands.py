"""The commands over the graph database: ``graph build`` (packages into it), ``query``, ``impact``,
``coverage`` (of the graph, or of packages), ``pyramid`` and ``export``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from diting.cli.app import app, graph_app
from diting.cli.common import err, fail, out, say, stdout, terminal_safe
from diting.errors import UserError
from diting.limits import (DEFAULT_MAX_ROWS, DEFAULT_MAX_VALUE_CHARS, DEFAULT_QUERY_TIMEOUT, MAX_IMPACT_BUDGET,
                           MAX_IMPACT_DEPTH, MAX_QUERY_ROWS, MAX_QUERY_TIMEOUT, MAX_VALUE_CHARS_LIMIT,
                           MIN_IMPACT_DEPTH)


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
                fail("--fast skips the record checks --deep asks for: give one of them")
            result = build(db, packages, replace=replace, label=label, deep=not fast, gate=gate)
        except UserError as exc:
            fail(exc.message, exc.exit_code)
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
    from diting.graph.query import QueryLimits, run_query, saved_queries
    if fmt not in ("table", "json", "csv"):
        fail(f"--format must be table, json or csv, not {fmt!r}")
    if saved is not None:
        known = saved_queries()
        if saved == "list" or saved not in known:
            if saved != "list":
                import difflib
                near = difflib.get_close_matches(saved, known, n=1)
                say(err, f"error: no canned query {saved!r}" + (f" (did you mean {near[0]}?)" if near else "")
                    + "; these exist:")
            listing = sys.stdout if saved == "list" else sys.stderr  # an error's list goes with the error
            for q in known.values():
                print(f"{q.name:<24} {q.description}" + (f"  (--param {' --param '.join(p + '=…' for p in q.params)})"
                                                         if q.params else ""), file=listing)
            raise typer.Exit(0 if saved == "list" else 2)
        if sql is not None:
            fail("give either SQL or --saved NAME, not both")
        sql = known[saved].sql
    if sql is None:
        fail("give the SQL to run, or --saved NAME ('--saved list' lists the canned queries)")
    if db is None:
        fail("--db FILE is required (the database 'diting graph build' wrote)")
    params: dict[str, str] = {}
    for p in param or []:
        name, eq, value = p.partition("=")
        if not eq or not name.strip():
            fail(f"--param takes NAME=VALUE, not {p!r}")
        params[name.strip().lstrip("$")] = value
    try:
        if saved is not None:  # a name written without its scheme, or with the @datasource findings print
            from diting.graph.query import resolve_params
            params, notes = resolve_params(db, known[saved].names, params)
            for note in notes:
                say(err, f"note: {note}")
        got = run_query(db, sql, params or None, QueryLimits(max_rows, timeout, max_value_chars))
    except UserError as exc:
        fail(exc.message, exc.exit_code)
    _print_rows(fmt, got.headers, got.rows)
    if got.truncated:
        say(err, f"note: the query returned more than {max_rows:,} rows; the first {max_rows:,} are printed "
                 "(--max-rows)")
    if got.cut_values:
        say(err, f"note: {got.cut_values:,} value(s) longer than {max_value_chars:,} characters (bytes of a BLOB) are "
                 "cut, each ending in '… (N more characters)' (--max-value-chars)")


def _print_rows(fmt: str, headers: list, rows: list) -> None:
    """A query's answer on stdout as ``fmt`` (table, json or csv), every value made terminal-safe."""
    import csv
    import io
    from diting.demo import format_table
    from diting.safe_text import json_text, printable
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
        fail(f"--format must be table or json, not {fmt!r}")
    try:
        result = with_graph(db, lambda con: run_impact(con, target, change_type.upper(), depth=depth, budget=budget))
    except UserError as exc:
        fail(exc.message, exc.exit_code)
    print(to_json(result) if fmt == "json"
          else "\n".join(terminal_safe(line) for line in render_table(result, potential).splitlines()))


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
        fail(f"--format must be one of {', '.join(RENDERERS)}, not {fmt!r}")
    if bool(packages) == (db is not None):
        fail("give package directories or --db FILE (one of the two)")
    if fast and db is not None:
        fail("--fast skips the record checks of packages; a graph (--db) was checked when it was built")
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
        fail(exc.message, exc.exit_code)


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
        fail(exc.message, exc.exit_code)
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
        fail("--format parquet writes a directory: give --out DIR")
    try:
        written = with_graph(db, lambda con: export(con, fmt, out, service))
    except UserError as exc:
        fail(exc.message, exc.exit_code)
    if written:
        say(err, f"wrote {len(written)} file(s) to {out}")
