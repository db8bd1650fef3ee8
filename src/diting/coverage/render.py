"""The coverage report as JSON, a plain table, Markdown and one self-contained HTML page.

Every format shows the same numbers; a ratio is computed on display (resolved of discovered) and is
``N/A`` when nothing was discovered (SPEC §7). The HTML page has no script and loads nothing: its
charts are SVG drawn here, and each number cell carries ``data-dim``/``data-term`` (and
``data-service``) attributes so a reader — or a test — can take the numbers back out. Equal
reports give equal bytes.
"""

from __future__ import annotations

import html
import json
from typing import Any

from diting.coverage.model import DIMENSIONS, TERMS
from diting.graph.export import markdown_code, markdown_text, printable

COLUMNS = ("discovered", *TERMS)
#: chart colours per term (colour-blind-safe palette)
COLOURS = {"resolved": "#1b9e77", "partial": "#e6ab02", "failed": "#d95f02", "excluded": "#999999",
           "AMBIGUOUS": "#e6ab02", "UNRESOLVED": "#d95f02"}


def ratio(d: dict[str, Any]) -> str:
    """``resolved`` of the examined items (``discovered`` less ``excluded``) as a percentage with one
    decimal, or ``N/A`` when nothing was examined. Excluded items (tests, noise, lib packages …) are
    out of scope by rule, so they neither raise nor lower it."""
    examined = d["discovered"] - d["excluded"]
    return "N/A" if examined <= 0 else f"{100 * d['resolved'] / examined:.1f}%"


#: the ratio's column heading in every format
RATIO = "resolved of examined"


def to_json(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def _reasons(d: dict[str, Any]) -> str:
    return ", ".join(f"{k} {v}" for k, v in d["excluded_by_reason"].items())


def _source_line(doc: dict[str, Any]) -> str:
    src = doc["source"]
    inv = src["inventory"]
    return (f"{src['packages']} package(s)" + (" of a graph" if src["graph"] else "") +
            (f"; inventory {inv['path']} (sha256 {inv['sha256'][:12]})" if inv else "; no inventory"))


def _service_name(s: dict[str, Any]) -> str:
    return s["service_id"] + (f" [{s['label']}]" if s["label"] else "")


def to_table(doc: dict[str, Any]) -> str:
    """Plain text: the estate's dimensions, each package's ratios, differences, unknowns."""
    out = [f"coverage of {_source_line(doc)}", ""]
    head = f"{'dimension':<20} " + " ".join(f"{c:>10}" for c in COLUMNS) + f"  {RATIO}"
    out.append(head)
    for name in DIMENSIONS:
        d = doc["dimensions"][name]
        out.append(f"{name:<20} " + " ".join(f"{d[c]:>10}" for c in COLUMNS) + f"  {ratio(d):>{len(RATIO)}}")
    out.append("")
    for name in DIMENSIONS:
        d = doc["dimensions"][name]
        extra = []
        if d["excluded_by_reason"]:
            extra.append(f"excluded: {_reasons(d)}")
        if d.get("resolved_external") is not None:
            extra.append(f"resolved_external {d['resolved_external']}")
        for n in d["not_examined"]:
            extra.append(f"not examined: {n}")
        if extra:
            out.append(f"{name}:")
            out += [f"  {printable(e)}" for e in extra]
    shown = [d for d in DIMENSIONS if d not in ("applications", "cross_service_edges")]
    width = max([len(printable(_service_name(s))) for s in doc["services"]] + [7])
    out += ["", "per package (resolved/discovered; lib: packages are not in the estate's sums):",
            f"  {'service':<{width}} " + " ".join(f"{d:>15}" for d in shown)]
    for s in doc["services"]:
        cells = [f"{s['dimensions'][d]['resolved']}/{s['dimensions'][d]['discovered']}" if d in s["dimensions"]
                 else "-" for d in shown]
        out.append(f"  {printable(_service_name(s)):<{width}} " + " ".join(f"{c:>15}" for c in cells))
    apps = [a for a in doc["applications"] if a["term"] != "resolved"]
    if apps:
        out += ["", "applications not resolved:"]
        out += [f"  {a['term']:<9} {printable(a['service_id'])}: {printable(a['reason'] or '')}" for a in apps]
    if doc["catalogue_differences"]:
        out += ["", "catalogue differences:"]
        out += [f"  {x['kind']:<26} {printable(x['service_id'] or '-')}  {printable(x['subject'])}"
                for x in doc["catalogue_differences"]]
    if doc["unresolved_by_kind"]:
        out += ["", "unresolved and ambiguous by kind:"]
        out += [f"  {k:<20} " + ", ".join(f"{s} {n}" for s, n in v.items()) for k, v in doc["unresolved_by_kind"].items()]
    if doc["diagnostics_by_code"]:
        out += ["", "diagnostics by code: " + ", ".join(f"{printable(k)} {n}" for k, n in
                                                       doc["diagnostics_by_code"].items())]
    return "\n".join(out) + "\n"


_md = markdown_text


def to_markdown(doc: dict[str, Any]) -> str:
    """Markdown for a pull request or a wiki page."""
    out = ["## Coverage", "", f"{_md(_source_line(doc))}", "",
           "| dimension | " + " | ".join(COLUMNS) + f" | {RATIO} | excluded by reason |",
           "|---|" + "---:|" * (len(COLUMNS) + 1) + "---|"]
    for name in DIMENSIONS:
        d = doc["dimensions"][name]
        out.append(f"| {name} | " + " | ".join(str(d[c]) for c in COLUMNS) + f" | {ratio(d)} | {_md(_reasons(d))} |")
    notes = [(n, x) for n in DIMENSIONS for x in doc["dimensions"][n]["not_examined"]]
    if notes:
        out += ["", "**Not examined** (a 100% figure never covers these):", ""]
        out += [f"- {n}: {_md(x)}" for n, x in notes]
    shown = [d for d in DIMENSIONS if d not in ("applications", "cross_service_edges")]
    out += ["", "### Per package (resolved/discovered)", "", "| service | status | " + " | ".join(shown) + " |",
            "|---|---|" + "---:|" * len(shown)]
    for s in doc["services"]:
        cells = [f"{s['dimensions'][d]['resolved']}/{s['dimensions'][d]['discovered']}" if d in s["dimensions"]
                 else "-" for d in shown]
        out.append(f"| {_md(_service_name(s))} | {s['status']} | " + " | ".join(cells) + " |")
    apps = [a for a in doc["applications"] if a["term"] != "resolved"]
    if apps:
        out += ["", "### Applications not resolved", "", "| application | term | reason |", "|---|---|---|"]
        out += [f"| {_md(a['service_id'])} | {a['term']} | {_md(a['reason'] or '')} |" for a in apps]
    if doc["catalogue_differences"]:
        out += ["", "### Catalogue differences", "", "| kind | service | subject | detail |", "|---|---|---|---|"]
        out += [f"| {x['kind']} | {_md(x['service_id'] or '-')} | `{markdown_code(x['subject'])}` | "
                f"{_md(x['detail'])} |" for x in doc["catalogue_differences"]]
    if doc["unresolved_by_kind"]:
        out += ["", "### Unresolved and ambiguous by kind", "", "| kind | AMBIGUOUS | UNRESOLVED |", "|---|---:|---:|"]
        out += [f"| {k} | {v.get('AMBIGUOUS', 0)} | {v.get('UNRESOLVED', 0)} |" for k, v in doc["unresolved_by_kind"].items()]
    if doc["diagnostics_by_code"]:
        out += ["", "### Diagnostics by code", "", "| code | count |", "|---|---:|"]
        out += [f"| {_md(k)} | {n} |" for k, n in doc["diagnostics_by_code"].items()]
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------- HTML


def _e(text: Any) -> str:
    return html.escape(printable(str(text)), quote=True)


def _bars(title: str, rows: list[tuple[str, list[tuple[str, int]]]], width: int = 520) -> str:
    """A horizontal stacked bar chart as inline SVG: one bar per row, one segment per (term, n),
    scaled to the largest row total. Text is escaped; coordinates are integers (equal bytes)."""
    label_w, bar_h, gap, top = 220, 16, 6, 24
    most = max([sum(n for _, n in segs) for _, segs in rows] + [1])
    height = top + len(rows) * (bar_h + gap) + 24
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{label_w + width + 60}" height="{height}" '
           f'viewBox="0 0 {label_w + width + 60} {height}"><title>{_e(title)}</title>',
           f'<text x="0" y="14" font-size="13" font-weight="bold">{_e(title)}</text>']
    for i, (label, segs) in enumerate(rows):
        y = top + i * (bar_h + gap)
        out.append(f'<text x="{label_w - 6}" y="{y + 12}" font-size="11" text-anchor="end">{_e(label[:40])}</text>')
        x = label_w
        for term, n in segs:
            if not n:
                continue
            w = max(1, round(n * width / most))
            out.append(f'<rect x="{x}" y="{y}" width="{w}" height="{bar_h}" fill="{COLOURS.get(term, "#666666")}">'
                       f'<title>{_e(label)}: {_e(term)} {n}</title></rect>')
            x += w
        out.append(f'<text x="{x + 4}" y="{y + 12}" font-size="11">{sum(n for _, n in segs)}</text>')
    ly = top + len(rows) * (bar_h + gap) + 12
    terms = []
    for _, segs in rows:
        terms += [t for t, _ in segs if t not in terms]
    for j, t in enumerate(terms):
        out.append(f'<rect x="{label_w + j * 100}" y="{ly - 9}" width="10" height="10" fill="{COLOURS.get(t, "#666666")}"/>'
                   f'<text x="{label_w + j * 100 + 14}" y="{ly}" font-size="11">{_e(t)}</text>')
    out.append("</svg>")
    return "".join(out)


def _num(n: int, dim: str, term: str, service: str | None = None) -> str:
    svc = f' data-service="{_e(service)}"' if service is not None else ""
    return f'<td class="n" data-dim="{_e(dim)}" data-term="{_e(term)}"{svc}>{n}</td>'


_CSS = ("body{font-family:system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse;margin:1em 0}"
        "td,th{border:1px solid #ccc;padding:3px 8px;font-size:13px}td.n{text-align:right}"
        "th{background:#f3f3f3}code{font-size:12px}.charts svg{display:block;margin:1em 0}")


def to_html(doc: dict[str, Any]) -> str:
    """One self-contained page: totals, per-package tables and SVG charts (coverage of each
    dimension per package; unresolved relations by kind), catalogue differences, not-examined areas."""
    out = ['<!DOCTYPE html>', '<html lang="en"><head><meta charset="utf-8">',
           '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; style-src \'unsafe-inline\'">',
           f'<title>diting coverage</title><style>{_CSS}</style></head><body>',
           '<h1>Coverage</h1>', f'<p>{_e(_source_line(doc))}</p>',
           '<table id="dimensions"><tr><th>dimension</th>' + "".join(f"<th>{c}</th>" for c in COLUMNS) +
           f'<th>{RATIO}</th><th>excluded by reason</th><th>not examined</th></tr>']
    for name in DIMENSIONS:
        d = doc["dimensions"][name]
        out.append(f'<tr><td>{name}</td>' + "".join(_num(d[c], name, c) for c in COLUMNS) +
                   f'<td class="n">{ratio(d)}</td><td>{_e(_reasons(d))}</td>'
                   f'<td>{"<br>".join(_e(x) for x in d["not_examined"])}</td></tr>')
    out.append("</table>")
    out.append('<div class="charts">')
    charts = [("applications", [(a["service_id"], [(a["term"], 1)]) for a in doc["applications"]])]
    for name in DIMENSIONS:
        if name in ("applications", "cross_service_edges"):
            continue
        rows = [(_service_name(s), [(t, s["dimensions"][name][t]) for t in TERMS]) for s in doc["services"]
                if name in s["dimensions"] and s["dimensions"][name]["discovered"]]
        if rows:
            charts.append((name, rows))
    edges = doc["dimensions"]["cross_service_edges"]
    if edges["discovered"]:
        charts.insert(1, ("cross_service_edges", [("estate", [(t, edges[t]) for t in TERMS])]))
    for name, rows in charts:
        if rows:
            out.append(_bars(f"{name} per service", rows))
    if doc["unresolved_by_kind"]:
        out.append(_bars("unresolved and ambiguous items by kind",
                         [(k, [(s, v.get(s, 0)) for s in ("AMBIGUOUS", "UNRESOLVED")])
                          for k, v in doc["unresolved_by_kind"].items()]))
    out.append("</div>")
    out.append('<h2>Per package</h2><table id="services"><tr><th>service</th><th>status</th><th>dimension</th>' +
               "".join(f"<th>{c}</th>" for c in COLUMNS) + f"<th>{RATIO}</th></tr>")
    for s in doc["services"]:
        for name in DIMENSIONS:
            if name not in s["dimensions"]:
                continue
            d = s["dimensions"][name]
            out.append(f'<tr><td>{_e(_service_name(s))}</td><td>{_e(s["status"])}</td><td>{name}</td>' +
                       "".join(_num(d[c], name, c, s["scan_id"]) for c in COLUMNS) + f'<td class="n">{ratio(d)}</td></tr>')
    out.append("</table>")
    if doc["catalogue_differences"]:
        out.append('<h2>Catalogue differences</h2><table id="differences"><tr><th>kind</th><th>service</th>'
                   '<th>subject</th><th>detail</th></tr>')
        out += [f'<tr><td>{x["kind"]}</td><td>{_e(x["service_id"] or "-")}</td><td><code>{_e(x["subject"])}</code>'
                f'</td><td>{_e(x["detail"])}</td></tr>' for x in doc["catalogue_differences"]]
        out.append("</table>")
    if doc["unresolved_by_kind"]:
        out.append('<h2>Unresolved and ambiguous by kind</h2><table id="unresolved"><tr><th>kind</th>'
                   '<th>AMBIGUOUS</th><th>UNRESOLVED</th></tr>')
        out += [f'<tr><td>{_e(k)}</td>' + "".join(f'<td class="n" data-kind="{_e(k)}" data-status="{s}">'
                                                 f'{v.get(s, 0)}</td>' for s in ("AMBIGUOUS", "UNRESOLVED")) + '</tr>'
                for k, v in doc["unresolved_by_kind"].items()]
        out.append("</table>")
    if doc["diagnostics_by_code"]:
        out.append('<h2>Diagnostics by code</h2><table id="diagnostics"><tr><th>code</th><th>count</th></tr>')
        out += [f'<tr><td>{_e(k)}</td><td class="n" data-code="{_e(k)}">{n}</td></tr>'
                for k, n in doc["diagnostics_by_code"].items()]
        out.append("</table>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"


RENDERERS = {"json": to_json, "table": to_table, "md": to_markdown, "html": to_html}
