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

from dataclasses import dataclass

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
    out: list[SynthMember] = []
    declared_names = {m.name for m in td.methods}
    has_ctor = any(m.decl_kind in ("CONSTRUCTOR", "COMPACT_CONSTRUCTOR") for m in td.methods)
    header = (td.header_start, td.header_end)

    type_anns: dict[str, Annotation] = {}
    for a in td.annotations:
        fqn = _ann_fqn(a, scope, chain, LOMBOK_TYPE_ANNOTATIONS)
        if fqn:
            type_anns[fqn] = a

    instance_fields = [f for f in td.fields if "static" not in f.modifiers]
    if td.kind == "RECORD":
        comp_fields = [FieldDecl(p.name, p.type, ["private", "final"], p.annotations, None, td.header_start,
                                 td.header_end, 0) for p in td.record_components]
        for f in comp_fields:
            out.append(SynthMember("FIELD", f.name, [], f.type, "record", [header], ["private", "final"]))
            if f.name not in declared_names:
                out.append(SynthMember("METHOD", f.name, [], f.type, "record", [header], ["public"]))
        canon = [p.type for p in td.record_components]
        declared_sigs = [tuple(p.type for p in m.params) for m in td.methods if m.name == "<init>"]
        if tuple(canon) not in declared_sigs:
            out.append(SynthMember("METHOD", "<init>", [(p.name, p.type) for p in td.record_components], None,
                                   "record", [header], ["public"]))
        return out

    for fqn, logger_type in sorted(LOMBOK_LOGGERS.items()):
        if fqn in type_anns:
            a = type_anns[fqn]
            out.append(SynthMember("FIELD", "log", [], TypeRef(tuple(logger_type.split("."))), fqn,
                                   [(a.line, a.line)], ["private", "static", "final"]))

    def getters(fields: list[FieldDecl], cause: str, line: int) -> None:
        for f in fields:
            prefix = "is" if f.type.primitive and f.type.parts == ("boolean",) and not f.type.dims else "get"
            name = prefix + _cap(f.name)
            if (name.lower(), 0) in declared_arity or any(m.name == name for m in out if m.kind == "METHOD"):
                continue
            out.append(SynthMember("METHOD", name, [], f.type, cause, [(line, line), (f.start_line, f.end_line)],
                                   ["public"]))

    # Lombok generates no accessor when the type declares a method of that name (any case) with the
    # accessor's parameter count (https://projectlombok.org/features/GetterSetter)
    declared_arity = {(m.name.lower(), len(m.params)) for m in td.methods}

    def setters(fields: list[FieldDecl], cause: str, line: int) -> None:
        for f in fields:
            if "final" in f.modifiers:
                continue
            name = "set" + _cap(f.name)
            if (name.lower(), 1) in declared_arity or any(m.name == name for m in out if m.kind == "METHOD"):
                continue
            out.append(SynthMember("METHOD", name, [(f.name, f.type)], TypeRef(("void",), 0, True), cause,
                                   [(line, line), (f.start_line, f.end_line)], ["public"]))

    def field_anns(f: FieldDecl, fqn: str) -> Annotation | None:
        for a in f.annotations:
            if _ann_fqn(a, scope, chain, {fqn}):
                return a
        return None

    is_value = "lombok.Value" in type_anns
    if is_value:
        instance_fields = [FieldDecl(f.name, f.type, sorted(set(f.modifiers) | {"final", "private"}), f.annotations,
                                     f.initializer, f.start_line, f.end_line, f.start_byte) for f in instance_fields]
    getter_fields: list[FieldDecl] = []
    setter_fields: list[FieldDecl] = []
    for fqn in ("lombok.Data", "lombok.Value", "lombok.Getter"):
        if fqn in type_anns and not (fqn == "lombok.Getter" and _level_none(type_anns[fqn])):
            getter_fields = instance_fields
            getters([f for f in instance_fields if not (fa := field_anns(f, "lombok.Getter")) or not _level_none(fa)],
                    fqn, type_anns[fqn].line)
            break
    for fqn in ("lombok.Data", "lombok.Setter"):
        if fqn in type_anns and not (fqn == "lombok.Setter" and _level_none(type_anns[fqn])):
            setter_fields = instance_fields
            setters([f for f in instance_fields if not (fa := field_anns(f, "lombok.Setter")) or not _level_none(fa)],
                    fqn, type_anns[fqn].line)
            break
    for f in instance_fields:
        ga = field_anns(f, "lombok.Getter")
        if ga is not None and f not in getter_fields and not _level_none(ga):
            getters([f], "lombok.Getter", ga.line)
        sa = field_anns(f, "lombok.Setter")
        if sa is not None and f not in setter_fields and not _level_none(sa):
            setters([f], "lombok.Setter", sa.line)

    ctor_sigs: set[tuple[str, ...]] = set()

    def ctor(fields: list[FieldDecl], cause: str, line: int) -> None:
        key = tuple(".".join(f.type.parts) + "[]" * f.type.dims for f in fields)
        if key in ctor_sigs:
            return
        ctor_sigs.add(key)
        out.append(SynthMember("METHOD", "<init>", [(f.name, f.type) for f in fields], None, cause,
                               [(line, line)] + [(f.start_line, f.end_line) for f in fields], ["public"]))

    def required(fields: list[FieldDecl]) -> list[FieldDecl]:
        return [f for f in fields if f.initializer is None and
                ("final" in f.modifiers or field_anns(f, "lombok.NonNull") is not None)]

    explicit_lombok_ctor = False
    if "lombok.NoArgsConstructor" in type_anns:
        ctor([], "lombok.NoArgsConstructor", type_anns["lombok.NoArgsConstructor"].line)
        explicit_lombok_ctor = True
    if "lombok.RequiredArgsConstructor" in type_anns:
        ctor(required(instance_fields), "lombok.RequiredArgsConstructor",
             type_anns["lombok.RequiredArgsConstructor"].line)
        explicit_lombok_ctor = True
    if "lombok.AllArgsConstructor" in type_anns:
        ctor([f for f in instance_fields if not ("final" in f.modifiers and f.initializer is not None)],
             "lombok.AllArgsConstructor", type_anns["lombok.AllArgsConstructor"].line)
        explicit_lombok_ctor = True
    if not explicit_lombok_ctor and not has_ctor:
        if is_value:
            ctor([f for f in instance_fields if f.initializer is None], "lombok.Value", type_anns["lombok.Value"].line)
            explicit_lombok_ctor = True
        elif "lombok.Data" in type_anns:
            ctor(required(instance_fields), "lombok.Data", type_anns["lombok.Data"].line)
            explicit_lombok_ctor = True
    if td.kind == "CLASS" and td.nesting != "ANONYMOUS" and not has_ctor and not explicit_lombok_ctor:
        out.append(SynthMember("METHOD", "<init>", [], None, "javac", [header], []))
    if td.kind == "ENUM" and td.simple_name:  # JLS 8.9.3: every enum declares values() and valueOf(String)
        own = TypeRef((td.simple_name,))
        out.append(SynthMember("METHOD", "values", [], TypeRef(own.parts, 1), "javac", [header], ["public", "static"]))
        out.append(SynthMember("METHOD", "valueOf", [("name", TypeRef(("String",)))], own, "javac", [header],
                               ["public", "static"]))
    return out
