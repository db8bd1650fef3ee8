"""Scan, build and score the real-estate corpus (benchmarks/corpus/README.md).

    python benchmarks/corpus/run.py [ESTATE ...] [--scored] [--work DIR] [--json FILE]

Each estate of ``estates.yaml`` whose mirror is present under ``DITING_REAL_REPOS`` (default
``/work/.mirror``) is scanned at its pinned commit, its packages are built into a graph, and the
graph's alignment rows are compared with the estate's answer key (``keys/{estate}.yaml``) when it
has one. Per estate it prints services found against deployables, cross-service edges by kind and
status, precision / recall / F1 at the service-pair level (and at the contract level), the edges
missed and those not in the key, the top unresolved reasons, and red flags. Exit 0 always (a score
is a figure, not a verdict; ``tests/test_corpus.py`` holds the thresholds).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parents[1]
sys.path.insert(0, str(PROJECT / "src"))

from diting.graph.store import build  # noqa: E402
from diting.graph.query import query  # noqa: E402
from diting.scan.pipeline import ScanOptions, scan  # noqa: E402

BASE = Path(os.environ.get("DITING_REAL_REPOS", "/work/.mirror"))
#: the edge kinds the key scores (DATA rows — shared tables — are out of the score)
SCORED_KINDS = ("HTTP", "RPC", "MQ")


@dataclass
class Estate:
    """One corpus entry of ``estates.yaml``."""

    name: str
    repo: str
    commit: str
    features: list[str] = field(default_factory=list)
    scan: dict = field(default_factory=dict)
    #: what tests/test_corpus.py holds the estate to: {precision, recall} at the pair level
    floor: dict = field(default_factory=dict)

    @property
    def mirror(self) -> Path:
        path = BASE / self.repo.replace("/", "+") / "repo"
        return path / ".git" if (path / ".git").is_dir() else path

    @property
    def key_path(self) -> Path:
        return HERE / "keys" / f"{self.name}.yaml"

    def present(self) -> bool:
        if not self.mirror.is_dir():
            return False
        ok = subprocess.run(["git", "--git-dir", str(self.mirror), "cat-file", "-e", f"{self.commit}^{{commit}}"],
                            capture_output=True)
        return ok.returncode == 0


def load_estates() -> list[Estate]:
    """The corpus, in file order: ``[Estate]``."""
    doc = yaml.safe_load((HERE / "estates.yaml").read_text(encoding="utf-8"))
    return [Estate(**e) for e in doc["estates"]]


def load_key(estate: Estate) -> dict | None:
    """The estate's answer key (``keys/{name}.yaml``), or None when it has none."""
    if not estate.key_path.is_file():
        return None
    return yaml.safe_load(estate.key_path.read_text(encoding="utf-8"))


_VAR = re.compile(r"\{[^}/]*\}")


def contract_of_urn(kind: str, urn: str | None) -> str | None:
    """The key's spelling of an alignment urn: ``METHOD /path`` for HTTP, the topic for MQ, the
    interface (and ``#method``) for RPC; None when the urn does not fold."""
    if not urn:
        return None
    if kind == "HTTP":
        m = re.match(r"^[a-z][a-z0-9+.-]*://[^/#]*(/[^#]*)?(?:#(\w+))?$", urn)
        if not m:
            return urn
        return f"{m.group(2) or 'ANY'} {_VAR.sub('{}', m.group(1) or '/')}"
    if kind == "MQ":
        return re.sub(r"^[a-z][a-z0-9+.-]*://", "", urn)
    return re.sub(r"^[a-z][a-z0-9+.-]*://", "", urn)


def normal_contract(kind: str, text: str) -> str:
    """A key contract in the form :func:`contract_of_urn` gives."""
    text = str(text).strip()
    if kind == "HTTP":
        parts = text.split(None, 1)
        if len(parts) == 2:
            return f"{parts[0].upper()} {_VAR.sub('{}', parts[1])}"
    return text


@dataclass
class Score:
    tp: int
    fp: int
    fn: int

    @property
    def precision(self) -> float | None:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else None

    @property
    def recall(self) -> float | None:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else None

    @property
    def f1(self) -> float | None:
        p, r = self.precision, self.recall
        if p is None or r is None:
            return None
        return 2 * p * r / (p + r) if p + r else 0.0


def score(predicted: set, expected: set) -> Score:
    return Score(len(predicted & expected), len(predicted - expected), len(expected - predicted))


def run_estate(estate: Estate, work: Path) -> dict:
    """Scan, build and score one estate; the figures as a JSON-able dict."""
    out, db = work / estate.name / "ir", work / estate.name / "graph.duckdb"
    shutil.rmtree(work / estate.name, ignore_errors=True)
    t0 = time.perf_counter()
    opts = ScanOptions(out=out, repo_id=f"github.com/{estate.repo}", quiet=True,
                       profiles=estate.scan.get("profiles"))
    result = scan(estate.mirror, estate.commit, opts)
    t_scan = time.perf_counter() - t0
    build(db, [out])
    t_build = time.perf_counter() - t0 - t_scan
    services = sorted(p.service_id for p in result.packages if p.kind != "LIB")
    rows = query(db, "SELECT src_service, dst_service, edge_kind, urn, resolution_status, match_basis "
                     "FROM cross_service_edges")[1]
    by_status: Counter = Counter()
    reasons: Counter = Counter()
    predicted: set = set()
    predicted_contracts: set = set()
    ambiguous_pairs: set = set()
    for src, dst, kind, urn, status, basis in rows:
        if kind not in SCORED_KINDS:
            continue
        if src is not None and dst is not None and src == dst:
            continue
        by_status[(kind, status)] += 1
        if status == "RESOLVED" and src and dst:
            predicted.add((src, dst, kind))
            c = contract_of_urn(kind, urn)
            predicted_contracts.add((src, dst, kind, c))
        elif status != "RESOLVED":
            reasons[f"{kind} {status} {basis}"] += 1
            if status == "AMBIGUOUS" and src and dst:
                ambiguous_pairs.add((src, dst, kind))
    report: dict = {
        "estate": estate.name, "repo": estate.repo, "commit": estate.commit,
        "seconds": {"scan": round(t_scan, 1), "build": round(t_build, 1)},
        "services": services,
        "edges_by_kind_status": {f"{k} {s}": n for (k, s), n in sorted(by_status.items())},
        "predicted": sorted(map(list, predicted)),
        "top_unresolved": reasons.most_common(8),
    }
    flags = red_flags(services, rows, by_status)
    key = load_key(estate)
    if key is not None:
        expected = {(e["from"], e["to"], e["kind"]) for e in key.get("edges") or []}
        expected_contracts = {(e["from"], e["to"], e["kind"], normal_contract(e["kind"], e.get("contract", "*")))
                              for e in key.get("edges") or [] if str(e.get("contract", "*")) != "*"}
        must_not = {(e["from"], e["to"], e["kind"]) for e in key.get("must_not") or []}
        keyed_ambiguous = {(e["from"], e["to"], e["kind"]) for e in key.get("ambiguous") or []} - expected
        # pairs whose truth turns on code that runs only at run time (a registrar rewriting URLs …):
        # neither expected nor counted when drawn
        ignored = {(e["from"], e["to"], e["kind"]) for e in key.get("ignore") or []}
        expected -= ignored
        predicted = predicted - ignored
        predicted_contracts = {c for c in predicted_contracts if c[:3] not in ignored}
        keyed_services = {s["id"] for s in key.get("services") or []}
        s = score(predicted, expected)
        cs = score({c for c in predicted_contracts if c[3] is not None and (c[0], c[1], c[2]) in expected
                    and any(e[:3] == c[:3] for e in expected_contracts)}, expected_contracts)
        report["key"] = {
            "deployables": sorted(keyed_services),
            "services_missing": sorted(keyed_services - set(services)),
            "services_extra": sorted(set(services) - keyed_services),
            "pairs": {"tp": s.tp, "fp": s.fp, "fn": s.fn, "precision": s.precision, "recall": s.recall, "f1": s.f1},
            "contracts": {"tp": cs.tp, "fp": cs.fp, "fn": cs.fn, "precision": cs.precision, "recall": cs.recall,
                          "f1": cs.f1},
            "missed": sorted(map(list, expected - predicted)),
            "not_in_key": sorted(map(list, predicted - expected)),
            "must_not_drawn": sorted(map(list, predicted & must_not)),
            "ambiguous": {"keyed": len(keyed_ambiguous), "said_ambiguous": len(keyed_ambiguous & ambiguous_pairs),
                          "drawn_resolved": sorted(map(list, keyed_ambiguous & predicted))},
        }
        if report["key"]["must_not_drawn"]:
            flags.append(f"must-not edges drawn: {report['key']['must_not_drawn']}")
        explained = key.get("red_flags_explained") or []
        report["red_flags_explained"] = [f"{f} — {e['why']}" for f in flags for e in explained if e["match"] in f]
        flags = [f for f in flags if not any(e["match"] in f for e in explained)]
    report["red_flags"] = flags
    return report


def red_flags(services: list[str], rows: list, by_status: Counter) -> list[str]:
    """The corpus's red flags: every service named alike, consumers declared but no edge at all,
    more than half of the scored rows UNRESOLVED."""
    flags = []
    if len(services) > 2:
        stems = Counter(s.split("~", 1)[0] for s in services)
        stem, n = stems.most_common(1)[0]
        if n == len(services):
            flags.append(f"every service is named {stem!r}")
    scored = sum(by_status.values())
    resolved = sum(n for (k, s), n in by_status.items() if s == "RESOLVED")
    if scored and resolved == 0:
        flags.append(f"{scored} cross-service rows, none RESOLVED")
    unresolved = sum(n for (k, s), n in by_status.items() if s == "UNRESOLVED")
    if scored and unresolved * 2 > scored:
        flags.append(f"{unresolved} of {scored} cross-service rows UNRESOLVED")
    return flags


def _fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.2f}"


def print_report(r: dict) -> None:
    print(f"== {r['estate']} ({r['repo']}@{r['commit'][:12]})  scan {r['seconds']['scan']} s, build "
          f"{r['seconds']['build']} s")
    print(f"   services ({len(r['services'])}): {', '.join(r['services'])}")
    print(f"   edges: {', '.join(f'{k}={n}' for k, n in r['edges_by_kind_status'].items()) or 'none'}")
    k = r.get("key")
    if k:
        p, c = k["pairs"], k["contracts"]
        print(f"   deployables in key: {len(k['deployables'])}; missing {k['services_missing'] or '-'}; "
              f"extra {k['services_extra'] or '-'}")
        print(f"   pairs: P {_fmt(p['precision'])} R {_fmt(p['recall'])} F1 {_fmt(p['f1'])} "
              f"(tp {p['tp']} fp {p['fp']} fn {p['fn']});  contracts: P {_fmt(c['precision'])} "
              f"R {_fmt(c['recall'])} (tp {c['tp']} fn {c['fn']})")
        if k["ambiguous"]["keyed"]:
            a = k["ambiguous"]
            print(f"   ambiguous in key: {a['keyed']}, said AMBIGUOUS {a['said_ambiguous']}, drawn RESOLVED "
                  f"{len(a['drawn_resolved'])}")
        for e in k["missed"]:
            print(f"   missed      {e[0]} -> {e[1]} {e[2]}")
        for e in k["not_in_key"]:
            print(f"   not in key  {e[0]} -> {e[1]} {e[2]}")
    for reason, n in r["top_unresolved"]:
        print(f"   unresolved  {n:5d}  {reason}")
    for f in r["red_flags"]:
        print(f"   RED FLAG    {f}")
    for f in r.get("red_flags_explained", []):
        print(f"   explained   {f}")


def totals(reports: list[dict]) -> dict:
    """Pair-level sums over the scored estates."""
    tp = sum(r["key"]["pairs"]["tp"] for r in reports if r.get("key"))
    fp = sum(r["key"]["pairs"]["fp"] for r in reports if r.get("key"))
    fn = sum(r["key"]["pairs"]["fn"] for r in reports if r.get("key"))
    s = Score(tp, fp, fn)
    return {"tp": tp, "fp": fp, "fn": fn, "precision": s.precision, "recall": s.recall, "f1": s.f1,
            "scored": sum(1 for r in reports if r.get("key"))}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("estates", nargs="*", help="estate names (default: every estate present)")
    ap.add_argument("--work", type=Path, help="where packages and graphs go (default: a temporary directory)")
    ap.add_argument("--json", type=Path, help="also write the figures here as JSON")
    ap.add_argument("--scored", action="store_true", help="only estates with an answer key")
    args = ap.parse_args(argv)
    estates = load_estates()
    names = {e.name for e in estates}
    for n in args.estates:
        if n not in names:
            print(f"unknown estate {n!r}; known: {', '.join(sorted(names))}", file=sys.stderr)
            return 2
    chosen = [e for e in estates if (not args.estates or e.name in args.estates)
              and (not args.scored or e.key_path.is_file())]
    work = args.work or Path(tempfile.mkdtemp(prefix="diting-corpus-"))
    reports = []
    for e in chosen:
        if not e.present():
            print(f"== {e.name}: not present under {BASE} (skipped)")
            continue
        r = run_estate(e, work)
        print_report(r)
        reports.append(r)
    t = totals(reports)
    print(f"== total over {t['scored']} scored estate(s): P {_fmt(t['precision'])} R {_fmt(t['recall'])} "
          f"F1 {_fmt(t['f1'])} (tp {t['tp']} fp {t['fp']} fn {t['fn']})")
    if args.json:
        args.json.write_text(json.dumps({"estates": reports, "total": t}, indent=1, sort_keys=True) + "\n",
                             encoding="utf-8")
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
