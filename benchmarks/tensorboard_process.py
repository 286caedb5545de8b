"""A real `tensorboard` process for the benchmarks: started on a free loopback port, asked until it
answers, stopped; and GET as the panel does it (accepting gzip)."""

from __future__ import annotations

import gzip
import os
import socket
import subprocess
import sys
import time
import urllib.request
from urllib.parse import quote


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _request(base: str, route: str, params: dict) -> urllib.request.Request:
    q = "&".join(f"{k}={quote(str(v), safe='')}" for k, v in params.items())
    return urllib.request.Request(f"{base}/{route.lstrip('/')}?{q}", headers={"Accept-Encoding": "gzip"})


def get(base: str, route: str, **params) -> tuple[int, bytes]:
    with urllib.request.urlopen(_request(base, route, params), timeout=600) as r:
        body = r.read()
        return r.status, gzip.decompress(body) if r.headers.get("Content-Encoding") == "gzip" else body


def get_timed(base: str, route: str, **params) -> tuple[int, float | None]:
    """(status, the plugin's own handling time in ms from its `Server-Timing: app;dur=` header)."""
    with urllib.request.urlopen(_request(base, route, params), timeout=600) as r:
        r.read()
        timing = r.headers.get("Server-Timing") or ""
        return r.status, float(timing.split("dur=", 1)[1]) if "dur=" in timing else None


def rss_mb(pid: int) -> float:
    """A process's resident memory now, MB (Linux)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


# TensorBoard with its own plugins and the advisor's only: no other plugin installed beside it reads the
# logdir (torch-tb-profiler loads every PyTorch trace in processes of its own, which outlive the server:
# 9 GB for issue 38's gzip of one event repeated, which the advisor refuses in 0.2 s).
OURS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts", "tensorboard_ours.py")


def command(advisor_only: bool) -> list[str]:
    """The command line that starts TensorBoard (with `advisor_only`, without the other plugins installed)."""
    return [sys.executable, OURS] if advisor_only else [sys.executable, "-m", "tensorboard.main"]


def start(logdir: str, log, advisor_only: bool = False) -> tuple[subprocess.Popen, int]:
    """TensorBoard on `logdir`, its output into `log`; returns once it answers."""
    port = free_port()
    tb = subprocess.Popen(
        [
            *command(advisor_only),
            "--logdir",
            logdir,
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--load_fast",
            "false",
        ],  # fmt: skip
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 120
    while True:
        try:
            if get(f"http://127.0.0.1:{port}/data", "plugins_listing")[0] == 200:
                return tb, port
        except OSError:
            if time.monotonic() > deadline or tb.poll() is not None:
                tb.kill()
                raise RuntimeError("tensorboard did not start") from None
            time.sleep(0.3)


def stop(tb: subprocess.Popen) -> None:
    tb.terminate()
    try:
        tb.wait(10)
    except subprocess.TimeoutExpired:
        tb.kill()
