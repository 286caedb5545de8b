"""The native Kineto reader (`_kineto.c` + native_reader.py) against the Python reader: identical
Profiles, table by table, on every PyTorch trace the tests have (real captures, demo runs, written
ones, the fuzz corpus, hand-made odd ones, random mutations), identical messages where both refuse,
and the fallback (TB_GPU_ADVISOR_PURE_PYTHON=1, or a file the native reader does not mirror)."""

from __future__ import annotations

import glob
import gzip
import json
import os

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from support.kineto_readers import assert_same, compare, native
from support.kineto_writer import ddp_job

from tb_gpu_advisor.formats.kineto import native as native_reader, text as kineto_text
from tb_gpu_advisor.model.profile import Profile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = os.path.join(ROOT, "tests", "corpus")
REAL = sorted(glob.glob(os.path.join(ROOT, "tests", "data", "pytorch", "*", "*.pt.trace.json.gz")))
DEMO = sorted(glob.glob(os.path.join(ROOT, "demo_logs", "*", "*.pt.trace.json*")))
SEEDS = sorted(glob.glob(os.path.join(CORPUS, "*.pt.trace.json*")))

pytestmark = pytest.mark.skipif(not native_reader.available(), reason="the native tokenizer is not built")


@pytest.mark.parametrize("path", REAL + DEMO, ids=os.path.basename)
def test_real_and_demo_traces_read_natively_and_the_same(path):
    """The real V100 and A100 traces (and the demo runs): read by the native reader itself, not its
    fallback, and equal to the Python reader's Profile."""
    data = open(path, "rb").read()
    assert compare(data, path) == "native"
    if "resnet50" in path:  # the allocator's records were compared too: these captures have them
        p = native(data, path)
        assert isinstance(p, Profile) and len(p.memory.start_ps) > 10_000
    inflated = gzip.decompress(data)  # plain JSON takes the other path (fed from the buffer in steps)
    assert compare(inflated, path.removesuffix(".gz")) == "native"


@pytest.mark.parametrize("path", SEEDS, ids=os.path.basename)
def test_fuzz_seeds_the_same(path):
    compare(open(path, "rb").read(), path)


def test_written_traces_the_same():
    for rank, w in ddp_job(4, steps=3).items():
        assert compare(w.to_bytes(gz=rank % 2 == 0), f"r{rank}.pt.trace.json") == "native"


def _doc() -> dict:
    with gzip.open(os.path.join(CORPUS, "torch_cpu.pt.trace.json.gz")) as f:
        return json.load(f)


def _gpu_doc() -> dict:
    with gzip.open(REAL[0]) as f:
        doc = json.load(f)
    doc["traceEvents"] = (
        doc["traceEvents"][:2000]
        + doc["traceEvents"][36000:38000]
        + [e for e in doc["traceEvents"] if e.get("cat") == "Trace"]
    )
    return doc


def _odd_docs():
    """Hand-made variants, each of a case one of the readers' rules treats apart."""
    d = _gpu_doc()
    ev = d["traceEvents"]
    kernels = [e for e in ev if e.get("cat", "").lower() == "kernel"]
    ops = [e for e in ev if e.get("cat", "").lower() in ("operator", "cpu_op")]
    kernels[0]["args"]["grid"] = [1, "2", 3.5]  # a digit string: the Python rule reads it
    kernels[1]["args"]["block"] = {"x": 1}
    kernels[2]["args"]["est. achieved occupancy %"] = True
    kernels[3]["args"]["est. achieved occupancy %"] = 250
    kernels[4]["args"]["stream"] = -3  # the stream from the tid
    kernels[4]["tid"] = "stream 9"
    kernels[5]["args"].pop("device")  # the device from the pid
    kernels[6]["args"]["device"] = 2**40  # skipped
    kernels[7]["dur"] = 1e13  # clamped
    kernels[8]["args"]["External id"] = None
    kernels[9]["args"]["registers per thread"] = 1.9e300
    for k, v in zip(kernels[10:16], (True, "0.5", -1, 0, 1e12, 3)):  # blocks per SM: only 3 is one
        k["args"]["blocks per SM"] = v
    ops[0]["args"]["Input type"] = ["c10::Half", "float"]
    ops[0]["args"]["Input Dims"] = [[2, 3], []]
    ops[1]["args"]["Input dims"] = [[4]]
    ops[2]["cat"] = None
    ev.append({"ph": "M", "name": "thread_name", "pid": "proc", "tid": "t\u00e9", "args": {"name": "worker"}})
    ev.append({"ph": "X", "name": "x", "cat": "cpu_op", "pid": "proc", "tid": "t\u00e9", "ts": ev[0]["ts"], "dur": 1})
    ev.append({"ph": "X", "name": "ProfilerStep#7", "cat": "user_annotation", "pid": 1, "tid": 2, "ts": ev[0]["ts"]})
    ev.append({"ph": "i", "name": "[memory]", "pid": 1, "tid": 2, "ts": ev[0]["ts"], "args": {"Device Type": 1}})
    yield "odd values", d, "native"
    d = _gpu_doc()
    d["distributedInfo"] = {"rank": 1, "world_size": 4}
    d["deviceProperties"] = [{"id": 0, "name": "AMD Instinct MI250X", "gcnArchName": "gfx90a"}]
    yield "rank and AMD", d, "native"
    d = _gpu_doc()
    d["traceEvents"][5] = [1, 2]  # an event that is not an object: unreadable, the Python reader says so
    yield "a list event", d, "fallback"
    d = _gpu_doc()
    d["traceEvents"][7]["ts"] = "soon"
    yield "a string ts", d, "fallback"
    d = _gpu_doc()
    d["traceEvents"][9]["pid"] = [1]
    yield "a list pid", d, "fallback"
    d = _doc()
    yield "torch cpu", d, "native"
    d = _doc()
    d["traceEvents"] = [e for e in d["traceEvents"] if e.get("cat") != "Trace"]
    yield "no profiler span", d, "native"
    yield "no events", {"traceEvents": []}, "refused"
    yield "no list", {"traceEvents": {}}, "refused"


@pytest.mark.parametrize("what,doc,how", list(_odd_docs()), ids=lambda x: x if isinstance(x, str) else "")
def test_odd_traces_the_same(what, doc, how):
    """Equal, read the expected way: the native rules mirror odd values; an unreadable event (which
    the Python reader names in a warning) sends the file to the Python reader."""
    text = json.dumps(doc).encode()
    assert compare(text) == how
    assert compare(gzip.compress(text), "t.pt.trace.json.gz") == how


@pytest.mark.parametrize(
    "text",
    [
        b'{"traceEvents": [], "traceEvents": []}',  # orjson: the last one
        b'{"traceEvents": [{"ph": "X", "ph": "X"}]}',
        b'{"traceEvents": [{"name": "a\\ud800"}]}',  # a lone surrogate
        b'{"traceEvents": [{"name": "\xed\xa0\x80"}]}',  # a surrogate in UTF-8
        b'{"traceEvents": [{"x": 1e400}]}',
        b'{"traceEvents": [{"x": 123456789012345678901234567890}]}',
        b'{"traceEvents": [{"x": 01}]}',
        b'{"traceEvents": [{"x": [1,]}]}',
        b'{"traceEvents": [{"x": "\x01"}]}',
        b'{"traceEvents": [{"x": tru}]}',
        b'{"traceEvents": []} x',
        b'{"traceEvents": [',
        b"   ",
        b"[1]",
        b"\xef\xbb\xbf{}",
        b'{"traceEvents": [{"ph": "X", "name": "k", "cat": "kernel", "pid": 0, "tid": "s", "ts": 1, "dur": 2,'
        b' "args": {"device": 0, "stream": 7, "grid": [1,1,1]}}]}',
    ],
)
def test_odd_json_the_same(text):
    compare(text)
    compare(gzip.compress(text), "t.pt.trace.json.gz")


def test_refusals_the_same():
    """Bombs and garbage: refused by the shared inflater with the same message, before any parsing."""
    blank = b"{" + b" " * (kineto_text.BLANK_RUN + 10) + b'"traceEvents": []}'
    cases = [
        (gzip.compress(blank), {}),
        (gzip.compress(b'{"traceEvents": [' + b"0," * (3 << 20) + b"0]}"), {"limit": 1 << 20}),
        (gzip.compress(b"{\x00}"), {}),
        (gzip.compress(b"PK\x03\x04"), {}),
        (gzip.compress(b"{}")[:-9], {}),
        (b"\x1f\x8b" + b"\x00" * 40, {}),
    ]
    for data, kw in cases:
        assert compare(data, "t.pt.trace.json.gz", **kw) == "refused"


def test_the_fallback_switch(monkeypatch):
    """TB_GPU_ADVISOR_PURE_PYTHON=1: the native reader is not asked."""
    data = open(REAL[-1], "rb").read()

    def refuse(*a, **k):
        raise AssertionError("asked")

    monkeypatch.setattr(native_reader, "read", refuse)
    monkeypatch.setenv("TB_GPU_ADVISOR_PURE_PYTHON", "1")
    assert native_reader.read_pytorch_trace_bytes(data, REAL[-1], "h").event_count > 0
    monkeypatch.delenv("TB_GPU_ADVISOR_PURE_PYTHON")
    with pytest.raises(AssertionError, match="asked"):
        native_reader.read_pytorch_trace_bytes(data, REAL[-1], "h")


def test_progress_is_told_in_bytes():
    data = gzip.decompress(open(REAL[0], "rb").read())
    seen: list[tuple[int, int]] = []
    native_reader.read(data, "t.pt.trace.json", "h", lambda d, t: seen.append((d, t)), 2**31, 60.0)
    assert seen and all(t == len(data) for _, t in seen) and seen[-1][0] == len(data)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)


_SMALL = open(os.path.join(CORPUS, "torch_cpu_small.pt.trace.json"), "rb").read()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, len(_SMALL) - 1), st.integers(0, 255), st.integers(0, 3)), max_size=4))
def test_mutations_the_same(edits):
    """Random byte edits of a real trace: equal Profiles, or equal messages."""
    data = bytearray(_SMALL)
    for at, byte, how in edits:
        at = min(at, len(data) - 1)
        if how == 0:
            data[at] = byte
        elif how == 1:
            del data[at]
        elif how == 2:
            data.insert(at, byte)
        else:
            data[at : at + 1] = b'"' if byte % 2 else b","
    compare(bytes(data))


def test_mapped_plain_file_read_through_the_engine(tmp_path, monkeypatch):
    """A plain JSON trace over several feed steps, mapped from disk as the engine reads it (its pages
    given back as it goes): the same Profile as the Python reader's, and the file is left unchanged."""
    from tb_gpu_advisor.formats.discovery import discover
    from tb_gpu_advisor.report.engine import read_file

    run = tmp_path / "run"
    run.mkdir()
    text = gzip.decompress(open(REAL[0], "rb").read())
    assert len(text) > 4 * kineto_text.CHUNK
    (run / "worker0.1.pt.trace.json").write_bytes(text)
    (f,) = discover(str(tmp_path))[0]
    q = read_file(f)
    monkeypatch.setenv("TB_GPU_ADVISOR_PURE_PYTHON", "1")
    p = read_file(f)
    assert_same(p, q)
    assert (run / "worker0.1.pt.trace.json").read_bytes() == text


def test_a_trace_captured_here_with_torch(tmp_path):
    """A fresh capture by torch's own profiler (CPU build; shapes, memory records and the profiler
    span as this torch writes them): read natively, and the same as the Python reader's."""
    import subprocess
    import sys

    pytest.importorskip("torch")
    subprocess.run(
        [sys.executable, os.path.join(ROOT, "scripts", "capture_torch_cpu.py"), str(tmp_path), "--steps", "2"]
        + ["--threads", "1", "--workers", "1"],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (path,) = glob.glob(str(tmp_path / "*" / "*.pt.trace.json*"))
    assert compare(open(path, "rb").read(), path) == "native"


def test_an_event_longer_than_many_pieces():
    """One event of 40 MB (a call stack): in a gzip it spans ten inflated pieces, is parsed again only
    as the text doubles, and reads as the Python reader reads it."""
    doc = _gpu_doc()
    op = next(e for e in doc["traceEvents"] if e.get("cat") == "Operator")
    op["args"]["Call stack"] = "f.py(1): g;" * ((40 << 20) // 11)
    text = json.dumps(doc).encode()
    assert len(text) > 10 * kineto_text.CHUNK
    assert compare(gzip.compress(text, 1), "t.pt.trace.json.gz") == "native"
