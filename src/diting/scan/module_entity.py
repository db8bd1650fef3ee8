"""The MODULE entity of a module and its file diagnostics, and a finding written as a diagnostic (docs/ir.md).

Made once per module by stage ``modules`` (chunk 0 of each module) and read by every package that
holds it; :func:`finding_diagnostic` is also how a package records its own findings.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from diting.findings import Finding
from diting.inventory.layout import BUILD, CONFIG, JAVA
from diting.ir.builder import RecordSet
from diting.source.text import GUESS_REASONS, decode_bytes, guessed_message, uncertain_message
from diting.source.xmlsafe import decode_xml

if TYPE_CHECKING:
    from diting.scan.facts import ScanFacts


def finding_diagnostic(s: "ScanFacts", rs: RecordSet, f: Finding, module_rid: str | list[str] | None) -> str:
    """Record a finding as a diagnostic in ``rs`` (evidence from the file's lines when it has any);
    ``module_rid`` is the affected record (or records)."""
    evidence: list[str] = []
    if f.path and f.start_line > 0:
        lines, enc = s.text_lines(f.path)
        if lines:
            evidence.append(rs.segment(f.path, lines, f.start_line, f.end_line or f.start_line, f.source_type, enc))
    affected = module_rid if isinstance(module_rid, list) else [module_rid] if module_rid else []
    return rs.diagnostic(f.code, f.identity + "|" + f.code, f.message, affected, evidence)


def module_entity(s: "ScanFacts", rs: RecordSet, pom_path: str) -> str:
    """The MODULE entity of ``pom_path`` and its findings (pom, files) into ``rs``; returns its record_id."""
    mod = s.inv.modules[pom_path]
    ns = s.inv.ns[pom_path]
    where = mod.evidence()
    ev = rs.segment(where.path, where.lines, where.start, where.end, "BUILD", where.encoding)
    role, role_basis = mod.role()
    model = s.inv.model
    attrs: dict[str, Any] = {
        "build_system": mod.build_system, "build_file": pom_path, "dir": mod.dir, "group_id": mod.group_id, "artifact_id": mod.artifact_id,
        "version": mod.version, "packaging": mod.packaging, "role": role, "role_basis": role_basis,
        "parent": mod.parent_path or mod.parent_external, "parent_status": mod.parent_status,
        "active_maven_profiles": mod.active_profiles, "java_level": mod.java_level,
        "source_roots": mod.source_roots, "resource_roots": mod.resource_roots,
        "reactor_root": model.reactor_root(pom_path), "failed": mod.failed,
        "test_dependencies": sorted(d.coordinate for d in mod.dependencies if d.scope == "test"),
    }
    attrs.update(mod.extra_attributes())
    rid = rs.entity("MODULE", ns, mod.coordinate if not mod.failed else pom_path, [ev], attrs)
    links = s.links.get(pom_path)
    for f in mod.findings + (links.findings if links else []):
        finding_diagnostic(s, rs, f, rid)
    for f in s.inv.files_by_module.get(pom_path, []):
        prob = s.file_problems.get(f.path)
        if prob is not None:
            finding_diagnostic(s, rs, prob, rid)
        cs = s.config_states.get(f.path)
        if cs is not None and cs.problem is not None:
            if cs.problem == "lossy":
                finding_diagnostic(s, rs, Finding("ENCODING_FALLBACK", f"{f.path}: bytes valid in no supported "
                                                        "encoding were replaced by U+FFFD", f.path, 0, 0, pom_path,
                                                        "lossy", "CONFIG"), rid)
            else:
                line = cs.line or 0
                finding_diagnostic(s, rs, Finding(cs.code, f"{f.path}: {cs.problem}"
                                                        + (f" (line {line})" if line else ""), f.path, line, line,
                                                        pom_path, "config", "CONFIG"), rid)
    _encodings(s, rs, pom_path, rid)
    return rid


def _decoding(s: "ScanFacts", f) -> tuple[str, str, str | None, tuple[int, ...], str] | None:
    """``(encoding, basis, doubt, doubt lines, source type)`` of a file of a module as the scan
    decoded it: Java from its facts (the Java records say its doubt), config from its state, build
    files decoded again (they are few and small); None for a file not read."""
    if f.kind == JAVA:
        facts = s.file_facts.get(f.path)
        return (facts.encoding, facts.encoding_basis, None, (), "CODE") if facts is not None else None
    if f.kind == CONFIG:
        cs = s.config_states.get(f.path)
        return (cs.encoding, cs.encoding_basis, cs.encoding_doubt, cs.doubt_lines, "CONFIG") if cs else None
    if f.kind == BUILD and f.path not in s.file_problems:
        got = s.snapshot.read(f.path)
        if got.data is not None:
            d = decode_xml(got.data) if f.path.endswith(".xml") else decode_bytes(got.data)
            return d.encoding, d.basis, d.doubt, d.doubt_lines, "BUILD"
    return None


def _encodings(s: "ScanFacts", rs: RecordSet, pom_path: str, module_rid: str) -> None:
    """ENCODING_UNCERTAIN for each config and build file of the module whose text may be misread, and
    one ENCODING_GUESSED per encoding and guess among its files (a Chinese estate's hundreds of GBK
    files are one diagnostic), citing the first file's first line."""
    groups: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for f in s.inv.files_by_module.get(pom_path, []):
        got = _decoding(s, f)
        if got is None:
            continue
        encoding, basis, doubt, lines, source_type = got
        if doubt:
            line = (lines or (1,))[0]
            finding_diagnostic(s, rs, Finding("ENCODING_UNCERTAIN", uncertain_message(f.path, encoding, basis,
                                                                                            doubt),
                                                    f.path, line, line, pom_path, "encoding", source_type), module_rid)
        if basis in GUESS_REASONS:
            groups.setdefault((encoding, basis), []).append((f.path, source_type))
    declared = s.inv.modules[pom_path].source_encoding
    for (encoding, basis), files in sorted(groups.items()):
        paths = sorted(p for p, _ in files)
        first = min(files)
        finding_diagnostic(s, rs, Finding("ENCODING_GUESSED", guessed_message(encoding, basis, paths, declared),
                                                first[0], 1, 1, pom_path, f"guessed|{encoding}|{basis}", first[1]),
                           module_rid)
