"""Stage ``sources``: every Java and config file of every module read; Java parsed in worker processes (docs/architecture.md §2.3).

Per-file work is a pure function of the file's bytes. What cannot be read or parsed becomes a file
problem (a :class:`~diting.findings.Finding`), later a diagnostic of the module's packages.
"""

from __future__ import annotations

import codecs
import dataclasses
import pickle
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from diting.cache import ScanCache, analyzer_digest, cache_key
from diting.config.sources import MAX_YAML_NODES, filter_resource, parse_config
from diting.config.spring import spring_config_files
from diting.findings import Finding
from diting.inventory.layout import CONFIG, JAVA, FileEntry
from diting.java.facts import FileFacts
from diting.checks import VALIDATE
from diting.java.syntax import check_expressions, extract_file, skeleton
from diting.source.snapshot import MAX_LINE_BYTES
from diting.source.text import DecodedText, decode_bytes
from diting.source.xmlsafe import parse_xml
from diting.workers import worker_count, worker_pool

if TYPE_CHECKING:
    from diting.scan.facts import ScanFacts
    from diting.scan.progress import Progress

NEEDS = ("inv", "snapshot", "options")
MAKES = ("file_problems", "config_states", "file_facts", "full_file_facts")


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


#: what a file's facts depend on besides its path, bytes and declared encoding (diting/cache.py)
FACT_SOURCES = ("diting.java", "diting.source.text")


def _parse_job(args: tuple[str, bytes, str | None, bool, str | None]
               ) -> tuple[FileFacts, bytes | FileFacts] | tuple[str, str]:
    """Parse one file into ``(skeleton, full facts)``; the full facts are pickled when they cross
    to another process, so the main process decodes only skeletons. With a cache directory (the
    last element), facts cached under the file's path, bytes, declared encoding and the extractor's
    source are read instead of parsed, and parsed ones kept. An unexpected failure comes back as
    ``(path, message)`` so the scan goes on."""
    path, data, enc, remote, cache_dir = args
    try:
        cache = ScanCache.opened(Path(cache_dir)) if cache_dir is not None else None
        key = cache_key(analyzer_digest(*FACT_SOURCES), path, enc or "", data) if cache is not None else ""
        facts = cache.get("facts", key) if cache is not None else None
        if not isinstance(facts, FileFacts) or facts.path != path:
            facts = extract_file(path, data, enc)  # every call with its arguments: call sites are resolved
            if cache is not None:
                cache.put("facts", key, facts)
        elif VALIDATE:  # what a parse checks with validation on, a cache hit is checked for too
            check_expressions(facts)
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


def read_sources(s: "ScanFacts", progress: "Progress") -> dict[str, Any]:
    """Read every Java and config file of every module; parse Java in worker processes."""
    file_problems: dict[str, Finding] = {}
    config_states: dict[str, ConfigFileState] = {}
    jobs: list[tuple[str, bytes, str | None, bool, str | None]] = []
    cache_dir = str(s.options.cache) if s.options.cache is not None else None
    java_files = [f for f in s.inv.files if f.kind == JAVA]
    progress.stage("reading sources", total=len(java_files))
    for f in s.inv.files:
        mod = s.inv.modules.get(f.module) if f.module else None
        if f.module is None:
            continue
        problem = _unread(f)
        if problem is not None:
            file_problems[f.path] = problem
            continue
        if f.kind not in (JAVA, CONFIG):
            continue
        got = s.snapshot.read(f.path)
        if got.data is None:
            file_problems[f.path] = _not_read(f, got, s.options.max_file_bytes)
            continue
        if f.kind == JAVA:
            if _binary_content(got.data):
                file_problems[f.path] = Finding(
                    "FILE_UNREADABLE", f"{f.path} has binary content (NUL bytes); not parsed as Java", f.path,
                    0, 0, f.module, "binary", "CODE")
                continue
            jobs.append((f.path, got.data, mod.source_encoding if mod else None, False, cache_dir))
        else:
            config_states[f.path] = check_config(f, got.data, mod)
    progress.stage("parsing Java", total=len(jobs))
    workers = worker_count(s.options.jobs, len(jobs) // 16)
    facts: dict[str, FileFacts] = {}
    full: dict[str, bytes | FileFacts] = {}

    def parsed(res: tuple) -> None:
        if isinstance(res[1], str):
            path, message = res
            file_problems[path] = Finding("PARSE_ERROR", f"{path}: {message}; no facts recorded", path, 0, 0,
                                          s.module_of(path), "extractor", "CODE")
        else:
            skel, whole = res
            facts[skel.path] = skel
            full[skel.path] = whole
        progress.advance()

    if workers > 1 and len(jobs) > 16:
        chunk = max(1, min(64, len(jobs) // (workers * 8) or 1))
        with worker_pool(workers) as pool:
            for res in pool.map(_parse_job, [j[:3] + (True,) + j[4:] for j in jobs], chunksize=chunk):
                parsed(res)
    else:
        for job in jobs:
            parsed(_parse_job(job))
    if cache_dir is not None:
        ScanCache.opened(Path(cache_dir)).prune()
    return {"file_problems": file_problems, "config_states": config_states, "file_facts": facts,
            "full_file_facts": full}


def _unread(f: FileEntry) -> Finding | None:
    """Why a tree entry is not read as a file (refused path, submodule, unlisted tree), or None."""
    if f.entry.refused is not None:
        return Finding("PATH_OUTSIDE_TREE", f"{f.path} is a tree entry git refuses to check out ({f.entry.refused}); "
                       "it is not read as a file of the repository", f.path, 0, 0, f.module, "refused-path", "CODE")
    if f.entry.is_gitlink:
        return Finding("FILE_UNREADABLE", f"{f.path} is a git submodule (gitlink {f.entry.oid[:12]}); its content is "
                       "not in this repository's tree and is not scanned", f.path, 0, 0, f.module, "gitlink", "CODE")
    if f.entry.is_unlisted_tree:
        return Finding("FILE_UNREADABLE", f"{f.path}: {f.entry.unlisted}; the files below it are not read", f.path,
                       0, 0, f.module, "unlisted-tree", "CODE")
    return None


def _not_read(f: FileEntry, got, max_file_bytes: int) -> Finding:
    """The finding of a blob the snapshot did not read (over a limit, an LFS pointer, missing)."""
    code = "FILE_TOO_LARGE" if (got.problem or "").startswith("too_large") else "FILE_UNREADABLE"
    msg = {
        "too_large": f"{f.path} has {got.size} bytes, over the limit of {max_file_bytes}; not read",
        "too_large_line": f"{f.path} has a line of more than {MAX_LINE_BYTES} bytes: evidence cites whole "
                          "lines, and one that long could not be a record; not read",
        "lfs_pointer": f"{f.path} is a Git LFS pointer; the content is not in git",
        "missing_object": f"{f.path}: blob {f.entry.oid[:12]} is missing from the object database "
                          "(a partial or shallow clone?); not read",
        "not_a_blob": f"{f.path}: the tree entry names object {f.entry.oid[:12]}, which is not a blob; not read",
    }.get(got.problem or "", f"{f.path} not read: {got.problem}")
    return Finding(code, msg, f.path, 0, 0, f.module, got.problem or "", "CODE" if f.kind == JAVA else "CONFIG")


def check_config(f: FileEntry, data: bytes, mod) -> ConfigFileState:
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
