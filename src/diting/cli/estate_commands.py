"""``diting estate scan`` and ``diting estate graph``: many repositories at once (docs/estates.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Optional

import typer

from diting.cli.app import estate_app
from diting.cli.common import err, fail, out, say, scan_cache
from diting.errors import UserError
from diting.limits import MAX_WORKERS


@estate_app.command("scan")
def estate_scan(
    estate_file: Annotated[Path, typer.Argument(help="The estate file (YAML: repositories, revisions, options).")],
    out_dir: Annotated[Path, typer.Option("--out", help="Folder of the estate's packages (one folder per "
                                                        "repository) and its state, estate.json.")],
    cache: Annotated[Optional[Path], typer.Option(
        "--cache", help="Scan cache shared by every repository's scan (default: $XDG_CACHE_HOME/diting; "
                        "docs/scanning.md §14).")] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Use no cache: compute everything.")] = False,
    jobs: Annotated[int, typer.Option("--jobs", min=1, max=MAX_WORKERS,
                                      help="Repositories scanned at once in local processes (1: one after another, "
                                           "each scan using every CPU).")] = 1,
    scheduler: Annotated[Optional[str], typer.Option(
        "--scheduler", help="Address of a Dask distributed scheduler (tcp://host:8786) to run the scans on "
                            "(the diting[cluster] extra; docs/estates.md §4).")] = None,
    repo: Annotated[Optional[list[str]], typer.Option("--repo", help="Only the repository of this name "
                                                                     "(repeatable).")] = None,
    rescan: Annotated[bool, typer.Option("--rescan", help="Scan every repository named, even one whose packages "
                                                          "could be reused.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", help="No progress output.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Scan every repository of ESTATE_FILE into --out, reusing the packages of a repository whose
    commit, options, rules and diting did not change; a repository that fails is reported and the
    others go on (exit 1 when any failed); the packages of a repository the file no longer lists are
    removed (docs/estates.md §2)."""
    from diting.estate.run import scan_estate
    from diting.estate.spec import load_estate

    def progress(o) -> None:  # as each repository is done (the table below comes in the file's order)
        if not quiet and not as_json:
            say(err, f"{o.name}: {o.status} ({o.seconds:.1f} s)" + (f": {o.message}" if o.message else ""))

    try:
        cache = scan_cache(cache, no_cache, out_dir, quiet or as_json)
        result = scan_estate(load_estate(estate_file), out_dir, cache=cache, jobs=jobs, scheduler=scheduler,
                             progress=progress, only=repo, rescan=rescan)
    except UserError as exc:
        fail(exc.message, exc.exit_code)
        return
    if as_json:
        print(json.dumps(result.as_json(), indent=2, sort_keys=True))
    else:
        width = max([len("repository")] + [len(o.name) for o in result.repositories])
        say(out, f"{'repository':<{width}} {'status':<8} {'commit':<12} {'packages':>8} {'partial':>7} "
                 f"{'failed':>6} {'seconds':>8}")
        for o in result.repositories:
            statuses = [p.get("status") for p in o.packages]
            say(out, f"{o.name:<{width}} {o.status:<8} {(o.commit or '-')[:12]:<12} {len(o.packages):>8} "
                     f"{statuses.count('PARTIAL'):>7} {statuses.count('FAILED'):>6} {o.seconds:>8.1f}")
        for o in result.failed:
            say(out, f"failed: {o.name}: {o.message}")
        for name in result.dropped:
            say(out, f"dropped: {name}: no longer in the estate file; its packages were removed")
        counts = {s: sum(1 for o in result.repositories if o.status == s) for s in ("scanned", "reused", "failed")}
        say(out, f"{len(result.repositories)} repositories: {counts['scanned']} scanned, {counts['reused']} reused, "
                 f"{counts['failed']} failed → {out_dir}")
    if result.failed:
        raise typer.Exit(1)


@estate_app.command("graph")
def estate_graph(
    estate_out: Annotated[Path, typer.Argument(help="The --out folder of 'diting estate scan'.")],
    db: Annotated[Path, typer.Option("--db", help="The DuckDB database file (created when missing).")],
    fast: Annotated[bool, typer.Option("--fast", help="Check manifests, files and digests only, not every record "
                                                     "(trust packages you made yourself).")] = False,
) -> None:
    """Bring the graph in --db up to date with an estate's packages: only packages that changed are
    verified and loaded, replacing their services' current ones; the rest are kept (docs/estates.md §3)."""
    from diting.estate.graph import update_graph
    from diting.interrupts import CommitGate
    with CommitGate() as gate:
        try:
            result = update_graph(db, estate_out, deep=not fast, gate=gate)
        except UserError as exc:
            fail(exc.message, exc.exit_code)
            return
        if result.load is None:
            say(out, f"graph current: {result.kept} package(s) unchanged, nothing loaded into {db}")
        else:
            say(out, f"loaded {len(result.loaded)}, kept {result.kept}, retired {len(result.retired)} package(s) "
                     f"into {db}")
            say(out, result.load.alignment_summary())
    if gate.late is not None:
        say(err, "note: interrupted after the commit point: the build completed and is committed")
