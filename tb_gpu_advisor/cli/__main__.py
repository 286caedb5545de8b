"""`python -m tb_gpu_advisor.cli`: the command."""

from tb_gpu_advisor.cli import console

console()
