"""Capture a real profile with many distinct op names: a transformer trained on the CPU.

Usage: python scripts/capture_transformer.py LOGDIR [--framework keras|jax] [--layers 12] [--steps 60]

- keras (tensorflow-cpu): a Keras transformer (embedding, then per layer multi-head attention, layer
  norms and a GELU feed-forward block; every layer's ops named after it) compiled without XLA, so
  that TensorFlow runs, and the profiler records, each of its ops: about 7,500 distinct host event
  names and 18,500 events a step at 12 layers. Profiled as Keras users do, through the TensorBoard
  callback's `profile_batch` over `--steps` batches after three of warm-up.
- jax: the same stack in jax.numpy, one jitted training step (SGD) called in a loop, each step in
  `jax.profiler.StepTraceAnnotation("train", step_num=i)` under `jax.profiler.trace`: XLA's CPU
  thunks (dots and fusions, each layer's its own) and the Python tracer's calls.

benchmarks/real_capture_benchmark.py makes its real files with this (issue 42: the command timed on
real captures, not only on files replicated from a writer-made scenario). Needs tensorflow (a test
extra) or jax; the advisor itself imports neither.
"""

from __future__ import annotations

import argparse
import os
import sys

SEQ, WIDTH, HEADS, VOCAB, BATCH = 16, 32, 2, 200, 4


def keras_capture(logdir: str, layers: int, steps: int) -> None:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import keras
    import numpy as np
    import tensorflow as tf
    from keras import layers as kl

    keras.utils.set_random_seed(0)
    inp = keras.Input((SEQ,), dtype="int32")
    h = kl.Embedding(VOCAB, WIDTH)(inp)
    for i in range(layers):
        a = kl.MultiHeadAttention(HEADS, WIDTH // HEADS, name=f"attention_{i}")(h, h)
        h = kl.LayerNormalization(name=f"norm_a_{i}")(h + a)
        f = kl.Dense(2 * WIDTH, activation="gelu", name=f"ffn_in_{i}")(h)
        f = kl.Dense(WIDTH, name=f"ffn_out_{i}")(f)
        h = kl.LayerNormalization(name=f"norm_f_{i}")(h + f)
    model = keras.Model(inp, kl.Dense(VOCAB, name="head")(h))
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    model.compile(optimizer="adam", loss=loss, jit_compile=False)  # every op run and profiled as itself
    x = np.random.default_rng(0).integers(0, VOCAB, size=(BATCH * 64, SEQ)).astype("int32")
    ds = tf.data.Dataset.from_tensor_slices((x, x)).batch(BATCH).repeat().prefetch(2)
    warmup = 3
    tensorboard = keras.callbacks.TensorBoard(log_dir=logdir, profile_batch=(warmup, warmup + steps - 1))
    model.fit(ds, steps_per_epoch=warmup + steps + 1, epochs=1, verbose=0, callbacks=[tensorboard])


def jax_capture(logdir: str, layers: int, steps: int) -> None:
    import jax
    import jax.numpy as jnp

    keys = iter(jax.random.split(jax.random.PRNGKey(0), 8 * layers + 4))

    def weight(*shape: int) -> jax.Array:
        return jax.random.normal(next(keys), shape) * 0.05

    params = {
        "embed": weight(VOCAB, WIDTH),
        "head": weight(WIDTH, VOCAB),
        "layers": [
            {n: weight(WIDTH, WIDTH) for n in ("q", "k", "v", "o")}
            | {"in": weight(WIDTH, 2 * WIDTH), "out": weight(2 * WIDTH, WIDTH)}
            for _ in range(layers)
        ],
    }

    def norm(x: jax.Array) -> jax.Array:
        mean = x.mean(-1, keepdims=True)
        return (x - mean) / jnp.sqrt(((x - mean) ** 2).mean(-1, keepdims=True) + 1e-6)

    def loss(p: dict, tokens: jax.Array) -> jax.Array:
        h = p["embed"][tokens]
        for w in p["layers"]:  # unrolled: each layer's ops are XLA thunks of their own
            q, k, v = (h @ w[n] for n in ("q", "k", "v"))
            att = jax.nn.softmax(q @ k.transpose(0, 2, 1) / jnp.sqrt(WIDTH), axis=-1)
            h = norm(h + (att @ v) @ w["o"])
            h = norm(h + jax.nn.gelu(h @ w["in"]) @ w["out"])
        logits = h @ p["head"]
        return -jnp.take_along_axis(jax.nn.log_softmax(logits), tokens[..., None], -1).mean()

    @jax.jit
    def train_step(p: dict, tokens: jax.Array) -> dict:
        g = jax.grad(loss)(p, tokens)
        return jax.tree_util.tree_map(lambda a, b: a - 0.01 * b, p, g)

    tokens = jax.random.randint(next(keys), (BATCH, SEQ), 0, VOCAB)
    params = jax.block_until_ready(train_step(params, tokens))  # compiled before the capture
    with jax.profiler.trace(logdir):
        for step in range(steps):
            with jax.profiler.StepTraceAnnotation("train", step_num=step):
                params = jax.block_until_ready(train_step(params, tokens))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("logdir")
    ap.add_argument("--framework", choices=("keras", "jax"), default="keras")
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--steps", type=int, default=60)
    args = ap.parse_args(argv)
    (keras_capture if args.framework == "keras" else jax_capture)(args.logdir, args.layers, args.steps)
    return 0


if __name__ == "__main__":
    sys.exit(main())
