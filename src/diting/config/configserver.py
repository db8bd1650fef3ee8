"""Spring Cloud Config **native** backends: the files a config server in the repository serves.

A config server is a deployable module that depends on ``spring-cloud-config-server`` or declares
``@EnableConfigServer``; it serves from the repository when ``native`` is one of its active
profiles. Its search locations are ``spring.cloud.config.server.native.search-locations``
(comma-separated; ``{application}``, ``{profile}`` and ``{label}`` filled per request), else
``classpath:/`` and ``classpath:/config/``; a ``classpath:`` location is a folder of each resource
root of the server module (``file:`` locations lie outside the repository and are not read). The
server's own config files are never served (Spring Cloud Config removes them from a response).

For a client named ``{application}`` (``spring.cloud.config.name``, else ``spring.application.name``)
with profiles ``{profile}`` (``spring.cloud.config.profile``, else its active profiles) the server
serves, highest precedence first: ``{application}-{profile}`` (last profile first),
``{application}``, ``application-{profile}``, ``application`` — each ``.properties``, ``.yml`` or
``.yaml``, a later search location above an earlier one. They rank above every file of the
client itself (docs/scanning.md §10.1, rank 2; §11.3).

A service is a client when it imports ``[optional:]configserver:``, sets
``spring.cloud.config.uri`` or ``spring.cloud.config.discovery.enabled``, or depends on
``spring-cloud-starter-config`` / ``spring-cloud-config-client`` (and does not set
``spring.cloud.config.enabled: false``). With several config servers in the repository (of any
backend) the one named by the client (the URI's host or port, the discovery service id) serves it;
otherwise none. A server of another backend (git, JDBC …) serves nothing from the repository.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from diting.config.spring import SpringConfig

SERVER_ARTIFACT = "org.springframework.cloud:spring-cloud-config-server"
SERVER_ANNOTATION = "org.springframework.cloud.config.server.EnableConfigServer"
CLIENT_ARTIFACTS = ("org.springframework.cloud:spring-cloud-starter-config",
                    "org.springframework.cloud:spring-cloud-config-client")
DEFAULT_LOCATIONS = ("classpath:/", "classpath:/config/")
_EXTS = (".properties", ".yml", ".yaml")
_SEARCH = "spring.cloud.config.server.native.search-locations"


@dataclass
class NativeServer:
    """A native config server of the repository: its module, name, port, and search locations
    as ``(template folder, evidence)`` — a folder may hold ``{application}``/``{profile}``."""

    module: str
    name: str | None
    port: str | None
    locations: list[str] = field(default_factory=list)
    own_files: set[str] = field(default_factory=set)
    skipped: list[str] = field(default_factory=list)
    #: False for a server with another backend (git, JDBC …): it serves nothing from the repository
    native: bool = True



def native_server(module: str, cfg: SpringConfig, resource_roots: list[str]) -> NativeServer:
    """A config-server module as a server: its native backend's locations, or ``native`` False
    when ``native`` is not an active profile (its files lie elsewhere)."""
    server = NativeServer(module, cfg.value("spring.application.name"), cfg.value("server.port") or "8888",
                          own_files={s.path for s in cfg.sources}, native="native" in cfg.profiles)
    if not server.native:
        return server
    rv = cfg.get(_SEARCH)
    if rv.entry is None and rv.status != "AMBIGUOUS":
        locs = list(DEFAULT_LOCATIONS)  # the server sets none: Spring's defaults
    else:  # each location expanded on its own; one that does not resolve is skipped, never defaulted
        written = [x.strip() for x in (rv.entry.value if rv.entry is not None else "").split(",") if x.strip()]
        locs = []
        for w in written:
            got = cfg.expand(w)
            if got is None or not got.strip():
                server.skipped.append(w)
            else:
                locs.append(got.strip())
    for loc in locs:
        if not loc.startswith("classpath:"):
            server.skipped.append(loc)
            continue
        parts = [x for x in loc[len("classpath:"):].strip().split("/") if x and x != "."]
        rel = "/".join(parts)
        if ".." in parts:
            server.skipped.append(loc)
            continue
        for root in resource_roots:
            folder = "/".join(x for x in (root, rel) if x)
            if folder not in server.locations:
                server.locations.append(folder)
    return server


def uses_config_server(cfg: SpringConfig, depends_on_client: bool) -> tuple[bool, str | None, str | None]:
    """``(is a client, URI, discovery service id)`` of a service's configuration."""
    uri = None
    for _, e in cfg.entries_of("spring.config.import"):
        for item in (x.strip() for x in (cfg.expand(e.value) or "").split(",")):
            item = item.removeprefix("optional:")
            if item.startswith("configserver:"):
                uri = item[len("configserver:"):] or uri or ""
    explicit = uri is not None
    uri = uri or cfg.value("spring.cloud.config.uri")
    discovery = (cfg.value("spring.cloud.config.discovery.enabled") or "").lower() == "true"
    service_id = cfg.value("spring.cloud.config.discovery.service-id") if discovery else None
    enabled = (cfg.value("spring.cloud.config.enabled") or "true").lower() != "false"
    client = explicit or (enabled and (bool(uri) or discovery or depends_on_client))
    return client, uri, service_id or ("configserver" if discovery else None)


def choose_server(servers: list[NativeServer], uri: str | None, service_id: str | None) -> NativeServer | None:
    """The server a client reaches: the only one, else the one its URI or discovery id names."""
    if len(servers) == 1:
        return servers[0]
    named = []
    if service_id:
        named = [s for s in servers if s.name and s.name.lower() == service_id.lower()]
    elif uri:
        first = uri.split(",")[0].strip()
        try:
            parts = urlsplit(first)
            host, port = parts.hostname, str(parts.port) if parts.port else None
        except ValueError:
            host, port = None, None
        named = [s for s in servers if host and s.name and s.name.lower() == host.lower()] or \
            [s for s in servers if port and s.port == port]
    return named[0] if len(named) == 1 else None


def served_files(server: NativeServer, application: str, profiles: list[str], paths) -> list[tuple[int, str]]:
    """``(precedence, path)`` of the files ``server`` serves to ``application`` with ``profiles``,
    highest first (``paths``: the repository's files)."""
    names: list[tuple[str, str | None]] = []  # (base name, profile)
    for base in (application, "application"):
        names.extend((base, p) for p in reversed(profiles))
        names.append((base, None))
    out: list[tuple[int, str]] = []
    seen: set[str] = set()
    order = 0
    for base, profile in names:
        stem = f"{base}-{profile}" if profile else base
        for loc in reversed(server.locations):  # a later location wins
            folder = loc.replace("{application}", application).replace("{profile}", profile or "default") \
                .replace("{label}", "master")
            for ext in _EXTS:
                path = f"{folder}/{stem}{ext}" if folder else f"{stem}{ext}"
                if path in paths and path not in server.own_files and path not in seen:
                    seen.add(path)
                    out.append((order, path))
            order += 1
    return out


_PROFILE_SAFE = re.compile(r"^[A-Za-z0-9_.\-]+$")


def client_request(cfg: SpringConfig, name: str) -> tuple[str, list[str]]:
    """``(application, profiles)`` a client asks its config server for."""
    app = cfg.value("spring.cloud.config.name") or name
    prof = cfg.value("spring.cloud.config.profile")
    profiles = [p.strip() for p in prof.split(",") if p.strip()] if prof else list(cfg.profiles)
    return app, [p for p in profiles if _PROFILE_SAFE.match(p)]
