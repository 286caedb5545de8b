"""The README's list of checks is the catalogue, generated, not kept by hand."""

import os

from tb_gpu_advisor.checks import catalogue
from tb_gpu_advisor.render import catalogue_markdown

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_readme_checks_table_is_the_catalogue():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        text = f.read()
    block = text.split("<!-- checks:begin -->\n", 1)[1].split("\n<!-- checks:end -->", 1)[0]
    assert block == catalogue_markdown(catalogue()), "regenerate with `tb-gpu-advisor checks --format markdown`"
