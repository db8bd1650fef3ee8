"""The HTTP rule (docs/alignment.md §5): calls matched to endpoints by service id, path and method; gateway
routes to the endpoints they forward to; remote calls the scan could not fold."""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

from diting.graph.align_rows import (CONSUMERS, CONTRACT_BINDINGS, Finding, Row, SERVICES, UNRESOLVED_REMOTE,
                                     attrs_of, fetch, protocol_of, protocols, row_ref)


_URN = re.compile(r"^http://(?P<host>[^/#]*)(?P<path>[^#]*)#(?P<method>[A-Z]+)$")
_ADDRESS = re.compile(r"^(\d{1,3}(\.\d{1,3}){3}|\[[0-9a-fA-F:]+\])(:\d+)?$|:\d+$|\.|^localhost$", re.I)

_SERVICE_ENTITIES = f"""
SELECT e.scan_id, e.record_id FROM entities e JOIN ({SERVICES}) s ON s.scan_id = e.scan_id
WHERE e.kind = 'SERVICE' ORDER BY 1, 2"""


def split_http_urn(urn: str) -> tuple[str, str, str] | None:
    """``http://{service}{path}#{METHOD}`` → (service, path, method); None when it is not one."""
    m = _URN.match(urn or "")
    if not m:
        return None
    return m["host"], m["path"] or "/", m["method"]


def methods_compatible(a: str, b: str) -> bool:
    """Equal, or either side a mapping without a method (``ANY``)."""
    return a == b or a == "ANY" or b == "ANY"


#: gateway routes (GATEWAY_ROUTE entries): a call to the gateway's service matches their incoming pattern
_ROUTE_ENTRIES = f"""
SELECT e.scan_id, e.record_id, e.urn, e.attributes->>'gateway' IN ('discovery-locator', 'zuul-default') AS dynamic
FROM entities e JOIN ({SERVICES}) s ON s.scan_id = e.scan_id
WHERE e.kind = 'ENTRY' AND e.entry_kind = 'GATEWAY_ROUTE' AND e.urn IS NOT NULL ORDER BY 1, 2"""

_COLLIDED = f"""
SELECT s.service_id, s.scan_id, e.attributes FROM entities e JOIN ({SERVICES}) s ON s.scan_id = e.scan_id
WHERE e.kind = 'SERVICE' AND e.attributes->'service_id_basis'->>'collided_with' IS NOT NULL ORDER BY 1, 2"""


def _segments(path: str) -> list[str]:
    return [s for s in path.split("/") if s]


def _segment_match(a: str, b: str) -> bool:
    """One path segment against another: equal, or either a hole ``{}`` (a segment holding a hole,
    ``v{}``, matches as a glob), or a ``*`` glob of a route pattern."""
    if a == b or a in ("{}", "*") or b == "{}":
        return True
    for pat, text in ((a, b), (b, a)):
        if "{}" in pat or "*" in pat:
            rx = re.escape(pat).replace(r"\{\}", "[^/]*").replace(r"\*", "[^/]*")
            if re.fullmatch(rx, text):
                return True
    return False


def paths_match(consumer: str, provider: str) -> bool:
    """A consumer's path template against an endpoint path: segment by segment, a hole ``{}``
    matching one segment on either side; a query string is dropped (docs/alignment.md §5)."""
    cs, ps = _segments(consumer.split("?", 1)[0]), _segments(provider)
    if cs and all(c == "{}" for c in cs) and not all(p == "{}" for p in ps):
        return False  # a path that is holes only (the URL's path did not fold) names no endpoint
    return len(cs) == len(ps) and all(_segment_match(c, p) for c, p in zip(cs, ps))


def _specificity(consumer: str, provider: str) -> int:
    """How many segments of a matched pair are equal as written (holes included)."""
    return sum(c == p for c, p in zip(_segments(consumer.split("?", 1)[0]), _segments(provider)))


def path_covers(pattern: str, path: str) -> bool:
    """Whether a gateway's forwarded path pattern admits an endpoint path: as :func:`paths_match`,
    a last ``**`` admitting any rest (none included)."""
    ps, es = _segments(pattern), _segments(path)
    for i, p in enumerate(ps):
        if p == "**":
            return True
        if i >= len(es) or not _segment_match(p, es[i]):
            return False
    return len(ps) == len(es)


def align_http(con) -> tuple[list[Row], list[Finding]]:
    """The HTTP rule over Feign / load-balanced consumer bindings and HTTP endpoints."""
    services = _services(con)
    service_rids = {scan: rid for scan, rid in con.execute(_SERVICE_ENTITIES).fetchall()}
    http = protocols(con).of("HTTP")
    endpoints = _http_endpoints(con, http)
    routes = _gateway_routes(con)
    rows: list[Row] = []
    findings: list[Finding] = []
    for c in fetch(con, CONSUMERS):
        if protocol_of(c) not in http:
            continue
        got_rows, got_findings = _consumer_alignment(c, services, endpoints, routes, service_rids)
        rows.extend(got_rows)
        findings.extend(got_findings)
    return rows, findings


#: where an alignment row starts: (service_id, scan), the consumer binding's ref, the contract's ref
_Origin = tuple[tuple[str, str], dict[str, str], dict[str, str]]
#: a gateway route entry: (record_id, incoming pattern, method, dynamic)
_Route = tuple[str, str, str, bool]


def _services(con) -> dict[str, list[tuple[str, str]]]:
    """Folded service id → the packages ``(service_id, scan)`` a call to it reaches; deployables that
    collided on one name (renamed ``{name}~…``) are each still that name to a caller."""
    services: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for sid, scan in con.execute(f"SELECT service_id, scan_id FROM ({SERVICES}) ORDER BY 1, 2").fetchall():
        services[sid.lower()].append((sid, scan))
    for sid, scan, attrs in con.execute(_COLLIDED).fetchall():
        name = str(attrs_of(attrs).get("service_id_basis", {}).get("collided_with") or "")
        if name and name.lower() != sid.lower() and (sid, scan) not in services[name.lower()]:
            services[name.lower()].append((sid, scan))
    return services


def _http_endpoints(con, http: frozenset[str]) -> dict[str, list[dict[str, Any]]]:
    """Scan → the HTTP contracts it provides (EXPOSES bindings)."""
    endpoints: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for p in fetch(con, CONTRACT_BINDINGS.format(kind="EXPOSES", role="PROVIDED")):
        if protocol_of(p) in http:
            endpoints[p["scan_id"]].append(p)
    return endpoints


def _gateway_routes(con) -> dict[str, list[_Route]]:
    """Scan → its gateway routes; a route to every registered service is dynamic."""
    routes: dict[str, list[_Route]] = defaultdict(list)
    for scan, rid, urn, dynamic in con.execute(_ROUTE_ENTRIES).fetchall():
        if (rp := split_http_urn(urn)) is not None:
            routes[scan].append((rid, rp[1], rp[2], bool(dynamic)))
    return routes


def _consumer_alignment(c: dict[str, Any], services: dict[str, list[tuple[str, str]]],
                        endpoints: dict[str, list[dict[str, Any]]], routes: dict[str, list[_Route]],
                        service_rids: dict[str, str]) -> tuple[list[Row], list[Finding]]:
    """One HTTP consumer's rows: a fixed URL is not aligned; a gateway route goes to the service it
    forwards to; else the endpoints of the service id that match path and method, else the gateway
    routes of that service that admit the path, else UNRESOLVED."""
    origin: _Origin = ((c["service_id"], c["scan_id"]), row_ref(c["scan_id"], c["rel_id"]),
                       row_ref(c["scan_id"], c["contract_id"]))
    parts = split_http_urn(c["urn"])
    cattrs = attrs_of(c["contract_attrs"])
    balanced = cattrs.get("load_balanced") is not False
    if parts is not None and not balanced and not cattrs.get("url") and not services.get(parts[0].lower()):
        cattrs = dict(cattrs, url=f"http://{parts[0]}")  # a plain client's host that names no service
    if parts is None or cattrs.get("url") or _ADDRESS.search(parts[0]):
        return _fixed_url(c, origin, cattrs, parts)
    host, path, method = parts
    keys = {"service": host, "path": path, "method": method}
    pkgs = services.get(host.lower(), [])
    if cattrs.get("gateway_route") is not None and pkgs:
        return _route_rows(c, *origin, pkgs, endpoints, service_rids, cattrs, path, method), []
    found = _matching_endpoints(pkgs, endpoints, path, method)
    if found:
        return _endpoint_rows(c, origin, pkgs, found, balanced), []
    via = _covering_routes(pkgs, routes, path, method)
    if via:
        return _route_entry_rows(c, origin, via, keys), []
    return _no_endpoint(c, origin, pkgs, keys)


def _fixed_url(c: dict[str, Any], origin: _Origin, cattrs: dict[str, Any],
               parts: tuple[str, str, str] | None) -> tuple[list[Row], list[Finding]]:
    """A call by a fixed URL (or an address for a host): an UNRESOLVED URL_ONLY row and its finding."""
    src, src_ref, node = origin
    keys = {"urn": c["urn"], "url": cattrs.get("url")}
    row = Row("HTTP", c["urn"], src, src_ref, node, None, None, None, "UNRESOLVED", "URL_ONLY", [], keys)
    finding = Finding("UNRESOLVED_CALL", c["service_id"], c["urn"], "UNRESOLVED", [src_ref], [],
                      f"{c['service_id']} calls {c['urn']} by a fixed URL "
                      f"{cattrs.get('url') or parts and parts[0]}; URLs are not aligned")
    return [row], [finding]


def _matching_endpoints(pkgs: list[tuple[str, str]], endpoints: dict[str, list[dict[str, Any]]], path: str,
                        method: str) -> list[tuple[str, str, dict[str, Any]]]:
    """The endpoints of the service's packages whose path and method match the call's: as Spring
    MVC, only the most specific mappings (most segments equal as written)."""
    found: list[tuple[str, str, dict[str, Any]]] = []
    for sid, scan in pkgs:
        for p in endpoints.get(scan, []):
            pp = split_http_urn(p["urn"])
            if pp and paths_match(path, pp[1]) and methods_compatible(method, pp[2]):
                found.append((sid, scan, p))
    if found:
        best = max(_specificity(path, split_http_urn(p["urn"])[1]) for _, _, p in found)
        found = [f for f in found if _specificity(path, split_http_urn(f[2]["urn"])[1]) == best]
    return found


def _endpoint_rows(c: dict[str, Any], origin: _Origin, pkgs: list[tuple[str, str]],
                   found: list[tuple[str, str, dict[str, Any]]], balanced: bool) -> list[Row]:
    """A row per matched endpoint (one however many handlers expose it): RESOLVED when there is one
    and one package of its service id serves it, else AMBIGUOUS."""
    targets: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    for sid, scan, p in found:
        targets[(sid, scan, p["contract_id"])].append(p["rel_id"])
    # of deployables renamed after a collision (each its own service_id), the one copy that serves
    # the path; versions of one service id (a labelled gray package) stay AMBIGUOUS
    status = "RESOLVED" if len(targets) == 1 and sum(p[0] == next(iter(targets))[0] for p in pkgs) == 1 \
        else "AMBIGUOUS"
    cands = [{"service_id": k[0], "scan_id": k[1], "record_id": k[2]} for k in sorted(targets)]
    return [Row("HTTP", c["urn"], *origin, (k[0], k[1]), row_ref(k[1], k[2]), row_ref(k[1], sorted(targets[k])[0]),
                status, "PATH_METHOD" if balanced else "HOST_SERVICE_ID", cands)
            for k in sorted(targets)]


def _covering_routes(pkgs: list[tuple[str, str]], routes: dict[str, list[_Route]], path: str,
                     method: str) -> list[tuple[str, str, str, str]]:
    """The gateway routes of the service's packages whose incoming pattern admits the path, as
    ``(service_id, scan, record_id, pattern)``: several when the gateway's order decides, which the
    scan does not know; a declared route before the default route to every registered service
    (Zuul's, the discovery locator's)."""
    via = [(sid, scan, rid, pat, dyn) for sid, scan in pkgs for rid, pat, rm, dyn in routes.get(scan, [])
           if path_covers(pat, path.split("?", 1)[0]) and methods_compatible(method, rm)]
    return [v[:4] for v in via if not v[4]] or [v[:4] for v in via]


def _route_entry_rows(c: dict[str, Any], origin: _Origin, via: list[tuple[str, str, str, str]],
                      keys: dict[str, Any]) -> list[Row]:
    """A ROUTE_ENTRY row per gateway route that admits the call; AMBIGUOUS when there are several."""
    status = "RESOLVED" if len(via) == 1 else "AMBIGUOUS"
    cands = [{"service_id": v[0], "scan_id": v[1], "record_id": v[2]} for v in via] \
        if status == "AMBIGUOUS" else []
    return [Row("HTTP", c["urn"], *origin, (sid, scan), row_ref(scan, rid), None, status, "ROUTE_ENTRY", cands,
                dict(keys, route_pattern=pat))
            for sid, scan, rid, pat in via]


def _no_endpoint(c: dict[str, Any], origin: _Origin, pkgs: list[tuple[str, str]],
                 keys: dict[str, Any]) -> tuple[list[Row], list[Finding]]:
    """A call no endpoint or route serves: UNRESOLVED, PATH_NOT_FOUND when the service is there,
    else NO_PROVIDER; and its finding."""
    src, src_ref, node = origin
    basis = "PATH_NOT_FOUND" if pkgs else "NO_PROVIDER"
    row = Row("HTTP", c["urn"], src, src_ref, node, None, None, None, "UNRESOLVED", basis, [], keys)
    why = (f"service {' nor '.join(p[0] for p in pkgs)} has no endpoint {keys['method']} {keys['path']}" if pkgs
           else f"no current package is service {keys['service']}")
    finding = Finding("UNRESOLVED_CALL", c["service_id"], c["urn"], "UNRESOLVED", [src_ref], [p[0] for p in pkgs],
                      f"{c['service_id']} calls {c['urn']}: {why}")
    return [row], [finding]


def _route_rows(c: dict[str, Any], src: tuple[str, str], src_ref, node, pkgs: list[tuple[str, str]],
                endpoints: dict[str, list[dict[str, Any]]], service_rids: dict[str, str], cattrs: dict[str, Any],
                pattern: str, method: str) -> list[Row]:
    """A gateway route's rows to the service it forwards to: one ROUTE_PREFIX row per endpoint its
    forwarded pattern covers, else one ROUTE_SERVICE row to the SERVICE (``/**``, a forwarded path
    that is not known, or no endpoint under the prefix); AMBIGUOUS when several packages have the id."""
    keys = {"route_id": cattrs.get("gateway_route"), "route_pattern": cattrs.get("route_pattern"),
            "forward_pattern": pattern if cattrs.get("forward_known", True) else None, "method": method}
    if cattrs.get("load_balanced") is False:  # a uri that is no lb:// names the service by its host
        keys["service_basis"] = "HOST_SERVICE_ID"
    out: list[tuple[str, str, dict[str, Any] | None]] = []
    whole = pattern == "/**" or not cattrs.get("forward_known", True)
    for sid, scan in pkgs:
        hit: dict[str, dict[str, Any]] = {}  # one row per endpoint, however many handlers expose it
        for p in [] if whole else endpoints.get(scan, []):
            pp = split_http_urn(p["urn"])
            if pp and path_covers(pattern, pp[1]) and methods_compatible(method, pp[2]):
                hit.setdefault(p["contract_id"], p)
        out.extend((sid, scan, hit[k]) for k in sorted(hit))
        if not hit:
            out.append((sid, scan, None))
    status = "RESOLVED" if len(pkgs) == 1 else "AMBIGUOUS"
    cands = [{"service_id": sid, "scan_id": scan, "record_id": service_rids.get(scan)} for sid, scan in pkgs] \
        if status == "AMBIGUOUS" else []
    rows = []
    for sid, scan, p in out:
        if p is None:
            rows.append(Row("HTTP", c["urn"], src, src_ref, node, (sid, scan), row_ref(scan, service_rids.get(scan)), None,
                            status, "ROUTE_SERVICE", cands, dict(keys, endpoints_covered=0 if not whole else None)))
        else:
            rows.append(Row("HTTP", c["urn"], src, src_ref, node, (sid, scan), row_ref(scan, p["contract_id"]),
                            row_ref(scan, p["rel_id"]), status, "ROUTE_PREFIX", cands, keys))
    return rows


def align_unresolved_remote(con) -> tuple[list[Row], list[Finding]]:
    """Remote calls (RPC, Feign) the scan left UNRESOLVED: a row each, so unresolved calls per
    service count them; their diagnostics are in the package."""
    rows: list[Row] = []
    http = protocols(con).of("HTTP")
    for r in fetch(con, UNRESOLVED_REMOTE):
        attrs = attrs_of(r["rel_attrs"])
        kind = "HTTP" if attrs.get("protocol") in http or "Feign" in str(attrs.get("binding_evidence") or "") \
            else "RPC"
        keys = attrs_of(r["match_keys"])
        rows.append(Row(kind, None, (r["service_id"], r["scan_id"]), row_ref(r["scan_id"], r["rel_id"]),
                        dict(r["source_ref"]) if r["source_ref"] else None, None, None, None, "UNRESOLVED",
                        "SOURCE_UNRESOLVED", [], keys or None))
    return rows, []
