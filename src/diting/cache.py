"""The scan cache (``diting scan --cache DIR``, docs/scanning.md §14): what a scan computed for a
file, kept under a key of everything it depends on, so that a rescan reads it instead of computing it
again. The packages of a scan with a cache are byte-identical to those of a scan without one.

An entry is one file, ``DIR/KIND/ab/KEY``: a magic line, the sha256 of the key and payload, the
payload. Entries are written to a temporary file beside their place and renamed into it (concurrent
scans sharing a directory never see half an entry), checked on every read (a damaged entry, one of
another key, or anything but a bounded regular file in its place is removed and the value computed
again), and unpickled constructing only the dataclasses of the kind (no code runs). The checks find
damage, not forgery: the cache is trusted by whoever can write it. The directory carries a
``CACHEDIR.TAG``; after a scan the least recently used entries go until it holds at most
``max_bytes``, and only the cache's own entries, never through a linked folder."""

from __future__ import annotations

import hashlib
import io
import os
import pickle
import re
import sys
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Any

from diting.errors import UserError
from diting.userfiles import read_regular

MAGIC = b"diting-cache 2\n"
#: the largest entry read back (a file's facts are a few MB at most); a larger one is damage
MAX_ENTRY_BYTES = 256 * 1024 * 1024
#: the Cache Directory Tagging standard's tag (backup tools skip the directory), marking it diting's
TAG = b"Signature: 8a477f597d28d172789f06886806bc55\n# a diting scan cache (docs/scanning.md \xc2\xa714)\n"
_ENTRY = re.compile(r"[0-9a-f]{64}")
#: the default bound of a cache directory (bytes)
DEFAULT_MAX_BYTES = 2 * 1024**3
#: what an entry of each kind may hold when unpickled: the modules whose dataclasses it may name
ALLOWED_MODULES = {"facts": ("diting.java.facts", "diting.java.branches"), "package": (),
                   "module": ("diting.scan.modules", "diting.ir.builder", "diting.java.records", "diting.java.facts",
                              "diting.java.branches", "diting.resolve.callfacts", "diting.sql.mybatis")}
#: the plain (slotted, not dataclass) classes an entry of a kind may construct besides
ALLOWED_PLAIN = {"module": (("diting.ir.builder", "RefTo"), ("diting.ir.builder", "ImplRef"))}
#: the builtins an entry may construct: containers and scalars
_SAFE_BUILTINS = {t.__name__: t for t in (dict, list, tuple, set, frozenset, str, bytes, int, bool)}


@lru_cache(maxsize=None)
def allowed_classes(kind: str) -> dict[tuple[str, str], type]:
    """``(module, name) → class`` of every dataclass the modules of ``kind`` define, and the plain
    classes :data:`ALLOWED_PLAIN` names for it: all an entry of that kind may construct (no function,
    no attribute path, nothing imported into them)."""
    import dataclasses
    import importlib
    out: dict[tuple[str, str], type] = {}
    for name in ALLOWED_MODULES[kind]:
        mod = importlib.import_module(name)
        for attr, obj in vars(mod).items():
            if isinstance(obj, type) and dataclasses.is_dataclass(obj) and obj.__module__ == name:
                out[(name, attr)] = obj
    for name, attr in ALLOWED_PLAIN.get(kind, ()):
        out[(name, attr)] = getattr(importlib.import_module(name), attr)
    return out


@lru_cache(maxsize=None)
def analyzer_digest(*packages: str) -> str:
    """sha256 over the source of every module of ``packages`` (``diting.java`` …), the installed
    tree-sitter grammar and the Python version: what a cached value of theirs depends on besides its
    input. A change to any of them gives other keys (old entries age out)."""
    import importlib
    import importlib.metadata
    h = hashlib.sha256()
    for name in packages:
        mod = importlib.import_module(name)
        files = sorted(Path(mod.__file__).parent.glob("*.py")) if mod.__file__.endswith("__init__.py") \
            else [Path(mod.__file__)]
        for f in files:
            h.update(f.name.encode() + b"\0" + f.read_bytes() + b"\0")
    for dist in ("tree-sitter", "tree-sitter-java"):
        try:
            h.update(f"{dist}={importlib.metadata.version(dist)}\0".encode())
        except importlib.metadata.PackageNotFoundError:
            h.update(f"{dist}=?\0".encode())
    h.update(f"python={sys.version_info[:3]}".encode())
    return h.hexdigest()


def cache_key(*parts: bytes | str) -> str:
    """The key of a value computed from ``parts`` (each length-prefixed: no two lists share a key)."""
    h = hashlib.sha256()
    for p in parts:
        b = p.encode("utf-8", "surrogatepass") if isinstance(p, str) else p
        h.update(len(b).to_bytes(8, "big") + b)
    return h.hexdigest()


def default_cache_dir() -> Path:
    """Where a scan keeps its cache when no ``--cache`` is given: ``$XDG_CACHE_HOME/diting``, else
    ``~/.cache/diting`` (the XDG base directory convention)."""
    base = os.environ.get("XDG_CACHE_HOME", "").strip()
    return (Path(base) if base and os.path.isabs(base) else Path.home() / ".cache") / "diting"


def _overlap(cache: Path, out: Path) -> bool:
    """Whether the cache directory and the output folder are one, or one holds the other."""
    c, o = cache.resolve(), out.resolve()
    return c == o or o in c.parents or c in o.parents


def refuse_overlap(cache: Path, out: Path) -> None:
    """Raise :class:`UserError` when the cache directory and the output folder hold one another (the
    cache is pruned and tagged for backup tools to skip; packages must be neither)."""
    if _overlap(cache, out):
        raise UserError(f"--cache {cache} and --out {out}: one holds the other; the cache is pruned and tagged "
                        "for backup tools to skip, packages must be neither")


def chosen_cache(given: Path | None, no_cache: bool, out: Path) -> tuple[Path | None, str | None]:
    """The cache directory a command uses, and a note to print when the default cannot be used:
    ``given`` (``--cache``), none with ``no_cache``, else :func:`default_cache_dir` when it is usable
    and apart from ``out`` — else none, with the note saying why (a default never stops a scan).
    Raises :class:`UserError` when both ``given`` and ``no_cache`` are."""
    if no_cache:
        if given is not None:
            raise UserError("--cache and --no-cache: give one of them")
        return None, None
    if given is not None:
        return given, None
    root = default_cache_dir()
    try:
        if _overlap(root, out):
            raise UserError("it holds the output or lies inside it")
        ScanCache(root)
    except UserError as exc:
        return None, (f"note: the default scan cache {root} cannot be used ({exc.message.removeprefix(f'--cache {root}: ')}"
                      "); scanning without one (--cache DIR names another, --no-cache silences this)")
    except OSError as exc:
        return None, f"note: the default scan cache {root} cannot be used ({exc.strerror or exc}); scanning without one"
    return root, None


class _Restricted(pickle.Unpickler):
    """An unpickler that makes only the dataclasses of its kind (:func:`allowed_classes`) and a few
    container builtins: a name is looked up in that table, never followed as an attribute path."""

    def __init__(self, data: bytes, kind: str) -> None:
        super().__init__(io.BytesIO(data))
        self.allowed = allowed_classes(kind)

    def find_class(self, module: str, name: str) -> Any:
        if module == "builtins" and name in _SAFE_BUILTINS:
            return _SAFE_BUILTINS[name]
        cls = self.allowed.get((module, name))
        if cls is None:
            raise pickle.UnpicklingError(f"{module}.{name} is not allowed in a cache entry")
        return cls


class ScanCache:
    """A cache directory (see the module docstring). ``root`` is created when missing. Raises
    :class:`UserError` when it is not a directory diting can write."""

    def __init__(self, root: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.root = Path(root)
        self.max_bytes = max_bytes
        tag = self.root / "CACHEDIR.TAG"
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            if not tag.is_file() or not tag.read_bytes().startswith(TAG):
                # pruning deletes files: never in a folder of someone else's (a scan starting beside this
                # one may have left its temporary names, starting with a dot, and nothing else yet)
                if any(not p.name.startswith(".") for p in self.root.iterdir()):
                    raise UserError(f"--cache {root}: holds other files and is no diting cache (no CACHEDIR.TAG of "
                                    "diting in it); give a new or empty directory")
                fd, tmp = tempfile.mkstemp(dir=self.root, prefix=".tag-")
                with os.fdopen(fd, "wb") as fh:
                    fh.write(TAG)
                os.replace(tmp, tag)
            probe = tempfile.NamedTemporaryFile(dir=self.root, prefix=".probe-", delete=True)
            probe.close()
        except OSError as exc:
            raise UserError(f"--cache {root}: not a directory diting can write ({exc.strerror or exc})") from None

    @classmethod
    def opened(cls, root: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> "ScanCache":
        """The cache at ``root`` as a worker uses it: checked once by the scan, not again per file."""
        cache = cls.__new__(cls)
        cache.root, cache.max_bytes = Path(root), max_bytes
        return cache

    def _path(self, kind: str, key: str) -> Path:
        return self.root / kind / key[:2] / key

    def _own_dirs(self, path: Path) -> bool:
        """Whether the folders between the cache's root and ``path`` (its kind and fan-out folders) are
        directories of the cache itself, not links to elsewhere (absent ones count: nothing is there)."""
        return all(_real_dir_or_absent(d) for d in (path.parent.parent, path.parent))

    def get(self, kind: str, key: str) -> Any | None:
        """The value cached under ``key``, or None (absent, damaged — then removed — or holding what
        the kind may not hold). Reading marks the entry used."""
        path = self._path(kind, key)
        if not self._own_dirs(path):
            return None
        raw = _read_entry(path)
        if raw is None:
            return None
        head, digest, payload = raw[:len(MAGIC)], raw[len(MAGIC):len(MAGIC) + 32], raw[len(MAGIC) + 32:]
        try:
            if head != MAGIC or _digest(key, payload) != digest:
                raise pickle.UnpicklingError("damaged, or another key's entry")
            value = _Restricted(payload, kind).load()
        except Exception:  # noqa: BLE001 - a damaged or foreign entry is recomputed, never trusted
            _remove(path)
            return None
        try:
            os.utime(path)  # used now: the last to go when the directory is pruned
        except OSError:
            pass
        return value

    def put(self, kind: str, key: str, value: Any) -> None:
        """Keep ``value`` under ``key`` (atomically; a full or read-only disk only means no entry)."""
        payload = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        if len(payload) + 64 > MAX_ENTRY_BYTES:  # it would never be read back
            return
        path = self._path(kind, key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if not self._own_dirs(path):  # a linked-in folder: entries are written into the cache only
                return
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(MAGIC + _digest(key, payload) + payload)
                os.replace(tmp, path)
            except BaseException:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
                raise
        except OSError:
            pass

    def prune(self) -> int:
        """Remove the least recently used entries (and temporary files older than an hour, left by a
        killed scan) until the directory holds at most ``max_bytes``; returns how many went."""
        import time
        entries: list[tuple[float, int, Path]] = []
        removed = 0
        now = time.time()
        for kind in sorted(ALLOWED_MODULES):  # its own entries only: DIR/KIND/ab/KEY and their temporary files
            if not _is_real_dir(self.root / kind):
                continue
            for sub in sorted((self.root / kind).glob("[0-9a-f][0-9a-f]")):
                if not _is_real_dir(sub):  # a file, a link to elsewhere: not the cache's to prune
                    continue
                try:
                    names = list(sub.iterdir())
                except OSError:
                    continue
                for p in names:
                    try:
                        st = p.lstat()
                    except OSError:
                        continue
                    if p.name.startswith(".tmp-") and now - st.st_mtime > 3600:
                        try:
                            p.unlink()
                            removed += 1
                        except OSError:
                            pass
                    elif _ENTRY.fullmatch(p.name) and p.name.startswith(sub.name):
                        entries.append((st.st_mtime, st.st_size, p))
        total = sum(size for _, size, _ in entries)
        for _, size, p in sorted(entries):
            if total <= self.max_bytes:
                break
            try:
                p.unlink()
                total -= size
                removed += 1
            except OSError:
                pass
        return removed


def _digest(key: str, payload: bytes) -> bytes:
    """What an entry's header holds: the sha256 of its key and payload (an entry copied under
    another key does not verify)."""
    return hashlib.sha256(key.encode("ascii") + b"\0" + payload).digest()


def _is_real_dir(path: Path) -> bool:
    """A directory, not reached through a symbolic link."""
    import stat
    try:
        return stat.S_ISDIR(path.lstat().st_mode)
    except OSError:
        return False


def _real_dir_or_absent(path: Path) -> bool:
    """A directory not reached through a link, or nothing at all."""
    return _is_real_dir(path) or not os.path.lexists(path)


def _read_entry(path: Path) -> bytes | None:
    """The bytes of the entry at ``path`` when it is a regular file of at most :data:`MAX_ENTRY_BYTES`
    (:func:`~diting.userfiles.read_regular`: no link followed, no pipe waited on); otherwise None, and
    a link, or a file that is not one (a pipe, an oversized file), removed from its place."""
    import stat
    try:
        raw = read_regular(path, MAX_ENTRY_BYTES)
    except OSError:  # a read that fails half-way: no entry (the value computed is written over it)
        raw = None
    if raw is None:
        try:
            st = path.lstat()
        except OSError:
            return None
        if stat.S_ISLNK(st.st_mode) or (not stat.S_ISDIR(st.st_mode) and
                                         (not stat.S_ISREG(st.st_mode) or st.st_size > MAX_ENTRY_BYTES)):
            _remove(path)
    return raw


def _remove(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass

