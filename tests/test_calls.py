"""resolve/calls.py: which method a call site reaches — overloads, same simple names in two
packages, interfaces with one or several implementations, static imports, super, constructors and
library calls."""

from __future__ import annotations

import pytest

from diting.java.facts import type_chain
from diting.java.syntax import extract_file
from diting.resolve.calls import CallResolver
from diting.resolve.types import MemberContext
from diting.scan.pipeline import SCAN_STAGES, ScanOptions, given_facts
from diting.scan.progress import Progress
from diting.scan.stages import run_stages

from .conftest import SHOP_FILES, make_repo

FILES = {
    **SHOP_FILES,
    "src/main/java/com/ex/Util.java": "package com.ex;\npublic final class Util {\n"
    "    public static String norm(String s) { return s; }\n    private Util() { }\n}\n",
    "src/main/java/com/ex/Msg.java": "package com.ex;\npublic final class Msg {\n"
    "    public static String get(String code) { return code; }\n"
    "    public static String get(String code, Object... args) { return code; }\n}\n",
    "src/main/java/com/ex/Pay.java": "package com.ex;\npublic interface Pay { void pay(long id); }\n",
    "src/main/java/com/ex/Notify.java": "package com.ex;\npublic interface Notify { void send(String m); }\n",
    "src/main/java/com/ex/CardPay.java": "package com.ex;\npublic class CardPay implements Pay { public void pay(long id) { } }\n",
    "src/main/java/com/ex/SmsNotify.java": "package com.ex;\npublic class SmsNotify implements Notify { public void send(String m) { } }\n",
    "src/main/java/com/ex/MailNotify.java": "package com.ex;\npublic class MailNotify implements Notify { public void send(String m) { } }\n",
    "src/main/java/com/ex/Base.java": "package com.ex;\npublic class Base { protected void audit(String s) { } }\n",
    "src/main/java/com/ex/OrderService.java": """package com.ex;

import static com.ex.Util.norm;

import java.util.ArrayList;
import java.util.List;

public class OrderService extends Base {
    private Pay pay;
    private Notify notify;
    private final List<String> log = new ArrayList<>();

    public OrderService() { this(1); }
    public OrderService(int n) { }

    void find(com.ex.a.Order o) { }
    void find(com.ex.b.Order o) { }
    void find(long id, boolean deep) { }

    public void run(com.ex.a.Order a, com.ex.b.Order b, Object any) {
        find(a);
        find(b);
        find(any);
        find(1L, true);
        pay.pay(a.id);
        notify.send(norm("x"));
        super.audit("y");
        log.add("z");
        new CardPay();
        toString();
        Msg.get("a");
        Msg.get("a", 1, 2);
    }

    @Override
    protected void audit(String s) { }
}
""",
}


@pytest.fixture(scope="module")
def calls(tmp_path_factory):
    """call site text (name and line) → resolution, for OrderService.run and its constructors."""
    tmp = tmp_path_factory.mktemp("calls")
    repo, sha = make_repo(tmp, FILES)
    facts = given_facts(repo, sha, ScanOptions(out=tmp / "out", repo_id="t/calls", quiet=True, jobs=1))
    with facts.repo:  # the stages up to name resolution
        run_stages([st for st in SCAN_STAGES if st.name in ("tree", "build", "sources", "names")], facts,
                   Progress(quiet=True))
    resolver = CallResolver(facts.oracle)
    path = "src/main/java/com/ex/OrderService.java"
    scope = facts.scopes[path]
    # every call with its arguments (a scan extracts the arguments only of calls a rule names)
    facts = extract_file(path, (repo / path).read_bytes())
    (idx,) = [i for i, t in enumerate(facts.types) if t.simple_name == "OrderService"]
    chain = type_chain(facts, idx)
    out = {}
    for md in facts.types[idx].methods:
        if md.body is None:
            continue
        ctx = MemberContext(scope, chain, "pom.xml", md, md.body, scope.type_vars_for(chain, md.type_params))
        for call in md.body.calls:
            out[(md.name, call.name, call.line)] = resolver.resolve(call, ctx)
    return out


def _one(calls, method: str, name: str, nth: int = 0):
    hits = sorted((k for k in calls if k[0] == method and k[1] == name), key=lambda k: k[2])
    return calls[hits[nth]]


def test_overloads_by_argument_type_and_same_simple_names(calls):
    a = _one(calls, "run", "find", 0)
    b = _one(calls, "run", "find", 1)
    assert (a.status, [t.params for t in a.targets]) == ("RESOLVED", [("com.ex.a.Order",)])
    assert (b.status, [t.params for t in b.targets]) == ("RESOLVED", [("com.ex.b.Order",)])
    any_ = _one(calls, "run", "find", 2)  # an Object argument fits neither Order: no guess
    assert any_.status == "UNRESOLVED"
    two = _one(calls, "run", "find", 3)
    assert (two.status, two.dispatch_kind, two.targets[0].params) == ("RESOLVED", "VIRTUAL", ("long", "boolean"))


def test_interface_dispatch_to_its_implementations(calls):
    p = _one(calls, "run", "pay")
    assert (p.status, p.dispatch_kind, p.targets[0].binary, p.declared.binary) == \
        ("RESOLVED", "INTERFACE", "com.ex.CardPay", "com.ex.Pay")
    n = _one(calls, "run", "send")
    assert (n.status, n.dispatch_kind, sorted(t.binary for t in n.targets)) == \
        ("AMBIGUOUS", "INTERFACE", ["com.ex.MailNotify", "com.ex.SmsNotify"])


def test_static_import_super_constructors_and_library_calls(calls):
    norm = _one(calls, "run", "norm")
    assert (norm.status, norm.dispatch_kind, norm.targets[0].signature) == \
        ("RESOLVED", "STATIC", "com.ex.Util#norm(java.lang.String)")
    sup = _one(calls, "run", "audit")
    assert (sup.status, sup.dispatch_kind, sup.targets[0].binary) == ("RESOLVED", "STATIC", "com.ex.Base")
    add = _one(calls, "run", "add")
    assert (add.status, add.external, add.targets[0].signature) == ("RESOLVED", True, "java.util.List#add(?)")
    new = _one(calls, "run", "com.ex.CardPay") if any(k[1] == "com.ex.CardPay" for k in calls) else \
        _one(calls, "run", "CardPay")
    assert (new.status, new.dispatch_kind, new.targets[0].signature) == ("RESOLVED", "STATIC", "com.ex.CardPay#<init>()")
    this_ctor = _one(calls, "<init>", "this")
    assert (this_ctor.status, this_ctor.targets[0].params) == ("RESOLVED", ("int",))
    fixed = _one(calls, "run", "get", 0)  # both fit one argument: the non-varargs one wins (JLS 15.12.2)
    assert (fixed.status, fixed.targets[0].params) == ("RESOLVED", ("java.lang.String",))
    va = _one(calls, "run", "get", 1)
    assert (va.status, va.targets[0].params) == ("RESOLVED", ("java.lang.String", "java.lang.Object[]"))
    ts = _one(calls, "run", "toString")  # inherited from java.lang.Object: an external target
    assert (ts.status, ts.external) == ("RESOLVED", True)
