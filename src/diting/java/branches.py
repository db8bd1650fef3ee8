"""Branch-forming constructs of member bodies: the syntax half of the branch ledger (docs/callgraph.md §7).

:func:`branch_facts` finds, per member body, every *arm* a branch-forming construct opens and
gives each a stable structural path (``if[0]/then/switch[1]/case[PAID]``): the path is the chain of
enclosing arms, each named by its construct's kind, the construct's index among the constructs of
that kind directly under the same arm (source order), and the arm. Lines never enter a path, so
moving code keeps it and restructuring changes it.

Constructs and their arms (one :class:`BranchSite` each):

- ``if``: ``then`` (IF) and ``else`` (ELSE, when present; ``else if`` nests an ``if`` in it);
- ``switch`` (statement or expression): ``case[L1,L2]`` (CASE) per label group or rule (labels
  without statements of their own join the next group: ``case A: case B: …``), ``default`` (DEFAULT);
- ``try``: ``catch[T1|T2]`` (CATCH) per clause and ``finally`` (FINALLY); the try block is not a branch;
- loops (``for``, enhanced ``for``, ``while``, ``do``): ``loop[i]`` (LOOP), the arm is the loop body;
- ``return[i]`` (RETURN) for every return of the member except its last top-level statement (the
  normal exit) and returns inside lambdas (they leave the lambda, not the member);
- ``throw[i]`` (THROW).

Each arm also keeps its condition's text (``cond_text``, whitespace made single spaces; none past
:data:`MAX_CONDITION_TEXT`) and the type its exit ``throw new T(…)`` creates (``exit_type``): what the
ledger's exclusion rules read. Conditional expressions (``?:``) and short-circuit operators are not arms. Arms nested deeper
than :data:`MAX_BRANCH_DEPTH` are not recorded (their calls sit under the deepest recorded arm)
and the body says so (``branches_truncated``).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import tree_sitter as ts

from diting.java.nodes import Nesting, end_line_of, line_of, node_text

if TYPE_CHECKING:  # for annotations only
    from diting.java.facts import Body

#: tree-sitter query captures (added to the extractor's one query) of branch-forming constructs
BRANCH_QUERY = ["(if_statement) @if", "(switch_expression) @switch", "(try_statement) @try",
                "(try_with_resources_statement) @try", "(for_statement) @loop", "(enhanced_for_statement) @loop",
                "(while_statement) @loop", "(do_statement) @loop", "(throw_statement) @throw"]
#: arms nested deeper than this are not recorded (hostile input: paths would grow quadratically)
MAX_BRANCH_DEPTH = 256
#: a condition longer than this keeps no text (``cond_text`` None): no exclusion rule reads it
MAX_CONDITION_TEXT = 2000
_COMMENTS = ("line_comment", "block_comment")
_LABEL_TEXT = 60


@dataclass(slots=True)
class BranchSite:
    """One arm of a branch-forming construct in a member body (:mod:`diting.java.branches`).

    ``path`` is the stable structural path below the member (``if[0]/then/switch[1]/case[PAID]``);
    ``kind`` a branch kind of docs/ir.md §9 (IF, ELSE, CASE, DEFAULT, RETURN, THROW, CATCH, FINALLY, LOOP);
    ``parent`` the index of the enclosing arm (-1: the member's top level); ``line``..``end_line`` the
    arm, ``cond_line``..``cond_end_line`` the condition that selects it (the arm itself when there is
    none); ``outcome`` how the arm ends (CONTINUE, RETURN, THROW, BREAK) and ``exit_line`` the line of
    the statement that ends it that way (0 for CONTINUE); ``cond_calls`` the ordinals of calls in an
    IF or LOOP condition, ``cond_names`` the names the condition reads (``this.f`` kept as written;
    names an ``instanceof`` pattern binds left out); ``cond_text`` and ``exit_type`` what the condition
    says and what the exit throws, for the ledger's exclusion rules."""

    path: str
    kind: str
    parent: int
    line: int
    end_line: int
    cond_line: int
    cond_end_line: int
    outcome: str
    exit_line: int
    cond_calls: list[int]
    cond_names: list[str]
    #: for a CATCH arm: the ordinals of the calls its try protects
    try_calls: list[int] = field(default_factory=list)
    #: start byte of the condition (which locals of the body are declared before it)
    cond_pos: int = -1
    #: the condition's text, whitespace runs made one space (None when it has none or is longer than
    #: :data:`~diting.java.branches.MAX_CONDITION_TEXT`): what ledger exclusion rules read
    cond_text: str | None = None
    #: the type an exit ``throw new T(…)`` creates, as written (``IllegalArgumentException``); None for
    #: any other exit (``throw e;``, a return)
    exit_type: str | None = None


@dataclass(slots=True, eq=False)
class _Arm:
    """One arm while a body's arms are collected: its byte range (of ``node``), the construct that
    opens it (``ckind``: if, switch, try, loop, return, throw), the ledger's branch ``kind``, the path
    ``label``, the condition node, and once nested, ``parent`` (index) and the construct's ``index``."""

    node: ts.Node
    construct: ts.Node
    ckind: str
    kind: str
    label: str
    cond: ts.Node | None
    parent: int = -1
    index: int = -1

    @property
    def start(self) -> int:
        return self.node.start_byte

    @property
    def end(self) -> int:
        return self.node.end_byte


def _compact(text: str) -> str:
    """A label for a path, the same however the code is formatted and different for different labels:
    whitespace outside string and character literals is dropped; inside them, and for ``/`` (the path
    separator) and ``%``, characters are percent-encoded; a label longer than :data:`_LABEL_TEXT` keeps
    its head and a digest of the whole."""
    out: list[str] = []
    quote = None
    escaped = False
    for ch in text:
        if quote is None:
            if ch in "\"'":
                quote = ch
            elif ch.isspace():
                continue
        elif escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == quote:
            quote = None
        if ch in "/%" or (quote is not None and ch.isspace()):
            out.append("".join(f"%{b:02X}" for b in ch.encode("utf-8")))
        else:
            out.append(ch)
    label = "".join(out)
    if len(label) <= _LABEL_TEXT:
        return label
    return label[:_LABEL_TEXT] + "~" + hashlib.sha256(label.encode("utf-8")).hexdigest()[:12]


def _named(node: ts.Node) -> list[ts.Node]:
    return [c for c in node.named_children if c.type not in _COMMENTS]


def _arms(label: str, node: ts.Node, src: bytes, member_body: dict[int, ts.Node | None],
          in_lambda) -> list[_Arm]:
    """The arms one construct opens."""
    if label == "if":
        out = []
        cond = node.child_by_field_name("condition")
        then = node.child_by_field_name("consequence")
        if then is not None:
            out.append(_Arm(then, node, "if", "IF", "then", cond))
        alt = node.child_by_field_name("alternative")
        if alt is not None:
            out.append(_Arm(alt, node, "if", "ELSE", "else", cond))
        return out
    if label == "switch":
        block = node.child_by_field_name("body")
        cond = node.child_by_field_name("condition")
        out = []
        carried: list[ts.Node] = []  # labels of a group without statements fall through to the next
        for group in (_named(block) if block is not None else []):
            if group.type not in ("switch_block_statement_group", "switch_rule"):
                continue
            labels = carried + [c for c in group.named_children if c.type == "switch_label"]
            if group.type == "switch_block_statement_group" and group.next_named_sibling is not None and \
                    not [c for c in _named(group) if c.type != "switch_label"]:
                carried = labels
                continue
            carried = []
            cases = []
            is_default = False
            for lab in labels:
                exprs = _named(lab)
                if not exprs or node_text(lab, src).strip().startswith("default"):
                    is_default = True
                cases.extend(_compact(node_text(e, src)) for e in exprs)
            if is_default:
                out.append(_Arm(group, node, "switch", "DEFAULT", "default", labels[0] if labels else cond))
            else:
                out.append(_Arm(group, node, "switch", "CASE", f"case[{','.join(cases)}]",
                                labels[0] if labels else cond))
        return out
    if label == "try":
        out = []
        for c in _named(node):
            if c.type == "catch_clause":
                param = next((p for p in c.named_children if p.type == "catch_formal_parameter"), None)
                ctype = next((t for t in param.named_children if t.type == "catch_type"), None) if param else None
                names = [_compact(node_text(t, src)) for t in _named(ctype)] if ctype is not None else ["?"]
                out.append(_Arm(c, node, "try", "CATCH", f"catch[{'|'.join(names)}]", param))
            elif c.type == "finally_clause":
                out.append(_Arm(c, node, "try", "FINALLY", "finally", None))
        return out
    if label == "loop":
        body = node.child_by_field_name("body")
        cond = node.child_by_field_name("condition") or node.child_by_field_name("value")
        return [_Arm(body if body is not None else node, node, "loop", "LOOP", "", cond)]
    if label == "throw":
        return [_Arm(node, node, "throw", "THROW", "", None)]
    # return: not the member's final top-level statement, not inside a lambda
    if in_lambda(node):
        return []
    block = member_body.get(id(node))
    if block is not None and node.parent is not None and node.parent.id == block.id:
        stmts = _named(block)
        if stmts and stmts[-1].id == node.id:
            return []
    return [_Arm(node, node, "return", "RETURN", "", None)]


def _outcome(arm: _Arm) -> tuple[str, ts.Node | None]:
    """How control leaves an arm: its last statement returns, throws, breaks or continues."""
    if arm.kind in ("RETURN", "THROW"):
        return arm.kind, arm.node
    node = arm.node
    if arm.kind == "LOOP":
        return "CONTINUE", None
    last: ts.Node | None = node
    while last is not None and last.type in ("block", "switch_block_statement_group", "switch_rule",
                                             "catch_clause", "finally_clause"):
        stmts = [c for c in _named(last) if c.type not in ("switch_label", "catch_formal_parameter")]
        last = stmts[-1] if stmts else None
    if last is None:
        return "CONTINUE", None
    if last.type == "return_statement":
        return "RETURN", last
    if last.type == "throw_statement":
        return "THROW", last
    if last.type in ("break_statement", "continue_statement", "yield_statement"):
        return "BREAK", last
    return "CONTINUE", None


def _cond_names(cond: ts.Node | None, src: bytes) -> list[str]:
    """Names a condition reads: ``f`` as written, ``this.f`` as ``this.f``; names an ``instanceof``
    pattern binds in the condition (``o instanceof Boolean open && open``) are left out. Sorted, at
    most 16."""
    if cond is None:
        return []
    out: set[str] = set()
    bound: set[str] = set()
    stack = [cond]
    seen = 0
    while stack and seen < 2000:
        n = stack.pop()
        seen += 1
        parent = n.parent
        if n.type == "identifier":
            if parent is not None and parent.type == "method_invocation" and \
                    parent.child_by_field_name("name") is not None and parent.child_by_field_name("name").id == n.id:
                continue
            if parent is not None and parent.type in ("instanceof_expression", "type_pattern", "record_pattern"):
                bound.add(node_text(n, src))
                continue
            if parent is not None and parent.type == "field_access":
                obj = parent.child_by_field_name("object")
                if obj is None or obj.type != "this":
                    continue
                out.add("this." + node_text(n, src))
                continue
            out.add(node_text(n, src))
        else:
            stack.extend(n.named_children)
    return sorted(out - bound)[:16]


def _cond_text(cond: ts.Node | None, src: bytes) -> str | None:
    """A condition's source text with every whitespace run made one space; None past
    :data:`MAX_CONDITION_TEXT` bytes (or without a condition)."""
    if cond is None or cond.end_byte - cond.start_byte > MAX_CONDITION_TEXT:
        return None
    return " ".join(node_text(cond, src).split())


def _thrown_type(exit_node: ts.Node | None, src: bytes) -> str | None:
    """``T`` of an exit ``throw new T(…);`` as written, type arguments dropped; None otherwise."""
    if exit_node is None or exit_node.type != "throw_statement":
        return None
    expr = next(iter(_named(exit_node)), None)
    if expr is None or expr.type != "object_creation_expression":
        return None
    t = expr.child_by_field_name("type")
    if t is None:
        return None
    text = "".join(node_text(t, src).split())
    return text.split("<", 1)[0] or None


def branch_facts(caps: dict[str, list[ts.Node]], members: "Nesting", placed: list[tuple[str, ts.Node, "Body", int]],
                 src: bytes, member_nodes: dict[int, ts.Node], in_lambda_of) -> None:
    """Fill ``Body.branches`` and each call's ``branch`` (see the module docstring).

    ``members``: the member bodies by byte range; ``placed``: every call ``(kind, node, body,
    ordinal)``; ``member_nodes``: ``id(body)`` → the member's block node (for the final-return
    rule); ``in_lambda_of(node, body)`` says whether ``node`` sits in a lambda of that member. Every
    lookup is by nested byte ranges (:class:`~diting.java.nodes.Nesting`): linear in the calls and
    arms of a body times their nesting depth."""

    per_body: dict[int, tuple["Body", list[_Arm]]] = {}
    for label in ("if", "switch", "try", "loop", "throw", "return"):
        for node in caps.get(label, []):
            body = members.innermost(node)
            if body is None:
                continue
            block = member_nodes.get(id(body))
            arms = _arms(label, node, src, {id(node): block}, lambda n, b=body: in_lambda_of(n, b))
            if arms:
                per_body.setdefault(id(body), (body, []))[1].extend(arms)
    calls_of: dict[int, list[tuple[ts.Node, int]]] = {}
    for _, node, body, ordinal in placed:
        calls_of.setdefault(id(body), []).append((node, ordinal))
    for key, (body, arms) in per_body.items():
        kept = _nest(body, arms)
        sites = _sites(kept, src)
        body.branches = sites
        _calls_into_arms(body, kept, sites, calls_of.get(key, []))


def _nest(body: "Body", arms: list[_Arm]) -> list[_Arm]:
    """The arms of one body that are kept (nested at most :data:`MAX_BRANCH_DEPTH` deep), in source
    order, each with its parent arm and its construct's index among its siblings of its kind."""
    arms.sort(key=lambda a: (a.start, -a.end))
    stack: list[int] = []
    depth: list[int] = []
    kept: list[_Arm] = []
    for arm in arms:
        while stack and kept[stack[-1]].end <= arm.start:
            stack.pop()
        parent = stack[-1] if stack else -1
        d = depth[parent] + 1 if parent >= 0 else 1
        if d > MAX_BRANCH_DEPTH:
            body.branches_truncated = True
            continue
        arm.parent = parent
        kept.append(arm)
        depth.append(d)
        stack.append(len(kept) - 1)
    # construct indices per (parent arm, construct kind), in source order of the constructs
    counters: dict[tuple[int, str], int] = {}
    index_of: dict[int, int] = {}
    for arm in sorted(kept, key=lambda a: (a.construct.start_byte, a.start)):
        cid = arm.construct.id
        if cid not in index_of:
            k = (arm.parent, arm.ckind)
            index_of[cid] = counters.get(k, 0)
            counters[k] = index_of[cid] + 1
        arm.index = index_of[cid]
    return kept


def _sites(kept: list[_Arm], src: bytes) -> list[BranchSite]:
    """One :class:`BranchSite` per kept arm, with its path, outcome and condition."""
    sites: list[BranchSite] = []
    used: dict[str, int] = {}
    for arm in kept:
        own = f"{arm.ckind}[{arm.index}]" + (f"/{arm.label}" if arm.label else "")
        path = f"{sites[arm.parent].path}/{own}" if arm.parent >= 0 else own
        if path in used:  # two arms one path (invalid code: a type caught twice): keep both, apart
            used[path] += 1
            path = f"{path}#{used[path]}"
        else:
            used[path] = 1
        outcome, exit_node = _outcome(arm)
        cond = arm.cond
        sites.append(BranchSite(path, arm.kind, arm.parent, line_of(arm.node), end_line_of(arm.node),
                                line_of(cond) if cond is not None else line_of(arm.node),
                                end_line_of(cond) if cond is not None else line_of(arm.node),
                                outcome, line_of(exit_node) if exit_node is not None else 0, [],
                                _cond_names(cond if arm.kind in ("IF", "ELSE", "LOOP", "CASE", "DEFAULT")
                                            and cond is not None and cond.type != "switch_label" else
                                            (arm.construct.child_by_field_name("condition")
                                             if arm.kind in ("CASE", "DEFAULT") else None), src)))
        sites[-1].exit_type = _thrown_type(exit_node, src)
    for site, arm in zip(sites, kept):
        site.cond_pos = arm.cond.start_byte if arm.cond is not None else arm.start
        site.cond_text = _cond_text(arm.cond, src)
    return sites


def _calls_into_arms(body: "Body", kept: list[_Arm], sites: list[BranchSite],
                     calls: list[tuple[ts.Node, int]]) -> None:
    """Each call's innermost arm (``branch``), and the arms whose condition or protected try region
    holds it (``cond_calls``, ``try_calls``)."""
    arm_index = Nesting([(a.start, a.end, i) for i, a in enumerate(kept)])
    # the IF and LOOP conditions, and the regions CATCH arms protect (the try block with its
    # resources): each call belongs to the innermost one around it
    conds: dict[int, list[int]] = {}
    tries: dict[int, list[int]] = {}
    for i, a in enumerate(kept):
        if a.cond is not None and a.kind in ("IF", "LOOP"):
            conds.setdefault(a.cond.id, []).append(i)
        if a.kind == "CATCH":
            block = a.construct.child_by_field_name("body")
            if block is not None:
                tries.setdefault(a.construct.id, []).append(i)
    cond_ranges = Nesting([(kept[v[0]].cond.start_byte, kept[v[0]].cond.end_byte, v) for v in conds.values()])
    try_ranges = Nesting([((kept[v[0]].construct.child_by_field_name("resources") or
                            kept[v[0]].construct.child_by_field_name("body")).start_byte,
                           kept[v[0]].construct.child_by_field_name("body").end_byte, v) for v in tries.values()])
    for node, ordinal in calls:
        call = body.calls[ordinal]
        found = arm_index.find(node.start_byte, node.end_byte)
        call.branch = arm_index.ranges[found][2] if found >= 0 else -1
        for j in cond_ranges.innermost(node) or ():
            sites[j].cond_calls.append(ordinal)
        for j in try_ranges.innermost(node) or ():
            sites[j].try_calls.append(ordinal)
