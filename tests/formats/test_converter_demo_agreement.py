"""Every demo run against the profile plugin's own converter (on the file's bytes with a scratch path):
the writer makes files the converter reads as real captures, finding the same steps, and where both
measure the same thing the numbers agree within 1%. Where they differ, the test shows both numbers
and why (each reason checked against the raw events).

What the converter measures (tensorboard-plugin-profile 2.24, learned from these files):
- Its GPU step is the span of a step's device work (first start to last end), or, when a host event
  of the step that it takes as a step marker (`ExecutorState::Process`) spans all of that, the host
  event's span; the advisor's step runs from one host step marker to the next, so it also holds the
  idle time between steps. Both are compared on the converter's terms.
- With more than five steps it leaves out the first and the last.
- Its "device compute" per step counts host-device copies as compute: the union of kernels, memsets
  and copies; its 16-bit share divides by that time too.
- It attributes kernels to ops only from `tf_op`, not from the older `annotation`, so on such files
  the kernel's name decides 16-bit; and XLA kernels without the module's HLO proto count as 32-bit.
- On several GPUs it merges the GPUs' steps into one timeline, so its per-step figures are not any
  one GPU's.
"""

import os

import numpy as np
import pytest
from conftest import convert, converter_percent
from support import scenarios

from tb_gpu_advisor.formats.discovery import XPLANE, discover
from tb_gpu_advisor.formats.xplane.reader import read_profile_bytes
from tb_gpu_advisor.measures import Measures
from tb_gpu_advisor.model import intervals as iv
from tb_gpu_advisor.model.analysis import analyse
from tb_gpu_advisor.model.profile import Flag, Kind

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEMO = os.path.join(ROOT, "demo_logs")
FILES = {
    f"{f.run.split('/')[0]}:{f.host}": f.path
    for f in discover(DEMO)[0]
    if not f.run.startswith("tf_cpu_capture") and f.kind == XPLANE
}
SINGLE_GPU = sorted(k for k in FILES if k[:2] in {"01", "02", "03", "04", "05", "06", "07", "08", "09", "10", "11"})
COPIES = (Kind.KERNEL, Kind.MEMSET, Kind.MEMCPY_H2D, Kind.MEMCPY_D2H, Kind.COLLECTIVE)


@pytest.fixture(scope="module")
def both():
    cache = {}

    def get(key):
        if key not in cache:
            data = open(FILES[key], "rb").read()
            overview = {}
            for t in convert(data, "overview_page"):
                overview.update(t.get("p", {}))
            steps = []
            for t in convert(data, "input_pipeline_analyzer"):
                if t.get("rows") and any(c["id"] == "stepnum" for c in t.get("cols", [])):
                    cols = [c["id"] for c in t["cols"]]
                    steps = [dict(zip(cols, [c.get("v") for c in r["c"]])) for r in t["rows"]]
            a = analyse(read_profile_bytes(data, FILES[key], key))
            cache[key] = (data, overview, steps, a, Measures(a))
        return cache[key]

    return get


@pytest.mark.parametrize("key", sorted(FILES))
def test_converter_finds_the_same_steps(key, both):
    _, _, steps, a, _ = both(key)
    ours = [int(x) for x in a.steps.number]
    kept = ours[1:-1] if len(ours) > 5 else ours
    if key.startswith("17_"):
        # GPU 4 and GPU 6 each run one step of their own; the converter merges them into one step
        assert len(steps) == 1 and sorted(len(g.steps) for g in a.gpus.values()) == [1, 1]
        return
    assert [int(s["stepnum"]) for s in steps] == kept


def converter_step_time(a, g, i: int) -> float:
    """The converter's step time, from the raw events: the span of step i's device work, or the
    longest ExecutorState::Process of the step that spans all of it."""
    first, last = g.work_bounds
    lo, hi = int(first[i]), int(last[i])
    h = a.host
    name = a.profile.names.get("ExecutorState::Process")
    sel = (h.name == name) & (h.step == i) & (h.start_ps <= lo) & (h.end_ps >= hi)
    return float(h.dur_ps[sel].max()) if sel.any() else float(hi - lo)


@pytest.mark.parametrize("key", SINGLE_GPU)
def test_step_time_and_compute_agree(key, both):
    """The converter's step time as worked out from the raw events; its device compute, our union of
    kernels, memsets and copies per step: equal within 1% on every step it keeps."""
    _, _, steps, a, m = both(key)
    g = m.gpus[0]
    ev = a.gpus[g.id].events
    sel = np.isin(ev.kind, np.asarray(COPIES, np.int8))
    busy = iv.measure_in(iv.union(ev.start_ps[sel], ev.end_ps[sel]), g.steps.start_ps, g.steps.end_ps)
    index = {int(n): i for i, n in enumerate(g.steps.number)}
    for s in steps:
        i = index[int(s["stepnum"])]
        if key.startswith("02_"):
            # here the converter's step also holds the host's input wait, by a rule we could not derive
            # from the events (22.74 ms in step 1, against a device span of 9.31 ms and 23.45 ms from
            # marker to marker): both are shown, and only the order is asserted
            assert float(s["stepTimeMs"]) * 1e9 > 2 * g.device_span_per_step[i], (key, i)
        else:
            assert float(s["stepTimeMs"]) == pytest.approx(converter_step_time(a, g, i) / 1e9, rel=0.01), (key, i)
        assert float(s["deviceComputeTimeMs"]) == pytest.approx(busy[i] / 1e9, rel=0.01), (key, i)
    # the advisor's own step (marker to marker) is at least the device span: it holds the gaps too
    assert (g.steps.dur_ps >= g.device_span_per_step).all()


@pytest.mark.parametrize("key", sorted(FILES))
def test_kernel_count_and_time_agree(key, both, converter):
    data, _, _, a, _ = both(key)
    table = converter(data, "kernel_stats")
    cols = [c["id"] for c in table["cols"]]
    theirs: dict = {}
    for row in table["rows"]:
        r = dict(zip(cols, [c["v"] for c in row["c"]]))
        n, us = theirs.get(r["kernel_name"], (0, 0.0))
        theirs[r["kernel_name"]] = (n + r["occurrences"], us + r["total_duration_us"])
    ours: dict = {}
    for g in a.gpus.values():
        k = g.events.take(np.isin(g.events.kind, np.array([Kind.KERNEL, Kind.COLLECTIVE], np.int8)))
        for name, d in zip(k.name.tolist(), k.dur_ps.tolist()):
            n, us = ours.get(a.profile.names[name], (0, 0.0))
            ours[a.profile.names[name]] = (n + 1, us + d / 1e6)
    assert set(ours) == set(theirs)
    for name, (n, us) in ours.items():
        assert n == theirs[name][0] and us == pytest.approx(theirs[name][1], rel=0.01), name


# Why the 16-bit shares differ, per run (the numbers are checked below):
# copies: the converter's denominator holds the host-device copies;
# xla: XLA kernels with no HLO proto in the file count as 32-bit for the converter;
# annotation: the converter reads no `annotation`, so the kernels' names (all Eigen::half) decide.
SIXTEEN_BIT_REASON = {"02": "copies", "07": "copies", "11": "xla", "17": "annotation", "18": "copies", "19": "copies"}


@pytest.mark.parametrize("key", sorted(FILES))
def test_16bit_share(key, both):
    _, overview, _, a, m = both(key)
    theirs = converter_percent([{"p": overview}], "device_compute_16bit_percent")
    ours = a.headline()["fp16_compute_pct"] or 0.0
    reason = SIXTEEN_BIT_REASON.get(key[:2])
    active = [a.gpus[g.id].events for g in m.gpus]
    f16 = sum(float(ev.dur_ps[((ev.flags & Flag.FP16) != 0) & (ev.kind == Kind.KERNEL)].sum()) for ev in active)
    with_copies = sum(float(ev.dur_ps[np.isin(ev.kind, np.array([1, 7, 3, 4], np.int8))].sum()) for ev in active)
    if reason is None and len(m.gpus) == 1:
        assert theirs == pytest.approx(ours, abs=1.0), key
    elif reason == "copies":
        assert theirs == pytest.approx(100 * f16 / with_copies, abs=1.0) and ours > theirs + 3, (key, theirs, ours)
    elif reason == "xla":
        assert theirs == 0.0 and ours == pytest.approx(75.8, abs=0.5), (key, theirs, ours)
    elif reason == "annotation":
        assert theirs == 100.0 and ours == pytest.approx(30.5, abs=0.1), (key, theirs, ours)
    else:  # several GPUs: the converter's share is over its merged steps; with copies, below ours
        assert 100 * f16 / with_copies - 2.5 <= theirs <= ours + 0.1, (key, theirs, ours)


def test_8gpu_capture_16bit_share_agrees_when_the_converter_can_read_the_ops(converter):
    """The same capture with `tf_op` attribution: the converter, like the Profile tab on the real file,
    says 30.5%, and so does the advisor."""
    from support.xplane_writer import ProfileWriter

    w = ProfileWriter("bert-8gpu-host", fmt="new", group_ids=True)
    scenarios.make_demo_logs.bert_partial_capture(w)
    data = w.to_bytes()
    theirs = converter_percent(converter(data, "overview_page"), "device_compute_16bit_percent")
    ours = analyse(read_profile_bytes(data, "bert", "h")).headline()["fp16_compute_pct"]
    assert theirs == pytest.approx(30.5, abs=0.05) and ours == pytest.approx(theirs, abs=0.1)
