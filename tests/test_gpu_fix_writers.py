"""The written fixes of issue 34 on a real GPU: the form launchprof writes captures into a
CUDA graph and its replays match eager on new inputs; the form it used to write does not
capture (skipped without CUDA)."""

from __future__ import annotations

import textwrap

import pytest

from launchprof.hazards.fixes import FixContext, write_fix
from launchprof.model.hazard_records import Hazard

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")]


def _written(tmp_path, source: str, line: int, kind: str, **details) -> str:
    path = tmp_path / "user_step.py"
    path.write_text(textwrap.dedent(source).lstrip("\n"), encoding="utf-8")
    h = Hazard(kind=kind, severity="error", message="m", file=str(path), line=line, hint="", details=details)
    return write_fix(h, FixContext()).after


def _compiled(body: str, args: str):
    ns: dict = {"torch": torch}
    exec(f"def step({args}):\n" + textwrap.indent(body, "    ") + "\n", ns)
    return ns["step"]


def _replays_match(step, inputs: list[tuple]) -> None:
    """Capture ``step`` on static copies of the first inputs; each replay on the others matches eager."""
    static = [t.clone() for t in inputs[0]]
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        step(*static)  # warm-up off the capture stream
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = step(*static)
    for args in inputs[1:]:
        for s, a in zip(static, args):
            s.copy_(a)
        graph.replay()
        torch.testing.assert_close(out, step(*args))


def test_read_and_later_max_fix_captures_and_matches(tmp_path) -> None:
    source = "import torch\n\n\ndef step(x, peak):\n    m = peak.item()\n    return x / max(m, 1e-6)\n"
    after = _written(tmp_path, source, 5, "hidden-sync", op="_local_scalar_dense")
    fixed = _compiled(after, "x, peak")
    x = torch.randn(64, device="cuda")
    inputs = [(x, torch.tensor(v, device="cuda")) for v in (2.0, 0.5, 0.0, 7.0)]
    _replays_match(fixed, inputs)
    for a, (xx, peak) in zip([fixed(*i) for i in inputs], inputs):
        torch.testing.assert_close(a, xx / max(peak.item(), 1e-6))
    old = _compiled("m = peak\nreturn x / max(m, 1e-6)", "x, peak")  # the fix written before: bool() on a tensor
    with pytest.raises(Exception):  # noqa: B017 - torch raises its capture error as RuntimeError or AcceleratorError
        _replays_match(old, inputs)


def test_both_branch_return_fix_captures_and_matches(tmp_path) -> None:
    source = "import torch\n\n\ndef step(h):\n    if h.mean() > 0:\n        return h * 2.0\n    else:\n        return h - 1.0\n"
    after = _written(tmp_path, source, 5, "data-dependent-control-flow")
    fixed = _compiled(after, "h")
    inputs = [(torch.full((8,), v, device="cuda"),) for v in (1.0, -1.0, 3.0, -2.0)]
    _replays_match(fixed, inputs)
    for (h,) in inputs:
        torch.testing.assert_close(fixed(h), h * 2.0 if h.mean() > 0 else h - 1.0)
