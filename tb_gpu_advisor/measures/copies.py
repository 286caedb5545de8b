"""Copies beyond the model's input on one GPU: per direction, the time they leave compute idle, the
device-to-host copies in mid-step, and the ops next to each."""

from __future__ import annotations

import dataclasses

import numpy as np

from tb_gpu_advisor.measures.window import Window, gpu_window
from tb_gpu_advisor.model import intervals as iv
from tb_gpu_advisor.model.profile import MEMCPY_KINDS, EventTable, Kind, Profile
from tb_gpu_advisor.model.steps import Steps

COPY_COLUMNS = ("start_ps", "dur_ps", "name", "kind", "op", "stream", "step")
DIRECTIONS = ((Kind.MEMCPY_H2D, "H2D"), (Kind.MEMCPY_D2H, "D2H"), (Kind.MEMCPY_D2D, "D2D"), (Kind.MEMCPY_P2P, "P2P"))


@dataclasses.dataclass(frozen=True, slots=True)
class CopyDirection:
    """The copies of one direction in the steps, per step."""

    direction: str  # H2D, D2H, D2D or P2P
    count_per_step: float
    mb_per_step: float
    ms_per_step: float


@dataclasses.dataclass(frozen=True, slots=True)
class CopyRow:
    """The copies of one name and op."""

    copy: str
    op: str
    count_per_step: float
    mb_per_step: float
    blocking_ms_per_step: float  # the time they leave compute idle
    before: str  # the op of the kernel that ends before the first of them
    after: str  # the op of the kernel that starts after it


@dataclasses.dataclass(frozen=True, slots=True)
class Copies:
    """Copies beyond the model's input on one GPU."""

    blocking_ps_per_step: float  # the time they leave compute idle, per step
    directions: tuple[CopyDirection, ...]  # in DIRECTIONS' order
    mid_step_d2h_per_step: float  # device-to-host copies that end before the step's last work
    rows: tuple[CopyRow, ...]  # most blocking first, at most 10
    windows: tuple[Window, ...]  # the three copies that block longest


def copies(
    p: Profile,
    device_id: int,
    events: EventTable,
    input_copies: np.ndarray,
    compute_busy: tuple[iv.Intervals, ...],
    steps: Steps,
    last_work: np.ndarray,
) -> Copies:
    """A GPU's copies other than `input_copies` (a mask over `events`), against `compute_busy` and the
    last end of each step's work (`last_work`, -1 for none)."""
    ev = events
    at = np.flatnonzero(np.isin(ev.kind, np.asarray(MEMCPY_KINDS, np.int8)) & ~input_copies)
    # the GPU's bytes column is read here only, at its copies: not made for every event
    c = ev.take(at, COPY_COLUMNS).with_column("bytes", ev.peek_at("bytes", at))
    n = max(len(steps), 1)
    blocking_set = iv.subtract_each(iv.union(c.start_ps, c.end_ps), compute_busy)
    blocking = iv.measure_in(blocking_set, steps.start_ps, steps.end_ps).astype(float)
    directions = []
    for kind, label in DIRECTIONS:
        sel = (c.kind == kind) & (c.step >= 0)
        directions.append(
            CopyDirection(
                label,
                int(sel.sum()) / n,
                float(c.bytes[sel].sum()) / 1e6 / n,
                float(c.dur_ps[sel].sum()) / 1e9 / n,
            )
        )
    k = c.step
    mid = (c.kind == Kind.MEMCPY_D2H) & (k >= 0) & (c.end_ps < np.where(k >= 0, last_work[np.maximum(k, 0)], 0) - 1)
    blk = iv.measure_in(blocking_set, c.start_ps, c.end_ps)
    kern = ev.take(np.isin(ev.kind, np.array([Kind.KERNEL, Kind.COLLECTIVE], np.int8)), ("start_ps", "dur_ps", "op"))
    prev_op = np.full(len(c), -1, np.int64)
    next_op = np.full(len(c), -1, np.int64)
    if len(kern) and len(c):
        by_end = np.argsort(kern.end_ps, kind="stable")
        before = np.searchsorted(kern.end_ps[by_end], c.start_ps, side="right") - 1
        prev_op = np.where(before >= 0, kern.op[by_end][np.maximum(before, 0)], -1)
        after = np.searchsorted(kern.start_ps, c.end_ps, side="left")
        next_op = np.where(after < len(kern), kern.op[np.minimum(after, len(kern) - 1)], -1)
    rows: list[CopyRow] = []
    if len(c):
        key = c.name.astype(np.int64) * (len(p.ops) + 1) + (c.op.astype(np.int64) + 1)
        keys, first_at, inv = np.unique(key, return_index=True, return_inverse=True)
        counts = np.bincount(inv, minlength=len(keys))
        mbytes = np.bincount(inv, weights=c.bytes.astype(float), minlength=len(keys))
        blocks = np.bincount(inv, weights=blk.astype(float), minlength=len(keys))
        for j, kk in enumerate(keys.tolist()):
            name, op = divmod(kk, len(p.ops) + 1)
            f = int(first_at[j])
            rows.append(
                CopyRow(
                    copy=p.names[name],
                    op=p.op_name(op - 1),
                    count_per_step=int(counts[j]) / n,
                    mb_per_step=float(mbytes[j]) / 1e6 / n,
                    blocking_ms_per_step=float(blocks[j]) / 1e9 / n,
                    before=p.op_name(int(prev_op[f])),
                    after=p.op_name(int(next_op[f])),
                )
            )
    rows.sort(key=lambda r: -r.blocking_ms_per_step)
    windows = []
    for j in np.argsort(-blk, kind="stable")[:3].tolist():
        if blk[j] <= 0:
            break
        name, op = p.names[c.name[j]], p.op_name(c.op[j])
        windows.append(
            gpu_window(
                p,
                device_id,
                int(c.start_ps[j]),
                int(c.end_ps[j]),
                f"{name} {c.bytes[j] / 2**20:.1f} MiB ({op or 'no op'}): compute idle {blk[j] / 1e9:.3f} ms",
                [x for x in (name, op, p.op_name(int(prev_op[j])), p.op_name(int(next_op[j]))) if x],
                stream=int(c.stream[j]),
            )
        )
    return Copies(
        blocking_ps_per_step=float(blocking.sum()) / n,
        directions=tuple(directions),
        mid_step_d2h_per_step=int(mid.sum()) / n,
        rows=tuple(rows[:10]),
        windows=tuple(windows),
    )
