"""Stage 1 of a scan: the Maven inventory of the repository at the commit (SPEC §4.1).

Finds every pom.xml (not test fixtures, build output, or resources of another
module such as archetype templates), reads ``.mvn/maven.config``, builds the
effective models, assigns every blob to its module and classifies it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from diting.errors import UserError
from diting.findings import Finding
from diting.inventory.layout import FileEntry, classify, exclusion_reason
from diting.inventory.maven import MavenModel, MavenModule, read_maven_config
from diting.inventory.pom import RawPom, read_pom
from diting.rules import RuleSet
from diting.source.paths import join_inside
from diting.source.snapshot import Snapshot


@dataclass
class Inventory:
    """Modules (by pom path), each module's namespace, and every classified file."""

    model: MavenModel
    ns: dict[str, str]
    files: list[FileEntry]
    files_by_module: dict[str, list[FileEntry]] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    maven_config: str | None = None
    maven_config_blob: str | None = None

    @property
    def modules(self) -> dict[str, MavenModule]:
        return self.model.modules


def _pom_candidates(snapshot: Snapshot) -> list[str]:
    poms = [e.path for e in snapshot.entries if e.is_regular and (e.path == "pom.xml" or e.path.endswith("/pom.xml"))
            and exclusion_reason(e.path) is None]
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


def build_inventory(snapshot: Snapshot, rules: RuleSet) -> Inventory:
    """Read the repository's Maven structure. Raises :class:`UserError` when there is no pom.xml."""
    findings: list[Finding] = []
    raws: dict[str, RawPom] = {}
    todo = _pom_candidates(snapshot)
    if not todo:
        raise UserError(f"no pom.xml in the tree of commit {snapshot.commit[:12]}: diting scans Maven repositories")
    while todo:
        path = todo.pop()
        if path in raws:
            continue
        got = snapshot.read(path)
        if got.data is None:
            # the module exists but cannot be read: it is skipped, never dropped; its first
            # line is the evidence of the MODULE record
            first, enc = snapshot.first_line(path) if got.problem == "too_large" else ("", "utf-8")
            raw = RawPom(path=path, dir=path.rsplit("/", 1)[0] if "/" in path else "", lines=[first], encoding=enc,
                         lossy=False, error=f"not read ({got.problem}"
                                            + (f", {got.size} bytes" if got.problem == "too_large" else "") + ")")
            raws[path] = raw
            continue
        raw = read_pom(path, got.data)
        raws[path] = raw
        # modules declared with a custom pom file name
        for name, _ in raw.modules + [m for prof in raw.profiles for m in prof.modules]:
            if name.endswith(".xml"):
                target = join_inside(raw.dir, name)
                if target and target not in raws and snapshot.exists(target):
                    todo.append(target)
    user_props: dict[str, str] = {}
    inv_cfg = None
    cfg_blob = None
    if snapshot.exists(".mvn/maven.config"):
        got = snapshot.read(".mvn/maven.config")
        if got.data is not None:
            user_props = read_maven_config(got.data)
            inv_cfg = ".mvn/maven.config"
            cfg_blob = snapshot.by_path[".mvn/maven.config"].oid
    model = MavenModel(raws, user_props, rules.well_known_parent, set(snapshot.by_path), snapshot.gitlinks,
                       {e.path for e in snapshot.entries if e.is_symlink})
    ns: dict[str, str] = {}
    for path, mod in model.modules.items():
        if mod.failed or not mod.group_id or not mod.artifact_id or "${" in mod.group_id + mod.artifact_id:
            ns[path] = f"?{path}"
        else:
            ns[path] = mod.ga
    layout = {}
    for path, mod in model.modules.items():
        layout[mod.dir] = (path, [] if mod.failed else mod.source_roots, [] if mod.failed else mod.resource_roots)
    files = classify(snapshot.entries, layout)
    inv = Inventory(model, ns, files, findings=findings, maven_config=inv_cfg, maven_config_blob=cfg_blob)
    for f in files:
        if f.module is not None:
            inv.files_by_module.setdefault(f.module, []).append(f)
    return inv
