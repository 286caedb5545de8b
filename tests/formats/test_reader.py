import numpy as np
import pytest
from support import scenarios
from support.xplane_writer import GPU_SPECS, ProfileWriter

from tb_gpu_advisor.common.errors import ProfileReadError
from tb_gpu_advisor.formats.xplane import xplane_pb2
from tb_gpu_advisor.formats.xplane.details import parse_kernel_details, parse_memcpy_details, parse_op
from tb_gpu_advisor.formats.xplane.reader import read_profile_bytes
from tb_gpu_advisor.model.classify import classify_device_event, classify_host_event
from tb_gpu_advisor.model.profile import Flag, Kind
from tb_gpu_advisor.report.engine import read_path as read_profile

US = 1_000_000  # ps per µs


def read(w: ProfileWriter):
    return read_profile_bytes(w.to_bytes(), "mem://test.xplane.pb", w.host)


@pytest.mark.parametrize("fmt", ["new", "old"])
def test_single_gpu_events_exact(fmt):
    p = read(scenarios.single_gpu(fmt))
    assert [d.id for d in p.devices] == [0]
    d = p.devices[0]
    assert d.compute_capability == (7, 0) and d.sm_count == 80 and d.clock_khz == 1530000
    assert d.memory_bytes == 16 * 2**30 and d.memory_bandwidth == 900e9
    assert sorted(s.stream_id for s in p.streams) == [7, 8, 9]
    ev = p.device_events(0)
    kinds = ev.kind.tolist()
    assert kinds.count(Kind.KERNEL) == 9
    assert kinds.count(Kind.MEMCPY_H2D) == 3 and kinds.count(Kind.MEMCPY_D2H) == 3
    assert kinds.count(Kind.MEMSET) == 3
    h2d = ev.take(ev.kind == Kind.MEMCPY_H2D)
    assert h2d.bytes.tolist() == [1 << 20] * 3
    assert h2d.dur_ps.tolist() == [50 * US] * 3
    assert h2d.start_ps.tolist() == [100 * US, 1100 * US, 2100 * US]
    assert ev.take(ev.kind == Kind.MEMCPY_D2H).bytes.tolist() == [4096] * 3
    assert ev.take(ev.kind == Kind.MEMSET).bytes.tolist() == [256] * 3

    gemm = ev.take(ev.name == p.names.get("volta_h884gemm_128x128_ldg8_nn"))
    assert len(gemm) == 3 and gemm.dur_ps.tolist() == [300 * US] * 3
    assert [p.op_name(o) for o in gemm.op] == ["dense/MatMul"] * 3
    assert [p.op_type(o) for o in gemm.op] == ["MatMul"] * 3
    assert (gemm.flags & Flag.FP16).all() and (gemm.flags & Flag.TENSOR_CORE).all()
    assert gemm.grid_x.tolist() == [8] * 3 and gemm.grid_y.tolist() == [8] * 3
    assert gemm.block_x.tolist() == [256] * 3 and gemm.regs.tolist() == [126] * 3
    assert gemm.shmem.tolist() == [16384] * 3
    if fmt == "new":
        assert gemm.occupancy.tolist() == [50.0] * 3
    else:
        assert np.isnan(gemm.occupancy).all()

    sgemm = ev.take(ev.name == p.names.get("volta_sgemm_128x64_nn"))
    assert not (sgemm.flags & (Flag.FP16 | Flag.TENSOR_CORE)).any()
    eigen = ev.take(ev.name == p.names.get("void Eigen::internal::EigenMetaKernel<Eigen::half>"))
    assert (eigen.flags & Flag.FP16).all() and not (eigen.flags & Flag.TENSOR_CORE).any()
    assert [p.op_name(o) for o in eigen.op] == ["relu"] * 3

    # placement: dense/MatMul has kernels (device); Unique has none (host)
    on_device = {p.op_name(i): bool(p.ops.on_device[i]) for i in range(len(p.ops))}
    assert on_device["dense/MatMul"] and not on_device["cpu/Unique"]


@pytest.mark.parametrize("fmt", ["new", "old"])
def test_host_threads_exact(fmt):
    p = read(scenarios.single_gpu(fmt))
    threads = {t.name: t.events for t in p.threads}
    assert set(threads) == {"python", "tf_Compute/2", "tf_data_iterator_get_next/3"}
    py = threads["python"]
    steps = py.take(py.kind == Kind.STEP)
    assert steps.step_num.tolist() == [0, 1, 2]
    assert steps.dur_ps.tolist() == [1000 * US] * 3
    launches = py.take(py.kind == Kind.LAUNCH)
    assert len(launches) == 15  # 3 kernels + 2 copies per step
    assert (launches.device_id == 0).all()
    # every launch pairs with exactly one device event by correlation id
    dev = p.device_events(0)
    paired = np.isin(dev.corr, launches.corr)
    assert paired.sum() == 15 and len(set(launches.corr.tolist())) == 15
    tfc = threads["tf_Compute/2"]
    assert (tfc.kind == Kind.FRAMEWORK_OP).sum() == 6
    assert (threads["tf_data_iterator_get_next/3"].kind == Kind.INPUT_WAIT).sum() == 3


def test_multi_gpu_and_idle_gpu():
    p = read(scenarios.multi_gpu())
    assert [d.id for d in p.devices] == [0, 1, 2]
    assert all(d.compute_capability == (8, 0) and d.sm_count == 108 for d in p.devices)
    assert p.device_streams(2) == []  # idle GPU: plane without lines
    g0, g1 = p.device_events(0), p.device_events(1)
    assert (g0.kind == Kind.KERNEL).sum() == 4 and (g0.kind == Kind.COLLECTIVE).sum() == 2
    assert (g1.kind == Kind.KERNEL).sum() == 2 and (g1.kind == Kind.COLLECTIVE).sum() == 2
    bf16 = g0.take(g0.kind == Kind.KERNEL)
    assert (bf16.flags & Flag.FP16).all() and (bf16.flags & Flag.TENSOR_CORE).all()
    assert not (g1.take(g1.kind == Kind.KERNEL).flags & Flag.FP16).any()
    launches = p.host_events().take(p.host_events().kind == Kind.LAUNCH)
    assert sorted(set(launches.device_id.tolist())) == [0, 1]


def test_time_zero_is_the_profile_start():
    """Line timestamps are relative to the profile's start (as profilers write them): zero is that
    start, which is the trace viewer's zero (test_trace_viewer checks it against the converter)."""
    p = read(scenarios.single_gpu())
    starts = np.concatenate([t.events.start_ps for t in p.threads] + [s.events.start_ps for s in p.streams])
    assert starts.min() == 0 and p.origin_ns == 0 and p.time_base == "profile-start"
    assert p.start_ns == 1_795_300_000_000_000_000  # Task Environment's profile_start_time
    assert p.end_ps == 3000 * US  # last event: the step 2 marker ends at 3000 µs


def test_derived_lines_are_not_activity_and_steps_line_is_kept():
    w = ProfileWriter("h")
    gpu = w.gpu(0, GPU_SPECS["A100"])
    gpu.stream(7, "Compute").kernel("k", 10, 100)
    gpu.derived_line("TensorFlow Ops", [("dense/MatMul", 10, 100)])
    gpu.derived_line("XLA Modules", [("cluster_0", 10, 100)])
    gpu.derived_line("Steps", [("0", 10, 50), ("1", 60, 50)])
    p = read(w)
    assert len(p.streams) == 1 and len(p.streams[0].events) == 1
    assert len(p.saved_steps) == 1
    assert p.saved_steps[0].dur_ps.tolist() == [50 * US, 50 * US]


def _plane_with_stats():
    """A hand-built XSpace: ref-valued stats, stats on metadata, an unknown stat."""
    space = xplane_pb2.XSpace()
    plane = space.planes.add(id=1, name="/device:GPU:0")
    for sid, name in [
        (1, "tf_op"),
        (2, "model/conv/Conv2D:Conv2D"),
        (3, "kernel_details"),
        (4, "regs:40 shm:0 grid:10,2,1 block:128,1,1"),
        (5, "some_future_stat"),
        (6, "correlation_id"),
        (7, "compute_cap_major"),
    ]:
        plane.stat_metadata[sid].id = sid
        plane.stat_metadata[sid].name = name
    st = plane.stats.add(metadata_id=7, int64_value=8)
    md = plane.event_metadata[1]
    md.id, md.name = 1, "sm80_xmma_fprop_implicit_gemm_f16f16_f16f32_f32"
    md.stats.add(metadata_id=3, ref_value=4)  # kernel_details on the metadata, by ref
    line = plane.lines.add(id=7, name="Stream #7(Compute)", timestamp_ns=1000)
    ev = line.events.add(metadata_id=1, offset_ps=5000, duration_ps=7000)
    ev.stats.add(metadata_id=1, ref_value=2)  # tf_op by ref
    ev.stats.add(metadata_id=5, str_value="ignored")
    ev.stats.add(metadata_id=6, uint64_value=99)
    del st
    return space


def test_ref_stats_metadata_stats_unknown_stats():
    p = read_profile_bytes(_plane_with_stats().SerializeToString(), "x.xplane.pb", "h")
    ev = p.streams[0].events
    assert p.op_name(ev.op[0]) == "model/conv/Conv2D" and p.op_type(ev.op[0]) == "Conv2D"
    assert (ev.grid_x[0], ev.grid_y[0], ev.block_x[0], ev.regs[0]) == (10, 2, 128, 40)
    assert ev.corr[0] == 99 and ev.dur_ps[0] == 7000
    assert ev.flags[0] & Flag.TENSOR_CORE and ev.flags[0] & Flag.FP16
    assert p.devices[0].compute_capability == (8, 0)


def test_dangling_refs_raise_naming_file():
    space = _plane_with_stats()
    space.planes[0].lines[0].events[0].stats[0].ref_value = 12345
    with pytest.raises(ProfileReadError, match="bad.xplane.pb.*12345"):
        read_profile_bytes(space.SerializeToString(), "bad.xplane.pb", "h")
    space = _plane_with_stats()
    space.planes[0].lines[0].events[0].metadata_id = 777
    with pytest.raises(ProfileReadError, match="bad.xplane.pb.*metadata 777"):
        read_profile_bytes(space.SerializeToString(), "bad.xplane.pb", "h")


def test_broken_files_raise_one_type(tmp_path):
    good = scenarios.single_gpu().to_bytes()
    cases = {
        "empty": b"",
        "truncated": good[: len(good) // 2],
        "random": np.random.default_rng(1).bytes(4096),
        "text": b"<html>not a profile</html>",
    }
    for name, data in cases.items():
        path = tmp_path / f"{name}.xplane.pb"
        path.write_bytes(data)
        with pytest.raises(ProfileReadError) as err:
            read_profile(str(path))
        assert str(path) in str(err.value), name
    with pytest.raises(ProfileReadError, match="cannot read"):
        read_profile(str(tmp_path / "missing.xplane.pb"))


def test_parsers_accept_both_forms_and_garbage():
    assert parse_kernel_details("regs:38 shm:0 grid:160,1,1 block:1024,1,1")[:8] == (160, 1, 1, 1024, 1, 1, 38, 0)
    new = parse_kernel_details("regs:32 static_shared:1024 dynamic_shared:2048 grid:2,3,4 block:64,2,1 occ_pct:37.5")
    assert new == (2, 3, 4, 64, 2, 1, 32, 3072, 37.5)
    garbage = parse_kernel_details("regs:x grid:a,b block: weird occ_pct:?? extra:1")
    assert garbage[:8] == (0, 0, 0, 0, 0, 0, 0, 0)
    assert parse_memcpy_details("size:112 dest:4 async:0") == (112, None, False)
    assert parse_memcpy_details("kind_src:pageable kind_dst:device size:64 dest:0 async:1") == (
        64,
        Kind.MEMCPY_H2D,
        True,
    )
    assert parse_memcpy_details("kind_src:device kind_dst:pinned size:8 dest:0 async:1")[1] == Kind.MEMCPY_D2H
    assert parse_memcpy_details("size:zz")[0] == 0
    assert parse_op("dense_1/MatMul:MatMul") == ("dense_1/MatMul", "MatMul", "")
    assert parse_op("a/b:Conv2D#shape=(half[4,384,4096];half[])#") == ("a/b", "Conv2D", "(half[4,384,4096];half[])")
    assert parse_op("jit_f/dot_general") == ("jit_f/dot_general", "dot_general", "")


def test_classification_by_name():
    assert classify_device_event("MemcpyH2D") == Kind.MEMCPY_H2D
    assert classify_device_event("MemcpyHtoD") == Kind.MEMCPY_H2D
    assert classify_device_event("MemcpyDtoH") == Kind.MEMCPY_D2H
    assert classify_device_event("MemcpyP2P") == Kind.MEMCPY_P2P
    assert classify_device_event("ncclKernel_AllReduce_RING_LL_Sum_float") == Kind.COLLECTIVE
    assert classify_device_event("ncclDevKernel_AllReduce_Sum_f32_RING_LL") == Kind.COLLECTIVE
    assert classify_device_event("volta_sgemm_128x64_nn") == Kind.KERNEL
    assert classify_host_event("IteratorGetNextOp::DoCompute") == Kind.INPUT_WAIT
    assert classify_host_event("Iterator::Root::Prefetch::Map") == Kind.INPUT_STAGE
    assert classify_host_event("cuLaunchKernel") == Kind.LAUNCH
    assert classify_host_event("cudaLaunchKernel") == Kind.LAUNCH
    assert classify_host_event("dense/MatMul:MatMul") == Kind.FRAMEWORK_OP
    assert classify_host_event("IteratorGetNext:IteratorGetNext") == Kind.INPUT_WAIT
    assert classify_host_event("ExecutorState::Process") == Kind.HOST_OTHER


def test_16bit_and_tensor_core_names():
    from tb_gpu_advisor.model.classify import is_16bit_name, is_16bit_shape, uses_tensor_cores

    for name in (
        "ampere_fp16_sgemm_fp16_128x64_nn",
        "void Eigen::internal::EigenMetaKernel<Eigen::half>",
        "sm80_xmma_gemm_bf16bf16_bf16f32_f32_tn_n",
        "cutlass_tensorop_f16_s16816gemm_f16_256x128",
        "void cudnn::bn_fw_tr_1C11_kernel_NCHW<__half, float, 512, true, 1>",
    ):
        assert is_16bit_name(name), name
    for name in ("volta_sgemm_128x64_nn", "ncclKernel_AllReduce_RING_LL_Sum_float"):
        assert not is_16bit_name(name), name
    assert is_16bit_shape("(half[4,384,4096];half[])") and is_16bit_shape("(bfloat16[8])")
    assert not is_16bit_shape("(float[4,384])")
    for name in (
        "volta_h884gemm_64x64_nn",
        "turing_s1688gemm_fp16_128x128",
        "sm90_xmma_gemm_f16f16_f16f32",
        "cutlass_80_tensorop_f16_s16816gemm",
        "sm90_gmma_kernel",
        "ampere_h16816gemm_256x128",
    ):
        assert uses_tensor_cores(name), name
    assert not uses_tensor_cores("volta_sgemm_128x64_nn") and not uses_tensor_cores("ampere_fp16_sgemm_fp16_128x64_nn")


def test_memcpy_details_give_direction_to_a_bare_memcpy():
    w = ProfileWriter("h")
    s = w.gpu(0, GPU_SPECS["A100"]).stream(7, "MemcpyD2H")
    s.memcpy("D2H", 0, 10, 512, name="Memcpy")
    p = read(w)
    assert p.streams[0].events.kind.tolist() == [Kind.MEMCPY_D2H]
    assert p.streams[0].events.bytes.tolist() == [512]


def test_negative_durations_and_huge_timestamps():
    space = _plane_with_stats()
    space.planes[0].lines[0].events[0].duration_ps = -5000
    p = read_profile_bytes(space.SerializeToString(), "neg.xplane.pb", "h")
    assert p.streams[0].events.dur_ps.tolist() == [0]
    # a line whose timestamp is far from the others' is broken: skipped and said, the rest is read
    space = _plane_with_stats()
    space.planes[0].lines.add(id=8, name="Stream #8(Compute)", timestamp_ns=2**62).events.add(
        metadata_id=1, offset_ps=1, duration_ps=1
    )
    p = read_profile_bytes(space.SerializeToString(), "huge.xplane.pb", "h")
    assert [s.stream_id for s in p.streams] == [7] and len(p.streams[0].events) == 1
    assert any("skipped" in w for w in p.warnings)


def test_tables_follow_the_declared_columns():
    """profile.py declares the columns and dtypes; the reader's tables have exactly those."""
    from tb_gpu_advisor.model.profile import CORE_COLUMNS, DEVICE_COLUMNS, HOST_COLUMNS

    p = read(scenarios.single_gpu())
    for tables, extra in (
        ([s.events for s in p.streams], DEVICE_COLUMNS),
        ([t.events for t in p.threads], HOST_COLUMNS),
    ):
        spec = {**CORE_COLUMNS, **extra}
        for t in tables:
            assert set(t.columns) == set(spec)
            for key, (dtype, _) in spec.items():
                assert t.columns[key].dtype == dtype, key
