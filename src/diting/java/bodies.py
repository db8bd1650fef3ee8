"""What member bodies hold, as the extractor records it on each member's :class:`~diting.java.facts.Body`:
call sites (with their arguments where wanted), locals, assignments, returns and lambda parameters,
each given to the innermost member around it; then the body's branch arms (:mod:`diting.java.branches`)."""

from __future__ import annotations

import bisect
from collections.abc import Collection
from typing import Any

import tree_sitter as ts

from diting.java.branches import branch_facts
from diting.java.expressions import COMMENT_NODES, arg_nodes, dims_of, expr_json, type_ref
from diting.java.facts import Body, CallSite, LocalVar, TypeRef
from diting.java.nodes import Nesting, end_line_of, line_of, node_text

#: at most this many return expressions and field assignments are kept per member
MAX_BODY_NOTES = 16


def _assign_target(node: ts.Node | None, src: bytes) -> str | None:
    """``f`` for ``f = …``, ``this.f`` for ``this.f = …``; None for anything else."""
    if node is None:
        return None
    if node.type == "identifier":
        return node_text(node, src)
    if node.type == "field_access":
        obj = node.child_by_field_name("object")
        fld = node.child_by_field_name("field")
        if obj is not None and obj.type == "this" and fld is not None:
            return "this." + node_text(fld, src)
    return None


def body_facts(caps: dict[str, list[ts.Node]], members: list[tuple[int, int, Body]], src: bytes,
               detail: Collection[str] | None = None, member_blocks: dict[int, ts.Node] | None = None) -> None:
    """Distribute calls, locals, assignments and returns to the innermost member around each.

    ``detail``: call names (``<init>`` for ``new``) whose arguments are extracted; None extracts the
    arguments of every call. With names given, a call's arguments are also extracted when it sits
    inside a call so named, inside a local's initializer or a kept assignment or return (so every
    ``callref`` an extracted expression holds leads to a call with arguments), or when its receiver
    is a local initialised by ``new`` (setters on an object being built)."""
    index = Nesting(members)
    lambdas = Nesting([(n.start_byte, n.end_byte, n) for n in caps.get("lambda", [])])
    member_of_start = {id(m[2]): m[0] for m in members}
    placed, refs = _place_calls(caps, index)
    pending = _call_sites(placed, refs, src, lambdas, member_of_start)
    wanted = _Demand(placed, pending, detail)
    local_index = _locals(caps, index, refs, src, wanted)
    _assignments(caps, index, local_index, refs, src, wanted)
    _lambda_params(caps, index, src)
    _returns(caps, index, refs, src, wanted)
    wanted.setters_on_new_locals()
    wanted.finish(src)
    branch_facts(caps, index, [(k, n, b, refs[id(b)][n.id]) for k, n, b in placed], src, member_blocks or {},
                 lambda node, body: lambdas.find(node.start_byte, node.end_byte, member_of_start[id(body)]) >= 0)


def _place_calls(caps: dict[str, list[ts.Node]], index: Nesting
                 ) -> tuple[list[tuple[str, ts.Node, Body]], dict[int, dict[int, int]]]:
    """Each call's member and ordinal in it (pre-order), so expressions can refer to calls: the calls
    as (kind, node, body), and per body (by id) its calls' ordinals by node id."""
    calls: list[tuple[int, int, str, ts.Node]] = []
    for label, kind in (("call", "CALL"), ("new", "NEW"), ("ctorcall", "CTOR"), ("ref", "REF")):
        for node in caps.get(label, []):
            calls.append((node.start_byte, -node.end_byte, kind, node))
    calls.sort(key=lambda c: (c[0], c[1]))
    placed: list[tuple[str, ts.Node, Body]] = []
    refs: dict[int, dict[int, int]] = {}
    counts: dict[int, int] = {}
    for _, _, kind, node in calls:
        body = index.innermost(node)
        if body is None:
            continue
        n = counts.get(id(body), 0)
        counts[id(body)] = n + 1
        refs.setdefault(id(body), {})[node.id] = n
        placed.append((kind, node, body))
    return placed, refs


def _handed_to(node: ts.Node, callrefs: dict[int, int]) -> int:
    """The ordinal of the call whose argument ``node`` (a lambda or method reference) is; -1."""
    host = node.parent
    while host is not None and host.type == "parenthesized_expression":
        host = host.parent
    if host is not None and host.type == "argument_list":
        host = host.parent
    return callrefs.get(host.id, -1) if host is not None else -1


def _call_parts(kind: str, node: ts.Node, src: bytes, callrefs: dict[int, int]
                ) -> tuple[str, dict[str, Any] | None, TypeRef | None, list[ts.Node]]:
    """A call's name, receiver, created type (``new``) and argument nodes."""
    if kind == "CALL":
        obj = node.child_by_field_name("object")
        nm = node.child_by_field_name("name")
        name = node_text(nm, src) if nm is not None else "?"
        receiver = expr_json(obj, src, 0, callrefs) if obj is not None else None
        return name, receiver, None, arg_nodes(node.child_by_field_name("arguments"))
    if kind == "NEW":
        new_type = type_ref(node.child_by_field_name("type"), src)
        name = ".".join(new_type.parts) if new_type else "?"
        outer = next((c for c in node.named_children if c.type in ("object_creation_expression", "identifier",
                                                                   "field_access", "this")
                      and c.end_byte <= (node.child_by_field_name("type") or node).start_byte), None)
        receiver = expr_json(outer, src, 0, callrefs) if outer is not None else None
        return name, receiver, new_type, arg_nodes(node.child_by_field_name("arguments"))
    if kind == "CTOR":
        ctor = node.child_by_field_name("constructor")
        name = node_text(ctor, src) if ctor is not None else "this"
        return name, None, None, arg_nodes(node.child_by_field_name("arguments"))
    # REF: recv::name
    parts = [c for c in node.children if c.is_named and c.type not in COMMENT_NODES]
    name = node_text(parts[-1], src) if len(parts) > 1 else "new"
    receiver = expr_json(parts[0], src, 0, callrefs) if parts else None
    return name, receiver, None, []


def _call_sites(placed: list[tuple[str, ts.Node, Body]], refs: dict[int, dict[int, int]], src: bytes,
                lambdas: Nesting, member_of_start: dict[int, int]
                ) -> list[tuple[CallSite, list[ts.Node], dict[int, int]]]:
    """Every call without its arguments, added to its body; returns each with its argument nodes and
    its body's call ordinals (for :class:`_Demand`)."""
    pending: list[tuple[CallSite, list[ts.Node], dict[int, int]]] = []
    for kind, node, body in placed:
        callrefs = refs[id(body)]
        name, receiver, new_type, args = _call_parts(kind, node, src, callrefs)
        start = member_of_start[id(body)]
        lam = lambdas.find(node.start_byte, node.end_byte, start)
        site = CallSite(callrefs[node.id], kind, name, receiver, new_type, None, len(args),
                        line_of(node), end_line_of(node), lam >= 0, pos=node.start_byte)
        if kind == "REF":
            site.handed_to = _handed_to(node, callrefs)
        else:
            # the nearest enclosing lambda handed to a call (``submit(() -> { Runnable r = () -> x(); … })``:
            # a lambda kept in a local runs where the one around it runs)
            while lam >= 0 and lambdas.ranges[lam][0] > start:
                site.handed_to = _handed_to(lambdas.ranges[lam][2], callrefs)
                if site.handed_to >= 0:
                    break
                lam = lambdas.parent[lam]
        body.calls.append(site)
        pending.append((site, args, callrefs))
    return pending


def _add_local(body: Body, lv: LocalVar, local_index: dict[tuple[int, str], LocalVar]) -> None:
    body.locals.append(lv)
    local_index[(id(body), lv.name)] = lv


def _locals(caps: dict[str, list[ts.Node]], index: Nesting, refs: dict[int, dict[int, int]], src: bytes,
            wanted: _Demand) -> dict[tuple[int, str], LocalVar]:
    """Locals, try resources, enhanced-for and catch variables, added to their bodies; returns them by
    (body id, name)."""
    local_index: dict[tuple[int, str], LocalVar] = {}
    for label in ("local", "resource", "forvar", "catchvar"):
        for node in caps.get(label, []):
            body = index.innermost(node)
            if body is None:
                continue
            if label == "resource":  # try (Connection c = ds.getConnection()) …: a local of the try
                nm = node.child_by_field_name("name")
                tnode = node.child_by_field_name("type")
                value = node.child_by_field_name("value")
                if nm is None:
                    continue  # try (existing) names a variable declared elsewhere
                if value is not None:
                    wanted.local(body, node_text(nm, src), value)
                tr = None if tnode is None or node_text(tnode, src) == "var" else type_ref(tnode, src)
                _add_local(body, LocalVar(node_text(nm, src), tr, expr_json(value, src, 0, refs.get(id(body)))
                                          if value is not None else None, line_of(node), 0, node.start_byte),
                           local_index)
            elif label == "local":
                tnode = node.child_by_field_name("type")
                for decl in node.children_by_field_name("declarator"):
                    nm = decl.child_by_field_name("name")
                    if nm is None:
                        continue
                    tr = None if tnode is None or node_text(tnode, src) == "var" else \
                        type_ref(tnode, src, dims_of(decl.child_by_field_name("dimensions"), src))
                    value = decl.child_by_field_name("value")
                    if value is not None:
                        wanted.local(body, node_text(nm, src), value)
                    _add_local(body, LocalVar(node_text(nm, src), tr, expr_json(value, src, 0, refs.get(id(body)))
                                              if value is not None else None, line_of(decl), 0, decl.start_byte),
                               local_index)
            else:
                tnode = node.child_by_field_name("type")
                nm = node.child_by_field_name("name")
                if label == "catchvar":
                    tnode = next((c for c in node.named_children if c.type == "catch_type"), None)
                    tnode = tnode.named_children[0] if tnode is not None and tnode.named_children else None
                if nm is None:
                    continue
                _add_local(body, LocalVar(node_text(nm, src), type_ref(tnode, src) if tnode is not None else None,
                                          None, line_of(node), 1 if label == "forvar" else 0, node.start_byte),
                           local_index)
    return local_index


def _assignments(caps: dict[str, list[ts.Node]], index: Nesting, local_index: dict[tuple[int, str], LocalVar],
                 refs: dict[int, dict[int, int]], src: bytes, wanted: _Demand) -> None:
    """Assignments and updates: counted on the local written, else noted as a reassigned parameter
    (or field), and kept (target, value) where the body keeps assignments."""
    for label in ("assign", "update"):
        for node in caps.get(label, []):
            body = index.innermost(node)
            if body is None:
                continue
            target_node = node.child_by_field_name("left") if label == "assign" else \
                next((c for c in node.named_children), None)
            target = _assign_target(target_node, src)
            if target is None:
                continue
            lv = local_index.get((id(body), target))
            if lv is not None:
                lv.assigned += 1
            elif "." not in target and target not in body.reassigned and len(body.reassigned) < MAX_BODY_NOTES:
                body.reassigned.append(target)  # a parameter (or a field by its simple name) written here
            if lv is None and label == "assign" and body.keep_assignments and len(body.assignments) < MAX_BODY_NOTES:
                op = node.child_by_field_name("operator")
                if op is None or node_text(op, src) == "=":
                    right = node.child_by_field_name("right")
                    value = expr_json(right, src, 0, refs.get(id(body)))
                    if value is not None:
                        wanted.within(right)
                        body.assignments.append((target, value))


def _lambda_params(caps: dict[str, list[ts.Node]], index: Nesting, src: bytes) -> None:
    """The parameter names of the lambdas in each body, with their positions."""
    for node in caps.get("lambda", []):
        body = index.innermost(node)
        params = node.child_by_field_name("parameters")
        if body is None or params is None:
            continue
        names = [params] if params.type == "identifier" else [
            c.child_by_field_name("name") or c for c in params.named_children]
        for n in names:
            if n is not None and n.type == "identifier" and len(body.lambda_params) < MAX_BODY_NOTES:
                body.lambda_params.append((node_text(n, src), n.start_byte))


def _returns(caps: dict[str, list[ts.Node]], index: Nesting, refs: dict[int, dict[int, int]], src: bytes,
             wanted: _Demand) -> None:
    """The returned expressions of the bodies that keep returns."""
    for node in caps.get("return", []):
        body = index.innermost(node)
        if body is None or not body.keep_returns or len(body.returns) >= MAX_BODY_NOTES:
            continue
        value = next((c for c in node.named_children if c.type not in COMMENT_NODES), None)
        j = expr_json(value, src, 0, refs.get(id(body))) if value is not None else None
        if j is not None:
            wanted.within(value)
            body.returns.append(j)


def _names_in(values: list[Any]) -> set[str]:
    """Simple names an expression JSON reads (``name`` and the first part of ``field``), anywhere inside."""
    out: set[str] = set()
    stack = list(values)
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            k = v.get("kind")
            if k in ("name", "field") and v.get("parts"):
                out.add(v["parts"][0])
            stack.extend(x for x in v.values() if isinstance(x, (dict, list)))
        elif isinstance(v, list):
            stack.extend(v)
    return out


class _Demand:
    """Which calls of a file get their arguments extracted (see :func:`body_facts`): a flag per
    call, in the pre-order of ``placed`` (calls sorted by start byte, outer before inner)."""

    def __init__(self, placed: list[tuple[str, ts.Node, Body]],
                 pending: list[tuple[CallSite, list[ts.Node], dict[int, int]]], names: Collection[str] | None) -> None:
        self.placed = placed
        self.pending = pending
        self.starts = [node.start_byte for _, node, _ in placed]
        self.ends = [node.end_byte for _, node, _ in placed]
        #: a call's own position: calls of a chain (``a.b().c()``) all start where the outermost does
        self.index = {node.id: i for i, (_, node, _) in enumerate(placed)}
        self.flags = [names is None or site.kind in ("CTOR", "REF") for site, _, _ in pending]
        #: calls whose whole subtree is flagged already: :meth:`within` jumps over them (linear in
        #: the calls of a file however deeply named calls nest)
        self.covered = [False] * len(pending)
        #: local initializers by (body, name), demanded only when a kept expression names the local
        self.inits: dict[tuple[int, str], list[ts.Node]] = {}
        self.names_only = names is not None
        if names is not None:
            for i, (site, _, _) in enumerate(pending):
                if (site.name if site.kind == "CALL" else "<init>" if site.kind == "NEW" else None) in names:
                    self.within(placed[i][1])

    def local(self, body: Body, name: str, value: ts.Node) -> None:
        """A local's initializer: its calls keep arguments once a kept expression names the local."""
        self.inits.setdefault((id(body), name), []).append(value)

    def finish(self, src: bytes) -> None:
        """Extract the arguments of every flagged call; the locals their arguments and receivers name
        (and, in turn, the locals those initializers name) flag the calls of their initializers."""
        bodies = {i: id(b) for i, (_, _, b) in enumerate(self.placed)}
        inits_json = {}
        for b in {id(b): b for _, _, b in self.placed}.values():
            for lv in b.locals:
                inits_json.setdefault((id(b), lv.name), []).append(lv.init)
        done = [False] * len(self.pending)
        seen_locals: set[tuple[int, str]] = set()
        work = [i for i, f in enumerate(self.flags) if f]
        while work:
            i = work.pop()
            if done[i]:
                continue
            done[i] = True
            site, args, callrefs = self.pending[i]
            if site.args is None:
                site.args = [j if j is not None else {"kind": "other", "text": ""}
                             for j in (expr_json(a, src, 0, callrefs) for a in args)]
            if not self.names_only:
                continue
            todo = _names_in([site.args, site.receiver])
            while todo:
                key = (bodies[i], todo.pop())
                if key in seen_locals or key not in self.inits:
                    continue
                seen_locals.add(key)
                for value in self.inits[key]:
                    work.extend(self.within(value))
                todo |= _names_in(inits_json.get(key, []))

    def within(self, node: ts.Node) -> list[int]:
        """Flag every call inside ``node`` (``node`` itself included, when it is a call); returns the
        calls newly flagged."""
        i = self.index.get(node.id)
        if i is None:
            i = bisect.bisect_left(self.starts, node.start_byte)
        end = node.end_byte
        new: list[int] = []
        while i < len(self.starts) and self.starts[i] < end:
            if self.ends[i] > end:  # starts where node does but holds it
                i += 1
            elif self.covered[i]:
                i = bisect.bisect_left(self.starts, self.ends[i], i + 1)
            else:
                if not self.flags[i]:
                    new.append(i)
                self.flags[i] = self.covered[i] = True
                i += 1
        return new

    def setters_on_new_locals(self) -> None:
        """Calls on a local initialised by ``new`` (``m = new Message(); m.setTopic(t)``)."""
        built: dict[int, set[str]] = {}
        for _, _, body in self.placed:
            if id(body) in built:
                continue
            built[id(body)] = {lv.name for lv in body.locals
                               if lv.init is not None and lv.init.get("kind") == "callref"
                               and 0 <= lv.init["ordinal"] < len(body.calls)
                               and body.calls[lv.init["ordinal"]].kind == "NEW"}
        for i, (site, _, _) in enumerate(self.pending):
            r = site.receiver
            if not self.flags[i] and site.kind == "CALL" and r is not None and r.get("kind") == "name" and \
                    r["parts"][0] in built[id(self.placed[i][2])]:
                self.within(self.placed[i][1])
