"""The call graph of a package (docs/callgraph.md): one CALLS relation per call site, SCCs, entry reachability.

Two stages, as the rest of the scan:

- **Module stage** (:class:`~diting.resolve.callsites.ModuleCallSites`, in the worker that builds a
  module's records): every call site of every member body is resolved once into a plain, picklable
  *call fact*, and every body keeps its branch arms for the ledger (:mod:`diting.resolve.callsites`).
- **Package stage** (:class:`PackageCallGraph`, this module, once the package's probes ran): the
  facts of the package's modules become CALLS relations. Candidates outside the package's modules
  are dropped; a call through an injected field whose bean the package's Spring context resolves
  reaches that bean's implementation (``dispatch_kind = INJECTED``, ``binding_evidence`` the INJECTS
  relation);
  a call site a probe already recorded (an RPC consumer call, an HTTP client call …) keeps the
  probe's relation; calls inside a lambda or method reference handed to an executor or
  ``CompletableFuture`` (an ``ASYNC_SUBMIT`` rule), and calls of ``@Async`` methods, are ASYNC;
  calls a NOISE rule matches (logging, MDC, UMP, bean copies) and calls of trivial accessors are
  pruned and counted by rule id; library targets are EXTERNAL entities
  (``ext:{FQN}#{name}(?,…)``, one ``?`` per argument: the erased signature is not known).

  The graph of METHOD → METHOD edges (RESOLVED targets and every AMBIGUOUS candidate) gives the
  strongly connected components (networkx); an edge inside a component of two or more methods (or
  a self-call) carries ``attributes.scc``, the smallest stable_id of the component. Reachability
  per entry is a walk over the condensation (computed once), bounded by :data:`MAX_REACH_METHODS`
  and :data:`MAX_REACH_DEPTH` (counts, never time); an entry over a budget gets BUDGET_EXHAUSTED
  and its coverage says so.

A SQL statement's READS/WRITES count for the service only when a loaded method of the package calls
the mapper method bound to it; otherwise they are ``access = DECLARED_ONLY`` (docs/sql.md §8).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import networkx as nx

from diting.ir import ids
from diting.java.facts import TypeRef, type_chain
from diting.resolve.aop import NEVER, PointcutReader
from diting.resolve.callfacts import CallFact, MethodBody

if TYPE_CHECKING:
    from diting.probes.context import ProbeContext

#: a reachability walk from one entry stops after this many methods …
MAX_REACH_METHODS = 20_000
#: … or this many components deep (a budget: BUDGET_EXHAUSTED, never a silent cut)
MAX_REACH_DEPTH = 256
#: an UNRESOLVED_CALL diagnostic lists at most this many calls by name (its evidence cites them all)
MAX_LISTED = 20
#: the rule id under which calls of trivial accessors (Lombok/record accessors, ``return this.f``) are pruned
TRIVIAL_ACCESSOR_RULE = "builtin.trivial-accessor"


@dataclass
class CallGraphStats:
    """What coverage counts of a package's call graph and ledger."""

    #: call sites by coverage term (resolved, partial, failed) and resolved_external
    sites: dict[str, int] = field(default_factory=lambda: {"resolved": 0, "partial": 0, "failed": 0,
                                                           "resolved_external": 0})
    pruned_by_rule: dict[str, int] = field(default_factory=dict)
    #: entry rid → (methods reached, stop reason or None)
    reach: dict[str, tuple[int, str | None]] = field(default_factory=dict)
    ledger_items: int = 0
    #: UNRESOLVED items no rule excludes
    ledger_unresolved: int = 0
    #: items excluded, by LEDGER_EXCLUSION rule id
    ledger_excluded: dict[str, int] = field(default_factory=dict)
    ledger_methods: int = 0
    #: members whose branches nest deeper than the extractor records
    ledger_truncated: int = 0


class PackageCallGraph:
    """CALLS relations, EXTERNAL method entities, SCCs, reachability and DECLARED_ONLY access of one
    package (see the module docstring). ``known_entities``: record ids of the entities the package's
    modules already hold (METHOD targets must be among them)."""

    def __init__(self, probes: "ProbeContext", known_entities: set[str]) -> None:
        self.p = probes
        self.s = probes.s
        self.rs = probes.rs
        self.known = known_entities
        self.stats = CallGraphStats()
        self.modules = set(probes.plan.modules)
        self.bodies: list[MethodBody] = [b for m in sorted(self.modules) for b in self.s.module_results[m].bodies]
        #: METHOD stable_id → its @Transactional (or None)
        self.tx_of = {b.stable: b.transactional for b in self.bodies}
        self._advice_of: dict[str, list[str]] = {}
        #: callsite_id → CALLS relation rid (every call site that has one)
        self.site_rel: dict[str, str] = {}
        #: method rid → METHOD rids it calls (RESOLVED and AMBIGUOUS candidates)
        self.edges: dict[str, set[str]] = {}
        #: the same without ASYNC calls (what runs on the caller's thread, inside its transaction)
        self.sync_edges: dict[str, set[str]] = {}
        #: callsite_id → True for AMBIGUOUS virtual/interface dispatch among in-package implementations
        self.strategy_sites: set[str] = set()
        #: METHOD rid → stable_id, for the methods of the graph
        self.stable_of: dict[str, str] = {}
        #: UNRESOLVED_CALL diagnostics being collected: key → (body, method rid, reason, calls)
        self._pending: dict[str, tuple[MethodBody, str, str, list]] = {}
        #: EXTERNAL method stable_id → (name, signature known, evidence segments)
        self._ext: dict[str, tuple[str, bool, set[str]]] = {}
        #: callsite_id → (body, call fact) of every call site of the package
        self.site_fact: dict[str, tuple[MethodBody, CallFact]] = {}

    # ------------------------------------------------------------ helpers
    def _method_rid(self, t: list) -> tuple[str, str] | None:
        module, binary, name, params = t
        if module is None or module not in self.modules:
            return None
        stable = f"{self.s.inv.ns[module]}/{binary}#{name}({','.join(params or [])})"
        rid = ids.entity_record_id("METHOD", stable)
        return (rid, stable) if rid in self.known else None

    def _external(self, t: list, arity: int | None, ev: str) -> tuple[str, str]:
        """The EXTERNAL entity of a library method (made in :meth:`_externals`); its evidence is
        :data:`~diting.ir.builder.MAX_EXTERNAL_EVIDENCE` of its call sites, chosen by
        :meth:`~diting.ir.builder.RecordSet.cited` (each CALLS cites its own). Parameter
        types not known are ``?`` per argument; ``*`` when even the arity is not (a method reference)."""
        _, binary, name, params = t
        sig = self._params(params, arity)
        stable = f"ext:{binary}#{name}({sig})"
        got = self._ext.setdefault(stable, (f"{binary}#{name}", params is not None, set()))
        got[2].add(ev)
        return ids.entity_record_id("EXTERNAL", stable), stable

    def _unresolved(self, b: MethodBody, c: CallFact, caller_rid: str, why: str, ev: str) -> str:
        """The UNRESOLVED_CALL diagnostic of a call: one per method and reason, naming each call
        (written by :meth:`_unresolved_diagnostics` once the method's calls are all seen)."""
        key = f"{b.stable}|calls|{why}"
        self._pending.setdefault(key, (b, caller_rid, why, []))[3].append((c.name, c.arity, c.lines[0], ev))
        return ids.diagnostic_record_id("UNRESOLVED_CALL", key)

    def _unresolved_diagnostics(self) -> None:
        for key, (b, caller_rid, why, calls) in sorted(self._pending.items()):
            shown = ", ".join(f"{n}/{a} at line {line}" for n, a, line, _ in calls[:MAX_LISTED])
            more = f" and {len(calls) - MAX_LISTED} more" if len(calls) > MAX_LISTED else ""
            method = b.stable.split("/", 1)[-1]
            self.rs.diagnostic("UNRESOLVED_CALL", key, f"{b.path}: {len(calls)} call(s) of {method} not resolved "
                               f"({why}): {shown}{more}", [caller_rid], sorted({ev for *_, ev in calls}))

    def _externals(self) -> None:
        for stable, (name, known, evs) in sorted(self._ext.items()):
            rid = ids.entity_record_id("EXTERNAL", stable)
            first = sorted(self.rs.cited(set(evs)))
            if rid in self.rs.entities:
                self.rs.add_evidence(rid, first)
            else:
                self.rs.entity("EXTERNAL", stable, name, first, {"signature_known": known, "call_sites": len(evs)},
                               symbol_kind="METHOD", artifact=None)

    def _call_rules(self, emit: str) -> dict[str, str]:
        """callsite_id → rule id of the call-form candidates with emit kind ``emit``."""
        out: dict[str, str] = {}
        for c in self.p.cands:
            if c.get("emit") == emit and c.get("form") == "call" and c.get("call"):
                out.setdefault(c["call"]["callsite_id"], c["rule"])
        return out

    def _narrow(self, c: CallFact, targets: list[tuple[str, str, list]]) -> tuple[list, str | None]:
        """The candidates an injected field's bean reaches: ``(targets, INJECTS relation rid)``; the
        targets unchanged (and None) when the field is not injected with exactly one bean."""
        fld = c.field
        if fld is None or len(targets) < 2:
            return targets, None
        res = self.p.injected.get((fld[1], fld[2]))
        if res is None or res.status != "RESOLVED" or len(res.beans) != 1:
            return targets, None
        bean = res.beans[0]
        module = self.p.ctx.home(bean.type, bean.module)
        if module is None:
            return targets, None
        lineage = [bean.type] + [b for _, b in self.s.oracle.registry.ancestors(module, bean.type)]
        by_binary = {t[2][1]: t for t in targets}
        for b in lineage:
            if b in by_binary:
                return [by_binary[b]], self._injects.get((self.p.bean_rids.get(id(bean)), fld[2]))
        return targets, None

    # ------------------------------------------------------------ run
    def run(self) -> CallGraphStats:
        existing = {rec["callsite_id"]: rid for rid, rec in self.rs.relations.items()
                    if rec["kind"] == "CALLS" and rec.get("callsite_id")}
        #: (bean rid, injection point name) → the INJECTS relation: a narrowed call's binding evidence
        self._injects = {(rec["target_ref"].rid, rec["attributes"].get("name")): rid
                         for rid, rec in self.rs.relations.items()
                         if rec["kind"] == "INJECTS" and rec["target_ref"] is not None}
        noise = self._call_rules("NOISE")
        submits = set(self._call_rules("ASYNC_SUBMIT"))
        self.loaded = self._loaded_classes()
        for b in self.bodies:
            self._body(b, existing, noise, submits)
        # the probes' facts made inside a submitted lambda (a send, a cache write …) run on another thread
        for rec in self.rs.relations.values():
            fact = self.site_fact.get(rec.get("callsite_id") or "")
            if fact is not None and "submitted_by" not in rec["attributes"]:
                handed = self._submitted_by(fact[0], fact[1], submits)
                if handed:
                    rec["attributes"] = dict(rec["attributes"], submitted_by=handed)
        self._externals()
        self._unresolved_diagnostics()
        self._graph()
        self._idle_advice()
        self._declared_only()
        return self.stats

    def _body(self, b: MethodBody, existing: dict[str, str], noise: dict[str, str], submits: set[str]) -> None:
        caller_stable = b.stable
        caller_rid = ids.entity_record_id("METHOD", caller_stable)
        if caller_rid not in self.known:
            return
        loaded = b.binary in self.loaded
        self.stable_of[caller_rid] = caller_stable
        for c in b.calls:
            site = f"{caller_stable}@{c.ordinal}"
            self.site_fact[site] = (b, c)
            if site in existing:
                self.site_rel[site] = existing[site]
                self._count(self.rs.relations[existing[site]]["resolution_status"], False)
                continue
            rule = noise.get(site) or (TRIVIAL_ACCESSOR_RULE if c.accessor else None)
            if rule is not None:
                self.stats.pruned_by_rule[rule] = self.stats.pruned_by_rule.get(rule, 0) + 1
                continue
            if c.kind == "REF" and c.status != "RESOLVED" and c.handed_to < 0:
                continue  # a method reference nobody runs here (stored, returned): no call site of its own
            self._emit(b, c, site, caller_rid, caller_stable, loaded, submits)

    def _emit(self, b: MethodBody, c: CallFact, site: str, caller_rid: str, caller_stable: str,
              loaded: bool, submits: set[str]) -> None:
        ev = self.p.seg(b.path, *c.lines)
        dispatch = c.dispatch_kind or "VIRTUAL"
        handed = self._submitted_by(b, c, submits)
        arity = None if c.kind == "REF" else c.arity
        attrs: dict[str, Any] = {"declared_target": self._signature(c.declared, arity) if c.declared else None,
                                 "binding_evidence": None, "loaded": loaded}
        if handed:
            dispatch = "ASYNC"
            attrs["submitted_by"] = handed
        if c.status == "UNRESOLVED":
            attrs["dispatch_kind"] = dispatch
            self._unresolved_call(c, site, caller_rid, caller_stable, ev,
                                  self._unresolved(b, c, caller_rid, c.reason or "not resolved", ev),
                                  {"receiver": c.receiver_text, "reason": c.reason}, attrs)
            return
        if c.external:
            t = c.targets[0]
            trid, tstable = self._external(t, arity, ev)
            attrs.update(dispatch_kind=dispatch, external=True)
            rid = self.rs.relation("CALLS", caller_rid, caller_stable, target_rid=trid, target_key=tstable,
                                   status="RESOLVED", evidence=[ev], ordinal=c.ordinal, callsite_id=site,
                                   attributes=attrs)
            self.site_rel[site] = rid
            self._count("RESOLVED", True)
            return
        consumer = self._consumer_field(c)
        if consumer is not None:
            # a call through a field injected with RPC/Feign consumer beans the context does not
            # narrow to one: the remote contract called is not decided (the probes record decided ones)
            d = self.rs.diagnostic("UNRESOLVED_CALL", f"{site}|consumer", f"{c.name}/{c.arity} at {b.path}:"
                                   f"{c.lines[0]}: {consumer}", [caller_rid], [ev])
            attrs["dispatch_kind"] = "RPC"
            self._unresolved_call(c, site, caller_rid, caller_stable, ev, d, {"reason": consumer}, attrs)
            return
        self._emit_in_package(b, c, site, caller_rid, caller_stable, ev, dispatch, attrs)

    def _emit_in_package(self, b: MethodBody, c: CallFact, site: str, caller_rid: str, caller_stable: str, ev: str,
                         dispatch: str, attrs: dict[str, Any]) -> None:
        """The CALLS relation of a call whose targets are methods: RESOLVED to the one the package holds
        (narrowed through an injected bean), AMBIGUOUS among several, else UNRESOLVED."""
        targets = list({r[0]: (r[0], r[1], t) for t in c.targets if (r := self._method_rid(t)) is not None}.values())
        if not targets and c.declared and c.targets and (r := self._method_rid(c.declared)) is not None:
            # every implementation is outside the package (another deployable's, or a proxy's at run
            # time): the call reaches the declaration the package holds
            targets = [(r[0], r[1], c.declared)]
            attrs["implementations_outside_package"] = sorted(self._signature(t) for t in c.targets)
        self.stable_of.update((t[0], t[1]) for t in targets)
        targets, injects = self._narrow(c, targets)
        if injects is not None:
            dispatch = "ASYNC" if dispatch == "ASYNC" else "INJECTED"
            attrs["binding_evidence"] = injects
        advised = sorted({a for t in targets for a in self._advice(t[1])})
        if advised and c.on_this:
            # a call on ``this`` does not go through the Spring proxy: @Async, @Transactional … do not apply
            attrs.update(self_invocation=True, advice_bypassed=advised)
        elif "@Async" in advised and dispatch != "ASYNC":
            dispatch = "ASYNC"
            attrs["async_method"] = True
        attrs["dispatch_kind"] = dispatch
        if len(targets) == 1:
            trid, tstable, _ = targets[0]
            rid = self.rs.relation("CALLS", caller_rid, caller_stable, target_rid=trid, target_key=tstable,
                                   status="RESOLVED", evidence=[ev], ordinal=c.ordinal, callsite_id=site,
                                   attributes=attrs)
            self._edge(caller_rid, [trid], dispatch)
            self._count("RESOLVED", False)
        elif len(targets) >= 2:
            key = "?" + (self._signature(c.declared) if c.declared else c.name)
            # implementations of one declared method (a run-time choice) or overloads javac would tell
            # apart by argument types the scan does not know
            dispatch_choice = c.declared is not None and c.dispatch_kind in ("VIRTUAL", "INTERFACE")
            attrs["ambiguity"] = "DISPATCH" if dispatch_choice else "OVERLOAD"
            rid = self.rs.relation("CALLS", caller_rid, caller_stable, target_rid=None, target_key=key,
                                   status="AMBIGUOUS", evidence=[ev], candidates=[t[0] for t in targets],
                                   ordinal=c.ordinal, callsite_id=site, attributes=attrs)
            self._edge(caller_rid, [t[0] for t in targets], dispatch)
            if dispatch_choice:
                self.strategy_sites.add(site)
            self._count("AMBIGUOUS", False)
        else:
            why = "its target is outside the package's modules" if c.targets else (c.reason or "no target")
            self._unresolved_call(c, site, caller_rid, caller_stable, ev, self._unresolved(b, c, caller_rid, why, ev),
                                  {"candidates": [self._signature(t) for t in c.targets]}, attrs)
            return
        self.site_rel[site] = rid

    def _unresolved_call(self, c: CallFact, site: str, caller_rid: str, caller_stable: str, ev: str,
                         diagnostic: str, keys: dict[str, Any], attrs: dict[str, Any]) -> None:
        """An UNRESOLVED CALLS relation: the called name and arity, and ``keys``, in match_keys."""
        self.site_rel[site] = self.rs.relation(
            "CALLS", caller_rid, caller_stable, target_rid=None, target_key=f"?{c.name}", status="UNRESOLVED",
            evidence=[ev], diagnostics=[diagnostic], ordinal=c.ordinal, callsite_id=site,
            match_keys={"name": c.name, "arity": c.arity, **keys}, attributes=attrs)
        self._count("UNRESOLVED", False)

    @staticmethod
    def _submitted_by(b: MethodBody, c: CallFact, submits: set[str]) -> str | None:
        """The executor call a lambda or method reference around ``c`` is handed to (through any
        number of enclosing lambdas: ``runAsync(() -> xs.forEach(x -> send(x)))``), or None."""
        calls = b.calls
        h = c.handed_to
        for _ in range(64):
            if h < 0 or h >= len(calls):
                return None
            site = f"{b.stable}@{h}"
            if site in submits:
                return site
            h = calls[h].handed_to
        return None

    def _advice(self, method_stable: str) -> list[str]:
        """Proxy advice a method carries (``@Async``, ``@Transactional``), on it or its class (memoised)."""
        got = self._advice_of.get(method_stable)
        if got is None:
            got = ["@Async"] if self.p.marks("ASYNC", method_stable) else []
            if self.tx_of.get(method_stable):
                got.append("@Transactional")
            self._advice_of[method_stable] = got
        return got

    def _edge(self, src: str, targets: list[str], dispatch: str) -> None:
        self.edges.setdefault(src, set()).update(targets)
        if dispatch != "ASYNC":
            self.sync_edges.setdefault(src, set()).update(targets)

    def _consumer_field(self, c: CallFact) -> str | None:
        """Why a call through a field is an undecided remote call: the field is injected with RPC or
        Feign consumer beans and the injection is not one bean; None otherwise."""
        fld = c.field
        if fld is None:
            return None
        res = self.p.injected.get((fld[1], fld[2]))
        if res is None or (res.status == "RESOLVED" and len(res.beans) == 1):
            return None
        kinds = {b.kind for b in res.beans}
        if kinds & {"RPC_CONSUMER", "FEIGN_CLIENT"}:
            return f"field {fld[2]} is injected with {len(res.beans)} consumer beans " \
                   f"({', '.join(sorted(b.name for b in res.beans))}); the remote contract called is not decided"
        return None

    @staticmethod
    def _params(params: list[str] | None, arity: int | None) -> str:
        if params is not None:
            return ",".join(params)
        return "*" if arity is None else ",".join("?" * arity)

    def _signature(self, t: list, arity: int | None = None) -> str:
        """``binary#name(params)`` of a target (``?`` per argument of a library method)."""
        return f"{t[1]}#{t[2]}({self._params(t[3], arity)})"

    def _count(self, status: str, external: bool) -> None:
        term = {"RESOLVED": "resolved", "AMBIGUOUS": "partial"}.get(status, "failed")
        self.stats.sites[term] += 1
        if external:
            self.stats.sites["resolved_external"] += 1

    # ------------------------------------------------------------ SCCs and reachability
    def _graph(self) -> None:
        g = nx.DiGraph()
        for src in sorted(self.edges):
            for dst in sorted(self.edges[src]):
                g.add_edge(src, dst)
        comp_of: dict[str, str] = {}
        for comp in nx.strongly_connected_components(g):
            if len(comp) > 1 or any(g.has_edge(n, n) for n in comp):
                label = min(self.stable_of.get(n, n) for n in comp)
                for n in comp:
                    comp_of[n] = label
        for r in self.site_rel.values():
            rec = self.rs.relations[r]
            src = rec["source_ref"].rid
            tgts = [rec["target_ref"].rid] if rec["target_ref"] is not None else \
                [x.rid for x in rec["candidate_target_refs"]]
            if src in comp_of and any(comp_of.get(t) == comp_of[src] for t in tgts):
                rec["attributes"] = dict(rec["attributes"], scc=comp_of[src])
        self.graph = g
        self.condensation = nx.condensation(g) if g.number_of_nodes() else None
        for rid, rec in sorted(self.rs.entities.items()):
            if rec["kind"] == "ENTRY" and rec.get("handler_ref") is not None:
                self.stats.reach[rid] = self.reach(rec["handler_ref"].rid)
                if self.stats.reach[rid][1]:
                    self.rs.diagnostic("BUDGET_EXHAUSTED", f"{rid}|reach",
                                       f"{rec['stable_id']}: its reachable methods were walked {MAX_REACH_DEPTH} "
                                       f"levels deep or {MAX_REACH_METHODS} methods wide and no further",
                                       [rid], [r.rid for r in rec["evidence_refs"]][:1])

    @staticmethod
    def _walk(starts: list, successors, weight) -> tuple[set, int, bool]:
        """Breadth-first from ``starts``: the nodes reached, their total ``weight`` and whether a
        budget (:data:`MAX_REACH_DEPTH` levels, :data:`MAX_REACH_METHODS` methods) cut the walk."""
        seen = set(starts)
        total = sum(weight(n) for n in starts)
        frontier = list(starts)
        depth = 0
        while frontier:
            if depth >= MAX_REACH_DEPTH or total > MAX_REACH_METHODS:
                return seen, total, True
            depth += 1
            nxt = []
            for n in frontier:
                for m in successors(n):
                    if m not in seen:
                        seen.add(m)
                        nxt.append(m)
                        total += weight(m)
            frontier = nxt
        return seen, total, False

    def reach(self, method_rid: str) -> tuple[int, str | None]:
        """Methods reachable from ``method_rid`` (itself included), walked over the SCC condensation,
        and the budget that stopped the walk (None when none did)."""
        cond = self.condensation
        if cond is None or method_rid not in self.graph:
            return 1, None
        _, methods, cut = self._walk([cond.graph["mapping"][method_rid]], cond.successors,
                                     lambda n: len(cond.nodes[n]["members"]))
        return methods, "BUDGET_EXHAUSTED" if cut else None

    def reachable(self, roots: list[str], sync_only: bool = False) -> tuple[set[str], bool]:
        """Every METHOD rid reachable from ``roots`` (themselves included) and whether a budget cut
        the walk short; ``sync_only`` follows no ASYNC call (what runs on the caller's thread)."""
        edges = self.sync_edges if sync_only else self.edges
        out, _, cut = self._walk(list(roots), lambda n: sorted(edges.get(n, ())), lambda n: 1)
        return out, cut

    # ------------------------------------------------------------ loaded code, DECLARED_ONLY access
    def _loaded_classes(self) -> set[str]:
        """Binary names of the classes whose code the package runs: those the Spring context loads
        (SpringContext.class_loaded) and, transitively, those such code instantiates (``new X(…)``
        in a loaded ``@Bean`` method whose declared return type is an interface, a helper object)."""
        loaded = {b.binary for b in self.bodies if self.p.ctx.class_loaded(b.binary)}
        by_binary: dict[str, list[MethodBody]] = {}
        for b in self.bodies:
            by_binary.setdefault(b.binary, []).append(b)
        nested_in: dict[str, list[str]] = {}  # a class → the nested classes of the package inside it
        for x in sorted(by_binary):
            parts = x.split("$")
            for i in range(1, len(parts)):
                nested_in.setdefault("$".join(parts[:i]), []).append(x)
        todo = sorted(loaded)
        while todo:
            for b in by_binary.get(todo.pop(), ()):
                for c in b.calls:
                    if c.kind == "NEW" and c.targets and c.targets[0][0] in self.modules:
                        made = c.targets[0][1]
                        for nested in [made] + nested_in.get(made, []):
                            if nested not in loaded:
                                loaded.add(nested)
                                todo.append(nested)
        return loaded

    def _used_method_annotations(self) -> set[str]:
        """FQNs of the annotations on methods of the classes the package runs (:attr:`loaded`) and of
        every interface of the package (Spring also matches the interface method a proxy implements)."""
        used: set[str] = set()
        for m in sorted(self.modules):
            for skel in self.s.java_by_module.get(m, []):
                scope = self.s.scopes[skel.path]
                for idx, td in enumerate(skel.types):
                    if td.kind != "INTERFACE" and scope.binary_of(td) not in self.loaded:
                        continue
                    chain = type_chain(skel, idx)
                    for md in td.methods:
                        for a in md.annotations:
                            r = scope.resolve_base(TypeRef(tuple(a.name.split("."))), chain, {})
                            used.add(r.name if r is not None else a.name)
        return used

    def _idle_advice(self) -> None:
        """Advice that runs at no join point of the package (:mod:`diting.resolve.aop`: an
        ``@annotation`` pointcut whose annotation no loaded method carries) and the private methods
        of its aspect only such advice calls: their relations get ``attributes.runs = false`` and
        ``not_run`` (why); PUBLISHES from them, and CONSUMED contracts only they call, get
        ``loaded = false`` too, so they make no cross-service edge. One DECLARED_UNUSED per advice."""
        advice = [c for c in self.p.ctx.by_emit.get("ADVICE", [])
                  if c.get("member") and self.p.ctx.class_loaded(c["type"]["binary"])]
        if not advice:
            return
        pointcuts: dict[tuple[str, str], str] = {}
        for c in self.p.ctx.by_emit.get("POINTCUT", []):
            got = [r.value for r in self.p.role(c, "expression") if r.value is not None]
            if c.get("member") and got:
                pointcuts.setdefault((c["type"]["binary"], c["member"]["name"]), got[0])
        used = self._used_method_annotations()
        dead: dict[str, str] = {}  # METHOD rid → why it never runs
        for c in sorted(advice, key=lambda c: c["member"]["stable"]):
            binary, m = c["type"]["binary"], c["member"]
            exprs = [r.value for r in self.p.role(c, "expression")]
            if not exprs or None in exprs:
                continue

            def named(ref: str, binary: str = binary) -> str | None:
                owner, _, meth = ref.rpartition(".")
                for (b, n), e in sorted(pointcuts.items()):
                    if n == meth and (b == binary if not owner else
                                      b == owner or b.endswith(("." + owner, "$" + owner))):
                        return e
                return None

            v = PointcutReader(used.__contains__, named, {p["name"]: p["type"] for p in m["params"]}).verdict(exprs[0])
            if v.status != NEVER:
                continue
            why = (f"advice {binary}#{m['name']} runs at no join point: no loaded method of the package carries "
                   + ", ".join("@" + a for a in v.annotations))
            dead[m["rid"]] = why
            self.rs.diagnostic("DECLARED_UNUSED", f"{m['stable']}|advice", why, [m["rid"]], [self.p.cseg(c)])
        if not dead:
            return
        callers: dict[str, set[str]] = {}
        for src, dsts in self.edges.items():
            for d in dsts:
                callers.setdefault(d, set()).add(src)
        private = {ids.entity_record_id("METHOD", b.stable): b for b in self.bodies if b.private}
        aspects = {c["type"]["binary"] for c in advice}
        changed = True
        while changed:  # a private helper of the aspect that only dead code calls is dead
            changed = False
            for rid, b in sorted(private.items()):
                if rid in dead or b.binary not in aspects or not callers.get(rid):
                    continue
                whys = {dead.get(x) for x in callers[rid]}
                if None not in whys:
                    dead[rid] = sorted(whys)[0]
                    changed = True
        called_by: dict[str, list[dict[str, Any]]] = {}
        for rec in self.rs.relations.values():
            why = dead.get(rec["source_ref"].rid)
            if rec["kind"] == "CALLS" and rec["target_ref"] is not None:
                called_by.setdefault(rec["target_ref"].rid, []).append(rec)
            if why is None:
                continue
            extra: dict[str, Any] = {"runs": False, "not_run": why}
            if rec["kind"] == "PUBLISHES":
                extra["loaded"] = False
            rec["attributes"] = dict(rec["attributes"], **extra)
        for rid, recs in sorted(called_by.items()):
            ent = self.rs.entities.get(rid)
            if ent is None or ent["kind"] != "CONTRACT" or ent.get("role") != "CONSUMED":
                continue
            if all(r["attributes"].get("runs") is False for r in recs):
                ent["attributes"] = dict(ent["attributes"], loaded=False, not_run=recs[0]["attributes"]["not_run"])

    def _declared_only(self) -> None:
        """READS/WRITES of a statement no loaded method reaches: DECLARED_ONLY, else CALLED. A
        statement is reached through a mapper method a loaded method calls, or directly from a
        loaded method's call site (MyBatis-Plus inherited calls, JDBC SQL strings)."""
        called: set[str] = set()
        for r in self.site_rel.values():
            rec = self.rs.relations[r]
            if rec["attributes"].get("loaded") is False or rec["attributes"].get("runs") is False:
                continue
            if rec["target_ref"] is not None:
                called.add(rec["target_ref"].rid)
            called.update(x.rid for x in rec["candidate_target_refs"])
        reached: set[str] = set()
        for rec in self.rs.relations.values():
            if rec["kind"] != "BINDS_TO" or rec["target_ref"] is None or not rec["target_ref"].rid.startswith("stmt:"):
                continue
            source = rec["source_ref"].rid
            if rec.get("callsite_id"):  # bound at a call site: the calling method's class decides
                caller = self.stable_of.get(source) or rec["stable_id"].split("|", 2)[1]
                binary = caller.split("/", 1)[-1].split("#", 1)[0]
                if binary in self.loaded:
                    reached.add(rec["target_ref"].rid)
            elif source in called:
                reached.add(rec["target_ref"].rid)
        for rec in self.rs.relations.values():
            if rec["kind"] in ("READS", "WRITES") and rec["source_ref"].rid.startswith("stmt:"):
                access = "CALLED" if rec["source_ref"].rid in reached else "DECLARED_ONLY"
                rec["attributes"] = dict(rec["attributes"], access=access)
