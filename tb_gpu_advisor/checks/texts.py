"""Texts and thresholds that two checks share (each check still declares its own); not a check module."""

from __future__ import annotations

from tb_gpu_advisor.checks.base import Threshold

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
