"""`compile`: torch.compile (Inductor) or XLA: fusion, and for PyTorch Inductor's padding of matmul
dimensions (its `shape_padding`)."""

from __future__ import annotations

from tb_gpu_advisor.graph.facts import StepFacts
from tb_gpu_advisor.graph.fixes.fusion import fusion
from tb_gpu_advisor.graph.fixes.padding import padding
from tb_gpu_advisor.graph.simulate import Changes

# the model's relative error on its held-out pairs (`python benchmarks/whatif_pairs.py`):
# vit_bf16 -> vit_bf16_compile +43% (a base step the profiler's cost leaves 12% slow), gpt2_bf16 ->
# gpt2_bf16_compile -4%
ERROR = 0.45


def compile(f: StepFacts, c: Changes) -> str | None:
    fused = fusion(f, c)
    if fused is None:
        return None
    if f.framework == "pytorch" and padding(f, c):
        fused += "; matmul dimensions padded as Inductor does"
    return fused
