"""Rule matches: the shapes of the candidates the candidate finder (``probes/candidates.py``,
``probes/call_candidates.py``, ``probes/xml_candidates.py``, ``probes/resources.py``) hands the
emit mechanisms (docs/rules.md §10).

A candidate is a plain dict (candidates are pickled from the module workers and a package adds its
namespace ``ns``), each key declared here once. With validation on (tests, ``DITING_VALIDATE=1``)
every candidate a package receives is checked against :data:`Candidate`, extra keys included
(:func:`check_candidates`); a mechanism reads only what these declarations name.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import ConfigDict, Discriminator, Tag, with_config
from typing_extensions import NotRequired, TypedDict

from diting.checks import check_each

_SHAPE = ConfigDict(extra="forbid")


# ---------------------------------------------------------------- values of roles


@with_config(_SHAPE)
class Value(TypedDict):
    """One value a role's expression folds to (several values: several entries): ``vtype`` its Java
    type (``enum:T`` for an enum constant), ``basis`` where it came from (LITERAL, CONSTANT, CONFIG,
    XML, RESOURCE …), ``placeholders`` whether it still holds ``${…}``."""
    value: str
    vtype: str
    basis: str
    placeholders: bool


@with_config(_SHAPE)
class Unfolded(TypedDict):
    """A role's expression that folds to no value: its Java text and why."""
    unresolved: str
    reason: str


@with_config(_SHAPE)
class BeanRef(TypedDict):
    """A role whose value is a bean: a ``@Bean`` method's parameter (``ref_kind`` param, with its
    ``type``), another ``@Bean`` method of the class (``method``), or an XML ``ref`` (no kind)."""
    ref: str
    ref_kind: NotRequired[Literal["param", "method"]]
    type: NotRequired[str]


#: one entry of a role's outcomes
Outcome = Union[Value, Unfolded, BeanRef]
#: role → its outcomes, in argument order
Roles = dict[str, list[Outcome]]


# ---------------------------------------------------------------- where a match sits


@with_config(_SHAPE)
class TypeInfo(TypedDict):
    """The type a match sits in: binary name, TYPE ``stable`` id and ``rid``, kind (CLASS …),
    nesting (TOP …), simple name, whether abstract."""
    binary: str
    stable: str
    rid: str
    kind: str
    nesting: str
    simple: str
    abstract: bool


@with_config(_SHAPE)
class ParamInfo(TypedDict):
    """A method parameter: erased type, resolved type arguments, ``@Qualifier``/``@Resource``/``@Named``
    value; ``index`` when the match is on the parameter."""
    name: str
    type: str
    type_args: list[str]
    qualifier: str | None
    index: NotRequired[int]


@with_config(_SHAPE)
class AssignedCall(TypedDict):
    """``this.f = p.m()`` in a constructor: the parameter and the no-argument method called on it."""
    parameter: str
    method: str


@with_config(_SHAPE)
class MemberInfo(TypedDict):
    """The method (or constructor) a match sits in: erased ``signature``, METHOD ``stable`` id and
    ``rid``, resolved ``return_type`` (``void``), ``lines``; annotations (resolved names), constructor
    field assignments and ``autowired`` for written methods; ``synthesized_by`` (Lombok …) for a
    constructor the compiler or an annotation processor writes."""
    name: str
    signature: list[str]
    stable: str
    rid: str
    params: list[ParamInfo]
    return_type: str
    modifiers: list[str]
    lines: list[int]
    autowired: bool
    annotations: NotRequired[list[str]]
    assigns: NotRequired[dict[str, str]]
    assigned_calls: NotRequired[dict[str, AssignedCall]]
    synthesized_by: NotRequired[str]


@with_config(_SHAPE)
class FieldInfo(TypedDict):
    """An annotated field: resolved type and type arguments, FIELD ``stable`` id and ``rid``."""
    name: str
    type: str
    stable: str
    rid: str
    qualifier: str | None
    type_args: list[str]
    modifiers: list[str]


@with_config(_SHAPE)
class FieldDetail(TypedDict):
    """A field of an annotated type (``type_detail``): ``initial`` its literal initial value (a
    ``@ConfigurationProperties`` default), when it folds to one."""
    name: str
    type: str
    modifiers: list[str]
    annotations: list[str]
    qualifier: str | None
    type_args: list[str]
    has_initializer: bool
    lines: list[int]
    initial: str | None


@with_config(_SHAPE)
class Supertype(TypedDict):
    """A supertype written in the declaration (``extends``/``implements``), resolved."""
    name: str
    interface: bool
    type_args: list[str]


@with_config(_SHAPE)
class TypeDetail(TypedDict):
    """What a package needs of an annotated type: every supertype, the direct ones, its package,
    methods (written and synthesized constructors) and fields."""
    supertypes: list[str]
    direct_supertypes: list[Supertype]
    package: str
    methods: list[MemberInfo]
    fields: list[FieldDetail]


@with_config(_SHAPE)
class FieldRef(TypedDict):
    """A field a call's receiver reads: the module and binary name of its type's declaration."""
    module: str
    binary: str
    field: str


@with_config(_SHAPE)
class ReceiverCall(TypedDict):
    """The call a receiver is the result of (``client.get().uri(…)``: ``get``); ``http_method`` the
    outcomes of ``method(HttpMethod.X)``."""
    name: str
    arity: int
    http_method: NotRequired[list[Outcome]]


@with_config(_SHAPE)
class CallInfo(TypedDict):
    """A matched call: ordinal in its member, name, arity, call-site id, whether in a lambda; the
    receiver's static type, the field it reads (``receiver``), the field at the start of its chain
    (``receiver_root``), the call it is the result of, the calls made on its result (``chain``), its
    expression kind and text; the role arguments' static types and expression kinds."""
    ordinal: int
    name: str
    arity: int
    callsite_id: str
    in_lambda: bool
    receiver_type: str | None
    receiver: FieldRef | None
    receiver_root: FieldRef | None
    receiver_call: ReceiverCall | None
    chain: list[str]
    receiver_kind: str | None
    expression: str
    arg_types: dict[str, str]
    arg_kinds: dict[str, str]


@with_config(_SHAPE)
class XmlProperty(TypedDict):
    """A ``<property name=…>`` child: its value (attribute or text) or bean ``ref``, and lines."""
    value: str | None
    ref: str | None
    line: int
    end_line: int


@with_config(_SHAPE)
class XmlInfo(TypedDict):
    """A matched XML element: local name, namespace, attributes, properties and its parent's."""
    element: str
    namespace: str | None
    attributes: dict[str, str]
    properties: dict[str, XmlProperty]
    parent: str | None
    parent_attributes: dict[str, str]


@with_config(_SHAPE)
class DeclaredMethod(TypedDict):
    """A method of an in-package type as a package looks it up (``ProbeContext.methods_of``): the
    handler of a type-level listener or job, an interface's method; erased skeleton signature."""
    name: str
    signature: list[str]
    stable: str
    rid: str
    annotations: list[str]
    modifiers: list[str]
    lines: list[int]
    path: str
    arity: int
    has_body: bool


@with_config(_SHAPE)
class Handler(TypedDict):
    """What serves an entry (``ProbeContext.entry``): a method's :class:`MemberInfo` with its file's
    ``path``, or the service itself (``rid`` and ``stable`` only: a gateway's routes)."""
    rid: str
    stable: str
    path: NotRequired[str]
    lines: NotRequired[list[int]]


# ---------------------------------------------------------------- what the finder adds


@with_config(_SHAPE)
class ParameterAccessor(TypedDict):
    """A destination read from a parameter of the method (``p``, ``p.getX()``, ``p.x``): each
    caller's argument names it."""
    parameter: int
    name: str
    getter: NotRequired[str]
    field: NotRequired[str]


@with_config(_SHAPE)
class RuntimePart(TypedDict):
    """A part of a ``+``-built string known only at run time: its Java text."""
    runtime: str


@with_config(_SHAPE)
class LambdaCall(TypedDict):
    """A call inside a lambda handed to the matched call (a gateway route's ``r -> r.path(…)``)."""
    name: str
    via: str
    line: int
    args: list[list[Outcome]]


@with_config(_SHAPE)
class RouteCall(TypedDict):
    """A call of a functional router's chain; ``verb`` and ``path`` for one that declares a route."""
    name: str
    line: int
    verb: NotRequired[str]
    path: NotRequired[list[Outcome]]


#: a class listed in a ``META-INF/spring/*.imports`` file, with its line (``class`` is a Python keyword:
#: the functional form)
ImportsEntry = with_config(_SHAPE)(TypedDict("ImportsEntry", {"class": str, "lines": list[int]}))


@with_config(_SHAPE)
class MatchAttrs(TypedDict, total=False):
    """What the finder records beside the roles (each key only where it applies): the annotation's
    attributes as written and the composed annotation it was found on; a call's SQL template, key and
    topic prefixes, parameter-borne destinations, payload parameter, where its message was built,
    lambda and route calls; a bean method's bean type; a type rule's supertype and type arguments;
    an XML element's profiles; an imports file's entries and annotation."""
    annotation_args: dict[str, str]
    via_annotation: str
    sql_template: list[Union[Value, RuntimePart]]
    key_prefix: str | None
    topic_prefix: str | None
    parameters: dict[str, ParameterAccessor]
    payload_name: str
    message_lines: list[int]
    message_expression: str
    lambda_calls: list[LambdaCall]
    route_calls: list[RouteCall]
    bean_type: str
    bean_type_args: list[str]
    supertype: str
    type_args: list[str]
    profiles: list[str]
    entries: list[ImportsEntry]
    annotation: str


@with_config(_SHAPE)
class Constructs(TypedDict):
    """The object a ``@Bean`` method builds: its type and which of its fields hold which parameter."""
    type: str
    fields: dict[str, str]


# ---------------------------------------------------------------- candidates


@with_config(_SHAPE)
class _Located(TypedDict):
    """Where every candidate sits: its rule and emit kind, form, file, lines and target
    (TYPE, FIELD, METHOD, PARAMETER, CALL, XML, RESOURCE, CONFIG); ``ns`` the package's namespace of
    the module, added when a package takes the candidate."""
    rule: str
    emit: str
    path: str
    lines: list[int]
    target: str
    ns: NotRequired[str]


@with_config(_SHAPE)
class _Matched(_Located):
    module: str
    roles: Roles
    attrs: MatchAttrs
    #: the rule's ``emits.attributes``
    emit_attrs: NotRequired[dict[str, Any]]


@with_config(_SHAPE)
class AnnotationCandidate(_Matched):
    """An annotation rule on a type, field, method or parameter (``annotation``: its FQN); a method's
    or parameter's ``member``, a field's ``field``, a parameter's ``param``, an annotated type's
    ``type_detail``; a ``@Bean`` method's ``bean_properties`` (setter calls on what it builds) and
    ``constructs``."""
    form: Literal["annotation"]
    annotation: str
    type: TypeInfo
    member: NotRequired[MemberInfo]
    field: NotRequired[FieldInfo]
    param: NotRequired[ParamInfo]
    type_detail: NotRequired[TypeDetail]
    bean_properties: NotRequired[dict[str, list[Outcome]]]
    constructs: NotRequired[Constructs]


@with_config(_SHAPE)
class CallCandidate(_Matched):
    """A call rule: the call and the member it is made in."""
    form: Literal["call"]
    type: TypeInfo
    member: MemberInfo
    call: CallInfo


@with_config(_SHAPE)
class BeanClassCandidate(_Matched):
    """A ``@Bean`` method returning a type a bean_class rule names."""
    form: Literal["bean_class"]
    type: TypeInfo
    member: MemberInfo


@with_config(_SHAPE)
class TypeCandidate(_Matched):
    """A type a type rule's supertype matches."""
    form: Literal["type"]
    type: TypeInfo
    type_detail: TypeDetail


@with_config(_SHAPE)
class XmlCandidate(_Matched):
    """An XML element an xml rule matches."""
    form: Literal["xml"]
    xml: XmlInfo


@with_config(_SHAPE)
class ImportsCandidate(_Matched):
    """A ``META-INF/spring/{FQN}.imports`` file an imports rule names."""
    form: Literal["imports"]


@with_config(_SHAPE)
class ConfigCandidate(_Located):
    """A pseudo candidate a mechanism makes for what configuration declares (gateway routes): its
    evidence is the config lines."""
    form: Literal["config"]


@with_config(_SHAPE)
class FieldCallCandidate(_Located):
    """Every call on a field of the type (``emit`` FIELD_CALL, no rule): the field's declaring type
    (``owner``) and name, the method, arity and ordinal, the overload's erased parameters when
    resolution decides one, and the member it is made in (wrapper beans and injected clients)."""
    form: Literal["call"]
    emit: Literal["FIELD_CALL"]
    owner: str
    field: str
    method: str
    arity: int
    ordinal: int
    signature: list[str] | None
    callsite_id: str
    member: MemberInfo
    module: str


def _variant(c: Any) -> str | None:
    """Which declaration a candidate answers to: its ``form``, FIELD_CALL for the field calls."""
    if not isinstance(c, dict):
        return None
    return "FIELD_CALL" if c.get("emit") == "FIELD_CALL" else c.get("form")


#: one rule match, as the finder makes it (its form says which)
Candidate = Annotated[Union[
    Annotated[AnnotationCandidate, Tag("annotation")], Annotated[CallCandidate, Tag("call")],
    Annotated[BeanClassCandidate, Tag("bean_class")], Annotated[TypeCandidate, Tag("type")],
    Annotated[XmlCandidate, Tag("xml")], Annotated[ImportsCandidate, Tag("imports")],
    Annotated[ConfigCandidate, Tag("config")], Annotated[FieldCallCandidate, Tag("FIELD_CALL")],
], Discriminator(_variant)]


def check_candidates(cands: list[Candidate], where: str) -> None:
    """Check ``cands`` against :data:`Candidate` (tests and ``DITING_VALIDATE=1``); raises
    :class:`~diting.checks.ShapeError` naming the first that fails (its rule, file and lines)."""
    check_each(Candidate, [(f"{c.get('rule') or c.get('emit')} at {c.get('path')}:{c.get('lines')}", c)
                           for c in cands], where)
