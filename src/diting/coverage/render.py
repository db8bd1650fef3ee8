"""The coverage report as JSON, a plain table, Markdown and one self-contained HTML page.

Every format shows the same numbers and names the inputs (repository, commit, the commit's
committer time, the diting versions); a ratio is computed on display (resolved of the examined
items: discovered less excluded) and is ``N/A`` when nothing was examined (docs/coverage.md §7). Excluded items
are shown beside every package's figure, so a package of mostly excluded files does not read as
failing. The HTML page has no script and loads nothing: its charts are SVG drawn here — shares of
the examined items on a 0–100 % axis, the counts beside — and each number cell carries
``data-dim``/``data-term`` (and ``data-service``) attributes so a reader — or a test — can take the
numbers back out. Equal reports give equal bytes.
"""

from __future__ import annotations

import html
import unicodedata
from typing import Any

from diting.coverage.model import DIMENSIONS, TERMS
from diting.safe_text import json_text, markdown_code, markdown_text, printable

COLUMNS = ("discovered", *TERMS)
#: chart colours per term (colour-blind-safe palette)
COLOURS = {"resolved": "#1b9e77", "partial": "#e6ab02", "failed": "#d95f02", "excluded": "#999999",
           "AMBIGUOUS": "#e6ab02", "UNRESOLVED": "#d95f02"}


def ratio(d: dict[str, Any]) -> str:
    """``resolved`` of the examined items (``discovered`` less ``excluded``) as a percentage with one
    decimal, or ``N/A`` when nothing was examined. Excluded items (tests, noise, lib packages …) are
    out of scope by rule, so they neither raise nor lower it."""
    n = examined(d)
    return "N/A" if n <= 0 else f"{100 * d['resolved'] / n:.1f}%"


#: the ratio's column heading in every format
RATIO = "resolved of examined"


def to_json(doc: dict[str, Any]) -> str:
    """The report document as sorted, indented JSON (``coverage-report.schema.json``)."""
    return json_text(doc, indent=1, sort_keys=True) + "\n"


def examined(d: dict[str, Any]) -> int:
    """The items of a dimension that were examined: ``discovered`` less ``excluded`` (the ratio's
    denominator)."""
    return d["discovered"] - d["excluded"]


def _reasons(d: dict[str, Any]) -> str:
    return ", ".join(f"{k} {v}" for k, v in d["excluded_by_reason"].items())


def _source_line(doc: dict[str, Any]) -> str:
    src = doc["source"]
    inv = src["inventory"]
    return (f"{src['packages']} package(s)" + (" of a graph" if src["graph"] else "") +
            (f"; inventory {inv['path']} (sha256 {inv['sha256'][:12]})" if inv else "; no inventory") +
            (f"; computed by diting {src['diting_version']}" if src.get("diting_version") else ""))


def inputs(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """What the report was computed from, one entry per repository and commit: ``repo_id``,
    ``commit_sha``, ``commit_time`` (the committer time the packages record, None when they record
    none), ``packages`` (how many) and ``analyzer_versions`` (the diting versions that wrote them),
    sorted by repository and commit."""
    groups: dict[tuple[str, str], dict[str, Any]] = {}
    for s in doc["services"]:
        g = groups.setdefault((s.get("repo_id") or "", s["commit_sha"]), {
            "repo_id": s.get("repo_id") or None, "commit_sha": s["commit_sha"], "commit_time": None,
            "packages": 0, "analyzer_versions": []})
        g["packages"] += 1
        g["commit_time"] = g["commit_time"] or s.get("commit_time")
        if s.get("analyzer_version") and s["analyzer_version"] not in g["analyzer_versions"]:
            g["analyzer_versions"] = sorted([*g["analyzer_versions"], s["analyzer_version"]])
    return [groups[k] for k in sorted(groups)]


#: what the date of a report's inputs is, and why there is no other
DATE_NOTE = ("the date is the commit's committer time, recorded in each package's analysis input; a package "
             "records no time of its own scan: equal inputs give equal bytes")


def _input_lines(doc: dict[str, Any]) -> list[str]:
    out = []
    for g in inputs(doc):
        out.append(f"repository {g['repo_id'] or '(not recorded)'} at commit {g['commit_sha']}, committed "
                   f"{g['commit_time'] or '(not recorded: packages of an older diting)'}; {g['packages']} package(s) "
                   f"written by diting {', '.join(g['analyzer_versions']) or '(not recorded)'}")
    return out


def _service_name(s: dict[str, Any]) -> str:
    return s["service_id"] + (f" [{s['label']}]" if s["label"] else "")


def _cell(d: dict[str, Any]) -> str:
    """A package's figure of one dimension: ``resolved/examined``, and ``+N excl.`` when items were
    excluded (a package of mostly excluded files does not read as failing)."""
    return f"{d['resolved']}/{examined(d)}" + (f" +{d['excluded']} excl." if d["excluded"] else "")


#: the per-package tables' heading (table and Markdown)
PER_PACKAGE = ("resolved/examined — examined is discovered less excluded; +N excl.: items out of scope by "
               "rule (tests, kinds diting does not read, pruned noise), not failures")


def to_table(doc: dict[str, Any]) -> str:
    """Plain text: the inputs, the estate's dimensions, each package's ratios, differences, unknowns."""
    out = [f"coverage of {_source_line(doc)}", *_input_lines(doc), f"({DATE_NOTE})", ""]
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
    cells = [[_cell(s["dimensions"][d]) if d in s["dimensions"] else "-" for d in shown] for s in doc["services"]]
    widths = [max([len(d)] + [len(row[i]) for row in cells]) for i, d in enumerate(shown)]
    out += ["", f"per package ({PER_PACKAGE}; lib: packages are not in the estate's sums):",
            f"  {'service':<{width}} " + " ".join(f"{d:>{w}}" for d, w in zip(shown, widths))]
    for s, row in zip(doc["services"], cells):
        out.append(f"  {printable(_service_name(s)):<{width}} " + " ".join(f"{c:>{w}}" for c, w in zip(row, widths)))
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
    out = ["## Coverage", "", f"{_md(_source_line(doc))}", ""]
    out += [f"- {_md(line)}" for line in _input_lines(doc)] + [f"- {_md(DATE_NOTE)}", ""]
    out += ["| dimension | " + " | ".join(COLUMNS) + f" | {RATIO} | excluded by reason |",
            "|---|" + "---:|" * (len(COLUMNS) + 1) + "---|"]
    for name in DIMENSIONS:
        d = doc["dimensions"][name]
        out.append(f"| {name} | " + " | ".join(str(d[c]) for c in COLUMNS) + f" | {ratio(d)} | {_md(_reasons(d))} |")
    notes = [(n, x) for n in DIMENSIONS for x in doc["dimensions"][n]["not_examined"]]
    if notes:
        out += ["", "**Not examined** (a 100% figure never covers these):", ""]
        out += [f"- {n}: {_md(x)}" for n, x in notes]
    shown = [d for d in DIMENSIONS if d not in ("applications", "cross_service_edges")]
    out += ["", "### Per package", "", f"{_md(PER_PACKAGE)}.", "", "| service | status | " + " | ".join(shown) + " |",
            "|---|---|" + "---:|" * len(shown)]
    for s in doc["services"]:
        cells = [_cell(s["dimensions"][d]) if d in s["dimensions"] else "-" for d in shown]
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


#: chart geometry (px): label font, figure font, row pitch, bar height, bar length (= 100%)
_LABEL_PX, _SMALL_PX, _ROW, _BAR, _BAR_W = 12, 11, 22, 14, 240
#: the widest label column before a name is shortened in its middle (the full name is on hover and
#: in the tables): a chart stays within 660 px, so it is drawn at its own size in a 700 px window
_LABEL_MAX = 200


#: character widths (em) of a common sans-serif face, rounded up: narrow marks and letters, wide
#: ones; every other character 0.64 em (a digit is 0.636 em in DejaVu Sans), a wide East Asian one 1 em
_NARROW, _WIDE = frozenset(" .,:;·'|!ijlrtf()[]/-"), frozenset("%mwMW@")


def _text_px(text: str, size: int) -> int:
    """A generous estimate of the width of ``text`` at ``size`` px in a sans-serif face."""
    em = sum(1.0 if unicodedata.east_asian_width(c) in "WF" or c in _WIDE else
             0.4 if c in _NARROW else 0.76 if c.isupper() else 0.64 for c in text)
    return round(em * size)


def _fit(text: str, px: int, size: int) -> str:
    """``text`` shortened in its middle (``head…tail``) to fit ``px`` at ``size``; unchanged when it fits."""
    if _text_px(text, size) <= px:
        return text
    head, tail = text[:len(text) // 2], text[len(text) // 2:]
    while head or tail:
        if len(head) >= len(tail):
            head = head[:-1]
        else:
            tail = tail[1:]
        if _text_px(head + "…" + tail, size) <= px:
            break
    return head + "…" + tail


def _spans(segs: list[tuple[str, int]], total: int, width: int) -> list[tuple[str, int, int, int]]:
    """``[(term, n, x, w)]``: the segments of a bar ``width`` px long for ``total`` items, sized by
    rounding their running sum (so they meet, and end exactly at the share of their sum); a segment
    of at least one item is at least 1 px, taken from the widest."""
    widths, run = [], 0
    for _, n in segs:
        x0 = round(run * width / total)
        run += n
        widths.append(round(run * width / total) - x0)
    for i, (_, n) in enumerate(segs):
        if n and not widths[i]:
            widest = max(range(len(widths)), key=lambda j: widths[j])
            if widths[widest] > 1:
                widths[widest] -= 1
                widths[i] = 1
    out, x = [], 0
    for (term, n), w in zip(segs, widths):
        out.append((term, n, x, w))
        x += w
    return out


def _label_width(labels: list[str]) -> int:
    """The label column that fits ``labels`` (at most :data:`_LABEL_MAX`)."""
    return min(max([_text_px(label, _LABEL_PX) for label in labels] + [40]) + 10, _LABEL_MAX)


def _chart(title: str, rows: list[tuple[str, list[tuple[str, int]], int, str]],
           ticks: list[tuple[int, str]], legend: list[str], track: bool, label_w: int | None = None) -> str:
    """A horizontal bar chart as inline SVG. ``rows``: ``(label, [(term, n)], scale, beside)`` — the
    bar is ``_BAR_W`` px for ``scale`` items (no bar when ``scale`` is 0), ``beside`` the text after
    it; ``ticks``: ``(px along the bar, label)`` of the axis drawn above the rows and as grid lines
    over them; ``track``: a pale bar behind each row (its 100 %); ``label_w``: the label column's
    width (charts of one page line up), else fitted to the labels. A label is never cut: one too wide
    is shortened in its middle and the full name is its tooltip. Text is escaped; coordinates are
    integers (equal bytes)."""
    label_w = label_w or _label_width([label for label, *_ in rows])
    beside_w = max(_text_px(b, _SMALL_PX) for *_, b in rows) + 4
    width = label_w + _BAR_W + 10 + beside_w
    top = 28
    height = top + len(rows) * _ROW + 30
    x0 = label_w
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" data-bar-width="{_BAR_W}"><title>{_e(title)}</title>']
    for x, tick in ticks:  # the axis: tick labels and marks above the rows
        anchor = "start" if x == 0 else "end" if x == _BAR_W else "middle"
        out.append(f'<text x="{x0 + x}" y="{top - 10}" font-size="{_SMALL_PX}" text-anchor="{anchor}" '
                   f'class="tick">{_e(tick)}</text><line x1="{x0 + x}" y1="{top - 6}" x2="{x0 + x}" y2="{top}" '
                   'stroke="#666666"/>')
    out.append(f'<line x1="{x0}" y1="{top}" x2="{x0 + _BAR_W}" y2="{top}" stroke="#666666" class="axis"/>')
    for i, (label, segs, scale, beside) in enumerate(rows):
        y = top + i * _ROW + 4
        shown = _fit(label, label_w - 10, _LABEL_PX)
        out.append(f'<g class="row" data-label="{_e(label)}" data-scale="{scale}">'
                   f'<text x="0" y="{y + 11}" font-size="{_LABEL_PX}"><title>{_e(label)}</title>{_e(shown)}</text>' +
                   (f'<rect x="{x0}" y="{y}" width="{_BAR_W}" height="{_BAR}" fill="#eeeeee"/>' if track else ""))
        for term, n, x, w in (_spans(segs, scale, _BAR_W) if scale else []):
            if n:
                out.append(f'<rect class="seg" data-term="{_e(term)}" data-n="{n}" x="{x0 + x}" y="{y}" width="{w}" '
                           f'height="{_BAR}" fill="{COLOURS.get(term, "#666666")}"><title>{_e(label)}: {_e(term)} '
                           f'{n} of {scale}</title></rect>')
        out.append(f'<text x="{x0 + _BAR_W + 8}" y="{y + 11}" font-size="{_SMALL_PX}">{_e(beside)}</text></g>')
    bottom = top + len(rows) * _ROW + 4
    # grid lines, so a bar can be read against the axis: pale over the bars of shares, grey behind none
    stroke = 'stroke="#ffffff" stroke-opacity="0.7"' if track else 'stroke="#dddddd"'
    out += [f'<line x1="{x0 + x}" y1="{top}" x2="{x0 + x}" y2="{bottom - 4}" {stroke}/>' for x, _ in ticks]
    lx = x0
    for t in legend:
        out.append(f'<rect x="{lx}" y="{bottom + 6}" width="10" height="10" fill="{COLOURS.get(t, "#666666")}"/>'
                   f'<text x="{lx + 14}" y="{bottom + 15}" font-size="{_SMALL_PX}">{_e(t)}</text>')
        lx += _text_px(t, _SMALL_PX) + 30
    out.append("</svg>")
    return "".join(out)


#: the share axis: 0–100 % in quarters
_SHARE_TICKS = [(round(_BAR_W * q / 4), f"{25 * q}%") for q in range(5)]


def _share_rows(rows: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, list[tuple[str, int]], int, str]]:
    """Chart rows of dimensions: the bar is the examined items (resolved, partial, failed as shares),
    beside it the ratio, resolved/examined and the excluded items."""
    out = []
    for label, d in rows:
        n = examined(d)
        beside = (f"{ratio(d)} · {d['resolved']}/{n}" if n else "N/A · nothing examined") + \
            (f" · +{d['excluded']} excluded" if d["excluded"] else "")
        out.append((label, [(t, d[t]) for t in ("resolved", "partial", "failed")], max(n, 0), beside))
    return out


def _share_chart(title: str, rows: list[tuple[str, dict[str, Any]]], caption: str, label_w: int) -> str:
    """A figure: the chart of ``rows`` (``(label, dimension)``) as shares, and its caption."""
    chart = _chart(title, _share_rows(rows), _SHARE_TICKS, ["resolved", "partial", "failed"], True, label_w)
    return f'<figure>{chart}<figcaption>{_e(caption)}</figcaption></figure>'



def _count_ticks(most: int) -> tuple[int, list[tuple[int, str]]]:
    """An axis for counts up to ``most``: ``(the axis' end, [(px, label)])`` in steps of 1, 2 or 5 × 10^k,
    at most five steps."""
    step = next(m * 10 ** k for k in range(20) for m in (1, 2, 5) if m * 10 ** k * 5 >= most)
    end = max(step, -(-most // step) * step)
    return end, [(round(_BAR_W * v / end), str(v)) for v in range(0, end + 1, step)]


def _num(n: int, dim: str, term: str, service: str | None = None) -> str:
    svc = f' data-service="{_e(service)}"' if service is not None else ""
    return f'<td class="n" data-dim="{_e(dim)}" data-term="{_e(term)}"{svc}>{n}</td>'


_CSS = ("body{font-family:system-ui,sans-serif;margin:1em auto;padding:0 1em;max-width:75em;color:#222}"
        "h1{margin:.3em 0}h2{margin-top:1.6em}h3{margin:1.4em 0 .2em;font-size:16px}"
        "table{border-collapse:collapse;margin:1em 0;max-width:100%}"
        "td,th{border:1px solid #ccc;padding:3px 6px;font-size:13px;vertical-align:top}th{background:#f3f3f3}"
        ".n{text-align:right}td.n{white-space:nowrap}.name,code,p,dd{overflow-wrap:anywhere}code{font-size:12px}"
        "#inputs th{text-align:left}tbody.pkg th{text-align:left;background:#e8eef4;overflow-wrap:anywhere}"
        "small{font-weight:normal;color:#444}"
        "figure{margin:.5em 0 1.5em}figure svg{display:block;max-width:100%;height:auto;font-family:inherit}"
        "figcaption{font-size:13px;color:#444;max-width:48em}"
        "dl.notes dt{font-weight:bold;margin-top:.5em;font-size:14px}dl.notes dd{margin-left:1.5em;font-size:13px}"
        ".note{font-size:13px;color:#444}")


def _inputs_html(doc: dict[str, Any]) -> list[str]:
    """The inputs as a two-column table (it reads at any width): per repository and commit, the
    commit's date and the packages; then what computed the report."""
    out = ['<table id="inputs">']
    for g in inputs(doc):
        written = f"written by diting {', '.join(g['analyzer_versions'])}" if g["analyzer_versions"] else \
            "the diting version that wrote them is not recorded"
        out.append(f'<tbody class="input"><tr><th scope="row">repository</th><td class="name">'
                   f'{_e(g["repo_id"] or "(not recorded)")}</td></tr>'
                   f'<tr><th scope="row">commit</th><td><code>{_e(g["commit_sha"])}</code></td></tr>'
                   f'<tr><th scope="row">committed</th><td>' +
                   (f'{_e(g["commit_time"])} <small>(committer time)</small>' if g["commit_time"] else
                    "not recorded (packages of an older diting)") + '</td></tr>'
                   f'<tr><th scope="row">packages</th><td>{g["packages"]}, {_e(written)}</td></tr></tbody>')
    out.append(f'<tbody><tr><th scope="row">report</th><td>{_e(_source_line(doc))}</td></tr></tbody></table>')
    out.append(f'<p class="note">{_e(DATE_NOTE[0].upper() + DATE_NOTE[1:])}.</p>')
    return out


def _estate_html(doc: dict[str, Any]) -> list[str]:
    """The estate's dimensions: a share chart (one bar per dimension) and the ``#dimensions`` table of
    counts and ratios."""
    out = ["<h2>The estate</h2>"]
    out.append(_share_chart("the estate: resolved of examined, per dimension",
                            [(name, doc["dimensions"][name]) for name in DIMENSIONS],
                            "Each bar is the examined items of a dimension (discovered less excluded) as 100 %: "
                            "resolved, partial and failed as shares. Beside it: resolved of examined, "
                            "resolved/examined, and the items excluded by rule (not in the bar). lib: packages are "
                            "not in the estate's sums.", _label_width(list(DIMENSIONS))))
    out.append('<table id="dimensions"><tr><th>dimension</th>' + "".join(f'<th class="n">{c}</th>' for c in COLUMNS) +
               f'<th class="n">{RATIO}</th></tr>')
    for name in DIMENSIONS:
        d = doc["dimensions"][name]
        out.append(f'<tr><td>{name}</td>' + "".join(_num(d[c], name, c) for c in COLUMNS) +
                   f'<td class="n">{ratio(d)}</td></tr>')
    out.append("</table>")
    return out


def _notes_html(doc: dict[str, Any]) -> list[str]:
    """Per dimension of the estate, the ``#notes`` list: its excluded items by reason, calls resolved to
    a library method, and what was not examined."""
    out = ['<h2>Excluded and not examined</h2><dl class="notes" id="notes">']
    for name in DIMENSIONS:
        d = doc["dimensions"][name]
        out.append(f"<dt>{name}</dt>")
        if d["excluded_by_reason"]:
            out.append(f"<dd>excluded: {_e(_reasons(d))}</dd>")
        if d.get("resolved_external") is not None:
            out.append(f"<dd>resolved_external {d['resolved_external']} (resolved to a library method)</dd>")
        out += [f"<dd>not examined: {_e(x)}</dd>" for x in d["not_examined"]]
    out.append("</dl>")
    return out


def _packages_html(doc: dict[str, Any]) -> list[str]:
    """Each dimension per package (all but the estate-wide applications and cross-service edges): a
    share chart per dimension some package discovered items of, its bars aligned on one label
    column, then the ``#services`` table, one row group per package (its status, lib or not)."""
    shown = [d for d in DIMENSIONS if d not in ("applications", "cross_service_edges")]
    # one label column for every chart of packages: their bars line up
    label_w = _label_width([_service_name(s) for s in doc["services"]])
    out = ["<h2>Per package</h2>"]
    for name in shown:
        rows = [(_service_name(s), s["dimensions"][name]) for s in doc["services"]
                if name in s["dimensions"] and s["dimensions"][name]["discovered"]]
        if rows:
            out.append(f"<h3>{name}</h3>")
            out.append(_share_chart(f"{name}: resolved of examined, per package", rows,
                                    f"{name} of each package: the examined items as 100 %; beside each bar the "
                                    "ratio, resolved/examined and the items excluded by rule.", label_w))
    out.append('<table id="services"><tr><th>dimension</th>' + "".join(f'<th class="n">{c}</th>' for c in COLUMNS) +
               f'<th class="n">{RATIO}</th></tr>')
    for s in doc["services"]:
        out.append(f'<tbody class="pkg"><tr><th colspan="{len(COLUMNS) + 2}" scope="rowgroup">'
                   f'{_e(_service_name(s))} <small>· {_e(s["status"])}'
                   f'{" · lib: not in the estate’s sums" if s["kind"] == "LIB" else ""}</small></th></tr>')
        for name in shown:
            if name not in s["dimensions"]:
                continue
            d = s["dimensions"][name]
            out.append(f'<tr><td>{name}</td>' + "".join(_num(d[c], name, c, s["scan_id"]) for c in COLUMNS) +
                       f'<td class="n">{ratio(d)}</td></tr>')
        out.append("</tbody>")
    out.append("</table>")
    return out


def _unresolved_html(kinds: dict[str, dict[str, int]]) -> list[str]:
    """Relations (and alignment rows) not resolved, ``kind → {AMBIGUOUS, UNRESOLVED: count}``: a
    count chart and the ``#unresolved`` table; nothing when there are none."""
    if not kinds:
        return []
    end, ticks = _count_ticks(max(sum(v.values()) for v in kinds.values()))
    rows = [(k, [(s, v.get(s, 0)) for s in ("AMBIGUOUS", "UNRESOLVED")], end,
             f"{v.get('AMBIGUOUS', 0)} ambiguous · {v.get('UNRESOLVED', 0)} unresolved") for k, v in kinds.items()]
    out = ['<h2>Unresolved and ambiguous by kind</h2>']
    out.append(f'<figure>{_chart("unresolved and ambiguous items by kind", rows, ticks, ["AMBIGUOUS", "UNRESOLVED"], False)}'
               '<figcaption>Counts of relations (and of alignment rows, edge:…) that are not resolved, by kind; '
               'the axis counts items.</figcaption></figure>')
    out.append('<table id="unresolved"><tr><th>kind</th><th class="n">AMBIGUOUS</th><th class="n">UNRESOLVED</th></tr>')
    out += [f'<tr><td class="name">{_e(k)}</td>' + "".join(f'<td class="n" data-kind="{_e(k)}" data-status="{s}">'
                                             f'{v.get(s, 0)}</td>' for s in ("AMBIGUOUS", "UNRESOLVED")) + '</tr>'
            for k, v in kinds.items()]
    out.append("</table>")
    return out


def _applications_html(doc: dict[str, Any]) -> list[str]:
    """The ``#applications`` table of the applications whose term is not resolved (with the reason);
    nothing when every one is resolved."""
    apps = [a for a in doc["applications"] if a["term"] != "resolved"]
    if not apps:
        return []
    out = ['<h2>Applications not resolved</h2><table id="applications"><tr><th>application</th><th>term</th>'
           '<th>reason</th></tr>']
    out += [f'<tr><td class="name">{_e(a["service_id"])}</td><td>{a["term"]}</td><td class="name">{_e(a["reason"] or "")}</td></tr>'
            for a in apps]
    out.append("</table>")
    return out


def _differences_html(differences: list[dict[str, Any]]) -> list[str]:
    """The ``#differences`` table of catalogue differences (``{kind, service_id, subject, detail}``);
    nothing when there are none."""
    if not differences:
        return []
    out = ['<h2>Catalogue differences</h2><table id="differences"><tr><th>kind</th><th>service</th>'
           '<th>subject</th><th>detail</th></tr>']
    out += [f'<tr><td>{x["kind"].replace("_", "_<wbr>")}</td><td class="name">{_e(x["service_id"] or "-")}</td><td><code>'
            f'{_e(x["subject"])}</code></td><td class="name">{_e(x["detail"])}</td></tr>'
            for x in differences]
    out.append("</table>")
    return out


def _diagnostics_html(codes: dict[str, int]) -> list[str]:
    """The ``#diagnostics`` table, ``code → count``; nothing when there are none."""
    if not codes:
        return []
    out = ['<h2>Diagnostics by code</h2><table id="diagnostics"><tr><th>code</th><th class="n">count</th></tr>']
    out += [f'<tr><td class="name">{_e(k)}</td><td class="n" data-code="{_e(k)}">{n}</td></tr>'
            for k, n in codes.items()]
    out.append("</table>")
    return out


def to_html(doc: dict[str, Any]) -> str:
    """One self-contained page: the inputs (repository, commit, its date, diting versions); the
    estate's dimensions as shares of the examined items and as a table; each dimension per package
    as shares with a 0–100 % axis and the counts beside, excluded items counted apart; per-package
    tables; catalogue differences; unresolved relations by kind; diagnostics by code. Names wrap in
    tables and are shortened only in their middle in charts (the full name is the tooltip); it reads
    at 700 px without sideways scrolling."""
    out = ['<!DOCTYPE html>', '<html lang="en"><head><meta charset="utf-8">',
           '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; style-src \'unsafe-inline\'">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">',
           f'<title>diting coverage</title><style>{_CSS}</style></head><body>', '<h1>Coverage</h1>']
    out += _inputs_html(doc)
    out += _estate_html(doc)
    out += _notes_html(doc)
    out += _applications_html(doc)
    out += _packages_html(doc)
    out += _differences_html(doc["catalogue_differences"])
    out += _unresolved_html(doc["unresolved_by_kind"])
    out += _diagnostics_html(doc["diagnostics_by_code"])
    out.append("</body></html>")
    return "\n".join(out) + "\n"


RENDERERS = {"json": to_json, "table": to_table, "md": to_markdown, "html": to_html}
