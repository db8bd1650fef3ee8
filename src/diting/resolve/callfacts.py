"""The typed call facts of a module's member bodies: made once per module by stage ``modules``
(``resolve/callsites.py`` ``ModuleCallSites``), read per package by the call graph, wrapper sends,
the branch ledger and recovery evidence (docs/callgraph.md).

A method target is ``[module, binary, name, params]`` (params None when unknown), as
``resolve/calls.py`` resolves it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class CallFact:
    """One call site of a body, resolved in its module."""

    #: the call's position among its member's calls (what a call-site id names)
    ordinal: int
    #: CALL, NEW or REF (a method reference)
    kind: str
    name: str
    arity: int
    #: first and last line
    lines: list[int]
    #: index of the branch arm the call sits in (-1: none)
    branch: int
    #: ordinal of the call this one is an argument of (a lambda or reference handed on; -1: none)
    handed_to: int
    #: RESOLVED, AMBIGUOUS or UNRESOLVED
    status: str
    dispatch_kind: str | None
    #: the method the static types name, and the methods it may dispatch to
    declared: list | None
    targets: list[list]
    #: the target is a library method (EXTERNAL)
    external: bool
    reason: str | None
    #: ``[module, binary, field]`` of the field the receiver reads, or None
    field: list | None
    #: called on ``this`` (or with no receiver)
    on_this: bool
    #: ordinal of the call the receiver is the result of (-1: none)
    receiver_call: int
    #: the target is a trivial accessor (a getter or setter of one field)
    accessor: bool
    #: ``[module, binary, field]`` the target getter returns, or None
    getter_field: list | None
    #: the receiver as written, when the call does not resolve
    receiver_text: str | None


@dataclass(frozen=True, slots=True)
class MethodBody:
    """One member with a body: where it is, its branch arms and its call facts."""

    #: the METHOD stable_id
    stable: str
    binary: str
    ns: str
    module: str
    path: str
    lines: list[int]
    #: index of its type in the file's facts, and of the member in the type (-1: a static initializer)
    type_idx: int
    member_idx: int
    static: bool
    private: bool
    #: ``@Transactional`` on it, its type or what it implements: ``{annotation, propagation, rollback_for,
    #: line, path[, inherited_from]}``, or None
    transactional: dict[str, Any] | None
    #: branch arms (:class:`~diting.java.branches.BranchSite` as dicts)
    branches: list[dict[str, Any]]
    #: the body had more arms than the budget: the ledger of it is cut
    truncated: bool
    #: names a condition may read that are no field: name → start bytes of the locals and lambda
    #: parameters of that name (a parameter: -1)
    shadow: dict[str, list[int]]
    #: locals a condition may test, standing for the calls of their initializer
    local_reads: dict[str, list[list]]
    reassigned: list[str]
    calls: list[CallFact]
