"""The forward compute each rank of a real DDP capture timed itself, and when it reached the gradients'
all-reduce (`scripts/capture_torch_ddp.py --timings DIR`), apart from the profiler: what tells a rank
the machine slowed from one the test made slow."""

from __future__ import annotations

import json
import os
import statistics

# a rank whose forward compute, timed in its own process apart from the profiler, is this much slower
# than the other ranks' in every cycle was slow for the whole run, whatever it was asked to do
SLOW_IN_EVERY_CYCLE = 1.10
# ... or that reached the all-reduce last in every step of every cycle, on average this share of the step
# behind the first rank (half the share job.straggler charges a rank: a capture nearer it is redone)
LATE_IN_EVERY_CYCLE = 0.05


def forward_ms(timings: str) -> dict[int, list[float]]:
    """Per rank, its mean forward compute per profiled step (wall ms) in each cycle, from the capture's
    own clock (`capture_torch_ddp.py --timings`), not from the trace."""
    out = {}
    for name in sorted(os.listdir(timings)):
        with open(os.path.join(timings, name)) as f:
            d = json.load(f)
        out[d["rank"]] = [1000 * statistics.fmean(t[0] for t in cycle) for cycle in d["cycles"]]
    return out


def late_in_every_cycle(timings: str) -> list[int]:
    """The ranks that reached the gradients' all-reduce last in every step of every cycle, on average
    LATE_IN_EVERY_CYCLE of the step or more behind the first (the machine's monotonic clock, which every
    process on it shares)."""
    arrive: dict[int, list[list[float]]] = {}
    for name in sorted(os.listdir(timings)):
        with open(os.path.join(timings, name)) as f:
            d = json.load(f)
        arrive[d["rank"]] = [[t[2] for t in cycle] for cycle in d["cycles"]]
    if len(arrive) < 2:
        return []
    out = []
    for rank, cycles in arrive.items():
        late_everywhere = True
        for c, times in enumerate(cycles):
            first = [min(arrive[r][c][i] for r in arrive) for i in range(len(times))]
            step = statistics.median(b - a for a, b in zip(first, first[1:])) if len(first) > 1 else 0.0
            last = all(t >= max(arrive[r][c][i] for r in arrive) for i, t in enumerate(times))
            behind = statistics.fmean(t - f for t, f in zip(times, first))
            late_everywhere &= last and step > 0 and behind >= LATE_IN_EVERY_CYCLE * step
        if late_everywhere:
            out.append(rank)
    return out


def slowed_in_every_cycle(fwd: dict[int, list[float]], rank: int) -> bool:
    """Whether `rank`'s forward compute was SLOW_IN_EVERY_CYCLE times the median other rank's in every cycle."""
    others = [r for r in fwd if r != rank]
    return all(m > SLOW_IN_EVERY_CYCLE * statistics.median(fwd[r][c] for r in others) for c, m in enumerate(fwd[rank]))
