"""Scan time of one large generated Java class: it must grow linearly with the file's size.

    python benchmarks/large_class.py [--sizes 0.5,1,2,4] [--jobs 1] [--profile]

Each size (MB) is one class in a small Spring Boot Maven module, with methods that call the one
before them and count a field of their own (``void m{i}() { m{i-1}(); f{i}++; }``), overloads by
arity, fields read across methods and, every tenth method, a lambda and an anonymous class;
committed to a fresh repository and scanned (``--max-file-bytes`` raised past the size). Prints
seconds, seconds per MB and the ratio of each size's seconds per MB to the smallest size's (1 is
linear). ``--profile`` prints the top cProfile entries (own time) of the largest. Speed is measured
here, never by timed unit tests.

Measured on a shared 2-core machine (issue 20 item 8), ``--jobs 1``: before the indexed lookups
0.5 MB 5.1 s, 1 MB 20.1 s, 2 MB 142 s (ratio 7.0); after, 0.5 MB 2.1 s, 1 MB 4.2 s, 2 MB 9.0 s,
4 MB 23 s, 7.9 MB (just under the 8 MiB cap) 43 s (ratio 1.0-1.4, the machine loaded).
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import tempfile
import time
from pathlib import Path

from diting.demo import commit_tree
from diting.scan.pipeline import ScanOptions, scan

POM = ('<?xml version="1.0"?>\n<project xmlns="http://maven.apache.org/POM/4.0.0">\n<modelVersion>4.0.0'
       "</modelVersion>\n<groupId>com.example</groupId><version>1.0</version><artifactId>big</artifactId>\n"
       "<build><plugins><plugin><groupId>org.springframework.boot</groupId>"
       "<artifactId>spring-boot-maven-plugin</artifactId></plugin></plugins></build>\n</project>\n")

APP = ("package big;\n@org.springframework.boot.autoconfigure.SpringBootApplication\n"
       "public class App { public static void main(String[] a) { } }\n")


def big_class(size: int) -> str:
    """A class ``big.Big`` of about ``size`` bytes."""
    head = "package big;\n\npublic class Big {\n"
    parts, total, i = [head], len(head), 0
    while total < size:
        i += 1
        block = (f"    private int f{i};\n"
                 f"    public void m{i}() {{ m{i - 1}(); f{i}++; if (f{i} > {i}) {{ m{i - 1}(f{i}); }} }}\n"
                 f"    public void m{i}(int x) {{ f{i} += x; this.m{i}(); }}\n")
        if i % 10 == 0:  # local and anonymous classes and lambdas: each looks up the member around it
            block += (f"    public Runnable r{i}() {{ Runnable x = () -> m{i}(); return new Runnable() {{ "
                      f"public void run() {{ x.run(); m{i - 1}(f{i}); }} }}; }}\n")
        parts.append(block)
        total += len(block)
    parts.append("    public void m0() { }\n    public void m0(int x) { }\n}\n")
    return "".join(parts)


def run(size_mb: float, tmp: Path, jobs: int, profile: bool) -> tuple[float, int, pstats.Stats | None]:
    """Seconds to scan a repository holding one class of ``size_mb`` MB, and its byte size."""
    body = big_class(int(size_mb * 1024 * 1024))
    src = tmp / f"src{size_mb}"
    (src / "src/main/java/big").mkdir(parents=True)
    (src / "pom.xml").write_text(POM, encoding="utf-8")
    (src / "src/main/java/big/App.java").write_text(APP, encoding="utf-8")
    (src / "src/main/java/big/Big.java").write_text(body, encoding="utf-8")
    repo = tmp / f"r{size_mb}"
    sha = commit_tree(src, repo)
    opts = ScanOptions(out=tmp / f"out{size_mb}", repo_id="bench/big", quiet=True, jobs=jobs,
                       max_file_bytes=len(body) + 1)
    prof = cProfile.Profile() if profile else None
    t0 = time.perf_counter()
    if prof:
        prof.enable()
    scan(repo, sha, opts)
    if prof:
        prof.disable()
    return time.perf_counter() - t0, len(body), pstats.Stats(prof) if prof else None


def main() -> None:
    """Scan each size and print the table."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="0.5,1,2,4")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--profile", action="store_true")
    a = ap.parse_args()
    sizes = [float(s) for s in a.sizes.split(",")]
    base = None
    print(f"{'MB':>6} {'bytes':>10} {'seconds':>9} {'s/MB':>7} {'ratio':>6}")
    with tempfile.TemporaryDirectory() as d:
        for mb in sizes:
            secs, n, stats = run(mb, Path(d), a.jobs, a.profile and mb == max(sizes))
            per = secs / (n / 1024 / 1024)
            base = base or per
            print(f"{mb:>6} {n:>10} {secs:>9.2f} {per:>7.2f} {per / base:>6.2f}", flush=True)
            if stats:
                stats.sort_stats("tottime").print_stats(25)


if __name__ == "__main__":
    main()
