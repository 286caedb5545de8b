"""What the panel draws.

`timeline` turns a profile window into per-stream and per-host-thread-group busy segments merged to
the requested pixel width (so the answer's size depends on `width`, not on the profile), plus step
boundaries and the findings' evidence windows. The export to a trace viewer is in export.py.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from tb_gpu_advisor import intervals as iv
from tb_gpu_advisor.analysis import Analysis
from tb_gpu_advisor.profile import DEVICE_SPEC, HOST_SPEC, EventTable, Kind
from tb_gpu_advisor.units import PS_PER_MS

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
    """One track's busy time, merged once: the union of its events, with running totals of its
    length and of each class's time inside it, so that a window costs two binary searches and a
    few gathers, not a pass over the events (the panel asks for a window on every pan and zoom)."""

    def __init__(self, ev: EventTable, classes: dict):
        sel = ev.kind != Kind.STEP
        s, e, k = ev.start_ps[sel], ev.end_ps[sel], ev.kind[sel]
        self.starts, self.ends = iv.union(s, e)
        self.names = list(classes)
        self.cum = np.r_[0, np.cumsum(self.ends - self.starts)]
        # per class, its time inside each busy interval, as a running total over the intervals
        self.class_cum = np.zeros((len(classes), len(self.starts) + 1), np.int64)
        for j, kinds in enumerate(classes.values()):
            m = np.isin(k, np.asarray(kinds, np.int8))
            inside = iv.Indexed(iv.union(s[m], e[m])).measure_in(self.starts, self.ends)
            np.cumsum(inside, out=self.class_cum[j, 1:])

    def segments(self, lo: int, hi: int, px: float) -> list[list]:
        """Busy segments inside [lo, hi), merged where gaps are under a pixel:
        [start_ms, end_ms, density, dominant class]."""
        bs, be = self.starts, self.ends
        i0 = int(np.searchsorted(be, lo, side="right"))
        i1 = int(np.searchsorted(bs, hi, side="left"))
        if i1 <= i0:
            return []
        s, e = bs[i0:i1].copy(), be[i0:i1].copy()
        cut_lo, cut_hi = max(lo - int(s[0]), 0), max(int(e[-1]) - hi, 0)
        s[0], e[-1] = s[0] + cut_lo, e[-1] - cut_hi
        new = np.empty(len(s), bool)
        new[0] = True
        np.greater(s[1:] - e[:-1], px, out=new[1:])
        first = np.flatnonzero(new)
        last = np.empty_like(first)
        last[:-1] = first[1:] - 1
        last[-1] = len(s) - 1
        ms_, me_ = s[first], e[last]
        covered = (self.cum[i0 + last + 1] - self.cum[i0 + first]).astype(float)
        covered[0] -= cut_lo
        covered[-1] -= cut_hi
        # the class with the most time in the segment's intervals (whole, at the window's edges too)
        dominant = np.argmax(self.class_cum[:, i0 + last + 1] - self.class_cum[:, i0 + first], axis=0)
        length = np.maximum(me_ - ms_, 1)
        return [
            [round(a / PS_PER_MS, 6), round(b / PS_PER_MS, 6), round(float(c / n), 3), self.names[d]]
            for a, b, c, n, d in zip(ms_.tolist(), me_.tolist(), covered.tolist(), length.tolist(), dominant.tolist())
        ]


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
    tracks = [{**meta, "segments": track.segments(lo, hi, px)} for meta, track in view.tracks]
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
