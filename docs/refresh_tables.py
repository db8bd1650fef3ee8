"""Refresh the generated tables of the pages in docs/ from the code that owns what they list.

    python docs/refresh_tables.py           # rewrite the tables in place
    python docs/refresh_tables.py --check   # change nothing; exit 1 when a page is not current

A generated table sits between ``<!-- generated: NAME -->`` and ``<!-- end: NAME -->``; the rest
of a page is written by hand. The values come from the code (``diting.ir.models`` and ``ids`` for
the IR, ``diting.graph.align`` for match bases, ``diting.probes.model`` and the shipped rule files
for rules); the one-line meanings of vocabulary values are kept below, and a value without a
meaning (a diagnostic code added to the catalogue, say) or a meaning of a value the code no longer
has stops the refresh — so the pages list exactly what the code has. ``tests/test_docs.py`` runs
the check.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any, get_args

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
sys.path.insert(0, str(ROOT / "src"))

# ------------------------------------------------------------------------------------- meanings

FILE_MEANINGS = {
    "manifest.json": "the package's identity, status and every other file with its sha256 and record count",
    "analysis_input.json": "everything that can change what the scan writes; its sha256 is `input_digest`",
    "entities.jsonl": "one entity a line",
    "relations.jsonl": "one relation a line",
    "source_segments.jsonl": "one evidence segment a line",
    "config_bindings.jsonl": "one config binding a line (a consumer reading a key, and the value found)",
    "diagnostics.jsonl": "one diagnostic a line",
    "branch_ledger.jsonl": "one branch ledger item a line",
    "coverage.json": "the package's coverage counts and its status with the reason",
}

ENTITY_MEANINGS = {
    "MODULE": "a Maven module or Gradle project of the package",
    "ARTIFACT": "a dependency that is not a module of the package: a library, or an in-repo module outside the "
                "package (`in_repo_module`)",
    "SERVICE": "the deployable the package is about (absent from `lib:` packages)",
    "TYPE": "a class, interface, enum, record or annotation type",
    "METHOD": "a method, constructor (`<init>`) or static initialiser (`<clinit>`)",
    "FIELD": "a field or enum constant",
    "BEAN": "a Spring bean the package declares (stereotype, `@Bean`, XML `<bean>`, RPC or Feign proxy …)",
    "ENTRY": "a way into the service: RPC provider method, HTTP endpoint, gateway route, MQ consumer, job, "
             "event listener, `main`",
    "CONTRACT": "an RPC method or HTTP endpoint, provided or consumed",
    "TOPIC": "a message destination (topic, exchange with routing key, queue, JMS destination)",
    "EVENT": "a Spring application event type (in-process)",
    "TABLE": "a logical table of one datasource",
    "SQL_STATEMENT": "a MyBatis statement, annotation SQL, MyBatis-Plus inherited statement or JDBC SQL string",
    "CONFIG_KEY": "a configuration key (Spring and config-centre keys, Ducc keys)",
    "CACHE_KEY": "a cache key prefix (JimDB, Redis)",
    "EXTERNAL": "a library type, method or field named by the code but not declared in the package",
}

ENTRY_MEANINGS = {
    "JSF_PROVIDER": "a method of an interface a JSF provider exports",
    "DUBBO_PROVIDER": "a method of an interface a Dubbo service exports",
    "HTTP_ENDPOINT": "a handler method mapped to a path and HTTP method",
    "GATEWAY_ROUTE": "a route of an API gateway: the incoming path pattern it forwards",
    "MQ_CONSUMER": "a method that handles messages of a topic or queue",
    "SCHEDULED_JOB": "a method a scheduler runs (`@Scheduled`, XXL-Job …)",
    "EVENT_LISTENER": "a method that handles a Spring application event",
    "MAIN": "a `public static void main` of a root module",
    "OTHER": "an entry of a rule that names no better kind",
}

RELATION_MEANINGS = {
    "CONTAINS": "structure: a service its modules, a module its types and statements, a type its members and nested "
                "types",
    "EXTENDS": "a type's superclass (or an interface's super-interfaces)",
    "IMPLEMENTS": "an interface a class implements",
    "INJECTS": "an injection point (field, constructor or setter) receives a bean",
    "CALLS": "one call site: a method calls a method, an RPC/HTTP contract or a library method",
    "EXPOSES": "a provider bean or handler method exposes a provided contract, with its binding",
    "BINDS_TO": "a consumer bean to its consumed contract, a bean to its type, a mapper method to its statement, "
                "an exchange route to a queue, a gateway route to the contract it forwards to",
    "PUBLISHES": "a method sends to a topic or publishes an event",
    "SUBSCRIBES": "an entry consumes a topic or listens to an event",
    "READS": "a statement or method reads a table; a method reads a config or cache key",
    "WRITES": "a statement or method writes a table; a method writes a config or cache key",
    "DEPENDS_ON": "a module depends on another module of the package or on an artifact",
    "GUARDS": "a config key decides a branch of a method (`guard_ref` names the ledger item)",
}

STATUS_MEANINGS = {
    "RESOLVED": "one target, named in `target_ref`; no candidates",
    "AMBIGUOUS": "no `target_ref`; two or more `candidate_target_refs`, every one possible",
    "UNRESOLVED": "no target and no candidates; at least one diagnostic says what is missing, `match_keys` what is "
                  "known",
}

DISPATCH_MEANINGS = {
    "STATIC": "a static method, a constructor, `this(…)`/`super(…)`: the target is fixed",
    "VIRTUAL": "an instance call on a class type: the package's overrides are the candidates",
    "INTERFACE": "an instance call on an interface type: the package's implementations are the candidates",
    "INJECTED": "a call on a field the Spring context injects with one bean: that bean's method",
    "RPC": "a call of a consumed RPC or HTTP contract (through a JSF/Dubbo consumer, a Feign client, an HTTP client)",
    "ASYNC": "a call that runs on another thread: handed to an executor or `CompletableFuture`, or of an `@Async` "
             "method",
    "DYNAMIC": "a target chosen at run time (`getBean`, `Method.invoke`, a generic `$invoke`): UNRESOLVED",
}

SOURCE_TYPE_MEANINGS = {
    "CODE": "Java source",
    "CONFIG": "configuration and resources (properties, YAML, XML contexts, mapper XML); redacted",
    "BUILD": "build files (`pom.xml`, Gradle scripts); redacted",
    "GOVERNANCE": "in the model for governance documents; no scan of this version writes one",
}

VALUE_MEANINGS = {
    "RESOLVED": "a value was found (`value` set)",
    "DEFAULT_ONLY": "no source has the key; the code's default applies (`value` null, `default_value` set)",
    "AMBIGUOUS": "sources of equal rank disagree; no value is picked",
    "UNKNOWN": "no value and no default (`value` and `default_value` null; `attributes.missing` says which source "
               "lacks it)",
}

BRANCH_MEANINGS = {
    "IF": "the `then` arm of an `if` (`if[i]/then`)",
    "ELSE": "the `else` arm of an `if` (`if[i]/else`; an `else if` nests an `if` inside it)",
    "CASE": "a `case` group or rule of a `switch` (`switch[i]/case[LABEL]`)",
    "DEFAULT": "the `default` of a `switch` (`switch[i]/default`)",
    "RETURN": "an early `return` (`return[i]`; not the method's last statement)",
    "THROW": "a `throw` (`throw[i]`)",
    "CATCH": "a `catch` clause (`try[i]/catch[Type]`)",
    "FINALLY": "a `finally` block (`try[i]/finally`)",
    "LOOP": "the body of a loop (`loop[i]`)",
    "SQL_IF": "an `<if>` fragment of a MyBatis statement",
    "SQL_WHEN": "a `<when>` of a MyBatis `<choose>`",
    "SQL_OTHERWISE": "the `<otherwise>` of a MyBatis `<choose>`",
    "STRATEGY": "a call whose implementation is chosen at run time among several (`strategy[n]`)",
}

OUTCOME_MEANINGS = {
    "CONTINUE": "the arm falls through to what follows",
    "RETURN": "the arm returns (`exit_ref` names the return)",
    "THROW": "the arm throws (`exit_ref` names the throw)",
    "BREAK": "the arm ends in `break`, `continue` or `yield`",
    "ASYNC_SUBMIT": "the arm hands work to another thread (in the model; no scan of this version writes it)",
    "UNKNOWN": "how the arm ends is not known (in the model; no scan of this version writes it)",
}

#: code → (where it is made, meaning)
DIAGNOSTIC_MEANINGS = {
    "PARSE_ERROR": ("sources, Gradle", "a file that does not parse (Java, a config file, a Gradle script); what "
                    "parsed is kept, the message gives the ranges"),
    "FILE_TOO_LARGE": ("sources, Gradle", "a file over `--max-file-bytes`, or with a line over 1 MiB: not read"),
    "ENCODING_FALLBACK": ("java, sources", "bytes valid in no supported encoding were replaced by U+FFFD"),
    "ENCODING_GUESSED": ("scan", "files of a module were decoded in a guessed encoding (not UTF-8, a BOM or a "
                         "declaration): which, why, and the files; once per module and encoding"),
    "ENCODING_UNCERTAIN": ("java, scan", "a file may be misread: lines valid in another encoding sit in it, or "
                           "the detector's choice ties with another encoding"),
    "BUDGET_EXHAUSTED": ("everywhere", "a count budget stopped work (variants of a statement, reach of an entry, "
                         "placeholder depth, YAML nodes, a segment cut to fit a record …); never time"),
    "MODULE_SKIPPED": ("inventory", "a declared module whose build file is missing, unreadable or a submodule"),
    "SQL_PARSE_FAILED": ("sql", "SQL that sqlglot cannot parse: the statement is PARSE_FAILED, or PARTIAL when "
                         "other variants parsed"),
    "COORDINATE_UNRESOLVED": ("inventory", "a module's groupId/artifactId cannot be determined"),
    "FILE_UNREADABLE": ("sources, Gradle, config", "binary content, a Git LFS pointer, a submodule, a missing "
                        "object: the file's facts are missing"),
    "SERVICE_ID_SHARED": ("services", "every service of the repository got one id from `spring.application.name` "
                          "(a shared or misbound file); they are told apart by module only"),
    "POM_PARENT_MISSING": ("inventory", "a parent POM neither in the repository nor well known (or ambiguous, "
                           "cyclic, unreadable)"),
    "PROPERTY_UNRESOLVED": ("inventory, config", "a `${…}` of a build file, or an `@…@` of a resource, with no "
                            "definition"),
    "DEPENDENCY_UNRESOLVED": ("inventory", "a dependency whose coordinate does not resolve, or matches several "
                              "modules"),
    "TYPE_UNRESOLVED": ("java, probes", "names found nowhere (the file is analysed at `SYNTAX_ONLY` level), or a "
                        "class an imports list names that no module declares"),
    "CONSTANT_UNRESOLVED": ("probes", "an expression (scan package, import, location, key) that does not fold"),
    "CONFIG_VALUE_UNKNOWN": ("probes, sql, services", "a config value that is missing or ambiguous; the message "
                             "lists what was found"),
    "BEAN_AMBIGUOUS": ("probes", "an injection point two or more loaded beans can satisfy"),
    "POLYMORPHIC_ROUTING": ("probes", "a `Map` or `List` of beans: the one used is picked at run time"),
    "UNDETERMINED_DYNAMIC_EDGE": ("probes", "a target decided at run time: a dynamic call, a gateway route to every "
                                  "registered service"),
    "UNRESOLVED_CALL": ("call graph, probes, sql, graph", "calls whose target is not found; in a graph, a consumer "
                        "with no provider or a subscription nobody feeds"),
    "EVENT_TYPE_UNRESOLVED": ("probes", "an application event whose type is not known"),
    "TOPIC_UNRESOLVED": ("probes", "a send or subscription whose topic does not fold"),
    "SQL_UNSUPPORTED": ("sql", "SQL diting does not analyse (DDL, stored procedures, providers, iBatis, SQL built "
                        "by code)"),
    "DYNAMIC_TABLE_NAME": ("sql", "a table name that is only a `${…}` (or a Java value): the table is unknown"),
    "SHARD_BROADCAST": ("sql", "a statement whose `WHERE` misses the table's confirmed shard key"),
    "SHARD_KEY_UNCONFIRMED": ("sql", "a table sharded on evidence whose shard key no routing configuration names"),
    "FIXPOINT_INCOMPLETE": ("—", "in the catalogue; no stage of this version raises it"),
    "NO_COMPENSATION": ("ledger", "a send or remote call whose failure is only logged and that no scheduled worker "
                        "repeats"),
    "IMPLEMENTATION_AMBIGUOUS": ("—", "in the catalogue; no stage of this version raises it (ambiguous dispatch is "
                                 "an AMBIGUOUS CALLS relation)"),
    "SERVICE_ID_COLLISION": ("services", "two deployables with one service id; each renamed `{id}~…`"),
    "SERVICE_ID_RESERVED": ("scan", "a service id took the reserved lib: prefix; its colon is written _"),
    "SOURCE_UNMAPPED": ("inventory", "a dependency on an in-repo coordinate at a version the repository does not "
                        "build"),
    "PATH_OUTSIDE_TREE": ("inventory, sources", "a path that would leave the tree, or a tree entry git refuses to "
                          "check out: never read"),
    "DUPLICATE_DECLARATION": ("java", "two declarations with one identity; the first is recorded"),
    "BEAN_UNRESOLVED": ("probes", "an injection point of an in-repo type no loaded bean satisfies"),
    "SINGLE_WRITER_VIOLATION": ("graph", "a logical table of one datasource written by more than one service"),
    "PROTOCOL_CONFLICT": ("graph", "packages declare one URN scheme with different alignments; its urns are not "
                          "aligned"),
    "CROSS_SERVICE_DATA_ACCESS": ("graph", "a service reads or writes a table another service alone writes"),
    "ENTRY_UNRESOLVED": ("probes", "an entry declaration that yields no entry (interface, handler or path unknown), "
                         "or a class that looks like an entry and no rule makes one"),
    "SQL_DUPLICATE_ID": ("sql", "a statement id declared twice in one namespace: the copy is not analysed"),
    "GRADLE_NOT_STATIC": ("inventory", "a Gradle construct a static reader cannot follow: what it holds is not "
                          "applied ([gradle.md](gradle.md))"),
    "POM_PARENT_EXTERNAL": ("inventory", "a well-known parent outside the repository: its properties and managed "
                            "versions are not read"),
    "ORPHAN_ENTRY": ("graph", "an RPC contract or a published topic nobody in the estate consumes"),
    "DECLARED_UNUSED": ("probes, call graph", "a consumer (RPC, Feign) never called, or AOP advice whose pointcut "
                        "matches nothing"),
    "BEAN_EXTERNAL": ("probes", "an injection point of a library type: its bean comes from outside the package's "
                      "sources"),
    "ENTRY_NOT_LOADED": ("probes", "an entry declaration the context does not load, or in a `lib:` package"),
    "SQL_OTHER_DATABASE": ("sql", "a `databaseId` variant for another database than the package's"),
    "BUILD_ALTERNATIVE": ("inventory", "one directory built by Maven and Gradle: one model is read"),
    "MODULE_NOT_INCLUDED": ("inventory", "a Gradle script no settings file includes"),
}

DIMENSION_MEANINGS = {
    "applications": "applications of an estate (a graph or an inventory): not examined inside one package",
    "entries": "entries and entry declarations",
    "cross_service_edges": "alignment rows with a source: not examined inside one package",
    "branch_ledger": "ledger items",
    "files": "blobs of the package's modules at the commit",
    "sql_statements": "SQL statements",
    "config_keys": "config bindings, and key reads whose key does not fold",
    "call_sites": "call sites of member bodies",
}

# ------------------------------------------------------------------------------------- helpers


def _checked(name: str, values: list[str], meanings: dict[str, Any]) -> None:
    missing = [v for v in values if v not in meanings]
    stale = [k for k in meanings if k not in values]
    if missing or stale:
        raise SystemExit(f"docs/refresh_tables.py: {name}: " + "; ".join(
            ([f"no meaning for {', '.join(missing)}"] if missing else []) +
            ([f"a meaning for what the code no longer has: {', '.join(stale)}"] if stale else [])))


def _table(header: list[str], rows: list[list[str]]) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out)


def _code(values) -> str:
    return ", ".join(f"`{v}`" for v in values)


# ------------------------------------------------------------------------------------- blocks


def package_files() -> str:
    from diting.ir.models import JSONL_MODELS, PACKAGE_FILES
    files = ["manifest.json", *PACKAGE_FILES]
    _checked("package files", files, FILE_MEANINGS)
    models = {**{n: m.__name__ for n, m in JSONL_MODELS.items()}, "manifest.json": "Manifest",
              "coverage.json": "Coverage", "analysis_input.json": "—"}
    models["entities.jsonl"] = "one of the entity models (by `kind`)"
    return _table(["file", "holds", "model (`diting.ir.models`)"],
                  [[f"`{f}`", FILE_MEANINGS[f], models[f] if models[f] == "—" or " " in models[f] else f"`{models[f]}`"]
                   for f in files])


def record_prefixes() -> str:
    from diting.ir import ids
    rows = [[f"`{p}`", f"{k} entity"] for k, p in ids.ENTITY_PREFIX.items()]
    rows += [[f"`{ids.RELATION_PREFIX}`", "relation"], [f"`{ids.SEGMENT_PREFIX}`", "source segment"],
             [f"`{ids.BINDING_PREFIX}`", "config binding"], [f"`{ids.DIAGNOSTIC_PREFIX}`", "diagnostic"],
             [f"`{ids.BRANCH_PREFIX}`", "branch ledger item"]]
    return _table(["prefix", "record"], rows)


def entity_kinds() -> str:
    from diting.ir import ids
    from diting.ir.models import ENTITY_KINDS, Entity
    base = {"record_id", "kind", "stable_id", "name", "implementation_ref", "evidence_refs", "attributes"}
    models: dict[str, Any] = {}
    for m in get_args(get_args(Entity)[0]):
        for k in get_args(m.model_fields["kind"].annotation):
            models[k] = m
    kinds = list(ids.ENTITY_PREFIX)  # the prefixes' order; every kind of the models has one
    assert sorted(kinds) == sorted(ENTITY_KINDS), "ids.ENTITY_PREFIX and the entity models name other kinds"
    _checked("entity kinds", kinds, ENTITY_MEANINGS)
    rows = []
    for k in kinds:
        extra = [f for f in models[k].model_fields if f not in base]
        rows.append([f"`{k}`", f"`{ids.ENTITY_PREFIX[k]}`", ENTITY_MEANINGS[k], _code(extra) or "—"])
    return _table(["kind", "prefix", "what it is", "fields besides the common ones"], rows)


def entry_kinds() -> str:
    from diting.ir.models import ENGINE_ENTRY_KINDS
    from diting.rules import load_rules
    # the shipped protocols' entry kinds in the order the rule files declare them, then the engine's
    shipped = [k for p in load_rules().protocols.values() for k in p.entry_kinds]
    kinds = list(dict.fromkeys(shipped)) + [k for k in ENGINE_ENTRY_KINDS if k not in shipped]
    _checked("entry kinds", kinds, ENTRY_MEANINGS)
    by_proto: dict[str, list[str]] = {}
    for scheme, p in sorted(load_rules().protocols.items()):
        for k in p.entry_kinds:
            by_proto.setdefault(k, []).append(scheme)
    rows = [[f"`{k}`", ENTRY_MEANINGS[k], "the engine" if k in ENGINE_ENTRY_KINDS else
             "protocol " + ", ".join(f"`{s}`" for s in by_proto.get(k, []))] for k in kinds]
    return _table(["entry kind", "what it is", "declared by"], rows)


def protocols() -> str:
    from diting.rules import load_rules
    rows = [[f"`{s}://`", f"`{p.alignment}`", _code(p.entry_kinds) or "—", f"`{p.routing}`" if p.routing else "—",
             p.description] for s, p in sorted(load_rules().protocols.items())]
    return _table(["scheme", "alignment", "entry kinds", "routing", "what it names"], rows)


def relation_kinds() -> str:
    from diting.ir.models import LEGAL_RELATIONS, RelationKind
    kinds = [k.value for k in RelationKind]
    _checked("relation kinds", kinds, RELATION_MEANINGS)
    rows = [[f"`{k}`", ", ".join(f"{a} → {b}" for a, b in sorted(LEGAL_RELATIONS[k])), RELATION_MEANINGS[k]]
            for k in kinds]
    return _table(["relation", "legal endpoints (source → target)", "meaning"], rows)


def _enum_table(name: str, values: list[str], meanings: dict[str, str], header: str) -> str:
    _checked(name, values, meanings)
    return _table([header, "meaning"], [[f"`{v}`", meanings[v]] for v in values])


def resolution_statuses() -> str:
    from diting.ir.models import ResolutionStatus
    return _enum_table("resolution statuses", [s.value for s in ResolutionStatus], STATUS_MEANINGS, "status")


def dispatch_kinds() -> str:
    from diting.ir.verify import DISPATCH_KINDS
    order = ["STATIC", "VIRTUAL", "INTERFACE", "INJECTED", "RPC", "ASYNC", "DYNAMIC"]
    values = [v for v in order if v in DISPATCH_KINDS] + sorted(set(DISPATCH_KINDS) - set(order))
    return _enum_table("dispatch kinds", values, DISPATCH_MEANINGS, "dispatch_kind")


def source_types() -> str:
    from diting.ir.models import SourceType
    return _enum_table("source types", [s.value for s in SourceType], SOURCE_TYPE_MEANINGS, "source_type")


def value_resolutions() -> str:
    from diting.ir.models import ValueResolution
    return _enum_table("value resolutions", [s.value for s in ValueResolution], VALUE_MEANINGS, "value_resolution")


def branch_kinds() -> str:
    from diting.ir.models import BranchKind
    return _enum_table("branch kinds", [s.value for s in BranchKind], BRANCH_MEANINGS, "branch_kind")


def outcome_kinds() -> str:
    from diting.ir.models import OutcomeKind
    return _enum_table("outcome kinds", [s.value for s in OutcomeKind], OUTCOME_MEANINGS, "outcome_kind")


def diagnostics() -> str:
    from diting.ir.models import DIAGNOSTIC_SEVERITY
    codes = list(DIAGNOSTIC_SEVERITY)
    _checked("diagnostic codes", codes, DIAGNOSTIC_MEANINGS)
    order = {"ERROR": 0, "WARNING": 1, "INFO": 2}
    rows = [[f"`{c}`", DIAGNOSTIC_SEVERITY[c].value, DIAGNOSTIC_MEANINGS[c][0], DIAGNOSTIC_MEANINGS[c][1]]
            for c in sorted(codes, key=lambda c: (order[DIAGNOSTIC_SEVERITY[c].value], c))]
    return _table(["code", "severity", "made by", "meaning"], rows)


def coverage_dimensions() -> str:
    from diting.ir.models import Coverage
    dims = list(get_args(get_args(Coverage.model_fields["dimensions"].annotation)[0]))
    _checked("coverage dimensions", dims, DIMENSION_MEANINGS)
    return _table(["dimension", "counts"], [[f"`{d}`", DIMENSION_MEANINGS[d]] for d in dims])


def match_basis() -> str:
    from diting.graph.align_rows import MATCH_BASIS
    rows = []
    for code, text in MATCH_BASIS.items():
        kind, _, rest = text.partition(": ")
        if not re.fullmatch(r"[A-Z/]+", kind):
            kind, rest = "any", text
        rows.append([f"`{code}`", kind, rest])
    return _table(["match_basis", "edge", "meaning"], rows)


def match_forms() -> str:
    from diting.probes.model import EMIT_FORMS, MATCH_FORMS
    rows = []
    for form in MATCH_FORMS:
        kinds = sorted(k for k, forms in EMIT_FORMS.items() if form in forms)
        rows.append([f"`{form}`", _code(kinds)])
    return _table(["match form", "emit kinds that read it"], rows)


def emit_kinds() -> str:
    from diting.probes.model import EMIT_FORMS, EmitKind
    from diting.rules import load_rules
    rs = load_rules()
    rows = []
    for k in get_args(EmitKind):
        used = [r.id for r in rs.by_emit(k)]
        rows.append([f"`{k}`", _code(sorted(EMIT_FORMS.get(k, []))), f"`{used[0]}`" if used else "—"])
    return _table(["emit kind", "match forms", "a shipped rule using it"], rows)


def roles() -> str:
    from diting.probes.model import Role
    return _code(get_args(Role)) + "."


def rule_families() -> str:
    import yaml
    from diting.rules import load_rules, shipped_rules_dir
    rows = []
    for f in load_rules().files:
        doc = yaml.safe_load((shipped_rules_dir() / f.path).read_text(encoding="utf-8"))
        rows.append([f"[`{f.path}`](../rules/{f.path})", f"`{f.family}`", doc["description"]])
    return _table(["file", "family", "description"], rows)


def cli_commands() -> str:
    """Every command's ``--help``, in the order ``diting --help`` lists them (80 columns, plain)."""
    import os

    from typer.testing import CliRunner

    from diting.cli.main import app
    os.environ["COLUMNS"] = "80"
    runner = CliRunner()
    out: list[str] = []
    groups = [((), None)]
    n = 0
    while groups:
        path, _ = groups.pop(0)
        result = runner.invoke(app, [*path, "--help"], terminal_width=80, prog_name="diting")
        text = result.output.rstrip()
        commands = []
        if "\nCommands:\n" in text:
            commands = [line.split()[0] for line in text.split("\nCommands:\n", 1)[1].splitlines()
                        if line.startswith("  ") and line.split()]
        if path:
            n += 1
            out += [f"### 2.{n} `diting {' '.join(path)}`", "", "```text", text, "```", ""]
        groups[0:0] = [((*path, c), None) for c in commands]
    return "\n".join(out).rstrip() + "\n"


def stage_graph() -> str:
    """The scan's stage graph as ``diting scan --stages`` prints it."""
    from diting.scan.pipeline import stage_graph as graph
    return "```text\n" + graph() + "```\n"


BLOCKS = {
    "architecture.md": {"stage-graph": stage_graph},
    "cli.md": {"commands": cli_commands},
    "ir.md": {"package-files": package_files, "record-prefixes": record_prefixes, "entity-kinds": entity_kinds,
              "entry-kinds": entry_kinds, "protocols": protocols, "relation-kinds": relation_kinds,
              "resolution-statuses": resolution_statuses, "dispatch-kinds": dispatch_kinds,
              "source-types": source_types, "value-resolutions": value_resolutions, "diagnostics": diagnostics,
              "branch-kinds": branch_kinds, "outcome-kinds": outcome_kinds,
              "coverage-dimensions": coverage_dimensions},
    "alignment.md": {"match-basis": match_basis},
    "rules.md": {"match-forms": match_forms, "emit-kinds": emit_kinds, "roles": roles,
                 "rule-families": rule_families},
}

_BLOCK = re.compile(r"(<!-- generated: (?P<name>[a-z-]+) -->\n)(?P<body>.*?)(<!-- end: (?P=name) -->)", re.S)


def refreshed(page: str, text: str) -> str:
    """``text`` of ``page`` with every generated block rewritten. Raises SystemExit for a block the
    page lacks or one the generator does not know."""
    blocks = BLOCKS.get(page, {})
    seen: set[str] = set()

    def fill(m: re.Match) -> str:
        name = m["name"]
        if name not in blocks:
            raise SystemExit(f"docs/{page}: no generator for block {name!r}")
        seen.add(name)
        return m.group(1) + blocks[name]() + "\n" + m.group(4)

    out = _BLOCK.sub(fill, text)
    if set(blocks) - seen:
        raise SystemExit(f"docs/{page}: missing generated block(s) {', '.join(sorted(set(blocks) - seen))}")
    return out


def stale_pages() -> list[str]:
    """The pages whose generated blocks differ from what the code gives now."""
    stale = []
    for page in sorted(BLOCKS):
        text = (DOCS / page).read_text(encoding="utf-8")
        if refreshed(page, text) != text:
            stale.append(page)
    return stale


def main(argv: list[str]) -> int:
    if "--check" in argv:
        stale = stale_pages()
        for page in stale:
            print(f"docs/{page} is not current: run python docs/refresh_tables.py", file=sys.stderr)
        return 1 if stale else 0
    for page in sorted(BLOCKS):
        path = DOCS / page
        text = path.read_text(encoding="utf-8")
        new = refreshed(page, text)
        if new != text:
            path.write_text(new, encoding="utf-8")
            print(f"docs/{page} refreshed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
