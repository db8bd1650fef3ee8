"""The SQL configuration of one package (docs/sql.md): which database its statements reach and in
which dialect they are parsed, its datasource beans and the SqlSessionFactory routes from them to
mapper files and packages, where MyBatis finds its mapper files, and (through
sql/sharding_config.py) the ShardingSphere routing of its tables.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from diting.config.sources import canonical_key
from diting.probes.xml_candidates import split_list
from diting.resolve.spring_locations import PackagePatterns
from diting.sql import dialect, shards, sharding_config
from diting.sql.mybatis import MapperFile

if TYPE_CHECKING:
    from diting.probes.context import ProbeContext

_MAPPER_LOCATION_KEYS = ("mybatis.mapper-locations", "mybatis-plus.mapper-locations")
#: the bean properties that hold a datasource's JDBC URL (Druid, DBCP, Spring: url; Hikari, c3p0: jdbcUrl)
_URL_PROPERTIES = ("url", "jdbcUrl")
#: the ShardingSphere JDBC driver's URL (its prefix is case-sensitive)
_SS_DRIVER_URL = re.compile(r"^jdbc:shardingsphere:(?P<location>.+)$")


class SqlConfig:
    """What the package's configuration says its statements reach: read once per package."""

    def __init__(self, p: "ProbeContext") -> None:
        self.p = p
        #: the datasource URL values of the configuration, read once for the routing files and the JDBC kind
        self.url_values = self._datasource_url_values()
        self.sharding_files = sharding_config.routing_files(p, self.url_values)
        #: datasource bean name → (database name or None, JDBC kind), from its JDBC URL property
        self.datasource_beans: dict[str, tuple[str | None, str]] = self._datasource_beans()
        self.datasource, self.dialect, self.dialect_basis = self._datasource()
        self.located, self.location_patterns = self._mapper_locations()
        self.routes_by_file, self.routes_by_package = self._factory_routes()
        #: logical table (lower-cased) → its ShardingSphere routing
        self.routing: dict[str, shards.Routing] = sharding_config.routing(
            ((src.path, e) for src, e in self._config_entries()), self.sharding_files)

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

    def mapper_location(self, module: str, mf: MapperFile) -> str:
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

