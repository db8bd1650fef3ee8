"""Transactions, recovery and idempotency evidence, and NO_COMPENSATION (docs/callgraph.md §10).

Read from a package's call graph and facts, recorded as attributes with evidence:

- **Transactions**: a method annotated ``@Transactional`` (Spring, JTA; on the method, its class, or the
  in-repo interface or superclass method it implements)
  with a propagation that starts or joins one (not SUPPORTS, NOT_SUPPORTED, NEVER) is a transaction
  root — unless every call of it in the package is a self-invocation (``this.m()`` bypasses the
  proxy) and it is no entry's handler; what a root reaches without an ASYNC call runs inside.
  PUBLISHES, RPC CALLS, method-level table WRITES and CALLS of mapper methods (whose statements write
  the tables) made there — not from a lambda submitted to an executor — get ``in_transaction`` and
  ``transaction_roots`` (the roots' stable_ids), and the roots' annotation lines as evidence: a send
  inside a transaction is a message that may leave before the commit. A send in an ``afterCommit``
  method of a ``TransactionSynchronization`` gets ``after_commit``.
- **Recovery workers**: a SCHEDULED_JOB entry that reads a table and then publishes, calls a remote
  contract or writes a table is a scan-and-retry worker; when it sends and a table it reads is
  written inside a transaction (by another method of the package) it is an outbox relay. The
  entry's ``attributes.recovery`` says which (``OUTBOX_RELAY`` or ``SCAN_AND_RETRY``), the tables it
  reads and writes, topics and contracts, and the transactional writers of the outbox tables.
- **Idempotency guards**: cache writes by ``setNX``/``setIfAbsent``/``putIfAbsent`` get
  ``idempotency_guard = SETNX``.
- **NO_COMPENSATION**: a send or remote call directly inside a ``try`` whose catch clauses only log
  (no effect but JDK calls, no rethrow), with no scheduled worker of the package that publishes the
  same topic or calls the same contract, gets a NO_COMPENSATION diagnostic. Redelivery is read by the
  probes (probes/mq.py: RocketMQ ``maxReconsumeTimes``, Kafka ``@RetryableTopic``); the retry
  and dead-letter configuration of JMQ consumers and of Kafka error handlers configured in beans is not.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from diting.ir import ids
from diting.ir.builder import RefTo
from diting.resolve.callgraph import MAX_REACH_DEPTH, MAX_REACH_METHODS

if TYPE_CHECKING:
    from diting.resolve.callfacts import MethodBody
    from diting.probes.context import ProbeContext
    from diting.resolve.callgraph import PackageCallGraph

_NO_TRANSACTION = ("SUPPORTS", "NOT_SUPPORTED", "NEVER")
_SETNX = {"setNX", "setNx", "setnx", "setIfAbsent", "putIfAbsent", "setnxex"}
_MAX_ROOTS = 5


class RecoveryEvidence:
    """Adds the attributes and diagnostics of the module docstring to one package's records."""

    def __init__(self, probes: "ProbeContext", graph: "PackageCallGraph") -> None:
        self.p = probes
        self.rs = probes.rs
        self.g = graph
        self.by_source: dict[str, list[dict[str, Any]]] = {}
        for rec in self.rs.relations.values():
            self.by_source.setdefault(rec["source_ref"].rid, []).append(rec)
        self.rel_by_site: dict[str, list[dict[str, Any]]] = {}
        for rec in self.rs.relations.values():
            if rec.get("callsite_id"):
                self.rel_by_site.setdefault(rec["callsite_id"], []).append(rec)

    def run(self) -> None:
        self._idempotency()
        in_tx = self._transactions()
        covered = self._workers(in_tx)
        self._no_compensation(covered)

    # ------------------------------------------------------------ helpers
    def _remote(self, rec: dict[str, Any]) -> str | None:
        """What a relation sends or calls remotely (a topic or contract rid, or ``?expr``); None when
        it is neither a send nor a remote call."""
        if rec["kind"] != "PUBLISHES" and not (rec["kind"] == "CALLS" and
                                               rec["attributes"].get("dispatch_kind") == "RPC"):
            return None
        if rec["target_ref"] is not None:
            return rec["target_ref"].rid
        mk = rec.get("match_keys") or {}
        return "?" + str(mk.get("topic_expression") or mk.get("urn") or mk.get("name") or rec["stable_id"].split("|")[2])

    def _tables(self, methods: set[str], kind: str) -> set[str]:
        """TABLE rids the methods read or write (``kind``): directly, or through the statements of
        the mapper methods they call."""
        out: set[str] = set()
        for m in methods:
            for rec in self.by_source.get(m, ()):
                if rec["kind"] == kind and rec["target_ref"] is not None and rec["target_ref"].rid.startswith("table:"):
                    out.add(rec["target_ref"].rid)
                if rec["kind"] == "CALLS":
                    for t in ([rec["target_ref"]] if rec["target_ref"] is not None else []):
                        for b in self.by_source.get(t.rid, ()):
                            if b["kind"] == "BINDS_TO" and b["target_ref"] is not None and \
                                    b["target_ref"].rid.startswith("stmt:"):
                                for w in self.by_source.get(b["target_ref"].rid, ()):
                                    if w["kind"] == kind and w["target_ref"] is not None:
                                        out.add(w["target_ref"].rid)
        return out

    def _mapper_call(self, rec: dict[str, Any]) -> bool:
        """A CALLS of a method bound to a SQL statement (its writes happen inside the caller's transaction)."""
        if rec["kind"] != "CALLS" or rec["target_ref"] is None:
            return False
        return any(b["kind"] == "BINDS_TO" and b["target_ref"] is not None and b["target_ref"].rid.startswith("stmt:")
                   for b in self.by_source.get(rec["target_ref"].rid, ()))

    # ------------------------------------------------------------ idempotency
    def _idempotency(self) -> None:
        for rec in self.rs.relations.values():
            if rec["kind"] == "WRITES" and rec["attributes"].get("operation") in _SETNX:
                rec["attributes"] = dict(rec["attributes"], idempotency_guard="SETNX")

    # ------------------------------------------------------------ transactions
    def _transactions(self) -> dict[str, list[tuple[str, str]]]:
        """METHOD rid → the transaction roots ``(stable, annotation segment)`` it runs under."""
        roots: list[tuple[str, str, str]] = []
        for b in self.g.bodies:
            tx = b.transactional
            if not tx or str(tx.get("propagation", "")).rsplit(".", 1)[-1] in _NO_TRANSACTION:
                continue
            rid = ids.entity_record_id("METHOD", b.stable)
            if rid in self.g.known:
                roots.append((rid, b.stable, self.p.seg(tx.get("path", b.path), tx["line"], tx["line"])))
        # a root called only by self-invocation never goes through the transaction proxy
        callers: dict[str, list[bool]] = {}
        for r in self.g.site_rel.values():
            rec = self.rs.relations[r]
            if rec["kind"] == "CALLS" and rec["target_ref"] is not None:
                callers.setdefault(rec["target_ref"].rid, []).append(bool(rec["attributes"].get("self_invocation")))
        entry_handlers = {e["handler_ref"].rid for e in self.rs.entities.values()
                          if e["kind"] == "ENTRY" and e.get("handler_ref") is not None}
        roots = [r for r in roots if r[0] in entry_handlers or not callers.get(r[0]) or not all(callers[r[0]])]
        under: dict[str, list[tuple[str, str]]] = {}
        for rid, stable, seg in sorted(roots):
            reach, cut = self.g.reachable([rid], sync_only=True)
            if cut:
                self.rs.diagnostic("BUDGET_EXHAUSTED", f"{stable}|transaction-reach",
                                   f"what the transaction of {stable.split('/', 1)[-1]} reaches was walked "
                                   f"{MAX_REACH_DEPTH} calls deep or {MAX_REACH_METHODS} methods wide and no "
                                   "further; sends and calls beyond are not marked in_transaction", [rid], [seg])
            for m in reach:
                under.setdefault(m, []).append((stable, seg))
        for m, rs_ in under.items():
            chosen = sorted(rs_)[:_MAX_ROOTS]
            for rec in self.by_source.get(m, ()):
                if rec["attributes"].get("submitted_by") or rec["attributes"].get("dispatch_kind") == "ASYNC":
                    continue  # runs on another thread, outside the transaction
                if self._remote(rec) is None and rec["kind"] != "WRITES" and not self._mapper_call(rec):
                    continue
                rec["attributes"] = dict(rec["attributes"], in_transaction=True,
                                         transaction_roots=[s for s, _ in chosen])
                have = {r.rid for r in rec["evidence_refs"]}
                rec["evidence_refs"] = rec["evidence_refs"] + [RefTo(seg) for _, seg in chosen if seg not in have]
        for b in self.g.bodies:
            if not b.stable.split("#", 1)[1].startswith("afterCommit("):
                continue
            for rec in self.by_source.get(ids.entity_record_id("METHOD", b.stable), ()):
                if self._remote(rec) is not None:
                    rec["attributes"] = dict(rec["attributes"], after_commit=True)
        return under

    # ------------------------------------------------------------ recovery workers
    def _workers(self, in_tx: dict[str, list[tuple[str, str]]]) -> set[str]:
        """Mark scan-and-retry and outbox-relay jobs; returns the topics and contracts they cover."""
        tx_writes: dict[str, set[str]] = {}
        for m in in_tx:
            for t in self._tables({m}, "WRITES"):
                tx_writes.setdefault(t, set()).update(s for s, _ in in_tx[m])
        covered: set[str] = set()
        for rid, e in sorted(self.rs.entities.items()):
            if e["kind"] != "ENTRY" or e.get("entry_kind") != "SCHEDULED_JOB" or e.get("handler_ref") is None:
                continue
            reach, _ = self.g.reachable([e["handler_ref"].rid])  # a cut walk is the entry's own BUDGET_EXHAUSTED
            remote = sorted({r for m in reach for rec in self.by_source.get(m, ()) if (r := self._remote(rec))})
            covered.update(remote)
            reads = sorted(self._tables(reach, "READS"))
            writes = sorted(self._tables(reach, "WRITES"))
            if not reads or not (remote or writes):
                continue
            outbox = [t for t in reads if t in tx_writes] if remote else []
            e["attributes"] = dict(e["attributes"], recovery={
                "kind": "OUTBOX_RELAY" if outbox else "SCAN_AND_RETRY", "reads_tables": reads,
                "writes_tables": writes, "sends_or_calls": remote,
                "transactional_writers": {t: sorted(tx_writes[t]) for t in outbox}})
        return covered

    # ------------------------------------------------------------ NO_COMPENSATION
    def _no_compensation(self, covered: set[str]) -> None:
        for b in self.g.bodies:
            mrid = ids.entity_record_id("METHOD", b.stable)
            if mrid not in self.g.known or not any(a["kind"] == "CATCH" for a in b.branches):
                continue
            for arm_index in self._log_only_catches(b):
                arm = b.branches[arm_index]
                for o in arm["try_calls"]:
                    site = f"{b.stable}@{o}"
                    for rec in self.rel_by_site.get(site, ()):
                        what = self._remote(rec)
                        if what is None or what in covered or rec["attributes"].get("submitted_by") \
                                or rec["attributes"].get("dispatch_kind") == "ASYNC":
                            continue  # a failure on another thread never reaches this catch
                        ev = [r.rid for r in rec["evidence_refs"]][:1] + [self.p.seg(b.path, *arm["cond"])]
                        self.rs.diagnostic(
                            "NO_COMPENSATION", f"{site}|no-compensation",
                            f"{b.path}:{rec_line(rec, self.rs)}: {rec['kind'].lower()} to "
                            f"{what.split(':', 1)[-1]} fails into a catch ({arm['path'].rsplit('/', 1)[-1]}) that only "
                            "logs; no retry, resend or scheduled worker of the package covers it",
                            [mrid, rec["record_id"]], ev)

    def _log_only_catches(self, b: "MethodBody") -> list[int]:
        """Indices of the CATCH arms of a body that only log: no throw anywhere inside, and every call
        inside is pruned noise or a JDK call (no effect, no in-repo call). One pass over the arms and
        calls, each walking up its enclosing arms."""
        arms = b.branches
        catches = {i for i, a in enumerate(arms) if a["kind"] == "CATCH" and a["outcome"] != "THROW"}
        spoiled: set[int] = set()

        def spoil(i: int) -> None:
            while i >= 0:
                if i in catches:
                    spoiled.add(i)
                i = arms[i]["parent"]

        for i, a in enumerate(arms):
            if a["kind"] == "THROW":
                spoil(i)
        for c in b.calls:
            if c.branch < 0:
                continue
            for rec in self.rel_by_site.get(f"{b.stable}@{c.ordinal}", ()):
                if rec["kind"] != "CALLS" or not rec["attributes"].get("external") or \
                        not str(rec["attributes"].get("declared_target", "")).startswith("java."):
                    spoil(c.branch)
                    break
        return sorted(catches - spoiled)


def rec_line(rec: dict[str, Any], rs) -> int:
    """The first line of a relation's first evidence segment (0 when unknown)."""
    for r in rec["evidence_refs"]:
        seg = rs.segments.get(r.rid)
        if seg is not None:
            return seg["locator"]["start_line"]
    return 0
