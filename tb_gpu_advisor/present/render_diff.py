"""Comparisons as text and markdown: two runs (`diff`) and two jobs, rank by rank. Presentation
only: every number comes from the comparison's JSON."""

from __future__ import annotations

from tb_gpu_advisor.present.render import agent_line, mcp_call, md, md_code, num_text, terminal_safe

VERDICT_WORDS = {"fixed": "FIXED", "new": "NEW", "worse": "WORSE", "better": "BETTER", "unchanged": "same"}


def _val(v: object, unit: str | None) -> str:
    if v is None:
        return "—"
    return num_text(v, unit or "") if isinstance(v, (int, float)) else str(v)


def _signed(v: float | None, unit: str = "ms", digits: int = 2) -> str:
    if v is None:
        return "—"
    return f"{v:+.{digits}f}{' ' + unit if unit else ''}"


STEP_WORDS = {"faster": "faster", "slower": "slower", "same": "unchanged (within noise)", "unknown": "unknown"}


def _interval(iv: list[float] | None, unit: str = "ms", digits: int = 2) -> str:
    """The interval after a change, e.g. ', 95% interval -34.00 to -28.00 ms' ('' without one)."""
    if not iv:
        return ""
    return f", 95% interval {iv[0]:+.{digits}f} to {iv[1]:+.{digits}f} {unit}"


def step_change(d: dict) -> str:
    """The step time's change, e.g. '-13.98 ms (-59.8%) per step, 95% interval -14.41 to -13.51 ms: faster'."""
    s = d["steps"]
    pct = f" ({s['delta_pct']:+.1f}%)" if s["delta_pct"] is not None else ""
    captured = d["summary"].get("captured_step", d["summary"]["step"])
    return f"{_signed(s['delta_ms'])}{pct} per step{_interval(s['interval_ms'])}: {STEP_WORDS[captured]}"


BOUND = {"GPU": "the GPU sets it", "host": "the host sets it", "input": "waiting for input sets it"}


def apart_lines(d: dict) -> list[str]:
    """The steps without the profiler, the device's and the host's work apart, and the verdict on them
    where the profiler's cost made the captured steps misleading."""
    a = d.get("apart")
    if not a:
        return []
    b, n = a["base"], a["new"]
    out = [
        f"without the profiler: {b['step_ms']:.2f} → {n['step_ms']:.2f} ms a step ({_signed(a['step_delta_ms'])}"
        + (f", {a['step_delta_pct']:+.1f}%" if a["step_delta_pct"] is not None else "")
        + f"): {STEP_WORDS[a['verdict']]}; before {BOUND[b['bound']]}, after {BOUND[n['bound']]}",
        f"device: {b['device_ms']:.2f} → {n['device_ms']:.2f} ms of work a step ({_signed(a['device_delta_ms'])}); "
        f"host: {b['host_ms']:.2f} → {n['host_ms']:.2f} ms of its own work ({_signed(a['host_delta_ms'])}); "
        f"the profiler {b['profiler_pct']:.0f}% → {n['profiler_pct']:.0f}% of the captured step",
    ]
    if a["profiled_apart"] and a["verdict"] != d["summary"].get("captured_step"):
        out.append(
            f"the verdict is the steps' without the profiler: the captured steps say "
            f"{STEP_WORDS[d['summary']['captured_step']]}, but the profiler's own cost differs between the captures"
        )
    return out


def noise_line(c: dict) -> str:
    """A check's measure in both runs with the intervals of its change, e.g. 'input wait: 14.43 → 0.46 ms per
    step, -13.97 ms, 95% interval -14.40 to -13.52 ms; 61.7% → 4.9% of the step (-56.9 pts, -57.6 to -56.2)'."""
    z = c["noise"]
    lo, hi = z["interval_pts"]
    return (
        f"{z['measure']}: {z['base_ms']:.2f} → {z['new_ms']:.2f} ms per step, {_signed(z['delta_ms'])}"
        f"{_interval(z['interval_ms'])}; {z['base_pct']:.1f}% → {z['new_pct']:.1f}% of the step "
        f"({z['delta_pts']:+.1f} pts, {lo:+.1f} to {hi:+.1f})"
    )


def diff_text(d: dict, width: int = 100, paths: tuple[str, str] | None = None) -> str:
    """A comparison for a terminal: what got better, what got worse, by how much. `paths`: what the
    user named (folders or files), shown with the runs."""
    b, n, s = d["base"], d["new"], d["steps"]
    if paths:
        lines = [
            "GPU Advisor comparison",
            f"  before: {paths[0]}  (run {b['run']}, host {b['host']})",
            f"  after:  {paths[1]}  (run {n['run']}, host {n['host']})",
        ]
    else:
        lines = [f"GPU Advisor comparison · before {b['run']} ({b['host']}) → after {n['run']} ({n['host']})"]
    if s["base"]["mean_ms"] is not None and s["new"]["mean_ms"] is not None:
        lines.append(
            f"  step time: {s['base']['mean_ms']:.2f} ms ± {s['base']['stdev_ms']:.2f} ({s['base']['count']} steps) → "
            f"{s['new']['mean_ms']:.2f} ms ± {s['new']['stdev_ms']:.2f} ({s['new']['count']} steps): {step_change(d)}"
        )
    lines += [f"  {line}" for line in apart_lines(d)]
    summary = d["summary"]
    lines.append(
        "  checks: " + "; ".join(f"{k} {', '.join(summary[k]) or 'none'}" for k in ("fixed", "new", "worse", "better"))
    )
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
        if c["verdict"] == "unchanged":
            continue
        lines.append(
            f"  {VERDICT_WORDS[c['verdict']]:7} {c['id']:30} {c['base_status'] or '—'} → {c['new_status'] or '—'}"
        )
        if c["label"]:
            lines.append(
                f"          {c['label']}: {_val(c['base_value'], c['unit'])} → {_val(c['new_value'], c['unit'])}"
            )
        if c["base_saving_ms"] or c["new_saving_ms"]:
            lines.append(
                f"          saving per step: {_val(c['base_saving_ms'], 'ms')} → {_val(c['new_saving_ms'], 'ms')}"
            )
        if c["noise"]:
            lines.append(f"          {noise_line(c)}")
    for c in d["checks"]:
        if c["within_noise"]:
            lines.append(
                f"  {'~':7} {c['id']:30} {c['base_status'] or '—'} → {c['new_status'] or '—'}: unchanged (within noise)"
            )
            lines.append(f"          {noise_line(c)}")
    same = sum(1 for c in d["checks"] if c["verdict"] == "unchanged")
    lines.append(f"  unchanged: {same} check{'s' if same != 1 else ''}")
    for key, title in (("kernels", "kernels"), ("ops", "ops")):
        rows = [r for r in d[key] if abs(r["delta_ms"]) > 1e-6][:5]
        if rows:
            lines += ["", f"  {title} whose time per step changed most (ms per step, base → new):"]
            for r in rows:
                name = r["name"] if len(r["name"]) <= 70 else r["name"][:67] + "..."
                lines.append(f"    {_signed(r['delta_ms'], '', 3):>9}  {r['base_ms']:.3f} → {r['new_ms']:.3f}  {name}")
    return terminal_safe("\n".join(lines))


def diff_markdown(d: dict, paths: tuple[str, str] | None = None) -> str:
    """A comparison as markdown; when both sides are one logdir (`paths`), it ends with the MCP call
    that gives an agent the same comparison."""
    b, n, s = d["base"], d["new"], d["steps"]
    out = [f"### GPU Advisor comparison: {md_code(b['run'], cell=False)} → {md_code(n['run'], cell=False)}", ""]
    if paths:
        out += [f"Before: {md_code(paths[0], cell=False)} · after: {md_code(paths[1], cell=False)}", ""]
    if s["base"]["mean_ms"] is not None and s["new"]["mean_ms"] is not None:
        out += [f"Step time **{s['base']['mean_ms']:.2f} ms → {s['new']['mean_ms']:.2f} ms**: {step_change(d)}.", ""]
    for line in apart_lines(d):
        out += [md(line[0].upper() + line[1:]) + ".", ""]
    out += ["| Per step | Before | After | Delta |", "|---|---|---|---|"]
    for r in d["breakdown_ms"]:
        out.append(
            f"| {r['category'].replace('_', ' ')} | {_val(r['base_ms'], 'ms')} | {_val(r['new_ms'], 'ms')} | "
            f"{_signed(r['delta_ms'])} |"
        )
    out += ["", "| Check | Verdict | Before | After | Saving per step |", "|---|---|---|---|---|"]
    for c in d["checks"]:
        if c["verdict"] == "unchanged":
            continue
        out.append(
            f"| `{c['id']}` | **{c['verdict']}** | {c['base_status'] or '—'} {md(_val(c['base_value'], c['unit']))} | "
            f"{c['new_status'] or '—'} {md(_val(c['new_value'], c['unit']))} | "
            f"{_val(c['base_saving_ms'], 'ms')} → {_val(c['new_saving_ms'], 'ms')} |"
        )
    for c in d["checks"]:
        if c["within_noise"]:
            out.append(
                f"| `{c['id']}` | unchanged (within noise) | {c['base_status']} | {c['new_status']} | "
                f"{md(noise_line(c))} |"
            )
    if paths and paths[0] == paths[1]:
        call = mcp_call("diff", before=b["run"], after=n["run"], before_host=b["host"], after_host=n["host"])
        out += ["", agent_line(paths[0], call)]
    return "\n".join(out)


JOB_DIFF_RANK_LINES = 24  # ranks listed one per line; the rest are counted (the JSON has them all)


def _job_side(x: dict) -> str:
    world = f" of {x['world_size']}" if x["world_size"] else ""
    return f"job {x['run']}, {x['ranks']}{world} rank{'' if x['ranks'] == 1 and not world else 's'}, cycle {x['cycle'] + 1}"


def _rank_line(r: dict) -> str:
    changed = "; ".join(f"{v} {', '.join(r[v])}" for v in ("fixed", "new", "worse", "better") if r[v])
    return (
        f"{r['label']:28} {_val(r['base_step_ms'], 'ms'):>10} {_val(r['new_step_ms'], 'ms'):>10} "
        f"{_signed(r['delta_ms']):>10}  {STEP_WORDS[r['step']]}" + (f"  ({changed})" if changed else "")
    )


def _job_summary(d: dict) -> list[str]:
    s = d["summary"]
    ranks = ", ".join(f"{n} {STEP_WORDS[v]}" for v, n in s["ranks"].items() if n)
    lines = [f"ranks: {ranks}"]
    if d["only_base"] or d["only_new"]:
        lines.append(
            f"only before: {', '.join(d['only_base']) or 'none'}; only after: {', '.join(d['only_new']) or 'none'}"
        )
    lines.append(
        "job checks: " + "; ".join(f"{k} {', '.join(s[k]) or 'none'}" for k in ("fixed", "new", "worse", "better"))
    )
    return lines


def job_diff_text(d: dict, paths: tuple[str, str]) -> str:
    """A comparison of two jobs for a terminal: the median rank, every rank's step change (the first
    JOB_DIFF_RANK_LINES), the job checks, then the median rank's comparison in full."""
    m = d["median"]
    lines = [
        "GPU Advisor comparison of jobs",
        f"  before: {paths[0]}  ({_job_side(d['base'])})",
        f"  after:  {paths[1]}  ({_job_side(d['new'])})",
        f"  median rank {d['median_rank']}: {step_change(m)}",
    ]
    lines += [f"  {x}" for x in _job_summary(d)]
    lines += ["", f"  {'rank':28} {'before':>10} {'after':>10} {'delta':>10}  step"]
    lines += [f"  {_rank_line(r)}" for r in d["ranks"][:JOB_DIFF_RANK_LINES]]
    if len(d["ranks"]) > JOB_DIFF_RANK_LINES:
        lines.append(f"  … {len(d['ranks']) - JOB_DIFF_RANK_LINES} more ranks (--format json lists them all)")
    lines += ["", f"The median rank, {d['median_rank']}, in full:"]
    return terminal_safe("\n".join(lines)) + "\n" + diff_text(m)  # diff_text makes its own text safe


def job_diff_markdown(d: dict, paths: tuple[str, str]) -> str:
    out = [
        f"### GPU Advisor comparison of jobs: {md_code(d['base']['run'], cell=False)} → {md_code(d['new']['run'], cell=False)}",
        "",
        f"Before: {md_code(paths[0], cell=False)} ({md(_job_side(d['base']))}) · after: {md_code(paths[1], cell=False)} ({md(_job_side(d['new']))})",
        "",
        f"Median rank {md(d['median_rank'])}: {step_change(d['median'])}.",
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
