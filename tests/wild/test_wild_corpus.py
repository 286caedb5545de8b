"""The wild corpus (issue 50): public real GPU traces nobody on this project wrote, read as an expert
reads them and checked against independent tools. docs/corpus.md lists them (source, commit, licence,
GPU, framework, what each shows) and where each file comes from.

The traces are not in the repository: the tests find them at $TB_GPU_ADVISOR_WILD, else at
`<repo>/../shared/realdata/wild` (a logdir, one folder per run, as docs/corpus.md lays it out), and
skip where they are absent (CI today).

Each trace is checked twice:
- the numbers: the device time our reader keeps equals a count from the raw events (every kernel,
  copy and memset, and their union), and an independent tool's: Holistic Trace Analysis 0.5.0's
  kernel breakdown on the Kineto traces it reads (its communication is NCCL's only: the kernels it
  misses are counted by hand and named), the profile plugin's converter's kernel_stats on XSpace;
- the reading: what an expert reads in the trace, written at each run below with the numbers counted
  from the raw events (tests/wild/ computes them again), asserted on the report. A reading that needs a
  rule another part of issue 50 adds (item 2: host time inside ops; item 6: a job's waiting) is marked
  xfail with the item it waits for.
"""

from __future__ import annotations

import gzip
import json
import logging
import os
import re
import shutil
import tempfile
from collections import Counter
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

import pytest

from tb_gpu_advisor.formats.discovery import discover
from tb_gpu_advisor.model.profile import Kind
from tb_gpu_advisor.report.engine import analyse_file

ROOT = Path(__file__).resolve().parent.parent.parent
WILD = Path(os.environ.get("TB_GPU_ADVISOR_WILD") or ROOT.parent / "shared" / "realdata" / "wild")
pytestmark = pytest.mark.skipif(
    not WILD.is_dir(),
    reason=f"the wild corpus is not here ({WILD}); set TB_GPU_ADVISOR_WILD to a copy laid out as docs/corpus.md says",
)

DEVICE_CATS = ("kernel", "gpu_memcpy", "gpu_memset")


# -- reading a run -------------------------------------------------------------------------------------


@lru_cache(maxsize=None)
def analysed(run: str) -> tuple[tuple[Any, dict], ...]:
    """(measures, report) of each file of the run, in the order discovery lists them."""
    files, _ = discover(str(WILD / run))
    assert files, f"no profile in {WILD / run}"
    return tuple(analyse_file(f) for f in files)


def report(run: str, i: int = 0) -> dict:
    return analysed(run)[i][1]


def checks(run: str, i: int = 0) -> dict[str, dict]:
    return {c["id"]: c for c in report(run, i)["checks"]}


def problems(run: str, i: int = 0) -> list[dict]:
    """The run's warnings and criticals, costliest first (the report's order)."""
    return [c for c in report(run, i)["checks"] if c["status"] in ("warning", "critical")]


@lru_cache(maxsize=None)
def raw(path: str) -> tuple[dict, ...]:
    op: Callable = gzip.open if path.endswith(".gz") else open
    with op(path, "rt") as f:
        doc = json.load(f)
    return tuple(e for e in doc["traceEvents"] if isinstance(e, dict) and e.get("ph") == "X")


def kineto_files(run: str) -> list[str]:
    return sorted(str(p) for p in (WILD / run).glob("*.pt.trace.json*"))


def union_us(spans: list[tuple[float, float]]) -> float:
    total, end = 0.0, None
    start = 0.0
    for s, e in sorted(spans):
        if end is None or s > end:
            if end is not None:
                total += end - start
            start, end = s, e
        else:
            end = max(end, e)
    return total + (end - start if end is not None else 0.0)


def by_hand(path: str, name: str | re.Pattern | None = None, cat: str = "kernel") -> float:
    """Summed duration (ms) of the raw events of `cat` whose name matches."""
    pat = re.compile(name) if isinstance(name, str) else name
    return sum(e["dur"] for e in raw(path) if e.get("cat") == cat and (pat is None or pat.search(e["name"]))) / 1e3


def runtime(path: str, name: str) -> tuple[int, float]:
    """(calls, ms) of a runtime call, by hand."""
    ev = [e for e in raw(path) if e.get("cat") in ("cuda_runtime", "cuda_driver") and e["name"] == name]
    return len(ev), sum(e["dur"] for e in ev) / 1e3


def ours_device(m: Any, kinds: tuple[int, ...] | None = None) -> list[tuple[float, float, str, int]]:
    """Our reader's device events: (start µs, end µs, name, kind)."""
    p = m.p
    out = []
    for d in p.devices:
        ev = p.device_events(d.id)
        for s, dur, n, k in zip(ev.start_ps.tolist(), ev.dur_ps.tolist(), ev.name.tolist(), ev.kind.tolist()):
            if kinds is None or k in kinds:
                out.append((s / 1e6, (s + dur) / 1e6, p.names[n], k))
    return out


# -- the corpus ----------------------------------------------------------------------------------------------

KINETO = [
    "deepseek_h800_fp8_moe_train",
    "vllm_b200_mxfp4_moe_serving",
    "h100_owlv2_vision_infer",
    "h100_timesformer_video_infer",
    "h100_qwen_chat_infer",
    "a100_alexnet_warmup",
    "a100_alexnet_cupti_range",
    "a100_torchrec_rank3_of_8",
    "a100_torchrec_rank0_of_16",
    "a100_ddp_cnn_rank0_of_2",
    "v100_ddp_cnn_one_rank",
    "v100_ddp_mlp_rank1_of_2",
    "v100_torchrec_rank1_of_2",
    "hta_dlrm_v100_8ranks",
    "mi300x_ddp_resnet18_no_caching_allocator",
    "mi300x_ddp_resnet_act_checkpoint",
    "mi300x_sglang_qwen3_prefill",
    "mi300x_xdit_flux_serving",
    "mi300x_vllm_gptoss_graphs",
    "mi300x_owlv2_vision_infer",
    "mi250_minitoy_train",
    "mi210_gpu_only",
]
XSPACE = ["tf_v100_multi_gpu", "jax_mi300x_gemm", "jax_mi300x_attention", "jax_mi300x_conv_legacy"]

# GPU (the one that ran the work), framework
IDENTITY = {
    "deepseek_h800_fp8_moe_train": ("NVIDIA H800", "pytorch"),
    "vllm_b200_mxfp4_moe_serving": ("NVIDIA B200", "pytorch"),
    "h100_owlv2_vision_infer": ("NVIDIA H100 80GB HBM3", "pytorch"),
    "h100_timesformer_video_infer": ("NVIDIA H100 80GB HBM3", "pytorch"),
    "h100_qwen_chat_infer": ("NVIDIA H100 80GB HBM3", "pytorch"),
    "a100_alexnet_warmup": ("NVIDIA A100-PG509-200", "pytorch"),
    "a100_alexnet_cupti_range": (None, "pytorch"),  # no kernel recorded
    "a100_torchrec_rank3_of_8": ("NVIDIA A100-PG509-200", "pytorch"),
    "a100_torchrec_rank0_of_16": ("NVIDIA A100-SXM4-80GB", "pytorch"),
    "a100_ddp_cnn_rank0_of_2": ("NVIDIA A100-PG509-200", "pytorch"),
    "v100_ddp_cnn_one_rank": ("Tesla V100-SXM2-32GB", "pytorch"),
    "v100_ddp_mlp_rank1_of_2": ("Tesla V100-SXM2-32GB", "pytorch"),
    "v100_torchrec_rank1_of_2": ("Tesla V100-SXM2-16GB", "pytorch"),
    "hta_dlrm_v100_8ranks": ("Tesla V100-SXM2-32GB", "pytorch"),
    "mi300x_ddp_resnet18_no_caching_allocator": ("AMD Instinct MI300X", "pytorch"),
    "mi300x_ddp_resnet_act_checkpoint": ("AMD Instinct MI300X", "pytorch"),
    "mi300x_sglang_qwen3_prefill": ("AMD Instinct MI300X", "pytorch"),
    "mi300x_xdit_flux_serving": ("AMD Instinct MI300X", "pytorch"),
    "mi300x_vllm_gptoss_graphs": (None, "pytorch"),  # deviceProperties give no names
    "mi300x_owlv2_vision_infer": ("AMD Instinct MI300X VF", "pytorch"),
    "mi250_minitoy_train": ("AMD Radeon Graphics", "pytorch"),  # ROCm 6.2 names the MI250 so
    "mi210_gpu_only": ("AMD Instinct MI210", "pytorch"),
    "tf_v100_multi_gpu": ("/device:GPU:4", "tensorflow"),  # an XSpace GPU plane has no name: cc 7.0, 80 SMs
    "jax_mi300x_gemm": ("/device:GPU:0", "jax"),
    "jax_mi300x_attention": ("/device:GPU:0", "jax"),
    "jax_mi300x_conv_legacy": ("/device:GPU:7", "jax"),  # its convolution ran on GPU 7; GPU 0 only copies
}


def test_the_corpus_is_the_one_docs_list():
    listed = (ROOT / "docs" / "corpus.md").read_text()
    for run in KINETO + XSPACE:
        assert (WILD / run).is_dir(), run
        assert f"`{run}`" in listed, run


@pytest.mark.parametrize("run", KINETO + XSPACE)
def test_gpu_and_framework(run):
    gpu, framework = IDENTITY[run]
    for _m, rep in analysed(run):
        assert rep["framework"] == framework
        active = [d["name"] for d in rep["devices"] if d["id"] in rep["headline"]["active_gpus"]]
        if gpu is None:
            continue
        assert gpu in active, (run, active)


# -- the numbers: our reader against the raw events and HTA ----------------------------------------------


@pytest.mark.parametrize("run", KINETO)
def test_device_time_equals_the_raw_events(run):
    """Every kernel, copy and memset of the file, and their union, as our reader keeps them."""
    for path, (m, _) in zip(kineto_files(run), analysed(run)):
        ev = [e for e in raw(path) if e.get("cat") in DEVICE_CATS]
        theirs = Counter()
        for e in ev:
            theirs[e["name"]] += e["dur"]
        ours = Counter()
        spans = []
        for s, e, n, _k in ours_device(m):
            ours[n] += e - s
            spans.append((s, e))
        assert set(ours) == set(theirs), (run, set(ours) ^ set(theirs))
        for n in theirs:
            assert ours[n] == pytest.approx(theirs[n], rel=1e-6, abs=0.01), (run, n)
        # the file's timestamps are float µs since the epoch (a ulp of 0.25 µs): unions agree to that
        assert union_us(spans) == pytest.approx(
            union_us([(e["ts"], e["ts"] + e["dur"]) for e in ev]), rel=1e-4, abs=1.0
        )


@lru_cache(maxsize=None)
def hta_breakdown(run: str) -> dict[str, float]:
    """HTA's kernel-type breakdown (µs, summed over the run's ranks), run on a copy of the run's files."""
    hta = pytest.importorskip("hta.trace_analysis")
    d = tempfile.mkdtemp()
    os.environ["HTA_DISABLE_NS_ROUNDING"] = "1"
    try:
        for f in kineto_files(run):
            shutil.copy(f, d)
        logging.disable(logging.WARNING)
        a = hta.TraceAnalysis(trace_dir=d, include_last_profiler_step=True)
        kt, _ = a.get_gpu_kernel_breakdown(visualize=False, duration_ratio=1.0, num_kernels=10)
        return {str(r["kernel_type"]): float(r["sum"]) for _, r in kt.iterrows()}
    finally:
        logging.disable(logging.NOTSET)
        shutil.rmtree(d)


# HTA 0.5.0 reads these; on the others it fails (a100_alexnet_cupti_range has no kernel;
# mi300x_ddp_resnet_act_checkpoint and mi300x_xdit_flux_serving overflow its int16 stream column), and
# the raw count above is the oracle there. Its communication is NCCL/RCCL by name: DeepEP's and
# symmetric memory's kernels are computation to it (the second column: the kernels HTA misses, ms).
HTA_RUNS = {
    "deepseek_h800_fp8_moe_train": r"dpsk::ep::",
    "vllm_b200_mxfp4_moe_serving": r"multimem_all_reduce",
    "h100_owlv2_vision_infer": None,
    "h100_timesformer_video_infer": None,
    "h100_qwen_chat_infer": None,
    "a100_alexnet_warmup": None,
    "a100_torchrec_rank3_of_8": None,
    "a100_torchrec_rank0_of_16": None,
    "a100_ddp_cnn_rank0_of_2": None,
    "v100_ddp_cnn_one_rank": None,
    "v100_ddp_mlp_rank1_of_2": None,
    "v100_torchrec_rank1_of_2": None,
    "hta_dlrm_v100_8ranks": None,
    "mi300x_ddp_resnet18_no_caching_allocator": None,
    "mi300x_sglang_qwen3_prefill": None,
    "mi300x_vllm_gptoss_graphs": None,
    "mi300x_owlv2_vision_infer": None,
    "mi250_minitoy_train": None,
    "mi210_gpu_only": None,
}


def launched_in_trace(path: str) -> set:
    """The correlation ids of the trace's launch calls (runtime and driver): the GPU work HTA keeps."""
    return {e["args"].get("correlation") for e in raw(path) if e.get("cat") in ("cuda_runtime", "cuda_driver")}


@pytest.mark.parametrize("run", sorted(HTA_RUNS))
def test_hta_agrees_on_device_time_and_communication(run):
    """HTA's kernel breakdown partitions the GPU's busy time by kernel type (computation,
    communication, memory and their overlaps): its sum is the union of the device events it keeps, its
    communication the union of the NCCL/RCCL kernels. It keeps the GPU work launched in the trace (or,
    on some files, all of it), and cuts each event's start and length to whole µs (under 2 µs lost an
    event on files with fractional µs). So: the union of our device events launched in the trace, less
    2 µs an event, is at most HTA's, and HTA's at most the union of all of ours; likewise for our
    collectives less the kernels HTA does not know (HTA_RUNS), which the raw events count."""
    theirs = hta_breakdown(run)
    missed = HTA_RUNS[run]
    lo = hi = comm_lo = comm_hi = 0.0
    for path, (m, _rep) in zip(kineto_files(run), analysed(run)):
        launched = launched_in_trace(path)
        ev = [e for e in raw(path) if e.get("cat") in DEVICE_CATS]
        kept = [e for e in ev if e["args"].get("correlation") in launched]
        # ours, all of it; ours launched in the trace: the same events by the raw events' own account
        ours_all = [(s, e) for s, e, _n, _k in ours_device(m)]
        assert union_us(ours_all) == pytest.approx(
            union_us([(e["ts"], e["ts"] + e["dur"]) for e in ev]), rel=1e-4, abs=1.0
        )
        hi += union_us(ours_all)
        lo += union_us([(e["ts"], e["ts"] + e["dur"]) for e in kept]) - 2.0 * len(kept)
        coll = ours_device(m, (int(Kind.COLLECTIVE),))
        nccl = [(s, e) for s, e, n, _k in coll if not (missed and re.search(missed, n))]
        comm_hi += union_us(nccl)
        hand = [e for e in kept if e.get("cat") == "kernel" and re.search(r"nccl|rccl", e["name"], re.I)]
        comm_lo += union_us([(e["ts"], e["ts"] + e["dur"]) for e in hand]) - 2.0 * len(hand)
        if missed:  # what HTA reads as computation, we read as communication: counted by hand
            assert by_hand(path, missed) > 0
            mine = sum(e - s for s, e, n, _k in coll if re.search(missed, n)) / 1e3
            assert mine == pytest.approx(by_hand(path, missed), rel=1e-6)
    total = sum(theirs.values())
    assert lo - 1.0 <= total <= hi * (1 + 1e-4) + 1.0, (run, lo, total, hi)
    hta_comm = sum(v for k, v in theirs.items() if "COMMUNICATION" in k)
    # (within 1% below: on a100_ddp_cnn_rank0_of_2 HTA's 46.60 ms to our 46.88 ms of NCCL kernels)
    assert comm_lo * 0.99 - 1.0 <= hta_comm <= comm_hi * (1 + 1e-4) + 1.0, (run, comm_lo, hta_comm, comm_hi)


def _convert(path: str, tool: str) -> Any:
    from xprof.convert import raw_to_tool_data

    data = Path(path).read_bytes()
    with tempfile.TemporaryDirectory() as scratch:  # the converter writes next to the path it is given
        out, _ = raw_to_tool_data.xspace_to_tools_data_from_byte_string(
            [data], [os.path.join(scratch, Path(path).name)], tool, {}
        )
    assert out is not None, (path, tool)
    return json.loads(out)


@pytest.mark.parametrize("run", XSPACE)
def test_the_converter_agrees_on_kernel_time(run):
    """The profile plugin's kernel_stats: each kernel's total time, and ours (kernels and collectives;
    XLA's `CopyDeviceToDevice` is a copy to both)."""
    pytest.importorskip("xprof.convert.raw_to_tool_data")
    (path,) = [str(p) for p in (WILD / run).rglob("*.xplane.pb")]
    table = _convert(path, "kernel_stats")
    cols = [c["id"] for c in table["cols"]]
    theirs: Counter = Counter()
    for row in table["rows"]:
        r = dict(zip(cols, [c["v"] for c in row["c"]]))
        theirs[r["kernel_name"]] += r["total_duration_us"]
    ((m, _),) = analysed(run)
    ours: Counter = Counter()
    for s, e, n, _k in ours_device(m, (int(Kind.KERNEL), int(Kind.COLLECTIVE))):
        ours[n] += e - s
    assert set(ours) == set(theirs)
    for n in theirs:
        assert ours[n] == pytest.approx(theirs[n], rel=1e-6), n


# -- the readings ------------------------------------------------------------------------------------------


def test_deepseek_fp8_moe_trainer():
    """DeepSeek-V3's training (deepseek-ai/profile-data train.json): one H800 of 64 (EP64), one
    forward+backward chunk pair of DualPipe. By hand: 244.0 ms of kernels in a 129.5 ms step, the GPU
    busy 99.2%; DeepEP's internode dispatch/combine/notify kernels 113.4 ms, nearly all under compute;
    FP8 grouped GEMMs (CUTLASS 3 `device_kernel<...fp8...GemmKernel>`) 74.5 ms and FlashAttention-3 (fwd
    4.95, bwd 15.1 ms), all on Tensor Cores. An expert reads a GPU-bound, well-overlapped step with
    nothing of precision or Tensor Cores to advise; on one rank's view the communication is hidden."""
    run = "deepseek_h800_fp8_moe_train"
    (path,) = kineto_files(run)
    assert by_hand(path, r"dpsk::ep::") == pytest.approx(113.44, abs=0.01)
    assert by_hand(path, r"fp8\w*::GemmKernel|fp8_\w*::GemmKernel") == pytest.approx(74.53, abs=0.05)
    c = checks(run)
    for check in ("tensorcore.unused", "precision.mixed-off", "precision.fp16-no-tensorcore"):
        assert c[check]["status"] == "pass", check
    (m, rep) = analysed(run)[0]
    coll_ms = sum(e - s for s, e, _n, _k in ours_device(m, (int(Kind.COLLECTIVE),))) / 1e3
    assert coll_ms == pytest.approx(by_hand(path, r"dpsk::ep::"), rel=1e-6)
    (gpu,) = rep["headline"]["per_gpu"]
    assert gpu["comm_overlap_pct"] > 90 and rep["headline"]["device_busy_pct"] > 99
    assert not [p for p in problems(run) if p["id"].startswith(("tensorcore", "precision", "xla", "fusion"))]


def test_vllm_b200_serving_is_host_bound():
    """vLLM serving gpt-oss (MXFP4 MoE) on B200s, TP8 rank 0, eager (AMD-AGI/TraceLens b200
    eager_trace): one prefill of 888 tokens in an 86 ms capture; 768 kernels for 10.9 ms of GPU time,
    the GPU busy 13%; trtllm-gen `bmm_MxE4m3_MxE2m1MxE4m3` MoE GEMMs (3.18 ms) and FP8 attention
    (`fmhaSm100aKernel_QkvE4m3...`) on Tensor Cores; the TP all-reduce is PyTorch's symmetric-memory
    `multimem_all_reduce_kernel` (73 calls, 2.12 ms). The step waits for the host's launches: CUDA
    graphs (vLLM's default, off here) are the fix, not precision."""
    run = "vllm_b200_mxfp4_moe_serving"
    (path,) = kineto_files(run)
    assert by_hand(path, r"multimem_all_reduce") == pytest.approx(2.12, abs=0.01)
    c = checks(run)
    assert c["tensorcore.unused"]["status"] == "pass" and c["precision.mixed-off"]["status"] == "pass"
    assert c["kernels.launch-bound"]["status"] in ("warning", "critical")
    assert problems(run)[0]["id"] in ("kernels.small", "kernels.launch-bound")
    assert report(run)["breakdown_ms"]["device_collectives"] > 2.0


def test_h100_owlv2_waits_for_its_input():
    """OWLv2-large inference on an H100 (AMD-AGI/TraceLens h100): the profiled step (ProfilerStep#6,
    1211 ms) spends 619 ms in `enumerate(DataLoader)` of a single-process loader; 80
    cudaStreamSynchronize calls hold the host 358.8 ms; bf16 GEMMs on Tensor Cores (CUTLASS `_align1`:
    odd dimensions). The input pipeline is the first fix."""
    run = "h100_owlv2_vision_infer"
    (path,) = kineto_files(run)
    assert runtime(path, "cudaStreamSynchronize") == (80, pytest.approx(358.79, abs=0.01))
    assert problems(run)[0]["id"] == "input.bound"
    c = checks(run)
    assert c["steps.syncs"]["status"] in ("warning", "critical")
    assert all("step 6" in e["label"] for e in c["steps.syncs"]["evidence"])  # its number, not "step 0"


def test_h100_timesformer_host_copies():
    """TimeSformer video inference on an H100: in a 382.5 ms step the host spends 129.6 ms in two
    cudaMemcpyAsync calls (a pageable 3.5 ms H2D copy on the GPU), the GPU idle 59%: host work first."""
    run = "h100_timesformer_video_infer"
    (path,) = kineto_files(run)
    assert runtime(path, "cudaMemcpyAsync") == (2, pytest.approx(129.56, abs=0.01))
    assert problems(run)[0]["id"] == "steps.host-work"


def test_h100_qwen_chat_small_kernels():
    """Qwen1.5-0.5B-Chat on an H100, eager bf16: 1465 kernels in a 47 ms step, 859 of them small
    element-wise ones (fp32 RMSNorm casts, rotary), the GPU busy 91%: fusing them (torch.compile) is the
    fix; the GEMMs (`sm90_xmma_..._bf16`) and `pytorch_flash::flash_fwd_kernel` use Tensor Cores."""
    run = "h100_qwen_chat_infer"
    assert problems(run)[0]["id"] in ("kernels.small", "xla.off")
    assert checks(run)["tensorcore.unused"]["status"] == "pass"


# What the fixes that take host time away (compile, fusion, CUDA graphs, reduce-overhead) may remove: the
# dispatch inside ops, never the allocator's calls, start-up work or the range profiler's replay
DISPATCH_FIXES = ("compile", "fusion", "graph", "reduce-overhead")


def predicted(run: str, change: str) -> Any:
    return analysed(run)[0][0].predict(change)


def test_a100_alexnet_warmup_is_context_creation():
    """PARAM's AlexNet benchmark on an A100 (HTA tests/data/critical_path/alexnet): the capture holds
    CUDA's start: cudaDeviceGetStreamPriorityRange 29.9 s (11 calls, the first creating the context inside
    `aten::empty_strided`), cudaFree 6.55 s and cudaMalloc 1.96 s (the caching allocator filling its cache,
    and cuDNN's start inside the first `aten::cudnn_convolution`), cudaStreamCreateWithFlags 0.73 s (cuDNN's
    handle), the first convolution's cudaLaunchKernel 3.06 s with the GPU idle (its module loaded), against
    10.7 ms of kernels. Nothing of the model's speed shows: skip the warm-up
    (`schedule(wait=, warmup=)`). No fix of the program's host time saves any of it."""
    run = "a100_alexnet_warmup"
    (path,) = kineto_files(run)
    assert runtime(path, "cudaDeviceGetStreamPriorityRange") == (11, pytest.approx(29927.38, abs=0.1))
    assert runtime(path, "cudaFree") == (15, pytest.approx(6553.83, abs=0.1))
    assert runtime(path, "cudaMalloc") == (24, pytest.approx(1956.70, abs=0.1))
    assert runtime(path, "cudaStreamCreateWithFlags") == (16, pytest.approx(734.88, abs=0.1))
    launches = sorted(e["dur"] for e in raw(path) if e["name"] == "cudaLaunchKernel")
    assert len(launches) == 79 and launches[-1] == pytest.approx(3055567, abs=1) and launches[-2] < 100
    assert by_hand(path) == pytest.approx(10.69, abs=0.01)
    c = checks(run)
    # no fix of the program's host time claims the start-up: compile, fusion, graphs and
    # reduce-overhead save under 1 ms of the 43 s step; launches are not late (the 3 s launch was loading)
    for change in DISPATCH_FIXES:
        assert predicted(run, change).saving_ps < 1e9, change
    assert c["xla.off"]["status"] not in ("warning", "critical")
    assert c["kernels.launch-bound"]["status"] not in ("warning", "critical")
    w = c["capture.warmup"]
    assert problems(run)[0]["id"] == "capture.warmup" and w["status"] == "critical"
    # the start-up in the step: every call above (those in ops of the step: the context's, the first
    # convolution's cudaFree 6534.98 of the 6553.83, the stream creations, the loading launch) and the
    # first calls' own host work
    startup = {r["call"]: r["ms_per_step"] for r in w["details"]}
    assert startup["cudaDeviceGetStreamPriorityRange"] == pytest.approx(29927.38, abs=0.1)
    assert startup["cudaLaunchKernel"] == pytest.approx(3055.57, abs=0.1)
    assert startup["cudaMalloc"] == pytest.approx(1956.70, abs=0.1)
    assert startup["cudaFree"] == pytest.approx(6534.98, abs=0.1)
    step = w["whatif"]["step_ms"]
    assert w["saving_ms"] > 0.99 * step  # the step after the warm-up: its kernels and copies, some ms
    assert c["steps.allocator"]["status"] == "pass"  # the allocator is on: its calls fill its cache


def test_a100_alexnet_range_profiler():
    """The same benchmark under CUPTI's range profiler (HTA tests/data/cupti_profiler): 77
    `cuda_profiler_range` records (a kernel's counters each), 1556 cudaFuncSetAttribute, no kernel
    recorded; the 77 cudaLaunchKernel calls take 5163.3 ms (1.5 to 1220 ms each: each replays its kernel
    to count). A capture to read counters, not time: no finding claims a saving from it."""
    run = "a100_alexnet_cupti_range"
    (path,) = kineto_files(run)
    assert sum(1 for e in raw(path) if e.get("cat") == "cuda_profiler_range") == 77
    assert runtime(path, "cudaFuncSetAttribute")[0] == 1556
    assert runtime(path, "cudaLaunchKernel") == (77, pytest.approx(5163.30, abs=0.01))
    c = checks(run)
    assert not [p for p in problems(run) if p.get("saving_ms")]
    # every what-if is withheld: its times are the profiler's
    for change in (*DISPATCH_FIXES, "syncs", "warmup"):
        pr = predicted(run, change)
        assert pr is not None and pr.withheld and pr.saving_ps == 0, change
    r = c["capture.range-profiler"]
    assert r["status"] == "warning"
    metric = {x["name"]: x["value"] for x in r["metrics"]}
    assert metric["records"] == 77 and metric["replay_ms_per_step"] == pytest.approx(5163.30, abs=0.01)
    assert c["capture.no-gpu"]["status"] == "warning" and "range profiler" in c["capture.no-gpu"]["summary"]
    assert report(run)["step_model"]["all"] is None


def test_mi300x_resnet18_without_the_caching_allocator():
    """DDP ResNet-18 on an MI300X with the caching allocator off (AMD-AGI/TraceLens
    ddp_resnet18_no_pool, commit 13730e8): 1360 hipFree calls take 3346 ms of the 3391 ms capture (in
    `aten::convolution_backward`, `aten::miopen_convolution` and the autograd functions of BatchNorm and
    ReLU), 1460 hipMalloc 11.9 ms, the GPU busy 10.6% (358.9 ms of kernels); its 210 memory records are the
    host's. Keep the allocator on: the step falls to about its GPU time; compiling saves nothing of it."""
    run = "mi300x_ddp_resnet18_no_caching_allocator"
    (path,) = kineto_files(run)
    assert runtime(path, "hipFree") == (1360, pytest.approx(3346.15, abs=0.1))
    assert runtime(path, "hipMalloc") == (1460, pytest.approx(11.89, abs=0.01))
    kernels = by_hand(path)
    assert kernels == pytest.approx(358.91, abs=0.01)
    c = checks(run)
    # compile, fusion, graphs and reduce-overhead save under 0.3% of the step: they keep every hipFree
    for change in DISPATCH_FIXES:
        assert predicted(run, change).saving_ps < 0.003 * predicted(run, change).step_ps, change
    assert c["xla.off"]["status"] not in ("warning", "critical")
    a = c["steps.allocator"]
    assert problems(run)[0]["id"] == "steps.allocator" and a["status"] == "critical"
    calls = {r["call"]: r for r in a["details"]}
    # in the step: the hipFree calls of the lane's two threads, all but 1 ms of them
    assert calls["hipFree"]["ms_per_step"] == pytest.approx(3346.15, rel=1e-3)
    assert calls["hipMalloc"]["ms_per_step"] == pytest.approx(11.89, rel=1e-2)
    assert "PYTORCH_NO_HIP_MEMORY_CACHING" in a["recommendation"] and "CUDA" not in a["recommendation"]
    # the allocator what-if: the step falls to the GPU's work
    pr = predicted(run, "allocator")
    assert pr.new_step_ps / 1e9 == pytest.approx(kernels, rel=0.02)
    assert predicted(run, "warmup") is None and c["capture.warmup"]["status"] == "pass"


def test_the_allocator_rule_fires_on_no_other_trace():
    """Of the corpus's Kineto traces, only the MI300X ResNet-18 runs with the caching allocator off.
    The A100 AlexNet captures make cudaMalloc/cudaFree too (1.96 s and 6.55 s, 8 ms and 1.66 s), with
    the allocator on, in their warm-up: start-up (capture.warmup), not steps.allocator."""
    for run in KINETO:
        if run == "mi300x_ddp_resnet18_no_caching_allocator":
            continue
        for i in range(len(analysed(run))):
            assert checks(run, i)["steps.allocator"]["status"] in ("pass", "not-applicable"), run
    for run in ("a100_alexnet_warmup", "a100_alexnet_cupti_range"):
        assert checks(run)["capture.warmup"]["status"] in ("warning", "critical"), run


def test_hip_synchronous_copies_are_syncs():
    """PyTorch on ROCm makes its blocking copies with `hipMemcpyWithStream` (copy and wait): OWLv2 on an
    MI300X VF has 80 of them a step and one hipDeviceSynchronize (by hand), where the H100 run of the same
    model has 80 cudaStreamSynchronize; SGLang's prefill waits 493.2 ms in one."""
    run = "mi300x_owlv2_vision_infer"
    (path,) = kineto_files(run)
    steps = [e for e in raw(path) if e["name"].startswith("ProfilerStep")]
    profiled = max(steps, key=lambda e: e["dur"])
    inside = [
        e
        for e in raw(path)
        if e["name"] in ("hipMemcpyWithStream", "hipDeviceSynchronize")
        and profiled["ts"] <= e["ts"] < profiled["ts"] + profiled["dur"]
    ]
    assert Counter(e["name"] for e in inside) == {"hipMemcpyWithStream": 80, "hipDeviceSynchronize": 1}
    c = checks(run)
    metric = {x["name"]: x["value"] for x in c["steps.syncs"]["metrics"]}
    assert metric["syncs_per_step"] == 81 and c["steps.syncs"]["status"] in ("warning", "critical")
    (path,) = kineto_files("mi300x_sglang_qwen3_prefill")
    assert max(e["dur"] for e in raw(path) if e["name"] == "hipMemcpyWithStream") == pytest.approx(493208, abs=1)
    metric = {x["name"]: x["value"] for x in checks("mi300x_sglang_qwen3_prefill")["steps.syncs"]["metrics"]}
    assert metric["sync_wait_ms"] == pytest.approx(493.2, abs=0.1)


def test_host_only_memory_records_are_not_profile_memory_off():
    """The MI300X ResNet-18 without the caching allocator was captured with profile_memory on: 210
    `[memory]` records, every one `Device Type` 0 (the host's); capture.memory's title said
    "profile_memory off: no memory records"."""
    run = "mi300x_ddp_resnet18_no_caching_allocator"
    (path,) = kineto_files(run)
    with gzip.open(path, "rt") as fh:
        mem = [e for e in json.load(fh)["traceEvents"] if e.get("name") == "[memory]"]
    assert len(mem) == 210 and {e["args"]["Device Type"] for e in mem} == {0}
    f = checks(run)["capture.memory"]
    assert f["title"] == "No GPU memory records: 210 memory records, all of the host's"
    assert "profile_memory=True" not in (f["snippet"] or "")


def test_rocm_reads_as_rocm():
    """ROCm traces (AMD-AGI/TraceLens): SGLang's MI300X runs its kernels on device 9 and the vision
    model's on device 2 while deviceProperties lists GPU 0 only; the report has one MI300X, with its
    launches paired (534 and 4340 HIP launch calls)."""
    for run, launches in (("mi300x_sglang_qwen3_prefill", 534), ("mi300x_owlv2_vision_infer", 4340)):
        rep = report(run)
        assert [d["name"] for d in rep["devices"]] == [IDENTITY[run][0]]
        assert rep["headline"]["active_gpus"] == [0]
        c = checks(run)
        assert c["capture.no-runtime"]["metrics"] and c["kernels.launch-bound"]["status"] != "not-applicable"
        assert any(mm["name"] == "launches" and mm["value"] == launches for mm in c["capture.no-runtime"]["metrics"])


def test_jax_on_mi300x_is_jax():
    """JAX 0.8 on an MI300X (AMD-AGI/TraceLens jax08_*, jax_conv_minimal_legacy): no `jax*` metadata, but
    `py_xla_execute` threads and `PJRT_LoadedExecutable_Execute`; op-by-op jitted micro-benchmarks, the
    GPU idle while Python dispatches. JAX's advice, never TensorFlow's."""
    for run in ("jax_mi300x_gemm", "jax_mi300x_attention", "jax_mi300x_conv_legacy"):
        rep = report(run)
        assert rep["framework"] == "jax"
        for c in rep["checks"]:
            if c["status"] in ("warning", "critical"):
                assert not re.search(r"TF_GPU_THREAD_MODE|Keras|Model\.fit|tf\.data", c["recommendation"]), (
                    run,
                    c["id"],
                )
    c = checks("jax_mi300x_conv_legacy")
    # GPU 0 runs only XLA's `CopyDeviceToDevice` copies (53 of them): a copy-only GPU, not an active one
    assert c["multigpu.idle-gpus"]["metrics"] and any(
        mm["name"] == "copy_only_gpus" and mm["value"] == 1 for mm in c["multigpu.idle-gpus"]["metrics"]
    )


def test_v100_fp32_cnn_needs_mixed_precision():
    """A DDP CNN on one V100 in fp32 (HTA tests/data/ns_resolution_trace): the GPU busy 97.7%, its
    convolutions on CUDA cores (`cudnn_infer_volta_scudnn_*`, `wgrad_alg0_engine`, `volta_sgemm_*`):
    mixed precision is the fix, and it is the first problem."""
    run = "v100_ddp_cnn_one_rank"
    assert problems(run)[0]["id"] == "precision.mixed-off"
    assert checks(run)["tensorcore.unused"]["status"] == "warning"


@pytest.mark.xfail(reason="issue 50 item 6: a rank's collective time is read as transfer; waiting is not split out")
def test_dlrm_job_waits_for_rank_7():
    """DLRM on 8 V100s (facebookresearch/param et_replay dlrm_kineto): per rank 1.7-11.3 ms of NCCL
    all-to-all and all-reduce kernels in a 12.5-19.9 ms step, the fastest rank's about 1.75 ms: most
    of each rank's collective time is waiting for the others. The job view should name the late rank
    by its arrival and not call the wait exposed transfer."""
    from tb_gpu_advisor.job import analyse_jobs

    reports = [rep for _m, rep in analysed("hta_dlrm_v100_8ranks")]
    (job,) = analyse_jobs(reports)
    d = job.to_dict()
    assert 7 in d["stragglers"]
    assert not any(c["status"] == "critical" and "exposed" in c["title"].lower() for c in d["checks"])
