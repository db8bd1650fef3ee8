"""Spring Cloud Stream bindings (the MQ_STREAM mechanism; rules/spring-cloud-stream.yaml).

A binding has a name; what it is bound to comes from the package's configuration:
``spring.cloud.stream.bindings.{name}.destination`` (default: the name; a comma-separated list for
a consumer), ``.group`` (the consumer group) and the binder — ``.binder``, else
``spring.cloud.stream.default-binder``, a binder name whose ``spring.cloud.stream.binders.{b}.type``
(or the name itself) is a binder type, else the one binder artifact on the package's classpath
(tables in the rules' attributes). Several binders and none named, or none at all, leave the
protocol unknown: consumers get ENTRY_UNRESOLVED, sends an UNRESOLVED PUBLISHES (never a guess).

Bindings come from two models:

* annotation model — ``@EnableBinding(X.class)`` on a loaded class binds the channels of the binding
  interfaces it names (built-in ``Source``/``Sink``/``Processor``; ``@Input``/``@Output`` methods,
  the binding named by the annotation value or the method name). ``@StreamListener("b")`` methods
  (or ``@Input("b")`` parameters) consume binding b; ``@SendTo("b")`` on them and
  ``MessageChannel.send`` on ``x.output()`` or an injected channel (``@Output``/``@Qualifier``/the
  field's name naming a bound output) publish to b;
* functional model — in a package with Spring Cloud Stream on its classpath, the ``Supplier`` /
  ``Function`` / ``Consumer`` (``Bi…``) ``@Bean`` methods named by ``spring.cloud.function.definition``
  (``a;b``; ``a|b`` composes into one function whose bindings are named ``ab-in-0``/``ab-out-0``),
  or the only one when the key is absent, are bound as ``{fn}-in-{i}`` (consumed, the entry's
  handler the first function's ``@Bean`` method) and ``{fn}-out-{i}`` (published by the last one's);
  index 0 always, higher ones when configured (Kafka Streams ``BiFunction`` and branching outputs).
  ``spring.cloud.stream.function.bindings.{fn}-in-0`` renames a binding. ``StreamBridge.send(name, …)``
  publishes to binding ``name`` (its destination; an unconfigured name is the destination itself).

Topics are spelt as for each family: ``kafka://{destination}``, ``rocketmq://{destination}``; with the
RabbitMQ binder a destination is a topic exchange, a producer publishes ``amqp://{destination}/
{destination}`` (its default routing key), and a consumer subscribes to its queue
``amqp-queue://{destination}.{group}`` (``{destination}.anonymous`` without a group) bound from
``amqp://{destination}/#`` (BINDS_TO), so graph/align.py joins them like any RabbitMQ route.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from diting.probes.mq import subscribe
from diting.probes.resolved import ResolvedText
from diting.resolve.spring import values

if TYPE_CHECKING:
    from diting.probes.matches import Candidate, Handler, MemberInfo
    from diting.probes.context import ProbeContext

_PREFIX = "spring.cloud.stream"
_FUNCTIONS = {"java.util.function.Supplier": (0, 1), "java.util.function.Function": (1, 1),
              "java.util.function.Consumer": (1, 0), "java.util.function.BiFunction": (2, 1),
              "java.util.function.BiConsumer": (2, 0)}
#: the single abstract method of each functional interface and its arity
_SAM = {"java.util.function.Supplier": ("get", 0), "java.util.function.Function": ("apply", 1),
        "java.util.function.Consumer": ("accept", 1), "java.util.function.BiFunction": ("apply", 2),
        "java.util.function.BiConsumer": ("accept", 2)}
#: binding indices probed in configuration beyond the implied ones (Kafka Streams branches, tuples)
MAX_INDEX = 8


class Streams:
    """The MQ_STREAM mechanism of one package (see the module docstring)."""

    def __init__(self, f: "ProbeContext") -> None:
        self.f = f
        self.cands = f.ctx.by_emit.get("MQ_STREAM", [])
        self.by = {}
        for c in self.cands:
            self.by.setdefault(f.s.rules.by_id[c["rule"]].emits.attributes.get("stream"), []).append(c)
        attrs: dict[str, Any] = {}
        for r in f.s.rules.by_id.values():
            if r.emits.kind == "MQ_STREAM":
                for k in ("binders", "binder_types", "binder_by_type", "builtin", "constants"):
                    attrs.setdefault(k, {}).update(r.emits.attributes.get(k, {}))
                attrs.setdefault("stream_artifacts", []).extend(r.emits.attributes.get("stream_artifacts", []))
        self.tables = attrs
        artifacts = {d.artifact_id for m in f.plan.modules for d in f.s.inv.modules[m].dependencies
                     if d.scope != "test"} if f.plan.modules else set()
        self.stream_app = bool(artifacts & set(attrs.get("stream_artifacts", [])))
        self.classpath_binders = sorted({p for a, p in attrs.get("binders", {}).items() if a in artifacts})

    # ------------------------------------------------------------ configuration
    def conf(self, key: str) -> ResolvedText | None:
        """A configured value (with its keys for config bindings), None when no source has it; a key
        a source has whose value does not resolve (``${topic.missing}``) is an unresolved value, never
        absent (so no default named after the binding is guessed in its place)."""
        got = self.f.lookup("config", key)
        if got.status == "UNKNOWN" and not got.snapshot and (got.rv is None or got.rv.entry is None):
            return None
        return self.f.resolve({"value": "${" + key + "}", "vtype": "java.lang.String", "basis": "CONFIG",
                               "placeholders": True})

    def protocol(self, binding: str, c: Candidate | None = None) -> tuple[str | None, str, list[ResolvedText]]:
        """``(scheme, how, config read)`` of a binding's binder; scheme None when unknown (``how`` says why).
        A function candidate ``c`` whose type arguments are Kafka Streams types is bound by that binder."""
        types = self.tables.get("binder_types", {})
        read: list[ResolvedText] = []
        by_type = self.tables.get("binder_by_type", {})
        typed = next((by_type[t] for t in (c or {}).get("attrs", {}).get("bean_type_args", []) if t in by_type), None)
        if typed is not None:
            return types.get(typed), "FUNCTION_TYPE", read
        for key in (f"{_PREFIX}.bindings.{binding}.binder", f"{_PREFIX}.default-binder"):
            name = self.conf(key)
            if name is None or name.value is None:
                continue
            read.append(name)
            t = self.conf(f"{_PREFIX}.binders.{name.value}.type")
            if t is not None:
                read.append(t)
            kind = t.value if t is not None and t.value else name.value
            if kind in types:
                return types[kind], "CONFIGURED", read
            return None, f"binder {name.value!r} is of an unknown type", read
        if len(self.classpath_binders) == 1:
            return self.classpath_binders[0], "CLASSPATH", read
        if not self.classpath_binders:
            return None, "no binder artifact on the package's classpath", read
        return None, f"several binders on the classpath ({', '.join(self.classpath_binders)}) and none named " \
                     "for the binding", read

    def destinations(self, binding: str, consumer: bool) -> tuple[list[ResolvedText], list[ResolvedText]]:
        """The binding's destinations (default: its name) and the config values read."""
        d = self.conf(f"{_PREFIX}.bindings.{binding}.destination")
        if d is None:
            return [ResolvedText("RESOLVED", binding)], []
        if d.value is None:
            return [d], [d]
        names = [x.strip() for x in d.value.split(",")] if consumer else [d.value.strip()]
        return [ResolvedText(d.status, n, d.keys) for n in names if n], [d]

    def remote_default(self, binding: str) -> dict[str, Any]:
        """Attributes of a record whose destination is binding ``binding``'s default name (no
        ``destination`` configured) in a package that reads a config centre at run time:
        ``destination_default`` and ``config_centre_may_override`` (the centres, which may set the
        destination); empty otherwise."""
        if self.conf(f"{_PREFIX}.bindings.{binding}.destination") is not None:
            return {}
        centres = self.f.centres("config")
        return {"destination_default": True, "config_centre_may_override": centres} if centres else {}

    # ------------------------------------------------------------ run
    def run(self) -> None:
        if not self.cands:
            return
        self.annotation_model()
        if self.stream_app:
            self.functional_model()
        for c in self.by.get("dsl_source", []):
            self.dsl_source(c)
        for c in self.by.get("bridge", []):
            for name in self.f.role(c, "name"):
                if name.value is None:
                    self._unresolved_send(c, None, name.expression or c["call"]["expression"], name.reason, [name])
                else:
                    self.publish(c, c["member"], name.value, "StreamBridge.send", [name])

    def dsl_source(self, c: Candidate) -> None:
        """A Kafka Streams topology source (``builder.stream("t")``, ``table``, ``globalTable``) in a
        loaded class: the method building it consumes each topic (an MQ_CONSUMER entry; a topic that
        does not fold, a collection or a pattern, is an UNRESOLVED one with TOPIC_UNRESOLVED) in the
        consumer group ``spring.kafka.streams.application-id`` (default ``spring.application.name``)."""
        if not self.f.ctx.class_loaded(c["type"]["binary"]):
            return
        group = self.conf("spring.kafka.streams.application-id") or self.conf("spring.application.name")
        groups = [group.value] if group is not None and group.value else []
        extra = {"stream_dsl": c["call"]["name"]}
        for t in self.f.role(c, "topic"):
            self._subscribe(c, "kafka", dict(c["member"], path=c["path"]), t, groups,
                            [group] if group is not None else [], extra)

    # ------------------------------------------------------------ annotation model
    def annotation_model(self) -> None:
        """Channels bound by loaded @EnableBinding classes, their listeners and sends."""
        channels: dict[str, dict[str, tuple[str, str]]] = {}  # interface → method → (binding, direction)
        for c in self.by.get("input", []) + self.by.get("output", []):
            if c["target"] == "METHOD" and c["type"]["kind"] == "INTERFACE":
                name = (values(c, "name") or [c["member"]["name"]])[0]
                direction = self.f.s.rules.by_id[c["rule"]].emits.attributes["stream"]
                channels.setdefault(c["type"]["binary"], {})[c["member"]["name"]] = (name, direction)
        builtin = self.tables.get("builtin", {})
        bound: dict[str, str] = {}  # binding → direction
        self.channel_methods: dict[str, set[str]] = {}  # method name of a bound interface → bindings
        for c in self.by.get("enable", []):
            if not self.f.ctx.class_loaded(c["type"]["binary"]):
                continue
            for iface in values(c, "classes"):
                module = self.f.ctx.home(iface, c["module"])
                lineage = [iface] + (sorted(self.f.s.oracle.supertype_names(module, iface) - {iface}) if module else [])
                for t in lineage:
                    for meth, name in builtin.get(t, {}).items():
                        direction = "input" if meth == "input" else "output"
                        bound[name] = direction
                        self.channel_methods.setdefault(meth, set()).add(name)
                    for meth, (name, direction) in channels.get(t, {}).items():
                        bound[name] = direction
                        self.channel_methods.setdefault(meth, set()).add(name)
        self.bound = bound
        sends_to: dict[str, list[Candidate]] = {}
        for c in self.by.get("send_to", []):
            sends_to.setdefault(c["member"]["stable"], []).append(c)
        params: dict[str, list[Candidate]] = {}
        for c in self.by.get("input", []):
            if c["target"] == "PARAMETER":
                params.setdefault(c["member"]["stable"], []).append(c)
        for c in self.by.get("listener", []):
            if not self.f.live_handler_class(c):
                continue
            handler = dict(c["member"], path=c["path"])
            names = self.f.role(c, "name") or [self.f.resolve(o) for p in params.get(handler["stable"], [])
                                               for o in p.get("roles", {}).get("name", [])]
            if not names:
                self.f.entry_failed(f"{c['path']}:{c['lines'][0]}|stream", f"@StreamListener at {c['path']}:"
                                    f"{c['lines'][0]} names no binding", [c["member"]["rid"]], c)
            for n in names:
                self.consume(c, handler, self._constant(n))
            if names:  # @SendTo on a listener publishes its return value
                for sc in sends_to.get(handler["stable"], []):
                    for n in self.f.role(sc, "name"):
                        n = self._constant(n)
                        if n.value is None:
                            self._unresolved_send(sc, None, n.expression, n.reason, [n])
                        else:
                            self.publish(sc, c["member"], n.value, "@SendTo", [n])
        out_fields = {(c["type"]["binary"], c["field"]["name"]): (values(c, "name") or [c["field"]["name"]])[0]
                      for c in self.by.get("output", []) if c["target"] == "FIELD"}
        quals = {(c["type"]["binary"], c["field"]["name"]): c["field"].get("qualifier")
                 for c in self.f.ctx.by_emit.get("INJECTION", []) if c["target"] == "FIELD"}
        from_calls: dict[tuple[str, str], str] = {}  # (class, field) → the call a constructor set it from
        for c in self.f.ctx.by_emit.get("BEAN", []):
            for m in (c.get("type_detail") or {}).get("methods", []):
                for fld, got in m.get("assigned_calls", {}).items():
                    from_calls.setdefault((c["type"]["binary"], fld), got["method"])
        for c in self.by.get("channel", []):
            call = c["call"]
            name = None
            recv = call.get("receiver")
            inner = call.get("receiver_call")
            if inner is None and recv and (recv["binary"], recv["field"]) in from_calls:
                inner = {"name": from_calls[(recv["binary"], recv["field"])], "arity": 0}  # this.out = x.out()
            if inner and inner["arity"] == 0 and inner["name"] in self.channel_methods:
                names = sorted(self.channel_methods[inner["name"]])  # source.output().send(…)
                if len(names) > 1:  # two bound interfaces have a channel method of this name
                    self._unresolved_send(c, None, f"{inner['name']}()", "bound interfaces name "
                                          f"{inner['name']}() for bindings {', '.join(names)}", [])
                    continue
                name = names[0]
            if name is None and recv:
                key = (recv["binary"], recv["field"])
                name = out_fields.get(key) or quals.get(key) or recv["field"]
            if name is not None and bound.get(name) == "output":
                self.publish(c, c["member"], name, "MessageChannel.send", [])
            # a channel that names no bound output is a Spring Integration channel: not a stream send

    def _constant(self, rt: ResolvedText) -> ResolvedText:
        """``Sink.INPUT`` and the like: the built-in interfaces' binding-name constants."""
        if rt.value is None and rt.expression:
            tail = ".".join(rt.expression.split(".")[-2:])
            got = self.tables.get("constants", {}).get(tail)
            if got is not None:
                return ResolvedText("RESOLVED", got)
        return rt

    # ------------------------------------------------------------ functional model
    def functional_model(self) -> None:
        fns: dict[str, Candidate] = {}  # bean name → candidate (its member the function's handler)
        kinds: dict[str, str] = {}  # bean name → functional interface
        for c in self.by.get("function", []):
            if not self.f.ctx.class_loaded(c["type"]["binary"]):
                continue
            bean = next((b for b in self.f.ctx.beans if b.kind == "BEAN_METHOD" and b.loaded and
                         b.cand.get("member", {}).get("stable") == c["member"]["stable"]), None)
            name = bean.name if bean is not None else c["member"]["name"]
            fns[name], kinds[name] = c, c["member"]["return_type"]
        for c in self.by.get("function_class", []):
            got = self._function_class(c)
            if got is not None:
                fns[got[0]], kinds[got[0]] = got[1], c["attrs"]["supertype"]
        if not fns:
            return
        definition = self.conf("spring.cloud.function.definition") or self.conf(f"{_PREFIX}.function.definition")
        if definition is not None and definition.value is not None:
            chosen = [[p.strip() for p in d.split("|") if p.strip()] for d in re.split(r"[;,]", definition.value)]
            chosen = [d for d in chosen if d]
        elif definition is not None:
            c = next(iter(fns.values()))
            self.f.diag("CONFIG_VALUE_UNKNOWN", "stream|function.definition", "spring.cloud.function.definition "
                        f"does not resolve ({definition.reason}): which functions are bound is unknown",
                        [c["member"]["rid"]], c)
            return
        elif len(fns) == 1:
            chosen = [[next(iter(fns))]]
        else:
            for name, c in sorted(fns.items()):
                if _FUNCTIONS.get(kinds[name], (0, 0))[0]:
                    self.f.entry_failed(f"{c['member']['stable']}|stream", f"functional bean {name} at {c['path']}:"
                                        f"{c['lines'][0]}: {len(fns)} functional beans and no spring.cloud.function."
                                        "definition — Spring Cloud Stream binds none of them", [c["member"]["rid"]], c)
            return
        read = [definition] if definition is not None else []
        for parts in chosen:
            missing = [p for p in parts if p not in fns]
            if missing:
                continue  # a function of a library (or of another package): not ours to bind
            first, last = fns[parts[0]], fns[parts[-1]]
            fname = "".join(parts)
            ins = _FUNCTIONS.get(kinds[parts[0]], (0, 0))[0]
            outs = _FUNCTIONS.get(kinds[parts[-1]], (0, 0))[1]
            for i in self._indices(fname, "in", ins):
                name = self._renamed(f"{fname}-in-{i}")
                self.consume(first, dict(first["member"], path=first["path"]), ResolvedText("RESOLVED", name), read)
            for i in self._indices(fname, "out", outs):
                name = self._renamed(f"{fname}-out-{i}")
                self.publish(last, last["member"], name, "function output", read)

    def _function_class(self, c: Candidate) -> tuple[str, dict[str, Any]] | None:
        """``(bean name, candidate)`` of a loaded component class implementing a functional interface
        (``@Component("events") class L implements Consumer<T>``): the candidate's member is the
        interface's method the class declares (``accept``/``apply``/``get``), its type arguments read
        as a ``@Bean`` method's. None when the class is no loaded component or declares no such method."""
        t = c["type"]
        if t.get("abstract") or t["kind"] in ("INTERFACE", "ANNOTATION"):
            return None
        bean = next((b for b in self.f.ctx.beans if b.kind == "COMPONENT" and b.loaded and b.type == t["binary"]), None)
        if bean is None:
            return None
        sam, arity = _SAM[c["attrs"]["supertype"]]
        member = next((m for m in (c.get("type_detail") or {}).get("methods", [])
                       if m["name"] == sam and len(m.get("params", [])) == arity), None)
        if member is None:
            return None
        return bean.name, dict(c, member=member, attrs=dict(c["attrs"], bean_type_args=c["attrs"].get("type_args", [])))

    def _indices(self, fname: str, kind: str, implied: int) -> list[int]:
        """Binding indices of a function: those its type implies and any further one configured."""
        if not implied:
            return []
        got = list(range(implied))
        for i in range(implied, MAX_INDEX):
            if self.conf(f"{_PREFIX}.bindings.{fname}-{kind}-{i}.destination") is None:
                break
            got.append(i)
        return got

    def _renamed(self, name: str) -> str:
        new = self.conf(f"{_PREFIX}.function.bindings.{name}")
        return new.value if new is not None and new.value else name

    # ------------------------------------------------------------ records
    def consume(self, c: Candidate, handler: Handler, name: ResolvedText,
                read: list[ResolvedText] | None = None) -> None:
        """MQ_CONSUMER entries of one input binding (one per destination)."""
        read = list(read or [])
        if name.value is None:
            proto = self.classpath_binders[0] if len(self.classpath_binders) == 1 else "stream"
            subscribe(self.f, c, proto, handler, name, [], [], read)
            return
        proto, how, pread = self.protocol(name.value, c)
        if proto is None:
            self.f.entry_failed(f"{handler['stable']}|stream|{name.value}", f"stream binding {name.value} at "
                                f"{c['path']}:{c['lines'][0]}: the protocol is unknown ({how})", [handler["rid"]], c)
            return
        dests, dread = self.destinations(name.value, consumer=True)
        pattern_keys = [f"{_PREFIX}.{b}.bindings.{name.value}.consumer.destination-is-pattern"
                        for b in ("kafka", "kafka.streams")]
        flag = next((r for r in map(self.conf, pattern_keys) if r is not None and (r.value or "").strip() == "true"), None)
        if flag is not None:  # a regular expression over topic names: no one topic
            dests = [ResolvedText("UNKNOWN", None, flag.keys, expression=d.value or d.expression,
                                  reason="the destination is a topic pattern") for d in dests]
            dread.append(flag)
        group = self.conf(f"{_PREFIX}.bindings.{name.value}.group")
        groups = [group.value] if group is not None and group.value else []
        read += pread + dread + ([group] if group is not None else [])
        extra: dict[str, Any] = {"stream_binding": name.value, "binder_basis": how, **self.remote_default(name.value)}
        if proto == "rocketmq":  # the RocketMQ binder's tag or SQL92 subscription
            sub = self.conf(f"{_PREFIX}.rocketmq.bindings.{name.value}.consumer.subscription")
            if sub is not None:
                read.append(sub)
                text = (sub.value or "").strip()
                if sub.value is None:
                    extra.update(tag_filter=None, tag_filter_resolution="UNKNOWN", tag_filter_expression=sub.expression)
                elif text.lower().startswith("sql:"):
                    extra.update(tag_filter=text[4:].strip(), tag_filter_type="SQL92")
                elif text:
                    extra.update(tag_filter=text, tag_filter_type="TAG")
        for d in dests:
            if d.value is None or proto != "amqp":
                self._subscribe(c, proto, handler, d, groups, read, extra)
                continue
            queue = f"{d.value}.{groups[0] if groups else 'anonymous'}"
            key = self.conf(f"{_PREFIX}.rabbit.bindings.{name.value}.consumer.binding-routing-key")
            pattern = key.value if key is not None and key.value else "#"
            self._subscribe(c, "amqp-queue", handler, ResolvedText(d.status, queue, d.keys), groups, read, extra)
            src_urn, dst_urn = f"amqp://{d.value}/{pattern}", f"amqp-queue://{queue}"
            src = self.f.topic(src_urn, c, {"protocol": "amqp"})
            dst = self.f.topic(dst_urn, c, {"protocol": "amqp-queue"})
            self.f.rs.relation("BINDS_TO", src, src_urn, target_rid=dst, target_key=dst_urn, status="RESOLVED",
                               evidence=[self.f.cseg(c)], attributes={"protocol": "amqp", "stream_binding": name.value,
                                                                      "value_basis": d.status})

    def _subscribe(self, c: Candidate, proto: str, handler: Handler, t: ResolvedText,
                   groups: list[str], read: list[ResolvedText], extra: dict[str, Any]) -> None:
        before = set(self.f.rs.relations)
        subscribe(self.f, c, proto, handler, t, [], groups, read)
        for rid in set(self.f.rs.relations) - before:
            rec = self.f.rs.relations[rid]
            if rec["kind"] == "SUBSCRIBES":
                rec["attributes"] = dict(rec["attributes"], **extra)

    def publish(self, c: Candidate, member: MemberInfo, binding: str, how: str,
                read: list[ResolvedText]) -> None:
        """PUBLISHES from ``member`` to the destination of output binding ``binding``."""
        proto, basis, pread = self.protocol(binding, c)
        if proto is None:
            self._unresolved_send(c, None, binding, f"the protocol is unknown ({basis})", read + pread, member)
            return
        dests, dread = self.destinations(binding, consumer=False)
        d = dests[0]
        if d.value is None:
            self._unresolved_send(c, proto, d.expression, d.reason, read + pread + dread, member)
            return
        urn = f"amqp://{d.value}/{d.value}" if proto == "amqp" else f"{proto}://{d.value}"
        trid = self.f.topic(urn, c, {"protocol": proto, "tags": [], "event_types": []})
        call = c.get("call") or {}
        attrs = {"protocol": proto, "tag": None, "event_type": (call.get("arg_types") or {}).get("payload"),
                 "value_basis": d.status, "send_method": how, "stream_binding": binding, "binder_basis": basis,
                 "loaded": self.f.ctx.class_loaded(c["type"]["binary"]), **self.remote_default(binding)}
        if proto == "rocketmq":  # a stream message's tag travels in a header: not known
            attrs.update(tag_resolution="UNKNOWN")
        self.f.rs.relation("PUBLISHES", member["rid"], member["stable"], target_rid=trid, target_key=urn,
                           status="RESOLVED", evidence=[self.f.cseg(c)], ordinal=call.get("ordinal", 0),
                           callsite_id=call.get("callsite_id"), attributes=attrs)
        self.f.note_keys(member["rid"], member["stable"], read + pread + dread, c, "stream binding")

    def _unresolved_send(self, c: Candidate, proto: str | None, expression: str | None, reason: str,
                         read: list[ResolvedText], member: MemberInfo | None = None) -> None:
        m = member or c["member"]
        call = c.get("call") or {}
        site = call.get("callsite_id") or f"{m['stable']}|{c['rule']}|{expression}"
        d = self.f.diag("TOPIC_UNRESOLVED", f"{site}|stream", f"stream send at {c['path']}:{c['lines'][0]}: "
                        f"binding {expression} does not resolve ({reason})", [m["rid"]], c)
        self.f.rs.relation("PUBLISHES", m["rid"], m["stable"], target_rid=None, target_key="?" + (expression or ""),
                           status="UNRESOLVED", evidence=[self.f.cseg(c)], diagnostics=[d],
                           ordinal=call.get("ordinal", 0), callsite_id=call.get("callsite_id"),
                           match_keys={"topic_expression": expression, "protocol": proto or
                                       (self.classpath_binders[0] if len(self.classpath_binders) == 1 else None)},
                           attributes={"protocol": proto, "send_method": call.get("name", "stream")})
        self.f.note_keys(m["rid"], m["stable"], read, c, "stream binding")


def mq_streams(pc: "ProbeContext") -> None:
    """Spring Cloud Stream bindings (:class:`Streams`)."""
    Streams(pc).run()
