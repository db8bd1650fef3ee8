"""The SQL stage's record shapes: a mapper statement as it is recorded, and each table position it uses (docs/sql.md).

Made by ``sql/emit.py`` (mapper XML), ``sql/java_statements.py`` (annotations, JDBC calls) and
``sql/plus.py`` (MyBatis-Plus base-mapper methods); their tables by ``sql/tables.py``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from diting.sql.dynamic import Expansion
from diting.sql.mybatis import MapperStatement


@dataclass
class TableUse:
    """One table position of one statement, after marker handling."""

    physical: str | None  # None: a dynamic name that folds to nothing
    db: str | None
    write: bool
    operation: str
    columns: set[str]
    where_columns: set[str]
    evidence: str | None = None  # PLACEHOLDER, BIND
    expression: str | None = None  # the ${} behind a dynamic name
    key_hints: set[str] = field(default_factory=set)
    name_basis: str | None = None  # TABLE_NAME, CONVENTION: how a MyBatis-Plus entity names its table
    dynamic_db: str | None = None  # the ${} that names the table's schema (its datasource is not known)
    display: str | None = None  # how a dynamic name shows when it is no ${} (an unfolded Java expression)
    #: the database of the datasource bean its statement's SqlSessionFactory is fed (None: the package's)
    routed_db: str | None = None


@dataclass
class StageStatement:
    """One mapper statement as the SQL stage records it: its stable id, record id, evidence segment,
    file, the parsed statement and its table uses."""

    stable: str
    rid: str
    seg: str
    path: str
    st: MapperStatement
    uses: list[TableUse] = field(default_factory=list)
    status: str = "PARSED"  # PARSED, PARTIAL, PARSE_FAILED, UNSUPPORTED
    reason: str = ""
    code: str | None = None  # the diagnostic a PARTIAL statement gets (None: another record says why)
    expansion: Expansion | None = None
    unresolved_fragments: set[str] = field(default_factory=set)
