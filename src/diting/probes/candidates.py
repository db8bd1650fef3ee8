"""Module-level matching of rules: annotations, calls, XML elements, bean classes, types (docs/rules.md §3).

Everything here is independent of the service that holds the module: a match
becomes a *candidate* (a plain dict) with the values its roles carry, folded as
far as constants, enums, locals and config annotations allow (placeholders are
left for the package, which knows its configuration). The package decides,
with its Spring context, what is loaded and what it means (``emit.py``).

A candidate: ``rule``, ``emit``, ``form``, ``module``, ``path``, ``lines``,
``target`` (TYPE, METHOD, FIELD, PARAMETER, CALL, XML), owner ``type``
(binary, stable, rid), ``member`` / ``field`` / ``param`` details, ``roles``
(role → list of outcomes), ``attrs``. An outcome is ``{"value", "vtype",
"basis", "placeholders"}`` or ``{"unresolved", "reason"}``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TYPE_CHECKING

from diting.ir import ids
from diting.java.lombok import synthesize
from diting.java.names import FileScope
from diting.java.facts import Annotation, FileFacts, MethodDecl, TypeDecl, TypeRef, type_chain
from diting.probes.model import MessageSpec, Rule
from diting.resolve.fold import ExpressionFolder, Folded, FoldOutcome, Unfolded, constructor_fields, render
from diting.resolve.types import MemberContext, TypeOf, TypeOracle
from diting.source.xmlsafe import element_spans, local_name, namespace, parse_xml

if TYPE_CHECKING:
    from diting.java.facts import Expr
    from diting.probes.matches import (BeanRef, CallCandidate, Candidate, Constructs, FieldRef, LambdaCall, MemberInfo,
                                       Outcome, ParameterAccessor, ReceiverCall, Roles, RouteCall, RuntimePart,
                                       MatchAttrs, TypeDetail, TypeInfo, Value, XmlProperty)


#: roles whose value is an enum constant's name (``RequestMethod.GET``, ``HttpMethod.POST``)
ENUM_NAME_ROLES = {"http_method"}
#: calls followed along a chain made on a call's result (``lambdaQuery().eq(…)….list()``)
MAX_CHAIN = 256


def outcome_json(o: FoldOutcome) -> list[Outcome]:
    """An outcome as JSON; a value with several possibilities gives several entries."""
    if isinstance(o, Unfolded):
        return [{"unresolved": o.expression, "reason": o.reason}]
    return [{"value": v, "vtype": o.vtype, "basis": o.basis, "placeholders": o.placeholders or "${" in v}
            for v in o.values]


def literal_outcome(value: str, basis: str = "XML") -> Value:
    return {"value": value, "vtype": "java.lang.String", "basis": basis, "placeholders": "${" in value}


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


def erased_signature(facts: FileFacts, scope: FileScope, idx: int, md: MethodDecl) -> list[str]:
    """Erased binary names of a method's parameter types (docs/ir.md §2.1), as records.py names them."""
    chain = type_chain(facts, idx)
    tv = scope.type_vars_for(chain, md.type_params)
    return [scope.resolve(p.type, chain, tv).name for p in md.params]


class ModuleProbe:
    """Finds the candidates of one module's files."""

    def __init__(self, module: str, ns: str, index: RuleIndex, oracle: TypeOracle, folder: ExpressionFolder,
                 resolve_sig, calls: Any = None) -> None:
        self.module = module
        #: the scan's CallResolver (optional): a field call's declared overload, by argument types
        self.calls = calls
        self.ns = ns
        self.index = index
        self.oracle = oracle
        self.folder = folder
        self.resolve_sig = resolve_sig  # (facts, scope, type idx, MethodDecl) -> list[str] (erased signature)
        self.out: list[Candidate] = []
        self._calls_on: dict[int, tuple[Any, dict[int, Any]]] = {}
        self._meta: dict[tuple[str, str], list[MetaRule]] = {}

    # ------------------------------------------------------------ annotations
    def _annotation_rules(self, a: Annotation, scope: FileScope, chain: list[int]) -> list[AnnotationHit]:
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

    def _roles_from_args(self, rule: Rule, args: dict[str, tuple[Expr, MemberContext | None]],
                         ctx: MemberContext) -> Roles:
        roles: Roles = {}
        for attr, role in rule.match.annotation.attributes.items():
            got = args.get(attr)
            if got is None:
                continue
            expr, actx = got
            use = actx or ctx
            items = expr["items"] if expr.get("kind") == "array" else [expr]
            for item in items:
                roles.setdefault(role, []).extend(self.fold_value(item, use, role=role))
        return roles

    def fold_value(self, expr: Expr | None, ctx: MemberContext, accessor: str | None = None,
                   role: str | None = None) -> list[Outcome]:
        """One role value as outcomes: class literals give the class's binary name; an enum
        constant gives ``accessor()`` of it when the rule names one, else nothing folded (its
        name is not the value the code uses)."""
        if expr is not None and expr.get("kind") == "class":
            r = ctx.scope.resolve(TypeRef(tuple(expr.get("type", []))), ctx.chain, ctx.type_vars)
            return [{"value": r.name, "vtype": "java.lang.Class", "basis": "LITERAL", "placeholders": False}] \
                if not r.unresolved else [{"unresolved": render(expr), "reason": "unknown class"}]
        if role in ENUM_NAME_ROLES and expr is not None and expr.get("kind") in ("field", "name"):
            return [{"value": expr["parts"][-1], "vtype": "enum-name", "basis": "ENUM", "placeholders": False}]
        if accessor:
            text = f"{render(expr, ctx)}.{accessor}()"
            return outcome_json(self.folder._call(accessor, expr, [], ctx, 0, text))
        got = self.folder.fold_template(expr, ctx) if role == "url" else self.folder.fold(expr, ctx)
        if isinstance(got, Folded) and got.vtype.startswith("enum:") and role not in ENUM_NAME_ROLES:
            return [{"unresolved": render(expr, ctx), "reason": "an enum constant (the rule names no accessor)"}]
        return outcome_json(got)

    def _emit_annotation(self, hit: "AnnotationHit", target: str, facts: FileFacts, scope: FileScope, idx: int,
                         ctx: MemberContext, lines: tuple[int, int], extra: dict[str, Any]) -> None:
        rule = hit.rule
        targets = rule.match.annotation.targets
        if targets and target not in targets:
            return
        td = facts.types[idx]
        binary = scope.binary_of(td)
        cand = {
            "rule": rule.id, "emit": rule.emits.kind, "form": "annotation", "module": self.module,
            "path": facts.path, "lines": list(lines), "target": target, "annotation": hit.fqn,
            "type": self._type_info(td, binary),
            "roles": self._roles_from_args(rule, hit.args, ctx),
            "attrs": {"annotation_args": {k: render(v) for k, (v, _) in sorted(hit.args.items())}},
        }
        if hit.via:
            cand["attrs"]["via_annotation"] = hit.via
        if rule.emits.attributes:
            cand["emit_attrs"] = rule.emits.attributes
        cand.update(extra)
        self.out.append(cand)

    def _type_info(self, td: TypeDecl, binary: str) -> TypeInfo:
        stable = f"{self.ns}/{binary}"
        return {"binary": binary, "stable": stable, "rid": ids.entity_record_id("TYPE", stable), "kind": td.kind,
                "nesting": td.nesting, "simple": td.simple_name, "abstract": "abstract" in td.modifiers}

    def _method_info(self, facts: FileFacts, scope: FileScope, idx: int, md: MethodDecl) -> MemberInfo:
        td = facts.types[idx]
        binary = scope.binary_of(td)
        sig = self.resolve_sig(facts, scope, idx, md)
        stable = f"{self.ns}/{binary}#{md.name}({','.join(sig)})"
        chain = type_chain(facts, idx)
        tv = scope.type_vars_for(chain, md.type_params)
        params = []
        for p, erased in zip(md.params, sig, strict=True):
            generic = [scope.resolve(a, chain, tv).name for a in p.type.args]
            params.append({"name": p.name, "type": erased, "type_args": generic,
                           "qualifier": self._qualifier(p.annotations, scope, chain)})
        ret = scope.resolve(md.return_type, chain, tv).name if md.return_type else "void"
        anns = [self._ann_name(a, scope, chain) for a in md.annotations]
        assigns: dict[str, str] = {}
        assigned_calls: dict[str, dict[str, str]] = {}
        if md.decl_kind == "CONSTRUCTOR" and md.body is not None:
            names = {p.name for p in md.params}
            assigns = {f.removeprefix("this."): v["parts"][0] for f, v in md.body.assignments
                       if v.get("kind") == "name" and len(v["parts"]) == 1 and v["parts"][0] in names
                       and (f.startswith("this.") or f not in names)}
            # ``this.out = channels.out()``: a field set from a no-argument call on a parameter
            for f, v in md.body.assignments:
                call = md.body.calls[v["ordinal"]] if v.get("kind") == "callref" and \
                    0 <= v.get("ordinal", -1) < len(md.body.calls) else None
                r = call.receiver if call is not None else None
                if call is not None and call.kind == "CALL" and call.arity == 0 and r is not None and \
                        r.get("kind") == "name" and len(r["parts"]) == 1 and r["parts"][0] in names:
                    assigned_calls[f.removeprefix("this.")] = {"parameter": r["parts"][0], "method": call.name}
        return {"name": md.name, "annotations": anns, "assigns": assigns, "assigned_calls": assigned_calls, "signature": sig, "stable": stable, "rid": ids.entity_record_id("METHOD", stable),
                "params": params, "return_type": ret, "modifiers": sorted(md.modifiers),
                "lines": [md.start_line, md.end_line],
                "autowired": any(a.endswith((".Autowired", ".Inject")) for a in anns)}

    # ------------------------------------------------------------ files
    def add_file(self, facts: FileFacts, scope: FileScope) -> None:
        """Candidates of one Java file (full facts) resolved in its (skeleton) scope."""
        for idx, td in enumerate(facts.types):
            chain = type_chain(facts, idx)
            type_ctx = MemberContext(scope, chain, self.module, None, None, scope.type_vars_for(chain))
            binary = scope.binary_of(td)
            for a in td.annotations:
                for hit in self._annotation_rules(a, scope, chain):
                    self._emit_annotation(hit, "TYPE", facts, scope, idx, type_ctx,
                                          (td.header_start, td.header_end), self._type_extra(facts, scope, idx))
            for f in td.fields:
                for a in f.annotations:
                    for hit in self._annotation_rules(a, scope, chain):
                        ftype = scope.resolve(f.type, chain, scope.type_vars_for(chain))
                        stable = f"{self.ns}/{binary}.{f.name}"
                        self._emit_annotation(hit, "FIELD", facts, scope, idx, type_ctx,
                                              (f.start_line, f.end_line),
                                              {"field": {"name": f.name, "type": ftype.name, "stable": stable,
                                                         "qualifier": self._qualifier(f.annotations, scope, chain),
                                                         "rid": ids.entity_record_id("FIELD", stable),
                                                         "type_args": [scope.resolve(x, chain, {}).name
                                                                       for x in f.type.args],
                                                         "modifiers": sorted(f.modifiers)}})
            for md in td.methods:
                ctx = MemberContext(scope, chain, self.module, md, md.body, scope.type_vars_for(chain, md.type_params))
                minfo = None
                for a in md.annotations:
                    for hit in self._annotation_rules(a, scope, chain):
                        minfo = minfo or self._method_info(facts, scope, idx, md)
                        extra: dict[str, Any] = {"member": minfo}
                        if hit.rule.emits.kind == "BEAN_METHOD":
                            extra["bean_properties"] = self._bean_setters(ctx)
                            made = self._constructed_fields(md, ctx, minfo)
                            if made:
                                extra["constructs"] = made
                            for rule in self.index.by_bean_class.get(minfo["return_type"], []):
                                self._bean_class(rule, facts, scope, idx, md, ctx, minfo)
                        self._emit_annotation(hit, "METHOD", facts, scope, idx, ctx,
                                              (md.start_line, md.end_line), extra)
                for pi, p in enumerate(md.params):
                    for a in p.annotations:
                        for hit in self._annotation_rules(a, scope, chain):
                            minfo = minfo or self._method_info(facts, scope, idx, md)
                            self._emit_annotation(hit, "PARAMETER", facts, scope, idx, ctx,
                                                  (md.start_line, md.end_line),
                                                  {"member": minfo, "param": dict(minfo["params"][pi], index=pi)})
                if md.body is not None and md.body.calls:
                    self._calls(facts, scope, idx, md, ctx)
            if td.clinit_body is not None and td.clinit_body.calls:
                ctx = MemberContext(scope, chain, self.module, None, td.clinit_body, scope.type_vars_for(chain))
                clinit = MethodDecl("<clinit>", "STATIC_INITIALIZER", ["static"], [], [], [], None, [], 0, 0, True, 0,
                                    td.clinit_body)
                self._calls(facts, scope, idx, clinit, ctx)
            self._types(facts, scope, idx, td, binary)

    def _bean_class(self, rule: Rule, facts: FileFacts, scope: FileScope, idx: int, md: MethodDecl,
                    ctx: MemberContext, minfo: MemberInfo) -> None:
        """A ``@Bean`` method returning a type a bean_class rule names: roles from the constructor
        call of that type and from builder calls in its body. A role argument that is a parameter
        of the method or a call of another method of the class is kept as a bean reference."""
        bm = rule.match.bean_class
        fqns = bm.fqn if isinstance(bm.fqn, list) else [bm.fqn]
        roles: Roles = {}
        for call in (md.body.calls if md.body else []):
            spec: dict[int, str] = {}
            if call.kind == "NEW":
                t = self.oracle.ref_type(call.new_type, scope, ctx.chain, ctx.type_vars)
                if t is not None and t.name in fqns:
                    spec = bm.ctor_args
            elif call.kind == "CALL":
                spec = bm.builders.get(call.name, {})
                keyed = bm.keyed_builders.get(call.name)
                if keyed and call.args is not None and len(call.args) == 2:
                    key = next((o.get("value") for o in self.fold_value(call.args[0], ctx) if "value" in o), None)
                    if key in keyed:
                        spec = {1: keyed[key]}
            for pos, role in spec.items():
                if call.args is not None and 0 <= pos < len(call.args) and role not in roles:
                    roles[role] = self._bean_ref(call.args[pos], ctx) or self.fold_value(call.args[pos], ctx, role=role)
        td = facts.types[idx]
        self.out.append({"rule": rule.id, "emit": rule.emits.kind, "form": "bean_class", "module": self.module,
                         "path": facts.path, "lines": [md.start_line, md.end_line], "target": "METHOD",
                         "type": self._type_info(td, scope.binary_of(td)), "member": minfo, "roles": roles,
                         "attrs": {"bean_type": minfo["return_type"],
                                   "bean_type_args": [scope.resolve(a, ctx.chain, ctx.type_vars).name
                                                      for a in (md.return_type.args if md.return_type else [])]}})

    def _bean_ref(self, expr: Expr, ctx: MemberContext) -> list[BeanRef] | None:
        """A bean reference: a parameter of the @Bean method (injected by type and name) or a call
        of another @Bean method of the class (``orderQueue()``)."""
        if expr.get("kind") == "name" and ctx.param(expr["parts"][0]) is not None:
            p = ctx.param(expr["parts"][0])
            t = ctx.scope.resolve(p.type, ctx.chain, ctx.type_vars).name
            return [{"ref": expr["parts"][0], "ref_kind": "param", "type": t}]
        if expr.get("kind") == "callref" and ctx.body is not None and 0 <= expr["ordinal"] < len(ctx.body.calls):
            c = ctx.body.calls[expr["ordinal"]]
            if c.kind == "CALL" and c.arity == 0 and (c.receiver is None or c.receiver.get("kind") == "this"):
                return [{"ref": c.name, "ref_kind": "method"}]
        return None

    def _constructed_fields(self, md: MethodDecl, ctx: MemberContext, minfo: MemberInfo) -> Constructs | None:
        """The fields of the object a ``@Bean`` method builds that hold its parameters: the one
        ``new T(…)`` of its return type in its body (outside lambdas), matched to a constructor of
        ``T`` (written or Lombok's) by arity, gives ``{"type": T, "fields": {field: parameter}}``.
        None when there is no such single construction or no argument is a bare parameter."""
        news = [c for c in (md.body.calls if md.body else []) if c.kind == "NEW" and not c.in_lambda]
        typed = [(c, t) for c in news if (t := self.oracle.ref_type(c.new_type, ctx.scope, ctx.chain, ctx.type_vars))
                 is not None and t.name == minfo["return_type"] and t.module]
        if len(typed) != 1 or typed[0][0].args is None:
            return None
        call, t = typed[0]
        found = self.oracle.decl(t.module, t.name)
        if found is None:
            return None
        scope, idx = found
        maps = [m for arity, m in constructor_fields(scope.facts.types[idx], scope, idx) if arity == len(call.args)]
        if len(maps) != 1:
            return None  # overloads of one arity: which one runs turns on the argument types
        fields = {}
        for fname, pos in sorted(maps[0].items()):
            a = call.args[pos]
            if a.get("kind") == "name" and len(a["parts"]) == 1 and ctx.param(a["parts"][0]) is not None:
                fields[fname] = a["parts"][0]
        return {"type": t.name, "fields": fields} if fields else None

    def _bean_setters(self, ctx: MemberContext) -> Roles:
        """Properties a ``@Bean`` method sets on the object it builds (``p = new X(); p.setTopic(t)``):
        setter calls with one argument on a local initialised by ``new``."""
        out: Roles = {}
        if ctx.body is None:
            return out
        for c in ctx.body.calls:
            if c.kind != "CALL" or c.arity != 1 or c.args is None or len(c.name) < 4 or not c.name.startswith("set") or \
                    not c.name[3].isupper() or not c.receiver or c.receiver.get("kind") != "name":
                continue
            lv = ctx.local(c.receiver["parts"][0])
            init = lv.init if lv is not None else None
            if init is None or init.get("kind") != "callref" or not 0 <= init["ordinal"] < len(ctx.body.calls) or \
                    ctx.body.calls[init["ordinal"]].kind != "NEW":
                continue
            out[c.name[3].lower() + c.name[4:]] = self.fold_value(c.args[0], ctx)
        return out

    def _type_extra(self, facts: FileFacts, scope: FileScope, idx: int) -> dict[str, TypeDetail]:
        """What the package needs of an annotated type: supertypes, constructors, methods, fields."""
        td = facts.types[idx]
        binary = scope.binary_of(td)
        chain = type_chain(facts, idx)
        tv = scope.type_vars_for(chain)
        supers = sorted(self.oracle.supertype_names(self.module, binary) - {binary})
        direct = []
        for ref in ([td.superclass] if td.superclass else []) + list(td.interfaces):
            r = scope.resolve(ref, chain[1:], tv)
            direct.append({"name": r.name, "interface": ref in td.interfaces,
                           "type_args": [scope.resolve(a, chain, tv).name for a in ref.args]})
        methods = [self._method_info(facts, scope, idx, md) for md in td.methods
                   if md.decl_kind in ("METHOD", "CONSTRUCTOR")]
        for sm in synthesize(td, scope, chain):
            if sm.kind == "METHOD" and sm.name == "<init>":
                sig = [scope.resolve(t, chain, tv).name for _, t in sm.params]
                stable = f"{self.ns}/{binary}#<init>({','.join(sig)})"
                methods.append({"name": "<init>", "signature": sig, "stable": stable,
                                "rid": ids.entity_record_id("METHOD", stable), "return_type": "void",
                                "params": [{"name": n, "type": e, "type_args": [scope.resolve(a, chain, tv).name
                                                                              for a in t.args], "qualifier": None}
                                           for (n, t), e in zip(sm.params, sig, strict=True)],
                                "modifiers": sorted(sm.modifiers), "lines": [td.header_start, td.header_end],
                                "autowired": False, "synthesized_by": sm.cause})
        type_ctx = MemberContext(scope, chain, self.module, None, None, tv)
        return {"type_detail": {
            "supertypes": supers, "direct_supertypes": direct, "package": facts.package,
            "methods": methods,
            "fields": [{"name": f.name, "type": scope.resolve(f.type, chain, tv).name, "modifiers": sorted(f.modifiers),
                        "annotations": [self._ann_name(a, scope, chain) for a in f.annotations],
                        "qualifier": self._qualifier(f.annotations, scope, chain),
                        "type_args": [scope.resolve(x, chain, tv).name for x in f.type.args],
                        "has_initializer": f.initializer is not None, "lines": [f.start_line, f.end_line],
                        # the initial value, when it folds to a literal (a @ConfigurationProperties default)
                        "initial": next((o["value"] for o in self.fold_value(f.initializer, type_ctx)
                                         if "value" in o and not o.get("placeholders")), None)
                        if f.initializer is not None and "static" not in f.modifiers else None}
                       for f in td.fields],
        }}

    def _ann_name(self, a: Annotation, scope: FileScope, chain: list[int]) -> str:
        r = scope.resolve_base(TypeRef(tuple(a.name.split("."))), chain, {})
        return r.name if r is not None else "?" + a.name

    def _qualifier(self, anns: list[Annotation], scope: FileScope, chain: list[int]) -> str | None:
        for a in anns:
            name = self._ann_name(a, scope, chain)
            if name.endswith(".Qualifier") or name.endswith(".Resource") or name.endswith(".Named"):
                v = a.args.get("value") or a.args.get("name")
                if v is not None and v.get("kind") == "str":
                    return v["value"]
        return None

    def _types(self, facts: FileFacts, scope: FileScope, idx: int, td: TypeDecl, binary: str) -> None:
        if not self.index.type_rules:
            return
        supers = self.oracle.supertype_names(self.module, binary)
        for rule in self.index.type_rules:
            for sup in rule.match.type.supertypes:
                if sup not in supers or binary == sup:
                    continue
                chain = type_chain(facts, idx)
                tv = scope.type_vars_for(chain)
                type_args = []
                for ref in ([td.superclass] if td.superclass else []) + list(td.interfaces):
                    r = scope.resolve(ref, chain[1:], tv)
                    if r.name == sup:
                        type_args = [scope.resolve(a, chain, tv).name for a in ref.args]
                extra = self._type_extra(facts, scope, idx)
                self.out.append({"rule": rule.id, "emit": rule.emits.kind, "form": "type", "module": self.module,
                                 "path": facts.path, "lines": [td.header_start, td.header_end], "target": "TYPE",
                                 "type": self._type_info(td, binary), "roles": {},
                                 "attrs": {"supertype": sup, "type_args": type_args},
                                 "emit_attrs": rule.emits.attributes, **extra})
                break  # one candidate per rule and type

    # ------------------------------------------------------------ calls
    def _declared_params(self, call: Any, ctx: MemberContext) -> list[str] | None:
        """The erased parameter types of the in-repo method a call's static types name (the overload
        javac picks by the argument types), None when the resolver is absent or does not decide one."""
        if self.calls is None:
            return None
        res = self.calls.resolve(call, ctx)
        d = res.declared
        return list(d.params) if d is not None and d.params is not None and res.status != "UNRESOLVED" else None

    def _calls(self, facts: FileFacts, scope: FileScope, idx: int, md: MethodDecl, ctx: MemberContext) -> None:
        minfo = None
        for call in md.body.calls:
            ctx.at = call.pos
            if call.kind == "CALL" and call.receiver is not None and call.receiver.get("kind") in ("name", "field"):
                ref = self._receiver_ref(call.receiver, ctx)
                if ref is not None:
                    minfo = minfo or self._method_info(facts, scope, idx, md)
                    self.out.append({"emit": "FIELD_CALL", "rule": "", "form": "call", "module": self.module,
                                     "path": facts.path, "lines": [call.line, call.end_line], "target": "CALL",
                                     "owner": ref["binary"], "field": ref["field"], "method": call.name,
                                     "arity": call.arity, "ordinal": call.ordinal,
                                     "signature": self._declared_params(call, ctx),
                                     "callsite_id": f"{minfo['stable']}@{call.ordinal}", "member": minfo})
            rules = self.index.by_call_method.get(call.name if call.kind == "CALL" else "<init>", [])
            if not rules or call.kind not in ("CALL", "NEW"):
                continue
            if call.kind == "CALL":
                recv = self.oracle.receiver_type(call, ctx)
            else:
                recv = self.oracle.ref_type(call.new_type, scope, ctx.chain, ctx.type_vars)
            for rule in rules:
                cm = rule.match.call
                if cm.arity is not None and call.arity != cm.arity:
                    continue
                if cm.min_arity is not None and call.arity < cm.min_arity:
                    continue
                wanted = cm.receiver_type if isinstance(cm.receiver_type, list) else [cm.receiver_type]
                if not any(self.oracle.is_subtype(recv, w) for w in wanted):
                    continue
                minfo = minfo or self._method_info(facts, scope, idx, md)
                self.out.append(self._call_candidate(rule, call, recv, facts, scope, idx, ctx, minfo))

    def _call_candidate(self, rule: Rule, call, recv: TypeOf | None, facts: FileFacts, scope: FileScope, idx: int,
                        ctx: MemberContext, minfo: MemberInfo) -> CallCandidate:
        cm = rule.match.call
        roles: Roles = {}
        arg_types: dict[str, str] = {}
        arg_kinds: dict[str, str] = {}
        attrs: MatchAttrs = {}
        taken = {p for p in cm.args if p >= 0}
        for pos, role in cm.args.items():
            i = pos if pos >= 0 else len(call.args) + pos
            if not 0 <= i < len(call.args) or (pos < 0 and i in taken):
                continue  # a position counted from the end never re-reads one named from the start
            roles.setdefault(role, []).extend(self.fold_value(call.args[i], ctx, cm.accessors.get(pos), role))
            t = self.oracle.expr_type(call.args[i], ctx)
            if t is not None:
                arg_types[role] = t.name
            arg_kinds.setdefault(role, self._arg_kind(call.args[i], ctx))
            if role == "sql":
                template = self._template(call.args[i], ctx)
                if template is not None and any("runtime" in p for p in template):
                    attrs["sql_template"] = template
            if role == "key":
                attrs["key_prefix"] = self._prefix(call.args[i], ctx)
            elif role == "topic" and rule.emits.tag_separator:
                attrs["topic_prefix"] = self._prefix(call.args[i], ctx)  # "topic:" + tag → the topic is known
            if role in ("topic", "exchange", "routing_key"):
                acc = _parameter_accessor(call.args[i], ctx)
                if acc is not None:  # topic, topicEnum.getTopic(): each caller's argument names the destination
                    attrs.setdefault("parameters", {})[role] = acc
            if role == "payload" and call.args[i].get("kind") == "name" and len(call.args[i]["parts"]) == 1:
                attrs["payload_name"] = call.args[i]["parts"][0]  # a parameter: a publishing helper's callers
            if role == "payload" and rule.emits.message is not None:
                built = self._message_roles(rule, call.args[i], ctx, roles)
                if built is not None and built[0] != call.line:
                    attrs["message_lines"] = list(built)  # where the message naming the topic was built
                if "topic" not in roles:  # the message comes from elsewhere (a parameter, a factory)
                    attrs["message_expression"] = render(call.args[i], ctx)
        if rule.emits.kind == "GATEWAY_ROUTE":
            attrs["lambda_calls"] = self._lambda_calls(call, ctx)
        elif rule.emits.kind == "HTTP_ROUTE":
            attrs["route_calls"] = self._route_calls(call, ctx, rule)
        return {
            "rule": rule.id, "emit": rule.emits.kind, "form": "call", "module": self.module,
            "path": facts.path, "lines": [call.line, call.end_line], "target": "CALL",
            "type": self._type_info(facts.types[idx], scope.binary_of(facts.types[idx])),
            "member": minfo, "roles": roles,
            "call": {"ordinal": call.ordinal, "name": call.name, "arity": call.arity,
                     "callsite_id": f"{minfo['stable']}@{call.ordinal}", "in_lambda": call.in_lambda,
                     "receiver_type": recv.name if recv else None,
                     "receiver": self._receiver_ref(call.receiver, ctx),
                     "receiver_root": self._receiver_root(call, ctx),
                     "receiver_call": self._receiver_call(call, ctx),
                     "chain": self._chain(call, ctx),
                     "receiver_kind": call.receiver.get("kind") if call.receiver else None,
                     "expression": render({"kind": "callref", "ordinal": call.ordinal}, ctx),
                     "arg_types": arg_types, "arg_kinds": arg_kinds},
            "attrs": attrs,
        }

    def _lambda_calls(self, call, ctx: MemberContext) -> list[LambdaCall]:
        """The calls inside the lambdas handed to ``call``, and to calls inside those, in body order
        (``route(r -> r.path("/x/**").filters(f -> f.stripPrefix(1)).uri("lb://svc"))``): each call's
        ``name``, the name of the call its lambda is handed to (``via``) and its arguments' outcomes,
        at most :data:`MAX_CHAIN`."""
        if ctx.body is None:
            return []
        inside = {call.ordinal}
        out: list[LambdaCall] = []
        for c in ctx.body.calls:
            if c.ordinal in inside or c.handed_to not in inside or c.kind != "CALL" or len(out) >= MAX_CHAIN:
                continue
            inside.add(c.ordinal)
            ctx.at = c.pos
            out.append({"name": c.name, "via": ctx.body.calls[c.handed_to].name, "line": c.line,
                        "args": [self.fold_value(a, ctx, role="http_method" if c.name == "method" else None)
                                 for a in (c.args or [])]})
        ctx.at = call.pos
        return out

    def _receiver_root(self, call, ctx: MemberContext) -> FieldRef | None:
        """The field at the start of a call chain (``webClient.get().uri(…)``: ``webClient``)."""
        r = call.receiver
        for _ in range(16):
            if r is None or r.get("kind") != "callref" or ctx.body is None or \
                    not 0 <= r["ordinal"] < len(ctx.body.calls):
                break
            r = ctx.body.calls[r["ordinal"]].receiver
        return self._receiver_ref(r, ctx) if r is not None and r.get("kind") in ("name", "field") else None

    def _arg_kind(self, expr: Expr, ctx: MemberContext) -> str:
        """An argument's expression kind; a call reference says which call it is (``ref`` for a
        method reference ``this::cb``, ``new`` for a constructor call)."""
        kind = expr.get("kind", "other")
        if kind == "callref" and ctx.body is not None and 0 <= expr["ordinal"] < len(ctx.body.calls):
            return {"REF": "ref", "NEW": "new"}.get(ctx.body.calls[expr["ordinal"]].kind, kind)
        return kind

    def _route_calls(self, call, ctx: MemberContext, rule: Rule) -> list[RouteCall]:
        """The routes of a functional router (HTTP_ROUTE rules): the call itself and the calls
        chained on its result, in order (``route().GET("/a", h).POST("/b", h).build()``,
        ``route(GET("/a"), h).andRoute(POST("/b"), h)``). Each: ``name``, ``line``, and — for a verb
        call (the rule's ``verbs``) with a path, or a route call (``route_methods``) whose first
        argument is a verb predicate call — ``verb`` and ``path`` (the path's outcomes)."""
        verbs = set(rule.emits.attributes.get("verbs", []))
        routes = set(rule.emits.attributes.get("route_methods", []))
        out: list[RouteCall] = []
        if ctx.body is None:
            return out
        on = {c.receiver["ordinal"]: c for c in reversed(ctx.body.calls) if c.kind == "CALL"
              and c.receiver is not None and c.receiver.get("kind") == "callref"}
        cur = call
        for _ in range(MAX_CHAIN):
            item: RouteCall = {"name": cur.name, "line": cur.line}
            first = cur.args[0] if cur.args else None
            if cur.name in verbs and cur.arity >= 2 and first is not None:
                item.update(verb=cur.name, path=self.fold_value(first, ctx))
            elif cur.name in routes and cur.arity == 2 and first is not None and first.get("kind") == "callref" \
                    and 0 <= first["ordinal"] < len(ctx.body.calls):
                pred = ctx.body.calls[first["ordinal"]]
                if pred.name in verbs and pred.arity == 1 and pred.args:
                    item.update(verb=pred.name, path=self.fold_value(pred.args[0], ctx))
            out.append(item)
            nxt = on.get(cur.ordinal)
            if nxt is None:
                break
            cur = nxt
        return out

    def _chain(self, call, ctx: MemberContext) -> list[str]:
        """Names of the calls made on the call's result, in order (``lambdaQuery().eq(…).list()``:
        ``[eq, list]`` for ``lambdaQuery``), at most :data:`MAX_CHAIN`."""
        out: list[str] = []
        if ctx.body is None:
            return out
        held = self._calls_on.get(id(ctx.body))
        if held is None or held[0] is not ctx.body:  # ordinal → the call made on its result, once per body
            on = {c.receiver["ordinal"]: c for c in reversed(ctx.body.calls) if c.kind == "CALL"
                  and c.receiver is not None and c.receiver.get("kind") == "callref"}
            held = self._calls_on[id(ctx.body)] = (ctx.body, on)
        on = held[1]
        cur = call.ordinal
        for _ in range(MAX_CHAIN):
            nxt = on.get(cur)
            if nxt is None:
                break
            out.append(nxt.name)
            cur = nxt.ordinal
        return out

    def _receiver_call(self, call, ctx: MemberContext) -> ReceiverCall | None:
        """The call a receiver is the result of (``webClient.get().uri(…)``: ``get``), if any."""
        r = call.receiver
        if r is None or r.get("kind") != "callref" or ctx.body is None:
            return None
        if not 0 <= r["ordinal"] < len(ctx.body.calls):
            return None
        inner = ctx.body.calls[r["ordinal"]]
        out: ReceiverCall = {"name": inner.name, "arity": inner.arity}
        if inner.name == "method" and inner.args:  # webClient.method(HttpMethod.PATCH).uri(…)
            out["http_method"] = self.fold_value(inner.args[0], ctx, role="http_method")
        return out

    def _prefix(self, expr: Expr, ctx: MemberContext) -> str | None:
        """The constant leading part of a key expression (``"lock:" + id`` → ``lock:``); it may
        hold ``${…}`` placeholders (a prefix from a ``@Value`` field) the package resolves."""
        if expr.get("kind") == "callref" and ctx.body is not None:
            call = ctx.body.calls[expr["ordinal"]] if 0 <= expr["ordinal"] < len(ctx.body.calls) else None
            if call is not None and call.name == "format" and call.args:
                head = self.folder.fold(call.args[0], ctx)
                if isinstance(head, Folded) and len(head.values) == 1:
                    return head.value.split("%", 1)[0] or None
            return None
        if expr.get("kind") == "name":
            lv = ctx.local(expr["parts"][0])
            if lv is not None and lv.assigned == 0 and lv.init is not None:
                return self._prefix(lv.init, ctx)
        if expr.get("kind") != "concat":
            r = self.folder.fold(expr, ctx)
            return r.value if isinstance(r, Folded) and len(r.values) == 1 and not r.vtype.startswith("enum:") \
                else None
        parts: list[str] = []
        for item in expr["items"]:
            r = self.folder.fold(item, ctx)
            if not isinstance(r, Folded) or len(r.values) > 1 or r.vtype.startswith("enum:"):
                break
            parts.append(r.value)
        return "".join(parts) or None

    def _template(self, expr: Expr, ctx: MemberContext, depth: int = 0) -> list[Value | RuntimePart] | None:
        """The parts of a string built by ``+`` (through a local assigned once): each item that folds
        to one value as its outcome, every other item as ``{"runtime": its Java text}``; None when the
        expression is no concatenation."""
        if depth > 8:
            return None
        if expr.get("kind") == "name":
            lv = ctx.local(expr["parts"][0])
            if lv is not None and lv.assigned == 0 and lv.init is not None:
                return self._template(lv.init, ctx, depth + 1)
            return None
        if expr.get("kind") != "concat":
            return None
        out: list[Value | RuntimePart] = []
        for item in expr["items"]:
            outs = self.fold_value(item, ctx)
            if len(outs) == 1 and "value" in outs[0]:
                out.append(outs[0])
            else:
                out.append({"runtime": render(item, ctx)})
        return out

    def _message_roles(self, rule: Rule, payload: Expr, ctx: MemberContext,
                       roles: Roles) -> tuple[int, int] | None:
        """Roles carried by a message object built in place or in a local assigned once
        (``send(new Message(topic, body))``, ``m = new Message(); m.setTopic(t); send(m)``): the
        rule names the message class, which constructor argument holds which role by arity, and
        which setters set a role. Roles the call's own arguments gave are kept. Returns the lines of
        the message's construction when it gave a role (None otherwise)."""
        spec = rule.emits.message
        expr = payload
        local = None
        if expr.get("kind") == "name":
            lv = ctx.local(expr["parts"][0])
            if lv is not None and lv.assigned == 0 and lv.init is not None:
                local = expr["parts"][0]
                expr = lv.init
        if expr.get("kind") != "callref" or ctx.body is None or not 0 <= expr["ordinal"] < len(ctx.body.calls):
            return None
        call = ctx.body.calls[expr["ordinal"]]
        if call.kind == "CALL" and spec.builder:
            return self._builder_headers(spec, call, ctx, roles)
        if call.kind != "NEW":
            return None
        t = self.oracle.ref_type(call.new_type, ctx.scope, ctx.chain, ctx.type_vars)
        if t is None or not self.oracle.is_subtype(t, spec.type):
            return None
        found: Roles = {}
        for pos, role in spec.ctor_args.get(len(call.args), {}).items():
            if 0 <= pos < len(call.args):
                found[role] = self.fold_value(call.args[pos], ctx)
        if local is not None:
            for c in ctx.body.calls:
                role = spec.setters.get(c.name)
                if role and c.kind == "CALL" and c.arity == 1 and c.args and c.receiver == {"kind": "name",
                                                                                      "parts": [local]}:
                    found[role] = self.fold_value(c.args[0], ctx)
        for role, outs in found.items():
            roles.setdefault(role, outs)
        return (call.line, call.end_line) if found else None

    def _builder_headers(self, spec: MessageSpec, call, ctx: MemberContext,
                         roles: Roles) -> tuple[int, int] | None:
        """Roles carried by the headers of a builder chain that starts with a static call on
        ``spec.builder`` (``MessageBuilder.withPayload(p).setHeader(KafkaHeaders.TOPIC, "t").build()``):
        each ``header_setters`` call of the chain whose header name is a constant named in
        ``spec.headers`` (by qualified name, or by its folded string value) gives that role its
        value. Roles the call's own arguments gave are kept. Returns the chain's lines when a
        header gave a role (None otherwise)."""
        found: Roles = {}
        first = call
        for _ in range(MAX_CHAIN):
            if call.name in spec.header_setters and call.arity == 2 and call.args:
                role = self._header_role(spec, call.args[0], ctx)
                if role is not None:
                    found.setdefault(role, self.fold_value(call.args[1], ctx))  # the last set wins
            r = call.receiver or {}
            if r.get("kind") != "callref" or not 0 <= r["ordinal"] < len(ctx.body.calls):
                break
            call = ctx.body.calls[r["ordinal"]]
        root = call.receiver or {}
        if root.get("kind") not in ("name", "field") or not found:
            return None
        t = ctx.scope.resolve(TypeRef(tuple(root["parts"])), ctx.chain, ctx.type_vars)
        if t.unresolved or t.name != spec.builder:
            return None
        for role, outs in found.items():
            roles.setdefault(role, outs)
        return min(first.line, call.line), max(first.end_line, call.end_line)

    def _header_role(self, spec: MessageSpec, key: Expr, ctx: MemberContext) -> str | None:
        """The role ``spec.headers`` gives a header-name expression: a constant by its qualified
        name (a static import, ``Type.NAME``), else its folded string value."""
        parts = key.get("parts") or []
        qualified = None
        if key.get("kind") == "name" and len(parts) == 1:
            qualified = ctx.scope.static_single.get(parts[0]) or next(
                (f"{w}.{parts[0]}" for w in ctx.scope.static_wildcards if f"{w}.{parts[0]}" in spec.headers), None)
        elif key.get("kind") in ("field", "name") and len(parts) >= 2:
            t = ctx.scope.resolve(TypeRef(tuple(parts[:-1])), ctx.chain, ctx.type_vars)
            qualified = None if t.unresolved else f"{t.name}.{parts[-1]}"
        if qualified in spec.headers:
            return spec.headers[qualified]
        values = [o.get("value") for o in self.fold_value(key, ctx)]
        return next((spec.headers[v] for v in values if isinstance(v, str) and v in spec.headers), None)

    def _receiver_ref(self, receiver: Expr | None, ctx: MemberContext) -> FieldRef | None:
        """The field a call's receiver reads (for wrapper beans and injected clients), if any."""
        fr = self.oracle.receiver_field(receiver, ctx)
        return None if fr is None else {"module": fr.module, "binary": fr.binary, "field": fr.field.name}


def _parameter_accessor(expr: Expr, ctx: MemberContext) -> ParameterAccessor | None:
    """A parameter ``p`` of the method (``{"parameter": p's index, "name": p}``), ``p.getX()`` (a getter
    called without arguments; ``"getter": getX`` added) or ``p.x`` (``"field": x``), else None."""
    if ctx.method is None:
        return None
    names = [p.name for p in ctx.method.params]
    if expr.get("kind") == "name" and len(expr["parts"]) == 1 and expr["parts"][0] in names and \
            ctx.local(expr["parts"][0]) is None:
        return {"parameter": names.index(expr["parts"][0]), "name": expr["parts"][0]}
    if expr.get("kind") == "field" and len(expr["parts"]) == 2 and expr["parts"][0] in names:
        return {"parameter": names.index(expr["parts"][0]), "name": expr["parts"][0], "field": expr["parts"][1]}
    if expr.get("kind") != "callref" or ctx.body is None or not 0 <= expr["ordinal"] < len(ctx.body.calls):
        return None
    call = ctx.body.calls[expr["ordinal"]]
    r = call.receiver or {}
    if call.kind == "CALL" and call.arity == 0 and r.get("kind") == "name" and len(r["parts"]) == 1 and \
            r["parts"][0] in names and ctx.local(r["parts"][0]) is None:
        return {"parameter": names.index(r["parts"][0]), "name": r["parts"][0], "getter": call.name}
    return None


class XmlProbe:
    """Candidates of one module's Spring/RPC/MQ XML resources."""

    def __init__(self, module: str, index: RuleIndex) -> None:
        self.module = module
        self.index = index
        self.out: list[Candidate] = []

    def add_file(self, path: str, data: bytes) -> None:
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


def split_list(value: str) -> list[str]:
    """Spring's comma/semicolon/space separated lists (``base-package="a.b, c.d"``)."""
    return [v for v in (x.strip() for x in value.replace(";", ",").replace("\n", ",").split(",")) if v]
