"""The call graph diting writes, on a real repository: CALLS per dispatch kind and a sample to check by hand.

Scans REPO at COMMIT into a temporary directory and reads the CALLS relations of every package (a
call site shared by several packages — a common module — is counted once, by callsite_id), then prints

(1) call sites RESOLVED in-repo / RESOLVED external / AMBIGUOUS / UNRESOLVED per dispatch kind, and
    the calls pruned as noise per rule;
(2) why calls stay UNRESOLVED (the diagnostics' reasons, most common first);
(3) N RESOLVED in-repo call edges drawn uniformly with a fixed seed, each with its source line and
    target, for a hand check (issue 6's target: 0 wrong of 50).

    python benchmarks/callsite_sample.py REPO COMMIT [--n 50] [--seed 20261130] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import tempfile
from collections import Counter
from pathlib import Path

from diting.demo import read_jsonl
from diting.scan.pipeline import ScanOptions, scan
from diting.source.git import GitRepo


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("repo")
    ap.add_argument("commit")
    ap.add_argument("--n", type=int, default=50)
    ap.add_argument("--seed", type=int, default=20261130)
    ap.add_argument("--keep", type=Path, help="write the packages here instead of a temporary directory")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = args.keep or Path(tmp)
        result = scan(args.repo, args.commit, ScanOptions(out=out, repo_id="bench/calls", quiet=True))
        sites: dict[str, dict] = {}
        segments: dict[str, dict] = {}
        pruned: Counter[str] = Counter()
        for p in result.packages:
            for r in read_jsonl(p.path / "relations.jsonl"):
                if r["kind"] == "CALLS" and r["callsite_id"]:
                    sites.setdefault(r["callsite_id"], r)
            for s in read_jsonl(p.path / "source_segments.jsonl"):
                segments[s["record_id"]] = s["locator"]
            cov = json.loads((p.path / "coverage.json").read_text(encoding="utf-8"))
            pruned.update(cov.get("pruned_by_rule", {}))
    counts: Counter[tuple[str, str]] = Counter()
    reasons: Counter[str] = Counter()
    in_repo: list[tuple[str, int, str, str]] = []
    for site, r in sorted(sites.items()):
        a = r["attributes"]
        status = r["resolution_status"]
        bucket = status if status != "RESOLVED" else ("RESOLVED external" if a.get("external") else "RESOLVED in-repo")
        counts[(a.get("dispatch_kind") or "-", bucket)] += 1
        if status == "UNRESOLVED":
            why = (r.get("match_keys") or {}).get("reason") or "other"
            reasons[re.sub(r"(no (constructor|overload|method) of|no method) \S+", r"\1 …", why)] += 1
        if bucket == "RESOLVED in-repo" and r["target_ref"]["record_id"].startswith("method:"):
            loc = segments.get(r["evidence_refs"][0]["record_id"])
            if loc:
                _, caller, target, _ = r["stable_id"].split("|")
                in_repo.append((loc["path"], loc["start_line"], caller.split("/", 1)[-1], target.split("/", 1)[-1]))
    kinds = sorted({k for k, _ in counts})
    buckets = ["RESOLVED in-repo", "RESOLVED external", "AMBIGUOUS", "UNRESOLVED"]
    print(f"{len(sites)} call sites in {len(result.packages)} packages")
    print(f"{'dispatch':<10}" + "".join(f"{b:>20}" for b in buckets))
    for k in kinds:
        print(f"{k:<10}" + "".join(f"{counts[(k, b)]:>20}" for b in buckets))
    print(f"{'total':<10}" + "".join(f"{sum(counts[(k, b)] for k in kinds):>20}" for b in buckets))
    print("\npruned as noise (per package, summed): " + ", ".join(f"{k} {v}" for k, v in sorted(pruned.items())))
    print("\nwhy not RESOLVED:")
    for why, n in reasons.most_common(12):
        print(f"{n:>8}  {why}")
    rng = random.Random(args.seed)
    sample = rng.sample(in_repo, min(args.n, len(in_repo)))
    git = GitRepo(args.repo)
    with git:
        oids = {e.path: e.oid for e in git.ls_tree(git.resolve_commit(args.commit))}
        print(f"\n{len(sample)} RESOLVED in-repo call edges (seed {args.seed}):")
        for i, (path, line, caller, target) in enumerate(sorted(sample), 1):
            text = git.read_blob(oids[path]).decode("utf-8", "replace").split("\n")[line - 1].strip()
            print(f"{i:>3}. {path}:{line}  in {caller}\n       {text[:140]}\n       -> {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
