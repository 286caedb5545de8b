"""Capture a real multi-worker tensorflow-cpu MultiWorkerMirroredStrategy job on localhost: each worker
profiles the same steps; the files land in one session, LOGDIR/plugins/profile/<session>/worker<I>.xplane.pb.

Usage: python scripts/capture_tf_mwms.py LOGDIR [--workers 2] [--steps N] [--slow-worker I] [--slow-matmuls N]
(the launcher; it starts the workers as subprocesses, `--worker I --ports A,B,...` each). The slow
worker runs --slow-matmuls extra 256 x 256 matmuls in each profiled step before its step function:
the others wait for it in the gradients' all-reduce (CollectiveReduceV2)."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import time

ATTEMPT_S = 120  # one run of the job, before it is given up and run again


def free_ports(n: int) -> list[int]:
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def worker(args: argparse.Namespace) -> int:
    ports = [int(p) for p in args.ports.split(",")]
    os.environ["TF_CONFIG"] = json.dumps(
        {"cluster": {"worker": [f"127.0.0.1:{p}" for p in ports]}, "task": {"type": "worker", "index": args.worker}}
    )
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import numpy as np
    import tensorflow as tf

    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    batch, features = 64, 128
    x = np.random.default_rng(args.worker).normal(size=(batch * 8, features)).astype("float32")
    y = (x.sum(axis=1, keepdims=True) > 0).astype("float32")
    with strategy.scope():
        model = tf.keras.Sequential(
            [tf.keras.Input((features,)), tf.keras.layers.Dense(512, activation="relu"), tf.keras.layers.Dense(1)]
        )
        opt = tf.keras.optimizers.SGD(0.01)
    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(batch).repeat()
    options = tf.data.Options()
    options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.OFF
    it = iter(strategy.experimental_distribute_dataset(ds.with_options(options)))
    # the slow worker's own compute: a chain of --slow-matmuls 256 x 256 matmuls in each step
    extra = tf.constant(np.random.default_rng(9).normal(size=(256, 256)).astype("float32"))
    rounds = args.slow_matmuls if args.worker == args.slow_worker else 0

    @tf.function
    def burn() -> tf.Tensor:
        y = extra
        for _ in range(rounds):
            y = tf.linalg.matmul(y, extra) * 1e-3
        return y

    @tf.function
    def step(a, b):
        def replica(a, b):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(a) - b))
            grads = tape.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables))  # all-reduces the gradients
            return loss

        return strategy.run(replica, args=(a, b))

    step(*next(it))  # warm up (tracing, the collectives' first run)
    if rounds:
        burn()
    tf.profiler.experimental.start(os.path.join(args.logdir, f".worker{args.worker}"))
    for n in range(args.steps):
        with tf.profiler.experimental.Trace("train", step_num=n, _r=1):
            if rounds:
                burn()  # this worker's extra compute: the others wait for it in the all-reduce
            step(*next(it))
    tf.profiler.experimental.stop()
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("logdir")
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--slow-worker", type=int, default=-1)
    ap.add_argument("--slow-matmuls", type=int, default=200)
    ap.add_argument("--worker", type=int)
    ap.add_argument("--ports")
    args = ap.parse_args(argv)
    if args.worker is not None:
        return worker(args)
    for attempt in range(3):
        failed = _capture(args)
        if not failed:
            return 0
        print(f"attempt {attempt + 1}: {failed}", file=sys.stderr)
        for i in range(args.workers):
            shutil.rmtree(os.path.join(args.logdir, f".worker{i}"), ignore_errors=True)
    return 1


def _capture(args: argparse.Namespace) -> str | None:
    """One run of the job; what went wrong, or None. On a loaded two-core machine a worker now and then
    exits having written no profile (seen about one run in three): the launcher runs the job again."""
    ports = ",".join(str(p) for p in free_ports(args.workers))
    common = [args.logdir, "--steps", str(args.steps), "--slow-worker", str(args.slow_worker)]
    common += ["--slow-matmuls", str(args.slow_matmuls), "--ports", ports]
    procs = [subprocess.Popen([sys.executable, __file__, *common, "--worker", str(i)]) for i in range(args.workers)]
    # A worker that dies (a port another process took between free_ports and its bind) leaves the others
    # waiting for it for ever: once one fails, or the run passes its deadline, the rest are stopped and
    # the job runs again. Alone a run takes about 40 s here.
    deadline = time.monotonic() + ATTEMPT_S
    while any(p.poll() is None for p in procs):
        failed = any(p.returncode not in (None, 0) for p in procs)
        if failed or time.monotonic() > deadline:
            for p in procs:
                p.kill()
                p.wait()
            return "a worker failed" if failed else f"the workers ran past {ATTEMPT_S} s"
        time.sleep(0.2)
    codes = [p.returncode for p in procs]
    if max(codes):
        return f"worker exit codes {codes}"
    found = []
    for i in range(args.workers):
        src = os.path.join(args.logdir, f".worker{i}", "plugins", "profile")
        sessions = os.listdir(src) if os.path.isdir(src) else []
        names = [n for n in os.listdir(os.path.join(src, sessions[0])) if n.endswith(".xplane.pb")] if sessions else []
        if len(sessions) != 1 or len(names) != 1:
            return f"worker {i} wrote no profile"
        found.append((os.path.join(src, sessions[0], names[0]), sessions[0]))
    # The workers run on this machine, so each names its file after the same host name; a real job's
    # hosts differ. Each wrote into its own folder: the files go into one session as worker0, worker1...
    dst = os.path.join(args.logdir, "plugins", "profile", found[0][1])
    os.makedirs(dst, exist_ok=True)
    for i, (path, _) in enumerate(found):
        os.replace(path, os.path.join(dst, f"worker{i}.xplane.pb"))
        shutil.rmtree(os.path.join(args.logdir, f".worker{i}"))
    return None


if __name__ == "__main__":
    sys.exit(main())
