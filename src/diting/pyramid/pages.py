"""The pyramid as files: ``index.md``/``index.json`` and one ``services/{service}.md``/``.json`` per
service package, with its profile, its entry cards (and the rules they cite) and its flows (each with
a Mermaid sequence diagram). Equal pyramids give equal bytes."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from diting.safe_text import json_text, markdown_code, markdown_text, markdown_with_code
from diting.pyramid.templates import templates_table


def _dump(value: Any) -> str:
    return json_text(value, indent=1, sort_keys=True) + "\n"


_md = markdown_text
_code = markdown_code


def _cites(s: dict[str, Any], names: dict[str, str], limit: int = 3) -> str:
    """The records a statement cites, by name (their record ids are in the JSON)."""
    ids = s["source_ref_ids"]
    shown = ", ".join(f"`{_code(names.get(i, i), in_table=False)}`" for i in ids[:limit])
    more = f" +{len(ids) - limit} more" if len(ids) > limit else ""
    return f"<sub>cites {shown}{more}</sub>"


def file_name(service_id: str, label: str) -> str:
    """``service[+label]`` made safe as a file name; a name that needed changes carries a hash."""
    raw = service_id + (f"+{label}" if label else "")

    def clean(text: str) -> str:
        return "".join(ch if ch.isalnum() or ch in "._-@" else "_" for ch in text)
    # '+' only ever separates the label: a service id holding one is changed (and hashed)
    safe = (clean(service_id) + (f"+{clean(label)}" if label else "")).lstrip(".") or "_"
    if safe != raw or len(safe) > 100:  # changed or cut: the hash of the full name keeps names apart
        safe = safe[:100] + "-" + hashlib.sha256(raw.encode("utf-8")).hexdigest()[:12]
    return safe


def _statements(stmts: list[dict[str, Any]], names: dict[str, str]) -> list[str]:
    return [f"- **{s['role']}** {markdown_with_code(s['text'])} {_cites(s, names)}" for s in stmts]


def _card_md(card: dict[str, Any], names: dict[str, str]) -> list[str]:
    out = [f"### {_md(card['entry_kind'])} `{_code(card['urn'], in_table=False)}`", ""]
    out.append(f"Card `{_code(card['card_id'], in_table=False)}` — {'complete' if card['complete'] else '**incomplete**'}; ledger: "
               f"{len(card['ledger_mapped'])} mapped, {sum(len(v) for v in card['ledger_excluded'].values())} "
               f"excluded, {len(card['ledger_unknown'])} unknown.")
    out.append("")
    order = ["TRIGGER", "INPUT", "CONDITION", "ACTION", "RESULT", "FAILURE", "DEPENDENCY"]
    out += _statements(sorted(card["statements"], key=lambda s: order.index(s["role"])), names)
    lists = [("reads", card["db_reads"]), ("writes", card["db_writes"]), ("caches", card["cache_keys"]),
             ("calls", card["downstream_calls"]), ("publishes", card["topics_out"]),
             ("config switches", card["config_switches"])]
    shown = [f"{k}: " + ", ".join(f"`{_code(names.get(x, x), in_table=False)}`" for x in v) for k, v in lists if v]
    if shown:
        out += ["", "; ".join(shown) + "."]
    if card["unresolved"]:
        out += ["", "Unresolved:"]
        out += [f"- `{_code(u['code'])}` `{_code(names.get(u['target'], u['target']), in_table=False)}`: "
                f"{_md(u['reason'])}"
                for u in card["unresolved"]]
    out.append("")
    return out


def _profile_md(p: dict[str, Any], names: dict[str, str]) -> list[str]:
    out = [f"## Profile — {'complete' if p['complete'] else 'with gaps'}", ""]
    out += _statements(p["statements"], names)
    out.append("")
    rows = [("entries (a main method included)", len(p["entries"])), ("contracts exposed", len(p["contracts_exposed"])),
            ("contracts consumed", len(p["contracts_consumed"])), ("topics in", len(p["topics_in"])),
            ("topics out", len(p["topics_out"])), ("tables written", len(p["tables_written"])),
            ("tables read", len(p["tables_read"])), ("sole writer of", len(p["sole_writer_of"])),
            ("sharded tables", len(p["sharded_tables"])), ("config keys", len(p["config_keys"])),
            ("cache prefixes", len(p["cache_prefixes"]))]
    rows += [(f"{d.lower()} boundaries ({what})", sum(1 for b in p["boundaries"] if b["direction"] == d))
             for d, what in (("INBOUND", "who depends on it"), ("OUTBOUND", "what it depends on"))]
    out += ["| fact | count |", "|---|---:|"] + [f"| {k} | {v} |" for k, v in rows] + [""]
    inbound: dict[tuple[str, str], set[str]] = {}
    for b in p["boundaries"]:
        if b["direction"] == "INBOUND":
            who = (b["service_id"] or "nobody") + ("" if b["resolution_status"] == "RESOLVED"
                                                   else f" ({b['resolution_status']})")
            inbound.setdefault((b["edge_kind"], b["subject"]), set()).add(who)
    if inbound:
        out += ["| depended on | kind | by |", "|---|---|---|"]
        out += [f"| `{_code(names.get(subject, subject))}` | {kind} | {_md(', '.join(sorted(who)))} |"
                for (kind, subject), who in sorted(inbound.items())] + [""]
    if p["contracts_consumed"]:
        out += ["| consumed contract | status | providers |", "|---|---|---|"]
        out += [f"| `{_code(c['urn'])}` | {c['resolution_status']} | {_md(', '.join(c['providers']) or '-')} |"
                for c in p["contracts_consumed"]] + [""]
    if p["sharded_tables"]:
        out += ["| sharded table | datasource | shard key | status |", "|---|---|---|---|"]
        out += [f"| `{_code(t['logical_table'])}` | {_md(t['datasource'] or '?')} | "
                f"{_md(t['confirmed_shard_key'] or ', '.join(t['candidate_shard_keys']) or '-')} | "
                f"{t['shard_key_status']} |" for t in p["sharded_tables"]] + [""]
    if p["config_keys"]:
        out += ["Config keys: " + ", ".join(f"`{_code(c['config_key'], in_table=False)}` ({c['value_resolution']})"
                                           for c in p["config_keys"]), ""]
    if p["gaps"]:
        out += ["Gaps:"] + [f"- `{_code(g['code'], in_table=False)}` {_md(g['reason'])}" for g in p["gaps"]] + [""]
    return out


def _flow_md(flow: dict[str, Any], steps: list[dict[str, Any]], names: dict[str, str]) -> list[str]:
    terminals: dict[str, int] = {}
    for s in steps:
        if s["terminal"]:
            terminals[s["terminal"]] = terminals.get(s["terminal"], 0) + 1
    root = flow["root_entry_ref"]["record_id"]
    out = [f"### Flow from `{_code(names.get(root, root), in_table=False)}`", "",
           f"`{_code(flow['flow_id'], in_table=False)}` — weakest hop **{flow['weakest_status']}**, {flow['hop_count']} service "
           f"hop(s), {flow['step_count']} step(s)" + (", **truncated**" if flow["truncated"] else "") + "; terminals: " +
           (", ".join(f"{k} {v}" for k, v in sorted(terminals.items())) or "none") + ".", "",
           "```mermaid", flow["mermaid"].rstrip("\n"), "```", ""]
    return out


def write_pages(p, out: Path) -> None:
    """Write every page of the pyramid ``p`` (:class:`diting.pyramid.build.Pyramid`) into ``out``."""
    names = p.names
    rules = {r["rule_id"]: r for r in p.rules}
    svc_dir = out / "services"
    svc_dir.mkdir()
    steps_of: dict[str, list[dict[str, Any]]] = {}
    for s in p.steps:
        steps_of.setdefault(s["flow_id"], []).append(s)
    index_rows = []
    for prof in p.profiles:
        key = (prof["service_id"], prof["label"])
        cards = [c for c in p.cards if (c["service_id"], c["label"]) == key]
        flows = [f for f in p.flows if (f["root_service_id"], f["label"]) == key]
        cited = sorted({r for c in cards for r in c["rule_ref_ids"]})
        name = file_name(*key)
        doc = {"profile": prof, "entry_cards": cards, "business_rules": [rules[r] for r in cited if r in rules],
               "flows": [dict(f, steps=steps_of.get(f["flow_id"], [])) for f in flows]}
        (svc_dir / f"{name}.json").write_text(_dump(doc), encoding="utf-8")
        title = prof["service_id"] + (f" [{prof['label']}]" if prof["label"] else "")
        md = [f"# {_md(title)}", "", f"Package `{_code(prof['scan_id'], in_table=False)}`, scope "
              f"`{_code(prof['implementation_scope'], in_table=False)}`. "
              "Every sentence below is rendered from a template (see the index) and cites the records it is built "
              "on; nothing is inferred beyond them.", ""]
        md += _profile_md(prof, names)
        md += [f"## Entry cards ({len(cards)})", ""]
        for c in cards:
            md += _card_md(c, names)
        # a flow with a hop: a call or a message to another entry (of this service or another), shown or not followed
        hopping = [f for f in flows if any(s["parent_step_id"] and s["terminal"] not in ("REJECTED", "MANUAL_HANDOFF")
                                           for s in steps_of.get(f["flow_id"], []))]
        alone = [f for f in flows if f not in hopping]
        md += [f"## Flows ({len(flows)}: {len(hopping)} with a call or message to another entry)", ""]
        for f in hopping:
            md += _flow_md(f, steps_of.get(f["flow_id"], []), names)
        if alone:
            md += ["Flows with no call or message to another entry:", "", "| entry | steps | terminals |",
                   "|---|---:|---|"]
            for f in alone:
                root = f["root_entry_ref"]["record_id"]
                terms = sorted(s["terminal"] for s in steps_of.get(f["flow_id"], []) if s["terminal"])
                md.append(f"| `{_code(names.get(root, root))}` | {f['step_count']} | {', '.join(terms) or '-'} |")
            md.append("")
        (svc_dir / f"{name}.md").write_text("\n".join(md).rstrip("\n") + "\n", encoding="utf-8")
        index_rows.append({"service_id": prof["service_id"], "label": prof["label"], "page": f"services/{name}.md",
                           "entries": len(prof["entries"]), "cards": len(cards),
                           "cards_complete": sum(1 for c in cards if c["complete"]), "flows": len(flows),
                           "flows_weakest": {s: sum(1 for f in flows if f["weakest_status"] == s)
                                             for s in ("RESOLVED", "AMBIGUOUS", "UNRESOLVED")},
                           "gaps": len(prof["gaps"]), "rules": len(cited)})
    (out / "index.json").write_text(_dump({"services": index_rows, "rules": len(p.rules)}), encoding="utf-8")
    md = ["# The pyramid", "",
          "L3 service profiles, L2 entry cards and L4 flows, derived from the graph's records alone: every sentence "
          "comes from a template below and cites the records it rests on. Rules are static derivations "
          "(STATIC_DERIVATION, UNREVIEWED) of branch-ledger items.", "",
          "| service | entries | cards complete | flows (resolved / ambiguous / unresolved) | gaps |",
          "|---|---:|---:|---|---:|"]
    for r in index_rows:
        w = r["flows_weakest"]
        md.append(f"| [{_md(r['service_id'] + (' [' + r['label'] + ']' if r['label'] else ''))}]({r['page']}) | "
                  f"{r['entries']} | {r['cards_complete']}/{r['cards']} | {r['flows']} ({w['RESOLVED']} / "
                  f"{w['AMBIGUOUS']} / {w['UNRESOLVED']}) | {r['gaps']} |")
    md += ["", "## Templates", "", templates_table(), ""]
    (out / "index.md").write_text("\n".join(md), encoding="utf-8")
