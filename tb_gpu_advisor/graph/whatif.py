"""What a fix would do to the step: the step graph re-timed with the fix applied, against the same graph
re-timed as it would run without the profiler. docs/whatif.md gives each model, its sources and its
measured error on real before/after pairs.

Every change keeps the host's own work unless the fix removes it, and lets each device op start when
its launch, its stream and what it waits for allow (`simulate`), so a saving off the step's critical
path counts for nothing, and all fixes simulated together never double count.
"""

from __future__ import annotations

import dataclasses
import re
import threading
from typing import Callable

import numpy as np

from tb_gpu_advisor.graph import roofline
from tb_gpu_advisor.graph.build import INPUT, LAUNCH, SYNC, StepGraph, column_at
from tb_gpu_advisor.graph.changes import CHANGES, NEEDS
from tb_gpu_advisor.graph.critical import critical_path
from tb_gpu_advisor.graph.hardware import Peaks, peaks
from tb_gpu_advisor.graph.simulate import Changes, Timing, simulate
from tb_gpu_advisor.model.arrays import isin, median
from tb_gpu_advisor.model.profile import Flag, Kind, Profile

# The profiler's own cost per host event it records (an op, a runtime call, a marker), with
# record_shapes: on real host-bound steps timed without the profiler, 2.9 µs (ResNet-50 at batch 64 on
# an H200's host), 3.3 (the same in bf16), 3.4 (a 12-layer MLP), 2.0 (the MLP in CUDA graphs), 2.3
# (GPT-2 with its vocabulary padded) (tests/data/gpu_pairs), and 2.0-2.4 on this project's CPU
# (scripts/capture_overhead_cpu.py): their median
PROFILER_EVENT_PS = 2_600_000
# ... and inside each runtime call it traces (CUPTI's callbacks around a launch), fitted with the
# per-event cost on the same captures: it brings their four host-bound steps within 5-11% of the steps
# timed without the profiler (tests/test_graph.py)
RUNTIME_CALL_PS = 2_000_000
# ... per Python call it records with with_stack (`python_function` events): 2.1 µs on this project's
# CPU capture (scripts/capture_overhead_cpu.py --with-stack, tests/test_graph.py)
PYTORCH_PYTHON_EVENT_PS = 2_100_000
# ... and per event of an XSpace capture (TensorFlow's and JAX's TraceMe events, JAX's Python tracer,
# on by default): JAX run op by op on an H200 recorded 104,000 events a step and ran 45.7 ms a step
# slower under the profiler (tests/data/gpu_pairs/jax_eager), 0.44 µs an event
XSPACE_EVENT_PS = 440_000
# A batch the input pipeline has ready: the DataLoader's `__next__` with workers that keep up took
# 41-49 µs (tests/data/gpu_pairs/loader_w4)
INPUT_READY_PS = 50_000_000
# a launch this much longer than a typical one waited for a slot in the launch queue (1,024 entries)
BLOCKED_LAUNCH_PS = 100_000_000
# A captured graph: one launch per graph (the forward's and the backward's in PyTorch, the step's in
# JAX), cudaGraphLaunch and the graphed callable's Python: 122 and 146 µs in mlp_graphed's trace
GRAPH_REPLAY_PS = 150_000_000
GRAPH_NODE_GAP_PS = 1_000_000
# torch.compile's generated code launches a kernel in a few µs of Python, not an op's dispatch
COMPILED_LAUNCH_PS = 6_000_000
# Kernels a 16-bit matrix op runs with dimensions not multiples of 8 reach a smaller share of the
# Tensor Cores' peak: 114-118 TFLOP/s for GPT-2's vocabulary of 50,257 on an H200 against 680-715 for
# its aligned GEMMs (tests/data/gpu_pairs/gpt2_bf16), 3.1x slower on an H100 with dims of 2,044
# (tests/data/gpu/torch_fp16_odd_dims)
ODD_DIMS_SLOWDOWN = 3.0
# by precision and alignment (odd: align1 kernels; even: align2/4): bf16 with an odd vocabulary 6.0x
# slower than aligned on an H200 (GPT-2, tests/data/gpu_pairs), fp16 with dims 2,044 and 8,176 3.1x
# on an H100 (tests/data/gpu/torch_fp16_odd_dims), TF32 with the odd vocabulary 2.3x (gpt2_tf32)
SLOWDOWN = {("16", True): 6.0, ("16", False): 3.0, ("tf32", True): 2.3, ("tf32", False): 2.3}
# Autocast runs these ops (and their backward) in fp32 (PyTorch's "CUDA ops that can autocast to
# float32" list): their kernels keep their time under bf16
AUTOCAST_FP32 = re.compile(
    r"layer_norm|group_norm|aten::(linalg_vector_)?norm|softmax|nll_loss|cross_entropy|mse_loss|l1_loss|"
    r"binary_cross_entropy|kl_div|aten::pow|aten::exp|aten::log\b|aten::log_|rsqrt|reciprocal|cumsum|"
    r"cumprod|aten::prod|aten::sum|aten::mean|cosine_similarity|aten::dist|cdist|pdist|renorm|softplus"
)
# cuDNN's layout changes for fp32 NCHW tensors, which channels_last removes
LAYOUT = re.compile(r"nchwToNhwc|nhwcToNchw|nchw2nhwc|nhwc2nchw", re.I)
# ATen's generic element-wise and reduction kernels, which Inductor (torch.compile) and XLA fuse
POINTWISE = re.compile(
    r"elementwise_kernel|vectorized_elementwise|unrolled_elementwise|reduce_kernel|direct_copy|_copy_kernel|"
    r"fill_kernel|CatArrayBatchedCopy|index_elementwise|Memset|^loop_|^input_|^fusion",
    re.I,
)
# a cast's host cost under autocast (aten::to and its copy, without the profiler)
CAST_HOST_PS = 15_000_000
# memory-bound kernels reach about this share of the bandwidth
BANDWIDTH_SHARE = 0.7
# the share of its peak an aligned matrix kernel reaches where the trace has none to measure: 0.69-0.72
# for fp32 and bf16 GEMMs of GPT-2 on an H200 (tests/data/gpu_pairs)
TYPICAL_SHARE = 0.7
# matrix ops, by name where the op is unknown (cuBLAS, cuDNN, CUTLASS, XLA's Triton GEMMs)
GEMM_NAME = re.compile(r"gemm|conv(?!ert)|scudnn|hmma|xmma|cutlass|wgrad|dgrad|fprop|nvjet|fmha|flash|attention", re.I)
ATTENTION_NAME = re.compile(r"fmha|flash|attention", re.I)
FOREACH = re.compile(r"multi_tensor_apply|foreach|fused_adam|fused_sgd", re.I)
# syncs a user can drop: explicit synchronize calls, `.item()`, `.cpu()`, `.tolist()`; not those a
# framework op needs (nonzero, unique, masked_select)
REMOVABLE_SYNC_OPS = frozenset(
    {"", "aten::_local_scalar_dense", "aten::item", "aten::_to_copy", "aten::copy_", "aten::to", "aten::cpu"}
)


@dataclasses.dataclass(frozen=True, slots=True)
class Prediction:
    """One change's predicted step: without the profiler, as it is and with the change."""

    change: str
    step_ps: float  # the step as simulated without the profiler
    new_step_ps: float
    bound: str  # what sets the step before the change: "GPU", "host", "input"
    new_bound: str
    basis: str  # the model, in a sentence

    @property
    def saving_ps(self) -> float:
        return max(self.step_ps - self.new_step_ps, 0.0)

    @property
    def sentence(self) -> str:
        """ "step 43.8 → 42.9 ms; the host sets it now and after the fix" (without the profiler)."""
        who = {"GPU": "the GPU", "host": "the host", "input": "waiting for input"}
        now, after = who.get(self.bound, self.bound), who.get(self.new_bound, self.new_bound)
        s = f"step {self.step_ps / 1e9:.1f} → {self.new_step_ps / 1e9:.1f} ms; "
        if self.new_bound == self.bound:
            return s + f"{now} sets it now and after the fix"
        return s + f"{now} sets it now, {after} after the fix"

    def to_json(self) -> dict:
        return {
            "change": self.change,
            "step_ms": round(self.step_ps / 1e9, 4),
            "new_step_ms": round(self.new_step_ps / 1e9, 4),
            "saving_ms": round(self.saving_ps / 1e9, 4),
            "bound": self.bound,
            "new_bound": self.new_bound,
            "basis": self.basis,
            "sentence": self.sentence,
        }


class WhatIf:
    """The what-if models of one profile's step graph."""

    def __init__(self, p: Profile, g: StepGraph, framework: str) -> None:
        self.p, self.g, self.framework = p, g, framework
        self.names = p.names.strings
        # each device op's and host point's op type ("aten::mm", "MatMul"), as a name id: what its
        # re-timing depends on, decided once per type (an op's own name is per layer in XSpace)
        types = np.asarray(p.ops.type, np.int32)
        self.d_type, self.h_type = column_at(types, g.d_op), column_at(types, g.h_op)
        dev = next((d for d in p.devices if d.id == int(g.d_device[0])), None) if g.device_ops else None
        self.peaks: Peaks | None = peaks(dev) if dev is not None else None
        self.device = dev
        self.no_profiler = self._no_profiler()
        self.captured = simulate(g)
        self.base = simulate(g, self.no_profiler)
        self._cache: dict[str, Prediction | None] = {}
        self._lock = threading.RLock()
        self._matrix_mask: np.ndarray | None = None
        self._base_bound: str | None = None
        self._convs: dict[tuple, tuple] | None = None
        self._grouped: tuple[bytes, list[int], np.ndarray] | None = None  # _groups of the matrix ops
        self._fusable_mask: np.ndarray | None = None
        self._costs: dict[tuple[int, int], roofline.OpCost | None] = {}

    # -- what the capture shows -------------------------------------------------------------------

    @property
    def profiler_overhead_ps(self) -> float:
        """The profiler's own cost per step: the captured step less the step simulated without it."""
        return max(self.captured.step_ps - self.base.step_ps, 0.0)

    def bound(self, t: Timing, c: Changes) -> str:
        """What sets the simulated step: the larger part of the critical path of its last steps, the
        GPU's or the host's; the host's is "input" where waiting for input is most of it."""
        cp = critical_path(self.g, t, c)
        host, gpu, inp = float(cp.host_ps.sum()), float(cp.gpu_ps.sum()), float(cp.input_ps.sum())
        if gpu >= host:
            return "GPU"
        return "input" if inp > 0.5 * host else "host"

    def quick_bound(self, t: Timing, c: Changes) -> str:
        """What sets a what-if's step, without walking its critical path: the GPU where its work fills
        the steady state's step (9/10 of it), else input where the host's waits for it are most of the
        rest, else the host."""
        g = self.g
        steps = max(g.steps, 1)
        step = max(t.period_ps, 1.0)
        work = float(c.d_dur.sum()) / steps
        if work >= 0.9 * step:
            return "GPU"
        inp = g.h_kind == INPUT
        waits = float(np.minimum(t.h_end[inp] - t.h_start[inp], step * steps).sum()) / steps if inp.any() else 0.0
        return "input" if waits > 0.5 * (step - work) else "host"

    @property
    def base_bound(self) -> str:
        if self._base_bound is None:
            self._base_bound = self.bound(self.base, self.no_profiler)
        return self._base_bound

    # -- the changes ------------------------------------------------------------------------------

    def predict(self, change: str, profiled: bool = False) -> Prediction | None:
        """The step with one change ("input", "syncs", "graph", "fusion", "compile", "bf16", "fp16",
        "tf32", "padding", "host", "overlap"), or several joined by "+"; None where the change does not
        apply.
        `profiled`: the change to the step as captured, the profiler's cost kept (what a second capture
        would measure)."""
        key = f"{change}|{profiled}"
        with self._lock:  # checks run on threads: one simulation of each change, not one per asker
            if key not in self._cache:
                self._cache[key] = self._predict(change, profiled)
            return self._cache[key]

    def _predict(self, change: str, profiled: bool = False) -> Prediction | None:
        base = self.captured if profiled else self.base
        c = Changes.of(self.g) if profiled else dataclasses.replace(self.no_profiler)
        bases = []
        for one in change.split("+"):
            if one not in NEEDS:
                raise ValueError(f"unknown change {one!r}; the changes are {', '.join(CHANGES)}")
            apply: Callable[[Changes], str | None] = getattr(self, "_" + one)
            basis = apply(c)
            if basis is None:
                if "+" not in change:
                    return None
                continue
            bases.append(basis)
        if not bases:
            return None
        t = simulate(self.g, c)
        before = self.bound(base, Changes.of(self.g)) if profiled else self.base_bound
        return Prediction(change, base.period_ps, t.period_ps, before, self.quick_bound(t, c), "; ".join(bases))

    def not_applied(self, change: str) -> str:
        """Why `predict(change)` gave none: what the change needs that this capture lacks."""
        parts = change.split("+")
        for one in parts:
            if one in ("bf16", "fp16", "tf32", "padding") and self.peaks is None:
                gpu = self.device.name if self.device is not None and self.device.name else "this GPU"
                return f"the advisor knows no peak rates of {gpu}, which re-timing matrix kernels needs"
            if one in ("bf16", "fp16", "tf32") and self.peaks is not None and self.peaks.rate(one) is None:
                cores = "Matrix Cores" if self.device is not None and self.device.matrix_cores else "Tensor Cores"
                return f"the {self.peaks.name} has no {one.upper() if one == 'tf32' else one} {cores}"
        needs = list(dict.fromkeys(NEEDS[one] for one in parts if one in NEEDS))
        said = "it needs " + "; or ".join(needs)
        amd = self.device is not None and self.device.matrix_cores
        return said.replace("Tensor Cores", "Matrix Cores") if amd else said

    def _no_profiler(self) -> Changes:
        """The host's own work less the profiler's cost of the events recorded in it; launches that
        waited for a slot in the launch queue (a host far ahead of the GPU) at a typical launch's time."""
        g = self.g
        recorded = g.h_events.astype(np.int64) + ((g.h_kind == LAUNCH) | (g.h_kind == SYNC) | (g.h_kind == INPUT))
        gap = np.maximum(g.h_gap, 0)
        # PyTorch's ops cost their record_function callbacks; XSpace's TraceMe events (TensorFlow, JAX)
        # cost about what a Python call does
        torch = self.framework == "pytorch"
        per_event = PROFILER_EVENT_PS if torch else XSPACE_EVENT_PS
        per_call = PYTORCH_PYTHON_EVENT_PS if torch else XSPACE_EVENT_PS
        cut = np.minimum(recorded * per_event + g.h_py_events.astype(np.int64) * per_call, gap)
        dur = g.h_dur.copy()
        launch = g.h_kind == LAUNCH
        traced = launch | (g.h_kind == SYNC)
        if self.framework == "pytorch":
            dur = np.where(traced, np.maximum(dur - RUNTIME_CALL_PS, np.minimum(dur, RUNTIME_CALL_PS)), dur)
        if launch.any():
            typical = int(median(dur[launch]))
            blocked = launch & (dur > max(20 * typical, BLOCKED_LAUNCH_PS))
            dur[blocked] = typical
        c = Changes.of(g)
        c.h_gap, c.h_dur = g.h_gap - cut, dur
        return c

    def _free(self, c: Changes) -> np.ndarray:
        """Each gap's time outside every op and dispatch, as the changes have left the gap (the
        profiler's cost taken from it pro rata)."""
        g = self.g
        gap0 = np.maximum(g.h_gap, 0)
        scale = np.divide(np.maximum(c.h_gap, 0), gap0, out=np.zeros(len(gap0)), where=gap0 > 0)
        return (g.h_free * np.minimum(scale, 1.0)).astype(np.int64)

    def _host(self, c: Changes) -> str | None:
        """The host's Python between ops and dispatches gone (logging, metrics, data made in the loop)."""
        g = self.g
        free = self._free(c)
        if free.sum() < 0.01 * max(self.base.window_ps, 1):
            return None
        c.h_gap = c.h_gap - free
        return f"the host's {free.sum() / g.steps / 1e9:.2f} ms a step of Python outside ops and dispatch gone"

    def _input(self, c: Changes) -> str | None:
        g = self.g
        inp = g.h_kind == INPUT
        if not inp.any():
            if self.framework == "jax":  # JAX marks no input waits: the Python between dispatches
                return self._host(c)
            return None
        c.h_dur = np.where(inp, np.minimum(c.h_dur, INPUT_READY_PS), c.h_dur)
        return "input waits cut to a ready batch's 50 µs"

    def _syncs(self, c: Changes) -> str | None:
        g = self.g
        sync = g.h_kind == SYNC
        if not sync.any():
            return None
        removable = np.zeros(len(g.h_kind), bool)
        # a sync in no op is an explicit synchronize call: the user's too
        in_op = _by_name(self.h_type[sync], self.names, REMOVABLE_SYNC_OPS.__contains__)
        removable[np.flatnonzero(sync)[in_op | (self.h_type[sync] < 0)]] = True
        if not removable.any():
            return None
        c.sync_waits = c.sync_waits & ~removable
        return f"{int(removable.sum())} host-device syncs no longer wait (the host runs ahead)"

    def _matrix(self) -> np.ndarray:
        """Device ops of matrix ops (by op, else by kernel name), not cuDNN's layout changes."""
        if self._matrix_mask is None:
            g, names = self.g, self.names
            layout = _by_name(g.d_name, names, LAYOUT.search)
            gemm = _by_name(g.d_name, names, GEMM_NAME.search)
            matrix_op = _by_name(self.d_type, names, roofline.is_matrix_op)
            self._matrix_mask = ~layout & (gemm | matrix_op) & (g.d_kind == Kind.KERNEL)
        return self._matrix_mask

    def _region(self) -> np.ndarray:
        """Launches a captured graph or a compiled model would hold: every launch of the step for JAX and
        TensorFlow (they compile the whole step); for PyTorch the forward and backward, not the
        optimizer, nor the loss between them (the main thread's launches after the forward's last
        matrix op and before the backward's first launch)."""
        g = self.g
        launch = g.h_kind == LAUNCH
        if self.framework != "pytorch":
            return launch
        region = launch & ~g.h_optimizer
        main = g.h_thread == g.main_thread
        backward = launch & ~main & (g.h_thread >= 0)
        if backward.any() and g.main_thread >= 0:
            matrix_launch = np.zeros(len(launch), bool)
            matrix_launch[g.d_launch[self._matrix()]] = True
            idx = np.arange(len(launch))
            n = max(g.steps, 1)
            first_bw = np.full(n, len(launch), np.int64)
            np.minimum.at(first_bw, g.h_step[backward], idx[backward])
            fw = main & matrix_launch
            last_fw = np.full(n, -1, np.int64)
            np.maximum.at(last_fw, g.h_step[fw], idx[fw])
            # the loss: the main thread's launches after the forward's last matrix op, before the backward
            lo, hi = last_fw[g.h_step], first_bw[g.h_step]
            loss = main & launch & (idx > lo) & (idx < hi) & (lo >= 0) & (hi < len(launch))
            region &= ~loss
        return region

    def _graph(self, c: Changes) -> str | None:
        g = self.g
        region = self._region()
        if region.sum() < 2 * max(g.steps, 1):
            return None
        gap = c.h_gap.copy()
        dur = c.h_dur.copy()
        # a graph's replay at its first launch (the forward's, and the backward's on its own thread);
        # the rest of its launches cost nothing on the host
        idx = np.flatnonzero(region)
        part = g.h_step[idx] * 2
        if self.framework == "pytorch":  # the backward's graph launched from its own thread
            part = part + (g.h_thread[idx] != g.main_thread)
        first = np.r_[True, part[1:] != part[:-1]]
        gap[idx[~first]] = 0
        dur[idx] = 0
        dur[idx[first]] = GRAPH_REPLAY_PS
        c.h_gap, c.h_dur = gap, dur
        in_region = region[g.d_launch]
        d_gap = c.d_gap
        c.d_gap = np.where(in_region, np.minimum(d_gap, GRAPH_NODE_GAP_PS), d_gap)
        what = "the forward and backward" if self.framework == "pytorch" else "the step"
        graphs = int(first.sum()) / g.steps
        return (
            f"{what} replayed as {graphs:.0f} captured graph{'s' if graphs > 1.5 else ''} "
            f"({region.sum() / g.steps:.0f} launches a step become {graphs:.0f})"
        )

    def _fusable(self) -> np.ndarray:
        """The device ops a compiler fuses: ATen's generic element-wise and reduction kernels (not the
        optimizer's); the same for every change, so found once."""
        if self._fusable_mask is None:
            g = self.g
            self._fusable_mask = (
                _by_name(g.d_name, self.names, POINTWISE.search)
                & ~self._matrix()
                & ~g.h_optimizer[g.d_launch]
                & isin(g.d_kind, np.asarray([Kind.KERNEL, Kind.MEMSET], np.int8))
            )
        return self._fusable_mask

    def _fusion(self, c: Changes) -> str | None:
        g = self.g
        fusable = self._fusable()
        d_dur = c.d_dur.astype(np.int64).copy()
        # runs of fusable ops on one stream, between other kernels, within a step: one kernel each, as
        # long as the longest (it reads the run's inputs and writes its outputs once)
        step = g.h_step[g.d_launch].astype(np.int64)
        cut = np.r_[
            True, (~fusable[1:]) | (~fusable[:-1]) | (g.d_stream[1:] != g.d_stream[:-1]) | (step[1:] != step[:-1])
        ]
        run = np.cumsum(cut)
        merged = 0
        if fusable.any():
            f = np.flatnonzero(fusable)
            r = run[f]
            counts = np.bincount(r)
            longest = np.zeros(len(counts), np.int64)
            np.maximum.at(longest, r, d_dur[f])
            many = counts[r] >= 2
            # keep one op of each run (its first) with the run's longest time
            first_of = np.r_[True, r[1:] != r[:-1]]
            gone = f[many & ~first_of]
            keep = f[many & first_of]
            d_dur[keep] = longest[run[keep]]
            d_dur[gone] = 0
            merged = len(gone)
        basis = []
        if merged:
            c.d_dur = d_dur
            gone_mask = np.zeros(g.device_ops, bool)
            gone_mask[gone] = True
            d_gap = c.d_gap
            c.d_gap = np.where(gone_mask, 0, d_gap)
            basis.append(f"element-wise and reduction chains fused ({merged / g.steps:.0f} kernels a step merged)")
        else:
            gone = np.zeros(0, np.int64)
        # the host: the fused ops' dispatch gone, the others launched by compiled code
        region = self._region()
        launches_gone = np.zeros(len(g.h_kind), bool)
        launches_gone[g.d_launch[gone]] = True
        launches_gone &= region
        # the host's dispatch inside ops is what compiled code replaces; Python outside the ops stays
        free = self._free(c)
        dispatch = np.maximum(c.h_gap - free, 0)
        compiled = free + np.minimum(dispatch, COMPILED_LAUNCH_PS)
        c.h_gap = np.where(launches_gone, free, np.where(region, np.minimum(c.h_gap, compiled), c.h_gap))
        c.h_dur = np.where(launches_gone, 0, c.h_dur)
        basis.append("the compiled code launches each kernel in a few µs (the Python outside ops stays)")
        return "; ".join(basis)

    def _compile(self, c: Changes) -> str | None:
        """torch.compile (Inductor) or XLA: fusion, and for PyTorch Inductor's padding of matmul
        dimensions (its `shape_padding`)."""
        fused = self._fusion(c)
        if fused is None:
            return None
        if self.framework == "pytorch" and self._padding(c):
            fused += "; matmul dimensions padded as Inductor does"
        return fused

    def _conv_outputs(self) -> dict[tuple, tuple]:
        """(input dims, weight dims) -> output dims of the trace's convolutions, from their backward
        calls (whose grad_output is the forward's output)."""
        out: dict[tuple, tuple] = {}
        g, names = self.g, self.names
        for o, s in set(zip(self.d_type.tolist(), g.d_shape.tolist())):
            if o >= 0 and s >= 0 and names[o] in roofline.CONV_BWD:
                ts = roofline.tensors(names[s])
                if len(ts) >= 3:
                    out[(ts[1][1], ts[2][1])] = ts[0][1]
        return out

    def _cost(self, j: int) -> roofline.OpCost | None:
        """Device op j's FLOPs and bytes from its op's shapes; kept per (op, shapes): the precision
        changes and padding each ask for every group's."""
        g = self.g
        o = int(self.d_type[j])
        if o < 0:
            return None
        key = (o, int(g.d_shape[j]))
        if key in self._costs:
            return self._costs[key]
        op = self.names[o]
        shape = self.names[int(g.d_shape[j])] if g.d_shape[j] >= 0 else ""
        out = None
        if op in roofline.CONV_FWD:
            if self._convs is None:
                self._convs = self._conv_outputs()
            ts = roofline.tensors(shape)
            out = self._convs.get((ts[0][1], ts[1][1])) if len(ts) >= 2 else None
        self._costs[key] = cost = roofline.op_cost(op, shape, out)
        return cost

    def _groups(self, ops: np.ndarray) -> tuple[list[int], np.ndarray]:
        """Device ops `ops` grouped by what decides their re-timing (op, shapes, kernel name, flags,
        thread): (an op of each group, each op's group), groups in the order of their keys. Kept for
        the matrix ops, which the precision changes and padding all group."""
        key = ops.tobytes()
        if self._grouped is not None and self._grouped[0] == key:
            return self._grouped[1], self._grouped[2]
        g = self.g
        main = (g.h_thread[g.d_launch[ops]] == g.main_thread).astype(np.int64)
        cols = [self.d_type[ops], g.d_shape[ops], g.d_name[ops], g.d_flags[ops].astype(np.int64), main]
        if not len(ops):
            return [], np.zeros(0, np.int64)
        # one key per op, column by column, kept dense: np.unique of rows (axis=0) sorts them as
        # structured records, 10x slower on an 80 MB capture's 475,000 ops
        code = np.zeros(len(ops), np.int64)
        for col in cols:
            values, inv = np.unique(col, return_inverse=True)
            _, code = np.unique(code * len(values) + inv.reshape(-1), return_inverse=True)
            code = code.reshape(-1)
        _, first_at, inv = np.unique(code, return_index=True, return_inverse=True)
        out = (ops[first_at].tolist(), inv.reshape(-1))
        self._grouped = (key, *out)
        return out

    def _precision_to(self, c: Changes, target: str) -> str | None:
        g, pk = self.g, self.peaks
        if pk is None or pk.rate(target) is None:
            return None
        sixteen = target in ("bf16", "fp16")
        d_dur = c.d_dur.astype(np.float64).copy()
        h_gap = c.h_gap.copy()
        names = self.names
        matrix = self._matrix()
        bw = pk.bandwidth * 1e9 * BANDWIDTH_SHARE  # bytes/s
        retimed = casts = halved = 0
        removed = 0.0
        rules = set()
        ops = np.flatnonzero(matrix)
        firsts, inv = self._groups(ops)
        for k, j in enumerate(firsts):
            cost = self._cost(j)
            old = self._precision_of(j, cost)
            if old in ("bf16", "fp16") or old == target:
                continue
            attention = (
                cost.kind == "attention" if cost is not None else bool(ATTENTION_NAME.search(names[int(g.d_name[j])]))
            )
            if target == "tf32" and attention:
                continue  # PyTorch's fp32 attention kernels do not use TF32
            r = roofline.retime(cost, old, target, pk, new_size=2 if sixteen else None)
            if r is None:
                continue
            mine = ops[inv == k]
            new = r.apply(d_dur[mine])
            if cost is not None and cost.kind == "matmul" and any(d % 8 for d in cost.dims):
                odd = any(d % 2 for d in cost.dims)
                new = np.minimum(new * SLOWDOWN[("16" if sixteen else "tf32", odd)], d_dur[mine])
            if sixteen and cost is not None and cost.weight and g.h_thread[g.d_launch[j]] == g.main_thread:
                # autocast casts the weight to 16-bit in the forward and its gradient back in the
                # backward: 6 bytes an element each way, and two ops on the host
                new = new + 2 * max(6.0 * cost.weight / bw * 1e12, roofline.KERNEL_FLOOR_PS)
                np.add.at(h_gap, g.d_launch[mine], 2 * CAST_HOST_PS)
                casts += 2 * len(mine)
            d_dur[mine] = new
            retimed += len(mine)
            rules.add(r.basis)
        if not retimed:
            return None
        basis = [
            f"{retimed / g.steps:.0f} matrix kernels a step re-timed at {target} on the {pk.name} "
            f"({', '.join(sorted(rules))})"
        ]
        if sixteen:
            # memory-bound kernels of ops autocast leaves in 16-bit move half the bytes; cuDNN's layout
            # changes go with channels_last (convolutions)
            kernels = ~matrix & (g.d_kind == Kind.KERNEL)
            layout = kernels & _by_name(g.d_name, names, LAYOUT.search)
            removed = float(d_dur[layout].sum())
            d_dur[layout] = 0
            first_dtype = _by_name(g.d_shape, names, lambda s: (ts := roofline.tensors(s)) and ts[0][0] == "float")
            fp32_op = _by_name(
                self.d_type,
                names,
                lambda o: AUTOCAST_FP32.search(o) or o in ("aten::copy_", "aten::to", "aten::_to_copy"),
            )
            foreach = _by_name(g.d_name, names, FOREACH.search)
            half = kernels & ~layout & (g.d_op >= 0) & ~g.h_optimizer[g.d_launch] & ~foreach & ~fp32_op & first_dtype
            d_dur[half] *= 0.5
            halved = int(half.sum())
            if halved:
                basis.append(f"{halved / g.steps:.0f} memory-bound kernels a step move half the bytes")
            if casts:
                basis.append(f"{casts / g.steps:.0f} casts a step added")
            if removed:
                # their launch calls go too (cuDNN's, inside the convolution op: the op's dispatch stays),
                # where they launched nothing else
                layout_launch = np.zeros(len(g.h_kind), bool)
                layout_launch[g.d_launch[layout]] = True
                other = np.zeros(len(g.h_kind), bool)
                other[g.d_launch[d_dur > 0]] = True
                gone = layout_launch & ~other
                c.h_dur = np.where(gone, 0, c.h_dur)
                basis.append(f"channels_last: cuDNN's layout changes gone ({gone.sum() / g.steps:.0f} launches a step)")
        c.d_dur = np.round(d_dur).astype(np.int64)
        c.h_gap = h_gap
        return "; ".join(basis)

    def _precision_of(self, j: int, cost: roofline.OpCost | None) -> str:
        """A matrix kernel's precision: 16-bit by its flag or its op's dtype, TF32 by its Tensor Core flag
        or name, else fp32."""
        flags = int(self.g.d_flags[j])
        if flags & Flag.FP16 or (cost is not None and cost.dtype in ("half", "bfloat16")):
            return "bf16" if (cost is not None and cost.dtype == "bfloat16") else "fp16"
        if flags & Flag.TENSOR_CORE or "tf32" in self.names[int(self.g.d_name[j])]:
            return "tf32"
        return "fp32"

    def _bf16(self, c: Changes) -> str | None:
        return self._precision_to(c, "bf16")

    def _fp16(self, c: Changes) -> str | None:
        return self._precision_to(c, "fp16")

    def _tf32(self, c: Changes) -> str | None:
        return self._precision_to(c, "tf32")

    def _padding(self, c: Changes) -> str | None:
        g, pk = self.g, self.peaks
        if pk is None:
            return None
        d_dur = c.d_dur.astype(np.float64).copy()
        ops = np.flatnonzero(self._matrix())
        firsts, inv = self._groups(ops)
        # each group's ideal time at its precision, and whether its dimensions are multiples of 8
        ideal = np.zeros(len(firsts))
        prec: list[str] = []
        odd = np.zeros(len(firsts), bool)
        ok = np.zeros(len(firsts), bool)
        for k, j in enumerate(firsts):
            cost = self._cost(j)
            p = self._precision_of(j, cost)
            prec.append(p)
            rate = pk.rate(p)
            if cost is None or cost.kind != "matmul" or not rate:
                continue
            ok[k] = True
            ideal[k] = cost.flops / (rate * 1e12) * 1e12
            odd[k] = any(d % 8 for d in cost.dims)
        group_of = inv
        dur = g.d_dur[ops].astype(np.float64)
        share = np.minimum(np.divide(ideal[group_of], dur, out=np.zeros(len(dur)), where=dur > 0), 1.0)
        changed = 0
        for p in set(prec):
            if p == "fp32":
                continue  # CUDA-core kernels do not care
            in_p = np.asarray([x == p for x in prec], bool)[group_of] & ok[group_of]
            aligned = in_p & ~odd[group_of]
            ref = (
                _weighted_median(list(zip(share[aligned].tolist(), dur[aligned].tolist())))
                if aligned.sum() >= 3
                else TYPICAL_SHARE
            )
            fix = in_p & odd[group_of]
            if not fix.any():
                continue
            sel = ops[fix]
            d_dur[sel] = np.minimum(d_dur[sel], np.maximum(ideal[group_of][fix] / ref, roofline.KERNEL_FLOOR_PS))
            changed += int(fix.sum())
        if not changed:
            return None
        c.d_dur = np.round(d_dur).astype(np.int64)
        return "matrix ops with dimensions padded to multiples of 8 run at the share of the peak the trace's aligned ones reach"

    def _overlap(self, c: Changes) -> str | None:
        g = self.g
        dep = c.d_dep
        has = dep >= 0
        if not has.any():
            return None
        on_coll = np.zeros(len(dep), bool)
        on_coll[has] = g.d_kind[dep[has]] == Kind.COLLECTIVE
        drop = on_coll & ~g.h_optimizer[g.d_launch]
        if not drop.any():
            return None
        c.d_dep = np.where(drop, -1, dep)
        return "compute no longer waits for collectives before the optimizer"


def _by_name(ids: np.ndarray, strings: list[str], test: Callable[[str], object]) -> np.ndarray:
    """`test` of each id's string, decided once per distinct id (-1: False). The distinct ids are
    marked in a table over the strings, not sorted out: np.unique's sort was a tenth of the what-ifs'
    cost on the 325 MB benchmark trace."""
    if not len(ids):
        return np.zeros(0, bool)
    ids = np.asarray(ids, np.int64)
    named = ids >= 0
    table = np.zeros(len(strings), bool)
    table[ids[named]] = True
    for i in np.flatnonzero(table).tolist():
        table[i] = bool(test(strings[i]))
    return named & table[np.maximum(ids, 0)]


def _weighted_median(pairs: list[tuple[float, float]]) -> float:
    v = np.asarray([x for x, _ in pairs])
    w = np.asarray([y for _, y in pairs])
    o = np.argsort(v)
    cw = np.cumsum(w[o])
    return float(v[o][np.searchsorted(cw, cw[-1] / 2)])
