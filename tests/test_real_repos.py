"""Optional: public repositories, when a local copy exists (DITING_REAL_REPOS, default /work/.mirror).

Each test skips cleanly when its repository is not present.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from diting.ir.verify import verify_package
from diting.scan.pipeline import ScanOptions
from tests.conftest import ROOT, scan_real

BASE = Path(os.environ.get("DITING_REAL_REPOS", "/work/.mirror"))

REPOS = {
    "mall-swarm": ("macrozheng+mall-swarm", "56ed16211a706d34604d272813c5778ecfb7db79", {
        "mall-admin", "mall-auth", "mall-demo", "mall-gateway", "mall-monitor", "mall-portal", "mall-search",
        "lib:mall-swarm"}),
    "pig": ("pig-mesh+pig", "33f42714e32fb403ee924a2b70bf80c14cc35b36", {
        "pig-auth", "pig-boot", "pig-codegen", "pig-gateway", "pig-monitor", "pig-quartz", "pig-register",
        "pig-upms-biz", "lib:pig"}),
}


def _repo(name: str) -> tuple[Path, str, set[str]]:
    folder, sha, services = REPOS[name]
    path = BASE / folder / "repo"
    if not path.is_dir():
        pytest.skip(f"{name} is not present under {BASE}")
    ok = subprocess.run(["git", "-C", str(path), "cat-file", "-e", f"{sha}^{{commit}}"], capture_output=True)
    if ok.returncode != 0:
        pytest.skip(f"{name} does not contain {sha}")
    return path, sha, services


@pytest.mark.realrepo
@pytest.mark.parametrize("name", sorted(REPOS))
def test_real_repository(name, tmp_path):
    path, sha, services = _repo(name)
    repo_id = "github.com/" + REPOS[name][0].replace("+", "/")
    result = scan_real(path, sha, ScanOptions(out=tmp_path, repo_id=repo_id, quiet=True))
    assert {p.service_id for p in result.packages} == services
    for p in result.packages:
        assert verify_package(p.path, deep=True, repo=path) == [], p.service_id
    count = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "count_nodes.py"), str(path), sha,
                            str(tmp_path)], capture_output=True, text=True)
    assert count.returncode == 0, json.loads(count.stdout)["differences"]
