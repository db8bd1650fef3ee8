"""Stages ``names`` and ``modules``: types resolved per module, then each module's records built once (docs/architecture.md §2.4).

A module's records do not depend on the services that include it: they are built and encoded once,
in forked workers over chunks of about :data:`CHUNK_LINES` lines, and reused by every package that
holds the module.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from diting.ir import ids
from diting.ir.builder import EncodedSet, Placeholders, RecordSet
from diting.java.constants import ConstantFolder
from diting.java.names import FileScope, TypeRegistry, VisibleTypes, jdk_catalog, module_types
from diting.java.records import ModuleJava, ModuleJavaResult
from diting.java.facts import FileFacts
from diting.inventory.layout import JAVA
from diting.probes.candidates import ModuleProbe, erased_signature
from diting.probes.resources import ModuleResources, module_resources
from diting.probes.rule_index import RuleIndex
from diting.resolve.callfacts import MethodBody
from diting.resolve.callsites import ModuleCallSites
from diting.resolve.calls import CallResolver
from diting.resolve.fold import ExpressionFolder
from diting.resolve.types import TypeOracle
from diting.scan import kept
from diting.scan.module_entity import module_entity
from diting.workers import shared_map

if TYPE_CHECKING:
    from diting.scan.facts import ScanFacts
    from diting.scan.progress import Progress

#: a module's files are built into records in tasks of about this many lines
CHUNK_LINES = 15000

NAMES_NEEDS = ("inv", "closures", "file_facts", "rules")
NAMES_MAKES = ("java_by_module", "scopes", "folder", "oracle", "call_resolver", "rule_index", "expr_folder", "apps",
               "scanning_apps", "placeholders")
#: what a module's chunk job reads (module_entity, ModuleJava, ModuleProbe, ModuleCallSites, module_resources)
MODULES_NEEDS = ("options", "repo_id", "commit", "inv", "links", "closures", "snapshot", "rules", "file_problems",
                 "config_states", "file_facts", "full_file_facts", "java_by_module", "scopes", "folder", "oracle",
                 "call_resolver", "rule_index", "expr_folder", "apps", "placeholders")
MODULES_MAKES = ("module_results",)


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
    #: what the rules matched in the module (docs/middleware.md §1), decided per package by probes/mechanisms.py
    candidates: list[dict] = field(default_factory=list)
    #: auto-configuration classes listed in spring.factories / AutoConfiguration.imports
    auto_configs: list[dict[str, Any]] = field(default_factory=list)
    #: context config locations of web.xml files
    web_contexts: list[str] = field(default_factory=list)
    #: mapper files of the module (sql/mybatis.py)
    mappers: list = field(default_factory=list)
    #: member bodies with their resolved call sites and branch arms (resolve/callsites.py)
    bodies: list[MethodBody] = field(default_factory=list)


def resolve_names(s: "ScanFacts", progress: "Progress") -> dict[str, Any]:
    """Resolve type names per module (visible: its own types and its closure's) and fold constants."""
    by_module: dict[str, list[FileFacts]] = {}
    for f in s.inv.files:
        if f.kind == JAVA and f.path in s.file_facts and f.module:
            by_module.setdefault(f.module, []).append(s.file_facts[f.path])
    types_of = {m: module_types(m, files) for m, files in by_module.items()}
    scopes: dict[str, FileScope] = {}
    folder = ConstantFolder()
    registry = TypeRegistry()
    catalog = jdk_catalog().with_libraries(s.rules.library_types())
    for m in sorted(s.inv.modules):
        own = types_of.get(m, [])
        deps: list = []
        for other in s.closures.get(m, [m])[1:]:
            deps.extend(types_of.get(other, []))
        visible = VisibleTypes(own, deps, catalog)
        if visible.own_module is None:
            visible.own_module = m
        for facts in by_module.get(m, []):
            scope = FileScope(facts, visible)
            registry.add(m, scope)
            scopes[facts.path] = scope
    for m in sorted(s.inv.modules):
        for facts in by_module.get(m, []):
            folder.add_file(m, facts, scopes[facts.path])
    folder.precompute()
    oracle = TypeOracle(registry, s.rules.library_returns(), s.rules.library_fields())
    rule_index = RuleIndex.build(list(s.rules.by_id.values()))
    return {"java_by_module": by_module, "scopes": scopes, "folder": folder, "oracle": oracle,
            "call_resolver": CallResolver(oracle), "rule_index": rule_index,
            "expr_folder": ExpressionFolder(folder, registry, oracle, rule_index.config_annotations,
                                            rule_index.config_prefix_annotations),
            "apps": s.rules.application_annotations(),
            "scanning_apps": s.rules.application_annotations(scanning=True), "placeholders": Placeholders()}


def build_modules(s: "ScanFacts", progress: "Progress") -> dict[str, Any]:
    """Build and encode every module's records, rule candidates and call facts (chunks in workers)."""
    tasks = record_tasks(s)
    progress.stage("building records", total=len(tasks))
    parts: dict[str, list[tuple[int, ModuleResult]]] = {}
    for res in shared_map(module_job, s, tasks, s.options.jobs):
        parts.setdefault(res[0], []).append((res[1], res[2]))
        progress.advance()
    return {"module_results": {m: merge_chunks([r for _, r in sorted(chunks, key=lambda x: x[0])])
                               for m, chunks in parts.items()}}


def record_tasks(s: "ScanFacts") -> list[tuple[str, int, list[str]]]:
    """Record-building tasks ``(module, chunk index, file paths)``, biggest first.

    A module's files are split into chunks of about :data:`CHUNK_LINES` lines so that one
    big module does not leave a core idle; files that declare the same type name stay in
    one chunk, where duplicates are decided. Chunk 0 of each module records the module."""
    tasks: list[tuple[int, str, int, list[str]]] = []
    for m in sorted(s.inv.modules):
        files = sorted(s.java_by_module.get(m, []), key=lambda f: f.path)
        owner: dict[str, int] = {}
        group_of = list(range(len(files)))

        def find(i: int) -> int:
            while group_of[i] != i:
                group_of[i] = group_of[group_of[i]]
                i = group_of[i]
            return i

        for i, f in enumerate(files):
            for td in f.types:
                b = s.scopes[f.path].binary_of(td)
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


def module_job(s: "ScanFacts", task: tuple[str, int, list[str]]) -> tuple[str, int, ModuleResult]:
    """Build and encode the records of one chunk of a module's files (in a forked worker or inline);
    chunk 0 also records the module itself. With a scan cache, a chunk whose inputs did not change
    is read from it (``scan/kept.py``), and one built is kept there."""
    pom_path, index, paths = task
    if s.options.cache is None:
        return pom_path, index, _build_chunk(s, pom_path, index, paths)
    from diting.cache import ScanCache
    cache, key = ScanCache.opened(s.options.cache), kept.module_key(s, pom_path, index, paths)
    entry = cache.get(kept.MODULE, key)
    result = kept.restamped_module(s, entry, ModuleResult) if isinstance(entry, dict) else None
    if result is None:
        result = _build_chunk(s, pom_path, index, paths)
        cache.put(kept.MODULE, key, kept.kept_module(result, s.commit, (s.placeholders.scan, s.placeholders.scope)))
    return pom_path, index, result


def _build_chunk(s: "ScanFacts", pom_path: str, index: int, paths: list[str]) -> ModuleResult:
    """The records of one chunk (see :func:`module_job`)."""
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
    return ModuleResult(pom_path, module_rid, module_evidence, encoded, externals, hashes, mj.result,
                        probe.out + resources.candidates, resources.auto_configs, resources.web_contexts,
                        resources.mappers, calls.bodies)


def merge_chunks(chunks: list[ModuleResult]) -> ModuleResult:
    """One module's result from its chunks (in chunk order): equal EXTERNAL entities unite
    their evidence, every other record is kept once."""
    first = chunks[0]
    if len(chunks) == 1:
        return first
    encoded = EncodedSet()
    ext = RecordSet("", "")
    hashes = ext.foreign_hashes  # every chunk's segments, known as the externals' evidence is united
    java = ModuleJavaResult()
    for c in chunks:
        encoded.merge(c.encoded)
        hashes.update(c.segment_hashes)
        part = RecordSet("", "")
        part.entities = c.externals
        ext.merge(part)
        java.files.extend(c.java.files)
        java.mains.extend(c.java.mains)
    return ModuleResult(first.module, first.module_rid, first.module_evidence, encoded, ext.entities, hashes, java,
                        [cand for c in chunks for cand in c.candidates], first.auto_configs, first.web_contexts,
                        first.mappers, [b for c in chunks for b in c.bodies])
