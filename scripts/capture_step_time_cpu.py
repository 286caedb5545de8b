"""Capture a host-bound PyTorch step on the CPU as a user who logs their step time does: every step's
wall time written as a TensorBoard scalar (`torch.utils.tensorboard.SummaryWriter.add_scalar`, ms) in
the run's folder, and a few steps profiled into the same folder (`tensorboard_trace_handler`,
`record_shapes=True`), so that the advisor can scale the profiler's cost to meet the logged step time
(docs/whatif.md, "The profiler's own cost").

Usage: python scripts/capture_step_time_cpu.py LOGDIR [--run NAME] [--steps N] [--tag TAG]

LOGDIR/RUN holds the trace, the event file, and steps.json (the values logged, as written).
Needs torch (the CPU build) and tensorboard; the advisor itself never imports torch.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("logdir")
    ap.add_argument("--run", default="step_time_cpu")
    ap.add_argument("--steps", type=int, default=40, help="steps in all; the profiler records 3 of them")
    ap.add_argument("--tag", default="step_time_ms")
    args = ap.parse_args(argv)

    import torch
    from torch import nn
    from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler
    from torch.utils.tensorboard import SummaryWriter

    torch.manual_seed(0)
    torch.set_num_threads(1)
    layers = []
    for _ in range(24):
        layers += [nn.Linear(16, 16), nn.LayerNorm(16), nn.GELU()]
    model = nn.Sequential(*layers, nn.Linear(16, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.01, foreach=False)
    x, y = torch.randn(4, 16), torch.randint(0, 4, (4,))
    loss_fn = nn.CrossEntropyLoss()
    out = os.path.join(args.logdir, args.run)
    writer = SummaryWriter(log_dir=out)
    logged = []
    # the profiler records 3 steps in the middle of the run (wait, then warm-up 1, active 3)
    wait = max(args.steps // 2 - 2, 1)
    with profile(
        activities=[ProfilerActivity.CPU],
        schedule=schedule(wait=wait, warmup=1, active=3, repeat=1),
        on_trace_ready=tensorboard_trace_handler(out),
        record_shapes=True,
    ) as prof:
        for step in range(args.steps):
            t0 = time.perf_counter()
            opt.zero_grad(set_to_none=True)
            loss_fn(model(x), y).backward()
            opt.step()
            ms = (time.perf_counter() - t0) * 1000
            writer.add_scalar(args.tag, ms, step)
            logged.append(ms)
            prof.step()
    writer.close()
    with open(os.path.join(out, "steps.json"), "w") as f:
        json.dump({"tag": args.tag, "logged_ms": logged, "profiled_steps": list(range(wait + 1, wait + 4))}, f)
    print(f"{args.run}: {len(logged)} steps logged as {args.tag}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
