"""config/: properties and YAML reading, canonical keys, Spring precedence, Maven filtering."""

from __future__ import annotations

from diting.config.sources import canonical_key, filter_resource, parse_properties, parse_yaml
from diting.config.spring import load_spring_config, spring_config_files


def test_properties_parser():
    text = ("# comment\n! also\nspring.application.name = order\\\n   -center\n"
            "a\\ key:value with \\u4e2d\nempty\nwin=x\r\nlast\\\\\n")
    cf = parse_properties("a.properties", text)
    got = {e.raw_key: (e.value, e.line, e.end_line) for e in cf.documents[0].entries}
    assert got["spring.application.name"] == ("order-center", 3, 4)
    assert got["a key"] == ("value with 中", 5, 5)
    assert got["empty"] == ("", 6, 6)
    assert got["win"] == ("x", 7, 7)
    assert got["last\\"] == ("", 8, 8)


def test_canonical_key():
    assert canonical_key("spring.applicationName") == "spring.application-name"
    assert canonical_key("spring.application_name") == "spring.application-name"
    assert canonical_key("Server.Port") == "server.port"
    assert canonical_key("a.list[0].name") == "a.list[0].name"


def test_yaml_flatten_lists_profiles_and_lines():
    text = ("spring:\n  application:\n    name: svc\n  profiles:\n    active: dev\nlist:\n  - a\n  - b: 1\n"
            "---\nspring:\n  config:\n    activate:\n      on-profile: prod\nx: prod-only\n")
    cf = parse_yaml("a.yml", text)
    base, prod = cf.documents
    assert {e.key: (e.value, e.line) for e in base.entries} == {
        "spring.application.name": ("svc", 3), "spring.profiles.active": ("dev", 5),
        "list[0]": ("a", 7), "list[1].b": ("1", 8)}
    assert prod.profiles == ["prod"]


def test_yaml_errors_and_alias_bombs_are_bounded():
    assert parse_yaml("a.yml", "a: [1, 2\nb: c").error
    bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
        f"*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n"
        for i in range(8))
    cf = parse_yaml("bomb.yml", bomb)
    assert cf.budget_exhausted


def test_filter_resource():
    text, missing = filter_resource("name: @artifactId@\nmail: a@b.com\nx: @nope@", {"artifactId": "svc"}.get)
    assert text == "name: svc\nmail: a@b.com\nx: @nope@" and missing == ["nope"]


def _cfg(files: dict[str, str], profiles=None):
    found = spring_config_files(sorted(files), ["m/src/main/resources"])
    return load_spring_config(found, lambda p: (files[p], "0" * 40), lambda n: {"profile.active": "dev"}.get(n),
                              profiles)


def test_spring_precedence():
    files = {
        "m/src/main/resources/application.yml": "spring:\n  profiles:\n    active: '@profile.active@'\n"
                                                "  application:\n    name: base\nx: 1\n",
        "m/src/main/resources/application-dev.yml": "x: 2\n",
        "m/src/main/resources/application-prod.yml": "x: 3\nspring.application.name: prod\n",
        "m/src/main/resources/bootstrap.properties": "spring.application.name=boot\ny=${x}-${z:dflt}\n",
        "m/src/main/resources/config/application.properties": "w=in-config-dir\n",
        "m/src/main/resources/application.properties": "w=root\n",
    }
    cfg = _cfg(files)
    assert cfg.profiles == ["dev"]
    assert cfg.get("spring.application.name").value == "base"      # application beats bootstrap
    assert cfg.get("x").value == "2"                               # application-{p} beats application
    assert cfg.get("w").value == "in-config-dir"                   # config/ beats the root
    rv = cfg.get("y")
    assert rv.value == "2-dflt" and rv.basis == "PLACEHOLDER_DEFAULT"
    assert "m/src/main/resources/application-prod.yml" not in [s.path for s in cfg.sources]  # inactive: never read
    assert _cfg(files, ["prod"]).get("spring.application.name").value == "prod"
    assert _cfg(files, ["dev", "prod"]).get("x").value == "3"        # the last listed profile wins


def test_equal_rank_disagreement_is_ambiguous():
    files = {"m/src/main/resources/application.yml": "a: 1\n", "m/src/main/resources/application.yaml": "a: 2\n",
             "m/src/main/resources/application.properties": "b: 1\n"}
    cfg = _cfg(files)
    assert cfg.get("a").status == "AMBIGUOUS" and len(cfg.get("a").candidates) == 2
    assert cfg.get("missing").status == "UNKNOWN"
    assert _cfg({"m/src/main/resources/application.yml": "a: ${nope}\n"}).get("a").status == "UNKNOWN"


def test_placeholder_bombs_and_cycles_end():
    bomb = "${a:x}" * 16
    files = {"m/src/main/resources/application.properties": f"spring.application.name={bomb}\na={bomb}\n"
                                                             "b=${c}\nc=${b}\nd=${d:dflt}\n"}
    cfg = _cfg(files)
    # a refers to itself: a cycle however many defaults it offers (Spring refuses a placeholder met again
    # inside its own value before it looks at the default), and so is every key that names it
    for key in ("a", "spring.application.name", "b", "d"):
        assert (cfg.get(key).status, cfg.get(key).basis) == ("UNKNOWN", "PLACEHOLDER_CYCLE"), key


def test_committed_nacos_files_rank_above_local_config_for_active_profiles_only():
    from diting.config.remote import add_remote_sources, nacos_data_ids, remote_file_index
    files = {
        "m/src/main/resources/bootstrap.yml": "spring:\n  application:\n    name: order-center\n  profiles:\n"
                                              "    active: dev\n  cloud:\n    nacos:\n      config:\n"
                                              "        server-addr: nacos:8848\n        file-extension: yaml\n"
                                              "        shared-configs:\n          - data-id: common.yaml\n",
        "m/src/main/resources/application.yml": "order:\n  timeout: 5\n  retries: 1\nlocal: only-here\n",
    }
    repo = {
        "config/nacos/order-center-dev.yaml": "order:\n  timeout: 30\n",
        "config/nacos/order-center-prod.yaml": "order:\n  timeout: 99\n  retries: 9\n",   # another environment
        "config/nacos/order-center.yaml": "order:\n  retries: 3\n",
        "backup/DEFAULT_GROUP/order-center.yaml": "order:\n  retries: 4\n",              # same data id: equal rank
        "backup/order-center.yaml": "order:\n  retries: 5\n",                 # a file of that name, no export layout
        "config/nacos/common.yaml": "shared: yes\norder:\n  timeout: 1\n",
        "m/src/main/resources/order-center-dev.yaml": "order:\n  timeout: 77\n",        # a module resource: not remote
    }
    cfg = _cfg(files)
    assert nacos_data_ids(cfg) == ["order-center-dev.yaml", "order-center.yaml", "order-center", "common.yaml"]
    added = add_remote_sources(cfg, remote_file_index(sorted(repo)), lambda p: (repo[p], "blob-" + p))
    assert added == ["config/nacos/order-center-dev.yaml", "backup/DEFAULT_GROUP/order-center.yaml",
                     "config/nacos/order-center.yaml", "config/nacos/common.yaml"]
    rv = cfg.get("order.timeout")
    assert (rv.status, rv.value, rv.path) == ("RESOLVED", "30", "config/nacos/order-center-dev.yaml")
    assert cfg.get("order.retries").status == "AMBIGUOUS"          # two committed copies of one data id disagree
    assert cfg.get("shared").value == "yes" and cfg.get("local").value == "only-here"
    assert all("prod" not in r.path for r in cfg.files_read)        # other environments are never read


def test_nacos_config_import_data_ids_later_import_wins():
    from diting.config.remote import nacos_data_ids
    files = {"m/src/main/resources/application.yml":
             "spring:\n  application:\n    name: pay\n  config:\n    import:\n"
             "      - optional:nacos:common.yml\n      - nacos:${spring.application.name}-dev.yml?group=G\n"
             "      - classpath:other.yml\n"}
    assert nacos_data_ids(_cfg(files)) == ["pay-dev.yml", "common.yml"]
    assert nacos_data_ids(_cfg({"m/src/main/resources/application.yml": "a: 1\n"})) == []


def test_yaml_lists_bind_as_comma_joined_values_and_a_higher_source_replaces_the_list():
    files = {
        "m/src/main/resources/application.yml": "secure:\n  ignore:\n    urls:\n      - /doc.html\n"
                                                "      - /actuator/**\n      - /auth/login\n",
        "m/src/main/resources/bootstrap.yml": "secure:\n  ignore:\n    urls:\n      - /bootstrap-only\n",
        "m/src/main/resources/application-dev.yml": "cors:\n  origins:\n    - a.example\nother: 1\n",
    }
    cfg = _cfg(files, ["default"])
    rv = cfg.get("secure.ignore.urls")
    assert (rv.status, rv.value, rv.path) == ("RESOLVED", "/doc.html,/actuator/**,/auth/login",
                                              "m/src/main/resources/application.yml")
    assert (rv.entry.line, rv.entry.end_line) == (4, 6)
    assert cfg.get("secure.ignore.urls[1]").value == "/actuator/**"
    assert cfg.get("cors.origins").status == "UNKNOWN"          # application-dev is not active


def test_config_lines_are_counted_as_evidence_counts_them():
    """A lone CR ends a line for YAML, java.util.Properties and evidence alike; NEL or U+2028 is a
    line break to YAML but not to evidence: entries cite the evidence line."""
    from diting.config.sources import parse_properties, parse_yaml
    lines = lambda cf: [(e.key, e.value, e.line, e.end_line) for d in cf.documents for e in d.entries]  # noqa: E731
    assert lines(parse_yaml("a.yml", "a: 1\rb: 2\rc: 3\r")) == [("a", "1", 1, 1), ("b", "2", 2, 2), ("c", "3", 3, 3)]
    assert lines(parse_yaml("a.yml", "x: 1\n# note \u2028\ny: 2\n")) == [("x", "1", 1, 1), ("y", "2", 3, 3)]
    assert lines(parse_yaml("a.yml", "x: 1\r# note \u2028\ny: 2\n")) == [("x", "1", 1, 1), ("y", "2", 3, 3)]
    assert lines(parse_yaml("a.yml", "a: 1\r\nb:\r\n  c: x\r\n")) == [("a", "1", 1, 1), ("b.c", "x", 3, 3)]
    assert lines(parse_properties("a.properties", "a=1\rb=2\rc=3")) == [("a", "1", 1, 1), ("b", "2", 2, 2),
                                                                         ("c", "3", 3, 3)]
    assert lines(parse_properties("a.properties", "a=1\r\nb=2\r\nc=\\\r\n  3\r\n")) == \
        [("a", "1", 1, 1), ("b", "2", 2, 2), ("c", "3", 3, 4)]
    bad = parse_yaml("a.yml", "x: 1\ry: [\r")
    assert bad.error and bad.error_line == 3
