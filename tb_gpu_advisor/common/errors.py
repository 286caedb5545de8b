"""The one exception type for unreadable profiles."""

from __future__ import annotations


class ProfileReadError(Exception):
    """A profile file could not be read: empty, truncated, not XSpace, or inconsistent.

    `path` names the file; `str(error)` is a one-line message that includes it.
    """

    def __init__(self, path: str, message: str):
        super().__init__(f"{path}: {message}")
        self.path = path
        self.message = message

    def __reduce__(
        self,
    ) -> tuple[type, tuple[str, str]]:  # raised in a reading process, re-raised in the server's (engine.read_apart)
        return (ProfileReadError, (self.path, self.message))
