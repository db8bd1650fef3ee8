"""The probe context of one package, from candidates to records (docs/middleware.md; config values: docs/scanning.md §10).

The emit mechanisms (probes/mechanisms.py) each turn the candidates of the package's
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
from diting.java.facts import TypeRef
from diting.probes.xml_candidates import split_list
from diting.checks import VALIDATE
from diting.probes.matches import check_candidates
from diting.resolve.fold import DUCC_PREFIX
from diting.resolve.spring import Resolution, SpringContext, values
from diting.resolve.types import TypeOf
from diting.source.text import decode_bytes
from diting.probes.resolved import ResolvedText
from diting.sql.emit import SqlStats

if TYPE_CHECKING:
    from diting.probes.matches import Candidate, DeclaredMethod, Handler, Outcome
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


class ProbeContext:
    """One package's probe context: its Spring context, configuration, candidates and record set,
    and the helpers every emit mechanism writes records through (probes/mechanisms.py runs them)."""

    def __init__(self, facts: "ScanFacts", plan: "PackagePlan", rs: RecordSet, service_rid: str | None) -> None:
        self.s = facts
        self.plan = plan
        self.rs = rs
        self.service_rid = service_rid
        self.stats = ProbeStats()
        self.config = plan.config
        self.cands: list[Candidate] = []
        self.field_calls: dict[tuple[str, str], list[Candidate]] = {}
        for m in plan.modules:
            res = facts.module_results[m]
            for c in res.candidates:
                c = dict(c, ns=facts.inv.ns[c["module"]])
                if c["emit"] == "FIELD_CALL":
                    self.field_calls.setdefault((c["owner"], c["field"]), []).append(c)
                else:
                    self.cands.append(c)
        if VALIDATE:
            check_candidates(self.cands + [c for cs in self.field_calls.values() for c in cs], plan.service_id)
        self._lines_cache: dict[str, tuple[list[str], str]] = {}
        #: (path, start, end, kind) → segment record_id already registered in this package
        self._seg_ids: dict[tuple[str, int, int, str | None], str] = {}
        self.ctx = self._context()
        self.missing_property_sources: list[tuple[Candidate, str]] = []
        #: (statement, fragments) whose ledger items are written once the package's entities are final
        self.sql_ledger: list[tuple[Any, list[Any]]] = []
        #: bean record_ids by id() of the bean, and the bean injected into each field (probes/spring_beans.py)
        self.bean_rids: dict[int, str] = {}
        self.injected: dict[tuple[str, str], Resolution] = {}
        self.property_sources()

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
                             class_modules=class_modules, closures=s.closures, type_args=self.type_args)

    def type_args(self, module: str | None, binary: str, target: str) -> list[str | None] | None:
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

    def centres(self, scheme: str) -> list[str] | None:
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
                    self.missing_property_sources.append((c, loc))
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

    def cseg(self, c: Candidate) -> str:
        return self.seg(c["path"], c["lines"][0], c["lines"][1])

    def resolve(self, outcome: Outcome, depth: int = 0) -> ResolvedText:
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

    def role(self, c: Candidate, role: str) -> list[ResolvedText]:
        return [self.resolve(o) for o in c.get("roles", {}).get(role, [])]

    def first(self, c: Candidate, role: str) -> ResolvedText | None:
        r = self.role(c, role)
        return r[0] if r else None

    def diag(self, code: str, key: str, message: str, affected: list[str], c: Candidate | None) -> str:
        return self.rs.diagnostic(code, key, message, [a for a in affected if a], [self.cseg(c)] if c else [])

    def exclude_entry(self, key: str, what: str, affected: list[str], c: Candidate | None,
                      why: str = "its class is outside the service's Spring context") -> None:
        """One entry declaration the context does not load (a lib package loads none): counted as
        excluded in coverage, with its ENTRY_NOT_LOADED diagnostic (the record it is counted from)."""
        lib = self.plan.kind != "SERVICE"
        reason = "module_not_deployed" if lib else "not_loaded_by_context"
        self.stats.entries_excluded[reason] = self.stats.entries_excluded.get(reason, 0) + 1
        self.diag("ENTRY_NOT_LOADED", f"{key}|not-loaded", f"{what} is not an entry: " + (
            "the package deploys nothing (module_not_deployed)" if lib else f"{why} (not_loaded_by_context)"),
            affected, c)

    def entry_failed(self, key: str, message: str, affected: list[str], c: Candidate | None) -> str:
        """One entry declaration that yields no entry (its interface, handler or path is unknown):
        counted as failed in coverage, with its ENTRY_UNRESOLVED diagnostic."""
        self.stats.entries_failed += 1
        return self.diag("ENTRY_UNRESOLVED", f"{key}|entry", message, affected, c)

    def owner_rid(self, c: Candidate) -> str:
        """The record a candidate's effect belongs to: its method, field, or type."""
        if c.get("member"):
            return c["member"]["rid"]
        if c.get("field"):
            return c["field"]["rid"]
        return c["type"]["rid"] if c.get("type") else (self.service_rid or "")

    def config_binding(self, consumer_rid: str, consumer_stable: str, rt: ResolvedText, c: Candidate,
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
            centres = None if got.snapshot or resolution not in ("RESOLVED", "DEFAULT_ONLY") else self.centres(scheme)
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

    # ------------------------------------------------------------ shared by the mechanisms
    def methods_of(self, binary: str, near: str | None = None) -> list[DeclaredMethod]:
        """Methods of an in-package type (skeleton signatures, erased) as module ``near`` sees it,
        or [] when unknown."""
        module = self.ctx.home(binary, near)
        if module is None:
            return []
        found = self.s.oracle.decl(module, binary)
        if found is None:
            return []
        scope, idx = found
        td = scope.facts.types[idx]
        chain = scope._chain_of(idx)
        ns = self.s.inv.ns[module]
        out: list[DeclaredMethod] = []
        for md in td.methods:
            if md.decl_kind not in ("METHOD",):
                continue
            tv = scope.type_vars_for(chain, md.type_params)
            sig = [scope.resolve(p.type, chain, tv).name for p in md.params]
            stable = f"{ns}/{binary}#{md.name}({','.join(sig)})"
            anns = []
            for a in md.annotations:
                r = scope.resolve_base(TypeRef(tuple(a.name.split("."))), chain, {})
                anns.append(r.name if r is not None else "?" + a.name)
            out.append({"name": md.name, "signature": sig, "stable": stable, "annotations": anns,
                        "rid": ids.entity_record_id("METHOD", stable), "modifiers": md.modifiers,
                        "lines": [md.start_line, md.end_line], "path": scope.facts.path, "arity": len(md.params),
                        "has_body": md.has_body})
        return out

    def all_methods(self, binary: str, near: str | None = None) -> list[DeclaredMethod]:
        """Methods of a type and its in-package supertypes (overridden ones once)."""
        out: list[DeclaredMethod] = []
        seen: set[tuple[str, tuple[str, ...]]] = set()
        module = self.ctx.home(binary, near)
        chain = [(module, binary)] + (self.s.oracle.registry.ancestors(module, binary) if module else [])
        for mod, b in chain:
            for m in self.methods_of(b, mod):
                key = (m["name"], tuple(m["signature"]))
                if key not in seen:
                    seen.add(key)
                    out.append(m)
        return out

    def texts(self, rts: list[ResolvedText]) -> list[str]:
        return [r.value for r in rts if r.value is not None]

    def binding_attributes(self, c: Candidate) -> dict[str, Any]:
        """Binding attributes (alias, group, version, timeout, retries) with the package's config."""
        out: dict[str, Any] = {}
        for role in ("alias", "group", "version", "timeout", "retries"):
            r = self.first(c, role)
            if r is None:
                continue
            out[role] = r.value if r.value is not None else None
            if r.status != "RESOLVED":
                out[f"{role}_resolution"] = r.status
                out[f"{role}_expression"] = r.expression
        return out

    def binding_keys(self, c: Candidate, rid: str, stable: str) -> None:
        """Config bindings of the placeholders in a declaration's binding attributes."""
        for role in ("alias", "group", "version", "timeout", "retries"):
            self.note_keys(rid, stable, self.role(c, role), c, role)

    def note_keys(self, consumer_rid: str, consumer_stable: str, rts: list[ResolvedText], c: Candidate,
                   what: str) -> None:
        for r in rts:
            if r.keys:
                self.config_binding(consumer_rid, consumer_stable, r, c, what)

    def entry(self, kind: str, urn: str, handler: Handler, c: Candidate, attrs: dict[str, Any],
               source: str, resolved: bool = True) -> str:
        stable = f"{kind}:{urn}@{handler['stable']}"
        hints = self.marks("NOISE", handler["stable"])
        if hints:
            attrs = dict(attrs, hints=hints)
        if self.marks("ASYNC", handler["stable"]):
            attrs = dict(attrs, async_dispatch=True)
        ev = self.cseg(c)
        evs = [ev]
        if handler.get("path") and handler.get("lines"):
            evs.append(self.seg(handler["path"], *handler["lines"]))
        rid = self.rs.entity("ENTRY", stable, urn, evs, attrs, entry_kind=kind, urn=urn,
                             handler_ref=RefTo(handler["rid"]))
        if rid not in self.stats.entry_rids:
            self.stats.entry_rids.add(rid)
            self.stats.entries.append((rid, source, resolved, None))
        return rid

    def retry_rules(self, method_stable: str) -> list[Candidate]:
        """MQ_RETRY candidates (``@RetryableTopic`` …) on a listener method."""
        return [c for c in self.ctx.by_emit.get("MQ_RETRY", [])
                if c.get("target") == "METHOD" and c["member"]["stable"] == method_stable]

    def marks(self, emit: str, method_stable: str) -> list[str]:
        """Annotations of rules with emit kind ``emit`` (NOISE: monitoring hints; ASYNC: @Async) on a
        handler method or its class."""
        idx = self.__dict__.setdefault("_mark_index", {}).get(emit)
        if idx is None:
            idx = {}
            for c in self.ctx.by_emit.get(emit, []):
                if c["form"] != "annotation":
                    continue  # call-form NOISE rules prune calls (resolve/callgraph.py)
                key = c["member"]["stable"] if c["target"] == "METHOD" else c["type"]["stable"]
                idx.setdefault(key, set()).add(c["annotation"])
            self.__dict__["_mark_index"][emit] = idx
        type_stable = method_stable.split("#", 1)[0]
        return sorted(idx.get(method_stable, set()) | idx.get(type_stable, set()))

    def live_handler_class(self, c: Candidate) -> bool:
        """Whether a job or listener declaration can be an entry: its class is concrete (an abstract
        class or interface runs only through its subclasses, which a type rule matches on their own)
        and loaded by the context (else it is counted as an excluded entry)."""
        if c["target"] == "TYPE" and (c["type"].get("abstract") or c["type"]["kind"] == "INTERFACE"):
            return False
        if not self.ctx.class_loaded(c["type"]["binary"]):
            self.exclude_entry(f"{c['path']}:{c['lines'][0]}", f"{c['type']['binary']} ({c['path']}:"
                               f"{c['lines'][0]})", [self.owner_rid(c)], c)
            return False
        if c.get("form") == "annotation" and c["target"] == "METHOD" and not self.ctx.candidates_for(
                c["type"]["binary"]):
            # @Scheduled, @EventListener …: Spring runs them on beans only (a commented-out @Component)
            self.exclude_entry(f"{c['path']}:{c['lines'][0]}", f"{c['type']['binary']} ({c['path']}:"
                               f"{c['lines'][0]})", [self.owner_rid(c)], c,
                               why="no bean of its class is in the service's Spring context")
            return False
        return True

    def declared_handler(self, c: Candidate) -> Handler | None:
        """The handler method of a job or listener declaration: the annotated method itself, else the
        rule's ``emits.handler`` method of the matched type (None when the package declares none)."""
        if c["target"] == "METHOD":
            return dict(c["member"], path=c["path"])
        return self.handler(c["type"]["binary"], self.s.rules.by_id[c["rule"]].emits.handler, c["module"])

    def contract(self, role: str, urn: str, signature: list[str], c: Candidate, attrs: dict[str, Any]) -> \
            tuple[str, str]:
        stable = f"{role}:{urn}({','.join(signature)})"
        ev = self.cseg(c)
        rid = ids.entity_record_id("CONTRACT", stable)
        if rid in self.rs.entities:
            self.rs.add_evidence(rid, [ev])
            if self.rs.entities[rid]["attributes"].get("loaded") is False and attrs.get("loaded"):
                self.rs.entities[rid]["attributes"]["loaded"] = True
        else:
            self.rs.entity("CONTRACT", stable, urn, [ev], attrs, urn=urn, role=role, signature=signature)
        return rid, stable

    def topic(self, urn: str, c: Candidate, attrs: dict[str, Any], kind: str = "TOPIC") -> str:
        ev = self.cseg(c)
        rid = ids.entity_record_id(kind, urn)
        if rid in self.rs.entities:
            self.rs.add_evidence(rid, [ev])
            ent = self.rs.entities[rid]["attributes"]
            for k in ("tags", "event_types"):
                if attrs.get(k):
                    ent[k] = sorted(set(ent.get(k, [])) | set(attrs[k]))
            return rid
        return self.rs.entity(kind, urn, urn.split("://", 1)[-1], [ev], attrs, urn=urn)

    def handlers(self, binary: str, name: str | None, near: str | None = None) -> list[DeclaredMethod]:
        """Handler methods of a type-level listener or job: ``name`` is a method name (the
        implemented one, preferring a body and the fewest parameters) or ``@annotation FQN``
        (every method carrying it)."""
        if not name:
            return []
        if name.startswith("@"):
            return sorted((m for m in self.all_methods(binary, near) if name[1:] in m.get("annotations", [])),
                          key=lambda m: m["lines"])
        ms = [m for m in self.all_methods(binary, near) if m["name"] == name]
        ms.sort(key=lambda m: (0 if m["has_body"] else 1, m["arity"], m["stable"]))
        return ms[:1]

    def implementation(self, binary: str, iface_method: DeclaredMethod, near: str | None = None
                        ) -> DeclaredMethod | None:
        """The method of ``binary`` (or its supertypes) implementing an interface method: the one
        of equal name and erased signature, else the only one of equal name and arity (a generic
        interface erases differently); None when overloads leave several."""
        same = [m for m in self.all_methods(binary, near) if m["name"] == iface_method["name"]]
        exact = [m for m in same if m["signature"] == iface_method["signature"]]
        if exact:
            return exact[0]
        arity = [m for m in same if m["arity"] == iface_method["arity"]]
        return arity[0] if len(arity) == 1 else None

    def handler(self, binary: str, name: str | None, near: str | None = None) -> DeclaredMethod | None:
        hs = self.handlers(binary, name, near)
        return hs[0] if hs else None

    def interface_methods(self, iface: str, impl: str | None, near: str | None = None
                           ) -> tuple[list[DeclaredMethod], str]:
        ms = self.methods_of(iface, near)
        if ms:
            return ms, "INTERFACE"
        if impl:
            return [m for m in self.methods_of(impl, near) if "public" in m["modifiers"] and "static" not in m["modifiers"]], \
                "IMPLEMENTATION"
        return [], "UNKNOWN"

    def class_value(self, c: Candidate, role: str) -> str | None:
        vs = values(c, role)
        return vs[0] if vs else None

    @property
    def http_host(self) -> str:
        """The host of the package's own HTTP urns (endpoints, gateway routes): the name the registry
        knows it by, so the original id of a deployable renamed ``{name}~…`` after a collision (the
        graph tells the copies apart by service_id and scan)."""
        return str(self.plan.id_basis.get("collided_with") or self.plan.service_id)

    def split_tag(self, value: str, sep: str | None) -> tuple[str, str | None]:
        if sep and sep in value:
            topic, _, tag = value.partition(sep)
            return topic, tag or None
        return value, None


def stable_ordinal(text: str) -> int:
    """A small deterministic number for relation ordinals derived from a name."""
    return int(sha256_hex(text)[:6], 16)
