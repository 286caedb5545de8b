"""`make demo` serves a copy of demo_logs/ outside the work tree: the Profile tab's caches land in the
copy, never in the repository (issue 22)."""

import gzip
import json
import os
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
