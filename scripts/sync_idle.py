"""Where a step with per-step syncs idles its GPU: as captured and as the step graph simulates it without
the profiler (docs/whatif.md, "What the model misses"). For each capture, the GPU's idle time in windows
after the waiting sync of its second-to-last step, and the step.

    PYTHONPATH=. python scripts/sync_idle.py tests/data/gpu_pairs/rn50_b64_sync tests/data/gpu_validation/gpt2v_bf16_sync
"""

from __future__ import annotations

import sys

import numpy as np

from tb_gpu_advisor.graph.build import SYNC
from tb_gpu_advisor.measures import Measures
from tb_gpu_advisor.model.analysis import analyse
from tb_gpu_advisor.report.engine import read_file
from tb_gpu_advisor.serve.selection import select

WINDOWS_MS = (1, 2, 4, 8, 16, 24)


def main(logdirs: list[str]) -> int:
    for logdir in logdirs:
        w = Measures(analyse(read_file(select(logdir, None, None)[0]))).what_if
        if w is None:
            print(f"{logdir}: no steps to re-time")
            continue
        g = w.g
        syncs = np.flatnonzero(g.h_kind == SYNC)
        if len(syncs) < 3:
            print(f"{logdir}: fewer than three syncs")
            continue
        print(logdir)
        for label, t in (("captured", w.captured), ("simulated without the profiler", w.base)):
            s = int(syncs[-3])
            end = int(t.h_end[s + 1] if s + 1 < g.host_points and g.h_kind[s + 1] == SYNC else t.h_end[s])
            idle = []
            for ms in WINDOWS_MS:
                hi = end + ms * 1e9
                busy = np.clip(np.minimum(t.d_end, hi) - np.maximum(t.d_start, end), 0, None).sum()
                idle.append(f"{ms} ms: {(ms * 1e9 - busy) / 1e9:.2f}")
            print(f"  {label}: step {t.period_ps / 1e9:.2f} ms; GPU idle after the syncs (ms) " + ", ".join(idle))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
