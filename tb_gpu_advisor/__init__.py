"""tb_gpu_advisor: a TensorBoard plugin and command that walk GPU profiles through the
GPU performance guide's checklist."""

__version__ = "0.1.0"
