"""The package's beans and what is injected where, and the gaps of its Spring context (docs/scanning.md §11)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from diting.ir import ids
from diting.probes.context import stable_ordinal
from diting.resolve.spring import Bean, InjectionPoint, Resolution, values
from diting.resolve.types import TypeOf

if TYPE_CHECKING:
    from diting.probes.matches import Candidate
    from diting.probes.context import ProbeContext


def _merged(got: list[Resolution], reason: str, basis: str | None) -> Resolution:
    """One field's bean from several injection points that fill it: RESOLVED when all resolve to the
    same single bean (with ``basis``), else AMBIGUOUS over their beans (UNRESOLVED with none)."""
    beans = list({id(b): b for r in got for b in r.beans}.values())
    one = all(r.status == "RESOLVED" for r in got) and len(beans) == 1
    return Resolution("RESOLVED" if one else "AMBIGUOUS" if beans else "UNRESOLVED", beans, reason=reason,
                      basis=basis if one else None)


def context_gaps(pc: "ProbeContext") -> None:
    """A scan package, import or XML location that does not fold leaves the context incomplete;
    a property source that names no file leaves its keys unknown."""
    for c, loc in pc.missing_property_sources:
        pc.diag("CONFIG_VALUE_UNKNOWN", f"{c['path']}:{c['lines'][0]}|property-source|{loc}",
                  f"{c['path']}:{c['lines'][0]}: property source {loc} names no file of the package; the "
                  "values it would supply are unknown", [pc.owner_rid(c)], c)
    for c, loc in pc.ctx.missing:
        pc.diag("CONSTANT_UNRESOLVED", f"{c['path']}:{c['lines'][0]}|resource-missing|{loc}",
                  f"{c['path']}:{c['lines'][0]}: context location {loc} names no file of the package (a "
                  "library's jar may hold it); the beans it would declare are not loaded", [pc.owner_rid(c)], c)
    for c in pc.ctx.by_emit.get("FEIGN_SCAN", []):
        if c["form"] != "imports" or not pc.ctx.deployed:
            continue
        for e in c.get("attrs", {}).get("entries", []):
            if e["class"] not in pc.ctx.class_modules:
                pc.diag("TYPE_UNRESOLVED", f"{c['path']}:{e['lines'][0]}|imports|{e['class']}",
                          f"{c['path']}:{e['lines'][0]}: {e['class']} is listed as a Feign client, but no module "
                          "of the package declares it (a library's jar may hold it); no client is registered",
                          [pc.owner_rid(c)], dict(c, lines=e["lines"]))
    for c, role, expr in pc.ctx.unfolded:
        if role not in ("base_packages", "base_classes", "classes", "resource") or (
                not pc.ctx.cand_loaded(c) and c["emit"] != "DEPLOYABLE_APPLICATION"):
            continue
        pc.diag("CONSTANT_UNRESOLVED", f"{c['path']}:{c['lines'][0]}|{role}|{expr}", f"{c['path']}:"
                  f"{c['lines'][0]}: {role.replace('_', ' ')} {expr} does not resolve; what it would add to the "
                  "Spring context is not loaded", [pc.owner_rid(c)], c)


def beans(pc: "ProbeContext") -> None:
    for b in pc.ctx.beans:
        stable = b.stable
        attrs = {"type": b.type, "declared_by": b.kind, "loaded": b.loaded, "primary": b.primary,
                 "aliases": sorted(b.aliases), "properties": {k: {"value": v.get("value"), "ref": v.get("ref")}
                                                              for k, v in sorted(b.properties.items())}}
        rid = pc.rs.entity("BEAN", stable, b.name, [pc.cseg(b.cand)], attrs)
        pc.bean_rids[id(b)] = rid
        if not b.loaded:
            pc.stats.beans_not_loaded += 1
        elif b.kind == "XML":
            _property_bindings(pc, b, rid, stable)
        target = _type_rid(pc, b.type, b.module)
        if target:
            pc.rs.relation("BINDS_TO", rid, stable, target_rid=target[0], target_key=target[1],
                             status="RESOLVED", evidence=[pc.cseg(b.cand)])


def _property_bindings(pc: "ProbeContext", b: Bean, rid: str, stable: str) -> None:
    """Config bindings of a loaded XML bean's ``<property value="${…}">`` placeholders."""
    for pname, p in sorted(b.properties.items()):
        v = p.get("value")
        if not v or "${" not in v:
            continue
        rt = pc.resolve({"value": v, "vtype": "java.lang.String", "basis": "XML", "placeholders": True})
        line = p.get("line") or b.cand["lines"][0]
        pc.config_binding(rid, stable, rt, dict(b.cand, lines=[line, max(line, p.get("end_line") or line)]),
                            f"<property name={pname}>")


def _type_rid(pc: "ProbeContext", binary: str, near: str | None = None) -> tuple[str, str] | None:
    module = pc.ctx.home(binary, near)
    if module is None:
        return None
    stable = f"{pc.s.inv.ns[module]}/{binary}"
    return ids.entity_record_id("TYPE", stable), stable


def injection_points(pc: "ProbeContext") -> list[InjectionPoint]:
    """Field, constructor and setter injection points of loaded bean classes."""
    pts: list[InjectionPoint] = []
    seen: set[tuple[str, str]] = set()
    by_field: dict[tuple[str, str], list[Candidate]] = {}
    for c in pc.ctx.by_emit.get("INJECTION", []):
        if c["target"] == "FIELD":
            by_field.setdefault((c["type"]["binary"], c["field"]["name"]), []).append(c)
    for (owner, fname), cs in sorted(by_field.items()):
        c = cs[0]
        if not pc.ctx.class_loaded(owner):
            continue
        names = [v for cc in cs for v in values(cc, "name")]
        quals = [v for cc in cs for v in values(cc, "qualifier")] + [q for q in [c["field"].get("qualifier")] if q]
        resource = any(cc["annotation"].endswith(".Resource") for cc in cs)
        declared = InjectionPoint(owner, c["module"], "FIELD", fname, c["field"]["type"],
                                  c["field"].get("type_args", []), quals[0] if quals else None,
                                  names[0] if names else (fname if resource else None), c, field=c["field"])
        pts.extend(_generic_points(pc, declared))
        seen.add((owner, fname))
    # an imported class (@Import, an auto-configuration listing) is constructed like a component;
    # its constructors are known when an annotation of the class made it a candidate
    described = {}
    for c in pc.cands:
        if c.get("target") == "TYPE" and "type_detail" in c:
            described.setdefault((c["module"], c["type"]["binary"]), c)
    for b in pc.ctx.beans:
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
    for b in pc.ctx.beans:  # @Bean parameters stored in the returned object's fields
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
    for c in pc.ctx.by_emit.get("INJECTION", []):
        if c["target"] in ("METHOD",) and c["member"]["name"] != "<init>" and pc.ctx.class_loaded(
                c["type"]["binary"]):
            for p in c["member"]["params"]:
                pts.append(InjectionPoint(c["type"]["binary"], c["module"], "METHOD", p["name"], p["type"],
                                          p.get("type_args", []), None, None, c, member=c["member"]))
    return pts


def _generic_points(pc: "ProbeContext", ip: InjectionPoint) -> list[InjectionPoint]:
    """A field injection point as the context injects it: a field of a generic class whose type
    names the class's type variables (``Mapper<T> mapper``, ``M mapper``) is injected into each
    loaded bean class below it with the type arguments that class binds (one point per class,
    ``seen_from``); the declared point when no bean class binds them, or the class is a bean of
    its own."""
    oracle = pc.s.oracle
    fr = oracle.field_of(ip.module, ip.owner_type, ip.name)
    if fr is None or not _has_type_params(pc, ip.module, ip.owner_type):
        return [ip]
    out: list[InjectionPoint] = []
    own = False
    for b in pc.ctx.beans:
        if not b.loaded or b.kind not in ("COMPONENT", "IMPORTED", "XML", "BEAN_METHOD"):
            continue
        if b.type == ip.owner_type:
            own = True
            continue
        if ip.owner_type not in b.supertypes:
            continue
        t = oracle.field_type(fr, TypeOf(b.type, pc.ctx.home(b.type, b.module)))
        args = [a.name if a is not None else None for a in t.args] if t is not None else []
        if t is None or (t.name == ip.type and args == list(ip.type_args)):
            continue
        out.append(InjectionPoint(ip.owner_type, ip.module, ip.target, ip.name, t.name, args, ip.qualifier,
                                  ip.by_name, ip.cand, field=ip.field, seen_from=b.type))
    return sorted(out, key=lambda p: p.seen_from or "") + ([ip] if own or not out else [])


def _has_type_params(pc: "ProbeContext", module: str, binary: str) -> bool:
    found = pc.s.oracle.decl(module, binary)
    return found is not None and bool(found[0].facts.types[found[1]].type_params)


def injection(pc: "ProbeContext") -> None:
    if not pc.ctx.deployed:
        return  # a lib: package has no Spring context, so nothing is injected
    per_class: dict[tuple[str, str], list[Resolution]] = {}
    built: dict[tuple[str, str], list[Resolution]] = {}  # (type, field) a @Bean parameter is kept in
    for ip in injection_points(pc):
        res = pc.ctx.resolve(ip)
        if ip.target == "FIELD":
            if ip.seen_from is None:
                pc.injected[(ip.owner_type, ip.name)] = res
            else:
                pc.injected[(ip.seen_from, ip.name)] = res
                per_class.setdefault((ip.owner_type, ip.name), []).append(res)
            src_rid, src_stable = ip.field["rid"], ip.field["stable"]
            ev = pc.seg(ip.cand["path"], *ip.field.get("lines", ip.cand["lines"])) if ip.field.get("lines") \
                else pc.cseg(ip.cand)
        else:
            if ip.stores is not None:
                built.setdefault(ip.stores, []).append(res)
            elif ip.member["name"] == "<init>":
                # constructor injection: the field the parameter is stored in (Lombok: same name)
                field_name = ip.name if ip.member.get("synthesized_by") else next(
                    (f for f, p in ip.member.get("assigns", {}).items() if p == ip.name), None)
                if field_name:
                    pc.injected[(ip.owner_type, field_name)] = res
            src_rid, src_stable = ip.member["rid"], ip.member["stable"]
            ev = pc.seg(ip.cand["path"], *ip.member["lines"]) if ip.member.get("lines") else pc.cseg(ip.cand)
        attrs = {"injection": ip.target, "name": ip.name, "type": ip.type, "qualifier": ip.qualifier,
                 "polymorphic": res.polymorphic}
        key = f"{ip.type}:{ip.name}"
        ordinal = 0 if ip.target == "FIELD" else stable_ordinal(ip.name)
        diag_key = f"{src_stable}|{ip.name}"
        where = f" (inherited by {ip.seen_from})" if ip.seen_from else ""
        if ip.seen_from is not None:  # one relation per bean class the inherited field is injected into
            attrs.update(seen_from=ip.seen_from, type_args=list(ip.type_args))
            key, ordinal, diag_key = f"{key}@{ip.seen_from}", stable_ordinal(ip.seen_from), \
                f"{diag_key}|{ip.seen_from}"
        if res.status == "RESOLVED" and len(res.beans) == 1:
            b = res.beans[0]
            attrs["basis"] = res.basis
            pc.rs.relation("INJECTS", src_rid, src_stable, target_rid=pc.bean_rids[id(b)],
                             target_key=b.stable, status="RESOLVED", evidence=[ev],
                             attributes=attrs, ordinal=ordinal)
        elif len(res.beans) >= 2:
            code = "POLYMORPHIC_ROUTING" if res.polymorphic else "BEAN_AMBIGUOUS"
            d = pc.rs.diagnostic(code, diag_key, f"{src_stable}{where}: {res.reason} "
                                   f"({', '.join(sorted(b.name for b in res.beans))})", [src_rid], [ev])
            pc.rs.relation("INJECTS", src_rid, src_stable, target_rid=None, target_key=f"?{key}",
                             status="AMBIGUOUS", evidence=[ev], candidates=[pc.bean_rids[id(b)] for b in res.beans],
                             diagnostics=[d], attributes=attrs, ordinal=ordinal)
        elif not res.polymorphic:
            external = pc.ctx.class_packages.get(res.type or ip.type) is None
            if external:
                attrs["provided_by"] = "auto-configuration or a library (no bean of the package declares it)"
            d = pc.rs.diagnostic("BEAN_EXTERNAL" if external else "BEAN_UNRESOLVED", diag_key, f"{src_stable}{where}: {res.reason}",
                                   [src_rid], [ev])
            pc.rs.relation("INJECTS", src_rid, src_stable, target_rid=None, target_key=f"?{key}",
                             status="UNRESOLVED", evidence=[ev], diagnostics=[d], match_keys={
                                 "type": ip.type, "name": ip.name, "qualifier": ip.qualifier,
                                 "bean_name": ip.by_name},
                             attributes=attrs, ordinal=ordinal)

    for f, got in per_class.items():
        if f in pc.injected:
            continue  # the declaring class is a bean of its own: its own resolution stands
        pc.injected[f] = _merged(got, "the bean injected differs by the class the field is inherited by",
                                   "GENERIC_TYPE")
    for f, got in sorted(built.items()):
        if f not in pc.injected:  # a @Component's own injection stands
            pc.injected[f] = _merged(got, "the @Bean methods building the class pass it different beans",
                                       got[0].basis)
