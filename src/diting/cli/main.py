"""The ``diting`` command line.

Errors a user can cause end with one line on stderr and a non-zero exit code,
never a traceback. Results go to stdout (``--json`` for machines); progress
goes to stderr.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console

from diting import __version__
from diting.errors import UserError

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="diting: what the Java source of a microservice estate provably does.")
err = Console(stderr=True, soft_wrap=True)
out = Console(soft_wrap=True, highlight=False)


def _fail(message: str, code: int = 2) -> None:
    err.print(f"[bold red]error:[/] {message}", highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def _version(value: bool) -> None:
    if value:
        print(f"diting {__version__}")
        raise typer.Exit(0)


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
    jobs: Annotated[int, typer.Option("--jobs", min=0, help="Worker processes (0: one per CPU).")] = 0,
    max_file_bytes: Annotated[int, typer.Option("--max-file-bytes", min=1,
                                                help="Files larger than this are not read (FILE_TOO_LARGE).")]
    = 8 * 1024 * 1024,
    rules: Annotated[Optional[list[Path]], typer.Option("--rules", help="Extra rule directory (repeatable).")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", help="No progress output.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Scan REPO at --commit into one IR package per service (and per lib: unit)."""
    from diting.scan.pipeline import ScanOptions
    from diting.scan.pipeline import scan as run_scan
    opts = ScanOptions(out=out_dir, services=service or [],
                       profiles=[p.strip() for p in profile.split(",") if p.strip()] if profile else None,
                       repo_id=repo_id, inventory=inventory, jobs=jobs, max_file_bytes=max_file_bytes,
                       rules_dirs=rules or [], quiet=quiet or as_json)
    try:
        result = run_scan(repo, commit, opts)
    except UserError as exc:
        _fail(exc.message, exc.exit_code)
        return
    if result.repo_id_basis == "directory name" and not quiet and not as_json:
        err.print(f"note: repo id {result.repo_id!r} is the directory name (no origin remote); "
                  "pass --repo-id to name the repository", highlight=False)
    if as_json:
        print(json.dumps({
            "repo_id": result.repo_id, "commit_sha": result.commit_sha,
            "packages": [{"service_id": p.service_id, "kind": p.kind, "path": str(p.path), "status": p.status,
                          "written": p.write_status, "scan_id": p.scan_id, "counts": p.counts,
                          "deployable_basis": p.basis, "modules": p.modules} for p in result.packages],
            "excluded_services": [{"service_id": s, "module": m} for s, m in result.excluded_services],
            "inventory_unmapped": result.inventory_unmapped,
        }, indent=2, sort_keys=True))
        return
    out.print(f"{result.repo_id} @ {result.commit_sha}: {len(result.packages)} package(s)", highlight=False)
    for p in result.packages:
        why = ",".join(sorted(set(p.basis))) or ("module outside every service" if p.kind == "LIB" else "-")
        out.print(f"  {p.status:<8} {p.kind:<7} {p.service_id}  [{why}]  modules={len(p.modules)} "
                  f"entities={p.counts.get('entities', 0)} relations={p.counts.get('relations', 0)} "
                  f"errors={p.counts.get('errors', 0)} warnings={p.counts.get('warnings', 0)}\n"
                  f"           → {p.path} ({p.write_status})", highlight=False, markup=False, soft_wrap=True)
    for s, m in result.excluded_services:
        out.print(f"excluded by the inventory: {s} ({m})")
    for s in result.inventory_unmapped:
        out.print(f"inventory service without a module here: {s}")


@app.command()
def verify(
    packages: Annotated[list[Path], typer.Argument(help="Package directories to verify.")],
    repo: Annotated[Optional[Path], typer.Option("--repo", help="Re-read every segment from this repository.")] = None,
    deep: Annotated[bool, typer.Option("--deep", help="Check every record, not only files and counts.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print findings as JSON.")] = False,
) -> None:
    """Verify IR packages: manifest, checksums and counts; --deep every record; --repo every segment."""
    from diting.ir.verify import verify_package
    total = 0
    report = []
    try:
        for pkg in packages:
            findings = verify_package(pkg, deep=deep, repo=repo)
            total += len(findings)
            report.append({"package": str(pkg), "valid": not findings,
                           "findings": [f.as_dict() for f in findings]})
            if not as_json:
                if findings:
                    out.print(f"[red]INVALID[/] {pkg}: {len(findings)} finding(s)", highlight=False)
                    for f in findings[:200]:
                        out.print(f"  {f}", highlight=False, soft_wrap=True)
                    if len(findings) > 200:
                        out.print(f"  … and {len(findings) - 200} more", highlight=False)
                else:
                    out.print(f"[green]valid[/] {pkg}" + (" (deep)" if deep else "") + (" (segments re-read)"
                                                                                       if repo else ""),
                              highlight=False)
    except UserError as exc:
        _fail(exc.message, exc.exit_code)
    if as_json:
        print(json.dumps(report, indent=2, sort_keys=True))
    raise typer.Exit(1 if total else 0)


@app.command()
def schema(out_dir: Annotated[Path, typer.Option("--out", help="Directory for the JSON Schemas.")]) -> None:
    """Export the JSON Schemas of every IR record kind."""
    from diting.ir.schema_export import export_schemas
    try:
        written = export_schemas(out_dir)
    except OSError as exc:
        _fail(f"cannot write schemas into {out_dir}: {exc.strerror or exc}")
        return
    for p in written:
        out.print(str(p), highlight=False)


@app.command()
def demo(
    workdir: Annotated[Path, typer.Option("--workdir", help="Directory for the fixture repository and packages.")]
    = Path("diting-demo"),
) -> None:
    """Build the bundled fixture estate into a git repository, scan it, verify every package, summarise."""
    from collections import Counter

    from diting.demo import build_fixture_repo, prepare_workdir
    from diting.ir.verify import verify_package
    from diting.scan.pipeline import ScanOptions
    from diting.scan.pipeline import scan as run_scan
    try:
        prepare_workdir(workdir)
        repo = workdir / "estate-repo"
        sha = build_fixture_repo(repo)
        out.print(f"1. built the fixture estate into {repo} at commit {sha}", highlight=False)
        result = run_scan(repo, sha, ScanOptions(out=workdir / "ir", repo_id="fixtures/estate", quiet=True))
        out.print(f"2. scanned it: {len(result.packages)} packages under {workdir / 'ir'}", highlight=False)
        bad = 0
        for p in result.packages:
            findings = verify_package(p.path, deep=True, repo=repo)
            bad += len(findings)
            for f in findings[:20]:
                out.print(f"   INVALID {p.service_id}: {f}", highlight=False, markup=False)
        out.print(f"3. verified every package (--deep, segments re-read from the repository): "
                  f"{'all valid' if not bad else f'{bad} finding(s)'}", highlight=False)
    except UserError as exc:
        _fail(exc.message, exc.exit_code)
        return
    out.print("4. what was found:", highlight=False)
    for p in result.packages:
        if p.kind == "SERVICE":
            why = "a deployable service: " + ", ".join(sorted(set(p.basis)))
        else:
            why = "in-repo modules outside every service"
        out.print(f"   {p.service_id} ({why}) — status {p.status}", highlight=False, markup=False)
        ents: Counter[str] = Counter()
        diags: Counter[str] = Counter()
        errors = []
        for line in (p.path / "entities.jsonl").read_text(encoding="utf-8").splitlines():
            ents[json.loads(line)["kind"]] += 1
        for line in (p.path / "diagnostics.jsonl").read_text(encoding="utf-8").splitlines():
            d = json.loads(line)
            diags[d["code"]] += 1
            if d["severity"] == "ERROR":
                errors.append(f"{d['code']}: {d['message']}")
        out.print("      entities: " + ", ".join(f"{k} {v}" for k, v in sorted(ents.items())), highlight=False)
        if diags:
            out.print("      diagnostics: " + ", ".join(f"{k} {v}" for k, v in sorted(diags.items())),
                      highlight=False)
        for e in errors:
            out.print(f"      why {p.status}: {e}", highlight=False, markup=False)
    out.print(f"Packages are in {workdir / 'ir'}; inspect them with `diting verify --deep` or any JSON tool.",
              highlight=False, markup=False)
    raise typer.Exit(1 if bad else 0)


def run() -> None:
    """Console-script entry point. An unexpected failure is one line (exit 3), never a
    traceback, unless ``DITING_DEBUG=1``."""
    import os
    try:
        app()
    except KeyboardInterrupt:
        err.print("interrupted")
        sys.exit(130)
    except Exception as exc:  # noqa: BLE001 - the last line of defence
        if os.environ.get("DITING_DEBUG") == "1":
            raise
        err.print(f"[bold red]internal error:[/] {type(exc).__name__}: {exc} (run with DITING_DEBUG=1 for details; "
                  "please report it)", highlight=False, soft_wrap=True)
        sys.exit(3)


if __name__ == "__main__":  # pragma: no cover
    run()
