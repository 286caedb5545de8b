"""Capture a host-bound PyTorch step on the CPU twice over: timed without the profiler, then profiled
as a user would (`record_shapes=True`), so that the profiler's own cost per recorded event can be
checked against what the what-if models take it to be (docs/whatif.md, "The profiler's own cost").

Usage: python scripts/capture_overhead_cpu.py LOGDIR [--run NAME] [--layers N] [--width N] [--with-stack]

The step trains an MLP of `--layers` tiny layers (every op a few µs: the host's dispatch, not the
arithmetic, sets its time). Five profiling cycles (the schedule's wait 3, warm-up 1, `--steps` active)
interleave steps run without the profiler (the wait steps, timed here) with profiled ones (in the
traces). LOGDIR/RUN holds the traces, one per cycle, and LOGDIR/RUN/timings.json the unprofiled steps
and every step's wall and thread CPU time (a step whose wall time passes its CPU time waited for a core).
Needs torch (the CPU build); the advisor itself never imports it.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("logdir")
    ap.add_argument("--run", default="overhead_cpu")
    ap.add_argument("--layers", type=int, default=24)
    ap.add_argument("--width", type=int, default=16)
    ap.add_argument("--steps", type=int, default=3, help="profiled steps a cycle")
    ap.add_argument("--with-stack", action="store_true")
    args = ap.parse_args(argv)

    import torch
    from torch import nn
    from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler

    torch.manual_seed(0)
    torch.set_num_threads(1)
    layers = []
    for _ in range(args.layers):
        layers += [nn.Linear(args.width, args.width), nn.LayerNorm(args.width), nn.GELU()]
    model = nn.Sequential(*layers, nn.Linear(args.width, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.01, foreach=False)
    x = torch.randn(4, args.width)
    y = torch.randint(0, 4, (4,))
    loss_fn = nn.CrossEntropyLoss()

    def step():
        opt.zero_grad(set_to_none=True)
        loss_fn(model(x), y).backward()
        opt.step()

    for _ in range(20):
        step()
    # profiled and unprofiled steps interleaved (the schedule's wait steps run without the profiler),
    # so that whatever else the machine runs slows both alike
    out = os.path.join(args.logdir, args.run)
    cycles, unprofiled, timed = 5, [], []
    with profile(
        activities=[ProfilerActivity.CPU],
        schedule=schedule(wait=3, warmup=1, active=args.steps, repeat=cycles),
        on_trace_ready=tensorboard_trace_handler(out),
        record_shapes=True,
        with_stack=args.with_stack,
    ) as prof:
        for i in range(cycles * (4 + args.steps)):
            t0, c0 = time.perf_counter(), time.thread_time()
            step()
            wall, cpu = (time.perf_counter() - t0) * 1000, (time.thread_time() - c0) * 1000
            phase = i % (4 + args.steps)
            if phase < 3:
                unprofiled.append(wall)
            timed.append({"cycle": i // (4 + args.steps), "profiled": phase >= 4, "wall_ms": wall, "cpu_ms": cpu})
            prof.step()
    with open(os.path.join(out, "timings.json"), "w") as f:
        json.dump(
            {"unprofiled_ms": round(statistics.median(unprofiled), 4), "steps_ms": unprofiled, "steps": timed},
            f,
            indent=1,
        )
    print(f"{args.run}: {statistics.median(unprofiled):.3f} ms a step without the profiler")
    return 0


if __name__ == "__main__":
    sys.exit(main())
