"""The records of one package the pyramid reads, loaded from the graph, and the reach of an entry.

An entry's **reach** is what its handler runs inside its own service: the methods reached over
RESOLVED ``CALLS`` (method to method), the SQL statements those methods are bound to (``BINDS_TO``),
and the ledger items, effects and unresolved call sites of all of them. AMBIGUOUS and UNRESOLVED
call sites are not followed: they are the reach's unknowns. Calls to a CONSUMED contract and
``PUBLISHES`` are the reach's remote effects (where a flow leaves the service).
"""

from __future__ import annotations

import json
import re
from collections import deque
from dataclasses import dataclass, field
from typing import Any

#: relation kinds the pyramid reads
_KINDS = ("CALLS", "BINDS_TO", "READS", "WRITES", "PUBLISHES", "GUARDS", "SUBSCRIBES", "EXPOSES")


def _json(v: Any) -> Any:
    return json.loads(v) if isinstance(v, str) else (v or {})


@dataclass
class PackageFacts:
    """Entities, relations, ledger items and the segment text the pyramid needs of one package."""

    scan_id: str
    service_id: str
    commit_sha: str
    implementation_scope: str
    entities: dict[str, dict[str, Any]]
    relations: dict[str, dict[str, Any]]
    ledger: dict[str, dict[str, Any]]
    #: source record id → relation ids, by kind
    out: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    #: symbol record id (method, statement) → its ledger item ids
    ledger_of: dict[str, list[str]] = field(default_factory=dict)
    #: relation id → the innermost ledger item that lists it as an effect
    guard_of: dict[str, str] = field(default_factory=dict)
    _by_branch: dict[str, dict[str, Any]] | None = None
    _returning: set[str] | None = None
    _throws: set[str] | None = None
    _wordings: dict[tuple[str, str, str, str], int] | None = None

    @classmethod
    def load(cls, con, scan_id: str) -> "PackageFacts":
        """Read one package from the graph connection ``con``."""
        service_id, commit = con.execute("SELECT service_id, commit_sha FROM packages WHERE scan_id = ?",
                                         [scan_id]).fetchone()
        ents: dict[str, dict[str, Any]] = {}
        scope = ""
        for rid, kind, stable, name, urn, ekind, handler, role, sig, attrs, impl, ds in con.execute(
                "SELECT record_id, kind, stable_id, name, urn, entry_kind, handler_ref.record_id, role, signature, "
                "attributes, implementation_ref.implementation_scope, datasource FROM entities WHERE scan_id = ? "
                "AND kind IN ('ENTRY','METHOD','CONTRACT','TOPIC','TABLE','CONFIG_KEY','CACHE_KEY','SQL_STATEMENT',"
                "'EXTERNAL','SERVICE')", [scan_id]).fetchall():
            ents[rid] = {"record_id": rid, "kind": kind, "stable_id": stable, "name": name, "urn": urn,
                         "entry_kind": ekind, "handler": handler, "role": role, "signature": _json(sig) or [],
                         "attributes": _json(attrs), "datasource": ds}
            if kind == "SERVICE":
                scope = impl
        rels: dict[str, dict[str, Any]] = {}
        kinds = ", ".join(f"'{k}'" for k in _KINDS)
        for rid, kind, src, dst, status, cands, guard, attrs, site, mk, ev in con.execute(
                f"SELECT record_id, kind, source_ref.record_id, target_ref.record_id, resolution_status, "
                f"[c.record_id for c in candidate_target_refs], guard_ref.record_id, attributes, callsite_id, "
                f"match_keys, evidence_refs[1].record_id FROM relations WHERE scan_id = ? AND kind IN ({kinds})",
                [scan_id]).fetchall():
            rels[rid] = {"record_id": rid, "kind": kind, "source": src, "target": dst, "status": status,
                         "candidates": cands or [], "guard": guard, "attributes": _json(attrs), "callsite": site,
                         "match_keys": _json(mk), "evidence": ev, "line": None}
        ledger: dict[str, dict[str, Any]] = {}
        for row in con.execute(
                "SELECT b.record_id, b.branch_id, b.branch_kind, b.parent_branch_id, b.symbol_ref.record_id, "
                "b.outcome_kind, [e.record_id for e in b.effect_refs], b.resolution_status, b.exclusion_rule_id, "
                "c.content, x.content, b.symbol_revision, c.locator.start_line, x.locator.start_line, "
                "v.locator.start_line FROM branch_ledger b "
                "JOIN packages p ON p.scan_id = b.scan_id "
                "LEFT JOIN segments c ON c.repo_id = p.repo_id AND c.commit_sha = p.commit_sha "
                "AND c.record_id = b.condition_ref.record_id "
                "LEFT JOIN segments x ON x.repo_id = p.repo_id AND x.commit_sha = p.commit_sha "
                "AND x.record_id = b.exit_ref.record_id "
                "LEFT JOIN segments v ON v.repo_id = p.repo_id AND v.commit_sha = p.commit_sha "
                "AND v.record_id = b.evidence_refs[1].record_id WHERE b.scan_id = ?", [scan_id]).fetchall():
            (rid, bid, bkind, parent, symbol, outcome, effects, status, excl, cond, exit_, rev, cline, xline,
             vline) = row
            ledger[rid] = {"record_id": rid, "branch_id": bid, "branch_kind": bkind, "parent": parent,
                           "symbol": symbol, "outcome": outcome, "effects": effects or [], "status": status,
                           "exclusion_rule_id": excl, "condition": code_text(cond, condition=True),
                           "exit": exit_only(code_text(exit_), outcome), "line": cline or vline, "exit_line": xline,
                           "revision": rev}
        _call_lines(con, scan_id, rels)
        facts = cls(scan_id, service_id, commit, scope, ents, rels, ledger)
        for rid, r in sorted(rels.items()):
            facts.out.setdefault(r["source"], {}).setdefault(r["kind"], []).append(rid)
        for rid, item in sorted(ledger.items()):
            facts.ledger_of.setdefault(item["symbol"], []).append(rid)
        # the innermost branch listing a relation among its effects guards it (a relation the probes
        # made, such as a remote call, carries no guard_ref of its own)
        for rid, item in sorted(ledger.items(), key=lambda kv: (kv[1]["branch_id"].count("/"), kv[0])):
            for eff in item["effects"]:
                facts.guard_of[eff] = rid
        for rid, r in rels.items():
            if r["guard"] is None and rid in facts.guard_of:
                r["guard"] = facts.guard_of[rid]
            r["guard"] = facts.condition_of(r["guard"])
        return facts

    def condition_of(self, branch_rid: str | None) -> str | None:
        """The branch that decides whether ``branch_rid`` runs: itself when it has a condition, else the
        nearest ancestor that has one (an exit — ``return``, ``throw`` — is no condition)."""
        item = self.ledger.get(branch_rid) if branch_rid else None
        by_branch = self.by_branch()
        while item is not None and (item["branch_kind"] in ("RETURN", "THROW") or not item["condition"]):
            item = by_branch.get(item["parent"] or "")
        return item["record_id"] if item is not None else None

    def always_throws(self) -> set[str]:
        """Methods that always throw: their ledger has a throw at the top of the body and no return (a
        validation helper such as ``Asserts.fail(msg)``); a branch that calls one rejects."""
        if self._throws is None:
            self._throws = set()
            for sym, items in self.ledger_of.items():
                kinds = [(self.ledger[i]["branch_kind"], self.ledger[i]["parent"]) for i in items]
                if ("THROW", None) in kinds and not any(k == "RETURN" for k, _ in kinds):
                    self._throws.add(sym)
        return self._throws

    def rejecting_calls(self, rids: list[str]) -> list[str]:
        """The RESOLVED calls among ``rids`` to a method that always throws."""
        throws = self.always_throws()
        return [r for r in rids if (rel := self.relations.get(r)) is not None and rel["kind"] == "CALLS"
                and rel["status"] == "RESOLVED" and rel["target"] in throws]

    def line_note(self, item: dict[str, Any], exit_: bool = False) -> str:
        """`` (line N)`` where an item's words alone would not tell it apart: always for a LOOP (its
        head is often the same as another's), and for any item whose method has another item worded
        the same (``exit_``: another throw of the same text, for FAILURE statements); else empty."""
        if self._wordings is None:
            self._wordings = {}
            for i in self.ledger.values():
                for key in (self._wording(i, False),) + ((self._wording(i, True),) if i["branch_kind"] == "THROW"
                                                         else ()):
                    self._wordings[key] = self._wordings.get(key, 0) + 1
        line = item["exit_line"] if exit_ else item["line"]
        if not line:
            return ""
        repeated = self._wordings.get(self._wording(item, exit_), 0) > 1
        return f" (line {line})" if repeated or (item["branch_kind"] == "LOOP" and not exit_) else ""

    @staticmethod
    def _wording(item: dict[str, Any], exit_: bool) -> tuple[str, str, str, str]:
        if exit_:
            return item["symbol"], "exit", "", item["exit"] or ""
        return (item["symbol"], "arm", *arm_words(item))

    def by_branch(self) -> dict[str, dict[str, Any]]:
        """Ledger items by branch_id (built once)."""
        if self._by_branch is None:
            self._by_branch = {i["branch_id"]: i for i in self.ledger.values()}
        return self._by_branch

    def leaves_early(self, branch_id: str) -> bool:
        """Whether an arm nested in ``branch_id`` (at any depth) returns: control may leave the arm
        there, before the arm's own last statement (a nested success ``return`` ahead of a
        fall-through ``fail(…)``)."""
        if self._returning is None:
            ups: set[str] = set()
            by = self.by_branch()
            for item in self.ledger.values():
                if item["outcome"] == "RETURN" or item["branch_kind"] == "RETURN":
                    parent = item["parent"]
                    while parent and parent not in ups:
                        ups.add(parent)
                        parent = (by.get(parent) or {}).get("parent")
            self._returning = ups
        return branch_id in self._returning

    def name(self, rid: str | None) -> str:
        """A short readable name of a record: a method as ``Class#name(params)``, else its urn or name."""
        if rid is None:
            return "?"
        e = self.entities.get(rid)
        if e is None:
            return rid.split(":", 1)[-1]
        if e["kind"] in ("METHOD", "EXTERNAL"):
            return short_method(e["stable_id"])
        if e["kind"] == "CONTRACT" and e["urn"]:  # overloads share a urn: name the parameters
            return f"{e['urn']}({','.join(p.rsplit('.', 1)[-1] for p in e['signature'])})"
        return e["urn"] or e["name"] or e["stable_id"]


def _call_lines(con, scan_id: str, rels: dict[str, dict[str, Any]]) -> None:
    """Fill ``line`` (the first line of the first evidence segment) of every CALLS relation without a
    target — the calls a card names by their text and line — in one query."""
    wanted = {r["evidence"]: rid for rid, r in rels.items() if r["kind"] == "CALLS" and r["target"] is None
              and r["evidence"]}
    if not wanted:
        return
    lines = dict(con.execute(
        "SELECT s.record_id, s.locator.start_line FROM segments s JOIN packages p ON p.repo_id = s.repo_id "
        "AND p.commit_sha = s.commit_sha WHERE p.scan_id = ? AND s.record_id IN (SELECT unnest(?))",
        [scan_id, sorted(wanted)]).fetchall())
    for rid, r in rels.items():
        if r["kind"] == "CALLS" and r["target"] is None and r["evidence"] in lines:
            r["line"] = lines[r["evidence"]]


def call_text(r: dict[str, Any]) -> str:
    """A call without a target, as its site names it: the declared target when the static types name
    one (``OrderClient#get(?)``), else ``receiver.name(…)`` from its match keys, and the line it is on
    (``unknownThing.go(…) at line 14``)."""
    declared = r["attributes"].get("declared_target")
    keys = r["match_keys"]
    if declared:
        text = short_method(declared)
    elif keys.get("name"):
        args = "(…)" if keys.get("arity") else "()"
        text = f"{keys['receiver']}.{keys['name']}{args}" if keys.get("receiver") else f"{keys['name']}{args}"
    else:
        text = "a call"
    return f"{text} at line {r['line']}" if r.get("line") else text


#: how each ledger item's arm is worded: the words before its code, and whether the code is the
#: guard's own condition (an if's, quoted bare) — a LOOP's head, a CATCH's parameter and a CASE's label
#: are quoted as written
_ARM = {"IF": "when", "ELSE": "when not", "CASE": "on", "DEFAULT": "on", "CATCH": "on", "FINALLY": "in",
        "LOOP": "in each pass of", "RETURN": "at", "THROW": "at", "STRATEGY": "at the dispatch of",
        "SQL_IF": "when SQL test", "SQL_WHEN": "when SQL test", "SQL_OTHERWISE": "in SQL"}
_IF_HEAD = re.compile(r"^(?:else\s+)?if\s*\(")
_SQL_TEST = re.compile(r"""\btest\s*=\s*(?:"([^"]*)"|'([^']*)')""")


def arm_words(item: dict[str, Any]) -> tuple[str, str]:
    """``(arm, code)`` wording one ledger item's arm so that the arm named is the one that runs: an
    IF ``("when", "count > 0")``, its ELSE ``("when not", "count > 0")`` (the same guard, the other
    arm), a LOOP ``("in each pass of", "for (Item i : items)")``, a SQL ``<if>`` ``("when SQL test",
    "name != null")``, a CATCH ``("on", "catch (IOException e)")``, a RETURN ``("at", "return x;")``."""
    kind = item["branch_kind"]
    text = item["condition"]
    if kind in ("IF", "ELSE") and text and _IF_HEAD.match(text) and text.endswith(")"):
        text = text[text.index("(") + 1:-1].strip()
    elif kind in ("SQL_IF", "SQL_WHEN") and text and (m := _SQL_TEST.search(text)):
        text = m.group(1) if m.group(1) is not None else m.group(2)
    elif kind == "FINALLY":
        text = "finally"
    elif kind == "SQL_OTHERWISE":
        text = "<otherwise>"
    return _ARM.get(kind, kind.lower()), text or item["exit"] or item["branch_id"].rsplit("/", 1)[-1]


def short_method(stable: str) -> str:
    """``Class#name(p1,p2)`` of a method stable id (package and module dropped, parameter types simple)."""
    body = stable.split("/", 1)[-1].removeprefix("ext:")
    owner, _, rest = body.partition("#")
    name, _, params = rest.partition("(")
    simple = ",".join(p.rsplit(".", 1)[-1] for p in params.rstrip(")").split(",") if p)
    return f"{owner.rsplit('.', 1)[-1]}#{name}({simple})" if rest else body.rsplit(".", 1)[-1]


_SPACES = re.compile(r"\s+")


def code_text(content: str | None, limit: int = 160, condition: bool = False) -> str | None:
    """One line of code as a statement quotes it: braces that open or close the block trimmed,
    whitespace collapsed, at most ``limit`` characters (``…`` marks a cut), backticks replaced."""
    if content is None:
        return None
    text = _SPACES.sub(" ", content).strip()
    text = text.removeprefix("}").strip()
    text = (_condition_only(text) if condition else text).removesuffix("{").strip().replace("`", "'")
    return text if len(text) <= limit else text[:limit - 1] + "…"


_HEADS = ("if", "else if", "while", "for", "switch", "catch")
#: the statement that ends an arm, by the arm's outcome
_EXIT_WORD = {"THROW": re.compile(r"\bthrow\b"), "RETURN": re.compile(r"\breturn\b"),
              "BREAK": re.compile(r"\b(?:break|continue|yield)\b")}


def exit_only(text: str | None, outcome: str) -> str | None:
    """The exit statement of a line that holds more (``if (ok) { return a; } else { throw new X(); }``
    quoted for its throw as ``throw new X();``): from the one keyword of ``outcome`` on the line to the
    first ``;`` after it. A line with the keyword twice, or none, is left as it is (which one ends the
    arm is not known from the text)."""
    word = _EXIT_WORD.get(outcome)
    if text is None or word is None:
        return text
    found = list(word.finditer(text))
    if len(found) != 1 or found[0].start() == 0:
        return text
    end = text.find(";", found[0].start())
    return text[found[0].start():end + 1] if end >= 0 else text[found[0].start():]


def _condition_only(text: str) -> str:
    """``if (c) { throw …; }`` on one line is quoted as ``if (c)``: a branch's head up to the
    parenthesis that closes its condition (other text is left as it is)."""
    if not text.startswith(_HEADS) or "(" not in text:
        return text
    depth = 0
    start = text.index("(")
    for i in range(start, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return text[:i + 1]
    return text


@dataclass
class Reach:
    """What an entry's handler runs inside its service (see the module docstring)."""

    methods: list[str]
    statements: list[str]
    ledger: list[str]
    #: relation ids by kind, of every reached method and statement
    effects: dict[str, list[str]]
    #: CALLS that are not RESOLVED, in reached methods
    unknown_calls: list[str]
    #: the walk stopped at the budget
    truncated: bool
    #: a wrapper's unresolved sends that every caller in the reach resolves (see :func:`_covered_sends`)
    covered_sends: list[str] = field(default_factory=list)


#: methods an entry's reach holds at most (a budget, reported, never a silent cut)
MAX_REACH = 5000


def reach(facts: PackageFacts, handler: str | None) -> Reach:
    """The :class:`Reach` of a handler method (breadth-first, deterministic order)."""
    if handler is None:
        return Reach([], [], [], {}, [], False)
    seen = {handler}
    order: list[str] = []
    queue = deque([handler])
    truncated = False
    while queue:
        m = queue.popleft()
        order.append(m)
        for rid in facts.out.get(m, {}).get("CALLS", []):
            r = facts.relations[rid]
            t = r["target"]
            if r["status"] == "RESOLVED" and t and t.startswith("method:") and t not in seen:
                if len(seen) >= MAX_REACH:
                    truncated = True
                    continue
                seen.add(t)
                queue.append(t)
    stmts = sorted({facts.relations[b]["target"] for m in order for b in facts.out.get(m, {}).get("BINDS_TO", [])
                    if facts.relations[b]["target"] and facts.relations[b]["target"].startswith("stmt:")})
    effects: dict[str, list[str]] = {}
    unknown: list[str] = []
    for src in order + stmts:
        for kind, rids in facts.out.get(src, {}).items():
            effects.setdefault(kind, []).extend(rids)
        for rid in facts.out.get(src, {}).get("CALLS", []):
            if facts.relations[rid]["status"] != "RESOLVED":
                unknown.append(rid)
    ledger = [i for src in order + stmts for i in facts.ledger_of.get(src, [])]
    effects = {k: sorted(set(v)) for k, v in sorted(effects.items())}
    covered = _covered_sends(facts, effects)
    if covered:
        effects["PUBLISHES"] = [p for p in effects["PUBLISHES"] if p not in covered]
    return Reach(order, stmts, sorted(set(ledger)), effects, sorted(unknown), truncated, sorted(covered))


def _covered_sends(facts: PackageFacts, effects: dict[str, list[str]]) -> set[str]:
    """Unresolved sends of a wrapper whose every call in the reach has a resolved send of its own at
    the call site (the scan resolves a wrapper's topic at each caller): the callers' sends stand for
    them, so they are no unknown of this reach."""
    resolved_sites = {facts.relations[p]["callsite"] for p in effects.get("PUBLISHES", [])
                      if facts.relations[p]["status"] == "RESOLVED" and facts.relations[p]["callsite"]}
    calls_into: dict[str, list[str | None]] = {}
    for c in effects.get("CALLS", []):
        r = facts.relations[c]
        if r["status"] == "RESOLVED" and r["target"]:
            calls_into.setdefault(r["target"], []).append(r["callsite"])
    covered = set()
    for p in effects.get("PUBLISHES", []):
        r = facts.relations[p]
        sites = calls_into.get(r["source"])
        if r["status"] != "RESOLVED" and sites and all(s in resolved_sites for s in sites):
            covered.add(p)
    return covered
