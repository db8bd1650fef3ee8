"""``diting scan``: a repository at a pinned commit → one IR package per service and ``lib:`` unit.

The scan is the stages of :data:`SCAN_STAGES` over one :class:`~diting.scan.facts.ScanFacts`, run in
the order their declarations give (``scan/stages.py``; ``diting scan --stages`` prints the graph,
docs/architecture.md §2 shows it): the tree at the commit → the build (Maven and Gradle modules) →
sources (config checked, Java parsed) → names → module records → services → the SQL warm-up → one
package per service, assembled and written atomically (``scan/package.py``).
"""

from __future__ import annotations

import contextlib
import gc
import os
from typing import Any

from diting.config.snapshot import ConfigSnapshot
from diting.cache import ScanCache, refuse_overlap
from diting.errors import UserError
from diting.inventory.inventory_file import InventoryFile
from diting.inventory.services import PackagePlan, closure, link_dependencies
from diting.ir.writer import refuse_inside_package, sweep_leftovers
from diting.rules import load_rules
from diting.scan import modules, plans, sources
from diting.scan.facts import ScanFacts
from diting.scan.options import DEFAULT_MAX_FILE_BYTES, PackageResult, ScanOptions, ScanResult, bounded_int
from diting.scan.package import PACKAGE_STAGES, assemble, package_stage_graph
from diting.scan.progress import Progress
from diting.scan.repository import build_inventory
from diting.scan.stages import Stage, describe, run_stages
from diting.source.git import GitRepo, default_repo_id
from diting.source.memory import memory_snapshot
from diting.source.snapshot import Snapshot
from diting.sql.dialect import parse_overrides as parse_dialect_overrides
from diting.sql.lineage import analyze_many
from diting.sql.variants import warm_lineage
from diting.workers import shared_map

__all__ = ["DEFAULT_MAX_FILE_BYTES", "SCAN_STAGES", "ScanOptions", "ScanResult", "PackageResult", "bounded_int",
           "given_facts", "memory_facts", "scan", "scan_files", "stage_graph"]

#: allocations between young-generation collections while a scan runs (CPython's default is 700)
GC_YOUNG_THRESHOLD = 50_000

#: the facts a scan starts from (read from the command's arguments before any stage)
GIVEN = ("repo", "commit", "repo_id", "repo_id_basis", "options", "rules", "inventory_file", "config_snapshot",
         "sql_dialects")


@contextlib.contextmanager
def scan_gc_policy():
    """Collect cyclic garbage rarely while a scan runs, and restore the interpreter's policy after.

    A scan allocates millions of short-lived, acyclic objects (expression JSON, record blueprints)
    next to a large long-lived heap (the facts of every file), so CPython's default thresholds run a
    full collection over that heap again and again for almost nothing: 25–30% of scan time on a
    2,000-file repository. The same remedy mypy applies to its build (a high young-generation
    threshold); what is cyclic is still collected, later. Forked workers inherit the policy."""
    before = gc.get_threshold()
    gc.set_threshold(GC_YOUNG_THRESHOLD, max(before[1], 20), max(before[2], 20))
    try:
        yield
    finally:
        gc.set_threshold(*before)


# ------------------------------------------------------------------ stages of this module
def read_tree(s: ScanFacts, progress: Progress) -> dict[str, Any]:
    """List the commit's tree and check the --config-dir folders against it."""
    entries = s.repo.ls_tree(s.commit)
    if not entries:
        raise UserError(f"commit {s.commit[:12]} has an empty tree: nothing to scan")
    snapshot = Snapshot(s.repo, s.commit, entries, s.options.max_file_bytes)
    return {"snapshot": snapshot, "commit_time": s.repo.commit_time(s.commit),  # a fact of the commit, not the scan
            "config_dirs": _config_dirs(s.options.config_dirs, snapshot, s.commit)}


def read_build(s: ScanFacts, progress: Progress) -> dict[str, Any]:
    """Read Maven and Gradle builds into modules; link each module's dependencies and closure."""
    inv = build_inventory(s.snapshot, s.rules, _root_name(s.repo_id))
    links = link_dependencies(inv.model)
    return {"plugin_rules": {b: s.rules.build_plugins(b) for b in ("maven", "gradle")}, "inv": inv, "links": links,
            "closures": {p: closure(links, inv.model, p) for p in inv.modules}}


def warm_sql(s: ScanFacts, progress: Progress) -> dict[str, Any]:
    """Parse every mapper statement once, before package workers fork (packages share mapper modules)."""
    mappers = [mf for m in sorted(s.module_results) for mf in s.module_results[m].mappers]
    count = warm_lineage(mappers, lambda chunks: shared_map(_analyze_chunk, None, chunks, s.options.jobs))
    return {"mapper_statements": count}


def write_packages(s: ScanFacts, progress: Progress) -> dict[str, Any]:
    """Assemble and write one package per plan (in forked workers); each write is atomic.

    The scan cache, grown by the packages and module records kept since the files were read, is
    pruned to its bound again."""
    progress.stage("writing packages", total=len(s.plans))
    sweep_leftovers(s.options.out)  # what a killed scan left half-written (never a live writer's)
    results = shared_map(_package_job, s, s.plans, s.options.jobs)
    if s.options.cache is not None:
        ScanCache.opened(s.options.cache).prune()
    return {"package_results": results}


#: what assembling a package reads (scan/package.py, probes, call graph, ledger, coverage)
PACKAGE_NEEDS = ("options", "repo_id", "commit", "commit_time", "snapshot", "config_dirs", "rules", "inventory_file",
                 "config_snapshot", "sql_dialects", "inv", "links", "closures", "file_problems", "config_states",
                 "file_facts", "full_file_facts", "java_by_module", "scopes", "oracle", "rule_index", "expr_folder", "scanning_apps",
                 "placeholders", "module_results", "plans", "mapper_statements")

SCAN_STAGES: tuple[Stage, ...] = (
    Stage("tree", "reading the tree", ("repo", "commit", "options"), ("snapshot", "commit_time", "config_dirs"),
          read_tree),
    Stage("build", "reading the build (Maven, Gradle)", ("snapshot", "rules", "repo_id"),
          ("plugin_rules", "inv", "links", "closures"), read_build),
    Stage("sources", "reading sources", sources.NEEDS, sources.MAKES, sources.read_sources),
    Stage("names", "resolving names", modules.NAMES_NEEDS, modules.NAMES_MAKES, modules.resolve_names),
    Stage("modules", "building records", modules.MODULES_NEEDS, modules.MODULES_MAKES, modules.build_modules),
    Stage("services", "finding services", plans.NEEDS, plans.MAKES, plans.find_services),
    Stage("sql", "parsing mapper SQL", ("options", "module_results"), ("mapper_statements",), warm_sql),
    Stage("packages", "writing packages", PACKAGE_NEEDS, ("package_results",), write_packages),
)


def stage_graph() -> str:
    """The scan's stage graph, then the stages stage ``packages`` runs for each package, as text
    (:func:`diting.scan.stages.describe`): what ``diting scan --stages`` prints."""
    return (f"scan ({len(SCAN_STAGES)} stages over the repository's facts)\n\n"
            + describe(SCAN_STAGES, GIVEN, ScanFacts)
            + f"\npackage ({len(PACKAGE_STAGES)} stages per package, in stage packages)\n\n"
            + package_stage_graph())


def _analyze_chunk(_: None, chunk: list) -> list:
    return analyze_many(chunk)


def _package_job(s: ScanFacts, plan: PackagePlan) -> PackageResult:
    """Assemble and write one package (in a forked worker or inline)."""
    return assemble(s, plan)


def _root_name(repo_id: str) -> str:
    """Gradle's default name of a root project (its directory's name): the last segment of the
    repository id."""
    return repo_id.rstrip("/").rsplit("/", 1)[-1] or "root"


def _config_dirs(given: list[str], snapshot: Snapshot, commit: str) -> list[str]:
    """The ``--config-dir`` folders, repository-relative. Raises :class:`UserError` for a path that
    leaves the repository or names no folder of the tree at the commit."""
    out = []
    for raw in given:
        d = raw.strip().replace("\\", "/").strip("/")
        while d.startswith("./"):
            d = d[2:]
        d = "" if d == "." else d
        if raw.strip().startswith("/") or any(seg == ".." for seg in d.split("/")):
            raise UserError(f"--config-dir {raw}: write a folder of the repository, relative to its root")
        if d and not any(p.startswith(d + "/") for p in snapshot.by_path):
            raise UserError(f"--config-dir {raw}: no such folder in the tree at {commit[:12]}")
        out.append(d)
    return out


def given_facts(repo_path: str | os.PathLike[str], rev: str, options: ScanOptions) -> ScanFacts:
    """The facts a scan starts from (:data:`GIVEN`): the repository opened, the revision resolved
    once, the repository id, the options and the files they name read. Raises :class:`UserError` for
    a missing path, a non-repository, an unknown revision, an ``--out`` inside a package, or a bad
    rules, inventory or snapshot file."""
    refuse_inside_package(options.out, "--out")  # a package holds its own files only
    repo = GitRepo(repo_path)
    commit = repo.resolve_commit(rev)
    repo_id, repo_id_basis = (options.repo_id, "--repo-id") if options.repo_id else default_repo_id(repo)
    facts = ScanFacts()
    facts.put(repo=repo, commit=commit, repo_id=repo_id, repo_id_basis=repo_id_basis, **_option_facts(options))
    return facts


def _option_facts(options: ScanOptions) -> dict[str, Any]:
    """The given facts read from the options: the options, the rules and the files they name."""
    if options.cache is not None:
        refuse_inside_package(options.cache, "--cache")
        refuse_overlap(options.cache, options.out)
        ScanCache(options.cache)  # refused now (exit 2) when it cannot be used, before any work
    return {"options": options, "rules": load_rules(options.rules_dirs),
            "inventory_file": InventoryFile.load(options.inventory) if options.inventory else None,
            "config_snapshot": ConfigSnapshot.load(options.config_snapshot) if options.config_snapshot else None,
            "sql_dialects": parse_dialect_overrides(options.sql_dialects)}


def memory_facts(files: dict[str, bytes], options: ScanOptions, commit_time: str | None = None) -> ScanFacts:
    """The facts a scan of ``files`` (path → bytes, held in memory: ``source/memory.py``) has after
    its ``tree`` stage; the repository id is ``options.repo_id`` (required). Raises
    :class:`UserError` as :func:`given_facts` does for the options."""
    if not options.repo_id:
        raise UserError("a scan of files in memory needs a repository id")
    refuse_inside_package(options.out, "--out")
    snapshot = memory_snapshot(files, options.max_file_bytes)
    facts = ScanFacts()
    facts.put(commit=snapshot.commit, repo_id=options.repo_id, repo_id_basis="--repo-id", **_option_facts(options),
              snapshot=snapshot, commit_time=commit_time, config_dirs=_config_dirs(options.config_dirs, snapshot,
                                                                                  snapshot.commit))
    return facts


def scan_files(files: dict[str, bytes], options: ScanOptions) -> ScanResult:
    """:func:`scan` of files held in memory (rule samples): every stage after ``tree`` over
    :func:`memory_facts`."""
    facts = memory_facts(files, options)
    progress = Progress(quiet=options.quiet)
    with progress, scan_gc_policy():
        run_stages([st for st in SCAN_STAGES if st.name != "tree"], facts, progress)
    return _result(facts)


def scan(repo_path: str | os.PathLike[str], rev: str, options: ScanOptions) -> ScanResult:
    """Scan ``repo_path`` at ``rev`` into packages under ``options.out``: :func:`given_facts`, then
    every stage of :data:`SCAN_STAGES`.

    Raises :class:`UserError` for a missing path, a non-repository, an unknown
    revision, an empty tree, or a repository without pom.xml.
    """
    facts = given_facts(repo_path, rev, options)
    progress = Progress(quiet=options.quiet)
    with facts.repo, progress, scan_gc_policy():
        run_stages(SCAN_STAGES, facts, progress)
    return _result(facts)


def _result(facts: ScanFacts) -> ScanResult:
    """What a finished scan answers, from its facts (``--sql-dialect`` overrides no package used)."""
    results = facts.package_results
    seen = {r.sql_datasource.lower() for r in results if r.sql_datasource}
    unused = [f"{ds}={d}" for ds, d in sorted(facts.sql_dialects.items()) if ds != "*" and ds.lower() not in seen]
    return ScanResult(facts.repo_id, facts.commit, results, facts.excluded_services, facts.inventory_unmapped,
                      facts.repo_id_basis, unused)
