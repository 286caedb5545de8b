"""Predicted savings tested like measurements: for every real before/after pair we hold, the what-if of
the fix on the before-capture lands within 25% of what the fix realised (or within the pair's own
noise, where the change is smaller than that).

- tests/data/gpu_pairs (an H200): the steps timed without the profiler are the realised figures, and
  the prediction is the one a user reads (the profiler's own cost taken out);
- tests/data/gpu (an H100) and the shared V100 traces: the change the after-capture measures, against
  the prediction for a capture (the profiler's cost kept, as in both captures).
docs/whatif.md lists every pair with its figures."""

from __future__ import annotations

import json
import os
import statistics

import numpy as np
import pytest
from support.step_graphs import (
    GPU_DIR,
    PAIRS_DIR,
    TESTS,
    TIMINGS,
    V100_DIR,
    VALIDATION_DIR,
    capture_files as _files,
    loaded,
)

HERE = TESTS
TOLERANCE = 0.25


def _noise(run: str) -> float:
    """Half the spread of a run's timed rounds (ms): what two timings of it can differ by."""
    r = TIMINGS[run]["rounds_ms"]
    return (max(r) - min(r)) / 2


# (before, after, the change that models the fix): the pairs of tests/data/gpu_pairs/pairs.json
UNPROFILED_PAIRS = [
    ("rn50_b64_fp32", "rn50_b64_bf16", "bf16+channels_last"),
    ("rn50_b256_fp32", "rn50_b256_bf16", "bf16+channels_last"),
    ("gpt2_fp32", "gpt2_tf32", "tf32"),
    ("gpt2_fp32", "gpt2_bf16", "bf16"),
    ("gpt2_bf16", "gpt2_bf16_pad", "padding"),
    ("gpt2_bf16", "gpt2_bf16_compile", "compile"),
    ("mlp_eager", "mlp_graphed", "graph"),
    ("loader_w0", "loader_w4", "input"),
    ("jax_eager", "jax_jit", "graph+compile"),
    ("jax_slow_input", "jax_jit", "input"),
    pytest.param(
        "rn50_b64_sync",
        "rn50_b64_fp32",
        "syncs",
        # The model gives the per-step loss.item() and synchronize 0.64 ms; removing them realised 2.31
        # (rounds 34.0-35.1 against 32.2-32.3). The capture holds the same host work in 28 ms a step
        # with the syncs and in 45 ms without them, so the profiler's cost is not the same per event in
        # the two; and an idle GPU may clock down after each sync. Neither is in the model: the miss is
        # kept in view here and in docs/whatif.md.
        marks=pytest.mark.xfail(strict=True, reason="syncs: 0.64 ms predicted, 2.31 realised"),
    ),
]


def test_the_pairs_here_are_the_captured_ones():
    pairs = json.load(open(os.path.join(PAIRS_DIR, "pairs.json")))
    captured = {(p["before"], p["after"]) for p in pairs}
    tested = {(p.values[0], p.values[1]) if hasattr(p, "values") else p[:2] for p in UNPROFILED_PAIRS}
    assert captured == tested


@pytest.mark.parametrize("before,after,change", UNPROFILED_PAIRS)
def test_a_fix_saves_what_the_what_if_predicts(before, after, change):
    w = loaded(_files(os.path.join(PAIRS_DIR, before))[0]).what_if
    pr = w.predict(change)
    assert pr is not None
    realised = TIMINGS[before]["unprofiled_ms"] - TIMINGS[after]["unprofiled_ms"]
    allowed = max(TOLERANCE * abs(realised), _noise(before) + _noise(after))
    predicted = pr.saving_ps / 1e9
    assert abs(predicted - realised) <= allowed, (predicted, realised, pr.basis)
    # and the step it predicts is the one the after-run timed, as closely
    assert abs(pr.new_step_ps / 1e9 - TIMINGS[after]["unprofiled_ms"]) <= max(
        allowed, TOLERANCE * TIMINGS[after]["unprofiled_ms"]
    )


def test_what_sets_the_step_decides_the_saving():
    """The same fix, mixed precision, on the same model: on a GPU-bound step (batch 256) it halves the
    step; on a host-bound one (batch 64) it saves little, and the report says the host sets it."""
    big = loaded(_files(os.path.join(PAIRS_DIR, "rn50_b256_fp32"))[0]).what_if
    small = loaded(_files(os.path.join(PAIRS_DIR, "rn50_b64_fp32"))[0]).what_if
    b, s = big.predict("bf16"), small.predict("bf16")
    assert b.bound == "GPU" and b.saving_ps > 0.45 * b.step_ps
    assert s.new_bound == "host" and s.saving_ps < 0.1 * s.step_ps


VALIDATION = json.load(open(os.path.join(VALIDATION_DIR, "timings.json")))

# Pairs kept apart: captured after the models were fitted, no constant set from them (their README)
HELD_OUT_PAIRS = [
    ("vit_fp32", "vit_tf32", "tf32"),
    ("vit_fp32", "vit_bf16", "bf16"),
    pytest.param(
        "vit_bf16",
        "vit_bf16_compile",
        "compile",
        # 7.4 ms predicted, 5.4 realised: the bf16 step runs 49 ms under the profiler and 27.5 without,
        # and the graph without the profiler's cost still makes it host-bound at 30.3 ms (10% over)
        marks=pytest.mark.xfail(strict=True, reason="ViT compile: 7.4 ms predicted, 5.4 realised"),
    ),
    ("rn18_fp32", "rn18_bf16", "bf16+channels_last"),
    pytest.param(
        "gpt2v_bf16_sync",
        "gpt2v_bf16",
        "syncs",
        # 2.4 ms predicted, 4.05 realised: as on rn50_b64_sync, the step with the syncs simulates 1.5 ms
        # short of the timed one
        marks=pytest.mark.xfail(strict=True, reason="syncs: 2.4 ms predicted, 4.05 realised"),
    ),
    ("mlpv_sync", "mlpv_eager", "syncs"),
    ("gpt2_b1_eager", "gpt2_b1_graphed", "graph"),
]


def test_the_held_out_pairs_are_the_captured_ones():
    pairs = json.load(open(os.path.join(VALIDATION_DIR, "pairs.json")))
    tested = {(p.values[0], p.values[1]) if hasattr(p, "values") else p[:2] for p in HELD_OUT_PAIRS}
    assert {(p["before"], p["after"]) for p in pairs} == tested


@pytest.mark.parametrize("before,after,change", HELD_OUT_PAIRS)
def test_a_held_out_fix_saves_what_the_what_if_predicts(before, after, change):
    w = loaded(_files(os.path.join(VALIDATION_DIR, before))[0]).what_if
    pr = w.predict(change)
    assert pr is not None
    realised = VALIDATION[before]["unprofiled_ms"] - VALIDATION[after]["unprofiled_ms"]
    noise = sum((max(VALIDATION[r]["rounds_ms"]) - min(VALIDATION[r]["rounds_ms"])) / 2 for r in (before, after))
    assert abs(pr.saving_ps / 1e9 - realised) <= max(TOLERANCE * abs(realised), noise), (pr.saving_ps / 1e9, realised)


def _mean_step(run_dir: str) -> float:
    return statistics.fmean(loaded(f)[1].host_steps.mean_ps / 1e9 for f in _files(run_dir))


# (before, after, change) among tests/data/gpu: the change two captures measure
CAPTURED_PAIRS = [
    ("torch_input_workers0", "torch_input_workers4", "input"),
    # 8 workers captured after 60 steps: the pin-memory thread's pool is warm (with it cold, each
    # cudaHostAlloc holds the launches up: torch_input_workers8, kernels.launch-bound's subject)
    ("torch_input_workers0", "torch_input_workers8_warm", "input"),
    ("torch_fp32", "torch_tf32", "tf32"),
    ("torch_fp32", "torch_bf16", "bf16"),
    ("torch_eager", "torch_compile", "compile"),
    ("torch_tiny_ops", "torch_cuda_graph", "graph"),
    ("torch_tiny_ops", "torch_tiny_ops_compiled", "compile"),
    ("torch_cuda_graph", "torch_cuda_graph_async", "syncs"),
    ("jax_slow_input", "jax_train", "input"),
]


@pytest.mark.parametrize("before,after,change", CAPTURED_PAIRS)
def test_a_fix_changes_a_capture_as_the_what_if_predicts(before, after, change):
    path = _files(os.path.join(GPU_DIR, before))[0]
    p, a, _, w = loaded(path)
    pr = w.predict(change, profiled=True)
    assert pr is not None
    realised = _mean_step(os.path.join(GPU_DIR, before)) - _mean_step(os.path.join(GPU_DIR, after))
    spread = a.host_steps.summary()["stdev_ms"]
    assert abs(pr.saving_ps / 1e9 - realised) <= max(TOLERANCE * abs(realised), spread), (pr.saving_ps / 1e9, realised)


def test_more_data_loader_workers_on_a_v100():
    """The shared V100 ResNet-50 pair (num_workers 0 then 4, two profiling spans each). With 4 workers
    some steps stall (the first of each span, 170-203 ms, against 119-127 for the rest), so the
    typical steps are compared: the medians of all six steps of each run. Each span of the 0-worker run
    predicts its step with the input pipeline keeping up."""
    steps = {}
    for name in ("resnet50_num_workers_0", "resnet50_num_workers_4"):
        steps[name] = [d / 1e9 for f in _files(os.path.join(V100_DIR, name)) for d in loaded(f)[1].host_steps.dur_ps]
    realised = statistics.median(steps["resnet50_num_workers_0"]) - statistics.median(steps["resnet50_num_workers_4"])
    predicted = []
    for f in _files(os.path.join(V100_DIR, "resnet50_num_workers_0")):
        pr = loaded(f).what_if.predict("input", profiled=True)
        predicted.append(pr.saving_ps / 1e9)
        # its new step is the 4-worker run's typical one
        assert pr.new_step_ps / 1e9 == pytest.approx(statistics.median(steps["resnet50_num_workers_4"]), rel=0.1)
    assert statistics.fmean(predicted) == pytest.approx(realised, rel=TOLERANCE)
    assert np.isclose(realised, 43.7, atol=0.5)  # medians 168.9 and 125.2 ms
