"""Cross-service alignment (docs/alignment.md): the RPC, HTTP, MQ and DATA rules, materialised at build time.

Every build recomputes two tables over the current packages (``lib:`` packages hold modules no
service deploys and take no part):

``alignment`` — one row per (source relation, target candidate):

==================  ===================================================================================
column              meaning
==================  ===================================================================================
edge_kind           RPC, HTTP, MQ, DATA
urn                 the contract, topic or logical table aligned on (NULL when the source never folded)
src_service/scan    the consuming, publishing or writing service (NULL: an MQ subscription no one feeds)
src_ref             the source relation: a consumer binding (BINDS_TO), an unresolved remote CALLS, a
                    PUBLISHES; for DATA the writer's TABLE entity
src_node_ref        what the source relation points at: the CONSUMED contract, the publishing method, the
                    writer's TABLE
dst_service/scan    the providing, subscribing or accessing service (NULL when no target was found)
dst_ref             the PROVIDED contract, the subscriber ENTRY, the accessor's TABLE
dst_binding_ref     the provider binding (EXPOSES) or the SUBSCRIBES relation that matched
resolution_status   RESOLVED, AMBIGUOUS (one row per candidate), UNRESOLVED (dst NULL, or src NULL)
match_basis         see :data:`MATCH_BASIS`
candidate_targets   every candidate of the source relation, ``[{service_id, scan_id, record_id}]``
match_keys          what was known when nothing matched (service, path, method, binding values …)
==================  ===================================================================================

``graph_findings`` — estate-level diagnostics (docs/ir.md §8 codes): UNRESOLVED_CALL (a consumer binding
or remote call with no provider, a subscription with no publisher), ORPHAN_ENTRY (an RPC contract or
a published topic nobody in the estate consumes), SINGLE_WRITER_VIOLATION (a table written by more
than one service), CROSS_SERVICE_DATA_ACCESS (a service touching a table another service solely
writes).

The rules (docs/alignment.md §4 to §7):

* **RPC** (JSF, Dubbo): a consumer binding matches a provider binding iff the urns are equal, the
  signatures are equal (a consumer parameter the scan could not type, ``?`` or ``?Simple``, matches
  any parameter, or one of that simple name: ``SIGNATURE_PARTIAL``), and for each of alias, group
  and version both values are known and equal, or one is ``*``, or the consumer's value is unknown
  (a consumer's group list ``a,b`` matches each group listed).
  An attribute a binding does not declare is known and empty. One matching service with one
  contract → RESOLVED; several → AMBIGUOUS, one row per candidate; none → UNRESOLVED.
* **HTTP**: the consumer's urn names a service (its folded Feign name), a path and a method. RESOLVED
  iff exactly one current package has that service_id (compared case-insensitively, as service
  registries do; deployables renamed ``{name}~…`` because they collided on ``name`` each count as
  ``name``, so a call to it is AMBIGUOUS among them) and exactly one of its endpoints has an equal
  path and a compatible method (equal, or either side ``ANY``); a service found without the path is UNRESOLVED with match_keys
  ``{service, path, method}`` and never becomes a service-level edge; a Feign ``url=`` or a host that
  is an address (IP, ``host:port``, a dotted host name, ``localhost``) is UNRESOLVED with ``URL_ONLY``.
  Paths are compared segment by segment, a hole ``{}`` (a path variable, or a part of a client's
  URL that did not fold) matching one segment on either side. A client that is not load-balanced
  names a service only when its host equals a current service id (``HOST_SERVICE_ID``); any other
  host is ``URL_ONLY``.
  A gateway route (a consumed contract with ``gateway_route``) to a current service is RESOLVED:
  one ``ROUTE_PREFIX`` row per endpoint its forwarded pattern covers (``**`` last: any rest), else
  one ``ROUTE_SERVICE`` row whose dst_ref is the target's SERVICE; to no current service,
  ``NO_PROVIDER``. A route whose uri is no ``lb://`` is a plain client: aligned only by a host
  equal to a service id (``service_basis: HOST_SERVICE_ID`` in match_keys), else ``URL_ONLY``.
* **MQ**: each (publisher relation, subscriber entry) pair on one topic urn — or joined through a
  RabbitMQ binding (``amqp://{exchange}/{key}`` → ``amqp-queue://{queue}``, the key a topic-exchange
  pattern when it holds ``*`` or ``#``), and on through the dead-letter routes of the queues it
  reaches (``x-dead-letter-exchange``: the delay-queue pattern) — whose subscriber filter admits the
  publisher's event type is one RESOLVED row. The event type is the tag, else the folded payload class, else unknown. No
  filter or ``*`` admits everything; a filtering subscriber facing an unknown event type is
  AMBIGUOUS (``TOPIC_ONLY``), as is a filter that did not fold, an SQL92 selector, or a filter that
  is not a plain ``a || b`` tag list. A publisher no
  subscriber admits gives a row with dst NULL, a subscriber no publisher feeds one with src NULL;
  both UNRESOLVED. Spring application events (``event://``, and event publishes of unknown type) are
  in-process and are not aligned.
* **DATA**: services share a table iff logical table and datasource are equal (an unknown datasource
  on either side → AMBIGUOUS, ``TABLE_ONLY``). One row per (writer, other accessor), src = writer;
  reader–reader pairs give no row; only counted accesses take part (a statement no loaded method of
  the service reaches is DECLARED_ONLY and does not count).
"""

from __future__ import annotations

import json
import operator
import re
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field
from itertools import accumulate
from pathlib import Path
from typing import Any, Iterable

from diting.ir.canonical import READ_JSONL_OPTIONS

EDGE_KINDS = ("RPC", "HTTP", "MQ", "DATA")

#: match_basis vocabulary: how a row was matched, or why it was not
MATCH_BASIS = {
    "SIGNATURE": "RPC: urn, full signature and binding attributes equal",
    "SIGNATURE_PARTIAL": "RPC: urn and binding attributes equal; untyped consumer parameters matched by position",
    "BINDING_MISMATCH": "RPC: providers of the urn and signature exist, but no alias/group/version matches",
    "NO_PROVIDER": "RPC/HTTP: no current package provides the urn (or names the service)",
    "PATH_METHOD": "HTTP: service id, path and method",
    "PATH_NOT_FOUND": "HTTP: the service is current, but none of its endpoints has the path and method",
    "URL_ONLY": "HTTP: a fixed URL or address, not a service name; never aligned",
    "HOST_SERVICE_ID": "HTTP: a client that is not load-balanced calls a host equal to a current service id; path and "
                       "method matched as PATH_METHOD",
    "ROUTE_PREFIX": "HTTP: a gateway route forwards a path prefix to the service; one row per endpoint it covers",
    "ROUTE_ENTRY": "HTTP: a call to a gateway service whose path one of its routes admits; dst is the route entry (the "
    "route's own rows lead on to the service it forwards to)",
    "ROUTE_SERVICE": "HTTP: a gateway route forwards to the service as a whole (pattern /**, a forwarded path that is not "
                     "known, or no endpoint under the prefix); dst_ref is the SERVICE",
    "SOURCE_UNRESOLVED": "the scan could not fold the source (its urn is unknown); see its diagnostic",
    "TOPIC_TAG": "MQ: topic equal and the subscriber's filter admits the publisher's tag or event type",
    "TOPIC": "MQ: topic equal, the subscriber does not filter",
    "RABBIT_BINDING": "MQ: joined through a RabbitMQ exchange binding",
    "RABBIT_DEAD_LETTER": "MQ: through a binding to a queue whose dead-letter route (expiry, rejection) leads on",
    "TOPIC_ONLY": "MQ: topic equal, a filtering subscriber and an unknown event type (or an opaque filter)",
    "NO_SUBSCRIBER": "MQ: no current subscriber admits what is published",
    "NO_PUBLISHER": "MQ: no current publisher feeds the subscription",
    "TABLE_DATASOURCE": "DATA: logical table and datasource equal",
    "TABLE_ONLY": "DATA: logical table equal, a datasource unknown",
}

ALIGNMENT_DDL = """CREATE TABLE IF NOT EXISTS alignment (
    edge_kind VARCHAR NOT NULL, urn VARCHAR, src_service VARCHAR, src_scan_id VARCHAR,
    src_ref STRUCT(scan_id VARCHAR, record_id VARCHAR), src_node_ref STRUCT(scan_id VARCHAR, record_id VARCHAR),
    dst_service VARCHAR, dst_scan_id VARCHAR, dst_ref STRUCT(scan_id VARCHAR, record_id VARCHAR),
    dst_binding_ref STRUCT(scan_id VARCHAR, record_id VARCHAR), resolution_status VARCHAR NOT NULL,
    match_basis VARCHAR NOT NULL,
    candidate_targets STRUCT(service_id VARCHAR, scan_id VARCHAR, record_id VARCHAR)[], match_keys JSON)"""

FINDINGS_DDL = """CREATE TABLE IF NOT EXISTS graph_findings (
    code VARCHAR NOT NULL, severity VARCHAR NOT NULL, service_id VARCHAR, urn VARCHAR,
    resolution_status VARCHAR NOT NULL, subject_refs STRUCT(scan_id VARCHAR, record_id VARCHAR)[],
    related_services VARCHAR[], message VARCHAR NOT NULL)"""

_COLUMNS = {
    "edge_kind": "VARCHAR", "urn": "VARCHAR", "src_service": "VARCHAR", "src_scan_id": "VARCHAR",
    "src_ref": "STRUCT(scan_id VARCHAR, record_id VARCHAR)", "src_node_ref": "STRUCT(scan_id VARCHAR, record_id VARCHAR)",
    "dst_service": "VARCHAR", "dst_scan_id": "VARCHAR", "dst_ref": "STRUCT(scan_id VARCHAR, record_id VARCHAR)",
    "dst_binding_ref": "STRUCT(scan_id VARCHAR, record_id VARCHAR)", "resolution_status": "VARCHAR",
    "match_basis": "VARCHAR",
    "candidate_targets": "STRUCT(service_id VARCHAR, scan_id VARCHAR, record_id VARCHAR)[]", "match_keys": "JSON"}
_FINDING_COLUMNS = {
    "code": "VARCHAR", "severity": "VARCHAR", "service_id": "VARCHAR", "urn": "VARCHAR",
    "resolution_status": "VARCHAR", "subject_refs": "STRUCT(scan_id VARCHAR, record_id VARCHAR)[]",
    "related_services": "VARCHAR[]", "message": "VARCHAR"}

#: the current, deployable packages (a ``lib:`` package — kind LIB — is no service)
_SERVICES = "SELECT scan_id, service_id FROM packages WHERE is_current AND kind = 'SERVICE'"


def _ref(scan_id: str | None, record_id: str | None) -> dict[str, str] | None:
    return None if scan_id is None or record_id is None else {"scan_id": scan_id, "record_id": record_id}


@dataclass
class Row:
    """One alignment row (see the module docstring for the columns)."""

    edge_kind: str
    urn: str | None
    src: tuple[str, str] | None  # (service_id, scan_id)
    src_ref: dict[str, str] | None
    src_node_ref: dict[str, str] | None
    dst: tuple[str, str] | None
    dst_ref: dict[str, str] | None
    dst_binding_ref: dict[str, str] | None
    status: str
    basis: str
    candidates: list[dict[str, str]] = field(default_factory=list)
    match_keys: dict[str, Any] | None = None

    def record(self) -> dict[str, Any]:
        return {"edge_kind": self.edge_kind, "urn": self.urn,
                "src_service": self.src[0] if self.src else None, "src_scan_id": self.src[1] if self.src else None,
                "src_ref": self.src_ref, "src_node_ref": self.src_node_ref,
                "dst_service": self.dst[0] if self.dst else None, "dst_scan_id": self.dst[1] if self.dst else None,
                "dst_ref": self.dst_ref, "dst_binding_ref": self.dst_binding_ref,
                "resolution_status": self.status, "match_basis": self.basis, "candidate_targets": self.candidates,
                "match_keys": self.match_keys}


@dataclass
class Finding:
    """One estate-level diagnostic."""

    code: str
    service_id: str | None
    urn: str | None
    status: str
    subjects: list[dict[str, str]]
    related: list[str]
    message: str

    def record(self) -> dict[str, Any]:
        from diting.ir.models import DIAGNOSTIC_SEVERITY
        return {"code": self.code, "severity": DIAGNOSTIC_SEVERITY[self.code].value, "service_id": self.service_id,
                "urn": self.urn, "resolution_status": self.status, "subject_refs": self.subjects,
                "related_services": sorted(set(self.related)), "message": self.message}


def _attrs(raw: Any) -> dict[str, Any]:
    if raw is None:
        return {}
    return raw if isinstance(raw, dict) else json.loads(raw)


def _fetch(con, sql: str) -> list[dict[str, Any]]:
    cur = con.execute(sql)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


# --------------------------------------------------------------------------------------------- RPC

_BINDING_ROLES = ("alias", "group", "version")


def _binding_value(attrs: dict[str, Any], role: str) -> tuple[bool, str | None]:
    """(known, value) of one binding attribute: undeclared is known and empty; a declared value the
    scan could not fold is unknown."""
    if role not in attrs:
        return True, ""
    v = attrs.get(role)
    if v is None or attrs.get(f"{role}_resolution") not in (None, "RESOLVED"):
        return False, None
    return True, str(v)


def bindings_match(consumer: dict[str, Any], provider: dict[str, Any]) -> bool:
    """docs/alignment.md §4: for each of alias, group and version, both known and equal, or one is ``*``, or
    the consumer's value is unknown. A consumer's group that lists groups (Dubbo's ``group = "a,b"``,
    which subscribes to each and merges or picks among them) matches a provider of any group listed."""
    for role in _BINDING_ROLES:
        ck, cv = _binding_value(consumer, role)
        pk, pv = _binding_value(provider, role)
        if not ck or cv == "*" or pv == "*":
            continue
        wanted = {g.strip() for g in cv.split(",")} if role == "group" and cv and "," in cv else {cv}
        if not pk or pv not in wanted:
            return False
    return True


def signature_match(consumer: list[str], provider: list[str]) -> str | None:
    """``SIGNATURE`` when equal, ``SIGNATURE_PARTIAL`` when equal up to consumer parameters the scan
    could not type (``?`` matches any type, ``?Simple`` a type of that simple name), else None."""
    if len(consumer) != len(provider):
        return None
    partial = False
    for c, p in zip(consumer, provider):
        if c == p:
            continue
        if c.startswith("?") and (c == "?" or re.split(r"[.$]", p)[-1] == c[1:].split("<")[0]):
            partial = True
            continue
        return None
    return "SIGNATURE_PARTIAL" if partial else "SIGNATURE"


def _sig(raw: Any) -> list[str]:
    if raw is None:
        return []
    return [str(x) for x in (raw if isinstance(raw, list) else json.loads(raw))]


_CONTRACT_BINDINGS = f"""
SELECT s.service_id, r.scan_id, r.record_id AS rel_id, r.kind AS rel_kind, r.attributes AS rel_attrs,
       c.record_id AS contract_id, c.urn, c.signature, c.attributes AS contract_attrs
FROM relations r
JOIN ({_SERVICES}) s ON s.scan_id = r.scan_id
JOIN entities c ON c.scan_id = r.scan_id AND c.record_id = r.target_ref.record_id AND c.kind = 'CONTRACT'
WHERE r.kind = '{{kind}}' AND c.role = '{{role}}' AND r.resolution_status = 'RESOLVED'
  AND coalesce(c.attributes->>'loaded', 'true') <> 'false'
ORDER BY r.scan_id, r.record_id"""

#: consumer sources: each consumer binding (BINDS_TO) of a CONSUMED contract; a contract no binding
#: targets (a load-balanced RestTemplate call) has each of its CALLS as a source instead
_CONSUMERS = f"""
WITH c AS (
    SELECT s.service_id, e.scan_id, e.record_id, e.urn, e.signature, e.attributes
    FROM entities e JOIN ({_SERVICES}) s ON s.scan_id = e.scan_id
    WHERE e.kind = 'CONTRACT' AND e.role = 'CONSUMED' AND coalesce(e.attributes->>'loaded', 'true') <> 'false'),
r AS (
    SELECT r.scan_id, r.record_id, r.kind, r.attributes, r.target_ref.record_id AS target
    FROM relations r WHERE r.kind IN ('BINDS_TO', 'CALLS') AND r.resolution_status = 'RESOLVED'
      AND r.target_ref.record_id LIKE 'contract:%'),
bound AS (SELECT DISTINCT scan_id, target FROM r WHERE kind = 'BINDS_TO')
SELECT c.service_id, c.scan_id, r.record_id AS rel_id, r.kind AS rel_kind, r.attributes AS rel_attrs,
       c.record_id AS contract_id, c.urn, c.signature, c.attributes AS contract_attrs
FROM c JOIN r ON r.scan_id = c.scan_id AND r.target = c.record_id
WHERE r.kind = 'BINDS_TO' OR NOT EXISTS (SELECT 1 FROM bound b WHERE b.scan_id = c.scan_id AND b.target = c.record_id)
ORDER BY c.scan_id, r.record_id"""

#: remote calls the scan could not fold to a contract (their consumer binding is unknown), and gateway
#: routes whose target did not fold
_UNRESOLVED_REMOTE = f"""
SELECT s.service_id, r.scan_id, r.record_id AS rel_id, r.source_ref, r.match_keys, r.attributes AS rel_attrs
FROM relations r JOIN ({_SERVICES}) s ON s.scan_id = r.scan_id
WHERE r.resolution_status = 'UNRESOLVED' AND (r.kind = 'CALLS' AND r.attributes->>'dispatch_kind' = 'RPC'
      OR r.kind = 'BINDS_TO' AND r.attributes->>'gateway_route' IS NOT NULL)
ORDER BY r.scan_id, r.record_id"""


def _protocol(row: dict[str, Any]) -> str:
    return str(_attrs(row["contract_attrs"]).get("protocol") or (row["urn"] or "").split("://", 1)[0])


def _scheme(urn: str | None) -> str:
    return (urn or "").split("://", 1)[0] if "://" in (urn or "") else ""


@dataclass
class Protocols:
    """The protocol table of the current packages (each package's analysis_input.json ``protocols``,
    loaded into the ``protocols`` table): scheme → (alignment, routing). A scheme the packages
    declare with different alignments aligns under none of them (``conflicts``, a PROTOCOL_CONFLICT
    finding): which one the code meant is not known."""

    table: dict[str, tuple[str, str | None]]
    conflicts: dict[str, list[str]]

    def of(self, alignment: str) -> frozenset[str]:
        """The schemes aligned by the ``alignment`` rule (RPC, HTTP, MQ …)."""
        return frozenset(s for s, (a, _) in self.table.items() if a == alignment)

    def routing(self, scheme: str) -> str | None:
        return self.table.get(scheme, ("", None))[1]

    def findings(self) -> list[Finding]:
        return [Finding("PROTOCOL_CONFLICT", None, f"{s}://", "AMBIGUOUS", [], [],
                        f"packages of this graph declare the scheme {s} with different alignments "
                        f"({', '.join(a)}); its urns are not aligned") for s, a in sorted(self.conflicts.items())]


_PROTOCOLS = f"""
SELECT DISTINCT p.scheme, p.alignment, p.routing FROM protocols p JOIN ({_SERVICES}) s ON s.scan_id = p.scan_id
ORDER BY 1, 2, 3"""


def protocols(con) -> Protocols:
    """The :class:`Protocols` of the current packages."""
    seen: dict[str, set[tuple[str, str | None]]] = defaultdict(set)
    for scheme, alignment, routing in con.execute(_PROTOCOLS).fetchall():
        seen[scheme].add((alignment, routing))
    table = {s: next(iter(v)) for s, v in seen.items() if len(v) == 1}
    conflicts = {s: sorted(f"{a}{'/' + r if r else ''}" for a, r in v) for s, v in seen.items() if len(v) > 1}
    return Protocols(table, conflicts)


def align_rpc(con) -> tuple[list[Row], list[Finding]]:
    """The RPC rule over the consumer and provider bindings of the protocols aligned as RPC (JSF, Dubbo …)."""
    protos = protocols(con)
    rpc = protos.of("RPC")
    consumers = [r for r in _fetch(con, _CONSUMERS) if _protocol(r) in rpc]
    providers: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for p in _fetch(con, _CONTRACT_BINDINGS.format(kind="EXPOSES", role="PROVIDED")):
        if _protocol(p) in rpc:
            providers[p["urn"]].append(p)
    rows: list[Row] = []
    findings: list[Finding] = protos.findings()  # reported once, by the first aligner
    consumed: set[tuple[str, str]] = set()
    for c in consumers:
        cattrs, csig = _attrs(c["rel_attrs"]), _sig(c["signature"])
        if c["rel_kind"] != "BINDS_TO":  # no consumer binding: its alias/group/version are unknown
            cattrs = {k: v for r in _BINDING_ROLES for k, v in ((r, None), (f"{r}_resolution", "UNKNOWN"))}
        src_ref, node = _ref(c["scan_id"], c["rel_id"]), _ref(c["scan_id"], c["contract_id"])
        # candidates: (service, scan, contract) → (basis, provider binding relations)
        found: dict[tuple[str, str, str], tuple[str, list[str]]] = {}
        sig_ok = False
        for p in providers.get(c["urn"], []):
            basis = signature_match(csig, _sig(p["signature"]))
            if basis is None:
                continue
            sig_ok = True
            if not bindings_match(cattrs, _attrs(p["rel_attrs"])):
                continue
            key = (p["service_id"], p["scan_id"], p["contract_id"])
            prev = found.get(key)
            found[key] = (basis if prev is None or prev[0] == basis else "SIGNATURE_PARTIAL",
                          (prev[1] if prev else []) + [p["rel_id"]])
        known = {r: _binding_value(cattrs, r)[1] for r in _BINDING_ROLES}
        if not found:
            basis = "BINDING_MISMATCH" if sig_ok else "NO_PROVIDER"
            rows.append(Row("RPC", c["urn"], (c["service_id"], c["scan_id"]), src_ref, node, None, None, None,
                            "UNRESOLVED", basis, [], {"urn": c["urn"], "signature": csig, **known}))
            why = ("providers exist, but none with a matching alias/group/version" if sig_ok else
                   "no current package provides it")
            findings.append(Finding("UNRESOLVED_CALL", c["service_id"], c["urn"], "UNRESOLVED", [src_ref],
                                    [], f"{c['service_id']} consumes {c['urn']}({','.join(csig)}) "
                                        f"[{_binding_text(known)}]: {why}"))
            continue
        services = {k[0] for k in found}
        contracts = {(k[0], k[2]) for k in found}
        status = "RESOLVED" if len(services) == 1 and len(contracts) == 1 else "AMBIGUOUS"
        cands = [{"service_id": k[0], "scan_id": k[1], "record_id": k[2]} for k in sorted(found)]
        for k in sorted(found):
            basis, rels = found[k]
            consumed.add((k[1], k[2]))
            rows.append(Row("RPC", c["urn"], (c["service_id"], c["scan_id"]), src_ref, node, (k[0], k[1]),
                            _ref(k[1], k[2]), _ref(k[1], sorted(rels)[0]), status, basis, cands))
    # ORPHAN_ENTRY: an RPC contract nobody in the estate consumes
    seen: set[tuple[str, str]] = set()
    for ps in providers.values():
        for p in ps:
            k = (p["scan_id"], p["contract_id"])
            if k in consumed or k in seen:
                continue
            seen.add(k)
            findings.append(Finding("ORPHAN_ENTRY", p["service_id"], p["urn"], "RESOLVED",
                                    [_ref(p["scan_id"], p["contract_id"])], [],
                                    f"{p['service_id']} provides {p['urn']}({','.join(_sig(p['signature']))}); "
                                    "no current package consumes it"))
    return rows, findings


def _binding_text(known: dict[str, Any]) -> str:
    return ", ".join(f"{k}={'?' if v is None else v}" for k, v in known.items() if v != "")


# -------------------------------------------------------------------------------------------- HTTP

_URN = re.compile(r"^http://(?P<host>[^/#]*)(?P<path>[^#]*)#(?P<method>[A-Z]+)$")
_ADDRESS = re.compile(r"^(\d{1,3}(\.\d{1,3}){3}|\[[0-9a-fA-F:]+\])(:\d+)?$|:\d+$|\.|^localhost$", re.I)

_SERVICE_ENTITIES = f"""
SELECT e.scan_id, e.record_id FROM entities e JOIN ({_SERVICES}) s ON s.scan_id = e.scan_id
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
FROM entities e JOIN ({_SERVICES}) s ON s.scan_id = e.scan_id
WHERE e.kind = 'ENTRY' AND e.entry_kind = 'GATEWAY_ROUTE' AND e.urn IS NOT NULL ORDER BY 1, 2"""

_COLLIDED = f"""
SELECT s.service_id, s.scan_id, e.attributes FROM entities e JOIN ({_SERVICES}) s ON s.scan_id = e.scan_id
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
    services: dict[str, list[tuple[str, str]]] = defaultdict(list)  # folded service id → [(service_id, scan)]
    for sid, scan in con.execute(f"SELECT service_id, scan_id FROM ({_SERVICES}) ORDER BY 1, 2").fetchall():
        services[sid.lower()].append((sid, scan))
    # deployables that collided on one name (renamed {name}~…) are each still that name to a caller
    for sid, scan, attrs in con.execute(_COLLIDED).fetchall():
        name = str(_attrs(attrs).get("service_id_basis", {}).get("collided_with") or "")
        if name and name.lower() != sid.lower() and (sid, scan) not in services[name.lower()]:
            services[name.lower()].append((sid, scan))
    service_rids = {scan: rid for scan, rid in con.execute(_SERVICE_ENTITIES).fetchall()}
    endpoints: dict[str, list[dict[str, Any]]] = defaultdict(list)  # scan → provided http contracts
    http = protocols(con).of("HTTP")
    for p in _fetch(con, _CONTRACT_BINDINGS.format(kind="EXPOSES", role="PROVIDED")):
        if _protocol(p) in http:
            endpoints[p["scan_id"]].append(p)
    # scan → [(record_id, pattern, method, dynamic)]; a route to every registered service is dynamic
    routes: dict[str, list[tuple[str, str, str, bool]]] = defaultdict(list)
    for scan, rid, urn, dynamic in con.execute(_ROUTE_ENTRIES).fetchall():
        if (rp := split_http_urn(urn)) is not None:
            routes[scan].append((rid, rp[1], rp[2], bool(dynamic)))
    rows: list[Row] = []
    findings: list[Finding] = []
    for c in _fetch(con, _CONSUMERS):
        if _protocol(c) not in http:
            continue
        src, src_ref, node = (c["service_id"], c["scan_id"]), _ref(c["scan_id"], c["rel_id"]), \
            _ref(c["scan_id"], c["contract_id"])
        parts = split_http_urn(c["urn"])
        cattrs = _attrs(c["contract_attrs"])
        balanced = cattrs.get("load_balanced") is not False
        if parts is not None and not balanced and not cattrs.get("url") and not services.get(parts[0].lower()):
            cattrs = dict(cattrs, url=f"http://{parts[0]}")  # a plain client's host that names no service
        if parts is None or cattrs.get("url") or _ADDRESS.search(parts[0]):
            keys = {"urn": c["urn"], "url": cattrs.get("url")}
            rows.append(Row("HTTP", c["urn"], src, src_ref, node, None, None, None, "UNRESOLVED", "URL_ONLY", [],
                            keys))
            findings.append(Finding("UNRESOLVED_CALL", c["service_id"], c["urn"], "UNRESOLVED", [src_ref], [],
                                    f"{c['service_id']} calls {c['urn']} by a fixed URL "
                                    f"{cattrs.get('url') or parts and parts[0]}; URLs are not aligned"))
            continue
        host, path, method = parts
        keys = {"service": host, "path": path, "method": method}
        pkgs = services.get(host.lower(), [])
        route = cattrs.get("gateway_route")
        if route is not None and pkgs:
            rows.extend(_route_rows(c, src, src_ref, node, pkgs, endpoints, service_rids, cattrs, path, method))
            continue
        found: list[tuple[str, str, dict[str, Any]]] = []
        for sid, scan in pkgs:
            for p in endpoints.get(scan, []):
                pp = split_http_urn(p["urn"])
                if pp and paths_match(path, pp[1]) and methods_compatible(method, pp[2]):
                    found.append((sid, scan, p))
        if found:  # as Spring MVC, the most specific mapping wins: most segments equal as written
            best = max(_specificity(path, split_http_urn(p["urn"])[1]) for _, _, p in found)
            found = [f for f in found if _specificity(path, split_http_urn(f[2]["urn"])[1]) == best]
        if not found:
            # a gateway: the routes whose incoming pattern admits the path (several: the gateway's
            # order decides, which the scan does not know); a declared route before the default
            # route to every registered service (Zuul's, the discovery locator's)
            via = [(sid, scan, rid, pat, dyn) for sid, scan in pkgs for rid, pat, rm, dyn in routes.get(scan, [])
                   if path_covers(pat, path.split("?", 1)[0]) and methods_compatible(method, rm)]
            via = [v[:4] for v in via if not v[4]] or [v[:4] for v in via]
            if via:
                status = "RESOLVED" if len(via) == 1 else "AMBIGUOUS"
                cands = [{"service_id": v[0], "scan_id": v[1], "record_id": v[2]} for v in via] \
                    if status == "AMBIGUOUS" else []
                for sid, scan, rid, pat in via:
                    rows.append(Row("HTTP", c["urn"], src, src_ref, node, (sid, scan), _ref(scan, rid), None, status,
                                    "ROUTE_ENTRY", cands, dict(keys, route_pattern=pat)))
                continue
        if not found:
            basis = "PATH_NOT_FOUND" if pkgs else "NO_PROVIDER"
            rows.append(Row("HTTP", c["urn"], src, src_ref, node, None, None, None, "UNRESOLVED", basis, [], keys))
            why = (f"service {' nor '.join(p[0] for p in pkgs)} has no endpoint {method} {path}" if pkgs else
                   f"no current package is service {host}")
            findings.append(Finding("UNRESOLVED_CALL", c["service_id"], c["urn"], "UNRESOLVED", [src_ref],
                                    [p[0] for p in pkgs], f"{c['service_id']} calls {c['urn']}: {why}"))
            continue
        # the same endpoint exposed by two handlers is one target
        targets: dict[tuple[str, str, str], list[str]] = defaultdict(list)
        for sid, scan, p in found:
            targets[(sid, scan, p["contract_id"])].append(p["rel_id"])
        # of deployables renamed after a collision (each its own service_id), the one copy that serves
        # the path; versions of one service id (a labelled gray package) stay AMBIGUOUS
        status = "RESOLVED" if len(targets) == 1 and sum(p[0] == next(iter(targets))[0] for p in pkgs) == 1 \
            else "AMBIGUOUS"
        cands = [{"service_id": k[0], "scan_id": k[1], "record_id": k[2]} for k in sorted(targets)]
        for k in sorted(targets):
            rows.append(Row("HTTP", c["urn"], src, src_ref, node, (k[0], k[1]), _ref(k[1], k[2]),
                            _ref(k[1], sorted(targets[k])[0]), status, "PATH_METHOD" if balanced else "HOST_SERVICE_ID",
                            cands))
    return rows, findings


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
            rows.append(Row("HTTP", c["urn"], src, src_ref, node, (sid, scan), _ref(scan, service_rids.get(scan)), None,
                            status, "ROUTE_SERVICE", cands, dict(keys, endpoints_covered=0 if not whole else None)))
        else:
            rows.append(Row("HTTP", c["urn"], src, src_ref, node, (sid, scan), _ref(scan, p["contract_id"]),
                            _ref(scan, p["rel_id"]), status, "ROUTE_PREFIX", cands, keys))
    return rows


def align_unresolved_remote(con) -> tuple[list[Row], list[Finding]]:
    """Remote calls (RPC, Feign) the scan left UNRESOLVED: a row each, so unresolved calls per
    service count them; their diagnostics are in the package."""
    rows: list[Row] = []
    http = protocols(con).of("HTTP")
    for r in _fetch(con, _UNRESOLVED_REMOTE):
        attrs = _attrs(r["rel_attrs"])
        kind = "HTTP" if attrs.get("protocol") in http or "Feign" in str(attrs.get("binding_evidence") or "") \
            else "RPC"
        keys = _attrs(r["match_keys"])
        rows.append(Row(kind, None, (r["service_id"], r["scan_id"]), _ref(r["scan_id"], r["rel_id"]),
                        dict(r["source_ref"]) if r["source_ref"] else None, None, None, None, "UNRESOLVED",
                        "SOURCE_UNRESOLVED", [], keys or None))
    return rows, []


# ---------------------------------------------------------------------------------------------- MQ

_PUBLISHES = f"""
SELECT s.service_id, r.scan_id, r.record_id AS rel_id, r.source_ref, r.resolution_status, r.match_keys,
       r.attributes AS rel_attrs, t.urn
FROM relations r JOIN ({_SERVICES}) s ON s.scan_id = r.scan_id
LEFT JOIN entities t ON t.scan_id = r.scan_id AND t.record_id = r.target_ref.record_id
WHERE r.kind = 'PUBLISHES' AND coalesce(r.attributes->>'loaded', 'true') <> 'false'
ORDER BY r.scan_id, r.record_id"""

_SUBSCRIBES = f"""
SELECT s.service_id, r.scan_id, r.record_id AS rel_id, r.source_ref AS entry_ref, r.resolution_status,
       r.attributes AS rel_attrs, t.urn
FROM relations r JOIN ({_SERVICES}) s ON s.scan_id = r.scan_id
LEFT JOIN entities t ON t.scan_id = r.scan_id AND t.record_id = r.target_ref.record_id
WHERE r.kind = 'SUBSCRIBES'
ORDER BY r.scan_id, r.record_id"""

#: RabbitMQ bindings: amqp://{exchange}/{key} → amqp-queue://{queue}, and dead-letter routes
#: amqp-queue://{queue} → amqp://{exchange}/{key}, from any current package
_RABBIT_BINDINGS = f"""
SELECT DISTINCT a.urn AS src_urn, b.urn AS dst_urn, coalesce(r.attributes->>'keeps_routing_key', 'false') = 'true'
       AS keeps_key
FROM relations r JOIN ({_SERVICES}) s ON s.scan_id = r.scan_id
JOIN entities a ON a.scan_id = r.scan_id AND a.record_id = r.source_ref.record_id AND a.kind = 'TOPIC'
JOIN entities b ON b.scan_id = r.scan_id AND b.record_id = r.target_ref.record_id AND b.kind = 'TOPIC'
WHERE r.kind = 'BINDS_TO' AND r.resolution_status = 'RESOLVED'"""

_TAG = re.compile(r"^[A-Za-z0-9_.$:\-]+$")


def event_type(attrs: dict[str, Any]) -> str | None:
    """A publisher's event type: its tag, else its folded payload class, else None (unknown)."""
    if attrs.get("tag_resolution") not in (None, "RESOLVED"):
        return None
    return attrs.get("tag") or attrs.get("event_type") or None


def filter_admits(tag_filter: str | None, etype: str | None, sub: dict[str, Any] | None = None) -> bool | None:
    """Whether a subscriber's filter admits an event type: True / False, None when it cannot be told
    (a filter facing an unknown type, a filter that did not fold, an SQL92 selector, or a filter
    that is not a ``a || b`` tag list). ``sub`` holds the SUBSCRIBES attributes."""
    sub = sub or {}
    if sub.get("tag_filter_resolution") not in (None, "RESOLVED") or sub.get("tag_filter_type") not in (None, "TAG"):
        return None
    if tag_filter is None or tag_filter.strip() in ("", "*"):
        return True
    tags = [t.strip() for t in tag_filter.split("||")]
    if not all(_TAG.match(t) for t in tags) or etype is None:
        return None
    return etype in tags


def _rabbit_key_matches(pattern: str, key: str) -> bool:
    """A topic-exchange binding key (``*`` one word, ``#`` zero or more words) against a routing key;
    a key without wildcards must be equal. Word by word, without recursion (a pattern of many words
    or many ``#`` costs words × words, never a deep stack or an exponential search)."""
    if "*" not in pattern and "#" not in pattern:
        return pattern == key
    ks = key.split(".")
    reach = [True] + [False] * len(ks)  # reach[j]: the pattern words so far match the first j key words
    for p in pattern.split("."):
        if p == "#":
            reach = list(accumulate(reach, operator.or_))
        else:
            reach = [False] + [reach[j] and (p == "*" or p == ks[j]) for j in range(len(ks))]
    return reach[-1]


class RabbitRoutes:
    """Exchange bindings and queue dead-letter routes of the current packages, and where a message
    sent to ``amqp://{exchange}/{key}`` ends up."""

    #: dead-letter hops followed at most (a route back to where it started ends anyway)
    MAX_DEAD_LETTER_HOPS = 3

    def __init__(self, protos: Protocols) -> None:
        self.protos = protos
        self.bindings: dict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)  # exchange → [(key, queue)]
        self.dead_letter: dict[str, list[tuple[str, str, str | None]]] = defaultdict(list)  # queue → [(scheme, ex, key)]

    def exchange(self, urn: str) -> bool:
        """Whether ``urn`` names an exchange and routing key (a scheme of routing ``amqp-exchange``)."""
        return self.protos.routing(_scheme(urn)) == "amqp-exchange"

    def add(self, src_urn: str, dst_urn: str, keeps_key: bool = False) -> None:
        """One BINDS_TO between topics: an exchange binding or a dead-letter route."""
        src, dst = _scheme(src_urn), _scheme(dst_urn)
        if self.exchange(src_urn) and self.protos.routing(dst) == "amqp-queue":
            ex, _, key = src_urn[len(src) + 3:].partition("/")
            self.bindings[(src, ex)].append((key, dst_urn))
        elif self.protos.routing(src) == "amqp-queue" and self.exchange(dst_urn):
            ex, _, key = dst_urn[len(dst) + 3:].partition("/")
            self.dead_letter[src_urn].append((dst, ex, None if keeps_key else key))

    def queues(self, urn: str) -> list[tuple[str, str]]:
        """``[(queue urn, how)]`` a send to ``urn`` reaches: through bindings (``RABBIT_BINDING``), then
        through the dead-letter routes of those queues (``RABBIT_DEAD_LETTER``), sorted."""
        scheme = _scheme(urn)
        ex, _, key = urn[len(scheme) + 3:].partition("/")
        out: dict[str, str] = {}
        frontier = [(scheme, ex, key, "RABBIT_BINDING")]
        for _ in range(self.MAX_DEAD_LETTER_HOPS + 1):
            nxt = []
            for sc, e, k, how in frontier:
                for pattern, q in self.bindings.get((sc, e), []):
                    if _rabbit_key_matches(pattern, k) and q not in out:
                        out[q] = how
                        nxt += [(ds, dx, k if dk is None else dk, "RABBIT_DEAD_LETTER")
                                for ds, dx, dk in self.dead_letter.get(q, [])]
            frontier = nxt
        return sorted(out.items())


def align_mq(con) -> tuple[list[Row], list[Finding]]:
    """The MQ rule: fan-out rows per (publisher relation, subscriber entry)."""
    subs: dict[str, list[dict[str, Any]]] = defaultdict(list)
    rows: list[Row] = []
    findings: list[Finding] = []
    protos = protocols(con)
    mq, local = protos.of("MQ"), protos.of("IN_PROCESS")
    for s in _fetch(con, _SUBSCRIBES):
        if s["urn"] and _scheme(s["urn"]) in mq and s["resolution_status"] == "RESOLVED":
            subs[s["urn"]].append(s)
    routes = RabbitRoutes(protos)
    for src_urn, dst_urn, keeps_key in con.execute(_RABBIT_BINDINGS).fetchall():
        routes.add(src_urn, dst_urn, keeps_key)
    fed: set[tuple[str, str]] = set()
    for p in _fetch(con, _PUBLISHES):
        attrs = _attrs(p["rel_attrs"])
        src, src_ref = (p["service_id"], p["scan_id"]), _ref(p["scan_id"], p["rel_id"])
        node = dict(p["source_ref"]) if p["source_ref"] else None
        if attrs.get("protocol") in local:
            continue  # an application event stays inside its service (resolved or not): no cross-service row
        if p["resolution_status"] != "RESOLVED" or not p["urn"]:
            rows.append(Row("MQ", None, src, src_ref, node, None, None, None, "UNRESOLVED", "SOURCE_UNRESOLVED",
                            [], _attrs(p["match_keys"]) or None))
            continue
        if _scheme(p["urn"]) not in mq:
            continue  # IN_PROCESS (application events), NONE, or a scheme declared with conflicting alignments
        targets: list[tuple[dict[str, Any], str]] = [(s, "TOPIC") for s in subs.get(p["urn"], [])]
        if routes.exchange(p["urn"]):
            targets += [(s, how) for q, how in routes.queues(p["urn"]) for s in subs.get(q, [])]
        etype = event_type(attrs)
        out: list[tuple[dict[str, Any], str, str]] = []
        for s, how in targets:
            sattrs = _attrs(s["rel_attrs"])
            admits = filter_admits(sattrs.get("tag_filter"), etype, sattrs)
            if admits is False:
                continue
            filtered = sattrs.get("tag_filter") not in (None, "", "*")
            if admits is None:
                out.append((s, "AMBIGUOUS", "TOPIC_ONLY"))
            else:
                out.append((s, "RESOLVED", how if how.startswith("RABBIT") else "TOPIC_TAG" if filtered else "TOPIC"))
        if not out:
            rows.append(Row("MQ", p["urn"], src, src_ref, node, None, None, None, "UNRESOLVED", "NO_SUBSCRIBER", [],
                            {"topic": p["urn"], "event_type": etype}))
            findings.append(Finding("ORPHAN_ENTRY", p["service_id"], p["urn"], "UNRESOLVED", [src_ref], [],
                                    f"{p['service_id']} publishes {p['urn']}"
                                    f"{' (' + etype + ')' if etype else ''}; no current subscriber admits it"))
            continue
        cands = [{"service_id": s["service_id"], "scan_id": s["scan_id"], "record_id": dict(s["entry_ref"])["record_id"]}
                 for s, st, _ in out if st == "AMBIGUOUS"]
        for s, st, basis in out:
            fed.add((s["scan_id"], s["rel_id"]))
            rows.append(Row("MQ", p["urn"], src, src_ref, node, (s["service_id"], s["scan_id"]),
                            dict(s["entry_ref"]), _ref(s["scan_id"], s["rel_id"]), st, basis,
                            cands if st == "AMBIGUOUS" else []))
    for ss in subs.values():
        for s in ss:
            if (s["scan_id"], s["rel_id"]) in fed:
                continue
            ref = _ref(s["scan_id"], s["rel_id"])
            rows.append(Row("MQ", s["urn"], None, None, None, (s["service_id"], s["scan_id"]), dict(s["entry_ref"]),
                            ref, "UNRESOLVED", "NO_PUBLISHER", [], {"topic": s["urn"]}))
            findings.append(Finding("UNRESOLVED_CALL", s["service_id"], s["urn"], "UNRESOLVED", [ref], [],
                                    f"{s['service_id']} subscribes to {s['urn']}; no current package publishes "
                                    "anything its filter admits"))
    return rows, findings


# -------------------------------------------------------------------------------------------- DATA

#: one row per (service, table entity, op) of counted accesses in current service packages
_ACCESS = f"""
SELECT DISTINCT s.service_id, t.scan_id, t.record_id, t.urn, t.datasource,
       CASE r.kind WHEN 'WRITES' THEN 'WRITE' ELSE 'READ' END AS op
FROM relations r JOIN ({_SERVICES}) s ON s.scan_id = r.scan_id
JOIN entities t ON t.scan_id = r.scan_id AND t.record_id = r.target_ref.record_id AND t.kind = 'TABLE'
WHERE r.kind IN ('READS', 'WRITES') AND coalesce(r.attributes->>'access', 'CALLED') <> 'DECLARED_ONLY'
ORDER BY 1, 2, 3, 6"""


@dataclass
class _Access:
    service_id: str
    scan_id: str
    record_id: str
    datasource: str | None
    ops: set[str] = field(default_factory=set)


def align_data(con) -> tuple[list[Row], list[Finding]]:
    """The DATA rule, single-writer violations and direct cross-service data access."""
    by_table: dict[str, dict[tuple[str, str], _Access]] = defaultdict(dict)
    for r in _fetch(con, _ACCESS):
        a = by_table[r["urn"]].setdefault((r["scan_id"], r["record_id"]),
                                          _Access(r["service_id"], r["scan_id"], r["record_id"], r["datasource"]))
        a.ops.add(r["op"])
    rows: list[Row] = []
    findings: list[Finding] = []
    for urn in sorted(by_table):
        accs = sorted(by_table[urn].values(), key=lambda a: (a.service_id, a.scan_id, a.record_id))
        for w in accs:
            if "WRITE" not in w.ops:
                continue
            for o in accs:
                if o.service_id == w.service_id:
                    continue
                if w.datasource is not None and o.datasource is not None and w.datasource != o.datasource:
                    continue
                known = w.datasource is not None and o.datasource is not None
                rows.append(Row("DATA", urn, (w.service_id, w.scan_id), _ref(w.scan_id, w.record_id),
                                _ref(w.scan_id, w.record_id), (o.service_id, o.scan_id), _ref(o.scan_id, o.record_id),
                                None, "RESOLVED" if known else "AMBIGUOUS",
                                "TABLE_DATASOURCE" if known else "TABLE_ONLY",
                                [] if known else [{"service_id": o.service_id, "scan_id": o.scan_id,
                                                   "record_id": o.record_id}],
                                {"datasource": w.datasource, "accessor_datasource": o.datasource,
                                 "accessor_ops": sorted(o.ops)}))
        findings.extend(_ownership(urn, accs))
    return rows, findings


def _ownership(urn: str, accs: list[_Access]) -> Iterable[Finding]:
    """Single-writer violations and direct cross-service accesses of one logical table, per datasource
    (accesses with an unknown datasource join every datasource, AMBIGUOUS)."""
    datasources = sorted({a.datasource for a in accs if a.datasource is not None}) or [None]
    for ds in datasources:
        group = [a for a in accs if a.datasource in (ds, None)]
        uncertain = any(a.datasource is None for a in group)
        writers = sorted({a.service_id for a in group if "WRITE" in a.ops})
        where = f"{urn}@{ds or '?'}"
        refs = [_ref(a.scan_id, a.record_id) for a in group]
        if len(writers) > 1:
            yield Finding("SINGLE_WRITER_VIOLATION", None, urn, "AMBIGUOUS" if uncertain else "RESOLVED",
                          [_ref(a.scan_id, a.record_id) for a in group if "WRITE" in a.ops], writers,
                          f"table {where} is written by {len(writers)} services: {', '.join(writers)}")
        elif len(writers) == 1:
            owner = writers[0]
            for a in group:
                if a.service_id == owner:
                    continue
                yield Finding("CROSS_SERVICE_DATA_ACCESS", a.service_id, urn,
                              "AMBIGUOUS" if uncertain else "RESOLVED", refs, [owner],
                              f"{a.service_id} {'/'.join(sorted(a.ops)).lower()}s table {where}, which {owner} "
                              "alone writes")


# ------------------------------------------------------------------------------------------- build

ALIGNERS = (align_rpc, align_http, align_unresolved_remote, align_mq, align_data)


def _insert(con, table: str, columns: dict[str, str], records: list[dict[str, Any]]) -> None:
    """Insert records through a temporary newline-delimited JSON file (DuckDB reads it in bulk)."""
    if not records:
        return
    with tempfile.TemporaryDirectory(prefix="diting-align-") as tmp:
        path = Path(tmp) / f"{table}.jsonl"
        with path.open("w", encoding="utf-8") as fh:
            for r in records:
                fh.write(json.dumps(r, sort_keys=True, ensure_ascii=False) + "\n")
        spec = ", ".join(f"'{c}': '{t}'" for c, t in columns.items())
        names = ", ".join(f'"{c}"' for c in columns)
        con.execute(f"INSERT INTO {table} SELECT {names} FROM read_json(?, {READ_JSONL_OPTIONS}, "
                    f"columns = {{{spec}}})", [str(path)])


def realign(con) -> dict[str, int]:
    """Recompute ``alignment`` and ``graph_findings`` over the current packages (inside the caller's
    transaction). Returns row counts by edge kind and finding code."""
    con.execute(ALIGNMENT_DDL)
    con.execute(FINDINGS_DDL)
    con.execute("DELETE FROM alignment")
    con.execute("DELETE FROM graph_findings")
    rows: list[dict[str, Any]] = []
    findings: list[dict[str, Any]] = []
    for aligner in ALIGNERS:
        r, f = aligner(con)
        rows.extend(x.record() for x in r)
        findings.extend(x.record() for x in f)
    _insert(con, "alignment", _COLUMNS, rows)
    _insert(con, "graph_findings", _FINDING_COLUMNS, findings)
    counts: dict[str, int] = defaultdict(int)
    for r in rows:
        counts[r["edge_kind"]] += 1
    for f in findings:
        counts[f["code"]] += 1
    return dict(sorted(counts.items()))
