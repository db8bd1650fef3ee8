"""``diting scan``: a repository at a pinned commit → one IR package per service and ``lib:`` unit.

Stages (docs/architecture.md §2): the tree at the commit → the build inventory (Maven and Gradle
modules, file layout) → sources (config checked, Java parsed in several processes; per-file work is a
pure function of the bytes) → per module, Java records, rule candidates and call facts → services,
their configuration and closures, and the SQL warm-up → one package per service, assembled and
written atomically (probes and SQL, call graph, wrapper sends, ledger, recovery evidence).
"""

from __future__ import annotations

import codecs
import contextlib
import dataclasses
import gc
import hashlib
import multiprocessing
import os
import pickle
import posixpath
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from diting.config.configserver import (
    CLIENT_ARTIFACTS,
    SERVER_ANNOTATION,
    SERVER_ARTIFACT,
    choose_server,
    client_request,
    native_server,
    served_files,
    uses_config_server,
)
from diting.config.remote import add_remote_sources, remote_file_index
from diting.sql.dialect import parse_overrides as parse_dialect_overrides
from diting.sql.emit import warm_lineage
from diting.sql.lineage import analyze_many
from diting.config.snapshot import ConfigSnapshot, SnapshotValue
from diting.config.sources import MAX_YAML_NODES, filter_resource, parse_config
from diting.config.spring import SpringConfig, add_file_sources, load_spring_config, profile_set, spring_config_files
from diting.errors import UserError
from diting.findings import Finding
from diting.inventory.inventory_file import InventoryFile
from diting.inventory.layout import CONFIG, JAVA, FileEntry
from diting.inventory.services import (
    DeployableBasis,
    LIB_PREFIX,
    clean_service_id,
    ModuleLinks,
    PackagePlan,
    closure,
    deployable_basis,
    link_dependencies,
    unreserved_service_id,
)
from diting.ir import ids
from diting.ir.builder import EncodedSet, Placeholders, RecordSet
from diting.ir.writer import package_dir_name, refuse_inside_package, sweep_leftovers
from diting.java.constants import ConstantFolder
from diting.java.names import FileScope, TypeRegistry, VisibleTypes, jdk_catalog, module_types
from diting.java.records import MainMethod, ModuleJava, ModuleJavaResult
from diting.java.syntax import FileFacts, extract_file, skeleton
from diting.probes.candidates import ModuleProbe, RuleIndex, erased_signature
from diting.probes.resources import ModuleResources, module_resources
from diting.resolve.callgraph import ModuleCallSites
from diting.resolve.calls import CallResolver
from diting.resolve.fold import ExpressionFolder
from diting.resolve.types import TypeOracle
from diting.rules import RuleSet, load_rules
from diting.scan.progress import Progress
from diting.scan.repository import Inventory, build_inventory
from diting.source.git import GitRepo, checked_repo_id, default_repo_id
from diting.source.snapshot import MAX_LINE_BYTES, Snapshot
from diting.source.text import DecodedText, decode_bytes, split_lines
from diting.source.xmlsafe import parse_xml
from diting.limits import MAX_FILE_BYTES_LIMIT, MAX_WORKERS
from diting.workers import worker_count, worker_pool

#: files larger than this are not read (FILE_TOO_LARGE); a budget, recorded in analysis_input
DEFAULT_MAX_FILE_BYTES = 8 * 1024 * 1024
#: a module's files are built into records in tasks of about this many lines
CHUNK_LINES = 15000
#: allocations between young-generation collections while a scan runs (CPython's default is 700)
GC_YOUNG_THRESHOLD = 50_000


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


@dataclass
class ScanOptions:
    """Options of one scan (``--jobs`` and output paths never reach a package)."""

    out: Path
    services: list[str] = field(default_factory=list)
    profiles: list[str] | None = None
    repo_id: str | None = None
    inventory: Path | None = None
    jobs: int = 0
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    rules_dirs: list[Path] = field(default_factory=list)
    config_snapshot: Path | None = None
    quiet: bool = False
    #: ``--sql-dialect`` values: ``DIALECT`` (every datasource) or ``DATASOURCE=DIALECT``
    sql_dialects: list[str] = field(default_factory=list)
    #: ``--config-dir`` values: repository folders holding config-centre exports (config/remote.py)
    config_dirs: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        """Bounds of the integer options (the CLI checks them as it parses; this catches the other
        callers, such as a re-derivation reading a package's recorded options). Raises
        :class:`UserError` for ``jobs`` outside 0..MAX_WORKERS or ``max_file_bytes`` outside
        1..:data:`MAX_FILE_BYTES_LIMIT`."""
        bounded_int("--jobs", self.jobs, 0, MAX_WORKERS)
        bounded_int("--max-file-bytes", self.max_file_bytes, 1, MAX_FILE_BYTES_LIMIT)
        if self.profiles is not None:
            self.profiles = profile_set(self.profiles, "--profile")
        if self.repo_id is not None:
            checked_repo_id(self.repo_id)


def bounded_int(name: str, value: object, low: int, high: int) -> int:
    """``value`` when it is an integer in ``low..high``; else :class:`UserError` naming ``name``
    and the range."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise UserError(f"{name} must be an integer from {low} to {high}, not {value!r}")
    return value


@dataclass
class PackageResult:
    """What one written package is: where, its status, and record counts."""

    service_id: str
    kind: str
    path: Path
    status: str
    write_status: str
    scan_id: str
    counts: dict[str, int]
    basis: list[str]
    modules: list[str]
    #: the database of the package's one JDBC URL, when known (what ``--sql-dialect DS=…`` names)
    sql_datasource: str | None = None


@dataclass
class ScanResult:
    repo_id: str
    commit_sha: str
    packages: list[PackageResult]
    excluded_services: list[tuple[str, str]]
    inventory_unmapped: list[str]
    repo_id_basis: str = "--repo-id"
    #: ``--sql-dialect DS=…`` values whose datasource no package has
    unused_sql_dialects: list[str] = field(default_factory=list)


@dataclass
class ModuleResult:
    """One module's records, encoded once and shared by every package that holds the module.

    EXTERNAL entities stay blueprints (``externals``) because a package unites the evidence
    of equal externals from several modules; ``segment_hashes`` (record_id → content hash of
    every segment of the module) let package-level records cite module evidence."""

    module: str
    module_rid: str
    module_evidence: list[str]
    encoded: EncodedSet
    externals: dict[str, dict]
    segment_hashes: dict[str, str]
    java: ModuleJavaResult
    #: what the rules matched in the module (docs/middleware.md §1), decided per package by probes/emit.py
    candidates: list[dict] = field(default_factory=list)
    #: auto-configuration classes listed in spring.factories / AutoConfiguration.imports
    auto_configs: list[dict[str, Any]] = field(default_factory=list)
    #: context config locations of web.xml files
    web_contexts: list[str] = field(default_factory=list)
    #: mapper files of the module (sql/mybatis.py)
    mappers: list = field(default_factory=list)
    #: member bodies with their resolved call sites and branch arms (resolve/callgraph.py)
    bodies: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class ConfigFileState:
    """Outcome of reading one config resource: ``problem`` None when it parsed."""

    path: str
    problem: str | None
    line: int | None = None
    code: str = "PARSE_ERROR"
    #: the file's decoding: codec, how it was chosen and any doubt (:class:`~diting.source.text.DecodedText`)
    encoding: str = "utf-8"
    encoding_basis: str = "utf-8"
    encoding_doubt: str | None = None
    doubt_lines: tuple[int, ...] = ()


def _with_encoding(state: ConfigFileState, decoded: DecodedText) -> ConfigFileState:
    """``state`` with the decoding of its file recorded."""
    return dataclasses.replace(state, encoding=decoded.encoding, encoding_basis=decoded.basis,
                               encoding_doubt=decoded.doubt, doubt_lines=decoded.doubt_lines)


def _parse_job(args: tuple[str, bytes, str | None, bool]) -> tuple[FileFacts, bytes | FileFacts] | tuple[str, str]:
    """Parse one file into ``(skeleton, full facts)``; the full facts are pickled when they cross
    to another process, so the main process decodes only skeletons. An unexpected failure comes
    back as ``(path, message)`` so the scan goes on."""
    path, data, enc, remote = args
    try:
        facts = extract_file(path, data, enc)  # every call with its arguments: call sites are resolved
        return skeleton(facts), (pickle.dumps(facts, protocol=pickle.HIGHEST_PROTOCOL) if remote else facts)
    except RecursionError:
        return (path, "nesting too deep for the Java extractor")
    except Exception as exc:  # noqa: BLE001 - one bad file never stops the scan
        return (path, f"internal error in the Java extractor: {type(exc).__name__}: {exc}")


_CONTROL = bytes(b for b in range(32) if b not in (9, 10, 12, 13))


def _binary_content(data: bytes) -> bool:
    """More than 5% control bytes in the first 8000: binary content, not source with a stray NUL.
    UTF-16 text (with its byte-order mark) is text."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return False
    head = data[:8000]
    return len(head) > 0 and len(head) - len(head.translate(None, _CONTROL)) > len(head) // 20


class Scanner:
    """One scan of one repository at one commit."""

    def __init__(self, repo_path: str | os.PathLike[str], rev: str, options: ScanOptions) -> None:
        self.options = options
        refuse_inside_package(options.out, "--out")  # a package holds its own files only
        self.repo = GitRepo(repo_path)
        self.commit = self.repo.resolve_commit(rev)
        self.repo_id, self.repo_id_basis = (options.repo_id, "--repo-id") if options.repo_id else \
            default_repo_id(self.repo)
        self.rules: RuleSet = load_rules(options.rules_dirs)
        self.inventory_file = InventoryFile.load(options.inventory) if options.inventory else None
        self.config_snapshot = ConfigSnapshot.load(options.config_snapshot) if options.config_snapshot else None
        self.sql_dialects: dict[str, str] = parse_dialect_overrides(options.sql_dialects)
        self.progress = Progress(quiet=options.quiet)

    def _root_name(self) -> str:
        """Gradle's default name of a root project (its directory's name): the last segment of
        the repository id."""
        return self.repo_id.rstrip("/").rsplit("/", 1)[-1] or "root"

    # ------------------------------------------------------------ stages
    def run(self) -> ScanResult:
        with self.repo, self.progress, scan_gc_policy():
            self.progress.stage("reading the tree")
            entries = self.repo.ls_tree(self.commit)
            if not entries:
                raise UserError(f"commit {self.commit[:12]} has an empty tree: nothing to scan")
            self.snapshot = Snapshot(self.repo, self.commit, entries, self.options.max_file_bytes)
            self.commit_time = self.repo.commit_time(self.commit)  # a fact of the commit, not of the scan
            self.config_dirs = self._config_dirs()  # a bad --config-dir is refused before any work
            self.progress.stage("reading the build (Maven, Gradle)")
            self.plugin_rules = {s: self.rules.build_plugins(s) for s in ("maven", "gradle")}
            self.inv: Inventory = build_inventory(self.snapshot, self.rules, self._root_name())
            self.links: dict[str, ModuleLinks] = link_dependencies(self.inv.model)
            self.closures = {p: closure(self.links, self.inv.model, p) for p in self.inv.modules}
            self._read_sources()
            self._java_records()
            self.progress.stage("finding services")
            plans, excluded, unmapped = self._plans()
            # mapper statements shared by several packages: parse them once, before workers fork
            warm_lineage([mf for m in sorted(self.module_results) for mf in self.module_results[m].mappers],
                         lambda chunks: self._fork_map(analyze_many, chunks))
            self.progress.stage("writing packages", total=len(plans))
            sweep_leftovers(self.options.out)  # what a killed scan left half-written (never a live writer's)
            results = self._fork_map(_package_job, plans)
            seen = {r.sql_datasource.lower() for r in results if r.sql_datasource}
            unused = [f"{ds}={d}" for ds, d in sorted(self.sql_dialects.items())
                      if ds != "*" and ds.lower() not in seen]
            return ScanResult(self.repo_id, self.commit, results, excluded, unmapped, self.repo_id_basis, unused)

    def _read_sources(self) -> None:
        """Read every Java and config file of every module; parse Java in worker processes."""
        self.file_problems: dict[str, Finding] = {}
        self.config_states: dict[str, ConfigFileState] = {}
        self.facts: dict[str, FileFacts] = {}
        jobs: list[tuple[str, bytes, str | None]] = []
        java_files = [f for f in self.inv.files if f.kind == JAVA]
        self.progress.stage("reading sources", total=len(java_files))
        for f in self.inv.files:
            mod = self.inv.modules.get(f.module) if f.module else None
            if f.module is None:
                continue
            if f.entry.refused is not None:
                self.file_problems[f.path] = Finding(
                    "PATH_OUTSIDE_TREE", f"{f.path} is a tree entry git refuses to check out ({f.entry.refused}); it "
                    "is not read as a file of the repository", f.path, 0, 0, f.module, "refused-path", "CODE")
                continue
            if f.entry.is_gitlink:
                self.file_problems[f.path] = Finding(
                    "FILE_UNREADABLE", f"{f.path} is a git submodule (gitlink {f.entry.oid[:12]}); its content is "
                    "not in this repository's tree and is not scanned", f.path, 0, 0, f.module, "gitlink", "CODE")
                continue
            if f.entry.is_unlisted_tree:
                self.file_problems[f.path] = Finding(
                    "FILE_UNREADABLE", f"{f.path}: {f.entry.unlisted}; the files below it are not read", f.path, 0, 0,
                    f.module, "unlisted-tree", "CODE")
                continue
            if f.kind not in (JAVA, CONFIG):
                continue
            got = self.snapshot.read(f.path)
            if got.data is None:
                code = "FILE_TOO_LARGE" if (got.problem or "").startswith("too_large") else "FILE_UNREADABLE"
                msg = {
                    "too_large": f"{f.path} has {got.size} bytes, over the limit of {self.options.max_file_bytes}; "
                                 "not read",
                    "too_large_line": f"{f.path} has a line of more than {MAX_LINE_BYTES} bytes: evidence cites whole "
                                      "lines, and one that long could not be a record; not read",
                    "lfs_pointer": f"{f.path} is a Git LFS pointer; the content is not in git",
                    "missing_object": f"{f.path}: blob {f.entry.oid[:12]} is missing from the object database "
                                      "(a partial or shallow clone?); not read",
                    "not_a_blob": f"{f.path}: the tree entry names object {f.entry.oid[:12]}, which is not a blob; "
                                  "not read",
                }.get(got.problem or "", f"{f.path} not read: {got.problem}")
                self.file_problems[f.path] = Finding(code, msg, f.path, 0, 0, f.module, got.problem or "",
                                                     "CODE" if f.kind == JAVA else "CONFIG")
                continue
            if f.kind == JAVA:
                if _binary_content(got.data):
                    self.file_problems[f.path] = Finding(
                        "FILE_UNREADABLE", f"{f.path} has binary content (NUL bytes); not parsed as Java", f.path,
                        0, 0, f.module, "binary", "CODE")
                    continue
                jobs.append((f.path, got.data, mod.source_encoding if mod else None, False))
            else:
                self.config_states[f.path] = self._check_config(f, got.data, mod)
        self.progress.stage("parsing Java", total=len(jobs))
        workers = self._workers(len(jobs) // 16)
        self._full: dict[str, bytes | FileFacts] = {}
        if workers > 1 and len(jobs) > 16:
            chunk = max(1, min(64, len(jobs) // (workers * 8) or 1))
            with worker_pool(workers) as pool:
                for res in pool.map(_parse_job, [j[:3] + (True,) for j in jobs], chunksize=chunk):
                    self._parsed(res)
        else:
            for job in jobs:
                self._parsed(_parse_job(job))

    def _workers(self, tasks: int) -> int:
        """Worker processes for ``tasks`` units of work: ``--jobs`` (default one per CPU), never
        more than the work (:func:`diting.workers.worker_count`)."""
        return worker_count(self.options.jobs, tasks)

    def _parsed(self, res: tuple) -> None:
        if isinstance(res[1], str):
            path, message = res
            module = next((f.module for f in self.inv.files if f.path == path), None)
            self.file_problems[path] = Finding("PARSE_ERROR", f"{path}: {message}; no facts recorded", path, 0, 0,
                                               module, "extractor", "CODE")
        else:
            skel, full = res
            self.facts[skel.path] = skel
            self._full[skel.path] = full
        self.progress.advance()

    def snapshot_value(self, scheme: str, key: str, service_id: str | None) -> SnapshotValue | None:
        """The ``--config-snapshot`` value of a key for a service, or None (no snapshot, no entry)."""
        return self.config_snapshot.lookup(scheme, key, service_id) if self.config_snapshot else None

    def full_facts(self, path: str) -> FileFacts:
        """The full facts of one Java file (decoded where they are needed: in a module's worker)."""
        full = self._full[path]
        return pickle.loads(full) if isinstance(full, bytes) else full

    def text_lines(self, path: str) -> tuple[list[str], str]:
        """Decoded lines and encoding of a file at the commit, decoded as the scan decoded it."""
        if path in self.inv.modules:
            ev = self.inv.modules[path].evidence()
            if ev.path == path:
                return ev.lines, ev.encoding
        got = self.snapshot.read(path)
        declared = None
        if path.endswith(".java"):
            owner = next((f.module for f in self.inv.files if f.path == path), None)
            mod = self.inv.modules.get(owner) if owner else None
            declared = mod.source_encoding if mod else None
        d = decode_bytes(got.data or b"", declared)
        return split_lines(d.text), d.encoding

    def _check_config(self, f: FileEntry, data: bytes, mod) -> ConfigFileState:
        """Parse one config resource (XML safely; properties and YAML after Maven ``@…@`` filtering)."""
        if f.path.endswith(".xml"):
            doc = parse_xml(data)
            decoded = doc.decoded
            if doc.root is None:
                return _with_encoding(ConfigFileState(f.path, f"not well-formed XML: {doc.error}", doc.error_line),
                                      decoded)
            return _with_encoding(ConfigFileState(f.path, "lossy" if decoded.lossy else None), decoded)
        decoded = decode_bytes(data)
        text = decoded.text
        if f.path.endswith(".imports"):
            return _with_encoding(ConfigFileState(f.path, "lossy" if decoded.lossy else None), decoded)
        if mod is not None:
            text, _ = filter_resource(text, mod.property_lookup())
        # a tag Spring's loader refuses is this file's error when Spring Boot loads it by its name; another
        # YAML resource may be some other loader's (ShardingSphere's !SHARDING), and one Spring imports is
        # refused where it is loaded (the package's "config source not read")
        spring_named = mod is not None and bool(spring_config_files([f.path], mod.resource_roots))
        cf = parse_config(f.path, text, allow_any_tag=not spring_named)
        if cf.error:
            return _with_encoding(ConfigFileState(f.path, cf.error, cf.error_line), decoded)
        if cf.budget_exhausted:
            return _with_encoding(ConfigFileState(f.path, f"more than {MAX_YAML_NODES} YAML nodes (aliases?); read "
                                                  "partially", None, "BUDGET_EXHAUSTED"), decoded)
        return _with_encoding(ConfigFileState(f.path, "lossy" if decoded.lossy else None), decoded)

    def _java_records(self) -> None:
        """Resolve names per module (visible = own + closure) and build module record blueprints."""
        self.progress.stage("resolving names")
        by_module: dict[str, list[FileFacts]] = {}
        for f in self.inv.files:
            if f.kind == JAVA and f.path in self.facts and f.module:
                by_module.setdefault(f.module, []).append(self.facts[f.path])
        types_of = {m: module_types(m, files) for m, files in by_module.items()}
        self.scopes: dict[str, FileScope] = {}
        folder = ConstantFolder()
        registry = TypeRegistry()
        catalog = jdk_catalog().with_libraries(self.rules.library_types())
        for m in sorted(self.inv.modules):
            own = types_of.get(m, [])
            deps: list = []
            for other in self.closures.get(m, [m])[1:]:
                deps.extend(types_of.get(other, []))
            visible = VisibleTypes(own, deps, catalog)
            if visible.own_module is None:
                visible.own_module = m
            for facts in by_module.get(m, []):
                scope = FileScope(facts, visible)
                registry.add(m, scope)
                self.scopes[facts.path] = scope
        for m in sorted(self.inv.modules):
            for facts in by_module.get(m, []):
                folder.add_file(m, facts, self.scopes[facts.path])
        folder.precompute()
        self.folder = folder
        self.oracle = TypeOracle(registry, self.rules.library_returns(), self.rules.library_fields())
        self.call_resolver = CallResolver(self.oracle)
        self.rule_index = RuleIndex.build(list(self.rules.by_id.values()))
        self.expr_folder = ExpressionFolder(folder, registry, self.oracle, self.rule_index.config_annotations,
                                            self.rule_index.config_prefix_annotations)
        self.apps = self.rules.application_annotations()
        self.scanning_apps = self.rules.application_annotations(scanning=True)
        self.placeholders = Placeholders()
        self.module_results: dict[str, ModuleResult] = {}
        self._by_module = by_module
        tasks = self._record_tasks(by_module)
        self.progress.stage("building records", total=len(tasks))
        parts: dict[str, list[tuple[int, ModuleResult]]] = {}
        for res in self._fork_map(_module_job, tasks):
            parts.setdefault(res[0], []).append((res[1], res[2]))
            self.progress.advance()
        for m, chunks in parts.items():
            self.module_results[m] = _merge_chunks([r for _, r in sorted(chunks, key=lambda x: x[0])])

    def _record_tasks(self, by_module: dict[str, list[FileFacts]]) -> list[tuple[str, int, list[str]]]:
        """Record-building tasks ``(module, chunk index, file paths)``, biggest first.

        A module's files are split into chunks of about :data:`CHUNK_LINES` lines so that one
        big module does not leave a core idle; files that declare the same type name stay in
        one chunk, where duplicates are decided. Chunk 0 of each module records the module."""
        tasks: list[tuple[int, str, int, list[str]]] = []
        for m in sorted(self.inv.modules):
            files = sorted(by_module.get(m, []), key=lambda f: f.path)
            owner: dict[str, int] = {}
            group_of = list(range(len(files)))

            def find(i: int) -> int:
                while group_of[i] != i:
                    group_of[i] = group_of[group_of[i]]
                    i = group_of[i]
                return i

            for i, f in enumerate(files):
                for td in f.types:
                    b = self.scopes[f.path].binary_of(td)
                    j = owner.setdefault(b, i)
                    if j != i:
                        group_of[find(i)] = find(j)
            groups: dict[int, list[FileFacts]] = {}
            for i, f in enumerate(files):
                groups.setdefault(find(i), []).append(f)
            chunks: list[list[FileFacts]] = [[]]
            size = 0
            for g in (groups[k] for k in sorted(groups)):
                lines = sum(f.line_count for f in g)
                if chunks[-1] and size + lines > CHUNK_LINES:
                    chunks.append([])
                    size = 0
                chunks[-1].extend(g)
                size += lines
            for idx, chunk in enumerate(chunks):
                tasks.append((sum(f.line_count for f in chunk), m, idx, [f.path for f in chunk]))
        tasks.sort(key=lambda t: (-t[0], t[1], t[2]))
        return [(m, idx, paths) for _, m, idx, paths in tasks]

    def _fork_map(self, fn, items: list) -> list:
        """``fn`` over ``items`` in forked workers that share this scanner (results in order);
        inline when one worker suffices or fork is unavailable."""
        workers = self._workers(len(items))
        global _ACTIVE
        _ACTIVE = self
        try:
            if workers > 1 and "fork" in multiprocessing.get_all_start_methods():
                with worker_pool(workers) as pool:
                    return list(pool.map(fn, items, chunksize=1))
            return [fn(item) for item in items]
        finally:
            _ACTIVE = None

    # ------------------------------------------------------------ services
    def _plans(self) -> tuple[list[PackagePlan], list[tuple[str, str]], list[str]]:
        model = self.inv.model
        plans: list[PackagePlan] = []
        forced: dict[str, dict] = {}
        excluded: list[tuple[str, str]] = []
        unmapped: list[str] = []
        if self.inventory_file is not None:
            forced, excluded, unmapped = self.inventory_file.for_repo(self.repo_id, model)
        excluded_modules = {mp for sid, mp in excluded}
        for path in sorted(model.modules):
            mod = model.modules[path]
            if path in excluded_modules:
                continue
            mains: list[MainMethod] = self.module_results[path].java.mains
            app_mains = [(mm.application_annotation, *mm.type_header) for mm in mains if mm.application_annotation]
            basis = deployable_basis(mod, app_mains, self.plugin_rules.get(mod.build_system, {}))
            inv_entry = forced.get(path)
            if inv_entry is not None:
                ev = mod.evidence()
                basis.append(DeployableBasis("INVENTORY", ev.path, ev.start, ev.end,
                                             f"named by the inventory file as {inv_entry['service_id']}"))
            if not basis:
                continue
            plan = PackagePlan(service_id="", kind="SERVICE", roots=[path], modules=self.closures[path], basis=basis)
            profiles = self.options.profiles
            if profiles is None and inv_entry is not None and inv_entry.get("profile"):
                profiles = profile_set(str(inv_entry["profile"]), f"the inventory's profile of {inv_entry['service_id']}")
            plan.config = self._spring_config(mod, profiles)
            if inv_entry is not None:
                plan.service_id = clean_service_id(str(inv_entry["service_id"]))
                plan.id_basis = {"source": "inventory", "inventory_service_id": plan.service_id}
                plan.owner = inv_entry.get("owner")
            else:
                plan.service_id, plan.id_basis = self._service_id(mod, plan.config)
            self._unreserve(plan, mod)
            plans.append(plan)
        self._config_server_sources(plans)
        self._shared_id(plans)
        self._disambiguate(plans)
        # lib packages: modules outside every service closure, one per top-level reactor
        in_service: set[str] = set()
        for p in plans:
            in_service.update(p.modules)
        lib_roots: dict[str, list[str]] = {}
        for path in sorted(model.modules):
            if path in in_service or path in excluded_modules:
                continue
            lib_roots.setdefault(model.reactor_root(path), []).append(path)
        for reactor, members in sorted(lib_roots.items()):
            rmod = model.modules[reactor]
            name = rmod.artifact_id if rmod.artifact_id and "${" not in rmod.artifact_id else \
                (reactor.rsplit("/", 2)[-2] if "/" in reactor else "root")
            mods: list[str] = list(members)
            for m in members:
                for d in self.closures.get(m, [m]):
                    if d not in mods:
                        mods.append(d)
            plans.append(PackagePlan(service_id=clean_service_id(f"{LIB_PREFIX}{name}"), kind="LIB", roots=members,
                                     modules=members + sorted(set(mods) - set(members))))
        # lib ids can collide too (two reactors with one artifactId)
        seen: dict[str, int] = {}
        for p in plans:
            if p.kind == "LIB":
                seen[p.service_id] = seen.get(p.service_id, 0) + 1
        for p in plans:
            if p.kind == "LIB" and seen[p.service_id] > 1:
                p.service_id = f"{p.service_id}~{model.modules[p.roots[0]].dir or 'root'}".replace("/", ".")
        # a lib package never takes a service's id
        service_ids = {p.service_id for p in plans if p.kind == "SERVICE"}
        for p in plans:
            if p.kind == "LIB" and p.service_id in service_ids:
                p.findings.append(Finding("SERVICE_ID_COLLISION", f"{p.service_id!r} is also a service's id; this lib "
                                          f"package is named {p.service_id + '~lib'!r}", p.roots[0], 0, 0,
                                          p.roots[0], f"lib-collision|{p.service_id}"))
                p.service_id += "~lib"
        # ids equal but for case would share a directory on case-insensitive file systems
        folded: dict[str, list[PackagePlan]] = {}
        for p in plans:
            p.dir_name = package_dir_name(p.service_id, self.commit, p.profiles)
            folded.setdefault(p.dir_name.casefold(), []).append(p)
        for group in folded.values():
            if len(group) > 1:
                for p in group:
                    p.dir_name += "~" + hashlib.sha256(p.service_id.encode("utf-8")).hexdigest()[:12]
        if self.options.services:
            wanted = set(self.options.services)
            chosen = [p for p in plans if p.service_id in wanted]
            missing = wanted - {p.service_id for p in chosen}
            if missing:
                available = ", ".join(sorted(p.service_id for p in plans))
                raise UserError(f"no service named {', '.join(sorted(missing))} in this repository at "
                                f"{self.commit[:12]}; services found: {available}")
            plans = chosen
        plans.sort(key=lambda p: p.service_id)
        return plans, excluded, unmapped

    @staticmethod
    def _unreserve(plan: PackagePlan, mod) -> None:
        """A service id never begins with ``lib:`` (the prefix of lib packages, any case): its colon is
        written ``_`` (:func:`unreserved_service_id`), ``service_id_basis.raw_value`` keeps the id as
        written, and SERVICE_ID_RESERVED cites where the id came from."""
        sid = unreserved_service_id(plan.service_id)
        if sid == plan.service_id:
            return
        if plan.id_basis.get("source") == "spring.application.name":
            path, line, source_type = str(plan.id_basis["path"]), int(plan.id_basis.get("line") or 0), "CONFIG"
            origin = f"spring.application.name in {path}"
        else:
            ev = mod.evidence()
            path, line, source_type = ev.path, ev.start, "BUILD"
            origin = "the inventory file" if plan.id_basis.get("source") == "inventory" else "the module's artifactId"
        plan.findings.append(Finding(
            "SERVICE_ID_RESERVED", f"service id {plan.service_id!r} (from {origin}) begins with {LIB_PREFIX!r}, the "
            f"prefix reserved for packages of modules outside every service; this service is named {sid!r}",
            path, line, line, mod.build_file, f"reserved|{plan.service_id}", source_type))
        plan.id_basis = {**plan.id_basis, "raw_value": plan.id_basis.get("raw_value", plan.service_id)}
        plan.service_id = sid

    def _shared_id(self, plans: list[PackagePlan]) -> None:
        """SERVICE_ID_SHARED on every service when all of an estate's services (two or more) got one id
        from ``spring.application.name`` — one file read by every service (two or more), or three or
        more services: the name came from a source that is not each service's own (a shared or
        misbound config file), and every id after :meth:`_disambiguate` is only a module's name."""
        named = [p for p in plans if p.id_basis.get("source") == "spring.application.name"]
        if len(named) < 2 or len(named) != len(plans) or len({p.service_id for p in named}) != 1:
            return
        paths = sorted({str(p.id_basis.get("path")) for p in named})
        if len(named) < 3 and len(paths) == len(named):
            return
        sid = named[0].service_id
        for p in named:
            mod = self.inv.model.modules[p.roots[0]]
            p.findings.append(Finding(
                "SERVICE_ID_SHARED", f"every service of the repository ({len(named)}) is named {sid!r} by "
                f"spring.application.name in {', '.join(paths)}, a source that is not each service's own; the "
                "services are told apart by their modules only", str(p.id_basis.get("path")),
                int(p.id_basis.get("line") or 0), int(p.id_basis.get("line") or 0), mod.build_file,
                f"shared-id|{sid}", "CONFIG"))

    def _disambiguate(self, plans: list[PackagePlan]) -> None:
        """Give deployables that share a service id unique, deterministic ids (SERVICE_ID_COLLISION on
        each): ``{id}~{artifactId}``, else ``{id}~{groupId}:{artifactId}`` when the artifactId is
        shared too, else ``{id}~{module path}`` (``/`` written ``.``) when the coordinates collide
        (one project copied into several folders)."""
        model = self.inv.model
        by_id: dict[str, list[PackagePlan]] = {}
        for p in plans:
            by_id.setdefault(p.service_id, []).append(p)
        taken = {p.service_id for p in plans}
        for sid, group in sorted(by_id.items()):
            if len(group) < 2:
                continue
            mods = {id(p): model.modules[p.roots[0]] for p in group}

            def shared(key) -> bool:
                return len({id(q) for q in group if key(mods[id(q)]) == key(mods[id(p)])}) > 1

            renamed: dict[int, str] = {}
            for p in group:
                mod = mods[id(p)]
                if not shared(lambda m: m.artifact_id):
                    new = f"{sid}~{mod.artifact_id}"
                elif not shared(lambda m: (m.group_id, m.artifact_id)):
                    new = f"{sid}~{mod.group_id}:{mod.artifact_id}"
                else:
                    new = f"{sid}~{(mod.dir or 'root').replace('/', '.')}"
                renamed[id(p)] = clean_service_id(new)
            for p in group:
                new = renamed[id(p)]
                if new in taken and new != p.service_id:  # another deployable already has that id
                    new = clean_service_id(f"{new}~{(mods[id(p)].dir or 'root').replace('/', '.')}")
                mod = mods[id(p)]
                others = ", ".join(sorted(q.roots[0] for q in group if q is not p))
                ev = mod.evidence()
                p.findings.append(Finding("SERVICE_ID_COLLISION", f"service id {sid!r} is also the id of the "
                                          f"deployable module(s) {others}; this one is named {new!r}",
                                          ev.path, ev.start, ev.end, mod.build_file, f"collision|{sid}"))
                p.id_basis = dict(p.id_basis, collided_with=sid)
                p.service_id = new
                taken.add(new)

    def _is_config_server(self, pom_path: str) -> bool:
        """Whether a module is a Spring Cloud Config server: it depends on spring-cloud-config-server
        or one of its classes is annotated ``@EnableConfigServer``."""
        mod = self.inv.model.modules[pom_path]
        if any(d.ga == SERVER_ARTIFACT for d in mod.dependencies):
            return True
        pkg, simple = SERVER_ANNOTATION.rsplit(".", 1)
        for f in self.inv.files_by_module.get(pom_path, []):
            facts = self.facts.get(f.path) if f.kind == JAVA else None
            if facts is None:
                continue
            imported = any((i.name == SERVER_ANNOTATION and not i.wildcard) or (i.wildcard and i.name.removesuffix(".*")
                                                                                == pkg) for i in facts.imports)
            if any(a.name == SERVER_ANNOTATION or (a.name == simple and (imported or facts.package == pkg))
                   for td in facts.types for a in td.annotations):
                return True
        return False

    def _config_server_sources(self, plans: list[PackagePlan]) -> None:
        """Add to each client service the files a native config server of the repository serves it
        (config/configserver.py), above its own files. The client's name is read before (the files
        are chosen by it)."""
        model = self.inv.model
        servers = [native_server(p.roots[0], p.config, model.modules[p.roots[0]].resource_roots) for p in plans
                   if p.config is not None and self._is_config_server(p.roots[0])]
        if not any(srv.native for srv in servers):
            return
        own = {srv.module for srv in servers}
        for p in plans:
            if p.config is None or p.roots[0] in own:
                continue
            depends = any(d.ga in CLIENT_ARTIFACTS for m in p.modules for d in model.modules[m].dependencies)
            client, uri, service_id = uses_config_server(p.config, depends)
            if not client:
                continue
            srv = choose_server(servers, uri, service_id)
            mod = model.modules[p.roots[0]]
            if srv is not None and not srv.native:
                continue  # its files are in the server's git (or other) backend, not here
            if srv is None:
                via = uri or service_id or "its dependency on the config client"
                p.findings.append(Finding(
                    "CONFIG_VALUE_UNKNOWN", f"{p.roots[0]} reads a config server ({via}) and {len(servers)} "
                    f"config servers could serve it ({', '.join(sorted(s.module for s in servers))}): their files "
                    "are not read", mod.build_file, 0, 0, mod.build_file, "config-server|choice", "CONFIG"))
                continue
            name = p.config.not_chosen_by_name().get("spring.application.name")
            app, profiles = client_request(p.config, (name.value or "").strip() if name.status == "RESOLVED" and
                                           name.value and name.value.strip() else "application")
            served = served_files(srv, app, profiles, self.snapshot.by_path)
            add_file_sources(p.config, [(order, path, True) for order, path in served], self._read_text, -2)
            if served:
                p.config.profile_basis += f"; config server {srv.module} (native) serves {app}"

    def _read_text(self, path: str) -> tuple[str, str] | None:
        """A repository file as text with its blob sha, or None (not a readable blob)."""
        got = self.snapshot.read(path)
        if got.data is None:
            return None
        return decode_bytes(got.data).text, self.snapshot.by_path[path].oid

    def _spring_config(self, mod, profiles: list[str] | None) -> SpringConfig:
        paths = [f.path for f in self.inv.files_by_module.get(mod.build_file, []) if f.kind == CONFIG]
        files = spring_config_files(paths, mod.resource_roots)
        read_text = self._read_text

        cfg = load_spring_config(files, read_text, mod.property_lookup(), profiles, lambda loc: self._import_path(mod, loc))
        if "_remote_index" not in self.__dict__:
            module_dirs = [m.dir for m in self.inv.model.modules.values()]
            self._remote_index = remote_file_index(self.snapshot.by_path, module_dirs, self.config_dirs)
        add_remote_sources(cfg, self._remote_index, read_text)
        return cfg

    def _import_path(self, mod, location: str) -> str | None:
        """The repository file a ``spring.config.import`` location names for module ``mod``, or None:
        ``classpath:x`` (and a bare ``x``) in the resource roots of the module, then of the modules
        it depends on; ``file:x`` relative to the module's folder, then to the repository root
        (never outside the repository)."""
        if location.startswith("file:"):
            rel = location[len("file:"):].strip()
            if rel.startswith("/") or "\\" in rel:
                return None
            for base in (mod.dir, ""):
                p = posixpath.normpath(posixpath.join(base, rel)) if base else posixpath.normpath(rel)
                if not p.startswith("../") and p != ".." and p in self.snapshot.by_path:
                    return p
            return None
        rel = location[len("classpath:"):] if location.startswith("classpath:") else location
        rel = posixpath.normpath(rel.strip().lstrip("/"))
        if rel.startswith("..") or rel == ".":
            return None
        for m in [mod.build_file] + [d for d in self.closures.get(mod.build_file, []) if d != mod.build_file]:
            for root in self.inv.model.modules[m].resource_roots:
                p = f"{root}/{rel}" if root else rel
                if p in self.snapshot.by_path:
                    return p
        return None

    def _config_dirs(self) -> list[str]:
        """The ``--config-dir`` folders, repository-relative. Raises :class:`UserError` for a path that
        leaves the repository or names no folder of the tree at the commit."""
        out = []
        for raw in self.options.config_dirs:
            d = raw.strip().replace("\\", "/").strip("/")
            while d.startswith("./"):
                d = d[2:]
            d = "" if d == "." else d
            if raw.strip().startswith("/") or any(seg == ".." for seg in d.split("/")):
                raise UserError(f"--config-dir {raw}: write a folder of the repository, relative to its root")
            if d and not any(p.startswith(d + "/") for p in self.snapshot.by_path):
                raise UserError(f"--config-dir {raw}: no such folder in the tree at {self.commit[:12]}")
            out.append(d)
        return out

    def _service_id(self, mod, cfg: SpringConfig) -> tuple[str, dict]:
        """The service id from ``spring.application.name`` of the sources not chosen by that name,
        else the artifactId; with its basis."""
        rv = cfg.not_chosen_by_name().get("spring.application.name")
        if rv.status == "RESOLVED" and rv.value and rv.value.strip() and "@" not in rv.value:
            basis = {"source": "spring.application.name", "path": rv.path, "line": rv.entry.line if rv.entry else 0,
                     "value_basis": rv.basis}
            sid = clean_service_id(rv.value)
            if sid != rv.value.strip():
                basis["raw_value"] = rv.value
            return sid, basis
        basis = {"source": "artifactId", "spring_application_name": rv.status}
        if rv.status == "AMBIGUOUS":
            basis["candidates"] = [{"path": p, "value": v, "line": ln} for p, v, ln in rv.candidates]
        elif rv.entry is not None:
            basis["unresolved_value"] = rv.entry.value
            basis["path"] = rv.path
            basis["line"] = rv.entry.line
        return clean_service_id(mod.artifact_id or mod.dir.rsplit("/", 1)[-1] or "root"), basis


#: the scanner whose modules forked workers build (set only while they run)
_ACTIVE: "Scanner | None" = None


def _module_job(task: tuple[str, int, list[str]]) -> tuple[str, int, ModuleResult]:
    """Build and encode the records of one chunk of a module's files (in a forked worker or inline);
    chunk 0 also records the module itself."""
    pom_path, index, paths = task
    s = _ACTIVE
    assert s is not None
    from diting.scan.package import module_entity
    rs = RecordSet(s.repo_id, s.commit)
    if index == 0:
        module_rid = module_entity(s, rs, pom_path)
        module_evidence = [r.rid for r in rs.entities[module_rid]["evidence_refs"]]
    else:
        module_rid = ids.entity_record_id("MODULE", s.inv.ns[pom_path])
        module_evidence = []
    mj = ModuleJava(rs, s.inv.ns[pom_path], module_rid, s.inv.ns, s.folder, s.apps)
    probe = ModuleProbe(pom_path, s.inv.ns[pom_path], s.rule_index, s.oracle, s.expr_folder, erased_signature,
                        s.call_resolver)
    calls = ModuleCallSites(pom_path, s.inv.ns, s.call_resolver)
    for path in paths:
        facts = s.full_facts(path)
        mj.add_file(facts, s.scopes[path])
        probe.add_file(facts, s.scopes[path])
        calls.add_file(facts, s.scopes[path])
    resources = module_resources(s, pom_path) if index == 0 else ModuleResources()
    externals = {rid: rec for rid, rec in rs.entities.items() if rec["kind"] == "EXTERNAL"}
    encoded = rs.encode(s.placeholders, skip_entities=set(externals))
    hashes = {rid: seg["content_hash"] for rid, seg in rs.segments.items()}
    return pom_path, index, ModuleResult(pom_path, module_rid, module_evidence, encoded, externals, hashes, mj.result,
                                         probe.out + resources.candidates, resources.auto_configs,
                                         resources.web_contexts, resources.mappers, calls.bodies)


def _merge_chunks(chunks: list[ModuleResult]) -> ModuleResult:
    """One module's result from its chunks (in chunk order): equal EXTERNAL entities unite
    their evidence, every other record is kept once."""
    first = chunks[0]
    if len(chunks) == 1:
        return first
    encoded = EncodedSet()
    ext = RecordSet("", "")
    hashes: dict[str, str] = {}
    java = ModuleJavaResult()
    for c in chunks:
        encoded.merge(c.encoded)
        part = RecordSet("", "")
        part.entities = c.externals
        ext.merge(part)
        hashes.update(c.segment_hashes)
        java.files.extend(c.java.files)
        java.mains.extend(c.java.mains)
    return ModuleResult(first.module, first.module_rid, first.module_evidence, encoded, ext.entities, hashes, java,
                        [cand for c in chunks for cand in c.candidates], first.auto_configs, first.web_contexts,
                        first.mappers, [b for c in chunks for b in c.bodies])


def _package_job(plan: PackagePlan) -> "PackageResult":
    """Assemble and write one package (in a forked worker or inline)."""
    s = _ACTIVE
    assert s is not None
    from diting.scan.package import PackageAssembler
    return PackageAssembler(s).write(plan)


def scan(repo_path: str | os.PathLike[str], rev: str, options: ScanOptions) -> ScanResult:
    """Scan ``repo_path`` at ``rev`` into packages under ``options.out``.

    Raises :class:`UserError` for a missing path, a non-repository, an unknown
    revision, an empty tree, or a repository without pom.xml.
    """
    return Scanner(repo_path, rev, options).run()
