"""Exclusion rules of the branch ledger: which items are noise, by rule (docs/callgraph.md §9).

A LEDGER_EXCLUSION rule (match form ``ledger``, :class:`~diting.probes.model.LedgerMatch`; the
shipped ones in ``rules/ledger.yaml``, a user's with ``--rules``) names the items that are no business
logic — a null guard of dynamic SQL, the code MyBatis Generator writes, an argument check that only
throws, a logging guard. A matched item stays in ``branch_ledger.jsonl`` with ``exclusion_rule_id``
set to the rule's id; coverage counts it in branch_ledger's ``excluded_by_reason`` under that id, and
the pyramid leaves it off its cards (``ledger_excluded``). Nothing is dropped.

This module is the one engine for Java arms and SQL fragments alike; what matches is the rule's data:

- the ledger stages describe each item as :class:`ArmFacts` (kind, symbol, condition text, outcome,
  thrown type, effects, status, the method's parameters, its parent item);
- :func:`excluded_items` tries the rules in id order on each item, parents before their nested items;
  the first rule that matches excludes it, and under ``nested`` every item nested in it too;
- only a RESOLVED item (with every nested item, under ``nested``) is excluded unless the rule says
  ``unresolved`` (a shape that is noise whatever it holds): an unknown is not taken for noise by
  default, and an effect whose target is not resolved matches no allowed effect.

A condition matches a :class:`~diting.probes.model.ConditionShape` when, split into its parts at
``&&``/``||``/``and``/``or`` outside parentheses and string literals (a part in parentheses split
again, at most :data:`MAX_SPLIT_DEPTH` levels), every part matches one of the shape's atom templates.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from diting.probes.model import EffectPattern, LedgerMatch, Rule
    from diting.rules import RuleSet

#: parentheses a condition is split through at most (deeper: the condition matches no shape)
MAX_SPLIT_DEPTH = 32

_NAME = r"(?:this\.)?[A-Za-z_$][\w$]*(?:\(\))?(?:\.[A-Za-z_$][\w$]*(?:\(\))?)*"
_TYPE = r"(?:[a-z_$][\w$]*\.)*[A-Z][\w$]*"
_NOT = r"(?:!|\bnot\s+)?"
_TOKEN = re.compile(r"\{name\}|\{type\}|\{not\}|\s+|[\w$]+|.", re.S)
_WORDY = re.compile(r"[\w$]+|\{name\}|\{type\}")
_JOINS = ("&&", "||")
_WORD_JOINS = ("and", "or")


@dataclass(frozen=True)
class Effect:
    """An effect of an item: its relation kind, its target's name (``{type}#{method}({params})`` for a
    method, else the target's record id; None when the relation is not RESOLVED), whether the target
    is a library method, and the member type names its top-level type declares among those the rules
    ask about."""

    kind: str
    target: str | None
    external: bool
    declares: frozenset[str] = frozenset()


@dataclass
class ArmFacts:
    """What an exclusion rule reads of one ledger item.

    ``symbol``: the method (``{type}#{name}({params})``, module left out) or SQL statement
    (``{namespace}.{id}``); ``condition``: the Java condition or the SQL ``test`` (whitespace runs one
    space), None when the arm has none; ``throws``: the type its exit ``throw new T(…)`` creates, as
    written; ``parameters``: the method's parameter names (None for SQL: a test reads the statement's
    parameter alone); ``declares``: member type names of the method's top-level type among those the
    rules ask about; ``parent``: the index of the enclosing item in the same list, -1 at the top."""

    kind: str
    symbol: str
    condition: str | None
    outcome: str
    throws: str | None
    effects: list[Effect]
    resolved: bool
    parent: int = -1
    parameters: frozenset[str] | None = None
    declares: frozenset[str] = field(default_factory=frozenset)


def _template_regex(template: str) -> re.Pattern[str]:
    """The regex of one atom template (see :class:`~diting.probes.model.ConditionShape`): tokens with
    free whitespace between them, whitespace required where the template separates two words."""
    tokens = [t for t in _TOKEN.findall(template)]
    out: list[str] = []
    names = 0
    prev: str | None = None
    spaced = False
    for tok in tokens:
        if tok.isspace():
            spaced = True
            continue
        if prev is not None:
            out.append(r"\s+" if spaced and _WORDY.fullmatch(prev) and _WORDY.fullmatch(tok) else r"\s*")
        if tok == "{name}":
            out.append(f"(?P<n{names}>{_NAME})")
            names += 1
        elif tok == "{type}":
            out.append(_TYPE)
        elif tok == "{not}":
            out.append(_NOT)
        else:
            out.append(re.escape(tok))
        prev, spaced = tok, False
    return re.compile("".join(out))


def _code_chars(text: str):
    """``(index, char, level)`` of each character of ``text`` outside string and character literals,
    ``level`` the depth of brackets around it (a bracket counts as inside what it opens or closes)."""
    level = 0
    quote = None
    escaped = False
    for i, ch in enumerate(text):
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = None
            continue
        if ch in "'\"":
            quote = ch
            continue
        if ch in "([{":
            level += 1
            yield i, ch, level
            continue
        yield i, ch, level
        if ch in ")]}":
            level -= 1


def _outer_parens(text: str) -> str:
    """``text`` without parentheses that wrap all of it (``((a))`` → ``a``)."""
    while text.startswith("(") and text.endswith(")"):
        if any(ch == ")" and level == 1 and i != len(text) - 1 for i, ch, level in _code_chars(text)):
            return text
        text = text[1:-1].strip()
    return text


def _word_at(text: str, i: int, word: str) -> bool:
    end = i + len(word)
    return text.startswith(word, i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] in "_$")) \
        and (end == len(text) or not (text[end].isalnum() or text[end] in "_$"))


def condition_parts(text: str, depth: int = 0) -> list[str] | None:
    """The parts of a condition split at its top-level ``&&``, ``||``, ``and``, ``or`` (parts wrapped in
    parentheses split again); None past :data:`MAX_SPLIT_DEPTH` levels."""
    if depth > MAX_SPLIT_DEPTH:
        return None
    text = _outer_parens(text.strip())
    cuts: list[tuple[int, int]] = []
    for i, ch, level in _code_chars(text):
        if level or (cuts and i < cuts[-1][1]):
            continue
        if text[i:i + 2] in _JOINS:
            cuts.append((i, i + 2))
        else:
            word = next((w for w in _WORD_JOINS if _word_at(text, i, w)), None)
            if word is not None:
                cuts.append((i, i + len(word)))
    if not cuts:
        return [text]
    parts: list[str] = []
    start = 0
    for a, b in cuts + [(len(text), len(text))]:
        sub = condition_parts(text[start:a], depth + 1)
        if sub is None:
            return None
        parts.extend(sub)
        start = b
    return parts


@functools.lru_cache(maxsize=1 << 16)
def _cached_parts(text: str) -> tuple[str, ...] | None:
    """:func:`condition_parts` of ``text``, split once however many rules and items ask (null
    guards repeat across a module)."""
    parts = condition_parts(text)
    return None if parts is None else tuple(parts)


@dataclass
class CompiledRule:
    """One LEDGER_EXCLUSION rule with its templates compiled."""

    rule_id: str
    match: "LedgerMatch"
    atoms: list[re.Pattern[str]]

    def condition_holds(self, facts: ArmFacts) -> bool:
        """Whether the item's condition has the rule's shape (each part one atom; names as required)."""
        shape = self.match.condition
        if shape is None:
            return True
        if facts.condition is None:
            return False
        parts = _cached_parts(facts.condition)
        if not parts:
            return False
        for part in parts:
            roots = self._roots(part)
            if roots is None:
                return False
            if shape.names == "parameter" and facts.parameters is not None:
                if any(r not in facts.parameters for r in roots):
                    return False
        return True

    def _roots(self, part: str) -> tuple[str, ...] | None:
        """The names the first atom matching ``part`` binds (their roots: ``a`` of ``a.b()``), None
        when no atom matches; each part is matched once per rule (parts repeat across a module)."""
        cache = self.__dict__.setdefault("_part_roots", {})
        if part not in cache:
            m = next((m for a in self.atoms if (m := a.fullmatch(part)) is not None), None)
            cache[part] = None if m is None else tuple(
                re.split(r"[.(]", v, maxsplit=1)[0] for v in m.groupdict().values() if v)
        return cache[part]

    def matches(self, i: int, items: list[ArmFacts], below: "Below") -> bool:
        """Whether item ``i`` (with the items ``below`` it) is excluded by this rule. The item's own
        facts are tried first; what its nested items hold only when they all fit."""
        m = self.match
        f = items[i]
        if f.kind not in m.kinds or not (f.resolved or m.unresolved):
            return False
        if m.symbol and not any(fnmatchcase(f.symbol, g) for g in m.symbol):
            return False
        if m.symbol_type_declares and not set(m.symbol_type_declares) <= f.declares:
            return False
        if m.outcomes and f.outcome not in m.outcomes:
            return False
        if m.throws and not (f.throws is not None and any(_same_type(f.throws, t) for t in m.throws)):
            return False
        if not self.condition_holds(f):
            return False
        if m.nested and not m.unresolved and not below.all_resolved():
            return False
        if m.effects is not None:
            effects = list(f.effects) + (below.effects() if m.nested else [])
            if not all(any(_allows(p, e) for p in m.effects) for e in effects):
                return False
            if not all(any(_allows(p, e) for e in effects) for p in m.effects if p.required):
                return False
        return True


class Below:
    """The items nested in one item (at any depth) and what rules ask of them, each found once
    however many rules ask: ``children`` maps an item to the items directly in it."""

    def __init__(self, i: int, items: list[ArmFacts], children: dict[int, list[int]]) -> None:
        self._i, self._items, self._children = i, items, children
        self._indices: list[int] | None = None
        self._resolved: bool | None = None
        self._effects: list[Effect] | None = None

    def indices(self) -> list[int]:
        """The nested items, in index order."""
        if self._indices is None:
            found: list[int] = []
            stack = list(self._children.get(self._i, ()))
            while stack:
                j = stack.pop()
                found.append(j)
                stack.extend(self._children.get(j, ()))
            self._indices = sorted(found)
        return self._indices

    def all_resolved(self) -> bool:
        """Whether every nested item is RESOLVED."""
        if self._resolved is None:
            self._resolved = all(self._items[j].resolved for j in self.indices())
        return self._resolved

    def effects(self) -> list[Effect]:
        """The effects of the nested items, in item order."""
        if self._effects is None:
            self._effects = [e for j in self.indices() for e in self._items[j].effects]
        return self._effects


def _same_type(written: str, named: str) -> bool:
    """A type as the code writes it is the rule's: equal, or the same simple name when either is
    written unqualified."""
    if written == named:
        return True
    return ("." not in written or "." not in named) and written.rsplit(".", 1)[-1] == named.rsplit(".", 1)[-1]


def _allows(p: "EffectPattern", e: Effect) -> bool:
    if e.target is None or e.kind not in p.kinds:
        return False
    if p.external is not None and e.external != p.external:
        return False
    if p.target_type_declares and not set(p.target_type_declares) <= e.declares:
        return False
    return not p.targets or any(fnmatchcase(e.target, t) for t in p.targets)


def compile_rules(rules: list["Rule"]) -> list[CompiledRule]:
    """The LEDGER_EXCLUSION rules among ``rules``, compiled, in id order."""
    out = []
    for r in sorted(rules, key=lambda r: r.id):
        if r.emits.kind != "LEDGER_EXCLUSION" or r.match.ledger is None:
            continue
        atoms = [_template_regex(a) for a in (r.match.ledger.condition.atoms if r.match.ledger.condition else [])]
        out.append(CompiledRule(r.id, r.match.ledger, atoms))
    return out


def ledger_exclusions(rules: "RuleSet") -> list[CompiledRule]:
    """The compiled exclusion rules of a rule set (compiled once per rule set)."""
    cached = rules.__dict__.get("_ledger_exclusions")
    if cached is None:
        cached = rules.__dict__["_ledger_exclusions"] = compile_rules(rules.by_emit("LEDGER_EXCLUSION"))
    return cached


def declared_names(compiled: list[CompiledRule]) -> set[str]:
    """Member type names some rule asks about (``symbol_type_declares``, an effect's
    ``target_type_declares``)."""
    return {n for c in compiled for n in c.match.symbol_type_declares} | \
        {n for c in compiled for e in (c.match.effects or []) for n in e.target_type_declares}


def excluded_items(items: list[ArmFacts], compiled: list[CompiledRule]) -> list[str | None]:
    """The rule id excluding each item (None: kept). Items come with their ``parent`` indices; an
    item nested in one a ``nested`` rule excludes takes that rule's id."""
    out: list[str | None] = [None] * len(items)
    if not compiled or not items:
        return out
    children: dict[int, list[int]] = {}
    for i, f in enumerate(items):
        children.setdefault(f.parent, []).append(i)
    order = sorted(range(len(items)), key=lambda i: _depth(items, i))
    for i in order:
        if out[i] is not None:
            continue
        below = Below(i, items, children)
        for c in compiled:
            if c.matches(i, items, below):
                out[i] = c.rule_id
                for j in below.indices() if c.match.nested else []:
                    if out[j] is None:
                        out[j] = c.rule_id
                break
    return out


def _depth(items: list[ArmFacts], i: int) -> int:
    d = 0
    seen = 0
    while items[i].parent >= 0 and seen <= len(items):
        i = items[i].parent
        d += 1
        seen += 1
    return d
