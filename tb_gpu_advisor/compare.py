"""Two analyses side by side, in the guide's terms: the base run (before a change) and the new one.

The guide's method is experimental: change one thing, profile again, compare. This says what got
better, what got worse and by how much: the mean step time (per step, so captures of different
lengths compare) and its spread, each category of the step breakdown, the headline numbers, each
check's status, measured number and saving, and the kernels and ops whose time per step changed
most. The verdict of a check:

- fixed: a problem (critical or warning) in the base, not in the new run;
- new: a problem in the new run, not in the base;
- worse / better: a problem in both, with a more / less severe status, or the same status and a
  saving over SAME_WITHIN larger / smaller;
- unchanged: everything else.

`regressions(diff, pct)` is what `tb-gpu-advisor diff --fail-on-regression PCT` gates on.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tb_gpu_advisor.analysis import Analysis
from tb_gpu_advisor.profile import Kind
from tb_gpu_advisor.report import CRITICAL, WARNING
from tb_gpu_advisor.steps import CATEGORIES

SCHEMA = "tb-gpu-advisor/diff@1"
SAME_WITHIN = 0.05  # a saving within 5% (or 0.01 ms) of the base's is unchanged
TOP = 10  # kernels and ops listed
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


def per_step_ms(a: Analysis, kind: str) -> dict[str, float]:
    """Device time per step (ms) by kernel name (`kind` "kernel") or by op name ("op"), summed over
    the active GPUs, each in its own steps."""
    out: dict[str, float] = {}
    p = a.profile
    for g in a.gpus.values():
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
            name = p.op_name(k) if kind == "op" else p.names[k]
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
    bs, ns = (base or {}).get("saving_ms") or 0.0, (new or {}).get("saving_ms") or 0.0
    if abs(ns - bs) <= max(SAME_WITHIN * max(bs, ns), 0.01):
        return "unchanged"
    return "worse" if ns > bs else "better"


def compare(base: tuple[Analysis, dict], new: tuple[Analysis, dict]) -> dict:
    """The comparison of two analysed host files ((analysis, report) each)."""
    (ba, br), (na, nr) = base, new
    bs, ns = br.get("steps") or {}, nr.get("steps") or {}
    d, dp = _delta(bs.get("mean_ms"), ns.get("mean_ms"))
    steps = {
        "base": {k: bs.get(k) for k in ("count", "mean_ms", "stdev_ms", "min_ms", "max_ms")},
        "new": {k: ns.get(k) for k in ("count", "mean_ms", "stdev_ms", "min_ms", "max_ms")},
        "delta_ms": d,
        "delta_pct": dp,
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
    b_checks = {c["id"]: c for c in br.get("checks", [])}
    n_checks = {c["id"]: c for c in nr.get("checks", [])}
    checks = []
    for cid in list(n_checks) + [c for c in b_checks if c not in n_checks]:
        b, n = b_checks.get(cid), n_checks.get(cid)
        key_b = (b or {}).get("metrics") or []
        key_n = (n or {}).get("metrics") or []
        m_b, m_n = (key_b[0] if key_b else None), (key_n[0] if key_n else None)
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
                "verdict": verdict(b, n),
            }
        )
    order = {"new": 0, "worse": 1, "fixed": 2, "better": 3, "unchanged": 4}
    checks.sort(key=lambda c: (order[c["verdict"]], -abs((c["new_saving_ms"] or 0) - (c["base_saving_ms"] or 0))))
    summary: dict[str, Any] = {
        v: [c["id"] for c in checks if c["verdict"] == v] for v in ("fixed", "new", "worse", "better")
    }
    d = _delta(bs.get("mean_ms"), ns.get("mean_ms"))[1]
    summary["step"] = "unknown" if d is None else "faster" if d < -1 else "slower" if d > 1 else "same"
    return {
        "schema": SCHEMA,
        "base": {"run": br["run"], "host": br["host"], "framework": br.get("framework")},
        "new": {"run": nr["run"], "host": nr["host"], "framework": nr.get("framework")},
        "summary": summary,
        "steps": steps,
        "breakdown_ms": breakdown,
        "headline": headline,
        "checks": checks,
        "kernels": _movers(per_step_ms(ba, "kernel"), per_step_ms(na, "kernel")),
        "ops": _movers(per_step_ms(ba, "op"), per_step_ms(na, "op")),
    }


def regressions(diff: dict, pct: float) -> list[str]:
    """What grew by more than `pct` percent: the mean step time, or a check's saving (a check that
    fires only in the new run counts whatever its saving)."""
    out = []
    s = diff["steps"]
    if s["delta_pct"] is not None and s["delta_pct"] > pct:
        out.append(
            f"mean step time {s['base']['mean_ms']:.3f} -> {s['new']['mean_ms']:.3f} ms (+{s['delta_pct']:.1f}%)"
        )
    for c in diff["checks"]:
        b, n = c["base_saving_ms"] or 0.0, c["new_saving_ms"] or 0.0
        if c["verdict"] == "new":
            out.append(f"{c['id']}: new {c['new_status']} finding ({c['new_title']})")
        elif c["verdict"] == "worse" and b > 0 and n > b * (1 + pct / 100):
            out.append(f"{c['id']}: saving {b:.3f} -> {n:.3f} ms per step (+{100 * (n - b) / b:.1f}%)")
        elif c["verdict"] == "worse" and b == 0 and n > 0:
            out.append(f"{c['id']}: {c['base_status']} -> {c['new_status']}")
    return out
