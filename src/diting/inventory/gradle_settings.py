"""Which Gradle builds a repository holds and what their settings declare, read statically
(docs/gradle.md).

A **build** is a ``settings.gradle``/``settings.gradle.kts`` (or a lone build script with no
settings file above it). Its settings give the projects — ``rootProject.name``, ``include`` and
``includeFlat`` (strings, lists, ``':a:b'`` paths, which also create ``:a``), ``project(':x').projectDir
= file(…)`` — the builds it includes (``includeBuild``: separate roots of a composite) and its
version catalogs (``gradle/libs.versions.toml`` and ``versionCatalogs { … from(files(…)) }``), with
the build's ``gradle.properties``. What decides at build time which projects exist (``if``, loops,
``.each { }``) is not applied: a GRADLE_NOT_STATIC finding names it, and the build remembers it.
Used by ``inventory/gradle.py``, which configures the projects found here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from diting.findings import Finding
from diting.inventory.gradle_ast import Assign, Call, Control, Decl, ExprStmt, Member, Name, Script, Stmt
from diting.inventory.gradle_chains import DYNAMIC_CALLS, chain, not_static
from diting.inventory.gradle_eval import Catalog, Eval, FileVal, ProjectRef, describe, flatten, read_catalog
from diting.inventory.gradle_files import script_errors
from diting.source.paths import join_inside, parent_dir

if TYPE_CHECKING:
    from diting.inventory.gradle import GradleModel

SETTINGS_FILES = ("settings.gradle", "settings.gradle.kts")
BUILD_FILES = ("build.gradle", "build.gradle.kts")
CATALOG_DEFAULT = "gradle/libs.versions.toml"
#: a project path deeper than this is not read
MAX_PROJECT_DEPTH = 32


@dataclass
class ProjectDecl:
    """A project as its build's settings declare it: Gradle path, name, directory (None when it
    lies outside the repository) and where it is declared."""

    path: str  # gradle path
    name: str
    dir: str | None
    declared_in: str
    line: int


@dataclass
class GradleBuild:
    """One build: its settings (or lone script), root directory, projects and catalogs."""

    root_dir: str
    settings: str | None
    root_name: str
    projects: dict[str, ProjectDecl] = field(default_factory=dict)
    catalogs: dict[str, Catalog] = field(default_factory=dict)
    included: list[str] = field(default_factory=list)
    properties: dict[str, str] = field(default_factory=dict)
    inputs: list[str] = field(default_factory=list)
    #: constructs of the settings that decide at build time which projects exist
    dynamic: list[str] = field(default_factory=list)


def absolute_path(path: str, base: str) -> str:
    """The absolute Gradle path of project ``path`` (``':a:b'``, or relative to the project at ``base``)."""
    if path.startswith(":"):
        return path.rstrip(":") or ":"
    return (base.rstrip(":") + ":" + path).rstrip(":") or ":"


class SettingsReader:
    """Finds every build of the repository and reads its settings into ``model.builds`` (root
    directory → :class:`GradleBuild`), with its findings in ``model.findings``. The settings'
    expressions are evaluated against ``model`` (no project is configured yet)."""

    def __init__(self, model: GradleModel) -> None:
        self.model = model
        self.files = model.files
        self.tree = model.tree
        self.symlinks = model.symlinks
        self.root_name = model.root_name
        self.builds = model.builds
        self.findings = model.findings

    def discover(self, candidates: list[str]) -> None:
        """Read the builds of ``candidates`` (the settings files and build scripts of the tree): one
        build per settings file, and one per build script that no build includes and no settings
        file lies above."""
        for link in sorted(self.symlinks):
            if link.rsplit("/", 1)[-1] in SETTINGS_FILES:
                self.findings.append(Finding("FILE_UNREADABLE", f"{link} is a symlink, never followed; the build it "
                                             "would define is not read", link, 0, 0, None, f"settings-link|{link}"))
        settings = sorted(p for p in candidates if p.rsplit("/", 1)[-1] in SETTINGS_FILES)
        scripts = sorted(p for p in candidates if p.rsplit("/", 1)[-1] in BUILD_FILES)
        for s in settings:
            d = parent_dir(s)
            if d in self.builds:  # both settings.gradle and settings.gradle.kts: Gradle takes the Groovy one
                self.findings.append(Finding("GRADLE_NOT_STATIC", f"{s} is ignored: {self.builds[d].settings} is "
                                             "the settings file of this build", s, 0, 0, None, "settings|twice"))
                continue
            self.builds[d] = self._read_settings(d, s)
        owned: set[str] = set()
        for b in self.builds.values():
            for decl in b.projects.values():
                if decl.dir is not None:
                    owned.add(decl.dir)
        for sc in scripts:
            d = parent_dir(sc)
            if d in owned or d in self.builds:
                continue
            top = self._enclosing_build(d)
            if any(d in other.included for other in self.builds.values()):
                top = None  # an included build without a settings file of its own
            if top is not None and top.dynamic:
                self.findings.append(Finding("GRADLE_NOT_STATIC", f"{sc} is not included by {top.settings} as read, "
                                             f"but {top.dynamic[0]} decides at build time which projects exist: it may "
                                             "be one; not read", sc, 0, 0, None, "orphan"))
                continue
            if top is not None:
                # inside a build whose settings do not include it: Gradle builds it from nowhere
                self.findings.append(Finding("MODULE_NOT_INCLUDED", f"{sc} is not included by {top.settings}: no "
                                             "build at this commit builds it; its directory is not a module", sc, 0, 0,
                                             None, "orphan"))
                continue
            # a build script with no settings file above it: a single-project build of its own
            b = GradleBuild(d, None, d.rsplit("/", 1)[-1] if d else self.root_name)
            b.projects[":"] = ProjectDecl(":", b.root_name, d, sc, 1)
            self._properties(b)
            self._default_catalog(b)
            self.builds[d] = b
            owned.add(d)

    def _enclosing_build(self, d: str) -> GradleBuild | None:
        cur = d
        while cur:
            cur = parent_dir(cur)
            b = self.builds.get(cur)
            if b is not None and b.settings is not None:
                return b
        return None

    def _properties(self, b: GradleBuild) -> None:
        path = join_inside(b.root_dir, "gradle.properties")
        if path and path in self.symlinks:
            self.findings.append(Finding("FILE_UNREADABLE", f"{path} is a symlink, never followed; the build's "
                                         "properties are unknown", path, 0, 0, None, f"props|{path}"))
        if path and path in self.tree:
            b.properties = self.files.properties(path, self.findings)
            b.inputs.append(path)

    def _default_catalog(self, b: GradleBuild) -> None:
        path = join_inside(b.root_dir, CATALOG_DEFAULT)
        if path and "libs" not in b.catalogs and (path in self.tree or path in self.symlinks):
            self._catalog(b, "libs", path)

    def _catalog(self, b: GradleBuild, name: str, path: str) -> None:
        if path not in self.tree:
            why = "is a symlink, never followed" if path in self.symlinks else "does not exist at this commit"
            self.findings.append(Finding("GRADLE_NOT_STATIC", f"version catalog {name} ({path}) {why}; its entries are "
                                         "unknown", b.settings or path, 0, 0, None, f"catalog|{path}"))
            return
        text = self.files.text(path)
        if text is None:
            self.files.not_read(path, self.findings, None, f"version catalog {name}")
            return
        b.catalogs[name] = read_catalog(path, text, self.findings)
        b.inputs.append(path)

    def _read_settings(self, d: str, path: str) -> GradleBuild:
        b = GradleBuild(d, path, d.rsplit("/", 1)[-1] if d else self.root_name)
        b.inputs.append(path)
        self._properties(b)
        b.projects[":"] = ProjectDecl(":", b.root_name, d, path, 1)
        sc = self.files.script(path)
        if sc is None:
            self.findings.append(Finding("MODULE_SKIPPED", f"{path} is not readable "
                                         f"({self.files.problems.get(path, 'unreadable')}); only its root project "
                                         "is known", path, 0, 0, None, "settings|unreadable"))
            self._default_catalog(b)
            return b
        script_errors(sc, self.findings, None)
        ev = Eval(self.model, b, None, sc, {})
        dirs: dict[str, tuple[Any, int]] = {}
        self._settings_block(b, sc, sc.statements, ev, dirs, [])
        for gpath, (val, line) in sorted(dirs.items()):
            decl = b.projects.get(gpath)
            if decl is None:
                continue
            if isinstance(val, FileVal):
                if val.path is None:
                    self.findings.append(Finding("PATH_OUTSIDE_TREE", f"project {gpath}'s projectDir leaves the "
                                                 "repository; not read", path, line, line, None, f"dir|{gpath}"))
                    decl.dir = None
                else:
                    decl.dir = val.path
            else:
                self.findings.append(Finding("GRADLE_NOT_STATIC", f"project {gpath}'s projectDir is computed "
                                             f"({describe(val)}); its default directory is read",
                                             path, line, line, None, f"dir|{gpath}"))
        if b.projects[":"].name != b.root_name:
            b.root_name = b.projects[":"].name
        self._default_catalog(b)
        return b

    def _settings_block(self, b: GradleBuild, sc: Script, stmts: list[Stmt], ev: Eval,
                        dirs: dict[str, tuple[Any, int]], ctx: list[str]) -> None:
        """Read the statements ``stmts`` of the settings script ``sc``; ``dirs`` gathers the
        ``projectDir`` assignments (Gradle path → (value, line)), ``ctx`` is the path of the
        enclosing blocks."""
        for st in stmts:
            if isinstance(st, Decl):
                ev.locals[st.name] = ev.value(st.value)
            elif isinstance(st, Control):
                self._dynamic(sc, st.line, st.keyword, st.bodies, {"include", "includeFlat", "includeBuild",
                                                                   "projectDir"}, b)
            elif isinstance(st, Assign):
                self._settings_assign(b, st, ev, dirs)
            elif isinstance(st, ExprStmt) and isinstance(st.expr, Call):
                self._settings_call(b, sc, st.expr, ev, dirs, ctx)

    def _settings_assign(self, b: GradleBuild, st: Assign, ev: Eval, dirs: dict[str, tuple[Any, int]]) -> None:
        tgt = st.target
        if isinstance(tgt, Member) and tgt.name == "name" and isinstance(tgt.target, Name) and \
                tgt.target.name == "rootProject":
            v = ev.value(st.value)
            if isinstance(v, str) and v:
                b.projects[":"].name = v
            return
        if isinstance(tgt, Member) and tgt.name == "name" and isinstance(tgt.target, Call) and \
                tgt.target.name in ("project", "findProject"):
            p, v = ev.value(Call(tgt.line, None, "project", tgt.target.args)), ev.value(st.value)
            decl = b.projects.get(absolute_path(p.path, ":")) if isinstance(p, ProjectRef) else None
            if decl is not None and isinstance(v, str) and v:
                decl.name = v  # project(':apps:user-app').name = 'user-service'
            return
        if isinstance(tgt, Member) and tgt.name == "projectDir" and isinstance(tgt.target, Call) and \
                tgt.target.name in ("project", "findProject"):
            p = ev.value(Call(tgt.line, None, "project", tgt.target.args))
            if isinstance(p, ProjectRef):
                dirs[absolute_path(p.path, ":")] = (ev.value(st.value), st.line)
            return
        if isinstance(tgt, Name):
            ev.locals[tgt.name] = ev.value(st.value)

    def _settings_call(self, b: GradleBuild, sc: Script, c: Call, ev: Eval, dirs: dict[str, tuple[Any, int]],
                       ctx: list[str]) -> None:
        if c.target is None and c.name in ("include", "includeFlat"):
            self._include_call(b, sc, c, ev)
            return
        if c.target is None and c.name == "includeBuild":
            self._include_build(b, sc, c, ev)
            return
        path = chain(c.target) if c.target is not None else []
        if path is None:
            path = []
        full = ctx + path + [c.name]
        if full[-1] == "from" and "versionCatalogs" in full and len(full) >= 2:
            self._catalog_from(b, sc, c, ev, full)
            return
        if c.closure is not None:
            sub = ctx + path + [c.name]
            if c.name == "create" and c.args:
                n = ev.value(c.args[0].value)
                if isinstance(n, str):
                    sub = ctx + path + [n]
            if c.name in DYNAMIC_CALLS:
                self._dynamic(sc, c.line, f".{c.name} {{ }}", [c.closure.body], {"include", "includeFlat",
                                                                                 "includeBuild"}, b)
                return
            self._settings_block(b, sc, c.closure.body, ev, dirs, sub)

    def _include_call(self, b: GradleBuild, sc: Script, c: Call, ev: Eval) -> None:
        """``include``/``includeFlat`` of the paths its arguments give."""
        computed = []
        for v in flatten([ev.value(a.value) for a in c.args]):
            if not isinstance(v, str) or not v.strip(":"):
                computed.append(v)
                continue
            self._include(b, v, c.name == "includeFlat", sc.path, c.line)
        if computed:  # one finding per statement, however many paths it computes
            self.findings.append(Finding("GRADLE_NOT_STATIC", f"{c.name} of {len(computed)} computed project "
                                         f"path(s) ({describe(computed[0])}) at line {c.line}; not read",
                                         sc.path, c.line, c.line, None, f"include|{c.line}"))

    def _include_build(self, b: GradleBuild, sc: Script, c: Call, ev: Eval) -> None:
        v = ev.value(c.args[0].value) if c.args else None
        target = join_inside(b.root_dir, v) if isinstance(v, str) else (
            v.path if isinstance(v, FileVal) else None)
        if target is not None and (target == b.root_dir or b.root_dir.startswith(target + "/") or not target):
            self.findings.append(Finding("GRADLE_NOT_STATIC", f"includeBuild {target or '.'!r} at {sc.path}:"
                                         f"{c.line} includes this build or one around it (Gradle refuses "
                                         "it); not read", sc.path, c.line, c.line, None,
                                         f"includeBuild|{c.line}"))
        elif target is None:
            self.findings.append(Finding("PATH_OUTSIDE_TREE" if isinstance(v, (str, FileVal)) else
                                         "GRADLE_NOT_STATIC", f"includeBuild {v if isinstance(v, str) else '?'}"
                                         " is outside the repository or computed; not read", sc.path,
                                         c.line, c.line, None, f"includeBuild|{c.line}"))
        else:
            b.included.append(target)

    def _catalog_from(self, b: GradleBuild, sc: Script, c: Call, ev: Eval, full: list[str]) -> None:
        """``versionCatalogs { NAME { from(files(…)) } }`` (``full``: the path of the ``from`` call)."""
        name = full[-2] if full[-2] not in ("create",) else None
        if c.target is not None and isinstance(c.target, Call) and c.target.name == "create":
            name = None
        vals = flatten([ev.value(a.value) for a in c.args])
        for v in vals:
            if isinstance(v, FileVal) and v.path and name:
                self._catalog(b, name, v.path)
            elif isinstance(v, FileVal):
                self.findings.append(Finding("PATH_OUTSIDE_TREE", f"version catalog {name} at {sc.path}:"
                                             f"{c.line} lies outside the repository; not read", sc.path,
                                             c.line, c.line, None, f"catalog|{c.line}"))
            else:
                self.findings.append(Finding("GRADLE_NOT_STATIC", f"version catalog {name} at {sc.path}:"
                                             f"{c.line} is computed or not a file; not read", sc.path,
                                             c.line, c.line, None, f"catalog|{c.line}"))

    def _include(self, b: GradleBuild, raw: str, flat: bool, path: str, line: int) -> None:
        gpath = ":" + raw.strip().strip(":")
        segs = gpath.strip(":").split(":")
        bad = "an empty segment" if "" in segs else (f"more than {MAX_PROJECT_DEPTH} segments"
                                                      if len(segs) > MAX_PROJECT_DEPTH else None)
        if bad is None and any(not seg.isprintable() or seg in (".", "..") or "/" in seg or "\\" in seg
                               for seg in segs):
            bad = "a segment that is no directory name"
        if bad is not None:
            self.findings.append(Finding("GRADLE_NOT_STATIC", f"include {raw[:80]!r} at {path}:{line} has {bad}; "
                                         "that project is not read", path, line, line, None, f"include|{line}|{bad}"))
            return
        for i in range(1, len(segs) + 1):
            sub = ":" + ":".join(segs[:i])
            if sub in b.projects:
                continue
            if flat:
                d = join_inside(b.root_dir, "../" + "/".join(segs[:i]))
            else:
                d = join_inside(b.root_dir, "/".join(segs[:i]))
            if d is None:
                self.findings.append(Finding("PATH_OUTSIDE_TREE", f"project {sub} ({'includeFlat' if flat else 'include'}"
                                             f" {raw!r}) lies outside the repository; not read", path, line, line,
                                             None, f"include|{sub}"))
            b.projects[sub] = ProjectDecl(sub, segs[i - 1], d, path, line)

    def _dynamic(self, sc: Script, line: int, construct: str, bodies: list[list[Stmt]], names: set[str],
                 b: GradleBuild) -> None:
        found = not_static(sc, line, construct, bodies, names, None, f"dynamic|{line}")
        if found is not None:
            b.dynamic.append(f"{construct.strip()} at {sc.path}:{line}")
            self.findings.append(found)
