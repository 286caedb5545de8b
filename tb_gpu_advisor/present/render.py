"""Reports as text for a terminal and markdown for a pull-request comment. Presentation only: every
number comes from the report JSON."""

from __future__ import annotations

import json
import re
import shlex
import textwrap

from tb_gpu_advisor.checks import collective_time_checks
from tb_gpu_advisor.checks.findings import CRITICAL, INFO, NOT_APPLICABLE, PASS, WARNING
from tb_gpu_advisor.common.units import fmt_pct
from tb_gpu_advisor.model.profile import PYTORCH
from tb_gpu_advisor.model.steps import CATEGORIES

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


def num_text(v: float | None, unit: str = "") -> str:
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


def alternative_text(alt: dict) -> str:
    """Another fix a finding offers, with its own saving: "tf32 alone: saves 99.28 ms/step (step 159.9
    → 60.6 ms; the GPU sets it now and after the fix)"; several joined by + are "together"."""
    how = "together" if "+" in alt["change"] else "alone"
    return f"{alt['change']} {how}: saves {alt['saving_ms']:.2f} ms/step ({alt['sentence']})"


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


def device_line(d: dict) -> str:
    """ "GPU 0: NVIDIA A100-SXM4-40GB  cc 8.0, 108 SMs, 40.0 GiB"; a trace without device properties
    (PyTorch's `deviceProperties` absent) says so rather than "GPU 0: GPU 0  cc ?, ? SMs, ? GiB"."""
    known = d.get("compute_capability") or d.get("architecture") or d.get("sm_count") or d.get("memory_gib")
    if not known and d["name"] in ("", f"GPU {d['id']}"):
        return f"GPU {d['id']}: the trace gives no device properties (model, SMs, memory)"
    return f"GPU {d['id']}: {d['name']}  {capability(d)}, {d['sm_count'] or '?'} SMs, {d['memory_gib'] or '?'} GiB"


def header_lines(r: dict) -> list[str]:
    lines = [f"GPU Advisor · run {name_safe(r['run'])} · host {name_safe(r['host'])}"]
    for d in r.get("devices") or []:
        lines.append(f"  {device_line(d)}")
    if not r.get("devices"):
        lines.append("  no GPU in this profile")
    s = r.get("steps")
    if s:
        marker = f' "{s["marker"]}"' if s.get("marker") else ""
        per_gpu = s.get("per_gpu") or []
        if len(per_gpu) > 1 and len({g["mean_ms"] for g in per_gpu}) > 1:
            # GPUs measured each in its own steps (a partial capture): each named, as the panel does
            each = "; ".join(
                f"GPU {g['device_id']} {g['count']} step{'s' if g['count'] != 1 else ''}, mean {g['mean_ms']:.2f} ms"
                for g in per_gpu
            )
            lines.append(f"  steps per GPU ({s['source']}{marker}): {each}")
        elif s["count"] == 1:  # no spread to give
            lines.append(f"  1 step ({s['source']}{marker}): {s['mean_ms']:.2f} ms")
        else:
            lines.append(
                f"  {s['count']} steps ({s['source']}{marker}): mean {s['mean_ms']:.2f} ms, "
                f"stdev {s['stdev_ms']:.2f}, min {s['min_ms']:.2f}, max {s['max_ms']:.2f}"
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
            lines.append(f"  GPU {g['device_id']}: {kernel_figures(g, r.get('framework'))}")
    b = r.get("breakdown_ms")
    if b:
        lines.append("  per step (ms): " + " · ".join(f"{SHORT[c]} {b[c]:.2f}" for c in CATEGORIES))
    lines.extend(step_model_lines(r.get("step_model")))
    return lines


BOUND = {"GPU": "the GPU sets the step", "host": "the host sets the step", "input": "waiting for input sets the step"}


def step_model_lines(sm: dict | None) -> list[str]:
    """The step re-timed by its graph: without the profiler, what sets it, every fix together."""
    if not sm:
        return []
    out = [
        f"  without the profiler: {sm['step_ms']:.2f} ms a step ({sm['captured_step_ms']:.2f} captured, the "
        f"profiler {fmt_pct(sm['profiler_pct'])} of it); {BOUND.get(sm['bound'], sm['bound'])}"
    ]
    prof, span = sm.get("profiler"), sm.get("step_range_ms")
    if prof and span and sm["profiler_pct"] >= 1:  # where the profiler's cost moves the step: on what basis
        out.append(f"    {span[0]:.2f}–{span[1]:.2f} ms: {prof['sentence']}")
    a = sm.get("all")
    if a and len(sm["findings"]) > 1:
        out.append(
            f"  every fix below together: {a['step_ms']:.2f} → {a['new_step_ms']:.2f} ms a step "
            f"({a['saving_ms']:.2f} ms, {fmt_pct(100 * a['saving_ms'] / a['step_ms'] if a['step_ms'] else 0)}): "
            "simulated at once, so the savings do not add up"
        )
    return out


OUTSIDE_THE_CAPTURE = "outside the capture were dropped"  # the reader's own capture error (see extent.py)
NOTICE_LABEL = {"profiler": "the profiler said", "capture": "capture", "reader": "note"}


def notices(r: dict) -> list[tuple[str, str]]:
    """(who, message): what the profiler said while capturing (XSpace errors and warnings), and
    what the reader skipped or clamped."""
    out = [("capture" if OUTSIDE_THE_CAPTURE in m else "profiler", m) for m in r.get("capture_errors") or []]
    return out + [("reader", m) for m in r.get("warnings") or []]


def straggler_waits(runs: list[dict]) -> dict[tuple[str, str], tuple[str, float]]:
    """(run, host) -> (the straggler's name, this rank's wait for it per step in ms), from the jobs'
    JSON, for each rank that waits."""
    out = {}
    for job in runs:
        who = ", ".join(r["label"] for r in job["ranks"] if r["straggler"])
        for r in job["ranks"]:
            if r.get("straggler_wait_ms"):
                out[(r["run"], r["host"])] = (who, r["straggler_wait_ms"])
    return out


def _job_wait(waiting: tuple[str, float]) -> str:
    return (
        f"In the job: {_ms_or_dash(waiting[1])} of it per step is waiting for the straggler {waiting[0]} "
        "(job.straggler): fix that first."
    )


def text(r: dict, width: int = 100, waiting: tuple[str, float] | None = None) -> str:
    """A report as text; `waiting`: the straggler this rank waits for and how long per step, which the
    collective-time findings then say."""
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
            th = ", ".join(f"{t['name']} {num_text(t['value'], t['unit'])}" for t in c["thresholds"])
            if key:
                lines.append(f"    measured {key['label']}: {num_text(key['value'], key['unit'])} (thresholds: {th})")
        if _saving(c):
            lines.append(f"    estimated saving: {_saving(c)}")
        if c.get("whatif"):
            lines.extend(wrap.wrap(f"what-if: {c['whatif']['sentence']} ({c['whatif']['basis']})"))
        for alt in c.get("alternatives", []):
            lines.extend(wrap.wrap(f"or {alternative_text(alt)}"))
        if waiting and c["id"] in collective_time_checks():
            lines.extend(wrap.wrap(_job_wait(waiting)))
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


# What markdown gives a meaning to anywhere in a line (emphasis, code, links and images, tables,
# strikethrough): escaped with a backslash. HTML's characters become entities; what GitHub turns into
# a link without any markup (an @mention, a bare URL) is broken by a zero-width space.
_MD_SPECIAL = re.compile(r"[\\`*_\[\]|~]")
_MD_LINE_START = re.compile(r"^(\s*)(?:[-+#]|\d{1,9}[.)])(?=\s|$)")  # a list item or a heading
_MD_UNLINKED = (("@", "@&#8203;"), ("://", ":&#8203;//"), ("www.", "www&#8203;."))
_MD_REFERENCE = re.compile(r"#(?=\d)")  # GitHub's link to an issue


_CODE_SPAN = re.compile(r"(`+)(?!`)(.+?)(?<!`)\1(?!`)")


def md(s: object) -> str:
    """Text from a profile or a report (a kernel named `![x](http://…)`, an op named `@everyone`) for
    markdown, in a paragraph or a table cell: it renders as the text itself, never as an image, a
    link, a mention or markup. A code span in it stays one (its content is never markup)."""
    t = re.sub(r"[\r\n]+", " ", str(s))
    out, at = [], 0
    for m in _CODE_SPAN.finditer(t):
        out += [_md_text(t[at : m.start()]), m.group().replace("|", "\\|")]
        at = m.end()
    out.append(_md_text(t[at:]))
    return _MD_LINE_START.sub(lambda m: m.group()[:-1] + "\\" + m.group()[-1], "".join(out))


def _md_text(t: str) -> str:
    t = _MD_SPECIAL.sub(lambda m: "\\" + m.group(), t.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;"))
    t = _MD_REFERENCE.sub("#&#8203;", t)
    for part, broken in _MD_UNLINKED:
        t = t.replace(part, broken)
    return t


def md_code(s: object, cell: bool = True) -> str:
    """A name as one markdown code span (nothing in it is markup, whatever backticks it holds); in a
    table `cell`, its `|` escaped as tables need even in code."""
    t = re.sub(r"[\r\n]+", " ", str(s))
    return code(t.replace("|", "\\|") if cell else t)


def _cell(s: str) -> str:
    """The advisor's own text (the catalogue's, markdown meant) in a table cell."""
    return s.replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;").replace("\n", " ")


def kernel_figures(g: dict, framework: str | None) -> str:
    """One GPU's kernel figures, as PyTorch's TensorBoard plugin computes them (analysis.kernel_efficiency),
    and the collectives' overlap with compute (as Holistic Trace Analysis computes it). Only a PyTorch
    user knows that plugin, so only a PyTorch run's line names it."""
    source = " (the PyTorch plugin's GPU utilization)" if framework == PYTORCH else ""
    return (
        f"kernels running {fmt_pct(g.get('gpu_utilization_pct'))}{source} · "
        f"est. SM efficiency {fmt_pct(g.get('sm_efficiency_pct'))} · "
        f"est. achieved occupancy {fmt_pct(g.get('achieved_occupancy_pct'))}"
        + (
            f" · collectives overlapped by compute {fmt_pct(g['comm_overlap_pct'])}"
            if g.get("comm_overlap_pct") is not None
            else ""
        )
    )


def mcp_call(tool: str, **arguments: object) -> str:
    """The call of the MCP server's tool (`tb-gpu-advisor mcp LOGDIR`) that answers the same, as the
    agent skill writes its examples: `analyze {"run": ..., "host": ...}`; None arguments left out."""
    return f"{tool} {json.dumps({k: v for k, v in arguments.items() if v is not None})}"


def code(text: str) -> str:
    """`text` as one markdown code span, whatever backticks it holds."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    pad = " " if longest else ""
    return f"{'`' * (longest + 1)}{pad}{text}{pad}{'`' * (longest + 1)}"


def agent_line(logdir: str, call: str) -> str:
    """The line a markdown answer ends with: the MCP call that opens the same in a coding agent."""
    return f"Agent: {code('tb-gpu-advisor mcp ' + shlex.quote(logdir))}, then {code(call)}"


def markdown(r: dict, waiting: tuple[str, float] | None = None, logdir: str | None = None) -> str:
    """A report as markdown; `waiting` as in `text`; with `logdir` (the command's, as typed), it ends
    with the MCP call that gives an agent the same report."""
    out = [f"### GPU Advisor: {md_code(r['run'], cell=False)} on {md_code(r['host'], cell=False)}", ""]
    s, h = r.get("steps"), r.get("headline")
    if s and h:
        out.append(
            f"{s['count']} step{'s' if s['count'] != 1 else ''}, mean **{s['mean_ms']:.2f} ms** · device busy **{fmt_pct(h['device_busy_pct'])}** · "
            f"op time on device **{fmt_pct(h['device_op_time_pct'])}** · 16-bit compute **{fmt_pct(h['fp16_compute_pct'])}**"
        )
        out.append("")
        for g in h.get("per_gpu", []):
            out.append(
                f"GPU {g['device_id']}: busy {fmt_pct(g['device_busy_pct'])} · {kernel_figures(g, r.get('framework'))}"
            )
            out.append("")
    for line in step_model_lines(r.get("step_model")):
        out.append(md(line.strip()))
        out.append("")
    for e in r.get("errors", []):
        out.append(f"> **Error:** {md(e)}")
        out.append("")
    for who, m in notices(r):
        out.append(f"> **{NOTICE_LABEL[who].capitalize()}:** {md(m)}")
        out.append("")
    checks = r.get("checks", [])
    problems = [c for c in checks if c["status"] in (CRITICAL, WARNING, INFO)]
    if problems:
        out += ["| Status | Check | Measured | Est. saving per step |", "|---|---|---|---|"]
        for c in problems:
            measured = c["summary"] + (
                f" {_job_wait(waiting)}" if waiting and c["id"] in collective_time_checks() else ""
            )
            saving = md(_saving(c)) or "—"
            if c.get("whatif"):
                saving += f"<br>{md(c['whatif']['sentence'])}"
            for alt in c.get("alternatives", []):
                saving += f"<br>or {md(alternative_text(alt))}"
            out.append(f"| **{c['status']}** | `{c['id']}` {md(c['title'])} | {md(measured)} | {saving} |")
        out.append("")
        out.append("<details><summary>What to change</summary>")
        out.append("")
        for c in problems:
            out.append(f"**`{c['id']}`** — {md(_first_paragraph(c['recommendation']))} ([guide]({c['link']}))")
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
    out.append("Not applicable: " + ", ".join(f"`{c['id']}` ({md(c['reason'])})" for c in na))
    out.append("</details>")
    if logdir is not None:
        out += ["", agent_line(logdir, mcp_call("analyze", run=r["run"], host=r["host"]))]
    return "\n".join(out)


def _job_head(job: dict) -> str:
    world = job["world_size"]
    n = job["ranks_captured"]
    ranks = f"{n} of {world} ranks" if world else f"{n} rank{'s' if n != 1 else ''}"
    cycles = (
        f"{job['cycles']} profiling cycles, cycle {job['cycle'] + 1} shown"
        if job["cycles"] > 1
        else "1 profiling cycle"
    )
    labels = {r["host"]: r["label"] for r in job["ranks"]}
    stragglers = ", ".join(labels.get(h, h) for h in job["stragglers"]) or "none"
    return f"Job {job['run']}: {ranks}, {cycles}" + (f"; straggler: {stragglers}" if n > 1 else "")


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
    waits = [r.get("straggler_wait_ms") for r in rows]
    wait = f", waiting for the straggler {_spread(rows, 'straggler_wait_ms')}" if any(waits) else ""
    return (
        f"  {_group_name(rows)}: step {_spread(rows, 'step_ms')}, compute {_spread(rows, 'compute_ms')}, "
        f"collectives {_spread(rows, 'collective_ms')}, exposed {_spread(rows, 'exposed_collective_ms')}{wait}, "
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


def overview_host(row: dict) -> str:
    """A row's host, or on a job's own row its ranks: "all 8 ranks"."""
    return f"all {row.get('ranks', 0)} ranks" if row.get("job") else name_safe(row["host"])


def overview_lines(rows: list[dict]) -> list[str]:
    """The overview table as text: one line per run and host, worst first. Names are never cut: two
    cycles of one worker (`vm_24996.1795480123...`) differ only at their end."""
    if not rows:
        return []
    runs = [name_safe(r["run"]) for r in rows]
    hosts = [overview_host(r) for r in rows]
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


def overview_markdown(rows: list[dict], runs: list[dict], logdir: str | None = None) -> str:
    out = ["### GPU Advisor: overview", "", "| Status | Run | Host | Step | GPU busy | Top saving | Worst finding |"]
    out.append("|---|---|---|---|---|---|---|")
    for r in rows:
        step = _ms_or_dash(r["step_ms"])
        saving = f"{r['top_saving_ms']:.2f} ms" if r["top_saving_ms"] else "—"
        host = md(overview_host(r)) if r.get("job") else md_code(r["host"])
        out.append(
            f"| **{r['status'] or '—'}** | {md_code(r['run'])} | {host} | {step} | "
            f"{fmt_pct(r['device_busy_pct'])} | {saving} | {md(r['title'] or '')} |"
        )
    if logdir is not None:
        out += ["", agent_line(logdir, mcp_call("list_runs"))]
    for job in runs:
        out += [
            "",
            md(_job_head(job)),
            "",
            "| Rank | Step | Compute | Collectives | Exposed | Input |",
            "|---|---|---|---|---|---|",
        ]
        for r in job["ranks"]:
            out.append(
                f"| {md_code(r['label'])}{' **straggler**' if r['straggler'] else ''} | {_ms_or_dash(r['step_ms'])} | "
                f"{_ms_or_dash(r['compute_ms'])} | {_ms_or_dash(r['collective_ms'])} | "
                f"{_ms_or_dash(r['exposed_collective_ms'])} | {_ms_or_dash(r['input_ms'])} |"
            )
        out += [
            f"- **{c['status']}** `{c['id']}`: {md(c['title'])}. {md(c['summary'])}"
            for c in job["checks"]
            if c["status"] != "pass"
        ]
        if logdir is not None:
            out += ["", agent_line(logdir, mcp_call("job", run=job["run"]))]
    return "\n".join(out)


def catalogue_text(cat: list[dict]) -> str:
    lines, section = [], None
    for c in cat:
        if c["section"] != section:
            section = c["section"]
            lines += ["", section]
        th = ", ".join(f"{t['name']}={num_text(t['default'], t['unit'])}" for t in c["thresholds"])
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
            lines.append(f"| **{_cell(section)}** | | | |")
        th = ", ".join(f"`{t['name']}` {num_text(t['default'], t['unit'])}" for t in c["thresholds"])
        lines.append(
            f"| [`{c['id']}`]({c['link']}) | {_cell(c['title'])} | {_cell(problem_text(c['problem']))} | {th or '—'} |"
        )
    lines += ["", "How each check measures (its code is in the file named after its prefix):", ""]
    for c in cat:
        lines.append(f"- **`{c['id']}`** ([{c['source']}]({source_root}{c['source']})): {_cell(c['measures'])}")
    return "\n".join(lines)
