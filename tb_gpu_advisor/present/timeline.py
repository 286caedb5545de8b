"""What the panel draws.

`timeline` turns a profile window into per-stream and per-host-thread-group busy segments merged to
the requested pixel width (so the answer's size depends on `width`, not on the profile), plus step
boundaries and the findings' evidence windows. The export to a trace viewer is in export.py.
"""

from __future__ import annotations

import itertools
from functools import cached_property

import numpy as np

from tb_gpu_advisor.common.units import PS_PER_MS
from tb_gpu_advisor.model import intervals as iv
from tb_gpu_advisor.model.analysis import Analysis
from tb_gpu_advisor.model.profile import DEVICE_SPEC, HOST_SPEC, EventTable, Kind

MAX_WIDTH = 4096
MAX_TRACKS = 48  # tracks per GPU, and host thread groups; the rest are merged into one track
OTHER_THREADS = "other threads"
HOVER_LOOKBACK = 4096  # events before the cursor looked at for one covering it

DEVICE_CLASSES = {
    "compute": (Kind.KERNEL, Kind.MEMSET),
    "collective": (Kind.COLLECTIVE,),
    "copy": (Kind.MEMCPY_H2D, Kind.MEMCPY_D2H, Kind.MEMCPY_D2D, Kind.MEMCPY_P2P),
}
HOST_CLASSES = {
    "input": (Kind.INPUT_WAIT, Kind.INPUT_STAGE),
    "launch": (Kind.LAUNCH,),
    "op": (Kind.FRAMEWORK_OP, Kind.EAGER),
    "other": (Kind.HOST_OTHER, Kind.MEMORY_ALLOC, Kind.MEMORY_FREE),
}


def thread_group(name: str) -> str:
    """Host threads grouped by role: the name before its `/<id>` suffix."""
    return name.split("/", 1)[0]


class Track:
    """One track's busy time, merged once: the union of its events, and each class's time inside
    each busy interval."""

    def __init__(self, ev: EventTable, classes: dict):
        sel = ev.kind != Kind.STEP
        s, e, k = ev.start_ps[sel], ev.end_ps[sel], ev.kind[sel]
        self.starts, self.ends = iv.union(s, e)
        self.names = list(classes)
        self.class_time = np.zeros((len(classes), len(self.starts)), np.int64)
        for j, kinds in enumerate(classes.values()):
            m = np.isin(k, np.asarray(kinds, np.int8))
            self.class_time[j] = iv.Indexed(iv.union(s[m], e[m])).measure_in(self.starts, self.ends)

    def segments(self, lo: int, hi: int, px: float) -> list[list]:
        return TrackSet([self]).segments(lo, hi, px)[0]


class TrackSet:
    """Every track's busy intervals end to end, with running totals of their length and of each
    class's time, so that a window over all tracks costs a fixed number of array operations (the
    panel asks for a window on every pan and zoom, each on a fresh server thread where every NumPy
    call is dear), not a number per track."""

    def __init__(self, tracks: list[Track]):
        self.names = [t.names for t in tracks]
        sizes = np.array([len(t.starts) for t in tracks], np.int64)
        self.offsets = np.r_[0, np.cumsum(sizes)].astype(np.int64)
        empty = np.zeros(0, np.int64)
        self.starts = np.concatenate([t.starts for t in tracks] + [empty])
        self.ends = np.concatenate([t.ends for t in tracks] + [empty])
        self.cum = np.r_[0, np.cumsum(self.ends - self.starts)]
        rows = max((len(t.names) for t in tracks), default=1)
        class_time = np.zeros((rows, len(self.starts)), np.int64)
        for t, o in zip(tracks, self.offsets.tolist()):
            class_time[: len(t.names), o : o + len(t.starts)] = t.class_time
        self.class_cum = np.zeros((rows, len(self.starts) + 1), np.int64)
        np.cumsum(class_time, axis=1, out=self.class_cum[:, 1:])
        # one sorted key per interval, track by track, so that one binary search finds every
        # track's window; when the keys would overflow, one search per track
        self.origin = int(self.starts.min()) if len(self.starts) else 0
        self.span = (int(self.ends.max()) - self.origin + 2) if len(self.starts) else 2
        self.keyed = self.span * (len(tracks) + 1) < 2**62
        if self.keyed:
            track_base = np.repeat(np.arange(len(tracks), dtype=np.int64) * self.span - self.origin, sizes)
            self.start_keys = self.starts + track_base
            self.end_keys = self.ends + track_base

    def _window_bounds(self, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
        n = len(self.names)
        if self.keyed:
            base = np.arange(n, dtype=np.int64) * self.span
            qlo = min(max(lo - self.origin, 0), self.span - 1)
            qhi = min(max(hi - self.origin, 0), self.span - 1)
            return np.searchsorted(self.end_keys, base + qlo, "right"), np.searchsorted(
                self.start_keys, base + qhi, "left"
            )
        o = self.offsets
        i0 = np.array([o[k] + np.searchsorted(self.ends[o[k] : o[k + 1]], lo, "right") for k in range(n)], np.int64)
        i1 = np.array([o[k] + np.searchsorted(self.starts[o[k] : o[k + 1]], hi, "left") for k in range(n)], np.int64)
        return i0, i1

    def segments(self, lo: int, hi: int, px: float) -> list[list[list]]:
        """Per track, its busy segments inside [lo, hi), merged where gaps are under a pixel:
        [start_ms, end_ms, density, dominant class]."""
        n = len(self.names)
        i0, i1 = self._window_bounds(lo, hi)
        lens = np.maximum(i1 - i0, 0)
        total = int(lens.sum())
        if total == 0:
            return [[] for _ in range(n)]
        has = lens > 0
        pos = np.cumsum(lens) - lens  # where each track's intervals begin in the window's
        pos_first, pos_last = pos[has], (pos + lens - 1)[has]
        idx = np.arange(total, dtype=np.int64) + np.repeat(i0 - pos, lens)
        s, e = self.starts[idx], self.ends[idx]
        cut_lo = np.maximum(lo - s[pos_first], 0)
        cut_hi = np.maximum(e[pos_last] - hi, 0)
        s[pos_first] += cut_lo
        e[pos_last] -= cut_hi
        new = np.empty(total, bool)
        new[0] = True
        np.greater(s[1:] - e[:-1], px, out=new[1:])
        new[pos_first] = True
        first = np.flatnonzero(new)
        last = np.empty_like(first)
        last[:-1] = first[1:] - 1
        last[-1] = total - 1
        ms_, me_ = s[first], e[last]
        cut = np.zeros(total, np.int64)
        cut[pos_first] = cut_lo
        covered = (self.cum[idx[last] + 1] - self.cum[idx[first]] - cut[first]).astype(float)
        cut[:] = 0
        cut[pos_last] = cut_hi
        covered -= cut[last]
        # the class with the most time in the segment's intervals (whole, at the window's edges too)
        dominant = np.argmax(self.class_cum[:, idx[last] + 1] - self.class_cum[:, idx[first]], axis=0)
        length = np.maximum(me_ - ms_, 1)
        per_track = np.bincount(np.repeat(np.arange(n), lens)[first], minlength=n).tolist()
        rows = zip(ms_.tolist(), me_.tolist(), covered.tolist(), length.tolist(), dominant.tolist())
        out = []
        for k, count in enumerate(per_track):
            names = self.names[k]
            out.append(
                [
                    [round(a / PS_PER_MS, 6), round(b / PS_PER_MS, 6), round(float(c / m), 3), names[d]]
                    for a, b, c, m, d in itertools.islice(rows, count)
                ]
            )
        return out


class Timeline:
    """What the panel draws of one analysed profile; the host thread groups are merged once (every pan
    and zoom of the panel asks for a window)."""

    def __init__(self, a: Analysis, report: dict):
        self.a = a
        self.report = report

    @cached_property
    def thread_groups(self) -> list[tuple[str, list, EventTable]]:
        """Host threads by group with their events merged; beyond MAX_TRACKS groups, the groups
        with the fewest events are merged into one "other threads" track."""
        groups: dict[str, list] = {}
        for t in self.a.profile.threads:
            groups.setdefault(thread_group(t.name), []).append(t)
        names = sorted(groups, key=lambda g: (g != "python", g))
        if len(names) > MAX_TRACKS:
            size = {g: sum(len(t.events) for t in groups[g]) for g in names}
            keep = set(sorted(names, key=lambda g: (g != "python", -size[g], g))[: MAX_TRACKS - 1])
            rest = [t for g in names if g not in keep for t in groups[g]]
            names = [g for g in names if g in keep] + [OTHER_THREADS]
            groups[OTHER_THREADS] = rest
        return [(name, groups[name], EventTable.concat([t.events for t in groups[name]], HOST_SPEC)) for name in names]

    @cached_property
    def stream_tracks(self) -> list[tuple[int, str, int | None, EventTable]]:
        """(device id, label, stream id or None, events) per GPU stream; each device id once (a
        file may repeat one), and beyond MAX_TRACKS streams of a GPU the rest merged into one."""
        by_device: dict[int, list] = {}
        for s in self.a.profile.streams:
            by_device.setdefault(s.device_id, []).append(s)
        out: list[tuple[int, str, int | None, EventTable]] = []
        for device_id in sorted(by_device):
            streams = sorted(by_device[device_id], key=lambda s: s.stream_id)
            if len(streams) > MAX_TRACKS:
                busiest = sorted(streams, key=lambda s: (-len(s.events), s.stream_id))[: MAX_TRACKS - 1]
                rest = [s for s in streams if s not in busiest]
                streams = sorted(busiest, key=lambda s: s.stream_id)
                merged = EventTable.concat([s.events for s in rest], DEVICE_SPEC)
                out += [(device_id, s.name, s.stream_id, s.events) for s in streams]
                out.append((device_id, f"{len(rest)} other streams", None, merged))
            else:
                out += [(device_id, s.name, s.stream_id, s.events) for s in streams]
        return out

    @cached_property
    def tracks(self) -> list[tuple[dict, Track]]:
        """Every track's description and merged busy time, GPU streams first."""
        out = []
        for device_id, label, stream_id, events in self.stream_tracks:
            meta = {
                "id": f"gpu{device_id}/stream{stream_id if stream_id is not None else 'other'}",
                "group": f"GPU {device_id}",
                "label": label,
                "kind": "stream",
                "device_id": device_id,
                "stream_id": stream_id,
            }
            out.append((meta, Track(events, DEVICE_CLASSES)))
        for name, ts, ev in self.thread_groups:
            meta = {
                "id": f"host/{name}",
                "group": "Host",
                "label": f"{name} ({len(ts)} thread{'s' if len(ts) > 1 else ''})",
                "kind": "host",
                "threads": [t.name for t in ts][:50],
            }
            out.append((meta, Track(ev, HOST_CLASSES)))
        return out

    @cached_property
    def track_set(self) -> TrackSet:
        return TrackSet([track for _, track in self.tracks])

    @cached_property
    def _events_by_track(self) -> dict[str, EventTable]:
        out = {}
        for device_id, _, stream_id, events in self.stream_tracks:
            out[f"gpu{device_id}/stream{stream_id if stream_id is not None else 'other'}"] = events
        for name, _, ev in self.thread_groups:
            out[f"host/{name}"] = ev
        return out

    def event_at(self, track: str, t_ms: float, tolerance_ms: float) -> dict | None:
        """The event under the cursor on a track: the shortest one that covers t (within the
        tolerance, half a pixel), or None. For the panel's hover."""
        ev = self._events_by_track.get(track)
        if ev is None:
            raise KeyError(track)
        t, tol = int(t_ms * PS_PER_MS), max(int(tolerance_ms * PS_PER_MS), 0)
        hi = int(np.searchsorted(ev.start_ps, t + tol, side="right"))
        lo = max(0, hi - HOVER_LOOKBACK)  # events are short next to a window; nested ones start close by
        end = ev.end_ps[lo:hi]
        hit = np.flatnonzero((end >= t - tol) & (ev.kind[lo:hi] != Kind.STEP))
        if not len(hit):
            return None
        i = lo + int(hit[np.argmin(ev.dur_ps[lo:hi][hit])])
        p = self.a.profile
        op = int(ev.op[i])
        out = {
            "name": p.names[int(ev.name[i])],
            "start_ms": int(ev.start_ps[i]) / PS_PER_MS,
            "dur_ms": int(ev.dur_ps[i]) / PS_PER_MS,
            "op": p.op_name(op) if op >= 0 else None,
            "type": p.op_type(op) if op >= 0 else None,
        }
        if "thread" in ev:
            out["thread"] = p.threads[int(ev.thread[i])].name
        return out

    def window(self, start_ms: float | None, end_ms: float | None, width: int) -> dict:
        return timeline(self, start_ms, end_ms, width)


def timeline(view: Timeline, start_ms: float | None, end_ms: float | None, width: int) -> dict:
    a, report = view.a, view.report
    p = a.profile
    extent_ms = p.end_ps / PS_PER_MS
    lo_ms = 0.0 if start_ms is None else max(0.0, start_ms)
    hi_ms = extent_ms if end_ms is None else min(extent_ms, end_ms)
    if hi_ms <= lo_ms:
        hi_ms = lo_ms
    width = max(1, min(int(width), MAX_WIDTH))
    lo, hi = int(lo_ms * PS_PER_MS), int(hi_ms * PS_PER_MS)
    px = max((hi - lo) / width, 1.0)
    tracks = [{**meta, "segments": segs} for (meta, _), segs in zip(view.tracks, view.track_set.segments(lo, hi, px))]
    st = a.steps
    inside = np.flatnonzero((st.end_ps > lo) & (st.start_ps < hi))
    stride = max(1, int(np.ceil(len(inside) / width)))
    steps = [
        {"number": int(st.number[i]), "start_ms": st.start_ps[i] / PS_PER_MS, "end_ms": st.end_ps[i] / PS_PER_MS}
        for i in inside[::stride]
    ]
    marks = []
    for c in report.get("checks", []):
        if c["status"] not in ("critical", "warning", "info"):
            continue
        for j, ev in enumerate(c["evidence"]):
            if ev["end_ms"] >= lo_ms and ev["start_ms"] <= hi_ms:
                marks.append(
                    {
                        "check": c["id"],
                        "status": c["status"],
                        "index": j,
                        **{
                            k: ev[k]
                            for k in ("where", "device_id", "stream_id", "thread", "start_ms", "end_ms", "label")
                        },
                    }
                )
    return {
        "run": report.get("run"),
        "host": report.get("host"),
        "extent": {"start_ms": 0.0, "end_ms": extent_ms},
        "window": {"start_ms": lo_ms, "end_ms": hi_ms, "width": width, "resolution_ms": px / PS_PER_MS},
        "tracks": tracks,
        "steps": steps,
        "findings": marks,
    }
