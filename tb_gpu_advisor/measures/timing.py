"""Time and steps of one GPU: its work's bounds in each step, the gaps between steps, and its idle time
split by cause (one problem counted once: see the package's doc)."""

from __future__ import annotations

import dataclasses

import numpy as np

from tb_gpu_advisor.measures.host import HostSets
from tb_gpu_advisor.model import intervals as iv
from tb_gpu_advisor.model.profile import DEVICE_KINDS, EventTable
from tb_gpu_advisor.model.steps import Steps

IDLE_CAUSES = ("loss_scaling", "compilation", "host_ops", "host_work", "tf_data", "unexplained")
GAP_CAUSES = ("input", "launch") + IDLE_CAUSES


@dataclasses.dataclass(frozen=True, slots=True)
class IdleCauses:
    """A GPU's idle time split by what the host was doing, each cause claiming what the ones before it
    (IDLE_CAUSES' order) left."""

    loss_scaling: iv.Intervals
    compilation: iv.Intervals
    host_ops: iv.Intervals
    host_work: iv.Intervals
    tf_data: iv.Intervals
    unexplained: iv.Intervals

    def of(self, cause: str) -> iv.Intervals:
        """The set of one of IDLE_CAUSES."""
        value: iv.Intervals = getattr(self, cause)
        return value


@dataclasses.dataclass(frozen=True, slots=True)
class GapCauses:
    """Each gap's time (ps, in the order of `gaps`) by cause: input wait, a launch in flight, then the
    idle causes; what nothing explains is `unexplained`."""

    input: np.ndarray
    launch: np.ndarray
    loss_scaling: np.ndarray
    compilation: np.ndarray
    host_ops: np.ndarray
    host_work: np.ndarray
    tf_data: np.ndarray
    unexplained: np.ndarray

    def of(self, cause: str) -> np.ndarray:
        """The times of one of GAP_CAUSES."""
        value: np.ndarray = getattr(self, cause)
        return value


def work_bounds(events: EventTable, n_steps: int) -> tuple[np.ndarray, np.ndarray]:
    """Per step, the first start and last end of the GPU's work (kernels, copies) starting in it; -1
    where a step has none."""
    ev = events
    sel = np.isin(ev.kind, np.asarray(DEVICE_KINDS, np.int8)) & (ev.step >= 0)
    k, s, e = ev.step[sel], ev.start_ps[sel], ev.end_ps[sel]
    first = np.full(n_steps, -1, np.int64)
    last = np.full(n_steps, -1, np.int64)
    if len(k):
        if (k[1:] < k[:-1]).any():  # events are sorted by start, so steps mostly are too
            order = np.argsort(k, kind="stable")
            k, s, e = k[order], s[order], e[order]
        steps, at = np.unique(k, return_index=True)
        first[steps] = np.minimum.reduceat(s, at)
        last[steps] = np.maximum.reduceat(e, at)
    return first, last


def gaps(first: np.ndarray, last: np.ndarray) -> list[tuple[int, int, int]]:
    """Idle windows between the end of one step's device work and the start of the next's: (index of
    the earlier step, start, end), only where positive."""
    i, start, end = gap_arrays(first, last)
    return list(zip(i.tolist(), start.tolist(), end.tolist()))


def gap_arrays(first: np.ndarray, last: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`gaps` as three arrays: index of the earlier step, start, end."""
    i = np.flatnonzero((last[:-1] >= 0) & (first[1:] >= 0) & (first[1:] > last[:-1]))
    return i, last[i], first[i + 1]


def idle(steps: Steps, exclusive: dict[str, iv.Intervals]) -> iv.Intervals:
    """The breakdown's idle/other time: in a step, nothing on the GPU, no input wait, no launch."""
    # the categories' sets taken away one after another, the smallest first: their union (one more
    # copy of the GPU's busy time, and its input put together) is not made
    sets = sorted((s for s in exclusive.values() if len(s[0])), key=lambda s: len(s[0]))
    return iv.subtract_each(iv.union(steps.start_ps, steps.end_ps), sets)


def idle_causes(idle: iv.Intervals, host: HostSets) -> IdleCauses:
    """The idle time split by what the host was doing (IDLE_CAUSES, in that order)."""
    out = {}
    left = idle
    for cause in IDLE_CAUSES[:-1]:
        own = iv.intersect(left, host.of(cause))
        out[cause] = own
        left = iv.subtract(left, own)
    return IdleCauses(**out, unexplained=left)


def gap_causes(
    gap_list: list[tuple[int, int, int]], exclusive: dict[str, iv.Intervals], causes: IdleCauses
) -> GapCauses:
    """Each gap's time split by cause: the breakdown's input wait and launch wait, then the idle causes."""
    lo = np.array([g[1] for g in gap_list], np.int64)
    hi = np.array([g[2] for g in gap_list], np.int64)
    parts = {
        "input": iv.measure_in(exclusive["host_input_wait"], lo, hi),
        "launch": iv.measure_in(exclusive["kernel_launch_wait"], lo, hi),
    }
    for cause in IDLE_CAUSES:
        parts[cause] = iv.measure_in(causes.of(cause), lo, hi)
    rest = (hi - lo) - sum(parts.values())  # what else the breakdown counts in a gap (copies of other work)
    parts["unexplained"] = parts["unexplained"] + np.maximum(rest, 0)
    return GapCauses(**parts)


def exposed_per_step(host_set: iv.Intervals, busy: iv.Intervals, steps: Steps) -> np.ndarray:
    """Per step, the part of a host activity during which the GPU (`busy`) runs nothing (the guide's
    measure of the activity's cost; several activities can overlap, unlike `idle_causes`)."""
    exposed = iv.subtract(host_set, busy)
    return iv.measure_in(exposed, steps.start_ps, steps.end_ps).astype(float)
