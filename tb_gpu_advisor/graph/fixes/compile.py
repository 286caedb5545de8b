"""`compile`: torch.compile (Inductor) or XLA: fusion, and for PyTorch Inductor's padding of matmul
dimensions (its `shape_padding`)."""

from __future__ import annotations

from tb_gpu_advisor.graph.facts import StepFacts
from tb_gpu_advisor.graph.fixes.fusion import fusion
from tb_gpu_advisor.graph.fixes.padding import padding
from tb_gpu_advisor.graph.simulate import Changes


def compile(f: StepFacts, c: Changes) -> str | None:
    fused = fusion(f, c)
    if fused is None:
        return None
    if f.framework == "pytorch" and padding(f, c):
        fused += "; matmul dimensions padded as Inductor does"
    return fused
