"""Folding ``static final`` constants and enum constants (docs/scanning.md §8; the base of folding, docs/scanning.md §9).

A constant is a ``static final`` field (every field of an interface or
annotation type) with an initializer. Its value folds when the initializer is
a literal, a unary minus, a ``+`` chain of foldable operands (string
concatenation or integer addition with Java's rules), integer arithmetic
(``- * / % << >> & | ^`` with Java's 32/64-bit wrapping), a parenthesised
expression, or a reference to another constant: a simple name in the
enclosing types or their in-repo supertypes, ``Type.NAME`` through imports,
or a static import. Folding is memoised and cycle-safe; floating-point values
are never folded (no floats anywhere in the IR).

Folding runs once over every constant of the scan (:meth:`ConstantFolder.precompute`).
A folded value is ``(value: str, type: str)`` where type is
``java.lang.String``, ``int``, ``long``, ``char``, ``boolean`` or
``enum:{binary name}`` (value = constant name).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from diting.java.names import FileScope, TypeRegistry
from diting.java.facts import FieldDecl, FileFacts, TypeRef

if TYPE_CHECKING:
    from diting.java.facts import Expr

Folded = tuple[str, str]

#: a folded string longer than this is not folded (doubling chains would exhaust memory)
MAX_STRING_CHARS = 65536

_INT_BITS = {"int": 32, "long": 64}


@dataclass
class _ConstDecl:
    scope: FileScope
    chain: list[int]
    expr: Expr | None
    enum_of: str | None  # binary name of the enum for an enum constant
    name: str


def _wrap(v: int, kind: str) -> int:
    bits = _INT_BITS[kind]
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >= 1 << (bits - 1) else v


def _is_constant_field(fd: FieldDecl, type_kind: str) -> bool:
    if type_kind in ("INTERFACE", "ANNOTATION"):
        return fd.initializer is not None
    return "static" in fd.modifiers and "final" in fd.modifiers and fd.initializer is not None


class ConstantFolder:
    """Constants of every module, keyed by ``(module, binary type name, field name)``."""

    def __init__(self) -> None:
        self._decls: dict[tuple[str, str, str], _ConstDecl] = {}
        self._memo: dict[tuple[str, str, str], Folded] = {}
        self._frozen = False
        self.registry: TypeRegistry | None = None

    def add_file(self, module: str, facts: FileFacts, scope: FileScope) -> None:
        """Register the constants and enum constants declared in one file."""
        self.registry = scope.registry
        for idx, td in enumerate(facts.types):
            binary = scope.binary_of(td)
            chain = []
            cur: int | None = idx
            while cur is not None:
                chain.append(cur)
                cur = facts.types[cur].outer
            for fd in td.fields:
                if _is_constant_field(fd, td.kind):
                    self._decls[(module, binary, fd.name)] = _ConstDecl(scope, chain, fd.initializer, None, fd.name)
            for ec in td.enum_constants:
                self._decls[(module, binary, ec.name)] = _ConstDecl(scope, chain, None, binary, ec.name)

    def precompute(self) -> None:
        """Fold every constant, iterating to a fixpoint instead of recursing: a constant folds
        iff everything it refers to folds, whatever the order of the files, so every worker
        and every ``--jobs`` sees the same table; chains of any length and reference cycles
        need no stack. Called once, after every file is added."""
        table: dict[tuple[str, str, str], Folded] = {}
        pending = []
        for key, decl in sorted(self._decls.items()):
            if decl.enum_of is not None:
                table[key] = (decl.name, f"enum:{decl.enum_of}")
            else:
                pending.append((key, decl))
        self._memo = table
        self._frozen = True
        changed = True
        while changed and pending:
            changed = False
            still = []
            for key, decl in pending:
                v = self.fold(decl.expr, decl.scope, decl.chain)
                if v is None:
                    still.append((key, decl))
                else:
                    table[key] = v
                    changed = True
            pending = still

    def constant(self, key: tuple[str, str, str]) -> Folded | None:
        """Folded value of the constant ``key`` (after :meth:`precompute`), or None."""
        if not self._frozen:
            raise RuntimeError("ConstantFolder.precompute() must run before constants are read")
        return self._memo.get(key)

    def _field_in_type(self, module: str, binary: str, name: str) -> Folded | None:
        """The constant ``name`` declared in the type or inherited from an in-repo supertype."""
        key = (module, binary, name)
        if key in self._decls:
            return self.constant(key)
        if self.registry is None:
            return None
        for sm, sb in self.registry.ancestors(module, binary):
            if (sm, sb, name) in self._decls:
                return self.constant((sm, sb, name))
        return None

    def _has_field(self, module: str, binary: str, name: str) -> bool:
        return (module, binary, name) in self._decls

    def _name(self, name: str, scope: FileScope, chain: list[int]) -> Folded | None:
        module = scope.visible.own_module or ""
        for idx in chain:
            binary = scope.binary_of(scope.facts.types[idx])
            v = self._field_in_type(module, binary, name)
            if v is not None:
                return v
            if self._has_field(module, binary, name):
                return None
        target = scope.static_single.get(name)
        if target is not None:
            return self._static_import(target.rsplit(".", 1)[0], name, scope)
        for owner in scope.static_wildcards:
            v = self._static_import(owner, name, scope)
            if v is not None:
                return v
        return None

    def _static_import(self, owner: str, name: str, scope: FileScope) -> Folded | None:
        """The constant ``name`` of the statically imported type ``owner``."""
        r = scope.resolve_base(TypeRef(tuple(owner.split("."))), [], {})
        for info in r.infos if r is not None else ():
            v = self._field_in_type(info.module, info.binary, name)
            if v is not None:
                return v
        return None

    def _qualified(self, parts: list[str], scope: FileScope, chain: list[int]) -> Folded | None:
        owner, name = parts[:-1], parts[-1]
        if owner and owner[0] == "this":
            return self._name(name, scope, chain) if len(owner) == 1 else None
        r = scope.resolve_base(TypeRef(tuple(owner)), chain, scope.type_vars_for(chain))
        if r is None:
            return None
        for info in r.infos:
            v = self._field_in_type(info.module, info.binary, name)
            if v is not None:
                return v
        return None

    def fold(self, expr: Expr | None, scope: FileScope, chain: list[int]) -> Folded | None:
        """Fold an expression (the JSON of :func:`diting.java.expressions.expr_json`)."""
        if expr is None:
            return None
        k = expr.get("kind")
        if k in _LITERAL_TYPES:
            return (expr["value"], _LITERAL_TYPES[k])
        if k == "name":
            return self._name(expr["parts"][0], scope, chain)
        if k == "field":
            return self._qualified(list(expr["parts"]), scope, chain)
        if k == "unary":
            inner = self.fold(expr.get("operand"), scope, chain)
            return _unary(expr.get("op"), inner) if inner is not None else None
        if k == "binary":
            a = self.fold(expr.get("left"), scope, chain)
            b = self.fold(expr.get("right"), scope, chain)
            return _binary(expr.get("op"), a, b) if a is not None and b is not None else None
        if k == "concat":
            acc: Folded | None = None
            for item in expr["items"]:
                v = self.fold(item, scope, chain)
                if v is None:
                    return None
                acc = v if acc is None else _plus(acc, v)
                if acc is None:
                    return None
            return acc
        return None


#: the type of each literal kind
_LITERAL_TYPES = {"str": "java.lang.String", "int": "int", "long": "long", "char": "char", "bool": "boolean"}


def _unary(op: str | None, inner: Folded) -> Folded | None:
    """Unary ``-`` and ``+`` of an integer, ``!`` of a boolean; None for anything else."""
    if op == "-" and inner[1] in _INT_BITS:
        return (str(_wrap(-int(inner[0]), inner[1])), inner[1])
    if op == "+" and inner[1] in _INT_BITS:
        return inner
    if op == "!" and inner[1] == "boolean":
        return ("false" if inner[0] == "true" else "true", "boolean")
    return None


def _binary(op: str | None, a: Folded, b: Folded) -> Folded | None:
    """Java's integer arithmetic (``- * / % << >> & | ^``) on two int / long operands, wrapped to the
    result's width; None for another operator or operand type, or a division by zero."""
    if a[1] not in _INT_BITS or b[1] not in _INT_BITS:
        return None
    kind = "long" if "long" in (a[1], b[1]) else "int"
    x, y = int(a[0]), int(b[0])
    if op in ("/", "%") and y == 0:
        return None
    if op == "-":
        r = x - y
    elif op == "*":
        r = x * y
    elif op == "/":
        r = _truncated_quotient(x, y)
    elif op == "%":
        r = x - _truncated_quotient(x, y) * y
    elif op == "<<":
        r = x << (y & (63 if a[1] == "long" else 31))
        kind = a[1]
    elif op == ">>":
        r = x >> (y & (63 if a[1] == "long" else 31))
        kind = a[1]
    elif op == "&":
        r = x & y
    elif op == "|":
        r = x | y
    elif op == "^":
        r = x ^ y
    else:
        return None
    return (str(_wrap(r, kind)), kind)


def _truncated_quotient(x: int, y: int) -> int:
    """``x / y`` as Java divides integers: truncated toward zero."""
    return abs(x) // abs(y) * (1 if (x >= 0) == (y >= 0) else -1)


def _plus(acc: Folded, v: Folded) -> Folded | None:
    """Java's ``+`` of two folded operands: string concatenation when either is a String (not of an
    enum constant, whose ``toString()`` may be overridden, nor past :data:`MAX_STRING_CHARS`), else
    int / long / char addition; None for anything else."""
    if acc[1] == "java.lang.String" or v[1] == "java.lang.String":
        if acc[1].startswith("enum:") or v[1].startswith("enum:"):
            return None  # an enum's toString() may be overridden
        if len(acc[0]) + len(v[0]) > MAX_STRING_CHARS:
            return None
        return (acc[0] + v[0], "java.lang.String")
    if acc[1] in _INT_BITS and v[1] in _INT_BITS:
        kind = "long" if "long" in (acc[1], v[1]) else "int"
        return (str(_wrap(int(acc[0]) + int(v[0]), kind)), kind)
    if acc[1] == "char" and v[1] in _INT_BITS or acc[1] in _INT_BITS and v[1] == "char":
        a = ord(acc[0]) if acc[1] == "char" else int(acc[0])
        b = ord(v[0]) if v[1] == "char" else int(v[0])
        kind = "long" if "long" in (acc[1], v[1]) else "int"
        return (str(_wrap(a + b, kind)), kind)
    return None
