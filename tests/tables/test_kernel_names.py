"""The kernels table's short names (measures/kernel_names.py) on the real kernel names of the committed
GPU captures (tests/data/gpu: H100, torch 2.11, cuDNN 9.19; tests/data/gpu_pairs where the branch has
it; the V100 and 128-rank traces of tests/data/pytorch), read from the raw JSON: each class of name
against what distinguishes it, and the mangled ones against binutils' c++filt run in the test."""

from __future__ import annotations

import glob
import gzip
import json
import os
import re
import shutil
import subprocess

import pytest
from test_schema import validate

from tb_gpu_advisor import tables
from tb_gpu_advisor.formats.discovery import discover
from tb_gpu_advisor.measures import Measures
from tb_gpu_advisor.measures.kernel_names import demangle, short_name
from tb_gpu_advisor.model.analysis import analyse
from tb_gpu_advisor.report.engine import read_file

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TRACES = sorted(
    glob.glob(os.path.join(ROOT, "tests", "data", "gpu", "*", "*.pt.trace.json.gz"))
    + glob.glob(os.path.join(ROOT, "tests", "data", "gpu_pairs", "*", "*.pt.trace.json.gz"))
    + glob.glob(os.path.join(ROOT, "tests", "data", "pytorch", "*", "*.pt.trace.json.gz"))
)


def _kernel_names() -> set[str]:
    names = set()
    for path in TRACES:
        with gzip.open(path, "rt") as f:
            names.update(e["name"] for e in json.load(f)["traceEvents"] if e.get("cat") in ("kernel", "Kernel"))
    return names


NAMES = _kernel_names()


def _of(pattern: str) -> list[str]:
    found = sorted(n for n in NAMES if re.search(pattern, n))
    return found


def test_the_captures_hold_every_class_of_name():
    """The classes below are all in the committed captures (else the tests of a class would be empty)."""
    assert len(NAMES) > 300
    for pattern in (r"cutlass::Kernel2<", r"^nvjet_sm90_", r"^triton_(poi|per|red)_", r"^sm90_xmma_gemm_",
                    r"^sm80_xmma_", r"cudnn::", r"^volta_scudnn_", r"vectorized_elementwise_kernel<", r"reduce_kernel<",
                    r"^ncclKernel_"):  # fmt: skip
        assert _of(pattern), pattern


def test_cutlass_wrappers_show_the_kernel_they_wrap():
    """`void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x256_32x3_nt_align1>(...::Params)` is
    the GEMM its argument names, `_align1` (the padding finding's evidence) kept: never "Kernel2"."""
    wrapped = _of(r"^void cutlass(__5x_cudnn)?::Kernel2?<cutlass_\w+>\(")
    assert len(wrapped) >= 20
    for n in wrapped:
        inner = re.match(r"^void cutlass(?:__5x_cudnn)?::Kernel2?<(cutlass_\w+)>\(", n).group(1)
        assert short_name(n) == inner, n
        assert re.search(r"_align\d+$", short_name(n)), n
    assert (
        short_name(
            "void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x256_32x3_nt_align1>"
            "(cutlass_80_tensorop_s1688gemm_128x256_32x3_nt_align1::Params)"
        )
        == "cutlass_80_tensorop_s1688gemm_128x256_32x3_nt_align1"
    )
    # a wrapper of a templated kernel: the kernel's name, its library kept, its templates folded
    for n in _of(r"^void cutlass__5x_cudnn::Kernel<cutlass__5x_cudnn::reduction::kernel::ReduceSplitK<"):
        assert short_name(n) == "cutlass::ReduceSplitK", n


def test_generated_names_are_kept_and_xmma_loses_its_plumbing():
    """nvjet, Triton, cuDNN's precompiled and cuBLAS's ampere/volta kernels are names already: kept
    whole. cuBLAS's and cuDNN's `sm90_xmma_...` lose their warp shape, `execute`, `kernel` and library
    tag, nothing else: the data types, layout, tile and the split-k mode stay."""
    for pattern in (r"^nvjet_", r"^triton_", r"^volta_", r"^ampere_", r"^cudnn_generated_"):
        for n in _of(pattern):
            assert short_name(n) == n, n
    xmma = _of(r"^sm\d+_xmma_")
    assert len(xmma) >= 10
    for n in xmma:
        s = short_name(n)
        assert not re.search(r"warp(group)?size|_execute|__5x_|_kernel(_|$)", s), s
        kept = re.sub(r"_(warpsize|warpgroupsize)\d+x\d+x\d+|_execute|_kernel|__5x_\w+$", "", n)
        assert s == kept, n
    assert (
        short_name(
            "sm90_xmma_gemm_f32f32_tf32f32_f32_nt_n_tilesize128x128x32_warpgroupsize1x1x1_execute_segment_k_off"
            "_kernel__5x_cublas"
        )
        == "sm90_xmma_gemm_f32f32_tf32f32_f32_nt_n_tilesize128x128x32_segment_k_off"
    )


def test_cudnn_and_aten_kernels_fold_their_templates():
    """A C++ signature: no return type, no parameters, templates folded; a library's namespace kept
    (`cudnn::`), ATen's and anonymous ones dropped."""
    cudnn = _of(r"^void cudnn::")
    assert len(cudnn) >= 10
    for n in cudnn:
        s = short_name(n)
        base = re.match(r"^void cudnn::(?:\w+::)*(\w+)[<(]", n).group(1)
        assert s == f"cudnn::{base}", n
    for n in NAMES:
        s = short_name(n)
        assert s and "(" not in s.replace("(anonymous", "") and not s.startswith(("void ", "Kernel")), (n, s)
        assert len(s) <= min(len(n), 140), n


def test_elementwise_launchers_name_their_functor_or_lambda():
    """`vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, ...>` runs FillFunctor; a
    lambda is named by its function (`GeluCUDAKernelImpl(...)::{lambda()#1}...`), an adapter
    (`BinaryFunctor<float, float, float, MulFunctor<float>>`) by the functor it adapts."""
    launchers = _of(r"^void at::native::(vectorized_elementwise_kernel|unrolled_elementwise_kernel|reduce_kernel)<")
    assert len(launchers) >= 30
    for n in launchers:
        s = short_name(n)
        m = re.match(r"^(vectorized_elementwise_kernel|unrolled_elementwise_kernel|reduce_kernel)<(\w+)>$", s)
        assert m, (n, s)
        assert m.group(2) in n, (n, s)  # a name the signature holds
        assert m.group(2) not in ("Array", "array", "float", "BinaryFunctor", "ReduceOp", "func_wrapper_t"), s
    by = {short_name(n) for n in launchers}
    assert {"vectorized_elementwise_kernel<FillFunctor>", "vectorized_elementwise_kernel<MulFunctor>"} <= by
    assert {"reduce_kernel<MeanOps>", "reduce_kernel<sum_functor>"} & by


@pytest.mark.skipif(not shutil.which("c++filt"), reason="binutils' c++filt is not installed")
def test_mangled_names_read_as_c_plus_plus_filt_reads_them():
    """A mangled symbol's short name is that of its demangled form, c++filt's: a hand-made CUTLASS
    convolution symbol (c++filt gives `void cutlass::Kernel<cutlass::conv::kernel::
    ImplicitGemmConvolution<...> >(...)`), and the real ones of the captures (cuDNN's CUTLASS wgrad
    kernels in gpu_pairs; c++filt gives up on those, 1,675 characters long, so they are checked by
    their template argument)."""
    sym = (
        "_ZN7cutlass6KernelINS_4conv6kernel23ImplicitGemmConvolutionINS_4gemm9GemmShapeILi64ELi128ELi16EEENS_"
        "10tfloat32_tELb1EEEEEvNT_6ParamsE"
    )
    filt = subprocess.run(["c++filt", sym], capture_output=True, text=True, check=True).stdout.strip()
    assert filt.startswith("void cutlass::Kernel<cutlass::conv::kernel::ImplicitGemmConvolution<")
    assert short_name(sym) == short_name(filt) == "cutlass::ImplicitGemmConvolution"
    assert "void " + demangle(sym) == filt.split(" >(")[0].replace("> >", ">>") + ">"
    for n in _of(r"^_Z"):  # cutlass__5x_cudnn::Kernel<...::conv::kernel::ImplicitGemmConvolution<...>>
        assert short_name(n) == "cutlass::" + re.search(r"INS_4conv6kernel\d+(\w+?)I", n).group(1), n[:80]
    assert demangle("_Znot a symbol") is None and short_name("_Z3") == "_Z3"


@pytest.mark.parametrize("run", ["torch_fp16_odd_dims", "torch_fp32", "torch_tf32", "torch_bf16"])
def test_the_kernels_table_shows_short_names_and_keeps_the_full_ones(run):
    """The table's rows: `short_name` as above, `name` the full one (the CSV and the hover)."""
    (f,) = discover(os.path.join(ROOT, "tests", "data", "gpu", run))[0]
    doc = tables.answer(tables.build(Measures(analyse(read_file(f))), "kernels"), limit=tables.MAX_LIMIT)
    validate(doc, "TableResponse")
    assert doc["rows"] and all(r["short_name"] == short_name(r["name"]) for r in doc["rows"])
    top = doc["rows"][0]
    assert top["short_name"] not in ("Kernel", "Kernel2")
    assert top["short_name"].split("_")[-1] in top["name"]  # its distinctive end is the kernel's own
