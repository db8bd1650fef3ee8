"""Statements per second through the SQL stage on a real repository.

Reads every mapper XML under ``src/main`` at a commit (git blobs), then runs the SQL stage's work
on each statement in this process — mapper parsing, ``<include>`` expansion and variants, the
``${}`` fragment pass, sqlglot lineage of every variant — and reports statements and variants per
second (best of ``--rounds``). Lineage is memoised per distinct SQL text, as in a scan, where
packages sharing a mapper module parse its statements once per worker.

    python benchmarks/sql_speed.py REPO COMMIT [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import time

from diting.sql.dynamic import fragment_lookup
from diting.sql.emit import mapper_fragments, statement_lineage
from diting.sql.lineage import forget
from diting.sql.mybatis import read_mapper


def mapper_blobs(repo: str, commit: str) -> list[tuple[str, bytes]]:
    paths = subprocess.run(["git", "-C", repo, "ls-tree", "-r", "--name-only", commit], capture_output=True,
                           check=True, text=True).stdout.splitlines()
    out = []
    for p in paths:
        if p.endswith(".xml") and "src/main/" in p:
            data = subprocess.run(["git", "-C", repo, "show", f"{commit}:{p}"], capture_output=True, check=True).stdout
            if b"<mapper" in data[:4096]:
                out.append((p, data))
    return out


def run(blobs: list[tuple[str, bytes]]) -> tuple[int, int]:
    files = [read_mapper(p, d) for p, d in blobs]
    lookup = fragment_lookup(mapper_fragments(files))
    statements = variants = 0
    for f in files:
        for st in f.statements:
            _, _, results = statement_lineage(st.body, f.namespace or "", lookup, "mysql")
            variants += len(results)
            statements += 1
    return statements, variants


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("repo")
    ap.add_argument("commit")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    blobs = mapper_blobs(args.repo, args.commit)
    best = None
    for _ in range(args.rounds):
        forget()
        t0 = time.perf_counter()
        n, nv = run(blobs)
        el = time.perf_counter() - t0
        best = el if best is None else min(best, el)
    print(json.dumps({"repo": args.repo, "commit": args.commit, "mapper_files": len(blobs), "statements": n,
                      "variants_parsed": nv, "sql_stage_s": round(best, 2),
                      "statements_per_second": int(n / best), "variants_per_second": int(nv / best)}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
