"""The fact store and the stage runner (docs/architecture.md §2): built directly, no git, no scan."""

from __future__ import annotations

import pytest

from diting.scan.facts import FactError, ScanFacts
from diting.scan.package import PACKAGE_GIVEN, PACKAGE_STAGES, PackageFacts, package_stage_graph
from diting.scan.pipeline import GIVEN, SCAN_STAGES, stage_graph
from diting.scan.progress import Progress
from diting.scan.stages import Stage, describe, order, run_stages


def _stage(name, needs, makes, run=None):
    def made(view, progress):
        """Make what it declares from its needs."""
        return {m: {n: getattr(view, n) for n in needs} for m in makes}
    return Stage(name, name, tuple(needs), tuple(makes), run or made)


def test_order_follows_needs_and_keeps_declaration_order_for_ties():
    stages = [_stage("c", ["plans"], ["package_results"]), _stage("a", ["commit"], ["plugin_rules"]),
              _stage("b", ["plugin_rules"], ["plans"]), _stage("d", ["commit"], ["config_dirs"])]
    assert [s.name for s in order(stages, ["commit"], ScanFacts)] == ["a", "b", "c", "d"]


@pytest.mark.parametrize("stages, given, says", [
    ([_stage("a", [], ["plans"]), _stage("b", [], ["plans"])], [], "made by stage a"),
    ([_stage("a", [], ["commit"])], ["commit"], "given"),
    ([_stage("a", ["plans"], ["inv"])], [], "no stage makes"),
    ([_stage("a", ["plans"], ["inv"]), _stage("b", ["inv"], ["plans"])], [], "cycle"),
    ([_stage("a", [], ["not_a_fact"])], [], "not a declared fact"),
])
def test_order_refuses_a_broken_declaration(stages, given, says):
    with pytest.raises(FactError, match=says):
        order(stages, given, ScanFacts)


def test_a_stage_reads_only_its_needs_and_returns_only_what_it_makes():
    facts = ScanFacts()
    facts.put(commit="abc", repo_id="t/r")
    sneaky = Stage("s", "s", ("commit",), ("config_dirs",), lambda v, p: {"config_dirs": [v.repo_id]})
    with pytest.raises(FactError, match="not among the stage's needs"):
        run_stages([sneaky], facts, Progress(quiet=True))
    extra = Stage("e", "e", ("commit",), ("config_dirs",), lambda v, p: {"config_dirs": [], "plans": []})
    with pytest.raises(FactError, match="declared"):
        run_stages([extra], facts, Progress(quiet=True))
    ok = Stage("o", "o", ("commit", "repo_id"), ("config_dirs",), lambda v, p: {"config_dirs": [v.commit, v.repo_id]})
    run_stages([ok], facts, Progress(quiet=True))
    assert facts.config_dirs == ["abc", "t/r"]


def test_facts_are_typed_set_once_and_views_are_frozen():
    facts = ScanFacts()
    with pytest.raises(FactError, match="declared"):
        facts.put(commit=42)  # declared str
    with pytest.raises(FactError, match="not a declared fact"):
        facts.put(nonsense=1)
    facts.put(commit="abc", commit_time=None)  # str | None admits None
    with pytest.raises(FactError, match="made twice"):
        facts.put(commit="def")
    with pytest.raises(FactError, match="before a stage made it"):
        facts.plans
    view = facts.view(["commit"])
    with pytest.raises(FactError, match="frozen"):
        view.put(plans=[])
    with pytest.raises(FactError, match="set as an attribute"):
        view.commit = "x"
    with pytest.raises(FactError, match="needed before"):
        facts.view(["plans"])
    assert view.commit == "abc" and view.memo is facts.memo


def test_the_scan_graph_is_whole_and_printed_as_docs_show_it():
    ordered = order(SCAN_STAGES, GIVEN, ScanFacts)
    assert [s.name for s in ordered] == ["tree", "build", "sources", "names", "modules", "services", "sql",
                                         "packages"]
    made = {f for s in SCAN_STAGES for f in s.makes}
    assert made | set(GIVEN) == set(ScanFacts.declared())  # every declared fact is given or made
    text = stage_graph()
    assert describe(SCAN_STAGES, GIVEN, ScanFacts) in text and "8. packages — " in text
    assert "   needs from services: plans" in text


def test_the_package_graph_is_whole_and_every_record_writer_runs_before_the_write():
    ordered = [s.name for s in order(PACKAGE_STAGES, PACKAGE_GIVEN, PackageFacts)]
    assert ordered == ["modules", "service", "probes", "callgraph", "wrappers", "ledger", "recovery", "findings",
                       "write"]
    made = {f for s in PACKAGE_STAGES for f in s.makes}
    assert made | set(PACKAGE_GIVEN) == set(PackageFacts.declared())
    write = next(s for s in PACKAGE_STAGES if s.name == "write")
    writers = {s.name for s in PACKAGE_STAGES if "records" in s.needs or "records" in s.makes} - {"write"}
    # the write encodes the record set: it needs a fact of every stage that adds records to it
    assert all(set(s.makes) & set(write.needs) for s in PACKAGE_STAGES if s.name in writers)
    assert package_stage_graph() in stage_graph()
