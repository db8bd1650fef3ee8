"""Remote-config files committed in the repository, bound to a service by a naming rule (docs/scanning.md §11.2).

Nacos is the rule shipped: a service that configures Nacos config reads the data ids

* of ``spring.config.import`` entries ``[optional:]nacos:{data-id}[?group=…]`` (Spring Boot 2.4+;
  a later import overrides an earlier one), and
* of the bootstrap convention (Spring Cloud Alibaba): ``{prefix}-{profile}.{ext}`` for each
  active profile (last listed first), then ``{prefix}.{ext}``, then ``{prefix}``, then the
  ``extension-configs`` (higher index first), then the ``shared-configs`` (higher index first),
  where ``prefix`` is ``spring.cloud.nacos.config.prefix`` or ``spring.application.name`` and
  ``ext`` is ``spring.cloud.nacos.config.file-extension`` (default ``properties``); each in its
  group (``?group=``, ``[n].group``, ``spring.cloud.nacos.config.group``, else ``DEFAULT_GROUP``).

A committed file is an export of data id ``D`` only where its layout says so — never by file name
anywhere in the tree:

* **a directory the user names** (``--config-dir DIR``, repeatable): ``DIR/**/D``; when any is
  named, only those directories are read;
* **a Nacos export tree** ``[…/][{namespace}/]{group}/D``: the file's folder is named exactly as
  the data id's group (``nacos/public/DEFAULT_GROUP/mall-admin-dev.yaml``), wherever it lies;
* **a config-centre folder**: a folder named :data:`CONFIG_FOLDERS` (``nacos``, ``config``,
  ``configs``, ``config-center`` …) that is not a Maven module directory, with ``D`` in it or at
  most :data:`MAX_FOLDER_DEPTH` folders below it (``config/admin/mall-admin-dev.yaml``).

Never under a module's ``src/``, a build output or a hidden folder; a config-centre folder never
under a folder of deployment or documentation material (:data:`NOT_EXPORTS`: ``docker``,
``doc``/``docs``/``document``, ``deploy``, ``k8s``, ``helm``, and a config server's own install
``conf``/``data``/``bin``/``logs`` — ``docker/nacos/conf/application.properties`` is not an export of
its data). Two committed files of one data id are equal-rank sources (a
disagreement between them is AMBIGUOUS). Only data ids of the active profiles are looked for, so
the files of other environments are never read. A data id derived from ``spring.application.name``
is marked ``by_name``: such a file never supplies the name itself (it was chosen by it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from diting.config.sources import ConfigEntry, canonical_key
from diting.config.spring import SpringConfig, add_file_sources

NACOS_CONFIG = "spring.cloud.nacos.config"
DEFAULT_GROUP = "DEFAULT_GROUP"
#: data ids diting can read (a data id without one of these has a format only the config centre knows)
_EXTENSIONS = (".properties", ".yml", ".yaml")
_OWN_TREES = ("src", "target", "build", "node_modules")
#: folders named for a config centre (compared case-insensitively)
CONFIG_FOLDERS = frozenset({"nacos", "nacos-config", "nacos_config", "nacos-configs", "config", "configs",
                            "config-center", "config-centre", "config_center", "configcenter", "config-repo"})
#: folders below a config-centre folder a data id file may lie in (``config/admin/x.yaml``: 1)
MAX_FOLDER_DEPTH = 2
#: folders of deployment or documentation material, never exports of a config centre
NOT_EXPORTS = frozenset({"docker", "doc", "docs", "document", "documents", "documentation", "deploy",
                         "deployment", "deployments", "k8s", "kubernetes", "helm", "charts", "script", "scripts",
                         "sql", "db",
                         # the folders of a config server's own install (nacos/conf/application.properties)
                         "conf", "bin", "data", "logs"})
_NAME_KEY = "spring.application.name"


@dataclass(frozen=True)
class DataIdRequest:
    """One Nacos data id a service reads: its group, and whether it was derived from
    ``spring.application.name`` (``by_name``)."""

    data_id: str
    group: str = DEFAULT_GROUP
    by_name: bool = False


def _names_the_name(raw: str) -> bool:
    """Whether a data id expression refers to ``spring.application.name`` (any relaxed form)."""
    return "spring.applicationname" in raw.lower().replace("-", "").replace("_", "")


def nacos_requests(cfg: SpringConfig) -> list[DataIdRequest]:
    """The Nacos data ids the configuration reads, highest precedence first (empty when the
    service does not use Nacos config or a name does not resolve)."""
    out: list[DataIdRequest] = []
    group = cfg.value(f"{NACOS_CONFIG}.group") or DEFAULT_GROUP
    for _, e in reversed(cfg.entries_of("spring.config.import")):
        for item in reversed([x.strip() for x in e.value.split(",") if x.strip()]):
            if item.startswith("optional:"):
                item = item[len("optional:"):]
            if not item.startswith("nacos:"):
                continue
            raw, _, query = item[len("nacos:"):].partition("?")
            data_id = cfg.expand(raw.strip())
            g = next((v for k, _, v in (q.partition("=") for q in query.split("&")) if k.strip() == "group"), "")
            if data_id:
                out.append(DataIdRequest(data_id, cfg.expand(g.strip()) or group if g.strip() else group,
                                         _names_the_name(raw)))
    if cfg.has_prefix(NACOS_CONFIG) and _enabled(cfg):
        own_prefix = cfg.value(f"{NACOS_CONFIG}.prefix")
        prefix = own_prefix or cfg.value(_NAME_KEY)
        ext = cfg.value(f"{NACOS_CONFIG}.file-extension") or "properties"
        by_name = own_prefix is None or _names_the_name(_raw(cfg, f"{NACOS_CONFIG}.prefix"))
        if prefix:
            names = [f"{prefix}-{p}.{ext}" for p in reversed(cfg.profiles) if p != "default"] + [f"{prefix}.{ext}",
                                                                                                 prefix]
            out.extend(DataIdRequest(n, group, by_name) for n in names)
        for kind in ("extension-configs", "shared-configs", "ext-config", "shared-dataids"):
            found = sorted(((k, e.value) for k, e in _indexed(cfg, f"{NACOS_CONFIG}.{kind}")), reverse=True)
            for n, v in found:
                g = (cfg.value(f"{NACOS_CONFIG}.{kind}[{n}].group") if n >= 0 else None) or DEFAULT_GROUP
                for raw in (x.strip() for x in v.split(",")):
                    data_id = cfg.expand(raw) if raw else None
                    if data_id:
                        out.append(DataIdRequest(data_id, g, _names_the_name(raw)))
    seen: set[str] = set()
    return [r for r in out if not (r.data_id in seen or seen.add(r.data_id))]


def nacos_data_ids(cfg: SpringConfig) -> list[str]:
    """The data ids of :func:`nacos_requests`, highest precedence first."""
    return [r.data_id for r in nacos_requests(cfg)]


def config_centres(cfg: SpringConfig) -> list[str]:
    """The config centres the configuration reads at run time (``nacos``, ``spring-cloud-config``,
    ``apollo``): values they hold may override what committed files say."""
    imports = " ".join(e.value for _, e in cfg.entries_of("spring.config.import"))
    out = []
    if "nacos:" in imports or (cfg.has_prefix(NACOS_CONFIG) and _enabled(cfg)):
        out.append("nacos")
    if "configserver:" in imports or cfg.value("spring.cloud.config.uri") or \
            (cfg.value("spring.cloud.config.discovery.enabled") or "").lower() == "true":
        out.append("spring-cloud-config")
    if (cfg.value("apollo.bootstrap.enabled") or "").lower() == "true" or cfg.value("apollo.meta"):
        out.append("apollo")
    return out


def _enabled(cfg: SpringConfig) -> bool:
    v = cfg.value(f"{NACOS_CONFIG}.enabled")
    return v is None or v.strip().lower() != "false"



def _raw(cfg: SpringConfig, key: str) -> str:
    rv = cfg.get(key)
    return rv.entry.value if rv.entry is not None else ""


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


@dataclass(frozen=True)
class RemoteFile:
    """A committed file that may be a config-centre export: its path, the layout that says so
    (``config-dir``, ``export-tree`` or ``config-folder``) and, in an export tree, its group folder."""

    path: str
    layout: str
    group: str | None = None


def remote_file_index(paths: Iterable[str], module_dirs: Iterable[str] = (),
                      config_dirs: Iterable[str] = ()) -> dict[str, list[RemoteFile]]:
    """The repository's candidate remote-config files by file name, by the layouts of the module
    docstring. ``module_dirs``: folders holding a Maven module (never config-centre folders);
    ``config_dirs``: the ``--config-dir`` folders (repository-relative; when any is given only
    they are read). Built once per scanned tree and handed to :func:`add_remote_sources`."""
    modules = {d.strip("/") for d in module_dirs}
    named = [d.strip("/") for d in config_dirs]
    index: dict[str, list[RemoteFile]] = {}
    for p in sorted(paths):
        parts = p.split("/")
        if not parts[-1].endswith(_EXTENSIONS) or any(seg in _OWN_TREES or seg.startswith(".")
                                                        for seg in parts[:-1]):
            continue
        found: RemoteFile | None = None
        if named:
            if any(p.startswith(d + "/") or not d for d in named):
                found = RemoteFile(p, "config-dir")
        elif len(parts) > 1:
            if not any(seg.lower() in NOT_EXPORTS for seg in parts[:-1]):
                for i in range(len(parts) - 2, max(-1, len(parts) - 3 - MAX_FOLDER_DEPTH), -1):
                    if parts[i].lower() in CONFIG_FOLDERS and "/".join(parts[:i + 1]) not in modules:
                        found = RemoteFile(p, "config-folder")
                        break
            if found is None:  # matched against the data id's group when looked up
                found = RemoteFile(p, "export-tree", parts[-2])
        if found is not None:
            index.setdefault(parts[-1], []).append(found)
    return index


def committed_remote_files(requests: list[DataIdRequest], index: dict[str, list[RemoteFile]]
                           ) -> list[tuple[int, str, DataIdRequest]]:
    """``(precedence, path, request)`` of the indexed files that are exports of a requested data id:
    in a named directory or a config-centre folder, or in an export tree under the data id's group."""
    out = []
    for i, r in enumerate(requests):
        if not r.data_id.endswith(_EXTENSIONS):
            continue
        for f in index.get(r.data_id, ()):
            if f.layout != "export-tree" or f.group == r.group:
                out.append((i, f.path, r))
    return sorted(out, key=lambda t: (t[0], t[1]))


def add_remote_sources(cfg: SpringConfig, index: dict[str, list[RemoteFile]],
                       read_text: Callable[[str], tuple[str, str] | None]) -> list[str]:
    """Add the committed Nacos files of ``cfg``'s data ids (found in ``index``, from
    :func:`remote_file_index`) as rank-2 sources; returns their paths (see
    :func:`~diting.config.spring.add_file_sources` for ``read_text``)."""
    found = committed_remote_files(nacos_requests(cfg), index)
    return add_file_sources(cfg, [(order, path, req.by_name) for order, path, req in found], read_text, -1)
