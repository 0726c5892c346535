"""An out-of-range index: a device-side assert that surfaces two calls later, at a sync.

The indexing kernel faults on the GPU, but the host learns of it only when it next waits
for the GPU (or launches once the fault is known), so Python raises far from the culprit.
launchprof says where it surfaced and how to find the launching line:

    launchprof analyze sample_models/device_assert.py                 # says where it surfaced
    launchprof analyze sample_models/device_assert.py --locate-async  # names the gather line
    launchprof lint sample_models/device_assert.py --target gather    # clean: the bug is data, not capture
"""

from __future__ import annotations

import torch


def gather(table: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    return table[idx] * 2  # launches the faulting kernel


def smooth(x: torch.Tensor) -> torch.Tensor:
    return torch.tanh(x) + 1  # cheap work that runs after the fault


def main() -> None:
    table = torch.randn(1000, device="cuda")
    good = torch.randint(0, 1000, (256,), device="cuda")
    bad = good.clone()
    bad[7] = 5000  # out of range: the index kernel asserts on the device
    out = gather(table, good)
    torch.cuda.synchronize()  # a clean sync first: everything above is fine
    out = gather(table, bad)
    out = smooth(out)  # one call after the fault
    out = smooth(out)  # two calls after
    torch.cuda.synchronize()  # the error surfaces here (or at a launch above, never at gather)
    print(float(out.sum()))


if __name__ == "__main__":
    main()
