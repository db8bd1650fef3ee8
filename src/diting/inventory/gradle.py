"""The Gradle project model, read statically: nothing from the build is ever run (docs/gradle.md).

The builds and the projects they declare come from their settings (``inventory/gradle_settings.py``);
:class:`GradleModel` configures each declared project into a :class:`GradleProject`
(``inventory/gradle_project.py``). Each project's model is what its build scripts declare, evaluated in Gradle's order as far as a
static reader can follow it: ``gradle.properties`` of the build and of the project, then the
``allprojects``/``subprojects`` blocks of its ancestors, the ``project(':x') { }`` /
``configure(project(':x')) { }`` blocks naming it, script plugins applied with ``apply from:``, then its
own script. Read are: ``group``, ``version``, ``ext``/``extra`` properties, ``def``/``val`` locals,
string templates, plugins (``plugins { id … }``, ``apply plugin:``, catalog aliases, ``apply false``),
dependencies (``inventory/gradle_deps.py``), source sets (``srcDirs =`` replaces, ``srcDir``/``srcDirs(…)``
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
from typing import Any, Callable

from diting.findings import Finding
from diting.inventory.gradle_ast import (Assign, Call, Control, Decl, Definition, Expr, ExprStmt, Member, Name, Script,
                                        Stmt, Str)
from diting.inventory.gradle_chains import (DYNAMIC_CALLS, MATTERS, NAMED_LOOKUPS, chain, normalize, not_static,
                                           task_of)
from diting.inventory.gradle_deps import DependencyReader, resolve_project_dependencies
from diting.inventory.gradle_eval import (MISSING, CatalogRef, Eval, FileVal, ProjectRef, Unknown, describe, flatten,
                                         unknown)
from diting.inventory.gradle_files import GradleFiles, script_errors
from diting.inventory.gradle_project import GradleProject, PluginUse
from diting.inventory.gradle_settings import BUILD_FILES, GradleBuild, ProjectDecl, SettingsReader, absolute_path
from diting.inventory.module import Span
from diting.source.paths import join_inside, parent_dir

#: plugins that make a project a Java project (packaging jar)
JAVA_PLUGINS = {"java", "java-library", "application", "groovy", "war", "org.springframework.boot",
                "org.jetbrains.kotlin.jvm", "kotlin", "scala", "io.spring.dependency-management", "java-platform"}
_SELECTORS = {"allprojects", "subprojects"}
MAX_SCRIPT_PLUGINS = 32
#: script applications (``apply from:``, convention plugins, injected blocks) per build
MAX_APPLICATIONS = 100000
#: Gradle's core plugins: a script of the repository never stands for one
CORE_PLUGINS = {"java", "java-library", "java-platform", "java-test-fixtures", "application", "war", "ear", "groovy",
                "scala", "base", "jacoco", "maven-publish", "ivy-publish", "idea", "eclipse", "checkstyle", "pmd",
                "codenarc", "signing", "distribution", "antlr", "jvm-test-suite", "java-gradle-plugin",
                "groovy-gradle-plugin", "kotlin-dsl", "version-catalog", "test-report-aggregation",
                "jacoco-report-aggregation", "project-report", "build-dashboard", "help-tasks", "reporting-base",
                "publishing", "wrapper", "init"}


class GradleModel:
    """Every Gradle build of the repository and the effective model of each project.

    ``read``: path → (text, encoding, problem) for a repository file; ``tree``: every regular
    path of the tree; ``scopes``: Gradle configuration → Maven scope (build rules);
    ``root_name``: the name of the repository's root directory (Gradle's default root project name);
    ``candidates``: the settings files and build scripts of the tree. Built on construction:
    ``builds`` (root directory → :class:`GradleBuild`), ``modules`` (key → :class:`GradleProject`),
    ``aggregated_by``, ``findings`` of the builds and ``unread`` build files."""

    def __init__(self, read: Callable[[str], tuple[str | None, str, str | None]], tree: set[str],
                 scopes: dict[str, str], build_logic_plugins: set[str], root_name: str,
                 candidates: list[str], gitlinks: set[str] | None = None, symlinks: set[str] | None = None) -> None:
        self.files = GradleFiles(read, tree)
        self.tree = tree
        self.scopes = scopes
        self.deps = DependencyReader(scopes, self.project_at)
        self.build_logic_plugins = build_logic_plugins
        self.root_name = root_name
        self.builds: dict[str, GradleBuild] = {}
        self.modules: dict[str, GradleProject] = {}
        self.by_build_path: dict[tuple[str, str], str] = {}
        self.findings: list[Finding] = []
        self.aggregated_by: dict[str, str] = {}
        self._applications = 0
        #: build files that exist but could not be read (too large, unreadable)
        self.unread: set[str] = self.files.unread
        self._local_cache: dict[str, dict[str, str]] = {}
        self._accessors: dict[str, dict[tuple[str, str], list[str]]] = {}
        self._build_keys: dict[str, list[str]] = {}
        self._build_paths: dict[str, list[str]] = {}
        self._parents: dict[str, set[str]] = {}
        self.gitlinks = set(gitlinks or ())
        self.symlinks = set(symlinks or ())
        self._plugin_scripts = sorted(p for p in tree if p.endswith((".gradle", ".gradle.kts")) and "/src/main/" in
                                      f"/{p}")
        SettingsReader(self).discover(candidates)
        for root in sorted(self.builds):
            self._configure(self.builds[root])
            self.files.scripts.clear()  # syntax trees are large: a build's are dropped once it is read

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
        """The project whose child ``p`` is in its build (None for a root project or an unread parent)."""
        if p.gradle_path == ":":
            return None
        parent = p.gradle_path.rsplit(":", 1)[0] or ":"
        key = self.by_build_path.get((p.build_root, parent))
        return self.modules.get(key) if key else None

    def project_at(self, b: GradleBuild, gpath: str) -> GradleProject | None:
        """The project of build ``b`` at Gradle path ``gpath`` (``projects:a.b`` names it by its type-safe
        accessor); None when the build has no such project, or none read yet."""
        if gpath.startswith("projects:"):
            return self._accessor(b, gpath[len("projects:"):])
        key = self.by_build_path.get((b.root_dir, absolute_path(gpath, ":")))
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
            key = self._create_project(b, gpath, decl, used_dirs)
            if key is not None:
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
        resolve_project_dependencies(projects, self.modules)

    def _create_project(self, b: GradleBuild, gpath: str, decl: ProjectDecl,
                        used_dirs: dict[str, str]) -> str | None:
        """The project ``gpath`` of build ``b`` as its settings declare it, with its properties, group and
        version from ``gradle.properties``: its key, or None when it is not read (``used_dirs``: directory →
        the project already there)."""
        if decl.dir is None:
            return None
        special = self._special_dir(decl.dir)
        if special is not None:
            self.findings.append(Finding("MODULE_SKIPPED", f"project {gpath}'s directory {decl.dir} {special}; "
                                         "not read", decl.declared_in, decl.line, decl.line, None,
                                         f"special|{gpath}"))
            return None
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
            return None
        if key in self.modules:
            return None
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
            proj.properties = self.files.properties(own_props, self.findings)
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
        return key

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
            script_errors(sc, proj.findings, proj.build_file)
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
        found = not_static(sc, line, construct, bodies, MATTERS, proj.build_file, f"dynamic|{sc.path}|{line}")
        if found is not None:
            proj.findings.append(found)

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

    def _plugins_entry(self, b: GradleBuild, proj: GradleProject, sc: Script, c: Call, own: bool,
                       ev: Eval) -> None:
        """A ``plugins { }`` entry, possibly a chain: ``id 'x' version 'y' apply false``."""
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

    @staticmethod
    def _receiver(c: Call) -> tuple[list[str] | None, str]:
        """The receiver path of call ``c`` (None when it is computed) and the name it configures."""
        recv = chain(c.target) if c.target is not None else []
        if c.target is not None and isinstance(c.target, Str) and c.name == "call":  # Kotlin "implementation"(…)
            recv, name = [], c.target.literal or ""
        elif c.name in NAMED_LOOKUPS and c.args and isinstance(c.args[0].value, Str) and c.args[0].value.literal:
            name = c.args[0].value.literal  # tasks.named("bootJar") { … }, sourceSets.getByName("main") { … }
        elif c.name == "withType":
            name = task_of(c)  # tasks.withType<BootJar> { … }
        elif c.name in ("all", "configureEach") and not c.args and c.target is not None:
            recv = chain(c.target)  # tasks.withType(Jar).configureEach { … }: the selection itself
            name = recv.pop() if recv else c.name
        else:
            name = c.name
        return recv, name

    def _call(self, b: GradleBuild, proj: GradleProject, sc: Script, c: Call, own: bool, injected,
              ev: Eval, ctx: list[str]) -> None:
        if ctx[-1:] == ["plugins"]:
            self._plugins_entry(b, proj, sc, c, own, ev)
            return
        recv, name = self._receiver(c)
        if recv is None:
            # a call on a computed receiver: configure(subprojects.findAll {…}) and friends
            if c.closure is not None:
                self._dynamic_to(proj, sc, c.line, f".{c.name} {{ }}", [c.closure.body])
            return
        path = normalize(ctx + recv + [name])
        head = path[-1] if path else name
        # scope switches
        if not recv and name in _SELECTORS and c.closure is not None and not c.args:
            if self._applications <= MAX_APPLICATIONS:
                self._inject(b, proj, self._targets(b, proj, name), sc, c.closure.body, False, injected, ev)
            return
        if not recv and name in ("project", "configure") and c.closure is not None and c.args:
            targets = self._selected(b, proj, ev, c.args[0].value)
            if targets is None:
                self._dynamic_to(proj, sc, c.line, f"{name}(…) {{ }}", [c.closure.body])
                return
            self._inject(b, proj, targets, sc, c.closure.body, len(targets) == 1, injected, ev)
            return
        if c.closure is not None and name in DYNAMIC_CALLS:
            self._dynamic_to(proj, sc, c.line, f".{name} {{ }}", [c.closure.body])
            return
        if not recv and name == "apply" or path[:1] == ["apply"] and head == "plugin":
            self._apply_call(b, proj, sc, c, own, injected, ev)
            if c.closure is not None:
                self._walk(b, proj, sc, c.closure.body, own, injected, ev, ["apply"])
            return
        if path[:2] == ["dependencies", "add"] and c.args:
            conf = ev.value(c.args[0].value)
            if isinstance(conf, str):
                self.deps.declare(b, proj, sc, Call(c.line, None, conf, c.args[1:], c.closure), conf, ev)
            return
        if path[:1] == ["dependencies"] and len(path) == 2:
            self.deps.declare(b, proj, sc, c, head, ev)
            return
        if path[:1] == ["dependencies"] and name == "constraints":
            return
        if head in ("group", "version") and len(path) == 1 and c.args and not c.closure:
            self._set(proj, [head], ev.value(c.args[0].value), sc, c.line)
            return
        if head in ("srcDir", "srcDirs", "setSrcDirs") and "sourceSets" in path:
            vals = flatten([ev.value(a.value) for a in c.args])
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
            self.deps.declare_value(b, proj, sc, ("platform", ev.value(c.args[0].value)), "dependencyManagement",
                                    "import", Span(c.line, c.line), None)
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
                t = self.project_at(b, absolute_path(x.path, proj.gradle_path) if not x.path.startswith("projects:")
                                    else x.path)
                if t is None:
                    return None
                out.append(t)
            elif isinstance(x, str):
                t = self.project_at(b, absolute_path(x, proj.gradle_path))
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
            elif isinstance(e, (Name, Member)) and chain(e):
                # apply plugin: SomePluginClass — a class of buildSrc or of a plugin jar
                cls = ".".join(chain(e) or [])
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
        recv = chain(st.target)
        if recv is None:
            return
        path = normalize(ctx + recv)
        if not path:
            return  # `project = x`, `tasks = 1`: an assignment to the receiver itself means nothing here
        value = ev.value(st.value)
        if len(path) == 1 and not ctx and path[0] not in ("group", "version", "archivesBaseName",
                                                          "sourceCompatibility", "targetCompatibility", "description"):
            ev.locals[path[0]] = value  # a Groovy script binding variable
            return
        if st.op == "+=" and path[-1] == "srcDirs":
            self._source_dirs(proj, path[:-1], flatten([value]), False, sc, st.line)
            return
        if path[-1] == "srcDirs" and "sourceSets" in path:
            self._source_dirs(proj, path[:-1], flatten([value]), True, sc, st.line)
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
        script_errors(sc, proj.findings, proj.build_file)
        self._walk(b, proj, sc, sc.statements, own, injected, Eval(self, b, proj, sc, {}), [])

    def _script_for(self, proj: GradleProject, path: str, by: str, line: int) -> Script | None:
        """The script at ``path`` applied to ``proj`` (by ``by``:``line``); one that cannot be read
        is a finding (FILE_TOO_LARGE or FILE_UNREADABLE), never a silent drop."""
        sc = self.files.script(path)
        if sc is None:
            self.files.not_read(path, proj.findings, proj.build_file, f"applied at {by}:{line}")
            proj.build_inputs = sorted(set(proj.build_inputs) | {path})  # an input still, one not read
        return sc

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
