"""Rescan cost after small edits, as ratios measured in one run (docs/benchmarks.md).

    python benchmarks/rescan.py REPO COMMIT [--path FILE] [--jobs N] [--rounds R] [--cache DIR]

Makes a scratch clone of REPO (a bare mirror is fine) with two commits on top of COMMIT, each
touching one main Java file: a *one-method edit* (a new public method before the type's closing
brace) and a *format-only edit* (a comment line and a blank line after the package line, which
moves every line below). The file is ``--path``, else the largest main Java file. Then it times a
cold scan of COMMIT and a rescan of each edit — with ``--cache DIR`` when the scanner takes a cache
(the same directory for all three, emptied first), else as plain scans — each the best of
``--rounds``, and reports the rescan/cold ratios, with the change classes ``diting diff`` finds
between the base and each edit (a format-only edit should give EVIDENCE_MOVED and nothing else).

Targets (incremental-rescan issue): one-file edit ≤ 10% of the cold scan, format-only ≤ 5%.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import fields
from pathlib import Path

from diting.diff.report import diff
from diting.scan.pipeline import ScanOptions, scan

AUTHOR = ["-c", "user.name=diting-bench", "-c", "user.email=bench@diting.invalid", "-c", "commit.gpgsign=false"]


def git(repo: Path, *args: str) -> str:
    """``git -C repo args`` (hooks and filters as configured in the scratch clone: none), its stdout."""
    return subprocess.run(["git", "-C", str(repo), *AUTHOR, *args], capture_output=True, text=True,
                          check=True).stdout


def scratch_clone(src: str, commit: str, into: Path) -> Path:
    """A working clone of ``src`` at ``commit`` (objects shared with the source, nothing copied)."""
    subprocess.run(["git", "clone", "-q", "--shared", "--no-checkout", src, str(into)], check=True)
    git(into, "checkout", "-q", "--detach", commit)
    return into


def largest_main_java(repo: Path) -> str:
    """The largest ``src/main/java`` file of the checkout (ties by path), repository-relative."""
    best: tuple[int, str] | None = None
    for line in git(repo, "ls-tree", "-r", "-l", "HEAD").splitlines():
        meta, path = line.split("\t", 1)
        if path.endswith(".java") and "/src/main/java/" in f"/{path}":
            size = int(meta.split()[3])
            if best is None or (size, path) > best:
                best = (size, path)
    if best is None:
        raise SystemExit("no main Java file in the repository")
    return best[1]


def edit_commit(repo: Path, path: str, how: str) -> str:
    """Commit ``how`` (``method`` or ``format``) applied to ``path`` on top of HEAD; returns its sha."""
    f = repo / path
    text = f.read_text(encoding="utf-8", errors="surrogateescape")
    if how == "method":
        cut = text.rstrip().rfind("}")
        text = text[:cut] + "\n    public void ditingRescanProbe() {\n    }\n" + text[cut:]
    else:
        lines = text.split("\n")
        at = next((i + 1 for i, ln in enumerate(lines) if ln.startswith("package ")), 0)
        text = "\n".join(lines[:at] + ["// a comment the rescan benchmark adds", ""] + lines[at:])
    f.write_text(text, encoding="utf-8", errors="surrogateescape")
    git(repo, "add", path)
    git(repo, "commit", "-q", "-m", f"rescan benchmark: {how} edit of {path}")
    return git(repo, "rev-parse", "HEAD").strip()


def timed_scan(repo: Path, rev: str, out: Path, jobs: int, cache: Path | None) -> tuple[float, object]:
    """One scan of ``rev`` into a fresh ``out``: (seconds, result)."""
    shutil.rmtree(out, ignore_errors=True)
    extra = {"cache": cache} if cache is not None else {}
    t0 = time.perf_counter()
    result = scan(repo, rev, ScanOptions(out=out, quiet=True, jobs=jobs, repo_id="bench", **extra))
    return time.perf_counter() - t0, result


def change_classes(old, new) -> dict[str, int]:
    """Change classes of ``diting diff`` between the packages of two scans, over the services both have."""
    olds = {p.service_id: p.path for p in old.packages}
    counts: Counter[str] = Counter()
    for p in new.packages:
        if p.service_id in olds:
            for c in diff(Path(olds[p.service_id]), Path(p.path))["changes"]:
                counts[c["class"]] += 1
    return dict(sorted(counts.items()))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("repo")
    ap.add_argument("commit")
    ap.add_argument("--path", help="the main Java file to edit (default: the largest)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--cache", type=Path, help="cache directory, when the scanner takes one (emptied first)")
    args = ap.parse_args()
    takes_cache = "cache" in {f.name for f in fields(ScanOptions)}
    with tempfile.TemporaryDirectory(prefix="diting-rescan-") as tmp:
        work = Path(tmp)
        repo = scratch_clone(args.repo, args.commit, work / "repo")
        base = git(repo, "rev-parse", "HEAD").strip()
        path = args.path or largest_main_java(repo)
        method = edit_commit(repo, path, "method")
        git(repo, "checkout", "-q", "--detach", base)
        fmt = edit_commit(repo, path, "format")
        cache = (args.cache or work / "cache") if takes_cache else None
        timings: dict[str, float] = {}
        results: dict[str, object] = {}
        for name, rev in (("cold", base), ("one_method_edit", method), ("format_only_edit", fmt)):
            best = None
            for r in range(args.rounds):
                if cache is not None and name == "cold":
                    shutil.rmtree(cache, ignore_errors=True)  # cold: nothing cached; the edits reuse it
                if cache is not None and name != "cold" and r > 0:
                    timed_scan(repo, base, work / "warm", args.jobs, cache)  # the base again, as before round 0
                secs, result = timed_scan(repo, rev, work / name, args.jobs, cache)
                best = secs if best is None else min(best, secs)
                results[name] = result
            timings[name] = best
        report = {
            "repo": args.repo, "commit": base, "edited": path, "jobs": args.jobs, "rounds": args.rounds,
            "cache": str(cache) if cache is not None else "the scanner takes no cache: plain scans",
            "seconds": {k: round(v, 2) for k, v in timings.items()},
            "ratio_one_method_edit_over_cold": round(timings["one_method_edit"] / timings["cold"], 3),
            "ratio_format_only_edit_over_cold": round(timings["format_only_edit"] / timings["cold"], 3),
            "diff_one_method_edit": change_classes(results["cold"], results["one_method_edit"]),
            "diff_format_only_edit": change_classes(results["cold"], results["format_only_edit"]),
        }
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
