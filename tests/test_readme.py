"""The docs' list of checks is the catalogue, generated, not kept by hand; the README stays short and
its links lead somewhere."""

import os
import re

from tb_gpu_advisor.checks import catalogue
from tb_gpu_advisor.present.render import catalogue_markdown

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def read(*path: str) -> str:
    with open(os.path.join(ROOT, *path), encoding="utf-8") as f:
        return f.read()


def test_docs_checks_table_is_the_catalogue():
    text = read("docs", "checks.md")
    block = text.split("<!-- checks:begin -->\n", 1)[1].split("\n<!-- checks:end -->", 1)[0]
    assert block == catalogue_markdown(catalogue(), "../"), "regenerate with `python scripts/write_checks_doc.py`"


def test_docs_define_the_headline_numbers_as_the_panel_does():
    from tb_gpu_advisor.model.analysis import HEADLINE_DEFINITIONS

    text = " ".join(read("docs", "checks.md").split())
    for key, definition in HEADLINE_DEFINITIONS.items():
        assert definition[1:] in text, key  # the page capitalises nothing else


def test_layout_names_every_module():
    """The layout section lists every module and folder of the package (it drifted before)."""
    layout = read("docs", "development.md").split("## Layout", 1)[1].split("```", 2)[1]
    package = os.path.join(ROOT, "tb_gpu_advisor")
    names = [n for n in os.listdir(package) if not n.startswith(("_", ".")) and n not in ("static",)]
    names = [n for n in names if n.endswith((".py", ".json")) or os.path.isdir(os.path.join(package, n))]
    missing = [n for n in names if n.removesuffix(".py") not in layout]
    assert not missing, f"the layout in docs/development.md does not name {missing}"


def test_readme_is_short_and_its_local_links_exist():
    text = read("README.md")
    assert len(text.encode()) <= 15_000, "the README is an entry page: move details to docs/"
    pages = ["README.md"] + [
        os.path.join("docs", n) for n in os.listdir(os.path.join(ROOT, "docs")) if n.endswith(".md")
    ]
    broken = []
    for page in pages:
        base = os.path.dirname(os.path.join(ROOT, page))
        for target in re.findall(r"\]\(([^)\s]+)\)", read(page)):
            if "://" in target or target.startswith("#"):
                continue
            if not os.path.exists(os.path.join(base, target.split("#", 1)[0])):
                broken.append(f"{page}: {target}")
    assert not broken, broken
