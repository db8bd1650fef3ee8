"""Injection by generic type: Spring's type arguments as qualifiers, for fields inherited from a
generic base class (resolve/spring.py GENERIC_TYPE, resolve/types.py field_type seen from a subclass)."""

import json

from tests.conftest import BOOT_PLUGIN, pom
from tests.stagekit import scan_memory

APP = ("package com.example;\n@org.springframework.boot.autoconfigure.SpringBootApplication\n"
       "@org.mybatis.spring.annotation.MapperScan(\"com.example.mapper\")\n"
       "public class ShopApplication { public static void main(String[] a) { } }\n")
FILES = {
    "pom.xml": pom("shop", parent=None, body=BOOT_PLUGIN),
    "src/main/java/com/example/ShopApplication.java": APP,
    "src/main/java/com/example/domain/Order.java": "package com.example.domain;\npublic class Order { }\n",
    "src/main/java/com/example/domain/User.java": "package com.example.domain;\npublic class User { }\n",
    "src/main/java/com/example/domain/Sku.java": "package com.example.domain;\npublic class Sku { }\n",
    "src/main/java/com/example/core/BaseMapper.java":
        "package com.example.core;\npublic interface BaseMapper<T> { T byId(long id); }\n",
    "src/main/java/com/example/mapper/OrderMapper.java":
        "package com.example.mapper;\npublic interface OrderMapper extends com.example.core.BaseMapper<com.example.domain.Order> {\n"
        "    int countPaid();\n}\n",
    "src/main/java/com/example/mapper/UserMapper.java":
        "package com.example.mapper;\npublic interface UserMapper extends com.example.core.BaseMapper<com.example.domain.User> { }\n",
    "src/main/java/com/example/mapper/UserArchiveMapper.java":
        "package com.example.mapper;\npublic interface UserArchiveMapper extends com.example.core.BaseMapper<com.example.domain.User> { }\n",
    # Mapper<T> mapper: the type argument the subclass binds narrows the candidates
    "src/main/java/com/example/service/BaseService.java":
        "package com.example.service;\npublic abstract class BaseService<T> {\n"
        "    @org.springframework.beans.factory.annotation.Autowired protected com.example.core.BaseMapper<T> mapper;\n"
        "    public T get(long id) { return mapper.byId(id); }\n}\n",
    "src/main/java/com/example/service/OrderService.java":
        "package com.example.service;\n@org.springframework.stereotype.Service\n"
        "public class OrderService extends BaseService<com.example.domain.Order> { }\n",
    # two mappers bind User: still AMBIGUOUS, with both
    "src/main/java/com/example/service/UserService.java":
        "package com.example.service;\n@org.springframework.stereotype.Service\n"
        "public class UserService extends BaseService<com.example.domain.User> { }\n",
    # no mapper binds Sku
    "src/main/java/com/example/service/SkuService.java":
        "package com.example.service;\n@org.springframework.stereotype.Service\n"
        "public class SkuService extends BaseService<com.example.domain.Sku> { }\n",
    # M mapper with M bound to a concrete mapper; the subclass calls the mapper's own method
    "src/main/java/com/example/biz/BaseBiz.java":
        "package com.example.biz;\npublic abstract class BaseBiz<M extends com.example.core.BaseMapper<T>, T> {\n"
        "    @org.springframework.beans.factory.annotation.Autowired protected M mapper;\n}\n",
    "src/main/java/com/example/biz/OrderBiz.java":
        "package com.example.biz;\n@org.springframework.stereotype.Service\n"
        "public class OrderBiz extends BaseBiz<com.example.mapper.OrderMapper, com.example.domain.Order> {\n"
        "    public int paid() { return mapper.countPaid(); }\n}\n",
}


def _records(out):
    pkg = next(p for p in out.iterdir() if p.is_dir() and (p / "relations.jsonl").exists())
    rels = [json.loads(x) for x in (pkg / "relations.jsonl").read_text().splitlines()]
    diags = [json.loads(x) for x in (pkg / "diagnostics.jsonl").read_text().splitlines()]
    return rels, diags


def test_inherited_fields_are_injected_by_the_type_arguments_each_subclass_binds(tmp_path):
    out = tmp_path / "out"
    scan_memory(FILES, out)
    rels, diags = _records(out)
    inj = {r["attributes"].get("seen_from"): r for r in rels if r["kind"] == "INJECTS"
           and r["source_ref"]["record_id"].endswith("BaseService.mapper")}
    assert sorted(k for k in inj if k) == ["com.example.service.OrderService", "com.example.service.SkuService",
                                          "com.example.service.UserService"]
    assert None not in inj  # the abstract class is no bean: only its subclasses are injected
    order = inj["com.example.service.OrderService"]
    assert order["resolution_status"] == "RESOLVED" and order["attributes"]["basis"] == "GENERIC_TYPE"
    assert order["target_ref"]["record_id"].endswith("/orderMapper")
    assert order["attributes"]["type_args"] == ["com.example.domain.Order"]
    user = inj["com.example.service.UserService"]
    assert user["resolution_status"] == "AMBIGUOUS"
    assert sorted(c["record_id"].rsplit("/", 1)[-1] for c in user["candidate_target_refs"]) == \
        ["userArchiveMapper", "userMapper"]
    assert inj["com.example.service.SkuService"]["resolution_status"] == "UNRESOLVED"
    assert any(d["code"] == "BEAN_UNRESOLVED" and "SkuService" in d["message"] for d in diags)
    biz = [r for r in rels if r["kind"] == "INJECTS" and r["source_ref"]["record_id"].endswith("BaseBiz.mapper")]
    assert len(biz) == 1 and biz[0]["resolution_status"] == "RESOLVED", biz
    assert biz[0]["attributes"]["basis"] == "GENERIC_TYPE" and biz[0]["target_ref"]["record_id"].endswith("/orderMapper")
    # the subclass's call through the inherited M field reaches the mapper's own method
    calls = [r for r in rels if r["kind"] == "CALLS" and "OrderBiz#paid" in r["source_ref"]["record_id"]]
    assert [c["target_ref"]["record_id"].rsplit("/", 1)[-1] for c in calls] == ["com.example.mapper.OrderMapper#countPaid()"]


def test_a_field_with_concrete_type_arguments_is_narrowed_by_them(tmp_path):
    files = {k: v for k, v in FILES.items() if "/service/" not in k and "/biz/" not in k}
    files["src/main/java/com/example/web/OrderReport.java"] = (
        "package com.example.web;\n@org.springframework.stereotype.Component\npublic class OrderReport {\n"
        "    @org.springframework.beans.factory.annotation.Autowired\n"
        "    private com.example.core.BaseMapper<com.example.domain.Order> orders;\n}\n")
    out = tmp_path / "out"
    scan_memory(files, out)
    rels, _ = _records(out)
    inj = [r for r in rels if r["kind"] == "INJECTS" and r["source_ref"]["record_id"].endswith("OrderReport.orders")]
    assert len(inj) == 1 and inj[0]["resolution_status"] == "RESOLVED"
    assert inj[0]["attributes"]["basis"] == "GENERIC_TYPE" and "seen_from" not in inj[0]["attributes"]
