"""The committed panel bundle is what the TypeScript source builds to (it never drifts)."""

import os
import shutil
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FRONTEND = os.path.join(ROOT, "frontend")


def test_bundle_matches_source(tmp_path):
    if not os.path.isdir(os.path.join(FRONTEND, "node_modules")):
        pytest.fail("frontend/node_modules is missing: run `make test` (it installs the panel's npm packages)")
    out = tmp_path / "index.js"
    subprocess.run([shutil.which("node") or "node", "build.mjs", str(out)], cwd=FRONTEND, check=True, timeout=120)
    committed = os.path.join(ROOT, "tb_gpu_advisor", "static", "index.js")
    with open(committed, "rb") as a, open(out, "rb") as b:
        assert a.read() == b.read(), "tb_gpu_advisor/static/index.js is stale: run `make panel` and commit it"
