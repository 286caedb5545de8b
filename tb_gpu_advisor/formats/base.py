"""What every format's reader shares that is not classification: the bytes they are given and the
bounds they hold values to. No NumPy here: the native scanner starts before it is imported."""

from __future__ import annotations

import mmap

Buffer = bytes | bytearray | memoryview | mmap.mmap  # a file's bytes, read or mapped

MAX_DUR_PS = 10**18  # about 11.6 days: a longer event is a broken value, clamped
INT32_MAX = 2**31 - 1
