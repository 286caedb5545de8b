"""What the panel draws, and the export to a trace viewer.

`timeline` turns a profile window into per-stream and per-host-thread-group busy segments merged to
the requested pixel width (so the answer's size depends on `width`, not on the profile), plus step
boundaries and the findings' evidence windows. `chrome_trace` streams the whole profile as Chrome
trace JSON (Perfetto, chrome://tracing) with an extra "GPU Advisor" process whose slices are the
findings' evidence windows.
"""

from __future__ import annotations

import json
from functools import cached_property
from typing import Iterator

import numpy as np

from tb_gpu_advisor import intervals as iv
from tb_gpu_advisor.analysis import Analysis
from tb_gpu_advisor.profile import HOST_SPEC, EventTable, Kind
from tb_gpu_advisor.units import PS_PER_MS

MAX_WIDTH = 4096

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


def _segments(ev: EventTable, classes: dict, lo: int, hi: int, px: float) -> list[list]:
    """Busy segments of a table inside [lo, hi), merged where gaps are under a pixel:
    [start_ms, end_ms, density, dominant class]."""
    sel = (ev.end_ps > lo) & (ev.start_ps < hi) & (ev.kind != Kind.STEP)
    if not np.any(sel):
        return []
    s, e, k = np.maximum(ev.start_ps[sel], lo), np.minimum(ev.end_ps[sel], hi), ev.kind[sel]
    busy = iv.union(s, e)
    if not len(busy[0]):
        return []
    bs, be = busy
    new = np.r_[True, bs[1:] - be[:-1] > px]
    first = np.flatnonzero(new)
    last = np.r_[first[1:] - 1, len(bs) - 1]
    ms_, me_ = bs[first], be[last]
    covered = iv.measure_in(busy, ms_, me_).astype(float)
    per_class = []
    for kinds in classes.values():
        m = np.isin(k, np.asarray(kinds, np.int8))
        per_class.append(iv.measure_in(iv.union(s[m], e[m]), ms_, me_))
    dominant = np.argmax(np.vstack(per_class), axis=0)
    names = list(classes)
    length = np.maximum(me_ - ms_, 1)
    return [
        [round(a / PS_PER_MS, 6), round(b / PS_PER_MS, 6), round(float(c / n), 3), names[d]]
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
        """Host threads by group with their events merged."""
        groups: dict[str, list] = {}
        for t in self.a.profile.threads:
            groups.setdefault(thread_group(t.name), []).append(t)
        return [
            (name, groups[name], EventTable.concat([t.events for t in groups[name]], HOST_SPEC))
            for name in sorted(groups, key=lambda g: (g != "python", g))
        ]

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
    tracks = []
    for d in p.devices:
        for s in sorted(p.device_streams(d.id), key=lambda s: s.stream_id):
            tracks.append(
                {
                    "id": f"gpu{d.id}/stream{s.stream_id}",
                    "group": f"GPU {d.id}",
                    "label": s.name,
                    "kind": "stream",
                    "device_id": d.id,
                    "stream_id": s.stream_id,
                    "segments": _segments(s.events, DEVICE_CLASSES, lo, hi, px),
                }
            )
    for name, ts, ev in view.thread_groups:
        tracks.append(
            {
                "id": f"host/{name}",
                "group": "Host",
                "label": f"{name} ({len(ts)} thread{'s' if len(ts) > 1 else ''})",
                "kind": "host",
                "threads": [t.name for t in ts][:50],
                "segments": _segments(ev, HOST_CLASSES, lo, hi, px),
            }
        )
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


def chrome_trace(
    a: Analysis, report: dict, start_ms: float | None = None, end_ms: float | None = None, chunk: int = 20_000
) -> Iterator[str]:
    """The profile as Chrome trace JSON, streamed in pieces; times in µs from the profile's start."""
    p = a.profile
    names = p.names
    yield (
        '{"displayTimeUnit":"ns","otherData":'
        + json.dumps({"run": report.get("run"), "host": report.get("host"), "made_by": "tb-gpu-advisor"})
        + ',"traceEvents":['
    )
    first = [True]

    def emit(items: list[dict]) -> str:
        if not items:
            return ""
        body = ",".join(json.dumps(x, separators=(",", ":")) for x in items)
        out = body if first[0] else "," + body
        first[0] = False
        return out

    def meta(pid: int, tid: int | None, kind: str, name: str, sort: int) -> list[dict]:
        if tid is None:
            return [
                {"ph": "M", "pid": pid, "name": "process_name", "args": {"name": name}},
                {"ph": "M", "pid": pid, "name": "process_sort_index", "args": {"sort_index": sort}},
            ]
        return [
            {"ph": "M", "pid": pid, "tid": tid, "name": "thread_name", "args": {"name": name}},
            {"ph": "M", "pid": pid, "tid": tid, "name": "thread_sort_index", "args": {"sort_index": sort}},
        ]

    def table(pid: int, tid: int, ev: EventTable) -> Iterator[str]:
        n = len(ev)
        for lo in range(0, n, chunk):
            hi = min(n, lo + chunk)
            items = []
            for i in range(lo, hi):
                x = {
                    "ph": "X",
                    "pid": pid,
                    "tid": tid,
                    "ts": ev.start_ps[i] / 1e6,
                    "dur": ev.dur_ps[i] / 1e6,
                    "name": names[ev.name[i]],
                }
                if ev.op[i] >= 0:
                    x["args"] = {"op": p.op_name(ev.op[i]), "type": p.op_type(ev.op[i])}
                items.append(x)
            yield emit(items)

    yield emit(meta(0, None, "process", "GPU Advisor findings", 0))
    checks = [c for c in report.get("checks", []) if c["status"] in ("critical", "warning", "info") and c["evidence"]]
    for t, c in enumerate(checks, start=1):
        yield emit(meta(0, t, "thread", f"{c['status']}: {c['id']}", t))
        yield emit(
            [
                {
                    "ph": "X",
                    "pid": 0,
                    "tid": t,
                    "ts": e["start_ms"] * 1000,
                    "dur": (e["end_ms"] - e["start_ms"]) * 1000,
                    "name": f"{c['id']}: {e['label']}",
                    "args": {"status": c["status"], "where": e["where"], "summary": c["summary"], "guide": c["link"]},
                }
                for e in c["evidence"]
            ]
        )
    for d in p.devices:
        pid = 100 + d.id
        yield emit(meta(pid, None, "process", f"GPU {d.id}: {d.name}", 10 + d.id))
        for s in sorted(p.device_streams(d.id), key=lambda s: s.stream_id):
            yield emit(meta(pid, s.stream_id, "thread", s.name, s.stream_id))
            yield from table(pid, s.stream_id, s.events)
    yield emit(meta(1, None, "process", f"Host: {p.host}", 1000))
    for k, thread in enumerate(p.threads):
        yield emit(meta(1, k + 1, "thread", thread.name, k))
        yield from table(1, k + 1, thread.events)
    yield "]}"
