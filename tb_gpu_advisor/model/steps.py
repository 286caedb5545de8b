"""Steps, per host and per GPU, and the per-step time breakdown of one GPU.

Host steps come from, in order of preference: host step markers (events with a `step_num` stat), the
calls of Keras's step functions (`multi_step_on_iterator`, `train_function`, ...: a capture made with
`tf.profiler.experimental.start/stop` around `fit` has no markers, but one such call per execution),
or the whole capture as one window. Consecutive host steps tile the timeline: a step runs from its
marker's start to the next marker's start, so time between markers (host work between steps) belongs
to the step before it; the last step ends at its marker's end or at the end of device work that
started within it, whichever is later.

Steps are per GPU. With host step markers every GPU shares them. Without, a GPU with its own saved
`Steps` line (older captures; on multi-GPU jobs each GPU can run its steps at different times) is
measured in those windows; failing that, the host's step-function calls, or the span of each step
group of the GPU's events (`group_id`, as the profile plugin groups them); else the whole capture.

PyTorch (Kineto) traces take the steps of PyTorch's own TensorBoard plugin (`torch-tb-profiler`,
`kineto_steps`): a step is not tiled to the next marker but runs from the later of the previous step's
end and its `ProfilerStep#N` marker's start to the later of the marker's end and the end of the device
work launched by the runtime calls made inside the marker, so a step's GPU tail is in it, and device
work launched before the first step is not. JAX's step markers (`StepTraceAnnotation`) take the same
rule when device work was launched inside them: JAX dispatches asynchronously, so a marker can end
before its step's work has begun.
"""

from __future__ import annotations

import dataclasses
from collections import Counter

import numpy as np

from tb_gpu_advisor.model import intervals as iv
from tb_gpu_advisor.model.arrays import first_index, isin
from tb_gpu_advisor.model.profile import HOST_SPEC, JAX, PYTORCH, EventTable, Kind, Profile

SOURCE_HOST = "host-markers"
SOURCE_DEVICE = "device-steps-line"
SOURCE_GROUPS = "device-groups"
SOURCE_FUNCTIONS = "step-function-calls"
SOURCE_WHOLE = "whole-capture"

# Host events of Keras's step functions (Keras 3 and Keras 2), one per execution of a step.
STEP_FUNCTIONS = (
    "multi_step_on_iterator",
    "one_step_on_iterator",
    "multi_step_on_data",
    "one_step_on_data",
    "train_function",
    "train_step",
)

# Breakdown categories, in precedence order (see `breakdown`).
CATEGORIES = (
    "device_compute",
    "device_collectives",
    "memcpy_h2d",
    "memcpy_d2h",
    "memcpy_d2d",
    "host_input_wait",
    "kernel_launch_wait",
    "idle_other",
)


@dataclasses.dataclass
class Steps:
    source: str
    start_ps: np.ndarray
    end_ps: np.ndarray
    number: np.ndarray  # step_num where known, else 0..n-1
    marker: str = ""  # name of the host marker events used
    # each step's marker's start, where PyTorch's steps follow torch-tb-profiler's rule (its first step
    # can start after its marker, past the rank's own DataLoader fetch: `kineto_steps`)
    marker_start_ps: np.ndarray | None = None

    @property
    def dur_ps(self) -> np.ndarray:
        return self.end_ps - self.start_ps

    @property
    def mean_ps(self) -> float:
        """Mean step time, ps (0 with no steps)."""
        return float(self.dur_ps.sum()) / len(self) if len(self) else 0.0

    def __len__(self) -> int:
        return len(self.start_ps)

    def index(self, t_ps: np.ndarray) -> np.ndarray:
        """Step of each time (-1 outside every step)."""
        k = iv.search(self.start_ps, t_ps, side="right") - 1
        inside = (k >= 0) & (t_ps < self.end_ps[np.maximum(k, 0)]) if len(self) else np.zeros(len(t_ps), bool)
        return np.where(inside, k, -1)

    def summary(self) -> dict:
        d = self.dur_ps / 1e9
        n = len(d)
        return {
            "count": n,
            "source": self.source,
            "marker": self.marker or None,
            "mean_ms": float(d.mean()) if n else 0.0,
            # sample standard deviation; 0 for fewer than two steps
            "stdev_ms": float(d.std(ddof=1)) if n > 1 else 0.0,
            "min_ms": float(d.min()) if n else 0.0,
            "max_ms": float(d.max()) if n else 0.0,
        }


def host_steps(profile: Profile) -> Steps:
    markers = EventTable.concat((t.events.take(t.events.kind == Kind.STEP) for t in profile.threads), HOST_SPEC)
    if profile.framework == PYTORCH:
        return kineto_steps(profile, markers)
    if profile.framework == JAX and len(markers):
        # JAX dispatches asynchronously: a step's marker can end long before the work it launched
        # runs (on an H100, five 0.26 ms markers for 4 ms steps), so steps follow the launches
        return kineto_steps(profile, markers, tile=True)
    if len(markers):
        return _tile(profile, markers, SOURCE_HOST, markers.step_num)
    ids = np.asarray([i for i in (profile.names.get(n) for n in STEP_FUNCTIONS) if i >= 0], np.int32)
    if len(ids):
        calls = EventTable.concat((t.events.take(isin(t.events.name, ids)) for t in profile.threads), HOST_SPEC)
        if len(calls):
            return _tile(profile, calls, SOURCE_FUNCTIONS, None)
    return whole_capture(profile)


def whole_capture(profile: Profile) -> Steps:
    tables = [s.events for s in profile.streams] + [t.events for t in profile.threads]
    starts = [int(e.start_ps[0]) for e in tables if len(e)]
    start = max(min(starts, default=0), 0)
    end = max(profile.end_ps, start + 1)
    return Steps(SOURCE_WHOLE, np.array([start], np.int64), np.array([end], np.int64), np.array([0], np.int64))


def gpu_steps(profile: Profile, host: Steps, device_id: int, events: EventTable) -> Steps:
    """The steps one GPU is measured in (see the module's doc)."""
    if host.source == SOURCE_HOST:
        return host
    for saved in profile.saved_steps:
        if saved.device_id == device_id and len(saved.start_ps):
            order = np.argsort(saved.start_ps, kind="stable")
            start, end = saved.start_ps[order], (saved.start_ps + saved.dur_ps)[order]
            end = np.minimum(end, np.r_[start[1:], end[-1]])  # overlapping saved steps: each ends at the next
            return Steps(SOURCE_DEVICE, start.copy(), np.maximum(end, start), np.arange(len(start)))
    if host.source == SOURCE_FUNCTIONS:
        return host
    if len(events) and (events.group >= 0).any():
        g = events.take(events.group >= 0)
        groups, inv = np.unique(g.group, return_inverse=True)
        starts = np.full(len(groups), np.iinfo(np.int64).max, np.int64)
        ends = np.full(len(groups), np.iinfo(np.int64).min, np.int64)
        np.minimum.at(starts, inv, g.start_ps)
        np.maximum.at(ends, inv, g.end_ps)
        order = np.argsort(starts, kind="stable")
        starts, ends, groups = starts[order], ends[order], groups[order]
        ends = np.minimum(ends, np.r_[starts[1:], ends[-1]])
        return Steps(SOURCE_GROUPS, starts, np.maximum(ends, starts), groups)
    return host


def _tile(profile: Profile, events: EventTable, source: str, numbers: np.ndarray | None) -> Steps:
    """Steps from host events marking them: a step runs to the next one's start."""
    # Several names (e.g. an outer "train" and Keras' "Profiled batch"): use the most frequent one,
    # so nested markers do not double the step count.
    counts = Counter(events.name.tolist())
    name_id = max(counts, key=lambda k: (counts[k], -k))
    m = events.take(events.name == name_id)
    start, end = m.start_ps, m.end_ps
    if len(start) > 1:
        end = np.r_[start[1:], end[-1]]
    end = end.copy()
    end[-1] = max(int(end[-1]), _device_work_end(profile, int(start[-1]), int(m.end_ps[-1])))
    num = m.step_num.copy() if numbers is not None else np.arange(len(start))
    return Steps(source, start.copy(), end, num, profile.names[name_id])


def _device_work_end(profile: Profile, step_start: int, marker_end: int) -> int:
    """End of the device work that started within the last step's marker."""
    end = marker_end
    for s in profile.streams:
        ev = s.events
        inside = (ev.start_ps >= step_start) & (ev.start_ps < marker_end)
        if np.any(inside):
            end = max(end, int((ev.start_ps[inside] + ev.dur_ps[inside]).max()))  # not ev.end_ps: kept once read
    return end


# torch-tb-profiler drops the last step that launched device work when it launched fewer than this
# share of the step before's device events: the profiler stopped before the step's work was recorded.
TAIL_SHARE = 0.8


def kineto_steps(profile: Profile, markers: EventTable, tile: bool = False) -> Steps:
    """A PyTorch trace's steps as PyTorch's TensorBoard plugin (torch-tb-profiler 0.4.3,
    `StepParser._find_device_steps` and `_update_steps_duration`) defines them:

    - a runtime call (a host event with a correlation id: launches, copies, memsets) is made inside a
      marker when it starts and ends within it; the device work it launched (paired by correlation id,
      every GPU) is that step's;
    - step i runs from max(end of step i-1, marker start) to max(marker end, end of its device work),
      never ending before it starts; the first step's "previous end" is the latest end, before the
      step's first device work starts, of device work launched outside every marker (work queued
      before the first step is not counted into it: that can start it past the rank's own DataLoader
      fetch in its marker, which the rank's digest counts from the marker, `marker_start_ps`);
    - trailing steps that launched no device work are dropped, and so is the last one that did when
      it launched under TAIL_SHARE of the device events of the step before (the profiler stopped
      before its work was recorded);
    - with no device work launched inside any marker (a CPU-only trace), the steps are the markers.

    Without markers, one step spans the framework ops (the plugin's host span), extended the same way.
    JAX's steps follow the same rule (`tile`), except that with no device work launched inside a
    marker they tile the host's timeline as other XSpace steps do.
    """
    host = profile.host_events()
    if len(markers):
        counts = Counter(markers.name.tolist())
        name_id = max(counts, key=lambda k: (counts[k], -k))
        m = markers.take(markers.name == name_id)
        order = np.argsort(m.start_ps, kind="stable")
        m_start, m_end, number = m.start_ps[order], m.end_ps[order], m.step_num[order].astype(np.int64)
        source, marker = SOURCE_HOST, profile.names[name_id]
    else:
        ops = (host.kind == Kind.FRAMEWORK_OP) | (host.kind == Kind.INPUT_WAIT)
        if not ops.any():
            return whole_capture(profile)
        m_start = np.array([host.start_ps[ops].min()], np.int64)
        m_end = np.array([host.end_ps[ops].max()], np.int64)
        number, source, marker = np.array([0], np.int64), SOURCE_WHOLE, ""
    n = len(m_start)
    # runtime calls inside a marker: the step whose marker started last before the call, if the
    # call ends within that marker
    runtime = host.take(host.corr >= 0, ("start_ps", "dur_ps", "corr"))
    k = iv.search(m_start, runtime.start_ps, side="right") - 1
    inside = (k >= 0) & (runtime.end_ps <= m_end[np.maximum(k, 0)])
    corr, corr_step = runtime.corr[inside], k[inside]
    dev_corr = np.concatenate([s.events.corr for s in profile.streams] or [np.zeros(0, np.int64)])
    dev_start = np.concatenate([s.events.start_ps for s in profile.streams] or [np.zeros(0, np.int64)])
    dev_end = np.concatenate([s.events.end_ps for s in profile.streams] or [np.zeros(0, np.int64)])
    pos = first_index(corr, dev_corr) if len(corr) else np.full(len(dev_corr), -1)
    matched = (dev_corr >= 0) & (pos >= 0)
    step_of = corr_step[pos[matched]]
    launched = np.bincount(step_of, minlength=n)
    if not launched.any():
        if tile and len(markers):
            return _tile(profile, markers, SOURCE_HOST, markers.step_num)
        return Steps(source, m_start.copy(), m_end.copy(), number, marker)
    lo, hi = np.iinfo(np.int64).max, np.iinfo(np.int64).min
    dev_first = np.full(n, lo, np.int64)
    dev_last = np.full(n, hi, np.int64)
    np.minimum.at(dev_first, step_of, dev_start[matched])
    np.maximum.at(dev_last, step_of, dev_end[matched])
    prev = int(m_start[0])
    if launched[0]:
        before = ~matched & (dev_end < dev_first[0])
        if before.any():
            prev = max(prev, int(dev_end[before].max()))
    # end_i = max(marker end_i, device end_i, start_i) and start_i = max(end_(i-1), marker start_i):
    # a running maximum, since a marker's start is never after its end
    end = np.maximum.accumulate(np.maximum(np.maximum(m_end, dev_last), np.r_[prev, np.full(n - 1, hi)]))
    start = np.maximum(m_start, np.r_[prev, end[:-1]])
    keep = n
    if n > 1:
        last = int(np.flatnonzero(launched)[-1])
        keep = last + 1
        if last > 0 and launched[last - 1] * TAIL_SHARE > launched[last]:
            keep = last
    return Steps(source, start[:keep].copy(), end[:keep].copy(), number[:keep].copy(), marker, m_start[:keep].copy())


@dataclasses.dataclass
class DeviceActivity:
    """Busy interval sets of one GPU (and the host activity that bears on it)."""

    device_id: int | None
    busy: iv.Intervals  # anything on any stream
    by_category: dict[str, iv.Intervals]  # raw (overlapping across categories) sets


def launch_calls(host: EventTable) -> EventTable:
    """The host's launch calls that carry a correlation id (start, duration, correlation, device)."""
    rows = np.flatnonzero((host.kind == Kind.LAUNCH) & (host.corr >= 0))
    # the host's device_id column is read here only, at its launches: not made for every host event
    return host.take(rows, ("start_ps", "dur_ps", "corr")).with_column("device_id", host.peek_at("device_id", rows))


def device_activity(
    ev: EventTable, device_id: int | None, host: EventTable, launches: EventTable | None = None
) -> DeviceActivity:
    """Interval sets of one GPU's events (`ev`, all its streams) and of the host events that bear on it;
    `device_id` None with an empty table gives the host-only view. `launches`: launch_calls(host),
    when the caller has it for several GPUs."""
    k, s, e = ev.kind, ev.start_ps, ev.end_ps

    def of(*kinds: int) -> tuple[np.ndarray, np.ndarray]:
        sel = np.isin(k, np.asarray(kinds, np.int8))
        return iv.union(s[sel], e[sel])

    cats = {
        "device_compute": of(Kind.KERNEL, Kind.MEMSET),
        "device_collectives": of(Kind.COLLECTIVE),
        "memcpy_h2d": of(Kind.MEMCPY_H2D),
        "memcpy_d2h": of(Kind.MEMCPY_D2H),
        "memcpy_d2d": of(Kind.MEMCPY_D2D, Kind.MEMCPY_P2P),
    }
    wait = host.kind == Kind.INPUT_WAIT
    cats["host_input_wait"] = iv.union(host.start_ps[wait], host.end_ps[wait])
    busy = iv.union(s, e)
    cats["kernel_launch_wait"] = _launch_pending(launches, host, ev, device_id, busy) if len(ev) else iv.EMPTY
    return DeviceActivity(device_id, busy, cats)


# After a launch call returns, the work reaches the GPU within the launch latency (about 20-40 µs);
# idle time beyond that is not launch overhead.
LAUNCH_LATENCY_PS = 40_000_000
PENDING_RUN = 1 << 17  # device events paired with their launches at a time


def _launch_pending(
    launches: EventTable | None, host: EventTable, dev: EventTable, device_id: int | None, busy: iv.Intervals
) -> iv.Intervals:
    """Windows in which the GPU waited for a launch: for device work whose launch call (paired by
    correlation id) was still running when the GPU went idle before it, from the later of the launch
    start and that idle moment to the work's start, but no later than the launch's end plus the
    launch latency. Work launched well ahead of time (queued) is no launch wait."""
    launch = launch_calls(host) if launches is None else launches
    if device_id is not None:
        launch = launch.take((launch.device_id == device_id) | (launch.device_id < 0), ("start_ps", "dur_ps", "corr"))
    if not len(launch) or not len(dev) or not len(busy[0]):
        return iv.EMPTY
    pos = first_index(launch.corr, dev.corr)  # the first launch call with the work's correlation id
    paired = np.flatnonzero((dev.corr >= 0) & (pos >= 0))
    pos = pos[paired]
    bs, be = busy
    lo, hi = [], []
    # the paired work a run at a time: the same windows, without a dozen arrays over every event at once
    for c in range(0, len(paired), PENDING_RUN):
        start = dev.start_ps[paired[c : c + PENDING_RUN]]
        at = pos[c : c + PENDING_RUN]
        l_start = launch.start_ps[at]
        l_end = l_start + launch.dur_ps[at]
        # When did the GPU go idle before this work? The busy interval holding its start begins at the
        # start itself if the GPU was idle just before; then the idle moment is the previous one's end.
        k = iv.search(bs, start, side="right") - 1
        idle_before = (k >= 0) & (bs[np.maximum(k, 0)] == start)
        prev_end = np.where(k >= 1, be[np.maximum(k - 1, 0)], np.iinfo(np.int64).min)
        waited = idle_before & (l_end > prev_end)
        lo.append(np.maximum(l_start[waited], prev_end[waited]))
        hi.append(np.minimum(start[waited], l_end[waited] + LAUNCH_LATENCY_PS))
    return iv.union(np.concatenate(lo), np.concatenate(hi)) if lo else iv.EMPTY


def exclusive(activity: DeviceActivity) -> dict[str, iv.Intervals]:
    """Each category's intervals with the time of the categories before it removed (the
    precedence rule of `breakdown`); idle/other is not included."""
    out: dict[str, iv.Intervals] = {}
    for cat in CATEGORIES[:-1]:
        # the sets taken before, one after another: they are disjoint, so their union is not made (it
        # would be one more copy of the GPU's busy time, made again for each category)
        out[cat] = iv.subtract_each(activity.by_category[cat], [s for s in out.values() if len(s[0])])
    return out


def breakdown(steps: Steps, exclusive_sets: dict[str, iv.Intervals]) -> np.ndarray:
    """Per step time in each category, shape (steps, len(CATEGORIES)), picoseconds.

    Precedence rule: every instant of a step is counted once, in the first category of
    `CATEGORIES` active at that instant on this GPU: device compute, then collectives, then
    copies H2D, D2H, D2D/P2P, then the host waiting for input, then a launch in flight; what is
    left is idle/other. So the parts never overlap and add up to the step time.
    """
    lo, hi = steps.start_ps, steps.end_ps
    out = np.zeros((len(lo), len(CATEGORIES)), np.int64)
    for j, cat in enumerate(CATEGORIES[:-1]):
        out[:, j] = iv.measure_in(exclusive_sets[cat], lo, hi)
    out[:, -1] = (hi - lo) - out[:, :-1].sum(axis=1)
    return out
