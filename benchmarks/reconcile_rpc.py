"""Reconcile diting's RPC findings with an independent count of the declarations.

Counts, without diting's pipeline, every Dubbo declaration in main code of a
repository at a commit — ``<dubbo:service>`` / ``<dubbo:reference>`` in XML
(either namespace), ``@DubboService`` / ``@DubboReference`` and the legacy
``@Service`` / ``@Reference`` imported from a Dubbo package — then checks that
each is accounted for by a record of the scanned packages whose evidence covers
its line: a provider by a CONTRACT (loaded or not) or a TYPE_UNRESOLVED
diagnostic; a reference by a CONSUMED contract, a BINDS_TO, a DECLARED_UNUSED
diagnostic, or — outside every Spring context (a lib: package) — its consumer
bean kept with ``loaded = false``. Prints the tally and every declaration not
accounted for.

    python benchmarks/reconcile_rpc.py REPO COMMIT PACKAGES_DIR
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

from lxml import etree

DUBBO_NS = {"http://dubbo.apache.org/schema/dubbo", "http://code.alibabatech.com/schema/dubbo"}
ANNOTATION = re.compile(r"^\s*@(DubboService|DubboReference|Service|Reference)\b")
DUBBO_IMPORT = re.compile(r"^import\s+(org\.apache\.dubbo|com\.alibaba\.dubbo)\.config\.annotation\.(Service|Reference)\s*;",
                          re.M)


def git(repo: str, *args: str) -> bytes:
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True).stdout


def independent_count(repo: str, commit: str) -> list[tuple[str, int, str, str]]:
    """``(path, line, role, form)`` of every declaration in ``src/main``."""
    out = []
    for path in git(repo, "ls-tree", "-r", "--name-only", commit).decode().splitlines():
        if "/src/main/" not in "/" + path:
            continue
        if path.endswith(".xml"):
            data = git(repo, "show", f"{commit}:{path}")
            if b"dubbo" not in data:
                continue
            try:
                root = etree.fromstring(data, etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False))
            except etree.XMLSyntaxError:
                continue
            for el in root.iter():
                if isinstance(el.tag, str) and etree.QName(el).namespace in DUBBO_NS:
                    name = etree.QName(el).localname
                    if name in ("service", "reference"):
                        out.append((path, el.sourceline, "provider" if name == "service" else "consumer", "xml"))
        elif path.endswith(".java"):
            text = git(repo, "show", f"{commit}:{path}").decode("utf-8", "replace")
            legacy = {m.group(2) for m in DUBBO_IMPORT.finditer(text)}
            for i, line in enumerate(text.splitlines(), 1):
                m = ANNOTATION.match(line)
                if not m:
                    continue
                name = m.group(1)
                if name in ("Service", "Reference") and name not in legacy:
                    continue
                role = "provider" if name in ("DubboService", "Service") else "consumer"
                out.append((path, i, role, "@" + name))
    return out


def package_evidence(packages: Path) -> dict[str, list[tuple[int, int, str]]]:
    """path → [(start, end, what)] for the records that account for a declaration."""
    index: dict[str, list[tuple[int, int, str]]] = {}
    for pkg in sorted(p for p in packages.iterdir() if (p / "manifest.json").is_file()):
        segs = {}
        for line in (pkg / "source_segments.jsonl").read_text(encoding="utf-8").splitlines():
            s = json.loads(line)
            loc = s["locator"]
            segs[s["record_id"]] = (loc["path"], loc["start_line"], loc["end_line"])
        for name in ("entities.jsonl", "relations.jsonl", "diagnostics.jsonl"):
            for line in (pkg / name).read_text(encoding="utf-8").splitlines():
                r = json.loads(line)
                what = r.get("code") or r["kind"]
                if what == "CONTRACT":
                    what = f"CONTRACT {r['role']} loaded={r['attributes'].get('loaded')}"
                elif what == "BEAN" and r["attributes"].get("declared_by") in ("RPC_REFERENCE", "RPC_CONSUMER"):
                    what = f"CONSUMER BEAN loaded={r['attributes'].get('loaded')}"
                elif what not in ("BINDS_TO", "DECLARED_UNUSED", "TYPE_UNRESOLVED", "EXPOSES"):
                    continue
                for ref in r.get("evidence_refs", []):
                    if ref["record_id"] in segs:
                        path, a, b = segs[ref["record_id"]]
                        index.setdefault(path, []).append((a, b, what))
    return index


def main(argv: list[str]) -> int:
    repo, commit, packages = argv[0], argv[1], Path(argv[2])
    decls = independent_count(repo, commit)
    index = package_evidence(packages)
    tally: Counter[str] = Counter()
    missing = []
    for path, line, role, form in decls:
        hits = {w for a, b, w in index.get(path, []) if a <= line <= b}
        if role == "provider":
            ok = sorted(h for h in hits if h.startswith("CONTRACT PROVIDED") or h in ("TYPE_UNRESOLVED", "EXPOSES"))
        else:
            ok = sorted(h for h in hits if h.startswith(("CONTRACT CONSUMED", "CONSUMER BEAN loaded=False"))
                        or h in ("BINDS_TO", "DECLARED_UNUSED"))
        ok.sort(key=lambda h: ("loaded=False" in h, h))  # loaded in some package beats kept-as-declaration
        if ok:
            tally[f"{role} {form}: {ok[0]}"] += 1
        else:
            missing.append((path, line, role, form, sorted(hits)))
    print(f"{len(decls)} declarations counted independently; {len(decls) - len(missing)} accounted for")
    for k, n in sorted(tally.items()):
        print(f"  {n:5d}  {k}")
    for m in missing:
        print("  NOT ACCOUNTED FOR:", m)
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
