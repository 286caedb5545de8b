"""Write tests/data/report_digests.json: one digest per report, job and table.

Run it when a change is meant to alter what the advisor reports; the test
tests/test_reports_unchanged.py fails when an output moves without it.

    .venv/bin/python scripts/write_report_digests.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from support.report_digests import DIGESTS_FILE, digests  # noqa: E402

if __name__ == "__main__":
    d = digests()
    DIGESTS_FILE.write_text(json.dumps(d, indent=1, sort_keys=True) + "\n")
    print(f"{DIGESTS_FILE.relative_to(ROOT)}: {len(d)} digests")
