"""A finding's evidence as a reader who must find the code to change needs it: each evidence window of
the report with the events in it (names, times, the track, the op) and, where the trace recorded them,
the source frames that ran them (PyTorch's Python frames, `with_stack=True`, or an op's `Call stack`
before PyTorch 1.10); a GPU event's frames are those of the launch call with its correlation id.

What `tb-gpu-advisor evidence` prints and the MCP server's `evidence` tool answers (serve/questions.py).
Bounded: at most `limit` events per window (the ones the finding names first, then the longest), each
distinct stack once.
"""

from __future__ import annotations

import collections
from typing import Any

import numpy as np

from tb_gpu_advisor.common.units import PS_PER_MS
from tb_gpu_advisor.measures import Measures
from tb_gpu_advisor.model.profile import EventTable, Flag, Kind

TOP_NAMES = 10  # the names with the most time in a window, summed
FINDING_KEYS = (
    "id",
    "title",
    "status",
    "summary",
    "saving_ms",
    "saving_pct",
    "saving_low_ms",
    "saving_high_ms",
    "saving_basis",
    "recommendation",
    "link",
)


def _ms(ps: int) -> float:
    return round(ps / PS_PER_MS, 6)


class _Stacks:
    """Each distinct stack once, as a list of frames (innermost first); events point at it by index."""

    def __init__(self, m: Measures):
        self.m = m
        self.frames = m.python_frames if m.is_pytorch else None
        self.texts: list[list[str]] = []
        self.index: dict[str, int] = {}
        self._corr: tuple[np.ndarray, np.ndarray] | None = None

    def _add(self, text: str) -> int | None:
        if not text:
            return None
        k = self.index.get(text)
        if k is None:
            k = self.index[text] = len(self.texts)
            self.texts.append([f for f in text.split(";") if f])
        return k

    def of_host(self, j: int) -> int | None:
        h = self.m.host
        if h.stack[j] >= 0:  # PyTorch before 1.10: the op's own `Call stack` argument
            return self._add(self.m.name(int(h.stack[j])))
        return self._add(self.frames.of(j)) if self.frames else None

    def of_device(self, corr: int) -> int | None:
        """The frames of the host call that launched a GPU event (the same correlation id)."""
        if corr < 0 or not self.frames:
            return None
        if self._corr is None:
            h = self.m.host
            rows = np.flatnonzero(h.corr >= 0)
            order = np.argsort(h.corr[rows], kind="stable")
            self._corr = (h.corr[rows][order], rows[order])
        keys, rows = self._corr
        at = int(np.searchsorted(keys, corr))
        if at >= len(keys) or int(keys[at]) != corr:
            return None
        return self.of_host(int(rows[at]))


def _overlapping(ev: EventTable, lo: int, hi: int) -> np.ndarray:
    """Rows of a table sorted by start whose events overlap [lo, hi]."""
    upto = int(np.searchsorted(ev.start_ps, hi, side="right"))
    rows = np.arange(upto)
    return rows[ev.end_ps[:upto] >= lo] if upto else rows


def _pick(names: list[str], durs: list[int], wanted: set[str], limit: int) -> list[int]:
    """The positions to list: the events the finding names first, then the longest; in time order."""
    order = sorted(range(len(names)), key=lambda k: (names[k] not in wanted, -durs[k], k))
    return sorted(order[:limit])


def window_events(m: Measures, window: dict, limit: int, stacks: _Stacks) -> dict:
    """The events on a window's tracks (a GPU's stream, or all its streams; a host thread by name, or
    every host thread) that overlap it in time."""
    p = m.analysis.profile
    lo, hi = int(round(window["start_ms"] * PS_PER_MS)), int(round(window["end_ms"] * PS_PER_MS))
    names: list[str] = []
    starts: list[int] = []
    durs: list[int] = []
    rows: list[dict[str, Any]] = []  # without the stack yet: looked up for the listed events only
    whence: list[tuple[str, int]] = []  # ("host", row) or ("device", correlation id)
    if window.get("device_id") is not None:
        for s in p.streams:
            if s.device_id != window["device_id"] or (
                window.get("stream_id") is not None and s.stream_id != window["stream_id"]
            ):
                continue
            ev = s.events
            for i in _overlapping(ev, lo, hi).tolist():
                op = int(ev.op[i])
                names.append(p.names[int(ev.name[i])])
                starts.append(int(ev.start_ps[i]))
                durs.append(int(ev.dur_ps[i]))
                rows.append(
                    {
                        "track": f"GPU {s.device_id} · {s.name}",
                        "kind": Kind(int(ev.kind[i])).name.lower(),
                        "op": p.op_name(op) if op >= 0 else None,
                    }
                )
                whence.append(("device", int(ev.corr[i])))
    else:
        h = m.host
        keep = np.flatnonzero((h.flags & np.uint16(Flag.PYTHON)) == 0)  # the frames themselves are stacks
        if window.get("thread") is not None:
            mine = np.array([t.name == window["thread"] for t in p.threads] + [False], bool)
            keep = keep[mine[h.thread[keep]]]
        at = _overlapping(h, lo, hi)
        for j in np.intersect1d(at, keep).tolist():
            op = int(h.op[j])
            names.append(p.names[int(h.name[j])])
            starts.append(int(h.start_ps[j]))
            durs.append(int(h.dur_ps[j]))
            rows.append(
                {
                    "track": f"host · {m.thread_name(int(h.thread[j]))}",
                    "kind": Kind(int(h.kind[j])).name.lower(),
                    "op": p.op_name(op) if op >= 0 else None,
                }
            )
            whence.append(("host", j))
    totals: collections.Counter[str] = collections.Counter()
    calls: collections.Counter[str] = collections.Counter()
    for n, d in zip(names, durs):
        totals[n] += d
        calls[n] += 1
    listed = []
    for k in _pick(names, durs, set(window.get("events") or ()), limit):
        where, key = whence[k]
        stack = stacks.of_host(key) if where == "host" else stacks.of_device(key)
        listed.append({"name": names[k], **rows[k], "start_ms": _ms(starts[k]), "dur_ms": _ms(durs[k]), "stack": stack})
    top = sorted(totals, key=lambda n: (-totals[n], n))[:TOP_NAMES]
    return {
        **window,
        "in_window": {
            "total": len(names),
            "shown": len(listed),
            "by_name": [{"name": n, "calls": calls[n], "total_ms": _ms(totals[n])} for n in top],
            "events": listed,
        },
    }


def evidence(m: Measures, report: dict, finding: dict, limit: int) -> dict:
    """The evidence of one of a report's findings (`finding`, an entry of its `checks`): its windows with
    the events in them, and the stacks they point at. `limit`: events listed per window."""
    stacks = _Stacks(m)
    windows = [window_events(m, w, limit, stacks) for w in finding["evidence"]]
    notes = []
    if not windows:
        notes.append("this finding has no evidence window: its details and its table rows say where it is")
    if m.is_pytorch and not stacks.frames and not any(s is not None for w in windows for s in _stack_ids(w)):
        notes.append(
            "the trace has no Python stacks: profile with torch.profiler.profile(with_stack=True) "
            "to see the source lines that ran these events"
        )
    return {
        "run": report["run"],
        "host": report["host"],
        "framework": report.get("framework"),
        "finding": {k: finding.get(k) for k in FINDING_KEYS},
        "table": finding.get("table"),
        "table_rows": None,  # the rows it links to: the caller's, who may read the tables
        "windows": windows,
        "stacks": stacks.texts,
        "notes": notes,
    }


def _stack_ids(w: dict) -> list[int | None]:
    return [e["stack"] for e in w["in_window"]["events"]]


def evidence_lines(doc: dict) -> list[str]:
    """The evidence as text, for a terminal."""
    f = doc["finding"]
    out = [f"{f['status'].upper()}  {f['id']}  {f['title']}  (run {doc['run']}, host {doc['host']})"]
    for i, w in enumerate(doc["windows"]):
        inside = w["in_window"]
        out.append(
            f"window {i}: {w['where']}  {w['start_ms']:.3f}-{w['end_ms']:.3f} ms  {w['label']}  "
            f"({inside['shown']} of {inside['total']} events)"
        )
        for e in inside["events"]:
            op = f"  [{e['op']}]" if e["op"] and e["op"] != e["name"] else ""
            out.append(f"  {e['start_ms']:12.3f} ms  {e['dur_ms']:9.3f} ms  {e['name']}{op}")
            if e["stack"] is not None:
                frames = doc["stacks"][e["stack"]]
                out.append("      at " + " ← ".join(frames[:6]) + (" ← …" if len(frames) > 6 else ""))
    out += [f"note: {n}" for n in doc["notes"]]
    return out
