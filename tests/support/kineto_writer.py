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
    devices: int = 1  # the GPUs deviceProperties lists (a rank's process sees every GPU of its machine)
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

    def kernel(
        self, name: str, launch_ts: float, ts: float, dur: float, stream: int = 7, blocks: int = 432, device: int = 0
    ) -> None:
        """A kernel and the `cudaLaunchKernel` call (5 µs) that launched it, paired by correlation id."""
        c = self._correlation
        self._x("cuda_runtime", "cudaLaunchKernel", launch_ts, 5.0, self.pid, self.main_tid, {"correlation": c})
        self.device_only(name, ts, dur, stream, blocks, device)

    def device_only(
        self, name: str, ts: float, dur: float, stream: int = 7, blocks: int = 432, device: int = 0
    ) -> None:
        """A kernel whose launch is not in the trace (launched before the capture began)."""
        c = self._correlation
        self._correlation += 1
        args = {
            "queued": 0,
            "device": device,
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
        self._x("kernel", name, ts, dur, device, stream, args)

    def to_json(self) -> dict:
        # the keys in the profiler's order: readers that stream the file (HTA's) take distributedInfo
        # only from before traceEvents
        doc: dict[str, Any] = {
            "schemaVersion": 1,
            "deviceProperties": [{"id": i, **self.device} for i in range(self.devices)],
        }
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


V100 = {
    "name": "Tesla V100-SXM2-32GB",
    "totalGlobalMem": 34_079_899_648,
    "computeMajor": 7,
    "computeMinor": 0,
    "maxThreadsPerBlock": 1024,
    "maxThreadsPerMultiprocessor": 2048,
    "regsPerBlock": 65536,
    "regsPerMultiprocessor": 65536,
    "warpSize": 32,
    "sharedMemPerBlock": 49152,
    "sharedMemPerMultiprocessor": 98304,
    "numSms": 80,
    "sharedMemPerBlockOptin": 98304,
}
SENDRECV = "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)"
ALLREDUCE_V100 = "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)"
LOADER = "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"
ELEMENTWISE = (
    "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char*, 1> >"
)

# A real DLRM job's one profiled step (ProfilerStep#10) on 8 V100s, counted by hand from its raw events
# (github.com/facebookresearch/param, et_replay/tests/inputs/dlrm_kineto.tar.gz, worker<R>_step_12.*.json),
# µs after rank 1's step marker: each rank's marker start and its DataLoader fetch (start after the marker,
# duration); each of the step's 8 NCCL kernels (4 all-to-all SendRecv, then all-reduce, SendRecv, 2
# all-reduces), the moment each rank's kernel starts; and each kernel's shortest time on any rank (the
# last rank's: the transfer). The kernels end within 1-7 µs of each other on every rank: here at one moment.
DLRM_MARKER = {0: 5469, 1: 0, 2: 6887, 3: 695, 4: 2844, 5: 2990, 6: 6875, 7: 7513}
DLRM_LOADER = {0: (168, 1101), 1: (167, 1100), 2: (209, 1283), 3: (202, 1406), 4: (182, 1048), 5: (160, 1081),
               6: (203, 1298), 7: (209, 1157)}  # fmt: skip
DLRM_KINDS = (SENDRECV,) * 4 + (ALLREDUCE_V100, SENDRECV, ALLREDUCE_V100, ALLREDUCE_V100)
DLRM_ARRIVE = (  # per collective, per rank 0-7
    (8590, 3101, 10217, 4603, 5853, 6056, 10220, 10725),
    (12481, 12488, 12996, 12490, 12404, 12452, 12993, 13505),
    (13738, 13744, 13741, 13739, 13743, 13738, 13738, 13906),
    (13915, 13915, 13915, 13914, 13915, 13914, 13914, 14039),
    (15099, 15035, 15142, 15050, 15249, 15246, 15131, 15258),
    (16584, 16553, 16629, 16554, 17035, 17087, 16612, 16739),
    (17100, 17099, 17128, 17098, 17633, 17682, 17103, 17234),
    (18179, 18206, 18218, 18247, 19064, 19050, 18213, 18326),
)
DLRM_TRANSFER = (10, 8, 7, 7, 86, 10, 20, 69)
# ranks 1 and 3 run 64 small kernels whose launch is not in the trace (launched before the capture), 1038
# and 343 µs after their markers start, 4 µs each
DLRM_LEFTOVER = {1: 1038, 3: 343}


def dlrm_job(compute_us: float = 130.0) -> dict[int, KinetoWriter]:
    """The 8 ranks of the DLRM job above, one step each: the markers, DataLoader fetches, leftover
    kernels and NCCL kernels where the real trace has them, and before each collective one kernel of
    `compute_us` ending 20 µs before the rank arrives (every rank's compute alike: about 1.05 ms a step
    on the real ranks)."""
    writers = {}
    for r in range(8):
        w = KinetoWriter(rank=r, world_size=8, device=dict(V100), pid=59800 + r, main_tid=60000 + r, devices=8)
        t0 = DLRM_MARKER[r]
        w.step(10, t0, 20_030 - t0)  # the markers end about 0.9 ms after the last all-reduce
        w.op(LOADER, t0 + DLRM_LOADER[r][0], DLRM_LOADER[r][1])
        for k in range(64 if r in DLRM_LEFTOVER else 0):
            w.device_only(ELEMENTWISE, DLRM_LEFTOVER[r] + t0 + 4.5 * k, 4.0, device=r)
        for k, (arrive, name) in enumerate(zip(DLRM_ARRIVE, DLRM_KINDS)):
            done = max(arrive) + DLRM_TRANSFER[k]
            w.kernel(ELEMENTWISE, arrive[r] - compute_us - 40, arrive[r] - compute_us - 20, compute_us, device=r)
            w.kernel(name, arrive[r] - 12, arrive[r], done - arrive[r], stream=84, blocks=8, device=r)
        writers[r] = w
    return writers
