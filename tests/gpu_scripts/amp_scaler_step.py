"""An fp16 AMP training step with torch.amp.GradScaler (tests/test_gpu_training_steps.py):
``scaler.step`` reads ``found_inf`` on the host, so the whole step does not capture, and
launchprof measures the step with the model's forward and backward graphed alone.

With LAUNCHPROF_DIRECT_OUT set, after its loop the script times its own step with the
plainest loop (tests/gpu_scripts/direct_loop.py), eagerly, then with the model graphed by
``torch.cuda.make_graphed_callables`` as launchprof's snippet says, in this process (host
speed differs between processes), and writes both medians there.
"""

from __future__ import annotations

import json
import os

import torch
import torch.nn.functional as F

from direct_loop import median_us

torch.manual_seed(0)
model = torch.nn.Sequential(
    torch.nn.Linear(512, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 10)
).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
scaler = torch.amp.GradScaler("cuda")
STEPS = 120


def step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    opt.zero_grad(set_to_none=True)
    with torch.autocast("cuda", dtype=torch.float16):
        out = model(x)
        loss = F.cross_entropy(out, y)
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    return loss.detach()


def main() -> None:
    g = torch.Generator(device="cuda").manual_seed(1)
    batches = [(torch.randn(64, 512, device="cuda", generator=g), torch.randint(0, 10, (64,), device="cuda", generator=g)) for _ in range(4)]
    total = 0.0
    for i in range(STEPS):
        total += float(step(*batches[i % 4]))
    print(f"RESULT {total / STEPS:.4f}", flush=True)
    out = os.environ.get("LAUNCHPROF_DIRECT_OUT")
    if not out:
        return
    calls = [lambda b=b: step(*b) for b in batches]
    eager = median_us(*calls, n=200)
    global model
    with torch.autocast("cuda", dtype=torch.float16, cache_enabled=False):
        model = torch.cuda.make_graphed_callables(model, (torch.randn(64, 512, device="cuda"),))
    graphed = median_us(*calls, n=200)
    with open(out, "w", encoding="utf-8") as fh:
        json.dump({"eager_us": eager, "graphed_us": graphed}, fh)


if __name__ == "__main__":
    main()
