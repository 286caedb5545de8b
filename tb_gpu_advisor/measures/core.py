"""Every measurement of one analysed profile: the capture's and host's (`CaptureMeasures`), each active
GPU's (`GpuMeasures`), and those across the GPUs."""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor.common.parallel import cached
from tb_gpu_advisor.measures import applied as applies, collectives, host, input as inputs, kernels, quality, rank
from tb_gpu_advisor.measures.applied import Applied
from tb_gpu_advisor.measures.capture import CaptureMeasures
from tb_gpu_advisor.measures.collectives import AllReduce, HostCalls, Serialization
from tb_gpu_advisor.measures.gpu import GpuMeasures
from tb_gpu_advisor.measures.host import Eager
from tb_gpu_advisor.measures.input import GpuInput, LoaderInput
from tb_gpu_advisor.measures.kernels import OddDims
from tb_gpu_advisor.measures.names import tf_data_present
from tb_gpu_advisor.measures.quality import CutSteps
from tb_gpu_advisor.measures.rank import GpuSide, HostDigest
from tb_gpu_advisor.model.analysis import Analysis


class Measures(CaptureMeasures):
    """Every measurement of one analysed profile (see the package's doc)."""

    def __init__(self, a: Analysis, logged: tuple[str, list[float]] | None = None) -> None:
        super().__init__(a, logged)
        self._gpus = {d: GpuMeasures(self, g) for d, g in a.gpus.items()}

    @property
    def gpu_ids(self) -> list[int]:
        """The active GPUs (with kernels)."""
        return list(self._gpus)

    def gpu(self, device_id: int) -> GpuMeasures:
        return self._gpus[device_id]

    @property
    def gpus(self) -> list[GpuMeasures]:
        return list(self._gpus.values())

    @property
    def tensor_core_gpus(self) -> list[GpuMeasures]:
        """The active GPUs with Tensor Cores (compute capability 7.0 or newer)."""
        return [g for g in self.gpus if g.device.has_tensor_cores]

    @cached
    def eager(self) -> Eager:
        """Eager execution in the host's steps, and the device time of eager kernels on the GPUs."""
        return host.eager(self.p, self.host, self.host_steps, [g.events for g in self.gpus])

    @cached
    def loader_input(self) -> LoaderInput:
        """PyTorch's DataLoader: its waits, the batch's copies, its pin-memory thread, per host step."""
        gpus = [GpuInput(g.id, g.events, g.exclusive("host_input_wait"), g.compute_busy, g.steps) for g in self.gpus]
        return inputs.loader_input(self.p, self.host, self.host_steps, self.names, gpus)

    @cached
    def applied(self) -> Applied:
        """What the run already does of the fixes the advice knows (CUDA graphs, torch.compile, jax.jit,
        mixed precision, TF32, channels_last, a fused optimizer, DataLoader workers, tf.data's stages):
        measures/applied.py. The checks start their advice from it."""
        return applies.applied(
            self.p,
            self.host,
            len(self.host_steps),
            self.names,
            [(g.kernels, g.matmul) for g in self.gpus],
            [g.events for g in self.gpus],
            self.launch_calls.per_step,
            len(self.compilations),
            self.loader_input.workers if self.is_pytorch else None,
            tf_data_present(self.input_stage_names),
        )

    @cached
    def odd_dim_ops(self) -> OddDims:
        """Of the Tensor Core GPUs (or every GPU when none has them)."""
        gpus = self.tensor_core_gpus or self.gpus
        return kernels.odd_dim_ops(self.p, [(g.matmul_ops(fp16=True), g.n) for g in gpus])

    # -- several GPUs ------------------------------------------------------------------------------

    @cached
    def serialization(self) -> Serialization:
        """How much the GPUs' compute overlaps: 0 at the same time, 1 one after another."""
        gpus = self.gpus
        return collectives.serialization(
            [g.compute_set for g in gpus], [g.steps for g in gpus], [g.step_windows for g in gpus], self.shared_steps
        )

    @cached
    def first_compute(self) -> np.ndarray:
        """With shared steps: (GPU, step) start of each GPU's first compute in the step (NaN if none)."""
        return collectives.first_compute([g.compute_set for g in self.gpus], self.gpus[0].steps)

    @cached
    def allreduce(self) -> AllReduce:
        """All-reduce calls per GPU per step, the extra calls' time, and transfer and waiting time per step."""
        gpus = self.gpus
        return collectives.allreduce(
            [g.id for g in gpus],
            [g.steps for g in gpus],
            [g.allreduce_ranked for g in gpus],
            [g.collective_set for g in gpus],
            self.shared_steps,
            any(len(g.allreduces) for g in gpus),
        )

    @cached
    def allreduce_params(self) -> int | None:
        """Elements all-reduced per step, on the first GPU."""
        return collectives.allreduce_params(self.p, self.gpus[0].allreduces) if self.gpus else None

    # -- the rank -------------------------------------------------------------------------------

    @cached
    def steps_with_work(self) -> int:
        """The reported steps when any has work in it, else 0 (the empty tail file of a profiler's schedule)."""
        return rank.steps_with_work(self.steps, self.host, [g.events for g in self.gpus])

    @cached
    def host_collective_calls(self) -> HostCalls | None:
        """The host's collective calls and all-reduces per step with work; None without such spans."""
        n = self.steps_with_work
        return collectives.host_calls(self.host, n, self.names) if n else None

    @cached
    def rank_digest(self) -> HostDigest:
        """What this file says of its rank, for the job layer (measures/rank.py): compact and picklable;
        the engine names it after its file (`HostDigest.named`)."""
        calls = self.host_collective_calls
        return rank.rank_digest(
            self.p,
            self.host,
            self.steps,
            self.steps_with_work,
            self.breakdown_ms(),
            [GpuSide(g.events, g.steps, self.breakdown_ms(g.id)) for g in self.gpus],
            self.names,
            (calls.calls, calls.allreduces, calls.allreduce_bytes) if calls is not None else None,
        )

    @cached
    def cut_steps(self) -> CutSteps:
        """Steps the capture's ends cut, and each GPU's busy time before its first step and after its last."""
        gpus = [(g.id, g.steps, g.busy, g.events) for g in self.gpus]
        return quality.cut_steps(self.p, self.host, self.steps, gpus, self.launch_corr)
