"""The pyramid at estate scale: ``diting pyramid`` time and memory over a graph of many packages.

    python benchmarks/pyramid_scale.py --base DIR[:COPIES] [--base ...] [--work DIR] [--rounds 3]

The estate is built as ``benchmarks/graph_scale.py`` builds it (copies renamed into other estates).
Figures, each the best of ``--rounds`` in one process (ratios matter on a shared machine, not
seconds):

* **pyramid ratio** — deriving and storing every card, rule, profile and flow (``build_pyramid``
  without pages) over a baseline that only reads into Python the records the pyramid reads (the
  entities, relations and ledger items of the current service packages, one query per package);
* **pages** — writing the JSON and Markdown pages on top;
* **peak RSS** of the process.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT / "src"))
sys.path.insert(0, str(PROJECT / "benchmarks"))

from graph_scale import estate_packages  # noqa: E402

from diting.graph import store  # noqa: E402
from diting.pyramid.build import build_pyramid  # noqa: E402
from diting.pyramid.pages import write_pages  # noqa: E402


def plain_read(db: Path) -> float:
    """Read the records the pyramid reads, package by package, into Python tuples."""
    con = store.connect(db, read_only=True)
    t = time.perf_counter()
    for (scan_id,) in con.execute("SELECT scan_id FROM packages WHERE is_current AND kind = 'SERVICE' "
                                  "ORDER BY scan_id").fetchall():
        for table in ("entities", "relations", "branch_ledger"):
            con.execute(f"SELECT * FROM {table} WHERE scan_id = ?", [scan_id]).fetchall()
    elapsed = time.perf_counter() - t
    con.close()
    return elapsed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", action="append", required=True, help="DIR[:COPIES] of scanned packages")
    ap.add_argument("--work", type=Path, default=None)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="diting-pyramid-scale-"))
    pkgs = estate_packages(args.base, work)
    db = work / "g.duckdb"
    db.unlink(missing_ok=True)
    store.build(db, pkgs)
    reads, derives, pages = [], [], []
    for _ in range(args.rounds):
        reads.append(plain_read(db))
        t = time.perf_counter()
        p = build_pyramid(db, None)
        derives.append(time.perf_counter() - t)
        out = work / f"pages-{len(pages)}"
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir()
        t = time.perf_counter()
        write_pages(p, out)
        pages.append(time.perf_counter() - t)
    print(f"estate: {len(pkgs)} packages; pyramid: {len(p.profiles)} profiles, {len(p.cards):,} cards, "
          f"{len(p.rules):,} rules, {len(p.flows):,} flows, {len(p.steps):,} steps")
    print(f"pyramid: {min(derives):.1f} s; reading its records alone: {min(reads):.1f} s; "
          f"ratio {min(derives) / min(reads):.2f}; writing the pages: {min(pages):.1f} s")
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
