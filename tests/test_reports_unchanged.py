"""Every report, job summary and table on demo_logs and the shared traces is
unchanged unless tests/data/report_digests.json was written anew on purpose
(scripts/write_report_digests.py). This is what lets the house be rebuilt
without changing what a user reads."""

import json

from support.report_digests import DIGESTS_FILE, digests


def test_reports_are_unchanged():
    want = json.loads(DIGESTS_FILE.read_text())
    got = digests()
    assert len(want) > 50
    moved = sorted(k for k in want.keys() | got.keys() if want.get(k) != got.get(k))
    assert not moved, (
        f"{len(moved)} outputs changed: {moved[:10]}; if that is meant, run scripts/write_report_digests.py"
    )
