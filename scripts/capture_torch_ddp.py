"""Capture a real multi-rank PyTorch job on the CPU: DistributedDataParallel over gloo on localhost,
profiled on every rank with `torch.profiler` and `tensorboard_trace_handler`, as a user would. Each rank
writes `<logdir>/<run>/<hostname>_<pid>.<span>.pt.trace.json` per profiling cycle, with
`distributedInfo` naming its rank and the world size.

Usage: python scripts/capture_torch_ddp.py LOGDIR [--run NAME] [--ranks 4] [--slow-rank R]
       [--slow-factor 10] [--late-rank R] [--late-ms 30] [--active 3] [--repeat 2] [--swap-cores]
       [--bucket-cap-mb MB] [--timings DIR]

The slow rank does `--slow-factor` times the others' forward compute each step, so the other ranks wait
for it inside the all-reduce: the straggler of a synchronous job. The late rank does the others' work
but its host sleeps `--late-ms` at the start of each step (as a rank that logs, or waits on something
else, before its work): it reaches the all-reduce last with no more compute or input wait than the
others. With `--timings DIR` each rank also
writes `DIR/rank<R>.json`: per step, the forward compute's wall and thread CPU seconds, timed apart from
the profiler, so a test can tell a rank the machine kept off its core (wall well above CPU) from one that
did more work. Needs torch (a test extra).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import time


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _rank_main(rank: int, args: argparse.Namespace, port: int) -> None:
    import torch
    import torch.distributed as dist
    from torch import nn
    from torch.nn.parallel import DistributedDataParallel
    from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler

    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=args.ranks)
    torch.manual_seed(rank)
    torch.set_num_threads(1)
    width = 256
    net = nn.Sequential(nn.Linear(width, width), nn.ReLU(), nn.Linear(width, 10))
    # DDP's gradient buckets: 25 MB by default (this model's 68,362 gradients, 273 KB, are one bucket)
    ddp = {"bucket_cap_mb": args.bucket_cap_mb} if args.bucket_cap_mb is not None else {}
    model = DistributedDataParallel(net, **ddp)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = nn.CrossEntropyLoss()
    extra = args.slow_factor - 1 if rank == args.slow_rank else 0
    late_s = args.late_ms / 1000 if rank == args.late_rank else 0.0
    heavy = torch.randn(width, width)
    wait, warmup = 1, 1
    steps = (wait + warmup + args.active) * args.repeat
    timed = []  # per step: [wall s, thread CPU s] of the forward compute, and when it reached backward
    with profile(
        activities=[ProfilerActivity.CPU],
        schedule=schedule(wait=wait, warmup=warmup, active=args.active, repeat=args.repeat),
        on_trace_ready=tensorboard_trace_handler(os.path.join(args.logdir, args.run)),
        record_shapes=True,
    ) as prof:
        cores = sorted(os.sched_getaffinity(0)) if args.swap_cores and hasattr(os, "sched_getaffinity") else []
        for step in range(steps):
            if len(cores) > 1 and step % (wait + warmup + args.active) == 0:
                # each cycle on another core: a slower core then slows another rank in each cycle
                cycle = step // (wait + warmup + args.active)
                os.sched_setaffinity(0, {cores[(rank + cycle) % len(cores)]})
            if late_s:
                time.sleep(late_s)  # the host, neither compute nor input: the rank starts its work late
            x, y = torch.randn(64, width), torch.randint(0, 10, (64,))
            opt.zero_grad()
            h = x
            wall, cpu = time.perf_counter(), time.thread_time()
            for _ in range(args.base_matmuls * (1 + extra)):  # the forward compute; the slow rank does more
                h = torch.tanh(h @ heavy) * 0.5 + x
            timed.append([time.perf_counter() - wall, time.thread_time() - cpu])
            loss = loss_fn(model(h), y)
            # when it reaches the gradients' all-reduce, on the machine's one monotonic clock
            timed[-1].append(time.monotonic())
            loss.backward()  # DDP's all-reduce of the gradients: every rank waits for the slowest
            opt.step()
            prof.step()
    dist.barrier()
    dist.destroy_process_group()
    if args.timings:
        period = wait + warmup + args.active
        cycles = [
            [t for i, t in enumerate(timed) if i // period == c and i % period >= wait + warmup]
            for c in range(args.repeat)
        ]
        with open(os.path.join(args.timings, f"rank{rank}.json"), "w") as f:
            json.dump({"rank": rank, "cycles": cycles}, f)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("logdir")
    ap.add_argument("--run", default="ddp_gloo")
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--slow-rank", type=int, default=-1, help="the rank doing more compute (-1: none)")
    ap.add_argument("--slow-factor", type=int, default=10)
    ap.add_argument("--late-rank", type=int, default=-1, help="the rank whose host starts each step late (-1: none)")
    ap.add_argument("--late-ms", type=float, default=30.0, help="how late the late rank starts each step's work")
    ap.add_argument("--base-matmuls", type=int, default=20, help="matmuls of every rank's forward per step")
    ap.add_argument("--active", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--bucket-cap-mb", type=float, default=None, help="DDP's bucket_cap_mb (default: DDP's 25)")
    ap.add_argument(
        "--swap-cores",
        action="store_true",
        help="pin each rank's main thread to a core, another one each profiling cycle (rank r on core r + cycle)",
    )
    ap.add_argument(
        "--timings", help="a folder (outside the logdir) for each rank's forward wall and CPU times and arrivals"
    )
    args = ap.parse_args(argv)

    import torch.multiprocessing as mp

    mp.spawn(_rank_main, args=(args, _free_port()), nprocs=args.ranks, join=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
