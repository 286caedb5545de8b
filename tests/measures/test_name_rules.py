"""Each name rule has one definition (issue 39: the all-reduce was defined twice, differently, in the
measures and the job digest; the TensorFlow op in classify.py and the ops table; AMD's matrix cores
were read from kernel names by the kernels table while the Tensor Core checks said they do not show
there): the pattern lives in one module of the package, and every reader applies that one, so the
rank digest and the collectives measure agree, and the kernels table and the checks say the same."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from support.sim import Sim

from tb_gpu_advisor.measures import Measures, names
from tb_gpu_advisor.measures.names import ALLREDUCE

PACKAGE = Path(__file__).resolve().parent.parent.parent / "tb_gpu_advisor"

# Each rule, and a text that every definition of it has (its name, or the heart of its pattern): the
# module that defines it is the only one of the package where the text appears.
RULES = {
    "all-reduce": (r"all_\*reduce|all_\?reduce|\"allreduce\" in|CollectiveReduce\(\?!", "measures/names.py"),
    "collective host spans": (r"record_param_comms\$|\(gloo\|nccl\):", "measures/names.py"),
    "TensorFlow op (name:Type)": (r"\[\^\\s:\]\+\)?:", "model/classify.py"),
    "AMD matrix cores": (r"mfma\||_MI\\d|do not show in kernel", "model/kernel_naming.py"),
    # issue 50: what a kernel runs on, its precision and whether it communicates, in one table
    "Tensor Core kernel names": (r"h884\|s884|\"sm90_xmma\"|TENSOR_CORE_MARKERS", "model/kernel_naming.py"),
    "communication kernels": (r"cross_device_reduce|multimem_all_reduce\||deep_ep::", "model/kernel_naming.py"),
}


def where(pattern: str) -> list[str]:
    """The package's modules whose source has `pattern`."""
    found = re.compile(pattern)
    return sorted(str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py") if found.search(p.read_text()))


@pytest.mark.parametrize("rule", RULES)
def test_each_name_rule_is_defined_once(rule: str) -> None:
    pattern, home = RULES[rule]
    assert where(pattern) == [home]


@pytest.mark.parametrize(
    "rule,copy",
    [
        ("all-reduce", 'ALLREDUCE = re.compile(r"all_?reduce|CollectiveReduce(?!Scatter)", re.I)'),
        ("all-reduce", 'mask_of(strings, lambda s: "allreduce" in s.lower().replace("_", ""))'),
        ("collective host spans", 'CALL_HOST = re.compile(r"^(gloo|nccl):|:(Collective(Reduce|Gather)")'),
        ("TensorFlow op (name:Type)", '_TF_OP = re.compile(r"^([^\\s:]+):[A-Za-z_]\\w*$")'),
        ("TensorFlow op (name:Type)", '_FRAMEWORK_OP = re.compile(r"^[^\\s:]+:[A-Za-z_][\\w]*$")'),
        ("AMD matrix cores", 'AMD_MATRIX = re.compile(r"mfma|_MI\\d+x\\d+x\\d+", re.IGNORECASE)'),
        ("AMD matrix cores", '"Its matrix cores (MFMA) do not show in kernel names"'),
        ("Tensor Core kernel names", 'TENSOR_CORE_MARKERS = ("h884", "s884", "h1688")'),
        ("Tensor Core kernel names", 'r"h884|s884|h1688|s1688"'),
        ("communication kernels", 'if "cross_device_reduce" in name: return Kind.COLLECTIVE'),
    ],
)
def test_the_rule_finder_finds_a_copy(rule: str, copy: str) -> None:
    """What each rule's text finds: the definitions the package had twice before issue 39."""
    assert re.search(RULES[rule][0], copy)


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


def test_the_kernels_table_and_the_checks_read_amd_matrix_cores_alike(tmp_path: Path) -> None:
    """An MI250 trace with a rocBLAS/Tensile GEMM (`_MI32x32x2x1`): the kernels table marks it on the
    matrix cores by the rule (classify.AMD_MATRIX), and the Tensor Core checks, which do not judge AMD
    GPUs, say what that rule can tell (classify.MATRIX_CORE_NAMES) rather than that nothing shows."""
    from support.kineto_traces import MI250, SGEMM, TENSILE, kineto

    from tb_gpu_advisor import tables
    from tb_gpu_advisor.checks import run_checks
    from tb_gpu_advisor.formats.kineto.native import read_pytorch_trace_bytes
    from tb_gpu_advisor.measures import MATRIX_CORE_NAMES
    from tb_gpu_advisor.model.analysis import analyse

    def measures(kernel: str) -> Measures:
        raw = kineto([MI250], kernel=kernel, launch="hipLaunchKernel")
        return Measures(analyse(read_pytorch_trace_bytes(raw, "t.pt.trace.json", "h")))

    m = measures(TENSILE)
    (row,) = tables.build(m, "kernels").rows
    assert row["tensor_cores"] is True
    assert tables.build(measures(SGEMM), "kernels").rows[0]["tensor_cores"] is False
    findings = {f.id: f for f in run_checks(m)[0]}
    for check in ("tensorcore.unused", "tensorcore.dims", "precision.fp16-no-tensorcore"):
        assert MATRIX_CORE_NAMES in (findings[check].reason or ""), check


# -- each rule tried only on the names that hold what it needs (issue 42) -----------------------------

NAME_RULES = {k: v for k, v in vars(names).items() if isinstance(v, names.NameRule)}


def _decided(rule: names.NameRule, strings: list[str]) -> list[bool]:
    mask, _ = names.decide(rule, strings, names.JoinedNames(strings, rule.fold))
    assert len(mask) == len(strings) + 1 and not mask[-1]  # index -1: no name
    return mask[:-1].tolist()


@pytest.mark.parametrize("rule", NAME_RULES)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_rule_decides_as_its_pattern_on_every_name(rule: str, data: st.DataObject) -> None:
    """A rule tries its pattern only on the names that hold one of its `needs`: names drawn from the
    pattern itself (which it accepts), among others (any text: NUL, other scripts, `ſ` that
    IGNORECASE reads as `s`), are decided as the pattern decides each of them alone."""
    r = NAME_RULES[rule]
    accepted = st.from_regex(r.pattern)
    strings = data.draw(st.lists(accepted | st.text(max_size=12) | accepted.map(str.upper), min_size=1, max_size=10))
    assert _decided(r, strings) == [bool(r.test(s)) for s in strings]


@pytest.mark.parametrize("rule", NAME_RULES)
def test_a_rule_tries_its_pattern_on_few_names(rule: str) -> None:
    """Among many names that hold none of what the rule needs, none is tried; the one that does is."""
    r = NAME_RULES[rule]
    strings = [f"StatefulPartitionedCall/layer_{i}/dense/BiasAdd:BiasAdd" for i in range(2000)]
    strings.insert(700, r.needs[0].lstrip("\0") + "x" if r.needs else "x")
    mask, tried = names.decide(r, strings, names.JoinedNames(strings, r.fold))
    assert tried == (1 if r.needs else len(strings))
    assert mask[:-1].tolist() == [bool(r.test(s)) for s in strings]
