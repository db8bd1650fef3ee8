"""What the middleware probes add to scan time, against the scan-foundation code on the same repository.

    python benchmarks/probe_overhead.py REPO COMMIT [--baseline 34ee497] [--current REV] [--rounds 3] [--jobs 2]

The baseline is the project's own source at ``--baseline`` (the commit that landed the scan
foundation, before any probe existed), extracted with ``git archive`` into a temporary
directory. Each round scans REPO at COMMIT once with the baseline source and once with the
working tree's source, each in a fresh interpreter (``PYTHONPATH`` decides which source runs),
alternating so that machine noise hits both alike; the best time of each is kept. The figure
is the ratio current / baseline (issue 3 target: at most 1.5). Peak RSS is reported for both.
``--current REV`` measures the project at REV instead of the working tree (e.g. the last commit
before the SQL stage, to separate what the probes add from what SQL lineage adds).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]

RUN = ("import json,resource,sys,tempfile,time\nfrom pathlib import Path\n"
       "from diting.scan.pipeline import ScanOptions, scan\n"
       "d=tempfile.mkdtemp()\nt=time.perf_counter()\n"
       "r=scan(sys.argv[1], sys.argv[2], ScanOptions(out=Path(d), quiet=True, jobs=int(sys.argv[3]), repo_id='bench'))\n"
       "el=time.perf_counter()-t\n"
       "print(json.dumps({'s': el, 'packages': len(r.packages), 'rss_kb': max("
       "resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)}))\n")


def extract_source(commit: str, dest: Path) -> Path:
    """The project's ``src`` and ``rules`` trees at ``commit`` under ``dest``; returns the directory to put on
    PYTHONPATH."""
    data = subprocess.run(["git", "-C", str(PROJECT), "archive", "--format=tar", commit, "src", "rules"],
                          capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as tf:
        tf.extractall(dest, filter="data")
    return dest / "src"


def run_scan(src: Path, repo: str, commit: str, jobs: int) -> dict:
    env = dict(os.environ, PYTHONPATH=str(src))
    p = subprocess.run([sys.executable, "-c", RUN, repo, commit, str(jobs)], capture_output=True, text=True,
                       env=env, cwd=tempfile.gettempdir())
    if p.returncode != 0:
        raise SystemExit(f"scan with {src} failed:\n{p.stderr[-2000:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("repo")
    ap.add_argument("commit")
    ap.add_argument("--baseline", default="34ee497")
    ap.add_argument("--current", default=None)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base_src = extract_source(args.baseline, Path(tmp) / "base")
        cur_src = extract_source(args.current, Path(tmp) / "cur") if args.current else PROJECT / "src"
        base, cur = [], []
        for _ in range(args.rounds):
            base.append(run_scan(base_src, args.repo, args.commit, args.jobs))
            cur.append(run_scan(cur_src, args.repo, args.commit, args.jobs))
    b = min(x["s"] for x in base)
    c = min(x["s"] for x in cur)
    print(json.dumps({
        "repo": args.repo, "commit": args.commit, "baseline_source": args.baseline,
        "current_source": args.current or "working tree", "jobs": args.jobs,
        "rounds": args.rounds, "baseline_scan_s": round(b, 2), "current_scan_s": round(c, 2),
        "ratio_current_over_baseline": round(c / b, 2), "packages": cur[0]["packages"],
        "baseline_peak_rss_kb": max(x["rss_kb"] for x in base), "current_peak_rss_kb": max(x["rss_kb"] for x in cur),
    }, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
