"""Capture a second set of real before/after pairs, each step also timed without the profiler, kept
apart from the pairs the what-if models were fitted on (capture_pairs.py): other models and shapes, to
check that the models hold beyond them (tests/test_whatif.py, docs/whatif.md).

Usage: python scripts/capture_gpu/capture_validation.py LOGDIR [--only NAME ...] [--small]

Runs (timed and captured as capture_pairs.py does; the same timings.json and pairs.json):
- ViT-B/16 (12 layers, 768 wide, 197 tokens, batch 64, AdamW): `vit_fp32`, `vit_tf32`, `vit_bf16`,
  `vit_bf16_compile`;
- ResNet-18 at batch 128: `rn18_fp32`, `rn18_bf16` (autocast and channels_last);
- GPT-2 small in bf16 with a `loss.item()` and `torch.cuda.synchronize()` each step, and without:
  `gpt2v_bf16_sync`, `gpt2v_bf16`;
- the 12-layer MLP of capture_pairs.py with the same per-step sync, and without: `mlpv_sync`,
  `mlpv_eager`;
- GPT-2 small at batch 1 and 128 tokens (launch-bound): `gpt2_b1_eager`, `gpt2_b1_graphed` (the model's
  forward and backward in CUDA graphs, `make_graphed_callables`).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from capture_pairs import _measure, _sync, gpt2, resnet50
from run_each import run_each

PAIRS = (
    ("vit_fp32", "vit_tf32", "TF32 for fp32 matmuls, ViT-B/16"),
    ("vit_fp32", "vit_bf16", "precision: bf16 autocast, ViT-B/16"),
    ("vit_bf16", "vit_bf16_compile", "torch.compile, ViT-B/16"),
    ("rn18_fp32", "rn18_bf16", "precision: bf16 autocast and channels_last, ResNet-18"),
    ("gpt2v_bf16_sync", "gpt2v_bf16", "syncs removed, GPT-2 (GPU-bound)"),
    ("mlpv_sync", "mlpv_eager", "syncs removed, a launch-bound MLP"),
    ("gpt2_b1_eager", "gpt2_b1_graphed", "CUDA graphs on a launch-bound GPT-2 (batch 1, 128 tokens)"),
)
RUNS = tuple(dict.fromkeys(r for p in PAIRS for r in p[:2]))


def run_one(name: str, logdir: str, args) -> None:
    import torch
    from torch import nn
    from torch.nn import functional as F

    dev = args.device
    sync = name.endswith("_sync")
    torch.set_float32_matmul_precision("high" if "tf32" in name else "highest")
    if name.startswith("vit_"):
        bf16 = "bf16" in name
        layers, width, heads, batch = (2, 64, 4, 2) if args.small else (12, 768, 12, 64)
        image = 64 if args.small else 224
        model = gpt2(1000, layers, width, heads, 0, vit=(image, 16)).to(dev)
        fwd = torch.compile(model) if name.endswith("_compile") else model
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
        x = torch.randn(batch, 3, image, image, device=dev)
        y = torch.randint(0, 1000, (batch,), device=dev)

        def step(_):
            opt.zero_grad(set_to_none=True)
            with torch.autocast(device_type=dev, dtype=torch.bfloat16, enabled=bf16):
                loss = F.cross_entropy(fwd(x).float(), y)
            loss.backward()
            opt.step()

        what = f"ViT-B/16 ({layers} layers, {width} wide), batch {batch}, {name.removeprefix('vit_')}"
    elif name.startswith("rn18_"):
        bf16 = name.endswith("_bf16")
        torch.backends.cudnn.benchmark = True
        batch, size = (4, 64) if args.small else (128, 224)
        fmt = torch.channels_last if bf16 else torch.contiguous_format
        model = resnet50(layers=(2, 2, 2, 2), basic=True).to(dev).to(memory_format=fmt)
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        x = torch.randn(batch, 3, size, size, device=dev).to(memory_format=fmt)
        y = torch.randint(0, 1000, (batch,), device=dev)

        def step(_):
            opt.zero_grad(set_to_none=True)
            with torch.autocast(device_type=dev, dtype=torch.bfloat16, enabled=bf16):
                loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()

        what = f"ResNet-18, batch {batch}, {'bf16 autocast, channels_last' if bf16 else 'fp32'}"
    elif name.startswith("gpt2"):
        b1 = name.startswith("gpt2_b1")
        if args.small:
            layers, width, heads, seq, batch = 2, 64, 4, 32, 1
        else:
            layers, width, heads, seq, batch = (12, 768, 12, 128, 1) if b1 else (12, 768, 12, 1024, 8)
        model = gpt2(50304, layers, width, heads, seq).to(dev)
        bf16 = not b1
        idx = torch.randint(0, 50257, (batch, seq + 1), device=dev)
        x, y = idx[:, :-1].contiguous(), idx[:, 1:].contiguous()
        if name == "gpt2_b1_graphed" and dev == "cuda":
            model = torch.cuda.make_graphed_callables(model, (x,))
        opt = torch.optim.AdamW(model.parameters(), lr=3e-4, fused=dev == "cuda")
        seen = []

        def step(_):
            opt.zero_grad(set_to_none=True)
            with torch.autocast(device_type=dev, dtype=torch.bfloat16, enabled=bf16):
                logits = model(x)
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)).float(), y.view(-1))
            loss.backward()
            opt.step()
            if sync:
                seen.append(loss.item())
                _sync()

        what = f"GPT-2 small, batch {batch} x {seq} tokens, {'bf16' if bf16 else 'fp32'}"
        what += ", loss.item() and synchronize each step" if sync else ""
        what += ", forward and backward as CUDA graphs" if name.endswith("_graphed") else ""
    elif name.startswith("mlpv_"):
        width, depth, batch = (64, 4, 8) if args.small else (512, 12, 32)
        model = nn.Sequential(
            *[nn.Sequential(nn.Linear(width, width), nn.LayerNorm(width), nn.GELU()) for _ in range(depth)],
            nn.Linear(width, 10),
        ).to(dev)
        x = torch.randn(batch, width, device=dev)
        y = torch.randint(0, 10, (batch,), device=dev)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=dev == "cuda")
        seen = []

        def step(_):
            opt.zero_grad(set_to_none=True)
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            if sync:
                seen.append(loss.item())
                _sync()

        what = f"MLP of {depth} layers {width} wide, batch {batch}, fused AdamW" + (
            ", loss.item() and synchronize each step" if sync else ""
        )
    else:
        raise SystemExit(f"unknown run {name!r}; one of {', '.join(RUNS)}")
    _measure(logdir, name, step, lambda: None, args, what)
    torch.set_float32_matmul_precision("highest")
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("logdir")
    ap.add_argument("--only", nargs="*", default=list(RUNS))
    ap.add_argument("--active", type=int, default=3)
    ap.add_argument("--warm", type=int, default=8)
    ap.add_argument("--timed", type=int, default=15)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--small", action="store_true")
    args = ap.parse_args(argv)
    import torch

    args.device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    os.makedirs(args.logdir, exist_ok=True)
    with open(os.path.join(args.logdir, "pairs.json"), "w") as f:
        json.dump([{"before": b, "after": a, "fix": fix} for b, a, fix in PAIRS], f, indent=1)
    return run_each(args.only, lambda name: run_one(name, args.logdir, args))


if __name__ == "__main__":
    sys.exit(main())
