"""Module-level matching of rules against a module's Java code: annotations, calls, bean classes,
types (docs/rules.md §3). Which rules an annotation matches is probes/rule_index.py's; what a
matched call's arguments carry is probes/call_candidates.py's; XML resources are matched by
probes/xml_candidates.py.

Everything here is independent of the service that holds the module: a match
becomes a *candidate* (a plain dict) with the values its roles carry, folded as
far as constants, enums, locals and config annotations allow (placeholders are
left for the package, which knows its configuration). The package decides,
with its Spring context, what is loaded and what it means (``emit.py``).

A candidate: ``rule``, ``emit``, ``form``, ``module``, ``path``, ``lines``,
``target`` (TYPE, METHOD, FIELD, PARAMETER, CALL; XML for XML candidates), owner ``type``
(binary, stable, rid), ``member`` / ``field`` / ``param`` details, ``roles``
(role → list of outcomes), ``attrs``. An outcome is ``{"value", "vtype",
"basis", "placeholders"}`` or ``{"unresolved", "reason"}``.
"""

from __future__ import annotations

from typing import Any, TYPE_CHECKING

from diting.ir import ids
from diting.java.lombok import synthesize
from diting.java.names import FileScope
from diting.java.facts import Annotation, FileFacts, MethodDecl, TypeDecl, TypeRef, type_chain
from diting.probes.call_candidates import CallCandidates
from diting.probes.model import Rule
from diting.probes.rule_index import AnnotationHit, AnnotationRules, RuleIndex
from diting.resolve.fold import ExpressionFolder, Folded, FoldOutcome, Unfolded, constructor_fields, render
from diting.resolve.types import MemberContext, TypeOracle

if TYPE_CHECKING:
    from diting.java.facts import Expr
    from diting.probes.matches import (BeanRef, Candidate, Constructs, MemberInfo, Outcome, Roles, TypeDetail,
                                       TypeInfo)


#: roles whose value is an enum constant's name (``RequestMethod.GET``, ``HttpMethod.POST``)
ENUM_NAME_ROLES = {"http_method"}


def outcome_json(o: FoldOutcome) -> list[Outcome]:
    """An outcome as JSON; a value with several possibilities gives several entries."""
    if isinstance(o, Unfolded):
        return [{"unresolved": o.expression, "reason": o.reason}]
    return [{"value": v, "vtype": o.vtype, "basis": o.basis, "placeholders": o.placeholders or "${" in v}
            for v in o.values]


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
        self.annotation_rules = AnnotationRules(index, oracle)
        #: builds the candidates of matched calls
        self.call_candidates = CallCandidates(module, oracle, folder, self.fold_value)

    # ------------------------------------------------------------ annotations
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
                for hit in self.annotation_rules.matching(a, scope, chain):
                    self._emit_annotation(hit, "TYPE", facts, scope, idx, type_ctx,
                                          (td.header_start, td.header_end), self._type_extra(facts, scope, idx))
            for f in td.fields:
                for a in f.annotations:
                    for hit in self.annotation_rules.matching(a, scope, chain):
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
                    for hit in self.annotation_rules.matching(a, scope, chain):
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
                        for hit in self.annotation_rules.matching(a, scope, chain):
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
                ref = self.call_candidates.receiver_ref(call.receiver, ctx)
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
                td = facts.types[idx]
                self.out.append(self.call_candidates.candidate(rule, call, recv, facts.path,
                                                               self._type_info(td, scope.binary_of(td)), ctx, minfo))

