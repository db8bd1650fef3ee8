"""Files a user hands to diting (rule files, the inventory): YAML read safely, errors as one line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from diting.errors import UserError

#: a rule or inventory file larger than this is refused
MAX_USER_FILE_BYTES = 16 * 1024 * 1024


def load_yaml_list(path: Path, what: str, key: str) -> tuple[dict[str, Any], bytes]:
    """The YAML mapping in ``path`` (whose ``key`` is a list), and the file's bytes.

    ``what`` names the file in messages ("inventory file", "rule file"). Raises
    :class:`UserError` when the file cannot be read, is not YAML, or has no such list."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_USER_FILE_BYTES + 1)
    except OSError as exc:
        raise UserError(f"cannot read {what} {path}: {exc.strerror}") from exc
    if len(data) > MAX_USER_FILE_BYTES:
        raise UserError(f"{what} {path} is larger than {MAX_USER_FILE_BYTES} bytes")
    try:
        doc = yaml.safe_load(data.decode("utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise UserError(f"{what} {path} is not valid YAML: {exc}") from exc
    if not isinstance(doc, dict) or not isinstance(doc.get(key), list):
        raise UserError(f"{what} {path} must be a mapping with a '{key}' list")
    return doc, data
