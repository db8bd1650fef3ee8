"""The build-system-neutral module of the inventory (docs/gradle.md, "One inventory").

A Maven module (:class:`diting.inventory.maven.MavenModule`) and a Gradle project
(:class:`diting.inventory.gradle_project.GradleProject`) are both a :class:`BuildModule`: coordinates, a
directory, effective dependencies, source and resource roots, findings, and the evidence of what
its build declares. Everything after the inventory (dependency links, closures, service plans,
packages) speaks only through this class, so one repository may mix both build systems.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from diting.findings import Finding

#: module role by artifactId suffix (docs/scanning.md §2; a label, nothing depends on it)
ROLE_SUFFIXES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("EXPORT", ("-export", "-client", "-rpc", "-api")),
    ("SERVICE", ("-service", "-domain", "-core", "-biz")),
    ("DAO", ("-dao", "-mapper")),
    ("ENTRY", ("-web", "-worker", "-provider", "-consumer", "-server", "-boot")),
)


@dataclass
class Span:
    """1-based inclusive line span in a build file."""

    start: int
    end: int


class _Coordinates:
    """``ga`` and ``coordinate`` of anything with group_id, artifact_id and version."""

    group_id: str | None
    artifact_id: str | None
    version: str | None

    @property
    def ga(self) -> str:
        return f"{self.group_id}:{self.artifact_id}"

    @property
    def coordinate(self) -> str:
        return f"{self.ga}:{self.version}" if self.version else self.ga


@dataclass
class EffectiveDependency(_Coordinates):
    """A dependency after inheritance, management and interpolation.

    ``scope`` is a Maven scope (a Gradle configuration is mapped to one by the build rules:
    compile, provided, runtime, test, import, or ``none`` for build-time configurations such as
    annotation processors); ``version_source`` is DECLARED, MANAGED or UNKNOWN; ``declared_in`` the
    build file whose declaration (``span``) is the evidence; ``project`` the in-repo module key a
    Gradle ``project(':x')`` dependency names (linked by path, not by coordinate)."""

    group_id: str
    artifact_id: str
    version: str | None
    scope: str
    type: str
    classifier: str
    optional: bool
    exclusions: list[tuple[str, str]]
    declared_in: str
    span: Span
    version_source: str
    unresolved: list[str] = field(default_factory=list)
    project: str | None = None
    configuration: str | None = None


@dataclass
class DeployableBasis:
    """Why a module is a service: BOOT_PLUGIN, WAR_PACKAGING, SPRING_BOOT_APPLICATION or INVENTORY,
    with the evidence location (path and lines) and a detail string."""

    basis: str
    path: str
    start: int
    end: int
    detail: str


@dataclass
class BuildEvidence:
    """Where a module is declared: the file, its lines and encoding, and the span to cite."""

    path: str
    lines: list[str]
    encoding: str
    start: int
    end: int


@dataclass
class BuildModule(_Coordinates):
    """One in-repo module of either build system.

    ``build_file`` is the module's key: its ``pom.xml``, its ``build.gradle``/``build.gradle.kts``,
    or ``{settings file}#{project path}`` for a Gradle project that has no build script of its own.
    ``build_inputs`` are the repository files whose content shapes this module's model."""

    build_file: str
    dir: str
    build_system: str = "maven"
    group_id: str | None = None
    artifact_id: str | None = None
    version: str | None = None
    packaging: str = "jar"
    parent_path: str | None = None
    parent_external: str | None = None
    parent_status: str | None = None
    dependencies: list[EffectiveDependency] = field(default_factory=list)
    imported_boms: list[str] = field(default_factory=list)
    active_profiles: list[str] = field(default_factory=list)
    module_paths: list[str] = field(default_factory=list)
    source_roots: list[str] = field(default_factory=list)
    resource_roots: list[str] = field(default_factory=list)
    java_level: str | None = None
    source_encoding: str | None = None
    findings: list[Finding] = field(default_factory=list)
    failed: bool = False
    build_inputs: list[str] = field(default_factory=list)

    def role(self) -> tuple[str | None, str]:
        """Module role and its basis: by artifactId suffix, else POM for an aggregator."""
        aid = (self.artifact_id or "").lower()
        for role, suffixes in ROLE_SUFFIXES:
            for s in suffixes:
                if aid.endswith(s):
                    return role, f"suffix {s}"
        if self.packaging == "pom":
            return "POM", "packaging pom"
        return None, "no suffix rule matched"

    def evidence(self) -> BuildEvidence:  # pragma: no cover - every build system overrides it
        raise NotImplementedError

    def declared_deployable(self, plugin_rules: dict[str, dict]) -> list[DeployableBasis]:
        """What the module's build declares that makes it deployable, by the build rules
        (``plugin_rules``: plugin id → the rule's attributes, see :meth:`RuleSet.build_plugins`)."""
        return []

    def property_lookup(self) -> Callable[[str], str | None]:
        """``name → value`` of the build's properties, for ``@name@`` resource filtering."""
        return lambda name: None

    def version_matches(self, version: str) -> bool:
        """True when a dependency on ``version`` of this module's coordinate is this source."""
        return self.version == version

    def extra_attributes(self) -> dict[str, object]:
        """Build-system-specific attributes of the MODULE record."""
        return {}


class ModuleGraph:
    """Every in-repo module of a repository, of either build system, by key (``build_file``).

    ``aggregated_by``: module key → the key of the module that aggregates it (a Maven
    ``<modules>`` entry; a Gradle project's root project). ``maven`` and ``gradle`` are the
    build-system models the modules came from (None when the repository has no such build)."""

    def __init__(self, modules: dict[str, BuildModule], aggregated_by: dict[str, str], maven=None,
                 gradle=None) -> None:
        self.modules = dict(sorted(modules.items()))
        self.aggregated_by = aggregated_by
        self.maven = maven
        self.gradle = gradle

    @property
    def user_properties(self) -> dict[str, str]:
        """Maven's ``.mvn/maven.config`` definitions (empty without a Maven build)."""
        return self.maven.user_properties if self.maven is not None else {}

    def reactor_root(self, path: str) -> str:
        """The top-level aggregator (a Maven reactor root, a Gradle build's root project) whose
        tree reaches ``path`` (itself if none)."""
        seen = {path}
        cur = path
        while cur in self.aggregated_by and self.aggregated_by[cur] not in seen:
            cur = self.aggregated_by[cur]
            seen.add(cur)
        return cur

    def modules_by_ga(self) -> dict[str, list[str]]:
        """``groupId:artifactId`` → the keys of the readable modules with those coordinates."""
        out: dict[str, list[str]] = {}
        for p, m in self.modules.items():
            if not m.failed:
                out.setdefault(m.ga, []).append(p)
        return out

    @property
    def unread_build_files(self) -> set[str]:
        """Build files beside the modules' own (Gradle properties, catalogs, applied scripts) that
        exist but could not be read."""
        return set(self.gradle.unread) if self.gradle is not None else set()

    def build_systems(self) -> list[str]:
        """The build systems of the repository's modules, sorted."""
        return sorted({m.build_system for m in self.modules.values()})
