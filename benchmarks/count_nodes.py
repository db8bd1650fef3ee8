"""Raw tree-sitter type/method counts per main .java blob vs diting's. Usage: count_nodes.py REPO COMMIT PKG_DIR"""
import collections, json, pathlib, re, subprocess, sys
import tree_sitter as ts, tree_sitter_java as tsj

repo, commit, pkgs = sys.argv[1], sys.argv[2], pathlib.Path(sys.argv[3])
TYPES = {"class_declaration", "interface_declaration", "enum_declaration", "record_declaration", "annotation_type_declaration"}
METHODS = {"method_declaration", "constructor_declaration", "compact_constructor_declaration", "annotation_type_element_declaration"}
EXCLUDE = [("test_source", r"(^|/)src/test/"), ("generated_sources", r"/generated-(test-)?sources/"), ("maven_wrapper", r"(^|/)\.mvn/"),
           ("build_output", r"(^|/)(target|build)/"), ("outside_source_root", r"^(?!(.*/)?src/main/java/)")]
git = ["git", "-C", repo]
listing = subprocess.run(git + ["ls-tree", "-r", "-z", commit], capture_output=True, check=True).stdout.split(b"\0")
blobs, excluded = {}, collections.Counter()
for item in filter(None, listing):
    meta, path = item.decode().split("\t", 1)
    if not path.endswith(".java") or meta.split()[0] not in ("100644", "100755"):
        continue
    reason = next((r for r, rx in EXCLUDE if re.search(rx, path)), None)
    if reason: excluded[reason] += 1
    else: blobs[path] = meta.split()[2]
parser, ours = ts.Parser(ts.Language(tsj.language())), {}
cat = subprocess.Popen(git + ["cat-file", "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
for path, oid in sorted(blobs.items()):
    cat.stdin.write(oid.encode() + b"\n"); cat.stdin.flush()
    data = cat.stdout.read(int(cat.stdout.readline().split()[2]) + 1)[:-1]
    cursor, counts, down = parser.parse(data.removeprefix(b"\xef\xbb\xbf")).walk(), [0, 0], True
    while True:  # pre-order walk with a TreeCursor: no Python object per node
        if down:
            t = cursor.node.type
            counts[0] += t in TYPES or (t in ("object_creation_expression", "enum_constant") and any(c.type == "class_body" for c in cursor.node.children))
            counts[1] += t in METHODS
        if down and cursor.goto_first_child(): continue
        if cursor.goto_next_sibling(): down = True; continue
        down = False
        if not cursor.goto_parent(): break
    ours[path] = tuple(counts)
theirs, type_path = collections.defaultdict(lambda: [0, 0]), {}
for ents in sorted(pkgs.glob("*/entities.jsonl")):
    for line in ents.open(encoding="utf-8"):
        e = json.loads(line)
        if e["kind"] == "TYPE": type_path[e["record_id"]] = e["attributes"]["path"]
        elif e["kind"] == "METHOD" and "synthesized_by" not in e["attributes"] and e["attributes"]["decl_kind"] != "STATIC_INITIALIZER":
            type_path.setdefault(("m", e["record_id"]), e["declaring_type"]["record_id"])
for key, v in type_path.items():
    if isinstance(key, tuple): theirs[type_path[v]][1] += 1
    else: theirs[v][0] += 1
got = lambda d, p: tuple(d[p]) if p in d else None  # a file without types counts (0, 0) on both sides
diff = {p: (got(ours, p), got(theirs, p)) for p in sorted(set(ours) | set(theirs)) if (got(ours, p) or (0, 0)) != (got(theirs, p) or (0, 0)) or (p in theirs and p not in ours)}
print(json.dumps({"blobs": len(blobs), "excluded": dict(excluded), "types": sum(c[0] for c in ours.values()),
                  "methods": sum(c[1] for c in ours.values()), "differences": {p: {"raw": a, "diting": b} for p, (a, b) in diff.items()}}, indent=1))
sys.exit(1 if diff else 0)
