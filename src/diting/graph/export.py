"""``diting export``: the graph's tables as Parquet, and the service graph as GraphML, DOT or Mermaid.

Parquet: one file per table and view of the graph (``{name}.parquet``) in the output directory, written by
DuckDB's ``COPY`` (JSON columns as text), for Spark, Trino or pandas. ``--service S`` keeps the rows of
packages of that service (tables with a ``scan_id``) and the edges that touch it.

The service graph: one node per current service (with its package count and status), one edge per
(src_service, dst_service, edge_kind) of ``service_dependencies`` with the resolved / ambiguous /
unresolved counts and the urns; a source or target that is not known (an unresolved consumer, a
subscription no one feeds) is the node ``?``. GraphML goes through networkx; DOT and Mermaid are
written here (quoted ids, escaped labels). Output bytes are deterministic for equal databases.
"""

from __future__ import annotations

import json
import os
import stat
import tempfile
from pathlib import Path
from typing import Any

from diting.errors import UserError
from diting.safe_text import printable
from diting.ir.writer import refuse_inside_package
from diting.interrupts import import_native

FORMATS = ("parquet", "graphml", "dot", "mermaid")
UNKNOWN = "?"

def _service_graph(con, service: str | None) -> tuple[list[tuple[str, dict[str, Any]]], list[dict[str, Any]]]:
    svc = con.execute("SELECT service_id, count(*), string_agg(DISTINCT status, ',' ORDER BY status) FROM services "
                      "WHERE kind = 'SERVICE' GROUP BY 1 ORDER BY 1").fetchall()
    edges = []
    for src, dst, kind, res, amb, unr, urns in con.execute(
            "SELECT src_service, dst_service, edge_kind, resolved, ambiguous, unresolved, urns FROM service_dependencies "
            "ORDER BY src_service NULLS LAST, dst_service NULLS LAST, edge_kind").fetchall():
        src, dst = printable(src) if src else UNKNOWN, printable(dst) if dst else UNKNOWN
        if service is not None and service not in (src, dst):
            continue
        edges.append({"src": src, "dst": dst, "edge_kind": kind, "resolved": res, "ambiguous": amb,
                      "unresolved": unr, "urns": [printable(u) for u in urns or []]})
    svc = [(printable(s), n, st) for s, n, st in svc]
    service = printable(service) if service is not None else None
    nodes = [(s, {"packages": n, "status": st}) for s, n, st in svc
             if service is None or s == service or any(s in (e["src"], e["dst"]) for e in edges)]
    if any(UNKNOWN in (e["src"], e["dst"]) for e in edges):
        nodes.append((UNKNOWN, {"packages": 0, "status": "UNKNOWN"}))
    if service is not None and not any(n == service for n, _ in nodes):
        raise UserError(f"no current service {service!r} in the graph; 'diting query --saved service-graph' "
                        "lists the services")
    return nodes, edges


def _label(e: dict[str, Any]) -> str:
    parts = [f"{e['edge_kind']} {e['resolved']}"]
    if e["ambiguous"]:
        parts.append(f"~{e['ambiguous']}")
    if e["unresolved"]:
        parts.append(f"?{e['unresolved']}")
    return " ".join(parts)


def to_dot(nodes, edges) -> str:
    """Graphviz DOT: nodes by service id, edge labels ``KIND resolved [~ambiguous] [?unresolved]``."""
    q = lambda s: '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'  # noqa: E731
    out = ["digraph services {", "  rankdir=LR;", "  node [shape=box];"]
    for n, attrs in nodes:
        out.append(f"  {q(n)} [label={q(n)}{', style=dashed' if n == UNKNOWN else ''}];")
    for e in edges:
        style = ", style=dashed" if not e["resolved"] else ""
        out.append(f"  {q(e['src'])} -> {q(e['dst'])} [label={q(_label(e))}{style}];")
    out.append("}")
    return "\n".join(out) + "\n"


def to_mermaid(nodes, edges) -> str:
    """A Mermaid flowchart; node ids are ``n0, n1 …`` in service order, labels quoted."""
    ids = {n: f"n{i}" for i, (n, _) in enumerate(nodes)}
    esc = lambda s: s.replace('"', "#quot;")  # noqa: E731
    out = ["flowchart LR"]
    for n, _ in nodes:
        out.append(f'  {ids[n]}["{esc(n)}"]')
    for e in edges:
        arrow = "-->" if e["resolved"] else "-.->"
        out.append(f'  {ids[e["src"]]} {arrow}|"{esc(_label(e))}"| {ids[e["dst"]]}')
    return "\n".join(out) + "\n"


def to_graphml(nodes, edges) -> str:
    """GraphML through networkx (a MultiDiGraph: one edge per edge kind)."""
    import networkx as nx
    g = nx.MultiDiGraph()
    for n, attrs in nodes:
        g.add_node(n, **{k: v for k, v in attrs.items() if v is not None})
    for e in edges:
        g.add_edge(e["src"], e["dst"], key=e["edge_kind"], edge_kind=e["edge_kind"], resolved=e["resolved"],
                   ambiguous=e["ambiguous"], unresolved=e["unresolved"], urns=json.dumps(e["urns"]))
    return "\n".join(nx.generate_graphml(g)) + "\n"


def _regular_or_absent(path: Path) -> None:
    """Refuse to replace anything but a regular file: a device, a FIFO, a socket or a link (and what
    it points at) is never turned into a file."""
    if path.is_symlink() or (path.exists() and not path.is_file()):
        raise UserError(f"{path}: exists and is not a regular file; diting replaces only regular files")


def plain_mode(directory: bool) -> int:
    """The mode a plain ``open``/``mkdir`` would give under the current umask (``mkstemp`` and
    ``mkdtemp`` make 0600/0700)."""
    umask = os.umask(0)
    os.umask(umask)
    return (0o777 if directory else 0o666) & ~umask


def write_text_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file beside it, with the mode a plain ``open``
    would give (``mkstemp`` makes it 0600)."""
    if path.is_dir():
        raise UserError(f"{path}: is a directory; give a file name (or '-' for standard output)")
    refuse_inside_package(path, "--out")
    _regular_or_absent(path)
    if not path.parent.is_dir():
        raise UserError(f"{path}: no such directory {path.parent}")
    try:
        fd, tmp = tempfile.mkstemp(prefix=".export-", dir=path.parent)
    except OSError as exc:
        raise UserError(f"{path}: cannot write there ({exc.strerror or exc})") from exc
    try:  # an existing file keeps its mode; a new one gets what a plain open would give
        os.fchmod(fd, stat.S_IMODE(path.stat().st_mode) if path.is_file() else plain_mode(directory=False))
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise UserError(f"{path}: cannot write there ({exc.strerror or exc})") from exc
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def export(con, fmt: str, out: Path, service: str | None = None) -> list[Path]:
    """Write the export; returns the files written. ``out`` is a directory for Parquet and a file
    (or ``-`` for stdout, returning no paths) otherwise. Raises :class:`UserError` for an unknown
    format or service."""
    if fmt not in FORMATS:
        raise UserError(f"unknown export format {fmt!r}; use one of {', '.join(FORMATS)}")
    if fmt == "parquet":
        return _parquet(con, out, service)
    nodes, edges = _service_graph(con, service)
    text = {"graphml": to_graphml, "dot": to_dot, "mermaid": to_mermaid}[fmt](nodes, edges)
    if str(out) == "-":
        print(text, end="")
        return []
    write_text_atomic(out, text)
    return [out]


def _parquet(con, out: Path, service: str | None) -> list[Path]:
    if out.exists() and not out.is_dir():
        raise UserError(f"{out}: Parquet export writes a directory of files; this is a file")
    refuse_inside_package(out, "--out")
    if service is not None:
        if not con.execute("SELECT count(*) FROM packages WHERE service_id = ?", [service]).fetchone()[0]:
            raise UserError(f"no package of service {service!r} in the graph")
    try:
        out.mkdir(exist_ok=True)  # its parent must exist: an export never makes a directory tree
    except OSError as exc:
        raise UserError(f"{out}: cannot create the directory ({exc.strerror or exc})") from exc
    duckdb = import_native("duckdb")
    try:
        return _parquet_files(con, out, service)
    except duckdb.IOException as exc:
        raise UserError(f"{out}: cannot write there ({str(exc).splitlines()[0]})") from exc


#: the file a Parquet export leaves in its directory: a directory holding it (and Parquet files) is a
#: former export, which a new one may overwrite
EXPORT_MARKER = ".diting-export"


def _check_export_dir(out: Path) -> None:
    """Refuse an ``out`` holding anything but a former Parquet export (the marker and ``.parquet``
    files): an export never overwrites a file it did not write, nor writes among someone's files."""
    names = sorted(p.name for p in out.iterdir())
    if not names:
        return
    foreign = [n for n in names if n != EXPORT_MARKER and not n.endswith(".parquet")] if EXPORT_MARKER in names else names
    if foreign:
        raise UserError(f"{out}: a directory holding other files than a Parquet export ({', '.join(foreign[:3])}); "
                        "give a new, empty or former --out directory; nothing was written")


def _parquet_files(con, out: Path, service: str | None) -> list[Path]:
    names = [r[0] for r in con.execute("SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' "
                                       "ORDER BY table_name").fetchall()]
    _check_export_dir(out)  # refuse before writing anything
    for name in (*(f"{n}.parquet" for n in names), EXPORT_MARKER):
        _regular_or_absent(out / name)
    (out / EXPORT_MARKER).write_text("written by diting export --format parquet\n", encoding="utf-8")
    written = []
    for name in names:
        cols = [r[0] for r in con.execute(f"DESCRIBE {name}").fetchall()]
        where = ""
        if service is not None:
            if "scan_id" in cols:
                where = " WHERE scan_id IN (SELECT scan_id FROM packages WHERE service_id = $s)"
            elif "service_id" in cols:
                where = " WHERE service_id = $s"
            elif name == "impact_edges":
                where = (" WHERE src IN (SELECT node FROM impact_nodes n JOIN packages p ON p.scan_id = n.scan_id "
                         "WHERE p.service_id = $s)")
            elif "src_service" in cols:
                where = " WHERE $s IN (src_service, dst_service)"
            elif "repo_id" in cols:
                where = (f" WHERE EXISTS (SELECT 1 FROM packages p WHERE p.service_id = $s AND p.repo_id = "
                         f"{name}.repo_id AND p.commit_sha = {name}.commit_sha)")
        order = "scan_id, record_id" if {"scan_id", "record_id"} <= set(cols) else "ALL"
        target = out / f"{name}.parquet"
        tmp = out / f".{name}.parquet.tmp"
        dest = str(tmp).replace("'", "''")
        sql = f"COPY (SELECT * FROM {name}{where} ORDER BY {order}) TO '{dest}' (FORMAT parquet)"
        try:
            con.execute(sql, {"s": service} if service is not None and where else None)
            os.replace(tmp, target)
        finally:
            tmp.unlink(missing_ok=True)
        written.append(target)
    return written
