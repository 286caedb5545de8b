"""A small report answers while a big PyTorch trace is read (issue 27: a 1 MB report waited 13.6 s
behind a 300 MB trace, whose parsing held the interpreter lock in the server's process). The plugin
reads PyTorch traces in other processes (engine.read_apart); its answers come back pickled, errors
too."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import threading
import time

import pytest
from tensorboard.backend import application
from tensorboard.plugins import base_plugin
from werkzeug import test, wrappers

from tb_gpu_advisor.common.errors import ProfileReadError
from tb_gpu_advisor.formats.discovery import PYTORCH_TRACE, HostFile
from tb_gpu_advisor.plugin import GpuAdvisorPlugin
from tb_gpu_advisor.report.engine import analyse_file, read_apart, read_file

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REAL = os.path.join(
    ROOT, "tests", "data", "pytorch", "resnet50_num_workers_4", "worker0.1623212756351.pt.trace.json.gz"
)
SMALL = os.path.join(ROOT, "demo_logs", "01_healthy")
BASE = "/data/plugin/gpu_advisor"


def big_trace(path: str, copies: int) -> None:
    """The real ResNet-50 trace (30.8 MB of JSON, 71,424 events) with its events repeated `copies` times,
    each copy after the previous one."""
    with gzip.open(REAL) as f:
        doc = json.load(f)
    events = doc["traceEvents"]
    timed = [e for e in events if e.get("ph") == "X" and e.get("cat") != "Trace"]
    span = max(e["ts"] + e.get("dur", 0) for e in timed) - min(e["ts"] for e in timed) + 1000
    out = [e for e in events if e.get("ph") != "X"]
    for k in range(copies):
        out += [{**e, "ts": e["ts"] + k * span} for e in timed]
    doc["traceEvents"] = out
    with open(path, "w") as f:
        json.dump(doc, f)


def test_a_cached_report_answers_while_a_big_trace_is_read(tmp_path):
    """While the plugin reads a 148 MB trace, a thread that wakes every millisecond is never held up
    for much longer than the machine's own noise, measured first: by at most a tenth of the read's
    own time; and cached reports keep answering at a quarter of their pace before it, at least.
    Measured in this setup, two runs each: reading in the server's process, the longest hold-up was 203
    and 490 ms of a read of about 2 s (orjson's parse holds the interpreter lock); read apart, 44 and 63
    ms of about 1.5 s (unpickling the Profile, the analysis). Both are relations measured in the same
    run: a slower or faster machine moves both sides (issue 48)."""
    big = tmp_path / "big" / "worker0.1.pt.trace.json"
    big.parent.mkdir()
    big_trace(str(big), 6)
    shutil.copytree(SMALL, tmp_path / "small")
    plugin = GpuAdvisorPlugin(base_plugin.TBContext(logdir=str(tmp_path)))
    c = test.Client(application.TensorBoardWSGI([plugin]), wrappers.Response)
    small = "?run=small/2026_11_22_10_00_00&host=gpu-worker-0"
    assert c.get(f"{BASE}/report{small}&wait=60").status_code == 200  # analysed and cached
    t0 = time.perf_counter()
    answer: dict = {}

    def ask_big() -> None:
        r = c.get(f"{BASE}/report?run=big&host=worker0.1&wait=60")
        answer["status"], answer["seconds"] = r.status_code, time.perf_counter() - t0

    def tick(gaps: list, running) -> None:  # how long this thread was kept from running
        last = time.perf_counter()
        while running():
            time.sleep(0.001)
            now = time.perf_counter()
            gaps.append(now - last - 0.001)
            last = now

    # the machine's own noise first (other work on it delays threads too), while cached reports are asked
    quiet: list = [0.0]
    start = time.perf_counter()
    until = start + 1.0
    ticker = threading.Thread(target=tick, args=(quiet, lambda: time.perf_counter() < until))
    ticker.start()
    asked_quiet = 0
    while ticker.is_alive():
        assert c.get(f"{BASE}/report{small}").status_code == 200
        asked_quiet += 1
        time.sleep(0.01)
    quiet_pace = asked_quiet / (time.perf_counter() - start)  # cached answers a second, nothing else read
    gaps: list = [0.0]
    asker = threading.Thread(target=ask_big)
    ticker = threading.Thread(target=tick, args=(gaps, lambda: asker.is_alive()))
    asker.start()
    ticker.start()
    answered = 0
    while asker.is_alive():
        assert c.get(f"{BASE}/report{small}").status_code == 200
        answered += 1
        time.sleep(0.01)
    asker.join()
    ticker.join()
    # the native reader reads the 148 MB in about 1.5 s here (the Python one took over 2 s): the cached
    # report answered meanwhile, at a pace near its own, and no thread was held up for long
    assert answer["status"] == 200 and answered >= 1
    assert answered / answer["seconds"] >= quiet_pace / 4, (answered, answer["seconds"], quiet_pace)
    assert max(gaps) < max(quiet) + answer["seconds"] / 10, (max(quiet), sorted(gaps)[-5:], answer["seconds"])


def test_errors_and_profiles_come_back_from_the_reading_process(tmp_path):
    path = tmp_path / "w.1.pt.trace.json"
    path.write_bytes(b"\x00" * 100)
    f = HostFile("r", "w", str(path), 100, None, PYTORCH_TRACE)
    with pytest.raises(ProfileReadError) as e:
        read_apart(f)
    assert e.value.path == str(path) and e.value.message.startswith("not a PyTorch trace: a trace is a JSON object")
    real = HostFile("r", "w", REAL, os.path.getsize(REAL), None, PYTORCH_TRACE)
    there, here = read_apart(real), read_file(real)
    assert there.event_count == here.event_count == 41_905
    assert there.warnings == here.warnings and there.capture_errors == here.capture_errors
    assert analyse_file(real, apart=True)[1]["steps"] == analyse_file(real)[1]["steps"]


def test_a_read_that_takes_too_long_is_given_up(tmp_path):
    """The reading process is killed after `timeout_s` and the file named in the error; nothing of it
    is left running."""
    import multiprocessing

    real = HostFile("r", "w", REAL, os.path.getsize(REAL), None, PYTORCH_TRACE)
    t = time.perf_counter()
    read_apart(real)
    whole = time.perf_counter() - t  # the whole read, on this machine
    t = time.perf_counter()
    with pytest.raises(ProfileReadError) as e:
        read_apart(real, timeout_s=0.05)
    assert e.value.message == "reading the trace took over 0 s; given up" and e.value.path == REAL
    assert time.perf_counter() - t < whole  # killed, not waited for
    assert not [p for p in multiprocessing.active_children() if p.name == "gpu_advisor_read"]
