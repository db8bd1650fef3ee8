"""The Maven effective model, built without running Maven (docs/scanning.md §2).

For every pom.xml at the commit: the parent chain inside the repository
(``relativePath`` first, then by coordinate), active-by-default profiles merged
into their own POM, inheritance of properties, dependencies and
dependencyManagement, in-repo BOM imports, and property interpolation
(``${project.version}``, ``${revision}``, ``${parent.*}``, custom and nested
properties, ``-D`` definitions from ``.mvn/maven.config``). The reactor is the
``<modules>`` tree. Nothing from the repository is executed.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

from typing import Callable

from diting.findings import Finding
from diting.inventory.module import BuildEvidence, BuildModule, DeployableBasis, EffectiveDependency, Span
from diting.inventory.pom import Dependency, Plugin, ProfileDecl, RawPom
from diting.source.paths import join_inside

_PROP = re.compile(r"\$\{([^}$]+)\}")
#: an interpolated value longer than this is treated as unresolvable (property bombs)
MAX_VALUE_CHARS = 65536


@dataclass
class MavenModule(BuildModule):
    """One in-repo Maven module with its effective model (``build_file`` is its pom path)."""

    raw: RawPom = None  # type: ignore[assignment]
    properties: dict[str, str] = field(default_factory=dict)
    managed: dict[tuple[str, str, str, str], EffectiveDependency] = field(default_factory=dict)
    inactive_profiles: list[str] = field(default_factory=list)
    own_plugins: list[tuple[Plugin, str | None]] = field(default_factory=list)
    lookup: Callable[[str], str | None] | None = None

    def evidence(self) -> BuildEvidence:
        raw = self.raw
        span = raw.artifact_span or raw.project_span
        start, end = (span.start, span.end) if span else (raw.error_line or 1, raw.error_line or 1)
        return BuildEvidence(self.build_file, raw.lines or [""], raw.encoding, start, end)

    def declared_deployable(self, plugin_rules: dict[str, dict]) -> list[DeployableBasis]:
        """The plugins of the module's own ``<build><plugins>`` (or an own active profile's) that a
        build rule names (by ``groupId:artifactId``; a plugin written without groupId matches by
        artifactId), unless configured with ``skip`` true; ``war`` packaging."""
        out: list[DeployableBasis] = []
        for plugin, skip in self.own_plugins:
            for pid, attrs in sorted(plugin_rules.items()):
                g, _, a = pid.rpartition(":")
                if a != plugin.artifact_id or (plugin.group_id and plugin.group_id != g):
                    continue
                if (skip or "").strip().lower() != "true":
                    out.append(DeployableBasis(attrs["basis"], self.build_file, plugin.span.start, plugin.span.end,
                                               f"{a} in the module's own build plugins"))
        if self.packaging == "war":
            sp = self.raw.packaging_span
            out.append(DeployableBasis("WAR_PACKAGING", self.build_file, sp.start if sp else 1, sp.end if sp else 1,
                                       "packaging war"))
        return out

    def property_lookup(self) -> Callable[[str], str | None]:
        return self.lookup or (lambda name: None)


class MavenModel:
    """Effective models of every in-repo pom.

    ``poms``: pom path → :class:`RawPom`; ``user_properties`` from
    ``.mvn/maven.config``; ``well_known_parent``: predicate on a groupId (rules).
    """

    def __init__(self, poms: dict[str, RawPom], user_properties: dict[str, str],
                 well_known_parent, tree_paths: set[str], gitlinks: set[str],
                 symlinks: set[str] | None = None) -> None:
        self.symlinks = symlinks or set()
        self.poms = poms
        self.user_properties = user_properties
        self.well_known_parent = well_known_parent
        self.tree_paths = tree_paths
        self.gitlinks = gitlinks
        self.modules: dict[str, MavenModule] = {}
        self._building: set[str] = set()
        self._by_ga: dict[tuple[str, str], list[str]] = {}
        for path, raw in sorted(poms.items()):
            if raw.error:
                continue
            g = raw.group_id or (raw.parent.group_id if raw.parent else None)
            if raw.artifact_id:
                self._by_ga.setdefault((g or "", raw.artifact_id), []).append(path)
        for path in sorted(poms):
            self.build(path)
        self._reactor()

    # ---------------------------------------------------------------- parents
    def _find_parent(self, raw: RawPom, findings: list[Finding]) -> str | None:
        ref = raw.parent
        assert ref is not None
        rel = "../pom.xml" if ref.relative_path is None else ref.relative_path
        if rel:
            target = join_inside(raw.dir, rel)
            if target is None:
                if ref.relative_path is not None:  # Maven's default ../pom.xml at the root is not a finding
                    findings.append(Finding("PATH_OUTSIDE_TREE", f"parent relativePath {rel!r} leaves the "
                                            "repository; not followed", raw.path, ref.span.start, ref.span.end,
                                            raw.path, "relpath"))
            else:
                if not target.endswith(".xml"):
                    target = f"{target}/pom.xml" if target else "pom.xml"
                cand = self.poms.get(target)
                if cand is not None and not cand.error and self._matches(cand, ref):
                    return target
        matches = self._by_ga.get((ref.group_id or "", ref.artifact_id or ""), [])
        matches = [m for m in matches if m != raw.path]
        if len(matches) > 1 and ref.version:
            exact = [m for m in matches if self.poms[m].version == ref.version]
            matches = exact or matches
        if len(matches) == 1:
            return matches[0]
        if len(matches) > 1:
            # the nearest by directory is Maven's relativePath convention; several equal
            # candidates stay unresolved
            findings.append(Finding("POM_PARENT_MISSING", f"parent {ref.group_id}:{ref.artifact_id} matches "
                                    f"{len(matches)} poms in the repository ({', '.join(matches[:5])}); none chosen",
                                    raw.path, ref.span.start, ref.span.end, raw.path, "parent"))
        return None

    @staticmethod
    def _matches(cand: RawPom, ref) -> bool:
        g = cand.group_id or (cand.parent.group_id if cand.parent else None)
        return cand.artifact_id == ref.artifact_id and (ref.group_id is None or g == ref.group_id)

    # ---------------------------------------------------------------- profiles
    def _active_profiles(self, raw: RawPom) -> tuple[list[ProfileDecl], list[str]]:
        explicit: list[ProfileDecl] = []
        defaults: list[ProfileDecl] = []
        for prof in raw.profiles:
            if prof.activation_property is not None:
                name, value = prof.activation_property
                if name.startswith("!"):
                    if name[1:] not in self.user_properties:
                        explicit.append(prof)
                elif name in self.user_properties and (value is None or self.user_properties[name] == value):
                    explicit.append(prof)
            elif prof.active_by_default:
                defaults.append(prof)
        active = explicit or defaults
        inactive = [p.id for p in raw.profiles if p not in active]
        return active, inactive

    # ---------------------------------------------------------------- building
    def build(self, path: str) -> MavenModule | None:
        """Effective model of the pom at ``path`` (memoised; parent cycles are cut)."""
        if path in self.modules:
            return self.modules[path]
        raw = self.poms.get(path)
        if raw is None:
            return None
        mod = MavenModule(build_file=path, dir=raw.dir, raw=raw)
        mod.lookup = lambda name, _m=mod: self.lookup(name, _m, None)
        mod.build_inputs = [path]
        if raw.error:
            mod.failed = True
            mod.findings.append(Finding("MODULE_SKIPPED", f"{path} is not readable: {raw.error}"
                                        + _unread_deployable(raw), path, raw.error_line or 0, raw.error_line or 0,
                                        path, "malformed"))
            self.modules[path] = mod
            return mod
        if path in self._building:
            return None
        self._building.add(path)
        parent = self._parent(mod) if raw.parent is not None else None
        active, inactive = self._active_profiles(raw)
        mod.active_profiles = [p.id for p in active]
        mod.inactive_profiles = inactive
        self._coordinate(mod, parent, active)
        mod.managed = self._dependency_management(mod, parent, active)
        mod.dependencies = self._dependencies(mod, parent, active)
        self._own_plugins(mod, parent, active)
        self._layout(mod, parent)
        self._aggregated_modules(mod, active)
        self._building.discard(path)
        self.modules[path] = mod
        return mod

    def _parent(self, mod: MavenModule) -> MavenModule | None:
        """The in-repo parent model of ``mod`` (whose pom declares a ``<parent>``), or None.

        Sets ``parent_path`` and ``parent_status`` (IN_REPO, EXTERNAL_WELL_KNOWN, MISSING), and
        ``parent_external`` (``g:a:v``) for a parent outside the repository; reports
        POM_PARENT_MISSING (cyclic, unreadable, ambiguous or unknown parent) or POM_PARENT_EXTERNAL."""
        raw, path, findings = mod.raw, mod.build_file, mod.findings
        ref = raw.parent
        assert ref is not None
        parent: MavenModule | None = None
        ppath = self._find_parent(raw, findings)
        if ppath is not None:
            parent = self.build(ppath)
            if parent is None:
                findings.append(Finding("POM_PARENT_MISSING", f"parent chain of {path} is cyclic", path,
                                        ref.span.start, ref.span.end, path, "cycle"))
            elif parent.failed:
                parent = None
                findings.append(Finding("POM_PARENT_MISSING", f"parent {ppath} is not readable", path,
                                        ref.span.start, ref.span.end, path, "unreadable"))
            else:
                mod.parent_path = ppath
                mod.parent_status = "IN_REPO"
        if mod.parent_path is None and not any(f.code == "POM_PARENT_MISSING" for f in findings):
            coord = f"{ref.group_id}:{ref.artifact_id}:{ref.version}"
            mod.parent_external = coord
            if self.well_known_parent(ref.group_id or ""):
                mod.parent_status = "EXTERNAL_WELL_KNOWN"
                findings.append(Finding("POM_PARENT_EXTERNAL", f"parent {coord} is outside the repository "
                                        "(well known; its properties and managed versions are not read)",
                                        path, ref.span.start, ref.span.end, path, "parent"))
            else:
                mod.parent_status = "MISSING"
                findings.append(Finding("POM_PARENT_MISSING", f"parent {coord} is neither in the repository nor "
                                        "a well-known parent", path, ref.span.start, ref.span.end, path, "parent"))
        elif mod.parent_path is None:
            mod.parent_status = "MISSING"
        return parent

    def _interp(self, mod: MavenModule, parent: MavenModule | None, value: str | None, what: str,
                span: Span | None) -> str | None:
        """``value`` interpolated for ``mod`` (None stays None); names left unresolved are reported
        (PROPERTY_UNRESOLVED, naming ``what`` and citing ``span``) unless ``span`` is None."""
        if value is None:
            return None
        out, missing = self.interpolate(value, mod, parent)
        if missing and span is not None:
            path = mod.build_file
            mod.findings.append(Finding("PROPERTY_UNRESOLVED", f"{what}: ${{{'}, ${'.join(missing)}}} not defined "
                                        "in the repository", path, span.start, span.end, path, f"{what}|{value}"))
        return out

    def _coordinate(self, mod: MavenModule, parent: MavenModule | None, active: list[ProfileDecl]) -> None:
        """The properties of ``mod`` (parent's, then own, then own active profiles'; user properties win
        at lookup) and its interpolated coordinate and packaging — the ``<parent>`` element's groupId
        and version are the fallback. COORDINATE_UNRESOLVED when groupId or artifactId stays unknown."""
        raw, path = mod.raw, mod.build_file
        mod.group_id = raw.group_id or (raw.parent.group_id if raw.parent else None)
        mod.artifact_id = raw.artifact_id
        mod.version = raw.version or (raw.parent.version if raw.parent else None)
        mod.packaging = raw.packaging or "jar"
        props: dict[str, str] = dict(parent.properties) if parent else {}
        props.update(raw.properties)
        for p in active:
            props.update(p.properties)
        mod.properties = props
        gspan = raw.project_span
        mod.group_id = self._interp(mod, parent, mod.group_id, "groupId", gspan)
        mod.artifact_id = self._interp(mod, parent, mod.artifact_id, "artifactId", raw.artifact_span or gspan)
        mod.version = self._interp(mod, parent, mod.version, "version", gspan)
        mod.packaging = (self._interp(mod, parent, mod.packaging, "packaging", raw.packaging_span or gspan)
                         or "jar").strip()
        if not mod.group_id or not mod.artifact_id or "${" in (mod.group_id + mod.artifact_id):
            mod.findings.append(Finding("COORDINATE_UNRESOLVED", f"module coordinate {mod.group_id}:"
                                        f"{mod.artifact_id} cannot be determined", path, gspan.start if gspan else 0,
                                        gspan.start if gspan else 0, path, "coordinate"))

    def _dependency_management(self, mod: MavenModule, parent: MavenModule | None,
                               active: list[ProfileDecl]) -> dict[tuple[str, str, str, str], EffectiveDependency]:
        """The managed dependencies of ``mod`` by (groupId, artifactId, type, classifier): the parent's,
        then its own and its active profiles' (own wins), then those of the in-repo BOMs it imports
        (lowest). Sets ``imported_boms`` (the parent's, then its own BOM coordinates)."""
        path = mod.build_file
        managed: dict[tuple[str, str, str, str], EffectiveDependency] = dict(parent.managed) if parent else {}
        boms: list[EffectiveDependency] = []
        for d in mod.raw.dependency_management + [d for p in active for d in p.dependency_management]:
            ed = self._effective(d, mod, parent, "DECLARED", path, mod.findings)
            if ed.scope == "import" and ed.type == "pom":
                boms.append(ed)
                continue
            managed[_dependency_key(ed)] = ed
        mod.imported_boms = list(parent.imported_boms) if parent else []
        for bom in boms:
            mod.imported_boms.append(bom.coordinate)
            target = self._in_repo(bom.group_id, bom.artifact_id, bom.version)
            if target is not None and target != path:
                bmod = self.build(target)
                if bmod is not None and not bmod.failed:
                    for k, v in bmod.managed.items():
                        managed.setdefault(k, v)
        return managed

    def _dependencies(self, mod: MavenModule, parent: MavenModule | None,
                      active: list[ProfileDecl]) -> list[EffectiveDependency]:
        """The effective dependencies of ``mod``, sorted by key: the parent's inherited, overridden by
        its own and its active profiles'; version and scope filled from ``mod.managed`` (version
        source MANAGED, else UNKNOWN when none), scope ``compile`` by default."""
        deps: dict[tuple[str, str, str, str], EffectiveDependency] = {}
        if parent:
            for d in parent.dependencies:
                deps[_dependency_key(d)] = d
        for d in mod.raw.dependencies + [d for p in active for d in p.dependencies]:
            ed = self._effective(d, mod, parent, "DECLARED", mod.build_file, mod.findings)
            deps[_dependency_key(ed)] = ed
        for key, ed in deps.items():
            m = mod.managed.get(key)
            if ed.version is None and m is not None and m.version:
                ed.version, ed.version_source = m.version, "MANAGED"
            if ed.scope == "" and m is not None and m.scope:
                ed.scope = m.scope
            if not ed.scope:
                ed.scope = "compile"
            if ed.version is None:
                ed.version_source = "UNKNOWN"
        return [deps[k] for k in sorted(deps)]

    def _own_plugins(self, mod: MavenModule, parent: MavenModule | None, active: list[ProfileDecl]) -> None:
        """``own_plugins`` of ``mod``: the plugins of its own pom and own active profiles, each with its
        ``skip`` (own, else from the ``pluginManagement`` of the parent chain, nearest wins;
        interpolated). Sets ``build_inputs`` to the poms of the parent chain."""
        managed_skip: dict[tuple[str, str], str | None] = {}
        chain: list[RawPom] = []
        cur: MavenModule | None = mod
        while cur is not None:
            chain.append(cur.raw)
            cur = self.modules.get(cur.parent_path) if cur.parent_path else None
        mod.build_inputs = sorted({r.path for r in chain})
        for r in reversed(chain):
            for p in r.managed_plugins:
                if p.skip is not None:
                    managed_skip[(p.group_id or "org.apache.maven.plugins", p.artifact_id or "")] = p.skip
        for p in mod.raw.plugins + [p for prof in active for p in prof.plugins]:
            skip = p.skip if p.skip is not None else managed_skip.get(
                (p.group_id or "org.apache.maven.plugins", p.artifact_id or ""))
            if skip is not None:
                skip = self._interp(mod, parent, skip, "plugin skip", p.span)
            mod.own_plugins.append((p, skip))

    def _layout(self, mod: MavenModule, parent: MavenModule | None) -> None:
        """Source and resource roots (own, else inherited, else Maven's defaults), Java level and
        source encoding of ``mod``."""
        raw = mod.raw
        src = raw.source_directory or self._inherited(mod, "source_directory")
        src_root = self._layout_root(mod, parent, src, "src/main/java", "sourceDirectory") if src \
            else self._root(mod, "src/main/java")
        mod.source_roots = [src_root] if src_root is not None else []
        res = raw.resource_directories or self._inherited(mod, "resource_directories") or ["src/main/resources"]
        mod.resource_roots = sorted({r for r in (self._layout_root(mod, parent, x, "src/main/resources",
                                                                   "resource directory") for x in res)
                                     if r is not None})
        mod.java_level = self._java_level(mod)
        enc = mod.properties.get("project.build.sourceEncoding")
        mod.source_encoding = self.interpolate(enc, mod, parent)[0] if enc else None

    def _layout_root(self, mod: MavenModule, parent: MavenModule | None, value: str, default: str,
                     what: str) -> str | None:
        """A declared source or resource directory as a repository path (see :meth:`_root`), interpolated;
        one that does not resolve is reported (PROPERTY_UNRESOLVED) and Maven's ``default`` is read."""
        rel = value.replace("${project.basedir}/", "").replace("${basedir}/", "").strip()
        out, missing = self.interpolate(rel, mod, parent)
        if missing:
            gspan, path = mod.raw.project_span, mod.build_file
            mod.findings.append(Finding("PROPERTY_UNRESOLVED", f"{what} {value!r} cannot be resolved "
                                        f"(${{{'}, ${'.join(missing)}}}); Maven's default {default} is read instead",
                                        path, gspan.start if gspan else 0, gspan.start if gspan else 0, path,
                                        f"{what}|{value}"))
            out = default
        return self._root(mod, out)

    def _aggregated_modules(self, mod: MavenModule, active: list[ProfileDecl]) -> None:
        """``module_paths`` of ``mod``: the poms its ``<modules>`` (own and active profiles') name.
        A module leaving the tree (PATH_OUTSIDE_TREE), in a git submodule, missing or a symlink
        (MODULE_SKIPPED) is reported and left out."""
        raw, path, findings = mod.raw, mod.build_file, mod.findings
        for name, line in raw.modules + [m for p in active for m in p.modules]:
            target = join_inside(raw.dir, name.replace("\\", "/"))
            if target is None:
                findings.append(Finding("PATH_OUTSIDE_TREE", f"<module>{name}</module> leaves the repository; "
                                        "not followed", path, line, line, path, f"module|{name}"))
                continue
            pom_path = target if target.endswith(".xml") else (f"{target}/pom.xml" if target else "pom.xml")
            if target in self.gitlinks or any(pom_path.startswith(g + "/") for g in self.gitlinks):
                findings.append(Finding("MODULE_SKIPPED", f"module {name} is a git submodule; its content is "
                                        "not in this repository's tree", path, line, line, path, f"module|{name}"))
                continue
            if pom_path not in self.poms:
                why = "is a symlink, never followed" if pom_path in self.symlinks else "does not exist at this commit"
                findings.append(Finding("MODULE_SKIPPED", f"module {name} is declared but {pom_path} {why}",
                                        path, line, line, path, f"module|{name}"))
                continue
            mod.module_paths.append(pom_path)

    def _inherited(self, mod: MavenModule, attr: str):
        cur = self.modules.get(mod.parent_path) if mod.parent_path else None
        while cur is not None:
            v = getattr(cur.raw, attr)
            if v:
                return v
            cur = self.modules.get(cur.parent_path) if cur.parent_path else None
        return None

    @staticmethod
    def _root(mod: MavenModule, rel: str) -> str | None:
        """A source or resource root inside the repository; one that would leave the tree
        is reported (PATH_OUTSIDE_TREE) and gives None."""
        rel = rel.strip().strip("/")
        joined = join_inside(mod.dir, rel)
        if joined is None:
            mod.findings.append(Finding("PATH_OUTSIDE_TREE", f"source or resource directory {rel!r} leaves the "
                                        "repository; not read", mod.build_file, 0, 0, mod.build_file, f"root|{rel}"))
            return None
        return joined

    def _java_level(self, mod: MavenModule) -> str | None:
        p = mod.properties
        for key in ("maven.compiler.release", "maven.compiler.source", "java.version"):
            if p.get(key):
                return self.interpolate(p[key], mod, None)[0]
        cur: MavenModule | None = mod
        while cur is not None:
            for k in ("release", "source"):
                v = cur.raw.compiler_config.get(k)
                if v:
                    return self.interpolate(v, mod, None)[0]
            cur = self.modules.get(cur.parent_path) if cur.parent_path else None
        return None

    def _effective(self, d: Dependency, mod: MavenModule, parent: MavenModule | None, source: str, path: str,
                   findings: list[Finding]) -> EffectiveDependency:
        missing: list[str] = []

        def it(v: str | None) -> str | None:
            if v is None:
                return None
            out, miss = self.interpolate(v, mod, parent)
            missing.extend(miss)
            return out

        g = it(d.group_id) or ""
        a = it(d.artifact_id) or ""
        v = it(d.version)
        ed = EffectiveDependency(g, a, v, (it(d.scope) or "").strip(), (it(d.type) or "jar").strip(),
                                 (it(d.classifier) or "").strip(), d.optional, d.exclusions, path, d.span,
                                 source if v else "UNKNOWN", sorted(set(missing)))
        if missing and ("${" in g or "${" in a):
            findings.append(Finding("DEPENDENCY_UNRESOLVED", f"dependency {g}:{a} has unresolved properties "
                                    f"{', '.join(sorted(set(missing)))}", path, d.span.start, d.span.end, path,
                                    f"dep|{g}:{a}"))
        elif missing:
            findings.append(Finding("PROPERTY_UNRESOLVED", f"dependency {g}:{a}: ${{{'}, ${'.join(sorted(set(missing)))}}}"
                                    " not defined in the repository", path, d.span.start, d.span.end, path,
                                    f"depver|{g}:{a}"))
        return ed

    # ---------------------------------------------------------------- interpolation
    def lookup(self, name: str, mod: MavenModule, parent: MavenModule | None) -> str | None:
        """Value of ``${name}`` for ``mod``: user properties, then model values, then properties."""
        if name in self.user_properties:
            return self.user_properties[name]
        model = {
            "groupId": mod.group_id, "artifactId": mod.artifact_id, "version": mod.version,
            "packaging": mod.packaging, "name": mod.raw.name, "description": mod.raw.description,
        }
        raw_parent = mod.raw.parent
        pmodel = {
            "groupId": raw_parent.group_id if raw_parent else None,
            "artifactId": raw_parent.artifact_id if raw_parent else None,
            "version": raw_parent.version if raw_parent else None,
        }
        for prefix in ("project.", "pom.", ""):
            if name.startswith(prefix):
                rest = name[len(prefix):]
                if rest in model and model[rest] is not None and (prefix or rest in ("groupId", "artifactId",
                                                                                        "version")):
                    return model[rest]
                if rest.startswith("parent.") and pmodel.get(rest[7:]) is not None:
                    return pmodel[rest[7:]]
        if name in mod.properties:
            return mod.properties[name]
        return None

    def interpolate(self, value: str, mod: MavenModule, parent: MavenModule | None) -> tuple[str, list[str]]:
        """Replace ``${…}`` recursively: each property is expanded once (memoised), a cycle is
        unresolved, and an expansion longer than :data:`MAX_VALUE_CHARS` is unresolved.
        Returns the value and the names that stayed unresolved."""
        missing: list[str] = []
        memo: dict[str, str | None] = {}

        def resolve(name: str, active: set[str]) -> str | None:
            if name in memo:
                return memo[name]
            if name in active:
                return None
            raw = self.lookup(name, mod, parent)
            if raw is None:
                memo[name] = None
                return None
            active.add(name)
            out = expand(raw, active)
            active.discard(name)
            memo[name] = out if out is not None and len(out) <= MAX_VALUE_CHARS and "${" not in out else None
            return memo[name]

        def expand(text: str, active: set[str]) -> str | None:
            parts: list[str] = []
            pos = size = 0
            for m in _PROP.finditer(text):
                v = resolve(m.group(1), active)
                if v is None:
                    if m.group(1) not in missing:
                        missing.append(m.group(1))
                    v = m.group(0)
                parts.append(text[pos:m.start()])
                parts.append(v)
                size += m.start() - pos + len(v)
                pos = m.end()
                if size > MAX_VALUE_CHARS:
                    return None
            parts.append(text[pos:])
            return "".join(parts)

        out = expand(value, set())
        if out is None:
            return value, sorted(set(_PROP.findall(value))) or ["(too long)"]
        return out, [m for m in missing if f"${{{m}}}" in out]

    # ---------------------------------------------------------------- reactor
    def _in_repo(self, g: str, a: str, v: str | None) -> str | None:
        """The one in-repo pom declaring ``g:a`` (version preferred when several), else None."""
        paths = list(self._by_ga.get((g, a), []))
        if v and len(paths) > 1:
            exact = [p for p in paths if (self.poms[p].version or
                                          (self.poms[p].parent.version if self.poms[p].parent else None)) == v]
            paths = exact or paths
        return paths[0] if len(paths) == 1 else None

    def _reactor(self) -> None:
        self.aggregated_by: dict[str, str] = {}
        for path in sorted(self.modules):
            for child_path in self.modules[path].module_paths:
                self.aggregated_by.setdefault(child_path, path)


def read_maven_config(data: bytes) -> dict[str, str]:
    """``-Dname=value`` definitions of ``.mvn/maven.config`` (user properties)."""
    out: dict[str, str] = {}
    try:
        tokens = shlex.split(data.decode("utf-8", "replace"), comments=False)
    except ValueError:
        tokens = data.decode("utf-8", "replace").split()
    for i, tok in enumerate(tokens):
        if tok.startswith("-D") and len(tok) > 2:
            k, _, v = tok[2:].partition("=")
            out[k] = v if _ else "true"
        elif tok == "-D" and i + 1 < len(tokens):
            k, _, v = tokens[i + 1].partition("=")
            out[k] = v if _ else "true"
    return out


def _dependency_key(d: EffectiveDependency) -> tuple[str, str, str, str]:
    """The key a dependency is inherited, overridden and managed by: (groupId, artifactId, type, classifier)."""
    return (d.group_id, d.artifact_id, d.type, d.classifier)


_WAR = re.compile(r"<packaging>\s*war\s*</packaging>")


def _unread_deployable(raw: RawPom) -> str:
    """What the text of a pom that does not parse says of a deployable module — it names
    ``spring-boot-maven-plugin`` or declares ``war`` packaging — as the end of its MODULE_SKIPPED
    message: a module is a service only when its pom is read (or an inventory file names it), so no
    service package is made for it. Empty when the text says neither."""
    text = "\n".join(raw.lines)
    said = [what for what, found in (("names spring-boot-maven-plugin", "spring-boot-maven-plugin" in text),
                                     ("declares war packaging", bool(_WAR.search(text)))) if found]
    if not said:
        return ""
    return (f"; its text {' and '.join(said)}, so it may be a deployable service: no service package is made for it "
            "while its pom does not parse (an inventory file naming it makes a FAILED one)")

