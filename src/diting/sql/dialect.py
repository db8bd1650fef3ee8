"""Which SQL dialect a datasource speaks (docs/sql.md §3: MySQL by default, configurable per datasource).

The dialect of a package's statements comes from, in order: ``--sql-dialect DATASOURCE=DIALECT`` for
the package's datasource, ``--sql-dialect DIALECT`` for every datasource, the driver named by the
package's JDBC URL (``jdbc:postgresql:…``), else MySQL. Dialects are sqlglot's names.
"""

from __future__ import annotations

import re

from sqlglot.dialects.dialect import Dialect

from diting.errors import UserError

#: JDBC URL kind → sqlglot dialect
JDBC_DIALECTS = {"mysql": "mysql", "mariadb": "mysql", "postgresql": "postgres", "oracle": "oracle",
                 "sqlserver": "tsql", "h2": "mysql", "clickhouse": "clickhouse", "sqlite": "sqlite",
                 "oceanbase": "mysql", "tidb": "mysql"}
DEFAULT = "mysql"
#: JDBC drivers that wrap another one's URL (``jdbc:p6spy:mysql://…``)
_WRAPPERS = ("p6spy", "log4jdbc", "otel", "tracing")
_HOST_DB = re.compile(r"^(?:[a-z]+:)*//[^/?;]*/(?P<db>[^/?;:]+)", re.I)
_ORACLE_DB = (re.compile(r"@//[^/]+/(?P<db>[^/?:\s]+)"), re.compile(r"@[^:/()\s]+:\d+:(?P<db>[\w$#]+)"),
              re.compile(r"\((?:SERVICE_NAME|SID)\s*=\s*(?P<db>[^)\s]+)\)", re.I))
_SQLSERVER_DB = re.compile(r"[;:](?:databaseName|database)\s*=\s*(?P<db>[^;]+)", re.I)
#: the key of an override for every datasource
EVERY = "*"


def parse_overrides(specs: list[str]) -> dict[str, str]:
    """``["postgres", "trade=oracle"]`` → ``{"*": "postgres", "trade": "oracle"}``.

    Raises :class:`UserError` for an unknown dialect, an empty datasource name, or two values for
    one datasource."""
    out: dict[str, str] = {}
    for spec in specs:
        ds, sep, name = spec.strip().rpartition("=")
        ds = ds.strip() if sep else EVERY
        name = name.strip().lower()
        if not ds:
            raise UserError(f"--sql-dialect {spec!r}: the datasource name before '=' is empty")
        if not name:
            raise UserError(f"--sql-dialect {spec!r}: no dialect given")
        try:
            Dialect.get_or_raise(name)
        except ValueError:
            raise UserError(f"--sql-dialect {spec!r}: {name!r} is not a SQL dialect diting knows "
                            "(sqlglot's names: mysql, postgres, oracle, tsql, clickhouse, sqlite …)") from None
        if out.get(ds, name) != name:
            raise UserError(f"--sql-dialect names two dialects for {'every datasource' if ds == EVERY else ds}: "
                            f"{out[ds]} and {name}")
        out[ds] = name
    return out


def jdbc_database(url: str) -> tuple[str | None, str] | None:
    """``(database name or None, driver kind)`` of a JDBC URL; None when ``url`` is no JDBC URL.

    ``jdbc:mysql://h1:3306,h2/trade?x=y`` → ``("trade", "mysql")``; Oracle thin URLs give the
    service name or SID (``@//h:1521/ORCL``, ``@h:1521:ORCL``, a ``(DESCRIPTION=…(SERVICE_NAME=x))``);
    SQL Server gives ``databaseName``; a wrapping driver (p6spy, log4jdbc …) gives the wrapped one."""
    u = url.strip()
    if u[:5].lower() != "jdbc:":
        return None
    kind, _, body = u[5:].partition(":")
    kind = kind.lower()
    if kind in _WRAPPERS and ":" in body:
        kind, _, body = body.partition(":")
        kind = kind.lower()
    if not kind:
        return None
    if kind == "oracle":
        m = next((m for p in _ORACLE_DB if (m := p.search(body))), None)
    elif kind in ("sqlserver", "jtds"):
        m = _SQLSERVER_DB.search(body) or _HOST_DB.match(body)
    else:
        m = _HOST_DB.match(body)
    db = m.group("db").strip() if m else None
    return (db or None), ("sqlserver" if kind == "jtds" else kind)


def choose(datasource: str | None, jdbc_kind: str | None, overrides: dict[str, str]) -> tuple[str, str]:
    """``(dialect, basis)`` for a datasource: basis OVERRIDE, JDBC_URL or DEFAULT."""
    if datasource is not None:
        for name, value in overrides.items():  # database names compared as MySQL on Windows does: any case
            if name != EVERY and name.lower() == datasource.lower():
                return value, "OVERRIDE"
    if EVERY in overrides:
        return overrides[EVERY], "OVERRIDE"
    if jdbc_kind is not None and jdbc_kind in JDBC_DIALECTS:
        return JDBC_DIALECTS[jdbc_kind], "JDBC_URL"
    return DEFAULT, "DEFAULT"  # no URL, or a driver whose dialect diting does not know (DM, Kingbase …)
