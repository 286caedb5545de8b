"""Writes PyTorch profiler traces (Kineto JSON, `*.pt.trace.json`) shaped like real ones, for tests and
demo_logs: `ProfilerStep#N` markers, ATen ops, `cudaLaunchKernel` calls paired with their kernels by
correlation id, NCCL kernels on their own stream, `deviceProperties` and `distributedInfo`.

`ddp_job` lays out a synchronous data-parallel job: every rank's all-reduce ends when the last rank's
has started and moved the gradients, so a rank that computes longer makes the others wait inside
their all-reduce, and every rank's step is as long.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
from typing import Any

A100 = {
    "name": "NVIDIA A100-SXM4-80GB",
    "totalGlobalMem": 85_899_345_920,
    "computeMajor": 8,
    "computeMinor": 0,
    "maxThreadsPerBlock": 1024,
    "maxThreadsPerMultiprocessor": 2048,
    "regsPerBlock": 65536,
    "regsPerMultiprocessor": 65536,
    "warpSize": 32,
    "sharedMemPerBlock": 49152,
    "sharedMemPerMultiprocessor": 167936,
    "numSms": 108,
    "sharedMemPerBlockOptin": 166912,
}
GEMM = "sm80_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x32_stage4_warpsize2x2x1_tensor16x8x16_kernel"
# NCCL before 2.19 names its kernels ncclKernel_*, as the real two_ranks_of_128 traces do; HTA 0.5.0's straggler
# analysis knows only those names (not ncclDevKernel_*), and the tests compare with it
ALLREDUCE = "ncclKernel_AllReduce_RING_LL_Sum_bfloat16(ncclWorkElem)"
EPOCH_US = 1_700_000_000_000_000  # Kineto's timestamps are microseconds of the host's clock


@dataclasses.dataclass
class KinetoWriter:
    rank: int | None = None
    world_size: int | None = None
    device: dict[str, Any] = dataclasses.field(default_factory=lambda: dict(A100))
    pid: int = 4242
    main_tid: int = 4242
    events: list[dict] = dataclasses.field(default_factory=list)
    _correlation: int = 1_000_000  # real ids are large (HTA's reader with pandas 3 fails on ids that fit in int8)

    def _x(self, cat: str, name: str, ts: float, dur: float, pid: int, tid: int, args: dict | None = None) -> None:
        ev = {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": EPOCH_US + ts, "dur": dur}
        if args:
            ev["args"] = args
        self.events.append(ev)

    def step(self, n: int, ts: float, dur: float) -> None:
        self._x("user_annotation", f"ProfilerStep#{n}", ts, dur, self.pid, self.main_tid)

    def op(self, name: str, ts: float, dur: float) -> None:
        self._x("cpu_op", name, ts, dur, self.pid, self.main_tid, {"External id": self._correlation})

    def kernel(self, name: str, launch_ts: float, ts: float, dur: float, stream: int = 7, blocks: int = 432) -> None:
        """A kernel and the `cudaLaunchKernel` call (5 µs) that launched it, paired by correlation id."""
        c = self._correlation
        self._correlation += 1
        self._x("cuda_runtime", "cudaLaunchKernel", launch_ts, 5.0, self.pid, self.main_tid, {"correlation": c})
        args = {
            "queued": 0,
            "device": 0,
            "context": 1,
            "stream": stream,
            "correlation": c,
            "registers per thread": 128,
            "shared memory": 65536,
            "blocks per SM": blocks / self.device["numSms"],
            "warps per SM": 4 * blocks / self.device["numSms"],
            "grid": [blocks, 1, 1],
            "block": [128, 1, 1],
            "est. achieved occupancy %": 25,
        }
        self._x("kernel", name, ts, dur, 0, stream, args)

    def to_json(self) -> dict:
        # the keys in the profiler's order: readers that stream the file (HTA's) take distributedInfo
        # only from before traceEvents
        doc: dict[str, Any] = {"schemaVersion": 1, "deviceProperties": [{"id": 0, **self.device}]}
        if self.rank is not None:
            doc["distributedInfo"] = {"backend": "nccl", "rank": self.rank, "world_size": self.world_size}
        doc["baseTimeNanoseconds"] = 0
        doc["traceEvents"] = sorted(self.events, key=lambda e: (e["ts"], -e["dur"]))
        doc["traceName"] = ""
        return doc

    def to_bytes(self, gz: bool = True) -> bytes:
        raw = json.dumps(
            self.to_json()
        ).encode()  # `"rank": 0` with its space, as the profiler writes it (HTA reads it so)
        return gzip.compress(raw, mtime=0) if gz else raw


def ddp_job(
    world_size: int,
    steps: int = 4,
    compute_us: dict[int, float] | None = None,
    transfer_us: float = 2000.0,
    overlap: bool = True,
    ranks: list[int] | None = None,
    kernels_per_step: int = 20,
) -> dict[int, KinetoWriter]:
    """The ranks of a synchronous data-parallel job on A100s. Each step a rank runs its compute
    (`compute_us[rank]`, 20 ms by default) in `kernels_per_step` GEMMs. With `overlap` (DDP's buckets)
    the gradients go in two all-reduces, one started halfway through the compute and one at its end;
    without, in one all-reduce after the last kernel. An all-reduce ends `transfer_us` (its share of
    it) after the last rank's has started: a rank that computes longer makes the others wait in it.
    `ranks`: the ranks whose files are written (all by default)."""
    compute = {r: (compute_us or {}).get(r, 20_000.0) for r in range(world_size)}
    fractions = (0.5, 1.0) if overlap else (1.0,)
    writers = {
        r: KinetoWriter(rank=r, world_size=world_size, pid=1000 + r, main_tid=1000 + r) for r in range(world_size)
    }
    t = 1000.0
    for s in range(steps):
        gpu0 = t + 60.0  # the first kernel starts after the first launch
        free = {r: gpu0 for r in range(world_size)}  # when each rank's communication stream is free
        buckets: list[dict[int, tuple[float, float]]] = []
        for frac in fractions:
            begin = {r: max(gpu0 + compute[r] * frac, free[r]) for r in range(world_size)}
            done = max(begin.values()) + transfer_us / len(fractions)
            buckets.append({r: (begin[r], done) for r in range(world_size)})
            free = {r: done for r in range(world_size)}
        step_end = max(free.values()) + 40.0
        for r, w in writers.items():
            w.step(s + 1, t, step_end - t)
            w.op("aten::linear", t + 10.0, 30.0)
            each = compute[r] / kernels_per_step
            for k in range(kernels_per_step):
                launch = t + 20.0 + k * 6.0
                w.kernel(GEMM, launch, gpu0 + k * each, each * 0.98)
            for b, bucket in enumerate(buckets):
                start, end = bucket[r]
                at = t + 20.0 + kernels_per_step * 6.0 + b * 25.0
                w.op("c10d::allreduce_", at, 15.0)
                w.kernel(ALLREDUCE, at + 5.0, start, end - start, stream=20, blocks=2)
        t = step_end + 10.0
    keep = set(range(world_size) if ranks is None else ranks)
    return {r: w for r, w in writers.items() if r in keep}
