"""Leftovers of killed processes: the temporary and set-aside entries a writer makes beside what it
writes (``.{name}.tmp-{pid}-{hex}``, ``.{name}.old-{pid}-{hex}-{n}``), recognised by name and removed
by the next writer of the same place once their process is gone — never one of a live process.

Used by the package writer, the graph build, re-derivation and git's object views alike.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path


def remove_path(path: Path) -> None:
    """Remove a file, a symlink (never its target) or a directory tree."""
    try:
        if path.is_symlink() or not path.is_dir():
            path.unlink()
        else:
            shutil.rmtree(path)
    except FileNotFoundError:
        pass


_LEFTOVER = re.compile(r"^\.(?P<name>.+)\.(?:tmp|old)-(?P<pid>\d+)-[0-9a-f]+(?:\.wal)?$")


def is_leftover(name: str) -> bool:
    """Whether a directory entry's ``name`` is a writer's temporary or set-aside copy
    (``.{name}.tmp-{pid}-{hex}``, ``.{name}.old-{pid}-{hex}-{n}``): a partly written package, never
    one to read."""
    return _LEFTOVER.match(name) is not None


def _alive(pid: int) -> bool:
    """Whether a process ``pid`` exists (one of another user counts as alive)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True  # not ours, or an id no process can have: not ours to judge either
    return True


def sweep_leftovers(out_dir: Path, name: str | None = None) -> list[Path]:
    """Remove the temporary and set-aside entries in ``out_dir`` (of ``name`` only, when given) left
    by a process that died (killed mid-write); those of live processes are left alone. Returns the
    entries removed."""
    removed: list[Path] = []
    try:
        entries = sorted(out_dir.iterdir())
    except OSError:
        return removed
    for entry in entries:
        m = _LEFTOVER.match(entry.name)
        if not m or name is not None and m.group("name") != name or _alive(int(m.group("pid"))):
            continue
        remove_path(entry)
        removed.append(entry)
    return removed


def leftover_name(name: str) -> str:
    """A fresh leftover-style name for ``name`` owned by this process: ``.{name}.tmp-{pid}-{hex}``."""
    return f".{name}.tmp-{os.getpid()}-{os.urandom(4).hex()}"
