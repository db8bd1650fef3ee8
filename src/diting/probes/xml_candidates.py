"""Module-level matching of XML rules (docs/rules.md §3): the candidates of a module's Spring,
RPC and MQ XML resources — each element an XML rule names, with the roles its attributes,
``<property>`` children and child elements carry (as written; the package resolves placeholders).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from diting.source.xmlsafe import element_spans, local_name, namespace, parse_xml

if TYPE_CHECKING:
    from diting.probes.matches import Candidate, Roles, Value, XmlProperty
    from diting.probes.rule_index import RuleIndex


def literal_outcome(value: str, basis: str = "XML") -> Value:
    """A string written in a resource as an outcome (``${…}`` in it left for the package to resolve)."""
    return {"value": value, "vtype": "java.lang.String", "basis": basis, "placeholders": "${" in value}


def split_list(value: str) -> list[str]:
    """Spring's comma/semicolon/space separated lists (``base-package="a.b, c.d"``)."""
    return [v for v in (x.strip() for x in value.replace(";", ",").replace("\n", ",").split(",")) if v]


class XmlProbe:
    """Candidates of one module's Spring/RPC/MQ XML resources."""

    def __init__(self, module: str, index: RuleIndex) -> None:
        self.module = module
        self.index = index
        self.out: list[Candidate] = []

    def add_file(self, path: str, data: bytes) -> None:
        """Candidates of one XML file (``data``: its bytes) at ``path``."""
        if not self.index.by_xml:
            return
        doc = parse_xml(data)
        if doc.root is None:
            return
        spans: dict[Any, tuple[int, int]] | None = None
        for el in doc.root.iter():
            if not isinstance(el.tag, str):
                continue
            key_ns = namespace(el)
            name = local_name(el)
            rules = self.index.by_xml.get((key_ns, name), []) + (
                self.index.by_xml.get((None, name), []) if key_ns is not None else [])
            for rule in rules:
                xm = rule.match.xml
                attrs = {str(k): str(v) for k, v in el.attrib.items()}
                if any(r not in attrs for r in xm.requires) or \
                        any(attrs.get(a) not in vals for a, vals in xm.where.items()):
                    continue
                roles: Roles = {}
                for attr, role in xm.attributes.items():
                    if attr in attrs:
                        vals = [attrs[attr]] if role not in ("base_packages", "resource") else \
                            split_list(attrs[attr])
                        roles.setdefault(role, []).extend(literal_outcome(v) for v in vals)
                props: dict[str, XmlProperty] = {}
                if spans is None:
                    spans = element_spans(doc.decoded.text, doc.root)
                for child in el:
                    if not isinstance(child.tag, str):
                        continue
                    cname = local_name(child)
                    if cname == "property" and child.get("name"):
                        pv = child.get("value")
                        pr = child.get("ref")
                        if pv is None:
                            pv = _property_text(child)
                        first, last = spans.get(child, (child.sourceline or 0,) * 2)
                        props[child.get("name")] = {"value": pv, "ref": pr, "line": first, "end_line": last}
                        role = xm.properties.get(child.get("name"))
                        if role and pv is not None:
                            roles.setdefault(role, []).extend(
                                literal_outcome(v) for v in (split_list(pv) if role in ("resource", "base_packages")
                                                             else [pv]))
                        elif role and pr is not None:
                            roles.setdefault(role, []).append({"ref": pr})
                    elif cname in xm.children and (child.text or "").strip():
                        roles.setdefault(xm.children[cname], []).append(literal_outcome(child.text.strip()))
                profiles = [p.get("profile") for p in el.iterancestors()
                            if isinstance(p.tag, str) and local_name(p) == "beans" and p.get("profile")]
                start, end = spans.get(el, (el.sourceline or 1, el.sourceline or 1))
                self.out.append({
                    "rule": rule.id, "emit": rule.emits.kind, "form": "xml", "module": self.module, "path": path,
                    "lines": [start, max(start, end)], "target": "XML", "roles": roles,
                    "xml": {"element": name, "namespace": key_ns, "attributes": attrs, "properties": props,
                            "parent": local_name(el.getparent()) if el.getparent() is not None else None,
                            "parent_attributes": {str(k): str(v) for k, v in el.getparent().attrib.items()}
                            if el.getparent() is not None else {}},
                    "attrs": {"profiles": profiles} if profiles else {},
                    "emit_attrs": rule.emits.attributes,
                })


def _property_text(prop: Any) -> str | None:
    """The value of a ``<property>`` written as a child: ``<value>`` text, or the ``<value>`` texts of a
    ``<list>``/``<array>``/``<set>`` joined by commas; None when it has neither."""
    for c in prop:
        if not isinstance(c.tag, str):
            continue
        name = local_name(c)
        if name == "value":
            return (c.text or "").strip()
        if name in ("list", "array", "set"):
            return ",".join((v.text or "").strip() for v in c if isinstance(v.tag, str) and local_name(v) == "value")
    return None

