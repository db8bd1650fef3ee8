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
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

from diting.graph.align_data import align_data
from diting.graph.align_http import align_http, align_unresolved_remote
from diting.graph.align_mq import align_mq
from diting.graph.align_rows import ALIGNMENT_DDL, COLUMNS, FINDING_COLUMNS, FINDINGS_DDL
from diting.graph.align_rpc import align_rpc
from diting.ir.canonical import READ_JSONL_OPTIONS


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
    _insert(con, "alignment", COLUMNS, rows)
    _insert(con, "graph_findings", FINDING_COLUMNS, findings)
    counts: dict[str, int] = defaultdict(int)
    for r in rows:
        counts[r["edge_kind"]] += 1
    for f in findings:
        counts[f["code"]] += 1
    return dict(sorted(counts.items()))
