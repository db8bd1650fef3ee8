"""What a scan is asked and what it answers: :class:`ScanOptions`, :class:`ScanResult` (docs/scanning.md)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from diting.config.spring import profile_set
from diting.errors import UserError
from diting.limits import MAX_FILE_BYTES_LIMIT, MAX_WORKERS
from diting.source.git import checked_repo_id

#: files larger than this are not read (FILE_TOO_LARGE); a budget, recorded in analysis_input
DEFAULT_MAX_FILE_BYTES = 8 * 1024 * 1024


@dataclass
class ScanOptions:
    """Options of one scan (``--jobs`` and output paths never reach a package)."""

    out: Path
    services: list[str] = field(default_factory=list)
    profiles: list[str] | None = None
    repo_id: str | None = None
    inventory: Path | None = None
    jobs: int = 0
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    rules_dirs: list[Path] = field(default_factory=list)
    config_snapshot: Path | None = None
    quiet: bool = False
    #: ``--sql-dialect`` values: ``DIALECT`` (every datasource) or ``DATASOURCE=DIALECT``
    sql_dialects: list[str] = field(default_factory=list)
    #: ``--config-dir`` values: repository folders holding config-centre exports (config/remote.py)
    config_dirs: list[str] = field(default_factory=list)
    #: ``--cache DIR``: the scan cache (diting/cache.py); never reaches a package
    cache: Path | None = None

    def __post_init__(self) -> None:
        """Bounds of the integer options (the CLI checks them as it parses; this catches the other
        callers, such as a re-derivation reading a package's recorded options). Raises
        :class:`UserError` for ``jobs`` outside 0..MAX_WORKERS or ``max_file_bytes`` outside
        1..:data:`MAX_FILE_BYTES_LIMIT`."""
        bounded_int("--jobs", self.jobs, 0, MAX_WORKERS)
        bounded_int("--max-file-bytes", self.max_file_bytes, 1, MAX_FILE_BYTES_LIMIT)
        if self.profiles is not None:
            self.profiles = profile_set(self.profiles, "--profile")
        if self.repo_id is not None:
            checked_repo_id(self.repo_id)


def bounded_int(name: str, value: object, low: int, high: int) -> int:
    """``value`` when it is an integer in ``low..high``; else :class:`UserError` naming ``name``
    and the range."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise UserError(f"{name} must be an integer from {low} to {high}, not {value!r}")
    return value


@dataclass
class PackageResult:
    """What one written package is: where, its status, and record counts."""

    service_id: str
    kind: str
    path: Path
    status: str
    write_status: str
    scan_id: str
    counts: dict[str, int]
    basis: list[str]
    modules: list[str]
    #: the database of the package's one JDBC URL, when known (what ``--sql-dialect DS=…`` names)
    sql_datasource: str | None = None
    #: written from the scan cache (docs/scanning.md §14), not assembled
    from_cache: bool = False


@dataclass
class ScanResult:
    repo_id: str
    commit_sha: str
    packages: list[PackageResult]
    excluded_services: list[tuple[str, str]]
    inventory_unmapped: list[str]
    repo_id_basis: str = "--repo-id"
    #: ``--sql-dialect DS=…`` values whose datasource no package has
    unused_sql_dialects: list[str] = field(default_factory=list)

