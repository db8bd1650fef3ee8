"""The relation graph at estate scale: build time, impact query time and database size.

    python benchmarks/graph_scale.py --base DIR[:COPIES] [--base ...] [--work DIR] [--rounds 3]

Each ``--base`` directory holds real scanned packages; it is replicated COPIES times (default 1).
Copy k > 0 is the same packages renamed so that it is another estate: every service id gets the
suffix ``-c{k}``, the commit another SHA (so source segments are not shared between copies), and
every contract, topic and table urn the namespace ``c{k}`` (so copies align inside themselves,
not with each other). The copies are re-signed (canonical analysis input, input digest, scan id,
manifest checksums) and pass ``diting verify``.

Figures, each the best of ``--rounds`` in one process (the machine is shared and noisy; ratios
matter, not seconds):

* **build ratio** — ``diting graph build`` of every package into a fresh database (verify, load,
  align, impact edges) over DuckDB alone reading the same jsonl files into tables with the same
  typed columns (target ≤ 3);
* **impact ratio** — a warm ``impact --depth 2`` from a provided contract over a warm one-hop lookup
  of the same contract's direct dependents (one SQL query on ``impact_edges``; target ≤ 10), and over
  ``impact --depth 1``;
* **bytes per relation** — the database file size over the number of relations loaded.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT / "src"))

from diting.graph import store  # noqa: E402
from diting.ir.canonical import dumps_bytes, sha256_hex  # noqa: E402

SCHEMES = ("jsf://", "dubbo://", "jmq://", "rocketmq://", "kafka://", "amqp://", "amqp-queue://")


def _packages(d: Path) -> list[Path]:
    return sorted(p for p in d.iterdir() if (p / "manifest.json").is_file())


def replicate(base: Path, k: int, dest: Path) -> list[Path]:
    """Copy k of the packages under ``base`` into ``dest`` (see the module docstring)."""
    pkgs = _packages(base)
    services = {json.loads((p / "manifest.json").read_text())["service_id"] for p in pkgs}
    out = []
    for pkg in pkgs:
        m = json.loads((pkg / "manifest.json").read_text())
        sha = m["commit_sha"]
        new_sha = hashlib.sha1(f"{sha}-c{k}".encode()).hexdigest()
        suffix = f"-c{k}"

        def rename(text: str) -> str:
            text = text.replace(sha, new_sha)
            for scheme in SCHEMES:
                text = text.replace(scheme, f"{scheme}c{k}.")
            text = text.replace("table://", f"table://c{k}_")
            for s in services:
                esc = re.escape(s)
                text = re.sub(rf'"{esc}"', f'"{s}{suffix}"', text)
                text = re.sub(rf"(scan:|sv:|service:){esc}(?=[:\"])", rf"\g<1>{s}{suffix}", text)
                text = re.sub(rf"http://{esc}(?=[/#])", f"http://{s}{suffix}", text)
            return text

        ai = json.loads(rename((pkg / "analysis_input.json").read_text(encoding="utf-8")))
        ai_bytes = dumps_bytes(ai)
        digest = sha256_hex(ai_bytes)
        sid = m["service_id"] + suffix
        old_scan, new_scan = m["scan_id"], f"scan:{sid}:{digest[:16]}"
        target = dest / f"{sid}@{new_sha[:12]}"
        target.mkdir(parents=True)
        (target / "analysis_input.json").write_bytes(ai_bytes)
        files = []
        for f in m["files"]:
            if f["path"] == "analysis_input.json":
                data = ai_bytes
            else:
                text = (pkg / f["path"]).read_text(encoding="utf-8").replace(old_scan, new_scan)
                data = (text if f["path"] == "source_segments.jsonl" else rename(text)).encode("utf-8")
                if f["path"] == "source_segments.jsonl":
                    data = data.replace(sha.encode(), new_sha.encode())
                (target / f["path"]).write_bytes(data)
            files.append({"path": f["path"], "sha256": hashlib.sha256(data).hexdigest(),
                          "record_count": f["record_count"]})
        m.update(service_id=sid, scan_id=new_scan, commit_sha=new_sha, input_digest=digest, files=files)
        (target / "manifest.json").write_bytes(dumps_bytes(m) + b"\n")
        out.append(target)
    return out


def _relations(pkgs: list[Path]) -> int:
    n = 0
    for p in pkgs:
        m = json.loads((p / "manifest.json").read_text())
        n += next(f["record_count"] for f in m["files"] if f["path"] == "relations.jsonl")
    return n


def plain_read(pkgs: list[Path], db: Path) -> float:
    """DuckDB reading every jsonl file the build reads into tables of the same typed columns."""
    import duckdb
    t = time.perf_counter()
    con = duckdb.connect(str(db))
    for fname, (table, cols) in store.TABLES.items():
        spec = ", ".join(f"'{c}': '{ty}'" for c, ty in cols.items())
        paths = [str(p / fname) for p in pkgs if (p / fname).is_file() and (p / fname).stat().st_size]
        con.execute(f"CREATE TABLE {table} AS SELECT * FROM read_json(?, format = 'newline_delimited', "
                    f"columns = {{{spec}}})", [paths])
    con.close()
    return time.perf_counter() - t


def estate_packages(bases: list[str], work: Path) -> list[Path]:
    """The packages of ``--base DIR[:COPIES]`` specs: each DIR's own, then its copies replicated
    under ``work/estate`` (made anew)."""
    estate = work / "estate"
    if estate.exists():
        shutil.rmtree(estate)
    pkgs: list[Path] = []
    for spec in bases:
        d, _, n = spec.partition(":")
        for k in range(int(n or 1)):
            pkgs += _packages(Path(d)) if k == 0 else replicate(Path(d), k, estate / f"{Path(d).name}-c{k}")
    return pkgs


def build_figures(args, work: Path, db: Path) -> None:
    """Replicate the estate, then time the build against a plain read and report the sizes."""
    pkgs = estate_packages(args.base, work)
    services = sum(1 for p in pkgs if store.package_kind(store.analysis_input(p)) == "SERVICE")
    relations = _relations(pkgs)
    print(f"estate: {len(pkgs)} packages, {services} services, {relations:,} relations")
    builds, reads = [], []
    for _ in range(args.rounds):
        for f in (db, work / "plain.duckdb"):
            f.unlink(missing_ok=True)
        reads.append(plain_read(pkgs, work / "plain.duckdb"))
        t = time.perf_counter()
        result = store.build(db, pkgs)
        builds.append(time.perf_counter() - t)
    print(f"build: {min(builds):.1f} s; DuckDB reading the same files: {min(reads):.1f} s; "
          f"ratio {min(builds) / min(reads):.2f} (target <= 3)")
    print("aligned:", ", ".join(f"{k} {v:,}" for k, v in result.aligned.items()))
    size = db.stat().st_size
    print(f"database: {size / 2**20:.0f} MiB, {size / relations:.0f} bytes per relation "
          f"(plain read: {(work / 'plain.duckdb').stat().st_size / relations:.0f})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", action="append", required=True, help="DIR[:COPIES] of scanned packages")
    ap.add_argument("--work", type=Path, default=None)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--target", action="append", default=[], help="an urn to start impact from (repeatable)")
    ap.add_argument("--reuse", action="store_true", help="time impact on the database a previous run left in --work")
    args = ap.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="diting-graph-scale-"))
    db = work / "g.duckdb"
    if not (args.reuse and db.is_file()):
        build_figures(args, work, db)
    from diting.graph.impact import impact
    con = store.connect(db, read_only=True)
    targets = args.target or [con.execute(
        "SELECT a.urn FROM alignment a WHERE edge_kind IN ('RPC', 'HTTP') AND resolution_status = 'RESOLVED' "
        "GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1").fetchone()[0]]

    def timed(fn) -> tuple[float, object]:
        best, out = float("inf"), None
        fn()  # warm
        for _ in range(max(5, args.rounds)):
            t = time.perf_counter()
            out = fn()
            best = min(best, time.perf_counter() - t)
        return best, out

    for target in targets:
        def one_hop() -> int:
            """The direct dependents of the target's entities: one SQL query."""
            return len(con.execute("SELECT e.* FROM impact_nodes n JOIN impact_edges e ON e.src = n.node "
                                   "WHERE n.urn = $t", {"t": target}).fetchall())

        t1, n1 = timed(one_hop)
        td1, r1 = timed(lambda: impact(con, target, "LOGIC", depth=1))
        td2, r2 = timed(lambda: impact(con, target, "LOGIC", depth=2))
        print(f"impact from {target} ({len(r2['start'])} start entities):")
        print(f"  one-hop lookup: {t1 * 1000:.1f} ms ({n1} edges); depth 1: {td1 * 1000:.0f} ms "
              f"({len(r1['items'])} items); depth 2: {td2 * 1000:.0f} ms ({len(r2['items'])} items, complete: "
              f"{r2['enumeration_complete']})")
        print(f"  ratio depth 2 / one-hop lookup {td2 / t1:.1f} (target <= 10); depth 2 / depth 1 {td2 / td1:.2f}")
    con.close()
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
