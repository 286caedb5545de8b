"""What a fix would do to the step: the step graph re-timed with the fix applied, against the same graph
re-timed as it would run without the profiler (graph/profiler.py). Each fix's model is a module of
graph/fixes/ with its constants and their sources; docs/whatif.md gives each model, its sources and its
measured error on real before/after pairs.

Every change keeps the host's own work unless the fix removes it, and lets each device op start when
its launch, its stream and what it waits for allow (`simulate`), so a saving off the step's critical
path counts for nothing, and all fixes simulated together never double count.
"""

from __future__ import annotations

import dataclasses
import threading

import numpy as np

from tb_gpu_advisor.graph.build import INPUT, StepGraph
from tb_gpu_advisor.graph.changes import CHANGES, NEEDS
from tb_gpu_advisor.graph.critical import critical_path
from tb_gpu_advisor.graph.facts import StepFacts
from tb_gpu_advisor.graph.fixes import FIXES
from tb_gpu_advisor.graph.profiler import no_profiler
from tb_gpu_advisor.graph.simulate import Changes, Timing, simulate
from tb_gpu_advisor.model.profile import Profile

__all__ = ["Prediction", "WhatIf"]


@dataclasses.dataclass(frozen=True, slots=True)
class Prediction:
    """One change's predicted step: without the profiler, as it is and with the change."""

    change: str
    step_ps: float  # the step as simulated without the profiler
    new_step_ps: float
    bound: str  # what sets the step before the change: "GPU", "host", "input"
    new_bound: str
    basis: str  # the model, in a sentence

    @property
    def saving_ps(self) -> float:
        return max(self.step_ps - self.new_step_ps, 0.0)

    @property
    def sentence(self) -> str:
        """ "step 43.8 → 42.9 ms; the host sets it now and after the fix" (without the profiler)."""
        who = {"GPU": "the GPU", "host": "the host", "input": "waiting for input"}
        now, after = who.get(self.bound, self.bound), who.get(self.new_bound, self.new_bound)
        s = f"step {self.step_ps / 1e9:.1f} → {self.new_step_ps / 1e9:.1f} ms; "
        if self.new_bound == self.bound:
            return s + f"{now} sets it now and after the fix"
        return s + f"{now} sets it now, {after} after the fix"

    def to_json(self) -> dict:
        return {
            "change": self.change,
            "step_ms": round(self.step_ps / 1e9, 4),
            "new_step_ms": round(self.new_step_ps / 1e9, 4),
            "saving_ms": round(self.saving_ps / 1e9, 4),
            "bound": self.bound,
            "new_bound": self.new_bound,
            "basis": self.basis,
            "sentence": self.sentence,
        }


class WhatIf:
    """The what-if models of one profile's step graph."""

    def __init__(self, p: Profile, g: StepGraph, framework: str) -> None:
        self.p, self.g, self.framework = p, g, framework
        self.facts = StepFacts(p, g, framework)
        self.peaks, self.device = self.facts.peaks, self.facts.device
        self.no_profiler = no_profiler(g, framework)
        self.captured = simulate(g)
        self.base = simulate(g, self.no_profiler)
        self.facts.window_ps = self.base.window_ps
        self._cache: dict[str, Prediction | None] = {}
        self._lock = threading.RLock()
        self._base_bound: str | None = None

    # -- what the capture shows -------------------------------------------------------------------

    @property
    def profiler_overhead_ps(self) -> float:
        """The profiler's own cost per step: the captured step less the step simulated without it."""
        return max(self.captured.step_ps - self.base.step_ps, 0.0)

    def bound(self, t: Timing, c: Changes) -> str:
        """What sets the simulated step: the larger part of the critical path of its last steps, the
        GPU's or the host's; the host's is "input" where waiting for input is most of it."""
        cp = critical_path(self.g, t, c)
        host, gpu, inp = float(cp.host_ps.sum()), float(cp.gpu_ps.sum()), float(cp.input_ps.sum())
        if gpu >= host:
            return "GPU"
        return "input" if inp > 0.5 * host else "host"

    def quick_bound(self, t: Timing, c: Changes) -> str:
        """What sets a what-if's step, without walking its critical path: the GPU where its work fills
        the steady state's step (9/10 of it), else input where the host's waits for it are most of the
        rest, else the host."""
        g = self.g
        steps = max(g.steps, 1)
        step = max(t.period_ps, 1.0)
        work = float(c.d_dur.sum()) / steps
        if work >= 0.9 * step:
            return "GPU"
        inp = g.h_kind == INPUT
        waits = float(np.minimum(t.h_end[inp] - t.h_start[inp], step * steps).sum()) / steps if inp.any() else 0.0
        return "input" if waits > 0.5 * (step - work) else "host"

    @property
    def base_bound(self) -> str:
        if self._base_bound is None:
            self._base_bound = self.bound(self.base, self.no_profiler)
        return self._base_bound

    # -- the changes ------------------------------------------------------------------------------

    def predict(self, change: str, profiled: bool = False) -> Prediction | None:
        """The step with one change ("input", "syncs", "graph", "fusion", "compile", "bf16", "fp16",
        "tf32", "padding", "host", "overlap"), or several joined by "+"; None where the change does not
        apply.
        `profiled`: the change to the step as captured, the profiler's cost kept (what a second capture
        would measure)."""
        key = f"{change}|{profiled}"
        with self._lock:  # checks run on threads: one simulation of each change, not one per asker
            if key not in self._cache:
                self._cache[key] = self._predict(change, profiled)
            return self._cache[key]

    def _predict(self, change: str, profiled: bool = False) -> Prediction | None:
        base = self.captured if profiled else self.base
        c = Changes.of(self.g) if profiled else dataclasses.replace(self.no_profiler)
        bases = []
        for one in change.split("+"):
            if one not in NEEDS:
                raise ValueError(f"unknown change {one!r}; the changes are {', '.join(CHANGES)}")
            basis = FIXES[one](self.facts, c)
            if basis is None:
                if "+" not in change:
                    return None
                continue
            bases.append(basis)
        if not bases:
            return None
        t = simulate(self.g, c)
        before = self.bound(base, Changes.of(self.g)) if profiled else self.base_bound
        return Prediction(change, base.period_ps, t.period_ps, before, self.quick_bound(t, c), "; ".join(bases))

    def not_applied(self, change: str) -> str:
        """Why `predict(change)` gave none: what the change needs that this capture lacks."""
        parts = change.split("+")
        for one in parts:
            if one in ("bf16", "fp16", "tf32", "padding") and self.peaks is None:
                gpu = self.device.name if self.device is not None and self.device.name else "this GPU"
                return f"the advisor knows no peak rates of {gpu}, which re-timing matrix kernels needs"
            if one in ("bf16", "fp16", "tf32") and self.peaks is not None and self.peaks.rate(one) is None:
                cores = "Matrix Cores" if self.device is not None and self.device.matrix_cores else "Tensor Cores"
                return f"the {self.peaks.name} has no {one.upper() if one == 'tf32' else one} {cores}"
        needs = list(dict.fromkeys(NEEDS[one] for one in parts if one in NEEDS))
        said = "it needs " + "; or ".join(needs)
        amd = self.device is not None and self.device.matrix_cores
        return said.replace("Tensor Cores", "Matrix Cores") if amd else said
