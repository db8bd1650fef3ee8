"""source/: git plumbing, text decoding, safe XML, paths."""

from __future__ import annotations

import subprocess
import time

import pytest

from diting.errors import UserError
from diting.source.git import GitRepo, path_from_git, path_to_git, repo_id_from_url
from diting.source.paths import join_inside
from diting.source.text import decode_as, decode_bytes, is_lfs_pointer, split_lines
from diting.source.xmlsafe import element_span, parse_xml
from tests.conftest import make_repo


@pytest.mark.parametrize("url,expected", [
    ("https://github.com/macrozheng/mall-swarm.git", "github.com/macrozheng/mall-swarm"),
    ("https://user:secret@github.com/a/b.git", "github.com/a/b"),
    ("git@github.com:pig-mesh/pig.git", "github.com/pig-mesh/pig"),
    ("ssh://git@code.jd.com:22/trade/order.git", "code.jd.com:22/trade/order"),
    ("/srv/git/repo.git", None),
    ("file:///srv/git/repo.git", None),
    # the query and the fragment may carry a token: neither is part of the id (then .git goes)
    ("https://user@host:8443/p/q.git?token=abc#frag", "host:8443/p/q"),
    ("https://host/p/q.git#frag?token=abc", "host/p/q"),
    ("https://host/p/q?private_token=abc", "host/p/q"),
    ("https://host?token=abc", "host"),
    ("https://host#token=abc", "host"),
    ("git@host:p/q.git?token=abc", "host/p/q"),
    # userinfo, however written: a password holding '@', ':' or '?'; none where the authority is no
    # host[:port] once it is gone (a password with '/' would leave part of itself in the id)
    ("https://u:p@ss@host/p/q.git", "host/p/q"),
    ("https://u:p?ss@host/p/q.git", "host/p/q"),
    ("https://u:p/ss@host/p/q.git", None),
    ("a@b@host:p/q.git", "host/p/q"),
    ("https://oauth2:glpat-x@[2001:db8::1]:8443/p/q.git", "[2001:db8::1]:8443/p/q"),
    # ports as written; ssh:// and scp-like forms; trailing slashes
    ("ssh://host:2222/p/q/", "host:2222/p/q"),
    ("ssh://git@host/~user/q.git", "host/~user/q"),
    ("git://host/p/q.git/", "host/p/q"),
    ("https://host/p/q.git///", "host/p/q"),
    ("https://host/", "host"),
    ("host:p/q", "host/p/q"),
    ("FILE:///srv/git/repo.git", None),
])
def test_repo_id_from_url(url, expected):
    assert repo_id_from_url(url) == expected


def test_git_errors(tmp_path):
    with pytest.raises(UserError, match="does not exist"):
        GitRepo(tmp_path / "nope")
    (tmp_path / "plain").mkdir()
    with pytest.raises(UserError, match="not a git repository"):
        GitRepo(tmp_path / "plain")
    repo, sha = make_repo(tmp_path, {"pom.xml": "<project/>"})
    g = GitRepo(repo)
    assert g.resolve_commit("HEAD") == sha
    assert g.resolve_commit(sha[:10]) == sha
    for bad in ("no-such-branch", "--all", "HEAD\nx", ""):
        with pytest.raises(UserError):
            g.resolve_commit(bad)
    g.close()


def test_ls_tree_and_blobs_come_from_the_object_database(tmp_path):
    repo, sha = make_repo(tmp_path, {"a.txt": "committed\n"})
    (repo / "a.txt").write_text("uncommitted edit\n")
    g = GitRepo(repo)
    entries = g.ls_tree(sha)
    assert [e.path for e in entries] == ["a.txt"]
    assert g.read_blob(entries[0].oid) == b"committed\n"
    g.close()


def test_hooks_and_fsmonitor_never_run(tmp_path):
    repo, sha = make_repo(tmp_path, {"a.txt": "x\n"})
    marker = tmp_path / "ran"
    hook = repo / ".git" / "hooks" / "post-checkout"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\n")
    hook.chmod(0o755)
    subprocess.run(["git", "-C", str(repo), "config", "core.fsmonitor", f"touch {marker}; echo"], check=True)
    g = GitRepo(repo)
    g.resolve_commit("HEAD")
    g.ls_tree(sha)
    g.close()
    assert not marker.exists()


def test_decode_policy():
    assert decode_bytes("订单".encode("utf-8")).encoding == "utf-8"
    bom = decode_bytes(b"\xef\xbb\xbfclass A {}")
    assert bom.text == "class A {}" and bom.bom and bom.encoding == "utf-8"
    gbk = "// 订单状态：已支付，等待发货。买家备注不能为空。\nclass A {}\n".encode("gbk")
    d = decode_bytes(gbk)
    assert d.encoding == "gb18030" and "订单状态" in d.text and not d.lossy
    declared = decode_bytes("// 备注\n".encode("gbk"), "GBK")
    assert declared.encoding == "gbk" and "备注" in declared.text
    latin = "// Ã  bientôt, café crème\nclass A {}\n".encode("latin-1")
    dl = decode_bytes(latin)
    assert "café" in dl.text and not dl.lossy
    utf16 = decode_bytes(b"\xff\xfe" + "class A {}".encode("utf-16-le"))
    assert utf16.text == "class A {}" and utf16.bom


def test_split_lines_keeps_carriage_returns():
    assert split_lines("a\r\nb\r\n") == ["a\r", "b\r"]
    assert split_lines("a\nb") == ["a", "b"]
    assert split_lines("") == [""]


def test_a_lone_cr_ends_a_line_for_the_scanner_and_the_verifier_alike():
    """One rule: lines end at CRLF (its CR kept), a lone CR or LF; decoding makes a lone CR a LF, one
    character for one, in every encoding (UTF-16 too), so offsets stay the file's."""
    assert split_lines("a\rb\r\nc\nd\r") == ["a", "b\r", "c", "d"]
    for enc in ("utf-8", "gb18030", "utf-16-le"):
        raw = "行一\r行二\r\n行三\n".encode(enc)
        bom = {"utf-16-le": b"\xff\xfe"}.get(enc, b"")
        d = decode_bytes(bom + raw)
        assert d.text == "行一\n行二\r\n行三\n"
        assert decode_as(bom + raw, d.encoding) == d.text


def test_lfs_pointer():
    assert is_lfs_pointer(b"version https://git-lfs.github.com/spec/v1\noid sha256:abc\nsize 12\n")
    assert not is_lfs_pointer(b"class A {}")


def test_join_inside_never_leaves_the_tree():
    assert join_inside("a/b", "../c") == "a/c"
    assert join_inside("a", "..") == ""
    assert join_inside("a", "../../etc") is None
    assert join_inside("", "/etc/passwd") is None
    assert join_inside("a", "..\\..\\x") is None
    assert join_inside("a", "C:/x") is None


def test_billion_laughs_is_never_expanded():
    levels = ['<!ENTITY l0 "lol">'] + [f'<!ENTITY l{i} "{("&l" + str(i - 1) + ";") * 10}">' for i in range(1, 10)]
    doc = f'<?xml version="1.0"?>\n<!DOCTYPE p [{"".join(levels)}]>\n<p><a>&l9;</a></p>'.encode()
    start = time.monotonic()
    parsed = parse_xml(doc)
    assert time.monotonic() - start < 5
    # libxml2 refuses the document outright (amplification limit); never is the text expanded
    if parsed.root is None:
        assert "amplification" in (parsed.error or "")
    else:
        assert len(parsed.root[0].text or "") < 100


def test_external_entities_and_dtds_are_never_read(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET")
    doc = (f'<?xml version="1.0"?>\n<!DOCTYPE p SYSTEM "file://{tmp_path}/x.dtd" [\n'
           f'<!ENTITY xxe SYSTEM "file://{secret}">]>\n<p>&xxe;</p>').encode()
    parsed = parse_xml(doc)
    assert parsed.root is not None
    from lxml import etree
    assert "TOP-SECRET" not in etree.tostring(parsed.root).decode()


def test_malformed_xml_reports_a_line():
    parsed = parse_xml(b"<project>\n<a>\n</project>\n")
    assert parsed.root is None and parsed.error and parsed.error_line == 3


def test_a_declaration_after_whitespace_is_read_only_where_the_modelled_reader_accepts_it():
    doc = b'\n<?xml version="1.0" encoding="UTF-8"?>\n<project>\n  <a>x</a>\n</project>\n'
    assert parse_xml(doc).root is None  # XML allows nothing before the declaration
    parsed = parse_xml(doc, declaration_after=1)
    assert parsed.root is not None and parsed.root[0].sourceline == 4  # lines unchanged
    assert parsed.decoded.text.startswith("\n<?xml")
    assert parse_xml(b"\n\n" + doc.lstrip(), declaration_after=1).root is None  # two are too many


def test_element_span_skips_comments_and_nesting():
    text = "<r>\n<a>\n  <a/>\n  <!-- <a> -->\n  <b>x</b>\n</a>\n</r>"
    parsed = parse_xml(text.encode())
    lines = text.split("\n")
    assert element_span(lines, parsed.root[0]) == (2, 6)


def test_element_span_starts_at_the_open_bracket_of_a_multi_line_start_tag():
    """lxml's sourceline is where a start tag ends; evidence must start where it begins."""
    text = '<r>\n<!-- x -->\n<p id="a"\n   alias="b"\n   timeout="1"/>\n<q\n k="v">t\n</q>\n</r>'
    parsed = parse_xml(text.encode())
    lines = text.split("\n")
    assert parsed.root[1].sourceline == 5  # the parser's view
    assert element_span(lines, parsed.root[1]) == (3, 5)
    assert element_span(lines, parsed.root[2]) == (6, 8)


@pytest.mark.parametrize("route", ["ext", "uploadpack"])
def test_a_partial_clone_never_fetches_or_runs_anything(tmp_path, route):
    """A missing blob in a repository configured as a partial clone must not make git fetch it
    through a transport the repository names (which could run an arbitrary command)."""
    repo, sha = make_repo(tmp_path, {"pom.xml": "<project/>", "A.java": "class A {}"})
    canary = tmp_path / "PWNED"
    oid = subprocess.run(["git", "-C", str(repo), "rev-parse", f"{sha}:A.java"], capture_output=True,
                         text=True, check=True).stdout.strip()
    (repo / ".git" / "objects" / oid[:2] / oid[2:]).unlink()
    cfg = [("core.repositoryformatversion", "1"), ("extensions.partialClone", "origin"),
           ("remote.origin.promisor", "true")]
    if route == "ext":
        cfg += [("protocol.ext.allow", "always"), ("remote.origin.url", f"ext::sh -c touch% {canary}")]
    else:
        upstream, _ = make_repo(tmp_path, {"x": "x"}, name="upstream")
        cfg += [("protocol.file.allow", "always"), ("remote.origin.url", str(upstream)),
                ("remote.origin.uploadpack", f"touch {canary}; git-upload-pack")]
    for k, v in cfg:
        subprocess.run(["git", "-C", str(repo), "config", k, v], check=True)
    g = GitRepo(repo)
    entries = g.ls_tree(sha)
    missing = next(e for e in entries if e.path == "A.java")
    assert missing.missing
    with pytest.raises(UserError):
        g.read_blob(missing.oid)
    g.close()
    assert not canary.exists()


def _filtered_clone(tmp_path, files: dict[str, str], filter_spec: str):
    """A bare partial clone of a repository holding ``files``, made by git with ``--filter`` (the
    blobs the filter leaves out are promised by the origin, in a promisor pack's trees): (path, sha)."""
    upstream, sha = make_repo(tmp_path, files, name="upstream")
    clone = tmp_path / "partial.git"
    # upload-pack runs without the client's -c settings: the serving repository allows filters itself
    subprocess.run(["git", "-C", str(upstream), "config", "uploadpack.allowFilter", "true"], check=True)
    subprocess.run(["git", "clone", "-q", "--bare", f"--filter={filter_spec}", f"file://{upstream}", str(clone)],
                   check=True, capture_output=True)
    assert subprocess.run(["git", "-C", str(clone), "config", "remote.origin.promisor"], capture_output=True,
                          text=True, check=True).stdout.strip() == "true"
    return clone, sha


def test_a_blob_filtered_clone_lists_every_entry_and_reads_only_what_is_local(tmp_path):
    """``--filter=blob:none``: every tree is local, no blob is. Listing must not ask for sizes git
    would fetch (``ls-tree -l`` died with "could not fetch … from promisor remote"): every entry is
    listed, each blob missing, and reading one is refused without a fetch."""
    clone, sha = _filtered_clone(tmp_path, {"pom.xml": "<project/>", "src/A.java": "class A {}",
                                            "src/b/B.java": "class B {}"}, "blob:none")
    with GitRepo(clone) as g:
        entries = g.ls_tree(sha)
        assert [(e.path, e.missing, e.size) for e in entries] == [
            ("pom.xml", True, None), ("src/A.java", True, None), ("src/b/B.java", True, None)]
        with pytest.raises(UserError, match="is missing from the repository"):
            g.read_blob(entries[0].oid)
        assert g.commit_time(sha)  # the commit itself is local and read


def test_a_blob_size_filtered_clone_reads_every_present_file(tmp_path):
    """``--filter=blob:limit=N``: a large blob is missing, its small siblings in the same folder are
    local. The scan reads and counts every present file, and the missing one is one FILE_UNREADABLE —
    never the whole folder unread, never a fetch, never a failed scan."""
    import json

    from tests.conftest import BOOT_PLUGIN, pom, scan_repo
    big = "package com.ex;\n/*" + "x" * 3000 + "*/\npublic class Big { }\n"
    files = {"pom.xml": pom("shop", parent=None, body=BOOT_PLUGIN),
             "src/main/java/com/ex/App.java": "package com.ex;\n@org.springframework.boot.autoconfigure."
                                              "SpringBootApplication\npublic class App {\n"
                                              "  public static void main(String[] a) { } }\n",
             "src/main/java/com/ex/Big.java": big,
             "src/main/java/com/ex/Small.java": "package com.ex;\npublic class Small { }\n"}
    clone, sha = _filtered_clone(tmp_path, files, "blob:limit=2000")
    with GitRepo(clone) as g:
        assert [(e.path, e.missing) for e in g.ls_tree(sha)] == [
            ("pom.xml", False), ("src/main/java/com/ex/App.java", False), ("src/main/java/com/ex/Big.java", True),
            ("src/main/java/com/ex/Small.java", False)]
    (pkg,) = scan_repo(clone, tmp_path / "out", sha).packages
    assert pkg.service_id == "shop" and pkg.status == "PARTIAL"
    diags = [json.loads(x) for x in (pkg.path / "diagnostics.jsonl").read_text().splitlines()]
    lost = _oid(clone, sha, "src/main/java/com/ex/Big.java")
    assert [(d["code"], d["message"]) for d in diags if d["severity"] == "ERROR"] == [
        ("FILE_UNREADABLE", f"src/main/java/com/ex/Big.java: blob {lost[:12]} is missing from the object database "
                            "(a partial or shallow clone?); not read")]
    names = {json.loads(x)["name"] for x in (pkg.path / "entities.jsonl").read_text().splitlines()}
    assert {"com.ex.App", "com.ex.Small"} <= names and "com.ex.Big" not in names
    entity = next(json.loads(x) for x in (pkg.path / "entities.jsonl").read_text().splitlines()
                  if json.loads(x)["kind"] == "SERVICE")
    assert [b["basis"] for b in entity["attributes"]["deployable_basis"]] == ["BOOT_PLUGIN", "SPRING_BOOT_APPLICATION"]
    counted = json.loads((pkg.path / "coverage.json").read_text())["dimensions"]["files"]
    assert (counted["discovered"], counted["resolved"], counted["failed"]) == (4, 3, 1)


def test_objects_are_read_through_the_view_in_a_worktree_and_a_sha256_repository(tmp_path):
    """The object view borrows only the object directory: a linked worktree's is its main
    repository's, and a sha256 repository's objects need a view of that format."""
    repo, sha = make_repo(tmp_path, {"pom.xml": "<project/>", "a/A.java": "class A {}"})
    subprocess.run(["git", "-C", str(repo), "worktree", "add", "-q", "--detach", str(tmp_path / "wt"), sha],
                   check=True, capture_output=True)
    with GitRepo(tmp_path / "wt") as g:
        assert [(e.path, e.size) for e in g.ls_tree(sha)] == [("a/A.java", 10), ("pom.xml", 10)]
        assert g.read_blob(g.ls_tree(sha)[0].oid) == b"class A {}"
    wide = tmp_path / "wide"
    subprocess.run(["git", "init", "-q", "--object-format=sha256", str(wide)], check=True)
    (wide / "pom.xml").write_text("<project/>")
    subprocess.run(["git", "-C", str(wide), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(wide), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"],
                   check=True)
    with GitRepo(wide) as g:
        head = g.resolve_commit("HEAD")
        (entry,) = g.ls_tree(head)
        assert len(head) == 64 and (entry.path, entry.size, len(entry.oid)) == ("pom.xml", 10, 64)
        assert g.read_blob(entry.oid) == b"<project/>" and g.commit_time(head)


def _oid(repo, sha: str, path: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "rev-parse", f"{sha}:{path}"], capture_output=True, text=True,
                          check=True).stdout.strip()


def test_element_spans_skip_a_doctype_whose_subset_holds_brackets_and_markup():
    """A ']' in a comment of the internal subset and entity values holding '<a b=' neither end the
    DOCTYPE early nor count as elements (that mis-paired every element, and was quadratic)."""
    subset = "<!-- see [1] -->\n" + "".join(f'<!ENTITY e{i} "&lt;a b=">\n' for i in range(3)) + \
        "<!ENTITY cols \"<include refid='c'/>\">\n"
    text = (f'<?xml version="1.0"?>\n<!DOCTYPE mapper [\n{subset}]>\n<mapper namespace="x">\n'
            '  <sql id="c">a, b</sql>\n  <select id="selectA">\n    select a\n  </select>\n'
            "  <\u8bf4\u660e>\u6ce8\u91ca</\u8bf4\u660e>\n</mapper>\n")
    parsed = parse_xml(text.encode())
    lines = text.split("\n")
    root = parsed.root
    first = next(i for i, ln in enumerate(lines, 1) if "<mapper" in ln)
    assert element_span(lines, root) == (first, first + 6)
    assert element_span(lines, root[0]) == (first + 1, first + 1)
    assert element_span(lines, root[1]) == (first + 2, first + 4)
    assert element_span(lines, root[2]) == (first + 5, first + 5)  # a non-ASCII element name counts


def test_element_spans_are_linear_on_a_large_pathological_subset():
    """Thousands of markup-bearing entity values after a ']' in the subset: one pass, right lines.
    (lxml refuses such a document; the lexer is run on the text with a root parsed apart.)"""
    from lxml import etree

    from diting.source.xmlsafe import element_spans
    subset = "<!-- [x] -->" + "".join(f'<!ENTITY e{i} "<a b=">' for i in range(20000))
    text = f'<!DOCTYPE r [{subset}]>\n<r>\n<a/>\n</r>'
    root = etree.fromstring(b"<r>\n<a/>\n</r>")
    spans = element_spans(text, root)
    assert spans[root] == (2, 4) and spans[root[0]] == (3, 3)


def test_element_spans_past_line_65535_come_from_the_text():
    """libxml2's sourceline is not the line past 65,535; the lexer's lines are."""
    text = "<beans>\n" + "<!-- pad -->\n" * 65540 + '<p a="1"\n   b="2"/>\n\n<p a="2"/>\n</beans>\n'
    parsed = parse_xml(text.encode())
    lines = text.split("\n")
    first, second = [el for el in parsed.root if isinstance(el.tag, str)]
    assert element_span(lines, first) == (65542, 65543)
    assert element_span(lines, second) == (65545, 65545)


def test_git_path_strings_never_collide_and_give_the_bytes_back():
    names = [b"Bad\xff.java", b"Bad\\xff.java", b"Bad\\\\xff.java", b"a\\b", b"\\", b"\xe2\x5c", "订单.java".encode(),
             b"\xed\xa0\x80.java", b"plain/Path.java"]
    strings = [path_from_git(n) for n in names]
    assert len(set(strings)) == len(names)
    assert strings[0] == "Bad\\xff.java" and strings[1] == "Bad\\\\xff.java" and strings[-1] == "plain/Path.java"
    assert [path_to_git(s) for s in strings] == names
    assert all(s.encode("utf-8") for s in strings)  # no lone surrogates


def test_a_folder_inside_a_repository_is_not_the_repository(tmp_path):
    """A subdirectory of a work tree (or of a bare repository's git directory) given as REPO would scan
    the enclosing repository under the wrong name: it is refused, naming the top folder (exit 2)."""
    from tests.conftest import make_repo, run_cli
    repo, _ = make_repo(tmp_path, {"pom.xml": "<project/>\n", "svc/pom.xml": "<project/>\n"})
    proc = run_cli("scan", str(repo / "svc"), "--commit", "HEAD", "--out", str(tmp_path / "o"))
    assert proc.returncode == 2 and "inside the git repository" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "o").exists() or not any((tmp_path / "o").iterdir())
    ok = run_cli("scan", str(repo), "--commit", "HEAD", "--out", str(tmp_path / "o2"))
    assert ok.returncode == 0, ok.stderr
    import subprocess
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(repo), str(bare)], check=True)
    inner = run_cli("scan", str(bare / "objects"), "--commit", "HEAD", "--out", str(tmp_path / "o3"))
    assert inner.returncode == 2 and "inside the git directory" in inner.stderr
    assert run_cli("scan", str(bare), "--commit", "HEAD", "--out", str(tmp_path / "o4")).returncode == 0


def test_commit_time_is_the_committers_with_its_own_offset(tmp_path):
    """The date a package records is a fact of the commit: the committer's time and UTC offset
    (not the author's), the same on every machine; a commit object whose committer line has no
    well-formed time gives None."""
    repo, sha = make_repo(tmp_path, {"a.txt": "x\n"})
    tree = subprocess.run(["git", "-C", str(repo), "rev-parse", f"{sha}^{{tree}}"], capture_output=True, text=True,
                          check=True).stdout.strip()

    def commit(body: str) -> str:
        return subprocess.run(["git", "-C", str(repo), "hash-object", "-t", "commit", "-w", "--literally", "--stdin"],
                              input=body, capture_output=True, text=True, check=True).stdout.strip()

    with GitRepo(repo) as g:
        assert g.commit_time(sha) == "2026-01-01T00:00:00+00:00"  # the fixture committer's date
        made = commit(f"tree {tree}\nauthor A <a@x> 1000000000 +0100\ncommitter C <c@x> 1709259300 +0800\n\nm\n")
        assert g.commit_time(made) == "2024-03-01T10:15:00+08:00"
        made = commit(f"tree {tree}\nauthor A <a@x> 1 +0000\ncommitter C <c@x> 1709259300 -0230\n\nm\n")
        assert g.commit_time(made) == "2024-02-29T23:45:00-02:30"
        for bad in ("committer C <c@x> soon +0000", "committer C <c@x> 1709259300 +9960", "author A <a@x> 1 +0000"):
            assert g.commit_time(commit(f"tree {tree}\n{bad}\n\nm\n")) is None, bad
        # a "committer" line in the message is no header
        assert g.commit_time(commit(f"tree {tree}\n\ncommitter C <c@x> 1709259300 +0800\n")) is None


def test_an_object_view_a_killed_process_left_is_swept(tmp_path, monkeypatch):
    """git's object views live in the temporary folder under a leftover's name; the next process to
    make one removes those of dead processes, never a live one's."""
    import os
    import sys
    import tempfile
    from pathlib import Path

    from diting.source import git as gitmod
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = tmp_path / f".diting-git-view-sha1.tmp-{dead.pid}-0badc0de"
    live = tmp_path / f".diting-git-view-sha1.tmp-{os.getpid()}-0badc0de"
    stale.mkdir()
    live.mkdir()
    monkeypatch.setattr(gitmod, "_VIEWS", {})
    view = gitmod._object_view("sha1")
    assert not stale.exists() and live.exists() and Path(view).parent == tmp_path
