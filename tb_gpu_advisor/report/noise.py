"""Two captures' steps against their noise (report/compare.py): the bootstrap of their per-step means.

**Noise.** A capture's steps vary, so two captures of the same program differ by chance; a threshold
crossed by a hair is not a change. Every per-step number compared here is decided with the per-step
distributions of both runs where the check has them (the step time, the `@check(noise=...)` measures,
the device time of named rows): the steps of each run are resampled with replacement (a bootstrap,
RESAMPLES times, with a fixed seed so the same two captures always give the same answer), and the
difference of the means gives a 95% interval. A change is called only when

- the interval leaves out zero (the change exceeds the steps' own variation), and
- it is not negligible: at least MIN_CHANGE_PCT (5%) of the base's value; for a check's time also at
  least MIN_TIME_CHANGE_PCT (0.1%) of the base's step; for a share of the step, at least 5% of the
  base's share and at least MIN_SHARE_CHANGE_PTS (1) point.

A check's time without per-step samples is judged by size alone, as is the step time of runs with fewer
than MIN_STEPS steps (no interval).

The interval covers the variation of the steps within each capture, not what differs between two
captures as a whole (other work on the machine, warm-up, clocks, a different node): hence the 5%.
Measured on the shared 2-core CPU machine this was written on, with scripts/capture_torch_cpu.py:
two profiling cycles of one run (`--repeat 2`, 8 steps each) differed by 4.7% in mean step time
with the first cycle 2 steps after the start, by 0.1 to 4.0% with `--skip-first 6` (five runs) and
by 13% when other work started during one; two processes run one after the other differed by 0.3
to 8% while the load was light and by 40 to 79% under heavy load. In 9 of the 11 pairs that
differed by more than 3%, the interval left out zero: real differences between those captures,
which no test over their steps can call noise. Gates therefore take a margin too (`regressions`).
"""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor.checks import REGISTRY
from tb_gpu_advisor.checks.base import NoiseMeasure
from tb_gpu_advisor.measures import Measures
from tb_gpu_advisor.report.diff_doc import ShareChange

CONFIDENCE = 0.95
RESAMPLES = 2000
SEED = 20261124
MIN_STEPS = 3  # fewer steps in a run: no interval
MIN_CHANGE_PCT = 5.0  # a change smaller than this (relative to the base's) is negligible
MIN_SHARE_CHANGE_PTS = 1.0
MIN_TIME_CHANGE_PCT = 0.1  # a check's time changing by less than this share of the base's step is negligible


def noise_checks() -> list[tuple[str, NoiseMeasure]]:
    """The checks whose measure is a share of the step, each with it (`@check(noise=...)`), in guide order."""
    return [(c.id, c.noise) for c in REGISTRY if c.noise is not None]


def step_samples(m: Measures) -> np.ndarray:
    """Each of the run's reported steps: (steps, 1 + the noise checks) ms, the step time, then each noise
    check's measure in it (averaged over the GPUs measured in these steps; the host's without one)."""
    steps = m.steps
    gpus = [g.id for g in m.gpus if g.steps is steps]
    cols = [steps.dur_ps.astype(np.float64)]
    noisy = noise_checks()
    if gpus or steps is m.host_steps:
        cols += [np.asarray(n.per_step(m, gpus), np.float64) for _, n in noisy]
    else:  # GPUs each in their own steps, none in the reported ones: no per-step measure
        cols += [np.full(len(steps), np.nan) for _ in noisy]
    return np.column_stack(cols) / 1e9


def _resampled_means(x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The column means of RESAMPLES resamples of the rows of `x`, with replacement: (RESAMPLES, columns)."""
    n = len(x)
    out = np.empty((RESAMPLES, x.shape[1]))
    chunk = max(1, 200_000 // n)
    for s in range(0, RESAMPLES, chunk):
        idx = rng.integers(0, n, (min(chunk, RESAMPLES - s), n))
        out[s : s + len(idx)] = x[idx].mean(axis=1)
    return out


def _interval(d: np.ndarray) -> list[float]:
    tail = 100 * (1 - CONFIDENCE) / 2
    lo, hi = np.percentile(d, [tail, 100 - tail])
    return [float(lo), float(hi)]


def changed(interval: list[float], delta: float, least: float) -> bool:
    """The noise rule: a change is called when its interval leaves out zero and it is at least `least`."""
    return (interval[0] > 0 or interval[1] < 0) and abs(delta) >= least


def bootstrap_interval(base: np.ndarray, new: np.ndarray) -> list[float] | None:
    """The 95% interval of the difference of two samples' means (new - base), or None with fewer than
    MIN_STEPS values in either."""
    if len(base) < MIN_STEPS or len(new) < MIN_STEPS:
        return None
    rng = np.random.default_rng(SEED)
    rb, rn = _resampled_means(base[:, None], rng), _resampled_means(new[:, None], rng)
    return _interval(rn[:, 0] - rb[:, 0])


class Noise:
    """The bootstrap of two runs' steps: intervals of the difference of per-step means."""

    def __init__(self, base: np.ndarray, new: np.ndarray):
        self.base, self.new = base, new
        self.ok = len(base) >= MIN_STEPS and len(new) >= MIN_STEPS
        if self.ok:
            rng = np.random.default_rng(SEED)
            self.rb, self.rn = _resampled_means(base, rng), _resampled_means(new, rng)

    def step(self) -> tuple[list[float] | None, bool | None]:
        """The mean step time's change: its interval, and whether it is a change."""
        if not self.ok:
            return None, None
        iv = _interval(self.rn[:, 0] - self.rb[:, 0])
        d = float(self.new[:, 0].mean() - self.base[:, 0].mean())
        least = MIN_CHANGE_PCT / 100 * float(self.base[:, 0].mean())
        return iv, changed(iv, d, least)

    def share(self, check_id: str) -> tuple[float, float, list[float], ShareChange] | None:
        """The change of a noise check's measure: its ms per step in both runs and the interval of its
        change, and its share of the step with the noise."""
        noisy = dict(noise_checks())
        col = 1 + list(noisy).index(check_id)
        if not self.ok or np.isnan(self.base[:, col]).any() or np.isnan(self.new[:, col]).any():
            return None

        def parts(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            return x[:, col], 100 * x[:, col] / np.maximum(x[:, 0], 1e-12)

        (bm, bp), (nm, np_) = parts(self.base[None].mean(axis=1)), parts(self.new[None].mean(axis=1))
        (rbm, rbp), (rnm, rnp) = parts(self.rb), parts(self.rn)
        iv_pts = _interval(rnp - rbp)
        d_pts = float(np_[0] - bp[0])
        share: ShareChange = {
            "base_pct": float(bp[0]),
            "new_pct": float(np_[0]),
            "delta_pts": d_pts,
            "interval_pts": iv_pts,
            "significant": changed(iv_pts, d_pts, max(MIN_SHARE_CHANGE_PTS, MIN_CHANGE_PCT / 100 * float(bp[0]))),
        }
        return float(bm[0]), float(nm[0]), _interval(rnm - rbm), share
