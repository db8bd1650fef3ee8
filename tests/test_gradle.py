"""Gradle builds read statically (docs/gradle.md): the script reader, settings, project models,
deployables, one inventory with Maven, and whole scans — never running anything from the build."""

from __future__ import annotations

import json
from pathlib import Path

from diting.inventory.gradle import GradleModel
from diting.inventory.gradle_eval import read_catalog
from diting.inventory.gradle_ast import Assign, Call, Control, Decl, ExprStmt, Str
from diting.inventory.gradle_script import read_script
from diting.rules import load_rules
from tests.stagekit import scan_memory
from tests.conftest import BOOT_PLUGIN, make_repo, pom, scan_repo

RULES = load_rules()


def model(files: dict[str, str], root: str = "shop") -> GradleModel:
    """The Gradle model of an in-memory tree (every ``*.gradle[.kts]`` a candidate)."""
    def read(path: str):
        return (files[path], "utf-8", None) if path in files else (None, "utf-8", "missing")
    cands = sorted(p for p in files if p.rsplit("/", 1)[-1] in (
        "settings.gradle", "settings.gradle.kts", "build.gradle", "build.gradle.kts"))
    return GradleModel(read, set(files), RULES.gradle_scopes(), RULES.build_logic_plugins(), root, cands)


def project(m: GradleModel, gradle_path: str, build: str = ""):
    key = m.by_build_path[(build, gradle_path)]
    return m.modules[key]


def deps(p) -> dict[str, tuple[str, str | None]]:
    """``group:artifact`` → (scope, linked project key)."""
    return {d.ga: (d.scope, d.project) for d in p.dependencies}


def codes(p) -> list[str]:
    return sorted(f.code for f in p.findings)


# ------------------------------------------------------------------ the reader


def test_reader_groovy_command_chains_and_named_arguments():
    sc = read_script("build.gradle", "plugins {\n  id 'org.springframework.boot' version '3.2.0' apply false\n}\n"
                     "apply plugin: 'java'\ngroup = 'com.x'\nversion '1.0'\n"
                     "dependencies {\n  implementation project(':common')\n"
                     "  api group: 'g', name: 'n', version: \"${v}\"\n}\n")
    assert not sc.errors
    plugins = sc.statements[0].expr
    chain = plugins.closure.body[0].expr
    # id 'x' version 'y' apply false: a chain of calls, the first is the id
    assert chain.name == "apply" and chain.target.name == "version" and chain.target.target.name == "id"
    apply = sc.statements[1].expr
    assert isinstance(apply, Call) and apply.args[0].name == "plugin"
    assert isinstance(sc.statements[2], Assign)
    assert isinstance(sc.statements[3].expr, Call) and not sc.statements[3].expr.parens
    body = sc.statements[4].expr.closure.body
    impl = body[0].expr
    assert impl.name == "implementation" and impl.args[0].value.name == "project"
    api = body[1].expr
    assert [a.name for a in api.args] == ["group", "name", "version"]
    assert api.args[2].value.parts == (("$", "v"),)


def test_reader_kotlin_infix_generics_annotations_and_string_configurations():
    text = ('@file:Suppress("UnstableApiUsage")\nplugins {\n  id("org.springframework.boot") version "3.2.0"\n'
            '  `java-library`\n  kotlin("jvm")\n}\nval springCloud by extra("2023.0.0")\n'
            'dependencies {\n  "implementation"(project(":a"))\n  api(group = "g", name = "n")\n}\n'
            'tasks.getByName<BootJar>("bootJar") { enabled = false }\n')
    sc = read_script("build.gradle.kts", text)
    assert not sc.errors and sc.dsl == "kotlin"
    block = sc.statements[0].expr.closure.body
    assert block[0].expr.name == "version" and block[0].expr.target.name == "id"
    assert block[1].expr.name == "java-library"
    assert isinstance(sc.statements[1], Decl) and sc.statements[1].delegate.name == "extra"
    dep = sc.statements[2].expr.closure.body[0].expr
    assert isinstance(dep.target, Str) and dep.target.literal == "implementation"
    boot = sc.statements[3].expr
    assert boot.name == "getByName" and boot.closure is not None


def test_reader_never_raises_on_broken_or_hostile_text():
    for text in ("dependencies {\n implementation 'a:b'\n", "x = 'unterminated\ny = 1\n", ")))}}}", "{" * 5000,
                 "\x00\x01\x02 binary \xff", "a(" * 3000, "if (x) {", "/* open comment", "'''never closed"):
        sc = read_script("build.gradle", text)
        assert sc.errors, repr(text[:20])
    # a broken statement does not lose the ones after it
    sc = read_script("build.gradle", "foo(]\ngroup = 'g'\n")
    assert any(isinstance(s, Assign) for s in sc.statements)


def test_reader_keeps_control_constructs_with_their_bodies():
    sc = read_script("settings.gradle", "if (hasProperty('x')) {\n include 'a'\n} else {\n include 'b'\n}\n"
                     "for (n in ['c']) { include n }\n")
    assert [type(s) for s in sc.statements] == [Control, Control]
    assert sc.statements[0].keyword == "if" and len(sc.statements[0].bodies) == 2
    assert isinstance(sc.statements[1].bodies[0][0], ExprStmt)


# ------------------------------------------------------------------ settings


def test_settings_projects_paths_dirs_and_composites():
    m = model({
        "settings.gradle": "rootProject.name = 'shop'\ninclude 'order', 'common'\ninclude(':svc:user')\n"
                           "include ':tools'\nproject(':tools').projectDir = file('libs/tool-kit')\n"
                           "include 'api'\nproject(':api').projectDir = new File(rootDir, 'modules/api')\n"
                           "includeFlat 'sibling'\nincludeBuild 'platform'\n"
                           "file('plugins').eachDir { include it.name }\n",
        "platform/settings.gradle.kts": 'rootProject.name = "platform"\ninclude("bom")\n',
        "order/build.gradle": "", "libs/tool-kit/build.gradle": "",
    })
    root = m.builds[""]
    assert sorted(root.projects) == [":", ":api", ":common", ":order", ":sibling", ":svc", ":svc:user", ":tools"]
    assert project(m, ":tools").dir == "libs/tool-kit" and project(m, ":api").dir == "modules/api"
    assert project(m, ":svc:user").dir == "svc/user" and project(m, ":svc").dir == "svc"
    assert project(m, ":order").build_file == "order/build.gradle"
    assert project(m, ":common").build_file == "settings.gradle#:common"  # no script of its own
    assert project(m, ":").artifact_id == "shop"
    # a composite: the included build is a root of its own
    assert root.included == ["platform"] and project(m, ":bom", "platform").gradle_path == ":bom"
    assert m.aggregated_by[project(m, ":bom", "platform").build_file] == "platform/settings.gradle.kts#:"
    found = {(f.code, f.start_line) for f in m.findings}
    assert ("PATH_OUTSIDE_TREE", 8) in found  # includeFlat leaves the repository
    assert ("GRADLE_NOT_STATIC", 10) in found  # the eachDir loop decides the projects at build time


def test_orphan_script_inside_a_build_is_no_module_but_a_lone_build_is():
    m = model({"settings.gradle": "include 'a'\n", "a/build.gradle": "", "old/build.gradle": "",
               "tools/x/build.gradle": ""})
    assert ("", ":a") in m.by_build_path
    assert not any(p.dir == "old" for p in m.modules.values())
    assert [f.code for f in m.findings if "old/" in (f.path or "")] == ["MODULE_NOT_INCLUDED"]
    lone = model({"svc-a/build.gradle": "apply plugin: 'java'\n", "svc-b/build.gradle.kts": "plugins { java }\n"})
    assert sorted(p.dir for p in lone.modules.values()) == ["svc-a", "svc-b"]
    assert project(lone, ":", "svc-a").artifact_id == "svc-a"


# ------------------------------------------------------------------ project models


SHOP = {
    "settings.gradle": "rootProject.name = 'shop'\ninclude 'order', 'common', 'user', 'web'\n",
    "gradle.properties": "shopVersion=1.2.0\ncloudVersion=2023.0.0\n",
    "gradle/libs.versions.toml": (
        '[versions]\nboot = "3.2.0"\n[libraries]\n'
        'spring-web = { module = "org.springframework.boot:spring-boot-starter-web", version.ref = "boot" }\n'
        'openfeign = "org.springframework.cloud:spring-cloud-starter-openfeign:4.1.0"\n'
        'axon-springBoot = { group = "org.axonframework", name = "axon-spring-boot-starter", version = "4.9" }\n'
        '[bundles]\nweb = ["spring-web", "openfeign"]\n'
        '[plugins]\nspring-boot = { id = "org.springframework.boot", version.ref = "boot" }\n'),
    "build.gradle": ("ext { lombokVersion = '1.18.30' }\ndef util = 'org.apache.commons:commons-lang3:3.14.0'\n"
                     "allprojects {\n  group = 'com.shop'\n  version = \"${shopVersion}\"\n}\n"
                     "subprojects {\n  apply plugin: 'java'\n  apply plugin: 'org.springframework.boot'\n"
                     "  dependencies { compileOnly \"org.projectlombok:lombok:${lombokVersion}\"\n"
                     "    implementation util }\n}\n"),
    "order/build.gradle": ("plugins { alias(libs.plugins.spring.boot) }\n"
                           "dependencies {\n  implementation project(':common')\n  implementation libs.bundles.web\n"
                           "  implementation platform(\"org.springframework.cloud:spring-cloud-dependencies:"
                           "${cloudVersion}\")\n  testImplementation 'junit:junit:4.13'\n"
                           "  annotationProcessor 'org.mapstruct:mapstruct-processor:1.5.5'\n"
                           "  runtimeOnly group: 'com.h2database', name: 'h2'\n}\n"
                           "sourceSets { main { java { srcDir 'src/generated/java' } } }\n"
                           "if (project.hasProperty('withUser')) {\n  dependencies { implementation project(':user') }\n}\n"),
    "user/build.gradle.kts": ('plugins {\n  id("org.springframework.boot") version "3.2.0"\n  java\n}\n'
                              'dependencies {\n  implementation(projects.common)\n  api(libs.axon.springBoot)\n'
                              '  implementation(project(":nope"))\n}\n'
                              'sourceSets { main { java.setSrcDirs(listOf("java")) } }\n'
                              'tasks.getByName<BootJar>("bootJar") { enabled = false }\n'),
    "web/build.gradle": "plugins { id 'war' }\nbase { archivesName = 'shop-web' }\n",
}


def test_coordinates_properties_and_injected_blocks():
    m = model(SHOP)
    order = project(m, ":order")
    assert (order.group_id, order.artifact_id, order.version) == ("com.shop", "order", "1.2.0")
    assert order.group_source == "DECLARED"
    assert project(m, ":").version == "1.2.0"
    assert "build.gradle" in order.build_inputs and "gradle.properties" in order.build_inputs
    assert "gradle/libs.versions.toml" in order.build_inputs
    # Gradle's default group of a project that declares none: the parent's path under the root's name
    bare = model({"settings.gradle": "rootProject.name = 'shop'\ninclude 'a:b'\n"})
    assert project(bare, ":a:b").group_id == "shop.a" and project(bare, ":a:b").group_source == "GRADLE_DEFAULT"


def test_dependencies_all_notations_and_scopes():
    m = model(SHOP)
    order, user = project(m, ":order"), project(m, ":user")
    d = deps(order)
    assert d["com.shop:common"] == ("compile", "settings.gradle#:common")
    assert d["org.springframework.boot:spring-boot-starter-web"][0] == "compile"
    assert d["org.springframework.cloud:spring-cloud-starter-openfeign"][0] == "compile"
    assert d["org.springframework.cloud:spring-cloud-dependencies"][0] == "import"
    assert order.imported_boms == ["org.springframework.cloud:spring-cloud-dependencies:2023.0.0"]
    assert d["junit:junit"][0] == "test" and d["org.mapstruct:mapstruct-processor"][0] == "none"
    assert d["com.h2database:h2"][0] == "runtime"
    assert d["org.projectlombok:lombok"][0] == "provided"  # from subprojects, with the root's ext
    assert d["org.apache.commons:commons-lang3"][0] == "compile"  # a root-script local
    web = {x.ga: x for x in order.dependencies}["org.springframework.boot:spring-boot-starter-web"]
    assert web.version == "3.2.0" and web.declared_in == "order/build.gradle"
    # the `if` hides a dependency: not applied, and said so with its line
    assert "com.shop:user" not in d
    hidden = [f for f in order.findings if f.code == "GRADLE_NOT_STATIC"]
    assert [(f.path, f.start_line) for f in hidden] == [("order/build.gradle", 11)]
    u = deps(user)
    assert u["com.shop:common"][1] == "settings.gradle#:common"  # projects.common accessor
    assert u["org.axonframework:axon-spring-boot-starter"] == ("compile", None)  # camel-case catalog alias
    assert [f.code for f in user.findings] == ["DEPENDENCY_UNRESOLVED"]  # project(":nope")


def test_deployables_by_own_plugins_and_switches():
    m = model(SHOP)
    boot = RULES.build_plugins("gradle")
    basis = {p.gradle_path: [b.basis for b in p.declared_deployable(boot)] for p in m.modules.values()}
    assert basis[":order"] == ["BOOT_PLUGIN"]  # a catalog alias in its own plugins block
    assert basis[":user"] == []  # bootJar { enabled = false }
    assert basis[":web"] == ["WAR_PACKAGING"] and project(m, ":web").packaging == "war"
    # the boot plugin every subproject gets from the root is no evidence that :common deploys
    assert basis[":common"] == [] and "org.springframework.boot" in project(m, ":common").plugin_ids()
    assert project(m, ":").packaging == "pom"  # an aggregator applying no Java plugin
    off = model({"build.gradle.kts": 'plugins {\n  id("org.springframework.boot") version "3.2.0" apply false\n}\n'})
    assert project(off, ":").declared_deployable(boot) == []


def test_source_sets_replace_and_add():
    m = model(SHOP)
    assert project(m, ":order").source_roots == ["order/src/generated/java", "order/src/main/java"]
    assert project(m, ":user").source_roots == ["user/java"]
    assert project(m, ":common").source_roots == ["common/src/main/java"]


def test_convention_plugins_of_build_logic_are_applied_as_scripts():
    m = model({
        "settings.gradle.kts": 'rootProject.name = "shop"\nincludeBuild("build-logic")\ninclude("svc")\n',
        "build-logic/settings.gradle.kts": 'rootProject.name = "build-logic"\n',
        "build-logic/build.gradle.kts": "plugins { `kotlin-dsl` }\n",
        "build-logic/src/main/kotlin/boot-conventions.gradle.kts":
            'plugins { id("org.springframework.boot") }\ndependencies { implementation("org.acme:audit:1.0") }\n',
        "svc/build.gradle.kts": 'plugins { id("boot-conventions") }\n',
    })
    svc = project(m, ":svc")
    assert svc.declared_deployable(RULES.build_plugins("gradle"))
    assert "org.acme:audit" in deps(svc)
    assert "build-logic/src/main/kotlin/boot-conventions.gradle.kts" in svc.build_inputs
    assert project(m, ":", "build-logic").build_logic and project(m, ":", "build-logic").packaging == "pom"


def test_catalog_hostile_toml_is_a_finding():
    findings: list = []
    cat = read_catalog("gradle/libs.versions.toml", "[libraries\nx = 1", findings)
    assert not cat.libraries and [f.code for f in findings] == ["GRADLE_NOT_STATIC"]


# ------------------------------------------------------------------ whole scans


APP = ("package com.shop.{pkg};\nimport org.springframework.boot.autoconfigure.SpringBootApplication;\n"
       "@SpringBootApplication\npublic class {cls} {{ public static void main(String[] a) {{ }} }}\n")

CLIENT = ("package com.shop.order;\nimport org.springframework.cloud.openfeign.FeignClient;\n"
          "import org.springframework.web.bind.annotation.GetMapping;\n"
          "@FeignClient(\"user-service\")\npublic interface UserClient {\n  @GetMapping(\"/users/me\") String me();\n}\n")

CONTROLLER = ("package com.shop.user;\nimport org.springframework.web.bind.annotation.*;\n"
              "@RestController\npublic class UserController {\n  @GetMapping(\"/users/me\") public String me() "
              "{ return \"\"; }\n}\n")


def gradle_estate() -> dict[str, str]:
    return {
        "settings.gradle": "rootProject.name = 'shop'\ninclude 'order', 'user', 'common'\n",
        "build.gradle": ("subprojects {\n  apply plugin: 'java'\n  group = 'com.shop'\n  version = '1.0'\n}\n"
                         "// a script that would leave a trace if anything ran it\n"
                         "new File(rootDir, 'PWNED').text = 'ran'\n'touch PWNED2'.execute()\n"
                         "exec { commandLine 'touch', 'PWNED3' }\n"),
        "order/build.gradle": "plugins { id 'org.springframework.boot' version '3.2.0' }\n"
                              "dependencies { implementation project(':common') }\n",
        "order/src/main/java/com/shop/order/OrderApp.java": APP.format(pkg="order", cls="OrderApp"),
        "order/src/main/java/com/shop/order/UserClient.java": CLIENT,
        "order/src/main/resources/application.yml": "spring:\n  application:\n    name: order-service\n",
        "order/src/main/kotlin/com/shop/order/Extra.kt": "package com.shop.order\nclass Extra\n",
        "user/build.gradle.kts": 'plugins { id("org.springframework.boot") version "3.2.0" }\n',
        "user/src/main/java/com/shop/user/UserApp.java": APP.format(pkg="user", cls="UserApp"),
        "user/src/main/java/com/shop/user/UserController.java": CONTROLLER,
        "user/src/main/resources/application.properties": "spring.application.name=user-service\n",
        "common/src/main/java/com/shop/common/Money.java": "package com.shop.common;\npublic class Money {}\n",
    }


def _records(pkg: Path, name: str) -> list[dict]:
    return [json.loads(line) for line in (pkg / name).read_text().splitlines() if line.strip()]


def test_scan_gradle_estate_end_to_end_and_nothing_runs(tmp_path):
    repo, _ = make_repo(tmp_path, gradle_estate())
    result = scan_repo(repo, tmp_path / "out", repo_id="shop")
    pk = {p.service_id: p for p in result.packages}
    assert sorted(pk) == ["lib:shop", "order-service", "user-service"]
    assert sorted(pk["order-service"].modules) == ["order/build.gradle", "settings.gradle#:common"]
    assert sorted(set(pk["order-service"].basis)) == ["BOOT_PLUGIN", "SPRING_BOOT_APPLICATION"]
    order = pk["order-service"].path
    mods = {e["attributes"]["build_file"]: e["attributes"] for e in _records(order, "entities.jsonl")
            if e["kind"] == "MODULE"}
    assert mods["order/build.gradle"]["build_system"] == "gradle"
    assert mods["order/build.gradle"]["gradle_path"] == ":order"
    rels = _records(order, "relations.jsonl")
    assert any(r["kind"] == "DEPENDS_ON" and r["target_ref"]["record_id"] == "module:com.shop:common" for r in rels)
    cov = json.loads((order / "coverage.json").read_text())
    assert cov["dimensions"]["files"]["excluded_by_reason"].get("kotlin_source") == 1
    inputs = json.loads((order / "analysis_input.json").read_text())
    assert {"build.gradle", "order/build.gradle", "settings.gradle"} <= {b["path"] for b in inputs["build_inputs"]}
    # the Feign client of the order service is a bean of its context (its sources are read)
    assert any(e["kind"] == "BEAN" and e["name"] == "com.shop.order.UserClient"
               for e in _records(order, "entities.jsonl"))
    for trace in ("PWNED", "PWNED2", "PWNED3"):
        assert not (repo / trace).exists() and not (Path.cwd() / trace).exists()


def test_scan_is_byte_identical(tmp_path):
    repo, _ = make_repo(tmp_path, gradle_estate())
    a = scan_repo(repo, tmp_path / "a", repo_id="shop")
    b = scan_repo(repo, tmp_path / "b", repo_id="shop")
    for pa, pb in zip(sorted(a.packages, key=lambda p: p.service_id), sorted(b.packages, key=lambda p: p.service_id),
                      strict=True):
        for f in sorted(x.name for x in pa.path.iterdir()):
            assert (pa.path / f).read_bytes() == (pb.path / f).read_bytes(), f


def test_maven_and_gradle_modules_form_one_inventory(tmp_path):
    files = {
        "pom.xml": pom("shop-parent", parent=None, packaging="pom",
                       body="<modules><module>billing</module><module>shared</module></modules>"),
        "billing/pom.xml": pom("billing", body="<dependencies><dependency><groupId>com.example</groupId>"
                               "<artifactId>shared</artifactId><version>1.0</version></dependency></dependencies>"
                               + BOOT_PLUGIN),
        "billing/src/main/java/com/example/billing/BillingApp.java":
            APP.format(pkg="billing", cls="BillingApp").replace("com.shop", "com.example"),
        "shared/pom.xml": pom("shared"),
        "shared/src/main/java/com/example/shared/Ids.java": "package com.example.shared;\npublic class Ids {}\n",
        "gateway/settings.gradle": "rootProject.name = 'gateway'\n",
        "gateway/build.gradle": ("plugins { id 'org.springframework.boot' version '3.2.0'\n id 'java' }\n"
                                 "group = 'com.example'\nversion = '1.0'\n"
                                 "dependencies { implementation 'com.example:shared:1.0' }\n"),
        "gateway/src/main/java/com/example/gateway/GatewayApp.java":
            APP.format(pkg="gateway", cls="GatewayApp").replace("com.shop", "com.example"),
    }
    result = scan_memory(files, tmp_path / "out", repo_id="shop")
    pk = {p.service_id: p for p in result.packages}
    # the Gradle service's closure holds the Maven module it depends on by coordinate
    assert sorted(pk["gateway"].modules) == ["gateway/build.gradle", "shared/pom.xml"]
    assert sorted(pk["billing"].modules) == ["billing/pom.xml", "shared/pom.xml"]
    systems = {e["attributes"]["build_file"]: e["attributes"]["build_system"]
               for e in _records(pk["gateway"].path, "entities.jsonl") if e["kind"] == "MODULE"}
    assert systems == {"gateway/build.gradle": "gradle", "shared/pom.xml": "maven"}


def test_hostile_build_scripts_give_diagnostics_and_the_scan_goes_on(tmp_path):
    files = gradle_estate()
    files["user/build.gradle.kts"] = ('plugins { id("org.springframework.boot") version "3.2.0" }\n'
                                      'dependencies { implementation("a:b:1"\n')  # unbalanced
    files["common/build.gradle"] = "// 注释\ndependencies { implementation 'x:y:1' }\n".encode("gbk")
    files["settings.gradle"] = ("rootProject.name = 'shop'\ninclude 'order', 'user', 'common', 'junk'\n"
                                + "{" * 400 + "\n")
    files["junk/build.gradle"] = b"\x00\x01\x02\xff\xfe binary"
    result = scan_memory(files, tmp_path / "out", repo_id="shop")
    pk = {p.service_id: p for p in result.packages}
    assert {"order-service", "user-service"} <= set(pk)
    diags = [d for p in result.packages for d in _records(p.path, "diagnostics.jsonl")]
    msgs = [d["message"] for d in diags if d["code"] == "GRADLE_NOT_STATIC"]
    assert any(m.startswith("user/build.gradle.kts:") for m in msgs)
    assert any("nested deeper" in m or m.startswith("settings.gradle:") for m in msgs)
    # the GBK script is read (its dependency is known)
    lib = next(p for p in result.packages if "settings.gradle#:common" in p.modules or "common/build.gradle"
               in p.modules)
    rels = _records(lib.path, "relations.jsonl")
    assert any(r["kind"] == "DEPENDS_ON" and r["target_ref"]["record_id"] == "artifact:x:y" for r in rels)


def test_no_build_at_all_is_a_user_error(tmp_path):
    from tests.conftest import run_cli
    repo, _ = make_repo(tmp_path, {"README.md": "nothing to build\n"})
    proc = run_cli("scan", str(repo), "--commit", "HEAD", "--out", str(tmp_path / "o"))
    assert proc.returncode == 2 and "Gradle" in proc.stderr and "Traceback" not in proc.stderr


def test_kotlin_dsl_settings_and_project_forms():
    m = model({
        "settings.gradle.kts": ('rootProject.name = "shop"\ninclude(listOf("svc", "lib"))\ninclude("tools:cli")\n'
                                'project(":lib").projectDir = file("libraries/lib")\n'
                                'if (System.getenv("CI") != null) { include("ci-only") }\n'),
        "gradle.properties": "kotlinVersion=1.9.22\n",
        "build.gradle.kts": ('allprojects {\n  group = "com.shop"\n  version = "2.0"\n}\n'
                            'subprojects {\n  apply(plugin = "java")\n}\nextra["auditVersion"] = "3.1"\n'),
        "svc/build.gradle.kts": ('plugins { id("org.springframework.boot") version "3.2.0" }\n'
                                 'base { archivesName.set("shop-svc") }\n'
                                 'val auditVersion: String by rootProject.extra\n'
                                 'dependencies {\n  implementation(project(":lib"))\n'
                                 '  implementation("org.acme:audit:${rootProject.extra["auditVersion"]}")\n'
                                 '  add("runtimeOnly", "org.postgresql:postgresql:42.7.1")\n'
                                 '  compileOnly(kotlin("stdlib", "${property("kotlinVersion")}"))\n}\n'
                                 'sourceSets["main"].java.srcDir("src/gen")\n'
                                 'java { toolchain { languageVersion.set(JavaLanguageVersion.of(21)) } }\n'
                                 'tasks.withType<JavaCompile> { options.encoding = "UTF-8" }\n'),
    })
    b = m.builds[""]
    assert sorted(b.projects) == [":", ":lib", ":svc", ":tools", ":tools:cli"]
    assert project(m, ":lib").dir == "libraries/lib"
    assert [(f.code, f.start_line) for f in m.findings] == [("GRADLE_NOT_STATIC", 5)]  # the `if` around include
    svc = project(m, ":svc")
    assert (svc.group_id, svc.version) == ("com.shop", "2.0") and svc.dsl == "kotlin"
    assert svc.extra_attributes()["archives_name"] == "shop-svc"
    d = {x.ga: x for x in svc.dependencies}
    assert d["com.shop:lib"].project == "settings.gradle.kts#:lib"
    assert d["org.acme:audit"].version == "3.1"
    assert d["org.postgresql:postgresql"].scope == "runtime"
    assert d["org.jetbrains.kotlin:kotlin-stdlib"].version == "1.9.22" and d["org.jetbrains.kotlin:kotlin-stdlib"].scope == "provided"
    assert svc.source_roots == ["svc/src/gen", "svc/src/main/java"]
    assert (svc.java_level, svc.source_encoding) == ("21", "UTF-8")
    assert [b.basis for b in svc.declared_deployable(RULES.build_plugins("gradle"))] == ["BOOT_PLUGIN"]


def test_groovy_script_plugins_and_their_cycles():
    m = model({
        "settings.gradle": "include 'svc'\n",
        "gradle/deps.gradle": "ext.libs = [audit: 'org.acme:audit:1.0']\napply from: \"$rootDir/gradle/deps.gradle\"\n",
        "svc/build.gradle": ("apply from: \"${rootDir}/gradle/deps.gradle\"\napply from: 'https://example.com/x.gradle'\n"
                             "apply plugin: 'java'\ndependencies { implementation libs.audit }\n"),
    })
    svc = project(m, ":svc")
    assert "org.acme:audit" in deps(svc)  # a map in ext, read through a script plugin applied from the root
    assert "gradle/deps.gradle" in svc.build_inputs
    assert [f.start_line for f in svc.findings if f.code == "GRADLE_NOT_STATIC"] == [2]  # the URL is not fetched


def test_gradle_properties_coordinates_link_in_repo_coordinates():
    m = model({
        "settings.gradle": "include 'svc', 'lib'\n",
        "gradle.properties": "group=com.acme.shop\nversion=1.2.0\n",
        "build.gradle": "subprojects { apply plugin: 'java' }\n",
        "svc/build.gradle": "dependencies { implementation 'com.acme.shop:lib:1.2.0' }\n",
        "lib/build.gradle": "",
    })
    svc, lib = project(m, ":svc"), project(m, ":lib")
    assert (lib.group_id, lib.version, lib.group_source) == ("com.acme.shop", "1.2.0", "DECLARED")
    from diting.inventory.module import ModuleGraph
    from diting.inventory.services import closure, link_dependencies
    g = ModuleGraph(m.modules, m.aggregated_by, None, m)
    assert closure(link_dependencies(g), g, svc.build_file) == [svc.build_file, lib.build_file]


def test_kotlin_extra_lambdas_mavenbom_imports_and_buildscript_project_ext():
    m = model({
        "settings.gradle.kts": 'include("svc")\n',
        "svc/build.gradle.kts": ('val mapstructVersion by extra { "1.5.5.Final" }\n'
                                 'plugins { id("io.spring.dependency-management") version "1.1.4" }\n'
                                 'dependencyManagement {\n  imports {\n'
                                 '    mavenBom("org.springframework.cloud:spring-cloud-dependencies:2023.0.0")\n  }\n}\n'
                                 'dependencies { implementation("org.mapstruct:mapstruct:$mapstructVersion") }\n'),
    })
    svc = project(m, ":svc")
    d = {x.ga: x for x in svc.dependencies}
    assert d["org.mapstruct:mapstruct"].version == "1.5.5.Final"
    assert d["org.springframework.cloud:spring-cloud-dependencies"].scope == "import"
    assert svc.imported_boms == ["org.springframework.cloud:spring-cloud-dependencies:2023.0.0"]
    assert not svc.findings
    lone = model({"tool/build.gradle": ("buildscript {\n  project.ext { swaggerVersion = '2.7.0' }\n}\n"
                                        "apply plugin: 'java'\n"
                                        "dependencies { compile \"io.springfox:springfox:${swaggerVersion}\" }\n")})
    tool = project(lone, ":", "tool")
    assert {x.ga: x.version for x in tool.dependencies} == {"io.springfox:springfox": "2.7.0"}


def test_boot_jar_switched_off_by_task_type_and_settings_renames():
    m = model({
        "settings.gradle.kts": ('include("apps:user-app", "libs:a", "libs:b")\n'
                                'findProject(":apps:user-app")?.name = "user-service"\n'),
        "apps/user-app/build.gradle.kts": 'plugins { id("org.springframework.boot") version "3.2.0" }\n'
                                          'dependencies { implementation(projects.libs.a) }\n',
        "libs/a/build.gradle.kts": ('plugins { id("org.springframework.boot") version "3.2.0" }\n'
                                    'tasks.withType<org.springframework.boot.gradle.tasks.bundling.BootJar> '
                                    '{ enabled = false }\n'),
        "libs/b/build.gradle": ("plugins { id 'org.springframework.boot' version '3.2.0' }\n"
                                "tasks.withType(BootJar).configureEach { enabled = false }\n"),
    })
    boot = RULES.build_plugins("gradle")
    assert project(m, ":apps:user-app").artifact_id == "user-service"
    assert project(m, ":apps:user-app").declared_deployable(boot)
    assert not project(m, ":libs:a").declared_deployable(boot)
    assert not project(m, ":libs:b").declared_deployable(boot)


def test_what_stays_quiet_and_what_a_dynamic_include_says():
    m = model({
        "settings.gradle": "include 'e2e'\nfile('services').eachDir { include \"services:${it.name}\" }\n",
        "e2e/build.gradle": ("apply plugin: 'java'\nfor (t in ['a', 'b']) {\n  tasks.register(t, JavaExec) {\n"
                             "    classpath = sourceSets.main.runtimeClasspath\n  }\n}\n"
                             "dependencies { annotationProcessor \"org.x:proc:${procVersion}\" }\n"),
        "services/orders/build.gradle": "apply plugin: 'java'\n",
    })
    e2e = project(m, ":e2e")
    assert e2e.findings == []  # a loop that only registers tasks; an annotation processor nothing follows
    orphan = [f for f in m.findings if f.path == "services/orders/build.gradle"]
    assert [f.code for f in orphan] == ["GRADLE_NOT_STATIC"] and "eachDir" in orphan[0].message
    from diting.inventory.layout import exclusion_reason
    assert exclusion_reason("src/integrationTest/java/a/B.java") == "test_source"
    assert exclusion_reason("src/main/java/a/B.java") is None


# ------------------------------------------------------------------ hostile build scripts


def _bomb(n: int) -> str:
    lines = ["def a0 = 'xxxxxxxxxx'"] + [f'def a{i} = "$a{i - 1}$a{i - 1}"' for i in range(1, n + 1)]
    return "\n".join(lines + [f"version = a{n}"]) + "\n"


HOSTILE_SCRIPTS = {
    # assignments to the receiver itself
    "receiver": "tasks = 1\nproject = 2\nthis = 3\nsubprojects { tasks = 1 }\n",
    # evaluation nesting: long concatenations, nested templates, prefix operators, member chains
    "concat": "version = " + "+".join(["'1'"] * 500) + "\n",
    "templates": "version = " + "f(\"${f(" * 125 + "x" + ")}\")" * 125 + "\n",
    "unary": 'version = "${' + "~" * 2000 + 'a}"\n',
    "members": "version = a" + ".a" * 3000 + "\n",
    "elseif": "if (a) { b }" + " else if (a) { b }" * 1000 + "\n",
    # doubling strings (a template bomb)
    "bomb": _bomb(40),
}


def test_hostile_scripts_evaluate_to_unknowns_never_to_errors():
    for name, text in HOSTILE_SCRIPTS.items():
        m = model({"build.gradle": "plugins { id 'war' }\n" + text})
        p = project(m, ":", "")
        assert p.packaging == "war", name  # what comes before the hostile part is kept
        assert p.version is None or len(p.version) <= 65536, name


def test_script_plugin_fan_out_applies_each_script_once():
    files = {"build.gradle": "apply from: 'c0.gradle'\n"}
    for i in range(12):
        files[f"c{i}.gradle"] = "".join(f"apply from: 'c{j}.gradle'\n" for j in range(12) if j != i)
    files["c11.gradle"] += "apply plugin: 'war'\n"
    m = model(files)
    p = project(m, ":", "")
    assert p.applied == {f"c{i}.gradle" for i in range(12)} and p.packaging == "war"


def test_hostile_settings_and_catalogs():
    m = model({"settings.gradle": "include '" + ":".join(f"a{i}" for i in range(200)) + "'\ninclude 'b::c', '..'\n"
                                  "include 'ok'\n",
               "gradle/libs.versions.toml": '[bundles]\nweb = ["bundles-web"]\n[libraries]\n'
                                            'x = { module = "g:x", version.ref = "nope" }\n',
               "build.gradle": "dependencies { implementation libs.bundles.web\n implementation libs.x }\n"})
    assert sorted(m.builds[""].projects) == [":", ":ok"]
    assert sum(f.code == "GRADLE_NOT_STATIC" and "include" in f.message for f in m.findings) == 3
    root = project(m, ":")
    assert [f.code for f in root.findings] == ["DEPENDENCY_UNRESOLVED"]  # the bundle names no library
    assert {d.ga: d.version for d in root.dependencies} == {"g:x": None}
    assert any(f.code == "PROPERTY_UNRESOLVED" and "nope" in f.message for f in m.findings)
    deep = model({"gradle/libs.versions.toml": "a = " + "[" * 500 + "]" * 500 + "\n", "build.gradle": ""})
    assert [f.code for f in deep.findings] == ["GRADLE_NOT_STATIC"]


def test_only_the_builds_own_build_logic_defines_plugins():
    m = model({"settings.gradle": "include 'app'\n", "build.gradle": "",
               "app/build.gradle": "plugins { id 'java'\n id 'shop.boot' }\n",
               # a sample's script named like a core plugin, and one outside build logic
               "docs/samples/src/main/groovy/java.gradle": "plugins { id 'org.springframework.boot' }\n",
               "docs/samples/src/main/groovy/shop.boot.gradle": "plugins { id 'org.springframework.boot' }\n"})
    app = project(m, ":app")
    assert not app.declared_deployable(RULES.build_plugins("gradle"))
    assert "org.springframework.boot" not in app.plugin_ids()


def test_inputs_that_cannot_be_read_are_said(tmp_path):
    files = {"build.gradle": "apply from: 'big.gradle'\n", "big.gradle": "apply plugin: 'war'\n" + "//\n" * 100,
             "gradle.properties": "version=9\n" + "#\n" * 100, "settings.gradle": "include 'sub'\n"}
    repo, _ = make_repo(tmp_path, files, symlinks={"sub": "elsewhere"})
    result = scan_repo(repo, tmp_path / "out", repo_id="shop", max_file_bytes=200)
    diags = [(d["code"], d["message"]) for p in result.packages for d in _records(p.path, "diagnostics.jsonl")]
    codes = sorted(c for c, _ in diags)
    assert codes.count("FILE_TOO_LARGE") == 2, diags
    assert any(c == "MODULE_SKIPPED" and "symlink" in msg for c, msg in diags), diags


def _shared_lists(k: int) -> str:
    """Each list holds ten references to the one before: 10**k leaves in a few hundred bytes."""
    return "def l0 = ['a', 'b']\n" + "".join(f"def l{i} = [" + ", ".join([f"l{i - 1}"] * 10) + "]\n"
                                            for i in range(1, k + 1))


def test_nested_and_shared_lists_are_bounded():
    deep = "def l0 = ['a']\n" + "".join(f"def l{i} = [l{i - 1}]\n" for i in range(1, 3001))
    m = model({"settings.gradle": deep + "include l3000\n"})  # flattened in a loop, whatever the depth
    assert sorted(m.builds[""].projects) == [":", ":a"] and m.findings == []
    m = model({"settings.gradle": _shared_lists(7) + "include l7\n"})  # 10**7 leaves: unknown
    assert sorted(m.builds[""].projects) == [":"]
    assert [f.code for f in m.findings] == ["GRADLE_NOT_STATIC"]
    m = model({"build.gradle": _shared_lists(7) + "apply plugin: 'java'\nsourceCompatibility = l7\n"
                               "dependencies { implementation l6 }\n"})
    p = project(m, ":", "")
    assert p.java_level is None and p.dependencies == []
    assert all(len(f.message) < 400 for f in p.findings)


def test_lexer_strings_that_are_not_code():
    m = model({"build.gradle": ("plugins { id 'java' }\ndef usage = /Add this to your build:\ndependencies {\n"
                                "  implementation 'com.example:fabricated:1.0'\n}\n/\n"
                                "def other = $/dependencies { implementation 'com.example:also:1.0' }/$\n"
                                "version = '2' + \"\\u0041\"\n"),
               "sub/build.gradle.kts": ('val dir = """C:\\tools\\"""\n'
                                        'dependencies { implementation("a:real:1") }\n'
                                        'val springVersion: String by project\n'
                                        'dependencies { implementation("org.springframework:spring-web:$springVersion") }\n'),
               "sub/gradle.properties": "springVersion=6.1.2\n"})
    root = project(m, ":", "")
    assert root.dependencies == [] and root.version == "2A"
    sub = project(m, ":", "sub")
    assert {d.ga: d.version for d in sub.dependencies} == {"a:real": "1", "org.springframework:spring-web": "6.1.2"}
    cr = model({"settings.gradle": "rootProject.name = 'shop'\r// note\rinclude 'svc'\r"})
    assert sorted(cr.builds[""].projects) == [":", ":svc"]


def test_settings_refusals_gradle_makes_are_said(tmp_path):
    m = model({"settings.gradle": "include 'a', 'b'\nproject(':b').projectDir = file('a')\nincludeBuild '.'\n",
               "gradle/libs.versions.toml": '[libraries]\nspring-web = "a:b:1"\nspring_web = "x:y:1"\n',
               "build.gradle": "dependencies { implementation libs.spring.web }\n",
               "src/main/groovy/java.gradle": "", "src/main/groovy/my.boot.gradle": ""})
    assert [p.gradle_path for p in m.modules.values()] == [":", ":a"]
    msgs = {f.code: f.message for f in m.findings}
    assert "two projects in one directory" in msgs["MODULE_SKIPPED"]
    assert any("includes this build" in f.message for f in m.findings)
    assert any("alias spring_web" in f.message for f in m.findings)
    assert {d.ga for d in project(m, ":").dependencies} == {"a:b"}
    assert m._local_plugins(m.builds[""]) == {}
    files = {"settings.gradle": "include 'a'\n", "real.gradle": "apply plugin: 'war'\n",
             "a/src/main/java/A.java": "class A {}\n"}
    repo, _ = make_repo(tmp_path, files, symlinks={"a/build.gradle": "../real.gradle"})
    result = scan_repo(repo, tmp_path / "out", repo_id="shop")
    diags = [(d["code"], d["message"]) for p in result.packages for d in _records(p.path, "diagnostics.jsonl")]
    assert any(c == "FILE_UNREADABLE" and "a/build.gradle is a symlink" in msg for c, msg in diags), diags
