"""Hypothesis's profiles with any mix of idle, copy-only, compute-only and collective-only GPUs,
missing stats, single events, zero durations and odd timings (the property tests and the readers'
agreement test draw from it)."""

from hypothesis import strategies as st

from support.xplane_writer import GPU_SPECS, ProfileWriter

GPU_ROLES = ("idle", "copies", "compute", "collectives", "mixed", "no-plane-lines")
KERNELS = (
    "volta_h884gemm_64x64_nn",
    "ampere_sgemm_128x64_nn",
    "void Eigen::internal::EigenMetaKernel<Eigen::half>",
    "ncclKernel_AllReduce_RING_LL_Sum_float",
    "k",
)
OPS = (
    None,
    "d/MatMul:MatMul",
    "m/Mul:Mul",
    "IteratorGetNext:IteratorGetNext",
    "LossScaleOptimizer/cond:If",
    "x/Softmax:Softmax",
)
SHAPES = (None, "(half[64,1001];half[1001,64])", "(float[8,8])", "(int32[3])", "garbage[")


@st.composite
def profiles(draw):
    fmt = draw(st.sampled_from(["new", "old"]))
    w = ProfileWriter("h", fmt=fmt)
    py = w.thread("python", 1)
    launcher = w.thread(draw(st.sampled_from(["tf_gpu_private_0/5", "tf_Compute/5"])), 5)
    data = w.thread("tf_data_private_threadpool/6", 6)
    n_steps = draw(st.integers(0, 4))
    step_us = draw(st.sampled_from([0.0, 1.0, 500.0, 1000.0]))
    for i in range(n_steps):
        py.step(i, 100 + i * step_us, step_us)
    if draw(st.booleans()):
        py.get_next(100, draw(st.sampled_from([0.0, 50.0, 5000.0])))
    if draw(st.booleans()):
        data.event("Iterator::Root::Prefetch", 100, draw(st.sampled_from([0.0, 80.0])))
    if draw(st.booleans()):
        w.thread("tf_Compute/9", 9).op(draw(st.sampled_from(OPS[1:])), draw(st.sampled_from([0.0, 150.0, 900.0])), 40)
    if draw(st.booleans()):
        py.eager("Mul", 300, draw(st.sampled_from([0.0, 10.0])))
    if draw(st.booleans()):
        py.memory(120, 1 << 20, draw(st.sampled_from([0, 1 << 30])), allocator="GPU_0_bfc")
    n_gpus = draw(st.integers(0, 3))
    for d in range(n_gpus):
        role = draw(st.sampled_from(GPU_ROLES))
        gpu = w.gpu(d, draw(st.sampled_from([GPU_SPECS["A100"], GPU_SPECS["P100"], None])))
        if role in ("idle", "no-plane-lines"):
            continue
        compute, copy = gpu.stream(7, "Compute"), gpu.stream(8, "MemcpyH2D")
        for j in range(draw(st.integers(1, 6))):
            t = draw(st.sampled_from([0.0, 99.0, 150.0, 400.0, 1000.0, 3900.0]))
            dur = draw(st.sampled_from([0.0, 0.001, 20.0, 300.0, 2000.0]))
            launch = launcher if draw(st.booleans()) else None
            if role == "copies" or (role == "mixed" and j % 3 == 0):
                copy.memcpy(
                    draw(st.sampled_from(["H2D", "D2H", "D2D", "P2P"])),
                    t,
                    dur,
                    draw(st.sampled_from([0, 4, 1 << 20])),
                    op=draw(st.sampled_from(OPS)),
                    launch=launch,
                    lead_us=draw(st.sampled_from([-5.0, 0.0, 3.0])),
                )
            elif role == "collectives":
                compute.nccl(t, dur, shape=draw(st.sampled_from([None, "(float[1000])"])), launch=launch)
            else:
                compute.kernel(
                    draw(st.sampled_from(KERNELS)),
                    t,
                    dur,
                    op=draw(st.sampled_from(OPS)),
                    shape=draw(st.sampled_from(SHAPES)),
                    launch=launch,
                    is_eager=draw(st.booleans()),
                    lead_us=draw(st.sampled_from([-5.0, 0.0, 100.0])),
                )
        if draw(st.booleans()):
            gpu.derived_line("Steps", [("0", 100, draw(st.sampled_from([0.0, 50.0, 900.0])))])
    return w
