"""inventory/: POM reading, the effective model, layout, services."""

from __future__ import annotations

from diting.inventory.layout import exclusion_reason
from diting.inventory.maven import MavenModel, read_maven_config
from diting.inventory.module import ModuleGraph
from diting.inventory.pom import read_pom
from diting.inventory.services import closure, deployable_basis, link_dependencies


def model_of(files: dict[str, str], user: dict[str, str] | None = None, gitlinks: set[str] | None = None):
    raws = {p: read_pom(p, x.encode()) for p, x in files.items()}
    return MavenModel(raws, user or {}, lambda g: g.startswith("org.springframework"), set(files), gitlinks or set())


#: the shipped Maven deployable rule (rules/build.yaml)
BOOT = {"org.springframework.boot:spring-boot-maven-plugin": {"basis": "BOOT_PLUGIN"}}


def G(m: MavenModel) -> ModuleGraph:
    return ModuleGraph(m.modules, m.aggregated_by, m)


def P(body: str) -> str:
    return f'<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>{body}</project>'


PARENT = P("""<groupId>com.x</groupId><artifactId>parent</artifactId><version>${revision}</version>
<packaging>pom</packaging>
<properties><base>shop</base><nested>${base}-core</nested><lombok.version>1.18.30</lombok.version></properties>
<modules><module>a</module><module>b</module><module>../outside</module><module>gone</module></modules>
<dependencyManagement><dependencies>
  <dependency><groupId>com.x</groupId><artifactId>bom</artifactId><version>${revision}</version>
    <type>pom</type><scope>import</scope></dependency>
  <dependency><groupId>org.projectlombok</groupId><artifactId>lombok</artifactId><version>${lombok.version}</version></dependency>
</dependencies></dependencyManagement>
<dependencies><dependency><groupId>org.projectlombok</groupId><artifactId>lombok</artifactId><scope>provided</scope></dependency></dependencies>
""")
BOM = P("""<groupId>com.x</groupId><artifactId>bom</artifactId><version>${revision}</version><packaging>pom</packaging>
<dependencyManagement><dependencies>
<dependency><groupId>com.x</groupId><artifactId>a</artifactId><version>${revision}</version></dependency>
</dependencies></dependencyManagement>""")
A = P("""<parent><groupId>com.x</groupId><artifactId>parent</artifactId><version>${revision}</version></parent>
<artifactId>a</artifactId><name>${nested}</name>""")
B = P("""<parent><groupId>com.x</groupId><artifactId>parent</artifactId><version>${revision}</version></parent>
<artifactId>b</artifactId>
<dependencies>
  <dependency><groupId>com.x</groupId><artifactId>a</artifactId></dependency>
  <dependency><groupId>junit</groupId><artifactId>junit</artifactId><version>4.13</version><scope>test</scope></dependency>
</dependencies>
<profiles>
  <profile><id>cloud</id><activation><activeByDefault>true</activeByDefault></activation>
    <build><plugins><plugin><groupId>org.springframework.boot</groupId><artifactId>spring-boot-maven-plugin</artifactId></plugin></plugins></build>
  </profile>
  <profile><id>local</id></profile>
</profiles>""")


def test_effective_model():
    m = model_of({"pom.xml": PARENT, "bom/pom.xml": BOM, "a/pom.xml": A, "b/pom.xml": B},
                 {"revision": "2.0.0"})
    a, b = m.modules["a/pom.xml"], m.modules["b/pom.xml"]
    assert a.coordinate == "com.x:a:2.0.0" and a.parent_path == "pom.xml"
    assert m.interpolate("${nested}", a, None) == ("shop-core", [])
    assert m.interpolate("${project.parent.version}/${missing}", a, None) == ("2.0.0/${missing}", ["missing"])
    assert m.interpolate("${a}", a, None) == ("${a}", ["a"])
    deps = {d.ga: d for d in b.dependencies}
    # the version of com.x:a comes from the in-repo BOM imported by the parent
    assert deps["com.x:a"].version == "2.0.0" and deps["com.x:a"].version_source == "MANAGED"
    # inherited from the parent's <dependencies>, version from its dependencyManagement
    assert deps["org.projectlombok:lombok"].version == "1.18.30" and deps["org.projectlombok:lombok"].scope == "provided"
    assert b.active_profiles == ["cloud"] and b.inactive_profiles == ["local"]
    assert b.declared_deployable(BOOT) and not a.declared_deployable(BOOT)
    codes = sorted(f.code for f in m.modules["pom.xml"].findings)
    assert codes == ["MODULE_SKIPPED", "PATH_OUTSIDE_TREE"]
    assert G(m).reactor_root("b/pom.xml") == "pom.xml"


def test_links_closure_and_deployable():
    m = model_of({"pom.xml": PARENT, "bom/pom.xml": BOM, "a/pom.xml": A, "b/pom.xml": B}, {"revision": "2.0.0"})
    links = link_dependencies(G(m))
    assert [t for _, t in links["b/pom.xml"].in_repo] == ["a/pom.xml"]
    assert closure(links, G(m), "b/pom.xml") == ["b/pom.xml", "a/pom.xml"]
    assert [x.basis for x in deployable_basis(m.modules["b/pom.xml"], [], BOOT)] == ["BOOT_PLUGIN"]
    assert deployable_basis(m.modules["a/pom.xml"], [], BOOT) == []
    assert deployable_basis(m.modules["pom.xml"], [("x", "p", 1, 1)], BOOT) == []  # pom packaging never deploys


def test_released_version_of_an_in_repo_module_is_source_unmapped():
    c = P("""<groupId>com.x</groupId><artifactId>c</artifactId><version>1</version>
    <dependencies><dependency><groupId>com.x</groupId><artifactId>a</artifactId><version>0.9</version></dependency></dependencies>""")
    a = P("<groupId>com.x</groupId><artifactId>a</artifactId><version>1</version>")
    m = model_of({"a/pom.xml": a, "c/pom.xml": c})
    links = link_dependencies(G(m))
    assert links["c/pom.xml"].in_repo == []
    assert [f.code for f in links["c/pom.xml"].findings] == ["SOURCE_UNMAPPED"]


def test_parents_external_missing_cyclic_and_escaping():
    ext = P("""<parent><groupId>org.springframework.boot</groupId><artifactId>spring-boot-starter-parent</artifactId>
    <version>3.2.0</version><relativePath/></parent><artifactId>e</artifactId>""")
    miss = P("""<parent><groupId>com.corp</groupId><artifactId>corp-parent</artifactId><version>7</version>
    <relativePath>../../../../etc/pom.xml</relativePath></parent><artifactId>m</artifactId>""")
    c1 = P("""<parent><groupId>g</groupId><artifactId>c2</artifactId><version>1</version><relativePath>../c2/pom.xml</relativePath></parent>
    <artifactId>c1</artifactId>""")
    c2 = P("""<parent><groupId>g</groupId><artifactId>c1</artifactId><version>1</version><relativePath>../c1/pom.xml</relativePath></parent>
    <artifactId>c2</artifactId>""")
    m = model_of({"e/pom.xml": ext, "m/pom.xml": miss, "c1/pom.xml": c1, "c2/pom.xml": c2})
    assert [f.code for f in m.modules["e/pom.xml"].findings] == ["POM_PARENT_EXTERNAL"]
    assert sorted(f.code for f in m.modules["m/pom.xml"].findings) == ["PATH_OUTSIDE_TREE", "POM_PARENT_MISSING"]
    assert m.modules["c1/pom.xml"] is not None and m.modules["c2/pom.xml"] is not None  # a cycle ends, it does not hang
    assert any(f.code == "POM_PARENT_MISSING" for mod in (m.modules["c1/pom.xml"], m.modules["c2/pom.xml"])
               for f in mod.findings)


def test_malformed_doctype_and_skip():
    bad = "<project><artifactId>x</artifactId>"
    doctype = ('<?xml version="1.0"?><!DOCTYPE project [<!ENTITY v SYSTEM "file:///etc/hostname">]>'
               + P("<groupId>g</groupId><artifactId>d</artifactId><version>&v;</version><packaging>war</packaging>"))
    skip = P("""<groupId>g</groupId><artifactId>s</artifactId><version>1</version>
    <build><plugins><plugin><groupId>org.springframework.boot</groupId><artifactId>spring-boot-maven-plugin</artifactId>
    <configuration><skip>true</skip></configuration></plugin></plugins></build>""")
    m = model_of({"x/pom.xml": bad, "d/pom.xml": doctype, "s/pom.xml": skip})
    assert m.modules["x/pom.xml"].failed and m.modules["x/pom.xml"].findings[0].code == "MODULE_SKIPPED"
    d = m.modules["d/pom.xml"]  # the entity is never expanded, and Maven refuses the file: it is not read
    assert d.failed and d.version is None and [f.code for f in d.findings] == ["MODULE_SKIPPED"]
    assert "&v;" in d.findings[0].message
    assert deployable_basis(m.modules["s/pom.xml"], [], BOOT) == []


def test_property_activation_and_negation():
    x = P("""<groupId>g</groupId><artifactId>x</artifactId><version>1</version>
    <profiles>
      <profile><id>default</id><activation><activeByDefault>true</activeByDefault></activation></profile>
      <profile><id>notci</id><activation><property><name>!ci</name></property></activation></profile>
    </profiles>""")
    assert model_of({"x/pom.xml": x}).modules["x/pom.xml"].active_profiles == ["notci"]
    assert model_of({"x/pom.xml": x}, {"ci": "true"}).modules["x/pom.xml"].active_profiles == ["default"]


def test_maven_config():
    assert read_maven_config(b"-Drevision=1.2.3 -T 4 -D sha1=abc\n--batch-mode -Dflag") == {
        "revision": "1.2.3", "sha1": "abc", "flag": "true"}


def test_exclusion_reasons():
    assert exclusion_reason("src/test/java/A.java") == "test_source"
    assert exclusion_reason("target/classes/a.properties") == "build_output"
    assert exclusion_reason("build/x.java") == "build_output"
    assert exclusion_reason("target2/x.java") is None
    assert exclusion_reason("src/main/java/com/x/build/A.java") is None
    assert exclusion_reason("target/generated-sources/annotations/A.java") == "build_output"
    assert exclusion_reason("src/main/generated-sources/A.java") == "generated_sources"
    assert exclusion_reason(".mvn/wrapper/MavenWrapperDownloader.java") == "maven_wrapper"


def test_closure_follows_provided_dependencies_of_dependencies():
    svc = P("""<groupId>g</groupId><artifactId>svc</artifactId><version>1</version>
    <dependencies><dependency><groupId>g</groupId><artifactId>lib</artifactId><version>1</version></dependency>
    <dependency><groupId>g</groupId><artifactId>t</artifactId><version>1</version><scope>test</scope></dependency>
    </dependencies>""")
    lib = P("""<groupId>g</groupId><artifactId>lib</artifactId><version>1</version>
    <dependencies><dependency><groupId>g</groupId><artifactId>api</artifactId><version>1</version>
    <scope>provided</scope><optional>true</optional></dependency></dependencies>""")
    api = P("<groupId>g</groupId><artifactId>api</artifactId><version>1</version>")
    t = P("<groupId>g</groupId><artifactId>t</artifactId><version>1</version>")
    m = model_of({"svc/pom.xml": svc, "lib/pom.xml": lib, "api/pom.xml": api, "t/pom.xml": t})
    links = link_dependencies(G(m))
    # lib's types extend api's types, so a package holding lib holds api (never a dangling reference)
    assert closure(links, G(m), "svc/pom.xml") == ["svc/pom.xml", "api/pom.xml", "lib/pom.xml"]
    assert set(closure(links, G(m), "lib/pom.xml")) <= set(closure(links, G(m), "svc/pom.xml"))


def test_source_directory_is_interpolated():
    par = P("""<groupId>g</groupId><artifactId>par</artifactId><version>1</version><packaging>pom</packaging>
    <properties><main.source.dir>src/main/java2</main.source.dir></properties>
    <build><sourceDirectory>${main.source.dir}</sourceDirectory>
    <resources><resource><directory>${project.build.directory}/gen</directory></resource></resources></build>""")
    child = P("""<parent><groupId>g</groupId><artifactId>par</artifactId><version>1</version></parent>
    <artifactId>c</artifactId>""")
    m = model_of({"pom.xml": par, "c/pom.xml": child})
    c = m.modules["c/pom.xml"]
    assert c.source_roots == ["c/src/main/java2"]
    assert c.resource_roots == ["c/src/main/resources"]
    assert [f.code for f in c.findings] == ["PROPERTY_UNRESOLVED"]


def test_property_bombs_and_cycles_end():
    props = "".join(f"<p{i}>{('${p' + str(i + 1) + '}') * 16}</p{i}>" for i in range(10)) + "<p10>x</p10>"
    x = P(f"<groupId>g</groupId><artifactId>x</artifactId><version>${{p0}}</version><properties>{props}"
          "<a>${b}</a><b>${a}</b></properties>")
    m = model_of({"x/pom.xml": x})
    mod = m.modules["x/pom.xml"]
    assert mod.version == "${p0}"  # 16^10 characters: unresolved, not expanded
    assert any(f.code == "PROPERTY_UNRESOLVED" for f in mod.findings)
    assert m.interpolate("${a}", mod, None)[1] == ["a"]
    assert m.interpolate("${p9}", mod, None)[0] == "x" * 16


def test_compiler_config_comes_from_the_compiler_plugin_even_on_a_shared_line():
    from diting.inventory.pom import read_pom
    data = (b'<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>'
            b"<groupId>g</groupId><artifactId>a</artifactId><version>1</version><build><plugins>"
            b"<plugin><artifactId>maven-surefire-plugin</artifactId><configuration><source>1.6</source>"
            b"</configuration></plugin><plugin><artifactId>maven-compiler-plugin</artifactId>"
            b"<configuration><release>17</release></configuration></plugin></plugins></build></project>")
    assert read_pom("pom.xml", data).compiler_config == {"release": "17"}


def test_a_pom_starting_with_a_blank_line_is_read_as_maven_3_reads_it():
    from diting.inventory.pom import read_pom
    body = (b'<?xml version="1.0" encoding="UTF-8"?>\n<project><modelVersion>4.0.0</modelVersion>\n'
            b"<groupId>g</groupId>\n<artifactId>gw</artifactId><version>1</version></project>\n")
    pom = read_pom("gw/pom.xml", b"\n" + body)
    assert pom.error is None and pom.artifact_id == "gw" and pom.artifact_span.start == 5
    broken = read_pom("gw/pom.xml", b"\n\n" + body)  # Maven's parser refuses two characters
    assert broken.error and broken.artifact_id is None


def test_entity_references_in_a_pom_are_read_as_maven_3_reads_them(tmp_path):
    """An entity the POM declares itself (``<!ENTITY xxe …>``) was never expanded, rightly, but left
    ``svc&xxe;`` as the artifactId with no word. Maven's reader knows XML's own entities and XHTML's
    only: a reference to another — declared in the DOCTYPE, in element text or an attribute — makes
    Maven refuse the file, so the POM is not read (MODULE_SKIPPED naming file, line and entity; the
    coordinate unknown); ``&nbsp;`` and ``&copy;`` are characters, as there (they were a parse error)."""
    import json

    from diting.inventory.pom import read_pom
    from tests.conftest import BOOT_PLUGIN, make_repo, scan_repo
    head = '<?xml version="1.0"?>\n<!DOCTYPE project [\n  <!ENTITY xxe SYSTEM "file:///etc/hostname">\n]>\n'
    bad = read_pom("pom.xml", (head + "<project><modelVersion>4.0.0</modelVersion><groupId>g</groupId>\n"
                               "<artifactId>svc&xxe;</artifactId><version>1</version></project>\n").encode())
    assert (bad.artifact_id, bad.error_line) == (None, 6)
    assert bad.error == ("the entity reference &xxe; (line 6) names no entity Maven's POM reader knows (XML's own "
                         "and XHTML's; never one the file declares, which diting does not expand either): Maven "
                         "refuses the file")
    attr = read_pom("pom.xml", b'<!DOCTYPE p [<!ENTITY ns "urn:x">]>\n<project xmlns="&ns;"><artifactId>a'
                               b"</artifactId></project>")  # libxml2 expands it in an attribute; Maven does not
    assert attr.error_line == 2 and "&ns;" in attr.error and attr.artifact_id is None
    fine = read_pom("pom.xml", b"<project><!-- &c; --><artifactId>a</artifactId>\n<description>a&nbsp;b &copy; "
                               b"&amp;nbsp; &#65;<![CDATA[&d;]]></description></project>")
    assert (fine.error, fine.artifact_id, fine.description) == (None, "a", "a\u00a0b \u00a9 &nbsp; A&d;")
    repo, sha = make_repo(tmp_path, {"pom.xml": head + "<project><modelVersion>4.0.0</modelVersion><groupId>g"
                                     "</groupId>\n<artifactId>svc&xxe;</artifactId><version>1</version>"
                                     f"{BOOT_PLUGIN}</project>\n"})
    (pkg,) = scan_repo(repo, tmp_path / "out", sha).packages
    assert (pkg.service_id, pkg.status) == ("lib:root", "PARTIAL")
    diags = [json.loads(x) for x in (pkg.path / "diagnostics.jsonl").read_text().splitlines()]
    assert [(d["code"], d["message"]) for d in diags] == [("MODULE_SKIPPED", "pom.xml is not readable: " + bad.error
                                                          + "; its text names spring-boot-maven-plugin, so it may be a "
                                                          "deployable service: no service package is made for it while "
                                                          "its pom does not parse (an inventory file naming it makes a "
                                                          "FAILED one)")]
    names = [json.loads(x)["name"] for x in (pkg.path / "entities.jsonl").read_text().splitlines()]
    assert names == ["pom.xml"]  # no coordinate, never "g:svc&xxe;"


def test_a_deployable_module_whose_pom_does_not_parse_says_so(tmp_path):
    """A boot module with a malformed pom is no service (a module is one only when its pom is read):
    it was one MODULE_SKIPPED in the reactor's lib: package, with nothing saying a service went
    missing. The message now says what the pom's text shows; the lib: package is PARTIAL, never
    FAILED (docs/ir.md §11.3)."""
    import json

    from tests.conftest import BOOT_PLUGIN, make_repo, pom, scan_repo
    broken = pom("svc", body=BOOT_PLUGIN).replace("</project>", "<oops></project>")
    plain = pom("util").replace("</project>", "<oops></project>")
    repo, sha = make_repo(tmp_path, {"pom.xml": pom("shop-parent", parent=None, packaging="pom",
                                                    body="<modules><module>svc</module><module>util</module></modules>"),
                                     "svc/pom.xml": broken, "util/pom.xml": plain})
    (pkg,) = scan_repo(repo, tmp_path / "out", sha).packages
    assert (pkg.service_id, pkg.status) == ("lib:shop-parent", "PARTIAL")
    said = sorted(json.loads(x)["message"] for x in (pkg.path / "diagnostics.jsonl").read_text().splitlines())
    assert said == [
        "svc/pom.xml is not readable: Opening and ending tag mismatch: oops line 8 and project, line 8, column 17; its "
        "text names spring-boot-maven-plugin, so it may be a deployable service: no service package is made for it "
        "while its pom does not parse (an inventory file naming it makes a FAILED one)",
        "util/pom.xml is not readable: Opening and ending tag mismatch: oops line 8 and project, line 8, column 17"]
