"""Raw POM reading: what one pom.xml declares, with line spans for evidence.

Nothing is interpolated or inherited here; :mod:`diting.inventory.maven` builds
the effective model. Parsing goes through :func:`diting.source.xmlsafe.parse_xml`
(entities never expanded, DTDs never fetched). Entity references are read as
Maven 3's POM reader reads them: XML's predefined entities and XHTML's
(:data:`MAVEN_ENTITIES`) are characters; a reference to any other — one the file
declares in its DOCTYPE, or none at all — makes Maven refuse the file, and so the
POM is not read (its coordinate is unknown, never a text with ``&name;`` in it).
"""

from __future__ import annotations

import html.entities
from dataclasses import dataclass, field

from lxml import etree

from diting.inventory.module import Span
from diting.source.text import split_lines
from diting.source.xmlsafe import (
    XmlDocument,
    child,
    child_text,
    children,
    element_spans,
    element_text,
    named_references,
    parse_xml,
)

#: the named entities Maven 3's POM reader (``MavenXpp3Reader`` with ``addDefaultEntities``) knows
#: without a declaration: XHTML 1.0's lat1, special and symbol sets (HTML 4's), each one character
MAVEN_ENTITIES: dict[str, str] = {name: chr(cp) for name, cp in sorted(html.entities.name2codepoint.items())}


@dataclass
class Dependency:
    """A ``<dependency>`` as written (values not yet interpolated)."""

    group_id: str | None
    artifact_id: str | None
    version: str | None
    scope: str | None
    type: str | None
    classifier: str | None
    optional: bool
    exclusions: list[tuple[str, str]]
    span: Span

    def key(self) -> tuple[str | None, str | None, str, str]:
        return (self.group_id, self.artifact_id, self.type or "jar", self.classifier or "")


@dataclass
class Plugin:
    group_id: str | None
    artifact_id: str | None
    skip: str | None
    span: Span


@dataclass
class ProfileDecl:
    """A ``<profile>``: what it adds when active."""

    id: str
    active_by_default: bool
    activation_property: tuple[str, str | None] | None
    has_other_activation: bool
    properties: dict[str, str]
    property_spans: dict[str, Span]
    dependencies: list[Dependency]
    dependency_management: list[Dependency]
    modules: list[tuple[str, int]]
    plugins: list[Plugin]
    managed_plugins: list[Plugin]
    span: Span


@dataclass
class ParentRef:
    group_id: str | None
    artifact_id: str | None
    version: str | None
    relative_path: str | None  # None: default ``../pom.xml``; "": lookup disabled
    span: Span


@dataclass
class RawPom:
    """One pom.xml as declared. ``error`` is set when the file is not well-formed XML."""

    path: str
    dir: str
    lines: list[str]
    encoding: str
    lossy: bool
    error: str | None = None
    error_line: int | None = None
    group_id: str | None = None
    artifact_id: str | None = None
    version: str | None = None
    packaging: str | None = None
    name: str | None = None
    description: str | None = None
    parent: ParentRef | None = None
    properties: dict[str, str] = field(default_factory=dict)
    property_spans: dict[str, Span] = field(default_factory=dict)
    dependencies: list[Dependency] = field(default_factory=list)
    dependency_management: list[Dependency] = field(default_factory=list)
    modules: list[tuple[str, int]] = field(default_factory=list)
    plugins: list[Plugin] = field(default_factory=list)
    managed_plugins: list[Plugin] = field(default_factory=list)
    profiles: list[ProfileDecl] = field(default_factory=list)
    source_directory: str | None = None
    resource_directories: list[str] = field(default_factory=list)
    compiler_config: dict[str, str] = field(default_factory=dict)
    artifact_span: Span | None = None
    packaging_span: Span | None = None
    project_span: Span | None = None


class _Spans:
    """Line spans of the elements of one parsed pom (from one lexer pass)."""

    def __init__(self, text: str, root: etree._Element) -> None:
        self.spans = element_spans(text, root)

    def __call__(self, el: etree._Element) -> Span:
        start = el.sourceline or 1
        a, b = self.spans.get(el, (start, start))
        return Span(a, max(a, b))


def _deps(span: _Spans, container: etree._Element | None) -> list[Dependency]:
    out: list[Dependency] = []
    if container is None:
        return out
    for d in children(container, "dependency"):
        excl: list[tuple[str, str]] = []
        ex = child(d, "exclusions")
        if ex is not None:
            for e in children(ex, "exclusion"):
                excl.append((child_text(e, "groupId") or "*", child_text(e, "artifactId") or "*"))
        out.append(Dependency(
            child_text(d, "groupId"), child_text(d, "artifactId"), child_text(d, "version"),
            child_text(d, "scope"), child_text(d, "type"), child_text(d, "classifier"),
            (child_text(d, "optional") or "").strip().lower() == "true", excl, span(d)))
    return out


def _plugins(span: _Spans, container: etree._Element | None) -> list[Plugin]:
    out: list[Plugin] = []
    if container is None:
        return out
    for p in children(container, "plugin"):
        conf = child(p, "configuration")
        out.append(Plugin(child_text(p, "groupId"), child_text(p, "artifactId"),
                          child_text(conf, "skip") if conf is not None else None, span(p)))
    return out


def _properties(span: _Spans, el: etree._Element | None) -> tuple[dict[str, str], dict[str, Span]]:
    props: dict[str, str] = {}
    spans: dict[str, Span] = {}
    if el is None:
        return props, spans
    for p in children(el):
        name = p.tag.rsplit("}", 1)[-1] if isinstance(p.tag, str) else None
        if not name:
            continue
        props[name] = element_text(p)
        spans[name] = span(p)
    return props, spans


def _modules(el: etree._Element | None) -> list[tuple[str, int]]:
    if el is None:
        return []
    return [(element_text(m), m.sourceline or 1) for m in children(el, "module") if element_text(m)]


def read_pom(path: str, data: bytes) -> RawPom:
    """Read one pom.xml. Never raises: a malformed file gives ``error`` and ``error_line``."""
    # Maven 3 (plexus MXParser) reads a POM whose XML declaration follows one whitespace character
    doc: XmlDocument = parse_xml(data, declaration_after=1, entities=MAVEN_ENTITIES)
    lines = split_lines(doc.decoded.text)
    directory = path.rsplit("/", 1)[0] if "/" in path else ""
    pom = RawPom(path=path, dir=directory, lines=lines, encoding=doc.decoded.encoding, lossy=doc.decoded.lossy)
    if doc.root is None:  # the parser's own reason first (an entity amplification, an undeclared entity …)
        pom.error = doc.error or "not well-formed XML"
        pom.error_line = doc.error_line
        return pom
    unknown = named_references(doc.decoded.text, MAVEN_ENTITIES)
    if unknown:  # MXParser: "could not resolve entity named …"; a DOCTYPE's declarations are never read
        name, line = unknown[0]
        pom.error = (f"the entity reference &{name}; (line {line}) names no entity Maven's POM reader knows (XML's "
                     "own and XHTML's; never one the file declares, which diting does not expand either): Maven "
                     "refuses the file")
        pom.error_line = line
        return pom
    root = doc.root
    spans = _Spans(doc.decoded.text, root)
    if root.tag.rsplit("}", 1)[-1] != "project":
        pom.error = f"root element is <{root.tag.rsplit('}', 1)[-1]}>, not <project>"
        pom.error_line = root.sourceline
        return pom
    _read_coordinate(pom, spans, root)
    pom.parent = _parent(spans, child(root, "parent"))
    pom.properties, pom.property_spans = _properties(spans, child(root, "properties"))
    pom.dependencies = _deps(spans, child(root, "dependencies"))
    pom.dependency_management = _deps(spans, child(child(root, "dependencyManagement"), "dependencies"))
    pom.modules = _modules(child(root, "modules"))
    _read_build(pom, spans, child(root, "build"))
    profiles = child(root, "profiles")
    if profiles is not None:
        pom.profiles = [_profile(spans, prof) for prof in children(profiles, "profile")]
    return pom


def _read_coordinate(pom: RawPom, spans: _Spans, root: etree._Element) -> None:
    """The project's own coordinate (groupId, artifactId, version, packaging, as written), name and
    description, with the spans of the project, its artifactId and its packaging."""
    pom.project_span = spans(root)
    pom.group_id = child_text(root, "groupId")
    pom.artifact_id = child_text(root, "artifactId")
    a = child(root, "artifactId")
    if a is not None:
        pom.artifact_span = spans(a)
    pom.version = child_text(root, "version")
    pom.packaging = child_text(root, "packaging")
    pk = child(root, "packaging")
    if pk is not None:
        pom.packaging_span = spans(pk)
    pom.name = child_text(root, "name")
    pom.description = child_text(root, "description")


def _parent(spans: _Spans, par: etree._Element | None) -> ParentRef | None:
    """The ``<parent>`` reference, or None when there is none; ``relative_path`` is None when
    ``<relativePath>`` is absent (Maven's default ``../pom.xml``) and ``""`` when it is empty."""
    if par is None:
        return None
    rp = child(par, "relativePath")
    rel = element_text(rp) if rp is not None else None
    return ParentRef(child_text(par, "groupId"), child_text(par, "artifactId"), child_text(par, "version"),
                     rel, spans(par))


def _read_build(pom: RawPom, spans: _Spans, build: etree._Element | None) -> None:
    """What ``<build>`` declares: plugins, managed plugins, source directory, resource directories and
    the ``maven-compiler-plugin`` configuration (release, source, target, encoding; the first
    plugin that sets one wins, ``<plugins>`` before ``<pluginManagement>``)."""
    pom.plugins = _plugins(spans, child(build, "plugins"))
    pom.managed_plugins = _plugins(spans, child(child(build, "pluginManagement"), "plugins"))
    pom.source_directory = child_text(build, "sourceDirectory")
    res = child(build, "resources")
    if res is not None:
        for r in children(res, "resource"):
            d = child_text(r, "directory")
            if d:
                pom.resource_directories.append(d)
    for pel in _plugin_elements(build):
        if child_text(pel, "artifactId") == "maven-compiler-plugin":
            conf = child(pel, "configuration")
            for k in ("release", "source", "target", "encoding"):
                v = child_text(conf, k)
                if v:
                    pom.compiler_config.setdefault(k, v)


def _profile(spans: _Spans, prof: etree._Element) -> ProfileDecl:
    """One ``<profile>``: its activation (``activeByDefault``, a ``<property>`` name and value, whether
    it has a jdk, os or file activation) and what it adds when active."""
    act = child(prof, "activation")
    abd = (child_text(act, "activeByDefault") or "").lower() == "true"
    prop = None
    other = False
    if act is not None:
        pe = child(act, "property")
        if pe is not None:
            prop = (child_text(pe, "name") or "", child_text(pe, "value"))
        other = any(c is not None for c in (child(act, "jdk"), child(act, "os"), child(act, "file")))
    pprops, pspans = _properties(spans, child(prof, "properties"))
    pbuild = child(prof, "build")
    return ProfileDecl(
        id=child_text(prof, "id") or "", active_by_default=abd, activation_property=prop,
        has_other_activation=other, properties=pprops, property_spans=pspans,
        dependencies=_deps(spans, child(prof, "dependencies")),
        dependency_management=_deps(spans, child(child(prof, "dependencyManagement"), "dependencies")),
        modules=_modules(child(prof, "modules")), plugins=_plugins(spans, child(pbuild, "plugins")),
        managed_plugins=_plugins(spans, child(child(pbuild, "pluginManagement"), "plugins")),
        span=spans(prof))


def _plugin_elements(build: etree._Element | None) -> list[etree._Element]:
    """``<plugin>`` elements of ``<build><plugins>``, then of ``<pluginManagement><plugins>``."""
    if build is None:
        return []
    return [p for container in (child(build, "plugins"), child(child(build, "pluginManagement"), "plugins"))
            if container is not None for p in children(container, "plugin")]
