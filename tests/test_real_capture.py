"""A real profile captured during the test run with tensorflow-cpu (host side only)."""
import os
import subprocess
import sys

import pytest

from tb_gpu_advisor.analysis import analyse
from tb_gpu_advisor.discovery import discover
from tb_gpu_advisor.profile import Kind
from tb_gpu_advisor.steps import SOURCE_HOST
from tb_gpu_advisor.xplane.reader import read_profile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STEPS = 6


def _capture(tmp_path_factory, name: str, *args: str):
    pytest.importorskip("tensorflow")
    logdir = tmp_path_factory.mktemp(name)
    cmd = [sys.executable, os.path.join(ROOT, "scripts", "capture_tf_cpu.py"), str(logdir), "--steps", str(STEPS), *args]
    subprocess.run(cmd, check=True, capture_output=True, timeout=300)
    files, _ = discover(str(logdir))
    assert len(files) == 1
    return files[0]


@pytest.fixture(scope="module")
def capture(tmp_path_factory):
    """The pipeline's map sleeps 20 ms per batch: input-bound."""
    return _capture(tmp_path_factory, "tf_slow_map", "--slow-map-ms", "20")


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    """The guide's synthetic-data experiment: the same model on random in-memory data."""
    return _capture(tmp_path_factory, "tf_synthetic", "--synthetic")


def test_real_capture_is_read(capture):
    assert capture.run.startswith("train/") and capture.size > 10_000
    p = read_profile(capture.path)
    names = {t.name.split("/")[0] for t in p.threads}
    assert {"python", "tf_Compute", "tf_data_iterator_get_next"} <= names
    assert p.devices == []  # tensorflow-cpu: no GPU plane
    host = p.host_events()
    ops = host.take(host.kind == Kind.FRAMEWORK_OP)
    op_types = {p.op_type(o) for o in ops.op}
    assert {"MatMul", "AddV2"} & op_types or any("MatMul" in t for t in op_types)
    assert (host.kind == Kind.INPUT_WAIT).sum() >= STEPS
    stages = {p.names[n] for n in host.name[host.kind == Kind.INPUT_STAGE]}
    assert any(s.startswith("Iterator::Root::Prefetch") for s in stages)
    assert any("Map" in s for s in stages)


def test_real_capture_every_step_found(capture):
    a = analyse(read_profile(capture.path))
    assert a.steps.source == SOURCE_HOST and a.steps.marker == "Profiled batch"
    assert len(a.steps) == STEPS
    assert list(a.steps.number) == sorted(a.steps.number) and len(set(a.steps.number)) == STEPS
    # the map sleeps 20 ms per batch: much of each step waits for input
    b = a.breakdown_ms()
    assert b["host_input_wait"] > 5.0
    assert sum(b.values()) == pytest.approx(a.steps.summary()["mean_ms"], rel=1e-9)


def test_synthetic_data_experiment(capture, synthetic):
    """input.bound is critical with the slow map, passes on synthetic data, and the step time drops."""
    from tb_gpu_advisor.checks import run_checks

    slow_a, syn_a = analyse(read_profile(capture.path)), analyse(read_profile(synthetic.path))
    slow = {f.id: f for f in run_checks(slow_a)[0]}["input.bound"]
    syn = {f.id: f for f in run_checks(syn_a)[0]}["input.bound"]
    assert slow.status == "critical" and slow.metric("input_pct") >= 20
    assert syn.status == "pass" and syn.metric("input_pct") < 5
    assert syn_a.steps.summary()["mean_ms"] < slow_a.steps.summary()["mean_ms"] - slow.metric("input_ms_per_step") / 2


def test_capture_without_step_markers_uses_keras_step_functions(tmp_path_factory):
    """tf.profiler.experimental.start/stop around fit: no markers, one multi_step_on_iterator per step."""
    from tb_gpu_advisor.steps import SOURCE_FUNCTIONS

    f = _capture(tmp_path_factory, "tf_no_callback", "--no-callback", "--slow-map-ms", "20")
    a = analyse(read_profile(f.path))
    assert a.steps.source == SOURCE_FUNCTIONS and a.steps.marker == "multi_step_on_iterator"
    assert len(a.steps) == STEPS
    assert a.breakdown_ms()["host_input_wait"] > 5.0
