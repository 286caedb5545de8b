"""A small builder for the checks' tests: one host, N GPUs, steps laid out by the test, and a
function that runs one check on the result. Times are µs.

Every check run through `run_check` is recorded (check id -> statuses seen); `conftest.py` fails the
session when a check of the registry was never seen both firing and passing."""

from __future__ import annotations

from collections import defaultdict

from support.xplane_writer import GPU_SPECS, ProfileWriter
from tb_gpu_advisor.checks import REGISTRY, Options
from tb_gpu_advisor.checks.base import Context
from tb_gpu_advisor.formats.xplane.reader import read_profile_bytes
from tb_gpu_advisor.measures import Measures
from tb_gpu_advisor.model.analysis import analyse

T0 = 1000.0  # first step starts here, so launches ahead of it stay at positive times
SEEN: dict[str, set[str]] = defaultdict(set)  # check id -> statuses the tests saw it return


class Sim:
    def __init__(self, gpus: int = 1, spec: str | None = "A100", fmt: str = "new", private: bool = True):
        self.w = ProfileWriter("host0", fmt=fmt)
        self.py = self.w.thread("python", 1)
        self.launcher = self.w.thread("tf_gpu_private_0/5" if private else "tf_Compute/5", 5)
        self.tfc = self.w.thread("tf_Compute/9", 9)
        self.get_next_thread = self.w.thread("tf_data_iterator_get_next/3", 3)
        self.gpus = [self.w.gpu(d, GPU_SPECS[spec] if spec else None) for d in range(gpus)]
        self.compute = [g.stream(7, "Compute") for g in self.gpus]
        self.h2d = [g.stream(8, "MemcpyH2D") for g in self.gpus]
        self.d2h = [g.stream(9, "MemcpyD2H") for g in self.gpus]
        self.nccl_stream = [g.stream(20, "Compute") for g in self.gpus]

    def steps(self, n: int, step_us: float, body) -> None:
        """n steps of step_us from T0; body(i, t) lays out step i starting at t."""
        for i in range(n):
            t = T0 + i * step_us
            self.py.step(i, t, step_us)
            body(i, t)

    def kernel(self, t, dur, name="k_kernel", op=None, shape=None, gpu=0, lead=100.0, launch_us=5.0, **kw):
        return self.compute[gpu].kernel(
            name, t, dur, op=op, shape=shape, launch=self.launcher, lead_us=lead, launch_us=launch_us, **kw
        )

    def get_next(self, t, dur):
        self.get_next_thread.get_next(t, dur)

    def analysis(self):
        return analyse(read_profile_bytes(self.w.to_bytes(), "sim.xplane.pb", "host0"))

    def run(self, check_id: str, **options):
        return run_check(self.analysis(), check_id, **options)


def run_check(analysis, check_id: str, **options):
    spec = next(c for c in REGISTRY if c.id == check_id)
    f = spec.evaluate(Context(spec, Measures(analysis), Options(**options)))
    SEEN[check_id].add(f.status)
    # every saving a test sees stays within the step it belongs to
    assert f.saving_pct is None or f.saving_pct <= 100 + 1e-6, (check_id, f.saving_pct)
    return f


def host_only(steps: int = 4, step_us: float = 1000.0) -> ProfileWriter:
    w = ProfileWriter("host0")
    py = w.thread("python", 1)
    for i in range(steps):
        py.step(i, T0 + i * step_us, step_us)
    return w


def analysis_of(w: ProfileWriter):
    return analyse(read_profile_bytes(w.to_bytes(), "sim.xplane.pb", w.host))
