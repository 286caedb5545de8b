"""Capture a real host-side profile with tensorflow-cpu: a small model fed by tf.data.

Usage: python scripts/capture_tf_cpu.py LOGDIR [--mode keras|loop|eager|unique] [--slow-map-ms MS]
                                              [--steps N] [--synthetic] [--no-callback]

Modes:
- keras (default): `Model.fit` profiled with the TensorBoard callback's `profile_batch`, which marks each
  step with a "Profiled batch" event; with --no-callback, `tf.profiler.experimental.start/stop` around
  `fit` instead (no step markers).
- loop: a `tf.function` training step called from a Python loop on `next(iterator)`, each step wrapped
  in `tf.profiler.experimental.Trace('train', step_num=step, _r=1)`.
- eager: the same loop without `tf.function`: every op dispatched eagerly.
- unique: the `tf.function` loop whose step also runs `tf.unique` and a `tf.py_function` (Python that
  sleeps --py-ms, 2 ms by default, inside the graph).

With --slow-map-ms the pipeline's map sleeps that long per batch (an input-bound run); with --synthetic
the dataset is random in-memory data (the guide's synthetic-data experiment). Needs tensorflow (a test
extra); the advisor itself never imports it.
"""

from __future__ import annotations

import argparse
import os
import sys
import time


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("logdir")
    ap.add_argument("--mode", choices=("keras", "loop", "eager", "unique"), default="keras")
    ap.add_argument("--slow-map-ms", type=float, default=0.0)
    ap.add_argument("--py-ms", type=float, default=2.0)
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--synthetic", action="store_true")
    ap.add_argument(
        "--no-callback",
        action="store_true",
        help="keras mode: profile with tf.profiler.experimental.start/stop around fit (no step markers)",
    )
    args = ap.parse_args(argv)

    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import numpy as np
    import tensorflow as tf

    tf.random.set_seed(0)
    batch, features, units = 128, 128, 256
    x = np.random.default_rng(0).normal(size=(batch * args.steps * 2, features)).astype("float32")
    y = (x.sum(axis=1, keepdims=True) > 0).astype("float32")

    if args.synthetic:
        ds = tf.data.Dataset.from_tensors((x[:batch], y[:batch])).repeat().prefetch(1)
    else:
        ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(batch).repeat()
        if args.slow_map_ms > 0:
            delay = args.slow_map_ms / 1000.0

            def slow(a, b):
                def sleep(t):
                    time.sleep(delay)
                    return t

                a = tf.numpy_function(sleep, [a], tf.float32)
                a.set_shape((batch, features))
                return a, b

            ds = ds.map(slow)
        ds = ds.prefetch(1)

    model = tf.keras.Sequential(
        [
            tf.keras.Input((features,)),
            tf.keras.layers.Dense(units, activation="relu"),
            tf.keras.layers.Dense(units, activation="relu"),
            tf.keras.layers.Dense(1, activation="sigmoid"),
        ]
    )
    warmup = 3
    if args.mode == "keras":
        model.compile(optimizer="adam", loss="binary_crossentropy")
        if args.no_callback:
            model.fit(ds, steps_per_epoch=warmup, epochs=1, verbose=0)  # trace and warm up first
            tf.profiler.experimental.start(args.logdir)
            model.fit(ds, steps_per_epoch=args.steps, epochs=1, verbose=0)
            tf.profiler.experimental.stop()
            return 0
        # Profile the way Keras users do: the TensorBoard callback marks each profiled batch with a
        # "Profiled batch" step marker. The first batches (tracing, warm-up) stay out of the capture.
        tensorboard = tf.keras.callbacks.TensorBoard(
            log_dir=args.logdir, profile_batch=(warmup, warmup + args.steps - 1)
        )
        model.fit(ds, steps_per_epoch=warmup + args.steps + 1, epochs=1, verbose=0, callbacks=[tensorboard])
        return 0

    optimizer = tf.keras.optimizers.Adam()
    loss_fn = tf.keras.losses.BinaryCrossentropy()
    py_delay = args.py_ms / 1000.0

    def python_work(t):
        time.sleep(py_delay)
        return t

    def step(xb, yb):
        with tf.GradientTape() as tape:
            loss = loss_fn(yb, model(xb, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        if args.mode == "unique":
            ids = tf.cast(tf.math.floormod(tf.cast(xb[:, 0] * 100, tf.int64), 50), tf.int64)
            uniq, _ = tf.unique(ids)
            loss += tf.cast(tf.size(uniq), tf.float32) * 0.0
            loss = tf.py_function(python_work, [loss], tf.float32)
        return loss

    if args.mode != "eager":
        step = tf.function(step)
    it = iter(ds)
    for _ in range(warmup):
        step(*next(it))
    tf.profiler.experimental.start(args.logdir)
    for i in range(args.steps):
        with tf.profiler.experimental.Trace("train", step_num=i, _r=1):
            xb, yb = next(it)
            step(xb, yb)
    tf.profiler.experimental.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
