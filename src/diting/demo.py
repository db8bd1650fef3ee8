"""The bundled fixture estate: building it into a git repository and ``diting demo``.

The fixture sources live in ``fixtures/estate`` (shipped in the wheel as
``diting/_fixtures/estate``). :func:`build_fixture_repo` commits them with a
fixed author, committer, date, time zone and line-ending setting, so the
commit SHA is the same on every machine.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path

from diting.errors import UserError
from diting.ir.canonical import READ_JSONL_OPTIONS
from diting.ir.canonical import loads as json_loads
from diting.interrupts import import_native

#: fixed identity and time of the fixture commits (git's own plumbing, our own files)
FIXTURE_ENV = {
    "GIT_AUTHOR_NAME": "diting fixtures",
    "GIT_AUTHOR_EMAIL": "fixtures@diting.invalid",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00+0000",
    "GIT_COMMITTER_NAME": "diting fixtures",
    "GIT_COMMITTER_EMAIL": "fixtures@diting.invalid",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00+0000",
    "TZ": "UTC",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
}


def fixtures_dir() -> Path:
    """The fixture sources (source checkout ``fixtures/`` or the installed ``diting/_fixtures``)."""
    here = Path(__file__).resolve().parent
    for cand in (here / "_fixtures", here.parent.parent / "fixtures"):
        if (cand / "estate").is_dir():
            return cand
    raise UserError("the bundled fixture estate is missing from this installation")


def _git(args: list[str], cwd: Path) -> str:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.devnull, "LC_ALL": "C", **FIXTURE_ENV}
    proc = subprocess.run(["git", "-c", "core.autocrlf=false", "-c", "core.fileMode=false",
                           "-c", "init.defaultBranch=main", "-c", "core.hooksPath=" + os.devnull,
                           "-c", "core.fsmonitor=false", *args], cwd=cwd, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        raise UserError(f"git {args[0]} failed while building a fixture repository: "
                        f"{proc.stderr.decode('utf-8', 'replace').strip()}")
    return proc.stdout.decode("utf-8", "replace").strip()


#: files at a fixture's root that describe the fixture and are not part of its repository
FIXTURE_META = frozenset({"expected.json"})


def commit_tree(src: Path, dest: Path, message: str = "fixture estate") -> str:
    """Copy ``src`` into a new repository at ``dest`` (which must not exist) and commit it
    deterministically. Returns the commit SHA. The answer key of a fixture
    (:data:`FIXTURE_META` at its root) stays out of the repository, so editing it never
    changes the commit."""
    if dest.exists():
        raise UserError(f"{dest} already exists")
    for p in src.rglob("*"):
        if p.name.lower() == ".git":  # a copied .git would bring its own config (fsmonitor, filters, hooks)
            raise UserError(f"{p.relative_to(src)}: a fixture may not contain a .git entry")
    root = src.resolve()
    if root in dest.absolute().parents:
        raise UserError(f"{dest} is inside the fixture sources {src}; build the repository elsewhere")
    try:
        shutil.copytree(src, dest, symlinks=True,
                        ignore=lambda d, names: [n for n in names if Path(d).resolve() == root and n in FIXTURE_META])
    except shutil.Error as exc:  # one line per failed file: name the first
        first = exc.args[0][0] if exc.args and exc.args[0] else ("?", "?", str(exc))
        raise UserError(f"copying the fixture into {dest} failed ({len(exc.args[0])} file(s)), first: "
                        f"{first[0]}: {first[2]}") from None
    except OSError as exc:
        raise UserError(f"copying the fixture into {dest} failed: {exc.strerror or exc}") from None
    _git(["init", "-q"], dest)
    (dest / ".git" / "info").mkdir(parents=True, exist_ok=True)
    (dest / ".git" / "info" / "attributes").write_text("* -text\n", encoding="ascii")
    _git(["add", "-A"], dest)
    _git(["commit", "-q", "--no-gpg-sign", "--no-verify", "-m", message], dest)
    return _git(["rev-parse", "HEAD"], dest)


def build_fixture_repo(dest: Path, name: str = "estate") -> str:
    """Build the fixture ``name`` into a git repository at ``dest``; returns the commit SHA."""
    src = fixtures_dir() / name
    if not src.is_dir():
        raise UserError(f"no fixture named {name!r}")
    return commit_tree(src, dest)


DEMO_MARKER = ".diting-demo"
#: characters a DuckDB glob cannot take literally (the others are escaped as ``[c]``)
_GLOB_UNSAFE = "\\"


def _mounts_inside(real: Path) -> list[str]:
    """Mount points at or below ``real`` (a resolved path): from ``/proc/self/mountinfo`` where it
    exists (bind mounts on one file system included), else by walking for ``os.path.ismount``."""
    info = Path("/proc/self/mountinfo")
    try:
        lines = info.read_text(encoding="utf-8", errors="replace").splitlines() if info.exists() else None
    except OSError:
        lines = None
    if lines is None:
        return [os.path.join(r, d) for r, ds, _ in os.walk(real) for d in ds if os.path.ismount(os.path.join(r, d))]
    out = []
    for line in lines:
        fields = line.split(" ")
        if len(fields) > 4:  # field 5: the mount point, with space, tab, newline, backslash octal-escaped
            mp = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), fields[4])
            if Path(mp) == real or real in Path(mp).parents:
                out.append(mp)
    return sorted(out)


def _user_error(workdir: Path, exc: OSError) -> UserError:
    return UserError(f"cannot prepare the demo directory {workdir}: {exc.strerror or exc}")


def check_workdir(workdir: Path) -> Path:
    """The resolved ``workdir`` if a demo may use it; nothing is created or changed. Refused with a
    :class:`UserError` (one clear message): a path with a backslash (DuckDB's glob cannot read it
    literally), a symbolic link, the current directory or one of its parents, a directory inside
    the bundled fixture sources, an existing file or non-demo directory, an old demo directory with
    a mount point inside, and paths the OS refuses."""
    if any(c in str(workdir) for c in _GLOB_UNSAFE):
        raise UserError(f"{workdir}: choose a --workdir without a backslash (the demo's DuckDB queries "
                        "read the packages by path)")
    try:
        if workdir.is_symlink():
            raise UserError(f"{workdir} is a symbolic link; give the directory itself as --workdir")
        real = workdir.resolve()
        cwd = Path.cwd().resolve()
    except OSError as exc:
        raise _user_error(workdir, exc) from None
    if real == cwd or real in cwd.parents:
        raise UserError(f"{workdir} is the current directory or one of its parents; choose another --workdir")
    try:
        fixtures = fixtures_dir().resolve()
    except UserError:
        fixtures = None
    if fixtures is not None and (real == fixtures or fixtures in real.parents):
        raise UserError(f"{workdir} is inside the bundled fixture sources ({fixtures}); choose another --workdir")
    try:
        for parent in real.parents:
            if parent.exists():
                if not parent.is_dir():
                    raise UserError(f"{parent} is not a directory; choose another --workdir")
                break
        if workdir.exists():
            if not workdir.is_dir() or not (workdir / DEMO_MARKER).is_file():
                raise UserError(f"{workdir} exists and is not a diting demo directory; choose another --workdir")
            inside = _mounts_inside(real)
            if inside:
                raise UserError(f"{inside[0]} is a mount point inside the old demo directory; unmount it or "
                                "choose another --workdir")
    except OSError as exc:
        raise _user_error(workdir, exc) from None
    return real


def prepare_workdir(workdir: Path) -> None:
    """Create ``workdir`` for a demo run once :func:`check_workdir` allows it. An earlier demo
    directory is moved aside and then deleted, so an interrupted run never leaves a half-deleted
    directory behind the name. Raises :class:`UserError` for refusals and OS errors."""
    check_workdir(workdir)
    try:
        if workdir.exists():
            aside = workdir.with_name(f".{workdir.name}.old-{os.getpid()}")
            os.rename(workdir, aside)
            shutil.rmtree(aside)
        workdir.mkdir(parents=True)
        (workdir / DEMO_MARKER).write_text("created by diting demo\n", encoding="ascii")
    except OSError as exc:
        raise _user_error(workdir, exc) from None


class DemoLock:
    """An exclusive lock on the work directory's parent for one demo run (``flock``; released
    when the process ends): a second demo on the same parent is refused, not interleaved."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.parent = workdir
        self.fd: int | None = None

    def __enter__(self) -> "DemoLock":
        import fcntl
        self.parent = check_workdir(self.workdir).parent  # refused before anything is created
        try:
            self.parent.mkdir(parents=True, exist_ok=True)
            self.fd = os.open(self.parent, os.O_RDONLY)
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._close()
            raise UserError(f"another diting demo is running in {self.parent}; wait for it to finish") from None
        except OSError as exc:
            self._close()
            raise UserError(f"cannot use {self.parent} for the demo: {exc.strerror or exc}") from None
        return self

    def _close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def __exit__(self, *exc: object) -> None:
        self._close()


# ------------------------------------------------------------------ the demo's summary and queries

#: coverage dimensions the demo shows, in order (docs/coverage.md §2)
DEMO_DIMENSIONS = ("entries", "config_keys", "sql_statements", "call_sites", "branch_ledger", "files")
#: what a dimension counts, where its name says less (config_keys counts one binding per consumer and key)
DEMO_DIMENSION_LABELS = {"config_keys": "config bindings"}


def read_jsonl(path: Path) -> list[dict]:
    """The records of a package's jsonl file (none when the package has no such file). Raises
    :class:`UserError` naming the line that is not JSON."""
    if not path.is_file():
        return []
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line:
            try:
                out.append(json_loads(line))
            except ValueError as exc:
                raise UserError(f"{path}:{n}: not a JSON record ({exc})") from exc
    return out


def package_rows(packages: list) -> tuple[list[str], list[list[str]]]:
    """One row per package: service, why it is one, status, and counts of what it holds."""
    headers = ["package", "deployable because", "status", "entries", "contracts", "topics", "tables", "config keys", "unknowns"]
    rows = []
    for p in packages:
        ents = Counter(e["kind"] for e in read_jsonl(p.path / "entities.jsonl"))
        unknowns = sum(1 for d in read_jsonl(p.path / "diagnostics.jsonl") if d["severity"] != "INFO")
        why = ", ".join(sorted(set(p.basis))) if p.kind == "SERVICE" else "modules outside every service"
        rows.append([p.path.name, why, p.status, *(str(ents[k]) for k in ("ENTRY", "CONTRACT", "TOPIC", "TABLE",
                                                                          "CONFIG_KEY")), str(unknowns)])
    return headers, rows


def coverage_rows(packages: list) -> tuple[list[str], list[list[str]], list[str]]:
    """Per service package, ``resolved/discovered`` (plus partial, failed, excluded when not zero)
    of each of :data:`DEMO_DIMENSIONS`; and the dimensions no service package has examined, with why."""
    headers = ["service", *(DEMO_DIMENSION_LABELS.get(d, d.replace("_", " ")) for d in DEMO_DIMENSIONS)]
    rows = []
    not_examined: dict[str, str] = {}
    examined: set[str] = set()
    for p in packages:
        if p.kind != "SERVICE":
            continue
        dims = json.loads((p.path / "coverage.json").read_text(encoding="utf-8"))["dimensions"]
        cells = []
        for d in DEMO_DIMENSIONS:
            v = dims[d]
            extra = [f"{v[k]} {k}" for k in ("partial", "failed", "excluded") if v[k]]
            cells.append(f"{v['resolved']}/{v['discovered']}" + (f" ({', '.join(extra)})" if extra else ""))
        rows.append([p.service_id, *cells])
        for name, v in dims.items():
            if v["denominator_source"] == "not examined":
                not_examined.setdefault(name, v["not_examined"][0] if v["not_examined"] else "")
            else:
                examined.add(name)
    return headers, rows, [f"{k.replace('_', ' ')}: {v}" for k, v in sorted(not_examined.items())
                           if k not in examined]


def _files(ir: Path, name: str, columns: dict[str, str]) -> str:
    cols = ", ".join(f"{k}: '{v}'" for k, v in columns.items())
    base = "".join(f"[{c}]" if c in "*?[" else c for c in str(ir.resolve()))  # literal in DuckDB's glob
    glob = f"{base}/*/{name}".replace("'", "''")
    return f"read_json('{glob}', {READ_JSONL_OPTIONS}, filename = true, columns = {{{cols}}})"


def example_queries(ir: Path) -> list[tuple[str, str, str]]:
    """``(name, question, DuckDB SQL)`` over the package files under ``ir`` (one directory per package).
    The service of a row is its package directory's name up to ``@``."""
    svc = r"regexp_extract(filename, '([^/\\]+)@[0-9a-f]{12}[^/\\]*[/\\][^/\\]+$', 1)"
    rel = _files(ir, "relations.jsonl", {"kind": "VARCHAR", "target_ref": "JSON", "match_keys": "JSON",
                                        "attributes": "JSON", "resolution_status": "VARCHAR", "source_ref": "JSON"})
    return [
        ("topics", "Who publishes and who subscribes each topic?", f"""\
SELECT replace(target_ref->>'record_id', 'topic:', '') AS topic,
       coalesce(string_agg(DISTINCT {svc}, ', ') FILTER (WHERE kind = 'PUBLISHES'), '-') AS publishers,
       coalesce(string_agg(DISTINCT {svc}, ', ') FILTER (WHERE kind = 'SUBSCRIBES'), '-') AS subscribers
FROM {rel}
WHERE kind IN ('PUBLISHES', 'SUBSCRIBES') AND target_ref IS NOT NULL
GROUP BY ALL ORDER BY topic"""),
        ("unresolved_sends", "Which sends name no topic the code proves (and why)?", f"""\
SELECT {svc} AS service, split_part(source_ref->>'record_id', '/', -1) AS sender,
       match_keys->>'topic_expression' AS topic_expression,
       coalesce(attributes->>'topic_parameter', '-') AS topic_parameter
FROM {rel}
WHERE kind = 'PUBLISHES' AND resolution_status = 'UNRESOLVED'
ORDER BY ALL"""),
        ("table_writers", "Which services write which tables?", f"""\
SELECT replace(target_ref->>'record_id', 'table:table://', '') AS "table",
       string_agg(DISTINCT {svc}, ', ') AS writers, count(*) AS statements
FROM {rel}
WHERE kind = 'WRITES' AND target_ref->>'record_id' LIKE 'table:%'
GROUP BY ALL ORDER BY 1"""),
    ]


def run_query(sql: str) -> tuple[list[str], list[list[str]]]:
    """Run one query on an in-memory DuckDB; returns column names and rows as text."""
    duckdb = import_native("duckdb")
    con = duckdb.connect(":memory:")
    try:
        cur = con.execute(sql)
        headers = [d[0] for d in cur.description]
        return headers, [["-" if v is None else str(v) for v in row] for row in cur.fetchall()]
    finally:
        con.close()


def format_table(headers: list[str], rows: list[list[str]], indent: str = "   ") -> list[str]:
    """Fixed-width text table lines (deterministic, no terminal styling)."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    line = lambda cells: indent + "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()  # noqa: E731
    return [line(headers), line(["-" * w for w in widths]), *(line(r) for r in rows)]
