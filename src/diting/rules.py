"""Loading the versioned rule files (docs/rules.md §1).

Rule files are YAML, one per family, under the shipped ``rules/`` directory;
``--rules DIR`` adds files whose rules add to or override (by ``id``) the
shipped ones. Each rule's sha256 (of its canonical JSON) and each file's sha256
go into the analysis input, so a changed rule changes the input digest.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from diting.errors import UserError
from diting.ir.canonical import dumps, sha256_hex
from diting.ir.models import ENGINE_ENTRY_KINDS
from diting.probes.model import Protocol, Rule, RuleFile
from diting.userfiles import parse_yaml_list, read_user_file



def shipped_rules_dir() -> Path:
    """The rules directory shipped with diting (wheel: ``diting/_rules``; source tree: ``rules/``)."""
    here = Path(__file__).resolve().parent
    for cand in (here / "_rules", here.parent.parent / "rules"):
        if cand.is_dir():
            return cand
    raise UserError("diting's rule files are missing from this installation")


@dataclass
class LoadedFile:
    path: str
    sha256: str
    family: str
    version: int
    rules: list[Rule]


@dataclass
class RuleSet:
    """All loaded rules, by id (later directories override earlier ones)."""

    files: list[LoadedFile] = field(default_factory=list)
    by_id: dict[str, Rule] = field(default_factory=dict)
    raw: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: rule id → the directory the rule was (last) loaded from
    origin: dict[str, Path] = field(default_factory=dict)
    #: URN scheme → its declaration (a later rule file's declaration replaces an earlier one)
    protocols: dict[str, Protocol] = field(default_factory=dict)

    def protocol_table(self) -> dict[str, dict[str, Any]]:
        """``{scheme: {alignment, entry_kinds, routing?}}`` sorted by scheme: what every package records in
        ``analysis_input.json`` (``protocols``) and the graph aligns by."""
        return {s: {k: v for k, v in (("alignment", p.alignment), ("entry_kinds", list(p.entry_kinds)),
                                      ("routing", p.routing)) if v is not None}
                for s, p in sorted(self.protocols.items())}

    def default_entry_kind(self, scheme: str, fallback: str) -> str:
        """The first entry kind ``scheme`` declares, else ``fallback``."""
        p = self.protocols.get(scheme)
        return p.entry_kinds[0] if p is not None and p.entry_kinds else fallback

    def from_dirs(self, dirs: list[Path]) -> list[Rule]:
        """Rules loaded from ``dirs`` (user rule directories), by id."""
        wanted = {Path(d) for d in dirs}
        return [r for rid, r in sorted(self.by_id.items()) if self.origin.get(rid) in wanted]

    def family(self, family: str) -> list[Rule]:
        return [r for rid, r in sorted(self.by_id.items()) if r.family == family]

    def by_emit(self, *kinds: str) -> list[Rule]:
        """Rules whose ``emits.kind`` is one of ``kinds``, by id."""
        return [r for rid, r in sorted(self.by_id.items()) if r.emits.kind in kinds]

    def digest_entries(self) -> list[dict[str, Any]]:
        """``[{id, version, sha256}]`` sorted by id, for ``analysis_input.json`` (computed once per
        rule set: every package of a scan carries the same list)."""
        cached = self.__dict__.get("_digests")
        if cached is None:
            cached = [{"id": rid, "version": r.version,
                       "sha256": sha256_hex(dumps(r.model_dump(mode="json", exclude_none=True)))}
                      for rid, r in sorted(self.by_id.items())]
            self.__dict__["_digests"] = cached
        return [dict(d) for d in cached]

    def well_known_parent(self, group_id: str) -> bool:
        """True when a maven-parents rule matches ``group_id`` (equal, or a dotted prefix)."""
        for r in self.by_emit("WELL_KNOWN_PARENT"):
            g = r.match.pom_parent.group_id if r.match.pom_parent else ""
            if g and (group_id == g or group_id.startswith(g + ".")):
                return True
        return False

    def build_plugins(self, system: str) -> dict[str, dict[str, Any]]:
        """Plugin id (Maven ``groupId:artifactId``, or a Gradle plugin id) → the attributes of the
        build rule that makes a module applying it deployable (``basis``, and for Gradle the ``task``
        whose ``enabled = false`` switches it off), from the ``build`` rules."""
        return {r.match.build_plugin.id: dict(r.emits.attributes) for r in self.by_emit("DEPLOYABLE_PLUGIN")
                if r.match.build_plugin and r.match.build_plugin.system == system}

    def build_logic_plugins(self) -> set[str]:
        """Gradle plugin ids whose projects build Gradle plugins, not application code."""
        return {r.match.build_plugin.id for r in self.by_emit("BUILD_LOGIC_PLUGIN") if r.match.build_plugin}

    def gradle_scopes(self) -> dict[str, str]:
        """Gradle configuration → the Maven scope it stands for (``none``: not on any classpath the
        closure follows), from the ``build`` rules."""
        out: dict[str, str] = {}
        for r in self.by_emit("DEPENDENCY_SCOPE"):
            if r.match.gradle_configuration:
                for n in r.match.gradle_configuration.names:
                    out[n] = str(r.emits.attributes.get("scope", "none"))
        return out

    def library_types(self) -> dict[str, dict[str, str]]:
        """Package → {simple name: kind} from the ``catalog`` rules."""
        out: dict[str, dict[str, str]] = {}
        for r in self.by_emit("LIBRARY_TYPES"):
            if r.match.package:
                out.setdefault(r.match.package, {}).update(r.emits.types or {})
        return out

    def library_returns(self) -> dict[str, str]:
        """``Type#method`` → return type FQN of library methods, from the catalog rules."""
        out: dict[str, str] = {}
        for r in self.by_emit("LIBRARY_METHODS"):
            out.update(r.emits.returns or {})
        return out

    def library_fields(self) -> dict[str, str]:
        """``Type#field`` → field type (FQN or ``$N``) of library types, from the catalog rules."""
        out: dict[str, str] = {}
        for r in self.by_emit("LIBRARY_METHODS"):
            out.update(r.emits.fields or {})
        return out

    def application_annotations(self, scanning: bool = False) -> set[str]:
        """FQNs of annotations that mark a Spring Boot application class (``scanning``: only those
        that also scan the class's package — every one but a rule with ``scans_package: false``)."""
        return {r.match.annotation.fqn for r in self.by_emit("DEPLOYABLE_APPLICATION")
                if r.match.annotation and r.match.annotation.fqn
                and not (scanning and r.emits.attributes.get("scans_package") is False)}


#: parsed and validated rule files by (path, sha256 of the bytes): a process loads each version once
_FILE_CACHE: dict[tuple[str, str], tuple[dict[str, Any], bytes, RuleFile]] = {}


def _load_file(path: Path) -> tuple[dict[str, Any], bytes, RuleFile]:
    data = read_user_file(path, "rule file")
    key = (str(path.resolve()), sha256_hex(data))
    if key in _FILE_CACHE:
        return _FILE_CACHE[key]
    doc = parse_yaml_list(data, path, "rule file", "rules")
    try:
        rf = RuleFile.model_validate(doc)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise UserError(f"rule file {path.parent.name}/{path.name}: {where}: {first['msg']}") from exc
    _FILE_CACHE[key] = (doc, data, rf)
    return doc, data, rf


def load_rules(extra_dirs: list[Path] | None = None) -> RuleSet:
    """Load the shipped rules, then each of ``extra_dirs`` (validated against the rule file
    schema). Mechanisms of installed distributions are registered first (their emit kinds are valid
    in rule files: probes/mechanisms.py). Raises :class:`UserError` naming the file and the problem."""
    from diting.probes.mechanisms import registered
    registered()
    rs = RuleSet()
    dirs = [shipped_rules_dir()] + list(extra_dirs or [])
    for d in dirs:
        if not d.is_dir():
            raise UserError(f"rules directory not found: {d}")
        for path in sorted(d.glob("*.yaml")) + sorted(d.glob("*.yml")):
            doc, data, rf = _load_file(path)
            for raw, rule in zip(doc["rules"], rf.rules, strict=True):
                rs.by_id[rule.id] = rule
                rs.raw[rule.id] = raw
                rs.origin[rule.id] = Path(d)
            for proto in rf.protocols:
                rs.protocols[proto.scheme] = proto
            rs.files.append(LoadedFile(path.name, sha256_hex(data), rf.family, rf.version, rf.rules))
    _check_protocols(rs)
    return rs


def _check_protocols(rs: RuleSet) -> None:
    """Every rule's ``emits.protocol`` is a declared scheme and its ``emits.entry_kind`` an engine kind
    or one a declared protocol lists. Raises :class:`UserError` naming the rule and its file."""
    kinds = set(ENGINE_ENTRY_KINDS) | {k for p in rs.protocols.values() for k in p.entry_kinds}
    for rid, rule in sorted(rs.by_id.items()):
        where = f"rule {rid} ({rs.origin[rid].name}/)"
        if rule.emits.protocol is not None and rule.emits.protocol not in rs.protocols:
            raise UserError(f"{where}: emits.protocol {rule.emits.protocol!r} is not a declared protocol (declare it "
                            "under 'protocols:' in a rule file; see rules/protocols.yaml)")
        if rule.emits.entry_kind is not None and rule.emits.entry_kind not in kinds:
            raise UserError(f"{where}: emits.entry_kind {rule.emits.entry_kind!r} is neither an engine entry kind nor "
                            "one a declared protocol lists")
