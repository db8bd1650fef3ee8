"""Remote-config files committed in the repository, bound to a service by a naming rule (SPEC §4.4 rank 2).

Nacos is the rule shipped: a service that configures Nacos config reads the data ids

* of ``spring.config.import`` entries ``[optional:]nacos:{data-id}[?group=…]`` (Spring Boot 2.4+;
  a later import overrides an earlier one), and
* of the bootstrap convention (Spring Cloud Alibaba): ``{prefix}-{profile}.{ext}`` for each
  active profile (last listed first), then ``{prefix}.{ext}``, then ``{prefix}``, then the
  ``extension-configs`` (higher index first), then the ``shared-configs`` (higher index first),
  where ``prefix`` is ``spring.cloud.nacos.config.prefix`` or ``spring.application.name`` and
  ``ext`` is ``spring.cloud.nacos.config.file-extension`` (default ``properties``).

A committed file whose name equals a data id is a source of that rank, wherever it lies in the
repository — except under a ``src/`` tree or a build output directory, where files are a
module's own resources, not exports of the config centre. Two committed files of one data id
are equal-rank sources (a disagreement between them is AMBIGUOUS). Only data ids of the active
profiles are looked for, so the files of other environments are never read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from diting.config.sources import ConfigEntry, canonical_key, parse_config
from diting.config.spring import SpringConfig

NACOS_CONFIG = "spring.cloud.nacos.config"
#: data ids diting can read (a data id without one of these has a format only the config centre knows)
_EXTENSIONS = (".properties", ".yml", ".yaml")
_OWN_TREES = ("src", "target", "build", "node_modules")


def nacos_data_ids(cfg: SpringConfig) -> list[str]:
    """The Nacos data ids the configuration reads, highest precedence first (empty when the
    service does not use Nacos config or a name does not resolve)."""
    ids: list[str] = []
    for _, e in reversed(cfg.entries_of("spring.config.import")):
        for item in reversed([x.strip() for x in e.value.split(",") if x.strip()]):
            if item.startswith("optional:"):
                item = item[len("optional:"):]
            if not item.startswith("nacos:"):
                continue
            data_id = cfg.expand(item[len("nacos:"):].split("?", 1)[0].strip())
            if data_id:
                ids.append(data_id)
    if cfg.has_prefix(NACOS_CONFIG) and _enabled(cfg):
        prefix = _value(cfg, f"{NACOS_CONFIG}.prefix") or _value(cfg, "spring.application.name")
        ext = _value(cfg, f"{NACOS_CONFIG}.file-extension") or "properties"
        if prefix:
            ids.extend(f"{prefix}-{p}.{ext}" for p in reversed(cfg.profiles) if p != "default")
            ids.extend([f"{prefix}.{ext}", prefix])
        for kind in ("extension-configs", "shared-configs", "ext-config", "shared-dataids"):
            found = sorted(((k, e.value) for k, e in _indexed(cfg, f"{NACOS_CONFIG}.{kind}")), reverse=True)
            for _, v in found:
                for data_id in (x.strip() for x in v.split(",")):
                    data_id = cfg.expand(data_id) if data_id else None
                    if data_id:
                        ids.append(data_id)
    seen: set[str] = set()
    return [i for i in ids if not (i in seen or seen.add(i))]


def _enabled(cfg: SpringConfig) -> bool:
    v = _value(cfg, f"{NACOS_CONFIG}.enabled")
    return v is None or v.strip().lower() != "false"


def _value(cfg: SpringConfig, key: str) -> str | None:
    rv = cfg.get(key)
    return rv.value.strip() if rv.status == "RESOLVED" and rv.value and rv.value.strip() else None


def _indexed(cfg: SpringConfig, key: str) -> Iterable[tuple[int, ConfigEntry]]:
    """``(index, entry)`` of ``key[n].data-id`` (or ``key`` itself for a comma list)."""
    base = canonical_key(key)
    seen: set[int] = set()
    for src in cfg.sources:
        for doc in src.file.documents:
            for e in doc.entries:
                if e.key == base:
                    if -1 not in seen:
                        seen.add(-1)
                        yield -1, e
                elif e.key.startswith(base + "[") and e.key.endswith("].data-id"):
                    try:
                        n = int(e.key[len(base) + 1:-len("].data-id")])
                    except ValueError:
                        continue
                    if n not in seen:
                        seen.add(n)
                        yield n, e


def remote_file_index(paths: Iterable[str]) -> dict[str, list[str]]:
    """The repository's candidate remote-config files by file name (see the module docstring for
    the files that never count). Built once per scanned tree and handed to :func:`add_remote_sources`."""
    index: dict[str, list[str]] = {}
    for p in paths:
        parts = p.split("/")
        if parts[-1].endswith(_EXTENSIONS) and not any(
                seg in _OWN_TREES or seg.startswith(".") for seg in parts[:-1]):
            index.setdefault(parts[-1], []).append(p)
    return index


def committed_remote_files(data_ids: list[str], index: dict[str, list[str]]) -> list[tuple[int, str]]:
    """``(precedence, path)`` of the indexed files named like a data id."""
    return sorted((i, p) for i, d in enumerate(data_ids) if d.endswith(_EXTENSIONS) for p in index.get(d, ()))


def add_remote_sources(cfg: SpringConfig, index: dict[str, list[str]],
                       read_text: Callable[[str], tuple[str, str] | None]) -> list[str]:
    """Add the committed Nacos files of ``cfg``'s data ids (found in ``index``, from
    :func:`remote_file_index`) as rank-2 sources; returns their paths.
    ``read_text(path)`` gives ``(text, blob_sha)`` or None (unreadable files are skipped, and
    listed in ``cfg.unreadable`` when they do not parse)."""
    added: list[str] = []
    for order, path in committed_remote_files(nacos_data_ids(cfg), index):
        got = read_text(path)
        if got is None:
            cfg.unreadable.append((path, "the file could not be read as text (binary, too large, or not a blob)",
                                   None))
            continue
        text, blob = got
        cf = parse_config(path, text)
        if cf.error:
            cfg.unreadable.append((path, cf.error, cf.error_line))
            continue
        cfg.add_source(path, cf, blob, -1, order)
        added.append(path)
    return added
