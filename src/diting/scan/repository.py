"""Stage 1 of a scan: the build inventory of the repository at the commit (docs/gradle.md).

Finds every pom.xml and every Gradle settings and build script (not test fixtures, build
output, ``buildSrc`` build logic, or resources of another module such as archetype templates),
reads ``.mvn/maven.config``, builds the Maven effective models and the Gradle project models
into one :class:`ModuleGraph`, assigns every blob to its module and classifies it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from diting.errors import UserError
from diting.findings import Finding
from diting.inventory.gradle import GradleModel
from diting.inventory.gradle_settings import BUILD_FILES, SETTINGS_FILES
from diting.inventory.layout import FileEntry, classify, exclusion_reason
from diting.inventory.maven import MavenModel, read_maven_config
from diting.inventory.module import BuildModule, ModuleGraph
from diting.inventory.pom import RawPom, read_pom
from diting.rules import RuleSet
from diting.source.paths import join_inside
from diting.source.snapshot import BlobRead, Snapshot
from diting.source.text import decode_bytes


@dataclass
class Inventory:
    """Modules (by pom path), each module's namespace, and every classified file."""

    model: ModuleGraph
    ns: dict[str, str]
    files: list[FileEntry]
    files_by_module: dict[str, list[FileEntry]] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    maven_config: str | None = None
    maven_config_blob: str | None = None

    @property
    def modules(self) -> dict[str, BuildModule]:
        return self.model.modules


def _build_candidates(snapshot: Snapshot, names: tuple[str, ...]) -> list[str]:
    """Build files named one of ``names`` that are a build's own: not build output or test
    fixtures, not ``buildSrc`` build logic, not inside another module's ``src/`` (templates)."""
    poms = [e.path for e in snapshot.entries if e.is_regular and e.path.rsplit("/", 1)[-1] in names
            and exclusion_reason(e.path) is None and "buildSrc" not in e.path.split("/")[:-1]]
    return _outside_sources(poms)


def _pom_candidates(snapshot: Snapshot) -> list[str]:
    return _build_candidates(snapshot, ("pom.xml",))


def _outside_sources(poms: list[str]) -> list[str]:
    dirs = {p.rsplit("/", 1)[0] if "/" in p else "" for p in poms}
    out = []
    for p in poms:
        d = p.rsplit("/", 1)[0] if "/" in p else ""
        # a pom inside another module's src/ is a resource (an archetype template), not a module
        inside_src = False
        parts = d.split("/") if d else []
        for i, seg in enumerate(parts):
            if seg == "src" and "/".join(parts[:i]) in dirs:
                inside_src = True
                break
        if not inside_src:
            out.append(p)
    return sorted(out)


def _read_text(snapshot: Snapshot):
    def read(path: str) -> tuple[str | None, str, str | None]:
        got = snapshot.read(path)
        if got.data is None:
            return None, "utf-8", got.problem + (f", {got.size} bytes" if got.problem == "too_large" else "")
        d = decode_bytes(got.data)
        return d.text, d.encoding, "lossy" if d.lossy else None
    return read


def build_inventory(snapshot: Snapshot, rules: RuleSet, root_name: str = "root") -> Inventory:
    """Read the repository's Maven and Gradle structure (``root_name``: the repository directory's
    name, Gradle's default name of a root project). Raises :class:`UserError` when the tree has
    neither a pom.xml nor a Gradle build script."""
    findings: list[Finding] = []
    todo = _pom_candidates(snapshot)
    gradle_files = _build_candidates(snapshot, SETTINGS_FILES + BUILD_FILES)
    if not todo and not gradle_files:
        raise UserError(f"no pom.xml, settings.gradle or build.gradle in the tree of commit {snapshot.commit[:12]}: "
                        "diting scans Maven and Gradle repositories (docs/gradle.md)")
    raws = _read_poms(snapshot, todo)
    user_props, inv_cfg, cfg_blob = _maven_config(snapshot)
    symlinks = {e.path for e in snapshot.entries if e.is_symlink}
    maven = MavenModel(raws, user_props, rules.well_known_parent, set(snapshot.by_path), snapshot.gitlinks,
                       symlinks) if raws else None
    gradle = GradleModel(_read_text(snapshot), {e.path for e in snapshot.entries if e.is_regular},
                         rules.gradle_scopes(), rules.build_logic_plugins(), root_name,
                         gradle_files, snapshot.gitlinks, symlinks) \
        if gradle_files else None
    modules, aggregated = _one_module_per_directory(maven, gradle, findings)
    if gradle is not None:
        findings.extend(gradle.findings)
    model = ModuleGraph(modules, aggregated, maven, gradle)
    _attach_build_findings(findings, modules)
    files = _classify_files(snapshot, model)
    inv = Inventory(model, _namespaces(model), files, findings=findings, maven_config=inv_cfg,
                    maven_config_blob=cfg_blob)
    for f in files:
        if f.module is not None:
            inv.files_by_module.setdefault(f.module, []).append(f)
    return inv


def _read_poms(snapshot: Snapshot, todo: list[str]) -> dict[str, RawPom]:
    """Every pom of ``todo`` read (pom path → :class:`RawPom`), and the poms its ``<modules>`` (own and
    profiles') name with a custom file name (``<module>x/other.xml</module>``). A pom that cannot be
    read is kept, with ``error`` set (:func:`_unread_pom`)."""
    raws: dict[str, RawPom] = {}
    while todo:
        path = todo.pop()
        if path in raws:
            continue
        got = snapshot.read(path)
        if got.data is None:
            raws[path] = _unread_pom(snapshot, path, got)
            continue
        raw = read_pom(path, got.data)
        raws[path] = raw
        # modules declared with a custom pom file name
        for name, _ in raw.modules + [m for prof in raw.profiles for m in prof.modules]:
            if name.endswith(".xml"):
                target = join_inside(raw.dir, name)
                if target and target not in raws and snapshot.exists(target):
                    todo.append(target)
    return raws


def _unread_pom(snapshot: Snapshot, path: str, got: BlobRead) -> RawPom:
    """The :class:`RawPom` of a pom whose blob is not read (``got.problem``: too_large, lfs_pointer …):
    the module exists but is skipped, never dropped; its first line (of the blob git holds: an LFS
    pointer's own text) is the evidence of the MODULE record."""
    problem = got.problem
    first, enc = snapshot.first_line(path) if problem in ("too_large", "too_large_line", "lfs_pointer") \
        else ("", "utf-8")
    return RawPom(path=path, dir=path.rsplit("/", 1)[0] if "/" in path else "", lines=[first], encoding=enc,
                  lossy=False, error=f"not read ({problem}" + (f", {got.size} bytes" if problem == "too_large" else "")
                  + ")")


def _maven_config(snapshot: Snapshot) -> tuple[dict[str, str], str | None, str | None]:
    """The user properties of ``.mvn/maven.config`` with its path and blob sha; ``({}, None, None)``
    when there is none or it cannot be read."""
    if snapshot.exists(".mvn/maven.config"):
        got = snapshot.read(".mvn/maven.config")
        if got.data is not None:
            return read_maven_config(got.data), ".mvn/maven.config", snapshot.by_path[".mvn/maven.config"].oid
    return {}, None, None


def _one_module_per_directory(maven: MavenModel | None, gradle: GradleModel | None,
                              findings: list[Finding]) -> tuple[dict[str, BuildModule], dict[str, str]]:
    """The modules of both build models (build file → module), the Maven model first: a directory
    a second build file builds too keeps its first model (BUILD_ALTERNATIVE, added to ``findings``).
    With the aggregation (child build file → aggregating build file) among the modules kept."""
    modules: dict[str, BuildModule] = {}
    by_dir: dict[str, BuildModule] = {}
    aggregated: dict[str, str] = {}
    for part in (maven, gradle):
        if part is None:
            continue
        for key, mod in part.modules.items():
            other = by_dir.get(mod.dir)
            if other is not None:
                findings.append(Finding("BUILD_ALTERNATIVE", f"{key} builds the directory {mod.dir or '(root)'} that "
                                        f"{other.build_file} builds too; the {other.build_system} model is read",
                                        key, 0, 0, None, f"twice|{key}"))
                continue
            by_dir[mod.dir] = mod
            modules[key] = mod
        aggregated.update({k: v for k, v in part.aggregated_by.items() if k in modules and v in modules})
    return modules, aggregated


def _attach_build_findings(findings: list[Finding], modules: dict[str, BuildModule]) -> None:
    """A build-level finding (a settings file, a second build system) is the concern of the module
    whose directory holds its file (the nearest enclosing one); it is appended to its findings."""
    dirs = sorted({m.dir: k for k, m in modules.items()}.items())
    dir_key = dict(dirs)
    for f in findings:
        d = (f.path or "").rsplit("/", 1)[0] if "/" in (f.path or "") else ""
        while d not in dir_key and d:
            d = d.rsplit("/", 1)[0] if "/" in d else ""
        if d in dir_key:
            modules[dir_key[d]].findings.append(f)


def _namespaces(model: ModuleGraph) -> dict[str, str]:
    """Each module's namespace: its ``groupId:artifactId``, or ``?{build file}`` when it failed or its
    coordinate is not known."""
    ns: dict[str, str] = {}
    for path, mod in model.modules.items():
        if mod.failed or not mod.group_id or not mod.artifact_id or "${" in mod.group_id + mod.artifact_id:
            ns[path] = f"?{path}"
        else:
            ns[path] = mod.ga
    return ns


def _classify_files(snapshot: Snapshot, model: ModuleGraph) -> list[FileEntry]:
    """Every file of the tree classified by the modules' directories, source and resource roots (none
    for a failed module) and build inputs (:func:`classify`)."""
    layout = {}
    build_inputs: set[str] = set()
    for path, mod in model.modules.items():
        layout[mod.dir] = (path, [] if mod.failed else mod.source_roots, [] if mod.failed else mod.resource_roots)
        build_inputs.update(mod.build_inputs)
    return classify(snapshot.entries, layout, build_inputs)
