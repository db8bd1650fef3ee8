"""The call graph and branch ledger of a package (docs/callgraph.md): CALLS per call site with Spring
narrowing, generic interfaces, Map strategy injection, AOP self-invocation, async submission, lambdas
in streams; ledger items for switch on an enum, nested try/catch/finally, early returns and throws;
GUARDS from config; SCCs; DECLARED_ONLY; NO_COMPENSATION; coverage counts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest


from .conftest import SHOP_FILES
from .stagekit import scan_memory

M = "com.example:shop"
FILES = {
    **SHOP_FILES,
    "src/main/java/com/ex/Channel.java": "package com.ex;\npublic interface Channel { void pay(long id); }\n",
    "src/main/java/com/ex/Alipay.java": "package com.ex;\n@org.springframework.stereotype.Component(\"alipay\")\n"
    "public class Alipay implements Channel { public void pay(long id) { } }\n",
    "src/main/java/com/ex/Wechat.java": "package com.ex;\n@org.springframework.stereotype.Component(\"wechat\")\n"
    "public class Wechat implements Channel { public void pay(long id) { } }\n",
    "src/main/java/com/ex/Handler.java": "package com.ex;\npublic interface Handler<T> { void handle(T t); }\n",
    "src/main/java/com/ex/OrderHandler.java": "package com.ex;\n@org.springframework.stereotype.Component\n"
    "public class OrderHandler implements Handler<com.ex.a.Order> { public void handle(com.ex.a.Order o) { } }\n",
    "src/main/java/com/ex/Status.java": "package com.ex;\npublic enum Status { NEW, PAID, CLOSED }\n",
    "src/main/java/com/ex/Audit.java": "package com.ex;\npublic final class Audit {\n"
    "    private Audit() { }\n    public static void note(String s) { }\n}\n",
    "src/main/java/com/ex/Checkout.java": """package com.ex;

import static com.ex.Audit.note;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.scheduling.annotation.Async;
import org.springframework.transaction.annotation.Transactional;

@org.springframework.stereotype.Service
public class Checkout {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(Checkout.class);

    @Autowired
    private Map<String, Channel> channels;

    @Autowired
    @org.springframework.beans.factory.annotation.Qualifier("alipay")
    private Channel alipay;

    @Autowired
    private Handler<com.ex.a.Order> orderHandler;

    @Autowired
    private ExecutorService pool;

    @Value("${checkout.open:true}")
    private boolean open;

    @Autowired
    private org.apache.rocketmq.spring.core.RocketMQTemplate rocket;

    public void commit(long id) {
        org.springframework.transaction.support.TransactionSynchronizationManager.registerSynchronization(
            new org.springframework.transaction.support.TransactionSynchronization() {
                @Override
                public void afterCommit() { rocket.syncSend("order_paid", String.valueOf(id)); }
            });
    }

    public void find(com.ex.a.Order o) { }
    public void find(com.ex.b.Order o) { }

    public void pay(String channel, com.ex.a.Order a, com.ex.b.Order b) {
        if (!open) {
            return;
        }
        find(a);
        find(b);
        channels.get(channel).pay(a.id);
        alipay.pay(a.id);
        orderHandler.handle(a);
        note("paid");
        LOG.info("paid {}", a.id);
        pool.submit(() -> {
            try {
                alipay.pay(a.id);
            } catch (RuntimeException e) {
                throw new IllegalStateException(e);
            }
        });
        later(a.id);
    }

    @Async
    public void later(long id) { }

    @Transactional
    public void close(List<com.ex.a.Order> orders, Status status) {
        rocket.syncSend("order_closed", "x");
        switch (status) {
            case PAID:
                orders.stream().filter(o -> o.id > 0).forEach(o -> find(o));
                break;
            case CLOSED:
                throw new IllegalStateException("closed");
            default:
                break;
        }
        try {
            try {
                find(orders.get(0));
            } finally {
                note("inner");
            }
        } catch (IllegalStateException e) {
            note("outer");
        } finally {
            note("done");
        }
    }

    public long fact(long n) {
        return n <= 1 ? 1 : n * fact(n - 1);
    }
}
""",
}


@pytest.fixture(scope="module")
def pkg(tmp_path_factory) -> dict:
    tmp = tmp_path_factory.mktemp("callgraph")
    out = tmp / "out"
    result = scan_memory(FILES, out, repo_id="t/callgraph", quiet=True, jobs=1)
    path = result.packages[0].path

    def read(name: str) -> list[dict]:
        return [json.loads(x) for x in (Path(path) / name).read_text(encoding="utf-8").splitlines() if x]

    return {"rels": read("relations.jsonl"), "ledger": read("branch_ledger.jsonl"), "ents": read("entities.jsonl"),
            "diags": read("diagnostics.jsonl"),
            "coverage": json.loads((Path(path) / "coverage.json").read_text(encoding="utf-8"))}


def _calls(pkg: dict, method: str) -> dict[int, dict]:
    """CALLS of one Checkout method by call ordinal."""
    caller = f"{M}/com.ex.Checkout#{method}"
    return {int(r["callsite_id"].rsplit("@", 1)[1]): r for r in pkg["rels"]
            if r["kind"] == "CALLS" and r["callsite_id"].startswith(caller + "@")}


def _target(r: dict) -> str | None:
    return r["target_ref"]["record_id"] if r["target_ref"] else None


def _by_name(pkg: dict, method: str, needle: str) -> list[dict]:
    return [r for r in _calls(pkg, method).values() if needle in (r["attributes"].get("declared_target") or "")]


PAY = "pay(java.lang.String,com.ex.a.Order,com.ex.b.Order)"


def test_overloads_and_same_simple_name_in_two_packages(pkg):
    targets = sorted(_target(r) for r in _by_name(pkg, PAY, "Checkout#find("))
    assert targets == [f"method:{M}/com.ex.Checkout#find(com.ex.a.Order)", f"method:{M}/com.ex.Checkout#find(com.ex.b.Order)"]


def test_map_strategy_injection_is_ambiguous_and_a_strategy_branch(pkg):
    (r,) = [r for r in _by_name(pkg, PAY, "Channel#pay(") if r["resolution_status"] == "AMBIGUOUS"]
    assert sorted(c["record_id"] for c in r["candidate_target_refs"]) == [
        f"method:{M}/com.ex.Alipay#pay(long)", f"method:{M}/com.ex.Wechat#pay(long)"]
    strategy = [i for i in pkg["ledger"] if i["branch_kind"] == "STRATEGY"]
    assert len(strategy) == 1 and strategy[0]["effect_refs"] == [{"scan_id": strategy[0]["effect_refs"][0]["scan_id"],
                                                                   "record_id": r["record_id"]}]


def test_a_qualified_injection_narrows_interface_dispatch(pkg):
    narrowed = [r for r in _by_name(pkg, PAY, "Channel#pay(") if r["resolution_status"] == "RESOLVED"]
    injected = [r for r in narrowed if r["attributes"]["dispatch_kind"] == "INJECTED"]
    assert len(injected) == 1 and _target(injected[0]) == f"method:{M}/com.ex.Alipay#pay(long)"
    assert injected[0]["attributes"]["binding_evidence"].startswith("relation:INJECTS|")


def test_a_generic_interface_reaches_its_implementation(pkg):
    (r,) = _by_name(pkg, PAY, "Handler#handle(")
    assert _target(r) == f"method:{M}/com.ex.OrderHandler#handle(com.ex.a.Order)"
    assert r["attributes"]["declared_target"] == "com.ex.Handler#handle(java.lang.Object)"


def test_static_import_and_noise_pruning(pkg):
    assert [_target(r) for r in _by_name(pkg, PAY, "Audit#note(")] == [f"method:{M}/com.ex.Audit#note(java.lang.String)"]
    assert not _by_name(pkg, PAY, "Logger#")
    assert pkg["coverage"]["pruned_by_rule"]["noise.logging"] == 1
    assert pkg["coverage"]["dimensions"]["call_sites"]["excluded_by_reason"]["noise.logging"] == 1


def test_async_submit_with_an_exception_exit(pkg):
    submitted = [r for r in _by_name(pkg, PAY, "Channel#pay(") if r["attributes"]["dispatch_kind"] == "ASYNC"]
    assert len(submitted) == 1 and _target(submitted[0]) == f"method:{M}/com.ex.Alipay#pay(long)"
    catch = [i for i in pkg["ledger"] if i["branch_id"].startswith(f"{M}/com.ex.Checkout#{PAY}/")
             and i["branch_kind"] == "CATCH"]
    assert len(catch) == 1 and catch[0]["outcome_kind"] == "THROW" and catch[0]["exit_ref"] is not None


def test_aop_self_invocation_is_recorded_not_advised(pkg):
    (r,) = _by_name(pkg, PAY, "Checkout#later(")
    assert r["attributes"]["dispatch_kind"] != "ASYNC"
    assert r["attributes"]["self_invocation"] is True and r["attributes"]["advice_bypassed"] == ["@Async"]


def test_switch_on_an_enum_and_nested_try_catch_finally(pkg):
    close = f"{M}/com.ex.Checkout#close(java.util.List,com.ex.Status)/"
    items = {i["branch_id"][len(close):]: i for i in pkg["ledger"] if i["branch_id"].startswith(close)}
    # the outer try is try[0]; the inner one (inside its block, not an arm) is try[1] at the same level
    assert set(items) == {"switch[0]/case[PAID]", "switch[0]/case[CLOSED]", "switch[0]/case[CLOSED]/throw[0]",
                          "switch[0]/default", "try[0]/catch[IllegalStateException]", "try[0]/finally",
                          "try[1]/finally"}
    assert items["switch[0]/case[CLOSED]"]["outcome_kind"] == "THROW"
    assert items["switch[0]/case[PAID]"]["outcome_kind"] == "BREAK"
    # the lambda in the stream is no entity: its call belongs to the PAID case; the lambda's parameter
    # type is not inferred, so the overload stays AMBIGUOUS (both candidates), never a guess
    calls = _calls(pkg, "close(java.util.List,com.ex.Status)")
    in_lambda = [r for r in calls.values() if r["resolution_status"] == "AMBIGUOUS"]
    assert len(in_lambda) == 1 and sorted(c["record_id"] for c in in_lambda[0]["candidate_target_refs"]) == [
        f"method:{M}/com.ex.Checkout#find(com.ex.a.Order)", f"method:{M}/com.ex.Checkout#find(com.ex.b.Order)"]
    case_paid = {e["record_id"] for e in items["switch[0]/case[PAID]"]["effect_refs"]}
    assert in_lambda[0]["record_id"] in case_paid
    # orders.get(0) on List<com.ex.a.Order> picks find(com.ex.a.Order); it sits in the inner try,
    # whose finally and the outer catch and finally are items of their own
    (inner,) = [r for r in calls.values() if r["resolution_status"] == "RESOLVED" and
                _target(r) == f"method:{M}/com.ex.Checkout#find(com.ex.a.Order)"]
    assert not any(inner["record_id"] in {e["record_id"] for e in i["effect_refs"]} for i in items.values())
    assert items["try[0]/catch[IllegalStateException]"]["outcome_kind"] == "CONTINUE"
    assert len(items["try[1]/finally"]["effect_refs"]) == 1 and items["try[1]/finally"]["parent_branch_id"] is None


def test_guard_from_a_config_field(pkg):
    guards = [r for r in pkg["rels"] if r["kind"] == "GUARDS"]
    assert len(guards) == 1
    assert guards[0]["source_ref"]["record_id"] == "config:config://checkout.open"
    assert guards[0]["guard_ref"]["record_id"].endswith(f"#{PAY}/if[0]/then")


def test_recursion_is_an_scc(pkg):
    (r,) = _by_name(pkg, "fact(long)", "Checkout#fact(")
    assert r["attributes"]["scc"] == f"{M}/com.ex.Checkout#fact(long)"


def test_coverage_counts_call_sites_and_branches(pkg):
    dims = pkg["coverage"]["dimensions"]
    cs = dims["call_sites"]
    assert cs["discovered"] == cs["resolved"] + cs["partial"] + cs["failed"] + cs["excluded"]
    assert cs["partial"] >= 1 and cs["resolved_external"] >= 1
    assert dims["branch_ledger"]["discovered"] == len(pkg["ledger"])
    assert all(e["branches_analysed"] for e in pkg["coverage"]["entries"])


def test_sends_inside_a_transaction_and_after_commit(pkg):
    sends = {r["target_ref"]["record_id"]: r for r in pkg["rels"] if r["kind"] == "PUBLISHES" and r["target_ref"]}
    closed = sends["topic:rocketmq://order_closed"]
    assert closed["attributes"]["in_transaction"] is True
    assert closed["attributes"]["transaction_roots"] == [f"{M}/com.ex.Checkout#close(java.util.List,com.ex.Status)"]
    paid = sends["topic:rocketmq://order_paid"]
    assert paid["attributes"]["after_commit"] is True and "in_transaction" not in paid["attributes"]


LOCAL_GUARD_FILES = {
    **SHOP_FILES,
    "src/main/java/com/jd/laf/config/Property.java": "package com.jd.laf.config;\n"
    "public class Property { public String getString() { return null; } }\n",
    "src/main/java/com/jd/laf/config/ConfiguratorManager.java": "package com.jd.laf.config;\n"
    "public class ConfiguratorManager {\n"
    "    public static ConfiguratorManager getInstance() { return null; }\n"
    "    public Property getProperty(String key) { return null; }\n}\n",
    "src/main/java/com/ex/Switches.java": """package com.ex;

import com.jd.laf.config.ConfiguratorManager;
import com.jd.laf.config.Property;

@org.springframework.stereotype.Service
public class Switches {
    public int tested() {
        Property p = ConfiguratorManager.getInstance().getProperty("promo.gate");
        if (p == null || p.getString() == null) {
            return 0;
        }
        return 1;
    }

    public int reassigned() {
        Property p = ConfiguratorManager.getInstance().getProperty("promo.other");
        p = null;
        if (p == null) {
            return 0;
        }
        return 1;
    }

    public int plain() {
        String s = String.valueOf(3);
        if (s == null) {
            return 0;
        }
        return 1;
    }
}
""",
}


def test_a_config_value_read_into_a_local_guards_the_branch_that_tests_it(tmp_path):
    result = scan_memory(LOCAL_GUARD_FILES, tmp_path / "out", repo_id="t/local-guard", quiet=True, jobs=1)
    rels = [json.loads(x) for x in (Path(result.packages[0].path) / "relations.jsonl").read_text().splitlines() if x]
    guards = [r for r in rels if r["kind"] == "GUARDS"]
    # only the local never reassigned guards; a local from a call that reads no config guards nothing
    assert [(g["source_ref"]["record_id"], g["target_ref"]["record_id"]) for g in guards] == [
        ("config:ducc://promo.gate", f"method:{M}/com.ex.Switches#tested()")]
    assert guards[0]["attributes"]["reads"] == "local p = getProperty()"
    assert guards[0]["guard_ref"]["record_id"].endswith("#tested()/if[0]/then")


def test_a_class_of_thousands_of_members_resolves_each_call(tmp_path):
    # methods, overloads, fields and anonymous classes looked up by name in one large class (the
    # lookups are indexed; benchmarks/large_class.py measures the time): every call still reaches its own
    n = 500
    body = ["package com.ex;\npublic class Big {\n    public void m0() { }\n    public void m0(int x) { }\n"]
    for i in range(1, n + 1):
        body.append(f"    private int f{i};\n    public void m{i}() {{ m{i - 1}(); f{i}++; }}\n"
                    f"    public void m{i}(int x) {{ f{i} += x; this.m{i}(); }}\n"
                    f"    public Runnable r{i}() {{ Runnable x = () -> m{i}(); return new Runnable() {{ "
                    f"public void run() {{ x.run(); m{i - 1}(f{i}); }} }}; }}\n")
    result = scan_memory({**SHOP_FILES, "src/main/java/com/ex/Big.java": "".join(body) + "}\n"}, tmp_path / "out", repo_id="t/big", quiet=True, jobs=1)
    got: dict[str, str] = {}
    for line in (Path(result.packages[0].path) / "relations.jsonl").read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        if r["kind"] == "CALLS" and "/com.ex.Big" in r["callsite_id"]:
            assert r["resolution_status"] == "RESOLVED", r["callsite_id"]
            got[r["callsite_id"].split("/", 1)[1]] = r["attributes"]["declared_target"]
    assert len(got) == 6 * n
    for i in (1, 2, n // 2, n):
        assert got[f"com.ex.Big#m{i}()@0"] == f"com.ex.Big#m{i - 1}()"
        assert got[f"com.ex.Big#m{i}(int)@0"] == f"com.ex.Big#m{i}()"
        assert got[f"com.ex.Big#r{i}()@0"] == f"com.ex.Big#m{i}()"
        # the anonymous class's local ``x`` is read from the member around it
        assert got[f"com.ex.Big${i}#run()@0"] == "java.lang.Runnable#run()"
        assert got[f"com.ex.Big${i}#run()@1"] == f"com.ex.Big#m{i - 1}(int)"
