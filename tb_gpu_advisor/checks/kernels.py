"""3. One GPU: kernel efficiency (guide 1.2.3): Tensor Cores, dimensions, fusion."""
from __future__ import annotations

import re
import numpy as np

from tb_gpu_advisor.checks.base import Context, Threshold, check
from tb_gpu_advisor.checks.common import (
    TENSOR_CORE_ELIGIBLE,
    group_sum,
    device_events,
    device_evidence,
    elementwise_mask,
    eligible_mask,
    fmt_pct,
    ms,
    pct,
    stream_of,
)
from tb_gpu_advisor.profile import Flag, Kind
from tb_gpu_advisor.report import PASS, WARNING, Metric

# Assumed speed-up of Tensor Core GEMM/conv kernels over their fp32 counterparts: the guide's "up to
# about 3x" for mixed precision on Volta and newer. Savings that use it say so.
TENSOR_CORE_SPEEDUP = 3.0


def tensor_core_gpus(a) -> list[int]:
    return [d.id for d in a.profile.devices if d.has_tensor_cores and d.id in {g.device_id for g in a.gpus}]


def tensor_core_devices(ctx: Context):
    """(GPU ids with Tensor Cores, None), or ([], the not-applicable finding saying why not). For checks
    declared with needs_gpu: the profile has GPU activity."""
    a = ctx.a
    devs = tensor_core_gpus(a)
    if not devs:
        ccs = ", ".join(f"{d.compute_capability[0]}.{d.compute_capability[1]}" if d.compute_capability else "unknown"
                        for d in a.profile.devices)  # fmt: skip
        return [], ctx.not_applicable(f"No GPU with Tensor Cores (compute capability {ccs}; needs 7.0 or newer).")
    return devs, None


def kernel_table(a, devices: list[int]):
    """(kernels of the given GPUs, eligible mask, compute ps) merged over GPUs."""
    from tb_gpu_advisor.profile import EventTable

    evs = [device_events(a, d) for d in devices]
    ev = EventTable.concat([e.take(e.kind == Kind.KERNEL) for e in evs]) if evs else EventTable.empty()
    compute = sum(int(e.dur_ps[(e.kind == Kind.KERNEL) | (e.kind == Kind.MEMSET)].sum()) for e in evs)
    return ev, eligible_mask(a.profile, ev), compute


def _rows(a, ev, mask, n) -> list[dict]:
    """Top kernels of `mask` by time: kernel, op, precision, ms per step, count."""
    p = a.profile
    fp16 = ((ev.flags & Flag.FP16) != 0).astype(np.int64)
    key = (ev.name.astype(np.int64) * (len(p.ops) + 1) + (ev.op.astype(np.int64) + 1)) * 2 + fp16
    keys, sums, counts = group_sum(key[mask], ev.dur_ps[mask])
    rows = []
    for k, t, c in zip(keys[:8].tolist(), sums[:8].tolist(), counts[:8].tolist()):
        name, rest = divmod(k // 2, len(p.ops) + 1)
        rows.append({"kernel": p.names[name], "op": p.op_name(rest - 1), "precision": "16-bit" if k % 2 else "32-bit",
                     "ms_per_step": ms(t) / n, "count": int(c)})  # fmt: skip
    return rows


@check(
    id="tensorcore.unused",
    title="Tensor Cores used by matmul and convolution kernels",
    section="kernels",
    needs_gpu=True,
    anchor="#1._utilize_tensor_cores",
    thresholds={"warning": Threshold(10.0, "%", "device compute in eligible kernels not using Tensor Cores")},
    recommendation="""
Matmul and convolution kernels that could run on Tensor Cores do not. Tensor Cores need 16-bit
inputs (turn on mixed precision, see precision.mixed-off) and dimensions that are multiples of 8 (16
for int8), such as batch size, units and channels. cuDNN 7.6.3 and later pads convolution dimensions
by itself; GEMM dimensions you must pad yourself.""",
)
def tensorcore_unused(ctx: Context):
    a = ctx.a
    devs, na = tensor_core_devices(ctx)
    if na:
        return na
    ev, elig, compute = kernel_table(a, devs)
    no_tc = elig & ((ev.flags & Flag.TENSOR_CORE) == 0)
    t_no_tc = float(ev.dur_ps[no_tc].sum())
    t_elig = float(ev.dur_ps[elig].sum())
    share = pct(t_no_tc, compute)
    n = max(len(a.steps), 1)
    metrics = [
        Metric("no_tensor_core_pct", share, "%", "device compute in eligible kernels without Tensor Cores"),
        Metric("no_tensor_core_ms_per_step", ms(t_no_tc) / n, "ms", "per step"),
        Metric("eligible_tc_pct", pct(t_elig - t_no_tc, t_elig), "%", "eligible kernel time on Tensor Cores"),
    ]
    details = _rows(a, ev, no_tc, n)
    evidence = []
    if np.any(no_tc):
        k = np.flatnonzero(no_tc)[np.argmax(ev.dur_ps[no_tc])]
        d = devs[0]
        evidence.append(device_evidence(a, d, int(ev.start_ps[k]), int(ev.end_ps[k]),
                                        f"{a.profile.op_name(ev.op[k]) or 'kernel'} without Tensor Cores",
                                        [a.profile.names[ev.name[k]]], stream_id=stream_of(a, d, int(ev.start_ps[k]))))  # fmt: skip
    if not np.any(elig):
        return ctx.finding(PASS, "No Tensor-Core-eligible (matmul/convolution) kernels.", metrics)
    summary = f"{fmt_pct(share)} of device compute is matmul/convolution kernels that do not use Tensor Cores"
    if details:
        summary += f"; largest: {details[0]['kernel'][:80]} ({details[0]['precision']}, {details[0]['ms_per_step']:.2f} ms/step)"
    saving = t_no_tc / n * (1 - 1 / TENSOR_CORE_SPEEDUP)
    return ctx.finding(ctx.level(share), summary + ".", metrics, saving_ps=saving,
                       saving_basis=f"eligible kernels without Tensor Cores running {TENSOR_CORE_SPEEDUP:.0f}x faster on them",
                       evidence=evidence, details=details)  # fmt: skip


_TENSOR = re.compile(r"(half|bfloat16|bf16|f16|float16|int8|s8|float|f32|double)\[([\d,\s]*)\]", re.I)


def parse_shapes(shape: str) -> list[tuple[str, list[int]]]:
    """`(half[4000,1001];half[1001,3999])` -> [("half", [4000, 1001]), ("half", [1001, 3999])]."""
    out = []
    for m in _TENSOR.finditer(shape or ""):
        dims = [int(x) for x in m.group(2).replace(" ", "").split(",") if x]
        out.append((m.group(1).lower(), dims))
    return out


def _bad_dims(op_type: str, shapes) -> list[tuple[int, int, int]]:
    """(input index, dim index, size) of GEMM/conv dimensions that are not multiples of 8 (int8: 16)."""
    bad = []
    for i, (dtype, dims) in enumerate(shapes[:2]):
        if dtype not in ("half", "bfloat16", "bf16", "f16", "float16", "int8", "s8"):
            continue
        mult = 16 if dtype in ("int8", "s8") else 8
        if op_type.startswith("Conv"):
            check_axes = [len(dims) - 1] if i == 0 else [len(dims) - 2, len(dims) - 1]  # channels; filter in/out
        else:
            check_axes = [len(dims) - 2, len(dims) - 1]  # the matrix dimensions
        for ax in check_axes:
            if 0 <= ax < len(dims) and dims[ax] % mult:
                bad.append((i, ax, dims[ax]))
    return bad


def _padded(shapes, bad) -> str:
    out = []
    for i, (dtype, dims) in enumerate(shapes):
        dims = list(dims)
        for j, ax, size in bad:
            if j == i:
                mult = 16 if dtype in ("int8", "s8") else 8
                dims[ax] = -(-size // mult) * mult
        out.append(f"{dtype}[{','.join(map(str, dims))}]")
    return "(" + ";".join(out) + ")"


@check(
    id="tensorcore.dims",
    title="16-bit matmul dimensions are multiples of 8",
    section="kernels",
    needs_gpu=True,
    anchor="#1._utilize_tensor_cores",
    thresholds={"warning": Threshold(1.0, "%", "device compute in 16-bit ops with dimensions not multiples of 8")},
    recommendation="""
These 16-bit matmul or convolution ops have dimensions that are not multiples of 8 (16 for int8), so
their kernels cannot use Tensor Cores. Pad the dimensions (units, features, vocabulary, batch) up to
the next multiple of 8. cuDNN 7.6.3 and later pads convolution channels by itself.""",
    snippet="units = -(-units // 8) * 8  # round up to a multiple of 8",
)
def tensorcore_dims(ctx: Context):
    a = ctx.a
    p = a.profile
    ev, elig, compute = kernel_table(a, [g.device_id for g in a.gpus])
    fp16 = elig & ((ev.flags & Flag.FP16) != 0) & (ev.op >= 0)
    if not np.any(fp16):
        return ctx.not_applicable("No 16-bit matmul or convolution ops.")
    ops = np.unique(ev.op[fp16])
    with_shape = [o for o in ops.tolist() if p.ops.shape[o] and p.op_type(o) in TENSOR_CORE_ELIGIBLE]
    if not with_shape:
        return ctx.not_applicable("The profile has no shape annotations on the 16-bit matmul/convolution ops.")
    n = max(len(a.steps), 1)
    rows, bad_time = [], 0.0
    for o in with_shape:
        shapes = parse_shapes(p.ops.shape[o])
        bad = _bad_dims(p.op_type(o), shapes)
        if bad:
            m = fp16 & (ev.op == o)
            t = float(ev.dur_ps[m].sum())
            bad_time += t
            tc = bool(np.all(ev.flags[m] & Flag.TENSOR_CORE))
            rows.append({"op": p.op_name(o), "type": p.op_type(o), "shape": p.ops.shape[o],
                         "padded": _padded(shapes, bad), "ms_per_step": ms(t) / n, "uses_tensor_cores": tc})  # fmt: skip
    rows.sort(key=lambda r: -r["ms_per_step"])
    share = pct(bad_time, compute)
    metrics = [
        Metric("ops_checked", len(with_shape), "", "16-bit matmul/conv ops with shapes"),
        Metric("ops_not_multiple_of_8", len(rows), "", "ops with dimensions not multiples of 8"),
        Metric("affected_pct", share, "%", "device compute in those ops"),
    ]
    if not rows:
        return ctx.finding(PASS, f"All {len(with_shape)} 16-bit matmul/conv ops have dimensions in multiples of 8.", metrics)
    status = ctx.level(share)
    not_tc = sum(r["ms_per_step"] for r in rows if not r["uses_tensor_cores"])
    summary = (f"{len(rows)} 16-bit op(s) have dimensions not divisible by 8 ({fmt_pct(share)} of device compute); "
               f"e.g. {rows[0]['op']} {rows[0]['shape']} -> pad to {rows[0]['padded']}.")  # fmt: skip
    return ctx.finding(status, summary, metrics, saving_ps=not_tc * 1e9 * (1 - 1 / TENSOR_CORE_SPEEDUP),
                       saving_basis=f"those ops' kernels running {TENSOR_CORE_SPEEDUP:.0f}x faster on Tensor Cores once padded",
                       details=rows[:10])  # fmt: skip


@check(
    id="fusion.xla-candidates",
    title="No long chains of small element-wise kernels",
    section="kernels",
    needs_gpu=True,
    anchor="#2._fuse_operations",
    thresholds={
        "max_kernel_us": Threshold(40.0, "µs", "an element-wise kernel at or below this is small"),
        "min_chain": Threshold(3.0, "kernels", "consecutive small element-wise kernels that make a chain"),
        "warning": Threshold(20.0, "%", "device compute in chains"),
    },
    recommendation="""
Much device time goes to chains of small element-wise kernels, each reading and writing memory and
each launched separately. XLA fuses such chains into single kernels: compile the step with
`tf.function(jit_compile=True)` or turn on auto-clustering.""",
    snippet="""@tf.function(jit_compile=True)
def train_step(x, y):
    ...""",
)
def xla_candidates(ctx: Context):
    a = ctx.a
    p = a.profile
    max_ps = ctx.t["max_kernel_us"] * 1e6
    min_chain = int(ctx.t["min_chain"])
    chain_time, chains, compute = 0.0, 0, 0
    best = None
    for s in p.streams:
        ev = s.events
        kern = ev.kind == Kind.KERNEL
        compute += int(ev.dur_ps[kern | (ev.kind == Kind.MEMSET)].sum())
        k = ev.take(kern)
        small = elementwise_mask(p, k) & (k.dur_ps <= max_ps)
        # runs of consecutive small element-wise kernels on this stream
        edges = np.diff(np.r_[0, small.astype(np.int8), 0])
        starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
        for b, e in zip(starts.tolist(), ends.tolist()):
            if e - b >= min_chain:
                t = float(k.dur_ps[b:e].sum())
                chain_time += t
                chains += 1
                if best is None or e - b > best[0]:
                    best = (e - b, s.device_id, s.stream_id, int(k.start_ps[b]), int(k.end_ps[e - 1]), p.names[k.name[b]])
    n = max(len(a.steps), 1)
    share = pct(chain_time, compute)
    metrics = [
        Metric("chain_pct", share, "%", "device compute in chains of small element-wise kernels"),
        Metric("chains_per_step", chains / n, "", "chains per step"),
        Metric("chain_ms_per_step", ms(chain_time) / n, "ms", "per step"),
        Metric("xla", "on" if p.has_xla else "off", "", "XLA seen in the profile"),
    ]
    evidence = []
    if best:
        evidence.append(device_evidence(a, best[1], best[3], best[4], f"{best[0]} small element-wise kernels in a row",
                                        [best[5]], stream_id=best[2]))  # fmt: skip
    summary = f"{fmt_pct(share)} of device compute in {chains / n:.1f} chains per step of small element-wise kernels"
    if p.has_xla:
        return ctx.finding(PASS, summary + "; XLA is already on.", metrics, evidence=evidence)
    status = WARNING if (share or 0) >= ctx.t["warning"] else PASS
    return ctx.finding(status, summary + "; no sign of XLA.", metrics, evidence=evidence)
