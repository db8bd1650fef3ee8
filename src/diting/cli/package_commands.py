"""The commands that make, check and compare IR packages: ``scan`` (a repository at a commit into
packages), ``verify``, ``diff`` (two packages, or two commits), and ``schema`` (the JSON Schemas of
the records a package holds)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from diting.cli.app import app
from diting.cli.common import answer, err, fail, note_directory_repo_id, out, say, scan_cache
from diting.errors import UserError
from diting.limits import MAX_FILE_BYTES_LIMIT, MAX_WORKERS


def _stages(value: bool) -> None:
    if value:
        from diting.scan.pipeline import stage_graph
        answer(stage_graph())


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
    cache: Annotated[Optional[Path], typer.Option(
        "--cache", help="Cache directory: file facts, module records and packages are kept there and used "
                        "again when their inputs recur (packages unchanged; default: $XDG_CACHE_HOME/diting; "
                        "docs/scanning.md §14).")]
    = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Use no cache: compute everything.")] = False,
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
        cache = scan_cache(cache, no_cache, out_dir, quiet or as_json)
        opts = ScanOptions(out=out_dir, services=service or [],
                           profiles=profile.split(",") if profile is not None else None,
                           repo_id=repo_id, inventory=inventory, jobs=jobs, max_file_bytes=max_file_bytes,
                           rules_dirs=rules or [], config_snapshot=config_snapshot, quiet=quiet or as_json,
                           sql_dialects=sql_dialect or [], config_dirs=config_dir or [], cache=cache)
        result = run_scan(repo, commit, opts)
    except UserError as exc:
        fail(exc.message, exc.exit_code)
        return
    if result.repo_id_basis == "directory name" and not quiet and not as_json:
        note_directory_repo_id(result.repo_id)
    for spec in result.unused_sql_dialects if not as_json else []:
        say(err, f"note: --sql-dialect {spec} names a datasource no package connects to "
                 f"(datasources: {', '.join(sorted({p.sql_datasource for p in result.packages if p.sql_datasource})) or 'none known'})")
    if as_json:
        print(json.dumps({
            "repo_id": result.repo_id, "repo_id_basis": result.repo_id_basis, "commit_sha": result.commit_sha,
            "unused_sql_dialects": result.unused_sql_dialects,
            "packages": [{"service_id": p.service_id, "kind": p.kind, "path": str(p.path), "status": p.status,
                          "written": p.write_status, "scan_id": p.scan_id, "counts": p.counts,
                          "deployable_basis": p.basis, "modules": p.modules, "from_cache": p.from_cache}
                         for p in result.packages],
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
        say(out, f"           → {p.path} ({p.write_status}{' from the cache' if p.from_cache else ''})")
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
        fail("--rederive scans the package's commit again: give the repository with --repo")
    if not rederive and (rules or inventory or config_snapshot or rederive_out or rederive_repo_id is not None):
        fail("--rules, --inventory, --config-snapshot, --repo-id and --rederive-out go with --rederive")
    total = 0
    report = []
    try:
        deep = deep or repo is not None  # each level includes the ones before it (docs/ir.md)
        dirs = package_dirs(packages)
        if not dirs:
            fail("no IR package under " + ", ".join(str(p) for p in packages))
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
        fail(exc.message, exc.exit_code)
    if as_json:
        print(json.dumps(report, indent=2, sort_keys=True))
    raise typer.Exit(1 if total else 0)

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
        fail(f"--format must be table, json or md, not {fmt!r}")
    show_all = show_all or fmt == "json"  # the JSON is complete unless --class narrows it
    try:
        wanted = check_classes(classes or [])
        if new is None:
            if repo is None or ".." not in old:
                fail("give two package directories, or --repo REPO and a range A..B")
            from diting.diff.commits import diff_range
            if repo_id is None:
                from diting.source.git import GitRepo, default_repo_id
                guessed, basis = default_repo_id(GitRepo(repo))
                if basis == "directory name":
                    note_directory_repo_id(guessed)
            doc = narrow_range(diff_range(repo, old, work, db, repo_id), wanted, services, show_all)
            changed = any(narrow(r, wanted, True)["changes"] for r in doc["services"]) or doc["only_old"] or \
                doc["only_new"]
            sys.stdout.write({"json": to_json, "md": range_markdown, "table": range_table}[fmt](doc))
            raise typer.Exit(1 if changed else 0)
        doc = diff(Path(old), new, repo, db)
        if services and doc["service_id"] not in services:
            raise UserError(f"--service: the packages are of {doc['service_id']}, not {', '.join(services)}")
    except UserError as exc:
        fail(exc.message, exc.exit_code)
    sys.stdout.write({"json": to_json, "md": to_markdown, "table": to_table}[fmt](narrow(doc, wanted, show_all)))
    raise typer.Exit(1 if narrow(doc, wanted, True)["changes"] else 0)


@app.command()
def schema(out_dir: Annotated[Path, typer.Option("--out", help="Directory for the JSON Schemas.")]) -> None:
    """Export the JSON Schemas of every IR record kind."""
    from diting.ir.schema_export import export_schemas
    try:
        written = export_schemas(out_dir)
    except UserError as exc:
        fail(exc.message, exc.exit_code)
        return
    except OSError as exc:
        fail(f"cannot write schemas into {out_dir}: {exc.strerror or exc}")
        return
    for p in written:
        say(out, str(p))
