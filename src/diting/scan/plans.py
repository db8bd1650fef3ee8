"""Stage ``services``: which modules are deployable, their Spring configuration and service ids, and the ``lib:`` units (docs/architecture.md §2.5).

A module is deployable by its build (``BOOT_PLUGIN``, ``WAR_PACKAGING``), by an application class
with a ``main``, or by the ``--inventory`` file. Each deployable's configuration is loaded here, and
its service id taken from ``spring.application.name``, else its artifactId; shared and colliding
ids are told apart. Modules outside every service's closure become one ``lib:`` package per
top-level reactor. ``--service`` narrows the list.
"""

from __future__ import annotations

import hashlib
import posixpath
from typing import TYPE_CHECKING, Any

from diting.config.configserver import (
    CLIENT_ARTIFACTS,
    SERVER_ANNOTATION,
    SERVER_ARTIFACT,
    choose_server,
    client_request,
    native_server,
    served_files,
    uses_config_server,
)
from diting.config.remote import add_remote_sources, remote_file_index
from diting.config.spring import SpringConfig, add_file_sources, load_spring_config, profile_set, spring_config_files
from diting.errors import UserError
from diting.findings import Finding
from diting.inventory.layout import CONFIG, JAVA
from diting.inventory.services import (
    DeployableBasis,
    LIB_PREFIX,
    PackagePlan,
    clean_service_id,
    deployable_basis,
    unreserved_service_id,
)
from diting.ir.writer import package_dir_name
from diting.java.records import MainMethod
from diting.source.text import decode_bytes

if TYPE_CHECKING:
    from diting.scan.facts import ScanFacts
    from diting.scan.progress import Progress

NEEDS = ("options", "repo_id", "commit", "inventory_file", "snapshot", "config_dirs", "plugin_rules", "inv",
         "closures", "file_facts", "module_results")
MAKES = ("plans", "excluded_services", "inventory_unmapped")


def find_services(s: "ScanFacts", progress: "Progress") -> dict[str, Any]:
    """Find the deployable modules, load their configuration, name them; the rest become lib units."""
    plans, excluded, unmapped = ServicePlanner(s).plans()
    return {"plans": plans, "excluded_services": excluded, "inventory_unmapped": unmapped}


class ServicePlanner:
    """The package plans of one scan, from its facts."""

    def __init__(self, s: "ScanFacts") -> None:
        self.s = s
        self._remote_index = None

    def plans(self) -> tuple[list[PackagePlan], list[tuple[str, str]], list[str]]:
        model = self.s.inv.model
        forced: dict[str, dict] = {}
        excluded: list[tuple[str, str]] = []
        unmapped: list[str] = []
        if self.s.inventory_file is not None:
            forced, excluded, unmapped = self.s.inventory_file.for_repo(self.s.repo_id, model)
        excluded_modules = {mp for sid, mp in excluded}
        plans: list[PackagePlan] = []
        for path in sorted(model.modules):
            if path in excluded_modules:
                continue
            plan = self._service_plan(path, forced.get(path))
            if plan is not None:
                plans.append(plan)
        self._config_server_sources(plans)
        self._shared_id(plans)
        self._disambiguate(plans)
        plans += self._lib_plans(plans, excluded_modules)
        self._lib_ids(plans)
        self._dir_names(plans)
        if self.s.options.services:
            plans = self._chosen(plans)
        plans.sort(key=lambda p: p.service_id)
        return plans, excluded, unmapped

    def _service_plan(self, path: str, inv_entry: dict | None) -> PackagePlan | None:
        """The plan of the module at ``path`` when it is deployable (by its build, an application
        class with a ``main``, or ``inv_entry``: its entry in the inventory file), else None: its
        Spring configuration (of the inventory's profile when no ``--profile`` is given) and its
        service id (the inventory's, else :meth:`_service_id`), never a reserved one."""
        mod = self.s.inv.model.modules[path]
        mains: list[MainMethod] = self.s.module_results[path].java.mains
        app_mains = [(mm.application_annotation, *mm.type_header) for mm in mains if mm.application_annotation]
        basis = deployable_basis(mod, app_mains, self.s.plugin_rules.get(mod.build_system, {}))
        if inv_entry is not None:
            ev = mod.evidence()
            basis.append(DeployableBasis("INVENTORY", ev.path, ev.start, ev.end,
                                         f"named by the inventory file as {inv_entry['service_id']}"))
        if not basis:
            return None
        plan = PackagePlan(service_id="", kind="SERVICE", roots=[path], modules=self.s.closures[path], basis=basis)
        profiles = self.s.options.profiles
        if profiles is None and inv_entry is not None and inv_entry.get("profile"):
            profiles = profile_set(str(inv_entry["profile"]), f"the inventory's profile of {inv_entry['service_id']}")
        plan.config = self._spring_config(mod, profiles)
        if inv_entry is not None:
            plan.service_id = clean_service_id(str(inv_entry["service_id"]))
            plan.id_basis = {"source": "inventory", "inventory_service_id": plan.service_id}
            plan.owner = inv_entry.get("owner")
        else:
            plan.service_id, plan.id_basis = self._service_id(mod, plan.config)
        self._unreserve(plan, mod)
        return plan

    def _lib_plans(self, plans: list[PackagePlan], excluded_modules: set[str]) -> list[PackagePlan]:
        """The ``lib:`` plans: the modules outside every service's closure (and not excluded), one plan
        per top-level reactor, named after the reactor's artifactId (else its folder), with the
        closures of its members after them."""
        model = self.s.inv.model
        in_service: set[str] = set()
        for p in plans:
            in_service.update(p.modules)
        lib_roots: dict[str, list[str]] = {}
        for path in sorted(model.modules):
            if path in in_service or path in excluded_modules:
                continue
            lib_roots.setdefault(model.reactor_root(path), []).append(path)
        libs: list[PackagePlan] = []
        for reactor, members in sorted(lib_roots.items()):
            rmod = model.modules[reactor]
            name = rmod.artifact_id if rmod.artifact_id and "${" not in rmod.artifact_id else \
                (reactor.rsplit("/", 2)[-2] if "/" in reactor else "root")
            mods: list[str] = list(members)
            for m in members:
                for d in self.s.closures.get(m, [m]):
                    if d not in mods:
                        mods.append(d)
            libs.append(PackagePlan(service_id=clean_service_id(f"{LIB_PREFIX}{name}"), kind="LIB", roots=members,
                                    modules=members + sorted(set(mods) - set(members))))
        return libs

    def _lib_ids(self, plans: list[PackagePlan]) -> None:
        """Lib ids told apart: lib ids that collide (two reactors with one artifactId) get
        ``~{reactor folder}``; a lib id equal to a service's gets ``~lib`` (SERVICE_ID_COLLISION)."""
        model = self.s.inv.model
        seen: dict[str, int] = {}
        for p in plans:
            if p.kind == "LIB":
                seen[p.service_id] = seen.get(p.service_id, 0) + 1
        for p in plans:
            if p.kind == "LIB" and seen[p.service_id] > 1:
                p.service_id = f"{p.service_id}~{model.modules[p.roots[0]].dir or 'root'}".replace("/", ".")
        # a lib package never takes a service's id
        service_ids = {p.service_id for p in plans if p.kind == "SERVICE"}
        for p in plans:
            if p.kind == "LIB" and p.service_id in service_ids:
                p.findings.append(Finding("SERVICE_ID_COLLISION", f"{p.service_id!r} is also a service's id; this lib "
                                          f"package is named {p.service_id + '~lib'!r}", p.roots[0], 0, 0,
                                          p.roots[0], f"lib-collision|{p.service_id}"))
                p.service_id += "~lib"

    def _dir_names(self, plans: list[PackagePlan]) -> None:
        """Each plan's package directory name (:func:`package_dir_name`); names equal but for case, which
        would share a directory on case-insensitive file systems, get ``~{sha256 of the id, 12 hex}``."""
        folded: dict[str, list[PackagePlan]] = {}
        for p in plans:
            p.dir_name = package_dir_name(p.service_id, self.s.commit, p.profiles)
            folded.setdefault(p.dir_name.casefold(), []).append(p)
        for group in folded.values():
            if len(group) > 1:
                for p in group:
                    p.dir_name += "~" + hashlib.sha256(p.service_id.encode("utf-8")).hexdigest()[:12]

    def _chosen(self, plans: list[PackagePlan]) -> list[PackagePlan]:
        """The plans ``--service`` names. Raises :class:`UserError` naming those found when one it
        names is not a service (or lib unit) of the repository."""
        wanted = set(self.s.options.services)
        chosen = [p for p in plans if p.service_id in wanted]
        missing = wanted - {p.service_id for p in chosen}
        if missing:
            available = ", ".join(sorted(p.service_id for p in plans))
            raise UserError(f"no service named {', '.join(sorted(missing))} in this repository at "
                            f"{self.s.commit[:12]}; services found: {available}")
        return chosen

    @staticmethod
    def _unreserve(plan: PackagePlan, mod) -> None:
        """A service id never begins with ``lib:`` (the prefix of lib packages, any case): its colon is
        written ``_`` (:func:`unreserved_service_id`), ``service_id_basis.raw_value`` keeps the id as
        written, and SERVICE_ID_RESERVED cites where the id came from."""
        sid = unreserved_service_id(plan.service_id)
        if sid == plan.service_id:
            return
        if plan.id_basis.get("source") == "spring.application.name":
            path, line, source_type = str(plan.id_basis["path"]), int(plan.id_basis.get("line") or 0), "CONFIG"
            origin = f"spring.application.name in {path}"
        else:
            ev = mod.evidence()
            path, line, source_type = ev.path, ev.start, "BUILD"
            origin = "the inventory file" if plan.id_basis.get("source") == "inventory" else "the module's artifactId"
        plan.findings.append(Finding(
            "SERVICE_ID_RESERVED", f"service id {plan.service_id!r} (from {origin}) begins with {LIB_PREFIX!r}, the "
            f"prefix reserved for packages of modules outside every service; this service is named {sid!r}",
            path, line, line, mod.build_file, f"reserved|{plan.service_id}", source_type))
        plan.id_basis = {**plan.id_basis, "raw_value": plan.id_basis.get("raw_value", plan.service_id)}
        plan.service_id = sid

    def _shared_id(self, plans: list[PackagePlan]) -> None:
        """SERVICE_ID_SHARED on every service when all of an estate's services (two or more) got one id
        from ``spring.application.name`` — one file read by every service (two or more), or three or
        more services: the name came from a source that is not each service's own (a shared or
        misbound config file), and every id after :meth:`_disambiguate` is only a module's name."""
        named = [p for p in plans if p.id_basis.get("source") == "spring.application.name"]
        if len(named) < 2 or len(named) != len(plans) or len({p.service_id for p in named}) != 1:
            return
        paths = sorted({str(p.id_basis.get("path")) for p in named})
        if len(named) < 3 and len(paths) == len(named):
            return
        sid = named[0].service_id
        for p in named:
            mod = self.s.inv.model.modules[p.roots[0]]
            p.findings.append(Finding(
                "SERVICE_ID_SHARED", f"every service of the repository ({len(named)}) is named {sid!r} by "
                f"spring.application.name in {', '.join(paths)}, a source that is not each service's own; the "
                "services are told apart by their modules only", str(p.id_basis.get("path")),
                int(p.id_basis.get("line") or 0), int(p.id_basis.get("line") or 0), mod.build_file,
                f"shared-id|{sid}", "CONFIG"))

    def _disambiguate(self, plans: list[PackagePlan]) -> None:
        """Give deployables that share a service id unique, deterministic ids (SERVICE_ID_COLLISION on
        each): ``{id}~{artifactId}``, else ``{id}~{groupId}:{artifactId}`` when the artifactId is
        shared too, else ``{id}~{module path}`` (``/`` written ``.``) when the coordinates collide
        (one project copied into several folders)."""
        model = self.s.inv.model
        by_id: dict[str, list[PackagePlan]] = {}
        for p in plans:
            by_id.setdefault(p.service_id, []).append(p)
        taken = {p.service_id for p in plans}
        for sid, group in sorted(by_id.items()):
            if len(group) < 2:
                continue
            mods = {id(p): model.modules[p.roots[0]] for p in group}

            def shared(key) -> bool:
                return len({id(q) for q in group if key(mods[id(q)]) == key(mods[id(p)])}) > 1

            renamed: dict[int, str] = {}
            for p in group:
                mod = mods[id(p)]
                if not shared(lambda m: m.artifact_id):
                    new = f"{sid}~{mod.artifact_id}"
                elif not shared(lambda m: (m.group_id, m.artifact_id)):
                    new = f"{sid}~{mod.group_id}:{mod.artifact_id}"
                else:
                    new = f"{sid}~{(mod.dir or 'root').replace('/', '.')}"
                renamed[id(p)] = clean_service_id(new)
            for p in group:
                new = renamed[id(p)]
                if new in taken and new != p.service_id:  # another deployable already has that id
                    new = clean_service_id(f"{new}~{(mods[id(p)].dir or 'root').replace('/', '.')}")
                mod = mods[id(p)]
                others = ", ".join(sorted(q.roots[0] for q in group if q is not p))
                ev = mod.evidence()
                p.findings.append(Finding("SERVICE_ID_COLLISION", f"service id {sid!r} is also the id of the "
                                          f"deployable module(s) {others}; this one is named {new!r}",
                                          ev.path, ev.start, ev.end, mod.build_file, f"collision|{sid}"))
                p.id_basis = dict(p.id_basis, collided_with=sid)
                p.service_id = new
                taken.add(new)

    def _is_config_server(self, pom_path: str) -> bool:
        """Whether a module is a Spring Cloud Config server: it depends on spring-cloud-config-server
        or one of its classes is annotated ``@EnableConfigServer``."""
        mod = self.s.inv.model.modules[pom_path]
        if any(d.ga == SERVER_ARTIFACT for d in mod.dependencies):
            return True
        pkg, simple = SERVER_ANNOTATION.rsplit(".", 1)
        for f in self.s.inv.files_by_module.get(pom_path, []):
            facts = self.s.file_facts.get(f.path) if f.kind == JAVA else None
            if facts is None:
                continue
            imported = any((i.name == SERVER_ANNOTATION and not i.wildcard) or (i.wildcard and i.name.removesuffix(".*")
                                                                                == pkg) for i in facts.imports)
            if any(a.name == SERVER_ANNOTATION or (a.name == simple and (imported or facts.package == pkg))
                   for td in facts.types for a in td.annotations):
                return True
        return False

    def _config_server_sources(self, plans: list[PackagePlan]) -> None:
        """Add to each client service the files a native config server of the repository serves it
        (config/configserver.py), above its own files. The client's name is read before (the files
        are chosen by it)."""
        model = self.s.inv.model
        servers = [native_server(p.roots[0], p.config, model.modules[p.roots[0]].resource_roots) for p in plans
                   if p.config is not None and self._is_config_server(p.roots[0])]
        if not any(srv.native for srv in servers):
            return
        own = {srv.module for srv in servers}
        for p in plans:
            if p.config is None or p.roots[0] in own:
                continue
            depends = any(d.ga in CLIENT_ARTIFACTS for m in p.modules for d in model.modules[m].dependencies)
            client, uri, service_id = uses_config_server(p.config, depends)
            if not client:
                continue
            srv = choose_server(servers, uri, service_id)
            mod = model.modules[p.roots[0]]
            if srv is not None and not srv.native:
                continue  # its files are in the server's git (or other) backend, not here
            if srv is None:
                via = uri or service_id or "its dependency on the config client"
                p.findings.append(Finding(
                    "CONFIG_VALUE_UNKNOWN", f"{p.roots[0]} reads a config server ({via}) and {len(servers)} "
                    f"config servers could serve it ({', '.join(sorted(s.module for s in servers))}): their files "
                    "are not read", mod.build_file, 0, 0, mod.build_file, "config-server|choice", "CONFIG"))
                continue
            name = p.config.not_chosen_by_name().get("spring.application.name")
            app, profiles = client_request(p.config, (name.value or "").strip() if name.status == "RESOLVED" and
                                           name.value and name.value.strip() else "application")
            served = served_files(srv, app, profiles, self.s.snapshot.by_path)
            add_file_sources(p.config, [(order, path, True) for order, path in served], self._read_text, -2)
            if served:
                p.config.profile_basis += f"; config server {srv.module} (native) serves {app}"

    def _read_text(self, path: str) -> tuple[str, str] | None:
        """A repository file as text with its blob sha, or None (not a readable blob)."""
        got = self.s.snapshot.read(path)
        if got.data is None:
            return None
        return decode_bytes(got.data).text, self.s.snapshot.by_path[path].oid

    def _spring_config(self, mod, profiles: list[str] | None) -> SpringConfig:
        paths = [f.path for f in self.s.inv.files_by_module.get(mod.build_file, []) if f.kind == CONFIG]
        files = spring_config_files(paths, mod.resource_roots)
        read_text = self._read_text

        cfg = load_spring_config(files, read_text, mod.property_lookup(), profiles, lambda loc: self._import_path(mod, loc))
        if self._remote_index is None:
            module_dirs = [m.dir for m in self.s.inv.model.modules.values()]
            self._remote_index = remote_file_index(self.s.snapshot.by_path, module_dirs, self.s.config_dirs)
        add_remote_sources(cfg, self._remote_index, read_text)
        return cfg

    def _import_path(self, mod, location: str) -> str | None:
        """The repository file a ``spring.config.import`` location names for module ``mod``, or None:
        ``classpath:x`` (and a bare ``x``) in the resource roots of the module, then of the modules
        it depends on; ``file:x`` relative to the module's folder, then to the repository root
        (never outside the repository)."""
        if location.startswith("file:"):
            rel = location[len("file:"):].strip()
            if rel.startswith("/") or "\\" in rel:
                return None
            for base in (mod.dir, ""):
                p = posixpath.normpath(posixpath.join(base, rel)) if base else posixpath.normpath(rel)
                if not p.startswith("../") and p != ".." and p in self.s.snapshot.by_path:
                    return p
            return None
        rel = location[len("classpath:"):] if location.startswith("classpath:") else location
        rel = posixpath.normpath(rel.strip().lstrip("/"))
        if rel.startswith("..") or rel == ".":
            return None
        for m in [mod.build_file] + [d for d in self.s.closures.get(mod.build_file, []) if d != mod.build_file]:
            for root in self.s.inv.model.modules[m].resource_roots:
                p = f"{root}/{rel}" if root else rel
                if p in self.s.snapshot.by_path:
                    return p
        return None

    def _service_id(self, mod, cfg: SpringConfig) -> tuple[str, dict]:
        """The service id from ``spring.application.name`` of the sources not chosen by that name,
        else the artifactId; with its basis."""
        rv = cfg.not_chosen_by_name().get("spring.application.name")
        if rv.status == "RESOLVED" and rv.value and rv.value.strip() and "@" not in rv.value:
            basis = {"source": "spring.application.name", "path": rv.path, "line": rv.entry.line if rv.entry else 0,
                     "value_basis": rv.basis}
            sid = clean_service_id(rv.value)
            if sid != rv.value.strip():
                basis["raw_value"] = rv.value
            return sid, basis
        basis = {"source": "artifactId", "spring_application_name": rv.status}
        if rv.status == "AMBIGUOUS":
            basis["candidates"] = [{"path": p, "value": v, "line": ln} for p, v, ln in rv.candidates]
        elif rv.entry is not None:
            basis["unresolved_value"] = rv.entry.value
            basis["path"] = rv.path
            basis["line"] = rv.entry.line
        return clean_service_id(mod.artifact_id or mod.dir.rsplit("/", 1)[-1] or "root"), basis


