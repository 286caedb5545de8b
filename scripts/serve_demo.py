"""`make demo`: TensorBoard on demo_logs/ with the GPU Advisor tab; the tab's address is the last line
printed, once TensorBoard answers. Ctrl+C stops it.

    python scripts/serve_demo.py [--port 6006] [--logdir demo_logs]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=6006)
    ap.add_argument("--logdir", default=os.path.join(ROOT, "demo_logs"))
    args = ap.parse_args(argv)
    tb = subprocess.Popen(
        [sys.executable, "-m", "tensorboard.main", "--logdir", args.logdir, "--port", str(args.port), "--bind_all"],
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
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
        print(f"\nGPU Advisor on {os.path.relpath(args.logdir)}: http://localhost:{args.port}/#gpu_advisor", flush=True)
        return tb.wait()
    except KeyboardInterrupt:
        return 0
    finally:
        if tb.poll() is None:
            tb.terminate()
            tb.wait(10)


if __name__ == "__main__":
    sys.exit(main())
