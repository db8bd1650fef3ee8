"""Findings: what a stage noticed, before packages and record ids exist.

A stage (inventory, java, config) reports a :class:`Finding`; the package
assembler turns each finding into a ``diagnostics.jsonl`` record in every
package that holds the file or module it is about, with its fixed severity
from :data:`diting.ir.models.DIAGNOSTIC_SEVERITY`.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Finding:
    """``code`` from the diagnostic catalogue; ``path`` and 1-based ``start_line``..``end_line``
    locate the evidence (lines 0 when no line can be cited); ``module`` is the pom path of
    the module it concerns (None for repository-level findings); ``key`` makes it unique."""

    code: str
    message: str
    path: str | None
    start_line: int = 0
    end_line: int = 0
    module: str | None = None
    key: str = ""
    source_type: str = "BUILD"

    @property
    def identity(self) -> str:
        return f"{self.path}:{self.start_line}-{self.end_line}|{self.key or self.message}"
