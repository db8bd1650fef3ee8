"""The ledger items of SQL statements (docs/sql.md): each conditional fragment of a statement
(``<if>``, ``<when>``, ``<otherwise>`` …) is a branch of it, recorded once every entity of the
package is final, with the exclusion rule its ``test`` matches (ledger/exclusion.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from diting.ir import ids
from diting.ir.builder import RefTo
from diting.ledger.exclusion import ArmFacts, excluded_items, ledger_exclusions
from diting.sql.dynamic import Fragment
from diting.sql.statements import StageStatement

if TYPE_CHECKING:
    from diting.probes.context import ProbeContext
    from diting.sql.emit import SqlStage


def queue(p: "ProbeContext", s: StageStatement) -> None:
    """Conditional fragments become ledger items once every entity of the package is final
    (their ``symbol_revision`` is the statement's revision): queued here."""
    if s.expansion is not None and s.expansion.fragments:
        p.sql_ledger.append((s, s.expansion.fragments))


def record_ledger_items(stage: "SqlStage") -> None:
    """The ledger items of every queued statement's conditional fragments (:func:`queue`), each with
    the exclusion rule that excludes it (:mod:`diting.ledger.exclusion`; a fragment's ``test`` is its
    condition)."""
    stage.rs.finish()
    rules = ledger_exclusions(stage.p.s.rules)
    for s, frags in stage.p.sql_ledger:
        rev = stage.rs.entities[s.rid]["implementation_ref"].revision
        index = {f.path: i for i, f in enumerate(frags)}
        excluded = excluded_items(
            [ArmFacts(f.kind, s.stable, " ".join(f.test.split()) if f.test is not None else None, "CONTINUE",
                      None, [], f.path not in s.unresolved_fragments, index.get(f.parent or "", -1))
             for f in frags], rules)
        for f, rule in zip(frags, excluded):
            _item(stage, s, f, rev, rule)


def _item(stage: "SqlStage", s: StageStatement, f: Fragment, rev: str, rule: str | None) -> None:
    """The ledger item of fragment ``f`` of statement ``s`` (``rule``: the exclusion rule, if any)."""
    branch_id = f"{s.stable}/{f.path}"
    seg = stage.p.seg(s.path, f.line, f.end_line)
    unresolved = f.path in s.unresolved_fragments
    stage.stats.ledger_items += 1
    if rule:
        stage.stats.ledger_excluded[rule] = stage.stats.ledger_excluded.get(rule, 0) + 1
    else:
        stage.stats.ledger_unresolved += unresolved
    stage.rs.ledger_item({
        "record_id": ids.record_id_for(ids.BRANCH_PREFIX, branch_id), "branch_id": branch_id,
        "branch_kind": f.kind, "parent_branch_id": f"{s.stable}/{f.parent}" if f.parent else None,
        "symbol_ref": RefTo(s.rid), "symbol_revision": rev,
        "condition_ref": RefTo(stage.p.seg(s.path, f.line, max(f.line, f.test_end_line)))
        if f.kind != "SQL_OTHERWISE" else None,
        "outcome_kind": "CONTINUE", "effect_refs": [], "exit_ref": None, "evidence_refs": [RefTo(seg)],
        "resolution_status": "UNRESOLVED" if unresolved else "RESOLVED",
        **({"exclusion_rule_id": rule} if rule else {}),
    })

