"""The forward compute each rank of a real DDP capture timed itself (`scripts/capture_torch_ddp.py
--timings DIR`), apart from the profiler: what tells a rank the machine slowed from one the test made
slow."""

from __future__ import annotations

import json
import os
import statistics

# a rank whose forward compute, timed in its own process apart from the profiler, is this much slower
# than the other ranks' in every cycle was slow for the whole run, whatever it was asked to do
SLOW_IN_EVERY_CYCLE = 1.10


def forward_ms(timings: str) -> dict[int, list[float]]:
    """Per rank, its mean forward compute per profiled step (wall ms) in each cycle, from the capture's
    own clock (`capture_torch_ddp.py --timings`), not from the trace."""
    out = {}
    for name in sorted(os.listdir(timings)):
        with open(os.path.join(timings, name)) as f:
            d = json.load(f)
        out[d["rank"]] = [1000 * statistics.fmean(wall for wall, _ in cycle) for cycle in d["cycles"]]
    return out


def slowed_in_every_cycle(fwd: dict[int, list[float]], rank: int) -> bool:
    """Whether `rank`'s forward compute was SLOW_IN_EVERY_CYCLE times the median other rank's in every cycle."""
    others = [r for r in fwd if r != rank]
    return all(m > SLOW_IN_EVERY_CYCLE * statistics.median(fwd[r][c] for r in others) for c, m in enumerate(fwd[rank]))
