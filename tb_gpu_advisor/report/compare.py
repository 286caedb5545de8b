"""Two analyses side by side, in the guide's terms: the base run (before a change) and the new one.

The guide's method is experimental: change one thing, profile again, compare. This says what got
better, what got worse and by how much: the mean step time (per step, so captures of different
lengths compare) and its spread, each category of the step breakdown, the headline numbers, each
check's status, measured number and saving, and the kernels and ops whose time per step changed
most. The verdict of a check:

- fixed: a problem (critical or warning) in the base, not in the new run;
- new: a problem in the new run, not in the base;
- worse / better: a problem in both, with a more / less severe status, or, for a check whose measure
  is a share of the step (`@check(noise=...)`), the same status and that share larger / smaller beyond
  the noise with its time per step moved the same way (`share_verdict`; a saving is the step re-timed
  with the fix: it grows when another bottleneck is gone, and is not the problem's measure);
- unchanged: everything else.

Noise. A capture's steps vary, so two captures of the same program differ by chance; a threshold
crossed by a hair is not a change. Every per-step number compared here is decided with the per-step
distributions of both runs: the steps of each run are resampled with replacement (a bootstrap,
RESAMPLES times, with a fixed seed so the same two captures always give the same answer), and the
difference of the means gives a 95% interval. A change is called only when

- the interval leaves out zero (the change exceeds the steps' own variation), and
- it is not negligible: at least MIN_CHANGE_PCT (5%) of the base's step time for the step time; for
  a check's share of the step, at least 5% of the base's share and at least MIN_SHARE_CHANGE_PTS (1)
  point.

The step time's verdict (`summary.step`) is then "faster" or "slower", else "same" (unchanged, within
noise). A check whose measure is a share of the step (`@check(noise=...)`: input.bound, kernels.launch-bound) keeps
its status verdict only when that share changed by this rule (with the status the same and only the
saving changed, only when the interval of its time per step leaves out zero); a change inside the noise
is "unchanged" and listed in `summary.within_noise`. A check without per-step samples whose status
changed while its measure (its first metric) moved less than MIN_CHANGE_PCT of its base value (and
less than MIN_SHARE_CHANGE_PTS for a share) crossed a threshold by a hair: "unchanged", within noise. Runs with fewer than MIN_STEPS steps have no
interval: the step time is then judged by size alone and the checks by their status.

The interval covers the variation of the steps within each capture, not what differs between two
captures as a whole (other work on the machine, warm-up, clocks, a different node): hence the 5%.
Measured on the shared 2-core CPU machine this was written on, with scripts/capture_torch_cpu.py:
two profiling cycles of one run (`--repeat 2`, 8 steps each) differed by 4.7% in mean step time
with the first cycle 2 steps after the start, by 0.1 to 4.0% with `--skip-first 6` (five runs) and
by 13% when other work started during one; two processes run one after the other differed by 0.3
to 8% while the load was light and by 40 to 79% under heavy load. In 9 of the 11 pairs that
differed by more than 3%, the interval left out zero: real differences between those captures,
which no test over their steps can call noise. Gates
therefore take a margin too: `regressions(diff, pct)`, what `tb-gpu-advisor diff --fail-on PCT` gates
on, calls the step time a regression only when the whole interval lies above +PCT% of the base's step
time.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tb_gpu_advisor.checks import REGISTRY
from tb_gpu_advisor.checks.base import NoiseMeasure
from tb_gpu_advisor.checks.findings import CRITICAL, WARNING
from tb_gpu_advisor.measures import CATEGORIES, Kind, Measures

SCHEMA = "tb-gpu-advisor/diff@1"
SAME_WITHIN = 0.05  # a saving within 5% (or 0.01 ms) of the base's is unchanged
TOP = 10  # kernels and ops listed
CONFIDENCE = 0.95
RESAMPLES = 2000
SEED = 20261124
MIN_STEPS = 3  # fewer steps in a run: no interval
MIN_CHANGE_PCT = 5.0  # a change smaller than this (relative to the base's) is negligible
MIN_SHARE_CHANGE_PTS = 1.0

PROBLEM_RANK = {CRITICAL: 2, WARNING: 1}
HEADLINE = (
    ("device_busy_pct", "GPU busy", "%"),
    ("device_op_time_pct", "op time on the GPU", "%"),
    ("fp16_compute_pct", "16-bit compute", "%"),
    ("compute_ms_per_step", "compute per step", "ms"),
)


def _delta(base: float | None, new: float | None) -> tuple[float | None, float | None]:
    if base is None or new is None:
        return None, None
    d = new - base
    return d, (100.0 * d / base if base else None)


def per_step_ms(m: Measures, kind: str) -> dict[str, float]:
    """Device time per step (ms) by kernel name (`kind` "kernel") or by op name ("op"), summed over
    the active GPUs, each in its own steps."""
    out: dict[str, float] = {}
    for g in m.gpus:
        ev = g.events
        sel = np.isin(ev.kind, np.array([Kind.KERNEL, Kind.COLLECTIVE], np.int8)) & (ev.step >= 0)
        if kind == "op":
            sel &= ev.op >= 0
        keys = (ev.op if kind == "op" else ev.name)[sel]
        if not len(keys):
            continue
        u, inv = np.unique(keys, return_inverse=True)
        sums = np.bincount(inv.reshape(-1), weights=ev.dur_ps[sel].astype(float)) / max(len(g.steps), 1) / 1e9
        for k, v in zip(u.tolist(), sums.tolist()):
            name = m.op_name(k) if kind == "op" else m.name(k)
            out[name] = out.get(name, 0.0) + v
    return out


def _movers(base: dict[str, float], new: dict[str, float]) -> list[dict[str, Any]]:
    names = set(base) | set(new)
    rows: list[dict[str, Any]] = [
        {
            "name": n,
            "base_ms": base.get(n, 0.0),
            "new_ms": new.get(n, 0.0),
            "delta_ms": new.get(n, 0.0) - base.get(n, 0.0),
        }
        for n in names
    ]
    rows.sort(key=lambda r: (-abs(float(r["delta_ms"])), str(r["name"])))
    return rows[:TOP]


def noise_checks() -> list[tuple[str, NoiseMeasure]]:
    """The checks whose measure is a share of the step, each with it (`@check(noise=...)`), in guide order."""
    return [(c.id, c.noise) for c in REGISTRY if c.noise is not None]


def step_samples(m: Measures) -> np.ndarray:
    """Each of the run's reported steps: (steps, 1 + the noise checks) ms, the step time, then each noise
    check's measure in it (averaged over the GPUs measured in these steps; the host's without one)."""
    steps = m.steps
    gpus = [g.id for g in m.gpus if g.steps is steps]
    cols = [steps.dur_ps.astype(np.float64)]
    noisy = noise_checks()
    if gpus or steps is m.host_steps:
        cols += [np.asarray(n.per_step(m, gpus), np.float64) for _, n in noisy]
    else:  # GPUs each in their own steps, none in the reported ones: no per-step measure
        cols += [np.full(len(steps), np.nan) for _ in noisy]
    return np.column_stack(cols) / 1e9


def _resampled_means(x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The column means of RESAMPLES resamples of the rows of `x`, with replacement: (RESAMPLES, columns)."""
    n = len(x)
    out = np.empty((RESAMPLES, x.shape[1]))
    chunk = max(1, 200_000 // n)
    for s in range(0, RESAMPLES, chunk):
        idx = rng.integers(0, n, (min(chunk, RESAMPLES - s), n))
        out[s : s + len(idx)] = x[idx].mean(axis=1)
    return out


def changed(interval: list[float], delta: float, least: float) -> bool:
    """The noise rule: a change is called when its interval leaves out zero and it is at least `least`."""
    return (interval[0] > 0 or interval[1] < 0) and abs(delta) >= least


class Noise:
    """The bootstrap of two runs' steps: intervals of the difference of per-step means."""

    def __init__(self, base: np.ndarray, new: np.ndarray):
        self.base, self.new = base, new
        self.ok = len(base) >= MIN_STEPS and len(new) >= MIN_STEPS
        if self.ok:
            rng = np.random.default_rng(SEED)
            self.rb, self.rn = _resampled_means(base, rng), _resampled_means(new, rng)

    def _interval(self, d: np.ndarray) -> list[float]:
        tail = 100 * (1 - CONFIDENCE) / 2
        lo, hi = np.percentile(d, [tail, 100 - tail])
        return [float(lo), float(hi)]

    def step(self) -> dict[str, Any]:
        """The mean step time's change: its interval, and whether it is a change."""
        if not self.ok:
            return {"interval_ms": None, "significant": None}
        iv = self._interval(self.rn[:, 0] - self.rb[:, 0])
        d = float(self.new[:, 0].mean() - self.base[:, 0].mean())
        least = MIN_CHANGE_PCT / 100 * float(self.base[:, 0].mean())
        return {"interval_ms": iv, "significant": changed(iv, d, least)}

    def share(self, check_id: str) -> dict[str, Any] | None:
        """The change of a check's measure (ms per step and share of the step), with intervals."""
        noisy = dict(noise_checks())
        col = 1 + list(noisy).index(check_id)
        if not self.ok or np.isnan(self.base[:, col]).any() or np.isnan(self.new[:, col]).any():
            return None
        what = noisy[check_id].what

        def parts(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            return x[:, col], 100 * x[:, col] / np.maximum(x[:, 0], 1e-12)

        (bm, bp), (nm, np_) = parts(self.base[None].mean(axis=1)), parts(self.new[None].mean(axis=1))
        (rbm, rbp), (rnm, rnp) = parts(self.rb), parts(self.rn)
        iv_pts = self._interval(rnp - rbp)
        d_pts = float(np_[0] - bp[0])
        return {
            "measure": what,
            "base_ms": float(bm[0]),
            "new_ms": float(nm[0]),
            "delta_ms": float(nm[0] - bm[0]),
            "interval_ms": self._interval(rnm - rbm),
            "base_pct": float(bp[0]),
            "new_pct": float(np_[0]),
            "delta_pts": d_pts,
            "interval_pts": iv_pts,
            "significant": changed(iv_pts, d_pts, max(MIN_SHARE_CHANGE_PTS, MIN_CHANGE_PCT / 100 * float(bp[0]))),
        }


def _barely_moved(base: dict | None, new: dict | None) -> bool:
    """Whether a check without per-step samples kept its measure (its first metric, the same in both):
    moved less than MIN_CHANGE_PCT of the base's value, and for a share less than MIN_SHARE_CHANGE_PTS."""
    if not base or not new or base.get("name") != new.get("name"):
        return False
    b, n = base.get("value"), new.get("value")
    if not isinstance(b, (int, float)) or not isinstance(n, (int, float)):
        return False
    d = abs(n - b)
    if base.get("unit") == "%" and d >= MIN_SHARE_CHANGE_PTS:
        return False
    return d < MIN_CHANGE_PCT / 100 * abs(b) or d == 0


def verdict(base: dict | None, new: dict | None) -> str:
    b = PROBLEM_RANK.get(base["status"], 0) if base else 0
    n = PROBLEM_RANK.get(new["status"], 0) if new else 0
    if b and not n:
        return "fixed"
    if n and not b:
        return "new"
    if not (b and n):
        return "unchanged"
    if n != b:
        return "worse" if n > b else "better"
    # the same status: a saving is a prediction (the step re-timed with the fix, which grows when another
    # bottleneck went), not a measurement of the problem; only a check whose measure is a share of the
    # step is judged on it, with the noise (`compare`)
    return "unchanged"


def share_verdict(noise: dict[str, Any]) -> str:
    """A problem of the same status in both runs: worse or better only when its share of the step changed
    by the noise rule (the interval leaves out zero, the change is not negligible) and its time per step
    (the check's measure) moved the same way, beyond the noise and by at least MIN_CHANGE_PCT of the
    base's. A share alone also moves when the rest of the step does: two steady cycles of one program
    (steps' stdev 0.7% and 3%) had the same 18.6 ms input wait a step in a step 12% shorter, its share up
    7.6 points, and were called "worse". (A status change is judged on the share, its thresholds' basis.)"""
    d = noise["delta_ms"]
    moved = changed(noise["interval_ms"], d, MIN_CHANGE_PCT / 100 * abs(noise["base_ms"]))
    if not noise["significant"] or not moved or (d > 0) != (noise["delta_pts"] > 0):
        return "unchanged"
    return "worse" if d > 0 else "better"


def compare(base: tuple[Measures, dict], new: tuple[Measures, dict]) -> dict:
    """The comparison of two analysed host files ((measures, report) each, as the engine gives them)."""
    (ba, br), (na, nr) = base, new
    bs, ns = br.get("steps") or {}, nr.get("steps") or {}
    d, dp = _delta(bs.get("mean_ms"), ns.get("mean_ms"))
    noise = Noise(step_samples(ba), step_samples(na))
    steps = {
        "base": {k: bs.get(k) for k in ("count", "mean_ms", "stdev_ms", "min_ms", "max_ms")},
        "new": {k: ns.get(k) for k in ("count", "mean_ms", "stdev_ms", "min_ms", "max_ms")},
        "delta_ms": d,
        "delta_pct": dp,
        "confidence": CONFIDENCE,
        **noise.step(),
    }
    bb, nb = br.get("breakdown_ms") or {}, nr.get("breakdown_ms") or {}
    breakdown = []
    for c in CATEGORIES:
        d, dp = _delta(bb.get(c), nb.get(c))
        breakdown.append({"category": c, "base_ms": bb.get(c), "new_ms": nb.get(c), "delta_ms": d, "delta_pct": dp})
    bh, nh = br.get("headline") or {}, nr.get("headline") or {}
    headline = []
    for key, label, unit in HEADLINE:
        d, _ = _delta(bh.get(key), nh.get(key))
        headline.append({"key": key, "label": label, "unit": unit, "base": bh.get(key), "new": nh.get(key), "delta": d})
    noisy = dict(noise_checks())
    b_checks = {c["id"]: c for c in br.get("checks", [])}
    n_checks = {c["id"]: c for c in nr.get("checks", [])}
    checks = []
    for cid in list(n_checks) + [c for c in b_checks if c not in n_checks]:
        b, n = b_checks.get(cid), n_checks.get(cid)
        key_b = (b or {}).get("metrics") or []
        key_n = (n or {}).get("metrics") or []
        m_b, m_n = (key_b[0] if key_b else None), (key_n[0] if key_n else None)
        v = verdict(b, n)
        check_noise = noise.share(cid) if cid in noisy and b and n else None
        if check_noise and v == "unchanged" and b and n and b["status"] == n["status"] and b["status"] in PROBLEM_RANK:
            v = share_verdict(check_noise)
        # a status change whose share of the step (its thresholds' basis) stayed within the noise; a
        # same-status worse or better is beyond it (share_verdict)
        moved = bool(check_noise and check_noise["significant"])
        within = bool(check_noise and b and n and v != "unchanged" and b["status"] != n["status"] and not moved)
        if not check_noise and v != "unchanged" and _barely_moved(m_b, m_n):
            within = True  # a threshold crossed by a hair: its measure moved less than a change
        checks.append(
            {
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
                "verdict": "unchanged" if within else v,
                "within_noise": within,
                "noise": check_noise,
            }
        )
    order = {"new": 0, "worse": 1, "fixed": 2, "better": 3, "unchanged": 4}
    checks.sort(key=lambda c: (order[c["verdict"]], -abs((c["new_saving_ms"] or 0) - (c["base_saving_ms"] or 0))))
    summary: dict[str, Any] = {
        v: [c["id"] for c in checks if c["verdict"] == v] for v in ("fixed", "new", "worse", "better")
    }
    summary["within_noise"] = [c["id"] for c in checks if c["within_noise"]]
    apart = host_and_device(br.get("step_model"), nr.get("step_model"))
    summary["captured_step"] = step_verdict(steps)
    # where the profiler's own cost is a large part of either capture, the step is judged without it:
    # a fix is not called slower when only the capture's host slowed under the profiler
    summary["step"] = apart["verdict"] if apart and apart["profiled_apart"] else summary["captured_step"]
    return {
        "schema": SCHEMA,
        "base": {"run": br["run"], "host": br["host"], "framework": br.get("framework")},
        "new": {"run": nr["run"], "host": nr["host"], "framework": nr.get("framework")},
        "summary": summary,
        "steps": steps,
        "breakdown_ms": breakdown,
        "headline": headline,
        "checks": checks,
        "apart": apart,
        "kernels": _movers(per_step_ms(ba, "kernel"), per_step_ms(na, "kernel")),
        "ops": _movers(per_step_ms(ba, "op"), per_step_ms(na, "op")),
    }


# the profiler's cost, share of a captured step, from which a diff judges the steps without it
PROFILER_APART_PCT = 10.0


def host_and_device(base: dict | None, new: dict | None) -> dict | None:
    """The two captures' steps without the profiler (their graphs re-timed, docs/whatif.md), the device's
    work and the host's own work per step apart, and what sets each one's step: what changed on the
    device and on the host, whatever the profiler did to each capture."""
    if not base or not new:
        return None
    d, dp = _delta(base["step_ms"], new["step_ms"])
    big = dp is not None and abs(dp) >= MIN_CHANGE_PCT
    return {
        "base": {k: base[k] for k in ("captured_step_ms", "step_ms", "device_ms", "host_ms", "profiler_pct", "bound")},
        "new": {k: new[k] for k in ("captured_step_ms", "step_ms", "device_ms", "host_ms", "profiler_pct", "bound")},
        "step_delta_ms": d,
        "step_delta_pct": dp,
        "device_delta_ms": new["device_ms"] - base["device_ms"],
        "host_delta_ms": new["host_ms"] - base["host_ms"],
        "verdict": ("faster" if (d or 0) < 0 else "slower") if big else "same",
        "profiled_apart": max(base["profiler_pct"], new["profiler_pct"]) >= PROFILER_APART_PCT,
    }


def step_verdict(steps: dict) -> str:
    """ "faster", "slower", "same" (within noise, or a negligible change) or "unknown" (no steps)."""
    d, dp = steps["delta_ms"], steps["delta_pct"]
    if d is None:
        return "unknown"
    if steps["significant"] is None:  # too few steps for an interval: by size alone
        big = dp is not None and abs(dp) >= MIN_CHANGE_PCT
        return ("faster" if d < 0 else "slower") if big else "same"
    return ("faster" if d < 0 else "slower") if steps["significant"] else "same"


def regressions(diff: dict, pct: float) -> list[str]:
    """What grew by more than `pct` percent, beyond the noise: the mean step time when the whole 95%
    interval of its change is above +pct% of the base's (with too few steps for an interval, the change
    itself), or a check's saving (a check that fires only in the new run counts whatever its saving;
    the verdicts are already decided with the noise)."""
    out = []
    s = diff["steps"]
    base_ms = s["base"]["mean_ms"]
    if s["delta_pct"] is not None and base_ms:
        iv = s["interval_ms"]
        low_pct = 100 * iv[0] / base_ms if iv else s["delta_pct"]
        if low_pct > pct:
            where = f", 95% interval {iv[0]:+.3f} to {iv[1]:+.3f} ms" if iv else ""
            out.append(f"mean step time {base_ms:.3f} -> {s['new']['mean_ms']:.3f} ms (+{s['delta_pct']:.1f}%{where})")
    for c in diff["checks"]:
        b, n = c["base_saving_ms"] or 0.0, c["new_saving_ms"] or 0.0
        if c["verdict"] == "new":
            out.append(f"{c['id']}: new {c['new_status']} finding ({c['new_title']})")
        elif c["verdict"] == "worse" and b > 0 and n > b * (1 + pct / 100):
            out.append(f"{c['id']}: saving {b:.3f} -> {n:.3f} ms per step (+{100 * (n - b) / b:.1f}%)")
        elif c["verdict"] == "worse" and b == 0 and n > 0:
            out.append(f"{c['id']}: {c['base_status']} -> {c['new_status']}")
    return out
