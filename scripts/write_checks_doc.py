"""Regenerate the list of checks in docs/checks.md from the checks' own declarations (between the
`checks:begin` and `checks:end` markers; tests/test_readme.py fails when they differ)."""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from tb_gpu_advisor.checks import catalogue  # noqa: E402
from tb_gpu_advisor.present.render import catalogue_markdown  # noqa: E402

PAGE = os.path.join(ROOT, "docs", "checks.md")
BEGIN, END = "<!-- checks:begin -->\n", "\n<!-- checks:end -->"


def main() -> None:
    with open(PAGE, encoding="utf-8") as f:
        text = f.read()
    head, rest = text.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    with open(PAGE, "w", encoding="utf-8") as f:
        f.write(head + BEGIN + catalogue_markdown(catalogue(), "../") + END + tail)


if __name__ == "__main__":
    main()
