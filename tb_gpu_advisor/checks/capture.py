"""0. Before the checklist: is there a GPU trace, are there steps, is the model worth a GPU."""
from __future__ import annotations

from tb_gpu_advisor.checks.base import Context, Threshold, check
from tb_gpu_advisor.checks.common import active_gpus, fmt_pct, ms, pct
from tb_gpu_advisor.report import INFO, PASS, WARNING, Metric
from tb_gpu_advisor.steps import SOURCE_DEVICE, SOURCE_FUNCTIONS, SOURCE_HOST


@check(
    id="capture.no-gpu",
    title="GPU activity captured",
    section="capture",
    anchor="#overview",
    recommendation="""
The profile has no GPU activity, so only the host-side checks can run. If the job ran on a GPU, the
profiler could not load CUPTI: make sure the CUDA toolkit's `extras/CUPTI/lib64` is on
`LD_LIBRARY_PATH`, that `tf.config.list_physical_devices('GPU')` lists the GPU, and capture again
(for example with Keras' `TensorBoard(profile_batch=(10, 15))` callback).""",
    snippet="""export LD_LIBRARY_PATH=/usr/local/cuda/extras/CUPTI/lib64:$LD_LIBRARY_PATH
python -c "import tensorflow as tf; print(tf.config.list_physical_devices('GPU'))\"""",
)
def no_gpu(ctx: Context):
    p = ctx.a.profile
    active = active_gpus(ctx.a)
    metrics = [Metric("gpus", len(p.devices), "", "GPU planes"), Metric("active_gpus", len(active), "", "GPUs with activity")]
    if not p.devices:
        return ctx.finding(WARNING, "No GPU in this profile: a CPU-only run, or the profiler could not load CUPTI.", metrics)
    if not active:
        return ctx.finding(WARNING, f"{len(p.devices)} GPU plane(s) but no kernel or copy on any of them.", metrics)
    return ctx.finding(PASS, f"{len(active)} GPU(s) with activity.", metrics)


@check(
    id="capture.no-steps",
    title="Training steps marked",
    section="capture",
    anchor="#overview",
    recommendation="""
No step markers were found, so the whole capture is analysed as one step and per-step numbers are
approximate. Keras `Model.fit` marks steps itself when profiled with the TensorBoard callback's
`profile_batch`; in a custom loop, wrap each step in `tf.profiler.experimental.Trace`.""",
    snippet="""for step, batch in enumerate(dataset):
    with tf.profiler.experimental.Trace('train', step_num=step, _r=1):
        train_step(batch)""",
)
def no_steps(ctx: Context):
    s = ctx.a.steps
    metrics = [Metric("steps", len(s), "", "steps found"), Metric("source", s.source, "", "step source")]
    if s.source == SOURCE_HOST:
        return ctx.finding(PASS, f"{len(s)} steps from host step markers ({s.marker!r}).", metrics)
    if s.source == SOURCE_DEVICE:
        return ctx.finding(INFO, f"{len(s)} steps from the device's saved Steps line (no host markers).", metrics)
    if s.source == SOURCE_FUNCTIONS:
        return ctx.finding(INFO, f"No step markers: {len(s)} steps taken from the calls of Keras's {s.marker!r} "
                           "(one per execution; with steps_per_execution > 1 each holds several steps).", metrics)  # fmt: skip
    return ctx.finding(WARNING, "No step markers: the whole capture is analysed as one step.", metrics)


@check(
    id="offload.small-model",
    title="Enough device work per step to pay for a GPU",
    section="capture",
    needs_gpu=True,
    anchor="#overview",
    thresholds={"max_compute_ms": Threshold(1.0, "ms", "device compute per step below which the model is small")},
    recommendation="""
Each step runs very little device work, while copies and kernel launches take longer than the
computation itself. Offloading such a small model to a GPU may not pay off: try a larger batch so
each step does more work, or run it on the CPU.""",
)
def small_model(ctx: Context):
    a = ctx.a
    b = a.breakdown_ms()
    compute = b["device_compute"] + b["device_collectives"]
    overhead = b["memcpy_h2d"] + b["memcpy_d2h"] + b["memcpy_d2d"] + b["kernel_launch_wait"]
    metrics = [
        Metric("compute_ms_per_step", compute, "ms", "device compute per step"),
        Metric("overhead_ms_per_step", overhead, "ms", "copies and launch wait per step"),
        Metric("overhead_pct", pct(overhead, ms(ctx.step_ps)), "%", "share of step time"),
    ]
    if compute < ctx.t["max_compute_ms"] and overhead > compute:
        return ctx.finding(
            WARNING,
            f"{compute:.3f} ms of device compute per step against {overhead:.3f} ms of copies and launch "
            f"wait ({fmt_pct(pct(overhead, ms(ctx.step_ps)))} of the step).",
            metrics,
        )
    return ctx.finding(PASS, f"{compute:.3f} ms of device compute per step.", metrics)
