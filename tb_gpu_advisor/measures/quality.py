"""What a capture can show: its memory records, Python stacks, the steps its ends cut, and how much
its step times spread (the capture.* checks and the savings' ranges read these)."""

from __future__ import annotations

import dataclasses
import re

import numpy as np

from tb_gpu_advisor.measures.window import Window
from tb_gpu_advisor.model import intervals as iv
from tb_gpu_advisor.model.arrays import distinct, isin
from tb_gpu_advisor.model.profile import EventTable, Kind, Profile
from tb_gpu_advisor.model.steps import SOURCE_HOST, Steps

# The names of PyTorch's Python tracer events (`python_function`, with_stack=True): a source line
# "path/file.py(12): fn" (or "<frozen os>(674): fn"), a built-in, or an nn.Module; not the optimizers'
# `Optimizer.step#...` annotations, which PyTorch writes without it.
PYTHON_FUNCTION = re.compile(r"^(?:\S.*\(\d+\): |<built-in (?:method|function) |nn\.Module: )")


@dataclasses.dataclass(frozen=True, slots=True)
class MemoryRecords:
    """The allocator's records in a PyTorch trace (`profile_memory=True`)."""

    records: int  # `[memory]` records, any device
    gpu_records: int  # of them, on a GPU
    with_totals: bool  # they carry the allocator's totals (PyTorch 1.10 and later)


@dataclasses.dataclass(frozen=True, slots=True)
class PythonStacks:
    """The Python call stacks of a PyTorch trace (`with_stack=True`)."""

    events: int  # host events of the Python tracer
    old_trace: bool  # PyTorch before 1.10 (memory records without totals): stacks are ops' arguments


@dataclasses.dataclass(frozen=True, slots=True)
class CutSteps:
    """Steps cut by the capture's start or end."""

    markers: tuple[int, ...]  # the step numbers of the host step markers
    dropped: tuple[int, ...]  # marked steps after the last measured one, left out
    edges: dict[int, tuple[int, int]]  # per active GPU: busy ps before its first step, after its last
    windows: tuple[Window, ...]  # those stretches of GPU work
    # per active GPU: of its busy time before its first step, the work launched before the capture
    # (its correlation id on no launch call in the trace): a step that ran before the capture still
    # running on the GPU, which runs behind the host; 0 where the trace has no launch calls to tell
    early: dict[int, int] = dataclasses.field(default_factory=dict)

    @property
    def before_ps(self) -> int:
        return max((b for b, _ in self.edges.values()), default=0)

    @property
    def before_in_capture_ps(self) -> int:
        """GPU work before the first step that was launched inside the capture (the busiest GPU)."""
        return max((b - self.early.get(g, 0) for g, (b, _) in self.edges.items()), default=0)

    @property
    def after_ps(self) -> int:
        return max((a for _, a in self.edges.values()), default=0)


@dataclasses.dataclass(frozen=True, slots=True)
class StepSpread:
    """The spread of a capture's step times."""

    steps: int
    sd_ps: float  # sample standard deviation of the step times (0 with fewer than two steps)

    @property
    def half_range_ps(self) -> float | None:
        """Twice the standard error of the difference of two captures' mean steps, both with this
        capture's spread: the change a saving of 0 could show by chance, 95% of the time. None where it
        cannot be measured (fewer than two steps) or is nil."""
        if self.steps < 2 or self.sd_ps <= 0:
            return None
        return 2.0 * self.sd_ps * (2.0 / self.steps) ** 0.5


def memory_records(p: Profile) -> MemoryRecords:
    """The allocator's `[memory]` records (PyTorch `profile_memory=True`), on any device and on the GPUs."""
    mem = p.memory
    return MemoryRecords(len(mem), int(np.count_nonzero(mem.device >= 0)), bool(np.any(mem.allocated >= 0)))


def python_stacks(p: Profile, host: EventTable) -> PythonStacks:
    """Host events of PyTorch's Python tracer (`with_stack=True`: `python_function` events named after
    their source line, built-in or module). A trace whose memory records have no totals is from
    PyTorch before 1.10, which keeps stacks as its ops' `Call stack` argument instead."""
    other = host.kind == Kind.HOST_OTHER
    ids = distinct(host.name[other])
    python = np.asarray([bool(PYTHON_FUNCTION.match(p.names[int(i)])) for i in ids.tolist()], bool)
    n = int(np.count_nonzero(isin(host.name[other], ids[python]))) if python.any() else 0
    mem = p.memory
    return PythonStacks(n, bool(len(mem)) and not bool(np.any(mem.allocated >= 0)))


def cut_steps(
    p: Profile,
    host: EventTable,
    steps: Steps,
    gpus: list[tuple[int, Steps, iv.Intervals, EventTable]],
    launch_corr: np.ndarray,
) -> CutSteps:
    """Steps the capture's ends cut: marked steps left out of the measured ones (PyTorch's last step
    when its GPU work was cut by the capture's end, as torch-tb-profiler drops it), and each GPU's
    busy time before its first step and after its last one (work of a step whose start or end is
    outside the capture), with how much of the first launched before the capture. `gpus`: each active
    GPU's id, steps, busy intervals and events; `launch_corr`: the host's launch calls' correlation ids."""
    markers: tuple[int, ...] = ()
    if steps.source == SOURCE_HOST and steps.marker:
        name = p.names.get(steps.marker)
        marked = (host.kind == Kind.STEP) & (host.name == name)
        markers = tuple(sorted(set(host.peek_at("step_num", np.flatnonzero(marked)).tolist())))  # read once: not kept
    kept = set(steps.number.tolist())
    last = max(kept, default=0)
    dropped = tuple(n for n in markers if n not in kept and n > last)
    edges: dict[int, tuple[int, int]] = {}
    early: dict[int, int] = {}
    windows: list[Window] = []
    far = np.array([2**60], np.int64)
    for gpu_id, st, busy, ev in gpus:
        if not len(st) or not len(busy[0]):
            continue
        lo, hi = st.start_ps[:1], st.end_ps[-1:]
        b = int(iv.measure_in(busy, -far, lo)[0])
        a = int(iv.measure_in(busy, hi, far)[0])
        edges[gpu_id] = (b, a)
        if b and len(launch_corr):
            # the events before the first step (the table is sorted by start), their ends made for
            # those alone: not `ev.end_ps`, which keeps an end for every event
            pre = int(np.searchsorted(ev.start_ps, lo[0], side="left"))
            launched = np.flatnonzero(isin(ev.corr[:pre], launch_corr))
            s = ev.start_ps[launched]
            inside = iv.union(s, np.minimum(s + ev.dur_ps[launched], lo[0]))
            early[gpu_id] = b - min(b, iv.total(inside))
        if b:
            windows.append(Window(int(busy[0][0]), int(lo[0]), "GPU work before the first step", [], gpu_id))
        if a:
            windows.append(Window(int(hi[0]), int(busy[1][-1]), "GPU work after the last step", [], gpu_id))
    return CutSteps(markers, dropped, edges, tuple(windows), early)


def step_spread(host_steps: Steps) -> StepSpread:
    """The host's steps' number and sample standard deviation: how far a change of the mean step,
    measured between two captures like this one, strays by chance."""
    d = host_steps.dur_ps.astype(np.float64)
    return StepSpread(len(d), float(d.std(ddof=1)) if len(d) > 1 else 0.0)
