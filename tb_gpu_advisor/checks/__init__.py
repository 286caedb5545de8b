"""Every check of CHECKLIST.md, one module per guide section. Importing this package registers them
in guide order; `run_checks` runs them all on one analysed profile."""
from __future__ import annotations

import traceback

from tb_gpu_advisor.analysis import Analysis
from tb_gpu_advisor.checks import capture, input, kernels, multigpu, precision, utilisation  # noqa: F401  (registration)
from tb_gpu_advisor.checks.base import REGISTRY, SECTIONS, Check, Context, Options

# Guide order: by section, then as declared within a section's module.
REGISTRY.sort(key=lambda c: int(SECTIONS[c.section][0]))
from tb_gpu_advisor.report import NOT_APPLICABLE, Finding

__all__ = ["REGISTRY", "SECTIONS", "Check", "Options", "run_checks", "catalogue"]


def run_checks(analysis: Analysis, options: Options | None = None) -> tuple[list[Finding], list[str]]:
    """All findings (passes included) and the errors of checks that failed. A failing check is a bug
    in the advisor: it is reported, and the other checks still run."""
    options = options or Options()
    findings, errors = [], []
    for spec in REGISTRY:
        ctx = Context(spec, analysis, options)
        try:
            findings.append(spec.evaluate(ctx))
        except Exception as e:  # one broken check must not hide the others
            errors.append(f"check {spec.id} failed: {type(e).__name__}: {e}")
            f = ctx.not_applicable(f"The check failed on this profile ({type(e).__name__}); please report it.")
            f.status = NOT_APPLICABLE
            findings.append(f)
            traceback.print_exc()
    return findings, errors


def catalogue() -> list[dict]:
    return [c.to_json() for c in REGISTRY]
