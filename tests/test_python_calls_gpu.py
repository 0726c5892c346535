"""On a GPU: the candidates read from the profiler's result tree (launchprof.worker.python_calls)
equal those read from the Chrome export, and torch.profiler's own kernel count per call.

What the CPU tests cannot show: a CUDA launch row from ``events()`` carries the same thread
id as the Python calls from the tree (torch gives a runtime call its op's id), so each
launch lands in the user function that made it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")]

from launchprof.worker.candidates import kernel_launches, tally, trace_rows, user_file_resolver  # noqa: E402
from launchprof.worker.profiler_tables import RUNTIME_CATEGORIES, new_profile, read_timeline  # noqa: E402
from launchprof.worker.python_calls import tree_rows  # noqa: E402
from tests.test_whole_script_gpu import SCRIPT, kernels_per_call  # noqa: E402


def test_the_tree_and_the_export_charge_the_same_kernels(tmp_path: Path) -> None:
    script = tmp_path / "heavy.py"
    script.write_text(SCRIPT)
    namespace: dict = {"__name__": "heavy"}  # defines, does not run main()
    exec(compile(SCRIPT, str(script), "exec"), namespace)
    x = torch.randn(32, 64, device="cuda")
    expected = {"forward": kernels_per_call(namespace["Block"]().forward, x), "light": kernels_per_call(namespace["light"], x)}
    sys.path.insert(0, str(tmp_path))
    try:
        prof = new_profile(with_stack=True)
        with prof:
            namespace["main"]()
    finally:
        sys.path.remove(str(tmp_path))
    is_user = user_file_resolver(str(tmp_path))
    table = read_timeline(prof)
    assert table is not None
    fast = tree_rows(prof, table, is_user)
    assert fast, "the tree gave no Python call: the worker would fall back to the export"
    export = trace_rows(prof, tmp_path)

    def counts(rows: list[dict]) -> dict[str, tuple[int, int]]:
        return {t.name: (t.calls, t.kernels) for t in tally(rows, is_user, kernel_launches(rows)).values()}

    by_tree, by_export = counts(fast), counts(export)
    assert by_tree == by_export
    for name, per_call in expected.items():
        calls, kernels = by_tree[name]
        assert calls == 20 and kernels / calls == pytest.approx(per_call, abs=0.5), (name, by_tree[name], per_call)
    launch_tids = {r["tid"] for r in fast if r.get("cat") in RUNTIME_CATEGORIES}
    call_tids = {r["tid"] for r in fast if r.get("cat") == "python_function" and r["name"].endswith(": forward")}
    assert call_tids and call_tids <= launch_tids
