"""A Gradle project as a module of the inventory (docs/gradle.md): the :class:`BuildModule` with what
its build scripts declared — Gradle path, plugins, task switches, ``ext`` and ``gradle.properties``
properties — and what that makes of it (evidence, deployability, resource filtering). Filled in by
``inventory/gradle.py``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from diting.inventory.module import BuildEvidence, BuildModule, DeployableBasis


@dataclass
class PluginUse:
    """A plugin a project applies, and where (script path and line)."""

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
        """The project's build script whole, or the settings line that declares a project without one."""
        if self.script is not None:
            return BuildEvidence(self.script, self.lines or [""], self.encoding, 1, 1)
        path, line = self.declared_at
        return BuildEvidence(path, self.lines or [""], self.encoding, line or 1, line or 1)

    def version_matches(self, version: str) -> bool:
        """A project without a version is Gradle's ``unspecified``."""
        return (self.version or "unspecified") == version

    def extra_attributes(self) -> dict[str, object]:
        """The Gradle attributes of the MODULE record: path, build, DSL, archive name, plugins, group source."""
        return {"gradle_path": self.gradle_path, "gradle_build": self.build_root or ".", "gradle_dsl": self.dsl,
                "archives_name": self.tasks.get("jar", {}).get("archiveBaseName"),
                "gradle_plugins": sorted({p.id for p in self.plugins}), "group_source": self.group_source,
                "build_logic": self.build_logic}

    def plugin_ids(self) -> set[str]:
        """The ids of the plugins the project applies."""
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
        """``name → value`` for ``@name@`` resource filtering: the project's ``ext`` strings, its and its
        build's ``gradle.properties``, then ``version``, ``group`` and ``name``."""
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
