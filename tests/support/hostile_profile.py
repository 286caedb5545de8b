"""A profile whose names carry HTML and script, to prove every view renders them as text.

python tests/support/hostile_profile.py LOGDIR     writes the run under LOGDIR
"""

from __future__ import annotations

import os
import sys

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [TESTS, os.path.dirname(TESTS)]  # support/ and the package, run as a script

from support.xplane_writer import GPU_SPECS, ProfileWriter  # noqa: E402

RUN = "zz_hostile_<b>run</b>"
SESSION = "2026_11_22_12_00_00"
OP = 'model/<img src=x onerror="window.top.__xss=1">/MatMul:MatMul'
KERNEL = "<script>window.top.__xss=2</script>_sgemm_128x64_nn"
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


if __name__ == "__main__":
    print(write(sys.argv[1]))
