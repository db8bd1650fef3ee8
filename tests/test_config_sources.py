"""Service identity and config sources (issue 18): unique ids for copied projects, remote-config
layouts, Spring Cloud Config native backends, profile expansion, config imports, and values that
beat code defaults — each on a small repository built in the test."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import BOOT_PLUGIN, make_repo, pom, scan_repo

RES = "src/main/resources"
APP = ("package com.example;\n@org.springframework.boot.autoconfigure.SpringBootApplication\n"
       "public class App { public static void main(String[] a) { } }\n")


def _service(d: str, artifact: str, extra: dict[str, str] | None = None, body: str = BOOT_PLUGIN,
             group: str = "com.example") -> dict[str, str]:
    """A deployable module in folder ``d`` (its own reactor)."""
    files = {f"{d}/pom.xml": pom(artifact, parent=None, body=body, group=group),
             f"{d}/src/main/java/com/example/App.java": APP}
    files.update({f"{d}/{k}": v for k, v in (extra or {}).items()})
    return files


def _ids(result) -> list[str]:
    return sorted(p.service_id for p in result.packages if p.kind == "SERVICE")


def test_colliding_coordinates_in_copied_projects_get_unique_ids_by_module_path(tmp_path):
    name = {f"{RES}/application.properties": "spring.application.name=currency-conversion\n"}
    files = {}
    for d in ("03.micro/conv", "04.docker/conv", "05.k8s/conv"):
        files.update(_service(d, "conv-service", name))
    files.update(_service("06.other/conv", "conv-other", name))
    files.update(_service("07.solo/x", "solo", {f"{RES}/application.properties": "spring.application.name=solo\n"}))
    repo, sha = make_repo(tmp_path, files)
    first = _ids(scan_repo(repo, tmp_path / "o1", sha))
    assert first == ["currency-conversion~03.micro.conv", "currency-conversion~04.docker.conv",
                     "currency-conversion~05.k8s.conv", "currency-conversion~conv-other", "solo"]
    assert _ids(scan_repo(repo, tmp_path / "o2", sha, jobs=1)) == first       # deterministic
