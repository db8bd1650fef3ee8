"""Independent count of SQL statements, compared with diting's SQL stage.

Counts, without diting's pipeline, the ``<select|insert|update|delete>`` elements (and the
``<selectKey>`` inside them) of every XML file under ``src/main`` whose root is ``<mapper>`` and the
SQL annotations of Java files there,
at a commit; then reads the packages' SQL_STATEMENT entities (each mapper counted once, however
many packages include it) and prints the tally, the parse status counts and every statement
that is not PARSED, with its reason.

    python benchmarks/count_sql.py REPO COMMIT PACKAGES_DIR
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

from lxml import etree


def git(repo: str, *args: str) -> bytes:
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True).stdout


def independent(repo: str, commit: str) -> tuple[Counter, set[tuple[str, str]]]:
    """(path) → statement elements in it, and the distinct (namespace, id) pairs (a mapper may
    repeat an id for several ``databaseId`` values; MyBatis runs one of them)."""
    out: Counter = Counter()
    distinct: set[tuple[str, str]] = set()
    for path in git(repo, "ls-tree", "-r", "--name-only", commit).decode().splitlines():
        if not path.endswith(".xml") or "src/main/" not in path:
            continue
        data = git(repo, "show", f"{commit}:{path}")
        if b"<mapper" not in data[:4096]:
            continue
        parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
        try:
            root = etree.fromstring(data, parser)
        except etree.XMLSyntaxError:
            continue
        if etree.QName(root).localname != "mapper":
            continue
        for el in root:
            if isinstance(el.tag, str) and etree.QName(el).localname in ("select", "insert", "update", "delete"):
                keys = sum(1 for k in el if isinstance(k.tag, str) and etree.QName(k).localname == "selectKey")
                out[path] += 1 + keys
                distinct.add((root.get("namespace") or "", el.get("id") or ""))
                if keys:
                    distinct.add((root.get("namespace") or "", (el.get("id") or "") + "!selectKey"))
    return out, distinct


_ANNOTATION_SQL = re.compile(rb"@(?:org\.apache\.ibatis\.annotations\.)?(Select|Insert|Update|Delete)(Provider)?\s*\(")


def independent_annotations(repo: str, commit: str) -> int:
    """``@Select/@Insert/@Update/@Delete`` (and their ``…Provider``) annotations in Java files under
    ``src/main``, counted by a regular expression over the text."""
    n = 0
    for path in git(repo, "ls-tree", "-r", "--name-only", commit).decode().splitlines():
        if path.endswith(".java") and "src/main/" in path:
            data = git(repo, "show", f"{commit}:{path}")
            if b"ibatis" in data:
                n += len(_ANNOTATION_SQL.findall(data))
    return n


def main() -> int:
    repo, commit, pkgs = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    counted, distinct = independent(repo, commit)
    annotations = independent_annotations(repo, commit)
    seen: dict[str, dict] = {}
    for pkg in sorted(p for p in pkgs.iterdir() if (p / "entities.jsonl").is_file()):
        for line in (pkg / "entities.jsonl").read_text(encoding="utf-8").splitlines():
            r = json.loads(line)
            if r["kind"] == "SQL_STATEMENT":
                seen.setdefault(r["stable_id"], r)
    # the denominator is SQL text (mapper XML and annotations); MyBatis-Plus inherited statements
    # (no text: the table comes from the entity) are reported apart
    plus = {sid: r for sid, r in seen.items() if r["attributes"].get("source") == "MYBATIS_PLUS"}
    seen = {sid: r for sid, r in seen.items() if sid not in plus}
    status = Counter(r["attributes"]["parse_status"] for r in seen.values())
    total = sum(counted.values())
    xml = {sid for sid, r in seen.items() if r["attributes"].get("source") == "MAPPER_XML"}
    ann = {sid for sid, r in seen.items() if r["attributes"].get("source") == "ANNOTATION"}
    print(f"{total} statement elements counted independently in {len(counted)} mapper files "
          f"({len(distinct)} distinct namespace.id) and {annotations} SQL annotations; diting: {len(xml)} from "
          f"mapper XML, {len(ann)} from annotations, {len(seen) - len(xml) - len(ann)} from calls (JDBC)")
    if plus:
        basis = Counter(r["attributes"].get("table_name_basis") or r["attributes"]["parse_status"]
                        for r in plus.values())
        print(f"MyBatis-Plus inherited statements called: {len(plus)} (table from {dict(sorted(basis.items()))})")
    missing = {f"{ns}.{i}" for ns, i in distinct} - xml
    for m in sorted(missing):
        print(f"  MISSING {m}")
    print("parse status:", dict(sorted(status.items())))
    parsed = status.get("PARSED", 0)
    print(f"parsed: {parsed}/{len(seen)} = {parsed / len(seen):.4f}" if seen else "no statements")
    for sid, r in sorted(seen.items()):
        if r["attributes"]["parse_status"] != "PARSED":
            print(f"  {r['attributes']['parse_status']:12} {sid}: {r['attributes'].get('reason', '')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
