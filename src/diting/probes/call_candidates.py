"""The candidate of a call a call rule matched (docs/rules.md §3): the roles its arguments carry,
and what its arguments and the calls around it say — a SQL or key string's constant parts, a
message object built in place or through a builder's headers, a parameter that names the
destination, the lambdas handed to a router and the calls chained on its result.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from diting.java.facts import TypeRef
from diting.probes.model import MessageSpec, Rule
from diting.resolve.fold import ExpressionFolder, Folded, render
from diting.resolve.types import MemberContext, TypeOf, TypeOracle

if TYPE_CHECKING:
    from diting.java.facts import Expr
    from diting.probes.matches import (CallCandidate, FieldRef, LambdaCall, MatchAttrs, MemberInfo, Outcome,
                                       ParameterAccessor, ReceiverCall, Roles, RouteCall, RuntimePart, TypeInfo, Value)

#: calls followed along a chain made on a call's result (``lambdaQuery().eq(…)….list()``)
MAX_CHAIN = 256


class CallCandidates:
    """Builds the call candidates of one module's probe (``fold_value``: the probe's, which folds
    one role value to outcomes)."""

    def __init__(self, module: str, oracle: TypeOracle, folder: ExpressionFolder,
                 fold_value: Callable[..., list[Outcome]]) -> None:
        self.module = module
        self.oracle = oracle
        self.folder = folder
        self.fold_value = fold_value
        self._calls_on: dict[int, tuple[Any, dict[int, Any]]] = {}

    def candidate(self, rule: Rule, call, recv: TypeOf | None, path: str, type_info: TypeInfo, ctx: MemberContext,
                  minfo: MemberInfo) -> CallCandidate:
        """The candidate of ``call`` (receiver type ``recv``), which ``rule`` matched, made in method
        ``minfo`` of the type ``type_info`` in file ``path``."""
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
            "path": path, "lines": [call.line, call.end_line], "target": "CALL",
            "type": type_info,
            "member": minfo, "roles": roles,
            "call": {"ordinal": call.ordinal, "name": call.name, "arity": call.arity,
                     "callsite_id": f"{minfo['stable']}@{call.ordinal}", "in_lambda": call.in_lambda,
                     "receiver_type": recv.name if recv else None,
                     "receiver": self.receiver_ref(call.receiver, ctx),
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
        return self.receiver_ref(r, ctx) if r is not None and r.get("kind") in ("name", "field") else None

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
        on = self._calls_on_results(ctx.body)
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
        on = self._calls_on_results(ctx.body)
        cur = call.ordinal
        for _ in range(MAX_CHAIN):
            nxt = on.get(cur)
            if nxt is None:
                break
            out.append(nxt.name)
            cur = nxt.ordinal
        return out

    def _calls_on_results(self, body: Any) -> dict[int, Any]:
        """Call ordinal → the (first) call made on its result, in ``body`` (memoised per body)."""
        held = self._calls_on.get(id(body))
        if held is None or held[0] is not body:
            on = {c.receiver["ordinal"]: c for c in reversed(body.calls) if c.kind == "CALL"
                  and c.receiver is not None and c.receiver.get("kind") == "callref"}
            held = self._calls_on[id(body)] = (body, on)
        return held[1]

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

    def receiver_ref(self, receiver: Expr | None, ctx: MemberContext) -> FieldRef | None:
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
