"""The state a decorated target reads is found through its decorators (functools.wraps)."""

from __future__ import annotations

import functools

import pytest

from launchprof.worker.observe import wrapper_chain

torch = pytest.importorskip("torch")

CACHE = None


def timed(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)

    return wrapper


@timed
@torch.no_grad()
def step(x):
    return x + CACHE


def plain(x):
    return x


def test_the_chain_reaches_the_function_that_names_the_globals():
    chain = wrapper_chain(step)
    assert len(chain) == 3
    assert "CACHE" in chain[-1].__code__.co_names
    assert all("CACHE" not in f.__code__.co_names for f in chain[:-1])


def test_an_undecorated_function_is_its_own_chain():
    assert wrapper_chain(plain) == [plain]


def test_a_wrapped_cycle_stops():
    def a():
        pass

    def b():
        pass

    a.__wrapped__, b.__wrapped__ = b, a
    assert wrapper_chain(a) == [a, b]


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_referenced_state_of_a_decorated_target_holds_its_cuda_global():
    from launchprof.worker.observe import referenced_state

    global CACHE
    CACHE = torch.zeros(4, device="cuda")
    assert "CACHE" in referenced_state(step)
