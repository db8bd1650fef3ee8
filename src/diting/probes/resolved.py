"""A rule role's value after a package's configuration (docs/scanning.md §10).

What every emit mechanism reads when it turns a candidate into records: the probes, the SQL stage,
streams and wrappers.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class ResolvedText:
    """A role value after the package's configuration: RESOLVED, DEFAULT_ONLY, AMBIGUOUS or UNKNOWN,
    with the config keys it read and, when unknown, the expression that did not fold."""

    status: str
    value: str | None
    keys: list[tuple[str, str, str | None, str]] = field(default_factory=list)  # (scheme, key, default, resolution)
    expression: str | None = None
    reason: str = ""
