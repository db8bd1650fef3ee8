"""From candidates to records, inside one package (docs/middleware.md; config values: docs/scanning.md §10).

One small function per emit kind. Each turns the candidates of the package's
modules — matched by rules, independent of the service — into entities,
relations, config bindings and diagnostics, using what only the package knows:
its Spring context (what is loaded, which bean is injected where) and its
configuration (placeholders, profiles). Declarations the context does not load
are kept with ``attributes.loaded = false`` and produce no ENTRY, no EXPOSES and
no consumed contract.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from diting.config.remote import config_centres
from diting.config.sources import canonical_key, parse_config
from diting.config.spring import MAX_NESTING, MAX_PLACEHOLDER_DEPTH, MAX_VALUE_CHARS, placeholders, split_default
from diting.ir import ids
from diting.ir.builder import RecordSet, RefTo
from diting.ir.canonical import sha256_hex
from diting.ir.redaction import redact_value
from diting.probes.candidates import split_list
from diting.resolve.fold import DUCC_PREFIX
from diting.resolve.spring import Bean, InjectionPoint, Resolution, SpringContext, values
from diting.resolve.types import TypeOf
from diting.source.text import decode_bytes
from diting.probes.resolved import ResolvedText
from diting.sql.emit import SqlStage, SqlStats

if TYPE_CHECKING:
    from diting.inventory.services import PackagePlan
    from diting.scan.facts import ScanFacts

_PATH_VAR = re.compile(r"\{[^/{}]*(?:\{[^}]*\}[^/{}]*)*\}")


@dataclass
class ConfigLookup:
    """One key's value: status RESOLVED, AMBIGUOUS or UNKNOWN, from the snapshot or a config file."""

    status: str
    value: str | None
    snapshot: bool = False
    rv: Any = None  # the config file's ResolvedValue (evidence), when it came from one
    candidates: tuple[str, ...] = ()  # the disagreeing snapshot values (AMBIGUOUS from the snapshot)


@dataclass
class ProbeStats:
    """What coverage counts from the probes."""

    entries: list[tuple[str, str, bool, str | None]] = field(default_factory=list)  # (rid, source, resolved, stop)
    #: the rids of ``entries`` (an entry is counted once, looked up per entry made)
    entry_rids: set[str] = field(default_factory=set)
    entries_failed: int = 0
    entries_excluded: dict[str, int] = field(default_factory=dict)  # reason → declarations not counted
    bindings: dict[str, str] = field(default_factory=dict)  # binding rid → value_resolution
    key_reads_failed: int = 0  # config key expressions that do not fold
    declared_unused: int = 0
    consumers_not_loaded: int = 0  # RPC / Feign consumer declarations outside the context
    beans_not_loaded: int = 0
    sql: "SqlStats | None" = None  # the SQL stage's counts (sql/emit.py)
    sql_datasource: str | None = None  # the database of the package's one JDBC URL


def normalize_path(path: str) -> str:
    """HTTP path as in docs/ir.md §3: ``{x}``/``{x:re}`` → ``{}``, duplicate and trailing ``/`` removed."""
    p = _PATH_VAR.sub("{}", path.strip())
    p = re.sub(r"/+", "/", "/" + p if not p.startswith("/") else p)
    if len(p) > 1:
        p = p.rstrip("/")
    return p if p else "/"


class PackageProbes:
    """Runs every emit mechanism for one package into its record set."""

    def __init__(self, facts: "ScanFacts", plan: "PackagePlan", rs: RecordSet, service_rid: str | None) -> None:
        self.s = facts
        self.plan = plan
        self.rs = rs
        self.service_rid = service_rid
        self.stats = ProbeStats()
        self.config = plan.config
        self.cands: list[dict[str, Any]] = []
        self.field_calls: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for m in plan.modules:
            res = facts.module_results[m]
            for c in res.candidates:
                c = dict(c, ns=facts.inv.ns[c["module"]])
                if c["emit"] == "FIELD_CALL":
                    self.field_calls.setdefault((c["owner"], c["field"]), []).append(c)
                else:
                    self.cands.append(c)
        self._lines_cache: dict[str, tuple[list[str], str]] = {}
        #: (path, start, end, kind) → segment record_id already registered in this package
        self._seg_ids: dict[tuple[str, int, int, str | None], str] = {}
        self.ctx = self._context()
        self._missing_property_sources: list[tuple[dict[str, Any], str]] = []
        #: (statement, fragments) whose ledger items are written once the package's entities are final
        self.sql_ledger: list[tuple[Any, list[Any]]] = []
        self.property_sources()

    # ------------------------------------------------------------ context
    def _context(self) -> SpringContext:
        s = self.s
        class_packages: dict[str, tuple[str, str]] = {}
        class_modules: dict[str, list[str]] = {}
        type_kinds: dict[str, str] = {}
        for m in sorted(self.plan.modules):
            for skel in s.java_by_module.get(m, []):
                scope = s.scopes[skel.path]
                for td in skel.types:
                    binary = scope.binary_of(td)
                    class_packages.setdefault(binary, (m, skel.package))
                    if m not in class_modules.setdefault(binary, []):
                        class_modules[binary].append(m)
                    type_kinds.setdefault(binary, td.kind)
        resources: dict[str, list[str]] = {}
        auto: list[str] = []
        web: list[str] = []
        for m in self.plan.modules:
            mod = s.inv.modules[m]
            webapp = f"{mod.dir}/src/main/webapp" if mod.dir else "src/main/webapp"
            for f in s.inv.files_by_module.get(m, []):
                for root in list(mod.resource_roots) + [webapp]:
                    if f.path.startswith(root + "/"):
                        resources.setdefault(f.path[len(root) + 1:], []).append(f.path)
            res = s.module_results[m]
            auto.extend(dict(a, module=m, ns=s.inv.ns[m], form="resource", emit="AUTO_CONFIGURATION")
                        for a in res.auto_configs)
            web.extend(res.web_contexts)
        app_classes = set()
        app_packages = []
        if self.plan.kind == "SERVICE":
            for m in self.plan.roots:
                for mm in s.module_results[m].java.mains:
                    if mm.application_annotation:
                        app_classes.add(mm.type_binary)
                        if mm.application_annotation in s.scanning_apps:
                            app_packages.append(class_packages.get(mm.type_binary, (None, ""))[1])
        if self.config is not None:  # Dubbo's property-driven annotation scan
            rv = self.config.get("dubbo.scan.base-packages")
            if rv.status == "RESOLVED" and rv.value:
                app_packages.extend(split_list(rv.value))
        return SpringContext(self.cands, class_packages, s.oracle.supertype_names, resources, app_classes,
                             app_packages, sorted(auto, key=lambda a: (a["class"], a["path"], a["lines"][0])), sorted(set(web)), list(self.plan.profiles), type_kinds,
                             lambda o: self.resolve(o).value, deployed=self.plan.kind == "SERVICE",
                             class_modules=class_modules, closures=s.closures, type_args=self._type_args)

    def _type_args(self, module: str | None, binary: str, target: str) -> list[str | None] | None:
        """The type arguments (binary names) with which in-repo ``binary`` extends ``target``."""
        got = self.s.oracle.supertype_args(TypeOf(binary, module), target) if module else None
        return None if got is None else [a.name if a is not None else None for a in got]

    def _missing_source(self, scheme: str) -> str:
        """Which source lacks a key that resolved to nothing (docs/ir.md §7 ``missing``)."""
        snap = self.s.config_snapshot
        files = "no config file of the active profiles has the key"
        if scheme == "ducc" and not snap:
            return f"no config snapshot, and {files}"
        return f"neither config snapshot {snap.snapshot_id} nor any {files[3:]}" if snap else files

    def _why_unknown(self, scheme: str, got: ConfigLookup) -> str:
        """Why a key read has no value: its placeholders — too deep to follow, circular (naming the
        cycle), expanding past the size budget of a value, or naming keys no source has —, else the
        source that lacks the key itself (:meth:`_missing_source`)."""
        rv = got.rv
        basis = rv.basis if rv is not None else None
        if basis == "BUDGET_EXHAUSTED":
            return f"its placeholders name keys more than {MAX_PLACEHOLDER_DEPTH} levels deep: BUDGET_EXHAUSTED"
        if basis == "PLACEHOLDER_CYCLE":
            return f"its placeholders are circular: {' → '.join('${' + k + '}' for k in rv.missing)}"
        if basis == "VALUE_TOO_LONG" and rv.entry is not None and "${" not in rv.entry.value:
            return f"its value is longer than {MAX_VALUE_CHARS:,} characters, the budget of one value; not read"
        if basis == "VALUE_TOO_LONG":
            return (f"its placeholders expand to more than {MAX_VALUE_CHARS:,} characters, the budget of one value; "
                    "not expanded further")
        if basis == "PLACEHOLDER_UNRESOLVED" and rv.missing:
            names = ", ".join("${" + k + "}" for k in rv.missing)
            return f"its placeholders lead to {names}, which no config file of the active profiles has"
        return self._missing_source(scheme)

    def _centres(self, scheme: str) -> list[str] | None:
        """The config centres that may override a value not taken from the snapshot: Ducc for a
        ``ducc`` key, else those the package's configuration reads (None when there is none)."""
        if scheme == "ducc":
            return ["ducc"]
        if "_centre_list" not in self.__dict__:
            self._centre_list = config_centres(self.config) if self.config is not None else []
        return self._centre_list or None

    def property_sources(self) -> None:
        """Add the files of loaded ``@PropertySource`` / ``<context:property-placeholder>`` /
        placeholder-configurer declarations to the package's configuration (docs/scanning.md §10.1, rank 6).

        Declarations are taken in order of file and line; as in Spring, a later declaration (and
        a later location of one declaration) overrides an earlier one. Locations are Spring
        resource locations (``classpath:``, patterns, ``${…}`` placeholders); ``file:`` and other
        outside locations are not read. A location that names no file of the package is kept for
        a CONFIG_VALUE_UNKNOWN diagnostic (run()), unless the declaration ignores missing files.
        The files are parsed as written (no Maven resource filtering)."""
        if self.config is None:
            return
        decls = sorted((c for c in self.ctx.by_emit.get("PROPERTY_SOURCE", []) if self.ctx.cand_loaded(c)),
                       key=lambda c: (c["path"], c["lines"][0]))
        located: list[str] = []
        for c in decls:
            ignore = any(v.strip().lower() == "true" for v in self.ctx.vals(c, "ignore_missing"))
            for loc in self.ctx.vals(c, "resource"):
                paths = [p for p in self.ctx.resolve_resource(loc) if p.endswith((".properties", ".yml", ".yaml"))]
                if not paths and not ignore:
                    self._missing_property_sources.append((c, loc))
                located.extend(p for p in paths if p not in located)
        n = len(located)
        for i, path in enumerate(located):
            got = self.s.snapshot.read(path)
            if got.data is None:
                continue
            cf = parse_config(path, decode_bytes(got.data).text)
            if cf.error:
                self.config.unreadable.append((path, cf.error, cf.error_line))
                continue
            self.config.add_source(path, cf, self.s.snapshot.by_path[path].oid, 4, n - i)

    # ------------------------------------------------------------ helpers
    def _lines(self, path: str) -> tuple[list[str], str]:
        if path not in self._lines_cache:
            self._lines_cache[path] = self.s.text_lines(path)
        return self._lines_cache[path]

    def seg(self, path: str, start: int, end: int | None = None, kind: str | None = None) -> str:
        """A source segment of ``path`` (lines ``start``…``end``): CODE for Java, else CONFIG (redacted),
        unless ``kind`` says (a config file with a .java name is still config)."""
        key = (path, start, end or start, kind)
        got = self._seg_ids.get(key)
        if got is None or got not in self.rs.segments:
            lines, enc = self._lines(path)
            got = self.rs.segment(path, lines, start, end or start,
                                  kind or ("CODE" if path.endswith(".java") else "CONFIG"), enc)
            self._seg_ids[key] = got
        return got

    def cseg(self, c: dict[str, Any]) -> str:
        return self.seg(c["path"], c["lines"][0], c["lines"][1])

    def resolve(self, outcome: dict[str, Any], depth: int = 0) -> ResolvedText:
        """A role outcome with the package's configuration applied (docs/scanning.md §9, §10); a nested
        default (``${a:${b:30}}``) is resolved in turn, at most :data:`MAX_NESTING` deep."""
        if "unresolved" in outcome:
            return ResolvedText("UNKNOWN", None, expression=outcome["unresolved"], reason=outcome.get("reason", ""))
        if "ref" in outcome:
            return ResolvedText("UNKNOWN", None, expression=outcome["ref"], reason="a bean reference")
        value = outcome["value"]
        if not outcome.get("placeholders") and "${" not in value and "#{" not in value:
            return ResolvedText("RESOLVED", value)
        keys: list[tuple[str, str, str | None, str]] = []
        status = "RESOLVED"
        out: list[str] = []
        pos = 0
        for ph in placeholders(value):
            inner = value[ph.start + 2:ph.end - 1]
            scheme = "ducc" if inner.startswith(DUCC_PREFIX) else "config"
            key, given = split_default(inner.removeprefix(DUCC_PREFIX))
            filled = self.config.fill_key(key) if "${" in key and self.config is not None else None
            if filled is not None:  # ${q.${env}:9}: Spring fills the key's placeholders, then splits a default
                key, given = filled  # (unfilled, the lookup of the key as written says why: a cycle, a missing key)
            sep, default = given is not None, given or ""
            out.append(value[pos:ph.start])
            pos = ph.end
            nested = None
            if sep and "${" in default:  # the default is itself a placeholder expression
                nested = self.resolve({"value": default, "vtype": "java.lang.String", "basis": "CONFIG",
                                       "placeholders": True}, depth + 1) if depth < MAX_NESTING else \
                    ResolvedText("UNKNOWN", None, expression=default, reason="placeholder defaults nest too deeply")
                default = nested.value if nested.value is not None else default
            dflt = default if sep else None
            got = self.lookup(scheme, key)
            if got.status == "RESOLVED":
                keys.append((scheme, key, dflt, "RESOLVED"))
                out.append(got.value or "")
            elif got.status == "AMBIGUOUS":
                keys.append((scheme, key, dflt, "AMBIGUOUS"))
                status = "AMBIGUOUS"
            elif sep and (nested is None or nested.value is not None):
                keys.append((scheme, key, default, "DEFAULT_ONLY"))
                keys.extend(nested.keys if nested is not None else [])
                out.append(default)
                if status == "RESOLVED":
                    status = "DEFAULT_ONLY"
            elif sep:  # the nested default did not resolve either
                keys.append((scheme, key, None, "UNKNOWN"))
                keys.extend(nested.keys if nested is not None else [])
                status = "UNKNOWN"
            else:
                keys.append((scheme, key, None, "UNKNOWN"))
                status = "UNKNOWN"
        out.append(value[pos:])
        if status in ("UNKNOWN", "AMBIGUOUS"):
            return ResolvedText(status, None, keys, expression=value,
                                reason="configuration value unknown" if status == "UNKNOWN" else
                                "equal-rank config sources disagree")
        text = "".join(out)
        if "#{" in text:
            return ResolvedText("UNKNOWN", None, keys, expression=value, reason="a SpEL expression is not evaluated")
        return ResolvedText(status, text, keys)

    def lookup(self, scheme: str, key: str) -> ConfigLookup:
        """A key's value with the precedence of docs/scanning.md §10.1: the config snapshot first, then
        the package's config files (for ``ducc`` keys too)."""
        cache = self.__dict__.setdefault("_lookups", {})
        if (scheme, key) in cache:
            return cache[(scheme, key)]
        snap = self.s.snapshot_value(scheme, key, self.plan.service_id)
        if snap is not None:
            value, status = snap.value, snap.status
            if scheme == "config" and value is not None and "${" in value:
                # a snapshot value is a property like any other: its placeholders resolve in the package
                value = self.config.expand(value) if self.config is not None else None
                status = status if value is not None else "UNKNOWN"
            got = ConfigLookup(status, value, snapshot=True, candidates=tuple(snap.candidates))
        elif self.config is not None:
            # a Ducc/LAF key falls back to the Spring environment, as a config key does
            rv = self.config.get(key)
            got = ConfigLookup(rv.status if rv.status in ("RESOLVED", "AMBIGUOUS") else "UNKNOWN",
                               rv.value if rv.status == "RESOLVED" else None, rv=rv)
        else:
            got = ConfigLookup("UNKNOWN", None)
        cache[(scheme, key)] = got
        return got

    def role(self, c: dict[str, Any], role: str) -> list[ResolvedText]:
        return [self.resolve(o) for o in c.get("roles", {}).get(role, [])]

    def first(self, c: dict[str, Any], role: str) -> ResolvedText | None:
        r = self.role(c, role)
        return r[0] if r else None

    def diag(self, code: str, key: str, message: str, affected: list[str], c: dict[str, Any] | None) -> str:
        return self.rs.diagnostic(code, key, message, [a for a in affected if a], [self.cseg(c)] if c else [])

    def exclude_entry(self, key: str, what: str, affected: list[str], c: dict[str, Any] | None,
                      why: str = "its class is outside the service's Spring context") -> None:
        """One entry declaration the context does not load (a lib package loads none): counted as
        excluded in coverage, with its ENTRY_NOT_LOADED diagnostic (the record it is counted from)."""
        lib = self.plan.kind != "SERVICE"
        reason = "module_not_deployed" if lib else "not_loaded_by_context"
        self.stats.entries_excluded[reason] = self.stats.entries_excluded.get(reason, 0) + 1
        self.diag("ENTRY_NOT_LOADED", f"{key}|not-loaded", f"{what} is not an entry: " + (
            "the package deploys nothing (module_not_deployed)" if lib else f"{why} (not_loaded_by_context)"),
            affected, c)

    def entry_failed(self, key: str, message: str, affected: list[str], c: dict[str, Any] | None) -> str:
        """One entry declaration that yields no entry (its interface, handler or path is unknown):
        counted as failed in coverage, with its ENTRY_UNRESOLVED diagnostic."""
        self.stats.entries_failed += 1
        return self.diag("ENTRY_UNRESOLVED", f"{key}|entry", message, affected, c)

    def owner_rid(self, c: dict[str, Any]) -> str:
        """The record a candidate's effect belongs to: its method, field, or type."""
        if c.get("member"):
            return c["member"]["rid"]
        if c.get("field"):
            return c["field"]["rid"]
        return c["type"]["rid"] if c.get("type") else (self.service_rid or "")

    def config_binding(self, consumer_rid: str, consumer_stable: str, rt: ResolvedText, c: dict[str, Any],
                       what: str) -> list[str]:
        """CONFIG_KEY entities, READS relations (from methods) and config bindings for the keys a value read."""
        out = []
        for scheme, key, default, resolution in rt.keys:
            urn = f"{scheme}://{canonical_key(key) if scheme == 'config' else key}"
            ev = self.cseg(c)
            kid = self.rs.entity("CONFIG_KEY", urn, key, [ev], {"scheme": scheme}, urn=urn)
            if kid in self.rs.entities:
                self.rs.add_evidence(kid, [ev])
            value = None
            src_refs: list[str] = []
            got = self.lookup(scheme, key)
            if resolution == "RESOLVED" and got.value is not None:
                value = redact_value(key, got.value)  # evidence is masked; so is the value that came from it
                rv = got.rv
                if rv is not None and rv.entry is not None and rv.path:
                    src_refs.append(self.seg(rv.path, rv.entry.line, rv.entry.end_line))
            stable = f"{consumer_stable}|{urn}"
            brid = ids.record_id_for(ids.BINDING_PREFIX, stable)
            rec = {"record_id": brid, "consumer_ref": RefTo(consumer_rid), "config_key": urn,
                   "source_refs": sorted({RefTo(r) for r in src_refs}, key=lambda r: r.rid),
                   "value_resolution": resolution,
                   "value": value if resolution == "RESOLVED" else None,
                   "default_value": default if resolution == "DEFAULT_ONLY" else None,
                   "evidence_refs": [RefTo(ev)],
                   "attributes": {"read_by": what, "default_in_code": default,
                                  "snapshot_id": self.s.config_snapshot.snapshot_id if got.snapshot else None,

                                  "missing": None if resolution != "UNKNOWN" else self._why_unknown(scheme, got)}}
            centres = None if got.snapshot or resolution not in ("RESOLVED", "DEFAULT_ONLY") else self._centres(scheme)
            if centres:  # a config centre's run-time value may override the file's (or the code default)
                rec["attributes"]["config_centre_may_override"] = centres
            if brid not in self.rs.bindings:
                self.rs.binding(rec)
                self.stats.bindings[brid] = resolution
            if resolution == "UNKNOWN":
                self.diag("CONFIG_VALUE_UNKNOWN", f"{stable}", f"{urn} has no value for profiles "
                          f"{','.join(self.plan.profiles)} ({self._why_unknown(scheme, got)})", [consumer_rid, kid], c)
            elif resolution == "AMBIGUOUS":
                cands = got.rv.candidates if got.rv is not None else ()
                listed = "; ".join(f"{p}:{line} = {redact_value(key, v)}" for p, v, line in cands) or \
                    "config snapshot entries " + ", ".join(redact_value(key, v) for v in got.candidates)
                self.diag("CONFIG_VALUE_UNKNOWN", f"{stable}", f"{urn} is ambiguous for profiles "
                          f"{','.join(self.plan.profiles)}: sources of equal rank disagree ({listed})",
                          [consumer_rid, kid], c)
            if consumer_rid.startswith("method:"):
                self.rs.relation("READS", consumer_rid, consumer_stable, target_rid=kid, target_key=urn,
                                 status="RESOLVED", evidence=[ev], attributes={"value_resolution": resolution},
                                 ordinal=c.get("call", {}).get("ordinal", 0) if c.get("call") else 0,
                                 callsite_id=c["call"].get("callsite_id") if c.get("call") else None)
            out.append(kid)
        return out

    # ------------------------------------------------------------ run
    def run(self) -> ProbeStats:
        self.context_gaps()
        self.beans()
        self.injection()
        self.rpc_providers()
        self.rpc_consumers()
        self.http_endpoints()
        self.http_routes()
        self.feign_clients()
        self.http_client_calls()
        self.gateway_routes()
        self.mq_listeners()
        self.mq_sends()
        self.mq_receives()
        self.mq_streams()
        self.mq_bindings()
        self.config_keys()
        self.cache_ops()
        self.jobs()
        self.events()
        self.dynamic_calls()
        self.entry_hints()
        sql = SqlStage(self)  # type: ignore[arg-type]  # run() executes on the Families subclass
        self.stats.sql = sql.run()
        self.stats.sql_datasource = sql.datasource
        self._mark_loaded()
        sql.ledger_items()
        return self.stats

    def _mark_loaded(self) -> None:
        """Facts made by code (sends, cache and config reads and writes, RPC and dynamic calls) are
        kept wherever the code is; each says whether its class is loaded by the package's context
        (``attributes.loaded``), the way context-made facts (entries, contracts, subscriptions)
        are only made when loaded (docs/scanning.md §12)."""
        for rec in self.rs.relations.values():
            if rec["kind"] not in ("PUBLISHES", "READS", "WRITES", "CALLS") or "loaded" in rec["attributes"]:
                continue
            source = rec["stable_id"].split("|", 2)[1]
            if "/" not in source or "#" not in source:
                continue
            binary = source.split("/", 1)[1].split("#", 1)[0]
            rec["attributes"] = dict(rec["attributes"], loaded=self.ctx.class_loaded(binary))

    def context_gaps(self) -> None:
        """A scan package, import or XML location that does not fold leaves the context incomplete;
        a property source that names no file leaves its keys unknown."""
        for c, loc in self._missing_property_sources:
            self.diag("CONFIG_VALUE_UNKNOWN", f"{c['path']}:{c['lines'][0]}|property-source|{loc}",
                      f"{c['path']}:{c['lines'][0]}: property source {loc} names no file of the package; the "
                      "values it would supply are unknown", [self.owner_rid(c)], c)
        for c, loc in self.ctx.missing:
            self.diag("CONSTANT_UNRESOLVED", f"{c['path']}:{c['lines'][0]}|resource-missing|{loc}",
                      f"{c['path']}:{c['lines'][0]}: context location {loc} names no file of the package (a "
                      "library's jar may hold it); the beans it would declare are not loaded", [self.owner_rid(c)], c)
        for c in self.ctx.by_emit.get("FEIGN_SCAN", []):
            if c["form"] != "imports" or not self.ctx.deployed:
                continue
            for e in c.get("attrs", {}).get("entries", []):
                if e["class"] not in self.ctx.class_modules:
                    self.diag("TYPE_UNRESOLVED", f"{c['path']}:{e['lines'][0]}|imports|{e['class']}",
                              f"{c['path']}:{e['lines'][0]}: {e['class']} is listed as a Feign client, but no module "
                              "of the package declares it (a library's jar may hold it); no client is registered",
                              [self.owner_rid(c)], dict(c, lines=e["lines"]))
        for c, role, expr in self.ctx.unfolded:
            if role not in ("base_packages", "base_classes", "classes", "resource") or (
                    not self.ctx.cand_loaded(c) and c["emit"] != "DEPLOYABLE_APPLICATION"):
                continue
            self.diag("CONSTANT_UNRESOLVED", f"{c['path']}:{c['lines'][0]}|{role}|{expr}", f"{c['path']}:"
                      f"{c['lines'][0]}: {role.replace('_', ' ')} {expr} does not resolve; what it would add to the "
                      "Spring context is not loaded", [self.owner_rid(c)], c)

    # ------------------------------------------------------------ beans and injection
    def beans(self) -> None:
        self.bean_rids: dict[int, str] = {}
        for b in self.ctx.beans:
            stable = b.stable
            attrs = {"type": b.type, "declared_by": b.kind, "loaded": b.loaded, "primary": b.primary,
                     "aliases": sorted(b.aliases), "properties": {k: {"value": v.get("value"), "ref": v.get("ref")}
                                                                  for k, v in sorted(b.properties.items())}}
            rid = self.rs.entity("BEAN", stable, b.name, [self.cseg(b.cand)], attrs)
            self.bean_rids[id(b)] = rid
            if not b.loaded:
                self.stats.beans_not_loaded += 1
            elif b.kind == "XML":
                self._property_bindings(b, rid, stable)
            target = self._type_rid(b.type, b.module)
            if target:
                self.rs.relation("BINDS_TO", rid, stable, target_rid=target[0], target_key=target[1],
                                 status="RESOLVED", evidence=[self.cseg(b.cand)])

    def _property_bindings(self, b: Bean, rid: str, stable: str) -> None:
        """Config bindings of a loaded XML bean's ``<property value="${…}">`` placeholders."""
        for pname, p in sorted(b.properties.items()):
            v = p.get("value")
            if not v or "${" not in v:
                continue
            rt = self.resolve({"value": v, "vtype": "java.lang.String", "basis": "XML", "placeholders": True})
            line = p.get("line") or b.cand["lines"][0]
            self.config_binding(rid, stable, rt, dict(b.cand, lines=[line, max(line, p.get("end_line") or line)]),
                                f"<property name={pname}>")

    def _type_rid(self, binary: str, near: str | None = None) -> tuple[str, str] | None:
        module = self.ctx.home(binary, near)
        if module is None:
            return None
        stable = f"{self.s.inv.ns[module]}/{binary}"
        return ids.entity_record_id("TYPE", stable), stable

    def injection_points(self) -> list[InjectionPoint]:
        """Field, constructor and setter injection points of loaded bean classes."""
        pts: list[InjectionPoint] = []
        seen: set[tuple[str, str]] = set()
        by_field: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for c in self.ctx.by_emit.get("INJECTION", []):
            if c["target"] == "FIELD":
                by_field.setdefault((c["type"]["binary"], c["field"]["name"]), []).append(c)
        for (owner, fname), cs in sorted(by_field.items()):
            c = cs[0]
            if not self.ctx.class_loaded(owner):
                continue
            names = [v for cc in cs for v in values(cc, "name")]
            quals = [v for cc in cs for v in values(cc, "qualifier")] + [q for q in [c["field"].get("qualifier")] if q]
            resource = any(cc["annotation"].endswith(".Resource") for cc in cs)
            declared = InjectionPoint(owner, c["module"], "FIELD", fname, c["field"]["type"],
                                      c["field"].get("type_args", []), quals[0] if quals else None,
                                      names[0] if names else (fname if resource else None), c, field=c["field"])
            pts.extend(self._generic_points(declared))
            seen.add((owner, fname))
        # an imported class (@Import, an auto-configuration listing) is constructed like a component;
        # its constructors are known when an annotation of the class made it a candidate
        described = {}
        for c in self.cands:
            if c.get("target") == "TYPE" and "type_detail" in c:
                described.setdefault((c["module"], c["type"]["binary"]), c)
        for b in self.ctx.beans:
            if b.kind not in ("COMPONENT", "IMPORTED") or not b.loaded:
                continue
            cand = b.cand if b.kind == "COMPONENT" else described.get((b.module, b.type))
            if cand is None:
                continue
            detail = cand.get("type_detail", {})
            ctors = [m for m in detail.get("methods", []) if m["name"] == "<init>"]
            chosen = [m for m in ctors if m.get("autowired")] or (ctors if len(ctors) == 1 else [])
            for m in chosen:
                for p in m["params"]:
                    pts.append(InjectionPoint(b.type, b.module, "METHOD", p["name"], p["type"], p.get("type_args", []),
                                              p.get("qualifier"), None, cand, member=m))
        for b in self.ctx.beans:  # @Bean parameters stored in the returned object's fields
            made = b.cand.get("constructs") if b.kind == "BEAN_METHOD" and b.loaded else None
            if not made:
                continue
            m = b.cand["member"]
            params = {p["name"]: p for p in m["params"]}
            for fname, pname in sorted(made["fields"].items()):
                p = params[pname]
                pts.append(InjectionPoint(b.cand["type"]["binary"], b.module, "METHOD", pname, p["type"],
                                          p.get("type_args", []), p.get("qualifier"), None, b.cand, member=m,
                                          stores=(made["type"], fname)))
        for c in self.ctx.by_emit.get("INJECTION", []):
            if c["target"] in ("METHOD",) and c["member"]["name"] != "<init>" and self.ctx.class_loaded(
                    c["type"]["binary"]):
                for p in c["member"]["params"]:
                    pts.append(InjectionPoint(c["type"]["binary"], c["module"], "METHOD", p["name"], p["type"],
                                              p.get("type_args", []), None, None, c, member=c["member"]))
        return pts

    def _generic_points(self, ip: InjectionPoint) -> list[InjectionPoint]:
        """A field injection point as the context injects it: a field of a generic class whose type
        names the class's type variables (``Mapper<T> mapper``, ``M mapper``) is injected into each
        loaded bean class below it with the type arguments that class binds (one point per class,
        ``seen_from``); the declared point when no bean class binds them, or the class is a bean of
        its own."""
        oracle = self.s.oracle
        fr = oracle.field_of(ip.module, ip.owner_type, ip.name)
        if fr is None or not self._has_type_params(ip.module, ip.owner_type):
            return [ip]
        out: list[InjectionPoint] = []
        own = False
        for b in self.ctx.beans:
            if not b.loaded or b.kind not in ("COMPONENT", "IMPORTED", "XML", "BEAN_METHOD"):
                continue
            if b.type == ip.owner_type:
                own = True
                continue
            if ip.owner_type not in b.supertypes:
                continue
            t = oracle.field_type(fr, TypeOf(b.type, self.ctx.home(b.type, b.module)))
            args = [a.name if a is not None else None for a in t.args] if t is not None else []
            if t is None or (t.name == ip.type and args == list(ip.type_args)):
                continue
            out.append(InjectionPoint(ip.owner_type, ip.module, ip.target, ip.name, t.name, args, ip.qualifier,
                                      ip.by_name, ip.cand, field=ip.field, seen_from=b.type))
        return sorted(out, key=lambda p: p.seen_from or "") + ([ip] if own or not out else [])

    def _has_type_params(self, module: str, binary: str) -> bool:
        found = self.s.oracle.decl(module, binary)
        return found is not None and bool(found[0].facts.types[found[1]].type_params)

    def injection(self) -> None:
        self.injected: dict[tuple[str, str], Resolution] = {}
        if not self.ctx.deployed:
            return  # a lib: package has no Spring context, so nothing is injected
        per_class: dict[tuple[str, str], list[Resolution]] = {}
        built: dict[tuple[str, str], list[Resolution]] = {}  # (type, field) a @Bean parameter is kept in
        for ip in self.injection_points():
            res = self.ctx.resolve(ip)
            if ip.target == "FIELD":
                if ip.seen_from is None:
                    self.injected[(ip.owner_type, ip.name)] = res
                else:
                    self.injected[(ip.seen_from, ip.name)] = res
                    per_class.setdefault((ip.owner_type, ip.name), []).append(res)
                src_rid, src_stable = ip.field["rid"], ip.field["stable"]
                ev = self.seg(ip.cand["path"], *ip.field.get("lines", ip.cand["lines"])) if ip.field.get("lines") \
                    else self.cseg(ip.cand)
            else:
                if ip.stores is not None:
                    built.setdefault(ip.stores, []).append(res)
                elif ip.member["name"] == "<init>":
                    # constructor injection: the field the parameter is stored in (Lombok: same name)
                    field_name = ip.name if ip.member.get("synthesized_by") else next(
                        (f for f, p in ip.member.get("assigns", {}).items() if p == ip.name), None)
                    if field_name:
                        self.injected[(ip.owner_type, field_name)] = res
                src_rid, src_stable = ip.member["rid"], ip.member["stable"]
                ev = self.seg(ip.cand["path"], *ip.member["lines"]) if ip.member.get("lines") else self.cseg(ip.cand)
            attrs = {"injection": ip.target, "name": ip.name, "type": ip.type, "qualifier": ip.qualifier,
                     "polymorphic": res.polymorphic}
            key = f"{ip.type}:{ip.name}"
            ordinal = 0 if ip.target == "FIELD" else _stable_int(ip.name)
            diag_key = f"{src_stable}|{ip.name}"
            where = f" (inherited by {ip.seen_from})" if ip.seen_from else ""
            if ip.seen_from is not None:  # one relation per bean class the inherited field is injected into
                attrs.update(seen_from=ip.seen_from, type_args=list(ip.type_args))
                key, ordinal, diag_key = f"{key}@{ip.seen_from}", _stable_int(ip.seen_from), \
                    f"{diag_key}|{ip.seen_from}"
            if res.status == "RESOLVED" and len(res.beans) == 1:
                b = res.beans[0]
                attrs["basis"] = res.basis
                self.rs.relation("INJECTS", src_rid, src_stable, target_rid=self.bean_rids[id(b)],
                                 target_key=b.stable, status="RESOLVED", evidence=[ev],
                                 attributes=attrs, ordinal=ordinal)
            elif len(res.beans) >= 2:
                code = "POLYMORPHIC_ROUTING" if res.polymorphic else "BEAN_AMBIGUOUS"
                d = self.rs.diagnostic(code, diag_key, f"{src_stable}{where}: {res.reason} "
                                       f"({', '.join(sorted(b.name for b in res.beans))})", [src_rid], [ev])
                self.rs.relation("INJECTS", src_rid, src_stable, target_rid=None, target_key=f"?{key}",
                                 status="AMBIGUOUS", evidence=[ev], candidates=[self.bean_rids[id(b)] for b in res.beans],
                                 diagnostics=[d], attributes=attrs, ordinal=ordinal)
            elif not res.polymorphic:
                external = self.ctx.class_packages.get(res.type or ip.type) is None
                if external:
                    attrs["provided_by"] = "auto-configuration or a library (no bean of the package declares it)"
                d = self.rs.diagnostic("BEAN_EXTERNAL" if external else "BEAN_UNRESOLVED", diag_key, f"{src_stable}{where}: {res.reason}",
                                       [src_rid], [ev])
                self.rs.relation("INJECTS", src_rid, src_stable, target_rid=None, target_key=f"?{key}",
                                 status="UNRESOLVED", evidence=[ev], diagnostics=[d], match_keys={
                                     "type": ip.type, "name": ip.name, "qualifier": ip.qualifier,
                                     "bean_name": ip.by_name},
                                 attributes=attrs, ordinal=ordinal)

        for f, got in per_class.items():
            if f in self.injected:
                continue  # the declaring class is a bean of its own: its own resolution stands
            self.injected[f] = _merged(got, "the bean injected differs by the class the field is inherited by",
                                       "GENERIC_TYPE")
        for f, got in sorted(built.items()):
            if f not in self.injected:  # a @Component's own injection stands
                self.injected[f] = _merged(got, "the @Bean methods building the class pass it different beans",
                                           got[0].basis)

    # the remaining mechanisms are defined in probes/families.py and bound below


def _merged(got: list[Resolution], reason: str, basis: str | None) -> Resolution:
    """One field's bean from several injection points that fill it: RESOLVED when all resolve to the
    same single bean (with ``basis``), else AMBIGUOUS over their beans (UNRESOLVED with none)."""
    beans = list({id(b): b for r in got for b in r.beans}.values())
    one = all(r.status == "RESOLVED" for r in got) and len(beans) == 1
    return Resolution("RESOLVED" if one else "AMBIGUOUS" if beans else "UNRESOLVED", beans, reason=reason,
                      basis=basis if one else None)


def _stable_int(text: str) -> int:
    """A small deterministic number for relation ordinals derived from a name."""
    return int(sha256_hex(text)[:6], 16)
