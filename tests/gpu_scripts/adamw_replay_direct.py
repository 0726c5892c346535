"""Ground truth for the AdamW validation question, without launchprof: a capturable AdamW
training step captured by hand (the PyTorch docs' whole-network pattern), then one eager step
and one replay from the same saved state (parameters, moments, step counts), compared. Prints
one JSON line per dtype: max |eager - replay| over the weights, and that difference's norm
over the norm of what the step changed (worker/validator.py's STEP_RTOL criterion)."""

from __future__ import annotations

import copy
import json

import torch
import torch.nn.functional as F


def case(dtype: torch.dtype) -> dict:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 10))
    model = model.to("cuda", dtype)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, capturable=True)
    x, y = torch.randn(256, 512, device="cuda", dtype=dtype), torch.randint(0, 10, (256,), device="cuda")

    def step() -> torch.Tensor:
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x).float(), y)
        loss.backward()
        opt.step()
        return loss.detach()

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)
    with torch.cuda.graph(graph):
        static_loss = step()
    for _ in range(5):
        graph.replay()
    torch.cuda.synchronize()
    params = [p.detach().clone() for p in model.parameters()]
    opt_state = copy.deepcopy(opt.state_dict())

    def put_back() -> None:
        with torch.no_grad():
            for p, saved in zip(model.parameters(), params, strict=True):
                p.copy_(saved)
        for p, saved in zip(model.parameters(), opt_state["state"].values(), strict=True):
            for k, v in saved.items():
                opt.state[p][k].copy_(v)  # in place: the graph reads these addresses

    eager_loss = step()
    eager = [p.detach().clone() for p in model.parameters()]
    put_back()
    graph.replay()
    torch.cuda.synchronize()
    replay = [p.detach().clone() for p in model.parameters()]
    diffs = [(e.double() - r.double()) for e, r in zip(eager, replay, strict=True)]
    moved = [(e.double() - b.double()) for e, b in zip(eager, params, strict=True)]
    return {
        "dtype": str(dtype),
        "loss_equal": bool(torch.equal(eager_loss, static_loss)),
        "max_abs_diff": max(float(d.abs().max()) for d in diffs),
        "norm_ratio": max(float(d.norm() / m.norm()) for d, m in zip(diffs, moved, strict=True)),
        "max_step": max(float(m.abs().max()) for m in moved),
    }


for dt in (torch.float32, torch.bfloat16):
    print(json.dumps(case(dt)))
