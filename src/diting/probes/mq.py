"""MQ listeners, sends, receives and RabbitMQ bindings (JMQ, RocketMQ, Kafka, RabbitMQ, JMS; docs/middleware.md §2)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from diting.probes.resolved import ResolvedText
from diting.resolve.spring import values

if TYPE_CHECKING:
    from diting.probes.matches import BeanRef, Candidate, Handler
    from diting.probes.context import ProbeContext


def _annotation_send(c: Candidate) -> dict[str, Any]:
    """The call-shaped facts of a send an annotation declares (a listener's ``@SendTo`` reply):
    its name, ordinal 0 and a call-site id of the annotated method."""
    name = "@" + c["annotation"].rsplit(".", 1)[-1]
    args = ", ".join(f"{k}={v}" for k, v in c.get("attrs", {}).get("annotation_args", {}).items())
    return {"name": name, "ordinal": 0, "callsite_id": f"{c['member']['stable']}@{name}", "arity": 0,
            "expression": f"{name}({args})", "arg_types": {}}


def mq_listeners(pc: "ProbeContext") -> None:
    for c in pc.ctx.by_emit.get("MQ_LISTENER", []):
        rule = pc.s.rules.by_id[c["rule"]]
        proto = rule.emits.protocol or "jmq"
        if c["form"] == "xml":
            ref = (values(c, "listener") or [None])[0]
            beans = pc.ctx.named(ref, c)
            binary = beans[0].type if beans else None
            handlers = pc.handlers(binary, rule.emits.handler, beans[0].module) if binary else []
            loaded = pc.ctx.cand_loaded(c)
        elif c["target"] == "TYPE":
            binary = c["type"]["binary"]
            handlers = pc.handlers(binary, rule.emits.handler, c["module"])
            loaded = pc.ctx.class_loaded(binary)
        elif c["target"] == "METHOD":
            binary = c["type"]["binary"]
            handlers = [dict(c["member"], path=c["path"])]
            loaded = pc.ctx.class_loaded(binary)
        else:  # a rule without targets matched a field or a parameter
            pc.entry_failed(f"{c['path']}:{c['lines'][0]}|listener", f"rule {c['rule']} matched a {c['target']} at "
                            f"{c['path']}:{c['lines'][0]}; a listener is a class or a method", [pc.owner_rid(c)], c)
            continue
        if not loaded:
            pc.exclude_entry(f"{c['path']}:{c['lines'][0]}|listener", f"{proto} listener at {c['path']}:"
                               f"{c['lines'][0]}", [pc.owner_rid(c)], c)
            continue
        if not handlers:
            what = f"bean {ref!r}" if c["form"] == "xml" else binary
            pc.entry_failed(f"{c['path']}:{c['lines'][0]}|listener", f"{proto} listener at {c['path']}:"
                              f"{c['lines'][0]}: no handler method found on {what}", [pc.owner_rid(c)], c)
            continue
        topics = pc.role(c, "queue" if proto == "amqp-queue" else "topic")
        tag_rts, group_rts = pc.role(c, "tag"), pc.role(c, "consumer_group")
        tags, group = pc.texts(tag_rts), pc.texts(group_rts)
        if not topics:
            topics = [ResolvedText("UNKNOWN", None, expression="(no topic attribute)", reason="no topic")]
        for handler in handlers:
            for t in topics:
                subscribe(pc, c, proto, handler, t, tags, group, tag_rts + group_rts)


def mq_sends(pc: "ProbeContext") -> None:
    listeners = {(pc.s.rules.by_id[c["rule"]].emits.protocol, c["member"]["stable"])
                 for c in pc.ctx.by_emit.get("MQ_LISTENER", []) if c["form"] == "annotation" and
                 c["target"] == "METHOD"}
    for c in pc.ctx.by_emit.get("MQ_SEND", []):
        rule = pc.s.rules.by_id[c["rule"]]
        proto = rule.emits.protocol or "jmq"
        if c["form"] == "annotation":  # a reply annotation (@SendTo) counts on a listener method only
            if c["target"] != "METHOD" or (proto, c["member"]["stable"]) not in listeners:
                continue
            c = dict(c, call=_annotation_send(c))
        m = c["member"]
        call = c["call"]
        ev = pc.cseg(c)
        event_type = call.get("arg_types", {}).get("payload")
        if proto == "amqp":
            ex = pc.first(c, "exchange")
            rk = pc.first(c, "routing_key")
            parts = [ex or ResolvedText("RESOLVED", ""), rk]
            if rk is None or any(p is None or p.value is None for p in parts):
                bad = next((p for p in parts if p is None or p.value is None), None)
                _unresolved_send(pc, c, proto, bad.expression if bad else "routing key", bad.reason if bad else "",
                                      parts={"exchange": ex, "routing_key": rk} if rk is not None else None)
                continue
            urn = f"amqp://{ex.value if ex else ''}/{rk.value}"
            status = "DEFAULT_ONLY" if any(p.status == "DEFAULT_ONLY" for p in parts if p) else "RESOLVED"
            destinations = [(urn, None, status, [p for p in parts if p], None)]
        else:
            topics = pc.role(c, "topic")
            if not topics and rule.match.call.receiver_properties:
                topics = _wrapper_topic(pc, c)
            default_key = rule.emits.attributes.get("default_topic_key")
            if not topics and default_key:  # the template's default destination from Boot's property
                topics = [pc.resolve({"value": "${" + default_key + "}", "vtype": "java.lang.String",
                                        "basis": "CONFIG", "placeholders": True})]
            tags = pc.role(c, "tag")
            if not topics:
                msg = c.get("attrs", {}).get("message_expression")
                _unresolved_send(pc, c, proto, f"topic of {msg}" if msg else call["expression"],
                                      "the message is built outside this method" if msg else
                                      "no topic argument or bean property")
                continue
            destinations = []
            sep = rule.emits.tag_separator
            for t in topics:
                tag_unknown = None
                if t.value is None and sep:
                    # "topic:" + tag where only the tag does not fold: the topic is still known
                    raw = c.get("attrs", {}).get("topic_prefix") or ""
                    head = pc.resolve({"value": raw, "vtype": "java.lang.String", "basis": "PREFIX",
                                         "placeholders": "${" in raw}) if sep in raw else None
                    if head is not None and head.value is not None and head.value.partition(sep)[0]:
                        tag_unknown = t.expression
                        t = ResolvedText(head.status, head.value.partition(sep)[0], head.keys)
                if t.value is None:
                    _unresolved_send(pc, c, proto, t.expression, t.reason, t)
                    continue
                topic, tag = pc.split_tag(t.value, sep)
                if tags and tags[0].value is not None:
                    tag = tags[0].value
                destinations.append((f"{proto}://{topic}", tag, t.status, [t], tag_unknown))
        for urn, tag, status, rts, tag_unknown in destinations:
            trid = pc.topic(urn, c, {"protocol": proto, "tags": [tag] if tag else [],
                                        "event_types": [event_type] if event_type else []})
            attrs = {"protocol": proto, "tag": tag, "event_type": event_type, "value_basis": status,
                     "send_method": call["name"], "loaded": pc.ctx.class_loaded(c["type"]["binary"])}
            if tag_unknown:
                attrs.update(tag_resolution="UNKNOWN", tag_expression=tag_unknown)
            built = c.get("attrs", {}).get("message_lines")
            pc.rs.relation("PUBLISHES", m["rid"], m["stable"], target_rid=trid, target_key=urn,
                             status="RESOLVED", evidence=[ev] + ([pc.seg(c["path"], *built)] if built else []),
                             ordinal=call["ordinal"],
                             callsite_id=call["callsite_id"], attributes=attrs)
            pc.note_keys(m["rid"], m["stable"], rts, c, "send destination")


def mq_receives(pc: "ProbeContext") -> None:
    """Pull consumption through a template (MQ_RECEIVE rules: ``rocketMQTemplate.receive(T.class)``,
    a 5.x ``RocketMQClientTemplate.receive(n, timeout)``): the calling method is an MQ_CONSUMER
    entry (``consume_mode: PULL``) subscribing to the topic of the template's auto-configured
    consumer — the rule's ``default_topic_key`` (tag ``default_tag_key``, group
    ``default_group_key``) from the service's configuration. A receiver of a subtype of the
    rule's template (``ExtRocketMQTemplate`` subclasses, configured by their own annotation) is
    not that consumer: an ENTRY_UNRESOLVED diagnostic, no subscription."""
    for c in pc.ctx.by_emit.get("MQ_RECEIVE", []):
        rule = pc.s.rules.by_id[c["rule"]]
        proto = rule.emits.protocol or "jmq"
        m = c["member"]
        where = f"{c['path']}:{c['lines'][0]}"
        if not pc.ctx.class_loaded(c["type"]["binary"]):
            pc.exclude_entry(f"{c['call']['callsite_id']}|receive", f"{proto} pull at {where}", [m["rid"]], c)
            continue
        wanted = rule.match.call.receiver_type
        wanted = wanted if isinstance(wanted, list) else [wanted]
        if c["call"]["receiver_type"] not in wanted:
            pc.entry_failed(f"{c['call']['callsite_id']}|receive", f"{proto} pull at {where}: the receiver "
                              f"{c['call']['receiver_type']} is a template subclass whose own consumer "
                              "configuration is not read", [m["rid"]], c)
            continue
        attrs = rule.emits.attributes

        def conf(key: str | None) -> ResolvedText | None:
            return None if not key else pc.resolve({"value": "${" + key + "}", "vtype": "java.lang.String",
                                                      "basis": "CONFIG", "placeholders": True})
        t = conf(attrs.get("default_topic_key"))
        tag, group = conf(attrs.get("default_tag_key")), conf(attrs.get("default_group_key"))
        tags = [tag.value] if tag is not None and tag.value not in (None, "*") else []
        groups = [group.value] if group is not None and group.value is not None else []
        handler = dict(m, path=c["path"])
        handler.pop("lines", None)
        subscribe(pc, c, proto, handler,
                        t or ResolvedText("UNKNOWN", None, expression="(no topic key)", reason="no topic"),
                        tags, groups, [r for r in (tag, group) if r is not None], {"consume_mode": "PULL"})


def mq_bindings(pc: "ProbeContext") -> None:
    """Exchange-to-queue bindings declared as beans (``@Bean Binding`` built with
    ``BindingBuilder.bind(queue).to(exchange).with(key)`` or ``new Binding(…)``): BINDS_TO from
    ``amqp://{exchange}/{routing key}`` to ``amqp-queue://{queue}``. Queue and exchange
    arguments that are beans are looked up among the package's declaration beans."""
    decls: dict[str, Candidate] = {}
    for c in pc.ctx.by_emit.get("MQ_DECLARE", []):
        if pc.ctx.class_loaded(c["type"]["binary"]):
            names = pc.texts(pc.role(c, "name"))
            decls[names[0] if names else c["member"]["name"]] = c
    for c in pc.ctx.by_emit.get("MQ_BINDING", []):
        if not pc.ctx.class_loaded(c["type"]["binary"]):
            continue
        parts: dict[str, ResolvedText] = {}
        for role in ("exchange", "queue", "routing_key"):
            outs = c.get("roles", {}).get(role, [])
            if not outs:
                parts[role] = ResolvedText("RESOLVED", "") if role == "routing_key" else \
                    ResolvedText("UNKNOWN", None, expression=f"(no {role})", reason=f"no {role} argument")
            elif "ref" in outs[0]:
                parts[role] = _declared_name(pc, outs[0], role, decls)
            else:
                parts[role] = pc.resolve(outs[0])
        m = c["member"]
        bad = next((p for p in parts.values() if p.value is None), None)
        if bad is not None:
            pc.diag("TOPIC_UNRESOLVED", f"{m['stable']}|binding", f"AMQP binding {m['stable']}: "
                      f"{bad.expression} does not resolve ({bad.reason})", [m["rid"]], c)
            continue
        src_urn = f"amqp://{parts['exchange'].value}/{parts['routing_key'].value}"
        dst_urn = f"amqp-queue://{parts['queue'].value}"
        src = pc.topic(src_urn, c, {"protocol": "amqp"})
        dst = pc.topic(dst_urn, c, {"protocol": "amqp-queue"})
        basis = "DEFAULT_ONLY" if any(p.status == "DEFAULT_ONLY" for p in parts.values()) else "RESOLVED"
        pc.rs.relation("BINDS_TO", src, src_urn, target_rid=dst, target_key=dst_urn, status="RESOLVED",
                         evidence=[pc.cseg(c)], attributes={"protocol": "amqp", "binding_bean": m["stable"],
                                                              "value_basis": basis})
        pc.note_keys(m["rid"], m["stable"], list(parts.values()), c, "binding")

    _dead_letter_routes(pc)


def subscribe(pc: "ProbeContext", c: Candidate, proto: str, handler: Handler, t: ResolvedText, tags: list[str],
               group: list[str], also_read: list[ResolvedText] | None = None,
               extra: dict[str, Any] | None = None) -> None:
    """An MQ_CONSUMER entry and its SUBSCRIBES; the config keys of its topic, tag filter and
    consumer group (``also_read``) are bound to the entry; ``extra`` attributes are recorded on both."""
    attrs: dict[str, Any] = {"protocol": proto, "tag_filter": tags[0] if tags else None,
                             "consumer_group": group[0] if group else None, **(extra or {})}
    unfolded = next((r for r in pc.role(c, "tag") if r.value is None), None)
    if not tags and unfolded is not None:  # a filter that does not fold is unknown, not absent
        attrs.update(tag_filter_resolution="UNKNOWN", tag_filter_expression=unfolded.expression)
    kinds = pc.role(c, "selector_type")
    if kinds:  # an enum constant (SelectorType.SQL92): its name is the value
        text = kinds[0].value or kinds[0].expression or ""
        name = text.rsplit(".", 1)[-1]
        attrs["tag_filter_type"] = name if re.fullmatch(r"[A-Z][A-Z0-9_]*", name) else "UNKNOWN"
    # redelivery of a failed message: the declared retries; a RocketMQ group's messages go to its
    # dead-letter topic %DLQ%{group} after the last retry (16 unless declared)
    retries = [r.value for r in pc.role(c, "retries") if r.value is not None]
    for rc in pc.retry_rules(handler["stable"]):  # a retry annotation on the handler (MQ_RETRY rules)
        rule = pc.s.rules.by_id[rc["rule"]]
        default = rule.emits.attributes.get("default_attempts")
        retries = [r.value for r in pc.role(rc, "retries") if r.value is not None] or (
            [str(default)] if default is not None else retries)
        suffix = rule.emits.attributes.get("dead_letter_suffix")
        if suffix and t.value is not None:
            attrs["dead_letter_topic"] = f"{t.value}{suffix}"
    if retries:
        attrs["max_retries"] = retries[0]
    if proto == "rocketmq" and group:
        attrs["dead_letter_topic"] = f"%DLQ%{group[0]}"
    if t.value is None:
        urn = handler["stable"].split("/", 1)[-1]
        erid = pc.entry("MQ_CONSUMER", urn, handler, c, dict(attrs, topic_expression=t.expression),
                           "MQ_LISTENER", resolved=False)
        d = pc.diag("TOPIC_UNRESOLVED", f"{c['path']}:{c['lines'][0]}|{t.expression}", f"{proto} "
                      f"listener topic {t.expression} does not resolve: {t.reason}", [erid], c)
        pc.rs.relation("SUBSCRIBES", erid, pc.rs.entities[erid]["stable_id"], target_rid=None,
                         target_key="?" + (t.expression or ""), status="UNRESOLVED",
                         evidence=[pc.cseg(c)], diagnostics=[d],
                         match_keys={"topic_expression": t.expression, "protocol": proto})
        pc.note_keys(erid, pc.rs.entities[erid]["stable_id"], [t] + (also_read or []), c, "listener")
        return
    urn = f"{proto}://{t.value}"
    erid = pc.entry("MQ_CONSUMER", urn, handler, c, dict(attrs, value_basis=t.status), "MQ_LISTENER")
    trid = pc.topic(urn, c, {"protocol": proto, "tags": tags})
    pc.rs.relation("SUBSCRIBES", erid, pc.rs.entities[erid]["stable_id"], target_rid=trid,
                     target_key=urn, status="RESOLVED", evidence=[pc.cseg(c)],
                     attributes=dict(attrs, value_basis=t.status))
    pc.note_keys(erid, pc.rs.entities[erid]["stable_id"], [t] + (also_read or []), c, "listener")


def _wrapper_topic(pc: "ProbeContext", c: Candidate) -> list[ResolvedText]:
    """A wrapper producer bean's configured topic: the receiver field's injected bean's property."""
    rule = pc.s.rules.by_id[c["rule"]]
    recv = c["call"].get("receiver")
    if not recv:
        return []
    res = pc.injected.get((recv["binary"], recv["field"]))
    if res is None or res.status != "RESOLVED":
        return []
    bean = res.beans[0]
    out = []
    for prop, role in rule.match.call.receiver_properties.items():
        if role != "topic":
            continue
        p = bean.properties.get(prop)
        if p and p.get("outcome") is not None:
            out.append(pc.resolve(p["outcome"]))
        elif p and p.get("value") is not None:
            out.append(pc.resolve({"value": p["value"], "vtype": "java.lang.String", "basis": "XML",
                                     "placeholders": "${" in p["value"]}))
    for wc in pc.ctx.by_emit.get("MQ_WRAPPER_BEAN", []):
        if wc["form"] == "xml" and wc["path"] == bean.cand.get("path") and wc["lines"] == bean.cand.get("lines"):
            out.extend(pc.role(wc, "topic"))
    return out


def _unresolved_send(pc: "ProbeContext", c: Candidate, proto: str, expression: str | None, reason: str,
                     rt: ResolvedText | None = None, parts: dict[str, ResolvedText | None] | None = None) -> None:
    """An UNRESOLVED PUBLISHES with TOPIC_UNRESOLVED. A destination that is a parameter of the method, or
    a parameter's getter or field (``topicEnum.getTopic()``), makes the method a wrapper its callers
    resolve (probes/wrappers.py): ``topic_parameter`` (and ``topic_accessor``); for an AMQP
    send ``destination_parts`` gives each of exchange and routing key as a value or a parameter."""
    m = c["member"]
    call = c["call"]
    attrs: dict[str, Any] = {"protocol": proto, "send_method": call["name"]}
    given = c.get("attrs", {}).get("parameters", {})
    acc = given.get("topic")
    if parts is not None:
        dest: dict[str, Any] = {}
        for role, part in parts.items():
            if part is not None and part.value is not None:
                dest[role] = {"value": part.value}
            elif role in given:
                dest[role] = {k: given[role][k] for k in ("parameter", "name", "getter", "field") if k in given[role]}
            else:
                dest = {}
                break
        if dest:
            attrs["topic_parameter"] = next(d["parameter"] for d in dest.values() if "parameter" in d)
            attrs["destination_parts"] = dest
    elif acc is not None and (rt is None or rt.value is None) and expression is not None:
        attrs["topic_parameter"] = acc["parameter"]  # a wrapper method: its callers name the destination
        if "getter" in acc or "field" in acc:  # topicEnum.getTopic(): likewise, through it
            attrs["topic_accessor"] = {k: acc[k] for k in ("name", "getter", "field") if k in acc}
    elif expression in (params := [p["name"] for p in m.get("params", [])]):  # a message's topic setter
        attrs["topic_parameter"] = params.index(expression)
    d = pc.diag("TOPIC_UNRESOLVED", f"{call['callsite_id']}|send", f"{proto} send at {c['path']}:"
                  f"{c['lines'][0]}: destination {expression} does not resolve ({reason})", [m["rid"]], c)
    pc.rs.relation("PUBLISHES", m["rid"], m["stable"], target_rid=None, target_key="?" + (expression or ""),
                     status="UNRESOLVED", evidence=[pc.cseg(c)], diagnostics=[d], ordinal=call["ordinal"],
                     callsite_id=call["callsite_id"], match_keys={"topic_expression": expression,
                                                                  "protocol": proto},
                     attributes=attrs)
    if rt is not None:
        pc.note_keys(m["rid"], m["stable"], [rt], c, "send destination")


def _dead_letter_routes(pc: "ProbeContext") -> None:
    """A queue declared with a dead-letter exchange (and routing key) forwards what expires or is
    rejected there: BINDS_TO from ``amqp-queue://{queue}`` to ``amqp://{exchange}/{key}``
    (``dead_letter``); without a key the message keeps its own (``keeps_routing_key``)."""
    for c in pc.ctx.by_emit.get("MQ_DECLARE", []):
        if pc.s.rules.by_id[c["rule"]].emits.protocol != "amqp-queue" or \
                not pc.ctx.class_loaded(c["type"]["binary"]) or not c.get("roles", {}).get("dead_letter_exchange"):
            continue
        m = c["member"]
        parts = {role: pc.first(c, role) for role in ("queue", "dead_letter_exchange", "dead_letter_routing_key")}
        bad = next((p for role, p in parts.items() if (p is None and role != "dead_letter_routing_key") or
                    (p is not None and p.value is None)), None)
        if bad is not None or parts["queue"] is None or parts["dead_letter_exchange"] is None:
            pc.diag("TOPIC_UNRESOLVED", f"{m['stable']}|dead-letter", f"AMQP queue {m['stable']}: its "
                      f"dead-letter route {bad.expression if bad else '(no queue name)'} does not resolve "
                      f"({bad.reason if bad else 'no queue name'})", [m["rid"]], c)
            continue
        key = parts["dead_letter_routing_key"]
        src_urn = f"amqp-queue://{parts['queue'].value}"
        dst_urn = f"amqp://{parts['dead_letter_exchange'].value}/{key.value if key else ''}"
        src = pc.topic(src_urn, c, {"protocol": "amqp-queue"})
        dst = pc.topic(dst_urn, c, {"protocol": "amqp"})
        known = [p for p in parts.values() if p is not None]
        attrs: dict[str, Any] = {"protocol": "amqp", "dead_letter": True, "queue_bean": m["stable"],
                                 "value_basis": "DEFAULT_ONLY" if any(p.status == "DEFAULT_ONLY" for p in known)
                                 else "RESOLVED"}
        if key is None:
            attrs["keeps_routing_key"] = True
        pc.rs.relation("BINDS_TO", src, src_urn, target_rid=dst, target_key=dst_urn, status="RESOLVED",
                         evidence=[pc.cseg(c)], attributes=attrs)
        pc.note_keys(m["rid"], m["stable"], known, c, "dead-letter route")


def _declared_name(pc: "ProbeContext", ref: BeanRef, role: str, decls: dict[str, Candidate]) -> ResolvedText:
    """The queue or exchange name a bean reference stands for (by bean name, else the only
    declaration of the parameter's type)."""
    found = decls.get(ref["ref"])
    if found is None and ref.get("ref_kind") == "param":
        typed = [d for d in decls.values() if d["attrs"].get("bean_type") == ref.get("type")]
        found = typed[0] if len(typed) == 1 else None
    outs = found.get("roles", {}).get(role, []) if found else []
    if not outs or "ref" in outs[0]:
        return ResolvedText("UNKNOWN", None, expression=ref["ref"], reason=f"no {role} bean named {ref['ref']}")
    return pc.resolve(outs[0])
