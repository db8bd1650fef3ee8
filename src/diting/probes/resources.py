"""A module's non-Java inputs to its Spring context and probes (docs/scanning.md §12, docs/middleware.md §1).

XML resources go through the XML rules (beans, RPC providers and consumers,
MQ listeners, imports, component scans); ``META-INF/spring.factories`` and
``META-INF/spring/*.imports`` list auto-configuration classes; ``web.xml``
names the context's XML files (``contextConfigLocation`` of the root context and of each servlet,
else the defaults of a ``ContextLoaderListener`` and a ``DispatcherServlet``).
Runs once per module (in the worker that builds the module's first chunk).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from diting.config.sources import canonical_key, parse_properties
from diting.inventory.layout import CONFIG
from diting.probes.xml_candidates import XmlProbe, literal_outcome, split_list
from diting.source.text import decode_bytes, split_lines
from diting.sql.mybatis import MapperFile, read_mapper
from diting.source.xmlsafe import local_name, parse_xml

if TYPE_CHECKING:
    from diting.probes.matches import Candidate, ImportsCandidate, ImportsEntry
    from diting.scan.facts import ScanFacts

#: the spring.factories key whose classes Spring Boot auto-configures
AUTO_CONFIG_KEY = "org.springframework.boot.autoconfigure.EnableAutoConfiguration"
#: the ``META-INF/spring/{annotation}.imports`` lists Spring Boot itself loads as auto-configurations
#: (the management context's configurations run in a child context of the application's); any other
#: ``.imports`` file is read only by code calling ``ImportCandidates.load`` — an ``imports`` rule says what
AUTO_CONFIG_IMPORTS = ("org.springframework.boot.autoconfigure.AutoConfiguration",
                       "org.springframework.boot.actuate.autoconfigure.web.ManagementContextConfiguration")
#: Spring's default root context file of a web application
DEFAULT_WEB_CONTEXT = "/WEB-INF/applicationContext.xml"
#: Spring MVC's front controller (another library's DispatcherServlet loads no Spring context)
SPRING_DISPATCHER = "org.springframework.web.servlet.DispatcherServlet"


@dataclass
class ModuleResources:
    """What a module's resources contribute: XML candidates, auto-configurations, web.xml locations."""

    candidates: list[Candidate] = field(default_factory=list)
    auto_configs: list[dict[str, Any]] = field(default_factory=list)
    web_contexts: list[str] = field(default_factory=list)
    #: MyBatis (and iBatis) mapper files, read for the SQL stage (sql/mybatis.py)
    mappers: list[MapperFile] = field(default_factory=list)


def imports_annotation(path: str) -> str | None:
    """The annotation FQN a ``META-INF/spring/{FQN}.imports`` file lists classes for; None for another path."""
    if not path.endswith(".imports") or "META-INF/spring/" not in path:
        return None
    return path.rsplit("/", 1)[-1][:-len(".imports")]


def imports_entries(text: str) -> list[ImportsEntry]:
    """The classes of an ``.imports`` file as ``ImportCandidates`` reads them (one a line, ``#``
    comments, blank lines skipped): ``[{"class", "lines"}]`` with the entry's 1-based line."""
    out: list[ImportsEntry] = []
    for n, ln in enumerate(split_lines(text), 1):  # BufferedReader.readLine's line ends, evidence's
        cls = ln.split("#", 1)[0].strip()
        if cls:
            out.append({"class": cls, "lines": [n, n]})
    return out


def auto_configurations(path: str, text: str) -> list[dict[str, Any]]:
    """Classes listed by a ``spring.factories`` (the EnableAutoConfiguration key) or an
    ``AutoConfiguration.imports`` file (:data:`AUTO_CONFIG_IMPORTS`), as ``{"class", "path",
    "lines"}`` (1-based lines of the listing entry): Spring Boot registers each as a bean. An
    ``.imports`` file of another annotation lists nothing here."""
    if path.endswith(".imports"):
        if imports_annotation(path) not in AUTO_CONFIG_IMPORTS:
            return []
        return [dict(e, path=path) for e in imports_entries(text)]
    out: list[ImportsEntry] = []
    cf = parse_properties(path, text)
    for doc in cf.documents:
        for e in doc.entries:
            if e.key == canonical_key(AUTO_CONFIG_KEY):
                out.extend({"class": cls, "path": path, "lines": [e.line, e.end_line]} for cls in split_list(e.value))
    return out


def web_context_locations(data: bytes) -> list[str]:
    """Context XML locations a ``web.xml`` names: every ``contextConfigLocation`` parameter
    (``<context-param>`` for the root context, a servlet's ``<init-param>`` for its own), the
    default ``/WEB-INF/applicationContext.xml`` of a context loader listener declared without a
    context parameter, and ``/WEB-INF/{servlet-name}-servlet.xml`` of a ``DispatcherServlet``
    declared without an init parameter."""
    doc = parse_xml(data)
    if doc.root is None:
        return []

    def kids(el: Any, name: str) -> list[Any]:
        return [k for k in el if isinstance(k.tag, str) and local_name(k) == name]

    def text(el: Any, name: str) -> str:
        return next(((k.text or "").strip() for k in kids(el, name)), "")

    def locations(el: Any, param: str) -> list[str] | None:
        got = [text(p, "param-value") for p in kids(el, param) if text(p, "param-name") == "contextConfigLocation"]
        return [loc for v in got for loc in split_list(v)] if got else None

    root = locations(doc.root, "context-param")
    out: list[str] = list(root or [])
    if root is None and any(text(lst, "listener-class").endswith("ContextLoaderListener")
                            for lst in kids(doc.root, "listener")):
        out.append(DEFAULT_WEB_CONTEXT)
    for servlet in kids(doc.root, "servlet"):
        own = locations(servlet, "init-param")
        if own is not None:
            out.extend(own)
        elif text(servlet, "servlet-class") == SPRING_DISPATCHER and text(servlet, "servlet-name"):
            out.append(f"/WEB-INF/{text(servlet, 'servlet-name')}-servlet.xml")
    return out


def module_resources(s: "ScanFacts", pom_path: str) -> ModuleResources:
    """Read the module's XML and Spring metadata files (never a file that failed to read or parse)."""
    out = ModuleResources()
    xml = XmlProbe(pom_path, s.rule_index)
    for f in s.inv.files_by_module.get(pom_path, []):
        if f.kind != CONFIG or f.path in s.file_problems:
            continue
        state = s.config_states.get(f.path)
        if state is not None and state.problem not in (None, "lossy"):
            continue
        if f.path.endswith(".xml"):
            got = s.snapshot.read(f.path)
            if got.data is None:
                continue
            xml.add_file(f.path, got.data)
            mapper = read_mapper(f.path, got.data)
            if mapper.dialect is not None:
                out.mappers.append(mapper)
            if f.path.endswith("WEB-INF/web.xml"):
                out.web_contexts.extend(web_context_locations(got.data))
        elif f.path.endswith((".factories", ".imports")):
            got = s.snapshot.read(f.path)
            if got.data is not None:
                text = decode_bytes(got.data).text
                out.auto_configs.extend(auto_configurations(f.path, text))
                out.candidates.extend(imports_candidates(pom_path, f.path, text, s.rule_index))
    out.candidates = out.candidates + xml.out
    return out


def imports_candidates(module: str, path: str, text: str, index: Any) -> list[ImportsCandidate]:
    """Candidates of the ``imports`` rules naming the annotation of a ``META-INF/spring/{FQN}.imports``
    file: one per rule, its listed classes in role ``classes`` (each entry's line in ``attrs.entries``)."""
    fqn = imports_annotation(path)
    rules = index.by_imports.get(fqn, []) if fqn else []
    entries = imports_entries(text) if rules else []
    if not entries:
        return []
    lines = [entries[0]["lines"][0], entries[-1]["lines"][0]]
    return [{"rule": r.id, "emit": r.emits.kind, "form": "imports", "module": module, "path": path, "lines": lines,
             "target": "RESOURCE", "roles": {"classes": [literal_outcome(e["class"], "RESOURCE") for e in entries]},
             "attrs": {"entries": entries, "annotation": fqn}, "emit_attrs": r.emits.attributes} for r in rules]
