"""Op types as a user knows them, whatever spelling the runtime ran them under (issue 22)."""

import pytest

from tb_gpu_advisor.measures import TENSOR_CORE_ELIGIBLE
from tb_gpu_advisor.model.classify import RUNTIME_OPS, classify_host_event, framework_op_type, op_type_label
from tb_gpu_advisor.model.profile import Kind


@pytest.mark.parametrize(
    "executed,op_type",
    [
        ("MatMul", "MatMul"),
        ("_MklMatMul", "MatMul"),
        ("_MklNativeMatMul", "MatMul"),
        ("_FusedMatMul", "_FusedMatMul"),
        ("_MklFusedMatMul", "_FusedMatMul"),
        ("_MklNativeFusedMatMul", "_FusedMatMul"),
        ("_MklNativeConv2D", "Conv2D"),
        ("_MklNativeFusedConv2D", "_FusedConv2D"),
        ("_MklBatchMatMulV2", "BatchMatMulV2"),
        ("_MklFusedBatchMatMulV2", "_FusedBatchMatMulV2"),
        ("_MklNativeFusedBatchNormV3", "FusedBatchNormV3"),  # a public op whose name starts with Fused
        ("_MklFusedBatchNormGradV3", "FusedBatchNormGradV3"),
        ("_MklToTf", "_MklToTf"),  # a layout conversion: no user op behind it
        ("_Mkl", "_Mkl"),
        ("aten::mm", "aten::mm"),
        ("", ""),
    ],
)
def test_onednn_names_are_the_ops_the_user_wrote(executed, op_type):
    assert framework_op_type(executed) == op_type


@pytest.mark.parametrize(
    "executed", ["MatMul", "_FusedMatMul", "_MklMatMul", "_MklNativeFusedMatMul", "_MklNativeConv2D"]
)
def test_matmul_and_conv_are_tensor_core_eligible_in_every_spelling(executed):
    assert framework_op_type(executed) in TENSOR_CORE_ELIGIBLE


@pytest.mark.parametrize("executed", ["MatMul", "_FusedMatMul", "_MklMatMul", "_MklNativeFusedMatMul"])
def test_host_events_of_every_spelling_are_framework_ops(executed):
    assert classify_host_event(f"model/dense/MatMul:{executed}") == Kind.FRAMEWORK_OP


def test_layout_conversions_are_runtime_work():
    assert {"_MklToTf", "_MklInputConversion"} <= RUNTIME_OPS
    assert classify_host_event("model/dense/MatMul_mkl_to_tf:_MklToTf") == Kind.HOST_OTHER


def test_the_label_shows_the_executed_name_beside_the_type():
    assert op_type_label("MatMul", "_MklMatMul") == "MatMul (ran as _MklMatMul)"
    assert op_type_label("MatMul", "MatMul") == "MatMul"
    assert op_type_label("MatMul", "") == "MatMul"
