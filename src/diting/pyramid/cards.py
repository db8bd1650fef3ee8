"""L2 entry cards and the static business rules they cite (docs/pyramid.md §3, §4).

One card per entry of a service package. Its statements come from :mod:`diting.pyramid.templates`:

* TRIGGER (the entry), INPUT (the handler's parameters), RESULT (its return type; the tables and
  caches its reach writes);
* one CONDITION per resolved ledger item of the reach that is not a throw, one FAILURE per throw;
* one ACTION per remote call, write or send of the reach, one DEPENDENCY per read and per config
  switch guarding a reached method.

The ledger items of the reach (:func:`diting.pyramid.facts.reach`) split into ``ledger_mapped``
(cited by a CONDITION or FAILURE), ``ledger_excluded`` (an ``exclusion_rule_id``, by rule id) and
``ledger_unknown`` (not RESOLVED): together exactly the reach's items. Every mapped item is also a
**business rule** (``derivation_kind`` STATIC_DERIVATION, ``review_status`` UNREVIEWED; the
predicate is the guard's code, kept OPAQUE — diting does not interpret it) that the card references.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from diting.pyramid.facts import PackageFacts, Reach, arm_words, reach, short_method
from diting.pyramid.templates import family, statement

_OUTCOME = {"CONTINUE": "continues", "RETURN": "returns", "THROW": "rejects (throws)", "BREAK": "leaves the loop",
            "CONTINUE_LOOP": "continues the loop", "ASYNC_SUBMIT": "hands work to another thread"}
#: a conditional SQL fragment that holds is added to its statement
_SQL_KINDS = ("SQL_IF", "SQL_WHEN", "SQL_OTHERWISE")
#: ledger items that decide something, and so are business rules (a loop, an exit or a finally block is
#: mapped on the card but is no rule of its own)
RULE_KINDS = {"IF", "ELSE", "CASE", "DEFAULT", "CATCH", "SQL_IF", "SQL_WHEN", "SQL_OTHERWISE", "STRATEGY", "THROW"}
_EFFECT_KIND = {"WRITES": "WRITE", "READS": "READ", "PUBLISHES": "PUBLISH"}


def digest(value: Any) -> str:
    """sha256 of the canonical JSON of ``value`` (sorted keys), hex."""
    return hashlib.sha256(json.dumps(value, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()


def _rel_cite(facts: PackageFacts, rid: str) -> tuple[str, str]:
    return rid, family(rid, facts.relations[rid]["kind"])


def _guard_text(facts: PackageFacts, guard: str | None) -> str:
    """`` when `x != null` `` (`` when not `…` `` under an else, `` on `catch (…)` `` …): the arm of
    ``guard`` an action runs under, worded per arm (:func:`~diting.pyramid.facts.arm_words`)."""
    item = facts.ledger.get(guard) if guard else None
    if item is None:
        return ""
    arm, code = arm_words(item)
    return f" {arm} `{code}`{facts.line_note(item)}"


def target_name(facts: PackageFacts, r: dict[str, Any]) -> str:
    """The target of relation ``r`` by name, or ``an unresolved target (expression)`` when it has none."""
    if r["target"]:
        return facts.name(r["target"])
    keys = r["match_keys"]
    expr = keys.get("topic_expression") or keys.get("key_expression") or keys.get("table_expression")
    return f"an unresolved target ({expr})" if expr else "an unresolved target"


def _method_of(facts: PackageFacts, item: dict[str, Any]) -> str:
    sym = facts.entities.get(item["symbol"])
    if sym is None:
        return item["symbol"].split(":", 1)[-1]
    return short_method(sym["stable_id"]) if sym["kind"] == "METHOD" else sym["stable_id"]


def rule_id(facts: PackageFacts, label: str, branch_id: str) -> str:
    """``rule:{service}[+label]/{branch_id}``: a labelled (gray) package's rules are its own."""
    return f"rule:{facts.service_id}{'+' + label if label else ''}/{branch_id}"


def business_rule(facts: PackageFacts, item: dict[str, Any], guards: dict[str, list[str]],
                  label: str = "") -> dict[str, Any]:
    """The static rule record of one ledger item (the fields of docs/pyramid.md §4)."""
    rejects = facts.rejecting_calls(item["effects"])
    effects = [{"kind": "REJECT", "outcome": "THROW", "ref": rejects[0] if rejects else item["record_id"]}] \
        if item["outcome"] == "THROW" or rejects else []
    tables: set[str] = set()
    for rid in item["effects"]:
        r = facts.relations.get(rid)
        kind = _EFFECT_KIND.get(r["kind"], "OTHER") if r else "OTHER"
        effects.append({"kind": kind, "outcome": item["outcome"], "ref": rid})
        if r and r["target"] and r["target"].startswith("table:"):
            tables.add(r["target"])
    if not effects:
        effects.append({"kind": "REJECT" if item["outcome"] == "THROW" else "OTHER", "outcome": item["outcome"],
                        "ref": None})
    configs = sorted({facts.relations[g]["source"] for g in guards.get(item["record_id"], [])})
    _, text = arm_words(item)
    body = {
        "schema_version": "0.2",
        "rule_id": rule_id(facts, label, item["branch_id"]),
        "service_id": facts.service_id,
        "subject": {"symbol_ref": item["symbol"], "branch_id": item["branch_id"], "branch_kind": item["branch_kind"]},
        "scope": {"service_id": facts.service_id, "implementation_scope": facts.implementation_scope,
                  "resolution": "KNOWN"},
        "predicate": {"op": "OPAQUE", "text": text, "negated": item["branch_kind"] == "ELSE",
                      "reason": "the guard's source text; diting records it and does not interpret it"
                                + ("; the rule is the else arm: it holds when the text does not"
                                   if item["branch_kind"] == "ELSE" else "")},
        "effects": effects,
        "exceptions": {"resolution": "UNKNOWN"},
        "evidence_ids": [item["record_id"]],
        "derivation_kind": "STATIC_DERIVATION",
        "review_status": "UNREVIEWED",
        "freshness": "CURRENT",
        "resolution_status": item["status"],
        "config_dependencies": configs,
        "entity_refs": sorted(tables),
    }
    body["revision_id"] = "rulerev:" + digest({**body, "symbol_revision": item["revision"]})[:24]
    return body


_PART = re.compile(r"(\d+)")


def source_order(branch_id: str) -> list:
    """A sort key putting a method's branches in source order: ``then`` before ``else``, indices as numbers."""
    key: list = []
    for part in branch_id.split("/"):
        part = {"then": "0then", "else": "1else"}.get(part, part)
        key.append([int(x) if x.isdigit() else x for x in _PART.split(part)])
    return key


def _ledger_statements(facts: PackageFacts, r: Reach) -> tuple[list[dict], list[str], dict[str, list[str]],
                                                                list[str]]:
    by_branch = facts.by_branch()
    stmts: list[dict] = []
    mapped: list[str] = []
    excluded: dict[str, list[str]] = {}
    unknown: list[str] = []
    order = {m: i for i, m in enumerate(r.methods + r.statements)}
    for rid in sorted(r.ledger, key=lambda x: (order.get(facts.ledger[x]["symbol"], len(order)),
                                               source_order(facts.ledger[x]["branch_id"]))):
        item = facts.ledger[rid]
        if item["exclusion_rule_id"]:
            excluded.setdefault(item["exclusion_rule_id"], []).append(rid)
            continue
        if item["status"] != "RESOLVED":
            unknown.append(rid)
            continue
        method = _method_of(facts, item)
        if item["branch_kind"] == "THROW":
            parent = by_branch.get(item["parent"] or "")
            stmts.append(statement("FAILURE", [(rid, "branch")], method=method,
                                   exit=item["exit"] or arm_words(item)[1], at=facts.line_note(item, exit_=True),
                                   when=_guard_text(facts, parent["record_id"]) if parent else ""))
        else:
            rejects = facts.rejecting_calls(item["effects"])
            outcome = (("rejects unless an inner branch returns first" if facts.leaves_early(item["branch_id"])
                        else "rejects") + f" (calls {facts.name(facts.relations[rejects[0]]['target'])}, which "
                       "always throws)" if rejects else "adds its fragment to the statement" if item["branch_kind"] in _SQL_KINDS
                       else _OUTCOME.get(item["outcome"], item["outcome"].lower()))
            arm, code = arm_words(item)
            stmts.append(statement("CONDITION", [(rid, "branch")], method=method, arm=arm, condition=code,
                                   at=facts.line_note(item), outcome=outcome))
        mapped.append(rid)
    return stmts, mapped, excluded, unknown


def _handler_statements(facts: PackageFacts, entry_rid: str) -> list[dict[str, Any]]:
    """The entry's TRIGGER, and when its handler is a method of the package, INPUT (its parameters,
    if any) and RESULT_RETURN (its return type, unless void)."""
    e = facts.entities[entry_rid]
    handler = e["handler"]
    stmts = [statement("TRIGGER", [(entry_rid, "entry")], entry_kind=e["entry_kind"], urn=e["urn"],
                       handler=facts.name(handler))]
    h = facts.entities.get(handler) if handler else None
    if h is not None and h["kind"] == "METHOD":
        params = h["attributes"].get("parameters") or []
        if params:
            stmts.append(statement("INPUT", [(handler, "method")], handler=facts.name(handler),
                                   params=", ".join(f"{p.get('type', '?').rsplit('.', 1)[-1]} {p.get('name', '?')}"
                                                    for p in params)))
        ret = h["attributes"].get("return_type")
        if ret and ret != "void":
            stmts.append(statement("RESULT_RETURN", [(handler, "method")], handler=facts.name(handler),
                                   type=ret.rsplit(".", 1)[-1]))
    return stmts


def _remote_statements(facts: PackageFacts, r: Reach) -> tuple[list[dict[str, Any]], list[str], list[str]]:
    """ACTION_CALL per resolved call of the reach into a contract and ACTION_PUBLISH per send:
    ``(statements, contracts called, topics published)`` (record ids in reach order, repeats kept)."""
    rels = facts.relations
    stmts, downstream, topics_out = [], [], []
    for rid in r.effects.get("CALLS", []):
        c = rels[rid]
        if c["status"] == "RESOLVED" and c["target"] and c["target"].startswith("contract:"):
            t = facts.entities.get(c["target"], {})
            stmts.append(statement("ACTION_CALL", [_rel_cite(facts, rid)], method=facts.name(c["source"]),
                                   protocol=(t.get("attributes", {}).get("protocol") or "").upper() or "remote",
                                   urn=facts.name(c["target"]), guard=_guard_text(facts, c["guard"])))
            downstream.append(c["target"])
    for rid in r.effects.get("PUBLISHES", []):
        p = rels[rid]
        stmts.append(statement("ACTION_PUBLISH", [_rel_cite(facts, rid)], method=facts.name(p["source"]),
                               topic=target_name(facts, p), guard=_guard_text(facts, p["guard"])))
        if p["target"]:
            topics_out.append(p["target"])
    return stmts, downstream, topics_out


def _state_statements(facts: PackageFacts, r: Reach) -> tuple[list[dict[str, Any]], list[str], list[str], list[str]]:
    """ACTION_WRITE per write of the reach, RESULT_STATE per target written (citing its writes) and
    DEPENDENCY_READ per read: ``(statements, tables written, tables read, caches written or read)``
    (record ids, repeats kept)."""
    rels = facts.relations
    stmts, writes, reads, caches = [], [], [], []
    written: dict[str, list[str]] = {}
    for rid in r.effects.get("WRITES", []):
        w = rels[rid]
        stmts.append(statement("ACTION_WRITE", [_rel_cite(facts, rid)], source=facts.name(w["source"]),
                               target=target_name(facts, w), guard=_guard_text(facts, w["guard"])))
        if w["target"]:
            written.setdefault(w["target"], []).append(rid)
            (caches if w["target"].startswith("cache:") else writes).append(w["target"])
    for target, rids in sorted(written.items()):
        stmts.append(statement("RESULT_STATE", [_rel_cite(facts, x) for x in rids], target=facts.name(target),
                               count=len(rids)))
    for rid in r.effects.get("READS", []):
        rd = rels[rid]
        stmts.append(statement("DEPENDENCY_READ", [_rel_cite(facts, rid)], source=facts.name(rd["source"]),
                               target=target_name(facts, rd)))
        if rd["target"] and rd["target"].startswith("table:"):
            reads.append(rd["target"])
        elif rd["target"] and rd["target"].startswith("cache:"):
            caches.append(rd["target"])
    return stmts, writes, reads, caches


def entry_card(facts: PackageFacts, entry_rid: str, label: str,
               guards_into: dict[str, list[str]]) -> tuple[dict[str, Any], Reach]:
    """The card of one entry and the entry's reach. ``guards_into``: method rid → GUARDS relations
    onto it."""
    e = facts.entities[entry_rid]
    r = reach(facts, e["handler"])
    rels = facts.relations
    stmts = _handler_statements(facts, entry_rid)
    ledger_stmts, mapped, excluded, unknown = _ledger_statements(facts, r)
    stmts += ledger_stmts
    remote_stmts, downstream, topics_out = _remote_statements(facts, r)
    stmts += remote_stmts
    state_stmts, writes, reads, caches = _state_statements(facts, r)
    stmts += state_stmts
    switches = sorted({g for m in r.methods for g in guards_into.get(m, [])})
    for g in switches:
        stmts.append(statement("DEPENDENCY_SWITCH", [_rel_cite(facts, g)], key=facts.name(rels[g]["source"]),
                               method=facts.name(rels[g]["target"])))
    unresolved = _unresolved(facts, r, unknown)
    rules = sorted(rule_id(facts, label, facts.ledger[i]["branch_id"]) for i in mapped
                   if facts.ledger[i]["branch_kind"] in RULE_KINDS)
    card = {
        "card_id": f"card:{facts.service_id}{'+' + label if label else ''}/{e['stable_id']}",
        "service_id": facts.service_id,
        "label": label,
        "scan_id": facts.scan_id,
        "entry_ref": {"scan_id": facts.scan_id, "record_id": entry_rid},
        "entry_kind": e["entry_kind"],
        "urn": e["urn"],
        "statements": stmts,
        "db_reads": sorted(set(reads)),
        "db_writes": sorted(set(writes)),
        "cache_keys": sorted(set(caches)),
        "downstream_calls": sorted(set(downstream)),
        "topics_out": sorted(set(topics_out)),
        "config_switches": sorted({rels[g]["source"] for g in switches}),
        "ledger_mapped": mapped,
        "ledger_excluded": {k: v for k, v in sorted(excluded.items())},
        "ledger_unknown": unknown,
        "rule_ref_ids": rules,
        "unresolved": unresolved,
        "complete": not unresolved and not unknown,
    }
    card["revision_id"] = "cardrev:" + digest({k: v for k, v in card.items() if k != "scan_id"})[:24]
    return card, r


def _unresolved(facts: PackageFacts, r: Reach, unknown_items: list[str]) -> list[dict[str, str]]:
    out = []
    for rid in r.unknown_calls:
        c = facts.relations[rid]
        code = "AMBIGUOUS_CALL" if c["status"] == "AMBIGUOUS" else "UNRESOLVED_CALL"
        why = c["match_keys"].get("reason")
        reason = (f"{len(c['candidates'])} candidates" if c["status"] == "AMBIGUOUS" else
                  "the call's target is not known statically" + (f" ({why})" if why else ""))
        out.append({"code": code, "target": rid, "reason": reason})
    for kind in ("PUBLISHES", "READS", "WRITES"):
        for rid in r.effects.get(kind, []):
            x = facts.relations[rid]
            if x["status"] != "RESOLVED":
                out.append({"code": f"{kind}_UNRESOLVED", "target": rid,
                            "reason": f"{target_name(facts, x)} of {facts.name(x['source'])}"})
    for rid in unknown_items:
        out.append({"code": "LEDGER_UNRESOLVED", "target": rid, "reason": "a branch whose outcome is not resolved"})
    if r.truncated:
        out.append({"code": "BUDGET_EXHAUSTED", "target": r.methods[0] if r.methods else "?",
                    "reason": "the reach was cut at its method budget"})
    return out


def package_cards(facts: PackageFacts, label: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]],
                                                            dict[str, Reach]]:
    """Cards of every entry of the package, the business rules they cite, and each entry's reach
    (by entry record id)."""
    guards_into: dict[str, list[str]] = {}
    guards_of_branch: dict[str, list[str]] = {}
    for rid, rel in facts.relations.items():
        if rel["kind"] == "GUARDS" and rel["target"]:
            guards_into.setdefault(rel["target"], []).append(rid)
            if rel["guard"]:
                guards_of_branch.setdefault(rel["guard"], []).append(rid)
    cards, reaches = [], {}
    rules: dict[str, dict[str, Any]] = {}
    for rid in sorted(x for x, e in facts.entities.items() if e["kind"] == "ENTRY"):
        card, r = entry_card(facts, rid, label, guards_into)
        cards.append(card)
        reaches[rid] = r
        for item in card["ledger_mapped"]:
            if facts.ledger[item]["branch_kind"] not in RULE_KINDS:
                continue
            rule = business_rule(facts, facts.ledger[item], guards_of_branch, label)
            rules.setdefault(rule["rule_id"], rule)
    return cards, [rules[k] for k in sorted(rules)], reaches
