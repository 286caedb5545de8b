"""The input pipeline table: tf.data stages (XSpace) and DataLoader waits (PyTorch)."""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor.measures import PYTORCH, Kind, Measures, distinct, isin, tf_data_present
from tb_gpu_advisor.tables.table import (
    FLAG,
    INTEGER,
    TEXT,
    US,
    Groups,
    Table,
    column,
    num,
    table,
    trace_link,
)

INPUT_COLUMNS = [
    column("stage", "Stage", None, False),
    column(
        "part",
        "Part",
        None,
        False,
        cell=TEXT,
        doc="`stage` (a tf.data stage); PyTorch: `wait` (the DataLoader's __next__), `copy` (the batch's "
        "host-to-device copies), `pin thread` (the DataLoader's pin-memory thread)",
    ),
    column("calls", "Calls", cell=INTEGER),
    column("self_us", "Self (µs)", "us"),
    column("total_us", "Total (µs)", "us"),
    column("per_step_us", "Per step (µs)", "us", doc="PyTorch: its time in the host's steps, over the steps"),
    column("max_step_us", "Max step (µs)", "us", doc="PyTorch: its time in the step where it takes most"),
    column(
        "waited_us",
        "Step waits (µs)",
        "us",
        doc="PyTorch: of its time in the steps, what the step waits on: a wait while the GPU has nothing "
        "else to do (without a GPU, all of it), a copy not under the GPU's compute; null: not measured",
    ),
    column("slowest", "Slowest", None, False, cell=FLAG),
]


@table(
    name="input",
    label="Input pipeline",
    noun="stages",
    order=40,
    row="one tf.data stage",
    row_type="InputRow",
    columns=INPUT_COLUMNS,
    extra={
        "prefetch": {"type": "boolean"},
        "parallel_map": {"type": "boolean"},
        "workers": {
            "type": ["boolean", "null"],
            "description": "PyTorch: the DataLoader loads in worker processes; null: no DataLoader",
        },
        "pin_memory": {
            "type": ["boolean", "null"],
            "description": "PyTorch: the batch's copies come from pinned memory or a pin-memory thread runs; "
            "null: no copy of the batch and no such thread",
        },
    },
)
def input_pipeline(m: Measures, group: str | None = None) -> Table:
    """The tf.data stages (`Iterator::Root::Prefetch::ParallelMapV2`...) over the capture: calls,
    total time and self time (a stage's time less the stages nested in it on its thread, as the
    profile plugin's input pipeline analyzer counts it), the slowest stage by self time, and whether
    the pipeline prefetches or maps in parallel. PyTorch has no stages: its rows are the way a batch
    takes from the DataLoader to the step (`pytorch_rows`)."""
    if m.framework == PYTORCH:
        return pytorch_rows(m)
    h = m.host
    stage = h.kind == Kind.INPUT_STAGE
    notes: list[str] = []
    iterators = [i for i, n in enumerate(m.name_strings) if n.startswith("Iterator::")]
    if iterators:  # the pipeline's own stages, not the prefetch thread's Produce/Consume marks
        stage &= isin(h.name, np.asarray(iterators, np.int32))
    if not stage.any():
        stage = h.kind == Kind.INPUT_WAIT
    idx = np.flatnonzero(stage)
    self_ps = h.dur_ps[idx].astype(np.int64)
    for t in distinct(h.thread[idx]).tolist():
        sel = np.flatnonzero(h.thread[idx] == t)
        stack: list[int] = []
        for k in sel[np.lexsort((-h.end_ps[idx[sel]], h.start_ps[idx[sel]]))].tolist():
            s = int(h.start_ps[idx[k]])
            while stack and s >= h.end_ps[idx[stack[-1]]]:
                stack.pop()
            if stack:
                self_ps[stack[-1]] -= int(h.dur_ps[idx[k]])
            stack.append(k)
    rows = []
    if len(idx):
        gr = Groups.of(h.name[idx].astype(np.int64), h.dur_ps[idx])
        own = np.bincount(gr.inverse, weights=self_ps.astype(np.float64), minlength=len(gr.keys))
        slowest = int(np.argmax(own))
        for j in range(len(gr.keys)):
            e = int(idx[gr.longest[j]])
            rows.append(
                {
                    "stage": m.name(int(gr.keys[j])),
                    "part": "stage",
                    "calls": int(gr.count[j]),
                    "self_us": num(own[j] / US),
                    "total_us": num(gr.total[j] / US),
                    "per_step_us": None,
                    "max_step_us": None,
                    "waited_us": None,
                    "slowest": j == slowest,
                    "trace": trace_link(int(h.start_ps[e]), int(h.end_ps[e]), None),
                }
            )
    names = [str(r["stage"]) for r in rows]
    if not rows:
        notes.append("the capture has no input pipeline events (tf.data stages or a DataLoader's __next__)")
    # what input.bound's advice reads too, so the table and the advice say the same
    present = tf_data_present(names)
    extra = {
        "prefetch": "`prefetch`" in present,
        "parallel_map": "a parallel `map`" in present,
        "workers": None,
        "pin_memory": None,
    }
    return Table("input", None, [c.json() for c in INPUT_COLUMNS], rows, "self_us", ("stage",), notes, extra)


def pytorch_rows(m: Measures) -> Table:
    """PyTorch: a row for each DataLoader `__next__` the step waits in, for the batch's host-to-device
    copies (by copy name and GPU), and for the pin-memory thread (its runtime calls), each with its
    time per step and what the step waits on (measures/input.py `loader_input`)."""
    li = m.loader_input
    n = max(len(m.host_steps), 1)
    rows = []
    for part in li.parts:
        in_steps = float(part.per_step_ps.sum())
        rows.append(
            {
                "stage": part.name,
                "part": part.what,
                "calls": part.calls,
                "self_us": num(part.total_ps / US),
                "total_us": num(part.total_ps / US),
                "per_step_us": num(in_steps / n / US) if len(m.host_steps) else None,
                "max_step_us": num(float(part.per_step_ps.max()) / US) if len(part.per_step_ps) else None,
                "waited_us": num(part.waited_ps / US) if part.waited_ps is not None else None,
                "slowest": False,
                "trace": trace_link(*part.longest, part.device),
            }
        )
    if rows:
        rows[int(np.argmax([part.total_ps for part in li.parts]))]["slowest"] = True
    notes = []
    if li.workers is None:
        notes.append("the trace shows no DataLoader: the input is not read through torch.utils.data, or not profiled")
    else:
        notes.append(
            "the DataLoader loads in worker processes"
            if li.workers
            else "the DataLoader loads in the training process (num_workers=0): each batch is made while the step waits"
        )
    copies = [part for part in li.parts if part.what == "copy"]
    if copies:
        waited = sum(part.waited_ps or 0.0 for part in copies) / US
        pinned = "from pinned memory" if li.pinned else "from pageable memory (no pin_memory)"
        notes.append(
            f"{sum(part.calls for part in copies)} host-to-device copies of the batch, {pinned}; "
            + (f"the steps wait {waited:,.0f} µs on them" if waited else "the steps do not wait on them")
        )
    elif m.gpu_ids:
        notes.append("no host-to-device copy of the batch follows the DataLoader's __next__")
    if li.pin_thread:
        notes.append("a pin-memory thread pins the batches (pin_memory=True)")
    extra = {
        "prefetch": False,
        "parallel_map": bool(li.workers),
        "workers": li.workers,
        "pin_memory": (bool(li.pinned) or li.pin_thread) if (li.pinned is not None or li.pin_thread) else None,
    }
    return Table("input", None, [c.json() for c in INPUT_COLUMNS], rows, "total_us", ("stage", "part"), notes, extra)
