"""Branch ledger items of Java methods and the config guards of their branches (docs/callgraph.md §7, §8).

One ledger item per arm :mod:`diting.java.branches` found in a method of the package (IF, ELSE,
CASE, DEFAULT, RETURN, THROW, CATCH, FINALLY, LOOP), plus one STRATEGY item per call site whose
virtual or interface dispatch stays AMBIGUOUS among the package's implementations (the
implementation chosen at run time is a branch). ``branch_id`` = ``{METHOD stable_id}/{path}``.

- ``effect_refs``: the CALLS, PUBLISHES, READS and WRITES relations of the call sites whose
  innermost arm is the item (an effect at the method's top level belongs to no item);
- ``condition_ref``: the condition that selects the arm (if, switch, loop header, catch
  parameter); RETURN, THROW and FINALLY have none; ``exit_ref``: the return, throw or break that
  ends the arm; ``evidence_refs``: the arm's first line;
- ``resolution_status`` UNRESOLVED when an effect of the item, or a call in its condition, is
  UNRESOLVED;
- ``exclusion_rule_id``: the LEDGER_EXCLUSION rule that takes the item for noise
  (:mod:`diting.ledger.exclusion`), read from its condition text, outcome, thrown type and effects;
  counted by rule id (``CallGraphStats.ledger_excluded``), not among the unresolved.

GUARDS: an IF/ELSE/CASE/DEFAULT/LOOP whose condition reads config — a field with a config binding
(``@Value``, ``@LafValue``), a getter returning such a field, a method that is itself a config
consumer (``ConfiguratorManager`` reads), a call that reads a CONFIG_KEY directly, or a local never
reassigned whose initializer makes such a call (``Property p = …getProperty("k"); if (p == null)``,
``reads`` = ``local p = getProperty()``) — gives one
GUARDS relation CONFIG_KEY → METHOD per key and construct, ``guard_ref`` the construct's first arm.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

from diting.ir import ids
from diting.ir.builder import RefTo
from diting.java.branches import MAX_BRANCH_DEPTH
from diting.ledger.exclusion import ArmFacts, Effect, declared_names, excluded_items, ledger_exclusions

if TYPE_CHECKING:
    from diting.resolve.callfacts import MethodBody
    from diting.probes.context import ProbeContext
    from diting.resolve.callgraph import CallGraphStats, PackageCallGraph

_EFFECT_KINDS = ("CALLS", "PUBLISHES", "READS", "WRITES")
_GUARDED = ("IF", "ELSE", "CASE", "DEFAULT", "LOOP")


def _path_int(path: str) -> int:
    """A stable small integer for a branch path (the ordinal of a GUARDS relation's stable_id)."""
    return int(hashlib.sha256(path.encode("utf-8")).hexdigest()[:8], 16)


class JavaLedger:
    """Writes the ledger items and GUARDS of one package from its call graph (see the module docstring)."""

    def __init__(self, probes: "ProbeContext", graph: "PackageCallGraph") -> None:
        self.p = probes
        self.rs = probes.rs
        self.g = graph
        self.stats: "CallGraphStats" = graph.stats
        #: callsite_id → effect relation rids (the call graph's CALLS and the probes' facts)
        self.effects: dict[str, list[str]] = {}
        for rid, rec in self.rs.relations.items():
            if rec["kind"] in _EFFECT_KINDS and rec.get("callsite_id"):
                self.effects.setdefault(rec["callsite_id"], []).append(rid)
        for site, rid in graph.site_rel.items():
            if rid not in self.effects.setdefault(site, []):
                self.effects[site].append(rid)
        #: consumer rid (FIELD, METHOD, BEAN, ENTRY) → CONFIG_KEY rids its config bindings name
        self.config_of: dict[str, set[str]] = {}
        for b in self.rs.bindings.values():
            key_rid = ids.entity_record_id("CONFIG_KEY", b["config_key"])
            if key_rid in self.rs.entities:
                self.config_of.setdefault(b["consumer_ref"].rid, set()).add(key_rid)
        self._revisions: dict[str, str] = {}
        #: the package's ledger exclusion rules, and the member type names they ask about
        self.exclusions = ledger_exclusions(probes.s.rules)
        self.declared = sorted(declared_names(self.exclusions))

    def _revision(self, method_rid: str) -> str | None:
        """The revision_id of a METHOD entity of the package's modules."""
        if method_rid in self._revisions:
            return self._revisions[method_rid]
        for m in sorted(self.g.modules):
            line = self.p.s.module_results[m].encoded.lines["entities.jsonl"].get(method_rid)
            if line is not None:
                rev = json.loads(line)["implementation_ref"]["revision_id"]
                self._revisions[method_rid] = rev
                return rev
        return None

    def run(self) -> None:
        for b in self.g.bodies:
            if b.branches or any(f"{b.stable}@{c.ordinal}" in self.g.strategy_sites for c in b.calls):
                self._method(b)

    def _method(self, b: "MethodBody") -> None:
        stable = b.stable
        mrid = ids.entity_record_id("METHOD", stable)
        rev = self._revision(mrid)
        if rev is None:
            return
        path = b.path
        arms = list(b.branches)
        # STRATEGY items: one per call site whose dispatch stays ambiguous, under its innermost arm
        strategy_of: dict[int, int] = {}
        for c in b.calls:
            if f"{stable}@{c.ordinal}" in self.g.strategy_sites:
                parent = c.branch
                prefix = arms[parent]["path"] + "/" if parent >= 0 else ""
                arms.append({"path": f"{prefix}strategy[{c.ordinal}]", "kind": "STRATEGY", "parent": parent,
                             "lines": c.lines, "cond": c.lines, "outcome": "CONTINUE", "exit_line": 0,
                             "cond_calls": [], "cond_names": [], "try_calls": [], "cond_pos": -1})
                strategy_of[c.ordinal] = len(arms) - 1
        effects: list[list[str]] = [[] for _ in arms]
        unresolved = [False] * len(arms)
        calls = {c.ordinal: c for c in b.calls}
        for c in b.calls:
            item = strategy_of.get(c.ordinal, c.branch)
            if item < 0:
                continue
            for rid in self.effects.get(f"{stable}@{c.ordinal}", []):
                effects[item].append(rid)
                if self.rs.relations[rid]["resolution_status"] == "UNRESOLVED":
                    unresolved[item] = True
        self.stats.ledger_methods += 1
        self.stats.ledger_truncated += bool(b.truncated)
        if b.truncated:
            self.rs.diagnostic("BUDGET_EXHAUSTED", f"{stable}|branches",
                               f"{path}: branches of {stable.split('/', 1)[-1]} nest deeper than {MAX_BRANCH_DEPTH} "
                               "levels; deeper arms are not in its ledger (their effects sit under the deepest arm "
                               "recorded)", [mrid], [self.p.seg(path, *b.lines[:1] * 2)])
        for i, arm in enumerate(arms):
            for o in arm["cond_calls"]:
                if any(self.rs.relations[r]["resolution_status"] == "UNRESOLVED"
                       for r in self.effects.get(f"{stable}@{o}", [])):
                    unresolved[i] = True
        excluded = self._excluded(b, arms, effects, unresolved)
        rids: list[str] = []
        for i, arm in enumerate(arms):
            branch_id = f"{stable}/{arm['path']}"
            parent = arms[arm["parent"]]["path"] if arm["parent"] >= 0 else None
            kind = arm["kind"]
            cond = None if kind in ("RETURN", "THROW", "FINALLY") else RefTo(self.p.seg(path, *arm["cond"]))
            exit_ref = RefTo(self.p.seg(path, arm["exit_line"], arm["exit_line"])) if arm["exit_line"] else None
            rid = self.rs.ledger_item({
                "record_id": ids.record_id_for(ids.BRANCH_PREFIX, branch_id), "branch_id": branch_id,
                "branch_kind": kind, "parent_branch_id": f"{stable}/{parent}" if parent is not None else None,
                "symbol_ref": RefTo(mrid), "symbol_revision": rev, "condition_ref": cond,
                "outcome_kind": arm["outcome"], "effect_refs": [RefTo(r) for r in sorted(set(effects[i]))],
                "exit_ref": exit_ref, "evidence_refs": [RefTo(self.p.seg(path, arm["lines"][0], arm["lines"][0]))],
                "resolution_status": "UNRESOLVED" if unresolved[i] else "RESOLVED",
                **({"exclusion_rule_id": excluded[i]} if excluded[i] else {}),
            })
            rids.append(rid)
            self.stats.ledger_items += 1
            if excluded[i]:
                self.stats.ledger_excluded[excluded[i]] = self.stats.ledger_excluded.get(excluded[i], 0) + 1
            else:
                self.stats.ledger_unresolved += unresolved[i]
        self._guards(b, mrid, arms, rids, calls)

    def _excluded(self, b: "MethodBody", arms: list[dict[str, Any]], effects: list[list[str]],
                  unresolved: list[bool]) -> list[str | None]:
        """The exclusion rule id of each arm (None: kept), by the package's LEDGER_EXCLUSION rules
        (:mod:`diting.ledger.exclusion`)."""
        if not self.exclusions:
            return [None] * len(arms)
        declares = self._declares(b.ns, b.binary)
        params = frozenset(n for n, poss in b.shadow.items() if -1 in poss)
        symbol = b.stable.split("/", 1)[-1]
        facts = [ArmFacts(arm["kind"], symbol, arm.get("cond_text"), arm["outcome"], arm.get("exit_type"),
                          [self._effect(r) for r in effects[i]], not unresolved[i], arm["parent"], params, declares)
                 for i, arm in enumerate(arms)]
        return excluded_items(facts, self.exclusions)

    def _declares(self, ns: str, binary: str) -> frozenset[str]:
        """The member type names the rules ask about that the top-level type of ``binary`` declares."""
        top = binary.split("$", 1)[0]
        return frozenset(n for n in self.declared if ids.entity_record_id("TYPE", f"{ns}/{top}${n}") in self.g.known)

    def _effect(self, rid: str) -> Effect:
        """An effect relation as exclusion rules read it: a method target by ``{type}#{name}(…)``, with
        the member types its top-level type declares."""
        rec = self.rs.relations[rid]
        ref = rec["target_ref"].rid if rec["target_ref"] is not None else None
        if ref is None or rec["resolution_status"] != "RESOLVED":
            return Effect(rec["kind"], None, False)
        if ref.startswith("method:"):
            ns, _, name = ref[len("method:"):].partition("/")
            return Effect(rec["kind"], name, False, self._declares(ns, name.split("#", 1)[0]) if self.declared
                          else frozenset())
        if ref.startswith("ext:"):
            return Effect(rec["kind"], ref[len("ext:"):], True)
        return Effect(rec["kind"], ref, False)

    def _guards(self, b: "MethodBody", mrid: str, arms: list[dict[str, Any]], rids: list[str],
                calls: dict[int, dict[str, Any]]) -> None:
        """GUARDS relations of the config keys each construct's condition reads."""
        ns = b.ns
        owners = [b.binary]
        while "$" in owners[-1]:
            owners.append(owners[-1].rsplit("$", 1)[0])
        seen_constructs: set[str] = set()
        for i, arm in enumerate(arms):
            if arm["kind"] not in _GUARDED:
                continue
            construct = arm["path"].rsplit("/", 1)[0] if arm["kind"] not in ("LOOP",) else arm["path"]
            keys: dict[str, str] = {}  # CONFIG_KEY rid → what the condition reads
            via_local: dict[int, str] = {}  # call ordinal → the local its result initialises
            for name in arm["cond_names"]:
                if name.startswith("this."):
                    name = name[5:]
                elif any(pos < arm["cond_pos"] for pos in b.shadow.get(name, ())):
                    # a parameter, or a local or lambda parameter declared before: no field is read —
                    # but a local never reassigned tests what its initializer's calls return
                    nearest = max(pos for pos in b.shadow[name] if pos < arm["cond_pos"])
                    for pos, ords in b.local_reads.get(name, ()):
                        if pos == nearest:
                            for o in ords:
                                via_local.setdefault(o, name)
                    continue
                for owner in owners:
                    frid = ids.entity_record_id("FIELD", f"{ns}/{owner}.{name}")
                    if frid not in self.g.known:
                        continue
                    for k in self.config_of.get(frid, ()):
                        keys.setdefault(k, f"field {name}")
                    break  # the innermost type declaring the field is the one read
            tested = list(arm["cond_calls"]) + [o for o in sorted(via_local) if o not in arm["cond_calls"]]
            receivers = {calls[o].receiver_call for o in tested if o in calls}
            for o in tested:
                c = calls.get(o)
                if c is None or o in receivers:
                    continue  # ``props.getLocal().getPath()``: the value tested is the last call's
                how = f"local {via_local[o]} = {c.name}()" if o in via_local and o not in arm["cond_calls"] \
                    else f"call {c.name}()"
                for t in c.targets:
                    r = self.g._method_rid(t)
                    if r is not None:
                        for k in self.config_of.get(r[0], ()):
                            keys.setdefault(k, how)
                if c.getter_field:
                    m, owner, fname = c.getter_field
                    frid = ids.entity_record_id("FIELD", f"{self.p.s.inv.ns.get(m, ns)}/{owner}.{fname}")
                    for k in self.config_of.get(frid, ()):
                        keys.setdefault(k, how if o in via_local else f"getter {c.name}()")
                for rid in self.effects.get(f"{b.stable}@{o}", []):
                    rec = self.rs.relations[rid]
                    if rec["kind"] == "READS" and rec["target_ref"] is not None and \
                            rec["target_ref"].rid.startswith("config:"):
                        keys.setdefault(rec["target_ref"].rid, how)
            if not keys or construct in seen_constructs:
                continue
            seen_constructs.add(construct)
            cond = self.p.seg(b.path, *arm["cond"])
            for key_rid, how in sorted(keys.items()):
                key = self.rs.entities[key_rid]
                self.rs.relation("GUARDS", key_rid, key["stable_id"], target_rid=mrid, target_key=b.stable,
                                 status="RESOLVED", evidence=[cond], ordinal=_path_int(construct), guard=rids[i],
                                 attributes={"reads": how, "branch_kind": arm["kind"]})
