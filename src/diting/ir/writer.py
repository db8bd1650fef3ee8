"""Writing an IR package atomically (docs/ir.md §1.3).

The package is written into a hidden temporary directory beside its final
place, every file flushed to disk, then renamed into place: a package
directory appears whole or not at all. A package whose manifest is byte-equal
to the one already in place is not rewritten.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import shutil
from functools import lru_cache
from pathlib import Path
from typing import Any

import jsonschema

from diting import __version__
from diting.errors import UserError
from diting.leftovers import remove_path, is_leftover, sweep_leftovers  # noqa: F401 - part of this module's API
from diting.ir.builder import EncodedSet, Placeholders
from diting.ir.canonical import dumps, sha256_hex
from diting.ir.models import Coverage, Manifest

MANIFEST_SCHEMA_PATH = Path(__file__).parent / "manifest-0.1.schema.json"
_UNSAFE = re.compile(r"[^\w.:~+@,=-]|_")


@lru_cache(maxsize=1)
def manifest_schema() -> dict[str, Any]:
    """The frozen IR manifest 0.1 JSON Schema (docs/ir.md §11.1)."""
    return json.loads(MANIFEST_SCHEMA_PATH.read_text(encoding="utf-8"))


@lru_cache(maxsize=1)
def manifest_validator() -> jsonschema.Draft202012Validator:
    """A compiled validator of the manifest schema (built once)."""
    return jsonschema.Draft202012Validator(manifest_schema())


#: longest package directory name, in UTF-8 bytes (file systems allow 255)
MAX_DIR_NAME_BYTES = 180


def package_dir_name(service_id: str, commit_sha: str, profiles: list[str]) -> str:
    """``{service_id}@{commit_sha[:12]}`` plus ``+{profiles}`` when not ``default``.

    Letters of any script, digits and ``._:~+@,=-`` are kept. When anything else had to be
    replaced by ``_`` (``/``, NUL, spaces, control characters), or the name is too long, a
    short hash of the full name is appended, so two different packages never share a
    directory."""
    name = f"{service_id}@{commit_sha[:12]}"
    if profiles and profiles != ["default"]:
        name += "+" + ",".join(profiles)
    safe = _UNSAFE.sub("_", name)
    if safe.startswith("."):
        safe = "_" + safe[1:]
    if safe != name or len(safe.encode("utf-8")) > MAX_DIR_NAME_BYTES:
        digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:12]
        while len(safe.encode("utf-8")) > MAX_DIR_NAME_BYTES - 13:
            safe = safe[:-1]
        safe = f"{safe}~{digest}"
    return safe


def package_files(encoded: EncodedSet, placeholders: Placeholders, scan_id: str, scope: str,
                  analysis_input_bytes: bytes, coverage: dict[str, Any],
                  consume: bool = False) -> dict[str, tuple[bytes, int]]:
    """File name → (bytes, record_count) for every file except the manifest: jsonl lines sorted by
    record_id (code-point order), placeholders replaced by the package's scan_id and scope.
    ``consume`` empties ``encoded``'s line tables as each file is built."""
    Coverage.model_validate(coverage)
    files: dict[str, tuple[bytes, int]] = {
        "analysis_input.json": (analysis_input_bytes, 1),
        "coverage.json": ((dumps(coverage) + "\n").encode("utf-8"), 1),
    }
    stamp = placeholders.stamper(scan_id, scope)
    for name, lines in encoded.lines.items():
        count = len(lines)
        rids = sorted(lines)
        # stamped and encoded in chunks: one copy of a large file at a time, few string operations
        data = b"".join(stamp("".join(lines[rid] + "\n" for rid in rids[i:i + 4096])).encode("utf-8")
                        for i in range(0, len(rids), 4096))
        if consume:
            lines.clear()  # the caller is done with them: one copy of a large file in memory, not two
        files[name] = (data, count)
    return files


def manifest_for(*, scan_id: str, service_id: str, repo_id: str, commit_sha: str, input_digest: str,
                 status: str, files: dict[str, tuple[bytes, int]],
                 config_snapshot_refs: list[str] | None = None) -> dict[str, Any]:
    """The manifest dict, validated against the frozen IR manifest 0.1 schema."""
    manifest: dict[str, Any] = {
        "schema_version": "0.1", "scan_id": scan_id, "service_id": service_id, "repo_id": repo_id,
        "commit_sha": commit_sha, "analyzer_version": __version__, "input_digest": input_digest,
        "status": status,
        "files": [{"path": name, "sha256": sha256_hex(data), "record_count": count}
                  for name, (data, count) in sorted(files.items())],
        "coverage_ref": "coverage.json",
    }
    if config_snapshot_refs:
        manifest["config_snapshot_refs"] = sorted(config_snapshot_refs)
    manifest_validator().validate(manifest)
    Manifest.model_validate(manifest)
    return manifest


def fsync_path(path: Path) -> None:
    """Flush a file or a directory (its entries) to disk; a failure to is ignored."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _same_package(final: Path, files: dict[str, bytes]) -> bool:
    """True when ``final`` already holds exactly these bytes (judged by manifest and sizes)."""
    manifest = final / "manifest.json"
    try:
        if not final.is_dir() or final.is_symlink() or manifest.read_bytes() != files["manifest.json"]:
            return False
        return all((final / f).is_file() and (final / f).stat().st_size == len(b) for f, b in files.items())
    except OSError:
        return False


def skipped_leftover(path: Path) -> bool:
    """Whether ``path`` is a writer's leftover (:func:`is_leftover`) a reader of a directory of packages
    passes over; it then says so in one line on stderr."""
    if not is_leftover(path.name):
        return False
    import sys
    from diting.safe_text import printable
    sys.stderr.write(f"note: skipped {printable(str(path))}: a package still being written, or left half-written "
                     "by a killed scan (the next scan into that directory removes such a leftover)\n")
    return True


def write_atomically(out_dir: Path, name: str, files: dict[str, bytes]) -> tuple[Path, str]:
    """Write ``files`` as the package directory ``out_dir/name``.

    The files go into ``.{name}.tmp-{pid}-{random}`` and are flushed to disk; the directory
    is then renamed into place, so a package appears whole or not at all. Whatever already
    sits at that path (an older package, a file, a symlink — never followed) is first moved
    aside and removed after the swap. Concurrent writers of the same package end with one
    whole package. Returns the final path and ``"written"``, ``"replaced"`` or ``"unchanged"``.
    Raises OSError when the output directory cannot be written.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    sweep_leftovers(out_dir, name)
    final = out_dir / name
    if _same_package(final, files):
        return final, "unchanged"
    tag = f"{os.getpid()}-{os.urandom(4).hex()}"
    tmp = out_dir / f".{name}.tmp-{tag}"
    os.mkdir(tmp)
    try:
        for fname, data in sorted(files.items()):
            with open(tmp / fname, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
        fsync_path(tmp)
        status = "written"
        for attempt in range(8):
            try:
                os.rename(tmp, final)
                fsync_path(out_dir)
                return final, status
            except OSError as exc:
                if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOTDIR, errno.EISDIR):
                    raise
            if _same_package(final, files):  # another writer put the same package in place
                shutil.rmtree(tmp, ignore_errors=True)
                return final, "unchanged"
            old = out_dir / f".{name}.old-{tag}-{attempt}"
            try:
                os.rename(final, old)
            except FileNotFoundError:
                continue  # moved away by another writer meanwhile: try again
            status = "replaced"
            try:
                os.rename(tmp, final)
                fsync_path(out_dir)
                return final, status
            except OSError as exc:
                if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOTDIR, errno.EISDIR):
                    raise
            finally:
                remove_path(old)
        raise OSError(errno.EBUSY, f"{final} kept changing while it was written")
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def holds_manifest(path: Path) -> bool:
    """Whether ``path`` is a package directory (it holds a ``manifest.json`` file). Raises
    :class:`UserError` when ``path`` is a folder diting may not look into."""
    try:
        return (path / "manifest.json").is_file()
    except OSError as exc:
        raise UserError(f"{path}: not readable ({exc.strerror or exc})") from None


def package_dirs(paths: list[Path]) -> list[Path]:
    """The package directories named: a directory with a manifest.json, or every such directory
    below one (symbolic links are not followed; a package's own subdirectories are not searched; a
    writer's leftover, a package half-written by a killed scan, is skipped with a note on stderr).
    Raises :class:`UserError` for a path that is neither."""
    out: list[Path] = []
    for p in paths:
        if holds_manifest(p):
            out.append(p)
        elif p.is_dir():
            found: list[Path] = []
            def unlisted(exc: OSError) -> None:
                raise UserError(f"{exc.filename}: not readable ({exc.strerror or exc}); the packages in it cannot "
                                "be listed")

            for root, dirs, files in os.walk(p, onerror=unlisted):
                if "manifest.json" in files:
                    found.append(Path(root))
                    dirs[:] = []
                else:
                    dirs[:] = sorted(d for d in dirs if not (Path(root) / d).is_symlink()
                                     and not skipped_leftover(Path(root) / d))
            if not found:
                raise UserError(f"{p}: no IR package here (no manifest.json in it or below it)")
            out.extend(sorted(found))
        elif not p.exists():
            raise UserError(f"package not found: {p}")
        else:
            raise UserError(f"{p}: not an IR package directory")
    return out


def refuse_inside_package(path: Path, what: str) -> None:
    """Raise :class:`UserError` when writing ``path`` would write into an IR package: ``path`` (its
    symbolic links followed, a dangling one too) is a package directory or lies inside one. A
    package holds its own files only — anything else makes it fail verification, so no command
    writes there. ``what`` names the option for the message (``--db``, ``--out`` …)."""
    target = Path(os.path.realpath(path))
    for up in (target, *target.parents):
        if (up / "manifest.json").is_file():
            raise UserError(f"{what} {path}: inside the package {up}; a package holds its own files only — write "
                            "elsewhere")
