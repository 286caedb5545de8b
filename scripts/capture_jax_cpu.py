"""Capture a real JAX profile on the CPU: a jitted training step of a small MLP, each step marked.

Usage: python scripts/capture_jax_cpu.py LOGDIR [--steps N]

Needs `jax` (not a dependency of the advisor or its tests): the tests read the committed capture in
tests/data/jax_cpu_capture/, made with jax 0.10.2 by `python scripts/capture_jax_cpu.py
tests/data/jax_cpu_capture --steps 6`.
"""

from __future__ import annotations

import argparse
import sys


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("logdir")
    ap.add_argument("--steps", type=int, default=6)
    args = ap.parse_args(argv)
    import jax
    import jax.numpy as jnp

    k1, k2, k3 = jax.random.split(jax.random.PRNGKey(0), 3)
    params = {"w1": jax.random.normal(k1, (256, 512)) * 0.05, "w2": jax.random.normal(k2, (512, 1)) * 0.05}
    x = jax.random.normal(k3, (256, 256))
    y = (x.sum(axis=1, keepdims=True) > 0).astype(jnp.float32)

    def loss(p, x, y):
        h = jax.nn.relu(x @ p["w1"])
        return jnp.mean((h @ p["w2"] - y) ** 2)

    @jax.jit
    def train_step(p, x, y):
        g = jax.grad(loss)(p, x, y)
        return jax.tree_util.tree_map(lambda a, b: a - 0.01 * b, p, g)

    params = jax.block_until_ready(train_step(params, x, y))  # compile before the capture
    with jax.profiler.trace(args.logdir):
        for step in range(args.steps):
            with jax.profiler.StepTraceAnnotation("train", step_num=step):
                params = jax.block_until_ready(train_step(params, x, y))
    return 0


if __name__ == "__main__":
    sys.exit(main())
