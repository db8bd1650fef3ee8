"""The diff report: JSON (a shipped schema), a table, and Markdown for a pull-request comment."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from collections.abc import Iterable
from typing import Any

from diting.diff.packages import CLASSES, compare, input_differences, load, rename_candidates

SCHEMA_VERSION = "0.1"


#: the change classes whose subject other services may depend on
_OUTWARD = {"CONTRACT_REMOVED", "CONTRACT_SIGNATURE_CHANGED", "TOPIC_PUBLISH_CHANGED", "TOPIC_SUBSCRIBE_CHANGED"}


def consumer_impact(con, service_id: str, changes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """For each removed or changed provided contract, and each changed send or subscription, the
    other services the graph (``cross_service_edges``) shows depending on its old urn:
    ``[{stable_id, urn, change, services, edges}]``. A graph that already holds the new packages
    shows them by an edge of that urn whose side of this service is unknown (the call or the message
    that no longer finds it); a graph of the old ones, by an edge to or from this service."""
    out = []
    for c in changes:
        if c["class"] not in _OUTWARD or not isinstance(c["before"], dict):
            continue
        before = c["before"]
        urn = before.get("urn") or (before.get("target_ref") if isinstance(before.get("target_ref"), str) else None)
        if not urn:
            continue
        if before.get("kind") == "CONTRACT":  # who calls what this service provided
            kinds, side, mine = "('RPC', 'HTTP')", "src_service", "dst_service"
        elif c["class"] == "TOPIC_SUBSCRIBE_CHANGED":  # who fed what this service listened to
            kinds, side, mine = "('MQ')", "src_service", "dst_service"
        else:  # who listens to what this service sent
            kinds, side, mine = "('MQ')", "dst_service", "src_service"
        where = (f"edge_kind IN {kinds} AND urn = ? AND ({mine} = ? OR ({mine} IS NULL AND "
                 "resolution_status <> 'RESOLVED'))")
        params = [urn, service_id]
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
        from diting.graph.store import check_schema, with_graph
        with_graph(db, lambda con: check_schema(con, db))
    old, new = load(old_dir), load(new_dir)
    if old.manifest["service_id"] != new.manifest["service_id"]:
        raise UserError(f"the packages are of different services ({old.manifest['service_id']} and "
                        f"{new.manifest['service_id']}); a diff compares two packages of one service")
    relation, bases = "UNKNOWN", []
    if repo is None and old.manifest["commit_sha"] == new.manifest["commit_sha"]:
        relation, bases = "EXACT", [new.manifest["commit_sha"]]  # one commit: no repository needed to say so
    elif repo is not None:
        from diting.source.git import GitRepo
        relation, bases = GitRepo(repo).relation(old.manifest["commit_sha"], new.manifest["commit_sha"])
    try:
        found = compare(old, new)
        changes = [c.record() for c in found]
    except (TypeError, KeyError, AttributeError, RecursionError) as exc:  # records of a re-signed package
        raise UserError(f"a record of {old_dir} or {new_dir} is malformed ({type(exc).__name__}); 'diting verify "
                        "--deep' names it") from None
    side = lambda p: {"scan_id": p.manifest["scan_id"], "commit_sha": p.manifest["commit_sha"],  # noqa: E731
                      "input_digest": p.manifest["input_digest"]}
    doc = {"schema_version": SCHEMA_VERSION, "service_id": new.manifest["service_id"], "old": side(old),
           "new": side(new), "commit_relation": relation, "merge_bases": bases,
           "input_differences": input_differences(old, new),
           "summary": counts(c["class"] for c in changes),
           "folded_summary": counts(f["class"] for c in changes for f in c["folded"]),
           "changes": changes, "omitted": {}, "rename_candidates": rename_candidates(old, new)}
    if db is not None:
        from diting.graph.store import with_graph
        doc["impact"] = with_graph(db, lambda con: consumer_impact(con, doc["service_id"], changes))
    return doc


def counts(classes: Iterable[str]) -> dict[str, int]:
    """``{class: count}`` in the order of :data:`CLASSES`."""
    return dict(sorted(Counter(classes).items(), key=lambda kv: CLASSES.index(kv[0])))


#: counted, but listed only when asked for (``--all``, or ``--class``)
HIDDEN = ("OTHER", "EVIDENCE_MOVED")


def check_classes(classes: Iterable[str]) -> list[str]:
    """The change classes named (any case), in :data:`CLASSES` order. Raises :class:`UserError`
    for a name that is no class, with the closest ones."""
    from diting.errors import UserError
    out = []
    for c in classes:
        if c.upper() not in CLASSES:
            raise UserError(f"--class {c!r}: no such change class" + did_you_mean(c.upper(), CLASSES) +
                            " (classes: " + ", ".join(CLASSES) + ")")
        out.append(c.upper())
    return sorted(set(out), key=CLASSES.index)


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """``"; did you mean X?"`` (or ``X or Y``) for the close matches of ``name`` among ``known``, else ``""``."""
    import difflib
    near = difflib.get_close_matches(name, sorted(set(known)), n=3, cutoff=0.6)
    return f"; did you mean {' or '.join(near)}?" if near else ""


def narrow(doc: dict[str, Any], classes: list[str] | None = None, show_all: bool = False) -> dict[str, Any]:
    """The report listing only some changes: those of ``classes`` when given, else all but
    :data:`HIDDEN` (unless ``show_all``). ``summary``, ``folded_summary`` and ``impact`` stay complete;
    ``omitted`` counts by class what the listing leaves out."""
    wanted = set(classes) if classes else set(CLASSES) - (set() if show_all else set(HIDDEN))
    return dict(doc, changes=[c for c in doc["changes"] if c["class"] in wanted],
                omitted=counts(c["class"] for c in doc["changes"] if c["class"] not in wanted))


def narrow_range(doc: dict[str, Any], classes: list[str] | None = None, services: list[str] | None = None,
                 show_all: bool = False) -> dict[str, Any]:
    """A range report narrowed to ``services`` (by service_id) and by :func:`narrow`; the services
    left out are named in ``omitted_services``. Raises :class:`UserError` for a service the range
    does not have (with the close names)."""
    from diting.errors import UserError
    known = [r["service_id"] for r in doc["services"]] + doc["only_old"] + doc["only_new"]
    for s in services or []:
        if s not in known:
            raise UserError(f"--service {s!r}: no such service in {doc['range']}" + did_you_mean(s, known))
    keep = [r for r in doc["services"] if not services or r["service_id"] in services]
    return dict(doc, services=[narrow(r, classes, show_all) for r in keep],
                omitted_services=sorted({r["service_id"] for r in doc["services"]} - {r["service_id"] for r in keep}),
                only_old=[s for s in doc["only_old"] if not services or s in services],
                only_new=[s for s in doc["only_new"] if not services or s in services])


def to_json(doc: dict[str, Any]) -> str:
    from diting.safe_text import json_text
    return json_text(doc, indent=1, sort_keys=True) + "\n"


def commits_text(doc: dict[str, Any]) -> str:
    """How the two commits relate, in words: ``same commit`` for EXACT; UNKNOWN says what would tell."""
    relation = doc["commit_relation"]
    if relation == "EXACT":
        return "same commit"
    return relation + (" (--repo relates them)" if relation == "UNKNOWN" and not doc["merge_bases"] else "")


def left_out(omitted: dict[str, int], folded: int, services: int = 0) -> str:
    """The closing line of a listing: what it leaves out, by class, and how many records were
    folded into the changes they belong to; ``""`` when nothing is left out."""
    parts = []
    if services:
        parts.append(f"{services} service{'s' if services != 1 else ''} with no listed change")
    if omitted:
        parts.append(", ".join(f"{k} {v}" for k, v in omitted.items()) + " (--all or --class lists them)")
    if folded:
        parts.append(f"{folded} record{'s' if folded != 1 else ''} folded into the changes they belong to "
                     "(--format json has them)")
    return ("Not listed: " + "; ".join(parts) + ".") if parts else ""


def _sum(maps: Iterable[dict[str, int]]) -> dict[str, int]:
    total: Counter[str] = Counter()
    for m in maps:
        total.update(m)
    return counts(total.elements())


def _folds(change: dict[str, Any]) -> str:
    """`` (folds 1 CONTRACT_ADDED, 1 ENTRY_CHANGED)`` for a row with folded rows, else ``""``."""
    if not change.get("folded"):
        return ""
    return " (folds " + ", ".join(f"{n} {k}" for k, n in counts(f["class"] for f in change["folded"]).items()) + ")"


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


#: the fields that change with any change of a record: listed after the others
_CONSEQUENT = {"stable_id", "implementation_ref", "evidence_refs", "diagnostic_refs"}


def describe(change: dict[str, Any], limit: int = 3) -> str:
    """What a change row changed, in a few words: for a record on both sides, the fields whose values
    differ (``path: before → after``, at most ``limit``; its new stable_id, revision and evidence only
    when nothing else differs); else the record that came or went."""
    before, after = change["before"], change["after"]
    if isinstance(before, dict) and isinstance(after, dict):
        a, b = _leaves(before), _leaves(after)
        # what the change is about first; its new name and revision (which follow from it) last
        diffs = sorted((k for k in set(a) | set(b) if a.get(k) != b.get(k)),
                       key=lambda k: (k.split(".")[0] in _CONSEQUENT, k))
        if not diffs:
            return f"{_short(after)} (unchanged; its evidence moved)" if change["class"] == "EVIDENCE_MOVED" \
                else _short(after)
        if diffs == ["implementation_ref.revision_id"]:  # the same record over other code
            return f"its code changed ({_clip(str(a[diffs[0]]), 16)} → {_clip(str(b[diffs[0]]), 16)})"
        own = [k for k in diffs if k.split(".")[0] not in _CONSEQUENT] or diffs
        shown = [f"{k}: {_delta(a.get(k), b.get(k))}" for k in own[:limit]]
        more = len(diffs) - len(shown)
        return "; ".join(shown) + (f"; +{more} more" if more else "")
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


#: a class with more listed rows than this is folded away in a <details> block
_SHOWN = 5


def to_markdown(doc: dict[str, Any], alone: bool = True) -> str:
    """A pull-request comment (of a report :func:`narrow` has narrowed): a headline, the commits, the
    listed changes by class (a long class in a ``<details>`` block), each with what it folds, then the
    line of what is left out. ``alone=False`` (a section of :func:`range_markdown`): no commits line
    and no closing line. Text from the scanned code is escaped (:func:`diting.graph.export.markdown_text`)."""
    from diting.safe_text import markdown_code, markdown_text as text

    def code(value: object) -> str:  # code spans in headings and list items, never in a table here
        return markdown_code(value, in_table=False)
    lines = [f"### diting diff — `{code(doc['service_id'])}`", ""]
    if alone:
        lines += [f"`{doc['old']['commit_sha'][:12]}` → `{doc['new']['commit_sha'][:12]}` "
                  f"(commits: **{commits_text(doc)}**)", ""]
    if not doc["changes"]:
        lines += ["No change in what the code provably does." if not doc["omitted"] else "No change listed.", ""]
    listed = counts(c["class"] for c in doc["changes"])
    for cls, n in listed.items():
        items = [f"- `{code(c['stable_id'])}`: {text(describe(c))}{_folds(c)}"
                 for c in doc["changes"] if c["class"] == cls]
        if n <= _SHOWN:
            lines += [f"**{cls}** ({n})", ""] + items + [""]
        else:
            lines += [f"<details><summary>{cls} ({n})</summary>", ""] + items + ["", "</details>", ""]
    if doc["rename_candidates"]:
        lines += ["**Rename candidates** (a removal plus an addition that may be one thing renamed):", ""]
        lines += [f"- {r['kind']} `{code(r['before'])}` → `{code(r['after'])}` ({text(r['basis'])})"
                  for r in doc["rename_candidates"]]
        lines.append("")
    if doc.get("impact"):
        lines += ["**Other services depending on what changed:**", ""]
        lines += [f"- {c} `{code(u)}`: " + (text(", ".join(s)) or "none in the graph") for c, u, s in _impacts(doc)]
        lines.append("")
    if _inputs(doc):
        lines += ["Analysis inputs that differ: " + ", ".join(f"`{code(k)}`" for k in _inputs(doc)), ""]
    if alone:
        lines.append(left_out(doc["omitted"], sum(doc["folded_summary"].values())))
    return "\n".join(lines).rstrip() + "\n"


def _inputs(doc: dict[str, Any]) -> list[str]:
    """The analysis inputs that differ besides the commit (which the commits line shows)."""
    return [k for k in doc["input_differences"] if k != "commit_sha"]


def _shown(r: dict[str, Any]) -> bool:
    return bool(r["changes"] or r["rename_candidates"])


def range_markdown(doc: dict[str, Any]) -> str:
    """``A..B`` (narrowed by :func:`narrow_range`) as one comment: the commits, a table of the services
    with listed changes, each one's section, and the line of what is left out over all services."""
    from diting.safe_text import markdown_code as code
    relation = next((commits_text(r) for r in doc["services"]), "")
    lines = [f"## diting diff `{code(doc['range'])}`", "",
             f"`{doc['old_commit'][:12]}` → `{doc['new_commit'][:12]}`" + (f" (commits: **{relation}**)"
                                                                          if relation else ""), ""]
    shown = [r for r in doc["services"] if _shown(r)]
    if shown:
        lines += ["| service | listed changes |", "|---|---:|"]
        lines += [f"| `{code(r['service_id'])}` | {len(r['changes'])} |" for r in shown]
    elif not doc["only_old"] and not doc["only_new"]:
        lines.append("No change listed.")
    for label, ids in (("only in the old commit", doc["only_old"]), ("only in the new commit", doc["only_new"])):
        if ids:
            lines += ["", f"{label.capitalize()}: " + ", ".join(f"`{code(i)}`" for i in ids)]
    lines.append("")
    for r in shown:
        lines.append(to_markdown(r, alone=False))
    lines.append(left_out(_sum(r["omitted"] for r in doc["services"]),
                          sum(sum(r["folded_summary"].values()) for r in doc["services"]),
                          len(doc["services"]) - len(shown)))
    return "\n".join(lines).rstrip() + "\n"


def to_table(doc: dict[str, Any], alone: bool = True) -> str:
    """A terminal table of the listed changes (of a report :func:`narrow` has narrowed), then the
    rename candidates, the dependents and, ``alone``, the line of what is left out."""
    from diting.demo import format_table
    from diting.safe_text import printable
    out = [f"{doc['service_id']}: {doc['old']['commit_sha'][:12]} -> {doc['new']['commit_sha'][:12]} "
           f"(commits: {commits_text(doc)}); {len(doc['changes'])} change(s) listed"]
    rows = [[c["class"], printable(_clip(c["stable_id"], 120)), printable(describe(c) + _folds(c))]
            for c in doc["changes"]]
    if rows:
        out += format_table(["class", "stable_id", "what changed"], rows, indent="  ")
    for r in doc["rename_candidates"]:
        out.append(f"  rename candidate {r['kind']}: {r['before']} -> {r['after']} ({r['basis']})")
    for c, u, svcs in _impacts(doc):
        out.append(f"  depends on it: {c} {printable(u)}: {printable(', '.join(svcs)) or 'none in the graph'}")
    if _inputs(doc):
        out.append("  analysis inputs that differ: " + ", ".join(_inputs(doc)))
    tail = left_out(doc["omitted"], sum(doc["folded_summary"].values())) if alone else ""
    return "\n".join(out + ([f"  {tail}"] if tail else [])) + "\n"


def range_table(doc: dict[str, Any]) -> str:
    """``A..B`` (narrowed by :func:`narrow_range`) for a terminal: each service with listed changes as
    :func:`to_table`, the services present at one commit only, and the line of what is left out."""
    shown = [r for r in doc["services"] if _shown(r)]
    out = [to_table(r, alone=False) for r in shown]
    for label, ids in (("only in the old commit", doc["only_old"]), ("only in the new commit", doc["only_new"])):
        if ids:
            out.append(f"{label}: {', '.join(ids)}\n")
    tail = left_out(_sum(r["omitted"] for r in doc["services"]),
                    sum(sum(r["folded_summary"].values()) for r in doc["services"]), len(doc["services"]) - len(shown))
    return "".join(out) + (tail + "\n" if tail else "") if out or tail else "No change listed.\n"
