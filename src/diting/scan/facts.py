"""The fact store of one scan: the repository-scope facts its stages read and make (docs/architecture.md §2).

Every fact is declared once, below, with its type: a stage (``scan/stages.py``) names the facts it
needs and makes, receives a view that lets it read those it needs and nothing else, and returns the
ones it makes, which the store checks against their declarations. The view handed to worker
processes is frozen: a worker can read facts, never add or replace one. Per-file work is keyed by
repository path; per-module work by the module's build file.
"""

from __future__ import annotations

import pickle
import sys
import typing
from typing import TYPE_CHECKING, Any

from diting.source.text import decode_bytes, split_lines

if TYPE_CHECKING:
    from diting.config.snapshot import ConfigSnapshot, SnapshotValue
    from diting.findings import Finding
    from diting.inventory.inventory_file import InventoryFile
    from diting.inventory.services import ModuleLinks, PackagePlan
    from diting.ir.builder import Placeholders
    from diting.java.constants import ConstantFolder
    from diting.java.names import FileScope
    from diting.java.facts import FileFacts
    from diting.probes.rule_index import RuleIndex
    from diting.resolve.calls import CallResolver
    from diting.resolve.fold import ExpressionFolder
    from diting.resolve.types import TypeOracle
    from diting.rules import RuleSet
    from diting.scan.modules import ModuleResult
    from diting.scan.options import PackageResult, ScanOptions
    from diting.scan.repository import Inventory
    from diting.scan.sources import ConfigFileState
    from diting.source.git import GitRepo
    from diting.source.snapshot import Snapshot


class FactError(RuntimeError):
    """A stage broke its declaration: it read a fact it does not need, or made one it does not declare,
    a fact twice, or a value of the wrong type. A defect of diting, never of the input."""


class FactStore:
    """Declared, typed facts, each set once and read as an attribute (the base of :class:`ScanFacts`
    and of a package's facts, ``scan/package.py``).

    A subclass's annotations are its declarations (name, type). A fact is set with :meth:`put`;
    reading one not made yet, or not among a view's ``needs``, raises :class:`FactError`. A view
    (:meth:`view`) is frozen: nothing can be put into it."""

    def __init__(self) -> None:
        object.__setattr__(self, "_values", {})
        object.__setattr__(self, "_allowed", None)
        object.__setattr__(self, "_frozen", False)
        #: per-process memo of derived values (segments of files already cited); never a fact
        object.__setattr__(self, "memo", {})

    # ------------------------------------------------------------ declarations
    @classmethod
    def declared(cls) -> dict[str, Any]:
        """Fact name → its declared type (resolved annotations), in declaration order."""
        got = _DECLARED.get(cls)
        if got is None:
            got = _DECLARED[cls] = typing.get_type_hints(cls, globalns=vars(sys.modules[cls.__module__]),
                                                         localns=cls.type_namespace())
        return got

    @classmethod
    def type_namespace(cls) -> dict[str, Any]:
        """Names the declarations use that the declaring module imports for type checking only."""
        return {}

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        if name not in self.declared():
            raise AttributeError(f"{type(self).__name__} has no fact {name!r}")
        allowed = self._allowed
        if allowed is not None and name not in allowed:
            raise FactError(f"fact {name!r} is read but not among the stage's needs ({', '.join(sorted(allowed))})")
        raise FactError(f"fact {name!r} is read before a stage made it")

    def __setattr__(self, name: str, value: Any) -> None:
        raise FactError(f"fact {name!r} set as an attribute; stages return the facts they make")

    def __contains__(self, name: str) -> bool:
        return name in self._values

    # ------------------------------------------------------------ writing
    def put(self, **facts: Any) -> None:
        """Add facts. Raises :class:`FactError` for an undeclared name, a fact already set, a value
        whose type is not the declared one, or a frozen store or view."""
        if self._frozen or self._allowed is not None:
            raise FactError(f"facts {', '.join(sorted(facts))} put into a frozen store or a stage's view")
        declared = self.declared()
        for name, value in facts.items():
            if name not in declared:
                raise FactError(f"{name!r} is not a declared fact")
            if name in self._values:
                raise FactError(f"fact {name!r} is made twice")
            _check_type(name, value, declared[name])
            self._values[name] = value
            object.__setattr__(self, name, value)

    def view(self, needs: typing.Iterable[str]):
        """A frozen view (of this class) that reads only ``needs`` (each must be set already). Raises
        :class:`FactError` for a need not made yet."""
        needs = tuple(needs)
        missing = [n for n in needs if n not in self._values]
        if missing:
            raise FactError(f"facts {', '.join(missing)} are needed before a stage made them")
        out = type(self)()
        object.__setattr__(out, "_allowed", frozenset(needs))
        object.__setattr__(out, "_frozen", True)
        object.__setattr__(out, "memo", self.memo)
        for n in needs:
            object.__setattr__(out, n, self._values[n])
            out._values[n] = self._values[n]
        return out


class ScanFacts(FactStore):
    """The repository-scope facts of one scan of one commit.

    The annotations are the declarations (name, type); the comment above each says what it is. A
    fact is set once (:meth:`put`) and read as an attribute; reading one not made yet, or not among a
    view's ``needs``, raises :class:`FactError`."""

    # ---- given: the command's inputs, read before any stage runs
    #: the repository, opened with git plumbing only
    repo: GitRepo
    #: the full SHA of the commit scanned
    commit: str
    #: the repository id written into every record, and where it came from ("--repo-id", "origin", …)
    repo_id: str
    repo_id_basis: str
    #: the scan's options (``--jobs`` and the output paths never reach a package)
    options: ScanOptions
    #: the middleware rules: the shipped rule files and every ``--rules`` directory
    rules: RuleSet
    #: ``--inventory``, ``--config-snapshot`` and ``--sql-dialect`` as read
    inventory_file: InventoryFile | None
    config_snapshot: ConfigSnapshot | None
    sql_dialects: dict[str, str]

    # ---- tree: the commit's blobs
    snapshot: Snapshot
    #: the commit's committer time (ISO 8601), None when its committer line is malformed
    commit_time: str | None
    #: ``--config-dir`` folders, repository-relative and checked against the tree
    config_dirs: list[str]

    # ---- build: modules of Maven and Gradle
    #: what the build rules say makes a module deployable, per build system
    plugin_rules: dict[str, dict]
    inv: Inventory
    #: each module's dependencies linked to in-repository modules
    links: dict[str, ModuleLinks]
    #: each module's closure: itself first, then the modules it reaches
    closures: dict[str, list[str]]

    # ---- sources: every Java and config file read
    #: repository path → why a file was not read or parsed
    file_problems: dict[str, Finding]
    #: config path → how reading it went
    config_states: dict[str, ConfigFileState]
    #: Java path → the file's facts without bodies (what name resolution needs)
    file_facts: dict[str, FileFacts]
    #: Java path → the file's full facts, pickled when a worker parsed it (:meth:`full_facts` decodes)
    full_file_facts: dict[str, bytes | FileFacts]

    # ---- names: types resolved per module
    #: module → the facts of its Java files
    java_by_module: dict[str, list[FileFacts]]
    #: Java path → the names visible in the file
    scopes: dict[str, FileScope]
    folder: ConstantFolder
    oracle: TypeOracle
    call_resolver: CallResolver
    rule_index: RuleIndex
    expr_folder: ExpressionFolder
    #: FQNs of the annotations that mark an application class; ``scanning_apps`` those that scan its package
    apps: set[str]
    scanning_apps: set[str]
    placeholders: Placeholders

    # ---- modules: each module's records, encoded once
    module_results: dict[str, ModuleResult]

    # ---- services: what gets a package
    plans: list[PackagePlan]
    #: ``(service id, module)`` the inventory file excludes; services it names that no module matched
    excluded_services: list[tuple[str, str]]
    inventory_unmapped: list[str]
    #: mapper statements parsed into the SQL lineage memo before package workers fork
    mapper_statements: int

    # ---- packages
    package_results: list[PackageResult]

    @classmethod
    def type_namespace(cls) -> dict[str, Any]:
        return _type_namespace()

    # ------------------------------------------------------------ derived reads
    def full_facts(self, path: str) -> FileFacts:
        """The full facts of one Java file (decoded where they are needed: in a module's worker)."""
        full = self.full_file_facts[path]
        return pickle.loads(full) if isinstance(full, bytes) else full

    def snapshot_value(self, scheme: str, key: str, service_id: str | None) -> SnapshotValue | None:
        """The ``--config-snapshot`` value of a key for a service, or None (no snapshot, no entry)."""
        return self.config_snapshot.lookup(scheme, key, service_id) if self.config_snapshot else None

    def module_of(self, path: str) -> str | None:
        """The module (build file) a repository file belongs to, or None."""
        by_path = self.memo.get("module_of")
        if by_path is None:
            by_path = self.memo["module_of"] = {}
            for f in self.inv.files:
                by_path.setdefault(f.path, f.module)
        return by_path.get(path)

    def text_lines(self, path: str) -> tuple[list[str], str]:
        """Decoded lines and encoding of a file at the commit, decoded as the scan decoded it."""
        if path in self.inv.modules:
            ev = self.inv.modules[path].evidence()
            if ev.path == path:
                return ev.lines, ev.encoding
        got = self.snapshot.read(path)
        declared = None
        if path.endswith(".java"):
            owner = self.module_of(path)
            mod = self.inv.modules.get(owner) if owner else None
            declared = mod.source_encoding if mod else None
        d = decode_bytes(got.data or b"", declared)
        return split_lines(d.text), d.encoding


#: each store class's declarations, resolved once
_DECLARED: dict[type, dict[str, Any]] = {}


def _type_namespace() -> dict[str, Any]:
    """The names the declarations use, for :func:`typing.get_type_hints`."""
    from diting.config.snapshot import ConfigSnapshot, SnapshotValue
    from diting.findings import Finding
    from diting.inventory.inventory_file import InventoryFile
    from diting.inventory.services import ModuleLinks, PackagePlan
    from diting.ir.builder import Placeholders
    from diting.java.constants import ConstantFolder
    from diting.java.names import FileScope
    from diting.java.facts import FileFacts
    from diting.probes.rule_index import RuleIndex
    from diting.resolve.calls import CallResolver
    from diting.resolve.fold import ExpressionFolder
    from diting.resolve.types import TypeOracle
    from diting.rules import RuleSet
    from diting.scan.modules import ModuleResult
    from diting.scan.options import PackageResult, ScanOptions
    from diting.scan.repository import Inventory
    from diting.scan.sources import ConfigFileState
    from diting.source.git import GitRepo
    from diting.source.snapshot import Snapshot
    names = (
        ConfigSnapshot, SnapshotValue, Finding, InventoryFile, ModuleLinks, PackagePlan, Placeholders,
        ConstantFolder, FileScope, FileFacts, RuleIndex, CallResolver, ExpressionFolder, TypeOracle, RuleSet,
        ModuleResult, PackageResult, ScanOptions, Inventory, ConfigFileState, GitRepo, Snapshot,
    )
    return {t.__name__: t for t in names}


def _check_type(name: str, value: Any, declared: Any) -> None:
    """Raise :class:`FactError` when ``value`` is not of the declared type (its outer class: a
    ``dict[str, X]`` is checked to be a dict; ``X | None`` admits None)."""
    options = typing.get_args(declared) if typing.get_origin(declared) in (typing.Union, _UnionType) else (declared,)
    for t in options:
        if t is type(None) and value is None:
            return
        origin = typing.get_origin(t) or t
        if origin is Any or (isinstance(origin, type) and isinstance(value, origin)):
            return
    raise FactError(f"fact {name!r} is a {type(value).__name__}, declared {declared}")


_UnionType = type(int | None)
