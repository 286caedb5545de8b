"""Ranks analysed in worker processes and on a Dask cluster (ranks.py, issue 26): the same reports as
one process makes, one rank's crash is that rank's error only, and the parent keeps reports only."""

from __future__ import annotations

import gc
import io
import json
import multiprocessing
import os
import shutil
import signal
import subprocess
import sys
import time
from argparse import Namespace
from contextlib import redirect_stderr, redirect_stdout

import pytest
from conftest import free_port
from support.kineto_writer import ddp_job
from tensorboard.backend import application
from tensorboard.plugins import base_plugin
from werkzeug import test, wrappers

from tb_gpu_advisor import cli
from tb_gpu_advisor.common.errors import ProfileReadError
from tb_gpu_advisor.formats.discovery import PYTORCH_TRACE, HostFile, discover
from tb_gpu_advisor.job import ranks
from tb_gpu_advisor.model.analysis import Analysis
from tb_gpu_advisor.plugin import GpuAdvisorPlugin
from tb_gpu_advisor.report import UNREADABLE, engine, host_summary

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REAL = os.path.join(
    ROOT, "tests", "data", "pytorch", "resnet50_num_workers_0", "worker0.1623143089861.pt.trace.json.gz"
)
BASE = "/data/plugin/gpu_advisor"
RANKS = 8  # ranks of the small job: enough for the straggler check's 3+, quick on 2 cores


def small_job(logdir, n: int = RANKS, slow_rank: int | None = 2) -> str:
    """A synchronous job of `n` ranks (tests/support/kineto_writer.py), one of them a straggler, in run `job`."""
    run = os.path.join(str(logdir), "job")
    os.makedirs(run, exist_ok=True)
    compute = {slow_rank: 30_000.0} if slow_rank is not None else None
    for r, w in ddp_job(n, steps=3, compute_us=compute, kernels_per_step=4).items():
        with open(os.path.join(run, f"rank{r}.7.pt.trace.json.gz"), "wb") as f:
            f.write(w.to_bytes())
    return run


def files_of(logdir) -> list[HostFile]:
    return sorted(discover(str(logdir))[0], key=lambda f: f.path)


def analyze_json(*argv: str) -> tuple[int, dict | None, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = cli.main(["analyze", *argv])
    return code, (json.loads(out.getvalue()) if out.getvalue().strip() else None), err.getvalue()


def test_worker_processes_give_the_reports_one_process_gives(tmp_path):
    """Every report, an unreadable file's too, is the one `engine.advise` makes in this process; the
    job view over them finds the straggler the job was written with."""
    small_job(tmp_path)
    bad = tmp_path / "job" / "rank99.7.pt.trace.json"
    bad.write_text('{"traceEvents": [')  # truncated JSON
    files = files_of(tmp_path)
    here = [engine.advise(f) for f in files]
    seen: list[dict] = []
    apart = ranks.advise_all(files, n_processes=2, on_progress=lambda p: seen.append(p.to_json()))
    assert apart == here
    broken = [r for r in apart if r["failure"]]
    assert [r["host"] for r in broken] == ["rank99.7"] and broken[0]["failure"] == UNREADABLE
    assert seen[-1] == {
        "ranks_done": len(files),
        "ranks": len(files),
        "bytes_done": sum(f.size for f in files),
        "bytes": sum(f.size for f in files),
    }
    from tb_gpu_advisor.job import jobs

    (job,) = jobs(apart)
    assert len(job["ranks"]) == RANKS and job["stragglers"] == ["rank2.7"]


def test_a_killed_worker_is_that_ranks_error_only(tmp_path):
    """The process analysing one rank is killed (as the kernel's OOM killer would) while it reads it:
    that rank gets an error report in the user's words; a new process analyses the next ranks, whose
    reports are the ones one process makes."""
    small_job(tmp_path, 4)
    victim = tmp_path / "job" / "a_victim.7.pt.trace.json.gz"  # the first of the files, in path order
    shutil.copy(REAL, victim)  # about a second to read and analyse: killed long before it is done
    files = files_of(tmp_path)
    assert files[0].host == "a_victim.7"
    killed: list[int] = []

    def progress(p: ranks.Progress) -> None:
        if not killed and 0 in p._reading:  # the victim is being read: its process is the only one
            (worker,) = [c for c in multiprocessing.active_children() if c.name == "gpu_advisor_rank"]
            assert worker.pid is not None
            os.kill(worker.pid, signal.SIGKILL)
            killed.append(worker.pid)

    reports = ranks.advise_all(files, n_processes=1, on_progress=progress)
    assert killed
    assert reports[0]["failure"] == UNREADABLE and reports[0]["checks"] == []
    (message,) = reports[0]["errors"]
    assert "the process analysing the file stopped" in message and "Traceback" not in message
    assert reports[1:] == [engine.advise(f) for f in files[1:]]


def test_a_worker_past_its_time_is_given_up():
    """Past its time the worker is killed, not waited for: the call returns sooner than the same file's
    whole analysis apart, measured here (not a number of seconds, which would be this machine's)."""
    st = os.stat(REAL)
    f = HostFile("r", "worker0.1", REAL, st.st_size, st.st_mtime, PYTORCH_TRACE)
    t0 = time.monotonic()
    engine.report_apart(f)
    whole = time.monotonic() - t0
    t0 = time.monotonic()
    with pytest.raises(ProfileReadError, match=r"analysing the file took over 0 s; given up"):
        engine.report_apart(f, timeout_s=0.01)  # the native reader alone takes longer than this
    assert time.monotonic() - t0 < whole  # the process was killed, not waited for
    assert not [p for p in multiprocessing.active_children() if p.name.startswith("gpu_advisor_report")]


def test_processes_setting(monkeypatch):
    files = [HostFile("r", f"h{i}", f"/x/{i}", 10**6, None) for i in range(64)]
    monkeypatch.setenv(ranks.PROCESSES_ENV, "3")
    assert ranks.processes(files) == 3 and ranks.processes(files[:2]) == 2
    monkeypatch.setenv(ranks.PROCESSES_ENV, "nonsense")
    assert 1 <= ranks.processes(files) <= ranks.cores()
    monkeypatch.setenv(ranks.PROCESSES_ENV, "0")  # in the calling process, one file after the other
    assert ranks.processes(files) == 0
    monkeypatch.delenv(ranks.PROCESSES_ENV)
    huge = [HostFile("r", "h", "/x", 2**50, None)] * 4  # a petabyte: fits once at most
    assert ranks.processes(huge) == 1


def test_the_service_keeps_reports_not_analyses(tmp_path):
    """The all-hosts view of a job leaves no analysis (no tables) in the server: only reports; opening
    one host loads that host's analysis alone."""
    small_job(tmp_path)
    plugin = GpuAdvisorPlugin(base_plugin.TBContext(logdir=str(tmp_path)))
    c = test.Client(application.TensorBoardWSGI([plugin]), wrappers.Response)
    gc.collect()
    before = sum(type(o) is Analysis for o in gc.get_objects())
    r = c.get(f"{BASE}/report?run=job&wait=60")
    assert r.status_code == 200
    body = json.loads(r.data)
    assert len(body["reports"]) == RANKS and len(body["runs"][0]["ranks"]) == RANKS
    gc.collect()
    assert sum(type(o) is Analysis for o in gc.get_objects()) == before
    assert plugin.service.analyses_held() == 0 and plugin.service.held_bytes() == 0
    host = body["reports"][0]["host"]
    assert c.get(f"{BASE}/timeline?run=job&host={host}").status_code == 200
    assert plugin.service.analyses_held() == 1
    # the all-hosts view has the summary of the report the host's view shows
    full = json.loads(c.get(f"{BASE}/report?run=job&host={host}").data)
    assert host_summary(full) == body["reports"][0] and len(json.dumps(full)) > 5 * len(json.dumps(body["reports"][0]))


def test_the_all_hosts_view_says_its_progress_in_ranks_and_bytes(tmp_path):
    small_job(tmp_path)
    plugin = GpuAdvisorPlugin(base_plugin.TBContext(logdir=str(tmp_path)))
    c = test.Client(application.TensorBoardWSGI([plugin]), wrappers.Response)
    r = c.get(f"{BASE}/report?run=job&wait=0")
    if r.status_code == 202:  # nothing can be done within no wait at all, unless the machine is very fast
        from test_schema import validate

        validate(json.loads(r.data), "PendingResponse")
        job = json.loads(r.data)["job"]
        assert job["ranks"] == RANKS and 0 <= job["ranks_done"] < RANKS
        assert job["bytes"] == sum(f.size for f in files_of(tmp_path)) and 0 <= job["bytes_done"] <= job["bytes"]
    assert c.get(f"{BASE}/report?run=job&wait=60").status_code == 200


def test_dask_missing_or_not_answering_is_said_plainly(tmp_path, monkeypatch):
    small_job(tmp_path, 2)
    monkeypatch.setattr(ranks, "DASK_CONNECT_S", 1.0)
    address = f"tcp://127.0.0.1:{free_port()}"
    code, _, err = analyze_json(str(tmp_path), "--dask", address)
    assert code == cli.EXIT_ERROR and f"no Dask scheduler answers at {address!r}" in err and "Traceback" not in err
    monkeypatch.setitem(sys.modules, "distributed", None)  # as if not installed: importing it fails
    code, _, err = analyze_json(str(tmp_path), "--dask", address)
    assert code == cli.EXIT_ERROR and "pip install 'tb_gpu_advisor[dask]'" in err
    with pytest.raises(base_plugin.FlagsError, match="tb_gpu_advisor\\[dask\\]"):
        from tb_gpu_advisor.plugin import GpuAdvisorLoader

        GpuAdvisorLoader().fix_flags(Namespace(gpu_advisor_dask=address))


@pytest.fixture(scope="module")
def cluster():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        processes=True, n_workers=2, threads_per_worker=1, dashboard_address=None, host="127.0.0.1"
    ) as c:
        yield c.scheduler_address


def test_a_dask_cluster_gives_what_the_local_run_gives(tmp_path, cluster):
    """The same 64-rank job through `analyze --dask` on a real two-worker cluster (its workers read the
    files) and on this machine: the same reports, job view and overview; through the plugin's flag too."""
    small_job(tmp_path, n=64)
    (tmp_path / "job" / "rank99.7.pt.trace.json").write_text("not json")
    code, local, _ = analyze_json(str(tmp_path), "--format", "json")
    code_dask, on_cluster, _ = analyze_json(str(tmp_path), "--format", "json", "--dask", cluster)
    assert code == code_dask == cli.EXIT_ERROR  # the unreadable rank, in both
    assert local is not None and on_cluster == local
    assert len(local["runs"][0]["ranks"]) == 64 and len(local["reports"]) == 65

    def all_hosts(flags) -> dict:
        plugin = GpuAdvisorPlugin(base_plugin.TBContext(logdir=str(tmp_path), flags=flags))
        c = test.Client(application.TensorBoardWSGI([plugin]), wrappers.Response)
        r = c.get(f"{BASE}/report?run=job&wait=60")
        assert r.status_code == 200
        return json.loads(r.data)

    here = all_hosts(Namespace())
    there = all_hosts(Namespace(gpu_advisor_dask=cluster))
    assert there == here and here["runs"] == local["runs"]


def test_a_bug_in_a_worker_reads_as_it_would_here():
    """A bug raised in a worker process comes back (pickled) as the same line a bug here gives."""
    import pickle

    there = pickle.loads(pickle.dumps(engine.AnalysisFailed("IndexError", "index 0 is out of bounds")))
    assert engine.failure_message(there) == engine.failure_message(IndexError("index 0 is out of bounds"))


def test_an_evicted_analysis_keeps_its_report(tmp_path):
    """Beyond the memory budget a host's tables go, its report stays; opening it again reloads them."""
    small_job(tmp_path, 3)
    flags = Namespace(gpu_advisor_cache_mb=1e-6)  # room for none: only the newest analysis is kept
    plugin = GpuAdvisorPlugin(base_plugin.TBContext(logdir=str(tmp_path), flags=flags))
    c = test.Client(application.TensorBoardWSGI([plugin]), wrappers.Response)
    first = json.loads(c.get(f"{BASE}/report?run=job&host=rank0.7&wait=60").data)
    assert c.get(f"{BASE}/timeline?run=job&host=rank1.7&wait=60").status_code == 200
    assert plugin.service.analyses_held() == 1
    assert json.loads(c.get(f"{BASE}/report?run=job&wait=60").data)["reports"][0] == host_summary(first)
    assert plugin.service.analyses_held() == 1
    assert c.get(f"{BASE}/timeline?run=job&host=rank0.7").status_code == 200


def test_the_command_keeps_no_analysis_and_says_its_progress(tmp_path):
    """`analyze` over a job leaves no Analysis in its process (the worker processes made them); its
    progress line counts ranks and bytes."""
    small_job(tmp_path)
    gc.collect()
    before = sum(type(o) is Analysis for o in gc.get_objects())
    code, doc, _ = analyze_json(str(tmp_path), "--format", "json")
    assert doc is not None and len(doc["runs"][0]["ranks"]) == RANKS
    gc.collect()
    assert sum(type(o) is Analysis for o in gc.get_objects()) == before
    p = ranks.Progress(64, 3_400_000_000)
    for i in range(12):
        p.finished(i, 100_000_000)
    p.reading(12, 50_000_000)
    assert p.line() == "12/64 ranks, 1.2 GB/3.4 GB"


def command_from(cwd: str, *argv: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """The installed command (`tb-gpu-advisor`, its import path not holding the working directory)
    run from `cwd`, worker processes on."""
    return subprocess.run(
        [os.path.join(os.path.dirname(sys.executable), "tb-gpu-advisor"), *argv],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "TB_GPU_ADVISOR_PROCESSES": "2", **(env or {})},
        timeout=600,
    )


def test_a_module_named_like_the_standard_ones_in_the_working_directory(tmp_path):
    """Issue 51: run from a folder holding `inspect.py`, every worker process imported it instead of
    Python's (the fork server's import path began with the working directory): `job` said the run was
    not a job, `analyze` exited 3 with "EOFError". The workers import the package's code and Python's
    own: `job` and `analyze` of a multi-rank run answer the same from that folder as from anywhere."""
    small_job(tmp_path / "logs")
    here, there = tmp_path / "elsewhere", tmp_path / "with_modules"
    here.mkdir()
    there.mkdir()
    (there / "inspect.py").write_text("raise SystemExit('the working directory was imported')\n")
    (there / "numpy.py").write_text("raise SystemExit('the working directory was imported')\n")
    logs = str(tmp_path / "logs")
    for argv in (["job", logs, "--run", "job", "--format", "json"], ["analyze", logs, "--format", "json"]):
        a, b = command_from(str(here), *argv), command_from(str(there), *argv)
        assert a.returncode == b.returncode == 0, (argv, b.returncode, b.stderr[-2000:])
        assert json.loads(a.stdout) == json.loads(b.stdout) and "imported" not in b.stderr
    assert len(json.loads(b.stdout)["runs"][0]["ranks"]) == RANKS


def test_a_worker_that_cannot_start_is_said_and_the_work_done_here(tmp_path):
    """A worker process that cannot start (here its fork server exits as it starts: a `sitecustomize`
    on the import path stops any interpreter started for `multiprocessing.forkserver`) is said once,
    and the files are analysed in the command's process: the same answer."""
    small_job(tmp_path / "logs")
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        "import sys\nif any('multiprocessing.forkserver' in a for a in sys.orig_argv):\n    raise SystemExit(3)\n"
    )
    logs = str(tmp_path / "logs")
    argv = ["job", logs, "--run", "job", "--format", "json"]
    fine = command_from(str(tmp_path), *argv)
    broken = command_from(str(tmp_path), *argv, env={"PYTHONPATH": os.pathsep.join([str(site), ROOT])})
    assert broken.returncode == 0, broken.stderr[-2000:]
    assert json.loads(broken.stdout) == json.loads(fine.stdout)
    said = [line for line in broken.stderr.splitlines() if "could not start" in line]
    assert said == [
        "worker processes could not start (it stopped while starting); the files are analysed in this process instead"
    ]
