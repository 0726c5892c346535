"""A whole training step with AdamW(capturable=True): MLP, cross-entropy, backward, step,
reached three ways (``--opt``; the target to name is in brackets): a global the step names
(``step``), an argument (``step_with``), a global only a helper function names
(``step_helper``); or plain SGD (``--opt sgd``, ``step``). ``--zero`` says where the grads
are set to None: inside the step, or by the loop before each call. The losses and the final
weights' checksums go to the JSON file named by argv[1], for comparing with a plain run.
"""

from __future__ import annotations

import argparse
import json

import torch
import torch.nn.functional as F

parser = argparse.ArgumentParser()
parser.add_argument("out")
parser.add_argument("--opt", choices=["global", "argument", "helper", "sgd"], default="global")
parser.add_argument("--zero", choices=["inside", "outside"], default="inside")
parser.add_argument("--dtype", choices=["float32", "bfloat16"], default="float32")
cli = parser.parse_args()
dtype = getattr(torch, cli.dtype)

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 10))
model = model.to("cuda", dtype)
if cli.opt == "sgd":
    opt = torch.optim.SGD(model.parameters(), lr=1e-2)
else:
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, capturable=True)
x = torch.randn(256, 512, device="cuda", dtype=dtype)
y = torch.randint(0, 10, (256,), device="cuda")


def update() -> None:
    opt.step()


def step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    if cli.zero == "inside":
        opt.zero_grad(set_to_none=True)
    loss = F.cross_entropy(model(x).float(), y)
    loss.backward()
    opt.step()
    return loss.detach()


def zero() -> None:
    opt.zero_grad(set_to_none=True)


def step_helper(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    if cli.zero == "inside":
        zero()
    loss = F.cross_entropy(model(x).float(), y)
    loss.backward()
    update()
    return loss.detach()


def step_with(x: torch.Tensor, y: torch.Tensor, opt: torch.optim.Optimizer) -> torch.Tensor:
    if cli.zero == "inside":
        opt.zero_grad(set_to_none=True)
    loss = F.cross_entropy(model(x).float(), y)
    loss.backward()
    opt.step()
    return loss.detach()


losses = []
for i in range(80):
    x.copy_(torch.randn(x.shape, device=x.device, dtype=dtype))  # a new batch in the captured inputs
    y.copy_(torch.randint(0, 10, y.shape, device=y.device))
    if cli.zero == "outside":
        opt.zero_grad(set_to_none=True)
    if cli.opt == "argument":
        loss = step_with(x, y, opt)
    else:
        loss = step_helper(x, y) if cli.opt == "helper" else step(x, y)
    if i % 10 == 0:
        losses.append(float(loss))
with open(cli.out, "w") as fh:
    json.dump({"losses": losses, "checksum": [float(p.detach().double().sum()) for p in model.parameters()]}, fh)
