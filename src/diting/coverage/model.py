"""The coverage report's shape (``diting coverage --format json``), shipped as
``coverage-report.schema.json``."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from diting.ir.models import CoverageDimension

#: the dimensions of docs/coverage.md §2, in report order
DIMENSIONS = ("applications", "entries", "cross_service_edges", "branch_ledger", "files", "sql_statements",
              "config_keys", "call_sites")
#: the terms of a dimension that add up to ``discovered``
TERMS = ("resolved", "partial", "failed", "excluded")
#: kinds of catalogue difference (docs/coverage.md §6)
DIFFERENCE_KINDS = ("INVENTORY_WITHOUT_PACKAGE", "PACKAGE_WITHOUT_INVENTORY", "CONSUMER_WITHOUT_PROVIDER",
                    "PROVIDER_WITHOUT_CONSUMER", "MODULE_NOT_DEPLOYED")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ServiceCoverage(_Strict):
    """One package's own coverage.json dimensions (graph-level dimensions hold zeros there)."""

    service_id: str
    label: str
    kind: Literal["SERVICE", "LIB"]
    scan_id: str
    #: the package's repository, as its manifest names it (repo_id, commit_time, analyzer_version and
    #: the source's diting_version are absent from reports an older diting wrote)
    repo_id: str | None = None
    commit_sha: str
    #: the commit's committer time (ISO 8601) the package's analysis input records; None when it
    #: records none. Packages hold no time of their scan: equal inputs give equal bytes
    commit_time: str | None = None
    #: the diting version that wrote the package (its manifest's ``analyzer_version``)
    analyzer_version: str | None = None
    status: str
    dimensions: dict[str, CoverageDimension]


class Application(_Strict):
    """One application of the denominator and the term it counts as."""

    service_id: str
    term: Literal["resolved", "partial", "failed", "excluded"]
    reason: str | None
    scan_ids: list[str]


class CatalogueDifference(_Strict):
    """A difference between the inventory, the packages and the estate's edges."""

    kind: Literal[DIFFERENCE_KINDS]  # type: ignore[valid-type]
    service_id: str | None
    subject: str
    detail: str


class InventorySource(_Strict):
    path: str
    sha256: str


class ReportSource(_Strict):
    """What the report was computed from."""

    graph: bool
    packages: int
    inventory: InventorySource | None
    #: the diting version that computed the report
    diting_version: str | None = None


class CoverageReport(_Strict):
    """``diting coverage`` as JSON: estate totals per dimension, each package's dimensions, the
    applications of the denominator, catalogue differences, unresolved relations by kind and
    diagnostics by code. Every number is counted from records; no ratio is stored."""

    schema_version: Literal["0.1"]
    source: ReportSource
    dimensions: dict[str, CoverageDimension]
    services: list[ServiceCoverage]
    applications: list[Application]
    catalogue_differences: list[CatalogueDifference]
    unresolved_by_kind: dict[str, dict[str, int]]
    diagnostics_by_code: dict[str, int]
