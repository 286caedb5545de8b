"""Peak rates of the GPUs the what-if models re-time kernels for: dense matrix throughput per
precision and memory bandwidth, from each maker's data sheet (dense figures: the sheets' headline
Tensor Core numbers are often with 2:4 sparsity, twice these; GeForce cards' 16-bit rates with fp32
accumulation, which training uses, half their fp16-accumulate ones). Each row names its source.

A GPU the table does not name gets no peaks, and the precision what-ifs say so: GPUs of one compute
capability differ too much to stand for each other (the A10, A40, RTX 3090 and A2 are all 8.6, their
16-bit peaks 125, 150, 71 and 18 TFLOP/s; the L4, L40S and RTX 4090 are 8.9). An AMD GPU known only
by its gfx target takes its family's row and says so (`Peaks.source`).
"""

from __future__ import annotations

import dataclasses
import re

from tb_gpu_advisor.model.profile import Device


@dataclasses.dataclass(frozen=True)
class Peaks:
    name: str
    fp32: float  # TFLOP/s on the CUDA cores (vector units)
    tf32: float | None  # TFLOP/s on Tensor Cores (matrix cores), None where there are none
    bf16: float | None  # None: no bf16 Tensor Cores (V100, T4)
    fp16: float | None
    bandwidth: float  # GB/s
    source: str  # which data sheet, and why this row

    def rate(self, precision: str) -> float | None:
        """TFLOP/s for "fp32", "tf32", "bf16" or "fp16"; None where the GPU has none, and for a precision
        the table does not hold (FP8, a kernel's unknown units)."""
        return {"fp32": self.fp32, "tf32": self.tf32, "bf16": self.bf16, "fp16": self.fp16}.get(precision)


def _row(
    name: str, fp32: float, tf32: float | None, bf16: float | None, fp16: float | None, bw: float, src: str
) -> Peaks:
    return Peaks(name, fp32, tf32, bf16, fp16, bw, src)


# (a pattern the device's name matches, upper case) -> peaks; the first match wins
TABLE: tuple[tuple[str, Peaks], ...] = (
    (r"V100.*PCIE", _row("V100 PCIe", 14.0, None, None, 112.0, 900.0, "NVIDIA V100 data sheet (PCIe)")),
    (r"V100", _row("V100 SXM2", 15.7, None, None, 125.0, 900.0, "NVIDIA V100 data sheet (SXM2)")),
    (r"\bT4\b", _row("T4", 8.1, None, None, 65.0, 320.0, "NVIDIA T4 data sheet")),
    (r"A100.*40GB", _row("A100 40GB", 19.5, 156.0, 312.0, 312.0, 1555.0, "NVIDIA A100 data sheet (40 GB)")),
    (r"A100.*PCIE", _row("A100 80GB PCIe", 19.5, 156.0, 312.0, 312.0, 1935.0, "NVIDIA A100 data sheet (80 GB PCIe)")),
    (r"A100", _row("A100 80GB SXM", 19.5, 156.0, 312.0, 312.0, 2039.0, "NVIDIA A100 data sheet (80 GB SXM)")),
    (r"A800", _row("A800 80GB", 19.5, 156.0, 312.0, 312.0, 2039.0, "NVIDIA A800 data sheet (the A100's rates)")),
    (r"\bA30\b", _row("A30", 10.3, 82.0, 165.0, 165.0, 933.0, "NVIDIA A30 data sheet")),
    (r"\bA10\b", _row("A10", 31.2, 62.5, 125.0, 125.0, 600.0, "NVIDIA A10 data sheet")),
    (r"\bA40\b", _row("A40", 37.4, 74.8, 149.7, 149.7, 696.0, "NVIDIA A40 data sheet")),
    (r"RTX A6000", _row("RTX A6000", 38.7, 77.4, 154.8, 154.8, 768.0, "NVIDIA RTX A6000 data sheet")),
    (r"RTX 3090", _row("GeForce RTX 3090", 35.6, 35.6, 71.0, 71.0, 936.0, "NVIDIA Ampere GA102 whitepaper")),
    (r"\bL4\b", _row("L4", 30.3, 60.0, 121.0, 121.0, 300.0, "NVIDIA L4 data sheet")),
    (r"\bL40S\b", _row("L40S", 91.6, 183.0, 362.0, 362.0, 864.0, "NVIDIA L40S data sheet")),
    (r"\bL40\b", _row("L40", 90.5, 90.5, 181.0, 181.0, 864.0, "NVIDIA L40 data sheet")),
    (r"RTX 6000 ADA", _row("RTX 6000 Ada", 91.1, 182.1, 364.2, 364.2, 960.0, "NVIDIA RTX 6000 Ada data sheet")),
    (r"RTX 4090", _row("GeForce RTX 4090", 82.6, 82.6, 165.2, 165.2, 1008.0, "NVIDIA Ada GPU architecture whitepaper")),
    (
        r"RTX 5090",
        _row(
            "GeForce RTX 5090", 104.8, 104.8, 209.5, 209.5, 1792.0, "NVIDIA RTX Blackwell GPU architecture whitepaper"
        ),
    ),
    (r"\bH20\b", _row("H20", 44.0, 74.0, 148.0, 148.0, 4000.0, "NVIDIA H20 product brief")),
    (r"GH200", _row("GH200", 67.0, 494.5, 989.5, 989.5, 4000.0, "NVIDIA GH200 data sheet (96 GB HBM3)")),
    (r"H200", _row("H200", 67.0, 494.5, 989.5, 989.5, 4800.0, "NVIDIA H200 data sheet (SXM)")),
    (r"H100.*PCIE", _row("H100 PCIe", 51.0, 378.0, 756.0, 756.0, 2000.0, "NVIDIA H100 data sheet (PCIe)")),
    (r"H100.*NVL", _row("H100 NVL", 60.0, 417.5, 835.5, 835.5, 3900.0, "NVIDIA H100 data sheet (NVL)")),
    (r"H100", _row("H100 SXM", 67.0, 494.5, 989.5, 989.5, 3350.0, "NVIDIA H100 data sheet (SXM)")),
    (r"H800", _row("H800 SXM", 67.0, 494.5, 989.5, 989.5, 3350.0, "NVIDIA H800 data sheet (the H100 SXM's rates)")),
    (r"GB200", _row("GB200", 90.0, 1250.0, 2500.0, 2500.0, 8000.0, "NVIDIA GB200 NVL72 data sheet (per GPU)")),
    (r"B200", _row("B200", 75.0, 1100.0, 2250.0, 2250.0, 8000.0, "NVIDIA HGX B200 data sheet (per GPU)")),
    (r"MI210", _row("MI210", 22.6, 45.3, 181.0, 181.0, 1638.0, "AMD Instinct MI210 data sheet (FP32 matrix as TF32)")),
    (
        r"MI250",
        _row("MI250X", 47.9, 95.7, 383.0, 383.0, 3277.0, "AMD Instinct MI250X data sheet (FP32 matrix as TF32)"),
    ),
    (r"MI325", _row("MI325X", 81.7, 653.7, 1307.4, 1307.4, 6000.0, "AMD Instinct MI325X data sheet")),
    (r"MI300", _row("MI300X", 81.7, 653.7, 1307.4, 1307.4, 5300.0, "AMD Instinct MI300X data sheet")),
)
_PATTERNS = tuple((re.compile(p), row) for p, row in TABLE)
# AMD GPUs known by their gfx target only: the family's row, and the source says so
GFX = {"gfx90a": "MI250", "gfx942": "MI300", "gfx950": "MI300"}


def peaks(device: Device) -> Peaks | None:
    """The device's peaks, or None for a GPU the table does not name."""
    name = (device.name or "").upper()
    for pattern, row in _PATTERNS:
        if pattern.search(name):
            return row
    if device.is_amd:
        key = next((v for g, v in GFX.items() if (device.gfx or "").startswith(g)), None)
        if key is not None:
            row = next(r for p, r in TABLE if p == key)
            return dataclasses.replace(row, source=f"{row.source}: the nearest of its family ({device.gfx})")
    return None
