"""The shapes a Gradle build script reads into (``inventory/gradle_script.py``): tokens, expressions and
statements, the same for the Groovy and the Kotlin DSL (docs/gradle.md, "How scripts are read")."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(slots=True)
class Tok:
    kind: str  # id, str, num, op, nl, eof
    value: str
    line: int
    #: str tokens: literal pieces and ("$", template text) pieces
    parts: tuple = ()


@dataclass(slots=True)
class Expr:
    line: int


@dataclass(slots=True)
class Str(Expr):
    """A string literal; ``parts`` are literal strings and ``("$", text)`` templates."""

    parts: tuple

    @property
    def literal(self) -> str | None:
        """The value when the string holds no template, else None."""
        if all(isinstance(p, str) for p in self.parts):
            return "".join(self.parts)
        return None


@dataclass(slots=True)
class Num(Expr):
    text: str


@dataclass(slots=True)
class Name(Expr):
    """An identifier (``true``, ``false`` and ``null`` among them)."""

    name: str


@dataclass(slots=True)
class Arg:
    name: str | None
    value: Expr


@dataclass(slots=True)
class Call(Expr):
    """``target.name(args) {closure}``; ``target`` None for a call on the script's receiver;
    ``parens`` False for a Groovy command call or a Kotlin infix call."""

    target: Expr | None
    name: str
    args: list[Arg]
    closure: "Closure | None" = None
    parens: bool = True
    #: Kotlin type arguments written before the arguments (``withType<BootJar>``), simple names
    type_args: tuple[str, ...] = ()


@dataclass(slots=True)
class Member(Expr):
    """``target.name`` (also ``target?.name``)."""

    target: Expr
    name: str


@dataclass(slots=True)
class Index(Expr):
    """``target[key]``."""

    target: Expr
    key: Expr | None


@dataclass(slots=True)
class ListLit(Expr):
    items: list[Expr]


@dataclass(slots=True)
class MapLit(Expr):
    entries: list[Arg]


@dataclass(slots=True)
class Closure(Expr):
    body: list["Stmt"]
    end_line: int = 0


@dataclass(slots=True)
class Op(Expr):
    """A binary, unary or ternary expression; ``operands`` in source order."""

    op: str
    operands: list[Expr]


@dataclass(slots=True)
class Opaque(Expr):
    """Something the reader keeps only as a location (``new X(…)``, a cast, a lambda reference)."""

    text: str
    inner: list[Expr] = field(default_factory=list)


@dataclass(slots=True)
class Stmt:
    line: int
    end_line: int


@dataclass(slots=True)
class ExprStmt(Stmt):
    expr: Expr


@dataclass(slots=True)
class Assign(Stmt):
    target: Expr
    op: str
    value: Expr


@dataclass(slots=True)
class Decl(Stmt):
    """``def x = v`` / ``val x = v`` / ``val x by extra(v)`` (``delegate`` holds the ``by`` expression)."""

    name: str
    value: Expr | None
    delegate: Expr | None = None


@dataclass(slots=True)
class Control(Stmt):
    """``if``/``for``/``while``/``when``/``try``/``switch``: ``keyword``, the condition or header
    expressions, and every body (then, else, catch, finally …) as statement lists."""

    keyword: str
    header: list[Expr]
    bodies: list[list[Stmt]]


@dataclass(slots=True)
class Definition(Stmt):
    """A class, function or other definition inside a script (build logic, never applied)."""

    keyword: str
    name: str


@dataclass(slots=True)
class Script:
    path: str
    dsl: str  # groovy or kotlin
    statements: list[Stmt]
    lines: list[str]
    errors: list[tuple[int, str]] = field(default_factory=list)
