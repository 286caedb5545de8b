"""Files that change while they are read (issue 38): a capture written again to the same path, a copy
over it, a file cut short. XSpace files were memory-mapped, and a mapped file that shrinks under the
scanner faults the process: `Fatal Python error: Bus error`, the whole TensorBoard server gone. Now
a local file is read with pread, never mapped (formats.base.LocalFile), every read checked against
the size the file was opened with, and its size and times checked once read: a file that changed
gives that run one clear error, "the file changed while it was read; read it again", and nothing
else."""

from __future__ import annotations

import gzip
import os
import random
import shutil
import sys
import threading
import time

import pytest

from tb_gpu_advisor import formats
from tb_gpu_advisor.common.errors import ProfileReadError
from tb_gpu_advisor.formats import base
from tb_gpu_advisor.formats.base import CHANGED, LocalFile
from tb_gpu_advisor.formats.discovery import PYTORCH_TRACE, XPLANE, HostFile, prefetch, read_bytes
from tb_gpu_advisor.formats.kineto.native import read_pytorch_trace_bytes
from tb_gpu_advisor.report import engine

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REAL_TRACE = os.path.join(
    ROOT, "tests", "data", "pytorch", "resnet50_num_workers_0", "worker0.1623143089861.pt.trace.json.gz"
)
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))


def xspace(path: str, copies: int = 60) -> bytes:
    """The read benchmark's four-GPU scenario replicated `copies` times (60: 5.3 MB, 98,000 events)."""
    import read_benchmark

    read_benchmark.build(path, copies)
    with open(path, "rb") as f:
        return f.read()


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """(XSpace bytes, a plain PyTorch trace's bytes, its gzip's bytes), made once."""
    d = tmp_path_factory.mktemp("changing")
    with gzip.open(REAL_TRACE) as f:
        trace = f.read()
    with open(REAL_TRACE, "rb") as f:
        gz = f.read()
    return xspace(str(d / "x.xplane.pb")), trace, gz


# --- the file read: never a fault, a clear error ---------------------------------------------------


def changed(read) -> str:
    with pytest.raises(ProfileReadError) as e:
        read()
    return e.value.message


@pytest.mark.parametrize("cut", [0, 1, 4096, 1_000_000])
def test_a_file_cut_short_after_it_was_opened(tmp_path, files, cut):
    """Opened at its whole size, cut before (or while) it is read: every reader says it changed; none
    faults. (Mapped, the scan of the cut pages was SIGBUS.)"""
    data, trace, gz = files
    for name, content, kind in (("h.xplane.pb", data, XPLANE), ("w.pt.trace.json", trace, PYTORCH_TRACE),
                                ("w.pt.trace.json.gz", gz, PYTORCH_TRACE)):  # fmt: skip
        path = tmp_path / name
        path.write_bytes(content)
        f = HostFile("r", "h", str(path), len(content), None, kind)
        src = read_bytes(str(path))
        os.truncate(path, cut)
        read = formats.by_name(kind).read
        assert changed(lambda: read(src, f.path, "h", None, None, None)) == CHANGED, name  # noqa: B023


def test_a_file_cut_before_it_is_opened_reads_as_its_bytes_do(tmp_path, files):
    """Read from the file (in pieces, through one buffer) or from its bytes, a trace cut anywhere gives
    the same answer: the streamed reader once took the end of an earlier read for the rest of the
    text (the server's test saw a trace cut at 5.66 MB read as a trace of 5,414 events)."""
    trace = files[1]
    path = tmp_path / "w.pt.trace.json"
    for cut in (1, 100, 4_194_000, 4_194_304 + 1000, 5_661_934, len(trace) - 2):
        path.write_bytes(trace[:cut])
        answers = []
        for data in (trace[:cut], read_bytes(str(path))):
            try:
                answers.append(read_pytorch_trace_bytes(data, "t", "h").event_count)
            except ProfileReadError as e:
                answers.append(e.message)
        assert answers[0] == answers[1] and isinstance(answers[0], str), (cut, answers)


def test_the_scan_started_ahead_says_so_too(tmp_path, files, monkeypatch):
    """The command starts the XSpace scan on a thread while it imports the analysis (discovery.prefetch):
    a file cut while that thread reads it gives the same error, from the reader."""
    data = files[0]
    path = tmp_path / "h.xplane.pb"
    path.write_bytes(data)
    real = os.preadv

    def preadv(fd, buffers, offset):
        os.truncate(path, 1000)  # cut as the thread reads
        return real(fd, buffers, offset)

    monkeypatch.setattr(base.os, "preadv", preadv)
    f = HostFile("r", "h", str(path), len(data), None, XPLANE)
    pre = prefetch(f)
    assert pre is not None and changed(lambda: engine.read_file(f, prefetched=pre)) == CHANGED


def test_a_file_written_again_while_read(tmp_path, files, monkeypatch):
    """Overwritten in place after the first piece was read (same size, other bytes: a `cp` over it):
    the snapshot and the pieces say it changed; a file replaced by a rename is not a change (the
    reader keeps the whole file it opened)."""
    data, trace, _ = files
    path = tmp_path / "h.xplane.pb"
    path.write_bytes(data)
    monkeypatch.setattr(base, "PIECE", 1 << 20)
    real = os.preadv
    calls = []

    def preadv(fd, buffers, offset):
        calls.append(offset)
        if len(calls) == 2:  # between the first piece and the second: written again, same size
            with open(path, "r+b") as f:
                f.write(b"\x00" * 4096)
        return real(fd, buffers, offset)

    monkeypatch.setattr(base.os, "preadv", preadv)
    assert changed(LocalFile(str(path)).snapshot) == CHANGED and len(calls) == -(-len(data) // (1 << 20))
    monkeypatch.setattr(base.os, "preadv", real)
    trace_path = tmp_path / "w.pt.trace.json"
    trace_path.write_bytes(trace)
    src = LocalFile(str(trace_path))
    pieces = src.pieces(1 << 20)
    next(pieces)
    trace_path.write_bytes(trace[::-1])  # truncated and written again: another file of the same size
    assert changed(lambda: list(pieces)) == CHANGED
    # replaced by a rename: the file opened is read whole, as it was
    path.write_bytes(data)
    src = LocalFile(str(path))
    os.rename(tmp_path / "h.xplane.pb", tmp_path / "old")
    (tmp_path / "new").write_bytes(b"other")
    os.rename(tmp_path / "new", path)
    assert bytes(src.snapshot()) == data


def test_a_fifo_is_not_read(tmp_path):
    fifo = tmp_path / "h.xplane.pb"
    os.mkfifo(fifo)
    assert changed(lambda: read_bytes(str(fifo))) == "not a regular file"


def test_a_file_that_changed_is_read_again_when_asked_again(tmp_path, monkeypatch):
    """A file system whose times are too coarse to tell the version read from the next: the run's
    error is kept for RETRY_CHANGED_S, then the next request reads the file again."""
    from tb_gpu_advisor.serve import service as service_mod
    from tb_gpu_advisor.serve.service import DONE, ERROR, AdvisorService

    d = tmp_path / "run" / "plugins" / "profile" / "s"
    d.mkdir(parents=True)
    shutil.copy(os.path.join(ROOT, "demo_logs", "01_healthy", "plugins", "profile", "2026_11_22_10_00_00",
                             "gpu-worker-0.xplane.pb"), d / "h.xplane.pb")  # fmt: skip
    real = engine.analyse_file
    calls = []

    def analyse_file(f, *a, **kw):
        calls.append(f.path)
        if len(calls) == 1:
            raise ProfileReadError(f.path, CHANGED)
        return real(f, *a, **kw)

    monkeypatch.setattr(service_mod.engine, "analyse_file", analyse_file)
    monkeypatch.setattr(service_mod, "RETRY_CHANGED_S", 0.3)
    svc = AdvisorService(str(tmp_path), workers=1, apart=False)
    (f,) = svc.find("run/s", "h")
    e = svc.get(f, 10, full=True)
    assert e.state == ERROR and e.error == f"run/plugins/profile/s/h.xplane.pb: {CHANGED}"
    assert svc.get(f, 10, full=True) is e  # kept a while: a panel polling it shows the error
    time.sleep(0.4)
    again = svc.get(f, 10, full=True)
    assert again is not e and again.state == DONE and len(calls) == 2


# --- the server, while files change under it ------------------------------------------------------

TRIES = 50
CLEAR = (
    CHANGED,
    "the file is empty",
    "not a readable XSpace profile: the file ends in the middle of a record",
    "not a readable XSpace profile: ",
    "not a readable PyTorch trace (JSON: ",
    "not a PyTorch trace: ",
    "no host or GPU events in the trace",
)


def _change(path: str, content: bytes, how: str, after_s: float) -> None:
    time.sleep(after_s)
    if how == "truncate":  # cut short, as a capture being written again is
        os.truncate(path, random.randrange(len(content)))
    else:  # `cp` over it: cut to nothing, then written again
        with open(path, "r+b") as f:
            f.truncate(0)
            f.write(content)


def _ask(tb, run: str, host: str | None) -> str | None:
    """The run's analysis asked until it is done: None for a report, else the error it shows. With a
    host, the full analysis (XSpace: read in the server's own process); without, the all-hosts
    view's report (made in a worker process)."""
    import json

    deadline = time.monotonic() + 120
    while True:
        params = {"run": run, "wait": 10, **({"host": host} if host else {})}
        status, _, body = tb.get("/data/plugin/gpu_advisor/report", **params)
        if status != 202 or time.monotonic() > deadline:
            break
    if host:
        assert status in (200, 422), (status, body[:300])
        return None if status == 200 else json.loads(body)["error"]["message"]
    assert status == 200, (status, body[:300])
    [report] = json.loads(body)["reports"]
    return None if report["failure"] is None else report["errors"][0]


@pytest.mark.parametrize("kind", ["xspace", "pytorch"])
def test_the_server_survives_files_changing_while_it_reads_them(tmp_path, files, kind):
    """TRIES runs whose file (one inode, hard-linked into every run) is cut short or copied over at a
    random moment after its analysis was asked for: the XSpace file's full analysis (read in the
    server's process, where a mapped file that shrank was SIGBUS), the PyTorch trace's report (read
    in a worker process, which died: "out of memory, or killed"). Every later request is answered,
    each run shows its report or one clear error (no traceback, no server path), and once the file
    is whole again a fresh request analyses it."""
    from test_tensorboard_server import TensorBoard

    data, trace, _ = files
    content, name = (data, "h.xplane.pb") if kind == "xspace" else (trace, "w.1.pt.trace.json")
    host = "h" if kind == "xspace" else None
    logdir = tmp_path / "logs"
    first = None
    runs = []
    for i in range(TRIES + 1):
        folder = logdir / f"r{i:02d}" / ("plugins/profile/s" if kind == "xspace" else "")
        folder.mkdir(parents=True)
        target = str(folder / name)
        if first is None:
            first = target
            with open(first, "wb") as f:
                f.write(content)
        else:
            os.link(first, target)
        runs.append(f"r{i:02d}/s" if kind == "xspace" else f"r{i:02d}")
    tb = TensorBoard(str(logdir), advisor_only=True)
    try:
        assert tb.get("/data/plugin/gpu_advisor/runs")[0] == 200
        random.seed(38)
        outcomes = []
        for i, run in enumerate(runs[:TRIES]):
            how = "truncate" if i % 2 else "copy"
            after = random.uniform(0, 0.3) if i % 3 else random.uniform(0, 0.03)  # as the analysis starts
            changer = threading.Thread(target=_change, args=(first, content, how, after))
            if i % 5 == 0:  # cut before it is asked for: its error shown, every time
                os.truncate(first, random.randrange(len(content)))
            else:
                changer.start()
            message = _ask(tb, run, host)
            if i % 5 == 0:
                assert message is not None and CHANGED not in message, (i, message, os.path.getsize(first))
            else:
                changer.join()
            assert tb.proc.poll() is None, f"the server died on try {i}: see {tb.log.name}"
            if message is None:
                outcomes.append("report")
            else:
                assert any(c in message for c in CLEAR), message
                assert "killed" not in message and "Traceback" not in message and str(tmp_path) not in message
                outcomes.append("changed" if CHANGED in message else "cut")
            with open(first, "r+b") as f:  # whole again for the next try
                f.truncate(0)
                f.write(content)
            assert tb.get("/data/plugin/gpu_advisor/runs")[0] == 200  # every later request answered
        print(kind, {o: outcomes.count(o) for o in set(outcomes)})
        assert len(outcomes) == TRIES and outcomes.count("report") <= TRIES - TRIES // 5, outcomes
        # whole again: a fresh request (the next discovery sees the file's new time) analyses it
        time.sleep(5.5)
        assert _ask(tb, runs[0], host) is None
        assert _ask(tb, runs[TRIES], host) is None
    finally:
        tb.stop()


def _step_ms(tb, run: str, host: str | None) -> float:
    """The run's mean step, from its full report (with a host) or the all-hosts view's summary."""
    import json

    deadline = time.monotonic() + 120
    while True:
        status, _, body = tb.get(
            "/data/plugin/gpu_advisor/report", run=run, wait=10, **({"host": host} if host else {})
        )
        if status != 202 or time.monotonic() > deadline:
            break
    assert status == 200, (status, body[:300])
    doc = json.loads(body)
    return (doc if host else doc["reports"][0])["steps"]["mean_ms"]


def test_a_file_replaced_then_restored_answers_with_the_file_on_disk(tmp_path):
    """Issue 51: the tab's cache was keyed by discovery's (path, size, mtime), listed up to 5 s
    before: a profile replaced right after it was listed was analysed under the old file's key, and
    once the old file was put back with its old size and time (`mv` of a kept copy, `cp -p`) the tab
    answered with the other file's analysis indefinitely. An entry now keeps what identifies the
    bytes it read (device, inode, size, modification and change times, from the file opened) and is
    checked against the file on disk before it answers: in a real TensorBoard, the full report and
    the all-hosts view answer with the file now on disk."""
    import json

    from test_tensorboard_server import TensorBoard

    original = os.path.join(ROOT, "tests", "corpus", "torch_cpu_small.pt.trace.json")
    with open(original) as f:
        doc = json.load(f)
    for e in doc["traceEvents"]:  # the other file: every event three times as long
        for k in ("ts", "dur"):
            if isinstance(e.get(k), (int, float)):
                e[k] = e[k] * 3
    other = tmp_path / "other.pt.trace.json"
    other.write_text(json.dumps(doc))
    logdir = tmp_path / "logs"
    for run in ("warm", "r"):
        (logdir / run).mkdir(parents=True)
        shutil.copy2(original, logdir / run / "w.1.pt.trace.json")
    path = str(logdir / "r" / "w.1.pt.trace.json")
    tb = TensorBoard(str(logdir), advisor_only=True)
    try:
        a = _step_ms(tb, "warm", "w.1")  # the original's step; the workers started
        assert abs(_step_ms(tb, "warm", None) - a) < 1e-9
        for host in ("w.1", None):  # the full report, then the all-hosts view's (made in a worker)
            shutil.copy2(path, tmp_path / "kept")  # `cp -p`: the original's size and modification time
            assert tb.get("/data/plugin/gpu_advisor/runs")[0] == 200  # listed: the original
            shutil.copy2(other, tmp_path / "incoming")
            os.replace(tmp_path / "incoming", path)  # replaced right after it was listed
            b = _step_ms(tb, "r", host)
            assert abs(b / a - 3) < 0.01, (a, b)  # the file on disk: the other one
            os.replace(tmp_path / "kept", path)  # the original back, its size and time as listed
            assert abs(_step_ms(tb, "r", host) - a) < 1e-9, host  # the file on disk: the original
            time.sleep(5.5)  # listed again: the same answer
            assert abs(_step_ms(tb, "r", host) - a) < 1e-9, host
            assert tb.proc.poll() is None
    finally:
        tb.stop()
