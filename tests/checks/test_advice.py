"""Advice an expert signs: it follows the GPU's architecture and vendor, the framework's words, and
what the run already does. Each case is a small Kineto trace written here (the fields PyTorch's
profiler writes: `deviceProperties` as Kineto's DeviceProperties.cpp emits them for CUDA and for
ROCm, `ProfilerStep#N` markers, ATen ops with their input types, runtime launches and kernels paired
by correlation id), read by the real reader and judged by every check."""

from __future__ import annotations

import gzip
import json
import os
import re
import statistics
from pathlib import Path

import pytest
from support.kineto_traces import A100, H100, MI250, SGEMM, T4, TENSILE, V100, cuda_props, kineto
from support.sim import Sim

from tb_gpu_advisor.checks import run_checks
from tb_gpu_advisor.checks.findings import CRITICAL, PASS, WARNING
from tb_gpu_advisor.formats.discovery import PYTORCH_TRACE, HostFile, discover
from tb_gpu_advisor.formats.kineto.native import read_pytorch_trace_bytes
from tb_gpu_advisor.measures import Measures
from tb_gpu_advisor.model.analysis import analyse
from tb_gpu_advisor.report import overview, worst_finding
from tb_gpu_advisor.report.engine import analyse_file

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REAL = os.path.join(ROOT, "tests", "data", "pytorch")  # the V100 ResNet-50 traces (see its README)


def report_of(data: bytes, tmp_path, name: str = "job") -> dict:
    path = tmp_path / f"{name}.pt.trace.json"
    path.write_bytes(data)
    f = HostFile(run="run", host=name, path=str(path), size=len(data), mtime=None, kind=PYTORCH_TRACE)
    _, rep = analyse_file(f)
    assert not rep["errors"]
    return rep


def by_id(rep: dict) -> dict[str, dict]:
    return {c["id"]: c for c in rep["checks"]}


def text(c: dict) -> str:
    return " ".join(str(c.get(k) or "") for k in ("summary", "recommendation", "snippet", "reason", "saving_basis"))


# -- precision follows the architecture -------------------------------------------------------------


@pytest.mark.parametrize("props, arch", [(V100, "NVIDIA Volta"), (T4, "NVIDIA Turing")])
def test_fp16_with_grad_scaler_before_ampere(props, arch, tmp_path):
    """Volta and Turing have fp16 Tensor Cores but no bf16 ones: fp16 autocast with a GradScaler,
    never bf16 or TF32, and the advice says which GPU it read."""
    c = by_id(report_of(kineto([props]), tmp_path))
    mixed = c["precision.mixed-off"]
    assert mixed["status"] == "warning"
    m = {x["name"]: x["value"] for x in mixed["metrics"]}
    assert m["fp16_pct"] == 0.0 and m["architecture"] == arch and m["bf16"] == "no"
    # four 400 µs fp32 GEMMs a step: 1.6 ms; the what-if re-times them in fp16 (no bf16 here), and as
    # the host's 1.8 ms a step set the step, that saves nothing (the casts add a little)
    assert m["fp32_eligible_ms_per_step"] == pytest.approx(1.6)
    w = mixed["whatif"]
    assert w["change"] == "fp16" and "fp16 on the " in w["basis"] and w["bound"] == "host"
    assert mixed["saving_ms"] == w["saving_ms"] == 0.0
    assert "dtype=torch.float16" in mixed["snippet"] and "GradScaler" in mixed["snippet"]
    assert "bfloat16" not in mixed["snippet"] and "bfloat16" not in mixed["recommendation"]
    assert "no bf16 Tensor Cores" in mixed["recommendation"]
    cc = f"{props['computeMajor']}.{props['computeMinor']}"
    assert f"{props['name']} ({arch}, compute capability {cc})" in mixed["recommendation"]
    unused = c["tensorcore.unused"]
    assert unused["status"] in ("warning", "critical")
    assert "float16" in unused["recommendation"] and "GradScaler" in unused["recommendation"]
    assert "allow_tf32" not in unused["recommendation"] and "bfloat16" not in unused["recommendation"]


@pytest.mark.parametrize("props, arch", [(A100, "NVIDIA Ampere"), (H100, "NVIDIA Hopper")])
def test_bf16_from_ampere(props, arch, tmp_path):
    c = by_id(report_of(kineto([props]), tmp_path))
    mixed = c["precision.mixed-off"]
    m = {x["name"]: x["value"] for x in mixed["metrics"]}
    assert mixed["status"] == "warning" and m["architecture"] == arch and m["bf16"] == "yes"
    assert "dtype=torch.bfloat16" in mixed["snippet"] and "GradScaler" not in mixed["snippet"]
    assert "needs no loss scaling" in mixed["recommendation"] and "TF32" in mixed["recommendation"]
    assert f"({arch}, compute capability {props['computeMajor']}.{props['computeMinor']})" in mixed["recommendation"]
    assert "allow_tf32" in c["tensorcore.unused"]["recommendation"]


def test_sixteen_bit_run_passes(tmp_path):
    """The same job with half inputs: mixed precision is on, and the 16-bit headline is judged."""
    rep = report_of(kineto([A100], kernel="ampere_h16816gemm_128x128_nn", dtype="c10::Half"), tmp_path)
    c = by_id(rep)
    assert c["precision.mixed-off"]["status"] == "pass"
    assert c["precision.mixed-off"]["metrics"][0]["value"] == 100.0
    assert rep["headline"]["fp16_compute_pct"] == 100.0 and rep["headline"]["judged"]["fp16_compute_pct"] == "good"


# -- AMD: AMD's words or none -----------------------------------------------------------------------

# NVIDIA's words. PyTorch's own API keeps `cuda` names in ROCm builds (`device="cuda"`,
# `ProfilerActivity.CUDA`): those are PyTorch's terms, and right on an AMD GPU.
CUDA_TERMS = (
    "Tensor Core",
    "TF32",
    "tf32",
    "cuDNN",
    "cuBLAS",
    "CUPTI",
    "compute capability",
    "CUDA graph",
    "CUDAGraph",
    "CUDA API",
    "CUDA toolkit",
    "NVIDIA",
    "Volta",
    "Ampere",
    "GradScaler",
)


def test_mi250_gets_no_cuda_terms(tmp_path):
    """An MI250 trace from ROCm (`computeMajor: 9`, HIP launches, Tensile GEMMs) is an AMD CDNA2
    GPU, not CUDA compute capability 9: no finding speaks of Tensor Cores, TF32 or CUDA; mixed
    precision is advised in AMD's terms (matrix cores, MFMA), with bf16."""
    p = read_pytorch_trace_bytes(kineto([MI250], kernel=TENSILE, launch="hipLaunchKernel"), "t.pt.trace.json", "h")
    d = p.devices[0]
    assert d.vendor == "AMD" and d.gfx == "gfx90a" and d.compute_capability is None
    assert d.architecture == "AMD CDNA2 (gfx90a)" and not d.has_tensor_cores and d.matrix_cores
    findings, errors = run_checks(Measures(analyse(p)))
    assert not errors
    rep = report_of(kineto([MI250], kernel=TENSILE, launch="hipLaunchKernel"), tmp_path)
    assert rep["devices"][0]["architecture"] == "AMD CDNA2 (gfx90a)" and rep["devices"][0]["compute_capability"] is None
    c = by_id(rep)
    for f in rep["checks"]:
        # a not-applicable finding advises nothing: its reason is what it says
        words = f["reason"] if f["status"] == "not-applicable" else text(f) + f["title"]
        assert not [t for t in CUDA_TERMS if t in words], (f["id"], words)
        assert "CUDA" not in words.replace("ProfilerActivity.CUDA", ""), (f["id"], words)
    for check in ("tensorcore.unused", "tensorcore.dims", "precision.fp16-no-tensorcore"):
        assert c[check]["status"] == "not-applicable" and "MFMA" in c[check]["reason"]
        assert "AMD Instinct MI250X / MI250 (AMD CDNA2 (gfx90a))" in c[check]["reason"]
    mixed = c["precision.mixed-off"]
    assert mixed["status"] == "warning" and "matrix cores (MFMA)" in mixed["recommendation"]
    assert "dtype=torch.bfloat16" in mixed["snippet"]
    assert "AMD Instinct MI250X / MI250 (AMD CDNA2 (gfx90a))" in mixed["recommendation"]


def test_amd_read_from_name_or_hip_calls_alone():
    """Older ROCm traces without ROCm's fields: the name, or else the HIP calls, tell the vendor."""
    bare = {k: v for k, v in MI250.items() if k not in ("maxSharedMemoryPerMultiProcessor", "warpSize")}
    p = read_pytorch_trace_bytes(kineto([bare]), "t.pt.trace.json", "h")
    assert p.devices[0].vendor == "AMD" and p.devices[0].gfx == "gfx90a"
    nameless = {**bare, "name": ""}
    p = read_pytorch_trace_bytes(kineto([nameless], launch="hipExtModuleLaunchKernel"), "t.pt.trace.json", "h")
    assert p.devices[0].vendor == "AMD" and p.devices[0].compute_capability is None
    p = read_pytorch_trace_bytes(
        kineto([{**nameless, "gcnArchName": "gfx942:sramecc+:xnack-"}]), "t.pt.trace.json", "h"
    )
    assert p.devices[0].architecture == "AMD CDNA3 (gfx942)"
    # and a CUDA trace stays NVIDIA with its compute capability
    p = read_pytorch_trace_bytes(kineto([V100]), "t.pt.trace.json", "h")
    assert p.devices[0].vendor == "NVIDIA" and p.devices[0].compute_capability == (7, 0)


def fp32_matmuls(spec: str) -> Sim:
    """Four steps of one 600 µs fp32 MatMul kernel each, on a GPU of GPU_SPECS."""
    s = Sim(spec=spec)
    s.steps(
        4,
        1000,
        lambda i, t: s.kernel(t + 100, 600, name=SGEMM, op="dense/MatMul:MatMul", shape="(float[64,64];float[64,64])"),
    )
    return s


def test_tensorflow_advice_names_the_architecture_it_read():
    """TensorFlow: `mixed_float16` on both, `mixed_bfloat16` offered only where bf16 runs on Tensor
    Cores, and each says which GPU it read (the XSpace plane's name and compute capability)."""
    recs = {}
    for spec in ("V100", "A100"):
        f = fp32_matmuls(spec).run("precision.mixed-off")
        assert f.status == WARNING and f.metric("fp16_pct") == 0.0
        assert "mixed_float16" in f.snippet and "tensorflow.org" in f.link
        recs[spec] = f.recommendation
    assert "Tesla V100-SXM2-16GB (NVIDIA Volta, compute capability 7.0)" in recs["V100"]
    assert "mixed_bfloat16" not in recs["V100"]
    assert "NVIDIA A100-SXM4-40GB (NVIDIA Ampere, compute capability 8.0)" in recs["A100"]
    assert "mixed_bfloat16" in recs["A100"]


def test_amd_in_an_xspace_profile():
    """A TensorFlow ROCm profile: `device_vendor` AMD and compute capability 9.0 (gfx90a's
    generation): an AMD CDNA2 GPU, no Tensor Core checks, mixed precision in AMD's terms."""
    s = Sim(spec="MI250")
    s.steps(
        4,
        1000,
        lambda i, t: s.kernel(
            t + 100, 600, name=TENSILE, op="dense/MatMul:MatMul", shape="(float[64,64];float[64,64])"
        ),
    )
    a = s.analysis()
    d = a.profile.devices[0]
    assert (d.vendor, d.gfx, d.compute_capability, d.architecture) == ("AMD", "gfx90a", None, "AMD CDNA2 (gfx90a)")
    assert s.run("tensorcore.unused").status == "not-applicable"
    f = s.run("precision.mixed-off")
    assert f.status == WARNING and "matrix cores (MFMA)" in f.recommendation and "Tensor Core" not in f.recommendation
    assert f.saving_basis == "32-bit matmul/conv kernels running 3x faster in 16-bit on matrix cores"


# -- the GPUs the job used ----------------------------------------------------------------------------


def test_single_gpu_pytorch_job_is_not_told_other_gpus_idle(tmp_path):
    """deviceProperties lists the machine's four GPUs; the process used one: no idle-GPU warning.
    A DataParallel job using two of the four with events on both: both counted, none idle."""
    four = [cuda_props(i, "Tesla V100-SXM2-16GB", (7, 0), 80) for i in range(4)]
    c = by_id(report_of(kineto(four), tmp_path, "one"))["multigpu.idle-gpus"]
    assert c["status"] == "not-applicable"
    assert "every GPU of the machine (4), and this process used 1" in c["reason"]
    c = by_id(report_of(kineto(four, devices=(0, 1)), tmp_path, "two"))["multigpu.idle-gpus"]
    assert c["status"] == PASS and c["summary"] == "All 2 GPUs run kernels."
    # the real single-GPU V100 trace (4 GPUs in its deviceProperties, work on GPU 0 only)
    found, _ = discover(REAL)
    _, rep = analyse_file(found[0])
    c = by_id(rep)["multigpu.idle-gpus"]
    assert c["status"] == "not-applicable" and "(4), and this process used 1" in c["reason"]


def test_xspace_idle_gpu_still_warns():
    """An XSpace host plane set is the job's own: a GPU with no events there is idle."""
    s = Sim(gpus=2)
    s.steps(4, 1000, lambda i, t: s.kernel(t + 100, 600))
    f = s.run("multigpu.idle-gpus")
    assert f.status == WARNING and f.metric("no_compute") == 1


# -- what the run already does ------------------------------------------------------------------------


def test_dataloader_with_workers_is_not_told_to_add_them(tmp_path):
    """A DataLoader with workers (`_MultiProcessingDataLoaderIter`) that still makes the step wait:
    no advice to load in worker processes; without workers, that advice."""
    c = by_id(report_of(kineto([A100], loader="_MultiProcessingDataLoaderIter", loader_us=1000), tmp_path, "w4"))
    ib = c["input.bound"]
    m = {x["name"]: x["value"] for x in ib["metrics"]}
    # each step waits 1 ms for its batch, of a step of about 2.8 ms
    assert ib["status"] == CRITICAL and m["input_ms_per_step"] == pytest.approx(1.0, rel=1e-3) and m["input_pct"] > 34
    assert "already loads in worker processes" in ib["recommendation"]
    assert "DataLoader(..., num_workers=" not in ib["recommendation"] and "num_workers=" not in (ib["snippet"] or "")
    c = by_id(report_of(kineto([A100], loader="_SingleProcessDataLoaderIter", loader_us=1000), tmp_path, "w0"))
    assert (
        c["input.bound"]["status"] == CRITICAL
        and "DataLoader(..., num_workers=N)" in c["input.bound"]["recommendation"]
    )
    # the real pair: num_workers=0 told to add workers, num_workers=4 not
    found, _ = discover(REAL)
    for f in (f for f in found if f.run.startswith("resnet50_")):  # the folder also holds two_ranks_of_128
        ib = by_id(analyse_file(f)[1])["input.bound"]
        if "workers_0" in f.run:
            assert "DataLoader(..., num_workers=N)" in ib["recommendation"]
        else:
            assert "DataLoader(..., num_workers=" not in ib["recommendation"]
            assert "_MultiProcessingDataLoaderIter" in ib["recommendation"]


def tf_data_input_bound(stages: list[str]):
    s = Sim()
    res = s.w.thread("tf_data_iterator_resource/4", 4)

    def body(i, t):
        s.get_next(t, 300)
        for j, stage in enumerate(stages):
            res.event(stage, t + 10 * j, 280 - 20 * j)
        s.kernel(t + 350, 600)

    s.steps(4, 1000, body)
    return s.run("input.bound")


def test_tf_data_pipeline_with_prefetch_and_parallel_map_is_not_told_to_add_them():
    f = tf_data_input_bound(["Iterator::Root::Prefetch", "Iterator::Root::Prefetch::ParallelMapV2"])
    assert f.status == CRITICAL and f.metric("input_pct") == pytest.approx(30.0)
    assert "already has `prefetch`, a parallel `map`" in f.recommendation
    assert "prefetch(tf.data.AUTOTUNE)" not in f.recommendation and "num_parallel_calls" not in f.recommendation
    assert "`cache`" in f.recommendation and "interleave" in f.recommendation  # not in the trace: still advised
    assert "prefetch" not in f.snippet and "num_parallel_calls" not in f.snippet
    # a pipeline without them is told to add them
    f = tf_data_input_bound(["Iterator::Root::Map"])
    assert f.status == CRITICAL and "`prefetch` at the end" in f.recommendation and ".prefetch(" in f.snippet


# -- each framework's words and links -------------------------------------------------------------------


def test_pytorch_findings_speak_pytorch(tmp_path):
    rep = report_of(kineto([A100]), tmp_path)
    c = by_id(rep)
    x = c["xla.off"]
    assert x["status"] == "info" and x["title"] == "Eager mode: no torch.compile in the trace"
    assert x["link"] == "https://pytorch.org/docs/stable/torch.compiler.html"
    assert c["precision.mixed-off"]["link"] == "https://pytorch.org/docs/stable/amp.html"
    for f in rep["checks"]:
        assert "tensorflow.org" not in f["link"], f["id"]
        if f["status"] != "not-applicable":
            assert not re.search(r"\\bXLA\\b|tf\\.|Keras", f["title"] + f["summary"] + f["recommendation"]), f["id"]


def test_tensorflow_findings_keep_tensorflow_words():
    s = Sim()
    s.steps(4, 1000, lambda i, t: s.kernel(t + 100, 600))
    f = s.run("xla.off")
    assert f.title == "XLA off: no XLA in the profile" and f.link.startswith("https://www.tensorflow.org/guide/")


# -- the worst finding, and the 16-bit headline -----------------------------------------------------


def test_overview_and_picker_show_the_largest_saving_first_then_the_status():
    """Issue 41: the worst finding is the one that costs most. A warning saving 10 ms comes before a
    critical one saving 1 ms, and the run's row is that warning; at equal saving the critical one
    comes first; a capture note without a cost comes after both."""
    checks = [
        {"id": "steps.host-work", "status": WARNING, "title": "w", "saving_ms": 10.0},
        {"id": "ops.eager", "status": CRITICAL, "title": "c", "saving_ms": 1.0},
        {"id": "capture.shapes", "status": WARNING, "title": "n", "saving_ms": None},
        {"id": "x", "status": PASS, "title": "p", "saving_ms": None},
    ]
    assert worst_finding(checks)["id"] == "steps.host-work"
    (row,) = overview([{"run": "r", "host": "h", "checks": checks, "errors": [], "steps": None, "headline": None}])
    assert row["status"] == WARNING and row["check"] == "steps.host-work" and row["top_saving_ms"] == 10.0
    assert not row["note"] and not row["job"]
    tie = {"id": "kernels.small", "status": CRITICAL, "title": "t", "saving_ms": 10.0}
    assert worst_finding([checks[0], tie])["id"] == "kernels.small"
    assert worst_finding([checks[2], checks[1]])["id"] == "ops.eager"
    assert worst_finding([checks[2], checks[3]])["id"] == "capture.shapes" and worst_finding([checks[3]]) is None


def test_sixteen_bit_headline_not_judged_where_mixed_precision_does_not_apply(tmp_path):
    """No matmul/convolution kernels: precision.mixed-off does not apply, so the 16-bit share (0%)
    is shown but not judged bad."""
    data = kineto([A100], kernel="vectorized_elementwise_kernel")
    rep = report_of(data.replace(b'"aten::mm"', b'"aten::add"'), tmp_path)
    assert by_id(rep)["precision.mixed-off"]["status"] == "not-applicable"
    assert rep["headline"]["fp16_compute_pct"] == 0.0 and rep["headline"]["judged"]["fp16_compute_pct"] is None
    # the same with fp32 GEMMs: judged, and bad
    rep = report_of(kineto([A100]), tmp_path, "gemm")
    assert rep["headline"]["judged"]["fp16_compute_pct"] == "bad"


# -- host work and launches as the trace measures them ----------------------------------------------

LAUNCH = re.compile(r"^(cu|cuda)(LaunchKernel|LaunchCooperativeKernel|LaunchKernelEx|GraphLaunch|Memcpy|Memset)")


def test_host_work_names_copies_and_launches_are_quoted_as_measured():
    """On the real num_workers=4 trace: the host work is mostly `aten::to` (the input batch's
    blocking `.to(device)`: cudaMemcpyAsync then cudaStreamSynchronize), named as a copy, not Python;
    the launch-bound finding quotes the launch calls' median from the trace, not a 20-40 µs rule."""
    found = {f.host: f for f in discover(REAL)[0]}
    f = found["worker0.1623213129365"]
    _, rep = analyse_file(f)
    c = by_id(rep)
    hw = c["steps.host-work"]
    assert hw["title"].endswith("while the host works")
    assert "most of it in aten::to (a tensor copy, not Python" in hw["summary"]
    doc = json.loads(gzip.open(f.path).read())
    durs = [
        e["dur"]
        for e in doc["traceEvents"]
        if e.get("ph") == "X" and e.get("cat") == "Runtime" and LAUNCH.match(e["name"])
    ]
    lb = c["kernels.launch-bound"]
    assert f"A launch call takes {statistics.median(durs):.1f} µs (median of {len(durs)})" in lb["summary"]
    assert "20-40" not in lb["recommendation"] and "20–40" not in lb["recommendation"]


def test_partial_capture_names_each_gpus_step_time():
    """The partial 8-GPU capture (demo 17): GPUs 4 and 6 each in their own steps (19.87 and 21.31
    ms). input.bound's step is their mean, 20.59 ms; it names both, with the report's figures."""
    found, _ = discover(os.path.join(ROOT, "demo_logs"))
    (f,) = [x for x in found if x.run.startswith("17_multi_gpu_partial_capture")]
    a, rep = analyse_file(f)
    assert not a.shared_steps
    per = {g["device_id"]: g["mean_ms"] for g in rep["steps"]["per_gpu"]}
    assert per == {4: pytest.approx(19.87), 6: pytest.approx(21.31)}
    ib = by_id(rep)["input.bound"]
    assert (
        "of 20.59 ms per step), averaged over 2 GPUs (each in its own steps: GPU 4 19.87 ms, GPU 6 21.31 ms)"
        in (ib["summary"])
    )


def test_a_gpu_that_only_copies_is_still_reported(tmp_path):
    """A DataParallel-like job: GPU 0 computes, GPU 1 has only a copy in the trace. Both are the
    job's (they have events), so GPU 1 is reported; GPUs 2 and 3 (deviceProperties only) are not."""
    four = [cuda_props(i, "Tesla V100-SXM2-16GB", (7, 0), 80) for i in range(4)]
    doc = json.loads(kineto(four))
    copy = {"device": 1, "stream": 7, "correlation": 99999, "bytes": 1 << 20}
    doc["traceEvents"].append(
        {
            "ph": "X",
            "cat": "gpu_memcpy",
            "name": "Memcpy HtoD (Pageable -> Device)",
            "pid": 1,
            "tid": "stream 7",
            "ts": 500,
            "dur": 80,
            "args": copy,
        }
    )
    c = by_id(report_of(json.dumps(doc).encode(), tmp_path))["multigpu.idle-gpus"]
    m = {x["name"]: x["value"] for x in c["metrics"]}
    assert c["status"] == WARNING and (m["gpus"], m["no_compute"], m["copy_only_gpus"]) == (2, 1, 1)
    assert c["summary"].startswith("1 of 2 GPUs do no compute (GPU 1 only copies)")


def test_jax_precision_advice_follows_the_architecture():
    """JAX: float16 with loss scaling on a V100, bfloat16 (and TF32 for fp32 matmuls) on an A100."""
    from tb_gpu_advisor.checks.texts import mixed_precision_advice

    v100 = read_pytorch_trace_bytes(kineto([V100]), "t.pt.trace.json", "h").devices[0]
    a100 = read_pytorch_trace_bytes(kineto([A100]), "t.pt.trace.json", "h").devices[0]
    rec, snippet = mixed_precision_advice("jax", v100)
    assert "jnp.float16" in snippet and "loss scaling" in rec and "bfloat16" not in rec + snippet
    rec, snippet = mixed_precision_advice("jax", a100)
    assert "jnp.bfloat16" in snippet and "tensorfloat32" in rec and "jnp.float16" not in rec + snippet


def test_an_empty_last_step_on_an_amd_trace_is_dropped(tmp_path: Path) -> None:
    """The issue's AMD trace ended with a 0.049 ms `ProfilerStep` that launched nothing (the profiler
    stopped) and kept it, halving the mean. Here an MI250 trace of five 1.8 ms steps (four 450 µs
    `aten::mm` each, the last kernel ending 30 µs before the marker) with that empty marker after
    them: five steps, mean 1.8 ms; kept, the mean would be (5 x 1800 + 49) / 6 = 1508 µs."""
    doc = json.loads(kineto([MI250], kernel=TENSILE, launch="hipLaunchKernel"))
    last = max((e for e in doc["traceEvents"] if e["name"].startswith("ProfilerStep#")), key=lambda e: e["ts"])
    assert (last["name"], last["dur"]) == ("ProfilerStep#4", 1800)
    empty = {**last, "name": "ProfilerStep#5", "ts": last["ts"] + last["dur"] + 20, "dur": 49}
    doc["traceEvents"].append(empty)
    rep = report_of(json.dumps(doc).encode(), tmp_path)
    assert rep["devices"][0]["vendor"] == "AMD"
    assert rep["steps"]["count"] == 5 and rep["steps"]["mean_ms"] == pytest.approx(1.8)
    assert [r["step"] for r in rep["step_breakdown"]] == [0, 1, 2, 3, 4]
    assert rep["steps"]["min_ms"] == pytest.approx(1.8)  # no 0.049 ms step
