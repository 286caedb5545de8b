"""Peak rates of the GPUs the what-if models re-time kernels for: dense matrix throughput per
precision and memory bandwidth, from each maker's data sheet (dense figures: the sheets' headline
Tensor Core numbers are often with 2:4 sparsity, twice these).

Sources:
- V100: NVIDIA Tesla V100 data sheet (SXM2: 15.7 FP32, 125 Tensor TFLOP/s; PCIe: 14, 112; 900 GB/s).
- T4: NVIDIA T4 data sheet (8.1 FP32, 65 FP16 Tensor; 320 GB/s).
- A100: NVIDIA A100 data sheet (19.5 FP32, 156 TF32, 312 BF16/FP16 Tensor; 1,555 GB/s for 40 GB,
  2,039 for 80 GB SXM, 1,935 for 80 GB PCIe).
- L4: NVIDIA L4 data sheet (30.3 FP32, 60 TF32, 121 BF16/FP16 dense; 300 GB/s).
- H100: NVIDIA H100 data sheet (SXM: 67 FP32, 494.5 TF32, 989.5 BF16/FP16 dense; 3,350 GB/s;
  PCIe: 51, 378, 756; 2,000 GB/s; NVL: 60, 417.5, 835.5; 3,900 GB/s).
- H200: NVIDIA H200 data sheet (SXM: the H100 SXM's compute; 4,800 GB/s).
- B200: NVIDIA HGX B200 data sheet (per GPU: 75 FP32, 1,100 TF32, 2,250 BF16/FP16 dense; 8,000 GB/s).
- MI250X: AMD Instinct MI250X data sheet (47.9 FP32 vector, 95.7 FP32 matrix, 383 BF16/FP16 matrix;
  3,277 GB/s).
- MI300X: AMD Instinct MI300X data sheet (81.7 FP32 vector, 163.4 FP32 matrix, 653.7 TF32, 1,307.4
  BF16/FP16 matrix; 5,300 GB/s).

A GPU the table does not name takes its family's row by compute capability (or gfx target), and says
so (`Peaks.source`).
"""

from __future__ import annotations

import dataclasses

from tb_gpu_advisor.model.profile import Device


@dataclasses.dataclass(frozen=True)
class Peaks:
    name: str
    fp32: float  # TFLOP/s on the CUDA cores (vector units)
    tf32: float | None  # TFLOP/s on Tensor Cores (matrix cores), None where there are none
    bf16: float | None  # None: no bf16 Tensor Cores (V100, T4)
    fp16: float | None
    bandwidth: float  # GB/s
    source: str  # which row, and why

    def rate(self, precision: str) -> float | None:
        """TFLOP/s for "fp32", "tf32", "bf16" or "fp16"; None where the GPU has none."""
        return {"fp32": self.fp32, "tf32": self.tf32, "bf16": self.bf16, "fp16": self.fp16}[precision]


# (name keys, all of which the device name holds, upper case) -> peaks; the first match wins
TABLE: tuple[tuple[tuple[str, ...], Peaks], ...] = (
    (("V100", "PCIE"), Peaks("V100 PCIe", 14.0, None, None, 112.0, 900.0, "")),
    (("V100",), Peaks("V100 SXM2", 15.7, None, None, 125.0, 900.0, "")),
    (("T4",), Peaks("T4", 8.1, None, None, 65.0, 320.0, "")),
    (("A100", "40GB"), Peaks("A100 40GB", 19.5, 156.0, 312.0, 312.0, 1555.0, "")),
    (("A100", "PCIE"), Peaks("A100 80GB PCIe", 19.5, 156.0, 312.0, 312.0, 1935.0, "")),
    (("A100",), Peaks("A100 80GB SXM", 19.5, 156.0, 312.0, 312.0, 2039.0, "")),
    (("L4",), Peaks("L4", 30.3, 60.0, 121.0, 121.0, 300.0, "")),
    (("H200",), Peaks("H200", 67.0, 494.5, 989.5, 989.5, 4800.0, "")),
    (("H100", "PCIE"), Peaks("H100 PCIe", 51.0, 378.0, 756.0, 756.0, 2000.0, "")),
    (("H100", "NVL"), Peaks("H100 NVL", 60.0, 417.5, 835.5, 835.5, 3900.0, "")),
    (("H100",), Peaks("H100 SXM", 67.0, 494.5, 989.5, 989.5, 3350.0, "")),
    (("B200",), Peaks("B200", 75.0, 1100.0, 2250.0, 2250.0, 8000.0, "")),
    (("MI250",), Peaks("MI250X", 47.9, 95.7, 383.0, 383.0, 3277.0, "")),
    (("MI300",), Peaks("MI300X", 81.7, 653.7, 1307.4, 1307.4, 5300.0, "")),
)
# by architecture, for GPUs the table does not name
FAMILY = {
    (7, 0): "V100",
    (7, 5): "T4",
    (8, 0): "A100",
    (8, 6): "L4",
    (8, 9): "L4",
    (9, 0): "H100",
    (10, 0): "B200",
}
GFX = {"gfx90a": "MI250", "gfx942": "MI300", "gfx950": "MI300"}


def peaks(device: Device) -> Peaks | None:
    """The device's peaks, or None for a GPU of no known family."""
    name = (device.name or "").upper()
    for keys, row in TABLE:
        if all(k in name for k in keys):
            return dataclasses.replace(row, source=f"{row.name} (its data sheet)")
    key = None
    if device.is_amd:
        key = next((v for g, v in GFX.items() if (device.gfx or "").startswith(g)), None)
    elif device.compute_capability is not None:
        key = FAMILY.get(device.compute_capability)
    if key is None:
        return None
    row = next(r for keys, r in TABLE if keys == (key,) or keys[0] == key and len(keys) == 1)
    return dataclasses.replace(row, source=f"{row.name}'s figures: the nearest of its family ({device.name})")
