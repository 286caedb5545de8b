"""Call stacks of host events from PyTorch's `python_function` events (with_stack=True since
PyTorch 1.10, which no longer writes a `Call stack` argument on each op)."""

from __future__ import annotations

import re

import numpy as np

from tb_gpu_advisor.model.arrays import distinct, isin
from tb_gpu_advisor.model.profile import EventTable, Flag, StringTable

# A Python frame's event is named `file(line): function`; the other python_function events are
# C functions (`<built-in method ...>`) and module markers (`nn.Module: Linear_0`), which the old
# `Call stack` argument never held.
_FRAME = re.compile(r"\(\d+\): \S")
# Times within this many ps are one: the readers make ps from the trace's epoch µs, good to about
# 1 ns, so a frame and the frames it calls, all cut at the capture's end, can seem to end apart.
_SAME_PS = 2000


class PythonFrames:
    """The Python frames enclosing a host event in time on its thread, innermost first, joined by
    ";" as PyTorch's `Call stack` argument is (each frame's line is where its function starts: the
    python_function events name that line, not the line running)."""

    def __init__(self, host: EventTable, names: StringTable):
        h = host
        self.names = names
        py = np.flatnonzero((h.flags & np.uint16(Flag.PYTHON)) != 0)
        if len(py):
            ids = distinct(h.name[py])
            frames = np.array([i for i in ids.tolist() if _FRAME.search(self.names[i])], np.int64)
            py = py[isin(h.name[py], frames)]
        self.by_thread: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray, list[int]]] = {}
        threads = h.thread[py]
        for t in distinct(threads).tolist():
            ev = py[threads == t]
            start, end = h.start_ps[ev], h.end_ps[ev]
            order = np.lexsort((-(end - start), start))  # by start, an enclosing one first
            ev, start, end = ev[order], start[order], end[order]
            self.by_thread[t] = (ev, start, end, _parents(start.tolist(), end.tolist()))
        self.h = h

    def __bool__(self) -> bool:
        return bool(self.by_thread)

    def of(self, j: int) -> str:
        """The stack of host event `j`: "" when no frame encloses it."""
        found = self.by_thread.get(int(self.h.thread[j]))
        if found is None:
            return ""
        ev, start, end, parent = found
        s, e = int(self.h.start_ps[j]), int(self.h.end_ps[j])
        k = int(np.searchsorted(start, s + _SAME_PS, side="right")) - 1  # the last frame starting by then
        while k >= 0 and end[k] < e - _SAME_PS:  # one that ended before: its enclosing frames may still run
            k = parent[k]
        out = []
        while k >= 0:
            out.append(self.names[int(self.h.name[ev[k]])])
            k = parent[k]
        return ";".join(out)


def _parents(start: list[int], end: list[int]) -> list[int]:
    """Each frame's enclosing frame (-1: none), frames sorted by start with enclosing ones first."""
    parent = [-1] * len(start)
    stack: list[int] = []
    for k in range(len(start)):
        while stack and end[stack[-1]] < end[k] - _SAME_PS:
            stack.pop()
        parent[k] = stack[-1] if stack else -1
        stack.append(k)
    return parent
