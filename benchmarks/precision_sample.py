"""Draw relations of the middleware probes for a hand check of their precision.

Collects, from every package under the given directories, the relations the
probes make — EXPOSES, BINDS_TO, SUBSCRIBES, PUBLISHES, INJECTS, READS /
WRITES of config and cache keys, and CALLS dispatched as RPC or DYNAMIC — and
draws N of them uniformly with a fixed seed (the same packages give the same
draw). Each is printed with its record_id, status, source and target, and the
source text of its evidence, so that a reader can check it against the code.

    python benchmarks/precision_sample.py [--n 50] [--seed 20261130] PACKAGES_DIR...
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

KINDS = {"EXPOSES", "BINDS_TO", "SUBSCRIBES", "PUBLISHES", "INJECTS", "READS", "WRITES", "CALLS"}


def probe_relation(r: dict) -> bool:
    if r["kind"] not in KINDS or r["source_ref"]["record_id"].startswith("stmt:"):
        return False  # table lineage of SQL statements is the SQL stage's (benchmarks/sql_sample.py)
    if r["kind"] == "CALLS":
        return (r.get("attributes") or {}).get("dispatch_kind") in ("RPC", "DYNAMIC")
    if r["kind"] == "BINDS_TO":  # bean → TYPE is bookkeeping; bean → contract and topic → queue are facts
        target = (r.get("target_ref") or {}).get("record_id", "")
        return target.startswith(("contract:", "topic:"))
    return True


def collect(dirs: list[Path]) -> list[tuple[str, dict, dict]]:
    """(package name, relation, segments by record_id) of every probe relation, deduplicated by
    (repository, relation record_id): a module shared by several packages is drawn once."""
    seen: set[tuple[str, str]] = set()
    out = []
    for d in dirs:
        for pkg in sorted(p for p in d.iterdir() if (p / "manifest.json").is_file()):
            segs = {}
            for line in (pkg / "source_segments.jsonl").read_text(encoding="utf-8").splitlines():
                s = json.loads(line)
                segs[s["record_id"]] = s
            for line in (pkg / "relations.jsonl").read_text(encoding="utf-8").splitlines():
                r = json.loads(line)
                key = (str(d), r["record_id"])
                if probe_relation(r) and key not in seen:
                    seen.add(key)
                    out.append((f"{d.name}/{pkg.name}", r, segs))
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("dirs", nargs="+", type=Path)
    ap.add_argument("--n", type=int, default=50)
    ap.add_argument("--seed", type=int, default=20261130)
    args = ap.parse_args()
    pool = collect(args.dirs)
    rng = random.Random(args.seed)
    draw = rng.sample(pool, min(args.n, len(pool)))
    print(f"{len(pool)} probe relations; {len(draw)} drawn with seed {args.seed}\n")
    for i, (pkg, r, segs) in enumerate(draw, 1):
        tgt = (r.get("target_ref") or {}).get("record_id") or f"? {json.dumps(r.get('match_keys'), sort_keys=True)}"
        print(f"[{i}] {r['kind']} {r['resolution_status']}  ({pkg})")
        print(f"    record_id: {r['record_id']}")
        print(f"    {r['source_ref']['record_id']}\n      -> {tgt}")
        attrs = {k: v for k, v in (r.get("attributes") or {}).items() if v not in (None, [], {})}
        if attrs:
            print(f"    attributes: {json.dumps(attrs, sort_keys=True, ensure_ascii=False)}")
        for ref in r.get("evidence_refs", [])[:1]:
            s = segs.get(ref["record_id"])
            if s:
                loc = s["locator"]
                text = s["content"].splitlines()
                print(f"    evidence {loc['path']}:{loc['start_line']}-{loc['end_line']}")
                for ln in text[:4]:
                    print(f"      | {ln[:150]}")
        print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
