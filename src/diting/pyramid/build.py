"""``diting pyramid --db FILE --out DIR``: the L2/L3/L4 layers from a graph, written into the graph's
pyramid tables and as JSON and Markdown pages (one per service, and an index).

The tables (docs/pyramid.md §2) are rebuilt in one transaction; ``diting graph build`` drops them, since a
new package makes them stale. The pages go to a temporary directory beside ``DIR`` and replace it
only when complete (a ``DIR`` that is not a former pyramid output is refused).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from diting.errors import UserError
from diting.ir.canonical import loads as json_loads
from diting.ir.writer import refuse_inside_package
from diting.pyramid.cards import package_cards, target_name
from diting.pyramid.facts import PackageFacts, arm_words, call_text
from diting.pyramid.flows import EntryInfo, FlowBuilder, mermaid
from diting.pyramid.profiles import alignment_rows, data_rows, service_profile
from diting.graph.store import PYRAMID_TABLES, out_of_memory
from diting.interrupts import import_native


#: entry kinds that start no flow (a main method starts the process, not a business path)
NO_FLOW_KINDS = {"MAIN"}
MARKER = ".diting-pyramid"


@dataclass
class Pyramid:
    """Everything one run derived."""

    cards: list[dict[str, Any]]
    rules: list[dict[str, Any]]
    profiles: list[dict[str, Any]]
    flows: list[dict[str, Any]]
    steps: list[dict[str, Any]]
    names: dict[str, str]


def derive(con) -> Pyramid:
    """The pyramid of the current service packages of a graph connection."""
    rows = con.execute("SELECT scan_id, service_id, label, profile_set FROM packages WHERE is_current AND kind = "
                       "'SERVICE' ORDER BY service_id, label, profile_set, scan_id").fetchall()
    # a service's current packages are told apart by label; where one label has several profile sets,
    # by the profile set too (ids and pages of one never overwrite another's)
    per_label: dict[tuple[str, str], int] = {}
    for _, sid, label, _ in rows:
        per_label[(sid, label)] = per_label.get((sid, label), 0) + 1
    pkgs = [(scan_id, sid, label if per_label[(sid, label)] == 1 else f"{label}@{profiles}")
            for scan_id, sid, label, profiles in rows]
    data = data_rows(con)
    alignment = alignment_rows(con)
    cards, rules, profiles = [], [], []
    infos: dict[tuple[str, str], EntryInfo] = {}
    names: dict[str, str] = {}
    for scan_id, _, label in pkgs:
        facts = PackageFacts.load(con, scan_id)
        pc, pr, reaches = package_cards(facts, label)
        cards += pc
        rules += pr
        reached = {m for r in reaches.values() for m in r.methods}
        profiles.append(service_profile(con, facts, label, pc, data, alignment, reached))
        for rid, r in reaches.items():
            e = facts.entities[rid]
            infos[(scan_id, rid)] = EntryInfo(scan_id, facts.service_id, label, rid, e["stable_id"], e["urn"],
                                              e["attributes"], facts, r)
        for rid in list(facts.entities) + list(facts.relations) + list(facts.ledger):
            names.setdefault(rid, facts.name(rid) if not rid.startswith(("relation:", "branch:")) else
                             _relation_name(facts, rid))
    builder = FlowBuilder(infos, alignment)
    flows, steps = [], []
    for key in sorted(infos):
        info = infos[key]
        if info.facts.entities[info.entry_rid]["entry_kind"] in NO_FLOW_KINDS:
            continue
        flow, fsteps = builder.flow(info)
        flow["mermaid"] = mermaid(fsteps, lambda r: names.get(r, r.split(":", 1)[-1] if r else "?"))
        flows.append(flow)
        steps += fsteps
    return Pyramid(cards, rules, profiles, flows, steps, names)


def _relation_name(facts: PackageFacts, rid: str) -> str:
    """How a page names a branch (its arm, worded per arm: ``when not count > 0``) or a relation
    (``calls OrderService#pay(long)``; a call without a target by its text and line: ``Orders#create()
    calls client.get(…) at line 14``)."""
    if rid.startswith("branch:"):
        item = facts.ledger.get(rid)
        if item is None:
            return rid
        arm, code = arm_words(item)
        return f"{arm} {code}{facts.line_note(item)}"
    r = facts.relations.get(rid)
    if r is None:
        return rid
    if r["kind"] == "CALLS" and r["target"] is None:
        return f"{facts.name(r['source'])} calls {call_text(r)}"
    return f"{r['kind'].lower()} {target_name(facts, r)}"


# ---------------------------------------------------------------- tables


def _store(con, p: Pyramid) -> None:
    """Replace the pyramid tables with ``p`` (inside the caller's transaction)."""
    for table, cols in PYRAMID_TABLES.items():
        con.execute(f"DROP TABLE IF EXISTS {table}")
        con.execute(f"CREATE TABLE {table} (" + ", ".join(f'"{c}" {t}' for c, t in cols.items()) + ")")
    rows = {
        "entry_cards": p.cards,
        "business_rules": [{"rule_id": r["rule_id"], "revision_id": r["revision_id"], "service_id": r["service_id"],
                            "document": r} for r in p.rules],
        "service_profiles": p.profiles,
        "flows": p.flows,
        "flow_steps": p.steps,
    }
    for table, cols in PYRAMID_TABLES.items():
        if not rows[table]:
            continue
        # DuckDB reads newline-delimited JSON far faster than it runs INSERT statements (≈40x at 200k rows)
        with tempfile.NamedTemporaryFile("w", encoding="utf-8", suffix=".jsonl", delete=False) as fh:
            for rec in rows[table]:
                fh.write(json.dumps({c: rec.get(c) for c in cols}, sort_keys=True, ensure_ascii=False) + "\n")
        try:
            spec = ", ".join(f"'{c}': '{t}'" for c, t in cols.items())
            con.execute(f"INSERT INTO {table} SELECT {', '.join(chr(34) + c + chr(34) for c in cols)} FROM read_json(?, "
                        f"format = 'newline_delimited', columns = {{{spec}}})", [fh.name])
        finally:
            os.unlink(fh.name)


def build_pyramid(db: Path, out: Path | None) -> Pyramid:
    """Derive the pyramid of ``db``, store its tables, and write the pages under ``out`` (if given).

    One unit of work: the tables are written in a transaction and the pages into a temporary
    directory; the directory is put in ``out``'s place (the former output moved aside), then the
    transaction is committed. A failure or Ctrl-C before the commit rolls back and puts the former
    output back; after it, the former output is removed. Raises :class:`UserError` for a database
    that is no graph or an ``out`` that cannot be written."""
    duckdb = import_native("duckdb")

    from diting.graph.store import check_schema, connect, interrupted
    try:
        if db.exists() and not db.is_file():
            raise UserError(f"{db}: is not a regular file, not a graph database file")
        if not db.is_file():
            raise UserError(f"{db}: no such graph database (build one with 'diting graph build --db {db} …')")
        if out is not None:
            out = Path(os.path.normpath(out.absolute()))
            _check_out(out, db)
    except OSError as exc:
        raise UserError(f"{exc.filename or db}: cannot be read ({exc.strerror or exc})") from None
    con = connect(db)
    tmp: Path | None = None
    moving = committed = False
    aside = out.parent / f".{out.name}.old-{os.getpid()}" if out is not None else None
    existed = out is not None and out.exists()
    try:
        check_schema(con, db)
        if not con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = 'packages'").fetchone()[0]:
            raise UserError(f"{db}: not a diting graph database (no packages table)")
        con.execute("BEGIN TRANSACTION")
        try:
            pyramid = derive(con)
            _store(con, pyramid)
            if out is not None:
                from diting.pyramid.pages import write_pages
                tmp = _filled(out, lambda d: write_pages(pyramid, d))
                moving = True  # from here on, out may hold the new pages and aside the former output
                _swap(tmp, out, aside)  # pages in place before the commit, undone if the commit fails
                tmp = None
            con.execute("COMMIT")
            committed = True
        except BaseException as exc:
            if committed:  # a Ctrl-C just after the commit: the work is done, pages and tables agree
                raise
            try:
                con.execute("ROLLBACK")
            except (duckdb.Error, RuntimeError):
                pass
            if tmp is not None:
                shutil.rmtree(tmp, ignore_errors=True)
            if moving:  # the pages may have gone in: put the former output back
                _unswap(out, aside, existed)
            if interrupted(exc):
                raise KeyboardInterrupt from exc
            if isinstance(exc, duckdb.Error):
                first = str(exc).splitlines()[0]
                hint = "the database or its directory is not writable" if "Permission denied" in first else \
                    out_of_memory(exc) or "rebuild the graph with 'diting graph build'"
                raise UserError(f"{db}: {first} ({hint})") from exc
            raise
    finally:
        try:
            con.close()
        finally:
            if committed and aside is not None and aside.exists():  # the former output, once the work is in
                shutil.rmtree(aside, ignore_errors=True)
    return pyramid


#: what a pyramid output holds; a directory with anything else is not replaced
_OUTPUT_NAMES = {"index.md", "index.json", "services", MARKER}


def _check_out(out: Path, db: Path) -> None:
    """Refuse an ``out`` that is no directory, that holds anything but a former pyramid output (the
    files its index names), that lies inside an IR package, or that holds the database (paths compared
    after following links)."""
    refuse_inside_package(out, "--out")
    if out.is_symlink() or (out.exists() and not out.is_dir()):
        raise UserError(f"{out}: exists and is not a directory (or is a link)")
    if db.resolve().is_relative_to(out.resolve()):
        raise UserError(f"{out}: the graph database {db} is inside it; give another --out")
    if out.is_dir():
        names = {p.name for p in out.iterdir()}
        foreign = sorted(names - _OUTPUT_NAMES) if MARKER in names else sorted(names)
        if not foreign and "services" in names:
            foreign = [f"services/{x}" for x in sorted(_foreign_pages(out))]
        if foreign:
            raise UserError(f"{out}: a directory holding other files than a pyramid output "
                            f"({', '.join(foreign[:3])}); give a new or former --out")
    if not out.parent.is_dir():
        raise UserError(f"{out}: no such directory {out.parent}")


def _foreign_pages(out: Path) -> set[str]:
    """Entries of a former output's ``services/`` its index does not name (all of them when the index
    cannot be read): they are someone's, and a run that would delete them is refused."""
    entries = {p.name for p in (out / "services").iterdir()}
    try:
        index = json_loads((out / "index.json").read_text(encoding="utf-8"))
        pages = {Path(r["page"]).name for r in index["services"]}
    except (OSError, ValueError, KeyError, TypeError):
        return entries
    ours = pages | {p.removesuffix(".md") + ".json" for p in pages}
    return {e for e in entries if e not in ours or not (out / "services" / e).is_file()}


def _filled(out: Path, fill) -> Path:
    """A temporary directory beside ``out`` holding the pages (its mode what ``mkdir`` would give)."""
    from diting.graph.export import plain_mode
    try:
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=out.parent))
    except OSError as exc:
        raise UserError(f"{out}: cannot write there ({exc.strerror or exc})") from exc
    try:
        os.chmod(tmp, plain_mode(directory=True))
        fill(tmp)
        (tmp / MARKER).write_text("written by diting pyramid\n", encoding="utf-8")
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise UserError(f"{out}: cannot write there ({exc.strerror or exc})") from exc
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return tmp


def _swap(tmp: Path, out: Path, aside: Path) -> None:
    """Put ``tmp`` in ``out``'s place, the former output moved to ``aside`` (removed once the work is
    committed, or put back); if a move fails the former output is kept."""
    moved = False
    try:
        if out.exists():
            os.replace(out, aside)
            moved = True
        os.replace(tmp, out)
    except OSError as exc:
        if moved and not out.exists():
            os.replace(aside, out)
        shutil.rmtree(tmp, ignore_errors=True)
        raise UserError(f"{out}: cannot write there ({exc.strerror or exc}); the former output is kept") from exc


def _unswap(out: Path, aside: Path, existed: bool) -> None:
    """Undo :func:`_swap` after a failure: the new pages go, the former output (if any) comes back."""
    if aside.exists():
        shutil.rmtree(out, ignore_errors=True)
        os.replace(aside, out)
    elif not existed and out.exists():
        shutil.rmtree(out, ignore_errors=True)
