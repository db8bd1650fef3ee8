"""RPC providers and consumers (JSF, Dubbo and any protocol a rule file declares with RPC alignment; docs/middleware.md §2)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from diting.probes.context import stable_ordinal
from diting.resolve.spring import values

if TYPE_CHECKING:
    from diting.probes.matches import Candidate
    from diting.probes.context import ProbeContext


def _binding_ordinal(binding: dict[str, Any]) -> int:
    """Distinct relations for distinct bindings (one contract under two aliases gives two)."""
    if not any(binding.get(k) for k in ("alias", "group", "version")):
        return 0
    key = "|".join(str(binding.get(k)) for k in ("alias", "group", "version"))
    return stable_ordinal(key)


def rpc_providers(pc: "ProbeContext") -> None:
    for c in pc.ctx.by_emit.get("RPC_PROVIDER", []):
        rule = pc.s.rules.by_id[c["rule"]]
        proto = rule.emits.protocol or "dubbo"
        entry_kind = rule.emits.entry_kind or pc.s.rules.default_entry_kind(proto, "OTHER")
        impl: str | None = None
        bean_rid: str | None = None
        if c["form"] == "annotation":
            impl = c["type"]["binary"]
            iface = pc.class_value(c, "interface")
            if not iface:
                ifaces = [d["name"] for d in c.get("type_detail", {}).get("direct_supertypes", []) if d["interface"]]
                iface = ifaces[0] if ifaces else None
            beans = [b for b in pc.ctx.beans if b.type == impl and b.module == c["module"]] or \
                [b for b in pc.ctx.beans if b.type == impl]
            bean_rid = pc.bean_rids[id(beans[0])] if beans else None
        else:
            iface = pc.class_value(c, "interface")
            ref = (values(c, "ref") or [None])[0]
            beans = pc.ctx.named(ref, c)
            if beans:
                impl = beans[0].type
                bean_rid = pc.bean_rids[id(beans[0])]
        loaded = pc.ctx.cand_loaded(c)
        if not iface:
            pc.entry_failed(f"{c['path']}:{c['lines'][0]}|rpc", f"{proto} provider at {c['path']}:"
                              f"{c['lines'][0]}: the interface cannot be determined", [pc.owner_rid(c)], c)
            continue
        binding = pc.binding_attributes(c)
        methods, basis = pc.interface_methods(iface, impl, c["module"])
        if not methods:
            pc.entry_failed(f"{c['path']}:{c['lines'][0]}|rpc-methods", f"{proto} provider of {iface} at "
                              f"{c['path']}:{c['lines'][0]}: neither the interface nor the implementation is in "
                              "the package, so its methods are unknown", [pc.owner_rid(c)], c)
            continue
        for i, m in enumerate(methods):
            urn = f"{proto}://{iface}#{m['name']}"
            crid, cstable = pc.contract("PROVIDED", urn, m["signature"], c, {
                "interface": iface, "protocol": proto, "loaded": loaded, "methods_basis": basis})
            # the method's declaration (an interface method whole, an implemented one by its first line)
            pc.rs.add_evidence(crid, [pc.seg(m["path"], m["lines"][0],
                                                 m["lines"][0] if m["has_body"] else m["lines"][1])])
            handler = pc.implementation(impl, m, c["module"]) if impl else None
            src_rid, src_stable = (bean_rid, pc.rs.entities[bean_rid]["stable_id"]) if bean_rid else \
                ((handler["rid"], handler["stable"]) if handler else (None, None))
            if not loaded or src_rid is None:
                continue
            ordinal = _binding_ordinal(binding)
            pc.rs.relation("EXPOSES", src_rid, src_stable, target_rid=crid, target_key=cstable,
                             status="RESOLVED", evidence=[pc.cseg(c)], ordinal=ordinal,
                             attributes=dict(binding, protocol=proto))
            if handler:
                pc.entry(entry_kind, urn, handler, c, {"protocol": proto, "interface": iface, **binding},
                            f"{proto.upper()}_PROVIDER")
        if not loaded:
            for m in methods:
                pc.exclude_entry(f"{c['path']}:{c['lines'][0]}|{proto}://{iface}#{m['name']}("
                                   f"{','.join(m['signature'])})",
                                   f"{proto} provider method {iface}#{m['name']}", [pc.owner_rid(c)], c)
        elif bean_rid:
            pc.binding_keys(c, bean_rid, pc.rs.entities[bean_rid]["stable_id"])
        elif c.get("type"):
            pc.binding_keys(c, c["type"]["rid"], c["type"]["stable"])


def rpc_consumers(pc: "ProbeContext") -> None:
    for c in pc.ctx.by_emit.get("RPC_CONSUMER", []):
        rule = pc.s.rules.by_id[c["rule"]]
        proto = rule.emits.protocol or "dubbo"
        binding = pc.binding_attributes(c)
        if c["form"] == "xml":
            iface = pc.class_value(c, "interface")
            bean = next((b for b in pc.ctx.beans if b.cand is c), None)
            if bean is None or not iface:
                continue
            fields = [k for k, r in pc.injected.items() if r.status == "RESOLVED" and r.beans[0] is bean]
            bean_rid = pc.bean_rids[id(bean)]
            loaded = bean.loaded
        elif c["target"] == "FIELD":
            iface = pc.class_value(c, "interface") or c["field"]["type"]
            owner = c["type"]["binary"]
            fields = [(owner, c["field"]["name"])]
            stable = f"bean:{c['ns']}/{owner}#{c['field']['name']}"
            loaded = pc.ctx.class_loaded(owner)
            bean_rid = pc.rs.entity("BEAN", stable, f"{owner}#{c['field']['name']}", [pc.cseg(c)], {
                "type": iface, "declared_by": "RPC_REFERENCE", "loaded": loaded, "primary": False,
                "aliases": [], "properties": {}})
            if loaded:
                pc.rs.relation("INJECTS", c["field"]["rid"], c["field"]["stable"], target_rid=bean_rid,
                                 target_key=stable, status="RESOLVED", evidence=[pc.cseg(c)],
                                 attributes={"injection": "RPC_REFERENCE", "protocol": proto})
        else:
            continue
        if not loaded:
            # a declaration outside the context: kept (its bean, loaded = false), no consumed contract
            pc.stats.consumers_not_loaded += 1
            continue
        pc.binding_keys(c, bean_rid, pc.rs.entities[bean_rid]["stable_id"])
        called = 0
        for owner, fname in fields:
            for fc in pc.field_calls.get((owner, fname), []):
                found, m = _called_method(pc, iface, fc, c["module"])
                urn = f"{proto}://{iface}#{fc['method']}"
                if found == "NOT_A_METHOD":
                    continue  # toString(), equals() … on the proxy: no remote call
                if found == "AMBIGUOUS":
                    d = pc.diag("UNRESOLVED_CALL", f"{fc['callsite_id']}|overload", f"{urn} at {fc['path']}:"
                                  f"{fc['lines'][0]}: overloads of the same arity ({', '.join(m)}); the one called "
                                  "is not decided without argument types", [fc["member"]["rid"]], c)
                    pc.rs.relation("CALLS", fc["member"]["rid"], fc["member"]["stable"], target_rid=None,
                                     target_key="?" + urn, status="UNRESOLVED", diagnostics=[d],
                                     evidence=[pc.seg(fc["path"], *fc["lines"])], ordinal=fc["ordinal"],
                                     callsite_id=fc["callsite_id"], match_keys={"urn": urn, "overloads": m},
                                     attributes={"dispatch_kind": "RPC", "declared_target": urn,
                                                 "binding_evidence": "field " + fname, "protocol": proto})
                    called += 1
                    continue
                # a consumed contract exists because a call reaches it: the declaration and the
                # call are its evidence (the first call for the binding, every call for the contract)
                call_seg = pc.seg(fc["path"], *fc["lines"])
                crid, cstable = pc.contract("CONSUMED", urn, m, c, {
                    "interface": iface, "protocol": proto, "loaded": loaded,
                    "signature_known": found == "FOUND"})
                pc.rs.add_evidence(crid, [call_seg])
                pc.rs.relation("BINDS_TO", bean_rid, pc.rs.entities[bean_rid]["stable_id"], target_rid=crid,
                                 target_key=cstable, status="RESOLVED", evidence=[pc.cseg(c), call_seg],
                                 ordinal=_binding_ordinal(binding), attributes=dict(binding, protocol=proto))
                pc.rs.relation("CALLS", fc["member"]["rid"], fc["member"]["stable"], target_rid=crid,
                                 target_key=cstable, status="RESOLVED", evidence=[call_seg],
                                 ordinal=fc["ordinal"], callsite_id=fc["callsite_id"],
                                 attributes={"dispatch_kind": "RPC", "declared_target": urn,
                                             "binding_evidence": "field " + fname, "protocol": proto})
                called += 1
        if called == 0:
            pc.stats.declared_unused += 1
            pc.diag("DECLARED_UNUSED", f"{c['path']}:{c['lines'][0]}|consumer", f"{proto} consumer of {iface} "
                      f"at {c['path']}:{c['lines'][0]} is never called", [bean_rid], c)


def _called_method(pc: "ProbeContext", iface: str, fc: Candidate, near: str | None = None) -> tuple[str, list[str]]:
    """The interface method a call on a consumer reaches: ``(FOUND, signature)``; ``(AMBIGUOUS,
    [signatures])`` for overloads of one arity; ``(NOT_A_METHOD, [])`` when the interface is
    in the package and has no such method (``toString()``); ``(UNKNOWN, ["?", …])`` when
    the interface's methods are not in the package."""
    methods = pc.all_methods(iface, near)
    if not methods and iface not in pc.ctx.class_packages:
        return "UNKNOWN", ["?"] * fc["arity"]
    sigs = sorted({",".join(m["signature"]) for m in methods
                   if m["name"] == fc["method"] and m["arity"] == fc["arity"]})
    if not sigs:
        return "NOT_A_METHOD", []
    if len(sigs) > 1:
        return "AMBIGUOUS", [f"({s})" for s in sigs]
    return "FOUND", sigs[0].split(",") if sigs[0] else []
