"""Small Kineto traces written event by event, with the GPUs as Kineto describes them in a CUDA and a
ROCm build (`deviceProperties`): used by the advice tests and the kernel table's AMD words."""

from __future__ import annotations

import json


def cuda_props(i: int, name: str, cc: tuple[int, int], sms: int) -> dict:
    """A GPU as Kineto describes it in a CUDA build."""
    return {
        "id": i,
        "name": name,
        "totalGlobalMem": 34084028416,
        "computeMajor": cc[0],
        "computeMinor": cc[1],
        "maxThreadsPerBlock": 1024,
        "maxThreadsPerMultiprocessor": 2048,
        "regsPerBlock": 65536,
        "warpSize": 32,
        "sharedMemPerBlock": 49152,
        "numSms": sms,
        "regsPerMultiprocessor": 65536,
        "sharedMemPerBlockOptin": 98304,
        "sharedMemPerMultiprocessor": 98304,
    }


def rocm_props(i: int) -> dict:
    """An MI250 as Kineto describes it in a ROCm build: hipDeviceProp_t's major/minor (9.0 for
    gfx90a), 64-thread wavefronts, and ROCm's own shared-memory field instead of CUDA's."""
    return {
        "id": i,
        "name": "AMD Instinct MI250X / MI250",
        "totalGlobalMem": 68702699520,
        "computeMajor": 9,
        "computeMinor": 0,
        "maxThreadsPerBlock": 1024,
        "maxThreadsPerMultiprocessor": 2048,
        "regsPerBlock": 65536,
        "warpSize": 64,
        "sharedMemPerBlock": 65536,
        "numSms": 104,
        "maxSharedMemoryPerMultiProcessor": 65536,
    }


V100 = cuda_props(0, "Tesla V100-SXM2-16GB", (7, 0), 80)
T4 = cuda_props(0, "Tesla T4", (7, 5), 40)
A100 = cuda_props(0, "NVIDIA A100-SXM4-40GB", (8, 0), 108)
H100 = cuda_props(0, "NVIDIA H100 80GB HBM3", (9, 0), 132)
MI250 = rocm_props(0)

SGEMM = "volta_sgemm_128x64_nn"  # cuBLAS fp32 GEMM: no Tensor Core marker in its name
TENSILE = "Cijk_Ailk_Bljk_SB_MT128x128x16_MI32x32x2x1_SN_1LDSB0_APM1_AF0EM8"  # rocBLAS/Tensile fp32 GEMM


def kineto(
    props: list[dict],
    *,
    kernel: str = SGEMM,
    dtype: str = "float",
    launch: str = "cudaLaunchKernel",
    steps: int = 5,
    loader: str | None = None,
    loader_us: float = 50,
    devices: tuple[int, ...] = (0,),
) -> bytes:
    """A trace of `steps` training steps: each step asks `loader` for a batch (when given), then runs
    four `aten::mm` on `dtype` inputs, each launching one 400 µs `kernel` on every GPU of `devices`
    (a DataParallel job when several)."""
    ev: list[dict] = [
        {
            "ph": "X",
            "cat": "Trace",
            "name": "PyTorch Profiler (0)",
            "pid": "Spans",
            "tid": "PyTorch Profiler",
            "ts": 0,
            "dur": 1,
        }
    ]
    t, ext, corr = 100, 1, 1
    for s in range(steps):
        start = t
        if loader:
            ev.append(
                {
                    "ph": "X",
                    "cat": "cpu_op",
                    "name": f"enumerate(DataLoader)#{loader}.__next__",
                    "pid": 1,
                    "tid": 1,
                    "ts": t,
                    "dur": loader_us,
                    "args": {"External id": ext},
                }
            )
            ext += 1
            t += loader_us + 10
        for _ in range(4):
            ev.append(
                {
                    "ph": "X",
                    "cat": "cpu_op",
                    "name": "aten::mm",
                    "pid": 1,
                    "tid": 1,
                    "ts": t,
                    "dur": 30,
                    "args": {"External id": ext, "Input type": [dtype, dtype], "Input Dims": [[512, 512], [512, 512]]},
                }
            )
            for d in devices:
                ev.append(
                    {
                        "ph": "X",
                        "cat": "cuda_runtime",
                        "name": launch,
                        "pid": 1,
                        "tid": 1,
                        "ts": t + 5,
                        "dur": 8,
                        "args": {"correlation": corr, "External id": ext},
                    }
                )
                ev.append(
                    {
                        "ph": "X",
                        "cat": "kernel",
                        "name": kernel,
                        "pid": d,
                        "tid": "stream 7",
                        "ts": t + 20,
                        "dur": 400,
                        "args": {
                            "device": d,
                            "stream": 7,
                            "correlation": corr,
                            "External id": ext,
                            "grid": [256, 1, 1],
                            "block": [256, 1, 1],
                        },
                    }
                )
                corr += 1
            ext += 1
            t += 450
        ev.append(
            {
                "ph": "X",
                "cat": "user_annotation",
                "name": f"ProfilerStep#{s}",
                "pid": 1,
                "tid": 1,
                "ts": start,
                "dur": t - start,
            }
        )
        t += 20
    return json.dumps({"schemaVersion": 1, "deviceProperties": props, "traceEvents": ev}).encode()
