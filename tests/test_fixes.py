"""Fixes written for each hazard's own line (issue 13 items 1, 5, 7), on runs recorded on the H200.

Each expectation is checked against the recorded source line the fix came from: the fix's
``before`` is that line's code and ``after`` uses the names on it.
"""

from __future__ import annotations

import dataclasses

import pytest
from recorded import load_evidence, recorded, report_of

from launchprof.hazards.rules import find_hazards
from launchprof.common.source import line_at, use_sources

from recorded import load


def _hazards(name: str, kind: str) -> list:
    found = [h for h in report_of(name).hazards if h.kind == kind]
    assert found, f"{name}: no {kind} hazard"
    return found


def _at(name: str, kind: str, line: int):
    return next(h for h in _hazards(name, kind) if h.line == line)


def _source(name: str, file: str, line: int) -> str:
    with use_sources(load(name).sources):
        return line_at(file, line)


CASES = [
    # run, kind, line, a piece of the source line, what the written line must say
    ("hidden_sync", "hidden-sync", 15, "h.abs().mean().item()", "scale = h.abs().mean()"),
    ("hidden_sync", "hidden-sync", 16, "h[h > 0]", "keep = torch.where(h > 0, h, torch.zeros_like(h))"),
    ("hidden_sync", "hidden-sync", 19, ".cpu()", "top = probs.argmax(-1)"),
    ("hidden_sync", "hidden-sync", 10, "if scores.max() > 10", "scores = torch.where(scores.max() > 10, scores / 10, scores)"),
    ("frozen_scalar", "frozen-scalar", 17, "alpha=-lr", "param.add_(grad * -lr_t)"),
    ("data_dependent", "data-dependent-control-flow", 14, "if use_residual % 2", "y = torch.where((use_residual % 2).bool(), y + torch.sigmoid(x) * 0.5, y)"),
    ("pageable_copy", "pageable-copy", 12, ".cuda()", "bias = bias_dev.copy_(bias_pinned, non_blocking=True)"),
    ("numpy_rng", "rng-state", 15, "np.random.normal", "noise = torch.randn(1024, device='cuda')"),
]


@pytest.mark.parametrize(("run", "kind", "line", "piece", "written"), CASES, ids=[f"{c[0]}:{c[2]}" for c in CASES])
def test_fix_is_written_for_the_line(run: str, kind: str, line: int, piece: str, written: str) -> None:
    recorded([run])
    h = _at(run, kind, line)
    source = _source(run, h.file, line)
    assert piece in source and piece in h.fix.before, (source, h.fix.before)
    assert h.fix.before.splitlines()[0].strip() in source
    assert written in [ln.split("  #")[0] for ln in h.fix.after.splitlines()], h.fix.after
    assert h.fix.note


def test_frozen_scalar_fills_a_device_tensor_before_replay() -> None:
    fix = _at("frozen_scalar", "frozen-scalar", 17).fix
    assert "lr_t.fill_(lr)" in fix.after and "alpha" not in fix.after


def test_unjoined_fork_names_the_wait_stream_line_and_where() -> None:
    h = _hazards("unjoined_stream", "unjoined-stream")[0]
    source = _source("unjoined_stream", h.file, h.line)
    assert "side.wait_stream" in source
    fix = h.fix
    assert fix.after.splitlines()[-1] == "torch.cuda.current_stream().wait_stream(side)"
    # after the end of the `with torch.cuda.stream(side):` block, which is the line it names
    assert "stats.copy_" in _source("unjoined_stream", h.file, fix.line)
    assert f"after line {fix.line}" in fix.note


def test_rebinding_names_the_line_and_writes_an_in_place_update() -> None:
    h = _hazards("reallocated_global", "reallocated-input")[0]
    at = h.details["rebound_at"]
    assert "weights = torch.randn" in _source("reallocated_global", at["file"], at["line"])
    assert f":{at['line']}" in h.message
    assert h.fix.line == at["line"] and h.fix.after.startswith("weights.copy_(torch.randn(128, 128")


def test_fix_that_cannot_be_written_says_so_with_the_rule() -> None:
    h = _hazards("dynamic_shapes", "dynamic-shape")[0]
    assert h.fix.after == "" and h.fix.params["reason"] == "shapes-vary"
    assert h.fix.note.startswith("No fix is written for this line: the shapes vary") and "Bucket" in h.fix.note


def test_every_error_and_warning_carries_a_fix() -> None:
    for name in recorded(["hidden_sync", "frozen_scalar", "numpy_rng", "side_effects", "unjoined_stream", "reallocated_global"]):
        for h in report_of(name).hazards:
            if h.code in ("reallocated-arguments", "loop-back"):  # launchprof copies these inputs itself: no fix
                assert h.fix is None and h.severity == "info", (name, h.kind)
                continue
            assert h.fix is not None and h.fix.note, (name, h.kind)


def test_mutated_argument_copied_into_a_static_buffer_is_a_warning() -> None:
    """frozen_scalar's ``update`` changes ``param`` in place (the worker recorded ``[0]``);
    marking that argument as moved must name ``param`` and say the caller's tensor stays put."""
    ev = load_evidence("frozen_scalar")
    assert ev.mutations.args == ["[0]"]
    assert ev.capture.moved_args == []  # the sample passes the same `param` every call
    before = [h for h in find_hazards(ev) if h.details.get("mutated")]
    assert before == []  # not moved: nothing to say
    moved = dataclasses.replace(ev, capture=dataclasses.replace(ev.capture, moved_args=["[0]"]))
    with use_sources(load("frozen_scalar").sources):
        found = [h for h in find_hazards(moved) if h.details.get("mutated")]
    assert len(found) == 1
    h = found[0]
    assert h.kind == "reallocated-input" and h.severity == "warning"
    assert "`param`" in h.message and "no longer changes" in h.message
    assert h.line == 17 and "param.add_" in (h.details.get("code") or "")
    assert "same tensor every call" in h.fix.note and "param.copy_(static_param)" in h.fix.after


def test_decorated_target_recorded_at_the_wrapper_points_at_the_user_file() -> None:
    """decode_loop's ``@torch.no_grad()`` target: the current worker unwraps the decorator and
    records the user's definition; runs of an earlier worker recorded the wrapper in
    torch/utils/_contextlib.py (rebuilt here as that worker wrote it), and the analysis takes
    the user's definition from the functions the probe ran."""
    from launchprof.hazards.common import user_target

    ev = load_evidence("decode_loop")
    assert ev.target.file == "sample_models/decode_loop.py" and ev.target.line == 62
    assert user_target(ev.target, ev.probe.functions) == ev.target
    wrapper = dataclasses.replace(ev.target, file="/opt/torch/.venv/lib/python3.12/site-packages/torch/utils/_contextlib.py", line=120)
    fixed = user_target(wrapper, ev.probe.functions)
    assert fixed.file == "sample_models/decode_loop.py" and fixed.line == 62


def _line_of(path, piece: str) -> int:
    return next(i for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if piece in line)


def test_moe_router_fix_runs_every_expert_then_selects() -> None:
    """The sample's own lines, read from disk: ``idx = (route == e).nonzero()...`` then
    ``out[idx] = x[idx] @ experts[e]``."""
    from recorded import SAMPLES

    from launchprof.hazards.fixes import FixContext, write_fix
    from launchprof.model.hazard_records import Hazard

    path = SAMPLES / "moe_router.py"
    line = _line_of(path, ".nonzero()")
    h = Hazard(kind="hidden-sync", severity="error", message="nonzero", file=str(path), line=line, hint="", details={"op": "nonzero"})
    fix = write_fix(h, FixContext())
    assert fix.before.splitlines() == ["idx = (route == e).nonzero().squeeze(1)", "out[idx] = x[idx] @ experts[e]"]
    assert fix.after == "out = torch.where((route == e).unsqueeze(-1), x @ experts[e], out)"
    assert "every expert on all rows" in fix.note


def test_decorated_branch_fix_uses_torch_where() -> None:
    from recorded import SAMPLES

    from launchprof.hazards.fixes import FixContext, write_fix
    from launchprof.model.hazard_records import Hazard

    path = SAMPLES / "decorated_branch.py"
    line = _line_of(path, "if h.mean() > 0")
    h = Hazard(kind="hidden-sync", severity="error", message="if", file=str(path), line=line, hint="", details={"op": "_local_scalar_dense"})
    fix = write_fix(h, FixContext())
    assert fix.after == "h = torch.where(h.mean() > 0, torch.relu(h), h)"


def test_heavy_branches_point_to_torch_cond(tmp_path) -> None:
    from launchprof.hazards.fixes import FixContext, write_fix
    from launchprof.model.hazard_records import Hazard

    path = tmp_path / "two_heavy.py"
    path.write_text(
        "import torch\n\ndef step(x, w):\n    if x.sum() > 0:\n        y = x @ w\n        y = torch.relu(y)\n"
        "    else:\n        y = x @ w.t()\n        y = torch.tanh(y)\n    return y\n",
        encoding="utf-8",
    )
    h = Hazard(kind="data-dependent-control-flow", severity="error", message="m", file=str(path), line=4, hint="")
    fix = write_fix(h, FixContext())
    assert "y = torch.cond(x.sum() > 0, _then, _else, (w, x, y))" in fix.after
    import torch

    ns: dict = {"torch": torch}
    exec(fix.after.replace("y = torch.cond", "_unused = None  #"), ns)  # both branch functions are valid Python
    x, w = torch.ones(2, 2), torch.eye(2)
    assert torch.equal(ns["_then"](w, x, None), torch.relu(x @ w))
    assert "conditional nodes" in fix.note


def test_canonical_argument_paths_read_in_both_forms() -> None:
    from launchprof.hazards.inputs import argument_names

    ev = load_evidence("dict_inputs")  # step(batch: dict, extras: list)
    assert argument_names(ev, ["[1][2]", "[0]['features']"]) == {"[1][2]": "extras[2]", "[0]['features']": "batch['features']"}
    ev = load_evidence("unjoined_stream")  # step(x, stats): recorded in the current form
    assert ev.mutations.args == ["[1]"]
    assert argument_names(ev, ev.mutations.args) == {"[1]": "stats"}
    # an earlier worker wrapped the arguments once more and recorded the same mutation as [0][1]
    old = dataclasses.replace(ev, mutations=dataclasses.replace(ev.mutations, args=["[0][1]"]))
    assert argument_names(old, old.mutations.args) == {"[0][1]": "stats"}


def test_replay_mismatch_names_the_frozen_state_behind_it() -> None:
    h = _hazards("frozen_scalar", "replay-mismatch")[0]
    assert h.fix.after == "" and "frozen-scalar at line 17" in h.fix.note


def _fix_for(tmp_path, body: str, line: int, kind: str = "hidden-sync", **details):
    from launchprof.hazards.fixes import FixContext, write_fix
    from launchprof.model.hazard_records import Hazard

    path = tmp_path / "user_step.py"
    path.write_text("import torch\n\n\ndef step(x, peak, s, side):\n" + body, encoding="utf-8")
    h = Hazard(kind=kind, severity="error", message="m", file=str(path), line=line, hint="", details=details)
    return write_fix(h, FixContext())


def test_host_reads_in_arithmetic_stay_on_the_device(tmp_path) -> None:
    body = "    y = x / peak.item()\n    z = x / max(1e-6, float(s))\n    v = y.sum().tolist()\n    return y, z, v\n"
    assert _fix_for(tmp_path, body, 5, op="_local_scalar_dense").after == "y = x / peak"
    assert _fix_for(tmp_path, body, 6, op="_local_scalar_dense").after == "z = x / s.clamp_min(1e-06)"
    tolist = _fix_for(tmp_path, body, 7, op="_to_copy")
    assert tolist.after == "v = y.sum()" and "after the replay" in tolist.note


def test_a_line_launchprof_cannot_rewrite_says_so(tmp_path) -> None:
    fix = _fix_for(tmp_path, "    return torch.unique(x)\n", 5, op="unique")
    assert fix.after == "" and fix.note.startswith("No fix is written for this line: no .item()") and "Keep the value on the device" in fix.note
