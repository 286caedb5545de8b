"""The step graph (tb_gpu_advisor/graph): re-timed as measured it replays real captures exactly; its
critical path says what HTA's says about which of the host and the GPU bounds each step; without the
profiler it lands near the step timed without it; and each what-if lands within 25% of what the fix
realised on real before/after pairs (tests/data/gpu_pairs: the steps timed without the profiler;
tests/data/gpu and the shared V100 traces: the change the after-capture measures)."""

from __future__ import annotations

import glob
import itertools
import json
import os
import statistics
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from support.disturbed import undisturbed
from support.step_graphs import GPU_DIR, PAIRS_DIR, TESTS, TIMINGS, V100_DIR, capture_files as _files, loaded

from tb_gpu_advisor.graph.build import LAUNCH, SYNC, build
from tb_gpu_advisor.graph.critical import critical_path
from tb_gpu_advisor.graph.simulate import simulate
from tb_gpu_advisor.graph.whatif import WhatIf
from tb_gpu_advisor.model.analysis import analyse
from tb_gpu_advisor.report.engine import read_path

HERE = TESTS


def run(run_dir: str):
    return loaded(_files(run_dir)[0])


REAL = [
    *sorted(glob.glob(os.path.join(PAIRS_DIR, "*", ""))),
    *sorted(glob.glob(os.path.join(GPU_DIR, "*", ""))),
    os.path.join(V100_DIR, "resnet50_num_workers_0", ""),
    os.path.join(V100_DIR, "resnet50_num_workers_4", ""),
    os.path.join(V100_DIR, "two_ranks_of_128", ""),
    os.path.join(HERE, "data", "jax_cpu_capture", ""),
]


@pytest.mark.parametrize("run_dir", REAL, ids=lambda d: os.path.basename(os.path.dirname(d)))
def test_the_graph_replays_a_real_capture_exactly(run_dir):
    for path in _files(run_dir):
        p, a, g, _ = loaded(path)
        assert g is not None, path
        t = simulate(g)
        assert np.array_equal(t.h_start, g.h_start)
        assert np.array_equal(t.d_start, g.d_start)
        assert np.array_equal(t.d_end, g.d_start + g.d_dur)
        # its steps are the profile's, by the same rule
        assert t.window_ps == g.window[1] - g.window[0]
        assert abs(t.step_ps - a.host_steps.mean_ps) <= 0.01 * a.host_steps.mean_ps + 1e8


def test_the_graph_holds_every_launch_and_its_work():
    """GPT-2 on an H200 runs ahead of its GPU by a step: its steps' launches precede their steps' starts,
    and every kernel of the three steps is in the graph (their sum is the device's busy time)."""
    p, a, g, _ = run(os.path.join(PAIRS_DIR, "gpt2_fp32"))
    assert g.steps == 3
    # a hand count: 1,947 launch calls in the three markers, each launching one device op (by id)
    assert (g.h_kind == LAUNCH).sum() == g.device_ops == 1947
    busy = sum(float(s.events.dur_ps[(s.events.start_ps >= g.window[0])].sum()) for s in p.streams) / 1e9
    assert g.d_dur.sum() / 1e9 == pytest.approx(busy, rel=0.01)
    assert (g.h_kind == SYNC).sum() == 1  # the profiler's own synchronize at the end


# -- the critical path against HTA's ----------------------------------------------------------------

HTA_SCRIPT = textwrap.dedent(
    """
    import contextlib, io, json, logging, sys, warnings
    warnings.filterwarnings("ignore")
    logging.disable(logging.WARNING)
    import pandas as pd
    # HTA 0.5.0 calls DataFrame.drop(axis=1, columns=...), which pandas 3 refuses; the same call
    # without the redundant axis
    _drop = pd.DataFrame.drop
    def drop(self, labels=None, *, axis=0, index=None, columns=None, **kw):
        if columns is not None or index is not None:
            return _drop(self, labels, index=index, columns=columns, **kw)
        return _drop(self, labels, axis=axis, **kw)
    pd.DataFrame.drop = drop
    with contextlib.redirect_stdout(io.StringIO()):
        from hta.trace_analysis import TraceAnalysis
        ta = TraceAnalysis(trace_dir=sys.argv[1], include_last_profiler_step=True)
    out = []
    for i in range(int(sys.argv[2])):
        with contextlib.redirect_stdout(io.StringIO()):
            g, ok = ta.critical_path_analysis(rank=0, annotation="ProfilerStep", instance_id=i)
            bd = g.get_critical_path_breakdown()
        s = bd.groupby("bound_by")["duration"].sum().to_dict()
        gpu = s.get("gpu_compute_bound", 0.0) + s.get("gpu_kernel_kernel_overhead", 0.0)
        out.append({"cpu": s.get("cpu_bound", 0.0), "gpu": gpu})
    print(json.dumps(out))
    """
)


def hta_critical_path(path: str, steps: int, tmp: str) -> list[dict]:
    os.makedirs(tmp, exist_ok=True)
    os.symlink(path, os.path.join(tmp, os.path.basename(path)))
    out = subprocess.run(
        [sys.executable, "-c", HTA_SCRIPT, tmp, str(steps)], capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(
    "run_name,bound",
    [
        ("rn50_b64_fp32", "host"),  # ResNet-50 at batch 64: the host, under the profiler
        ("mlp_eager", "host"),  # a 12-layer MLP at batch 32: launch-bound
        ("loader_w0", "host"),  # waits for the DataLoader (HTA counts it as CPU)
        ("rn50_b64_sync", "GPU"),  # the same ResNet waiting for its GPU each step
        ("gpt2_bf16", "GPU"),
        ("rn50_b256_fp32", "GPU"),
    ],
)
def test_the_critical_path_agrees_with_hta_on_what_bounds_each_step(run_name, bound, tmp_path):
    path = _files(os.path.join(PAIRS_DIR, run_name))[0]
    p, a, g, w = loaded(path)
    ours = critical_path(g, w.captured)
    theirs = hta_critical_path(os.path.abspath(path), g.steps, str(tmp_path / "hta"))
    hta_bounds = ["GPU" if s["gpu"] >= s["cpu"] else "host" for s in theirs]
    assert ours.bounds == hta_bounds == [bound] * g.steps
    # and the critical path is the step: the host's and the GPU's parts add up to each step
    assert ours.host_ps + ours.gpu_ps == pytest.approx(a.host_steps.dur_ps, rel=0.02)


# -- the profiler's own cost ------------------------------------------------------------------------


def test_without_the_profiler_the_step_lands_near_the_unprofiled_one():
    """The profiler adds 25-70% to a host-bound step (ResNet-50 at batch 64: 44.9 ms captured, 32.3
    without; the MLP 7.6 against 4.5); the graph with its cost taken out lands within 15%, and leaves
    a GPU-bound step as it was."""
    for name, within in (("rn50_b64_fp32", 0.05), ("mlp_eager", 0.15), ("gpt2_bf16", 0.02), ("jax_eager", 0.05)):
        p, a, g, w = run(os.path.join(PAIRS_DIR, name))
        unprofiled = TIMINGS[name]["unprofiled_ms"]
        assert w.base.step_ps / 1e9 == pytest.approx(unprofiled, rel=within), name
    p, a, g, w = run(os.path.join(PAIRS_DIR, "rn50_b64_fp32"))
    assert w.profiler_overhead_ps / 1e9 == pytest.approx(44.94 - 32.30, rel=0.1)


# a step whose wall time passed its thread's CPU time by this much waited for a core: other work ran
PREEMPTED = 1.1


def _overhead_cycles(run_dir) -> list[tuple[float, float, float]] | None:
    """Per profiling cycle of a capture_overhead_cpu.py run whose steps no other work kept off the core
    (each step's wall time within PREEMPTED of its thread's CPU time, by the script's own clocks): the
    median of the three unprofiled steps just before it, its median profiled step, and its median step
    modelled without the profiler (ms). None when fewer than three cycles are left."""
    timings = json.load(open(os.path.join(run_dir, "timings.json")))
    files = _files(str(run_dir))  # one per cycle; the names' times sort them in time
    assert len(files) == 5 and len(timings["steps_ms"]) == 3 * len(files)
    out = []
    for cycle, path in enumerate(files):
        steps = [t for t in timings["steps"] if t["cycle"] == cycle]
        if any(t["wall_ms"] > PREEMPTED * t["cpu_ms"] for t in steps):
            continue
        p = read_path(path)
        a = analyse(p)
        g = build(p, a.host_steps)
        w = WhatIf(p, g, p.framework)
        assert g.device_ops == 0  # a CPU-only capture: its graph is the host's alone
        before = statistics.median(timings["steps_ms"][3 * cycle : 3 * cycle + 3])
        modelled = (w.base.step_end - w.base.step_start) / 1e9
        out.append((before, statistics.median(a.host_steps.dur_ps / 1e9), statistics.median(modelled)))
    return out if len(out) >= 3 else None


def _overhead_capture(tmp_path, name: str, *extra: str) -> list[tuple[float, float, float]]:
    """`_overhead_cycles` of a capture, made again (three tries at most) while other work disturbs it."""
    script = os.path.join(HERE, "..", "scripts", "capture_overhead_cpu.py")
    tries = itertools.count()

    def capture() -> list[tuple[float, float, float]] | None:
        run = f"{name}{next(tries)}"
        subprocess.run([sys.executable, script, str(tmp_path), "--run", run, *extra], check=True, capture_output=True)
        cycles = _overhead_cycles(tmp_path / run)
        print(f"{name}: per cycle (unprofiled, captured, modelled) ms: {cycles}")
        return cycles

    return undisturbed(capture, 3, "other work on this machine kept the steps off their core in every capture")


def test_the_profilers_cost_per_event_carries_from_one_run_to_another(tmp_path):
    """A host-bound step captured here, on the CPU, with and without the profiler (record_shapes on),
    then with Python stacks too. Each of the five profiling cycles is compared with the three steps run
    without the profiler just before it, and a cycle in which another process kept the step off its core
    is left out.

    The profiler's cost per event follows the CPU and its load (2.0-3.4 µs on real GPU hosts; on this
    project's machine 0.62-0.71x the model's constant in three runs of 2026-11-28, 0.30x on another
    machine, lower still under the suite's load), so nothing here compares it with the constant: only
    relations measured within this one test. The profiler makes each run slower; the model takes some of
    that out; and at the cost per event the plain run itself measures (its overhead over the one the
    model took out), the model puts the run with stacks, whose Python calls it costs apart, within 45% of
    its unprofiled step: the events are counted right, whatever this CPU's pace. Issue 48: the test that
    compared this CPU's cost with the constant (0.5-1.5x) failed on other machines and under load."""
    plain = _overhead_capture(tmp_path, "plain")
    stacks = _overhead_capture(tmp_path, "stacks", "--with-stack")
    for cycles in (plain, stacks):
        # the profiler's cost is there to take out, and the model takes some of it out
        assert statistics.median(cap / before for before, cap, _ in cycles) > 1.3, cycles
        assert all(mod < cap for _, cap, mod in cycles), cycles
    # this run's cost per event, as a multiple of the model's: the overhead measured over the one taken out
    cpu = statistics.median((cap - before) / (cap - mod) for before, cap, mod in plain)
    print(f"this run's profiler cost per event: {cpu:.2f}x the model's")
    landed = statistics.median((cap - cpu * (cap - mod)) / before for before, cap, mod in stacks)
    print(f"with stacks, at that cost: {landed:.2f}x the unprofiled step")
    assert landed == pytest.approx(1.0, rel=0.45), (cpu, stacks)
