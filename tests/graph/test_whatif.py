"""Predicted savings tested like measurements, on every real before/after pair we hold
(tests/support/pairs.py lists them, which constants were fitted on which, and grades them):

- tests/data/gpu_pairs and gpu_validation (H200s): the steps timed without the profiler are the
  realised figures, and the prediction is the one a user reads (the profiler's own cost taken out). A
  pair a constant was fitted on does not grade the model it set; on the held-out pairs each predicted
  saving lands within 25% of the realised one (or of it within the pair's noise), the new step within
  25% of the step timed after the fix (its own tolerance, not a share of the saving), and the realised
  saving lies inside the range the prediction states;
- tests/data/gpu (an H100) and the shared V100 traces: the change the after-capture measures, against
  the prediction for a capture (the profiler's cost kept, as in both captures).
docs/whatif.md lists every pair with its figures (`python benchmarks/whatif_pairs.py`)."""

from __future__ import annotations

import json
import os
import statistics

import numpy as np
import pytest
from support import pairs as P
from support.step_graphs import GPU_DIR, PAIRS_DIR, V100_DIR, capture_files as _files, loaded

from tb_gpu_advisor.graph.fixes import ERRORS, MIN_ERROR

TOLERANCE = P.TOLERANCE

# Held-out pairs the model misses (docs/whatif.md, "What the model misses"): kept in view, not tuned on
MISSES = {
    # the per-step loss.item() and synchronize: 0.78 ms predicted, 2.32 realised; the step with the
    # syncs simulates 1.5 ms short of the timed one (the host's pace after a sync)
    ("rn50_b64_sync", "rn50_b64_fp32"): "syncs: 0.78 ms predicted, 2.32 realised",
    ("gpt2v_bf16_sync", "gpt2v_bf16"): "syncs: 2.37 ms predicted, 4.05 realised",
    # the bf16 step runs 49 ms under the profiler and 27.5 without; the graph with the profiler's cost
    # taken out at the constants leaves it host-bound at 30.7 ms (12% over)
    ("vit_bf16", "vit_bf16_compile"): "ViT compile: 7.7 ms predicted, 5.4 realised",
}


def _param(p: P.Pair):
    miss = MISSES.get((p.before, p.after))
    marks = [pytest.mark.xfail(strict=True, reason=miss)] if miss else []
    return pytest.param(p, id=f"{p.before}-{p.after}", marks=marks)


def test_the_pairs_are_the_captured_ones():
    for folder, d in P.FOLDERS.items():
        pairs = json.load(open(os.path.join(d, "pairs.json")))
        assert {(p["before"], p["after"]) for p in pairs} == {
            (p.before, p.after) for p in P.PAIRS if p.folder == folder
        }


@pytest.mark.parametrize("pair", [_param(p) for p in P.HELD_OUT])
def test_a_held_out_fix_saves_what_the_what_if_predicts(pair):
    g = P.grade(pair)
    assert g.withheld is None
    assert g.within, (g.predicted, g.realised, g.noise)


# Held-out pairs whose new step the model misses though their saving lands: jax_slow_input's step
# without the profiler simulates at 10.82 ms against 9.46 timed (the XSpace per-event cost, fitted on
# jax_eager, takes too little out), so the jitted step it leaves is 1.35 ms against 0.21 timed
NEW_STEP_MISSES = {("jax_slow_input", "jax_jit"): "jax_slow_input: new step 1.35 ms predicted, 0.21 timed"}


@pytest.mark.parametrize(
    "pair",
    [
        pytest.param(
            p,
            id=f"{p.before}-{p.after}",
            marks=[pytest.mark.xfail(strict=True, reason=NEW_STEP_MISSES[(p.before, p.after)])]
            if (p.before, p.after) in NEW_STEP_MISSES
            else [],
        )
        for p in P.HELD_OUT
    ],
)
def test_a_held_out_fix_leaves_the_step_the_what_if_predicts(pair):
    """The step it predicts is the one the after-run timed, within 25% of that step (or the rounds'
    noise): its own tolerance, not a share of the saving (which let a new step 30% short pass)."""
    g = P.grade(pair)
    timed = pair.timed_after()
    assert abs(g.new_step - timed) <= max(TOLERANCE * timed, g.noise), (g.new_step, timed)


@pytest.mark.parametrize("pair", [pytest.param(p, id=f"{p.before}-{p.after}") for p in P.HELD_OUT])
def test_a_held_out_fix_realises_a_saving_inside_its_stated_range(pair):
    """Each saving's range holds the model's error for its kind of fix and the profiler's cost's range:
    the realised saving lies inside it (or within the pair's noise of it), the misses above included."""
    g = P.grade(pair)
    assert g.low <= g.predicted <= g.high
    assert g.inside, (g.low, g.high, g.realised, g.noise)


@pytest.fixture(scope="module")
def logged_grades(tmp_path_factory):
    """Each held-out pair graded as a user who logs the step time gets it: the before-run copied with its
    timed rounds logged beside the capture as `step_time_ms` by torch.utils.tensorboard's SummaryWriter,
    read and analysed by the engine (`P.grade_logged`)."""
    pytest.importorskip("torch")
    return {p: P.grade_logged(p, str(tmp_path_factory.mktemp("logged"))) for p in P.HELD_OUT}


@pytest.mark.parametrize("pair", [pytest.param(p, id=f"{p.before}-{p.after}") for p in P.HELD_OUT])
def test_with_the_step_time_logged_a_held_out_fix_saves_what_the_what_if_predicts(pair, logged_grades):
    """Where the run logs its step time, the step without the profiler is the logged one, and every
    held-out saving lands within 25% of the realised one, inside its range: the three misses on the
    constants alone (the syncs, ViT's compile: MISSES) are their base's error, the host's pace the
    capture cannot tell. The realised saving is the before-run's timed step less the after-run's, so
    this grades the predicted new step against the after-run's; no constant is set from it."""
    g = logged_grades[pair]
    assert g.withheld is None
    assert g.within, (g.predicted, g.realised, g.noise)
    assert g.inside, (g.low, g.high, g.realised, g.noise)


def test_the_held_out_ranges_hold_nine_in_ten_realised_savings_left_one_out():
    """With each model's error and the profiler's spread refitted without the pair it grades, at least 9
    of 10 held-out realised savings still lie inside their ranges (`benchmarks/whatif_pairs.py`'s
    leave-one-out column): a range is not set by the saving it holds."""
    inside = []
    for p in P.HELD_OUT:
        errors = P.held_out_errors(leave_out=p)
        refit = {c: max(errors.get(c, TOLERANCE), MIN_ERROR) for c in p.change.split("+")}
        with P.constants(spread=P.spread(leave_out=(p.before, p.after)), errors=refit):
            inside.append(P.grade(p).inside)
    assert sum(inside) >= 0.9 * len(inside), inside


def test_each_models_stated_error_covers_its_held_out_pairs():
    """graph/fixes' ERROR: each model states at least the largest error it made on its held-out pairs."""
    measured = P.held_out_errors()
    assert set(measured) <= set(ERRORS)
    for change, error in measured.items():
        assert ERRORS[change] >= error, (change, ERRORS[change], error)


def test_a_miss_fails_the_tolerance():
    """The tolerance holds a prediction to 25% of the realised saving, not of the step: a saving 30%
    short fails it, on the pair and on its new step alike."""
    pair = next(p for p in P.HELD_OUT if p.before == "vit_fp32" and p.after == "vit_bf16")
    g = P.grade(pair)
    short = P.Graded(pair, 0.7 * g.realised, g.low, g.high, g.realised, g.noise, g.new_step, None)
    assert not short.within
    timed = pair.timed_after()
    assert abs(0.7 * timed - timed) > max(TOLERANCE * timed, g.noise)


@pytest.mark.parametrize("pair", [pytest.param(p, id=f"{p.before}-{p.after}") for p in P.FITTED])
def test_a_fitted_pair_still_lands(pair):
    """The pairs constants were fitted on grade no model; they are kept to show the fit itself holds."""
    g = P.grade(pair)
    assert g.within, (g.predicted, g.realised, pair.fitted)


def test_what_sets_the_step_decides_the_saving():
    """The same fix, mixed precision, on the same model: on a GPU-bound step (batch 256) it halves the
    step; on a host-bound one (batch 64) it saves little, and the report says the host sets it."""
    big = loaded(_files(os.path.join(PAIRS_DIR, "rn50_b256_fp32"))[0]).what_if
    small = loaded(_files(os.path.join(PAIRS_DIR, "rn50_b64_fp32"))[0]).what_if
    b, s = big.predict("bf16+channels_last"), small.predict("bf16+channels_last")
    assert b.bound == "GPU" and b.saving_ps > 0.45 * b.step_ps
    assert s.new_bound == "host" and s.saving_ps < 0.1 * s.step_ps


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
