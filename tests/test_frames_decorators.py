"""The walk from a wrapped target to the user's definition, with real decorators on CPU."""

from __future__ import annotations

import functools
import inspect

import torch

from launchprof.worker.frames import definition_of, is_internal


def _traced(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)

    return wrapper


@torch.no_grad()
def no_grad_step(x: torch.Tensor) -> torch.Tensor:
    return x * 2


@_traced
@torch.inference_mode()
def stacked_step(x: torch.Tensor) -> torch.Tensor:
    return x + 1


def _def_line(name: str) -> int:
    source, _ = inspect.getsourcelines(inspect.getmodule(_traced))
    return next(i for i, line in enumerate(source, 1) if line.startswith(f"def {name}("))


def test_no_grad_wrapper_is_torch_code() -> None:
    assert is_internal(no_grad_step.__code__.co_filename)  # what the recorded run named


def test_definition_walks_out_of_torch_no_grad() -> None:
    file, line = definition_of(no_grad_step)
    assert file == __file__
    assert line == _def_line("no_grad_step") - 1  # co_firstlineno is the decorator's line


def test_definition_walks_out_of_stacked_decorators() -> None:
    file, line = definition_of(stacked_step)
    assert file == __file__ and line == _def_line("stacked_step") - 2
    assert stacked_step(torch.ones(1)).item() == 2.0


def test_definition_of_a_bound_method_and_a_builtin() -> None:
    class M(torch.nn.Module):
        @torch.no_grad()
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x

    file, _ = definition_of(M().forward)
    assert file == __file__
    assert definition_of(len) == (None, None)


def test_error_inside_a_no_grad_target_is_placed_on_the_users_line() -> None:
    """A RuntimeError raised by torch under ``@torch.no_grad()``: the traceback runs through
    torch/utils/_contextlib.py; the site is the line of the target that raised."""
    import sys

    from launchprof.worker.frames import traceback_site

    @torch.no_grad()
    def bad_step(x: torch.Tensor) -> torch.Tensor:
        return x @ torch.zeros(3)  # shapes do not match

    try:
        bad_step(torch.zeros(2))
    except RuntimeError:
        site = traceback_site(sys.exc_info()[2])
    assert site is not None and site.file == __file__
    assert "x @ torch.zeros(3)" in site.code and site.function == "bad_step"
