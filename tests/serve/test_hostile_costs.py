"""What a hostile file may cost (issue 38): the cost of a file is in what it holds, not its size. A
6.6 MB gzip of one event repeated inflates to 1.9 GB (under the 2 GiB limit: it cost 56.8 s and
9.4 GB); 200,000 empty XSpace lines are 2.8 MB (45 s and 948 MB). Each is refused from what it
projects (its events as they are inflated; its lines from the file's header), in the command and in
a TensorBoard server, in less time than twice an ordinary 31 MB trace's analysis there (measured in
the same run: a number of seconds would be this machine's) and within 300 MB; and the plugin's cache
counts what an analysis holds (measured: within 2x of tracemalloc's figure) so that its budget means
what it says."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

import refusal_benchmark  # noqa: E402
from support import hostile_profile  # noqa: E402

from tb_gpu_advisor.common.errors import ProfileReadError  # noqa: E402
from tb_gpu_advisor.formats.base import MAX_LINES  # noqa: E402
from tb_gpu_advisor.formats.kineto.native import read_pytorch_trace_bytes  # noqa: E402
from tb_gpu_advisor.formats.xplane import scan  # noqa: E402

RAISE = "raise TB_GPU_ADVISOR_MAX_PROFILE_MB (TensorBoard: --gpu_advisor_max_profile_mb) to read it"
LINES = f"not a profile the advisor reads: it has over {MAX_LINES:,} lines (threads and streams), where profilers write a few hundred"


ORDINARY = os.path.join(
    ROOT, "tests", "data", "pytorch", "resnet50_num_workers_0", "worker0.1623143089861.pt.trace.json.gz"
)


@pytest.fixture(scope="module")
def logdir(tmp_path_factory):
    """Issue 38's two runs: the 1.9 GB-inflating gzip and the 200,000 empty lines; and an ordinary run
    to hold their costs against (the V100 ResNet-50 trace, 31 MB of JSON)."""
    work = str(tmp_path_factory.mktemp("costs"))
    refusal_benchmark.hostile_logdir(work, 1.9, 200_000)
    ordinary = os.path.join(work, "logdir", "ordinary")
    os.makedirs(ordinary)
    shutil.copy(ORDINARY, os.path.join(ordinary, os.path.basename(ORDINARY)))
    return os.path.join(work, "logdir")


def test_the_dense_gzip_is_refused_from_what_it_projects(logdir):
    path = os.path.join(logdir, "dense", "w.1.pt.trace.json.gz")
    assert os.path.getsize(path) < 7 << 20
    with gzip.open(path) as f:  # the trailer tells the truth: 1.9e9 bytes, under the 2 GiB limit
        f.seek(0, 2)
        assert 1.8e9 < f.tell() < 2**31
    with pytest.raises(ProfileReadError) as e:
        read_pytorch_trace_bytes(open(path, "rb").read(), path, "w")
    assert e.value.message.startswith("analysing it would take about 8.7 GB of memory (about 23,")
    # over what a file of its size may take (issue 51: base.MEMORY_FLOOR, or 64 times its size)
    assert e.value.message.endswith(
        "events in 1,812 MB of JSON text), over the 512 MB a file of 6.3 MB may take: profilers' files take a few "
        "times their size"
    )


def test_the_empty_lines_are_refused_from_the_header(logdir):
    path = os.path.join(logdir, "lines", "plugins", "profile", "s", "h.xplane.pb")
    assert os.path.getsize(path) < 3 << 20
    for pure in ("0", "1"):
        code = (
            "import sys; from tb_gpu_advisor.formats.xplane.reader import read_profile_bytes\n"
            "try: read_profile_bytes(open(sys.argv[1], 'rb').read(), 'f', 'h')\n"
            "except Exception as e: print(e)"
        )
        env = {**os.environ, "PYTHONPATH": ROOT, "TB_GPU_ADVISOR_PURE_PYTHON": pure}
        out = subprocess.run([sys.executable, "-c", code, path], capture_output=True, text=True, env=env, timeout=120)
        assert out.stdout.strip() == f"f: {LINES}", (pure, out.stdout, out.stderr[-500:])


@pytest.mark.skipif(not scan.available(), reason="the native scanner is not built")
def test_the_scan_stops_at_the_header_it_is_refused_from(logdir):
    """The scan started while the command imports the analysis (formats/xplane/scan.py) scans no line
    of a file refused from its header: scanning them held the GIL 200,000 times, 4.5 s of CPU."""
    from tb_gpu_advisor.formats.xplane.reader import read_profile_bytes

    data = open(os.path.join(logdir, "lines", "plugins", "profile", "s", "h.xplane.pb"), "rb").read()
    started = scan.Scan(data, background=True)
    with pytest.raises(ProfileReadError, match="over 10,000 lines"):
        read_profile_bytes(data, "f", "h", scan=started)
    with pytest.raises(scan.Stopped):
        started.finish()
    assert started._lines == []


def test_lines_of_a_trace_are_bounded_too():
    """A PyTorch trace of 12,000 threads (one event each): refused by both readers alike."""
    events = [
        {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": i, "ts": 1000 + i, "dur": 1}
        for i in range(12_000)
    ]
    data = json.dumps({"traceEvents": events}).encode()
    from tb_gpu_advisor.formats.kineto.reader import read_python

    for read in (read_pytorch_trace_bytes, read_python):
        with pytest.raises(ProfileReadError) as e:
            read(data, "t.pt.trace.json", "h")
        assert e.value.message == LINES
    # under the cap: read (one line per thread, each with its event)
    few = json.dumps({"traceEvents": events[:50]}).encode()
    assert len(read_pytorch_trace_bytes(few, "t.pt.trace.json", "h").threads) == 50


@pytest.mark.parametrize("run", ["dense", "lines"])
def test_refused_cheaper_than_an_ordinary_trace_and_within_300_mb_by_the_command(logdir, run):
    """`tb-gpu-advisor analyze` on each: the documented error in less CPU than twice the command's on an
    ordinary 31 MB trace, measured here (0.16 and 0.28 s against 0.34 s), and within 300 MB of peak RSS
    (the interpreter and imports included); before, 56.8 s and 9.4 GB, 45 s and 948 MB. The lines run
    took 4.5 s of CPU while the scan went on past the header the reader refused (it held the GIL
    200,000 times); stopped there, 1.2 s and 103 MB."""
    ordinary = refusal_benchmark.command(logdir, "ordinary")
    assert ordinary["exit"] == 0, ordinary
    r = refusal_benchmark.command(logdir, run)
    assert r["exit"] == 2 and r["message"]
    assert r["cpu_s"] < 2 * ordinary["cpu_s"] and r["peak_mb"] < 300, (r, ordinary)
    expected = LINES if run == "lines" else "analysing it would take about 8.7 GB of memory"
    assert expected in r["message"]


def test_refused_cheaper_than_an_ordinary_trace_and_within_300_mb_by_the_server(logdir):
    """A TensorBoard server asked for each run's full analysis (the panel opening the host): a 422
    with the message in less time than twice the same server's analysis of an ordinary 31 MB trace
    (0.83 and 0.33 s against 1.48 s here), the server and its reading processes within 300 MB of what
    they held before, the server alive."""
    got = refusal_benchmark.served(
        logdir, {"ordinary": ("ordinary", "worker0.1623143089861"), **refusal_benchmark.RUNS}
    )
    ordinary = got.pop("ordinary")
    assert ordinary["status"] == 200, ordinary
    for label, r in got.items():
        assert r["status"] == 422 and r["alive"], (label, r)
        assert r["seconds"] < 2 * ordinary["seconds"], (label, r, ordinary)
        assert r["server_mb"] < 300 and r["children_mb"] < 300, (label, r)
    assert got["empty lines"]["message"] == f"lines/plugins/profile/s/h.xplane.pb: {LINES}"
    assert got["dense gzip"]["message"].startswith("dense/w.1.pt.trace.json.gz: analysing it would take about 8.7 GB")


# --- the cache counts what an analysis holds -------------------------------------------------------


def accounted_and_measured(path: str) -> tuple[int, int]:
    env = {**os.environ, "PYTHONPATH": ROOT}
    warm = os.path.join(ROOT, "demo_logs", "01_healthy")
    p = subprocess.run(
        [sys.executable, "-c", refusal_benchmark.ACCOUNTED, path, warm],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert p.returncode == 0, p.stderr[-2000:]
    r = json.loads(p.stdout)
    return r["accounted"], r["measured"]


REAL = [
    "tests/data/gpu/jax_train/plugins/profile/2026_11_26_11_19_31/vm.xplane.pb",
    "tests/data/gpu/torch_bf16/vm_593.1795691964910964506.pt.trace.json.gz",
    "tests/data/pytorch/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz",
    "demo_logs/tf_cpu_capture/train/plugins/profile/2026_11_22_05_29_27/vm.xplane.pb",
    "tests/data/jax_cpu_capture/plugins/profile/2026_11_22_08_30_21/vm.xplane.pb",
]


@pytest.mark.parametrize("path", REAL, ids=os.path.basename)
def test_the_cache_counts_what_an_analysis_of_a_real_capture_holds(path):
    """service.held_bytes, what the cache's budget (--gpu_advisor_cache_mb) is spent by, within 2x of
    what tracemalloc counts the analysis and its report keep (before: from 0.32x to 2.8x)."""
    accounted, measured = accounted_and_measured(os.path.join(ROOT, path))
    assert 0.5 < accounted / measured < 2, (accounted, measured)


def test_the_cache_counts_what_an_analysis_of_hostile_files_holds(tmp_path):
    """9,000 empty lines (under the cap: read; before, counted as 0 MB: a table's columns were all the
    count saw, and the lines' tables held none) and a 64 MB gzip of one event repeated."""
    lines = tmp_path / "lines.xplane.pb"
    lines.write_bytes(hostile_profile.empty_lines(9000))
    dense = tmp_path / "dense.pt.trace.json.gz"
    hostile_profile.dense_gzip(str(dense), 64 << 20)
    for path, at_least in ((lines, 10 << 20), (dense, 50 << 20)):
        accounted, measured = accounted_and_measured(str(path))
        assert measured > at_least and 0.5 < accounted / measured < 2, (path.name, accounted, measured)


def test_the_cache_evicts_by_what_analyses_hold(tmp_path):
    """Two runs of 4,000 empty lines each (about 11 MB held each, that the count of columns called
    0.0 MB; the process grows by 13-19 MB making each, which is what they count since issue 51) under
    a budget the first fits in: the first analysis is dropped when the second is made."""
    from tb_gpu_advisor.serve.service import AdvisorService

    for run in ("a", "b"):
        d = tmp_path / run / "plugins" / "profile" / "s"
        d.mkdir(parents=True)
        (d / "h.xplane.pb").write_bytes(hostile_profile.empty_lines(4000))
    svc = AdvisorService(str(tmp_path), workers=1, cache_mb=1024, apart=False)
    (a,) = svc.find("a/s", "h")
    (b,) = svc.find("b/s", "h")
    first = svc.get(a, 60, full=True)
    assert first.measures is not None and 10 << 20 < first.nbytes < 40 << 20
    svc.cache_bytes = first.nbytes + (1 << 20)
    second = svc.get(b, 60, full=True)
    svc._evict()  # the worker evicts right after computing: the same, once more, to be sure it ran
    assert svc.analyses_held() == 1 and svc.peek(a).measures is None and svc.held_bytes() == second.nbytes > 10 << 20


# --- issue 51: small files that cost GBs --------------------------------------------------------------

SECONDS, MEGABYTES = refusal_benchmark.ISSUE51_TARGET


@pytest.fixture(scope="module")
def issue51_logdir(tmp_path_factory):
    """Issue 51's five files (about 530 MB on disk, made in seconds: tests/support/hostile_profile.py)."""
    return refusal_benchmark.issue51_logdir(str(tmp_path_factory.mktemp("issue51")))


ISSUE51_MESSAGES = {
    "duplicate keys": "analysing it would take about 13.6 GB of memory (610 MB of JSON text, parsed whole), over "
    "the 512 MB a file of 2.1 MB may take",
    "untrusted trailer": "not a PyTorch trace the advisor reads: a value in it runs over 64 MB (from byte 29)",
    "1.5 GB name": "not a PyTorch trace the advisor reads: a value in it runs over 64 MB (from byte 55)",
    "15M metadata": "analysing it would take about 9.3 GB of memory (1 events on 1 lines, 15,000,000 event "
    "metadata entries), over the 6.0 GB allowed by the 2,048 MB size limit",
    "50M empty events": "analysing it would take about 3.8 GB of memory (50,000,000 events on 1 lines), over the "
    "3.0 GB a file of 95 MB may take",
}


@pytest.mark.parametrize("label", list(refusal_benchmark.ISSUE51))
def test_small_files_that_cost_gbs_are_refused_by_the_command(issue51_logdir, label):
    """`tb-gpu-advisor analyze` on each of issue 51's files: refused with what it would cost, within 10 s
    and 1 GB (the peak of any of its processes). Before: 102 s and 7,955 MB (duplicate keys: the Python
    reader, held to 8 bytes a byte of text where it took 12.5), 26.8 s and 6,176 MB (a 3 GB string
    after a trailer not believed), 90 s and 7.2 GB (a 1.5 GB name), 7,245 MB (15M metadata entries,
    which no projection counted), 4.8 s and 1.75 GB (50M empty events)."""
    r = refusal_benchmark.command(issue51_logdir, refusal_benchmark.ISSUE51[label][0])
    assert r["exit"] == 2 and ISSUE51_MESSAGES[label] in r["message"], r
    assert r["seconds"] < SECONDS and r["peak_mb"] < MEGABYTES, r


def test_small_files_that_cost_gbs_are_refused_by_the_tab(issue51_logdir):
    """A TensorBoard server asked for each file's full analysis (a host opened: XSpace read in the
    server's own process) and its all-hosts view (the report made in a worker process): each answered
    within 10 s with the refusal, the server and its processes within 1 GB of what they held before,
    and the server keeping none of it once it answered (it kept 1.75 GB after the 50M events)."""
    got = {
        **refusal_benchmark.served(issue51_logdir, refusal_benchmark.ISSUE51),
        **refusal_benchmark.served(issue51_logdir, refusal_benchmark.ISSUE51, hosts=True),
    }
    assert len(got) == 2 * len(refusal_benchmark.ISSUE51)
    for label, r in got.items():
        assert r["alive"] and r["status"] == (422 if "(all hosts)" not in label else 200), (label, r)
        assert ISSUE51_MESSAGES[label.replace(" (all hosts)", "")] in r["message"], (label, r)
        assert r["seconds"] < SECONDS and r["server_mb"] < MEGABYTES and r["children_mb"] < MEGABYTES, (label, r)
        assert r["after_mb"] < 50, (label, r)


GROWTH = r"""
import json, os, sys
from tb_gpu_advisor.serve.service import AdvisorService
def resident_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
svc = AdvisorService(sys.argv[1], workers=1, cache_mb=4096, apart=False)
warm, big = svc.find("warm/s", "h")[0], svc.find("big/s", "h")[0]
svc.get(warm, 120, full=True)  # imports and first calls, before the measure
before = resident_bytes()
e = svc.get(big, 120, full=True)
print(json.dumps({"nbytes": e.nbytes, "growth": resident_bytes() - before, "state": e.state}))
"""


def test_the_cache_counts_what_the_process_grew_by(tmp_path):
    """Issue 51: the cache's budget counted what an analysis's objects hold (held_bytes), while the
    process grew by more (the allocator keeps what the analysis freed, and more than an object's size
    for it): TensorBoard grew 6-8 times the count. An entry now counts the larger of the two, the
    growth measured once the freed memory is given back (malloc_trim)."""
    import read_benchmark

    for run, copies in (("warm", 2), ("big", 150)):
        session = tmp_path / run / "plugins" / "profile" / "s"
        session.mkdir(parents=True)
        read_benchmark.build(str(session / "h.xplane.pb"), copies)
    env = {**os.environ, "PYTHONPATH": ROOT}
    p = subprocess.run(
        [sys.executable, "-c", GROWTH, str(tmp_path)], capture_output=True, text=True, env=env, timeout=300
    )
    assert p.returncode == 0, p.stderr[-2000:]
    r = json.loads(p.stdout)
    assert r["state"] == "done" and r["growth"] > 10 << 20 and r["nbytes"] >= 0.9 * r["growth"], r
