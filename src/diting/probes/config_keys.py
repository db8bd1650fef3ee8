"""Config keys read by code: ``@Value``, ``@ConfigurationProperties`` and config-client calls, with their bindings (docs/scanning.md §10)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from diting.config.sources import canonical_key
from diting.ir import ids
from diting.resolve.fold import DUCC_PREFIX, ducc_placeholder

if TYPE_CHECKING:
    from diting.probes.matches import Candidate
    from diting.probes.context import ProbeContext


def config_keys(pc: "ProbeContext") -> None:
    for c in pc.ctx.by_emit.get("CONFIG_VALUE", []):
        rule = pc.s.rules.by_id[c["rule"]]
        scheme = rule.emits.protocol or "config"
        rid, stable = _consumer(pc, c)
        outs = c.get("roles", {}).get("expression", []) + c.get("roles", {}).get("key", [])
        for o in outs:
            if "value" in o and scheme == "ducc" and DUCC_PREFIX not in o["value"]:
                o = dict(o, value=ducc_placeholder(o["value"]), placeholders=True)
            rt = pc.resolve(o)
            if rt.keys:
                pc.config_binding(rid, stable, rt, c, "@" + c["annotation"].rsplit(".", 1)[-1])
            elif rt.value is None:
                pc.stats.key_reads_failed += 1
                d = pc.diag("CONSTANT_UNRESOLVED", f"{stable}|value", f"{stable}: the config expression "
                              f"{rt.expression} does not fold", [rid], c)
                pc.rs.relation("READS", rid, stable, target_rid=None, target_key="?" + (rt.expression or ""),
                                 status="UNRESOLVED", evidence=[pc.cseg(c)], diagnostics=[d],
                                 match_keys={"key_expression": rt.expression, "scheme": scheme})
    for c in pc.ctx.by_emit.get("CONFIG_PROPERTIES", []):
        if c["target"] != "TYPE":  # on a @Bean method: the built object's properties (sql/config.py datasources)
            continue
        prefix = (pc.texts(pc.role(c, "prefix")) or [""])[0]
        detail = c.get("type_detail", {})
        # a class the context makes as a component is bound through its setters: its final fields
        # are constructor-injected beans, never properties (constructor binding needs no component)
        component = any(b.kind == "COMPONENT" and b.type == c["type"]["binary"] for b in pc.ctx.beans)
        for f in detail.get("fields", []):
            if "static" in f["modifiers"] or (component and "final" in f["modifiers"]):
                continue
            key = canonical_key(f"{prefix}.{f['name']}" if prefix else f["name"])
            frid_stable = f"{c['type']['stable']}.{f['name']}"
            initial = f.get("initial")  # the field's initializer: the value when no source has the key
            if initial is not None and ("}" in initial or "${" in initial):
                initial = None  # not expressible as a placeholder default
            rt = pc.resolve({"value": "${" + key + (":" + initial if initial is not None else "") + "}",
                               "vtype": "java.lang.String", "basis": "CONFIG", "placeholders": True})
            cf = dict(c, lines=f["lines"])
            pc.config_binding(ids.entity_record_id("FIELD", frid_stable), frid_stable, rt, cf,
                                "@ConfigurationProperties")
    for c in pc.ctx.by_emit.get("CONFIG_READ", []):
        rule = pc.s.rules.by_id[c["rule"]]
        scheme = rule.emits.protocol or "config"
        m = c["member"]
        keys = pc.role(c, "key")
        defaults = pc.texts([pc.resolve(o) for o in c.get("roles", {}).get("default", [])
                               if o.get("vtype") == "java.lang.String"])  # getProperty(key, Class) has no default
        for k in keys:
            if k.value is None:
                pc.stats.key_reads_failed += 1
                d = pc.diag("CONFIG_VALUE_UNKNOWN", f"{c['call']['callsite_id']}|key", f"config key at "
                              f"{c['path']}:{c['lines'][0]} is {k.expression}, which does not fold", [m["rid"]], c)
                pc.rs.relation("READS", m["rid"], m["stable"], target_rid=None, target_key="?" + (
                    k.expression or ""), status="UNRESOLVED", evidence=[pc.cseg(c)], diagnostics=[d],
                    ordinal=c["call"]["ordinal"], callsite_id=c["call"]["callsite_id"],
                    match_keys={"key_expression": k.expression, "scheme": scheme})
                continue
            default = defaults[0] if defaults else None
            placeholder = "${" + (DUCC_PREFIX if scheme == "ducc" else "") + k.value + (
                ":" + default if default is not None else "") + "}"
            rt = pc.resolve({"value": placeholder, "vtype": "java.lang.String", "basis": "CONFIG",
                               "placeholders": True})
            pc.config_binding(m["rid"], m["stable"], rt, c, c["call"]["name"])


def _consumer(pc: "ProbeContext", c: Candidate) -> tuple[str, str]:
    if c.get("field"):
        return c["field"]["rid"], c["field"]["stable"]
    if c.get("member"):
        return c["member"]["rid"], c["member"]["stable"]
    return c["type"]["rid"], c["type"]["stable"]
