"""The ShardingSphere configuration of a package's tables (docs/sql.md §5): the routing files its
ShardingSphere JDBC URLs name, and each table's routing (its physical names, data sources and
sharding columns) from the Spring Boot starter's properties and those files.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Iterable

from diting.config.sources import parse_yaml
from diting.sql import shards
from diting.source.text import decode_bytes

if TYPE_CHECKING:
    from diting.probes.context import ProbeContext

#: a ShardingSphere sharding-rule property in canonical form — ``rule``: the rule's prefix,
#: ``table``/``prop`` for a table (``tables`` or 5.x ``auto-tables``), ``default`` for a rule-level
#: default strategy or column. The Spring Boot starter (5.x ``rules.sharding``, 4.x ``sharding``) …
_SS_SPRING_KEY = re.compile(r"^(?P<rule>spring\.shardingsphere\.(?:rules\.sharding|sharding))\.(?:"
                            r"(?:tables|auto-tables)\.(?P<table>[^.\[\]]+)\.(?P<prop>.+)|(?P<default>default-.+))$")
#: … and a standalone routing file (5.x ``rules[n]`` of ``!SHARDING``, 4.x ``shardingRule``)
_SS_FILE_KEY = re.compile(r"^(?P<rule>rules\[\d+\]|sharding-rule)\.(?:"
                          r"(?:tables|auto-tables)\.(?P<table>[^.\[\]]+)\.(?P<prop>.+)|(?P<default>default-.+))$")


def routing_files(p: "ProbeContext", url_values: list[Any]) -> list[tuple[str, Any]]:
    """``(path, entry)`` of every entry of the ShardingSphere routing files the package's
    datasource URLs (``url_values``) name: ``jdbc:shardingsphere:classpath:NAME`` (the driver's own, case-sensitive
    prefix; a ``?placeholder-type=…`` query is not part of the name; NAME is read literally,
    as the driver does, from the package's resource roots, and parsed as YAML whatever its
    extension). A routing file the package does not hold, a URL whose placeholder does not
    resolve, and an ``absolutepath:`` (outside the repository) leave the tables' shard keys
    unknown: CONFIG_VALUE_UNKNOWN."""
    out: list[tuple[str, Any]] = []
    seen: set[str] = set()
    for rv in url_values:
        raw = (rv.value if rv.status == "RESOLVED" and rv.value else (rv.entry.value if rv.entry else "")).strip()
        if not raw.startswith("jdbc:shardingsphere:"):
            continue  # another driver's URL (or one that does not resolve): no routing file
        where = {"path": rv.path, "lines": [rv.entry.line, rv.entry.end_line]} if rv.entry and rv.path else None
        location = raw[len("jdbc:shardingsphere:"):].split("?", 1)[0] if rv.status == "RESOLVED" else None
        paths = p.ctx.resources.get(location[len("classpath:"):].lstrip("/"), []) \
            if location and location.startswith("classpath:") else []
        if not paths:
            why = ("its placeholder does not resolve" if rv.status != "RESOLVED" else
                   "it names a file outside the repository" if location and not location.startswith("classpath:")
                   else f"the package holds no {location}")
            p.diag("CONFIG_VALUE_UNKNOWN", f"{rv.key}|sharding-routing", f"{rv.key} = {raw}: the "
                   f"ShardingSphere routing file is not read ({why}); the shard keys it would configure "
                   "are unknown", [p.service_rid] if p.service_rid else [], where)
            continue
        for path in sorted(set(paths)):
            got = p.s.snapshot.read(path) if path not in seen else None
            seen.add(path)
            if got is None or got.data is None:
                continue
            cf = parse_yaml(path, decode_bytes(got.data).text, allow_duplicate_keys=True,  # SnakeYAML's default
                            allow_any_tag=True)  # ShardingSphere's own loader: !SHARDING, !ENCRYPT …
            if cf.error:
                at = {"path": path, "lines": [cf.error_line, cf.error_line]} if cf.error_line else where
                p.diag("CONFIG_VALUE_UNKNOWN", f"{path}|sharding-routing-file", f"{path}: the ShardingSphere "
                       f"routing file is not read ({cf.error}); the shard keys it would configure are unknown",
                       [p.service_rid] if p.service_rid else [], at)
            out += [(path, e) for doc in cf.documents for e in doc.entries]
    return out


def routing(config_entries: Iterable[tuple[str, Any]], files: list[tuple[str, Any]]) -> dict[str, shards.Routing]:
    """ShardingSphere tables of the package's configuration: the Spring Boot starter's properties
    (4.x and 5.x; ``config_entries``: ``(path, entry)`` of the package's configuration) and the
    standalone routing files a ShardingSphere JDBC URL names (``files``: :func:`routing_files`). A table's
    routing columns are its own database and table strategies' sharding columns, else the
    rule's defaults (``defaultDatabaseStrategy``, ``defaultTableStrategy``,
    ``defaultShardingColumn``); ``autoTables`` count as tables (their physical names are
    ShardingSphere's to choose)."""
    out: dict[str, shards.Routing] = {}
    own: dict[str, dict[str, set[str]]] = {}  # table → {"database"|"table": columns}
    rule_of: dict[str, str] = {}
    defaults: dict[str, dict[str, set[str]]] = {}  # rule → {"database"|"table"|"any": columns}
    entries = [(path, e, _SS_SPRING_KEY) for path, e in config_entries] + \
        [(path, e, _SS_FILE_KEY) for path, e in files]
    for path, e, pattern in entries:
        m = pattern.match(e.key)
        if not m:
            continue
        value = e.value.strip()
        if m.group("default"):
            kind = _strategy_kind(m.group("default"))
            if kind and value:
                defaults.setdefault(m.group("rule"), {}).setdefault(kind, set()).add(value)
            continue
        prop = m.group("prop")
        raw = e.raw_key.split(".")  # the table name as written (canonical keys kebab-case it)
        at = e.key[:m.start("table")].count(".")
        logical = raw[at] if len(raw) > at else ""
        if not logical:
            continue
        r = out.setdefault(logical.lower(), shards.Routing(logical))
        rule_of[logical.lower()] = m.group("rule")
        if prop == "actual-data-nodes":
            for ds, table in shards.data_nodes(e.value):
                r.physical.add(table)
                if ds:
                    r.datasources.add(ds)
            r.source = r.source or (path, e.line)
        elif prop == "actual-data-sources":  # an auto table: ShardingSphere names its shards
            r.source = r.source or (path, e.line)
        elif prop.endswith("sharding-column") and value:
            kind = _strategy_kind(prop)
            if kind:
                own.setdefault(logical.lower(), {}).setdefault(kind, set()).add(value)
                r.source = r.source or (path, e.line)
    for name, r in out.items():
        d = defaults.get(rule_of[name], {})
        cols = own.get(name, {})
        for kind in ("database", "table"):
            r.columns[kind] = set(cols.get(kind) or d.get(kind) or set())
        if not any(r.columns.values()) and d.get("any"):
            r.columns["table"] = set(d["any"])
        r.sharding_columns = r.columns["database"] | r.columns["table"]
    return out


def _strategy_kind(prop: str) -> str | None:
    """Which routing a ShardingSphere property's sharding column feeds: ``database`` (a database
    strategy), ``table`` (a table strategy, an auto table's sharding strategy), ``any`` (the rule's
    ``defaultShardingColumn``), None for anything else."""
    if prop == "default-sharding-column":
        return "any"
    if not prop.endswith("sharding-column"):
        return None
    if "database-strategy." in prop:
        return "database"
    if "table-strategy." in prop or prop.startswith("sharding-strategy."):
        return "table"
    return None
