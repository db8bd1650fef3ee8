"""Draw SQL statements for a hand check of tables, operations and ledger items.

Collects every SQL_STATEMENT of the packages under the given directories (a statement shared by
several packages of one repository once), draws N uniformly with a fixed seed, and prints each with
its record_id, source lines (the evidence text), the tables it READS and WRITES with operations,
and its ledger items — so a reader can check them against the SQL.

    python benchmarks/sql_sample.py [--n 50] [--seed 20261130] PACKAGES_DIR...
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path


def collect(dirs: list[Path]) -> list[dict]:
    seen: set[tuple[str, str]] = set()
    out = []
    for d in dirs:
        for pkg in sorted(p for p in d.iterdir() if (p / "manifest.json").is_file()):
            rows = {}
            for name in ("entities.jsonl", "relations.jsonl", "source_segments.jsonl", "branch_ledger.jsonl"):
                rows[name] = [json.loads(x) for x in (pkg / name).read_text(encoding="utf-8").splitlines()]
            ents = {r["record_id"]: r for r in rows["entities.jsonl"]}
            segs = {r["record_id"]: r for r in rows["source_segments.jsonl"]}
            for e in rows["entities.jsonl"]:
                if e["kind"] != "SQL_STATEMENT" or (d.name, e["stable_id"]) in seen:
                    continue
                seen.add((d.name, e["stable_id"]))
                rels = [r for r in rows["relations.jsonl"] if r["kind"] in ("READS", "WRITES")
                        and r["source_ref"]["record_id"] == e["record_id"]]
                ledger = [li for li in rows["branch_ledger.jsonl"] if li["symbol_ref"]["record_id"] == e["record_id"]]
                seg = segs[e["evidence_refs"][0]["record_id"]]
                out.append({"repo": d.name, "stmt": e, "seg": seg, "ledger": ledger,
                            "tables": sorted((r["kind"], ents[r["target_ref"]["record_id"]]["name"]
                                              if r["target_ref"] else r["match_keys"], r["attributes"].get("operations"))
                                             for r in rels)})
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("dirs", nargs="+", type=Path)
    ap.add_argument("--n", type=int, default=50)
    ap.add_argument("--seed", type=int, default=20261130)
    args = ap.parse_args()
    items = collect(args.dirs)
    items.sort(key=lambda i: (i["repo"], i["stmt"]["stable_id"]))
    drawn = random.Random(args.seed).sample(items, min(args.n, len(items)))
    print(f"{len(items)} statements; {len(drawn)} drawn with seed {args.seed}")
    for k, i in enumerate(drawn, 1):
        e, loc = i["stmt"], i["seg"]["locator"]
        a = e["attributes"]
        print(f"\n[{k}] {e['record_id']}  ({i['repo']}) {a['operation']} {a['parse_status']} "
              f"source={a.get('source')} variants={a.get('variants', '-')}")
        if a.get("source") == "MYBATIS_PLUS":  # no SQL text: the table comes from the entity
            print(f"    entity {a.get('entity')} table_name_basis={a.get('table_name_basis')} "
                  f"inherited_from={a.get('inherited_from')}")
        print(f"    {loc['path']}:{loc['start_line']}-{loc['end_line']}")
        for line in i["seg"]["content"].splitlines()[:14]:
            print(f"      | {line.rstrip()[:150]}")
        for t in i["tables"]:
            print(f"    {t[0]} {t[1]} {t[2]}")
        for li in sorted(i["ledger"], key=lambda x: x["branch_id"]):
            print(f"    ledger {li['branch_id'].split('/', 1)[1]} {li['branch_kind']} {li['resolution_status']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
