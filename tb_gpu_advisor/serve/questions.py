"""The questions the command and the MCP server (`serve/mcp.py`) both answer, as the JSON each gives:
one function per question, from the reports or analyses the caller made (the command makes them once
and exits; the server keeps them), so that the server's answer is the command's `--format json` for the
same question. The user's mistakes raise `UsageError` with the command's message.

| question | command | MCP tool |
|---|---|---|
| the runs, their hosts and worst findings | `runs LOGDIR --analyse --json` | `list_runs` |
| a run's findings | `analyze LOGDIR --run R [--host H / --rank N] [--cycle N] --findings-only --format json` | `analyze` |
| a finding's evidence | `evidence LOGDIR --run R --host H --finding ID --format json` | `evidence` |
| a table | `table KIND LOGDIR --run R --host H ... --format json` | `table` |
| before against after | `diff LOGDIR LOGDIR --run B --new-run A --format json` | `diff` |
| a job's ranks | `job LOGDIR --run R [--cycle N] --format json` | `job` |
| the step with a change | `whatif LOGDIR --run R --host H --change C --format json` | `whatif` |
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from tb_gpu_advisor.graph.changes import CHANGES
from tb_gpu_advisor.serve.selection import UsageError, listing, run_folder, select, suggest

if TYPE_CHECKING:
    from tb_gpu_advisor.checks import Options
    from tb_gpu_advisor.formats.discovery import HostFile
    from tb_gpu_advisor.measures import Measures
    from tb_gpu_advisor.report.diff_doc import Diff, JobDiff

# what `analyze --findings-only` keeps of a report's checks: those that found something
FINDING_STATUSES = ("critical", "warning", "error", "info")
HOSTS_LISTED = 16  # hosts of a run listed by `runs --analyse`, worst first
DEFAULT_JOB_RANKS = 64  # ranks of a job listed by `job`, stragglers and outliers first
DEFAULT_EVENTS, MAX_EVENTS = 20, 200  # events listed per evidence window
# the MCP server's largest answer (serve/mcp.py). The default answer is brief (8 kB for a run, 16 for the
# demo's 8-rank job); this bounds what detail=full gives, asked for: one host's every check was 101 kB
# once the findings carried their alternatives and the kernels their library (issues 48 and 50)
DEFAULT_ANSWER_KB = 150.0


def only_findings(checks: list[dict]) -> list[dict]:
    return [c for c in checks if c["status"] in FINDING_STATUSES]


def of_rank(reports: list[dict], runs: list[dict], rank: int, picked_cycle: bool) -> list[dict]:
    """The reports of one rank (every cycle of it, or with --cycle the picked one); the job summary
    still compares every rank."""
    mine = [r for r in reports if (r.get("rank_measures") or {}).get("rank") == rank]
    if picked_cycle:
        picked = {(x["run"], x["host"]) for job in runs for x in job["ranks"] if x["rank"] == rank}
        mine = [r for r in mine if (r["run"], r["host"]) in picked]
    if not mine:
        known = sorted({m["rank"] for r in reports if (m := r.get("rank_measures")) and m["rank"] is not None})
        listed = ", ".join(map(str, known)) if known else "none: these files name no rank"
        raise UsageError(f"no rank {rank} in what was analysed; ranks: {listed}")
    return mine


def analyze_answer(
    reports: list[dict],
    cycle: int | None = None,
    rank: int | None = None,
    options: Options | None = None,
    findings_only: bool = False,
) -> dict:
    """`analyze --format json`: the reports, the jobs (`runs`) and the overview. `findings_only`: each
    report's and job's checks without the passes and the checks that do not apply."""
    from tb_gpu_advisor.job.analysis import jobs
    from tb_gpu_advisor.report import overview

    try:
        runs = jobs(reports, cycle, options)
    except ValueError as e:
        raise UsageError(str(e)) from None
    if rank is not None:
        reports = of_rank(reports, runs, rank, cycle is not None)
    rows = overview(reports, runs if rank is None else None)  # a job's own row above its ranks
    if findings_only:
        reports = [{**r, "checks": only_findings(r["checks"])} for r in reports]
        runs = [{**j, "checks": only_findings(j["checks"])} for j in runs]
    return {"reports": reports, "runs": runs, "overview": rows}


# -- analyze, brief: the ranked problems and their fixes first ------------------------------------------

BRIEF_PROBLEMS, MAX_BRIEF_PROBLEMS = 5, 50  # problems on a page of the brief answer
HOSTS_NAMED = 8  # hosts a problem names; past them, how many more
DETAILS = ("brief", "full")


def _round(x: Any, digits: int) -> Any:
    return round(x, digits) if isinstance(x, float) else x


def _first_paragraph(text: str) -> str:
    return " ".join((text or "").strip().split("\n\n")[0].split())


def _devices(r: dict) -> str:
    """ "2 × NVIDIA A100-SXM4-80GB" (the report's GPUs, by name)."""
    names: dict[str, int] = {}
    for d in r.get("devices") or []:
        names[d.get("name") or "GPU"] = names.get(d.get("name") or "GPU", 0) + 1
    return ", ".join(f"{n} × {name}" if n > 1 else name for name, n in names.items()) or "no GPU"


def _host_line(r: dict) -> dict:
    model = r.get("step_model") or {}
    return {
        "run": r["run"],
        "host": r["host"],
        "rank": _rank_of(r),
        "framework": r.get("framework"),
        "gpus": _devices(r),
        "step_ms": _round((r.get("steps") or {}).get("mean_ms"), 3),
        "unprofiled_step_ms": _round(model.get("step_ms"), 3),
        "bound": model.get("bound"),
        "device_busy_pct": _round((r.get("headline") or {}).get("device_busy_pct"), 1),
        "problems": sum(c["status"] in ("critical", "warning") for c in r.get("checks", [])),
        "error": r["errors"][0] if r.get("failure") and r.get("errors") else None,
    }


def _brief_problem(c: dict, where: list[str] | str) -> dict:
    """A finding as the brief answer gives it: what it is, what it saves, what to change."""
    w = c.get("whatif")
    return {
        "check": c["id"],
        "status": c["status"],
        "title": c["title"],
        "where": where,
        "saving_ms": _round(c.get("saving_ms"), 3),
        "saving_low_ms": _round(c.get("saving_low_ms"), 3),
        "saving_high_ms": _round(c.get("saving_high_ms"), 3),
        "saving_pct": _round(c.get("saving_pct"), 1),
        "fix": _first_paragraph(c.get("recommendation") or ""),
        "snippet": c.get("snippet"),
        "change": w["change"] if w else None,
        "new_step_ms": w["new_step_ms"] if w else None,
        "alternatives": [
            {"change": a["change"], "saving_ms": a["saving_ms"], "new_step_ms": a["new_step_ms"]}
            for a in c.get("alternatives") or []
        ],
        "evidence": len(c.get("evidence") or []),
        "table": (c.get("table") or {}).get("table"),
    }


def _brief_order(p: dict, hosts: int) -> tuple:
    """Problems (critical, warning) first, in report.problem_order; then the rest (info, error) by saving;
    at equal rank the one on more hosts first."""
    from tb_gpu_advisor.report import problem_order

    group = 0 if p["status"] in ("critical", "warning") else 1
    return (group, problem_order(p["check"], p["status"], p["saving_ms"]), -hosts, p["check"])


def brief_answer(doc: dict, offset: int = 0, limit: int = BRIEF_PROBLEMS, all_checks: bool = False) -> dict:
    """`analyze --brief --format json` (the MCP server's `analyze` by default): from `analyze_answer`'s
    document (with every check), the run's hosts in a line each, its jobs, and its problems ranked, each
    with its saving and its fix first, a page of `limit` from `offset`; a problem that fired on several
    hosts is one entry naming them, shown as its costliest. Evidence, measured numbers, tables and the
    checks that pass are in the full answer (`detail="full"`, `evidence`, `table`); `all_checks`: the
    ids of the checks that pass or do not apply too."""
    if offset < 0:
        raise UsageError("offset must be 0 or more")
    if not 1 <= limit <= MAX_BRIEF_PROBLEMS:
        raise UsageError(f"limit must be 1 to {MAX_BRIEF_PROBLEMS} problems")
    found: dict[tuple[str, str], list[tuple[dict, str]]] = {}
    for j in doc["runs"]:
        for c in j["checks"]:
            if c["status"] in FINDING_STATUSES:
                found.setdefault((j["run"], c["id"]), []).append((c, "job"))
    for r in doc["reports"]:
        for c in r["checks"]:
            if c["status"] in FINDING_STATUSES:
                found.setdefault((r["run"], c["id"]), []).append((c, r["host"]))
    from tb_gpu_advisor.report import problem_order

    problems = []
    for seen in found.values():
        worst, _ = min(seen, key=lambda x: problem_order(x[0]["id"], x[0]["status"], x[0].get("saving_ms")))
        hosts = [h for _, h in seen]
        if hosts == ["job"]:
            where: list[str] | str = "job"
        else:
            named = hosts[:HOSTS_NAMED]
            where = named + ([f"and {len(hosts) - len(named)} more"] if len(hosts) > len(named) else [])
        p = _brief_problem(worst, where)
        problems.append((_brief_order(p, len(hosts)), p))
    problems.sort(key=lambda x: x[0])
    ranked = [p for _, p in problems]
    page = ranked[offset : offset + limit]
    rest = len(ranked) - offset - len(page)
    out: dict[str, Any] = {
        "detail": "brief",
        "hosts": [_host_line(r) for r in doc["reports"]],
        "jobs": [
            {
                "run": j["run"],
                "ranks_captured": j["ranks_captured"],
                "world_size": j["world_size"],
                "cycle": j["cycle"],
                "stragglers": [x["label"] for x in j["ranks"] if x.get("straggler")],
            }
            for j in doc["runs"]
        ],
        "problems": page,
        "total": len(ranked),
        "offset": offset,
        "next_offset": offset + len(page) if rest > 0 else None,
        "more": (
            (f"{rest} more problem(s): ask again with offset={offset + len(page)}. " if rest > 0 else "")
            + "detail=full gives every finding's measured numbers, thresholds, basis, evidence windows and "
            "detail tables, with the steps and breakdown (name a host or rank on a job); evidence(run, "
            "finding, host) its events and source lines; table(run, kind, host, names) its rows; "
            "all_checks=true the checks that pass or do not apply."
        ),
    }
    if all_checks:
        statuses: dict[str, set[str]] = {"pass": set(), "not-applicable": set()}
        for r in [*doc["reports"], *doc["runs"]]:
            for c in r["checks"]:
                if c["status"] in statuses:
                    statuses[c["status"]].add(c["id"])
        out["passed"] = sorted(statuses["pass"])
        out["not_applicable"] = sorted(statuses["not-applicable"] - statuses["pass"])
    return out


def page_reports(doc: dict, offset: int = 0, limit: int | None = None) -> dict:
    """`analyze --format json --offset N --limit M`: the full answer's reports from `offset`, at most
    `limit` (the jobs and the overview whole), with where the next page starts."""
    if offset < 0 or (limit is not None and limit < 1):
        raise UsageError("offset must be 0 or more, and limit 1 or more reports")
    reports = doc["reports"]
    page = reports[offset : offset + limit if limit is not None else None]
    more = offset + len(page) < len(reports)
    return {
        **doc,
        "reports": page,
        "total_reports": len(reports),
        "offset": offset,
        "next_offset": offset + len(page) if more else None,
    }


# -- list_runs ---------------------------------------------------------------------------------------


def _rank_of(r: dict) -> int | None:
    return (r.get("rank_measures") or {}).get("rank")


def runs_answer(reports: list[dict], options: Options | None = None, hosts_listed: int = HOSTS_LISTED) -> dict:
    """`runs --analyse --json`: per run, worst first, what the overview shows of it (its worst finding,
    where, the step time, busy share and largest saving), its frameworks, its hosts (worst first, at
    most `hosts_listed`, with their ranks) and, for a job of several ranks or cycles, its straggler and
    the job checks that fired."""
    from tb_gpu_advisor.job.analysis import analyse_jobs
    from tb_gpu_advisor.report import overview

    by_run: dict[str, list[dict]] = {}
    for r in reports:
        by_run.setdefault(r["run"], []).append(r)
    out = []
    for run, rs in by_run.items():
        rows = overview(rs)
        worst = rows[0]
        ranks = {r["host"]: _rank_of(r) for r in rs}
        jobs = analyse_jobs(rs, None, options)
        job = None
        if jobs:
            j = jobs[0]
            job = {
                "ranks": j.ranks_captured,
                "world_size": j.world_size,
                "cycles": j.cycles,
                "cycle": j.cycle,
                "stragglers": [{"host": x.host, "rank": x.rank, "label": x.label} for x in j.ranks if x.straggler],
                "problems": [
                    {"id": f.id, "status": f.status, "title": f.title, "saving_ms": f.saving_ms}
                    for f in j.findings
                    if f.status in ("critical", "warning")
                ],
            }
        out.append(
            {
                "run": run,
                "frameworks": sorted({str(r.get("framework") or "unknown") for r in rs}),
                "status": worst["status"],
                "check": worst["check"],
                "title": worst["title"],
                "host": worst["host"],
                "step_ms": worst["step_ms"],
                "device_busy_pct": worst["device_busy_pct"],
                "top_saving_ms": max(x["top_saving_ms"] or 0.0 for x in rows),
                "hosts_total": len(rs),
                "hosts": [
                    {"host": x["host"], "rank": ranks.get(x["host"])} | {k: x[k] for k in HOST_KEYS}
                    for x in rows[:hosts_listed]
                ],
                "job": job,
            }
        )
    rank = {"critical": 0, "error": 1, "warning": 2, "pass": 3}
    out.sort(key=lambda x: (rank.get(x["status"], 4), -x["top_saving_ms"], x["run"]))
    return {"runs": out}


HOST_KEYS = ("status", "check", "title", "step_ms", "device_busy_pct", "top_saving_ms")


def runs_lines(doc: dict) -> list[str]:
    """`runs --analyse` as text: a line per run, worst first, and its job's straggler and problems."""
    out = []
    for r in doc["runs"]:
        step = f"{r['step_ms']:.2f} ms" if r["step_ms"] is not None else "—"
        saving = f"{r['top_saving_ms']:.2f} ms" if r["top_saving_ms"] else "—"
        hosts = f"{r['hosts_total']} host{'s' if r['hosts_total'] != 1 else ''}"
        out.append(
            f"{r['status'].upper():9} {r['run']}  ({', '.join(r['frameworks'])}, {hosts})  step {step}  "
            f"top saving {saving}  {r['title'] or ''}".rstrip()
        )
        if r["job"]:
            who = ", ".join(s["label"] for s in r["job"]["stragglers"]) or "none"
            fired = ", ".join(f"{p['id']} ({p['status']})" for p in r["job"]["problems"]) or "none"
            out.append(f"          job: {r['job']['ranks']} ranks, straggler {who}; job checks: {fired}")
    return out


# -- job ---------------------------------------------------------------------------------------------


def job_files(logdir: str, run: str) -> list[HostFile]:
    """The files of a job: a run's, or, for a run folder holding several sessions (an XSpace job's
    profiling cycles), all of its sessions'."""
    files = select(logdir, None, None)
    name = run.strip("/")
    mine = [f for f in files if f.run == name or run_folder(f.run) == name]
    return mine or select(logdir, run, None)  # none: the unknown-run message


def _cut_ranks(job: dict, limit: int) -> dict:
    """At most `limit` ranks (in rank order): the stragglers, the ranks standing out, then the first."""
    ranks = job["ranks"]
    if len(ranks) <= limit:
        return job
    order = sorted(range(len(ranks)), key=lambda i: (not ranks[i]["straggler"], not ranks[i]["outliers"], i))
    keep = sorted(order[:limit])
    hosts = {ranks[i]["host"] for i in keep}
    return {**job, "ranks": [ranks[i] for i in keep], "hosts": [h for h in job["hosts"] if h["host"] in hosts]}


def job_answer(
    reports: list[dict],
    run: str,
    cycle: int | None = None,
    limit: int = DEFAULT_JOB_RANKS,
    options: Options | None = None,
) -> dict:
    """`job --format json`: a run as a job (its ranks in the picked profiling cycle side by side, the
    straggler, the exposed communication and the other job checks), at most `limit` ranks listed."""
    from tb_gpu_advisor.job.analysis import jobs

    if not 1 <= limit <= 4096:
        raise UsageError("limit must be between 1 and 4096 ranks")
    try:
        found = jobs(reports, cycle, options)
    except ValueError as e:
        raise UsageError(str(e)) from None
    if not found:
        hosts = sorted({f"{r['run']} {r['host']}" for r in reports})
        raise UsageError(
            f"run {run!r} is not a job: one rank and one profiling cycle (analyze reports it)" + listing("hosts", hosts)
        )
    return _cut_ranks(found[0], limit)


# -- evidence, table, diff ---------------------------------------------------------------------------


def finding_of(report: dict, check: str) -> dict:
    """A report's finding by its check id; UsageError naming the report's findings otherwise."""
    for c in report["checks"]:
        if c["id"] == check:
            return c
    if report.get("failure"):
        raise UsageError(report["errors"][0] if report["errors"] else f"{report['run']}: no report")
    ids = [c["id"] for c in report["checks"]]
    fired = [c["id"] for c in report["checks"] if c["status"] in FINDING_STATUSES]
    raise UsageError(
        f"no check {check!r} in the report of run {report['run']!r}, host {report['host']!r}{suggest(check, ids)}"
        + listing("findings", fired or ["none"])
    )


def evidence_answer(m: Measures, report: dict, check: str, limit: int) -> dict:
    """`evidence --format json`: a finding's evidence windows, the events in them and their stacks, and
    the rows of its table that it links to (all of its table's rows, the first `limit`, where it names
    none)."""
    from tb_gpu_advisor import tables
    from tb_gpu_advisor.present.evidence import evidence

    if not 1 <= limit <= MAX_EVENTS:
        raise UsageError(f"limit must be between 1 and {MAX_EVENTS} events per window")
    finding = finding_of(report, check)
    doc = evidence(m, report, finding, limit)
    link = finding.get("table")
    doc["table_rows"] = tables.answer(tables.build(m, link["table"]), limit=limit, names=link["name"]) if link else None
    return doc


def table_answer(
    m: Measures,
    kind: str,
    group: str | None = None,
    step: int | None = None,
    sort: str | None = None,
    order: str | None = None,
    limit: int = 50,
    q: str | None = None,
    names: list[str] | None = None,
) -> dict:
    """`table --format json`: one host's table, sorted, filtered (`q`: a name containing it; `names`:
    exactly these, a finding's rows) and cut to `limit` rows."""
    from tb_gpu_advisor import tables

    try:
        tables.build_check(kind, group, step)
        t = tables.build(m, kind, group, step)
        return tables.answer(t, sort=sort, order=order, limit=limit, q=q, names=names or ())
    except tables.TableError as e:
        raise UsageError(str(e)) from None


def diff_answer(
    base_files: list[HostFile],
    new_files: list[HostFile],
    analysed: Callable[[HostFile], tuple[Measures, dict]],
    cycle: int | None = None,
    options: Options | None = None,
    all_checks: bool = False,
) -> Diff | JobDiff:
    """`diff --format json`: two runs (`tb-gpu-advisor/diff@2`), or two jobs rank by rank; `analysed`
    gives a file's measures and report (raising UsageError for an unreadable one); `all_checks`: the
    unchanged checks listed too (else counted)."""
    if len(base_files) > 1 or len(new_files) > 1:
        from tb_gpu_advisor.checks import Options
        from tb_gpu_advisor.job.diff import JobDiffError, diff_jobs

        try:
            return diff_jobs(
                base_files, new_files, options or Options(), cycle=cycle, analyse=analysed, all_checks=all_checks
            )
        except JobDiffError as e:
            raise UsageError(str(e)) from None
    from tb_gpu_advisor.report.compare import compare

    return compare(analysed(base_files[0]), analysed(new_files[0]), all_checks=all_checks)


# -- whatif ------------------------------------------------------------------------------------------

MAX_CHANGE_CHARS = 200  # a change names at most each of the 11 once
# What users call a change, and the changes it is: an unknown change that is one of these words is
# told the changes it means (`amp` is bf16 or fp16, not `graph`, which spelling alone suggests)
CHANGE_WORDS = {
    "amp": ("bf16", "fp16"),
    "autocast": ("bf16", "fp16"),
    "mixed": ("bf16", "fp16"),
    "mixedprecision": ("bf16", "fp16"),
    "half": ("fp16", "bf16"),
    "float16": ("fp16",),
    "bfloat16": ("bf16",),
    "tensorfloat32": ("tf32",),
    "cudagraph": ("graph",),
    "cudagraphs": ("graph",),
    "reduceoverhead": ("graph",),
    "jit": ("compile",),
    "xla": ("compile",),
    "torchcompile": ("compile",),
    "inductor": ("compile",),
    "triton": ("compile",),
    "fuse": ("fusion",),
    "dataloader": ("input",),
    "loader": ("input",),
    "workers": ("input",),
    "prefetch": ("input",),
    "pipeline": ("input",),
    "sync": ("syncs",),
    "synchronize": ("syncs",),
    "item": ("syncs",),
    "pad": ("padding",),
    "ddp": ("overlap",),
    "allreduce": ("overlap",),
    "python": ("host",),
}


def suggest_change(word: str) -> str:
    """ "; did you mean ...?" for an unknown change: the changes a user's word for one means, else the
    known changes spelled like it."""
    meant = CHANGE_WORDS.get("".join(c for c in word.lower() if c.isalnum()))
    if meant:
        return f"; did you mean {' or '.join(repr(c) for c in meant)}?"
    return suggest(word, list(CHANGES))


def check_change(change: str) -> list[str]:
    """A what-if's change ("bf16", or several joined by "+") as its parts; UsageError naming the known
    changes otherwise. Said before any profile is read."""
    known = listing("changes", list(CHANGES))
    if not change or len(change) > MAX_CHANGE_CHARS:
        raise UsageError("name a change, or several joined by + (e.g. bf16+compile)" + known)
    parts = change.split("+")
    for one in parts:
        if one not in CHANGES:
            raise UsageError(
                f"unknown change {one[:40]!r} (several are joined by +, e.g. bf16+compile){suggest_change(one)}" + known
            )
    twice = sorted({one for one in parts if parts.count(one) > 1})
    if twice:
        raise UsageError(f"the change {change!r} names {twice[0]!r} twice; name each change once")
    return parts


def whatif_answer(m: Measures, report: dict, change: str) -> dict:
    """`whatif --format json`: the step without the profiler and with `change` applied (its saving, what
    sets the step before and after, the model's basis), with the report's step model (the step as
    captured, the profiler's cost, every finding's fix together)."""
    check_change(change)
    if report.get("failure"):
        raise UsageError(report["errors"][0] if report["errors"] else f"{report['run']}: no report")
    where = f"run {report['run']!r}, host {report['host']!r}"
    prediction = m.predict(change)
    if prediction is None:
        raise UsageError(f"the change {change!r} does not apply to {where}: {m.not_applied(change)}")
    return {"run": report["run"], "host": report["host"], **prediction.to_json(), "step_model": report["step_model"]}
