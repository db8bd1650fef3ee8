"""``diting estate scan``: every repository of an estate file scanned into one output folder, what did
not change reused, a failure in one repository reported while the others go on (docs/estates.md §2).

Each repository's scan is one task (:func:`scan_repository`): it scans into a private temporary
folder and hands back the packages' bytes, which this process — the only writer of ``--out`` —
writes atomically under ``OUT/NAME/`` and records in ``OUT/estate.json`` (the state: per repository
its reuse key, commit and packages). Tasks run here one after another, in local worker processes
(``jobs`` > 1), or on a Dask distributed cluster (``scheduler``; the ``diting[cluster]`` extra).
A repository whose reuse key (:func:`reuse_key`) and packages on disk equal the state's is not
scanned again.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
import time
import traceback
from concurrent.futures import as_completed
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

from diting.errors import UserError
from diting.estate.spec import EstateSpec, RepoSpec
from diting.ir.canonical import dumps, sha256_hex

#: the state file under ``--out``
STATE_FILE = "estate.json"
STATE_FORMAT = 1
#: the lock an estate scan holds on its ``--out`` folder
LOCK_FILE = ".estate.lock"
#: the temporary folders of scans (in ``--out`` for local runs: a killed run's are removed by the next)
TMP_PREFIX = ".diting-estate-scan-"


@dataclass
class ScanTask:
    """What one repository's scan needs, resolved by the client (picklable: it travels to workers)."""

    repo: RepoSpec
    commit: str
    repo_id: str
    key: str
    rules: tuple[Path, ...]
    cache: Path | None
    #: worker processes of the scan itself (0: one per CPU)
    scan_jobs: int
    #: where the scan's temporary folder goes (the estate's output for local runs; None: the system's)
    tmp_root: Path | None = None


@dataclass
class PackageOut:
    """One package a task made: its folder name, identity, and files (name → bytes)."""

    dir: str
    service_id: str
    kind: str
    status: str
    scan_id: str
    files: dict[str, bytes] = field(repr=False)


@dataclass
class RepoOutcome:
    """What became of one repository: ``scanned``, ``reused`` or ``failed`` (with ``message``)."""

    name: str
    status: str
    commit: str | None = None
    repo_id: str | None = None
    key: str | None = None
    packages: list[dict[str, str]] = field(default_factory=list)
    message: str | None = None
    seconds: float = 0.0


@dataclass
class EstateResult:
    """An estate scan's outcomes, in the estate file's order, and where its state was written."""

    out: Path
    repositories: list[RepoOutcome]
    #: repositories an earlier run scanned that the estate file no longer lists: their packages removed
    dropped: list[str] = field(default_factory=list)

    @property
    def failed(self) -> list[RepoOutcome]:
        return [r for r in self.repositories if r.status == "failed"]

    def as_json(self) -> dict[str, Any]:
        """The result as a JSON-ready dict (what ``--json`` prints)."""
        return {"out": str(self.out), "repositories": [asdict(r) for r in self.repositories], "dropped": self.dropped}


# ------------------------------------------------------------------ reuse
def reuse_key(repo: RepoSpec, commit: str, repo_id: str, rule_files: list[dict[str, str]]) -> str:
    """sha256 over everything that decides a repository's packages: the commit, the repository id,
    every scan option, the bytes of the files the options name, the rule files (``rule_files``:
    ``[{path, sha256}]`` of shipped and extra rules), the versions of the libraries that shape a
    package and diting's source. Raises :class:`UserError` when a file the options name cannot be read."""
    from diting.scan.kept import code_digest
    from diting.scan.package import tool_versions
    from diting.userfiles import read_user_file
    options = _scan_options(repo)
    named = {what: options.pop(what) for what in ("config_snapshot", "inventory")}
    files = {what: sha256_hex(read_user_file(p, what.replace("_", " "))) if p else None for what, p in named.items()}
    options["services"] = sorted(options["services"])
    options.setdefault("max_file_bytes", None)
    return sha256_hex(dumps({"commit": commit, "repo_id": repo_id, **options, "files": files, "rules": rule_files,
                             "tools": tool_versions(), "code": code_digest()}))


def _scan_options(repo: RepoSpec) -> dict[str, Any]:
    """The scan options the estate file gives ``repo``, as :class:`~diting.scan.options.ScanOptions`
    takes them (what the reuse key digests and the scan is given: one list, so neither can miss one)."""
    options: dict[str, Any] = {
        "services": list(repo.services), "profiles": list(repo.profiles) if repo.profiles is not None else None,
        "inventory": repo.inventory, "config_snapshot": repo.config_snapshot, "sql_dialects": list(repo.sql_dialects),
        "config_dirs": list(repo.config_dirs)}
    if repo.max_file_bytes is not None:
        options["max_file_bytes"] = repo.max_file_bytes
    return options


def manifest_bytes(pkg: Path) -> bytes | None:
    """The bytes of the package folder ``pkg``'s manifest, or None when it is no bounded regular file."""
    from diting.userfiles import read_regular
    return read_regular(pkg / "manifest.json", 16 * 1024 * 1024)


def _reusable(prev: dict[str, Any] | None, key: str, folder: Path) -> bool:
    """Whether the state's entry ``prev`` of a repository has ``key`` and every package it lists is on
    disk with the manifest it recorded."""
    if not prev or prev.get("status") == "failed" or prev.get("key") != key:
        return False
    for p in prev.get("packages", []):
        data = manifest_bytes(folder / p["dir"])
        if data is None or sha256_hex(data) != p.get("manifest_sha256"):
            return False
    return True


# ------------------------------------------------------------------ the task
def scan_repository(task: ScanTask) -> RepoOutcome | tuple[RepoOutcome, list[PackageOut]]:
    """Scan one repository into a private temporary folder and return its outcome with the packages'
    bytes (run in this process, a local worker or a Dask worker). Never raises for the repository's
    own faults: a :class:`UserError` or any other exception becomes a ``failed`` outcome."""
    from diting.scan.pipeline import ScanOptions, scan
    repo, started = task.repo, time.monotonic()
    outcome = RepoOutcome(repo.name, "failed", task.commit, task.repo_id, task.key)
    try:
        with tempfile.TemporaryDirectory(prefix=TMP_PREFIX, dir=task.tmp_root) as tmp:
            opts = ScanOptions(out=Path(tmp), repo_id=task.repo_id, jobs=task.scan_jobs, rules_dirs=list(task.rules),
                               quiet=True, cache=task.cache, **_scan_options(repo))
            result = scan(repo.path, task.commit, opts)
            packages = [PackageOut(p.path.name, p.service_id, p.kind, p.status, p.scan_id,
                                   {f.name: f.read_bytes() for f in sorted(p.path.iterdir()) if f.is_file()})
                        for p in result.packages]
    except UserError as exc:
        outcome.message = exc.message
    except Exception as exc:  # a defect of diting on this repository: reported, the others go on
        where = traceback.extract_tb(exc.__traceback__)[-1]
        outcome.message = (f"internal error {type(exc).__name__}: {exc} (at {Path(where.filename).name}:"
                           f"{where.lineno}); please report it")
    else:
        outcome.status = "scanned"
    outcome.seconds = round(time.monotonic() - started, 3)
    return (outcome, packages) if outcome.status == "scanned" else outcome


# ------------------------------------------------------------------ the client
def scan_estate(spec: EstateSpec, out: Path, cache: Path | None = None, jobs: int = 1,
                scheduler: str | None = None, progress: Callable[[RepoOutcome], None] | None = None,
                only: list[str] | None = None, rescan: bool = False) -> EstateResult:
    """Scan the repositories of ``spec`` (``only``: those names) into ``out`` (see the module
    docstring). ``jobs``: repositories scanned at once in local processes (1: one after another,
    each scan using every CPU); ``scheduler``: the address of a Dask distributed scheduler instead.
    ``progress`` is called with each outcome as it is known; ``rescan`` scans every repository even
    when its packages could be reused. A run over the whole file (no ``only``) removes the packages of
    repositories an earlier run scanned that the file no longer lists, and records their ids in the
    state (``dropped``) for ``estate graph`` to retire.

    Raises :class:`UserError` for an unusable ``out`` or ``cache``, another estate scan holding
    ``out``, an unknown name in ``only``, a missing ``distributed`` package or an unreachable
    scheduler. A repository that cannot be opened or scanned is a ``failed`` outcome, not an error."""
    from diting.ir.writer import refuse_inside_package
    refuse_inside_package(out, "--out")
    names = {r.name for r in spec.repositories}
    unknown = sorted(set(only or []) - names)
    if unknown:
        raise UserError(f"--repo {', '.join(unknown)}: not in the estate file (names: {', '.join(sorted(names))})")
    repos = [r for r in spec.repositories if not only or r.name in only]
    client = _client(scheduler) if scheduler else None  # an unreachable scheduler: refused before --out is made
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"--out {out}: cannot create the folder ({exc.strerror or exc})") from None
    with locked(out), (client or contextlib.nullcontext()):
        for left in out.glob(TMP_PREFIX + "*"):  # a killed run's (the lock says no run is going on)
            if left.is_dir() and not left.is_symlink():
                shutil.rmtree(left, ignore_errors=True)
        state = _load_state(out)
        dropped = [] if only else _drop(out, state, names)
        outcomes: dict[str, RepoOutcome] = {}
        tasks = _tasks(spec, repos, out, state, cache, 2 if scheduler else jobs, outcomes, progress, rescan,
                       scheduler=client is not None)

        def done(result: RepoOutcome | tuple[RepoOutcome, list[PackageOut]]) -> None:
            outcome = _write(out, result, state)
            outcomes[outcome.name] = outcome
            _save_state(out, state)
            if progress:
                progress(outcome)

        if tasks:
            if client is not None:
                _on_dask(client, tasks, done)
            elif jobs > 1 and len(tasks) > 1:
                from diting.workers import worker_pool
                with worker_pool(min(jobs, len(tasks))) as pool:
                    futures = [pool.submit(scan_repository, t) for t in tasks]
                    for fut in as_completed(futures):
                        done(fut.result())
            else:
                for t in tasks:
                    done(scan_repository(t))
        _save_state(out, state)
    return EstateResult(out, [outcomes[r.name] for r in repos], dropped)


def _drop(out: Path, state: dict[str, Any], names: set[str]) -> list[str]:
    """Remove the packages of the repositories the state holds and the estate file no longer lists;
    move their entries to the state's ``dropped`` (name → repository id). Returns their names."""
    gone = sorted(set(state["repositories"]) - names)
    dropped = state["dropped"]
    for name in gone:
        entry = state["repositories"].pop(name)
        _remove_packages(out / name, entry.get("packages", []), keep=set())
        dropped[name] = entry.get("repo_id")
    for name in names:
        dropped.pop(name, None)
    if gone:
        _save_state(out, state)
    return gone


def _remove_packages(folder: Path, packages: list[dict[str, Any]], keep: set[str]) -> None:
    """Remove the package folders ``packages`` lists under ``folder`` but those named in ``keep``: only
    plain names of folders that hold a manifest, never through a link."""
    from diting.ir.writer import holds_manifest
    for p in packages:
        name = p["dir"]
        if not _plain_name(name) or name in keep:
            continue
        stale = folder / name
        if not stale.is_symlink() and not folder.is_symlink() and holds_manifest(stale):
            shutil.rmtree(stale, ignore_errors=True)


def _tasks(spec: EstateSpec, repos: list[RepoSpec], out: Path, state: dict[str, Any], cache: Path | None,
           jobs: int, outcomes: dict[str, RepoOutcome], progress, rescan: bool = False,
           scheduler: bool = False) -> list[ScanTask]:
    """The scan tasks of the repositories that changed; the others' outcomes (reused, or failed to
    open) are put into ``outcomes`` at once."""
    from diting.rules import load_rules
    from diting.source.git import GitRepo, default_repo_id
    rule_files = [{"path": f.path, "sha256": f.sha256}
                  for f in sorted(load_rules(list(spec.rules)).files, key=lambda f: (f.path, f.sha256))]
    if cache is not None:
        from diting.cache import ScanCache, refuse_overlap
        refuse_overlap(cache, out)
        ScanCache(cache)  # refused now (exit 2) when it cannot be used, before any repository is read
    tasks = []
    for repo in repos:
        started = time.monotonic()
        try:
            with GitRepo(repo.path) as git:
                commit = git.resolve_commit(repo.rev)
                repo_id = repo.repo_id or default_repo_id(git)[0]
            key = reuse_key(repo, commit, repo_id, rule_files)
        except UserError as exc:
            outcome = _failed(state, RepoOutcome(repo.name, "failed", message=exc.message,
                                                 seconds=round(time.monotonic() - started, 3)))
            outcomes[repo.name] = outcome
            if progress:
                progress(outcome)
            continue
        prev = state["repositories"].get(repo.name)
        if not rescan and _reusable(prev, key, out / repo.name):
            outcome = RepoOutcome(repo.name, "reused", commit, repo_id, key,
                                  [dict(p) for p in prev["packages"]], seconds=round(time.monotonic() - started, 3))
            outcomes[repo.name] = outcome
            if progress:
                progress(outcome)
            continue
        tasks.append(ScanTask(repo, commit, repo_id, key, spec.rules, cache, 0 if jobs <= 1 else 1,
                              None if scheduler else out))
    return tasks


def _write(out: Path, result: RepoOutcome | tuple[RepoOutcome, list[PackageOut]],
           state: dict[str, Any]) -> RepoOutcome:
    """Write a task's packages under ``out/NAME`` (each atomically), remove the packages the
    repository's previous scan wrote that this one did not, and record the outcome in ``state``."""
    from diting.ir.writer import write_atomically
    if isinstance(result, RepoOutcome):  # failed: what an earlier scan wrote stays, and says so in the state
        return _failed(state, result)
    outcome, packages = result
    folder = out / outcome.name
    if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
        outcome.status, outcome.message = "failed", f"{folder} is a link or a file, not the repository's folder; " \
            "remove it"
        return _failed(state, outcome)
    try:
        for p in packages:
            write_atomically(folder, p.dir, p.files)
            outcome.packages.append({"dir": p.dir, "service_id": p.service_id, "kind": p.kind, "status": p.status,
                                     "scan_id": p.scan_id, "manifest_sha256": sha256_hex(p.files["manifest.json"])})
    except OSError as exc:
        outcome.status, outcome.message = "failed", f"cannot write into {folder}: {exc.strerror or exc}"
        return _failed(state, outcome)
    prev = state["repositories"].get(outcome.name) or {}
    _remove_packages(folder, prev.get("packages", []), keep={p["dir"] for p in outcome.packages})
    state["repositories"][outcome.name] = {"status": "scanned", "commit": outcome.commit, "repo_id": outcome.repo_id,
                                           "key": outcome.key, "packages": outcome.packages}
    return outcome


def _failed(state: dict[str, Any], outcome: RepoOutcome) -> RepoOutcome:
    """Record a failed ``outcome`` in the state: its entry keeps the packages an earlier scan wrote
    (they stay on disk) and says the last scan failed, and why."""
    state["repositories"].setdefault(outcome.name, {}).update(status="failed", message=outcome.message)
    return outcome


def _client(address: str):
    """A Dask distributed client of the scheduler at ``address``. Raises :class:`UserError` when
    ``distributed`` is not installed or the scheduler cannot be reached in 10 seconds."""
    try:
        from distributed import Client
    except ImportError:
        raise UserError("--scheduler needs Dask distributed: pip install 'diting[cluster]'") from None
    try:
        return Client(address, timeout="10s")
    except Exception as exc:  # noqa: BLE001 - any address the client cannot use is the user's to fix
        raise UserError(f"--scheduler {address!r}: cannot connect ({type(exc).__name__}: "
                        f"{str(exc).splitlines()[0] if str(exc) else 'no answer'})") from None


def _on_dask(client, tasks: list[ScanTask], done: Callable[[Any], None]) -> None:
    """Run ``tasks`` on a Dask distributed client's cluster; ``done`` gets each result as it arrives."""
    from distributed import as_completed as dask_completed
    futures = [client.submit(scan_repository, t, pure=False, key=f"diting-scan-{t.repo.name}-{os.urandom(4).hex()}")
               for t in tasks]
    for fut in dask_completed(futures):
        try:
            result = fut.result()
        except Exception as exc:  # the worker died or the task could not run there
            t = tasks[futures.index(fut)]
            result = RepoOutcome(t.repo.name, "failed", t.commit, t.repo_id, t.key,
                                 message=f"the cluster could not run the scan: {type(exc).__name__}: {exc}")
        done(result)


# ------------------------------------------------------------------ state
def _load_state(out: Path) -> dict[str, Any]:
    """The state of the previous estate scan into ``out`` (empty when there is none, or when it is
    unreadable: everything is then scanned again)."""
    from diting.userfiles import read_regular
    data = read_regular(out / STATE_FILE, 64 * 1024 * 1024)
    try:
        state = json.loads(data) if data else None
    except ValueError:
        state = None
    if not isinstance(state, dict) or state.get("format") != STATE_FORMAT or not isinstance(
            state.get("repositories"), dict):
        return {"format": STATE_FORMAT, "repositories": {}, "dropped": {}}
    # an entry of another shape is forgotten (its repository is scanned again), never trusted
    state["repositories"] = {name: entry for name, entry in state["repositories"].items()
                             if _plain_name(name) and _well_formed(entry)}
    if not isinstance(state.get("dropped"), dict):
        state["dropped"] = {}
    return state


def _well_formed(entry: Any) -> bool:
    """Whether a state entry has the shape this module writes."""
    if not isinstance(entry, dict) or not isinstance(entry.get("packages", []), list):
        return False
    text = ("status", "commit", "repo_id", "key", "message")
    return all(isinstance(entry.get(k), (str, type(None))) for k in text) and all(
        isinstance(p, dict) and _plain_name(p.get("dir")) and all(isinstance(v, str) for v in p.values())
        for p in entry.get("packages", []))


def _save_state(out: Path, state: dict[str, Any]) -> None:
    """Write the state atomically (a killed scan leaves the previous whole state, or this one)."""
    from diting.ir.writer import fsync_path
    fd, tmp = tempfile.mkstemp(prefix=f".{STATE_FILE}.tmp-", dir=out)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(state, fh, indent=1, sort_keys=True)
            fh.write("\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, out / STATE_FILE)
        fsync_path(out)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def locked(out: Path) -> Iterator[None]:
    """Hold ``out``'s estate lock (an estate scan, or ``estate graph`` reading). Raises
    :class:`UserError` when another holds it, or when it cannot be taken."""
    import fcntl
    try:
        fd = os.open(out / LOCK_FILE, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
    except OSError as exc:
        raise UserError(f"--out {out}: cannot take its lock {LOCK_FILE} ({exc.strerror or exc}); remove what is "
                        "in its place") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise UserError(f"{out}: another estate scan (or estate graph) is using it; wait for it to end") from None
        yield
    finally:
        os.close(fd)


def state_packages(out: Path) -> tuple[list[tuple[str, Path]], set[str]]:
    """``(repository name, package folder)`` of every package the state under ``out`` lists (a
    repository whose last scan failed keeps its earlier packages), in name order, and the ids of the
    repositories the estate dropped. A listed folder that is no plain name is passed over. Raises
    :class:`UserError` when ``out`` holds no estate state."""
    require_state(out)
    state = _load_state(out)  # entries of another shape, and folder names that are no plain names, forgotten
    listed = [(name, out / name / p["dir"]) for name, entry in sorted(state["repositories"].items())
              for p in entry.get("packages", [])]
    return listed, {r for r in state["dropped"].values() if isinstance(r, str)}


def require_state(out: Path) -> None:
    """Raise :class:`UserError` when ``out`` holds no estate state."""
    if not (out / STATE_FILE).is_file():
        raise UserError(f"{out}: no {STATE_FILE} here; give the --out folder of 'diting estate scan'")


def _plain_name(name: object) -> bool:
    """Whether ``name`` can be a folder directly below another: no separator, not ``.`` or ``..``."""
    return isinstance(name, str) and name not in ("", ".", "..") and "/" not in name and "\\" not in name \
        and "\0" not in name
