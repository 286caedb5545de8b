"""The kernels table: per kernel name (or name and op), calls, times, SM efficiency, occupancy."""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor.measures import Flag, Kind, Measures
from tb_gpu_advisor.tables.table import (
    COUNT,
    FLAG,
    INTEGER,
    US,
    Groups,
    NamedRows,
    Table,
    column,
    num,
    short_name,
    table,
    trace_link,
)

KERNEL_COLUMNS = [
    column("short_name", "Kernel", None, False),
    column("op", "Op", None, False),
    column("device", "GPU", cell=INTEGER),
    column("calls", "Calls", cell=INTEGER),
    column("total_us", "Total (µs)", "us"),
    column("mean_us", "Mean (µs)", "us"),
    column("min_us", "Min (µs)", "us"),
    column("max_us", "Max (µs)", "us"),
    column("device_share_pct", "Share of GPU kernel time (%)", "pct"),
    column("grid", "Grid", None, False),
    column("block", "Block", None, False),
    column("registers", "Registers / thread", cell=COUNT),
    column("shared_memory_bytes", "Shared memory (bytes)", "bytes", cell=COUNT),
    column("sm_efficiency_pct", "Est. SM efficiency (%)", "pct"),
    column("occupancy_pct", "Est. achieved occupancy (%)", "pct"),
    column("tensor_cores", "Tensor Cores", None, False, cell=FLAG),
    column("name", "Full name", None, False),
]


AMD_LABELS = {
    "device": "GPU",
    "sm_efficiency_pct": "Est. CU efficiency (%)",
    "tensor_cores": "Matrix cores (MFMA)",
}


def _dims(x: int, y: int, z: int) -> str:
    return f"{x},{y},{z}" if x > 0 else ""


def _row_names(m: Measures) -> NamedRows:
    """The kernels (and NCCL's) of every GPU: the names a finding's evidence is linked to rows by."""
    ids = [g.events.name[(g.events.kind == Kind.KERNEL) | (g.events.kind == Kind.COLLECTIVE)] for g in m.gpus]
    return NamedRows(m, np.concatenate(ids) if ids else np.zeros(0, np.int32))


@table(
    name="kernels",
    label="Kernels",
    noun="kernels",
    order=10,
    row="one kernel name (and op with group=name_op) on one GPU",
    row_type="KernelRow",
    columns=KERNEL_COLUMNS,
    groups=(("name", "By kernel"), ("name_op", "By kernel and op")),
    per_step=True,
    extra={
        "step": {
            "type": "integer",
            "description": "present when the rows are one step's (the kernels table with step=N): the step's "
            "number as the report numbers steps",
        }
    },
    row_names=_row_names,
)
def kernels(m: Measures, group: str = "name", step: int | None = None) -> Table:
    """Kernels (NCCL's included; copies and memsets are not kernels) of each GPU over the whole
    capture, by name or by name and launching op. Grid, block, registers, shared memory and the op
    are the longest instance's (a kernel launched with several shapes shows the one `trace` opens).
    SM efficiency: min(blocks per SM, 1) weighted by time, blocks per SM being the trace's own (PyTorch's
    `blocks per SM`), else the grid's blocks over the GPU's SMs (n/a without either); occupancy: the trace's `est. achieved occupancy %`
    weighted by time over the instances that have it. `step`: only the kernels of the step with that
    number (a step starts them; as the report numbers steps, `ProfilerStep#N` on PyTorch)."""
    rows: list[dict] = []
    notes: list[str] = []
    amd_names: list[int] = []  # each row's name id, for AMD's matrix cores
    for g in m.gpus:
        ev = g.events
        wanted = np.isin(ev.kind, np.array([Kind.KERNEL, Kind.COLLECTIVE], np.int8))
        if step is not None:
            k = np.flatnonzero(g.steps.number == step)
            wanted &= ev.step == (int(k[0]) if len(k) else -2)
            if not len(k):
                notes.append(f"GPU {g.id} has no step {step}{_step_range(g.steps.number)}")
        sel = np.flatnonzero(wanted)
        if not len(sel):
            continue
        name, op, dur = ev.name[sel].astype(np.int64), ev.op[sel].astype(np.int64), ev.dur_ps[sel]
        keys = name * (m.op_count + 1) + (op + 1) if group == "name_op" else name
        gr = Groups.of(keys, dur)
        device_total = float(dur.sum())
        per_sm = g.blocks_per_sm(sel)
        eff = np.where(per_sm > 0, np.minimum(per_sm, 1.0), np.nan)
        sm_eff = gr.weighted(eff, dur)
        occ = gr.weighted(ev.occupancy[sel].astype(np.float64), dur)
        tc = np.bincount(gr.inverse, weights=(ev.flags[sel] & Flag.TENSOR_CORE) > 0, minlength=len(gr.keys)) > 0
        start, end = ev.start_ps[sel], ev.end_ps[sel]
        for j in range(len(gr.keys)):
            i = int(gr.longest[j])
            e = int(sel[i])
            full = m.name(int(name[i]))
            amd_names.append(int(name[i]))
            launched = ev.grid_x[e] > 0
            total = float(gr.total[j])
            rows.append(
                {
                    "name": full,
                    "short_name": short_name(full),
                    "op": m.op_name(int(op[i])),
                    "device": g.id,
                    "calls": int(gr.count[j]),
                    "total_us": num(total / US),
                    "mean_us": num(total / gr.count[j] / US),
                    "min_us": num(dur[gr.shortest[j]] / US),
                    "max_us": num(dur[i] / US),
                    "device_share_pct": num(100 * total / device_total if device_total else None),
                    "grid": _dims(int(ev.grid_x[e]), int(ev.grid_y[e]), int(ev.grid_z[e])),
                    "block": _dims(int(ev.block_x[e]), int(ev.block_y[e]), int(ev.block_z[e])),
                    "registers": int(ev.regs[e]) if launched else None,
                    "shared_memory_bytes": int(ev.shmem[e]) if launched else None,
                    "sm_efficiency_pct": num(100 * sm_eff[j]),
                    "occupancy_pct": num(occ[j]),
                    "tensor_cores": bool(tc[j]),
                    "trace": trace_link(int(start[i]), int(end[i]), g.id),
                }
            )
        if not np.isfinite(per_sm).any() and (ev.grid_x[sel] > 0).any():
            notes.append(
                f"GPU {g.id}: the trace gives neither the GPU's number of SMs nor the kernels' blocks per SM, so SM "
                "efficiency is not estimated"
            )
    if not rows and step is None:
        notes.append("the capture has no GPU kernels")
    elif not rows and not notes:
        notes.append(f"no GPU kernel started in step {step}")
    columns = [c.json() for c in KERNEL_COLUMNS]
    if m.gpus and all(g.device.is_amd for g in m.gpus):
        # AMD's words: compute units, and matrix cores (MFMA) where NVIDIA has Tensor Cores, as the
        # kernel's name tells (the rule the Tensor Core checks cite, classify.AMD_MATRIX)
        on_matrix = m.names.matrix_core_name
        for r, n in zip(rows, amd_names):
            r["tensor_cores"] = bool(on_matrix[n])
        notes = [n.replace("number of SMs", "number of compute units") for n in notes]
        columns = [{**c, "label": AMD_LABELS.get(c["key"], c["label"])} for c in columns]
    extra = {} if step is None else {"step": step}
    return Table("kernels", group, columns, rows, "total_us", ("name", "short_name", "op"), notes, extra)


def _step_range(numbers: np.ndarray) -> str:
    if not len(numbers):
        return " (it has no steps)"
    return f" (its steps are {int(numbers.min())} to {int(numbers.max())})"
