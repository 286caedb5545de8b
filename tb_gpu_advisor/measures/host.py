"""Host work: what the host's threads do (input waits, loss scaling, compilation, host-placed ops,
Python on the main thread, tf.data), the GPU's idle time it explains, eager execution, compilations."""

from __future__ import annotations

import dataclasses

import numpy as np

from tb_gpu_advisor.measures.names import MAIN_THREADS, NameClasses
from tb_gpu_advisor.measures.window import Window, label_text, thread_name
from tb_gpu_advisor.model import intervals as iv
from tb_gpu_advisor.model.arrays import distinct, unique_inverse
from tb_gpu_advisor.model.classify import TF_OP, op_type_label
from tb_gpu_advisor.model.profile import EventTable, Flag, Kind, Profile
from tb_gpu_advisor.model.steps import Steps


@dataclasses.dataclass(frozen=True, slots=True)
class HostOpLabels:
    """Each host event's op (-1: none), numbering past `Profile.ops` the runtime ops XSpace keeps apart
    from compute ops (ReadVariableOp, AssignVariableOp, ...: `extra`, by name), which the Profile tab's
    op table lists too."""

    label: np.ndarray  # int64, per host event
    extra: tuple[str, ...]


@dataclasses.dataclass(frozen=True, slots=True)
class HostSets:
    """What the host is doing, as interval sets (see `host_sets`)."""

    input: iv.Intervals  # waiting for input
    loss_scaling: iv.Intervals  # loss-scaling ops
    compilation: iv.Intervals  # XLA (or JAX, torch.compile) compilation
    host_ops: iv.Intervals  # compute ops placed on the host
    host_work: iv.Intervals  # Python work on the main thread, outside its input waits
    tf_data: iv.Intervals  # busy tf.data threads, outside the input waits

    def of(self, cause: str) -> iv.Intervals:
        """The set named `cause` (a field's name, as in `timing.IDLE_CAUSES`)."""
        value: iv.Intervals = getattr(self, cause)
        return value


@dataclasses.dataclass(frozen=True, slots=True)
class HostWorkEvents:
    """The main thread's work events: eager markers labelled by their op (as -2 - op), everything else
    by its name id (`window.label_text` reads a label)."""

    start_ps: np.ndarray
    end_ps: np.ndarray
    label: np.ndarray
    thread: np.ndarray


@dataclasses.dataclass(frozen=True, slots=True)
class HostWorkRow:
    event: str
    ms_per_step: float


@dataclasses.dataclass(frozen=True, slots=True)
class HostWork:
    """Python work on the main thread while one GPU runs nothing."""

    per_step: np.ndarray  # ps in each of the GPU's steps
    rows: tuple[HostWorkRow, ...]  # the events that fill it, most first (at most 8)
    windows: tuple[Window, ...]  # the steps with the most (at most 3)


@dataclasses.dataclass(frozen=True, slots=True)
class HostOpRow:
    """A compute op placed on the host, over the capture."""

    op: int
    name: str
    type: str
    type_label: str
    ps: float
    count: int
    py_function: bool  # a tf.py_function: Python in the graph


@dataclasses.dataclass(frozen=True, slots=True)
class EagerRow:
    op_type: str
    executed: str  # what ran (PyTorch: the ATen op behind the type), or the type itself
    ps: float
    count: int


@dataclasses.dataclass(frozen=True, slots=True)
class Eager:
    """Eager execution inside the steps."""

    executions: int  # nested markers of one execution counted once
    host_ps: float  # host dispatch time (union of the markers)
    device_ps: float  # device time of eager kernels
    rows: tuple[EagerRow, ...]  # per op type, most time first
    window: Window | None  # the busiest step's eager executions


def tf_data_threads(p: Profile) -> np.ndarray:
    """Mask over thread indices (and a final False for -1): tf.data's own threads."""
    return np.array([t.name.startswith("tf_data") for t in p.threads] + [False], bool)


def main_threads(p: Profile, host: EventTable) -> np.ndarray:
    """Mask over thread indices: the thread(s) running the Python training loop (named so, or holding
    the step markers)."""
    marked = set(distinct(host.thread[host.kind == Kind.STEP]).tolist())
    return np.array(
        [t.name.split("/")[0] in MAIN_THREADS or i in marked for i, t in enumerate(p.threads)] + [False], bool
    )


def on_threads(host: EventTable, threads: np.ndarray) -> np.ndarray:
    """Mask of the host events on the threads of a thread mask."""
    t = host.thread
    return threads[np.where(t >= 0, t, len(threads) - 1)]


def host_compute_ops(host: EventTable, names: NameClasses, tf_data: np.ndarray) -> np.ndarray:
    """Mask of host events that are compute ops placed on the host (not on a tf.data thread, not loss
    scaling, not the runtime's plumbing, which the reader does not count as ops)."""
    h, n = host, names
    m = (h.kind == Kind.FRAMEWORK_OP) & (h.op >= 0) & ~on_threads(h, tf_data)
    return m & ~n.by_op(h.op, n.on_device_op) & ~n.by_op(h.op, n.loss_scale_op)


def _main_work(host: EventTable, names: NameClasses, main: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(mask of the main thread's work events, mask of eager markers)."""
    h, n, k = host, names, host.kind
    eager = (k == Kind.EAGER) & ((h.flags & Flag.FUNCTION) == 0)
    python_work = (k == Kind.HOST_OTHER) & ~n.by_name(h.name, n.container_name)
    return on_threads(h, main) & (eager | python_work | (k == Kind.FRAMEWORK_OP)), eager


def host_sets(
    host: EventTable, names: NameClasses, compute_ops: np.ndarray, main: np.ndarray, tf_data: np.ndarray
) -> HostSets:
    """What the host is doing: waiting for input, loss-scaling ops, XLA compilation, host-placed compute
    ops, Python work on the main thread (eager ops, callbacks, metrics; not the calls that only wait for
    a graph to run), busy tf.data threads."""
    h, n, k = host, names, host.kind

    def u(mask: np.ndarray) -> iv.Intervals:
        return iv.union(h.start_ps[mask], h.end_ps[mask])

    wait = k == Kind.INPUT_WAIT
    inputs = u(wait)
    work, _ = _main_work(h, n, main)
    data = (on_threads(h, tf_data) & ~wait) | (k == Kind.INPUT_STAGE)
    return HostSets(
        input=inputs,
        loss_scaling=u((k == Kind.FRAMEWORK_OP) & n.by_op(h.op, n.loss_scale_op)),
        compilation=u(n.by_name(h.name, n.compile_name)),
        host_ops=u(compute_ops),
        # the host's work inside its wait for input (a DataLoader without workers decodes in the
        # training process) is input.bound's: not counted again as host work
        host_work=iv.subtract(u(work), inputs),
        tf_data=iv.subtract(u(data), inputs),
    )


def host_work_events(host: EventTable, names: NameClasses, main: np.ndarray) -> HostWorkEvents:
    h = host
    work, eager = _main_work(h, names, main)
    cand = np.flatnonzero(work)
    op = h.op[cand]
    label = np.where(eager[cand] & (op >= 0), -2 - op.astype(np.int64), h.name[cand].astype(np.int64))
    return HostWorkEvents(h.start_ps[cand], h.end_ps[cand], label, h.thread[cand])


GAPS_SHOWN = 3  # evidence: the largest gaps, each a window short enough to see in the trace viewer
GAP_JOIN_PS = 20_000_000  # idle pieces closer than 20 µs are one gap (a lone short kernel splits none)


def _largest_gaps(
    p: Profile, idle: iv.Intervals, exposed: np.ndarray, steps: Steps, events: HostWorkEvents, thread: str
) -> list[Window]:
    """The largest stretches of the GPU idle while the host works, each labelled with its step, its
    length and the host work in it, largest first."""
    starts, ends = idle
    if not len(starts):
        return []
    cut = np.flatnonzero(starts[1:] - ends[:-1] > GAP_JOIN_PS) + 1  # where one gap ends and the next starts
    first, last = np.r_[0, cut], np.r_[cut - 1, len(starts) - 1]
    g_start, g_end = starts[first], ends[last]
    idle_in = np.add.reduceat(ends - starts, first)  # the idle time in each gap (not the pieces between)
    out = []
    for j in np.argsort(-idle_in, kind="stable")[:GAPS_SHOWN].tolist():
        lo, hi = int(g_start[j]), int(g_end[j])
        i = int(np.clip(np.searchsorted(steps.start_ps, lo, side="right") - 1, 0, max(len(steps) - 1, 0)))
        hit = (events.start_ps < hi) & (events.end_ps > lo)
        spent = np.minimum(events.end_ps[hit], hi) - np.maximum(events.start_ps[hit], lo)
        labels = events.label[hit]
        keys, inv = unique_inverse(labels)
        sums = np.bincount(inv, weights=spent) if len(keys) else np.zeros(0)
        names = [label_text(p, int(keys[k])) for k in np.argsort(-sums, kind="stable")[:5].tolist()]
        notes = (
            [f"{exposed[i] / 1e9:.2f} ms of such gaps in the step"] if len(exposed) > i and exposed[i] > 0 else []
        ) + ([f"most in {names[0]}"] if names else [])
        out.append(
            Window(
                lo,
                hi,
                f"step {int(steps.number[i])}: a {idle_in[j] / 1e9:.2f} ms gap, the GPU idle while the host works"
                + (f" ({'; '.join(notes)})" if notes else ""),
                names,
                thread=thread,
            )
        )
    return out


def host_work(
    p: Profile,
    work: iv.Intervals,
    exposed: np.ndarray,
    busy: iv.Intervals,
    step_windows: iv.Intervals,
    steps: Steps,
    events: HostWorkEvents,
) -> HostWork:
    """Python work on the main thread (`work`) while a GPU (`busy`) runs nothing: per step time
    (`exposed`), the events that fill it and the windows of the steps with the most."""
    n = max(len(steps), 1)
    idle = iv.intersect(iv.subtract(work, busy), step_windows)
    overlap = iv.measure_in(idle, events.start_ps, events.end_ps).astype(float)
    hit = overlap > 0
    keys, inv = unique_inverse(events.label[hit])
    sums = np.bincount(inv, weights=overlap[hit]) if len(keys) else np.zeros(0)
    rows = tuple(
        HostWorkRow(label_text(p, int(keys[j])), float(sums[j]) / 1e9 / n)
        for j in np.argsort(-sums, kind="stable")[:8].tolist()
    )
    threads = distinct(events.thread[hit]).tolist()
    thread = thread_name(p, int(threads[0])) if threads else "python"
    windows = _largest_gaps(p, idle, exposed, steps, events, thread)
    return HostWork(exposed, rows, tuple(windows))


def host_op_rows(
    p: Profile, host: EventTable, names: NameClasses, compute_ops: np.ndarray, top: int = 8
) -> tuple[HostOpRow, ...]:
    """Host-placed compute ops by time (ties by name): the `top` with the most, and every tf.py_function
    after them in the same order. A real capture can place thousands of ops on the host (5,492 on a
    Keras transformer on the CPU); a finding names a few, so only theirs are made into rows."""
    h, m = host, compute_ops
    ops, inv = unique_inverse(h.op[m])
    sums = np.bincount(inv, weights=h.dur_ps[m].astype(float)) if len(ops) else np.zeros(0)
    counts = np.bincount(inv) if len(ops) else np.zeros(0, np.int64)
    strings = p.names.strings  # no call per op: a real capture's thousands cost nothing here (issue 42)
    op_names = [strings[i] for i in np.asarray(p.ops.name, np.int64)[ops].tolist()]
    ps = sums.tolist()
    order = [j for _, _, j in sorted(zip((-sums).tolist(), op_names, range(len(ops))))]
    py_function = names.py_function_op[ops].tolist() if len(ops) else []
    rows = []
    for k, j in enumerate(order):
        if k < top or py_function[j]:
            o = int(ops[j])
            rows.append(
                HostOpRow(
                    op=o,
                    name=op_names[j],
                    type=p.op_type(o),
                    type_label=op_type_label(p.op_type(o), p.op_executed(o)),
                    ps=ps[j],
                    count=int(counts[j]),
                    py_function=bool(py_function[j]),
                )
            )
    return tuple(rows)


def longest_host_ops(p: Profile, host: EventTable, compute_ops: np.ndarray) -> tuple[Window, ...]:
    h = host
    m = np.flatnonzero(compute_ops)
    out = []
    for i in m[np.argsort(-h.dur_ps[m], kind="stable")[:3]].tolist():
        op = p.op_name(int(h.op[i]))
        out.append(
            Window(
                int(h.start_ps[i]),
                int(h.end_ps[i]),
                f"{op} on the host ({h.dur_ps[i] / 1e9:.2f} ms)",
                [op],
                thread=thread_name(p, int(h.thread[i])),
            )
        )
    return tuple(out)


def eager(p: Profile, host: EventTable, host_steps: Steps, gpu_events: list[EventTable]) -> Eager:
    """Eager execution inside the host's steps, and the device time of eager kernels on the GPUs."""
    h = host
    m = (h.kind == Kind.EAGER) & ((h.flags & Flag.FUNCTION) == 0) & (h.step >= 0)
    idx = np.flatnonzero(m)
    outer = np.zeros(len(idx), bool)
    # an execution is an eager marker not nested in another one on the same thread
    reach: dict[int, int] = {}
    for j, i in enumerate(idx.tolist()):
        t = int(h.thread[i])
        if int(h.start_ps[i]) >= reach.get(t, -(2**62)):
            outer[j] = True
        reach[t] = max(reach.get(t, -(2**62)), int(h.end_ps[i]))
    top = idx[outer]
    host_ps = iv.total(iv.union(h.start_ps[m], h.end_ps[m]))
    dev = 0.0
    for ev in gpu_events:
        dev += float(ev.dur_ps[((ev.flags & Flag.EAGER) != 0) & (ev.op >= 0) & (ev.step >= 0)].sum())
    # label each execution by its op (the inner marker may carry it when the outer does not)
    labels = np.where(h.op[top] >= 0, -2 - h.op[top].astype(np.int64), h.name[top].astype(np.int64))
    keys, inv = unique_inverse(labels)
    sums = np.bincount(inv, weights=h.dur_ps[top].astype(float)) if len(keys) else np.zeros(0)
    counts = np.bincount(inv) if len(keys) else np.zeros(0, np.int64)
    rows = sorted(
        (
            EagerRow(
                op_type=label_text(p, int(k)),
                executed=p.op_executed(-2 - int(k)) if k < -1 else label_text(p, int(k)),
                ps=float(s),
                count=int(c),
            )
            for k, s, c in zip(keys.tolist(), sums.tolist(), counts.tolist())
        ),
        key=lambda r: -r.ps,
    )
    window = None
    if len(top):
        steps = h.step[top]
        busiest = int(np.bincount(steps).argmax())
        sel = top[steps == busiest]
        window = Window(
            int(h.start_ps[sel[0]]),
            int(h.end_ps[sel[-1]]),
            f"{len(sel)} eager ops in step {int(host_steps.number[busiest])}",
            [r.op_type for r in rows[:5]],
            thread=thread_name(p, int(h.thread[sel[0]])),
        )
    return Eager(int(len(top)), float(host_ps), dev, tuple(rows), window)


def compilations(p: Profile, host: EventTable, names: NameClasses) -> tuple[Window, ...]:
    """XLA compilations: nested compile events on one thread count once."""
    h = host
    m = names.by_name(h.name, names.compile_name)
    out = []
    for t in distinct(h.thread[m]).tolist():
        sel = m & (h.thread == t)
        s, e = iv.union(h.start_ps[sel], h.end_ps[sel])
        out += [Window(int(a), int(b), "", [], thread=thread_name(p, t)) for a, b in zip(s.tolist(), e.tolist())]
    return tuple(sorted(out, key=lambda w: w.start_ps))


def host_window(p: Profile, events: EventTable, start: int, end: int, label: str) -> Window | None:
    """The window from the first to the last of `events` (host events) starting in [start, end)."""
    sel = np.flatnonzero((events.start_ps >= start) & (events.start_ps < end))
    if not len(sel):
        return None
    found = sorted({p.op_name(int(o)) or p.names[int(n)] for o, n in zip(events.op[sel], events.name[sel])})
    return Window(
        int(events.start_ps[sel[0]]),
        int(events.end_ps[sel[-1]]),
        label,
        found[:5],
        thread=thread_name(p, int(events.thread[sel[0]])),
    )


def host_op_labels(p: Profile, host: EventTable, pytorch: bool) -> HostOpLabels:
    """Each host event's op, the runtime ops named by TensorFlow's `name:Type` (classify.TF_OP) past
    `p.ops` (none in PyTorch, whose ops are all in `p.ops`)."""
    h = host
    label = np.where(h.kind == Kind.FRAMEWORK_OP, h.op, -1).astype(np.int64)
    if pytorch:
        return HostOpLabels(label, ())
    other = np.flatnonzero(h.kind == Kind.HOST_OTHER)
    index: dict[str, int] = {}
    by_name: dict[int, int] = {}
    for nid in distinct(h.name[other]).tolist():
        m = TF_OP.match(p.names[nid])
        if m:
            by_name[nid] = len(p.ops) + index.setdefault(m.group(1), len(index))
    if not by_name:
        return HostOpLabels(label, ())
    ids = np.fromiter(by_name.keys(), np.int64)
    vals = np.fromiter(by_name.values(), np.int64)
    names = h.name[other].astype(np.int64)
    pos = np.minimum(np.searchsorted(ids, names), len(ids) - 1)
    hit = ids[pos] == names
    label[other[hit]] = vals[pos[hit]]
    return HostOpLabels(label, tuple(index))


def ops_at(p: Profile, host: EventTable, times: np.ndarray) -> list[str]:
    """The innermost framework op running on the host at each time (on any thread: the latest
    started of those covering it), "" where none."""
    h = host
    ops = np.flatnonzero((h.kind == Kind.FRAMEWORK_OP) & (h.op >= 0))
    out = []
    starts, ends = h.start_ps[ops], h.end_ps[ops]
    for t in times.tolist():
        j = int(np.searchsorted(starts, t, side="right"))  # host events are sorted by start
        best = ""
        for k in range(j - 1, max(j - 2000, 0) - 1, -1):
            if ends[k] >= t:
                best = p.op_name(int(h.op[ops[k]]))
                break
        out.append(best)
    return out
