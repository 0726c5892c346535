"""``lint --all`` and host driver code: the ``__main__`` block's loop is reported as information.

A script's ``main()`` logs its loss, parses its arguments and calls the step in a loop:
no graph captures it, so a host read there must not fail ``--fail-on error``. The step
it calls in the loop, and any function other code also runs, keeps its severity.
"""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from launchprof.cli import app
from launchprof.lint import lint
from test_lint import write

DRIVER = """
import torch
import launchprof


def step(x: torch.Tensor) -> torch.Tensor:
    return x * 2


def setup(x: torch.Tensor) -> torch.Tensor:
    print(float(x.sum()))
    return x


def shared(x: torch.Tensor) -> float:
    return float(x.sum())


def other(x: torch.Tensor) -> float:
    return shared(x)


def log(loss: torch.Tensor) -> None:
    print(f"{loss:.3f}")


def captured(x: torch.Tensor) -> float:
    return float(x.sum())


def compiled(x: torch.Tensor) -> float:
    return float(x.sum())


@launchprof.target
def marked(x: torch.Tensor) -> float:
    return float(x.sum())


def main() -> None:
    x = setup(torch.randn(4, device="cuda"))
    shared(x)
    marked(x)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        captured(x)
    fast = torch.compile(compiled)
    for _ in range(10):
        loss = step(x)
        log(loss)
        print(f"{float(loss.sum()):.3f}")
    print(float(loss.sum()))


if __name__ == "__main__":
    main()
"""


def _by_line(tmp_path: Path, source: str, **options) -> dict[int, tuple[str, str, str]]:
    path = write(tmp_path, "train.py", source)
    result = lint([path], **options)
    return {h.line: (h.severity, h.details["function"], h.message) for h in result.hazards}


def test_main_and_what_only_it_runs_outside_its_loops_are_info(tmp_path):
    found = _by_line(tmp_path, DRIVER, all_functions=True)
    severities = {line: (severity, function) for line, (severity, function, _) in found.items()}
    assert severities == {
        10: ("info", "setup"),  # called once from main: setup, not a step
        15: ("error", "shared"),  # also called from other()
        23: ("error", "log"),  # called in main's loop: a step a graph could replay
        27: ("error", "captured"),  # called inside `with torch.cuda.graph(g)`
        31: ("error", "compiled"),  # passed to torch.compile: it may run anywhere
        36: ("error", "marked"),  # a marked target keeps its severity
        50: ("info", "main"),
        51: ("info", "main"),
    }
    assert found[50][2].endswith('(host driver code, which no graph captures: `main` runs only from the `if __name__ == "__main__":` block)')
    assert found[10][2].endswith("(host driver code, which no graph captures: `setup` runs only from `main`, outside its loops)")
    named = _by_line(tmp_path, DRIVER, target="main")  # an --all rule: a target named explicitly keeps its severity
    assert {50, 51, 10} <= set(named)
    assert {severity for severity, _, _ in named.values()} == {"error"}


def test_without_a_main_block_nothing_is_driver_code_and_locals_named_like_functions_do_not_count(tmp_path):
    no_block = DRIVER.replace('if __name__ == "__main__":\n    main()\n', "main()\n")
    assert {severity for severity, _, _ in _by_line(tmp_path, no_block, all_functions=True).values()} == {"error"}
    shadowed = """
    import torch


    def step(x: torch.Tensor) -> torch.Tensor:
        main = torch.cuda.current_stream()
        return x * 2


    def main() -> None:
        y = step(torch.ones(2))
        print(float(y.sum()))


    if __name__ == "__main__":
        main()
    """
    assert _by_line(tmp_path, shadowed, all_functions=True)[11][0] == "info"


PROJECT = """
import torch


def step(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    loss = ((x @ w) ** 2).mean()
    return loss


def main() -> None:
    w = torch.randn(64, 64, device="cuda")
    for i in range(100):
        loss = step(torch.randn(8, 64, device="cuda"), w)
        if i % 10 == 0:
            print(f"{float(loss):.3f}")


if __name__ == "__main__":
    main()
"""


def _ci(project: Path):
    """The README's CI command: ``launchprof lint serve/ --all --fail-on error``."""
    return CliRunner().invoke(app, ["lint", str(project), "--all", "--fail-on", "error"])


def test_the_readme_ci_command_passes_a_clean_project_that_logs_its_loss(tmp_path):
    project = tmp_path / "serve"
    write(project, "train.py", PROJECT)
    clean = _ci(project)
    assert clean.exit_code == 0, clean.output
    assert "train.py:14  hidden-sync" in clean.stdout
    assert "1 hazard: 0 errors, 0 warnings, 1 info" in clean.stdout
    write(project, "train.py", PROJECT.replace("    return loss\n", '    print(f"{float(loss):.3f}")\n    return loss\n', 1))
    moved = _ci(project)
    assert moved.exit_code == 1, moved.output
    assert "--fail-on error: 1 error hazard(s)" in moved.stderr
    assert "train.py:6  hidden-sync" in moved.stdout and "train.py:15  hidden-sync" in moved.stdout
    assert "2 hazards: 1 error, 0 warnings, 1 info" in moved.stdout
