"""`make demo`: TensorBoard with the GPU Advisor tab on a copy of demo_logs/; the tab's address is the
last line printed, once TensorBoard answers. Ctrl+C, or a signal to this script's PID (SIGTERM,
SIGHUP), stops it and TensorBoard with every process TensorBoard started (the plugin's workers).

    python scripts/serve_demo.py [--port 6006] [--logdir demo_logs] [--copy-dir ~/.cache/tb_gpu_advisor/demo]

TensorBoard serves a copy outside the work tree, made again when the source's files change: the Profile
tab writes its caches (`.cached_tools.json`, `*.SSTABLE`, ...) into the logdir it serves, and those must
never reach the repository.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_COPY_DIR = os.path.join(os.path.expanduser("~"), ".cache", "tb_gpu_advisor", "demo")


def fingerprint(source: str) -> str:
    """A digest of every file's path and bytes under `source`."""
    digest = hashlib.sha256()
    for folder, dirs, files in os.walk(source):
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(folder, name)
            digest.update(os.path.relpath(path, source).encode() + b"\0")
            with open(path, "rb") as f:
                digest.update(hashlib.sha256(f.read()).digest())
    return digest.hexdigest()


def fresh_copy(source: str, copy_dir: str) -> str:
    """`copy_dir/<source's name>`, a copy of `source`, made again when `source` changed since the last one."""
    target = os.path.join(copy_dir, os.path.basename(os.path.normpath(source)))
    stamp = os.path.join(copy_dir, "fingerprint")
    want = fingerprint(source)
    have = open(stamp, encoding="utf-8").read() if os.path.exists(stamp) and os.path.isdir(target) else ""
    if have != want:
        shutil.rmtree(target, ignore_errors=True)
        os.makedirs(copy_dir, exist_ok=True)
        shutil.copytree(source, target)
        with open(stamp, "w", encoding="utf-8") as f:
            f.write(want)
    return target


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=6006)
    ap.add_argument("--logdir", default=os.path.join(ROOT, "demo_logs"), help="the logdir to copy and serve")
    ap.add_argument("--copy-dir", default=DEFAULT_COPY_DIR, help="where the served copy lives (outside the repo)")
    ap.add_argument("--host", default=None, help="bind to this address only (default: every address)")
    args = ap.parse_args(argv)
    served = fresh_copy(args.logdir, args.copy_dir)
    bind = ["--host", args.host] if args.host else ["--bind_all"]
    # Ctrl+C (even where the shell started this with SIGINT ignored), SIGTERM and SIGHUP all end in the
    # `finally` below; Python's default for SIGTERM and SIGHUP ends the process without it, leaving
    # TensorBoard serving on the port
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, stop)
    # TensorBoard in a process group of its own, which its children (the data server, the plugin's
    # worker processes, which hold the listening socket too) join: stopped as one below
    tb = subprocess.Popen(
        [sys.executable, "-m", "tensorboard.main", "--logdir", served, "--port", str(args.port), *bind],
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        while True:
            if tb.poll() is not None:
                print(f"TensorBoard exited with {tb.returncode}", file=sys.stderr)
                return tb.returncode or 1
            try:
                with urllib.request.urlopen(f"http://localhost:{args.port}/data/plugins_listing", timeout=2):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    print("TensorBoard did not answer in 120 s", file=sys.stderr)
                    return 1
                time.sleep(0.5)
        time.sleep(0.5)  # let TensorBoard's own start-up lines come first
        print(f"\nServing a copy of {os.path.relpath(args.logdir)} from {served}", flush=True)
        print(f"GPU Advisor: http://localhost:{args.port}/#gpu_advisor", flush=True)
        return tb.wait()
    except KeyboardInterrupt:
        return 0
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl+C does not cut the stop short
        stop_group(tb)


def stop(signum, frame) -> None:
    raise KeyboardInterrupt


def stop_group(tb: subprocess.Popen) -> None:
    """TensorBoard and every process in its group: asked to stop (SIGTERM), and what is left of the
    group once TensorBoard has stopped, or after 10 s, killed."""
    try:
        os.killpg(tb.pid, signal.SIGTERM)
    except ProcessLookupError:
        return  # the group is gone
    try:
        tb.wait(10)
    except subprocess.TimeoutExpired:
        pass
    try:
        os.killpg(tb.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    tb.wait()


if __name__ == "__main__":
    sys.exit(main())
