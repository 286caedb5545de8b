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
from typing import Sequence

import numpy as np

from tb_gpu_advisor.graph import profiler
from tb_gpu_advisor.graph.build import INPUT, StepGraph
from tb_gpu_advisor.graph.changes import CHANGES, NEEDS
from tb_gpu_advisor.graph.critical import critical_path
from tb_gpu_advisor.graph.facts import StepFacts
from tb_gpu_advisor.graph.fixes import ERRORS, FIXES
from tb_gpu_advisor.graph.fixes.fusion import compiled_gaps
from tb_gpu_advisor.graph.profiler import no_profiler
from tb_gpu_advisor.graph.simulate import Changes, Timing, simulate
from tb_gpu_advisor.model.profile import EventTable, Profile

__all__ = ["Prediction", "WhatIf"]

# a model's error is capped here when its range is made (an error of 1 would leave no upper end)
MAX_ERROR = 0.9


@dataclasses.dataclass(frozen=True, slots=True)
class Prediction:
    """One change's predicted step: without the profiler, as it is and with the change; and the range
    its saving is stated with (`low_ps`, `high_ps`): the savings at the ends of the profiler's cost's
    range, widened by the model's error measured on held-out pairs for that kind of fix (`error`).
    `withheld`: why the evidence cannot support a saving, where it cannot (the saving is then none)."""

    change: str
    step_ps: float  # the step as simulated without the profiler
    new_step_ps: float
    bound: str  # what sets the step before the change: "GPU", "host", "input"
    new_bound: str
    basis: str  # the model, in a sentence
    low_ps: float = 0.0
    high_ps: float = 0.0
    error: float = 0.0  # the model's relative error on held-out pairs of this kind of fix
    profiler: str = ""  # on what basis the profiler's cost was taken out: "capture", "logged" (ProfilerCost)
    withheld: str | None = None

    @property
    def saving_ps(self) -> float:
        if self.withheld is not None:
            return 0.0
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

    @property
    def range_sentence(self) -> str:
        """What the saving's range is made of, in a sentence."""
        pace = ", the host's pace" if self.profiler == "capture" else ""
        return f"range: the model's {100 * self.error:.0f}% held-out error, the profiler's cost's range{pace}"

    def to_json(self) -> dict:
        return {
            "change": self.change,
            "step_ms": round(self.step_ps / 1e9, 4),
            "new_step_ms": round(self.new_step_ps / 1e9, 4),
            "saving_ms": round(self.saving_ps / 1e9, 4),
            "saving_low_ms": round(self.low_ps / 1e9, 4),
            "saving_high_ms": round(self.high_ps / 1e9, 4),
            "error_pct": round(100 * self.error, 1),
            "bound": self.bound,
            "new_bound": self.new_bound,
            "basis": self.basis,
            "profiler": self.profiler,
            "sentence": self.sentence,
        } | ({"withheld": self.withheld} if self.withheld is not None else {})


class WhatIf:
    """The what-if models of one profile's step graph. `logged`: the step times the user logged for the
    run (a TensorBoard scalar: its tag and values, ms), which the profiler's cost is scaled to meet."""

    def __init__(
        self,
        p: Profile,
        g: StepGraph,
        framework: str,
        logged: tuple[str, Sequence[float]] | None = None,
        host: EventTable | None = None,
    ) -> None:
        """`host`: the profile's merged host table, where the caller has it (else made again from the
        threads' tables when a model needs it)."""
        self.p, self.g, self.framework = p, g, framework
        self.facts = StepFacts(p, g, framework, host)
        self.peaks, self.device = self.facts.peaks, self.facts.device
        self.captured = simulate(g)
        self._bases: dict[tuple[float, float], tuple[Changes, Timing]] = {}
        if logged is not None and len(logged[1]):
            self.cost = profiler.from_logged(framework, logged[1], logged[0], lambda k: self.base_at(k)[1].period_ps)
        else:
            self.cost = profiler.from_capture(framework)
        self.no_profiler, self.base = self.base_at(self.cost.scale)
        self.facts.window_ps = self.base.window_ps
        self._cache: dict[str, Prediction | None] = {}
        self._lock = threading.RLock()
        self._base_bound: str | None = None
        self._ends: list[tuple[Changes, Timing]] | None = None

    def base_at(self, scale: float, pace: float = 1.0) -> tuple[Changes, Timing]:
        """The step without the profiler at `scale` times the constants of its cost, the host's own work
        at `pace` times its captured pace (`profiler.at_pace`), and its timing."""
        key = (round(scale, 6), round(pace, 6))
        if key not in self._bases:
            c = profiler.at_pace(self.g, no_profiler(self.g, self.framework, scale), pace)
            self._bases[key] = (c, simulate(self.g, c))
        return self._bases[key]

    # -- what the capture shows -------------------------------------------------------------------

    @property
    def profiler_overhead_ps(self) -> float:
        """The profiler's own cost per step: the captured step less the step simulated without it."""
        return max(self.captured.step_ps - self.base.step_ps, 0.0)

    @property
    def uncertain(self) -> bool:
        """The step without the profiler has a range to simulate: the constants are its basis (the
        host's pace without the profiler is then unknown), or the profiler's cost is a share of the step
        its range moves (else one simulation will do)."""
        if self.cost.basis == "capture":
            return True
        return self.cost.low != self.cost.high and self.profiler_overhead_ps >= profiler.NEGLIGIBLE * max(
            self.captured.step_ps, 1.0
        )

    def ends(self) -> list[tuple[Changes, Timing]]:
        """The step without the profiler at the ends of its range, the slowest and the fastest of: the
        constants' multiples that bound its cost, and with the constants as the basis, the host's own work
        at the ends of its pace's range (`profiler.HOST_PACE`: each range alone spans what was seen, so
        they are not multiplied); and, in a capture of compiled code with the constants as its basis,
        its compiled launches at compiled code's own cost (the end where all the rest of its Python was
        the profiler's: `fusion.compiled_gaps`, as `compile` models it); none where one simulation will
        do (`uncertain`). A saving's range is simulated at these ends."""
        if not self.uncertain:
            return []
        if self._ends is None:
            ends = [self.base_at(self.cost.low), self.base_at(self.cost.high)]
            if self.cost.basis == "capture":
                ends += [self.base_at(self.cost.scale, pace) for pace in profiler.HOST_PACE]
                by_step = sorted(ends, key=lambda e: e[1].period_ps)
                ends = [by_step[-1], by_step[0]]
                launches = self.facts.compiled_launches()
                if launches.any():
                    c0 = ends[1][0]
                    _, compiled = compiled_gaps(c0, self.facts.free(c0))
                    c = dataclasses.replace(c0)
                    c.h_gap = np.where(launches, np.minimum(c0.h_gap, compiled), c0.h_gap)
                    ends.append((c, simulate(self.g, c)))
            self._ends = ends
        return self._ends

    def step_range_ps(self) -> tuple[float, float]:
        """The step without the profiler at the ends of its range (`ends`; ps, the lower first)."""
        steps = [self.base.period_ps, *(t.period_ps for _, t in self.ends())]
        return min(steps), max(steps)

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

    def predict(self, change: str, profiled: bool = False, ranged: bool = True) -> Prediction | None:
        """The step with one change (`graph.changes.CHANGES`: "input", "syncs", "graph", "fusion",
        "compile", "bf16", ..., "allocator", "warmup"), or several joined by "+"; None where the change
        does not apply.
        `profiled`: the change to the step as captured, the profiler's cost kept (what a second capture
        would measure). `ranged`: its range simulated too (else it is the model's error alone)."""
        with self._lock:  # checks run on threads: one simulation of each change, not one per asker
            for key in (f"{change}|{profiled}|True", f"{change}|{profiled}|{ranged}"):
                if key in self._cache:
                    return self._cache[key]
            key = f"{change}|{profiled}|{ranged}"
            self._cache[key] = self._predict(change, profiled, ranged)
            return self._cache[key]

    def changed(self, change: str) -> Changes | None:
        """The step's values without the profiler with `change` applied (None where it does not apply)."""
        c = dataclasses.replace(self.no_profiler)
        return c if self._apply(change, c) is not None else None

    def _apply(self, change: str, c: Changes) -> tuple[list[str], list[str]] | None:
        """The change's fixes applied to `c`: (what each did, why a saving is withheld); None where none
        applies."""
        bases: list[str] = []
        self.facts.withheld.clear()
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
        if self.g.range_records and not self.facts.withheld:
            # CUPTI's range profiler replays each kernel inside its launch call and records counters, not
            # kernels: the captured times are the profiler's, so no fix's saving can be read from them
            self.facts.withheld.append(
                f"the capture ran under CUPTI's range profiler ({self.g.range_records} kernels replayed for their "
                "counters inside their launch calls): its times are the profiler's, not the program's"
            )
        return bases, list(self.facts.withheld)

    def _predict(self, change: str, profiled: bool = False, ranged: bool = True) -> Prediction | None:
        base = self.captured if profiled else self.base
        c = Changes.of(self.g) if profiled else dataclasses.replace(self.no_profiler)
        applied = self._apply(change, c)
        if applied is None:
            return None
        bases, withheld = applied
        t = simulate(self.g, c)
        before = self.bound(base, Changes.of(self.g)) if profiled else self.base_bound
        saving = max(base.period_ps - t.period_ps, 0.0)
        savings = [saving]
        if ranged and not profiled and self.uncertain:  # the saving at the ends of the step's range
            for c0, t0 in self.ends():
                ck = dataclasses.replace(c0)
                if self._apply(change, ck) is not None:
                    savings.append(max(t0.period_ps - simulate(self.g, ck).period_ps, 0.0))
        # a saving within a relative error e of the realised one holds it in [s / (1 + e), s / (1 - e)]
        error = min(max(ERRORS[one] for one in change.split("+")), MAX_ERROR)
        low, high = min(savings) / (1 + error), max(savings) / (1 - error)
        return Prediction(
            change,
            base.period_ps,
            t.period_ps,
            before,
            self.quick_bound(t, c),
            "; ".join(bases),
            low,
            high,
            error,
            "profiled" if profiled else self.cost.basis,
            "; ".join(withheld) or None,
        )

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
