"""Static types of expressions inside a member body: receivers of calls (docs/callgraph.md §2, the base of probes).

A receiver's type comes from, in order: ``this``/``super``; a local variable
(declared type, or the type of its initializer for ``var``); a parameter; a
field of the type, its outer types or its in-repo supertypes; a type name (a
static call); a qualified chain ``a.b.c`` walked field by field; the return
type of another call (an in-repo method found by name and arity in the
receiver's type and its ancestors, a Lombok getter, or a library method listed
by the catalog rules); ``new T(…)``; a cast. Unknown is ``None`` — never a guess.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TYPE_CHECKING

from diting.java.lombok import synthesize
from diting.java.names import FileScope, Resolved, TypeRegistry
from diting.java.facts import Body, CallSite, FieldDecl, MethodDecl, Param, TypeDecl, TypeRef

if TYPE_CHECKING:
    from diting.java.facts import Expr

#: nesting steps :meth:`TypeOracle.expr_type` follows (each call of a chain costs three)
MAX_EXPR_TYPE_DEPTH = 96

#: methods of a one-type-argument holder that hand each held element to their one lambda argument
#: (``provider.ifAvailable(b -> b.send(…))``, ``list.forEach(x -> …)``): the lambda's parameter is of
#: the receiver's type argument
ELEMENT_CONSUMERS = frozenset({"ifAvailable", "ifUnique", "ifPresent", "ifPresentOrElse", "forEach"})
_LITERAL_TYPES = {"str": "java.lang.String", "char": "char", "int": "int", "long": "long", "bool": "boolean"}


def _type_like(name: str) -> bool:
    """A member name written as a type is (``Entry``, ``TokenType``), not as a constant or field."""
    return name[:1].isupper() and any(ch.islower() for ch in name)


@dataclass
class MemberContext:
    """One member being analysed: its file scope, the type chain (innermost first), module, body."""

    scope: FileScope
    chain: list[int]
    module: str
    method: MethodDecl | None
    body: Body | None
    type_vars: dict[str, TypeRef | None] = field(default_factory=dict)
    #: for a member of a local or anonymous class: the member whose body declares the class (its
    #: locals and parameters are visible when no field of the class shadows them)
    enclosing: "MemberContext | None" = None
    #: the start byte of the expression being typed (which of several same-name locals it sees); -1
    at: int = -1

    @property
    def type_decl(self) -> TypeDecl:
        return self.scope.facts.types[self.chain[0]]

    @property
    def binary(self) -> str:
        return self.scope.binary_of(self.type_decl)

    def local(self, name: str) -> Any:
        """The local of the body with this name that a use at byte :attr:`at` sees: of several (sibling
        blocks, two loops), the nearest declared before it; the first when no position is set."""
        if self.body is None:
            return None
        index = self.__dict__.get("_locals")
        if index is None:
            index = {}
            for lv in sorted(self.body.locals, key=lambda v: v.pos):
                index.setdefault(lv.name, []).append(lv)
            self.__dict__["_locals"] = index
        found = index.get(name)
        if not found:
            return None
        if len(found) == 1 or self.at < 0:
            return found[0]
        before = [lv for lv in found if lv.pos <= self.at]
        return before[-1] if before else found[0]

    def param(self, name: str) -> Param | None:
        if self.method is None:
            return None
        for p in self.method.params:
            if p.name == name:
                return p
        return None


@dataclass(frozen=True)
class TypeOf:
    """A static type: ``name`` is the erased binary name; ``module`` is set for an in-repo type;
    ``static`` when the expression names the type itself (``Foo.bar()``)."""

    name: str
    module: str | None = None
    static: bool = False
    #: type arguments as declared (``Map<String, Channel>`` → String, Channel; None where unknown)
    args: tuple["TypeOf | None", ...] = ()


@dataclass(frozen=True)
class FieldRef:
    """A field an expression reads: the declaring type (module, binary) and the field."""

    module: str
    binary: str
    field: FieldDecl


class TypeOracle:
    """Answers "what type is this expression?" inside member bodies, across the repository."""

    def __init__(self, registry: TypeRegistry, library_returns: dict[str, str] | None = None,
                 library_fields: dict[str, str] | None = None) -> None:
        self.registry = registry
        self.library_returns = library_returns or {}
        #: ``Type#field`` → field type of library supertypes (``ServiceImpl#baseMapper`` → ``$0``)
        self.library_fields = library_fields or {}
        self._super_names: dict[tuple[str, str], set[str]] = {}
        self._super_args: dict[tuple[str, str, str], list[TypeOf | None] | None] = {}

    # ------------------------------------------------------------ types of the repository
    def decl(self, module: str, binary: str) -> tuple[FileScope, int] | None:
        return self.registry._decl.get((module, binary))

    def _resolved_type(self, r: Resolved | None) -> TypeOf | None:
        if r is None or r.unresolved or r.name.startswith("?"):
            return None
        if r.infos:
            return TypeOf(r.infos[0].binary, r.infos[0].module)
        return TypeOf(r.name)

    def ref_type(self, ref: TypeRef | None, scope: FileScope, chain: list[int],
                 type_vars: dict[str, TypeRef | None], _depth: int = 0) -> TypeOf | None:
        if ref is None:
            return None
        if ref.dims:
            r = scope.resolve_base(TypeRef(ref.parts, 0, ref.primitive), chain, type_vars)
            t = self._resolved_type(r)
            return TypeOf(t.name + "[]" * ref.dims) if t else None
        t = self._resolved_type(scope.resolve_base(ref, chain, type_vars))
        if t is None or not ref.args or _depth > 4:
            return t
        return TypeOf(t.name, t.module, t.static,
                      tuple(self.ref_type(a, scope, chain, type_vars, _depth + 1) for a in ref.args[:8]))

    def supertype_names(self, module: str | None, binary: str) -> set[str]:
        """The type and every supertype name (in-repo and library), through in-repo declarations."""
        key = (module or "", binary)
        if key in self._super_names:
            return self._super_names[key]
        out = {binary}
        self._super_names[key] = out
        if module is None:
            return out
        stack = [(module, binary)]
        seen = {(module, binary)}
        while stack:
            m, b = stack.pop()
            found = self.decl(m, b)
            if found is None:
                continue
            scope, idx = found
            td = scope.facts.types[idx]
            chain = scope._chain_of(idx)
            for ref in ([td.superclass] if td.superclass else []) + list(td.interfaces) + (
                    [td.anonymous_base] if td.anonymous_base else []):
                r = scope.resolve_base(ref, chain[1:], scope.type_vars_for(chain))
                if r is None:
                    continue
                out.add(r.name)
                for info in r.infos:
                    if (info.module, info.binary) not in seen:
                        seen.add((info.module, info.binary))
                        stack.append((info.module, info.binary))
        return out

    def supertype_args(self, t: TypeOf | None, target: str) -> list[TypeOf | None] | None:
        """The type arguments with which the in-repo type ``t`` extends or implements ``target``,
        through in-repo generic supertypes (``UserMapper extends BaseMapperX<User>`` and
        ``BaseMapperX<T> extends BaseMapper<T>`` give ``[User]`` for BaseMapper). An argument that
        stays a type variable or does not resolve is None; None when ``t`` does not reach
        ``target`` through a parameterised reference."""
        if t is None or t.module is None:
            return None
        key = (t.module, t.name, target)
        if key not in self._super_args:
            self._super_args[key] = None  # a cycle of declarations finds nothing
            self._super_args[key] = self._walk_super_args(t.module, t.name, target, {}, 0, set())
        return self._super_args[key]

    def _walk_super_args(self, module: str, binary: str, target: str, bound: dict[str, TypeOf | None],
                         depth: int, seen: set[tuple[str, str]]) -> list[TypeOf | None] | None:
        found = self.decl(module, binary)
        if found is None or depth > 16 or (module, binary) in seen:
            return None  # a type is walked once (cyclic declarations, which javac rejects, end here)
        seen.add((module, binary))
        scope, idx = found
        td = scope.facts.types[idx]
        chain = scope._chain_of(idx)
        tv = scope.type_vars_for(chain)
        own_vars = {p.name for p in td.type_params}
        for ref in ([td.superclass] if td.superclass else []) + list(td.interfaces):
            r = scope.resolve_base(ref, chain[1:], tv)
            if r is None:
                continue
            args: list[TypeOf | None] = []
            for a in ref.args:
                if len(a.parts) == 1 and a.parts[0] in own_vars and not a.args:
                    args.append(bound.get(a.parts[0]))
                else:
                    args.append(self.ref_type(a, scope, chain, tv))
            if r.name == target:
                return args
            for info in r.infos:
                sup = self.decl(info.module, info.binary)
                if sup is None:
                    continue
                params = [p.name for p in sup[0].facts.types[sup[1]].type_params]
                got = self._walk_super_args(info.module, info.binary, target,
                                            dict(zip(params, args)) if len(params) == len(args) else {}, depth + 1,
                                            seen)
                if got is not None:
                    return got
        return None

    def _library_member(self, owner: TypeOf, key: str, table: dict[str, str]) -> TypeOf | None:
        """The type a library member of one of ``owner``'s supertypes declares (``table``:
        ``Type#member`` → FQN, or ``$N`` for the N-th type argument ``owner`` binds that supertype with)."""
        for sup in sorted(self.supertype_names(owner.module, owner.name)):
            ret = table.get(f"{sup}#{key}")
            if not ret:
                continue
            if ret.startswith("$"):
                args = list(owner.args) if sup == owner.name and owner.args else \
                    self.supertype_args(owner, sup) or []
                i = int(ret[1:]) if ret[1:].isdigit() else -1
                return args[i] if 0 <= i < len(args) else None
            return TypeOf(ret)
        return None

    def is_subtype(self, t: TypeOf | None, fqn: str) -> bool:
        return t is not None and fqn in self.supertype_names(t.module, t.name.replace("[]", ""))

    # ------------------------------------------------------------ members of types
    def field_of(self, module: str, binary: str, name: str) -> FieldRef | None:
        """A field declared by the type or an in-repo supertype (Lombok ``log`` included; memoised)."""
        key = (module, binary, name)
        memo = self.__dict__.setdefault("_field_memo", {})
        if key not in memo:
            memo[key] = self._field_of(module, binary, name)
        return memo[key]

    def _own_fields(self, module: str, binary: str) -> dict[str, FieldRef]:
        """The fields a type declares by name (the first of a name; then a record's components, its
        private final fields), indexed once per type so a lookup never walks thousands of fields."""
        memo = self.__dict__.setdefault("_own_fields_memo", {})
        key = (module, binary)
        if key not in memo:
            out: dict[str, FieldRef] = {}
            found = self.decl(module, binary)
            if found is not None:
                td = found[0].facts.types[found[1]]
                for f in td.fields:
                    out.setdefault(f.name, FieldRef(module, binary, f))
                for p in td.record_components:
                    if p.name not in out:
                        out[p.name] = FieldRef(module, binary, FieldDecl(p.name, p.type, ["private", "final"],
                                                                         p.annotations, None, td.header_start,
                                                                         td.header_end, 0))
            memo[key] = out
        return memo[key]

    def _field_of(self, module: str, binary: str, name: str) -> FieldRef | None:
        for m, b in [(module, binary)] + self.registry.ancestors(module, binary):
            found = self.decl(m, b)
            if found is None:
                continue
            own = self._own_fields(m, b).get(name)
            if own is not None:
                return own
            scope, idx = found
            td = scope.facts.types[idx]
            if name == "log":
                for sm in synthesize(td, scope, scope._chain_of(idx)):
                    if sm.kind == "FIELD" and sm.name == name and sm.type is not None:
                        return FieldRef(m, b, FieldDecl(name, sm.type, sm.modifiers, [], None, 0, 0, 0))
        return None

    def field_type(self, fr: FieldRef, seen_from: TypeOf | None = None) -> TypeOf | None:
        """The declared type of a field; read through ``seen_from`` (a subtype of the declaring type),
        a type variable of the declaring type is replaced by the argument the subtype binds it to
        (``BaseBiz<M extends Mapper<T>, T> { M mapper; }`` seen from ``UserBiz extends
        BaseBiz<UserMapper, User>`` is ``UserMapper``; ``Mapper<T>`` becomes ``Mapper<User>``)."""
        found = self.decl(fr.module, fr.binary)
        if found is None:
            return None
        scope, idx = found
        chain = scope._chain_of(idx)
        declared = self.ref_type(fr.field.type, scope, chain, scope.type_vars_for(chain))
        binding = self.type_binding(seen_from, fr.module, fr.binary) if seen_from is not None else {}
        if not binding:
            return declared
        ref = fr.field.type
        if not ref.dims and len(ref.parts) == 1 and not ref.args and binding.get(ref.parts[0]) is not None:
            return binding[ref.parts[0]]
        if declared is None or not ref.args or ref.dims:
            return declared
        args = tuple(binding.get(a.parts[0]) if len(a.parts) == 1 and not a.args and a.parts[0] in binding else
                     (declared.args[i] if i < len(declared.args) else None) for i, a in enumerate(ref.args[:8]))
        return TypeOf(declared.name, declared.module, declared.static, args)

    def type_binding(self, sub: TypeOf | None, module: str, binary: str) -> dict[str, TypeOf | None]:
        """Type parameter name → the argument the in-repo subtype ``sub`` binds it to, for the
        generic in-repo type ``binary`` of ``module`` (None where unknown); empty when ``sub`` is the
        type itself or does not reach it through parameterised references."""
        if sub is None or sub.name == binary:
            return {}
        found = self.decl(module, binary)
        if found is None:
            return {}
        params = [p.name for p in found[0].facts.types[found[1]].type_params]
        if not params:
            return {}
        args = self.supertype_args(sub, binary)
        return dict(zip(params, args)) if args is not None and len(args) == len(params) else {}

    def method_of(self, module: str, binary: str, name: str, arity: int) -> tuple[str, str, MethodDecl] | None:
        """An in-repo method by name and arity in the type or its ancestors (the first found);
        Lombok-generated accessors included."""
        for m, b in [(module, binary)] + self.registry.ancestors(module, binary):
            found = self.decl(m, b)
            if found is None:
                continue
            scope, idx = found
            td = scope.facts.types[idx]
            hits = [md for md in td.methods if md.name == name and
                    (len(md.params) == arity or (md.params and md.params[-1].varargs and arity >= len(md.params) - 1))]
            if hits:
                return m, b, hits[0]
            for sm in synthesize(td, scope, scope._chain_of(idx)):
                if sm.kind == "METHOD" and sm.name == name and len(sm.params) == arity:
                    return m, b, MethodDecl(name, "METHOD", sm.modifiers, [], [], [Param(n, t, []) for n, t in sm.params],
                                            sm.type, [], 0, 0, False, 0, None)
        return None

    def return_type(self, owner: TypeOf, name: str, arity: int) -> TypeOf | None:
        """The return type of ``owner.name(arity args)``: in-repo, then the library catalog."""
        if owner.module is not None:
            hit = self.method_of(owner.module, owner.name, name, arity)
            if hit is not None:
                m, b, md = hit
                found = self.decl(m, b)
                if found is not None and md.return_type is not None:
                    scope, idx = found
                    chain = scope._chain_of(idx)
                    return self.ref_type(md.return_type, scope, chain, scope.type_vars_for(chain, md.type_params))
        return self._library_member(owner, name, self.library_returns)

    # ------------------------------------------------------------ expressions
    def expr_type(self, expr: Expr | None, ctx: MemberContext, _depth: int = 0) -> TypeOf | None:
        """The static type of ``expr`` in ``ctx``, or None when it cannot be known (also past
        :data:`MAX_EXPR_TYPE_DEPTH` nested steps: a builder chain of about 30 calls)."""
        if expr is None or _depth > MAX_EXPR_TYPE_DEPTH:
            return None
        k = expr.get("kind")
        if k in _LITERAL_TYPES:
            return TypeOf(_LITERAL_TYPES[k])
        if k == "class":
            return TypeOf("java.lang.Class")
        if k == "concat":
            return TypeOf("java.lang.String") if any(i.get("kind") == "str" for i in expr["items"]) else None
        if k == "this":
            return TypeOf(ctx.binary, ctx.module)
        if k == "super":
            td = ctx.type_decl
            return self.ref_type(td.superclass, ctx.scope, ctx.chain[1:], ctx.type_vars) if td.superclass else None
        if k == "name":
            return self._name_type(expr["parts"][0], ctx)
        if k == "field":
            return self._chain_type(list(expr["parts"]), ctx, _depth)
        if k == "new":
            return self.ref_type(TypeRef(tuple(expr["type"])), ctx.scope, ctx.chain, ctx.type_vars) \
                if expr.get("type") else None
        if k == "cast":
            return self.ref_type(TypeRef(tuple(expr["type"])), ctx.scope, ctx.chain, ctx.type_vars) \
                if expr.get("type") else None
        if k == "callref":
            return self.call_type(self._call(ctx, expr["ordinal"]), ctx, _depth + 1)
        if k == "call":
            recv = self.expr_type(expr.get("target_expr"), ctx, _depth + 1) if expr.get("target_expr") else \
                TypeOf(ctx.binary, ctx.module)
            return self.return_type(recv, expr["name"], len(expr.get("args") or [])) if recv else None
        return None

    def _call(self, ctx: MemberContext, ordinal: int) -> CallSite | None:
        if ctx.body is None or not 0 <= ordinal < len(ctx.body.calls):
            return None
        return ctx.body.calls[ordinal]

    def call_type(self, call: CallSite | None, ctx: MemberContext, _depth: int = 0) -> TypeOf | None:
        """The type a call evaluates to."""
        if call is None or _depth > MAX_EXPR_TYPE_DEPTH:
            return None
        if call.kind == "NEW":
            return self.ref_type(call.new_type, ctx.scope, ctx.chain, ctx.type_vars)
        if call.kind != "CALL":
            return None
        recv = self.receiver_type(call, ctx, _depth)
        return self.return_type(recv, call.name, call.arity) if recv else None

    def receiver_type(self, call: CallSite, ctx: MemberContext, _depth: int = 0) -> TypeOf | None:
        """The static type of a call's receiver; an unqualified call's receiver is the own type,
        or — when the file statically imports a method of that name and its own type declares
        none — the importing class (``import static …RouterFunctions.route``)."""
        if call.receiver is None:
            imported = ctx.scope.static_single.get(call.name)
            if imported is not None and "." in imported and ctx.chain and \
                    not any(md.name == call.name for md in ctx.scope.facts.types[ctx.chain[-1]].methods):
                t = self._resolved_type(ctx.scope.resolve(TypeRef(tuple(imported.rsplit(".", 1)[0].split("."))),
                                                          ctx.chain, ctx.type_vars))
                if t is not None:
                    return TypeOf(t.name, t.module, True)
            return TypeOf(ctx.binary, ctx.module)
        got = self.expr_type(call.receiver, ctx, _depth + 1)
        if got is None and call.receiver.get("kind") == "name" and len(call.receiver["parts"]) == 1:
            got = self._lambda_param_type(call, call.receiver["parts"][0], ctx, _depth)
        return got

    def _lambda_param_type(self, call: CallSite, name: str, ctx: MemberContext, _depth: int) -> TypeOf | None:
        """The type of lambda parameter ``name`` read by ``call``, when the call's innermost lambda is
        the one argument of an :data:`ELEMENT_CONSUMERS` method on a holder with one type argument
        and declares ``name`` (no nearer lambda parameter of that name): that argument; else None."""
        body = ctx.body
        if body is None or not 0 <= call.handed_to < len(body.calls) or call.pos < 0:
            return None
        outer = body.calls[call.handed_to]
        if outer.kind != "CALL" or outer.name not in ELEMENT_CONSUMERS or outer.arity != 1:
            return None
        decl = max((pos for n, pos in body.lambda_params if n == name and pos < call.pos), default=-1)
        if decl < outer.pos:
            return None  # not a parameter of the lambda handed to ``outer``
        holder = self.receiver_type(outer, ctx, _depth + 1)
        if holder is None or len(holder.args) != 1:
            return None
        return holder.args[0]

    def _name_type(self, name: str, ctx: MemberContext) -> TypeOf | None:
        lv = ctx.local(name)
        if lv is not None:
            if lv.type is not None:
                return self.ref_type(lv.type, ctx.scope, ctx.chain, ctx.type_vars)
            return self.expr_type(lv.init, ctx, 1)
        p = ctx.param(name)
        if p is not None:
            return self.ref_type(p.type, ctx.scope, ctx.chain, ctx.type_vars)
        fr = self.visible_field(name, ctx)
        if fr is not None:
            return self.field_type(fr, self._seen_from(fr, ctx))
        if ctx.enclosing is not None and (ctx.enclosing.local(name) is not None or
                                          ctx.enclosing.param(name) is not None):
            # a local or anonymous class reads a local of the method around it (effectively final)
            return self._name_type(name, ctx.enclosing)
        lib = self._library_member(TypeOf(ctx.binary, ctx.module), name, self.library_fields) \
            if self.library_fields else None
        if lib is not None:
            return lib
        r = ctx.scope.resolve_base(TypeRef((name,)), ctx.chain, ctx.type_vars)
        t = self._resolved_type(r)
        return TypeOf(t.name, t.module, True) if t else None

    def receiver_field(self, receiver: Expr | None, ctx: MemberContext, _depth: int = 0) -> FieldRef | None:
        """The field a call's receiver reads (``f.m()``, ``this.f.m()``, a local set once from a field),
        never a parameter."""
        if receiver is None:
            return None
        parts = None
        if receiver.get("kind") == "name":
            parts = receiver["parts"]
        elif receiver.get("kind") == "field" and receiver["parts"][0] == "this" and len(receiver["parts"]) == 2:
            parts = receiver["parts"][1:]
        if not parts or ctx.param(parts[0]) is not None:
            return None
        lv = ctx.local(parts[0])
        if lv is not None:
            # ``Svc s = this.svc; s.m()``: a local set once from a field reads that field
            init = lv.init or {}
            if lv.assigned or len(parts) != 1 or _depth > 4 or init.get("kind") not in ("name", "field"):
                return None
            return self.receiver_field(init, ctx, _depth + 1)
        return self.visible_field(parts[0], ctx)

    def visible_field(self, name: str, ctx: MemberContext) -> FieldRef | None:
        """A field visible by simple name: of the type, its outer types, or their supertypes."""
        for idx in ctx.chain:
            b = ctx.scope.binary_of(ctx.scope.facts.types[idx])
            fr = self.field_of(ctx.module, b, name)
            if fr is not None:
                return fr
        return None

    def _seen_from(self, fr: FieldRef, ctx: MemberContext) -> TypeOf | None:
        """The type of ``ctx``'s chain through which an inherited field is read (None: its own)."""
        for idx in ctx.chain:
            b = ctx.scope.binary_of(ctx.scope.facts.types[idx])
            if self.field_of(ctx.module, b, fr.field.name) == fr:
                return TypeOf(b, ctx.module) if b != fr.binary else None
        return None

    def _chain_type(self, parts: list[str], ctx: MemberContext, depth: int) -> TypeOf | None:
        if parts and parts[0] == "this":
            cur: TypeOf | None = TypeOf(ctx.binary, ctx.module)
            rest = parts[1:]
        else:
            cur = None
            rest = parts
            # the longest prefix that is a variable or a type
            if self._is_variable(parts[0], ctx):
                cur = self._name_type(parts[0], ctx)
                rest = parts[1:]
            else:
                for i in range(len(parts), 0, -1):
                    r = ctx.scope.resolve_base(TypeRef(tuple(parts[:i])), ctx.chain, ctx.type_vars)
                    t = self._resolved_type(r)
                    if t is None:
                        continue
                    if t.module is None and i > 1:
                        # ``Codes.EMPTY`` where Codes is an in-repo type: a field of it, not a nested type
                        # the repository does not declare; ``Boolean.TRUE``, ``Token.Type.BEARER``: a
                        # library type's constant or field, not a nested type (only a capitalised
                        # camel-case member is read as one)
                        outer = self._resolved_type(ctx.scope.resolve_base(TypeRef(tuple(parts[:i - 1])),
                                                                           ctx.chain, ctx.type_vars))
                        if outer is not None and (outer.module is not None or not _type_like(parts[i - 1])):
                            continue
                    cur = TypeOf(t.name, t.module, True)
                    rest = parts[i:]
                    break
        for p in rest:
            if cur is None:
                return None
            if cur.module is None:  # a library type's field: only what the catalog rules name
                cur = self._library_member(cur, p, self.library_fields) if self.library_fields else None
                continue
            fr = self.field_of(cur.module, cur.name, p)
            if fr is None and cur.static and self._enum_constant(cur, p):
                cur = TypeOf(cur.name, cur.module)  # an enum constant is an instance of its enum
                continue
            cur = self.field_type(fr, cur if fr is not None and fr.binary != cur.name else None) if fr is not None else \
                self._library_member(cur, p, self.library_fields) if self.library_fields else None
        return cur

    def _enum_constant(self, t: TypeOf, name: str) -> bool:
        found = self.decl(t.module or "", t.name)
        if found is None:
            return False
        td = found[0].facts.types[found[1]]
        return td.kind == "ENUM" and any(c.name == name for c in td.enum_constants)

    def _is_variable(self, name: str, ctx: MemberContext) -> bool:
        return ctx.local(name) is not None or ctx.param(name) is not None or \
            self.visible_field(name, ctx) is not None or (
                bool(self.library_fields) and
                self._library_member(TypeOf(ctx.binary, ctx.module), name, self.library_fields) is not None)
