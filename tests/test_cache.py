"""The scan cache (diting/cache.py, docs/scanning.md §14): packages byte-identical with and without it,
entries reused, damaged and planted entries never trusted, a directory that cannot be used refused."""

from __future__ import annotations

import hashlib
import os
import pickle
from pathlib import Path

import pytest

from diting.cache import MAGIC, ScanCache, _digest, cache_key
from diting.errors import UserError
from tests.stagekit import scan_memory
from tests.test_stage_units import FILES


def _tree(out: Path) -> dict[str, str]:
    """Every file below ``out`` by relative path → sha256."""
    return {str(p.relative_to(out)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(out.rglob("*")) if p.is_file()}


def _on_lib(services: dict[str, dict[str, str]]) -> dict[str, str]:
    """:func:`tests.conftest.estate_on_lib` of a one-class library ``shop-lib`` and ``services``."""
    from tests.conftest import estate_on_lib
    return estate_on_lib("shop-lib", {"src/main/java/com/example/lib/Money.java":
                                      "package com.example.lib;\npublic class Money { public long cents; }\n"},
                         services)


def _kept_scan(tmp_path: Path, services: dict[str, dict[str, str]]) -> tuple[Path, str, Path]:
    """A repository of :func:`_on_lib` ``services`` scanned once into ``tmp_path/a`` with the cache
    ``tmp_path/cache``: (repository, commit, cache)."""
    from tests.conftest import make_repo, scan_repo
    repo, sha = make_repo(tmp_path, _on_lib(services))
    cache = tmp_path / "cache"
    scan_repo(repo, tmp_path / "a", cache=cache, jobs=1)
    return repo, sha, cache


def _entries(cache: Path) -> list[Path]:
    return sorted(p for p in (cache / "facts").rglob("*") if p.is_file())


def test_packages_are_byte_identical_cold_warm_and_without_a_cache(tmp_path):
    cache = tmp_path / "cache"
    plain = scan_memory(FILES, tmp_path / "plain")
    cold = scan_memory(FILES, tmp_path / "cold", cache=cache)
    entries = _entries(cache)
    assert len(entries) == 2  # the two Java files that parse (the binary one is not parsed)
    stamps = {p: p.stat().st_mtime_ns for p in entries}
    warm = scan_memory(FILES, tmp_path / "warm", cache=cache)
    assert _tree(tmp_path / "plain") == _tree(tmp_path / "cold") == _tree(tmp_path / "warm")
    assert [p.status for p in plain.packages] == [p.status for p in cold.packages] == [p.status for p in warm.packages]
    assert _entries(cache) == entries  # read, not written again
    assert all(p.stat().st_mtime_ns >= stamps[p] for p in entries)


def test_an_edited_file_gets_a_new_entry_and_the_rest_are_reused(tmp_path):
    cache = tmp_path / "cache"
    scan_memory(FILES, tmp_path / "a", cache=cache)
    before = set(_entries(cache))
    path = "order/src/main/java/com/example/order/Orders.java"
    edited = dict(FILES, **{path: FILES[path].replace("order-created", "order-placed")})
    scan_memory(edited, tmp_path / "b", cache=cache)
    assert len(set(_entries(cache)) - before) == 1
    scan_memory(edited, tmp_path / "c")
    assert _tree(tmp_path / "b") == _tree(tmp_path / "c")


@pytest.mark.parametrize("damage", ["truncate", "flip", "plant", "attribute-path", "other-key", "fifo", "zero"])
def test_a_damaged_or_planted_entry_is_recomputed_never_trusted(tmp_path, damage):
    cache = tmp_path / "cache"
    scan_memory(FILES, tmp_path / "a", cache=cache)
    victim = _entries(cache)[0]
    raw = victim.read_bytes()
    if damage == "truncate":
        victim.write_bytes(raw[: len(raw) // 2])
    elif damage == "flip":
        victim.write_bytes(raw[:-1] + bytes([raw[-1] ^ 1]))
    elif damage == "plant":  # a well-formed entry whose payload would run code when unpickled
        payload = pickle.dumps(os.system)
        victim.write_bytes(MAGIC + _digest(victim.name, payload) + payload)
    elif damage == "attribute-path":  # a name of an allowed module followed as a path to eval: must not run
        marker = tmp_path / "ran"

        def text(t: str) -> bytes:
            b = t.encode()
            return b"X" + len(b).to_bytes(4, "little") + b
        payload = (b"\x80\x04" + text("diting.java.facts") + text("dataclass.__builtins__.get") + b"\x93" +
                   text("eval") + b"\x85R" + text(f"open({str(marker)!r}, 'w').write('x')") + b"\x85R.")
        victim.write_bytes(MAGIC + _digest(victim.name, payload) + payload)
    elif damage == "other-key":  # a valid entry of another file, copied under this key
        other = _entries(cache)[1]
        victim.write_bytes(other.read_bytes())
    elif damage == "fifo":
        victim.unlink()
        os.mkfifo(victim)
    else:  # a link to an endless device
        victim.unlink()
        victim.symlink_to("/dev/zero")
    scan_memory(FILES, tmp_path / "b", cache=cache)
    assert _tree(tmp_path / "a") == _tree(tmp_path / "b")
    assert victim.read_bytes() == raw  # recomputed and written again
    assert not (tmp_path / "ran").exists()


def test_get_and_put_round_trip_and_prune_keeps_the_bound(tmp_path):
    c = ScanCache(tmp_path / "c", max_bytes=1)
    key = cache_key("a", b"b")
    assert c.get("facts", key) is None
    c.put("facts", key, {"x": [1, 2]})
    assert c.get("facts", key) == {"x": [1, 2]}
    assert cache_key("ab", b"") != cache_key("a", b"b")  # parts are length-prefixed
    assert c.prune() == 1 and c.get("facts", key) is None


def test_a_directory_that_cannot_be_used_is_refused(tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("x")
    with pytest.raises(UserError, match="not a directory diting can write"):
        scan_memory(FILES, tmp_path / "out", cache=afile)
    someones = tmp_path / "home"  # --cache ~ by mistake: pruning must never delete a user's files
    someones.mkdir()
    (someones / "notes.txt").write_text("mine")
    with pytest.raises(UserError, match="holds other files and is no diting cache"):
        scan_memory(FILES, tmp_path / "out", cache=someones)
    scan_memory(FILES, tmp_path / "a", cache=tmp_path / "cache")
    pkg = next(p for p in (tmp_path / "a").iterdir() if (p / "manifest.json").is_file())
    with pytest.raises(UserError, match="--cache"):
        scan_memory(FILES, tmp_path / "b", cache=pkg / "c")


def test_pruning_removes_only_the_caches_own_entries(tmp_path):
    c = ScanCache(tmp_path / "c", max_bytes=0)
    c.put("facts", cache_key("x"), [1])
    stray = tmp_path / "c" / "facts" / "ab" / "README"
    stray.parent.mkdir(parents=True, exist_ok=True)
    stray.write_text("not an entry")
    (tmp_path / "c" / "other.txt").write_text("not an entry either")
    assert c.prune() == 1
    assert stray.is_file() and (tmp_path / "c" / "other.txt").is_file() and (tmp_path / "c" / "CACHEDIR.TAG").is_file()


def test_pruning_and_writing_never_follow_a_linked_fan_out_folder(tmp_path):
    c = ScanCache(tmp_path / "c", max_bytes=0)
    key = cache_key("y")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    precious = elsewhere / ("ab" + "0" * 62)
    precious.write_text("precious")
    (tmp_path / "c" / "facts").mkdir()
    (tmp_path / "c" / "facts" / key[:2]).symlink_to(elsewhere)
    c.put("facts", key, [1])
    assert c.get("facts", key) is None and sorted(p.name for p in elsewhere.iterdir()) == [precious.name]
    (tmp_path / "c" / "facts" / "cd").write_text("a file where a folder should be")
    c.prune()
    assert precious.read_text() == "precious"


def test_cache_and_out_must_not_hold_one_another(tmp_path):
    for cache, out in ((tmp_path / "x", tmp_path / "x"), (tmp_path / "y", tmp_path / "y" / "out"),
                       (tmp_path / "z" / "cache", tmp_path / "z")):
        with pytest.raises(UserError, match="one holds the other"):
            scan_memory(FILES, out, cache=cache)


def test_a_cache_hit_is_checked_as_a_parse_is_when_validation_is_on(tmp_path, monkeypatch):
    import diting.scan.sources as sources
    cache = tmp_path / "cache"
    scan_memory(FILES, tmp_path / "a", cache=cache)
    seen: list[str] = []
    monkeypatch.setattr(sources, "VALIDATE", True)
    monkeypatch.setattr(sources, "check_expressions", lambda facts: seen.append(facts.path))
    scan_memory(FILES, tmp_path / "b", cache=cache)
    assert len(seen) == 2


def test_a_package_whose_inputs_did_not_change_is_written_again_from_the_cache_at_a_new_commit(tmp_path, monkeypatch):
    """Two services on a library; the second commit edits one service. With a cache, the other
    service's package (and the library's) is not assembled again, only restamped with the new commit
    — and every package equals a scan of that commit without a cache, byte for byte."""
    import diting.scan.modules as modules
    import diting.scan.package as package
    from tests.conftest import scan_repo
    from tests.estate_changes import commit
    api = ("package com.example.PKG;\nimport org.springframework.web.bind.annotation.*;\n@RestController\n"
           "public class Api {\n  @GetMapping(\"/PATH\")\n  public String get() { return \"ok\"; }\n}\n")
    repo, first, cache = _kept_scan(tmp_path, {
        n: {f"src/main/java/com/example/{n.replace('-', '')}/Api.java": api.replace("PATH", n)}
        for n in ("order-svc", "pay-svc")})
    path = repo / "order-svc/src/main/java/com/example/ordersvc/Api.java"
    path.write_text(path.read_text().replace("/order-svc", "/orders"))
    second = commit(repo)
    assembled: list[str] = []
    real = package.run_stages
    monkeypatch.setattr(package, "run_stages", lambda st, p, pr: (assembled.append(p.plan.service_id), real(st, p, pr)))
    built: list[str] = []
    real_chunk = modules._build_chunk
    monkeypatch.setattr(modules, "_build_chunk", lambda s, m, i, paths: (built.append(m), real_chunk(s, m, i, paths))[1])
    cached = scan_repo(repo, tmp_path / "b", rev=second, cache=cache, jobs=1)
    assert assembled == ["order-svc"]
    assert built == ["order-svc/pom.xml"]  # the other modules' records are read from the cache
    cold = scan_repo(repo, tmp_path / "c", rev=second, jobs=1)
    assert _tree(tmp_path / "b") == _tree(tmp_path / "c")
    assert [(p.service_id, p.scan_id, p.counts) for p in cached.packages] == [
        (p.service_id, p.scan_id, p.counts) for p in cold.packages]
    assert all(second[:12] in p.path.name for p in cached.packages)


@pytest.mark.parametrize("kind", ["package", "module"])
def test_a_kept_entry_of_a_bad_shape_is_computed_again(tmp_path, kind):
    from tests.conftest import scan_repo
    repo, sha, cache = _kept_scan(tmp_path, {"order-svc": {}})
    kept = sorted(p for p in (cache / kind).rglob("*") if p.is_file())
    assert kept
    for p in kept:  # a valid entry of another shape: unpickles, is refused by its shape, never written
        payload = pickle.dumps({"files": {"entities.jsonl": "not bytes"}, "commit": sha, "result": "not records",
                                "markers": ["a", "b"]})
        p.write_bytes(MAGIC + _digest(p.name, payload) + payload)
    scan_repo(repo, tmp_path / "b", cache=cache, jobs=1)
    assert _tree(tmp_path / "a") == _tree(tmp_path / "b")


def test_a_format_only_edit_moves_evidence_and_changes_nothing_else(tmp_path):
    """An EXTERNAL cited from more places than it keeps (MAX_EXTERNAL_EVIDENCE) keeps the same ones
    when a comment moves every line: the diff of the two packages is EVIDENCE_MOVED only."""
    from diting.diff.report import diff
    from diting.ir.builder import MAX_EXTERNAL_EVIDENCE
    from tests.conftest import BOOT_PLUGIN, make_repo, pom, scan_repo
    from tests.estate_changes import commit
    calls = "".join(f"    String m{i}(Object o) {{ return java.util.Objects.toString(o, \"{i}\"); }}\n"
                    for i in range(MAX_EXTERNAL_EVIDENCE * 2))
    src = "package com.ex;\n\npublic class Many {\n" + calls + "}\n"
    repo, first = make_repo(tmp_path, {"pom.xml": pom("many", parent=None, body=BOOT_PLUGIN),
                                       "src/main/java/com/ex/Many.java": src})
    a = scan_repo(repo, tmp_path / "a", rev=first)
    (repo / "src/main/java/com/ex/Many.java").write_text(src.replace("package com.ex;\n", "package com.ex;\n// moved\n"))
    b = scan_repo(repo, tmp_path / "b", rev=commit(repo))
    classes = {c["class"] for c in diff(a.packages[0].path, b.packages[0].path)["changes"]}
    assert classes == {"EVIDENCE_MOVED"}


def _cached_equals_cold(tmp_path, files: dict[str, str], edit, **kw) -> None:
    """Scan ``files`` with a cache, apply ``edit(repo)`` and commit, scan again with the cache and
    without one: the two equal, byte for byte."""
    from tests.conftest import make_repo, scan_repo
    from tests.estate_changes import commit
    repo, first = make_repo(tmp_path, files)
    cache = tmp_path / "cache"
    scan_repo(repo, tmp_path / "a", rev=first, cache=cache, jobs=1, **kw)
    edit(repo)
    second = commit(repo)
    scan_repo(repo, tmp_path / "b", rev=second, cache=cache, jobs=1, **kw)
    scan_repo(repo, tmp_path / "c", rev=second, jobs=1, **kw)
    assert _tree(tmp_path / "b") == _tree(tmp_path / "c")


def test_a_maven_config_change_reaches_every_kept_module(tmp_path):
    """``.mvn/maven.config`` sets user properties every module's model reads (a CI-friendly version),
    also of modules below the root, which do not hold the file."""
    from tests.conftest import BOOT_PLUGIN
    head = '<?xml version="1.0"?>\n<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>'
    files = {".mvn/maven.config": "-Drevision=1.0.0\n",
             "pom.xml": f"{head}<groupId>com.ex</groupId><artifactId>parent</artifactId><version>${{revision}}</version>"
                        "<packaging>pom</packaging><modules><module>svc</module></modules></project>\n",
             "svc/pom.xml": f"{head}<parent><groupId>com.ex</groupId><artifactId>parent</artifactId><version>"
                            f"${{revision}}</version></parent><artifactId>svc</artifactId>{BOOT_PLUGIN}</project>\n",
             "svc/src/main/java/com/ex/App.java": "package com.ex;\n@org.springframework.boot.autoconfigure."
                                                  "SpringBootApplication\npublic class App { public static void "
                                                  "main(String[] a) { } }\n"}

    def bump(repo):
        (repo / ".mvn/maven.config").write_text("-Drevision=2.0.0\n")
    _cached_equals_cold(tmp_path, files, bump)


def test_an_old_commit_id_in_text_from_outside_the_repository_is_never_replaced(tmp_path):
    """The repository id (like a config snapshot or an inventory) may hold any text, the id of the
    commit a kept entry was made at too: such an entry is not used."""
    from tests.conftest import make_repo
    from tests.test_estate_scan import _shop
    files = _shop("shop", {"order-svc": "/a", "pay-svc": "/b"})
    from diting.demo import _git
    probe, first = make_repo(tmp_path / "probe", files)  # the same files commit to the same id
    del probe

    def edit(repo):
        p = repo / "order-svc/src/main/java/com/example/ordersvc/Api.java"
        p.write_text(p.read_text().replace('"/a"', '"/a2"'))
    _cached_equals_cold(tmp_path, files, edit, repo_id=f"example.com/build-{first}")
    assert _git(["rev-parse", "HEAD~1"], tmp_path / "repo") == first


def test_a_kept_package_naming_another_file_is_assembled_again(tmp_path):
    """An entry is read back only with a package's own file names: a name such as ``/abs`` or
    ``../x`` is never written (the cache finds damage, not forgery, but writes nowhere else)."""
    from tests.conftest import scan_repo
    repo, sha, cache = _kept_scan(tmp_path, {"order-svc": {}})
    for p in sorted(p for p in (cache / "package").rglob("*") if p.is_file()):
        entry = pickle.loads(p.read_bytes()[len(MAGIC) + 32:])
        entry["files"][str(tmp_path / "planted")] = b"x"
        entry["files"]["../escaped"] = b"x"
        payload = pickle.dumps(entry)
        p.write_bytes(MAGIC + _digest(p.name, payload) + payload)
    scan_repo(repo, tmp_path / "b", cache=cache, jobs=1)
    assert _tree(tmp_path / "a") == _tree(tmp_path / "b")
    assert not (tmp_path / "planted").exists() and not (tmp_path / "b" / "escaped").exists()


def test_config_sources_the_probes_read_stay_in_a_kept_packages_analysis_input(tmp_path):
    """A ``@PropertySource`` file is found by the probes, after the package's key is made: the
    analysis input is written after them, and a kept package keeps the one it was written with."""
    import json
    conf = ("package com.example.PKG;\n@org.springframework.context.annotation.Configuration\n"
            "@org.springframework.context.annotation.PropertySource(\"classpath:extra.properties\")\n"
            "public class Conf { }\n")
    files = _on_lib({"order-svc": {"src/main/java/com/example/ordersvc/Conf.java": conf,
                                   "src/main/resources/extra.properties": "order.limit=5\n"},
                     "pay-svc": {"src/main/java/com/example/paysvc/Pay.java":
                                 "package com.example.paysvc;\npublic class Pay { }\n"}})

    def edit(repo):
        p = repo / "pay-svc/src/main/java/com/example/paysvc/Pay.java"
        p.write_text(p.read_text().replace("Pay { }", "Pay { int n; }"))
    _cached_equals_cold(tmp_path, files, edit)
    ai = json.loads(next((tmp_path / "b").glob("order-svc@*/analysis_input.json")).read_text())
    assert "order-svc/src/main/resources/extra.properties" in [c["path"] for c in ai["config_files"]]


@pytest.mark.parametrize("delay", [0.4, 1.2, 2.5])
def test_a_scan_killed_while_it_fills_the_cache_leaves_a_cache_the_next_scan_can_trust(estate, tmp_path, delay):
    """SIGKILL at some point of a scan that writes file facts, module records and packages into the
    cache: the next scan with that cache writes the packages a scan without one writes."""
    import signal
    import subprocess
    import sys
    import time
    repo, sha = estate
    cache = tmp_path / "cache"
    args = [sys.executable, "-m", "diting", "scan", str(repo), "--commit", sha, "--repo-id", "fixtures/estate",
            "--quiet", "--cache", str(cache)]
    proc = subprocess.Popen(args + ["--out", str(tmp_path / "killed")], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    time.sleep(delay)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    after = subprocess.run(args + ["--out", str(tmp_path / "after")], capture_output=True, text=True)
    cold = subprocess.run(args[:-2] + ["--no-cache", "--out", str(tmp_path / "cold")], capture_output=True, text=True)
    assert after.returncode == 0 and cold.returncode == 0, after.stderr + cold.stderr
    assert _tree(tmp_path / "after") == _tree(tmp_path / "cold")


def test_the_cache_is_pruned_to_its_bound_after_the_packages_are_written(tmp_path, monkeypatch):
    """Kept packages and module records are written after the files are read: a scan ends with the
    cache at its bound, not above it."""
    import diting.cache as cache_mod
    from tests.conftest import make_repo, scan_repo
    repo, _ = make_repo(tmp_path, _on_lib({"order-svc": {}, "pay-svc": {}}))

    def entries(cache):
        return [p for p in cache.rglob("*") if p.is_file() and p.name != "CACHEDIR.TAG"]
    scan_repo(repo, tmp_path / "a", cache=tmp_path / "whole", jobs=1)
    bound = sum(p.stat().st_size for p in entries(tmp_path / "whole")) // 2
    monkeypatch.setattr(cache_mod.ScanCache.opened.__func__, "__defaults__", (bound,))
    scan_repo(repo, tmp_path / "b", cache=tmp_path / "cache", jobs=1)
    kept = entries(tmp_path / "cache")
    assert kept and sum(p.stat().st_size for p in kept) <= bound
