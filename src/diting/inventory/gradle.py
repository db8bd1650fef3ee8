"""The Gradle inventory, read statically: nothing from the build is ever run (docs/gradle.md).

A **build** is a ``settings.gradle``/``settings.gradle.kts`` (or a lone build script with no
settings file above it). Its settings give the projects — ``rootProject.name``, ``include`` and
``includeFlat`` (strings, lists, ``':a:b'`` paths, which also create ``:a``), ``project(':x').projectDir
= file(…)`` — the builds it includes (``includeBuild``: separate roots of a composite) and its
version catalogs (``gradle/libs.versions.toml`` and ``versionCatalogs { … from(files(…)) }``).

Each project's model is what its build scripts declare, evaluated in Gradle's order as far as a
static reader can follow it: ``gradle.properties`` of the build and of the project, then the
``allprojects``/``subprojects`` blocks of its ancestors, the ``project(':x') { }`` /
``configure(project(':x')) { }`` blocks naming it, script plugins applied with ``apply from:``, then its
own script. Read are: ``group``, ``version``, ``ext``/``extra`` properties, ``def``/``val`` locals,
string templates, plugins (``plugins { id … }``, ``apply plugin:``, catalog aliases, ``apply false``),
dependencies (string, map and ``project(…)`` notations, ``projects.x`` accessors, ``libs.x`` catalog
entries and bundles, ``platform(…)``), source sets (``srcDirs =`` replaces, ``srcDir``/``srcDirs(…)``
adds), ``bootJar``/``jar``/``war`` switches, the Java level and the source encoding.

What cannot be read statically — ``if``/``when``/loops, ``.each``/``.eachDir``/``.forEach``
closures, ``configure(subprojects.findAll { … })``, task-graph callbacks, definitions in a script —
is not applied; when it hides something that matters (an include, a plugin, a dependency, a
coordinate, a source set) a GRADLE_NOT_STATIC finding names the file, line and construct.
Plugins the build defines itself (``buildSrc``, an included ``build-logic`` build) are named
as such: their conventions are not read.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from typing import Any, Callable

from diting.config.sources import parse_properties
from diting.findings import Finding
from diting.inventory.gradle_ast import (Assign, Call, Closure, Control, Decl, Definition, Expr, ExprStmt, Index,
                                        Member, Name, Script, Stmt, Str)
from diting.inventory.gradle_eval import (MAX_LIST_ITEMS, MISSING, Catalog, CatalogRef, Coordinate, Eval, FileVal,
                                         ProjectRef, Unknown, describe, read_catalog, unknown)
from diting.inventory.gradle_script import read_script
from diting.inventory.module import BuildEvidence, BuildModule, DeployableBasis, EffectiveDependency, Span
from diting.source.paths import join_inside, parent_dir

SETTINGS_FILES = ("settings.gradle", "settings.gradle.kts")
BUILD_FILES = ("build.gradle", "build.gradle.kts")
CATALOG_DEFAULT = "gradle/libs.versions.toml"
#: plugins that make a project a Java project (packaging jar)
JAVA_PLUGINS = {"java", "java-library", "application", "groovy", "war", "org.springframework.boot",
                "org.jetbrains.kotlin.jvm", "kotlin", "scala", "io.spring.dependency-management", "java-platform"}
#: statements naming one of these are what a build's structure turns on
_MATTERS = {"include", "includeFlat", "includeBuild", "dependencies", "plugins", "apply", "sourceSets", "srcDir",
            "srcDirs", "bootJar", "bootWar", "allprojects", "subprojects", "archivesBaseName"}
#: assignments that matter (``version = …`` under an ``if``)
_MATTERS_ASSIGNED = {"group", "version"}
#: closure-taking calls that iterate or decide at run time
_DYNAMIC_CALLS = {"each", "eachDir", "eachFile", "eachDirMatch", "eachFileRecurse", "forEach", "forEachIndexed",
                  "findAll", "filter", "collect", "map", "times", "upto", "matching",
                  "afterEvaluate", "beforeEvaluate", "projectsEvaluated", "whenReady", "whenTaskAdded",
                  "doFirst", "doLast", "eachWithIndex", "onEach", "also", "let", "run", "with",
                  "apply_closure"}
_SELECTORS = {"allprojects", "subprojects"}
_NAMED = {"named", "getByName", "register", "create", "maybeCreate", "getting", "creating", "findByName", "getAt"}
MAX_SCRIPT_PLUGINS = 32
#: a project path deeper than this is not read
MAX_PROJECT_DEPTH = 32
#: script applications (``apply from:``, convention plugins, injected blocks) per build
MAX_APPLICATIONS = 100000
#: Gradle's core plugins: a script of the repository never stands for one
CORE_PLUGINS = {"java", "java-library", "java-platform", "java-test-fixtures", "application", "war", "ear", "groovy",
                "scala", "base", "jacoco", "maven-publish", "ivy-publish", "idea", "eclipse", "checkstyle", "pmd",
                "codenarc", "signing", "distribution", "antlr", "jvm-test-suite", "java-gradle-plugin",
                "groovy-gradle-plugin", "kotlin-dsl", "version-catalog", "test-report-aggregation",
                "jacoco-report-aggregation", "project-report", "build-dashboard", "help-tasks", "reporting-base",
                "publishing", "wrapper", "init"}


# --------------------------------------------------------------------------- values


# --------------------------------------------------------------------------- catalogs


# --------------------------------------------------------------------------- projects


@dataclass
class PluginUse:
    id: str
    path: str
    line: int
    own: bool  # applied by the project's own script or a block naming the project alone


@dataclass
class GradleProject(BuildModule):
    """One Gradle project with what its scripts declare (``build_system`` gradle)."""

    gradle_path: str = ":"
    build_root: str = ""
    script: str | None = None
    dsl: str | None = None
    settings_file: str | None = None
    declared_at: tuple[str, int] = ("", 0)
    plugins: list[PluginUse] = field(default_factory=list)
    tasks: dict[str, dict[str, Any]] = field(default_factory=dict)
    group_source: str = "GRADLE_DEFAULT"
    ext: dict[str, Any] = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)
    encoding: str = "utf-8"
    build_logic: bool = False
    properties: dict[str, str] = field(default_factory=dict)
    #: the build's gradle.properties (one dict shared by every project of the build, never copied)
    build_properties: dict[str, str] = field(default_factory=dict, repr=False)
    #: dependency key → its index in ``dependencies``
    dep_index: dict[tuple, int] = field(default_factory=dict, repr=False)
    #: scripts applied to this project (each at most once), and the applications counted
    applied: set[str] = field(default_factory=set, repr=False)
    applied_bundles: set[tuple] = field(default_factory=set, repr=False)

    def evidence(self) -> BuildEvidence:
        if self.script is not None:
            return BuildEvidence(self.script, self.lines or [""], self.encoding, 1, 1)
        path, line = self.declared_at
        return BuildEvidence(path, self.lines or [""], self.encoding, line or 1, line or 1)

    def version_matches(self, version: str) -> bool:
        """A project without a version is Gradle's ``unspecified``."""
        return (self.version or "unspecified") == version

    def extra_attributes(self) -> dict[str, object]:
        return {"gradle_path": self.gradle_path, "gradle_build": self.build_root or ".", "gradle_dsl": self.dsl,
                "archives_name": self.tasks.get("jar", {}).get("archiveBaseName"),
                "gradle_plugins": sorted({p.id for p in self.plugins}), "group_source": self.group_source,
                "build_logic": self.build_logic}

    def plugin_ids(self) -> set[str]:
        return {p.id for p in self.plugins}

    def declared_deployable(self, plugin_rules: dict[str, dict]) -> list[DeployableBasis]:
        """Plugins a build rule names, applied by the project's own script (or a block naming this
        project alone — a plugin every subproject gets is no evidence that this one deploys), unless
        the rule's task is switched off (``bootJar { enabled = false }``)."""
        out: list[DeployableBasis] = []
        for use in self.plugins:
            attrs = plugin_rules.get(use.id)
            if attrs is None or not use.own:
                continue
            task = attrs.get("task")
            if task and self.tasks.get(task, {}).get("enabled") is False:
                continue
            out.append(DeployableBasis(attrs["basis"], use.path, use.line, use.line,
                                       f"Gradle plugin {use.id} applied by the project's build"))
        return out

    def property_lookup(self) -> Callable[[str], str | None]:
        model = {"version": self.version or "unspecified", "project.version": self.version or "unspecified",
                 "group": self.group_id or "", "name": self.artifact_id or ""}

        def lookup(name: str) -> str | None:
            v = self.ext.get(name)
            if isinstance(v, str):
                return v
            for props in (self.properties, self.build_properties, model):
                if name in props:
                    return props[name]
            return None
        return lookup


@dataclass
class _ProjectDecl:
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
    projects: dict[str, _ProjectDecl] = field(default_factory=dict)
    catalogs: dict[str, Catalog] = field(default_factory=dict)
    included: list[str] = field(default_factory=list)
    properties: dict[str, str] = field(default_factory=dict)
    inputs: list[str] = field(default_factory=list)
    #: constructs of the settings that decide at build time which projects exist
    dynamic: list[str] = field(default_factory=list)


class _Files:
    """Reading repository files for the Gradle reader (decoded, bounded, never outside the tree)."""

    def __init__(self, read: Callable[[str], tuple[str | None, str, str | None]], tree: set[str]) -> None:
        self._read = read
        self.tree = tree
        self.scripts: dict[str, Script] = {}
        self.encodings: dict[str, str] = {}
        self.problems: dict[str, str] = {}

    def text(self, path: str) -> str | None:
        text, enc, problem = self._read(path)
        self.encodings[path] = enc
        if problem:
            self.problems[path] = problem
        return text

    def script(self, path: str) -> Script | None:
        if path in self.scripts:
            return self.scripts[path]
        text = self.text(path)
        if text is None:
            return None
        sc = read_script(path, text)
        self.scripts[path] = sc
        return sc


def _chain(e: Expr) -> list[str] | None:
    """The dotted path of a receiver chain (``tasks.named("bootJar")`` → tasks, bootJar), or None
    when the chain holds something else than names, members, indexes and named lookups (walked in
    a loop: a chain of any length never recurses)."""
    out: list[str] = []
    cur: Expr | None = e
    while True:
        if isinstance(cur, Name):
            out.append(cur.name)
            break
        if isinstance(cur, Member):
            out.append(cur.name)
            cur = cur.target
        elif isinstance(cur, Index) and isinstance(cur.key, Str) and cur.key.literal is not None:
            out.append(cur.key.literal)
            cur = cur.target
        elif isinstance(cur, Call) and cur.name in _NAMED and cur.args and isinstance(cur.args[0].value, Str) \
                and cur.args[0].value.literal is not None:
            out.append(cur.args[0].value.literal)
            if cur.target is None:
                break
            cur = cur.target
        elif isinstance(cur, Call) and cur.name in ("get", "configure", "all", "configureEach") and not cur.args \
                and cur.target is not None:
            cur = cur.target  # sourceSets.main.get().java; every element of what the receiver selects
        elif isinstance(cur, Call) and cur.name == "withType" and cur.target is not None:
            out.append(_task_of(cur))
            cur = cur.target
        else:
            return None
    out.reverse()
    return out


#: task types whose tasks a build switches by type (``tasks.withType<BootJar> { enabled = false }``)
_TASK_TYPES = {"BootJar": "bootJar", "BootWar": "bootWar", "Jar": "jar", "War": "war", "JavaCompile": "compileJava"}


def _task_of(c: Call) -> str:
    """The task a ``withType(T)`` / ``withType<T>`` call selects, by its type's simple name."""
    names = list(c.type_args)
    if c.args and isinstance(c.args[0].value, (Name, Member)):
        names.append(c.args[0].value.name)
    for n in names:
        if n.rsplit(".", 1)[-1] in _TASK_TYPES:
            return _TASK_TYPES[n.rsplit(".", 1)[-1]]
    return "withType"


def _norm(path: list[str]) -> list[str]:
    """Drop receivers that do not change the meaning: ``project.``, ``tasks.``, ``this.``, and
    ``buildscript`` before ``ext`` (``buildscript { project.ext { … } }`` too)."""
    out = list(path)
    while True:
        if out and out[0] in ("project", "tasks", "this"):
            out = out[1:]
        elif out[:1] == ["buildscript"] and len(out) > 1 and out[1] in ("ext", "extra", "project", "this"):
            out = out[1:]
        else:
            break
    if out and out[0] == "extra":
        out = ["ext"] + out[1:]
    return out


def _mentions(stmts: list[Stmt], names: set[str]) -> bool:
    """True when a statement of ``stmts`` (or of a closure or body inside them) calls one of
    ``names`` or assigns to a path through one of them — what a build's structure turns on. Values
    only read (``classpath = sourceSets.x.runtimeClasspath``) do not count."""
    stack: list[Any] = list(stmts)
    seen = 0
    while stack:
        x = stack.pop()
        seen += 1
        if seen > 100000:
            return True
        if isinstance(x, ExprStmt):
            stack.append(x.expr)
        elif isinstance(x, Call):
            chain = _chain(x.target) if x.target is not None else []
            if x.name in names or any(n in names for n in chain or []):
                return True
            stack.extend(a.value for a in x.args if isinstance(a.value, Call))  # include(project(...)) …
            if x.closure is not None:
                stack.extend(x.closure.body)
        elif isinstance(x, Assign):
            chain = _chain(x.target) or []
            if any(n in names for n in chain) or (chain[:1] and chain[0] in _MATTERS_ASSIGNED and names is _MATTERS):
                return True
        elif isinstance(x, Control):
            for body in x.bodies:
                stack.extend(body)
        elif isinstance(x, Closure):
            stack.extend(x.body)
    return False


class GradleModel:
    """Every Gradle build of the repository and the effective model of each project.

    ``read``: path → (text, encoding, problem) for a repository file; ``tree``: every regular
    path of the tree; ``scopes``: Gradle configuration → Maven scope (build rules);
    ``root_name``: the name of the repository's root directory (Gradle's default root project name)."""

    def __init__(self, read: Callable[[str], tuple[str | None, str, str | None]], tree: set[str],
                 scopes: dict[str, str], build_logic_plugins: set[str], root_name: str,
                 candidates: list[str], gitlinks: set[str] | None = None, symlinks: set[str] | None = None) -> None:
        self.files = _Files(read, tree)
        self.tree = tree
        self.scopes = scopes
        self.build_logic_plugins = build_logic_plugins
        self.root_name = root_name
        self.builds: dict[str, GradleBuild] = {}
        self.modules: dict[str, GradleProject] = {}
        self.by_build_path: dict[tuple[str, str], str] = {}
        self.findings: list[Finding] = []
        self.aggregated_by: dict[str, str] = {}
        self._applications = 0
        #: build files that exist but could not be read (too large, unreadable)
        self.unread: set[str] = set()
        self._local_cache: dict[str, dict[str, str]] = {}
        self._accessors: dict[str, dict[tuple[str, str], list[str]]] = {}
        self._build_keys: dict[str, list[str]] = {}
        self._build_paths: dict[str, list[str]] = {}
        self._parents: dict[str, set[str]] = {}
        self.gitlinks = set(gitlinks or ())
        self.symlinks = set(symlinks or ())
        self._plugin_scripts = sorted(p for p in tree if p.endswith((".gradle", ".gradle.kts")) and "/src/main/" in
                                      f"/{p}")
        self._discover(candidates)
        for root in sorted(self.builds):
            self._configure(self.builds[root])
            self.files.scripts.clear()  # syntax trees are large: a build's are dropped once it is read

    # ------------------------------------------------------------ discovery
    def _discover(self, candidates: list[str]) -> None:
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
            b.projects[":"] = _ProjectDecl(":", b.root_name, d, sc, 1)
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
            b.properties = self._read_properties(path)
            b.inputs.append(path)

    def _read_properties(self, path: str) -> dict[str, str]:
        text = self.files.text(path)
        if text is None:
            self._not_read(path, self.findings, None, "Gradle properties")
            return {}
        cf = parse_properties(path, text)
        if cf.error:  # Gradle loads it with java.util.Properties: the build fails there
            self.unread.add(path)
            self.findings.append(Finding("PARSE_ERROR", f"{path}: {cf.error} (line {cf.error_line}); the build's "
                                         "properties are unknown", path, cf.error_line or 0, cf.error_line or 0, None,
                                         f"props-error|{path}"))
        return {e.raw_key: e.value for doc in cf.documents for e in doc.entries}

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
            self._not_read(path, self.findings, None, f"version catalog {name}")
            return
        b.catalogs[name] = read_catalog(path, text, self.findings)
        b.inputs.append(path)

    def _read_settings(self, d: str, path: str) -> GradleBuild:
        b = GradleBuild(d, path, d.rsplit("/", 1)[-1] if d else self.root_name)
        b.inputs.append(path)
        self._properties(b)
        b.projects[":"] = _ProjectDecl(":", b.root_name, d, path, 1)
        sc = self.files.script(path)
        if sc is None:
            self.findings.append(Finding("MODULE_SKIPPED", f"{path} is not readable "
                                         f"({self.files.problems.get(path, 'unreadable')}); only its root project "
                                         "is known", path, 0, 0, None, "settings|unreadable"))
            self._default_catalog(b)
            return b
        self._script_errors(sc, self.findings, None)
        ev = Eval(self, b, None, sc, {})
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
        for st in stmts:
            if isinstance(st, Decl):
                ev.locals[st.name] = ev.value(st.value)
                continue
            if isinstance(st, Control):
                self._dynamic(sc, st.line, st.keyword, st.bodies, {"include", "includeFlat", "includeBuild",
                                                                   "projectDir"}, b)
                continue
            if isinstance(st, Assign):
                tgt = st.target
                if isinstance(tgt, Member) and tgt.name == "name" and isinstance(tgt.target, Name) and \
                        tgt.target.name == "rootProject":
                    v = ev.value(st.value)
                    if isinstance(v, str) and v:
                        b.projects[":"].name = v
                    continue
                if isinstance(tgt, Member) and tgt.name == "name" and isinstance(tgt.target, Call) and \
                        tgt.target.name in ("project", "findProject"):
                    p, v = ev.value(Call(tgt.line, None, "project", tgt.target.args)), ev.value(st.value)
                    decl = b.projects.get(self._abs(p.path, ":")) if isinstance(p, ProjectRef) else None
                    if decl is not None and isinstance(v, str) and v:
                        decl.name = v  # project(':apps:user-app').name = 'user-service'
                    continue
                if isinstance(tgt, Member) and tgt.name == "projectDir" and isinstance(tgt.target, Call) and \
                        tgt.target.name in ("project", "findProject"):
                    p = ev.value(Call(tgt.line, None, "project", tgt.target.args))
                    if isinstance(p, ProjectRef):
                        dirs[self._abs(p.path, ":")] = (ev.value(st.value), st.line)
                    continue
                if isinstance(tgt, Name):
                    ev.locals[tgt.name] = ev.value(st.value)
                continue
            if not isinstance(st, ExprStmt) or not isinstance(st.expr, Call):
                continue
            c = st.expr
            if c.target is None and c.name in ("include", "includeFlat"):
                computed = []
                for v in self._flat([ev.value(a.value) for a in c.args]):
                    if not isinstance(v, str) or not v.strip(":"):
                        computed.append(v)
                        continue
                    self._include(b, v, c.name == "includeFlat", sc.path, c.line)
                if computed:  # one finding per statement, however many paths it computes
                    self.findings.append(Finding("GRADLE_NOT_STATIC", f"{c.name} of {len(computed)} computed project "
                                                 f"path(s) ({describe(computed[0])}) at line {c.line}; not read",
                                                 sc.path, c.line, c.line, None, f"include|{c.line}"))
                continue
            if c.target is None and c.name == "includeBuild":
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
                continue
            chain = _chain(c.target) if c.target is not None else []
            if chain is None:
                chain = []
            full = ctx + chain + [c.name]
            if full[-1] == "from" and "versionCatalogs" in full and len(full) >= 2:
                name = full[-2] if full[-2] not in ("create",) else None
                if c.target is not None and isinstance(c.target, Call) and c.target.name == "create":
                    name = None
                vals = self._flat([ev.value(a.value) for a in c.args])
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
                continue
            if c.closure is not None:
                sub = ctx + chain + [c.name]
                if c.name == "create" and c.args:
                    n = ev.value(c.args[0].value)
                    if isinstance(n, str):
                        sub = ctx + chain + [n]
                if c.name in _DYNAMIC_CALLS:
                    self._dynamic(sc, c.line, f".{c.name} {{ }}", [c.closure.body], {"include", "includeFlat",
                                                                                     "includeBuild"}, b)
                    continue
                self._settings_block(b, sc, c.closure.body, ev, dirs, sub)

    @staticmethod
    def _flat(values: list[Any]) -> list[Any]:
        """The leaves of nested lists, in order (walked in a loop; at most :data:`MAX_LIST_ITEMS`
        leaves: a list that holds more, counted with every shared sublist again, gives one unknown)."""
        out: list[Any] = []
        stack: list[Any] = [iter(values)]
        while stack:
            item = next(stack[-1], MISSING)
            if item is MISSING:
                stack.pop()
            elif isinstance(item, list):
                stack.append(iter(item))
            else:
                out.append(item)
                if len(out) > MAX_LIST_ITEMS:
                    return [unknown("too many items")]
        return out

    @staticmethod
    def _abs(path: str, base: str) -> str:
        if path.startswith(":"):
            return path.rstrip(":") or ":"
        return (base.rstrip(":") + ":" + path).rstrip(":") or ":"

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
            b.projects[sub] = _ProjectDecl(sub, segs[i - 1], d, path, line)

    def _special_dir(self, d: str) -> str | None:
        """Why a project directory cannot be read: a git submodule or a symlink (itself or an
        ancestor); None for a plain directory."""
        cur = d
        while cur:
            if cur in self.gitlinks:
                return "is a git submodule (its content is not in this repository's tree)"
            if cur in self.symlinks:
                return "is a symlink, never followed"
            cur = parent_dir(cur)
        return None

    def _script_errors(self, sc: Script, findings: list[Finding], module: str | None) -> None:
        """The reader's errors of ``sc`` (at most 20) as GRADLE_NOT_STATIC findings of ``module``."""
        for line, msg in sc.errors[:20]:
            findings.append(Finding("GRADLE_NOT_STATIC", f"{sc.path}:{line}: {msg}; the statement is not read",
                                    sc.path, line, line, module, f"syntax|{line}|{msg}"))

    def _dynamic(self, sc: Script, line: int, construct: str, bodies: list[list[Stmt]], names: set[str],
                 b: GradleBuild | None = None) -> None:
        if any(_mentions(body, names) for body in bodies):
            if b is not None:
                b.dynamic.append(f"{construct.strip()} at {sc.path}:{line}")
            self.findings.append(Finding("GRADLE_NOT_STATIC", f"{construct.strip()} at {sc.path}:{line} decides at "
                                         "build time what it configures; what it holds is not applied", sc.path,
                                         line, line, None, f"dynamic|{line}"))

    # ------------------------------------------------------------ projects
    def project_property(self, p: GradleProject, name: str) -> Any:
        """A project's property: its ``ext`` or an ancestor's, then its ``gradle.properties``;
        :data:`MISSING` when it has none of that name."""
        cur: GradleProject | None = p
        while cur is not None:
            if name in cur.ext:
                return cur.ext[name]
            cur = self.parent_of(cur)
        found = p.properties.get(name, MISSING)
        return found if found is not MISSING else p.build_properties.get(name, MISSING)

    def parent_of(self, p: GradleProject) -> GradleProject | None:
        if p.gradle_path == ":":
            return None
        parent = p.gradle_path.rsplit(":", 1)[0] or ":"
        key = self.by_build_path.get((p.build_root, parent))
        return self.modules.get(key) if key else None

    def project_at(self, b: GradleBuild, gpath: str) -> GradleProject | None:
        if gpath.startswith("projects:"):
            return self._accessor(b, gpath[len("projects:"):])
        key = self.by_build_path.get((b.root_dir, self._abs(gpath, ":")))
        return self.modules.get(key) if key else None

    def _accessor(self, b: GradleBuild, dotted: str) -> GradleProject | None:
        """A type-safe project accessor (``projects.sharedLib.api``) → the project it names (by an
        index of each project's children under their names without ``-``/``_``, case folded)."""
        def norm(s: str) -> str:
            return re.sub(r"[-_]", "", s).lower()
        index = self._accessors.get(b.root_dir)
        if index is None:
            index = {}
            for p, decl in b.projects.items():
                if p != ":":
                    index.setdefault((p.rsplit(":", 1)[0] or ":", norm(decl.name)), []).append(p)
            self._accessors[b.root_dir] = index
        cur = ":"
        for seg in [s for s in dotted.split(".") if s]:
            kids = index.get((cur, norm(seg)), [])
            if len(kids) != 1:
                return None
            cur = kids[0]
        return self.project_at(b, cur) if cur != ":" else None

    def _configure(self, b: GradleBuild) -> None:
        self._applications = 0
        mine: list[str] = []
        used_dirs: dict[str, str] = {}
        # create every project first (properties and names are visible across projects)
        for gpath, decl in sorted(b.projects.items(), key=lambda kv: (kv[0].count(":"), kv[0])):
            if decl.dir is None:
                continue
            special = self._special_dir(decl.dir)
            if special is not None:
                self.findings.append(Finding("MODULE_SKIPPED", f"project {gpath}'s directory {decl.dir} {special}; "
                                             "not read", decl.declared_in, decl.line, decl.line, None,
                                             f"special|{gpath}"))
                continue
            script = None
            linked = []
            for name in BUILD_FILES:
                cand = join_inside(decl.dir, name)
                if cand and cand in self.tree:
                    script = cand
                    break
                if cand and cand in self.symlinks:
                    linked.append(cand)
            key = script or f"{b.settings or decl.declared_in}#{gpath}"
            if decl.dir in used_dirs:
                self.findings.append(Finding("MODULE_SKIPPED", f"project {gpath}'s directory {decl.dir or '(root)'} "
                                             f"is project {used_dirs[decl.dir]}'s too (Gradle refuses two projects "
                                             "in one directory); not read", decl.declared_in, decl.line, decl.line,
                                             None, f"dir-twice|{gpath}"))
                continue
            if key in self.modules:
                continue
            used_dirs[decl.dir] = gpath
            proj = GradleProject(build_file=key, dir=decl.dir, build_system="gradle", gradle_path=gpath,
                                 build_root=b.root_dir, script=script, settings_file=b.settings,
                                 declared_at=(decl.declared_in, decl.line), artifact_id=decl.name)
            proj.dsl = ("kotlin" if script.endswith(".kts") else "groovy") if script else None
            proj.build_properties = b.properties
            own_props = join_inside(decl.dir, "gradle.properties")
            if own_props and decl.dir != b.root_dir and own_props in self.symlinks:
                proj.findings.append(Finding("FILE_UNREADABLE", f"{own_props} is a symlink, never followed; the "
                                             "project's properties are unknown", own_props, 0, 0, key,
                                             f"props|{own_props}"))
            if own_props and own_props in self.tree and decl.dir != b.root_dir:
                proj.properties = self._read_properties(own_props)
                proj.build_inputs.append(own_props)
            # gradle.properties may set the project's group and version (Gradle project properties)
            for prop in ("group", "version"):
                v = self.project_property(proj, prop)
                if isinstance(v, str) and v and v.isprintable():
                    if prop == "group":
                        proj.group_id, proj.group_source = v, "DECLARED"
                    else:
                        proj.version = v
            if script is None and decl.declared_in in self.files.scripts:
                proj.lines = self.files.scripts[decl.declared_in].lines
                proj.encoding = self.files.encodings.get(decl.declared_in, "utf-8")
            for cand in linked:
                proj.findings.append(Finding("FILE_UNREADABLE", f"{cand} is a symlink, never followed; the project's "
                                             "build script is unknown", cand, 0, 0, key, f"script-link|{cand}"))
            self.modules[key] = proj
            self.by_build_path[(b.root_dir, gpath)] = key
            mine.append(key)
        self._build_keys[b.root_dir] = sorted(mine, key=lambda k: self.modules[k].gradle_path)
        self._build_paths[b.root_dir] = [self.modules[k].gradle_path for k in self._build_keys[b.root_dir]]
        self._parents[b.root_dir] = {self.modules[k].gradle_path.rsplit(":", 1)[0] or ":" for k in mine
                                     if self.modules[k].gradle_path != ":"}
        root_key = self.by_build_path.get((b.root_dir, ":"))
        for key in mine:
            if self.modules[key].gradle_path != ":" and root_key:
                self.aggregated_by[key] = root_key
        # the scripts, in Gradle's order: root first, then by depth
        projects = [self.modules[k] for k in mine]
        injected: dict[str, list[tuple[Script, list[Stmt], bool, Eval | None]]] = {}
        for proj in projects:
            try:
                self._configure_project(b, proj, injected)
            except RecursionError:  # pragma: no cover - evaluation and reading are depth-bounded first
                proj.findings.append(Finding("GRADLE_NOT_STATIC", f"the build scripts of {proj.gradle_path} nest "
                                             "too deeply to evaluate; the rest is not applied", proj.evidence().path,
                                             0, 0, proj.build_file, "recursion"))
            self._finish(b, proj)
        for proj in projects:  # a project dependency carries the coordinates its target ended with
            for i, d in enumerate(proj.dependencies):
                t = self.modules.get(d.project) if d.project else None
                if t is not None:
                    d.group_id, d.artifact_id, d.version = t.group_id or "", t.artifact_id or "", t.version
                    d.version_source = "DECLARED" if t.version else "UNKNOWN"

    def _configure_project(self, b: GradleBuild, proj: GradleProject, injected) -> None:
        proj.build_inputs = sorted(set(proj.build_inputs) | set(b.inputs) | {p for p in (proj.script,) if p})
        for sc, stmts, own, ev in injected.get(proj.build_file, []):
            proj.build_inputs = sorted(set(proj.build_inputs) | {sc.path})
            self._apply(b, proj, sc, stmts, own, injected, ev)
        if proj.script is not None:
            sc = self.files.script(proj.script)
            if sc is None:
                proj.failed = True
                proj.findings.append(Finding("MODULE_SKIPPED", f"{proj.script} is not readable "
                                             f"({self.files.problems.get(proj.script, 'unreadable')})",
                                             proj.script, 0, 0, proj.build_file, "script|unreadable"))
                return
            proj.lines = sc.lines
            proj.encoding = self.files.encodings.get(proj.script, "utf-8")
            self._script_errors(sc, proj.findings, proj.build_file)
            self._apply(b, proj, sc, sc.statements, True, injected, None)
            self.files.scripts.pop(proj.script, None)  # read once: its syntax tree is not kept
        self._conventions(b, proj, injected)

    def _targets(self, b: GradleBuild, proj: GradleProject, sel: str) -> list[GradleProject]:
        """The projects ``allprojects`` (the project and its descendants) or ``subprojects`` (its
        descendants) of ``proj`` selects: a range of the build's projects sorted by path."""
        keys = self._build_keys.get(b.root_dir, [])
        paths = self._build_paths[b.root_dir]
        prefix = proj.gradle_path.rstrip(":") + ":"
        lo = bisect.bisect_left(paths, prefix)
        hi = bisect.bisect_left(paths, prefix[:-1] + chr(ord(":") + 1))
        out = [self.modules[k] for k in keys[lo:hi]]
        if sel == "allprojects":
            out = [proj] + [p for p in out if p is not proj]
        return [p for p in out if sel == "allprojects" or p is not proj]

    def _inject(self, b: GradleBuild, proj: GradleProject, targets: list[GradleProject], sc: Script,
                body: list[Stmt], own: bool, injected, ev: Eval) -> None:
        # each target is one application of the block (nested allprojects grow with the square)
        self._applications += max(0, len(targets) - 1)
        if self._applications > MAX_APPLICATIONS:
            targets = [t for t in targets if t is proj]
        for t in targets:
            if t is proj:
                self._apply(b, proj, sc, body, own, injected, ev)
            else:
                injected.setdefault(t.build_file, []).append((sc, body, own, ev))

    def _apply(self, b: GradleBuild, proj: GradleProject, sc: Script, stmts: list[Stmt], own: bool,
               injected, parent_ev: Eval | None, ctx: list[str] | None = None) -> None:
        """Apply ``stmts`` of script ``sc`` to ``proj``; ``own`` is False for blocks every subproject
        gets; ``ctx`` is the path of the enclosing configuration blocks. A build applies at most
        :data:`MAX_APPLICATIONS` blocks (nested ``allprojects`` grow with the square of the projects)."""
        self._applications += 1
        if self._applications > MAX_APPLICATIONS:
            if self._applications == MAX_APPLICATIONS + 1:
                proj.findings.append(Finding("GRADLE_NOT_STATIC", f"more than {MAX_APPLICATIONS} configuration "
                                             f"blocks applied in the build of {b.settings or proj.build_file}; the "
                                             "rest are not read", sc.path, 0, 0, proj.build_file, "applications"))
            return
        ev = Eval(self, b, proj, sc, dict(parent_ev.locals) if parent_ev else {})
        ev.p = proj
        self._walk(b, proj, sc, stmts, own, injected, ev, ctx or [])

    def _walk(self, b, proj: GradleProject, sc: Script, stmts: list[Stmt], own: bool, injected,
              ev: Eval, ctx: list[str]) -> None:
        for st in stmts:
            if isinstance(st, Decl):
                v = ev.value(st.value) if st.value is not None else unknown(st.name)
                if st.delegate is not None and isinstance(st.delegate, Call) and st.delegate.name == "extra":
                    args, lam = st.delegate.args, st.delegate.closure
                    last = lam.body[-1] if lam is not None and lam.body else None
                    proj.ext[st.name] = ev.value(args[0].value) if args else (
                        ev.value(last.expr) if isinstance(last, ExprStmt) else unknown(st.name))
                elif st.delegate is not None:
                    ev.locals[st.name] = ev.prop(st.name)
                else:
                    ev.locals[st.name] = v
                continue
            if isinstance(st, Definition):
                continue
            if isinstance(st, Control):
                self._dynamic_to(proj, sc, st.line, st.keyword, st.bodies)
                continue
            if isinstance(st, Assign):
                self._assign(b, proj, sc, st, ev, ctx)
                continue
            if isinstance(st, ExprStmt):
                e = st.expr
                if isinstance(e, Name) and ctx[-1:] == ["plugins"]:
                    self._plugin(proj, e.name, sc.path, st.line, own)
                    continue
                if isinstance(e, Call):
                    self._call(b, proj, sc, e, own, injected, ev, ctx)

    def _dynamic_to(self, proj: GradleProject, sc: Script, line: int, construct: str,
                    bodies: list[list[Stmt]]) -> None:
        if any(_mentions(body, _MATTERS) for body in bodies):
            proj.findings.append(Finding("GRADLE_NOT_STATIC", f"{construct.strip()} at {sc.path}:{line} decides at "
                                         "build time what it configures; what it holds is not applied", sc.path,
                                         line, line, proj.build_file, f"dynamic|{sc.path}|{line}"))

    def _plugin(self, proj: GradleProject, pid: str, path: str, line: int, own: bool) -> None:
        if pid == "kotlin":
            pid = "org.jetbrains.kotlin.jvm"
        if not any(p.id == pid and p.own >= own for p in proj.plugins):
            proj.plugins = [p for p in proj.plugins if p.id != pid] + [PluginUse(pid, path, line, own)]
        if pid in self.build_logic_plugins:
            proj.build_logic = True

    def _plugin_value(self, b: GradleBuild, ev: Eval, e: Expr) -> str | None:
        if isinstance(e, Call) and e.target is None and e.name == "kotlin" and e.args:
            v = ev.value(e.args[0].value)
            return f"org.jetbrains.kotlin.{v}" if isinstance(v, str) else None
        v = ev.value(e)
        if isinstance(v, CatalogRef) and v.parts[:1] == ("plugins",):
            cat = b.catalogs.get(v.catalog)
            hit = cat.plugins.get(".".join(v.parts[1:])) if cat else None
            return hit[0] if hit else None
        return v if isinstance(v, str) else None

    def _call(self, b: GradleBuild, proj: GradleProject, sc: Script, c: Call, own: bool, injected,
              ev: Eval, ctx: list[str]) -> None:
        # a plugins-block entry, possibly a chain: id 'x' version 'y' apply false
        if ctx[-1:] == ["plugins"]:
            links: list[Call] = []
            cur: Expr | None = c
            while isinstance(cur, Call):
                links.append(cur)
                cur = cur.target
            base = links[-1]
            applies = not any(lk.name == "apply" and lk.args and isinstance(lk.args[0].value, Name)
                              and lk.args[0].value.name == "false" for lk in links)
            if base.name in ("id", "alias") and base.args:
                pid = self._plugin_value(b, ev, base.args[0].value)
            elif base.name == "kotlin":
                pid = self._plugin_value(b, ev, base)
            else:
                pid = base.name if not base.args else None
            if pid is None:
                proj.findings.append(Finding("GRADLE_NOT_STATIC", f"plugin at {sc.path}:{c.line} is computed or "
                                             "not in a version catalog; it is not known", sc.path, c.line, c.line,
                                             proj.build_file, f"plugin|{sc.path}|{c.line}"))
            elif applies:
                self._plugin(proj, pid, sc.path, c.line, own)
            return
        chain = _chain(c.target) if c.target is not None else []
        if c.target is not None and isinstance(c.target, Str) and c.name == "call":  # Kotlin "implementation"(…)
            chain, name = [], c.target.literal or ""
        elif c.name in _NAMED and c.args and isinstance(c.args[0].value, Str) and c.args[0].value.literal:
            name = c.args[0].value.literal  # tasks.named("bootJar") { … }, sourceSets.getByName("main") { … }
        elif c.name == "withType":
            name = _task_of(c)  # tasks.withType<BootJar> { … }
        elif c.name in ("all", "configureEach") and not c.args and c.target is not None:
            chain = _chain(c.target)  # tasks.withType(Jar).configureEach { … }: the selection itself
            name = chain.pop() if chain else c.name
        else:
            name = c.name
        if chain is None:
            # a call on a computed receiver: configure(subprojects.findAll {…}) and friends
            if c.closure is not None:
                self._dynamic_to(proj, sc, c.line, f".{c.name} {{ }}", [c.closure.body])
            return
        path = _norm(ctx + chain + [name])
        head = path[-1] if path else name
        # scope switches
        if not chain and name in _SELECTORS and c.closure is not None and not c.args:
            if self._applications <= MAX_APPLICATIONS:
                self._inject(b, proj, self._targets(b, proj, name), sc, c.closure.body, False, injected, ev)
            return
        if not chain and name in ("project", "configure") and c.closure is not None and c.args:
            targets = self._selected(b, proj, ev, c.args[0].value)
            if targets is None:
                self._dynamic_to(proj, sc, c.line, f"{name}(…) {{ }}", [c.closure.body])
                return
            self._inject(b, proj, targets, sc, c.closure.body, len(targets) == 1, injected, ev)
            return
        if c.closure is not None and name in _DYNAMIC_CALLS:
            self._dynamic_to(proj, sc, c.line, f".{name} {{ }}", [c.closure.body])
            return
        if not chain and name == "apply" or path[:1] == ["apply"] and head == "plugin":
            self._apply_call(b, proj, sc, c, own, injected, ev)
            if c.closure is not None:
                self._walk(b, proj, sc, c.closure.body, own, injected, ev, ["apply"])
            return
        if path[:2] == ["dependencies", "add"] and c.args:
            conf = ev.value(c.args[0].value)
            if isinstance(conf, str):
                self._dependencies(b, proj, sc, Call(c.line, None, conf, c.args[1:], c.closure), conf, ev)
            return
        if path[:1] == ["dependencies"] and len(path) == 2:
            self._dependencies(b, proj, sc, c, head, ev)
            return
        if path[:1] == ["dependencies"] and name == "constraints":
            return
        if head in ("group", "version") and len(path) == 1 and c.args and not c.closure:
            self._set(proj, [head], ev.value(c.args[0].value), sc, c.line)
            return
        if head in ("srcDir", "srcDirs", "setSrcDirs") and "sourceSets" in path:
            vals = self._flat([ev.value(a.value) for a in c.args])
            self._source_dirs(proj, path[:-1], vals, head == "setSrcDirs", sc, c.line)
            return
        if head == "set" and len(path) >= 2 and c.args and path[-2] not in ("ext",):
            self._set(proj, path[:-1], ev.value(c.args[-1].value), sc, c.line)
            return
        if head == "set" and path[-2:-1] == ["ext"] and len(c.args) == 2:
            k = ev.value(c.args[0].value)
            if isinstance(k, str):
                proj.ext[k] = ev.value(c.args[1].value)
            return
        if head == "mavenBom" and path[-2:-1] == ["imports"] and c.args:
            # io.spring.dependency-management: dependencyManagement { imports { mavenBom "g:a:v" } }
            self._dependency(b, proj, sc, ("platform", ev.value(c.args[0].value)), "dependencyManagement", "import",
                             Span(c.line, c.line), None)
            return
        if c.closure is not None:
            self._walk(b, proj, sc, c.closure.body, own, injected, ev, path)

    def _selected(self, b: GradleBuild, proj: GradleProject, ev: Eval, e: Expr) -> list[GradleProject] | None:
        v = ev.value(e)
        if isinstance(e, Name) and e.name in _SELECTORS:
            return self._targets(b, proj, e.name)
        vals = v if isinstance(v, list) else [v]
        out: list[GradleProject] = []
        for x in vals:
            if isinstance(x, ProjectRef):
                t = self.project_at(b, self._abs(x.path, proj.gradle_path) if not x.path.startswith("projects:")
                                    else x.path)
                if t is None:
                    return None
                out.append(t)
            elif isinstance(x, str):
                t = self.project_at(b, self._abs(x, proj.gradle_path))
                if t is None:
                    return None
                out.append(t)
            else:
                return None
        return out

    def _apply_call(self, b: GradleBuild, proj: GradleProject, sc: Script, c: Call, own: bool, injected,
                    ev: Eval) -> None:
        named = {a.name: a.value for a in c.args if a.name is not None}
        if c.name == "plugin" or "plugin" in named:
            e = named.get("plugin") or (c.args[0].value if c.args else None)
            v = ev.value(e) if e is not None else None
            if isinstance(v, str):
                self._plugin(proj, v, sc.path, c.line, own)
            elif isinstance(e, (Name, Member)) and _chain(e):
                # apply plugin: SomePluginClass — a class of buildSrc or of a plugin jar
                cls = ".".join(_chain(e) or [])
                self._plugin(proj, cls, sc.path, c.line, own)
                proj.findings.append(Finding("GRADLE_NOT_STATIC", f"apply plugin: {cls} at {sc.path}:{c.line} is a "
                                             "plugin class (build logic code); what it configures is not read",
                                             sc.path, c.line, c.line, proj.build_file, f"class-plugin|{cls}"))
            else:
                proj.findings.append(Finding("GRADLE_NOT_STATIC", f"apply plugin at {sc.path}:{c.line} names a "
                                             "computed plugin; it is not known", sc.path, c.line, c.line,
                                             proj.build_file, f"apply|{sc.path}|{c.line}"))
        if "from" in named:
            v = ev.value(named["from"])
            if isinstance(v, FileVal) and v.path is None:
                proj.findings.append(Finding("PATH_OUTSIDE_TREE", f"apply from: at {sc.path}:{c.line} names a script "
                                             "outside the repository; not read", sc.path, c.line, c.line,
                                             proj.build_file, f"from|{sc.path}|{c.line}"))
                return
            target = v.path if isinstance(v, FileVal) else join_inside(proj.dir, v) if isinstance(v, str) and \
                "://" not in v else None
            if isinstance(v, str) and v.startswith(b.root_dir + "/") and b.root_dir:
                target = v
            if target is None or target not in self.tree or not target.endswith((".gradle", ".gradle.kts")):
                proj.findings.append(Finding("GRADLE_NOT_STATIC", f"apply from: {v if isinstance(v, str) else '?'} "
                                             f"at {sc.path}:{c.line} is not a script of this repository; what it "
                                             "configures is not applied", sc.path, c.line, c.line, proj.build_file,
                                             f"from|{sc.path}|{c.line}"))
                return
            if len(proj.applied) < MAX_SCRIPT_PLUGINS:
                self._apply_script(b, proj, target, own, injected, sc.path, c.line)

    def _assign(self, b: GradleBuild, proj: GradleProject, sc: Script, st: Assign, ev: Eval,
                ctx: list[str]) -> None:
        chain = _chain(st.target)
        if chain is None:
            return
        path = _norm(ctx + chain)
        if not path:
            return  # `project = x`, `tasks = 1`: an assignment to the receiver itself means nothing here
        value = ev.value(st.value)
        if len(path) == 1 and not ctx and path[0] not in ("group", "version", "archivesBaseName",
                                                          "sourceCompatibility", "targetCompatibility", "description"):
            ev.locals[path[0]] = value  # a Groovy script binding variable
            return
        if st.op == "+=" and path[-1] == "srcDirs":
            self._source_dirs(proj, path[:-1], self._flat([value]), False, sc, st.line)
            return
        if path[-1] == "srcDirs" and "sourceSets" in path:
            self._source_dirs(proj, path[:-1], self._flat([value]), True, sc, st.line)
            return
        self._set(proj, path, value, sc, st.line, st.value)

    def _set(self, proj: GradleProject, path: list[str], value: Any, sc: Script, line: int,
             raw: Expr | None = None) -> None:
        if not path:
            return
        if path[:1] == ["ext"] and len(path) == 2:
            proj.ext[path[1]] = value
            return
        if path in (["group"], ["version"]):
            if isinstance(value, str) and not value.isprintable():
                value = unknown("control characters")
            if isinstance(value, str):
                if path[0] == "group":
                    proj.group_id, proj.group_source = value, "DECLARED"
                else:
                    proj.version = value
            else:
                proj.findings.append(Finding("PROPERTY_UNRESOLVED", f"{path[0]} at {sc.path}:{line} is computed "
                                             f"({describe(value)}); not known", sc.path, line, line,
                                             proj.build_file, f"{path[0]}|{sc.path}|{line}"))
            return
        if path in (["archivesBaseName"], ["base", "archivesName"]) and isinstance(value, str):
            proj.tasks.setdefault("jar", {})["archiveBaseName"] = value
            return
        if len(path) == 2 and path[1] == "enabled" and isinstance(value, bool):
            proj.tasks.setdefault(path[0], {})["enabled"] = value
            return
        if len(path) == 2 and path[1] in ("archiveBaseName", "baseName", "archiveName", "archiveFileName") \
                and isinstance(value, str):
            proj.tasks.setdefault(path[0], {})["archiveBaseName"] = value
            return
        if path[-1] in ("sourceCompatibility", "targetCompatibility", "languageVersion", "release"):
            if isinstance(value, Unknown) and isinstance(raw, Member) and raw.name.startswith("VERSION_"):
                value = raw.name  # JavaVersion.VERSION_17
            if isinstance(value, str) and len(value) <= 32 and value.isprintable() and (
                    path[-1] != "targetCompatibility" or proj.java_level is None):
                proj.java_level = str(value).replace("VERSION_", "").replace("_", ".")
            return
        if path[-2:] == ["options", "encoding"] and isinstance(value, str):
            proj.source_encoding = value

    def _source_dirs(self, proj: GradleProject, path: list[str], vals: list[Any], replace: bool, sc: Script,
                     line: int) -> None:
        # path: sourceSets, <set>, java|resources
        try:
            i = path.index("sourceSets")
        except ValueError:
            return
        rest = path[i + 1:]
        if len(rest) != 2 or rest[0] != "main" or rest[1] not in ("java", "resources"):
            return
        kind = rest[1]
        dirs: list[str] = []
        for v in vals:
            d = v.path if isinstance(v, FileVal) else join_inside(proj.dir, v) if isinstance(v, str) else None
            if d is None:
                proj.findings.append(Finding("GRADLE_NOT_STATIC" if not isinstance(v, (str, FileVal)) else
                                             "PATH_OUTSIDE_TREE", f"source directory at {sc.path}:{line} is computed "
                                             "or outside the repository; not read", sc.path, line, line,
                                             proj.build_file, f"srcdir|{sc.path}|{line}"))
                continue
            dirs.append(d)
        key = "source" if kind == "java" else "resource"
        cur = proj.tasks.setdefault("sourceSets", {}).get(key)
        if replace or cur is None:
            base = [] if replace else [join_inside(proj.dir, "src/main/java" if kind == "java" else
                                                   "src/main/resources") or ""]
            proj.tasks["sourceSets"][key] = base + dirs
        else:
            proj.tasks["sourceSets"][key] = cur + dirs

    def _dependencies(self, b: GradleBuild, proj: GradleProject, sc: Script, c: Call, conf: str,
                      ev: Eval) -> None:
        scope = self.scope_of(conf)
        span = Span(c.line, c.closure.end_line if c.closure is not None and c.closure.end_line else c.line)
        for a in c.args:
            if a.name is not None:
                continue
            self._dependency(b, proj, sc, ev.value(a.value), conf, scope, span, a.value)
        named = {a.name: ev.value(a.value) for a in c.args if a.name is not None}
        if "name" in named or "group" in named:
            g, n, v = named.get("group"), named.get("name"), named.get("version")
            if isinstance(g, str) and isinstance(n, str):
                self._add_dep(proj, sc, Coordinate(g, n, v if isinstance(v, str) else None,
                                                   named.get("classifier") if isinstance(named.get("classifier"), str)
                                                   else ""), conf, scope, span)
            else:
                self._unresolved_dep(proj, sc, span, scope, "map notation with computed group or name")

    def scope_of(self, conf: str) -> str:
        """The Maven scope a Gradle configuration maps to (build rules; ``test…`` configurations are
        test, unknown ones ``none``)."""
        if conf in self.scopes:
            return self.scopes[conf]
        if conf.startswith("test") or conf.endswith(("TestImplementation", "TestRuntimeOnly", "TestCompileOnly")):
            return "test"
        return "none"

    def _dependency(self, b: GradleBuild, proj: GradleProject, sc: Script, v: Any, conf: str, scope: str,
                    span: Span, e: Expr | None) -> None:
        if isinstance(v, list):
            for x in v:
                self._dependency(b, proj, sc, x, conf, scope, span, None)
            return
        if isinstance(v, tuple) and v and v[0] == "platform":
            inner = v[1]
            if isinstance(inner, str):
                inner = self._parse_coordinate(inner)
            if isinstance(inner, CatalogRef):
                inner = self._catalog_lib(b, inner)
            if isinstance(inner, Coordinate):
                self._add_dep(proj, sc, Coordinate(inner.group, inner.name, inner.version, "", "pom", True), conf,
                              "import", span)
                bom = f"{inner.group}:{inner.name}" + (f":{inner.version}" if inner.version else "")
                if bom not in proj.imported_boms:
                    proj.imported_boms.append(bom)
                return
            if isinstance(inner, ProjectRef):
                self._dependency(b, proj, sc, inner, conf, scope, span, None)
                return
            self._unresolved_dep(proj, sc, span, scope, "platform of a computed coordinate")
            return
        if isinstance(v, tuple) and v and v[0] == "testFixtures":
            self._dependency(b, proj, sc, v[1], conf, "test" if scope != "none" else scope, span, None)
            return
        if isinstance(v, str):
            coord = self._parse_coordinate(v)
            if coord is None:
                self._unresolved_dep(proj, sc, span, scope, f"{v!r} is not a group:name[:version] coordinate")
                return
            self._add_dep(proj, sc, coord, conf, scope, span)
            return
        if isinstance(v, Coordinate):
            self._add_dep(proj, sc, v, conf, scope, span)
            return
        if isinstance(v, CatalogRef):
            if v.parts[:1] == ("bundles",):
                seen = (v.catalog, v.parts, conf)
                if seen in proj.applied_bundles:
                    return  # the same bundle in the same configuration again adds nothing
                proj.applied_bundles.add(seen)
                cat = b.catalogs.get(v.catalog)
                members = cat.bundles.get(".".join(v.parts[1:])) if cat else None
                if members is None:
                    self._unresolved_dep(proj, sc, span, scope, f"bundle {v.catalog}.{'.'.join(v.parts)} is not in the "
                                         "version catalog")
                    return
                for m in sorted(set(members)):  # a bundle lists libraries (Gradle has no bundles of bundles)
                    lib = cat.libraries.get(m)
                    if lib is None:
                        self._unresolved_dep(proj, sc, span, scope, f"bundle member {m} is not a library of "
                                             f"{cat.path}")
                        continue
                    self._add_dep(proj, sc, Coordinate(lib[0], lib[1], lib[2]), conf, scope, span)
                return
            coord = self._catalog_lib(b, v)
            if coord is None:
                self._unresolved_dep(proj, sc, span, scope, f"{v.catalog}.{'.'.join(v.parts)} is not in the version catalog")
                return
            self._add_dep(proj, sc, coord, conf, scope, span)
            return
        if isinstance(v, ProjectRef):
            target = self.project_at(b, v.path if v.path.startswith("projects:") else self._abs(v.path,
                                                                                               proj.gradle_path))
            if target is None:
                self._unresolved_dep(proj, sc, span, scope, f"project {v.path.replace('projects:', 'projects.')} is not a "
                                     "project of this build")
                return
            dep = EffectiveDependency(target.group_id or "", target.artifact_id or "", target.version, scope, "jar", "",
                                      False, [], sc.path, span, "DECLARED" if target.version else "UNKNOWN",
                                      project=target.build_file, configuration=conf)
            self._push(proj, dep)
            return
        if isinstance(e, Call) and e.target is None and e.name in ("files", "fileTree", "gradleApi", "localGroovy",
                                                                    "gradleTestKit"):
            return
        self._unresolved_dep(proj, sc, span, scope, f"computed dependency ({describe(v)})")

    def _push(self, proj: GradleProject, dep: EffectiveDependency) -> None:
        """Add a dependency; a later declaration of the same one (same coordinates, configuration and
        project) replaces the earlier, in place."""
        key = (dep.group_id, dep.artifact_id, dep.type, dep.classifier, dep.configuration, dep.project)
        at = proj.dep_index.get(key)
        if at is not None:
            proj.dependencies[at] = dep
            return
        proj.dep_index[key] = len(proj.dependencies)
        proj.dependencies.append(dep)

    def _add_dep(self, proj: GradleProject, sc: Script, coord: Coordinate, conf: str, scope: str, span: Span) -> None:
        dep = EffectiveDependency(coord.group, coord.name, coord.version, scope, coord.type, coord.classifier, False,
                                  [], sc.path, span, "DECLARED" if coord.version else "UNKNOWN",
                                  configuration=conf)
        self._push(proj, dep)

    def _unresolved_dep(self, proj: GradleProject, sc: Script, span: Span, scope: str, why: str) -> None:
        if scope in ("test", "none"):
            return  # on no classpath a service's closure follows: nothing turns on it
        proj.findings.append(Finding("DEPENDENCY_UNRESOLVED", f"dependency at {sc.path}:{span.start}: {why}",
                                     sc.path, span.start, span.end, proj.build_file,
                                     f"gradle-dep|{sc.path}|{span.start}|{why}"))

    @staticmethod
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

    def _catalog_lib(self, b: GradleBuild, ref: CatalogRef) -> Coordinate | None:
        cat = b.catalogs.get(ref.catalog)
        if cat is None:
            return None
        hit = cat.libraries.get(".".join(ref.parts))
        if hit is None:
            return None
        g, n, v, _ = hit
        return Coordinate(g, n, v)

    def _finish(self, b: GradleBuild, proj: GradleProject) -> None:
        """Defaults once every script has been applied: group, roots, packaging."""
        if proj.group_id is None:
            parent = proj.gradle_path.rsplit(":", 1)[0]
            # Gradle's default group: the parent project's path under the root project's name
            root = b.projects[":"].name if ":" in b.projects else b.root_name
            proj.group_id = (root + parent.replace(":", ".")) if proj.gradle_path != ":" else root
            proj.group_source = "GRADLE_DEFAULT"
        ss = proj.tasks.get("sourceSets", {})
        src = ss.get("source") or [join_inside(proj.dir, "src/main/java") or ""]
        res = ss.get("resource") or [join_inside(proj.dir, "src/main/resources") or ""]
        proj.source_roots = sorted(set(src))
        proj.resource_roots = sorted(set(res))
        ids = proj.plugin_ids()
        has_children = proj.gradle_path in self._parents.get(b.root_dir, set())
        if "war" in ids:
            proj.packaging = "war"
        elif "java-platform" in ids or proj.build_logic:
            proj.packaging = "pom"
        elif ids & JAVA_PLUGINS or not has_children:
            proj.packaging = "jar"
        else:
            proj.packaging = "pom"  # an aggregating project that applies no Java plugin builds no jar

    def _local_plugins(self, b: GradleBuild) -> dict[str, str]:
        """Plugin id → script of the precompiled script plugins the build's own build logic defines:
        ``buildSrc/`` at the build's root and the builds it includes (``includeBuild``), under
        ``src/main/{groovy,kotlin}/[package/]NAME.gradle[.kts]`` (the id is the package path, dotted,
        and the name). A core plugin id is never a script of the repository."""
        cached = self._local_cache.get(b.root_dir)
        if cached is None:
            cached = {}
            roots = [join_inside(b.root_dir, "buildSrc")] + list(b.included)
            prefixes = tuple(r + "/" if r else "" for r in roots if r is not None)
            pat = re.compile(r"(?:^|/)src/main/(?:groovy|kotlin)/((?:[A-Za-z0-9_]+/)*)([A-Za-z0-9_.-]+)\.gradle(?:\.kts)?$")
            for p in self._plugin_scripts:
                if not p.startswith(prefixes):
                    continue
                m = pat.search(p)
                if m:
                    pid = m.group(1).replace("/", ".") + m.group(2)
                    if pid not in CORE_PLUGINS:
                        cached.setdefault(pid, p)
            self._local_cache[b.root_dir] = cached
        return cached

    def _apply_script(self, b: GradleBuild, proj: GradleProject, path: str, own: bool, injected, by: str,
                      line: int) -> None:
        """Apply the script at ``path`` (``apply from:``, a convention plugin) to ``proj``, as a script of
        its own: each script at most once per project (cycles and fan-outs end here)."""
        if path in proj.applied:
            return
        proj.applied.add(path)
        sc = self._script_for(proj, path, by, line)
        if sc is None:
            return
        proj.build_inputs = sorted(set(proj.build_inputs) | {path})
        self._script_errors(sc, proj.findings, proj.build_file)
        self._walk(b, proj, sc, sc.statements, own, injected, Eval(self, b, proj, sc, {}), [])

    def _script_for(self, proj: GradleProject, path: str, by: str, line: int) -> Script | None:
        """The script at ``path`` applied to ``proj`` (by ``by``:``line``); one that cannot be read
        is a finding (FILE_TOO_LARGE or FILE_UNREADABLE), never a silent drop."""
        sc = self.files.script(path)
        if sc is None:
            self._not_read(path, proj.findings, proj.build_file, f"applied at {by}:{line}")
            proj.build_inputs = sorted(set(proj.build_inputs) | {path})  # an input still, one not read
        return sc

    def _not_read(self, path: str, findings: list[Finding], module: str | None, what: str) -> None:
        self.unread.add(path)
        problem = self.files.problems.get(path, "unreadable")
        code = "FILE_TOO_LARGE" if problem.startswith("too_large") else "FILE_UNREADABLE"
        findings.append(Finding(code, f"{path} is not read ({problem}); {what}, what it declares is unknown",
                                path, 0, 0, module, f"not-read|{path}"))

    def _conventions(self, b: GradleBuild, proj: GradleProject, injected) -> None:
        """Apply the precompiled script plugins of the build's own build logic a project uses, as
        scripts of their own (a convention plugin is a build script applied to the project)."""
        local = self._local_plugins(b)
        done: set[str] = set()
        while len(done) < MAX_SCRIPT_PLUGINS:
            todo = [u for u in proj.plugins if u.id in local and u.id not in done]
            if not todo:
                return
            use = todo[0]
            done.add(use.id)
            self._apply_script(b, proj, local[use.id], use.own, injected, use.path, use.line)
