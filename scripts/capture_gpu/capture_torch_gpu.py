"""Capture real PyTorch GPU profiles of the guide's scenarios, as a user would for the GPU Advisor tab:
`torch.profiler.profile` with `tensorboard_trace_handler` and `record_shapes=True`, a few steps each,
one TensorBoard run per scenario under LOGDIR.

Usage: python scripts/capture_gpu/capture_torch_gpu.py LOGDIR [--only NAME ...] [--active 3]

Scenarios (run names):
- `torch_input_workers0` / `_workers4` / `_workers8`: a small CNN fed by a DataLoader whose samples
  take `--sample-ms` each to load, with `num_workers=0` (input-bound), then 4 and 8 workers with
  pinned memory; `_workers8_warm` runs 60 steps before the capture instead of `--skip`, so the
  pin-memory thread's pool of pinned buffers is full before it.
- `torch_fp32` / `torch_tf32` / `torch_bf16`: a matmul-heavy MLP block in fp32, in fp32 with TF32
  allowed (`torch.backends.cuda.matmul.allow_tf32`), then under `torch.autocast(bfloat16)`;
  `torch_bf16_memory` the bf16 one with `profile_memory=True, with_stack=True`;
  `torch_fp16_odd_dims` in float16 with a GradScaler and a width 4 short of `--width` (dimensions
  that are not multiples of 8).
- `torch_eager` / `torch_compile`: a transformer-style block of many elementwise ops, eager, then
  `torch.compile`d (Inductor fuses them into Triton kernels).
- `torch_tiny_ops` / `torch_cuda_graph` / `torch_cuda_graph_async`: a step of hundreds of tiny
  kernels (launch-bound), then the same step captured once in a CUDA graph and replayed, waiting for
  each replay to finish (as the tiny-op step does), and replayed without waiting;
  `torch_tiny_ops_compiled` is the tiny-op step under `torch.compile`.

A scenario that fails is reported on stderr and the others still run. Needs a CUDA GPU; the advisor
itself never imports torch. The committed captures in tests/data/gpu/ were made with this script on
the machine named in that folder's README.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from run_each import run_each

SCENARIOS = (
    "torch_input_workers0",
    "torch_input_workers4",
    "torch_input_workers8",
    "torch_input_workers8_warm",
    "torch_fp32",
    "torch_tf32",
    "torch_bf16",
    "torch_bf16_memory",
    "torch_fp16_odd_dims",
    "torch_eager",
    "torch_compile",
    "torch_tiny_ops",
    "torch_tiny_ops_compiled",
    "torch_cuda_graph",
    "torch_cuda_graph_async",
)


def _profiled(logdir: str, run: str, step_fn, args, batches=None, **options) -> None:
    """Run `step_fn` under the profiler: `--skip` steps first, then wait 1, warm-up 1, `--active`."""
    import torch
    from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler

    activities = [ProfilerActivity.CPU]
    if torch.cuda.is_available():
        activities.append(ProfilerActivity.CUDA)
    total = args.skip + 2 + args.active
    with profile(
        activities=activities,
        schedule=schedule(skip_first=args.skip, wait=1, warmup=1, active=args.active, repeat=1),
        on_trace_ready=tensorboard_trace_handler(os.path.join(logdir, run)),
        record_shapes=True,
        **options,
    ) as prof:
        it = iter(batches) if batches is not None else None
        for _ in range(total):
            step_fn(next(it) if it is not None else None)
            prof.step()
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def _input(logdir: str, run: str, args, workers: int) -> None:
    import torch
    from torch import nn

    dev = args.device
    sample_s = args.sample_ms / 1000

    class Images(torch.utils.data.Dataset):
        def __len__(self):
            return 100_000

        def __getitem__(self, i):
            time.sleep(sample_s)  # decoding and augmenting one image, as a slow loader does
            return torch.randn(3, 64, 64), int(i % 100)

    loader = torch.utils.data.DataLoader(
        Images(),
        batch_size=args.batch,
        num_workers=workers,
        pin_memory=workers > 0 and dev == "cuda",
        persistent_workers=workers > 0,
        prefetch_factor=4 if workers > 0 else None,
    )
    model = nn.Sequential(
        nn.Conv2d(3, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(),
        nn.Conv2d(64, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(),
        nn.Conv2d(64, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(),
        nn.Conv2d(64, 128, 3, padding=1, stride=2), nn.BatchNorm2d(128), nn.ReLU(),
        nn.Conv2d(128, 256, 3, padding=1, stride=2), nn.BatchNorm2d(256), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(256, 100),
    ).to(dev)  # fmt: skip
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()

    def step(batch):
        x, y = batch
        x, y = x.to(dev, non_blocking=True), y.to(dev, non_blocking=True)
        opt.zero_grad(set_to_none=True)
        loss_fn(model(x), y).backward()
        opt.step()

    _profiled(logdir, run, step, args, batches=loader)


def _precision(
    logdir: str, run: str, args, bf16: bool, tf32: bool = False, fp16: bool = False, width: int = 0, **options
) -> None:
    import torch
    from torch import nn

    torch.backends.cuda.matmul.allow_tf32 = tf32

    dev = args.device
    width = width or args.width
    model = nn.Sequential(
        nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width),
        nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width),
    ).to(dev)  # fmt: skip
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randn(args.tokens, width, device=dev)

    scaler = torch.amp.GradScaler(dev, enabled=fp16)

    def step(_):
        opt.zero_grad(set_to_none=True)
        with torch.autocast(device_type=dev, dtype=torch.float16 if fp16 else torch.bfloat16, enabled=bf16 or fp16):
            loss = model(x).float().pow(2).mean()
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()

    _profiled(logdir, run, step, args, **options)
    torch.backends.cuda.matmul.allow_tf32 = False


def _block(width: int):
    from torch import nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(width), nn.LayerNorm(width)
            self.fc1, self.fc2 = nn.Linear(width, 4 * width), nn.Linear(4 * width, width)

        def forward(self, x):
            h = self.ln1(x)
            h = h * 0.5 * (1.0 + (h * 0.7978845608 * (1.0 + 0.044715 * h * h)).tanh())  # GELU by hand
            x = x + h.sigmoid() * h
            h = self.fc2(self.fc1(self.ln2(x)).relu())
            return x + h * 0.1

    return nn.Sequential(*[Block() for _ in range(4)])


def _compiled(logdir: str, run: str, args, compiled: bool) -> None:
    import torch

    dev = args.device
    model = _block(args.block_width).to(dev)
    fwd = torch.compile(model) if compiled else model
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    x = torch.randn(8, 512, args.block_width, device=dev)

    def step(_):
        opt.zero_grad(set_to_none=True)
        fwd(x).float().pow(2).mean().backward()
        opt.step()

    for _ in range(3):  # compile (and warm up) before the profiler starts
        step(None)
    _profiled(logdir, run, step, args)


def _tiny(logdir: str, run: str, args, graph: bool, wait: bool = True, compiled: bool = False) -> None:
    import torch

    dev = args.device
    state = [torch.randn(256, device=dev) for _ in range(8)]

    def body():
        for _ in range(40):
            for i, t in enumerate(state):
                t.mul_(0.999).add_(state[i - 1], alpha=0.001)

    if compiled:
        body = torch.compile(body)
        for _ in range(3):  # compile before the profiler starts
            body()
    if graph and dev == "cuda":
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            body()  # warm up on a side stream, as torch.cuda.graphs asks
        torch.cuda.current_stream().wait_stream(side)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            body()

        def step(_):
            g.replay()
            if wait:
                torch.cuda.synchronize()
    else:

        def step(_):
            body()
            if dev == "cuda":
                torch.cuda.synchronize()

    _profiled(logdir, run, step, args)


def run_scenario(name: str, logdir: str, args) -> None:
    if name.startswith("torch_input_workers"):
        workers = name.removeprefix("torch_input_workers").removesuffix("_warm")
        warm = argparse.Namespace(**{**vars(args), "skip": 60}) if name.endswith("_warm") else args
        _input(logdir, name, warm, int(workers))
    elif name == "torch_fp16_odd_dims":
        _precision(logdir, name, args, bf16=False, fp16=True, width=args.width - 4)
    elif name == "torch_bf16_memory":
        _precision(logdir, name, args, bf16=True, profile_memory=True, with_stack=True)
    elif name in ("torch_fp32", "torch_tf32", "torch_bf16"):
        _precision(logdir, name, args, bf16=name == "torch_bf16", tf32=name == "torch_tf32")
    elif name in ("torch_eager", "torch_compile"):
        _compiled(logdir, name, args, compiled=name == "torch_compile")
    elif name == "torch_tiny_ops_compiled":
        _tiny(logdir, name, args, graph=False, compiled=True)
    elif name in ("torch_tiny_ops", "torch_cuda_graph", "torch_cuda_graph_async"):
        _tiny(logdir, name, args, graph=name != "torch_tiny_ops", wait=name != "torch_cuda_graph_async")
    else:
        raise SystemExit(f"unknown scenario {name!r}; one of {', '.join(SCENARIOS)}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("logdir")
    ap.add_argument("--only", nargs="*", default=list(SCENARIOS))
    ap.add_argument("--active", type=int, default=3, help="profiled steps per scenario")
    ap.add_argument(
        "--skip", type=int, default=10, help="steps run before the schedule starts (loader workers, pinned memory warm)"
    )
    ap.add_argument("--sample-ms", type=float, default=0.1, help="load time of one sample (input scenarios)")
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--width", type=int, default=2048, help="MLP width (precision scenarios)")
    ap.add_argument("--block-width", type=int, default=1024, help="model width (eager/compile scenarios)")
    ap.add_argument("--tokens", type=int, default=8192, help="rows per batch (precision scenarios)")
    args = ap.parse_args(argv)
    import torch

    args.device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    return run_each(args.only, lambda name: run_scenario(name, args.logdir, args))


if __name__ == "__main__":
    sys.exit(main())
