"""The diff report's shape (``diting diff --format json``), shipped as ``diff-report.schema.json``
(``diff-range-report.schema.json`` for ``A..B``)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from diting.diff.packages import CLASSES

ChangeClass = Literal[CLASSES]  # type: ignore[valid-type]
CommitRelation = Literal["EXACT", "ANCESTOR", "AHEAD", "DIVERGED", "MULTIPLE_MERGE_BASES", "UNKNOWN"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Side(_Strict):
    """One of the two packages."""

    scan_id: str
    commit_sha: str
    input_digest: str


class FoldedRow(_Strict):
    """A difference that exists only because of the change it is folded into (the EXPOSES of a
    changed contract, the entry of an endpoint, the members of an added type …), in its own class."""

    class_: ChangeClass = Field(alias="class")
    stable_id: str
    before: Any
    after: Any


class ChangeRow(FoldedRow):
    """One change, once, by its most specific class: the comparable parts of the record on each side
    (None where absent; references name the stable_id they point at), and the rows folded into it."""

    folded: list[FoldedRow]


class RenameCandidate(_Strict):
    """A removal plus an addition that may be one thing renamed."""

    kind: Literal["TYPE", "METHOD"]
    before: str
    after: str
    basis: str


class ConsumerImpact(_Strict):
    """A removed or changed contract or topic and the other services the graph shows depending on it."""

    stable_id: str
    urn: str
    change: ChangeClass
    services: list[str]
    edges: int


class DiffReport(_Strict):
    """``diting diff`` as JSON."""

    schema_version: Literal["0.1"]
    service_id: str
    old: Side
    new: Side
    commit_relation: CommitRelation
    merge_bases: list[str]
    input_differences: list[str]
    #: changes by class (each change once; complete whatever the listing leaves out)
    summary: dict[ChangeClass, int]
    #: rows folded into a change, by their own class
    folded_summary: dict[ChangeClass, int]
    #: the changes listed (all, unless --class narrowed them)
    changes: list[ChangeRow]
    #: the changes not listed, by class
    omitted: dict[ChangeClass, int]
    rename_candidates: list[RenameCandidate]
    impact: list[ConsumerImpact] | None = None


class DiffRangeReport(_Strict):
    """``diting diff --repo REPO A..B --format json``: one :class:`DiffReport` per service present at
    both commits, and the services present at one only."""

    range: str
    old_commit: str
    new_commit: str
    reused: list[str]
    services: list[DiffReport]
    only_old: list[str]
    only_new: list[str]
    #: services present at both commits that --service left out
    omitted_services: list[str]
