"""The module stage of the call graph (docs/callgraph.md §1): the call facts of one module's member bodies.

In the worker that builds a module's records, :class:`ModuleCallSites` resolves every call site of
every member body — calls, ``new``, ``this(…)``/``super(…)``, method references — once by
:class:`~diting.resolve.calls.CallResolver` into a plain, picklable *call fact*
(:class:`~diting.resolve.callfacts.CallFact`), and keeps every body's branch arms
(:mod:`diting.java.branches`) for the ledger. The package stage, :mod:`diting.resolve.callgraph`,
makes CALLS relations of them.
"""

from __future__ import annotations

import bisect
from typing import Any

from diting.java.names import FileScope
from diting.java.facts import CallSite, FileFacts, MethodDecl, TypeRef, type_chain
from diting.resolve.callfacts import CallFact, MethodBody
from diting.resolve.calls import CallResolution, CallResolver, MethodTarget
from diting.resolve.fold import render
from diting.resolve.types import MemberContext

_TRANSACTIONAL = ("org.springframework.transaction.annotation.Transactional", "javax.transaction.Transactional",
                  "jakarta.transaction.Transactional")


def _target_json(t: MethodTarget | None) -> list | None:
    return None if t is None else [t.module, t.binary, t.name, list(t.params) if t.params is not None else None]


def _declared_names(md: MethodDecl, body: Any) -> dict[str, list[int]]:
    """Parameters (position -1), locals and lambda parameters of a body by name, with the start byte
    of each declaration: a name in a condition is a field only where none of them is in scope."""
    out: dict[str, list[int]] = {}
    for p in md.params:
        out.setdefault(p.name, []).append(-1)
    for lv in body.locals:
        out.setdefault(lv.name, []).append(lv.pos)
    for name, pos in body.lambda_params:
        out.setdefault(name, []).append(pos)
    return {k: sorted(v) for k, v in sorted(out.items())}


def _call_ordinals(expr: Any, out: list[int], budget: int = 256) -> list[int]:
    """The ordinals of the calls an expression tree (``expr_json``) holds, in tree order; at most
    ``budget`` nodes are visited (an iterative walk: trees from hostile input can be deep)."""
    stack = [expr]
    while stack and budget > 0:
        budget -= 1
        e = stack.pop()
        if isinstance(e, dict):
            if e.get("kind") == "callref" and isinstance(e.get("ordinal"), int):
                out.append(e["ordinal"])
            stack.extend(reversed([v for v in e.values() if isinstance(v, (dict, list))]))
        elif isinstance(e, list):
            stack.extend(reversed([v for v in e if isinstance(v, (dict, list))]))
    return out


def _local_reads(body: Any) -> dict[str, list[list]]:
    """Locals never assigned after their declaration whose initializer makes calls: name →
    ``[[declaration start byte, [call ordinals]]]`` (what a condition testing the local tests)."""
    out: dict[str, list[list]] = {}
    for lv in body.locals:
        if lv.init is None or lv.assigned:
            continue
        ords = _call_ordinals(lv.init, [])
        if ords:
            out.setdefault(lv.name, []).append([lv.pos, sorted(set(ords))])
    return out


class ModuleCallSites:
    """Call facts and branch arms of one module's member bodies (see the module docstring).

    ``bodies``: one :class:`~diting.resolve.callfacts.MethodBody` per member with a body, its calls
    :class:`~diting.resolve.callfacts.CallFact`."""

    def __init__(self, module: str, ns_of: dict[str, str], resolver: CallResolver) -> None:
        self.module = module
        self.ns = ns_of[module]
        self.resolver = resolver
        self.oracle = resolver.oracle
        self.bodies: list[MethodBody] = []
        self._seen_types: set[str] = set()
        self._seen_methods: set[str] = set()
        #: (path, type index) → starts and members with a body of the type (of the file being added)
        self._starts: dict[tuple[str, int], tuple[list[int], list[MethodDecl]]] = {}

    def _member_starts(self, facts: FileFacts, idx: int) -> tuple[list[int], list[MethodDecl]]:
        """The members with a body of type ``idx`` sorted by start, and their starts (once per type)."""
        key = (facts.path, idx)
        got = self._starts.get(key)
        if got is None:
            bodies = sorted((md for md in facts.types[idx].methods if md.body is not None), key=lambda m: m.start_byte)
            got = self._starts[key] = ([md.start_byte for md in bodies], bodies)
        return got

    def _enclosing(self, facts: FileFacts, scope: FileScope, idx: int,
                   memo: dict[int, MemberContext | None]) -> MemberContext | None:
        """The member whose body declares local or anonymous type ``idx`` (the innermost member of
        the outer type whose lines hold the type's header), as a context; None for other types."""
        if idx in memo:
            return memo[idx]
        td = facts.types[idx]
        out = None
        if td.nesting in ("LOCAL", "ANONYMOUS") and td.outer is not None:
            starts, bodies = self._member_starts(facts, td.outer)
            md = None
            # the nearest member starting before it whose lines hold its header; members do not overlap,
            # so their end lines only grow with their starts: walking back stops at the first that ends before
            for i in range(bisect.bisect_right(starts, td.start_byte) - 1, -1, -1):
                if bodies[i].end_line < td.header_start:
                    break
                if bodies[i].start_line <= td.header_start:
                    md = bodies[i]
                    break
            if md is not None:
                chain = type_chain(facts, td.outer)
                out = MemberContext(scope, chain, self.module, md, md.body, scope.type_vars_for(chain, md.type_params),
                                    self._enclosing(facts, scope, td.outer, memo))
        memo[idx] = out
        return out

    def add_file(self, facts: FileFacts, scope: FileScope) -> None:
        """Add a :class:`~diting.resolve.callfacts.MethodBody` for each member with a body of the file's
        types (and each static initializer that calls); a type or method declared twice counts once."""
        memo: dict[int, MemberContext | None] = {}
        self._starts.clear()
        for idx, td in enumerate(facts.types):
            chain = type_chain(facts, idx)
            binary = scope.binary_of(td)
            if binary in self._seen_types:
                continue  # a duplicate declaration (DUPLICATE_DECLARATION): only the first is recorded
            self._seen_types.add(binary)
            tx_type = self._transactional(td.annotations, scope, chain)
            members: list[tuple[MethodDecl, Any, list[int]]] = [
                (md, md.body, [md.start_line, md.end_line]) for md in td.methods if md.body is not None and md.has_body]
            member_index = {id(md): i for i, md in enumerate(td.methods)}
            if td.clinit_body is not None and td.clinit_body.calls:
                lines = td.static_init_lines
                members.append((MethodDecl("<clinit>", "STATIC_INITIALIZER", ["static"], [], [], [], None, [], 0, 0,
                                           True, 0, td.clinit_body), td.clinit_body,
                                [lines[0][0], lines[-1][1]] if lines else [td.header_start, td.end_line]))
            for md, body, lines in members:
                tv = scope.type_vars_for(chain, md.type_params)
                sig = [scope.resolve(p.type, chain, tv).name for p in md.params]
                stable = f"{self.ns}/{binary}#{md.name}({','.join(sig)})"
                if stable in self._seen_methods:
                    continue  # a duplicate method: records.py keeps the first
                self._seen_methods.add(stable)
                ctx = MemberContext(scope, chain, self.module, md if md.name != "<clinit>" else None, body, tv,
                                    self._enclosing(facts, scope, idx, memo))
                tx = self._transactional(md.annotations, scope, chain) or tx_type or \
                    self._inherited_transactional(binary, md.name, sig)
                self.bodies.append(MethodBody(
                    stable=stable, binary=binary, ns=self.ns, module=self.module, path=facts.path,
                    lines=lines, type_idx=idx, member_idx=member_index.get(id(md), -1),
                    static="static" in md.modifiers,
                    private="private" in md.modifiers,
                    transactional=tx,
                    branches=[{"path": b.path, "kind": b.kind, "parent": b.parent, "lines": [b.line, b.end_line],
                                  "cond": [b.cond_line, b.cond_end_line], "outcome": b.outcome,
                                  "exit_line": b.exit_line, "cond_calls": b.cond_calls, "cond_names": b.cond_names,
                                  "try_calls": b.try_calls, "cond_pos": b.cond_pos, "cond_text": b.cond_text,
                                  "exit_type": b.exit_type}
                                 for b in body.branches],
                    truncated=body.branches_truncated,
                    # names a condition may read that are no field: name → where each local or lambda
                    # parameter of that name is declared (a parameter: -1)
                    shadow=_declared_names(md, body),
                    # a local a condition tests stands for the calls of its initializer
                    local_reads=_local_reads(body),
                    reassigned=sorted(body.reassigned),
                    calls=[self._call(call, ctx) for call in body.calls],
                ))

    def _inherited_transactional(self, binary: str, name: str, sig: list[str]) -> dict[str, Any] | None:
        """``@Transactional`` on the in-repo interface or superclass method this one implements, or on
        that type (Spring reads both)."""
        if name in ("<init>", "<clinit>"):
            return None
        for m, b in self.oracle.registry.ancestors(self.module, binary):
            found = self.oracle.decl(m, b)
            if found is None:
                continue
            scope, idx = found
            td = scope.facts.types[idx]
            chain = scope._chain_of(idx)
            for d in self.resolver._named(m, b, name):
                if list(d.params) == sig:
                    tx = self._transactional(d.method.annotations, scope, chain) or \
                        self._transactional(td.annotations, scope, chain)
                    if tx:
                        return dict(tx, inherited_from=b)
        return None

    def _transactional(self, annotations, scope: FileScope, chain: list[int]) -> dict[str, Any] | None:
        for a in annotations:
            r = scope.resolve_base(TypeRef(tuple(a.name.split("."))), chain, {})
            name = r.name if r is not None else a.name
            if name in _TRANSACTIONAL or (r is None and a.name == "Transactional"):
                return {"annotation": name, "propagation": render(a.args["propagation"]) if "propagation" in a.args
                        else "REQUIRED", "rollback_for": render(a.args["rollbackFor"]) if "rollbackFor" in a.args
                        else None, "line": a.line, "path": scope.facts.path}
        return None

    def _call(self, call: CallSite, ctx: MemberContext) -> CallFact:
        ctx.at = call.pos
        try:
            r = self.resolver.resolve(call, ctx)
        except RecursionError:
            r = CallResolution("UNRESOLVED", None, reason="expression nested too deeply to type")
        fr = self.oracle.receiver_field(call.receiver, ctx) if call.kind in ("CALL", "REF") else None
        accessor, getter_field = self.resolver.accessor(r.targets[0]) \
            if r.status == "RESOLVED" and not r.external else (False, None)
        t0 = r.targets[0] if r.targets else None
        return CallFact(
            ordinal=call.ordinal, kind=call.kind, name=call.name, arity=call.arity, lines=[call.line, call.end_line],
            branch=call.branch, handed_to=call.handed_to, status=r.status, dispatch_kind=r.dispatch_kind,
            declared=_target_json(r.declared), targets=[_target_json(t) for t in r.targets], external=r.external,
            reason=r.reason, field=[fr.module, fr.binary, fr.field.name] if fr is not None else None,
            on_this=(call.kind == "CALL" and call.receiver is None) or (
                call.kind in ("CALL", "REF") and call.receiver is not None and call.receiver.get("kind") == "this"),
            receiver_call=call.receiver["ordinal"] if call.receiver and call.receiver.get("kind") == "callref" else -1,
            accessor=accessor, getter_field=[t0.module, t0.binary, getter_field] if getter_field and t0 else None,
            receiver_text=render(call.receiver, ctx) if call.receiver is not None and r.status == "UNRESOLVED" else None,
        )
