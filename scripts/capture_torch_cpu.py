"""Capture a real PyTorch trace on the CPU, as a user would for the GPU Advisor tab: a small
convolutional model trained from a DataLoader under `torch.profiler.profile` with
`tensorboard_trace_handler`, which writes `<logdir>/<run>/<worker>.<span>.pt.trace.json`.

Usage: python scripts/capture_torch_cpu.py LOGDIR [--run NAME] [--steps N] [--slow-ms MS] [--workers N]
                                              [--threads N] [--repeat N] [--skip-first N]
                                              [--no-record-shapes] [--profile-memory] [--with-stack]

With --repeat N the schedule repeats N profiling cycles (wait 1, warm up 1, then the profiled steps),
each written to its own trace file: repeated captures of one program; --skip-first N runs N steps
before the schedule starts. With --slow-ms each sample takes that long to load (an input-bound run
with --workers 0). Needs torch
(the tests install the CPU build); the advisor itself never imports it.
"""

from __future__ import annotations

import argparse
import os
import sys
import time


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("logdir")
    ap.add_argument("--run", default="torch_cpu")
    ap.add_argument("--steps", type=int, default=4, help="profiled (active) steps")
    ap.add_argument("--slow-ms", type=float, default=0.0)
    ap.add_argument("--workers", type=int, default=0)
    ap.add_argument("--skip-first", type=int, default=0, help="steps run before the schedule starts (warm-up)")
    ap.add_argument("--no-record-shapes", action="store_true", help="profile with record_shapes=False")
    ap.add_argument("--profile-memory", action="store_true", help="profile with profile_memory=True")
    ap.add_argument("--with-stack", action="store_true", help="profile with with_stack=True")
    ap.add_argument("--repeat", type=int, default=1, help="profiling cycles, one trace file each")
    ap.add_argument("--threads", type=int, default=2, help="torch's intra-op threads (1: steadier on a busy machine)")
    args = ap.parse_args(argv)

    import torch
    from torch import nn
    from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler

    torch.manual_seed(0)
    torch.set_num_threads(args.threads)

    class Data(torch.utils.data.Dataset):
        def __len__(self):
            return 10_000

        def __getitem__(self, i):
            if args.slow_ms:
                time.sleep(args.slow_ms / 1000)
            return torch.randn(3, 32, 32), int(i % 10)

    loader = torch.utils.data.DataLoader(Data(), batch_size=16, num_workers=args.workers)
    model = nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
        nn.Flatten(), nn.Linear(32, 10),
    )  # fmt: skip
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = nn.CrossEntropyLoss()
    wait, warmup = 1, 1
    with profile(
        activities=[ProfilerActivity.CPU],
        schedule=schedule(wait=wait, warmup=warmup, active=args.steps, repeat=args.repeat, skip_first=args.skip_first),
        on_trace_ready=tensorboard_trace_handler(os.path.join(args.logdir, args.run)),
        record_shapes=not args.no_record_shapes,
        profile_memory=args.profile_memory,
        with_stack=args.with_stack,
    ) as prof:
        for step, (x, y) in enumerate(loader):
            opt.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
            prof.step()
            if step + 1 >= args.skip_first + (wait + warmup + args.steps) * args.repeat + 1:
                break
    return 0


if __name__ == "__main__":
    sys.exit(main())
