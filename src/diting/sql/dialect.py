"""Which SQL dialect a datasource speaks (SPEC §4.7: MySQL by default, configurable per datasource).

The dialect of a package's statements comes from, in order: ``--sql-dialect DATASOURCE=DIALECT`` for
the package's datasource, ``--sql-dialect DIALECT`` for every datasource, the driver named by the
package's JDBC URL (``jdbc:postgresql:…``), else MySQL. Dialects are sqlglot's names.
"""

from __future__ import annotations

from sqlglot.dialects.dialect import Dialect

from diting.errors import UserError

#: JDBC URL kind → sqlglot dialect
JDBC_DIALECTS = {"mysql": "mysql", "mariadb": "mysql", "postgresql": "postgres", "oracle": "oracle",
                 "sqlserver": "tsql", "h2": "mysql", "clickhouse": "clickhouse", "sqlite": "sqlite"}
DEFAULT = "mysql"
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


def choose(datasource: str | None, jdbc_kind: str | None, overrides: dict[str, str]) -> tuple[str, str]:
    """``(dialect, basis)`` for a datasource: basis OVERRIDE, JDBC_URL or DEFAULT."""
    if datasource is not None and datasource in overrides:
        return overrides[datasource], "OVERRIDE"
    if EVERY in overrides:
        return overrides[EVERY], "OVERRIDE"
    if jdbc_kind is not None:
        return JDBC_DIALECTS.get(jdbc_kind, DEFAULT), "JDBC_URL"
    return DEFAULT, "DEFAULT"
