"""The profile as Chrome trace JSON for a trace viewer, with the advice in it.

A "GPU Advisor" process comes first: one thread per finding, one slice per evidence window, and the
slice's arguments carry the check, its status, the measured numbers, the saving and what to do, so
that selecting it in the viewer shows the advice. The GPUs' streams and the host's threads follow.

Times are µs from the profile's start, the Profile tab trace viewer's zero (tests/model/test_time_base.py).
An instant event at 0 keeps that zero in a viewer that moves the earliest event to zero on import
(the profile plugin's trace_viewer_index.html does, for a whole file).

Bounded for the viewer: given a window (or a finding's evidence), the events in the window and its
neighbourhood (the window's length again on each side) are exported one by one; elsewhere each
stream and thread is thinned to its busy stretches, at most THIN_BUCKETS per track, so a link opens
in seconds on a large run. Without a window every event is exported (the download).
"""

from __future__ import annotations

import json
from typing import Iterator

import numpy as np

from tb_gpu_advisor.common.units import PS_PER_MS
from tb_gpu_advisor.model import intervals as iv
from tb_gpu_advisor.model.analysis import Analysis
from tb_gpu_advisor.model.profile import EventTable, Stream

PS_PER_US = 1_000_000
THIN_BUCKETS = 2000  # busy stretches kept per track outside the detailed range
MAX_DETAIL_EVENTS = 400_000  # events exported one by one, at most
ADVISOR_PID, HOST_PID, FIRST_GPU_PID = 0, 1, 100
PROBLEMS = ("critical", "warning", "info")


def _json(x: object) -> str:
    return json.dumps(x, separators=(",", ":"), ensure_ascii=False)


def evidence_window(report: dict, check: str, index: int) -> dict | None:
    """A finding's evidence entry from the report, or None."""
    for c in report.get("checks", []):
        if c["id"] == check and 0 <= index < len(c["evidence"]):
            return c["evidence"][index]
    return None


def _advice_args(c: dict, e: dict) -> dict:
    metrics = {
        m["label"] or m["name"]: (f"{m['value']:.4g}" if isinstance(m["value"], float) else str(m["value"]))
        + (f" {m['unit']}" if m["unit"] else "")
        for m in c["metrics"]
        if m["value"] is not None
    }
    args: dict = {
        "check": c["id"],
        "status": c["status"],
        "finding": c["title"],
        "summary": c["summary"],
        "here": e["label"],
        "where": e["where"],
        "measured": metrics,
    }
    if c.get("saving_ms") is not None:
        pct = f" ({c['saving_pct']:.1f}% of a step)" if c.get("saving_pct") is not None else ""
        args["possible saving"] = f"{c['saving_ms']:.3f} ms per step{pct}"
    if e.get("events"):
        args["events"] = e["events"][:10]
    args["what to do"] = c["recommendation"]
    if c.get("snippet"):
        args["example"] = c["snippet"]
    args["guide"] = c["link"]
    return args


class _Writer:
    def __init__(self) -> None:
        self.first = True

    def items(self, items: list[dict]) -> str:
        if not items:
            return ""
        body = ",".join(_json(x) for x in items)
        out = body if self.first else "," + body
        self.first = False
        return out


def _meta(pid: int, tid: int | None, name: str, sort: int) -> list[dict]:
    if tid is None:
        return [
            {"ph": "M", "pid": pid, "name": "process_name", "args": {"name": name}},
            {"ph": "M", "pid": pid, "name": "process_sort_index", "args": {"sort_index": sort}},
        ]
    return [
        {"ph": "M", "pid": pid, "tid": tid, "name": "thread_name", "args": {"name": name}},
        {"ph": "M", "pid": pid, "tid": tid, "name": "thread_sort_index", "args": {"sort_index": sort}},
    ]


def _detail_range(a: Analysis, start_ms: float, end_ms: float) -> tuple[int, int]:
    """The window and its neighbourhood, narrowed to the window, then cut, while it would hold more
    than MAX_DETAIL_EVENTS events."""
    p = a.profile
    tables = [s.events for s in p.streams] + [t.events for t in p.threads]
    lo, hi = int(start_ms * PS_PER_MS), int(end_ms * PS_PER_MS)
    span = max(hi - lo, 1)

    def count(a_: int, b_: int) -> int:
        return sum(int(np.searchsorted(t.start_ps, b_) - np.searchsorted(t.end_ps, a_, side="right")) for t in tables)

    for margin in (1.0, 0.0):
        d_lo, d_hi = int(lo - margin * span), int(hi + margin * span)
        if count(d_lo, d_hi) <= MAX_DETAIL_EVENTS:
            return d_lo, d_hi
    # a window with too many events: its first MAX_DETAIL_EVENTS, by time
    starts = np.sort(np.concatenate([t.start_ps[(t.start_ps < hi) & (t.end_ps > lo)] for t in tables]))
    return lo, int(starts[MAX_DETAIL_EVENTS]) if len(starts) > MAX_DETAIL_EVENTS else hi


def _thinned(ev: EventTable, lo: int, hi: int, bucket: int) -> list[tuple[int, int, int]]:
    """Busy stretches of the events outside [lo, hi): (start, end, events), gaps under `bucket`
    closed, before and after the range apart, not overlapping the detailed events."""
    out = []
    inside = (ev.end_ps > lo) & (ev.start_ps < hi)
    first_in = int(ev.start_ps[inside].min()) if inside.any() else hi
    last_in = int(ev.end_ps[inside].max()) if inside.any() else lo
    for sel, clip_lo, clip_hi in (
        (ev.end_ps <= lo, None, first_in),
        (ev.start_ps >= hi, last_in, None),
    ):
        if not sel.any():
            continue
        s, e = ev.start_ps[sel], ev.end_ps[sel]
        bs, be = iv.union(s, np.maximum(e, s + 1))  # instants count as busy for a moment
        new = np.r_[True, bs[1:] - be[:-1] > bucket]
        first = np.flatnonzero(new)
        last = np.r_[first[1:] - 1, len(bs) - 1]
        rs, re_ = bs[first], be[last]
        if clip_hi is not None:
            re_ = np.minimum(re_, clip_hi)
        if clip_lo is not None:
            rs = np.maximum(rs, clip_lo)
        counts = np.searchsorted(s, re_, side="left") - np.searchsorted(s, rs, side="left")
        for x, y, n in zip(rs.tolist(), re_.tolist(), counts.tolist()):
            if y > x:
                out.append((x, y, max(int(n), 1)))
    return out


def chrome_trace(
    a: Analysis,
    report: dict,
    start_ms: float | None = None,
    end_ms: float | None = None,
    focus: dict | None = None,
    chunk: int = 20_000,
) -> Iterator[str]:
    """The trace JSON in pieces. With a window [start_ms, end_ms], bounded (see the module's doc);
    `focus` (an evidence entry) puts the evidence's stream or thread first after the advice."""
    p = a.profile
    names = p.names
    if start_ms is None or end_ms is None:
        lo, hi = -(2**62), 2**62
    else:
        lo, hi = _detail_range(a, start_ms, end_ms)
    bucket = max(p.end_ps // THIN_BUCKETS, 1)
    thinned = lo > -(2**62)
    w = _Writer()
    other = {"run": report.get("run"), "host": report.get("host"), "made_by": "tb-gpu-advisor"}
    if thinned:
        other["detail_ms"] = [max(lo, 0) / PS_PER_MS, hi / PS_PER_MS]
        other["elsewhere"] = "each stream and thread thinned to its busy stretches"
    yield '{"displayTimeUnit":"ns","otherData":' + _json(other) + ',"traceEvents":['

    # the advice
    yield w.items(_meta(ADVISOR_PID, None, "GPU Advisor", -1000))
    yield w.items([{"ph": "i", "s": "g", "pid": ADVISOR_PID, "tid": 0, "ts": 0, "name": "profile start (time zero)"}])
    findings = [c for c in report.get("checks", []) if c["status"] in PROBLEMS and c["evidence"]]
    for t, c in enumerate(findings, start=1):
        yield w.items(_meta(ADVISOR_PID, t, f"{c['status'].upper()} {c['id']}: {c['title']}", t))
        yield w.items(
            [
                {
                    "ph": "X",
                    "pid": ADVISOR_PID,
                    "tid": t,
                    "ts": e["start_ms"] * 1000,
                    "dur": max(e["end_ms"] - e["start_ms"], 0.0) * 1000,
                    "name": f"{c['id']}: {e['label']}",
                    "args": _advice_args(c, e),
                }
                for e in c["evidence"]
            ]
        )

    def focused(device_id: int | None, stream_id: int | None, thread: str | None) -> bool:
        if not focus:
            return False
        if thread is not None:
            return focus.get("thread") is not None and thread.startswith(str(focus["thread"]).split(" (")[0])
        return focus.get("device_id") == device_id and focus.get("stream_id") in (None, stream_id)

    def table(pid: int, tid: int, ev: EventTable) -> Iterator[str]:
        sel = np.flatnonzero((ev.end_ps > lo) & (ev.start_ps < hi)) if thinned else np.arange(len(ev))
        start, dur, name, op = ev.start_ps, ev.dur_ps, ev.name, ev.op
        # step markers keep their step numbers: PyTorch's as the name it wrote (ProfilerStep#N), the
        # others (TensorFlow's Trace, JAX's StepTraceAnnotation) as the step_num argument they carry
        step_num = ev.step_num if "step_num" in ev else np.full(len(ev), -1, np.int64)
        pytorch = p.framework == "pytorch"
        for k in range(0, len(sel), chunk):
            items = []
            for i in sel[k : k + chunk].tolist():
                x: dict = {
                    "ph": "X",
                    "pid": pid,
                    "tid": tid,
                    "ts": int(start[i]) / PS_PER_US,
                    "dur": int(dur[i]) / PS_PER_US,
                    "name": names[int(name[i])],
                }
                if op[i] >= 0:
                    x["args"] = {"op": p.op_name(int(op[i])), "type": p.op_type(int(op[i]))}
                n = int(step_num[i])
                if n >= 0:
                    if pytorch and x["name"] == "ProfilerStep":
                        x["name"] = f"ProfilerStep#{n}"
                    x.setdefault("args", {})["step_num"] = n
                items.append(x)
            yield w.items(items)
        if thinned:
            yield w.items(
                [
                    {
                        "ph": "X",
                        "pid": pid,
                        "tid": tid,
                        "ts": x / PS_PER_US,
                        "dur": (y - x) / PS_PER_US,
                        "name": f"{n} event{'s' if n > 1 else ''} (thinned)",
                        "args": {"events": n, "note": "outside the exported window: busy stretch, events merged"},
                    }
                    for x, y, n in _thinned(ev, lo, hi, bucket)
                ]
            )

    # the GPUs: each device id once (a file may repeat one), its streams by id
    by_device: dict[int, list[Stream]] = {}
    for s in p.streams:
        by_device.setdefault(s.device_id, []).append(s)
    device_names = {d.id: d.name for d in p.devices}
    for k, device_id in enumerate(sorted(by_device)):
        pid = FIRST_GPU_PID + k
        streams = sorted(by_device[device_id], key=lambda s: s.stream_id)
        first = any(focused(device_id, s.stream_id, None) for s in streams)
        yield w.items(_meta(pid, None, f"GPU {device_id}: {device_names.get(device_id, '')}", -10 if first else k))
        for j, s in enumerate(streams):
            yield w.items(_meta(pid, j + 1, s.name, -1 if focused(device_id, s.stream_id, None) else j))
            yield from table(pid, j + 1, s.events)
    host_first = any(focused(None, None, t.name) for t in p.threads)
    yield w.items(_meta(HOST_PID, None, f"Host: {p.host}", -10 if host_first else 1000))
    for j, thread in enumerate(p.threads):
        yield w.items(_meta(HOST_PID, j + 1, thread.name, -1 if focused(None, None, thread.name) else j))
        yield from table(HOST_PID, j + 1, thread.events)
    yield "]}"
