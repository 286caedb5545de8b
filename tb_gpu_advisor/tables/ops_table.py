"""The ops table: framework ops, their host self/total time and the device time they launched."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from tb_gpu_advisor.measures import PYTORCH, EventTable, Kind, Measures, distinct, isin
from tb_gpu_advisor.tables.table import (
    INTEGER,
    US,
    NamedRows,
    Table,
    column,
    num,
    table,
    trace_link,
)

OP_COLUMNS = [
    column("name", "Op", None, False),
    column("input_shapes", "Input shapes", None, False),
    column("calls", "Calls", cell=INTEGER),
    column("device_us", "Device self (µs)", "us"),
    column("device_total_us", "Device total (µs)", "us"),
    column("host_self_us", "Host self (µs)", "us"),
    column("host_total_us", "Host total (µs)", "us"),
    column("stack", "Call stack", None, False),
]
# what nests on a thread: ops, step markers, input waits (a DataLoader's __next__ is an op in
# PyTorch's own tree) and annotations (`nccl:all_to_all` inside `record_param_comms`); runtime
# calls are leaves
_NESTING = (Kind.FRAMEWORK_OP, Kind.STEP, Kind.INPUT_WAIT, Kind.EAGER, Kind.HOST_OTHER)


def _device_by_corr(m: Measures) -> dict[int, int]:
    """Device time (ps) of the kernels, copies and memsets each runtime call launched, by its
    correlation id, over the active GPUs."""
    out: dict[int, int] = {}
    for g in m.gpus:
        ev = g.events
        sel = ev.corr >= 0
        if sel.any():
            corr, inv = np.unique(ev.corr[sel], return_inverse=True)
            dur = np.bincount(inv.reshape(-1), weights=ev.dur_ps[sel].astype(np.float64))
            for c, d in zip(corr.tolist(), dur.tolist()):
                out[c] = out.get(c, 0) + int(d)
    return out


class OpCalls(NamedTuple):
    calls: np.ndarray  # host event index of each op call
    self_ps: np.ndarray  # its host self time
    device_total_ps: np.ndarray  # the device time launched under it
    device_self_ps: np.ndarray  # the device time launched by its own runtime calls (none under a child op)
    launched: np.ndarray  # the correlation ids of the runtime calls inside an op (sorted)
    moved: dict[int, int]  # runtime call's host event index: the call it was merged into


def _op_calls(m: Measures, label: np.ndarray) -> OpCalls:
    """Each op call on the host: its host event index, self time, device total and device self time,
    the runtime calls inside ops, and {runtime call's host event index: the call it was merged into} for
    the runtime calls inside a merged-away op. Self time
    is the call's time less its direct children's (nested ops, step markers, input waits, annotations
    and runtime calls on its thread), as PyTorch's plugin and the Profile tab count it. A call whose one
    child is a call of the same op is counted once (PyTorch's plugin merges them as the autograd profiler
    does): the child is merged away and the parent's self time is the child's. Device total is the
    device time launched by the runtime calls anywhere under the call on its thread (its own and its
    children's, as the plugin's `device_duration`: `aten::cudnn_convolution_backward` launches nothing
    itself, its children do). Device self time is what the call's own runtime calls launched (those
    whose innermost op is the call): the op that launched a kernel is the one its launch call nests in
    on the thread, as HTA's call graph pairs them (a launch's parent is the innermost op around it), not
    only the op whose external id the kernel carries (tests/tables/test_tables.py, on traces whose
    external ids were rewritten)."""
    h = m.host
    kind = h.kind
    runtime = (kind == Kind.LAUNCH) | ((kind == Kind.HOST_OTHER) & (h.corr >= 0))
    idx = np.flatnonzero(np.isin(kind, np.array(_NESTING, np.int8)) | runtime)
    n = len(idx)
    starts, ends = h.start_ps[idx], h.end_ps[idx]
    # plain lists: the walk below reads them one value at a time
    start_l, end_l, is_rt = starts.tolist(), ends.tolist(), runtime[idx].tolist()
    child_ps = [0] * n  # direct children's time
    kids = [0] * n  # direct children that are not runtime calls
    only_kid = [-1] * n  # the last of them (the only one where kids == 1)
    inner_op: dict[int, int] = {}  # runtime call -> the innermost op around it
    is_op = (label[idx] >= 0).tolist()
    by_corr = _device_by_corr(m)
    corr_l = h.corr[idx].tolist() if by_corr else [-1] * n
    parent = [-1] * n  # the enclosing event, for the device totals
    device_ps = [0] * n  # device time launched under each event
    walked: list[int] = []  # the events in the order of the walk, thread by thread
    threads = h.thread[idx]
    for t in distinct(threads).tolist():
        sel = np.flatnonzero(threads == t)
        order = sel[np.lexsort((-ends[sel], starts[sel]))].tolist()  # by start, the longer first
        stack: list[int] = []
        for j in order:
            s_, e = start_l[j], end_l[j]
            while stack and s_ >= end_l[stack[-1]]:
                stack.pop()
            if stack:
                top = stack[-1]
                if e > end_l[top]:
                    continue  # overlaps its enclosing event without fitting in it: no tree holds it
                child_ps[top] += e - s_
                parent[j] = top
                if is_rt[j]:
                    for k in reversed(stack):
                        if is_op[k]:
                            inner_op[j] = k
                            break
                else:
                    kids[top] += 1
                    only_kid[top] = j
            if not is_rt[j]:
                stack.append(j)
            elif corr_l[j] >= 0:
                device_ps[j] = by_corr.get(corr_l[j], 0)
        walked.extend(order)
    if by_corr:  # the walk backwards: children before their parents
        for j in reversed(walked):
            if parent[j] >= 0:
                device_ps[parent[j]] += device_ps[j]
    ops = label[idx].tolist()
    dur = (ends - starts).tolist()
    self_ps = np.zeros(len(h), np.int64)
    total_dev = np.zeros(len(h), np.int64)
    total_dev[idx] = device_ps
    merged = np.zeros(len(h), bool)
    gone = [False] * n
    kept_in: dict[int, int] = {}  # merged-away op -> the call it was merged into
    op_pos = np.flatnonzero(label[idx] >= 0)
    for j in op_pos[np.lexsort((-ends[op_pos], starts[op_pos]))].tolist():  # parents before children
        if gone[j]:
            continue
        node = j
        while kids[node] == 1 and ops[only_kid[node]] == ops[j]:
            node = only_kid[node]  # one child, the same op: merged into this call
            gone[node] = True
            kept_in[node] = j
        self_ps[idx[j]] = dur[j] - child_ps[node]
    merged[idx[np.flatnonzero(gone)]] = True
    calls = idx[op_pos]
    calls = calls[~merged[calls]]
    moved = {int(idx[r]): int(idx[kept_in[k]]) for r, k in inner_op.items() if k in kept_in}
    self_dev = np.zeros(len(h), np.int64)
    launched = []
    for r, k in inner_op.items():
        if corr_l[r] >= 0:
            self_dev[idx[kept_in.get(k, k)]] += device_ps[r]
            launched.append(corr_l[r])
    return OpCalls(
        calls, self_ps[calls], total_dev[calls], self_dev[calls], distinct(np.array(launched, np.int64)), moved
    )


def _launch_shapes(m: Measures, ev: EventTable, sel: np.ndarray, moved: dict[int, int]) -> np.ndarray:
    """The shapes of the selected device events: those of the op call that launched them (the
    reader's, by external id), or, where that call was merged into its parent (an op whose only
    child is the same op), the parent's, as the calls are counted: found through the runtime call
    with the event's correlation id."""
    shape = ev.shape[sel].copy()
    if moved:
        h = m.host
        rt = np.fromiter(moved.keys(), np.int64)
        kept = np.fromiter(moved.values(), np.int64)
        corr = h.corr[rt]
        order = np.argsort(corr, kind="stable")
        corr, kept = corr[order], kept[order]
        dev_corr = ev.corr[sel]
        at = np.minimum(np.searchsorted(corr, dev_corr), len(corr) - 1)
        hit = (corr[at] == dev_corr) & (dev_corr >= 0)
        shape[hit] = h.shape[kept[at[hit]]]
    return shape


def _row_names(m: Measures) -> NamedRows:
    """The framework ops: the names a finding's evidence is linked to rows by."""
    return NamedRows(m, m.op_name_ids)


@table(
    name="ops",
    label="Operators",
    noun="operators",
    order=20,
    row="one framework op (and input shape with group=op_shape)",
    row_type="OpRow",
    columns=OP_COLUMNS,
    groups=(("op", "By operator"), ("op_shape", "By operator and input shape")),
    row_names=_row_names,
)
def ops(m: Measures, group: str = "op") -> Table:
    """Framework ops over the whole capture (PyTorch ATen ops; TensorFlow ops by name; JAX
    primitives): calls and host time from the host's op events, device self time from the device
    events attributed to the op (PyTorch: the kernels, copies and memsets launched by the op itself,
    paired through the runtime call's external id; XSpace: the TF or XLA op each GPU event names),
    device total time on PyTorch from what the op's calls and every op under them launched (the
    runtime calls under each call, paired with the device events by correlation id), as PyTorch's
    plugin counts it; on XSpace, where a device event names its op, total is self.
    Grouped `op_shape`, PyTorch calls are split by their own input shapes and device events by the
    shapes of the call that launched them."""
    h = m.host
    labels = m.host_op_labels  # ops, and XSpace's runtime ops past them (by name)
    label, extra = labels.label, labels.extra
    n_ops = m.op_count
    oc = _op_calls(m, label)
    calls, self_ps, total_ps, moved = oc.calls, oc.self_ps, oc.device_total_ps, oc.moved
    by_shape = group == "op_shape"
    pytorch = m.framework == PYTORCH
    per_call = by_shape and pytorch
    gpus = m.gpus
    # each call and each attributed device event: its group, an (op, shape id) pair; on PyTorch the
    # device events launched from inside an op are its call's (device self time, by nesting), the rest
    # go by the op the reader gave them (their external id's)
    if pytorch:
        dev_sel = [(g.events.op >= 0) & ~isin(g.events.corr, oc.launched) for g in gpus]
    else:
        dev_sel = [g.events.op >= 0 for g in gpus]
    pair_op = np.concatenate([label[calls], *(g.events.op[s] for g, s in zip(gpus, dev_sel))]).astype(np.int64)
    if per_call:
        dev_shapes = [_launch_shapes(m, g.events, s, moved) for g, s in zip(gpus, dev_sel)]
        pair_shape = np.concatenate([h.shape[calls], *dev_shapes])
    else:
        pair_shape = np.full(len(pair_op), -1, np.int64)
    pairs, inv = np.unique(np.stack([pair_op, pair_shape.astype(np.int64)]), axis=1, return_inverse=True)
    inv = inv.reshape(-1)
    n_groups = pairs.shape[1]
    op = inv[: len(calls)]
    host_total = np.bincount(op, weights=h.dur_ps[calls].astype(np.float64), minlength=n_groups)
    host_self = np.bincount(op, weights=self_ps.astype(np.float64), minlength=n_groups)
    count = np.bincount(op, minlength=n_groups)
    device_total = np.bincount(op, weights=total_ps.astype(np.float64), minlength=n_groups)
    device = np.zeros(n_groups)
    if pytorch:
        device += np.bincount(op, weights=oc.device_self_ps.astype(np.float64), minlength=n_groups)
    device_count = np.zeros(n_groups, np.int64)
    longest = np.full(n_groups, -1, np.int64)  # host event index of each group's longest call
    if len(calls):
        order = np.lexsort((-h.dur_ps[calls], op))
        first = np.r_[True, op[order][1:] != op[order][:-1]]
        longest[op[order][first]] = calls[order][first]
    dev_longest: dict[int, tuple[int, int, int]] = {}  # group -> (dur, start, device), ops seen only on a GPU
    at = len(calls)
    for g, sel in zip(gpus, dev_sel):
        ev = g.events
        o = inv[at : at + int(sel.sum())]
        at += len(o)
        device += np.bincount(o, weights=ev.dur_ps[sel].astype(np.float64), minlength=n_groups)
        device_count += np.bincount(o, minlength=n_groups)
        if len(o):
            d, st = ev.dur_ps[sel], ev.start_ps[sel]
            k = np.lexsort((-d, o))
            first = np.r_[True, o[k][1:] != o[k][:-1]]
            for i in k[first].tolist():
                if int(d[i]) > dev_longest.get(int(o[i]), (-1, 0, 0))[0]:
                    dev_longest[int(o[i])] = (int(d[i]), int(st[i]), g.id)
    rows: dict[tuple[str, str], dict] = {}
    python_frames = m.python_frames  # PyTorch 1.10 and later: the stack is in python_function events
    for i in np.flatnonzero((count > 0) | (device_count > 0)).tolist():
        o_, sid = int(pairs[0, i]), int(pairs[1, i])
        name = m.op_name(o_) if o_ < n_ops else extra[o_ - n_ops]
        if per_call:
            shape = m.name(sid) if sid >= 0 else ""
        else:
            shape = m.op_shapes[o_] if by_shape and o_ < len(m.op_shapes) else ""
        key = (name, shape)
        r = rows.get(key)
        if r is None:
            r = rows[key] = {
                "name": name,
                "input_shapes": shape,
                "calls": 0,
                "device_us": 0.0,
                "device_total_us": 0.0,
                "host_self_us": 0.0,
                "host_total_us": 0.0,
                "stack": "",
                "trace": None,
                "_longest": -1,
            }
        r["calls"] += int(count[i]) if count[i] else int(device_count[i])
        r["device_us"] += device[i] / US
        # PyTorch: what the call and its children launched; XSpace's device events name their op: its own
        r["device_total_us"] += (device_total[i] if pytorch and count[i] else device[i]) / US
        r["host_self_us"] += host_self[i] / US
        r["host_total_us"] += host_total[i] / US
        if longest[i] >= 0 and h.dur_ps[longest[i]] > r["_longest"]:
            j = int(longest[i])
            r["_longest"] = int(h.dur_ps[j])
            r["trace"] = trace_link(int(h.start_ps[j]), int(h.end_ps[j]), None)
            r["stack"] = m.name(int(h.stack[j])) if h.stack[j] >= 0 else python_frames.of(j) if python_frames else ""
        elif r["trace"] is None and i in dev_longest:
            dur_ps, start_ps, gpu = dev_longest[i]
            r["trace"] = trace_link(start_ps, start_ps + dur_ps, gpu)
    out = []
    for r in rows.values():
        del r["_longest"]
        for col in ("device_us", "device_total_us", "host_self_us", "host_total_us"):
            r[col] = num(r[col])
        if not gpus:
            r["device_us"] = r["device_total_us"] = None
        out.append(r)
    notes = []
    if not out:
        notes.append("the capture has no framework ops")
    if m.framework == PYTORCH and out and not any(m.op_shapes):
        notes.append("the trace has no input shapes: profile with record_shapes=True")
    sort = "device_us" if gpus else "host_self_us"
    return Table("ops", group, [c.json() for c in OP_COLUMNS], out, sort, ("name", "input_shapes", "stack"), notes)
