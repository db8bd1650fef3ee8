"""Spring contexts as Spring builds them (issue 18 item 2): XML contexts reached through relative
``<import resource>`` chains and web.xml, and datasource beans naming the datasource of the
SqlSessionFactory / MapperScannerConfigurer they feed."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import BOOT_PLUGIN, pom
from tests.stagekit import scan_memory

APP = ("package com.example;\n@org.springframework.boot.autoconfigure.SpringBootApplication\n"
       "@org.springframework.context.annotation.ImportResource(locations = {\"classpath:spring/app.xml\"})\n"
       "public class App { public static void main(String[] a) { } }\n")


def _beans(body: str) -> str:
    return ('<?xml version="1.0"?>\n<beans xmlns="http://www.springframework.org/schema/beans">\n' + body +
            "</beans>\n")


def _mapper(ns: str, table: str) -> str:
    return ('<?xml version="1.0"?>\n<!DOCTYPE mapper PUBLIC "-//mybatis.org//DTD Mapper 3.0//EN" '
            '"http://mybatis.org/dtd/mybatis-3-mapper.dtd">\n'
            f'<mapper namespace="{ns}">\n  <select id="count" resultType="int">select count(*) from {table}</select>\n'
            "</mapper>\n")


def _records(out: Path) -> list[dict]:
    recs = []
    for pkg in out.iterdir():
        for f in ("entities.jsonl", "relations.jsonl", "diagnostics.jsonl"):
            p = pkg / f
            if p.is_file():
                recs.extend(json.loads(line) for line in p.read_text().splitlines())
    return recs


def _scan(tmp_path: Path, files: dict[str, str]) -> list[dict]:
    base = {"pom.xml": pom("shop", parent=None, body=BOOT_PLUGIN),
            "src/main/java/com/example/App.java": APP}
    out = tmp_path / "out"
    scan_memory(dict(base, **files), out)
    return _records(out)


def _tables(recs: list[dict]) -> list[str]:
    return sorted(r["stable_id"] for r in recs if r.get("kind") == "TABLE")


def test_one_xml_datasource_bean_names_the_mappers_datasource(tmp_path):
    recs = _scan(tmp_path, {
        "src/main/resources/application.properties": "db.url=jdbc:mysql://db1:3306/trade?useSSL=false\n",
        "src/main/resources/spring/app.xml": _beans(
            '  <import resource="dao/datasource.xml"/>\n'),
        # relative to spring/app.xml: spring/dao/datasource.xml
        "src/main/resources/spring/dao/datasource.xml": _beans(
            '  <bean id="dataSource" class="com.alibaba.druid.pool.DruidDataSource">\n'
            '    <property name="url" value="${db.url}"/>\n  </bean>\n'
            '  <bean id="sqlSessionFactory" class="org.mybatis.spring.SqlSessionFactoryBean">\n'
            '    <property name="dataSource" ref="dataSource"/>\n'
            '    <property name="mapperLocations" value="classpath:mapper/*.xml"/>\n  </bean>\n'),
        "src/main/resources/mapper/OrderMapper.xml": _mapper("com.example.dao.OrderMapper", "t_order"),
    })
    assert _tables(recs) == ["table://t_order@trade"]


def test_two_datasources_route_mappers_through_their_factories(tmp_path):
    recs = _scan(tmp_path, {
        "src/main/resources/application.properties": "pay.url=jdbc:mysql://db2/pay\n",
        "src/main/resources/spring/app.xml": _beans(
            '  <bean id="tradeDs" class="com.zaxxer.hikari.HikariDataSource">\n'
            '    <property name="jdbcUrl" value="jdbc:mysql://db1/trade"/>\n  </bean>\n'
            '  <bean id="payDs" class="org.apache.commons.dbcp2.BasicDataSource">\n'
            '    <property name="url" value="${pay.url}"/>\n  </bean>\n'
            '  <bean id="tradeFactory" class="org.mybatis.spring.SqlSessionFactoryBean">\n'
            '    <property name="dataSource" ref="tradeDs"/>\n'
            '    <property name="mapperLocations" value="classpath*:mapper/trade/**/*.xml"/>\n  </bean>\n'
            '  <bean id="payFactory" class="org.mybatis.spring.SqlSessionFactoryBean">\n'
            '    <property name="dataSource" ref="payDs"/>\n  </bean>\n'
            '  <bean class="org.mybatis.spring.mapper.MapperScannerConfigurer">\n'
            '    <property name="basePackage" value="com.example.**.pay"/>\n'
            '    <property name="sqlSessionFactoryBeanName" value="payFactory"/>\n  </bean>\n'
            '  <bean id="logDs" class="com.alibaba.druid.pool.DruidDataSource">\n'
            '    <property name="url" value="${log.url}"/>\n  </bean>\n'
            '  <bean id="logFactory" class="org.mybatis.spring.SqlSessionFactoryBean">\n'
            '    <property name="dataSource" ref="logDs"/>\n'
            '    <property name="mapperLocations" value="classpath:mapper/log/*.xml"/>\n  </bean>\n'),
        "src/main/resources/mapper/trade/OrderMapper.xml": _mapper("com.example.trade.OrderMapper", "t_order"),
        # beside its interface: routed by the scanner's package pattern
        "src/main/resources/com/example/dao/pay/PayMapper.xml": _mapper("com.example.dao.pay.PayMapper", "t_pay"),
        # the datasource's URL does not resolve: its tables stay at an unknown datasource
        "src/main/resources/mapper/log/LogMapper.xml": _mapper("com.example.log.LogMapper", "t_log"),
    })
    assert _tables(recs) == ["table://t_log@?", "table://t_order@trade", "table://t_pay@pay"]


def test_bean_method_datasource_with_a_placeholder_url(tmp_path):
    recs = _scan(tmp_path, {
        "src/main/resources/application.yml": "app:\n  db: jdbc:mysql://db1:3306/stock\n",
        "src/main/resources/spring/app.xml": _beans(""),
        "src/main/java/com/example/DbConfig.java":
            "package com.example;\nimport org.springframework.context.annotation.Bean;\n"
            "@org.springframework.context.annotation.Configuration\npublic class DbConfig {\n"
            "    @org.springframework.beans.factory.annotation.Value(\"${app.db}\") private String url;\n"
            "    @Bean public javax.sql.DataSource dataSource() {\n"
            "        com.zaxxer.hikari.HikariDataSource ds = new com.zaxxer.hikari.HikariDataSource();\n"
            "        ds.setJdbcUrl(url);\n        return ds;\n    }\n}\n",
        "src/main/resources/mapper/StockMapper.xml": _mapper("com.example.dao.StockMapper", "t_stock"),
        "src/main/resources/application.properties": "mybatis.mapper-locations=classpath:mapper/*.xml\n",
    })
    assert _tables(recs) == ["table://t_stock@stock"]


JSF_API = "package com.acme.api;\npublic interface StatsService { int daily(String day); }\n"
JSF_IMPL = ("package com.acme.impl;\n@org.springframework.stereotype.Service(\"statsService\")\n"
            "public class StatsServiceImpl implements com.acme.api.StatsService {\n"
            "    public int daily(String day) { return 0; }\n}\n")
JSF_XML = ('<?xml version="1.0"?>\n<beans xmlns="http://www.springframework.org/schema/beans" '
           'xmlns:jsf="http://jsf.jd.com/schema/jsf">\n'
           '  <jsf:provider id="statsProvider" interface="com.acme.api.StatsService" alias="prod" ref="statsService"/>\n'
           "</beans>\n")


def _entries(recs: list[dict]) -> list[tuple[str, str]]:
    return sorted((r["entry_kind"], r["urn"]) for r in recs if r.get("kind") == "ENTRY" and r["entry_kind"] != "MAIN")


def test_relative_import_loads_the_jsf_providers(tmp_path):
    """@ImportResource of spring/spring-context.xml, which imports jsf/jsf-provider.xml: the
    provider file is spring/jsf/jsf-provider.xml, so its providers are entries."""
    recs = _scan(tmp_path, {
        "src/main/java/com/example/App.java": APP.replace("classpath:spring/app.xml", "classpath:spring/spring-context.xml"),
        "src/main/java/com/acme/api/StatsService.java": JSF_API,
        "src/main/java/com/acme/impl/StatsServiceImpl.java": JSF_IMPL,
        "src/main/resources/spring/spring-context.xml": _beans(
            '  <import resource="jsf/jsf-provider.xml"/>\n'
            '  <import resource="classpath:spring/missing.xml"/>\n'),
        "src/main/resources/spring/jsf/jsf-provider.xml": JSF_XML,
    })
    assert _entries(recs) == [("JSF_PROVIDER", "jsf://com.acme.api.StatsService#daily")]
    assert not [r for r in recs if r.get("code") == "ENTRY_NOT_LOADED"]
    missing = [r["message"] for r in recs if r.get("code") == "CONSTANT_UNRESOLVED"]
    assert len(missing) == 1 and "classpath:spring/missing.xml names no file" in missing[0], missing


def test_web_xml_root_and_servlet_contexts(tmp_path):
    """A WAR: the root context from <context-param>, the DispatcherServlet's from its init-param,
    a second DispatcherServlet's from Spring's default /WEB-INF/{name}-servlet.xml."""
    web = ('<?xml version="1.0"?>\n<web-app xmlns="http://xmlns.jcp.org/xml/ns/javaee">\n'
           "  <context-param><param-name>contextConfigLocation</param-name>\n"
           "    <param-value>classpath:spring/root.xml</param-value></context-param>\n"
           "  <listener><listener-class>org.springframework.web.context.ContextLoaderListener</listener-class></listener>\n"
           "  <servlet><servlet-name>api</servlet-name>\n"
           "    <servlet-class>org.springframework.web.servlet.DispatcherServlet</servlet-class>\n"
           "    <init-param><param-name>contextConfigLocation</param-name>\n"
           "      <param-value>/WEB-INF/spring/api-*.xml</param-value></init-param></servlet>\n"
           "  <servlet><servlet-name>admin</servlet-name>\n"
           "    <servlet-class>org.springframework.web.servlet.DispatcherServlet</servlet-class></servlet>\n"
           # another library's DispatcherServlet (Dubbo's) loads no Spring context of its own
           "  <servlet><servlet-name>other</servlet-name>\n"
           "    <servlet-class>org.apache.dubbo.remoting.http.servlet.DispatcherServlet</servlet-class></servlet>\n"
           "</web-app>\n")
    bean = '  <bean id="{0}" class="com.acme.impl.{1}"/>\n'
    files = {
        "pom.xml": pom("shop", parent=None, packaging="war"),
        "src/main/webapp/WEB-INF/web.xml": web,
        "src/main/resources/spring/root.xml": _beans(bean.format("rootBean", "RootBean")),
        "src/main/webapp/WEB-INF/spring/api-beans.xml": _beans(bean.format("apiBean", "ApiBean")),
        "src/main/webapp/WEB-INF/admin-servlet.xml": _beans(bean.format("adminBean", "AdminBean")),
        "src/main/webapp/WEB-INF/other-servlet.xml": _beans(bean.format("otherBean", "OtherBean")),
    }
    for cls in ("RootBean", "ApiBean", "AdminBean", "OtherBean"):
        files[f"src/main/java/com/acme/impl/{cls}.java"] = f"package com.acme.impl;\npublic class {cls} {{ }}\n"
    out = tmp_path / "out"
    scan_memory(files, out)
    loaded = {r["name"]: r["attributes"]["loaded"] for r in _records(out) if r.get("kind") == "BEAN"}
    assert loaded == {"rootBean": True, "apiBean": True, "adminBean": True, "otherBean": False}


def test_mapper_scan_names_its_factory(tmp_path):
    """@MapperScan(sqlSessionFactoryRef) routes its mappers' annotation statements to that factory's
    datasource; a scan naming a factory that is not declared routes nothing."""
    ds = ('  <bean id="{0}Ds" class="com.alibaba.druid.pool.DruidDataSource">\n'
          '    <property name="url" value="jdbc:mysql://db/{0}"/>\n  </bean>\n'
          '  <bean id="{0}Factory" class="org.mybatis.spring.SqlSessionFactoryBean">\n'
          '    <property name="dataSource" ref="{0}Ds"/>\n  </bean>\n')
    mapper = ("package com.example.{0};\npublic interface {1} {{\n"
              "    @org.apache.ibatis.annotations.Select(\"select count(*) from {2}\") int count();\n}}\n")
    recs = _scan(tmp_path, {
        "src/main/resources/spring/app.xml": _beans(ds.format("trade") + ds.format("pay")),
        "src/main/java/com/example/DaoConfig.java":
            "package com.example;\n@org.springframework.context.annotation.Configuration\n"
            "@org.mybatis.spring.annotation.MapperScan(basePackages = \"com.example.trade\", "
            "sqlSessionFactoryRef = \"tradeFactory\")\n"
            "@org.mybatis.spring.annotation.MapperScan(basePackages = \"com.example.audit\", "
            "sqlSessionFactoryRef = \"auditFactory\")\npublic class DaoConfig { }\n",
        "src/main/java/com/example/trade/OrderMapper.java": mapper.format("trade", "OrderMapper", "t_order"),
        "src/main/java/com/example/audit/AuditMapper.java": mapper.format("audit", "AuditMapper", "t_audit"),
    })
    assert _tables(recs) == ["table://t_audit@?", "table://t_order@trade"]


def test_bean_method_datasources_and_factories_of_a_two_database_service(tmp_path):
    """Spring Boot's multi-datasource form: @Bean @ConfigurationProperties(prefix) datasources,
    @Bean SqlSessionFactory methods taking a @Qualifier'd (or same-named) DataSource, and
    @MapperScan(sqlSessionFactoryRef) per package."""
    factory = ("    @Bean public org.apache.ibatis.session.SqlSessionFactory {0}Factory({1}javax.sql.DataSource {2})"
               " throws Exception {{\n"
               "        org.mybatis.spring.SqlSessionFactoryBean b = new org.mybatis.spring.SqlSessionFactoryBean();\n"
               "        b.setDataSource({2});\n        return b.getObject();\n    }}\n")
    mapper = ("package com.example.{0};\npublic interface {1} {{\n"
              "    @org.apache.ibatis.annotations.Select(\"select count(*) from {2}\") int count();\n}}\n")
    recs = _scan(tmp_path, {
        "src/main/resources/application.yml":
            "app:\n  db:\n    trade:\n      jdbc-url: jdbc:mysql://db1/trade\n    pay:\n      url: jdbc:mysql://db2/pay\n",
        "src/main/resources/spring/app.xml": _beans(""),
        "src/main/java/com/example/DbConfig.java":
            "package com.example;\nimport org.springframework.context.annotation.Bean;\n"
            "import org.springframework.boot.context.properties.ConfigurationProperties;\n"
            "@org.springframework.context.annotation.Configuration\n"
            "@org.mybatis.spring.annotation.MapperScan(basePackages = \"com.example.trade\", "
            "sqlSessionFactoryRef = \"tradeFactory\")\n"
            "@org.mybatis.spring.annotation.MapperScan(basePackages = \"com.example.pay\", "
            "sqlSessionFactoryRef = \"payFactory\")\npublic class DbConfig {\n"
            "    @Bean @ConfigurationProperties(prefix = \"app.db.trade\") public javax.sql.DataSource tradeDs() {\n"
            "        return org.springframework.boot.jdbc.DataSourceBuilder.create().build();\n    }\n"
            "    @Bean @ConfigurationProperties(\"app.db.pay\") public javax.sql.DataSource payDs() {\n"
            "        return org.springframework.boot.jdbc.DataSourceBuilder.create().build();\n    }\n"
            + factory.format("trade", "@org.springframework.beans.factory.annotation.Qualifier(\"tradeDs\") ", "ds")
            + factory.format("pay", "", "payDs") + "}\n",
        "src/main/java/com/example/trade/OrderMapper.java": mapper.format("trade", "OrderMapper", "t_order"),
        "src/main/java/com/example/pay/PayMapper.java": mapper.format("pay", "PayMapper", "t_pay"),
    })
    assert _tables(recs) == ["table://t_order@trade", "table://t_pay@pay"]


FEIGN_APP = APP.replace("@org.springframework.boot",
                        "@org.springframework.cloud.openfeign.EnableFeignClients\n@org.springframework.boot", 1)


def _feign(name: str, mapping: str, method: str) -> str:
    """A Feign client interface ``{Name}Client`` of service ``name`` with one method."""
    return (f"package com.example;\n@org.springframework.cloud.openfeign.FeignClient(name = \"{name}\")\n"
            f"public interface {name.capitalize()}Client {{\n  @org.springframework.web.bind.annotation.{mapping}\n"
            f"  {method};\n}}\n")


def test_a_bean_method_parameter_handed_to_the_constructor_is_the_field_the_object_calls(tmp_path):
    """A @Bean method's parameters are injected by Spring; the one ``new T(p, …)`` it returns stores
    them in T's fields (a written constructor or Lombok's), so calls through those fields reach the
    injected bean. A construction whose constructor is ambiguous by arity, or a field the method
    fills with something else, is not claimed."""
    feign = _feign("audit", 'PostMapping("/log")', "void save(String s)")
    recs = _scan(tmp_path, {
        "src/main/java/com/example/App.java": FEIGN_APP,
        "src/main/java/com/example/AuditClient.java": feign,
        # Lombok's constructor: the final fields in order
        "src/main/java/com/example/Listener.java":
            "package com.example;\n@lombok.RequiredArgsConstructor\npublic class Listener {\n"
            "  private final AuditClient audit;\n  private final String tag;\n"
            "  public void on(String s) { audit.save(tag + s); }\n}\n",
        # a written constructor storing its second parameter
        "src/main/java/com/example/Writer.java":
            "package com.example;\npublic class Writer {\n  private final AuditClient out;\n"
            "  public Writer(String name, AuditClient client) { this.out = client; }\n"
            "  public void write(String s) { out.save(s); }\n}\n",
        "src/main/java/com/example/Config.java":
            "package com.example;\n@org.springframework.context.annotation.Configuration\npublic class Config {\n"
            "  @org.springframework.context.annotation.Bean\n"
            "  public Listener listener(AuditClient auditClient) { return new Listener(auditClient, \"t\"); }\n"
            "  @org.springframework.context.annotation.Bean\n"
            "  public Writer writer(AuditClient c) { return new Writer(\"w\", c); }\n}\n",
    })
    injects = sorted((r["source_ref"]["record_id"].split("#")[-1], r["attributes"]["name"], r["resolution_status"])
                     for r in recs if r.get("kind") == "INJECTS" and "Config" in r["source_ref"]["record_id"])
    assert injects == [("listener(com.example.AuditClient)", "auditClient", "RESOLVED"),
                       ("writer(com.example.AuditClient)", "c", "RESOLVED")]
    consumed = [r for r in recs if r.get("kind") == "CONTRACT" and r.get("role") == "CONSUMED"]
    assert [r["urn"] for r in consumed] == ["http://audit/log#POST"]
    assert not [r for r in recs if r.get("code") == "DECLARED_UNUSED"]


def test_an_imported_class_is_constructor_injected_like_a_component(tmp_path):
    """A class an auto-configuration listing registers is built by Spring with its one constructor
    (Lombok's here) autowired, so its calls through the stored Feign client are calls of the service."""
    feign = _feign("users", 'GetMapping("/user/{name}")',
                   'String info(@org.springframework.web.bind.annotation.PathVariable("name") String name)')
    recs = _scan(tmp_path, {
        "src/main/java/com/example/App.java": FEIGN_APP,
        "src/main/java/com/example/UsersClient.java": feign,
        "src/main/java/com/example/Loader.java":
            "package com.example;\n@org.springframework.context.annotation.Primary\n@lombok.RequiredArgsConstructor\n"
            "public class Loader {\n  private final UsersClient users;\n"
            "  public String load(String n) { return users.info(n); }\n}\n",
        "src/main/resources/META-INF/spring/org.springframework.boot.autoconfigure.AutoConfiguration.imports":
            "com.example.Loader\n",
    })
    injects = [(r["attributes"]["name"], r["resolution_status"]) for r in recs
               if r.get("kind") == "INJECTS" and "Loader#<init>" in r["source_ref"]["record_id"]]
    assert injects == [("users", "RESOLVED")]
    assert [r["urn"] for r in recs if r.get("kind") == "CONTRACT" and r.get("role") == "CONSUMED"] == \
        ["http://users/user/{}#GET"]
