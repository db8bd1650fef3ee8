"""Writing an IR package atomically (SPEC §3).

The package is written into a hidden temporary directory beside its final
place, every file flushed to disk, then renamed into place: a package
directory appears whole or not at all. A package whose manifest is byte-equal
to the one already in place is not rewritten.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Any

import jsonschema

from diting import __version__
from diting.ir.builder import EncodedSet, Placeholders
from diting.ir.canonical import dumps, sha256_hex
from diting.ir.models import Coverage, Manifest

MANIFEST_SCHEMA_PATH = Path(__file__).parent / "manifest-0.1.schema.json"
_UNSAFE = re.compile(r"[^A-Za-z0-9._:~+@,=-]")


@lru_cache(maxsize=1)
def manifest_schema() -> dict[str, Any]:
    """The frozen IR manifest 0.1 JSON Schema (SPEC §3.1)."""
    return json.loads(MANIFEST_SCHEMA_PATH.read_text(encoding="utf-8"))


def package_dir_name(service_id: str, commit_sha: str, profiles: list[str]) -> str:
    """``{service_id}@{commit_sha[:12]}`` plus ``+{profiles}`` when not ``default``; characters
    that could act on the file system (``/``, NUL, spaces …) become ``_``."""
    name = f"{service_id}@{commit_sha[:12]}"
    if profiles and profiles != ["default"]:
        name += "+" + ",".join(profiles)
    name = _UNSAFE.sub("_", name)
    return name if not name.startswith(".") else "_" + name[1:]


def package_files(encoded: EncodedSet, placeholders: Placeholders, scan_id: str, scope: str,
                  analysis_input_bytes: bytes, coverage: dict[str, Any]) -> dict[str, tuple[bytes, int]]:
    """File name → (bytes, record_count) for every file except the manifest: jsonl lines sorted by
    record_id (code-point order), placeholders replaced by the package's scan_id and scope."""
    Coverage.model_validate(coverage)
    files: dict[str, tuple[bytes, int]] = {
        "analysis_input.json": (analysis_input_bytes, 1),
        "coverage.json": ((dumps(coverage) + "\n").encode("utf-8"), 1),
    }
    for name, lines in encoded.lines.items():
        text = "".join(lines[rid] + "\n" for rid in sorted(lines))
        files[name] = (placeholders.stamp_line(text, scan_id, scope).encode("utf-8"), len(lines))
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
    jsonschema.validate(manifest, manifest_schema())
    Manifest.model_validate(manifest)
    return manifest


def _fsync_dir(path: Path) -> None:
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


def write_atomically(out_dir: Path, name: str, files: dict[str, bytes]) -> tuple[Path, str]:
    """Write ``files`` as the package directory ``out_dir/name``.

    Returns the final path and ``"written"``, ``"replaced"`` or ``"unchanged"``.
    Raises OSError when the output directory cannot be written.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    final = out_dir / name
    existing_manifest = final / "manifest.json"
    if existing_manifest.is_file() and existing_manifest.read_bytes() == files["manifest.json"]:
        if all((final / f).is_file() and (final / f).stat().st_size == len(b) for f, b in files.items()):
            return final, "unchanged"
    tmp = Path(tempfile.mkdtemp(prefix=f".{name}.tmp-", dir=out_dir))
    try:
        for fname, data in sorted(files.items()):
            with open(tmp / fname, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
        _fsync_dir(tmp)
        status = "written"
        old: Path | None = None
        if final.exists() or final.is_symlink():
            old = Path(tempfile.mkdtemp(prefix=f".{name}.old-", dir=out_dir))
            os.rmdir(old)
            os.rename(final, old)
            status = "replaced"
        os.rename(tmp, final)
        _fsync_dir(out_dir)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
        return final, status
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
