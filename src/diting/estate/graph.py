"""``diting estate graph``: the graph database kept current with an estate's output folder, loading only
the packages that changed (docs/estates.md §3).

A package the database already holds as current, with the same manifest bytes, is neither verified
nor read again. The packages that changed are verified and loaded in one transaction, replacing the
current package of the same service; a current package of one of the estate's repositories that the
estate no longer lists (a service removed, a repository dropped from the file keeps its packages) is
made no longer current in the same transaction.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from diting.errors import UserError
from diting.estate.run import manifest_bytes, state_packages
from diting.graph.store import LoadResult
from diting.ir.canonical import sha256_hex


@dataclass
class EstateGraphResult:
    """What ``estate graph`` did: packages loaded (changed), kept (already current), retired."""

    loaded: list[str] = field(default_factory=list)
    kept: int = 0
    retired: list[str] = field(default_factory=list)
    load: LoadResult | None = None


def update_graph(db: Path, out: Path, deep: bool = True, gate=None) -> EstateGraphResult:
    """Bring ``db`` up to date with the estate scanned into ``out`` (see the module docstring); the
    database is not opened for writing when nothing changed. Raises :class:`UserError` as
    :func:`diting.graph.store.build` does, and when ``out`` holds no estate state."""
    from diting.estate.run import locked, require_state
    require_state(out)  # no estate here: refused before its lock is taken
    with locked(out):  # an estate scan writing there now: refused, not read half-way
        return _update(db, out, deep, gate)


def _update(db: Path, out: Path, deep: bool, gate) -> EstateGraphResult:
    from diting.graph.store import build, with_graph
    found, dropped = state_packages(out)
    listed = [pkg for _, pkg in found]
    manifests = {pkg: _manifest(pkg) for pkg in listed}
    _refuse_clashes(listed, manifests)
    current: dict[str, tuple[str, str, str, str]] = {}
    if db.exists():
        rows = with_graph(db, lambda con: con.execute(
            "SELECT manifest_sha256, scan_id, repo_id, service_id, label FROM packages WHERE is_current").fetchall())
        current = {r[0]: (r[1], r[2], r[3], r[4]) for r in rows}
    changed = [pkg for pkg in listed if manifests[pkg][0] not in current]  # a missing manifest: build() says so
    kept = sum(1 for digest, _, _ in manifests.values() if digest in current)
    services = {(repo_id, service_id) for _, repo_id, service_id in manifests.values()}
    estate_repos = {repo_id for _, repo_id, _ in manifests.values()}
    retire = sorted(scan_id for scan_id, repo_id, service_id, label in current.values()
                    if label == "" and (repo_id in estate_repos and (repo_id, service_id) not in services
                                        or repo_id in dropped - estate_repos))
    result = EstateGraphResult(kept=kept)
    if not changed and not retire:
        return result
    result.load = build(db, changed, replace=True, deep=deep, gate=gate, retire=retire)
    result.loaded = list(result.load.loaded)
    result.retired = [s for s in result.load.replaced if s in retire]
    return result


def _refuse_clashes(listed: list[Path], manifests: dict[Path, tuple]) -> None:
    """Raise :class:`UserError` naming every service id (and profile set) two of the estate's packages
    share: the graph holds one current package of each, so nothing could be loaded."""
    from diting.graph.store import package_profile_set
    seen: dict[tuple[str, str], list[Path]] = {}
    for pkg in listed:
        sid = manifests[pkg][2]
        if isinstance(sid, str):
            seen.setdefault((sid, package_profile_set(pkg)), []).append(pkg)
    clashes = [(key, pkgs) for key, pkgs in sorted(seen.items()) if len(pkgs) > 1]
    if clashes:
        shown = "; ".join(f"{sid} (profiles {prof}): {', '.join(f'{p.parent.name}/{p.name}' for p in pkgs)}"
                          for (sid, prof), pkgs in clashes[:3])
        more = f" and {len(clashes) - 3} more" if len(clashes) > 3 else ""
        raise UserError(f"{len(clashes)} service id(s) name packages of two repositories, and the graph holds one "
                        f"current package of each: {shown}{more}; give one of each an id of its own with an "
                        "inventory file (the repository's 'inventory' in the estate file, docs/scanning.md §5; a "
                        "lib: unit's id cannot be set yet); nothing was loaded")


def _manifest(pkg: Path) -> tuple[str | None, str | None, str | None]:
    """A package's manifest sha256, repository id and service id (None for what cannot be read)."""
    data = manifest_bytes(pkg)
    if data is None:
        return None, None, None
    try:
        m = json.loads(data)
    except ValueError:
        m = None
    m = m if isinstance(m, dict) else {}
    return sha256_hex(data), m.get("repo_id"), m.get("service_id")
