"""Rule files (docs/rules.md): every shipped and example rule's samples, their forms, and the middleware forms
the probes must read (docs/middleware.md §2)."""

from __future__ import annotations

import json

import jsonschema
import pytest
import yaml

from diting.ir.schema_export import SHIPPED_DIR
from diting.probes.samples import run_sample
from diting.rules import load_rules, shipped_rules_dir

from tests.conftest import ROOT, run_cli

EXAMPLES = ROOT / "examples" / "rules"
RULES = load_rules([EXAMPLES])
#: rule families that are catalogs, not probes (no sample forms required)
CATALOG_FAMILIES = {"catalog", "maven-parents", "build"}
FORMS = ("declared", "indirect", "unresolved", "unsupported", "lookalike")

SAMPLES = [(rid, i) for rid, r in sorted(RULES.by_id.items()) for i in range(len(r.samples))]


@pytest.mark.parametrize("rule_id,index", SAMPLES, ids=[f"{r}#{i}" for r, i in SAMPLES])
def test_rule_sample(rule_id, index, tmp_path):
    rule = RULES.by_id[rule_id]
    dirs = [EXAMPLES] if RULES.origin[rule_id] == EXAMPLES else []
    result = run_sample(rule, index, rule.samples[index], dirs, tmp_path / "work")
    assert result.passed, "\n".join(result.failures)


def test_every_probe_rule_has_the_five_forms():
    """A declared sample and a look-alike, or a reason; an indirect, an unresolved (or ambiguous)
    and an unsupported form, each a sample or a stated reason why the rule has none."""
    missing = []
    for rid, r in sorted(RULES.by_id.items()):
        if r.family in CATALOG_FAMILIES:
            continue
        have = {s.form for s in r.samples} | set(r.not_applicable)
        if "ambiguous" in have:
            have.add("unresolved")
        if "declared" not in {s.form for s in r.samples}:
            missing.append(f"{rid}: no declared sample")
        missing += [f"{rid}: no {f} form" for f in FORMS if f not in have]
        missing += [f"{rid}: empty reason for {f}" for f, why in r.not_applicable.items() if len(why.strip()) < 10]
        missing += [f"{rid}: {f} is both sampled and not applicable" for f in r.not_applicable
                    if f in {s.form for s in r.samples}]
    assert not missing, "\n".join(missing)


def test_lookalike_samples_assert_absence():
    """A look-alike sample must say what it must not produce (a test that cannot fail is no test)."""
    bad = [f"{rid}#{i}" for rid, r in RULES.by_id.items() for i, s in enumerate(r.samples)
           if s.form == "lookalike" and not s.expect_none and not s.expected_records]
    assert not bad
    empty = [f"{rid}#{i}" for rid, r in RULES.by_id.items() for i, s in enumerate(r.samples)
             if not s.expect_none and not s.expected_records]
    assert not empty


#: every middleware form the probes must read (docs/middleware.md §2) → (rule id, text a sample of it must contain, or None for its declared sample)
PROBE_FORMS: dict[str, list[tuple[str, str | None]]] = {
    "JSF provider: <jsf:provider interface alias ref>": [("jsf.xml-provider", None)],
    "JSF provider: @JsfProvider-style annotation": [("jsf.provider-style", None)],
    "JSF provider: com.jd.jsf.gd.config.annotation.Provider": [("jsf.provider-annotation", None)],
    "JSF consumer: <jsf:consumer id interface alias timeout retries> and its injection": [("jsf.xml-consumer", None)],
    "JSF consumer: @JsfConsumer-style annotation": [("jsf.consumer-style", None)],
    "JSF consumer: com.jd.jsf.gd.config.annotation.Consumer field": [("jsf.consumer-annotation", None)],
    "Dubbo: <dubbo:service>": [("dubbo.xml-service", None), ("dubbo.xml-service-alibaba", None)],
    "Dubbo: <dubbo:reference>": [("dubbo.xml-reference", None), ("dubbo.xml-reference-alibaba", None)],
    "Dubbo: @DubboService (group, version)": [("dubbo.service", "group = \"trade\"")],
    "Dubbo: @DubboReference": [("dubbo.reference", None)],
    "Dubbo: legacy @Service of org.apache.dubbo": [("dubbo.service-legacy", None)],
    "Dubbo: legacy @Service of com.alibaba.dubbo": [("dubbo.service-alibaba", None)],
    "Dubbo: legacy @Reference of org.apache.dubbo / com.alibaba.dubbo": [("dubbo.reference-legacy", None),
                                                                       ("dubbo.reference-alibaba", None)],
    "HTTP: @RestController + @RequestMapping/@GetMapping…, class + method paths, context path":
        [("http.rest-controller", "context-path"), ("http.get-mapping", None), ("http.post-mapping", None),
         ("http.put-mapping", None), ("http.delete-mapping", None), ("http.patch-mapping", None)],
    "HTTP: @Controller": [("http.controller", None)],
    "HTTP: @FeignClient(name/value/url/path/contextId) as consumers": [("http.feign-client", "path = \"/stock\""),
                                                                     ("http.feign-client", "contextId")],
    "HTTP: RestTemplate calls to a service name under @LoadBalanced": [("http.load-balanced", None)],
    "HTTP: WebClient calls to a service name under @LoadBalanced": [("http.web-client-uri", None)],
    "JMQ: <jmq:consumer>": [("jmq.xml-consumer", None)],
    "JMQ: <jmq:listener topic listener> / MessageListener implementations bound in XML": [("jmq.xml-listener", None)],
    "JMQ: @JmqListener": [("jmq.listener-annotation", None)],
    "JMQ: MessageProducer.send(...)": [("jmq.producer-send", None)],
    "RocketMQ: @RocketMQMessageListener(topic, selectorExpression)": [("rocketmq.listener", "selectorExpression")],
    "RocketMQ: RocketMQTemplate.send/convertAndSend/syncSend(\"topic:tag\")": [("rocketmq.template-send", "stock_locked:SKU"),
                                                                            ("rocketmq.template-send", "convertAndSend")],
    "Kafka: @KafkaListener(topics)": [("kafka.listener", None)],
    "Kafka: KafkaTemplate.send(topic, ..)": [("kafka.template-send", None)],
    "RabbitMQ: @RabbitListener(queues)": [("rabbitmq.listener", None)],
    "RabbitMQ: AmqpTemplate/RabbitTemplate.convertAndSend(exchange, routingKey, ..)": [("rabbitmq.send", "AmqpTemplate"),
                                                                                      ("rabbitmq.send", "RabbitTemplate")],
    "RabbitMQ: Binding beans": [("rabbitmq.binding-bean", None)],
    "wrapper beans: <bean class=…Producer><property name=topic value=${…}> then xProducer.send(...)":
        [("jmq.producer-send", "<property name=\"topic\" value=\"${jmq.topic.ready}\"/>")],
    "wrapper beans: the producer declared by a @Bean method": [("jmq.producer-send", "@Bean public TopicProducer")],
    "wrapper methods: MqHelper.send(TopicEnum.X, payload)": [("acme.mq-helper-send", "MqHelper.send(TopicEnum.ORDER_CREATED")],
    "Ducc: @LafValue": [("ducc.laf-value", None)],
    "Ducc: LafUcc": [("ducc.laf-ucc", None)],
    "Ducc: ConfiguratorManager.getInstance().getProperty(..)": [("ducc.configurator-read", None)],
    "config: @Value": [("spring-config.value", None)],
    "config: @ConfigurationProperties prefixes": [("spring-config.configuration-properties", None)],
    "config: Environment.getProperty": [("spring-config.environment-read", None)],
    "config: Apollo annotations": [("apollo.json-value", None), ("apollo.config-read", None)],
    "config: Nacos annotations": [("nacos.value", None), ("nacos.configuration-properties", None)],
    "JimDB: com.jd.jim.cli.Cluster setNx/get/set/hSet/del": [("jimdb.cluster-write", None), ("jimdb.cluster-read", None)],
    "Redis: RedisTemplate.opsForValue()…": [("redis.ops-write", "opsForValue")],
    "Redis: StringRedisTemplate with folded key prefixes": [("redis.ops-write", "StringRedisTemplate")],
    "schedulers: @Scheduled(cron/fixedRate/zone) with cron, zone and enable switch":
        [("scheduling.scheduled", "zone"), ("spring.conditional-on-property", None)],
    "schedulers: XXL-Job @XxlJob": [("scheduling.xxl-job", None)],
    "schedulers: ElasticJob classes by rule": [("scheduling.elastic-job-simple", None)],
    "schedulers: TBSchedule classes by rule": [("scheduling.tbschedule-single", None)],
    "events: publishEvent": [("events.publish", None)],
    "events: @EventListener": [("events.event-listener", None)],
    "events: @TransactionalEventListener": [("events.transactional-event-listener", None)],
    "events: @Async": [("scheduling.async", None)],
    "dynamic: applicationContext.getBean(..)": [("dynamic.get-bean", None)],
    "dynamic: Method.invoke": [("dynamic.method-invoke", None)],
    "dynamic: JSF/Dubbo generic $invoke": [("dynamic.jsf-generic", None), ("dynamic.dubbo-generic", None)],
    "monitoring: com.jd.ump.annotation.JProfiler (noise, an entry hint)": [("noise.jprofiler", None)],
}


def _sample_text(sample) -> str:
    return (sample.description or "") + "\n" + "\n".join(sample.input.values())


def test_every_spec_form_has_a_sample():
    missing = []
    for form, wants in PROBE_FORMS.items():
        for rid, text in wants:
            rule = RULES.by_id.get(rid)
            if rule is None:
                missing.append(f"{form}: rule {rid} does not exist")
                continue
            ok = [s for s in rule.samples if s.form != "lookalike" and s.expected_records
                  and (text is None and s.form == "declared" or text is not None and text in _sample_text(s))]
            if not ok:
                missing.append(f"{form}: {rid} has no sample{' containing ' + repr(text) if text else ''}")
    assert not missing, "\n".join(missing)


def test_shipped_rule_files_validate_against_the_shipped_schema():
    schema = json.loads((SHIPPED_DIR / "rule-file.schema.json").read_text(encoding="utf-8"))
    for path in sorted(shipped_rules_dir().glob("*.yaml")) + sorted(EXAMPLES.glob("*.yaml")):
        doc = json.loads(json.dumps(yaml.safe_load(path.read_text(encoding="utf-8"))))  # int keys as JSON strings
        jsonschema.validate(doc, schema)


def test_rules_command_checks_a_user_directory(tmp_path):
    r = run_cli("rules", "--rules", str(EXAMPLES), "--json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["rules"] == 3 and report["samples"] == 15 and report["failed"] == []
    broken = tmp_path / "broken"
    broken.mkdir()
    text = (EXAMPLES / "acme-mq.yaml").read_text(encoding="utf-8").replace(
        'target: "topic:jmq://order_created_topic", status: RESOLVED}', 'target: "topic:jmq://wrong", status: RESOLVED}', 1)
    (broken / "acme-mq.yaml").write_text(text, encoding="utf-8")
    r = run_cli("rules", "--rules", str(broken))
    assert r.returncode == 1 and "FAIL acme.mq-helper-send sample #0" in r.stdout
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "x.yaml").write_text("family: x\nversion: 1\nowner: me\ndescription: d\nrules:\n  - id: X Y\n", encoding="utf-8")
    r = run_cli("rules", "--rules", str(bad))
    assert r.returncode != 0 and "rule file bad/x.yaml" in r.stderr and "Traceback" not in r.stderr


def test_rule_digests_enter_the_input_digest(tmp_path):
    """Each rule's sha256 is in analysis_input.json; adding a rule directory changes the scan id."""
    base = load_rules()
    with_example = load_rules([EXAMPLES])
    ids = {e["id"] for e in with_example.digest_entries()}
    assert {"acme.mq-helper-send", "acme.producer-send"} <= ids
    assert len(ids) == len(base.digest_entries()) + 3
    assert all(len(e["sha256"]) == 64 for e in base.digest_entries())




def test_docs_worked_wrapper_rule_example_is_a_valid_rule_file_whose_sample_passes(tmp_path):
    """The first YAML block of docs/rules.md §9 (in-house MQ wrappers), copied as a user would."""
    import re

    from diting.probes.samples import run_rule_samples

    page = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    section = page[page.index("## 9. In-house MQ wrappers"):]
    block = re.search(r"```yaml\n(.*?)```", section, re.S).group(1)
    (tmp_path / "acme.yaml").write_text(block, encoding="utf-8")
    mine = load_rules([tmp_path]).from_dirs([tmp_path])
    assert [r.id for r in mine] == ["acme.mq-helper-send"]
    results = run_rule_samples(mine, [tmp_path])
    assert results and all(not r.failures for r in results), [r.failures for r in results]


def test_a_failing_sample_names_the_closest_records_and_what_differs():
    from diting.probes.samples import nearest
    records = [{"record_id": "relation:a", "kind": "PUBLISHES", "resolution_status": "UNRESOLVED", "target_ref": None},
               {"record_id": "relation:b", "kind": "PUBLISHES", "resolution_status": "RESOLVED",
                "target_ref": {"record_id": "topic:jmq://t"}},
               {"record_id": "topic:jmq://t", "kind": "TOPIC"}]
    said = nearest({"kind": "PUBLISHES", "status": "AMBIGUOUS", "target": "topic:jmq://t"}, records)
    assert said.startswith("closest records of kind PUBLISHES: relation:b differs in {\"status\": \"RESOLVED\"}")
    assert nearest({"kind": "CONTRACT"}, records) == "no record of kind CONTRACT; kinds written: PUBLISHES, TOPIC"


def test_rule_values_a_record_cannot_hold_are_refused_when_the_file_loads(tmp_path):
    import pytest

    from diting.errors import UserError
    from diting.rules import load_rules
    base = (tmp_path / "r")
    base.mkdir()
    rule = ("family: x\nversion: 1\nowner: o\ndescription: d\nrules:\n  - id: x.a\n    version: {v}\n    owner: o\n"
            "    family: x\n    description: d\n    source: s\n    match: {{annotation: {{fqn: a.B}}}}\n"
            "    emits: {{kind: BEAN, attributes: {{n: {a}}}}}\n")
    for v, a, says in (("99999999999999999999999999", "1", "less than or equal"), ("1", "1.5", "floating-point"),
                       ("1", "99999999999999999999999", "beyond 64 bits"), ("1" * 5000, "1", "not valid YAML")):
        (base / "x.yaml").write_text(rule.format(v=v, a=a), encoding="utf-8")
        with pytest.raises(UserError, match=says):
            load_rules([base])
