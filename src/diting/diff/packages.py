"""Compare two IR packages of the same service by ``stable_id`` (docs/diff.md).

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

A change is reported once, by its most specific class (:func:`fold`): a removed and an added record
that are one thing changed are one row (a provided contract's urn with another signature, an entry of
the same kind and urn, a method of the same type and name with other parameters — :data:`PAIRS`), and
a row that only exists because of another change is folded into that change's row (``folded``): a
record that came or went with the entity it names (the EXPOSES of an added contract, the members and
CONTAINS of a removed type, the calls of a method whose parameters changed), the entry of a changed
provided contract, and a record whose only difference is the new name of something paired (a
transaction root that is a method with another signature). A row folds only into a row of a class at
least as specific (:data:`SPECIFICITY`), except that last kind, which changed nothing of its own.

A rename is a removal plus an addition; :func:`rename_candidates` pairs removed and added types and
methods that carry the same members or signature under another name, as identity-mapping candidates.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from diting.demo import read_jsonl
from diting.errors import UserError
from diting.ir.canonical import loads as json_loads
from diting.ir.writer import holds_manifest

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
    if not holds_manifest(path):
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
    """One change row, and the rows folded into it (:func:`fold`)."""

    cls: str
    stable_id: str
    before: Any
    after: Any
    #: the raw record (refs by record_id) of the side present, for classifying pairs
    raw: dict[str, Any] | None = field(default=None, compare=False, repr=False)
    folded: list[Change] = field(default_factory=list, compare=False, repr=False)

    def record(self) -> dict[str, Any]:
        """``{class, stable_id, before, after, folded: [{class, stable_id, before, after}]}``."""
        return {"class": self.cls, "stable_id": self.stable_id, "before": self.before, "after": self.after,
                "folded": [{"class": f.cls, "stable_id": f.stable_id, "before": f.before, "after": f.after}
                           for f in sorted(self.folded, key=_order)]}


def _order(change: Change) -> tuple[int, str]:
    return CLASSES.index(change.cls), change.stable_id


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
    """The change rows from ``old`` to ``new``, sorted by (class, stable_id), each change once with the
    rows folded into it (:func:`pair`, :func:`fold`)."""
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
        if sa == sb:
            continue
        moved = sa is not None and sb is not None and _without_evidence(sa) == _without_evidence(sb)
        changes.append(Change("EVIDENCE_MOVED" if moved else "CONFIG_CHANGED", sid, sa, sb))
    return sorted(fold(pair(_pair_call_sites(changes))), key=_order)


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


#: removed-and-added entities that are one thing changed: (kind, which records, what stays the same
#: across the change, the class of the pair). A key shared by more than one removal or addition pairs
#: nothing (overloads: which became which is unknown).
PAIRS: tuple[tuple[str, Callable[[dict[str, Any]], bool], Callable[[dict[str, Any]], Any], str], ...] = (
    ("CONTRACT", lambda r: r.get("role") == "PROVIDED", lambda r: r.get("urn"), "CONTRACT_SIGNATURE_CHANGED"),
    ("ENTRY", lambda r: True, lambda r: (r.get("entry_kind"), r.get("urn")), "ENTRY_CHANGED"),
    ("METHOD", lambda r: True, lambda r: str(r.get("stable_id")).split("(", 1)[0], "OTHER"),
)


def pair(changes: list[Change]) -> list[Change]:
    """A removed and an added entity that are one thing changed (:data:`PAIRS`: a provided contract's
    urn losing one signature and gaining another, an entry whose handler changed, a method whose
    parameters changed) become one row of the pair's class, keyed by the new stable_id."""
    gone: dict[tuple, list[Change]] = {}
    came: dict[tuple, list[Change]] = {}
    for c in changes:
        rec = c.before if c.after is None else c.after if c.before is None else None
        if not isinstance(rec, dict) or "source_ref" in rec:
            continue
        for i, (kind, which, key, _) in enumerate(PAIRS):
            if rec.get("kind") == kind and which(rec):
                (gone if c.after is None else came).setdefault((i, key(rec)), []).append(c)
    merged: set[int] = set()
    out: list[Change] = []
    for k, olds in gone.items():
        news = came.get(k, [])
        if len(olds) == 1 and len(news) == 1 and k[1] is not None:
            a, b = olds[0], news[0]
            merged |= {id(a), id(b)}
            out.append(Change(PAIRS[k[0]][3], b.stable_id, a.before, b.after, b.raw))
    return [c for c in changes if id(c) not in merged] + out


#: the classes from most to least specific: a row folds only into a row of a class no later here
SPECIFICITY = ("CONTRACT_SIGNATURE_CHANGED",) + tuple(c for c in CLASSES if c != "CONTRACT_SIGNATURE_CHANGED")
_RANK = {c: i for i, c in enumerate(SPECIFICITY)}
#: fields naming other records that a row can belong to (evidence and diagnostics are never rows)
_NOT_BELONGING = {"evidence_refs", "diagnostic_refs"}


def _refs(rec: Any) -> set[str]:
    """The stable_ids a (stripped) record names by reference: its ``…_ref``/``…_refs`` fields,
    ``declaring_type``, and a FIELD's type (its stable_id less ``.{name}``)."""
    out: set[str] = set()
    if not isinstance(rec, dict):
        return out
    if rec.get("kind") == "FIELD" and "." in str(rec.get("stable_id")):
        out.add(str(rec["stable_id"]).rsplit(".", 1)[0])
    for k, v in rec.items():
        if k in _NOT_BELONGING or not (k.endswith(("_ref", "_refs")) or k == "declaring_type"):
            continue
        for x in v if isinstance(v, list) else [v]:
            if isinstance(x, str):
                out.add(x)
    return out


def _subst(value: Any, pattern: re.Pattern[str], renames: dict[str, str]) -> Any:
    if isinstance(value, str):
        return pattern.sub(lambda m: renames[m.group(0)], value)
    if isinstance(value, dict):
        return {k: _subst(v, pattern, renames) for k, v in value.items()}
    if isinstance(value, list):
        return [_subst(v, pattern, renames) for v in value]
    return value


def _identity(c: Change) -> bool:
    """Whether a row is a record that came, went, or took a new stable_id (a pair)."""
    return c.before is None or c.after is None or c.before.get("stable_id") != c.after.get("stable_id")


def _is_relation(c: Change) -> bool:
    return isinstance(c.before or c.after, dict) and "source_ref" in (c.before or c.after)


def _params(stable_id: Any) -> str:
    """The ``(…)`` a contract's or entry's stable_id ends with (its signature, its handler's parameters)."""
    text = str(stable_id)
    return text[text.rfind("("):] if text.endswith(")") and "(" in text else ""


def fold(changes: list[Change]) -> list[Change]:
    """Each change once: a row that exists only because of another change goes into that row's
    ``folded`` list, and the rows left are returned. A relation that came or went, or an entity that
    did or took a new stable_id, folds into the row of an entity that did too when

    * it names that entity on the same side (``source_ref``, ``target_ref``, ``declaring_type``,
      ``handler_ref``, a FIELD's type): the EXPOSES of a removed contract, the members of an added
      type, the calls of a method whose parameters changed;
    * it is an ENTRY and the entity is the provided CONTRACT of its urn (of its handler's parameters
      when the urn has several);

    an entity that came or went folds into a relation row that names it on the same side (a topic
    that only a changed send names); in both cases only into a class at least as specific
    (:data:`SPECIFICITY`: nothing leaves the listed classes for OTHER), an entity's row before a
    relation's. And a row on both sides that differs only in naming a paired entity (:func:`pair`)
    by its new stable_id folds into that pair's row, whatever its class: it changed nothing of its own.

    Of several rows it could fold into, the most specific (then the first stable_id) takes it;
    folded rows of folded rows go to the row that stays."""
    ix = _Index(changes)
    parent: dict[int, Change] = {}
    ordered = sorted(changes, key=_order)
    for c in ordered:  # into entities
        if _fold_renamed(c, ix, parent):
            continue
        if not _identity(c) or _is_relation(c) and c.before is not None and c.after is not None:
            continue  # a relation with a new target is a change of its own
        _attach(c, _named_entities(c, ix), parent)
    for c in ordered:  # an entity that came or went into the relation that names it
        if id(c) in parent or _is_relation(c) or not _identity(c):
            continue
        found = [r for rec, index in ((c.before, ix.named_before), (c.after, ix.named_after)) if isinstance(rec, dict)
                 for r in index.get(str(rec.get("stable_id")), [])]
        _attach(c, found, parent)
    kept: list[Change] = []
    for c in ordered:
        root = _root(c, parent)
        if root is c:
            kept.append(c)
        else:
            root.folded.append(c)
    return kept


class _Index:
    """The change rows :func:`fold` looks up: entity rows by stable_id and relation rows by the
    stable_ids they name (each per side), provided-contract rows by urn, and the renames of pairs."""

    def __init__(self, changes: list[Change]) -> None:
        self.before_of: dict[str, Change] = {}
        self.after_of: dict[str, Change] = {}
        self.named_before: dict[str, list[Change]] = {}
        self.named_after: dict[str, list[Change]] = {}
        #: provided CONTRACT rows that came, went or were paired, by urn
        self.contract_of: dict[str, list[Change]] = {}
        #: a pair's stable_id before → after
        self.renames: dict[str, str] = {}
        for c in changes:
            b, a = c.before, c.after
            if _is_relation(c):
                for rec, index in ((b, self.named_before), (a, self.named_after)):
                    for r in _refs(rec):
                        index.setdefault(r, []).append(c)
                continue
            if isinstance(b, dict) and "stable_id" in b:
                self.before_of[b["stable_id"]] = c
            if isinstance(a, dict) and "stable_id" in a:
                self.after_of[a["stable_id"]] = c
            if _identity(c) and (b or a).get("kind") == "CONTRACT" and (b or a).get("role") == "PROVIDED":
                self.contract_of.setdefault(str((b or a).get("urn")), []).append(c)
            if isinstance(b, dict) and isinstance(a, dict) and b.get("stable_id") != a.get("stable_id") and \
                    isinstance(b.get("stable_id"), str):
                self.renames[b["stable_id"]] = a["stable_id"]
        #: any renamed stable_id, longest first
        self.pattern = re.compile("|".join(re.escape(k) for k in sorted(self.renames, key=lambda k: (-len(k), k)))) \
            if self.renames else None


def _attach(c: Change, found: list[Change], parent: dict[int, Change], any_rank: bool = False) -> None:
    """Fold ``c`` into the most specific of ``found`` (then the first stable_id) of a class at least as
    specific (any class with ``any_rank``) that is not folded into ``c`` itself."""
    for p in sorted(found, key=lambda p: (_RANK[p.cls], _is_relation(p), p.stable_id)):
        if p is not c and (any_rank or _RANK[p.cls] <= _RANK[c.cls]) and _root(p, parent) is not c:
            parent[id(c)] = p  # never a cycle
            return


def _fold_renamed(c: Change, ix: _Index, parent: dict[int, Change]) -> bool:
    """Fold a row on both sides that differs only in naming paired entities by their new stable_ids
    into a pair's row; whether it folded."""
    b, a = c.before, c.after
    if ix.pattern is None or not isinstance(b, dict) or not isinstance(a, dict):
        return False
    hits = ix.pattern.findall(json.dumps(b, sort_keys=True, ensure_ascii=False))
    if not hits or _subst(b, ix.pattern, ix.renames) != a:
        return False
    _attach(c, [ix.before_of[h] for h in sorted(set(hits)) if h in ix.before_of], parent, any_rank=True)
    return id(c) in parent


def _named_entities(c: Change, ix: _Index) -> list[Change]:
    """The entity rows that came, went or were paired that ``c`` names on the same side, and for an
    ENTRY the provided contract of its urn (of its handler's parameters when the urn has several)."""
    b, a = c.before, c.after
    found = []
    for rec, index in ((b, ix.before_of), (a, ix.after_of)):
        found += [p for r in sorted(_refs(rec)) if (p := index.get(r)) is not None and _identity(p)]
    rec = a or b
    if rec.get("kind") == "ENTRY" and not _is_relation(c):
        sides = [p for p in ix.contract_of.get(str(rec.get("urn")), [])
                 if (p.before is None) == (b is None) and (p.after is None) == (a is None)]
        if len(sides) > 1:
            sides = [p for p in sides if _params(p.stable_id) == _params(c.stable_id)]
        found += sides[:1] if len(sides) == 1 else []
    return found


def _root(c: Change, parent: dict[int, Change]) -> Change:
    while id(c) in parent:
        c = parent[id(c)]
    return c


def rename_candidates(old: Package, new: Package) -> list[dict[str, Any]]:
    """Identity-mapping candidates for removed-and-added TYPEs (the same member signatures under
    another name, at least 80 % shared) and METHODs (the same name and parameters in another type,
    unless the two types are a candidate already): ``[{kind, before, after, basis}]``."""
    def members(pkg: Package, type_stable: str) -> set[str]:
        prefix = type_stable + "#"
        return {s[len(prefix):] for s, e in pkg.entities.items() if e["kind"] == "METHOD" and s.startswith(prefix)}

    out: list[dict[str, Any]] = []
    types: set[tuple[str, str]] = set()
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
                elif a.rsplit("#", 1)[-1] == b.rsplit("#", 1)[-1] and a.split("#")[0] != b.split("#")[0] and \
                        (a.split("#")[0], b.split("#")[0]) not in types:  # a renamed type's methods: said once
                    out.append({"kind": kind, "before": a, "after": b, "basis": "same name and parameters"})
            types = {(r["before"], r["after"]) for r in out}
    return out


def input_differences(old: Package, new: Package) -> list[str]:
    """The top-level components of the analysis input that differ (what the input digests disagree
    on): ``commit_sha``, ``rule_files``, ``config_files`` …"""
    keys = sorted(set(old.analysis_input) | set(new.analysis_input))
    return [k for k in keys if old.analysis_input.get(k) != new.analysis_input.get(k)]
