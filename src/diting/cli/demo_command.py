"""The ``demo`` command: the whole job, step by step, on the bundled fixture estate."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from diting.cli.app import app
from diting.cli.common import fail, out, say
from diting.errors import UserError


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
        fail(exc.message, exc.exit_code)
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
    repo, ir, bad = _demo_packages(d, workdir)
    _demo_queries(d, workdir, ir)
    _demo_graph(d, workdir, ir)
    return repo, ir, bad


def _demo_packages(d, workdir: Path):
    """Steps 1-5: build the fixture repository, scan it, verify, summarise and report the coverage of
    its packages: ``(repository, package directory, verify findings)``."""
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
    return repo, ir, bad


def _demo_queries(d, workdir: Path, ir: Path) -> None:
    """Step 6: the example queries over the package files, saved under ``workdir/queries``, with their answers."""
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


def _demo_graph(d, workdir: Path, ir: Path) -> None:
    """Steps 7-9: the relation graph of the packages, the estate's coverage over it, and the pyramid."""
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
