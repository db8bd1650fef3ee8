"""What a Gradle statement configures, read from its syntax alone (docs/gradle.md): a receiver chain
as a dotted configuration path (``tasks.named("bootJar")`` → ``tasks``, ``bootJar``), the task a
``withType`` selects, and whether statements a static reader cannot follow (``if``, ``.each { }``)
touch what a build's structure turns on — then a GRADLE_NOT_STATIC finding says so. Used by
``inventory/gradle.py`` and ``inventory/gradle_settings.py``.
"""

from __future__ import annotations

from typing import Any

from diting.findings import Finding
from diting.inventory.gradle_ast import (Assign, Call, Closure, Control, Expr, ExprStmt, Index, Member, Name, Script,
                                        Stmt, Str)

#: statements naming one of these are what a build's structure turns on
MATTERS = {"include", "includeFlat", "includeBuild", "dependencies", "plugins", "apply", "sourceSets", "srcDir",
           "srcDirs", "bootJar", "bootWar", "allprojects", "subprojects", "archivesBaseName"}
#: assignments that matter (``version = …`` under an ``if``)
_MATTERS_ASSIGNED = {"group", "version"}
#: closure-taking calls that iterate or decide at run time
DYNAMIC_CALLS = {"each", "eachDir", "eachFile", "eachDirMatch", "eachFileRecurse", "forEach", "forEachIndexed",
                 "findAll", "filter", "collect", "map", "times", "upto", "matching",
                 "afterEvaluate", "beforeEvaluate", "projectsEvaluated", "whenReady", "whenTaskAdded",
                 "doFirst", "doLast", "eachWithIndex", "onEach", "also", "let", "run", "with",
                 "apply_closure"}
#: calls that look an element of a container up by its name (``tasks.named("bootJar")``)
NAMED_LOOKUPS = {"named", "getByName", "register", "create", "maybeCreate", "getting", "creating", "findByName",
                 "getAt"}
#: task types whose tasks a build switches by type (``tasks.withType<BootJar> { enabled = false }``)
_TASK_TYPES = {"BootJar": "bootJar", "BootWar": "bootWar", "Jar": "jar", "War": "war", "JavaCompile": "compileJava"}


def chain(e: Expr) -> list[str] | None:
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
        elif isinstance(cur, Call) and cur.name in NAMED_LOOKUPS and cur.args and isinstance(cur.args[0].value, Str) \
                and cur.args[0].value.literal is not None:
            out.append(cur.args[0].value.literal)
            if cur.target is None:
                break
            cur = cur.target
        elif isinstance(cur, Call) and cur.name in ("get", "configure", "all", "configureEach") and not cur.args \
                and cur.target is not None:
            cur = cur.target  # sourceSets.main.get().java; every element of what the receiver selects
        elif isinstance(cur, Call) and cur.name == "withType" and cur.target is not None:
            out.append(task_of(cur))
            cur = cur.target
        else:
            return None
    out.reverse()
    return out


def task_of(c: Call) -> str:
    """The task a ``withType(T)`` / ``withType<T>`` call selects, by its type's simple name
    (``withType`` for a type no task of interest has)."""
    names = list(c.type_args)
    if c.args and isinstance(c.args[0].value, (Name, Member)):
        names.append(c.args[0].value.name)
    for n in names:
        if n.rsplit(".", 1)[-1] in _TASK_TYPES:
            return _TASK_TYPES[n.rsplit(".", 1)[-1]]
    return "withType"


def normalize(path: list[str]) -> list[str]:
    """A configuration path without the receivers that do not change its meaning: ``project.``,
    ``tasks.``, ``this.``, and ``buildscript`` before ``ext`` (``buildscript { project.ext { … } }``
    too); ``extra`` reads as ``ext``. Returns a new list."""
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


def mentions(stmts: list[Stmt], names: set[str]) -> bool:
    """True when a statement of ``stmts`` (or of a closure or body inside them) calls one of
    ``names`` or assigns to a path through one of them — what a build's structure turns on. Values
    only read (``classpath = sourceSets.x.runtimeClasspath``) do not count. With ``names``
    :data:`MATTERS` itself, assigning ``group`` or ``version`` counts too."""
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
            path = chain(x.target) if x.target is not None else []
            if x.name in names or any(n in names for n in path or []):
                return True
            stack.extend(a.value for a in x.args if isinstance(a.value, Call))  # include(project(...)) …
            if x.closure is not None:
                stack.extend(x.closure.body)
        elif isinstance(x, Assign):
            path = chain(x.target) or []
            if any(n in names for n in path) or (path[:1] and path[0] in _MATTERS_ASSIGNED and names is MATTERS):
                return True
        elif isinstance(x, Control):
            for body in x.bodies:
                stack.extend(body)
        elif isinstance(x, Closure):
            stack.extend(x.body)
    return False


def not_static(sc: Script, line: int, construct: str, bodies: list[list[Stmt]], names: set[str],
               module: str | None, key: str) -> Finding | None:
    """The GRADLE_NOT_STATIC finding (of ``module``, keyed ``key``) for ``construct`` at ``sc``:``line``
    when one of its ``bodies`` :func:`mentions` one of ``names``; None when what it hides does not matter."""
    if not any(mentions(body, names) for body in bodies):
        return None
    return Finding("GRADLE_NOT_STATIC", f"{construct.strip()} at {sc.path}:{line} decides at build time what it "
                   "configures; what it holds is not applied", sc.path, line, line, module, key)
