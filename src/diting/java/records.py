"""Java facts of one module as IR record blueprints (docs/scanning.md §8; identities: docs/ir.md §2).

For every file of a module: TYPE entities (named, nested ``Outer$Inner``, local
``Outer$1Local``, anonymous ``Outer$1``), METHOD entities with erased binary
parameter types (``<init>``, ``<clinit>``), FIELD entities (enum constants with
their arguments, folded constant values), the members Lombok, records and
javac add, CONTAINS relations (MODULE→TYPE for top-level types, TYPE→TYPE,
TYPE→METHOD, TYPE→FIELD), EXTENDS/IMPLEMENTS (in-repo, EXTERNAL, AMBIGUOUS
or UNRESOLVED), and the findings of the file (PARSE_ERROR with ranges,
TYPE_UNRESOLVED, DUPLICATE_DECLARATION).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from diting.java.constants import ConstantFolder
from diting.java.lombok import synthesize
from diting.java.names import FileScope, Resolved, TypeCatalog, TypeInfo
from diting.java.facts import Annotation, FileFacts, MethodDecl, TypeDecl, TypeRef, type_chain
from diting.ir.builder import RecordSet, RefTo
from diting.ir.ids import diagnostic_record_id, entity_record_id
from diting.source.text import uncertain_message

_STATIC_CONTEXT_KINDS = ("INTERFACE", "ENUM", "RECORD", "ANNOTATION")


@dataclass
class FileSummary:
    """What the package assembler needs to know about one Java file afterwards."""

    path: str
    types: int = 0
    methods: int = 0
    unresolved: list[str] = field(default_factory=list)
    errors: int = 0
    lossy: bool = False
    type_rids: list[str] = field(default_factory=list)
    diagnostics: list[str] = field(default_factory=list)


@dataclass
class MainMethod:
    """A ``public static void main(String[])`` and the type declaring it."""

    method_rid: str
    method_stable: str
    type_binary: str
    evidence: str
    application_annotation: str | None
    type_evidence: str
    #: where the declaring type's header is: (path, start line, end line)
    type_header: tuple[str, int, int]


@dataclass
class ModuleJavaResult:
    files: list[FileSummary] = field(default_factory=list)
    mains: list[MainMethod] = field(default_factory=list)


@dataclass
class _DeclaringType:
    """The type whose members are recorded: its file, declaration, records and identities."""

    facts: FileFacts
    scope: FileScope
    td: TypeDecl
    chain: list[int]
    rid: str
    stable: str
    binary: str
    summary: FileSummary


class ModuleJava:
    """Builds the Java record blueprints of one module into a :class:`RecordSet`.

    ``ns`` is the module's ``groupId:artifactId``; ``module_rid`` its MODULE record;
    ``ns_of`` maps a module pom path to its ns (for in-repo targets);
    ``application_annotations`` are the rule FQNs that mark a Boot application.
    """

    def __init__(self, rs: RecordSet, ns: str, module_rid: str, ns_of: dict[str, str], folder: ConstantFolder,
                 application_annotations: set[str]) -> None:
        self.rs = rs
        self.ns = ns
        self.module_rid = module_rid
        self.ns_of = ns_of
        self.folder = folder
        self.apps = application_annotations
        self.result = ModuleJavaResult()

    # ------------------------------------------------------------ helpers
    def _ann_json(self, anns: list[Annotation], scope: FileScope, chain: list[int]) -> list[dict[str, Any]]:
        out = []
        for a in anns:
            r = scope.resolve(TypeRef(tuple(a.name.split("."))), chain, {})
            out.append({"type": r.name, "name": a.name, "args": a.args})
        return out

    def _type_stable(self, info: TypeInfo) -> str:
        return f"{self.ns_of.get(info.module, self.ns)}/{info.binary}"

    def _seg(self, facts: FileFacts, start: int, end: int) -> str:
        assert facts.lines is not None
        return self.rs.segment(facts.path, facts.lines, start, end, "CODE", facts.encoding)

    # ------------------------------------------------------------ files
    def add_file(self, facts: FileFacts, scope: FileScope) -> FileSummary:
        summary = FileSummary(facts.path, lossy=facts.lossy, errors=len(facts.errors))
        type_rids: dict[int, str] = {}
        type_stables: dict[int, str] = {}
        pending_supers: list[tuple[int, str, str, TypeRef, str]] = []
        for idx, td in enumerate(facts.types):
            chain = type_chain(facts, idx)
            binary = scope.binary_of(td)
            stable = f"{self.ns}/{binary}"
            ev = self._seg(facts, td.header_start, td.header_end)
            tv = scope.type_vars_for(chain)
            attrs: dict[str, Any] = {
                "type_kind": td.kind, "nesting": td.nesting, "path": facts.path,
                "modifiers": sorted(td.modifiers), "annotations": self._ann_json(td.annotations, scope, chain),
                "type_parameters": [p.name for p in td.type_params],
            }
            if td.anonymous_base is not None:
                attrs["anonymous_base"] = scope.resolve(td.anonymous_base, chain[1:], tv).name
            if entity_record_id("TYPE", stable) in self.rs.entities:
                self._duplicate(facts, summary, "type", binary, td.header_start, td.header_end, ev)
                continue
            rid = self.rs.entity("TYPE", stable, binary, [ev], attrs)
            type_rids[idx] = rid
            type_stables[idx] = stable
            summary.types += 1
            summary.type_rids.append(rid)
            if td.outer is None:
                self.rs.relation("CONTAINS", self.module_rid, self.ns, target_rid=rid, target_key=stable,
                                 status="RESOLVED", evidence=[ev])
            elif td.outer in type_rids:  # (the outer type of a skipped duplicate is absent)
                self.rs.relation("CONTAINS", type_rids[td.outer], type_stables[td.outer], target_rid=rid,
                                 target_key=stable, status="RESOLVED", evidence=[ev])
            if td.superclass is not None:
                pending_supers.append((idx, "EXTENDS", stable, td.superclass, ev))
            for itf in td.interfaces:
                kind = "EXTENDS" if td.kind == "INTERFACE" else "IMPLEMENTS"
                pending_supers.append((idx, kind, stable, itf, ev))
            if td.nesting == "ANONYMOUS" and td.anonymous_base is not None:
                r = scope.resolve(td.anonymous_base, chain[1:], tv)
                base_kind = r.infos[0].kind if r.infos else scope.jdk.kind_of(r.name) if r.external else None
                if base_kind is not None:
                    pending_supers.append((idx, "IMPLEMENTS" if base_kind == "INTERFACE" else "EXTENDS", stable,
                                           td.anonymous_base, ev))
            self._members(facts, scope, idx, td, chain, rid, stable, ev, summary)

        for idx, kind, stable, ref, ev in pending_supers:
            chain = type_chain(facts, idx)
            r = scope.resolve(ref, chain[1:], scope.type_vars_for(chain))
            self._super_relation(facts, scope, summary, type_rids[idx], stable, kind, ref, r, ev)

        self._file_findings(facts, scope, summary)
        self.result.files.append(summary)
        return summary

    def _super_relation(self, facts: FileFacts, scope: FileScope, summary: FileSummary, src_rid: str, src_stable: str,
                        kind: str, ref: TypeRef, r: Resolved, ev: str) -> None:
        written = ".".join(ref.parts)
        if r.unresolved:
            diag = self._unresolved_diag(facts, scope)
            self.rs.relation(kind, src_rid, src_stable, target_rid=None,
                             target_key=f"?{written}", status="UNRESOLVED", evidence=[ev],
                             diagnostics=[diag], match_keys={"type": written})
            return
        if r.infos:
            targets = sorted({self._type_stable(i) for i in r.infos})
            if len(targets) == 1:
                self.rs.relation(kind, src_rid, src_stable, target_rid=entity_record_id("TYPE", targets[0]),
                                 target_key=targets[0], status="RESOLVED", evidence=[ev])
            else:
                self.rs.relation(kind, src_rid, src_stable, target_rid=None, target_key=r.name,
                                 status="AMBIGUOUS", evidence=[ev],
                                 candidates=[entity_record_id("TYPE", t) for t in targets])
            return
        # a library (or otherwise known, not in-repo) type
        ext_rid = self.external_type(r.name, ev, scope.jdk)
        self.rs.relation(kind, src_rid, src_stable, target_rid=ext_rid, target_key=f"ext:{r.name}",
                         status="RESOLVED", evidence=[ev], attributes={"external": True})

    def external_type(self, binary: str, ev: str, catalog: TypeCatalog) -> str:
        """The EXTERNAL entity of a library type (created once per module, evidence united)."""
        rid = entity_record_id("EXTERNAL", f"ext:{binary}")
        if rid in self.rs.entities:
            self.rs.add_evidence(rid, [ev])
            return rid
        kind = catalog.kind_of(binary)
        attrs = {"known_from": "catalog" if kind else "import"}
        if kind:
            attrs["type_kind"] = kind
        return self.rs.entity("EXTERNAL", f"ext:{binary}", binary, [ev], attrs, symbol_kind="TYPE", artifact=None)

    def _unresolved_diag(self, facts: FileFacts, scope: FileScope) -> str:
        return diagnostic_record_id("TYPE_UNRESOLVED", facts.path)

    def _duplicate(self, facts: FileFacts, summary: FileSummary, what: str, name: str, start: int, end: int,
                   ev: str) -> None:
        rid = self.rs.diagnostic("DUPLICATE_DECLARATION", f"{facts.path}|{what}|{name}|{start}",
                                 f"{what} {name} is declared more than once with the same identity "
                                 f"({facts.path}:{start}); only the first declaration is recorded",
                                 [self.module_rid], [ev])
        summary.diagnostics.append(rid)

    # ------------------------------------------------------------ members
    def _method_stable(self, type_stable: str, name: str, sig: list[str]) -> str:
        return f"{type_stable}#{name}({','.join(sig)})"

    def _members(self, facts: FileFacts, scope: FileScope, idx: int, td: TypeDecl, chain: list[int], type_rid: str,
                 type_stable: str, type_ev: str, summary: FileSummary) -> None:
        """The METHOD and FIELD entities of ``td``, each with its CONTAINS relation: declared methods,
        the static initializer, declared fields, enum constants, then what Lombok, records and javac add."""
        owner = _DeclaringType(facts, scope, td, chain, type_rid, type_stable, scope.binary_of(td), summary)
        seen_methods = self._declared_methods(owner, type_ev)
        self._static_initializer(owner)
        seen_fields = self._declared_fields(owner)
        self._enum_constants(owner, seen_fields)
        self._synthesized_members(owner, seen_methods, seen_fields)

    def _contains(self, owner: _DeclaringType, rid: str, stable: str, evs: list[str]) -> None:
        """The CONTAINS relation from the declaring type to a member."""
        self.rs.relation("CONTAINS", owner.rid, owner.stable, target_rid=rid, target_key=stable,
                         status="RESOLVED", evidence=evs)

    def _declared_methods(self, owner: _DeclaringType, type_ev: str) -> set[str]:
        """The declared methods and constructors (a repeated identity is a DUPLICATE_DECLARATION), and
        a ``main`` among them as a :class:`MainMethod`; the stable ids recorded."""
        facts, scope, td, chain, binary = owner.facts, owner.scope, owner.td, owner.chain, owner.binary
        seen_methods: set[str] = set()
        for m in td.methods:
            tv = scope.type_vars_for(chain, m.type_params)
            sig = [scope.resolve(p.type, chain, tv).name for p in m.params]
            stable = self._method_stable(owner.stable, m.name, sig)
            ev = self._seg(facts, m.start_line, m.end_line)
            if stable in seen_methods:
                self._duplicate(facts, owner.summary, "method", stable.split("/", 1)[-1], m.start_line, m.end_line, ev)
                continue
            seen_methods.add(stable)
            attrs = self._method_attrs(m, scope, chain, tv, sig)
            rid = self._method_entity(stable, f"{binary}#{m.name}({','.join(sig)})", ev, attrs, owner.rid, sig)
            owner.summary.methods += 1
            self._contains(owner, rid, stable, [ev])
            if self._is_main(m, sig):
                self.result.mains.append(MainMethod(rid, stable, binary, ev, self._application_annotation(owner),
                                                    type_ev, (facts.path, td.header_start, td.header_end)))
        return seen_methods

    def _application_annotation(self, owner: _DeclaringType) -> str | None:
        """The FQN of the last application annotation (``@SpringBootApplication`` …) on the type."""
        scope, chain = owner.scope, owner.chain
        app = None
        for a in owner.td.annotations:
            r = scope.resolve_base(TypeRef(tuple(a.name.split("."))), chain, {})
            fqn = r.name if r is not None else None
            if fqn in self.apps or (r is None and any(
                    f.rsplit(".", 1)[-1] == a.name and f.rsplit(".", 1)[0] in scope.wildcards
                    for f in self.apps)):
                app = fqn or next(f for f in self.apps if f.rsplit(".", 1)[-1] == a.name)
        return app

    def _static_initializer(self, owner: _DeclaringType) -> None:
        """One ``<clinit>`` METHOD for all the type's static initializer blocks."""
        td = owner.td
        if not td.static_init_lines:
            return
        evs = [self._seg(owner.facts, s, e) for s, e in td.static_init_lines]
        stable = self._method_stable(owner.stable, "<clinit>", [])
        rid = self._method_entity(stable, f"{owner.binary}#<clinit>()", evs,
                                  {"decl_kind": "STATIC_INITIALIZER", "modifiers": ["static"],
                                   "annotations": [], "parameters": [], "return_type": "void", "throws": [],
                                   "type_parameters": []}, owner.rid, [])
        self._contains(owner, rid, stable, evs)

    def _declared_fields(self, owner: _DeclaringType) -> set[str]:
        """The declared fields (an interface's implicitly public static final), with the folded value
        of a constant, else the initializer of a static final; the stable ids recorded."""
        facts, scope, td, chain, binary = owner.facts, owner.scope, owner.td, owner.chain, owner.binary
        seen_fields: set[str] = set()
        for f in td.fields:
            stable = f"{owner.stable}.{f.name}"
            ev = self._seg(facts, f.start_line, f.end_line)
            if stable in seen_fields:
                self._duplicate(facts, owner.summary, "field", stable.split("/", 1)[-1], f.start_line, f.end_line, ev)
                continue
            seen_fields.add(stable)
            tv = scope.type_vars_for(chain)
            attrs: dict[str, Any] = {
                "type": scope.resolve(f.type, chain, tv).name, "modifiers": sorted(f.modifiers),
                "annotations": self._ann_json(f.annotations, scope, chain),
            }
            if td.kind in ("INTERFACE", "ANNOTATION"):
                attrs["modifiers"] = sorted(set(f.modifiers) | {"public", "static", "final"})
            folded = self.folder.constant((scope.visible.own_module or "", binary, f.name)) \
                if f.initializer is not None else None
            if folded is not None:
                attrs["constant_value"], attrs["constant_type"] = folded
            elif f.initializer is not None and ("static" in attrs["modifiers"] and "final" in attrs["modifiers"]):
                attrs["initializer"] = f.initializer
            rid = self.rs.entity("FIELD", stable, f"{binary}.{f.name}", [ev], attrs)
            self._contains(owner, rid, stable, [ev])
        return seen_fields

    def _enum_constants(self, owner: _DeclaringType, seen_fields: set[str]) -> None:
        """An enum's constants: FIELD entities with their arguments and the arguments' folded values."""
        facts, scope, chain, binary = owner.facts, owner.scope, owner.chain, owner.binary
        for ec in owner.td.enum_constants:
            stable = f"{owner.stable}.{ec.name}"
            ev = self._seg(facts, ec.start_line, ec.end_line)
            if stable in seen_fields:
                self._duplicate(facts, owner.summary, "enum constant", stable.split("/", 1)[-1], ec.start_line,
                                ec.end_line, ev)
                continue
            seen_fields.add(stable)
            values = []
            for a in ec.args:
                v = self.folder.fold(a, scope, chain)
                values.append({"value": v[0], "type": v[1]} if v is not None else None)
            attrs = {"type": binary, "modifiers": ["final", "public", "static"], "enum_constant": True,
                     "arguments": ec.args, "argument_values": values,
                     "annotations": self._ann_json(ec.annotations, scope, chain)}
            rid = self.rs.entity("FIELD", stable, f"{binary}.{ec.name}", [ev], attrs)
            self._contains(owner, rid, stable, [ev])

    def _synthesized_members(self, owner: _DeclaringType, seen_methods: set[str], seen_fields: set[str]) -> None:
        """The members Lombok, records and javac add (:func:`synthesize`), each ``synthesized_by`` its
        cause; one whose identity is declared already is left out."""
        scope, chain, binary = owner.scope, owner.chain, owner.binary
        for sm in synthesize(owner.td, scope, chain):
            evs = [self._seg(owner.facts, s, e) for s, e in sm.lines]
            tv = scope.type_vars_for(chain)
            if sm.kind == "FIELD":
                stable = f"{owner.stable}.{sm.name}"
                if stable in seen_fields:
                    continue
                seen_fields.add(stable)
                attrs = {"type": scope.resolve(sm.type, chain, tv).name, "modifiers": sorted(sm.modifiers),
                         "annotations": [], "synthesized_by": sm.cause}
                rid = self.rs.entity("FIELD", stable, f"{binary}.{sm.name}", evs, attrs)
            else:
                sig = [scope.resolve(t, chain, tv).name for _, t in sm.params]
                stable = self._method_stable(owner.stable, sm.name, sig)
                if stable in seen_methods:
                    continue
                seen_methods.add(stable)
                attrs = {"decl_kind": "CONSTRUCTOR" if sm.name == "<init>" else "METHOD",
                         "modifiers": sorted(sm.modifiers), "annotations": [],
                         "parameters": [{"name": n, "type": s, "annotations": [], "varargs": False}
                                        for (n, _), s in zip(sm.params, sig, strict=True)],
                         "return_type": scope.resolve(sm.type, chain, tv).name if sm.type else "void",
                         "throws": [], "type_parameters": [], "synthesized_by": sm.cause}
                rid = self._method_entity(stable, f"{binary}#{sm.name}({','.join(sig)})", evs, attrs, owner.rid, sig)
            self._contains(owner, rid, stable, evs)

    def _method_entity(self, stable: str, name: str, ev: str | list[str], attrs: dict[str, Any], type_rid: str,
                       sig: list[str]) -> str:
        evs = [ev] if isinstance(ev, str) else ev
        return self.rs.entity("METHOD", stable, name, evs, attrs, declaring_type=RefTo(type_rid), signature=sig)

    def _method_attrs(self, m: MethodDecl, scope: FileScope, chain: list[int], tv: dict, sig: list[str]) -> dict:
        return {
            "decl_kind": m.decl_kind,
            "modifiers": sorted(m.modifiers),
            "annotations": self._ann_json(m.annotations, scope, chain),
            "parameters": [{"name": p.name, "type": s, "varargs": p.varargs,
                            "annotations": self._ann_json(p.annotations, scope, chain)}
                           for p, s in zip(m.params, sig, strict=True)],
            "return_type": scope.resolve(m.return_type, chain, tv).name if m.return_type else "void",
            "throws": [scope.resolve(t, chain, tv).name for t in m.throws],
            "type_parameters": [p.name for p in m.type_params],
            "has_body": m.has_body,
        }

    @staticmethod
    def _is_main(m: MethodDecl, sig: list[str]) -> bool:
        return (m.name == "main" and m.decl_kind == "METHOD" and "static" in m.modifiers
                and "public" in m.modifiers and sig == ["java.lang.String[]"]
                and m.return_type is not None and m.return_type.parts == ("void",))

    # ------------------------------------------------------------ findings
    def _file_findings(self, facts: FileFacts, scope: FileScope, summary: FileSummary) -> None:
        affected = [self.module_rid]
        if facts.errors:
            ranges = facts.errors[:20]
            evs = [self._seg(facts, s, e) for s, _, e, _, _ in ranges[:5]]
            text = ", ".join(f"{s}:{sc}-{e}:{ec} ({what})" for s, sc, e, ec, what in ranges)
            more = f" and {len(facts.errors) - 20} more" if len(facts.errors) > 20 else ""
            nul = " (the file contains NUL bytes)" if any("\x00" in ln for ln in facts.lines or []) else ""
            affected_types = [rid for rid in summary.type_rids]
            summary.diagnostics.append(self.rs.diagnostic(
                "PARSE_ERROR", facts.path, f"{facts.path}: syntax errors at {text}{more}{nul}; "
                "declarations that parsed are kept", affected + affected_types, evs))
        if facts.orphans:
            evs = [self._seg(facts, line, line) for _, line in facts.orphans[:5]]
            text = ", ".join(f"{what} at line {line}" for what, line in facts.orphans[:20])
            summary.diagnostics.append(self.rs.diagnostic(
                "PARSE_ERROR", facts.path + "|orphans", f"{facts.path}: declarations outside any type were not "
                f"recorded: {text}", affected, evs))
        if facts.lossy:
            summary.diagnostics.append(self.rs.diagnostic(
                "ENCODING_FALLBACK", facts.path, f"{facts.path}: bytes that are valid in no supported encoding "
                "were replaced by U+FFFD", affected, [self._seg(facts, 1, 1)] if facts.lines else []))
        if facts.encoding_doubt:
            lines = [n for n in facts.doubt_lines if n <= facts.line_count][:5] or [1]
            summary.diagnostics.append(self.rs.diagnostic(
                "ENCODING_UNCERTAIN", facts.path, uncertain_message(facts.path, facts.encoding, facts.encoding_basis,
                                                                    facts.encoding_doubt), affected,
                [self._seg(facts, n, n) for n in lines] if facts.lines else []))
        if scope.unresolved:
            names = sorted(scope.unresolved)
            summary.unresolved = names
            line = facts.imports[0].line if facts.imports else 1
            summary.diagnostics.append(self.rs.diagnostic(
                "TYPE_UNRESOLVED", facts.path, f"{facts.path}: types not found in the repository, its imports or "
                f"the JDK: {', '.join(names[:30])}{' …' if len(names) > 30 else ''}; the file is analysed at "
                "SYNTAX_ONLY level", affected + summary.type_rids[:1], [self._seg(facts, line, line)]))
