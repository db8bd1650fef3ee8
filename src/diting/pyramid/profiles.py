"""L3 service profiles (docs/pyramid.md §5): what a service exposes, consumes, owns and
depends on, each list read from the graph, with RESPONSIBILITY and BOUNDARY statements rendered
from facts (never from the service's name) and the gaps that keep a profile from being complete.
"""

from __future__ import annotations

import json
from typing import Any

from diting.pyramid.cards import digest
from diting.pyramid.facts import PackageFacts
from diting.pyramid.templates import statement



def data_rows(con) -> list[dict[str, Any]]:
    """The DATA rows of the graph's cross-service alignment (``cross_service_edges``): one per (writer,
    other accessor) of a logical table, refs as ``(scan_id, record_id)`` of each side's TABLE entity."""
    cols = ["urn", "src_service", "src_ref", "dst_service", "dst_ref", "resolution_status", "match_basis"]
    return [dict(zip(cols, r)) for r in con.execute(
        "SELECT urn, src_service, (src_ref.scan_id, src_ref.record_id), dst_service, (dst_ref.scan_id, "
        "dst_ref.record_id), resolution_status, match_basis FROM cross_service_edges WHERE edge_kind = 'DATA' "
        "ORDER BY ALL").fetchall()]


def alignment_rows(con) -> list[dict[str, Any]]:
    """The RPC, HTTP and MQ alignment rows of the current packages, refs as record ids (read once for
    every profile and flow)."""
    cols = ["edge_kind", "urn", "src_service", "src_scan_id", "src_ref", "src_node_ref", "dst_service", "dst_scan_id",
            "dst_ref", "resolution_status", "match_basis"]
    return [dict(zip(cols, r)) for r in con.execute(
        "SELECT edge_kind, urn, src_service, src_scan_id, src_ref.record_id, src_node_ref.record_id, dst_service, "
        "dst_scan_id, dst_ref.record_id, resolution_status, match_basis FROM alignment WHERE edge_kind IN "
        "('RPC', 'HTTP', 'MQ') ORDER BY ALL").fetchall()]


def _contract_groups(facts: PackageFacts, contracts: list[str]) -> dict[tuple[str, str], list[tuple[str, str]]]:
    """Provided contracts grouped for one statement each: an RPC interface with its methods, an HTTP
    path's first segment with its endpoints. ``(protocol, group) → [(contract rid, member)]``."""
    out: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for c in contracts:
        e = facts.entities[c]
        urn = e["urn"] or ""
        protocol = e["attributes"].get("protocol") or urn.split("://", 1)[0] or "?"
        params = ",".join(p.rsplit(".", 1)[-1] for p in e["signature"])
        if protocol == "http" and "://" in urn:
            host_path, _, verb = urn.partition("#")
            host, _, path = host_path.split("://", 1)[1].partition("/")
            group = f"http://{host}/{path.split('/', 1)[0]}"
            member = f"{verb} /{path}"
        else:
            group, _, method = urn.partition("#")
            member = f"{method}({params})"
        out.setdefault((protocol, group), []).append((c, member))
    return out


#: library packages of data stores diting does not model as tables or caches: calls into them are
#: resolved calls, not reads or writes, and a profile says so rather than list no such access
UNMODELLED_STORES = {"org.springframework.data.mongodb": "MongoDB", "com.mongodb": "MongoDB",
                     "org.springframework.data.elasticsearch": "Elasticsearch", "org.elasticsearch": "Elasticsearch",
                     "org.springframework.data.redis": "Redis", "redis.clients": "Redis",
                     "org.springframework.data.cassandra": "Cassandra"}


def _unmodelled_stores(facts: PackageFacts, reached: set[str] | None) -> list[dict[str, str]]:
    """Gaps for data access the pyramid cannot show, in code an entry reaches (all code without
    ``reached``): calls into an unmodelled store's library, and cache reads and writes whose key does
    not fold (a wrapper taking the key as a parameter)."""
    counts: dict[str, int] = {}
    # a call a probe turned into a cache or table access is modelled: it has a READS/WRITES at its site
    modelled = {r["callsite"] for r in facts.relations.values() if r["kind"] in ("READS", "WRITES") and r["callsite"]}
    for r in facts.relations.values():
        if r["kind"] == "CALLS" and r["status"] == "RESOLVED" and (r["target"] or "").startswith("ext:") and \
                r["callsite"] not in modelled and (reached is None or r["source"] in reached):
            name = r["target"][4:]
            for prefix, store in UNMODELLED_STORES.items():
                if name.startswith(prefix + "."):
                    counts[store] = counts.get(store, 0) + 1
    gaps = [{"code": "DATA_STORE_NOT_MODELLED", "target": store,
             "reason": f"{n} call(s) into {store} no probe models; their reads and writes are not in the "
                       "tables or caches above"}
            for store, n in sorted(counts.items())]
    keys = sum(1 for r in facts.relations.values() if r["kind"] in ("READS", "WRITES") and r["status"] != "RESOLVED"
               and "protocol" in (r["match_keys"] or {}) and "key_expression" in (r["match_keys"] or {})
               and (reached is None or r["source"] in reached))
    if keys:
        gaps.append({"code": "CACHE_KEY_UNRESOLVED", "target": facts.scan_id,
                     "reason": f"{keys} cache read(s) or write(s) whose key does not fold (often a wrapper taking "
                               "the key as a parameter); their prefixes are not among the cache prefixes"})
    return gaps


def _names(services: set[str] | list[str]) -> str:
    s = sorted(x for x in services if x)
    return ", ".join(s) if s else "nobody in the estate"


def _party(service: str, status: str, basis: str) -> str:
    """A service on the other side of a boundary, with what makes the match less than plain."""
    notes = (["gateway route"] if basis.startswith("ROUTE_") else []) + ([status] if status != "RESOLVED" else [])
    return service + (f" ({', '.join(notes)})" if notes else "")


def _boundary(direction: str, edge_kind: str, subject: str, urn: str | None, service: str | None, status: str,
              basis: str) -> dict[str, Any]:
    return {"direction": direction, "edge_kind": edge_kind, "subject": subject, "urn": urn, "service_id": service,
            "resolution_status": status, "match_basis": basis}


def boundaries(facts: PackageFacts, alignment: list[dict[str, Any]],
               data: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every alignment row that crosses this package's boundary, from its side: INBOUND — who depends
    on it (a caller of a contract it provides, a subscriber of a topic it publishes, another accessor
    of a table it writes); OUTBOUND — what it depends on (the provider of a contract it consumes, the
    publisher of a topic it takes, another writer of a table it uses). Each
    ``{direction, edge_kind, subject, urn, service_id, resolution_status, match_basis}``: ``subject``
    the package's own record (contract, topic, subscribing entry, table, or its SERVICE when a
    gateway routes to it as a whole), ``service_id`` the other side (None when nobody is found)."""
    scan = facts.scan_id
    out = []
    for r in alignment:
        if r["edge_kind"] in ("RPC", "HTTP"):
            if r["dst_scan_id"] == scan:
                out.append(_boundary("INBOUND", r["edge_kind"], r["dst_ref"], r["urn"], r["src_service"],
                                     r["resolution_status"], r["match_basis"]))
            if r["src_scan_id"] == scan and r["src_node_ref"]:
                out.append(_boundary("OUTBOUND", r["edge_kind"], r["src_node_ref"], r["urn"], r["dst_service"],
                                     r["resolution_status"], r["match_basis"]))
        else:  # MQ: the publisher's topic to each subscriber entry
            if r["src_scan_id"] == scan and r["src_ref"] in facts.relations:
                out.append(_boundary("INBOUND", "MQ", facts.relations[r["src_ref"]]["target"] or r["src_ref"],
                                     r["urn"], r["dst_service"], r["resolution_status"], r["match_basis"]))
            if r["dst_scan_id"] == scan:
                out.append(_boundary("OUTBOUND", "MQ", r["dst_ref"], r["urn"], r["src_service"],
                                     r["resolution_status"], r["match_basis"]))
    for r in data:  # src is the writer: its table is depended on by the other accessor
        if r["src_ref"][0] == scan:
            out.append(_boundary("INBOUND", "DATA", r["src_ref"][1], r["urn"], r["dst_service"],
                                 r["resolution_status"], r["match_basis"]))
        if r["dst_ref"][0] == scan:
            out.append(_boundary("OUTBOUND", "DATA", r["dst_ref"][1], r["urn"], r["src_service"],
                                 r["resolution_status"], r["match_basis"]))
    unique = {tuple(b.values()): b for b in out}
    return [unique[k] for k in sorted(unique, key=lambda k: tuple("" if v is None else v for v in k))]


def _responsibility_statements(facts: PackageFacts, entries: list[str],
                                provided: list[str]) -> list[dict[str, Any]]:
    """RESPONSIBILITY statements of what the service serves: one for its serving entries (counted by
    kind; a MAIN entry starts the service and serves nothing) and one per group of provided contracts
    (:func:`_contract_groups`)."""
    svc = facts.service_id
    ents = facts.entities
    stmts: list[dict[str, Any]] = []
    serving = [r for r in entries if ents[r]["entry_kind"] != "MAIN"]  # a main method starts, it serves nothing
    if serving:
        kinds: dict[str, int] = {}
        for r in serving:
            kinds[ents[r]["entry_kind"]] = kinds.get(ents[r]["entry_kind"], 0) + 1
        stmts.append(statement("RESPONSIBILITY_ENTRIES", [(r, "entry") for r in serving], service=svc,
                               count=len(serving), ies="y" if len(serving) == 1 else "ies",
                               kinds=", ".join(f"{n} {k}" for k, n in sorted(kinds.items()))))
    for (protocol, group), members in sorted(_contract_groups(facts, provided).items()):
        names = sorted({m for _, m in members})
        stmts.append(statement("RESPONSIBILITY_PROVIDES", [(c, "contract") for c, _ in members], service=svc,
                               count=len(members), protocol=protocol, group=group,
                               members=", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")))
    return stmts


def _consumed_contracts(facts: PackageFacts, consumed: list[str], rows_out: list[dict[str, Any]],
                        stmts: list[dict[str, Any]], gaps: list[dict[str, str]]) -> list[dict[str, Any]]:
    """Each consumed contract with its providers from the outbound alignment rows ``rows_out``:
    ``[{contract, urn, resolution_status, providers}]`` (the weakest row status, UNRESOLVED with no
    row). Appends a BOUNDARY_CALLS statement per contract to ``stmts`` and a ``CONSUMED_<status>``
    gap to ``gaps`` for each not RESOLVED."""
    svc = facts.service_id
    consumed_out = []
    for c in consumed:
        rows = [r for r in rows_out if r["src_node_ref"] == c]
        providers = sorted({r["dst_service"] for r in rows if r["resolution_status"] == "RESOLVED"})
        status = min((r["resolution_status"] for r in rows), key=["UNRESOLVED", "AMBIGUOUS", "RESOLVED"].index,
                     default="UNRESOLVED")
        consumed_out.append({"contract": c, "urn": facts.name(c), "resolution_status": status,
                             "providers": sorted({r["dst_service"] for r in rows if r["dst_service"]})})
        text = _names(providers) if providers else (
            f"no single provider ({status}: " + ", ".join(sorted({r["match_basis"] for r in rows})) + ")"
            if rows else "no provider (not aligned)")
        stmts.append(statement("BOUNDARY_CALLS", [(c, "contract")], service=svc, urn=facts.name(c), providers=text))
        if status != "RESOLVED":
            gaps.append({"code": f"CONSUMED_{status}", "target": c, "reason": f"{facts.name(c)}: {text}"})
    return consumed_out


def _called_by_statements(facts: PackageFacts, bounds: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """BOUNDARY_CALLED_BY statements: who calls what it provides — each provided contract (or the
    service as a whole, or a gateway route entry) that an INBOUND RPC or HTTP boundary names, with the
    services aligned to it. A subject that is none of those records is left out."""
    ents = facts.entities
    called: dict[str, list[dict[str, Any]]] = {}
    for b in bounds:
        if b["direction"] == "INBOUND" and b["edge_kind"] in ("RPC", "HTTP") and b["service_id"]:
            called.setdefault(b["subject"], []).append(b)
    stmts = []
    for subject, rows in sorted(called.items()):
        kind = ents[subject]["kind"] if subject in ents else None
        fam = {"CONTRACT": "contract", "ENTRY": "entry", "SERVICE": "service"}.get(kind or "")
        if fam is None:
            continue
        name = facts.name(subject) if kind != "SERVICE" else ", ".join(sorted({b["urn"] for b in rows if b["urn"]}))
        callers = sorted({_party(b["service_id"], b["resolution_status"], b["match_basis"]) for b in rows})
        stmts.append(statement("BOUNDARY_CALLED_BY", [(subject, fam)], service=facts.service_id, urn=name,
                               callers=", ".join(callers)))
    return stmts


def _topic_statements(facts: PackageFacts, rows_out: list[dict[str, Any]], rows_in: list[dict[str, Any]],
                      stmts: list[dict[str, Any]]) -> tuple[list[str], list[str]]:
    """The topics it publishes and subscribes to, ``(topics_out, topics_in)`` (record ids, sorted).
    Appends a BOUNDARY_PUBLISHES statement per published topic (its subscribers from the MQ rows of
    ``rows_out``) and a BOUNDARY_SUBSCRIBES per subscribed one (its publishers from ``rows_in``) to
    ``stmts``."""
    svc = facts.service_id
    rels = facts.relations
    topics_out = sorted({r["target"] for r in rels.values() if r["kind"] == "PUBLISHES" and r["target"]})
    for t in topics_out:
        sends = {rid for rid, r in rels.items() if r["kind"] == "PUBLISHES" and r["target"] == t}
        subs = {_party(r["dst_service"], r["resolution_status"], r["match_basis"]) for r in rows_out
                if r["edge_kind"] == "MQ" and r["src_ref"] in sends and r["dst_service"]}
        stmts.append(statement("BOUNDARY_PUBLISHES", [(t, "topic")], service=svc, topic=facts.name(t),
                               subscribers=f"{_names(subs)} subscribe{'s' if len(subs) == 1 else ''}" if subs
                               else "no current subscriber"))
    topics_in = sorted({r["target"] for r in rels.values() if r["kind"] == "SUBSCRIBES" and r["target"]})
    for t in topics_in:
        subscribers = {r["source"] for r in rels.values() if r["kind"] == "SUBSCRIBES" and r["target"] == t}
        # joined on the subscribing entry: a RabbitMQ binding or dead-letter route publishes another urn
        pubs = {_party(r["src_service"], r["resolution_status"], r["match_basis"]) for r in rows_in
                if r["edge_kind"] == "MQ" and r["dst_ref"] in subscribers and r["src_service"]}
        stmts.append(statement("BOUNDARY_SUBSCRIBES", [(t, "topic")], service=svc, topic=facts.name(t),
                               publishers=_names(pubs)))
    return topics_out, topics_in


def _table_others(rid: str | None, bounds: list[dict[str, Any]]) -> dict[str, tuple[str, str, str]]:
    """The other side of each DATA boundary of table ``rid``: ``service → (op, resolution_status,
    match_basis)`` with ``op`` "writes" (a writer of a table it uses) or "reads" (an accessor of a
    table it writes; who also writes it has a row the other way). A writer wins over a reader, then
    a RESOLVED match over an AMBIGUOUS one."""
    others: dict[str, tuple[str, str, str]] = {}
    for b in bounds:
        if b["edge_kind"] == "DATA" and b["subject"] == rid and b["service_id"]:
            op = "writes" if b["direction"] == "OUTBOUND" else "reads"
            cur = others.get(b["service_id"])
            # a writer over a reader; a RESOLVED match over an AMBIGUOUS one
            if cur is None or (op, b["resolution_status"] == "RESOLVED") > (cur[0], cur[1] == "RESOLVED"):
                others[b["service_id"]] = (op, b["resolution_status"], b["match_basis"])
    return others


def _table_access(con, facts: PackageFacts, bounds: list[dict[str, Any]],
                  stmts: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """The tables it accesses, read from the graph's ``table_access``: ``{tables_written, tables_read,
    sole_writer_of, sharded_tables}`` (each ``{logical_table, datasource}``, a sharded one with its
    shard keys). Appends RESPONSIBILITY_SOLE_WRITER for a table it alone writes and
    BOUNDARY_SHARED_TABLE for one another service reads or writes to ``stmts``."""
    svc = facts.service_id
    accessed = con.execute("SELECT DISTINCT logical_table, datasource, op, is_sharded, confirmed_shard_key, "
                           "candidate_shard_keys, shard_key_status FROM table_access WHERE service_id = ? AND "
                           "via_ref.scan_id = ? ORDER BY ALL", [svc, facts.scan_id]).fetchall()
    table_rid = {(e["urn"], e["datasource"]): r for r, e in facts.entities.items() if e["kind"] == "TABLE"}
    written, read, sole, sharded = [], [], [], []
    mine: dict[tuple[str, str | None], set[str]] = {}
    for table, ds, op, is_sharded, key, cands, key_status in accessed:
        (written if op == "WRITE" else read).append({"logical_table": table, "datasource": ds})
        mine.setdefault((table, ds), set()).add(op)
        if is_sharded and not any(s["logical_table"] == table and s["datasource"] == ds for s in sharded):
            sharded.append({"logical_table": table, "datasource": ds, "confirmed_shard_key": key,
                            "candidate_shard_keys": json.loads(cands) if isinstance(cands, str) else (cands or []),
                            "shard_key_status": key_status})
    for (table, ds), ops in sorted(mine.items(), key=lambda kv: (kv[0][0], kv[0][1] or "")):
        rid = table_rid.get((table, ds))
        others = _table_others(rid, bounds)
        if "WRITE" in ops and not any(o[0] == "writes" for o in others.values()):
            sole.append({"logical_table": table, "datasource": ds})
            if rid:
                stmts.append(statement("RESPONSIBILITY_SOLE_WRITER", [(rid, "table")], service=svc, table=table))
        if rid and others:
            said = [f"{_party(o, st, basis)} {op} it" for o, (op, st, basis) in sorted(others.items())]
            stmts.append(statement("BOUNDARY_SHARED_TABLE", [(rid, "table")], service=svc,
                                   op="writes" if "WRITE" in ops else "reads", table=table, others=", ".join(said)))
    return {"tables_written": written, "tables_read": read, "sole_writer_of": sole, "sharded_tables": sharded}


def _evidence_gaps(con, facts: PackageFacts, cards: list[dict[str, Any]], reached: set[str] | None,
                   stmts: list[dict[str, Any]], gaps: list[dict[str, str]]) -> None:
    """Appends to ``gaps`` (``{code, target, reason}``) what keeps the profile from being complete
    beyond its consumed contracts: the graph's findings about the service (one not already said of
    the same urn), the package's diagnostics by code, incomplete entry cards, unmodelled data stores
    (:func:`_unmodelled_stores`), and no RESPONSIBILITY or no BOUNDARY statement in ``stmts``."""
    svc = facts.service_id
    for code, urn, msg in con.execute("SELECT code, urn, message FROM graph_findings WHERE (service_id = ? OR "
                                      "list_contains(related_services, ?)) AND code IN ('UNRESOLVED_CALL', "
                                      "'SINGLE_WRITER_VIOLATION', 'CROSS_SERVICE_DATA_ACCESS') ORDER BY ALL",
                                      [svc, svc]).fetchall():
        if not any(g["reason"].startswith(urn or "\0") for g in gaps):
            gaps.append({"code": code, "target": urn or "?", "reason": msg})
    for code, n in con.execute("SELECT code, count(*) FROM diagnostics WHERE scan_id = ? AND code IN "
                               "('ENTRY_UNRESOLVED', 'PARSE_ERROR', 'FILE_UNREADABLE', 'FILE_TOO_LARGE', "
                               "'ENCODING_FALLBACK', 'BUDGET_EXHAUSTED') GROUP BY ALL ORDER BY ALL",
                               [facts.scan_id]).fetchall():
        gaps.append({"code": code, "target": facts.scan_id, "reason": f"{n} diagnostic(s) of the package"})
    incomplete = [c for c in cards if not c["complete"]]
    if incomplete:
        codes: dict[str, int] = {}
        for c in incomplete:
            for u in c["unresolved"]:
                codes[u["code"]] = codes.get(u["code"], 0) + 1
        gaps.append({"code": "CARDS_INCOMPLETE", "target": facts.scan_id,
                     "reason": f"{len(incomplete)} of {len(cards)} entry cards have unresolved items (" +
                               ", ".join(f"{k} {n}" for k, n in sorted(codes.items())) + ")"})
    gaps += _unmodelled_stores(facts, reached)
    if not any(s["role"] == "RESPONSIBILITY" for s in stmts):
        gaps.append({"code": "NO_RESPONSIBILITY_EVIDENCE", "target": facts.scan_id,
                     "reason": "no entry, provided contract or solely written table to state a responsibility from"})
    if not any(s["role"] == "BOUNDARY" for s in stmts):
        gaps.append({"code": "NO_BOUNDARY_EVIDENCE", "target": facts.scan_id,
                     "reason": "no call, message or shared table crosses the service's boundary in either direction: "
                               "it calls, publishes and shares nothing, and no service calls it, takes its "
                               "messages or uses the tables it writes"})


def service_profile(con, facts: PackageFacts, label: str, cards: list[dict[str, Any]],
                    data: list[dict[str, Any]], alignment: list[dict[str, Any]],
                    reached: set[str] | None = None) -> dict[str, Any]:
    """The profile of one service package (``cards``: its entry cards; ``data``: :func:`data_rows`;
    ``alignment``: :func:`alignment_rows`; ``reached``: the methods its entries reach, where a gap
    about code matters). Its boundaries run both ways (:func:`boundaries`): what it calls, publishes
    and shares, and who calls its contracts, takes its messages and uses the tables it writes."""
    ents = facts.entities
    entries = sorted(r for r, e in ents.items() if e["kind"] == "ENTRY")
    provided = sorted(r for r, e in ents.items() if e["kind"] == "CONTRACT" and e["role"] == "PROVIDED")
    consumed = sorted(r for r, e in ents.items() if e["kind"] == "CONTRACT" and e["role"] == "CONSUMED")
    rows_out = [r for r in alignment if r["src_scan_id"] == facts.scan_id]
    rows_in = [r for r in alignment if r["dst_scan_id"] == facts.scan_id]
    gaps: list[dict[str, str]] = []
    stmts = _responsibility_statements(facts, entries, provided)
    consumed_out = _consumed_contracts(facts, consumed, rows_out, stmts, gaps)
    bounds = boundaries(facts, alignment, data)
    stmts += _called_by_statements(facts, bounds)
    topics_out, topics_in = _topic_statements(facts, rows_out, rows_in, stmts)
    tables = _table_access(con, facts, bounds, stmts)
    configs = [{"config_key": k, "value_resolution": v} for k, v in con.execute(
        "SELECT DISTINCT config_key, value_resolution FROM config_bindings WHERE scan_id = ? ORDER BY ALL",
        [facts.scan_id]).fetchall()]
    caches = sorted({e["urn"] for e in ents.values() if e["kind"] == "CACHE_KEY" and e["urn"]})
    _evidence_gaps(con, facts, cards, reached, stmts, gaps)
    stmts.sort(key=lambda x: (x["role"] != "RESPONSIBILITY", x["template"]))  # stable: by role, then template
    profile = {
        "service_id": facts.service_id, "label": label, "scan_id": facts.scan_id,
        "implementation_scope": facts.implementation_scope,
        "entries": [{"record_id": r, "entry_kind": ents[r]["entry_kind"], "urn": ents[r]["urn"]} for r in entries],
        "contracts_exposed": [{"contract": c, "urn": facts.name(c)} for c in provided],
        "contracts_consumed": consumed_out,
        "topics_in": [facts.name(t) for t in topics_in],
        "topics_out": [facts.name(t) for t in topics_out],
        **tables,
        "config_keys": configs, "cache_prefixes": caches, "boundaries": bounds,
        "statements": stmts, "gaps": gaps, "complete": not gaps,
    }
    profile["revision_id"] = "profrev:" + digest({k: v for k, v in profile.items() if k != "scan_id"})[:24]
    return profile
