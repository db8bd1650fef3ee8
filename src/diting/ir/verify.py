"""``diting verify``: check an IR package against the package contract of docs/ir.md (levels: docs/ir.md §12).

Always: the manifest validates against the frozen IR manifest 0.1 schema; the
file list equals the directory; no jsonl line is longer than
:data:`~diting.ir.canonical.MAX_RECORD_BYTES`; every file's sha256 and record count match;
``analysis_input.json`` hashes to ``input_digest`` and ``scan_id`` derives from
it. With ``deep``: every record — JSON per line, canonical bytes, sort order,
model validation, id formats and derivations, record_id uniqueness across
files, reference closure, legal relation endpoints, resolution invariants,
segment hashes and redaction spans, recomputed revisions, coverage sums.
With ``repo``: every segment's text re-read from the repository at
``commit_sha``, redactions re-applied, both hashes checked.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import orjson
from pydantic import ValidationError

from diting.errors import UserError
from diting.ir import ids
from diting.ir.canonical import (JSON_STRING, MAX_JSON_DEPTH, MAX_RECORD_BYTES, JsonTooDeep, dumps, loads,
                                 long_line, sha256_hex, too_deep_line)
from diting.ir.models import (
    BYTES_CHECKED,
    DIAGNOSTIC_SEVERITY,
    JSONL_MODELS,
    LEGAL_RELATIONS,
    PACKAGE_FILES,
    validate_record,
)
from diting.ir.redaction import redact
from diting.ir.writer import manifest_validator
from diting.source.text import decode_as, split_lines
from diting.userfiles import read_regular


@dataclass(frozen=True)
class VerifyFinding:
    """One problem: the file, the 1-based line, the record and what is wrong."""

    file: str | None
    line: int | None
    record_id: str | None
    message: str

    def as_dict(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "record_id": self.record_id, "message": self.message}

    def __str__(self) -> str:
        loc = self.file or "package"
        if self.line:
            loc += f":{self.line}"
        rec = f" [{self.record_id}]" if self.record_id else ""
        return f"{loc}{rec}: {self.message}"


_REF_KEYS = {"scan_id", "record_id"}


def _is_ref(v: dict[str, Any]) -> bool:
    """A ``{scan_id, record_id}`` reference: both text (an object of that shape holding other values,
    in free-form attributes, is data, not a reference)."""
    return len(v) == 2 and v.keys() == _REF_KEYS and isinstance(v["scan_id"], str) and \
        isinstance(v["record_id"], str)


def _refs(value: Any) -> list[dict[str, Any]]:
    """Every ``{scan_id, record_id}`` reference inside ``value`` (iterative: no recursion over
    input)."""
    out: list[dict[str, Any]] = []
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            if _is_ref(v):
                out.append(v)
            else:
                stack.extend(x for x in v.values() if isinstance(x, (dict, list)))
        elif isinstance(v, list):
            stack.extend(x for x in v if isinstance(x, (dict, list)))
    return out


def _ref_paths(value: Any) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every reference inside ``value`` with its JSON path, in document order (for messages)."""
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        path, v = stack.pop()
        if isinstance(v, dict):
            if _is_ref(v):
                yield path, v
                continue
            stack.extend((f"{path}.{k}" if path else k, x) for k, x in reversed(list(v.items())))
        elif isinstance(v, list):
            stack.extend((f"{path}[{i}]", v[i]) for i in reversed(range(len(v))))


_FLOAT = re.compile(rb"[0-9][.eE]")


def canonical_problem(line: bytes, obj: Any) -> str | None:
    """Why ``line`` (one JSON value, ``obj`` parsed from it) is not canonical IR JSON — a
    floating-point number, or other bytes than the canonical writer's (key order, whitespace,
    escaping) — or None. Linear in the line; no recursion."""
    if _FLOAT.search(JSON_STRING.sub(b"", line)):
        return "floating-point number: IR values never hold floats"
    try:
        if line != orjson.dumps(obj, option=orjson.OPT_SORT_KEYS):
            return "not in canonical form (key order, whitespace or escaping)"
    except orjson.JSONEncodeError as exc:
        return f"not canonical JSON: {exc}"
    return None


class _Verifier:
    def __init__(self, pkg: Path, deep: bool, repo: Path | None) -> None:
        self.pkg = pkg
        self.deep = deep
        self.repo = repo
        self.findings: list[VerifyFinding] = []
        self.manifest: dict[str, Any] = {}
        self.records: dict[str, dict[str, list[tuple[int, dict[str, Any]]]]] = {}
        #: (file, line, record_id, record, its references) of every record read by the deep check
        self.refs: list[tuple[str, int, Any, dict[str, Any], list[dict[str, Any]]]] = []

    def add(self, file: str | None, line: int | None, rid: str | None, msg: str) -> None:
        self.findings.append(VerifyFinding(file, line, rid, msg))

    # ------------------------------------------------------------ files
    def run(self) -> list[VerifyFinding]:
        """Every check of the package, its findings in order; raises :class:`UserError` when the path is
        no package directory (missing, not a directory, no ``manifest.json``)."""
        if not self.pkg.exists():
            raise UserError(f"package not found: {self.pkg}")
        if not self.pkg.is_dir():
            raise UserError(f"not a package directory: {self.pkg}")
        mpath = self.pkg / "manifest.json"
        if not (mpath.is_file() or mpath.is_symlink()):
            raise UserError(f"not an IR package (no manifest.json): {self.pkg}")
        if not self._read_manifest(mpath):
            return self.findings
        listed, present = self._file_list()
        contents = self._read_files(listed, present)
        ai = contents.get("analysis_input.json")
        if ai is not None:
            if sha256_hex(ai) != self.manifest["input_digest"]:
                self.add("analysis_input.json", None, None, "sha256 differs from manifest.input_digest")
            expected_scan = ids.scan_id_for(self.manifest["service_id"], self.manifest["input_digest"])
            if self.manifest["scan_id"] != expected_scan:
                self.add("manifest.json", None, None, f"scan_id {self.manifest['scan_id']!r} does not derive from "
                                                      f"service_id and input_digest ({expected_scan!r})")
        if self.manifest.get("coverage_ref") not in listed:
            self.add("manifest.json", None, None, "coverage_ref names no listed file")
        self._manifest_bound(contents)
        if self.deep:
            self._deep(contents)
        if self.repo is not None:
            self._segments_from_repo(contents)
        return self.findings

    def _read_manifest(self, mpath: Path) -> bool:
        """Reads ``manifest.json`` into ``self.manifest``: a regular file, JSON no deeper than
        :data:`MAX_JSON_DEPTH`, valid against the IR manifest 0.1 schema (then also checked for
        canonical form). False, with the findings added, when the other checks cannot read it."""
        raw = read_regular(mpath)
        if raw is None:
            self.add("manifest.json", None, None, _unread(mpath))
            return False
        try:
            self.manifest = loads(raw.decode("utf-8"))
        except JsonTooDeep as exc:
            self.add("manifest.json", exc.line, None, f"JSON nested more than {MAX_JSON_DEPTH} levels deep")
            return False
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            self.add("manifest.json", None, None, f"not valid JSON: {exc}")
            return False
        errors = sorted(manifest_validator().iter_errors(self.manifest), key=lambda e: list(e.path))
        for e in errors:
            where = "/".join(str(p) for p in e.path) or "(root)"
            self.add("manifest.json", None, None, f"IR manifest 0.1 schema: {where}: {e.message}")
        if errors:
            return False
        if raw != (dumps(self.manifest) + "\n").encode("utf-8"):  # a repeated key reads differently elsewhere
            self.add("manifest.json", None, None, "not in canonical form (key order, whitespace, escaping or a "
                                                  "repeated key)")
        return True

    def _file_list(self) -> tuple[dict[str, dict[str, Any]], set[str]]:
        """The manifest's file list against the directory: ``(listed, present)`` — the manifest's file
        entries by path, and the names in the directory other than ``manifest.json``. Adds a finding for
        a list not sorted or repeating, a name no package holds, a file not regular, a file present but
        not listed and a required file not listed."""
        paths = [f["path"] for f in self.manifest["files"]]
        if paths != sorted(set(paths)):
            self.add("manifest.json", None, None, "files are not listed once each, sorted by path")
        for name in sorted(set(paths) - set(PACKAGE_FILES)):
            self.add(name, None, None, f"not a file of an IR package (a package holds {', '.join(PACKAGE_FILES)})")
        listed = {f["path"]: f for f in self.manifest["files"]}
        present = {p.name for p in self.pkg.iterdir() if p.name != "manifest.json"}
        for name in sorted(present | {"manifest.json"}):
            kind = _not_regular(self.pkg / name)
            if kind is not None:  # a symlink's target (a copy elsewhere) would pass every digest
                self.add(name, None, None, f"a package holds regular files only; this is {kind}")
        for name in sorted(present - set(listed)):
            self.add(name, None, None, "file in the package but not listed in the manifest")
        for name in sorted(set(PACKAGE_FILES) - set(listed)):
            self.add(name, None, None, "required file not listed in the manifest")
        return listed, present

    def _read_files(self, listed: dict[str, dict[str, Any]], present: set[str]) -> dict[str, bytes]:
        """The bytes of every listed file that is present, regular and safe to parse (no record longer
        than :data:`MAX_RECORD_BYTES`, no JSON deeper than :data:`MAX_JSON_DEPTH`), by name; each read
        file's sha256 and record count are checked against its manifest entry."""
        contents: dict[str, bytes] = {}
        for name, entry in sorted(listed.items()):
            fpath = self.pkg / name
            if name not in present:
                self.add(name, None, None, "listed in the manifest but missing")
                continue
            data = read_regular(fpath)
            if data is None:
                if _not_regular(fpath) is None:  # a regular file that could not be read (permissions …)
                    self.add(name, None, None, _unread(fpath))
                continue  # not a regular file: said above
            long = long_line(data) if name.endswith(".jsonl") else None
            if long is not None:  # refused before a reader (JSON parser, DuckDB) holds it whole
                self.add(name, long[0], None, f"a record of {long[1]} bytes, longer than the {MAX_RECORD_BYTES} "
                                              "bytes a record may be")
                continue
            deep = too_deep_line(data, per_line=name.endswith(".jsonl"))
            if deep is not None:  # refused before any reader (JSON parser, record walker) recurses into it
                self.add(name, deep, None, f"JSON nested more than {MAX_JSON_DEPTH} levels deep")
                continue
            contents[name] = data
            if sha256_hex(data) != entry["sha256"]:
                self.add(name, None, None, f"sha256 {sha256_hex(data)[:16]}… differs from the manifest's "
                                           f"{entry['sha256'][:16]}…")
            count = 1 if name.endswith(".json") else data.count(b"\n") + (0 if not data or data.endswith(b"\n") else 1)
            if count != entry["record_count"]:
                self.add(name, None, None, f"{count} records, the manifest says {entry['record_count']}")
        return contents

    def _manifest_bound(self, contents: dict[str, bytes]) -> None:
        """Every manifest field is covered by a digest: the constants by the schema, the files by
        their sha256, ``scan_id`` by its derivation, the identity fields by ``analysis_input.json``
        (whose sha256 is ``input_digest``) and ``status`` by ``coverage.json``'s
        ``package_status`` (whose sha256 is listed). An edit of the manifest alone is found here;
        one that re-hashes what it changed is found by ``--rederive``."""
        m = self.manifest
        ai = json_object(contents.get("analysis_input.json"))
        if ai is not None:
            service = ai.get("service") if isinstance(ai.get("service"), dict) else {}
            tools = ai.get("tool_versions") if isinstance(ai.get("tool_versions"), dict) else {}
            snapshots = ai.get("config_snapshot_refs")
            bound = {
                "service_id": service.get("service_id"), "repo_id": ai.get("repo_id"),
                "commit_sha": ai.get("commit_sha"), "analyzer_version": tools.get("diting"),
                "config_snapshot_refs": sorted(r.get("snapshot_id") for r in snapshots if isinstance(r, dict))
                if isinstance(snapshots, list) else None,
                "dependency_artifacts": ai.get("dependency_artifacts_read") or None,
                "deployment_refs": None,  # no scan input names a deployment
            }
            for key, expected in bound.items():
                if m.get(key) != expected:
                    self.add("manifest.json", None, None, f"{key} {m.get(key)!r} differs from what "
                                                          f"analysis_input.json records ({expected!r})")
            if service.get("kind") not in ("SERVICE", "LIB"):  # what the graph and coverage read a package as
                self.add("analysis_input.json", None, None, f"service.kind {service.get('kind')!r} is neither SERVICE "
                                                            "nor LIB")
        cov = json_object(contents.get("coverage.json"))
        if cov is not None:
            ps = cov.get("package_status")
            recorded = ps.get("status") if isinstance(ps, dict) else None
            if m.get("status") != recorded:
                self.add("manifest.json", None, None, f"status {m.get('status')!r} differs from coverage.json's "
                                                      f"package_status ({recorded!r})")

    # ------------------------------------------------------------ deep
    def _deep(self, contents: dict[str, bytes]) -> None:
        """The record-level checks (``deep``): ``analysis_input.json`` in canonical form, every JSONL
        record read and checked (:meth:`_read_jsonl`), references closed, ids, entities, relations,
        segments, ledger items, diagnostic severities, ``coverage.json`` and the package status."""
        scan_id = self.manifest["scan_id"]
        scope = ids.implementation_scope_for(self.manifest["service_id"], self.manifest["commit_sha"])
        self._analysis_input(contents.get("analysis_input.json"))
        owner: dict[str, tuple[str, int]] = {}
        for name, model in JSONL_MODELS.items():
            data = contents.get(name)
            if data is None:
                continue
            self.records[name] = self._read_jsonl(name, model, data, scan_id, owner)
        entities = {o["record_id"]: o for _, o in self.records.get("entities.jsonl", [])}
        segments = {o["record_id"]: o for _, o in self.records.get("source_segments.jsonl", [])}
        diagnostics = {o["record_id"]: o for _, o in self.records.get("diagnostics.jsonl", [])}
        # ids, scopes, references
        for name, lineno, rid, o, refs in self.refs:
            if any(ref.get("record_id") not in owner for ref in refs):
                for where, ref in _ref_paths(o):
                    if ref.get("record_id") not in owner:
                        self.add(name, lineno, rid, f"{where} refers to {ref.get('record_id')!r}, which is not in "
                                                    "the package")
            self._ids(name, lineno, o, scope)
        self.refs = []
        for lineno, o in self.records.get("entities.jsonl", []):
            self._entity(lineno, o, segments)
        for lineno, o in self.records.get("relations.jsonl", []):
            self._relation(lineno, o, entities, diagnostics)
        for lineno, o in self.records.get("source_segments.jsonl", []):
            self._segment(lineno, o)
        relations = {o["record_id"]: o for _, o in self.records.get("relations.jsonl", [])}
        ledger = {o["record_id"]: o for _, o in self.records.get("branch_ledger.jsonl", [])}
        for lineno, o in self.records.get("branch_ledger.jsonl", []):
            self._ledger_item(lineno, o, entities, relations, ledger)
        for lineno, o in self.records.get("diagnostics.jsonl", []):
            if o.get("code") in DIAGNOSTIC_SEVERITY and o.get("severity") != DIAGNOSTIC_SEVERITY[o["code"]].value:
                self.add("diagnostics.jsonl", lineno, o.get("record_id"), "severity differs from the catalogue")
        self._coverage(contents.get("coverage.json"), scan_id, entities)
        self._status(diagnostics)

    def _analysis_input(self, ai: bytes | None) -> None:
        """``analysis_input.json`` (when read) in canonical form and naming the manifest's commit."""
        if ai is None:
            return
        try:
            ai_obj = json.loads(ai.decode("utf-8"))
            if ai != (dumps(ai_obj) + "\n").encode("utf-8"):
                self.add("analysis_input.json", None, None, "not in canonical form")
            if ai_obj.get("commit_sha") != self.manifest["commit_sha"]:
                self.add("analysis_input.json", None, None, "commit_sha differs from the manifest")
        except (UnicodeDecodeError, json.JSONDecodeError, ValueError) as exc:
            self.add("analysis_input.json", None, None, f"not valid canonical JSON: {exc}")

    def _read_jsonl(self, name: str, model: Any, data: bytes, scan_id: str,
                    owner: dict[str, tuple[str, int]]) -> list[tuple[int, dict[str, Any]]]:
        """The valid records of JSONL file ``name`` as ``[(line number, record)]``: each line a JSON
        object, canonical, valid against ``model``, sorted by a record_id used nowhere else, every
        reference into this ``scan_id``. ``owner`` (record_id → (file, line) of its first use, across
        files) is filled as records are read, an invalid record's id included (no cascade of dangling
        references to it); each valid record and its references are queued on ``self.refs``."""
        recs: list[tuple[int, dict[str, Any]]] = []
        prev = None
        for lineno, line in enumerate(data.split(b"\n")[:-1] if data.endswith(b"\n") else data.split(b"\n"), 1):
            if not line and not data:
                continue
            try:
                obj = orjson.loads(line)  # UTF-8 checked; NaN, lone surrogates refused
            except orjson.JSONDecodeError as exc:
                self.add(name, lineno, None, f"not valid JSON: {exc}")
                continue
            if not isinstance(obj, dict):
                self.add(name, lineno, None, "a line must be a JSON object")
                continue
            rid = obj.get("record_id")
            why = canonical_problem(line, obj)
            if why is not None:
                self.add(name, lineno, rid, why)
            context = BYTES_CHECKED if why is None else None
            try:
                validate_record(model, obj, context)
            except ValidationError as exc:
                first = exc.errors()[0]
                where = ".".join(str(p) for p in first["loc"] if p != "root")
                self.add(name, lineno, rid if isinstance(rid, str) else None,
                         f"invalid record: {where}: {first['msg']}")
                if isinstance(rid, str) and rid not in owner:
                    owner[rid] = (name, lineno)  # it exists: no cascade of dangling references to it
                continue  # the checks below read its fields as the model types them
            if not isinstance(rid, str):
                continue
            if prev is not None and rid <= prev:
                self.add(name, lineno, rid, "lines are not sorted by record_id (or a record_id repeats)")
            prev = rid
            if rid in owner:
                self.add(name, lineno, rid, f"record_id also used in {owner[rid][0]}:{owner[rid][1]}")
            else:
                owner[rid] = (name, lineno)
            refs = _refs(obj)
            if any(ref.get("scan_id") != scan_id for ref in refs):
                for where, ref in _ref_paths(obj):
                    if ref.get("scan_id") != scan_id:
                        self.add(name, lineno, rid, f"{where} refers to scan {ref.get('scan_id')!r}, not this "
                                                    "package's scan_id")
            recs.append((lineno, obj))
            self.refs.append((name, lineno, rid, obj, refs))
        return recs

    def _coverage(self, cov: bytes | None, scan_id: str, entities: dict[str, dict[str, Any]]) -> None:
        """``coverage.json`` (when read): valid (:func:`~diting.coverage.package.coverage_problem`), of
        this ``scan_id``, every reference an entity of the package, in canonical form."""
        if cov is None:
            return
        from diting.coverage.package import coverage_problem  # the one check of a coverage report
        cobj, why = coverage_problem(cov)
        if why is not None:
            self.add("coverage.json", None, None, f"invalid: {why}")
            return
        if cobj.get("scan_id") != scan_id:
            self.add("coverage.json", None, None, "scan_id differs from the manifest")
        for where, ref in _ref_paths(cobj):
            if ref.get("record_id") not in entities:
                self.add("coverage.json", None, None, f"{where} refers to {ref.get('record_id')!r}, which "
                                                      "is not an entity of the package")
        if cov != (dumps(cobj) + "\n").encode("utf-8"):
            self.add("coverage.json", None, None, "not in canonical form")

    def _ids(self, name: str, lineno: int, o: dict[str, Any], scope: str) -> None:
        rid = o.get("record_id")
        stable = o.get("stable_id")
        if name == "entities.jsonl":
            kind = o.get("kind")
            if kind in ids.ENTITY_PREFIX and isinstance(stable, str):
                if rid != ids.entity_record_id(kind, stable):
                    self.add(name, lineno, rid, f"record_id does not derive from kind {kind} and stable_id")
            impl = o.get("implementation_ref") or {}
            if impl.get("stable_id") != stable:
                self.add(name, lineno, rid, "implementation_ref.stable_id differs from stable_id")
            if impl.get("implementation_scope") != scope:
                self.add(name, lineno, rid, f"implementation_scope is not {scope}")
        elif name == "relations.jsonl" and isinstance(stable, str):
            if rid != ids.record_id_for(ids.RELATION_PREFIX, stable):
                self.add(name, lineno, rid, "record_id does not derive from stable_id")
            if not stable.startswith(f"{o.get('kind')}|"):
                self.add(name, lineno, rid, "stable_id does not start with the relation kind")
        elif name == "source_segments.jsonl":
            loc = o.get("locator") or {}
            if rid != ids.segment_record_id(str(loc.get("path")), loc.get("start_line", 0), loc.get("end_line", 0)):
                self.add(name, lineno, rid, "record_id does not derive from the locator")
            if loc.get("repo_id") != self.manifest["repo_id"] or loc.get("commit_sha") != self.manifest["commit_sha"]:
                self.add(name, lineno, rid, "locator repo_id/commit_sha differ from the manifest")
        elif name == "diagnostics.jsonl":
            if not isinstance(rid, str) or not rid.startswith(ids.DIAGNOSTIC_PREFIX):
                self.add(name, lineno, rid, "record_id lacks the diagnostic: prefix")

    def _entity(self, lineno: int, o: dict[str, Any], segments: dict[str, dict[str, Any]]) -> None:
        rid = o.get("record_id")
        hashes = []
        for ref in o.get("evidence_refs", []):
            seg = segments.get(ref.get("record_id"))
            if seg is None:
                self.add("entities.jsonl", lineno, rid, f"evidence {ref.get('record_id')!r} is not a source segment")
                return
            hashes.append(seg.get("content_hash", ""))
        impl = o.get("implementation_ref") or {}
        body = {k: v for k, v in o.items() if k != "implementation_ref"}
        body["implementation_ref"] = {"stable_id": impl.get("stable_id")}
        if impl.get("revision_id") != ids.revision_id_for(body, hashes):
            self.add("entities.jsonl", lineno, rid, "revision_id does not match the record and its evidence")

    def _relation(self, lineno: int, o: dict[str, Any], entities: dict[str, dict[str, Any]],
                  diagnostics: dict[str, dict[str, Any]]) -> None:
        rid = o.get("record_id")
        kind = o.get("kind")
        src = entities.get((o.get("source_ref") or {}).get("record_id"))
        targets = []
        if o.get("target_ref"):
            targets.append(entities.get(o["target_ref"].get("record_id")))
        targets.extend(entities.get(c.get("record_id")) for c in o.get("candidate_target_refs", []))
        if src is None:
            self.add("relations.jsonl", lineno, rid, "source_ref is not an entity")
            return
        legal = LEGAL_RELATIONS.get(kind, set())
        for t in targets:
            if t is None:
                self.add("relations.jsonl", lineno, rid, "a target or candidate is not an entity")
                continue
            if (src["kind"], t["kind"]) not in legal:
                self.add("relations.jsonl", lineno, rid, f"{kind} from {src['kind']} to {t['kind']} is not a legal "
                                                         "relation (docs/ir.md §5.3)")
        if kind and src["kind"] not in {a for a, _ in legal}:
            self.add("relations.jsonl", lineno, rid, f"{kind} cannot start at a {src['kind']}")
        # the stable_id names both ends: {kind}|{source stable_id}|{target stable_id or match keys}|{ordinal}
        head = f"{kind}|{src.get('stable_id')}|"
        stable = str(o.get("stable_id", ""))
        if not stable.startswith(head):
            self.add("relations.jsonl", lineno, rid, "stable_id does not name the source's stable_id")
        elif o.get("resolution_status") == "RESOLVED" and targets and targets[0] is not None and \
                stable[len(head):].rpartition("|")[0] != targets[0].get("stable_id"):
            self.add("relations.jsonl", lineno, rid, "stable_id does not name the target's stable_id (a RESOLVED "
                                                     "relation's target is part of its identity)")
        for d in o.get("diagnostic_refs", []):
            if d.get("record_id") not in diagnostics:
                self.add("relations.jsonl", lineno, rid, f"diagnostic_ref {d.get('record_id')!r} is not a diagnostic")
        if kind == "CALLS":
            attrs = o.get("attributes") or {}
            if not isinstance(attrs.get("dispatch_kind"), str) or attrs["dispatch_kind"] not in DISPATCH_KINDS:
                self.add("relations.jsonl", lineno, rid, f"dispatch_kind {attrs.get('dispatch_kind')!r} is not one of "
                                                         f"{', '.join(sorted(DISPATCH_KINDS))}")
            site = o.get("callsite_id")
            head, _, n = str(site).rpartition("@")
            if site is not None and (head != src.get("stable_id") or not n.isdigit()):
                self.add("relations.jsonl", lineno, rid, "callsite_id is not {caller stable_id}@{call ordinal}")
            if site is not None and not str(o.get("stable_id", "")).endswith(f"|{n}"):
                self.add("relations.jsonl", lineno, rid, "the stable_id's ordinal differs from the callsite_id's")
        if kind == "GUARDS" and o.get("guard_ref") is None:
            self.add("relations.jsonl", lineno, rid, "a GUARDS relation names its ledger item (guard_ref)")

    def _ledger_item(self, lineno: int, o: dict[str, Any], entities: dict[str, dict[str, Any]],
                     relations: dict[str, dict[str, Any]], ledger: dict[str, dict[str, Any]]) -> None:
        """A ledger item's id derives from its branch_id, which extends its symbol's stable_id (its
        parent's, when it has one); effects are CALLS/PUBLISHES/READS/WRITES; returns and throws
        name their exit."""
        rid = o.get("record_id")
        name = "branch_ledger.jsonl"
        branch = o.get("branch_id")
        if not isinstance(branch, str):
            return
        if rid != ids.record_id_for(ids.BRANCH_PREFIX, branch):
            self.add(name, lineno, rid, "record_id does not derive from branch_id")
        symbol = entities.get((o.get("symbol_ref") or {}).get("record_id"))
        if symbol is not None:
            if not branch.startswith(f"{symbol.get('stable_id')}/"):
                self.add(name, lineno, rid, "branch_id does not start with its symbol's stable_id")
            if symbol.get("implementation_ref", {}).get("revision_id") != o.get("symbol_revision"):
                self.add(name, lineno, rid, "symbol_revision differs from the symbol's revision_id")
        parent = o.get("parent_branch_id")
        if parent is not None:
            if ids.record_id_for(ids.BRANCH_PREFIX, parent) not in ledger:
                self.add(name, lineno, rid, "parent_branch_id is not a ledger item of the package")
            elif not branch.startswith(f"{parent}/"):
                self.add(name, lineno, rid, "branch_id does not extend its parent's")
        for ref in o.get("effect_refs", []):
            rel = relations.get(ref.get("record_id"))
            if rel is None or rel.get("kind") not in ("CALLS", "PUBLISHES", "READS", "WRITES"):
                self.add(name, lineno, rid, f"effect {ref.get('record_id')!r} is not a CALLS, PUBLISHES, READS "
                                            "or WRITES relation")
        if o.get("branch_kind") in ("RETURN", "THROW") and o.get("exit_ref") is None:
            self.add(name, lineno, rid, f"a {o.get('branch_kind')} item names its exit (exit_ref)")

    def _segment(self, lineno: int, o: dict[str, Any]) -> None:
        rid = o.get("record_id")
        content = o.get("content", "")
        if sha256_hex(content) != o.get("content_hash"):
            self.add("source_segments.jsonl", lineno, rid, "content_hash is not the sha256 of content")
        reds = o.get("redactions", [])
        prev_end = 0
        for r in reds:
            s, e = r.get("start_offset", -1), r.get("end_offset", -1)
            if s < prev_end or e <= s or e > len(content):
                self.add("source_segments.jsonl", lineno, rid, "redactions overlap, are unsorted or out of bounds")
                break
            if content[s:e].strip("*\r\n"):
                self.add("source_segments.jsonl", lineno, rid, "a redacted span is not masked in content")
                break
            prev_end = e
        if not reds and o.get("source_content_hash") != o.get("content_hash"):
            self.add("source_segments.jsonl", lineno, rid, "without redactions source_content_hash must equal "
                                                           "content_hash")

    def _status(self, diagnostics: dict[str, dict[str, Any]]) -> None:
        has_error = any(d.get("severity") == "ERROR" for d in diagnostics.values())
        status = self.manifest.get("status")
        if status == "COMPLETE" and has_error:
            self.add("manifest.json", None, None, "status COMPLETE although an ERROR diagnostic exists")
        if status in ("PARTIAL", "FAILED") and not has_error:
            self.add("manifest.json", None, None, f"status {status} without any ERROR diagnostic")

    # ------------------------------------------------------------ repo
    def _segments_from_repo(self, contents: dict[str, bytes]) -> None:
        from diting.source.git import GitRepo
        segs = self.records.get("source_segments.jsonl")
        if segs is None:
            segs = []
            data = contents.get("source_segments.jsonl", b"")
            for lineno, line in enumerate(data.splitlines(), 1):
                try:
                    segs.append((lineno, json.loads(line)))
                except (json.JSONDecodeError, UnicodeDecodeError):
                    self.add("source_segments.jsonl", lineno, None, "not valid JSON")
        commit = self.manifest["commit_sha"]
        with GitRepo(self.repo) as repo:
            try:
                repo.resolve_commit(commit)
            except UserError:
                raise UserError(f"{self.pkg}: its commit {commit} is not in {self.repo}; give the package's "
                                "repository with --repo") from None
            tree = {e.path: e for e in repo.ls_tree(commit)}
            cache: dict[tuple[str, str], list[str] | None] = {}
            for lineno, o in segs:
                rid = o.get("record_id")
                loc = o.get("locator") or {}
                path = loc.get("path")
                key = (path, o.get("encoding", "utf-8"))
                if key not in cache:
                    e = tree.get(path)
                    if e is None or not e.is_regular:
                        cache[key] = None
                    else:
                        cache[key] = split_lines(decode_as(repo.read_blob(e.oid), key[1]))
                lines = cache[key]
                if lines is None:
                    self.add("source_segments.jsonl", lineno, rid, f"{path} is not a file at {commit[:12]}")
                    continue
                s, e_ = loc.get("start_line", 0), loc.get("end_line", 0)
                if s < 1 or e_ > max(len(lines), 1):
                    self.add("source_segments.jsonl", lineno, rid, f"lines {s}-{e_} are outside {path}")
                    continue
                original = "\n".join(lines[s - 1:e_])
                if sha256_hex(original) != o.get("source_content_hash"):
                    self.add("source_segments.jsonl", lineno, rid, f"source_content_hash differs from {path}:{s}-{e_} "
                                                                   "at the commit")
                if o.get("source_type") in ("CONFIG", "BUILD"):
                    expected, spans = redact(original)
                    reds = [{"start_offset": a, "end_offset": b, "reason": r} for a, b, r in spans]
                    if reds != o.get("redactions"):
                        self.add("source_segments.jsonl", lineno, rid, "redactions differ from re-applying the "
                                                                       "redaction rules")
                else:
                    expected = original
                if expected != o.get("content"):
                    self.add("source_segments.jsonl", lineno, rid, f"content differs from {path}:{s}-{e_} at the "
                                                                   "commit")


#: ``attributes.dispatch_kind`` of a CALLS relation (docs/ir.md §5.4)
DISPATCH_KINDS = frozenset({"STATIC", "VIRTUAL", "INTERFACE", "INJECTED", "RPC", "ASYNC", "DYNAMIC"})


def json_object(data: bytes | None) -> dict[str, Any] | None:
    """The JSON object in ``data``; None when absent, not JSON or not an object (said elsewhere)."""
    try:
        obj = loads(data) if data is not None else None
    except (ValueError, UnicodeDecodeError):
        return None
    return obj if isinstance(obj, dict) else None


def _not_regular(path: Path) -> str | None:
    """None for a regular file (not followed through a symlink), else what ``path`` is."""
    import stat
    try:
        mode = path.lstat().st_mode
    except OSError as exc:
        return f"unreadable ({exc.strerror or exc})"
    if stat.S_ISREG(mode):
        return None
    return ("a symbolic link" if stat.S_ISLNK(mode) else "a directory" if stat.S_ISDIR(mode)
            else "a special file (device, pipe or socket)")


def _unread(path: Path) -> str:
    """Why ``path``, which :func:`read_regular` could not read, is no file of the package: not a regular
    file, or a regular file that cannot be opened (its permissions …)."""
    kind = _not_regular(path)
    if kind is not None:
        return f"a package holds regular files only; this is {kind}"
    try:
        path.open("rb").close()
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc}): its digest and records are not checked"
    return "cannot be read"


def verify_package(pkg: Path, deep: bool = False, repo: Path | None = None) -> list[VerifyFinding]:
    """Findings for the package at ``pkg`` (empty when valid). Raises :class:`UserError` when
    ``pkg`` is not a directory or ``repo`` is not a git repository."""
    return _Verifier(Path(pkg), deep, Path(repo) if repo else None).run()


def _verify_job(args: tuple[Path, bool, Path | None]) -> list[VerifyFinding] | UserError:
    try:
        return verify_package(*args)
    except UserError as exc:  # handed back: raised in the parent, in order
        return exc


def verify_packages(pkgs: list[Path], deep: bool = False, repo: Path | None = None,
                    jobs: int = 0) -> list[list[VerifyFinding]]:
    """:func:`verify_package` of each of ``pkgs`` (findings in the same order), in ``jobs``
    worker processes (0: one per CPU) when there are several packages and the record checks run
    (the files level alone is I/O bound). Raises the first :class:`UserError` in the order of
    ``pkgs``."""
    from diting.workers import worker_count, worker_pool
    args = [(Path(p), deep, Path(repo) if repo else None) for p in pkgs]
    workers = worker_count(jobs, len(args)) if deep else 1
    if workers > 1:
        with worker_pool(workers, fresh=("diting.ir.verify",)) as pool:
            results = list(pool.map(_verify_job, args, chunksize=1))
    else:
        results = [_verify_job(a) for a in args]
    for r in results:
        if isinstance(r, UserError):
            raise r
    return results  # type: ignore[return-value]
