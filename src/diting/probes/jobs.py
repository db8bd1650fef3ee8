"""Scheduled jobs and job-framework handlers (docs/middleware.md §2)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any


if TYPE_CHECKING:
    from diting.probes.context import ProbeContext
    from diting.probes.matches import Candidate


def jobs(pc: "ProbeContext") -> None:
    conditions: dict[str, list[Candidate]] = {}
    for c in pc.ctx.by_emit.get("CONDITION", []):
        conditions.setdefault(c["type"]["binary"], []).append(c)
    for c in pc.ctx.by_emit.get("SCHEDULED", []) + pc.ctx.by_emit.get("JOB_TYPE", []):
        rule = pc.s.rules.by_id[c["rule"]]
        owner = c["type"]["binary"]
        if not pc.live_handler_class(c):
            continue
        handler = pc.declared_handler(c)
        if handler is None:
            pc.entry_failed(f"{owner}|job", f"job class {owner} at {c['path']}:{c['lines'][0]}: no "
                            f"{rule.emits.handler} method is declared in the package", [c["type"]["rid"]], c)
            continue
        attrs: dict[str, Any] = {"scheduler": c["annotation"] if c["form"] == "annotation" else c["rule"]}
        for role in ("cron", "zone", "fixed_rate", "fixed_delay", "initial_delay", "job_name"):
            r = pc.first(c, role)
            if r is not None:
                attrs[role] = r.value
                if r.status != "RESOLVED":
                    attrs[f"{role}_resolution"] = r.status
                    attrs[f"{role}_expression"] = r.expression
        attrs["disabled"] = attrs.get("cron") == "-"
        switches = []
        for cc in conditions.get(owner, []):
            for k in pc.texts(pc.role(cc, "key")):
                prefix = (pc.texts(pc.role(cc, "prefix")) or [""])[0]
                switches.append({"key": f"{prefix}.{k}" if prefix else k,
                                 "having_value": (pc.texts(pc.role(cc, "value")) or [None])[0]})
        attrs["enable_switches"] = switches
        # the method FQN; a job class's inherited handler is named after the job class
        urn = f"{owner}#{handler['name']}" if c["target"] == "TYPE" else \
            handler["stable"].split("/", 1)[-1].split("(", 1)[0]
        erid = pc.entry("SCHEDULED_JOB", urn, handler, c, attrs, rule.emits.kind)
        estable = pc.rs.entities[erid]["stable_id"]
        for role in ("cron", "fixed_rate", "fixed_delay"):
            pc.note_keys(erid, estable, pc.role(c, role), c, role)
        for sw in switches:
            rt = pc.resolve({"value": "${" + sw["key"] + "}", "vtype": "java.lang.String", "basis": "CONFIG",
                               "placeholders": True})
            pc.config_binding(erid, estable, rt, c, "enable switch")
