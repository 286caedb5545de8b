"""Capture one big real profile per framework, for issue 26's "GB traces" on real data: a PyTorch
Kineto trace of hundreds of MB and a JAX XSpace of hundreds of MB, as a user's long capture would be.

Usage: python scripts/capture_gpu/capture_big.py LOGDIR [--only torch_big jax_big] [--torch-mb 500]
       [--jax-mb 300]

- `torch_big`: a GPT-style stack of `--layers` `nn.TransformerEncoderLayer`s trained with AdamW
  (`foreach=False`, one kernel per parameter and op, as older optimizers launch), under
  `torch.profiler` with `record_shapes=True, with_stack=True`, the trace written uncompressed. One
  step is captured first to size the run: the main capture has as many active steps as make about
  `--torch-mb` MB.
- `jax_big`: (in a process of its own when both are asked: CUPTI takes one subscriber per process) a step of `--ops` small jitted functions dispatched one after another (many host and
  device events), each step marked with `StepTraceAnnotation`, under `jax.profiler.trace` with the
  Python tracer on; sized the same way to about `--jax-mb` MB.

Needs a CUDA GPU for real captures (runs on the CPU too, for trying the script with small sizes).
"""

from __future__ import annotations

import argparse
import glob
import os
import shutil
import subprocess
import sys

from run_each import run_each


def _size(folder: str) -> int:
    return sum(
        os.path.getsize(f)
        for f in glob.glob(os.path.join(folder, "**", "*"), recursive=True)
        if f.endswith((".xplane.pb", ".pt.trace.json"))
    )


def torch_big(logdir: str, args) -> None:
    import torch
    from torch import nn
    from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler

    dev = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    layer = lambda: nn.TransformerEncoderLayer(args.width, 8, 4 * args.width, batch_first=True)  # noqa: E731
    model = nn.Sequential(*[layer() for _ in range(args.layers)]).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, foreach=False)
    x = torch.randn(args.batch, args.tokens, args.width, device=dev)

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast(dev, dtype=torch.bfloat16, enabled=dev == "cuda"):
            loss = model(x).float().pow(2).mean()
        loss.backward()
        opt.step()

    for _ in range(3):
        step()

    def capture(run: str, active: int) -> None:
        activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if dev == "cuda" else [])
        with profile(activities=activities, schedule=schedule(wait=1, warmup=1, active=active, repeat=1),
                     on_trace_ready=tensorboard_trace_handler(os.path.join(logdir, run)),
                     record_shapes=True, with_stack=True) as prof:  # fmt: skip
            for _ in range(active + 2):
                step()
                prof.step()
        if dev == "cuda":
            torch.cuda.synchronize()

    probe = os.path.join(logdir, "torch_big_probe")
    capture("torch_big_probe", 1)
    per_step = _size(probe)
    shutil.rmtree(probe)
    active = max(1, min(args.max_steps, round(args.torch_mb * 1e6 / per_step)))
    print(f"torch_big: {per_step / 1e6:.1f} MB a step, capturing {active} steps", flush=True)
    capture("torch_big", active)


def jax_big(logdir: str, args) -> None:
    import jax
    import jax.numpy as jnp

    fns = [jax.jit(lambda a, k=k: jnp.tanh(a * (1.0 + 0.001 * k)) + 0.5 * a) for k in range(args.ops)]
    a = jnp.ones((args.rows, args.rows))
    for f in fns:  # compile before the capture
        a = f(a)
    a.block_until_ready()

    def capture(run: str, steps: int) -> None:
        nonlocal a
        kw = {}
        if hasattr(jax.profiler, "ProfileOptions"):  # jax >= 0.5
            kw["profiler_options"] = options = jax.profiler.ProfileOptions()
            options.python_tracer_level = 1
            options.host_tracer_level = 2
        with jax.profiler.trace(os.path.join(logdir, run), **kw):
            for s in range(steps):
                with jax.profiler.StepTraceAnnotation("train", step_num=s):
                    for f in fns:
                        a = f(a)
            a.block_until_ready()

    probe = os.path.join(logdir, "jax_big_probe")
    capture("jax_big_probe", 2)
    per_step = _size(probe) / 2
    shutil.rmtree(probe)
    steps = max(1, min(args.max_steps, round(args.jax_mb * 1e6 / per_step)))
    print(f"jax_big: {per_step / 1e6:.2f} MB a step, capturing {steps} steps", flush=True)
    capture("jax_big", steps)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("logdir")
    ap.add_argument("--only", nargs="*", default=["torch_big", "jax_big"])
    ap.add_argument("--torch-mb", type=float, default=500)
    ap.add_argument("--jax-mb", type=float, default=300)
    ap.add_argument("--max-steps", type=int, default=2000)
    ap.add_argument("--layers", type=int, default=24)
    ap.add_argument("--width", type=int, default=1024)
    ap.add_argument("--tokens", type=int, default=1024)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--ops", type=int, default=200)
    ap.add_argument("--rows", type=int, default=256)
    args = ap.parse_args(argv)
    if len(args.only) > 1:  # one process each: CUPTI takes one subscriber per process (PyTorch's, then
        # JAX's gets CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED and captures no GPU events)
        rest = [a for a in (sys.argv[1:] if argv is None else argv) if a not in args.only and a != "--only"]
        codes = [subprocess.run([sys.executable, __file__, *rest, "--only", name]).returncode for name in args.only]
        return 1 if any(codes) else 0
    return run_each(
        args.only,
        lambda name: {"torch_big": torch_big, "jax_big": jax_big}[name](args.logdir, args),
        lambda name: f", {_size(os.path.join(args.logdir, name)) / 1e6:.1f} MB",
    )


if __name__ == "__main__":
    sys.exit(main())
