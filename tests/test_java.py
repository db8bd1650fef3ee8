"""java/: syntax facts, identities (docs/ir.md §2), erasure, Lombok, constants, hostile sources."""

from __future__ import annotations

from diting.ir.builder import RecordSet
from diting.java.constants import ConstantFolder
from diting.java.names import FileScope, TypeRegistry, VisibleTypes, module_types
from diting.java.records import ModuleJava
from diting.java.syntax import extract_file

NS = "com.x:m"


def records(files: dict[str, str | bytes]) -> tuple[RecordSet, ModuleJava, dict]:
    facts = [extract_file(p, s.encode("utf-8") if isinstance(s, str) else s) for p, s in sorted(files.items())]
    visible = VisibleTypes(module_types("m", facts), [])
    visible.own_module = "m"
    scopes = {f.path: FileScope(f, visible) for f in facts}
    registry = TypeRegistry()
    for sc in scopes.values():
        registry.add("m", sc)
    folder = ConstantFolder()
    for f in facts:
        folder.add_file("m", f, scopes[f.path])
    folder.precompute()
    rs = RecordSet("r", "0" * 40)
    mod = rs.entity("MODULE", NS, NS, [rs.segment("pom.xml", ["<project/>"], 1, 1, "BUILD", "utf-8")])
    mj = ModuleJava(rs, NS, mod, {"m": NS}, folder, {"org.springframework.boot.autoconfigure.SpringBootApplication"})
    for f in facts:
        mj.add_file(f, scopes[f.path])
    return rs, mj, {e["stable_id"]: e for e in rs.entities.values()}


def kinds(ents: dict, kind: str) -> set[str]:
    return {s for s, e in ents.items() if e["kind"] == kind}


SHAPES = """package a.b;
import java.util.*;
import java.util.function.Function;
public class Outer<T extends Comparable<T>> {
    class Inner {}
    static class Nested { interface Deep {} }
    enum Mode { ON { void f() {} }, OFF }
    Runnable r = new Runnable() { public void run() {} };
    <K extends Number & Runnable> void generic(K k, T t, List<String>[] arr, int... rest) {}
    void anonymousAndLocal() {
        Object o = new Object() { class InAnon {} };
        class Local { void m() { new Runnable() { public void run() {} }; } }
        Function<String, String> lam = s -> s;
    }
    Outer(Map.Entry<String, Integer> e, Inner i, Nested.Deep d, Unknown u) {}
    static { }
}
"""


def test_binary_names_of_every_kind_of_type():
    rs, mj, ents = records({"src/a/b/Outer.java": SHAPES})
    types = {s.split("/", 1)[1] for s in kinds(ents, "TYPE")}
    assert types == {"a.b.Outer", "a.b.Outer$Inner", "a.b.Outer$Nested", "a.b.Outer$Nested$Deep", "a.b.Outer$Mode",
                     "a.b.Outer$Mode$1", "a.b.Outer$1", "a.b.Outer$2", "a.b.Outer$2$InAnon", "a.b.Outer$1Local",
                     "a.b.Outer$1Local$1"}
    assert mj.result.files[0].types == 11


def test_method_identities_are_erased_binary_names():
    rs, mj, ents = records({"src/a/b/Outer.java": SHAPES})
    methods = {s.split("/", 1)[1] for s in kinds(ents, "METHOD")}
    assert "a.b.Outer#generic(java.lang.Number,java.lang.Comparable,java.util.List[],int[])" in methods
    assert "a.b.Outer#<init>(java.util.Map$Entry,a.b.Outer$Inner,a.b.Outer$Nested$Deep,?Unknown)" in methods
    assert "a.b.Outer#<clinit>()" in methods
    assert "a.b.Outer$Mode$1#f()" in methods
    init = ents[f"{NS}/a.b.Outer#<init>(java.util.Map$Entry,a.b.Outer$Inner,a.b.Outer$Nested$Deep,?Unknown)"]
    assert init["kind"] == "METHOD" and init["signature"][-1] == "?Unknown"
    # javac's default constructors for classes without one
    assert "a.b.Outer$Inner#<init>()" in methods and "a.b.Outer$Mode#<init>()" not in methods
    diags = [d for d in rs.diagnostics.values() if d["code"] == "TYPE_UNRESOLVED"]
    assert len(diags) == 1 and "Unknown" in diags[0]["message"]


def test_supertypes_in_repo_external_and_unresolved():
    files = {
        "src/p/Base.java": "package p; public abstract class Base implements java.io.Serializable {}",
        "src/p/Impl.java": "package p; import q.Missing; public class Impl extends Base implements Runnable, Missing, "
                           "Gone { public void run() {} }",
    }
    rs, _, ents = records(files)
    rels = {(r["kind"], r["stable_id"].split("|")[2], r["resolution_status"]) for r in rs.relations.values()
            if r["kind"] in ("EXTENDS", "IMPLEMENTS")}
    assert rels == {("IMPLEMENTS", "ext:java.io.Serializable", "RESOLVED"), ("EXTENDS", f"{NS}/p.Base", "RESOLVED"),
                    ("IMPLEMENTS", "ext:java.lang.Runnable", "RESOLVED"), ("IMPLEMENTS", "ext:q.Missing", "RESOLVED"),
                    ("IMPLEMENTS", "?Gone", "UNRESOLVED")}
    unresolved = next(r for r in rs.relations.values() if r["resolution_status"] == "UNRESOLVED")
    assert unresolved["match_keys"] == {"type": "Gone"} and unresolved["diagnostic_refs"]
    assert ents["ext:java.lang.Runnable"]["attributes"]["type_kind"] == "INTERFACE"


def test_wildcard_ambiguity_gives_question_mark():
    rs, _, ents = records({"src/p/A.java": "package p; import java.util.*; import java.awt.*; class A { void f(List l) {} }"})
    assert f"{NS}/p.A#f(?List)" in ents


LOMBOK = """package p;
import lombok.*;
import lombok.extern.slf4j.Slf4j;
import org.springframework.stereotype.Service;
@Slf4j @Service @RequiredArgsConstructor
public class Svc {
    private final Repo repo;
    private final Clock clock = null;
    @NonNull private String name;
    private int counter;
    private static final String TOPIC = "t";
}
"""


def test_lombok_members():
    files = {"src/p/Svc.java": LOMBOK, "src/p/Repo.java": "package p; public interface Repo {}",
             "src/p/Clock.java": "package p; public class Clock {}",
             "src/p/Dto.java": "package p; import lombok.Data; @Data public class Dto { private boolean paid; "
                               "private final long id; @lombok.Setter(lombok.AccessLevel.NONE) private String x; "
                               "public String getX() { return x; } }",
             "src/p/Val.java": "package p; @lombok.Value public class Val { String a; int b; }"}
    _, _, ents = records(files)
    m = {s.split("/", 1)[1]: e for s, e in ents.items() if e["kind"] in ("METHOD", "FIELD")}
    ctor = m["p.Svc#<init>(p.Repo,java.lang.String)"]
    assert ctor["attributes"]["synthesized_by"] == "lombok.RequiredArgsConstructor"
    assert m["p.Svc.log"]["attributes"]["type"] == "org.slf4j.Logger"
    assert "p.Svc#<init>()" not in m  # Lombok made a constructor, so javac makes none
    assert {k for k in m if k.startswith("p.Dto#")} == {
        "p.Dto#isPaid()", "p.Dto#setPaid(boolean)", "p.Dto#getId()", "p.Dto#getX()", "p.Dto#<init>(long)"}
    assert {k for k in m if k.startswith("p.Val#")} == {"p.Val#getA()", "p.Val#getB()", "p.Val#<init>(java.lang.String,int)"}


def test_records_get_components_accessors_and_canonical_constructor():
    _, _, ents = records({"src/p/R.java": "package p; public record R(int x, java.util.List<String> ys) "
                                          "{ public int x() { return x; } }"})
    m = {s.split("/", 1)[1] for s, e in ents.items() if e["kind"] in ("METHOD", "FIELD")}
    assert m == {"p.R.x", "p.R.ys", "p.R#x()", "p.R#ys()", "p.R#<init>(int,java.util.List)"}


CONSTS = {
    "src/p/K.java": """package p;
public interface K {
    String PREFIX = "trade_";
    String TOPIC = PREFIX + "order" + '_' + 1 + 2;
    int SIZE = 10 * 2;
    long MILLIS = 30 * 1000L;
    int NEG_DIV = -7 / 2;
    int WRAP = 2147483647 + 1;
    int DIV0 = 1 / 0;
    long BIG = -5L;
    String ESC = "tab\\there \\u4e2d";
    double RATE = 0.5;
    String TB = \"\"\"
        hello
          world\"\"\";
}""",
    "src/p/E.java": "package p; public enum E { A(K.PREFIX + \"a\", 3), B(\"b\", -1); E(String n, int c) {} }",
    "src/q/U.java": """package q;
import static p.K.PREFIX;
import p.K;
public class U implements K {
    static final String FROM_IMPORT = PREFIX + "x";
    static final String FROM_SUPER = TOPIC + "!";
    static final String QUAL = p.K.PREFIX + K.PREFIX;
    static final String CYCLE_A = CYCLE_B + "a";
    static final String CYCLE_B = CYCLE_A + "b";
    static final String CALL = String.valueOf(1);
    final String notStatic = "x";
}""",
}


def test_constant_folding():
    _, _, ents = records(CONSTS)
    def val(name):
        a = ents[f"{NS}/{name}"]["attributes"]
        return (a.get("constant_value"), a.get("constant_type"))
    assert val("p.K.TOPIC") == ("trade_order_12", "java.lang.String")
    assert val("p.K.SIZE") == ("20", "int")
    assert val("p.K.MILLIS") == ("30000", "long") and val("p.K.NEG_DIV") == ("-3", "int")
    assert val("p.K.WRAP") == ("-2147483648", "int") and val("p.K.DIV0") == (None, None)
    assert val("p.K.BIG") == ("-5", "long")
    assert val("p.K.ESC") == ("tab\there 中", "java.lang.String")
    assert val("p.K.RATE") == (None, None)  # floats are never folded
    assert val("p.K.TB") == ("hello\n  world", "java.lang.String")
    assert val("q.U.FROM_IMPORT") == ("trade_x", "java.lang.String")
    assert val("q.U.FROM_SUPER") == ("trade_order_12!", "java.lang.String")
    assert val("q.U.QUAL") == ("trade_trade_", "java.lang.String")
    assert val("q.U.CYCLE_A") == (None, None) and val("q.U.CYCLE_B") == (None, None)
    assert val("q.U.CALL") == (None, None)
    assert "constant_value" not in ents[f"{NS}/q.U.notStatic"]["attributes"]
    a = ents[f"{NS}/p.E.A"]["attributes"]
    assert a["enum_constant"] and a["argument_values"] == [{"value": "trade_a", "type": "java.lang.String"},
                                                           {"value": "3", "type": "int"}]


def test_constant_bombs_are_bounded():
    doubling = "package p; class B { static final String C0 = \"xxxxxxxxxxxxxxxx\";\n" + "".join(
        f"static final String C{i} = C{i - 1} + C{i - 1};\n" for i in range(1, 41)) + "}"
    chain = "package p; class K {\n" + "".join(f"static final int K{i} = K{i + 1} + 1;\n" for i in range(400)) + \
        "static final int K400 = 0; }"
    _, _, ents = records({"src/p/B.java": doubling, "src/p/K.java": chain})
    assert ents[f"{NS}/p.B.C12"]["attributes"]["constant_value"] == "x" * 16 * 4096
    assert "constant_value" not in ents[f"{NS}/p.B.C40"]["attributes"]
    assert ents[f"{NS}/p.K.K0"]["attributes"]["constant_value"] == "400"


def test_parse_errors_keep_what_parsed():
    src = "package p;\npublic class Broken {\n  void ok() {}\n  void bad( {\n  }\n  int after() { return 1; }\n}\n"
    rs, mj, ents = records({"src/p/Broken.java": src})
    assert f"{NS}/p.Broken#ok()" in ents and f"{NS}/p.Broken#after()" in ents
    diag = next(d for d in rs.diagnostics.values() if d["code"] == "PARSE_ERROR")
    assert "4:" in diag["message"] and diag["severity"] == "ERROR"


def test_nul_bytes_and_deep_nesting_do_not_crash():
    nul = b"package p;\nclass N {\n  void a() {}\x00\x00\n  void b() {}\n}\n"
    rs, _, ents = records({"src/p/N.java": nul})
    assert f"{NS}/p.N#a()" in ents
    assert any("NUL" in d["message"] for d in rs.diagnostics.values() if d["code"] == "PARSE_ERROR")
    deep = "package p; class D { static final int X = " + "(" * 3000 + "1" + ")" * 3000 + "; " \
           "static final String S = " + " + ".join(['"a"'] * 20000) + "; }"
    _, _, ents = records({"src/p/D.java": deep})
    assert ents[f"{NS}/p.D.S"]["attributes"]["constant_value"] == "a" * 20000
    assert f"{NS}/p.D.X" in ents


def test_main_methods_and_application_class():
    files = {"src/p/App.java": "package p; import org.springframework.boot.autoconfigure.SpringBootApplication; "
                               "@SpringBootApplication public class App { public static void main(String[] a) {} }",
             "src/p/Tool.java": "package p; public class Tool { public static void main(String... a) {} "
                                "static void main(int x) {} }"}
    _, mj, _ = records(files)
    mains = {m.type_binary: m.application_annotation for m in mj.result.mains}
    assert mains == {"p.App": "org.springframework.boot.autoconfigure.SpringBootApplication", "p.Tool": None}


def test_inherited_member_types_method_type_variables_and_unicode_escapes():
    files = {
        "src/p/Api.java": "package p; public interface Api { interface Status {} enum Code { OK } }",
        "src/p/Base.java": "package p; public abstract class Base implements Api {}",
        "src/p/Impl.java": """package p;
import java.util.Iterator;
public class Impl extends Base {
    Status status(Code c) { return null; }
    static <T> Iterator<T> cycle(Iterable<T> it) {
        return new Iterator<T>() {
            public boolean hasNext() { return true; }
            public T next() { return null; }
            public void accept(T t) {}
        };
    }
    char backslash() { return '\\u005c\\u005c'; }
    char quote() { if ('x' == '\\u005c'') return 'q'; return 'x'; }
}""",
    }
    rs, _, ents = records(files)
    assert f"{NS}/p.Impl#status(p.Api$Code)" in ents
    assert f"{NS}/p.Impl$1#accept(java.lang.Object)" in ents
    assert not [d for d in rs.diagnostics.values() if d["code"] in ("TYPE_UNRESOLVED", "PARSE_ERROR")]


def test_an_escaped_line_break_ends_a_line_comment_as_javac_reads_it():
    """JLS §3.3: ``\\u000a`` is a line break before anything else is read, so a ``//`` comment ends
    there and what follows on the line is compiled. It was read as comment text: the hidden endpoint
    was no fact, with no diagnostic. Now it is read, cited at the file's own line, and every later
    line keeps its number; an escape of an escape (``\\\\u000a``) stays comment text."""
    src = r"""package p;
public class Web {
  // harmless \u000a @GetMapping("/hidden") public String hidden() { return "x"; }
  // carriage \u000d\u000a @GetMapping("/cr") String cr() { return "c"; }
  // \\u000a String notCode() { return "n"; }
  /* block \u000a */ public String shown() {
    return "\u4e2d";
  }
}
"""
    f = extract_file("src/p/Web.java", src.encode())
    (web,) = f.types
    assert [(m.name, m.start_line, m.end_line, [a.name for a in m.annotations]) for m in web.methods] == [
        ("hidden", 3, 3, ["GetMapping"]), ("cr", 4, 4, ["GetMapping"]), ("shown", 6, 8, [])]
    assert (f.errors, f.line_count) == ([], 9)
    _, _, ents = records({"src/p/Web.java": src})
    assert {f"{NS}/p.Web#hidden()", f"{NS}/p.Web#cr()", f"{NS}/p.Web#shown()"} <= set(ents)
    assert f"{NS}/p.Web#notCode()" not in ents


def test_unicode_escapes_translate_as_javac_and_keep_rows_to_lines():
    from diting.java.lexical import translate_unicode_escapes
    assert translate_unicode_escapes("a\\u4e2d b") == ("a\u4e2d b", None)
    assert translate_unicode_escapes("x\\u000ay\nz\\u000d\\u000aw") == ("x\ny\nz\n\nw", [1, 1, 2, 2, 2])
    assert translate_unicode_escapes("'\\u0009' '\\u0000' \\\\u000a \\u005cu000a") == (
        "'\t' '\\u0000' \\\\u000a \\u000a", None)


def test_deep_nesting_is_bounded():
    src = "package p;\n" + "class N{" * 200 + "void m(){}" + "}" * 200 + "\n"
    rs, mj, ents = records({"src/p/N.java": src})
    types = kinds(ents, "TYPE")
    assert len(types) == 65
    assert max(len(t) for t in types) < 1000
    assert any("nested deeper than 64" in d["message"] for d in rs.diagnostics.values())


def test_annotations_nested_in_annotation_arguments():
    """An annotation as an element value (@ComponentScan.Filter, @ApiImplicitParams({@ApiImplicitParam})) is
    an expression of its own; the file's facts are all kept (a regression once lost the whole file)."""
    src = """package p;
@ComponentScan(basePackages = "p.q", excludeFilters = @ComponentScan.Filter(type = FilterType.REGEX, pattern = "x.*"))
public class Config {
    @ApiImplicitParams({@ApiImplicitParam(name = "id"), @ApiImplicitParam(name = "pin")})
    void find() { }
}
"""
    f = extract_file("src/p/Config.java", src.encode())
    assert not f.errors
    scan = f.types[0].annotations[0]
    nested = scan.args["excludeFilters"]
    assert nested["kind"] == "annotation" and nested["name"] == "ComponentScan.Filter"
    assert nested["args"]["pattern"] == {"kind": "str", "value": "x.*"}
    params = f.types[0].methods[0].annotations[0].args["value"]
    assert [i["args"]["name"]["value"] for i in params["items"]] == ["id", "pin"]


def test_call_arguments_are_kept_only_where_a_rule_or_a_kept_expression_needs_them():
    """With the rule set's call names, the extractor keeps every call (name, receiver, arity) but
    extracts arguments only for named calls, what they contain, local initializers, and setters on
    objects being built; every ``callref`` in a kept expression leads to a call with arguments."""
    src = """package p;
class Sender {
  void run(Order o) {
    log.info("sending {}", o.getId());
    String topic = String.format("%s-%s", K.PREFIX, o.region());
    template.send(Topics.valueOf(o.kind()).getName(), build(o));
    Message m = new Message();
    m.setTopic(topic);
    other.setTopic(topic);
    list.forEach(x -> template.send("t", x.toString()));
  }
}
"""
    facts = extract_file("src/p/Sender.java", src.encode(), None, frozenset({"send"}))
    calls = {(c.name, c.line): c for c in facts.types[0].methods[0].body.calls}
    kept = sorted((name, line) for (name, line), c in calls.items() if c.args is not None)
    assert kept == [("Message", 7), ("build", 6), ("format", 5), ("getName", 6), ("kind", 6), ("region", 5),
                    ("send", 6), ("send", 10), ("setTopic", 8), ("toString", 10), ("valueOf", 6)]
    info = calls[("info", 4)]
    assert info.args is None and info.arity == 2 and info.receiver == {"kind": "name", "parts": ["log"]}
    assert calls[("setTopic", 9)].args is None and calls[("setTopic", 9)].arity == 1
    assert calls[("getId", 4)].args is None and calls[("getId", 4)].arity == 0
    # without names every call keeps its arguments, and the kept ones are the same either way
    full = extract_file("src/p/Sender.java", src.encode())
    for c in full.types[0].methods[0].body.calls:
        assert c.args is not None
        if calls[(c.name, c.line)].args is not None:
            assert calls[(c.name, c.line)].args == c.args


def test_branch_arms_have_stable_structural_paths():
    """java/branches.py: else-if nests, switch groups and rules, catch/finally, loops, early returns
    (not the last statement, not a lambda's), throws; each call under its innermost arm."""
    from diting.java.branches import MAX_BRANCH_DEPTH
    src = b"""class A {
  int m(Kind k, java.util.List<String> xs) {
    if (k == null) { return 0; } else if (k.big()) { a(); } else { throw new IllegalStateException(); }
    switch (k) { case ONE: case TWO: b(); break; default: c(); }
    String s = switch (k.name()) { case "a/b" -> "x"; default -> { yield "y"; } };
    try (java.io.Reader r = open()) { d(); } catch (java.io.IOException | RuntimeException e) { e(); } finally { f(); }
    for (String x : xs) { xs.forEach(y -> { if (y.isEmpty()) { return; } g(); }); }
    return 1;
  }
}"""
    facts = extract_file("A.java", src)
    body = facts.types[0].methods[0].body
    paths = [(b.path, b.kind, b.outcome) for b in body.branches]
    assert paths == [
        ("if[0]/then", "IF", "RETURN"), ("if[0]/then/return[0]", "RETURN", "RETURN"),
        ("if[0]/else", "ELSE", "CONTINUE"), ("if[0]/else/if[0]/then", "IF", "CONTINUE"),
        ("if[0]/else/if[0]/else", "ELSE", "THROW"), ("if[0]/else/if[0]/else/throw[0]", "THROW", "THROW"),
        ("switch[0]/case[ONE,TWO]", "CASE", "BREAK"), ("switch[0]/default", "DEFAULT", "CONTINUE"),
        ('switch[1]/case["a%2Fb"]', "CASE", "CONTINUE"), ("switch[1]/default", "DEFAULT", "BREAK"),
        ("try[0]/catch[java.io.IOException|RuntimeException]", "CATCH", "CONTINUE"), ("try[0]/finally", "FINALLY", "CONTINUE"),
        ("loop[0]", "LOOP", "CONTINUE"), ("loop[0]/if[0]/then", "IF", "RETURN"),
    ]
    by_name = {c.name: c for c in body.calls}
    assert body.branches[by_name["a"].branch].path == "if[0]/else/if[0]/then"
    assert body.branches[by_name["g"].branch].path == "loop[0]"  # the lambda's call runs in the loop
    assert by_name["open"].branch == -1 and by_name["d"].branch == -1  # the try block is no arm
    catch = next(b for b in body.branches if b.kind == "CATCH")
    assert {body.calls[o].name for o in catch.try_calls} == {"open", "d"}
    assert body.branches[0].cond_names == ["k"]
    assert {body.calls[o].name for o in body.branches[3].cond_calls} == {"big"}
    # nesting beyond the budget is cut, and the body says so
    deep = b"class B { void m(boolean x) { " + b"if (x) { " * (MAX_BRANCH_DEPTH + 5) + b"h();" + \
        b" }" * (MAX_BRANCH_DEPTH + 5) + b" } }"
    deep_body = extract_file("B.java", deep).types[0].methods[0].body
    assert deep_body.branches_truncated and len(deep_body.branches) == MAX_BRANCH_DEPTH
    assert deep_body.branches[deep_body.calls[0].branch].path.count("if[0]") == MAX_BRANCH_DEPTH


def test_a_lone_cr_ends_a_line_for_javac_and_for_evidence():
    """A lone CR ends a line for javac (a `//` comment ends there) and for evidence alike: lines of a
    file mixing lone CR, LF and CRLF are counted at each of them."""
    src = b"class A {\r  // note\r  void m() { a(); }\r  void n() {\n b(); }\r\n}\r"
    facts = extract_file("A.java", src)
    methods = {m.name: m for m in facts.types[0].methods}
    assert set(methods) == {"m", "n"} and not facts.errors
    assert (methods["m"].start_line, methods["n"].start_line, methods["n"].end_line) == (3, 4, 5)
    assert [(c.name, c.line) for c in methods["n"].body.calls] == [("b", 5)]
    assert facts.lines == ["class A {", "  // note", "  void m() { a(); }", "  void n() {", " b(); }\r", "}"]
    from diting.java.lexical import text_block_value
    assert text_block_value('"""\r\n    select *\r\n    from t\r\n    """') == "select *\nfrom t\n"  # JLS 3.10.6: LF
