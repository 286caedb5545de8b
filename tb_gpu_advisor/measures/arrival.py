"""A job's collectives split into transfer and wait, by when each rank arrives.

A synchronous collective (an NCCL kernel, a gloo span) starts on a rank when that rank reaches it and
ends on every rank at one moment, when the last rank has arrived and the data has moved. So a rank's
time in it is its wait for the last rank plus the transfer: the rank that arrived last has the
shortest time, which is the transfer, and each rank's wait is its time beyond that shortest. This
needs no clock shared between machines: every rank's arrival is read back from the collective's end,
the one moment they share, and only durations are compared (`job.clock-skew` measures how far the
machines' clocks disagree; none of this reads across them).

Each file's digest (`HostDigest.collective_arrivals`, made by `sequence`) holds, per step number, the
step's collectives in the order they start: their kinds (one letter each, `KINDS`) and per collective
its duration, the gap before it (from the end of the rank's previous collective in the step, the
moment every rank shares, or from the step's start for the first), what filled that gap on the rank
(its own device work: compute, or host ops on a CPU-only job; and its input wait) and its end after
the end of the step's first collective. The job pairs the ranks' collectives by step number and order
(`arrivals`): a step is paired when every rank holds the same collectives in it (count and kinds), as
every rank of one process group must call them, and when their ends keep the same distances on every
rank: the ends are shared moments, so the time from one to the next is one duration, measured on each
rank's own clock (`END_TOLERANCE`). Two ranks of a 128-rank job whose `ncclKernel_SendRecv` kernels
are five a step on each, but point-to-point with other peers, end 14 to 134 ms apart in distance: they
are not the same collectives, and are not paired. A step of one collective cannot be checked so.

Per collective: the last to arrive (the shortest duration) and by how much (its arrival behind the
first's: the longest wait), the transfer (that shortest duration), each rank's wait, and the wait
charged to the last rank: the other ranks' mean wait. Why the last rank was late: its lateness behind
the median rank's arrival, split into what it did longer than the median rank in the gap before the
collective (own work, input wait, the rest: the host, launching, Python) and, for a step's first
collective, the part from entering the step late (work before the step's marker, outside the steps).
"""

from __future__ import annotations

import dataclasses
import re
from typing import Sequence

import numpy as np

from tb_gpu_advisor.measures.names import ALLREDUCE
from tb_gpu_advisor.model import intervals as iv
from tb_gpu_advisor.model.arrays import distinct

# the collectives a digest keeps: the first steps whole, up to this many in all (a step longer than this
# keeps its first ones): about 10 KB of a report's JSON
ARRIVALS_MAX = 256
VALUES = 5  # per collective: duration, gap before it, own work and input wait in the gap, end (ns)

# A collective's kind, by its name, one letter (the ranks of a step must agree on them to be paired):
# NCCL's kernels (`ncclKernel_AllReduce_RING_LL_Sum_float`, `ncclDevKernel_SendRecv`), the backends'
# spans (`gloo:all_reduce`, `nccl:all_to_all`), c10d's ops (`c10d::alltoall_base_`), TensorFlow's ops.
KINDS = (
    ("r", re.compile(r"reduce_?scatter|ReduceScatter", re.I)),
    ("a", ALLREDUCE),  # the one all-reduce rule (measures/names.py)
    ("g", re.compile(r"all_?gather|CollectiveGather", re.I)),
    ("t", re.compile(r"all_?to_?all|AllToAll", re.I)),
    ("s", re.compile(r"send_?recv|SendRecv|\bsend\b|\brecv\b|:send|:recv", re.I)),
    ("b", re.compile(r"broadcast|bcast", re.I)),
    ("r", re.compile(r"reduce", re.I)),
    ("p", re.compile(r"barrier", re.I)),
)
KIND_WORDS = {
    "a": "all-reduce",
    "r": "reduce",
    "g": "all-gather",
    "t": "all-to-all",
    "s": "send/recv",
    "b": "broadcast",
    "p": "barrier",
    "x": "collective",
}


def kind_of(name: str) -> str:
    """One letter for a collective's kind (KINDS), `x` when its name says none."""
    return next((k for k, rx in KINDS if rx.search(name)), "x")


Step = tuple[int, int, str, tuple[int, ...]]  # (step number, collectives in it, kinds, VALUES ints each)


def sequence(
    numbers: np.ndarray,
    step_start: np.ndarray,
    step: np.ndarray,
    start: np.ndarray,
    end: np.ndarray,
    kinds: Sequence[str],
    work: iv.Intervals,
    inputs: iv.Intervals,
) -> tuple[Step, ...]:
    """A file's collectives per step (see the module's doc): `numbers` and `step_start` the steps' numbers
    and starts, and per collective its step index (-1 outside every step), start, end (ps) and kind;
    `work` the rank's own work, `inputs` its input wait. Values in ns, at most ARRIVALS_MAX collectives."""
    inside = np.flatnonzero(step >= 0)
    order = inside[np.lexsort((start[inside], step[inside]))]
    out: list[Step] = []
    kept = 0
    wait_alone = iv.subtract(inputs, work)  # an input wait while the rank's own work runs costs nothing
    for s in distinct(step[order]).tolist():
        if kept >= ARRIVALS_MAX:
            break
        sel = order[step[order] == s]
        st, en = start[sel], end[sel]
        ref = np.minimum(np.r_[step_start[s], np.maximum.accumulate(en)[:-1]], st)  # overlapping: no gap
        take = min(len(sel), ARRIVALS_MAX - kept)
        vals = np.stack(
            [en - st, st - ref, iv.measure_in(work, ref, st), iv.measure_in(wait_alone, ref, st), en - en[0]], axis=1
        )
        flat = (vals[:take] // 1000).astype(np.int64).ravel().tolist()
        out.append((int(numbers[s]), len(sel), "".join(kinds[i] for i in sel[:take].tolist()), tuple(flat)))
        kept += take
    return tuple(out)


def last_arriving(seqs: list[tuple[Step, ...]]) -> tuple[Step, ...]:
    """One file's steps from its GPUs' (`seqs`, each GPU's `sequence`): where every GPU holds the same
    collectives, each collective as its last-arriving GPU (the shortest) saw it, the file's arrival;
    else the first GPU's."""
    seqs = [s for s in seqs if s]
    if len(seqs) < 2:
        return seqs[0] if seqs else ()
    head = [x[:3] for x in seqs[0]]
    if any([x[:3] for x in s] != head for s in seqs[1:]):
        return seqs[0]
    out = []
    for k, h in enumerate(head):
        v = np.array([s[k][3] for s in seqs], np.int64).reshape(len(seqs), -1, VALUES)
        pick = np.argmin(v[:, :, 0], axis=0)
        out.append((*h, tuple(v[pick, np.arange(v.shape[1])].ravel().tolist())))
    return tuple(out)


@dataclasses.dataclass(frozen=True, slots=True)
class Paired:
    """One collective, paired across the ranks: who arrived last and by how much, and why (ms)."""

    step: int  # the step number
    index: int  # its place among the step's collectives
    kind: str  # KINDS' letter
    last: int  # the row that arrived last (shortest time in it)
    first: int  # the row that arrived first
    lag_ms: float  # the last arrival behind the first: the longest wait
    alone_ms: float  # the last arrival behind the next-latest: what the collective waited for that rank alone
    transfer_ms: float  # the shortest time in it: the transfer
    charged_ms: float  # the other ranks' mean wait, charged to the last rank
    late_ms: float  # the last arrival behind the median rank's
    before_ms: float  # of it, from entering the step late (a step's first collective only)
    work_ms: float  # from its own work in the gap before the collective, beyond the median rank's
    input_ms: float  # from its input wait there, beyond the median rank's
    host_ms: float  # the rest: the host, launching, Python
    waits: tuple[float | None, ...] = ()  # per row, its wait in it (None: a row not paired)

    @property
    def kind_word(self) -> str:
        return KIND_WORDS.get(self.kind, "collective")


CAUSES = ("before_ms", "work_ms", "input_ms", "host_ms")
# a collective's lateness parts as the job's JSON names them
CAUSE_KEYS = {"before_ms": "before_step_ms", "work_ms": "compute_ms", "input_ms": "input_ms", "host_ms": "host_ms"}
TIE_MS = 0.001  # a collective whose ranks all arrive within this (1 µs) has no late rank


@dataclasses.dataclass(frozen=True, slots=True)
class Arrivals:
    """The ranks' collectives paired (see the module's doc); per-row values per step in ms, None for a
    row with nothing paired."""

    steps: int  # step numbers paired on every row
    unpaired: int  # steps with the same collectives on every row whose ends keep different distances
    collectives: tuple[Paired, ...]
    wait_ms: tuple[float | None, ...]  # per row: time in paired collectives beyond their transfer
    transfer_ms: tuple[float | None, ...]  # per row: the transfer of the paired collectives
    charged_ms: tuple[float | None, ...]  # per row: the others' wait charged to it
    alone_ms: tuple[float | None, ...]  # per row: what the collectives it was last at waited for it alone
    last: tuple[float | None, ...]  # per row: collectives it arrived last at
    late_steps: tuple[int | None, ...]  # per row: paired steps in which it arrived last at one or more
    causes: tuple[dict[str, float] | None, ...]  # per row: its lateness where it was last, by CAUSES

    @property
    def per_step(self) -> float:
        """Collectives paired per step."""
        return len(self.collectives) / self.steps if self.steps else 0.0

    def waited_for(self, row: int) -> list[float | None]:
        """Per row, per step, its wait in the collectives `row` arrived last at (None: not paired)."""
        out: list[float | None] = [None if w is None else 0.0 for w in self.wait_ms]
        for c in self.collectives:
            if c.last == row:
                for i, w in enumerate(c.waits):
                    if w is not None and out[i] is not None:
                        out[i] = (out[i] or 0.0) + w / self.steps
        return out


# Ends of one collective are one moment; a rank records it a little late when its host is busy (NCCL
# kernels' ends within 1-7 µs on 8 V100s; gloo spans within 0.1 ms on this 2-core machine, up to 18 ms
# in single steps under load). The distance between two ends agrees across ranks within this much of it,
# and at least END_FLOOR_NS.
END_TOLERANCE = 0.05
END_FLOOR_NS = 500_000


def _ends_agree(ends: np.ndarray) -> bool:
    """Whether the rows' collective ends (rows x collectives, each after the step's first end, ns) keep
    the same distances from one to the next on every row."""
    if ends.shape[1] < 2:
        return True
    gaps = np.diff(ends, axis=1).astype(np.float64)
    spread = gaps.max(axis=0) - gaps.min(axis=0)
    return bool((spread <= np.maximum(END_FLOOR_NS, END_TOLERANCE * np.abs(np.median(gaps, axis=0)))).all())


def arrivals(digests: Sequence[object]) -> Arrivals:
    """Pair the rows' collectives (each row has `collective_arrivals` and `steps`): rows without steps or
    collectives get None; nothing is paired with fewer than two rows that have them."""
    rows = [getattr(d, "collective_arrivals", ()) if getattr(d, "steps", 0) else () for d in digests]
    have = [i for i, r in enumerate(rows) if r]
    n = len(rows)
    by_step = [{s[0]: s for s in rows[i]} for i in have]
    common = sorted(set.intersection(*(set(b) for b in by_step))) if len(have) >= 2 else []
    alike = [s for s in common if len({b[s][1:3] for b in by_step}) == 1]
    paired = [
        s
        for s in alike
        if _ends_agree(np.array([b[s][3] for b in by_step], np.int64).reshape(len(have), -1, VALUES)[:, :, 4])
    ]
    m = len(have)
    wait, transfer, charged, alone, last, late_steps = (np.zeros(m) for _ in range(6))
    causes = np.zeros((m, len(CAUSES)))
    out: list[Paired] = []
    for s in paired:
        kinds = by_step[0][s][2]
        v = np.array([b[s][3] for b in by_step], np.float64).reshape(m, -1, VALUES) / 1e6  # ms
        dur, gap, work, inp = v[:, :, 0], v[:, :, 1], v[:, :, 2], v[:, :, 3]  # and the end
        shortest = dur.min(axis=0)
        w = dur - shortest
        wait += w.sum(axis=1)
        transfer += shortest.sum()
        med_dur, med_gap = np.median(dur, axis=0), np.median(gap, axis=0)
        med_work, med_inp = np.median(work, axis=0), np.median(inp, axis=0)
        late_here = np.zeros(m, bool)
        for k in range(dur.shape[1]):
            lo, hi = int(np.argmin(dur[:, k])), int(np.argmax(dur[:, k]))
            late = float(med_dur[k] - dur[lo, k])
            # a step's first collective is timed from the rank's own step start: lateness beyond what the
            # rank did longer than the median rank since then is from entering the step late
            before = max(late - max(float(gap[lo, k] - med_gap[k]), 0.0), 0.0) if k == 0 else 0.0
            rest = late - before
            parts = np.array([max(work[lo, k] - med_work[k], 0.0), max(inp[lo, k] - med_inp[k], 0.0)])
            if parts.sum() > rest:
                parts *= rest / parts.sum()
            row_waits: list[float | None] = [None] * n
            for j, i in enumerate(have):
                row_waits[i] = float(w[j, k])
            c = Paired(
                step=s,
                index=k,
                kind=kinds[k] if k < len(kinds) else "x",
                last=have[lo],
                first=have[hi],
                lag_ms=float(w[hi, k]),
                alone_ms=float(np.partition(dur[:, k], 1)[1] - dur[lo, k]),
                transfer_ms=float(shortest[k]),
                charged_ms=float(np.delete(w[:, k], lo).mean()),
                late_ms=late,
                before_ms=before,
                work_ms=float(parts[0]),
                input_ms=float(parts[1]),
                host_ms=rest - float(parts.sum()),
                waits=tuple(row_waits),
            )
            out.append(c)
            if c.lag_ms <= TIE_MS:  # every rank arrived together: no one is late
                continue
            charged[lo] += c.charged_ms
            late_here[lo] = True
            alone[lo] += c.alone_ms
            last[lo] += 1
            causes[lo] += (c.before_ms, c.work_ms, c.input_ms, c.host_ms)
        late_steps += late_here
    steps = len(paired)

    def per_row(values: np.ndarray) -> tuple[float | None, ...]:
        full: list[float | None] = [None] * n
        for j, i in enumerate(have):
            full[i] = float(values[j]) / steps if steps else None
        return tuple(full)

    cause_rows: list[dict[str, float] | None] = [None] * n
    for j, i in enumerate(have):
        cause_rows[i] = {c: float(x) / steps for c, x in zip(CAUSES, causes[j])} if steps else None
    return Arrivals(
        steps=steps,
        unpaired=len(alike) - steps,
        collectives=tuple(out),
        wait_ms=per_row(wait),
        transfer_ms=per_row(transfer),
        charged_ms=per_row(charged),
        alone_ms=per_row(alone),
        last=per_row(last),
        late_steps=tuple(None if x is None else round(x * steps) for x in per_row(late_steps)),
        causes=tuple(cause_rows),
    )
