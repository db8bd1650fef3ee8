"""The RPC rule (docs/alignment.md §4): consumer bindings matched to provider bindings by urn, signature
and alias/group/version."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from typing import Any

from diting.graph.align_rows import (CONSUMERS, CONTRACT_BINDINGS, Finding, Row, attrs_of, fetch, protocol_of,
                                     protocols, row_ref)


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




def align_rpc(con) -> tuple[list[Row], list[Finding]]:
    """The RPC rule over the consumer and provider bindings of the protocols aligned as RPC (JSF, Dubbo …)."""
    protos = protocols(con)
    rpc = protos.of("RPC")
    consumers = [r for r in fetch(con, CONSUMERS) if protocol_of(r) in rpc]
    providers: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for p in fetch(con, CONTRACT_BINDINGS.format(kind="EXPOSES", role="PROVIDED")):
        if protocol_of(p) in rpc:
            providers[p["urn"]].append(p)
    rows: list[Row] = []
    findings: list[Finding] = protos.findings()  # reported once, by the first aligner
    consumed: set[tuple[str, str]] = set()
    for c in consumers:
        cattrs, csig = attrs_of(c["rel_attrs"]), _sig(c["signature"])
        if c["rel_kind"] != "BINDS_TO":  # no consumer binding: its alias/group/version are unknown
            cattrs = {k: v for r in _BINDING_ROLES for k, v in ((r, None), (f"{r}_resolution", "UNKNOWN"))}
        src_ref, node = row_ref(c["scan_id"], c["rel_id"]), row_ref(c["scan_id"], c["contract_id"])
        # candidates: (service, scan, contract) → (basis, provider binding relations)
        found: dict[tuple[str, str, str], tuple[str, list[str]]] = {}
        sig_ok = False
        for p in providers.get(c["urn"], []):
            basis = signature_match(csig, _sig(p["signature"]))
            if basis is None:
                continue
            sig_ok = True
            if not bindings_match(cattrs, attrs_of(p["rel_attrs"])):
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
                            row_ref(k[1], k[2]), row_ref(k[1], sorted(rels)[0]), status, basis, cands))
    # ORPHAN_ENTRY: an RPC contract nobody in the estate consumes
    seen: set[tuple[str, str]] = set()
    for ps in providers.values():
        for p in ps:
            k = (p["scan_id"], p["contract_id"])
            if k in consumed or k in seen:
                continue
            seen.add(k)
            findings.append(Finding("ORPHAN_ENTRY", p["service_id"], p["urn"], "RESOLVED",
                                    [row_ref(p["scan_id"], p["contract_id"])], [],
                                    f"{p['service_id']} provides {p['urn']}({','.join(_sig(p['signature']))}); "
                                    "no current package consumes it"))
    return rows, findings


def _binding_text(known: dict[str, Any]) -> str:
    return ", ".join(f"{k}={'?' if v is None else v}" for k, v in known.items() if v != "")
