"""The changes a what-if simulates (graph/fixes/, docs/whatif.md), without NumPy: the command lists
them and refuses an unknown one before importing the analysis."""

# each change (its model in graph/fixes/, `FIXES`) and what it needs of a capture to apply (`WhatIf.not_applied`)
NEEDS = {
    "input": "steps that wait for input (the data loader's or input pipeline's next batch)",
    "syncs": "host-device syncs in its steps that the program can drop (an explicit synchronize, a "
    "tensor read back to the host)",
    "graph": "GPU work launched one op at a time from the host, at least two launches a step",
    "fusion": "element-wise or reduction kernels to fuse",
    "compile": "element-wise or reduction kernels to fuse",
    "bf16": "fp32 or TF32 matrix kernels with a cost it can re-time, on a GPU with bf16 Tensor Cores",
    "fp16": "fp32 or TF32 matrix kernels with a cost it can re-time, on a GPU with fp16 Tensor Cores",
    "tf32": "fp32 matrix kernels (not attention) with a cost it can re-time, on a GPU with TF32 Tensor Cores",
    "channels_last": "cuDNN's NCHW/NHWC layout changes around convolutions (a model in NCHW)",
    "reduce-overhead": "GPU work launched one op at a time from the host, in PyTorch, at least two launches a step",
    "padding": "16-bit or TF32 matrix multiplications with a dimension not a multiple of 8, and their shapes",
    "host": "the host's Python outside ops and dispatch, at least 1% of the steps' time",
    "overlap": "compute that waits for a collective before the optimizer",
    "allocator": "calls of the device allocator (cudaMalloc/cudaFree, hipMalloc/hipFree) in its steady steps: the "
    "caching allocator off, or emptied each step",
    "warmup": "start-up work in its steps: context, stream or module creation, first launches, a warm-up step's "
    "allocations",
}
CHANGES = tuple(NEEDS)

__all__ = ["CHANGES", "NEEDS"]
