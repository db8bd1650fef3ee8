"""Cache operations and their key patterns (JimDB, Redis; docs/middleware.md §2)."""

from __future__ import annotations

from typing import TYPE_CHECKING


if TYPE_CHECKING:
    from diting.probes.context import ProbeContext


def cache_ops(pc: "ProbeContext") -> None:
    for c in pc.ctx.by_emit.get("CACHE_OP", []):
        rule = pc.s.rules.by_id[c["rule"]]
        proto = rule.emits.protocol or "redis"
        access = rule.emits.access or "WRITE"
        m = c["member"]
        call = c["call"]
        raw_prefix = c.get("attrs", {}).get("key_prefix")
        keys = pc.role(c, "key")
        full = keys[0] if keys else None
        head = pc.resolve({"value": raw_prefix, "vtype": "java.lang.String", "basis": "PREFIX",
                             "placeholders": "${" in raw_prefix}) if raw_prefix else None
        prefix = None
        if full is not None and full.value is not None:
            prefix, basis = full.value, "FULL_KEY"
        elif head is not None and head.value:
            prefix, basis = head.value, "PREFIX"
            full = head
        else:
            expr = full.expression if full else call["expression"]
            d = pc.diag("CONSTANT_UNRESOLVED", f"{call['callsite_id']}|cache", f"{proto} key at {c['path']}:"
                          f"{c['lines'][0]} ({expr}) has no constant prefix", [m["rid"]], c)
            pc.rs.relation("WRITES" if access == "WRITE" else "READS", m["rid"], m["stable"], target_rid=None,
                             target_key="?" + (expr or ""), status="UNRESOLVED", evidence=[pc.cseg(c)],
                             diagnostics=[d], ordinal=call["ordinal"], callsite_id=call["callsite_id"],
                             match_keys={"key_expression": expr, "protocol": proto},
                             attributes={"operation": call["name"]})
            continue
        urn = f"{proto}://{prefix}"
        krid = pc.topic(urn, c, {"protocol": proto}, kind="CACHE_KEY")
        pc.rs.relation("WRITES" if access == "WRITE" else "READS", m["rid"], m["stable"], target_rid=krid,
                         target_key=urn, status="RESOLVED", evidence=[pc.cseg(c)], ordinal=call["ordinal"],
                         callsite_id=call["callsite_id"],
                         attributes={"operation": call["name"], "key_basis": basis, "protocol": proto})
        if full is not None:
            pc.note_keys(m["rid"], m["stable"], [full], c, "cache key")
