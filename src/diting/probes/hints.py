"""Entry hints and dynamic calls: what a rule marks as an entry point, and calls whose target is chosen at run time (docs/middleware.md §2)."""

from __future__ import annotations

from typing import TYPE_CHECKING


if TYPE_CHECKING:
    from diting.probes.context import ProbeContext


def entry_hints(pc: "ProbeContext") -> None:
    """ENTRY_UNRESOLVED for a concrete class that looks like an entry and yields none: it implements
    a listener or handler interface an ENTRY_HINT type rule names, or carries an annotation whose
    name ends like a listener's (ENTRY_HINT annotation rule) from a package no rule knows. A class
    with an entry, or already diagnosed as an unresolved or unloaded entry, is left alone; a
    ``lib:`` package (no context) reports nothing — the services holding the class do."""
    if not pc.ctx.deployed:
        return
    told: set[str] = set()
    for d in pc.rs.diagnostics.values():
        if d["code"] in ("ENTRY_UNRESOLVED", "ENTRY_NOT_LOADED"):
            told.update(r.rid if hasattr(r, "rid") else r["record_id"] for r in d["affected_refs"])
    handled = {e["handler_ref"].rid for e in pc.rs.entities.values()
               if e.get("kind") == "ENTRY" and e.get("handler_ref") is not None}
    for c in sorted(pc.ctx.by_emit.get("ENTRY_HINT", []), key=lambda c: (c["path"], c["lines"][0])):
        t = c["type"]
        if t.get("abstract") or t["kind"] in ("INTERFACE", "ANNOTATION"):
            continue
        methods = f"method:{c['ns']}/{t['binary']}#"
        if c.get("member"):  # a method's annotation: that method is an entry, or was diagnosed as none
            if c["member"]["rid"] in handled or c["member"]["rid"] in told or t["rid"] in told:
                continue
        elif any(r.startswith(methods) for r in handled) or t["rid"] in told or \
                any(r.startswith(methods) for r in told):
            continue
        where = f"{c['path']}:{c['lines'][0]}"
        if c["form"] == "type":
            what = f"implements {c['attrs']['supertype']}"
            need = ("a rule for how it is registered — the annotation or XML element that names its topic "
                    "(MQ_LISTENER with handler), or a type rule with its handler method")
        else:
            what = f"carries @{c['annotation']}, which no rule knows"
            need = (f"a rule matching annotation {c['annotation']} (MQ_LISTENER with its topic attribute, "
                    "SCHEDULED, or EVENT_LISTENER)")
        loaded = "" if pc.ctx.class_loaded(t["binary"]) else " (its class is not loaded by the context)"
        rid = c["member"]["rid"] if c.get("member") else t["rid"]
        pc.entry_failed(f"{where}|hint", f"{t['binary']} at {where} {what} but yields no entry{loaded}; "
                          f"{need} would make it one (docs/middleware.md §6)", [rid], c)
        told.add(t["rid"])


def dynamic_calls(pc: "ProbeContext") -> None:
    for c in pc.ctx.by_emit.get("DYNAMIC_CALL", []):
        m = c["member"]
        call = c["call"]
        names = pc.texts(pc.role(c, "name"))
        d = pc.diag("UNDETERMINED_DYNAMIC_EDGE", f"{call['callsite_id']}|dynamic", f"{call['expression']} at "
                      f"{c['path']}:{c['lines'][0]} chooses its target at run time", [m["rid"]], c)
        pc.rs.relation("CALLS", m["rid"], m["stable"], target_rid=None, target_key="?" + call["expression"],
                         status="UNRESOLVED", evidence=[pc.cseg(c)], diagnostics=[d], ordinal=call["ordinal"],
                         callsite_id=call["callsite_id"],
                         match_keys={"expression": call["expression"], "name": names[0] if names else None},
                         attributes={"dispatch_kind": "DYNAMIC", "declared_target": call["name"],
                                     "binding_evidence": None})
