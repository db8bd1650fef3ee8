"""The emit mechanisms a package's probes run, in order, and how a new one is registered (docs/rules.md §10).

A mechanism is a function of one package's :class:`~diting.probes.context.ProbeContext`: it reads
the candidates of the emit kinds it owns (what the rules matched, ``pc.ctx.by_emit``) and writes
records through the context's helpers (:meth:`~ProbeContext.entry`, :meth:`~ProbeContext.contract`,
:meth:`~ProbeContext.topic`, :meth:`~ProbeContext.diag` …). The built-in ones are listed below in
the order they run; :func:`register` adds one — a protocol the engine has no construct for needs
its rule files and one such function — and the packages of every later scan run it after the
built-in families and before the SQL stage. Mechanisms of installed distributions are found under
the entry-point group ``diting.mechanisms`` (each entry a :class:`Mechanism`). A registered
mechanism is recorded in every package's ``analysis_input.tool_versions``, since it changes what a
scan writes.
"""

from __future__ import annotations

import functools
import importlib.metadata as md
import re
from dataclasses import dataclass, field
from collections.abc import Mapping
from typing import TYPE_CHECKING, Callable

from diting.errors import UserError
from diting.probes import (cache, config_keys, events, gateway_routes, hints, http, jobs, mq, rpc, spring_beans,
                           stream)
from diting.probes.model import declare_emit_kind, forget_emit_kinds
from diting.sql.emit import SqlStage
from diting.sql.fragment_ledger import record_ledger_items

if TYPE_CHECKING:
    from diting.probes.context import ProbeContext, ProbeStats

#: the entry-point group installed distributions register mechanisms under
ENTRY_POINT_GROUP = "diting.mechanisms"


@dataclass(frozen=True)
class Mechanism:
    """One emit mechanism. ``name``: unique, lower-case words joined by ``_``; ``run``: the function
    of a package's probe context; ``emit_kinds``: the emit kinds it adds to the engine's (kind → the
    match forms a rule of that kind may use), which rule files may then name."""

    name: str
    run: Callable[["ProbeContext"], None]
    emit_kinds: Mapping[str, frozenset[str]] = field(default_factory=dict)

    @property
    def origin(self) -> str:
        """Where the function is defined (``module.function``)."""
        return f"{getattr(self.run, '__module__', '?')}.{getattr(self.run, '__qualname__', '?')}"


def _sql(pc: "ProbeContext") -> None:
    """The SQL stage (sql/emit.py): statements, tables, lineage, shards."""
    stage = SqlStage(pc)
    pc.stats.sql = stage.run()
    pc.stats.sql_datasource = stage.config.datasource
    pc.sql_stage = stage


def _mark_loaded(pc: "ProbeContext") -> None:
    """Facts made by code (sends, cache and config reads and writes, RPC and dynamic calls) are
    kept wherever the code is; each says whether its class is loaded by the package's context
    (``attributes.loaded``), the way context-made facts (entries, contracts, subscriptions)
    are only made when loaded (docs/scanning.md §12)."""
    for rec in pc.rs.relations.values():
        if rec["kind"] not in ("PUBLISHES", "READS", "WRITES", "CALLS") or "loaded" in rec["attributes"]:
            continue
        source = rec["stable_id"].split("|", 2)[1]
        if "/" not in source or "#" not in source:
            continue
        binary = source.split("/", 1)[1].split("#", 1)[0]
        rec["attributes"] = dict(rec["attributes"], loaded=pc.ctx.class_loaded(binary))


def _sql_ledger(pc: "ProbeContext") -> None:
    """The SQL stage's ledger items, once every entity of the package is final."""
    record_ledger_items(pc.sql_stage)


#: the built-in families, in the order they run (each reads the records the ones before it wrote)
FAMILIES: tuple[Mechanism, ...] = (
    Mechanism("context_gaps", spring_beans.context_gaps),
    Mechanism("beans", spring_beans.beans),
    Mechanism("injection", spring_beans.injection),
    Mechanism("rpc_providers", rpc.rpc_providers),
    Mechanism("rpc_consumers", rpc.rpc_consumers),
    Mechanism("http_endpoints", http.http_endpoints),
    Mechanism("http_routes", http.http_routes),
    Mechanism("feign_clients", http.feign_clients),
    Mechanism("http_client_calls", http.http_client_calls),
    Mechanism("gateway_routes", gateway_routes.gateway_routes),
    Mechanism("mq_listeners", mq.mq_listeners),
    Mechanism("mq_sends", mq.mq_sends),
    Mechanism("mq_receives", mq.mq_receives),
    Mechanism("mq_streams", stream.mq_streams),
    Mechanism("mq_bindings", mq.mq_bindings),
    Mechanism("config_keys", config_keys.config_keys),
    Mechanism("cache_ops", cache.cache_ops),
    Mechanism("jobs", jobs.jobs),
    Mechanism("events", events.events),
    Mechanism("dynamic_calls", hints.dynamic_calls),
    Mechanism("entry_hints", hints.entry_hints),
)
#: what runs after every family, registered ones included: SQL, then `loaded` on code facts, then SQL ledger items
CLOSING: tuple[Mechanism, ...] = (
    Mechanism("sql", _sql),
    Mechanism("loaded", _mark_loaded),
    Mechanism("sql_ledger", _sql_ledger),
)

_REGISTERED: list[Mechanism] = []
_NAME = re.compile(r"[a-z][a-z0-9_]{0,63}")


def _said(exc: BaseException, limit: int = 500) -> str:
    """An exception's message on one line, at most ``limit`` characters (what a plugin raises is not
    trusted to print or to pickle back from a worker)."""
    try:
        text = str(exc)
    except Exception:  # noqa: BLE001 - an exception whose __str__ raises
        text = "(its message cannot be printed)"
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "…"


def register(mechanism: Mechanism) -> None:
    """Add ``mechanism`` to the packages of every later scan in this process (and in the workers it
    forks): it runs after the built-in families, before :data:`CLOSING`; its emit kinds become valid
    in rule files loaded from now on. Raises :class:`UserError` for a malformed or taken name, or an
    emit kind the engine already has."""
    if not isinstance(mechanism, Mechanism):
        raise UserError(f"{mechanism!r} is not a diting Mechanism")
    if not isinstance(mechanism.name, str) or not _NAME.fullmatch(mechanism.name):
        raise UserError(f"mechanism name {mechanism.name!r}: lower-case words joined by _, at most 64 characters")
    if mechanism.name in {m.name for m in FAMILIES + CLOSING + tuple(_REGISTERED)}:
        raise UserError(f"a mechanism named {mechanism.name!r} is already registered")
    if not callable(mechanism.run) or not isinstance(mechanism.emit_kinds, Mapping) or not all(
            isinstance(k, str) and isinstance(f, (set, frozenset, list, tuple)) and all(isinstance(x, str) for x in f)
            for k, f in mechanism.emit_kinds.items()):
        raise UserError(f"mechanism {mechanism.name}: run must be a function and emit_kinds a mapping of kind "
                        "names to match forms")
    try:
        for kind, forms in sorted(mechanism.emit_kinds.items()):
            declare_emit_kind(kind, set(forms), mechanism.name)
    except ValueError as exc:
        forget_emit_kinds(mechanism.name)  # all of its kinds or none
        raise UserError(f"mechanism {mechanism.name}: {exc}") from None
    _REGISTERED.append(mechanism)


def unregister(name: str) -> None:
    """Remove a mechanism :func:`register` added, and the emit kinds it declared."""
    _REGISTERED[:] = [m for m in _REGISTERED if m.name != name]
    forget_emit_kinds(name)


@functools.cache
def _installed() -> tuple[Mechanism, ...]:
    """Mechanisms of installed distributions (entry-point group :data:`ENTRY_POINT_GROUP`), registered
    once per process. Raises :class:`UserError` for an entry that is not a :class:`Mechanism`."""
    found = []
    for ep in sorted(md.entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        try:
            obj = ep.load()
        except Exception as exc:  # noqa: BLE001 - an installed plugin that does not import is the user's to fix
            raise UserError(f"entry point {ep.name} ({ep.value}) of group {ENTRY_POINT_GROUP} does not load: "
                            f"{type(exc).__name__}: {exc}") from exc
        if not isinstance(obj, Mechanism):
            raise UserError(f"entry point {ep.name} of group {ENTRY_POINT_GROUP} is not a diting Mechanism")
        try:
            register(obj)
        except UserError as exc:
            raise UserError(f"entry point {ep.name} ({ep.value}) of group {ENTRY_POINT_GROUP}: {exc.message}") from None
        found.append(obj)
    return tuple(found)


def registered() -> tuple[Mechanism, ...]:
    """The mechanisms added to the built-in ones, in the order they run."""
    _installed()
    return tuple(_REGISTERED)


def mechanisms() -> tuple[Mechanism, ...]:
    """Every mechanism a package runs, in order: :data:`FAMILIES`, :func:`registered`, :data:`CLOSING`."""
    return FAMILIES + registered() + CLOSING


def run_mechanisms(pc: "ProbeContext") -> "ProbeStats":
    """Run every mechanism over one package's probe context; returns its counts. Raises
    :class:`UserError` naming a registered mechanism that fails (the built-in ones are diting's)."""
    extra = registered()
    plugins = {m.name for m in extra}
    for m in FAMILIES + extra + CLOSING:
        if m.name not in plugins:
            m.run(pc)
            continue
        try:
            m.run(pc)
        except Exception as exc:  # noqa: BLE001 - a plugin's failure, told apart from diting's own
            raise UserError(f"mechanism {m.name} ({m.origin}) failed in package {pc.plan.service_id}: "
                            f"{type(exc).__name__}: {_said(exc)}") from None  # no chained traceback to ship
    return pc.stats
