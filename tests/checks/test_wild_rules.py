"""The reading rules of issue 50 on small traces written here, each shaped like a public trace of the
wild corpus (docs/corpus.md) with the numbers counted there by hand; tests/wild/ runs the same rules
on the public traces themselves where they are present. What the trace's structure is, and where it
comes from, is said at each test."""

from __future__ import annotations

import json

import pytest
from support.kineto_readers import compare
from support.kineto_traces import cuda_props
from support.sim import SEEN, Sim, run_check
from support.xplane_writer import GPU_SPECS, ProfileWriter

from tb_gpu_advisor import tables
from tb_gpu_advisor.checks.findings import CRITICAL, NOT_APPLICABLE, PASS, WARNING
from tb_gpu_advisor.formats.kineto.native import read_pytorch_trace_bytes
from tb_gpu_advisor.formats.xplane.reader import read_profile_bytes
from tb_gpu_advisor.measures import JAX, Measures
from tb_gpu_advisor.model.analysis import analyse
from tb_gpu_advisor.model.profile import Flag, Kind

H800 = cuda_props(0, "NVIDIA H800", (9, 0), 132)
B200 = cuda_props(0, "NVIDIA B200", (10, 0), 148)
MI300X = {
    "id": 0,
    "name": "AMD Instinct MI300X",
    "totalGlobalMem": 206141652992,
    "computeMajor": 9,
    "computeMinor": 4,
    "maxThreadsPerBlock": 1024,
    "maxThreadsPerMultiprocessor": 2048,
    "regsPerBlock": 65536,
    "warpSize": 64,
    "sharedMemPerBlock": 65536,
    "numSms": 304,
    "maxSharedMemoryPerMultiProcessor": 65536,
}

# Kernel names as the public traces write them (docs/corpus.md)
FP8_GROUPED_GEMM = (
    "void cutlass::device_kernel<dpsk::grouped_gemm::cuda::fp8_ptp128c::GemmKernel>"
    "(dpsk::grouped_gemm::cuda::fp8_ptp128c::GemmKernel::Params)"
)
FA3_BWD = (
    "void cutlass::device_kernel<flash::FlashAttnBwd<flash::CollectiveMainloopBwd<2, cute::tuple<cute::C<1>, "
    "cute::C<1>, cute::C<1> >, cute::tuple<cute::C<64>, cute::C<128>, cute::C<192> >, cutlass::bfloat16_t, "
    "float, cutlass::arch::Sm90> > >(flash::FlashAttnBwd::Params)"
)
DEEPEP_DISPATCH = "void dpsk::ep::internode::dispatch<false, 8, false, 8>(int4*, float*, long*, float*)"
DEEPEP_COMBINE = "void dpsk::ep::internode::combine<false, 8, __nv_bfloat16, 8, 2, 16, 24>(int4*, float*, bool const*)"
MXFP8_BMM = (
    "bmm_MxE4m3_MxE2m1MxE4m3_Fp32_t128x16x256u2_s3_et128x16_m128x16x32_cga1x1x1_16dp256b_rM_TN_transOut_"
    "schedP2x1x2x3_biasM_bN_tma_tmaOpt_clmp_swiGlu_dynBatch_sm100f"
)
MULTIMEM = "void (anonymous namespace)::multimem_all_reduce_kernel<c10::BFloat16, 16>(c10::BFloat16*, unsigned long)"
TENSILE_BF16 = "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT128x256x32_MI16x16x1_SN_LDSB1_AFC1_AFEM1"


class Trace:
    """A PyTorch trace written event by event (µs), as Kineto writes one."""

    def __init__(self, props: list[dict], **top: object) -> None:
        self.props, self.top = props, top
        self.ev: list[dict] = [
            {"ph": "X", "cat": "Trace", "name": "PyTorch Profiler (0)", "pid": "Spans", "tid": "P", "ts": 0, "dur": 1}
        ]
        self.corr = 1

    def op(self, name: str, ts: float, dur: float, ext: int, types: list[str] | None = None) -> None:
        args: dict = {"External id": ext}
        if types:
            args["Input type"] = types
        self.ev.append(
            {"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": dur, "args": args}
        )

    def kernel(
        self, name: str, ts: float, dur: float, *, stream: int = 7, device: int = 0, ext: int = -1,
        launch: str = "cudaLaunchKernel", launch_ts: float | None = None, launch_dur: float = 4,
    ) -> None:  # fmt: skip
        c = self.corr
        self.corr += 1
        lt = ts - 10 if launch_ts is None else launch_ts
        self.ev.append(
            {"ph": "X", "cat": "cuda_runtime", "name": launch, "pid": 1, "tid": 1, "ts": lt, "dur": launch_dur,
             "args": {"correlation": c, "External id": ext}}
        )  # fmt: skip
        self.ev.append(
            {"ph": "X", "cat": "kernel", "name": name, "pid": device, "tid": f"stream {stream}", "ts": ts, "dur": dur,
             "args": {"device": device, "stream": stream, "correlation": c, "External id": ext,
                      "grid": [132, 1, 1], "block": [128, 1, 1]}}
        )  # fmt: skip

    def runtime(self, name: str, ts: float, dur: float) -> None:
        self.ev.append({"ph": "X", "cat": "cuda_runtime", "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": dur})

    def step(self, number: int, ts: float, dur: float) -> None:
        self.ev.append(
            {
                "ph": "X",
                "cat": "user_annotation",
                "name": f"ProfilerStep#{number}",
                "pid": 1,
                "tid": 1,
                "ts": ts,
                "dur": dur,
            }
        )

    def measures(self) -> Measures:
        doc = {"schemaVersion": 1, "deviceProperties": self.props, **self.top, "traceEvents": self.ev}
        return Measures(analyse(read_pytorch_trace_bytes(json.dumps(doc).encode(), "w.pt.trace.json", "h")))


def checks(m: Measures) -> dict:
    from tb_gpu_advisor.checks import run_checks

    found = {f.id: f for f in run_checks(m)[0]}
    for f in found.values():  # seen by the registry's test (tests/checks/test_checks_registry.py)
        SEEN[f.id].add(f.status)
    return found


# -- item 2: host time inside ops, by what it is ------------------------------------------------------------

A100 = cuda_props(0, "NVIDIA A100-PG509-200", (8, 0), 108)
MIOPEN_BWD = "naive_conv_bwd_nchw_float_double_float"  # MIOpen's backward convolution, as the MI300X trace names it
# what compile, fusion, CUDA graphs and reduce-overhead take away: dispatch inside ops, nothing else
DISPATCH_FIXES = ("compile", "fusion", "graph", "reduce-overhead")


def no_caching_allocator(free_us: float = 2000.0, caching: bool = False) -> Trace:
    """DDP ResNet-18 on an MI300X with the caching allocator off (AMD-AGI/TraceLens ddp_resnet18_no_pool:
    1,360 hipFree take 3,346 ms of its 3,391 ms, inside `aten::convolution_backward` and its kin; 1,460
    hipMalloc 11.9 ms; 359 ms of kernels). Here 4 steps of 10 ops, each a hipMalloc of 8 µs, a 250 µs
    kernel launched with `hipExtModuleLaunchKernel`, and a hipFree of `free_us` (the host 2.04 ms an op,
    the GPU 0.25 ms); `caching`: the same steps with the allocator on (no call at all)."""
    t = Trace([MI300X])
    ts = 100.0
    for step in range(4):
        s0 = ts
        for i in range(10):
            ext = 100 * step + i
            t.op("aten::convolution_backward", ts, 30 + free_us, ext)
            if not caching:
                t.runtime("hipMalloc", ts + 1, 8)
            t.kernel(MIOPEN_BWD, ts + 20, 250, ext=ext, launch="hipExtModuleLaunchKernel", launch_ts=ts + 10)
            if not caching:
                t.runtime("hipFree", ts + 25, free_us)
            ts += 40 + free_us
        t.step(step, s0, ts - s0 - 5)
    return t


def test_the_allocators_calls_are_not_dispatch():
    """Today's code counted the hipFree inside each op as dispatch that torch.compile removes: xla.off
    "saved" 87% of this step (critical), and no finding named the allocator. Here 20.4 ms steps with
    20 ms of hipFree/hipMalloc: steps.allocator fires with the allocator what-if (the step falls to the
    GPU's 2.5 ms); compile, fusion, graphs and
    reduce-overhead keep every allocator call (they save less than the ops' 30 µs of dispatch each)."""
    m = no_caching_allocator().measures()
    f = checks(m)
    for change in DISPATCH_FIXES:
        p = m.predict(change)
        assert p is None or p.saving_ps <= 10 * 30e6, change  # at most the ops' own 30 µs each
    assert f["xla.off"].status not in (WARNING, CRITICAL)
    a = f["steps.allocator"]
    assert a.status == CRITICAL and a.metric("calls") == "hipFree/hipMalloc"
    assert a.metric("alloc_ms_per_step") == pytest.approx(10 * (2.0 + 0.008), rel=1e-6)
    assert a.metric("alloc_calls_per_step") == 20
    assert "PYTORCH_NO_HIP_MEMORY_CACHING" in a.recommendation and "CUDA" not in a.recommendation
    pr = m.predict("allocator")
    assert pr is not None and a.whatif is not None and a.whatif["change"] == "allocator"
    assert pr.new_step_ps == pytest.approx(10 * 250e6, rel=0.05)  # the GPU's 2.5 ms
    # the same steps with the caching allocator on: no call, nothing to say
    on = checks(no_caching_allocator(caching=True).measures())
    assert on["steps.allocator"].status == PASS and on["capture.warmup"].status == PASS


def warmup_capture() -> Trace:
    """PARAM's AlexNet benchmark on an A100 (HTA tests/data/critical_path/alexnet), its times a tenth:
    no step markers; `aten::empty_strided` holding the process's first CUDA call (its
    cudaDeviceGetStreamPriorityRange 29,927 ms: the context created), then the first
    `aten::cudnn_convolution` with cudaStreamCreateWithFlags (733 ms), cudaMalloc, cudaFree (6,009 ms)
    and its first cudaLaunchKernel (3,056 ms, the GPU idle: its module loaded); then the measured
    iteration's 10 launches of 10 µs, the kernels 50 µs. (The writer's times are µs.)"""
    ms = 1000.0
    t = Trace([A100])
    t.ev[0]["dur"] = 4200 * ms  # the profiler's span: the whole capture
    t.op("aten::empty_strided", 10, 3000 * ms, 1)
    t.runtime("cudaDeviceGetStreamPriorityRange", 20, 2990 * ms)
    t.op("aten::cudnn_convolution", 3100 * ms, 1000 * ms, 2)
    t.runtime("cudaStreamCreateWithFlags", 3110 * ms, 73 * ms)
    t.runtime("cudaMalloc", 3190 * ms, 2 * ms)
    t.runtime("cudaFree", 3200 * ms, 600 * ms)
    t.kernel("ampere_sgemm_32x32_sliced1x4_tn", 4106 * ms, 1 * ms, ext=2, launch_ts=3805 * ms, launch_dur=300 * ms)
    for i in range(10):
        t0 = 4108 * ms + 100 * i
        t.op("aten::addmm", t0, 40, 10 + i)
        t.kernel(
            "void at::native::vectorized_elementwise_kernel<4>()",
            t0 + 30,
            50,
            ext=10 + i,
            launch_ts=t0 + 15,
            launch_dur=10,
        )
    return t


def test_a_warm_up_in_the_capture_is_start_up_not_dispatch():
    """Today's code counted the context's creation, cuDNN's start and the first launch's module load as
    dispatch: xla.off and kernels.launch-bound each claimed 90% of this step, critical (92% on the
    public trace). Here 4.0 s of
    the 4.1 s capture is start-up: capture.warmup is the top problem, its what-if the step after the
    warm-up; no fix of the program's host time claims any of it; the cudaMalloc/cudaFree of the warm-up
    are the caching allocator filling its cache, not steps.allocator's."""
    m = warmup_capture().measures()
    f = checks(m)
    for change in DISPATCH_FIXES:
        p = m.predict(change)
        # at most the host's 4 ms outside the start-up (Python after the first convolution, the measured
        # iteration's dispatch), of a 4.1 s capture
        assert p is None or p.saving_ps < 4e9, change
    assert f["xla.off"].status not in (WARNING, CRITICAL)
    assert f["kernels.launch-bound"].status not in (WARNING, CRITICAL)
    w = f["capture.warmup"]
    assert w.status == CRITICAL and w.whatif is not None and w.whatif["change"] == "warmup"
    rows = {r["call"]: r["ms_per_step"] for r in w.details}
    assert rows["cudaDeviceGetStreamPriorityRange"] == pytest.approx(2990)
    assert rows["cudaLaunchKernel"] == pytest.approx(300)
    assert rows["cudaFree"] == pytest.approx(600) and rows["cudaMalloc"] == pytest.approx(2)
    assert rows["cudaStreamCreateWithFlags"] == pytest.approx(73)
    assert w.saving_ms > 3900
    assert f["steps.allocator"].status == PASS


def range_profiled(records: int = 5) -> Trace:
    """The same benchmark under CUPTI's range profiler (HTA tests/data/cupti_profiler): 77
    `cuda_profiler_range` records on a span of their own, no kernel, the 77 launches 1.5-1220 ms each
    (each replaying its kernel), 1,556 cudaFuncSetAttribute. Here 5 launches of 60 ms in ops."""
    t = Trace([A100])
    t.ev[0]["dur"] = 61_000 * records + 1000  # the profiler's span: the whole capture
    for i in range(records):
        t0 = 100 + 61_000 * i
        t.op("aten::cudnn_convolution", t0, 60_500, i + 1)
        t.runtime("cudaFuncSetAttribute", t0 + 5, 1)
        t.ev.append(
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": t0 + 10,
             "dur": 60_000, "args": {"correlation": 1000 + i, "External id": i + 1}}
        )  # fmt: skip
        t.ev.append(
            {"ph": "X", "cat": "cuda_profiler_range", "name": "ampere_sgemm_32x32_sliced1x4_tn", "pid": 0, "tid": 0,
             "ts": 100 + 1000 * i, "dur": 1000, "args": {"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": 9}}
        )  # fmt: skip
    return t


def test_a_range_profiled_capture_claims_no_saving():
    """Today's code read the range profiler's replays as launches CUDA graphs would speed up: graph and
    reduce-overhead "saved" 99.9% of this step (compile 57% of the public trace's, critical). Here capture.range-profiler says what the capture is, the
    replays' 300 ms, and every what-if is withheld; capture.no-gpu says why no kernel is recorded."""
    t = range_profiled()
    m = t.measures()
    f = checks(m)
    assert not [x for x in f.values() if x.status in (WARNING, CRITICAL) and x.saving_ms]
    for change in (*DISPATCH_FIXES, "syncs", "host"):
        p = m.predict(change)
        assert p is None or (p.withheld and p.saving_ps == 0), change
    assert m.range_records == 5
    # the Python reader flags the records as the native one does
    doc = {"schemaVersion": 1, "deviceProperties": t.props, "traceEvents": t.ev}
    assert compare(json.dumps(doc).encode()) == "native"
    r = f["capture.range-profiler"]
    assert r.status == WARNING and r.metric("replay_ms_per_step") == pytest.approx(300.0)
    assert (
        "range profiler" in f["capture.no-gpu"].summary
        and "could not load CUPTI" not in f["capture.no-gpu"].recommendation
    )
    # a timing capture: nothing to say
    assert checks(no_caching_allocator(caching=True).measures())["capture.range-profiler"].status == NOT_APPLICABLE
    assert checks(fp8_trainer().measures())["capture.range-profiler"].status == PASS


def test_hip_synchronous_copies_are_syncs():
    """PyTorch on ROCm copies with `hipMemcpyWithStream` and waits (SGLang's MI300X prefill: one waits
    493 ms; OWLv2 on an MI300X: 80 a step); today's code took it for an asynchronous launch. Here each
    step's `.item()` copies after a 500 µs GEMM and waits 450 µs for it."""
    t = Trace([MI300X])
    for s in range(4):
        t0 = 100 + s * 1000
        t.step(s, t0, 1000)
        t.kernel(TENSILE_BF16, t0 + 20, 500, launch="hipExtModuleLaunchKernel", launch_ts=t0 + 5)
        t.op("aten::_local_scalar_dense", t0 + 60, 480, 10 + s)
        t.kernel("Memcpy DtoH", t0 + 525, 5, launch="hipMemcpyWithStream", launch_ts=t0 + 70, launch_dur=465)
    f = checks(t.measures())
    s = f["steps.syncs"]
    assert s.metric("syncs_per_step") == 1 and s.metric("sync_wait_ms") == pytest.approx(0.455, abs=0.01)


def test_hip_kernels_without_launch_calls_are_told_so():
    """HIP launches are paired (item 5), so a ROCm trace whose kernels have no launch call is told
    that the launches were not captured; today's code said it could not pair HIP launches yet."""
    t = Trace([MI300X])
    for s in range(3):
        t0 = 100 + s * 1000
        t.step(s, t0, 1000)
        t.kernel(TENSILE_BF16, t0 + 20, 500, launch="hipExtModuleLaunchKernel")
    t.ev = [e for e in t.ev if e.get("cat") != "cuda_runtime"]
    f = checks(t.measures())["capture.no-runtime"]
    assert f.status == WARNING and "HIP" not in (f.reason or "")


def test_host_only_memory_records_are_said_so():
    """The MI300X ResNet-18 without the caching allocator has 210 memory records, all of the host's;
    capture.memory's title said "profile_memory off" (today). Here 3 host records beside GPU kernels."""
    t = Trace([MI300X])
    for s in range(3):
        t0 = 100 + s * 1000
        t.step(s, t0, 1000)
        t.kernel(TENSILE_BF16, t0 + 20, 500, launch="hipExtModuleLaunchKernel")
        t.ev.append(
            {"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": t0 + 30, "s": "t",
             "args": {"Device Type": 0, "Device Id": -1, "Addr": 1, "Bytes": 1024, "Total Allocated": 1024,
                      "Total Reserved": 4096}}
        )  # fmt: skip
    f = checks(t.measures())["capture.memory"]
    assert f.title == "No GPU memory records: 3 memory records, all of the host's"
    assert "profile_memory=True" not in (f.snippet or "")


# -- item 3: what a kernel runs on -------------------------------------------------------------------------


def fp8_trainer() -> Trace:
    """DeepSeek's H800 training trace (deepseek-ai/profile-data train.json): FP8 grouped GEMMs in
    `cutlass::device_kernel<dpsk::grouped_gemm::...fp8...GemmKernel>` (74.5 ms of 244 ms of kernels,
    no op claims them) and FlashAttention-3's backward (15.1 ms), bf16; here one of each a step,
    600 and 200 µs."""
    t = Trace([H800])
    for s in range(4):
        t0 = 100 + s * 1000
        t.step(s, t0, 1000)
        t.kernel(FP8_GROUPED_GEMM, t0 + 50, 600)
        t.kernel(FA3_BWD, t0 + 700, 200)
    return t


def test_an_fp8_trainer_is_not_told_to_use_tensor_cores_or_bf16():
    """Today's code read both kernels as "no Tensor Cores" (the FP8 GEMM as 32-bit): tensorcore.unused
    warned with TF32/bf16 advice on 75% of compute. The naming table says CUTLASS 3 GEMM and
    FlashAttention 3, both on Tensor Cores, the GEMM FP8: no Tensor Core or precision finding."""
    m = fp8_trainer().measures()
    g = m.gpus[0]
    assert g.matmul_ps() == pytest.approx(4 * 800e6)
    assert g.matmul_ps(tc=True) == g.matmul_ps() and g.matmul_fp8_ps() == pytest.approx(4 * 600e6)
    f = checks(m)
    assert f["tensorcore.unused"].status == PASS and f["tensorcore.unused"].saving_ms is None
    assert f["precision.mixed-off"].status == PASS  # FP8 is reduced precision: never advised back to bf16
    assert f["precision.fp16-no-tensorcore"].status == PASS
    rows = g.kernel_rows(g.matmul.eligible)
    assert {r.kernel[:30]: r.precision for r in rows} == {FP8_GROUPED_GEMM[:30]: "FP8", FA3_BWD[:30]: "16-bit"}
    # nor re-timed as if it ran in fp32: the bf16 what-if has nothing to re-time (before, the FP8 GEMM was
    # read as TF32 and re-timed to bf16: the H800 DeepEP trainer 9.2 ms a step "faster" in bf16)
    assert m.predict("bf16") is None and m.predict("tf32") is None


def test_fp8_by_the_ops_input_types():
    """An op whose recorded inputs are FP8 (`c10::Float8_e4m3fn`, as torch._scaled_mm records them)
    makes its kernel FP8 whatever the kernel's name says."""
    t = Trace([H800])
    for s in range(3):
        t0 = 100 + s * 1000
        t.step(s, t0, 1000)
        t.op("aten::_scaled_mm", t0 + 10, 50, ext=10 + s, types=["c10::Float8_e4m3fn", "c10::Float8_e4m3fn"])
        t.kernel(
            "sm90_xmma_gemm_e4m3e4m3_bf16f32_f32_tn_n_tilesize128x128x128_warpgroupsize1x1x1", t0 + 60, 500, ext=10 + s
        )
    ev = t.measures().gpus[0].kernels
    assert ((ev.flags & Flag.FP8) != 0).all() and ((ev.flags & Flag.TENSOR_CORE) != 0).all()


def test_blackwell_mx_gemms_run_on_tensor_cores():
    """vLLM serving gpt-oss on a B200 (AMD-AGI/TraceLens tests/traces/b200/eager_trace.json.gz):
    trtllm-gen's `bmm_MxE4m3_MxE2m1MxE4m3_...sm100f` MoE GEMMs, 36 a step, 3.18 ms; the kernels table
    said `tensor_cores: false`. They are Tensor Core GEMMs in MX-FP8/FP4."""
    t = Trace([B200])
    for s in range(3):
        t0 = 100 + s * 1000
        t.step(s, t0, 1000)
        t.kernel(MXFP8_BMM, t0 + 50, 300)
    m = t.measures()
    (row,) = tables.build(m, "kernels").rows
    assert row["tensor_cores"] is True
    g = m.gpus[0]
    assert g.matmul.eligible.all() and g.matmul.fp8.all()


def test_a_large_unidentified_share_withholds_the_verdict():
    """A GEMM whose name no library's convention explains (here `my_gemm_kernel`, 600 of 800 µs of
    matmul time, 75%): today's code read it as "no Tensor Cores" and warned. Its unit is unknown: the
    check says so and gives no verdict; with the known kernel alone it judges."""
    t = Trace([H800])
    for s in range(4):
        t0 = 100 + s * 1000
        t.step(s, t0, 1000)
        t.kernel("void my_gemm_kernel<128>(float*)", t0 + 50, 600)
        t.kernel("nvjet_tst_128x256_64x4_2x1_v_bz_TNT", t0 + 700, 200)
    f = checks(t.measures())
    assert f["tensorcore.unused"].status == NOT_APPLICABLE
    assert "75.0% of matmul/convolution time" in (f["tensorcore.unused"].reason or "")
    assert "my_gemm_kernel" in (f["tensorcore.unused"].reason or "")


def test_an_unidentified_share_below_the_threshold_still_judges():
    s = Sim(spec="H100")  # 100 of 800 µs unknown (12.5%): judged on the rest, the fp32 SIMT GEMM warns
    s.steps(
        4,
        1000,
        lambda i, t: (
            s.kernel(t, 100, name="my_gemm_kernel", op="a/MatMul:MatMul"),
            s.kernel(t + 100, 500, name="volta_sgemm_128x64_nn", op="b/MatMul:MatMul", shape="(float[64,64])"),
            s.kernel(
                t + 600, 200, name="nvjet_tst_128x256_64x4_2x1_v_bz_TNT", op="c/MatMul:MatMul", shape="(half[64])"
            ),
        ),
    )
    f = s.run("tensorcore.unused")
    assert f.status == WARNING and f.metric("unidentified_pct") == pytest.approx(12.5)
    assert f.metric("no_tensor_core_pct") == pytest.approx(62.5)


def test_miopen_subtensor_op_is_not_a_tensor_core_kernel():
    """MIOpen's `SubTensorOpWithScalar1d` (an element-wise kernel; 3.5 ms in the MI300X DDP ResNet-18
    trace of AMD-AGI/TraceLens) held "tensorop" and was flagged on Tensor Cores."""
    s = Sim(spec="H100")
    s.steps(2, 1000, lambda i, t: s.kernel(t, 100, name="SubTensorOpWithScalar1d"))
    ev = read_profile_bytes(s.w.to_bytes(), "m.xplane.pb", "host0").device_events(0)
    assert len(ev) == 2 and not ((ev.flags & Flag.TENSOR_CORE) != 0).any()


# -- item 4: communication by what it does ----------------------------------------------------------------


def test_deepep_and_symmetric_memory_kernels_are_collectives():
    """DeepSeek's H800 trace runs DeepEP's `dpsk::ep::internode::dispatch/combine` on a stream of
    their own while the GEMMs run (113 ms of a 129.5 ms step, 96% of it under compute; today: 0.00 ms
    of collectives). Here: per 1000 µs step a 400 µs dispatch beside a 300 µs GEMM (300 µs of it
    overlapped, 75%), then a 100 µs combine alone. And the B200 vLLM trace's
    `multimem_all_reduce_kernel` (73 calls, 2.12 ms)."""
    t = Trace([H800])
    for s in range(4):
        t0 = 100 + s * 1000
        t.step(s, t0, 1000)
        t.kernel(DEEPEP_DISPATCH, t0 + 50, 400, stream=20)
        t.kernel(FP8_GROUPED_GEMM, t0 + 150, 300, stream=7)
        t.kernel(DEEPEP_COMBINE, t0 + 500, 100, stream=20)
        t.kernel(MULTIMEM, t0 + 650, 50, stream=21)
    m = t.measures()
    a = m.analysis.summary()
    assert a["breakdown_ms"]["device_collectives"] == pytest.approx(4 * (100 + 100 + 50) / 1000 / 4, rel=1e-6)
    (gpu,) = a["headline"]["per_gpu"]
    assert gpu["comm_overlap_pct"] == pytest.approx(100 * 300 / 550)


# -- item 5: ROCm and JAX as they are ---------------------------------------------------------------------


def rocm_trace(device: int, launch: str) -> Trace:
    """SGLang on an MI300X with one visible GPU (AMD-AGI/TraceLens sglang_Qwen3-8B_prefilldecode):
    deviceProperties lists GPU 0 only, every kernel says device 9; launches by `hipLaunchKernel` and
    `hipExtModuleLaunchKernel` (380 and 145 of them) with the kernels' correlation ids. Here each
    step's GEMM is launched 30 µs after the previous kernel ends: 30 µs of launch wait a step."""
    t = Trace([MI300X], roctracer_version=4.1)
    for s in range(4):
        t0 = 100 + s * 1000
        t.step(s, t0, 1000)
        t.kernel(TENSILE_BF16, t0 + 20, 400, device=device, launch=launch, launch_ts=t0 + 5)
        t.kernel(TENSILE_BF16, t0 + 450, 400, device=device, launch=launch, launch_ts=t0 + 440)
    return t


def test_rocm_device_ids_map_to_the_visible_gpu():
    """Today: an idle "AMD Instinct MI300X" GPU 0 and a busy nameless GPU 9, the precision checks
    not applicable and multigpu.idle-gpus counting two GPUs."""
    m = rocm_trace(9, "hipExtModuleLaunchKernel").measures()
    assert [d.name for d in m.p.devices] == ["AMD Instinct MI300X"]
    assert [g.id for g in m.gpus] == [0] and m.gpus[0].device.matrix_cores
    assert any("GPU 9 is GPU 0" in w for w in m.p.warnings)
    f = checks(m)
    assert f["multigpu.idle-gpus"].status in (PASS, NOT_APPLICABLE)
    assert f["precision.mixed-off"].status != NOT_APPLICABLE


@pytest.mark.parametrize("launch", ["hipLaunchKernel", "hipExtModuleLaunchKernel", "hipModuleLaunchKernel"])
def test_hip_launches_pair_with_their_kernels(launch):
    """Today no HIP call paired with its kernel: launch wait 0 and kernels.launch-bound not applicable
    on every AMD trace. Here the second GEMM of each step waits 30 µs for its launch (440 + 4 µs call,
    kernel at 450, the first ending at 420)."""
    m = rocm_trace(2, launch).measures()
    assert len(m.launch_corr) == 8
    assert m.analysis.summary()["breakdown_ms"]["kernel_launch_wait"] > 0
    assert checks(m)["kernels.launch-bound"].status != NOT_APPLICABLE


def test_jax_from_its_threads_without_jax_metadata():
    """AMD-AGI/TraceLens's JAX captures on MI300X (jax08_gemm, jax_conv_minimal_legacy) have no `jax*`
    stats in their metadata plane, but JAX's threads (`py_xla_execute/<id>`: 8 of them in the legacy
    capture) and the PjRt C API's `PJRT_LoadedExecutable_Execute` on the python thread: JAX, never
    TensorFlow's advice (today: unknown, read with the default TensorFlow/Keras texts)."""
    w = ProfileWriter("tw003")
    py = w.thread("python", 1)
    ex = w.thread("py_xla_execute/-2231402715538937371", 2)
    gpu = w.gpu(0, GPU_SPECS["MI250"])
    s = gpu.stream(7, "Compute")
    for i in range(3):
        t = 1000 + i * 1000
        py.event("PJRT_LoadedExecutable_Execute", t, 100)
        s.kernel("loop_add_fusion", t + 200, 300, launch=ex)
    p = read_profile_bytes(w.to_bytes(), "j.xplane.pb", "tw003")
    assert p.framework == JAX


def test_xla_copy_events_are_copies():
    """XLA on ROCm names device copies `CopyDeviceToDevice` on a compute stream (the JAX MI300X gemm
    capture: 0.89 ms of 4.5 ms on the GPU); today they were kernels, and a GPU doing only copies was
    "active"."""
    s = Sim(spec="H100")
    s.steps(
        3, 1000, lambda i, t: (s.kernel(t, 300, name="CopyDeviceToDevice"), s.kernel(t + 300, 200, name="nvjet_tst_x"))
    )
    p = read_profile_bytes(s.w.to_bytes(), "c.xplane.pb", "host0")
    ev = p.device_events(0)
    names = [p.names[i] for i in ev.name.tolist()]
    kinds = {n: int(k) for n, k in zip(names, ev.kind.tolist())}
    assert kinds["CopyDeviceToDevice"] == int(Kind.MEMCPY_D2D) and kinds["nvjet_tst_x"] == int(Kind.KERNEL)


def test_sync_evidence_names_the_step_by_its_number():
    """The H100 vision traces of AMD-AGI/TraceLens profile step 6 (`ProfilerStep#6`); steps.syncs'
    evidence said "step 0" there, the index of the step in the graph. Here steps 6 and 7, each
    waiting 300 µs in cudaStreamSynchronize for its GEMM."""
    t = Trace([H800])
    for s, n in enumerate((6, 7)):
        t0 = 100 + s * 1000
        t.step(n, t0, 1000)
        t.op("aten::mm", t0 + 10, 40, ext=20 + s, types=["float", "float"])
        t.kernel("nvjet_sss_128x128_64x4_2x1_v_bz_NNN", t0 + 60, 500, ext=20 + s)
        t.runtime("cudaStreamSynchronize", t0 + 260, 310)
    f = run_check(t.measures().analysis, "steps.syncs", whatif=True)
    assert f.evidence and all(e.label.startswith(("step 6:", "step 7:")) for e in f.evidence)
