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


@pytest.fixture(scope="module")
def capture(tmp_path_factory):
    pytest.importorskip("tensorflow")
    logdir = tmp_path_factory.mktemp("tf_capture")
    cmd = [sys.executable, os.path.join(ROOT, "scripts", "capture_tf_cpu.py"), str(logdir),
           "--steps", str(STEPS), "--slow-map-ms", "10"]  # fmt: skip
    subprocess.run(cmd, check=True, capture_output=True, timeout=300)
    files, _ = discover(str(logdir))
    assert len(files) == 1
    return files[0]


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
    # the map sleeps 10 ms per batch: most of each step waits for input
    b = a.breakdown_ms()
    assert b["host_input_wait"] > 5.0
    assert sum(b.values()) == pytest.approx(a.steps.summary()["mean_ms"], rel=1e-9)
