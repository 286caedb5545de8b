"""`channels_last`: convolutions' tensors kept in NHWC (`model.to(memory_format=torch.channels_last)`),
so that cuDNN's NCHW <-> NHWC layout changes around each convolution are gone, their launches too."""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor.graph.facts import LAYOUT, StepFacts
from tb_gpu_advisor.graph.simulate import Changes
from tb_gpu_advisor.model.profile import Kind

# the model's relative error on held-out pairs (`python benchmarks/whatif_pairs.py`): none holds
# channels_last alone; with bf16 on the ResNet pairs, whose after-runs have both: ResNet-18 +1%,
# ResNet-50 (batch 256) -0%; at least MIN_ERROR
ERROR = 0.10


def layout_kernels(f: StepFacts) -> np.ndarray:
    """cuDNN's layout changes (`nchwToNhwcKernel`, `nhwcToNchwKernel`, ...): kernels, not matrix ops."""
    g = f.g
    return (g.d_kind == Kind.KERNEL) & ~f.matrix() & f.by_name(g.d_name, LAYOUT.search)


def channels_last(f: StepFacts, c: Changes) -> str | None:
    g = f.g
    layout = layout_kernels(f)
    if not layout.any():
        return None
    removed = float(c.d_dur[layout].sum())
    d_dur = c.d_dur.copy()
    d_dur[layout] = 0
    c.d_dur = d_dur
    c.d_gap = np.where(layout, 0, c.d_gap)
    # their launch calls go too (cuDNN's, inside the convolution op: the op's dispatch stays), where
    # they launched nothing else
    layout_launch = np.zeros(g.host_points, bool)
    layout_launch[g.d_launch[layout]] = True
    other = np.zeros(g.host_points, bool)
    other[g.d_launch[~layout]] = True
    gone = layout_launch & ~other
    c.h_dur = np.where(gone, 0, c.h_dur)
    return (
        f"channels_last: cuDNN's layout changes gone ({int(layout.sum()) / g.steps:.0f} kernels, "
        f"{removed / g.steps / 1e9:.2f} ms a step, and {int(gone.sum()) / g.steps:.0f} launches)"
    )
