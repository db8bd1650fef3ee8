"""Loading the versioned rule files (SPEC §5).

Rule files are YAML, one per family, under the shipped ``rules/`` directory;
``--rules DIR`` adds files whose rules add to or override (by ``id``) the
shipped ones. Each rule's sha256 (of its canonical JSON) and each file's sha256
go into the analysis input, so a changed rule changes the input digest.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from diting.errors import UserError
from diting.ir.canonical import dumps, sha256_hex
from diting.userfiles import load_yaml_list

_REQUIRED = ("id", "version", "owner", "family", "description", "source", "match", "emits")


def shipped_rules_dir() -> Path:
    """The rules directory shipped with diting (wheel: ``diting/_rules``; source tree: ``rules/``)."""
    here = Path(__file__).resolve().parent
    for cand in (here / "_rules", here.parent.parent / "rules"):
        if cand.is_dir():
            return cand
    raise UserError("diting's rule files are missing from this installation")


@dataclass
class RuleFile:
    path: str
    sha256: str
    family: str
    version: int
    rules: list[dict[str, Any]]


@dataclass
class RuleSet:
    """All loaded rules, by id (later directories override earlier ones)."""

    files: list[RuleFile] = field(default_factory=list)
    by_id: dict[str, dict[str, Any]] = field(default_factory=dict)

    def family(self, family: str) -> list[dict[str, Any]]:
        return [r for rid, r in sorted(self.by_id.items()) if r["family"] == family]

    def digest_entries(self) -> list[dict[str, Any]]:
        """``[{id, version, sha256}]`` sorted by id, for ``analysis_input.json``."""
        return [{"id": rid, "version": r["version"], "sha256": sha256_hex(dumps(r))}
                for rid, r in sorted(self.by_id.items())]

    def well_known_parent(self, group_id: str) -> bool:
        """True when a maven-parents rule matches ``group_id`` (equal, or a dotted prefix)."""
        for r in self.family("maven-parents"):
            g = r["match"].get("pom_parent", {}).get("group_id", "")
            if g and (group_id == g or group_id.startswith(g + ".")):
                return True
        return False

    def library_types(self) -> dict[str, dict[str, str]]:
        """Package → {simple name: kind} from the ``catalog`` rules."""
        out: dict[str, dict[str, str]] = {}
        for r in self.family("catalog"):
            pkg = r["match"].get("package")
            types = r["emits"].get("types") or {}
            if pkg:
                out.setdefault(str(pkg), {}).update({str(k): str(v) for k, v in types.items()})
        return out

    def application_annotations(self) -> set[str]:
        """FQNs of annotations that mark a Spring Boot application class."""
        out = set()
        for r in self.by_id.values():
            if r["emits"].get("kind") == "DEPLOYABLE_APPLICATION":
                fqn = r["match"].get("annotation", {}).get("fqn")
                if fqn:
                    out.add(fqn)
        return out


def load_rules(extra_dirs: list[Path] | None = None) -> RuleSet:
    """Load the shipped rules, then each of ``extra_dirs``. Raises :class:`UserError` for a
    file that is not valid YAML or a rule that lacks a required field."""
    rs = RuleSet()
    dirs = [shipped_rules_dir()] + list(extra_dirs or [])
    for d in dirs:
        if not d.is_dir():
            raise UserError(f"rules directory not found: {d}")
        for path in sorted(d.glob("*.yaml")) + sorted(d.glob("*.yml")):
            doc, data = load_yaml_list(path, "rule file", "rules")
            rules = []
            for i, r in enumerate(doc["rules"]):
                if not isinstance(r, dict):
                    raise UserError(f"rule file {path.name}: rule #{i + 1} is not a mapping")
                missing = [k for k in _REQUIRED if k not in r]
                if missing:
                    raise UserError(f"rule file {path.name}: rule {r.get('id', '#' + str(i + 1))} lacks "
                                    f"{', '.join(missing)}")
                rules.append(r)
                rs.by_id[str(r["id"])] = r
            rs.files.append(RuleFile(path.name, sha256_hex(data), str(doc.get("family", "")),
                                     int(doc.get("version", 0)), rules))
    return rs
