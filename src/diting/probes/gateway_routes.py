"""Gateway routes: Spring Cloud Gateway (config and Java DSL), Zuul, discovery locators (docs/middleware.md §2)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from diting.probes import gateway
from diting.probes.context import normalize_path

if TYPE_CHECKING:
    from diting.probes.matches import Candidate, ConfigCandidate, Handler, LambdaCall
    from diting.probes.context import ProbeContext


def gateway_routes(pc: "ProbeContext") -> None:
    """API gateway routes (docs/middleware.md §3, probes/gateway.py): each route of the gateway's
    configuration (``config`` rules, by dialect) or of a ``RouteLocator`` builder in code
    (``call`` rules) is a GATEWAY_ROUTE entry per incoming pattern, bound to the
    CONSUMED contract ``http://{target}{forwarded pattern}#{method}`` the graph aligns (a route
    whose uri does not fold is UNRESOLVED). The entry BINDS_TO that contract, as a consumer
    bean does (a route is no call site of the package's code). A discovery locator (every registered
    service routed by its id) is one entry with an UNDETERMINED_DYNAMIC_EDGE diagnostic."""
    if pc.plan.kind != "SERVICE" or pc.service_rid is None:
        return
    service = {"rid": pc.service_rid, "stable": pc.rs.entities[pc.service_rid]["stable_id"]}
    for rule in pc.s.rules.by_emit("GATEWAY_ROUTE"):
        if rule.match.config is None or pc.config is None:
            continue
        dialect = rule.emits.attributes.get("dialect")
        for prefix in rule.match.config.prefixes:
            if dialect == "discovery-locator":
                _discovery_locator(pc, rule.id, prefix, service)
                continue
            found = _config_routes(pc, rule.id, prefix) if dialect == "spring-cloud-gateway" else \
                _zuul_routes(pc, rule.id, prefix) if dialect == "zuul" else []
            for route, c in found:
                _gateway_route(pc, route, c, service, dialect)
    for c in pc.ctx.by_emit.get("GATEWAY_ROUTE", []):
        if c["form"] == "annotation":  # @EnableZuulProxy: Zuul's default route per service
            if pc.ctx.class_loaded(c["type"]["binary"]) and \
                    (c.get("emit_attrs") or {}).get("dialect") == "zuul-default":
                _zuul_default_routes(pc, c, service)
            continue
        m = c["member"]
        if not pc.ctx.class_loaded(c["type"]["binary"]):
            pc.exclude_entry(f"{c['call']['callsite_id']}|route", f"gateway route at {c['path']}:{c['lines'][0]}",
                               [m["rid"]], c)
            continue
        _gateway_route(pc, _java_route(pc, c), c, dict(m, path=c["path"]), "spring-cloud-gateway")


def _config_text(pc: "ProbeContext", entry: Any) -> tuple[str | None, str]:
    """A raw config value with its placeholders filled (None when one has no value)."""
    return (pc.config.expand(entry.value) if "${" in entry.value else entry.value), entry.value


def _config_cand(pc: "ProbeContext", rule_id: str, path: str, entries: list[Any]) -> ConfigCandidate:
    """A pseudo candidate (evidence: the config lines) for a route read from configuration."""
    return {"rule": rule_id, "emit": "GATEWAY_ROUTE", "form": "config", "path": path, "target": "CONFIG",
            "lines": [min(e.line for e in entries), max(max(e.end_line, e.line) for e in entries)]}


def _config_routes(pc: "ProbeContext", rule_id: str, prefix: str) -> list[tuple[gateway.Route, Candidate]]:
    """Spring Cloud Gateway routes of a ``routes`` list: predicates and filters in the shortcut
    form (``Path=/a/**,/b/**``) or the long form (``name: Path``, ``args: {pattern: …}``); the
    ``default-filters`` beside the list (shortcut form) apply to every route first."""
    out = []
    defaults = [f for f in (gateway.shortcut(_config_text(pc, e)[0] or e.value) for _, e in
                            pc.config.entries_of(prefix.rsplit(".", 1)[0] + ".default-filters"))
                if f[0] in gateway.PATH_FILTERS]  # shortcut form; they run before a route's own
    for n, (path, item) in enumerate(pc.config.list_items(prefix)):
        def listed(what: str) -> list[tuple[str, list[str]]]:
            got: dict[int, tuple[str, list[str]]] = {}
            for k in sorted(item):
                m = re.match(re.escape(what) + r"\[(\d+)\](.*)$", k)
                if m is None:
                    continue
                i, rest = int(m.group(1)), m.group(2)
                # Spring's binder keeps a placeholder it cannot fill as written: a RewritePath
                # replacement's ${group} (escaped $\{group} in YAML) reaches the filter as is
                text = _config_text(pc, item[k])[0] or (item[k].value if what == "filters" else "?")
                if rest == "":
                    got[i] = gateway.shortcut(text)
                elif rest == ".name":
                    got[i] = (text, got.get(i, ("", []))[1])
                elif rest.startswith(".args"):
                    name, args = got.get(i, ("", []))
                    got[i] = (name, args + gateway.split_args(text))
            return [got[i] for i in sorted(got)]
        preds = listed("predicates")
        uri, expr = _config_text(pc, item["uri"]) if "uri" in item else (None, "(no uri)")
        rid = item["id"].value if "id" in item else f"{prefix}[{n}]"
        route = gateway.Route(rid, [p for name, args in preds if name == "Path" for p in args],
                              uri, sorted({a.upper() for name, args in preds if name == "Method" for a in args}),
                              defaults + [f for f in listed("filters") if f[0] in gateway.PATH_FILTERS],
                              uri_expression=expr)
        if any(name == "Path" for name, _ in preds) and not route.patterns:
            route.patterns = ["?"]
        out.append((route, _config_cand(pc, rule_id, path, list(item.values()))))
    return out


def _zuul_routes(pc: "ProbeContext", rule_id: str, prefix: str) -> list[tuple[gateway.Route, Candidate]]:
    """Zuul routes of a ``zuul.routes`` map: ``NAME.path`` (or ``NAME: /path/**``), ``serviceId``
    (default: NAME), ``url``, ``strip-prefix`` (default true: the pattern's fixed prefix is
    dropped), under the global ``zuul.prefix`` / ``zuul.strip-prefix``."""
    root = prefix.rsplit(".", 1)[0]
    gprefix = pc.config.get(f"{root}.prefix")
    gstrip = pc.config.get(f"{root}.strip-prefix")
    out = []
    for element, raw in pc.config.map_keys(prefix):
        base = f"{prefix}.{element}"
        pv = pc.config.get(f"{base}.path")
        pv = pv if pv.entry is not None else pc.config.get(base)
        sid, url = pc.config.get(f"{base}.service-id"), pc.config.get(f"{base}.url")
        strip = pc.config.get(f"{base}.strip-prefix")
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
                    _config_cand(pc, rule_id, where or "", entries)))
    return out


def _java_route(pc: "ProbeContext", c: Candidate) -> gateway.Route:
    """A route built in code: the calls inside the lambda handed to ``route(…)`` (``path``,
    ``method``, ``uri``, and the ``filters`` lambda's ``stripPrefix`` / ``prefixPath`` /
    ``rewritePath`` / ``setPath``)."""
    def texts(call: LambdaCall) -> list[str | None]:
        if call["name"] in ("rewritePath", "setPath"):  # a Java literal's ${group} is no placeholder
            return [(o[0].get("value") if o else None) for o in call["args"]]
        return [(pc.resolve(o[0]).value if o else None) for o in call["args"]]
    ids_ = pc.texts(pc.role(c, "id"))
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


def _gateway_route(pc: "ProbeContext", route: gateway.Route, c: Candidate, handler: Handler, dialect: str) -> None:
    gw = pc.http_host
    for pattern in route.patterns or ["/**"]:
        if "?" == pattern or "${" in pattern:
            pc.entry_failed(f"{c['path']}:{c['lines'][0]}|route:{route.route_id}",
                              f"gateway route {route.route_id} at {c['path']}:{c['lines'][0]}: its path pattern does "
                              "not resolve, so it yields no entry", [handler["rid"]], c)
            continue
        incoming = normalize_path(pattern)
        for verb in route.methods or ["ANY"]:
            urn = f"http://{gw}{incoming}#{verb}"
            attrs = {"path": incoming, "http_method": verb, "route_id": route.route_id, "uri": route.uri,
                     "gateway": dialect}
            erid = pc.entry("GATEWAY_ROUTE", urn, handler, c, attrs, "GATEWAY_ROUTE")
            estable = pc.rs.entities[erid]["stable_id"]
            # the route binds its entry to what it forwards to (a BINDS_TO, as a consumer bean's; it is
            # no call site of the package's code)
            base = {"protocol": "http", "loaded": True, "gateway_route": route.route_id,
                    "binding_evidence": f"gateway route {route.route_id}"}
            if route.uri is None:
                d = pc.diag("CONFIG_VALUE_UNKNOWN" if "${" in (route.uri_expression or "") else "CONSTANT_UNRESOLVED",
                              f"{c['path']}:{c['lines'][0]}|route-uri:{route.route_id}",
                              f"gateway route {route.route_id} at {c['path']}:{c['lines'][0]}: uri "
                              f"{route.uri_expression} does not resolve", [erid], c)
                pc.rs.relation("BINDS_TO", erid, estable, target_rid=None,
                                 target_key="?" + (route.uri_expression or ""),
                                 status="UNRESOLVED", evidence=[pc.cseg(c)], diagnostics=[d],
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
                pc.diag("CONSTANT_UNRESOLVED", f"{c['path']}:{c['lines'][0]}|route-path:{route.route_id}",
                          f"gateway route {route.route_id} at {c['path']}:{c['lines'][0]}: the path it forwards "
                          f"for {incoming} is not known (filters {shown}); aligned to the service only",
                          [erid], c)
            target_urn = f"http://{host}{fwd or '/**'}#{verb}"
            crid, cstable = pc.contract("CONSUMED", target_urn, [], c, {
                "protocol": "http", "path": fwd or "/**", "http_method": verb, "loaded": True,
                "gateway_route": route.route_id, "route_pattern": incoming, "forward_known": fwd is not None,
                "uri": route.uri, "load_balanced": kind == "SERVICE"})
            pc.rs.relation("BINDS_TO", erid, estable, target_rid=crid, target_key=cstable, status="RESOLVED",
                             evidence=[pc.cseg(c)], attributes=dict(base, declared_target=target_urn))


def _discovery_locator(pc: "ProbeContext", rule_id: str, key: str, service: Handler) -> None:
    rv = pc.config.get(key)
    if rv.status != "RESOLVED" or (rv.value or "").strip().lower() != "true" or rv.entry is None:
        return
    c = _config_cand(pc, rule_id, rv.path or "", [rv.entry])
    _every_service_route(pc, c, service, "discovery-locator", "/{}/**",
                              f"{key} = true at {rv.path}:{rv.entry.line}", f"{rv.path}:{rv.entry.line}")


def _zuul_default_routes(pc: "ProbeContext", c: Candidate, service: Handler) -> None:
    """``@EnableZuulProxy``: Zuul routes ``/{service-id}/**`` (under ``zuul.prefix``) to every
    service discovery knows, unless ``zuul.ignored-services`` is ``*`` — one entry, as the
    discovery locator's."""
    ignored = pc.config.get("zuul.ignored-services") if pc.config is not None else None
    if ignored is not None and (ignored.value or "").strip().strip("'\"") == "*":
        return
    prefix = pc.config.get("zuul.prefix").value if pc.config is not None else None
    pattern = normalize_path(("/" + prefix.strip("/") if prefix and prefix.strip("/") else "") + "/{}/**")
    _every_service_route(pc, c, service, "zuul-default", pattern,
                              f"@EnableZuulProxy at {c['path']}:{c['lines'][0]}, zuul.ignored-services not *",
                              f"{c['path']}:{c['lines'][0]}")


def _every_service_route(pc: "ProbeContext", c: Candidate, service: Handler, route_id: str, pattern: str,
                         why: str, where: str) -> None:
    """One GATEWAY_ROUTE entry for a gateway that routes every registered service by its id, with
    an UNDETERMINED_DYNAMIC_EDGE diagnostic (the services are known only at runtime)."""
    urn = f"http://{pc.http_host}{pattern}#ANY"
    erid = pc.entry("GATEWAY_ROUTE", urn, service, c, {"path": pattern, "http_method": "ANY",
                                                          "route_id": route_id, "gateway": route_id},
                       "GATEWAY_ROUTE")
    pc.diag("UNDETERMINED_DYNAMIC_EDGE", f"{where}|{route_id}",
              f"{pc.plan.service_id} routes {pattern.replace('{}', '{service-id}')} to every service "
              f"registered with discovery ({why}); which services those are is decided at runtime, "
              "so no edge is drawn", [erid], c)
