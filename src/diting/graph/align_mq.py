"""The MQ rule (docs/alignment.md §6): publishers matched to subscribers by topic and filter, through
RabbitMQ bindings and dead-letter routes."""

from __future__ import annotations

import operator
import re
from collections import defaultdict
from itertools import accumulate
from typing import Any

from diting.graph.align_rows import Finding, Protocols, Row, SERVICES, attrs_of, fetch, protocols, row_ref, scheme_of


_PUBLISHES = f"""
SELECT s.service_id, r.scan_id, r.record_id AS rel_id, r.source_ref, r.resolution_status, r.match_keys,
       r.attributes AS rel_attrs, t.urn
FROM relations r JOIN ({SERVICES}) s ON s.scan_id = r.scan_id
LEFT JOIN entities t ON t.scan_id = r.scan_id AND t.record_id = r.target_ref.record_id
WHERE r.kind = 'PUBLISHES' AND coalesce(r.attributes->>'loaded', 'true') <> 'false'
ORDER BY r.scan_id, r.record_id"""

_SUBSCRIBES = f"""
SELECT s.service_id, r.scan_id, r.record_id AS rel_id, r.source_ref AS entry_ref, r.resolution_status,
       r.attributes AS rel_attrs, t.urn
FROM relations r JOIN ({SERVICES}) s ON s.scan_id = r.scan_id
LEFT JOIN entities t ON t.scan_id = r.scan_id AND t.record_id = r.target_ref.record_id
WHERE r.kind = 'SUBSCRIBES'
ORDER BY r.scan_id, r.record_id"""

#: RabbitMQ bindings: amqp://{exchange}/{key} → amqp-queue://{queue}, and dead-letter routes
#: amqp-queue://{queue} → amqp://{exchange}/{key}, from any current package
_RABBIT_BINDINGS = f"""
SELECT DISTINCT a.urn AS src_urn, b.urn AS dst_urn, coalesce(r.attributes->>'keeps_routing_key', 'false') = 'true'
       AS keeps_key
FROM relations r JOIN ({SERVICES}) s ON s.scan_id = r.scan_id
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
        return self.protos.routing(scheme_of(urn)) == "amqp-exchange"

    def add(self, src_urn: str, dst_urn: str, keeps_key: bool = False) -> None:
        """One BINDS_TO between topics: an exchange binding or a dead-letter route."""
        src, dst = scheme_of(src_urn), scheme_of(dst_urn)
        if self.exchange(src_urn) and self.protos.routing(dst) == "amqp-queue":
            ex, _, key = src_urn[len(src) + 3:].partition("/")
            self.bindings[(src, ex)].append((key, dst_urn))
        elif self.protos.routing(src) == "amqp-queue" and self.exchange(dst_urn):
            ex, _, key = dst_urn[len(dst) + 3:].partition("/")
            self.dead_letter[src_urn].append((dst, ex, None if keeps_key else key))

    def queues(self, urn: str) -> list[tuple[str, str]]:
        """``[(queue urn, how)]`` a send to ``urn`` reaches: through bindings (``RABBIT_BINDING``), then
        through the dead-letter routes of those queues (``RABBIT_DEAD_LETTER``), sorted."""
        scheme = scheme_of(urn)
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
    for s in fetch(con, _SUBSCRIBES):
        if s["urn"] and scheme_of(s["urn"]) in mq and s["resolution_status"] == "RESOLVED":
            subs[s["urn"]].append(s)
    routes = RabbitRoutes(protos)
    for src_urn, dst_urn, keeps_key in con.execute(_RABBIT_BINDINGS).fetchall():
        routes.add(src_urn, dst_urn, keeps_key)
    fed: set[tuple[str, str]] = set()
    for p in fetch(con, _PUBLISHES):
        attrs = attrs_of(p["rel_attrs"])
        src, src_ref = (p["service_id"], p["scan_id"]), row_ref(p["scan_id"], p["rel_id"])
        node = dict(p["source_ref"]) if p["source_ref"] else None
        if attrs.get("protocol") in local:
            continue  # an application event stays inside its service (resolved or not): no cross-service row
        if p["resolution_status"] != "RESOLVED" or not p["urn"]:
            rows.append(Row("MQ", None, src, src_ref, node, None, None, None, "UNRESOLVED", "SOURCE_UNRESOLVED",
                            [], attrs_of(p["match_keys"]) or None))
            continue
        if scheme_of(p["urn"]) not in mq:
            continue  # IN_PROCESS (application events), NONE, or a scheme declared with conflicting alignments
        targets: list[tuple[dict[str, Any], str]] = [(s, "TOPIC") for s in subs.get(p["urn"], [])]
        if routes.exchange(p["urn"]):
            targets += [(s, how) for q, how in routes.queues(p["urn"]) for s in subs.get(q, [])]
        etype = event_type(attrs)
        out: list[tuple[dict[str, Any], str, str]] = []
        for s, how in targets:
            sattrs = attrs_of(s["rel_attrs"])
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
                            dict(s["entry_ref"]), row_ref(s["scan_id"], s["rel_id"]), st, basis,
                            cands if st == "AMBIGUOUS" else []))
    for ss in subs.values():
        for s in ss:
            if (s["scan_id"], s["rel_id"]) in fed:
                continue
            ref = row_ref(s["scan_id"], s["rel_id"])
            rows.append(Row("MQ", s["urn"], None, None, None, (s["service_id"], s["scan_id"]), dict(s["entry_ref"]),
                            ref, "UNRESOLVED", "NO_PUBLISHER", [], {"topic": s["urn"]}))
            findings.append(Finding("UNRESOLVED_CALL", s["service_id"], s["urn"], "UNRESOLVED", [ref], [],
                                    f"{s['service_id']} subscribes to {s['urn']}; no current package publishes "
                                    "anything its filter admits"))
    return rows, findings
