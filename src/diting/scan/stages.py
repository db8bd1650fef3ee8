"""Stages over a fact store, and the runner that orders them from their declarations (docs/architecture.md §2).

A :class:`Stage` names the facts it needs and the facts it makes; :func:`order` sorts a list of
stages so that every fact is made before a stage needs it (declaration order breaks ties), and
refuses a fact made twice, a need nobody makes, or a cycle. :func:`run_stages` runs them over a
fact store (:class:`~diting.scan.facts.ScanFacts` for a repository, ``PackageFacts`` for one
package), each stage with a view that reads its needs only, and checks that it returned exactly
what it declared. :func:`describe` prints the graph (``diting scan --stages``), the picture
docs/architecture.md shows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterable

from diting.scan.facts import FactError, FactStore

if TYPE_CHECKING:
    from diting.scan.progress import Progress


@dataclass(frozen=True)
class Stage:
    """One step of a scan. ``run(view, progress)`` reads the facts of ``needs`` from ``view`` and
    returns ``{fact: value}`` for exactly the facts of ``makes``; ``title`` is what the progress
    line says while it runs."""

    name: str
    title: str
    needs: tuple[str, ...]
    makes: tuple[str, ...]
    run: Callable[[Any, "Progress | None"], dict[str, Any]]

    @property
    def doc(self) -> str:
        """The first line of the stage function's docstring."""
        return ((self.run.__doc__ or "").strip().splitlines() or [""])[0]


def order(stages: Iterable[Stage], given: Iterable[str], store: type[FactStore]) -> list[Stage]:
    """``stages`` in an order where each runs after the makers of its needs (ties: the order
    given). ``given`` are facts present before any stage runs; ``store`` the fact store class that
    declares the facts. Raises :class:`FactError` for an undeclared fact, a fact made twice or both
    given and made, a need that nothing makes, or a cycle."""
    stages = list(stages)
    declared = store.declared()
    maker: dict[str, Stage] = {name: None for name in given}  # type: ignore[misc]
    for st in stages:
        for fact in st.needs + st.makes:
            if fact not in declared:
                raise FactError(f"stage {st.name}: {fact!r} is not a declared fact")
        for fact in st.makes:
            if fact in maker:
                raise FactError(f"fact {fact!r} is made by stage {st.name} and is "
                                + ("given" if maker[fact] is None else f"made by stage {maker[fact].name}"))
            maker[fact] = st
    for st in stages:
        for fact in st.needs:
            if fact not in maker:
                raise FactError(f"stage {st.name} needs {fact!r}, which no stage makes and is not given")
    done: set[str] = set()
    out: list[Stage] = []
    todo = list(stages)
    while todo:
        ready = next((st for st in todo if all(maker[f] is None or maker[f].name in done for f in st.needs)), None)
        if ready is None:
            raise FactError("the stages' needs form a cycle: " + ", ".join(st.name for st in todo))
        out.append(ready)
        done.add(ready.name)
        todo.remove(ready)
    return out


def run_stages(stages: Iterable[Stage], facts: FactStore, progress: "Progress | None") -> FactStore:
    """Run ``stages`` (ordered by :func:`order` over the facts already in ``facts``) and put what each
    makes into ``facts``; returns ``facts``. Raises :class:`FactError` when a stage returns other
    facts than it declares; a stage's own errors (a :class:`~diting.errors.UserError`) pass through.
    ``progress`` None: no progress (a package's stages run inside one step of the scan's)."""
    given = [name for name in facts.declared() if name in facts]
    for st in order(stages, given, type(facts)):
        if progress is not None:
            progress.stage(st.title)
        made = st.run(facts.view(st.needs), progress)
        if set(made) != set(st.makes):
            raise FactError(f"stage {st.name} made {sorted(made)}, declared {sorted(st.makes)}")
        facts.put(**made)
    return facts


def describe(stages: Iterable[Stage], given: Iterable[str], store: type[FactStore]) -> str:
    """The stage graph as text, in run order: per stage its name, what it does, and the facts it needs
    (with the stage that makes each) and makes. Deterministic: the same declarations give the same
    text."""
    given = list(given)
    ordered = order(stages, given, store)
    maker = {f: st.name for st in ordered for f in st.makes}
    rank = {st.name: i for i, st in enumerate(ordered)} | {"given": -1}
    lines = [f"given: {', '.join(given)}", ""]
    for i, st in enumerate(ordered, 1):
        lines.append(f"{i}. {st.name} — {st.doc}")
        by_stage: dict[str, list[str]] = {}
        for f in st.needs:
            by_stage.setdefault(maker.get(f, "given"), []).append(f)
        for src in sorted(by_stage, key=rank.__getitem__):
            lines.append(f"   needs from {src}: {', '.join(by_stage[src])}")
        lines.append(f"   makes: {', '.join(st.makes)}")
    return "\n".join(lines) + "\n"
