"""Section 0 of the checklist: capture.no-gpu, capture.no-steps, offload.small-model. Steps are 1000 µs
unless said otherwise; the numbers are worked out by hand in the comments."""

import pytest
from sim import Sim, analysis_of, host_only, run_check

from tb_gpu_advisor.report import INFO, NOT_APPLICABLE, PASS, WARNING
from tb_gpu_advisor.xplane.writer import GPU_SPECS, ProfileWriter


def approx(v, rel=1e-6):
    return pytest.approx(v, rel=rel, abs=1e-9)


def test_capture_no_gpu():
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


def test_tpu_capture_is_said_plainly():
    w = host_only()
    for i in range(4):
        w.space.planes.add(id=100 + i, name=f"/device:TPU:{i}")
    f = run_check(analysis_of(w), "capture.no-gpu")
    assert f.status == INFO and f.title == "TPU capture: not covered by the GPU Advisor" and "4 TPU" in f.summary
    assert run_check(analysis_of(w), "steps.gaps").status == NOT_APPLICABLE


def test_capture_no_steps():
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


def test_offload_small_model():
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
