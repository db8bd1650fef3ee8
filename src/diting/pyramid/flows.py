"""L4 cross-service flows (docs/pyramid.md §6): from each entry, the graph of unique
(service, node, guard) states reached over aligned RPC, HTTP and MQ edges.

A **state** is an entry of a service package plus the guard (the ledger branch) under which the hop
into it happens. Its **hops** are the remote effects of the entry's reach (a call to a CONSUMED
contract, a PUBLISHES) and the alignment rows of each: a RESOLVED row is followed into the target
entry (a PROVIDED contract is mapped to the entry of equal urn and handler signature); an AMBIGUOUS
row (one per candidate) or an UNRESOLVED one is a step of its own, shown and never followed. DATA
rows are never followed.

Terminals: ``COMPLETED`` only where the state's reach writes a table or cache (the WRITES relations
are the evidence); ``REJECTED`` for each throw of the reach (its guard cited); ``MANUAL_HANDOFF`` for
a consumer whose failed messages go to a dead-letter topic; ``UNRESOLVED`` for a hop not followed as
certain, and for a leaf with no completion evidence; ``TRUNCATED`` where a budget stopped the walk,
listed in the flow's ``frontier``. A state reached again (a cycle or a join) is kept as a step with
``is_back_edge`` and not expanded again. A flow's ``weakest_status`` is the weakest status of its
hops: it is never more certain than that.
"""

from __future__ import annotations

import hashlib
from collections import deque
from dataclasses import dataclass
from typing import Any

from diting.pyramid.facts import PackageFacts, Reach

#: service hops a flow follows at most, and steps it holds at most (docs/pyramid.md §6)
MAX_HOPS = 5
MAX_STEPS = 2000
_STATUS_ORDER = ["UNRESOLVED", "AMBIGUOUS", "RESOLVED"]
#: lines a Mermaid diagram holds at most (Mermaid's default text limit is 50,000 characters)
MAX_DIAGRAM_LINES = 300
_EDGE = {"RPC": "SEQUENCE", "HTTP": "SEQUENCE", "MQ": "EVENT_TRIGGER"}


@dataclass
class EntryInfo:
    """What a flow needs of one entry: its package, its reach and names."""

    scan_id: str
    service_id: str
    label: str
    entry_rid: str
    stable_id: str
    urn: str
    attributes: dict[str, Any]
    facts: PackageFacts
    reach: Reach


def _sid(*parts: str | None) -> str:
    return "step:" + hashlib.sha256("\n".join(p or "" for p in parts).encode("utf-8")).hexdigest()[:16]


def _edge_type(hop: dict[str, Any]) -> str:
    """The edge a hop draws: by its first alignment row's kind (RPC and HTTP a SEQUENCE, MQ an
    EVENT_TRIGGER), without rows by its relation (a PUBLISHES an EVENT_TRIGGER); ASYNC when the call
    is asynchronous."""
    rows = hop["rows"]
    edge = _EDGE.get(rows[0]["edge_kind"], "SEQUENCE") if rows else (
        "EVENT_TRIGGER" if hop["via"].startswith("relation:PUBLISHES") else "SEQUENCE")
    if hop["attributes"].get("async") or hop["attributes"].get("dispatch_kind") == "ASYNC":
        edge = "ASYNC"
    return edge


def _truncate(queue: deque) -> list[str]:
    """Marks the step of every state still ``queue``d (``(info, step, guard, depth)``) TRUNCATED by the
    step budget; their entry rids, the frontier, in queue order."""
    for q in queue:
        q[1]["terminal"] = "TRUNCATED"
        q[1]["reason"] = f"budget: {MAX_STEPS} steps"
    return [q[0].entry_rid for q in queue]


def _state_end(info: EntryInfo, step: dict[str, Any], followed: int) -> None:
    """Sets the terminal of an expanded state's ``step``: COMPLETED (``completion_refs``: the WRITES of
    its reach with a target) whatever it hands on, else UNRESOLVED when no hop was ``followed``."""
    writes = [w for w in info.reach.effects.get("WRITES", []) if info.facts.relations[w]["target"]]
    if writes:  # this state's work completes with a write as evidence, whatever it hands on
        step["terminal"] = "COMPLETED"
        step["completion_refs"] = writes
    elif not followed:  # the flow ends here and nothing shows the work is done
        step["terminal"] = "UNRESOLVED"
        step["reason"] = "no state write or receipt in its reach: read-only, or completion not evidenced"


def _flow_record(flow_id: str, root: EntryInfo, steps: list[dict[str, Any]], frontier: list[str],
                 full: bool) -> dict[str, Any]:
    """The flow record of walked ``steps`` (the root's first): its weakest status over the hops, hop
    and step counts, whether a budget truncated it (``full``: the step budget was spent) and its
    ``frontier`` (sorted, once each)."""
    truncated = full or any(s["terminal"] == "TRUNCATED" for s in steps)
    statuses = [s["resolution_status"] for s in steps[1:]] or ["RESOLVED"]
    weakest = min(statuses, key=_STATUS_ORDER.index)
    return {"flow_id": flow_id, "root_entry_ref": {"scan_id": root.scan_id, "record_id": root.entry_rid},
            "root_service_id": root.service_id, "label": root.label, "weakest_status": weakest,
            "hop_count": max(s["hop"] for s in steps if s["terminal"] != "TRUNCATED"), "step_count": len(steps),
            "truncated": truncated,
            "frontier": sorted(set(frontier))}


class FlowBuilder:
    """Flows over every entry; ``entries``: (scan_id, entry rid) → :class:`EntryInfo`;
    ``alignment``: rows of the current packages (RPC, HTTP, MQ)."""

    def __init__(self, entries: dict[tuple[str, str], EntryInfo], alignment: list[dict[str, Any]]) -> None:
        self.entries = entries
        self.by_src_node: dict[tuple[str, str], list[dict[str, Any]]] = {}
        self.by_src_ref: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for row in alignment:
            if row["src_scan_id"] is None:
                continue
            self.by_src_node.setdefault((row["src_scan_id"], row["src_node_ref"]), []).append(row)
            self.by_src_ref.setdefault((row["src_scan_id"], row["src_ref"]), []).append(row)
        self.variant = {info.scan_id: info.label for info in entries.values()}
        self._hop_cache: dict[tuple[str, str], list[dict[str, Any]]] = {}
        # PROVIDED contract → the entry serving it (equal urn and handler signature)
        self.entry_of_contract: dict[tuple[str, str], str] = {}
        by_pkg: dict[str, list[EntryInfo]] = {}
        for info in entries.values():
            by_pkg.setdefault(info.scan_id, []).append(info)
        for scan_id, infos in by_pkg.items():
            facts = infos[0].facts
            for rid, e in facts.entities.items():
                if e["kind"] != "CONTRACT" or e["role"] != "PROVIDED":
                    continue
                same = [i for i in infos if i.urn == e["urn"]]
                exact = [i for i in same if facts.entities.get(facts.entities[i.entry_rid]["handler"] or "", {})
                         .get("signature") == e["signature"]]
                pick = exact if len(exact) == 1 else (same if len(same) == 1 else [])
                if pick:
                    self.entry_of_contract[(scan_id, rid)] = pick[0].entry_rid

    # ------------------------------------------------------------ hops
    def _hops(self, info: EntryInfo) -> list[dict[str, Any]]:
        """The remote effects of a state's reach with their alignment rows (or none); an entry's are
        the same in every flow that reaches it, so they are worked out once."""
        key = (info.scan_id, info.entry_rid)
        if key not in self._hop_cache:
            self._hop_cache[key] = self._entry_hops(info)
        return self._hop_cache[key]

    def _entry_hops(self, info: EntryInfo) -> list[dict[str, Any]]:
        f = info.facts
        hops = []
        for rid in info.reach.effects.get("CALLS", []):
            rel = f.relations[rid]
            tgt = rel["target"]
            if rel["status"] == "RESOLVED" and tgt and tgt.startswith("contract:"):
                rows = self.by_src_node.get((info.scan_id, tgt), [])
                hops.append({"via": rid, "guard": rel["guard"], "target": tgt, "rows": rows,
                             "attributes": rel["attributes"]})
            elif rel["status"] == "UNRESOLVED" and rel["attributes"].get("dispatch_kind") == "RPC":
                hops.append({"via": rid, "guard": rel["guard"], "target": None,
                             "rows": self.by_src_ref.get((info.scan_id, rid), []), "attributes": rel["attributes"]})
        for rid in info.reach.effects.get("PUBLISHES", []):
            rel = f.relations[rid]
            hops.append({"via": rid, "guard": rel["guard"], "target": rel["target"],
                         "rows": self.by_src_ref.get((info.scan_id, rid), []), "attributes": rel["attributes"]})
        return hops

    def _target_entry(self, row: dict[str, Any]) -> str | None:
        if row["dst_ref"] is None:
            return None
        if row["dst_ref"].startswith("entry:"):
            return row["dst_ref"]
        return self.entry_of_contract.get((row["dst_scan_id"], row["dst_ref"]))

    # ------------------------------------------------------------ walk
    def flow(self, root: EntryInfo) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """The flow of one root entry and its steps."""
        flow_id = f"flow:{root.service_id}{'+' + root.label if root.label else ''}/{root.stable_id}"
        steps: list[dict[str, Any]] = []
        frontier: list[str] = []
        expanded: set[tuple[str, str, str | None]] = set()
        root_step = self._step(flow_id, None, root.service_id, root.entry_rid, None, None, "SEQUENCE", "RESOLVED",
                               scan_id=root.scan_id)
        steps.append(root_step)
        queue = deque([(root, root_step, None, 0)])
        queued = {(root.scan_id, root.entry_rid, None)}
        full = False  # the step budget is spent: nothing more is added, what was not expanded is the frontier

        def add(step: dict[str, Any]) -> bool:
            nonlocal full
            if len(steps) >= MAX_STEPS:
                full = True
                return False
            steps.append(step)
            return True
        while queue:
            if full:  # the budget is spent: what is still queued is the frontier, shown but not expanded
                frontier += _truncate(queue)
                break
            info, step, guard, depth = queue.popleft()
            expanded.add((info.scan_id, info.entry_rid, guard))
            followed = 0
            for hop in self._hops(info):
                rows = hop["rows"]
                edge = _edge_type(hop)
                if not rows:
                    add(self._step(flow_id, step, None, hop["target"] or hop["via"], hop["via"], hop["guard"], edge,
                                   "UNRESOLVED", terminal="UNRESOLVED",
                                   reason="no alignment row: nothing in the estate takes this hop"))
                    continue
                for row in rows:
                    status = row["resolution_status"]
                    target = self._target_entry(row)
                    dst = self.entries.get((row["dst_scan_id"], target)) if target else None
                    if status != "RESOLVED" or dst is None:
                        why = row["match_basis"] if dst is not None or status != "RESOLVED" else \
                            "the provided contract maps to no single entry"
                        add(self._step(flow_id, step, row["dst_service"], target or row["dst_ref"] or row["urn"] or
                                       hop["via"], hop["via"], hop["guard"], edge,
                                       status if status != "RESOLVED" else "UNRESOLVED", terminal="UNRESOLVED",
                                       reason=why, scan_id=row["dst_scan_id"]))
                        continue
                    followed += 1  # the flow goes on from here (again, beyond a budget, or now)
                    new_state = (dst.scan_id, dst.entry_rid, hop["guard"])
                    if new_state in expanded or new_state in queued:
                        add(self._step(flow_id, step, dst.service_id, dst.entry_rid, hop["via"], hop["guard"], edge,
                                       status, back=True, scan_id=dst.scan_id))
                        continue
                    if depth + 1 > MAX_HOPS:
                        frontier.append(dst.entry_rid)
                        add(self._step(flow_id, step, dst.service_id, dst.entry_rid, hop["via"], hop["guard"], edge,
                                       status, terminal="TRUNCATED", scan_id=dst.scan_id,
                                       reason=f"budget: {MAX_HOPS} service hops"))
                        continue
                    child = self._step(flow_id, step, dst.service_id, dst.entry_rid, hop["via"], hop["guard"], edge,
                                       status, scan_id=dst.scan_id)
                    if not add(child):
                        frontier.append(dst.entry_rid)
                        continue
                    queued.add(new_state)
                    queue.append((dst, child, hop["guard"], depth + 1))
            self._local_terminals(flow_id, info, step, add)
            _state_end(info, step, followed)
        if full:
            steps[0]["reason"] = f"budget: {MAX_STEPS} steps; the frontier was not expanded"
        return _flow_record(flow_id, root, steps, frontier, full), steps

    def _local_terminals(self, flow_id: str, info: EntryInfo, step: dict[str, Any], add) -> None:
        """REJECTED per throw of the reach, MANUAL_HANDOFF for a dead-letter topic."""
        f = info.facts
        by_branch = f.by_branch()
        throws = f.always_throws()
        for call in f.rejecting_calls(info.reach.effects.get("CALLS", [])):
            rel = f.relations[call]  # a validation helper: the rejection is the caller's, under the caller's guard
            add(self._step(flow_id, step, info.service_id, call, call, rel["guard"], "SEQUENCE", "RESOLVED",
                           terminal="REJECTED", scan_id=info.scan_id,
                           reason=f"{f.name(rel['source'])} calls {f.name(rel['target'])}, which always throws"))
        for rid in info.reach.ledger:
            item = f.ledger[rid]
            if item["symbol"] in throws:
                continue  # shown at each call of the helper instead
            if item["branch_kind"] == "THROW" and item["status"] == "RESOLVED" and not item["exclusion_rule_id"]:
                parent = by_branch.get(item["parent"] or "")
                add(self._step(flow_id, step, info.service_id, rid, rid, parent["record_id"] if parent else None,
                               "SEQUENCE", "RESOLVED", terminal="REJECTED", scan_id=info.scan_id, reason=item["exit"]))
        dlq = info.attributes.get("dead_letter_topic")
        if dlq:
            add(self._step(flow_id, step, info.service_id, info.entry_rid, info.entry_rid, None, "RETRY", "RESOLVED",
                           terminal="MANUAL_HANDOFF", scan_id=info.scan_id,
                           reason=f"after {info.attributes.get('max_retries', 'the broker default')} retries the "
                                  f"message goes to {dlq}"))

    def _step(self, flow_id: str, parent: dict[str, Any] | None, service: str | None, node: str, via: str | None,
              guard: str | None, edge: str, status: str, terminal: str | None = None, back: bool = False,
              reason: str | None = None, scan_id: str | None = None) -> dict[str, Any]:
        pid = parent["step_id"] if parent else None
        hop = (parent["hop"] + (1 if service and parent["service_id"] != service and edge != "RETRY" else 0)
               if parent else 0)
        # which package of the service the step is in, by its variant (label, profile set): stable across
        # rescans, unlike the scan_id, yet apart when one service has several current packages
        where = f"{service}+{self.variant.get(scan_id or '', '')}"
        return {"flow_id": flow_id, "step_id": _sid(flow_id, pid, via, node, guard, str(back), where),
                "parent_step_id": pid, "service_id": service, "scan_id": scan_id, "node_ref": node, "via_ref": via,
                "edge_type": edge, "guard_refs": [guard] if guard else [], "resolution_status": status,
                "is_back_edge": back, "terminal": terminal, "reason": reason, "hop": hop}


def _mermaid_text(text: str) -> str:
    """Mermaid-safe text: letters, digits and a few marks; anything else (``#``, ``;``, quotes,
    newlines, control characters) becomes a space; at most 120 characters."""
    out = " ".join("".join(ch if ch.isalnum() or ch in " _-./:(){}[],@*?='+!<>" else " "
                            for ch in str(text).replace('"', "'").replace("||", " or ")
                            .replace("&&", " and ")).split())
    out = out if len(out) <= 120 else out[:119] + "…"
    return out.replace("<", "#lt;").replace(">", "#gt;")  # Mermaid's entity codes: no markup


def _state_notes(s: dict[str, Any], kids: list[dict[str, Any]], me: str, name) -> list[str]:
    """The diagram lines of a state's own endings, over participant ``me``, right after the arrow
    into it: rejections among its child steps ``kids`` (one note per distinct reason, at most eight),
    a manual handoff, completion or its absence."""
    safe = _mermaid_text
    lines = []
    rejected: dict[str, int] = {}
    for k in kids:
        if k["terminal"] == "REJECTED":
            when = f"{safe(name(k['guard_refs'][0]))} " if k["guard_refs"] else ""  # "when …", "when not …"
            key = f"rejected {when}- {safe(k['reason'] or '')}"
            rejected[key] = rejected.get(key, 0) + 1
    for key, n in list(rejected.items())[:8]:
        lines.append(f"    Note over {me}: {key}" + (f" (x{n})" if n > 1 else ""))
    if len(rejected) > 8:
        lines.append(f"    Note over {me}: and {len(rejected) - 8} more kinds of rejection (see the JSON)")
    for k in kids:
        if k["terminal"] == "MANUAL_HANDOFF":
            lines.append(f"    Note over {me}: manual handoff - {safe(k['reason'] or '')}")
    if s["terminal"] == "COMPLETED":
        written = sorted({name(w).removeprefix("writes ") for w in s.get("completion_refs", [])})
        shown = ", ".join(written[:4]) + (f" and {len(written) - 4} more" if len(written) > 4 else "")
        lines.append(f"    Note over {me}: completed - writes {safe(shown)}")
    elif s["terminal"] == "UNRESOLVED" and s["resolution_status"] == "RESOLVED" and not s["is_back_edge"]:
        lines.append(f"    Note over {me}: ends - no write recorded (read-only, or completion not evidenced)")
    return lines


def _arrow_line(s: dict[str, Any], src: str, me: str, name) -> str:
    """The diagram line of the hop into step ``s``, from participant ``src`` to ``me``: an open arrow
    for a message or an asynchronous call, a cross for a hop not RESOLVED or truncated, labelled with
    the relation it goes by and what makes it less than plain."""
    safe = _mermaid_text
    arrow = {"EVENT_TRIGGER": "-)", "ASYNC": "-)"}.get(s["edge_type"], "->>")
    if s["resolution_status"] != "RESOLVED" or s["terminal"] == "TRUNCATED":
        arrow = "-x"
    suffix = f" [{s['resolution_status']}]" if s["resolution_status"] != "RESOLVED" else ""
    suffix += " (again)" if s["is_back_edge"] else ""
    suffix += " [TRUNCATED]" if s["terminal"] == "TRUNCATED" else ""
    label = safe(name(s["via_ref"]) if s["via_ref"] else "")
    return f"    {src}{arrow}{me}: {label or '?'}{safe(suffix) and ' ' + safe(suffix)}"


def mermaid(steps: list[dict[str, Any]], name) -> str:
    """A Mermaid sequence diagram of a flow; ``name(record_id)`` gives a readable node name."""
    safe = _mermaid_text
    parts: list[str] = []

    def part(svc: str | None) -> str:
        key = svc or "unknown"
        alias = "p" + str(len(parts)) if key not in [p[0] for p in parts] else \
            next(a for k, a in parts if k == key)
        if key not in [p[0] for p in parts]:
            parts.append((key, alias))
        return alias
    children: dict[str | None, list[dict[str, Any]]] = {}
    for s in steps:
        children.setdefault(s["parent_step_id"], []).append(s)
    lines: list[str] = []

    def walk(s: dict[str, Any], src: str | None) -> None:
        me = part(s["service_id"])
        if src is None:
            lines.append(f"    Note over {me}: {safe(name(s['node_ref']))}")
        else:
            lines.append(_arrow_line(s, src, me, name))
        lines.extend(_state_notes(s, children.get(s["step_id"], []), me, name))
        hops = [k for k in children.get(s["step_id"], []) if k["terminal"] not in ("REJECTED", "MANUAL_HANDOFF")]
        guards: dict[str | None, list[dict[str, Any]]] = {}
        for k in hops:
            guards.setdefault(k["guard_refs"][0] if k["guard_refs"] else None, []).append(k)
        for guard, group in guards.items():
            if guard is not None:  # the hop happens only under its branch's condition
                lines.append(f"    opt {safe(name(guard)) or 'a branch'}")
            for k in group:
                walk(k, me)
            if guard is not None:
                lines.append("    end")
    for root in children.get(None, []):
        walk(root, None)
    if len(lines) > MAX_DIAGRAM_LINES:  # Mermaid refuses large texts: the JSON keeps every step
        more = len(lines) - MAX_DIAGRAM_LINES
        lines = lines[:MAX_DIAGRAM_LINES] + [f"    Note over {parts[0][1]}: {more} more line(s) not drawn; see the "
                                             "flow's steps in the JSON"]
    head = ["sequenceDiagram"] + [f"    participant {a} as {safe(k)}" for k, a in parts]
    return "\n".join(head + lines) + "\n"
