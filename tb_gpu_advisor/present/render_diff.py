"""Comparisons as text and markdown: two runs (`diff`) and two jobs, rank by rank. Presentation only:
every number comes from the comparison's document (report/diff_doc.py), whose optional parts are typed
as optional; the lines the text and the markdown share are made once here."""

from __future__ import annotations

from tb_gpu_advisor.present.render import agent_line, mcp_call, md, md_code, num_text, terminal_safe
from tb_gpu_advisor.report.diff_doc import Apart, CheckChange, CheckTime, Diff, JobDiff, RankChange

VERDICT_WORDS = {
    "fixed": "FIXED",
    "new": "NEW",
    "worse": "WORSE",
    "better": "BETTER",
    "exposed": "EXPOSED",
    "unchanged": "same",
}
STEP_WORDS: dict[str, str] = {
    "faster": "faster",
    "slower": "slower",
    "same": "unchanged (within noise)",
    "uncertain": "uncertain",
    "unknown": "unknown",
}
BOUND = {"GPU": "the GPU sets it", "host": "the host sets it", "input": "waiting for input sets it"}


def _val(v: object, unit: str | None) -> str:
    if v is None:
        return "—"
    return num_text(v, unit or "") if isinstance(v, (int, float)) else str(v)


def _signed(v: float | None, unit: str = "ms", digits: int = 2) -> str:
    if v is None:
        return "—"
    return f"{v:+.{digits}f}{' ' + unit if unit else ''}"


def _interval(iv: list[float] | None, unit: str = "ms", digits: int = 2, what: str = "95% interval") -> str:
    """The interval after a change, e.g. ', 95% interval -34.00 to -28.00 ms' ('' without one)."""
    if not iv:
        return ""
    return f", {what} {iv[0]:+.{digits}f} to {iv[1]:+.{digits}f} {unit}"


def step_change(d: Diff) -> str:
    """The captured steps' change, e.g. '-13.98 ms (-59.8%) per step, 95% interval -14.41 to -13.51 ms'."""
    s = d["steps"]
    pct = f" ({s['delta_pct']:+.1f}%)" if s["delta_pct"] is not None else ""
    return f"{_signed(s['delta_ms'])}{pct} per step{_interval(s['interval_ms'])}"


def _band(a: Apart) -> str:
    b, n = a["base"]["error"], a["new"]["error"]
    return f"{b['low_pct']:+.1f}% to {b['high_pct']:+.1f}% before, {n['low_pct']:+.1f}% to {n['high_pct']:+.1f}% after"


def basis_line(d: Diff) -> str:
    """The step's verdict with its basis and the interval on it, e.g. 'faster, on the captured steps: -30.58 ms
    (-82.2%), interval -37.39 to -26.11 ms (...)', or an uncertain verdict with its reason."""
    v, a = d["verdict"], d["apart"]
    pct = f" ({v['delta_pct']:+.1f}%)" if v["delta_pct"] is not None else ""
    if v["basis"] == "unprofiled" and a is not None:
        where = (
            f"on the steps without the profiler, as the model estimates them ({a['base']['step_ms']:.2f} → "
            f"{a['new']['step_ms']:.2f} ms)"
        )
        why = f" (the model's measured error: {_band(a)})"
    else:
        where = "on the captured steps"
        widened = (
            a is not None
            and v["interval_ms"] is not None
            and d["steps"]["interval_ms"] is not None
            and v["interval_ms"] != d["steps"]["interval_ms"]
        )
        why = (
            f" (the steps' 95% interval, widened by the profiler's cost, {a['base']['profiler_ms']:.2f} → "
            f"{a['new']['profiler_ms']:.2f} ms a step)"
            if widened and a is not None
            else " (the steps' 95% interval)"
            if v["interval_ms"]
            else " (too few steps for an interval: by size alone)"
        )
    iv = f", interval {v['interval_ms'][0]:+.2f} to {v['interval_ms'][1]:+.2f} ms" if v["interval_ms"] else ""
    line = f"{STEP_WORDS[v['verdict']]}, {where}: {_signed(v['delta_ms'])}{pct}{iv}{why}"
    if v["reason"]:
        line += f"; {v['reason']}"
    return line


def apart_lines(d: Diff) -> list[str]:
    """The steps without the profiler, the device's and the host's work apart, and what sets each step."""
    a = d["apart"]
    if a is None:
        return []
    b, n = a["base"], a["new"]
    return [
        f"without the profiler: {b['step_ms']:.2f} → {n['step_ms']:.2f} ms a step ({_signed(a['step_delta_ms'])}"
        + (f", {a['step_delta_pct']:+.1f}%" if a["step_delta_pct"] is not None else "")
        + f"); before {BOUND.get(b['bound'], b['bound'])}, after {BOUND.get(n['bound'], n['bound'])}",
        f"device: {b['device_ms']:.2f} → {n['device_ms']:.2f} ms of work a step ({_signed(a['device_delta_ms'])}); "
        f"host: {b['host_ms']:.2f} → {n['host_ms']:.2f} ms of its own work ({_signed(a['host_delta_ms'])}); "
        f"the profiler {b['profiler_pct']:.0f}% → {n['profiler_pct']:.0f}% of the captured step",
    ]


def realised_line(d: Diff) -> str | None:
    """The before-run's prediction for the findings the after-run no longer has beside what the step did
    (report/realised.py), e.g. 'predicted against realised: input: predicted 26.2 ms a step (21.8–31.6),
    realised 26.7 (33.0 → 6.4 ms, both without the profiler): inside the range'; None without one."""
    r = d["realised"]
    return None if r is None else f"predicted against realised: {r['sentence']}"


def time_line(t: CheckTime) -> str:
    """A check's own time in both runs with the interval of its change, e.g. 'input wait: 14.43 → 0.46 ms per
    step, -13.97 ms, 95% interval -14.40 to -13.52 ms; 61.7% → 4.9% of the step (-56.9 pts, -57.6 to -56.2)'."""
    line = (
        f"{t['measure']}: {_val(t['base_ms'], 'ms')} → {_val(t['new_ms'], 'ms')} per step, {_signed(t['delta_ms'])}"
        f"{_interval(t['interval_ms'])}"
    )
    z = t["share"]
    if z is not None:
        lo, hi = z["interval_pts"]
        line += (
            f"; {z['base_pct']:.1f}% → {z['new_pct']:.1f}% of the step ({z['delta_pts']:+.1f} pts, "
            f"{lo:+.1f} to {hi:+.1f})"
        )
    return line


def reading(c: CheckChange) -> str:
    """Why a check reads exposed or within noise, in a few words ('' for the other verdicts)."""
    t = c["time"]
    if c["verdict"] == "exposed":
        if t is None:
            return "its measure is as it was; another change made it count"
        if t["wait"] and (t["delta_ms"] or 0) > 0:
            return "a wait that grew as the rest of the step shrank, while the step did not grow"
        return "its own time did not grow; its share of the step did"
    if c["within_noise"]:
        rank = {"critical": 2, "warning": 1}
        if rank.get(c["new_status"] or "", 0) > rank.get(c["base_status"] or "", 0):
            return "unchanged (within noise): a threshold crossed by a hair, nothing of it grew"
        if t is None:
            return "unchanged (within noise): its status fell, its measure is as it was"
        return "unchanged (within noise): its status fell, its own time did not fall beyond the noise"
    return ""


def _check_lines(c: CheckChange) -> list[str]:
    head = f"  {VERDICT_WORDS[c['verdict']]:7} {c['id']:30} {c['base_status'] or '—'} → {c['new_status'] or '—'}"
    if c["within_noise"]:
        head = f"  {'~':7} {c['id']:30} {c['base_status'] or '—'} → {c['new_status'] or '—'}"
    lines = [head + (f": {reading(c)}" if reading(c) else "")]
    if c["time"] is not None:
        lines.append(f"          {time_line(c['time'])}")
    elif c["label"]:
        lines.append(f"          {c['label']}: {_val(c['base_value'], c['unit'])} → {_val(c['new_value'], c['unit'])}")
    if c["base_saving_ms"] or c["new_saving_ms"]:
        lines.append(f"          saving per step: {_val(c['base_saving_ms'], 'ms')} → {_val(c['new_saving_ms'], 'ms')}")
    return lines


def _unchanged_line(d: Diff) -> str:
    n = d["summary"]["unchanged"]
    listed = "" if d["all_checks"] or not n else " (--all lists them)"
    return f"unchanged: {n} check{'s' if n != 1 else ''}{listed}"


def diff_text(d: Diff, width: int = 100, paths: tuple[str, str] | None = None) -> str:
    """A comparison for a terminal: the step's verdict on its basis, what got better, what got worse, by
    how much. `paths`: what the user named (folders or files), shown with the runs."""
    b, n, s = d["base"], d["new"], d["steps"]
    if paths:
        lines = [
            "GPU Advisor comparison",
            f"  before: {paths[0]}  (run {b['run']}, host {b['host']})",
            f"  after:  {paths[1]}  (run {n['run']}, host {n['host']})",
        ]
    else:
        lines = [f"GPU Advisor comparison · before {b['run']} ({b['host']}) → after {n['run']} ({n['host']})"]
    sb, sn = s["base"], s["new"]
    if sb["mean_ms"] is not None and sn["mean_ms"] is not None:
        lines.append(
            f"  step time: {sb['mean_ms']:.2f} ms ± {sb['stdev_ms'] or 0:.2f} ({sb['count']} steps) → "
            f"{sn['mean_ms']:.2f} ms ± {sn['stdev_ms'] or 0:.2f} ({sn['count']} steps): {step_change(d)}"
        )
    lines.append(f"  verdict: {basis_line(d)}")
    lines += [f"  {line}" for line in apart_lines(d)]
    realised = realised_line(d)
    if realised:
        lines.append(f"  {realised}")
    summary = d["summary"]
    lists = {k: summary[k] for k in ("fixed", "new", "worse", "better", "exposed")}
    lines.append("  checks: " + "; ".join(f"{k} {', '.join(v) or 'none'}" for k, v in lists.items()))
    if summary["within_noise"]:
        lines.append(f"  unchanged (within noise): {', '.join(summary['within_noise'])}")
    lines += ["", f"  {'per step (ms)':24} {'before':>9} {'after':>9} {'delta':>10}"]
    for r in d["breakdown_ms"]:
        lines.append(
            f"  {r['category'].replace('_', ' '):24} {_val(r['base_ms'], 'ms'):>9} {_val(r['new_ms'], 'ms'):>9} "
            f"{_signed(r['delta_ms']):>10}"
        )
    for h in d["headline"]:
        lines.append(
            f"  {h['label']:24} {_val(h['base'], h['unit']):>9} {_val(h['new'], h['unit']):>9} "
            f"{_signed(h['delta'], 'pts' if h['unit'] == '%' else h['unit'], 1 if h['unit'] == '%' else 2):>10}"
        )
    lines.append("")
    for c in d["checks"]:
        if c["verdict"] != "unchanged" or c["within_noise"]:
            lines += _check_lines(c)
    if d["all_checks"]:
        lines += [
            f"  {'same':7} {c['id']}" for c in d["checks"] if c["verdict"] == "unchanged" and not c["within_noise"]
        ]
    lines.append(f"  {_unchanged_line(d)}")
    for title, movers in (("kernels", d["kernels"]), ("ops", d["ops"])):
        moved = [m for m in movers if abs(m["delta_ms"]) > 1e-6][:5]
        if moved:
            lines += ["", f"  {title} whose time per step changed most (ms per step, base → new):"]
            for m in moved:
                name = m["name"] if len(m["name"]) <= 70 else m["name"][:67] + "..."
                lines.append(f"    {_signed(m['delta_ms'], '', 3):>9}  {m['base_ms']:.3f} → {m['new_ms']:.3f}  {name}")
    return terminal_safe("\n".join(lines))


def diff_markdown(d: Diff, paths: tuple[str, str] | None = None) -> str:
    """A comparison as markdown; when both sides are one logdir (`paths`), it ends with the MCP call
    that gives an agent the same comparison."""
    b, n, s = d["base"], d["new"], d["steps"]
    out = [f"### GPU Advisor comparison: {md_code(b['run'], cell=False)} → {md_code(n['run'], cell=False)}", ""]
    if paths:
        out += [f"Before: {md_code(paths[0], cell=False)} · after: {md_code(paths[1], cell=False)}", ""]
    if s["base"]["mean_ms"] is not None and s["new"]["mean_ms"] is not None:
        out += [f"Step time **{s['base']['mean_ms']:.2f} ms → {s['new']['mean_ms']:.2f} ms**: {step_change(d)}.", ""]
    out += [f"**Verdict: {md(basis_line(d))}.**", ""]
    for line in apart_lines(d):
        out += [md(line[0].upper() + line[1:]) + ".", ""]
    realised = realised_line(d)
    if realised:
        out += [md(realised[0].upper() + realised[1:]) + ".", ""]
    out += ["| Per step | Before | After | Delta |", "|---|---|---|---|"]
    for r in d["breakdown_ms"]:
        out.append(
            f"| {r['category'].replace('_', ' ')} | {_val(r['base_ms'], 'ms')} | {_val(r['new_ms'], 'ms')} | "
            f"{_signed(r['delta_ms'])} |"
        )
    out += ["", "| Check | Verdict | Before | After | Its own time | Saving per step |", "|---|---|---|---|---|---|"]
    for c in d["checks"]:
        word = "unchanged (within noise)" if c["within_noise"] else c["verdict"]
        own = md(time_line(c["time"])) if c["time"] is not None else "—"
        out.append(
            f"| `{c['id']}` | **{word}** | {c['base_status'] or '—'} {md(_val(c['base_value'], c['unit']))} | "
            f"{c['new_status'] or '—'} {md(_val(c['new_value'], c['unit']))} | {own} | "
            f"{_val(c['base_saving_ms'], 'ms')} → {_val(c['new_saving_ms'], 'ms')} |"
        )
    out += ["", md(_unchanged_line(d)[0].upper() + _unchanged_line(d)[1:]) + "."]
    if paths and paths[0] == paths[1]:
        call = mcp_call("diff", before=b["run"], after=n["run"], before_host=b["host"], after_host=n["host"])
        out += ["", agent_line(paths[0], call)]
    return "\n".join(out)


JOB_DIFF_RANK_LINES = 24  # ranks listed one per line; the rest are counted (the JSON has them all)


def _job_side(x: dict) -> str:
    world = f" of {x['world_size']}" if x["world_size"] else ""
    return f"job {x['run']}, {x['ranks']}{world} rank{'' if x['ranks'] == 1 and not world else 's'}, cycle {x['cycle'] + 1}"


def _rank_line(r: RankChange) -> str:
    lists = {"fixed": r["fixed"], "new": r["new"], "worse": r["worse"], "better": r["better"]}
    changed = "; ".join(f"{v} {', '.join(ids)}" for v, ids in lists.items() if ids)
    return (
        f"{r['label']:28} {_val(r['base_step_ms'], 'ms'):>10} {_val(r['new_step_ms'], 'ms'):>10} "
        f"{_signed(r['delta_ms']):>10}  {STEP_WORDS[r['step']]}" + (f"  ({changed})" if changed else "")
    )


def _job_summary(d: JobDiff) -> list[str]:
    s = d["summary"]
    ranks = ", ".join(f"{n} {STEP_WORDS[v]}" for v, n in s["ranks"].items() if n)
    lines = [f"ranks: {ranks}"]
    if d["only_base"] or d["only_new"]:
        lines.append(
            f"only before: {', '.join(d['only_base']) or 'none'}; only after: {', '.join(d['only_new']) or 'none'}"
        )
    lists = {"fixed": s["fixed"], "new": s["new"], "worse": s["worse"], "better": s["better"]}
    lines.append("job checks: " + "; ".join(f"{k} {', '.join(v) or 'none'}" for k, v in lists.items()))
    return lines


def job_diff_text(d: JobDiff, paths: tuple[str, str]) -> str:
    """A comparison of two jobs for a terminal: the median rank, every rank's step change (the first
    JOB_DIFF_RANK_LINES), the job checks, then the median rank's comparison in full."""
    m = d["median"]
    lines = [
        "GPU Advisor comparison of jobs",
        f"  before: {paths[0]}  ({_job_side(dict(d['base']))})",
        f"  after:  {paths[1]}  ({_job_side(dict(d['new']))})",
        f"  median rank {d['median_rank']}: {basis_line(m)}",
    ]
    lines += [f"  {x}" for x in _job_summary(d)]
    lines += ["", f"  {'rank':28} {'before':>10} {'after':>10} {'delta':>10}  step"]
    lines += [f"  {_rank_line(r)}" for r in d["ranks"][:JOB_DIFF_RANK_LINES]]
    if len(d["ranks"]) > JOB_DIFF_RANK_LINES:
        lines.append(f"  … {len(d['ranks']) - JOB_DIFF_RANK_LINES} more ranks (--format json lists them all)")
    lines += ["", f"The median rank, {d['median_rank']}, in full:"]
    return terminal_safe("\n".join(lines)) + "\n" + diff_text(m)  # diff_text makes its own text safe


def job_diff_markdown(d: JobDiff, paths: tuple[str, str]) -> str:
    out = [
        f"### GPU Advisor comparison of jobs: {md_code(d['base']['run'], cell=False)} → {md_code(d['new']['run'], cell=False)}",
        "",
        f"Before: {md_code(paths[0], cell=False)} ({md(_job_side(dict(d['base'])))}) · after: "
        f"{md_code(paths[1], cell=False)} ({md(_job_side(dict(d['new'])))})",
        "",
        f"Median rank {md(d['median_rank'])}: {md(basis_line(d['median']))}.",
        "",
        *[f"- {md(x)}" for x in _job_summary(d)],
        "",
        "| Rank | Before | After | Delta | Step |",
        "|---|---|---|---|---|",
    ]
    for r in d["ranks"][:JOB_DIFF_RANK_LINES]:
        out.append(
            f"| {md(r['label'])} | {_val(r['base_step_ms'], 'ms')} | {_val(r['new_step_ms'], 'ms')} | "
            f"{_signed(r['delta_ms'])} | {STEP_WORDS[r['step']]} |"
        )
    if len(d["ranks"]) > JOB_DIFF_RANK_LINES:
        out.append(f"\n{len(d['ranks']) - JOB_DIFF_RANK_LINES} more ranks in `--format json`.")
    if paths[0] == paths[1]:
        out += ["", agent_line(paths[0], mcp_call("diff", before=d["base"]["run"], after=d["new"]["run"]))]
    return "\n".join(out + ["", diff_markdown(d["median"])])
