"""Values of Gradle scripts and their static evaluation: project and file references, catalog
references, coordinates, unknowns, version catalogs, and :class:`Eval`, which evaluates one
script's expressions for one project without side effects (docs/gradle.md). Used by ``inventory/gradle.py``,
``inventory/gradle_settings.py`` and ``inventory/gradle_deps.py``.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from diting.findings import Finding

from diting.inventory.gradle_ast import (Call, Expr, Index, ListLit, MapLit, Member, Name, Num, Op, Opaque, Script,
                                        Str)
from diting.inventory.gradle_script import parse_expression
from diting.source.paths import join_inside

if TYPE_CHECKING:
    from diting.inventory.gradle import GradleModel
    from diting.inventory.gradle_project import GradleProject
    from diting.inventory.gradle_settings import GradleBuild


#: evaluation of one expression nests at most this deep (then it is unknown)
MAX_EVAL_DEPTH = 64
#: an evaluated string longer than this, or a list with more items, is unknown
MAX_VALUE_CHARS = 65536
MAX_LIST_ITEMS = 10000


@dataclass(frozen=True)
class ProjectRef:
    """A project a script names (``project(':x')``, ``projects.x``: a path under ``projects:``)."""

    path: str  # a Gradle project path (absolute, ':a:b') or a relative one to resolve


@dataclass(frozen=True)
class FileVal:
    """A file or directory a script names (``file('x')``), as a repository path."""

    path: str | None  # repository-relative; None when it leaves the tree


@dataclass(frozen=True)
class CatalogRef:
    """A reference into a version catalog (``libs.spring.web`` → ``libs``, (``spring``, ``web``))."""

    catalog: str
    parts: tuple[str, ...]


@dataclass(frozen=True)
class Coordinate:
    """A dependency coordinate (``group:name[:version][:classifier][@type]``); ``platform`` for a BOM import."""

    group: str
    name: str
    version: str | None
    classifier: str = ""
    type: str = "jar"
    platform: bool = False


class Unknown:
    """A value the static reader cannot know; ``why`` says what it depends on."""

    def __init__(self, why: str) -> None:
        self.why = why

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"<unknown {self.why}>"


def unknown(why: str) -> Unknown:
    """An :class:`Unknown` that depends on ``why``."""
    return Unknown(why)


def leaves(v: list[Any]) -> int:
    """How many leaves nested lists hold, every shared sublist counted again; counting stops past
    :data:`MAX_LIST_ITEMS` (so the cost is bounded whatever the nesting)."""
    n = 0
    stack = [v]
    while stack and n <= MAX_LIST_ITEMS:
        cur = stack.pop()
        for x in cur:
            if isinstance(x, list):
                stack.append(x)
            n += 1
    return n


def flatten(values: list[Any]) -> list[Any]:
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


def describe(v: Any) -> str:
    """A value as a diagnostic names it: what an unknown depends on, else a short text."""
    text = v.why if isinstance(v, Unknown) else str(v)
    return text if len(text) <= 80 else text[:77] + "…"


#: no property of that name
MISSING = object()


@dataclass
class Catalog:
    """A version catalog: libraries, bundles and plugins by normalised alias (``spring.boot``)."""

    path: str
    libraries: dict[str, tuple[str, str, str | None, int]] = field(default_factory=dict)
    bundles: dict[str, list[str]] = field(default_factory=dict)
    plugins: dict[str, tuple[str, int]] = field(default_factory=dict)
    versions: dict[str, str] = field(default_factory=dict)


def _alias(name: str) -> str:
    """Gradle's accessor form of an alias: ``-``, ``_`` and ``.`` are one separator; case is kept
    (``spring-boot`` and ``spring_boot`` are ``libs.spring.boot``)."""
    return re.sub(r"[-_.]+", ".", name).strip(".")


def _toml_lines(text: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for i, line in enumerate(text.split("\n"), 1):
        m = re.match(r"\s*\"?([A-Za-z0-9_.-]+)\"?\s*=", line)
        if m and m.group(1) not in out:
            out[m.group(1)] = i
    return out


def read_catalog(path: str, text: str, findings: list[Finding]) -> Catalog:
    """Read ``libs.versions.toml`` (TOML, never executed). A malformed file gives a finding and an
    empty catalog."""
    cat = Catalog(path)
    try:
        doc = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError, RecursionError) as exc:
        findings.append(Finding("GRADLE_NOT_STATIC", f"version catalog {path} is not valid TOML ({exc}); its "
                                "entries are unknown", path, 0, 0, None, "catalog|toml"))
        return cat
    lines = _toml_lines(text)

    def version_of(v: Any) -> str | None:
        if isinstance(v, str):
            return v
        if isinstance(v, dict):
            if "ref" in v:
                return cat.versions.get(_alias(str(v["ref"])))
            for k in ("strictly", "require", "prefer"):
                if isinstance(v.get(k), str):
                    return v[k]
        return None

    for k, v in (doc.get("versions") or {}).items() if isinstance(doc.get("versions"), dict) else ():
        ver = version_of(v) if not isinstance(v, dict) or "ref" not in v else None
        if ver is not None:
            cat.versions[_alias(str(k))] = ver
    libs = doc.get("libraries") if isinstance(doc.get("libraries"), dict) else {}
    for k, v in libs.items():
        line = lines.get(k, 0)
        if _alias(k) in cat.libraries:
            findings.append(Finding("GRADLE_NOT_STATIC", f"version catalog {path}: alias {k} is the accessor "
                                    f"libs.{_alias(k)} of another alias too (Gradle refuses the catalog); the first "
                                    "is kept", path, line, line, None, f"catalog-alias|{k}"))
            continue
        if isinstance(v, str):
            parts = v.split(":")
            if len(parts) >= 2:
                cat.libraries[_alias(k)] = (parts[0], parts[1], parts[2] if len(parts) > 2 else None, line)
        elif isinstance(v, dict):
            module = v.get("module")
            if isinstance(module, str) and ":" in module:
                g, n = module.split(":", 1)
            else:
                g, n = v.get("group"), v.get("name")
            if not (isinstance(g, str) and isinstance(n, str)):
                continue
            ver = version_of(v.get("version")) if "version" in v else (
                cat.versions.get(_alias(str(v["version.ref"]))) if "version.ref" in v else None)
            if ver is None and isinstance(v.get("version"), dict) and "ref" in v["version"]:
                ver = cat.versions.get(_alias(str(v["version"]["ref"])))
            ref = v.get("version.ref") or (v["version"].get("ref") if isinstance(v.get("version"), dict) else None)
            if ref is not None and ver is None:
                findings.append(Finding("PROPERTY_UNRESOLVED", f"version catalog {path}: library {k} refers to version "
                                        f"{ref!r}, which [versions] does not define", path, line, line, None,
                                        f"catalog-ref|{k}"))
            cat.libraries[_alias(k)] = (g, n, ver, line)
    bundles = doc.get("bundles") if isinstance(doc.get("bundles"), dict) else {}
    for k, v in bundles.items():
        if isinstance(v, list):
            if len(v) > MAX_LIST_ITEMS:
                findings.append(Finding("GRADLE_NOT_STATIC", f"version catalog {path}: bundle {k} lists {len(v)} "
                                        f"libraries (more than {MAX_LIST_ITEMS}); not read", path, lines.get(k, 0),
                                        lines.get(k, 0), None, f"catalog-bundle|{k}"))
                continue
            cat.bundles[_alias(k)] = [_alias(str(x)) for x in v]
    plugins = doc.get("plugins") if isinstance(doc.get("plugins"), dict) else {}
    for k, v in plugins.items():
        pid = v.split(":", 1)[0] if isinstance(v, str) else v.get("id") if isinstance(v, dict) else None
        if isinstance(pid, str):
            cat.plugins[_alias(k)] = (pid, lines.get(k, 0))
    return cat


class Eval:
    """Evaluates expressions of one script for one project (values, never side effects)."""

    def __init__(self, model: "GradleModel", build: GradleBuild, project: GradleProject | None, script: Script,
                 locals_: dict[str, Any]) -> None:
        self.m = model
        self.b = build
        self.p = project
        self.s = script
        self.locals = locals_
        self.depth = 0

    def prop(self, name: str) -> Any:
        """A property by name: locals, the project's ext (and its ancestors'), then gradle.properties."""
        if name in self.locals:
            return self.locals[name]
        if self.p is not None:
            found = self.m.project_property(self.p, name)
            if found is not MISSING:
                return found
            if name == "name":
                return self.p.artifact_id
            if name in ("version", "group"):
                v = self.p.version if name == "version" else self.p.group_id
                return v if v is not None else unknown(name)
            if name in ("projectDir", "buildDir"):
                return FileVal(self.p.dir) if name == "projectDir" else FileVal(join_inside(self.p.dir, "build"))
        if name in self.b.properties:
            return self.b.properties[name]
        if name in ("rootDir", "settingsDir"):
            return FileVal(self.b.root_dir)
        return unknown(name)

    def value(self, e: Expr | None) -> Any:
        """The value of ``e``: evaluation nests at most :data:`MAX_EVAL_DEPTH` deep, and a string or
        list longer than :data:`MAX_VALUE_CHARS` is unknown (template and concatenation bombs)."""
        if self.depth >= MAX_EVAL_DEPTH:
            return unknown("nested too deeply")
        self.depth += 1
        try:
            v = self._value(e)
        finally:
            self.depth -= 1
        if isinstance(v, str) and len(v) > MAX_VALUE_CHARS or isinstance(v, list) and leaves(v) > MAX_LIST_ITEMS:
            return unknown("too long")
        return v

    def _value(self, e: Expr | None) -> Any:
        if e is None:
            return unknown("nothing")
        if isinstance(e, Str):
            return self.string(e)
        if isinstance(e, Num):
            return e.text
        if isinstance(e, Name):
            if e.name in ("true", "false"):
                return e.name == "true"
            if e.name == "null":
                return None
            if e.name in ("rootProject", "project"):
                return ProjectRef(":" if e.name == "rootProject" else (self.p.gradle_path if self.p else ":"))
            if e.name in self.b.catalogs:
                return CatalogRef(e.name, ())
            if e.name == "projects":
                return ProjectRef("projects:")
            return self.prop(e.name)
        if isinstance(e, ListLit):
            return [self.value(x) for x in e.items]
        if isinstance(e, MapLit):
            return {a.name: self.value(a.value) for a in e.entries if a.name}
        if isinstance(e, Member):
            return self.member(self.value(e.target), e.name, e)
        if isinstance(e, Index):
            base = self.value(e.target)
            key = self.value(e.key)
            if isinstance(key, str):
                return self.member(base, key, e)
            return unknown("index")
        if isinstance(e, Op):
            if e.op == "+" and len(e.operands) == 2:
                a, b = (self.value(x) for x in e.operands)
                if isinstance(a, str) and isinstance(b, str):
                    return a + b if len(a) + len(b) <= MAX_VALUE_CHARS else unknown("too long")
                if isinstance(a, FileVal) and isinstance(b, str) and a.path is not None:
                    return FileVal(join_inside(a.path, b.lstrip("/")))
                if isinstance(a, list) and isinstance(b, list):
                    return a + b if len(a) + len(b) <= MAX_LIST_ITEMS else unknown("too long")
            if e.op == "?:" and len(e.operands) == 2:
                a = self.value(e.operands[0])
                return a if not isinstance(a, Unknown) and a is not None else self.value(e.operands[1])
            if e.op in ("as",) and e.operands:
                return self.value(e.operands[0])
            return unknown(f"expression {e.op}")
        if isinstance(e, Call):
            return self.call(e)
        if isinstance(e, Opaque) and e.text == "new" and len(e.inner) == 2:
            base, rel = (self.value(x) for x in e.inner)
            if isinstance(base, FileVal) and isinstance(rel, str) and base.path is not None:
                return FileVal(join_inside(base.path, rel))
        return unknown(type(e).__name__)

    def string(self, e: Str) -> Any:
        """A string's value; one that starts with a directory template (``"$rootDir/x"``) is that file."""
        out: list[str] = []
        base: FileVal | None = None
        for i, part in enumerate(e.parts):
            if isinstance(part, str):
                out.append(part)
                continue
            inner = parse_expression(part[1])
            v = self.value(inner) if inner is not None else unknown(part[1])
            if isinstance(v, FileVal) and i == 0:
                base = v
                continue
            if isinstance(v, FileVal):
                v = v.path
            if isinstance(v, bool):
                v = str(v).lower()
            if not isinstance(v, str):
                return unknown(part[1])
            out.append(v)
            if sum(map(len, out)) > MAX_VALUE_CHARS:
                return unknown("too long")
        if base is not None:
            return FileVal(join_inside(base.path, "".join(out).lstrip("/")) if base.path is not None else None)
        return "".join(out)

    def member(self, base: Any, name: str, e: Expr) -> Any:
        """The member ``name`` of the value ``base`` (of expression ``e``): a map entry, a catalog or
        project path one step on, a project's property, a file's path; unknown otherwise."""
        if isinstance(base, dict):
            return base.get(name, unknown(name))
        if isinstance(base, CatalogRef):
            return CatalogRef(base.catalog, base.parts + (name,))
        if isinstance(base, ProjectRef):
            if base.path == "projects:" or base.path.startswith("projects:"):
                return ProjectRef(base.path + ("." if not base.path.endswith(":") else "") + name)
            target = self.m.project_at(self.b, base.path)
            if name in ("ext", "extra", "extensions"):
                return ProjectRef(base.path + "#ext")
            if base.path.endswith("#ext"):
                tp = self.m.project_at(self.b, base.path[:-4])
                found = self.m.project_property(tp, name) if tp is not None else MISSING
                return found if found is not MISSING else self.b.properties.get(name, unknown(name))
            if name in ("projectDir", "rootDir"):
                d = target.dir if target is not None and name == "projectDir" else self.b.root_dir
                return FileVal(d)
            if name == "name":
                return target.artifact_id if target else unknown("name")
            if name in ("version", "group"):
                v = (target.version if name == "version" else target.group_id) if target else None
                return v if v is not None else unknown(name)
            found = self.m.project_property(target, name) if target is not None else MISSING
            return found if found is not MISSING else self.b.properties.get(name, unknown(name))
        if isinstance(base, FileVal):
            if name in ("path", "absolutePath", "canonicalPath"):
                return base.path
            return unknown(name)
        if isinstance(base, Unknown) and isinstance(e, Member) and isinstance(e.target, Name) and \
                e.target.name == "ext":
            return self.prop(name)
        return unknown(name)

    def call(self, c: Call) -> Any:
        """The value of the call ``c`` where a static reader knows it (``project``, ``file``, ``platform``,
        ``listOf``, property lookups …); unknown otherwise."""
        args = [self.value(a.value) for a in c.args if a.name is None]
        named = {a.name: self.value(a.value) for a in c.args if a.name is not None}
        if c.target is None:
            if c.name == "project":
                p = args[0] if args else named.get("path")
                if isinstance(p, str):
                    return ProjectRef(p)
                if not c.args:
                    return ProjectRef(self.p.gradle_path if self.p else ":")
                return unknown("project path")
            if c.name in ("file", "files", "layout.projectDirectory.dir"):
                base = self.p.dir if self.p is not None else self.b.root_dir
                if args and isinstance(args[0], str):
                    return FileVal(join_inside(base, args[0]))
                if args and isinstance(args[0], FileVal):
                    return args[0]
                return unknown("file")
            if c.name in ("property", "findProperty") and args and isinstance(args[0], str):
                return self.prop(args[0])
            if c.name in ("platform", "enforcedPlatform"):
                inner = args[0] if args else unknown("platform")
                return ("platform", inner)
            if c.name == "testFixtures":
                return ("testFixtures", args[0] if args else unknown("testFixtures"))
            if c.name == "kotlin" and args and isinstance(args[0], str):
                return Coordinate("org.jetbrains.kotlin", f"kotlin-{args[0]}", args[1] if len(args) > 1 and
                                  isinstance(args[1], str) else None)
            if c.name in ("listOf", "arrayOf", "setOf", "mutableListOf"):
                return args
            if c.name in ("mapOf", "mutableMapOf"):
                return unknown("map")
            return unknown(f"{c.name}()")
        target = self.value(c.target)
        if c.name in ("get", "getOrElse", "orNull", "toString", "trim") and not isinstance(target, Unknown):
            return target
        if c.name in ("get", "getAt") and args and isinstance(args[0], str):
            return self.member(target, args[0], c)
        if c.name in ("property", "findProperty") and args and isinstance(args[0], str) and isinstance(target,
                                                                                                       ProjectRef):
            return self.member(target, args[0], c)
        if c.name == "gradleProperty" and args and isinstance(args[0], str):
            return self.b.properties.get(args[0], unknown(args[0]))
        if c.name == "file" and isinstance(target, ProjectRef):
            tp = self.m.project_at(self.b, target.path)
            if tp is not None and args and isinstance(args[0], str):
                return FileVal(join_inside(tp.dir, args[0]))
        if c.name == "dir" and isinstance(target, Unknown) and args and isinstance(args[0], str):
            base = self.p.dir if self.p is not None else self.b.root_dir
            return FileVal(join_inside(base, args[0]))
        if c.name == "of" and args:
            return args[0]
        return unknown(f"{c.name}()")
