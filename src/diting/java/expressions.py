"""Expressions as written, in the JSON form of :data:`diting.java.facts.Expr` (:func:`expr_json`), and
the pieces of syntax an expression holds and declarations share: type references (:func:`type_ref`)
and annotations (:func:`annotation`)."""

from __future__ import annotations

from typing import Any

import tree_sitter as ts

from diting.java.facts import Annotation, TypeRef
from diting.java.lexical import int_literal_value, text_block_value, unescape_java
from diting.java.nodes import line_of, node_text, snippet

#: expressions deeper than this are kept as text only (hostile input: deep nesting)
MAX_EXPR_DEPTH = 64
#: expression text kept at most this long in facts
MAX_EXPR_TEXT = 400

#: tree-sitter's comment nodes, which may sit among an expression's children
COMMENT_NODES = ("line_comment", "block_comment", "comment")


def type_ref(node: ts.Node | None, src: bytes, extra_dims: int = 0) -> TypeRef | None:
    """The erased type reference of a type node (generic arguments dropped)."""
    if node is None:
        return None
    dims = extra_dims
    while node.type == "array_type":
        dn = node.child_by_field_name("dimensions")
        dims += node_text(dn, src).count("[") if dn is not None else 1
        node = node.child_by_field_name("element")
        if node is None:
            return None
    t = node.type
    if t in ("integral_type", "floating_point_type", "boolean_type", "void_type"):
        return TypeRef((node_text(node, src).strip(),), dims, True)
    parts = _name_parts(node, src)
    if not parts:
        return TypeRef(("?" + snippet(node, src, 60),), dims, False)
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
                r = type_ref(a, src) if a is not None and a.type not in COMMENT_NODES else None
                if r is not None:
                    out.append(TypeRef(r.parts, r.dims, r.primitive))
    return tuple(out)


def _name_parts(node: ts.Node, src: bytes) -> list[str]:
    t = node.type
    if t == "type_identifier" or t == "identifier":
        return [node_text(node, src)]
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


def dims_of(node: ts.Node | None, src: bytes) -> int:
    """Array dimensions a ``dimensions`` node adds (``[]`` pairs written after a name); 0 for None."""
    return node_text(node, src).count("[") if node is not None else 0


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
        return {"kind": "other", "text": snippet(node, src, MAX_EXPR_TEXT), "truncated": True}
    t = node.type
    if t == "parenthesized_expression":
        inner = node.named_children
        return expr_json(inner[0], src, depth + 1, callrefs) if inner else None
    if t in _LITERALS:
        return _literal_json(node, src)
    if t == "identifier":
        return {"kind": "name", "parts": [node_text(node, src)]}
    if t in ("field_access", "scoped_identifier"):
        parts = _dotted(node, src)
        if parts is not None:
            return {"kind": "field", "parts": parts}
        return {"kind": "other", "text": snippet(node, src, MAX_EXPR_TEXT)}
    if t == "binary_expression" and _op(node, src) == "+":
        return {"kind": "concat", "items": _concat_items(node, src, depth, callrefs)}
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
        return {"kind": "unary", "op": node_text(op, src) if op is not None else "?",
                "operand": expr_json(operand, src, depth + 1, callrefs)}
    if t == "method_invocation":
        obj = node.child_by_field_name("object")
        name = node.child_by_field_name("name")
        args = node.child_by_field_name("arguments")
        return {"kind": "call", "target": snippet(obj, src, MAX_EXPR_TEXT) if obj is not None else None,
                "target_expr": expr_json(obj, src, depth + 1, callrefs) if obj is not None else None,
                "name": node_text(name, src) if name is not None else "",
                "args": [expr_json(a, src, depth + 1, callrefs) for a in arg_nodes(args)]}
    if t == "ternary_expression":
        return {"kind": "cond", "text": snippet(node, src, MAX_EXPR_TEXT)}
    if t == "this":
        return {"kind": "this"}
    if t == "super":
        return {"kind": "super"}
    if t == "object_creation_expression":
        tr = type_ref(node.child_by_field_name("type"), src)
        args = node.child_by_field_name("arguments")
        return {"kind": "new", "type": list(tr.parts) if tr else [], "text": snippet(node, src, MAX_EXPR_TEXT),
                "args": [expr_json(a, src, depth + 1, callrefs) for a in arg_nodes(args)]}
    if t == "cast_expression":
        tr = type_ref(node.child_by_field_name("type"), src)
        return {"kind": "cast", "type": list(tr.parts) if tr else [],
                "value": expr_json(node.child_by_field_name("value"), src, depth + 1, callrefs)}
    if t == "lambda_expression":
        return {"kind": "lambda", "text": snippet(node, src, 80)}
    if t == "method_reference":
        return {"kind": "ref", "text": snippet(node, src, MAX_EXPR_TEXT)}
    return {"kind": "other", "text": snippet(node, src, MAX_EXPR_TEXT)}


_INTEGER_LITERALS = ("decimal_integer_literal", "hex_integer_literal", "octal_integer_literal",
                     "binary_integer_literal")
_FLOAT_LITERALS = ("decimal_floating_point_literal", "hex_floating_point_literal")
_LITERALS = ("string_literal", "character_literal", *_INTEGER_LITERALS, *_FLOAT_LITERALS, "true", "false",
             "null_literal")


def _literal_json(node: ts.Node, src: bytes) -> dict[str, Any]:
    """A literal's JSON: its value (``other`` with the text when the value is invalid or out of range)."""
    t = node.type
    if t == "string_literal":
        raw = node_text(node, src)
        if raw.startswith('"""'):
            val = text_block_value(raw)
        else:
            val = unescape_java(raw[1:-1])
        return {"kind": "str", "value": val} if val is not None else {"kind": "other", "text": raw[:MAX_EXPR_TEXT]}
    if t == "character_literal":
        val = unescape_java(node_text(node, src)[1:-1])
        return {"kind": "char", "value": val} if val is not None and len(val) == 1 else {
            "kind": "other", "text": node_text(node, src)}
    if t in _INTEGER_LITERALS:
        raw = node_text(node, src)
        val = int_literal_value(raw)
        kind = "long" if raw[-1:] in "lL" else "int"
        return {"kind": kind, "value": val} if val is not None else {"kind": "other", "text": raw}
    if t in _FLOAT_LITERALS:
        return {"kind": "float", "text": node_text(node, src)}
    if t == "null_literal":
        return {"kind": "null"}
    return {"kind": "bool", "value": t}  # true, false


def _concat_items(node: ts.Node, src: bytes, depth: int, callrefs: dict[int, int] | None) -> list[dict[str, Any]]:
    """The operands of a string concatenation (a ``+`` chain, flattened), as JSON."""
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
    return items


def arg_nodes(args: ts.Node | None) -> list[ts.Node]:
    """Argument expressions of an ``argument_list`` (comments dropped)."""
    return [a for a in args.named_children if a.type not in COMMENT_NODES] if args is not None else []


_ARITH = ("-", "*", "/", "%", "<<", ">>", "&", "|", "^")


def _op(node: ts.Node, src: bytes) -> str:
    op = node.child_by_field_name("operator")
    return node_text(op, src) if op is not None else ""


def _dotted(node: ts.Node, src: bytes) -> list[str] | None:
    out: list[str] = []
    cur: ts.Node | None = node
    while cur is not None:
        if cur.type == "identifier":
            out.append(node_text(cur, src))
            break
        if cur.type == "field_access":
            f = cur.child_by_field_name("field")
            out.append(node_text(f, src) if f is not None else "?")
            cur = cur.child_by_field_name("object")
        elif cur.type == "scoped_identifier":
            nm = cur.child_by_field_name("name")
            out.append(node_text(nm, src) if nm is not None else "?")
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
    name = node_text(name_node, src) if name_node is not None else "?"
    args: dict[str, Any] = {}
    arg_list = node.child_by_field_name("arguments")
    if arg_list is not None:
        for c in arg_list.named_children:
            if c.type == "element_value_pair":
                k = c.child_by_field_name("key")
                v = c.child_by_field_name("value")
                args[node_text(k, src) if k is not None else "value"] = expr_json(v, src, depth + 1)
            elif c.type not in COMMENT_NODES:
                args["value"] = expr_json(c, src, depth + 1)
    return Annotation(name, args, line_of(node))

