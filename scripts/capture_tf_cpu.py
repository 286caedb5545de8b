"""Capture a real host-side profile with tensorflow-cpu: a small Keras model fed by tf.data.

Usage: python scripts/capture_tf_cpu.py LOGDIR [--slow-map-ms MS] [--steps N] [--synthetic]

With --slow-map-ms the pipeline's map sleeps that long per batch (an input-bound run); with
--synthetic the dataset is random in-memory data (the guide's synthetic-data experiment).
Needs tensorflow (test extra); the advisor itself never imports it.
"""
from __future__ import annotations

import argparse
import os
import sys
import time


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("logdir")
    ap.add_argument("--slow-map-ms", type=float, default=0.0)
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--synthetic", action="store_true")
    ap.add_argument("--no-callback", action="store_true",
                    help="profile with tf.profiler.experimental.start/stop around fit (no step markers)")
    args = ap.parse_args(argv)

    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import numpy as np
    import tensorflow as tf

    tf.random.set_seed(0)
    batch, features, units = 256, 256, 512
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
    model.compile(optimizer="adam", loss="binary_crossentropy")
    warmup = 3
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


if __name__ == "__main__":
    sys.exit(main())
