"""``--config-snapshot FILE``: values captured from a config centre (docs/scanning.md §11.1).

The file is JSON ``{snapshot_id, environment, captured_at, entries: [{scheme,
namespace?, key, value, service_id?}]}``. An entry with ``service_id`` applies
to that service only and wins over an entry without one. ``config`` keys are
matched in Spring's canonical relaxed form, ``ducc`` keys exactly. Two entries
for one key (and service) with different values make the key AMBIGUOUS — never
a pick. The snapshot's id, environment, capture time and sha256 go into
``analysis_input.config_snapshot_refs``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from diting.config.sources import canonical_key
from diting.errors import UserError
from diting.ir.canonical import sha256_hex
from diting.userfiles import read_user_file


class SnapshotEntry(BaseModel):
    """One captured value. ``scheme`` is the key's URN scheme (``config`` for Spring/Nacos/Apollo
    keys, ``ducc`` for Ducc); ``key`` is written without it; ``namespace`` is recorded, not matched."""

    model_config = ConfigDict(extra="forbid")
    scheme: Literal["config", "ducc"]
    namespace: str | None = None
    key: str = Field(min_length=1)
    value: str
    service_id: str | None = None

    @field_validator("key")
    @classmethod
    def _no_scheme(cls, key: str) -> str:
        if "://" in key:
            raise ValueError("write the key without its scheme (put config or ducc in 'scheme')")
        return key


class SnapshotFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    snapshot_id: str = Field(min_length=1)
    environment: str
    captured_at: str
    entries: list[SnapshotEntry]


@dataclass
class SnapshotValue:
    """``status`` RESOLVED (one value) or AMBIGUOUS (``candidates``)."""

    status: str
    value: str | None
    candidates: list[str] = field(default_factory=list)


@dataclass
class ConfigSnapshot:
    """A loaded snapshot: lookups by (scheme, key, service)."""

    snapshot_id: str
    environment: str
    captured_at: str
    sha256: str
    values: dict[tuple[str, str, str | None], set[str]] = field(default_factory=dict)

    @staticmethod
    def norm(scheme: str, key: str) -> str:
        return canonical_key(key) if scheme == "config" else key.strip()

    @classmethod
    def load(cls, path: Path) -> "ConfigSnapshot":
        """Read and validate ``path``. Raises :class:`UserError` naming the file and the problem."""
        data = read_user_file(path, "config snapshot")
        try:
            doc = SnapshotFile.model_validate(json.loads(data.decode("utf-8")))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise UserError(f"config snapshot {path} is not JSON: {exc}") from exc
        except RecursionError as exc:
            raise UserError(f"config snapshot {path} nests too deeply") from exc
        except ValidationError as exc:
            first = exc.errors()[0]
            raise UserError(f"config snapshot {path}: {'.'.join(str(p) for p in first['loc'])}: "
                            f"{first['msg']}") from exc
        except ValueError as exc:  # e.g. an integer beyond Python's digit limit
            raise UserError(f"config snapshot {path} is not JSON diting can read: {exc}") from exc
        snap = cls(doc.snapshot_id, doc.environment, doc.captured_at, sha256_hex(data))
        for e in doc.entries:
            snap.values.setdefault((e.scheme, cls.norm(e.scheme, e.key), e.service_id), set()).add(e.value)
        return snap

    def lookup(self, scheme: str, key: str, service_id: str | None) -> SnapshotValue | None:
        """The value of ``key`` for ``service_id`` (service-specific entries first), or None."""
        k = self.norm(scheme, key)
        for sid in ([service_id] if service_id else []) + [None]:
            vals = self.values.get((scheme, k, sid))
            if vals:
                if len(vals) == 1:
                    return SnapshotValue("RESOLVED", next(iter(vals)))
                return SnapshotValue("AMBIGUOUS", None, sorted(vals))
        return None

    def ref(self) -> dict[str, str]:
        return {"snapshot_id": self.snapshot_id, "environment": self.environment, "captured_at": self.captured_at,
                "sha256": self.sha256}
