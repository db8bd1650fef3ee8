"""Identity rules of docs/ir.md §2: record ids, scan ids, segment ids, revisions.

All functions are pure and deterministic.
"""

from __future__ import annotations

import re
from typing import Any

from diting.ir.canonical import dumps_bytes, sha256_hex

#: record_id prefix per entity kind (docs/ir.md §2.3). BEAN and EXTERNAL stable ids
#: already start with their prefix, which is then not repeated.
ENTITY_PREFIX: dict[str, str] = {
    "MODULE": "module:",
    "ARTIFACT": "artifact:",
    "SERVICE": "service:",
    "TYPE": "type:",
    "METHOD": "method:",
    "FIELD": "field:",
    "BEAN": "bean:",
    "ENTRY": "entry:",
    "CONTRACT": "contract:",
    "TOPIC": "topic:",
    "EVENT": "event:",
    "TABLE": "table:",
    "SQL_STATEMENT": "stmt:",
    "CONFIG_KEY": "config:",
    "CACHE_KEY": "cache:",
    "EXTERNAL": "ext:",
}

#: prefixes of the other record families
RELATION_PREFIX = "relation:"
SEGMENT_PREFIX = "source:"
DIAGNOSTIC_PREFIX = "diagnostic:"
BINDING_PREFIX = "binding:"
BRANCH_PREFIX = "branch:"

ALL_PREFIXES = tuple(sorted(set(ENTITY_PREFIX.values()) | {
    RELATION_PREFIX, SEGMENT_PREFIX, DIAGNOSTIC_PREFIX, BINDING_PREFIX, BRANCH_PREFIX}))

_MAX_RECORD_ID = 200
_WS = re.compile(r"\s")
HASHED_ID = re.compile(r"^[a-z]+:[0-9a-f]{32}$")
REVISION_ID = re.compile(r"^rev:[0-9a-f]{64}$")
SCAN_ID = re.compile(r"^scan:.+:[0-9a-f]{16}$")


def record_id_for(prefix: str, stable_id: str) -> str:
    """record_id = prefix + stable_id, or prefix + sha256(stable_id)[:32] when that
    would exceed 200 characters or contain whitespace (docs/ir.md §2.3).

    For BEAN and EXTERNAL the stable id already carries the prefix.
    """
    body = stable_id[len(prefix):] if prefix in ("bean:", "ext:") and stable_id.startswith(prefix) else stable_id
    candidate = prefix + body
    if len(candidate) > _MAX_RECORD_ID or _WS.search(candidate):
        return prefix + sha256_hex(stable_id)[:32]
    return candidate


def entity_record_id(kind: str, stable_id: str) -> str:
    """record_id of an entity of ``kind`` with ``stable_id``."""
    return record_id_for(ENTITY_PREFIX[kind], stable_id)


def relation_stable_id(kind: str, source_stable: str, target: str, ordinal: int = 0) -> str:
    """``{kind}|{source stable_id}|{target stable_id or canonical match_keys}|{ordinal}``."""
    return f"{kind}|{source_stable}|{target}|{ordinal}"


def segment_record_id(path: str, start_line: int, end_line: int) -> str:
    """``source:`` + sha256(path:start-end)[:32]; equal locators are one record."""
    return SEGMENT_PREFIX + sha256_hex(f"{path}:{start_line}-{end_line}")[:32]


def scan_id_for(service_id: str, input_digest: str) -> str:
    """``scan:{service_id}:{input_digest[:16]}``."""
    return f"scan:{service_id}:{input_digest[:16]}"


def implementation_scope_for(service_id: str, commit_sha: str) -> str:
    """``sv:{service_id}:{commit_sha}``."""
    return f"sv:{service_id}:{commit_sha}"


def _strip_refs(value: Any) -> Any:
    """Replace every ``{scan_id, record_id}`` reference by its record_id."""
    if isinstance(value, dict):
        if set(value) == {"scan_id", "record_id"}:
            return value["record_id"]
        return {k: _strip_refs(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_strip_refs(v) for v in value]
    return value


def revision_id_for(record: dict[str, Any], evidence_content_hashes: list[str]) -> str:
    """``rev:`` + sha256 of the canonical record without record_id, revision_id,
    implementation_scope, scan ids and locators, plus the content hash of each
    evidence segment (docs/ir.md §2.4). Moving code changes no revision; editing it does.

    ``record`` is the record as a JSON dict; ``implementation_ref`` is reduced to
    its stable_id and ``evidence_refs`` are replaced by the sorted content hashes.
    """
    body = {k: v for k, v in record.items() if k not in ("record_id", "evidence_refs", "implementation_ref")}
    impl = record.get("implementation_ref")
    if impl:
        body["stable_id"] = impl["stable_id"]
    body = _strip_refs(body)
    body["evidence_content_hashes"] = sorted(evidence_content_hashes)
    return "rev:" + sha256_hex(dumps_bytes(body))  # float-free: built by the scanner, or checked bytes


def diagnostic_record_id(code: str, key: str) -> str:
    """Deterministic diagnostic id from its code and a stable key (path, symbol …)."""
    return DIAGNOSTIC_PREFIX + sha256_hex(f"{code}|{key}")[:32]
