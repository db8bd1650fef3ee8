"""Which files belong to which module, what kind they are, and what is excluded and why (docs/gradle.md).

Every regular blob belongs to the module whose directory is its longest
prefix. Excluded, each counted with its reason: ``src/test/**`` and other test source sets
(``src/integrationTest/**``: a source-set directory naming a test; test_source),
``target/`` and ``build/`` at a module's top (build_output),
``*/generated-sources/**`` (generated_sources), ``.mvn/`` (maven_wrapper),
``.gradle/`` and ``gradle/wrapper/`` (gradle_wrapper), ``buildSrc/`` (build_logic), Kotlin
sources (kotlin_source: out of scope). Build files — poms, Gradle scripts, ``gradle.properties``,
version catalogs — are of kind BUILD.
Committed generator output under ``src/main`` is real source and is scanned.
Files of kinds diting does not read are excluded as ``not_analyzed_type`` or
``outside_source_root``; symlinks are never followed (``symlink``); a tree entry git refuses to
check out (``..``, ``.``, ``.git`` or an empty segment, an absolute path, two entries of one path) is
never read (``refused_path``). A subtree git cannot list (its object missing, or no tree) is one entry
of no kind, like a submodule: the scan reports it unread.
"""

from __future__ import annotations

from dataclasses import dataclass

from diting.source.git import TreeEntry

JAVA = "JAVA"
BUILD = "BUILD"
CONFIG = "CONFIG"

CONFIG_EXTENSIONS = (".properties", ".yml", ".yaml", ".xml")


@dataclass(frozen=True)
class FileEntry:
    """A blob of a module: ``kind`` (JAVA, BUILD, CONFIG) when diting reads it, else the
    ``excluded`` reason; ``gitlink`` entries stand for submodules, unlisted tree entries for the
    files of a subtree git cannot list (both of no kind and not excluded)."""

    path: str
    entry: TreeEntry
    module: str | None
    kind: str | None
    excluded: str | None


def is_spring_metadata(path: str) -> bool:
    """``META-INF/spring.factories`` and ``META-INF/spring/*.imports``: the auto-configuration
    lists that put classes into a Spring context (docs/scanning.md §12)."""
    return path.endswith("/META-INF/spring.factories") or path == "META-INF/spring.factories" or (
        path.endswith(".imports") and "META-INF/spring/" in path)


def exclusion_reason(rel: str) -> str | None:
    """Exclusion reason of a module-relative path, or None when it is in scope."""
    parts = rel.split("/")
    if parts[0] in ("target", "build"):
        return "build_output"
    if parts[0] == "buildSrc":
        return "build_logic"
    if parts[0] == "gradle" and len(parts) > 2 and parts[1] == "wrapper":
        return "gradle_wrapper"
    for i, p in enumerate(parts[:-1]):
        if p == ".mvn":
            return "maven_wrapper"
        if p == ".gradle":
            return "gradle_wrapper"
        if p in ("generated-sources", "generated-test-sources"):
            return "generated_sources"
        if p == "src" and i + 1 < len(parts) - 1 and "test" in parts[i + 1].lower():
            return "test_source"  # src/test, and test source sets: src/integrationTest, src/it-test …
    return None


def _under(path: str, root: str) -> bool:
    return not root or path.startswith(root + "/")


def classify(entries: list[TreeEntry], modules: dict[str, tuple[str, list[str], list[str]]],
             build_inputs: set[str] | None = None) -> list[FileEntry]:
    """Classify every tree entry.

    ``modules``: module dir → (module key, source roots, resource roots); ``build_inputs``: the
    build files beside the modules' own (Gradle settings, properties, catalogs, applied scripts).
    """
    build_inputs = build_inputs or set()
    dirs = sorted(modules)
    # longest-prefix ownership, computed by walking each path's ancestors
    dir_set = set(dirs)
    out: list[FileEntry] = []
    for e in entries:
        path = e.path
        owner = None
        d = path
        while True:
            d = d.rsplit("/", 1)[0] if "/" in d else ""
            if d in dir_set:
                owner = d
                break
            if not d:
                break
        if owner is None:
            out.append(FileEntry(path, e, None, None, "outside_modules"))
            continue
        pom_path, src_roots, res_roots = modules[owner]
        rel = path[len(owner) + 1:] if owner else path
        if e.refused is not None:
            out.append(FileEntry(path, e, pom_path, None, "refused_path"))
            continue
        if e.is_symlink:
            out.append(FileEntry(path, e, pom_path, None, "symlink"))
            continue
        if e.is_gitlink:
            out.append(FileEntry(path, e, pom_path, None, None))
            continue
        # a subtree git cannot list stands for the files below it: excluded as they would be, else unread
        reason = exclusion_reason(rel + "/-" if e.is_unlisted_tree else rel)
        if reason:
            out.append(FileEntry(path, e, pom_path, None, reason))
            continue
        if e.is_unlisted_tree:
            out.append(FileEntry(path, e, pom_path, None, None))
            continue
        if path == pom_path or path in build_inputs:
            out.append(FileEntry(path, e, pom_path, BUILD, None))
            continue
        if path.endswith((".kt", ".kts")) and not path.endswith(".gradle.kts"):
            out.append(FileEntry(path, e, pom_path, None, "kotlin_source"))
            continue
        if path.endswith(".java"):
            if any(_under(path, r) for r in src_roots):
                out.append(FileEntry(path, e, pom_path, JAVA, None))
            else:
                out.append(FileEntry(path, e, pom_path, None, "outside_source_root"))
            continue
        if is_spring_metadata(path) and any(_under(path, r) for r in res_roots):
            out.append(FileEntry(path, e, pom_path, CONFIG, None))
            continue
        if path.endswith(CONFIG_EXTENSIONS):
            webapp = f"{owner}/src/main/webapp" if owner else "src/main/webapp"
            if any(_under(path, r) for r in res_roots) or (path.endswith(".xml") and _under(path, webapp)):
                out.append(FileEntry(path, e, pom_path, CONFIG, None))
            else:
                out.append(FileEntry(path, e, pom_path, None, "outside_source_root"))
            continue
        out.append(FileEntry(path, e, pom_path, None, "not_analyzed_type"))
    return out
