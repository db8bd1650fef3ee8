"""The alignment tables' shared pieces (docs/alignment.md): the edge kinds and ``match_basis``
vocabulary, the ``alignment`` and ``graph_findings`` tables, :class:`Row` and :class:`Finding`, the
protocol table of the current packages, and the queries every rule reads (the current services, the
contracts and their bindings). The rules are ``graph/align_rpc.py``, ``align_http.py``, ``align_mq.py``
and ``align_data.py``; ``graph/align.py`` runs them."""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any


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

COLUMNS = {
    "edge_kind": "VARCHAR", "urn": "VARCHAR", "src_service": "VARCHAR", "src_scan_id": "VARCHAR",
    "src_ref": "STRUCT(scan_id VARCHAR, record_id VARCHAR)", "src_node_ref": "STRUCT(scan_id VARCHAR, record_id VARCHAR)",
    "dst_service": "VARCHAR", "dst_scan_id": "VARCHAR", "dst_ref": "STRUCT(scan_id VARCHAR, record_id VARCHAR)",
    "dst_binding_ref": "STRUCT(scan_id VARCHAR, record_id VARCHAR)", "resolution_status": "VARCHAR",
    "match_basis": "VARCHAR",
    "candidate_targets": "STRUCT(service_id VARCHAR, scan_id VARCHAR, record_id VARCHAR)[]", "match_keys": "JSON"}
FINDING_COLUMNS = {
    "code": "VARCHAR", "severity": "VARCHAR", "service_id": "VARCHAR", "urn": "VARCHAR",
    "resolution_status": "VARCHAR", "subject_refs": "STRUCT(scan_id VARCHAR, record_id VARCHAR)[]",
    "related_services": "VARCHAR[]", "message": "VARCHAR"}

#: the current, deployable packages (a ``lib:`` package — kind LIB — is no service)
SERVICES = "SELECT scan_id, service_id FROM packages WHERE is_current AND kind = 'SERVICE'"


def row_ref(scan_id: str | None, record_id: str | None) -> dict[str, str] | None:
    """A ``{scan_id, record_id}`` reference of a row, None when either is unknown."""
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


def attrs_of(raw: Any) -> dict[str, Any]:
    """A JSON ``attributes`` column as a dict (DuckDB hands JSON back as text; NULL is empty)."""
    if raw is None:
        return {}
    return raw if isinstance(raw, dict) else json.loads(raw)


def fetch(con, sql: str) -> list[dict[str, Any]]:
    """The rows of ``sql`` as dicts keyed by column name."""
    cur = con.execute(sql)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


# ----------------------------------------------------------------------------- contracts and protocols

CONTRACT_BINDINGS = f"""
SELECT s.service_id, r.scan_id, r.record_id AS rel_id, r.kind AS rel_kind, r.attributes AS rel_attrs,
       c.record_id AS contract_id, c.urn, c.signature, c.attributes AS contract_attrs
FROM relations r
JOIN ({SERVICES}) s ON s.scan_id = r.scan_id
JOIN entities c ON c.scan_id = r.scan_id AND c.record_id = r.target_ref.record_id AND c.kind = 'CONTRACT'
WHERE r.kind = '{{kind}}' AND c.role = '{{role}}' AND r.resolution_status = 'RESOLVED'
  AND coalesce(c.attributes->>'loaded', 'true') <> 'false'
ORDER BY r.scan_id, r.record_id"""

#: consumer sources: each consumer binding (BINDS_TO) of a CONSUMED contract; a contract no binding
#: targets (a load-balanced RestTemplate call) has each of its CALLS as a source instead
CONSUMERS = f"""
WITH c AS (
    SELECT s.service_id, e.scan_id, e.record_id, e.urn, e.signature, e.attributes
    FROM entities e JOIN ({SERVICES}) s ON s.scan_id = e.scan_id
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
UNRESOLVED_REMOTE = f"""
SELECT s.service_id, r.scan_id, r.record_id AS rel_id, r.source_ref, r.match_keys, r.attributes AS rel_attrs
FROM relations r JOIN ({SERVICES}) s ON s.scan_id = r.scan_id
WHERE r.resolution_status = 'UNRESOLVED' AND (r.kind = 'CALLS' AND r.attributes->>'dispatch_kind' = 'RPC'
      OR r.kind = 'BINDS_TO' AND r.attributes->>'gateway_route' IS NOT NULL)
ORDER BY r.scan_id, r.record_id"""



def protocol_of(row: dict[str, Any]) -> str:
    """A contract row's protocol: its ``protocol`` attribute, else its urn's scheme."""
    return str(attrs_of(row["contract_attrs"]).get("protocol") or (row["urn"] or "").split("://", 1)[0])


def scheme_of(urn: str | None) -> str:
    """The scheme of a urn (``kafka`` of ``kafka://t``); empty when it has none."""
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
SELECT DISTINCT p.scheme, p.alignment, p.routing FROM protocols p JOIN ({SERVICES}) s ON s.scan_id = p.scan_id
ORDER BY 1, 2, 3"""


def protocols(con) -> Protocols:
    """The :class:`Protocols` of the current packages."""
    seen: dict[str, set[tuple[str, str | None]]] = defaultdict(set)
    for scheme, alignment, routing in con.execute(_PROTOCOLS).fetchall():
        seen[scheme].add((alignment, routing))
    table = {s: next(iter(v)) for s, v in seen.items() if len(v) == 1}
    conflicts = {s: sorted(f"{a}{'/' + r if r else ''}" for a, r in v) for s, v in seen.items() if len(v) > 1}
    return Protocols(table, conflicts)

