"""`make demo` serves a copy of demo_logs/ outside the work tree: the Profile tab's caches land in the
copy, never in the repository (issue 22)."""

import gzip
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request

import pytest
from conftest import free_port

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEMO = os.path.join(ROOT, "demo_logs")
sys.path.insert(0, os.path.join(ROOT, "scripts"))

from serve_demo import fresh_copy  # noqa: E402


def _tree(folder: str) -> dict[str, tuple[int, int]]:
    """Every file under `folder`: relative path -> (size, mtime in ns)."""
    out = {}
    for d, _, files in os.walk(folder):
        for name in files:
            p = os.path.join(d, name)
            st = os.stat(p)
            out[os.path.relpath(p, folder)] = (st.st_size, st.st_mtime_ns)
    return out


def _get(url: str, timeout: float = 120):
    req = urllib.request.Request(url, headers={"Accept-Encoding": "gzip"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        body = r.read()
        if r.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        return r.status, body


def test_the_copy_is_made_again_only_when_the_source_changes(tmp_path):
    src = tmp_path / "logs"
    (src / "run" / "plugins" / "profile" / "s").mkdir(parents=True)
    f = src / "run" / "plugins" / "profile" / "s" / "h.xplane.pb"
    f.write_bytes(b"one")
    served = fresh_copy(str(src), str(tmp_path / "copy"))
    assert (
        served.startswith(str(tmp_path / "copy"))
        and open(os.path.join(served, f.relative_to(src)), "rb").read() == b"one"
    )
    cache = os.path.join(served, "run", "plugins", "profile", "s", ".cached_tools.json")
    open(cache, "w").write("{}")  # what the Profile tab leaves in the served copy
    assert fresh_copy(str(src), str(tmp_path / "copy")) == served and os.path.exists(cache)  # unchanged: kept
    f.write_bytes(b"two")
    fresh_copy(str(src), str(tmp_path / "copy"))
    assert open(os.path.join(served, f.relative_to(src)), "rb").read() == b"two" and not os.path.exists(cache)


def test_profile_tab_on_the_demo_leaves_the_repository_untouched(tmp_path):
    """The demo server, then the Profile tab's overview, trace viewer and kernel stats for two demo
    runs: the profile plugin writes its caches into the served copy, and demo_logs/ stays as it was."""
    pytest.importorskip("tensorboard_plugin_profile")
    before = _tree(DEMO)
    status_before = _git_status()
    port = free_port()
    copy_dir = tmp_path / "demo"
    server = subprocess.Popen(
        [sys.executable, os.path.join(ROOT, "scripts", "serve_demo.py"), "--port", str(port)]
        + ["--copy-dir", str(copy_dir), "--host", "127.0.0.1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while True:
            assert server.poll() is None, server.stdout.read().decode(errors="replace")
            try:
                _get(f"{base}/data/plugins_listing", timeout=5)
                break
            except OSError:
                assert time.monotonic() < deadline, "the demo server did not answer"
                time.sleep(0.5)
        runs = json.loads(_get(f"{base}/data/plugin/profile/runs")[1])
        picked = [r for r in runs if r.split("/")[0] in ("01_healthy", "02_input_bound")]
        assert len(picked) == 2, runs
        for run in picked:
            tools = json.loads(_get(f"{base}/data/plugin/profile/run_tools?run={run}")[1])
            assert {"overview_page", "trace_viewer@", "kernel_stats"} <= set(tools)
            host = json.loads(_get(f"{base}/data/plugin/profile/hosts?run={run}&tag=overview_page")[1])[0]["hostname"]
            for tool in ("overview_page", "trace_viewer%40", "kernel_stats"):
                status, body = _get(f"{base}/data/plugin/profile/data?run={run}&tag={tool}&host={host}")
                assert status == 200 and len(body) > 1000, (run, tool, body[:200])
        # the advisor's own tab answers on the copy too, naming runs, not server paths
        status, body = _get(f"{base}/data/plugin/gpu_advisor/runs")
        assert status == 200 and b"01_healthy" in body and str(copy_dir).encode() not in body
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(30)
    served = _tree(str(copy_dir / "demo_logs"))
    written = set(served) - set(before)
    assert any(p.endswith((".SSTABLE", ".cached_tools.json", "cache_version.txt")) for p in written), written
    assert _tree(DEMO) == before
    assert _git_status() == status_before  # empty in a fresh clone; a developer's own edits stay theirs


def _git_status() -> str | None:
    """`git status --porcelain --ignored demo_logs`, or None outside a git clone."""
    if not os.path.isdir(os.path.join(ROOT, ".git")):
        return None
    st = subprocess.run(
        ["git", "status", "--porcelain", "--ignored", "demo_logs"], cwd=ROOT, capture_output=True, text=True
    )
    assert st.returncode == 0
    return st.stdout


def _descendants(pid: int) -> set[int]:
    """The processes under `pid` (children, theirs, ...), from /proc."""
    parent = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    stat = f.read()
            except OSError:
                continue
            parent[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
    out, todo = set(), [pid]
    while todo:
        p = todo.pop()
        kids = [c for c, pp in parent.items() if pp == p]
        out.update(kids)
        todo.extend(kids)
    return out


def _alive(pid: int) -> bool:
    """Running, not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _port_free(port: int) -> bool:
    import socket

    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


@pytest.mark.parametrize("how", ["SIGTERM to its PID", "Ctrl+C"])
def test_stopping_the_demo_stops_tensorboard_and_frees_the_port(how, tmp_path):
    """`make demo` stopped by its PID (SIGTERM) or with Ctrl+C (SIGINT to the terminal's foreground
    process group) stops TensorBoard and everything it started (the data server, the plugin's worker
    processes) and frees the port. Before issue 48 a SIGTERM ended the script alone, and TensorBoard
    went on serving on the port."""
    logs = tmp_path / "logs"
    shutil.copytree(os.path.join(DEMO, "01_healthy"), logs / "01_healthy")
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, os.path.join(ROOT, "scripts", "serve_demo.py"), "--port", str(port)]
        + ["--logdir", str(logs), "--copy-dir", str(tmp_path / "copy"), "--host", "127.0.0.1"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # a process group of its own, as a terminal's foreground job has
    )
    base = f"http://127.0.0.1:{port}"
    started: set[int] = set()
    try:
        deadline = time.monotonic() + 180
        while True:  # serving, with an analysis done: the plugin's worker processes are running
            assert server.poll() is None
            try:
                runs = json.loads(_get(f"{base}/data/plugin/gpu_advisor/runs?analyse=all", timeout=5)[1])
                if runs["runs"] and runs["runs"][0]["hosts"][0]["analysis"]["state"] == "done":
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline, "the demo server did not answer"
            time.sleep(0.5)
        started = _descendants(server.pid)
        assert len(started) >= 2 and not _port_free(port)  # TensorBoard and the processes it started
        if how == "Ctrl+C":
            os.killpg(server.pid, signal.SIGINT)
        else:
            os.kill(server.pid, signal.SIGTERM)
        assert server.wait(60) == 0
        deadline = time.monotonic() + 30
        while (not _port_free(port) or any(map(_alive, started))) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _port_free(port), "TensorBoard still holds the port"
        assert not [p for p in started if _alive(p)]
    finally:
        for p in [server.pid, *started]:
            if _alive(p):
                os.kill(p, signal.SIGKILL)
        server.wait(30)
