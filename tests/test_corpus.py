"""The real-estate corpus as a test suite (benchmarks/corpus/README.md).

Each scored estate whose mirror is present locally (DITING_REAL_REPOS, default /work/.mirror) is
scanned, built and scored against its answer key; the test holds the floors recorded for it in
``estates.yaml`` (``floor: {precision, recall}``, raised as the product improves) and refuses any
must-not edge. Estates absent here skip cleanly.
"""

from __future__ import annotations

import importlib.util
import sys

import pytest

from tests.conftest import ROOT, scan_real

_spec = importlib.util.spec_from_file_location("corpus_run", ROOT / "benchmarks" / "corpus" / "run.py")
corpus = importlib.util.module_from_spec(_spec)
sys.modules["corpus_run"] = corpus  # dataclasses look their module up while the class is made
_spec.loader.exec_module(corpus)
corpus.scan = scan_real  # an estate another test scans at the same commit is scanned once

SCORED = [e for e in corpus.load_estates() if e.key_path.is_file()]


def test_every_key_names_its_estate_and_commit():
    for e in SCORED:
        key = corpus.load_key(e)
        assert key["estate"] == e.name and key["commit"] == e.commit, e.name
        for edge in key.get("edges") or []:
            assert edge["kind"] in corpus.SCORED_KINDS and edge["from"] != edge["to"], edge
            assert ":" in str(edge.get("evidence", "")), edge


def test_the_scorer_counts_service_pairs():
    s = corpus.score({("a", "b", "HTTP"), ("a", "c", "MQ")}, {("a", "b", "HTTP"), ("b", "c", "RPC")})
    assert (s.tp, s.fp, s.fn) == (1, 1, 1) and s.precision == 0.5 and s.recall == 0.5
    assert corpus.contract_of_urn("HTTP", "http://mall-admin/brand/{id}#GET") == "GET /brand/{}"
    assert corpus.normal_contract("HTTP", "get /brand/{brandId}") == "GET /brand/{}"


@pytest.mark.realrepo
@pytest.mark.parametrize("estate", SCORED, ids=[e.name for e in SCORED])
def test_scored_estate_holds_its_floor(estate, tmp_path):
    if not estate.present():
        pytest.skip(f"{estate.name} is not present under {corpus.BASE}")
    report = corpus.run_estate(estate, tmp_path)
    key = report["key"]
    assert key["must_not_drawn"] == [], key["must_not_drawn"]
    assert key["ambiguous"]["drawn_resolved"] == [], key["ambiguous"]  # a call the code does not decide
    floor = estate.floor or {}
    pairs = key["pairs"]
    # no edge drawn: no false positive (precision is undefined, the recall floor holds the estate)
    precision = pairs["precision"] if pairs["precision"] is not None else 1.0
    assert precision >= floor.get("precision", 0.0), (pairs, key["not_in_key"])
    assert (pairs["recall"] or 0.0) >= floor.get("recall", 0.0), (pairs, key["missed"])
