"""The statement templates of the pyramid (docs/pyramid.md §7): every sentence diting writes comes from one of
these, filled with names taken from records, and cites the records it is built on.

A template fixes its role and the record families its citations must come from (a citation is a
record_id; its family is the prefix before the first ``:``, and for relations the relation kind).
:func:`statement` refuses a statement that cites nothing or cites a record of another family, so a
statement without a source cannot be made. docs/pyramid.md §7 lists this table (a test keeps the two equal).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Template:
    """One sentence shape: ``role``, ``text`` (``str.format`` fields) and the families a citation
    may have (``entry``, ``method``, ``branch``, ``contract``, ``topic``, ``table``, ``config``,
    ``relation:KIND``)."""

    role: str
    text: str
    cites: tuple[str, ...]


TEMPLATES: dict[str, Template] = {
    # L2 entry cards
    "TRIGGER": Template("TRIGGER", "{entry_kind} {urn} runs {handler}.", ("entry",)),
    "INPUT": Template("INPUT", "{handler} takes ({params}).", ("method",)),
    "CONDITION": Template("CONDITION", "In {method}, {arm} `{condition}`{at}: {outcome}.", ("branch",)),
    "FAILURE": Template("FAILURE", "{method} throws `{exit}`{at}{when}.", ("branch",)),
    "ACTION_CALL": Template("ACTION", "{method} calls {protocol} {urn}{guard}.", ("relation:CALLS",)),
    "ACTION_WRITE": Template("ACTION", "{source} writes {target}{guard}.", ("relation:WRITES",)),
    "ACTION_PUBLISH": Template("ACTION", "{method} publishes to {topic}{guard}.", ("relation:PUBLISHES",)),
    "RESULT_RETURN": Template("RESULT", "{handler} returns {type}.", ("method",)),
    "RESULT_STATE": Template("RESULT", "On success the state of {target} is written ({count} write(s)).",
                             ("relation:WRITES",)),
    "DEPENDENCY_READ": Template("DEPENDENCY", "{source} reads {target}.", ("relation:READS",)),
    "DEPENDENCY_SWITCH": Template("DEPENDENCY", "Config key {key} decides a branch of {method}.",
                                  ("relation:GUARDS",)),
    # L3 service profiles
    "RESPONSIBILITY_ENTRIES": Template("RESPONSIBILITY", "{service} serves {count} entr{ies}: {kinds}.",
                                       ("entry",)),
    "RESPONSIBILITY_PROVIDES": Template("RESPONSIBILITY", "{service} provides {count} {protocol} contract(s) of "
                                        "{group}: {members}.", ("contract",)),
    "RESPONSIBILITY_SOLE_WRITER": Template("RESPONSIBILITY", "{service} is the only service that writes {table}.",
                                           ("table",)),
    "BOUNDARY_CALLS": Template("BOUNDARY", "{service} hands {urn} to {providers}.", ("contract",)),
    "BOUNDARY_CALLED_BY": Template("BOUNDARY", "{service} is called on {urn} by {callers}.",
                                   ("contract", "entry", "service")),
    "BOUNDARY_PUBLISHES": Template("BOUNDARY", "{service} publishes {topic}; {subscribers}.", ("topic",)),
    "BOUNDARY_SUBSCRIBES": Template("BOUNDARY", "{service} reacts to {topic} from {publishers}.", ("topic",)),
    "BOUNDARY_SHARED_TABLE": Template("BOUNDARY", "{service} {op} {table}; {others}.", ("table",)),
}

#: card roles (docs/pyramid.md §3); profiles add RESPONSIBILITY and BOUNDARY
CARD_ROLES = ("TRIGGER", "INPUT", "CONDITION", "ACTION", "RESULT", "FAILURE", "DEPENDENCY")


def family(record_id: str, relation_kind: str | None = None) -> str:
    """The family of a cited record: its id prefix, ``relation:KIND`` for a relation."""
    prefix = record_id.split(":", 1)[0]
    return f"relation:{relation_kind}" if prefix == "relation" and relation_kind else prefix


class TemplateError(ValueError):
    """A statement that would cite nothing, or a record of a family its template does not allow."""


def statement(template_id: str, cites: list[tuple[str, str]], **fields: Any) -> dict[str, Any]:
    """A statement ``{statement_id, role, template, text, source_ref_ids}`` from ``TEMPLATES[template_id]``.

    ``cites``: ``(record_id, family)`` pairs (:func:`family`). The statement_id is a digest of the
    template and the cited record ids (stable while its sources are). Raises :class:`TemplateError`
    for no citation or a citation of a family the template does not allow."""
    t = TEMPLATES[template_id]
    if not cites:
        raise TemplateError(f"{template_id}: a statement must cite at least one record")
    bad = [rid for rid, fam in cites if fam not in t.cites]
    if bad:
        raise TemplateError(f"{template_id} may cite {', '.join(t.cites)}, not {bad[0]}")
    ids = sorted({rid for rid, _ in cites})
    # a backtick in a name would open or close a code span the template did not mean
    fields = {k: v.replace("`", "'") if isinstance(v, str) else v for k, v in fields.items()}
    digest = hashlib.sha256("\n".join([template_id, *ids]).encode("utf-8")).hexdigest()[:16]
    return {"statement_id": f"stmt:{digest}", "role": t.role, "template": template_id,
            "text": t.text.format(**fields), "source_ref_ids": ids}


def templates_table() -> str:
    """The Markdown table of the templates (the pyramid index and docs/pyramid.md §7 carry it)."""
    rows = ["| template | role | text | cites |", "|---|---|---|---|"]
    for tid, t in TEMPLATES.items():
        rows.append(f"| `{tid}` | {t.role} | {t.text.replace('|', chr(92) + '|')} | "
                    f"{', '.join(f'`{c}`' for c in t.cites)} |")
    return "\n".join(rows)
