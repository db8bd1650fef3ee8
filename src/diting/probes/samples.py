"""Running a rule's samples: each sample is a small repository scanned with the rules (docs/rules.md §6).

A sample's ``input`` maps repository paths to file contents. When it has no
root ``pom.xml``, one is supplied (``sample:sample-app``, a Spring Boot
deployable), and when no Java file declares ``@SpringBootApplication``,
``com.example.SampleApplication`` is supplied, so a sample writes only what
it is about, under ``com.example``. The files are scanned as a tree held in
memory (no git runs: ``source/memory.py``); every record of every package is collected.

Matching an expected record: each given top-level field must equal the
record's (``status`` is a relation's ``resolution_status`` or a binding's
``value_resolution``; ``target`` / ``source`` / ``consumer`` are the record ids
of ``target_ref`` / ``source_ref`` / ``consumer_ref``; ``candidates`` and
``affected`` the record ids of ``candidate_target_refs`` / a diagnostic's
``affected_refs``); ``attributes`` and ``match_keys``
match as subsets (every listed key equal). A branch ledger item is of kind
``LEDGER_ITEM`` (``branch_id``, ``branch_kind``, ``exclusion_rule_id`` — null
for a kept item). ``expect_none`` entries must match no record.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from diting.probes.model import Rule, Sample

DEFAULT_POM = """<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>sample</groupId>
  <artifactId>sample-app</artifactId>
  <version>1.0.0</version>
  <build><plugins><plugin>
    <groupId>org.springframework.boot</groupId><artifactId>spring-boot-maven-plugin</artifactId>
  </plugin></plugins></build>
</project>
"""

DEFAULT_APPLICATION = """package com.example;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

@SpringBootApplication
public class SampleApplication {
    public static void main(String[] args) {
        SpringApplication.run(SampleApplication.class, args);
    }
}
"""

_PACKAGE_FILES = ("entities.jsonl", "relations.jsonl", "config_bindings.jsonl", "diagnostics.jsonl",
                  "branch_ledger.jsonl")
_REF_FIELDS = {"target": "target_ref", "source": "source_ref", "consumer": "consumer_ref", "handler": "handler_ref"}


@dataclass
class SampleResult:
    """One sample's outcome: ``failures`` empty when it passed."""

    rule_id: str
    index: int
    form: str
    failures: list[str] = field(default_factory=list)
    records: list[dict[str, Any]] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.failures


def sample_files(sample: Sample) -> dict[str, str]:
    """The sample's files with the default pom and application class added when absent."""
    files = dict(sample.input)
    if "pom.xml" not in files:
        files["pom.xml"] = DEFAULT_POM
    if not any(p.endswith(".java") and "@SpringBootApplication" in c for p, c in files.items()):
        files.setdefault("src/main/java/com/example/SampleApplication.java", DEFAULT_APPLICATION)
    return files


def _value(record: dict[str, Any], key: str) -> Any:
    if key in _REF_FIELDS:
        ref = record.get(_REF_FIELDS[key])
        return ref.get("record_id") if isinstance(ref, dict) else None
    if key in ("candidates", "affected"):
        return sorted(r["record_id"] for r in record.get("candidate_target_refs" if key == "candidates" else
                                                           "affected_refs") or [])
    if key == "status":
        return record.get("resolution_status", record.get("value_resolution"))
    if key == "kind" and "code" in record:
        return "DIAGNOSTIC"
    if key == "kind" and "branch_id" in record:
        return "LEDGER_ITEM"
    return record.get(key)


def matches(expected: dict[str, Any], record: dict[str, Any]) -> bool:
    """Whether ``record`` satisfies ``expected`` (see the module docstring)."""
    for key, want in expected.items():
        if key in ("attributes", "match_keys"):
            have = record.get(key) or {}
            if not isinstance(want, dict) or any(have.get(k) != v for k, v in want.items()):
                return False
        elif key in ("candidates", "affected"):
            if _value(record, key) != sorted(want):
                return False
        elif _value(record, key) != want:
            return False
    return True


def nearest(expected: dict[str, Any], records: list[dict[str, Any]], shown: int = 3) -> str:
    """The records of ``expected``'s kind that come closest (most expected fields equal), each with the
    fields that differ — what a failing sample prints instead of every record of the kind."""
    kind = expected.get("kind")
    near = [r for r in records if _value(r, "kind") == kind]
    if not near:
        kinds = sorted({str(_value(r, "kind")) for r in records})
        return f"no record of kind {kind}; kinds written: {', '.join(kinds) or 'none'}"

    def differing(r: dict[str, Any]) -> list[str]:
        return [k for k, v in expected.items() if not matches({k: v}, r)]

    ranked = sorted(near, key=lambda r: (len(differing(r)), str(r.get("record_id"))))
    lines = []
    for r in ranked[:shown]:
        diff = {k: (r.get(k) if k in ("attributes", "match_keys") else _value(r, k)) for k in differing(r)}
        lines.append(f"{r.get('record_id')} differs in {json.dumps(diff, sort_keys=True, default=str)[:600]}")
    more = f" (and {len(near) - shown} more of that kind)" if len(near) > shown else ""
    return f"closest records of kind {kind}{more}: " + "; ".join(lines)


def package_records(out: Path) -> list[dict[str, Any]]:
    """Every entity, relation, binding, diagnostic and ledger item of the packages under ``out``."""
    records: list[dict[str, Any]] = []
    from diting.ir.writer import is_leftover
    for pkg in sorted(p for p in out.iterdir() if (p / "manifest.json").is_file() and not is_leftover(p.name)):
        for name in _PACKAGE_FILES:
            path = pkg / name
            if path.is_file():
                records.extend(json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line)
    return records


def bad_sample_path(rel: str) -> str | None:
    """Why a sample input path cannot be written inside the sample's repository, or None: it must
    be relative, use ``/``, stay inside (no ``..``), name no ``.git`` entry, hold no NUL."""
    if not rel or "\0" in rel or "\\" in rel or rel.startswith("/") or (len(rel) > 1 and rel[1] == ":"):
        return "not a relative path"
    parts = rel.split("/")
    if any(p in ("", ".", "..") for p in parts):
        return "empty, '.' or '..' path segments"
    if any(p.lower() == ".git" for p in parts):
        return "a .git entry"
    return None


def run_sample(rule: Rule, index: int, sample: Sample, rules_dirs: list[Path], workdir: Path) -> SampleResult:
    """Scan and check one sample; its packages are written in ``workdir`` (which it creates). A sample
    that cannot be built (a path outside the repository, a file where a directory must be) fails
    with the reason."""
    from diting.errors import UserError
    from diting.scan.pipeline import ScanOptions, scan_files

    result = SampleResult(rule.id, index, sample.form)
    files = sample_files(sample)
    bad = sorted((rel, why) for rel in files if (why := bad_sample_path(rel)))
    dirs = {rel.rsplit("/", i)[0] for rel in files for i in range(1, rel.count("/") + 1)}
    bad += sorted((rel, "a file where a directory must be") for rel in files if rel in dirs)
    if bad:
        result.failures.append("sample input paths refused: " + "; ".join(f"{r!r}: {w}" for r, w in bad))
        return result
    try:
        out = workdir / "out"
        scan_files({rel: content.encode("utf-8") for rel, content in files.items()},
                   ScanOptions(out=out, repo_id=f"samples/{rule.id}", quiet=True, jobs=1, rules_dirs=rules_dirs))
    except (UserError, OSError, ValueError) as exc:
        result.failures.append(f"the sample could not be built or scanned: {exc}")
        return result
    records = package_records(out)
    result.records = records
    for exp in sample.expected_records:
        if not any(matches(exp, r) for r in records):
            result.failures.append(f"expected {json.dumps(exp, sort_keys=True)}; {nearest(exp, records)}")
    for bad in sample.expect_none:
        hits = [r for r in records if matches(bad, r)]
        if hits:
            result.failures.append(f"expected no record like {json.dumps(bad, sort_keys=True)}; found "
                                   f"{json.dumps(hits[:3], sort_keys=True)[:2000]}")
    return result


def run_rule_samples(rules: list[Rule], rules_dirs: list[Path]) -> list[SampleResult]:
    """Run every sample of ``rules`` (each in its own temporary directory)."""
    out: list[SampleResult] = []
    with tempfile.TemporaryDirectory(prefix="diting-samples-") as tmp:
        for rule in rules:
            for i, sample in enumerate(rule.samples):
                out.append(run_sample(rule, i, sample, rules_dirs, Path(tmp) / f"{rule.id}-{i}"))
    return out
