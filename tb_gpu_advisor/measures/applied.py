"""What the run already applies of the fixes the advice knows: CUDA graphs, torch.compile, TorchScript,
jax.jit, mixed precision and TF32, channels_last, a fused optimizer, DataLoader workers and tf.data's
parallel stages, each read from the trace once. A check starts its advice from here: it does not tell
a run to do what it does, and says the next step instead (docs/pytorch.md, "What the run already
does")."""

from __future__ import annotations

import dataclasses

import numpy as np

from tb_gpu_advisor.measures.kernels import MatmulMasks
from tb_gpu_advisor.measures.names import XLA_PROGRAM_RUN, NameClasses
from tb_gpu_advisor.model.arrays import distinct, isin
from tb_gpu_advisor.model.profile import JAX, EventTable, Kind, Profile

# most of the steps' kernels replay from whole-graph launches: the step runs as CUDA graphs
GRAPHED_SHARE = 0.5
# a JAX step whose compiled programs run at most this many times a step is jitted as a whole (one
# `jit_train_step` a step on the H200, tests/data/gpu_pairs/jax_jit; op by op, 224 programs a step,
# jax_eager)
JITTED_RUNS = 4
# without the programs' names, a JAX step of more launches than this dispatches op by op (a jitted
# step launches a few: its XLA executable's thunks, or one command buffer; op by op, 324 a step)
JAX_EAGER_LAUNCHES = 20
# most of the 32-bit matmul time on Tensor Cores: TF32 is on; most matmul time 16-bit: autocast is on
MOSTLY = 0.5


@dataclasses.dataclass(frozen=True, slots=True)
class Applied:
    """What the run already does, as its trace shows it."""

    framework: str
    kernels: int  # the steps' kernels, every GPU
    graph_kernels: int  # of them, those a whole-graph launch ran (CUDA graphs, XLA command buffers)
    graph_launches_per_step: float  # graph replays whose kernels run in the steps, a step (per GPU)
    compiled: bool  # torch.compile: Inductor's Triton kernels, compiled regions, or compilations
    torchscript: bool  # TorchScript's graph executor (`prim::` ops, `DifferentiableGraphBackward`)
    program_runs_per_step: float  # JAX/XLA: compiled programs run a step (0 where the trace names none)
    programs: tuple[str, ...]  # their names (`jit_train_step`), most run first
    launches_per_step: float
    sixteen_bit_share: float | None  # of matmul/convolution time, 16-bit; None without any
    tf32_share: float | None  # of 32-bit matmul time (not convolutions), on Tensor Cores (TF32); None without any
    convolutions: bool  # convolution kernels run in the steps
    layout_conversions_per_step: float  # cuDNN's NCHW <-> NHWC conversion kernels a step
    optimizer: str  # "fused" (`fused=True`), "foreach" (`foreach=True`), "" (neither seen)
    loader_workers: bool | None  # a DataLoader with worker processes; None: no DataLoader
    tf_data: tuple[str, ...]  # the tf.data pipeline's parallel stages and prefetch, as advice names them

    @property
    def graph_share(self) -> float:
        return self.graph_kernels / self.kernels if self.kernels else 0.0

    @property
    def graphed(self) -> bool:
        """Most of the steps' kernels replay from CUDA graphs (or XLA command buffers)."""
        return self.graph_share >= GRAPHED_SHARE

    @property
    def jitted(self) -> bool:
        """JAX: the step runs as one jitted program (or a few), not op by op."""
        if self.framework != JAX:
            return False
        if self.program_runs_per_step > 0:
            return self.program_runs_per_step <= JITTED_RUNS
        return self.launches_per_step <= JAX_EAGER_LAUNCHES

    @property
    def mixed_precision(self) -> bool:
        return self.sixteen_bit_share is not None and self.sixteen_bit_share >= MOSTLY

    @property
    def tf32(self) -> bool:
        return self.tf32_share is not None and self.tf32_share >= MOSTLY

    @property
    def channels_last(self) -> bool | None:
        """Convolutions without cuDNN converting their layout; None without convolutions."""
        return None if not self.convolutions else self.layout_conversions_per_step == 0

    def graphs_said(self) -> str:
        """ "76% of the steps' kernels replay from CUDA graphs (2 graph launches a step)"."""
        what = "XLA command buffers (CUDA graphs)" if self.framework == JAX else "CUDA graphs"
        return (
            f"{100 * self.graph_share:.0f}% of the steps' kernels replay from {what} "
            f"({self.graph_launches_per_step:.0f} graph launch{'es' if round(self.graph_launches_per_step) != 1 else ''}"
            " a step)"
        )

    def jit_said(self) -> str:
        """ "the step already runs as one jitted program (jit_train_step, 1 run a step)"."""
        if self.programs:
            runs = f"{self.program_runs_per_step:.0f} run{'s' if round(self.program_runs_per_step) != 1 else ''} a step"
            return (
                f"the step already runs as compiled programs under `jax.jit` ({', '.join(self.programs[:3])}; {runs})"
            )
        return f"the step already runs under `jax.jit` ({self.launches_per_step:.0f} launches a step)"

    def said(self) -> list[str]:
        """What the run already does, in the user's words."""
        out = []
        if self.graphed:
            out.append(self.graphs_said())
        if self.compiled:
            out.append("torch.compile")
        if self.torchscript:
            out.append("TorchScript")
        if self.jitted:
            out.append(self.jit_said())
        if self.mixed_precision:
            out.append(
                f"mixed precision ({100 * (self.sixteen_bit_share or 0):.0f}% of matmul/convolution time in 16-bit)"
            )
        if self.tf32:
            out.append("TF32 for 32-bit matmuls")
        if self.channels_last:
            out.append("channels_last convolutions")
        if self.optimizer:
            out.append(f"a {'fused' if self.optimizer == 'fused' else 'foreach'} optimizer")
        if self.loader_workers:
            out.append("DataLoader workers")
        out.extend(f"tf.data {s}" for s in self.tf_data)
        return out


def applied(
    p: Profile,
    host: EventTable,
    steps: int,
    names: NameClasses,
    gpus: list[tuple[EventTable, MatmulMasks]],
    events: list[EventTable],
    launches_per_step: float,
    compilations: int,
    loader_workers: bool | None,
    tf_data: list[str],
) -> Applied:
    """What the run already does: `host` its host events (with their step), `gpus` each active GPU's
    kernels in its steps and their matmul masks, `events` each one's events."""
    h = host
    n = max(steps, 1)
    in_steps = h.step >= 0 if "step" in h else np.zeros(len(h), bool)
    graph = (h.kind == Kind.LAUNCH) & (h.corr >= 0) & names.by_name(h.name, names.graph_launch_name)
    graph_corr = distinct(h.corr[graph])
    kernels = sum(len(k) for k, _ in gpus)
    graph_kernels, replays = 0, 0
    if len(graph_corr):
        for ev in events:  # the steps' kernels' correlation ids
            corr = ev.peek("corr")[(ev.kind == Kind.KERNEL) & (ev.step >= 0)]
            mine = isin(corr, graph_corr)
            graph_kernels += int(mine.sum())
            replays += len(distinct(corr[mine]))
    host_names = distinct(h.name)
    host_names = host_names[host_names >= 0]
    kernel_names = distinct(np.concatenate([k.name for k, _ in gpus])) if gpus else host_names[:0]

    def seen(mask: np.ndarray, ids: np.ndarray) -> bool:
        return bool(mask[ids].any()) if len(ids) else False

    compiled = seen(names.compiled_name, host_names) or seen(names.compiled_name, kernel_names) or compilations > 0
    runs = in_steps & names.by_name(h.name, names.xla_program_run_name)
    programs: tuple[str, ...] = ()
    if runs.any():
        ids, counts = np.unique(h.name[runs], return_counts=True)
        programs = tuple(
            m.group(1) for i in ids[np.argsort(-counts, kind="stable")] if (m := XLA_PROGRAM_RUN.match(p.names[int(i)]))
        )
    matmul = sum(float(k.dur_ps[mm.eligible].sum()) for k, mm in gpus)
    sixteen = sum(float(k.dur_ps[mm.eligible & mm.fp16].sum()) for k, mm in gpus)
    # TF32 of the matmuls, not the convolutions: PyTorch allows TF32 in cuDNN's convolutions by default
    # (`torch.backends.cudnn.allow_tf32`), in matmuls not (`torch.backends.cuda.matmul.allow_tf32`)
    conv = [_convolutions(names, k, mm) for k, mm in gpus]
    fp32 = sum(float(k.dur_ps[mm.eligible & ~mm.fp16 & ~c].sum()) for (k, mm), c in zip(gpus, conv))
    tf32 = sum(float(k.dur_ps[mm.eligible & ~mm.fp16 & ~c & mm.tc].sum()) for (k, mm), c in zip(gpus, conv))
    convolutions = any(c.any() for c in conv)
    layout = sum(int(names.by_name(k.name, names.layout_conversion_name).sum()) for k, _ in gpus)
    optimizer = (
        "fused"
        if seen(names.fused_optimizer_name, host_names)
        else "foreach"
        if seen(names.foreach_optimizer_name, host_names)
        else ""
    )
    return Applied(
        framework=p.framework,
        kernels=kernels,
        graph_kernels=graph_kernels,
        graph_launches_per_step=replays / n / max(len(gpus), 1),
        compiled=compiled,
        torchscript=seen(names.torchscript_name, host_names),
        program_runs_per_step=float(runs.sum()) / n,
        programs=programs,
        launches_per_step=launches_per_step,
        sixteen_bit_share=sixteen / matmul if matmul > 0 else None,
        tf32_share=tf32 / fp32 if fp32 > 0 else None,
        convolutions=convolutions,
        layout_conversions_per_step=layout / n / max(len(gpus), 1),
        optimizer=optimizer,
        loader_workers=loader_workers,
        tf_data=tuple(tf_data),
    )


def _convolutions(names: NameClasses, k: EventTable, mm: MatmulMasks) -> np.ndarray:
    """Mask over the kernels: matmul-eligible kernels of a convolution op (or, where no op with a type
    claims them, named as a convolution)."""
    op = k.op
    by_op = names.by_op(op, names.convolution_op)
    no_type = (op < 0) | names.by_op(op, names.untyped_op)
    return mm.eligible & (by_op | (no_type & names.by_name(k.name, names.convolution_name)))
