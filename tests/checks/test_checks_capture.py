"""Section 0 of the checklist: capture.no-gpu, capture.no-steps, capture.short, capture.cut,
capture.no-runtime, capture.lost-events, capture.shapes, capture.memory, capture.stacks, offload.small-model. Steps are 1000 µs
unless said otherwise; the numbers are worked out by hand in the comments."""

import gzip
import json
import os
import subprocess
import sys
from typing import Any

import pytest
from support.kineto_writer import GEMM, KinetoWriter
from support.sim import T0, Sim, analysis_of, host_only, run_check
from support.xplane_writer import GPU_SPECS, ProfileWriter

from tb_gpu_advisor.checks.findings import INFO, NOT_APPLICABLE, PASS, WARNING
from tb_gpu_advisor.formats.discovery import discover
from tb_gpu_advisor.model.analysis import analyse
from tb_gpu_advisor.report.engine import read_file


def approx(v: Any, rel: float = 1e-6) -> Any:
    return pytest.approx(v, rel=rel, abs=1e-9)


def test_capture_no_gpu() -> None:
    f = run_check(analysis_of(host_only()), "capture.no-gpu")  # a CPU-only run: not told to fix CUPTI
    assert f.status == INFO and f.metric("gpus") == 0 and "CPU-only" in f.title and "CUPTI" not in f.recommendation
    w = host_only()
    w.thread("tf_gpu_private_0/7").event("some_op:MatMul", 1100, 50)  # the job used a GPU: its trace was lost
    f = run_check(analysis_of(w), "capture.no-gpu")
    assert f.status == WARNING and "GPU trace missing" in f.title and "CUPTI" in f.recommendation
    s = Sim()  # GPU plane and stream lines, but no event on them
    s.steps(2, 1000, lambda i, t: None)
    f = s.run("capture.no-gpu")
    assert f.status == WARNING and (f.metric("gpus"), f.metric("active_gpus")) == (1, 0)
    s = Sim()
    s.steps(2, 1000, lambda i, t: s.kernel(t, 100))
    f = s.run("capture.no-gpu")
    assert f.status == PASS and f.title == "GPU activity captured"


def test_tpu_capture_is_said_plainly() -> None:
    w = host_only()
    for i in range(4):
        w.space.planes.add(id=100 + i, name=f"/device:TPU:{i}")
    f = run_check(analysis_of(w), "capture.no-gpu")
    assert f.status == INFO and f.title == "TPU capture: not covered by the GPU Advisor" and "4 TPU" in f.summary
    assert run_check(analysis_of(w), "steps.gaps").status == NOT_APPLICABLE


def test_capture_no_steps() -> None:
    s = Sim()
    s.steps(3, 1000, lambda i, t: s.kernel(t, 100))
    f = s.run("capture.no-steps")
    assert f.status == PASS and f.metric("steps") == 3
    w = ProfileWriter("h")
    gpu = w.gpu(0, GPU_SPECS["A100"])
    gpu.stream(7).kernel("k", 10, 100)
    f = run_check(analysis_of(w), "capture.no-steps")
    assert f.status == WARNING and f.metric("source") == "whole-capture" and f.metric("steps") == 1
    assert f.title == "No step markers: the whole capture is one step"
    gpu.derived_line("Steps", [("0", 10, 50), ("1", 60, 50)])
    f = run_check(analysis_of(w), "capture.no-steps")
    assert f.status == INFO and f.metric("steps") == 2 and f.metric("source") == "device-steps-line"
    w = ProfileWriter("h")
    w.gpu(0, GPU_SPECS["A100"]).stream(7).kernel("k", 10, 100)
    for i in range(3):
        w.thread("python").event("train_function", i * 200, 150)
    f = run_check(analysis_of(w), "capture.no-steps")
    assert f.status == INFO and f.metric("source") == "step-function-calls" and f.metric("steps") == 3


def test_offload_small_model() -> None:
    # per step: 300 µs H2D, a 100 µs kernel: 0.1 ms compute against 0.3 ms of copies
    s = Sim()
    s.steps(4, 1000, lambda i, t: (s.h2d[0].memcpy("H2D", t + 100, 300, 1 << 20), s.kernel(t + 500, 100)))
    f = s.run("offload.small-model")
    assert f.status == WARNING and f.title.startswith("Small model: 0.100 ms of GPU compute per step")
    assert f.metric("compute_ms_per_step") == approx(0.1) and f.metric("overhead_ms_per_step") == approx(0.3)
    s = Sim()  # 0.6 ms of compute, still under 1 ms, but more than the 0.3 ms of copies
    s.steps(4, 1000, lambda i, t: (s.h2d[0].memcpy("H2D", t + 10, 300, 1 << 20), s.kernel(t + 350, 600)))
    assert s.run("offload.small-model").status == PASS
    assert run_check(analysis_of(host_only()), "offload.small-model").status == NOT_APPLICABLE


# -- capture quality on real captures: torch (CPU build) made here, and the shared real GPU trace --------

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GPU_TRACE = os.path.join(
    ROOT, "tests", "data", "pytorch", "resnet50_num_workers_4", "worker0.1623213129365.pt.trace.json.gz"
)


def _torch_capture(tmp_path_factory: Any, name: str, *args: str) -> Any:
    pytest.importorskip("torch")
    logdir = tmp_path_factory.mktemp(name)
    script = os.path.join(ROOT, "scripts", "capture_torch_cpu.py")
    subprocess.run([sys.executable, script, str(logdir), *args], check=True, capture_output=True, timeout=300)
    (f,) = discover(str(logdir))[0]
    return analyse(read_file(f))


@pytest.fixture(scope="module")
def one_step(tmp_path_factory: Any) -> Any:
    """schedule(active=1): one profiled step, shapes recorded."""
    return _torch_capture(tmp_path_factory, "one_step", "--steps", "1")


@pytest.fixture(scope="module")
def no_shapes(tmp_path_factory: Any) -> Any:
    """record_shapes=False, three profiled steps."""
    return _torch_capture(tmp_path_factory, "no_shapes", "--steps", "3", "--no-record-shapes")


def test_capture_short_on_real_captures(one_step: Any, no_shapes: Any) -> None:
    f = run_check(one_step, "capture.short")
    assert f.status == WARNING and f.metric("steps") == 1 and f.title == "Only 1 step captured"
    assert "profile_batch" not in f.recommendation and "schedule(wait=1, warmup=1, active=5)" in f.recommendation
    assert "prof.step()" in f.snippet
    f = run_check(no_shapes, "capture.short")
    assert f.status == PASS and f.metric("steps") == 3
    # whole-capture steps are capture.no-steps' business
    w = ProfileWriter("h")
    w.gpu(0, GPU_SPECS["A100"]).stream(7).kernel("k", 10, 100)
    assert run_check(analysis_of(w), "capture.short").status == NOT_APPLICABLE
    # a one-step TensorFlow capture is told about Keras' profile_batch range
    s = Sim()
    s.steps(1, 1000, lambda i, t: s.kernel(t, 100))
    f = s.run("capture.short")
    assert f.status == WARNING and "profile_batch=(10, 15)" in f.recommendation


def test_capture_shapes_on_real_captures(one_step: Any, no_shapes: Any) -> None:
    f = run_check(no_shapes, "capture.shapes")
    assert f.status == WARNING and f.metric("ops_with_shapes") == 0 and f.metric("ops") > 20
    assert "record_shapes=True" in f.recommendation and "record_shapes=True" in f.snippet
    f = run_check(one_step, "capture.shapes")
    assert f.status == PASS and 0 < f.metric("ops_with_shapes") <= f.metric("ops")
    # PyTorch only: a TensorFlow capture always has its ops' shapes
    s = Sim()
    s.steps(2, 1000, lambda i, t: s.kernel(t, 100))
    assert s.run("capture.shapes").status == NOT_APPLICABLE


def test_capture_no_runtime_on_the_real_gpu_trace(tmp_path: Any) -> None:
    """The real ResNet-50 trace (V100) has 9,258 launch calls; the same trace without its `Runtime` events
    (what a copy filtered to the GPU's events looks like) has none: the launch checks cannot tell."""
    from tb_gpu_advisor.checks import run_checks
    from tb_gpu_advisor.measures import Measures

    f = run_check(analyse(read_file(_pick(GPU_TRACE))), "capture.no-runtime")
    assert f.status == PASS and f.metric("launches") == 9258
    with gzip.open(GPU_TRACE, "rt") as fh:
        doc = json.load(fh)
    cats = {e.get("cat") for e in doc["traceEvents"]}
    assert "Runtime" in cats
    doc["traceEvents"] = [e for e in doc["traceEvents"] if e.get("cat") != "Runtime"]
    out = tmp_path / "run" / "worker0.1.pt.trace.json"
    out.parent.mkdir()
    out.write_text(json.dumps(doc))
    a = analyse(read_file(_pick(str(out))))
    f = run_check(a, "capture.no-runtime")
    assert f.status == WARNING and f.metric("launches") == 0
    assert "ProfilerActivity.CPU, ProfilerActivity.CUDA" in f.recommendation
    findings = {x.id: x for x in run_checks(Measures(a))[0]}
    # kernels.launch-bound found a 6.5% launch wait with the runtime events; without them it cannot tell
    assert findings["kernels.launch-bound"].status == NOT_APPLICABLE
    assert findings["capture.no-runtime"].status == WARNING
    # no CPU-only capture is asked for CUDA runtime events
    s = host_only()
    assert run_check(analysis_of(s), "capture.no-runtime").status == NOT_APPLICABLE


def _pick(path: str) -> Any:
    from tb_gpu_advisor.serve.selection import profile_file

    return profile_file(path)


def test_a_pass_from_a_blinded_check_is_cannot_tell() -> None:
    """checks.blind: with capture.no-runtime warning, kernels.launch-bound's pass becomes "cannot tell"."""
    from tb_gpu_advisor.checks import blind
    from tb_gpu_advisor.checks.capture import BLINDS
    from tb_gpu_advisor.checks.findings import Finding

    def finding(cid: str, status: str, title: str) -> Finding:
        return Finding(id=cid, title=title, section="", status=status, summary="measured.", link="", recommendation="")

    cause = finding("capture.no-runtime", WARNING, "No CUDA runtime events: kernel launches not seen")
    launch = finding("kernels.launch-bound", PASS, "GPU not waiting for kernel launches")
    other = finding("input.bound", PASS, "Input pipeline keeps up")
    blind([cause, launch, other])
    assert launch.status == NOT_APPLICABLE and other.status == PASS
    assert launch.reason == "Cannot tell: No CUDA runtime events: kernel launches not seen (capture.no-runtime)."
    assert launch.summary.startswith("Cannot tell:")
    launch2 = finding("kernels.launch-bound", PASS, "GPU not waiting for kernel launches")
    blind([finding("capture.no-runtime", PASS, "CUDA runtime events captured"), launch2])
    assert launch2.status == PASS
    assert set(BLINDS) <= {"capture.no-runtime", "capture.short", "capture.shapes", "capture.memory"}


def test_capture_lost_events_on_the_real_trace_and_with_kernels_removed(tmp_path: Any) -> None:
    """The real V100 trace pairs every launch call with its GPU work. Removing every 20th kernel (what a
    full CUPTI buffer does to a trace) leaves those launches without work: counted by hand from the raw
    events, the check finds the same number, as a warning (about 5% of launches)."""
    a = analyse(read_file(_pick(GPU_TRACE)))
    f = run_check(a, "capture.lost-events")
    assert f.status == PASS and f.metric("missing") == 0 and f.metric("launches") > 8000  # memsets aside
    with gzip.open(GPU_TRACE, "rt") as fh:
        doc = json.load(fh)
    events = doc["traceEvents"]
    kernels = [e for e in events if e.get("cat") == "Kernel"]
    dropped = {id(e) for e in kernels[::20]}
    kept = [e for e in events if id(e) not in dropped]
    gpu_cats = {"Kernel", "Memcpy", "Memset"}
    last = max(e["ts"] for e in kept if e.get("cat") in gpu_cats)
    have = {e["args"]["correlation"] for e in kept if e.get("cat") in gpu_cats}
    launches = [
        e
        for e in kept
        if e.get("cat") == "Runtime" and e.get("args", {}).get("correlation", -1) >= 0 and e["ts"] < last
        and e["name"].startswith(("cudaLaunchKernel", "cudaMemcpy"))
    ]  # fmt: skip
    by_hand = sum(e["args"]["correlation"] not in have for e in launches)
    doc["traceEvents"] = kept
    out = tmp_path / "run" / "worker0.1.pt.trace.json"
    out.parent.mkdir()
    out.write_text(json.dumps(doc))
    f = run_check(analyse(read_file(_pick(str(out)))), "capture.lost-events")
    assert f.metric("missing") == by_hand and by_hand >= len(dropped) - 2
    assert f.metric("launches") == len(launches)
    assert f.status == WARNING and 4.0 < f.metric("missing_pct") < 6.0
    assert f.evidence and "its GPU work is not in the trace" in f.evidence[0].label
    assert "schedule(wait=1, warmup=1, active=2)" in f.recommendation  # PyTorch words on a PyTorch trace


def test_capture_lost_events_when_the_profiler_says_so() -> None:
    """An XSpace whose profiler warned of a full activity buffer: a warning quoting it, even with every
    kept launch paired; the reader's own note on events outside the capture is not such a message."""
    s = Sim()
    s.steps(3, 1000, lambda i, t: s.kernel(t, 100))
    assert s.run("capture.lost-events").status in (PASS, NOT_APPLICABLE)
    s = Sim()
    s.steps(3, 1000, lambda i, t: s.kernel(t, 100))
    s.w.space.warnings.append("CUPTI activity buffer is full: 1024 records were dropped")
    f = s.run("capture.lost-events")
    assert f.status == WARNING and "activity buffer is full" in f.summary
    assert "profile_batch=(10, 12)" in f.recommendation


# -- profile_memory, with_stack: real captures made here, counted by hand from their raw events ------


def _torch_capture_file(tmp_path_factory: Any, name: str, *args: str) -> Any:
    pytest.importorskip("torch")
    logdir = tmp_path_factory.mktemp(name)
    script = os.path.join(ROOT, "scripts", "capture_torch_cpu.py")
    subprocess.run([sys.executable, script, str(logdir), *args], check=True, capture_output=True, timeout=300)
    (f,) = discover(str(logdir))[0]
    with open(f.path) as fh:
        return analyse(read_file(f)), json.load(fh)


@pytest.fixture(scope="module")
def memory_and_stacks(tmp_path_factory: Any) -> Any:
    """profile_memory=True and with_stack=True, two profiled steps."""
    return _torch_capture_file(
        tmp_path_factory, "memory_and_stacks", "--steps", "2", "--profile-memory", "--with-stack"
    )


def test_capture_memory_on_real_captures(memory_and_stacks: Any, no_shapes: Any) -> None:
    a, doc = memory_and_stacks
    by_hand = [e for e in doc["traceEvents"] if e.get("name") == "[memory]"]
    assert doc["profile_memory"] == 1 and len(by_hand) > 50  # torch writes the flag it ran with
    f = run_check(a, "capture.memory")
    assert f.status == PASS and f.metric("records") == len(by_hand) and f.metric("gpu_records") == 0
    f = run_check(no_shapes, "capture.memory")
    assert f.status == INFO and f.metric("records") == 0 and f.title == "profile_memory off: no memory records"
    assert "profile_memory=True" in f.recommendation and "profile_memory=True" in f.snippet
    assert "multigpu.batch" in f.summary
    # the batch-size advice, blind without the records, says so; with host records only, it says that
    assert run_check(no_shapes, "multigpu.batch").reason.startswith("Cannot tell: no memory records")
    assert "host memory" in run_check(a, "multigpu.batch").reason
    # PyTorch only: XSpace has its allocator's events whatever the options
    s = Sim()
    s.steps(2, 1000, lambda i, t: s.kernel(t, 100))
    assert s.run("capture.memory").status == NOT_APPLICABLE


def test_capture_memory_on_the_real_gpu_trace(tmp_path: Any) -> None:
    """The V100 trace recorded its memory: 10,980 records, 8,280 on the GPU (counted from the raw
    events: `Device Type` 1); without them the check says so and multigpu.batch cannot tell."""
    from tb_gpu_advisor.checks import run_checks
    from tb_gpu_advisor.measures import Measures

    with gzip.open(GPU_TRACE, "rt") as fh:
        doc = json.load(fh)
    mem = [e for e in doc["traceEvents"] if e.get("name") == "[memory]"]
    on_gpu = sum(1 for e in mem if e["args"].get("Device Type") == 1)
    f = run_check(analyse(read_file(_pick(GPU_TRACE))), "capture.memory")
    assert f.status == PASS and (f.metric("records"), f.metric("gpu_records")) == (len(mem), on_gpu) == (10980, 8280)
    doc["traceEvents"] = [e for e in doc["traceEvents"] if e.get("name") != "[memory]"]
    out = tmp_path / "run" / "worker0.1.pt.trace.json"
    out.parent.mkdir()
    out.write_text(json.dumps(doc))
    findings = {x.id: x for x in run_checks(Measures(analyse(read_file(_pick(str(out))))))[0]}
    assert findings["capture.memory"].status == INFO
    assert findings["multigpu.batch"].status == NOT_APPLICABLE
    assert "(capture.memory)" in str(findings["multigpu.batch"].reason)


def test_capture_stacks_on_real_captures(memory_and_stacks: Any, no_shapes: Any) -> None:
    a, doc = memory_and_stacks
    by_hand = sum(1 for e in doc["traceEvents"] if e.get("cat") == "python_function")
    assert doc["with_stack"] == 1 and by_hand > 100
    f = run_check(a, "capture.stacks")
    assert f.status == PASS and f.metric("python_events") == by_hand
    f = run_check(no_shapes, "capture.stacks")
    assert f.status == INFO and f.metric("python_events") == 0 and f.title == "with_stack off: no Python call stacks"
    assert "with_stack=True" in f.snippet and "Nothing the advisor checks needs call stacks" in f.recommendation
    # the V100 trace is from PyTorch 1.8 (memory records without totals): stacks would be ops' arguments
    f = run_check(analyse(read_file(_pick(GPU_TRACE))), "capture.stacks")
    assert f.status == NOT_APPLICABLE and "before 1.10" in f.reason


def test_blind_on_info() -> None:
    """An info-level capture finding (capture.memory) blinds too: a pass behind it is "cannot tell"."""
    from tb_gpu_advisor.checks import blind
    from tb_gpu_advisor.checks.capture import BLINDS
    from tb_gpu_advisor.checks.findings import Finding

    assert BLINDS["capture.memory"] == ("multigpu.batch",)
    cause = Finding("capture.memory", "profile_memory off: no memory records", "", INFO, "", "", "")
    batch = Finding("multigpu.batch", "Batch large enough for the GPU memory", "", PASS, "measured.", "", "")
    blind([cause, batch])
    assert batch.status == NOT_APPLICABLE and str(batch.reason).startswith("Cannot tell: profile_memory off")


# -- a capture cut mid-step: hand-made Kineto traces, an XSpace from the writer ----------------------


def _kineto(tmp_path: Any, w: KinetoWriter) -> Any:
    out = tmp_path / "run" / "worker0.1.pt.trace.json"
    out.parent.mkdir(exist_ok=True)
    out.write_bytes(w.to_bytes(gz=False))
    return analyse(read_file(_pick(str(out))))


def _kineto_steps(w: KinetoWriter, steps: int, kernels: list[int], start: float = 1000.0) -> None:
    """`steps` steps of 10 ms from `start` (µs), step i launching kernels[i] kernels of 500 µs, 1 ms apart."""
    for i in range(steps):
        t = start + i * 10_000
        w.step(1 + i, t, 10_000)
        for k in range(kernels[i]):
            w.kernel(GEMM, t + 100 + k * 1000, t + 200 + k * 1000, 500)


def test_capture_cut_at_the_end(tmp_path: Any) -> None:
    """Three 100 µs steps of five 10 µs kernels, the last with one (the profiler stopped as it ran):
    torch-tb-profiler drops that step (1 < 0.8 x 5), and so do the steps here; the check says which
    and why. Its kernel (10 µs) runs after the last measured step."""
    from test_pytorch_plugin_oracle import Trace, plugin

    t = Trace()
    for i, n in enumerate([5, 5, 1]):
        t.step(i + 1, 100 * i, 100)
        for k in range(n):
            t.launch(100 * i + 5 + 15 * k, (100 * i + 10 + 15 * k, 100 * i + 20 + 15 * k))
    path = t.write(tmp_path)
    assert [int(n) for n in plugin(path, tmp_path).steps_names] == [1, 2]
    f = run_check(analyse(read_file(_pick(path))), "capture.cut")
    assert f.status == WARNING and f.title == "Capture cut mid-step: the last step dropped"
    assert f.metric("dropped_steps") == 1 and "Step 3 is left out" in f.summary
    assert f.metric("after_ms") == approx(0.01) and f.metric("before_ms") == 0
    assert "schedule(wait=1, warmup=1, active=5)" in f.recommendation and "prof.step()" in f.snippet
    w = KinetoWriter()  # whole steps: a pass
    _kineto_steps(w, 4, [10, 10, 10, 10])
    f = run_check(_kineto(tmp_path, w), "capture.cut")
    assert f.status == PASS and (f.metric("dropped_steps"), f.metric("before_ms"), f.metric("after_ms")) == (0, 0, 0)


def test_capture_cut_at_the_start(tmp_path: Any) -> None:
    """The step before the first marker began before the capture: three of its kernels (1.5 ms) run
    at the capture's start, launched outside every marker, ending before step 1's own kernels begin.
    1.5 ms of a 10 ms step is 15%, over 10%."""
    w = KinetoWriter()
    for k in range(3):
        w.kernel(GEMM, 0.0, 10.0 + k * 500, 500)
    _kineto_steps(w, 3, [10, 10, 10], start=3000.0)
    f = run_check(_kineto(tmp_path, w), "capture.cut")
    assert f.status == WARNING and f.title == "Capture began mid-step: GPU work before the first step"
    assert f.metric("before_ms") == approx(1.5) and "before step 1" in f.summary
    assert f.evidence and f.evidence[0].label == "GPU work before the first step"
    assert run_check(_kineto(tmp_path, w), "capture.cut", overrides={"capture.cut.edge": 20.0}).status == PASS


def test_capture_cut_xspace() -> None:
    """TensorFlow: the step running when the capture stopped lost its marker; its kernel (500 µs of
    1000 µs steps) runs after the last marked step. Keras' profile_batch is the advice. Then the
    step before the first marker, whose marker began before the capture."""
    s = Sim()
    s.steps(3, 1000, lambda i, t: s.kernel(t + 100, 300))
    s.kernel(4100, 500)
    f = s.run("capture.cut")
    assert f.status == WARNING and f.title == "Capture ended mid-step: GPU work after the last step"
    assert f.metric("after_ms") == approx(0.5) and "after step 2" in f.summary
    assert "profile_batch=(10, 15)" in f.recommendation
    s = Sim()  # the step before the first marker: its last 200 µs of GPU work, 20% of a step
    s.kernel(T0 - 250, 200)
    s.steps(3, 1000, lambda i, t: s.kernel(t + 100, 300))
    f = s.run("capture.cut")
    assert f.status == WARNING and f.title == "Capture began mid-step: GPU work before the first step"
    assert f.metric("before_ms") == approx(0.2) and f.metric("edge_pct") == approx(20.0)
    s = Sim()
    s.steps(3, 1000, lambda i, t: s.kernel(t + 100, 300))
    assert s.run("capture.cut").status == PASS
    w = ProfileWriter("h")  # no markers: capture.no-steps' business
    w.gpu(0, GPU_SPECS["A100"]).stream(7).kernel("k", 10, 100)
    assert run_check(analysis_of(w), "capture.cut").status == NOT_APPLICABLE
