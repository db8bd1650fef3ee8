"""The diff report: JSON (a shipped schema), a table, and Markdown for a pull-request comment."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from diting.diff.packages import CLASSES, compare, input_differences, load, rename_candidates

SCHEMA_VERSION = "0.1"


#: the change classes whose subject other services may depend on
_OUTWARD = {"CONTRACT_REMOVED", "CONTRACT_SIGNATURE_CHANGED", "TOPIC_PUBLISH_CHANGED", "TOPIC_SUBSCRIBE_CHANGED"}


def consumer_impact(con, service_id: str, changes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """For each removed or changed provided contract, and each changed send or subscription, the
    other services the graph (``cross_service_edges``) shows depending on its old urn:
    ``[{stable_id, urn, change, services, edges}]``."""
    out = []
    for c in changes:
        if c["class"] not in _OUTWARD or not isinstance(c["before"], dict):
            continue
        before = c["before"]
        urn = before.get("urn") or (before.get("target_ref") if isinstance(before.get("target_ref"), str) else None)
        if not urn:
            continue
        if before.get("kind") == "CONTRACT":  # who calls what this service provided
            where, params = "edge_kind IN ('RPC', 'HTTP') AND urn = ? AND dst_service = ?", [urn, service_id]
            side = "src_service"
        elif c["class"] == "TOPIC_SUBSCRIBE_CHANGED":  # who fed what this service listened to
            where, params = "edge_kind = 'MQ' AND urn = ? AND dst_service = ?", [urn, service_id]
            side = "src_service"
        else:  # who listens to what this service sent
            where, params = "edge_kind = 'MQ' AND urn = ? AND src_service = ?", [urn, service_id]
            side = "dst_service"
        rows = con.execute(f"SELECT {side} FROM cross_service_edges WHERE {where} AND {side} IS NOT NULL "
                           f"AND {side} <> ?", params + [service_id]).fetchall()
        out.append({"stable_id": c["stable_id"], "urn": urn, "change": c["class"],
                    "services": sorted({r[0] for r in rows}), "edges": len(rows)})
    return out


def diff(old_dir: Path, new_dir: Path, repo: Path | None = None, db: Path | None = None) -> dict[str, Any]:
    """The diff of two packages as a JSON-ready document (``diff-report.schema.json``):
    ``{schema_version, service_id, old, new, commit_relation, merge_bases, input_differences,
    summary, changes, rename_candidates[, impact]}``; ``impact`` (with a graph ``db``) lists the
    other services that depend on what was removed or changed. Raises :class:`UserError` for a path
    that is no package, two packages of different services, a repository or database that cannot
    be read."""
    from diting.errors import UserError
    if db is not None:  # a database that is no graph is refused before any work, changes or not
        from diting.graph.store import _check_schema, with_graph
        with_graph(db, lambda con: _check_schema(con, db))
    old, new = load(old_dir), load(new_dir)
    if old.manifest["service_id"] != new.manifest["service_id"]:
        raise UserError(f"the packages are of different services ({old.manifest['service_id']} and "
                        f"{new.manifest['service_id']}); a diff compares two packages of one service")
    relation, bases = "UNKNOWN", []
    if repo is not None:
        from diting.source.git import GitRepo
        relation, bases = GitRepo(repo).relation(old.manifest["commit_sha"], new.manifest["commit_sha"])
    try:
        changes = [c.record() for c in compare(old, new)]
    except (TypeError, KeyError, AttributeError, RecursionError) as exc:  # records of a re-signed package
        raise UserError(f"a record of {old_dir} or {new_dir} is malformed ({type(exc).__name__}); 'diting verify "
                        "--deep' names it") from None
    side = lambda p: {"scan_id": p.manifest["scan_id"], "commit_sha": p.manifest["commit_sha"],  # noqa: E731
                      "input_digest": p.manifest["input_digest"]}
    doc = {"schema_version": SCHEMA_VERSION, "service_id": new.manifest["service_id"], "old": side(old),
           "new": side(new), "commit_relation": relation, "merge_bases": bases,
           "input_differences": input_differences(old, new),
           "summary": dict(sorted(Counter(c["class"] for c in changes).items(), key=lambda kv: CLASSES.index(kv[0]))),
           "changes": changes, "rename_candidates": rename_candidates(old, new)}
    if db is not None:
        from diting.graph.store import with_graph
        doc["impact"] = with_graph(db, lambda con: consumer_impact(con, doc["service_id"], changes))
    return doc


def to_json(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def _short(value: Any) -> str:
    """One side of a change in a few words: a relation by its target and status, an entity by its
    urn or name, a binding by its value."""
    if value is None:
        return "—"
    if isinstance(value, dict):
        if isinstance(value.get("target_ref"), str) or "source_ref" in value:
            target = value.get("target_ref") if isinstance(value.get("target_ref"), str) else "?"
            return f"{target} ({value.get('resolution_status')})"
        if "config_key" in value:  # a binding: its key, value and how the value resolved
            return f"{value['config_key']} = {json.dumps(value.get('value'), ensure_ascii=False)} " \
                   f"({value.get('value_resolution')})"
        for key in ("urn", "value", "name", "resolution_status"):
            if value.get(key) is not None:
                return str(value[key])
    return _clip(json.dumps(value, sort_keys=True, ensure_ascii=False))


def _clip(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _leaves(value: Any, path: str = "") -> dict[str, Any]:
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(_leaves(v, f"{path}.{k}" if path else str(k)))
        return out
    return {path: value}


def describe(change: dict[str, Any], limit: int = 3) -> str:
    """What a change row changed, in a few words: for a record on both sides, the fields whose values
    differ (``path: before → after``, at most ``limit``); else the record that came or went."""
    before, after = change["before"], change["after"]
    if isinstance(before, dict) and isinstance(after, dict):
        a, b = _leaves(before), _leaves(after)
        diffs = [k for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
        if not diffs:
            return f"{_short(after)} (unchanged; its evidence moved)" if change["class"] == "EVIDENCE_MOVED" \
                else _short(after)
        shown = [f"{k}: {_delta(a.get(k), b.get(k))}" for k in diffs[:limit]]
        return "; ".join(shown) + (f"; +{len(diffs) - limit} more" if len(diffs) > limit else "")
    return f"{_short(before)} → {_short(after)}"


def _delta(a: Any, b: Any, width: int = 60) -> str:
    """Two values as ``before → after``, showing where they differ: for lists the elements gone and
    come, for long text the part around the first difference."""
    if isinstance(a, list) and isinstance(b, list):
        gone = [x for x in a if x not in b]
        came = [x for x in b if x not in a]
        if gone or came:
            return ", ".join(p for p in (f"- {_clip(json.dumps(gone, ensure_ascii=False), width)}" if gone else "",
                                          f"+ {_clip(json.dumps(came, ensure_ascii=False), width)}" if came else "")
                             if p)
        return f"order {_clip(json.dumps(a, ensure_ascii=False), width)} → {_clip(json.dumps(b, ensure_ascii=False), width)}"
    ta, tb = json.dumps(a, ensure_ascii=False), json.dumps(b, ensure_ascii=False)
    if len(ta) <= width and len(tb) <= width:
        return f"{ta} → {tb}"
    start = next((i for i, (x, y) in enumerate(zip(ta, tb)) if x != y), min(len(ta), len(tb)))
    cut = max(0, start - width // 3)
    lead = "…" if cut else ""
    return f"{lead}{_clip(ta[cut:], width)} → {lead}{_clip(tb[cut:], width)}"


def _impacts(doc: dict[str, Any]) -> list[tuple[str, str, list[str]]]:
    """Impact lines, one per (change class, urn), services merged."""
    merged: dict[tuple[str, str], set[str]] = {}
    for i in doc.get("impact") or []:
        merged.setdefault((i["change"], i["urn"]), set()).update(i["services"])
    return [(c, u, sorted(s)) for (c, u), s in sorted(merged.items())]


def to_markdown(doc: dict[str, Any]) -> str:
    """A pull-request comment: a headline, counts by class, then the changes grouped by class. Text
    from the scanned code is escaped (:func:`diting.graph.export.markdown_text`)."""
    from diting.graph.export import markdown_code, markdown_text as text

    def code(value: object) -> str:  # code spans in headings and list items, never in a table here
        return markdown_code(value, in_table=False)
    lines = [f"### diting diff — `{code(doc['service_id'])}`", "",
             f"`{doc['old']['commit_sha'][:12]}` → `{doc['new']['commit_sha'][:12]}` "
             f"(commits: **{doc['commit_relation']}**)", ""]
    if not doc["changes"]:
        lines.append("No change in what the code provably does.")
    else:
        lines += ["| change | count |", "|---|---|"] + [f"| {k} | {v} |" for k, v in doc["summary"].items()] + [""]
        for cls in doc["summary"]:
            lines += [f"<details><summary>{cls} ({doc['summary'][cls]})</summary>", ""]
            for c in (c for c in doc["changes"] if c["class"] == cls):
                lines.append(f"- `{code(c['stable_id'])}`: {text(describe(c))}")
            lines += ["", "</details>", ""]
    if doc["rename_candidates"]:
        lines += ["**Rename candidates** (a removal plus an addition that may be one thing renamed):", ""]
        lines += [f"- {r['kind']} `{code(r['before'])}` → `{code(r['after'])}` ({text(r['basis'])})"
                  for r in doc["rename_candidates"]]
        lines.append("")
    if doc.get("impact"):
        lines += ["**Other services depending on what changed:**", ""]
        lines += [f"- {c} `{code(u)}`: " + (text(", ".join(s)) or "none in the graph") for c, u, s in _impacts(doc)]
        lines.append("")
    if doc["input_differences"]:
        lines.append("Analysis inputs that differ: " + ", ".join(f"`{code(k)}`" for k in doc["input_differences"]))
    return "\n".join(lines).rstrip() + "\n"


def range_markdown(doc: dict[str, Any]) -> str:
    """``A..B`` as one comment: an overview of every service, then each changed service's section."""
    from diting.graph.export import markdown_code as code
    lines = [f"## diting diff `{code(doc['range'])}`", "",
             f"`{doc['old_commit'][:12]}` → `{doc['new_commit'][:12]}`", "",
             "| service | changes |", "|---|---:|"]
    lines += [f"| `{code(r['service_id'])}` | {len(r['changes'])} |" for r in doc["services"]]
    for label, ids in (("only in the old commit", doc["only_old"]), ("only in the new commit", doc["only_new"])):
        if ids:
            lines += ["", f"{label.capitalize()}: " + ", ".join(f"`{code(i)}`" for i in ids)]
    lines.append("")
    for r in doc["services"]:
        if r["changes"] or r["rename_candidates"]:
            lines.append(to_markdown(r))
    return "\n".join(lines).rstrip() + "\n"


def to_table(doc: dict[str, Any]) -> str:
    """A terminal table of the changes, then the rename candidates."""
    from diting.demo import format_table
    from diting.graph.export import printable
    out = [f"{doc['service_id']}: {doc['old']['commit_sha'][:12]} -> {doc['new']['commit_sha'][:12]} "
           f"(commits: {doc['commit_relation']}); {len(doc['changes'])} change(s)"]
    rows = [[c["class"], printable(_clip(c["stable_id"], 120)), printable(describe(c))] for c in doc["changes"]]
    if rows:
        out += format_table(["class", "stable_id", "what changed"], rows, indent="  ")
    for r in doc["rename_candidates"]:
        out.append(f"  rename candidate {r['kind']}: {r['before']} -> {r['after']} ({r['basis']})")
    for c, u, svcs in _impacts(doc):
        out.append(f"  depends on it: {c} {printable(u)}: {printable(', '.join(svcs)) or 'none in the graph'}")
    if doc["input_differences"]:
        out.append("  analysis inputs that differ: " + ", ".join(doc["input_differences"]))
    return "\n".join(out) + "\n"
