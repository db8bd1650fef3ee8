"""Ledger exclusion rules (rules of emit kind LEDGER_EXCLUSION): the condition shapes they read, a
user's own rule given with --rules, and how a package counts what they exclude."""

from __future__ import annotations

import json

import pytest

from diting.ledger.exclusion import ArmFacts, Effect, compile_rules, condition_parts, excluded_items
from diting.probes.model import Rule
from tests.stagekit import scan_memory
from tests.conftest import BOOT_PLUGIN, pom, run_cli


def test_a_condition_splits_at_its_top_level_joins_only():
    assert condition_parts("(a != null && (b == null || c.isEmpty()))") == ["a != null", "b == null", "c.isEmpty()"]
    assert condition_parts("brand != null and order != '' or x") == ["brand != null", "order != ''", "x"]
    # a join inside a string, a call's arguments or a negation stays inside its part
    assert condition_parts('"a && b".equals(x) && f(y || z)') == ['"a && b".equals(x)', "f(y || z)"]
    assert condition_parts("!(a != null && b != null)") == ["!(a != null && b != null)"]
    assert condition_parts("(" * 40 + "a" + ")" * 40) == ["a"]
    assert condition_parts("(a || " * 40 + "b" + ")" * 40) is None  # deeper than the split depth


def _rule(ledger: dict) -> Rule:
    return Rule.model_validate({"id": "t.rule", "version": 1, "owner": "t", "family": "t", "description": "d",
                                "source": "s", "match": {"ledger": ledger}, "emits": {"kind": "LEDGER_EXCLUSION"}})


def _arm(condition: str | None, kind: str = "IF", effects=(), params=("city", "ids"), **kw) -> ArmFacts:
    return ArmFacts(kind, "com.example.Depots#find(java.lang.String)", condition, kw.pop("outcome", "CONTINUE"),
                    kw.pop("throws", None), list(effects), kw.pop("resolved", True), kw.pop("parent", -1),
                    frozenset(params), kw.pop("declares", frozenset()))


def test_atoms_match_whole_parts_with_free_whitespace_and_parameter_names():
    [rule] = compile_rules([_rule({"kinds": ["IF"], "condition": {
        "atoms": ["{name} == null", "{not}{type}.isEmpty({name})", "{name}.size() > 0"], "names": "parameter"}})])
    assert excluded_items([_arm("(city==null || !StringUtils.isEmpty( city ))")], [rule]) == ["t.rule"]
    assert excluded_items([_arm("(ids.size()>0)")], [rule]) == ["t.rule"]
    # a field, a part of another shape, a value test: kept
    assert excluded_items([_arm("(this.city == null)"), _arm("(city == null || city.length() > 3)"),
                           _arm("(city.size() > 10)"), _arm(None)], [rule]) == [None] * 4


def test_effects_outcomes_nesting_and_unknowns_decide_with_the_condition():
    [rule] = compile_rules([_rule({
        "kinds": ["IF"], "condition": {"atoms": ["{name} == null"]}, "outcomes": ["THROW"],
        "throws": ["java.lang.IllegalArgumentException"], "nested": True,
        "effects": [{"kinds": ["CALLS"], "targets": ["java.lang.IllegalArgumentException#<init>*"]}]})])
    ctor = Effect("CALLS", "java.lang.IllegalArgumentException#<init>(?)", True)
    write = Effect("WRITES", "table://t_depot@db", False)
    throw = dict(outcome="THROW", throws="IllegalArgumentException")
    # the arm and the throw nested in it go together
    items = [_arm("(city == null)", **throw), _arm(None, "THROW", [ctor], parent=0, **throw)]
    assert excluded_items(items, [rule]) == ["t.rule", "t.rule"]
    # another effect in a nested item, a nested unknown, another exception, another outcome: kept
    assert excluded_items([items[0], _arm(None, "THROW", [ctor, write], parent=0, **throw)], [rule]) == [None, None]
    assert excluded_items([items[0], _arm(None, "THROW", [ctor], parent=0, resolved=False, **throw)],
                          [rule]) == [None, None]
    assert excluded_items([_arm("(city == null)", outcome="THROW", throws="DepotClosedException")], [rule]) == [None]
    assert excluded_items([_arm("(city == null)", outcome="RETURN")], [rule]) == [None]
    # an effect whose target is not resolved matches no allowed effect
    assert excluded_items([_arm("(city == null)", effects=[Effect("CALLS", None, False)], **throw)],
                          [rule]) == [None]


def test_a_rule_file_with_an_unknown_placeholder_or_match_is_refused(tmp_path):
    bad = tmp_path / "bad"
    bad.mkdir()
    rule = ("family: mine\nversion: 1\nowner: me\ndescription: d\nrules:\n  - id: mine.x\n    version: 1\n"
            "    owner: me\n    family: mine\n    description: d\n    source: s\n"
            "    match: {ledger: {kinds: [IF], condition: {atoms: ['{value} == null']}}}\n"
            "    emits: {kind: LEDGER_EXCLUSION}\n")
    (bad / "mine.yaml").write_text(rule, encoding="utf-8")
    r = run_cli("rules", "--rules", str(bad))
    assert r.returncode == 2 and "rule file bad/mine.yaml" in r.stderr and "{value}" in r.stderr, r.stderr
    (bad / "mine.yaml").write_text(rule.replace("'{value} == null'", "'{name} == null'")
                                   .replace("kind: LEDGER_EXCLUSION", "kind: NOISE"), encoding="utf-8")
    r = run_cli("rules", "--rules", str(bad))
    assert r.returncode == 2 and "NOISE works on matches of form" in r.stderr, r.stderr


USER_RULE = """family: depot-house
version: 1
owner: depot-team
description: the depot estate's own tracing guard
rules:
  - id: depot.trace-guard
    version: 1
    owner: depot-team
    family: depot-house
    description: "if (Trace.on()) { … }: tracing only"
    source: com.example.Trace (depot-common)
    match:
      ledger:
        kinds: [IF]
        condition: {atoms: ["{type}.on()"]}
        effects: [{kinds: [CALLS], targets: ["com.example.Trace#*"]}]
        nested: true
    emits: {kind: LEDGER_EXCLUSION}
    samples:
      - form: declared
        input:
          src/main/java/com/example/Trace.java: |
            package com.example;
            public final class Trace { public static boolean on() { return false; } public static void put(String s) { } }
          src/main/java/com/example/Depots.java: |
            package com.example;
            public class Depots { public void open(String city) { if (Trace.on()) { Trace.put(city); } } }
        expected_records:
          - {kind: LEDGER_ITEM, branch_id: "sample:sample-app/com.example.Depots#open(java.lang.String)/if[0]/then",
             exclusion_rule_id: depot.trace-guard}
"""


def test_a_users_rule_excludes_by_its_data_and_coverage_counts_each_rule(tmp_path):
    mine = tmp_path / "rules"
    mine.mkdir()
    (mine / "depot.yaml").write_text(USER_RULE, encoding="utf-8")
    r = run_cli("rules", "--rules", str(mine), "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["failed"] == [], r.stdout + r.stderr
    files = {
        "pom.xml": pom("depot-app", parent=None, body=BOOT_PLUGIN),
        "src/main/java/com/example/App.java": "package com.example;\n"
        "@org.springframework.boot.autoconfigure.SpringBootApplication\npublic class App { }\n",
        "src/main/java/com/example/Trace.java": "package com.example;\npublic final class Trace {\n"
        "  public static boolean on() { return false; }\n  public static void put(String s) { }\n}\n",
        "src/main/java/com/example/Depots.java": "package com.example;\npublic class Depots {\n"
        "  public void open(String city) {\n    if (Trace.on()) { Trace.put(city); }\n"
        "    if (Trace.on()) { for (int i = 0; i < 2; i++) { Trace.put(city); } }\n"
        "    if (city.isEmpty()) { Trace.put(\"none\"); }\n  }\n}\n",
        "src/main/resources/mapper/DepotMapper.xml": '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<mapper namespace="com.example.DepotMapper"><select id="find" resultType="map">select id from t_depot\n'
        '<where><if test="city != null">and city = #{city}</if></where></select></mapper>\n',
    }
    scan_memory(files, tmp_path / "ir", rules_dirs=[mine])
    pkg = next((tmp_path / "ir").glob("depot-app@*"))
    items = {i["branch_id"].split("#", 1)[-1].split("/", 1)[-1] if "#" in i["branch_id"] else i["branch_id"]:
             i.get("exclusion_rule_id") for i in map(json.loads, (pkg / "branch_ledger.jsonl").read_text().splitlines())}
    assert items == {"if[0]/then": "depot.trace-guard", "if[1]/then": "depot.trace-guard",
                     "if[1]/then/loop[0]": "depot.trace-guard", "if[2]/then": None,
                     "com.example.DepotMapper.find/where[0]/if[0]": "ledger.mybatis-null-guard"}
    ledger = json.loads((pkg / "coverage.json").read_text())["dimensions"]["branch_ledger"]
    assert ledger["excluded_by_reason"] == {"depot.trace-guard": 3, "ledger.mybatis-null-guard": 1}
    assert (ledger["discovered"], ledger["resolved"], ledger["excluded"]) == (5, 1, 4)
    # without the user's rule the same items are kept: the exclusion is the rule's, not the code's
    scan_memory(files, tmp_path / "plain")
    plain = next((tmp_path / "plain").glob("depot-app@*"))
    again = json.loads((plain / "coverage.json").read_text())["dimensions"]["branch_ledger"]
    assert again["excluded_by_reason"] == {"ledger.mybatis-null-guard": 1} and again["resolved"] == 4


@pytest.mark.parametrize("test", ["x != null", "x != null and x != ''", "list != null and list.size() > 0",
                                  "name != null and name.trim() != ''", "ids != null && ids.length > 0"])
def test_the_shipped_null_guard_reads_the_forms_mybatis_writes(test):
    from diting.rules import load_rules
    from diting.ledger.exclusion import ledger_exclusions
    rules = [c for c in ledger_exclusions(load_rules()) if c.rule_id == "ledger.mybatis-null-guard"]
    sql = ArmFacts("SQL_IF", "com.example.DepotMapper.find", test, "CONTINUE", None, [], True)
    assert excluded_items([sql], rules) == ["ledger.mybatis-null-guard"]
    value = ArmFacts("SQL_IF", "com.example.DepotMapper.find", test + " and x == 1", "CONTINUE", None, [], True)
    assert excluded_items([value], rules) == [None]

