"""Branch ledger against an independent count, for entries drawn with a fixed seed (issue 6).

Scans REPO at COMMIT, draws N entries uniformly (seeded) from all packages, and for each one walks
the CALLS relations the package recorded (RESOLVED targets and AMBIGUOUS candidates) to its reachable
methods. For every reachable method it compares

- the ledger items diting wrote for the method, with
- an independent count made here from the source alone, by a recursive walk of the method's
  tree-sitter tree (not the extractor's query and byte-range matching): each if (then, and else when
  present), each switch case group with statements (or the last) or rule, each catch and finally, each loop, each throw, each
  return except the method's last top-level statement and returns inside lambdas; nested class
  bodies are other methods. STRATEGY items are counted from the method's CALLS that are AMBIGUOUS
  among implementations (``ambiguity = DISPATCH``).

It also checks that every CALLS effect sits under its innermost branch: the call is found by its
pre-order index in the walk, and its innermost enclosing arm (by ancestors) must be the item that
lists it (same kind, same first line), or no item when it is at the method's top level.

    python benchmarks/ledger_check.py REPO COMMIT [--n 10] [--seed 20261130]
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

import tree_sitter as ts
import tree_sitter_java as tsj

from diting.demo import read_jsonl
from diting.scan.pipeline import ScanOptions, scan
from diting.source.git import GitRepo
from diting.source.text import decode_bytes

_PARSER = ts.Parser(ts.Language(tsj.language()))
_METHODS = ("method_declaration", "constructor_declaration", "compact_constructor_declaration")
_CALLS = ("method_invocation", "object_creation_expression", "explicit_constructor_invocation", "method_reference")
_LOOPS = ("for_statement", "enhanced_for_statement", "while_statement", "do_statement")
_NAMED_SKIP = ("line_comment", "block_comment")


def _arms_of(node: ts.Node, method_body: ts.Node) -> list[tuple[str, int]]:
    """``(kind, first line)`` of the arms ``node`` opens, outer first: a branch of its parent construct
    (then, else, case group, catch, finally, loop body) and, when it is a return or throw itself
    (``if (x) return;``), that exit too."""
    parent = node.parent
    if parent is None:
        return []
    line = node.start_point[0] + 1
    out: list[tuple[str, int]] = []
    if parent.type == "if_statement":
        if parent.child_by_field_name("consequence") == node:
            out.append(("IF", line))
        elif parent.child_by_field_name("alternative") == node:
            out.append(("ELSE", line))
    if node.type == "switch_block_statement_group" and node.next_named_sibling is not None and \
            all(c.type in ("switch_label",) + _NAMED_SKIP for c in node.named_children):
        return out  # case A: case B: … — the labels join the next group
    if node.type in ("switch_block_statement_group", "switch_rule"):
        labels = [c for c in node.named_children if c.type == "switch_label"]
        default = any(not [x for x in lab.named_children if x.type not in _NAMED_SKIP]
                      or lab.text.decode("utf-8", "replace").strip().startswith("default") for lab in labels)
        out.append((("DEFAULT" if default else "CASE"), line))
    elif node.type == "catch_clause":
        out.append(("CATCH", line))
    elif node.type == "finally_clause":
        out.append(("FINALLY", line))
    elif parent.type in _LOOPS and parent.child_by_field_name("body") == node:
        out.append(("LOOP", line))
    if node.type == "throw_statement":
        out.append(("THROW", line))
    elif node.type == "return_statement" and _counted_return(node, method_body):
        out.append(("RETURN", line))
    return out


def _counted_return(node: ts.Node, method_body: ts.Node) -> bool:
    cur = node.parent
    while cur is not None and cur != method_body:
        if cur.type == "lambda_expression":
            return False
        cur = cur.parent
    if node.parent == method_body:
        stmts = [c for c in method_body.named_children if c.type not in _NAMED_SKIP]
        return stmts[-1] != node
    return True


def _walk(method: ts.Node) -> tuple[int, list[tuple[str, int] | None]]:
    """Independent count of the arms of a method, and each call's innermost arm (pre-order)."""
    body = method.child_by_field_name("body")
    if body is None:
        return 0, []
    arms = 0
    calls: list[tuple[int, int, tuple[str, int] | None]] = []
    stack: list[tuple[ts.Node, tuple[str, int] | None]] = [(body, None)]
    while stack:
        node, inner = stack.pop()
        for arm in _arms_of(node, body):
            arms += 1
            inner = arm
        if node.type in _CALLS:
            calls.append((node.start_byte, -node.end_byte, inner))
        for child in node.named_children:
            if child.type in ("class_body", "enum_body", "interface_body") or child.type in (
                    "class_declaration", "interface_declaration", "enum_declaration", "record_declaration"):
                continue  # another type's members
            stack.append((child, inner))
    calls.sort(key=lambda c: (c[0], c[1]))
    return arms, [c[2] for c in calls]


def _find_method(tree: ts.Tree, start_line: int, name: str) -> ts.Node | None:
    stack = [tree.root_node]
    while stack:
        n = stack.pop()
        if n.type in _METHODS and n.start_point[0] + 1 == start_line:
            nm = n.child_by_field_name("name")
            if name == "<init>" or (nm is not None and nm.text.decode("utf-8", "replace") == name):
                return n
        stack.extend(n.named_children)
    return None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("repo")
    ap.add_argument("commit")
    ap.add_argument("--n", type=int, default=10)
    ap.add_argument("--seed", type=int, default=20261130)
    args = ap.parse_args()
    git = GitRepo(args.repo)
    with tempfile.TemporaryDirectory() as tmp, git:
        result = scan(args.repo, args.commit, ScanOptions(out=Path(tmp), repo_id="bench/ledger", quiet=True))
        oids = {e.path: e.oid for e in git.ls_tree(git.resolve_commit(args.commit))}
        entries = []
        for p in result.packages:
            for e in read_jsonl(p.path / "entities.jsonl"):
                if e["kind"] == "ENTRY" and e.get("handler_ref"):
                    entries.append((p.path, e))
        rng = random.Random(args.seed)
        drawn = rng.sample(sorted(entries, key=lambda x: (str(x[0]), x[1]["record_id"])), min(args.n, len(entries)))
        trees: dict[str, ts.Tree] = {}
        total_bad = 0
        print(f"{'entry':<70} {'methods':>7} {'ledger':>7} {'count':>7} {'effects':>7} {'misplaced':>9}")
        for pkg, entry in drawn:
            ents = {e["record_id"]: e for e in read_jsonl(pkg / "entities.jsonl")}
            rels = read_jsonl(pkg / "relations.jsonl")
            segs = {s["record_id"]: s["locator"] for s in read_jsonl(pkg / "source_segments.jsonl")}
            ledger = read_jsonl(pkg / "branch_ledger.jsonl")
            edges: dict[str, set[str]] = defaultdict(set)
            calls_of: dict[str, list[dict]] = defaultdict(list)
            for r in rels:
                if r["kind"] != "CALLS":
                    continue
                calls_of[r["source_ref"]["record_id"]].append(r)
                for t in ([r["target_ref"]] if r["target_ref"] else []) + r["candidate_target_refs"]:
                    if t["record_id"].startswith("method:"):
                        edges[r["source_ref"]["record_id"]].add(t["record_id"])
            reach = {entry["handler_ref"]["record_id"]}
            todo = list(reach)
            while todo:
                for m in edges.get(todo.pop(), ()):
                    if m not in reach:
                        reach.add(m)
                        todo.append(m)
            items_of: dict[str, list[dict]] = defaultdict(list)
            for item in ledger:
                items_of[item["symbol_ref"]["record_id"]].append(item)
            n_ledger = n_count = n_effects = misplaced = 0
            for m in sorted(reach):
                ent = ents.get(m)
                if ent is None or not ent["evidence_refs"]:
                    continue
                loc = segs[ent["evidence_refs"][0]["record_id"]]
                name = ent["stable_id"].rsplit("#", 1)[1].split("(", 1)[0]
                if name == "<clinit>" or loc["path"] not in oids:
                    continue
                if loc["path"] not in trees:
                    trees[loc["path"]] = _PARSER.parse(decode_bytes(git.read_blob(oids[loc["path"]])).text.encode())
                node = _find_method(trees[loc["path"]], loc["start_line"], name)
                if node is None:
                    continue  # synthesized (Lombok, record, javac): no body
                arms, call_arms = _walk(node)
                strategy = sum(1 for r in calls_of.get(m, []) if r["resolution_status"] == "AMBIGUOUS"
                               and r["attributes"].get("ambiguity") == "DISPATCH")
                items = items_of.get(m, [])
                n_ledger += len(items)
                n_count += arms + strategy
                if len(items) != arms + strategy:
                    print(f"   {ent['stable_id']}: ledger {len(items)}, walk {arms} + strategy {strategy}")
                effect_item = {}
                for item in items:
                    for ref in item["effect_refs"]:
                        effect_item[ref["record_id"]] = item
                for r in calls_of.get(m, []):
                    n_effects += 1
                    ordinal = int(r["callsite_id"].rsplit("@", 1)[1])
                    expected = call_arms[ordinal] if ordinal < len(call_arms) else None
                    item = effect_item.get(r["record_id"])
                    if item is not None and item["branch_kind"] == "STRATEGY":
                        continue
                    got = None
                    if item is not None:
                        got = (item["branch_kind"], segs[item["evidence_refs"][0]["record_id"]]["start_line"])
                    if got != expected:
                        misplaced += 1
                        print(f"   misplaced {r['callsite_id']}: ledger {got}, walk {expected}")
            total_bad += (n_ledger != n_count) + misplaced
            label = entry["stable_id"].split("@", 1)[0][-70:]
            print(f"{label:<70} {len(reach):>7} {n_ledger:>7} {n_count:>7} {n_effects:>7} {misplaced:>9}")
        print("all equal" if total_bad == 0 else f"{total_bad} difference(s)")
        return 0 if total_bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
