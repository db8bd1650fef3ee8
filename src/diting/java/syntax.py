"""Per-file Java syntax facts with tree-sitter-java (docs/scanning.md §8).

:func:`extract_file` is a pure function of a file's bytes (plus the module's
declared source encoding): it returns a :class:`FileFacts` of plain,
picklable data — package, imports, every type declaration (named, nested,
local, anonymous and enum-constant bodies), its members, annotations with
arguments, type references *as written* and error ranges. Names are resolved
later, per module, by :mod:`diting.java.names`.

Declarations are found with one tree-sitter query wherever they occur —
also inside error-recovered regions — so what parsed is kept.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Collection
from typing import Any

import tree_sitter as ts
import tree_sitter_java as tsj

from diting.java.branches import BRANCH_QUERY, branch_facts
from diting.checks import VALIDATE, ShapeError, check_shape
from diting.java.facts import (TypeRef, Annotation, Param, TypeParam, CallSite, LocalVar, Body, MethodDecl, FieldDecl, EnumConstant, TypeDecl, Import, FileFacts, Expr, expressions)
from diting.java.nodes import Nesting, rows_as_lines
from diting.java.nodes import end_line_of as _end_line
from diting.java.nodes import line_of as _line
from diting.java.nodes import row_line as _row_line
from diting.source.text import DecodedText, decode_bytes, has_surrogates, scrub_surrogates, split_lines

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

#: at most this many return expressions and field assignments are kept per member
MAX_BODY_NOTES = 16

#: expressions deeper than this are kept as text only (hostile input: deep nesting)
MAX_EXPR_DEPTH = 64
#: expression text kept at most this long in facts
MAX_EXPR_TEXT = 400

_parser: ts.Parser | None = None
_query: ts.Query | None = None


def _tools() -> tuple[ts.Parser, ts.Query]:
    global _parser, _query
    if _parser is None:
        _parser = ts.Parser(LANGUAGE)
        _query = ts.Query(LANGUAGE, _QUERY_TEXT)
    assert _query is not None
    return _parser, _query


# ---------------------------------------------------------------- data


# ---------------------------------------------------------------- helpers


def _text(node: ts.Node, src: bytes) -> str:
    return src[node.start_byte:node.end_byte].decode("utf-8", "replace")


def _snippet(node: ts.Node, src: bytes, limit: int = 400) -> str:
    """At most ``limit`` characters of a node's text, without decoding the rest of it."""
    start = node.start_byte
    return src[start:min(node.end_byte, start + limit * 4)].decode("utf-8", "ignore")[:limit]


def type_ref(node: ts.Node | None, src: bytes, extra_dims: int = 0) -> TypeRef | None:
    """The erased type reference of a type node (generic arguments dropped)."""
    if node is None:
        return None
    dims = extra_dims
    while node.type == "array_type":
        dn = node.child_by_field_name("dimensions")
        dims += _text(dn, src).count("[") if dn is not None else 1
        node = node.child_by_field_name("element")
        if node is None:
            return None
    t = node.type
    if t in ("integral_type", "floating_point_type", "boolean_type", "void_type"):
        return TypeRef((_text(node, src).strip(),), dims, True)
    parts = _name_parts(node, src)
    if not parts:
        return TypeRef(("?" + _snippet(node, src, 60),), dims, False)
    return TypeRef(tuple(parts), dims, False, _type_args(node, src))


def _type_args(node: ts.Node, src: bytes) -> tuple[TypeRef, ...]:
    """Type arguments of the outermost generic part of a type (one level deep)."""
    generic = node if node.type == "generic_type" else None
    if generic is None and node.type == "scoped_type_identifier":
        last = node.named_children[-1] if node.named_children else None
        generic = last if last is not None and last.type == "generic_type" else None
    if generic is None:
        return ()
    out = []
    for c in generic.named_children:
        if c.type == "type_arguments":
            for a in c.named_children:
                if a.type == "wildcard":
                    bound = [x for x in a.named_children if x.type not in ("super", "extends")]
                    a = bound[-1] if bound else None
                r = type_ref(a, src) if a is not None and a.type not in _COMMENTS else None
                if r is not None:
                    out.append(TypeRef(r.parts, r.dims, r.primitive))
    return tuple(out)


def _name_parts(node: ts.Node, src: bytes) -> list[str]:
    t = node.type
    if t == "type_identifier" or t == "identifier":
        return [_text(node, src)]
    if t == "generic_type":
        for c in node.named_children:
            if c.type in ("type_identifier", "scoped_type_identifier"):
                return _name_parts(c, src)
        return []
    if t in ("scoped_type_identifier", "scoped_identifier"):
        out: list[str] = []
        for c in node.named_children:
            if c.type in ("type_identifier", "identifier", "scoped_type_identifier", "generic_type",
                          "scoped_identifier"):
                out.extend(_name_parts(c, src))
        return out
    if t == "annotated_type":
        for c in node.named_children:
            if c.type not in ("annotation", "marker_annotation"):
                return _name_parts(c, src)
    return []


def _dims_of(node: ts.Node | None, src: bytes) -> int:
    return _text(node, src).count("[") if node is not None else 0


# ---------------------------------------------------------------- expressions

_ESCAPES = {"b": "\b", "t": "\t", "n": "\n", "f": "\f", "r": "\r", "s": " ", '"': '"', "'": "'", "\\": "\\"}


def unescape_java(body: str) -> str | None:
    """Java string/char literal body → value; None on an invalid escape."""
    out: list[str] = []
    i, n = 0, len(body)
    while i < n:
        ch = body[i]
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        i += 1
        if i >= n:
            return None
        e = body[i]
        if e in _ESCAPES:
            out.append(_ESCAPES[e])
            i += 1
        elif e == "u":
            while i < n and body[i] == "u":
                i += 1
            hexd = body[i:i + 4]
            if len(hexd) != 4:
                return None
            try:
                out.append(chr(int(hexd, 16)))
            except ValueError:
                return None
            i += 4
        elif e in "01234567":
            j = i
            limit = 3 if e in "0123" else 2
            while j < n and j - i < limit and body[j] in "01234567":
                j += 1
            out.append(chr(int(body[i:j], 8)))
            i = j
        elif e == "\n":  # line continuation in text blocks
            i += 1
        else:
            return None
    text = "".join(out)
    if has_surrogates(text):
        joined = scrub_surrogates(text)
        return None if "\ufffd" in joined and "\ufffd" not in text else joined
    return text


def _text_block(raw: str) -> str | None:
    """Value of a Java text block (``\"\"\"`` … ``\"\"\"``), indentation stripped (JLS 3.10.6)."""
    inner = raw[3:-3]
    nl = inner.find("\n")
    if nl < 0:
        return None
    content = inner[nl + 1:]
    lines = content.replace("\r\n", "\n").split("\n")  # line terminators read as LF (JLS 3.10.6)
    significant = [ln for ln in lines if ln.strip()] + [lines[-1]]
    indent = min((len(ln) - len(ln.lstrip(" \t")) for ln in significant), default=0)
    stripped = [ln[indent:].rstrip(" \t") for ln in lines]
    return unescape_java("\n".join(stripped))


def _int_value(text: str) -> str | None:
    """Value of an integer literal (JLS §3.10.1): hex, octal and binary literals up to the
    type's width in two's complement, decimals up to its maximum; None when out of range."""
    is_long = text[-1:] in "lL"
    t = text.replace("_", "").rstrip("lL")
    bits = 64 if is_long else 32
    try:
        if t.lower().startswith(("0x", "0b")) or (len(t) > 1 and t.startswith("0")):
            base, digits = (16, t[2:]) if t.lower().startswith("0x") else (2, t[2:]) if t.lower().startswith("0b") \
                else (8, t[1:])
            v = int(digits, base)
            if v >= 1 << bits:
                return None
            return str(v - (1 << bits) if v >= 1 << (bits - 1) else v)
        v = int(t)
        # 2147483648 is legal only as the operand of unary minus; folding keeps it and wraps
        return str(v) if v <= 1 << (bits - 1) else None
    except ValueError:
        return None


def expr_json(node: ts.Node | None, src: bytes, depth: int = 0,
              callrefs: dict[int, int] | None = None) -> dict[str, Any] | None:
    """A small JSON form of an expression, enough for constant folding and rules.

    Kinds: ``str``/``char``/``int``/``long``/``bool``/``null`` (with ``value``),
    ``float`` (``text`` only — never a float value), ``name``, ``field``
    (``parts``), ``concat`` (``items``), ``array`` (``items``), ``class``
    (``type`` parts), ``annotation`` (``name``, ``args``), ``call``
    (``target`` text, ``name``, ``args``), ``unary`` (``op``, ``operand``),
    ``binary`` (integer ``op`` other than ``+``, ``left``, ``right``),
    ``cond``, ``this``, ``super``, ``new`` (``type``, ``args``), ``cast``
    (``type``, ``value``), ``lambda``, ``ref`` (method reference), ``callref``
    (``ordinal`` of another call of the same member, inside bodies), ``other``
    (``text``). Depth is capped at :data:`MAX_EXPR_DEPTH`.
    """
    if node is None:
        return None
    if callrefs is not None:
        ordinal = callrefs.get(node.id)
        if ordinal is not None:  # a call of the same member: referenced, not repeated
            return {"kind": "callref", "ordinal": ordinal}
    if depth > MAX_EXPR_DEPTH:
        return {"kind": "other", "text": _snippet(node, src, MAX_EXPR_TEXT), "truncated": True}
    t = node.type
    if t == "parenthesized_expression":
        inner = node.named_children
        return expr_json(inner[0], src, depth + 1, callrefs) if inner else None
    if t == "string_literal":
        raw = _text(node, src)
        if raw.startswith('"""'):
            val = _text_block(raw)
        else:
            val = unescape_java(raw[1:-1])
        return {"kind": "str", "value": val} if val is not None else {"kind": "other", "text": raw[:MAX_EXPR_TEXT]}
    if t == "character_literal":
        val = unescape_java(_text(node, src)[1:-1])
        return {"kind": "char", "value": val} if val is not None and len(val) == 1 else {
            "kind": "other", "text": _text(node, src)}
    if t in ("decimal_integer_literal", "hex_integer_literal", "octal_integer_literal", "binary_integer_literal"):
        raw = _text(node, src)
        val = _int_value(raw)
        kind = "long" if raw[-1:] in "lL" else "int"
        return {"kind": kind, "value": val} if val is not None else {"kind": "other", "text": raw}
    if t in ("decimal_floating_point_literal", "hex_floating_point_literal"):
        return {"kind": "float", "text": _text(node, src)}
    if t in ("true", "false"):
        return {"kind": "bool", "value": t}
    if t == "null_literal":
        return {"kind": "null"}
    if t == "identifier":
        return {"kind": "name", "parts": [_text(node, src)]}
    if t in ("field_access", "scoped_identifier"):
        parts = _dotted(node, src)
        if parts is not None:
            return {"kind": "field", "parts": parts}
        return {"kind": "other", "text": _snippet(node, src, MAX_EXPR_TEXT)}
    if t == "binary_expression" and _op(node, src) == "+":
        items: list[dict[str, Any]] = []
        stack = [node]
        # flatten left-deep '+' chains iteratively (long SQL concatenations)
        operands: list[ts.Node] = []
        while stack:
            cur = stack.pop()
            if cur.type == "binary_expression" and _op(cur, src) == "+":
                right = cur.child_by_field_name("right")
                left = cur.child_by_field_name("left")
                if right is not None:
                    stack.append(right)
                if left is not None:
                    stack.append(left)
            else:
                operands.append(cur)
        for o in operands:
            j = expr_json(o, src, depth + 1, callrefs)
            items.append(j if j is not None else {"kind": "other", "text": ""})
        return {"kind": "concat", "items": items}
    if t == "binary_expression" and _op(node, src) in _ARITH:
        return {"kind": "binary", "op": _op(node, src),
                "left": expr_json(node.child_by_field_name("left"), src, depth + 1, callrefs),
                "right": expr_json(node.child_by_field_name("right"), src, depth + 1, callrefs)}
    if t in ("array_initializer", "element_value_array_initializer"):
        return {"kind": "array", "items": [j for c in node.named_children
                                           if (j := expr_json(c, src, depth + 1, callrefs)) is not None]}
    if t == "class_literal":
        tn = node.named_children[0] if node.named_children else None
        tr = type_ref(tn, src)
        return {"kind": "class", "type": list(tr.parts) if tr else [], "dims": tr.dims if tr else 0}
    if t in ("annotation", "marker_annotation"):
        a = annotation(node, src, depth + 1)
        return {"kind": "annotation", "name": a.name, "args": a.args}
    if t == "unary_expression":
        operand = node.child_by_field_name("operand")
        op = node.child_by_field_name("operator")
        return {"kind": "unary", "op": _text(op, src) if op is not None else "?",
                "operand": expr_json(operand, src, depth + 1, callrefs)}
    if t == "method_invocation":
        obj = node.child_by_field_name("object")
        name = node.child_by_field_name("name")
        args = node.child_by_field_name("arguments")
        return {"kind": "call", "target": _snippet(obj, src, MAX_EXPR_TEXT) if obj is not None else None,
                "target_expr": expr_json(obj, src, depth + 1, callrefs) if obj is not None else None,
                "name": _text(name, src) if name is not None else "",
                "args": [expr_json(a, src, depth + 1, callrefs) for a in _arg_nodes(args)]}
    if t == "ternary_expression":
        return {"kind": "cond", "text": _snippet(node, src, MAX_EXPR_TEXT)}
    if t == "this":
        return {"kind": "this"}
    if t == "super":
        return {"kind": "super"}
    if t == "object_creation_expression":
        tr = type_ref(node.child_by_field_name("type"), src)
        args = node.child_by_field_name("arguments")
        return {"kind": "new", "type": list(tr.parts) if tr else [], "text": _snippet(node, src, MAX_EXPR_TEXT),
                "args": [expr_json(a, src, depth + 1, callrefs) for a in _arg_nodes(args)]}
    if t == "cast_expression":
        tr = type_ref(node.child_by_field_name("type"), src)
        return {"kind": "cast", "type": list(tr.parts) if tr else [],
                "value": expr_json(node.child_by_field_name("value"), src, depth + 1, callrefs)}
    if t == "lambda_expression":
        return {"kind": "lambda", "text": _snippet(node, src, 80)}
    if t == "method_reference":
        return {"kind": "ref", "text": _snippet(node, src, MAX_EXPR_TEXT)}
    return {"kind": "other", "text": _snippet(node, src, MAX_EXPR_TEXT)}


_COMMENTS = ("line_comment", "block_comment", "comment")


def _arg_nodes(args: ts.Node | None) -> list[ts.Node]:
    """Argument expressions of an ``argument_list`` (comments dropped)."""
    return [a for a in args.named_children if a.type not in _COMMENTS] if args is not None else []


_ARITH = ("-", "*", "/", "%", "<<", ">>", "&", "|", "^")


def _op(node: ts.Node, src: bytes) -> str:
    op = node.child_by_field_name("operator")
    return _text(op, src) if op is not None else ""


def _dotted(node: ts.Node, src: bytes) -> list[str] | None:
    out: list[str] = []
    cur: ts.Node | None = node
    while cur is not None:
        if cur.type == "identifier":
            out.append(_text(cur, src))
            break
        if cur.type == "field_access":
            f = cur.child_by_field_name("field")
            out.append(_text(f, src) if f is not None else "?")
            cur = cur.child_by_field_name("object")
        elif cur.type == "scoped_identifier":
            nm = cur.child_by_field_name("name")
            out.append(_text(nm, src) if nm is not None else "?")
            cur = cur.child_by_field_name("scope")
        elif cur.type == "this":
            out.append("this")
            break
        else:
            return None
    return list(reversed(out))


def annotation(node: ts.Node, src: bytes, depth: int = 0) -> Annotation:
    """An ``annotation``/``marker_annotation`` node as :class:`Annotation`."""
    name_node = node.child_by_field_name("name")
    name = _text(name_node, src) if name_node is not None else "?"
    args: dict[str, Any] = {}
    arg_list = node.child_by_field_name("arguments")
    if arg_list is not None:
        for c in arg_list.named_children:
            if c.type == "element_value_pair":
                k = c.child_by_field_name("key")
                v = c.child_by_field_name("value")
                args[_text(k, src) if k is not None else "value"] = expr_json(v, src, depth + 1)
            elif c.type not in ("comment", "line_comment", "block_comment"):
                args["value"] = expr_json(c, src, depth + 1)
    return Annotation(name, args, _line(node))


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
            tr = type_ref(p.child_by_field_name("type"), src, _dims_of(p.child_by_field_name("dimensions"), src))
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


_UNICODE_ESCAPE = re.compile(r"(?<!\\)((?:\\\\)*)\\u+([0-9a-fA-F]{4})")
#: control characters an escape is translated to: line terminators (the parser's rows are mapped back
#: to the file's lines) and the two other white-space characters (JLS §3.6)
_TRANSLATED_CONTROLS = {"\n": "\n", "\r": "\n", "\t": "\t", "\f": "\f"}


def translate_unicode_escapes(text: str) -> tuple[str, list[int] | None]:
    """Java's first translation step (JLS §3.3): ``\\uXXXX`` escapes become characters before
    lexing, so the parser reads what javac reads. A backslash preceded by an odd number of
    backslashes starts no escape, and a backslash an escape makes (``\\u005c``) starts none either.

    Returns the translated text and, when an escape was a line terminator (``\\u000a``,
    ``\\u000d``: it ends a ``//`` comment, and what follows is code javac compiles), the file line
    of each row of the translated text; else None (rows are lines). A line terminator becomes LF,
    tab and form feed themselves; other control characters and surrogates are kept as written (a
    literal such as ``'\\u0000'`` stays an escape sequence the parser reads, of the same value)."""
    if "\\u" not in text:
        return text, None
    breaks = False

    def repl(m: re.Match[str]) -> str:
        nonlocal breaks
        ch = chr(int(m.group(2), 16))
        if ch in _TRANSLATED_CONTROLS:
            breaks = breaks or ch in "\n\r"
            return m.group(1) + _TRANSLATED_CONTROLS[ch]
        if ord(ch) < 0x20 or 0x7F <= ord(ch) <= 0x9F or 0xD800 <= ord(ch) <= 0xDFFF:
            return m.group(0)
        return m.group(1) + ch

    # an escape never spans a line: each line is translated alone, and its rows counted
    lines = text.split("\n")
    out = [_UNICODE_ESCAPE.sub(repl, ln) if "\\u" in ln else ln for ln in lines]
    if not breaks:
        return "\n".join(out), None
    rows = [n for n, ln in enumerate(out, 1) for _ in range(ln.count("\n") + 1)]
    return "\n".join(out), rows


def _assign_target(node: ts.Node | None, src: bytes) -> str | None:
    """``f`` for ``f = …``, ``this.f`` for ``this.f = …``; None for anything else."""
    if node is None:
        return None
    if node.type == "identifier":
        return _text(node, src)
    if node.type == "field_access":
        obj = node.child_by_field_name("object")
        fld = node.child_by_field_name("field")
        if obj is not None and obj.type == "this" and fld is not None:
            return "this." + _text(fld, src)
    return None


def _body_facts(caps: dict[str, list[ts.Node]], members: list[tuple[int, int, Body]], src: bytes,
                detail: Collection[str] | None = None, member_blocks: dict[int, ts.Node] | None = None) -> None:
    """Distribute calls, locals, assignments and returns to the innermost member around each.

    ``detail``: call names (``<init>`` for ``new``) whose arguments are extracted; None extracts the
    arguments of every call. With names given, a call's arguments are also extracted when it sits
    inside a call so named, inside a local's initializer or a kept assignment or return (so every
    ``callref`` an extracted expression holds leads to a call with arguments), or when its receiver
    is a local initialised by ``new`` (setters on an object being built)."""
    index = Nesting(members)
    lambdas = Nesting([(n.start_byte, n.end_byte, n) for n in caps.get("lambda", [])])

    def innermost_lambda(node: ts.Node, member_start: int) -> int:
        return lambdas.find(node.start_byte, node.end_byte, member_start)

    def in_lambda(node: ts.Node, member_start: int) -> bool:
        return innermost_lambda(node, member_start) >= 0

    def handed_to(node: ts.Node, callrefs: dict[int, int]) -> int:
        """The ordinal of the call whose argument ``node`` (a lambda or method reference) is; -1."""
        host = node.parent
        while host is not None and host.type == "parenthesized_expression":
            host = host.parent
        if host is not None and host.type == "argument_list":
            host = host.parent
        return callrefs.get(host.id, -1) if host is not None else -1

    calls: list[tuple[int, int, str, ts.Node]] = []
    for label, kind in (("call", "CALL"), ("new", "NEW"), ("ctorcall", "CTOR"), ("ref", "REF")):
        for node in caps.get(label, []):
            calls.append((node.start_byte, -node.end_byte, kind, node))
    calls.sort(key=lambda c: (c[0], c[1]))
    member_of_start = {id(m[2]): m[0] for m in members}
    # first pass: each call's member and ordinal (pre-order), so expressions can refer to calls
    placed: list[tuple[str, ts.Node, Body]] = []
    refs: dict[int, dict[int, int]] = {}
    counts: dict[int, int] = {}
    for _, _, kind, node in calls:
        body = index.innermost(node)
        if body is None:
            continue
        n = counts.get(id(body), 0)
        counts[id(body)] = n + 1
        refs.setdefault(id(body), {})[node.id] = n
        placed.append((kind, node, body))
    # second pass: every call without its arguments
    pending: list[tuple[CallSite, list[ts.Node], dict[int, int]]] = []
    for kind, node, body in placed:
        callrefs = refs[id(body)]
        if kind == "CALL":
            obj = node.child_by_field_name("object")
            nm = node.child_by_field_name("name")
            name = _text(nm, src) if nm is not None else "?"
            receiver = expr_json(obj, src, 0, callrefs) if obj is not None else None
            args = _arg_nodes(node.child_by_field_name("arguments"))
            new_type = None
        elif kind == "NEW":
            new_type = type_ref(node.child_by_field_name("type"), src)
            name = ".".join(new_type.parts) if new_type else "?"
            outer = next((c for c in node.named_children if c.type in ("object_creation_expression", "identifier",
                                                                       "field_access", "this")
                          and c.end_byte <= (node.child_by_field_name("type") or node).start_byte), None)
            receiver = expr_json(outer, src, 0, callrefs) if outer is not None else None
            args = _arg_nodes(node.child_by_field_name("arguments"))
        elif kind == "CTOR":
            ctor = node.child_by_field_name("constructor")
            name = _text(ctor, src) if ctor is not None else "this"
            receiver = None
            new_type = None
            args = _arg_nodes(node.child_by_field_name("arguments"))
        else:  # REF: recv::name
            parts = [c for c in node.children if c.is_named and c.type not in _COMMENTS]
            name = _text(parts[-1], src) if len(parts) > 1 else "new"
            receiver = expr_json(parts[0], src, 0, callrefs) if parts else None
            new_type = None
            args = []
        lam = innermost_lambda(node, member_of_start[id(body)])
        site = CallSite(callrefs[node.id], kind, name, receiver, new_type, None, len(args),
                        _line(node), _end_line(node), lam >= 0, pos=node.start_byte)
        if kind == "REF":
            site.handed_to = handed_to(node, callrefs)
        else:
            # the nearest enclosing lambda handed to a call (``submit(() -> { Runnable r = () -> x(); … })``:
            # a lambda kept in a local runs where the one around it runs)
            start = member_of_start[id(body)]
            while lam >= 0 and lambdas.ranges[lam][0] > start:
                site.handed_to = handed_to(lambdas.ranges[lam][2], callrefs)
                if site.handed_to >= 0:
                    break
                lam = lambdas.parent[lam]
        body.calls.append(site)
        pending.append((site, args, callrefs))
    wanted = _Demand(placed, pending, detail)

    local_index: dict[tuple[int, str], LocalVar] = {}
    for label in ("local", "resource", "forvar", "catchvar"):
        for node in caps.get(label, []):
            body = index.innermost(node)
            if body is None:
                continue
            if label == "resource":  # try (Connection c = ds.getConnection()) …: a local of the try
                nm = node.child_by_field_name("name")
                tnode = node.child_by_field_name("type")
                value = node.child_by_field_name("value")
                if nm is None:
                    continue  # try (existing) names a variable declared elsewhere
                if value is not None:
                    wanted.local(body, _text(nm, src), value)
                tr = None if tnode is None or _text(tnode, src) == "var" else type_ref(tnode, src)
                lv = LocalVar(_text(nm, src), tr, expr_json(value, src, 0, refs.get(id(body)))
                              if value is not None else None, _line(node), 0, node.start_byte)
                body.locals.append(lv)
                local_index[(id(body), lv.name)] = lv
            elif label == "local":
                tnode = node.child_by_field_name("type")
                for decl in node.children_by_field_name("declarator"):
                    nm = decl.child_by_field_name("name")
                    if nm is None:
                        continue
                    tr = None if tnode is None or _text(tnode, src) == "var" else \
                        type_ref(tnode, src, _dims_of(decl.child_by_field_name("dimensions"), src))
                    value = decl.child_by_field_name("value")
                    if value is not None:
                        wanted.local(body, _text(nm, src), value)
                    lv = LocalVar(_text(nm, src), tr, expr_json(value, src, 0, refs.get(id(body)))
                                  if value is not None else None, _line(decl), 0, decl.start_byte)
                    body.locals.append(lv)
                    local_index[(id(body), lv.name)] = lv
            else:
                tnode = node.child_by_field_name("type")
                nm = node.child_by_field_name("name")
                if label == "catchvar":
                    tnode = next((c for c in node.named_children if c.type == "catch_type"), None)
                    tnode = tnode.named_children[0] if tnode is not None and tnode.named_children else None
                if nm is None:
                    continue
                lv = LocalVar(_text(nm, src), type_ref(tnode, src) if tnode is not None else None, None,
                              _line(node), 1 if label == "forvar" else 0, node.start_byte)
                body.locals.append(lv)
                local_index[(id(body), lv.name)] = lv
    for label in ("assign", "update"):
        for node in caps.get(label, []):
            body = index.innermost(node)
            if body is None:
                continue
            target_node = node.child_by_field_name("left") if label == "assign" else \
                next((c for c in node.named_children), None)
            target = _assign_target(target_node, src)
            if target is None:
                continue
            lv = local_index.get((id(body), target))
            if lv is not None:
                lv.assigned += 1
            elif "." not in target and target not in body.reassigned and len(body.reassigned) < MAX_BODY_NOTES:
                body.reassigned.append(target)  # a parameter (or a field by its simple name) written here
            if lv is None and label == "assign" and body.keep_assignments and len(body.assignments) < MAX_BODY_NOTES:
                op = node.child_by_field_name("operator")
                if op is None or _text(op, src) == "=":
                    right = node.child_by_field_name("right")
                    value = expr_json(right, src, 0, refs.get(id(body)))
                    if value is not None:
                        wanted.within(right)
                        body.assignments.append((target, value))
    for node in caps.get("lambda", []):
        body = index.innermost(node)
        params = node.child_by_field_name("parameters")
        if body is None or params is None:
            continue
        names = [params] if params.type == "identifier" else [
            c.child_by_field_name("name") or c for c in params.named_children]
        for n in names:
            if n is not None and n.type == "identifier" and len(body.lambda_params) < MAX_BODY_NOTES:
                body.lambda_params.append((_text(n, src), n.start_byte))
    for node in caps.get("return", []):
        body = index.innermost(node)
        if body is None or not body.keep_returns or len(body.returns) >= MAX_BODY_NOTES:
            continue
        value = next((c for c in node.named_children if c.type not in _COMMENTS), None)
        j = expr_json(value, src, 0, refs.get(id(body))) if value is not None else None
        if j is not None:
            wanted.within(value)
            body.returns.append(j)
    wanted.setters_on_new_locals()
    wanted.finish(src)
    branch_facts(caps, index, [(k, n, b, refs[id(b)][n.id]) for k, n, b in placed], src,
                 member_blocks or {}, lambda node, body: in_lambda(node, member_of_start[id(body)]))


def _names_in(values: list[Any]) -> set[str]:
    """Simple names an expression JSON reads (``name`` and the first part of ``field``), anywhere inside."""
    out: set[str] = set()
    stack = list(values)
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            k = v.get("kind")
            if k in ("name", "field") and v.get("parts"):
                out.add(v["parts"][0])
            stack.extend(x for x in v.values() if isinstance(x, (dict, list)))
        elif isinstance(v, list):
            stack.extend(v)
    return out


class _Demand:
    """Which calls of a file get their arguments extracted (see :func:`_body_facts`): a flag per
    call, in the pre-order of ``placed`` (calls sorted by start byte, outer before inner)."""

    def __init__(self, placed: list[tuple[str, ts.Node, "Body"]],
                 pending: list[tuple[CallSite, list[ts.Node], dict[int, int]]], names: Collection[str] | None) -> None:
        self.placed = placed
        self.pending = pending
        self.starts = [node.start_byte for _, node, _ in placed]
        self.ends = [node.end_byte for _, node, _ in placed]
        #: a call's own position: calls of a chain (``a.b().c()``) all start where the outermost does
        self.index = {node.id: i for i, (_, node, _) in enumerate(placed)}
        self.flags = [names is None or site.kind in ("CTOR", "REF") for site, _, _ in pending]
        #: calls whose whole subtree is flagged already: :meth:`within` jumps over them (linear in
        #: the calls of a file however deeply named calls nest)
        self.covered = [False] * len(pending)
        #: local initializers by (body, name), demanded only when a kept expression names the local
        self.inits: dict[tuple[int, str], list[ts.Node]] = {}
        self.names_only = names is not None
        if names is not None:
            for i, (site, _, _) in enumerate(pending):
                if (site.name if site.kind == "CALL" else "<init>" if site.kind == "NEW" else None) in names:
                    self.within(placed[i][1])

    def local(self, body: "Body", name: str, value: ts.Node) -> None:
        """A local's initializer: its calls keep arguments once a kept expression names the local."""
        self.inits.setdefault((id(body), name), []).append(value)

    def finish(self, src: bytes) -> None:
        """Extract the arguments of every flagged call; the locals their arguments and receivers name
        (and, in turn, the locals those initializers name) flag the calls of their initializers."""
        bodies = {i: id(b) for i, (_, _, b) in enumerate(self.placed)}
        inits_json = {}
        for b in {id(b): b for _, _, b in self.placed}.values():
            for lv in b.locals:
                inits_json.setdefault((id(b), lv.name), []).append(lv.init)
        done = [False] * len(self.pending)
        seen_locals: set[tuple[int, str]] = set()
        work = [i for i, f in enumerate(self.flags) if f]
        while work:
            i = work.pop()
            if done[i]:
                continue
            done[i] = True
            site, args, callrefs = self.pending[i]
            if site.args is None:
                site.args = [j if j is not None else {"kind": "other", "text": ""}
                             for j in (expr_json(a, src, 0, callrefs) for a in args)]
            if not self.names_only:
                continue
            todo = _names_in([site.args, site.receiver])
            while todo:
                key = (bodies[i], todo.pop())
                if key in seen_locals or key not in self.inits:
                    continue
                seen_locals.add(key)
                for value in self.inits[key]:
                    work.extend(self.within(value))
                todo |= _names_in(inits_json.get(key, []))

    def within(self, node: ts.Node) -> list[int]:
        """Flag every call inside ``node`` (``node`` itself included, when it is a call); returns the
        calls newly flagged."""
        i = self.index.get(node.id)
        if i is None:
            i = bisect.bisect_left(self.starts, node.start_byte)
        end = node.end_byte
        new: list[int] = []
        while i < len(self.starts) and self.starts[i] < end:
            if self.ends[i] > end:  # starts where node does but holds it
                i += 1
            elif self.covered[i]:
                i = bisect.bisect_left(self.starts, self.ends[i], i + 1)
            else:
                if not self.flags[i]:
                    new.append(i)
                self.flags[i] = self.covered[i] = True
                i += 1
        return new

    def setters_on_new_locals(self) -> None:
        """Calls on a local initialised by ``new`` (``m = new Message(); m.setTopic(t)``)."""
        built: dict[int, set[str]] = {}
        for _, _, body in self.placed:
            if id(body) in built:
                continue
            built[id(body)] = {lv.name for lv in body.locals
                               if lv.init is not None and lv.init.get("kind") == "callref"
                               and 0 <= lv.init["ordinal"] < len(body.calls)
                               and body.calls[lv.init["ordinal"]].kind == "NEW"}
        for i, (site, _, _) in enumerate(self.pending):
            r = site.receiver
            if not self.flags[i] and site.kind == "CALL" and r is not None and r.get("kind") == "name" and \
                    r["parts"][0] in built[id(self.placed[i][2])]:
                self.within(self.placed[i][1])


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
    found = expressions(facts)
    try:
        check_shape(list[Expr], [e for _, e in found], facts.path)
    except ShapeError:
        for where, e in found:
            check_shape(Expr, e, f"{facts.path} {where}")
        raise


def _extract(path: str, decoded: DecodedText, src: bytes, call_detail: Collection[str] | None) -> FileFacts:
    parser, query = _tools()
    tree = parser.parse(src)
    root = tree.root_node
    lines = split_lines(decoded.text)

    package = ""
    imports: list[Import] = []
    for c in root.named_children:
        if c.type == "package_declaration":
            for n in c.named_children:
                if n.type in ("scoped_identifier", "identifier"):
                    package = _text(n, src).replace(" ", "")
        elif c.type == "import_declaration":
            raw = _text(c, src)
            static = any(ch.type == "static" for ch in c.children)
            wildcard = any(ch.type == "asterisk" for ch in c.children)
            name = ""
            for n in c.named_children:
                if n.type in ("scoped_identifier", "identifier"):
                    name = _text(n, src).replace(" ", "")
            if name:
                imports.append(Import(name, static, wildcard, _line(c)))
            del raw

    # capture lists in document order: the order the query engine reports is not guaranteed stable
    caps = {k: sorted(v, key=lambda n: (n.start_byte, -n.end_byte)) for k, v in
            ts.QueryCursor(query).captures(root).items()}
    type_nodes = sorted(caps.get("type", []) + caps.get("anon", []), key=lambda n: (n.start_byte, -n.end_byte))
    types: list[TypeDecl] = []
    type_index: dict[int, int] = {}
    counters: dict[tuple[int, str], int] = {}
    orphans: list[tuple[str, int]] = []
    depth: list[int] = []
    for node in type_nodes:
        outer = _enclosing_type(node, type_index)
        if outer == _SKIPPED or (outer is not None and depth[outer] >= MAX_TYPE_NESTING):
            if outer != _SKIPPED:
                orphans.append((f"type nested deeper than {MAX_TYPE_NESTING} levels", _line(node)))
            type_index[node.id] = _SKIPPED
            continue
        is_anon = node.type in ("object_creation_expression", "enum_constant")
        if is_anon:
            if outer is None:
                orphans.append(("anonymous class", _line(node)))
                continue
            key = (outer, "")
            counters[key] = counters.get(key, 0) + 1
            simple = ""
            binary = f"{types[outer].binary_suffix}${counters[key]}"
            nesting = "ANONYMOUS"
            kind = "CLASS"
            mods: list[str] = []
            anns: list[Annotation] = []
            tparams: list[TypeParam] = []
            body = next((c for c in node.named_children if c.type == "class_body"), None) \
                if node.type == "object_creation_expression" else node.child_by_field_name("body")
            # an enum constant's body is an anonymous subclass of its enum
            base = type_ref(node.child_by_field_name("type"), src) if node.type == "object_creation_expression" \
                else TypeRef((types[outer].simple_name,)) if types[outer].simple_name else None
            superclass = None
            interfaces: list[TypeRef] = []
        else:
            name_node = node.child_by_field_name("name")
            simple = _text(name_node, src) if name_node is not None else "?"
            kind = TYPE_KIND[node.type]
            parent = node.parent
            if outer is None:
                binary = simple
                nesting = "TOP"
                if parent is not None and parent.type not in ("program",):
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
            base = None
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
        method_tparams: list[TypeParam] = []
        if nesting in ("LOCAL", "ANONYMOUS"):
            cur = node.parent
            while cur is not None and cur.id not in type_index:
                if cur.type in ("method_declaration", "constructor_declaration"):
                    method_tparams = _type_params(cur.child_by_field_name("type_parameters"), src)
                    break
                cur = cur.parent
        header_end = _line(body) if body is not None else _end_line(node)
        td = TypeDecl(kind, simple, binary, outer, nesting, mods, anns, tparams, superclass, interfaces, base,
                      _line(node), header_end, _end_line(node), node.start_byte)
        td.method_type_params = method_tparams
        if node.type == "record_declaration":
            td.record_components = _params(node.child_by_field_name("parameters"), src)
        type_index[node.id] = len(types)
        depth.append(0 if outer is None else depth[outer] + 1)
        types.append(td)

    member_spans: dict[tuple[int, int], tuple[MethodDecl, ts.Node]] = {}
    for node in caps.get("method", []):
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
        decl_kind = {"method_declaration": "METHOD", "constructor_declaration": "CONSTRUCTOR",
                     "compact_constructor_declaration": "COMPACT_CONSTRUCTOR",
                     "annotation_type_element_declaration": "ANNOTATION_ELEMENT"}[t]
        if t == "compact_constructor_declaration":
            params = list(types[owner].record_components)
        else:
            params = _params(node.child_by_field_name("parameters"), src)
        ret = None
        if t in ("method_declaration", "annotation_type_element_declaration"):
            ret = type_ref(node.child_by_field_name("type"), src, _dims_of(node.child_by_field_name("dimensions"), src))
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

    for node in caps.get("field", []):
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
            tr = type_ref(base_type, src, _dims_of(decl.child_by_field_name("dimensions"), src)) or TypeRef(("?",))
            value = decl.child_by_field_name("value")
            types[owner].fields.append(FieldDecl(_text(nm, src) if nm is not None else "?", tr, mods, anns,
                                                 expr_json(value, src) if value is not None else None,
                                                 _line(node), _end_line(node), decl.start_byte))

    for node in caps.get("enumconst", []):
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

    members: list[tuple[int, int, Body]] = []
    for node in caps.get("clinit", []):
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
    _body_facts(caps, members, src, call_detail, member_blocks)
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
