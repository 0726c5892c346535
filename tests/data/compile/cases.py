"""Small steps compiled by scripts/record-compile-logs (CPU tensors). Their line numbers are
what the recorded graph breaks and skips point at: keep edits below the last case."""

import torch


def item_step(x, w):
    y = x @ w
    scale = y.abs().max().item()  # line 9: a graph break (.item())
    return y / scale


def print_step(x, w):
    y = torch.relu(x @ w)
    print("step", y.shape)  # line 15: a graph break (print)
    return y * 2


def branch_step(x, w):
    y = x @ w
    if y.sum() > 0:  # line 21: data-dependent branch
        return y + 1
    return y - 1


def mutate_step(state, x):
    state.add_(x)  # line 27: mutated input
    return state * 2


def plain_step(x, w):
    return torch.tanh(x @ w) + 1


def _xw():
    g = torch.Generator().manual_seed(0)
    return [((torch.randn(8, 8, generator=g), torch.randn(8, 8, generator=g)), {}) for _ in range(2)]


def _state():
    g = torch.Generator().manual_seed(0)
    return [((torch.zeros(8), torch.randn(8, generator=g)), {}) for _ in range(2)]


# name -> (function, argument sets, mode)
CASES = {
    "cpu_reduce_overhead": (plain_step, _xw, "reduce-overhead"),
    "item_graph_break": (item_step, _xw, "reduce-overhead"),
    "print_graph_break": (print_step, _xw, "default"),
    "branch_graph_break": (branch_step, _xw, "default"),
    "mutated_input": (mutate_step, _state, "reduce-overhead"),
}


def scale_step(x, n):
    return x * n + 1  # line 56: n is a Python int that changes between calls


def shape_step(x):
    return torch.sin(x) * 2  # line 60: called with three shapes


def _scalars():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(8, generator=g)
    return [((x, 1), {}), ((x, 2), {}), ((x, 3), {})]


def _shapes():
    g = torch.Generator().manual_seed(0)
    return [((torch.randn(n, generator=g),), {}) for n in (8, 16, 32)]


CASES.update(
    {
        "changing_scalar": (scale_step, _scalars, "reduce-overhead"),
        "dynamic_shapes": (shape_step, _shapes, "default"),
    }
)


def lr_step(param, grad, lr):
    param.add_(grad, alpha=-lr)  # line 83: a float that changes every call (frozen_scalar.py)
    return param.norm()


def _lrs():
    g = torch.Generator().manual_seed(0)
    param, grad = torch.randn(64, generator=g), torch.randn(64, generator=g)
    return [((param, grad, 0.1 * 0.98**i), {}) for i in range(4)]


CASES["changing_float"] = (lr_step, _lrs, "reduce-overhead")
