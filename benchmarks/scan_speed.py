"""Scan speed and memory on a real repository.

    python benchmarks/scan_speed.py REPO COMMIT [--jobs N] [--rounds R]

Speed is a ratio measured in one process, because these machines are shared
and noisy: the baseline parses every main-source ``.java`` blob with
tree-sitter and walks it pre-order with a TreeCursor (no Python object per
node); the full ``diting scan`` (with ``--jobs``, default 2) runs right after it.
The best of ``--rounds`` runs of each is kept. Memory is the peak RSS of a
separate scan process (main process, and the largest worker).

Targets (issue 2): ratio ≤ 3 using both cores; peak RSS ≤ 1.5 GB at 500k lines.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import tree_sitter as ts
import tree_sitter_java as tsj

from diting.scan.pipeline import ScanOptions, scan


def main_blobs(repo: str, commit: str) -> list[bytes]:
    out = subprocess.run(["git", "-C", repo, "ls-tree", "-r", "-z", commit], capture_output=True, check=True).stdout
    oids = []
    for item in filter(None, out.split(b"\0")):
        meta, path = item.decode().split("\t", 1)
        if path.endswith(".java") and "/src/main/java/" in f"/{path}" and "/src/test/" not in f"/{path}":
            oids.append(meta.split()[2])
    cat = subprocess.Popen(["git", "-C", repo, "cat-file", "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    blobs = []
    for oid in oids:
        cat.stdin.write(oid.encode() + b"\n")
        cat.stdin.flush()
        size = int(cat.stdout.readline().split()[2])
        blobs.append(cat.stdout.read(size + 1)[:-1])
    cat.stdin.close()
    cat.wait()
    return blobs


def cursor_walk(blobs: list[bytes]) -> int:
    """Parse and walk every blob; returns the number of nodes visited."""
    parser = ts.Parser(ts.Language(tsj.language()))
    visited = 0
    for data in blobs:
        cursor = parser.parse(data).walk()
        while True:
            visited += 1
            if cursor.goto_first_child():
                continue
            while not cursor.goto_next_sibling():
                if not cursor.goto_parent():
                    break
            else:
                continue
            break
    return visited


def peak_rss(repo: str, commit: str, jobs: int) -> dict[str, int]:
    code = ("import resource,sys,tempfile\nfrom diting.scan.pipeline import ScanOptions, scan\n"
            "d=tempfile.mkdtemp()\nscan(sys.argv[1], sys.argv[2], ScanOptions(out=__import__('pathlib').Path(d), "
            "quiet=True, jobs=int(sys.argv[3]), repo_id='bench'))\n"
            "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, "
            "resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n")
    out = subprocess.run([sys.executable, "-c", code, repo, commit, str(jobs)], capture_output=True, text=True,
                         check=True).stdout.split()
    return {"main_process_kb": int(out[-2]), "largest_child_kb": int(out[-1])}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("repo")
    ap.add_argument("commit")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    blobs = main_blobs(args.repo, args.commit)
    lines = sum(b.count(b"\n") for b in blobs)
    base_times, scan_times = [], []
    for _ in range(args.rounds):
        t0 = time.perf_counter()
        nodes = cursor_walk(blobs)
        base_times.append(time.perf_counter() - t0)
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.perf_counter()
            result = scan(args.repo, args.commit, ScanOptions(out=Path(tmp), quiet=True, jobs=args.jobs,
                                                              repo_id="bench"))
            scan_times.append(time.perf_counter() - t0)
    base, full = min(base_times), min(scan_times)
    report = {
        "repo": args.repo, "commit": result.commit_sha, "main_java_blobs": len(blobs), "lines": lines,
        "nodes_walked": nodes, "packages": len(result.packages), "jobs": args.jobs,
        "baseline_cursor_walk_s": round(base, 2), "full_scan_s": round(full, 2),
        "ratio_scan_over_walk": round(full / base, 2), "lines_per_second": int(lines / full),
        "peak_rss": peak_rss(args.repo, args.commit, args.jobs),
        "this_process_peak_rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
    }
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
