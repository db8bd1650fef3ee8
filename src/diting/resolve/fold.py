"""Folding expressions inside member bodies to names (docs/scanning.md §9).

What folds: string and number literals; ``+`` concatenation; ``static final``
constants across files and modules, interface constants and enum constants
(the scan's :class:`~diting.java.constants.ConstantFolder`); enum getters and
fields that return a constructor argument (``QueueEnum.X.getExchange()``,
declared or Lombok); ``name()`` of an enum constant; ``String.format`` with
constant arguments; local variables assigned once; fields carrying a config
annotation (``@Value("${k:d}")``, ``@LafValue("k")``), which fold to a Spring
placeholder that the package resolves with its own configuration (docs/scanning.md §10).
A conditional expression (``a ? X : Y``) does not fold, whatever its branches.

Anything else is :class:`Unfolded`, keeping the expression's text for
``match_keys`` — never a guess.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TYPE_CHECKING

from diting.java.constants import ConstantFolder
from diting.java.names import TypeRegistry
from diting.java.facts import TypeRef
from diting.resolve.types import MemberContext, TypeOf, TypeOracle

if TYPE_CHECKING:
    from diting.java.facts import Expr

#: prefix of a placeholder key that names a Ducc/LAF key (a config snapshot, then the service's files)
DUCC_PREFIX = "@ducc:"
MAX_FOLD_DEPTH = 24
#: what a part of a URL template that does not fold becomes (:meth:`ExpressionFolder.fold_template`)
HOLE = "{}"
#: value types of Spring's URI builders while a chain on them is folded
URI_BUILDER = "org.springframework.web.util.UriComponentsBuilder"
URI_COMPONENTS = "org.springframework.web.util.UriComponents"
#: a ``RequestEntity`` (or its builder) folded to its URL: the value type is ``REQUEST_ENTITY#VERB``
REQUEST_ENTITY = "org.springframework.http.RequestEntity"
_ENTITY_VERBS = ("get", "post", "put", "delete", "patch", "head", "options")
#: builder calls that keep a RequestEntity's URL and method
_ENTITY_KEEPS = {"body", "header", "headers", "accept", "acceptCharset", "contentType", "contentLength",
                 "ifModifiedSince", "ifNoneMatch", "build"}
_URI_BUILDER_TYPES = {URI_BUILDER, "org.springframework.web.servlet.support.ServletUriComponentsBuilder",
                      "org.springframework.web.util.DefaultUriBuilderFactory"}
#: builder calls that leave the path as it is (the query string and fragment are not matched on)
_URI_KEEPS = {"queryParam", "queryParams", "queryParamIfPresent", "replaceQueryParam", "replaceQueryParams", "query",
              "replaceQuery", "fragment", "uriVariables", "encode", "userInfo", "cloneBuilder"}


@dataclass(frozen=True)
class Folded:
    """The folded value (``values``, one element), its Java type, and
    whether they still hold ``${…}`` placeholders for the package's configuration."""

    values: tuple[str, ...]
    vtype: str
    basis: str
    placeholders: bool = False

    @property
    def value(self) -> str:
        return self.values[0]


@dataclass(frozen=True)
class Unfolded:
    """An expression that does not fold: its text and why."""

    expression: str
    reason: str


FoldOutcome = Folded | Unfolded


def render(expr: Expr | None, ctx: MemberContext | None = None, depth: int = 0) -> str:
    """Readable source-like text of an expression JSON (for ``match_keys``)."""
    if expr is None:
        return ""
    if depth > 12:
        return "…"
    k = expr.get("kind")
    if k == "str":
        return '"' + expr["value"].replace("\\", "\\\\").replace('"', '\\"') + '"'
    if k == "char":
        return "'" + expr["value"] + "'"
    if k in ("int", "long", "bool"):
        return expr["value"] + ("L" if k == "long" else "")
    if k == "null":
        return "null"
    if k in ("name", "field"):
        return ".".join(expr["parts"])
    if k == "concat":
        return " + ".join(render(i, ctx, depth + 1) for i in expr["items"])
    if k == "call":
        target = expr.get("target")
        return f"{target + '.' if target else ''}{expr['name']}({', '.join(render(a, ctx, depth + 1) for a in expr['args'])})"
    if k == "callref" and ctx is not None and ctx.body is not None and 0 <= expr["ordinal"] < len(ctx.body.calls):
        c = ctx.body.calls[expr["ordinal"]]
        args = ", ".join(render(a, ctx, depth + 1) for a in c.args) if c.args is not None else \
            ("…" if c.arity else "")
        if c.kind == "NEW":
            return f"new {c.name}({args})"
        recv = render(c.receiver, ctx, depth + 1) if c.receiver is not None else ""
        return f"{recv + '.' if recv else ''}{c.name}({args})"
    if k == "new":
        return expr.get("text", "new …")
    if k == "this":
        return "this"
    if k == "super":
        return "super"
    if k == "class":
        return ".".join(expr.get("type", [])) + ".class"
    if k == "unary":
        return expr.get("op", "") + render(expr.get("operand"), ctx, depth + 1)
    if k == "binary":
        return f"{render(expr.get('left'), ctx, depth + 1)} {expr.get('op')} {render(expr.get('right'), ctx, depth + 1)}"
    if k == "cast":
        return f"({'.'.join(expr.get('type', []))}) {render(expr.get('value'), ctx, depth + 1)}"
    if k == "array":
        return "{" + ", ".join(render(i, ctx, depth + 1) for i in expr["items"]) + "}"
    return str(expr.get("text", k))


def ducc_placeholder(value: str) -> str:
    """A Ducc/LAF key expression as a placeholder of the ``ducc`` scheme: ``k`` → ``${@ducc:k}``,
    ``${k:d}`` → ``${@ducc:k:d}`` (a ``@LafValue`` may hold either)."""
    if "${" in value:
        return value.replace("${", "${" + DUCC_PREFIX)
    return "${" + DUCC_PREFIX + value + "}"


class ExpressionFolder:
    """Folds expressions of member bodies. ``config_annotations``: annotation FQN → scheme
    (``config`` or ``ducc``) for fields whose value comes from configuration;
    ``prefix_annotations``: class annotations (``@ConfigurationProperties(prefix)``) whose
    class's settable fields are bound to ``{prefix}.{field}``."""

    def __init__(self, constants: ConstantFolder, registry: TypeRegistry, oracle: TypeOracle,
                 config_annotations: dict[str, str], prefix_annotations: set[str] | None = None) -> None:
        self.constants = constants
        self.registry = registry
        self.oracle = oracle
        self.config_annotations = config_annotations
        self.prefix_annotations = prefix_annotations or set()
        self._holes = 0  # > 0 while a URL template is folded

    def fold_template(self, expr: Expr | None, ctx: MemberContext) -> FoldOutcome:
        """Fold a URL: as :meth:`fold`, except that a part of a concatenation, a ``String.format``
        argument or a URI builder's path that does not fold becomes a hole :data:`HOLE` (basis
        ``TEMPLATE``) — ``"http://svc/users/" + id`` → ``http://svc/users/{}``. Unfolded when
        nothing but holes would remain."""
        self._holes += 1
        try:
            got = self.fold(expr, ctx)
        finally:
            self._holes -= 1
        if isinstance(got, Folded) and all(v.replace(HOLE, "") == "" for v in got.values):
            return Unfolded(render(expr, ctx), "no part of the URL folds")
        return got

    # ------------------------------------------------------------ entry point
    def fold(self, expr: Expr | None, ctx: MemberContext, depth: int = 0) -> FoldOutcome:
        """Fold ``expr`` in ``ctx``."""
        if expr is None:
            return Unfolded("", "no expression")
        if depth > MAX_FOLD_DEPTH:
            return Unfolded(render(expr, ctx), "nested too deeply")
        k = expr.get("kind")
        simple = self.constants.fold(expr, ctx.scope, ctx.chain) if k in (
            "str", "char", "int", "long", "bool", "unary", "binary") else None
        if simple is not None:
            return Folded((simple[0],), simple[1], "LITERAL" if k in ("str", "char", "int", "long", "bool")
                          else "CONSTANT")
        if k == "concat":
            return self._concat(expr, ctx, depth)
        if k == "name":
            return self._name(expr["parts"][0], ctx, depth, expr)
        if k == "field":
            return self._field_expr(expr, ctx, depth)
        if k == "callref":
            call = ctx.body.calls[expr["ordinal"]] if ctx.body and 0 <= expr["ordinal"] < len(ctx.body.calls) else None
            if call is None:
                return Unfolded(render(expr, ctx), "unknown call")
            if call.args is None:  # the extractor kept no arguments: no rule reads this call
                return Unfolded(render(expr, ctx), f"the value returned by {call.name}() is not known statically")
            if call.kind == "NEW":
                return self._new(call, ctx, depth, render(expr, ctx))
            return self._call(call.name, call.receiver, call.args, ctx, depth, render(expr, ctx))
        if k == "call":
            return self._call(expr["name"], expr.get("target_expr"), expr.get("args") or [], ctx, depth,
                              render(expr, ctx))
        if k == "cond":
            return Unfolded(expr.get("text", ""), "conditional expression")
        if k == "cast":
            return self.fold(expr.get("value"), ctx, depth + 1)
        return Unfolded(render(expr, ctx), f"a {k} expression is not folded")

    # ------------------------------------------------------------ forms
    def _concat(self, expr: Expr, ctx: MemberContext, depth: int) -> FoldOutcome:
        parts: list[str] = []
        placeholders = False
        basis = "CONSTANT"
        any_string = False
        for item in expr["items"]:
            r = self.fold(item, ctx, depth + 1)
            if self._holes and (isinstance(r, Unfolded) or len(r.values) > 1 or r.vtype.startswith("enum:")):
                r = Folded((HOLE,), "java.lang.String", "TEMPLATE")
                basis = "TEMPLATE"
            if isinstance(r, Unfolded):
                return Unfolded(render(expr, ctx), f"{r.expression or 'a part'} does not fold: {r.reason}")
            if len(r.values) > 1:
                return Unfolded(render(expr, ctx), "a part has several possible values")
            if r.vtype == "java.lang.String":
                any_string = True
            if r.vtype.startswith("enum:"):
                return Unfolded(render(expr, ctx), "an enum constant's toString() may be overridden")
            parts.append(r.value)
            placeholders = placeholders or r.placeholders
            if r.basis in ("CONFIG", "TEMPLATE") and basis != "TEMPLATE":
                basis = r.basis
        if not any_string:
            simple = self.constants.fold(expr, ctx.scope, ctx.chain)
            if simple is not None:
                return Folded((simple[0],), simple[1], "CONSTANT")
            return Unfolded(render(expr, ctx), "numeric expression")
        return Folded(("".join(parts),), "java.lang.String", basis, placeholders)

    def _name(self, name: str, ctx: MemberContext, depth: int, expr: Expr) -> FoldOutcome:
        lv = ctx.local(name)
        if lv is not None:
            if lv.assigned == 0 and lv.init is not None:
                r = self.fold(lv.init, ctx, depth + 1)
                if isinstance(r, Folded):
                    return Folded(r.values, r.vtype, r.basis if r.basis != "LITERAL" else "LOCAL", r.placeholders)
                return r
            return Unfolded(name, "a local variable assigned more than once" if lv.assigned else
                            "a local variable without a foldable initializer")
        if ctx.param(name) is not None:
            return Unfolded(name, "a method parameter")
        fr = self.oracle.visible_field(name, ctx)
        if fr is not None:
            return self._field_value(fr, ctx, depth, name)
        simple = self.constants.fold(expr, ctx.scope, ctx.chain)
        if simple is not None:
            return Folded((simple[0],), simple[1], "CONSTANT")
        return Unfolded(name, "not a constant, local, parameter or field")

    def _field_value(self, fr, ctx: MemberContext, depth: int, text: str) -> FoldOutcome:
        f = fr.field
        key = (fr.module, fr.binary, f.name)
        const = self.constants.constant(key)
        if const is not None:
            return Folded((const[0],), const[1], "ENUM" if const[1].startswith("enum:") else "CONSTANT")
        found = self.oracle.decl(fr.module, fr.binary)
        if found is not None:
            scope, idx = found
            for a in f.annotations:
                r = scope.resolve_base(TypeRef(tuple(a.name.split("."))), scope._chain_of(idx), {})
                scheme = self.config_annotations.get(r.name) if r is not None else None
                if scheme is None:
                    continue
                arg = a.args.get("value") or a.args.get("key")
                v = self.constants.fold(arg, scope, scope._chain_of(idx)) if arg else None
                if v is None:
                    return Unfolded(text, f"the @{a.name} value does not fold")
                if scheme == "ducc":
                    return Folded((ducc_placeholder(v[0]),), "java.lang.String", "CONFIG", True)
                return Folded((v[0],), "java.lang.String", "CONFIG", "${" in v[0])
            if f.initializer is not None and "final" in f.modifiers:
                v = self.constants.fold(f.initializer, scope, scope._chain_of(idx))
                if v is not None:
                    return Folded((v[0],), v[1], "CONSTANT")
            if not {"final", "static"} & set(f.modifiers):
                prefix = self._properties_prefix(scope, idx)
                if prefix is not None:  # a @ConfigurationProperties class's field: bound to {prefix}.{field}
                    default = f.initializer and self.constants.fold(f.initializer, scope, scope._chain_of(idx))
                    tail = ":" + default[0] if default and isinstance(default[0], str) and "}" not in default[0] \
                        else ""
                    key = f"{prefix}.{f.name}" if prefix else f.name
                    return Folded(("${" + key + tail + "}",), "java.lang.String", "CONFIG", True)
        return Unfolded(text, "a field that is neither a constant nor bound to configuration")

    def _properties_prefix(self, scope, idx: int) -> str | None:
        """The prefix of the configuration-properties annotation on type ``idx`` of ``scope`` (its
        ``prefix`` or ``value``; "" when it names none), None when the type has none."""
        for a in scope.facts.types[idx].annotations:
            r = scope.resolve_base(TypeRef(tuple(a.name.split("."))), scope._chain_of(idx), {})
            if r is None or r.name not in self.prefix_annotations:
                continue
            arg = a.args.get("prefix") or a.args.get("value")
            v = self.constants.fold(arg, scope, scope._chain_of(idx)) if arg else None
            return v[0] if v is not None and isinstance(v[0], str) else ("" if arg is None else None)
        return None

    def _field_expr(self, expr: Expr, ctx: MemberContext, depth: int) -> FoldOutcome:
        parts = list(expr["parts"])
        if parts[0] == "this" and len(parts) == 2:
            fr = self.oracle.field_of(ctx.module, ctx.binary, parts[1])
            return self._field_value(fr, ctx, depth, ".".join(parts)) if fr else \
                Unfolded(".".join(parts), "unknown field")
        simple = self.constants.fold(expr, ctx.scope, ctx.chain)
        if simple is not None:
            return Folded((simple[0],), simple[1], "ENUM" if simple[1].startswith("enum:") else "CONSTANT")
        # Enum.CONSTANT.field
        if len(parts) >= 3:
            owner = self.constants.fold({"kind": "field", "parts": parts[:-1]}, ctx.scope, ctx.chain)
            if owner is not None and owner[1].startswith("enum:"):
                return self._enum_member(owner, parts[-1], None, ctx, ".".join(parts))
        return Unfolded(".".join(parts), "not a constant")

    def _call(self, name: str, receiver: Expr | None, args: list[Expr | None], ctx: MemberContext,
              depth: int, text: str) -> FoldOutcome:
        if receiver is not None:
            recv_fold = self.fold(receiver, ctx, depth + 1)
            if isinstance(recv_fold, Folded) and recv_fold.vtype.startswith("enum:") and len(recv_fold.values) == 1:
                if name == "name" and not args:
                    return Folded((recv_fold.value,), "java.lang.String", "ENUM")
                if not args:
                    return self._enum_member((recv_fold.value, recv_fold.vtype), None, name, ctx, text)
            if isinstance(recv_fold, Folded) and recv_fold.vtype == "java.lang.String" and not args and \
                    name in ("toString", "trim", "intern") and len(recv_fold.values) == 1:
                return Folded(((recv_fold.value.strip() if name == "trim" else recv_fold.value),),
                              "java.lang.String", recv_fold.basis, recv_fold.placeholders)
            if isinstance(recv_fold, Folded) and recv_fold.vtype in (URI_BUILDER, URI_COMPONENTS) and \
                    len(recv_fold.values) == 1:
                return self._uri_chain(recv_fold, name, args, ctx, depth, text)
            if isinstance(recv_fold, Folded) and recv_fold.vtype.startswith(REQUEST_ENTITY + "#") and \
                    name in _ENTITY_KEEPS:
                return recv_fold
            rt = self.oracle.expr_type(receiver, ctx)
            if rt is not None and rt.static and rt.name == REQUEST_ENTITY and args:
                # RequestEntity.post(uri)…, RequestEntity.method(HttpMethod.X, uri)…: the URL and verb
                if name in _ENTITY_VERBS:
                    return self._entity(name.upper(), args[0], ctx, depth)
                if name == "method" and len(args) >= 2:
                    return self._entity(self._verb(args[0]), args[1], ctx, depth)
            if rt is not None and rt.static and rt.name in _URI_BUILDER_TYPES and args and \
                    name in ("fromHttpUrl", "fromUriString", "fromPath", "fromUri", "expand", "uriString"):
                r = self.fold(args[0], ctx, depth + 1)
                return Folded(r.values, URI_BUILDER, r.basis, r.placeholders) if isinstance(r, Folded) else r
            if rt is not None and rt.static and rt.name == "java.net.URI" and name == "create" and len(args) == 1:
                return self.fold(args[0], ctx, depth + 1)
            if rt is not None and rt.static and rt.name == "java.lang.String" and name == "format" and args:
                return self._format(args, ctx, depth, text)
            if rt is not None and rt.static and rt.name == "java.lang.String" and name == "valueOf" and len(args) == 1:
                r = self.fold(args[0], ctx, depth + 1)
                return Folded(r.values, "java.lang.String", r.basis, r.placeholders) if isinstance(r, Folded) else r
        return Unfolded(text, f"the value returned by {name}() is not known statically")

    def _new(self, call, ctx: MemberContext, depth: int, text: str) -> FoldOutcome:
        """``new URI(s)`` / ``new URL(s)`` fold to ``s``; ``new RequestEntity<>([body,] [headers,]
        HttpMethod.X, uri)`` to its URL (value type ``REQUEST_ENTITY#X``)."""
        t = self.oracle.ref_type(call.new_type, ctx.scope, ctx.chain, ctx.type_vars) if call.new_type else None
        name = t.name if t is not None else ""
        if name in ("java.net.URI", "java.net.URL") and len(call.args) == 1:
            return self.fold(call.args[0], ctx, depth + 1)
        if name == REQUEST_ENTITY and len(call.args) >= 2:
            return self._entity(self._verb(call.args[-2]), call.args[-1], ctx, depth)
        return Unfolded(text, f"the object new {call.name}() builds is not folded")

    @staticmethod
    def _verb(expr: Expr) -> str:
        """``HttpMethod.POST`` → POST; ANY for any other expression."""
        last = (expr.get("parts") or [""])[-1] if expr.get("kind") in ("field", "name") else ""
        return last.upper() if last.lower() in _ENTITY_VERBS else "ANY"

    def _entity(self, verb: str, uri: dict[str, Any], ctx: MemberContext, depth: int) -> FoldOutcome:
        r = self.fold(uri, ctx, depth + 1)
        return Folded(r.values, f"{REQUEST_ENTITY}#{verb}", r.basis, r.placeholders) if isinstance(r, Folded) else r

    def accessor(self, expr: Expr | None, ctx: MemberContext, getter: str | None = None,
                 field: str | None = None) -> FoldOutcome:
        """What ``expr.getter()`` or ``expr.field`` holds when ``expr`` folds to one enum constant:
        the constructor argument the getter (declared or Lombok) or field is assigned from."""
        text = f"{render(expr, ctx)}.{getter + '()' if getter else field}"
        got = self.fold(expr, ctx)
        if not isinstance(got, Folded) or not got.vtype.startswith("enum:") or len(got.values) != 1:
            return Unfolded(text, "not one enum constant")
        return self._enum_member((got.value, got.vtype), field, getter, ctx, text)

    def _uri_chain(self, recv: Folded, name: str, args: list[Expr | None], ctx: MemberContext, depth: int,
                   text: str) -> FoldOutcome:
        """One call of a ``UriComponentsBuilder`` chain on a folded URI: ``path`` / ``pathSegment``
        append, query and fragment calls keep it (they are not matched on), ``build`` /
        ``buildAndExpand`` / ``expand`` / ``encode`` keep the template, ``toUriString`` /
        ``toString`` / ``toUri`` end the chain."""
        def part(a: dict[str, Any]) -> FoldOutcome:
            r = self.fold(a, ctx, depth + 1)
            if isinstance(r, Folded) and len(r.values) == 1 and not r.vtype.startswith("enum:"):
                return r
            return Folded((HOLE,), "java.lang.String", "TEMPLATE") if self._holes else \
                (r if isinstance(r, Unfolded) else Unfolded(text, "a path part has several values"))
        value, basis, ph = recv.value, recv.basis, recv.placeholders
        if recv.vtype == URI_BUILDER and name in ("path", "pathSegment") and args:
            for a in args:
                r = part(a)
                if isinstance(r, Unfolded):
                    return r
                value = value.rstrip("/") + "/" + r.value if name == "pathSegment" else value + r.value
                basis = "TEMPLATE" if r.basis == "TEMPLATE" else basis
                ph = ph or r.placeholders
            return Folded((value,), URI_BUILDER, basis, ph)
        if recv.vtype == URI_BUILDER and name in _URI_KEEPS:
            return recv
        if name in ("build", "buildAndExpand", "expand", "encode", "normalize"):
            return Folded((value,), URI_COMPONENTS, basis, ph)
        if name in ("toUriString", "toString", "toUri"):
            return Folded((value,), "java.lang.String", basis, ph)
        return Unfolded(text, f"{name}() on a URI builder is not folded")

    def _format(self, args: list[Expr | None], ctx: MemberContext, depth: int, text: str) -> FoldOutcome:
        folded = [self.fold(a, ctx, depth + 1) for a in args]
        if self._holes and folded and isinstance(folded[0], Folded) and len(folded[0].values) == 1:
            folded = folded[:1] + [f if isinstance(f, Folded) and len(f.values) == 1 else
                                   Folded((HOLE,), "java.lang.String", "TEMPLATE") for f in folded[1:]]
        if any(isinstance(f, Unfolded) or len(f.values) > 1 for f in folded):
            return Unfolded(text, "a String.format argument does not fold")
        fmt, rest = folded[0].value, [f.value for f in folded[1:]]
        out: list[str] = []
        i = pos = 0
        while i < len(fmt):
            c = fmt[i]
            if c == "%" and i + 1 < len(fmt):
                spec = fmt[i + 1]
                if spec == "%":
                    out.append("%")
                elif spec in "sd" and pos < len(rest):
                    out.append(rest[pos])
                    pos += 1
                elif spec == "n":
                    out.append("\n")
                else:
                    return Unfolded(text, f"format conversion %{spec} is not folded")
                i += 2
                continue
            out.append(c)
            i += 1
        return Folded(("".join(out),), "java.lang.String",
                      "TEMPLATE" if any(f.basis == "TEMPLATE" for f in folded) else "FORMAT",
                      any(f.placeholders for f in folded))

    def _enum_member(self, const: tuple[str, str], field_name: str | None, getter: str | None, ctx: MemberContext,
                     text: str) -> FoldOutcome:
        """The value an enum constant's field (or a getter returning it) holds: the constructor
        argument assigned to that field."""
        enum_binary = const[1][len("enum:"):]
        infos = ctx.scope.visible.lookup(enum_binary.replace("$", "."))
        found = self.registry._decl.get((infos[0].module, infos[0].binary)) if infos else None
        if found is None:
            return Unfolded(text, "the enum is not in the repository")
        scope, idx = found
        td = scope.facts.types[idx]
        if getter is not None:
            field_name = td.getter_fields.get(getter) or _lombok_getter_field(td, getter, scope, idx)
            if field_name is None:
                return Unfolded(text, f"{getter}() does not simply return a field")
        ec = next((e for e in td.enum_constants if e.name == const[0]), None)
        if ec is None:
            return Unfolded(text, "unknown enum constant")
        for arity, mapping in constructor_fields(td, scope, idx):
            if arity == len(ec.args) and field_name in mapping:
                arg = ec.args[mapping[field_name]]
                v = self.constants.fold(arg, scope, scope._chain_of(idx))
                if v is None:
                    return Unfolded(text, "the enum constructor argument does not fold")
                return Folded((v[0],), v[1], "ENUM")
        return Unfolded(text, f"no constructor of {td.simple_name} assigns {field_name} from a parameter")


def _lombok_getter_field(td, getter: str, scope, idx: int) -> str | None:
    from diting.java.lombok import synthesize
    for sm in synthesize(td, scope, scope._chain_of(idx)):
        if sm.kind == "METHOD" and sm.name == getter and not sm.params:
            base = getter[3:] if getter.startswith("get") else getter[2:] if getter.startswith("is") else None
            if base:
                name = base[:1].lower() + base[1:]
                if any(f.name == name for f in td.fields):
                    return name
    return None


def constructor_fields(td, scope, idx: int) -> list[tuple[int, dict[str, int]]]:
    """``(arity, {field: parameter index})`` of every constructor of ``td`` (the type at ``idx`` of
    ``scope``'s file): written ones (``this.f = p``) and those Lombok generates."""
    return td.ctor_field_params + _lombok_ctor_fields(td, scope, idx)


def _lombok_ctor_fields(td, scope, idx: int) -> list[tuple[int, dict[str, int]]]:
    """``(arity, {field: parameter index})`` of the constructors Lombok generates (``@AllArgsConstructor``,
    ``@RequiredArgsConstructor``): each parameter is the field of its name."""
    from diting.java.lombok import synthesize
    fields = {f.name for f in td.fields}
    return [(len(sm.params), {n: i for i, (n, _) in enumerate(sm.params) if n in fields})
            for sm in synthesize(td, scope, scope._chain_of(idx)) if sm.kind == "METHOD" and sm.name == "<init>"]


def fold_type(outcome: FoldOutcome) -> str | None:
    return outcome.vtype if isinstance(outcome, Folded) else None


__all__ = ["DUCC_PREFIX", "HOLE", "ducc_placeholder", "constructor_fields", "ExpressionFolder", "FoldOutcome", "Folded", "Unfolded", "render", "fold_type", "TypeOf"]
