"""The Spring context of one package: what it loads, its beans and injection points (docs/scanning.md §12, §13).

**Loaded** (context scope): classes in the component-scan base packages (the
``@SpringBootApplication`` class's package and its ``scanBasePackages``,
``@ComponentScan`` and ``<context:component-scan>`` of loaded configuration),
classes named by ``@Import`` of loaded classes, auto-configurations listed in
``spring.factories`` / ``AutoConfiguration.imports``; XML files named by
``@ImportResource``, ``<import resource>``, web.xml ``contextConfigLocation``
or an ``XmlApplicationContext`` created by the package's own code; the classes
an ``AnnotationConfigApplicationContext`` the package's code creates registers; Feign
clients covered by ``@EnableFeignClients`` or listed by an ``imports`` rule's
``META-INF/spring/{FQN}.imports`` file on the package's classpath. Computed to a fixpoint. Locations as Spring reads
them (``classpath:``, ``classpath*:``, Ant patterns, ``${}``; an ``<import resource>`` relative to
the importing file); scan base packages may be Ant patterns (:class:`PackagePatterns`).

**Beans**: stereotype classes, ``@Bean`` methods of loaded configuration
classes, XML ``<bean>``, RPC consumer beans, Feign clients. **Injection**
(``@Autowired``, ``@Resource``, ``@Inject``, constructor and setter injection,
Lombok constructors) resolved by type, narrowed by ``@Qualifier`` /
``@Resource(name)``, then ``@Primary`` (a Feign client's proxy is primary), then the field or
parameter name, the deciding step kept as the resolution's ``basis``; more
than one candidate left is AMBIGUOUS with every candidate; Map/List injection
and factories keyed by strings are POLYMORPHIC_ROUTING.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, TYPE_CHECKING

from diting.config.spring import profiles_match
from diting.resolve.spring_locations import (PackagePatterns, ant_pattern, profile_condition_holds,
                                             relative_location)

if TYPE_CHECKING:
    from diting.probes.matches import Candidate, FieldInfo, MemberInfo, Outcome

COLLECTION_TYPES = {"java.util.List", "java.util.Collection", "java.util.Set", "java.lang.Iterable",
                    "java.util.Map", "java.util.SortedMap", "java.util.LinkedHashMap", "java.util.HashMap"}
WRAPPER_TYPES = {"java.util.Optional", "org.springframework.beans.factory.ObjectProvider",
                 "javax.inject.Provider", "jakarta.inject.Provider"}


def default_bean_name(simple: str) -> str:
    """Spring's AnnotationBeanNameGenerator: decapitalise, unless the first two letters are upper case."""
    if len(simple) > 1 and simple[0].isupper() and simple[1].isupper():
        return simple
    return simple[:1].lower() + simple[1:]


def values(cand: Candidate, role: str) -> list[str]:
    """The folded values of a role (unresolved ones left out)."""
    return [o["value"] for o in cand.get("roles", {}).get(role, []) if "value" in o]


@dataclass
class Bean:
    """A Spring bean: name, type (binary name), where it is declared, whether the context loads it."""

    name: str
    type: str
    module: str
    kind: str  # COMPONENT, BEAN_METHOD, XML, RPC_CONSUMER, FEIGN_CLIENT
    cand: Candidate
    loaded: bool = False
    primary: bool = False
    aliases: list[str] = field(default_factory=list)
    properties: dict[str, dict[str, Any]] = field(default_factory=dict)
    supertypes: set[str] = field(default_factory=set)
    #: the bean's stable id, ``bean:{ns}/{name}``; set by the context, which qualifies it by file when
    #: several declarations of a namespace share the name (separate XML contexts of one module)
    stable: str = ""

    @property
    def ns(self) -> str:
        return self.cand.get("ns", "")


@dataclass
class InjectionPoint:
    """Where a bean is injected: a field, or a parameter of a constructor or setter."""

    owner_type: str
    module: str
    target: str  # FIELD or METHOD
    name: str  # field or parameter name
    type: str
    type_args: list[str]
    qualifier: str | None
    by_name: str | None  # @Resource(name)
    cand: Candidate
    member: MemberInfo | None = None
    field: FieldInfo | None = None
    #: the bean class an inherited field is injected into, when its type was read through the type
    #: arguments that class binds (``type`` / ``type_args`` substituted); None for the declared field
    seen_from: str | None = None
    #: ``(type, field)`` the injected value ends up in, when that is not ``owner_type``'s own field
    #: (a ``@Bean`` method's parameter handed to the constructor of the object it returns)
    stores: tuple[str, str] | None = None


@dataclass
class Resolution:
    """The beans an injection point gets: status RESOLVED, AMBIGUOUS, UNRESOLVED; ``polymorphic``
    when a collection or map receives every candidate."""

    status: str
    beans: list[Bean]
    polymorphic: bool = False
    reason: str = ""
    type: str | None = None  # the bean type looked for (the element type of a collection)
    #: what decided a RESOLVED injection, as Spring decides it: TYPE (the one loaded bean of the
    #: type), RESOURCE_NAME (``@Resource`` by name), QUALIFIER, PRIMARY (``@Primary``,
    #: ``primary="true"``, a Feign client's proxy), BEAN_NAME (the field or parameter name is
    #: the bean's name), COLLECTION (every bean of the type), GENERIC_TYPE (the one bean whose type
    #: arguments match the injection point's, Spring's generic qualifier); None when not decided
    basis: str | None = None


def _assign_stable_ids(beans: list[Bean]) -> None:
    """Give each bean its stable id: ``bean:{ns}/{name}`` when the name is unique in its namespace,
    else ``bean:{ns}/{name}@{path}`` (and ``~n`` after it for repeats within one file, in declaration
    order), so that every declaration keeps a record of its own."""
    groups: dict[tuple[str, str], list[Bean]] = {}
    for b in beans:
        groups.setdefault((b.ns, b.name), []).append(b)
    for (ns, name), group in groups.items():
        if len(group) == 1:
            group[0].stable = f"bean:{ns}/{name}"
            continue
        per_path: dict[str, int] = {}
        for b in sorted(group, key=lambda b: (b.cand.get("path", ""), b.cand.get("lines", [0])[0])):
            path = b.cand.get("path", "")
            n = per_path.get(path, 0)
            per_path[path] = n + 1
            b.stable = f"bean:{ns}/{name}@{path}" + (f"~{n}" if n else "")


def _declared_types(c: Candidate) -> set[str]:
    """The class a candidate declares and the supertypes its declaration names."""
    return set(c.get("type_detail", {}).get("supertypes", [])) | {c["type"]["binary"]}


class SpringContext:
    """The context of one package, from the candidates of its modules.

    ``class_packages``: binary name → Java package of every in-package type;
    ``supertypes(module, binary)``: names of a type's supertypes; ``resources``: the package's
    resource file paths by classpath-relative path; ``app_packages``: base packages of the
    application class(es) (empty for a lib package)."""

    def __init__(self, cands: list[Candidate], class_packages: dict[str, tuple[str, str]],
                 supertypes: Callable[[str | None, str], set[str]], resources: dict[str, list[str]],
                 app_classes: set[str], app_packages: list[str], auto_configs: list[dict[str, Any]],
                 web_xml_locations: list[str], profiles: list[str],
                 type_kinds: dict[str, str] | None = None,
                 resolve_text: Callable[[Outcome], str | None] | None = None, deployed: bool = True,
                 class_modules: dict[str, list[str]] | None = None,
                 closures: dict[str, list[str]] | None = None,
                 type_args: Callable[[str | None, str, str], list[str | None] | None] | None = None) -> None:
        self.cands = cands
        #: ``(module, binary, target)`` → the type arguments (binary names, None where unknown) with
        #: which in-repo type ``binary`` extends generic ``target``; None when not known
        self.type_args = type_args or (lambda m, b, t: None)
        #: binary → every module of the package declaring it (several in a lib package of samples)
        self.class_modules = class_modules or {b: [m] for b, (m, _) in class_packages.items()}
        #: module → itself and its dependency modules, nearest first (its classpath inside the repo)
        self.closures = closures or {}
        #: False for a lib: package — no Spring context, so nothing is loaded (docs/scanning.md §12)
        self.deployed = deployed
        self.app_classes = app_classes
        self.profiles = profiles
        self.type_kinds = type_kinds or {}
        self.resolve_text = resolve_text or (lambda o: o.get("value") if "${" not in o.get("value", "${") else None)
        #: (candidate, role, expression) of context-shaping values that did not fold or resolve
        self.unfolded: list[tuple[Candidate, str, str]] = []
        self.class_packages = class_packages
        self.supertypes = supertypes
        self.resources = resources
        self.scan_packages = PackagePatterns(app_packages)
        self.loaded_classes: set[str] = set()
        self.loaded_xml: set[str] = set()
        #: client kind (a FEIGN_SCAN rule's ``client`` attribute, default feign) → its base packages
        #: and listed clients (``@EnableFeignClients``, ``@RetrofitScan``, imports files)
        self.client_scans: dict[str, PackagePatterns] = {"feign": PackagePatterns()}
        self.client_lists: dict[str, set[str]] = {"feign": set()}
        self.feign_scan = self.client_scans["feign"]
        self.feign_clients = self.client_lists["feign"]
        #: (declaration, location) of loaded context-loading declarations whose location names no file
        self.missing: list[tuple[Candidate, str]] = []
        #: class → the @Import-like declaration that put it into the context (it is a bean of its own)
        self.imported_by: dict[str, Candidate] = {}
        self.by_emit: dict[str, list[Candidate]] = {}
        for c in cands:
            self.by_emit.setdefault(c["emit"], []).append(c)
        #: classes and @Bean methods whose @Profile the active profiles do not satisfy
        self.profile_off_types: set[str] = set()
        self.profile_off_methods: set[str] = set()
        for c in self.by_emit.get("PROFILE", []):
            if not profile_condition_holds(self.vals(c, "value"), profiles):
                if c["target"] == "TYPE":
                    self.profile_off_types.add(c["type"]["binary"])
                elif c.get("member"):
                    self.profile_off_methods.add(c["member"]["stable"])
        self._imports = list(auto_configs)
        self._xml_roots = list(web_xml_locations)
        if deployed:
            self._fixpoint()
        self.beans = self._beans()
        _assign_stable_ids(self.beans)
        self.by_name: dict[str, list[Bean]] = {}
        for b in self.beans:
            for n in [b.name] + b.aliases:
                self.by_name.setdefault(n, []).append(b)

    def home(self, binary: str, near: str | None = None) -> str | None:
        """The module whose declaration of ``binary`` the code of module ``near`` sees: its own, else
        the nearest on its classpath; the package's first (sorted) when ``near`` is not given or sees
        none. None when the package does not declare the type."""
        mods = self.class_modules.get(binary)
        if not mods:
            return None
        if near is not None and len(mods) > 1:
            for m in self.closures.get(near, [near]):
                if m in mods:
                    return m
        return mods[0]

    def named(self, name: str | None, near: Candidate | None = None) -> list[Bean]:
        """Beans named ``name``, those declared in the same file as candidate ``near`` first, then
        those of its module, then the rest (one module's separate XML contexts may reuse a name)."""
        if not name:
            return []
        found = self.by_name.get(name, [])
        if near is None or len(found) < 2:
            return list(found)
        return sorted(found, key=lambda b: (b.cand.get("path") != near.get("path"), b.module != near.get("module")))

    def vals(self, c: Candidate, role: str) -> list[str]:
        """A context-shaping role's values with placeholders resolved by the package's config;
        values that do not fold or resolve are left out and remembered in :attr:`unfolded`."""
        memo = self.__dict__.setdefault("_vals", {})
        key = (id(c), role)
        if key in memo:
            return list(memo[key])
        seen = self.__dict__.setdefault("_unfolded_keys", set())
        out = []
        for o in c.get("roles", {}).get(role, []):
            v = self.resolve_text(o) if "value" in o else None
            if v is None:
                expr = o.get("unresolved") or o.get("value") or o.get("ref") or ""
                if (id(c), role, expr) not in seen:
                    seen.add((id(c), role, expr))
                    self.unfolded.append((c, role, expr))
                continue
            out.append(v)
        memo[key] = tuple(out)
        return out

    def packages_of(self, c: Candidate) -> set[str]:
        """The packages a scan declaration names: ``base_packages`` and the packages of ``base_classes``."""
        pkgs = set(self.vals(c, "base_packages"))
        for cls in self.vals(c, "base_classes"):
            pkgs.add(self.class_packages.get(cls, (None, cls.rsplit(".", 1)[0]))[1])
        return pkgs

    # ------------------------------------------------------------ scope
    def in_scan(self, binary: str) -> bool:
        """Whether the class's package is a scanned package or below one (checked by walking up
        the package's own ancestors: linear in its depth, whatever the number of scans)."""
        return self.class_packages.get(binary, (None, ""))[1] in self.scan_packages

    def class_loaded(self, binary: str) -> bool:
        """A class the context loads (scanned, imported or auto-configured); nested classes follow
        their outermost class."""
        top = binary.split("$", 1)[0]
        if binary in self.profile_off_types or top in self.profile_off_types:
            return False
        return binary in self.loaded_classes or top in self.loaded_classes or self.in_scan(binary)

    def xml_loaded(self, path: str) -> bool:
        return path in self.loaded_xml

    def cand_loaded(self, c: Candidate) -> bool:
        """Whether the declaration behind a candidate is part of the context (an XML element
        inside ``<beans profile>`` only when the profile is active)."""
        if c["form"] == "imports":  # a META-INF/spring/*.imports list on the package's classpath
            return self.deployed
        if c["form"] == "xml":
            profiles = c.get("attrs", {}).get("profiles", [])
            return self.xml_loaded(c["path"]) and all(
                profiles_match([x.strip() for x in p.replace(";", ",").split(",") if x.strip()], self.profiles)
                for p in profiles)
        t = c.get("type")
        return t is not None and self.class_loaded(t["binary"])

    def resolve_resource(self, location: str) -> list[str]:
        """Files of the package a Spring resource location names (``classpath:``, ``classpath*:``,
        plain, with ``*``/``**`` patterns)."""
        memo = self.__dict__.setdefault("_resource_memo", {})
        if location in memo:
            return list(memo[location])
        got = self._resolve_resource(location)
        memo[location] = tuple(got)
        return got

    def located(self, c: Candidate, location: str) -> list[str]:
        """Files of the package a context-loading declaration's location names: an XML
        ``<import resource>`` relative to the importing file (:func:`relative_location`), an
        annotation's or a call's from the classpath root. A location naming no file (a missing
        ``classpath:`` file, a relative path that leads nowhere) is kept in :attr:`missing`."""
        if c.get("form") == "xml":
            rel = self.classpath_path(c["path"])
            location = relative_location(rel, location) if rel is not None else location
        got = self.resolve_resource(location)
        seen = self.__dict__.setdefault("_missing_keys", set())
        if not got and (id(c), location) not in seen:
            seen.add((id(c), location))
            self.missing.append((c, location))
        return got

    def classpath_path(self, path: str) -> str | None:
        """The classpath-relative path (or web-application-relative, under ``src/main/webapp``) of
        one of the package's resource files; None for a file outside its resource roots."""
        rel_of = self.__dict__.get("_rel_of")
        if rel_of is None:
            rel_of = self.__dict__["_rel_of"] = {p: rel for rel, ps in sorted(self.resources.items()) for p in ps}
        return rel_of.get(path)

    def _resolve_resource(self, location: str) -> list[str]:
        loc = location.strip()
        for prefix in ("classpath*:", "classpath:"):
            if loc.startswith(prefix):
                loc = loc[len(prefix):]
                break
        loc = loc.lstrip("/")
        if loc.startswith("file:"):
            return []
        out: list[str] = []
        pattern = ant_pattern(loc) if "*" in loc or "?" in loc else None
        for rel, paths in self.resources.items():
            if rel == loc or (pattern is not None and pattern.match(rel)):
                out.extend(paths)
        return sorted(set(out))

    def _fixpoint(self) -> None:
        for imp in self._imports:  # auto-configurations: each is registered as a bean of its own
            self.loaded_classes.add(imp["class"])
            self.imported_by.setdefault(imp["class"], imp)
        for loc in self._xml_roots:
            self.loaded_xml.update(self.resolve_resource(loc))
        for c in self.by_emit.get("XML_CONTEXT", []):
            for loc in self.vals(c, "resource"):
                self.loaded_xml.update(self.located(c, loc))
        for c in self.by_emit.get("DEPLOYABLE_APPLICATION", []):
            if c["type"]["binary"] in self.app_classes:
                self.scan_packages.update(self.packages_of(c))
        done: set[int] = set()  # declarations already applied (each is applied once, when loaded)
        changed = True
        while changed:
            changed = False
            for c in self.by_emit.get("COMPONENT_SCAN", []):
                if id(c) in done or not self.cand_loaded(c):
                    continue
                done.add(id(c))
                pkgs = self.packages_of(c)
                if not pkgs and c["form"] == "annotation":
                    pkgs.add(c["type_detail"]["package"] if "type_detail" in c else
                             self.class_packages.get(c["type"]["binary"], (None, ""))[1])
                if self.scan_packages.update(pkgs):
                    changed = True
            for c in self.by_emit.get("IMPORT", []):
                # a context the package's own code creates (new AnnotationConfigApplicationContext(
                # Cfg.class)) is a root, like an XML context: it loads its classes whoever calls it
                if id(c) not in done and ("call" in c or self.cand_loaded(c)):
                    done.add(id(c))
                    for cls in self.vals(c, "classes"):
                        self.imported_by.setdefault(cls, c)
                        if cls not in self.loaded_classes:
                            self.loaded_classes.add(cls)
                            changed = True
            for c in self.by_emit.get("IMPORT_RESOURCE", []):
                if id(c) not in done and self.cand_loaded(c):
                    done.add(id(c))
                    for loc in self.vals(c, "resource"):
                        for p in self.located(c, loc):
                            if p not in self.loaded_xml:
                                self.loaded_xml.add(p)
                                changed = True
        for c in self.by_emit.get("FEIGN_SCAN", []):
            if not self.cand_loaded(c):
                continue
            # FeignClientsRegistrar: listed clients replace the package scan; without packages
            # (value, basePackages, basePackageClasses) the annotated class's package is scanned
            # (an attribute that is written but does not fold covers nothing: CONSTANT_UNRESOLVED);
            # an imports-file list (form imports) registers the classes it lists
            client = (c.get("emit_attrs") or {}).get("client", "feign")
            listed = self.client_lists.setdefault(client, set())
            if c["form"] == "imports":
                listed.update(self.vals(c, "classes"))
                continue
            roles = c.get("roles", {})
            listed.update(self.vals(c, "classes"))
            scan = self.client_scans.setdefault(client, PackagePatterns())
            if roles.get("classes"):
                continue
            pkgs = self.packages_of(c)
            if not pkgs and not roles.get("base_packages") and not roles.get("base_classes"):
                pkgs = {self.class_packages.get(c["type"]["binary"], (None, ""))[1]}
            scan.update(pkgs)

    def feign_loaded(self, binary: str, client: str = "feign") -> bool:
        """A client interface its scan registers (``@EnableFeignClients`` for Feign): listed in
        ``clients``, else in (or below) one of its base packages."""
        return binary in self.client_lists.get(client, ()) or \
            self.class_packages.get(binary, (None, ""))[1] in self.client_scans.get(client, ())

    # ------------------------------------------------------------ beans
    def _beans(self) -> list[Bean]:
        """Every bean of the context: component-scanned classes, the application class, imported
        classes, proxies of scanned interfaces, XML ``<bean>``s, RPC consumers, Feign clients, then
        ``@Bean`` methods, in that order; one bean per (module, class) of the first four."""
        seen: set[tuple[str, str]] = set()
        beans = self._component_beans(seen)
        beans += self._application_beans(seen)
        beans += self._imported_beans(seen)
        beans += self._proxy_scan_beans(seen)
        beans += self._xml_beans()
        beans += self._rpc_consumer_beans()
        beans += self._feign_client_beans()
        beans += self._bean_method_beans(beans)
        return beans

    def _component_beans(self, seen: set[tuple[str, str]]) -> list[Bean]:
        """A bean per stereotype class (``@Component`` …; an interface or abstract class only when its
        rule registers a proxy), named by its annotation or Spring's default bean name."""
        beans: list[Bean] = []
        primaries = {c["type"]["binary"] for c in self.by_emit.get("PRIMARY", []) if c["target"] == "TYPE"}
        for c in self.by_emit.get("BEAN", []):
            t = c["type"]
            proxy = bool(c.get("emit_attrs", {}).get("proxy"))
            if c["target"] != "TYPE" or t["kind"] == "ANNOTATION" or (t["kind"] == "INTERFACE" and not proxy) or \
                    (t.get("abstract") and not proxy) or (c["module"], t["binary"]) in seen:
                continue
            seen.add((c["module"], t["binary"]))
            names = self.vals(c, "name")
            name = names[0] if names else default_bean_name(t["simple"])
            beans.append(Bean(name, t["binary"], c["module"], "COMPONENT", c, self.class_loaded(t["binary"]),
                              t["binary"] in primaries, supertypes=_declared_types(c)))
        return beans

    def _application_beans(self, seen: set[tuple[str, str]]) -> list[Bean]:
        """The application class: a ``@Configuration`` of its own context."""
        beans: list[Bean] = []
        for c in self.by_emit.get("DEPLOYABLE_APPLICATION", []):
            t = c.get("type")
            if t is None or t["binary"] not in self.app_classes or (c["module"], t["binary"]) in seen:
                continue
            seen.add((c["module"], t["binary"]))
            beans.append(Bean(default_bean_name(t["simple"]), t["binary"], c["module"], "COMPONENT", c, True,
                              supertypes=_declared_types(c)))
        return beans

    def _imported_beans(self, seen: set[tuple[str, str]]) -> list[Bean]:
        """A class put into the context by ``@Import`` (or the like): a bean named by its class name
        (Spring 4.2+)."""
        beans: list[Bean] = []
        for binary, c in sorted(self.imported_by.items()):
            module = self.home(binary, c.get("module"))
            # an importer whose rule says ``proxy`` (@EnableBinding) registers a proxy of each interface it names
            kinds = ("ANNOTATION",) if (c.get("emit_attrs") or {}).get("proxy") else ("INTERFACE", "ANNOTATION")
            if module is None or (module, binary) in seen or self.type_kinds.get(binary) in kinds:
                continue
            seen.add((module, binary))
            beans.append(Bean(binary, binary, module, "IMPORTED", c, True,
                              supertypes=self.supertypes(module, binary) | {binary}))
        return beans

    def _proxy_scan_beans(self, seen: set[tuple[str, str]]) -> list[Bean]:
        """A proxy bean per interface in the packages of a loaded interface scan (``@MapperScan`` …)."""
        beans: list[Bean] = []
        for c in self.by_emit.get("PROXY_SCAN", []):
            if not self.cand_loaded(c):
                continue
            pkgs = PackagePatterns(self.packages_of(c))
            for binary, mods in sorted(self.class_modules.items()):
                if self.type_kinds.get(binary) != "INTERFACE" or "$" in binary or self.class_packages[binary][1] not in pkgs:
                    continue
                for module in mods:
                    if (module, binary) in seen:
                        continue
                    seen.add((module, binary))
                    simple = binary.rsplit(".", 1)[-1]
                    beans.append(Bean(default_bean_name(simple), binary, module, "PROXY", c, True,
                                      supertypes=self.supertypes(module, binary) | {binary}))
        return beans

    def _xml_beans(self) -> list[Bean]:
        """An XML ``<bean>`` (or a namespace element a rule gives a bean type): named by its ``id``,
        else its first ``name``, else Spring's generated ``class#n``."""
        beans: list[Bean] = []
        anonymous: dict[str, int] = {}
        for c in self.by_emit.get("XML_BEAN", []):
            x = c["xml"]
            # a namespace element that defines a bean of a known type (<jmq:producer id>) names it by rule
            cls = x["attributes"].get("class") or (c.get("emit_attrs") or {}).get("bean_type")
            if not cls:
                continue
            ids = [x["attributes"][k] for k in ("id",) if x["attributes"].get(k)]
            aliases = [n.strip() for n in x["attributes"].get("name", "").replace(";", ",").replace(" ", ",").split(",")
                       if n.strip()]
            if ids or aliases:
                name = ids[0] if ids else aliases[0]
            else:  # Spring's generated name of an anonymous bean: class#n
                n = anonymous.get(cls, 0)
                anonymous[cls] = n + 1
                name = f"{cls}#{n}"
            module = self.home(cls, c["module"])
            beans.append(Bean(name, cls, c["module"], "XML", c, self.cand_loaded(c),
                              x["attributes"].get("primary") == "true", aliases=[a for a in aliases if a != name],
                              properties=x.get("properties", {}), supertypes=self.supertypes(module, cls) | {cls}))
        return beans

    def _rpc_consumer_beans(self) -> list[Bean]:
        """An RPC consumer declared in XML (``<dubbo:reference id interface>``): a bean of its interface."""
        beans: list[Bean] = []
        for c in self.by_emit.get("RPC_CONSUMER", []):
            if c["form"] != "xml":
                continue
            iface = (self.vals(c, "interface") or [None])[0]
            bid = c["xml"]["attributes"].get("id")
            if not iface or not bid:
                continue
            module = self.home(iface, c["module"])
            beans.append(Bean(bid, iface, c["module"], "RPC_CONSUMER", c, self.cand_loaded(c),
                              supertypes=self.supertypes(module, iface) | {iface}))
        return beans

    def _feign_client_beans(self) -> list[Bean]:
        """A Feign client's proxy bean (and a Retrofit-like client a scanner registers)."""
        beans: list[Bean] = []
        for c in self.by_emit.get("FEIGN_CLIENT", []):
            t = c["type"]
            supers = _declared_types(c)
            ea = c.get("emit_attrs") or {}
            if ea.get("registered_by") == "scan":
                # a client interface a scanner registers where the context scans (Retrofit's starter
                # scans the auto-configuration packages unless a scan of its kind, @RetrofitScan,
                # names others): named as a component, not primary
                client = ea.get("client", "feign")
                declared = bool(self.client_lists.get(client)) or bool(
                    (sc := self.client_scans.get(client)) and (sc.plain or sc.patterns))
                beans.append(Bean(default_bean_name(t["simple"]), t["binary"], c["module"], "FEIGN_CLIENT", c,
                                  self.feign_loaded(t["binary"], client) if declared else self.class_loaded(t["binary"]),
                                  supertypes=supers))
                continue
            names = self.vals(c, "context_id") or self.vals(c, "service_name")
            # FeignClientsRegistrar registers the client's proxy as the primary bean of its interface
            # (so a fallback bean implementing it does not compete), unless primary = false
            primary = not any(v.strip().lower() == "false" for v in self.vals(c, "primary"))
            beans.append(Bean(f"{t['binary']}", t["binary"], c["module"], "FEIGN_CLIENT", c,
                              self.feign_loaded(t["binary"]), primary, supertypes=supers, aliases=names))
        return beans

    def _bean_method_beans(self, beans: list[Bean]) -> list[Bean]:
        """A bean per ``@Bean`` method, of its return type: loaded where a loaded bean of ``beans`` is
        of the declaring class or a subclass of it (inherited ``@Bean`` methods of a base
        configuration class; a plain class's are never called) and its ``@Profile`` holds."""
        holders = [b for b in beans if b.loaded and b.kind in ("COMPONENT", "IMPORTED", "XML")]
        primary_methods = {c["member"]["stable"] for c in self.by_emit.get("PRIMARY", []) if c["target"] == "METHOD"}
        out: list[Bean] = []
        for c in self.by_emit.get("BEAN_METHOD", []):
            m = c.get("member")
            if m is None:  # a rule whose annotation sits on a type: no method, no bean
                continue
            names = self.vals(c, "name")
            declaring = c["type"]["binary"]
            loaded = self.deployed and m["stable"] not in self.profile_off_methods and (
                declaring in self.loaded_classes or any(declaring == b.type or declaring in b.supertypes
                                                        for b in holders))
            ret = m["return_type"]
            props = {k: {"value": o[0]["value"] if o and "value" in o[0] else None, "outcome": o[0] if o else None}
                     for k, o in c.get("bean_properties", {}).items()}
            out.append(Bean(names[0] if names else m["name"], ret, c["module"], "BEAN_METHOD", c, loaded,
                            m["stable"] in primary_methods, aliases=names[1:], properties=props,
                            supertypes=self.supertypes(self.home(ret, c["module"]), ret) | {ret}))
        return out

    # ------------------------------------------------------------ injection
    def candidates_for(self, type_name: str) -> list[Bean]:
        return [b for b in self.beans if b.loaded and type_name in b.supertypes]

    def resolve(self, ip: InjectionPoint) -> Resolution:
        """The beans injected at ``ip`` (docs/scanning.md §13)."""
        t = ip.type
        polymorphic = False
        if t in COLLECTION_TYPES and ip.type_args:
            t = ip.type_args[-1]
            polymorphic = True
        elif t.endswith("[]"):
            t = t[:-2]
            polymorphic = True
        elif t in WRAPPER_TYPES and ip.type_args:
            t = ip.type_args[0]
        if ip.by_name:
            named = [b for b in self.by_name.get(ip.by_name, []) if b.loaded]
            if len(named) == 1:
                return Resolution("RESOLVED", named, basis="RESOURCE_NAME")
            if len(named) > 1:
                return Resolution("AMBIGUOUS", named, reason=f"several beans are named {ip.by_name}")
        cands = self.candidates_for(t)
        basis = "TYPE"
        if not polymorphic and t == ip.type and len(cands) > 1:
            generic = self._generic_matches(cands, t, ip.type_args)
            if len(generic) < len(cands):
                cands, basis = generic, "GENERIC_TYPE"
        elif ip.seen_from is not None and len(cands) == 1 and t != (ip.field or {}).get("type", t):
            basis = "GENERIC_TYPE"  # the type variable the bean class binds names the one bean
        if polymorphic:
            return Resolution("AMBIGUOUS" if len(cands) > 1 else "RESOLVED" if cands else "UNRESOLVED", cands, True,
                              "a collection or map receives every bean of the type", basis="COLLECTION")
        if ip.qualifier:
            q = [b for b in cands if ip.qualifier in [b.name] + b.aliases]
            if not q:
                return Resolution("UNRESOLVED", [], reason=f"no loaded bean of type {t} is named {ip.qualifier}")
            cands, basis = q, "QUALIFIER"
        # DefaultListableBeanFactory.determineAutowireCandidate: the one primary bean, else the
        # bean whose name (or alias) is the field's or parameter's name
        if len(cands) > 1:
            prim = [b for b in cands if b.primary]
            if len(prim) == 1:
                cands, basis = prim, "PRIMARY"
            elif len(prim) > 1:  # Spring refuses to choose ("more than one 'primary' bean found")
                return Resolution("AMBIGUOUS", prim, reason=f"{len(prim)} of the {len(cands)} loaded beans of type "
                                  f"{t} are primary")
        if len(cands) > 1:
            named = [b for b in cands if ip.name in [b.name] + b.aliases]
            if len(named) == 1:
                cands, basis = named, "BEAN_NAME"
        if len(cands) == 1:
            return Resolution("RESOLVED", cands, basis=basis)
        if not cands:
            return Resolution("UNRESOLVED", [], reason=f"no loaded bean of type {t}" + (
                f"<{', '.join(a or '?' for a in ip.type_args)}>" if basis == "GENERIC_TYPE" else ""), type=t)
        return Resolution("AMBIGUOUS", cands, reason=f"{len(cands)} loaded beans of type {t}")

    def _generic_matches(self, cands: list[Bean], t: str, wanted: list[str]) -> list[Bean]:
        """GenericTypeAwareAutowireCandidateResolver: the beans whose type arguments for ``t`` agree
        with ``wanted`` (an argument not known on either side agrees). A bean whose type leaves the
        arguments unbound (the raw generic type itself) is a candidate only when no other bean is:
        Spring's fallback match for unresolvable generics."""
        want = [a if a and "." in a and not a.startswith("?") else None for a in wanted]
        if not any(want):
            return cands
        out, fallback = [], []
        for b in cands:
            got = self.type_args(self.home(b.type, b.module), b.type, t)
            if got is None:
                fallback.append(b)
            elif all(w is None or g is None or w == g for w, g in zip(want, got)):
                out.append(b)
        return out or fallback
