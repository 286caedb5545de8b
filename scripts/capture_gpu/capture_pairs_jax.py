"""Capture real JAX before/after pairs (XSpace), each step also timed without the profiler, beside
capture_pairs.py's PyTorch ones: the same LOGDIR, timings.json and pairs.json (merged into).

Usage: python scripts/capture_gpu/capture_pairs_jax.py LOGDIR [--only NAME ...] [--small]

An MLP of `--layers` layers `--width` wide on a batch of `--rows`, trained with plain SGD:
- `jax_eager`: the training step run op by op (no `jax.jit`: every primitive dispatched from Python);
- `jax_jit`: the same step under `jax.jit`;
- `jax_slow_input`: the jitted step, each batch made on the host in NumPy and held up `--input-ms`
  before it is sent (a slow Python-side input pipeline).
Each is captured with `jax.profiler.trace` and the profiler's default options, each step marked with
`StepTraceAnnotation`, after `--warm` steps (the jit compiled) and the unprofiled timing (`--rounds`
rounds of `--timed` steps, `block_until_ready` at a round's ends only).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

from run_each import run_each

PAIRS = (
    ("jax_eager", "jax_jit", "jax.jit on a step run op by op"),
    ("jax_slow_input", "jax_jit", "input: the batch ready when the step asks for it"),
)
RUNS = ("jax_eager", "jax_jit", "jax_slow_input")


def _merge(path: str, key, values) -> None:
    old = json.load(open(path)) if os.path.exists(path) else ({} if isinstance(values, dict) else [])
    if isinstance(values, dict):
        old.update(values)
    else:
        old = [p for p in old if key(p) not in {key(v) for v in values}] + list(values)
    with open(path, "w") as f:
        json.dump(old, f, indent=1, sort_keys=isinstance(values, dict))


def run_one(name: str, logdir: str, args) -> None:
    import jax
    import jax.numpy as jnp
    import numpy as np

    width, rows, layers = args.width, args.rows, args.layers
    keys = jax.random.split(jax.random.PRNGKey(0), layers + 1)
    params = [jax.random.normal(k, (width, width)) * (1.0 / width**0.5) for k in keys[:-1]]
    x0 = jax.random.normal(keys[-1], (rows, width))

    def loss(p, x):
        h = x
        for w in p:
            h = jax.nn.gelu(h @ w)
        return jnp.mean((h - x) ** 2)

    def train_step(p, x):
        g = jax.grad(loss)(p, x)
        return [a - 0.01 * b for a, b in zip(p, g)]

    step_fn = train_step if name == "jax_eager" else jax.jit(train_step)
    rng = np.random.default_rng(0)

    def batch():
        if name == "jax_slow_input":
            time.sleep(args.input_ms / 1000)  # reading and decoding records on the host
            return jax.device_put(rng.standard_normal((rows, width), dtype=np.float32))
        return x0

    for _ in range(args.warm):
        params = step_fn(params, batch())
    jax.block_until_ready(params)
    rounds = []
    for _ in range(args.rounds):
        jax.block_until_ready(params)
        t0 = time.perf_counter()
        for _ in range(args.timed):
            params = step_fn(params, batch())
        jax.block_until_ready(params)
        rounds.append((time.perf_counter() - t0) * 1000 / args.timed)
    t0 = time.perf_counter()
    with jax.profiler.trace(os.path.join(logdir, name)):
        for step in range(args.steps):
            with jax.profiler.StepTraceAnnotation("train", step_num=step):
                params = step_fn(params, batch())
        jax.block_until_ready(params)
    what = (
        f"MLP of {layers} layers {width} wide, batch {rows}, SGD; "
        + {
            "jax_eager": "op by op (no jax.jit)",
            "jax_jit": "jax.jit",
            "jax_slow_input": f"jax.jit, each batch made in NumPy and held up {args.input_ms} ms",
        }[name]
    )
    entry = {
        "unprofiled_ms": round(statistics.median(rounds), 4),
        "rounds_ms": [round(r, 4) for r in rounds],
        "steps_per_round": args.timed,
        "profiled_wall_ms": round((time.perf_counter() - t0) * 1000 / args.steps, 4),
        "what": what,
        "device": str(jax.devices()[0].device_kind),
    }
    _merge(os.path.join(logdir, "timings.json"), None, {name: entry})
    print(f"{name}: {entry['unprofiled_ms']:.3f} ms a step without the profiler {rounds}", flush=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("logdir")
    ap.add_argument("--only", nargs="*", default=list(RUNS))
    ap.add_argument("--steps", type=int, default=5, help="profiled steps")
    ap.add_argument("--warm", type=int, default=5)
    ap.add_argument("--timed", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--width", type=int, default=512)
    ap.add_argument("--rows", type=int, default=512)
    ap.add_argument("--layers", type=int, default=8)
    ap.add_argument("--input-ms", type=float, default=5.0)
    ap.add_argument("--small", action="store_true", help="fewer steps, to try the script on a CPU")
    args = ap.parse_args(argv)
    if args.small:
        args.timed, args.rounds, args.width, args.rows = 3, 2, 64, 64
    os.makedirs(args.logdir, exist_ok=True)
    _merge(
        os.path.join(args.logdir, "pairs.json"),
        lambda p: (p["before"], p["after"]),
        [{"before": b, "after": a, "fix": fix} for b, a, fix in PAIRS],
    )
    return run_each(args.only, lambda name: run_one(name, args.logdir, args))


if __name__ == "__main__":
    sys.exit(main())
