"""Section 5 of the checklist: several GPUs on one host; and the 8-GPU capture of issue 9 (a writer
scenario reproducing its description, every number of the issue asserted)."""

import pytest
from support import scenarios
from support.sim import T0, Sim, analysis_of
from support.xplane_writer import GPU_SPECS

from tb_gpu_advisor.checks.findings import CRITICAL, INFO, NOT_APPLICABLE, PASS, WARNING


def approx(v, rel=1e-6):
    return pytest.approx(v, rel=rel, abs=1e-9)


MULTI = [
    "multigpu.input",
    "allreduce.count",
    "allreduce.cost",
    "multigpu.copies",
    "multigpu.imbalance",
    "multigpu.serialized",
    "multigpu.launch-skew",
]


@pytest.mark.parametrize("check_id", MULTI)
def test_multigpu_checks_need_two_gpus(check_id):
    s = Sim(gpus=2)  # a second GPU plane, but idle
    s.steps(4, 1000, lambda i, t: s.kernel(t, 500))
    f = s.run(check_id)
    assert f.status == NOT_APPLICABLE and "(1 found)" in f.reason


def test_multigpu_batch():
    def prof(frac):
        s = Sim()
        s.steps(4, 1000, lambda i, t: s.kernel(t, 500))
        if frac is not None:
            s.py.memory(T0 + 1, 1 << 30, int(frac * GPU_SPECS["A100"].memory_bytes), allocator="GPU_0_bfc")
        return s.run("multigpu.batch")

    f = prof(0.3)
    assert f.status == INFO and f.metric("peak_memory_pct") == approx(30.0, rel=1e-6)
    assert prof(0.8).status == PASS
    assert prof(None).status == NOT_APPLICABLE


def two_gpus(body, steps=4, step_us=1000.0):
    s = Sim(gpus=2)
    s.steps(steps, step_us, lambda i, t: body(s, i, t))
    return s


def test_multigpu_input():
    # both GPUs wait 25%: input.bound reports it (critical); this check has nothing more to say
    s = two_gpus(lambda s, i, t: (s.get_next(t, 250), s.kernel(t + 300, 600, gpu=0), s.kernel(t + 300, 600, gpu=1)))
    f = s.run("multigpu.input")
    assert (
        f.status == PASS and f.metric("input_pct_gpu0") == approx(25.0) and f.metric("input_pct_gpu1") == approx(25.0)
    )
    assert f.saving_ms is None and s.run("input.bound").status == CRITICAL

    # GPU 1 also waits on its own input copy [300, 400) with nothing else to do: 35% against 25%;
    # the mean (30%) is input.bound's, the 5% above it this check's
    def body(s, i, t):
        s.get_next(t, 250)
        s.kernel(t + 300, 600, gpu=0)
        s.h2d[1].memcpy("H2D", t + 300, 100, 1 << 20, op="IteratorGetNext:IteratorGetNext")
        s.kernel(t + 400, 500, gpu=1)

    s = two_gpus(body)
    f = s.run("multigpu.input")
    assert f.status == WARNING and f.metric("input_pct_gpu1") == approx(35.0) and f.metric("excess_pct") == approx(5.0)
    assert f.title == "Uneven input: GPU 1 waits 5.0% of the step more than the mean" and f.saving_ms == approx(0.05)
    assert s.run("input.bound").metric("input_pct") == approx(30.0)


def allreduce_body(n_calls, nccl_us=50.0):
    def body(s, i, t):
        for d in range(2):
            s.kernel(t, 500, gpu=d)
            for k in range(n_calls):
                s.nccl_stream[d].nccl(t + 500 + 100 * k, nccl_us)

    return body


def test_allreduce_count():
    f = two_gpus(allreduce_body(3)).run("allreduce.count")
    assert f.status == WARNING and f.metric("allreduce_per_gpu_per_step") == 3.0
    assert f.saving_ms == approx(0.1)  # two extra 50 µs calls per step
    f = two_gpus(allreduce_body(1)).run("allreduce.count")
    assert f.status == PASS and f.metric("allreduce_per_gpu_per_step") == 1.0
    assert two_gpus(allreduce_body(0)).run("allreduce.count").status == NOT_APPLICABLE


def test_allreduce_cost():
    def body(s, i, t, nccl_us):
        for d in range(2):
            s.kernel(t, 600, gpu=d)
            s.nccl_stream[d].nccl(t + 600, nccl_us)

    s = two_gpus(lambda s, i, t: body(s, i, t, 300))
    f = s.run("allreduce.cost")
    assert f.status == WARNING and f.metric("allreduce_pct") == approx(30.0)
    assert f.metric("bandwidth_gbps") == 300.0  # A100: NVLink 3 by default
    # 25M parameters x 4 bytes x 2(n-1)/n over 300 GB/s = 0.333 ms
    f = s.run("allreduce.cost", params=25_000_000)
    assert f.metric("estimate_ms") == approx(1 / 3) and f.metric("measured_over_estimate") == approx(0.9)
    s = two_gpus(lambda s, i, t: body(s, i, t, 50))
    f = s.run("allreduce.cost")
    assert f.status == PASS and f.metric("allreduce_pct") == approx(5.0)
    # 1M parameters over 300 GB/s: 13.3 µs expected, 50 µs measured: 3.75x slower than the estimate
    f = s.run("allreduce.cost", params=1_000_000)
    assert f.status == WARNING and f.metric("measured_over_estimate") == approx(3.75)
    f = s.run("allreduce.cost", params=1_000_000, bandwidth_gbps=10.0)
    assert f.status == PASS and f.metric("bandwidth_gbps") == 10.0
    # without --params, from the all-reduce op's shape: 25M floats, 0.333 ms expected, 0.3 ms measured
    s = two_gpus(
        lambda s, i, t: [
            (s.kernel(t, 600, gpu=d), s.nccl_stream[d].nccl(t + 600, 300, shape="(float[25000000])")) for d in range(2)
        ]
    )
    f = s.run("allreduce.cost")
    assert f.metric("params") == 25_000_000 and f.metric("estimate_ms") == approx(1 / 3)
    assert "from the all-reduce shapes" in f.summary
    # GPU1 arrives 200 µs early and waits inside its NCCL kernel: the transfer is GPU0's 100 µs
    s = two_gpus(
        lambda s, i, t: (
            s.kernel(t, 600, gpu=0),
            s.kernel(t, 400, gpu=1),
            s.nccl_stream[0].nccl(t + 600, 100),
            s.nccl_stream[1].nccl(t + 400, 300),
        )
    )
    f = s.run("allreduce.cost")
    assert f.metric("allreduce_ms_per_step") == approx(0.1) and f.metric("waiting_ms_per_step") == approx(0.1)
    assert f.status == PASS and "multigpu.imbalance" in f.summary


def test_multigpu_copies():
    def body(s, i, t):
        for d in range(2):
            s.kernel(t, 400, gpu=d)
            s.kernel(t + 500, 400, gpu=d, lead=300)
        s.d2h[1].memcpy("D2H", t + 400, 100, 8 << 20, op="x/to_host:_Send")

    # GPU 1 waits 10% of each step on a copy, GPU 0 none: the mean 5% is memcpy.excessive's saving,
    # GPU 1's 5% above it this check's
    s = two_gpus(body)
    f = s.run("multigpu.copies")
    assert (
        f.status == WARNING and f.metric("blocking_copy_pct") == approx(10.0) and f.metric("excess_pct") == approx(5.0)
    )
    assert f.metric("blocking_copy_ms_per_step_gpu1") == approx(0.1) and f.metric("blocking_copy_ms_per_step_gpu0") == 0
    assert f.evidence[0].device_id == 1 and f.saving_ms == approx(0.05)
    assert s.run("memcpy.excessive").saving_ms == approx(0.05)
    f = two_gpus(lambda s, i, t: (s.kernel(t, 900, gpu=0), s.kernel(t, 900, gpu=1))).run("multigpu.copies")
    assert f.status == PASS


def test_multigpu_imbalance():
    f = two_gpus(lambda s, i, t: (s.kernel(t, 800, gpu=0), s.kernel(t, 500, gpu=1))).run("multigpu.imbalance")
    assert f.status == WARNING and f.metric("spread_pct") == approx(37.5)
    assert f.metric("compute_ms_per_step_gpu0") == approx(0.8) and f.saving_ms == approx(0.15)  # 800 - mean 650
    assert f.evidence[0].device_id == 0
    f = two_gpus(lambda s, i, t: (s.kernel(t, 800, gpu=0), s.kernel(t, 800, gpu=1))).run("multigpu.imbalance")
    assert f.status == PASS and f.metric("spread_pct") == 0


def test_multigpu_serialized_and_launch_skew():
    serial = two_gpus(lambda s, i, t: (s.kernel(t, 400, gpu=0), s.kernel(t + 400, 400, gpu=1)))
    f = serial.run("multigpu.serialized")
    assert f.status == WARNING and f.metric("serialization_index") == approx(1.0) and f.saving_ms == approx(0.4)
    f = serial.run("multigpu.launch-skew")  # the skew is the serialisation: info, pointing there
    assert f.status == INFO and "multigpu.serialized" in f.summary

    skew = two_gpus(lambda s, i, t: (s.kernel(t, 600, gpu=0), s.kernel(t + 100, 600, gpu=1)))
    f = skew.run("multigpu.launch-skew")
    assert f.status == WARNING and f.metric("skew_pct") == approx(10.0) and f.metric("skew_ms_per_step") == approx(0.1)
    f = skew.run("multigpu.serialized")  # union 700, sum 1200, max 600: (700-600)/(1200-600)
    assert f.status == PASS and f.metric("serialization_index") == approx(1 / 6)

    together = two_gpus(lambda s, i, t: (s.kernel(t, 600, gpu=0), s.kernel(t, 600, gpu=1)))
    assert together.run("multigpu.launch-skew").status == PASS
    assert together.run("multigpu.serialized").metric("serialization_index") == 0


def test_multigpu_idle_gpus():
    s = Sim(gpus=4)
    s.steps(4, 1000, lambda i, t: (s.kernel(t, 500, gpu=0), s.kernel(t, 500, gpu=2), s.h2d[1].memcpy("H2D", t, 10, 64)))
    f = s.run("multigpu.idle-gpus")
    assert f.status == WARNING and f.title == "Idle GPUs: 2 of 4 GPUs do no compute"
    assert "GPU 1 only copies" in f.summary and "GPU 3 has no events" in f.summary
    s = Sim(gpus=2)
    s.steps(4, 1000, lambda i, t: (s.kernel(t, 500, gpu=0), s.kernel(t, 500, gpu=1)))
    assert s.run("multigpu.idle-gpus").status == PASS
    s = Sim()
    s.steps(4, 1000, lambda i, t: s.kernel(t, 500))
    assert s.run("multigpu.idle-gpus").status == NOT_APPLICABLE


# -- the 8-GPU capture of issue 9 ----------------------------------------------------------------


@pytest.fixture(scope="module")
def bert():
    return analysis_of(scenarios.bert_8gpu())


def _checks(a):
    from tb_gpu_advisor.checks import run_checks
    from tb_gpu_advisor.measures import Measures

    findings, errors = run_checks(Measures(a))
    assert errors == []
    return {f.id: f for f in findings}


def test_bert_reader_sees_the_capture_as_described(bert):
    p = bert.profile
    assert len(p.threads) == 22 and len(p.devices) == 8
    assert not any((t.events.kind == 15).any() for t in p.threads)  # no CUDA API launch events
    assert sorted(bert.gpus) == [4, 6] and bert.copy_only == [1] and bert.idle == [0, 2, 3, 5, 7]
    for d in (4, 6):
        ev = bert.gpus[d].events
        assert int((ev.kind == 1).sum()) == 665
    assert [len(s.events) for s in p.device_streams(1)] == [19]


def test_bert_steps_are_per_gpu(bert):
    """Each working GPU is measured in its own saved Steps line (648 ms apart), not the lowest GPU's."""
    for d, (start_ms, step_ms, _) in scenarios.BERT_GPUS.items():
        s = bert.gpus[d].steps
        assert s.source == "device-steps-line" and len(s) == 1
        assert s.start_ps[0] / 1e9 == approx(start_ms) and s.dur_ps[0] / 1e9 == approx(step_ms)
    assert bert.gpus[6].steps.start_ps[0] - bert.gpus[4].steps.end_ps[0] == approx((2440.2 - 1792.6 - 19.87) * 1e9)


def test_bert_headline_over_the_gpus_that_compute(bert):
    h = bert.headline()
    per = {g["device_id"]: g for g in h["per_gpu"]}
    assert per[4]["device_busy_pct"] == approx(100 * 14903.6 / 19870)  # 75.0%
    assert per[6]["device_busy_pct"] == approx(100 * 14861 / 21310)  # 69.7%
    assert h["device_busy_pct"] == approx((100 * 14903.6 / 19870 + 100 * 14861 / 21310) / 2)
    assert h["compute_ms_per_step"] == approx((14.9036 + 14.861) / 2)  # 14.9, not 1.85 over all 8 GPUs
    # the profile plugin's 16-bit rule: the op's input dtype decides; Philox (int32[3]) and Cast
    # (float/bool -> half) kernels are not 16-bit although their names say Eigen::half
    assert h["fp16_compute_pct"] == approx(100 * 2 * 4544 / (14903.6 + 14861), rel=1e-4)  # 30.5%
    assert h["fp16_kernels"] == 2 * 284


def test_bert_findings_as_an_expert_would_give_them(bert):
    c = _checks(bert)
    f = c["multigpu.idle-gpus"]
    assert (
        f.status == WARNING and f.title == "Idle GPUs: 6 of 8 GPUs do no compute" and "GPU 1 only copies" in f.summary
    )
    f = c["multigpu.imbalance"]  # the two working GPUs differ by 0.3%
    assert f.status == PASS and f.metric("spread_pct") == approx(100 * (14903.6 - 14861) / 14903.6)
    f = c["multigpu.serialized"]  # their work is 648 ms apart
    assert f.status == WARNING and f.metric("serialization_index") == approx(1.0)
    assert c["multigpu.launch-skew"].status == NOT_APPLICABLE
    f = c["input.bound"]  # 11.5% on each working GPU, reported once
    assert f.status == WARNING and f.metric("input_pct") == approx(11.5)
    assert c["multigpu.input"].status == PASS and c["multigpu.input"].saving_ms is None
    f = c["kernels.launch-bound"]
    assert f.status == NOT_APPLICABLE and "launch events" in f.reason
    f = c["kernels.small"]
    assert f.metric("small_kernels_per_step") == 568 and f.metric("small_kernels_per_step_gpu6") == 568
    for check_id in ("precision.mixed-off", "precision.fp16-no-tensorcore", "tensorcore.unused"):
        assert c[check_id].status == NOT_APPLICABLE and "matmul" in c[check_id].reason
    assert c["memcpy.excessive"].status in (PASS, INFO) and c["host.thread-contention"].status == NOT_APPLICABLE
    # the top-ranked problem is a real one (not a false multigpu.imbalance)
    from tb_gpu_advisor.report import rank

    top = rank(list(c.values()))[0]
    assert top.id == "input.bound"


def test_bert_savings_within_their_steps(bert):
    for f in _checks(bert).values():
        if f.saving_ms is not None:
            assert f.saving_pct is not None and f.saving_pct <= 100 + 1e-9, f.id


def test_multigpu_batch_on_pytorch_memory_records(tmp_path):
    """PyTorch's `[memory]` records give the GPU's peak. The real V100 trace (PyTorch 1.8) records no
    totals: the peak is the running sum of its allocations during the capture, 2,791,636,480 bytes of
    34,084,028,416 (hand-counted in tests/test_pytorch.py), a lower bound, said as such. A current trace
    records `Total Allocated`: its largest value is the peak. The two real NCCL ranks were captured
    without profile_memory: not applicable, in PyTorch's words."""
    import json
    import os

    from tb_gpu_advisor.checks import run_checks
    from tb_gpu_advisor.formats.kineto.native import read_pytorch_trace_bytes
    from tb_gpu_advisor.measures import Measures
    from tb_gpu_advisor.model.analysis import analyse

    data = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "pytorch")

    def check(path: str, raw: bytes | None = None):
        raw = raw if raw is not None else open(path, "rb").read()
        return {f.id: f for f in run_checks(Measures(analyse(read_pytorch_trace_bytes(raw, path, "h"))))[0]}[
            "multigpu.batch"
        ]

    f = check(os.path.join(data, "resnet50_num_workers_0", "worker0.1623143089861.pt.trace.json.gz"))
    assert f.status == INFO and f.metric("peak_memory_pct") == pytest.approx(100 * 2791636480 / 34084028416)
    assert "at least 8%" in f.summary and "torch.cuda.max_memory_allocated" in f.recommendation
    f = check(os.path.join(data, "two_ranks_of_128", "rank0.1700000000000.pt.trace.json.gz"))
    assert f.status == NOT_APPLICABLE and "profile_memory=True" in f.summary
    events = [
        {"ph": "X", "cat": "kernel", "name": "sgemm", "pid": 0, "tid": 7, "ts": 110, "dur": 50,
         "args": {"device": 0, "stream": 7, "correlation": 1}},
        {"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": 120, "args": {"Device Type": 1, "Device Id": 0,
         "Bytes": 2**30, "Total Allocated": 30 * 2**30, "Total Reserved": 32 * 2**30}},
        {"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": 170, "args": {"Device Type": 1, "Device Id": 0,
         "Bytes": -(2**30), "Total Allocated": 29 * 2**30, "Total Reserved": 32 * 2**30}},
    ]  # fmt: skip
    doc = {"deviceProperties": [{"id": 0, "name": "NVIDIA A100-SXM4-40GB", "totalGlobalMem": 40 * 2**30,
           "computeMajor": 8, "computeMinor": 0, "numSms": 108}], "traceEvents": events}  # fmt: skip
    f = check("t.pt.trace.json", json.dumps(doc).encode())
    assert f.status == PASS and f.metric("peak_memory_pct") == pytest.approx(75.0) and "at least" not in f.summary
