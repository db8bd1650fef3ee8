"""The pages in docs/: their sections are numbered, their links resolve, every citation of a section
("docs/ir.md §3", "docs/gradle.md, \"Deployables\"") anywhere in the repository names a section that
exists, their generated tables are current, and the worked rule example is the example file."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import yaml

from tests.conftest import ROOT

DOCS = ROOT / "docs"
PAGES = sorted(DOCS.glob("*.md"))
#: where citations of docs sections may stand
CITING = [ROOT / "README.md", ROOT / "src", ROOT / "tests", DOCS, ROOT / "rules", ROOT / "examples", ROOT / "benchmarks"]
TEXT_SUFFIXES = {".py", ".md", ".yaml", ".yml", ".txt", ".toml", ".json", ".sql"}

_FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.S | re.M)
_INLINE = re.compile(r"`[^`\n]*`")
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$", re.M)
_NUMBERED = re.compile(r"^(\d+(?:\.\d+)*)\.?[ \t]+(.+)$")
_LINK = re.compile(r"\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^)\s]+)(?:[ \t]+\"[^\"]*\")?\)")
_ANCHOR = re.compile(r"<a\s+(?:id|name)=\"([^\"]+)\"")
_SECTION_CITE = re.compile(r"(?:docs/)?\b([A-Za-z0-9_-]+\.md)[ \t]*§[ \t]*(\d+(?:\.\d+)*)")
_TITLE_CITE = re.compile(r"docs/([A-Za-z0-9_-]+\.md), \"([^\"]+)\"")


def _prose(text: str) -> str:
    """``text`` without fenced code blocks (their lines kept empty, so line numbers stay)."""
    return _FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)


def headings(page: Path) -> list[tuple[int, str]]:
    """(level, title) of every heading outside code blocks."""
    return [(len(m.group(1)), m.group(2)) for m in _HEADING.finditer(_prose(page.read_text(encoding="utf-8")))]


def slug(title: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"`([^`]*)`", r"\1", title).lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    out: set[str] = set()
    seen: dict[str, int] = {}
    for _, title in headings(page):
        s = slug(title)
        n = seen.get(s, 0)
        seen[s] = n + 1
        out.add(s if n == 0 else f"{s}-{n}")
    out.update(_ANCHOR.findall(page.read_text(encoding="utf-8")))
    return out


def sections(page: Path) -> dict[str, str]:
    """Section number → title (without its number) of a page's numbered headings."""
    out = {}
    for level, title in headings(page):
        m = _NUMBERED.match(title)
        if level >= 2 and m:
            out[m.group(1)] = m.group(2)
    return out


def test_every_section_is_numbered_once():
    """Code and help texts cite "docs/X.md §N": every heading below a page's title carries a number,
    a subsection's number extends its section's, and no number repeats."""
    bad = []
    for page in PAGES:
        numbers: list[str] = []
        current: dict[int, str] = {}
        for level, title in headings(page):
            if level == 1:
                continue
            m = _NUMBERED.match(title)
            if not m:
                bad.append(f"{page.name}: heading {title!r} has no section number")
                continue
            number = m.group(1)
            parent = current.get(level - 1)
            if level > 2 and (parent is None or not number.startswith(parent + ".")):
                bad.append(f"{page.name}: §{number} is not inside §{parent}")
            if len(number.split(".")) != level - 1:
                bad.append(f"{page.name}: §{number} is a level-{level} heading")
            current[level] = number
            numbers.append(number)
        repeated = sorted({n for n in numbers if numbers.count(n) > 1})
        if repeated:
            bad.append(f"{page.name}: section numbers repeat: {repeated}")
    assert not bad, "\n".join(bad)


def test_table_rows_have_their_header_columns():
    """A `|` inside a table cell (even in code) must be written `\\|`, or the row splits."""
    bad = []
    for page in PAGES:
        header = None
        for lineno, line in enumerate(_prose(page.read_text(encoding="utf-8")).splitlines(), 1):
            if not line.startswith("|"):
                header = None
                continue
            cells = len(re.split(r"(?<!\\)\|", line.strip()))
            if header is None:
                header = cells
            elif cells != header:
                bad.append(f"{page.name}:{lineno}: {cells - 2} cells, the header has {header - 2}")
    assert not bad, "\n".join(bad)


def _links(page: Path) -> list[tuple[int, str]]:
    text = _prose(page.read_text(encoding="utf-8"))
    out = []
    for lineno, line in enumerate(text.splitlines(), 1):
        for m in _LINK.finditer(_INLINE.sub("", line)):
            out.append((lineno, m.group(1)))
    return out


def test_relative_links_resolve():
    """Every relative link of a docs page (and of the README) names a file of the repository, and an
    anchor into a Markdown page names one of its headings (or an explicit <a id>)."""
    bad = []
    for page in [*PAGES, ROOT / "README.md"]:
        for lineno, target in _links(page):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                continue  # https:, mailto: …
            path, _, anchor = target.partition("#")
            dest = (page.parent / path).resolve() if path else page
            where = f"{page.relative_to(ROOT)}:{lineno}: {target}"
            if ROOT.resolve() not in dest.parents and dest != ROOT.resolve():
                bad.append(f"{where}: leaves the repository")
            elif not dest.exists():
                bad.append(f"{where}: no such file")
            elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                bad.append(f"{where}: no heading or anchor #{anchor} in {dest.name}")
    assert not bad, "\n".join(bad)


def _citing_files() -> list[Path]:
    out = []
    for base in CITING:
        if base.is_file():
            out.append(base)
            continue
        out += [p for p in sorted(base.rglob("*")) if p.is_file() and p.suffix in TEXT_SUFFIXES
                and "__pycache__" not in p.parts]
    return out


def test_section_citations_name_existing_sections():
    """Every "docs/X.md §N" (and, inside docs, "X.md §N") in the repository names a page and a
    numbered section of it; every "docs/X.md, \"Title\"" a heading of that title."""
    known = {page.name: sections(page) for page in PAGES}
    bad = []
    for path in _citing_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        in_docs = path.parent == DOCS
        for lineno, line in enumerate(text.splitlines(), 1):
            where = f"{path.relative_to(ROOT)}:{lineno}"
            for m in _SECTION_CITE.finditer(line):
                prefixed = m.group(0).startswith("docs/")
                if not prefixed and not in_docs:
                    continue  # "X.md §N" outside docs/ may name another document
                page, number = m.group(1), m.group(2)
                if page not in known:
                    bad.append(f"{where}: {m.group(0)}: no page docs/{page}")
                elif number not in known[page]:
                    bad.append(f"{where}: {m.group(0)}: docs/{page} has no §{number}")
            for m in _TITLE_CITE.finditer(line):
                page, title = m.group(1), m.group(2)
                if page not in known:
                    bad.append(f"{where}: {m.group(0)}: no page docs/{page}")
                elif title not in known[page].values() and title not in {t for _, t in headings(DOCS / page)}:
                    bad.append(f"{where}: {m.group(0)}: docs/{page} has no section {title!r}")
    assert not bad, "\n".join(bad)


def _refresher():
    spec = importlib.util.spec_from_file_location("refresh_tables", DOCS / "refresh_tables.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_generated_tables_are_current():
    """The tables docs/refresh_tables.py writes (vocabularies, the diagnostic catalogue, match bases,
    rule forms) equal what the code has now: run `python docs/refresh_tables.py` after changing it."""
    assert _refresher().stale_pages() == []


def test_ir_page_names_every_field():
    """docs/ir.md describes every field of every record model, and every key of analysis_input.json."""
    from typing import get_args

    from diting.ir import models

    text = (DOCS / "ir.md").read_text(encoding="utf-8")
    entity_models = get_args(get_args(models.Entity)[0])
    others = [models.Ref, models.ImplementationRef, models.Locator, models.Redaction, models.ShardEvidence,
              models.Relation, models.SourceSegment, models.ConfigBinding, models.Diagnostic, models.LedgerItem,
              models.ManifestFile, models.DependencyArtifact, models.Manifest, models.CoverageDimension,
              models.CoverageEntry, models.PackageStatus, models.Coverage]
    missing = sorted({f"{m.__name__}.{f}" for m in [*entity_models, *others] for f in m.model_fields
                      if not re.search(rf"\b{re.escape(f)}\b", text)})
    inputs = sorted((ROOT / "ir_samples").rglob("analysis_input.json"))
    assert inputs, "ir_samples/ holds packages"
    keys = set(json.loads(inputs[0].read_text(encoding="utf-8")))
    missing += sorted(f"analysis_input.{k}" for k in keys if f"`{k}`" not in text)
    assert not missing, f"docs/ir.md does not describe: {', '.join(missing)}"


def test_worked_rule_example_is_the_example_file_and_its_samples_pass():
    """docs/rules.md §7 shows the first rule of examples/rpc-rules/acme-rpc.yaml as it is (with its first
    sample), quotes the real summary of `diting rules`, and every sample of the file passes."""
    from diting.probes.samples import run_rule_samples
    from diting.rules import load_rules

    example_dir = ROOT / "examples" / "rpc-rules"
    example = yaml.safe_load((example_dir / "acme-rpc.yaml").read_text(encoding="utf-8"))
    page = (DOCS / "rules.md").read_text(encoding="utf-8")
    section = page[page.index("## 7."):page.index("## 8.")]
    shown = next(yaml.safe_load(b) for b in re.findall(r"```yaml\n(.*?)```", section, re.S) if "rules:" in b)
    first = dict(example["rules"][0], samples=example["rules"][0]["samples"][:1])
    assert shown["rules"][0] == first
    assert [r["id"] for r in shown["rules"]] == [r["id"] for r in example["rules"]]
    mine = load_rules([example_dir]).from_dirs([example_dir])
    results = run_rule_samples(mine, [example_dir])
    assert results and all(r.passed for r in results), [r.failures for r in results if not r.passed]
    assert f"{len(mine)} rule(s), {len(results)} sample(s), all passed" in section


#: the name under which the seed's specification used to be cited (spelt so that a search for it finds
#: only this line's purpose, not a citation)
_OLD_CITED_NAME = "SP" + "EC"


def test_readme_is_short_and_cites_only_the_repository():
    """The README is an introduction of at most 11,000 bytes; its reference material lives in docs/, and
    it cites nothing outside the repository (no section of the seed's specification)."""
    readme = ROOT / "README.md"
    size = len(readme.read_bytes())
    assert size <= 11_000, f"README.md is {size:,} bytes; move reference material into docs/"
    text = readme.read_text(encoding="utf-8")
    assert not re.search(rf"\b{_OLD_CITED_NAME}\b", text)


def test_no_citation_of_the_old_specification_is_left():
    """Code, tests, rules, examples, benchmarks and docs cite the docs section that holds a rule, never
    a section of a specification that is not in the repository."""
    pattern = re.compile(rf"\b{_OLD_CITED_NAME}\b(?:'s| §)")
    bad = [f"{p.relative_to(ROOT)}:{n}" for p in _citing_files()
           for n, line in enumerate(p.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
           if pattern.search(line)]
    assert not bad, "\n".join(bad)
