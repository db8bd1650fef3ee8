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

import contextlib
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from diting.errors import UserError
from diting.ir.canonical import dumps, loads
from diting.ir.verify import VerifyFinding, json_object
from diting.userfiles import read_regular

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
    #: the repository's id as the scan was given it (``--repo-id``); None: the repository's default
    repo_id: str | None = None


def _read_json(pkg: Path, name: str) -> dict[str, Any]:
    obj = json_object(read_regular(pkg / name))
    if obj is None:
        raise UserError(f"{pkg}: {name} cannot be read; run 'diting verify {pkg}' first")
    return obj


def _options_key(ai: dict[str, Any]) -> str:
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


def rederive(packages: list[Path], inputs: RederiveInputs, keep: Path | None = None) -> dict[Path, list[VerifyFinding]]:
    """Scan each package's commit again with its recorded options and compare: ``{package:
    findings}`` (empty when every byte is equal). Findings name the first differing records of
    each file (:data:`MAX_NAMED`, then a count) with the values that differ. ``keep``: a
    directory that receives the packages made again (for ``diting diff``), else they are removed.

    Raises :class:`UserError` when a package cannot be re-derived here: unreadable manifest or
    analysis input, other tool versions, other rules, a missing or different inventory or config
    snapshot, a repository without the commit."""
    if keep is not None:
        from diting.ir.writer import refuse_inside_package
        refuse_inside_package(keep, "--rederive-out")
    out: dict[Path, list[VerifyFinding]] = {}
    groups = _groups_by_options(packages, inputs, out)
    groups = _in_repository(groups, inputs, out)
    for n, (_, members) in enumerate(sorted(groups.items())):
        with _work_dir() as tmp:
            dest = (keep / str(n) if len(groups) > 1 else keep) if keep is not None else Path(tmp) / "out"
            _rescan(members, inputs, dest, out)
    return out


#: a package to re-derive: its directory, manifest and analysis input
_Member = tuple[Path, dict[str, Any], dict[str, Any]]


def _groups_by_options(packages: list[Path], inputs: RederiveInputs,
                       out: dict[Path, list[VerifyFinding]]) -> dict[str, list[_Member]]:
    """The packages grouped by the scan that made them (commit, repository id and scan options:
    :func:`_options_key`), each group re-scanned once. A package whose recorded options this build
    would never record gets its finding in ``out`` instead. Raises :class:`UserError` when a package
    cannot be made again here (:func:`_check_reproducible`) or its manifest or analysis input is
    unreadable."""
    from diting.config.snapshot import ConfigSnapshot
    from diting.inventory.inventory_file import InventoryFile
    from diting.rules import load_rules
    rules_digest = load_rules(inputs.rules_dirs).digest_entries()
    inventory_sha = InventoryFile.load(inputs.inventory).sha256 if inputs.inventory else None
    snapshot_sha = ConfigSnapshot.load(inputs.config_snapshot).sha256 if inputs.config_snapshot else None
    groups: dict[str, list[_Member]] = {}
    for pkg in packages:
        manifest = _read_json(pkg, "manifest.json")
        ai = _read_json(pkg, "analysis_input.json")
        _check_reproducible(pkg, ai, inputs, rules_digest, inventory_sha, snapshot_sha)
        why = _options_problem(ai)
        if why is not None:  # this build always records them so: the analysis input was edited
            out[pkg] = [VerifyFinding("analysis_input.json", None, None, why)]
            continue
        groups.setdefault(_options_key(ai), []).append((pkg, manifest, ai))
    return groups


def _in_repository(groups: dict[str, list[_Member]], inputs: RederiveInputs,
                   out: dict[Path, list[VerifyFinding]]) -> dict[str, list[_Member]]:
    """The groups without the packages that name another repository than ``inputs.repo`` (the
    repository's identity is an input too: a finding in ``out`` when ``--repo-id`` differs), and
    without the groups left empty. Raises :class:`UserError` when a package names a repository other
    than the default id and no ``--repo-id`` is given, or its commit is not in the repository."""
    from diting.source.git import GitRepo, default_repo_id
    with GitRepo(inputs.repo) as git:
        default, basis = default_repo_id(git)
        for key in list(groups):  # the repository's identity is an input too: the package's claim is checked
            kept = []
            for pkg, manifest, ai in groups[key]:
                claimed = ai["repo_id"]
                if inputs.repo_id is None and claimed != default:
                    raise UserError(f"{pkg}: names repository {claimed!r}; {inputs.repo} is {default!r} by its "
                                    f"{basis}: give --repo-id {claimed} to say it is that repository")
                if inputs.repo_id is not None and claimed != inputs.repo_id:
                    out[pkg] = [VerifyFinding("analysis_input.json", None, None, f"the package names repository "
                                              f"{claimed!r}, not {inputs.repo_id!r} (--repo-id)")]
                    continue
                kept.append((pkg, manifest, ai))
            groups[key] = kept
        groups = {k: v for k, v in groups.items() if v}
        for members in groups.values():
            commit = members[0][2]["commit_sha"]
            try:
                git.resolve_commit(commit)
            except UserError:
                raise UserError(f"{members[0][0]}: its commit {commit} is not in {inputs.repo}; give the "
                                "package's repository with --repo") from None
    return groups


def _rescan(members: list[_Member], inputs: RederiveInputs, dest: Path, out: dict[Path, list[VerifyFinding]]) -> None:
    """Scan the commit of one group again into ``dest`` with the options its analysis input records
    (its packages' services only) and put each package's differences from the one made again in
    ``out`` (by scan id, else by service and profiles); a finding when the scan fails or makes no
    such package."""
    from diting.limits import MAX_FILE_BYTES_LIMIT
    from diting.scan.pipeline import ScanOptions, bounded_int, scan
    ai = members[0][2]
    opts = ai["scan_options"]
    profile = opts.get("profile")
    options = ScanOptions(
        out=dest, services=sorted({a["service"]["service_id"] for _, _, a in members}),
        profiles=list(profile) if isinstance(profile, list) else None, repo_id=ai["repo_id"],
        inventory=inputs.inventory, jobs=inputs.jobs, max_file_bytes=bounded_int(
            f"{members[0][0]}: the recorded max_file_bytes", opts.get("max_file_bytes"), 1, MAX_FILE_BYTES_LIMIT),
        rules_dirs=list(inputs.rules_dirs), config_snapshot=inputs.config_snapshot, quiet=True,
        sql_dialects=list(opts.get("sql_dialect") or []), config_dirs=list(opts.get("config_dir") or []))
    try:
        result = scan(inputs.repo, ai["commit_sha"], options)
    except UserError as exc:  # the commit is there: the recorded options make no scan of it
        for pkg, _, _ in members:
            out[pkg] = [VerifyFinding("analysis_input.json", None, None, "the re-scan with the options it "
                                      f"records fails: {exc.message}")]
        return
    made = {p.scan_id: p.path for p in result.packages}
    for pkg, manifest, pai in members:
        again = made.get(manifest.get("scan_id"))
        if again is None:  # other inputs: the package of the same service and profiles
            again = next((p.path for p in result.packages if p.service_id == pai["service"]["service_id"]
                          and _profiles(p.path) == pai.get("spring_profiles")), None)
        if again is None:
            out[pkg] = [VerifyFinding("manifest.json", None, None, f"the re-scan of {ai['commit_sha'][:12]} "
                                      f"made no package of service {pai['service']['service_id']!r} with "
                                      f"profiles {pai.get('spring_profiles')} (it made: "
                                      f"{', '.join(sorted(p.path.name for p in result.packages)) or 'none'})")]
            continue
        out[pkg] = compare_packages(pkg, again)


@contextlib.contextmanager
def _work_dir():
    """A directory for one re-scan in the system's temporary folder, removed afterwards; named as a
    writer's leftover (``.diting-rederive.tmp-{pid}-{hex}``), so one a killed re-derivation left is
    swept by the next (never one of a live process)."""
    from diting.leftovers import leftover_name, sweep_leftovers
    base = Path(tempfile.gettempdir())
    sweep_leftovers(base, "diting-rederive")
    tmp = base / leftover_name("diting-rederive")
    tmp.mkdir(mode=0o700)
    try:
        yield tmp
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _profiles(pkg: Path) -> Any:
    return _read_json(pkg, "analysis_input.json").get("spring_profiles")


def _options_problem(ai: dict[str, Any]) -> str | None:
    """Why the recorded scan options cannot be the ones this build records, or None."""
    opts = ai.get("scan_options")
    if not isinstance(opts, dict):
        return "records no scan_options, which this build of diting always records: edited"
    size = opts.get("max_file_bytes")
    if not isinstance(size, int) or isinstance(size, bool) or not 1 <= size < 2 ** 63:
        return f"scan_options.max_file_bytes {_show(size)} is no byte count: edited"
    profile = opts.get("profile")
    if not (isinstance(profile, dict) or (isinstance(profile, list) and all(isinstance(x, str) for x in profile))):
        return f"scan_options.profile {_show(profile)} is neither a list of profiles nor the missing marker: edited"
    for key in ("config_dir", "sql_dialect"):
        if not isinstance(opts.get(key), list) or not all(isinstance(x, str) for x in opts[key]):
            return f"scan_options.{key} {_show(opts.get(key))} is no list of strings: edited"
    if not isinstance(ai.get("commit_sha"), str) or not isinstance(ai.get("repo_id"), str):
        return "commit_sha or repo_id is not a string: edited"
    service = ai.get("service")
    if not isinstance(service, dict) or not isinstance(service.get("service_id"), str):
        return "service.service_id is not a string: edited"
    return None


def compare_packages(pkg: Path, again: Path) -> list[VerifyFinding]:
    """Findings for every file of ``pkg`` whose bytes differ from ``again``'s (the package made
    again): for jsonl files the first differing records by record_id, named by what they are, with
    the first key that differs and both values; a record whose identity was rewritten is paired
    with the one it replaced; for JSON files the first differing key; and files one side lacks.
    When the two scan ids differ (the analysis inputs differ: that is the first finding), records
    are compared with the package's scan id put in the re-derived ones."""
    findings: list[VerifyFinding] = []
    names = sorted({p.name for p in pkg.iterdir()} | {p.name for p in again.iterdir()})
    mine_id = (json_object(read_regular(pkg / "manifest.json")) or {}).get("scan_id")
    their_id = (json_object(read_regular(again / "manifest.json")) or {}).get("scan_id")
    swap = (isinstance(mine_id, str) and isinstance(their_id, str) and mine_id != their_id)
    for name in ["analysis_input.json"] + [n for n in names if n != "analysis_input.json"]:
        mine, theirs = read_regular(pkg / name), read_regular(again / name)
        if swap and theirs is not None and name not in ("analysis_input.json", "manifest.json"):
            theirs = theirs.replace(f'"scan_id":"{their_id}"'.encode(), f'"scan_id":"{mine_id}"'.encode())
        if mine == theirs:
            continue
        if mine is None or theirs is None:
            findings.append(VerifyFinding(name, None, None, "not in the package" if mine is None else
                                          "not in the re-derived package"))
            continue
        if name.endswith(".jsonl"):
            findings.extend(_jsonl_differences(name, mine, theirs))
        elif name == "manifest.json" and findings:
            continue  # its digests differ because the files above do
        else:
            findings.extend(_json_differences(name, mine, theirs))
            if name == "analysis_input.json" and _only_analyzer_keys(mine, theirs):
                findings[-1] = VerifyFinding(name, None, None, findings[-1].message + " (a part the analyzer fixes: "
                                             "an edit, or a build of diting that changed its output without "
                                             "raising its package format)")
    return findings


#: keys of analysis_input.json that the analyzer fixes, not the repository or the options
ANALYZER_KEYS = frozenset({"budgets", "catalogs", "protocols", "requested_capabilities", "rules", "rule_files",
                           "tool_versions"})


def _only_analyzer_keys(mine: bytes, theirs: bytes) -> bool:
    a, b = json_object(mine) or {}, json_object(theirs) or {}
    keys = {k for k in set(a) | set(b) if a.get(k) != b.get(k)}
    return bool(keys) and keys <= ANALYZER_KEYS


def _by_record(data: bytes) -> dict[str, tuple[int, bytes, Any]]:
    out: dict[str, tuple[int, bytes, Any]] = {}
    for n, line in enumerate(data.split(b"\n"), 1):
        if not line:
            continue
        try:
            obj = loads(line)
        except (ValueError, UnicodeDecodeError):
            obj = None
        rid = obj.get("record_id") if isinstance(obj, dict) else None
        out.setdefault(rid if isinstance(rid, str) else f"(line {n}: not a record)", (n, line, obj))
    return out


def _what(obj: Any) -> str:
    """A record named by what it is: kind and stable_id, a segment's locator, a diagnostic's code."""
    if not isinstance(obj, dict):
        return "a line that is no record"
    if isinstance(obj.get("locator"), dict):
        loc = obj["locator"]
        return f"segment {loc.get('path')}:{loc.get('start_line')}-{loc.get('end_line')}"
    if "code" in obj and "message" in obj:
        return f"diagnostic {obj.get('code')} ({_show(obj.get('message'), 60)})"
    if "config_key" in obj:
        return f"binding of {obj.get('config_key')}"
    if "branch_id" in obj:
        return f"ledger item {obj.get('branch_id')}"
    if "source_ref" in obj:
        return f"relation {obj.get('stable_id')}"  # the stable_id starts with the kind
    return f"{obj.get('kind', 'record')} {obj.get('stable_id', obj.get('record_id'))}"


def _site(obj: Any) -> str | None:
    """What a relation is about apart from its target (kind, source, call site, ordinal): a
    rewritten target keeps it, so the added and the removed record pair up."""
    if not isinstance(obj, dict) or "source_ref" not in obj:
        return None
    stable = str(obj.get("stable_id", ""))
    ordinal = stable.rpartition("|")[2]
    return dumps([obj.get("kind"), obj.get("source_ref"), obj.get("callsite_id"), ordinal])


def _jsonl_differences(name: str, mine: bytes, theirs: bytes) -> list[VerifyFinding]:
    a, b = _by_record(mine), _by_record(theirs)
    diffs: list[tuple[int, str | None, str]] = []
    added = [rid for rid in a if rid not in b]
    removed = [rid for rid in b if rid not in a]
    by_site: dict[str, list[str]] = {}
    for rid in removed:
        site = _site(b[rid][2])
        if site is not None:
            by_site.setdefault(site, []).append(rid)
    paired: set[str] = set()
    for rid in added:
        cands = by_site.get(_site(a[rid][2]) or "", [])
        if len(cands) == 1 and cands[0] not in paired:
            old = cands[0]
            paired.add(old)
            ids_apart = [{k: v for k, v in r.items() if k not in ("record_id", "stable_id")}
                         for r in (a[rid][2], b[old][2])]  # the rewritten identity follows from the change
            diffs.append((a[rid][0], rid, f"{_what(a[rid][2])} replaces the re-derived {_what(b[old][2])} (line "
                                          f"{b[old][0]}): {_difference_text(*ids_apart)}"))
        else:
            diffs.append((a[rid][0], rid, f"{_what(a[rid][2])} is not in the re-derived package (added after "
                                          "the scan)"))
    for rid in removed:
        if rid not in paired:
            diffs.append((0, None, f"re-derived {_what(b[rid][2])} ({rid}, line {b[rid][0]}) is missing here "
                                   "(removed after the scan)"))
    for rid in a.keys() & b.keys():
        if a[rid][1] != b[rid][1]:
            diffs.append((a[rid][0], rid, f"{_what(a[rid][2])} differs from the re-derived record (line "
                                          f"{b[rid][0]}): {_difference_text(a[rid][2], b[rid][2])}"))
    if not diffs:  # the same records, in another order or with other line breaks
        return [VerifyFinding(name, None, None, "the same records as the re-derived package, but other bytes "
                                                "(order or line ends)")]
    diffs.sort(key=lambda d: (d[0] == 0, d[0], d[2]))
    out = [VerifyFinding(name, line or None, rid, msg) for line, rid, msg in diffs[:MAX_NAMED]]
    if len(diffs) > MAX_NAMED:
        out.append(VerifyFinding(name, None, None, f"… and {len(diffs) - MAX_NAMED} more differing record(s)"))
    return out


def _show(value: Any, width: int = 80) -> str:
    """A value for a message: JSON, cut in the middle beyond ``width`` characters."""
    text = "absent" if value is _ABSENT else dumps(value)
    return text if len(text) <= width else text[:width // 2 - 1] + "…" + text[-(width // 2 - 1):]


def _difference_text(mine: Any, theirs: Any) -> str:
    d = _first_difference(mine, theirs)
    if d is None:
        return "other bytes"
    where, a, b = d
    return f"{where or 'the value'} is {_show(a)} here, {_show(b)} when re-derived"


_ABSENT = object()


def _first_difference(a: Any, b: Any) -> tuple[str, Any, Any] | None:
    """The JSON path of the first difference of ``a`` and ``b`` and the two values there (None
    when equal); iterative."""
    stack = [(a, b, "")]
    while stack:
        x, y, p = stack.pop()
        if x is _ABSENT or y is _ABSENT:
            return p, x, y
        if type(x) is not type(y):
            return p, x, y
        if isinstance(x, dict):
            keys = sorted(set(x) | set(y))
            stack.extend((x.get(k, _ABSENT), y.get(k, _ABSENT), f"{p}.{k}" if p else k) for k in reversed(keys))
        elif isinstance(x, list):
            if len(x) != len(y):
                n = min(len(x), len(y))
                if x[:n] == y[:n]:
                    return f"{p}[{n}]", x[n] if n < len(x) else _ABSENT, y[n] if n < len(y) else _ABSENT
            stack.extend((x[i], y[i], f"{p}[{i}]") for i in reversed(range(min(len(x), len(y)))))
        elif x != y:
            return p, x, y
    return None


def _json_differences(name: str, mine: bytes, theirs: bytes) -> list[VerifyFinding]:
    try:
        a, b = loads(mine), loads(theirs)
    except (ValueError, UnicodeDecodeError):
        return [VerifyFinding(name, None, None, "differs from the re-derived file (not valid JSON)")]
    return [VerifyFinding(name, None, None, f"differs from the re-derived file: {_difference_text(a, b)}")]
