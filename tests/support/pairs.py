"""The real before/after pairs the what-if models are graded on (tests/graph/test_whatif.py,
benchmarks/whatif_pairs.py): each pair's fix, what it realised (the steps timed without the profiler),
which constants were fitted on it (a fitted pair never grades the model it set), and each prediction's
error and stated range, as it is and with the constants refitted without the pair (leave-one-out)."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import os
import shutil
from typing import Iterator

from support.step_graphs import PAIRS_DIR, VALIDATION_DIR, capture_files, loaded
from tb_gpu_advisor.formats.discovery import STEP_TIME_TAG, discover
from tb_gpu_advisor.graph import profiler
from tb_gpu_advisor.graph.fixes import ERRORS, precision as precision_fix
from tb_gpu_advisor.graph.whatif import Prediction, WhatIf
from tb_gpu_advisor.report.engine import analyse_file

TOLERANCE = 0.25  # DESIGN.md: a predicted saving lands within 25% of the realised one
FOLDERS = {"pairs": PAIRS_DIR, "validation": VALIDATION_DIR}
TIMINGS = {k: json.load(open(os.path.join(d, "timings.json"))) for k, d in FOLDERS.items()}


@dataclasses.dataclass(frozen=True)
class Pair:
    before: str
    after: str
    change: str  # the change that models the fix
    folder: str  # "pairs" (tests/data/gpu_pairs) or "validation" (tests/data/gpu_validation)
    fitted: str = ""  # the constants fitted on this pair's captures: it does not grade their models

    @property
    def name(self) -> str:
        return f"{self.before} → {self.after}"

    @property
    def held_out(self) -> bool:
        return not self.fitted

    def run_dir(self, run: str) -> str:
        return os.path.join(FOLDERS[self.folder], run)

    def realised(self) -> tuple[float, float]:
        """(the saving the fix realised, ms: before less after, each the median round's mean step timed
        without the profiler; the noise: half the spread of each run's rounds, added)."""
        t = TIMINGS[self.folder]
        noise = sum((max(t[r]["rounds_ms"]) - min(t[r]["rounds_ms"])) / 2 for r in (self.before, self.after))
        return t[self.before]["unprofiled_ms"] - t[self.after]["unprofiled_ms"], noise

    def timed_after(self) -> float:
        return TIMINGS[self.folder][self.after]["unprofiled_ms"]


PAIRS = [
    Pair("rn50_b64_fp32", "rn50_b64_bf16", "bf16+channels_last", "pairs", "the profiler's cost per event (both runs)"),
    Pair("rn50_b256_fp32", "rn50_b256_bf16", "bf16+channels_last", "pairs"),
    Pair("gpt2_fp32", "gpt2_tf32", "tf32", "pairs"),
    Pair("gpt2_fp32", "gpt2_bf16", "bf16", "pairs"),
    Pair("gpt2_bf16", "gpt2_bf16_pad", "padding", "pairs"),
    Pair("gpt2_bf16", "gpt2_bf16_compile", "compile", "pairs"),
    Pair("mlp_eager", "mlp_graphed", "graph", "pairs", "the profiler's cost per event (both runs), a graph's replay"),
    Pair("loader_w0", "loader_w4", "input", "pairs"),
    Pair("jax_eager", "jax_jit", "graph+compile", "pairs", "an XSpace event's cost (jax_eager)"),
    Pair("jax_slow_input", "jax_jit", "input", "pairs"),
    Pair("rn50_b64_sync", "rn50_b64_fp32", "syncs", "pairs"),
    Pair("vit_fp32", "vit_tf32", "tf32", "validation"),
    Pair("vit_fp32", "vit_bf16", "bf16", "validation"),
    Pair("vit_bf16", "vit_bf16_compile", "compile", "validation"),
    Pair("rn18_fp32", "rn18_bf16", "bf16+channels_last", "validation"),
    Pair("gpt2v_bf16_sync", "gpt2v_bf16", "syncs", "validation"),
    Pair("mlpv_sync", "mlpv_eager", "syncs", "validation"),
    Pair("gpt2_b1_eager", "gpt2_b1_graphed", "graph", "validation"),
]
HELD_OUT = [p for p in PAIRS if p.held_out]
FITTED = [p for p in PAIRS if not p.held_out]
# the captures the profiler's per-event constants were fitted on (graph/profiler.py)
PROFILER_FITTED = ("rn50_b64_fp32", "rn50_b64_bf16", "mlp_eager", "mlp_graphed", "gpt2_bf16_pad")


def what_if(run_dir: str) -> WhatIf:
    """A fresh what-if of a run's capture (its graph read once): the constants as they are now."""
    p, _, g, _ = loaded(capture_files(run_dir)[0])
    return WhatIf(p, g, p.framework)


def predict(pair: Pair) -> Prediction:
    pr = what_if(pair.run_dir(pair.before)).predict(pair.change)
    assert pr is not None, pair
    return pr


@contextlib.contextmanager
def constants(
    spread: tuple[float, float] | None = None,
    errors: dict[str, float] | None = None,
    slowdown: dict | None = None,
    scale: float | None = None,
) -> Iterator[None]:
    """The models with some constants refitted (the leave-one-out's): the profiler's cost's spread,
    the models' errors, the odd-dimension slowdowns, the per-event constants' multiple."""
    saved = (profiler.COST_SPREAD, dict(ERRORS), precision_fix.SLOWDOWN, profiler.PROFILER_EVENT_PS)
    saved += (profiler.RUNTIME_CALL_PS, profiler.XSPACE_EVENT_PS)
    try:
        if spread is not None:
            profiler.COST_SPREAD = spread
        if errors is not None:
            ERRORS.update(errors)
        if slowdown is not None:
            precision_fix.SLOWDOWN = slowdown
        if scale is not None:
            profiler.PROFILER_EVENT_PS = int(saved[3] * scale)
            profiler.RUNTIME_CALL_PS = int(saved[4] * scale)
            profiler.XSPACE_EVENT_PS = int(saved[5] * scale)
        yield
    finally:
        profiler.COST_SPREAD, _, precision_fix.SLOWDOWN, profiler.PROFILER_EVENT_PS = saved[:4]
        profiler.RUNTIME_CALL_PS, profiler.XSPACE_EVENT_PS = saved[4:]
        ERRORS.clear()
        ERRORS.update(saved[1])


@dataclasses.dataclass(frozen=True)
class Graded:
    pair: Pair
    predicted: float  # ms
    low: float
    high: float
    realised: float
    noise: float
    new_step: float
    withheld: str | None

    @property
    def error(self) -> float:
        return (self.predicted - self.realised) / self.realised if self.realised else 0.0

    @property
    def within(self) -> bool:
        """Within 25% of the realised saving, or of it within the pair's own noise."""
        off = abs(self.predicted - self.realised)
        return off <= TOLERANCE * abs(self.realised) or off <= self.noise

    @property
    def inside(self) -> bool:
        """The realised saving lies inside the stated range (or within the pair's noise of it)."""
        return self.low - self.noise <= self.realised <= self.high + self.noise


def grade(pair: Pair) -> Graded:
    return _graded_as(pair, predict(pair))


def _graded_as(pair: Pair, pr: Prediction) -> Graded:
    """The pair's prediction `pr` beside what the fix realised."""
    realised, noise = pair.realised()
    return Graded(
        pair, pr.saving_ps / 1e9, pr.low_ps / 1e9, pr.high_ps / 1e9, realised, noise, pr.new_step_ps / 1e9, pr.withheld
    )


def logged_copy(pair: Pair, into: str) -> str:
    """The before-run copied into the folder `into`, with its step timed without the profiler logged
    beside its capture as the `step_time_ms` scalar (each timed round's mean step, written with
    torch.utils.tensorboard's SummaryWriter as a training loop logs it): the copy's capture file."""
    from torch.utils.tensorboard import SummaryWriter

    src = pair.run_dir(pair.before)
    dst = os.path.join(into, pair.before)
    shutil.copytree(src, dst)
    writer = SummaryWriter(log_dir=dst)
    for i, ms in enumerate(TIMINGS[pair.folder][pair.before]["rounds_ms"]):
        writer.add_scalar(STEP_TIME_TAG, ms, i)
    writer.close()
    return capture_files(dst)[0]


def grade_logged(pair: Pair, into: str) -> Graded:
    """`grade` as a user who logs the step time gets it: the before-run, its step time logged beside
    it (`logged_copy`), read and analysed by the engine, the profiler's cost scaled to meet the logged
    step (graph/profiler.py's basis "logged")."""
    logged_copy(pair, into)
    (f,) = discover(into)[0]
    m, report = analyse_file(f)
    assert report["step_model"]["profiler"]["basis"] == "logged", report["step_model"]["profiler"]
    pr = m.what_if.predict(pair.change)
    assert pr is not None, pair
    return _graded_as(pair, pr)


@functools.lru_cache(maxsize=None)
def _graded(pair: Pair) -> Graded:
    """`grade` with the models as they are (the held-out errors' source)."""
    return grade(pair)


# -- the profiler's cost per capture ------------------------------------------------------------------


def timed_runs() -> list[tuple[str, str]]:
    """(folder, run) of every capture with its step timed without the profiler."""
    return [(f, r) for f in FOLDERS for r in sorted(TIMINGS[f]) if capture_files(os.path.join(FOLDERS[f], r))]


@functools.lru_cache(maxsize=None)
def fitted_scale(folder: str, run: str) -> float | None:
    """The multiple of the profiler's per-event constants that brings this capture's step without the
    profiler onto the step timed without it; None where no multiple in [0, MAX_SCALE] does."""
    w = what_if(os.path.join(FOLDERS[folder], run))
    target = TIMINGS[folder][run]["unprofiled_ms"] * 1e9
    step = lambda k: w.base_at(k)[1].period_ps  # noqa: E731
    if step(0.0) < target or step(profiler.MAX_SCALE) > target:
        return None
    lo, hi = 0.0, profiler.MAX_SCALE
    for _ in range(20):
        m = (lo + hi) / 2
        if step(m) > target:
            lo = m
        else:
            hi = m
    return (lo + hi) / 2


@functools.lru_cache(maxsize=None)
def profiler_share(folder: str, run: str) -> float:
    w = what_if(os.path.join(FOLDERS[folder], run))
    return w.profiler_overhead_ps / max(w.captured.step_ps, 1.0)


# the captures whose profiler cost is this share of the step or more set the spread
SPREAD_SHARE = 0.2


def spread(leave_out: tuple[str, ...] = ()) -> tuple[float, float]:
    """The spread of the per-capture multiples over the timed captures where the profiler costs a fifth
    of the step or more (graph/profiler.py's COST_SPREAD), those named left out."""
    ks = [
        k
        for f, r in timed_runs()
        if r not in leave_out
        and profiler_share(f, r) >= SPREAD_SHARE
        and (k := fitted_scale(f, r)) is not None
        and "compile" not in r
    ]
    return (round(min(ks), 2), round(max(ks), 2))


# the timings of each phase of a step's host work without the profiler, before and after a capture in one
# process (scripts/capture_gpu/host_phases.py; graph/profiler.py's HOST_PACE)
HOST_PHASES = [os.path.join(VALIDATION_DIR, f"host_phases_{i}.json") for i in (1, 2)]


def host_paces() -> list[tuple[str, str, float]]:
    """(file, run, how many times as long its step's host work took the second time): the host's work
    of a step (its phases' medians summed) timed without the profiler after a capture, over the same
    timed before it, in one process."""
    out = []
    for path in HOST_PHASES:
        runs = json.load(open(path))
        for run, phases in runs.items():
            if not isinstance(phases, dict):
                continue  # the machine's device and torch
            timed = [v for v in phases.values() if isinstance(v, dict)]  # (not the GPU's timings, lists)
            before = sum(v["unprofiled_ms"] for v in timed)
            after = sum(v["unprofiled_after_ms"] for v in timed)
            out.append((os.path.basename(path), run, after / before))
    return out


def host_pace() -> tuple[float, float]:
    """The range of `host_paces` (graph/profiler.py's HOST_PACE)."""
    ratios = [r for _, _, r in host_paces()]
    return (round(min(ratios), 2), round(max(ratios), 2))


def held_out_errors(leave_out: Pair | None = None) -> dict[str, float]:
    """Each change's largest relative error (saving, within noise counted as none) on the held-out pairs
    of its kind (a pair's changes each take its error), `leave_out` left out: graph/fixes' ERROR."""
    out: dict[str, float] = {}
    for p in HELD_OUT:
        if p == leave_out:
            continue
        g = _graded(p)
        err = 0.0 if abs(g.predicted - g.realised) <= g.noise else abs(g.error)
        for one in p.change.split("+"):
            out[one] = max(out.get(one, 0.0), err)
    return out
