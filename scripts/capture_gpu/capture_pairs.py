"""Capture real before/after pairs of the fixes the advisor predicts, each step also timed without the
profiler: the oracle for a predicted saving (shared/ORACLES.md, "Realised savings").

Usage: python scripts/capture_gpu/capture_pairs.py LOGDIR [--only NAME ...] [--small]

Each run is captured as a user would (`torch.profiler` with `tensorboard_trace_handler`, gzipped,
`record_shapes=True`, a schedule of wait 1, warm-up 1, active `--active`) after `--warm` steps, and,
before that, timed without the profiler: `--rounds` rounds of `--timed` steps, the GPU synchronised
only at the ends of a round (the host runs ahead as it does in training), the median round's mean step
kept. LOGDIR/timings.json gets, per run, `unprofiled_ms` (that median), `rounds_ms` (every round) and
what the run is; LOGDIR/pairs.json the pairs (before, after, the fix).

Runs (PyTorch, the models written here so that no download or torchvision is needed):
- ResNet-50 (torchvision's layout, 224x224 images already on the GPU, SGD with momentum,
  `cudnn.benchmark`): `rn50_b64_fp32` (PyTorch's defaults: fp32, cuDNN may use TF32), `rn50_b64_bf16`
  (`autocast(bfloat16)` and `channels_last`), `rn50_b64_sync` (the fp32 step with `loss.item()` and
  `torch.cuda.synchronize()` each step, as a logging loop does), `rn50_b256_fp32`, `rn50_b256_bf16`.
- GPT-2 small (12 layers, 768 wide, 12 heads, 1,024 tokens, batch 8, AdamW, SDPA attention):
  `gpt2_fp32` (TF32 off, PyTorch's default for matmuls), `gpt2_tf32` (`set_float32_matmul_precision
  ("high")`), `gpt2_bf16` (autocast), `gpt2_bf16_pad` (vocabulary 50,257 padded to 50,304),
  `gpt2_bf16_compile` (`torch.compile`, compiled before the timing).
- A 12-layer MLP at batch 32 (launch-bound): `mlp_eager`, `mlp_graphed` (forward and backward in CUDA
  graphs with `torch.cuda.make_graphed_callables`, the fused AdamW outside).
- A small CNN fed by a DataLoader whose samples take `--sample-ms` to load: `loader_w0`, `loader_w4`
  (4 workers, pinned memory).

JAX runs are made by capture_pairs_jax.py (its own process). A run that fails is reported and the
others still run. `--small` shrinks every model, to try the script on a CPU.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

from run_each import run_each

PAIRS = (
    ("rn50_b64_fp32", "rn50_b64_bf16", "precision (host-bound step): bf16 autocast and channels_last"),
    ("rn50_b256_fp32", "rn50_b256_bf16", "precision (GPU-bound step): bf16 autocast and channels_last"),
    ("rn50_b64_sync", "rn50_b64_fp32", "syncs: the per-step loss.item() and torch.cuda.synchronize() removed"),
    ("gpt2_fp32", "gpt2_tf32", "TF32 for fp32 matmuls"),
    ("gpt2_fp32", "gpt2_bf16", "precision: bf16 autocast"),
    ("gpt2_bf16", "gpt2_bf16_pad", "padding: vocabulary 50,257 padded to 50,304"),
    ("gpt2_bf16", "gpt2_bf16_compile", "torch.compile"),
    ("mlp_eager", "mlp_graphed", "CUDA graphs (make_graphed_callables) on a launch-bound step"),
    ("loader_w0", "loader_w4", "input: DataLoader with 4 workers and pinned memory"),
)
RUNS = tuple(dict.fromkeys(r for p in PAIRS for r in p[:2]))


def resnet50(layers=(3, 4, 6, 3), width=64, classes=1000):
    """torchvision's ResNet-50 (v1.5: the stride in the 3x3 conv), written out."""
    from torch import nn

    class Bottleneck(nn.Module):
        def __init__(self, inp: int, planes: int, stride: int):
            super().__init__()
            out = planes * 4
            self.conv1, self.bn1 = nn.Conv2d(inp, planes, 1, bias=False), nn.BatchNorm2d(planes)
            self.conv2 = nn.Conv2d(planes, planes, 3, stride=stride, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(planes)
            self.conv3, self.bn3 = nn.Conv2d(planes, out, 1, bias=False), nn.BatchNorm2d(out)
            self.relu = nn.ReLU(inplace=True)
            self.down = (
                nn.Sequential(nn.Conv2d(inp, out, 1, stride=stride, bias=False), nn.BatchNorm2d(out))
                if stride != 1 or inp != out
                else None
            )

        def forward(self, x):
            idt = x if self.down is None else self.down(x)
            h = self.relu(self.bn1(self.conv1(x)))
            h = self.relu(self.bn2(self.conv2(h)))
            return self.relu(self.bn3(self.conv3(h)) + idt)

    blocks: list = [
        nn.Conv2d(3, width, 7, stride=2, padding=3, bias=False),
        nn.BatchNorm2d(width),
        nn.ReLU(inplace=True),
        nn.MaxPool2d(3, stride=2, padding=1),
    ]
    inp = width
    for i, n in enumerate(layers):
        planes = width * 2**i
        for j in range(n):
            blocks.append(Bottleneck(inp, planes, 2 if (j == 0 and i > 0) else 1))
            inp = planes * 4
    blocks += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(inp, classes)]
    return nn.Sequential(*blocks)


def gpt2(vocab: int, layers: int, width: int, heads: int, seq: int):
    """GPT-2 (nanoGPT's layout): learned positions, pre-norm blocks, SDPA causal attention, tied head."""
    import torch
    from torch import nn
    from torch.nn import functional as F

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(width), nn.LayerNorm(width)
            self.c_attn, self.c_proj = nn.Linear(width, 3 * width), nn.Linear(width, width)
            self.c_fc, self.m_proj = nn.Linear(width, 4 * width), nn.Linear(4 * width, width)

        def forward(self, x):
            b, t, c = x.shape
            q, k, v = self.c_attn(self.ln1(x)).split(width, dim=2)
            q, k, v = (z.view(b, t, heads, c // heads).transpose(1, 2) for z in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.c_proj(y.transpose(1, 2).contiguous().view(b, t, c))
            return x + self.m_proj(F.gelu(self.c_fc(self.ln2(x)), approximate="tanh"))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte, self.wpe = nn.Embedding(vocab, width), nn.Embedding(seq, width)
            self.blocks = nn.ModuleList(Block() for _ in range(layers))
            self.ln_f = nn.LayerNorm(width)
            self.head = nn.Linear(width, vocab, bias=False)
            self.head.weight = self.wte.weight

        def forward(self, idx):
            pos = torch.arange(idx.shape[1], device=idx.device)
            x = self.wte(idx) + self.wpe(pos)
            for blk in self.blocks:
                x = blk(x)
            return self.head(self.ln_f(x))

    return GPT()


def _sync() -> None:
    import torch

    if torch.cuda.is_available():
        torch.cuda.synchronize()


def _rounds(step, batch, args) -> list[float]:
    """Mean step time (ms) of each round of `--timed` steps, the GPU synchronised at a round's ends only."""
    out = []
    for _ in range(args.rounds):
        _sync()
        t0 = time.perf_counter()
        for _ in range(args.timed):
            step(batch())
        _sync()
        out.append((time.perf_counter() - t0) * 1000 / args.timed)
    return out


def _measure(logdir: str, run: str, step, batch, args, what: str) -> None:
    """Warm up, time without the profiler, then capture as a user would; the timings to timings.json."""
    import torch
    from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler

    for _ in range(args.warm):
        step(batch())
    rounds = _rounds(step, batch, args)
    activities = [ProfilerActivity.CPU]
    if torch.cuda.is_available():
        activities.append(ProfilerActivity.CUDA)
    _sync()
    t0 = time.perf_counter()
    with profile(
        activities=activities,
        schedule=schedule(wait=1, warmup=1, active=args.active, repeat=1),
        on_trace_ready=tensorboard_trace_handler(os.path.join(logdir, run), use_gzip=True),
        record_shapes=True,
    ) as prof:
        for _ in range(2 + args.active):
            step(batch())
            prof.step()
    _sync()
    path = os.path.join(logdir, "timings.json")
    timings = json.load(open(path)) if os.path.exists(path) else {}
    timings[run] = {
        "unprofiled_ms": round(statistics.median(rounds), 4),
        "rounds_ms": [round(r, 4) for r in rounds],
        "steps_per_round": args.timed,
        "profiled_wall_ms": round((time.perf_counter() - t0) * 1000 / (2 + args.active), 4),
        "what": what,
        "device": torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu",
    }
    with open(path, "w") as f:
        json.dump(timings, f, indent=1, sort_keys=True)
    print(f"{run}: {timings[run]['unprofiled_ms']:.3f} ms a step without the profiler {rounds}", flush=True)


def _resnet(logdir: str, run: str, args) -> None:
    import torch
    from torch import nn

    dev = args.device
    batch_size = 256 if "_b256" in run else 64
    bf16, sync = run.endswith("_bf16"), run.endswith("_sync")
    if args.small:
        batch_size, size, model = batch_size // 32, 64, resnet50(layers=(1, 1, 1, 1), width=16)
    else:
        size, model = 224, resnet50()
    torch.backends.cudnn.benchmark = True
    model = model.to(dev)
    fmt = torch.channels_last if bf16 else torch.contiguous_format
    model = model.to(memory_format=fmt)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    loss_fn = nn.CrossEntropyLoss()
    x = torch.randn(batch_size, 3, size, size, device=dev).to(memory_format=fmt)
    y = torch.randint(0, 1000, (batch_size,), device=dev)
    seen = []

    def step(_):
        opt.zero_grad(set_to_none=True)
        with torch.autocast(device_type=dev, dtype=torch.bfloat16, enabled=bf16):
            loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        if sync:  # a logging loop: read the loss and wait for the GPU every step
            seen.append(loss.item())
            _sync()

    what = f"ResNet-50, batch {batch_size}, {'bf16 autocast, channels_last' if bf16 else 'fp32'}"
    _measure(logdir, run, step, lambda: None, args, what + (", loss.item() and synchronize each step" if sync else ""))


def _gpt2(logdir: str, run: str, args) -> None:
    import torch
    from torch.nn import functional as F

    dev = args.device
    vocab = 50304 if run.endswith("_pad") else 50257
    if args.small:
        layers, width, heads, seq, batch_size = 2, 128, 4, 128, 2
    else:
        layers, width, heads, seq, batch_size = 12, 768, 12, 1024, 8
    torch.backends.cuda.matmul.allow_tf32 = run == "gpt2_tf32"
    if run == "gpt2_tf32":
        torch.set_float32_matmul_precision("high")
    else:
        torch.set_float32_matmul_precision("highest")
    bf16 = "_bf16" in run
    model = gpt2(vocab, layers, width, heads, seq).to(dev)
    fwd = torch.compile(model) if run.endswith("_compile") else model
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1)
    g = torch.Generator(device="cpu").manual_seed(0)
    idx = torch.randint(0, 50257, (batch_size, seq + 1), generator=g).to(dev)
    x, y = idx[:, :-1].contiguous(), idx[:, 1:].contiguous()

    def step(_):
        opt.zero_grad(set_to_none=True)
        with torch.autocast(device_type=dev, dtype=torch.bfloat16, enabled=bf16):
            logits = fwd(x)
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)).float(), y.view(-1))
        loss.backward()
        opt.step()

    what = f"GPT-2 small ({layers} layers, {width} wide), batch {batch_size} x {seq} tokens, vocabulary {vocab}"
    mode = {"gpt2_fp32": "fp32", "gpt2_tf32": "TF32", "gpt2_bf16": "bf16 autocast"}.get(run, "bf16 autocast")
    _measure(logdir, run, step, lambda: None, args, f"{what}, {mode}" + (", torch.compile" if "compile" in run else ""))
    torch.set_float32_matmul_precision("highest")


def _mlp(logdir: str, run: str, args) -> None:
    import torch
    from torch import nn
    from torch.nn import functional as F

    dev = args.device
    width, depth, batch_size = (64, 4, 8) if args.small else (512, 12, 32)
    model = nn.Sequential(
        *[nn.Sequential(nn.Linear(width, width), nn.LayerNorm(width), nn.GELU()) for _ in range(depth)],
        nn.Linear(width, 10),
    ).to(dev)
    x = torch.randn(batch_size, width, device=dev)
    y = torch.randint(0, 10, (batch_size,), device=dev)
    fused = dev == "cuda"
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=fused)
    fwd = model
    if run == "mlp_graphed" and dev == "cuda":
        fwd = torch.cuda.make_graphed_callables(model, (x,))

    def step(_):
        opt.zero_grad(set_to_none=True)
        F.cross_entropy(fwd(x), y).backward()
        opt.step()

    what = f"MLP of {depth} layers {width} wide, batch {batch_size}, fused AdamW"
    _measure(
        logdir,
        run,
        step,
        lambda: None,
        args,
        what + (", forward and backward as CUDA graphs" if fwd is not model else ", eager"),
    )


def _loader(logdir: str, run: str, args) -> None:
    import torch
    from torch import nn

    dev = args.device
    workers = int(run.removeprefix("loader_w"))
    sample_s = args.sample_ms / 1000
    size = 32 if args.small else 64

    class Images(torch.utils.data.Dataset):
        def __len__(self):
            return 1_000_000

        def __getitem__(self, i):
            time.sleep(sample_s)  # decoding and augmenting one image, as a slow loader does
            return torch.randn(3, size, size), int(i % 100)

    batch_size = 16 if args.small else 128
    loader = torch.utils.data.DataLoader(
        Images(),
        batch_size=batch_size,
        num_workers=workers,
        pin_memory=workers > 0 and dev == "cuda",
        persistent_workers=workers > 0,
        prefetch_factor=4 if workers > 0 else None,
    )
    model = nn.Sequential(
        nn.Conv2d(3, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(),
        nn.Conv2d(64, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(),
        nn.Conv2d(64, 128, 3, padding=1, stride=2), nn.BatchNorm2d(128), nn.ReLU(),
        nn.Conv2d(128, 256, 3, padding=1, stride=2), nn.BatchNorm2d(256), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(256, 100),
    ).to(dev)  # fmt: skip
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    it = iter(loader)

    def step(batch):
        x, y = batch
        x, y = x.to(dev, non_blocking=True), y.to(dev, non_blocking=True)
        opt.zero_grad(set_to_none=True)
        loss_fn(model(x), y).backward()
        opt.step()

    what = f"small CNN, batch {batch_size} of {size}x{size} images, {args.sample_ms} ms to load a sample"
    what += f", DataLoader with {workers} workers" + (" and pinned memory" if workers else "")
    _measure(logdir, run, step, lambda: next(it), args, what)


def run_one(name: str, logdir: str, args) -> None:
    if name.startswith("rn50_"):
        _resnet(logdir, name, args)
    elif name.startswith("gpt2_"):
        _gpt2(logdir, name, args)
    elif name.startswith("mlp_"):
        _mlp(logdir, name, args)
    elif name.startswith("loader_"):
        _loader(logdir, name, args)
    else:
        raise SystemExit(f"unknown run {name!r}; one of {', '.join(RUNS)}")
    import gc

    import torch

    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("logdir")
    ap.add_argument("--only", nargs="*", default=list(RUNS))
    ap.add_argument("--active", type=int, default=3, help="profiled steps per run")
    ap.add_argument("--warm", type=int, default=10, help="steps before the timing (compile, autotune, workers)")
    ap.add_argument("--timed", type=int, default=20, help="steps in a timed round")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--sample-ms", type=float, default=0.1, help="load time of one sample (loader runs)")
    ap.add_argument("--small", action="store_true", help="tiny models, to try the script on a CPU")
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
