"""The facts of an IR package that ``fixtures/estate/expected.json`` lists, as comparable rows.

A fact is ``(service, family, key)`` with a ``status`` and a ``detail`` dict; :func:`project`
reads them from a package directory, each with the evidence lines (path, first line, last line)
of the records that make it. Families:

- ``service``: the SERVICE entity (key: stable_id; detail: deployable bases, service id basis).
- ``entry``: ENTRY entities (key: stable_id; detail: entry_kind and, for a recovery worker, its kind).
- ``contract``: CONTRACT entities (key: stable_id).
- ``rpc``: the RPC/HTTP edges of a package — EXPOSES (provider → contract, alias), BINDS_TO from a
  consumer bean to a CONSUMED contract (alias), CALLS with dispatch_kind RPC or DYNAMIC.
- ``topic``: PUBLISHES and SUBSCRIBES (target topic or ``?expression``; consumer group, tag, topic
  parameter, retries and dead-letter topic).
- ``statement``: SQL_STATEMENT entities (detail: parse_status, operation).
- ``table_access``: READS/WRITES from a statement to a TABLE (detail: operations, CALLED or DECLARED_ONLY,
  a conditional-update or upsert idempotency guard).
- ``table``: TABLE entities (detail: sharded, confirmed key, shard evidence kinds, physical names).
- ``config``: config bindings (key: consumer and config key; status: value status; detail: value).
- ``cache``: READS/WRITES of a CACHE_KEY.
- ``ledger``: branch ledger items (key: branch_id; detail: branch kind, outcome, effect count; cited by
  condition, or by the arm's first line when it has none).
- ``call``: CALLS between the package's methods (not RPC/dynamic, not to EXTERNAL; key: caller and
  target, ``?name`` when there is none; detail: dispatch kind, candidates of an AMBIGUOUS call).
- ``guard``: GUARDS from a config key to the method a branch of which it guards (detail: the branch).
- ``diagnostic``: diagnostics other than INFO (key: code and message).
"""

from __future__ import annotations

import json
from pathlib import Path

FAMILIES = ("service", "entry", "contract", "rpc", "topic", "statement", "table_access", "table", "config", "cache",
            "ledger", "call", "guard", "diagnostic")

Evidence = tuple[str, int, int]


def _read(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x]


def _ref(r: dict | None) -> str:
    return r["record_id"] if r else "?"


def project(pkg: Path) -> dict[tuple[str, str, str], dict]:
    """``{(service, family, key): {"status", "detail", "evidence": [Evidence]}}`` of one package."""
    manifest = json.loads((pkg / "manifest.json").read_text(encoding="utf-8"))
    service = manifest["service_id"]
    ents = _read(pkg / "entities.jsonl")
    rels = _read(pkg / "relations.jsonl")
    segs = {s["record_id"]: s["locator"] for s in _read(pkg / "source_segments.jsonl")}
    by_id = {e["record_id"]: e for e in ents}
    out: dict[tuple[str, str, str], dict] = {}

    def ev(rec: dict) -> list[Evidence]:
        refs = list(rec.get("evidence_refs") or ()) + [s["evidence_ref"] for s in rec.get("shard_evidence") or ()]
        locs = [segs[r["record_id"]] for r in refs if r["record_id"] in segs]
        return sorted({(loc["path"], loc["start_line"], loc["end_line"]) for loc in locs})

    def put(family: str, key: str, status: str | None, detail: dict, rec: dict) -> None:
        row = out.setdefault((service, family, key), {"status": status, "detail": detail, "evidence": []})
        row["evidence"] = sorted(set(row["evidence"]) | set(ev(rec)))

    for e in ents:
        kind, attrs = e["kind"], e.get("attributes") or {}
        if kind == "SERVICE":
            put("service", e["stable_id"], None, {
                "deployable_basis": sorted(b["basis"] for b in attrs.get("deployable_basis") or ()),
                "service_id_basis": (attrs.get("service_id_basis") or {}).get("source")}, e)
        elif kind == "ENTRY":
            put("entry", e["stable_id"], None, dict({"entry_kind": e["entry_kind"]}, **(
                {"recovery": attrs["recovery"]["kind"]} if attrs.get("recovery") else {})), e)
        elif kind == "CONTRACT":
            put("contract", e["stable_id"], None, {}, e)
        elif kind == "SQL_STATEMENT":
            put("statement", e["stable_id"], None,
                {"parse_status": attrs.get("parse_status"), "operation": attrs.get("operation")}, e)
        elif kind == "TABLE":
            put("table", e["stable_id"], None, {
                "sharded": e.get("is_sharded"), "confirmed_shard_key": e.get("confirmed_shard_key"),
                "shard_evidence": sorted({s["kind"] for s in e.get("shard_evidence") or ()}),
                "physical_names": e.get("physical_names"), "candidate_shard_keys": e.get("candidate_shard_keys")}, e)
    for r in rels:
        kind, attrs, status = r["kind"], r.get("attributes") or {}, r["resolution_status"]
        src, dst = _ref(r["source_ref"]), _ref(r["target_ref"])
        dst_kind = by_id.get(dst, {}).get("kind")
        if kind == "EXPOSES":
            put("rpc", f"EXPOSES {src} -> {dst} alias={attrs.get('alias')}", status, {}, r)
        elif kind == "BINDS_TO" and dst_kind == "CONTRACT":
            put("rpc", f"BINDS_TO {src} -> {dst} alias={attrs.get('alias')}", status, {}, r)
        elif kind == "CALLS" and attrs.get("dispatch_kind") in ("RPC", "DYNAMIC"):
            put("rpc", f"CALLS {src} -> {dst}", status, {"dispatch_kind": attrs["dispatch_kind"]}, r)
        elif kind in ("PUBLISHES", "SUBSCRIBES"):
            target = dst if r["target_ref"] else "?" + ((r.get("match_keys") or {}).get("topic_expression") or "")
            put("topic", f"{kind} {src} -> {target}", status, {
                k: attrs[k] for k in ("consumer_group", "tag", "tag_filter", "topic_parameter", "max_retries",
                                      "dead_letter_topic") if attrs.get(k) is not None}, r)
        elif kind in ("READS", "WRITES") and dst.startswith("table:"):
            put("table_access", f"{kind} {src} -> {dst}", status, dict(
                {"operations": attrs.get("operations"), "access": attrs.get("access")},
                **({"idempotency_guard": attrs["idempotency_guard"]} if attrs.get("idempotency_guard") else {})), r)
        elif kind in ("READS", "WRITES") and dst.startswith("cache:"):
            put("cache", f"{kind} {src} -> {dst}", status, {}, r)
        elif kind == "CALLS" and dst_kind != "EXTERNAL" and not (dst or "").startswith("contract:"):
            cands = sorted(_ref(c) for c in r.get("candidate_target_refs") or ())
            target = dst or ("?" + (r.get("match_keys") or {}).get("name", "") if status == "UNRESOLVED"
                             else "?" + str(attrs.get("declared_target")))
            put("call", f"CALLS {src} -> {target} @{r['callsite_id'].rsplit('@', 1)[1]}", status,
                dict({"dispatch_kind": attrs.get("dispatch_kind")}, **({"candidates": cands} if cands else {})), r)
        elif kind == "GUARDS":
            put("guard", f"GUARDS {src} -> {dst}", status, {"guard": _ref(r["guard_ref"])}, r)
    for item in _read(pkg / "branch_ledger.jsonl"):
        cond = dict(item, evidence_refs=[item["condition_ref"]] if item.get("condition_ref") else
                    item["evidence_refs"])
        put("ledger", item["branch_id"], item["resolution_status"],
            {"branch_kind": item["branch_kind"], "outcome_kind": item["outcome_kind"],
             "effects": len(item["effect_refs"])}, cond)
    for b in _read(pkg / "config_bindings.jsonl"):
        put("config", f"{_ref(b['consumer_ref'])} {b['config_key']}", b["value_resolution"],
            {"value": b["value"], "default_value": b["default_value"]}, b)
    for d in _read(pkg / "diagnostics.jsonl"):
        if d["severity"] == "INFO":
            continue
        put("diagnostic", f"{d['code']} {d['message']}", None, {"severity": d["severity"]}, d)
    return out


def project_all(root: Path) -> dict[tuple[str, str, str], dict]:
    """:func:`project` over every package directory under ``root``."""
    out: dict[tuple[str, str, str], dict] = {}
    for pkg in sorted(p for p in root.iterdir() if (p / "manifest.json").is_file()):
        out.update(project(pkg))
    return out


_GENERIC = {"com", "jd", "trade", "java", "lang", "util", "method", "contract", "bean", "entry", "field", "topic",
            "table", "stmt", "cache", "config", "PROVIDED", "CONSUMED", "RESOLVED", "jsf", "jmq", "http", "rocketmq",
            "jimdb", "ducc", "alias", "None", "String", "long", "int", "boolean", "List", "Object", "EXPOSES",
            "BINDS_TO", "CALLS", "PUBLISHES", "SUBSCRIBES", "READS", "WRITES", "GET", "POST", "dao", "api", "mq",
            "service", "MAIN", "MQ_CONSUMER", "JSF_PROVIDER", "HTTP_ENDPOINT", "SCHEDULED_JOB"}


def _tokens(family: str, key: str) -> list[str]:
    """Identifiers of a fact's key, most specific first (for drafting citations)."""
    import re
    words = re.findall(r"[A-Za-z_][\w\-]*", key)
    first: list[str] = []
    declarations = ["@Scheduled(", "@XxlJob(", "@JmqListener(", "@RocketMQMessageListener(", "@KafkaListener(",
                    "Mapping(", "@Provider(", "main("]
    if key.startswith(("PROVIDED:jsf:", "PROVIDED:dubbo:")):  # a provided method: its declaration
        first += [f" {m}(" for m in re.findall(r"#(\w+)\(", key)]
    if family == "entry" or key.startswith(("SUBSCRIBES", "PROVIDED:", "EXPOSES")):
        # an entry, a subscription or a provided contract is proved by its declaration
        first += declarations
        m = re.search(r"(?:jsf|dubbo)://([\w.$]+)#", key)
        if m and not key.startswith("EXPOSES"):  # an export is told apart by its alias
            first.append(m.group(1))  # the XML element's interface attribute
    if family == "config":
        first.append(key.split("://", 1)[-1])
    m = re.search(r"table://(\w+)@", key)
    if m:  # a logical table, named as written or as a physical shard name (order_info_${i})
        first += [m.group(1), m.group(1) + "_${"]
    m = re.search(r"://([\w\-.:]+?)(?:@|#|$|\s|\))", key)
    if m and family in ("topic", "table", "table_access", "cache", "config", "entry"):
        first.append(m.group(1).rstrip(":").split(".")[-1] if family == "config" else m.group(1).rstrip(":"))
    methods = [w for w in re.findall(r"#(\w+)\(", key)][::-1]
    if family == "rpc" and not key.startswith("EXPOSES") or key.startswith("CONSUMED:"):
        first += [f".{m}(" for m in methods]  # a consumed method is proved by the call on the consumer
    m = re.search(r"alias=([\w\-]+)", key)
    if m and m.group(1) != "None":
        first.append(m.group(1))
    first += [w for w in methods if w not in first]
    rest = sorted({w for w in words if w not in _GENERIC and len(w) > 2}, key=lambda w: (-len(w), w))
    return first + [w for w in rest if w not in first]


def _widen(tok: str, line: str) -> str:
    """A short token widened to the call, annotation or string literal of the line that holds it."""
    import re
    if len(tok) >= 8:
        return tok
    for pat in (r"[\w.]*\b\w+\.\w+\(", r"@\w+\(", r'"[^"]*"'):
        for m in re.finditer(pat, line):
            if tok in m.group(0) or pat != r'"[^"]*"':
                return m.group(0)
    return tok


def draft(ir: Path, src: Path) -> list[dict]:
    """Facts of every package under ``ir`` with a drafted citation: the first evidence line (of the
    fixture sources ``src``) that holds one of the fact's identifiers. A draft, to be read and
    corrected by hand before it goes into expected.json; ``ident`` is ``??`` where none was found."""
    rows = []
    for (service, family, key), row in sorted(project_all(ir).items()):
        cite, ident = None, "??"
        for tok in _tokens(family, key):
            for path, a, b in row["evidence"]:
                lines = read_lines(src / path)
                hit = next((i for i in range(a, b + 1) if i <= len(lines) and holds(lines[i - 1], tok)), None)
                if hit:
                    cite, ident = f"{path}:{hit}", _widen(tok, lines[hit - 1])
                    break
            if cite:
                break
        if cite is None and row["evidence"]:  # the call or annotation on the first evidence line
            path, a, _ = row["evidence"][0]
            lines = read_lines(src / path)
            cite = f"{path}:{a}"
            if a <= len(lines) and _widen("", lines[a - 1]):
                ident = _widen("", lines[a - 1])
        rows.append({"service": service, "family": family, "key": key, "status": row["status"],
                     "detail": row["detail"], "cite": cite, "ident": ident})
    return rows


def holds(line: str, ident: str) -> bool:
    """Whether ``line`` holds ``ident`` — as a whole word when it begins and ends with word characters
    (``stock_sku`` is not in ``stock_sku_bak``)."""
    import re
    return re.search((r"(?<!\w)" if ident[:1].isalnum() or ident[:1] == "_" else "") + re.escape(ident)
                     + (r"(?!\w)" if ident[-1:].isalnum() or ident[-1:] == "_" else ""), line) is not None


def read_lines(path: Path) -> list[str]:
    """A fixture file's lines: UTF-8, else GBK (the estate's legacy encoding), else Latin-1."""
    data = path.read_bytes()
    for enc in ("utf-8", "gbk"):
        try:
            return data.decode(enc).splitlines()
        except UnicodeDecodeError:
            continue
    return data.decode("latin-1").splitlines()


if __name__ == "__main__":  # python tests/estate_facts.py IR_DIR FIXTURE_SRC > draft.json
    import sys
    print(json.dumps(draft(Path(sys.argv[1]), Path(sys.argv[2])), indent=1, ensure_ascii=False))
