"""bf16 autocast as the fix behaves (graph/fixes/autocast.py, precision.py), part by part, against the
bf16 run that realised it: the GPT-2 pair (tests/data/gpu_pairs: gpt2_fp32 -> gpt2_bf16) and the ViT
pair kept apart (tests/data/gpu_validation: vit_fp32 -> vit_bf16), both on an H200.

Read off the bf16 captures (`.venv/bin/python` over their kernels, by the op that launched them): the
real step keeps the residual adds of the fp32 stream at their fp32 time (GPT-2: 0.94 ms of aten::add
and add_ kernels a step in fp32, 1.11 in bf16), adds 270 casts a step (GPT-2, 3.47 ms: activations,
weights, biases, the logits for the loss, and their gradients) and 282 (ViT, 2.20 ms), and runs
attention in cuDNN's 16-bit kernels at 1.99 ms (GPT-2, causal) and 1.94 ms (ViT, not causal) a step,
a smaller share of the 16-bit peak than the fp32 kernels reached of theirs. The model before this
test halved every element-wise kernel (the adds at 0.47 ms), added weight casts only, and kept the fp32
attention kernels' share (GPT-2 1.30 ms, ViT 3.75 ms)."""

from __future__ import annotations

import dataclasses
import os

import numpy as np
import pytest
from support.step_graphs import PAIRS_DIR, VALIDATION_DIR, capture_files, loaded

from tb_gpu_advisor.graph import roofline
from tb_gpu_advisor.graph.fixes import FIXES
from tb_gpu_advisor.graph.fixes.autocast import achieved_bandwidth, autocast
from tb_gpu_advisor.model.profile import Kind

PAIRS = [
    pytest.param(PAIRS_DIR, "gpt2_fp32", "gpt2_bf16", id="gpt2"),
    pytest.param(VALIDATION_DIR, "vit_fp32", "vit_bf16", id="vit"),
]
CASTS = ("aten::copy_", "aten::to", "aten::_to_copy")


def _kernels(run_dir: str, dur: np.ndarray | None = None) -> dict[str, tuple[float, int]]:
    """(ms a step, kernels a step) of a capture's parts: residual adds, casts between fp32 and 16-bit,
    attention; `dur`: the kernels' durations to sum (the capture's own by default)."""
    p, _, g, w = loaded(capture_files(run_dir)[0])
    f, names = w.facts, p.names.strings
    d = g.d_dur if dur is None else dur
    kernel = (g.d_kind == Kind.KERNEL) & ~g.h_optimizer[g.d_launch]
    op = np.asarray([names[t] if t >= 0 else "" for t in f.d_type.tolist()], object)
    shape = [names[s] if s >= 0 else "" for s in g.d_shape.tolist()]
    mixed = np.asarray([len({t for t, _ in roofline.tensors(s)[:2]} & {"float", "bfloat16"}) == 2 for s in shape])
    parts = {
        "adds": kernel & np.isin(op, ["aten::add", "aten::add_"]),
        "casts": kernel & np.isin(op, CASTS) & mixed,
        "attention": kernel & np.asarray([bool(roofline.ATTENTION.match(o)) for o in op]),
    }
    return {k: (float(d[m].sum()) / g.steps / 1e9, int(m.sum()) // g.steps) for k, m in parts.items()}


def _predicted(run_dir: str) -> tuple[dict[str, tuple[float, int]], float, int]:
    """The bf16 what-if's parts on the fp32 capture (its adds without the casts autocast puts on them),
    and the casts it adds: ms a step and how many."""
    _, _, g, w = loaded(capture_files(run_dir)[0])
    c = dataclasses.replace(w.no_profiler)
    assert FIXES["bf16"](w.facts, c) is not None
    share, _ = achieved_bandwidth(w.facts)
    ac = autocast(w.facts, w.peaks.bandwidth * 1e9 * share)
    parts = _kernels(run_dir, c.d_dur - ac.cast_ps)
    return parts, float(ac.cast_ps.sum()) / g.steps / 1e9, (ac.activations + ac.weights) // g.steps


@pytest.mark.parametrize("folder,before,after", PAIRS)
def test_autocast_keeps_the_fp32_streams_adds_at_their_fp32_time(folder, before, after):
    predicted, _, _ = _predicted(os.path.join(folder, before))
    fp32 = _kernels(os.path.join(folder, before))["adds"][0]
    real = _kernels(os.path.join(folder, after))["adds"][0]
    assert real >= 0.9 * fp32  # the bf16 run did not halve them
    assert predicted["adds"][0] == pytest.approx(real, rel=0.25), (predicted["adds"], real, fp32)


@pytest.mark.parametrize("folder,before,after", PAIRS)
def test_autocast_adds_the_casts_the_bf16_run_has(folder, before, after):
    _, cast_ms, casts = _predicted(os.path.join(folder, before))
    real_ms, real_n = _kernels(os.path.join(folder, after))["casts"]
    assert casts == pytest.approx(real_n, rel=0.05), (casts, real_n)
    assert cast_ms == pytest.approx(real_ms, rel=0.25), (cast_ms, real_ms)


@pytest.mark.parametrize("folder,before,after", PAIRS)
def test_16_bit_attention_runs_at_its_own_share_of_the_peak(folder, before, after):
    predicted, _, _ = _predicted(os.path.join(folder, before))
    real = _kernels(os.path.join(folder, after))["attention"][0]
    assert predicted["attention"][0] == pytest.approx(real, rel=0.25), (predicted["attention"], real)


def test_attentions_causality_is_read_from_the_ops_arguments():
    """GPT-2's attention is causal, ViT's is not: each op records its `is_causal` (or xformers' mask
    type) among its concrete inputs, which the reader keeps after the op's shapes, and the FLOPs the
    roofline counts follow it (half the scores for a causal mask)."""
    for run_dir, causal in (
        (os.path.join(PAIRS_DIR, "gpt2_fp32"), True),
        (os.path.join(VALIDATION_DIR, "vit_fp32"), False),
    ):
        p, _, g, w = loaded(capture_files(run_dir)[0])
        names = p.names.strings
        att = [j for j in np.flatnonzero(w.facts.matrix()).tolist() if (c := w.facts.cost(j)) and c.kind == "attention"]
        assert att
        for j in att:
            assert f"is_causal={causal}" in names[int(g.d_shape[j])]
            assert w.facts.cost(j).causal is causal
