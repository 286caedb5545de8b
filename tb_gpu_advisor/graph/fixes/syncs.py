"""`syncs`: the host-device syncs a program can drop no longer wait; the host runs ahead."""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor.graph.build import SYNC
from tb_gpu_advisor.graph.facts import StepFacts
from tb_gpu_advisor.graph.simulate import Changes

# the model's relative error on its held-out pairs (`python benchmarks/whatif_pairs.py`): rn50_b64_sync
# -66%, gpt2v_bf16_sync -41% (the host's pace after a sync, which one capture cannot pin: docs/whatif.md),
# mlpv_sync within its noise
ERROR = 0.70

# syncs a user can drop: explicit synchronize calls, `.item()`, `.cpu()`, `.tolist()`; not those a
# framework op needs (nonzero, unique, masked_select)
REMOVABLE_SYNC_OPS = frozenset(
    {"", "aten::_local_scalar_dense", "aten::item", "aten::_to_copy", "aten::copy_", "aten::to", "aten::cpu"}
)


def syncs(f: StepFacts, c: Changes) -> str | None:
    g = f.g
    sync = g.h_kind == SYNC
    if not sync.any():
        return None
    removable = np.zeros(len(g.h_kind), bool)
    # a sync in no op is an explicit synchronize call: the user's too
    in_op = f.by_name(f.h_type[sync], REMOVABLE_SYNC_OPS.__contains__)
    removable[np.flatnonzero(sync)[in_op | (f.h_type[sync] < 0)]] = True
    if not removable.any():
        return None
    c.sync_waits = c.sync_waits & ~removable
    return f"{int(removable.sum())} host-device syncs no longer wait (the host runs ahead)"
