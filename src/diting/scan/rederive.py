"""``diting verify --rederive``: scan a package's commit again and compare byte for byte.

A scan is deterministic (docs/ir.md, "Verifying a package"): the same commit, analyzer,
rules and options give the same bytes. So the one check that catches any edit of a package —
even one whose author recomputed every sha256 — is to make the package again and compare.

The inputs come from the package itself: the commit, repository id and the options recorded in
``analysis_input.json`` (``scan_options``: ``--profile``, ``--config-dir``, ``--sql-dialect``,
``--max-file-bytes``). What lives outside the repository — extra rule directories, the inventory,
the config snapshot — is given again by the caller and must have the recorded digests; the
analyzer and the libraries that shape a result must have the recorded versions. A package whose
inputs cannot be reproduced is a :class:`~diting.errors.UserError` (exit 2: nothing was checked),
never a pass.

Packages of one commit and one set of options are re-derived by one scan (``--service`` of
each), in a temporary directory removed afterwards.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from diting.errors import UserError
from diting.ir.canonical import loads
from diting.ir.verify import VerifyFinding, json_object, read_regular

#: differing records named per file before the rest are only counted
MAX_NAMED = 5


@dataclass(frozen=True)
class RederiveInputs:
    """What the caller gives again: the repository and the files outside it."""

    repo: Path
    rules_dirs: list[Path] = field(default_factory=list)
    inventory: Path | None = None
    config_snapshot: Path | None = None
    jobs: int = 0


def _read_json(pkg: Path, name: str) -> dict[str, Any]:
    obj = json_object(read_regular(pkg / name))
    if obj is None:
        raise UserError(f"{pkg}: {name} cannot be read; run 'diting verify {pkg}' first")
    return obj


def _options_key(ai: dict[str, Any]) -> str:
    from diting.ir.canonical import dumps
    return dumps([ai.get("commit_sha"), ai.get("repo_id"), ai.get("scan_options")])


def _check_reproducible(pkg: Path, ai: dict[str, Any], inputs: RederiveInputs, rules_digest: list[dict[str, Any]],
                        inventory_sha: str | None, snapshot_sha: str | None) -> None:
    """Raise :class:`UserError` when this machine cannot make the package again."""
    from diting.scan.package import tool_versions
    here = tool_versions()
    recorded = ai.get("tool_versions")
    if recorded != here:
        diff = sorted(k for k in set(here) | set(recorded or {}) if (recorded or {}).get(k) != here.get(k))
        what = ", ".join(f"{k} {(recorded or {}).get(k, 'absent')} (here {here.get(k, 'absent')})" for k in diff)
        raise UserError(f"{pkg}: made with other tool versions than this diting's — {what}; re-derive it "
                        "with the versions it records")
    if "scan_options" not in ai:
        raise UserError(f"{pkg}: its analysis input records no scan_options (a package of an older diting); "
                        "it cannot be re-derived")
    if ai.get("rules") != rules_digest:
        recorded_ids = {r.get("id"): r for r in ai.get("rules") or [] if isinstance(r, dict)}
        here_ids = {r["id"]: r for r in rules_digest}
        changed = sorted(k for k in set(recorded_ids) | set(here_ids) if recorded_ids.get(k) != here_ids.get(k))
        raise UserError(f"{pkg}: scanned with other rules than the ones loaded here ({len(changed)} rule(s) differ, "
                        f"first {changed[0] if changed else '?'}); give the --rules directories of its scan")
    inv = ai.get("inventory") or {}
    if inv.get("sha256") != inventory_sha:
        raise UserError(f"{pkg}: " + ("scanned with --inventory (sha256 " + inv["sha256"][:16] + "…); give that file"
                                       if inv.get("sha256") else "scanned without --inventory; do not give one")
                        + ("" if inventory_sha is None or not inv.get("sha256") else
                           f" (the one given hashes to {inventory_sha[:16]}…)"))
    snaps = ai.get("config_snapshot_refs")
    recorded_snap = snaps[0].get("sha256") if isinstance(snaps, list) and snaps and isinstance(snaps[0], dict) \
        else None
    if recorded_snap != snapshot_sha:
        raise UserError(f"{pkg}: " + (f"scanned with --config-snapshot (sha256 {recorded_snap[:16]}…); give that "
                                      "file" if recorded_snap else "scanned without --config-snapshot; do not give one")
                        + ("" if snapshot_sha is None or not recorded_snap else
                           f" (the one given hashes to {snapshot_sha[:16]}…)"))


def rederive(packages: list[Path], inputs: RederiveInputs) -> dict[Path, list[VerifyFinding]]:
    """Scan each package's commit again with its recorded options and compare: ``{package:
    findings}`` (empty when every byte is equal). Findings name the first differing records of
    each file (:data:`MAX_NAMED`, then a count).

    Raises :class:`UserError` when a package cannot be re-derived here: unreadable manifest or
    analysis input, other tool versions, other rules, a missing or different inventory or config
    snapshot, a repository without the commit."""
    from diting.config.snapshot import ConfigSnapshot
    from diting.inventory.inventory_file import InventoryFile
    from diting.rules import load_rules
    from diting.scan.pipeline import ScanOptions, scan
    rules_digest = load_rules(inputs.rules_dirs).digest_entries()
    inventory_sha = InventoryFile.load(inputs.inventory).sha256 if inputs.inventory else None
    snapshot_sha = ConfigSnapshot.load(inputs.config_snapshot).sha256 if inputs.config_snapshot else None
    groups: dict[str, list[tuple[Path, dict[str, Any], dict[str, Any]]]] = {}
    for pkg in packages:
        manifest = _read_json(pkg, "manifest.json")
        ai = _read_json(pkg, "analysis_input.json")
        _check_reproducible(pkg, ai, inputs, rules_digest, inventory_sha, snapshot_sha)
        groups.setdefault(_options_key(ai), []).append((pkg, manifest, ai))
    out: dict[Path, list[VerifyFinding]] = {}
    for _, members in sorted(groups.items()):
        ai = members[0][2]
        opts = ai["scan_options"]
        profile = opts.get("profile")
        with tempfile.TemporaryDirectory(prefix="diting-rederive-") as tmp:
            options = ScanOptions(
                out=Path(tmp) / "out", services=sorted({a["service"]["service_id"] for _, _, a in members}),
                profiles=list(profile) if isinstance(profile, list) else None, repo_id=ai["repo_id"],
                inventory=inputs.inventory, jobs=inputs.jobs, max_file_bytes=int(opts["max_file_bytes"]),
                rules_dirs=list(inputs.rules_dirs), config_snapshot=inputs.config_snapshot, quiet=True,
                sql_dialects=list(opts.get("sql_dialect") or []), config_dirs=list(opts.get("config_dir") or []))
            result = scan(inputs.repo, ai["commit_sha"], options)
            made = {p.scan_id: p.path for p in result.packages}
            by_service: dict[str, list[Path]] = {}
            for p in result.packages:
                by_service.setdefault(p.service_id, []).append(p.path)
            for pkg, manifest, pai in members:
                again = made.get(manifest.get("scan_id"))
                if again is None:  # other inputs: find it by service and say how the inputs differ
                    same = [p for p in by_service.get(pai["service"]["service_id"], []) if p.name == pkg.name]
                    again = same[0] if same else None
                if again is None:
                    out[pkg] = [VerifyFinding("manifest.json", None, None, f"the re-scan of {ai['commit_sha'][:12]} "
                                              f"made no package of service {pai['service']['service_id']!r} "
                                              f"(it made: {', '.join(sorted(by_service)) or 'none'})")]
                    continue
                out[pkg] = compare_packages(pkg, again)
            shutil.rmtree(Path(tmp) / "out", ignore_errors=True)
    return out


def compare_packages(pkg: Path, again: Path) -> list[VerifyFinding]:
    """Findings for every file of ``pkg`` whose bytes differ from ``again``'s (the package made
    again): for jsonl files the first differing records by record_id, for JSON files the first
    differing keys, and files one side lacks."""
    findings: list[VerifyFinding] = []
    names = sorted({p.name for p in pkg.iterdir()} | {p.name for p in again.iterdir()})
    for name in names:
        mine, theirs = read_regular(pkg / name), read_regular(again / name)
        if mine == theirs:
            continue
        if mine is None or theirs is None:
            findings.append(VerifyFinding(name, None, None, "not in the package" if mine is None else
                                          "not in the re-derived package"))
            continue
        if name.endswith(".jsonl"):
            findings.extend(_jsonl_differences(name, mine, theirs))
        else:
            findings.extend(_json_differences(name, mine, theirs))
    return findings


def _by_record(data: bytes) -> dict[str, tuple[int, bytes]]:
    out: dict[str, tuple[int, bytes]] = {}
    for n, line in enumerate(data.split(b"\n"), 1):
        if not line:
            continue
        try:
            obj = loads(line)
            rid = obj.get("record_id") if isinstance(obj, dict) else None
        except (ValueError, UnicodeDecodeError):
            rid = None
        out.setdefault(rid if isinstance(rid, str) else f"(line {n}: not a record)", (n, line))
    return out


def _jsonl_differences(name: str, mine: bytes, theirs: bytes) -> list[VerifyFinding]:
    a, b = _by_record(mine), _by_record(theirs)
    diffs: list[tuple[int, str, str]] = []
    for rid in sorted(set(a) | set(b)):
        if rid not in b:
            diffs.append((a[rid][0], rid, "is not in the re-derived package (added after the scan)"))
        elif rid not in a:
            diffs.append((0, rid, f"of the re-derived package (line {b[rid][0]}) is missing here (removed after the "
                                  "scan)"))
        elif a[rid][1] != b[rid][1]:
            diffs.append((a[rid][0], rid, f"differs from the re-derived record (line {b[rid][0]}): "
                                          f"{_first_key_difference(a[rid][1], b[rid][1])}"))
    if not diffs:  # the same records, in another order or with other line breaks
        return [VerifyFinding(name, None, None, "the same records as the re-derived package, but other bytes "
                                                "(order or line ends)")]
    diffs.sort(key=lambda d: (d[0] == 0, d[0], d[1]))
    out = [VerifyFinding(name, line or None, rid, f"record {msg}") for line, rid, msg in diffs[:MAX_NAMED]]
    if len(diffs) > MAX_NAMED:
        out.append(VerifyFinding(name, None, None, f"… and {len(diffs) - MAX_NAMED} more differing record(s)"))
    return out


def _first_key_difference(mine: bytes, theirs: bytes) -> str:
    try:
        a, b = loads(mine), loads(theirs)
    except (ValueError, UnicodeDecodeError):
        return "not valid JSON"
    path = _first_path(a, b, "")
    return f"{path or 'the record'} differs" if path is not None else "other bytes"


def _first_path(a: Any, b: Any, path: str) -> str | None:
    """The JSON path of the first difference of ``a`` and ``b`` (None when equal); iterative."""
    stack = [(a, b, path)]
    while stack:
        x, y, p = stack.pop()
        if type(x) is not type(y):
            return p
        if isinstance(x, dict):
            keys = sorted(set(x) | set(y))
            missing = [k for k in keys if k not in x or k not in y]
            if missing:
                return f"{p}.{missing[0]}" if p else missing[0]
            stack.extend((x[k], y[k], f"{p}.{k}" if p else k) for k in reversed(keys))
        elif isinstance(x, list):
            if len(x) != len(y):
                return p
            stack.extend((x[i], y[i], f"{p}[{i}]") for i in reversed(range(len(x))))
        elif x != y:
            return p
    return None


def _json_differences(name: str, mine: bytes, theirs: bytes) -> list[VerifyFinding]:
    path = _first_key_difference(mine, theirs)
    return [VerifyFinding(name, None, None, f"differs from the re-derived file: {path}")]
