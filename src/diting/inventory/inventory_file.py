"""The inventory file (``--inventory``): services named explicitly (docs/scanning.md §5).

YAML ``services: [{service_id, repo_id, module_path, owner, profile, exclusion_reason}]``.
An entry whose ``repo_id`` matches the scanned repository (or that has none)
and whose ``module_path`` names a module (its directory, or its pom or Gradle build file) makes that
module a service with that id; an entry with ``exclusion_reason`` is not
scanned and is reported. Two entries naming one module of the scanned repository
are refused; an entry without ``module_path`` names no module. The same file is the application denominator of the
coverage report over a graph.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from diting.errors import UserError
from diting.ir.canonical import sha256_hex
from diting.inventory.services import unreserved_service_id
from diting.userfiles import load_yaml_list

_FIELDS = {"service_id", "repo_id", "module_path", "owner", "profile", "exclusion_reason"}


@dataclass
class InventoryFile:
    """A loaded inventory file and its sha256 (part of the analysis input)."""

    entries: list[dict[str, Any]]
    sha256: str
    #: the file as given (named in messages)
    path: str = "inventory"

    @classmethod
    def load(cls, path: Path) -> "InventoryFile":
        """Read and check the file. Raises :class:`UserError` when it is missing or malformed."""
        doc, data = load_yaml_list(path, "inventory file", "services")
        entries = []
        for i, e in enumerate(doc["services"]):
            if not isinstance(e, dict) or not e.get("service_id"):
                raise UserError(f"inventory file {path}: entry #{i + 1} needs a service_id")
            unknown = set(e) - _FIELDS
            if unknown:
                raise UserError(f"inventory file {path}: entry {e['service_id']} has unknown fields "
                                f"{', '.join(sorted(unknown))}")
            bad = sorted(k for k, v in e.items() if not isinstance(v, (str, type(None))))
            if bad:  # 123, yes, 2024 are YAML numbers and booleans: quote them to mean text
                raise UserError(f"inventory file {path}: entry #{i + 1} has a value that is not text: "
                                f"{', '.join(bad)} (quote it)")
            entry = {k: (v if v else None) for k, v in e.items()}
            if entry.get("profile"):  # a profile set names its profiles: "dev,,local" is a typo, never "dev,local"
                from diting.config.spring import profile_set
                profile_set(entry["profile"], f"inventory file {path}: the profile of {entry['service_id']},")
            twin = next((x for x in entries if unreserved_service_id(x["service_id"]).casefold()
                         == unreserved_service_id(entry["service_id"]).casefold()), None)
            if twin is not None:
                also = "" if twin["service_id"] == entry["service_id"] else f" (also as {twin['service_id']!r})"
                raise UserError(f"inventory file {path}: service_id {entry['service_id']!r} is listed twice{also}; "
                                "a service is one entry")
            entries.append(entry)
        return cls(entries, sha256_hex(data), str(path))

    def for_repo(self, repo_id: str, model) -> tuple[dict[str, dict], list[tuple[str, str]], list[str]]:
        """Entries of this repository: forced services by pom path, excluded (service_id, pom path),
        and ids of entries whose module_path is not a module here. Raises :class:`UserError` when two
        entries of this repository name one module (however spelt: its directory, ``.``, its build
        file): a module is one service, and no field of an entry makes a second one of it (another
        environment is another scan with ``--profile``)."""
        forced: dict[str, dict] = {}
        excluded: list[tuple[str, str]] = []
        unmapped: list[str] = []
        claimed: dict[str, dict] = {}
        by_dir = {m.dir: p for p, m in model.modules.items()}
        for e in self.entries:
            if e.get("repo_id") and e["repo_id"] != repo_id:
                continue
            if not (e.get("module_path") or "").strip():  # names a service (coverage's denominator), no module
                continue
            mp = e["module_path"].strip().strip("/")
            if mp == ".":
                mp = ""
            pom = mp if mp in model.modules else by_dir.get(mp.rstrip("/"))
            if pom is None:
                unmapped.append(e["service_id"])
                continue
            first = claimed.setdefault(pom, e)
            if first is not e:
                raise UserError(
                    f"inventory file {self.path}: entries {first['service_id']!r} (module_path "
                    f"{first['module_path']!r}) and {e['service_id']!r} (module_path {e['module_path']!r}) both name "
                    f"the module {pom} of {repo_id}; a module is one service: keep one entry (scan again with "
                    "--profile for another environment)")
            if e.get("exclusion_reason"):
                excluded.append((e["service_id"], pom))
            else:
                forced[pom] = e
        return forced, excluded, unmapped
