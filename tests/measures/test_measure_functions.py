"""The subject modules of measures/ are functions of what they are given: each tested here on a few
hand-made intervals, against times counted by hand."""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor.measures import collectives, timing
from tb_gpu_advisor.measures.host import HostSets
from tb_gpu_advisor.model import intervals as iv
from tb_gpu_advisor.model.steps import Steps


def ivs(*pairs: tuple[int, int]) -> iv.Intervals:
    return iv.union(np.array([a for a, _ in pairs], np.int64), np.array([b for _, b in pairs], np.int64))


def host_sets(**given: iv.Intervals) -> HostSets:
    fields = ("input", "loss_scaling", "compilation", "host_ops", "host_work", "tf_data")
    return HostSets(**{f: given.get(f, iv.EMPTY) for f in fields})


def test_each_idle_instant_goes_to_the_first_cause_that_claims_it() -> None:
    # idle 0-100; loss scaling 10-20, compilation 15-30, host work 25-60, tf.data 50-70
    sets = host_sets(
        loss_scaling=ivs((10, 20)), compilation=ivs((15, 30)), host_work=ivs((25, 60)), tf_data=ivs((50, 70))
    )
    causes = timing.idle_causes(ivs((0, 100)), sets)
    got = {c: iv.total(causes.of(c)) for c in timing.IDLE_CAUSES}
    # by hand: 10-20 | 20-30 | nothing | 30-60 | 60-70 | 0-10 and 70-100
    assert got == {
        "loss_scaling": 10,
        "compilation": 10,
        "host_ops": 0,
        "host_work": 30,
        "tf_data": 10,
        "unexplained": 40,
    }
    assert sum(got.values()) == 100  # one problem counted once


def test_a_gap_is_split_and_what_nothing_claims_is_unexplained() -> None:
    # one gap 100-200: input wait 100-130, a launch in flight 130-140, idle 140-190 with host work 150-170;
    # 190-200 is in no category here (a copy of other work, say): unexplained too
    exclusive = {"host_input_wait": ivs((100, 130)), "kernel_launch_wait": ivs((130, 140))}
    causes = timing.idle_causes(ivs((140, 190)), host_sets(host_work=ivs((150, 170))))
    parts = timing.gap_causes([(0, 100, 200)], exclusive, causes)
    got = {c: int(parts.of(c)[0]) for c in timing.GAP_CAUSES}
    assert got["input"] == 30 and got["launch"] == 10 and got["host_work"] == 20
    assert got["unexplained"] == 10 + 20 + 10  # 140-150, 170-190, and 190-200 claimed by nothing
    assert sum(got.values()) == 100


def test_gaps_lie_between_one_steps_last_work_and_the_next_steps_first() -> None:
    first = np.array([0, 150, -1, 400], np.int64)  # step 2 has no device work
    last = np.array([100, 300, -1, 500], np.int64)
    assert timing.gaps(first, last) == [(0, 100, 150)]  # no gap across the empty step


def test_all_reduce_transfer_is_the_shortest_of_each_call_across_gpus() -> None:
    """Two GPUs, shared steps 0-1000 and 1000-2000. GPU 0's calls last 100 and 50 in step 0 and 100 in
    step 1; GPU 1's 60, 50 and 80. Transfer: min(100, 60) + min(50, 50) + min(100, 80) = 190 over 2
    steps; waiting: the mean of the GPUs' own sums (250, 190) less the transfer, over 2 steps."""
    steps = Steps("host", np.array([0, 1000], np.int64), np.array([1000, 2000], np.int64), np.array([0, 1]))
    ranked = [
        (np.array([0, 0, 1]), np.array([0, 1, 0]), np.array([100.0, 50.0, 100.0])),
        (np.array([0, 0, 1]), np.array([0, 1, 0]), np.array([60.0, 50.0, 80.0])),
    ]
    busy = [ivs((0, 100), (200, 250), (1000, 1100)), ivs((40, 100), (200, 250), (1020, 1100))]
    ar = collectives.allreduce([0, 1], [steps, steps], ranked, busy, shared_steps=True, any_calls=True)
    assert ar.per_gpu == {0: 1.5, 1: 1.5}
    assert ar.transfer_ps == 95.0
    assert ar.waiting_ps == (220 - 190) / 2
    assert ar.extra_ps == 25.0  # per GPU, all but the longest call of each step: 50 in 2 steps
    assert ar.any_calls
