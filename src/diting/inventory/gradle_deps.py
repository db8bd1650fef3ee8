"""The dependencies a Gradle project declares, as effective dependencies of the project
(docs/gradle.md): string, map and ``project(…)`` notations, ``projects.x`` accessors, ``libs.x``
version catalog entries and bundles, ``platform(…)``/``mavenBom`` imports and ``testFixtures(…)``,
each under the Maven scope its configuration maps to. A declaration that cannot be read statically
is a DEPENDENCY_UNRESOLVED finding when it would be on a classpath. Used by ``inventory/gradle.py``.
"""

from __future__ import annotations

from typing import Any, Callable

from diting.findings import Finding
from diting.inventory.gradle_ast import Call, Expr, Script
from diting.inventory.gradle_eval import CatalogRef, Coordinate, Eval, ProjectRef, describe
from diting.inventory.gradle_project import GradleProject
from diting.inventory.gradle_settings import GradleBuild, absolute_path
from diting.inventory.module import EffectiveDependency, Span


class DependencyReader:
    """Adds what ``dependencies { … }`` declarations say to a project's ``dependencies``.

    ``scopes``: Gradle configuration → Maven scope (build rules); ``project_at``: (build, Gradle
    path) → the project it names, or None (a path under ``projects:`` is a type-safe accessor)."""

    def __init__(self, scopes: dict[str, str],
                 project_at: Callable[[GradleBuild, str], GradleProject | None]) -> None:
        self.scopes = scopes
        self.project_at = project_at

    def scope_of(self, conf: str) -> str:
        """The Maven scope a Gradle configuration maps to (build rules; ``test…`` configurations are
        test, unknown ones ``none``)."""
        if conf in self.scopes:
            return self.scopes[conf]
        if conf.startswith("test") or conf.endswith(("TestImplementation", "TestRuntimeOnly", "TestCompileOnly")):
            return "test"
        return "none"

    def declare(self, b: GradleBuild, proj: GradleProject, sc: Script, c: Call, conf: str, ev: Eval) -> None:
        """The declaration ``c`` of script ``sc`` in configuration ``conf`` (``implementation 'g:a:v'``,
        ``implementation(group: 'g', name: 'a')``, …), its arguments evaluated by ``ev``."""
        scope = self.scope_of(conf)
        span = Span(c.line, c.closure.end_line if c.closure is not None and c.closure.end_line else c.line)
        for a in c.args:
            if a.name is not None:
                continue
            self.declare_value(b, proj, sc, ev.value(a.value), conf, scope, span, a.value)
        named = {a.name: ev.value(a.value) for a in c.args if a.name is not None}
        if "name" in named or "group" in named:
            g, n, v = named.get("group"), named.get("name"), named.get("version")
            if isinstance(g, str) and isinstance(n, str):
                _add_dep(proj, sc, Coordinate(g, n, v if isinstance(v, str) else None,
                                              named.get("classifier") if isinstance(named.get("classifier"), str)
                                              else ""), conf, scope, span)
            else:
                _unresolved_dep(proj, sc, span, scope, "map notation with computed group or name")

    def declare_value(self, b: GradleBuild, proj: GradleProject, sc: Script, v: Any, conf: str, scope: str,
                      span: Span, e: Expr | None) -> None:
        """One declared value ``v`` (of expression ``e`` when known): a coordinate string, a
        :class:`Coordinate`, a catalog entry or bundle, a project, a ``("platform", x)`` or
        ``("testFixtures", x)`` pair, or a list of these."""
        if isinstance(v, list):
            for x in v:
                self.declare_value(b, proj, sc, x, conf, scope, span, None)
            return
        if isinstance(v, tuple) and v and v[0] == "platform":
            self._platform(b, proj, sc, v[1], conf, scope, span)
            return
        if isinstance(v, tuple) and v and v[0] == "testFixtures":
            self.declare_value(b, proj, sc, v[1], conf, "test" if scope != "none" else scope, span, None)
            return
        if isinstance(v, str):
            coord = _parse_coordinate(v)
            if coord is None:
                _unresolved_dep(proj, sc, span, scope, f"{v!r} is not a group:name[:version] coordinate")
                return
            _add_dep(proj, sc, coord, conf, scope, span)
            return
        if isinstance(v, Coordinate):
            _add_dep(proj, sc, v, conf, scope, span)
            return
        if isinstance(v, CatalogRef):
            _catalog_dep(b, proj, sc, v, conf, scope, span)
            return
        if isinstance(v, ProjectRef):
            target = self.project_at(b, v.path if v.path.startswith("projects:") else absolute_path(v.path,
                                                                                                  proj.gradle_path))
            if target is None:
                _unresolved_dep(proj, sc, span, scope, f"project {v.path.replace('projects:', 'projects.')} is not a "
                                "project of this build")
                return
            dep = EffectiveDependency(target.group_id or "", target.artifact_id or "", target.version, scope, "jar", "",
                                      False, [], sc.path, span, "DECLARED" if target.version else "UNKNOWN",
                                      project=target.build_file, configuration=conf)
            _push(proj, dep)
            return
        if isinstance(e, Call) and e.target is None and e.name in ("files", "fileTree", "gradleApi", "localGroovy",
                                                                    "gradleTestKit"):
            return
        _unresolved_dep(proj, sc, span, scope, f"computed dependency ({describe(v)})")

    def _platform(self, b: GradleBuild, proj: GradleProject, sc: Script, inner: Any, conf: str, scope: str,
                  span: Span) -> None:
        """``platform(x)``: the BOM ``x`` imported (a coordinate or catalog entry), or the project ``x``."""
        if isinstance(inner, str):
            inner = _parse_coordinate(inner)
        if isinstance(inner, CatalogRef):
            inner = _catalog_lib(b, inner)
        if isinstance(inner, Coordinate):
            _add_dep(proj, sc, Coordinate(inner.group, inner.name, inner.version, "", "pom", True), conf,
                     "import", span)
            bom = f"{inner.group}:{inner.name}" + (f":{inner.version}" if inner.version else "")
            if bom not in proj.imported_boms:
                proj.imported_boms.append(bom)
            return
        if isinstance(inner, ProjectRef):
            self.declare_value(b, proj, sc, inner, conf, scope, span, None)
            return
        _unresolved_dep(proj, sc, span, scope, "platform of a computed coordinate")


def resolve_project_dependencies(projects: list[GradleProject], modules: dict[str, GradleProject]) -> None:
    """Give each project dependency of ``projects`` the coordinates its target (a key of ``modules``)
    ended with, once every project of the build is configured."""
    for proj in projects:
        for d in proj.dependencies:
            t = modules.get(d.project) if d.project else None
            if t is not None:
                d.group_id, d.artifact_id, d.version = t.group_id or "", t.artifact_id or "", t.version
                d.version_source = "DECLARED" if t.version else "UNKNOWN"


def _catalog_dep(b: GradleBuild, proj: GradleProject, sc: Script, v: CatalogRef, conf: str, scope: str,
                 span: Span) -> None:
    """A version catalog library (``libs.spring.web``) or bundle (``libs.bundles.x``: each library once
    per configuration)."""
    if v.parts[:1] == ("bundles",):
        seen = (v.catalog, v.parts, conf)
        if seen in proj.applied_bundles:
            return  # the same bundle in the same configuration again adds nothing
        proj.applied_bundles.add(seen)
        cat = b.catalogs.get(v.catalog)
        members = cat.bundles.get(".".join(v.parts[1:])) if cat else None
        if members is None:
            _unresolved_dep(proj, sc, span, scope, f"bundle {v.catalog}.{'.'.join(v.parts)} is not in the "
                            "version catalog")
            return
        for m in sorted(set(members)):  # a bundle lists libraries (Gradle has no bundles of bundles)
            lib = cat.libraries.get(m)
            if lib is None:
                _unresolved_dep(proj, sc, span, scope, f"bundle member {m} is not a library of {cat.path}")
                continue
            _add_dep(proj, sc, Coordinate(lib[0], lib[1], lib[2]), conf, scope, span)
        return
    coord = _catalog_lib(b, v)
    if coord is None:
        _unresolved_dep(proj, sc, span, scope, f"{v.catalog}.{'.'.join(v.parts)} is not in the version catalog")
        return
    _add_dep(proj, sc, coord, conf, scope, span)


def _push(proj: GradleProject, dep: EffectiveDependency) -> None:
    """Add a dependency; a later declaration of the same one (same coordinates, configuration and
    project) replaces the earlier, in place."""
    key = (dep.group_id, dep.artifact_id, dep.type, dep.classifier, dep.configuration, dep.project)
    at = proj.dep_index.get(key)
    if at is not None:
        proj.dependencies[at] = dep
        return
    proj.dep_index[key] = len(proj.dependencies)
    proj.dependencies.append(dep)


def _add_dep(proj: GradleProject, sc: Script, coord: Coordinate, conf: str, scope: str, span: Span) -> None:
    dep = EffectiveDependency(coord.group, coord.name, coord.version, scope, coord.type, coord.classifier, False,
                              [], sc.path, span, "DECLARED" if coord.version else "UNKNOWN",
                              configuration=conf)
    _push(proj, dep)


def _unresolved_dep(proj: GradleProject, sc: Script, span: Span, scope: str, why: str) -> None:
    if scope in ("test", "none"):
        return  # on no classpath a service's closure follows: nothing turns on it
    proj.findings.append(Finding("DEPENDENCY_UNRESOLVED", f"dependency at {sc.path}:{span.start}: {why}",
                                 sc.path, span.start, span.end, proj.build_file,
                                 f"gradle-dep|{sc.path}|{span.start}|{why}"))


def _parse_coordinate(s: str) -> Coordinate | None:
    s = s.strip()
    typ = "jar"
    if "@" in s:
        s, typ = s.rsplit("@", 1)
    parts = s.split(":")
    if len(parts) < 2 or not parts[0] or not parts[1] or any(" " in p for p in parts):
        return None
    return Coordinate(parts[0], parts[1], parts[2] or None if len(parts) > 2 else None,
                      parts[3] if len(parts) > 3 else "", typ or "jar")


def _catalog_lib(b: GradleBuild, ref: CatalogRef) -> Coordinate | None:
    cat = b.catalogs.get(ref.catalog)
    if cat is None:
        return None
    hit = cat.libraries.get(".".join(ref.parts))
    if hit is None:
        return None
    g, n, v, _ = hit
    return Coordinate(g, n, v)
