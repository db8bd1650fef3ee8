"""An estate of public repositories scanned three ways, measured in one run (docs/benchmarks.md §2).

    python benchmarks/estate_scan.py [--estates N] [--work DIR] [--mirrors DIR] [--no-dask]

Writes an estate file of the first N estates of the corpus (``benchmarks/corpus/estates.yaml``,
default 10) whose mirrors are present (``--mirrors``, default ``$DITING_REAL_REPOS`` or
``../.mirror``; ``OWNER+NAME/repo``), each pinned to its corpus commit, then times, each without a
cache so that every run does the same work:

- ``sequential``: ``diting estate scan`` with ``--jobs 1`` (one repository after another, each
  scan on every CPU);
- ``jobs2``: ``--jobs 2`` (two repositories at once in local processes);
- ``dask``: ``--scheduler`` of a Dask ``LocalCluster`` of two single-threaded worker processes
  (skipped with ``--no-dask`` or without the ``distributed`` package);
- ``again``: ``sequential`` once more into the same folder — nothing changed, so every repository
  is reused (target: at most 5% of the first run).

It checks that the three runs wrote byte-identical packages and prints wall seconds, ratios to the
sequential run, and the peak RSS of this process and its children (``getrusage``).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent


def estate_file(work: Path, mirrors: Path, count: int) -> tuple[Path, list[str]]:
    """An estate file of the first ``count`` corpus estates present under ``mirrors``."""
    corpus = yaml.safe_load((HERE / "corpus" / "estates.yaml").read_text(encoding="utf-8"))["estates"]
    repos = []
    for e in corpus:
        path = mirrors / e["repo"].replace("/", "+") / "repo"
        if path.is_dir():
            repos.append({"name": e["name"], "path": str(path), "rev": e["commit"], "repo_id": f"github.com/{e['repo']}"})
        if len(repos) == count:
            break
    if len(repos) < count:
        print(f"only {len(repos)} corpus mirror(s) under {mirrors}", file=sys.stderr)
    f = work / "estate.yaml"
    f.write_text(yaml.safe_dump({"repositories": repos}, sort_keys=False), encoding="utf-8")
    return f, [r["name"] for r in repos]


def tree_digest(out: Path) -> str:
    """sha256 over every package file below ``out`` (the state file left out: it holds timings)."""
    h = hashlib.sha256()
    for p in sorted(out.rglob("*")):
        if p.is_file() and p.name not in ("estate.json", ".estate.lock"):
            h.update(str(p.relative_to(out)).encode() + b"\0" + hashlib.sha256(p.read_bytes()).digest())
    return h.hexdigest()


def timed(label: str, fn) -> float:
    t = time.perf_counter()
    result = fn()
    took = time.perf_counter() - t
    statuses = {}
    for o in result.repositories:
        statuses[o.status] = statuses.get(o.status, 0) + 1
    print(f"{label:<10} {took:8.1f} s  {statuses}", flush=True)
    return took


def main() -> int:
    from diting.estate.run import scan_estate
    from diting.estate.spec import load_estate
    ap = argparse.ArgumentParser()
    ap.add_argument("--estates", type=int, default=10)
    ap.add_argument("--work", type=Path)
    ap.add_argument("--mirrors", type=Path, default=Path(os.environ.get("DITING_REAL_REPOS", HERE.parent.parent / ".mirror")))
    ap.add_argument("--no-dask", action="store_true")
    args = ap.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="diting-estate-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    est, names = estate_file(work, args.mirrors, args.estates)
    spec = load_estate(est)
    print(f"{len(names)} repositories: {', '.join(names)}")
    times: dict[str, float] = {}
    digests: dict[str, str] = {}
    for label, kw in (("sequential", {"jobs": 1}), ("jobs2", {"jobs": 2})):
        out = work / label
        shutil.rmtree(out, ignore_errors=True)
        times[label] = timed(label, lambda: scan_estate(spec, out, **kw))
        digests[label] = tree_digest(out)
    if not args.no_dask:
        try:
            from distributed import LocalCluster
        except ImportError:
            print("dask: distributed is not installed (pip install 'diting[cluster]')")
        else:
            out = work / "dask"
            shutil.rmtree(out, ignore_errors=True)
            with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cl:
                times["dask"] = timed("dask", lambda: scan_estate(spec, out, scheduler=cl.scheduler_address))
            digests["dask"] = tree_digest(out)
    times["again"] = timed("again", lambda: scan_estate(spec, work / "sequential", jobs=1))
    base = times["sequential"]
    print("ratios to sequential: " + ", ".join(f"{k} {v / base:.3f}" for k, v in times.items() if k != "sequential"))
    same = len(set(digests.values())) == 1
    print(f"packages byte-identical across {', '.join(digests)}: {'yes' if same else 'NO'} ({next(iter(digests.values()))[:16]})")
    peak = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
    print(f"peak RSS of one process: {peak / 1024:.0f} MB")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
