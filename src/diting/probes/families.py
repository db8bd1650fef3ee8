"""The emit mechanisms of the middleware families (docs/middleware.md §2), one method per construct.

RPC (JSF, Dubbo) providers and consumers, HTTP endpoints and Feign clients,
MQ listeners and sends (JMQ, RocketMQ, Kafka, RabbitMQ), config keys, cache
keys, scheduled jobs, events and dynamic calls. Each reads candidates (what
rules matched) and the package's Spring context and configuration, and writes
records through :class:`~diting.probes.emit.PackageProbes`.
"""

from __future__ import annotations

import re
from typing import Any

from diting.config.sources import canonical_key
from diting.ir import ids
from diting.ir.builder import RefTo
from diting.java.syntax import TypeRef
from diting.probes import gateway
from diting.probes.emit import PackageProbes, normalize_path
from diting.probes.resolved import ResolvedText
from diting.probes.stream import Streams
from diting.resolve.fold import DUCC_PREFIX, REQUEST_ENTITY, ducc_placeholder
from diting.resolve.spring import values

#: static types that say nothing about which listeners an event reaches
GENERIC_EVENT_TYPES = {"java.lang.Object", "org.springframework.context.ApplicationEvent",
                        "java.util.EventObject"}
_HTTP_METHODS = ("GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS", "TRACE")


class Families(PackageProbes):
    """The family mechanisms (bound to one package's probes)."""

    # ------------------------------------------------------------ shared
    def methods_of(self, binary: str, near: str | None = None) -> list[dict[str, Any]]:
        """Methods of an in-package type (skeleton signatures, erased) as module ``near`` sees it,
        or [] when unknown."""
        module = self.ctx.home(binary, near)
        if module is None:
            return []
        found = self.s.oracle.decl(module, binary)
        if found is None:
            return []
        scope, idx = found
        td = scope.facts.types[idx]
        chain = scope._chain_of(idx)
        ns = self.s.inv.ns[module]
        out = []
        for md in td.methods:
            if md.decl_kind not in ("METHOD",):
                continue
            tv = scope.type_vars_for(chain, md.type_params)
            sig = [scope.resolve(p.type, chain, tv).name for p in md.params]
            stable = f"{ns}/{binary}#{md.name}({','.join(sig)})"
            anns = []
            for a in md.annotations:
                r = scope.resolve_base(TypeRef(tuple(a.name.split("."))), chain, {})
                anns.append(r.name if r is not None else "?" + a.name)
            out.append({"name": md.name, "signature": sig, "stable": stable, "annotations": anns,
                        "rid": ids.entity_record_id("METHOD", stable), "modifiers": md.modifiers,
                        "lines": [md.start_line, md.end_line], "path": scope.facts.path, "arity": len(md.params),
                        "has_body": md.has_body})
        return out

    def _all_methods(self, binary: str, near: str | None = None) -> list[dict[str, Any]]:
        """Methods of a type and its in-package supertypes (overridden ones once)."""
        out: list[dict[str, Any]] = []
        seen: set[tuple[str, tuple[str, ...]]] = set()
        module = self.ctx.home(binary, near)
        chain = [(module, binary)] + (self.s.oracle.registry.ancestors(module, binary) if module else [])
        for mod, b in chain:
            for m in self.methods_of(b, mod):
                key = (m["name"], tuple(m["signature"]))
                if key not in seen:
                    seen.add(key)
                    out.append(m)
        return out

    def _text(self, rts: list[ResolvedText]) -> list[str]:
        return [r.value for r in rts if r.value is not None]

    def _bindings(self, c: dict[str, Any]) -> dict[str, Any]:
        """Binding attributes (alias, group, version, timeout, retries) with the package's config."""
        out: dict[str, Any] = {}
        for role in ("alias", "group", "version", "timeout", "retries"):
            r = self.first(c, role)
            if r is None:
                continue
            out[role] = r.value if r.value is not None else None
            if r.status != "RESOLVED":
                out[f"{role}_resolution"] = r.status
                out[f"{role}_expression"] = r.expression
        return out

    def _binding_keys(self, c: dict[str, Any], rid: str, stable: str) -> None:
        """Config bindings of the placeholders in a declaration's binding attributes."""
        for role in ("alias", "group", "version", "timeout", "retries"):
            self._note_keys(rid, stable, self.role(c, role), c, role)

    def _note_keys(self, consumer_rid: str, consumer_stable: str, rts: list[ResolvedText], c: dict[str, Any],
                   what: str) -> None:
        for r in rts:
            if r.keys:
                self.config_binding(consumer_rid, consumer_stable, r, c, what)

    def _entry(self, kind: str, urn: str, handler: dict[str, Any], c: dict[str, Any], attrs: dict[str, Any],
               source: str, resolved: bool = True) -> str:
        stable = f"{kind}:{urn}@{handler['stable']}"
        hints = self._marks("NOISE", handler["stable"])
        if hints:
            attrs = dict(attrs, hints=hints)
        if self._marks("ASYNC", handler["stable"]):
            attrs = dict(attrs, async_dispatch=True)
        ev = self.cseg(c)
        evs = [ev]
        if handler.get("path") and handler.get("lines"):
            evs.append(self.seg(handler["path"], *handler["lines"]))
        rid = self.rs.entity("ENTRY", stable, urn, evs, attrs, entry_kind=kind, urn=urn,
                             handler_ref=RefTo(handler["rid"]))
        if rid not in self.stats.entry_rids:
            self.stats.entry_rids.add(rid)
            self.stats.entries.append((rid, source, resolved, None))
        return rid

    def _retry_rules(self, method_stable: str) -> list[dict[str, Any]]:
        """MQ_RETRY candidates (``@RetryableTopic`` …) on a listener method."""
        return [c for c in self.ctx.by_emit.get("MQ_RETRY", [])
                if c.get("target") == "METHOD" and c["member"]["stable"] == method_stable]

    def _marks(self, emit: str, method_stable: str) -> list[str]:
        """Annotations of rules with emit kind ``emit`` (NOISE: monitoring hints; ASYNC: @Async) on a
        handler method or its class."""
        idx = self.__dict__.setdefault("_mark_index", {}).get(emit)
        if idx is None:
            idx = {}
            for c in self.ctx.by_emit.get(emit, []):
                if c["form"] != "annotation":
                    continue  # call-form NOISE rules prune calls (resolve/callgraph.py)
                key = c["member"]["stable"] if c["target"] == "METHOD" else c["type"]["stable"]
                idx.setdefault(key, set()).add(c["annotation"])
            self.__dict__["_mark_index"][emit] = idx
        type_stable = method_stable.split("#", 1)[0]
        return sorted(idx.get(method_stable, set()) | idx.get(type_stable, set()))

    def _live_handler_class(self, c: dict[str, Any]) -> bool:
        """Whether a job or listener declaration can be an entry: its class is concrete (an abstract
        class or interface runs only through its subclasses, which a type rule matches on their own)
        and loaded by the context (else it is counted as an excluded entry)."""
        if c["target"] == "TYPE" and (c["type"].get("abstract") or c["type"]["kind"] == "INTERFACE"):
            return False
        if not self.ctx.class_loaded(c["type"]["binary"]):
            self.exclude_entry(f"{c['path']}:{c['lines'][0]}", f"{c['type']['binary']} ({c['path']}:"
                               f"{c['lines'][0]})", [self.owner_rid(c)], c)
            return False
        if c.get("form") == "annotation" and c["target"] == "METHOD" and not self.ctx.candidates_for(
                c["type"]["binary"]):
            # @Scheduled, @EventListener …: Spring runs them on beans only (a commented-out @Component)
            self.exclude_entry(f"{c['path']}:{c['lines'][0]}", f"{c['type']['binary']} ({c['path']}:"
                               f"{c['lines'][0]})", [self.owner_rid(c)], c,
                               why="no bean of its class is in the service's Spring context")
            return False
        return True

    def _contract(self, role: str, urn: str, signature: list[str], c: dict[str, Any], attrs: dict[str, Any]) -> \
            tuple[str, str]:
        stable = f"{role}:{urn}({','.join(signature)})"
        ev = self.cseg(c)
        rid = ids.entity_record_id("CONTRACT", stable)
        if rid in self.rs.entities:
            self.rs.add_evidence(rid, [ev])
            if self.rs.entities[rid]["attributes"].get("loaded") is False and attrs.get("loaded"):
                self.rs.entities[rid]["attributes"]["loaded"] = True
        else:
            self.rs.entity("CONTRACT", stable, urn, [ev], attrs, urn=urn, role=role, signature=signature)
        return rid, stable

    def _topic(self, urn: str, c: dict[str, Any], attrs: dict[str, Any], kind: str = "TOPIC") -> str:
        ev = self.cseg(c)
        rid = ids.entity_record_id(kind, urn)
        if rid in self.rs.entities:
            self.rs.add_evidence(rid, [ev])
            ent = self.rs.entities[rid]["attributes"]
            for k in ("tags", "event_types"):
                if attrs.get(k):
                    ent[k] = sorted(set(ent.get(k, [])) | set(attrs[k]))
            return rid
        return self.rs.entity(kind, urn, urn.split("://", 1)[-1], [ev], attrs, urn=urn)

    def _handlers(self, binary: str, name: str | None, near: str | None = None) -> list[dict[str, Any]]:
        """Handler methods of a type-level listener or job: ``name`` is a method name (the
        implemented one, preferring a body and the fewest parameters) or ``@annotation FQN``
        (every method carrying it)."""
        if not name:
            return []
        if name.startswith("@"):
            return sorted((m for m in self._all_methods(binary, near) if name[1:] in m.get("annotations", [])),
                          key=lambda m: m["lines"])
        ms = [m for m in self._all_methods(binary, near) if m["name"] == name]
        ms.sort(key=lambda m: (0 if m["has_body"] else 1, m["arity"], m["stable"]))
        return ms[:1]

    def _implementation(self, binary: str, iface_method: dict[str, Any], near: str | None = None
                        ) -> dict[str, Any] | None:
        """The method of ``binary`` (or its supertypes) implementing an interface method: the one
        of equal name and erased signature, else the only one of equal name and arity (a generic
        interface erases differently); None when overloads leave several."""
        same = [m for m in self._all_methods(binary, near) if m["name"] == iface_method["name"]]
        exact = [m for m in same if m["signature"] == iface_method["signature"]]
        if exact:
            return exact[0]
        arity = [m for m in same if m["arity"] == iface_method["arity"]]
        return arity[0] if len(arity) == 1 else None

    def _handler(self, binary: str, name: str | None, near: str | None = None) -> dict[str, Any] | None:
        hs = self._handlers(binary, name, near)
        return hs[0] if hs else None

    # ------------------------------------------------------------ RPC
    def _interface_methods(self, iface: str, impl: str | None, near: str | None = None
                           ) -> tuple[list[dict[str, Any]], str]:
        ms = self.methods_of(iface, near)
        if ms:
            return ms, "INTERFACE"
        if impl:
            return [m for m in self.methods_of(impl, near) if "public" in m["modifiers"] and "static" not in m["modifiers"]], \
                "IMPLEMENTATION"
        return [], "UNKNOWN"

    def _class_value(self, c: dict[str, Any], role: str) -> str | None:
        vs = values(c, role)
        return vs[0] if vs else None

    def rpc_providers(self) -> None:
        for c in self.ctx.by_emit.get("RPC_PROVIDER", []):
            rule = self.s.rules.by_id[c["rule"]]
            proto = rule.emits.protocol or "dubbo"
            entry_kind = rule.emits.entry_kind or self.s.rules.default_entry_kind(proto, "OTHER")
            impl: str | None = None
            bean_rid: str | None = None
            if c["form"] == "annotation":
                impl = c["type"]["binary"]
                iface = self._class_value(c, "interface")
                if not iface:
                    ifaces = [d["name"] for d in c.get("type_detail", {}).get("direct_supertypes", []) if d["interface"]]
                    iface = ifaces[0] if ifaces else None
                beans = [b for b in self.ctx.beans if b.type == impl and b.module == c["module"]] or \
                    [b for b in self.ctx.beans if b.type == impl]
                bean_rid = self.bean_rids[id(beans[0])] if beans else None
            else:
                iface = self._class_value(c, "interface")
                ref = (values(c, "ref") or [None])[0]
                beans = self.ctx.named(ref, c)
                if beans:
                    impl = beans[0].type
                    bean_rid = self.bean_rids[id(beans[0])]
            loaded = self.ctx.cand_loaded(c)
            if not iface:
                self.entry_failed(f"{c['path']}:{c['lines'][0]}|rpc", f"{proto} provider at {c['path']}:"
                                  f"{c['lines'][0]}: the interface cannot be determined", [self.owner_rid(c)], c)
                continue
            binding = self._bindings(c)
            methods, basis = self._interface_methods(iface, impl, c["module"])
            if not methods:
                self.entry_failed(f"{c['path']}:{c['lines'][0]}|rpc-methods", f"{proto} provider of {iface} at "
                                  f"{c['path']}:{c['lines'][0]}: neither the interface nor the implementation is in "
                                  "the package, so its methods are unknown", [self.owner_rid(c)], c)
                continue
            for i, m in enumerate(methods):
                urn = f"{proto}://{iface}#{m['name']}"
                crid, cstable = self._contract("PROVIDED", urn, m["signature"], c, {
                    "interface": iface, "protocol": proto, "loaded": loaded, "methods_basis": basis})
                # the method's declaration (an interface method whole, an implemented one by its first line)
                self.rs.add_evidence(crid, [self.seg(m["path"], m["lines"][0],
                                                     m["lines"][0] if m["has_body"] else m["lines"][1])])
                handler = self._implementation(impl, m, c["module"]) if impl else None
                src_rid, src_stable = (bean_rid, self.rs.entities[bean_rid]["stable_id"]) if bean_rid else \
                    ((handler["rid"], handler["stable"]) if handler else (None, None))
                if not loaded or src_rid is None:
                    continue
                ordinal = _binding_ordinal(binding)
                self.rs.relation("EXPOSES", src_rid, src_stable, target_rid=crid, target_key=cstable,
                                 status="RESOLVED", evidence=[self.cseg(c)], ordinal=ordinal,
                                 attributes=dict(binding, protocol=proto))
                if handler:
                    self._entry(entry_kind, urn, handler, c, {"protocol": proto, "interface": iface, **binding},
                                f"{proto.upper()}_PROVIDER")
            if not loaded:
                for m in methods:
                    self.exclude_entry(f"{c['path']}:{c['lines'][0]}|{proto}://{iface}#{m['name']}("
                                       f"{','.join(m['signature'])})",
                                       f"{proto} provider method {iface}#{m['name']}", [self.owner_rid(c)], c)
            elif bean_rid:
                self._binding_keys(c, bean_rid, self.rs.entities[bean_rid]["stable_id"])
            elif c.get("type"):
                self._binding_keys(c, c["type"]["rid"], c["type"]["stable"])

    def rpc_consumers(self) -> None:
        for c in self.ctx.by_emit.get("RPC_CONSUMER", []):
            rule = self.s.rules.by_id[c["rule"]]
            proto = rule.emits.protocol or "dubbo"
            binding = self._bindings(c)
            if c["form"] == "xml":
                iface = self._class_value(c, "interface")
                bean = next((b for b in self.ctx.beans if b.cand is c), None)
                if bean is None or not iface:
                    continue
                fields = [k for k, r in self.injected.items() if r.status == "RESOLVED" and r.beans[0] is bean]
                bean_rid = self.bean_rids[id(bean)]
                loaded = bean.loaded
            elif c["target"] == "FIELD":
                iface = self._class_value(c, "interface") or c["field"]["type"]
                owner = c["type"]["binary"]
                fields = [(owner, c["field"]["name"])]
                stable = f"bean:{c['ns']}/{owner}#{c['field']['name']}"
                loaded = self.ctx.class_loaded(owner)
                bean_rid = self.rs.entity("BEAN", stable, f"{owner}#{c['field']['name']}", [self.cseg(c)], {
                    "type": iface, "declared_by": "RPC_REFERENCE", "loaded": loaded, "primary": False,
                    "aliases": [], "properties": {}})
                if loaded:
                    self.rs.relation("INJECTS", c["field"]["rid"], c["field"]["stable"], target_rid=bean_rid,
                                     target_key=stable, status="RESOLVED", evidence=[self.cseg(c)],
                                     attributes={"injection": "RPC_REFERENCE", "protocol": proto})
            else:
                continue
            if not loaded:
                # a declaration outside the context: kept (its bean, loaded = false), no consumed contract
                self.stats.consumers_not_loaded += 1
                continue
            self._binding_keys(c, bean_rid, self.rs.entities[bean_rid]["stable_id"])
            called = 0
            for owner, fname in fields:
                for fc in self.field_calls.get((owner, fname), []):
                    found, m = self._called_method(iface, fc, c["module"])
                    urn = f"{proto}://{iface}#{fc['method']}"
                    if found == "NOT_A_METHOD":
                        continue  # toString(), equals() … on the proxy: no remote call
                    if found == "AMBIGUOUS":
                        d = self.diag("UNRESOLVED_CALL", f"{fc['callsite_id']}|overload", f"{urn} at {fc['path']}:"
                                      f"{fc['lines'][0]}: overloads of the same arity ({', '.join(m)}); the one called "
                                      "is not decided without argument types", [fc["member"]["rid"]], c)
                        self.rs.relation("CALLS", fc["member"]["rid"], fc["member"]["stable"], target_rid=None,
                                         target_key="?" + urn, status="UNRESOLVED", diagnostics=[d],
                                         evidence=[self.seg(fc["path"], *fc["lines"])], ordinal=fc["ordinal"],
                                         callsite_id=fc["callsite_id"], match_keys={"urn": urn, "overloads": m},
                                         attributes={"dispatch_kind": "RPC", "declared_target": urn,
                                                     "binding_evidence": "field " + fname, "protocol": proto})
                        called += 1
                        continue
                    # a consumed contract exists because a call reaches it: the declaration and the
                    # call are its evidence (the first call for the binding, every call for the contract)
                    call_seg = self.seg(fc["path"], *fc["lines"])
                    crid, cstable = self._contract("CONSUMED", urn, m, c, {
                        "interface": iface, "protocol": proto, "loaded": loaded,
                        "signature_known": found == "FOUND"})
                    self.rs.add_evidence(crid, [call_seg])
                    self.rs.relation("BINDS_TO", bean_rid, self.rs.entities[bean_rid]["stable_id"], target_rid=crid,
                                     target_key=cstable, status="RESOLVED", evidence=[self.cseg(c), call_seg],
                                     ordinal=_binding_ordinal(binding), attributes=dict(binding, protocol=proto))
                    self.rs.relation("CALLS", fc["member"]["rid"], fc["member"]["stable"], target_rid=crid,
                                     target_key=cstable, status="RESOLVED", evidence=[call_seg],
                                     ordinal=fc["ordinal"], callsite_id=fc["callsite_id"],
                                     attributes={"dispatch_kind": "RPC", "declared_target": urn,
                                                 "binding_evidence": "field " + fname, "protocol": proto})
                    called += 1
            if called == 0:
                self.stats.declared_unused += 1
                self.diag("DECLARED_UNUSED", f"{c['path']}:{c['lines'][0]}|consumer", f"{proto} consumer of {iface} "
                          f"at {c['path']}:{c['lines'][0]} is never called", [bean_rid], c)

    def _called_method(self, iface: str, fc: dict[str, Any], near: str | None = None) -> tuple[str, list[str]]:
        """The interface method a call on a consumer reaches: ``(FOUND, signature)``; ``(AMBIGUOUS,
        [signatures])`` for overloads of one arity; ``(NOT_A_METHOD, [])`` when the interface is
        in the package and has no such method (``toString()``); ``(UNKNOWN, ["?", …])`` when
        the interface's methods are not in the package."""
        methods = self._all_methods(iface, near)
        if not methods and iface not in self.ctx.class_packages:
            return "UNKNOWN", ["?"] * fc["arity"]
        sigs = sorted({",".join(m["signature"]) for m in methods
                       if m["name"] == fc["method"] and m["arity"] == fc["arity"]})
        if not sigs:
            return "NOT_A_METHOD", []
        if len(sigs) > 1:
            return "AMBIGUOUS", [f"({s})" for s in sigs]
        return "FOUND", sigs[0].split(",") if sigs[0] else []

    # ------------------------------------------------------------ HTTP
    def _verbs(self, c: dict[str, Any]) -> list[str]:
        rule = self.s.rules.by_id[c["rule"]]
        if rule.emits.http_method:
            return [rule.emits.http_method]
        verbs = [v.rsplit(".", 1)[-1].upper() for v in self._text(self.role(c, "http_method"))]
        return sorted({v for v in verbs if v in _HTTP_METHODS}) or ["ANY"]

    def _paths(self, c: dict[str, Any]) -> tuple[list[str], ResolvedText | None]:
        """A mapping's folded paths (``[""]`` when it names none) and its first path that does
        not fold (then the mapping gives no contract)."""
        rts = self.role(c, "path")
        bad = next((r for r in rts if r.value is None), None)
        return ([r.value for r in rts if r.value is not None] if rts else [""]), bad

    def _type_mappings(self) -> tuple[dict[str, list[dict[str, Any]]], dict[str, list[dict[str, Any]]]]:
        """HTTP_MAPPING candidates by declaring type: (class-level, method-level)."""
        cls: dict[str, list[dict[str, Any]]] = {}
        meth: dict[str, list[dict[str, Any]]] = {}
        for c in self.ctx.by_emit.get("HTTP_MAPPING", []):
            (cls if c["target"] == "TYPE" else meth).setdefault(c["type"]["binary"], []).append(c)
        return cls, meth

    def _lineage(self, binary: str, near: str | None = None) -> list[str]:
        """A type and its in-package supertypes, nearest first."""
        module = self.ctx.home(binary, near)
        return [binary] + ([b for _, b in self.s.oracle.registry.ancestors(module, binary)] if module else [])

    def _http_routes(self, binary: str, cls: dict[str, list[dict[str, Any]]],
                     meth: dict[str, list[dict[str, Any]]]) -> list[tuple[dict[str, Any], list[str], list[str],
                                                                          ResolvedText | None, list[ResolvedText]]]:
        """Mapped methods of a controller or Feign interface, its own or inherited (an API
        interface it implements): ``(method candidate, full paths without context, verbs, the
        first path that does not fold, the path values read)``. The class-level prefix is the
        nearest one declared."""
        lineage = self._lineage(binary)
        prefix_cands = next((cls[b] for b in lineage if b in cls), [])
        prefixes: list[str] = [""]
        pbad = None
        if prefix_cands:
            prefixes, pbad = self._paths(prefix_cands[0])
        out = []
        seen: set[tuple[str, tuple[str, ...]]] = set()
        for b in lineage:
            for mc in meth.get(b, []):
                key = (mc["member"]["name"], tuple(mc["member"]["signature"]))  # overloads are distinct
                if key in seen:
                    continue
                seen.add(key)
                paths, bad = self._paths(mc)
                full = [pre + "/" + p for pre in prefixes for p in paths]
                read = self.role(mc, "path") + (self.role(prefix_cands[0], "path") if prefix_cands else [])
                out.append((mc, full, self._verbs(mc), bad or pbad, read))
        return out

    @property
    def http_host(self) -> str:
        """The host of the package's own HTTP urns (endpoints, gateway routes): the name the registry
        knows it by, so the original id of a deployable renamed ``{name}~…`` after a collision (the
        graph tells the copies apart by service_id and scan)."""
        return str(self.plan.id_basis.get("collided_with") or self.plan.service_id)

    def context_path(self) -> str:
        """The prefix of every handler path: the servlet context path (``server.servlet.context-path``,
        Boot 1's ``server.context-path``), then the DispatcherServlet's path (``spring.mvc.servlet.path``,
        Boot 1's ``server.servlet-path``) — each from the config snapshot first, then the files."""
        parts = []
        for keys in (("server.servlet.context-path", "server.context-path"),
                     ("spring.mvc.servlet.path", "server.servlet-path")):
            for key in keys:
                got = self.lookup("config", key)
                value = (got.value or "").strip().removesuffix("/*") if got.status == "RESOLVED" else ""
                if value:
                    parts.append(value)
                    break
        joined = normalize_path("/".join(parts)) if parts else ""
        return "" if joined == "/" else joined

    def _unfolded_path(self, c: dict[str, Any], bad: ResolvedText, what: str, owner_rid: str, owner_stable: str) -> str:
        code = "CONFIG_VALUE_UNKNOWN" if bad.keys else "CONSTANT_UNRESOLVED"
        d = self.diag(code, f"{c['path']}:{c['lines'][0]}|path", f"{what} at {c['path']}:{c['lines'][0]}: path "
                      f"{bad.expression} does not resolve ({bad.reason})", [owner_rid], c)
        self._note_keys(owner_rid, owner_stable, [bad], c, "mapping path")
        return d

    def http_endpoints(self) -> None:
        cls, meth = self._type_mappings()
        cpath = self.context_path()
        for binary in sorted({c["type"]["binary"] for c in self.ctx.by_emit.get("HTTP_CONTROLLER", [])}):
            loaded = self.ctx.class_loaded(binary)
            for mc, fulls, verbs, bad, read in self._http_routes(binary, cls, meth):
                m = mc["member"]
                if not loaded:
                    self.exclude_entry(f"{m['stable']}|http", f"HTTP handler {m['stable']}", [m["rid"]], mc)
                    continue
                if bad is not None:
                    self._unfolded_path(mc, bad, "HTTP mapping", m["rid"], m["stable"])
                    self.entry_failed(f"{m['stable']}|http", f"HTTP handler {m['stable']}: its path "
                                      f"{bad.expression} does not resolve, so it yields no endpoint", [m["rid"]], mc)
                    continue
                self._note_keys(m["rid"], m["stable"], read, mc, "mapping path")
                for p in fulls:
                    full = normalize_path(cpath + "/" + p)
                    for verb in verbs:
                        urn = f"http://{self.http_host}{full}#{verb}"
                        crid, cstable = self._contract("PROVIDED", urn, m["signature"], mc, {
                            "protocol": "http", "path": full, "http_method": verb, "loaded": True,
                            "context_path": cpath or None})
                        self.rs.relation("EXPOSES", m["rid"], m["stable"], target_rid=crid, target_key=cstable,
                                         status="RESOLVED", evidence=[self.cseg(mc)],
                                         ordinal=_stable_ordinal(binary),
                                         attributes={"protocol": "http", "path": full, "http_method": verb,
                                                     "controller": binary})
                        self._entry("HTTP_ENDPOINT", urn, dict(m, path=mc["path"]), mc,
                                    {"path": full, "http_method": verb, "controller": binary}, "HTTP_MAPPING")

    def http_routes(self) -> None:
        """Functional endpoints (HTTP_ROUTE rules: ``RouterFunctions.route()`` builders and
        ``route(GET("/x"), h)``, WebFlux and Web MVC): each verb route of the chain is an
        HTTP_ENDPOINT entry of the method building the router, and a PROVIDED contract
        ``http://{service}{context path}{path}#{VERB}``. A path that does not fold, and a call of the
        chain the engine does not read (``nest``, ``path(prefix, builder)``, ``add``), make an
        ENTRY_UNRESOLVED diagnostic: the router's other routes are still recorded."""
        cpath = self.context_path()
        for c in self.ctx.by_emit.get("HTTP_ROUTE", []):
            rule = self.s.rules.by_id[c["rule"]]
            m = c["member"]
            binary = c["type"]["binary"]
            if not self.ctx.class_loaded(binary):
                self.exclude_entry(f"{m['stable']}|route", f"functional router {m['stable']}", [m["rid"]], c)
                continue
            unread = set(rule.emits.attributes.get("unread_methods", []))
            for item in c.get("attrs", {}).get("route_calls", []):
                where = f"{c['path']}:{item['line']}"
                if item["name"] in unread:
                    self.entry_failed(f"{where}|route:{item['name']}", f"functional router at {where}: "
                                      f"{item['name']}(…) nests routes diting does not read", [m["rid"]], c)
                    continue
                if "verb" not in item:
                    continue
                rt = self.resolve(item["path"][0]) if item["path"] else None
                if rt is None or rt.value is None:
                    bad = rt or ResolvedText("UNKNOWN", None, expression="(no path)", reason="no path argument")
                    self._unfolded_path(dict(c, lines=[item["line"], item["line"]]), bad, "functional route",
                                        m["rid"], m["stable"])
                    self.entry_failed(f"{where}|route", f"functional route at {where}: its path {bad.expression} "
                                      "does not resolve, so it yields no endpoint", [m["rid"]], c)
                    continue
                self._note_keys(m["rid"], m["stable"], [rt], c, "route path")
                full = normalize_path(cpath + "/" + rt.value)
                verb = item["verb"]
                urn = f"http://{self.plan.service_id}{full}#{verb}"
                crid, cstable = self._contract("PROVIDED", urn, m["signature"], c, {
                    "protocol": "http", "path": full, "http_method": verb, "loaded": True,
                    "context_path": cpath or None, "router": binary})
                self.rs.relation("EXPOSES", m["rid"], m["stable"], target_rid=crid, target_key=cstable,
                                 status="RESOLVED", evidence=[self.seg(c["path"], item["line"], item["line"])],
                                 ordinal=_stable_ordinal(urn),
                                 attributes={"protocol": "http", "path": full, "http_method": verb, "router": binary})
                self._entry("HTTP_ENDPOINT", urn, dict(m, path=c["path"]), c,
                            {"path": full, "http_method": verb, "router": binary}, "HTTP_ROUTE")

    def feign_clients(self) -> None:
        cls, meth = self._type_mappings()
        for c in self.ctx.by_emit.get("FEIGN_CLIENT", []):
            owner = c["type"]["binary"]
            bean = next((b for b in self.ctx.beans if b.cand is c), None)
            if bean is None or not bean.loaded:
                self.stats.consumers_not_loaded += 1  # kept as its bean (loaded = false), no contract
                continue
            bean_rid = self.bean_rids[id(bean)]
            bean_stable = self.rs.entities[bean_rid]["stable_id"]
            names = self.role(c, "service_name")
            name = names[0] if names else None
            url = self.first(c, "url")
            base = self.first(c, "path")
            relative = (c.get("emit_attrs") or {}).get("path_resolution") == "relative"
            if name is None and url is not None:
                # a client with only a base URL (Retrofit's baseUrl = "http://user-center/api/"): the
                # service is the URL's host, the base path the URL's path before the client's own path
                if url.value is None:
                    name = url
                elif (hp := _service_url(url.value)) is not None:
                    name = ResolvedText(url.status, hp[0], url.keys)
                    if base is None:
                        base = ResolvedText(url.status, hp[1], url.keys)
                    elif base.value is not None:
                        base = ResolvedText(base.status, hp[1] + "/" + base.value, url.keys + base.keys)
            if name is not None:
                self._note_keys(bean_rid, bean_stable, [name], c, "feign name")
            calls: dict[tuple[str, int], list[dict[str, Any]]] = {}
            for f, res in self.injected.items():
                if res.status == "RESOLVED" and res.beans[0] is bean:
                    for fc in self.field_calls.get(f, []):
                        calls.setdefault((fc["method"], fc["arity"]), []).append(fc)
            if not calls:
                self.stats.declared_unused += 1
                self.diag("DECLARED_UNUSED", f"{owner}|feign", f"Feign client {owner} is loaded but never called",
                          [bean_rid], c)
                continue
            routes = self._http_routes(owner, cls, meth)
            arity_count: dict[tuple[str, int], int] = {}
            for mc, *_ in routes:
                k = (mc["member"]["name"], len(mc["member"]["signature"]))
                arity_count[k] = arity_count.get(k, 0) + 1
            sigs = {(mc["member"]["name"], tuple(mc["member"]["signature"])) for mc, *_ in routes}
            for mc, fulls, verbs, route_bad, read in routes:
                m = mc["member"]
                sites = calls.get((m["name"], len(m["signature"])), [])
                groups = [(sites, route_bad)]
                if arity_count[(m["name"], len(m["signature"]))] > 1:
                    # overloads of one arity: a site whose argument types name one of them (the
                    # resolver's declared overload) goes to that one alone; the others stay undecided
                    own = tuple(m["signature"])
                    named = [fc for fc in sites if fc.get("signature") and (m["name"], tuple(fc["signature"])) in sigs]
                    undecided = [fc for fc in sites if fc not in named]
                    groups = [([fc for fc in named if tuple(fc["signature"]) == own], route_bad),
                              (undecided, route_bad or ResolvedText(
                                  "UNKNOWN", None, expression=f"{owner}#{m['name']}",
                                  reason="overloads of the same arity; the one called is not decided"))]
                for sites, bad in groups:
                    if sites:
                        self._feign_sites(c, owner, m, mc, fulls, verbs, bad, sites, name, base, url,
                                          bean_rid, bean_stable, relative)

    def _feign_sites(self, c: dict[str, Any], owner: str, m: dict[str, Any], mc: dict[str, Any], fulls: list[str],
                     verbs: list[str], bad: ResolvedText | None, sites: list[dict[str, Any]], name: Any, base: Any,
                     url: Any, bean_rid: str, bean_stable: str, relative: bool = False) -> None:
        """The CALLS (and CONSUMED contracts) of one Feign method's call sites: UNRESOLVED with a
        diagnostic when its path, the client's path or name does not fold (``bad``: the method's own
        reason), else one contract per full path and verb, each site RESOLVED to it (``relative``:
        a Retrofit client, whose method paths resolve against the base URL as relative URIs)."""
        unresolved = bad or (base if base is not None and base.value is None else None) or (
            name if name is not None and name.value is None else None)
        if name is None and unresolved is None:
            unresolved = ResolvedText("UNKNOWN", None, expression="(no name or value)", reason="unnamed client")
        if unresolved is not None:
            d = self._unfolded_path(c, unresolved, f"Feign client {owner}", bean_rid, bean_stable)
            for fc in sites:
                self.rs.relation("CALLS", fc["member"]["rid"], fc["member"]["stable"], target_rid=None,
                                 target_key=f"?{owner}#{m['name']}", status="UNRESOLVED",
                                 evidence=[self.seg(fc["path"], *fc["lines"])], diagnostics=[d],
                                 ordinal=fc["ordinal"], callsite_id=fc["callsite_id"],
                                 match_keys={"service_expression": name.expression if name and name.value
                                             is None else (name.value if name else None),
                                             "unresolved": unresolved.expression, "feign_client": owner,
                                             "method": m["name"]},
                                 attributes={"dispatch_kind": "RPC", "declared_target": None,
                                             "binding_evidence": "Feign client " + owner})
            return
        if relative:
            # Retrofit resolves a method path against the base URL as a relative URI: a path
            # with a leading / replaces the base path, any other is appended to it
            own, _ = self._paths(mc)
            fulls = [p if p.startswith("/") else (base.value if base else "") + "/" + p for p in own]
        for p in fulls:
            full = normalize_path(p if relative else (base.value if base else "") + "/" + p)
            for verb in verbs:
                urn = f"http://{name.value}{full}#{verb}"
                attrs = {"protocol": "http", "path": full, "http_method": verb, "loaded": True,
                         "feign_client": owner, "url": url.value if url else None,
                         "value_basis": name.status}
                crid, cstable = self._contract("CONSUMED", urn, m["signature"], mc, attrs)
                self.rs.relation("BINDS_TO", bean_rid, bean_stable, target_rid=crid, target_key=cstable,
                                 status="RESOLVED", evidence=[self.cseg(c)],
                                 attributes={"protocol": "http", "value_basis": name.status})
                for fc in sites:
                    self.rs.relation("CALLS", fc["member"]["rid"], fc["member"]["stable"],
                                     target_rid=crid, target_key=cstable, status="RESOLVED",
                                     evidence=[self.seg(fc["path"], *fc["lines"])], ordinal=fc["ordinal"],
                                     callsite_id=fc["callsite_id"],
                                     attributes={"dispatch_kind": "RPC", "declared_target": urn,
                                                 "binding_evidence": "Feign client " + owner,
                                                 "value_basis": name.status})

    def http_client_calls(self) -> None:
        """RestTemplate / WebClient / RestClient … calls (HTTP_CLIENT_CALL rules): the URL folded to a
        template (parts that do not fold are holes ``{}``), its host and path a CONSUMED contract
        ``http://{host}{path}#{METHOD}``. The host names a service when the client is load-balanced
        (the injected bean's @Bean method or the field is @LoadBalanced, or the chain starts from
        such a ``WebClient.Builder`` / ``RestClient.Builder``); otherwise the contract says
        ``load_balanced: false`` and the graph aligns it only when the host equals a current
        service id (else URL_ONLY). A call whose URL (or host) does not fold is an UNRESOLVED call
        with a diagnostic (``load_balanced`` says whether its host would name a service);
        ``exchange(RequestEntity…)`` takes URL and verb from the entity (fold.py REQUEST_ENTITY).
        A relative URL (its base set on the client elsewhere) is UNRESOLVED too."""
        lb_methods = {c["member"]["stable"] for c in self.ctx.by_emit.get("LOAD_BALANCED", []) if c["target"] == "METHOD"}
        lb_fields = {(c["type"]["binary"], c["field"]["name"]) for c in self.ctx.by_emit.get("LOAD_BALANCED", [])
                     if c["target"] == "FIELD"}
        for c in self.ctx.by_emit.get("HTTP_CLIENT_CALL", []):
            call = c["call"]
            m = c["member"]
            balanced = any(self._balanced(r, lb_fields, lb_methods) for r in
                           (call.get("receiver"), call.get("receiver_root")) if r)
            url = self.first(c, "url")
            verb = self._client_verb(c)
            # a load-balancer resolves the host alone; a plain client's port says it is an address
            parsed = _service_url(url.value, port=not balanced) if url is not None and url.value is not None else None
            if parsed is None or "{" in parsed[0]:
                # a relative URL (the base is a builder's baseUrl / rootUri set elsewhere) names no host either
                relative = url is not None and url.value is not None and parsed is None
                expr = url.expression if url and url.value is None else (url.value if url else call["expression"])
                # a plain client's URL that does not fold is still a remote call: UNRESOLVED, not silence
                d = self.diag("CONSTANT_UNRESOLVED" if not (url and url.keys) else "CONFIG_VALUE_UNKNOWN",
                              f"{call['callsite_id']}|url", f"{'load-balanced' if balanced else 'plain'} HTTP call "
                              f"({call['receiver_type'] or 'client'}) at {c['path']}:{c['lines'][0]}: URL {expr} "
                              + ("is relative (its base is set on the client elsewhere)" if relative else
                                 f"does not fold to {'a service' if balanced else 'a host'}"), [m["rid"]], c)
                self.rs.relation("CALLS", m["rid"], m["stable"], target_rid=None, target_key="?" + (expr or ""),
                                 status="UNRESOLVED", evidence=[self.cseg(c)], diagnostics=[d],
                                 ordinal=call["ordinal"], callsite_id=call["callsite_id"],
                                 match_keys={"url_expression": expr, "http_method": verb},
                                 attributes={"dispatch_kind": "RPC", "protocol": "http", "declared_target": None,
                                             "load_balanced": balanced, "binding_evidence":
                                             "load-balanced client" if balanced else
                                             (call["receiver_type"] or "client")})
                if url is not None:
                    self._note_keys(m["rid"], m["stable"], [url], c, "HTTP URL")
                continue
            host, path = parsed
            urn = f"http://{host}{normalize_path(path)}#{verb}"
            # a call in a class the context does not load (a shared library's component outside the
            # scan) consumes nothing at run time: its contract says so and the graph does not align it
            crid, cstable = self._contract("CONSUMED", urn, [], c, {"protocol": "http", "path": normalize_path(path),
                                                                     "http_method": verb,
                                                                     "loaded": self.ctx.class_loaded(c["type"]["binary"]),
                                                                     "client": call["receiver_type"],
                                                                     "load_balanced": balanced,
                                                                     "value_basis": url.status,
                                                                     "fold_basis": c["roles"]["url"][0].get("basis")})
            self.rs.relation("CALLS", m["rid"], m["stable"], target_rid=crid, target_key=cstable, status="RESOLVED",
                             evidence=[self.cseg(c)], ordinal=call["ordinal"], callsite_id=call["callsite_id"],
                             attributes={"dispatch_kind": "RPC", "protocol": "http", "declared_target": urn,
                                         "binding_evidence": ("load-balanced " if balanced else "") +
                                         (call["receiver_type"] or "client"),
                                         "load_balanced": balanced, "value_basis": url.status})
            self._note_keys(m["rid"], m["stable"], [url], c, "HTTP URL")

    def _balanced(self, recv: dict[str, Any], lb_fields: set[tuple[str, str]], lb_methods: set[str]) -> bool:
        """Whether the field a client call starts from is load-balanced: annotated itself, or
        injected with the bean of an annotated @Bean method."""
        key = (recv["binary"], recv["field"])
        res = self.injected.get(key)
        return key in lb_fields or (res is not None and res.status == "RESOLVED" and
                                    res.beans[0].cand.get("member", {}).get("stable") in lb_methods)

    # ------------------------------------------------------------ gateways
    def gateway_routes(self) -> None:
        """API gateway routes (docs/middleware.md §3, probes/gateway.py): each route of the gateway's
        configuration (``config`` rules, by dialect) or of a ``RouteLocator`` builder in code
        (``call`` rules) is a GATEWAY_ROUTE entry per incoming pattern, bound to the
        CONSUMED contract ``http://{target}{forwarded pattern}#{method}`` the graph aligns (a route
        whose uri does not fold is UNRESOLVED). The entry BINDS_TO that contract, as a consumer
        bean does (a route is no call site of the package's code). A discovery locator (every registered
        service routed by its id) is one entry with an UNDETERMINED_DYNAMIC_EDGE diagnostic."""
        if self.plan.kind != "SERVICE" or self.service_rid is None:
            return
        service = {"rid": self.service_rid, "stable": self.rs.entities[self.service_rid]["stable_id"]}
        for rule in self.s.rules.by_emit("GATEWAY_ROUTE"):
            if rule.match.config is None or self.config is None:
                continue
            dialect = rule.emits.attributes.get("dialect")
            for prefix in rule.match.config.prefixes:
                if dialect == "discovery-locator":
                    self._discovery_locator(rule.id, prefix, service)
                    continue
                found = self._config_routes(rule.id, prefix) if dialect == "spring-cloud-gateway" else \
                    self._zuul_routes(rule.id, prefix) if dialect == "zuul" else []
                for route, c in found:
                    self._gateway_route(route, c, service, dialect)
        for c in self.ctx.by_emit.get("GATEWAY_ROUTE", []):
            if c["form"] == "annotation":  # @EnableZuulProxy: Zuul's default route per service
                if self.ctx.class_loaded(c["type"]["binary"]) and \
                        (c.get("emit_attrs") or {}).get("dialect") == "zuul-default":
                    self._zuul_default_routes(c, service)
                continue
            m = c["member"]
            if not self.ctx.class_loaded(c["type"]["binary"]):
                self.exclude_entry(f"{c['call']['callsite_id']}|route", f"gateway route at {c['path']}:{c['lines'][0]}",
                                   [m["rid"]], c)
                continue
            self._gateway_route(self._java_route(c), c, dict(m, path=c["path"]), "spring-cloud-gateway")

    def _config_text(self, entry: Any) -> tuple[str | None, str]:
        """A raw config value with its placeholders filled (None when one has no value)."""
        return (self.config.expand(entry.value) if "${" in entry.value else entry.value), entry.value

    def _config_cand(self, rule_id: str, path: str, entries: list[Any]) -> dict[str, Any]:
        """A pseudo candidate (evidence: the config lines) for a route read from configuration."""
        return {"rule": rule_id, "emit": "GATEWAY_ROUTE", "form": "config", "path": path, "target": "CONFIG",
                "lines": [min(e.line for e in entries), max(max(e.end_line, e.line) for e in entries)]}

    def _config_routes(self, rule_id: str, prefix: str) -> list[tuple[gateway.Route, dict[str, Any]]]:
        """Spring Cloud Gateway routes of a ``routes`` list: predicates and filters in the shortcut
        form (``Path=/a/**,/b/**``) or the long form (``name: Path``, ``args: {pattern: …}``); the
        ``default-filters`` beside the list (shortcut form) apply to every route first."""
        out = []
        defaults = [f for f in (gateway.shortcut(self._config_text(e)[0] or e.value) for _, e in
                                self.config.entries_of(prefix.rsplit(".", 1)[0] + ".default-filters"))
                    if f[0] in gateway.PATH_FILTERS]  # shortcut form; they run before a route's own
        for n, (path, item) in enumerate(self.config.list_items(prefix)):
            def listed(what: str) -> list[tuple[str, list[str]]]:
                got: dict[int, tuple[str, list[str]]] = {}
                for k in sorted(item):
                    m = re.match(re.escape(what) + r"\[(\d+)\](.*)$", k)
                    if m is None:
                        continue
                    i, rest = int(m.group(1)), m.group(2)
                    # Spring's binder keeps a placeholder it cannot fill as written: a RewritePath
                    # replacement's ${group} (escaped $\{group} in YAML) reaches the filter as is
                    text = self._config_text(item[k])[0] or (item[k].value if what == "filters" else "?")
                    if rest == "":
                        got[i] = gateway.shortcut(text)
                    elif rest == ".name":
                        got[i] = (text, got.get(i, ("", []))[1])
                    elif rest.startswith(".args"):
                        name, args = got.get(i, ("", []))
                        got[i] = (name, args + gateway.split_args(text))
                return [got[i] for i in sorted(got)]
            preds = listed("predicates")
            uri, expr = self._config_text(item["uri"]) if "uri" in item else (None, "(no uri)")
            rid = item["id"].value if "id" in item else f"{prefix}[{n}]"
            route = gateway.Route(rid, [p for name, args in preds if name == "Path" for p in args],
                                  uri, sorted({a.upper() for name, args in preds if name == "Method" for a in args}),
                                  defaults + [f for f in listed("filters") if f[0] in gateway.PATH_FILTERS],
                                  uri_expression=expr)
            if any(name == "Path" for name, _ in preds) and not route.patterns:
                route.patterns = ["?"]
            out.append((route, self._config_cand(rule_id, path, list(item.values()))))
        return out

    def _zuul_routes(self, rule_id: str, prefix: str) -> list[tuple[gateway.Route, dict[str, Any]]]:
        """Zuul routes of a ``zuul.routes`` map: ``NAME.path`` (or ``NAME: /path/**``), ``serviceId``
        (default: NAME), ``url``, ``strip-prefix`` (default true: the pattern's fixed prefix is
        dropped), under the global ``zuul.prefix`` / ``zuul.strip-prefix``."""
        root = prefix.rsplit(".", 1)[0]
        gprefix = self.config.get(f"{root}.prefix")
        gstrip = self.config.get(f"{root}.strip-prefix")
        out = []
        for element, raw in self.config.map_keys(prefix):
            base = f"{prefix}.{element}"
            pv = self.config.get(f"{base}.path")
            pv = pv if pv.entry is not None else self.config.get(base)
            sid, url = self.config.get(f"{base}.service-id"), self.config.get(f"{base}.url")
            strip = self.config.get(f"{base}.strip-prefix")
            entries = [r.entry for r in (pv, sid, url, strip) if r.entry is not None]
            if not entries:
                continue
            # a route without a path answers at /{NAME}/**, as Zuul's
            pattern = (pv.value or "?") if pv.entry is not None else f"/{raw}/**"
            filters: list[tuple[str, list[str]]] = []
            if (strip.value or "true").strip().lower() == "true":
                filters.append(("StripPrefix", [str(gateway.fixed_segments(pattern))]))
            if gprefix.value:
                pattern = "/" + gprefix.value.strip("/") + "/" + pattern.lstrip("/")
                if (gstrip.value or "true").strip().lower() == "true":
                    filters.insert(0, ("StripPrefix", [str(gateway.fixed_segments(gprefix.value))]))
            if url.entry is not None:
                uri, expr = url.value, url.entry.value
            elif sid.entry is not None:
                uri, expr = (f"lb://{sid.value}" if sid.value else None), sid.entry.value
            else:
                uri, expr = f"lb://{raw}", raw
            where = next(r.path for r in (pv, sid, url, strip) if r.entry is not None)
            entries = [r.entry for r in (pv, sid, url, strip) if r.entry is not None and r.path == where]
            out.append((gateway.Route(raw, [pattern], uri, [], filters, uri_expression=expr),
                        self._config_cand(rule_id, where or "", entries)))
        return out

    def _java_route(self, c: dict[str, Any]) -> gateway.Route:
        """A route built in code: the calls inside the lambda handed to ``route(…)`` (``path``,
        ``method``, ``uri``, and the ``filters`` lambda's ``stripPrefix`` / ``prefixPath`` /
        ``rewritePath`` / ``setPath``)."""
        def texts(call: dict[str, Any]) -> list[str | None]:
            if call["name"] in ("rewritePath", "setPath"):  # a Java literal's ${group} is no placeholder
                return [(o[0].get("value") if o else None) for o in call["args"]]
            return [(self.resolve(o[0]).value if o else None) for o in call["args"]]
        ids_ = self._text(self.role(c, "id"))
        route = gateway.Route(ids_[0] if ids_ else f"{c['path']}:{c['lines'][0]}", [], None)
        filter_names = {"stripPrefix": "StripPrefix", "prefixPath": "PrefixPath", "rewritePath": "RewritePath",
                        "setPath": "SetPath"}
        for call in c.get("attrs", {}).get("lambda_calls", []):
            args = texts(call)
            if call["name"] == "path":
                route.patterns += [a if a is not None else "?" for a in args]
            elif call["name"] == "method":
                route.methods += [str(a).rsplit(".", 1)[-1].upper() for a in args if a]
            elif call["name"] == "uri" and args:
                route.uri = args[0]
                route.uri_expression = (call["args"][0][0].get("unresolved") if call["args"][0] else None) or args[0]
            elif call["name"] in filter_names and call["via"] == "filters":
                route.filters.append((filter_names[call["name"]], [a if a is not None else "?" for a in args]))
        return route

    def _gateway_route(self, route: gateway.Route, c: dict[str, Any], handler: dict[str, Any], dialect: str) -> None:
        gw = self.http_host
        for pattern in route.patterns or ["/**"]:
            if "?" == pattern or "${" in pattern:
                self.entry_failed(f"{c['path']}:{c['lines'][0]}|route:{route.route_id}",
                                  f"gateway route {route.route_id} at {c['path']}:{c['lines'][0]}: its path pattern does "
                                  "not resolve, so it yields no entry", [handler["rid"]], c)
                continue
            incoming = normalize_path(pattern)
            for verb in route.methods or ["ANY"]:
                urn = f"http://{gw}{incoming}#{verb}"
                attrs = {"path": incoming, "http_method": verb, "route_id": route.route_id, "uri": route.uri,
                         "gateway": dialect}
                erid = self._entry("GATEWAY_ROUTE", urn, handler, c, attrs, "GATEWAY_ROUTE")
                estable = self.rs.entities[erid]["stable_id"]
                # the route binds its entry to what it forwards to (a BINDS_TO, as a consumer bean's; it is
                # no call site of the package's code)
                base = {"protocol": "http", "loaded": True, "gateway_route": route.route_id,
                        "binding_evidence": f"gateway route {route.route_id}"}
                if route.uri is None:
                    d = self.diag("CONFIG_VALUE_UNKNOWN" if "${" in (route.uri_expression or "") else "CONSTANT_UNRESOLVED",
                                  f"{c['path']}:{c['lines'][0]}|route-uri:{route.route_id}",
                                  f"gateway route {route.route_id} at {c['path']}:{c['lines'][0]}: uri "
                                  f"{route.uri_expression} does not resolve", [erid], c)
                    self.rs.relation("BINDS_TO", erid, estable, target_rid=None,
                                     target_key="?" + (route.uri_expression or ""),
                                     status="UNRESOLVED", evidence=[self.cseg(c)], diagnostics=[d],
                                     match_keys={"route_id": route.route_id, "uri_expression": route.uri_expression,
                                                 "path": incoming, "http_method": verb},
                                     attributes=dict(base, declared_target=None))
                    continue
                kind, host = gateway.target(route.uri)
                if kind == "OTHER":
                    continue  # forward:, no://op …: handled by the gateway itself
                fwd = gateway.forward(pattern, route.filters)
                fwd = normalize_path(fwd) if fwd is not None else None
                if fwd is None:
                    shown = ", ".join(f"{n}={','.join(a)}" for n, a in route.filters)
                    self.diag("CONSTANT_UNRESOLVED", f"{c['path']}:{c['lines'][0]}|route-path:{route.route_id}",
                              f"gateway route {route.route_id} at {c['path']}:{c['lines'][0]}: the path it forwards "
                              f"for {incoming} is not known (filters {shown}); aligned to the service only",
                              [erid], c)
                target_urn = f"http://{host}{fwd or '/**'}#{verb}"
                crid, cstable = self._contract("CONSUMED", target_urn, [], c, {
                    "protocol": "http", "path": fwd or "/**", "http_method": verb, "loaded": True,
                    "gateway_route": route.route_id, "route_pattern": incoming, "forward_known": fwd is not None,
                    "uri": route.uri, "load_balanced": kind == "SERVICE"})
                self.rs.relation("BINDS_TO", erid, estable, target_rid=crid, target_key=cstable, status="RESOLVED",
                                 evidence=[self.cseg(c)], attributes=dict(base, declared_target=target_urn))

    def _discovery_locator(self, rule_id: str, key: str, service: dict[str, Any]) -> None:
        rv = self.config.get(key)
        if rv.status != "RESOLVED" or (rv.value or "").strip().lower() != "true" or rv.entry is None:
            return
        c = self._config_cand(rule_id, rv.path or "", [rv.entry])
        self._every_service_route(c, service, "discovery-locator", "/{}/**",
                                  f"{key} = true at {rv.path}:{rv.entry.line}", f"{rv.path}:{rv.entry.line}")

    def _zuul_default_routes(self, c: dict[str, Any], service: dict[str, Any]) -> None:
        """``@EnableZuulProxy``: Zuul routes ``/{service-id}/**`` (under ``zuul.prefix``) to every
        service discovery knows, unless ``zuul.ignored-services`` is ``*`` — one entry, as the
        discovery locator's."""
        ignored = self.config.get("zuul.ignored-services") if self.config is not None else None
        if ignored is not None and (ignored.value or "").strip().strip("'\"") == "*":
            return
        prefix = self.config.get("zuul.prefix").value if self.config is not None else None
        pattern = normalize_path(("/" + prefix.strip("/") if prefix and prefix.strip("/") else "") + "/{}/**")
        self._every_service_route(c, service, "zuul-default", pattern,
                                  f"@EnableZuulProxy at {c['path']}:{c['lines'][0]}, zuul.ignored-services not *",
                                  f"{c['path']}:{c['lines'][0]}")

    def _every_service_route(self, c: dict[str, Any], service: dict[str, Any], route_id: str, pattern: str,
                             why: str, where: str) -> None:
        """One GATEWAY_ROUTE entry for a gateway that routes every registered service by its id, with
        an UNDETERMINED_DYNAMIC_EDGE diagnostic (the services are known only at runtime)."""
        urn = f"http://{self.http_host}{pattern}#ANY"
        erid = self._entry("GATEWAY_ROUTE", urn, service, c, {"path": pattern, "http_method": "ANY",
                                                              "route_id": route_id, "gateway": route_id},
                           "GATEWAY_ROUTE")
        self.diag("UNDETERMINED_DYNAMIC_EDGE", f"{where}|{route_id}",
                  f"{self.plan.service_id} routes {pattern.replace('{}', '{service-id}')} to every service "
                  f"registered with discovery ({why}); which services those are is decided at runtime, "
                  "so no edge is drawn", [erid], c)

    def _client_verb(self, c: dict[str, Any]) -> str:
        rule = self.s.rules.by_id[c["rule"]]
        if rule.emits.http_method:
            return rule.emits.http_method
        vtype = str(((c.get("roles") or {}).get("url") or [{}])[0].get("vtype") or "")
        if vtype.startswith(REQUEST_ENTITY + "#"):  # exchange(RequestEntity.post(uri)…): the entity's verb
            return vtype.rsplit("#", 1)[1]
        named = [v.rsplit(".", 1)[-1].upper() for v in self._text(self.role(c, "http_method"))]
        if named and named[0] in _HTTP_METHODS:
            return named[0]
        call = c["call"]
        named = [self.resolve(o).value for o in (call.get("receiver_call") or {}).get("http_method", [])]
        if named and named[0] and named[0].rsplit(".", 1)[-1].upper() in _HTTP_METHODS:
            return named[0].rsplit(".", 1)[-1].upper()
        for name in ([call["receiver_call"]["name"]] if call.get("receiver_call") else []) + [call["name"]]:
            low = name.lower()
            for verb in ("get", "post", "put", "delete", "patch", "head", "options"):
                if low.startswith(verb):
                    return verb.upper()
        for name in call.get("chain", []):  # a request builder: new Request.Builder().url(u).post(body)
            if name.upper() in _HTTP_METHODS:
                return name.upper()
        return "ANY"

    # ------------------------------------------------------------ MQ
    def _split_tag(self, value: str, sep: str | None) -> tuple[str, str | None]:
        if sep and sep in value:
            topic, _, tag = value.partition(sep)
            return topic, tag or None
        return value, None

    def mq_listeners(self) -> None:
        for c in self.ctx.by_emit.get("MQ_LISTENER", []):
            rule = self.s.rules.by_id[c["rule"]]
            proto = rule.emits.protocol or "jmq"
            if c["form"] == "xml":
                ref = (values(c, "listener") or [None])[0]
                beans = self.ctx.named(ref, c)
                binary = beans[0].type if beans else None
                handlers = self._handlers(binary, rule.emits.handler, beans[0].module) if binary else []
                loaded = self.ctx.cand_loaded(c)
            elif c["target"] == "TYPE":
                binary = c["type"]["binary"]
                handlers = self._handlers(binary, rule.emits.handler, c["module"])
                loaded = self.ctx.class_loaded(binary)
            else:
                binary = c["type"]["binary"]
                handlers = [dict(c["member"], path=c["path"])]
                loaded = self.ctx.class_loaded(binary)
            if not loaded:
                self.exclude_entry(f"{c['path']}:{c['lines'][0]}|listener", f"{proto} listener at {c['path']}:"
                                   f"{c['lines'][0]}", [self.owner_rid(c)], c)
                continue
            if not handlers:
                what = f"bean {ref!r}" if c["form"] == "xml" else binary
                self.entry_failed(f"{c['path']}:{c['lines'][0]}|listener", f"{proto} listener at {c['path']}:"
                                  f"{c['lines'][0]}: no handler method found on {what}", [self.owner_rid(c)], c)
                continue
            topics = self.role(c, "queue" if proto == "amqp-queue" else "topic")
            tag_rts, group_rts = self.role(c, "tag"), self.role(c, "consumer_group")
            tags, group = self._text(tag_rts), self._text(group_rts)
            if not topics:
                topics = [ResolvedText("UNKNOWN", None, expression="(no topic attribute)", reason="no topic")]
            for handler in handlers:
                for t in topics:
                    self._subscribe(c, proto, handler, t, tags, group, tag_rts + group_rts)

    def _subscribe(self, c: dict[str, Any], proto: str, handler: dict[str, Any], t: ResolvedText, tags: list[str],
                   group: list[str], also_read: list[ResolvedText] | None = None,
                   extra: dict[str, Any] | None = None) -> None:
        """An MQ_CONSUMER entry and its SUBSCRIBES; the config keys of its topic, tag filter and
        consumer group (``also_read``) are bound to the entry; ``extra`` attributes are recorded on both."""
        attrs: dict[str, Any] = {"protocol": proto, "tag_filter": tags[0] if tags else None,
                                 "consumer_group": group[0] if group else None, **(extra or {})}
        unfolded = next((r for r in self.role(c, "tag") if r.value is None), None)
        if not tags and unfolded is not None:  # a filter that does not fold is unknown, not absent
            attrs.update(tag_filter_resolution="UNKNOWN", tag_filter_expression=unfolded.expression)
        kinds = self.role(c, "selector_type")
        if kinds:  # an enum constant (SelectorType.SQL92): its name is the value
            text = kinds[0].value or kinds[0].expression or ""
            name = text.rsplit(".", 1)[-1]
            attrs["tag_filter_type"] = name if re.fullmatch(r"[A-Z][A-Z0-9_]*", name) else "UNKNOWN"
        # redelivery of a failed message: the declared retries; a RocketMQ group's messages go to its
        # dead-letter topic %DLQ%{group} after the last retry (16 unless declared)
        retries = [r.value for r in self.role(c, "retries") if r.value is not None]
        for rc in self._retry_rules(handler["stable"]):  # a retry annotation on the handler (MQ_RETRY rules)
            rule = self.s.rules.by_id[rc["rule"]]
            default = rule.emits.attributes.get("default_attempts")
            retries = [r.value for r in self.role(rc, "retries") if r.value is not None] or (
                [str(default)] if default is not None else retries)
            suffix = rule.emits.attributes.get("dead_letter_suffix")
            if suffix and t.value is not None:
                attrs["dead_letter_topic"] = f"{t.value}{suffix}"
        if retries:
            attrs["max_retries"] = retries[0]
        if proto == "rocketmq" and group:
            attrs["dead_letter_topic"] = f"%DLQ%{group[0]}"
        if t.value is None:
            urn = handler["stable"].split("/", 1)[-1]
            erid = self._entry("MQ_CONSUMER", urn, handler, c, dict(attrs, topic_expression=t.expression),
                               "MQ_LISTENER", resolved=False)
            d = self.diag("TOPIC_UNRESOLVED", f"{c['path']}:{c['lines'][0]}|{t.expression}", f"{proto} "
                          f"listener topic {t.expression} does not resolve: {t.reason}", [erid], c)
            self.rs.relation("SUBSCRIBES", erid, self.rs.entities[erid]["stable_id"], target_rid=None,
                             target_key="?" + (t.expression or ""), status="UNRESOLVED",
                             evidence=[self.cseg(c)], diagnostics=[d],
                             match_keys={"topic_expression": t.expression, "protocol": proto})
            self._note_keys(erid, self.rs.entities[erid]["stable_id"], [t] + (also_read or []), c, "listener")
            return
        urn = f"{proto}://{t.value}"
        erid = self._entry("MQ_CONSUMER", urn, handler, c, dict(attrs, value_basis=t.status), "MQ_LISTENER")
        trid = self._topic(urn, c, {"protocol": proto, "tags": tags})
        self.rs.relation("SUBSCRIBES", erid, self.rs.entities[erid]["stable_id"], target_rid=trid,
                         target_key=urn, status="RESOLVED", evidence=[self.cseg(c)],
                         attributes=dict(attrs, value_basis=t.status))
        self._note_keys(erid, self.rs.entities[erid]["stable_id"], [t] + (also_read or []), c, "listener")

    def mq_sends(self) -> None:
        listeners = {(self.s.rules.by_id[c["rule"]].emits.protocol, c["member"]["stable"])
                     for c in self.ctx.by_emit.get("MQ_LISTENER", []) if c["form"] == "annotation" and
                     c["target"] == "METHOD"}
        for c in self.ctx.by_emit.get("MQ_SEND", []):
            rule = self.s.rules.by_id[c["rule"]]
            proto = rule.emits.protocol or "jmq"
            if c["form"] == "annotation":  # a reply annotation (@SendTo) counts on a listener method only
                if c["target"] != "METHOD" or (proto, c["member"]["stable"]) not in listeners:
                    continue
                c = dict(c, call=_annotation_send(c))
            m = c["member"]
            call = c["call"]
            ev = self.cseg(c)
            event_type = call.get("arg_types", {}).get("payload")
            if proto == "amqp":
                ex = self.first(c, "exchange")
                rk = self.first(c, "routing_key")
                parts = [ex or ResolvedText("RESOLVED", ""), rk]
                if rk is None or any(p is None or p.value is None for p in parts):
                    bad = next((p for p in parts if p is None or p.value is None), None)
                    self._unresolved_send(c, proto, bad.expression if bad else "routing key", bad.reason if bad else "",
                                          parts={"exchange": ex, "routing_key": rk} if rk is not None else None)
                    continue
                urn = f"amqp://{ex.value if ex else ''}/{rk.value}"
                status = "DEFAULT_ONLY" if any(p.status == "DEFAULT_ONLY" for p in parts if p) else "RESOLVED"
                destinations = [(urn, None, status, [p for p in parts if p], None)]
            else:
                topics = self.role(c, "topic")
                if not topics and rule.match.call.receiver_properties:
                    topics = self._wrapper_topic(c)
                default_key = rule.emits.attributes.get("default_topic_key")
                if not topics and default_key:  # the template's default destination from Boot's property
                    topics = [self.resolve({"value": "${" + default_key + "}", "vtype": "java.lang.String",
                                            "basis": "CONFIG", "placeholders": True})]
                tags = self.role(c, "tag")
                if not topics:
                    msg = c.get("attrs", {}).get("message_expression")
                    self._unresolved_send(c, proto, f"topic of {msg}" if msg else call["expression"],
                                          "the message is built outside this method" if msg else
                                          "no topic argument or bean property")
                    continue
                destinations = []
                sep = rule.emits.tag_separator
                for t in topics:
                    tag_unknown = None
                    if t.value is None and sep:
                        # "topic:" + tag where only the tag does not fold: the topic is still known
                        raw = c.get("attrs", {}).get("topic_prefix") or ""
                        head = self.resolve({"value": raw, "vtype": "java.lang.String", "basis": "PREFIX",
                                             "placeholders": "${" in raw}) if sep in raw else None
                        if head is not None and head.value is not None and head.value.partition(sep)[0]:
                            tag_unknown = t.expression
                            t = ResolvedText(head.status, head.value.partition(sep)[0], head.keys)
                    if t.value is None:
                        self._unresolved_send(c, proto, t.expression, t.reason, t)
                        continue
                    topic, tag = self._split_tag(t.value, sep)
                    if tags and tags[0].value is not None:
                        tag = tags[0].value
                    destinations.append((f"{proto}://{topic}", tag, t.status, [t], tag_unknown))
            for urn, tag, status, rts, tag_unknown in destinations:
                trid = self._topic(urn, c, {"protocol": proto, "tags": [tag] if tag else [],
                                            "event_types": [event_type] if event_type else []})
                attrs = {"protocol": proto, "tag": tag, "event_type": event_type, "value_basis": status,
                         "send_method": call["name"], "loaded": self.ctx.class_loaded(c["type"]["binary"])}
                if tag_unknown:
                    attrs.update(tag_resolution="UNKNOWN", tag_expression=tag_unknown)
                built = c.get("attrs", {}).get("message_lines")
                self.rs.relation("PUBLISHES", m["rid"], m["stable"], target_rid=trid, target_key=urn,
                                 status="RESOLVED", evidence=[ev] + ([self.seg(c["path"], *built)] if built else []),
                                 ordinal=call["ordinal"],
                                 callsite_id=call["callsite_id"], attributes=attrs)
                self._note_keys(m["rid"], m["stable"], rts, c, "send destination")

    def mq_receives(self) -> None:
        """Pull consumption through a template (MQ_RECEIVE rules: ``rocketMQTemplate.receive(T.class)``,
        a 5.x ``RocketMQClientTemplate.receive(n, timeout)``): the calling method is an MQ_CONSUMER
        entry (``consume_mode: PULL``) subscribing to the topic of the template's auto-configured
        consumer — the rule's ``default_topic_key`` (tag ``default_tag_key``, group
        ``default_group_key``) from the service's configuration. A receiver of a subtype of the
        rule's template (``ExtRocketMQTemplate`` subclasses, configured by their own annotation) is
        not that consumer: an ENTRY_UNRESOLVED diagnostic, no subscription."""
        for c in self.ctx.by_emit.get("MQ_RECEIVE", []):
            rule = self.s.rules.by_id[c["rule"]]
            proto = rule.emits.protocol or "jmq"
            m = c["member"]
            where = f"{c['path']}:{c['lines'][0]}"
            if not self.ctx.class_loaded(c["type"]["binary"]):
                self.exclude_entry(f"{c['call']['callsite_id']}|receive", f"{proto} pull at {where}", [m["rid"]], c)
                continue
            wanted = rule.match.call.receiver_type
            wanted = wanted if isinstance(wanted, list) else [wanted]
            if c["call"]["receiver_type"] not in wanted:
                self.entry_failed(f"{c['call']['callsite_id']}|receive", f"{proto} pull at {where}: the receiver "
                                  f"{c['call']['receiver_type']} is a template subclass whose own consumer "
                                  "configuration is not read", [m["rid"]], c)
                continue
            attrs = rule.emits.attributes

            def conf(key: str | None) -> ResolvedText | None:
                return None if not key else self.resolve({"value": "${" + key + "}", "vtype": "java.lang.String",
                                                          "basis": "CONFIG", "placeholders": True})
            t = conf(attrs.get("default_topic_key"))
            tag, group = conf(attrs.get("default_tag_key")), conf(attrs.get("default_group_key"))
            tags = [tag.value] if tag is not None and tag.value not in (None, "*") else []
            groups = [group.value] if group is not None and group.value is not None else []
            handler = dict(m, path=c["path"])
            handler.pop("lines", None)
            self._subscribe(c, proto, handler,
                            t or ResolvedText("UNKNOWN", None, expression="(no topic key)", reason="no topic"),
                            tags, groups, [r for r in (tag, group) if r is not None], {"consume_mode": "PULL"})

    def mq_streams(self) -> None:
        """Spring Cloud Stream bindings (probes/stream.py)."""
        Streams(self).run()

    def _wrapper_topic(self, c: dict[str, Any]) -> list[ResolvedText]:
        """A wrapper producer bean's configured topic: the receiver field's injected bean's property."""
        rule = self.s.rules.by_id[c["rule"]]
        recv = c["call"].get("receiver")
        if not recv:
            return []
        res = self.injected.get((recv["binary"], recv["field"]))
        if res is None or res.status != "RESOLVED":
            return []
        bean = res.beans[0]
        out = []
        for prop, role in rule.match.call.receiver_properties.items():
            if role != "topic":
                continue
            p = bean.properties.get(prop)
            if p and p.get("outcome") is not None:
                out.append(self.resolve(p["outcome"]))
            elif p and p.get("value") is not None:
                out.append(self.resolve({"value": p["value"], "vtype": "java.lang.String", "basis": "XML",
                                         "placeholders": "${" in p["value"]}))
        for wc in self.ctx.by_emit.get("MQ_WRAPPER_BEAN", []):
            if wc["form"] == "xml" and wc["path"] == bean.cand.get("path") and wc["lines"] == bean.cand.get("lines"):
                out.extend(self.role(wc, "topic"))
        return out

    def _unresolved_send(self, c: dict[str, Any], proto: str, expression: str | None, reason: str,
                         rt: ResolvedText | None = None, parts: dict[str, ResolvedText | None] | None = None) -> None:
        """An UNRESOLVED PUBLISHES with TOPIC_UNRESOLVED. A destination that is a parameter of the method, or
        a parameter's getter or field (``topicEnum.getTopic()``), makes the method a wrapper its callers
        resolve (probes/wrappers.py): ``topic_parameter`` (and ``topic_accessor``); for an AMQP
        send ``destination_parts`` gives each of exchange and routing key as a value or a parameter."""
        m = c["member"]
        call = c["call"]
        attrs: dict[str, Any] = {"protocol": proto, "send_method": call["name"]}
        given = c.get("attrs", {}).get("parameters", {})
        acc = given.get("topic")
        if parts is not None:
            dest: dict[str, Any] = {}
            for role, part in parts.items():
                if part is not None and part.value is not None:
                    dest[role] = {"value": part.value}
                elif role in given:
                    dest[role] = {k: given[role][k] for k in ("parameter", "name", "getter", "field") if k in given[role]}
                else:
                    dest = {}
                    break
            if dest:
                attrs["topic_parameter"] = next(d["parameter"] for d in dest.values() if "parameter" in d)
                attrs["destination_parts"] = dest
        elif acc is not None and (rt is None or rt.value is None) and expression is not None:
            attrs["topic_parameter"] = acc["parameter"]  # a wrapper method: its callers name the destination
            if "getter" in acc or "field" in acc:  # topicEnum.getTopic(): likewise, through it
                attrs["topic_accessor"] = {k: acc[k] for k in ("name", "getter", "field") if k in acc}
        elif expression in (params := [p["name"] for p in m.get("params", [])]):  # a message's topic setter
            attrs["topic_parameter"] = params.index(expression)
        d = self.diag("TOPIC_UNRESOLVED", f"{call['callsite_id']}|send", f"{proto} send at {c['path']}:"
                      f"{c['lines'][0]}: destination {expression} does not resolve ({reason})", [m["rid"]], c)
        self.rs.relation("PUBLISHES", m["rid"], m["stable"], target_rid=None, target_key="?" + (expression or ""),
                         status="UNRESOLVED", evidence=[self.cseg(c)], diagnostics=[d], ordinal=call["ordinal"],
                         callsite_id=call["callsite_id"], match_keys={"topic_expression": expression,
                                                                      "protocol": proto},
                         attributes=attrs)
        if rt is not None:
            self._note_keys(m["rid"], m["stable"], [rt], c, "send destination")

    def mq_bindings(self) -> None:
        """Exchange-to-queue bindings declared as beans (``@Bean Binding`` built with
        ``BindingBuilder.bind(queue).to(exchange).with(key)`` or ``new Binding(…)``): BINDS_TO from
        ``amqp://{exchange}/{routing key}`` to ``amqp-queue://{queue}``. Queue and exchange
        arguments that are beans are looked up among the package's declaration beans."""
        decls: dict[str, dict[str, Any]] = {}
        for c in self.ctx.by_emit.get("MQ_DECLARE", []):
            if self.ctx.class_loaded(c["type"]["binary"]):
                names = self._text(self.role(c, "name"))
                decls[names[0] if names else c["member"]["name"]] = c
        for c in self.ctx.by_emit.get("MQ_BINDING", []):
            if not self.ctx.class_loaded(c["type"]["binary"]):
                continue
            parts: dict[str, ResolvedText] = {}
            for role in ("exchange", "queue", "routing_key"):
                outs = c.get("roles", {}).get(role, [])
                if not outs:
                    parts[role] = ResolvedText("RESOLVED", "") if role == "routing_key" else \
                        ResolvedText("UNKNOWN", None, expression=f"(no {role})", reason=f"no {role} argument")
                elif "ref" in outs[0]:
                    parts[role] = self._declared_name(outs[0], role, decls)
                else:
                    parts[role] = self.resolve(outs[0])
            m = c["member"]
            bad = next((p for p in parts.values() if p.value is None), None)
            if bad is not None:
                self.diag("TOPIC_UNRESOLVED", f"{m['stable']}|binding", f"AMQP binding {m['stable']}: "
                          f"{bad.expression} does not resolve ({bad.reason})", [m["rid"]], c)
                continue
            src_urn = f"amqp://{parts['exchange'].value}/{parts['routing_key'].value}"
            dst_urn = f"amqp-queue://{parts['queue'].value}"
            src = self._topic(src_urn, c, {"protocol": "amqp"})
            dst = self._topic(dst_urn, c, {"protocol": "amqp-queue"})
            basis = "DEFAULT_ONLY" if any(p.status == "DEFAULT_ONLY" for p in parts.values()) else "RESOLVED"
            self.rs.relation("BINDS_TO", src, src_urn, target_rid=dst, target_key=dst_urn, status="RESOLVED",
                             evidence=[self.cseg(c)], attributes={"protocol": "amqp", "binding_bean": m["stable"],
                                                                  "value_basis": basis})
            self._note_keys(m["rid"], m["stable"], list(parts.values()), c, "binding")

        self._dead_letter_routes()

    def _dead_letter_routes(self) -> None:
        """A queue declared with a dead-letter exchange (and routing key) forwards what expires or is
        rejected there: BINDS_TO from ``amqp-queue://{queue}`` to ``amqp://{exchange}/{key}``
        (``dead_letter``); without a key the message keeps its own (``keeps_routing_key``)."""
        for c in self.ctx.by_emit.get("MQ_DECLARE", []):
            if self.s.rules.by_id[c["rule"]].emits.protocol != "amqp-queue" or \
                    not self.ctx.class_loaded(c["type"]["binary"]) or not c.get("roles", {}).get("dead_letter_exchange"):
                continue
            m = c["member"]
            parts = {role: self.first(c, role) for role in ("queue", "dead_letter_exchange", "dead_letter_routing_key")}
            bad = next((p for role, p in parts.items() if (p is None and role != "dead_letter_routing_key") or
                        (p is not None and p.value is None)), None)
            if bad is not None or parts["queue"] is None or parts["dead_letter_exchange"] is None:
                self.diag("TOPIC_UNRESOLVED", f"{m['stable']}|dead-letter", f"AMQP queue {m['stable']}: its "
                          f"dead-letter route {bad.expression if bad else '(no queue name)'} does not resolve "
                          f"({bad.reason if bad else 'no queue name'})", [m["rid"]], c)
                continue
            key = parts["dead_letter_routing_key"]
            src_urn = f"amqp-queue://{parts['queue'].value}"
            dst_urn = f"amqp://{parts['dead_letter_exchange'].value}/{key.value if key else ''}"
            src = self._topic(src_urn, c, {"protocol": "amqp-queue"})
            dst = self._topic(dst_urn, c, {"protocol": "amqp"})
            known = [p for p in parts.values() if p is not None]
            attrs: dict[str, Any] = {"protocol": "amqp", "dead_letter": True, "queue_bean": m["stable"],
                                     "value_basis": "DEFAULT_ONLY" if any(p.status == "DEFAULT_ONLY" for p in known)
                                     else "RESOLVED"}
            if key is None:
                attrs["keeps_routing_key"] = True
            self.rs.relation("BINDS_TO", src, src_urn, target_rid=dst, target_key=dst_urn, status="RESOLVED",
                             evidence=[self.cseg(c)], attributes=attrs)
            self._note_keys(m["rid"], m["stable"], known, c, "dead-letter route")

    def _declared_name(self, ref: dict[str, Any], role: str, decls: dict[str, dict[str, Any]]) -> ResolvedText:
        """The queue or exchange name a bean reference stands for (by bean name, else the only
        declaration of the parameter's type)."""
        found = decls.get(ref["ref"])
        if found is None and ref.get("ref_kind") == "param":
            typed = [d for d in decls.values() if d["attrs"].get("bean_type") == ref.get("type")]
            found = typed[0] if len(typed) == 1 else None
        outs = found.get("roles", {}).get(role, []) if found else []
        if not outs or "ref" in outs[0]:
            return ResolvedText("UNKNOWN", None, expression=ref["ref"], reason=f"no {role} bean named {ref['ref']}")
        return self.resolve(outs[0])

    # ------------------------------------------------------------ config
    def config_keys(self) -> None:
        for c in self.ctx.by_emit.get("CONFIG_VALUE", []):
            rule = self.s.rules.by_id[c["rule"]]
            scheme = rule.emits.protocol or "config"
            rid, stable = self._consumer(c)
            outs = c.get("roles", {}).get("expression", []) + c.get("roles", {}).get("key", [])
            for o in outs:
                if "value" in o and scheme == "ducc" and DUCC_PREFIX not in o["value"]:
                    o = dict(o, value=ducc_placeholder(o["value"]), placeholders=True)
                rt = self.resolve(o)
                if rt.keys:
                    self.config_binding(rid, stable, rt, c, "@" + c["annotation"].rsplit(".", 1)[-1])
                elif rt.value is None:
                    self.stats.key_reads_failed += 1
                    d = self.diag("CONSTANT_UNRESOLVED", f"{stable}|value", f"{stable}: the config expression "
                                  f"{rt.expression} does not fold", [rid], c)
                    self.rs.relation("READS", rid, stable, target_rid=None, target_key="?" + (rt.expression or ""),
                                     status="UNRESOLVED", evidence=[self.cseg(c)], diagnostics=[d],
                                     match_keys={"key_expression": rt.expression, "scheme": scheme})
        for c in self.ctx.by_emit.get("CONFIG_PROPERTIES", []):
            if c["target"] != "TYPE":  # on a @Bean method: the built object's properties (sql/emit.py datasources)
                continue
            prefix = (self._text(self.role(c, "prefix")) or [""])[0]
            detail = c.get("type_detail", {})
            # a class the context makes as a component is bound through its setters: its final fields
            # are constructor-injected beans, never properties (constructor binding needs no component)
            component = any(b.kind == "COMPONENT" and b.type == c["type"]["binary"] for b in self.ctx.beans)
            for f in detail.get("fields", []):
                if "static" in f["modifiers"] or (component and "final" in f["modifiers"]):
                    continue
                key = canonical_key(f"{prefix}.{f['name']}" if prefix else f["name"])
                frid_stable = f"{c['type']['stable']}.{f['name']}"
                initial = f.get("initial")  # the field's initializer: the value when no source has the key
                if initial is not None and ("}" in initial or "${" in initial):
                    initial = None  # not expressible as a placeholder default
                rt = self.resolve({"value": "${" + key + (":" + initial if initial is not None else "") + "}",
                                   "vtype": "java.lang.String", "basis": "CONFIG", "placeholders": True})
                cf = dict(c, lines=f["lines"])
                self.config_binding(ids.entity_record_id("FIELD", frid_stable), frid_stable, rt, cf,
                                    "@ConfigurationProperties")
        for c in self.ctx.by_emit.get("CONFIG_READ", []):
            rule = self.s.rules.by_id[c["rule"]]
            scheme = rule.emits.protocol or "config"
            m = c["member"]
            keys = self.role(c, "key")
            defaults = self._text([self.resolve(o) for o in c.get("roles", {}).get("default", [])
                                   if o.get("vtype") == "java.lang.String"])  # getProperty(key, Class) has no default
            for k in keys:
                if k.value is None:
                    self.stats.key_reads_failed += 1
                    d = self.diag("CONFIG_VALUE_UNKNOWN", f"{c['call']['callsite_id']}|key", f"config key at "
                                  f"{c['path']}:{c['lines'][0]} is {k.expression}, which does not fold", [m["rid"]], c)
                    self.rs.relation("READS", m["rid"], m["stable"], target_rid=None, target_key="?" + (
                        k.expression or ""), status="UNRESOLVED", evidence=[self.cseg(c)], diagnostics=[d],
                        ordinal=c["call"]["ordinal"], callsite_id=c["call"]["callsite_id"],
                        match_keys={"key_expression": k.expression, "scheme": scheme})
                    continue
                default = defaults[0] if defaults else None
                placeholder = "${" + (DUCC_PREFIX if scheme == "ducc" else "") + k.value + (
                    ":" + default if default is not None else "") + "}"
                rt = self.resolve({"value": placeholder, "vtype": "java.lang.String", "basis": "CONFIG",
                                   "placeholders": True})
                self.config_binding(m["rid"], m["stable"], rt, c, c["call"]["name"])

    def _consumer(self, c: dict[str, Any]) -> tuple[str, str]:
        if c.get("field"):
            return c["field"]["rid"], c["field"]["stable"]
        if c.get("member"):
            return c["member"]["rid"], c["member"]["stable"]
        return c["type"]["rid"], c["type"]["stable"]

    # ------------------------------------------------------------ cache
    def cache_ops(self) -> None:
        for c in self.ctx.by_emit.get("CACHE_OP", []):
            rule = self.s.rules.by_id[c["rule"]]
            proto = rule.emits.protocol or "redis"
            access = rule.emits.access or "WRITE"
            m = c["member"]
            call = c["call"]
            raw_prefix = c.get("attrs", {}).get("key_prefix")
            keys = self.role(c, "key")
            full = keys[0] if keys else None
            head = self.resolve({"value": raw_prefix, "vtype": "java.lang.String", "basis": "PREFIX",
                                 "placeholders": "${" in raw_prefix}) if raw_prefix else None
            prefix = None
            if full is not None and full.value is not None:
                prefix, basis = full.value, "FULL_KEY"
            elif head is not None and head.value:
                prefix, basis = head.value, "PREFIX"
                full = head
            else:
                expr = full.expression if full else call["expression"]
                d = self.diag("CONSTANT_UNRESOLVED", f"{call['callsite_id']}|cache", f"{proto} key at {c['path']}:"
                              f"{c['lines'][0]} ({expr}) has no constant prefix", [m["rid"]], c)
                self.rs.relation("WRITES" if access == "WRITE" else "READS", m["rid"], m["stable"], target_rid=None,
                                 target_key="?" + (expr or ""), status="UNRESOLVED", evidence=[self.cseg(c)],
                                 diagnostics=[d], ordinal=call["ordinal"], callsite_id=call["callsite_id"],
                                 match_keys={"key_expression": expr, "protocol": proto},
                                 attributes={"operation": call["name"]})
                continue
            urn = f"{proto}://{prefix}"
            krid = self._topic(urn, c, {"protocol": proto}, kind="CACHE_KEY")
            self.rs.relation("WRITES" if access == "WRITE" else "READS", m["rid"], m["stable"], target_rid=krid,
                             target_key=urn, status="RESOLVED", evidence=[self.cseg(c)], ordinal=call["ordinal"],
                             callsite_id=call["callsite_id"],
                             attributes={"operation": call["name"], "key_basis": basis, "protocol": proto})
            if full is not None:
                self._note_keys(m["rid"], m["stable"], [full], c, "cache key")

    # ------------------------------------------------------------ jobs
    def jobs(self) -> None:
        conditions: dict[str, list[dict[str, Any]]] = {}
        for c in self.ctx.by_emit.get("CONDITION", []):
            conditions.setdefault(c["type"]["binary"], []).append(c)
        for c in self.ctx.by_emit.get("SCHEDULED", []) + self.ctx.by_emit.get("JOB_TYPE", []):
            rule = self.s.rules.by_id[c["rule"]]
            owner = c["type"]["binary"]
            if not self._live_handler_class(c):
                continue
            if c["target"] == "METHOD":
                handler = dict(c["member"], path=c["path"])
            else:
                handler = self._handler(owner, rule.emits.handler, c["module"])
                if handler is None:
                    self.entry_failed(f"{owner}|job", f"job class {owner} at {c['path']}:{c['lines'][0]}: no "
                                      f"{rule.emits.handler} method is declared in the package", [c["type"]["rid"]], c)
                    continue
            attrs: dict[str, Any] = {"scheduler": c["annotation"] if c["form"] == "annotation" else c["rule"]}
            for role in ("cron", "zone", "fixed_rate", "fixed_delay", "initial_delay", "job_name"):
                r = self.first(c, role)
                if r is not None:
                    attrs[role] = r.value
                    if r.status != "RESOLVED":
                        attrs[f"{role}_resolution"] = r.status
                        attrs[f"{role}_expression"] = r.expression
            attrs["disabled"] = attrs.get("cron") == "-"
            switches = []
            for cc in conditions.get(owner, []):
                for k in self._text(self.role(cc, "key")):
                    prefix = (self._text(self.role(cc, "prefix")) or [""])[0]
                    switches.append({"key": f"{prefix}.{k}" if prefix else k,
                                     "having_value": (self._text(self.role(cc, "value")) or [None])[0]})
            attrs["enable_switches"] = switches
            # the method FQN; a job class's inherited handler is named after the job class
            urn = f"{owner}#{handler['name']}" if c["target"] == "TYPE" else \
                handler["stable"].split("/", 1)[-1].split("(", 1)[0]
            erid = self._entry("SCHEDULED_JOB", urn, handler, c, attrs, rule.emits.kind)
            estable = self.rs.entities[erid]["stable_id"]
            for role in ("cron", "fixed_rate", "fixed_delay"):
                self._note_keys(erid, estable, self.role(c, role), c, role)
            for sw in switches:
                rt = self.resolve({"value": "${" + sw["key"] + "}", "vtype": "java.lang.String", "basis": "CONFIG",
                                   "placeholders": True})
                self.config_binding(erid, estable, rt, c, "enable switch")

    # ------------------------------------------------------------ events
    def events(self) -> None:
        for c in self.ctx.by_emit.get("EVENT_PUBLISH", []):
            m = c["member"]
            call = c["call"]
            etype = call.get("arg_types", {}).get("payload")
            if not etype or etype.startswith("?") or etype in GENERIC_EVENT_TYPES:
                d = self.diag("EVENT_TYPE_UNRESOLVED", f"{call['callsite_id']}|event", f"event published at "
                              f"{c['path']}:{c['lines'][0]} has no known type", [m["rid"]], c)
                attrs: dict[str, Any] = {"protocol": "event", "send_method": call["name"]}
                params = [p["name"] for p in m.get("params", [])]
                arg = c.get("attrs", {}).get("payload_name")
                if arg in params:  # a publishing helper: its callers' arguments have the event types
                    attrs["payload_parameter"] = params.index(arg)
                self.rs.relation("PUBLISHES", m["rid"], m["stable"], target_rid=None, target_key="?event",
                                 status="UNRESOLVED", evidence=[self.cseg(c)], diagnostics=[d],
                                 ordinal=call["ordinal"], callsite_id=call["callsite_id"],
                                 match_keys={"payload_expression": call["expression"]}, attributes=attrs)
                continue
            urn = f"event://{etype}"
            erid = self._topic(urn, c, {"protocol": "event"}, kind="EVENT")
            self.rs.relation("PUBLISHES", m["rid"], m["stable"], target_rid=erid, target_key=urn, status="RESOLVED",
                             evidence=[self.cseg(c)], ordinal=call["ordinal"], callsite_id=call["callsite_id"],
                             attributes={"protocol": "event"})
        for c in self.ctx.by_emit.get("EVENT_LISTENER", []):
            rule = self.s.rules.by_id[c["rule"]]
            owner = c["type"]["binary"]
            if not self._live_handler_class(c):
                continue
            if c["target"] == "METHOD":
                handler = dict(c["member"], path=c["path"])
                types = values(c, "classes") or [p["type"] for p in c["member"]["params"][:1]]
            else:
                handler = self._handler(owner, rule.emits.handler, c["module"])
                types = c.get("attrs", {}).get("type_args", [])[:1]
            if handler is None or not types:
                key, why = f"{owner}|listener|{c['lines'][0]}", ("no handler method in the package" if handler is None
                                                                  else "the event type is not known")
                if handler is not None:
                    self.diag("EVENT_TYPE_UNRESOLVED", key, f"event listener {owner} at {c['path']}:{c['lines'][0]}: "
                              f"{why}", [c["type"]["rid"]], c)
                self.entry_failed(key, f"event listener {owner} at {c['path']}:{c['lines'][0]}: {why}",
                                  [c["type"]["rid"]], c)
                continue
            for t in types:
                urn = f"event://{t}"
                entry = self._entry("EVENT_LISTENER", urn, handler, c, {"event_type": t}, "EVENT_LISTENER")
                erid = self._topic(urn, c, {"protocol": "event"}, kind="EVENT")
                self.rs.relation("SUBSCRIBES", entry, self.rs.entities[entry]["stable_id"], target_rid=erid,
                                 target_key=urn, status="RESOLVED", evidence=[self.cseg(c)],
                                 attributes={"protocol": "event"})

    # ------------------------------------------------------------ silent entries
    def entry_hints(self) -> None:
        """ENTRY_UNRESOLVED for a concrete class that looks like an entry and yields none: it implements
        a listener or handler interface an ENTRY_HINT type rule names, or carries an annotation whose
        name ends like a listener's (ENTRY_HINT annotation rule) from a package no rule knows. A class
        with an entry, or already diagnosed as an unresolved or unloaded entry, is left alone; a
        ``lib:`` package (no context) reports nothing — the services holding the class do."""
        if not self.ctx.deployed:
            return
        told: set[str] = set()
        for d in self.rs.diagnostics.values():
            if d["code"] in ("ENTRY_UNRESOLVED", "ENTRY_NOT_LOADED"):
                told.update(r.rid if hasattr(r, "rid") else r["record_id"] for r in d["affected_refs"])
        handled = {e["handler_ref"].rid for e in self.rs.entities.values()
                   if e.get("kind") == "ENTRY" and e.get("handler_ref") is not None}
        for c in sorted(self.ctx.by_emit.get("ENTRY_HINT", []), key=lambda c: (c["path"], c["lines"][0])):
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
            loaded = "" if self.ctx.class_loaded(t["binary"]) else " (its class is not loaded by the context)"
            rid = c["member"]["rid"] if c.get("member") else t["rid"]
            self.entry_failed(f"{where}|hint", f"{t['binary']} at {where} {what} but yields no entry{loaded}; "
                              f"{need} would make it one (docs/middleware.md §6)", [rid], c)
            told.add(t["rid"])

    # ------------------------------------------------------------ dynamic
    def dynamic_calls(self) -> None:
        for c in self.ctx.by_emit.get("DYNAMIC_CALL", []):
            m = c["member"]
            call = c["call"]
            names = self._text(self.role(c, "name"))
            d = self.diag("UNDETERMINED_DYNAMIC_EDGE", f"{call['callsite_id']}|dynamic", f"{call['expression']} at "
                          f"{c['path']}:{c['lines'][0]} chooses its target at run time", [m["rid"]], c)
            self.rs.relation("CALLS", m["rid"], m["stable"], target_rid=None, target_key="?" + call["expression"],
                             status="UNRESOLVED", evidence=[self.cseg(c)], diagnostics=[d], ordinal=call["ordinal"],
                             callsite_id=call["callsite_id"],
                             match_keys={"expression": call["expression"], "name": names[0] if names else None},
                             attributes={"dispatch_kind": "DYNAMIC", "declared_target": call["name"],
                                         "binding_evidence": None})


def _annotation_send(c: dict[str, Any]) -> dict[str, Any]:
    """The call-shaped facts of a send an annotation declares (a listener's ``@SendTo`` reply):
    its name, ordinal 0 and a call-site id of the annotated method."""
    name = "@" + c["annotation"].rsplit(".", 1)[-1]
    args = ", ".join(f"{k}={v}" for k, v in c.get("attrs", {}).get("annotation_args", {}).items())
    return {"name": name, "ordinal": 0, "callsite_id": f"{c['member']['stable']}@{name}", "arity": 0,
            "expression": f"{name}({args})", "arg_types": {}}


def _service_url(url: str, port: bool = False) -> tuple[str, str] | None:
    """``(host, path)`` of an absolute ``http(s)://host[:port]/path?query`` URL (query and
    fragment dropped; the port kept on the host when ``port``), or None."""
    m = re.match(r"^https?://([^/?#:]+)(:\d+)?([^?#]*)", url.strip())
    if m is None or not m.group(1):
        return None
    return m.group(1) + (m.group(2) or "" if port else ""), m.group(3) or "/"


def _stable_ordinal(text: str) -> int:
    from diting.ir.canonical import sha256_hex
    return int(sha256_hex(text)[:6], 16)


def _binding_ordinal(binding: dict[str, Any]) -> int:
    """Distinct relations for distinct bindings (one contract under two aliases gives two)."""
    if not any(binding.get(k) for k in ("alias", "group", "version")):
        return 0
    from diting.ir.canonical import sha256_hex
    key = "|".join(str(binding.get(k)) for k in ("alias", "group", "version"))
    return int(sha256_hex(key)[:6], 16)

