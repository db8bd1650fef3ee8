"""The ``rules`` command: rule files checked against the rule schema, and their samples run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Optional

import typer

from diting.cli.app import app
from diting.cli.common import fail, out, say
from diting.errors import UserError


@app.command()
def rules(
    rules_dirs: Annotated[Optional[list[Path]], typer.Option("--rules", help="Rule directory to check (repeatable).")]
    = None,
    only: Annotated[Optional[str], typer.Option("--only", help="Only rules whose id contains this text.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the results as JSON.")] = False,
) -> None:
    """Validate rule files against the rule schema and run their samples (docs/rules.md §6).

    With --rules, the rules of those directories are checked (with the shipped rules loaded
    too, as a scan would); without, every shipped rule is."""
    from diting.probes.samples import run_rule_samples
    from diting.rules import load_rules
    try:
        rs = load_rules(rules_dirs or [])
    except UserError as exc:
        fail(exc.message, exc.exit_code)
        return
    pool = rs.from_dirs(rules_dirs) if rules_dirs else [r for _, r in sorted(rs.by_id.items())]
    chosen = [r for r in pool if not only or only in r.id]
    results = run_rule_samples(chosen, rules_dirs or [])
    failed = [r for r in results if not r.passed]
    without = [r.id for r in chosen if not r.samples]
    if as_json:
        print(json.dumps({"rules": len(chosen), "samples": len(results), "failed": [
            {"rule": r.rule_id, "sample": r.index, "form": r.form, "failures": r.failures} for r in failed],
            "rules_without_samples": without}, indent=2, sort_keys=True))
    else:
        for r in failed:
            say(out, ("FAIL ", "bold red"), f"{r.rule_id} sample #{r.index} ({r.form})")
            for f in r.failures:
                say(out, "     ", f[:2000])
        for rid in without:
            say(out, ("note ", "yellow"), f"{rid} has no samples")
        say(out, f"{len(chosen)} rule(s), {len(results)} sample(s), ",
            (f"{len(failed)} failed", "bold red") if failed else ("all passed", "green"))
    raise typer.Exit(1 if failed else 0)
