"""A real `tensorboard` process on a loopback port, started and stopped by the tests, over a copy of
demo_logs/ with one corrupt run added."""

import errno
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from urllib.parse import quote

import pytest
from conftest import free_port

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
DEMO = os.path.join(ROOT, "demo_logs")
CORRUPT = "zz_corrupt/2026_01_01_00_00_00"


class TensorBoard:
    def __init__(self, logdir: str, prefix: str = "", advisor_only: bool = False):
        """`advisor_only`: with TensorBoard's own plugins and the advisor's, no other installed plugin
        (benchmarks/tensorboard_process.ADVISOR_ONLY: torch-tb-profiler reads every trace too)."""
        import tensorboard_process

        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}{prefix}"
        args = [
            *tensorboard_process.command(advisor_only),
            "--logdir",
            logdir,
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--load_fast",
            "false",
        ]
        if prefix:
            args += ["--path_prefix", prefix]
        self.log = open(os.path.join(os.path.dirname(logdir), f"tensorboard{prefix.replace('/', '_')}.log"), "w")
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"tensorboard exited with {self.proc.returncode}; see {self.log.name}")
            try:
                if self.get("/data/plugins_listing")[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.5)
        raise RuntimeError("tensorboard did not start in 120 s")

    def get(self, path: str, **params):
        q = "&".join(f"{k}={quote(str(v), safe='')}" for k, v in params.items())
        url = self.base + path + (f"?{q}" if q else "")
        try:
            with urllib.request.urlopen(url, timeout=60) as r:
                return r.status, r.headers, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.headers, e.read()

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


def snapshot(root):
    return sorted(
        (os.path.relpath(os.path.join(d, f), root), os.stat(os.path.join(d, f)).st_mtime_ns)
        for d, _, fs in os.walk(root)
        for f in fs
    )


@pytest.fixture(scope="module")
def logdir(tmp_path_factory):
    d = tmp_path_factory.mktemp("tb") / "logs"
    shutil.copytree(DEMO, d)
    bad = d / "zz_corrupt" / "plugins" / "profile" / "2026_01_01_00_00_00"
    bad.mkdir(parents=True)
    (bad / "gpu-worker-0.xplane.pb").write_bytes(os.urandom(2048))
    return str(d)


@pytest.fixture(scope="module")
def tb(logdir):
    before = snapshot(logdir)
    server = TensorBoard(logdir)
    yield server
    server.stop()
    assert snapshot(logdir) == before, "something was written into the logdir"


def plugin_path(route: str) -> str:
    return f"/data/plugin/gpu_advisor/{route}"


def check_listing(server):
    status, headers, body = server.get("/data/plugins_listing")
    assert status == 200
    entry = json.loads(body)["gpu_advisor"]
    assert entry["enabled"] is True and entry["tab_name"] == "GPU Advisor"
    assert entry["loading_mechanism"]["type"] == "IFRAME"
    assert entry["loading_mechanism"]["module_path"].endswith("/data/plugin/gpu_advisor/index.js")


def test_listing_shows_the_tab(tb):
    check_listing(tb)
    status, headers, body = tb.get(plugin_path("index.js"))
    assert status == 200 and "javascript" in headers["Content-Type"] and headers["X-Content-Type-Options"] == "nosniff"


def test_every_route_answers_for_every_run_and_corrupt_is_422(tb):
    status, _, body = tb.get(plugin_path("runs"))
    runs = json.loads(body)["runs"]
    assert len(runs) == 25
    for run in runs:
        for h in run["hosts"]:
            expected = 422 if run["run"] == CORRUPT else 200
            for route in ("report", "timeline", "export"):
                status, headers, body = tb.get(plugin_path(route), run=run["run"], host=h["host"])
                assert status == expected, (route, run["run"], body[:200])
                assert headers["Content-Type"].startswith("application/json")
                if expected == 422:
                    assert "gpu-worker-0.xplane.pb" in json.loads(body)["error"]["message"]
                else:
                    assert json.loads(body)  # whole and valid, streamed or not
        # the all-hosts form answers 200 and reports a broken host's error in its place
        assert tb.get(plugin_path("report"), run=run["run"])[0] == 200
    assert tb.get(plugin_path("checks"))[0] == 200
    status, _, body = tb.get(plugin_path("report"), run=CORRUPT)
    assert json.loads(body)["reports"][0]["errors"]
    # the other plugins and TensorBoard itself keep serving
    assert tb.get("/data/plugins_listing")[0] == 200
    assert tb.get(plugin_path("report"), run="01_healthy/2026_11_22_10_00_00", host="gpu-worker-0")[0] == 200


def test_path_prefix(logdir):
    before = snapshot(logdir)
    server = TensorBoard(logdir, prefix="/tb")
    try:
        check_listing(server)
        assert server.get(plugin_path("index.js"))[0] == 200
        status, _, body = server.get(
            plugin_path("report"), run="02_input_bound/2026_11_22_10_00_00", host="gpu-worker-0"
        )
        assert status == 200 and json.loads(body)["checks"][0]["id"] == "input.bound"
        assert server.get(plugin_path("report"), run=CORRUPT, host="gpu-worker-0")[0] == 422
        assert server.get(plugin_path("report"), run="nope")[0] == 404
    finally:
        server.stop()
    assert snapshot(logdir) == before


def test_fifos_and_looping_symlinks_do_not_block_anything(tmp_path):
    """Two FIFOs named like profiles and two looping symlinks in the logdir: a real TensorBoard keeps
    answering every route; the FIFOs are not read (only regular files are), the loops are walked
    once (the walk remembers the real paths it has visited)."""
    d = tmp_path / "logs"
    shutil.copytree(os.path.join(DEMO, "02_input_bound"), d / "02_input_bound")
    for run in ("fifo_a", "fifo_b"):
        session = d / run / "plugins" / "profile" / "2026_01_01_00_00_00"
        session.mkdir(parents=True)
        os.mkfifo(session / "gpu-worker-0.xplane.pb")
    os.symlink(d, d / "loop")  # the logdir inside itself
    (d / "a").mkdir()
    os.symlink(d / "a", d / "a" / "b")  # a folder inside itself
    server = TensorBoard(str(d))
    try:
        status, _, body = server.get(plugin_path("runs"))
        assert status == 200
        # no FIFO was opened: a reader blocked opening one would let a writer open it without blocking
        for run in ("fifo_a", "fifo_b"):
            fifo = d / run / "plugins" / "profile" / "2026_01_01_00_00_00" / "gpu-worker-0.xplane.pb"
            with pytest.raises(OSError) as e:
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            assert e.value.errno == errno.ENXIO  # no reader has it open
        runs = {r["run"] for r in json.loads(body)["runs"]}
        assert runs == {"02_input_bound/2026_11_22_10_00_00"}  # each run once, no FIFO
        for route in ("report", "timeline", "export"):
            status, _, body = server.get(
                plugin_path(route), run="02_input_bound/2026_11_22_10_00_00", host="gpu-worker-0", wait=30
            )
            assert status == 200 and json.loads(body), route
        assert server.get(plugin_path("report"), run="fifo_a/2026_01_01_00_00_00", host="gpu-worker-0")[0] == 404
        assert server.get(plugin_path("checks"))[0] == 200
        assert server.get("/data/plugins_listing")[0] == 200
    finally:
        server.stop()


def test_deep_folders_beside_a_run(tmp_path):
    """Issue 51: 1,100 nested folders beside a run: the tab answered 500 on /runs and /report after 21 s
    (RecursionError), the MCP server did not start. Both list the run in under 10 s, and analyse it."""
    from support import hostile_profile
    from support.mcp_client import session

    d = tmp_path / "logs"
    shutil.copytree(os.path.join(DEMO, "02_input_bound"), d / "02_input_bound")
    hostile_profile.nested_folders(str(d / "deep"), 1100)
    run = "02_input_bound/2026_11_22_10_00_00"
    try:
        server = TensorBoard(str(d), advisor_only=True)
        try:
            t = time.monotonic()
            status, _, body = server.get(plugin_path("runs"))
            assert status == 200 and time.monotonic() - t < 10
            assert [r["run"] for r in json.loads(body)["runs"]] == [run]
            assert server.get(plugin_path("report"), run=run, host="gpu-worker-0", wait=30)[0] == 200
        finally:
            server.stop()
        s = session(str(d), [("list_runs", {})])  # the MCP server starts, and lists it
        assert [r["run"] for r in s.json(0)["runs"]] == [run]
    finally:
        hostile_profile.remove_nested(str(d / "deep"))
