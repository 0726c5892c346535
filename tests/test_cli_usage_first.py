"""Usage errors are found before the GPU is looked at (issue 14 item 6).

This machine has no CUDA: every case below would exit 4 if the environment were
checked first, so an exit 2 proves the order. On a GPU machine they are still exit 2.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from launchprof.commands.checks import check_target_defined
from launchprof.errors import UsageError
from launchprof.common.targets import parse_target

ROOT = Path(__file__).resolve().parent.parent


def lp(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "launchprof", *args], capture_output=True, text=True, timeout=timeout, cwd=ROOT, env=env)


def one_line(proc: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in proc.stderr + proc.stdout
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    return lines[0]


def test_unknown_method_of_a_script_class():
    proc = lp("analyze", "sample_models/decode_loop.py", "--target", "Decoder.nosuch")
    assert proc.returncode == 2
    assert "class Decoder has no attribute 'nosuch'" in one_line(proc)


def test_misspelt_method_gets_a_suggestion():
    proc = lp("analyze", "sample_models/decode_loop.py", "--target", "Decoder.forwrd")
    assert proc.returncode == 2 and "Decoder.forward" in one_line(proc)


def test_session_report_as_profile():
    proc = lp("analyze", "sample_models/decode_loop.py", "--target", "step", "--profile", "tests/data/decode_loop.report.json")
    assert proc.returncode == 2 and "device profile" in one_line(proc)


def test_missing_project_root(tmp_path):
    proc = lp("analyze", "sample_models/decode_loop.py", "--project-root", str(tmp_path / "gone"))
    assert proc.returncode == 2 and "--project-root" in one_line(proc)


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs /proc")
def test_output_in_proc_is_refused_even_as_root():
    proc = lp("analyze", "sample_models/decode_loop.py", "--target", "step", "-o", "/proc/x.json")
    assert proc.returncode == 2 and "/proc/x.json" in one_line(proc)


def test_empty_script_with_target(tmp_path):
    empty = tmp_path / "empty.py"
    empty.write_text("")
    proc = lp("analyze", str(empty), "--target", "step")
    assert proc.returncode == 2 and "defines nothing" in one_line(proc)


def test_fifo_script_is_refused_without_hanging(tmp_path):
    fifo = tmp_path / "x.py"
    os.mkfifo(fifo)
    t0 = time.monotonic()
    proc = lp("analyze", str(fifo), timeout=60)
    assert proc.returncode == 2 and "not a regular file" in one_line(proc)
    assert time.monotonic() - t0 < 60


SRC = """
import torch
from torch import nn

class Base(nn.Module):
    def helper(self, x):
        return x

class Net(Base):
    def forward(self, x):
        return x

@decorated
class Open:
    pass

class Patched:
    pass
Patched.extra = lambda self: 1
"""


@pytest.mark.parametrize("name", ["Net.forward", "Net.helper", "Net.eval", "Open.anything", "Patched.extra", "step", "model.forward"])
def test_names_that_may_exist_are_accepted(name, tmp_path):
    check_target_defined(parse_target(name), tmp_path / "s.py", SRC)


@pytest.mark.parametrize("name", ["Net.nosuch", "Base.nosuch"])
def test_names_that_cannot_exist_are_refused(name, tmp_path):
    with pytest.raises(UsageError, match="has no attribute"):
        check_target_defined(parse_target(name), tmp_path / "s.py", SRC)


def test_star_import_is_never_refused(tmp_path):
    check_target_defined(parse_target("step"), tmp_path / "s.py", "from torch import *\n")


# A script whose step is local to main(), beside a helper module of the script's folder.
LOCAL_SRC = """
import torch
from torch import nn

class Net(nn.Module):
    def forward(self, x):
        return x

net = Net()
if __name__ == "__main__":
    model = Net()

def setup():
    global shared
    shared = Net()

def main():
    def step(x):
        return x + 1
    local_model = Net()
    for _ in range(3):
        step(torch.ones(2))
"""
HELPERS_SRC = """
def helper(x):
    return x

def make():
    def inner(x):
        return x
    return inner

class Block:
    def forward(self, x):
        return x
"""


@pytest.fixture
def local_script(tmp_path: Path) -> Path:
    (tmp_path / "helpers_for_target.py").write_text(HELPERS_SRC)
    script = tmp_path / "s.py"
    script.write_text(LOCAL_SRC)
    return script


def check_both(name: str, script: Path) -> None:
    """analyze's early checks, in its order."""
    from launchprof.common.targets import check_target_statically

    spec = parse_target(name)
    check_target_statically(spec, script, script.read_text())
    check_target_defined(spec, script, script.read_text())


@pytest.mark.parametrize(
    "name",
    ["Net", "Net.forward", "net", "net.forward", "model", "shared", "main", "torch.nn.functional:relu",
     "helpers_for_target:helper", "helpers_for_target:make", "helpers_for_target:Block.forward", "torch:nn.functional.relu"],
)  # fmt: skip
def test_every_documented_form_that_exists_is_accepted(name: str, local_script: Path) -> None:
    """name, Class.method, an nn.Module instance (at module level, in an ``if`` block, or made
    global by a function), module:name, module:Class.method, module:submodule.name."""
    check_both(name, local_script)


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("step", "'step' is local to main() ("),
        ("local_model", "'local_model' is local to main() ("),
        ("forward", "'forward' is defined in class Net (" ),
        ("helpers_for_target:nope", "module helpers_for_target (helpers_for_target.py) defines no 'nope' at module level"),
        ("helpers_for_target:helpr", "(did you mean helper?)"),
        ("helpers_for_target:inner", "'inner' is local to make() (helpers_for_target.py:6)"),
        ("helpers_for_target:Block.nosuch", "class Block has no attribute 'nosuch'"),
    ],
)
def test_names_the_worker_could_never_reach_are_refused(name: str, said: str, local_script: Path) -> None:
    with pytest.raises(UsageError, match="unknown target") as caught:
        check_both(name, local_script)
    assert said in str(caught.value)


def test_a_refused_name_lists_what_the_module_defines(local_script: Path) -> None:
    with pytest.raises(UsageError) as caught:
        check_both("step", local_script)
    assert "(module-level functions and classes: Net, setup, main)" in str(caught.value)
    with pytest.raises(UsageError) as caught:
        check_both("helpers_for_target:nope", local_script)
    assert "(module-level functions and classes: helper, make, Block)" in str(caught.value)


def test_bindings_the_source_does_not_show_are_let_through(tmp_path: Path) -> None:
    """globals(), exec and a module __getattr__ may bind anything: the run decides."""
    for src in ("def main():\n    def step(): pass\n    globals()['step'] = step\n",
                "def main():\n    def step(): pass\nexec('step = main')\n"):  # fmt: skip
        script = tmp_path / "g.py"
        script.write_text(src)
        check_both("step", script)
    (tmp_path / "lazy_mod_for_target.py").write_text("def __getattr__(name):\n    return len\n")
    check_both("lazy_mod_for_target:anything", tmp_path / "g.py")


def test_a_local_target_and_a_missing_module_function_exit_2_in_one_line(local_script: Path) -> None:
    """No CUDA here: exit 2 (not 4) proves the check runs before the environment is looked at."""
    for name in ("step", "helpers_for_target:nope"):
        proc = lp("analyze", str(local_script), "--target", name)
        assert proc.returncode == 2 and "unknown target" in one_line(proc)
