"""Shared test helpers: fixture repositories built with git, scans, and the CLI."""

from __future__ import annotations

import os

# every record a test scan builds is validated against its model as it is added
os.environ["DITING_VALIDATE"] = "1"
# a scan's default cache (docs/scanning.md §14) lives in this session's own folder, never the user's
import tempfile  # noqa: E402

_CACHE_HOME = tempfile.mkdtemp(prefix="diting-test-cache-")
os.environ["XDG_CACHE_HOME"] = _CACHE_HOME
import subprocess
import sys
from pathlib import Path

import pytest

import diting.scan.pipeline as _pipeline
from diting.demo import build_fixture_repo, commit_tree

sys.path.insert(0, str(Path(__file__).resolve().parent))
import coverage_recount  # noqa: E402


def _recounted(original):
    """``scan`` that recounts every package it writes from the package's records (and git) and
    fails on any difference from its coverage.json: every fixture any test scans checks docs/coverage.md §5's
    "every term is counted from the records" (tests/coverage_recount.py)."""
    def wrapper(repo, rev, options, *a, **kw):
        result = original(repo, rev, options, *a, **kw)
        pkgs = getattr(result, "packages", [])
        dirs = coverage_recount.module_dirs_of([Path(p.path) for p in pkgs])
        for pkg in pkgs:
            coverage_recount.check(Path(pkg.path), Path(repo), dirs)
            RECOUNTED.append(pkg.path)
        return result
    wrapper.__doc__ = original.__doc__
    return wrapper


#: every package the recount checked in this session
RECOUNTED: list = []


def pytest_sessionfinish(session, exitstatus) -> None:
    import shutil
    shutil.rmtree(_CACHE_HOME, ignore_errors=True)
    for _, home in _REAL_SCANS.values():
        shutil.rmtree(home, ignore_errors=True)
    if hasattr(session.config, "workeroutput"):  # a pytest-xdist worker: its recounts go to the controller
        session.config.workeroutput["recounted"] = len(RECOUNTED)


class _WorkerRecounts:
    """pytest-xdist's controller: add up the recounts of its workers (``-n``, pyproject.toml)."""

    @staticmethod
    def pytest_testnodedown(node, error) -> None:
        RECOUNTED.extend([None] * getattr(node, "workeroutput", {}).get("recounted", 0))


def pytest_configure(config) -> None:
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_WorkerRecounts(), "diting-worker-recounts")


def pytest_terminal_summary(terminalreporter) -> None:
    terminalreporter.write_line(f"coverage recount: {len(RECOUNTED)} package(s) recounted from their records, "
                                "all equal to their coverage.json")


_pipeline.scan = _recounted(_pipeline.scan)
from diting.scan.pipeline import ScanOptions, scan  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]

#: (repository, commit, options but --out) → the packages of its first scan in this session
_REAL_SCANS: dict[tuple[str, str, str], tuple[object, Path]] = {}


def scan_real(repo: Path, commit: str, options: ScanOptions):
    """``scan`` of a public mirror at a pinned full commit, done once per session: a later call with the
    same repository, commit and options (``--out`` aside) gets a copy of the first scan's packages in
    its own ``--out`` (a test may write there), and the result with its paths. The real estates are
    the slowest scans of the suite (every record validated, every package recounted)."""
    import copy
    import dataclasses
    import shutil
    import tempfile
    key = (str(Path(repo).resolve()), commit, repr(dataclasses.replace(options, out=Path("-"))))
    if key not in _REAL_SCANS:
        home = Path(tempfile.mkdtemp(prefix="diting-real-"))
        _REAL_SCANS[key] = (scan(repo, commit, dataclasses.replace(options, out=home)), home)
    result, home = _REAL_SCANS[key]
    shutil.copytree(home, options.out, dirs_exist_ok=True)
    out = copy.deepcopy(result)
    for p in out.packages:
        p.path = Path(options.out) / Path(p.path).relative_to(home)
    return out


def make_repo(tmp_path: Path, files: dict[str, bytes | str], name: str = "repo",
              symlinks: dict[str, str] | None = None) -> tuple[Path, str]:
    """A git repository holding ``files`` (path → content) committed deterministically."""
    src = tmp_path / f"{name}-src"
    for rel, content in files.items():
        p = src / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    for rel, target in (symlinks or {}).items():
        p = src / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, p)
    dest = tmp_path / name
    sha = commit_tree(src, dest)
    return dest, sha


def pom(artifact: str, *, parent: str | None = "shop-parent", packaging: str = "jar", body: str = "",
        group: str = "com.example") -> str:
    """A small pom.xml."""
    par = (f"<parent><groupId>{group}</groupId><artifactId>{parent}</artifactId><version>1.0</version></parent>"
           if parent else f"<groupId>{group}</groupId><version>1.0</version>")
    return (f'<?xml version="1.0"?>\n<project xmlns="http://maven.apache.org/POM/4.0.0">\n'
            f"<modelVersion>4.0.0</modelVersion>\n{par}\n<artifactId>{artifact}</artifactId>\n"
            f"<packaging>{packaging}</packaging>\n{body}\n</project>\n")


BOOT_PLUGIN = ("<build><plugins><plugin><groupId>org.springframework.boot</groupId>"
               "<artifactId>spring-boot-maven-plugin</artifactId></plugin></plugins></build>")


def boot_module(name: str, deps: str, files: dict[str, str]) -> dict[str, str]:
    """The files of a Spring Boot service module ``name``: its pom (``deps`` XML before the boot
    plugin), an application class in ``com.example.{name without dashes}``, and ``files`` below the
    module (``PKG`` in them stands for that package)."""
    pkg = name.replace("-", "")
    out = {f"{name}/pom.xml": pom(name, body=deps + BOOT_PLUGIN),
           f"{name}/src/main/java/com/example/{pkg}/App.java":
               f"package com.example.{pkg};\n@org.springframework.boot.autoconfigure.SpringBootApplication\n"
               "public class App { public static void main(String[] a) { } }\n"}
    out.update({f"{name}/{k}": v.replace("PKG", pkg) for k, v in files.items()})
    return out


def estate_on_lib(lib: str, lib_files: dict[str, str], services: dict[str, dict[str, str]]) -> dict[str, str]:
    """A reactor ``shop-parent`` of the library module ``lib`` (``lib_files`` below it, its pom
    added) and one :func:`boot_module` per service (name → its files), each depending on the library."""
    dep = (f"<dependencies><dependency><groupId>com.example</groupId><artifactId>{lib}</artifactId>"
           "<version>1.0</version></dependency></dependencies>")
    modules = "".join(f"<module>{m}</module>" for m in [lib, *services])
    out = {"pom.xml": pom("shop-parent", parent=None, packaging="pom", body=f"<modules>{modules}</modules>"),
           f"{lib}/pom.xml": pom(lib)}
    out.update({f"{lib}/{k}": v for k, v in lib_files.items()})
    for name, files in services.items():
        out.update(boot_module(name, dep, files))
    return out


def scan_repo(repo: Path, out: Path, rev: str = "HEAD", **kw) -> "object":
    kw.setdefault("quiet", True)
    kw.setdefault("repo_id", "test/repo")
    return scan(repo, rev, ScanOptions(out=out, **kw))


def run_cli(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Run ``python -m diting ARGS`` in a subprocess (real exit codes and stderr)."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "diting", *args], cwd=cwd, env=full_env,
                          capture_output=True, text=True)


@pytest.fixture(scope="session")
def estate(tmp_path_factory) -> tuple[Path, str]:
    """The bundled fixture estate as a git repository: (path, commit sha)."""
    dest = tmp_path_factory.mktemp("estate") / "repo"
    sha = build_fixture_repo(dest)
    return dest, sha


@pytest.fixture(scope="session")
def estate_scan(estate, tmp_path_factory):
    """The estate scanned once: (ScanResult, output dir)."""
    repo, sha = estate
    out = tmp_path_factory.mktemp("estate-ir")
    result = scan(repo, sha, ScanOptions(out=out, repo_id="fixtures/estate", quiet=True))
    return result, out


#: a Spring Boot application with two classes of one simple name in two packages (call-graph tests)
SHOP_FILES = {
    "pom.xml": pom("shop", parent=None, body=BOOT_PLUGIN),
    "src/main/java/com/ex/App.java": "package com.ex;\n@org.springframework.boot.autoconfigure.SpringBootApplication\n"
    "public class App { public static void main(String[] a) { } }\n",
    "src/main/java/com/ex/a/Order.java": "package com.ex.a;\npublic class Order { public long id; }\n",
    "src/main/java/com/ex/b/Order.java": "package com.ex.b;\npublic class Order { public String no; }\n",
}
