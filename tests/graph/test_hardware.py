"""The peak table the precision what-ifs re-time kernels by (graph/hardware.py): each GPU by its own
data sheet's row, found by the name its trace gives; a GPU the table does not name gets no peaks (the
what-if then says it cannot re-time), never another GPU's of the same compute capability."""

from __future__ import annotations

import pytest

from tb_gpu_advisor.graph.hardware import TABLE, peaks
from tb_gpu_advisor.model.profile import AMD, Device


def gpu(name: str, cc: tuple[int, int] | None = None, vendor: str | None = "NVIDIA", gfx: str | None = None) -> Device:
    return Device(0, name, "/device:GPU:0", cc, vendor=vendor, gfx=gfx)


@pytest.mark.parametrize(
    "name,cc,row",
    [
        ("NVIDIA A10", (8, 6), "A10"),
        ("NVIDIA A40", (8, 6), "A40"),
        ("NVIDIA A30", (8, 0), "A30"),
        ("NVIDIA A100-SXM4-40GB", (8, 0), "A100 40GB"),
        ("NVIDIA L4", (8, 9), "L4"),
        ("NVIDIA L40", (8, 9), "L40"),
        ("NVIDIA L40S", (8, 9), "L40S"),
        ("NVIDIA GeForce RTX 4090", (8, 9), "GeForce RTX 4090"),
        ("NVIDIA GeForce RTX 5090", (12, 0), "GeForce RTX 5090"),
        ("NVIDIA RTX A6000", (8, 6), "RTX A6000"),
        ("NVIDIA RTX 6000 Ada Generation", (8, 9), "RTX 6000 Ada"),
        ("NVIDIA H20", (9, 0), "H20"),
        ("NVIDIA H200", (9, 0), "H200"),
        ("NVIDIA GH200 480GB", (9, 0), "GH200"),
        ("NVIDIA H100 80GB HBM3", (9, 0), "H100 SXM"),
        ("NVIDIA B200", (10, 0), "B200"),
        ("NVIDIA GB200", (10, 0), "GB200"),
    ],
)
def test_each_gpu_gets_its_own_data_sheets_row(name, cc, row):
    pk = peaks(gpu(name, cc))
    assert pk is not None and pk.name == row
    assert pk.source and "data sheet" in pk.source or "whitepaper" in pk.source or "brief" in pk.source


@pytest.mark.parametrize(
    "name,cc",
    [
        ("NVIDIA A2", (8, 6)),  # Ampere: 18 TFLOP/s of 16-bit, not the L4's 121
        ("NVIDIA RTX 4000 Ada Generation", (8, 9)),  # Ada
        ("NVIDIA GeForce RTX 3060", (8, 6)),
        ("", (9, 0)),  # a trace without the device's name
    ],
)
def test_a_gpu_the_table_does_not_name_gets_no_peaks(name, cc):
    """On 614e940 an unknown Ampere or Ada GPU got the L4's peaks, an unnamed Hopper the H100 SXM's."""
    assert peaks(gpu(name, cc)) is None


def test_an_amd_gpu_known_by_its_target_takes_its_familys_row_and_says_so():
    pk = peaks(gpu("", None, AMD, "gfx942:sramecc+:xnack-"))
    assert pk is not None and pk.name == "MI300X" and "nearest of its family" in pk.source
    assert peaks(gpu("AMD Instinct MI325X", None, AMD, "gfx942")).name == "MI325X"


def test_every_row_has_a_source_and_dense_rates_in_order():
    for _, row in TABLE:
        assert row.source
        assert row.bandwidth > 0 and row.fp32 > 0
        sixteen = row.bf16 or row.fp16
        assert sixteen is not None and sixteen >= row.fp32
        assert row.tf32 is None or row.tf32 <= sixteen
