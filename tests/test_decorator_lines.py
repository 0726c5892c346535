"""No finding at a decorator line and no fix that rewrites a ``def`` line, from hand-built
events over a real script in a temporary folder (the recorded-event path of an H200 run).

A decorated target's recorded line is its code object's ``co_firstlineno``: the first
decorator's line (``@torch.no_grad()``). Findings that fall back to the target are placed
on its ``def`` line; a fix written for such a line is not written at all."""

from __future__ import annotations

from pathlib import Path

import pytest

from launchprof.common.source import definition_line
from launchprof.events.capture_events import CaptureEvent
from launchprof.events.lifecycle_events import TargetEvent
from launchprof.events.observation_events import ArgLeaf, CallEvent, MutationsEvent, ProbeEvent
from launchprof.events.record import Site
from launchprof.hazards.common import first_use, hazard, target_site
from launchprof.hazards.rules import find_hazards
from launchprof.model.findings import FixCode
from launchprof.model.hazard_codes import HazardCode
from launchprof.run.evidence import Evidence

SCRIPT = '''\
import torch

w = torch.ones(4)


@torch.no_grad()
def step(x):
    y = x * w
    return y.sum()


@torch.inference_mode()
@torch.no_grad()
def forward(self, x):
    return torch.zeros(4)


def caller(
    a,
    b=w,
):
    return a


def outer():
    @torch.no_grad()
    def inner(x):
        return x

    return inner


def one(x): return x
'''
LINES = {text.strip(): i for i, text in enumerate(SCRIPT.splitlines(), 1)}


@pytest.fixture
def script(tmp_path: Path) -> str:
    path = tmp_path / "decorated.py"
    path.write_text(SCRIPT, encoding="utf-8")
    return str(path)


def test_the_definition_line_of_decorators_and_headers(script: str) -> None:
    step_def = LINES["def step(x):"]
    assert definition_line(script, step_def - 1) == step_def  # @torch.no_grad()
    assert definition_line(script, step_def) == step_def
    assert definition_line(script, LINES["y = x * w"]) is None
    assert definition_line(script, LINES["@torch.inference_mode()"]) == LINES["def forward(self, x):"]
    assert definition_line(script, LINES["b=w,"]) == LINES["def caller("]  # the rest of a long signature
    inner = LINES["def inner(x):"]
    assert definition_line(script, inner - 1) == inner  # the inner function's decorator, not the outer's header
    assert definition_line(script, LINES["def outer():"]) == LINES["def outer():"]
    assert definition_line(script, LINES["def one(x): return x"]) == LINES["def one(x): return x"]
    assert definition_line(script, LINES["w = torch.ones(4)"]) is None


def _target(script: str, name: str = "step") -> TargetEvent:
    first = min(i for text, i in LINES.items() if text == f"def {name}(x):" or text.startswith(f"def {name}(")) - 1
    while SCRIPT.splitlines()[first - 2].startswith("@"):
        first -= 1
    return TargetEvent(name=name, qualname=name, file=script, line=first)  # co_firstlineno: the first decorator


def test_the_target_site_is_its_def_line_not_its_decorator(script: str) -> None:
    target = _target(script, "forward")
    assert SCRIPT.splitlines()[target.line - 1] == "@torch.inference_mode()"
    site = target_site(target)
    assert site is not None and (site.line, site.code) == (LINES["def forward(self, x):"], "def forward(self, x):")


def test_a_hazard_placed_on_a_decorator_moves_to_the_def_line(script: str) -> None:
    at = Site(file=script, line=LINES["def step(x):"] - 1, code="@torch.no_grad()", function="step", snippet=[[1, "x"]])
    h = hazard("replay-mismatch", HazardCode.REPLAY_MISMATCH, {"differing": 1, "compared": 2, "first_call": 3, "output": "out"}, at)
    assert (h.line, h.details["code"]) == (LINES["def step(x):"], "def step(x):")
    assert [n for n, _ in h.details["snippet"]] == list(range(LINES["def step(x):"] - 2, LINES["def step(x):"] + 3))


def test_first_use_reads_the_body_not_the_decorators_or_defaults(script: str) -> None:
    assert first_use(_target(script), "torch") is None  # only `@torch.no_grad()` names it
    caller = TargetEvent(name="caller", qualname="caller", file=script, line=LINES["def caller("])
    assert first_use(caller, "w") is None  # a default value is read once, at definition
    use = first_use(_target(script), "w")
    assert use is not None and use.line == LINES["y = x * w"]


def test_a_failed_capture_with_no_line_is_filed_at_the_def_line(script: str) -> None:
    capture = CaptureEvent(
        ok=False, index=5, kind="capture-failed", exception="AcceleratorError", message="CUDA error: operation not permitted when stream is capturing",
        chain=["AcceleratorError: CUDA error: operation not permitted when stream is capturing"], cuda_errors=["CUDA error: operation not permitted when stream is capturing"],
    )
    found = find_hazards(Evidence(target=_target(script), capture=capture, probe=ProbeEvent()))
    assert found and all(h.line == LINES["def step(x):"] for h in found), [(h.kind, h.line) for h in found]
    assert all(not h.fix or not h.fix.after for h in found)


def test_a_mutation_with_no_line_inside_gets_no_fix_that_replaces_the_def_line(script: str) -> None:
    """The H200 case: the target changes an argument it never names in its body (an
    ``nn.Module``'s ``forward(self, x)`` seen through ``input``): the finding falls back to
    the ``def`` line, and the mutation's fix (comment lines) must not replace it."""
    leaf = ArgLeaf(path="input", kind="tensor", shape=[4], dtype="float32", device="cuda:0", ptr=1, bytes=16)
    ev = Evidence(
        target=_target(script, "forward"), calls=[CallEvent(index=0, args=[leaf])], mutations=MutationsEvent(args=["[0]"]),
        capture=CaptureEvent(ok=True, moved_args=["[0]"]), probe=ProbeEvent(),
    )
    h = next(h for h in find_hazards(ev) if h.kind == "reallocated-input")
    assert h.line == LINES["def forward(self, x):"]
    assert h.fix is not None and h.fix.after == "" and h.fix.code == FixCode.CANNOT.value
    assert h.fix.params["reason"] == "no-line"
