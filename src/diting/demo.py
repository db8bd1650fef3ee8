"""The bundled fixture estate: building it into a git repository and ``diting demo``.

The fixture sources live in ``fixtures/estate`` (shipped in the wheel as
``diting/_fixtures/estate``). :func:`build_fixture_repo` commits them with a
fixed author, committer, date, time zone and line-ending setting, so the
commit SHA is the same on every machine.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from diting.errors import UserError

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


def commit_tree(src: Path, dest: Path, message: str = "fixture estate") -> str:
    """Copy ``src`` into a new repository at ``dest`` (which must not exist) and commit it
    deterministically. Returns the commit SHA."""
    if dest.exists():
        raise UserError(f"{dest} already exists")
    for p in src.rglob("*"):
        if p.name.lower() == ".git":  # a copied .git would bring its own config (fsmonitor, filters, hooks)
            raise UserError(f"{p.relative_to(src)}: a fixture may not contain a .git entry")
    shutil.copytree(src, dest, symlinks=True)
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


def prepare_workdir(workdir: Path) -> None:
    """Create ``workdir`` for a demo run; an earlier demo directory (with its marker) is
    replaced, anything else that exists is refused (never deleted)."""
    if workdir.exists():
        if not (workdir / DEMO_MARKER).is_file():
            raise UserError(f"{workdir} exists and is not a diting demo directory; choose another --workdir")
        shutil.rmtree(workdir)
    workdir.mkdir(parents=True)
    (workdir / DEMO_MARKER).write_text("created by diting demo\n", encoding="ascii")
