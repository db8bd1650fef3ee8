"""Pointcut verdicts of diting.resolve.aop: which advice can never run in a package."""

from diting.resolve.aop import NEVER, RUNS, UNKNOWN, PointcutReader

USED = {"com.acme.Audited"}
POINTCUTS = {"audited": "@annotation(com.acme.Audited)", "traced": "@annotation(com.acme.Traced)",
             "loop": "loop()"}


def verdict(expr: str, params: dict[str, str] | None = None) -> tuple[str, list[str]]:
    def named(ref: str) -> str | None:
        return POINTCUTS.get(ref.rsplit(".", 1)[-1])
    v = PointcutReader(USED.__contains__, named, params or {}).verdict(expr)
    return v.status, v.annotations


def test_annotation_designators():
    assert verdict("@annotation(com.acme.Audited)") == (RUNS, ["com.acme.Audited"])
    assert verdict("@annotation(com.acme.Traced)") == (NEVER, ["com.acme.Traced"])
    # bound to the advice's parameter: its type is the annotation
    assert verdict("@annotation(t)", {"t": "com.acme.Traced"})[0] == NEVER
    assert verdict("@annotation(a)", {"a": "com.acme.Audited"})[0] == RUNS
    assert verdict("@annotation(x)")[0] == UNKNOWN  # no such parameter


def test_pointcut_references_and_operators():
    assert verdict("traced()")[0] == NEVER
    assert verdict("com.acme.aop.Pointcuts.audited()")[0] == RUNS
    assert verdict("missing()")[0] == UNKNOWN
    assert verdict("loop()")[0] == UNKNOWN  # a cycle of references ends undecided
    assert verdict("traced() || audited()")[0] == RUNS
    assert verdict("traced() or @annotation(com.acme.Other)")[0] == NEVER
    assert verdict("traced() && execution(* com.acme..*(..))")[0] == NEVER
    assert verdict("(audited() && within(com.acme..*))")[0] == UNKNOWN
    assert verdict("!traced()")[0] == UNKNOWN


def test_designators_not_evaluated_stay_undecided():
    for expr in ("execution(* com.acme..*Service.*(..))", "within(com.acme..*)", "@within(com.acme.Traced)",
                 "bean(orderService)", "traced() || execution(* *(..))", "@annotation(", ""):
        assert verdict(expr)[0] == UNKNOWN, expr
