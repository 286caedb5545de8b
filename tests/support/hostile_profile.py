"""Hostile files: a profile whose names carry HTML and script, to prove every view renders them as
text; and (issue 38) a gzip of one event repeated that inflates to GBs, an XSpace file of many empty
lines, a run named with right-to-left and control characters.

python tests/support/hostile_profile.py LOGDIR          writes the HTML run under LOGDIR
python tests/support/hostile_profile.py LOGDIR --rtl    the right-to-left run instead
"""

from __future__ import annotations

import os
import struct
import sys
import zlib

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [TESTS, os.path.dirname(TESTS)]  # support/ and the package, run as a script

from support.xplane_writer import GPU_SPECS, ProfileWriter  # noqa: E402

RUN = "zz_hostile_<b>run</b>"
SESSION = "2026_11_22_12_00_00"
OP = 'model/<img src=x onerror="window.top.__xss=1">/MatMul:MatMul'
# a cuBLAS SIMT GEMM by its start (the kernel naming table identifies it: tensorcore.unused names it)
KERNEL = "ampere_sgemm_<script>window.top.__xss=2</script>_128x64_nn"
HOST_OP = "cpu/<svg/onload=window.top.__xss=3>:Unique"


def write(logdir: str) -> str:
    w = ProfileWriter("gpu-worker-0")
    gpu = w.gpu(0, GPU_SPECS["A100"])
    compute = gpu.stream(7, "Compute")
    py = w.thread("python", 1)
    tfc = w.thread("tf_Compute/2", 2)
    for i in range(5):
        t = 1000 + i * 1000.0
        py.step(i, t, 1000)
        compute.kernel(KERNEL, t + 10, 600, op=OP, shape="(float[64,512];float[512,512])", launch=py, lead_us=5)
        tfc.op(HOST_OP, t + 700, 200)
    return w.write(logdir, run=RUN, session=SESSION)


# A run whose name a browser would show reordered ("rtl_" + RLO + "gpj.exe" shows as "rtl_exe.jpg"),
# with a control character besides; and a host name with a left-to-right isolate.
RTL_RUN = "rtl_\u202egpj.exe\x07"
RTL_HOST = "host\u2066x"


def write_rtl(logdir: str) -> str:
    """A small run named RTL_RUN (its host RTL_HOST), at the logdir's root."""
    w = ProfileWriter(RTL_HOST)
    gpu = w.gpu(0, GPU_SPECS["A100"])
    compute = gpu.stream(7, "Compute")
    py = w.thread("python", 1)
    for i in range(3):
        t = 1000 + i * 1000.0
        py.step(i, t, 1000)
        compute.kernel("volta_sgemm_128x64_nn", t + 10, 600, launch=py, lead_us=5)
    return w.write(logdir, run="", session=RTL_RUN)


EVENT = b'{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 1},'


def dense_gzip(path: str, inflated: int, event: bytes = EVENT) -> int:
    """A PyTorch trace of one kernel event repeated to about `inflated` bytes of JSON, as one gzip
    member (issue 38: 6.8 MB inflating to 1.9 GB cost 56.8 s and 9.4 GB). Returns the text's size."""
    block = event * ((1 << 20) // len(event))
    head, tail = b'{"traceEvents": [', event[:-1] + b"]}"
    return repeated_gzip(path, head, block, max(0, (inflated - len(head) - len(tail)) // len(block)), tail)


def repeated_gzip(path: str, head: bytes, block: bytes, count: int, tail: bytes) -> int:
    """gzip of `head`, `count` times `block` and `tail`, as one member, written in a second or two:
    the block deflated once, after a full flush (so its bytes are the same each time), repeated.
    Returns the text's size."""
    z = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    first = z.compress(head) + z.flush(zlib.Z_FULL_FLUSH)
    deflated = z.compress(block) + z.flush(zlib.Z_FULL_FLUSH)
    assert z.compress(block) + z.flush(zlib.Z_FULL_FLUSH) == deflated  # after a full flush, the same bytes
    last = z.compress(tail) + z.flush()
    crc = zlib.crc32(head)
    for _ in range(count):
        crc = zlib.crc32(block, crc)
    crc = zlib.crc32(tail, crc)
    size = len(head) + count * len(block) + len(tail)
    with open(path, "wb") as f:
        f.write(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff" + first)
        for _ in range(count):
            f.write(deflated)
        f.write(last + struct.pack("<II", crc, size & 0xFFFFFFFF))
    return size


# Issue 51's small files that cost GBs, as it measured them before (the command; the tab alike).
# A 2.2 MB gzip of 640 MB of events whose keys repeat ("ph" twice sent the file to the Python reader):
# accepted after 102 s at 7,955 MB.
DUP_KEY_EVENT = b'{"ph": "X", "ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 1},'


def duplicate_keys_gzip(path: str, inflated: int = 640_000_000) -> int:
    return dense_gzip(path, inflated, DUP_KEY_EVENT)


def untrusted_trailer_gzip(path: str, inflated: int = 3 << 30) -> int:
    """384 kB of random text, then GBs inside one JSON string: the first piece inflated is as large as
    its compressed bytes, so the gzip's trailer (what it inflates to) is not believed; refused only
    after 26.8 s and 6,176 MB (14.6 s and a 6.2 GB worker in the tab)."""
    import random

    rng = random.Random(51)
    noise = bytes(rng.choice(b"abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(384 << 10))
    head = b'{"traceEvents": [], "note": "' + noise
    return repeated_gzip(path, head, b"a" * (1 << 20), inflated >> 20, b'"}')


def long_name_gzip(path: str, name_bytes: int = 1536 << 20) -> int:
    """A 1.5 MB gzip of one event whose name is 1.5 GB long: 90 s and 7.2 GB."""
    head = b'{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "'
    tail = b'", "pid": 0, "tid": 7, "ts": 1, "dur": 1}]}'
    return repeated_gzip(path, head, b"a" * (1 << 20), name_bytes >> 20, tail)


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        out.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
        n >>= 7
        if not n:
            return bytes(out)


def _field(tag: int, payload: bytes) -> bytes:
    return bytes([tag]) + _varint(len(payload)) + payload


def _write_plane(path: str, head: bytes, body_parts: list[tuple[bytes, int]]) -> int:
    """An XSpace of one host plane: `head` (its id, name, ...), then each (bytes, times) repeated."""
    length = len(head) + sum(len(b) * n for b, n in body_parts)
    with open(path, "wb") as f:
        f.write(b"\x0a" + _varint(length) + head)
        for part, times in body_parts:
            chunk = max(1, (16 << 20) // max(len(part), 1))
            left = times
            while left:
                k = min(chunk, left)
                f.write(part * k)
                left -= k
    return length


def many_metadata_xspace(path: str, entries: int = 15_000_000) -> int:
    """A host plane with `entries` event-metadata entries, 28 bytes each (15M: 429 MB, which cost 7,245
    MB in the command and 7,888 MB inside TensorBoard): the ids all the same, so it is written at once
    (a map keeps the last; every entry is decoded)."""
    meta = _field(0x12, b"\x08\x01" + _field(0x12, b"model/MatMul:MatMu"))  # id 1, an 18-byte name
    entry = _field(0x22, b"\x08\x01" + meta)  # key 1
    assert len(entry) == 28
    head = b"\x08\x01" + _field(0x12, b"/host:CPU")
    line = _field(0x1A, b"\x08\x01" + _field(0x12, b"python") + _field(0x22, b"\x08\x01\x10\x01\x18\x01"))
    return _write_plane(path, head + line, [(entry, entries)])


def empty_events_xspace(path: str, events: int = 50_000_000) -> int:
    """A host line of `events` empty events (2 bytes each: metadata 0, no offset, no duration; 50M: 96
    MB, which cost 4.8 s and 1.75 GB, kept by TensorBoard afterwards)."""
    meta = _field(0x22, _field(0x12, _field(0x12, b"op")))  # entry: key 0, metadata named "op"
    head = b"\x08\x01" + _field(0x12, b"/host:CPU") + meta
    line_head = b"\x08\x01" + _field(0x12, b"python")
    length = len(line_head) + 2 * events
    return _write_plane(path, head + b"\x1a" + _varint(length) + line_head, [(b"\x22\x00", events)])


def empty_lines(lines: int) -> bytes:
    """An XSpace profile (a host plane with one thread's steps and a GPU's kernels) followed by
    `lines` empty host lines (issue 38: 200,000 of them, 2.8 MB, took 45 s and 948 MB)."""
    from tb_gpu_advisor.formats.xplane import xplane_pb2

    w = ProfileWriter("lines")
    gpu = w.gpu(0, GPU_SPECS["A100"])
    compute = gpu.stream(7, "Compute")
    py = w.thread("python", 1)
    for i in range(3):
        t = 1000 + i * 1000.0
        py.step(i, t, 1000)
        compute.kernel("volta_sgemm_128x64_nn", t + 10, 600, launch=py, lead_us=5)
    space = xplane_pb2.XSpace()
    space.ParseFromString(w.to_bytes())
    host = next(p for p in space.planes if p.name == "/host:CPU")
    for i in range(lines):
        host.lines.add(id=10_000 + i, name=f"t{i}")
    return space.SerializeToString()


def nested_folders(path: str, depth: int) -> None:
    """`path` and `depth` folders nested in it (issue 51: 1,100 of them overflowed the walk's
    recursion), made relative to each other: no path that long is ever spelled."""
    os.mkdir(path)
    fd = os.open(path, os.O_RDONLY)
    try:
        for _ in range(depth):
            os.mkdir("d", dir_fd=fd)
            inner = os.open("d", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = inner
    finally:
        os.close(fd)


def remove_nested(path: str) -> None:
    """Removes what nested_folders made, without recursion: pytest's clean-up of old temporary folders
    (shutil.rmtree) recurses once a folder, and 1,100 of them overflow it, for every later run."""
    import subprocess

    subprocess.run(["rm", "-rf", "--", path], check=True)


if __name__ == "__main__":
    print(write_rtl(sys.argv[1]) if "--rtl" in sys.argv[2:] else write(sys.argv[1]))
