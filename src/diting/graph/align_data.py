"""The DATA rule (docs/alignment.md §7): services sharing a logical table, single-writer and cross-service
access findings."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Iterable

from diting.graph.align_rows import Finding, Row, SERVICES, fetch, row_ref


#: one row per (service, table entity, op) of counted accesses in current service packages
_ACCESS = f"""
SELECT DISTINCT s.service_id, t.scan_id, t.record_id, t.urn, t.datasource,
       CASE r.kind WHEN 'WRITES' THEN 'WRITE' ELSE 'READ' END AS op
FROM relations r JOIN ({SERVICES}) s ON s.scan_id = r.scan_id
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
    for r in fetch(con, _ACCESS):
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
                rows.append(Row("DATA", urn, (w.service_id, w.scan_id), row_ref(w.scan_id, w.record_id),
                                row_ref(w.scan_id, w.record_id), (o.service_id, o.scan_id), row_ref(o.scan_id, o.record_id),
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
        refs = [row_ref(a.scan_id, a.record_id) for a in group]
        if len(writers) > 1:
            yield Finding("SINGLE_WRITER_VIOLATION", None, urn, "AMBIGUOUS" if uncertain else "RESOLVED",
                          [row_ref(a.scan_id, a.record_id) for a in group if "WRITE" in a.ops], writers,
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
