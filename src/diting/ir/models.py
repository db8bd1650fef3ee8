"""The IR records: the one source of truth for every record kind (docs/ir.md).

Every other module builds records through these models; ``diting schema``
exports their JSON Schemas and a test fails when the shipped schemas drift.

Conventions enforced here:

* set-valued arrays (refs, candidate refs, physical names …) are sorted on
  construction; ordered arrays (method ``signature``) keep their order;
* no floating-point numbers anywhere (``attributes`` are checked);
* a reference is always ``{"scan_id": ..., "record_id": ...}``.
"""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Any, Literal, Union, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from diting.ir.canonical import CanonicalError, check_ir_value

# ---------------------------------------------------------------- vocabularies


#: the entry kinds the engine makes whatever the protocol (docs/ir.md §4.5): scheduled jobs, event
#: listeners, mains, and what a rule names no better kind for. Every other entry kind belongs to a
#: protocol a rule file declares (``rules/protocols.yaml``: JSF_PROVIDER, HTTP_ENDPOINT, MQ_CONSUMER …).
ENGINE_ENTRY_KINDS: tuple[str, ...] = ("SCHEDULED_JOB", "EVENT_LISTENER", "MAIN", "OTHER")


#: how the graph aligns a protocol's urns (rule files' ``protocols``, analysis_input.json ``protocols``)
ProtocolAlignment = Literal["RPC", "HTTP", "MQ", "IN_PROCESS", "NONE"]
#: engine routing mechanisms a protocol's urns take part in
ProtocolRouting = Literal["amqp-exchange", "amqp-queue"]


class RelationKind(str, Enum):
    """Relation kinds (docs/ir.md §5.3)."""

    CONTAINS = "CONTAINS"
    EXTENDS = "EXTENDS"
    IMPLEMENTS = "IMPLEMENTS"
    INJECTS = "INJECTS"
    CALLS = "CALLS"
    EXPOSES = "EXPOSES"
    BINDS_TO = "BINDS_TO"
    PUBLISHES = "PUBLISHES"
    SUBSCRIBES = "SUBSCRIBES"
    READS = "READS"
    WRITES = "WRITES"
    DEPENDS_ON = "DEPENDS_ON"
    GUARDS = "GUARDS"


class ResolutionStatus(str, Enum):
    """Relation resolution status (docs/ir.md §5.2)."""

    RESOLVED = "RESOLVED"
    AMBIGUOUS = "AMBIGUOUS"
    UNRESOLVED = "UNRESOLVED"


class Severity(str, Enum):
    ERROR = "ERROR"
    WARNING = "WARNING"
    INFO = "INFO"


class SourceType(str, Enum):
    CODE = "CODE"
    CONFIG = "CONFIG"
    BUILD = "BUILD"
    GOVERNANCE = "GOVERNANCE"


class ValueResolution(str, Enum):
    RESOLVED = "RESOLVED"
    DEFAULT_ONLY = "DEFAULT_ONLY"
    AMBIGUOUS = "AMBIGUOUS"
    UNKNOWN = "UNKNOWN"


class BranchKind(str, Enum):
    IF = "IF"
    ELSE = "ELSE"
    CASE = "CASE"
    DEFAULT = "DEFAULT"
    RETURN = "RETURN"
    THROW = "THROW"
    CATCH = "CATCH"
    FINALLY = "FINALLY"
    LOOP = "LOOP"
    SQL_IF = "SQL_IF"
    SQL_WHEN = "SQL_WHEN"
    SQL_OTHERWISE = "SQL_OTHERWISE"
    STRATEGY = "STRATEGY"


class OutcomeKind(str, Enum):
    CONTINUE = "CONTINUE"
    RETURN = "RETURN"
    THROW = "THROW"
    BREAK = "BREAK"
    ASYNC_SUBMIT = "ASYNC_SUBMIT"
    UNKNOWN = "UNKNOWN"


#: The diagnostic catalogue (docs/ir.md §8): each code has one fixed severity. A new code is added
#: here with its severity (and a meaning in docs/refresh_tables.py); codes after the blank line
#: were added after the first catalogue.
DIAGNOSTIC_SEVERITY: dict[str, Severity] = {
    "PARSE_ERROR": Severity.ERROR,
    "FILE_TOO_LARGE": Severity.ERROR,
    "ENCODING_FALLBACK": Severity.ERROR,
    "BUDGET_EXHAUSTED": Severity.ERROR,
    "MODULE_SKIPPED": Severity.ERROR,
    "SQL_PARSE_FAILED": Severity.ERROR,
    "COORDINATE_UNRESOLVED": Severity.ERROR,
    "POM_PARENT_MISSING": Severity.WARNING,
    "PROPERTY_UNRESOLVED": Severity.WARNING,
    "DEPENDENCY_UNRESOLVED": Severity.WARNING,
    "TYPE_UNRESOLVED": Severity.WARNING,
    "CONSTANT_UNRESOLVED": Severity.WARNING,
    "CONFIG_VALUE_UNKNOWN": Severity.WARNING,
    "BEAN_AMBIGUOUS": Severity.WARNING,
    "POLYMORPHIC_ROUTING": Severity.WARNING,
    "UNDETERMINED_DYNAMIC_EDGE": Severity.WARNING,
    "UNRESOLVED_CALL": Severity.WARNING,
    "EVENT_TYPE_UNRESOLVED": Severity.WARNING,
    "TOPIC_UNRESOLVED": Severity.WARNING,
    "SQL_UNSUPPORTED": Severity.WARNING,
    "DYNAMIC_TABLE_NAME": Severity.WARNING,
    "SHARD_BROADCAST": Severity.WARNING,
    "SHARD_KEY_UNCONFIRMED": Severity.WARNING,
    "FIXPOINT_INCOMPLETE": Severity.WARNING,
    "NO_COMPENSATION": Severity.WARNING,
    "IMPLEMENTATION_AMBIGUOUS": Severity.WARNING,
    "SERVICE_ID_COLLISION": Severity.WARNING,
    "SOURCE_UNMAPPED": Severity.WARNING,
    "POM_PARENT_EXTERNAL": Severity.INFO,
    "ORPHAN_ENTRY": Severity.INFO,
    "DECLARED_UNUSED": Severity.INFO,
    # diting additions --------------------------------------------------------
    # a file that could not be read as text or as a git blob (binary content, a
    # symlink, a submodule gitlink, a Git LFS pointer, an entry naming no blob), or a
    # subtree git cannot list (its object missing or no tree): its facts are missing.
    "FILE_UNREADABLE": Severity.ERROR,
    # a path that would leave the repository tree (``..`` in a module or
    # relativePath, a symlink): never followed; or a tree entry git refuses to
    # check out (``..``, ``.``, ``.git`` or an empty segment, an absolute path, two
    # entries of one path — a crafted tree): never read (coverage: files, excluded
    # as refused_path).
    "PATH_OUTSIDE_TREE": Severity.WARNING,
    # two declarations with one identity (same binary name, or same erased
    # signature in one type): the first is recorded, the others are not.
    "DUPLICATE_DECLARATION": Severity.WARNING,
    # an injection point of an in-repo type no loaded bean of the context can satisfy
    "BEAN_UNRESOLVED": Severity.WARNING,
    # an injection point of a library type no bean of the package declares: the bean comes from
    # auto-configuration or a library (outside what the package's sources show)
    "BEAN_EXTERNAL": Severity.INFO,
    # graph-level (diting graph build, docs/alignment.md §7): a logical table of one datasource written by
    # more than one service
    "SINGLE_WRITER_VIOLATION": Severity.WARNING,
    # graph-level: the packages of a graph declare one URN scheme with different alignments (their
    # rule files' protocols differ); its urns are not aligned
    "PROTOCOL_CONFLICT": Severity.WARNING,
    # graph-level: a service reads or writes a table another service alone writes (direct
    # cross-service data access)
    "CROSS_SERVICE_DATA_ACCESS": Severity.WARNING,
    # an entry declaration (provider, controller method, listener, job) that yields no entry: its
    # interface, handler or path is unknown (coverage: entries, failed; one per declaration)
    "ENTRY_UNRESOLVED": Severity.WARNING,
    # an entry declaration the package's context does not load, or in a lib: package that deploys
    # nothing (coverage: entries, excluded as not_loaded_by_context / module_not_deployed)
    "ENTRY_NOT_LOADED": Severity.INFO,
    # a MyBatis statement id declared twice in one namespace: MyBatis refuses to start; the copy is not
    # analysed (coverage: sql_statements, excluded as duplicate_id)
    "SQL_DUPLICATE_ID": Severity.WARNING,
    # a MyBatis databaseId variant for another database than the one the package runs on (coverage:
    # sql_statements, excluded as other_database_id)
    "SQL_OTHER_DATABASE": Severity.INFO,
    # files of a module read in a guessed encoding (neither UTF-8, a byte-order mark nor a declaration):
    # one per module and encoding, naming the encoding, why it was chosen and the files
    "ENCODING_GUESSED": Severity.INFO,
    # a file whose decoded text may be misread: lines of another encoding inside it (valid UTF-8 in a
    # file read as GB18030 …), or a guess another encoding contests
    "ENCODING_UNCERTAIN": Severity.WARNING,
    # a service id (spring.application.name, an inventory entry, an artifactId) that begins with lib:,
    # the prefix of lib packages: the service is named with that colon written _ (lib:x → lib_x)
    "SERVICE_ID_RESERVED": Severity.WARNING,
    # every service of the repository got one service id from spring.application.name (a source that
    # is not each service's own: a shared or misbound config file); ids are told apart by module only
    "SERVICE_ID_SHARED": Severity.ERROR,
    # a Gradle construct a static reader cannot follow (a loop, an `if`, a computed project or
    # plugin, a script outside the repository, a syntax error) hides part of a build's structure:
    # what it holds is not applied (docs/gradle.md)
    "GRADLE_NOT_STATIC": Severity.WARNING,
    # one directory built by two build systems (a pom.xml beside a build.gradle): one model is read
    "BUILD_ALTERNATIVE": Severity.INFO,
    # a Gradle build script inside a build whose settings do not include it: no build builds it
    "MODULE_NOT_INCLUDED": Severity.INFO,
}

#: what a package holds for one input, numbered: raised whenever a change of diting makes other
#: bytes for the same commit, rules and options (a field added, a fact found that was not), so
#: that a package, a cached scan or a re-derivation says which build of the format made it
#: (recorded in ``analysis_input.tool_versions`` as ``diting-package-format``)
PACKAGE_FORMAT = 3

# ---------------------------------------------------------------- shared parts


#: validation context of a record whose bytes were checked already (ir/verify): no floats anywhere
#: (``canonical_problem``), so the float walk of free-form fields is skipped
BYTES_CHECKED = {"bytes_checked": True}


def _no_floats(value: Any, info: ValidationInfo | None = None) -> Any:
    if info is not None and info.context and info.context.get("bytes_checked"):
        return value
    try:
        check_ir_value(value)
    except CanonicalError as exc:
        raise ValueError(str(exc)) from exc
    return value


def _sorted_refs(refs: list["Ref"]) -> list["Ref"]:
    return sorted(refs, key=lambda r: (r.scan_id, r.record_id))


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=False, use_enum_values=True)


class Ref(_Record):
    """A reference to a record: ``{"scan_id": ..., "record_id": ...}``."""

    scan_id: str = Field(min_length=1)
    record_id: str = Field(min_length=1)


class ImplementationRef(_Record):
    """``{stable_id, implementation_scope, revision_id}`` of an entity (docs/ir.md §2.4)."""

    stable_id: str = Field(min_length=1)
    implementation_scope: str = Field(pattern=r"^sv:[\s\S]+:[0-9a-f]{40}([0-9a-f]{24})?$")
    revision_id: str = Field(pattern=r"^rev:[0-9a-f]{64}$")


class Locator(_Record):
    """Where a segment's text lives: 1-based inclusive line range of ``path`` at ``commit_sha``."""

    repo_id: str = Field(min_length=1)
    commit_sha: str = Field(pattern=r"^[0-9a-f]{40}([0-9a-f]{24})?$")
    path: str = Field(min_length=1)
    start_line: int = Field(ge=1)
    end_line: int = Field(ge=1)

    @model_validator(mode="after")
    def _ordered(self) -> "Locator":
        if self.end_line < self.start_line:
            raise ValueError("end_line < start_line")
        return self


class Redaction(_Record):
    """A redacted span of a segment's original text: code-point offsets, zero-based, half-open."""

    start_offset: int = Field(ge=0)
    end_offset: int = Field(ge=0)
    reason: str = Field(min_length=1)


# ---------------------------------------------------------------- entities


class _EntityBase(_Record):
    record_id: str = Field(min_length=1)
    stable_id: str = Field(min_length=1)
    name: str
    implementation_ref: ImplementationRef
    evidence_refs: list[Ref] = Field(min_length=1)
    attributes: dict[str, Any] = Field(default_factory=dict)

    @field_validator("evidence_refs")
    @classmethod
    def _sort_evidence(cls, v: list[Ref]) -> list[Ref]:
        return _sorted_refs(v)

    @field_validator("attributes")
    @classmethod
    def _attrs(cls, v: dict[str, Any], info: ValidationInfo) -> dict[str, Any]:
        return _no_floats(v, info)


class PlainEntity(_EntityBase):
    """MODULE, ARTIFACT, SERVICE, TYPE, FIELD, BEAN, SQL_STATEMENT."""

    kind: Literal["MODULE", "ARTIFACT", "SERVICE", "TYPE", "FIELD", "BEAN", "SQL_STATEMENT"]


class MethodEntity(_EntityBase):
    """METHOD: ``declaring_type`` ref and ``signature`` (erased binary parameter types, in order)."""

    kind: Literal["METHOD"]
    declaring_type: Ref
    signature: list[str]


class EntryEntity(_EntityBase):
    """ENTRY: ``entry_kind``, ``urn`` (exposed contract, subscribed topic, or method FQN) and ``handler_ref``."""

    kind: Literal["ENTRY"]
    entry_kind: str = Field(pattern=r"^[A-Z][A-Z0-9_]{0,63}$",
                            description="one of ENGINE_ENTRY_KINDS, or one a protocol declared by a rule file names")
    urn: str = Field(min_length=1)
    handler_ref: Ref


class ContractEntity(_EntityBase):
    """CONTRACT: ``urn``, ``role`` (PROVIDED, CONSUMED) and ``signature``."""

    kind: Literal["CONTRACT"]
    urn: str = Field(min_length=1)
    role: Literal["PROVIDED", "CONSUMED"]
    signature: list[str]


class UrnEntity(_EntityBase):
    """TOPIC, EVENT, CONFIG_KEY, CACHE_KEY: identified by their ``urn``."""

    kind: Literal["TOPIC", "EVENT", "CONFIG_KEY", "CACHE_KEY"]
    urn: str = Field(min_length=1)


class ShardEvidence(_Record):
    kind: str
    evidence_ref: Ref


class TableEntity(_EntityBase):
    """TABLE: logical table with datasource and shard evidence (docs/ir.md §4.3, docs/sql.md §5)."""

    kind: Literal["TABLE"]
    urn: str = Field(min_length=1)
    datasource: str | None
    physical_names: list[str]
    is_sharded: bool
    shard_evidence: list[ShardEvidence]
    candidate_shard_keys: list[str]
    confirmed_shard_key: str | None

    @field_validator("physical_names", "candidate_shard_keys")
    @classmethod
    def _sorted(cls, v: list[str]) -> list[str]:
        return sorted(set(v))


class ExternalEntity(_EntityBase):
    """EXTERNAL: a library symbol known by FQN; ``artifact`` when a declared dependency owns its package."""

    kind: Literal["EXTERNAL"]
    symbol_kind: Literal["TYPE", "METHOD", "FIELD"]
    artifact: str | None = None


Entity = Annotated[
    # in this order the kinds' fields make the graph's entity columns (diting.ir.columns)
    Union[EntryEntity, ContractEntity, TableEntity, MethodEntity, ExternalEntity, PlainEntity, UrnEntity],
    Field(discriminator="kind"),
]


#: the entity kinds (docs/ir.md §4.2), as the kinds' models declare them
ENTITY_KINDS: tuple[str, ...] = tuple(
    k for m in get_args(get_args(Entity)[0]) for k in get_args(m.model_fields["kind"].annotation))


def _fields(model: type[BaseModel]) -> tuple[frozenset[str], frozenset[str]]:
    return frozenset(model.model_fields), frozenset(n for n, f in model.model_fields.items() if f.is_required())


#: entity kind → (the fields its model declares, the required ones): what a blueprint of the kind
#: may and must carry (checked as every record is built: ir/builder.py)
ENTITY_FIELDS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    k: _fields(m) for m in get_args(get_args(Entity)[0]) for k in get_args(m.model_fields["kind"].annotation)}


class EntityRecord(BaseModel):
    """Wrapper used to validate one line of ``entities.jsonl``."""

    root: Entity


def record_fields(model: type[BaseModel]) -> tuple[frozenset[str], frozenset[str]]:
    """(declared fields, required fields) of a record model other than an entity (:data:`ENTITY_FIELDS`)."""
    return _fields(model)


def validate_record(model: type[BaseModel], obj: dict[str, Any], context: dict[str, Any] | None = None,
                    markers: bool = False) -> None:
    """Validate one JSON record against its model (entities through their kind union).
    ``context``: :data:`BYTES_CHECKED` when the record's bytes were checked already. Raises
    pydantic's ValidationError."""
    if model is EntityRecord:
        EntityRecord.model_validate({"root": obj}, context=context, from_attributes=markers)
    else:
        model.model_validate(obj, context=context, from_attributes=markers)


# ---------------------------------------------------------------- relations


#: relation kinds a call site makes, each carrying its ``callsite_id`` (calls, sends, SQL and config
#: reads and writes, mapper bindings); a relation of another kind has none
CALLSITE_KINDS = frozenset({"CALLS", "PUBLISHES", "READS", "WRITES", "BINDS_TO"})


class Relation(_Record):
    """A relation (docs/ir.md §5) with its resolution invariants.

    RESOLVED: ``target_ref`` set, no candidates. AMBIGUOUS: ``target_ref`` null,
    ≥ 2 candidates. UNRESOLVED: ``target_ref`` null, no candidates, at least one
    diagnostic, what is known in ``match_keys``.
    """

    record_id: str = Field(min_length=1)
    kind: RelationKind
    stable_id: str = Field(min_length=1)
    source_ref: Ref
    target_ref: Ref | None
    candidate_target_refs: list[Ref] = Field(default_factory=list)
    resolution_status: ResolutionStatus
    evidence_refs: list[Ref] = Field(min_length=1)
    diagnostic_refs: list[Ref] = Field(default_factory=list)
    match_keys: dict[str, Any] | None = None
    #: ``{source stable_id}@{ordinal}``, or ``{source stable_id}@@{Annotation}`` for a send an annotation
    #: declares (a listener's ``@SendTo``, ordinal 0): the call site that makes the relation
    #: (:data:`CALLSITE_KINDS` only)
    callsite_id: str | None = Field(default=None, pattern=r"^.+@([0-9]+|@[A-Za-z_$][A-Za-z0-9_$]*)$")
    guard_ref: Ref | None = None
    attributes: dict[str, Any] = Field(default_factory=dict)

    @field_validator("candidate_target_refs", "evidence_refs", "diagnostic_refs")
    @classmethod
    def _sort(cls, v: list[Ref]) -> list[Ref]:
        return _sorted_refs(v)

    @field_validator("attributes", "match_keys")
    @classmethod
    def _attrs(cls, v: Any, info: ValidationInfo) -> Any:
        return _no_floats(v, info)

    @model_validator(mode="after")
    def _invariants(self) -> "Relation":
        status = self.resolution_status
        if status == "RESOLVED":
            if self.target_ref is None or self.candidate_target_refs:
                raise ValueError("RESOLVED needs exactly one target_ref and no candidates")
        elif status == "AMBIGUOUS":
            if self.target_ref is not None or len(self.candidate_target_refs) < 2:
                raise ValueError("AMBIGUOUS needs a null target_ref and at least two candidates")
        else:
            if self.target_ref is not None or self.candidate_target_refs:
                raise ValueError("UNRESOLVED needs a null target_ref and no candidates")
            if not self.diagnostic_refs:
                raise ValueError("UNRESOLVED needs a diagnostic naming the missing locator")
        if self.callsite_id is not None:
            kind = getattr(self.kind, "value", self.kind)
            if kind not in CALLSITE_KINDS:
                raise ValueError(f"a {kind} relation is made by no call site: its callsite_id is null")
            if "@@" in self.callsite_id:  # an annotation's send: ordinal 0
                method, ordinal = self.callsite_id.rsplit("@@", 1)[0], "0"
            else:
                method, _, ordinal = self.callsite_id.rpartition("@")
            if not (self.stable_id.startswith(f"{kind}|{method}|") and self.stable_id.endswith(f"|{ordinal}")):
                raise ValueError("callsite_id names another call site than the relation's own (its stable_id's "
                                 "source and ordinal)")
        return self


# ---------------------------------------------------------------- other records


class SourceSegment(_Record):
    """Evidence text with its locator (docs/ir.md §6).

    ``content`` is the decoded text of the lines (``\\r`` of a CRLF kept, BOM removed, last
    line terminator excluded; a lone CR ends a line and reads as LF, :mod:`diting.source.text`)
    after redaction; ``content_hash`` is sha256 of ``content`` as UTF-8 and
    ``source_content_hash`` of the original text. Its canonical line is at most
    :data:`~diting.ir.canonical.MAX_RECORD_BYTES` long.
    """

    record_id: str = Field(pattern=r"^source:[0-9a-f]{32}$")
    source_type: SourceType
    locator: Locator
    encoding: str
    content: str
    content_hash: str = Field(pattern=r"^[0-9a-f]{64}$")
    source_content_hash: str = Field(pattern=r"^[0-9a-f]{64}$")
    redactions: list[Redaction] = Field(default_factory=list)


class ConfigBinding(_Record):
    """A config key reference and its value resolution (docs/ir.md §7, docs/scanning.md §10)."""

    record_id: str = Field(min_length=1)
    consumer_ref: Ref
    config_key: str = Field(min_length=1)
    source_refs: list[Ref] = Field(default_factory=list)
    value_resolution: ValueResolution
    value: str | None
    default_value: str | None
    evidence_refs: list[Ref] = Field(default_factory=list)
    attributes: dict[str, Any] = Field(default_factory=dict)

    @field_validator("source_refs", "evidence_refs")
    @classmethod
    def _sort(cls, v: list[Ref]) -> list[Ref]:
        return _sorted_refs(v)

    @model_validator(mode="after")
    def _values(self) -> "ConfigBinding":
        if self.value_resolution == "DEFAULT_ONLY" and (self.value is not None or self.default_value is None):
            raise ValueError("DEFAULT_ONLY needs value null and default_value set")
        if self.value_resolution == "UNKNOWN" and (self.value is not None or self.default_value is not None):
            raise ValueError("UNKNOWN needs value and default_value null")
        return self


class Diagnostic(_Record):
    """A failure, ambiguity or gap; its severity is fixed by its code (docs/ir.md §8)."""

    record_id: str = Field(pattern=r"^diagnostic:[0-9a-f]{32}$")
    code: str
    severity: Severity
    affected_refs: list[Ref] = Field(default_factory=list)
    message: str = Field(min_length=1)
    evidence_refs: list[Ref] = Field(default_factory=list)

    @field_validator("affected_refs", "evidence_refs")
    @classmethod
    def _sort(cls, v: list[Ref]) -> list[Ref]:
        return _sorted_refs(v)

    @model_validator(mode="after")
    def _severity(self) -> "Diagnostic":
        expected = DIAGNOSTIC_SEVERITY.get(self.code)
        if expected is None:
            raise ValueError(f"diagnostic code {self.code!r} is not in the catalogue")
        if Severity(self.severity) != expected:
            raise ValueError(f"{self.code} has fixed severity {expected.value}")
        return self


class LedgerItem(_Record):
    """One branch of a method's (or SQL statement's) branch ledger (docs/ir.md §9)."""

    record_id: str = Field(min_length=1)
    branch_id: str = Field(min_length=1)
    branch_kind: BranchKind
    parent_branch_id: str | None
    symbol_ref: Ref
    symbol_revision: str = Field(pattern=r"^rev:[0-9a-f]{64}$")
    condition_ref: Ref | None
    outcome_kind: OutcomeKind
    effect_refs: list[Ref] = Field(default_factory=list)
    exit_ref: Ref | None
    evidence_refs: list[Ref] = Field(default_factory=list)
    resolution_status: ResolutionStatus
    exclusion_rule_id: str | None = None

    @field_validator("effect_refs", "evidence_refs")
    @classmethod
    def _sort(cls, v: list[Ref]) -> list[Ref]:
        return _sorted_refs(v)


# ---------------------------------------------------------------- package files


class ManifestFile(_Record):
    path: str = Field(pattern=r"^[A-Za-z0-9_-]+\.jsonl?$")
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    record_count: int = Field(ge=0)


class DependencyArtifact(_Record):
    coordinate: str
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")


class Manifest(_Record):
    """IR manifest 0.1 (frozen; docs/ir.md §11.1). The shipped JSON Schema is authoritative."""

    schema_version: Literal["0.1"]
    scan_id: str = Field(min_length=1)
    service_id: str = Field(min_length=1)
    repo_id: str = Field(min_length=1)
    commit_sha: str = Field(pattern=r"^[0-9a-f]{40}([0-9a-f]{24})?$")
    analyzer_version: str = Field(min_length=1)
    input_digest: str = Field(pattern=r"^[0-9a-f]{64}$")
    status: Literal["COMPLETE", "PARTIAL", "FAILED"]
    dependency_artifacts: list[DependencyArtifact] | None = None
    files: list[ManifestFile] = Field(min_length=1)
    coverage_ref: Literal["coverage.json"]
    config_snapshot_refs: list[str] | None = None
    deployment_refs: list[str] | None = None


class CoverageDimension(_Record):
    """Counts of one coverage dimension (docs/ir.md §10). Ratios are never stored."""

    discovered: int = Field(ge=0)
    resolved: int = Field(ge=0)
    partial: int = Field(ge=0)
    failed: int = Field(ge=0)
    excluded: int = Field(ge=0)
    excluded_by_reason: dict[str, int] = Field(default_factory=dict)
    denominator_source: str
    not_examined: list[str] = Field(default_factory=list)
    resolved_external: int | None = None

    @model_validator(mode="after")
    def _adds_up(self) -> "CoverageDimension":
        if self.resolved + self.partial + self.failed + self.excluded != self.discovered:
            raise ValueError("resolved + partial + failed + excluded must equal discovered")
        if sum(self.excluded_by_reason.values()) != self.excluded:
            raise ValueError("excluded_by_reason must add up to excluded")
        if self.resolved_external is not None and self.resolved_external > self.resolved:
            raise ValueError("resolved_external is a subset of resolved")
        return self


class CoverageEntry(_Record):
    entry_ref: Ref
    #: the mechanism that found the entry (``MAIN_METHOD``, ``HTTP_MAPPING`` …): a word, never empty
    discovery_source: str = Field(pattern=r"^\S+$")
    symbols_resolved: bool
    branches_analysed: bool
    stop_reason: str | None


class PackageStatus(_Record):
    """Why a package is COMPLETE, PARTIAL or FAILED; the manifest's ``status`` repeats ``status``
    (so the status is covered by this file's sha256)."""

    status: Literal["COMPLETE", "PARTIAL", "FAILED"]
    reason: str = Field(min_length=1)


class Coverage(_Record):
    """``coverage.json`` (docs/ir.md §10)."""

    schema_version: Literal["0.1"]
    scan_id: str
    package_status: PackageStatus
    dimensions: dict[
        Literal["applications", "entries", "cross_service_edges", "branch_ledger", "files",
                "sql_statements", "config_keys", "call_sites"],
        CoverageDimension,
    ]
    entries: list[CoverageEntry] = Field(default_factory=list)
    analysis_level: dict[str, Literal["SYNTAX_ONLY"]] = Field(default_factory=dict)
    pruned_by_rule: dict[str, int] = Field(default_factory=dict)


#: jsonl files of a package and the model of one line
JSONL_MODELS: dict[str, type[BaseModel]] = {
    "entities.jsonl": EntityRecord,
    "relations.jsonl": Relation,
    "source_segments.jsonl": SourceSegment,
    "config_bindings.jsonl": ConfigBinding,
    "diagnostics.jsonl": Diagnostic,
    "branch_ledger.jsonl": LedgerItem,
}

#: every file of a package except the manifest, in manifest order
PACKAGE_FILES: tuple[str, ...] = (
    "analysis_input.json",
    "branch_ledger.jsonl",
    "config_bindings.jsonl",
    "coverage.json",
    "diagnostics.jsonl",
    "entities.jsonl",
    "relations.jsonl",
    "source_segments.jsonl",
)

#: legal relation endpoints (docs/ir.md §5.3): kind → set of (source kind, target kind)
LEGAL_RELATIONS: dict[str, set[tuple[str, str]]] = {
    "CONTAINS": {("SERVICE", "MODULE"), ("MODULE", "TYPE"), ("TYPE", "METHOD"), ("TYPE", "FIELD"),
                 ("TYPE", "TYPE"), ("MODULE", "SQL_STATEMENT")},
    "EXTENDS": {("TYPE", "TYPE"), ("TYPE", "EXTERNAL")},
    "IMPLEMENTS": {("TYPE", "TYPE"), ("TYPE", "EXTERNAL")},
    "DEPENDS_ON": {("MODULE", "MODULE"), ("MODULE", "ARTIFACT")},
    "INJECTS": {("FIELD", "BEAN"), ("METHOD", "BEAN")},
    "CALLS": {("METHOD", "METHOD"), ("METHOD", "CONTRACT"), ("METHOD", "EXTERNAL")},
    "EXPOSES": {("BEAN", "CONTRACT"), ("METHOD", "CONTRACT")},
    # ENTRY → CONTRACT: a GATEWAY_ROUTE entry bound to the consumed contract it forwards to
    "BINDS_TO": {("BEAN", "CONTRACT"), ("METHOD", "SQL_STATEMENT"), ("BEAN", "TYPE"), ("TOPIC", "TOPIC"),
                 ("ENTRY", "CONTRACT")},
    "PUBLISHES": {("METHOD", "TOPIC"), ("METHOD", "EVENT")},
    "SUBSCRIBES": {("ENTRY", "TOPIC"), ("ENTRY", "EVENT")},
    "READS": {("SQL_STATEMENT", "TABLE"), ("METHOD", "TABLE"), ("METHOD", "CONFIG_KEY"), ("METHOD", "CACHE_KEY")},
    "WRITES": {("SQL_STATEMENT", "TABLE"), ("METHOD", "TABLE"), ("METHOD", "CONFIG_KEY"), ("METHOD", "CACHE_KEY")},
    "GUARDS": {("CONFIG_KEY", "METHOD")},
}
