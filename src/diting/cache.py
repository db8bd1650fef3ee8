"""The scan cache (``diting scan --cache DIR``, docs/scanning.md §14): what a scan computed for a
file, kept under a key of everything it depends on, so that a rescan reads it instead of computing it
again. The packages of a scan with a cache are byte-identical to those of a scan without one.

An entry is one file, ``DIR/KIND/ab/KEY``: a magic line, the sha256 of the payload, the payload.
Entries are written to a temporary file beside their place and renamed into it (concurrent scans
sharing a directory never see half an entry), verified on every read (a damaged or foreign entry is
removed and the value computed again, never trusted), and unpickled with only the classes of the
kind allowed (a planted entry cannot run code). The directory is bounded: after a scan the least
recently used entries go until it holds at most ``max_bytes``.
"""

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

MAGIC = b"diting-cache 1\n"
#: the Cache Directory Tagging standard's tag (backup tools skip the directory), marking it diting's
TAG = b"Signature: 8a477f597d28d172789f06886806bc55\n# a diting scan cache (docs/scanning.md \xc2\xa714)\n"
_ENTRY = re.compile(r"[0-9a-f]{64}")
#: the default bound of a cache directory (bytes)
DEFAULT_MAX_BYTES = 2 * 1024**3
#: what an entry of each kind may hold when unpickled: modules whose classes it may name
ALLOWED_MODULES = {"facts": frozenset({"diting.java.facts", "diting.java.branches"})}
_SAFE_BUILTINS = frozenset({"dict", "list", "tuple", "set", "frozenset", "str", "bytes", "int", "bool"})


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


class _Restricted(pickle.Unpickler):
    """An unpickler that makes only the classes of its allowed modules and a few builtins."""

    def __init__(self, data: bytes, modules: frozenset[str]) -> None:
        super().__init__(io.BytesIO(data))
        self.modules = modules

    def find_class(self, module: str, name: str) -> Any:
        if module in self.modules or (module == "builtins" and name in _SAFE_BUILTINS):
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"{module}.{name} is not allowed in a cache entry")


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
                if any(self.root.iterdir()):  # pruning deletes files: never in a folder of someone else's
                    raise UserError(f"--cache {root}: holds other files and is no diting cache (no CACHEDIR.TAG of "
                                    "diting in it); give a new or empty directory")
                tag.write_bytes(TAG)
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

    def get(self, kind: str, key: str) -> Any | None:
        """The value cached under ``key``, or None (absent, damaged — then removed — or holding what
        the kind may not hold). Reading marks the entry used."""
        path = self._path(kind, key)
        try:
            with open(path, "rb") as fh:
                raw = fh.read()
        except OSError:
            return None
        head, digest, payload = raw[:len(MAGIC)], raw[len(MAGIC):len(MAGIC) + 32], raw[len(MAGIC) + 32:]
        try:
            if head != MAGIC or hashlib.sha256(payload).digest() != digest:
                raise pickle.UnpicklingError("damaged")
            value = _Restricted(payload, ALLOWED_MODULES[kind]).load()
        except Exception:  # noqa: BLE001 - a damaged or foreign entry is recomputed, never trusted
            try:
                path.unlink()
            except OSError:
                pass
            return None
        try:
            os.utime(path)  # used now: the last to go when the directory is pruned
        except OSError:
            pass
        return value

    def put(self, kind: str, key: str, value: Any) -> None:
        """Keep ``value`` under ``key`` (atomically; a full or read-only disk only means no entry)."""
        payload = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        path = self._path(kind, key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(MAGIC + hashlib.sha256(payload).digest() + payload)
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
            for sub in sorted((self.root / kind).glob("[0-9a-f][0-9a-f]")):
                for p in sub.iterdir():
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
