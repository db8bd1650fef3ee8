"""Type-name resolution and erasure (docs/scanning.md §8, docs/ir.md §2.1; JLS §6.5.5).

A simple type name is looked up, in order: type variables in scope (erased to
their first bound, else ``java.lang.Object``); the enclosing types and their
member types; single-type imports; types of the same package; on-demand
(wildcard) imports together with ``java.lang``. Qualified names resolve their
first segment the same way and append member types with ``$``; when the first
segment is not a type the name is package-qualified.

Visible types of a module are its own plus those of the in-repo modules it
depends on (compile, provided, runtime), so a shared module resolves the same
way in every package that holds it. Library types come from explicit imports, the
JDK catalog (``data/jdk-types.txt``) and the ``catalog`` rules (well-known libraries). A name that cannot be
resolved becomes ``?Simple``; several candidates from wildcard imports also
give ``?Simple`` (never a guess). A name no visible declaration supplies, in a file with exactly one
wildcard import of a library package, is that package's type (it compiles, and nothing else can
supply it; JLS §7.5.2).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from diting.ir.canonical import sha256_hex
from diting.java.facts import FileFacts, TypeDecl, TypeRef

_CATALOG_PATH = Path(__file__).parent / "data" / "jdk-types.txt"


@dataclass(frozen=True)
class TypeInfo:
    """An in-repo type: binary name, canonical (dotted) name, kind, and where it is declared."""

    binary: str
    canonical: str
    kind: str
    module: str
    path: str
    package: str
    simple: str
    top_level: bool


class TypeCatalog:
    """Known library types by package (simple name → kind): the JDK's public top-level types
    of exported ``java.*``/``javax.*`` packages, plus the ``catalog`` rules (well-known
    libraries; users add in-house ones). Used to resolve names brought in by wildcard
    imports and to know whether a library type is an interface."""

    def __init__(self, text: str, libraries: dict[str, dict[str, str]] | None = None) -> None:
        self.packages: dict[str, dict[str, str]] = {}
        for line in text.splitlines():
            if not line or line.startswith("#"):
                continue
            pkg, simple, kind = line.split("\t")
            self.packages.setdefault(pkg, {})[simple] = kind
        self.sha256 = sha256_hex(text)
        for pkg, types in sorted((libraries or {}).items()):
            self.packages.setdefault(pkg, {}).update(types)

    def kind_of(self, fqn: str) -> str | None:
        pkg, _, simple = fqn.rpartition(".")
        return self.packages.get(pkg, {}).get(simple)

    def has_package(self, pkg: str) -> bool:
        return pkg in self.packages

    def with_libraries(self, libraries: dict[str, dict[str, str]]) -> "TypeCatalog":
        """This catalog plus library types (from ``catalog`` rules)."""
        return TypeCatalog(_CATALOG_PATH.read_text(encoding="utf-8"), libraries)


@lru_cache(maxsize=1)
def jdk_catalog() -> TypeCatalog:
    """The shipped JDK catalog alone (cached)."""
    return TypeCatalog(_CATALOG_PATH.read_text(encoding="utf-8"))


def module_types(module: str, files: list[FileFacts]) -> list[TypeInfo]:
    """Every named (non-local, non-anonymous) type declared in ``files`` of ``module``."""
    out: list[TypeInfo] = []
    for f in files:
        for td in f.types:
            if td.nesting in ("LOCAL", "ANONYMOUS"):
                continue
            # a member type of a local or anonymous type is not addressable by name
            chain = td
            ok = True
            while chain.outer is not None:
                chain = f.types[chain.outer]
                if chain.nesting in ("LOCAL", "ANONYMOUS"):
                    ok = False
                    break
            if not ok:
                continue
            binary = f"{f.package}.{td.binary_suffix}" if f.package else td.binary_suffix
            canonical = binary.replace("$", ".")
            out.append(TypeInfo(binary, canonical, td.kind, module, f.path, f.package, td.simple_name,
                                td.outer is None))
    return out


class VisibleTypes:
    """Types visible from one module: its own first, then its dependencies'."""

    def __init__(self, own: list[TypeInfo], deps: list[TypeInfo], catalog: TypeCatalog | None = None) -> None:
        self.catalog = catalog or jdk_catalog()
        self.by_canonical: dict[str, list[TypeInfo]] = {}
        self.by_package: dict[str, dict[str, list[TypeInfo]]] = {}
        self.packages: set[str] = set()
        for info in own + deps:
            self.by_canonical.setdefault(info.canonical, []).append(info)
            self.packages.add(info.package)
            if info.top_level:
                self.by_package.setdefault(info.package, {}).setdefault(info.simple, []).append(info)
        self.own_module = own[0].module if own else None

    def lookup(self, canonical: str) -> list[TypeInfo]:
        return self.by_canonical.get(canonical, [])

    def preferred(self, infos: list[TypeInfo]) -> list[TypeInfo]:
        """Candidates narrowed to the module's own declaration when it has one."""
        own = [i for i in infos if i.module == self.own_module]
        return own or infos


@dataclass(frozen=True)
class Resolved:
    """A resolved type: ``name`` is the erased binary name with ``[]`` per dimension
    (``?Simple`` when unresolvable); ``infos`` are the in-repo declarations of that
    name (several when modules disagree); ``external`` when the name is known but
    outside the repository."""

    name: str
    infos: tuple[TypeInfo, ...] = ()
    external: bool = False
    unresolved: bool = False

    @property
    def base(self) -> str:
        return self.name.replace("[]", "")


def _convention_binary(canonical: str) -> str:
    """Binary name of a library type written canonically: after the first capitalised
    segment, the remaining segments are member types (Java naming convention)."""
    parts = canonical.split(".")
    for i, p in enumerate(parts):
        if p[:1].isupper():
            return ".".join(parts[: i + 1]) + "".join("$" + q for q in parts[i + 1:])
    return canonical


class TypeRegistry:
    """Every in-repo type declaration with the scope that resolves its names, so the
    in-repo supertypes of a type can be followed across files (member types and
    constants are inherited)."""

    def __init__(self) -> None:
        self._decl: dict[tuple[str, str], tuple["FileScope", int]] = {}
        self._supers: dict[tuple[str, str], list[tuple[str, str]]] = {}
        self._computing: set[tuple[str, str]] = set()
        self._binaries: set[str] | None = None
        self._ancestors: dict[tuple[str, str], list[tuple[str, str]]] = {}

    def declared_anywhere(self, binary: str) -> bool:
        """Whether some module of the repository declares a type of this binary name."""
        if self._binaries is None:
            self._binaries = {b for _, b in self._decl}
        return binary in self._binaries

    def add(self, module: str, scope: "FileScope") -> None:
        scope.registry = self
        self._binaries = None
        for idx, td in enumerate(scope.facts.types):
            self._decl.setdefault((module, scope.binary_of(td)), (scope, idx))

    def supertypes(self, module: str, binary: str) -> list[tuple[str, str]]:
        """In-repo direct supertypes ``(module, binary)`` of a type (cycle-safe, memoised)."""
        key = (module, binary)
        if key in self._supers:
            return self._supers[key]
        if key in self._computing or key not in self._decl:
            return []
        self._computing.add(key)
        try:
            scope, idx = self._decl[key]
            td = scope.facts.types[idx]
            chain = scope._chain_of(idx)
            out: list[tuple[str, str]] = []
            refs = ([td.superclass] if td.superclass else []) + list(td.interfaces)
            if td.anonymous_base is not None:
                refs.append(td.anonymous_base)
            for ref in refs:
                r = scope.resolve_base(ref, chain[1:], scope.type_vars_for(chain))
                if r is not None:
                    out.extend((i.module, i.binary) for i in r.infos)
        finally:
            self._computing.discard(key)
        self._supers[key] = out
        return out

    def ancestors(self, module: str, binary: str) -> list[tuple[str, str]]:
        """All in-repo supertypes, breadth first, each once (memoised once complete)."""
        key = (module, binary)
        cached = self._ancestors.get(key)
        if cached is not None:
            return cached
        if self._computing:
            return self._ancestors_of(module, binary)  # mid-resolution: do not memoise a partial answer
        result = self._ancestors_of(module, binary)
        self._ancestors[key] = result
        return result

    def _ancestors_of(self, module: str, binary: str) -> list[tuple[str, str]]:
        seen: set[tuple[str, str]] = {(module, binary)}
        order: list[tuple[str, str]] = []
        queue = [(module, binary)]
        while queue:
            cur = queue.pop(0)
            for sup in self.supertypes(*cur):
                if sup not in seen:
                    seen.add(sup)
                    order.append(sup)
                    queue.append(sup)
        return order


class FileScope:
    """Name resolution inside one file of one module."""

    registry: TypeRegistry | None = None

    def __init__(self, facts: FileFacts, visible: VisibleTypes) -> None:
        self.facts = facts
        self.visible = visible
        self.jdk = visible.catalog
        self.single: dict[str, str] = {}
        self.wildcards: list[str] = []
        self.static_single: dict[str, str] = {}
        self.static_wildcards: list[str] = []
        for imp in facts.imports:
            if imp.static:
                if imp.wildcard:
                    self.static_wildcards.append(imp.name)
                else:
                    self.static_single[imp.name.rsplit(".", 1)[-1]] = imp.name
            elif imp.wildcard:
                self.wildcards.append(imp.name)
            else:
                self.single[imp.name.rsplit(".", 1)[-1]] = imp.name
        self.package = facts.package
        self._own_binaries = [self.binary_of(td) for td in facts.types]
        self.unresolved: set[str] = set()
        #: (enclosing type index, simple name) → declared member or local type index
        self._members: dict[tuple[int, str], tuple[int, str]] = {}
        #: local types of one simple name in one enclosing type: a name is only placed when it is one
        self._locals_named: dict[tuple[int, str], int] = {}
        for j, td in enumerate(facts.types):
            if td.outer is not None and td.nesting in ("MEMBER", "LOCAL"):
                self._members.setdefault((td.outer, td.simple_name), (j, td.nesting))
                if td.nesting == "LOCAL":
                    key = (td.outer, td.simple_name)
                    self._locals_named[key] = self._locals_named.get(key, 0) + 1
        self._simple_cache: dict[tuple[str, tuple[int, ...]], Resolved | None] = {}
        self._resolve_cache: dict[tuple, Resolved | None] = {}

    def binary_of(self, td: TypeDecl) -> str:
        return f"{self.package}.{td.binary_suffix}" if self.package else td.binary_suffix

    # ------------------------------------------------------------ lookups
    def _canonical_to_resolved(self, canonical: str) -> Resolved | None:
        infos = self.visible.lookup(canonical)
        if infos:
            infos = self.visible.preferred(infos)
            return Resolved(infos[0].binary, tuple(infos))
        return None

    def _member_of(self, binary: str, simple: str) -> Resolved | None:
        canonical = binary.replace("$", ".") + "." + simple
        return self._canonical_to_resolved(canonical)

    def _simple(self, simple: str, chain: list[int]) -> Resolved | None:
        key = (simple, tuple(chain))
        if key in self._simple_cache:
            return self._simple_cache[key]
        r = self._simple_uncached(simple, chain)
        self._simple_cache[key] = r
        return r

    def _simple_uncached(self, simple: str, chain: list[int]) -> Resolved | None:
        types = self.facts.types
        # enclosing types, innermost first: the type itself, a member or local type, an inherited member
        for idx in chain:
            td = types[idx]
            if td.simple_name == simple and td.nesting != "ANONYMOUS":
                return Resolved(self._own_binaries[idx], self._infos_for(self._own_binaries[idx]))
            member = self._members.get((idx, simple))
            if member is not None:
                j, nesting = member
                # a member type, or the only local type of that name in the type (several local types
                # of one name are told apart by position, which names alone do not give)
                if nesting == "MEMBER":
                    return Resolved(self._own_binaries[j], self._infos_for(self._own_binaries[j]))
                if self._locals_named.get((idx, simple)) == 1 and self.visible.own_module:
                    ltd = types[j]
                    info = TypeInfo(self._own_binaries[j], self._own_binaries[j], ltd.kind, self.visible.own_module,
                                    self.facts.path, self.package, ltd.simple_name, False)
                    return Resolved(self._own_binaries[j], (info,))
                return Resolved(self._own_binaries[j], ())
            r = self._inherited_member(idx, simple)
            if r is not None:
                return r
        if simple in self.single:
            canonical = self.single[simple]
            return self._canonical_to_resolved(canonical) or self._external(canonical)
        # same package
        same = self.visible.by_package.get(self.package, {}).get(simple)
        if same:
            same = self.visible.preferred(same)
            return Resolved(same[0].binary, tuple(same))
        candidates: dict[str, Resolved] = {}
        for pkg in self.wildcards:
            r = self._canonical_to_resolved(f"{pkg}.{simple}")
            if r is not None:
                candidates[r.name] = r
                continue
            outer = self._canonical_to_resolved(pkg)
            if outer is not None:
                m = self._member_of(outer.name, simple)
                if m is not None:
                    candidates[m.name] = m
                continue
            if self.jdk.kind_of(f"{pkg}.{simple}"):
                candidates[f"{pkg}.{simple}"] = Resolved(f"{pkg}.{simple}", external=True)
        if self.jdk.kind_of(f"java.lang.{simple}"):
            candidates.setdefault(f"java.lang.{simple}", Resolved(f"java.lang.{simple}", external=True))
        if len(candidates) == 1:
            return next(iter(candidates.values()))
        if not candidates and simple[:1].isupper():
            # (a capitalised name: the first segment of ``org.acme.Type`` is a package, not a type)
            # the name compiles, so it comes from a package imported on demand; when exactly one such
            # package is open (a library package: not the repository's, not a JDK package the catalog
            # lists completely), it is that package's type
            open_ = [pkg for pkg in self.wildcards if pkg not in self.visible.by_package
                     and self._canonical_to_resolved(pkg) is None
                     and not (pkg.startswith(("java.", "javax.")) and self.jdk.has_package(pkg))]
            if len(open_) == 1 and not self.static_wildcards and not self._may_inherit_library_members(chain):
                return Resolved(f"{open_[0]}.{simple}", external=True)
        return None

    def _may_inherit_library_members(self, chain: list[int]) -> bool:
        """Whether a type of ``chain`` has a supertype outside the repository (whose member types
        the scan does not know and which could supply a simple name)."""
        if getattr(self, "_checking_supers", False):
            return True
        self._checking_supers = True
        try:
            for pos, idx in enumerate(chain):
                td = self.facts.types[idx]
                for ref in ([td.superclass] if td.superclass else []) + list(td.interfaces) + (
                        [td.anonymous_base] if td.anonymous_base else []):
                    r = self.resolve_base(ref, chain[pos + 1:], {})
                    if r is None or not r.infos:
                        return True
            return False
        finally:
            self._checking_supers = False

    def _inherited_member(self, idx: int, simple: str) -> Resolved | None:
        """A member type inherited from any in-repo supertype."""
        if self.registry is None:
            return None
        module = self.visible.own_module or ""
        for _, sup in self.registry.ancestors(module, self._own_binaries[idx]):
            m = self._member_of(sup, simple)
            if m is not None:
                return m
        return None

    def _chain_of(self, idx: int) -> list[int]:
        out = []
        cur: int | None = idx
        while cur is not None:
            out.append(cur)
            cur = self.facts.types[cur].outer
        return out

    def _infos_for(self, binary: str) -> tuple[TypeInfo, ...]:
        infos = self.visible.lookup(binary.replace("$", "."))
        return tuple(self.visible.preferred(infos)) if infos else ()

    def _external(self, canonical: str) -> Resolved:
        return Resolved(_convention_binary(canonical), external=True)

    # ------------------------------------------------------------ public
    def resolve_base(self, ref: TypeRef, chain: list[int], type_vars: dict[str, TypeRef | None],
                     _depth: int = 0) -> Resolved | None:
        """Resolve the name of ``ref`` (no array dims); None when unresolvable."""
        if ref.primitive:
            return Resolved(ref.parts[0])
        parts = list(ref.parts)
        if not parts or parts[0].startswith("?"):
            return None
        head = parts[0]
        if len(parts) == 1 and head in type_vars:
            bound = type_vars[head]
            if bound is None or _depth > 8:
                return Resolved("java.lang.Object", external=True)
            inner = {k: v for k, v in type_vars.items() if k != head}
            return self.resolve_base(bound, chain, inner, _depth + 1) or Resolved("java.lang.Object", external=True)
        first = self._simple(head, chain)
        if first is not None:
            binary = first.name
            infos = first.infos
            for p in parts[1:]:
                m = self._member_of(binary, p) if infos else None
                if m is not None:
                    binary, infos = m.name, m.infos
                else:
                    binary, infos = f"{binary}${p}", ()
            return Resolved(binary, infos, external=first.external and not infos)
        if len(parts) == 1:
            return None
        # package-qualified: the longest prefix that is a known type
        for i in range(len(parts), 0, -1):
            canonical = ".".join(parts[:i])
            r = self._canonical_to_resolved(canonical)
            if r is not None:
                binary = r.name + "".join("$" + p for p in parts[i:])
                return Resolved(binary, r.infos if i == len(parts) else ())
        if not head[:1].isupper():
            return self._external(".".join(parts))
        return None

    def resolve(self, ref: TypeRef | None, chain: list[int], type_vars: dict[str, TypeRef | None]) -> Resolved:
        """Erased binary name of ``ref`` with ``[]`` per dimension; records unresolved names."""
        if ref is None:
            return Resolved("?", unresolved=True)
        if ref.parts and ref.parts[0] in type_vars:
            r = self.resolve_base(ref, chain, type_vars)
        else:  # no type variable involved: the answer depends on the name and the scope only
            key = (ref.parts, ref.primitive, tuple(chain))
            if key in self._resolve_cache:
                r = self._resolve_cache[key]
            else:
                r = self._resolve_cache[key] = self.resolve_base(ref, chain, type_vars)
        if r is None:
            simple = ref.parts[-1] if ref.parts else "?"
            simple = simple.lstrip("?")
            self.unresolved.add(".".join(ref.parts).lstrip("?"))
            return Resolved("?" + simple + "[]" * ref.dims, unresolved=True)
        if ref.dims:
            return Resolved(r.name + "[]" * ref.dims, r.infos, r.external)
        return r

    def type_vars_for(self, chain: list[int], method_params: list | None = None) -> dict[str, TypeRef | None]:
        """Type variables in scope: method's, then each enclosing type's (inner wins)."""
        tv: dict[str, TypeRef | None] = {}
        for idx in reversed(chain):
            td = self.facts.types[idx]
            for p in td.method_type_params + td.type_params:
                tv[p.name] = p.bounds[0] if p.bounds else None
        for p in method_params or []:
            tv[p.name] = p.bounds[0] if p.bounds else None
        return tv
