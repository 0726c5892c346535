"""A step taking a dict and a list of fresh tensors each call: launchprof copies every
leaf into static buffers. No warnings (the fresh allocations are info only).

    launchprof analyze sample_models/dict_inputs.py --target step
"""

from __future__ import annotations

import torch


def step(batch: dict[str, torch.Tensor], extras: list[torch.Tensor]) -> dict[str, torch.Tensor]:
    h = batch["features"] @ batch["weights"]
    for e in extras:
        h = h + e
    return {"out": torch.relu(h), "norm": h.norm(dim=-1)}


def main() -> None:
    torch.manual_seed(0)
    w = torch.randn(128, 128, device="cuda")
    for _ in range(100):
        batch = {"features": torch.randn(16, 128, device="cuda"), "weights": w}
        extras = [torch.randn(16, 128, device="cuda") for _ in range(3)]
        out = step(batch, extras)
    print(float(out["norm"].sum()))


if __name__ == "__main__":
    main()
