"""Which rules a module's code can match, and which an annotation matches (docs/rules.md §3):
:class:`RuleIndex` groups the rules by how they are matched; :class:`AnnotationRules` finds the
rules of one annotation — by name, by simple name and package prefix, through a composed
annotation that carries a rule annotation (with its ``@AliasFor`` elements), or by a simple-name
suffix no other rule claims.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from diting.java.facts import Annotation, MethodDecl, TypeRef
from diting.java.names import FileScope
from diting.probes.model import Rule
from diting.resolve.types import MemberContext, TypeOracle

if TYPE_CHECKING:
    from diting.java.facts import Expr


@dataclass
class RuleIndex:
    """Rules grouped by how they are matched."""

    by_annotation: dict[str, list[Rule]] = field(default_factory=dict)
    by_simple_annotation: dict[str, list[Rule]] = field(default_factory=dict)
    by_call_method: dict[str, list[Rule]] = field(default_factory=dict)
    by_xml: dict[tuple[str | None, str], list[Rule]] = field(default_factory=dict)
    by_bean_class: dict[str, list[Rule]] = field(default_factory=dict)
    type_rules: list[Rule] = field(default_factory=list)
    #: annotation FQN → rules reading ``META-INF/spring/{FQN}.imports`` files
    by_imports: dict[str, list[Rule]] = field(default_factory=dict)
    config_annotations: dict[str, str] = field(default_factory=dict)
    #: class annotations binding the class's fields to configuration under a prefix (@ConfigurationProperties)
    config_prefix_annotations: set[str] = field(default_factory=set)
    #: annotation rules by simple-name suffix (ENTRY_HINT), and the packages every other rule names
    suffix_rules: list[Rule] = field(default_factory=list)
    known_packages: set[str] = field(default_factory=set)

    @classmethod
    def build(cls, rules: list[Rule]) -> "RuleIndex":
        """The index of ``rules``."""
        idx = cls()
        for r in rules:
            m = r.match
            idx.known_packages.update(_rule_packages(r))
            if m.annotation is not None and m.annotation.name_suffixes:
                idx.suffix_rules.append(r)
            elif m.annotation is not None:
                if m.annotation.fqn:
                    idx.by_annotation.setdefault(m.annotation.fqn, []).append(r)
                else:
                    idx.by_simple_annotation.setdefault(m.annotation.simple_name or "", []).append(r)
                if r.emits.kind == "CONFIG_VALUE" and m.annotation.fqn:
                    idx.config_annotations[m.annotation.fqn] = r.emits.protocol or "config"
                if r.emits.kind == "CONFIG_PROPERTIES" and m.annotation.fqn:
                    idx.config_prefix_annotations.add(m.annotation.fqn)
            elif m.call is not None:
                names = m.call.method if isinstance(m.call.method, list) else [m.call.method]
                for n in names:
                    idx.by_call_method.setdefault(n, []).append(r)
            elif m.xml is not None:
                idx.by_xml.setdefault((m.xml.namespace, m.xml.element), []).append(r)
            elif m.bean_class is not None:
                for fqn in m.bean_class.fqn if isinstance(m.bean_class.fqn, list) else [m.bean_class.fqn]:
                    idx.by_bean_class.setdefault(fqn, []).append(r)
            elif m.type is not None:
                idx.type_rules.append(r)
            elif m.imports is not None:
                idx.by_imports.setdefault(m.imports, []).append(r)
        return idx


def _rule_packages(r: Rule) -> set[str]:
    """Packages a rule names (of annotation, receiver, bean and super types; package prefixes)."""
    m = r.match
    names: list[str] = []
    if m.annotation is not None:
        names += [m.annotation.fqn] if m.annotation.fqn else []
        return {n.rsplit(".", 1)[0] for n in names} | set(m.annotation.package_prefixes)
    if m.call is not None:
        names += m.call.receiver_type if isinstance(m.call.receiver_type, list) else [m.call.receiver_type]
    if m.bean_class is not None:
        names += m.bean_class.fqn if isinstance(m.bean_class.fqn, list) else [m.bean_class.fqn]
    if m.type is not None:
        names += m.type.supertypes
    if m.package:
        return {m.package}
    return {n.rsplit(".", 1)[0] for n in names if "." in n}


@dataclass
class AnnotationHit:
    """A rule an annotation matched, the annotation's FQN, and the attribute expressions to read
    (each with the context to fold it in; None: the annotated member's). ``via``: the composed
    annotation the rule annotation was found on."""

    rule: Rule
    fqn: str
    args: dict[str, tuple[Expr, "MemberContext | None"]]
    via: str | None = None


@dataclass
class MetaRule:
    """A rule annotation on an in-repo annotation type: its attributes and the type's
    ``@AliasFor`` elements (element → (attribute, default expression and context))."""

    rule: Rule
    fqn: str
    args: dict[str, tuple[Expr, "MemberContext | None"]]
    aliases: dict[str, tuple[str, tuple[Expr, "MemberContext"] | None]]


def _alias_for(el: MethodDecl, scope: FileScope, chain: list[int], meta_fqn: str) -> str | None:
    """The attribute of ``meta_fqn`` an annotation element is an ``@AliasFor`` of, or None."""
    for a in el.annotations:
        if a.name.rsplit(".", 1)[-1] != "AliasFor":
            continue
        target = a.args.get("annotation")
        if target is None or target.get("kind") != "class":
            return None
        r = scope.resolve(TypeRef(tuple(target.get("type", []))), chain, {})
        if r.name != meta_fqn:
            return None
        attr = a.args.get("attribute") or a.args.get("value")
        return attr["value"] if attr is not None and attr.get("kind") == "str" else el.name
    return None


class AnnotationRules:
    """The rules annotations match, for one module's probe (composed annotations memoised)."""

    def __init__(self, index: RuleIndex, oracle: TypeOracle) -> None:
        self.index = index
        self.oracle = oracle
        self._meta: dict[tuple[str, str], list[MetaRule]] = {}

    def matching(self, a: Annotation, scope: FileScope, chain: list[int]) -> list[AnnotationHit]:
        """Rules an annotation matches: by FQN, by simple name and package prefix, or through an
        in-repo annotation type that carries a rule annotation (a composed annotation such as
        ``@EnableXxxFeignClients`` meta-annotated with ``@EnableFeignClients``); for the latter
        the meta-annotation's attributes apply, overridden by ``@AliasFor`` elements (the usage's
        value, else the element's default)."""
        r = scope.resolve_base(TypeRef(tuple(a.name.split("."))), chain, {})
        fqn = r.name if r is not None else None
        usage = {k: (v, None) for k, v in a.args.items()}
        hits = [AnnotationHit(rule, fqn or a.name, usage) for rule in self.index.by_annotation.get(fqn or "", [])]
        simple = a.name.rsplit(".", 1)[-1]
        for rule in self.index.by_simple_annotation.get(simple, []):
            prefixes = rule.match.annotation.package_prefixes
            candidates = [fqn.rsplit(".", 1)[0]] if fqn and "." in fqn else list(scope.wildcards) if fqn is None else []
            pkg = next((p for p in candidates if any(p == x or p.startswith(x + ".") for x in prefixes)), None)
            if pkg is not None:
                hits.append(AnnotationHit(rule, f"{pkg}.{simple}", usage))
        if hits or r is None or not r.infos:
            return hits or self._suffix_hits(a, fqn, scope, usage)
        info = r.infos[0]
        for meta in self._meta_rules(info.module, info.binary, 0):
            args = dict(meta.args)
            for element, (attr, default) in meta.aliases.items():
                if element in a.args:
                    args[attr] = (a.args[element], None)
                elif default is not None:
                    args[attr] = default
            hits.append(AnnotationHit(meta.rule, meta.fqn, args, via=fqn))
        return hits or self._suffix_hits(a, fqn, scope, usage)

    def _suffix_hits(self, a: Annotation, fqn: str | None, scope: FileScope,
                     usage: dict[str, tuple[Expr, "MemberContext | None"]]) -> list[AnnotationHit]:
        """ENTRY_HINT rules for an annotation no other rule matched: its simple name ends in one of the
        rule's suffixes and its package (or, unresolved, every wildcard-imported one) is named by no rule."""
        simple = a.name.rsplit(".", 1)[-1]
        pkgs = [fqn.rsplit(".", 1)[0]] if fqn and "." in fqn else list(scope.wildcards) or [""]
        if any(p in self.index.known_packages for p in pkgs):
            return []
        return [AnnotationHit(rule, fqn or a.name, usage) for rule in self.index.suffix_rules
                if simple.endswith(tuple(rule.match.annotation.name_suffixes))]

    def _meta_rules(self, module: str, binary: str, depth: int) -> list["MetaRule"]:
        """Rule annotations an in-repo annotation type carries (memoised; two levels deep)."""
        key = (module, binary)
        if key in self._meta:
            return self._meta[key]
        self._meta[key] = []
        found = self.oracle.decl(module, binary)
        if found is None or depth > 2:
            return []
        ascope, aidx = found
        atd = ascope.facts.types[aidx]
        if atd.kind != "ANNOTATION":
            return []
        achain = ascope._chain_of(aidx)
        actx = MemberContext(ascope, achain, module, None, None, {})
        out: list[MetaRule] = []
        for meta in atd.annotations:
            r = ascope.resolve_base(TypeRef(tuple(meta.name.split("."))), achain, {})
            direct = [rule for rule in self.index.by_annotation.get(r.name if r else "", [])]
            found_hits = [(rule, r.name, {k: (v, actx) for k, v in meta.args.items()}) for rule in direct]
            if not direct and r is not None and r.infos and (r.infos[0].module, r.infos[0].binary) != key:
                found_hits = [(m.rule, m.fqn, m.args) for m in self._meta_rules(r.infos[0].module,
                                                                                 r.infos[0].binary, depth + 1)]
            for rule, mfqn, margs in found_hits:
                aliases: dict[str, tuple[str, tuple[Expr, MemberContext] | None]] = {}
                for el in atd.methods:
                    if el.decl_kind != "ANNOTATION_ELEMENT":
                        continue
                    target = _alias_for(el, ascope, achain, mfqn)
                    if target is not None:
                        aliases[el.name] = (target, (el.default, actx) if el.default is not None else None)
                out.append(MetaRule(rule, mfqn, margs, aliases))
        self._meta[key] = out
        return out
