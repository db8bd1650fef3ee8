"""Members that Lombok, records and javac add to a type (docs/scanning.md §8).

Lombok (never run — its annotations are read): ``@RequiredArgsConstructor``
(final and ``@NonNull`` fields without initializer), ``@AllArgsConstructor``
(all non-static fields except initialised finals), ``@NoArgsConstructor``,
``@Data`` (getters, setters for non-final fields, and a required-args
constructor when the type declares no constructor and no other Lombok
constructor annotation), ``@Value`` (getters, all-args constructor),
``@Getter``/``@Setter`` on the type or a field (``AccessLevel.NONE`` skips),
and logger fields (``@Slf4j`` …, named ``log``). Lombok skips a method whose
name is already declared, and so does this module. ``@Builder``,
``@Accessors`` and ``lombok.config`` are not modelled.

Records get their private final component fields, accessors and canonical
constructor; a class with no constructor gets javac's ``<init>()``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from diting.java.names import FileScope
from diting.java.facts import Annotation, FieldDecl, TypeDecl, TypeRef

LOMBOK_LOGGERS = {
    "lombok.extern.slf4j.Slf4j": "org.slf4j.Logger",
    "lombok.extern.slf4j.XSlf4j": "org.slf4j.ext.XLogger",
    "lombok.extern.log4j.Log4j2": "org.apache.logging.log4j.Logger",
    "lombok.extern.log4j.Log4j": "org.apache.log4j.Logger",
    "lombok.extern.apachecommons.CommonsLog": "org.apache.commons.logging.Log",
    "lombok.extern.java.Log": "java.util.logging.Logger",
    "lombok.extern.jbosslog.JBossLog": "org.jboss.logging.Logger",
    "lombok.extern.flogger.Flogger": "com.google.common.flogger.FluentLogger",
}
LOMBOK_TYPE_ANNOTATIONS = {
    "lombok.Data", "lombok.Value", "lombok.Getter", "lombok.Setter", "lombok.RequiredArgsConstructor",
    "lombok.AllArgsConstructor", "lombok.NoArgsConstructor", *LOMBOK_LOGGERS,
}


@dataclass
class SynthMember:
    """A member added by Lombok, a record or javac.

    ``kind`` METHOD or FIELD; for a method ``params`` are ``(name, TypeRef)``;
    ``cause`` names what added it (``lombok.Data``, ``record``, ``javac``);
    ``lines`` the declaration lines that are its evidence (annotation, field or header).
    """

    kind: str
    name: str
    params: list[tuple[str, TypeRef]]
    type: TypeRef | None
    cause: str
    lines: list[tuple[int, int]]
    modifiers: list[str]


def _ann_fqn(ann: Annotation, scope: FileScope, chain: list[int], known: set[str]) -> str | None:
    """FQN of ``ann`` when it is one of ``known`` (an import, a qualified name, or the simple
    name with a wildcard import of its package)."""
    r = scope.resolve_base(TypeRef(tuple(ann.name.split("."))), chain, {})
    if r is not None and r.name in known:
        return r.name
    if r is None:
        simple = ann.name.rsplit(".", 1)[-1]
        for fqn in known:
            pkg, _, s = fqn.rpartition(".")
            if s == simple and pkg in scope.wildcards:
                return fqn
    return None


def _level_none(ann: Annotation) -> bool:
    v = ann.args.get("value")
    return bool(v and v.get("kind") in ("field", "name") and v["parts"][-1] == "NONE")


def _cap(name: str) -> str:
    return name[:1].upper() + name[1:]


def synthesize(td: TypeDecl, scope: FileScope, chain: list[int]) -> list[SynthMember]:
    """Members added to ``td`` by Lombok annotations, record rules and javac."""
    has_ctor = any(m.decl_kind in ("CONSTRUCTOR", "COMPACT_CONSTRUCTOR") for m in td.methods)
    type_anns = _type_annotations(td, scope, chain)
    if td.kind == "RECORD":
        return _record_members(td)
    gen = _Generated({(m.name.lower(), len(m.params)) for m in td.methods})
    gen.out.extend(_logger_fields(type_anns))
    fields = [f for f in td.fields if "static" not in f.modifiers]
    if "lombok.Value" in type_anns:
        fields = _value_fields(fields)
    _accessors(gen, fields, type_anns, scope, chain)
    lombok_ctor = _constructors(gen, fields, type_anns, has_ctor, scope, chain)
    gen.out.extend(_javac_members(td, has_ctor or lombok_ctor))
    return gen.out


def _type_annotations(td: TypeDecl, scope: FileScope, chain: list[int]) -> dict[str, Annotation]:
    """The Lombok annotations on the type, by FQN."""
    type_anns: dict[str, Annotation] = {}
    for a in td.annotations:
        fqn = _ann_fqn(a, scope, chain, LOMBOK_TYPE_ANNOTATIONS)
        if fqn:
            type_anns[fqn] = a
    return type_anns


def _field_annotation(f: FieldDecl, fqn: str, scope: FileScope, chain: list[int]) -> Annotation | None:
    """The field's annotation ``fqn`` (``lombok.Getter`` …), or None."""
    for a in f.annotations:
        if _ann_fqn(a, scope, chain, {fqn}):
            return a
    return None


def _record_members(td: TypeDecl) -> list[SynthMember]:
    """A record's private final component fields, their accessors (unless declared) and the
    canonical constructor (unless declared)."""
    out: list[SynthMember] = []
    declared_names = {m.name for m in td.methods}
    header = (td.header_start, td.header_end)
    for p in td.record_components:
        out.append(SynthMember("FIELD", p.name, [], p.type, "record", [header], ["private", "final"]))
        if p.name not in declared_names:
            out.append(SynthMember("METHOD", p.name, [], p.type, "record", [header], ["public"]))
    canon = [p.type for p in td.record_components]
    declared_sigs = [tuple(p.type for p in m.params) for m in td.methods if m.name == "<init>"]
    if tuple(canon) not in declared_sigs:
        out.append(SynthMember("METHOD", "<init>", [(p.name, p.type) for p in td.record_components], None,
                               "record", [header], ["public"]))
    return out


def _logger_fields(type_anns: dict[str, Annotation]) -> list[SynthMember]:
    """The static ``log`` field of a logger annotation (``@Slf4j`` …)."""
    out: list[SynthMember] = []
    for fqn, logger_type in sorted(LOMBOK_LOGGERS.items()):
        if fqn in type_anns:
            a = type_anns[fqn]
            out.append(SynthMember("FIELD", "log", [], TypeRef(tuple(logger_type.split("."))), fqn,
                                   [(a.line, a.line)], ["private", "static", "final"]))
    return out


def _value_fields(fields: list[FieldDecl]) -> list[FieldDecl]:
    """The instance fields of a ``@Value`` type: each made private and final."""
    return [FieldDecl(f.name, f.type, sorted(set(f.modifiers) | {"final", "private"}), f.annotations,
                      f.initializer, f.start_line, f.end_line, f.start_byte) for f in fields]


@dataclass
class _Generated:
    """The Lombok members generated for one type so far, and what decides whether another is."""

    #: (lower-case name, parameter count) of each declared method
    declared_arity: set[tuple[str, int]]
    out: list[SynthMember] = field(default_factory=list)
    #: parameter types of each constructor generated so far
    ctor_sigs: set[tuple[str, ...]] = field(default_factory=set)

    def _skips(self, name: str, arity: int) -> bool:
        # Lombok generates no accessor when the type declares a method of that name (any case) with the
        # accessor's parameter count (https://projectlombok.org/features/GetterSetter)
        return (name.lower(), arity) in self.declared_arity or \
            any(m.name == name for m in self.out if m.kind == "METHOD")

    def getters(self, fields: list[FieldDecl], cause: str, line: int) -> None:
        """``getX()`` (``isX()`` for a ``boolean``) of each field."""
        for f in fields:
            prefix = "is" if f.type.primitive and f.type.parts == ("boolean",) and not f.type.dims else "get"
            name = prefix + _cap(f.name)
            if self._skips(name, 0):
                continue
            self.out.append(SynthMember("METHOD", name, [], f.type, cause, [(line, line), (f.start_line, f.end_line)],
                                        ["public"]))

    def setters(self, fields: list[FieldDecl], cause: str, line: int) -> None:
        """``setX(x)`` of each non-final field."""
        for f in fields:
            if "final" in f.modifiers:
                continue
            name = "set" + _cap(f.name)
            if self._skips(name, 1):
                continue
            self.out.append(SynthMember("METHOD", name, [(f.name, f.type)], TypeRef(("void",), 0, True), cause,
                                        [(line, line), (f.start_line, f.end_line)], ["public"]))

    def constructor(self, fields: list[FieldDecl], cause: str, line: int) -> None:
        """A public constructor taking ``fields``, unless one generated already has their parameter types."""
        key = tuple(".".join(f.type.parts) + "[]" * f.type.dims for f in fields)
        if key in self.ctor_sigs:
            return
        self.ctor_sigs.add(key)
        self.out.append(SynthMember("METHOD", "<init>", [(f.name, f.type) for f in fields], None, cause,
                                    [(line, line)] + [(f.start_line, f.end_line) for f in fields], ["public"]))


def _accessors(gen: _Generated, fields: list[FieldDecl], type_anns: dict[str, Annotation], scope: FileScope,
               chain: list[int]) -> None:
    """Getters and setters: of ``@Data``, ``@Value``, ``@Getter`` or ``@Setter`` on the type, then of
    ``@Getter`` / ``@Setter`` on a field the type's annotation did not cover."""
    getter_fields = _type_accessors(gen.getters, ("lombok.Data", "lombok.Value", "lombok.Getter"), "lombok.Getter",
                                    fields, type_anns, scope, chain)
    setter_fields = _type_accessors(gen.setters, ("lombok.Data", "lombok.Setter"), "lombok.Setter",
                                    fields, type_anns, scope, chain)
    for f in fields:
        ga = _field_annotation(f, "lombok.Getter", scope, chain)
        if ga is not None and f not in getter_fields and not _level_none(ga):
            gen.getters([f], "lombok.Getter", ga.line)
        sa = _field_annotation(f, "lombok.Setter", scope, chain)
        if sa is not None and f not in setter_fields and not _level_none(sa):
            gen.setters([f], "lombok.Setter", sa.line)


def _type_accessors(add: Callable[[list[FieldDecl], str, int], None], causes: tuple[str, ...], accessor: str,
                    fields: list[FieldDecl], type_anns: dict[str, Annotation], scope: FileScope,
                    chain: list[int]) -> list[FieldDecl]:
    """The first of ``causes`` on the type (``accessor``, the ``@Getter`` / ``@Setter`` itself, not
    at ``AccessLevel.NONE``) ``add``s an accessor to every field but one whose own ``accessor`` is
    ``AccessLevel.NONE``; the fields it covers (none when no cause is on the type)."""
    for fqn in causes:
        if fqn in type_anns and not (fqn == accessor and _level_none(type_anns[fqn])):
            add([f for f in fields if not (fa := _field_annotation(f, accessor, scope, chain)) or not _level_none(fa)],
                fqn, type_anns[fqn].line)
            return fields
    return []


def _constructors(gen: _Generated, fields: list[FieldDecl], type_anns: dict[str, Annotation], has_ctor: bool,
                  scope: FileScope, chain: list[int]) -> bool:
    """``@NoArgsConstructor``, ``@RequiredArgsConstructor``, ``@AllArgsConstructor``; without any of
    them and without a declared constructor, ``@Value``'s all-args or ``@Data``'s required-args
    constructor. Whether Lombok adds a constructor."""
    explicit_lombok_ctor = False
    if "lombok.NoArgsConstructor" in type_anns:
        gen.constructor([], "lombok.NoArgsConstructor", type_anns["lombok.NoArgsConstructor"].line)
        explicit_lombok_ctor = True
    if "lombok.RequiredArgsConstructor" in type_anns:
        gen.constructor(_required_fields(fields, scope, chain), "lombok.RequiredArgsConstructor",
                        type_anns["lombok.RequiredArgsConstructor"].line)
        explicit_lombok_ctor = True
    if "lombok.AllArgsConstructor" in type_anns:
        gen.constructor([f for f in fields if not ("final" in f.modifiers and f.initializer is not None)],
                        "lombok.AllArgsConstructor", type_anns["lombok.AllArgsConstructor"].line)
        explicit_lombok_ctor = True
    if not explicit_lombok_ctor and not has_ctor:
        if "lombok.Value" in type_anns:
            gen.constructor([f for f in fields if f.initializer is None], "lombok.Value",
                            type_anns["lombok.Value"].line)
            explicit_lombok_ctor = True
        elif "lombok.Data" in type_anns:
            gen.constructor(_required_fields(fields, scope, chain), "lombok.Data", type_anns["lombok.Data"].line)
            explicit_lombok_ctor = True
    return explicit_lombok_ctor


def _required_fields(fields: list[FieldDecl], scope: FileScope, chain: list[int]) -> list[FieldDecl]:
    """The fields of a ``@RequiredArgsConstructor``: final or ``@NonNull``, without initializer."""
    return [f for f in fields if f.initializer is None and
            ("final" in f.modifiers or _field_annotation(f, "lombok.NonNull", scope, chain) is not None)]


def _javac_members(td: TypeDecl, has_ctor: bool) -> list[SynthMember]:
    """What javac adds: a class's default constructor when it has none, an enum's ``values()`` and
    ``valueOf(String)``."""
    out: list[SynthMember] = []
    header = (td.header_start, td.header_end)
    if td.kind == "CLASS" and td.nesting != "ANONYMOUS" and not has_ctor:
        out.append(SynthMember("METHOD", "<init>", [], None, "javac", [header], []))
    if td.kind == "ENUM" and td.simple_name:  # JLS 8.9.3: every enum declares values() and valueOf(String)
        own = TypeRef((td.simple_name,))
        out.append(SynthMember("METHOD", "values", [], TypeRef(own.parts, 1), "javac", [header], ["public", "static"]))
        out.append(SynthMember("METHOD", "valueOf", [("name", TypeRef(("String",)))], own, "javac", [header],
                               ["public", "static"]))
    return out
