"""``diting diff --repo REPO A..B``: scan both commits (reusing a finished scan of a commit made with
the same analyzer and rules), then diff the packages of each service and profile set."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from diting.errors import UserError
from diting.ir.canonical import loads as json_loads

MARKER = ".diting-scan.json"


def scan_key(repo_id: str, sha: str) -> str:
    """What a scan's packages depend on besides the sources at ``sha``: the analyzer and tool
    versions and every rule file's digest (the parts of the input digest a commit does not fix)."""
    from diting.ir.canonical import dumps, sha256_hex
    from diting.rules import load_rules
    from diting.scan.package import tool_versions
    rules = load_rules([])
    return sha256_hex(dumps({"repo_id": repo_id, "commit": sha, "tools": tool_versions(),
                             "rules": sorted((f.path, f.sha256) for f in rules.files)}))


def packages_at(repo: Path, sha: str, work: Path, repo_id: str) -> tuple[Path, bool]:
    """The packages of ``repo`` at ``sha`` under ``work/{sha}``: reused when a finished scan with
    the same key is there, else scanned. Returns (directory, reused)."""
    from diting.scan.pipeline import ScanOptions, scan
    out = work / sha
    key = scan_key(repo_id, sha)
    marker = out / MARKER
    if marker.is_file():
        try:
            doc = json_loads(marker.read_text(encoding="utf-8"))
            if isinstance(doc, dict) and doc.get("key") == key and doc.get("packages") == _listing(out):
                return out, True  # the same scan, and its packages all still there
        except (OSError, ValueError):
            pass  # an unreadable marker means no reusable scan
    if marker.is_symlink() or (marker.exists() and not marker.is_file()):
        raise UserError(f"{marker}: is not a regular file; remove it or give another --work")
    scan(repo, sha, ScanOptions(out=out, repo_id=repo_id, quiet=True))
    from diting.graph.export import write_text_atomic
    write_text_atomic(marker, json.dumps({"commit": sha, "key": key, "packages": _listing(out)}) + "\n")
    return out, False


_SHA_DIR = re.compile(r"[0-9a-f]{40}([0-9a-f]{24})?")


def check_work(work: Path) -> None:
    """``--work`` must be a folder the range diff owns: absent, empty, or holding only its scans
    (``{commit sha}/`` folders). Raises :class:`UserError` otherwise — it never writes into someone's
    folder (``--work /etc``)."""
    if not work.exists():
        return
    if work.is_symlink() or not work.is_dir():
        raise UserError(f"--work {work}: is not a folder")
    try:
        foreign = sorted(p.name for p in work.iterdir() if not (_SHA_DIR.fullmatch(p.name) and p.is_dir()
                                                                 and not p.is_symlink()))
    except OSError as exc:
        raise UserError(f"--work {work}: cannot be read ({exc.strerror or exc})") from exc
    if foreign:
        raise UserError(f"--work {work}: holds {foreign[0]!r}, which is no scan of a range diff; give an "
                        "empty or new folder")


def _listing(out: Path) -> list[str]:
    """The package directories of a scan output and their manifests' sha256 (a deleted or altered
    package makes a finished scan not reusable)."""
    import hashlib
    from diting.ir.writer import is_leftover
    return sorted(f"{p.name}:{hashlib.sha256((p / 'manifest.json').read_bytes()).hexdigest()}"
                  for p in out.iterdir() if (p / "manifest.json").is_file() and not is_leftover(p.name))


def _by_service(d: Path) -> dict[str, Path]:
    """Package directories keyed by ``{service_id}[+{profile set}]`` read from each package's manifest
    and analysis input (a directory name is made file-safe and may carry a hash: it never keys)."""
    from diting.graph.store import package_profile_set
    out: dict[str, Path] = {}
    from diting.ir.writer import skipped_leftover
    for p in sorted(d.iterdir()):
        if not (p / "manifest.json").is_file() or skipped_leftover(p):
            continue
        try:
            sid = json_loads((p / "manifest.json").read_text(encoding="utf-8"))["service_id"]
            profiles = package_profile_set(p)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise UserError(f"{p}: not a readable package ({exc})") from exc
        key = sid + (f"+{profiles}" if profiles and profiles != "default" else "")
        if key in out:
            raise UserError(f"{d}: two packages of {key} ({out[key].name}, {p.name})")
        out[key] = p
    return out


def diff_range(repo: Path, spec: str, work: Path, db: Path | None = None, repo_id: str | None = None) -> dict[str, Any]:
    """``{range, old_commit, new_commit, reused, services: [diff report …], only_old, only_new,
    omitted_services: []}`` (:func:`diting.diff.report.narrow_range` narrows it).
    Raises :class:`UserError` for a spec that is not ``A..B`` or a revision the repository lacks."""
    from diting.diff.report import diff
    from diting.source.git import GitRepo, default_repo_id
    a, sep, b = spec.partition("..")
    if not sep or not a or not b or b.startswith("."):
        raise UserError(f"{spec!r}: give a range A..B of two revisions")
    git = GitRepo(repo)
    old_sha, new_sha = git.resolve_commit(a), git.resolve_commit(b)
    rid = repo_id or default_repo_id(git)[0]
    check_work(work)
    old_dir, old_reused = packages_at(repo, old_sha, work, rid)
    new_dir, new_reused = packages_at(repo, new_sha, work, rid)
    olds, news = _by_service(old_dir), _by_service(new_dir)
    reports = [diff(olds[k], news[k], repo, db) for k in sorted(set(olds) & set(news))]
    return {"range": spec, "old_commit": old_sha, "new_commit": new_sha,
            "reused": [s for s, r in ((old_sha, old_reused), (new_sha, new_reused)) if r],
            "services": reports, "only_old": sorted(set(olds) - set(news)), "only_new": sorted(set(news) - set(olds)),
            "omitted_services": []}
