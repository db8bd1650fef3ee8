"""Per-file Java syntax facts with tree-sitter-java (docs/scanning.md §8): the parse and the declarations.

:func:`extract_file` is a pure function of a file's bytes (plus the module's
declared source encoding): it returns a :class:`FileFacts` of plain,
picklable data — package, imports, every type declaration (named, nested,
local, anonymous and enum-constant bodies), its members, annotations with
arguments, type references *as written* and error ranges. Names are resolved
later, per module, by :mod:`diting.java.names`.

Declarations are found with one tree-sitter query wherever they occur —
also inside error-recovered regions — so what parsed is kept. Expressions are
read by :mod:`diting.java.expressions`, member bodies by :mod:`diting.java.bodies`,
literal values and Unicode escapes by :mod:`diting.java.lexical`.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import tree_sitter as ts
import tree_sitter_java as tsj

from diting.checks import VALIDATE, check_each
from diting.java.bodies import body_facts
from diting.java.branches import BRANCH_QUERY
from diting.java.expressions import annotation, dims_of, expr_json, type_ref
from diting.java.facts import (Annotation, Body, EnumConstant, Expr, FieldDecl, FileFacts, Import, MethodDecl, Param,
                               TypeDecl, TypeParam, TypeRef, expressions)
from diting.java.lexical import translate_unicode_escapes
from diting.java.nodes import end_line_of as _end_line
from diting.java.nodes import line_of as _line
from diting.java.nodes import node_text as _text
from diting.java.nodes import row_line as _row_line
from diting.java.nodes import rows_as_lines
from diting.source.text import DecodedText, decode_bytes, split_lines

LANGUAGE = ts.Language(tsj.language())

TYPE_NODES = ("class_declaration", "interface_declaration", "enum_declaration", "record_declaration",
              "annotation_type_declaration")
METHOD_NODES = ("method_declaration", "constructor_declaration", "compact_constructor_declaration",
                "annotation_type_element_declaration")
FIELD_NODES = ("field_declaration", "constant_declaration")
BODY_NODES = ("class_body", "interface_body", "enum_body", "enum_body_declarations", "annotation_type_body")
TYPE_KIND = {"class_declaration": "CLASS", "interface_declaration": "INTERFACE", "enum_declaration": "ENUM",
             "record_declaration": "RECORD", "annotation_type_declaration": "ANNOTATION"}

_QUERY_TEXT = "\n".join(
    [f"({n}) @type" for n in TYPE_NODES]
    + ["(object_creation_expression (class_body)) @anon", "(enum_constant body: (class_body)) @anon"]
    + [f"({n}) @method" for n in METHOD_NODES]
    + [f"({n}) @field" for n in FIELD_NODES]
    + ["(enum_constant) @enumconst", "(static_initializer) @clinit"]
    + ["(method_invocation) @call", "(object_creation_expression) @new", "(explicit_constructor_invocation) @ctorcall",
       "(method_reference) @ref", "(local_variable_declaration) @local", "(resource) @resource",
       "(enhanced_for_statement) @forvar",
       "(catch_formal_parameter) @catchvar", "(assignment_expression) @assign", "(update_expression) @update",
       "(return_statement) @return", "(lambda_expression) @lambda"]
    + BRANCH_QUERY
)

_parser: ts.Parser | None = None
_query: ts.Query | None = None


def _tools() -> tuple[ts.Parser, ts.Query]:
    global _parser, _query
    if _parser is None:
        _parser = ts.Parser(LANGUAGE)
        _query = ts.Query(LANGUAGE, _QUERY_TEXT)
    assert _query is not None
    return _parser, _query


def _modifiers(node: ts.Node, src: bytes) -> tuple[list[str], list[Annotation]]:
    mods: list[str] = []
    anns: list[Annotation] = []
    for c in node.children:
        if c.type == "modifiers":
            for m in c.children:
                if m.type in ("annotation", "marker_annotation"):
                    anns.append(annotation(m, src))
                elif m.is_named and m.type in ("line_comment", "block_comment"):
                    continue
                else:
                    mods.append(_text(m, src))
    return mods, anns


def _type_params(node: ts.Node | None, src: bytes) -> list[TypeParam]:
    out: list[TypeParam] = []
    if node is None:
        return out
    for tp in node.named_children:
        if tp.type != "type_parameter":
            continue
        name = ""
        bounds: list[TypeRef] = []
        for c in tp.named_children:
            if c.type in ("type_identifier", "identifier") and not name:
                name = _text(c, src)
            elif c.type == "type_bound":
                for b in c.named_children:
                    r = type_ref(b, src)
                    if r is not None:
                        bounds.append(r)
        out.append(TypeParam(name, bounds))
    return out


def _params(node: ts.Node | None, src: bytes) -> list[Param]:
    out: list[Param] = []
    if node is None:
        return out
    for p in node.named_children:
        if p.type == "formal_parameter":
            _, anns = _modifiers(p, src)
            tr = type_ref(p.child_by_field_name("type"), src, dims_of(p.child_by_field_name("dimensions"), src))
            nm = p.child_by_field_name("name")
            out.append(Param(_text(nm, src) if nm is not None else "", tr or TypeRef(("?",)), anns))
        elif p.type == "spread_parameter":
            _, anns = _modifiers(p, src)
            tnode = None
            name = ""
            for c in p.named_children:
                if c.type == "variable_declarator":
                    nm = c.child_by_field_name("name")
                    name = _text(nm, src) if nm is not None else ""
                elif c.type not in ("modifiers",) and tnode is None:
                    tnode = c
            tr = type_ref(tnode, src) or TypeRef(("?",))
            out.append(Param(name, TypeRef(tr.parts, tr.dims + 1, tr.primitive), anns, True))
    return out


def _type_list(node: ts.Node | None, src: bytes) -> list[TypeRef]:
    out: list[TypeRef] = []
    if node is None:
        return out
    for c in node.named_children:
        if c.type == "type_list":
            out.extend(_type_list(c, src))
            continue
        r = type_ref(c, src)
        if r is not None:
            out.append(r)
    return out


# ---------------------------------------------------------------- the pass


#: types nested deeper than this are not recorded (binary names would grow without bound)
MAX_TYPE_NESTING = 64
_SKIPPED = -1


def _enclosing_type(node: ts.Node, type_index: dict[int, int]) -> int | None:
    """Index of the nearest enclosing type declaration of ``node`` (itself excluded);
    ``_SKIPPED`` when that type was not recorded."""
    cur = node.parent
    while cur is not None:
        idx = type_index.get(cur.id)
        if idx is not None:
            return idx
        cur = cur.parent
    return None


def _member_owner(node: ts.Node, type_index: dict[int, int]) -> int | None:
    """The type whose body directly declares ``node`` (a member), or None."""
    return _enclosing_type(node, type_index)


def _error_ranges(root: ts.Node) -> list[tuple[int, int, int, int, str]]:
    out: list[tuple[int, int, int, int, str]] = []
    if not root.has_error:
        return out
    stack = [root]
    while stack and len(out) < 200:
        n = stack.pop()
        if n.is_error or n.is_missing:
            what = "missing " + n.type if n.is_missing else "unexpected syntax"
            out.append((_row_line(n.start_point[0]), n.start_point[1] + 1, _row_line(n.end_point[0]),
                        n.end_point[1] + 1, what))
            if n.is_missing:
                continue
        if n.has_error:
            stack.extend(reversed(n.children))
    out.sort()
    return out


def _summaries(td: TypeDecl) -> None:
    """Getter → field and constructor parameter → field maps (what enum and constant folding reads)."""
    fields = {f.name for f in td.fields}
    for m in td.methods:
        b = m.body
        if b is None:
            continue
        if m.decl_kind == "METHOD" and not m.params and len(b.returns) == 1:
            r = b.returns[0]
            name = None
            if r.get("kind") == "name":
                name = r["parts"][0]
            elif r.get("kind") == "field" and len(r["parts"]) == 2 and r["parts"][0] == "this":
                name = r["parts"][1]
            if name in fields:
                td.getter_fields[m.name] = name
        if m.decl_kind in ("CONSTRUCTOR", "COMPACT_CONSTRUCTOR"):
            params = {p.name: i for i, p in enumerate(m.params)}
            mapping = {}
            for target, value in b.assignments:
                f = target[5:] if target.startswith("this.") else target
                if f in fields and value.get("kind") == "name" and value["parts"][0] in params:
                    if not target.startswith("this.") and f in params:
                        continue  # ``f = f`` assigns the parameter to itself
                    mapping[f] = params[value["parts"][0]]
            td.ctor_field_params.append((len(m.params), mapping))


def extract_file(path: str, data: bytes, declared_encoding: str | None = None,
                 call_detail: Collection[str] | None = None) -> FileFacts:
    """Parse one Java file and return its :class:`FileFacts`. Never raises on bad input.

    The parser sees the text after Unicode-escape translation; evidence lines stay the file's own.
    ``call_detail``: the call names whose arguments matter; other calls keep name, receiver and
    arity only. None (what the scan passes: call-site resolution types every call's arguments)
    keeps every call's arguments."""
    decoded: DecodedText = decode_bytes(data, declared_encoding)
    text, row_lines = translate_unicode_escapes(decoded.text)
    with rows_as_lines(row_lines):
        facts = _extract(path, decoded, text.encode("utf-8"), call_detail)
    if VALIDATE:
        check_expressions(facts)
    return facts


def check_expressions(facts: FileFacts) -> None:
    """Check every expression of ``facts`` against :data:`~diting.java.facts.Expr` (tests and
    ``DITING_VALIDATE=1``); raises :class:`~diting.checks.ShapeError` naming the first that fails."""
    check_each(Expr, expressions(facts), facts.path)


def _extract(path: str, decoded: DecodedText, src: bytes, call_detail: Collection[str] | None) -> FileFacts:
    """The facts of one file: ``src`` is its text after Unicode-escape translation, as UTF-8."""
    parser, query = _tools()
    tree = parser.parse(src)
    root = tree.root_node
    lines = split_lines(decoded.text)
    package, imports = _package_and_imports(root, src)

    # capture lists in document order: the order the query engine reports is not guaranteed stable
    caps = {k: sorted(v, key=lambda n: (n.start_byte, -n.end_byte)) for k, v in
            ts.QueryCursor(query).captures(root).items()}
    type_nodes = sorted(caps.get("type", []) + caps.get("anon", []), key=lambda n: (n.start_byte, -n.end_byte))
    orphans: list[tuple[str, int]] = []
    types, type_index = _type_decls(type_nodes, src, orphans)
    member_spans = _method_decls(caps.get("method", []), types, type_index, src, orphans)
    _field_decls(caps.get("field", []), types, type_index, src, orphans)
    _enum_constant_decls(caps.get("enumconst", []), types, type_index, src, orphans)
    members, member_blocks = _member_bodies(caps.get("clinit", []), types, type_index, member_spans)
    body_facts(caps, members, src, call_detail, member_blocks)
    for td in types:
        _summaries(td)

    for td in types:
        td.methods.sort(key=lambda m: m.start_byte)
        td.fields.sort(key=lambda f: f.start_byte)
        td.enum_constants.sort(key=lambda e: e.start_byte)

    return FileFacts(
        path=path, encoding=decoded.encoding, lossy=decoded.lossy, bom=decoded.bom, line_count=len(lines),
        package=package, imports=imports, types=types, errors=_error_ranges(root), orphans=sorted(orphans),
        declared_type_count=len(type_nodes), declared_method_count=len(caps.get("method", [])), lines=lines,
        encoding_basis=decoded.basis, encoding_doubt=decoded.doubt, doubt_lines=decoded.doubt_lines,
    )


def _package_and_imports(root: ts.Node, src: bytes) -> tuple[str, list[Import]]:
    """The file's package name ("" in the default package) and its imports."""
    package = ""
    imports: list[Import] = []
    for c in root.named_children:
        if c.type == "package_declaration":
            for n in c.named_children:
                if n.type in ("scoped_identifier", "identifier"):
                    package = _text(n, src).replace(" ", "")
        elif c.type == "import_declaration":
            static = any(ch.type == "static" for ch in c.children)
            wildcard = any(ch.type == "asterisk" for ch in c.children)
            name = ""
            for n in c.named_children:
                if n.type in ("scoped_identifier", "identifier"):
                    name = _text(n, src).replace(" ", "")
            if name:
                imports.append(Import(name, static, wildcard, _line(c)))
    return package, imports


def _type_decls(type_nodes: list[ts.Node], src: bytes, orphans: list[tuple[str, int]]
                ) -> tuple[list[TypeDecl], dict[int, int]]:
    """Every type declaration of ``type_nodes`` (document order: outer before inner), and each
    recorded type's index by node id (``_SKIPPED`` for those nested too deep to record)."""
    types: list[TypeDecl] = []
    type_index: dict[int, int] = {}
    counters: dict[tuple[int, str], int] = {}
    depth: list[int] = []
    for node in type_nodes:
        outer = _enclosing_type(node, type_index)
        if outer == _SKIPPED or (outer is not None and depth[outer] >= MAX_TYPE_NESTING):
            if outer != _SKIPPED:
                orphans.append((f"type nested deeper than {MAX_TYPE_NESTING} levels", _line(node)))
            type_index[node.id] = _SKIPPED
            continue
        if node.type in ("object_creation_expression", "enum_constant"):
            if outer is None:
                orphans.append(("anonymous class", _line(node)))
                continue
            td = _anonymous_type(node, types[outer], outer, counters, src)
        else:
            td = _named_type(node, types, outer, counters, src)
        if td.nesting in ("LOCAL", "ANONYMOUS"):
            td.method_type_params = _method_type_params(node, type_index, src)
        if node.type == "record_declaration":
            td.record_components = _params(node.child_by_field_name("parameters"), src)
        type_index[node.id] = len(types)
        depth.append(0 if outer is None else depth[outer] + 1)
        types.append(td)
    return types, type_index


def _anonymous_type(node: ts.Node, outer_type: TypeDecl, outer: int, counters: dict[tuple[int, str], int],
                    src: bytes) -> TypeDecl:
    """An anonymous class (``new T() { … }``) or an enum constant's body, inside type ``outer``."""
    key = (outer, "")
    counters[key] = counters.get(key, 0) + 1
    body = next((c for c in node.named_children if c.type == "class_body"), None) \
        if node.type == "object_creation_expression" else node.child_by_field_name("body")
    # an enum constant's body is an anonymous subclass of its enum
    base = type_ref(node.child_by_field_name("type"), src) if node.type == "object_creation_expression" \
        else TypeRef((outer_type.simple_name,)) if outer_type.simple_name else None
    return TypeDecl("CLASS", "", f"{outer_type.binary_suffix}${counters[key]}", outer, "ANONYMOUS", [], [], [],
                    None, [], base, _line(node), _header_end(node, body), _end_line(node), node.start_byte)


def _named_type(node: ts.Node, types: list[TypeDecl], outer: int | None, counters: dict[tuple[int, str], int],
                src: bytes) -> TypeDecl:
    """A class, interface, enum, record or annotation type declaration: top-level, member or local."""
    name_node = node.child_by_field_name("name")
    simple = _text(name_node, src) if name_node is not None else "?"
    parent = node.parent
    if outer is None:
        binary = simple
        nesting = "TOP"
    elif parent is not None and parent.type in BODY_NODES:
        binary = f"{types[outer].binary_suffix}${simple}"
        nesting = "MEMBER"
    else:
        key = (outer, simple)
        counters[key] = counters.get(key, 0) + 1
        binary = f"{types[outer].binary_suffix}${counters[key]}{simple}"
        nesting = "LOCAL"
    mods, anns = _modifiers(node, src)
    tparams = _type_params(node.child_by_field_name("type_parameters"), src)
    body = node.child_by_field_name("body")
    sc = node.child_by_field_name("superclass")
    superclass = None
    if sc is not None:
        inner = [c for c in sc.named_children]
        superclass = type_ref(inner[0], src) if inner else None
    interfaces = _type_list(node.child_by_field_name("interfaces"), src)
    if node.type == "interface_declaration":
        for c in node.named_children:
            if c.type == "extends_interfaces":
                interfaces.extend(_type_list(c, src))
    return TypeDecl(TYPE_KIND[node.type], simple, binary, outer, nesting, mods, anns, tparams, superclass,
                    interfaces, None, _line(node), _header_end(node, body), _end_line(node), node.start_byte)


def _header_end(node: ts.Node, body: ts.Node | None) -> int:
    """The line a type's header ends on: where its body opens."""
    return _line(body) if body is not None else _end_line(node)


def _method_type_params(node: ts.Node, type_index: dict[int, int], src: bytes) -> list[TypeParam]:
    """The type parameters of the method or constructor a local or anonymous class is declared in."""
    cur = node.parent
    while cur is not None and cur.id not in type_index:
        if cur.type in ("method_declaration", "constructor_declaration"):
            return _type_params(cur.child_by_field_name("type_parameters"), src)
        cur = cur.parent
    return []


_DECL_KIND = {"method_declaration": "METHOD", "constructor_declaration": "CONSTRUCTOR",
              "compact_constructor_declaration": "COMPACT_CONSTRUCTOR",
              "annotation_type_element_declaration": "ANNOTATION_ELEMENT"}


def _method_decls(nodes: list[ts.Node], types: list[TypeDecl], type_index: dict[int, int], src: bytes,
                  orphans: list[tuple[str, int]]) -> dict[tuple[int, int], tuple[MethodDecl, ts.Node]]:
    """Methods, constructors and annotation elements, added to their types; returns each with its node
    by byte span."""
    member_spans: dict[tuple[int, int], tuple[MethodDecl, ts.Node]] = {}
    for node in nodes:
        owner = _member_owner(node, type_index)
        if owner == _SKIPPED:
            continue
        if owner is None:
            orphans.append(("method", _line(node)))
            continue
        mods, anns = _modifiers(node, src)
        t = node.type
        name_node = node.child_by_field_name("name")
        if t in ("constructor_declaration", "compact_constructor_declaration"):
            name = "<init>"
        else:
            name = _text(name_node, src) if name_node is not None else "?"
        decl_kind = _DECL_KIND[t]
        if t == "compact_constructor_declaration":
            params = list(types[owner].record_components)
        else:
            params = _params(node.child_by_field_name("parameters"), src)
        ret = None
        if t in ("method_declaration", "annotation_type_element_declaration"):
            ret = type_ref(node.child_by_field_name("type"), src, dims_of(node.child_by_field_name("dimensions"), src))
        throws: list[TypeRef] = []
        for c in node.named_children:
            if c.type == "throws":
                throws = _type_list(c, src)
        md = MethodDecl(name, decl_kind, mods, anns, _type_params(node.child_by_field_name("type_parameters"), src),
                        params, ret, throws, _line(node), _end_line(node),
                        node.child_by_field_name("body") is not None, node.start_byte,
                        Body(keep_returns=not params and decl_kind == "METHOD",
                             keep_assignments=decl_kind in ("CONSTRUCTOR", "COMPACT_CONSTRUCTOR")))
        if t == "annotation_type_element_declaration":
            dv = node.child_by_field_name("value")
            md.default = expr_json(dv, src) if dv is not None else None
        types[owner].methods.append(md)
        member_spans[(node.start_byte, node.end_byte)] = (md, node)
    return member_spans


def _field_decls(nodes: list[ts.Node], types: list[TypeDecl], type_index: dict[int, int], src: bytes,
                 orphans: list[tuple[str, int]]) -> None:
    """Fields (one per declarator), added to their types."""
    for node in nodes:
        owner = _member_owner(node, type_index)
        if owner == _SKIPPED:
            continue
        if owner is None:
            orphans.append(("field", _line(node)))
            continue
        mods, anns = _modifiers(node, src)
        base_type = node.child_by_field_name("type")
        for decl in node.children_by_field_name("declarator"):
            nm = decl.child_by_field_name("name")
            tr = type_ref(base_type, src, dims_of(decl.child_by_field_name("dimensions"), src)) or TypeRef(("?",))
            value = decl.child_by_field_name("value")
            types[owner].fields.append(FieldDecl(_text(nm, src) if nm is not None else "?", tr, mods, anns,
                                                 expr_json(value, src) if value is not None else None,
                                                 _line(node), _end_line(node), decl.start_byte))


def _enum_constant_decls(nodes: list[ts.Node], types: list[TypeDecl], type_index: dict[int, int], src: bytes,
                         orphans: list[tuple[str, int]]) -> None:
    """Enum constants with their arguments, added to their enums."""
    for node in nodes:
        owner = _member_owner(node, type_index)
        if owner == _SKIPPED:
            continue
        if owner is None or types[owner].kind != "ENUM":
            # an enum constant's own body is a type; its owner is the enum around it
            cur = node.parent
            owner = None
            while cur is not None:
                idx = type_index.get(cur.id)
                if idx is not None and idx >= 0 and types[idx].kind == "ENUM" and types[idx].nesting != "ANONYMOUS":
                    owner = idx
                    break
                cur = cur.parent
            if owner is None:
                orphans.append(("enum constant", _line(node)))
                continue
        nm = node.child_by_field_name("name")
        args_node = node.child_by_field_name("arguments")
        args = [j for a in args_node.named_children if (j := expr_json(a, src)) is not None] \
            if args_node is not None else []
        _, anns = _modifiers(node, src)
        types[owner].enum_constants.append(EnumConstant(_text(nm, src) if nm is not None else "?", args, anns,
                                                        _line(node), _end_line(node), node.start_byte))


def _member_bodies(clinits: list[ts.Node], types: list[TypeDecl], type_index: dict[int, int],
                   member_spans: dict[tuple[int, int], tuple[MethodDecl, ts.Node]]
                   ) -> tuple[list[tuple[int, int, Body]], dict[int, ts.Node]]:
    """The bodies calls and locals are given to, by byte span (static initializers share their type's
    one body), and each method's block by its body's id."""
    members: list[tuple[int, int, Body]] = []
    for node in clinits:
        owner = _member_owner(node, type_index)
        if owner is not None and owner != _SKIPPED:
            types[owner].static_init_lines.append((_line(node), _end_line(node)))
            if types[owner].clinit_body is None:
                types[owner].clinit_body = Body()
            members.append((node.start_byte, node.end_byte, types[owner].clinit_body))
    member_blocks: dict[int, ts.Node] = {}
    for (start, end), (md, node) in member_spans.items():
        members.append((start, end, md.body))
        block = node.child_by_field_name("body")
        if block is not None:
            member_blocks[id(md.body)] = block
    return members, member_blocks


#: a field initializer a skeleton does not keep (there is one; its expression is not needed across files)
_ELIDED: dict[str, Any] = {"kind": "other", "text": "…"}


def skeleton(facts: FileFacts) -> FileFacts:
    """What cross-file work needs of a file: package, imports, types with their annotations,
    member signatures, fields (initializers only of constants), enum constants, getter and
    constructor summaries, error summary — no method bodies or lines. Name resolution,
    receiver typing, supertypes and constant folding work on skeletons of every file, while a
    module's records are built from its own files' full facts."""
    types = []
    for td in facts.types:
        # initializers kept of constants and final fields (Lombok's required-args constructors and
        # instance constants read them); others only say that there is one
        fields = [f if f.initializer is None or td.kind in ("INTERFACE", "ANNOTATION") or "final" in f.modifiers
                  else FieldDecl(f.name, f.type, f.modifiers, f.annotations, _ELIDED, f.start_line, f.end_line,
                                 f.start_byte) for f in td.fields]
        methods = [MethodDecl(m.name, m.decl_kind, m.modifiers, m.annotations, m.type_params, m.params,
                              m.return_type, m.throws, m.start_line, m.end_line, m.has_body, m.start_byte, None,
                              m.default)
                   for m in td.methods]
        types.append(TypeDecl(td.kind, td.simple_name, td.binary_suffix, td.outer, td.nesting, td.modifiers,
                              td.annotations, td.type_params, td.superclass, td.interfaces, td.anonymous_base,
                              td.header_start, td.header_end, td.end_line, td.start_byte, methods, fields,
                              td.enum_constants, td.record_components, td.static_init_lines, td.method_type_params,
                              None, td.getter_fields, td.ctor_field_params))
    return FileFacts(facts.path, facts.encoding, facts.lossy, facts.bom, facts.line_count, facts.package,
                     facts.imports, types, facts.errors, facts.orphans, facts.declared_type_count,
                     facts.declared_method_count, None, facts.encoding_basis, facts.encoding_doubt, facts.doubt_lines)
