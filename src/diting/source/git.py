"""Read a repository at one commit through git plumbing only (docs/scanning.md §1).

Blobs come from the object database, so a bare repository works and the
working tree (uncommitted edits included) is never read. git runs with hooks,
fsmonitor and filters disabled, with system and global configuration ignored
and with an environment built from scratch, so nothing in the scanned
repository's configuration can make git execute a program.

Objects are read (``ls-tree``, ``cat-file``) through an *object view*: a git
directory of diting's own holding nothing but a config without remotes, with the
repository's object directory as ``GIT_OBJECT_DIRECTORY``. git then knows no
promisor remote, so a partial clone's missing object is simply missing — never
fetched, never a fatal error — on every git version (``GIT_NO_LAZY_FETCH`` exists
only from 2.44). Refs, config and history (``rev-parse``, ``config``,
``merge-base``) are read from the repository itself, where every transport is
disabled besides.

Only these git commands are used: ``rev-parse``, ``ls-tree``, ``cat-file
--batch``, ``config --get remote.origin.url`` and ``merge-base --all``.
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import subprocess
import tempfile
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path

from diting.errors import UserError
from diting.leftovers import leftover_name, sweep_leftovers
from diting.source.paths import tree_path_problem

#: tree entry modes
MODE_FILE = "100644"
MODE_EXEC = "100755"
MODE_SYMLINK = "120000"
MODE_GITLINK = "160000"

_SHA = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")


def path_from_git(raw: bytes) -> str:
    """The string a path git gives as bytes is known by: UTF-8 as it is, each byte that is not
    UTF-8 spelled ``\\xNN`` and each backslash of the name itself doubled, so no two paths share a
    string (``Bad<0xFF>.java`` is ``Bad\\xff.java``, a name spelled ``Bad\\xff.java`` is
    ``Bad\\\\xff.java``). :func:`path_to_git` gives the bytes back."""
    if b"\\" not in raw:
        return raw.decode("utf-8", "backslashreplace")
    # 0x5C never occurs inside a UTF-8 sequence: splitting on it cuts no character
    return "\\\\".join(part.decode("utf-8", "backslashreplace") for part in raw.split(b"\\"))


_PATH_ESCAPE = re.compile(r"\\(\\|x[0-9a-f]{2})")


def path_to_git(path: str) -> bytes:
    """The bytes of a path string :func:`path_from_git` made (its inverse)."""
    out, pos = bytearray(), 0
    for m in _PATH_ESCAPE.finditer(path):
        out += path[pos:m.start()].encode("utf-8")
        esc = m.group(1)
        out += b"\\" if esc == "\\" else bytes([int(esc[1:], 16)])
        pos = m.end()
    out += path[pos:].encode("utf-8")
    return bytes(out)


def _git_env() -> dict[str, str]:
    """A minimal environment: no inherited GIT_* variables, no user or system config."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LC_ALL": "C",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_NO_REPLACE_OBJECTS": "1",
        "GIT_OPTIONAL_LOCKS": "0",
        "GIT_ATTR_NOSYSTEM": "1",
        "HOME": os.devnull,
        # no transport at all: a partial clone's lazy fetch of a missing object would otherwise
        # run whatever the repository's own config names (ext:: helpers, uploadpack commands);
        # this overrides every protocol.*.allow setting, the repository's included
        "GIT_ALLOW_PROTOCOL": "",
        "GIT_PROTOCOL_FROM_USER": "0",
        "GIT_ASKPASS": "",
        "SSH_ASKPASS": "",
    }
    return env


#: object format → the object view made for it in this process (:func:`_object_view`)
_VIEWS: dict[str, str] = {}


def _object_view(object_format: str) -> str:
    """The path of a git directory that holds no objects, refs or remotes of its own: ``HEAD``, an
    empty ``refs/`` and a config naming only the repository format (``object_format`` is ``sha1`` or
    ``sha256``). git run with ``GIT_DIR`` set to it and ``GIT_OBJECT_DIRECTORY`` set to a repository's
    object directory reads that repository's objects with none of its config: no promisor remote, so
    no lazy fetch. Made once per process and format in the system's temporary folder, removed when
    the process that made it exits (a forked child never removes it); named as a leftover, so one a
    killed process left is swept by the next (diting.leftovers). Raises :class:`UserError` for
    an object format git 2.39 does not know, or when the temporary folder is not writable."""
    if object_format not in ("sha1", "sha256"):
        raise UserError(f"the repository's object format {object_format!r} is not one git reads (sha1, sha256)")
    view = _VIEWS.get(object_format)
    if view is not None and os.path.isdir(view):
        return view
    try:
        base = Path(tempfile.gettempdir())
        sweep_leftovers(base, f"diting-git-view-{object_format}")  # what a killed scan left
        view = str(base / leftover_name(f"diting-git-view-{object_format}"))
        os.mkdir(view, 0o700)
        os.mkdir(os.path.join(view, "refs"))
        with open(os.path.join(view, "HEAD"), "w", encoding="ascii") as f:
            f.write("ref: refs/heads/none\n")
        extension = "\n[extensions]\n\tobjectformat = sha256" if object_format == "sha256" else ""
        with open(os.path.join(view, "config"), "w", encoding="ascii") as f:
            f.write(f"[core]\n\trepositoryformatversion = {1 if extension else 0}\n\tbare = true{extension}\n")
    except OSError as exc:
        raise UserError(f"cannot make a folder in {tempfile.gettempdir()} for reading git objects: "
                        f"{exc.strerror or exc} (set TMPDIR to a writable folder)") from None
    _VIEWS[object_format] = view
    atexit.register(_remove_view, view, os.getpid())
    return view


def _remove_view(view: str, owner: int) -> None:
    """Remove an object view at exit, only in the process that made it."""
    if os.getpid() == owner:
        shutil.rmtree(view, ignore_errors=True)


_HARDENING = [
    "-c", "core.hooksPath=" + os.devnull,
    "-c", "core.fsmonitor=false",
    "-c", "core.untrackedCache=false",
    "-c", "safe.directory=*",
    "-c", "protocol.allow=never",
    "-c", "remote.origin.promisor=false",
    "-c", "fetch.recurseSubmodules=false",
    "-c", "core.sshCommand=false",
    "-c", "core.gitProxy=false",
]


@dataclass(frozen=True)
class TreeEntry:
    """One entry of ``git ls-tree -r -l``: mode, object type, object id, size in bytes (None for gitlinks)."""

    path: str
    mode: str
    obj_type: str
    oid: str
    size: int | None
    #: the object is not in the object database (a partial or shallow clone)
    missing: bool = False
    #: why git refuses to check this entry out (a crafted tree: :func:`diting.source.paths.tree_path_problem`,
    #: or another entry of the same path); such an entry is no file, link or submodule of the repository
    refused: str | None = None
    #: for a subtree git cannot list (its tree object is missing — a partial clone with a tree filter —
    #: or is no tree: a crafted entry of mode 40000 naming a blob): why; the files below it are unknown
    unlisted: str | None = None

    @property
    def is_unlisted_tree(self) -> bool:
        return self.unlisted is not None and self.refused is None

    @property
    def is_symlink(self) -> bool:
        return self.mode == MODE_SYMLINK and self.refused is None

    @property
    def is_gitlink(self) -> bool:
        return (self.mode == MODE_GITLINK or self.obj_type == "commit") and self.refused is None

    @property
    def is_regular(self) -> bool:
        return self.obj_type == "blob" and self.mode in (MODE_FILE, MODE_EXEC) and self.refused is None


class GitRepo:
    """A git repository read through plumbing. Raises :class:`UserError` when ``path``
    is missing or is not a git repository."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        p = Path(path)
        if not p.exists():
            raise UserError(f"repository path does not exist: {path}")
        if not p.is_dir():
            raise UserError(f"repository path is not a directory: {path}")
        self.path = p.resolve()
        out = self._run(["rev-parse", "--git-dir"], check=False)
        if out.returncode != 0:
            raise UserError(f"not a git repository: {path}")
        self._refuse_inner_folder(path, out.stdout.decode("utf-8", "replace").strip())
        where = self._run(["rev-parse", "--show-object-format", "--git-path", "objects"])
        fmt, _, objects = os.fsdecode(where.stdout).partition("\n")
        #: the repository's object directory (a linked worktree's is its main repository's)
        self.objects_dir = (self.path / objects.rstrip("\n")).resolve()
        self.object_format = fmt.strip()
        self._batch: subprocess.Popen[bytes] | None = None
        self._batch_pid = os.getpid()

    def _refuse_inner_folder(self, given: str | os.PathLike[str], git_dir: str) -> None:
        """A folder inside a work tree, or inside a bare repository's git directory, is not the
        repository: scanning it would read (and name) the enclosing one. Raises :class:`UserError`
        naming the repository's top folder."""
        top = self._run(["rev-parse", "--show-toplevel"], check=False)
        if top.returncode == 0 and top.stdout.strip():
            root = Path(top.stdout.decode("utf-8", "surrogateescape").strip()).resolve()
            if root != self.path:
                raise UserError(f"{given} is a folder inside the git repository {root}: pass the repository's "
                                "top folder")
            return
        if (self.path / git_dir).resolve() != self.path and git_dir not in (".", ".git"):
            raise UserError(f"{given} is a folder inside the git directory {(self.path / git_dir).resolve()}: "
                            "pass the repository itself")

    # -------------------------------------------------------------- plumbing
    def _cmd(self, args: list[str]) -> list[str]:
        return ["git", *_HARDENING, "-C", str(self.path), *args]

    def _objects_env(self) -> dict[str, str]:
        """The environment of a command that reads objects: :func:`_git_env` through the object view
        (:func:`_object_view`), so a missing object is missing and never fetched."""
        return {**_git_env(), "GIT_DIR": _object_view(self.object_format),
                "GIT_OBJECT_DIRECTORY": str(self.objects_dir)}

    def _run(self, args: list[str], check: bool = True, objects: bool = False) -> subprocess.CompletedProcess[bytes]:
        """Run one git command: in the repository, or (``objects``) through the object view. Raises
        :class:`UserError` with git's last line of stderr when ``check`` and git fails."""
        proc = subprocess.run(self._cmd(args), env=self._objects_env() if objects else _git_env(),
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if check and proc.returncode != 0:
            msg = proc.stderr.decode("utf-8", "replace").strip().splitlines()
            raise UserError(f"git {args[0]} failed: {msg[-1] if msg else proc.returncode}")
        return proc

    def resolve_commit(self, rev: str) -> str:
        """Resolve ``rev`` once to the full commit SHA. Raises :class:`UserError` for an unknown rev."""
        if not rev or rev.startswith("-") or "\n" in rev or "\x00" in rev:
            raise UserError(f"not a valid revision: {rev!r}")
        proc = self._run(["rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}"],
                         check=False)
        sha = proc.stdout.decode("ascii", "replace").strip()
        if proc.returncode != 0 or not _SHA.match(sha):
            raise UserError(f"unknown revision {rev!r} in {self.path}: no such commit")
        return sha

    def relation(self, old: str, new: str) -> tuple[str, list[str]]:
        """How commit ``old`` stands to ``new`` (docs/diff.md §5): EXACT, ANCESTOR (old is an ancestor of
        new), AHEAD (new is an ancestor of old), DIVERGED (one merge base), MULTIPLE_MERGE_BASES
        (every base is returned, none picked), UNKNOWN (a commit this repository lacks, or no common
        history). Returns (relation, merge bases)."""
        for sha in {old, new}:
            if not _SHA.match(sha) or \
                    self._run(["cat-file", "-e", f"{sha}^{{commit}}"], check=False, objects=True).returncode:
                return "UNKNOWN", []
        if old == new:
            return "EXACT", [old]
        proc = self._run(["merge-base", "--all", "--end-of-options", old, new], check=False)
        bases = sorted(proc.stdout.decode("ascii", "replace").split())
        if not bases:
            return "UNKNOWN", []
        if len(bases) > 1:
            return "MULTIPLE_MERGE_BASES", bases
        if bases[0] == old:
            return "ANCESTOR", bases
        if bases[0] == new:
            return "AHEAD", bases
        return "DIVERGED", bases

    def ls_tree(self, commit: str) -> list[TreeEntry]:
        """Every entry of the commit's tree, recursively, sorted by path (bytes order as git gives).
        An entry git would refuse to check out — a path :func:`~diting.source.paths.tree_path_problem`
        names, or one two entries share (a crafted name holding ``/``) — is listed with ``refused``
        saying why: it is no file of the repository, and the caller reports it.

        One ``ls-tree -r`` lists the whole tree; when it fails (a subtree's object is missing or is
        no tree), the tree is walked instead (:meth:`_walk_tree`): each subtree git cannot list is
        one entry with ``unlisted`` saying why, and the rest is listed as the fast path would.
        Raises :class:`UserError` when not even the commit's top tree can be listed."""
        proc = self._run(["ls-tree", "-r", "-z", "-l", "--full-tree", commit], check=False, objects=True)
        entries = _parse_ls_tree(proc.stdout, b"") if proc.returncode == 0 else self._walk_tree(commit)
        counts = Counter(e.path for e in entries)
        if len(counts) < len(entries):
            entries = [replace(e, refused=e.refused or "another tree entry has the same path") if counts[e.path] > 1
                       else e for e in entries]
        return entries

    def _walk_tree(self, commit: str) -> list[TreeEntry]:
        """The entries of ``ls-tree -r`` for a tree the recursive listing fails on: each subtree is
        listed recursively when git can, else one level down, so only the subtrees git cannot list
        are walked into; a subtree whose own object cannot be listed becomes one entry with
        ``unlisted``. Order is git's (a subtree's entries stand where the subtree does). Raises
        :class:`UserError` when the commit's top tree cannot be listed."""
        top = self._run(["ls-tree", "-z", "-l", "--full-tree", commit], objects=True)  # raises: nothing is listed
        out: list[TreeEntry] = []
        # a stack of pending work, last first: a listing still to expand, or a finished entry
        stack: list[TreeEntry | tuple[bytes, bytes]] = list(reversed(_parse_ls_tree(top.stdout, b"", raw=True)))
        while stack:
            item = stack.pop()
            if isinstance(item, TreeEntry):
                out.append(item)
                continue
            prefix, line = item
            entry = _parse_ls_tree(line, prefix)[0]
            if entry.obj_type != "tree":
                out.append(entry)
                continue
            below = prefix + line.partition(b"\t")[2] + b"/"
            deep = self._run(["ls-tree", "-r", "-z", "-l", entry.oid], check=False, objects=True)
            if deep.returncode == 0:
                stack.extend(reversed(_parse_ls_tree(deep.stdout, below)))
                continue
            flat = self._run(["ls-tree", "-z", "-l", entry.oid], check=False, objects=True)
            if flat.returncode != 0:
                out.append(replace(entry, unlisted=self._why_unlisted(entry)))
                continue
            stack.extend(reversed(_parse_ls_tree(flat.stdout, below, raw=True)))
        return out

    def _why_unlisted(self, entry: TreeEntry) -> str:
        """Why git cannot list the subtree ``entry`` (a phrase, without its path): its object is
        missing, or is of another type."""
        proc = self._run(["cat-file", "-t", entry.oid], check=False, objects=True)
        kind = proc.stdout.decode("ascii", "replace").strip()
        if proc.returncode != 0 or not kind:
            return f"tree {entry.oid[:12]} is missing from the object database (a partial clone with a tree filter?)"
        return f"the tree entry names object {entry.oid[:12]}, a {kind}, not a tree"

    def origin_url(self) -> str | None:
        """``remote.origin.url`` from the repository's own config, or None."""
        proc = self._run(["config", "--get", "remote.origin.url"], check=False)
        if proc.returncode != 0:
            return None
        url = proc.stdout.decode("utf-8", "replace").strip()
        return url or None

    def merge_bases(self, a: str, b: str) -> list[str]:
        """``git merge-base --all a b``: every merge base (several are kept, never one picked)."""
        proc = self._run(["merge-base", "--all", a, b], check=False)
        return sorted(proc.stdout.decode("ascii", "replace").split()) if proc.returncode == 0 else []

    def commit_time(self, sha: str) -> str | None:
        """The committer time of commit ``sha`` as ISO 8601 with the committer's own UTC offset
        (``2024-03-01T10:15:00+08:00``), read from the commit object: a fact of the commit, equal on
        every machine. None when the commit object has no well-formed committer line."""
        data = self.read_blob(sha)
        head = data.split(b"\n\n", 1)[0]
        for line in head.split(b"\n"):
            if line.startswith(b"committer "):
                m = _COMMITTER_TIME.search(line)
                return _iso_time(int(m.group(1)), m.group(2).decode("ascii")) if m else None
        return None

    # -------------------------------------------------------------- blobs
    def read_blob(self, oid: str) -> bytes:
        """Read one object's bytes through a persistent ``cat-file --batch`` process (no filters).
        A forked child starts its own process (a pipe shared with the parent would mix answers)."""
        return self.read_object(oid)[1]

    def read_object(self, oid: str) -> tuple[str, bytes]:
        """``(type, bytes)`` of one object (``blob``, ``tree`` …: a crafted tree entry of a file's mode
        may name a tree), as :meth:`read_blob` reads it. Raises :class:`UserError` when git stops
        answering or the object is missing."""
        if self._batch is not None and self._batch_pid != os.getpid():
            self._batch = None  # the parent's process: never read from or closed by a child
        if self._batch is None or self._batch.poll() is not None:
            self._batch_pid = os.getpid()
            self._batch = subprocess.Popen(self._cmd(["cat-file", "--batch"]), env=self._objects_env(),
                                           stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                           stderr=subprocess.DEVNULL)
        assert self._batch.stdin is not None and self._batch.stdout is not None
        try:
            self._batch.stdin.write(oid.encode("ascii") + b"\n")
            self._batch.stdin.flush()
        except BrokenPipeError:  # git exited: the repository changed or vanished under the scan
            self._batch = None
            raise UserError(f"git stopped answering while object {oid} was read from {self.path}; "
                            "was the repository moved or deleted during the scan?") from None
        header = self._batch.stdout.readline().split()
        if len(header) != 3:
            raise UserError(f"object {oid} is missing from the repository")
        size = int(header[2])
        data = self._batch.stdout.read(size)
        self._batch.stdout.read(1)
        return header[1].decode("ascii", "replace"), data

    def read_blob_head(self, oid: str, limit: int) -> bytes:
        """The first ``limit`` bytes of an object, streamed (a huge blob is never held whole)."""
        proc = subprocess.Popen(self._cmd(["cat-file", "blob", oid]), env=self._objects_env(),
                                stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        assert proc.stdout is not None
        try:
            return proc.stdout.read(limit)
        finally:
            proc.stdout.close()
            proc.kill()
            proc.wait()

    def close(self) -> None:
        if self._batch is not None and self._batch_pid == os.getpid():
            try:
                if self._batch.stdin:
                    self._batch.stdin.close()
                self._batch.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                self._batch.kill()
            self._batch = None

    def __enter__(self) -> "GitRepo":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


#: the end of a committer line: seconds since the epoch and the UTC offset
_COMMITTER_TIME = re.compile(rb"> (\d{1,12}) ([+-]\d{4})$")


def _iso_time(seconds: int, offset: str) -> str | None:
    """``seconds`` since the epoch at UTC offset ``offset`` (``+0800``) as ISO 8601, or None for an
    offset or a time no calendar holds."""
    from datetime import datetime, timedelta, timezone
    hours, minutes = int(offset[1:3]), int(offset[3:5])
    if minutes >= 60 or hours >= 24:
        return None
    delta = timedelta(hours=hours, minutes=minutes) * (-1 if offset[0] == "-" else 1)
    try:
        return datetime.fromtimestamp(seconds, timezone(delta)).isoformat()
    except (OverflowError, OSError, ValueError):
        return None


def _parse_ls_tree(stdout: bytes, prefix: bytes, raw: bool = False) -> list:
    """The entries of ``git ls-tree -z -l`` output, their paths below ``prefix`` (bytes ending in
    ``/``, or empty). ``raw``: ``(prefix, line)`` pairs instead (a line is parsed when it is reached)."""
    out: list = []
    for line in stdout.split(b"\x00"):
        if not line:
            continue
        meta, _, path_b = line.partition(b"\t")
        parts = meta.split()
        if len(parts) != 4:
            continue
        if raw:
            out.append((prefix, line))
            continue
        mode, typ, oid, size = (p.decode("ascii") for p in parts)
        path = path_from_git(prefix + path_b)
        refused = tree_path_problem(path)
        if size == "-":
            out.append(TreeEntry(path, mode, typ, oid, None, refused=refused))
        elif size.isdigit():
            out.append(TreeEntry(path, mode, typ, oid, int(size), refused=refused))
        else:  # git prints BAD for an object it cannot find
            out.append(TreeEntry(path, mode, typ, oid, None, missing=True, refused=refused))
    return out


_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
#: git's ``<transport>::<address>`` form, which hands the address to a remote helper (``ext::`` runs a
#: command): only an address that is itself a URL names a repository
_HELPER = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*::(.*)$", re.DOTALL)
_SCP = re.compile(r"^(?:[^@/]+@)?([^:/]+):(?!//)(.+)$")
#: what is left of a URL's authority once its userinfo is dropped: a host name or an IPv6 literal in
#: brackets, and an optional port of digits (anything else may be part of a credential)
_HOST_PORT = re.compile(r"^(?:\[[0-9A-Fa-f:.]+\]|[^\[\]:@/?#\s]+)(?::\d*)?$")


def repo_id_from_url(url: str) -> str | None:
    """The repository id a remote URL gives: host (with its port, as written) and path, without the
    scheme, the userinfo (user name and password), the query and the fragment (either may carry a
    token), trailing slashes and a final ``.git``.

    ``https://user:pw@github.com/a/b.git?token=t#f`` → ``github.com/a/b``;
    ``ssh://git@host:22/a/b.git/`` → ``host:22/a/b``; ``git@github.com:a/b.git`` → ``github.com/a/b``.
    None for a local path or ``file://`` URL, and for a URL whose authority is no ``host[:port]`` once
    the userinfo is gone (a password holding ``/`` or ``?`` would otherwise leak into the id): the
    caller falls back to the directory name. ``<transport>::<address>`` gives the address's id when the
    address is a URL (``persistent-https::https://…``), else None (``ext::`` names a command).
    """
    url = url.strip()
    if m := _HELPER.match(url):  # <transport>::<address> (a remote helper): the address, when it is a URL
        return repo_id_from_url(m.group(1)) if _SCHEME.match(m.group(1)) else None
    if _SCHEME.match(url):
        if url.lower().startswith("file://"):
            return None
        rest = _SCHEME.sub("", url)
        host, sep, path = rest.partition("/")
        host = host.rsplit("@", 1)[-1]
        if not sep:  # no path: the query or fragment may follow the authority at once
            host = re.split(r"[?#]", host, maxsplit=1)[0]
        if not _HOST_PORT.match(host):
            return None
    else:
        m = _SCP.match(url)
        if not m or url.startswith("/") or url.startswith("."):
            return None
        host, path = m.group(1).rsplit("@", 1)[-1], m.group(2)
        if not _HOST_PORT.match(host):
            return None
    # an scp-like path has no query, but a token written after '?' is no part of a name either
    path = re.split(r"[?#]", path, maxsplit=1)[0].rstrip("/")
    if path.endswith(".git"):
        path = path[:-4].rstrip("/")
    return f"{host}/{path}" if path else host or None


def _usable_id(text: str) -> bool:
    """Whether ``text`` can be a repository id: not blank, no white space around it, no control
    character in it."""
    return bool(text.strip()) and text == text.strip() and text.isprintable()


def checked_repo_id(repo_id: object) -> str:
    """``repo_id`` (``--repo-id``) when it can name a repository (:func:`_usable_id`). Raises
    :class:`UserError` otherwise."""
    if not isinstance(repo_id, str) or not repo_id.strip():
        raise UserError(f"--repo-id {repo_id!r} names no repository: give its id, or leave it out for the origin URL")
    if not _usable_id(repo_id):
        raise UserError(f"--repo-id {repo_id!r} has white space around it or a control character in it: give the "
                        "repository's id as it is written")
    return repo_id


def default_repo_id(repo: GitRepo) -> tuple[str, str]:
    """``--repo-id`` fallback and its basis: the origin URL normalised (``origin``; one with a control
    character or white space around it is passed over), else the directory's base name (``directory
    name``; never a path). Raises :class:`UserError` when that name cannot be an id either
    (:func:`_usable_id`): then ``--repo-id`` is needed."""
    url = repo.origin_url()
    if url:
        rid = repo_id_from_url(url)
        if rid and _usable_id(rid):
            return rid, "origin"
    name = repo.path.name
    if name.endswith(".git") and len(name) > 4:
        name = name[:-4]
    if not _usable_id(name or "repo"):
        raise UserError(f"the repository has no usable origin URL and its folder name {name!r} cannot be its id (white "
                        "space around it or a control character in it): give --repo-id")
    return name or "repo", "directory name"
