"""Capture real JAX GPU profiles (XSpace), as a user would for the GPU Advisor tab: a jitted training
step of an MLP under `jax.profiler.trace`, each step marked with `StepTraceAnnotation`.

Usage: python scripts/capture_gpu/capture_jax_gpu.py LOGDIR [--only NAME ...] [--steps 5]

Scenarios (run names under LOGDIR):
- `jax_train`: the jitted step in float32, fed from arrays already on the GPU, waiting for each step;
- `jax_bf16`: the same step computing in bfloat16 (parameters kept in float32), not waiting for each
  step;
- `jax_slow_input`: the same step, each batch made on the host in NumPy and held up `--input-ms`
  before it is sent (a slow Python-side input pipeline).

Needs jax with a GPU backend; the advisor itself never imports it.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from run_each import run_each

SCENARIOS = ("jax_train", "jax_bf16", "jax_slow_input")


def run_scenario(name: str, logdir: str, args) -> None:
    import jax
    import jax.numpy as jnp
    import numpy as np

    width, rows = args.width, args.rows
    k1, k2, k3 = jax.random.split(jax.random.PRNGKey(0), 3)
    params = {
        "w1": jax.random.normal(k1, (width, 4 * width)) * 0.02,
        "w2": jax.random.normal(k2, (4 * width, width)) * 0.02,
    }
    x = jax.random.normal(k3, (rows, width))

    dt = jnp.bfloat16 if name == "jax_bf16" else jnp.float32

    def loss(p, x):
        w1, w2, xc = p["w1"].astype(dt), p["w2"].astype(dt), x.astype(dt)
        h = jax.nn.gelu(xc @ w1)
        return jnp.mean(((h @ w2).astype(jnp.float32) - x) ** 2)

    @jax.jit
    def train_step(p, x):
        g = jax.grad(loss)(p, x)
        return jax.tree_util.tree_map(lambda a, b: a - 0.01 * b, p, g)

    rng = np.random.default_rng(0)

    def batch():
        if name == "jax_slow_input":
            time.sleep(args.input_ms / 1000)  # reading and decoding records on the host
            return jax.device_put(rng.standard_normal((rows, width), dtype=np.float32))
        return x

    params = jax.block_until_ready(train_step(params, batch()))  # compile before the capture
    with jax.profiler.trace(os.path.join(logdir, name)):
        for step in range(args.steps):
            with jax.profiler.StepTraceAnnotation("train", step_num=step):
                params = train_step(params, batch())
                if name != "jax_bf16":
                    params = jax.block_until_ready(params)
        params = jax.block_until_ready(params)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("logdir")
    ap.add_argument("--only", nargs="*", default=list(SCENARIOS))
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--width", type=int, default=2048)
    ap.add_argument("--rows", type=int, default=8192)
    ap.add_argument("--input-ms", type=float, default=30.0)
    args = ap.parse_args(argv)

    def run(name: str) -> None:
        if name not in SCENARIOS:  # SystemExit: not caught as a failed scenario
            raise SystemExit(f"unknown scenario {name!r}; one of {', '.join(SCENARIOS)}")
        run_scenario(name, args.logdir, args)

    return run_each(args.only, run)


if __name__ == "__main__":
    sys.exit(main())
