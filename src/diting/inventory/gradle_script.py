"""Reading Gradle build scripts as text: one lexer and one statement reader for the Groovy and
the Kotlin DSL (docs/gradle.md, "How scripts are read").

Nothing here evaluates anything. A script becomes a list of :class:`Stmt`: calls (with their
arguments and a trailing closure or lambda), assignments, declarations (``def``/``val``/``var``)
and control constructs (``if``, ``for``, ``while``, ``when``, ``try`` …, kept with their bodies so
that what they hide can be named). Both DSLs reduce to the same shapes:

* Groovy command expressions and chains — ``include 'a', 'b'``, ``implementation project(':x')``,
  ``id 'x' version 'y' apply false`` — and Kotlin infix calls — ``id("x") version "y"`` — are
  calls whose ``target`` is the call before them;
* named arguments — ``group: 'g'`` (Groovy) and ``group = "g"`` (Kotlin) — are :class:`Arg` names;
* strings keep their literal parts and their ``$name`` / ``${expr}`` templates apart.

Why not a tree-sitter grammar: the Groovy grammar on the package index reads ``id 'x' version 'y'``
as two statements and ``implementation project(':x')`` as a call of ``implementation`` with an
identifier followed by a parenthesised expression — exactly the constructs that carry a build's
meaning — and two grammars would need two walkers for one set of constructs.

Hostile input: the reader never raises. Unbalanced brackets, unterminated strings and tokens it
does not expect give :attr:`Script.errors` (line, message) and the rest of the file is read on;
nesting deeper than :data:`MAX_DEPTH` is cut with an error.
"""

from __future__ import annotations

from diting.inventory.gradle_ast import (Arg, Assign, Call, Closure, Control, Decl, Definition, Expr, ExprStmt, Index,
                                        ListLit, MapLit, Member, Name, Num, Op, Opaque, Script, Stmt, Str, Tok)
from diting.inventory.gradle_lexer import lex
from diting.source.text import normalize_line_ends, split_lines

#: brackets nested deeper than this are not read (an error names the line)
MAX_DEPTH = 120

_KEYWORD_CONTROL = {"if", "for", "while", "do", "try", "switch", "when", "synchronized"}
_KEYWORD_SKIP = {"import", "package"}
_KEYWORD_DECL = {"def", "val", "var"}
_KEYWORD_DEFINITION = {"class", "interface", "enum", "object", "fun", "trait", "record"}
_MODIFIERS = {"private", "public", "protected", "internal", "static", "final", "abstract", "open", "override",
              "lateinit", "const", "inline", "data", "sealed"}

_BINARY = {"+", "-", "*", "/", "%", "==", "!=", "<", ">", "<=", ">=", "&&", "||", "?:", "===", "!==", "<<", ">>",
           "=~", "==~", "..", "..<", "**", "|", "&", "^", "<=>", "in", "!in", "is", "!is", "as", "as?", "instanceof",
           "to", "until", "downTo", "step"}
_ASSIGN = {"=", "+=", "-=", "*=", "/=", "%=", "<<="}
#: a line ending in one of these continues on the next line
_CONTINUES = {",", "=", "(", "[", ".", "?.", "->", ":", "+", "-", "*", "/", "&&", "||", "?:", "+=", "-=", "==",
              "!=", "<", ">", "<=", ">=", "?", "*.", "::"}


# --------------------------------------------------------------------------- values


# --------------------------------------------------------------------------- statements


# --------------------------------------------------------------------------- lexer


# --------------------------------------------------------------------------- reader


class _Reader:
    def __init__(self, toks: list[Tok], errors: list[tuple[int, str]]) -> None:
        self.t = toks
        self.i = 0
        self.errors = errors
        self.depth = 0
        self.type_args: tuple[str, ...] = ()

    # -- tokens
    def peek(self, k: int = 0) -> Tok:
        j = min(self.i + k, len(self.t) - 1)
        return self.t[j]

    def next(self) -> Tok:
        tok = self.t[self.i]
        if self.i < len(self.t) - 1:
            self.i += 1
        return tok

    def at(self, value: str, kind: str = "op") -> bool:
        tok = self.t[self.i]
        return tok.kind == kind and tok.value == value

    def skip_nl(self) -> None:
        while self.t[self.i].kind == "nl" or self.at(";"):
            self.i += 1

    def next_significant(self) -> Tok:
        j = self.i
        while self.t[j].kind == "nl":
            j += 1
        return self.t[j]

    def expect(self, value: str) -> bool:
        if self.at(value):
            self.next()
            return True
        tok = self.peek()
        self.errors.append((tok.line, f"expected {value!r}, found {tok.value or tok.kind!r}"))
        return False

    def deeper(self) -> bool:
        if self.depth >= MAX_DEPTH:
            self.errors.append((self.peek().line, f"nested deeper than {MAX_DEPTH} levels; not read"))
            self.skip_balanced_rest()
            return False
        self.depth += 1
        return True

    def skip_balanced_rest(self) -> None:
        """Skip to the end of the file (used when nesting is too deep to read)."""
        self.i = len(self.t) - 1

    def skip_statement(self) -> None:
        """Skip to the end of the current statement, keeping brackets balanced."""
        depth = 0
        while True:
            tok = self.peek()
            if tok.kind == "eof":
                return
            if tok.kind == "op" and tok.value in "([{":
                depth += 1
            elif tok.kind == "op" and tok.value in ")]}":
                if depth == 0:
                    return
                depth -= 1
            elif depth == 0 and (tok.kind == "nl" or tok.value == ";"):
                return
            self.next()

    # -- statements
    def block(self, closing: str | None) -> list[Stmt]:
        out: list[Stmt] = []
        while True:
            self.skip_nl()
            tok = self.peek()
            if tok.kind == "eof":
                if closing:
                    self.errors.append((tok.line, f"missing {closing!r} at end of file"))
                return out
            if closing and self.at(closing):
                return out
            if tok.kind == "op" and tok.value in ")]}":
                self.errors.append((tok.line, f"unbalanced {tok.value!r}"))
                self.next()
                continue
            start = self.i
            st = self.statement()
            if st is not None:
                out.append(st)
            if self.i == start:  # never loop on a token nobody consumes
                self.errors.append((tok.line, f"unexpected {tok.value or tok.kind!r}"))
                self.next()
                self.skip_statement()

    def annotations(self) -> None:
        """Skip Kotlin annotations (``@Suppress("x")``, ``@file:Suppress(…)``) before a statement."""
        while self.at("@") and self.peek(1).kind == "id":
            self.next()
            self.next()
            while (self.at(".") or self.at(":")) and self.peek(1).kind == "id":
                self.next()
                self.next()
            if self.at("("):
                self.skip_group("(", ")")
            self.skip_nl()

    def statement(self) -> Stmt | None:
        self.annotations()
        tok = self.peek()
        line = tok.line
        if tok.kind == "id":
            while tok.kind == "id" and tok.value in _MODIFIERS and self.peek(1).kind == "id":
                self.next()
                tok = self.peek()
            if tok.value in _KEYWORD_SKIP:
                self.skip_statement()
                return None
            if tok.value in _KEYWORD_CONTROL:
                return self.control()
            if tok.value in ("else", "catch", "finally"):
                self.errors.append((line, f"{tok.value!r} without its construct"))
                self.next()
                self.skip_statement()
                return None
            if tok.value in _KEYWORD_DEFINITION and self.peek(1).kind == "id":
                return self.definition()
            if tok.value in ("return", "throw", "break", "continue"):
                self.next()
                self.skip_statement()
                return Control(line, line, tok.value, [], [])
            if tok.value in _KEYWORD_DECL and self.peek(1).kind == "id" or (
                    tok.value[:1].isupper() and self.peek(1).kind == "id" and self.peek(2).kind == "op"
                    and self.peek(2).value == "=" and self.peek(1).value not in _BINARY):
                return self.declaration()
        expr = self.expression(statement=True)
        if expr is None:
            return None
        tok = self.peek()
        if tok.kind == "op" and tok.value in _ASSIGN:
            self.next()
            self.skip_nl()
            value = self.expression() or Opaque(tok.line, "")
            return Assign(line, self.prev_line(), expr, tok.value, value)
        return ExprStmt(line, self.prev_line(), expr)

    def prev_line(self) -> int:
        return self.t[max(0, self.i - 1)].line

    def declaration(self) -> Stmt | None:
        line = self.peek().line
        self.next()  # def / val / var / a type name
        name_tok = self.next()
        if self.at(":"):  # Kotlin type annotation
            self.next()
            self.type_ref()
        elif self.peek().kind == "id" and self.peek(1).kind == "op" and self.peek(1).value in ("=",):
            # Groovy ``def String x = …``
            name_tok = self.next()
        value = delegate = None
        if self.at("="):
            self.next()
            self.skip_nl()
            value = self.expression()
        elif self.at("by", "id"):
            self.next()
            delegate = self.expression()
        return Decl(line, self.prev_line(), name_tok.value, value, delegate)

    def type_ref(self) -> None:
        """Skip a Kotlin type (``Foo.Bar<Baz?>?``): names joined by dots, type arguments, ``?``;
        never the ``by`` of a delegate that may follow."""
        expect_name = True
        while True:
            tok = self.peek()
            if expect_name and tok.kind == "id" and tok.value != "by":
                self.next()
                expect_name = False
                if self.at("<"):
                    self.generic()
            elif not expect_name and self.at("."):
                self.next()
                expect_name = True
            elif self.at("?"):
                self.next()
            else:
                return

    def generic(self) -> bool:
        """Skip ``<…>`` when it is a type argument list (its simple names are kept in
        :attr:`type_args`); False (nothing consumed) otherwise."""
        j, depth = self.i, 0
        while True:
            tok = self.t[j]
            if tok.kind == "op" and tok.value == "<":
                depth += 1
            elif tok.kind == "op" and tok.value == ">":
                depth -= 1
                if depth == 0:
                    break
            elif tok.kind == "op" and tok.value == ">>":
                depth -= 2
                if depth <= 0:
                    break
            elif not (tok.kind == "id" or tok.kind == "op" and tok.value in (".", ",", "?", "*")):
                return False
            j += 1
            if j - self.i > 64:
                return False
        names = [t.value for t in self.t[self.i:j] if t.kind == "id"]
        self.type_args = tuple(names)
        self.i = j + 1
        return True

    def definition(self) -> Stmt:
        line = self.peek().line
        kw = self.next().value
        name = self.next().value
        # skip the header up to the body, then the body
        while not (self.at("{") or self.peek().kind in ("nl", "eof") or self.at(";")):
            if self.at("("):
                self.skip_group("(", ")")
            else:
                self.next()
        if self.at("{"):
            self.skip_group("{", "}")
        elif self.at("="):
            self.skip_statement()
        return Definition(line, self.prev_line(), kw, name)

    def skip_group(self, opening: str, closing: str) -> None:
        depth = 0
        while True:
            tok = self.next()
            if tok.kind == "eof":
                self.errors.append((tok.line, f"missing {closing!r}"))
                return
            if tok.kind == "op" and tok.value == opening:
                depth += 1
            elif tok.kind == "op" and tok.value == closing:
                depth -= 1
                if depth == 0:
                    return

    def control(self) -> Stmt:
        line = self.peek().line
        if not self.deeper():
            return Control(line, line, "nested", [], [])
        try:
            return self._control(line)
        finally:
            self.depth -= 1

    def _control(self, line: int) -> Stmt:
        kw = self.next().value
        header: list[Expr] = []
        bodies: list[list[Stmt]] = []
        if kw in ("if", "for", "while", "switch", "when", "synchronized"):
            if self.at("("):
                self.next()
                self.skip_nl()
                while not self.at(")") and self.peek().kind != "eof":
                    start = self.i
                    e = self.expression()
                    if e is not None:
                        header.append(e)
                    self.skip_nl()
                    if self.at(";") or self.at(":") or self.at(",") or (self.peek().kind == "id"
                                                                        and self.peek().value == "in"):
                        self.next()
                    elif self.i == start:
                        self.next()
                self.expect(")")
        bodies.append(self.body())
        while True:
            nxt = self.next_significant()
            if nxt.kind == "id" and nxt.value in ("else", "catch", "finally") or (
                    kw == "do" and nxt.kind == "id" and nxt.value == "while"):
                self.skip_nl()
                word = self.next().value
                if word == "else" and self.at("if", "id"):
                    bodies.append([self.control()])
                    break
                if word in ("catch",) and self.at("("):
                    self.skip_group("(", ")")
                if word == "while" and self.at("("):
                    self.skip_group("(", ")")
                    break
                bodies.append(self.body())
            else:
                break
        return Control(line, self.prev_line(), kw, header, bodies)

    def body(self) -> list[Stmt]:
        self.skip_nl()
        if self.at("{"):
            if not self.deeper():
                return []
            self.next()
            out = self.block("}")
            self.expect("}")
            self.depth -= 1
            return out
        st = self.statement()
        return [st] if st is not None else []

    # -- expressions
    def expression(self, statement: bool = False) -> Expr | None:
        if not self.deeper():
            return None
        try:
            return self._expression(statement)
        finally:
            self.depth -= 1

    def _expression(self, statement: bool) -> Expr | None:
        left = self.unary(statement)
        if left is None:
            return None
        while True:
            tok = self.peek()
            word = tok.value if tok.kind in ("op", "id") else None
            if word == "!" and self.peek(1).kind == "id" and self.peek(1).value in ("in", "is"):
                self.next()
                word = "!" + self.peek().value
            if word in _BINARY:
                self.next()
                if word == "as" and self.at("?"):
                    self.next()
                self.skip_nl()
                if word in ("as", "is", "!is", "instanceof", "as?"):
                    start = self.peek().line
                    self.type_ref()
                    left = Op(left.line, word, [left, Opaque(start, "type")])
                    continue
                right = self.unary(False)
                if right is None:
                    return left
                left = Op(left.line, word, [left, right])
                continue
            if tok.kind == "op" and tok.value == "?":
                self.next()
                self.skip_nl()
                a = self.expression()
                self.skip_nl()
                if self.at(":"):
                    self.next()
                    self.skip_nl()
                b = self.expression()
                left = Op(left.line, "?", [x for x in (left, a, b) if x is not None])
                continue
            return left

    def unary(self, statement: bool) -> Expr | None:
        tok = self.peek()
        ops: list[Tok] = []
        while tok.kind == "op" and tok.value in ("!", "-", "+", "~", "++", "--", "*"):
            ops.append(self.next())  # a run of prefix operators is read in a loop, never by recursion
            tok = self.peek()
        e = self.postfix(statement)
        for op in reversed(ops):
            e = Op(op.line, op.value, [e] if e else [])
        return e

    def postfix(self, statement: bool) -> Expr | None:
        e = self.primary()
        if e is None:
            return None
        head = statement  # a Groovy command call may still start here
        while True:
            tok = self.peek()
            if tok.kind == "op" and tok.value in (".", "?.", "*.", "::", ".&", ".@") or (
                    tok.kind == "nl" and self.continues_with_member()):
                self.skip_nl()
                self.next()
                self.skip_nl()
                name_tok = self.peek()
                if name_tok.kind == "id":
                    self.next()
                    name = name_tok.value
                elif name_tok.kind == "str":
                    self.next()
                    name = "".join(p if isinstance(p, str) else "" for p in name_tok.parts)
                else:
                    return e
                targs: tuple[str, ...] = ()
                if self.at("<") and self.generic_before_call():
                    targs = self.type_args
                if self.at("("):
                    args = self.arguments()
                    e = Call(e.line, e, name, args, self.trailing_closure(), type_args=targs)
                elif self.at("{"):
                    e = Call(e.line, e, name, [], self.closure(), type_args=targs)
                else:
                    e = Member(e.line, e, name)
                continue
            if tok.kind == "op" and tok.value == "<" and isinstance(e, (Name, Member)) and self.generic_before_call():
                targs = self.type_args
                if self.at("("):
                    e = self.to_call(e, self.arguments(), self.trailing_closure())
                else:
                    e = self.to_call(e, [], self.closure())
                if isinstance(e, Call):
                    e.type_args = targs
                continue
            if tok.kind == "op" and tok.value == "(":
                args = self.arguments()
                e = self.to_call(e, args, self.trailing_closure())
                continue
            if tok.kind == "op" and tok.value == "{" and isinstance(e, (Name, Member, Call)):
                if isinstance(e, Call):
                    if e.closure is not None:
                        return e
                    e.closure = self.closure()
                else:
                    e = self.to_call(e, [], self.closure())
                continue
            if tok.kind == "op" and tok.value in ("[", "?.["):
                self.next()
                self.skip_nl()
                key = self.expression() if not self.at("]") else None
                while self.at(","):
                    self.next()
                    self.expression()
                self.skip_nl()
                self.expect("]")
                e = Index(e.line, e, key)
                continue
            if tok.kind == "op" and tok.value in ("!!", "++", "--"):
                self.next()
                continue
            if statement and isinstance(e, (Name, Member, Call)) and self.starts_argument():
                if isinstance(e, Call) or not head:
                    # a chain on the same line: ``id 'x' version 'y' apply false`` (Groovy),
                    # ``id("x") version "y"`` (Kotlin infix)
                    nxt = self.peek(1)
                    if tok.kind != "id" or not (nxt.kind in ("str", "num", "id") or nxt.kind == "op"
                                                and nxt.value in ("(", "{", "[")):
                        return e
                    name = self.next().value
                    if self.at("("):
                        e = Call(e.line, e, name, self.arguments(), self.trailing_closure())
                    elif self.at("{"):
                        e = Call(e.line, e, name, [], self.closure())
                    else:
                        e = Call(e.line, e, name, self.command_arguments(), self.trailing_closure(), parens=False)
                    continue
                args = self.command_arguments()
                if not args:
                    return e
                e = self.to_call(e, args, self.trailing_closure(), parens=False)
                head = False
                continue
            return e

    def generic_before_call(self) -> bool:
        save = self.i
        if self.generic() and (self.at("(") or self.at("{")):
            return True
        self.i = save
        return False

    def continues_with_member(self) -> bool:
        nxt = self.next_significant()
        return nxt.kind == "op" and nxt.value in (".", "?.")

    def starts_argument(self) -> bool:
        tok = self.peek()
        if tok.kind in ("str", "num"):
            return True
        if tok.kind == "id":
            return tok.value not in _BINARY and tok.value not in ("else", "catch", "finally")
        return False

    def to_call(self, e: Expr, args: list[Arg], closure: "Closure | None", parens: bool = True) -> Expr:
        if isinstance(e, Name):
            return Call(e.line, None, e.name, args, closure, parens)
        if isinstance(e, Member):
            return Call(e.line, e.target, e.name, args, closure, parens)
        # ``f(a)(b)`` or ``x[0](y)``: the call of a value
        return Call(e.line, e, "call", args, closure, parens)

    def trailing_closure(self) -> "Closure | None":
        if self.at("{"):
            return self.closure()
        return None

    def closure(self) -> "Closure | None":
        line = self.peek().line
        if not self.deeper():
            return None
        self.next()  # {
        # parameters: ``{ a, b -> …}`` / ``{ it -> …}``
        j = self.i
        while self.t[j].kind in ("id", "nl") or self.t[j].kind == "op" and self.t[j].value in (",", ":", "<", ">",
                                                                                                 "?", "."):
            j += 1
            if j - self.i > 32:
                break
        if self.t[j].kind == "op" and self.t[j].value == "->":
            self.i = j + 1
        body = self.block("}")
        end = self.peek().line
        self.expect("}")
        self.depth -= 1
        return Closure(line, body, end)

    def arguments(self) -> list[Arg]:
        self.next()  # (
        out: list[Arg] = []
        self.skip_nl()
        while not self.at(")") and self.peek().kind != "eof":
            if self.at("]") or self.at("}"):  # a bracket that closes something else ends the list
                self.errors.append((self.peek().line, f"unbalanced {self.peek().value!r} in arguments"))
                if self.at("]"):
                    self.next()
                return out
            start = self.i
            arg = self.argument(kotlin_named=True)
            if arg is not None:
                out.append(arg)
            self.after_item(")", start)
        self.expect(")")
        return out

    def after_item(self, closing: str, start: int) -> None:
        """After one item of an argument list or a list literal: its comma, or the closing bracket;
        anything else is an error and the rest of the list is skipped."""
        self.skip_nl()
        if self.at(","):
            self.next()
            self.skip_nl()
        elif not self.at(closing):
            if self.i == start:
                self.next()
            else:
                tok = self.peek()
                self.errors.append((tok.line, f"unexpected {tok.value or tok.kind!r} in a list"))
                self.skip_until(closing)

    def skip_until(self, closing: str) -> None:
        depth = 0
        while self.peek().kind != "eof":
            tok = self.peek()
            if tok.kind == "op" and tok.value in "([{":
                depth += 1
            elif tok.kind == "op" and tok.value in ")]}":
                if depth == 0 and tok.value == closing:
                    return
                if depth == 0:
                    return
                depth -= 1
            self.next()

    def command_arguments(self) -> list[Arg]:
        out: list[Arg] = []
        while True:
            arg = self.argument(kotlin_named=False)
            if arg is None:
                break
            out.append(arg)
            if self.at(","):
                self.next()
                self.skip_nl()
                continue
            break
        return out

    def argument(self, kotlin_named: bool) -> Arg | None:
        tok, nxt = self.peek(), self.peek(1)
        if tok.kind in ("id", "str") and nxt.kind == "op" and nxt.value == ":" and not (
                self.peek(2).kind == "op" and self.peek(2).value == ":"):
            self.next()
            self.next()
            self.skip_nl()
            name = tok.value if tok.kind == "id" else "".join(p for p in tok.parts if isinstance(p, str))
            value = self.expression()
            return Arg(name, value or Opaque(tok.line, ""))
        if kotlin_named and tok.kind == "id" and nxt.kind == "op" and nxt.value == "=":
            self.next()
            self.next()
            self.skip_nl()
            value = self.expression()
            return Arg(tok.value, value or Opaque(tok.line, ""))
        value = self.expression()
        return Arg(None, value) if value is not None else None

    def primary(self) -> Expr | None:
        tok = self.peek()
        if tok.kind == "str":
            self.next()
            return Str(tok.line, tok.parts)
        if tok.kind == "num":
            self.next()
            return Num(tok.line, tok.value)
        if tok.kind == "id":
            if tok.value == "new":
                self.next()
                start = tok.line
                self.type_ref()
                inner: list[Expr] = []
                if self.at("("):
                    inner = [a.value for a in self.arguments()]
                if self.at("{"):
                    self.skip_group("{", "}")
                return Opaque(start, "new", inner)
            if tok.value in _KEYWORD_CONTROL and tok.value in ("if", "when", "try"):
                st = self.control()
                return Opaque(tok.line, tok.value, [])  if not isinstance(st, Control) else \
                    Opaque(tok.line, tok.value, st.header)
            self.next()
            return Name(tok.line, tok.value)
        if tok.kind == "op":
            if tok.value == "(":
                self.next()
                self.skip_nl()
                inner_e = self.expression()
                self.skip_nl()
                while self.at(","):  # a Kotlin/Groovy tuple-ish or lambda parameter list
                    self.next()
                    self.expression()
                self.expect(")")
                return inner_e if inner_e is not None else Opaque(tok.line, "()")
            if tok.value == "[":
                return self.list_or_map()
            if tok.value == "{":
                return self.closure()
            if tok.value == "::":
                self.next()
                if self.peek().kind == "id":
                    self.next()
                return Opaque(tok.line, "::")
        return None

    def list_or_map(self) -> Expr:
        line = self.next().line  # [
        self.skip_nl()
        if self.at(":"):
            self.next()
            self.skip_nl()
            self.expect("]")
            return MapLit(line, [])
        items: list[Expr] = []
        entries: list[Arg] = []
        while not self.at("]") and self.peek().kind != "eof":
            start = self.i
            arg = self.argument(kotlin_named=False)
            if arg is not None:
                if arg.name is not None:
                    entries.append(arg)
                else:
                    items.append(arg.value)
            self.after_item("]", start)
        self.expect("]")
        return MapLit(line, entries) if entries and not items else ListLit(line, items)


def read_script(path: str, text: str) -> Script:
    """Read one build or settings script (``.gradle``: Groovy; ``.gradle.kts``: Kotlin).

    Returns the statements and the errors the reader met (line, message); never raises. A lone
    ``\\r`` ends a line (and a statement) as ``\\n`` does: lines are those of evidence
    (:mod:`diting.source.text`)."""
    text = normalize_line_ends(text)
    errors: list[tuple[int, str]] = []
    toks = lex(text, errors, "kotlin" if path.endswith(".kts") else "groovy")
    reader = _Reader(toks, errors)
    try:
        statements = reader.block(None)
    except RecursionError:  # pragma: no cover - the depth bound keeps Python's stack far away
        errors.append((reader.peek().line, "nested too deeply to read"))
        statements = []
    lines = split_lines(text)
    return Script(path, "kotlin" if path.endswith(".kts") else "groovy", statements, lines, sorted(set(errors)))


def parse_expression(text: str) -> Expr | None:
    """One expression from text (a ``${…}`` template's inside); None when it is not one."""
    if len(text) > 4096:
        return None
    errors: list[tuple[int, str]] = []
    reader = _Reader(lex(text, errors), errors)
    try:
        e = reader.expression()
    except RecursionError:  # pragma: no cover - the reader's depth bound comes first
        return None
    return e if not errors and reader.peek().kind == "eof" else None
