"""Two analyses side by side, in the guide's terms: the base run (before a change) and the new one.

The guide's method is experimental: change one thing, profile again, compare. This says what got
better, what got worse and by how much: the mean step time (per step, so captures of different
lengths compare) and its spread, each category of the step breakdown, the headline numbers, each
check's status, its own time and saving, and the kernels and ops whose time per step changed most.
The document is typed in report/diff_doc.py; every format renders it.

**A check** is judged by its own time per step (`@check(time=...)`, checks/base.py: a metric of its
finding, or the device time of the rows its finding names), not by its share of the step, which
grows when the rest of the step shrinks, nor by its saving, a prediction that grows when another
bottleneck goes. Its time grew (or fell) when its change is beyond the noise (below). A wait (the GPU
waiting for the host, the host for input or the GPU) grows by as much as the work beside it shrinks,
or as the profiler slows the host, with its cause unchanged: its growth counts only when the step is
slower, and only as far as the step grew. The verdict:

- fixed: a problem (critical or warning) in the base, not in the new run, its time cut;
- better: a problem in both, its time cut;
- new: a problem in the new run only, its time grown; worse: in both (or more severe), its time grown;
- exposed: a problem in the new run (or more severe) whose time did not grow: another fix exposed it
  (its time's or its saving's share of a shorter step grew). Shown, never a regression;
- unchanged: everything else; a status that moved while the time did not move beyond the noise (and,
  up, while nothing of it grew against the step either: a threshold crossed by a hair) is listed
  "within noise".

A check without a declared time (xla.off, the capture notes, ...) is judged by its status and its first
metric: a status change whose metric kept its value is exposed (up) or within noise (down).

The step and the noise: report/step.py and report/noise.py.

**Predicted against realised** (`realised`, report/realised.py): where the new run no longer has findings
of the base whose fixes the base's what-if simulated, the saving the base predicted for them (several
simulated together) beside the change of the two steps without the profiler, inside the stated range or
not, or "cannot tell" where the model's measured error allows either sign of the step's change.

**The gate** (`regressions(diff, pct)`, `tb-gpu-advisor diff --fail-on PCT`) judges time: the step when
its verdict is slower with the whole interval on its basis above +PCT% of the base's step; a check
whose own time grew (new or worse) by more than PCT% of the base's step, the whole interval's worth
where it has one, unless the step is faster. A check that fires only because its share grew (exposed)
never fails it.
"""

from __future__ import annotations

from tb_gpu_advisor.checks import REGISTRY
from tb_gpu_advisor.checks.base import OwnTime
from tb_gpu_advisor.checks.findings import CRITICAL, PASS, WARNING
from tb_gpu_advisor.measures import CATEGORIES, Measures
from tb_gpu_advisor.report.device_time import movers, named_time, per_step_ms
from tb_gpu_advisor.report.diff_doc import (
    BreakdownRow,
    CheckChange,
    CheckTime,
    CheckVerdict,
    Diff,
    HeadlineRow,
    Realised,
    Steps,
    StepStats,
    StepVerdict,
    Summary,
)
from tb_gpu_advisor.report.noise import (
    CONFIDENCE,
    MIN_CHANGE_PCT,
    MIN_SHARE_CHANGE_PTS,
    MIN_TIME_CHANGE_PCT,
    Noise,
    bootstrap_interval,
    changed,
    noise_checks,
    step_samples,
)
from tb_gpu_advisor.report.realised import realised as predicted_against_realised
from tb_gpu_advisor.report.step import host_and_device, judge_step, step_base_ms, step_verdict

__all__ = ["Noise", "check_verdict", "compare", "regressions", "status_verdict", "step_samples", "step_verdict"]

PROBLEM_RANK = {CRITICAL: 2, WARNING: 1}
HEADLINE = (
    ("device_busy_pct", "GPU busy", "%"),
    ("device_op_time_pct", "op time on the GPU", "%"),
    ("fp16_compute_pct", "16-bit compute", "%"),
    ("compute_ms_per_step", "compute per step", "ms"),
)
VERDICT_ORDER: dict[CheckVerdict, int] = {"new": 0, "worse": 1, "exposed": 2, "fixed": 3, "better": 4, "unchanged": 5}


def _delta(base: float | None, new: float | None) -> tuple[float | None, float | None]:
    if base is None or new is None:
        return None, None
    d = new - base
    return d, (100.0 * d / base if base else None)


def own_times() -> dict[str, OwnTime]:
    """Each check's own time (`@check(time=...)`), by id."""
    return {c.id: c.time for c in REGISTRY if c.time is not None}


# -- the checks --------------------------------------------------------------------------------------


def _metric_ms(f: dict | None, name: str) -> float | None:
    """A finding's metric (ms per step); 0 for a check that passes without it (nothing to measure)."""
    if f is None:
        return None
    for m in f["metrics"]:
        if m["name"] == name:
            v = m["value"]
            return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None
    return 0.0 if f["status"] == PASS else None


def _rows(b: dict | None, n: dict | None) -> tuple[str, set[str]] | None:
    """The table and the row names the findings of both runs name (the kernels or ops a check is about)."""
    kind, names = None, set()
    for f in (b, n):
        link = (f or {}).get("table")
        if link and link["table"] in ("kernels", "ops") and link.get("name"):
            kind = link["table"]
            names |= set(link["name"])
    return (kind, names) if kind else None


def _first_metric_kept(base: dict | None, new: dict | None) -> bool:
    """Whether a check judged by its status kept its measure (its first metric, the same in both): the
    same value, or moved less than MIN_CHANGE_PCT of the base's value (and less than MIN_SHARE_CHANGE_PTS
    for a share)."""
    if not base or not new or base.get("name") != new.get("name"):
        return False
    b, n = base.get("value"), new.get("value")
    if b == n:
        return True
    if not isinstance(b, (int, float)) or not isinstance(n, (int, float)):
        return False
    d = abs(n - b)
    if base.get("unit") == "%" and d >= MIN_SHARE_CHANGE_PTS:
        return False
    return d < MIN_CHANGE_PCT / 100 * abs(b)


def _measure(metric: str, label: str) -> str:
    """What a check's time is, from its metric's label without "per step" (the time is per step), or its
    name where the label leans on the check's title ("per step")."""
    what = label.replace("per step", "").replace("  ", " ").strip(" ,")
    if not what or what.startswith("per "):
        name = metric.removesuffix("_ms_per_step").removesuffix("_ms").replace("_", " ")
        what = f"{name}{', ' + what if what else ''}"
    return what


class _Runs:
    """What judging the checks of two runs needs: their measures, their steps' noise and the step's
    verdict."""

    def __init__(self, ba: Measures, na: Measures, noise: Noise, steps: Steps, step: StepVerdict) -> None:
        self.ba, self.na, self.noise, self.step = ba, na, noise, step
        self.base_step_ms = steps["base"]["mean_ms"] or 0.0
        self.new_step_ms = steps["new"]["mean_ms"] or 0.0

    def time(self, cid: str, own: OwnTime, b: dict | None, n: dict | None) -> CheckTime | None:
        """A check's own time per step in both runs, judged against the noise; None where a run lacks it."""
        share = None
        interval = None
        base_ms: float | None
        new_ms: float | None
        if own.metric is None:
            rows = _rows(b, n)
            if rows is None:
                return None
            kind, names = rows
            kind = "op" if kind == "ops" else "kernel"
            (bm, bs), (nm, ns) = named_time(self.ba, kind, names), named_time(self.na, kind, names)
            base_ms, new_ms = bm, nm
            if bs is not None and ns is not None:
                interval = bootstrap_interval(bs, ns)
            what = f"device time of {', '.join(sorted(names)[:3])}" + (" …" if len(names) > 3 else "")
        else:
            measured = self.noise.share(cid) if cid in dict(noise_checks()) and b and n else None
            if measured is not None:
                base_ms, new_ms, interval, share = measured
            else:
                base_ms, new_ms = _metric_ms(b, own.metric), _metric_ms(n, own.metric)
            noisy = dict(noise_checks())
            label = next((m["label"] for f in (n, b) if f for m in f["metrics"] if m["name"] == own.metric), "")
            what = noisy[cid].what if cid in noisy else _measure(own.metric, label)
        if base_ms is None or new_ms is None:
            return None
        d = new_ms - base_ms
        least = max(MIN_CHANGE_PCT / 100 * abs(base_ms), MIN_TIME_CHANGE_PCT / 100 * self.base_step_ms)
        beyond = changed(interval, d, least) if interval else abs(d) >= least
        grown = None
        if beyond and d > 0:
            grown = interval[0] if interval else d
            if own.wait:  # a wait counts only as far as the step grew
                s = self.step
                if s["verdict"] != "slower" or s["delta_ms"] is None:
                    grown = None
                else:
                    grown = min(grown, s["interval_ms"][0] if s["interval_ms"] else s["delta_ms"])
        return {
            "measure": what,
            "wait": own.wait,
            "base_ms": base_ms,
            "new_ms": new_ms,
            "delta_ms": d,
            "interval_ms": interval,
            "grown_ms": grown,
            "cut": beyond and d < 0,
            "share": share,
        }


def check_verdict(
    b: dict | None, n: dict | None, grown: bool, cut: bool, timed: bool = True
) -> tuple[CheckVerdict, bool]:
    """A check's verdict from its statuses and whether its time grew or fell beyond the noise (the module's
    docstring), and whether it is listed "within noise". Not `timed`: `grown` and `cut` say whether its
    measure moved, and a problem of the same status in both is unchanged."""
    rb = PROBLEM_RANK.get(b["status"], 0) if b else 0
    rn = PROBLEM_RANK.get(n["status"], 0) if n else 0
    if rn > rb:
        return (("new" if rb == 0 else "worse") if grown else "exposed"), False
    if rn < rb:
        if cut:
            return ("fixed" if rn == 0 else "better"), False
        return "unchanged", not grown
    if not timed:
        return "unchanged", False
    if rb and grown:
        return "worse", False
    if rb and cut:
        return "better", False
    return "unchanged", False


def status_verdict(base: dict | None, new: dict | None) -> CheckVerdict:
    """A check judged by its status alone (a job's checks): fixed, new, worse, better or unchanged."""
    b = PROBLEM_RANK.get(base["status"], 0) if base else 0
    n = PROBLEM_RANK.get(new["status"], 0) if new else 0
    if b and not n:
        return "fixed"
    if n and not b:
        return "new"
    if b and n and n != b:
        return "worse" if n > b else "better"
    return "unchanged"


def _check_change(runs: _Runs, cid: str, b: dict | None, n: dict | None) -> CheckChange:
    key_b = (b or {}).get("metrics") or []
    key_n = (n or {}).get("metrics") or []
    m_b, m_n = (key_b[0] if key_b else None), (key_n[0] if key_n else None)
    own = own_times().get(cid)
    t = runs.time(cid, own, b, n) if own is not None and (b or n) else None
    if t is not None:
        v, within = check_verdict(b, n, t["grown_ms"] is not None, t["cut"])
    else:  # judged by its status: a status change with its measure kept is no change of the problem
        moved = not _first_metric_kept(m_b, m_n)
        v, within = check_verdict(b, n, moved, moved, timed=False)
    if v == "exposed" and not _share_grew(runs, b, n, t):
        v, within = "unchanged", True  # nothing of it grew, not even against the step: a threshold crossed by a hair
    return {
        "id": cid,
        "title": (n or b or {}).get("check_title") or (n or b or {}).get("title", ""),
        "base_status": b["status"] if b else None,
        "new_status": n["status"] if n else None,
        "base_title": b["title"] if b else None,
        "new_title": n["title"] if n else None,
        "label": (m_n or m_b or {}).get("label"),
        "unit": (m_n or m_b or {}).get("unit"),
        "base_value": m_b["value"] if m_b and m_b["name"] == (m_n or m_b)["name"] else None,
        "new_value": m_n["value"] if m_n else None,
        "base_saving_ms": b.get("saving_ms") if b else None,
        "new_saving_ms": n.get("saving_ms") if n else None,
        "verdict": v,
        "within_noise": within,
        "time": t,
    }


def _grew(base: float, new: float) -> bool:
    """A share of the step (%) that grew by MIN_SHARE_CHANGE_PTS and MIN_CHANGE_PCT of its own or more."""
    return new - base >= max(MIN_SHARE_CHANGE_PTS, MIN_CHANGE_PCT / 100 * base)


def _share_grew(runs: _Runs, b: dict | None, n: dict | None, t: CheckTime | None) -> bool:
    """Whether a check that fires more severely while its time did not grow has grown against the step: its
    time's share of the step, or its saving's (what makes a problem critical, `checks.findings.by_cost`).
    Exposed when so (another change shortened the step); a threshold crossed by a hair when not."""
    if t is not None and t["share"] is not None:
        if t["share"]["significant"] and t["share"]["delta_pts"] > 0:
            return True
    elif (
        t is not None
        and t["base_ms"] is not None
        and t["new_ms"] is not None
        and runs.base_step_ms
        and runs.new_step_ms
    ):
        if _grew(100 * t["base_ms"] / runs.base_step_ms, 100 * t["new_ms"] / runs.new_step_ms):
            return True
    saving_b = (b or {}).get("saving_pct") or 0.0
    saving_n = (n or {}).get("saving_pct") or 0.0
    return _grew(saving_b, saving_n)


def _time_moved(c: CheckChange) -> float:
    t = c["time"]
    return abs(t["delta_ms"] or 0.0) if t else abs((c["new_saving_ms"] or 0) - (c["base_saving_ms"] or 0))


# -- the comparison ----------------------------------------------------------------------------------


def compare(
    base: tuple[Measures, dict], new: tuple[Measures, dict], all_checks: bool = False, realised: bool = True
) -> Diff:
    """The comparison of two analysed host files ((measures, report) each, as the engine gives them);
    `all_checks`: the unchanged checks listed too (else counted); `realised`: the base's prediction for
    the findings gone beside what the step did (a simulation on the base where several are; null if not)."""
    (ba, br), (na, nr) = base, new
    bs, ns = br.get("steps") or {}, nr.get("steps") or {}
    d, dp = _delta(bs.get("mean_ms"), ns.get("mean_ms"))
    noise = Noise(step_samples(ba), step_samples(na))
    interval, significant = noise.step()

    def stats(s: dict) -> StepStats:
        return {
            "count": s.get("count"),
            "mean_ms": s.get("mean_ms"),
            "stdev_ms": s.get("stdev_ms"),
            "min_ms": s.get("min_ms"),
            "max_ms": s.get("max_ms"),
        }

    steps: Steps = {
        "base": stats(bs),
        "new": stats(ns),
        "delta_ms": d,
        "delta_pct": dp,
        "confidence": CONFIDENCE,
        "interval_ms": interval,
        "significant": significant,
    }
    apart = host_and_device(br.get("step_model"), nr.get("step_model"))
    step = judge_step(steps, apart)
    bb, nb = br.get("breakdown_ms") or {}, nr.get("breakdown_ms") or {}
    breakdown: list[BreakdownRow] = []
    for c in CATEGORIES:
        cd, cp = _delta(bb.get(c), nb.get(c))
        breakdown.append({"category": c, "base_ms": bb.get(c), "new_ms": nb.get(c), "delta_ms": cd, "delta_pct": cp})
    bh, nh = br.get("headline") or {}, nr.get("headline") or {}
    headline: list[HeadlineRow] = []
    for key, label, unit in HEADLINE:
        hd, _ = _delta(bh.get(key), nh.get(key))
        headline.append(
            {"key": key, "label": label, "unit": unit, "base": bh.get(key), "new": nh.get(key), "delta": hd}
        )
    runs = _Runs(ba, na, noise, steps, step)
    b_checks = {c["id"]: c for c in br.get("checks", [])}
    n_checks = {c["id"]: c for c in nr.get("checks", [])}
    checks = [
        _check_change(runs, cid, b_checks.get(cid), n_checks.get(cid))
        for cid in list(n_checks) + [c for c in b_checks if c not in n_checks]
    ]
    checks.sort(key=lambda c: (VERDICT_ORDER[c["verdict"]], not c["within_noise"], -_time_moved(c)))
    summary: Summary = {
        "step": step["verdict"],
        "basis": step["basis"],
        "captured_step": step["captured"],
        "fixed": [c["id"] for c in checks if c["verdict"] == "fixed"],
        "new": [c["id"] for c in checks if c["verdict"] == "new"],
        "worse": [c["id"] for c in checks if c["verdict"] == "worse"],
        "better": [c["id"] for c in checks if c["verdict"] == "better"],
        "exposed": [c["id"] for c in checks if c["verdict"] == "exposed"],
        "within_noise": [c["id"] for c in checks if c["within_noise"]],
        "unchanged": sum(1 for c in checks if c["verdict"] == "unchanged" and not c["within_noise"]),
    }
    listed = checks if all_checks else [c for c in checks if c["verdict"] != "unchanged" or c["within_noise"]]
    return {
        "schema": "tb-gpu-advisor/diff@2",
        "base": {"run": br["run"], "host": br["host"], "framework": br.get("framework")},
        "new": {"run": nr["run"], "host": nr["host"], "framework": nr.get("framework")},
        "summary": summary,
        "verdict": step,
        "steps": steps,
        "apart": apart,
        "realised": _realised(ba, br, nr) if realised else None,
        "breakdown_ms": breakdown,
        "headline": headline,
        "checks": listed,
        "all_checks": all_checks,
        "kernels": movers(per_step_ms(ba, "kernel"), per_step_ms(na, "kernel")),
        "ops": movers(per_step_ms(ba, "op"), per_step_ms(na, "op")),
    }


def _realised(ba: Measures, br: dict, nr: dict) -> Realised | None:
    """The base's prediction for the fixes of its findings that the new run no longer has, against what the
    step did (report/realised.py); several findings' fixes simulated together on the base's step graph."""

    def predict(change: str) -> dict | None:
        p = ba.predict(change)
        return p.to_json() if p is not None else None

    r = predicted_against_realised(br, nr, predict)
    return r.to_json() if r is not None else None


def regressions(diff: Diff, pct: float) -> list[str]:
    """What `--fail-on PCT` fails on (the module's docstring): the step slower with the whole interval on
    its basis above +pct% of the base's step (with no interval, the change itself), and, unless the step is
    faster, a check whose own time grew beyond the noise by more than pct% of the base's step."""
    out = []
    v, s = diff["verdict"], diff["steps"]
    base_ms = step_base_ms(diff)
    if v["verdict"] == "slower" and base_ms and v["delta_ms"] is not None:
        iv = v["interval_ms"]
        low = iv[0] if iv else v["delta_ms"]
        if 100 * low / base_ms > pct:
            basis = "without the profiler" if v["basis"] == "unprofiled" else "mean"
            new_ms = base_ms + v["delta_ms"]
            where = f", interval {iv[0]:+.3f} to {iv[1]:+.3f} ms" if iv else ""
            out.append(
                f"{basis} step time {base_ms:.3f} -> {new_ms:.3f} ms (+{100 * v['delta_ms'] / base_ms:.1f}%{where})"
            )
    step_ms = s["base"]["mean_ms"]
    if v["verdict"] == "faster" or not step_ms:
        return out
    for c in diff["checks"]:
        t = c["time"]
        if c["verdict"] not in ("new", "worse") or t is None or t["grown_ms"] is None:
            continue
        if 100 * t["grown_ms"] / step_ms > pct:
            out.append(
                f"{c['id']}: {t['measure']} {t['base_ms']:.3f} -> {t['new_ms']:.3f} ms per step "
                f"(+{t['grown_ms']:.3f} ms beyond the noise, {100 * t['grown_ms'] / step_ms:.1f}% of the step; "
                f"{c['base_status'] or 'not run'} -> {c['new_status']})"
            )
    return out
