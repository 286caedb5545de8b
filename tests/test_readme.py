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


def test_readme_defines_the_headline_numbers_as_the_panel_does():
    from tb_gpu_advisor.analysis import HEADLINE_DEFINITIONS

    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        text = " ".join(f.read().split())
    for key, definition in HEADLINE_DEFINITIONS.items():
        assert definition[1:] in text, key  # the README capitalises nothing else


def test_readme_layout_names_every_module():
    """The layout section lists every module and folder of the package (it drifted before)."""
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        text = f.read()
    layout = text.split("### Layout", 1)[1].split("```", 2)[1]
    package = os.path.join(ROOT, "tb_gpu_advisor")
    names = [n for n in os.listdir(package) if not n.startswith(("_", ".")) and n not in ("static",)]
    names = [n for n in names if n.endswith((".py", ".json")) or os.path.isdir(os.path.join(package, n))]
    missing = [n for n in names if n.removesuffix(".py") not in layout]
    assert not missing, f"README layout does not name {missing}"
