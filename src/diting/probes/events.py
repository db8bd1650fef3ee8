"""Spring application events: publishers and listeners (docs/middleware.md §2)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from diting.resolve.spring import values

if TYPE_CHECKING:
    from diting.probes.context import ProbeContext


#: static types that say nothing about which listeners an event reaches
GENERIC_EVENT_TYPES = {"java.lang.Object", "org.springframework.context.ApplicationEvent",
                       "java.util.EventObject"}


def events(pc: "ProbeContext") -> None:
    for c in pc.ctx.by_emit.get("EVENT_PUBLISH", []):
        m = c["member"]
        call = c["call"]
        etype = call.get("arg_types", {}).get("payload")
        if not etype or etype.startswith("?") or etype in GENERIC_EVENT_TYPES:
            d = pc.diag("EVENT_TYPE_UNRESOLVED", f"{call['callsite_id']}|event", f"event published at "
                          f"{c['path']}:{c['lines'][0]} has no known type", [m["rid"]], c)
            attrs: dict[str, Any] = {"protocol": "event", "send_method": call["name"]}
            params = [p["name"] for p in m.get("params", [])]
            arg = c.get("attrs", {}).get("payload_name")
            if arg in params:  # a publishing helper: its callers' arguments have the event types
                attrs["payload_parameter"] = params.index(arg)
            pc.rs.relation("PUBLISHES", m["rid"], m["stable"], target_rid=None, target_key="?event",
                             status="UNRESOLVED", evidence=[pc.cseg(c)], diagnostics=[d],
                             ordinal=call["ordinal"], callsite_id=call["callsite_id"],
                             match_keys={"payload_expression": call["expression"]}, attributes=attrs)
            continue
        urn = f"event://{etype}"
        erid = pc.topic(urn, c, {"protocol": "event"}, kind="EVENT")
        pc.rs.relation("PUBLISHES", m["rid"], m["stable"], target_rid=erid, target_key=urn, status="RESOLVED",
                         evidence=[pc.cseg(c)], ordinal=call["ordinal"], callsite_id=call["callsite_id"],
                         attributes={"protocol": "event"})
    for c in pc.ctx.by_emit.get("EVENT_LISTENER", []):
        owner = c["type"]["binary"]
        if not pc.live_handler_class(c):
            continue
        handler = pc.declared_handler(c)
        if c["target"] == "METHOD":
            types = values(c, "classes") or [p["type"] for p in c["member"]["params"][:1]]
        else:
            types = c.get("attrs", {}).get("type_args", [])[:1]
        if handler is None or not types:
            key, why = f"{owner}|listener|{c['lines'][0]}", ("no handler method in the package" if handler is None
                                                              else "the event type is not known")
            if handler is not None:
                pc.diag("EVENT_TYPE_UNRESOLVED", key, f"event listener {owner} at {c['path']}:{c['lines'][0]}: "
                          f"{why}", [c["type"]["rid"]], c)
            pc.entry_failed(key, f"event listener {owner} at {c['path']}:{c['lines'][0]}: {why}",
                              [c["type"]["rid"]], c)
            continue
        for t in types:
            urn = f"event://{t}"
            entry = pc.entry("EVENT_LISTENER", urn, handler, c, {"event_type": t}, "EVENT_LISTENER")
            erid = pc.topic(urn, c, {"protocol": "event"}, kind="EVENT")
            pc.rs.relation("SUBSCRIBES", entry, pc.rs.entities[entry]["stable_id"], target_rid=erid,
                             target_key=urn, status="RESOLVED", evidence=[pc.cseg(c)],
                             attributes={"protocol": "event"})
