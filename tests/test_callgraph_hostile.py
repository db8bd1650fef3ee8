"""The call graph and ledger under hostile input (the second hostile review of issue 6): cyclic
hierarchies, same-name locals in sibling scopes, colliding case labels, wrappers that rewrite their
topic, names that shadow config fields, duplicate declarations, failures on other threads, nested
async lambdas, enum constant bodies, local classes, captured locals of same-line methods, method
references to @Async methods."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from diting.ir.verify import verify_package
from diting.scan.pipeline import ScanOptions, scan

from .conftest import SHOP_FILES, make_repo

M = "com.example:shop"
KAFKA = "@org.springframework.beans.factory.annotation.Autowired private " \
        "org.springframework.kafka.core.KafkaTemplate<String, String> kafka;"
LOG = "private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(Object.class);"

FILES = {
    **SHOP_FILES,
    "src/main/java/com/ex/C1.java": "package com.ex;\nclass CycA extends CycB { void m() { } }\n",
    "src/main/java/com/ex/C2.java": "package com.ex;\nclass CycB extends CycA { void n() { m(); } }\n",
    "src/main/java/com/ex/A.java": "package com.ex;\npublic class A { public void go() { } }\n",
    "src/main/java/com/ex/B.java": "package com.ex;\npublic class B { public void go() { } }\n",
    "src/main/java/com/ex/Scopes.java": """package com.ex;
public class Scopes {
  void f(java.util.List<A> as, java.util.List<B> bs) {
    for (A it : as) { it.go(); }
    for (B it : bs) { it.go(); }
    if (as.isEmpty()) { A y = new A(); y.go(); } else { B y = new B(); y.go(); }
  }
}
""",
    "src/main/java/com/ex/Lab.java": """package com.ex;
public class Lab {
  void a() { }
  public void f(String s) {
    switch (s) {
      case "a b": a(); break;
      case "ab": a(); break;
      case "p/q": a(); break;
      case "p%2Fq": a(); break;
      case "": a(); break;
      case " ": a(); break;
      default: a();
    }
  }
}
""",
    "src/main/java/com/ex/W1.java": "package com.ex;\n@org.springframework.stereotype.Component\npublic class W1 {\n"
    f"  {KAFKA}\n  public void send(String topic, String body) {{ topic = \"prefix-\" + topic; kafka.send(topic, body); }}\n"
    "  public void plain(String topic, String body) { kafka.send(topic, body); }\n}\n",
    "src/main/java/com/ex/Caller.java": "package com.ex;\n@org.springframework.stereotype.Service\npublic class Caller {\n"
    "  @org.springframework.beans.factory.annotation.Autowired private W1 w1;\n"
    "  public void go() { w1.send(\"orders\", \"b\"); w1.plain(\"payments\", \"b\"); }\n}\n",
    "src/main/java/com/ex/G.java": """package com.ex;
@org.springframework.stereotype.Service
public class G {
  @org.springframework.beans.factory.annotation.Value("${feature.open:false}")
  private boolean open;
  static void a() { }
  public void local() { boolean open = Math.random() > 0.5; if (open) { a(); } }
  public void param(boolean open) { if (open) { a(); } }
  public void lambda(java.util.List<Boolean> l) { l.forEach(open -> { if (open) { a(); } }); }
  class Inner { boolean open; void x() { if (open) { a(); } } }
  public void real() { if (open) { a(); } }
}
""",
    "src/main/java/com/ex/Dup.java": "package com.ex;\npublic class Dup {\n  static void a() { }\n"
    "  public void f(int x) { if (x > 0) { a(); } }\n}\n",
    "src/main/java/com/ex/Dup2.java": "package com.ex;\npublic class Dup {\n  static void b() { }\n"
    "  public void f(int x) { if (x > 1) { b(); } else { b(); } }\n}\n",
    "src/main/java/com/ex/S.java": f"""package com.ex;
@org.springframework.stereotype.Service
public class S {{
  {LOG}
  {KAFKA}
  @org.springframework.beans.factory.annotation.Autowired private java.util.concurrent.ExecutorService pool;
  public void asyncInTry(String x) {{
    try {{ pool.submit(() -> kafka.send("t-async", x)); }} catch (RuntimeException e) {{ LOG.warn("x", e); }}
  }}
  public void condRethrow(String x, boolean strict) {{
    try {{ kafka.send("t-cond", x); }} catch (RuntimeException e) {{ if (strict) {{ throw e; }} LOG.warn("x", e); }}
  }}
  public void lost(String x) {{
    try {{ kafka.send("t-lost", x); }} catch (RuntimeException e) {{ LOG.warn("x", e); }}
  }}
  @org.springframework.transaction.annotation.Transactional
  public void tx(java.util.List<String> items) {{
    java.util.concurrent.CompletableFuture.runAsync(() -> items.forEach(i -> notify1(i)));
  }}
  public void notify1(String i) {{ kafka.send("t1", i); }}
  @org.springframework.scheduling.annotation.Async public void later(String n) {{ }}
  public void sup(java.util.List<String> l) {{ l.forEach(this::later); }}
}}
""",
    "src/main/java/com/ex/Tx.java": "package com.ex;\npublic interface Tx {\n"
    "  @org.springframework.transaction.annotation.Transactional\n  void save(String x);\n}\n",
    "src/main/java/com/ex/TxImpl.java": "package com.ex;\n@org.springframework.stereotype.Service\n"
    f"public class TxImpl implements Tx {{\n  {KAFKA}\n  public void save(String x) {{ kafka.send(\"in-iface-tx\", x); }}\n}}\n",
    "src/main/java/com/ex/Chain.java": "package com.ex;\npublic class Chain {\n"
    + "".join(f"  public Chain f{i}() {{ return this; }}\n" for i in range(25))
    + "  public void end() { }\n  void run() { new Chain()" + "".join(f".f{i}()" for i in range(25)) + ".end(); }\n}\n",
    "src/main/java/com/ex/Stored.java": f"""package com.ex;
@org.springframework.stereotype.Service
public class Stored {{
  {KAFKA}
  @org.springframework.beans.factory.annotation.Autowired private java.util.concurrent.ExecutorService pool;
  @org.springframework.transaction.annotation.Transactional
  public void tx2() {{ pool.submit(() -> {{ Runnable r = () -> notify2(); r.run(); }}); }}
  public void notify2() {{ kafka.send("t2", "x"); }}
}}
""",
    "src/main/java/com/ex/G2.java": """package com.ex;
@org.springframework.stereotype.Service
public class G2 {
  @org.springframework.beans.factory.annotation.Value("${feature.gate:false}")
  private boolean gate;
  static void a() { }
  public void explicit(boolean gate) { if (this.gate) { a(); } }
  public void pattern(Object o) { if (o instanceof Boolean gate && gate) { a(); } }
  public void before() { if (gate) { a(); } boolean gate = false; }
}
""",
    "src/main/java/com/ex/Util.java": "package com.ex;\npublic class Util { static void a() { } static void b() { } }\n",
    "src/main/java/com/ex/E.java": """package com.ex;
public enum E {
  X { void go() { Util.a(); } },
  Y { void go() { Util.b(); } };
  abstract void go();
  static void all() { for (E e : values()) { e.go(); } }
}
""",
    "src/main/java/com/ex/Locals.java": """package com.ex;
public class Locals {
  void one() { class Local { void run() { Util.a(); } } new Local().run(); }
  void two() { class Local { void run() { Util.b(); } } new Local().run(); }
}
""",
    "src/main/java/com/ex/U.java": "package com.ex; public class U { void f() { A x = new A(); Runnable r = new "
    "Runnable() { public void run() { x.go(); } }; } void g() { B x = new B(); Runnable r = new Runnable() { "
    "public void run() { x.go(); } }; } }\n",
}


@pytest.fixture(scope="module")
def pkg(tmp_path_factory) -> dict:
    tmp = tmp_path_factory.mktemp("cg-hostile")
    repo, sha = make_repo(tmp, FILES)
    result = scan(repo, sha, ScanOptions(out=tmp / "out", repo_id="t/cg-hostile", quiet=True, jobs=1))
    path = Path(result.packages[0].path)

    def read(name: str) -> list[dict]:
        return [json.loads(x) for x in (path / name).read_text(encoding="utf-8").splitlines() if x]

    return {"path": path, "repo": repo, "rels": read("relations.jsonl"), "ledger": read("branch_ledger.jsonl"),
            "diags": read("diagnostics.jsonl")}


def _calls_from(pkg: dict, method: str) -> list[dict]:
    return sorted((r for r in pkg["rels"] if r["kind"] == "CALLS" and r["callsite_id"].startswith(f"{M}/{method}@")),
                  key=lambda r: int(r["callsite_id"].rsplit("@", 1)[1]))


def _target(r: dict) -> str | None:
    return r["target_ref"]["record_id"] if r["target_ref"] else None


def test_the_package_is_written_and_verifies(pkg):
    """A cyclic hierarchy (which javac rejects) does not stop the scan."""
    assert verify_package(pkg["path"], deep=True, repo=Path(pkg["repo"])) == []


def test_same_name_locals_in_sibling_scopes(pkg):
    gos = [_target(r) for r in _calls_from(pkg, "com.ex.Scopes#f(java.util.List,java.util.List)")
           if "#go(" in (r["attributes"].get("declared_target") or "")]
    assert gos == [f"method:{M}/com.ex.A#go()", f"method:{M}/com.ex.B#go()", f"method:{M}/com.ex.A#go()",
                   f"method:{M}/com.ex.B#go()"]


def test_case_labels_give_distinct_branch_ids(pkg):
    prefix = f"{M}/com.ex.Lab#f(java.lang.String)/"
    ids = [i["branch_id"][len(prefix):] for i in pkg["ledger"] if i["branch_id"].startswith(prefix)]
    assert len(ids) == len(set(ids)) == 7
    assert 'switch[0]/case["a%20b"]' in ids and 'switch[0]/case["ab"]' in ids
    assert 'switch[0]/case["p%2Fq"]' in ids and 'switch[0]/case["p%252Fq"]' in ids


def test_a_wrapper_that_rewrites_its_topic_publishes_nothing_for_its_callers(pkg):
    sends = {_target(r) for r in pkg["rels"] if r["kind"] == "PUBLISHES" and r["attributes"].get("via_wrapper")}
    assert sends == {"topic:kafka://payments"}


def test_only_a_config_field_guards(pkg):
    guards = sorted(g["target_ref"]["record_id"] for g in pkg["rels"] if g["kind"] == "GUARDS")
    # G: only real(); G2: this.gate under a same-name parameter, and a read before a same-name local;
    # never an instanceof pattern variable
    assert guards == [f"method:{M}/com.ex.G#real()", f"method:{M}/com.ex.G2#before()",
                      f"method:{M}/com.ex.G2#explicit(boolean)"]


def test_a_long_call_chain_keeps_its_receiver_types(pkg):
    calls = _calls_from(pkg, "com.ex.Chain#run()")
    assert all(r["resolution_status"] == "RESOLVED" for r in calls)
    assert len(calls) == 27 and _target(calls[0]) == f"method:{M}/com.ex.Chain#end()"  # pre-order: outermost first


def test_duplicate_declarations_leave_one_body(pkg):
    sites = [r["callsite_id"] for r in pkg["rels"] if r["kind"] == "CALLS"]
    assert len(sites) == len(set(sites))
    dup = [i["branch_id"] for i in pkg["ledger"] if "/com.ex.Dup#" in i["branch_id"]]
    assert dup == [f"{M}/com.ex.Dup#f(int)/if[0]/then"]


def test_no_compensation_only_where_the_failure_is_only_logged(pkg):
    found = [d["message"] for d in pkg["diags"] if d["code"] == "NO_COMPENSATION"]
    assert len(found) == 1 and "t-lost" in found[0]


@pytest.mark.parametrize("method, callee, topic", [
    # runAsync(() -> items.forEach(i -> notify1(i))): a lambda inside a submitted lambda
    ("com.ex.S#tx(java.util.List)", "notify1", "t1"),
    # submit(() -> { Runnable r = () -> notify2(); r.run(); }): a lambda kept in a local inside one
    ("com.ex.Stored#tx2()", "notify2", "t2"),
])
def test_a_lambda_inside_a_submitted_lambda_runs_outside_the_transaction(pkg, method, callee, topic):
    (call,) = [r for r in _calls_from(pkg, method) if callee in str(_target(r))]
    assert call["attributes"]["dispatch_kind"] == "ASYNC"
    send = next(r for r in pkg["rels"] if r["kind"] == "PUBLISHES" and _target(r) == f"topic:kafka://{topic}")
    assert "in_transaction" not in send["attributes"]


def test_a_method_reference_on_this_is_a_self_invocation(pkg):
    (ref,) = [r for r in _calls_from(pkg, "com.ex.S#sup(java.util.List)") if "later" in str(_target(r))]
    assert ref["attributes"]["self_invocation"] is True and ref["attributes"]["dispatch_kind"] != "ASYNC"


def test_enum_constant_bodies_are_implementations(pkg):
    (call,) = [r for r in _calls_from(pkg, "com.ex.E#all()") if "#go(" in str(r["attributes"].get("declared_target"))]
    assert call["resolution_status"] == "AMBIGUOUS"
    assert sorted(c["record_id"] for c in call["candidate_target_refs"]) == [
        f"method:{M}/com.ex.E$1#go()", f"method:{M}/com.ex.E$2#go()"]


def test_local_classes_of_one_name_are_not_guessed(pkg):
    for method in ("com.ex.Locals#one()", "com.ex.Locals#two()"):
        for r in _calls_from(pkg, method):
            assert not str(_target(r)).startswith("ext:com.ex.Locals$")


def test_captured_locals_of_methods_on_one_line(pkg):
    targets = {r["callsite_id"].split("/", 1)[1]: _target(r) for r in pkg["rels"] if r["kind"] == "CALLS"
               and r["callsite_id"].startswith(f"{M}/com.ex.U$") and "#run()@" in r["callsite_id"]}
    assert sorted(targets.values()) == [f"method:{M}/com.ex.A#go()", f"method:{M}/com.ex.B#go()"]


def test_transactional_on_the_interface_method(pkg):
    send = next(r for r in pkg["rels"] if r["kind"] == "PUBLISHES" and _target(r) == "topic:kafka://in-iface-tx")
    assert send["attributes"]["in_transaction"] is True
    assert send["attributes"]["transaction_roots"] == [f"{M}/com.ex.TxImpl#save(java.lang.String)"]
