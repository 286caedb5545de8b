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


def _cycles(timings: str) -> dict[int, list[list[list[float]]]]:
    """Per rank, its profiled steps in each cycle as it timed them: [forward wall s, forward thread CPU s,
    when it reached the all-reduce (monotonic s)]."""
    out = {}
    for name in sorted(os.listdir(timings)):
        with open(os.path.join(timings, name)) as f:
            d = json.load(f)
        out[d["rank"]] = d["cycles"]
    return out


def forward_ms(timings: str) -> dict[int, list[float]]:
    """Per rank, its mean forward compute per profiled step (wall ms) in each cycle, from the capture's
    own clock (`capture_torch_ddp.py --timings`), not from the trace."""
    return {r: [1000 * statistics.fmean(t[0] for t in cycle) for cycle in cs] for r, cs in _cycles(timings).items()}


def late_in_every_cycle(timings: str) -> list[int]:
    """The ranks that reached the gradients' all-reduce last in every step of every cycle, on average
    LATE_IN_EVERY_CYCLE of the step or more behind the first (the machine's monotonic clock, which every
    process on it shares)."""
    arrive = {r: [[t[2] for t in cycle] for cycle in cs] for r, cs in _cycles(timings).items()}
    if len(arrive) < 2:
        return []
    late = set(arrive)
    for c in range(min(len(cs) for cs in arrive.values())):
        steps = list(zip(*(arrive[r][c] for r in arrive)))  # each step: every rank's arrival
        first, last = [min(s) for s in steps], [max(s) for s in steps]
        step = statistics.median(b - a for a, b in zip(first, first[1:])) if len(first) > 1 else 0.0
        for r in list(late):
            times = arrive[r][c]
            behind = statistics.fmean(t - f for t, f in zip(times, first))
            if not (step > 0 and times == last and behind >= LATE_IN_EVERY_CYCLE * step):
                late.discard(r)
    return sorted(late)


def slowed_in_every_cycle(fwd: dict[int, list[float]], rank: int) -> bool:
    """Whether `rank`'s forward compute was SLOW_IN_EVERY_CYCLE times the median other rank's in every cycle."""
    others = [r for r in fwd if r != rank]
    return all(m > SLOW_IN_EVERY_CYCLE * statistics.median(fwd[r][c] for r in others) for c, m in enumerate(fwd[rank]))
