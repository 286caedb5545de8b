"""Texts and thresholds that two checks share (each check still declares its own); not a check module."""

from __future__ import annotations

from tb_gpu_advisor.checks.base import Threshold
from tb_gpu_advisor.measures import MULTI_WORKER_LOADER, Device, tf_data_present

INPUT_RECOMMENDATION = {
    "default": """
The step waits for its input. Check the pipeline with the tf.data performance guide: `prefetch` at
the end of the pipeline, `map(..., num_parallel_calls=tf.data.AUTOTUNE)`, `cache` after expensive
work that does not change between epochs, and `interleave` to read files in parallel. To confirm,
run the synthetic-data experiment: replace the dataset with random in-memory data of the same shape
(`tf.data.Dataset.from_tensors(batch).repeat()`); if the step time drops to match, the pipeline is
the bottleneck, and a well-built pipeline gives about the same step time with real and synthetic
data.""",
    "pytorch": """
The step waits for its input: the DataLoader does not keep up. Load in worker processes
(`DataLoader(..., num_workers=N)`, start with the number of CPU cores per GPU), keep them alive across
epochs (`persistent_workers=True`), let each prefetch a few batches (`prefetch_factor`), and copy from
pinned memory without blocking (`pin_memory=True`, `.to(device, non_blocking=True)`). To confirm, run
with random tensors of the same shape instead of the dataset: if the step time drops to match, the
input pipeline is the bottleneck.""",
    "jax": """
The step waits for its input. Feed JAX from a pipeline that works ahead of the device: tf.data or Grain
with `prefetch`, parallel `map`, and `cache`, and move batches to the device ahead of time (for example
with `jax.device_put` on the next batch while the current step runs). To confirm, run with random
arrays of the same shape: if the step time drops to match, the input pipeline is the bottleneck.""",
}
INPUT_SNIPPET = {
    "default": """dataset = (tf.data.TFRecordDataset(files, num_parallel_reads=tf.data.AUTOTUNE)
           .map(parse, num_parallel_calls=tf.data.AUTOTUNE)
           .batch(batch_size)
           .prefetch(tf.data.AUTOTUNE))
# synthetic-data experiment: same shapes, no input work
synthetic = tf.data.Dataset.from_tensors(next(iter(dataset))).repeat()""",
    "pytorch": """loader = torch.utils.data.DataLoader(dataset, batch_size=batch_size, num_workers=8,
                                     pin_memory=True, persistent_workers=True, prefetch_factor=4)
for x, y in loader:
    x, y = x.to("cuda", non_blocking=True), y.to("cuda", non_blocking=True)""",
    "jax": """ds = ds.map(parse, num_parallel_calls=tf.data.AUTOTUNE).batch(batch_size).prefetch(tf.data.AUTOTUNE)
for batch in ds.as_numpy_iterator():
    state = train_step(state, jax.device_put(batch))""",
}
INPUT_THRESHOLDS = {
    "warning": Threshold(5.0, "%", "share of step time waiting for input (moderate)"),
    "critical": Threshold(20.0, "%", "share of step time waiting for input (high)"),
}
COPY_THRESHOLDS = {
    "warning": Threshold(3.0, "%", "step time in copies (beyond the input) while compute is idle"),
    "critical": Threshold(15.0, "%", "step time in copies (beyond the input) while compute is idle (high)"),
}
# Assumed speed-up of Tensor Core GEMM/conv kernels over their fp32 counterparts: the guide's "up to
# about 3x" for mixed precision on Volta and newer. Savings that use it say so.
TENSOR_CORE_SPEEDUP = 3.0
# The 16-bit share of matmul/conv time at which mixed precision counts as on (precision.mixed-off's
# threshold; fp16-no-tensorcore and dynamic-loss-scale read the same, overridden or not).
MIXED_ON = Threshold(10.0, "%", "16-bit share of matmul/convolution time below which mixed precision is off")
SERIALIZED_INDEX = Threshold(0.5, "", "serialisation index: 0 all GPUs at once, 1 one after another")


# -- advice that follows the GPU's architecture ------------------------------------------------------
# The 16-bit formats each architecture runs on its matrix units: NVIDIA Volta and Turing (compute
# capability 7.x) have fp16 Tensor Cores only; Ampere (8.0) and newer add bf16 and TF32. AMD's CDNA
# GPUs run fp16 and bf16 on matrix cores (MFMA instructions); only some kernels' names say so
# (classify.AMD_MATRIX), so the Tensor Core checks say nothing on AMD GPUs (base.amd_not_judged).


def oldest(devices: list[Device]) -> Device:
    """The device whose matrix units do the least (the advice must hold on every GPU of the run)."""
    return min(devices, key=lambda d: (d.bf16_tensor_cores or d.matrix_cores, d.compute_capability or (99, 0)))


def read_from(device: Device) -> str:
    """What the advice read of the GPU, as a sentence."""
    if device.is_amd:
        return f"Read from the profile: {device.describe()}, with matrix cores (MFMA) for fp16 and bf16."
    if device.bf16_tensor_cores:
        return f"Read from the profile: {device.describe()}, with Tensor Cores for fp16, bf16 and TF32."
    return (
        f"Read from the profile: {device.describe()}, with fp16 Tensor Cores; bf16 and TF32 Tensor Cores "
        "need compute capability 8.0 (Ampere) or newer."
    )


def mixed_precision_advice(framework: str, device: Device, tf32_on: bool = False) -> tuple[str, str]:
    """precision.mixed-off's recommendation and snippet for a framework and the run's least capable GPU;
    `tf32_on`: the fp32 matmuls already run in TF32 (measures.Applied), so TF32 is not advised again."""
    amd, bf16 = device.is_amd, device.bf16_tensor_cores or device.matrix_cores
    units = "matrix cores (MFMA)" if amd else "Tensor Cores"
    head = f"Almost all matmul and convolution time runs in 32-bit on a GPU with {units}. "
    if framework == "pytorch":
        if bf16:
            rec = head + (
                "Run the forward pass and loss under `torch.autocast` with `dtype=torch.bfloat16`: bf16 "
                "keeps fp32's range, so it needs no loss scaling."
            )
            if not amd and not tf32_on:
                rec += ' For the fp32 matmuls that remain, allow TF32 (`torch.set_float32_matmul_precision("high")`).'
            # ROCm builds of PyTorch name the GPU's device type as CUDA builds do: read it from the tensor
            device_type = "x.device.type" if amd else '"cuda"'
            snippet = f"""with torch.autocast(device_type={device_type}, dtype=torch.bfloat16):
    loss = loss_fn(model(x), y)
loss.backward()"""
        else:
            rec = head + (
                "This GPU has no bf16 Tensor Cores: run the forward pass and loss under `torch.autocast` "
                "with `dtype=torch.float16`, and scale the loss with `torch.amp.GradScaler` so small "
                "gradients do not underflow in fp16. On Volta and newer GPUs fp16 gives up to about 3x "
                "over fp32."
            )
            snippet = """scaler = torch.amp.GradScaler("cuda")
with torch.autocast(device_type="cuda", dtype=torch.float16):
    loss = loss_fn(model(x), y)
scaler.scale(loss).backward()
scaler.step(optimizer)
scaler.update()"""
    elif framework == "jax":
        if bf16:
            rec = head + (
                "Keep parameters in float32 and compute in bfloat16 (cast inputs and parameters with "
                "`jnp.bfloat16` in the forward pass, or set `dtype=jnp.bfloat16` on Flax layers); bf16 "
                "needs no loss scaling."
            )
            if not amd and not tf32_on:
                rec += ' For fp32 matmuls, `jax.default_matmul_precision("tensorfloat32")` allows TF32.'
            snippet = "logits = model.apply(params, x.astype(jnp.bfloat16))"
        else:
            rec = head + (
                "This GPU has no bf16 Tensor Cores: keep parameters in float32 and compute in float16 "
                "(cast inputs and parameters with `jnp.float16`, or `dtype=jnp.float16` on Flax layers), "
                "with loss scaling so small gradients do not underflow (for example `jmp`'s "
                "`DynamicLossScale`)."
            )
            snippet = "logits = model.apply(params, x.astype(jnp.float16))  # with loss scaling"
    else:
        rec = head + (
            "Turn on Keras mixed precision (`mixed_float16`; the Keras optimizer then scales the loss "
            "automatically): fp16 gives up to about 3x over fp32. Enable mixed precision and XLA one at "
            "a time and measure each."
        )
        if bf16:
            rec += " `mixed_bfloat16` also runs on this GPU's matrix units and needs no loss scaling."
        snippet = """tf.keras.mixed_precision.set_global_policy("mixed_float16")"""
    return rec + "\n\n" + read_from(device), snippet


def tensor_core_advice(framework: str, device: Device, channels_last: bool | None = False) -> str | None:
    """tensorcore.unused's PyTorch recommendation for the run's least capable GPU (None: the declared one).
    `channels_last` (measures.Applied): True, the convolutions already run without layout conversions;
    None, there is none: channels_last is not advised."""
    if framework != "pytorch":
        return None
    if device.bf16_tensor_cores:
        precision = (
            'Run them in 16-bit with `torch.autocast("cuda", dtype=torch.bfloat16)` (see precision.mixed-off), '
            "and for fp32 matmuls allow TF32 (`torch.backends.cuda.matmul.allow_tf32 = True`, "
            "`torch.backends.cudnn.allow_tf32 = True`)."
        )
    else:
        precision = (
            'Run them in fp16 with `torch.autocast("cuda", dtype=torch.float16)` and a `GradScaler` (see '
            "precision.mixed-off): this GPU has no bf16 or TF32 Tensor Cores."
        )
    layout = (
        " For convolutions, `channels_last` memory format helps cuDNN pick Tensor Core kernels (cuDNN now "
        "converts each convolution's tensors to NHWC and back)."
        if channels_last is False
        else ""
    )
    return (
        "Matmul and convolution kernels that could run on Tensor Cores do not. "
        + precision
        + " Keep dimensions multiples of 8."
        + layout
        + "\n\n"
        + read_from(device)
    )


# -- input advice that starts from what the pipeline already does -------------------------------------
# (what it already does: measures/names.py, `tf_data_present` and `MULTI_WORKER_LOADER`)


def input_advice(framework: str, loader: str, stage_names: list[str]) -> tuple[str, str | None] | None:
    """input.bound's recommendation and snippet when the trace shows the usual fixes already in place
    (a DataLoader with workers, a tf.data pipeline with prefetch or a parallel map); None: the declared one."""
    if framework == "pytorch":
        if MULTI_WORKER_LOADER not in loader:
            return None
        rec = """
The step waits for its input although the DataLoader already loads in worker processes (the trace
shows `_MultiProcessingDataLoaderIter`; it does not record how many). More workers help only while the
CPU has idle cores: check the CPU use of the worker processes before raising `num_workers`. Otherwise
make each batch cheaper to produce: decode and augment less on the CPU (augment whole batches on the
GPU), store the data pre-decoded or smaller, and keep workers alive across epochs
(`persistent_workers=True`). Copy from pinned memory without blocking (`pin_memory=True`,
`.to(device, non_blocking=True)`). To confirm, run with random tensors of the same shape instead of
the dataset: if the step time drops to match, the input pipeline is the bottleneck."""
        return rec, "x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)  # with pin_memory=True"
    if not stage_names:
        return None
    present = tf_data_present(stage_names)
    if not present:
        return None
    todo = [
        (what, advice)
        for what, advice in (
            ("`prefetch`", "`prefetch(tf.data.AUTOTUNE)` at the end of the pipeline"),
            ("a parallel `map`", "`map(..., num_parallel_calls=tf.data.AUTOTUNE)`"),
            ("parallel reads (`interleave`)", "`interleave` (or `num_parallel_reads`) to read files in parallel"),
            ("`cache`", "`cache` after expensive work that does not change between epochs"),
        )
        if what not in present
    ]
    rec = (
        f"The step waits for its input although the pipeline already has {', '.join(present)} (from its "
        "stages in the trace). Look at its busiest stage (see the details): that is where the time goes. "
    )
    if todo:
        rec += "Not in the trace yet: " + "; ".join(a for _, a in todo) + ". "
    rec += (
        "Make the per-element work cheaper (parse and decode less, vectorise the map over batches: `batch` "
        "before `map`), and check the host has cores to spare for the parallel stages. To confirm, run the "
        "synthetic-data experiment: replace the dataset with random in-memory data of the same shape "
        "(`tf.data.Dataset.from_tensors(batch).repeat()`); if the step time drops to match, the pipeline is "
        "the bottleneck."
    )
    return rec, "synthetic = tf.data.Dataset.from_tensors(next(iter(dataset))).repeat()"
