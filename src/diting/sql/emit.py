"""The SQL stage of one package: statements, tables, lineage, shards, ledger items (docs/sql.md).

For every MyBatis mapper file of the package's modules, each statement becomes a SQL_STATEMENT
(``{namespace}.{id}``; a ``<selectKey>`` is ``{namespace}.{id}!selectKey``, as MyBatis names it)
contained by its MODULE and bound from the mapper interface's methods of that name (BINDS_TO).
Its variants (sql/dynamic.py) are parsed with sqlglot (sql/lineage.py) in the datasource's
dialect; every table position becomes READS or WRITES to a TABLE (stable_id ``table://{logical}@{datasource}``)
whose physical names collapse only on evidence (sql/shards.py). Conditional fragments are ledger
items of their statement (with the exclusion rule, if any, their ``test`` matches: ledger/exclusion.py). What does not parse is SQL_PARSE_FAILED or SQL_UNSUPPORTED and counts
as failed; a ``${}`` table name that folds to nothing is DYNAMIC_TABLE_NAME.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from diting.config.sources import canonical_key, parse_yaml
from diting.ir import ids
from diting.ir.builder import RefTo
from diting.ledger.exclusion import ArmFacts, excluded_items, ledger_exclusions
from diting.sql import dialect, shards
from diting.sql.dynamic import (MARKER, MAX_RENDER_ELEMENTS, MAX_RENDER_NESTING, MAX_VARIANTS, Expansion,
                                Fragment, expand, fragment_lookup)
from diting.sql.lineage import Lineage, analyze, known, prime
from diting.sql.mybatis import MapperFile, MapperStatement, SqlNode, script_body
from diting.probes.candidates import split_list
from diting.probes.resolved import ResolvedText
from diting.resolve.spring import PackagePatterns
from diting.sql.plus import PlusStatements
from diting.sql.statements import StageStatement, TableUse
from diting.source.text import decode_bytes

if TYPE_CHECKING:
    from diting.probes.matches import Candidate, Outcome
    from diting.probes.context import ProbeContext

#: resultMap ``extends`` links followed at most
MAX_RESULT_MAP_CHAIN = 32
_MAPPER_LOCATION_KEYS = ("mybatis.mapper-locations", "mybatis-plus.mapper-locations")
#: the bean properties that hold a datasource's JDBC URL (Druid, DBCP, Spring: url; Hikari, c3p0: jdbcUrl)
_URL_PROPERTIES = ("url", "jdbcUrl")
#: a ShardingSphere sharding-rule property in canonical form — ``rule``: the rule's prefix,
#: ``table``/``prop`` for a table (``tables`` or 5.x ``auto-tables``), ``default`` for a rule-level
#: default strategy or column. The Spring Boot starter (5.x ``rules.sharding``, 4.x ``sharding``) …
_SS_SPRING_KEY = re.compile(r"^(?P<rule>spring\.shardingsphere\.(?:rules\.sharding|sharding))\.(?:"
                            r"(?:tables|auto-tables)\.(?P<table>[^.\[\]]+)\.(?P<prop>.+)|(?P<default>default-.+))$")
#: … and a standalone routing file (5.x ``rules[n]`` of ``!SHARDING``, 4.x ``shardingRule``)
_SS_FILE_KEY = re.compile(r"^(?P<rule>rules\[\d+\]|sharding-rule)\.(?:"
                          r"(?:tables|auto-tables)\.(?P<table>[^.\[\]]+)\.(?P<prop>.+)|(?P<default>default-.+))$")
#: the ShardingSphere JDBC driver's URL (its prefix is case-sensitive)
_SS_DRIVER_URL = re.compile(r"^jdbc:shardingsphere:(?P<location>.+)$")
#: the databaseId values (lower-case) a dialect's statements carry
_DATABASE_IDS = {"mysql": ("mysql", "mariadb"), "postgres": ("postgresql", "postgres", "pg"),
                 "oracle": ("oracle",), "tsql": ("sqlserver", "mssql"), "sqlite": ("sqlite",),
                 "clickhouse": ("clickhouse",)}
_BIND_HEAD = re.compile(r"""^\s*(['"])(?P<head>[A-Za-z0-9_]+)\1\s*\+\s*(?P<rest>.+)$""")
#: a mapper namespace: a Java-like dotted name (MyBatis binds it to the interface of that name)
_NAMESPACE = re.compile(r"^[\w$]+(?:[.\-][\w$]+)*$")
#: a quoted literal inside a bind or Java expression
_QUOTED = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")
#: a dotted name not preceded by a member dot or an OGNL '@' / '#', and whether a call follows it
_CHAIN = re.compile(r"(?<![\w.@#$])([A-Za-z_]\w*(?:\s*\.\s*[A-Za-z_]\w*)*)(\s*\()?")
_GETTER = re.compile(r"^(?:get|is)([A-Z]\w*)$")
_NOT_KEYS = {"null", "true", "false", "this", "_parameter", "new", "instanceof"}


def key_hints(expr: str) -> set[str]:
    """Candidate shard-key names in a bind (OGNL) or concatenated Java expression: of each
    dotted chain, the last property (a getter's property; a method call dropped) —
    ``userPin.hashCode() % 16`` → ``userPin``, ``order.getUserId() % 4`` → ``userId``,
    ``@java.lang.Math@abs(userId)`` → ``userId``. Capitalised names (classes, constants) are no keys."""
    out: set[str] = set()
    for m in _CHAIN.finditer(_QUOTED.sub(" ", expr)):
        parts = [p.strip() for p in m.group(1).split(".")]
        if m.group(2):  # the last segment is called: a getter names a property, anything else is dropped
            g = _GETTER.match(parts.pop())
            if g and parts:
                parts.append(g.group(1)[0].lower() + g.group(1)[1:])
        if parts and parts[-1] not in _NOT_KEYS and not parts[-1][0].isupper() and not parts[0][0].isupper():
            out.add(parts[-1])
    return out


@dataclass
class SqlStats:
    """What coverage counts of the SQL stage."""

    discovered: int = 0
    parsed: int = 0
    partial: int = 0
    failed: int = 0
    #: statements not analysed, by reason: other_database_id (a databaseId variant for another
    #: database), duplicate_id (an id the package declares twice: MyBatis refuses to start)
    excluded: dict[str, int] = field(default_factory=dict)
    ledger_items: int = 0  # conditional fragments recorded as ledger items
    ledger_unresolved: int = 0  # UNRESOLVED items no rule excludes
    #: items excluded, by LEDGER_EXCLUSION rule id
    ledger_excluded: dict[str, int] = field(default_factory=dict)


def _qualify(ns: str, ref: str) -> tuple[str, str]:
    """``(namespace, id)`` of a reference made from namespace ``ns`` (MyBatis: a dotted reference is
    already qualified)."""
    if "." in ref:
        head, _, tail = ref.rpartition(".")
        return head, tail
    return ns, ref


def statement_lineage(body: SqlNode, ns: str, lookup, dialect: str,
                      first: tuple[Expansion, dict[tuple[str, str], int | None]] | None = None
                      ) -> tuple[Expansion, set[str], list[tuple[Any, Lineage]]]:
    """A statement's variants and their lineage: ``(expansion, fragments left out, [(variant,
    lineage)])``. A ``${}`` outside a table position inside a conditional fragment leaves that
    fragment out of parsing (it becomes an UNRESOLVED ledger item); a marker is in a table position
    only when a parsed variant shows it in a table name."""
    memo = body.__dict__.setdefault("_lineage", {})
    hit = memo.get((ns, dialect))
    if hit is not None and all(_node_id(lookup(n, r)) == nid for (n, r), nid in hit[0].items()):
        return hit[1]
    used: dict[tuple[str, str], int | None] = {}
    recording = _recorder(lookup, used)
    if first is not None:  # the first expansion is already made, with the fragments it looked up
        used.update(first[1])
    result = _statement_lineage(body, ns, recording, dialect, first[0] if first is not None else None)
    memo[(ns, dialect)] = (used, result)  # valid wherever the same includes find the same fragments
    return result


def _budget_reason(exp_: Expansion) -> str:
    if len(exp_.variants) >= MAX_VARIANTS:
        return f"more than {MAX_VARIANTS} dynamic-SQL variants"
    return (f"more than {MAX_RENDER_ELEMENTS} dynamic-SQL elements (<include> fan-out) or elements nested more "
            f"than {MAX_RENDER_NESTING} deep")


def _recorder(lookup, used: dict[tuple[str, str], int | None]):
    """``lookup`` that notes in ``used`` which fragment (by identity) each (namespace, refid) found."""

    def recording(n: str, r: str) -> tuple[str, SqlNode] | None:
        got = lookup(n, r)
        used[(n, r)] = _node_id(got)
        return got

    return recording


def _node_id(got: tuple[str, SqlNode] | None) -> int | None:
    return id(got[1]) if got is not None else None


def _statement_lineage(body: SqlNode, ns: str, lookup, dialect: str, first: Expansion | None = None
                       ) -> tuple[Expansion, set[str], list[tuple[Any, Lineage]]]:
    exp_ = first if first is not None else expand(body, ns, lookup, dialect=dialect)
    dropped = _dropped_fragments(exp_, dialect)
    if dropped:
        exp_ = expand(body, ns, lookup, dropped, dialect)
    return exp_, dropped, [(v, analyze(v.sql, dialect)) for v in exp_.variants]


def _dropped_fragments(exp_: Expansion, dialect: str) -> set[str]:
    """Conditional fragments holding a ``${}`` that no parsed variant shows in a table name."""
    dropped: set[str] = set()
    for v in exp_.variants:
        if not any(frag is not None for _, frag in v.markers.values()):
            continue
        got = analyze(v.sql, dialect)
        in_tables = {int(n) for u in got.tables for n in MARKER.findall(u.name)} if got.status == "PARSED" else set()
        for n, (_, frag) in v.markers.items():
            if n not in in_tables and frag is not None:
                dropped.add(frag)
    return dropped


def mapper_fragments(mappers: list[MapperFile]) -> dict[tuple[str, str], SqlNode]:
    """The ``<sql>`` fragments of MyBatis mappers by (namespace, id); the first of a repeated id wins."""
    out: dict[tuple[str, str], SqlNode] = {}
    for m in mappers:
        if m.dialect == "MYBATIS" and m.namespace:
            for fid, node in m.fragments.items():
                out.setdefault((m.namespace, fid), node)
    return out


def warm_lineage(mappers: list[MapperFile], parse_many=None, dialect: str = "mysql") -> int:
    """Parse every statement of ``mappers`` once (fragments looked up across all of them), filling
    the lineage memo before package workers fork, so packages that share a mapper module do not each
    parse it again. ``parse_many(chunks)`` maps :func:`analyze_many` over chunks of ``(text,
    dialect)`` (in workers); the texts of two rounds — the variants, then the variants left once
    ``${}`` fragments are dropped — go through it. Returns the number of statements. Results never
    depend on it: it only fills memos."""
    lookup = fragment_lookup(mapper_fragments(mappers))
    stmts = [(st.body, m.namespace) for m in mappers if m.dialect == "MYBATIS" and m.namespace for st in m.statements]
    first: list[tuple[Expansion, dict[tuple[str, str], int | None]]] = []
    for body, ns in stmts:
        used: dict[tuple[str, str], int | None] = {}
        first.append((expand(body, ns, _recorder(lookup, used), dialect=dialect), used))
    if parse_many is not None:
        for dropping in (False, True):
            texts: set[str] = set()
            for (body, ns), (e, _) in zip(stmts, first):
                if dropping:
                    if not any(v.markers for v in e.variants):
                        continue  # no ${}: nothing to drop, the first round parsed its texts
                    gone = _dropped_fragments(e, dialect)
                    e = expand(body, ns, lookup, gone, dialect) if gone else e
                texts.update(v.sql for v in e.variants)
            todo = sorted((t, dialect) for t in texts if not known(t, dialect))
            chunks = [todo[i::8] for i in range(8) if todo[i::8]]
            for got in parse_many(chunks):
                prime(got)
    for (body, ns), got in zip(stmts, first):
        statement_lineage(body, ns, lookup, dialect, got)
    return len(stmts)


class SqlStage:
    """Runs the SQL stage for one package through the probes' helpers (segments, diagnostics)."""

    def __init__(self, p: "ProbeContext") -> None:
        self.p = p
        self.rs = p.rs
        self.stats = SqlStats()
        self.mappers: list[tuple[str, MapperFile]] = []
        for m in sorted(p.plan.modules):
            for mf in p.s.module_results[m].mappers:
                self.mappers.append((m, mf))
        self._lookup = fragment_lookup(mapper_fragments([mf for _, mf in self.mappers]))
        #: (namespace, id) → the <resultMap>'s type and extends, over the package's mappers
        self.result_maps: dict[tuple[str, str], dict[str, str]] = {
            (mf.namespace, rid): rm for _, mf in self.mappers if mf.namespace for rid, rm in mf.result_maps.items()}
        #: the datasource URL values of the configuration, read once for the routing files and the JDBC kind
        self.url_values = self._datasource_url_values()
        self.sharding_files = self._sharding_files()
        #: datasource bean name → (database name or None, JDBC kind), from its JDBC URL property
        self.datasource_beans: dict[str, tuple[str | None, str]] = self._datasource_beans()
        self.datasource, self.dialect, self.dialect_basis = self._datasource()
        self.located, self.location_patterns = self._mapper_locations()
        self.routes_by_file, self.routes_by_package = self._factory_routes()
        #: statement ids recorded so far (a repeat is a duplicate: :meth:`_first`)
        self.declared: set[str] = set()
        self.routing = self._routing()

    # ------------------------------------------------------------ configuration
    def _datasource(self) -> tuple[str | None, str, str]:
        """The database name of the package's one JDBC URL (None when there are none or several),
        the sqlglot dialect of its statements and the basis of that dialect (sql/dialect.py)."""
        db, kind = self._jdbc()
        return (db, *dialect.choose(db, kind, self.p.s.sql_dialects))

    def _config_entries(self):
        """``(source, entry)`` for every entry of every configuration document of the package."""
        for src in self.p.config.sources if self.p.config is not None else []:
            for doc in src.file.documents:
                for e in doc.entries:
                    yield src, e

    def _datasource_url_values(self) -> list[Any]:
        """The config values of ``spring.datasource.url`` and every ``spring.datasource.….url`` /
        ``jdbc-url`` (Druid, Hikari, dynamic-datasource forms), in key order."""
        cfg = self.p.config
        if cfg is None:
            return []
        keys = {e.key for _, e in self._config_entries()
                if e.key.startswith("spring.datasource.") and e.key.rsplit(".", 1)[-1] in ("url", "jdbc-url")}
        return [cfg.get(key) for key in sorted(keys)]

    def _datasource_urls(self) -> list[str]:
        """Resolved datasource URLs (see :meth:`_datasource_url_values`)."""
        return [rv.value.strip() for rv in self.url_values if rv.status == "RESOLVED" and rv.value]

    def _jdbc(self) -> tuple[str | None, str | None]:
        """``(database name, JDBC kind)`` of the package's one JDBC URL; a ShardingSphere driver URL
        stands for the data sources of its routing file. None for what is not known or when several
        URLs disagree."""
        found: set[tuple[str | None, str]] = set()
        urls = [u for u in self._datasource_urls() if not _SS_DRIVER_URL.match(u)]
        urls += [e.value for _, e in self.sharding_files if e.key.startswith(("data-sources.", "datasource."))
                 and e.key.rsplit(".", 1)[-1] in ("url", "jdbc-url", "standard-jdbc-url")]
        for url in urls:
            got = dialect.jdbc_database(url)
            if got is not None:
                found.add(got)
        found.update(got for got in self.datasource_beans.values() if got[0] is not None)
        if len(found) != 1:
            return None, None
        return next(iter(found))

    def _datasource_beans(self) -> dict[str, tuple[str | None, str]]:
        """Loaded beans that are datasources: an XML ``<bean>`` or a ``@Bean`` method whose
        ``url`` / ``jdbcUrl`` property (``<property>``, a setter on the object it builds) is a JDBC
        URL — Druid ``DruidDataSource``, Hikari ``HikariDataSource``, DBCP ``BasicDataSource``,
        c3p0, Spring's ``DriverManagerDataSource`` alike; ``${}`` placeholders resolve from the
        package's config. Bean name (and aliases) → ``(database name, JDBC kind)`` from
        :func:`dialect.jdbc_database`; a URL that does not resolve names no datasource."""
        out: dict[str, tuple[str | None, str]] = {}
        prefixes = {c["member"]["stable"]: c for c in self.p.ctx.by_emit.get("CONFIG_PROPERTIES", [])
                    if c["target"] == "METHOD" and c.get("member")}
        for bean in self.p.ctx.beans:
            if not bean.loaded or bean.kind not in ("XML", "BEAN_METHOD"):
                continue
            prop = next((bean.properties[k] for k in _URL_PROPERTIES if k in bean.properties), None)
            bound = prefixes.get((bean.cand.get("member") or {}).get("stable", ""))
            if prop is None and bound is not None:  # @Bean @ConfigurationProperties(prefix): prefix.url / jdbc-url
                prefix = next(iter(self.p.ctx.vals(bound, "prefix")), None)
                prop = next(({"value": "${" + key + "}"} for key in (canonical_key(f"{prefix}.{k}") for k in
                             _URL_PROPERTIES) if prefix and self.p.lookup("config", key).value), None)
            if prop is None:
                continue
            value = prop.get("value")
            if value is not None and "${" in value:
                value = self.p.resolve({"value": value, "vtype": "java.lang.String", "basis": "XML",
                                        "placeholders": True}).value
            elif value is None and prop.get("outcome") is not None:
                value = self.p.resolve(prop["outcome"]).value
            got = dialect.jdbc_database(value) if value else None
            if got is None:
                continue  # no JDBC URL (or one whose placeholder does not resolve): no datasource known
            for name in [bean.name] + bean.aliases:
                out.setdefault(name, got)
        return out

    def _factory_routes(self) -> tuple[dict[str, str], list[tuple[Any, str]]]:
        """Which datasource feeds which mappers, when a loaded XML ``SqlSessionFactoryBean`` (or
        MyBatis-Plus ``MybatisSqlSessionFactoryBean``) names its ``dataSource`` by ``ref`` (a
        ``@Bean`` SqlSessionFactory method by its ``DataSource`` parameter): the mapper
        files of its ``mapperLocations``, and the mapper interfaces of the packages of a mapper scan
        (``MapperScannerConfigurer`` ``sqlSessionFactoryBeanName``, ``@MapperScan(sqlSessionFactoryRef)``,
        ``<mybatis:scan factory-ref>``) that names it — the only factory when it names none. Returns (mapper file path → database,
        [(packages, database)]); only datasources whose database is known route."""
        factories: dict[str, str] = {}  # factory bean name → database
        by_file: dict[str, str] = {}
        for bean in self.p.ctx.beans:
            if not bean.loaded or not bean.type.endswith(("SqlSessionFactoryBean", "SqlSessionFactory")):
                continue
            ref = (bean.properties.get("dataSource") or {}).get("ref") if bean.kind == "XML" else \
                self._datasource_param(bean) if bean.kind == "BEAN_METHOD" else None
            db = self.datasource_beans.get(ref, (None, None))[0] if ref else None
            if db is None:
                continue
            for name in [bean.name] + bean.aliases:
                factories.setdefault(name, db)
            value = (bean.properties.get("mapperLocations") or {}).get("value")
            rt = self.p.resolve({"value": value, "vtype": "java.lang.String", "basis": "XML",
                                 "placeholders": "${" in value}) if value else None
            for pat in split_list(rt.value) if rt is not None and rt.value else []:
                for path in self.p.ctx.resolve_resource(pat):
                    by_file.setdefault(path, db)
        by_package: list[tuple[Any, str]] = []
        ctx = self.p.ctx
        for c in ctx.by_emit.get("PROXY_SCAN", []):  # @MapperScan, <mybatis:scan>, MapperScannerConfigurer
            if not ctx.cand_loaded(c):
                continue
            props = (c.get("xml") or {}).get("properties", {})
            name = next(iter(ctx.vals(c, "ref")), None) or (props.get("sqlSessionFactoryBeanName") or {}).get(
                "value") or (props.get("sqlSessionFactory") or {}).get("ref") or \
                (c.get("xml") or {}).get("attributes", {}).get("factory-ref")
            db = factories.get(name) if name else (next(iter(factories.values())) if len(factories) == 1 else None)
            if db is not None:
                by_package.append((PackagePatterns(ctx.packages_of(c)), db))
        return by_file, by_package

    def _datasource_param(self, bean: Any) -> str | None:
        """The datasource bean a ``@Bean`` SqlSessionFactory method receives: its ``DataSource``
        parameter's ``@Qualifier``, else the parameter's name when a datasource bean has it, else
        the package's one datasource bean; None when that does not decide."""
        params = [p for p in (bean.cand.get("member") or {}).get("params", []) if p["type"] == "javax.sql.DataSource"]
        if len(params) != 1:
            return None
        p = params[0]
        if p.get("qualifier"):
            return p["qualifier"]
        if p["name"] in self.datasource_beans:
            return p["name"]
        by_db = {got: name for name, got in self.datasource_beans.items()}  # aliases of one bean count once
        return next(iter(by_db.values())) if len(by_db) == 1 else None

    def routed_db(self, namespace: str, path: str) -> str | None:
        """The database of the datasource bean the statements of mapper ``namespace`` (file
        ``path``) reach through their SqlSessionFactory (:meth:`_factory_routes`); None when no
        factory routes them (the package's datasource applies)."""
        if path in self.routes_by_file:
            return self.routes_by_file[path]
        pkg = namespace.rsplit(".", 1)[0] if "." in namespace else ""
        return next((db for pkgs, db in self.routes_by_package if pkg in pkgs), None)

    def _sharding_files(self) -> list[tuple[str, Any]]:
        """``(path, entry)`` of every entry of the ShardingSphere routing files the package's
        datasource URLs name: ``jdbc:shardingsphere:classpath:NAME`` (the driver's own, case-sensitive
        prefix; a ``?placeholder-type=…`` query is not part of the name; NAME is read literally,
        as the driver does, from the package's resource roots, and parsed as YAML whatever its
        extension). A routing file the package does not hold, a URL whose placeholder does not
        resolve, and an ``absolutepath:`` (outside the repository) leave the tables' shard keys
        unknown: CONFIG_VALUE_UNKNOWN."""
        out: list[tuple[str, Any]] = []
        seen: set[str] = set()
        for rv in self.url_values:
            raw = (rv.value if rv.status == "RESOLVED" and rv.value else (rv.entry.value if rv.entry else "")).strip()
            if not raw.startswith("jdbc:shardingsphere:"):
                continue  # another driver's URL (or one that does not resolve): no routing file
            where = {"path": rv.path, "lines": [rv.entry.line, rv.entry.end_line]} if rv.entry and rv.path else None
            location = raw[len("jdbc:shardingsphere:"):].split("?", 1)[0] if rv.status == "RESOLVED" else None
            paths = self.p.ctx.resources.get(location[len("classpath:"):].lstrip("/"), []) \
                if location and location.startswith("classpath:") else []
            if not paths:
                why = ("its placeholder does not resolve" if rv.status != "RESOLVED" else
                       "it names a file outside the repository" if location and not location.startswith("classpath:")
                       else f"the package holds no {location}")
                self.p.diag("CONFIG_VALUE_UNKNOWN", f"{rv.key}|sharding-routing", f"{rv.key} = {raw}: the "
                            f"ShardingSphere routing file is not read ({why}); the shard keys it would configure "
                            "are unknown", [self.p.service_rid] if self.p.service_rid else [], where)
                continue
            for path in sorted(set(paths)):
                got = self.p.s.snapshot.read(path) if path not in seen else None
                seen.add(path)
                if got is None or got.data is None:
                    continue
                cf = parse_yaml(path, decode_bytes(got.data).text, allow_duplicate_keys=True,  # SnakeYAML's default
                                allow_any_tag=True)  # ShardingSphere's own loader: !SHARDING, !ENCRYPT …
                if cf.error:
                    at = {"path": path, "lines": [cf.error_line, cf.error_line]} if cf.error_line else where
                    self.p.diag("CONFIG_VALUE_UNKNOWN", f"{path}|sharding-routing-file", f"{path}: the ShardingSphere "
                                f"routing file is not read ({cf.error}); the shard keys it would configure are unknown",
                                [self.p.service_rid] if self.p.service_rid else [], at)
                out += [(path, e) for doc in cf.documents for e in doc.entries]
        return out

    def _mapper_locations(self) -> tuple[set[str], list[str]]:
        """Mapper files the package's configuration names, and the location patterns it names:
        ``mybatis.mapper-locations`` / ``mybatis-plus.mapper-locations`` (a list or comma-separated)
        and the ``mapperLocations`` property of XML-declared SqlSessionFactoryBeans."""
        patterns: list[str] = []
        cfg = self.p.config
        if cfg is not None:
            for key in _MAPPER_LOCATION_KEYS:
                got = cfg.get(key)
                if got.status == "RESOLVED" and got.value:
                    patterns.extend(split_list(got.value))
                for i in range(64):
                    got = cfg.get(f"{key}[{i}]")
                    if got.status != "RESOLVED" or not got.value:
                        break
                    patterns.extend(split_list(got.value))
        for bean in self.p.ctx.beans:
            if bean.type.endswith("SqlSessionFactoryBean") and bean.loaded:
                value = (bean.properties.get("mapperLocations") or {}).get("value")
                if value:
                    rt = self.p.resolve({"value": value, "vtype": "java.lang.String", "basis": "LITERAL",
                                         "placeholders": "${" in value})
                    patterns.extend(split_list(rt.value) if rt.value else [])
        files: set[str] = set()
        for pat in patterns:
            files.update(self.p.ctx.resolve_resource(pat))
        return files, sorted(set(patterns))

    def _location(self, module: str, mf: MapperFile) -> str:
        """How MyBatis finds a mapper file: CONFIGURED (a configured location names it), CO_LOCATED
        (beside its interface: ``{namespace as path}.xml`` on the classpath), NOT_CONFIGURED (locations
        are configured and name neither), UNKNOWN (no location is configured in a form diting reads)."""
        if mf.path in self.located:
            return "CONFIGURED"
        mod = self.p.s.inv.model.modules.get(module)
        for root in (mod.resource_roots if mod else []):
            if mf.path.startswith(root.rstrip("/") + "/") and mf.namespace and \
                    mf.path[len(root.rstrip("/")) + 1:] == mf.namespace.replace(".", "/") + ".xml":
                return "CO_LOCATED"
        return "NOT_CONFIGURED" if self.location_patterns else "UNKNOWN"

    def _routing(self) -> dict[str, shards.Routing]:
        """ShardingSphere tables of the package's configuration: the Spring Boot starter's properties
        (4.x and 5.x) and the standalone routing files a ShardingSphere JDBC URL names. A table's
        routing columns are its own database and table strategies' sharding columns, else the
        rule's defaults (``defaultDatabaseStrategy``, ``defaultTableStrategy``,
        ``defaultShardingColumn``); ``autoTables`` count as tables (their physical names are
        ShardingSphere's to choose)."""
        out: dict[str, shards.Routing] = {}
        own: dict[str, dict[str, set[str]]] = {}  # table → {"database"|"table": columns}
        rule_of: dict[str, str] = {}
        defaults: dict[str, dict[str, set[str]]] = {}  # rule → {"database"|"table"|"any": columns}
        entries = [(src.path, e, _SS_SPRING_KEY) for src, e in self._config_entries()] + \
            [(path, e, _SS_FILE_KEY) for path, e in self.sharding_files]
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

    # ------------------------------------------------------------ run
    def run(self) -> SqlStats:
        stmts: list[StageStatement] = []
        for module, mf in self.mappers:
            if mf.dialect == "IBATIS":
                for name, line in mf.unsupported:
                    self._unsupported(module, mf.path, line, line, f"{mf.path}|ibatis|{line}", f"{mf.path}:{line}: "
                                      f"<{name}> of an iBatis 2 <sqlMap> file, which is not a MyBatis mapper; not "
                                      "analysed")
                continue
            if not mf.namespace:
                continue
            if not _NAMESPACE.match(mf.namespace):  # statement ids of calls hold ':', '/', '#', '@'
                for st in mf.statements:
                    self._unsupported(module, mf.path, st.line, st.end_line, f"{mf.path}|namespace|{st.line}",
                                      f"{mf.path}:{st.line}: statement {st.id[:200]!r} of mapper namespace "
                                      f"{mf.namespace[:200]!r}, which is no Java name; not analysed")
                continue
            for st in self._for_database(module, mf):
                if not self._first(module, f"{mf.namespace}.{st.id}", mf.path, st.line, st.end_line):
                    continue
                stmts.append(self._statement(module, mf, st))
        for c in self.p.ctx.by_emit.get("SQL_ANNOTATION", []):
            if c.get("member") and not self._first(c["module"], f"{c['type']['binary'].replace('$', '.')}."
                                                   f"{self._annotation_id(c)}", c["path"], *c["lines"]):
                continue
            got = self._annotation_statement(c)
            if got is not None:
                stmts.append(got)
        for c in sorted(self.p.ctx.by_emit.get("SQL_CALL", []), key=lambda c: (c["call"]["callsite_id"], c["rule"])):
            got = self._call_statement(c, {s.stable for s in stmts})
            if got is not None:
                stmts.append(got)
        stmts.extend(PlusStatements(self).build({s.stable: s for s in stmts}))
        tables = self._tables(stmts)
        for s in stmts:
            self._relations(s, tables)
        self._shard_checks(stmts, tables)
        return self.stats

    def _first(self, module: str, stable: str, path: str, line: int, end: int) -> bool:
        """Whether ``stable`` is a statement id the package has not declared yet; a repeat (another
        mapper file or an annotation of the same namespace and id) is excluded as ``duplicate_id``
        with a diagnostic — MyBatis refuses to start with it, and the two are never merged."""
        if stable not in self.declared:
            self.declared.add(stable)
            return True
        self._exclude("duplicate_id")
        self.p.diag("SQL_DUPLICATE_ID", f"{stable}|duplicate|{path}:{line}", f"{path}:{line} declares statement "
                    f"{stable} again (MyBatis refuses to start with a duplicate id); this copy is not analysed",
                    [self._module_rid(module)], {"path": path, "lines": [line, end]})
        return False

    def _exclude(self, reason: str, n: int = 1) -> None:
        self.stats.excluded[reason] = self.stats.excluded.get(reason, 0) + n

    def _unsupported(self, module: str, path: str, line: int, end: int, key: str, message: str) -> None:
        """A statement diting cannot analyse and records no entity for: counted discovered and failed,
        with a SQL_UNSUPPORTED diagnostic of its own (the record coverage counts it from)."""
        self.stats.discovered += 1
        self.stats.failed += 1
        self.p.diag("SQL_UNSUPPORTED", key, message, [self._module_rid(module)],
                    {"path": path, "lines": [line, max(line, end)]})

    def _for_database(self, mf_module: str, mf: MapperFile) -> list[MapperStatement]:
        """One statement per id: where a mapper repeats an id with ``databaseId`` variants, the one
        for the datasource's database (else the one without ``databaseId``, else the first); the
        others are counted as excluded (``other_database_id``), as MyBatis never runs them here. An id
        repeated without any ``databaseId`` is a duplicate (:meth:`_first`)."""
        by_id: dict[str, list[MapperStatement]] = {}
        for st in mf.statements:
            by_id.setdefault(st.id, []).append(st)
        out: list[MapperStatement] = []
        names = _DATABASE_IDS.get(self.dialect, (self.dialect,))
        for group in by_id.values():
            if len(group) == 1 or not any(st.attrs.get("databaseId") for st in group):
                out.extend(group)  # repeats of an id without databaseId: _first excludes them
                continue
            pick = next((st for st in group if (st.attrs.get("databaseId") or "").lower() in names), None) or \
                next((st for st in group if not st.attrs.get("databaseId")), None) or group[0]
            out.append(pick)
            for st in group:
                if st is not pick:
                    self._exclude("other_database_id")
                    self.p.diag("SQL_OTHER_DATABASE", f"{mf.path}|{st.id}|{st.line}|database-id", f"{mf.path}:"
                                f"{st.line}: the databaseId={st.attrs.get('databaseId')!r} variant of {st.id} is for "
                                f"another database than {self.dialect}; not analysed",
                                [self._module_rid(mf_module)], {"path": mf.path, "lines": [st.line, st.end_line]})
        return out

    def _module_rid(self, module: str) -> str:
        return ids.entity_record_id("MODULE", self.p.s.inv.ns[module])

    # ------------------------------------------------------------ statements
    def _annotation_statement(self, c: Candidate) -> StageStatement | None:
        """A statement of a ``@Select``/``@Insert``/``@Update``/``@Delete`` mapper method: its string
        parts folded and joined with spaces (``<script>`` bodies are dynamic SQL); a ``@*Provider``
        builds its SQL in code and is SQL_UNSUPPORTED."""
        rule = self.p.s.rules.by_id[c["rule"]]
        m = c.get("member")
        if m is None:
            return None
        ns = c["type"]["binary"].replace("$", ".")
        sid = self._annotation_id(c)
        parent = m["name"] if sid != m["name"] else None
        line, end = c["lines"]
        kind = str(rule.emits.attributes.get("operation", "SELECT"))
        mf = MapperFile(c["path"], "MYBATIS", ns)
        # the folded text as written: its #{…} and ${…} are MyBatis's, never config placeholders
        parts = c.get("roles", {}).get("sql", [])
        bad = next((p for p in parts if "value" not in p), None)
        if rule.emits.attributes.get("provider") or bad is not None or not parts:
            reason = ("its SQL is built by a provider method at run time" if rule.emits.attributes.get("provider")
                      else f"the SQL {bad.get('unresolved', bad.get('ref', '?')) if bad else '(none)'} does not fold")
            st = MapperStatement(sid, kind, {}, SqlNode("script"), line, end, parent_id=parent)
            s = StageStatement(f"{ns}.{sid}", ids.entity_record_id("SQL_STATEMENT", f"{ns}.{sid}"),
                      self.p.seg(c["path"], line, end), c["path"], st, status="UNSUPPORTED", reason=reason,
                      expansion=Expansion([], []))
            self.stats.discovered += 1
            self._record_statement(c["module"], mf, s, [], source="ANNOTATION")
            return s
        text = " ".join(str(p["value"]) for p in parts)
        body = script_body(text, line, end)
        return self._statement(c["module"], mf, MapperStatement(sid, kind, {}, body, line, end, parent_id=parent),
                               source="ANNOTATION")

    def _annotation_id(self, c: Candidate) -> str:
        """The statement id of annotation SQL: the method's name; ``{name}!selectKey`` for a ``@SelectKey``."""
        rule = self.p.s.rules.by_id[c["rule"]]
        name = c["member"]["name"]
        return f"{name}!selectKey" if rule.emits.attributes.get("select_key") else name

    def _call_statement(self, c: Candidate, done: set[str]) -> StageStatement | None:
        """A statement whose SQL is an argument of a library call (``jdbcTemplate.update("…", …)``,
        ``connection.prepareStatement("…")``): named by its call site, its operation that of the
        parsed SQL, bound from the calling method (``binding = CALL_SITE``). An argument that is no
        string (a lambda, a PreparedStatementCreator) is no SQL. Java values concatenated into the
        text (``"… where id = " + id``) stand as ``${java:…}`` markers: a bind elsewhere, a
        concatenated suffix (CONCATENATION) or DYNAMIC_TABLE_NAME in a table position. A string that
        does not fold at all is SQL_UNSUPPORTED."""
        call, m = c["call"], c["member"]
        kind = call.get("arg_kinds", {}).get("sql")
        typ = call.get("arg_types", {}).get("sql")
        if kind in ("lambda", "ref") or (typ is not None and typ not in ("java.lang.String", "java.lang.CharSequence")):
            return None
        stable = call["callsite_id"]
        if stable in done:
            return None
        line, end = c["lines"]
        mf = MapperFile(c["path"], "MYBATIS", None)
        text, reason = self._call_sql(c)
        seg = self.p.seg(c["path"], line, end)
        if text is None:
            st = MapperStatement(call["name"], "UNKNOWN", {}, SqlNode("script"), line, end)
            s = StageStatement(stable, ids.entity_record_id("SQL_STATEMENT", stable), seg, c["path"], st, status="UNSUPPORTED",
                      reason=reason, expansion=Expansion([], []))
            self.stats.discovered += 1
            self._record_statement(c["module"], mf, s, [], source="CALL")
        else:
            st = MapperStatement(call["name"], "UNKNOWN", {}, script_body(text, line, end), line, end)
            s = self._statement(c["module"], mf, st, source="CALL", stable=stable)
        self.rs.relation("BINDS_TO", m["rid"], m["stable"], target_rid=s.rid, target_key=s.stable, status="RESOLVED",
                         evidence=[seg], ordinal=call["ordinal"], callsite_id=call["callsite_id"],
                         attributes={"binding": "CALL_SITE", "call": call["name"],
                                     "receiver_type": call["receiver_type"]})
        return s

    def _call_sql(self, c: Candidate) -> tuple[str | None, str]:
        """The SQL text of a call's ``sql`` argument with the package's configuration applied, Java
        values concatenated into it as ``${java:…}``; ``(None, reason)`` when it does not fold."""
        template = c.get("attrs", {}).get("sql_template")
        if template:
            out = []
            for part in template:
                if "runtime" in part:
                    out.append("${java:" + part["runtime"].replace("{", "(").replace("}", ")") + "}")
                    continue
                rt = self._sql_part(part)
                if rt.value is None:
                    return None, f"the SQL part {rt.expression} does not fold ({rt.reason})"
                out.append(rt.value)
            return "".join(out), ""
        outs = [self._sql_part(o) for o in c.get("roles", {}).get("sql", [])]
        bad = next((o for o in outs if o.value is None), None)
        if bad is not None or not outs:
            return None, (f"the SQL argument ({bad.expression if bad else 'none'}) is built at run time and "
                          "does not fold")
        if len(outs) > 1:
            return None, f"the SQL folds to {len(outs)} alternatives"
        return outs[0].value, ""

    def _sql_part(self, outcome: Outcome) -> "ResolvedText":
        """A folded part of JDBC SQL: configuration values (``@Value`` fields) resolve their
        ``${…}``; a string literal is sent as written, so one holding ``${``/``#{`` is no SQL diting
        can read (never resolved as a placeholder, never a MyBatis marker)."""
        if "value" in outcome and (not outcome.get("placeholders") or outcome.get("basis") != "CONFIG"):
            text = str(outcome["value"])
            if "${" in text or "#{" in text:
                return ResolvedText("UNKNOWN", None, expression=text[:200],
                                    reason="JDBC sends ${…} and #{…} in a string literal as written; no SQL "
                                           "database reads them")
            return ResolvedText("RESOLVED", text)
        return self.p.resolve(outcome)

    def _statement(self, module: str, mf: MapperFile, st: MapperStatement, source: str = "MAPPER_XML",
                   stable: str | None = None) -> StageStatement:
        ns = mf.namespace or ""
        stable = stable or f"{ns}.{st.id}"
        seg = self.p.seg(mf.path, st.line, st.end_line)
        exp_, dropped, results = statement_lineage(st.body, ns, self._lookup, self.dialect)
        s = StageStatement(stable, ids.entity_record_id("SQL_STATEMENT", stable), seg, mf.path, st, expansion=exp_)
        self.stats.discovered += 1
        s.unresolved_fragments = dropped
        if source == "CALL":  # no element names the operation: the parsed SQL does
            ops = sorted({r.operation for _, r in results if r.status == "PARSED" and r.operation})
            st.kind = ops[0] if len(ops) == 1 else "UNKNOWN"
        failed = [r for _, r in results if r.status != "PARSED"]
        includes = exp_.include_problem()
        if failed and len(failed) == len(results) and includes:
            # the text is incomplete (empty, or cut where a fragment belongs): that is why, whatever it parses as
            s.status, s.reason = "UNSUPPORTED", includes
        elif failed and len(failed) == len(results):
            s.status = failed[0].status
            s.reason = failed[0].reason if not exp_.budget_exhausted else \
                f"{_budget_reason(exp_)}, and what was rendered does not parse: {failed[0].reason}"
        elif failed or exp_.budget_exhausted or includes:
            s.status = "PARTIAL"
            s.reason = failed[0].reason if failed else (
                _budget_reason(exp_) if exp_.budget_exhausted else includes)
            s.code = ("SQL_PARSE_FAILED" if failed[0].status == "PARSE_FAILED" else "SQL_UNSUPPORTED") if failed else (
                "BUDGET_EXHAUSTED" if exp_.budget_exhausted else "SQL_UNSUPPORTED")
        for v, r in results:
            if r.status != "PARSED":
                continue
            for u in r.tables:
                s.uses.append(self._use(u, v, exp_))
        routed = self.routed_db(ns, mf.path) if self.routes_by_file or self.routes_by_package else None
        for u in s.uses:
            u.routed_db = routed
        if any(u.physical is None for u in s.uses) and s.status == "PARSED":
            s.status = "PARTIAL"
            s.reason = "a dynamic table name does not fold"
        elif any(u.dynamic_db for u in s.uses) and s.status == "PARSED":
            s.status = "PARTIAL"
            s.reason = "a table's schema is decided at run time"
        if st.entities and s.status in ("PARSED", "PARTIAL"):
            s.status, s.code = "PARTIAL", "SQL_UNSUPPORTED"
            s.reason = (f"XML entity references ({', '.join('&' + e + ';' for e in st.entities[:5])}) are never "
                        "expanded: the text they stand for is not analysed")
        self._record_statement(module, mf, s, results, source)
        return s

    def _ds(self, u: TableUse) -> str | None:
        """The datasource of a table use: its schema, else the package's; None when a ``${}`` names it."""
        return None if u.dynamic_db else (u.db or u.routed_db or self.datasource)

    def _use(self, u, v, exp_: Expansion) -> TableUse:
        got = self._use_of(u, v, exp_)
        if u.db and MARKER.search(u.db):  # ${schema}.t_order: the table is known, its database is not
            got.db = None
            got.dynamic_db = v.markers.get(int(MARKER.findall(u.db)[0]), ("?", None))[0]
        return got

    def _use_of(self, u, v, exp_: Expansion) -> TableUse:
        name = u.name
        markers = MARKER.findall(name)
        cols = {c for c in u.columns if not MARKER.search(c)}
        where = {c for c in u.where_columns if not MARKER.search(c)}
        if not markers:
            return TableUse(name, u.db, u.write, u.operation, cols, where)
        n = int(markers[0])
        expr = v.markers.get(n, ("?", None))[0]
        java = expr[5:] if expr.startswith("java:") else None  # a Java value concatenated in (a CALL's SQL)
        head, _, tail = name.partition(f"__dt{n}__")
        if tail:  # a name that goes on after its placeholder (t_${x}_log): no stem to stand for it
            return TableUse(None, u.db, u.write, u.operation, cols, where, expression=expr, display=java)
        bind = exp_.binds.get(expr)
        hints: set[str] = set()
        evidence = "PLACEHOLDER"
        if java is not None:
            evidence = "CONCATENATION"
            hints = key_hints(java)
        elif bind is not None:
            m = _BIND_HEAD.match(bind)
            if m:
                head = head + m.group("head") if not head else head
                hints = key_hints(m.group("rest"))
                evidence = "BIND"
        stem = head.rstrip("_")
        if not stem:
            return TableUse(None, u.db, u.write, u.operation, cols, where, expression=expr, display=java)
        return TableUse(stem, u.db, u.write, u.operation, cols, where, evidence, expr, hints)

    def _record_statement(self, module: str, mf: MapperFile, s: StageStatement, results, source: str = "MAPPER_XML") -> None:
        st = s.st
        exp_ = s.expansion
        assert exp_ is not None
        attrs = {"operation": st.kind, "source": source, "namespace": mf.namespace, "statement_id": st.id,
                 "parse_status": s.status, "variants": len(exp_.variants), "dialect": self.dialect,
                 "dialect_basis": self.dialect_basis,
                 "parameter_type": st.attrs.get("parameterType"), "result_map": st.attrs.get("resultMap"),
                 "result_type": st.attrs.get("resultType")}
        if source == "MAPPER_XML":
            attrs["mapper_location"] = self._location(module, mf)
        if st.parent_id:
            attrs["selectkey_of"] = f"{mf.namespace}.{st.parent_id}"
        if st.attrs.get("resultMap") and mf.namespace:
            attrs["result_maps"] = [self._result_map(mf.namespace, ref.strip())
                                    for ref in st.attrs["resultMap"].split(",") if ref.strip()]
        ops = sorted({r.operation for _, r in results if r.status == "PARSED" and r.operation})
        if source != "CALL" and ops and st.kind not in ops and \
                not (st.kind == "INSERT" and {"REPLACE", "UPSERT"} & set(ops)):
            attrs["parsed_operations"] = ops  # the element says one thing, the SQL another: not fully parsed
            if s.status == "PARSED":
                s.status, s.reason, s.code = "PARTIAL", f"<{st.kind.lower()}> holds {', '.join(ops)} SQL", \
                    "SQL_UNSUPPORTED"
                attrs["parse_status"] = s.status
        if s.reason:
            attrs["reason"] = s.reason
        dynamic = sorted({f"${{{e}}}" for v in exp_.variants for e, frag in v.markers.values() if frag is None}
                         - {f"${{{u.expression}}}" for u in s.uses if u.expression})
        if dynamic:  # ${} outside a table position and outside any conditional fragment
            attrs["dynamic_fragments"] = dynamic
        self._enter(module, s, attrs)
        # the mapper interface's methods of that name bind to the statement
        for m in self.p.methods_of(mf.namespace or "") if not st.parent_id else []:
            if m["name"] == st.id:
                self.rs.relation("BINDS_TO", m["rid"], m["stable"], target_rid=s.rid, target_key=s.stable,
                                 status="RESOLVED", evidence=[s.seg], attributes={"binding": "MAPPER_NAMESPACE"})
        self._tally(s)

    def record_plain_statement(self, module: str, s: StageStatement, attrs: dict[str, Any]) -> None:
        """Record a statement whose SQL is not text (a MyBatis-Plus inherited one, sql/plus.py): the
        entity, CONTAINS from its module, and its count; an UNSUPPORTED one gets SQL_UNSUPPORTED."""
        self._enter(module, s, attrs)
        self.stats.discovered += 1
        self._tally(s)

    def _enter(self, module: str, s: StageStatement, attrs: dict[str, Any]) -> None:
        """The SQL_STATEMENT entity and the module's CONTAINS of it."""
        self.rs.entity("SQL_STATEMENT", s.stable, s.stable, [s.seg], attrs)
        self.rs.relation("CONTAINS", self._module_rid(module), self.p.s.inv.ns[module], target_rid=s.rid,
                         target_key=s.stable, status="RESOLVED", evidence=[s.seg])

    def _tally(self, s: StageStatement) -> None:
        """Count a recorded statement as parsed, partial or failed, with the diagnostic that says why."""
        c = {"path": s.path, "lines": [s.st.line, s.st.end_line]}
        if s.status in ("PARSE_FAILED", "UNSUPPORTED"):
            self.stats.failed += 1
            code = "SQL_PARSE_FAILED" if s.status == "PARSE_FAILED" else "SQL_UNSUPPORTED"
            self.p.diag(code, s.stable, f"{s.stable} ({s.path}:{s.st.line}): {s.reason}", [s.rid], c)
        elif s.status == "PARTIAL":
            self.stats.partial += 1
            if s.expansion is not None and s.expansion.budget_exhausted:
                self.p.diag("BUDGET_EXHAUSTED", f"{s.stable}|variants", f"{s.stable}: "
                            f"{_budget_reason(s.expansion)}; the rest is not parsed", [s.rid], c)
            if s.code and s.code != "BUDGET_EXHAUSTED":
                self.p.diag(s.code, f"{s.stable}|partial", f"{s.stable} ({s.path}:{s.st.line}): {s.reason}",
                            [s.rid], c)
        else:
            self.stats.parsed += 1

    def _result_map(self, ns: str, ref: str) -> dict[str, Any]:
        """A ``resultMap`` reference as MyBatis resolves it: an id without a dot is in the referring
        namespace, one with a dot names ``namespace.id``; ``extends`` is followed the same way from
        each map's own namespace. ``{"id", "type", "extends": [qualified ids, nearest first]}``, or
        ``resolved: false`` when the package declares no such map."""
        key = (ns, ref) if (ns, ref) in self.result_maps else _qualify(ns, ref)
        rm = self.result_maps.get(key)
        if rm is None:
            return {"id": ".".join(key), "resolved": False}
        chain: list[str] = []
        seen = {key}
        cur_ns, cur = key[0], rm
        while cur.get("extends"):
            ext = cur["extends"].strip()
            parent = (cur_ns, ext) if (cur_ns, ext) in self.result_maps else _qualify(cur_ns, ext)
            chain.append(".".join(parent))
            nxt = self.result_maps.get(parent)
            if nxt is None or parent in seen or len(chain) >= MAX_RESULT_MAP_CHAIN:
                why = "undeclared" if nxt is None else "cycle" if parent in seen else "too long"
                return {"id": ".".join(key), "type": rm.get("type"), "extends": chain, "resolved": False,
                        "unresolved_reason": why}
            seen.add(parent)
            cur_ns, cur = parent[0], nxt
        return {"id": ".".join(key), "type": rm.get("type"), "extends": chain, "resolved": True}

    # ------------------------------------------------------------ tables
    def _tables(self, stmts: list[StageStatement]) -> dict[tuple[str, str | None], dict[str, Any]]:
        """Logical tables by (physical name lower-cased, datasource) with their TABLE record fields."""
        literal: dict[str | None, set[str]] = {}
        for s in stmts:
            for u in s.uses:
                if u.physical is not None and u.evidence is None:
                    literal.setdefault(self._ds(u), set()).add(u.physical)
        logical_of: dict[tuple[str, str | None], shards.LogicalName] = {}
        for ds, names in literal.items():
            for n, ln in shards.collapse(names, self.routing).items():
                logical_of[(n.lower(), ds)] = ln
        tables: dict[tuple[str, str | None], dict[str, Any]] = {}
        for s in stmts:
            for u in s.uses:
                if u.physical is None:
                    continue
                ds = self._ds(u)
                if u.evidence:
                    r = self.routing.get(u.physical.lower())
                    ln = shards.LogicalName(u.physical, [u.evidence] + (["ROUTING_CONFIG"] if r else []),
                                            confirmed_key=sorted(r.sharding_columns)[0] if r and
                                            len(r.sharding_columns) == 1 else None)
                    physical = f"{u.physical}_${{{u.expression}}}"
                else:
                    ln = logical_of.get((u.physical.lower(), ds), shards.LogicalName(u.physical))
                    physical = u.physical
                key = (ln.logical.lower(), ds)
                t = tables.setdefault(key, {"logical": ln.logical, "datasource": ds, "physical": set(),
                                            "evidence": {}, "confirmed": ln.confirmed_key, "hints": set(),
                                            "candidate_of": ln.candidate_of, "statements": []})
                t["physical"].add(physical)
                for ev in ln.evidence:
                    t["evidence"].setdefault(ev, s.seg)
                t["hints"] |= u.key_hints
                t["confirmed"] = t["confirmed"] or ln.confirmed_key
                t["statements"].append((s, u))
                u.physical = ln.logical  # the statement now reads the logical table
        for key, t in tables.items():
            r = self.routing.get(t["logical"].lower())
            if r is not None and r.source:
                t["evidence"]["ROUTING_CONFIG"] = self.p.seg(r.source[0], r.source[1], kind="CONFIG")
            sharded = bool(t["evidence"])
            # candidate keys: bind/concatenation identifiers, and columns every statement's WHERE constrains
            wheres = [u.where_columns for s, u in t["statements"] if not (u.write and u.operation == "INSERT")]
            common = set.intersection(*wheres) if wheres and sharded else set()
            cands = sorted((t["hints"] | common) - ({t["confirmed"]} if t["confirmed"] else set()))
            urn = f"table://{t['logical']}"
            stable = f"{urn}@{t['datasource'] or '?'}"
            attrs: dict[str, Any] = {}
            if t["candidate_of"]:
                attrs["shard_candidate_of"] = t["candidate_of"]
            t["routing"] = r
            if r is not None and len(r.sharding_columns) > 1:  # several routing columns: no single key
                attrs["routing_columns"] = {k: sorted(v) for k, v in r.columns.items() if v}
            evs = sorted({s.seg for s, _ in t["statements"]})
            t["rid"] = self.rs.entity(
                "TABLE", stable, t["logical"], evs[:8], attrs, urn=urn, datasource=t["datasource"],
                physical_names=sorted(t["physical"]), is_sharded=sharded,
                shard_evidence=[{"kind": k, "evidence_ref": RefTo(v)} for k, v in sorted(t["evidence"].items())],
                candidate_shard_keys=cands, confirmed_shard_key=t["confirmed"])
            t["stable"] = stable
            if sharded and not t["confirmed"] and not (r is not None and r.sharding_columns):
                # cites the evidence that makes the table sharded
                self.rs.diagnostic("SHARD_KEY_UNCONFIRMED", f"{stable}|key", f"{t['logical']} is sharded "
                                   f"({', '.join(sorted(t['evidence']))}) but no routing configuration names its "
                                   "shard key" + (f"; candidates: {', '.join(cands)}" if cands else ""), [t["rid"]],
                                   sorted(set(t["evidence"].values())))
        return tables

    def _relations(self, s: StageStatement, tables) -> None:
        seen: dict[tuple[str, str], dict[str, Any]] = {}
        for u in s.uses:
            kind = "WRITES" if u.write else "READS"
            if u.physical is None:
                shown = u.display or f"${{{u.expression}}}"
                d = self.p.diag("DYNAMIC_TABLE_NAME", f"{s.stable}|{u.expression}", f"{s.stable}: table name "
                                f"{shown} is decided at run time", [s.rid],
                                {"path": s.path, "lines": [s.st.line, s.st.end_line]})
                attrs = {"operation": u.operation}
                if u.name_basis:
                    attrs["table_name_basis"] = u.name_basis
                self.rs.relation(kind, s.rid, s.stable, target_rid=None, target_key=f"?{shown}",
                                 status="UNRESOLVED", evidence=[s.seg], diagnostics=[d],
                                 match_keys={"table_expression": shown}, attributes=attrs)
                continue
            t = tables.get((u.physical.lower(), self._ds(u)))
            if t is None:
                continue
            if u.dynamic_db:
                self.p.diag("DYNAMIC_TABLE_NAME", f"{s.stable}|{u.dynamic_db}", f"{s.stable}: the schema "
                            f"${{{u.dynamic_db}}} of {u.physical} is decided at run time; its datasource is not known",
                            [s.rid], {"path": s.path, "lines": [s.st.line, s.st.end_line]})
            cur = seen.setdefault((kind, t["rid"]), {"t": t, "ops": set(), "cols": set(), "basis": set(),
                                                     "guards": set(), "guard_cols": set()})
            cur["ops"].add(u.operation)
            cur["cols"] |= u.columns
            if u.write and u.operation == "UPDATE":
                # compare-and-set: a column the UPDATE assigns is also tested in its WHERE
                # (``set status = #{to} where id = #{id} and status = #{from}``): a repeat changes nothing
                cas = {c.lower() for c in u.columns} & {c.lower() for c in u.where_columns}
                if cas:
                    cur["guards"].add("CONDITIONAL_UPDATE")
                    cur["guard_cols"] |= cas
            elif u.write and u.operation == "UPSERT":
                cur["guards"].add("UPSERT")  # INSERT … ON DUPLICATE KEY UPDATE / ON CONFLICT: a unique key decides
            if u.name_basis:
                cur["basis"].add(u.name_basis)
        for (kind, _), cur in sorted(seen.items()):
            t = cur["t"]
            attrs = {"operations": sorted(cur["ops"]), "columns": sorted(cur["cols"])}
            if cur["guards"]:
                attrs["idempotency_guard"] = sorted(cur["guards"])[0] if len(cur["guards"]) == 1 else \
                    sorted(cur["guards"])
                if cur["guard_cols"]:
                    attrs["guard_columns"] = sorted(cur["guard_cols"])
            if cur["basis"]:
                attrs["table_name_basis"] = sorted(cur["basis"])[0] if len(cur["basis"]) == 1 else sorted(cur["basis"])
            self.rs.relation(kind, s.rid, s.stable, target_rid=t["rid"], target_key=t["stable"], status="RESOLVED",
                             evidence=[s.seg], attributes=attrs)
        self._ledger(s)

    def _shard_checks(self, stmts: list[StageStatement], tables) -> None:
        """SHARD_BROADCAST for a statement whose WHERE misses a routing column of its table: the
        confirmed shard key, or each of the database and table routing columns."""
        for t in tables.values():
            r = t.get("routing")
            if r is not None and len(r.sharding_columns) > 1:
                keys = [(c, f"{kind} routing column") for kind, cs in sorted(r.columns.items()) for c in sorted(cs)]
            elif t["confirmed"]:
                keys = [(t["confirmed"], "shard key")]
            else:
                continue
            for s, u in t["statements"]:
                if u.write and u.operation == "INSERT":
                    continue
                where = {c.lower() for c in u.where_columns}
                missing = [f"{what} {c}" for c, what in keys if c.lower() not in where]
                if missing:
                    self.p.diag("SHARD_BROADCAST", f"{s.stable}|{t['logical']}", f"{s.stable}: its WHERE does not "
                                f"constrain {t['logical']}'s {', '.join(missing)}; the statement goes to every "
                                "shard", [s.rid, t["rid"]], {"path": s.path, "lines": [s.st.line, s.st.end_line]})

    # ------------------------------------------------------------ ledger
    def _ledger(self, s: StageStatement) -> None:
        """Conditional fragments become ledger items once every entity of the package is final
        (their ``symbol_revision`` is the statement's revision): queued here."""
        if s.expansion is not None and s.expansion.fragments:
            self.p.sql_ledger.append((s, s.expansion.fragments))

    def ledger_items(self) -> None:
        """The ledger items of every statement's conditional fragments, each with the exclusion rule
        that excludes it (:mod:`diting.ledger.exclusion`; a fragment's ``test`` is its condition)."""
        self.rs.finish()
        rules = ledger_exclusions(self.p.s.rules)
        for s, frags in self.p.sql_ledger:
            rev = self.rs.entities[s.rid]["implementation_ref"].revision
            index = {f.path: i for i, f in enumerate(frags)}
            excluded = excluded_items(
                [ArmFacts(f.kind, s.stable, " ".join(f.test.split()) if f.test is not None else None, "CONTINUE",
                          None, [], f.path not in s.unresolved_fragments, index.get(f.parent or "", -1))
                 for f in frags], rules)
            for f, rule in zip(frags, excluded):
                self._item(s, f, rev, rule)

    def _item(self, s: StageStatement, f: Fragment, rev: str, rule: str | None) -> None:
        branch_id = f"{s.stable}/{f.path}"
        seg = self.p.seg(s.path, f.line, f.end_line)
        unresolved = f.path in s.unresolved_fragments
        self.stats.ledger_items += 1
        if rule:
            self.stats.ledger_excluded[rule] = self.stats.ledger_excluded.get(rule, 0) + 1
        else:
            self.stats.ledger_unresolved += unresolved
        self.rs.ledger_item({
            "record_id": ids.record_id_for(ids.BRANCH_PREFIX, branch_id), "branch_id": branch_id,
            "branch_kind": f.kind, "parent_branch_id": f"{s.stable}/{f.parent}" if f.parent else None,
            "symbol_ref": RefTo(s.rid), "symbol_revision": rev,
            "condition_ref": RefTo(self.p.seg(s.path, f.line, max(f.line, f.test_end_line)))
            if f.kind != "SQL_OTHERWISE" else None,
            "outcome_kind": "CONTINUE", "effect_refs": [], "exit_ref": None, "evidence_refs": [RefTo(seg)],
            "resolution_status": "UNRESOLVED" if unresolved else "RESOLVED",
            **({"exclusion_rule_id": rule} if rule else {}),
        })


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
