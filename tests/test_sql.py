"""The SQL stage: dynamic SQL variants, sqlglot lineage, logical tables on evidence (docs/sql.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from diting.sql.dynamic import MAX_VARIANTS, expand, fragment_lookup
from diting.sql.lineage import analyze
from diting.sql.mybatis import read_mapper
from diting.sql.shards import collapse, data_nodes
from diting.sql.variants import mapper_fragments
from tests.stagekit import scan_memory
from tests.conftest import BOOT_PLUGIN, make_repo, pom, scan_repo

HEAD = ('<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE mapper PUBLIC "-//mybatis.org//DTD Mapper 3.0//EN" '
        '"http://mybatis.org/dtd/mybatis-3-mapper.dtd">\n')


def _mapper(ns: str, body: str) -> str:
    return HEAD + f'<mapper namespace="{ns}">\n{body}\n</mapper>\n'


def _boot_app(artifact: str, **files: str) -> dict[str, str]:
    """A one-module Spring Boot service ``artifact`` (application class ``com.example.App``) with ``files``."""
    return {"pom.xml": pom(artifact, parent=None, body=BOOT_PLUGIN),
            "src/main/java/com/example/App.java": "package com.example;\n"
            "@org.springframework.boot.autoconfigure.SpringBootApplication\n"
            "public class App { public static void main(String[] a) { } }\n", **files}


def _scanned_statements(tmp_path, files: dict[str, str], service: str):
    """Scan ``files`` as a repository: ``(package rows, entities by record id, statement attributes by
    stable id, {(source record id, READS|WRITES, target record id)})``."""
    scan_memory(files, tmp_path / "out")
    p = _package(tmp_path / "out", service)
    ents = {e["record_id"]: e for e in p["entities.jsonl"]}
    st = {e["stable_id"]: e["attributes"] for e in ents.values() if e["kind"] == "SQL_STATEMENT"}
    rows = {(r["source_ref"]["record_id"], r["kind"], r["target_ref"]["record_id"])
            for r in p["relations.jsonl"] if r["kind"] in ("READS", "WRITES") and r["target_ref"]}
    return p, ents, st, rows


def _expand(xml: str, stmt: str, others: list[str] = ()):
    files = [read_mapper(f"m{i}.xml", x.encode()) for i, x in enumerate([xml, *others])]
    st = next(s for s in files[0].statements if s.id == stmt)
    return expand(st.body, files[0].namespace, fragment_lookup(mapper_fragments(files)))


def test_variants_follow_the_rule_and_fragments_are_ledger_paths():
    xml = _mapper("a.M", """
  <sql id="cols">id, ${alias}.status</sql>
  <select id="q">select <include refid="cols"><property name="alias" value="o"/></include> from t_order o
    <where>
      <if test="s != null">and o.status = #{s}</if>
      <choose><when test="a">and o.a = 1</when><when test="b">and o.b = 2</when><otherwise>and o.c = 3</otherwise></choose>
      <foreach collection="ids" item="i" open="and o.id in (" separator="," close=")">#{i}</foreach>
    </where>
  </select>
  <update id="u">update t_order <set><if test="x">x = #{x},</if><if test="y">y = #{y},</if></set> where id = #{id}</update>
  <select id="t"><trim prefix="where" prefixOverrides="and |or ">or a = 1</trim></select>""")
    e = _expand(xml, "q")
    assert [v.sql for v in e.variants] == [
        "select id, o.status from t_order o WHERE o.status = ? and o.a = 1 and o.id in ( ? )",
        "select id, o.status from t_order o WHERE o.status = ? and o.b = 2 and o.id in ( ? )",
        "select id, o.status from t_order o WHERE o.status = ? and o.c = 3 and o.id in ( ? )"]
    assert [(f.path, f.kind) for f in e.fragments] == [
        ("where[0]/if[0]", "SQL_IF"), ("where[0]/choose[0]/when[0]", "SQL_WHEN"),
        ("where[0]/choose[0]/when[1]", "SQL_WHEN"), ("where[0]/choose[0]/otherwise", "SQL_OTHERWISE")]
    assert [v.sql for v in _expand(xml, "u").variants] == ["update t_order SET x = ?, y = ? where id = ?"]
    assert [v.sql for v in _expand(xml, "t").variants] == ["where a = 1"]


def test_include_across_namespaces_and_the_variant_cap():
    other = _mapper("b.Common", '<sql id="where">where deleted = 0</sql>')
    xml = _mapper("a.M", '<select id="q">select * from t <include refid="b.Common.where"/></select>'
                  '<select id="missing">select * from t <include refid="nowhere"/></select>')
    assert _expand(xml, "q", [other]).variants[0].sql == "select * from t where deleted = 0"
    assert _expand(xml, "missing", [other]).missing_includes == ["nowhere"]
    whens = "".join(f'<when test="k == {i}">and k = {i}</when>' for i in range(80))
    big = _expand(_mapper("a.M", f'<select id="q">select * from t <where><choose>{whens}</choose></where></select>'), "q")
    assert len(big.variants) == MAX_VARIANTS and big.budget_exhausted


def test_lineage_operations_reads_inside_writes_and_failures():
    got = analyze("insert into t_archive (id) select id from t_order o join t_user u on o.uid = u.id where o.st = ?")
    assert [(t.name, t.operation, t.write) for t in got.tables] == [
        ("t_archive", "INSERT", True), ("t_order", "SELECT", False), ("t_user", "SELECT", False)]
    assert analyze("replace into t (a) values (?)").tables[0].operation == "REPLACE"
    assert analyze("insert into t (a) values (?) on duplicate key update a = ?").tables[0].operation == "UPSERT"
    assert analyze("select from where").status == "PARSE_FAILED"
    assert analyze("create table x (a int)").status == "UNSUPPORTED"
    assert [t.name for t in analyze("with x as (select * from a) select * from x").tables] == ["a"]


def test_collapse_only_on_evidence():
    names = {"stock_00", "stock_01", "order_log_202301", "order_log_20230101", "refund_0038", "coupon_01", "coupon",
             "order_info", "order_info_bak"}
    got = {n: (v.logical, v.evidence, v.candidate_of) for n, v in collapse(names, {}).items()}
    assert got["stock_00"] == ("stock", ["SIBLINGS"], None) and got["stock_01"] == ("stock", ["SIBLINGS"], None)
    assert got["order_log_202301"] == ("order_log_202301", [], None)      # a date, not a shard
    assert got["order_log_20230101"] == ("order_log_20230101", [], None)
    assert got["refund_0038"] == ("refund_0038", [], "refund")             # a lone suffix stays a candidate
    assert got["coupon_01"] == ("coupon_01", [], None)                     # an un-suffixed coupon exists
    assert got["order_info_bak"] == ("order_info_bak", [], None)           # a backup beside its base
    assert data_nodes("ds$->{0..1}.t_order_$->{0..1}") == [
        ("ds0", "t_order_0"), ("ds0", "t_order_1"), ("ds1", "t_order_0"), ("ds1", "t_order_1")]


def _package(out: Path, name: str) -> dict[str, list[dict]]:
    (pkg,) = [p for p in out.iterdir() if p.name.startswith(name + "@")]
    return {f: [json.loads(x) for x in (pkg / f).read_text(encoding="utf-8").splitlines()]
            for f in ("entities.jsonl", "relations.jsonl", "diagnostics.jsonl", "branch_ledger.jsonl", "coverage.json")
            if f != "coverage.json"} | {"coverage": [json.loads((pkg / "coverage.json").read_text())]}


@pytest.fixture(scope="module")
def shard_scan(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("sql")
    res = "src/main/resources"
    files = {
        **_boot_app("trade-app"),
        "src/main/java/com/example/dao/TradeMapper.java": "package com.example.dao;\n"
        "@org.apache.ibatis.annotations.Mapper\npublic interface TradeMapper {\n"
        "    Object byIdx(int idx); Object flows(long userId); Object stock(); Object logs(); Object dyn(String t);\n"
        "    Object ordersOfUser(long u); Object ordersByStatus(int s); Object sorted(String c); Object cond(String c);\n}\n",
        f"{res}/application.yml": "spring:\n  datasource:\n    url: jdbc:mysql://db.example:3306/trade\n"
        "  shardingsphere:\n    rules:\n      sharding:\n        tables:\n          t_order:\n"
        "            actual-data-nodes: ds$->{0..1}.t_order_$->{0..1}\n"
        "            table-strategy:\n              standard:\n                sharding-column: user_id\n",
        f"{res}/mapper/TradeMapper.xml": _mapper("com.example.dao.TradeMapper", """
  <select id="byIdx">select * from order_info_${idx} where order_id = #{id}</select>
  <select id="flows"><bind name="tn" value="'pay_flow_' + userId % 4"/>select * from ${tn} where user_id = #{userId}</select>
  <select id="stock">select a.* from stock_00 a union all select b.* from stock_01 b</select>
  <select id="logs">select * from order_log_202301 union all select * from refund_0038</select>
  <select id="dyn">select * from ${tableName}</select>
  <select id="ordersOfUser">select * from t_order where user_id = #{u}</select>
  <select id="ordersByStatus">select * from t_order where status = #{s}</select>
  <select id="sorted">select id from order_info_bak order by ${col}</select>
  <select id="cond">select id from coupon <where><if test="c != null">and ${c}</if></where></select>"""),
        "src/main/java/com/example/dao/LedgerDao.java": "package com.example.dao;\n"
        "@org.springframework.stereotype.Repository\npublic class LedgerDao {\n"
        "    @org.springframework.beans.factory.annotation.Autowired\n"
        "    private org.springframework.jdbc.core.JdbcTemplate jdbc;\n"
        "    public void debit(int money, String user) {\n"
        "        jdbc.update(\"update account_tbl set money = money - \" + money + \" where user_id = '\" + user + \"'\");\n"
        "    }\n"
        "    public Object ledger(long userId) {\n"
        "        String sql = \"select * from pay_ledger_\" + (userId % 8) + \" where user_id = ?\";\n"
        "        return jdbc.queryForList(sql, userId);\n"
        "    }\n}\n",
        f"{res}/sqlmap/Legacy.xml": '<?xml version="1.0"?>\n<sqlMap namespace="Legacy">\n'
        '  <select id="a">select 1</select>\n  <update id="b">update x set y = 1</update>\n</sqlMap>\n',
    }
    out = tmp / "out"
    scan_memory(files, out)
    return _package(out, "trade-app")


def _tables(p) -> dict[str, dict]:
    return {e["name"]: e for e in p["entities.jsonl"] if e["kind"] == "TABLE"}


def _reads(p, stmt: str) -> list[tuple[str, str | None, str]]:
    return sorted((r["kind"], r["target_ref"]["record_id"] if r["target_ref"] else None, r["resolution_status"])
                  for r in p["relations.jsonl"] if r["kind"] in ("READS", "WRITES")
                  and r["source_ref"]["record_id"] == f"stmt:com.example.dao.TradeMapper.{stmt}")


def test_placeholder_bind_siblings_routing_and_dates(shard_scan):
    t = _tables(shard_scan)
    oi = t["order_info"]
    assert (oi["physical_names"], oi["is_sharded"], [e["kind"] for e in oi["shard_evidence"]], oi["datasource"]) == \
        (["order_info_${idx}"], True, ["PLACEHOLDER"], "trade")
    pf = t["pay_flow"]
    assert ([e["kind"] for e in pf["shard_evidence"]], pf["candidate_shard_keys"], pf["confirmed_shard_key"]) == \
        (["BIND"], ["userId", "user_id"], None)
    assert (t["stock"]["physical_names"], [e["kind"] for e in t["stock"]["shard_evidence"]]) == \
        (["stock_00", "stock_01"], ["SIBLINGS"])
    assert t["order_log_202301"]["is_sharded"] is False
    assert (t["refund_0038"]["is_sharded"], t["refund_0038"]["attributes"]) == (False, {"shard_candidate_of": "refund"})
    to = t["t_order"]
    assert (to["physical_names"], to["confirmed_shard_key"], [e["kind"] for e in to["shard_evidence"]]) == \
        (["t_order"], "user_id", ["ROUTING_CONFIG"])
    assert "order_info_bak" in t and t["order_info_bak"]["is_sharded"] is False


def test_shard_broadcast_dynamic_tables_and_dollar_fragments(shard_scan):
    p = shard_scan
    diags = {(d["code"], d["affected_refs"][0]["record_id"]) for d in p["diagnostics.jsonl"]}
    assert ("SHARD_BROADCAST", "stmt:com.example.dao.TradeMapper.ordersByStatus") in diags
    assert ("SHARD_BROADCAST", "stmt:com.example.dao.TradeMapper.ordersOfUser") not in diags
    assert ("DYNAMIC_TABLE_NAME", "stmt:com.example.dao.TradeMapper.dyn") in diags
    assert _reads(p, "dyn") == [("READS", None, "UNRESOLVED")]
    ents = {e["record_id"]: e for e in p["entities.jsonl"]}
    assert ents["stmt:com.example.dao.TradeMapper.dyn"]["attributes"]["parse_status"] == "PARTIAL"
    assert ents["stmt:com.example.dao.TradeMapper.sorted"]["attributes"]["dynamic_fragments"] == ["${col}"]
    (item,) = [li for li in p["branch_ledger.jsonl"] if li["branch_id"].startswith("com.example.dao.TradeMapper.cond/")]
    assert (item["branch_id"], item["branch_kind"], item["resolution_status"]) == \
        ("com.example.dao.TradeMapper.cond/where[0]/if[0]", "SQL_IF", "UNRESOLVED")
    assert _reads(p, "cond") == [("READS", "table:table://coupon@trade", "RESOLVED")]
    binds = {(r["source_ref"]["record_id"].rsplit("#", 1)[-1], r["target_ref"]["record_id"])
             for r in p["relations.jsonl"] if r["kind"] == "BINDS_TO" and r["target_ref"]["record_id"].startswith("stmt:")}
    assert ("flows(long)", "stmt:com.example.dao.TradeMapper.flows") in binds and len(binds) == 11  # 9 mapper, 2 JDBC


def test_ibatis_files_count_as_unsupported_and_coverage_adds_up(shard_scan):
    p = shard_scan
    assert any(d["code"] == "SQL_UNSUPPORTED" and "iBatis" in d["message"] for d in p["diagnostics.jsonl"])
    dim = p["coverage"][0]["dimensions"]["sql_statements"]
    stmts = [e for e in p["entities.jsonl"] if e["kind"] == "SQL_STATEMENT"]
    by_status = {s: sum(1 for e in stmts if e["attributes"]["parse_status"] == s) for s in
                 ("PARSED", "PARTIAL", "PARSE_FAILED", "UNSUPPORTED")}
    assert dim["discovered"] == len(stmts) + 2 == 13  # 9 mapper XML, 2 JDBC, 2 iBatis
    assert (dim["resolved"], dim["partial"], dim["failed"]) == (
        by_status["PARSED"], by_status["PARTIAL"], by_status["PARSE_FAILED"] + by_status["UNSUPPORTED"] + 2)


def test_mybatis_plus_naming_convention():
    """MyBatis-Plus's default table names: snake case with an underscore before every upper-case
    letter but the first, the configured prefix, table-underline false and capital mode."""
    from diting.sql.plus import convention_table

    assert convention_table("SysUser") == "sys_user"
    assert convention_table("OAuthClient") == "o_auth_client"
    assert convention_table("Order2Item") == "order2_item"
    assert convention_table("SysUser", prefix="t_") == "t_sys_user"
    assert convention_table("SysUser", underline=False) == "sysUser"
    assert convention_table("SysUser", prefix="t_", capital=True) == "t_SYS_USER"  # the prefix as configured


def test_jdbc_sql_with_concatenated_values_and_a_concatenated_shard_suffix(shard_scan):
    """JdbcTemplate SQL built with ``+``: Java values in value positions are binds (the statement
    parses and its table is known); a value concatenated after a table stem is a shard suffix
    (CONCATENATION evidence, its variables candidate keys), never a table of its own."""
    stmts = {e["stable_id"]: e for e in shard_scan["entities.jsonl"] if e["kind"] == "SQL_STATEMENT"
             and e["attributes"]["source"] == "CALL"}
    debit = next(e for sid, e in stmts.items() if "LedgerDao#debit" in sid)
    ledger = next(e for sid, e in stmts.items() if "LedgerDao#ledger" in sid)
    assert debit["attributes"]["parse_status"] == "PARSED" and debit["attributes"]["operation"] == "UPDATE"
    assert debit["attributes"]["dynamic_fragments"] == ["${java:money}", "${java:user}"]
    assert ledger["attributes"]["parse_status"] == "PARSED" and ledger["attributes"]["operation"] == "SELECT"
    rel = {(r["kind"], r["target_ref"]["record_id"]) for r in shard_scan["relations.jsonl"]
           if r["kind"] in ("READS", "WRITES") and r["source_ref"]["record_id"] in (debit["record_id"],
                                                                                   ledger["record_id"])}
    assert rel == {("WRITES", "table:table://account_tbl@trade"), ("READS", "table:table://pay_ledger@trade")}
    t = _tables(shard_scan)["pay_ledger"]
    assert t["is_sharded"] and [e["kind"] for e in t["shard_evidence"]] == ["CONCATENATION"]
    assert t["candidate_shard_keys"] == ["userId", "user_id"] and t["confirmed_shard_key"] is None
    binds = [r for r in shard_scan["relations.jsonl"] if r["kind"] == "BINDS_TO"
             and r["target_ref"] and r["target_ref"]["record_id"] == ledger["record_id"]]
    assert len(binds) == 1 and binds[0]["attributes"]["binding"] == "CALL_SITE"
    assert binds[0]["source_ref"]["record_id"].endswith("LedgerDao#ledger(long)")


def test_sql_dialect_overrides_per_datasource_and_bad_values(tmp_path):
    """The JDBC URL names the dialect unless --sql-dialect overrides it, for one datasource or for
    all; the choice and its basis are on every statement and in analysis_input; a dialect sqlglot
    does not know ends the CLI with one message and a non-zero exit code."""
    from tests.conftest import run_cli

    files = {
        **_boot_app("pg-app"),
        "src/main/resources/application.properties": "spring.datasource.url=jdbc:postgresql://db:5432/ledger\n",
        "src/main/resources/mapper/M.xml": _mapper("com.example.M", '<select id="a">select id from t_a</select>'),
    }
    repo, sha = make_repo(tmp_path, files)

    def stmt_and_input(*dialects: str):
        out = tmp_path / f"out{len(list(tmp_path.iterdir()))}"
        scan_repo(repo, out, sha, sql_dialects=list(dialects))
        p = _package(out, "pg-app")
        st = next(e for e in p["entities.jsonl"] if e["kind"] == "SQL_STATEMENT")["attributes"]
        pkg = next(d for d in out.iterdir() if d.name.startswith("pg-app@"))
        return (st["dialect"], st["dialect_basis"]), json.loads((pkg / "analysis_input.json").read_text())["sql_dialects"]

    assert stmt_and_input() == (("postgres", "JDBC_URL"),
                                {"missing": "no --sql-dialect given: each datasource's JDBC URL, else mysql"})
    assert stmt_and_input("ledger=mysql") == (("mysql", "OVERRIDE"), {"ledger": "mysql"})
    assert stmt_and_input("other=oracle")[0] == ("postgres", "JDBC_URL")
    assert stmt_and_input("oracle", "ledger=tsql")[0] == ("tsql", "OVERRIDE")
    res = scan_repo(repo, tmp_path / "unused", sha, sql_dialects=["nosuch=oracle", "LEDGER=mysql"])
    assert res.unused_sql_dialects == ["nosuch=oracle"]  # database names match in any case
    bad = run_cli("scan", str(repo), "--commit", sha, "--out", str(tmp_path / "bad"), "--sql-dialect", "cobol")
    assert bad.returncode != 0 and "'cobol' is not a SQL dialect" in bad.stderr and "Traceback" not in bad.stderr


def test_result_maps_resolve_across_namespaces_with_extends(tmp_path):
    """A statement's resultMap is qualified as MyBatis qualifies it (no dot: the statement's
    namespace) and its ``extends`` chain is followed across namespaces; a map the package does not
    declare is ``resolved: false``, never invented."""
    base = _mapper("com.example.dao.BaseMapper", '<resultMap id="Base" type="com.example.model.Entity">'
                   '<id column="id" property="id"/></resultMap>')
    order = _mapper("com.example.dao.OrderMapper", """
  <resultMap id="Order" type="com.example.model.Order" extends="com.example.dao.BaseMapper.Base"/>
  <resultMap id="Detail" type="com.example.model.OrderDetail" extends="Order"/>
  <select id="one" resultMap="Detail">select * from oms_order where id = #{id}</select>
  <select id="two" resultMap="com.example.dao.BaseMapper.Base,Missing">select * from oms_order</select>""")
    files = {
        **_boot_app("rm-app"),
        "src/main/resources/mapper/BaseMapper.xml": base,
        "src/main/resources/mapper/OrderMapper.xml": order,
    }
    scan_memory(files, tmp_path / "out")
    st = {e["stable_id"]: e["attributes"] for e in _package(tmp_path / "out", "rm-app")["entities.jsonl"]
          if e["kind"] == "SQL_STATEMENT"}
    assert st["com.example.dao.OrderMapper.one"]["result_maps"] == [
        {"id": "com.example.dao.OrderMapper.Detail", "type": "com.example.model.OrderDetail", "resolved": True,
         "extends": ["com.example.dao.OrderMapper.Order", "com.example.dao.BaseMapper.Base"]}]
    assert st["com.example.dao.OrderMapper.two"]["result_maps"] == [
        {"id": "com.example.dao.BaseMapper.Base", "type": "com.example.model.Entity", "extends": [], "resolved": True},
        {"id": "com.example.dao.OrderMapper.Missing", "resolved": False}]


def test_mapper_locations(tmp_path):
    """Whether MyBatis finds a mapper file: a configured location (a YAML list here) names it, it
    sits beside its interface on the classpath, or locations are configured and name neither."""
    files = {
        **_boot_app("loc-app"),
        "src/main/resources/application.yml": "mybatis:\n  mapper-locations:\n    - classpath*:mapper/**/*.xml\n",
        "src/main/resources/mapper/oms/OrderMapper.xml": _mapper("com.example.dao.OrderMapper",
                                                                 '<select id="a">select id from oms_order</select>'),
        "src/main/resources/com/example/dao/ItemMapper.xml": _mapper("com.example.dao.ItemMapper",
                                                                     '<select id="b">select id from oms_item</select>'),
        "src/main/resources/legacy/LogMapper.xml": _mapper("com.example.dao.LogMapper",
                                                           '<select id="c">select id from oms_log</select>'),
    }
    scan_memory(files, tmp_path / "out")
    loc = {e["stable_id"]: e["attributes"]["mapper_location"]
           for e in _package(tmp_path / "out", "loc-app")["entities.jsonl"] if e["kind"] == "SQL_STATEMENT"}
    assert loc == {"com.example.dao.OrderMapper.a": "CONFIGURED", "com.example.dao.ItemMapper.b": "CO_LOCATED",
                   "com.example.dao.LogMapper.c": "NOT_CONFIGURED"}


def test_review_findings_on_sql_sources(tmp_path):
    """Forms a first review found wrong, each kept with its correct expected value: an Oracle JDBC
    URL names the dialect and database; a multi-table DELETE writes its real tables (never an alias);
    MERGE upserts its target and reads its source; a JDBC call on a try-with-resources variable and on
    ``getJdbcTemplate()`` is a statement; ``{call …}`` is unsupported, not a parse failure; a generic
    base mapper's default method invents no statement; ``super.getById`` reaches the subclass's mapper."""
    mp = "com.baomidou.mybatisplus"
    files = _boot_app(
        "ora-app",
        **{"src/main/resources/application.properties":
           "spring.datasource.url=jdbc:oracle:thin:@//ora.internal:1521/LEGACYDB\n",
           "src/main/resources/mapper/W.xml": _mapper("com.example.dao.W", """
  <select id="top">select id from widget where rownum &lt; 10</select>
  <delete id="purge">delete o from coupon_use o join coupon c on c.id = o.coupon_id where c.id = #{id}</delete>
  <update id="sync">merge into stock t using stock_in s on (t.id = s.id)
    when matched then update set t.qty = s.qty when not matched then insert (id, qty) values (s.id, s.qty)</update>
  <select id="proc" statementType="CALLABLE">{call refresh_stock(#{id})}</select>"""),
           "src/main/java/com/example/dao/Jdbc.java": "package com.example.dao;\n"
           "public class Jdbc extends org.springframework.jdbc.core.support.JdbcDaoSupport {\n"
           "  public void a(javax.sql.DataSource ds) throws Exception {\n"
           "    try (java.sql.Connection c = ds.getConnection(); var st = c.createStatement()) {\n"
           "      c.prepareStatement(\"select * from p_twr\");\n"
           "      st.executeUpdate(\"delete from p_twr_stmt\");\n    }\n  }\n"
           "  public void b() { getJdbcTemplate().update(\"delete from dao_support\"); }\n}\n",
           "src/main/java/com/example/dao/BaseMapperX.java": "package com.example.dao;\n"
           f"public interface BaseMapperX<T> extends {mp}.core.mapper.BaseMapper<T> {{\n"
           "  default T first() { return selectList(null).get(0); }\n}\n",
           "src/main/java/com/example/dao/CouponMapper.java": "package com.example.dao;\n"
           "@org.apache.ibatis.annotations.Mapper\n"
           "public interface CouponMapper extends BaseMapperX<com.example.dao.Coupon> { }\n",
           "src/main/java/com/example/dao/Coupon.java": "package com.example.dao;\npublic class Coupon { Long id; }\n",
           "src/main/java/com/example/dao/BaseServiceImpl.java": "package com.example.dao;\n"
           f"public abstract class BaseServiceImpl<M extends {mp}.core.mapper.BaseMapper<T>, T>\n"
           f"    extends {mp}.extension.service.impl.ServiceImpl<M, T> {{ }}\n",
           "src/main/java/com/example/dao/CouponServiceImpl.java": "package com.example.dao;\n"
           "@org.springframework.stereotype.Service\n"
           "public class CouponServiceImpl extends BaseServiceImpl<CouponMapper, Coupon> {\n"
           "  public Object one() { return super.getById(1L); }\n}\n"})
    p, ents, st, rows = _scanned_statements(tmp_path, files, "ora-app")
    rel = {(s, k, ents[t]["name"]) for s, k, t in rows}
    assert (st["com.example.dao.W.top"]["dialect"], st["com.example.dao.W.top"]["dialect_basis"]) == ("oracle", "JDBC_URL")
    assert "table://widget@LEGACYDB" in {e["stable_id"] for e in ents.values() if e["kind"] == "TABLE"}
    assert {(k, t) for s, k, t in rel if s == "stmt:com.example.dao.W.purge"} == {("WRITES", "coupon_use"),
                                                                                 ("READS", "coupon")}
    assert {(k, t) for s, k, t in rel if s == "stmt:com.example.dao.W.sync"} == {("WRITES", "stock"),
                                                                                ("READS", "stock_in")}
    assert st["com.example.dao.W.proc"]["parse_status"] == "UNSUPPORTED"
    assert not any(d["code"] == "SQL_PARSE_FAILED" for d in p["diagnostics.jsonl"])
    calls = {t for s, k, t in rel if "Jdbc#" in s}
    assert calls == {"p_twr", "p_twr_stmt", "dao_support"}
    assert not any("BaseMapperX" in sid for sid in st)
    binds = [r for r in p["relations.jsonl"] if r["kind"] == "BINDS_TO"
             and r["attributes"].get("binding") == "INHERITED_CALL"]
    first = [r for r in binds if "BaseMapperX#first" in r["source_ref"]["record_id"]]
    assert [r["resolution_status"] for r in first] == ["UNRESOLVED"]
    one = [r for r in binds if "CouponServiceImpl#one" in r["source_ref"]["record_id"]]
    assert [(r["resolution_status"], r["target_ref"]["record_id"]) for r in one] == [
        ("RESOLVED", "stmt:com.example.dao.CouponMapper.selectById")]


def test_hostile_review_findings_on_mapper_and_jdbc_text(tmp_path):
    """Forms a hostile review found wrong, each kept with its correct expected value: a ``--`` line
    comment does not swallow the rest of the statement; a ``${schema}.`` prefix leaves the datasource
    unknown (never a marker); ``${`` inside a JDBC string literal is text, not configuration; a
    resultMap ``extends`` cycle is unresolved; a repeated statement id is excluded, never merged; a
    namespace that is no Java name is refused; XML entity references make a statement PARTIAL; ``*`` in
    a mapper location stays inside one directory; nesting and include fan-out stay within budgets."""
    deep = '<if test="a">' * 200 + "x = 1" + "</if>" * 200
    fan = "".join(f'<sql id="f{i}">' + f'<include refid="f{i + 1}"/>' * 4 + "</sql>" for i in range(12))
    files = _boot_app(
        "hostile-app",
        **{"src/main/resources/application.properties": "order.suffix=2024\n"
           "mybatis.mapper-locations=classpath:mapper/*.xml\n",
           "src/main/resources/mapper/H.xml": _mapper("com.example.H", f"""
  <resultMap id="A" type="x.A" extends="B"/><resultMap id="B" type="x.B" extends="A"/>
  <select id="c" resultMap="A">select a.*, b.x -- main order table
    from t_a a join t_b b on a.id = b.a_id</select>
  <select id="s">select * from ${{schema}}.t_order</select>
  <select id="q">select * from t_one</select>
  <select id="q">select * from t_two</select>
  <select id="deep">select * from t_deep where {deep}</select>
  <sql id="f12">a = 1 and</sql>{fan}
  <select id="fan">select * from t_fan where <include refid="f0"/> 1 = 1</select>"""),
           "src/main/resources/mapper/sub/Dup.xml": _mapper("com.example.H", '<select id="q">select 1 from t_three</select>'),
           "src/main/resources/mapper/Bad.xml": _mapper("com.example:app/com",
                                                        '<select id="x">select * from t_fake</select>'),
           "src/main/java/com/example/J.java": "package com.example;\n"
           "public class J {\n  private final org.springframework.jdbc.core.JdbcTemplate jdbc = null;\n"
           "  public Object a() { return jdbc.queryForList(\"select * from t_x -- c\\n join t_y on 1 = 1\"); }\n"
           "  public Object b() { return jdbc.queryForList(\"select * from t_order_${order.suffix}\"); }\n}\n"})
    p, ents, st, rows = _scanned_statements(tmp_path, files, "hostile-app")
    tables = {(s, ents[t]["stable_id"]) for s, _, t in rows}
    assert {t for s, t in tables if s == "stmt:com.example.H.c"} == {"table://t_a@?", "table://t_b@?"}
    assert st["com.example.H.c"]["result_maps"][0]["resolved"] is False
    assert st["com.example.H.c"]["result_maps"][0]["unresolved_reason"] == "cycle"
    assert st["com.example.H.s"]["parse_status"] == "PARTIAL"
    assert {t for s, t in tables if s == "stmt:com.example.H.s"} == {"table://t_order@?"}
    assert not any("__dt" in (e.get("datasource") or "") for e in ents.values() if e["kind"] == "TABLE")
    assert {t for s, t in tables if s == "stmt:com.example.H.q"} == {"table://t_one@?"}  # never merged
    dim = p["coverage"][0]["dimensions"]["sql_statements"]
    # duplicates are excluded (MyBatis refuses them), each with SQL_DUPLICATE_ID; a statement of a namespace that
    # is no Java name is unsupported: failed, with a SQL_UNSUPPORTED of its own
    assert dim["excluded_by_reason"] == {"duplicate_id": 2}
    codes = [d["code"] for d in p["diagnostics.jsonl"]]
    assert codes.count("SQL_DUPLICATE_ID") == 2
    assert any(d["code"] == "SQL_UNSUPPORTED" and "no Java name" in d["message"] for d in p["diagnostics.jsonl"])
    assert dim["failed"] >= 1
    assert not any("t_fake" in sid for sid in {e["stable_id"] for e in ents.values()})
    a = next(sid for sid in st if sid.endswith("J#a()@0"))
    b = next(sid for sid in st if sid.endswith("J#b()@0"))
    assert {t for s, t in tables if s == f"stmt:{a}"} == {"table://t_x@?", "table://t_y@?"}
    assert not any(t.startswith("table://t_order_2024") for _, t in tables) and st[b]["parse_status"] != "PARSED"
    assert st["com.example.H.deep"]["parse_status"] == "PARSE_FAILED"  # cut at the nesting budget: said so
    assert "nested more than 150 deep" in st["com.example.H.deep"]["reason"]
    assert st["com.example.H.fan"]["parse_status"] == "PARTIAL"
    assert any(d["code"] == "BUDGET_EXHAUSTED" for d in p["diagnostics.jsonl"])
    locations = {sid.rsplit(".", 1)[-1]: at["mapper_location"] for sid, at in st.items() if "mapper_location" in at}
    assert locations["c"] == "CONFIGURED"


def test_xml_entity_references_make_a_statement_partial():
    from diting.sql.mybatis import read_mapper

    m = read_mapper("a.xml", b'<?xml version="1.0"?>\n<!DOCTYPE mapper [<!ENTITY more ", t_secret">]>\n'
                             b'<mapper namespace="m"><select id="a">select * from t_a &more;</select></mapper>')
    assert [(s.id, s.entities) for s in m.statements] == [("a", ["more"])]


@pytest.mark.parametrize("form", ["5.x", "4.x", "two-databases", "missing-file"])
def test_a_standalone_sharding_sphere_routing_file_named_by_the_driver_url(tmp_path, form):
    """``spring.datasource.url: jdbc:shardingsphere:classpath:…`` names a routing file: its tables'
    actualDataNodes/shardingColumn confirm shard keys, its data sources name the datasource."""
    res = "src/main/resources"
    rules = {
        "5.x": "rules:\n- !SHARDING\n  tables:\n    t_order:\n      actualDataNodes: ds_${0..1}.t_order_${0..1}\n"
               "      tableStrategy:\n        standard:\n          shardingColumn: user_id\n"
               "          shardingAlgorithmName: mod\n- !SINGLE\n  tables:\n  - \"*.*\"\n",
        "4.x": "shardingRule:\n  tables:\n    t_order:\n      actualDataNodes: ds_${0..1}.t_order_${0..1}\n"
               "      tableStrategy:\n        inline:\n          shardingColumn: user_id\n"
               "          algorithmExpression: t_order_${user_id % 2}\n",
    }
    db1 = "trade_1" if form == "two-databases" else "trade"
    routing = (f"dataSources:\n  ds_0:\n    jdbcUrl: jdbc:mysql://db0:3306/trade\n    password: s3cret\n"
               f"  ds_1:\n    url: jdbc:mysql://db1:3306/{db1}\n" + rules["4.x" if form == "4.x" else "5.x"])
    files = _boot_app(
        "trade-app",
        **{f"{res}/application.yml": "spring:\n  datasource:\n    driver-class-name: "
           "org.apache.shardingsphere.driver.ShardingSphereDriver\n    url: jdbc:shardingsphere:classpath:rules/sharding.yaml\n",
           "src/main/java/com/example/dao/OrderMapper.java": "package com.example.dao;\n"
           "@org.apache.ibatis.annotations.Mapper\npublic interface OrderMapper { Object byStatus(int s); Object mine(long u); }\n",
           f"{res}/mapper/OrderMapper.xml": _mapper("com.example.dao.OrderMapper",
                                                    '  <select id="byStatus">select * from t_order where status = #{s}</select>\n'
                                                    '  <select id="mine">select * from t_order where user_id = #{u}</select>')})
    if form != "missing-file":
        files[f"{res}/rules/sharding.yaml"] = routing
    scan_memory(files, tmp_path / "out")
    p = _package(tmp_path / "out", "trade-app")
    (t,) = [e for e in p["entities.jsonl"] if e["kind"] == "TABLE"]
    codes = {(d["code"], d["affected_refs"][0]["record_id"]) for d in p["diagnostics.jsonl"]}
    if form == "missing-file":  # nothing confirms a key, nothing invents one
        assert (t["is_sharded"], t["confirmed_shard_key"], t["datasource"]) == (False, None, None)
        assert not any(c == "SHARD_BROADCAST" for c, _ in codes)
        return
    assert (t["confirmed_shard_key"], [e["kind"] for e in t["shard_evidence"]]) == ("user_id", ["ROUTING_CONFIG"])
    assert t["datasource"] == (None if form == "two-databases" else "trade")
    assert ("SHARD_BROADCAST", "stmt:com.example.dao.OrderMapper.byStatus") in codes
    assert ("SHARD_BROADCAST", "stmt:com.example.dao.OrderMapper.mine") not in codes
    segs = {s["record_id"]: s for s in
            (json.loads(x) for pkg in (tmp_path / "out").iterdir() if pkg.name.startswith("trade-app@")
             for x in (pkg / "source_segments.jsonl").read_text().splitlines())}
    ev = segs[t["shard_evidence"][0]["evidence_ref"]["record_id"]]
    assert ev["locator"]["path"] == f"{res}/rules/sharding.yaml" and "actualDataNodes" in ev["content"]
    assert "s3cret" not in json.dumps(p)


def _routing_scan(tmp_path, url: str, routing: dict[str, str], app_extra: str = "") -> dict[str, list[dict]]:
    res = "src/main/resources"
    files = _boot_app(
        "trade-app",
        **{f"{res}/application.yml": f"spring:\n  datasource:\n    url: {url}\n{app_extra}",
           "src/main/java/com/example/dao/OrderMapper.java": "package com.example.dao;\n"
           "@org.apache.ibatis.annotations.Mapper\npublic interface OrderMapper {\n"
           "    Object byStatus(int s); Object mine(long u); Object one(long u, long o);\n}\n",
           f"{res}/mapper/OrderMapper.xml": _mapper("com.example.dao.OrderMapper",
                                                    '  <select id="byStatus">select * from t_order where status = #{s}</select>\n'
                                                    '  <select id="mine">select * from t_order where user_id = #{u}</select>\n'
                                                    '  <select id="one">select * from t_order where user_id = #{u} and order_id = #{o}</select>')})
    files.update({f"{res}/{k}": v for k, v in routing.items()})
    scan_memory(files, tmp_path / "out")
    p = _package(tmp_path / "out", "trade-app")
    p["segments"] = [json.loads(x) for pkg in (tmp_path / "out").iterdir() if pkg.name.startswith("trade-app@")
                     for x in (pkg / "source_segments.jsonl").read_text().splitlines()]
    return p


def _broadcast(p) -> dict[str, str]:
    return {d["affected_refs"][0]["record_id"].rsplit(".", 1)[-1]: d["message"]
            for d in p["diagnostics.jsonl"] if d["code"] == "SHARD_BROADCAST"}


def test_routing_defaults_two_columns_and_auto_tables(tmp_path):
    """A 4.x default database strategy plus a table strategy: two routing columns, no single key;
    a statement missing either goes to every shard, naming what it misses."""
    ds = "dataSources:\n  ds_0:\n    url: jdbc:mysql://db0:3306/trade\n"
    p = _routing_scan(tmp_path / "a", "jdbc:shardingsphere:classpath:sharding.yaml?placeholder-type=none", {
        "sharding.yaml": ds + "shardingRule:\n  defaultDatabaseStrategy:\n    inline:\n      shardingColumn: user_id\n"
        "  tables:\n    t_order:\n      actualDataNodes: ds_0.t_order_${0..1}\n      tableStrategy:\n"
        "        inline:\n          shardingColumn: order_id\n"})
    (t,) = [e for e in p["entities.jsonl"] if e["kind"] == "TABLE"]
    assert (t["confirmed_shard_key"], t["attributes"]["routing_columns"]) == \
        (None, {"database": ["user_id"], "table": ["order_id"]})
    assert not [d for d in p["diagnostics.jsonl"] if d["code"] == "SHARD_KEY_UNCONFIRMED"]
    b = _broadcast(p)
    assert set(b) == {"byStatus", "mine"} and "table routing column order_id" in b["mine"] \
        and "database" not in b["mine"]
    # 5.x: an auto table whose sharding strategy names the key
    p = _routing_scan(tmp_path / "b", "jdbc:shardingsphere:classpath:sharding.yaml", {
        "sharding.yaml": ds + "rules:\n- !SHARDING\n  autoTables:\n    t_order:\n      actualDataSources: ds_0\n"
        "      shardingStrategy:\n        standard:\n          shardingColumn: user_id\n"})
    (t,) = [e for e in p["entities.jsonl"] if e["kind"] == "TABLE"]
    assert (t["confirmed_shard_key"], [e["kind"] for e in t["shard_evidence"]]) == ("user_id", ["ROUTING_CONFIG"])
    assert set(_broadcast(p)) == {"byStatus"}


def test_routing_file_problems_are_diagnosed_never_guessed(tmp_path):
    # a routing file the package does not hold, and one the URL names through an unresolved placeholder
    for i, url in enumerate(["jdbc:shardingsphere:classpath:missing.yaml", "${ROUTING_URL}"]):
        p = _routing_scan(tmp_path / f"m{i}", url, {})
        msgs = [d["message"] for d in p["diagnostics.jsonl"] if d["code"] == "CONFIG_VALUE_UNKNOWN"]
        assert any("routing file is not read" in m for m in msgs) == (i == 0), msgs
        (t,) = [e for e in p["entities.jsonl"] if e["kind"] == "TABLE"]
        assert t["confirmed_shard_key"] is None and not _broadcast(p)
    # a range no routing file means (thousands of digits), and a product of two huge ranges
    p = _routing_scan(tmp_path / "r", "jdbc:shardingsphere:classpath:r.yaml", {
        "r.yaml": "rules:\n- !SHARDING\n  tables:\n    t_order:\n      actualDataNodes: "
        f"ds_${{0..99999}}.t_order_${{0..{'9' * 5000}}},ds_${{0..99999}}.t_order_${{0..99999}}\n"
        "      tableStrategy:\n        standard:\n          shardingColumn: user_id\n"})
    (t,) = [e for e in p["entities.jsonl"] if e["kind"] == "TABLE"]
    assert t["confirmed_shard_key"] == "user_id"
    # a routing file with a .java name is still config: its secrets are redacted
    p = _routing_scan(tmp_path / "j", "jdbc:shardingsphere:classpath:routing.java", {
        "routing.java": "{dataSources: {ds_0: {url: 'jdbc:mysql://db0:3306/trade', password: FlowS3cret}}, "
        "rules: [!SHARDING {tables: {t_order: {actualDataNodes: ds_0.t_order_0, tableStrategy: "
        "{standard: {shardingColumn: user_id}}}}}]}\n"})
    assert "FlowS3cret" not in json.dumps(p)
    # a routing file that is not YAML is said (with its line), never read as an empty one
    p = _routing_scan(tmp_path / "b", "jdbc:shardingsphere:classpath:b.yaml", {"b.yaml": "rules:\n  - [\n"})
    (bad,) = [d for d in p["diagnostics.jsonl"] if d["code"] == "CONFIG_VALUE_UNKNOWN" and "b.yaml:" in d["message"]]
    assert bad["message"].startswith("src/main/resources/b.yaml: the ShardingSphere routing file is not read (")
    segs = {s["record_id"]: s["locator"] for s in p["segments"]}
    assert [(segs[r["record_id"]]["path"], segs[r["record_id"]]["start_line"]) for r in bad["evidence_refs"]] == [
        ("src/main/resources/b.yaml", 2)]  # the end of the file, where YAML stopped
    # Spring properties shaped like a routing file are not one
    p = _routing_scan(tmp_path / "s", "jdbc:mysql://db:3306/trade", {},
                      app_extra="rules:\n  - tables:\n      t_order:\n        actualDataNodes: ds.t_order_0\n"
                      "        tableStrategy:\n          standard:\n            shardingColumn: user_id\n")
    (t,) = [e for e in p["entities.jsonl"] if e["kind"] == "TABLE"]
    assert (t["is_sharded"], t["confirmed_shard_key"]) == (False, None)
