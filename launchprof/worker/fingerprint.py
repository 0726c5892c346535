"""Whether a tensor's contents changed, without keeping a copy: a checksum of its bits.

The version counter (``t._version``) is not enough. PyTorch's CUDA ``_foreach_lerp_`` with
a scalar weight, which Adam and AdamW run on ``exp_avg`` every step, writes the tensors and
does not increment their versions (aten/src/ATen/native/cuda/ForeachTernaryOp.cu: the
tensor-weight variant calls ``increment_version``, the scalar ones do not). On the H200
field run (torch 2.11) the warm-up calls saw ``exp_avg_sq`` and ``step`` mutated and not
``exp_avg``, so ``exp_avg`` was never saved: each validation's replay started one
step of momentum ahead of its eager call (``replay-mismatch``, max |diff| 3.4e-4 with lr
1e-3), and the script's own loss after the run differed from a plain run's.

The checksum is two sums over the tensor's bits read as integers (the plain sum, and one
weighted by a fixed pseudo-random integer per position, so a moved element changes it too),
accumulated in int64 with wrap-around, in chunks so no more than ``CHUNK`` elements are
converted at once. Device tensors are summed on their device; host tensors only up to
``MAX_HOST_BYTES`` (a dataset held in a global would cost seconds a call).
"""

from __future__ import annotations

from collections.abc import Iterable

import torch

CHUNK = 1 << 22
MAX_HOST_BYTES = 16 << 20
_INTS = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}
_WEIGHTS: dict[tuple[str, torch.dtype], torch.Tensor] = {}

Sum = tuple[int, int]


def _weights(device: torch.device, dtype: torch.dtype) -> torch.Tensor:
    """Fixed pseudo-random weights, drawn on the tensor's own device from a generator of their
    own: the user's RNG is not drawn, and no host draw and copy (0.1 s of the first warm-up
    call on an H200 host for the two weight sets). Random, not a hash of the position: a
    weight linear in the position lets +d, -d, -d, +d at positions i, j, k, l with
    i + j = k + l leave both sums unchanged."""
    key = (str(device), dtype)
    if key not in _WEIGHTS:
        gen = torch.Generator(device=device).manual_seed(0x5EED)
        info = torch.iinfo(dtype)
        low, high = max(info.min, -(2**31)), min(info.max, 2**31 - 1)
        _WEIGHTS[key] = torch.randint(low, high, (CHUNK,), generator=gen, dtype=torch.int64, device=device).to(dtype)
    return _WEIGHTS[key]


def checkable(t: torch.Tensor) -> bool:
    if t.layout is not torch.strided or t.is_quantized or t.device.type == "meta" or t.element_size() not in _INTS:
        return False
    return t.device.type != "cpu" or t.numel() * t.element_size() <= MAX_HOST_BYTES


def _sums(t: torch.Tensor) -> torch.Tensor:
    bits = t.detach().reshape(-1).view(_INTS[t.element_size()])
    wide = torch.int64 if bits.dtype == torch.int64 else torch.int32
    w = _weights(bits.device, wide)
    total = torch.zeros(2, dtype=torch.int64, device=bits.device)
    for start in range(0, bits.numel(), CHUNK):
        part = bits[start : start + CHUNK].to(wide)
        total[0] += part.sum(dtype=torch.int64)
        total[1] += (part * w[: part.numel()]).sum(dtype=torch.int64)
    return total


def checksums(tensors: Iterable[torch.Tensor]) -> list[Sum | None]:
    """One checksum per tensor (None where it cannot be taken: a sparse, quantized or
    subclass tensor, a large host tensor); one transfer per device."""
    sums: list[torch.Tensor | None] = []
    for t in tensors:
        try:
            sums.append(_sums(t) if checkable(t) else None)
        except Exception:  # a tensor subclass or a conjugate view: its version stands alone
            sums.append(None)
    out: list[Sum | None] = [None] * len(sums)
    by_device: dict[torch.device, list[int]] = {}
    for i, s in enumerate(sums):
        if s is not None:
            by_device.setdefault(s.device, []).append(i)
    with torch.no_grad():
        for indices in by_device.values():
            host = torch.stack([sums[i] for i in indices]).cpu().tolist()  # type: ignore[misc]
            for i, (a, b) in zip(indices, host, strict=True):
                out[i] = (a, b)
    return out
