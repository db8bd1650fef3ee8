"""Logical tables from physical names, only on evidence (docs/sql.md §5).

A physical name collapses into a logical table when

* its suffix is a ``${…}`` placeholder (``order_info_${idx}``: evidence PLACEHOLDER) or a ``<bind>``
  / Java concatenation whose literal head is the stem (``'order_' + id % 8``: evidence BIND);
* at least two literal names of one datasource share a stem and have numeric suffixes of equal
  width, and no table of that stem without a suffix exists there (evidence SIBLINGS);
* routing configuration names it (ShardingSphere ``actual-data-nodes`` — inline expressions such as
  ``ds$->{0..1}.t_order_$->{0..1}`` included — with ``sharding-column``: evidence ROUTING_CONFIG,
  which alone confirms a shard key).

Four-digit ``_19xx``/``_20xx`` and ``_YYYYMM[DD]`` suffixes are dates, not shards. A lone
numeric-suffixed name stays its own table, marked ``shard_candidate_of``.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field

_NUM_SUFFIX = re.compile(r"^(?P<stem>.*?[A-Za-z])_?(?P<num>\d+)$")
_DATE = re.compile(r"^(?:19|20)\d{2}(?:(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])?)?$")
_INLINE = re.compile(r"\$->\{([^{}]*)\}|\$\{([^{}]*)\}")
_RANGE = re.compile(r"^\s*(\d+)\s*\.\.\s*(\d+)\s*$")
#: cap on the physical names one inline expression may expand to
MAX_NODES = 4096


@dataclass
class Routing:
    """A logical table of routing configuration: its physical names, data sources and key."""

    logical: str
    physical: set[str] = field(default_factory=set)
    datasources: set[str] = field(default_factory=set)
    sharding_columns: set[str] = field(default_factory=set)
    #: the columns by the routing they feed: {"database": …, "table": …}
    columns: dict[str, set[str]] = field(default_factory=lambda: {"database": set(), "table": set()})
    source: tuple[str, int] | None = None  # (config file path, line) of actual-data-nodes


@dataclass
class LogicalName:
    """Where a physical name belongs: ``logical`` table, ``evidence`` kinds, ``candidate_of`` for a
    lone numeric suffix (the name stays its own table)."""

    logical: str
    evidence: list[str] = field(default_factory=list)
    candidate_of: str | None = None
    confirmed_key: str | None = None


def is_date_suffix(digits: str) -> bool:
    return bool(_DATE.match(digits))


def split_suffix(name: str) -> tuple[str, str] | None:
    """``(stem, digits)`` of a name ending in digits (``order_info_03`` → ``order_info``, ``03``)."""
    m = _NUM_SUFFIX.match(name)
    if not m:
        return None
    return m.group("stem"), m.group("num")


def expand_inline(expr: str) -> list[str]:
    """Names an inline expression stands for: ``t_order_$->{0..1}`` → ``t_order_0, t_order_1``;
    lists ``$->{[a, b]}`` too. At most :data:`MAX_NODES` (then what was expanded)."""
    parts: list[list[str]] = []
    pos = 0
    for m in _INLINE.finditer(expr):
        parts.append([expr[pos:m.start()]])
        body = (m.group(1) or m.group(2) or "").strip()
        r = _RANGE.match(body)
        if r:
            if max(len(r.group(1)), len(r.group(2))) > 18:  # no real range has such bounds
                return []
            lo, hi = int(r.group(1)), int(r.group(2))
            width = len(r.group(1)) if r.group(1).startswith("0") and len(r.group(1)) > 1 else 0
            if hi - lo > MAX_NODES:
                hi = lo + MAX_NODES
            parts.append([str(i).zfill(width) for i in range(lo, hi + 1)])
        elif body.startswith("[") and body.endswith("]"):
            parts.append([x.strip().strip("'\"") for x in body[1:-1].split(",") if x.strip()])
        else:
            return []
        pos = m.end()
    parts.append([expr[pos:]])
    out = [""]
    for choices in parts:  # capped while built: never the whole product of two large ranges
        out = list(itertools.islice((a + b for a in out for b in choices), MAX_NODES))
    return out


def data_nodes(value: str) -> list[tuple[str | None, str]]:
    """``(datasource, table)`` of an ``actual-data-nodes`` value (comma-separated, inline ok)."""
    out: list[tuple[str | None, str]] = []
    for item in _split_nodes(value):
        for node in expand_inline(item) if ("$" in item) else [item]:
            ds, _, table = node.strip().rpartition(".")
            if table:
                out.append((ds or None, table))
            if len(out) >= MAX_NODES:  # at most MAX_NODES over all items
                return out
    return out


def _split_nodes(value: str) -> list[str]:
    """Split on commas outside ``{…}``."""
    items, depth, cur = [], 0, []
    for ch in value:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth = max(0, depth - 1)
        if ch == "," and depth == 0:
            items.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    items.append("".join(cur))
    return [i.strip() for i in items if i.strip()]


def collapse(names: set[str], routing: dict[str, Routing]) -> dict[str, LogicalName]:
    """Logical name of every literal physical name of one datasource (placeholder and bind names
    are decided by the caller, which knows their expressions)."""
    out: dict[str, LogicalName] = {}
    by_physical = {p.lower(): r for r in routing.values() for p in r.physical}
    stems: dict[str, list[tuple[str, str]]] = {}
    lower = {n.lower() for n in names}
    for n in sorted(names):
        r = by_physical.get(n.lower()) or routing.get(n.lower())
        if r is not None:
            out[n] = LogicalName(r.logical, ["ROUTING_CONFIG"],
                                 confirmed_key=sorted(r.sharding_columns)[0] if len(r.sharding_columns) == 1 else None)
            continue
        sp = split_suffix(n)
        if sp is None or is_date_suffix(sp[1]):
            out[n] = LogicalName(n)
            continue
        stems.setdefault(sp[0].rstrip("_").lower(), []).append((n, sp[1]))
    for stem, members in stems.items():
        widths = {len(d) for _, d in members}
        if len(members) >= 2 and len(widths) == 1 and stem not in lower:
            logical = members[0][0][: len(members[0][0]) - len(members[0][1])].rstrip("_")
            for n, _ in members:
                out[n] = LogicalName(logical, ["SIBLINGS"])
        else:
            for n, d in members:
                logical = n[: len(n) - len(d)].rstrip("_")
                out[n] = LogicalName(n, candidate_of=logical if logical.lower() not in lower else None)
    return out
