"""Service identity and config sources (issue 18): unique ids for copied projects, remote-config
layouts, Spring Cloud Config native backends, profile expansion, config imports, and values that
beat code defaults — each on a small repository built in the test."""

from __future__ import annotations

import json
from pathlib import Path

from tests.stagekit import scan_memory
from tests.conftest import BOOT_PLUGIN, make_repo, pom, scan_repo

RES = "src/main/resources"
APP = ("package com.example;\n@org.springframework.boot.autoconfigure.SpringBootApplication\n"
       "public class App { public static void main(String[] a) { } }\n")


def _service(d: str, artifact: str, extra: dict[str, str] | None = None, body: str = BOOT_PLUGIN,
             group: str = "com.example") -> dict[str, str]:
    """A deployable module in folder ``d`` (its own reactor)."""
    files = {f"{d}/pom.xml": pom(artifact, parent=None, body=body, group=group),
             f"{d}/src/main/java/com/example/App.java": APP}
    files.update({f"{d}/{k}": v for k, v in (extra or {}).items()})
    return files


def _ids(result) -> list[str]:
    return sorted(p.service_id for p in result.packages if p.kind == "SERVICE")


def test_colliding_coordinates_in_copied_projects_get_unique_ids_by_module_path(tmp_path):
    name = {f"{RES}/application.properties": "spring.application.name=currency-conversion\n"}
    files = {}
    for d in ("03.micro/conv", "04.docker/conv", "05.k8s/conv"):
        files.update(_service(d, "conv-service", name))
    files.update(_service("06.other/conv", "conv-other", name))
    files.update(_service("07.solo/x", "solo", {f"{RES}/application.properties": "spring.application.name=solo\n"}))
    first = _ids(scan_memory(files, tmp_path / "o1", jobs=2))
    assert first == ["currency-conversion~03.micro.conv", "currency-conversion~04.docker.conv",
                     "currency-conversion~05.k8s.conv", "currency-conversion~conv-other", "solo"]
    assert _ids(scan_memory(files, tmp_path / "o2", jobs=1)) == first       # deterministic


def test_remote_config_files_bind_only_from_layouts_that_say_so():
    from diting.config.remote import remote_file_index
    paths = ["config/admin/mall-admin-dev.yaml", "document/docker/some-server/application.yml",
             "docker/nacos/conf/application.properties", "nacos/public/DEFAULT_GROUP/app.yaml",
             "ops/export/DEFAULT_GROUP/app.yaml", "config-center/app.yaml", "config-center/pom.xml",
             "m/src/main/resources/application.yml", "config/a/b/c/deep.yaml", ".git-ish/config/x.yaml",
             "infra/nacos/data/naming/meta.properties"]
    index = remote_file_index(paths, ["", "config-center", "m"])
    got = {(f.path, f.layout, f.group) for fs in index.values() for f in fs}
    assert ("config/admin/mall-admin-dev.yaml", "config-folder", None) in got
    assert ("nacos/public/DEFAULT_GROUP/app.yaml", "config-folder", None) in got
    assert ("ops/export/DEFAULT_GROUP/app.yaml", "export-tree", "DEFAULT_GROUP") in got
    # a third-party server's own config, a config server install, a module named config, too deep:
    # only ever an export tree of a group named like their folder
    for path, folder in [("document/docker/some-server/application.yml", "some-server"),
                         ("docker/nacos/conf/application.properties", "conf"), ("config-center/app.yaml", "config-center"),
                         ("config/a/b/c/deep.yaml", "c"), ("infra/nacos/data/naming/meta.properties", "naming")]:
        assert (path, "export-tree", folder) in got
    assert not any("src/" in p or p.startswith(".") for p, _, _ in got)
    named = remote_file_index(paths, ["", "config-center", "m"], ["ops"])      # --config-dir: only that folder
    assert {f.path for fs in named.values() for f in fs} == {"ops/export/DEFAULT_GROUP/app.yaml"}


def _nacos_service(d: str, name: str, extra: dict[str, str] | None = None) -> dict[str, str]:
    return _service(d, d.rsplit("/", 1)[-1], {
        f"{RES}/application.yml": f"spring:\n  application:\n    name: {name}\n  config:\n"
                                  "    import: optional:nacos:application.yml\n"
                                  "  cloud:\n    nacos:\n      config:\n        server-addr: nacos:8848\n"
                                  "        file-extension: yaml\n", **(extra or {})})


def _diags(out: Path, code: str) -> list[dict]:
    return [d for p in sorted(out.iterdir()) if (p / "diagnostics.jsonl").is_file()
            for d in map(json.loads, (p / "diagnostics.jsonl").read_text().splitlines()) if d["code"] == code]


def _inputs(out: Path, sid: str) -> dict:
    (pkg,) = [p for p in out.iterdir() if p.name.startswith(sid + "@")]
    return json.loads((pkg / "analysis_input.json").read_text())


def test_a_third_party_servers_application_yml_is_no_nacos_export_and_names_no_service(tmp_path):
    files = {**_nacos_service("svc-a", "svc-a"), **_nacos_service("svc-b", "svc-b"),
             "doc/docker/some-server/application.yml": "spring:\n  application:\n    name: some-server\n",
             # an export of the service's own data id that names another service: chosen by the name,
             # so it never supplies the name (it still supplies values)
             "nacos/DEFAULT_GROUP/svc-a.yaml": "spring:\n  application:\n    name: not-a\nx: from-nacos\n"}
    out = tmp_path / "out"
    assert _ids(scan_memory(files, out)) == ["svc-a", "svc-b"]
    read = [f["path"] for f in _inputs(out, "svc-a")["config_files"]]
    assert "nacos/DEFAULT_GROUP/svc-a.yaml" in read and not any(p.startswith("doc/") for p in read)
    assert not _diags(out, "SERVICE_ID_SHARED")


def test_a_shared_data_id_that_names_every_service_is_a_loud_diagnostic(tmp_path):
    files = {**_nacos_service("svc-a", "svc-a"), **_nacos_service("svc-b", "svc-b"),
             **_nacos_service("svc-c", "svc-c"),
             "config/application.yml": "spring:\n  application:\n    name: some-server\n"}
    out = tmp_path / "out"
    assert _ids(scan_memory(files, out)) == ["some-server~svc-a", "some-server~svc-b", "some-server~svc-c"]
    shared = _diags(out, "SERVICE_ID_SHARED")
    assert len(shared) == 3 and all(d["severity"] == "ERROR" and "'some-server'" in d["message"]
                                    and "config/application.yml" in d["message"] for d in shared)


def test_config_dir_option_names_the_export_folder(tmp_path):
    files = {**_nacos_service("svc-a", "svc-a"),
             "ops/centre/svc-a.yaml": "x: named\n", "config/svc-a.yaml": "x: guessed\n"}
    out = tmp_path / "out"
    scan_memory(files, out, config_dirs=["./ops/"])
    read = [f["path"] for f in _inputs(out, "svc-a")["config_files"]]
    assert "ops/centre/svc-a.yaml" in read and "config/svc-a.yaml" not in read
    import pytest
    from diting.errors import UserError
    with pytest.raises(UserError, match="no such folder"):
        scan_memory(files, tmp_path / "o2", config_dirs=["nowhere"])
    with pytest.raises(UserError, match="relative to its root"):
        scan_memory(files, tmp_path / "o3", config_dirs=["../up"])


def _cfg(files: dict[str, str], profiles=None, extra: dict[str, str] | None = None):
    """A module ``m`` whose config files are ``files``; ``extra`` are other repository files
    (``spring.config.import`` targets), resolved as the scanner does for classpath:/file:."""
    from diting.config.spring import load_spring_config, spring_config_files
    everything = {**files, **(extra or {})}
    root = "m/src/main/resources"

    def resolve(loc: str):
        if loc.startswith("file:"):
            p = "m/" + loc[len("file:"):].removeprefix("./")
        else:
            p = f"{root}/" + loc.removeprefix("classpath:").lstrip("/")
        return p if p in everything else None

    found = spring_config_files(sorted(files), [root])
    return load_spring_config(found, lambda p: (everything[p], "0" * 40), lambda n: None, profiles, resolve)


def test_profiles_include_and_groups_expand_the_active_set():
    files = {
        "m/src/main/resources/application.yml": "spring:\n  profiles:\n    active: prod\n    include: sharding\n"
                                                "    group:\n      prod: [proddb, prodmq]\n",
        "m/src/main/resources/application-sharding.yml": "who: sharding\nonly.sharding: yes\n",
        "m/src/main/resources/application-proddb.yml": "who: proddb\ndb: primary\n",
        "m/src/main/resources/application-prodmq.yml": "mq: rabbit\n",
        "m/src/main/resources/application-prod.yml": "who: prod\n",
        "m/src/main/resources/application-dev.yml": "db: dev\n",
    }
    cfg = _cfg(files)
    assert cfg.profiles == ["prod", "proddb", "prodmq", "sharding"]   # active (its group after it), then included
    assert cfg.get("only.sharding").value == "yes" and cfg.get("db").value == "primary"
    rv = cfg.get("who")
    assert (rv.value, rv.path) == ("sharding", "m/src/main/resources/application-sharding.yml")  # the last listed wins
    assert "spring.profiles.include" in cfg.profile_basis and "spring.profiles.group" in cfg.profile_basis
    assert _cfg(files, ["dev"]).profiles == ["dev", "sharding"]        # --profile: still included
    legacy = {"m/src/main/resources/application.yml": "spring.profiles.active: dev\n",
              "m/src/main/resources/application-dev.yml": "spring.profiles.include: extra\n",   # Boot < 2.4
              "m/src/main/resources/application-extra.yml": "x: from-extra\n"}
    assert _cfg(legacy).get("x").value == "from-extra"


def test_config_import_of_classpath_and_file_locations_ranks_above_its_importer():
    files = {"m/src/main/resources/application.yml":
             "spring:\n  config:\n    import:\n      - optional:classpath:/extra/a.yml\n"
             "      - classpath:extra/b.properties\n      - optional:file:./conf/c.yml\n"
             "      - optional:nacos:ignored.yml\n      - optional:classpath:missing.yml\n"
             "x: local\ny: local\nz: local\nw: local\n",
             "m/src/main/resources/config/application.yml": "w: config-dir\n"}
    extra = {"m/src/main/resources/extra/a.yml": "x: a\ny: a\nw: a\n",
             "m/src/main/resources/extra/b.properties": "y=b\n",
             "m/conf/c.yml": "z: c\n"}
    cfg = _cfg(files, extra=extra)
    assert (cfg.get("x").value, cfg.get("x").path) == ("a", "m/src/main/resources/extra/a.yml")
    assert cfg.get("y").value == "b"                # a later import beats an earlier one
    assert cfg.get("z").value == "c"                # file: relative to the module
    assert cfg.get("w").value == "config-dir"       # config/application.yml still beats application.yml's imports
    assert "m/conf/c.yml" in [r.path for r in cfg.files_read]


def test_an_included_sharding_profile_confirms_the_shard_key(tmp_path):
    files = _service(".", "trade", {
        f"{RES}/application.yml": "spring:\n  profiles:\n    include: sharding\n  datasource:\n"
                                  "    url: jdbc:mysql://db.example:3306/trade\n",
        f"{RES}/application-sharding.yml": "spring:\n  shardingsphere:\n    rules:\n      sharding:\n"
        "        tables:\n          t_order:\n            actual-data-nodes: ds$->{0..1}.t_order_$->{0..1}\n"
        "            table-strategy:\n              standard:\n                sharding-column: user_id\n",
        f"{RES}/mapper/OrderMapper.xml": '<?xml version="1.0"?>\n<!DOCTYPE mapper PUBLIC "-//mybatis.org//DTD Mapper '
        '3.0//EN" "http://mybatis.org/dtd/mybatis-3-mapper.dtd">\n<mapper namespace="com.example.OrderMapper">\n'
        '  <select id="byUser">select * from t_order where user_id = #{u}</select>\n</mapper>\n',
        "src/main/java/com/example/OrderMapper.java": "package com.example;\n@org.apache.ibatis.annotations.Mapper\n"
        "public interface OrderMapper { Object byUser(long u); }\n"})
    files = {k.removeprefix("./"): v for k, v in files.items()}
    out = tmp_path / "out"
    scan_memory(files, out)
    (pkg,) = [p for p in out.iterdir() if p.name.startswith("trade@")]
    tables = {e["name"]: e for e in map(json.loads, (pkg / "entities.jsonl").read_text().splitlines())
              if e["kind"] == "TABLE"}
    assert tables["t_order"]["confirmed_shard_key"] == "user_id"
    assert json.loads((pkg / "analysis_input.json").read_text())["spring_profiles"] == ["sharding"]


def _bindings(out: Path, sid: str) -> dict[tuple[str, str], dict]:
    (pkg,) = [p for p in out.iterdir() if p.name.startswith(sid + "@")]
    return {(b["consumer_ref"]["record_id"].rsplit(".", 1)[-1], b["config_key"]): b
            for b in map(json.loads, (pkg / "config_bindings.jsonl").read_text().splitlines())}


def test_a_value_in_the_services_config_beats_the_code_default_for_every_reader(tmp_path):
    v = "org.springframework.beans.factory.annotation.Value"
    laf = "com.jd.laf.config.spring.annotation.LafValue"
    files = _service(".", "locks", {
        f"{RES}/bootstrap.yml": "spring:\n  application:\n    name: locks\n  cloud:\n    nacos:\n      config:\n"
                                "        server-addr: nacos:8848\n",
        f"{RES}/application.yml": "lock:\n  ttl: 900\n",
        "src/main/java/com/example/Locks.java": f"package com.example;\n@org.springframework.stereotype.Component\n"
        f"public class Locks {{\n  @{v}(\"${{lock.ttl:600}}\") private long ttl;\n"
        f"  @{laf}(\"${{lock.ttl:600}}\") private long lafTtl;\n"
        "  @org.springframework.beans.factory.annotation.Autowired com.jd.laf.config.ConfiguratorManager m;\n"
        "  public String read() { return m.getProperty(\"lock.ttl\", \"600\"); }\n"
        f"  @{v}(\"${{lock.wait:3}}\") private long wait;\n}}\n"})
    out = tmp_path / "out"
    scan_memory({k.removeprefix("./"): val for k, val in files.items()}, out)
    b = _bindings(out, "locks")
    for consumer, key in [("ttl", "config://lock.ttl"), ("lafTtl", "ducc://lock.ttl"), ("Locks#read()", "ducc://lock.ttl")]:
        got = b[(consumer, key)]
        assert (got["value_resolution"], got["value"], got["attributes"]["default_in_code"]) == ("RESOLVED", "900", "600")
        assert got["source_refs"], consumer            # names the file (a segment of application.yml)
    assert b[("ttl", "config://lock.ttl")]["attributes"]["config_centre_may_override"] == ["nacos"]
    assert b[("lafTtl", "ducc://lock.ttl")]["attributes"]["config_centre_may_override"] == ["ducc"]
    wait = b[("wait", "config://lock.wait")]
    assert (wait["value_resolution"], wait["default_value"], wait["attributes"]["config_centre_may_override"]) == \
        ("DEFAULT_ONLY", "3", ["nacos"])


CTRL = ("package com.example;\n@org.springframework.web.bind.annotation.RestController\n"
        "@org.springframework.web.bind.annotation.RequestMapping(\"/users\")\npublic class Users {\n"
        "  @org.springframework.web.bind.annotation.GetMapping(\"/current\") public String current() { return \"\"; }\n}\n")
FEIGN = ("package com.example;\n@org.springframework.cloud.openfeign.FeignClient(name = \"auth-service\")\n"
         "public interface AuthClient {\n  @org.springframework.web.bind.annotation.GetMapping(\"/uaa/users/current\")\n"
         "  String current();\n}\n")
CALLER = ("package com.example;\n@org.springframework.stereotype.Service\npublic class Me {\n"
          "  @org.springframework.beans.factory.annotation.Autowired AuthClient auth;\n"
          "  public String me() { return auth.current(); }\n}\n")
SERVER_POM_BODY = ("<dependencies><dependency><groupId>org.springframework.cloud</groupId>"
                   "<artifactId>spring-cloud-config-server</artifactId></dependency></dependencies>" + BOOT_PLUGIN)
CLIENT_POM_BODY = ("<dependencies><dependency><groupId>org.springframework.cloud</groupId>"
                   "<artifactId>spring-cloud-starter-config</artifactId></dependency></dependencies>" + BOOT_PLUGIN)


def _endpoints(out: Path, sid: str) -> list[str]:
    (pkg,) = [p for p in out.iterdir() if p.name.startswith(sid + "@")]
    return sorted(e["urn"] for e in map(json.loads, (pkg / "entities.jsonl").read_text().splitlines())
                  if e["kind"] == "CONTRACT" and (e.get("urn") or "").startswith("http://"))


def test_a_native_config_server_serves_its_search_locations_to_its_clients(tmp_path):
    server = {f"{RES}/application.yml": "server:\n  port: 8888\nspring:\n  application:\n    name: config\n"
                                        "  profiles:\n    active: native\n  cloud:\n    config:\n      server:\n"
                                        "        native:\n          search-locations: classpath:/shared\n",
              f"{RES}/shared/application.yml": "who: shared-application\nx: shared-application\nonly.app: a\n",
              f"{RES}/shared/application-dev.yml": "who: shared-application-dev\nx: shared-application-dev\n",
              f"{RES}/shared/auth-service.yml": "server:\n  servlet:\n    context-path: /uaa\n"
                                                "who: shared-auth\nspring:\n  application:\n    name: not-auth\n",
              f"{RES}/shared/auth-service-dev.yml": "who: shared-auth-dev\n",
              f"{RES}/shared/other-service.yml": "server:\n  servlet:\n    context-path: /other\n"}
    files = {**_service("config", "config", server, body=SERVER_POM_BODY),
             **_service("auth", "auth", {
                 f"{RES}/bootstrap.yml": "spring:\n  application:\n    name: auth-service\n  profiles:\n"
                                         "    active: dev\n  cloud:\n    config:\n      uri: http://config:8888\n",
                 f"{RES}/application.yml": "who: local\nx: local\nlocal.only: here\n",
                 "src/main/java/com/example/Users.java": CTRL}),
             # a client by its dependency alone (the estate's one config server), Boot 2.4+ style
             **_service("plain", "plain", {f"{RES}/application.yml": "spring:\n  application:\n    name: plain\n"
                                           "x: local\n", "src/main/java/com/example/Users.java": CTRL},
                        body=CLIENT_POM_BODY),
             # not a client: reads no config server; it calls auth-service by its Feign name
             **_service("alone", "alone", {f"{RES}/application.yml": "spring:\n  application:\n    name: alone\n",
                                           "src/main/java/com/example/Users.java": CTRL,
                                           "src/main/java/com/example/AuthClient.java": FEIGN,
                                           "src/main/java/com/example/Me.java": CALLER,
                                           "src/main/java/com/example/App.java": APP.replace(
                                               "@org.springframework.boot", "@org.springframework.cloud.openfeign."
                                               "EnableFeignClients\n@org.springframework.boot")})}
    out = tmp_path / "out"
    assert _ids(scan_memory(files, out)) == ["alone", "auth-service", "config", "plain"]
    assert _endpoints(out, "auth-service") == ["http://auth-service/uaa/users/current#GET"]
    assert "http://alone/users/current#GET" in _endpoints(out, "alone")
    from diting.graph.store import build
    from diting.graph.query import query
    build(tmp_path / "g.duckdb", [out])
    _, rows = query(tmp_path / "g.duckdb", "SELECT src_service, dst_service, resolution_status FROM "
                    "cross_service_edges WHERE urn = 'http://auth-service/uaa/users/current#GET'")
    assert rows == [("alone", "auth-service", "RESOLVED")]          # was PATH_NOT_FOUND without the server's file
    read = [f["path"] for f in _inputs(out, "auth-service")["config_files"]]
    assert read[:4] == ["config/src/main/resources/shared/auth-service-dev.yml",
                        "config/src/main/resources/shared/auth-service.yml",
                        "config/src/main/resources/shared/application-dev.yml",
                        "config/src/main/resources/shared/application.yml"]          # precedence order
    assert "config/src/main/resources/application.yml" not in read     # the server's own file is never served
    assert "shared/other-service.yml" not in " ".join(read)
    plain = [f["path"] for f in _inputs(out, "plain")["config_files"]]
    assert plain[0] == "config/src/main/resources/shared/application.yml"
    assert not any("shared" in f["path"] for f in _inputs(out, "alone")["config_files"])


def test_config_server_precedence_for_one_client():
    from diting.config.configserver import NativeServer, served_files
    srv = NativeServer("config/pom.xml", "config", "8888", ["r/shared", "r/more/{application}"])
    paths = {"r/shared/app.yml", "r/shared/app-dev.yml", "r/shared/application.yml", "r/shared/application-dev.yml",
             "r/more/app/app.yml", "r/shared/app-prod.yml"}
    assert served_files(srv, "app", ["dev"], paths) == [
        (1, "r/shared/app-dev.yml"), (2, "r/more/app/app.yml"), (3, "r/shared/app.yml"),   # a later location wins
        (5, "r/shared/application-dev.yml"), (7, "r/shared/application.yml")]


def test_snapshot_values_feed_endpoint_paths(tmp_path):
    files = _service(".", "shop", {f"{RES}/application.yml": "server:\n  servlet:\n    context-path: /file\n",
                                   "src/main/java/com/example/Users.java": CTRL})
    repo, sha = make_repo(tmp_path, {k.removeprefix("./"): v for k, v in files.items()})
    snap = tmp_path / "snap.json"
    snap.write_text(json.dumps({"snapshot_id": "s1", "environment": "prod", "captured_at": "now", "entries": [
        {"scheme": "config", "key": "server.servlet.context-path", "value": "/shop"},
        {"scheme": "config", "key": "spring.mvc.servlet.path", "value": "/api"}]}))
    out = tmp_path / "out"
    scan_repo(repo, out, sha, config_snapshot=snap)
    assert _endpoints(out, "shop") == ["http://shop/shop/api/users/current#GET"]
    scan_repo(repo, tmp_path / "o2", sha)
    assert _endpoints(tmp_path / "o2", "shop") == ["http://shop/file/users/current#GET"]


def test_a_client_is_served_by_the_native_server_its_uri_or_discovery_id_names():
    from diting.config.configserver import NativeServer, choose_server, uses_config_server
    a, b = NativeServer("a/pom.xml", "config-a", "8888"), NativeServer("b/pom.xml", "config-b", "9999")
    assert choose_server([a], None, None) is a                             # the estate's one server
    assert choose_server([a, b], "http://config-b:8080", None) is b         # by host
    assert choose_server([a, b], "http://localhost:9999", None) is b        # by port
    assert choose_server([a, b], None, "CONFIG-A") is a                     # by discovery service id
    assert choose_server([a, b], "http://elsewhere:1", None) is None        # neither: none, never a guess
    cfg = _cfg({"m/src/main/resources/application.yml":
                "spring:\n  config:\n    import: optional:configserver:http://config-b:8080\n"})
    assert uses_config_server(cfg, False) == (True, "http://config-b:8080", None)
    off = _cfg({"m/src/main/resources/application.yml": "spring.cloud.config.enabled: false\n"})
    assert uses_config_server(off, True)[0] is False                       # a starter switched off


def test_an_include_inside_an_active_profile_document_activates_its_profile():
    files = {"m/src/main/resources/application.yml": "spring.profiles.active: dev\n---\nspring:\n  profiles: dev\n"
                                                     "  profiles.include: mq\n",
             "m/src/main/resources/application-mq.yml": "mq: on\n"}
    cfg = _cfg(files)
    assert cfg.profiles == ["dev", "mq"] and cfg.get("mq").value == "on"


def test_a_client_of_the_estates_git_backed_server_reads_no_native_files(tmp_path):
    native = {f"{RES}/application.yml": "spring:\n  application:\n    name: cfg-native\n  profiles:\n"
                                        "    active: native\n", f"{RES}/config/app.yml": "x: native\n"}
    git = {f"{RES}/application.yml": "server:\n  port: 9999\nspring:\n  application:\n    name: cfg-git\n"
                                     "  cloud:\n    config:\n      server:\n        git:\n          uri: https://g/x\n"}
    client = {f"{RES}/application.yml": "spring:\n  application:\n    name: app\n  config:\n"
                                        "    import: configserver:http://cfg-git:9999\nx: local\n"}
    by_dependency = {f"{RES}/application.yml": "spring:\n  application:\n    name: dep\nx: local\n"}
    files = {**_service("n", "n", native, body=SERVER_POM_BODY), **_service("g", "g", git, body=SERVER_POM_BODY),
             **_service("c", "c", client), **_service("d", "d", by_dependency, body=CLIENT_POM_BODY)}
    out = tmp_path / "out"
    scan_memory(files, out)
    for sid in ("app", "dep"):       # by URI: the git server (nothing here); by dependency: two servers, none chosen
        assert not any("config/app.yml" in f["path"] for f in _inputs(out, sid)["config_files"])
    assert [d for d in _diags(out, "CONFIG_VALUE_UNKNOWN") if "2 config servers could serve it" in d["message"]]
