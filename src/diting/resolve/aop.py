"""Whether a Spring AOP advice can run in a package: its pointcut against the annotations in use.

An ``@Aspect`` bean's advice (``@Around``, ``@Before``, ``@After``, ``@AfterReturning``,
``@AfterThrowing``) runs only at join points its pointcut matches. For the one designator this
reads — ``@annotation(T)`` — a join point is a method carrying annotation ``T``; when no loaded
method of the package carries it, the advice never runs there. The pointcut language read:
``@annotation(com.x.T)``, ``@annotation(param)`` bound to the advice method's parameter of type
``T``, references to ``@Pointcut`` methods (``name()``, ``Aspect.name()``), ``&&`` / ``||`` /
``!`` (also ``and`` / ``or`` / ``not``) and parentheses. Every other designator (``execution``,
``within``, ``@within``, ``bean`` …) is not evaluated: its advice may run (never dropped).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable

#: verdicts of a pointcut: it matches no join point, matches one, or is not decided
NEVER, RUNS, UNKNOWN = "NEVER", "RUNS", "UNKNOWN"

_TOKEN = re.compile(r"\s*(\|\||&&|!|\(|\)|@?[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)")
#: how deep ``@Pointcut`` references are followed (a cycle ends as UNKNOWN)
MAX_POINTCUT_DEPTH = 16
#: parentheses and negations nested deeper than this leave a pointcut UNKNOWN
MAX_NESTING = 64


def _nesting(tokens: list[str]) -> int:
    """The deepest nesting of ``(`` and runs of ``!`` in a token list."""
    depth = deepest = run = 0
    for t in tokens:
        run = run + 1 if t == "!" else 0
        depth += (t == "(") - (t == ")")
        deepest = max(deepest, depth + run)
    return deepest


@dataclass
class Verdict:
    """A pointcut's verdict and the annotation types it was decided on (``@annotation`` types read)."""

    status: str
    annotations: list[str] = field(default_factory=list)


class PointcutReader:
    """Evaluates pointcut expressions of one advice.

    ``used(fqn)``: whether a loaded method of the package carries annotation ``fqn``;
    ``pointcut(name)``: the expression of the ``@Pointcut`` method a reference names (``name`` as
    written, without ``()``), or None; ``params``: the advice method's parameter name → type."""

    def __init__(self, used: Callable[[str], bool], pointcut: Callable[[str], str | None],
                 params: dict[str, str]) -> None:
        self.used = used
        self.pointcut = pointcut
        self.params = params
        self.annotations: list[str] = []

    def verdict(self, expression: str) -> Verdict:
        """The verdict of ``expression`` (UNKNOWN when it does not parse)."""
        self.annotations = []
        status = self._eval(expression, 0)
        return Verdict(status, sorted(set(self.annotations)))

    def _eval(self, expression: str, depth: int) -> str:
        if depth > MAX_POINTCUT_DEPTH:
            return UNKNOWN
        toks = self._tokens(expression)
        if toks is None or _nesting(toks) > MAX_NESTING:
            return UNKNOWN  # the parser below recurses per '(' and '!': deeper input is not decided
        self._toks, self._i, self._depth = toks, 0, depth
        try:
            got = self._or()
        except ValueError:
            return UNKNOWN
        return got if self._i == len(toks) else UNKNOWN

    @staticmethod
    def _tokens(text: str) -> list[str] | None:
        out: list[str] = []
        pos = 0
        text = text.strip()
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if m is None:
                # the argument text of a designator this does not read (execution(* com..*(..)))
                out.append(text[pos])
                pos += 1
                continue
            out.append({"and": "&&", "or": "||", "not": "!"}.get(m.group(1), m.group(1)))
            pos = m.end()
        return out

    def _peek(self) -> str | None:
        return self._toks[self._i] if self._i < len(self._toks) else None

    def _next(self) -> str:
        if self._i >= len(self._toks):
            raise ValueError("end of expression")
        self._i += 1
        return self._toks[self._i - 1]

    def _or(self) -> str:
        parts = self._chain("||", self._and)
        return RUNS if RUNS in parts else NEVER if all(p == NEVER for p in parts) else UNKNOWN

    def _and(self) -> str:
        parts = self._chain("&&", self._not)
        return NEVER if NEVER in parts else RUNS if all(p == RUNS for p in parts) else UNKNOWN

    def _chain(self, op: str, operand: Callable[[], str]) -> list[str]:
        """The verdicts of ``operand (op operand)*``."""
        parts = [operand()]
        while self._peek() == op:
            self._next()
            parts.append(operand())
        return parts

    def _not(self) -> str:
        if self._peek() == "!":
            self._next()
            self._not()
            return UNKNOWN  # the complement of a set of join points is not decided here
        if self._peek() == "(":
            self._next()
            got = self._or()
            if self._next() != ")":
                raise ValueError("unbalanced")
            return got
        return self._designator()

    def _designator(self) -> str:
        name = self._next()
        if self._next() != "(":
            raise ValueError("a designator needs arguments")
        args: list[str] = []
        level = 1
        while True:
            t = self._next()
            if t == "(":
                level += 1
            elif t == ")":
                level -= 1
                if level == 0:
                    break
            args.append(t)
        if name == "@annotation":
            if len(args) != 1:
                return UNKNOWN
            fqn = args[0] if "." in args[0] else self.params.get(args[0])
            if fqn is None:
                return UNKNOWN
            self.annotations.append(fqn)
            return RUNS if self.used(fqn) else NEVER
        if name.startswith("@") or args:
            return UNKNOWN  # a designator not evaluated (execution, within, @within, args, bean …)
        expr = self.pointcut(name)
        if expr is None:
            return UNKNOWN
        saved = (self._toks, self._i, self._depth)
        got = self._eval(expr, self._depth + 1)
        self._toks, self._i, self._depth = saved
        return got
