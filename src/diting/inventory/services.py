"""Deployable services, their module closures and ids, and ``lib:`` packages (docs/scanning.md §3, §4).

* A module is **deployable** iff (a) its own ``<build><plugins>`` (or an own
  active profile's) declares spring-boot-maven-plugin without ``skip``, or
  (b) its packaging is ``war``, or (c) it has a class annotated with
  ``@SpringBootApplication`` (or an alias a rule declares) with ``main``. A
  module packaged as ``pom`` builds no artifact and is never deployable. A
  bare ``main`` is an ENTRY of kind MAIN, not a service.
* A service's package holds its module and every in-repo module reached
  through compile, provided, runtime or system dependencies, at any depth.
* ``service_id`` = ``spring.application.name`` with the config precedence of
  docs/scanning.md §10.1 after ``@…@`` filtering, else the artifactId. Two deployables with
  one id become ``{name}~{artifactId}`` with SERVICE_ID_COLLISION (``{name}~{groupId}:{artifactId}``
  when the artifactId is shared too, ``{name}~{module directory}`` (``/`` written ``.``) when the coordinates are; see
  ``Scanner._disambiguate``). When every service of the repository gets one id (from one shared
  file, or three or more services), each also gets SERVICE_ID_SHARED (ERROR).
* Modules outside every service form one ``lib:{artifactId}`` package per
  top-level reactor, counted as ``module_not_deployed``.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

from diting.config.spring import SpringConfig
from diting.findings import Finding
from diting.inventory.module import BuildModule, DeployableBasis, EffectiveDependency, ModuleGraph

CLOSURE_SCOPES = ("compile", "provided", "runtime", "system")


@dataclass
class ModuleLinks:
    """A module's dependencies split into in-repo modules and external artifacts."""

    in_repo: list[tuple[EffectiveDependency, str]] = field(default_factory=list)
    external: list[EffectiveDependency] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)


def link_dependencies(model: ModuleGraph) -> dict[str, ModuleLinks]:
    """Resolve each dependency to the in-repo module it names: a Gradle ``project(':x')``
    dependency by its project; a coordinate when the source at this commit is that module's
    source: equal groupId and artifactId, and an equal version when both are known.

    Several matching modules: the one in the same top-level reactor; else DEPENDENCY_UNRESOLVED.
    An in-repo coordinate at another version is an external artifact with SOURCE_UNMAPPED.
    """
    by_ga = model.modules_by_ga()
    out: dict[str, ModuleLinks] = {}
    for path, mod in sorted(model.modules.items()):
        links = ModuleLinks()
        out[path] = links
        if mod.failed:
            continue
        my_root = model.reactor_root(path)
        for d in mod.dependencies:
            if d.project is not None:
                links.in_repo.append((d, d.project))
                continue
            cands = [p for p in by_ga.get(d.ga, []) if p != path]
            if not cands:
                links.external.append(d)
                continue
            if d.version and "${" not in d.version:
                same_version = [p for p in cands if model.modules[p].version_matches(d.version)]
                if not same_version:
                    links.external.append(d)
                    have = sorted({model.modules[p].version or "?" for p in cands})
                    links.findings.append(Finding(
                        "SOURCE_UNMAPPED", f"{d.ga}:{d.version} is built from this repository only at version "
                        f"{', '.join(have)}; the depended-on version has no source here", d.declared_in,
                        d.span.start, d.span.end, path, f"unmapped|{d.ga}|{d.version}"))
                    continue
                cands = same_version
            if len(cands) > 1:
                same_reactor = [p for p in cands if model.reactor_root(p) == my_root]
                if len(same_reactor) == 1:
                    cands = same_reactor
            if len(cands) == 1:
                links.in_repo.append((d, cands[0]))
            else:
                links.external.append(d)
                links.findings.append(Finding(
                    "DEPENDENCY_UNRESOLVED", f"{d.coordinate} matches {len(cands)} modules in the repository "
                    f"({', '.join(cands[:5])}); none chosen", d.declared_in, d.span.start, d.span.end, path,
                    f"ambiguous|{d.ga}"))
    return out


def closure(links: dict[str, ModuleLinks], model: ModuleGraph, root: str) -> list[str]:
    """``root`` first, then every in-repo module it reaches through compile, provided, runtime or
    system dependencies at any depth (sorted).

    Deliberately wider than Maven's runtime classpath (which drops provided and optional
    dependencies of dependencies, and exclusions): a module's code is compiled against its
    own provided dependencies, so every module in a package resolves its names inside the
    package, and a package stays self-contained. The same closure is each module's set of
    visible types."""
    seen = {root}
    stack = [root]
    while stack:
        cur = stack.pop()
        for dep, target in links.get(cur, ModuleLinks()).in_repo:
            if dep.scope in CLOSURE_SCOPES and target not in seen:
                seen.add(target)
                stack.append(target)
    return [root] + sorted(seen - {root})


@dataclass
class PackagePlan:
    """One package to write: a deployable service or a ``lib:`` unit."""

    service_id: str
    kind: str  # SERVICE or LIB
    roots: list[str]
    modules: list[str]
    basis: list[DeployableBasis] = field(default_factory=list)
    id_basis: dict[str, object] = field(default_factory=dict)
    config: SpringConfig | None = None
    findings: list[Finding] = field(default_factory=list)
    owner: str | None = None
    inventory_profile: str | None = None
    #: the package directory's name (unique in the scan, also ignoring case)
    dir_name: str = ""

    @property
    def profiles(self) -> list[str]:
        return self.config.profiles if self.config else ["default"]


def deployable_basis(mod: BuildModule, app_mains: list[tuple[str, str, int, int]],
                     plugin_rules: dict[str, dict]) -> list[DeployableBasis]:
    """The deployable rule (docs/gradle.md, "Deployables") for one module: what its build declares
    (a build rule's plugin, war packaging), then ``app_mains`` — ``(annotation FQN, path, start, end)``
    of application classes with ``main``. A module that builds no artifact (Maven ``pom``
    packaging, a Gradle project without the java plugins and without sources) is never deployable."""
    if mod.failed or mod.packaging == "pom":
        return []
    out = mod.declared_deployable(plugin_rules)
    for fqn, path, start, end in app_mains:
        out.append(DeployableBasis("SPRING_BOOT_APPLICATION", path, start, end, f"@{fqn} class with main"))
    return out


#: the prefix of the ids of lib packages (modules outside every service, ``lib:{artifactId}``): what
#: a package is, is its recorded kind (``analysis_input.service.kind``); no service id takes the prefix
LIB_PREFIX = "lib:"


def unreserved_service_id(sid: str) -> str:
    """``sid``, or — when it begins with :data:`LIB_PREFIX` in any case — the same id with that colon
    written ``_`` (``lib:fake`` → ``lib_fake``): a service named so stays recognisable and never reads
    as a lib package."""
    if sid[:len(LIB_PREFIX)].casefold() == LIB_PREFIX:
        return sid[:len(LIB_PREFIX) - 1] + "_" + sid[len(LIB_PREFIX):]
    return sid


_NOT_IN_IDS = re.compile(r"[\s\x00-\x1f\x7f-\x9f]+")
MAX_SERVICE_ID_CHARS = 128


def clean_service_id(raw: str) -> str:
    """A service id is one printable token: surrounding space removed, every run of
    whitespace or control characters inside it replaced by ``_``, at most 128 characters
    (longer ids keep a hash of the whole)."""
    sid = _NOT_IN_IDS.sub("_", raw.strip()) or "_"
    if len(sid) > MAX_SERVICE_ID_CHARS:
        sid = sid[:MAX_SERVICE_ID_CHARS - 13] + "~" + hashlib.sha256(sid.encode("utf-8")).hexdigest()[:12]
    return sid
