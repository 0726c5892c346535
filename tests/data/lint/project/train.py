"""Targets that reach into the package; only this file is named on the command line."""

import numpy
import torch

import pkg.layers.block as blocks
from pkg import models
from pkg.models import Scorer
from pkg.stats import lr_at, maybe_residual, running_mean, running_mean_ok

scorer = models.build_scorer()
direct = Scorer()
HANDLERS = {"relu": torch.relu}


def helper(acc: torch.Tensor, x: torch.Tensor):
    return running_mean(acc, x)


def helper_ok(acc: torch.Tensor, x: torch.Tensor):
    return running_mean_ok(acc, x)


def relative(x: torch.Tensor):
    return blocks.block(x)


def relative_ok(x: torch.Tensor):
    return blocks.block_ok(x)


def method(x: torch.Tensor):
    return direct.calibrate(x)


def method_ok(x: torch.Tensor):
    return direct.calibrate_ok(x)


def sched(opt, x: torch.Tensor, step: int):
    lr = lr_at(step)
    for group in opt.param_groups:
        group["lr"] = lr  # finds(sched): frozen-scalar
    opt.param_groups[0]["momentum"] = 0.9
    return x


def sched_ok(opt, x: torch.Tensor, lr_t: torch.Tensor):
    for group in opt.param_groups:
        group["lr"].fill_(lr_t)
    return x


def branch(x: torch.Tensor, use_residual: int):
    return maybe_residual(x, use_residual)


def branch_ok(x: torch.Tensor, use_residual: int):
    return maybe_residual(x, 1)


def factory(x: torch.Tensor):
    y = scorer(x)
    return int(y.argmax())  # finds(factory): hidden-sync


def factory_ok(x: torch.Tensor):
    y = scorer(x)
    return y.argmax()


def argument(model: torch.nn.Module, x: torch.Tensor):
    return model(x).argmax().item()  # finds(argument): hidden-sync


def argument_ok(model: torch.nn.Module, x: torch.Tensor):
    return model(x).argmax()


def unresolved(x: torch.Tensor, fn, name: str):
    y = fn(x)
    z = getattr(torch, name)(y)
    w = HANDLERS[name](z)
    return numpy.asarray(w.shape)
