"""Sends through wrapper methods whose callers name the destination (docs/middleware.md §7).

An event published by a helper whose event is its parameter (``publishEvent(ApplicationEvent e)``,
``attributes.payload_parameter``) is published by each caller as its argument's static type.

A send whose topic is a parameter of its method (``void send(String topic, Object body)``; the send
stays UNRESOLVED with ``attributes.topic_parameter``) is a wrapper method: each call of it the call
graph resolves is a send by the caller. The caller's argument is folded in the caller's body like any
rule role (constants, enum accessors, ``${…}`` placeholders of the package's config), and a folded
destination gives a PUBLISHES from the caller with ``attributes.via_wrapper`` (the wrapper method)
and, as evidence, the call of the wrapper and the wrapper's send. An argument that does not fold, or
a wrapper that assigns the parameter before it sends (``topic = prefix + topic``), leaves only the
wrapper's own UNRESOLVED send. The wrapper may read the topic off its parameter (``topicEnum.getTopic()``
or ``.topic``: ``attributes.topic_accessor``), folded through the caller's enum constant; an AMQP wrapper's
``attributes.destination_parts`` gives exchange and routing key each as a value or such a parameter.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from diting.ir import ids
from diting.java.facts import Expr, type_chain
from diting.probes.candidates import ModuleProbe, erased_signature, outcome_json
from diting.probes.events import GENERIC_EVENT_TYPES
from diting.probes.resolved import ResolvedText
from diting.resolve.types import MemberContext

if TYPE_CHECKING:
    from diting.probes.matches import Candidate, ParameterAccessor
    from diting.resolve.callfacts import MethodBody
    from diting.probes.context import ProbeContext
    from diting.resolve.callgraph import PackageCallGraph


class WrapperSends:
    """Adds the per-caller sends of one package's wrapper methods (see the module docstring)."""

    def __init__(self, families: "ProbeContext", graph: "PackageCallGraph") -> None:
        self.f = families
        self.s = families.s
        self.rs = families.rs
        self.g = graph
        self._probes: dict[str, ModuleProbe] = {}

    def run(self) -> None:
        sends = {c["call"]["callsite_id"]: c for c in self.f.ctx.by_emit.get("MQ_SEND", []) +
                 self.f.ctx.by_emit.get("EVENT_PUBLISH", []) if "call" in c}  # not annotation-declared sends
        bodies = {ids.entity_record_id("METHOD", b.stable): b for b in self.g.bodies}
        callers: dict[str, list[str]] = {}
        for site, rid in sorted(self.g.site_rel.items()):
            rec = self.rs.relations[rid]
            if rec["kind"] == "CALLS" and rec["target_ref"] is not None:
                callers.setdefault(rec["target_ref"].rid, []).append(site)
        for rec in sorted((r for r in self.rs.relations.values() if r["kind"] == "PUBLISHES"
                           and r["resolution_status"] == "UNRESOLVED" and ("topic_parameter" in r["attributes"]
                                                                          or "payload_parameter" in r["attributes"])),
                          key=lambda r: r["record_id"]):
            cand = sends.get(rec.get("callsite_id") or "")
            if cand is None:
                continue
            wrapper = bodies.get(rec["source_ref"].rid)
            names = {d.get("name") for d in (rec["attributes"].get("destination_parts") or {}).values()} | {
                (rec["attributes"].get("topic_accessor") or {}).get("name") or
                (rec.get("match_keys") or {}).get("topic_expression") or cand.get("attrs", {}).get("payload_name")}
            if wrapper is None or names & set(wrapper.reassigned):
                continue  # the parameter is rewritten before the send (topic = prefix + topic): not what callers pass
            for site in callers.get(rec["source_ref"].rid, []):
                self._caller_send(site, rec, cand)

    def _probe(self, module: str) -> ModuleProbe:
        if module not in self._probes:
            s = self.s
            self._probes[module] = ModuleProbe(module, s.inv.ns[module], s.rule_index, s.oracle, s.expr_folder,
                                               erased_signature)
        return self._probes[module]

    def _argument(self, b: "MethodBody", ordinal: int, index: int) -> tuple[Expr, MemberContext] | None:
        """The expression of argument ``index`` of call ``ordinal`` in body ``b``, with its context."""
        facts = self.s.full_facts(b.path)
        td = facts.types[b.type_idx]
        if b.member_idx < 0:
            return None
        md = td.methods[b.member_idx]
        if md.body is None or ordinal >= len(md.body.calls):
            return None
        call = md.body.calls[ordinal]
        if call.args is None or index >= len(call.args):
            return None
        scope = self.s.scopes[b.path]
        chain = type_chain(facts, b.type_idx)
        ctx = MemberContext(scope, chain, b.module, md, md.body, scope.type_vars_for(chain, md.type_params))
        return call.args[index], ctx

    def _caller_event(self, site: str, send: dict[str, Any], cand: Candidate) -> None:
        """A caller of an event-publishing helper publishes its argument's static type (when specific)."""
        b, c = self.g.site_fact[site]
        got = self._argument(b, c.ordinal, send["attributes"]["payload_parameter"])
        if got is None:
            return
        expr, ctx = got
        t = self.s.oracle.expr_type(expr, ctx)
        if t is None or t.name.startswith("?") or t.name in GENERIC_EVENT_TYPES or t.name == \
                cand["call"].get("arg_types", {}).get("payload"):
            return
        caller_rid = self.rs.relations[self.g.site_rel[site]]["source_ref"].rid
        call_ev = {"path": b.path, "lines": c.lines}
        urn = f"event://{t.name}"
        erid = self.f.topic(urn, call_ev, {"protocol": "event"}, kind="EVENT")
        self.rs.relation("PUBLISHES", caller_rid, b.stable, target_rid=erid, target_key=urn, status="RESOLVED",
                         evidence=[self.f.cseg(call_ev), self.f.cseg(cand)], ordinal=c.ordinal, callsite_id=site,
                         attributes={"protocol": "event", "via_wrapper": send["stable_id"].split("|")[1],
                                     "loaded": self.f.ctx.class_loaded(b.binary)})

    def _fold(self, b: "MethodBody", ordinal: int, acc: ParameterAccessor) -> list[ResolvedText]:
        """The caller's argument for a wrapper's parameter (``acc``: its index, and the getter or field
        the wrapper reads off it) folded in the caller's body, as resolved texts."""
        got = self._argument(b, ordinal, acc["parameter"])
        if got is None:
            return []
        expr, ctx = got
        if acc.get("getter") or acc.get("field"):  # the wrapper reads the topic off its parameter
            outcomes = outcome_json(self.s.expr_folder.accessor(expr, ctx, acc.get("getter"), acc.get("field")))
        else:
            outcomes = self._probe(b.module).fold_value(expr, ctx, None, "topic")
        return [self.f.resolve(o) for o in outcomes]

    def _caller_send(self, site: str, send: dict[str, Any], cand: Candidate) -> None:
        if "payload_parameter" in send["attributes"]:
            self._caller_event(site, send, cand)
            return
        b, c = self.g.site_fact[site]
        rule = self.s.rules.by_id[cand["rule"]]
        proto = send["attributes"]["protocol"]
        caller_rid = self.rs.relations[self.g.site_rel[site]]["source_ref"].rid
        call_ev = {"path": b.path, "lines": c.lines}
        parts = send["attributes"].get("destination_parts")
        if parts:  # AMQP: exchange and routing key, each a value or a parameter
            got = {role: [ResolvedText("RESOLVED", d["value"])] if "value" in d else self._fold(b, c.ordinal, d)
                   for role, d in parts.items()}
            if any(len(v) != 1 or v[0].value is None for v in got.values()):
                return
            ex, rk = got.get("exchange", [None])[0], got["routing_key"][0]
            rts = [r for r in (ex, rk) if r is not None and r.keys]
            urn = f"amqp://{ex.value if ex is not None else ''}/{rk.value}"
            status = "DEFAULT_ONLY" if any(r.status == "DEFAULT_ONLY" for r in rts) else "RESOLVED"
            resolved = [(urn, None, status, rts)]
        else:
            resolved = []
            acc = dict(send["attributes"].get("topic_accessor") or {}, parameter=send["attributes"]["topic_parameter"])
            for rt in self._fold(b, c.ordinal, acc):
                if rt.value is not None:
                    topic, tag = self.f.split_tag(rt.value, rule.emits.tag_separator)
                    resolved.append((f"{proto}://{topic}", tag, rt.status, [rt]))
        for urn, tag, status, rts in resolved:
            trid = self.f.topic(urn, call_ev, {"protocol": proto, "tags": [tag] if tag else [], "event_types": []})
            self.rs.relation("PUBLISHES", caller_rid, b.stable, target_rid=trid, target_key=urn,
                             status="RESOLVED", evidence=[self.f.cseg(call_ev), self.f.cseg(cand)],
                             ordinal=c.ordinal, callsite_id=site,
                             attributes={"protocol": proto, "tag": tag, "value_basis": status,
                                         "send_method": send["attributes"].get("send_method"),
                                         "via_wrapper": send["stable_id"].split("|")[1],
                                         "loaded": self.f.ctx.class_loaded(b.binary)})
            self.f.note_keys(caller_rid, b.stable, rts, {**cand, "path": b.path, "lines": c.lines},
                              "send destination")
