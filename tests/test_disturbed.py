"""tests/support/disturbed.py: the retry that real-capture tests share."""

import pytest
from support.disturbed import undisturbed


def test_the_first_undisturbed_capture_is_kept_and_no_more_are_made():
    made = iter([None, None, "third", "fourth"])
    calls = []

    def capture():
        calls.append(1)
        return next(made)

    assert undisturbed(capture, 5, "disturbed") == "third" and len(calls) == 3


def test_every_capture_disturbed_skips_saying_so():
    calls = []
    with pytest.raises(pytest.skip.Exception, match=r"^every capture disturbed \(4 tries\)$"):
        undisturbed(lambda: calls.append(1), 4, "every capture disturbed")
    assert len(calls) == 4
