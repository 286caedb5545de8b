"""Reports as text for a terminal and markdown for a pull-request comment. Presentation only: every
number comes from the report JSON."""

from __future__ import annotations

import re
import textwrap

from tb_gpu_advisor.report import CRITICAL, INFO, NOT_APPLICABLE, PASS, WARNING
from tb_gpu_advisor.steps import CATEGORIES
from tb_gpu_advisor.units import fmt_pct

SHORT = {
    "device_compute": "compute",
    "device_collectives": "collectives",
    "memcpy_h2d": "H2D",
    "memcpy_d2h": "D2H",
    "memcpy_d2d": "D2D/P2P",
    "host_input_wait": "input wait",
    "kernel_launch_wait": "launch wait",
    "idle_other": "idle/other",
}


# Bidirectional controls reorder what a terminal shows (a run name could show as another); line and
# paragraph separators break lines.
_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029"
_CONTROL = re.compile(f"[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f{_BIDI}]")
_NAME_CONTROL = re.compile(f"[\\x00-\\x1f\\x7f-\\x9f{_BIDI}]")
_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(m: re.Match) -> str:
    c = m.group()
    return _ESCAPES.get(c) or (f"\\x{ord(c):02x}" if ord(c) < 256 else f"\\u{ord(c):04x}")


def terminal_safe(text: str) -> str:
    """Names come from untrusted profiles: no control or bidirectional characters (terminal escapes,
    reordered text) reach a terminal; they are shown escaped (`\\x1b`, `\\u202e`)."""
    return _CONTROL.sub(_escape, text)


def name_safe(name: str) -> str:
    """A run or host name for one line of a terminal: also its newlines and tabs escaped (`\\n`)."""
    return _NAME_CONTROL.sub(_escape, name)


def _num(v, unit: str = "") -> str:
    if v is None:
        return "n/a"
    if isinstance(v, float) and v.is_integer():
        s = str(int(v))
    elif isinstance(v, float):
        s = f"{v:.3f}".rstrip("0").rstrip(".") if abs(v) < 100 else f"{v:.1f}"
    else:
        s = str(v)
    return f"{s} {unit}".strip() if unit and unit not in ("%",) else s + (unit if unit == "%" else "")


def _first_paragraph(text: str) -> str:
    return " ".join(text.strip().split("\n\n")[0].split())


def _saving(c: dict) -> str:
    if c.get("saving_ms") is None:
        return ""
    lo, hi = c.get("saving_low_ms"), c.get("saving_high_ms")
    span = f", {lo:.2f}–{hi:.2f} ms/step" if lo is not None and hi is not None else ""
    return f"{c['saving_ms']:.2f} ms/step ({fmt_pct(c['saving_pct'])}){span}"


def capability(d: dict) -> str:
    """A device's compute capability ("cc 7.0"), or an AMD GPU's architecture, which has none."""
    if d.get("compute_capability") is None and d.get("architecture"):
        return d["architecture"]
    return f"cc {d.get('compute_capability') or '?'}"


def header_lines(r: dict) -> list[str]:
    lines = [f"GPU Advisor · run {name_safe(r['run'])} · host {name_safe(r['host'])}"]
    for d in r.get("devices") or []:
        lines.append(
            f"  GPU {d['id']}: {d['name']}  {capability(d)}, {d['sm_count'] or '?'} SMs, {d['memory_gib'] or '?'} GiB"
        )
    if not r.get("devices"):
        lines.append("  no GPU in this profile")
    s = r.get("steps")
    if s:
        marker = f' "{s["marker"]}"' if s.get("marker") else ""
        lines.append(
            f"  {s['count']} steps ({s['source']}{marker}): mean {s['mean_ms']:.2f} ms, stdev {s['stdev_ms']:.2f}, "
            f"min {s['min_ms']:.2f}, max {s['max_ms']:.2f}"
        )
    h = r.get("headline")
    if h:
        lines.append(
            f"  device busy {fmt_pct(h['device_busy_pct'])} · op time on device {fmt_pct(h['device_op_time_pct'])} · "
            f"16-bit compute {fmt_pct(h['fp16_compute_pct'])}"
        )
        if len(h.get("per_gpu", [])) > 1:
            lines.append(
                "  per GPU busy: "
                + ", ".join(f"GPU {g['device_id']} {fmt_pct(g['device_busy_pct'])}" for g in h["per_gpu"])
            )
        for g in h.get("per_gpu", []):
            lines.append(f"  GPU {g['device_id']}: {kernel_figures(g)}")
    b = r.get("breakdown_ms")
    if b:
        lines.append("  per step (ms): " + " · ".join(f"{SHORT[c]} {b[c]:.2f}" for c in CATEGORIES))
    return lines


OUTSIDE_THE_CAPTURE = "outside the capture were dropped"  # the reader's own capture error (see extent.py)
NOTICE_LABEL = {"profiler": "the profiler said", "capture": "capture", "reader": "note"}


def notices(r: dict) -> list[tuple[str, str]]:
    """(who, message): what the profiler said while capturing (XSpace errors and warnings), and
    what the reader skipped or clamped."""
    out = [("capture" if OUTSIDE_THE_CAPTURE in m else "profiler", m) for m in r.get("capture_errors") or []]
    return out + [("reader", m) for m in r.get("warnings") or []]


def text(r: dict, width: int = 100) -> str:
    lines = header_lines(r)
    for e in r.get("errors", []):
        lines.append(f"  ERROR: {e}")
    for who, m in notices(r):
        lines.append(f"  {NOTICE_LABEL[who]}: {m}")
    checks = r.get("checks", [])
    problems = [c for c in checks if c["status"] in (CRITICAL, WARNING, INFO)]
    wrap = textwrap.TextWrapper(width=width, initial_indent="    ", subsequent_indent="    ")
    for c in problems:
        lines.append("")
        lines.append(f"{c['status'].upper():8}  {c['id']}  {c['title']}")
        lines.extend(wrap.wrap(c["summary"]))
        if c["thresholds"]:
            key = c["metrics"][0] if c["metrics"] else None
            th = ", ".join(f"{t['name']} {_num(t['value'], t['unit'])}" for t in c["thresholds"])
            if key:
                lines.append(f"    measured {key['label']}: {_num(key['value'], key['unit'])} (thresholds: {th})")
        if _saving(c):
            lines.append(f"    estimated saving: {_saving(c)}")
        for ev in c["evidence"][:2]:
            lines.append(f"    where: {ev['where']}  {ev['start_ms']:.3f}-{ev['end_ms']:.3f} ms  {ev['label']}")
        lines.extend(wrap.wrap("do: " + _first_paragraph(c["recommendation"])))
        lines.append(f"    guide: {c['link']}")
    passed = sorted(c["id"] for c in checks if c["status"] == PASS)
    na = sorted((c for c in checks if c["status"] == NOT_APPLICABLE), key=lambda c: c["id"])
    if passed:
        lines.append("")
        lines.extend(
            textwrap.wrap(f"passed ({len(passed)}): " + ", ".join(passed), width=width, subsequent_indent="    ")
        )
    if na:
        lines.extend(
            textwrap.wrap(
                f"not applicable ({len(na)}): " + ", ".join(f"{c['id']} ({c['reason']})" for c in na),
                width=width,
                subsequent_indent="    ",
            )
        )
    return terminal_safe("\n".join(lines))


def _md(s: str) -> str:
    return str(s).replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;").replace("\n", " ")


def kernel_figures(g: dict) -> str:
    """One GPU's kernel figures, as PyTorch's TensorBoard plugin computes them (analysis.kernel_efficiency),
    and the collectives' overlap with compute (as Holistic Trace Analysis computes it)."""
    return (
        f"kernels running {fmt_pct(g.get('gpu_utilization_pct'))} (the PyTorch plugin's GPU utilization) · "
        f"est. SM efficiency {fmt_pct(g.get('sm_efficiency_pct'))} · "
        f"est. achieved occupancy {fmt_pct(g.get('achieved_occupancy_pct'))}"
        + (
            f" · collectives overlapped by compute {fmt_pct(g['comm_overlap_pct'])}"
            if g.get("comm_overlap_pct") is not None
            else ""
        )
    )


def markdown(r: dict) -> str:
    out = [f"### GPU Advisor: `{_md(r['run'])}` on `{_md(r['host'])}`", ""]
    s, h = r.get("steps"), r.get("headline")
    if s and h:
        out.append(
            f"{s['count']} steps, mean **{s['mean_ms']:.2f} ms** · device busy **{fmt_pct(h['device_busy_pct'])}** · "
            f"op time on device **{fmt_pct(h['device_op_time_pct'])}** · 16-bit compute **{fmt_pct(h['fp16_compute_pct'])}**"
        )
        out.append("")
        for g in h.get("per_gpu", []):
            out.append(f"GPU {g['device_id']}: busy {fmt_pct(g['device_busy_pct'])} · {kernel_figures(g)}")
            out.append("")
    for e in r.get("errors", []):
        out.append(f"> **Error:** {_md(e)}")
        out.append("")
    for who, m in notices(r):
        out.append(f"> **{NOTICE_LABEL[who].capitalize()}:** {_md(m)}")
        out.append("")
    checks = r.get("checks", [])
    problems = [c for c in checks if c["status"] in (CRITICAL, WARNING, INFO)]
    if problems:
        out += ["| Status | Check | Measured | Est. saving per step |", "|---|---|---|---|"]
        for c in problems:
            out.append(
                f"| **{c['status']}** | `{c['id']}` {_md(c['title'])} | {_md(c['summary'])} | {_md(_saving(c)) or '—'} |"
            )
        out.append("")
        out.append("<details><summary>What to change</summary>")
        out.append("")
        for c in problems:
            out.append(f"**`{c['id']}`** — {_md(_first_paragraph(c['recommendation']))} ([guide]({c['link']}))")
            if c.get("snippet"):
                out += ["", "```", c["snippet"], "```"]
            out.append("")
        out.append("</details>")
        out.append("")
    passed = sorted(c["id"] for c in checks if c["status"] == PASS)
    na = sorted((c for c in checks if c["status"] == NOT_APPLICABLE), key=lambda c: c["id"])
    out.append(f"<details><summary>Passed ({len(passed)}), not applicable ({len(na)})</summary>")
    out.append("")
    out.append("Passed: " + ", ".join(f"`{i}`" for i in passed))
    out.append("")
    out.append("Not applicable: " + ", ".join(f"`{c['id']}` ({_md(c['reason'])})" for c in na))
    out.append("</details>")
    return "\n".join(out)


def _job_head(job: dict) -> str:
    world = job["world_size"]
    ranks = f"{job['ranks_captured']} of {world} ranks" if world else f"{job['ranks_captured']} ranks"
    cycles = (
        f"{job['cycles']} profiling cycles, cycle {job['cycle'] + 1} shown"
        if job["cycles"] > 1
        else "1 profiling cycle"
    )
    labels = {r["host"]: r["label"] for r in job["ranks"]}
    stragglers = ", ".join(labels.get(h, h) for h in job["stragglers"]) or "none"
    return f"Job {job['run']}: {ranks}, {cycles}; straggler: {stragglers}"


def _ms_or_dash(v: float | None) -> str:
    return f"{v:.2f} ms" if v is not None else "—"


MEASURE_WORDS = {
    "step_ms": "step",
    "compute_ms": "compute",
    "collective_ms": "collectives",
    "exposed_collective_ms": "exposed collectives",
    "input_ms": "input",
}
NAMES_LISTED = 8  # a group of ranks without rank numbers names this many, then counts the rest


def rank_ranges(ranks: list[int]) -> str:
    """`0-2, 4-7` for [0, 1, 2, 4, 5, 6, 7]."""
    spans: list[list[int]] = []
    for r in sorted(ranks):
        if spans and r == spans[-1][1] + 1:
            spans[-1][1] = r
        else:
            spans.append([r, r])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in spans)


def _group_name(rows: list[dict]) -> str:
    if len(rows) == 1:
        return rows[0]["label"]
    if all(r["rank"] is not None for r in rows):
        return f"ranks {rank_ranges([r['rank'] for r in rows])}"
    names = [r["label"] for r in rows]
    more = f" and {len(names) - NAMES_LISTED} more" if len(names) > NAMES_LISTED else ""
    return ", ".join(names[:NAMES_LISTED]) + more


def _spread(rows: list[dict], key: str) -> str:
    """One value where the group agrees to the hundredth of a ms, else its median and range."""
    vals = sorted(r[key] for r in rows if r[key] is not None)
    if not vals:
        return "—"
    lo, hi = _ms_or_dash(vals[0]), _ms_or_dash(vals[-1])
    if lo == hi:
        return lo
    n = len(vals)
    med = vals[n // 2] if n % 2 else (vals[n // 2 - 1] + vals[n // 2]) / 2
    return f"{_ms_or_dash(med)} ({vals[0]:.2f}-{vals[-1]:.2f})"


def _ranks_line(rows: list[dict]) -> str:
    first = rows[0]
    notes = ["straggler"] if first["straggler"] else []
    if first.get("outliers"):
        notes.append("stands out in " + ", ".join(MEASURE_WORDS[k] for k in first["outliers"]))
    mark = "  " + "; ".join(notes) if notes else ""
    if not first["steps"]:
        return f"  {_group_name(rows)}: no complete step in this cycle{mark}"
    return (
        f"  {_group_name(rows)}: step {_spread(rows, 'step_ms')}, compute {_spread(rows, 'compute_ms')}, "
        f"collectives {_spread(rows, 'collective_ms')} ({_spread(rows, 'exposed_collective_ms')} exposed), "
        f"input {_spread(rows, 'input_ms')}{mark}"
    )


def rank_groups(ranks: list[dict]) -> list[list[dict]]:
    """The ranks that say the same thing, together: a straggler on its own, the others by the
    measures they stand out in (none for most) and whether the cycle has a step on them; in the
    order of each group's first rank."""
    groups: dict[tuple, list[dict]] = {}
    for i, r in enumerate(ranks):
        key = ("straggler", i) if r["straggler"] else ("rank", bool(r["steps"]), tuple(r.get("outliers") or ()))
        groups.setdefault(key, []).append(r)
    return list(groups.values())


def runs_summary(runs: list[dict]) -> list[str]:
    """Text lines of each job: its ranks, those that say the same thing on one line ("ranks 0-4, 6-7:
    ..."), a straggler on its own, and the job checks (pass through `terminal_safe`)."""
    lines = []
    for job in runs:
        lines.append(_job_head(job))
        lines.extend(_ranks_line(g) for g in rank_groups(job["ranks"]))
        for c in job["checks"]:
            if c["status"] != "pass":
                lines.append(f"  {c['status'].upper()} {c['id']}: {c['title']}. {c['summary']}")
    return lines


def overview_lines(rows: list[dict]) -> list[str]:
    """The overview table as text: one line per run and host, worst first. Names are never cut: two
    cycles of one worker (`vm_24996.1795480123...`) differ only at their end."""
    if not rows:
        return []
    runs = [name_safe(r["run"]) for r in rows]
    hosts = [name_safe(r["host"]) for r in rows]
    rw, hw = max(3, *map(len, runs)), max(4, *map(len, hosts))
    out = [f"{'status':9} {'run':{rw}} {'host':{hw}} {'step':>10} {'busy':>7} {'top saving':>11}  worst finding"]
    for r, run, host in zip(rows, runs, hosts):
        step = _ms_or_dash(r["step_ms"])
        saving = f"{r['top_saving_ms']:.2f} ms" if r["top_saving_ms"] else "—"
        out.append(
            f"{(r['status'] or '').upper():9} {run:{rw}} {host:{hw}} {step:>10} "
            f"{fmt_pct(r['device_busy_pct']):>7} {saving:>11}  {r['title'] or ''}"
        )
    return out


def overview_markdown(rows: list[dict], runs: list[dict]) -> str:
    out = ["### GPU Advisor: overview", "", "| Status | Run | Host | Step | GPU busy | Top saving | Worst finding |"]
    out.append("|---|---|---|---|---|---|---|")
    for r in rows:
        step = _ms_or_dash(r["step_ms"])
        saving = f"{r['top_saving_ms']:.2f} ms" if r["top_saving_ms"] else "—"
        out.append(
            f"| **{r['status'] or '—'}** | `{_md(r['run'])}` | `{_md(r['host'])}` | {step} | "
            f"{fmt_pct(r['device_busy_pct'])} | {saving} | {_md(r['title'] or '')} |"
        )
    for job in runs:
        out += [
            "",
            _md(_job_head(job)),
            "",
            "| Rank | Step | Compute | Collectives | Exposed | Input |",
            "|---|---|---|---|---|---|",
        ]
        for r in job["ranks"]:
            out.append(
                f"| `{_md(r['label'])}`{' **straggler**' if r['straggler'] else ''} | {_ms_or_dash(r['step_ms'])} | "
                f"{_ms_or_dash(r['compute_ms'])} | {_ms_or_dash(r['collective_ms'])} | "
                f"{_ms_or_dash(r['exposed_collective_ms'])} | {_ms_or_dash(r['input_ms'])} |"
            )
        out += [
            f"- **{c['status']}** `{c['id']}`: {_md(c['title'])}. {_md(c['summary'])}"
            for c in job["checks"]
            if c["status"] != "pass"
        ]
    return "\n".join(out)


def catalogue_text(cat: list[dict]) -> str:
    lines, section = [], None
    for c in cat:
        if c["section"] != section:
            section = c["section"]
            lines += ["", section]
        th = ", ".join(f"{t['name']}={_num(t['default'], t['unit'])}" for t in c["thresholds"])
        lines.append(f"  {c['id']:30} {c['title']}" + (f"  [{th}]" if th else ""))
    return "\n".join(lines).lstrip("\n")


_FIELD = re.compile(r"\{(\w+)[^}]*\}")


def problem_text(template: str) -> str:
    """A problem title template for people: `{input_pct:.1f}%` becomes `N%`, `{device_id}` `N`."""
    return _FIELD.sub("N", template)


def catalogue_markdown(cat: list[dict], source_root: str = "") -> str:
    """The catalogue as markdown (docs/checks.md's list of checks is this, generated): a table of the
    checks with both their titles, thresholds and source, then how each one measures. `source_root`
    is the way from the page to the repository's root (docs/checks.md links with "../")."""
    lines = ["| Check | Passes when | Fires as | Thresholds (defaults) |", "|---|---|---|---|"]
    section = None
    for c in cat:
        if c["section"] != section:
            section = c["section"]
            lines.append(f"| **{_md(section)}** | | | |")
        th = ", ".join(f"`{t['name']}` {_num(t['default'], t['unit'])}" for t in c["thresholds"])
        lines.append(
            f"| [`{c['id']}`]({c['link']}) | {_md(c['title'])} | {_md(problem_text(c['problem']))} | {th or '—'} |"
        )
    lines += ["", "How each check measures (its code is in the file named after its prefix):", ""]
    for c in cat:
        lines.append(f"- **`{c['id']}`** ([{c['source']}]({source_root}{c['source']})): {_md(c['measures'])}")
    return "\n".join(lines)


VERDICT_WORDS = {"fixed": "FIXED", "new": "NEW", "worse": "WORSE", "better": "BETTER", "unchanged": "same"}


def _val(v, unit: str | None) -> str:
    if v is None:
        return "—"
    return _num(v, unit or "") if isinstance(v, (int, float)) else str(v)


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
    return f"{_signed(s['delta_ms'])}{pct} per step{_interval(s['interval_ms'])}: {STEP_WORDS[d['summary']['step']]}"


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
    b, n, s = d["base"], d["new"], d["steps"]
    out = [f"### GPU Advisor comparison: `{_md(b['run'])}` → `{_md(n['run'])}`", ""]
    if paths:
        out += [f"Before: `{_md(paths[0])}` · after: `{_md(paths[1])}`", ""]
    if s["base"]["mean_ms"] is not None and s["new"]["mean_ms"] is not None:
        out += [f"Step time **{s['base']['mean_ms']:.2f} ms → {s['new']['mean_ms']:.2f} ms**: {step_change(d)}.", ""]
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
            f"| `{c['id']}` | **{c['verdict']}** | {c['base_status'] or '—'} {_md(_val(c['base_value'], c['unit']))} | "
            f"{c['new_status'] or '—'} {_md(_val(c['new_value'], c['unit']))} | "
            f"{_val(c['base_saving_ms'], 'ms')} → {_val(c['new_saving_ms'], 'ms')} |"
        )
    for c in d["checks"]:
        if c["within_noise"]:
            out.append(
                f"| `{c['id']}` | unchanged (within noise) | {c['base_status']} | {c['new_status']} | "
                f"{_md(noise_line(c))} |"
            )
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
        f"### GPU Advisor comparison of jobs: `{_md(d['base']['run'])}` → `{_md(d['new']['run'])}`",
        "",
        f"Before: `{_md(paths[0])}` ({_md(_job_side(d['base']))}) · after: `{_md(paths[1])}` ({_md(_job_side(d['new']))})",
        "",
        f"Median rank {_md(d['median_rank'])}: {step_change(d['median'])}.",
        "",
        *[f"- {_md(x)}" for x in _job_summary(d)],
        "",
        "| Rank | Before | After | Delta | Step |",
        "|---|---|---|---|---|",
    ]
    for r in d["ranks"][:JOB_DIFF_RANK_LINES]:
        out.append(
            f"| {_md(r['label'])} | {_val(r['base_step_ms'], 'ms')} | {_val(r['new_step_ms'], 'ms')} | "
            f"{_signed(r['delta_ms'])} | {STEP_WORDS[r['step']]} |"
        )
    if len(d["ranks"]) > JOB_DIFF_RANK_LINES:
        out.append(f"\n{len(d['ranks']) - JOB_DIFF_RANK_LINES} more ranks in `--format json`.")
    return "\n".join(out + ["", diff_markdown(d["median"])])
