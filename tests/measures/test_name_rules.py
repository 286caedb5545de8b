"""Each name rule has one definition (issue 39: the all-reduce was defined twice, differently, in the
measures and the job digest): the pattern lives in one module of the package, and every reader applies
that one, so the rank digest and the collectives measure agree."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support.sim import Sim

from tb_gpu_advisor.measures import Measures
from tb_gpu_advisor.measures.names import ALLREDUCE

PACKAGE = Path(__file__).resolve().parent.parent.parent / "tb_gpu_advisor"

# Each rule, and a text that every definition of it has (its name, or the heart of its pattern): the
# module that defines it is the only one of the package where the text appears.
RULES = {
    "all-reduce": (r"all_\*reduce|all_\?reduce|\"allreduce\" in|CollectiveReduce\(\?!", "measures/names.py"),
    "collective host spans": (r"record_param_comms\$|\(gloo\|nccl\):", "measures/names.py"),
}


def where(pattern: str) -> list[str]:
    """The package's modules whose source has `pattern`."""
    found = re.compile(pattern)
    return sorted(str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py") if found.search(p.read_text()))


@pytest.mark.parametrize("rule", RULES)
def test_each_name_rule_is_defined_once(rule: str) -> None:
    pattern, home = RULES[rule]
    assert where(pattern) == [home]


def test_the_rule_finder_finds_a_copy(tmp_path: Path) -> None:
    assert re.search(RULES["all-reduce"][0], 'ALLREDUCE = re.compile(r"all_?reduce|CollectiveReduce(?!Scatter)")')
    assert re.search(RULES["all-reduce"][0], 'lambda s: "allreduce" in s.lower()')


@pytest.mark.parametrize(
    "name,is_allreduce",
    [
        ("ncclKernel_AllReduce_RING_LL_Sum_float", True),
        ("ncclAllReduceRingLLKernel_sum_f32", True),
        ("nccl:all_reduce", True),
        ("c10d::allreduce_", True),
        ("sgd/CollectiveReduceV2:CollectiveReduceV2", True),
        ("sgd/CollectiveReduceScatterV2:CollectiveReduceScatterV2", False),
        ("ncclKernel_SendRecv", False),
        ("nccl:all_gather", False),
    ],
)
def test_the_allreduce_rule(name: str, is_allreduce: bool) -> None:
    assert bool(ALLREDUCE.search(name)) is is_allreduce


def test_the_rank_digest_and_the_collectives_measure_agree_on_collective_reduce() -> None:
    """TensorFlow's MultiWorkerMirroredStrategy runs its all-reduce as `CollectiveReduceV2` on the host,
    one NCCL all-reduce kernel on the GPU: the digest (job.allreduce-count), the host's collective calls
    and the GPU's all-reduce measure (allreduce.count) count one all-reduce a step alike."""
    s = Sim(gpus=1)

    def step(i: int, t: float) -> None:
        s.tfc.op("sgd/CollectiveReduceV2:CollectiveReduceV2", t + 100, 300)
        s.kernel(t + 50, 200, "volta_sgemm_128x64_nn", op="d/MatMul:MatMul")
        s.nccl_stream[0].nccl(t + 300, 100, launch=s.launcher)

    s.steps(4, 1000.0, step)
    m = Measures(s.analysis())
    calls = m.host_collective_calls
    assert calls is not None and calls.calls == calls.allreduces == 1.0
    assert m.allreduce.per_gpu == {0: 1.0}
    d = m.rank_digest
    assert d.allreduce_calls == 1.0 and d.collective_calls == 1.0 and d.source == "device"


def test_a_cpu_job_counts_its_collective_reduce_on_the_host() -> None:
    s = Sim(gpus=0)
    s.steps(3, 1000.0, lambda i, t: s.tfc.op("sgd/CollectiveReduceV2:CollectiveReduceV2", t + 100, 300))
    d = Measures(s.analysis()).rank_digest
    assert d.source == "host" and d.allreduce_calls == d.collective_calls == 1.0
    assert d.collective_ms == pytest.approx(0.3)
