"""The diff report: JSON (a shipped schema), a table, and Markdown for a pull-request comment."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from diting.diff.packages import CLASSES, compare, input_differences, load, rename_candidates

SCHEMA_VERSION = "0.1"


def diff(old_dir: Path, new_dir: Path, repo: Path | None = None) -> dict[str, Any]:
    """The diff of two packages as a JSON-ready document:
    ``{schema_version, service_id, old, new, commit_relation, merge_bases, input_differences,
    summary, changes, rename_candidates}``. Raises :class:`UserError` for a path that is no package,
    two packages of different services, or a repository that cannot be read."""
    from diting.errors import UserError
    old, new = load(old_dir), load(new_dir)
    if old.manifest["service_id"] != new.manifest["service_id"]:
        raise UserError(f"the packages are of different services ({old.manifest['service_id']} and "
                        f"{new.manifest['service_id']}); a diff compares two packages of one service")
    relation, bases = "UNKNOWN", []
    if repo is not None:
        from diting.source.git import GitRepo
        relation, bases = GitRepo(repo).relation(old.manifest["commit_sha"], new.manifest["commit_sha"])
    changes = [c.record() for c in compare(old, new)]
    side = lambda p: {"scan_id": p.manifest["scan_id"], "commit_sha": p.manifest["commit_sha"],  # noqa: E731
                      "input_digest": p.manifest["input_digest"]}
    return {"schema_version": SCHEMA_VERSION, "service_id": new.manifest["service_id"], "old": side(old),
            "new": side(new), "commit_relation": relation, "merge_bases": bases,
            "input_differences": input_differences(old, new),
            "summary": dict(sorted(Counter(c["class"] for c in changes).items(), key=lambda kv: CLASSES.index(kv[0]))),
            "changes": changes, "rename_candidates": rename_candidates(old, new)}


def to_json(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def _short(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, dict):
        for key in ("urn", "name", "value", "resolution_status"):
            if value.get(key) is not None:
                return str(value[key])
    return json.dumps(value, sort_keys=True, ensure_ascii=False)[:80]


def to_markdown(doc: dict[str, Any]) -> str:
    """A pull-request comment: a headline, counts by class, then the changes grouped by class."""
    lines = [f"### diting diff — `{doc['service_id']}`", "",
             f"`{doc['old']['commit_sha'][:12]}` → `{doc['new']['commit_sha'][:12]}` "
             f"(commits: **{doc['commit_relation']}**)", ""]
    if not doc["changes"]:
        lines.append("No change in what the code provably does.")
    else:
        lines += ["| change | count |", "|---|---|"] + [f"| {k} | {v} |" for k, v in doc["summary"].items()] + [""]
        for cls in doc["summary"]:
            lines += [f"<details><summary>{cls} ({doc['summary'][cls]})</summary>", ""]
            for c in (c for c in doc["changes"] if c["class"] == cls):
                lines.append(f"- `{c['stable_id']}`: {_short(c['before'])} → {_short(c['after'])}")
            lines += ["", "</details>", ""]
    if doc["rename_candidates"]:
        lines += ["**Rename candidates** (a removal plus an addition that may be one thing renamed):", ""]
        lines += [f"- {r['kind']} `{r['before']}` → `{r['after']}` ({r['basis']})" for r in doc["rename_candidates"]]
        lines.append("")
    if doc["input_differences"]:
        lines.append("Analysis inputs that differ: " + ", ".join(f"`{k}`" for k in doc["input_differences"]))
    return "\n".join(lines).rstrip() + "\n"


def to_table(doc: dict[str, Any]) -> str:
    """A terminal table of the changes, then the rename candidates."""
    from diting.demo import format_table
    from diting.graph.export import printable
    out = [f"{doc['service_id']}: {doc['old']['commit_sha'][:12]} -> {doc['new']['commit_sha'][:12]} "
           f"(commits: {doc['commit_relation']}); {len(doc['changes'])} change(s)"]
    rows = [[c["class"], printable(c["stable_id"]), printable(_short(c["before"])), printable(_short(c["after"]))]
            for c in doc["changes"]]
    if rows:
        out += format_table(["class", "stable_id", "before", "after"], rows, indent="  ")
    for r in doc["rename_candidates"]:
        out.append(f"  rename candidate {r['kind']}: {r['before']} -> {r['after']} ({r['basis']})")
    if doc["input_differences"]:
        out.append("  analysis inputs that differ: " + ", ".join(doc["input_differences"]))
    return "\n".join(out) + "\n"
