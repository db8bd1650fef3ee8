"""The facts of one Java file, as the extractor (``java/syntax.py``) makes them: its types, members,
annotations, call sites, bodies and imports (docs/scanning.md §8). Pure data, pickled between
processes; every later stage reads these shapes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Literal, Union

from typing_extensions import NotRequired, TypedDict

from pydantic import ConfigDict, Field, with_config

if TYPE_CHECKING:
    from diting.java.branches import BranchSite

# ---------------------------------------------------------------- expressions
# The expression JSON ``java/expressions.expr_json`` makes, read by constant folding, the candidate finder
# and call-site resolution: plain dicts (they are pickled with the file's facts), each shape declared
# here once. Tests check every expression of every file they scan against :data:`Expr`
# (:func:`check_exprs`).

_SHAPE = ConfigDict(extra="forbid")


@with_config(_SHAPE)
class TextExpr(TypedDict):
    """``str``/``char`` literals (``value`` unescaped)."""
    kind: Literal["str", "char"]
    value: str


@with_config(_SHAPE)
class IntExpr(TypedDict):
    """``int``/``long`` literals: ``value`` the decimal text of the value (two's complement for hex,
    octal and binary literals)."""
    kind: Literal["int", "long"]
    value: str


@with_config(_SHAPE)
class BoolExpr(TypedDict):
    kind: Literal["bool"]
    value: Literal["true", "false"]


@with_config(_SHAPE)
class BareExpr(TypedDict):
    """``null``, ``this``, ``super``."""
    kind: Literal["null", "this", "super"]


@with_config(_SHAPE)
class NameExpr(TypedDict):
    """A simple (``name``, one part) or dotted (``field``) name as written."""
    kind: Literal["name", "field"]
    parts: list[str]


@with_config(_SHAPE)
class ItemsExpr(TypedDict):
    """A ``+`` chain (``concat``) or an array initializer (``array``)."""
    kind: Literal["concat", "array"]
    items: list["Expr"]


@with_config(_SHAPE)
class BinaryExpr(TypedDict):
    """Arithmetic or bitwise ``op`` other than ``+``."""
    kind: Literal["binary"]
    op: str
    left: "Expr | None"
    right: "Expr | None"


@with_config(_SHAPE)
class UnaryExpr(TypedDict):
    kind: Literal["unary"]
    op: str
    operand: "Expr | None"


@with_config(_SHAPE)
class ClassExpr(TypedDict):
    """``T.class``: the type's name parts and array dimensions."""
    kind: Literal["class"]
    type: list[str]
    dims: int


@with_config(_SHAPE)
class AnnotationExpr(TypedDict):
    """A nested annotation: its name as written and its attributes."""
    kind: Literal["annotation"]
    name: str
    args: dict[str, "Expr"]


@with_config(_SHAPE)
class CallExpr(TypedDict):
    """A call outside a member body (field initializers, annotation values): ``target`` the
    receiver's text, ``target_expr`` its expression."""
    kind: Literal["call"]
    target: str | None
    target_expr: "Expr | None"
    name: str
    args: list["Expr | None"]


@with_config(_SHAPE)
class NewExpr(TypedDict):
    kind: Literal["new"]
    type: list[str]
    text: str
    args: list["Expr | None"]


@with_config(_SHAPE)
class CastExpr(TypedDict):
    kind: Literal["cast"]
    type: list[str]
    value: "Expr | None"


@with_config(_SHAPE)
class CallRefExpr(TypedDict):
    """Another call of the same member body, by its ``ordinal`` (:class:`CallSite`)."""
    kind: Literal["callref"]
    ordinal: int


@with_config(_SHAPE)
class TextOnlyExpr(TypedDict):
    """What is kept only as text: ``float`` literals (never a float value), conditionals, lambdas,
    method references and any other expression (``truncated`` past the depth limit)."""
    kind: Literal["float", "cond", "lambda", "ref", "other"]
    text: str
    truncated: NotRequired[bool]


#: one expression's JSON form (``java/expressions.expr_json``)
Expr = Annotated[Union[TextExpr, IntExpr, BoolExpr, BareExpr, NameExpr, ItemsExpr, BinaryExpr, UnaryExpr, ClassExpr,
                       AnnotationExpr, CallExpr, NewExpr, CastExpr, CallRefExpr, TextOnlyExpr],
                 Field(discriminator="kind")]


@dataclass(slots=True)
class TypeRef:
    """A type as written: ``parts`` of the (possibly qualified) name without type
    arguments, array ``dims``; ``primitive`` for int/boolean/void …"""

    parts: tuple[str, ...]
    dims: int = 0
    primitive: bool = False
    #: type arguments as written (``Listener<OrderEvent>`` → the OrderEvent reference)
    args: tuple["TypeRef", ...] = ()


@dataclass(slots=True)
class Annotation:
    """``@name(args)``: ``name`` as written (dotted), ``args`` name → expression JSON."""

    name: str
    args: dict[str, Expr]
    line: int


@dataclass(slots=True)
class Param:
    name: str
    type: TypeRef
    annotations: list[Annotation]
    varargs: bool = False


@dataclass(slots=True)
class TypeParam:
    name: str
    bounds: list[TypeRef]


@dataclass(slots=True)
class CallSite:
    """One call in a member's body, in pre-order (``ordinal``).

    ``kind``: CALL (``recv.name(args)``), NEW (``new T(args)``), CTOR (``this(…)``/``super(…)``),
    REF (a method reference ``recv::name``). ``receiver`` is the expression JSON of the object
    (``{"kind": "this"}``, ``{"kind": "super"}``), None when unqualified. ``arity`` is the number
    of arguments; ``args`` their expression JSON, or None when the extractor was told which calls
    matter and this one does not (see :func:`extract_file`). ``in_lambda`` when the call sits in a
    lambda of the member (it runs when the lambda runs, not when the member does)."""

    ordinal: int
    kind: str
    name: str
    receiver: Expr | None
    new_type: TypeRef | None
    args: list[Expr | None] | None
    arity: int
    line: int
    end_line: int
    in_lambda: bool
    #: index in :attr:`Body.branches` of the innermost arm holding the call; -1 for the member's top level
    branch: int = -1
    #: the ordinal of the call this site's innermost lambda (or, for REF, the reference itself) is an
    #: argument of (``pool.submit(() -> …)``); -1 when there is none
    handed_to: int = -1
    #: start byte of the call
    pos: int = -1


@dataclass(slots=True)
class LocalVar:
    """A local variable (or enhanced-for / catch variable): its declared type (None for ``var``),
    initializer, and how often it is assigned after its declaration."""

    name: str
    type: TypeRef | None
    init: Expr | None
    line: int
    assigned: int = 0
    #: start byte of the declaration (which of several same-name locals a use sees)
    pos: int = -1


@dataclass(slots=True)
class Body:
    """What a member's body does that later stages read: calls, locals, returns, assignments."""

    calls: list[CallSite] = field(default_factory=list)
    locals: list[LocalVar] = field(default_factory=list)
    #: return expressions (kept for methods without parameters: getters)
    returns: list[Expr] = field(default_factory=list)
    #: ``(target, value)``: ``this.f = v`` or ``f = v`` (target ``f``), kept for constructors
    assignments: list[tuple[str, Expr]] = field(default_factory=list)
    keep_returns: bool = False
    keep_assignments: bool = False
    #: simple names assigned in the body that are not its locals (parameters, fields), at most 16
    reassigned: list[str] = field(default_factory=list)
    #: parameters of the body's lambdas ``(name, start byte)``, at most 16
    lambda_params: list[tuple[str, int]] = field(default_factory=list)
    #: arms of branch-forming constructs, outer before inner (see :class:`BranchSite`)
    branches: list[BranchSite] = field(default_factory=list)
    #: arms nested deeper than :data:`~diting.java.branches.MAX_BRANCH_DEPTH` were not recorded
    branches_truncated: bool = False


@dataclass(slots=True)
class MethodDecl:
    """A method, constructor (``<init>``), compact constructor, annotation element, or the
    ``<clinit>`` pseudo-member of a static initializer."""

    name: str
    decl_kind: str  # METHOD, CONSTRUCTOR, COMPACT_CONSTRUCTOR, ANNOTATION_ELEMENT
    modifiers: list[str]
    annotations: list[Annotation]
    type_params: list[TypeParam]
    params: list[Param]
    return_type: TypeRef | None
    throws: list[TypeRef]
    start_line: int
    end_line: int
    has_body: bool
    start_byte: int
    body: Body | None = None
    #: an annotation element's ``default`` value (expression JSON)
    default: Expr | None = None


@dataclass(slots=True)
class FieldDecl:
    """One declarator of a field (``int a, b;`` gives two)."""

    name: str
    type: TypeRef
    modifiers: list[str]
    annotations: list[Annotation]
    initializer: Expr | None
    start_line: int
    end_line: int
    start_byte: int


@dataclass(slots=True)
class EnumConstant:
    name: str
    args: list[Expr | None]
    annotations: list[Annotation]
    start_line: int
    end_line: int
    start_byte: int


@dataclass(slots=True)
class TypeDecl:
    """A type declaration. ``binary_suffix`` is the binary name below the package
    (``Outer$Inner``, ``Outer$1``, ``Outer$1Local``); ``outer`` indexes the
    enclosing type in :attr:`FileFacts.types` (None for top-level types)."""

    kind: str  # CLASS, INTERFACE, ENUM, RECORD, ANNOTATION
    simple_name: str
    binary_suffix: str
    outer: int | None
    nesting: str  # TOP, MEMBER, LOCAL, ANONYMOUS
    modifiers: list[str]
    annotations: list[Annotation]
    type_params: list[TypeParam]
    superclass: TypeRef | None
    interfaces: list[TypeRef]
    anonymous_base: TypeRef | None
    header_start: int
    header_end: int
    end_line: int
    start_byte: int
    methods: list[MethodDecl] = field(default_factory=list)
    fields: list[FieldDecl] = field(default_factory=list)
    enum_constants: list[EnumConstant] = field(default_factory=list)
    record_components: list[Param] = field(default_factory=list)
    static_init_lines: list[tuple[int, int]] = field(default_factory=list)
    #: type parameters of the method whose body declares this local or anonymous type
    method_type_params: list[TypeParam] = field(default_factory=list)
    #: calls, locals and returns of the static initializers, in source order
    clinit_body: Body | None = None
    #: zero-argument methods returning a field: method name → field name (``return this.f;``)
    getter_fields: dict[str, str] = field(default_factory=dict)
    #: per constructor (by arity): field name → index of the parameter assigned to it
    ctor_field_params: list[tuple[int, dict[str, int]]] = field(default_factory=list)


@dataclass(slots=True)
class Import:
    name: str
    static: bool
    wildcard: bool
    line: int


@dataclass(slots=True)
class FileFacts:
    """Everything the syntax pass learns about one ``.java`` file."""

    path: str
    encoding: str
    lossy: bool
    bom: bool
    line_count: int
    package: str
    imports: list[Import]
    types: list[TypeDecl]
    #: error ranges ``(start_line, start_col, end_line, end_col, what)``, 1-based lines
    errors: list[tuple[int, int, int, int, str]]
    #: declarations the parser found but that sit outside any type
    orphans: list[tuple[str, int]]
    declared_type_count: int
    declared_method_count: int
    #: the decoded lines (needed for evidence); dropped once segments are cut
    lines: list[str] | None = None
    #: how the encoding was chosen (:attr:`diting.source.text.DecodedText.basis`: a guess or a fact)
    encoding_basis: str = "utf-8"
    #: why the decoded text may be misread (:attr:`~diting.source.text.DecodedText.doubt`), and the lines
    encoding_doubt: str | None = None
    doubt_lines: tuple[int, ...] = ()


def type_chain(facts: FileFacts, idx: int) -> list[int]:
    """Indices of a type and its enclosing types, innermost first."""
    out = []
    cur: int | None = idx
    while cur is not None:
        out.append(cur)
        cur = facts.types[cur].outer
    return out


def expressions(facts: FileFacts) -> "list[tuple[str, Expr]]":
    """Every expression of a file's facts with where it sits (``Type.member: what``): annotation
    attributes, field initializers, enum constant arguments, element defaults, and in bodies the
    calls' receivers and arguments, locals' initializers, returns and assignments."""
    out: list[tuple[str, Expr]] = []

    def annotations(where: str, anns: list[Annotation]) -> None:
        out.extend((f"{where} @{a.name}.{k}", v) for a in anns for k, v in a.args.items())

    def body(where: str, b: Body | None) -> None:
        if b is None:
            return
        for c in b.calls:
            if c.receiver is not None:
                out.append((f"{where} call {c.ordinal} receiver", c.receiver))
            out.extend((f"{where} call {c.ordinal} argument {i}", a) for i, a in enumerate(c.args or ()) if a)
        out.extend((f"{where} local {lv.name}", lv.init) for lv in b.locals if lv.init is not None)
        out.extend((f"{where} return", r) for r in b.returns)
        out.extend((f"{where} assignment {t}", v) for t, v in b.assignments)

    for td in facts.types:
        annotations(td.simple_name, td.annotations)
        for f in td.fields:
            annotations(f"{td.simple_name}.{f.name}", f.annotations)
            if f.initializer is not None:
                out.append((f"{td.simple_name}.{f.name} initializer", f.initializer))
        for ec in td.enum_constants:
            annotations(f"{td.simple_name}.{ec.name}", ec.annotations)
            out.extend((f"{td.simple_name}.{ec.name} argument {i}", a) for i, a in enumerate(ec.args) if a)
        for p in td.record_components:
            annotations(f"{td.simple_name}.{p.name}", p.annotations)
        for md in td.methods:
            where = f"{td.simple_name}.{md.name}"
            annotations(where, md.annotations)
            for p in md.params:
                annotations(f"{where}({p.name})", p.annotations)
            if md.default is not None:
                out.append((f"{where} default", md.default))
            body(where, md.body)
        body(f"{td.simple_name}.<clinit>", td.clinit_body)
    return out
