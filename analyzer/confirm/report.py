"""``confirm``'s output: a per-file table, the verdicts worth reading, the programs, one summary line;
or everything, per site, as JSON."""

from __future__ import annotations

import json
from collections import defaultdict

from .match import AGREE, FALSE_ALARM, MISS, NOT_REACHED, REVEAL_MISMATCH, UNCONFIRMED
from .programs import TORCH_RUNTIME, display
from .session import Group, Result

COLUMNS = ("executed", AGREE, MISS, FALSE_ALARM, UNCONFIRMED, REVEAL_MISMATCH, NOT_REACHED)
_DETAIL_ORDER = (MISS, FALSE_ALARM, REVEAL_MISMATCH, UNCONFIRMED, NOT_REACHED)
#: Runs whose stderr tail the text output shows (a dispatch failure's detail already names its call).
STDERR_SHOWN = ("crashed", "exit", "timeout")
STDERR_LINES = 12


def stderr_tail(stderr: str, lines: int = STDERR_LINES) -> list[str]:
    """The last ``lines`` non-blank lines of a program's standard error."""
    kept = [line.rstrip() for line in stderr.splitlines() if line.strip()]
    return kept[-lines:]


def _where(file: str, span: tuple[int, int, int, int]) -> str:
    return f"{display(file)}:{span[0]}:{span[1]}"


def _settings(group: Group) -> str:
    profile, backends = group.key
    return f"profile {profile}, backends {','.join(sorted(backends)) if backends is not None else 'all'}"


def per_file(result: Result) -> dict[str, dict[str, int]]:
    table: dict[str, dict[str, int]] = defaultdict(lambda: dict.fromkeys(COLUMNS, 0))
    for _group, site in result.sites:
        row = table[site.file]
        row["executed"] += site.executed
        for verdict in site.verdicts:
            row[verdict.kind] += 1
    return dict(sorted(table.items()))


def summary(result: Result) -> str:
    problems = result.failed_programs
    verdict = "confirmed" if result.ok else "NOT confirmed"
    return (f"sites executed: {result.executed}, agreements: {result.count(AGREE)}, misses: {result.count(MISS)}, "
            f"false alarms: {result.count(FALSE_ALARM)}, unconfirmed warnings: {result.count(UNCONFIRMED)}, "
            f"reveal mismatches: {result.count(REVEAL_MISMATCH)}, not reached: {result.count(NOT_REACHED)}; "
            f"programs: {len(result.runs)}, "
            f"not run to their end: {len(problems)} -> {verdict}")


def text(result: Result) -> str:
    options = result.options
    runs = result.runs
    virtual = sum(r.mode == "virtual" for r in runs)
    torch_runs = sum(r.program.runtime == TORCH_RUNTIME for r in runs)
    pytorch = f", {torch_runs} PyTorch under the torch observer" if torch_runs else ""
    header = (f"devicelint confirm: {len(runs)} program{'s' if len(runs) != 1 else ''} "
              f"({virtual} with virtual devices, {len(runs) - virtual} on real devices{pytorch}), "
              f"default profile {options.profile}, timeout {options.timeout:g} s")
    lines = [header, ""]
    table = per_file(result)
    width = max([len("file"), *(len(display(f)) for f in table)])
    titles = ("executed", "agree", "miss", "false alarm", "unconfirmed", "reveal mismatch", "not reached")
    lines.append("  ".join([f"{'file':<{width}}", *titles]))
    for file, row in table.items():
        cells = [f"{row[c]:>{len(t)}}" for c, t in zip(COLUMNS, titles, strict=True)]
        lines.append("  ".join([f"{display(file):<{width}}", *cells]))
    details = [(kind, group, site, v) for group, site in result.sites for v in site.verdicts
               for kind in _DETAIL_ORDER if v.kind == kind]
    if details:
        lines.append("")
        several = len(result.groups) > 1
        for kind, group, site, verdict in sorted(details, key=lambda d: (_DETAIL_ORDER.index(d[0]), d[2].file,
                                                                           d[2].span)):
            code = f" {verdict.code}" if verdict.code else ""
            context = f" [{_settings(group)}]" if several else ""
            lines.append(f"{_where(site.file, site.span)}: {kind}{code}: {verdict.detail}{context}")
    notes = []
    for run in runs:
        if run.problem:
            notes.append(f"{run.program.name}: {run.status}: {run.detail}")
            if run.status in STDERR_SHOWN:
                notes.extend(f"    | {line}" for line in stderr_tail(run.stderr))
        elif run.status == "expected":
            notes.append(f"{run.program.name}: failed as declared: {run.detail}")
        if run.fallback:
            how = "virtual devices (fake CUDA)" if run.program.runtime == TORCH_RUNTIME else "virtual devices"
            notes.append(f"{run.program.name}: ran with {how}: {run.fallback}")
    if result.not_run:
        notes.append(f"not run: name them in entries: {', '.join(result.not_run)}")
    if notes:
        lines.append("")
        lines.extend(notes)
    lines += ["", summary(result)]
    return "\n".join(lines) + "\n"


def to_json(result: Result) -> str:
    sites = []
    for group, site in result.sites:
        seen, said = site.observed, site.predicted
        sites.append({
            "filename": display(site.file),
            "location": {"row": site.span[0], "column": site.span[1]},
            "end_location": {"row": site.span[2], "column": site.span[3]},
            "profile": group.key[0],
            "backends": sorted(group.key[1]) if group.key[1] is not None else None,
            "runtime": None if seen is None else {
                "executions": seen.executions, "failures": seen.failures, "messages": seen.messages,
                "reveals": sorted(set(seen.reveals)), "ops": sorted(seen.ops), "programs": sorted(seen.programs),
                "profiles": sorted(seen.profiles)},
            "analyzer": None if said is None else {
                "errors": said.errors, "warnings": said.warnings, "reveals": said.reveals},
            "verdicts": [{"kind": v.kind, "code": v.code or None, "detail": v.detail} for v in site.verdicts],
        })
    programs = [{"program": r.program.name, "command": r.program.command(), "args": r.program.args,
                 "runtime": r.program.runtime, "mode": r.mode, "profile": r.profile,
                 "status": r.status, "detail": r.detail or None, "fallback": r.fallback,
                 "seconds": round(r.seconds, 3), "records": len(r.records),
                 "stderr_tail": r.stderr[-1000:] if r.problem else None} for r in result.runs]
    counts = {
        "sites_executed": result.executed, "agreements": result.count(AGREE), "misses": result.count(MISS),
        "false_alarms": result.count(FALSE_ALARM), "unconfirmed_warnings": result.count(UNCONFIRMED),
        "reveal_mismatches": result.count(REVEAL_MISMATCH), "not_reached": result.count(NOT_REACHED),
        "programs": len(result.runs),
        "programs_not_run_to_end": len(result.failed_programs), "confirmed": result.ok,
    }
    files = [{"filename": display(f), **{c.replace(" ", "_"): n for c, n in row.items()}}
             for f, row in per_file(result).items()]
    document = {"summary": counts, "files": files, "programs": programs, "not_run": result.not_run, "sites": sites}
    return json.dumps(document, indent=2) + "\n"
