"""Call-site resolution: which method a call reaches (docs/callgraph.md §2, §3; the base of the call graph).

For one :class:`~diting.java.facts.CallSite` in a member body, :meth:`CallResolver.resolve` gives a
:class:`CallResolution`: the status (RESOLVED, AMBIGUOUS with every candidate, UNRESOLVED with the
reason), the ``dispatch_kind`` and the target methods.

- The receiver's static type comes from :class:`~diting.resolve.types.TypeOracle` (locals, fields,
  parameters, ``this``/``super``, chained calls with known return types, type names for static calls);
  an unqualified call looks in the type and its outer types, then the file's static imports.
- The declared method is found by name and arity (varargs included) in the type and its in-repo
  ancestors, the most derived declaration of each signature; overloads of one arity are told apart
  by the argument types that are known (exactly, or a subtype in the repository; a primitive widens
  and boxes), else the call is AMBIGUOUS among them.
- Dispatch: a static method, a constructor, ``super.m()`` and ``this(…)``/``super(…)`` are STATIC;
  a call on an interface type is INTERFACE, on a class VIRTUAL. Virtual and interface calls reach the
  in-repo overrides of the declared method in subtypes of the receiver type: one method (the
  declaration itself when it has a body and nothing overrides it, or the single implementation of
  an abstract one) is RESOLVED, several are AMBIGUOUS — narrowing by Spring bindings belongs to the
  caller, which knows the injected bean.
- A receiver type outside the repository (a library) is an external target: the static type and the
  method name (its signature unknown), RESOLVED with ``external``.

Never a guess: an unknown receiver type, an unknown method, or arguments that no candidate takes
give UNRESOLVED with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass

from diting.java.lombok import synthesize
from diting.java.facts import CallSite, MethodDecl, Param, TypeRef
from diting.resolve.types import MemberContext, TypeOf, TypeOracle

#: primitive widening (JLS 5.1.2) and the boxed type of each primitive
_WIDENS = {"byte": {"short", "int", "long", "float", "double"}, "short": {"int", "long", "float", "double"},
           "char": {"int", "long", "float", "double"}, "int": {"long", "float", "double"},
           "long": {"float", "double"}, "float": {"double"}}
_BOXES = {"boolean": "java.lang.Boolean", "byte": "java.lang.Byte", "short": "java.lang.Short",
          "char": "java.lang.Character", "int": "java.lang.Integer", "long": "java.lang.Long",
          "float": "java.lang.Float", "double": "java.lang.Double"}


@dataclass(frozen=True)
class MethodTarget:
    """A method a call may reach: ``module`` None for a library type; ``params`` the erased parameter
    types (None when unknown: a library method)."""

    module: str | None
    binary: str
    name: str
    params: tuple[str, ...] | None

    @property
    def signature(self) -> str:
        return f"{self.binary}#{self.name}({','.join(self.params) if self.params is not None else '?'})"


@dataclass(frozen=True)
class CallResolution:
    """What a call site reaches: ``status`` RESOLVED (one target), AMBIGUOUS (every candidate) or
    UNRESOLVED (``reason``); ``dispatch_kind`` STATIC, VIRTUAL or INTERFACE; ``declared`` the method the
    static types name; ``external`` for a library target."""

    status: str
    dispatch_kind: str | None
    targets: tuple[MethodTarget, ...] = ()
    declared: MethodTarget | None = None
    external: bool = False
    reason: str = ""


@dataclass(frozen=True)
class _Decl:
    module: str
    binary: str
    method: MethodDecl
    params: tuple[str, ...]


class CallResolver:
    """Resolves call sites against the repository's types (see the module docstring)."""

    def __init__(self, oracle: TypeOracle) -> None:
        self.oracle = oracle
        self._subtypes: dict[tuple[str, str], list[tuple[str, str]]] | None = None
        self._decls: dict[tuple[str, str], list[_Decl]] = {}
        self._by_name: dict[tuple[str, str], dict[str, list[_Decl]]] = {}

    # ------------------------------------------------------------ the repository's methods
    def _declared(self, module: str, binary: str) -> list[_Decl]:
        """Methods and constructors a type declares, with erased parameter types (memoised)."""
        key = (module, binary)
        if key in self._decls:
            return self._decls[key]
        out: list[_Decl] = []
        found = self.oracle.decl(module, binary)
        if found is not None:
            scope, idx = found
            td = scope.facts.types[idx]
            chain = scope._chain_of(idx)
            for md in td.methods:
                if md.decl_kind not in ("METHOD", "CONSTRUCTOR", "COMPACT_CONSTRUCTOR"):
                    continue
                tv = scope.type_vars_for(chain, md.type_params)
                params = tuple(scope.resolve(p.type, chain, tv).name for p in md.params)
                out.append(_Decl(module, binary, md, params))
            # members Lombok, records and javac add (accessors, constructors): concrete, in the repository
            have = {(d.method.name, d.params) for d in out}
            tv = scope.type_vars_for(chain)
            for sm in synthesize(td, scope, chain):
                if sm.kind != "METHOD":
                    continue
                params = tuple(scope.resolve(t, chain, tv).name for _, t in sm.params)
                if (sm.name, params) in have:
                    continue
                have.add((sm.name, params))
                md = MethodDecl(sm.name, "CONSTRUCTOR" if sm.name == "<init>" else "METHOD", list(sm.modifiers), [],
                                [], [Param(n, t, []) for n, t in sm.params], sm.type, [], 0, 0, True, 0, None)
                out.append(_Decl(module, binary, md, params))
        self._decls[key] = out
        return out

    def _named(self, module: str, binary: str, name: str) -> list[_Decl]:
        """The methods (or ``<init>`` constructors) ``name`` a type declares: :meth:`_declared` indexed
        by name once per type, so a lookup never walks a class of thousands of members."""
        key = (module, binary)
        index = self._by_name.get(key)
        if index is None:
            index = {}
            for d in self._declared(module, binary):
                index.setdefault(d.method.name, []).append(d)
            self._by_name[key] = index
        return index.get(name, [])

    def _subtypes_of(self, module: str, binary: str) -> list[tuple[str, str]]:
        """Every in-repo type whose ancestors include ``(module, binary)`` (index built once)."""
        if self._subtypes is None:
            index: dict[tuple[str, str], list[tuple[str, str]]] = {}
            registry = self.oracle.registry
            for key in sorted(registry._decl):
                for anc in registry.ancestors(*key):
                    index.setdefault(anc, []).append(key)
            self._subtypes = index
        return self._subtypes.get((module, binary), [])

    def _candidates(self, module: str, binary: str, name: str, arity: int) -> list[_Decl]:
        """Methods ``name`` taking ``arity`` arguments visible in the type: its own and its ancestors',
        the most derived declaration of each signature."""
        out: list[_Decl] = []
        seen: set[tuple[str, ...]] = set()
        owners = [(module, binary)] if name == "<init>" else \
            [(module, binary)] + self.oracle.registry.ancestors(module, binary)  # constructors are not inherited
        for m, b in owners:
            for d in self._named(m, b, name):
                if not _takes(d.method, arity) or d.params in seen:
                    continue
                seen.add(d.params)
                out.append(d)
        return out

    def accessor(self, t: MethodTarget) -> tuple[bool, str | None]:
        """``(trivial, field)``: whether the in-repo method ``t`` only reads or writes a field — an
        accessor Lombok or a record adds, or a zero-argument method whose body is ``return f`` — and,
        for a getter, the field it returns."""
        if t.module is None or t.name == "<init>" or t.params is None:
            return False, None
        found = self.oracle.decl(t.module, t.binary)
        if found is None:
            return False, None
        td = found[0].facts.types[found[1]]
        if not t.params and t.name in td.getter_fields:
            return True, td.getter_fields[t.name]
        for d in self._named(t.module, t.binary, t.name):
            if d.params == t.params:
                if d.method.start_line != 0:
                    return False, None  # declared in the source: not synthesized
                if len(t.params) == 1 and t.name.startswith("set"):
                    return True, None  # a Lombok setter
                if not t.params and td.kind == "RECORD" and any(p.name == t.name for p in td.record_components):
                    return True, t.name
                base = t.name[3:] if t.name.startswith("get") else t.name[2:] if t.name.startswith("is") else ""
                if not t.params and base[:1].isupper():
                    return True, base[:1].lower() + base[1:]  # a Lombok getter
                return False, None  # values(), valueOf(…), a constructor: members javac adds
        return False, None

    # ------------------------------------------------------------ resolution
    def resolve(self, call: CallSite, ctx: MemberContext) -> CallResolution:
        """The methods ``call`` reaches in ``ctx`` (see the module docstring)."""
        if call.kind == "NEW":
            owner = self.oracle.ref_type(call.new_type, ctx.scope, ctx.chain, ctx.type_vars)
            return self._among(owner, "<init>", call, ctx, "STATIC", "type of new")
        if call.kind == "CTOR":
            if call.name == "super":
                td = ctx.type_decl
                owner = self.oracle.ref_type(td.superclass, ctx.scope, ctx.chain[1:], ctx.type_vars) \
                    if td.superclass else TypeOf("java.lang.Object")
            else:
                owner = TypeOf(ctx.binary, ctx.module)
            return self._among(owner, "<init>", call, ctx, "STATIC", "constructor owner")
        if call.kind == "REF":
            return self._reference(call, ctx)
        if call.receiver is None:
            return self._unqualified(call, ctx)
        owner = self.oracle.receiver_type(call, ctx)
        special = call.receiver.get("kind") == "super"
        return self._among(owner, call.name, call, ctx, "STATIC" if special else None, "receiver type",
                           dispatch_on=not special)

    def _reference(self, call: CallSite, ctx: MemberContext) -> CallResolution:
        """``recv::name`` / ``Type::new``: the method named, when one signature has that name (the
        functional interface it is converted to, which would pick among several, is not typed here)."""
        r = call.receiver or {}
        if r.get("kind") == "this":
            owner: TypeOf | None = TypeOf(ctx.binary, ctx.module)
        elif r.get("kind") == "super":
            td = ctx.type_decl
            owner = self.oracle.ref_type(td.superclass, ctx.scope, ctx.chain[1:], ctx.type_vars) \
                if td.superclass else TypeOf("java.lang.Object")
        else:
            owner = self.oracle.expr_type(r, ctx) if r else None
        name = "<init>" if call.name == "new" else call.name
        if owner is None:
            return CallResolution("UNRESOLVED", None, reason="receiver type unknown")
        if owner.module is None or owner.name.endswith("[]"):
            target = MethodTarget(None, owner.name, name, None)
            return CallResolution("RESOLVED", "STATIC" if owner.static or name == "<init>" else "VIRTUAL",
                                  (target,), target, external=True)
        owners = [(owner.module, owner.name)] if name == "<init>" else \
            [(owner.module, owner.name)] + self.oracle.registry.ancestors(owner.module, owner.name)
        arities = sorted({len(d.params) for m, b in owners for d in self._named(m, b, name)})
        if not arities:
            if name == "<init>":
                return CallResolution("UNRESOLVED", "STATIC", reason=f"no constructor of {owner.name}")
            target = MethodTarget(None, owner.name, name, None)
            return CallResolution("RESOLVED", "STATIC" if owner.static else "VIRTUAL", (target,), target,
                                  external=True)
        found = [self._among(owner, name, _with_arity(call, n), ctx, "STATIC" if r.get("kind") == "super" else None,
                             "receiver type", dispatch_on=r.get("kind") != "super") for n in arities]
        if len(found) == 1:
            return found[0]
        targets = tuple(dict.fromkeys(t for f in found for t in f.targets))
        if len(targets) < 2:
            return next((f for f in found if f.targets), found[0])
        return CallResolution("AMBIGUOUS", found[0].dispatch_kind, targets,
                              reason=f"{name} has {len(arities)} arities; the functional interface is not typed")

    def _unqualified(self, call: CallSite, ctx: MemberContext) -> CallResolution:
        """``m(…)``: the type, then its outer types, then a static import of ``m``."""
        for idx in ctx.chain:
            binary = ctx.scope.binary_of(ctx.scope.facts.types[idx])
            if self._candidates(ctx.module, binary, call.name, call.arity):
                return self._among(TypeOf(binary, ctx.module), call.name, call, ctx, None, "own type")
        imported = ctx.scope.static_single.get(call.name)
        owners = [imported.rsplit(".", 1)[0]] if imported else list(ctx.scope.static_wildcards)
        for owner_name in owners:
            r = ctx.scope.resolve_base(TypeRef(tuple(owner_name.split("."))), ctx.chain, ctx.type_vars)
            t = self.oracle._resolved_type(r)
            if t is None:
                continue
            if t.module is None or self._candidates(t.module, t.name, call.name, call.arity):
                return self._among(TypeOf(t.name, t.module, True), call.name, call, ctx, "STATIC", "static import")
        if not ctx.scope.static_wildcards and not imported:
            # nothing else can supply it: a method the type inherits from a library supertype
            # (java.lang.Object at least), called on the type itself
            target = MethodTarget(None, ctx.binary, call.name, None)
            return CallResolution("RESOLVED", "VIRTUAL", (target,), target, external=True)
        return CallResolution("UNRESOLVED", None, reason=f"no method {call.name}/{call.arity} in scope; a "
                                                         "static wildcard import of a library type may supply it")

    def _among(self, owner: TypeOf | None, name: str, call: CallSite, ctx: MemberContext, dispatch: str | None,
               what: str, dispatch_on: bool = True) -> CallResolution:
        if owner is None:
            return CallResolution("UNRESOLVED", dispatch, reason=f"{what} unknown")
        binary = owner.name
        if binary.endswith("[]") or binary in _BOXES:
            return CallResolution("RESOLVED", dispatch or "VIRTUAL", (MethodTarget(None, binary, name, None),),
                                  external=True)
        if owner.module is None and _local_of_repo(binary, self.oracle):
            # ``new Local()`` where Local names a local class the name lookup did not place
            simple = binary.rsplit("$", 1)[-1].lstrip("0123456789")
            return CallResolution("UNRESOLVED", dispatch, reason=f"several local classes named {simple} in "
                                                                 f"{binary.split('$', 1)[0]}: which one is not told apart")
        if owner.module is None:  # a library type: the static type names the target
            target = MethodTarget(None, binary, name, None)
            kind = dispatch or ("STATIC" if owner.static else "VIRTUAL")
            return CallResolution("RESOLVED", kind, (target,), target, external=True)
        cands = self._candidates(owner.module, binary, name, call.arity)
        if not cands and name == "<init>":
            if call.arity == 0 and not self._named(owner.module, binary, "<init>"):
                implicit = MethodTarget(owner.module, binary, "<init>", ())  # the implicit default constructor
                return CallResolution("RESOLVED", "STATIC", (implicit,), implicit)
            return CallResolution("UNRESOLVED", "STATIC", reason=f"no constructor of {binary} takes {call.arity} "
                                                                 "argument(s)")
        if not cands:
            return self._inherited(owner, name, dispatch)
        fitting = self._by_arguments(cands, call, ctx)
        if not fitting:
            if self._library_supertypes(owner):
                # no in-repo method takes these arguments: an overload a library supertype declares
                return self._inherited(owner, name, dispatch)
            return CallResolution("UNRESOLVED", dispatch, reason=f"no overload of {name} takes the arguments")
        cands = fitting
        if len(cands) > 1:
            if dispatch is None:
                dispatch = "STATIC" if owner.static or all("static" in d.method.modifiers for d in cands) else \
                    "INTERFACE" if self._is_interface(owner) else "VIRTUAL"
            return CallResolution("AMBIGUOUS", dispatch, tuple(_target(d) for d in cands),
                                  reason="overloads of one arity the argument types do not decide")
        d = cands[0]
        declared = _target(d)
        if dispatch is None:
            if "static" in d.method.modifiers or owner.static:
                dispatch = "STATIC"
            else:
                dispatch = "INTERFACE" if self._is_interface(owner) else "VIRTUAL"
        if dispatch == "STATIC" or not dispatch_on or "private" in d.method.modifiers or name == "<init>":
            return CallResolution("RESOLVED", dispatch, (declared,), declared)
        impls = self._overrides(owner, d)
        if d.method.has_body and "abstract" not in d.method.modifiers:
            impls = [d] + impls
        if not impls:
            return CallResolution("RESOLVED", dispatch, (declared,), declared)  # abstract, not implemented here
        if len(impls) == 1:
            return CallResolution("RESOLVED", dispatch, (_target(impls[0]),), declared)
        return CallResolution("AMBIGUOUS", dispatch, tuple(_target(i) for i in impls), declared,
                              reason=f"{len(impls)} implementations in the repository")

    def _library_supertypes(self, owner: TypeOf) -> list[str]:
        """Supertypes of an in-repo type that are not the repository's (java.lang.Object aside)."""
        names = self.oracle.supertype_names(owner.module, owner.name)
        return sorted(n for n in names if n != owner.name and n != "java.lang.Object"
                      and not self.oracle.registry.declared_anywhere(n))

    def _inherited(self, owner: TypeOf, name: str, dispatch: str | None) -> CallResolution:
        """A method an in-repo type inherits from a library supertype (``toString()``, MyBatis-Plus
        ``IService#getById`` …): the external target is that supertype when there is exactly one,
        else the receiver type (which supertype declares it is not known)."""
        libs = self._library_supertypes(owner)
        declaring = libs[0] if len(libs) == 1 else "java.lang.Object" if not libs else owner.name
        target = MethodTarget(None, declaring, name, None)
        kind = dispatch or ("STATIC" if owner.static else "INTERFACE" if self._is_interface(owner) else "VIRTUAL")
        return CallResolution("RESOLVED", kind, (target,), target, external=True)

    def _is_interface(self, owner: TypeOf) -> bool:
        found = self.oracle.decl(owner.module or "", owner.name)
        return found is not None and found[0].facts.types[found[1]].kind == "INTERFACE"

    def _overrides(self, owner: TypeOf, d: _Decl) -> list[_Decl]:
        """Concrete methods of in-repo subtypes of the receiver type overriding ``d`` (one per type).
        A parameter ``d`` declares with a type variable of its type is the type argument the subtype
        binds it with (``OrderHandler implements Handler<Order>``: ``handle(Order)`` overrides
        ``handle(T)``); an argument the subtype leaves unbound takes any type."""
        out: list[_Decl] = []
        found = self.oracle.decl(d.module, d.binary)
        type_params = [p.name for p in found[0].facts.types[found[1]].type_params] if found else []
        generic = [i for i, p in enumerate(d.method.params)
                   if len(p.type.parts) == 1 and not p.type.dims and p.type.parts[0] in type_params]
        for m, b in self._subtypes_of(owner.module or "", owner.name):
            wanted: list[str | None] = list(d.params)
            if generic:
                args = self.oracle.supertype_args(TypeOf(b, m), d.binary) or []
                for i in generic:
                    k = type_params.index(d.method.params[i].type.parts[0])
                    wanted[i] = args[k].name if k < len(args) and args[k] is not None else None
            for o in self._named(m, b, d.method.name):
                if len(o.params) == len(wanted) and o.method.has_body \
                        and all(w is None or w == p for w, p in zip(wanted, o.params)) \
                        and "abstract" not in o.method.modifiers and "static" not in o.method.modifiers:
                    out.append(o)
        return out

    def _by_arguments(self, cands: list[_Decl], call: CallSite, ctx: MemberContext) -> list[_Decl]:
        """The candidates every known argument type may fit (all of them when no argument is known);
        an argument rules a candidate out only when it certainly does not fit (:meth:`_unfit`)."""
        if call.args is None:
            return cands
        types = [self.oracle.expr_type(a, ctx) for a in call.args]
        if all(t is None for t in types):
            return cands
        # JLS 15.12.2: applicable without varargs expansion first (phases 1-2), then with it (phase 3)
        fixed = [d for d in cands if len(d.params) == len(types) and
                 not any(t is not None and self._unfit(t, d.params[i]) for i, t in enumerate(types))]
        if fixed:
            if len(fixed) > 1:
                sure = [d for d in fixed if all(t is None or self._fits(t, d.params[i]) for i, t in enumerate(types))]
                fixed = sure or fixed
            exact = [d for d in fixed if all(t is None or t.name == d.params[i] for i, t in enumerate(types))]
            return exact if len(exact) == 1 else fixed
        return [d for d in cands if _varargs(d) and
                not any(t is not None and self._unfit(t, _param_at(d, i)) for i, t in enumerate(types))]

    def _fits(self, arg: TypeOf, param: str) -> bool:
        """``arg`` is known to fit ``param`` (same type, widening, boxing, a known subtype)."""
        if arg.name == param or param == "java.lang.Object":
            return True
        if param in _WIDENS.get(arg.name, ()) or _BOXES.get(arg.name) == param:
            return True
        if _BOXES.get(param) == arg.name:
            return True
        return self.oracle.is_subtype(arg, param)

    def _unfit(self, arg: TypeOf, param: str) -> bool:
        """``arg`` certainly does not fit ``param``: a primitive or String against another primitive or
        String, a library type against an in-repo type (no library class extends the repository's),
        or two in-repo types unrelated in the repository's hierarchy. A library parameter type may be
        a supertype of anything the scan cannot see, so it never rules an argument out."""
        if self._fits(arg, param):
            return False
        simple = set(_BOXES) | {"java.lang.String"}
        if arg.name in simple and param in simple:
            return True
        if param.startswith("?") or arg.name.startswith("?"):
            return False
        param_in_repo = self.oracle.registry.declared_anywhere(param)
        if not param_in_repo:
            return arg.name in _BOXES and param not in _BOXES.values() and param != "java.lang.Number"
        if arg.name in _BOXES or arg.name == "java.lang.String":
            return True
        return arg.module is None or self.oracle.registry.declared_anywhere(arg.name)


def _local_of_repo(binary: str, oracle: TypeOracle) -> bool:
    """``Outer$1Local``: a local or anonymous class name under an in-repo type."""
    head, sep, rest = binary.partition("$")
    return bool(sep) and rest[:1].isdigit() and oracle.registry.declared_anywhere(head)


def _with_arity(call: CallSite, arity: int) -> CallSite:
    """A copy of a method reference as a call of ``arity`` arguments of unknown type."""
    return CallSite(call.ordinal, "CALL", call.name, call.receiver, None, None, arity, call.line, call.end_line,
                    call.in_lambda, call.branch, call.handed_to)


def _varargs(d: _Decl) -> bool:
    return bool(d.method.params and d.method.params[-1].varargs)


def _param_at(d: _Decl, i: int) -> str:
    """The type argument ``i`` must fit: a varargs tail takes its element type."""
    if _varargs(d) and i >= len(d.params) - 1:
        last = d.params[-1]
        return last[:-2] if last.endswith("[]") else last
    return d.params[i] if i < len(d.params) else "?"


def _takes(md: MethodDecl, arity: int) -> bool:
    n = len(md.params)
    return n == arity or bool(md.params and md.params[-1].varargs and arity >= n - 1)


def _target(d: _Decl) -> MethodTarget:
    return MethodTarget(d.module, d.binary, d.method.name if d.method.decl_kind == "METHOD" else "<init>", d.params)
