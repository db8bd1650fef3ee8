"""Compare two IR packages of the same service by ``stable_id`` (SPEC §8).

Entities, relations and config bindings are matched by stable_id (a relation's stable_id already
names its kind, source and target; a binding's is ``{consumer}|{key}``). Every difference is one
change row ``{class, stable_id, before, after}`` where before/after are the records' comparable
parts (scan ids, record ids and implementation scopes removed: they differ between any two scans).

Classes (:data:`CLASSES`), the first that applies:

* a PROVIDED contract added / removed — or, when one urn loses one signature and gains another,
  one ``CONTRACT_SIGNATURE_CHANGED`` row;
* a CONSUMED contract (or its consumer binding) added / removed;
* PUBLISHES / SUBSCRIBES (or a TOPIC) added, removed or changed;
* READS / WRITES to a TABLE added, removed or changed;
* a CONFIG_KEY, or a config binding's key or value, added, removed or changed;
* an ENTRY added, removed or changed;
* a record present on both sides whose ``resolution_status`` differs;
* a record whose revision is unchanged and whose evidence moved (``EVIDENCE_MOVED``);
* anything else (``OTHER``).

A rename is a removal plus an addition; :func:`rename_candidates` pairs removed and added types and
methods that carry the same members or signature under another name, as identity-mapping candidates.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from diting.demo import read_jsonl
from diting.errors import UserError
from diting.ir.canonical import loads as json_loads

CLASSES = (
    "CONTRACT_ADDED", "CONTRACT_REMOVED", "CONTRACT_SIGNATURE_CHANGED", "CONSUMER_ADDED", "CONSUMER_REMOVED",
    "TOPIC_PUBLISH_CHANGED", "TOPIC_SUBSCRIBE_CHANGED", "TABLE_READ_CHANGED", "TABLE_WRITE_CHANGED",
    "CONFIG_CHANGED", "ENTRY_CHANGED", "RESOLUTION_STATUS_CHANGED", "EVIDENCE_MOVED", "OTHER",
)

#: fields that differ between any two scans of the same code: never compared
_VOLATILE = {"record_id", "scan_id", "implementation_scope"}


@dataclass
class Package:
    """The records of one package, keyed by stable_id."""

    path: Path
    manifest: dict[str, Any]
    analysis_input: dict[str, Any]
    entities: dict[str, dict[str, Any]]
    relations: dict[str, dict[str, Any]]
    bindings: dict[str, dict[str, Any]]
    #: record_id → stable_id of entities (to name relation ends by identity, not by record id)
    stable_of: dict[str, str] = field(default_factory=dict)


def load(path: Path) -> Package:
    """Read a package directory. Raises :class:`UserError` for a directory that is not a package
    (or does not verify: a diff of a tampered package would report the tampering as changes)."""
    from diting.ir.verify import verify_package
    if not (path / "manifest.json").is_file():
        raise UserError(f"{path}: not an IR package directory (no manifest.json)")
    findings = verify_package(path)
    if findings:
        raise UserError(f"{path}: the package does not verify ({findings[0]})")
    try:
        manifest = json_loads((path / "manifest.json").read_text(encoding="utf-8"))
        ai = json_loads((path / "analysis_input.json").read_text(encoding="utf-8"))
        ents = read_jsonl(path / "entities.jsonl")
        stable_of = {e["record_id"]: e["stable_id"] for e in ents}
        pkg = Package(path, manifest, ai, {e["stable_id"]: e for e in ents},
                      {r["stable_id"]: r for r in read_jsonl(path / "relations.jsonl")},
                      {}, stable_of)
        for b in read_jsonl(path / "config_bindings.jsonl"):
            consumer = stable_of.get(b["consumer_ref"]["record_id"], b["consumer_ref"]["record_id"])
            pkg.bindings[f"{consumer}|{b['config_key']}"] = b
    except (KeyError, TypeError, AttributeError) as exc:  # re-signed records of the wrong shape
        raise UserError(f"{path}: a record is malformed ({type(exc).__name__}: {exc}); "
                        "'diting verify --deep' names it") from exc
    return pkg


def _strip(value: Any, stable_of: dict[str, str]) -> Any:
    """A record without what differs between scans: refs become the stable_id they name."""
    if isinstance(value, dict):
        if set(value) == {"scan_id", "record_id"}:
            return stable_of.get(value["record_id"], value["record_id"])
        return {k: _strip(v, stable_of) for k, v in sorted(value.items()) if k not in _VOLATILE}
    if isinstance(value, list):
        return [_strip(v, stable_of) for v in value]
    return value


def _without_evidence(rec: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in rec.items() if k not in ("evidence_refs", "implementation_ref")}


@dataclass
class Change:
    """One change row."""

    cls: str
    stable_id: str
    before: Any
    after: Any
    #: the raw record (refs by record_id) of the side present, for classifying pairs
    raw: dict[str, Any] | None = field(default=None, compare=False, repr=False)

    def record(self) -> dict[str, Any]:
        return {"class": self.cls, "stable_id": self.stable_id, "before": self.before, "after": self.after}


def _entity_class(rec: dict[str, Any], added: bool, removed: bool) -> str:
    kind = rec.get("kind")
    if kind == "CONTRACT":
        if rec.get("role") == "PROVIDED":
            return "CONTRACT_ADDED" if added else "CONTRACT_REMOVED" if removed else "CONTRACT_SIGNATURE_CHANGED"
        return "CONSUMER_ADDED" if added else "CONSUMER_REMOVED" if removed else "OTHER"
    if kind in ("TOPIC", "EVENT"):
        return "TOPIC_PUBLISH_CHANGED"
    if kind == "CONFIG_KEY":
        return "CONFIG_CHANGED"
    if kind == "ENTRY":
        return "ENTRY_CHANGED"
    return "OTHER"


def _relation_class(rec: dict[str, Any], added: bool, removed: bool) -> str:
    kind = rec.get("kind")
    target = (rec.get("target_ref") or {}).get("record_id") or ""
    if kind == "PUBLISHES":
        return "TOPIC_PUBLISH_CHANGED"
    if kind == "SUBSCRIBES":
        return "TOPIC_SUBSCRIBE_CHANGED"
    if kind in ("READS", "WRITES") and target.startswith("table:"):
        return "TABLE_READ_CHANGED" if kind == "READS" else "TABLE_WRITE_CHANGED"
    if kind in ("READS", "GUARDS") and target.startswith("config:") or kind == "GUARDS":
        return "CONFIG_CHANGED"
    if kind in ("BINDS_TO", "CALLS") and target.startswith("contract:CONSUMED"):
        return "CONSUMER_ADDED" if added else "CONSUMER_REMOVED" if removed else "OTHER"
    if kind == "EXPOSES":
        return "CONTRACT_ADDED" if added else "CONTRACT_REMOVED" if removed else "OTHER"
    return "OTHER"


def compare(old: Package, new: Package) -> list[Change]:
    """The change rows from ``old`` to ``new``, sorted by (class, stable_id)."""
    changes: list[Change] = []
    for name, a_map, b_map, classify in (("entity", old.entities, new.entities, _entity_class),
                                         ("relation", old.relations, new.relations, _relation_class)):
        for sid in sorted(set(a_map) | set(b_map)):
            a, b = a_map.get(sid), b_map.get(sid)
            sa = _strip(a, old.stable_of) if a is not None else None
            sb = _strip(b, new.stable_of) if b is not None else None
            if sa == sb:
                continue
            if a is None or b is None:
                changes.append(Change(classify(a or b, a is None, b is None), sid, sa, sb, a or b))
                continue
            if a.get("resolution_status") != b.get("resolution_status") and name == "relation":
                changes.append(Change("RESOLUTION_STATUS_CHANGED", sid, sa, sb))
            elif _without_evidence(sa) == _without_evidence(sb) and \
                    (a.get("implementation_ref") or {}).get("revision_id") == \
                    (b.get("implementation_ref") or {}).get("revision_id"):
                changes.append(Change("EVIDENCE_MOVED", sid, sa, sb))
            else:
                cls = classify(a, False, False)
                changes.append(Change(cls if cls not in ("CONTRACT_SIGNATURE_CHANGED",) else "OTHER", sid, sa, sb))
    for sid in sorted(set(old.bindings) | set(new.bindings)):
        a, b = old.bindings.get(sid), new.bindings.get(sid)
        sa = _strip(a, old.stable_of) if a is not None else None
        sb = _strip(b, new.stable_of) if b is not None else None
        if sa != sb:
            changes.append(Change("CONFIG_CHANGED", sid, sa, sb))
    return sorted(_pair_signatures(_pair_call_sites(changes)), key=lambda c: (CLASSES.index(c.cls), c.stable_id))


def _site(rec: dict[str, Any] | None) -> tuple[str, str, str] | None:
    """A relation's place independent of its target: (kind, source, call site or ordinal)."""
    if not rec or "kind" not in rec or "source_ref" not in rec:
        return None
    parts = rec.get("stable_id", "").split("|")
    return rec["kind"], str(rec["source_ref"]), rec.get("callsite_id") or (parts[-1] if len(parts) > 3 else "")


def _pair_call_sites(changes: list[Change]) -> list[Change]:
    """A relation whose target changed (a call that now resolves, or no longer does) has a new
    stable_id: a removal and an addition at one call site (or source and ordinal) are one row —
    RESOLUTION_STATUS_CHANGED when the statuses differ."""
    gone: dict[tuple, list[Change]] = {}
    came: dict[tuple, list[Change]] = {}
    for c in changes:
        if c.after is None and _site(c.before):
            gone.setdefault(_site(c.before), []).append(c)
        elif c.before is None and _site(c.after):
            came.setdefault(_site(c.after), []).append(c)
    merged: set[int] = set()
    out: list[Change] = []
    for key, olds in gone.items():
        news = came.get(key, [])
        if len(olds) == 1 and len(news) == 1 and key[2]:
            a, b = olds[0], news[0]
            merged |= {id(a), id(b)}
            status = a.before.get("resolution_status") != b.after.get("resolution_status")
            out.append(Change("RESOLUTION_STATUS_CHANGED" if status else _relation_class(b.raw or {}, False, False),
                              b.stable_id, a.before, b.after))
    return [c for c in changes if id(c) not in merged] + out


def _pair_signatures(changes: list[Change]) -> list[Change]:
    """One urn of a PROVIDED contract losing one signature and gaining another is one
    CONTRACT_SIGNATURE_CHANGED row (keyed by the new stable_id)."""
    removed = {c.before["urn"]: c for c in changes if c.cls == "CONTRACT_REMOVED" and c.before.get("kind") == "CONTRACT"}
    added = {c.after["urn"]: c for c in changes if c.cls == "CONTRACT_ADDED" and c.after.get("kind") == "CONTRACT"}
    paired = {u for u in removed if u in added and
              sum(1 for c in changes if c.cls == "CONTRACT_REMOVED" and (c.before or {}).get("urn") == u) == 1 and
              sum(1 for c in changes if c.cls == "CONTRACT_ADDED" and (c.after or {}).get("urn") == u) == 1}
    out = [c for c in changes if not ((c.cls == "CONTRACT_REMOVED" and (c.before or {}).get("urn") in paired) or
                                      (c.cls == "CONTRACT_ADDED" and (c.after or {}).get("urn") in paired))]
    out += [Change("CONTRACT_SIGNATURE_CHANGED", added[u].stable_id, removed[u].before, added[u].after) for u in paired]
    return out


def rename_candidates(old: Package, new: Package) -> list[dict[str, Any]]:
    """Identity-mapping candidates for removed-and-added TYPEs (the same member signatures under
    another name, at least 80 % shared) and METHODs (the same name and parameters in another type):
    ``[{kind, before, after, basis}]``."""
    def members(pkg: Package, type_stable: str) -> set[str]:
        prefix = type_stable + "#"
        return {s[len(prefix):] for s, e in pkg.entities.items() if e["kind"] == "METHOD" and s.startswith(prefix)}

    out = []
    gone = [s for s, e in old.entities.items() if s not in new.entities and e["kind"] in ("TYPE", "METHOD")]
    came = [s for s, e in new.entities.items() if s not in old.entities and e["kind"] in ("TYPE", "METHOD")]
    for kind in ("TYPE", "METHOD"):
        g = [s for s in gone if old.entities[s]["kind"] == kind]
        c = [s for s in came if new.entities[s]["kind"] == kind]
        for a in sorted(g):
            for b in sorted(c):
                if kind == "TYPE":
                    ma, mb = members(old, a), members(new, b)
                    if ma and mb and len(ma & mb) / len(ma | mb) >= 0.8:
                        out.append({"kind": kind, "before": a, "after": b,
                                    "basis": f"{len(ma & mb)} of {len(ma | mb)} member signatures shared"})
                elif a.rsplit("#", 1)[-1] == b.rsplit("#", 1)[-1] and a.split("#")[0] != b.split("#")[0]:
                    out.append({"kind": kind, "before": a, "after": b, "basis": "same name and parameters"})
    return out


def input_differences(old: Package, new: Package) -> list[str]:
    """The top-level components of the analysis input that differ (what the input digests disagree
    on): ``commit_sha``, ``rule_files``, ``config_files`` …"""
    keys = sorted(set(old.analysis_input) | set(new.analysis_input))
    return [k for k in keys if old.analysis_input.get(k) != new.analysis_input.get(k)]
