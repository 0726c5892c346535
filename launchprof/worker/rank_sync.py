"""Keeping the ranks of a distributed step in step while the bursts time it.

When the user's script has initialised ``torch.distributed`` with more than one rank, the
step holds collectives, and every rank must make the same number of calls, or one rank
waits for ever in a collective the others never issue. Before each timed call the ranks
agree (one small all-reduce, outside the timed window): it is a barrier, so each rank's
time includes waiting for the slowest inside the step's own collectives, and it carries
the time-cap decision, so every rank stops at the same call.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

Agree = Callable[[bool], bool]


def distributed() -> bool:
    """Whether the script has a process group of two ranks or more: then every extra call of
    the step must be made on every rank alike, or a collective waits for ever."""
    try:
        import torch.distributed as dist

        return bool(dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1)
    except Exception:  # a half-initialised group: time the rank alone, as on one GPU
        return False


def agreement() -> Agree | None:
    """``agree(stop) -> stop on any rank``, or None when the step is not distributed."""
    if not distributed():
        return None
    try:
        import torch.distributed as dist

        device = torch.device("cuda", torch.cuda.current_device()) if "nccl" in str(dist.get_backend()) else torch.device("cpu")
    except Exception:  # a half-initialised group: time the rank alone, as on one GPU
        return None
    flag = torch.zeros(1, dtype=torch.int32, device=device)

    def agree(stop: bool) -> bool:
        flag.fill_(int(stop))
        dist.all_reduce(flag, op=dist.ReduceOp.MAX)
        return bool(flag.item())  # .item() waits for the all-reduce: a barrier

    return agree
