"""The host's time in each phase of a training step, without the profiler and under it as the captures
were made (`record_shapes=True`, CPU and CUDA activities): what the profiler really adds to the host's
work, phase by phase, against what the step graph's model takes out (graph/profiler.py's per-event costs;
docs/whatif.md, "What the model misses").

Usage: python scripts/capture_gpu/host_phases.py OUT.json [--small] [--steps N]

Every step ends with `torch.cuda.synchronize()`, so that each phase's wall time is the host's own work
(the host never waits for the GPU inside a phase: no step queues near the launch queue's 1,024 entries).
Runs, the models and settings of capture_pairs.py and capture_validation.py: `rn50_b64_fp32` (ResNet-50,
batch 64, SGD), `gpt2v_bf16` (GPT-2 small, batch 8 x 1,024, bf16 autocast, fused AdamW), `mlp_eager`
(the 12-layer MLP, batch 32, fused AdamW), `vit_bf16` (ViT-B/16, batch 64, bf16 autocast, AdamW).
Per run and phase (`forward`: zero_grad, forward and loss; `backward`; `optimizer`), the median over
`--steps` steps of each: `unprofiled_ms`, `profiled_ms`.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

from capture_pairs import _sync, gpt2, resnet50

RUNS = ("rn50_b64_fp32", "gpt2v_bf16", "mlp_eager", "vit_bf16")
PHASES = ("forward", "backward", "optimizer")


def make(name: str, small: bool, dev: str):
    """(forward-and-loss, optimizer) of a run."""
    import torch
    from torch import nn
    from torch.nn import functional as F

    bf16 = name.endswith("_bf16")
    if name.startswith("rn50"):
        torch.backends.cudnn.benchmark = True
        batch, size = (2, 64) if small else (64, 224)
        model = resnet50(layers=(1, 1, 1, 1), width=16) if small else resnet50()
        model = model.to(dev)
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
        x = torch.randn(batch, 3, size, size, device=dev)
        y = torch.randint(0, 1000, (batch,), device=dev)

        def loss():
            return F.cross_entropy(model(x), y)

    elif name.startswith("gpt2v"):
        layers, width, heads, seq, batch = (2, 64, 4, 32, 1) if small else (12, 768, 12, 1024, 8)
        model = gpt2(50304, layers, width, heads, seq).to(dev)
        opt = torch.optim.AdamW(model.parameters(), lr=3e-4, fused=dev == "cuda")
        idx = torch.randint(0, 50257, (batch, seq + 1), device=dev)
        x, y = idx[:, :-1].contiguous(), idx[:, 1:].contiguous()

        def loss():
            with torch.autocast(device_type=dev, dtype=torch.bfloat16, enabled=bf16):
                logits = model(x)
            return F.cross_entropy(logits.view(-1, logits.size(-1)).float(), y.view(-1))

    elif name.startswith("mlp"):
        width, depth, batch = (64, 4, 8) if small else (512, 12, 32)
        model = nn.Sequential(
            *[nn.Sequential(nn.Linear(width, width), nn.LayerNorm(width), nn.GELU()) for _ in range(depth)],
            nn.Linear(width, 10),
        ).to(dev)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=dev == "cuda")
        x = torch.randn(batch, width, device=dev)
        y = torch.randint(0, 10, (batch,), device=dev)

        def loss():
            return F.cross_entropy(model(x), y)

    else:  # vit
        layers, width, heads, batch = (2, 64, 4, 2) if small else (12, 768, 12, 64)
        image = 64 if small else 224
        model = gpt2(1000, layers, width, heads, 0, vit=(image, 16)).to(dev)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
        x = torch.randn(batch, 3, image, image, device=dev)
        y = torch.randint(0, 1000, (batch,), device=dev)

        def loss():
            with torch.autocast(device_type=dev, dtype=torch.bfloat16, enabled=bf16):
                return F.cross_entropy(model(x).float(), y)

    return loss, opt


def phases(loss, opt) -> tuple[float, float, float]:
    """One step's host time (ms) in each phase; the GPU synchronised after it."""
    t0 = time.perf_counter()
    opt.zero_grad(set_to_none=True)
    value = loss()
    t1 = time.perf_counter()
    value.backward()
    t2 = time.perf_counter()
    opt.step()
    t3 = time.perf_counter()
    _sync()
    return (t1 - t0) * 1e3, (t2 - t1) * 1e3, (t3 - t2) * 1e3


def gpu_spans(loss, opt, sync: bool, steps: int) -> list[float]:
    """The GPU's time (ms, CUDA events) from a step's start to the end of its forward, backward and
    optimizer work, median over `steps` steps, with the step ended by a sync or not (the host then
    runs ahead and the GPU never waits for it)."""
    import torch

    rows = []
    for _ in range(steps + 1):
        ev = [torch.cuda.Event(enable_timing=True) for _ in range(4)]
        ev[0].record()
        opt.zero_grad(set_to_none=True)
        value = loss()
        ev[1].record()
        value.backward()
        ev[2].record()
        opt.step()
        ev[3].record()
        if sync:
            value.item()
            _sync()
        rows.append(ev)
    _sync()
    spans = [[e[0].elapsed_time(e[k]) for k in (1, 2, 3)] for e in rows[1:]]
    return [round(statistics.median(col), 4) for col in zip(*spans)]


def medians(rows: list[tuple[float, float, float]]) -> list[float]:
    return [round(statistics.median(col), 4) for col in zip(*rows)]


def run(name: str, args) -> dict:
    import torch
    from torch.profiler import ProfilerActivity, profile

    torch.set_float32_matmul_precision("highest")
    loss, opt = make(name, args.small, args.device)
    for _ in range(5):
        phases(loss, opt)
    plain = medians([phases(loss, opt) for _ in range(args.steps)])
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if args.device == "cuda" else [])
    with profile(activities=activities, record_shapes=True):
        for _ in range(2):
            phases(loss, opt)
        profiled = medians([phases(loss, opt) for _ in range(args.steps)])
    again = medians([phases(loss, opt) for _ in range(args.steps)])  # the machine unchanged after
    out: dict = {
        p: {"unprofiled_ms": plain[i], "profiled_ms": profiled[i], "unprofiled_after_ms": again[i]}
        for i, p in enumerate(PHASES)
    }
    if args.device == "cuda":
        for sync in (True, False, True):
            out[f"gpu_ms_{'sync' if sync else 'ahead'}"] = spans = gpu_spans(loss, opt, sync, args.steps)
            print(name, "sync" if sync else "ahead", "GPU ms to the end of forward, backward, optimizer", spans)
    return out


def main(argv=None) -> int:
    import torch

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--small", action="store_true", help="shrink every model, to try the script on a CPU")
    ap.add_argument("--steps", type=int, default=15)
    ap.add_argument("--only", nargs="*", default=list(RUNS))
    args = ap.parse_args(argv)
    args.device = "cuda" if torch.cuda.is_available() else "cpu"
    out = {"device": torch.cuda.get_device_name(0) if args.device == "cuda" else "cpu", "torch": torch.__version__}
    for name in args.only:
        try:
            out[name] = run(name, args)
        except Exception as e:  # noqa: BLE001  one failed run does not stop the others
            out[name] = {"error": f"{type(e).__name__}: {e}"}
        print(name, json.dumps(out[name]), flush=True)
        with open(args.out, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
