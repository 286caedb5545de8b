"""The fix models, a module each with its constants and their sources (docs/whatif.md): each takes the
step graph's facts and the changes made so far, applies its fix to them, and says what it did in a
sentence (None where the fix does not apply). FIXES maps each change `graph.changes.NEEDS` names to
its model."""

from __future__ import annotations

from typing import Callable

from tb_gpu_advisor.graph.changes import NEEDS
from tb_gpu_advisor.graph.facts import StepFacts
from tb_gpu_advisor.graph.fixes.channels_last import channels_last
from tb_gpu_advisor.graph.fixes.compile import compile
from tb_gpu_advisor.graph.fixes.fusion import fusion
from tb_gpu_advisor.graph.fixes.graph import graph
from tb_gpu_advisor.graph.fixes.host import host
from tb_gpu_advisor.graph.fixes.input import input
from tb_gpu_advisor.graph.fixes.overlap import overlap
from tb_gpu_advisor.graph.fixes.padding import padding
from tb_gpu_advisor.graph.fixes.precision import bf16, fp16, tf32
from tb_gpu_advisor.graph.fixes.reduce_overhead import reduce_overhead
from tb_gpu_advisor.graph.fixes.syncs import syncs
from tb_gpu_advisor.graph.simulate import Changes

Fix = Callable[[StepFacts, Changes], "str | None"]

FIXES: dict[str, Fix] = {
    "input": input,
    "syncs": syncs,
    "graph": graph,
    "fusion": fusion,
    "compile": compile,
    "bf16": bf16,
    "fp16": fp16,
    "tf32": tf32,
    "channels_last": channels_last,
    "reduce-overhead": reduce_overhead,
    "padding": padding,
    "host": host,
    "overlap": overlap,
}
assert list(FIXES) == list(NEEDS), "a change is named in graph/changes.py and modelled here"

# each model's relative error on the held-out pairs of its kind of fix (docs/whatif.md), which every
# saving it predicts is stated with
ERRORS: dict[str, float] = {name: 0.25 for name in FIXES}

__all__ = ["ERRORS", "FIXES", "Fix"]
