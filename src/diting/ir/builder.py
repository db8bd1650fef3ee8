"""Building the records of a package.

Records are assembled as *blueprints*: plain dicts whose references are
:class:`RefTo` markers and whose ``implementation_ref`` is an :class:`ImplRef`
marker. A blueprint does not yet know its package, so the records of a module
shared by several services are built and validated once and then stamped with
each package's ``scan_id`` and ``implementation_scope`` when written.

Every blueprint is validated against the models of :mod:`diting.ir.models`
when it is added (the writer's boundary check); ``revision_id`` is computed at
:meth:`RecordSet.finish` from the record and its evidence content hashes.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

from diting.ir import ids
from diting.ir.canonical import MAX_RECORD_BYTES, dumps_bytes, sha256_hex
from diting.ir.models import (
    DIAGNOSTIC_SEVERITY,
    ENTITY_FIELDS,
    ConfigBinding,
    Diagnostic,
    EntityRecord,
    LedgerItem,
    Relation,
    SourceSegment,
    record_fields,
    validate_record,
)
from diting.ir.redaction import redact

#: an EXTERNAL entity cites at most this many of the segments that reference it
MAX_EXTERNAL_EVIDENCE = 8

_DUMMY_REV = "rev:" + "0" * 64


class RefTo:
    """A reference to ``record_id`` inside the package being written."""

    __slots__ = ("rid",)

    #: what validation sees before the package stamps its own scan_id (:func:`_validate`)
    scan_id = "scan:validate:0000000000000000"

    def __init__(self, rid: str) -> None:
        self.rid = rid

    @property
    def record_id(self) -> str:
        return self.rid

    def __lt__(self, other: "RefTo") -> bool:
        return self.rid < other.rid

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RefTo) and other.rid == self.rid

    def __hash__(self) -> int:
        return hash(self.rid)

    def __repr__(self) -> str:
        return f"RefTo({self.rid!r})"


class ImplRef:
    """An entity's ``implementation_ref``; scope and revision are stamped per package."""

    __slots__ = ("stable_id", "revision")

    #: what validation sees before the package stamps its own scope (:func:`_validate`)
    implementation_scope = "sv:validate:" + "0" * 40

    def __init__(self, stable_id: str) -> None:
        self.stable_id = stable_id
        self.revision: str | None = None

    @property
    def revision_id(self) -> str:
        return self.revision or _DUMMY_REV


class BlueprintError(ValueError):
    """A record that does not satisfy its model: a bug in diting, never in the input."""


def refs(rids) -> list[RefTo]:
    """Sorted, de-duplicated :class:`RefTo` list of record ids."""
    return [RefTo(r) for r in sorted(set(rids))]


#: validate every blueprint against its pydantic model as it is added (tests and ``DITING_VALIDATE=1``);
#: otherwise the builder's own checks hold the invariants and ``diting verify --deep`` validates every record.
#: Always on it would cost about 12% of a scan (mall-swarm, one job: 10.5 s → 11.8 s), so scans run the
#: field-set check of :func:`_validate` instead, which is what keeps a field from vanishing on its way to the graph
VALIDATE = os.environ.get("DITING_VALIDATE") == "1"


_FIELDS = {m: record_fields(m) for m in (SourceSegment, Relation, Diagnostic, ConfigBinding, LedgerItem)}
_NO_FIELDS: tuple[frozenset[str], frozenset[str]] = (frozenset(), frozenset())


def _validate(model: type[BaseModel], record: dict[str, Any]) -> None:
    """Every blueprint: its keys are its model's fields, the required ones present (always, a set
    comparison: a field no model declares would never reach the graph); with :data:`VALIDATE`, the
    whole record against the model."""
    declared, required = ENTITY_FIELDS.get(record.get("kind"), _NO_FIELDS) if model is EntityRecord else \
        _FIELDS[model]
    keys = record.keys()
    if not keys <= declared or not required <= keys:
        raise BlueprintError(f"{record.get('record_id')}: fields {sorted(keys - declared)} not in the "
                             f"{record.get('kind') or model.__name__} model, {sorted(required - keys)} missing")
    if not VALIDATE:
        return
    try:
        validate_record(model, record, markers=True)
    except ValidationError as exc:
        raise BlueprintError(f"{record.get('record_id')}: {exc}") from exc


def _fits(rec: dict[str, Any]) -> bool:
    """Whether a segment record's canonical line is at most :data:`MAX_RECORD_BYTES` long."""
    return len(dumps_bytes(rec)) <= MAX_RECORD_BYTES


@dataclass
class RecordSet:
    """Blueprints of one module or one package, keyed by record_id."""

    repo_id: str
    commit_sha: str
    entities: dict[str, dict[str, Any]] = field(default_factory=dict)
    relations: dict[str, dict[str, Any]] = field(default_factory=dict)
    segments: dict[str, dict[str, Any]] = field(default_factory=dict)
    diagnostics: dict[str, dict[str, Any]] = field(default_factory=dict)
    bindings: dict[str, dict[str, Any]] = field(default_factory=dict)
    ledger: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: record_ids added twice (the first record is kept)
    duplicate_ids: list[str] = field(default_factory=list)
    #: content hashes of segments that live in another set (evidence of merged entities)
    foreign_hashes: dict[str, str] = field(default_factory=dict)
    #: segment records already built by another set of the same scan (same repository and commit),
    #: by the record_id of the span asked for (a span cut to fit a record maps to its cut record):
    #: packages sharing modules cite the same lines without redacting them again
    segment_cache: dict[str, dict[str, Any]] | None = None
    #: record_id of a span asked for → record_id of the span cut to fit a record (:meth:`segment`)
    cut: dict[str, str] = field(default_factory=dict)

    # ------------------------------------------------------------ segments
    def segment(self, path: str, lines: list[str], start: int, end: int, source_type: str, encoding: str) -> str:
        """Register the evidence segment for lines ``start..end`` of ``path``; returns its record_id.

        CONFIG and BUILD text is redacted (:mod:`diting.ir.redaction`). A span whose record would be
        longer than :data:`~diting.ir.canonical.MAX_RECORD_BYTES` is cut to its longest first lines
        that fit, with a BUDGET_EXHAUSTED diagnostic citing them: the returned record_id is then that
        of the cut span. Raises :class:`BlueprintError` when not even the first line fits (a file
        with such a line is not read: :data:`diting.source.snapshot.MAX_LINE_BYTES`)."""
        n = len(lines)
        start = max(1, min(start, n if n else 1))
        end = max(start, min(end, n if n else 1))
        rid = ids.segment_record_id(path, start, end)
        if rid in self.segments:
            return rid
        if rid in self.cut:
            return self.cut[rid]
        cached = self.segment_cache.get(rid) if self.segment_cache is not None else None
        if cached is None or cached["source_type"] != source_type:
            cached = self._segment_record(path, lines, start, end, source_type, encoding)
            if self.segment_cache is not None:
                self.segment_cache[rid] = cached
        cited = cached["record_id"]
        self.segments[cited] = cached
        if cited != rid:  # cut to fit a record
            self.cut[rid] = cited
            loc = cached["locator"]
            self.diagnostic("BUDGET_EXHAUSTED", f"segment-cut|{path}:{start}-{end}",
                            f"{path}:{start}-{end}: evidence cut to lines {start}-{loc['end_line']}: the whole span "
                            f"would be a record longer than the {MAX_RECORD_BYTES} bytes a record may be", [], [cited])
        return cited

    def _segment_record(self, path: str, lines: list[str], start: int, end: int, source_type: str,
                        encoding: str) -> dict[str, Any]:
        """The validated segment record of lines ``start..end``, or of its longest first lines whose
        record fits :data:`MAX_RECORD_BYTES` (measured only for a span long enough to need it)."""
        rec = self._segment_lines(path, lines, start, end, source_type, encoding)
        if sum(map(len, lines[start - 1:end])) * 64 <= MAX_RECORD_BYTES or _fits(rec):
            return rec
        lo, hi = start, end - 1  # the answer is in lo..hi; lines start..lo fit, once checked
        first = self._segment_lines(path, lines, start, start, source_type, encoding)
        if not _fits(first):
            raise BlueprintError(f"{path}:{start}: one line longer than a record may be")
        best = first
        while lo < hi:
            mid = (lo + hi + 1) // 2
            got = self._segment_lines(path, lines, start, mid, source_type, encoding)
            if _fits(got):
                lo, best = mid, got
            else:
                hi = mid - 1
        return best

    def _segment_lines(self, path: str, lines: list[str], start: int, end: int, source_type: str,
                       encoding: str) -> dict[str, Any]:
        original = "\n".join(lines[start - 1:end])
        if source_type in ("CONFIG", "BUILD"):
            content, spans = redact(original)
        else:
            content, spans = original, []
        rec = {
            "record_id": ids.segment_record_id(path, start, end),
            "source_type": source_type,
            "locator": {"repo_id": self.repo_id, "commit_sha": self.commit_sha, "path": path,
                        "start_line": start, "end_line": end},
            "encoding": encoding,
            "content": content,
            "content_hash": (h := sha256_hex(content)),
            "source_content_hash": h if not spans else sha256_hex(original),
            "redactions": [{"start_offset": s, "end_offset": e, "reason": r} for s, e, r in spans],
        }
        _validate(SourceSegment, rec)
        return rec

    # ------------------------------------------------------------ entities
    def entity(self, kind: str, stable_id: str, name: str, evidence: list[str], attributes: dict[str, Any] | None = None,
               **extra: Any) -> str:
        """Add an entity blueprint; returns its record_id. A second entity with the same
        record_id is ignored and remembered in :attr:`duplicate_ids`."""
        rid = ids.entity_record_id(kind, stable_id)
        if rid in self.entities:
            self.duplicate_ids.append(rid)
            return rid
        if not evidence:
            raise BlueprintError(f"{kind} {stable_id}: an entity needs evidence")
        rec: dict[str, Any] = {
            "record_id": rid, "kind": kind, "stable_id": stable_id, "name": name,
            "implementation_ref": ImplRef(stable_id), "evidence_refs": refs(evidence),
            "attributes": attributes or {},
        }
        rec.update(extra)
        _validate(EntityRecord, rec)
        self.entities[rid] = rec
        return rid

    def add_evidence(self, rid: str, evidence: list[str]) -> None:
        """Add evidence to an existing entity (e.g. an EXTERNAL referenced twice). An EXTERNAL keeps
        :data:`MAX_EXTERNAL_EVIDENCE` segments (:meth:`cited`): it is cited, not owned, by the code
        that references it (whose own records cite every reference)."""
        rec = self.entities[rid]
        merged = {r.rid for r in rec["evidence_refs"]} | set(evidence)
        if rec["kind"] == "EXTERNAL":
            merged = self.cited(merged)
        rec["evidence_refs"] = refs(merged)
        rec["implementation_ref"] = ImplRef(rec["stable_id"])

    # ------------------------------------------------------------ relations
    def relation(self, kind: str, source_rid: str, source_stable: str, *, target_rid: str | None,
                 target_key: str, status: str, evidence: list[str], candidates: list[str] | None = None,
                 diagnostics: list[str] | None = None, match_keys: dict[str, Any] | None = None,
                 ordinal: int = 0, callsite_id: str | None = None, guard: str | None = None,
                 attributes: dict[str, Any] | None = None) -> str:
        """Add a relation blueprint (resolution invariants are validated); returns its record_id."""
        if status == "RESOLVED":
            if not target_rid or candidates:
                raise BlueprintError(f"{kind} {source_stable}: RESOLVED needs one target and no candidates")
        elif status == "AMBIGUOUS":
            if target_rid or len(set(candidates or [])) < 2:
                raise BlueprintError(f"{kind} {source_stable}: AMBIGUOUS needs no target and two candidates")
        elif target_rid or candidates or not diagnostics:
            raise BlueprintError(f"{kind} {source_stable}: UNRESOLVED needs no target, no candidates, a diagnostic")
        if not evidence:
            raise BlueprintError(f"{kind} {source_stable}: a relation needs evidence")
        stable = ids.relation_stable_id(kind, source_stable, target_key, ordinal)
        rid = ids.record_id_for(ids.RELATION_PREFIX, stable)
        if rid in self.relations:
            self.duplicate_ids.append(rid)
            return rid
        rec: dict[str, Any] = {
            "record_id": rid, "kind": kind, "stable_id": stable, "source_ref": RefTo(source_rid),
            "target_ref": RefTo(target_rid) if target_rid else None,
            "candidate_target_refs": refs(candidates or []), "resolution_status": status,
            "evidence_refs": refs(evidence), "diagnostic_refs": refs(diagnostics or []),
            "match_keys": match_keys, "callsite_id": callsite_id,
            "guard_ref": RefTo(guard) if guard else None, "attributes": attributes or {},
        }
        _validate(Relation, rec)
        self.relations[rid] = rec
        return rid

    # ------------------------------------------------------------ diagnostics
    def diagnostic(self, code: str, key: str, message: str, affected: list[str], evidence: list[str]) -> str:
        """Add a diagnostic with the catalogue's fixed severity; returns its record_id."""
        rid = ids.diagnostic_record_id(code, key)
        if rid in self.diagnostics:
            return rid
        if code not in DIAGNOSTIC_SEVERITY:
            raise BlueprintError(f"diagnostic code {code} is not in the catalogue")
        rec = {"record_id": rid, "code": code, "severity": DIAGNOSTIC_SEVERITY[code].value,
               "affected_refs": refs(affected), "message": message, "evidence_refs": refs(evidence)}
        _validate(Diagnostic, rec)
        self.diagnostics[rid] = rec
        return rid

    def binding(self, rec: dict[str, Any]) -> str:
        _validate(ConfigBinding, rec)
        self.bindings[rec["record_id"]] = rec
        return rec["record_id"]

    def ledger_item(self, rec: dict[str, Any]) -> str:
        _validate(LedgerItem, rec)
        self.ledger[rec["record_id"]] = rec
        return rec["record_id"]

    # ------------------------------------------------------------ merging
    def cited(self, segments: set[str]) -> set[str]:
        """The segments an EXTERNAL keeps of ``segments``: the first :data:`MAX_EXTERNAL_EVIDENCE` by
        content hash, then record id — an order that moving code leaves alone (a segment's id names its
        lines), so a format-only edit changes which segments are cited only among equal contents, and
        the EXTERNAL's revision not at all. A segment of another set is ordered by its hash in
        :attr:`foreign_hashes`."""
        if len(segments) <= MAX_EXTERNAL_EVIDENCE:
            return segments

        def order(rid: str) -> tuple[str, str]:
            seg = self.segments.get(rid)
            return (seg["content_hash"] if seg is not None else self.foreign_hashes.get(rid, ""), rid)

        return set(sorted(segments, key=order)[:MAX_EXTERNAL_EVIDENCE])

    def merge(self, other: "RecordSet") -> None:
        """Add ``other``'s blueprints; equal record_ids are one record (evidence of
        entities is united, so an EXTERNAL cited by two modules keeps both)."""
        for rid, rec in other.entities.items():
            mine = self.entities.get(rid)
            if mine is None:
                self.entities[rid] = rec
            elif mine is not rec:
                theirs = {r.rid for r in rec["evidence_refs"]}
                have = {r.rid for r in mine["evidence_refs"]}
                if not theirs <= have:
                    copy = dict(mine)
                    united = have | theirs
                    if mine["kind"] == "EXTERNAL":
                        united = self.cited(united)
                    copy["evidence_refs"] = refs(united)
                    copy["implementation_ref"] = ImplRef(mine["stable_id"])
                    self.entities[rid] = copy
        for name in ("relations", "segments", "diagnostics", "bindings", "ledger"):
            mine_d = getattr(self, name)
            for rid, rec in getattr(other, name).items():
                mine_d.setdefault(rid, rec)

    def encode(self, placeholders: "Placeholders", skip_entities: set[str] | None = None) -> "EncodedSet":
        """Every blueprint as its canonical JSON line, with the package's scan_id and scope left as
        placeholders (:class:`Placeholders`). Entities in ``skip_entities`` are left out."""
        self.finish()
        hook = placeholders.hook()
        out = EncodedSet()
        for fname, recs in self.families():
            lines = out.lines[fname]
            for rid, rec in recs.items():
                if fname == "entities.jsonl" and skip_entities and rid in skip_entities:
                    continue
                lines[rid] = dumps_bytes(rec, hook).decode("utf-8")
        out.severities = {rid: d["severity"] for rid, d in self.diagnostics.items()}
        return out

    def size(self) -> int:
        """How many records the set holds (every family)."""
        return sum(len(recs) for _, recs in self.families())

    def clear(self) -> None:
        """Drop every record (once encoded); the segment cache shared between packages stays."""
        for _, recs in self.families():
            recs.clear()
        self.cut.clear()

    def families(self) -> list[tuple[str, dict[str, dict[str, Any]]]]:
        """(jsonl file name, records) for every record family."""
        return [("entities.jsonl", self.entities), ("relations.jsonl", self.relations),
                ("source_segments.jsonl", self.segments), ("config_bindings.jsonl", self.bindings),
                ("diagnostics.jsonl", self.diagnostics), ("branch_ledger.jsonl", self.ledger)]

    def finish(self) -> None:
        """Compute every entity's revision_id (kept on its :class:`ImplRef`); the result equals
        :func:`diting.ir.ids.revision_id_for` of the written record. Computed again on every call:
        a stage may add attributes or evidence to an entity after an earlier stage read revisions."""
        hashes = dict(self.foreign_hashes)
        hashes.update((rid, seg["content_hash"]) for rid, seg in self.segments.items())

        def ref_id(o: Any) -> Any:
            if isinstance(o, RefTo):
                return o.rid
            raise TypeError(type(o).__name__)

        for rec in self.entities.values():
            impl: ImplRef = rec["implementation_ref"]
            body = {k: v for k, v in rec.items() if k not in ("record_id", "evidence_refs", "implementation_ref")}
            body["evidence_content_hashes"] = sorted(hashes[r.rid] for r in rec["evidence_refs"])
            impl.revision = "rev:" + hashlib.sha256(dumps_bytes(body, ref_id)).hexdigest()


class Placeholders:
    """Stand-ins for a package's scan_id and implementation_scope inside encoded lines.

    A random nonce makes them impossible to forge from repository content; they are
    replaced (JSON-escaped) when a package is written, so output bytes never depend on it.
    """

    def __init__(self) -> None:
        nonce = os.urandom(16).hex()
        self.scan = f"@@diting-scan-{nonce}@@"
        self.scope = f"@@diting-scope-{nonce}@@"

    def hook(self) -> Any:
        """The ``default`` of the canonical encoder: markers become placeholder references."""
        scan, scope = self.scan, self.scope

        def hook(o: Any) -> Any:
            if isinstance(o, RefTo):
                return {"record_id": o.rid, "scan_id": scan}
            if isinstance(o, ImplRef):
                if o.revision is None:
                    raise BlueprintError(f"{o.stable_id}: revision not computed")
                return {"implementation_scope": scope, "revision_id": o.revision, "stable_id": o.stable_id}
            raise TypeError(f"cannot encode {type(o).__name__}")

        return hook

    def stamper(self, scan_id: str, scope: str):
        """A function putting the package's real scan_id and scope (JSON-escaped once) into a line."""
        scan_text = json.dumps(scan_id, ensure_ascii=False)[1:-1]
        scope_text = json.dumps(scope, ensure_ascii=False)[1:-1]
        marker_scan, marker_scope = self.scan, self.scope

        def stamp(line: str) -> str:
            return line.replace(marker_scan, scan_text).replace(marker_scope, scope_text)

        return stamp


@dataclass
class EncodedSet:
    """Canonical JSON lines (with placeholders) per jsonl file, keyed by record_id."""

    lines: dict[str, dict[str, str]] = field(default_factory=lambda: {
        name: {} for name in ("entities.jsonl", "relations.jsonl", "source_segments.jsonl",
                              "config_bindings.jsonl", "diagnostics.jsonl", "branch_ledger.jsonl")})
    severities: dict[str, str] = field(default_factory=dict)

    def merge(self, other: "EncodedSet") -> None:
        """Add ``other``'s lines; an equal record_id is one record (the first line is kept)."""
        for name, lines in other.lines.items():
            mine = self.lines[name]
            for rid, line in lines.items():
                mine.setdefault(rid, line)
        for rid, sev in other.severities.items():
            self.severities.setdefault(rid, sev)
