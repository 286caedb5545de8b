"""The input pipeline table: tf.data stages (XSpace) and DataLoader waits (PyTorch)."""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor.measures import MULTI_WORKER_LOADER, PYTORCH, Kind, Measures, distinct, isin, tf_data_present
from tb_gpu_advisor.tables.table import (
    FLAG,
    INTEGER,
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
    column("calls", "Calls", cell=INTEGER),
    column("self_us", "Self (µs)", "us"),
    column("total_us", "Total (µs)", "us"),
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
    extra={"prefetch": {"type": "boolean"}, "parallel_map": {"type": "boolean"}},
)
def input_pipeline(m: Measures, group: str | None = None) -> Table:
    """The tf.data stages (`Iterator::Root::Prefetch::ParallelMapV2`...) over the capture: calls,
    total time and self time (a stage's time less the stages nested in it on its thread, as the
    profile plugin's input pipeline analyzer counts it), the slowest stage by self time, and whether
    the pipeline prefetches or maps in parallel. Without tf.data stages (PyTorch), the host's waits
    for input (the DataLoader's `__next__`) are the rows."""
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
                    "calls": int(gr.count[j]),
                    "self_us": num(own[j] / US),
                    "total_us": num(gr.total[j] / US),
                    "slowest": j == slowest,
                    "trace": trace_link(int(h.start_ps[e]), int(h.end_ps[e]), None),
                }
            )
    names = [str(r["stage"]) for r in rows]
    if not rows:
        notes.append(
            "the capture has no input pipeline events (tf.data stages or a DataLoader's __next__)"
            if m.framework != PYTORCH
            else "the trace shows no DataLoader: the input is not read through torch.utils.data, or not profiled"
        )
    elif m.framework == PYTORCH:
        notes.append(
            "PyTorch traces have no pipeline stages: the rows are the training loop's waits for the next batch"
        )
    # what input.bound's advice reads too, so the table and the advice say the same
    present = tf_data_present(names)
    extra = {
        "prefetch": "`prefetch`" in present,
        "parallel_map": "a parallel `map`" in present or any(MULTI_WORKER_LOADER in n for n in names),
    }
    return Table("input", None, [c.json() for c in INPUT_COLUMNS], rows, "self_us", ("stage",), notes, extra)
