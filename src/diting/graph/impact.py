"""``diting impact``: what a change to a contract, topic, table, config key or method may reach (docs/graph.md §8).

At build time :func:`materialise` writes ``impact_edges`` over the current packages: one row per
"a change at src may affect dst" hop, with the hop's kind, its resolution status and the record that
is its evidence. :func:`impact` then walks those hops breadth-first from every entity the target
names.

Hops (src → dst):

============  ===============================================================  =====================
hop           meaning                                                          from
============  ===============================================================  =====================
CALLER        a method → each method that calls it (AMBIGUOUS per candidate)    CALLS
CALLEE        a method → each in-repo method it calls (sees its arguments)      CALLS
INVOKES       a consumed contract → each method that calls it                   CALLS (remote)
HANDLES       a handler method → its entry                                      ENTRY.handler_ref
PROVIDES      a provider entry → the provided contract of its urn and signature ENTRY, CONTRACT
CONSUMES      a provided contract → each consumed contract aligned to it        alignment RPC/HTTP
EMITS         a method → the topic it publishes                                 PUBLISHES
DELIVERS      a publisher's topic → each subscriber entry that admits it        alignment MQ
LISTENS       a topic → the entries of the package that subscribe to it         SUBSCRIBES
RECEIVES      an entry → its handler method (a message, request or contract      ENTRY.handler_ref
              change reaches the code that handles it)
STORES        a method → a table or cache key it writes (directly, or through   WRITES, BINDS_TO,
              the mapper method it calls)                                       CALLS
READ_BY       a table, cache or config key → the method (or mapper method)      READS, BINDS_TO
              that reads it
WRITTEN_BY    a table → the mapper method that writes it (from the target only) WRITES, BINDS_TO
SHARES        a table → the same table in another service (writer → accessor)  alignment DATA
GUARDS        a config key → the method whose branch it guards                  GUARDS
CONFIGURES    a config key → the entity its binding configures                  config_bindings
FIELD_READ    a configured field → each method of its class (the IR records no  CONTAINS
              field reads: every method that could read it, POTENTIAL)
============  ===============================================================  =====================

Impact types: each hop has a strength per change type (:data:`STRENGTH`; SUPPORTED — the change
travels this hop; POTENTIAL — it may; DEPENDENCY_ONLY — the dst depends on the src, but this kind
of change does not travel this hop); an AMBIGUOUS hop is at most POTENTIAL. Direction: a node reached
upwards (through CALLER, INVOKES, HANDLES, PROVIDES, CONSUMES) does not go down into its callees,
and what it writes or sends is POTENTIAL at most; a node reached through CALLEE never goes up — a
valid path never returns to a caller it did not come from. A path
is as strong as its weakest hop and an item as strong as its strongest path; a walk does not go on
from a DEPENDENCY_ONLY item. ``--depth`` bounds the cross-service
hops (CONSUMES, DELIVERS, SHARES between two services) on a path; ``budget`` bounds the entities
expanded. What a limit stops is the ``frontier``; ``enumeration_complete`` is true only with an empty
frontier and no ``unknowns`` (unresolved calls that may call a reached method, remote calls the scan
could not fold while a provided contract is reached). No path is never "no impact".

Each item says why it is reached: ``reason`` is its best path in words (:data:`HOP_SENTENCES`, each
hop with where its evidence stands), ``rank`` orders the items of one impact type by hops and then by
uncertain hops (hops that are not SUPPORTED on that path); ``counts`` totals the items by impact type.
"""

from __future__ import annotations

import re
from collections import defaultdict, deque
from dataclasses import dataclass, field
from typing import Any

from diting.errors import UserError
from diting.limits import MAX_IMPACT_BUDGET, MAX_IMPACT_DEPTH, MIN_IMPACT_DEPTH

CHANGE_TYPES = ("LOGIC", "FIELD", "STATE", "TABLE_FIELD", "CONFIG")
IMPACT_ORDER = {"DEPENDENCY_ONLY": 0, "POTENTIAL": 1, "SUPPORTED": 2}
_NAMES = {v: k for k, v in IMPACT_ORDER.items()}
CROSS_SERVICE_HOPS = {"CONSUMES", "DELIVERS", "SHARES"}
#: hops towards what depends on a behaviour (callers, entries, consumers)
UP_HOPS = {"CALLER", "INVOKES", "HANDLES", "PROVIDES", "CONSUMES"}
#: hops down into code that receives what the source passes (a callee its arguments, a handler its
#: message or request); a node reached upwards never takes them (every callee of every caller is not
#: what a change reaches)
DOWN_HOPS = {"CALLEE", "RECEIVES"}
#: a node reached through CALLEE never goes up again: its other callers are not on a valid path
CALLEE_HOPS = {"CALLEE"}
#: taken only from the target itself (every writer of a table whose column changes)
START_ONLY_HOPS = {"WRITTEN_BY"}

#: record_id family prefixes (docs/ir.md §2.3): a target that starts with one is a record_id
RECORD_PREFIXES = {"module", "artifact", "service", "type", "method", "field", "bean", "entry", "contract", "topic",
                   "event", "table", "stmt", "config", "cache", "ext"}

S, P, D = "SUPPORTED", "POTENTIAL", "DEPENDENCY_ONLY"
#: hop strength by change type; a hop not listed for a type is POTENTIAL
STRENGTH: dict[str, dict[str, str]] = {
    # behaviour: callers and consumers see it; what it writes or sends may differ
    "LOGIC": {"CALLER": S, "INVOKES": S, "HANDLES": S, "PROVIDES": S, "CONSUMES": S, "RECEIVES": S,
              "EMITS": P, "STORES": P, "DELIVERS": P, "READ_BY": P, "SHARES": P},
    # a field of a payload: it crosses the wire and the message; callers beyond may not use it
    "FIELD": {"HANDLES": S, "PROVIDES": S, "CONSUMES": S, "INVOKES": S, "EMITS": S, "DELIVERS": S,
              "RECEIVES": S, "LISTENS": S, "CALLER": P, "STORES": P, "READ_BY": P, "SHARES": P},
    # a state value (status column, event state): it travels through stored data and messages
    "STATE": {"STORES": S, "READ_BY": S, "SHARES": S, "EMITS": S, "DELIVERS": S, "LISTENS": S, "RECEIVES": S,
              "WRITTEN_BY": S, "CALLER": P, "INVOKES": P, "HANDLES": P, "PROVIDES": P, "CONSUMES": P},
    # a column of a table: every statement and service that reads or writes it
    "TABLE_FIELD": {"READ_BY": S, "WRITTEN_BY": S, "SHARES": S, "CALLER": P, "INVOKES": P, "HANDLES": P,
                    "PROVIDES": P, "CONSUMES": P, "EMITS": D, "DELIVERS": D, "STORES": D},
    # a config value: the methods it guards or configures; other services only depend on them
    "CONFIG": {"GUARDS": S, "CONFIGURES": S, "READ_BY": S, "CALLER": P, "HANDLES": P, "PROVIDES": P,
               "INVOKES": P, "CONSUMES": D, "DELIVERS": D, "SHARES": D, "EMITS": P, "STORES": P},
}

_CUR = "SELECT scan_id FROM packages WHERE is_current"

#: the views every hop query reads: the current packages' relations and entities, mapper bindings
_HOP_VIEWS = f"""WITH cur AS ({_CUR}),
rel AS (SELECT r.* FROM relations r JOIN cur USING (scan_id)),
ent AS (SELECT e.* FROM entities e JOIN cur USING (scan_id)),
binds AS (SELECT scan_id, source_ref.record_id AS mapper, target_ref.record_id AS stmt FROM rel
          WHERE kind = 'BINDS_TO' AND resolution_status = 'RESOLVED' AND target_ref.record_id LIKE 'stmt:%')"""

#: one query per hop kind, each giving (hop, src_scan, src_id, dst_scan, dst_id, status, evidence) over
#: the current packages (run one by one: as one UNION the planner goes quadratic at estate size)
_HOP_QUERIES = [
    """SELECT CASE WHEN target_ref.record_id LIKE 'contract:%' THEN 'INVOKES' ELSE 'CALLER' END, scan_id,
       target_ref.record_id, scan_id, source_ref.record_id, 'RESOLVED', {'scan_id': scan_id, 'record_id': record_id}
FROM rel WHERE kind = 'CALLS' AND resolution_status = 'RESOLVED' AND target_ref.record_id NOT LIKE 'ext:%'""",
    """SELECT 'CALLER', scan_id, c.record_id, scan_id, source_ref.record_id, 'AMBIGUOUS',
       {'scan_id': scan_id, 'record_id': r.record_id}
FROM (SELECT *, unnest(candidate_target_refs) AS c FROM rel WHERE kind = 'CALLS' AND resolution_status = 'AMBIGUOUS') r""",
    """SELECT 'CALLEE', scan_id, source_ref.record_id, scan_id, target_ref.record_id, resolution_status,
       {'scan_id': scan_id, 'record_id': record_id}
FROM rel WHERE kind = 'CALLS' AND resolution_status = 'RESOLVED' AND target_ref.record_id LIKE 'method:%'""",
    """SELECT 'CALLEE', scan_id, source_ref.record_id, scan_id, c.record_id, 'AMBIGUOUS',
       {'scan_id': scan_id, 'record_id': r.record_id}
FROM (SELECT *, unnest(candidate_target_refs) AS c FROM rel WHERE kind = 'CALLS' AND resolution_status = 'AMBIGUOUS') r""",
    """SELECT 'HANDLES', scan_id, handler_ref.record_id, scan_id, record_id, 'RESOLVED', {'scan_id': scan_id, 'record_id': record_id}
FROM ent WHERE kind = 'ENTRY' AND handler_ref IS NOT NULL""",
    """SELECT 'RECEIVES', scan_id, record_id, scan_id, handler_ref.record_id, 'RESOLVED',
       {'scan_id': scan_id, 'record_id': record_id}
FROM ent WHERE kind = 'ENTRY' AND handler_ref IS NOT NULL""",
    """SELECT 'PROVIDES', e.scan_id, e.record_id, c.scan_id, c.record_id, 'RESOLVED',
       {'scan_id': c.scan_id, 'record_id': c.record_id}
FROM ent e JOIN ent m ON m.scan_id = e.scan_id AND m.record_id = e.handler_ref.record_id
JOIN ent c ON c.scan_id = e.scan_id AND c.kind = 'CONTRACT' AND c.role = 'PROVIDED' AND c.urn = e.urn
     AND CAST(c.signature AS VARCHAR) = CAST(m.signature AS VARCHAR)
WHERE e.kind = 'ENTRY'""",
    """SELECT 'CONSUMES', dst_ref.scan_id, dst_ref.record_id, src_node_ref.scan_id, src_node_ref.record_id,
       resolution_status, src_ref
FROM alignment WHERE edge_kind IN ('RPC', 'HTTP') AND dst_ref IS NOT NULL AND src_node_ref IS NOT NULL""",
    """SELECT 'EMITS', scan_id, source_ref.record_id, scan_id, target_ref.record_id, 'RESOLVED',
       {'scan_id': scan_id, 'record_id': record_id}
FROM rel WHERE kind = 'PUBLISHES' AND resolution_status = 'RESOLVED'""",
    """SELECT 'DELIVERS', r.scan_id, r.target_ref.record_id, a.dst_ref.scan_id, a.dst_ref.record_id, a.resolution_status, a.src_ref
FROM alignment a JOIN relations r ON r.scan_id = a.src_ref.scan_id AND r.record_id = a.src_ref.record_id
WHERE a.edge_kind = 'MQ' AND a.dst_ref IS NOT NULL""",
    """SELECT 'LISTENS', scan_id, target_ref.record_id, scan_id, source_ref.record_id, 'RESOLVED',
       {'scan_id': scan_id, 'record_id': record_id}
FROM rel WHERE kind = 'SUBSCRIBES' AND resolution_status = 'RESOLVED'""",
    """SELECT 'STORES', scan_id, source_ref.record_id, scan_id, target_ref.record_id, 'RESOLVED',
       {'scan_id': scan_id, 'record_id': record_id}
FROM rel WHERE kind = 'WRITES' AND source_ref.record_id LIKE 'method:%' AND resolution_status = 'RESOLVED'""",
    """SELECT DISTINCT 'STORES', c.scan_id, c.source_ref.record_id, c.scan_id, w.target_ref.record_id, 'RESOLVED',
       {'scan_id': c.scan_id, 'record_id': c.record_id}
FROM rel c JOIN binds b ON b.scan_id = c.scan_id AND b.mapper = c.target_ref.record_id
JOIN rel w ON w.scan_id = b.scan_id AND w.source_ref.record_id = b.stmt AND w.kind = 'WRITES'
     AND w.resolution_status = 'RESOLVED'
WHERE c.kind = 'CALLS' AND c.resolution_status = 'RESOLVED'""",
    """SELECT 'READ_BY', scan_id, target_ref.record_id, scan_id, source_ref.record_id, 'RESOLVED',
       {'scan_id': scan_id, 'record_id': record_id}
FROM rel WHERE kind = 'READS' AND source_ref.record_id LIKE 'method:%' AND resolution_status = 'RESOLVED'""",
    """SELECT CASE r.kind WHEN 'READS' THEN 'READ_BY' ELSE 'WRITTEN_BY' END, r.scan_id, r.target_ref.record_id,
       r.scan_id, b.mapper, 'RESOLVED', {'scan_id': r.scan_id, 'record_id': r.record_id}
FROM rel r JOIN binds b ON b.scan_id = r.scan_id AND b.stmt = r.source_ref.record_id
WHERE r.kind IN ('READS', 'WRITES') AND r.resolution_status = 'RESOLVED'""",
    """SELECT 'SHARES', src_ref.scan_id, src_ref.record_id, dst_ref.scan_id, dst_ref.record_id, resolution_status, src_ref
FROM alignment WHERE edge_kind = 'DATA'""",
    """SELECT 'GUARDS', scan_id, source_ref.record_id, scan_id, target_ref.record_id, 'RESOLVED',
       {'scan_id': scan_id, 'record_id': record_id}
FROM rel WHERE kind = 'GUARDS' AND resolution_status = 'RESOLVED'""",
    """SELECT DISTINCT 'FIELD_READ', b.scan_id, b.consumer_ref.record_id, b.scan_id, cm.target_ref.record_id, 'RESOLVED',
       {'scan_id': b.scan_id, 'record_id': cm.record_id}
FROM config_bindings b JOIN cur USING (scan_id)
JOIN rel cf ON cf.scan_id = b.scan_id AND cf.kind = 'CONTAINS' AND cf.target_ref.record_id = b.consumer_ref.record_id
JOIN rel cm ON cm.scan_id = b.scan_id AND cm.kind = 'CONTAINS' AND cm.source_ref.record_id = cf.source_ref.record_id
     AND cm.target_ref.record_id LIKE 'method:%'
WHERE b.consumer_ref.record_id LIKE 'field:%'""",
    """SELECT DISTINCT 'CONFIGURES', b.scan_id, k.record_id, b.scan_id, b.consumer_ref.record_id, 'RESOLVED',
       {'scan_id': b.scan_id, 'record_id': b.record_id}
FROM config_bindings b JOIN cur USING (scan_id)
JOIN ent k ON k.scan_id = b.scan_id AND k.kind = 'CONFIG_KEY' AND k.urn = b.config_key""",
]

IMPACT_DDL = (
    # one node per entity a hop touches, numbered in (scan_id, record_id) order, with what a report shows
    """CREATE TABLE IF NOT EXISTS impact_nodes (node INTEGER, scan_id VARCHAR, record_id VARCHAR, kind VARCHAR,
    service_id VARCHAR, stable_id VARCHAR, urn VARCHAR, entry_kind VARCHAR)""",
    # the hops between them, sorted by source node (a walk reads them a level at a time)
    """CREATE TABLE IF NOT EXISTS impact_edges (src INTEGER, hop VARCHAR, dst INTEGER, status VARCHAR,
    cross_package BOOLEAN, evidence STRUCT(scan_id VARCHAR, record_id VARCHAR))""",
    # each package's node range (nodes are numbered in scan_id order) and which packages a hop joins
    """CREATE TABLE IF NOT EXISTS impact_packages (scan_id VARCHAR, lo INTEGER, hi INTEGER)""",
    """CREATE TABLE IF NOT EXISTS impact_package_hops (src_scan VARCHAR, dst_scan VARCHAR, hop VARCHAR)""",
    # call sites the scan left UNRESOLVED, by the name and arity they were looking for
    """CREATE TABLE IF NOT EXISTS impact_unresolved_calls (scan_id VARCHAR, record_id VARCHAR, name VARCHAR,
    arity INTEGER)""",
)


def materialise(con) -> int:
    """Rewrite ``impact_nodes``, ``impact_edges`` and ``impact_unresolved_calls`` over the current
    packages (inside the caller's transaction); returns the number of hops."""
    for ddl in IMPACT_DDL:
        con.execute(ddl)
    for table in ("impact_edges", "impact_nodes", "impact_packages", "impact_package_hops",
                  "impact_unresolved_calls"):
        con.execute(f"DELETE FROM {table}")
    con.execute("CREATE TEMP TABLE _hops (c1 VARCHAR, c2 VARCHAR, c3 VARCHAR, c4 VARCHAR, c5 VARCHAR, c6 VARCHAR, "
                "c7 STRUCT(scan_id VARCHAR, record_id VARCHAR))")
    for q in _HOP_QUERIES:
        con.execute(f"INSERT INTO _hops {_HOP_VIEWS}\n{q}")
    con.execute("""INSERT INTO impact_nodes
        SELECT (row_number() OVER (ORDER BY n.scan_id, n.record_id) - 1)::INTEGER, n.scan_id, n.record_id, e.kind,
               p.service_id, e.stable_id, e.urn, e.entry_kind
        FROM (SELECT c2 AS scan_id, c3 AS record_id FROM _hops UNION SELECT c4, c5 FROM _hops) n
        JOIN packages p ON p.scan_id = n.scan_id
        LEFT JOIN entities e ON e.scan_id = n.scan_id AND e.record_id = n.record_id""")
    con.execute("""INSERT INTO impact_edges
        SELECT s.node, h.c1, d.node, h.c6, h.c2 <> h.c4, h.c7 FROM _hops h
        JOIN impact_nodes s ON s.scan_id = h.c2 AND s.record_id = h.c3
        JOIN impact_nodes d ON d.scan_id = h.c4 AND d.record_id = h.c5
        ORDER BY s.node, h.c1, d.node""")
    con.execute("DROP TABLE _hops")
    con.execute("INSERT INTO impact_packages SELECT scan_id, min(node), max(node) FROM impact_nodes GROUP BY 1 "
                "ORDER BY 1")
    con.execute("""INSERT INTO impact_package_hops
        SELECT DISTINCT s.scan_id, d.scan_id, e.hop FROM impact_edges e
        JOIN impact_nodes s ON s.node = e.src JOIN impact_nodes d ON d.node = e.dst
        WHERE e.cross_package ORDER BY ALL""")
    con.execute("""INSERT INTO impact_unresolved_calls
        SELECT r.scan_id, r.record_id, r.match_keys->>'name', TRY_CAST(r.match_keys->>'arity' AS INTEGER)
        FROM relations r JOIN packages p ON p.scan_id = r.scan_id AND p.is_current
        WHERE r.kind = 'CALLS' AND r.resolution_status = 'UNRESOLVED'""")
    return con.execute("SELECT count(*) FROM impact_edges").fetchone()[0]


Node = int


#: a walk state: a node and the directions still open to it — (node, can_up, can_go_down, upward)
State = tuple[Node, bool, bool, bool]


@dataclass
class _Reach:
    """How a state was reached: its impact strength, cross-service hops, and up to three parents
    ``(parent state, hop, status, evidence ref)``."""

    strength: int
    depth: int
    parents: list[tuple[State, str, str, dict[str, str] | None]] = field(default_factory=list)
    steps: int = 0  # hops on the best path


def _targets(con, target: str) -> list[tuple[str, str]]:
    rows = con.execute(
        "SELECT DISTINCT e.scan_id, e.record_id FROM entities e JOIN packages p ON p.scan_id = e.scan_id "
        "AND p.is_current WHERE e.urn = $t OR e.stable_id = $t OR e.record_id = $t ORDER BY 1, 2",
        {"t": target}).fetchall()
    if rows:
        return [(a, b) for a, b in rows]
    near = [r[0] for r in con.execute(
        "SELECT DISTINCT coalesce(e.urn, e.stable_id) FROM entities e JOIN packages p ON p.scan_id = e.scan_id "
        "AND p.is_current WHERE e.kind IN ('CONTRACT', 'TOPIC', 'TABLE', 'CONFIG_KEY', 'CACHE_KEY', 'METHOD', "
        "'SQL_STATEMENT') AND contains(lower(coalesce(e.urn, e.stable_id)), lower($t)) ORDER BY 1 LIMIT 5",
        {"t": target}).fetchall()]
    hint = ("; did you mean: " + ", ".join(near)) if near else (
        "; give a contract, topic, table or config key urn (jsf://…, rocketmq://…, table://…, config://…) or a "
        "method stable_id ({groupId}:{artifactId}/{FQN}#{name}({params}))")
    raise UserError(f"no entity of a current package has urn or stable_id {target!r}{hint}")


def impact(con, target: str, change_type: str, depth: int = 2, budget: int = 20_000,
           max_paths: int = 3) -> dict[str, Any]:
    """Walk ``impact_edges`` from every current entity whose urn, stable_id or record_id is
    ``target``. Returns ``{target, change_type, depth, start, items, frontier, unknowns,
    enumeration_complete, counts, summary}``; each item is ``{target, impact_type, reason, rank,
    path_length, uncertain_hops, cross_service_hops, paths, evidence_refs}``, each hop of a path
    ``{hop, from, to, status, impact_type, evidence_ref, location, reason}``.

    Raises :class:`UserError` for an unknown change type, a depth outside 1..3, a budget outside
    1..:data:`~diting.limits.MAX_IMPACT_BUDGET`, or a target no
    current entity has."""
    if change_type not in CHANGE_TYPES:
        raise UserError(f"unknown change type {change_type!r}; use one of {', '.join(CHANGE_TYPES)}")
    if not MIN_IMPACT_DEPTH <= depth <= MAX_IMPACT_DEPTH:
        raise UserError(f"--depth must be 1, 2 or 3 (got {depth})")
    if not 1 <= budget <= MAX_IMPACT_BUDGET:
        raise UserError(f"--budget must be from 1 to {MAX_IMPACT_BUDGET} (got {budget})")
    # one column by the target's shape (a scan of one column is several times cheaper), then all three
    column = "urn" if re.match(r"^[a-z][a-z0-9+.-]*://", target) else (
        "record_id" if target.split(":", 1)[0] in RECORD_PREFIXES else "stable_id")
    start_rows = con.execute(f"SELECT node, scan_id, record_id FROM impact_nodes WHERE {column} = $t ORDER BY 1",
                             {"t": target}).fetchall() or con.execute(
        "SELECT node, scan_id, record_id FROM impact_nodes WHERE urn = $t OR stable_id = $t OR record_id = $t "
        "ORDER BY 1", {"t": target}).fetchall()
    # an entity no hop touches has no node; it is still the target (found among the entities)
    start_refs = [(a, b) for _, a, b in start_rows] or _targets(con, target)
    starts: list[Node] = [r[0] for r in start_rows]
    strength = STRENGTH[change_type]
    # the walk runs over states, so that each path it reports is one the direction rules allow
    first: list[State] = [(n, True, True, False) for n in starts]
    reach: dict[State, _Reach] = {st: _Reach(IMPACT_ORDER[S], 0) for st in first}
    start_set = set(starts)
    queue: deque[State] = deque(first)
    frontier: list[tuple[Node, str, Node | None, str | None]] = []  # (node, reason, from, hop)
    expanded = 0
    adjacency = _neighbourhood(con, starts, depth)
    while queue:
        if expanded >= budget:
            break
        state = queue.popleft()
        expanded += 1
        src, can_up, can_down, upward = state
        r = reach[state]
        for _, hop, dst, status, cross, ev in adjacency.get(src, ()):
            up = hop in UP_HOPS
            if (hop in START_ONLY_HOPS and src not in start_set) or (up and not can_up) or \
                    (hop in DOWN_HOPS and not can_down) or dst in start_set:
                continue
            s = min(r.strength, IMPACT_ORDER[_hop_strength(strength, hop, status, upward)])
            d = r.depth + (1 if hop in CROSS_SERVICE_HOPS and cross else 0)
            if d > depth:
                frontier.append((dst, "DEPTH", src, hop))
                continue
            nxt: State = (dst, hop not in CALLEE_HOPS, not up, up)
            parent = (state, hop, status, dict(ev) if ev else None)
            cur = reach.get(nxt)
            # a DEPENDENCY_ONLY item depends on the change without being changed: what depends on it
            # is not reached through it
            grow = s > IMPACT_ORDER[D]
            if cur is None:
                reach[nxt] = _Reach(s, d, [parent], r.steps + 1)
                if grow:
                    queue.append(nxt)
            elif s > cur.strength or (s == cur.strength and d < cur.depth):
                cur.strength, cur.depth, cur.steps = s, d, r.steps + 1
                cur.parents = [parent] + [p for p in cur.parents if p[0] != state][:max_paths - 1]
                if grow:
                    queue.append(nxt)
            elif s == cur.strength and len(cur.parents) < max_paths and all(p[0] != state for p in cur.parents):
                cur.parents.append(parent)
    frontier += [(st[0], "BUDGET", None, None) for st in queue]
    # a node a limit stopped on one path but reached on another is not unexpanded; one row per node
    reached_nodes = {st[0] for st in reach}
    seen: set[tuple[Node, str]] = set()
    kept = []
    for f in frontier:
        if (f[0], f[1]) in seen or (f[1] == "DEPTH" and f[0] in reached_nodes):
            continue
        seen.add((f[0], f[1]))
        kept.append(f)
    return _report(con, target, change_type, depth, start_refs, starts, reach, kept, max_paths)


def _sql_list(names: set[str]) -> str:
    return ", ".join(f"'{n}'" for n in sorted(names))


def _neighbourhood(con, starts: list[Node], depth: int) -> dict[Node, list[tuple]]:
    """The hops out of every node the walk can reach, in two queries: a recursive query finds the
    nodes under the same direction, start-only and depth rules the walk applies (strengths aside, so
    it finds at least what the walk will), then their hops are read at once. Returns node → hops
    ``(src, hop, dst, status, cross_package, evidence)`` in (hop, dst) order."""
    if not starts:
        return {}
    # the packages a walk of this depth can enter, and so the node ranges whose hops it reads: the
    # recursive join then reads those rows only (nodes are numbered in scan_id order)
    scans = {r[0] for r in con.execute("SELECT DISTINCT n.scan_id FROM impact_nodes n JOIN "
                                       "(SELECT unnest($s) AS s) f ON f.s = n.node", {"s": starts}).fetchall()}
    hops: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for a, b, hop in con.execute("SELECT src_scan, dst_scan, hop FROM impact_package_hops").fetchall():
        hops[a].append((b, hop))
    best = {sc: 0 for sc in scans}
    todo = deque(sorted(scans))
    while todo:
        sc = todo.popleft()
        for nxt, hop in hops.get(sc, ()):
            d = best[sc] + (1 if hop in CROSS_SERVICE_HOPS else 0)
            if d <= depth and d < best.get(nxt, depth + 1):
                best[nxt] = d
                todo.append(nxt)
    ranges = con.execute("SELECT lo, hi FROM impact_packages p JOIN (SELECT unnest($p) AS p) f ON f.p = p.scan_id "
                         "ORDER BY 1", {"p": sorted(best)}).fetchall()
    within = " OR ".join(f"src BETWEEN {int(lo)} AND {int(hi)}" for lo, hi in ranges) or "false"
    cross = (f"CASE WHEN e.hop IN ({_sql_list(CROSS_SERVICE_HOPS)}) AND e.cross_package THEN 1 ELSE 0 END")
    rows = con.execute(
        f"""WITH RECURSIVE e_in AS MATERIALIZED (SELECT * FROM impact_edges WHERE {within}),
           walk(node, can_up, can_callee, depth) AS (
               SELECT unnest($s), true, true, 0
               UNION
               SELECT e.dst, e.hop NOT IN ({_sql_list(CALLEE_HOPS)}), e.hop NOT IN ({_sql_list(UP_HOPS)}),
                      w.depth + {cross}
               FROM walk w JOIN e_in e ON e.src = w.node
               WHERE (w.can_up OR e.hop NOT IN ({_sql_list(UP_HOPS)}))
                 AND (w.can_callee OR e.hop NOT IN ({_sql_list(DOWN_HOPS)}))
                 AND (e.hop NOT IN ({_sql_list(START_ONLY_HOPS)}) OR list_contains($s, w.node))
                 AND NOT list_contains($s, e.dst) AND w.depth + {cross} <= $d)
           SELECT e.src, e.hop, e.dst, e.status, e.cross_package, e.evidence
           FROM e_in e JOIN (SELECT DISTINCT node FROM walk) r ON r.node = e.src
           ORDER BY 1, 2, 3""", {"s": starts, "d": depth}).fetchall()
    adjacency: dict[Node, list[tuple]] = defaultdict(list)
    for r in rows:
        adjacency[r[0]].append(r)
    return adjacency


def _describe(con, nodes: list[Node]) -> dict[Node, dict[str, Any]]:
    out: dict[Node, dict[str, Any]] = {}
    if not nodes:
        return out
    for node, scan, rid, kind, sid, stable, urn, ek in con.execute(
            "SELECT n.node, n.scan_id, n.record_id, n.kind, n.service_id, n.stable_id, n.urn, n.entry_kind "
            "FROM impact_nodes n JOIN (SELECT DISTINCT unnest($n) AS n) f ON f.n = n.node", {"n": nodes}).fetchall():
        d = {"service_id": sid, "kind": kind, "stable_id": stable, "scan_id": scan, "record_id": rid}
        if urn:
            d["urn"] = urn
        if ek:
            d["entry_kind"] = ek
        out[node] = d
    return out


def _ref(info: dict[Node, dict[str, Any]], n: Node) -> dict[str, str]:
    return {"scan_id": info[n]["scan_id"], "record_id": info[n]["record_id"]}


def _hop_strength(strength: dict[str, str], hop: str, status: str, upward: bool) -> str:
    """What one hop lets through on a path (:data:`STRENGTH` of its kind, POTENTIAL at most when it is
    not RESOLVED or when it leaves a node reached upwards other than upwards)."""
    s = IMPACT_ORDER[strength.get(hop, P)]
    if status != "RESOLVED" or (upward and hop not in UP_HOPS):
        s = min(s, IMPACT_ORDER[P])
    return _NAMES[s]


def _path(reach: dict[State, _Reach], info: dict[Node, dict[str, Any]], state: State, first: int,
          strength: dict[str, str]) -> list[dict[str, Any]] | None:
    """The hops from a start to ``state``, leaving it through its ``first``-th parent, then through
    each state's best parent; None when that parent's own path runs through ``state`` (an alternate
    parent found later, downstream of it). Each hop says what it lets through (``impact_type``)."""
    steps: list[dict[str, Any]] = []
    seen = {state}
    cur, k = state, first
    while reach[cur].parents:
        src, hop, status, ev = reach[cur].parents[k]
        steps.append({"hop": hop, "from": _ref(info, src[0]), "to": _ref(info, cur[0]), "status": status,
                      "impact_type": _hop_strength(strength, hop, status, src[3]), "evidence_ref": ev})
        if src in seen:
            return None
        seen.add(src)
        cur, k = src, 0
    return list(reversed(steps))


def _unknowns(con, info: dict[Node, dict[str, Any]], reached: list[Node]) -> list[dict[str, Any]]:
    """Unresolved call sites that may lead to a reached method (same package, same name and arity,
    or a reflective call), and remote calls the scan could not fold while a provided contract is
    reached."""
    methods = [info[n] for n in reached if info[n]["kind"] == "METHOD"]
    out: list[dict[str, Any]] = []
    if methods:
        names = [m["stable_id"].rsplit("#", 1)[-1] for m in methods]
        rows = con.execute(
            """WITH m AS (SELECT unnest($s) AS scan_id, unnest($n) AS name, unnest($a) AS arity)
               SELECT DISTINCT u.scan_id, u.record_id, u.name IS NOT NULL
               FROM impact_unresolved_calls u JOIN (SELECT DISTINCT scan_id FROM m) ms USING (scan_id)
               WHERE u.name IS NULL OR EXISTS (SELECT 1 FROM m WHERE m.scan_id = u.scan_id AND m.name = u.name
                                               AND (u.arity IS NULL OR u.arity = m.arity))
               ORDER BY 1, 2""",
            {"s": [m["scan_id"] for m in methods], "n": [n.split("(", 1)[0] for n in names],
             "a": [0 if n.endswith("()") else n.count(",") + 1 for n in names]}).fetchall()
        for scan, rid, named in rows:
            out.append({"kind": "UNRESOLVED_CALLER" if named else "DYNAMIC_CALL",
                        "ref": {"scan_id": scan, "record_id": rid}})
    if any(info[n]["kind"] == "CONTRACT" and info[n]["record_id"].startswith("contract:PROVIDED") for n in reached):
        for (scan, rid) in con.execute(
                "SELECT src_ref.scan_id, src_ref.record_id FROM alignment WHERE match_basis = 'SOURCE_UNRESOLVED' "
                "AND edge_kind IN ('RPC', 'HTTP') ORDER BY 1, 2").fetchall():
            out.append({"kind": "UNFOLDED_REMOTE_CALL", "ref": {"scan_id": scan, "record_id": rid}})
    return out


def _locations(con, refs: set[tuple[str, str]]) -> dict[tuple[str, str], dict[str, Any]]:
    """Where each record (a relation, entity or config binding) stands in the source: the path and
    first line of its first evidence segment. ``(scan_id, record_id) → {path, start_line}``; a
    record without a segment is absent."""
    if not refs:
        return {}
    scans, rids = zip(*sorted(refs))
    rows = con.execute(
        """WITH want AS (SELECT unnest($s) AS scan_id, unnest($r) AS record_id),
           recs AS (SELECT scan_id, record_id, evidence_refs[1] AS ref FROM relations JOIN want USING (scan_id, record_id)
                    UNION ALL SELECT scan_id, record_id, evidence_refs[1] FROM entities JOIN want USING (scan_id, record_id)
                    UNION ALL SELECT scan_id, record_id, evidence_refs[1] FROM config_bindings
                              JOIN want USING (scan_id, record_id))
           SELECT DISTINCT r.scan_id, r.record_id, e.path, e.start_line FROM recs r
           JOIN evidence e ON e.scan_id = r.ref.scan_id AND e.record_id = r.ref.record_id
           ORDER BY ALL""", {"s": list(scans), "r": list(rids)}).fetchall()
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for scan, rid, path, line in rows:
        out.setdefault((scan, rid), {"path": path, "start_line": line})
    return out


def short_name(t: dict[str, Any]) -> str:
    """How an entity reads inside a sentence: ``Class#method`` for a method or field, the urn of an
    entry, contract, topic, table or key."""
    stable = t.get("stable_id") or t.get("record_id") or "?"
    if t.get("kind") in ("METHOD", "FIELD"):
        owner, _, member = stable.split("/", 1)[-1].partition("#")
        return f"{owner.rsplit('.', 1)[-1]}#{member.split('(', 1)[0]}" if member else owner
    return label(t) if t.get("kind") == "CONTRACT" else t.get("urn") or label(t)


#: one sentence per hop, ``{a}`` the node it leaves, ``{b}`` the node it reaches, ``{svc}`` b's service
HOP_SENTENCES = {
    "CALLER": "{b} calls {a}", "CALLEE": "{a} calls {b}", "INVOKES": "{b} calls {a}",
    "HANDLES": "{a} handles {b}", "RECEIVES": "{a} runs {b}", "PROVIDES": "{a} is provided as contract {b}",
    "CONSUMES": "{svc} consumes {b}", "EMITS": "{a} publishes to {b}",
    "DELIVERS": "{svc} receives {a} through {b}", "LISTENS": "{svc} receives {a} through {b}",
    "STORES": "{a} writes {b}", "READ_BY": "{b} reads {a}", "WRITTEN_BY": "{b} writes {a}",
    "SHARES": "{svc} also uses {b}", "GUARDS": "{a} decides a branch of {b}", "CONFIGURES": "{a} configures {b}",
    "FIELD_READ": "{b} is a method of the class of {a} (it may read it)",
}


#: cross-service hops, whose evidence is the alignment row's source (the consumer's binding, the
#: publisher's send, the writer's table): their ``location`` is the reached entity's (the consumed
#: contract's method, the subscriber entry, the accessor's table)
LOCATED_AT_TARGET = CROSS_SERVICE_HOPS


def hop_reason(step: dict[str, Any], info: dict[tuple[str, str], dict[str, Any]]) -> str:
    """One hop of a path in words, with where its evidence stands (``File.java:42``) and what makes it
    uncertain: ``{b} calls {a} at F.java:42``. ``info``: ``(scan_id, record_id)`` → the entity."""
    def ent(ref: dict[str, str]) -> dict[str, Any]:
        return info.get((ref["scan_id"], ref["record_id"]), {"record_id": ref["record_id"]})
    a, b = ent(step["from"]), ent(step["to"])
    text = HOP_SENTENCES[step["hop"]].format(a=short_name(a), b=short_name(b), svc=b.get("service_id") or "?")
    loc = step.get("location")
    if loc:
        text += f" at {loc['path'].rsplit('/', 1)[-1]}:{loc['start_line']}"
    if step["status"] != "RESOLVED":
        text += f" ({step['status']})"
    return text


def _rank_key(path: list[dict[str, Any]]) -> tuple[int, int]:
    """How far and how certain a path is: (hops, hops that are not SUPPORTED)."""
    return len(path), sum(1 for s in path if s["impact_type"] != S)


def _report(con, target: str, change_type: str, depth: int, start_refs: list[tuple[str, str]], starts: list[Node],
            reach: dict[State, _Reach], frontier: list[tuple[Node, str, Node | None, str | None]],
            max_paths: int) -> dict[str, Any]:
    start_set = set(starts)
    strength = STRENGTH[change_type]
    by_node: dict[Node, list[State]] = defaultdict(list)
    for st in reach:
        if st[0] not in start_set:
            by_node[st[0]].append(st)
    reached = sorted(by_node)
    info = _describe(con, [st[0] for st in reach] + [f[0] for f in frontier] + [f[2] for f in frontier if f[2] is not None])
    items = []
    for n in reached:
        # an item is as strong as its strongest state; its paths come from its best states
        states = sorted(by_node[n], key=lambda st: (-reach[st].strength, reach[st].depth, reach[st].steps, st))
        best = reach[states[0]]
        paths: list[list[dict[str, Any]]] = []
        for st in states:
            if reach[st].strength < best.strength:
                break
            for k in range(len(reach[st].parents)):
                p = _path(reach, info, st, k, strength)
                if p is not None and p not in paths:
                    paths.append(p)
        paths = sorted(paths, key=_rank_key)[:max_paths]  # the shortest, most certain first (stable)
        evidence = sorted({(s["evidence_ref"]["scan_id"], s["evidence_ref"]["record_id"])
                           for p in paths for s in p if s["evidence_ref"]})
        length, uncertain = _rank_key(paths[0]) if paths else (0, 0)
        items.append({"target": info[n], "impact_type": _NAMES[best.strength],
                      "cross_service_hops": min(reach[st].depth for st in states), "paths": paths,
                      "path_length": length, "uncertain_hops": uncertain,
                      "evidence_refs": [{"scan_id": a, "record_id": b} for a, b in evidence]})
    # every hop says where its evidence stands and why it is taken; an item, why it is reached
    def located(step: dict[str, Any]) -> tuple[str, str] | None:
        ref = step["to"] if step["hop"] in LOCATED_AT_TARGET else step["evidence_ref"]
        return (ref["scan_id"], ref["record_id"]) if ref else None

    locations = _locations(con, {located(s) for it in items for p in it["paths"] for s in p} - {None})
    by_ref = {(i["scan_id"], i["record_id"]): i for i in info.values()}
    for it in items:
        for p in it["paths"]:
            for s in p:
                s["location"] = locations.get(located(s))
                s["reason"] = hop_reason(s, by_ref)
        # an entry's own contract (PROVIDES) says nothing the entry did not: only a reason of its own
        shown = it["paths"][0] if it["paths"] else []
        it["reason"] = "; ".join(s["reason"] for s in [s for s in shown if s["hop"] != "PROVIDES"] or shown[:1])
    items.sort(key=lambda it: (it["target"]["scan_id"], it["target"]["record_id"]))
    # rank within each impact type: fewest hops, then fewest uncertain hops, then by name
    for t in IMPACT_ORDER:
        ranked = sorted((it for it in items if it["impact_type"] == t), key=_item_order)
        for i, it in enumerate(ranked, 1):
            it["rank"] = i
    front = []
    for node, reason, src, hop in frontier:
        f: dict[str, Any] = {"ref": _ref(info, node), "reason": reason}
        if src is not None:
            f.update({"from": _ref(info, src), "hop": hop})
        front.append(f)
    unknowns = _unknowns(con, info, reached)
    by_service: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for it in items:
        by_service[it["target"].get("service_id") or "?"][it["impact_type"]] += 1
    return {"target": target, "change_type": change_type, "depth": depth,
            "start": [by_ref.get(s, {"scan_id": s[0], "record_id": s[1]}) for s in start_refs],
            "items": items, "frontier": front, "unknowns": unknowns,
            "enumeration_complete": not front and not unknowns,
            "counts": {t: sum(1 for it in items if it["impact_type"] == t) for t in reversed(IMPACT_ORDER)},
            "summary": {k: dict(sorted(v.items())) for k, v in sorted(by_service.items())}}


def _item_order(it: dict[str, Any]) -> tuple:
    t = it["target"]
    return (it["path_length"], it["uncertain_hops"], t.get("service_id") or "", t.get("kind") or "", label(t),
            t["scan_id"], t["record_id"])


def label(t: dict[str, Any]) -> str:
    """How an item reads in a table: a contract with its parameters, an entry with its handler, a
    method without its module."""
    stable = t.get("stable_id") or t.get("record_id") or "?"
    if t.get("kind") == "CONTRACT":
        return stable.split(":", 1)[-1]
    if t.get("kind") == "ENTRY":
        return f"{t.get('urn')} -> {stable.rsplit('/', 1)[-1]}"
    if t.get("kind") in ("METHOD", "FIELD", "TYPE"):
        return stable.split("/", 1)[-1]
    return t.get("urn") or stable


def render_table(result: dict[str, Any], potential: bool = False) -> str:
    """A readable report: the counts by impact type, then each SUPPORTED item (fewest hops first) with
    the reason it is reached and where the evidence stands; with ``potential`` the POTENTIAL and
    DEPENDENCY_ONLY items too, ranked by hops and then by uncertain hops; then the items by service,
    the frontier and the unknowns (control characters in names written as ``\\xNN``: one item, one
    line)."""
    from diting.safe_text import printable
    lines = [f"impact of a {result['change_type']} change to {printable(result['target'])} (depth {result['depth']}; "
             f"{len(result['start'])} start entit{'y' if len(result['start']) == 1 else 'ies'})"]
    if not result["items"]:
        lines.append("no path found from the target — this is not evidence of no impact")
    counts = result["counts"]
    weak = [f"{counts[t]} {t.lower().replace('_', '-')}" for t in (P, D) if counts[t]]
    lines.append("; ".join([f"{counts[S]} supported"] + weak) +
                 ("" if not weak else " (listed below)" if potential else " (--potential lists them)"))
    for t in (S, P, D) if potential else (S,):
        rows = sorted((it for it in result["items"] if it["impact_type"] == t), key=lambda it: it["rank"])
        if not rows:
            continue
        lines.append(f"{t}" + (" (fewest hops first, then fewest uncertain hops)" if t != S else " (fewest hops first)"))
        for it in rows:
            tgt = it["target"]
            hops = " > ".join(s["hop"] for s in it["paths"][0]) if it["paths"] else ""
            lines.append(f"  {it['rank']:>4}. {printable(tgt.get('service_id') or '?'):<24} {tgt.get('kind') or '?':<9} "
                         f"{printable(label(tgt))}  [{hops}]")
            why = printable(it["reason"])
            if it["uncertain_hops"]:
                unsure = [s["hop"] for s in it["paths"][0] if s["impact_type"] != S]
                why += f" ({len(unsure)} of {it['path_length']} hops uncertain: {', '.join(unsure)})"
            lines.append(f"        because {why}")
    lines.append(f"{len(result['items'])} item(s) reached by service (--format json lists every item with its "
                 "paths, reasons and evidence):")
    for svc, c in result["summary"].items():
        lines.append(f"  {printable(svc)}: " + ", ".join(f"{k} {v}" for k, v in c.items()))
    lines.append(f"frontier: {len(result['frontier'])} unexpanded; unknowns: {len(result['unknowns'])}; "
                 f"enumeration_complete: {str(result['enumeration_complete']).lower()}")
    kinds: dict[str, int] = defaultdict(int)
    for u in result["unknowns"]:
        kinds[u["kind"]] += 1
    for k, v in sorted(kinds.items()):
        lines.append(f"  {k}: {v}")
    return "\n".join(lines)


def to_json(result: dict[str, Any]) -> str:
    from diting.safe_text import json_text
    return json_text(result, indent=1, sort_keys=True)
