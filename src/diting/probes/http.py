"""HTTP endpoints and routes, Feign clients and HTTP client calls (docs/middleware.md §2)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from diting.probes.context import normalize_path, stable_ordinal
from diting.probes.resolved import ResolvedText
from diting.resolve.fold import REQUEST_ENTITY

if TYPE_CHECKING:
    from diting.probes.matches import Candidate, FieldRef, MemberInfo
    from diting.probes.context import ProbeContext


_HTTP_METHODS = ("GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS", "TRACE")


def _service_url(url: str, port: bool = False) -> tuple[str, str] | None:
    """``(host, path)`` of an absolute ``http(s)://host[:port]/path?query`` URL (query and
    fragment dropped; the port kept on the host when ``port``), or None."""
    m = re.match(r"^https?://([^/?#:]+)(:\d+)?([^?#]*)", url.strip())
    if m is None or not m.group(1):
        return None
    return m.group(1) + (m.group(2) or "" if port else ""), m.group(3) or "/"


def http_endpoints(pc: "ProbeContext") -> None:
    cls, meth = _type_mappings(pc)
    cpath = context_path(pc)
    for binary in sorted({c["type"]["binary"] for c in pc.ctx.by_emit.get("HTTP_CONTROLLER", [])}):
        loaded = pc.ctx.class_loaded(binary)
        for mc, fulls, verbs, bad, read in _http_routes(pc, binary, cls, meth):
            m = mc["member"]
            if not loaded:
                pc.exclude_entry(f"{m['stable']}|http", f"HTTP handler {m['stable']}", [m["rid"]], mc)
                continue
            if bad is not None:
                _unfolded_path(pc, mc, bad, "HTTP mapping", m["rid"], m["stable"])
                pc.entry_failed(f"{m['stable']}|http", f"HTTP handler {m['stable']}: its path "
                                  f"{bad.expression} does not resolve, so it yields no endpoint", [m["rid"]], mc)
                continue
            pc.note_keys(m["rid"], m["stable"], read, mc, "mapping path")
            for p in fulls:
                full = normalize_path(cpath + "/" + p)
                for verb in verbs:
                    urn = f"http://{pc.http_host}{full}#{verb}"
                    crid, cstable = pc.contract("PROVIDED", urn, m["signature"], mc, {
                        "protocol": "http", "path": full, "http_method": verb, "loaded": True,
                        "context_path": cpath or None})
                    pc.rs.relation("EXPOSES", m["rid"], m["stable"], target_rid=crid, target_key=cstable,
                                     status="RESOLVED", evidence=[pc.cseg(mc)],
                                     ordinal=stable_ordinal(binary),
                                     attributes={"protocol": "http", "path": full, "http_method": verb,
                                                 "controller": binary})
                    pc.entry("HTTP_ENDPOINT", urn, dict(m, path=mc["path"]), mc,
                                {"path": full, "http_method": verb, "controller": binary}, "HTTP_MAPPING")


def http_routes(pc: "ProbeContext") -> None:
    """Functional endpoints (HTTP_ROUTE rules: ``RouterFunctions.route()`` builders and
    ``route(GET("/x"), h)``, WebFlux and Web MVC): each verb route of the chain is an
    HTTP_ENDPOINT entry of the method building the router, and a PROVIDED contract
    ``http://{service}{context path}{path}#{VERB}``. A path that does not fold, and a call of the
    chain the engine does not read (``nest``, ``path(prefix, builder)``, ``add``), make an
    ENTRY_UNRESOLVED diagnostic: the router's other routes are still recorded."""
    cpath = context_path(pc)
    for c in pc.ctx.by_emit.get("HTTP_ROUTE", []):
        rule = pc.s.rules.by_id[c["rule"]]
        m = c["member"]
        binary = c["type"]["binary"]
        if not pc.ctx.class_loaded(binary):
            pc.exclude_entry(f"{m['stable']}|route", f"functional router {m['stable']}", [m["rid"]], c)
            continue
        unread = set(rule.emits.attributes.get("unread_methods", []))
        for item in c.get("attrs", {}).get("route_calls", []):
            where = f"{c['path']}:{item['line']}"
            if item["name"] in unread:
                pc.entry_failed(f"{where}|route:{item['name']}", f"functional router at {where}: "
                                  f"{item['name']}(…) nests routes diting does not read", [m["rid"]], c)
                continue
            if "verb" not in item:
                continue
            rt = pc.resolve(item["path"][0]) if item["path"] else None
            if rt is None or rt.value is None:
                bad = rt or ResolvedText("UNKNOWN", None, expression="(no path)", reason="no path argument")
                _unfolded_path(pc, dict(c, lines=[item["line"], item["line"]]), bad, "functional route",
                                    m["rid"], m["stable"])
                pc.entry_failed(f"{where}|route", f"functional route at {where}: its path {bad.expression} "
                                  "does not resolve, so it yields no endpoint", [m["rid"]], c)
                continue
            pc.note_keys(m["rid"], m["stable"], [rt], c, "route path")
            full = normalize_path(cpath + "/" + rt.value)
            verb = item["verb"]
            urn = f"http://{pc.plan.service_id}{full}#{verb}"
            crid, cstable = pc.contract("PROVIDED", urn, m["signature"], c, {
                "protocol": "http", "path": full, "http_method": verb, "loaded": True,
                "context_path": cpath or None, "router": binary})
            pc.rs.relation("EXPOSES", m["rid"], m["stable"], target_rid=crid, target_key=cstable,
                             status="RESOLVED", evidence=[pc.seg(c["path"], item["line"], item["line"])],
                             ordinal=stable_ordinal(urn),
                             attributes={"protocol": "http", "path": full, "http_method": verb, "router": binary})
            pc.entry("HTTP_ENDPOINT", urn, dict(m, path=c["path"]), c,
                        {"path": full, "http_method": verb, "router": binary}, "HTTP_ROUTE")


def feign_clients(pc: "ProbeContext") -> None:
    cls, meth = _type_mappings(pc)
    for c in pc.ctx.by_emit.get("FEIGN_CLIENT", []):
        owner = c["type"]["binary"]
        bean = next((b for b in pc.ctx.beans if b.cand is c), None)
        if bean is None or not bean.loaded:
            pc.stats.consumers_not_loaded += 1  # kept as its bean (loaded = false), no contract
            continue
        bean_rid = pc.bean_rids[id(bean)]
        bean_stable = pc.rs.entities[bean_rid]["stable_id"]
        names = pc.role(c, "service_name")
        name = names[0] if names else None
        url = pc.first(c, "url")
        base = pc.first(c, "path")
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
            pc.note_keys(bean_rid, bean_stable, [name], c, "feign name")
        calls: dict[tuple[str, int], list[Candidate]] = {}
        for f, res in pc.injected.items():
            if res.status == "RESOLVED" and res.beans[0] is bean:
                for fc in pc.field_calls.get(f, []):
                    calls.setdefault((fc["method"], fc["arity"]), []).append(fc)
        if not calls:
            pc.stats.declared_unused += 1
            pc.diag("DECLARED_UNUSED", f"{owner}|feign", f"Feign client {owner} is loaded but never called",
                      [bean_rid], c)
            continue
        routes = _http_routes(pc, owner, cls, meth)
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
                    _feign_sites(pc, c, owner, m, mc, fulls, verbs, bad, sites, name, base, url,
                                      bean_rid, bean_stable, relative)


def http_client_calls(pc: "ProbeContext") -> None:
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
    lb_methods = {c["member"]["stable"] for c in pc.ctx.by_emit.get("LOAD_BALANCED", []) if c["target"] == "METHOD"}
    lb_fields = {(c["type"]["binary"], c["field"]["name"]) for c in pc.ctx.by_emit.get("LOAD_BALANCED", [])
                 if c["target"] == "FIELD"}
    for c in pc.ctx.by_emit.get("HTTP_CLIENT_CALL", []):
        call = c["call"]
        m = c["member"]
        balanced = any(_balanced(pc, r, lb_fields, lb_methods) for r in
                       (call.get("receiver"), call.get("receiver_root")) if r)
        url = pc.first(c, "url")
        verb = _client_verb(pc, c)
        # a load-balancer resolves the host alone; a plain client's port says it is an address
        parsed = _service_url(url.value, port=not balanced) if url is not None and url.value is not None else None
        if parsed is None or "{" in parsed[0]:
            # a relative URL (the base is a builder's baseUrl / rootUri set elsewhere) names no host either
            relative = url is not None and url.value is not None and parsed is None
            expr = url.expression if url and url.value is None else (url.value if url else call["expression"])
            # a plain client's URL that does not fold is still a remote call: UNRESOLVED, not silence
            d = pc.diag("CONSTANT_UNRESOLVED" if not (url and url.keys) else "CONFIG_VALUE_UNKNOWN",
                          f"{call['callsite_id']}|url", f"{'load-balanced' if balanced else 'plain'} HTTP call "
                          f"({call['receiver_type'] or 'client'}) at {c['path']}:{c['lines'][0]}: URL {expr} "
                          + ("is relative (its base is set on the client elsewhere)" if relative else
                             f"does not fold to {'a service' if balanced else 'a host'}"), [m["rid"]], c)
            pc.rs.relation("CALLS", m["rid"], m["stable"], target_rid=None, target_key="?" + (expr or ""),
                             status="UNRESOLVED", evidence=[pc.cseg(c)], diagnostics=[d],
                             ordinal=call["ordinal"], callsite_id=call["callsite_id"],
                             match_keys={"url_expression": expr, "http_method": verb},
                             attributes={"dispatch_kind": "RPC", "protocol": "http", "declared_target": None,
                                         "load_balanced": balanced, "binding_evidence":
                                         "load-balanced client" if balanced else
                                         (call["receiver_type"] or "client")})
            if url is not None:
                pc.note_keys(m["rid"], m["stable"], [url], c, "HTTP URL")
            continue
        host, path = parsed
        urn = f"http://{host}{normalize_path(path)}#{verb}"
        # a call in a class the context does not load (a shared library's component outside the
        # scan) consumes nothing at run time: its contract says so and the graph does not align it
        crid, cstable = pc.contract("CONSUMED", urn, [], c, {"protocol": "http", "path": normalize_path(path),
                                                                 "http_method": verb,
                                                                 "loaded": pc.ctx.class_loaded(c["type"]["binary"]),
                                                                 "client": call["receiver_type"],
                                                                 "load_balanced": balanced,
                                                                 "value_basis": url.status,
                                                                 "fold_basis": c["roles"]["url"][0].get("basis")})
        pc.rs.relation("CALLS", m["rid"], m["stable"], target_rid=crid, target_key=cstable, status="RESOLVED",
                         evidence=[pc.cseg(c)], ordinal=call["ordinal"], callsite_id=call["callsite_id"],
                         attributes={"dispatch_kind": "RPC", "protocol": "http", "declared_target": urn,
                                     "binding_evidence": ("load-balanced " if balanced else "") +
                                     (call["receiver_type"] or "client"),
                                     "load_balanced": balanced, "value_basis": url.status})
        pc.note_keys(m["rid"], m["stable"], [url], c, "HTTP URL")


def _verbs(pc: "ProbeContext", c: Candidate) -> list[str]:
    rule = pc.s.rules.by_id[c["rule"]]
    if rule.emits.http_method:
        return [rule.emits.http_method]
    verbs = [v.rsplit(".", 1)[-1].upper() for v in pc.texts(pc.role(c, "http_method"))]
    return sorted({v for v in verbs if v in _HTTP_METHODS}) or ["ANY"]


def _paths(pc: "ProbeContext", c: Candidate) -> tuple[list[str], ResolvedText | None]:
    """A mapping's folded paths (``[""]`` when it names none) and its first path that does
    not fold (then the mapping gives no contract)."""
    rts = pc.role(c, "path")
    bad = next((r for r in rts if r.value is None), None)
    return ([r.value for r in rts if r.value is not None] if rts else [""]), bad


def _type_mappings(pc: "ProbeContext") -> tuple[dict[str, list[Candidate]], dict[str, list[Candidate]]]:
    """HTTP_MAPPING candidates by declaring type: (class-level, method-level)."""
    cls: dict[str, list[Candidate]] = {}
    meth: dict[str, list[Candidate]] = {}
    for c in pc.ctx.by_emit.get("HTTP_MAPPING", []):
        if c["target"] not in ("TYPE", "METHOD"):  # a rule without targets matched a field or a parameter
            pc.entry_failed(f"{c['path']}:{c['lines'][0]}|mapping", f"rule {c['rule']} matched a {c['target']} at "
                            f"{c['path']}:{c['lines'][0]}; an HTTP mapping is a class or a method", [pc.owner_rid(c)], c)
            continue
        (cls if c["target"] == "TYPE" else meth).setdefault(c["type"]["binary"], []).append(c)
    return cls, meth


def _lineage(pc: "ProbeContext", binary: str, near: str | None = None) -> list[str]:
    """A type and its in-package supertypes, nearest first."""
    module = pc.ctx.home(binary, near)
    return [binary] + ([b for _, b in pc.s.oracle.registry.ancestors(module, binary)] if module else [])


def _http_routes(pc: "ProbeContext", binary: str, cls: dict[str, list[Candidate]],
                 meth: dict[str, list[Candidate]]) -> list[tuple[Candidate, list[str], list[str],
                                                                      ResolvedText | None, list[ResolvedText]]]:
    """Mapped methods of a controller or Feign interface, its own or inherited (an API
    interface it implements): ``(method candidate, full paths without context, verbs, the
    first path that does not fold, the path values read)``. The class-level prefix is the
    nearest one declared."""
    lineage = _lineage(pc, binary)
    prefix_cands = next((cls[b] for b in lineage if b in cls), [])
    prefixes: list[str] = [""]
    pbad = None
    if prefix_cands:
        prefixes, pbad = _paths(pc, prefix_cands[0])
    out = []
    seen: set[tuple[str, tuple[str, ...]]] = set()
    for b in lineage:
        for mc in meth.get(b, []):
            key = (mc["member"]["name"], tuple(mc["member"]["signature"]))  # overloads are distinct
            if key in seen:
                continue
            seen.add(key)
            paths, bad = _paths(pc, mc)
            full = [pre + "/" + p for pre in prefixes for p in paths]
            read = pc.role(mc, "path") + (pc.role(prefix_cands[0], "path") if prefix_cands else [])
            out.append((mc, full, _verbs(pc, mc), bad or pbad, read))
    return out


def context_path(pc: "ProbeContext") -> str:
    """The prefix of every handler path: the servlet context path (``server.servlet.context-path``,
    Boot 1's ``server.context-path``), then the DispatcherServlet's path (``spring.mvc.servlet.path``,
    Boot 1's ``server.servlet-path``) — each from the config snapshot first, then the files."""
    parts = []
    for keys in (("server.servlet.context-path", "server.context-path"),
                 ("spring.mvc.servlet.path", "server.servlet-path")):
        for key in keys:
            got = pc.lookup("config", key)
            value = (got.value or "").strip().removesuffix("/*") if got.status == "RESOLVED" else ""
            if value:
                parts.append(value)
                break
    joined = normalize_path("/".join(parts)) if parts else ""
    return "" if joined == "/" else joined


def _unfolded_path(pc: "ProbeContext", c: Candidate, bad: ResolvedText, what: str, owner_rid: str, owner_stable: str) -> str:
    code = "CONFIG_VALUE_UNKNOWN" if bad.keys else "CONSTANT_UNRESOLVED"
    d = pc.diag(code, f"{c['path']}:{c['lines'][0]}|path", f"{what} at {c['path']}:{c['lines'][0]}: path "
                  f"{bad.expression} does not resolve ({bad.reason})", [owner_rid], c)
    pc.note_keys(owner_rid, owner_stable, [bad], c, "mapping path")
    return d


def _feign_sites(pc: "ProbeContext", c: Candidate, owner: str, m: MemberInfo, mc: Candidate, fulls: list[str],
                 verbs: list[str], bad: ResolvedText | None, sites: list[Candidate], name: Any, base: Any,
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
        d = _unfolded_path(pc, c, unresolved, f"Feign client {owner}", bean_rid, bean_stable)
        for fc in sites:
            pc.rs.relation("CALLS", fc["member"]["rid"], fc["member"]["stable"], target_rid=None,
                             target_key=f"?{owner}#{m['name']}", status="UNRESOLVED",
                             evidence=[pc.seg(fc["path"], *fc["lines"])], diagnostics=[d],
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
        own, _ = _paths(pc, mc)
        fulls = [p if p.startswith("/") else (base.value if base else "") + "/" + p for p in own]
    for p in fulls:
        full = normalize_path(p if relative else (base.value if base else "") + "/" + p)
        for verb in verbs:
            urn = f"http://{name.value}{full}#{verb}"
            attrs = {"protocol": "http", "path": full, "http_method": verb, "loaded": True,
                     "feign_client": owner, "url": url.value if url else None,
                     "value_basis": name.status}
            crid, cstable = pc.contract("CONSUMED", urn, m["signature"], mc, attrs)
            pc.rs.relation("BINDS_TO", bean_rid, bean_stable, target_rid=crid, target_key=cstable,
                             status="RESOLVED", evidence=[pc.cseg(c)],
                             attributes={"protocol": "http", "value_basis": name.status})
            for fc in sites:
                pc.rs.relation("CALLS", fc["member"]["rid"], fc["member"]["stable"],
                                 target_rid=crid, target_key=cstable, status="RESOLVED",
                                 evidence=[pc.seg(fc["path"], *fc["lines"])], ordinal=fc["ordinal"],
                                 callsite_id=fc["callsite_id"],
                                 attributes={"dispatch_kind": "RPC", "declared_target": urn,
                                             "binding_evidence": "Feign client " + owner,
                                             "value_basis": name.status})


def _balanced(pc: "ProbeContext", recv: FieldRef, lb_fields: set[tuple[str, str]], lb_methods: set[str]) -> bool:
    """Whether the field a client call starts from is load-balanced: annotated itself, or
    injected with the bean of an annotated @Bean method."""
    key = (recv["binary"], recv["field"])
    res = pc.injected.get(key)
    return key in lb_fields or (res is not None and res.status == "RESOLVED" and
                                res.beans[0].cand.get("member", {}).get("stable") in lb_methods)


def _client_verb(pc: "ProbeContext", c: Candidate) -> str:
    rule = pc.s.rules.by_id[c["rule"]]
    if rule.emits.http_method:
        return rule.emits.http_method
    vtype = str(((c.get("roles") or {}).get("url") or [{}])[0].get("vtype") or "")
    if vtype.startswith(REQUEST_ENTITY + "#"):  # exchange(RequestEntity.post(uri)…): the entity's verb
        return vtype.rsplit("#", 1)[1]
    named = [v.rsplit(".", 1)[-1].upper() for v in pc.texts(pc.role(c, "http_method"))]
    if named and named[0] in _HTTP_METHODS:
        return named[0]
    call = c["call"]
    named = [pc.resolve(o).value for o in (call.get("receiver_call") or {}).get("http_method", [])]
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
