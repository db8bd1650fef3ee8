"""The rule file format (docs/rules.md §2), as pydantic models (the shipped JSON Schema is generated from them).

A rule says *where* a construct is (``match``: exactly one of ``annotation``,
``xml``, ``call``, ``bean_class``, ``type``, ``imports`` (a ``META-INF/spring/{FQN}.imports`` list), plus ``pom_parent`` and
``package`` for catalog rules, ``ledger`` for branch ledger items a LEDGER_EXCLUSION rule
excludes) and *what it means* (``emits``: an emit kind
that names one generic mechanism of the engine, and its parameters). Roles
name what an attribute, argument or property carries (topic, alias, key …).
``samples`` are small inputs with the records they must produce; the test
suite runs every sample.
"""

from __future__ import annotations

import re

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from diting.ir.models import ProtocolAlignment, ProtocolRouting

#: what an annotation attribute, XML attribute, call argument or bean property carries
Role = Literal[
    # docs/rules.md §4
    "topic", "tag", "key", "key_prefix", "alias", "group", "version", "interface", "payload", "sql", "table",
    "path", "http_method", "cron", "zone", "service_name", "url", "context_id", "exchange", "routing_key",
    "queue", "timeout", "retries", "ref",
    # diting additions
    "name", "qualifier", "schema", "keep_prefix", "base_packages", "base_classes", "classes", "resource", "id", "consumer_group",
    "default", "prefix", "fixed_rate", "fixed_delay", "initial_delay", "enabled", "job_name", "event_type",
    "listener", "class", "value", "required", "primary", "expression", "ignore_missing", "selector_type",
    "dead_letter_exchange", "dead_letter_routing_key",
]

#: the generic mechanisms of the engine a rule can drive (probes/mechanisms.py); a registered mechanism adds its own
EmitKind = Literal[
    "WELL_KNOWN_PARENT", "DEPLOYABLE_PLUGIN", "BUILD_LOGIC_PLUGIN", "DEPENDENCY_SCOPE", "LIBRARY_TYPES", "LIBRARY_METHODS", "DEPLOYABLE_APPLICATION",
    "BEAN", "BEAN_METHOD", "XML_BEAN", "INJECTION", "PRIMARY", "COMPONENT_SCAN", "IMPORT", "IMPORT_RESOURCE",
    "XML_CONTEXT", "FEIGN_SCAN", "PROXY_SCAN",
    "RPC_PROVIDER", "RPC_CONSUMER",
    "HTTP_CONTROLLER", "HTTP_MAPPING", "FEIGN_CLIENT", "HTTP_CLIENT_CALL", "LOAD_BALANCED", "GATEWAY_ROUTE",
    "HTTP_ROUTE", "MQ_LISTENER", "MQ_SEND", "MQ_RECEIVE", "MQ_WRAPPER_BEAN", "MQ_BINDING", "MQ_DECLARE", "MQ_STREAM",
    "CONFIG_VALUE", "CONFIG_PROPERTIES", "CONFIG_READ", "CONFIG_XML_BINDING", "PROPERTY_SOURCE",
    "SQL_ANNOTATION", "SQL_MAPPER_BASE", "SQL_TABLE_NAME", "SQL_INHERITED_CALL", "SQL_CALL",
    "CACHE_CLIENT", "CACHE_OP",
    "SCHEDULED", "JOB_TYPE", "ASYNC", "ASYNC_SUBMIT", "MQ_RETRY", "CONDITION", "PROFILE",
    "EVENT_PUBLISH", "EVENT_LISTENER", "ADVICE", "POINTCUT",
    "DYNAMIC_CALL", "NOISE", "ENTRY_HINT", "LEDGER_EXCLUSION",
]

Target = Literal["TYPE", "METHOD", "FIELD", "PARAMETER"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AnnotationMatch(_Strict):
    """An annotation, by ``fqn`` or by ``simple_name`` with the packages it may come from."""

    fqn: str | None = None
    simple_name: str | None = None
    package_prefixes: list[str] = Field(default_factory=list)
    name_suffixes: list[str] = Field(
        default_factory=list, description="any annotation whose simple name ends so, from a package no other rule "
                                          "names and matched by no other rule (ENTRY_HINT rules)")
    targets: list[Target] = Field(default_factory=list, description="where the annotation may sit (empty: anywhere)")
    attributes: dict[str, Role] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _name(self) -> "AnnotationMatch":
        if not self.fqn and not (self.simple_name and self.package_prefixes) and not self.name_suffixes:
            raise ValueError("an annotation match needs fqn, simple_name with package_prefixes, or name_suffixes")
        return self


class XmlMatch(_Strict):
    """An XML element (by namespace URI and local name) with attribute and ``<property>`` roles."""

    namespace: str | None = None
    element: str
    attributes: dict[str, Role] = Field(default_factory=dict)
    properties: dict[str, Role] = Field(default_factory=dict)
    children: dict[str, Role] = Field(default_factory=dict, description="child element text → role")
    requires: list[str] = Field(default_factory=list, description="attributes that must be present to match")
    where: dict[str, list[str]] = Field(default_factory=dict,
                                        description="attribute → the values it must have (one of them) to match")


class CallMatch(_Strict):
    """A method call on a receiver of ``receiver_type`` (subtypes included), or a constructor
    call (``method: <init>``); ``args`` maps 0-based positions to roles (-1: the last)."""

    receiver_type: str | list[str] = Field(description="FQN (or FQNs) of the receiver; subtypes included")
    method: str | list[str]
    arity: int | None = None
    min_arity: int | None = None
    args: dict[int, Role] = Field(default_factory=dict)
    accessors: dict[int, str] = Field(
        default_factory=dict, description="argument position → a getter whose value is the role's value "
                                          "(``send(TopicEnum.X, …)`` with ``{0: getTopic}``)")
    receiver_properties: dict[str, Role] = Field(
        default_factory=dict, description="roles read from the receiver bean's properties (wrapper beans)")


class BeanClassMatch(_Strict):
    """A ``@Bean`` method returning ``fqn`` (one of them): roles from the constructor call of that
    type in its body (``ctor_args``: position → role), from builder calls in its body
    (``builders``: method name → {position: role}; ``keyed_builders``: method name → {key in the
    first argument → role of the second}) and from setter properties."""

    fqn: str | list[str]
    properties: dict[str, Role] = Field(default_factory=dict)
    ctor_args: dict[int, Role] = Field(default_factory=dict)
    builders: dict[str, dict[int, Role]] = Field(default_factory=dict)
    #: calls whose first argument is a key and second its value (``withArgument("x-dead-letter-exchange",
    #: x)``, ``args.put(…)``): method name → {key → role of the value}
    keyed_builders: dict[str, dict[str, Role]] = Field(default_factory=dict)


class TypeMatch(_Strict):
    """Implementations of ``supertype`` (a listener or job interface; a list: any of them)."""

    supertype: str | list[str]
    method: str | None = None

    @property
    def supertypes(self) -> list[str]:
        """The matched supertypes as a list."""
        return self.supertype if isinstance(self.supertype, list) else [self.supertype]


class ConfigMatch(_Strict):
    """Configuration of the package under one of ``prefixes`` (a list of objects such as
    ``spring.cloud.gateway.routes``, a map such as ``zuul.routes``, or a single key)."""

    prefixes: list[str] = Field(min_length=1)


class PomParentMatch(_Strict):
    group_id: str


class BuildPluginMatch(_Strict):
    """A build plugin: Maven ``groupId:artifactId`` or a Gradle plugin id."""

    system: Literal["maven", "gradle"]
    id: str = Field(min_length=1)


class GradleConfigurationMatch(_Strict):
    """Gradle dependency configurations by name (``implementation``, ``compileOnly`` …)."""

    names: list[str] = Field(min_length=1)


class EffectPattern(_Strict):
    """An effect a ledger exclusion allows: a relation of one of ``kinds`` whose target matches one of
    ``targets`` (globs on the target's name: ``{type}#{method}({params})`` for a method of the package
    or a library, the record id for anything else) and, when ``external`` is given, that is (or is not)
    a library method; ``target_type_declares``: member type names the target method's top-level type
    declares (a method of a generated class: ``[GeneratedCriteria, Criterion]``); ``required``: the arm
    must have at least one effect of this pattern. An effect whose target is not RESOLVED matches no
    pattern."""

    kinds: list[Literal["CALLS", "READS", "WRITES", "PUBLISHES"]] = Field(min_length=1)
    targets: list[str] = Field(default_factory=list, description="globs on the target name; empty: any target")
    target_type_declares: list[str] = Field(default_factory=list)
    external: bool | None = Field(None, description="the target is a library method (EXTERNAL)")
    required: bool = Field(False, description="at least one effect of the arm matches this pattern")


class ConditionShape(_Strict):
    """A condition every part of which has one of the ``atoms`` shapes: the condition is split at ``&&``,
    ``||``, ``and``, ``or`` outside parentheses and string literals (a part wrapped in parentheses is
    split again), and each part must match one atom template. A template is the code of a part with
    placeholders: ``{name}`` a name or property path (``order.userId``, ``this.items``, ``a.getB()``),
    ``{type}`` a class name (``StringUtils``, ``org.x.Assert``), ``{not}`` an optional ``!`` (or OGNL
    ``not``); whitespace is free between tokens. ``names: parameter``: every ``{name}`` starts with a
    parameter of the method (a SQL test reads the statement's parameter alone)."""

    atoms: list[str] = Field(min_length=1)
    names: Literal["any", "parameter"] = "any"

    @model_validator(mode="after")
    def _templates(self) -> "ConditionShape":
        bad = [a for a in self.atoms if re.search(r"\{(?!(?:name|type|not)\})[^}]*\}", a)]
        if bad:
            raise ValueError(f"unknown placeholder in atom {bad[0]!r} (known: {{name}}, {{type}}, {{not}})")
        return self


BranchKindName = Literal["IF", "ELSE", "CASE", "DEFAULT", "RETURN", "THROW", "CATCH", "FINALLY", "LOOP", "SQL_IF",
                         "SQL_WHEN", "SQL_OTHERWISE", "STRATEGY"]


class LedgerMatch(_Strict):
    """Branch ledger items a LEDGER_EXCLUSION rule excludes: every given field must hold.

    ``kinds``: the item's branch kind; ``symbol``: globs on the method (``{type}#{name}({params})``,
    the module left out) or SQL statement (``{namespace}.{id}``) the item belongs to;
    ``symbol_type_declares``: member type names the method's top-level type must all declare (the
    shape of generated classes); ``condition``: the shape of the arm's condition (a Java condition, or a
    SQL fragment's ``test``); ``outcomes``: how the arm ends; ``throws``: the type its exit ``throw new
    T(…)`` creates (simple or qualified name); ``effects``: the only effects the arm may have (an empty
    list: none; not given: any); ``nested``: the items nested in the arm are excluded with it (and their
    effects count as the arm's). Only an item whose status is RESOLVED — with every nested item, under
    ``nested`` — is excluded, unless ``unresolved`` says the shape is noise whatever it holds (the
    criteria fragments MyBatis Generator writes hold ``${criterion.condition}``): an unknown is not
    taken for noise by default."""

    kinds: list[BranchKindName] = Field(min_length=1)
    symbol: list[str] = Field(default_factory=list)
    symbol_type_declares: list[str] = Field(default_factory=list)
    condition: ConditionShape | None = None
    outcomes: list[Literal["CONTINUE", "RETURN", "THROW", "BREAK"]] = Field(default_factory=list)
    throws: list[str] = Field(default_factory=list)
    effects: list[EffectPattern] | None = None
    nested: bool = False
    unresolved: bool = Field(False, description="an UNRESOLVED item of this shape is excluded too")


#: the match forms a rule may use (exactly one per rule)
MATCH_FORMS = ("annotation", "xml", "call", "bean_class", "type", "config", "pom_parent", "package", "imports",
               "build_plugin", "gradle_configuration", "ledger")


class Match(_Strict):
    """Exactly one of the match forms."""

    annotation: AnnotationMatch | None = None
    xml: XmlMatch | None = None
    call: CallMatch | None = None
    bean_class: BeanClassMatch | None = None
    type: TypeMatch | None = None
    config: ConfigMatch | None = None
    pom_parent: PomParentMatch | None = None
    build_plugin: BuildPluginMatch | None = None
    gradle_configuration: GradleConfigurationMatch | None = None
    package: str | None = None
    imports: str | None = Field(None, description="an annotation FQN: the classes listed one a line in "
                                                 "META-INF/spring/{FQN}.imports files (Spring Boot's ImportCandidates) "
                                                 "of the modules on a service's classpath")
    ledger: LedgerMatch | None = Field(None, description="branch ledger items (LEDGER_EXCLUSION rules)")

    @model_validator(mode="after")
    def _one(self) -> "Match":
        given = [k for k in MATCH_FORMS if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError(f"match needs exactly one form, got {given or 'none'}")
        return self

    @property
    def form(self) -> str:
        return next(k for k in MATCH_FORMS if getattr(self, k) is not None)


class MessageSpec(_Strict):
    """A message object built in place or in a local (``send(new Message(topic, body))``): its type,
    which constructor argument carries which role by constructor arity, and setter roles."""

    type: str
    ctor_args: dict[int, dict[int, Role]] = Field(default_factory=dict, description="arity → {position: role}")
    setters: dict[str, Role] = Field(default_factory=dict, description="setter name → role (``setTopic``)")
    builder: str | None = Field(None, description="a builder class whose static factory starts a chain "
                                                  "(``MessageBuilder.withPayload(p).setHeader(K, v).build()``)")
    header_setters: list[str] = Field(default_factory=list, description="the builder's methods (name, value) "
                                                                        "setting one header")
    headers: dict[str, Role] = Field(default_factory=dict, description="header → role: the header-name "
                                     "constant's qualified name (``…KafkaHeaders.TOPIC``) or its string value")


class Emits(_Strict):
    """What a match means. ``kind`` picks the engine mechanism (one of :data:`EMIT_FORMS`: the built-in
    :data:`EmitKind` values and those a registered mechanism declares); the other fields
    parameterise it."""

    kind: str = Field(pattern=r"^[A-Z][A-Z0-9_]{0,63}$")
    protocol: str | None = Field(None, pattern=r"^[a-z][a-z0-9+.-]{0,31}$",
                                 description="a URN scheme declared in a rule file's protocols (rules/protocols.yaml)")
    urn_template: str | None = None
    entry_kind: str | None = Field(None, pattern=r"^[A-Z][A-Z0-9_]{0,63}$",
                                   description="a core entry kind or one a declared protocol names")
    http_method: str | None = None
    access: Literal["READ", "WRITE"] | None = None
    handler: str | None = Field(None, description="the handler method of a type-level listener or job")
    tag_separator: str | None = Field(None, description="splits 'topic:tag' destinations")
    message: MessageSpec | None = Field(None, description="roles carried by the message argument (role payload)")
    types: dict[str, str] | None = Field(None, description="LIBRARY_TYPES: simple name → kind")
    returns: dict[str, str] | None = Field(None, description="LIBRARY_METHODS: 'Type#method' → return type FQN, "
                                                             "or $N: the N-th type argument a subtype binds Type with")
    fields: dict[str, str] | None = Field(None, description="LIBRARY_METHODS: 'Type#field' → field type FQN, or $N "
                                                           "(ServiceImpl#baseMapper → $0)")
    attributes: dict[str, Any] = Field(default_factory=dict, description="fixed attributes to record")

    @field_validator("attributes")
    @classmethod
    def _recordable(cls, v: dict[str, Any]) -> dict[str, Any]:
        """Attributes go into records: strings, booleans, null, integers of 64 bits, lists and
        mappings of them — never a float (canonical JSON has none)."""
        stack: list[Any] = [v]
        while stack:
            x = stack.pop()
            if isinstance(x, float):
                raise ValueError(f"{x!r}: a record holds no floating-point number; write it as a string")
            if isinstance(x, int) and not isinstance(x, bool) and not -2**63 <= x < 2**63:
                raise ValueError(f"an integer of {len(str(abs(x)))} digits is beyond 64 bits; write it as a string")
            if isinstance(x, dict):
                stack.extend(x.values())
            elif isinstance(x, list):
                stack.extend(x)
        return v


class Sample(_Strict):
    """An input (files of a small service) and the records it must yield.

    ``form`` says which kind of sample it is: declared, indirect (constant, placeholder,
    wrapper), unresolved (or ambiguous), unsupported, lookalike (must yield nothing)."""

    form: Literal["declared", "indirect", "unresolved", "ambiguous", "unsupported", "lookalike"]
    description: str | None = None
    input: dict[str, str] = Field(description="repository path → file content (a service is built around them)")
    expected_records: list[dict[str, Any]] = Field(default_factory=list)
    expect_none: list[dict[str, Any]] = Field(default_factory=list, description="records that must not appear")


class Rule(_Strict):
    """One rule (docs/rules.md §2.2)."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9.-]*$")
    version: int = Field(ge=1, le=2**31 - 1)
    owner: str
    family: str
    description: str
    source: str
    match: Match
    emits: Emits
    samples: list[Sample] = Field(default_factory=list)
    not_applicable: dict[str, str] = Field(default_factory=dict,
                                           description="sample form → why this rule has no such form")

    @model_validator(mode="after")
    def _form_fits_kind(self) -> "Rule":
        allowed = EMIT_FORMS.get(self.emits.kind)
        if allowed is None:
            raise ValueError(f"emits.kind {self.emits.kind} is no emit kind of the engine "
                             "(docs/rules.md §5) nor of a registered mechanism")
        if self.match.form not in allowed:
            raise ValueError(f"emits.kind {self.emits.kind} works on matches of form "
                             f"{', '.join(sorted(allowed))}, not {self.match.form}")
        return self


#: the match forms each emit mechanism of the engine reads (a rule pairing a kind with another
#: form is refused when the rule file is loaded, instead of failing a scan)
EMIT_FORMS: dict[str, set[str]] = {
    "WELL_KNOWN_PARENT": {"pom_parent"}, "DEPLOYABLE_PLUGIN": {"build_plugin"},
    "BUILD_LOGIC_PLUGIN": {"build_plugin"}, "DEPENDENCY_SCOPE": {"gradle_configuration"}, "LIBRARY_TYPES": {"package"}, "LIBRARY_METHODS": {"package"},
    "DEPLOYABLE_APPLICATION": {"annotation"}, "BEAN": {"annotation", "type"}, "BEAN_METHOD": {"annotation"},
    "XML_BEAN": {"xml"}, "INJECTION": {"annotation"}, "PRIMARY": {"annotation"},
    "COMPONENT_SCAN": {"annotation", "xml"}, "IMPORT": {"annotation", "call"}, "IMPORT_RESOURCE": {"annotation", "xml"},
    "XML_CONTEXT": {"call"}, "FEIGN_SCAN": {"annotation", "imports"}, "PROXY_SCAN": {"annotation", "xml"},
    "RPC_PROVIDER": {"annotation", "xml"}, "RPC_CONSUMER": {"annotation", "xml"},
    "HTTP_CONTROLLER": {"annotation"}, "HTTP_MAPPING": {"annotation"}, "FEIGN_CLIENT": {"annotation"},
    "HTTP_CLIENT_CALL": {"call"}, "LOAD_BALANCED": {"annotation"}, "GATEWAY_ROUTE": {"config", "call", "annotation"}, "HTTP_ROUTE": {"call"},
    "MQ_LISTENER": {"annotation", "xml"}, "MQ_SEND": {"call", "annotation"}, "MQ_RECEIVE": {"call"}, "MQ_WRAPPER_BEAN": {"xml"},
    "MQ_BINDING": {"bean_class"}, "MQ_DECLARE": {"bean_class"}, "MQ_STREAM": {"annotation", "call", "bean_class", "type"},
    "CONFIG_VALUE": {"annotation"}, "CONFIG_PROPERTIES": {"annotation"}, "CONFIG_READ": {"call"},
    "CONFIG_XML_BINDING": {"xml"}, "PROPERTY_SOURCE": {"annotation", "xml"}, "SQL_ANNOTATION": {"annotation"},
    "SQL_MAPPER_BASE": {"type"}, "SQL_TABLE_NAME": {"annotation"}, "SQL_INHERITED_CALL": {"call"}, "SQL_CALL": {"call"},
    "CACHE_CLIENT": {"xml"}, "CACHE_OP": {"call"},
    "SCHEDULED": {"annotation"}, "JOB_TYPE": {"type"}, "ASYNC": {"annotation"}, "ASYNC_SUBMIT": {"call"}, "MQ_RETRY": {"annotation"},
    "CONDITION": {"annotation"}, "PROFILE": {"annotation"}, "EVENT_PUBLISH": {"call"}, "EVENT_LISTENER": {"annotation", "type"},
    "ADVICE": {"annotation"}, "POINTCUT": {"annotation"}, "DYNAMIC_CALL": {"call"}, "NOISE": {"annotation", "call"},
    "ENTRY_HINT": {"annotation", "type"}, "LEDGER_EXCLUSION": {"ledger"},
}


#: emit kinds declared by registered mechanisms (probes/mechanisms.py) → the mechanism's name
DECLARED_EMIT_KINDS: dict[str, str] = {}


def declare_emit_kind(kind: str, forms: set[str], mechanism: str) -> None:
    """Make ``kind`` a valid ``emits.kind`` for rules of the match ``forms`` (a registered mechanism
    reads its candidates). Raises ValueError for a malformed kind, a kind the engine or another
    mechanism has, or a form that is not a match form."""
    if not re.fullmatch(r"[A-Z][A-Z0-9_]{0,63}", kind):
        raise ValueError(f"emit kind {kind!r}: upper-case words joined by _")
    if kind in EMIT_FORMS:
        owner = DECLARED_EMIT_KINDS.get(kind)
        raise ValueError(f"emit kind {kind} is already " + (f"declared by mechanism {owner}" if owner else
                                                           "one of the engine's"))
    bad = sorted(set(forms) - set(MATCH_FORMS))
    if bad or not forms:
        raise ValueError(f"emit kind {kind}: {bad or 'no'} match forms (known: {', '.join(sorted(MATCH_FORMS))})")
    EMIT_FORMS[kind] = set(forms)
    DECLARED_EMIT_KINDS[kind] = mechanism


def forget_emit_kinds(mechanism: str) -> None:
    """Drop the emit kinds ``mechanism`` declared (it was unregistered)."""
    for kind in [k for k, owner in DECLARED_EMIT_KINDS.items() if owner == mechanism]:
        del EMIT_FORMS[kind], DECLARED_EMIT_KINDS[kind]


class Protocol(_Strict):
    """A URN scheme and how the graph aligns it: ``RPC`` (consumer and provider bindings by urn,
    signature and the binding attributes), ``HTTP`` (service, path and method), ``MQ`` (publishers
    and subscribers by topic), ``IN_PROCESS`` (never across services: application events), ``NONE``
    (config and cache keys). ``entry_kinds``: the entry kinds its entries take (the first is the
    default of a rule that names none); ``routing``: an engine routing mechanism its urns take part in
    (``amqp-exchange`` → ``amqp-queue`` bindings and dead-letter routes)."""

    scheme: str = Field(pattern=r"^[a-z][a-z0-9+.-]{0,31}$")
    alignment: ProtocolAlignment
    description: str
    entry_kinds: list[str] = Field(default_factory=list)
    routing: ProtocolRouting | None = None

    @model_validator(mode="after")
    def _kinds(self) -> "Protocol":
        bad = [k for k in self.entry_kinds if not re.fullmatch(r"[A-Z][A-Z0-9_]{0,63}", k)]
        if bad:
            raise ValueError(f"entry kinds must be upper-case words: {bad}")
        return self


class RuleFile(_Strict):
    """A rule file: one family's rules, and the protocols it declares."""

    family: str
    version: int = Field(ge=1, le=2**31 - 1)
    owner: str
    description: str
    protocols: list[Protocol] = Field(default_factory=list)
    rules: list[Rule]
