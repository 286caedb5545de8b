"""The profile plugin's own converter (test-only, on bytes with a scratch path) accepts every
writer-made file, and where both compute the same quantity the numbers agree within 1%.

What is "the same quantity" (learned from the converter, tensorboard-plugin-profile 2.24):
- It attributes kernels to ops only from `tf_op` (new format), not from the older `annotation`,
  and decides 16-bit and Tensor Core eligibility from the op; so those two are compared on
  new-format files. Per-kernel occurrences and durations are compared in both formats.
- It counts copies named `MemcpyH2D`/`MemcpyD2H` as compute (see test_converter_miscounts_...),
  so the files compared name them `MemcpyHtoD`/`MemcpyDtoH`, which it recognises.
- Its GPU step is the span of a step's device work (first start to last end), and it leaves out the
  first and last steps of a capture with more than five; test_converter_demo_agreement.py compares
  every demo run on that basis.
"""

from collections import defaultdict

import pytest
from conftest import converter_percent
from support import scenarios

from tb_gpu_advisor.formats.xplane.reader import read_profile_bytes
from tb_gpu_advisor.model.analysis import analyse
from tb_gpu_advisor.model.profile import Flag, Kind

FILES = {
    "single-new": lambda: scenarios.single_gpu("new", copy_names="long"),
    "single-old": lambda: scenarios.single_gpu("old", copy_names="long"),
    "multi-new": lambda: scenarios.multi_gpu("new"),
    "multi-old": lambda: scenarios.multi_gpu("old"),
}


def _ours(data: bytes):
    p = read_profile_bytes(data, "t.xplane.pb", "h")
    return p, analyse(p)


@pytest.mark.parametrize("name", sorted(FILES))
@pytest.mark.parametrize(
    "tool", ["overview_page", "kernel_stats", "framework_op_stats", "input_pipeline_analyzer", "trace_viewer"]
)
def test_converter_accepts_every_writer_file(name, tool, converter):
    assert converter(FILES[name]().to_bytes(), tool)


def test_16bit_share_agrees_single_gpu(converter):
    data = FILES["single-new"]().to_bytes()
    theirs = converter_percent(converter(data, "overview_page"), "device_compute_16bit_percent")
    ours = _ours(data)[1].headline()["fp16_compute_pct"]
    assert theirs == pytest.approx(63.1, abs=0.05)  # 1050 of 1665 µs
    assert ours == pytest.approx(theirs, rel=0.01)


def test_16bit_share_multi_gpu_converter_has_no_data(converter):
    """Two A100s: GPU0 2 x 600 µs bf16, GPU1 800 µs fp32 per step (the idle third is not counted):
    60% for the advisor. The converter reports 0% 16-bit here: the first kernels of each step are
    launched 5 µs before its marker, and it leaves GPU0's bf16 kernels out; on the demo's four-GPU
    runs, whose launches come inside the steps, it agrees within a few points
    (test_converter_demo_agreement.py)."""
    data = FILES["multi-new"]().to_bytes()
    overview = converter(data, "overview_page")
    assert converter_percent(overview, "device_compute_16bit_percent") == 0.0
    assert _ours(data)[1].headline()["fp16_compute_pct"] == pytest.approx(60.0)  # 2400 of 4000 µs


@pytest.mark.parametrize("name", sorted(FILES))
def test_kernel_stats_agree(name, converter):
    data = FILES[name]().to_bytes()
    table = converter(data, "kernel_stats")
    cols = [c["id"] for c in table["cols"]]
    theirs = defaultdict(lambda: [0, 0.0, set()])
    for row in table["rows"]:
        r = dict(zip(cols, [c["v"] for c in row["c"]]))
        t = theirs[r["kernel_name"]]
        t[0] += r["occurrences"]
        t[1] += r["total_duration_us"]
        t[2].add(r["is_kernel_using_tensor_core"])
    p, _ = _ours(data)
    ours = defaultdict(lambda: [0, 0.0, set()])
    for s in p.streams:
        ev = s.events.of_kind(Kind.KERNEL, Kind.COLLECTIVE)
        for i in range(len(ev)):
            o = ours[p.names[ev.name[i]]]
            o[0] += 1
            o[1] += ev.dur_ps[i] / 1e6
            o[2].add(bool(ev.flags[i] & Flag.TENSOR_CORE))
    assert set(ours) == set(theirs)
    for kernel, (n, total_us, tc) in ours.items():
        assert n == theirs[kernel][0], kernel
        assert total_us == pytest.approx(theirs[kernel][1], rel=0.01), kernel
        if name.endswith("-new"):
            assert tc == theirs[kernel][2], kernel
    assert len(ours) >= 3


def test_converter_miscounts_memcpy_h2d_as_compute(converter):
    """With the real copy names it counts 150 µs of MemcpyH2D/D2H per step as compute; ours does not."""
    data = scenarios.single_gpu("new").to_bytes()
    theirs = converter_percent(converter(data, "overview_page"), "device_compute_16bit_percent")
    assert theirs == pytest.approx(100 * 1050 / (1665 + 150 + 60), abs=0.05)  # 56.0%: copies in the denominator
    assert _ours(data)[1].headline()["fp16_compute_pct"] == pytest.approx(100 * 1050 / 1665)


def input_profile(copy_us: float, copy_name: str):
    """Six 1000 µs steps whose device work fills the step: an input copy the step waits on, then
    compute. The converter's GPU step spans the device work, so here both measure the same share."""
    from support.xplane_writer import GPU_SPECS, ProfileWriter

    w = ProfileWriter("h0")
    gpu = w.gpu(0, GPU_SPECS["V100"])
    compute, h2d = gpu.stream(7, "Compute"), gpu.stream(8, "MemcpyH2D")
    py = w.thread("python", 1)
    for i in range(6):
        t = 1000 + i * 1000.0
        py.step(i, t - 10, 1000)
        h2d.memcpy(
            "H2D", t, copy_us, 1 << 20, op="IteratorGetNext:IteratorGetNext", launch=py, name=copy_name, lead_us=3
        )
        compute.kernel(
            "volta_h884gemm_128x128_ldg8_nn",
            t + copy_us,
            1000 - copy_us,
            op="m/MatMul:MatMul",
            shape="(half[64,64];half[64,64])",
            launch=py,
            lead_us=3,
        )
    return w.to_bytes()


def _converter_input_pct(overview) -> float:
    import re

    text = next(t["p"]["input_conclusion"] for t in overview if "input_conclusion" in t.get("p", {}))
    return float(re.search(r"([\d.]+)% of the total step time sampled is waiting for input", text).group(1))


@pytest.mark.parametrize("copy_us", [50, 100, 300])
def test_input_bound_share_agrees(copy_us, converter):
    from support.sim import run_check

    data = input_profile(copy_us, "MemcpyHtoD")
    theirs = _converter_input_pct(converter(data, "overview_page"))
    ours = run_check(_ours(data)[1], "input.bound").metric("input_pct")
    assert theirs == pytest.approx(copy_us / 10, abs=0.05)
    assert ours == pytest.approx(theirs, rel=0.01)


def test_converter_misses_input_copies_named_memcpyh2d(converter):
    """With the real name, the converter counts the 300 µs input copy as compute: "NOT input-bound
    because only 0.0% of the total step time sampled is waiting for input"."""
    from support.sim import run_check

    data = input_profile(300, "MemcpyH2D")
    assert _converter_input_pct(converter(data, "overview_page")) == 0.0
    f = run_check(_ours(data)[1], "input.bound")
    assert f.status == "critical" and f.metric("input_pct") == pytest.approx(30.0, rel=0.01)
