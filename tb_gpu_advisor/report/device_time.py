"""Device time per step by kernel or op name, in a comparison (report/compare.py): the movers, and the
time of the rows a finding names."""

from __future__ import annotations

from typing import Any

import numpy as np

from tb_gpu_advisor.measures import Kind, Measures
from tb_gpu_advisor.report.diff_doc import Mover

TOP = 10  # kernels and ops listed


def _selected(m: Measures, kind: str) -> list[tuple[Any, np.ndarray]]:
    """Per active GPU, its events and the mask of its kernels (and collectives) in its steps (with an op,
    for `kind` "op")."""
    out = []
    for g in m.gpus:
        ev = g.events
        sel = np.isin(ev.kind, np.array([Kind.KERNEL, Kind.COLLECTIVE], np.int8)) & (ev.step >= 0)
        if kind == "op":
            sel &= ev.op >= 0
        out.append((g, sel))
    return out


def per_step_ms(m: Measures, kind: str) -> dict[str, float]:
    """Device time per step (ms) by kernel name (`kind` "kernel") or by op name ("op"), summed over
    the active GPUs, each in its own steps."""
    out: dict[str, float] = {}
    for g, sel in _selected(m, kind):
        ev = g.events
        keys = (ev.op if kind == "op" else ev.name)[sel]
        if not len(keys):
            continue
        u, inv = np.unique(keys, return_inverse=True)
        sums = np.bincount(inv.reshape(-1), weights=ev.dur_ps[sel].astype(float)) / max(len(g.steps), 1) / 1e9
        for k, v in zip(u.tolist(), sums.tolist()):
            name = m.op_name(k) if kind == "op" else m.name(k)
            out[name] = out.get(name, 0.0) + v
    return out


def named_time(m: Measures, kind: str, names: set[str]) -> tuple[float, np.ndarray | None]:
    """The device time per step (ms) of the kernels (`kind` "kernel") or ops ("op") named `names`, summed
    over the active GPUs: its mean, and its value in each step where the GPUs share their step count
    (None otherwise)."""
    mean, steps = 0.0, None
    per: list[np.ndarray] = []
    for g, sel in _selected(m, kind):
        ev = g.events
        keys = (ev.op if kind == "op" else ev.name)[sel]
        n = max(len(g.steps), 1)
        u, inv = np.unique(keys, return_inverse=True)
        mine = np.array([(m.op_name(k) if kind == "op" else m.name(k)) in names for k in u.tolist()], bool)
        hit = mine[inv.reshape(-1)] if len(u) else np.zeros(0, bool)
        dur = ev.dur_ps[sel][hit].astype(np.float64) / 1e9
        mean += float(dur.sum()) / n
        per.append(np.bincount(ev.step[sel][hit], weights=dur, minlength=len(g.steps))[: len(g.steps)])
    if per and len({len(p) for p in per}) == 1:
        steps = np.sum(per, axis=0)
    return mean, steps


def movers(base: dict[str, float], new: dict[str, float]) -> list[Mover]:
    names = set(base) | set(new)
    rows: list[Mover] = [
        {
            "name": n,
            "base_ms": base.get(n, 0.0),
            "new_ms": new.get(n, 0.0),
            "delta_ms": new.get(n, 0.0) - base.get(n, 0.0),
        }
        for n in names
    ]
    rows.sort(key=lambda r: (-abs(r["delta_ms"]), r["name"]))
    return rows[:TOP]
