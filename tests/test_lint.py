"""launchprof lint, rule by rule: each source below marks the lines lint must report.

A trailing ``# !kind`` (or ``# !kind1, kind2``) marks an expected finding; every other
line must stay quiet, so each case checks recall and precision at once.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from launchprof.errors import UsageError
from launchprof.hazards.kinds import KINDS
from launchprof.lint import LintResult, lint
from launchprof.common.project import relative_to_root

ROOT = Path(__file__).resolve().parent.parent


def marked_lines(text: str, tag: str) -> set[tuple[int, str]]:
    """``(line, kind)`` for every ``# <tag> kind[, kind]`` comment in ``text``."""
    marks: set[tuple[int, str]] = set()
    for number, line in enumerate(text.splitlines(), 1):
        _, sep, rest = line.partition(f"# {tag}")
        if sep:
            marks |= {(number, kind.strip()) for kind in rest.split(",") if kind.strip()}
    return marks


def write(tmp_path: Path, name: str, source: str) -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source).lstrip("\n"))
    return path


def rel(result: LintResult, path: Path) -> str:
    """``path`` as lint reports it: relative to the project root of the run."""
    return relative_to_root(path, Path(result.root))


def found(result: LintResult, path: Path | None = None) -> set[tuple[int, str]]:
    return {(h.line, h.kind) for h in result.hazards if path is None or h.file == rel(result, path)}  # type: ignore[misc]


def check(tmp_path: Path, source: str, **options) -> LintResult:
    """Lint ``source`` and assert that the findings are exactly its ``# !kind`` marks."""
    path = write(tmp_path, "model.py", source)
    result = lint([path], **options)
    assert found(result) == marked_lines(path.read_text(), "!")
    return result


# --- hidden-sync --------------------------------------------------------------------


def test_hidden_sync_calls(tmp_path):
    check(
        tmp_path,
        """
        import torch
        import launchprof

        @launchprof.target
        def step(x: torch.Tensor, w: torch.Tensor):
            h = x @ w
            a = h.sum().item()  # !hidden-sync
            b = h.cpu()  # !hidden-sync
            c = h.tolist()  # !hidden-sync
            d = (h > 0).nonzero()  # !hidden-sync
            e = torch.nonzero(h)  # !hidden-sync
            torch.cuda.synchronize()  # !hidden-sync
            torch.cuda.current_stream().synchronize()  # !hidden-sync
            f = h.to("cpu")  # !hidden-sync
            g = torch.where(h > 0)  # !hidden-sync
            k = torch.masked_select(h, h > 0)  # !hidden-sync
            if torch.equal(h, x):  # !hidden-sync
                pass
            done = torch.cuda.Event()
            done.synchronize()  # !hidden-sync
            return h.detach().cpu().numpy()  # !hidden-sync
        """,
    )


def test_hidden_sync_truth_tests_masks_and_prints(tmp_path):
    check(
        tmp_path,
        """
        import logging
        import torch
        import launchprof

        log = logging.getLogger("train")

        @launchprof.target
        def step(x: torch.Tensor):
            y = torch.relu(x)
            if y.sum() > 0:  # !hidden-sync
                y = y * 2
            while y.max() > 10:  # !hidden-sync
                y = y / 2
            assert torch.isfinite(y).all()  # !hidden-sync
            flag = bool(y.any())  # !hidden-sync
            n = int(y.argmax())  # !hidden-sync
            s = float(y.mean())  # !hidden-sync
            z = y if y.min() < 0 else x  # !hidden-sync
            if not y.all():  # !hidden-sync
                pass
            if x.numel() > 1 and y.any():  # !hidden-sync
                pass
            mask = y > 0.5
            kept = y[mask]  # !hidden-sync
            dropped = y[~mask]  # !hidden-sync
            pos = x[x > 0]  # !hidden-sync
            print(y)  # !hidden-sync
            print(f"mean {y.mean()}")  # !hidden-sync
            log.info("y=%s", y)  # !hidden-sync
            logging.warning(y.sum())  # !hidden-sync
            return y
        """,
    )


def test_shape_work_and_device_side_code_are_not_syncs(tmp_path):
    check(
        tmp_path,
        """
        import torch
        import torch.nn.functional as F
        import launchprof

        @launchprof.target
        def step(x: torch.Tensor, idx: torch.Tensor, mask=None, scores=None):
            b = x.shape[0]
            d = x.size(-1)
            if b > 1 and d == 64 and x.dim() == 2 and len(x) > 0:
                x = x.view(b, d)
            if mask is None:
                mask = torch.ones_like(x, dtype=torch.bool)
            if x.numel() > 0 and x.ndim == 2 and x.dtype == torch.float32:
                pass
            y = torch.where(x > 0, x, torch.zeros_like(x))
            values, indices = x.max(dim=-1)
            top = x.max(dim=1).values
            rows = x[idx]
            first = x[:, 0]
            last = x[x.shape[0] - 1]
            half = x.to(torch.float16)
            moved = x.to("cuda", non_blocking=True)
            drop = F.dropout(y, 0.1)
            noise = torch.randn(4, device=x.device)
            total = y.sum()
            print("step done", x.shape, b)
            filled = x.masked_fill(x < 0, 0.0)
            return y + values + top + rows.sum() + first.sum() + last.sum() + half + moved + drop + noise.sum() + total + filled
        """,
    )


def test_unclear_values_stay_quiet(tmp_path):
    """Untyped arguments are only treated as tensors once code proves it: bare truth tests are not flagged."""
    check(
        tmp_path,
        """
        import numpy as np
        import launchprof

        @launchprof.target
        def step(x, cache, options):
            if cache:
                x = x + 1
            if options.verbose:
                pass
            arr = np.zeros(3)
            ids = arr.tolist()
            where = arr.nonzero()
            if x.sum() > 0:  # !hidden-sync
                x = x - 1
            return x[x > 0]  # !hidden-sync
        """,
    )


# --- pageable-copy ------------------------------------------------------------------


def test_pageable_copy(tmp_path):
    check(
        tmp_path,
        """
        import numpy as np
        import torch
        import launchprof

        host_table = torch.arange(16)

        @launchprof.target
        def step(x: torch.Tensor, buf: torch.Tensor, device):
            a = torch.tensor([1.0, 2.0]).cuda()  # !pageable-copy
            b = torch.tensor([1.0, 2.0], device="cuda")  # !pageable-copy
            c = torch.from_numpy(np.ones(3)).to("cuda")  # !pageable-copy
            t = torch.arange(4)
            t = t.to(device)  # !pageable-copy
            t.to(device)
            buf.copy_(torch.from_numpy(np.ones(3)))  # !pageable-copy
            d = x.new_tensor([1, 2, 3])  # !pageable-copy
            e = host_table.cuda()  # !pageable-copy
            ok1 = torch.zeros(3, device="cuda")
            ok2 = torch.tensor([1.0]).pin_memory().cuda(non_blocking=True)
            ok3 = torch.as_tensor(x, device=x.device)
            ok4 = x.new_tensor([1.0], device="cpu")
            ok5 = torch.tensor([1.0, 2.0]).float()
            return x
        """,
    )


# --- frozen-scalar ------------------------------------------------------------------


def test_frozen_scalar(tmp_path):
    result = check(
        tmp_path,
        """
        import torch
        import launchprof

        @launchprof.target
        def step(x: torch.Tensor, lr: float, n: int, scale=0.5, momentum=None, temperature=None, name="a"):
            x.add_(lr)  # !frozen-scalar
            y = x * scale  # !frozen-scalar
            z = torch.full((4,), n)  # !frozen-scalar
            half = lr * 0.5
            x.mul_(half)  # !frozen-scalar
            x += lr  # !frozen-scalar
            logits = x / temperature  # !frozen-scalar
            if n % 10 == 0:  # !frozen-scalar, data-dependent-control-flow
                x = x * 2
            w = x.view(n, -1)
            e = torch.zeros(n, device=x.device)
            if lr < 0:
                raise ValueError("lr must be positive")
            assert n > 0
            q = x * 0.5
            return y + z.sum() + w.sum() + e.sum() + q + logits
        """,
    )
    by_line = {h.line: h for h in result.hazards if h.kind == "frozen-scalar"}
    assert all(h.severity == "warning" for h in by_line.values())
    assert "`lr`" in by_line[6].message and "`step`" in by_line[6].message
    assert "`lr`" in by_line[10].message  # half = lr * 0.5: the message names the argument it came from
    assert "`temperature`" in by_line[12].message
    assert "`n`" in by_line[13].message and "branch" in by_line[13].message


def test_frozen_scalar_follows_the_number_into_a_helper(tmp_path):
    source = """
        import torch
        import launchprof

        def apply(p: torch.Tensor, g: torch.Tensor, rate):
            p.add_(g, alpha=-rate)  # !frozen-scalar

        def constant(p: torch.Tensor, rate: float = 0.1):
            p.mul_(rate)

        @launchprof.target
        def step(p: torch.Tensor, g: torch.Tensor, lr: float):
            apply(p, g, lr)
            apply(p, g, 0.01)
            constant(p)
            return p
        """
    result = check(tmp_path, source)
    (hazard,) = result.hazards
    assert "`lr`" in hazard.message and hazard.details["function"] == "apply"


# --- unjoined-stream ----------------------------------------------------------------


def test_unjoined_stream_reports_the_fork_and_the_side_work(tmp_path):
    result = check(
        tmp_path,
        """
        import torch
        import launchprof

        side = torch.cuda.Stream()

        @launchprof.target
        def step(x: torch.Tensor):
            side.wait_stream(torch.cuda.current_stream())  # !unjoined-stream
            with torch.cuda.stream(side):
                y = x * 2
            return x + 1
        """,
    )
    (hazard,) = result.hazards
    assert "`side`" in hazard.message and "lines 9-10" in hazard.message
    assert "wait_stream(side)" in hazard.hint


def test_joined_streams_are_fine(tmp_path):
    check(
        tmp_path,
        """
        import torch
        import launchprof

        side = torch.cuda.Stream()
        other = torch.cuda.Stream()

        @launchprof.target
        def by_stream(x: torch.Tensor):
            main = torch.cuda.current_stream()
            side.wait_stream(main)
            with torch.cuda.stream(side):
                y = x * 2
            main.wait_stream(side)
            return y

        @launchprof.target
        def by_event(x: torch.Tensor):
            done = torch.cuda.Event()
            other.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(other):
                y = x * 2
                done.record()
            torch.cuda.current_stream().wait_event(done)
            return y

        @launchprof.target
        def by_recorded_event(x: torch.Tensor):
            other.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(other):
                y = x * 2
            ev = other.record_event()
            torch.cuda.current_stream().wait_event(ev)
            return y

        def fork_into(s, x):
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):
                return x * 2

        @launchprof.target
        def joined_by_caller(x: torch.Tensor):
            y = fork_into(side, x)
            torch.cuda.current_stream().wait_stream(side)
            return y
        """,
    )


def test_side_stream_work_without_a_fork_or_join(tmp_path):
    check(
        tmp_path,
        """
        import torch
        import launchprof

        @launchprof.target
        def step(x: torch.Tensor, s):
            with torch.cuda.stream(s):  # !unjoined-stream
                y = x * 2
            with torch.cuda.stream(torch.cuda.current_stream()):
                z = x * 3
            return y + z
        """,
    )


def test_fork_through_an_event(tmp_path):
    check(
        tmp_path,
        """
        import torch
        import launchprof

        side = torch.cuda.Stream()

        @launchprof.target
        def step(x: torch.Tensor):
            ready = torch.cuda.Event()
            ready.record()
            side.wait_event(ready)  # !unjoined-stream
            with torch.cuda.stream(side):
                y = x * 2
            return y
        """,
    )


# --- rng-state ----------------------------------------------------------------------


def test_rng_state(tmp_path):
    check(
        tmp_path,
        """
        import random
        import numpy as np
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        from numpy.random import default_rng
        import launchprof

        drop = nn.Dropout(0.1)

        @launchprof.target
        def step(x: torch.Tensor, gen: torch.Generator):
            a = np.random.rand(3)  # !rng-state
            b = random.random()  # !rng-state
            rng = default_rng(0)  # !rng-state
            g = torch.Generator(device="cuda")  # !rng-state
            c = torch.randn(3, generator=gen)  # !rng-state
            x.uniform_(generator=g)  # !rng-state
            d = torch.rand(3, device="cuda")
            e = torch.randn_like(x)
            f = F.dropout(x, 0.1, training=True)
            h = drop(x)
            np.random.seed(0)
            k = torch.randn(3, generator=None)
            return x + d.sum() + e + f + h
        """,
    )


def test_a_local_named_random_is_not_the_module(tmp_path):
    check(
        tmp_path,
        """
        import torch
        import launchprof

        @launchprof.target
        def step(x: torch.Tensor, random):
            return x * random.random()
        """,
    )


# --- following calls and choosing targets -------------------------------------------------


def test_calls_are_followed_across_files_and_reported_in_the_callee(tmp_path):
    pkg = tmp_path / "pkg"
    write(pkg, "__init__.py", "")
    helpers = write(
        pkg,
        "helpers.py",
        """
        import torch

        def norm(x: torch.Tensor) -> torch.Tensor:
            return x / x.norm().item()  # !hidden-sync

        def unused(x: torch.Tensor) -> torch.Tensor:
            return x.cpu()
        """,
    )
    layers = write(
        pkg,
        "layers.py",
        """
        import torch
        from torch import nn
        from .helpers import norm

        class Block(nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.lin = nn.Linear(4, 4)

            def forward(self, x: torch.Tensor) -> torch.Tensor:
                return self.clip(self.lin(norm(x)))

            def clip(self, x: torch.Tensor) -> torch.Tensor:
                if x.abs().max() > 10:  # !hidden-sync
                    x = x.clamp(-10, 10)
                return x

        class Net(nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.blocks = nn.ModuleList([Block() for _ in range(2)])
                self.last = Block()

            def forward(self, x: torch.Tensor) -> torch.Tensor:
                for block in self.blocks:
                    x = block(x)
                return self.last(x)
        """,
    )
    main = write(
        pkg,
        "main.py",
        """
        import torch
        from launchprof import target
        from pkg import helpers
        from pkg.layers import Net

        model = Net()

        def inner_helper(x):
            return x.tolist()

        @target
        def step(x: torch.Tensor):
            def local(y: torch.Tensor):
                return y.cpu()  # !hidden-sync
            h = helpers.norm(model(x))
            return local(h)
        """,
    )
    result = lint([pkg])
    assert [t.qualname for t in result.targets] == ["step"]
    assert found(result, helpers) == marked_lines(helpers.read_text(), "!")
    assert found(result, layers) == marked_lines(layers.read_text(), "!")
    assert found(result, main) == marked_lines(main.read_text(), "!")
    functions = {h.details["function"] for h in result.hazards}
    assert functions == {"norm", "Block.clip", "step.local"}
    assert len(result.hazards) == 3  # norm() is reached twice, reported once


def test_super_and_instance_methods_are_followed(tmp_path):
    check(
        tmp_path,
        """
        import torch
        import launchprof

        class Base(torch.nn.Module):
            def forward(self, x: torch.Tensor) -> torch.Tensor:
                return x.cpu()  # !hidden-sync

        class Child(Base):
            def forward(self, x: torch.Tensor) -> torch.Tensor:
                return super().forward(x) + self.extra(x)

            def extra(self, x: torch.Tensor) -> torch.Tensor:
                return x * x.sum().item()  # !hidden-sync

        net = Child()

        @launchprof.target
        def step(x: torch.Tensor):
            return net(x)
        """,
    )


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        ("step", {"step"}),
        ("Model.forward", {"Model.forward"}),
        ("model.forward", {"Model.forward"}),
        ("mod:step", {"step"}),
        ("forward", {"Model.forward"}),
    ],
)
def test_target_names(tmp_path, target, expected):
    path = write(
        tmp_path,
        "mod.py",
        """
        import torch

        class Model(torch.nn.Module):
            def forward(self, x: torch.Tensor) -> torch.Tensor:
                return x.cpu()

        model = Model()

        def step(x: torch.Tensor):
            return x.item()

        def other(x: torch.Tensor):
            return x.tolist()
        """,
    )
    result = lint([path], target=target)
    assert {t.qualname for t in result.targets} == expected
    assert {h.details["function"] for h in result.hazards} == expected


def test_unknown_target_is_a_usage_error_with_a_suggestion(tmp_path):
    path = write(tmp_path, "mod.py", "def step(x):\n    return x\n")
    with pytest.raises(UsageError, match=r"unknown target 'stpe'.*did you mean step"):
        lint([path], target="stpe")
    with pytest.raises(UsageError, match="no module 'nomod'"):
        lint([path], target="nomod:step")


def test_marked_targets_in_every_spelling(tmp_path):
    a = write(tmp_path, "a.py", "import launchprof as lp\n\n@lp.target\ndef one(x):\n    return x.item()\n")
    b = write(tmp_path, "b.py", "from launchprof import target\n\n@target\ndef two(x):\n    return x.item()\n")
    c = write(tmp_path, "c.py", "def three(x):\n    return x.item()\n")
    result = lint([a, b, c])
    assert sorted(t.qualname for t in result.targets) == ["one", "two"]
    assert {h.file for h in result.hazards} == {"a.py", "b.py"}


def test_no_target_checks_nothing_and_all_checks_everything(tmp_path):
    path = write(
        tmp_path,
        "mod.py",
        """
        import torch

        def f(x: torch.Tensor):
            def inner(y: torch.Tensor):
                return y.item()
            return x.cpu()

        class C:
            def m(self, x: torch.Tensor):
                torch.cuda.synchronize()
        """,
    )
    assert lint([path]).hazards == ()
    result = lint([path], all_functions=True)
    assert {(h.details["function"], h.line) for h in result.hazards} == {("f.inner", 5), ("f", 6), ("C.m", 10)}
    assert result.functions == 3


def test_all_checks_every_function_but_does_not_assume_untyped_arguments_are_tensors(tmp_path):
    check(
        tmp_path,
        """
        import torch

        def helper(a, b=2.0, mode=None):
            c = a * b
            if mode:
                c = c + 1
            return c

        def step(x: torch.Tensor, n: int, scale=0.5):
            if n > 1 and x.dim() == 2:  # !frozen-scalar, data-dependent-control-flow
                x = x * scale  # !frozen-scalar
            if not n:  # !frozen-scalar, data-dependent-control-flow
                x = x + 1
            if n < 0 or not 0.0 <= scale:
                raise ValueError("bad arguments")
            return x
        """,
        all_functions=True,
    )


# --- suppression, files, fields ---------------------------------------------------------


def test_inline_suppression(tmp_path):
    result = check(
        tmp_path,
        """
        import torch
        import launchprof

        @launchprof.target
        def step(x: torch.Tensor, lr: float):
            a = x.item()  # launchprof: ignore[hidden-sync]
            b = x.item()  # launchprof: ignore
            c = x.item()  # launchprof: ignore[pageable-copy]  # !hidden-sync
            x.add_(x.sum().item() * lr)  # launchprof: ignore[hidden-sync, frozen-scalar]
            x.add_(x.sum().item() * lr)  # launchprof: ignore[frozen-scalar]  # !hidden-sync
            return x
        """,
    )
    assert result.suppressed == 5


def test_hazard_fields(tmp_path):
    result = check(
        tmp_path,
        """
        import torch
        import launchprof

        @launchprof.target
        def step(x: torch.Tensor, lr: float):
            x.add_(lr)  # !frozen-scalar
            return   x.sum().item()  # !hidden-sync
        """,
    )
    for h in result.hazards:
        assert h.source == "static"
        assert h.severity == KINDS[h.kind].severity
        assert h.hint.startswith(KINDS[h.kind].hint)
        assert h.file == "model.py"  # relative to the project root (here: the file's folder)
        assert h.details["function"] == "step"
    by_kind = {h.kind: h for h in result.hazards}
    assert by_kind["hidden-sync"].details["code"] == "return   x.sum().item()  # !hidden-sync"
    assert "x.sum().item()" in by_kind["hidden-sync"].message


def test_a_file_that_does_not_parse_names_its_line(tmp_path):
    path = write(tmp_path, "bad.py", "import torch\n\ndef step(x):\n    return x +\n")
    with pytest.raises(UsageError, match=r"bad\.py:4: cannot parse"):
        lint([path], all_functions=True)


def test_missing_path(tmp_path):
    with pytest.raises(UsageError, match="no such file or folder"):
        lint([tmp_path / "nope.py"])


def test_folders_skip_hidden_caches_and_virtualenvs(tmp_path):
    body = "def f(x):\n    return x.item()\n"
    write(tmp_path, "src/good.py", body)
    write(tmp_path, "src/sub/also.py", body)
    write(tmp_path, "src/.hidden/no.py", body)
    write(tmp_path, "src/__pycache__/no.py", body)
    write(tmp_path, "src/venv/lib/no.py", body)
    write(tmp_path, "src/myenv/pyvenv.cfg", "home = /usr\n")
    write(tmp_path, "src/myenv/lib/no.py", body)
    write(tmp_path, "src/notes.txt", "x.item()\n")
    result = lint([tmp_path / "src"], all_functions=True)
    assert result.files == 2
    assert sorted(Path(h.file).name for h in result.hazards) == ["also.py", "good.py"]


def test_lint_never_imports_torch(tmp_path):
    """CI runners may have no torch: lint must not need it."""
    path = write(tmp_path, "m.py", "import torch\n\ndef f(x: torch.Tensor):\n    return x.item()\n")
    code = (
        "import sys; sys.modules['torch'] = None\n"
        "from launchprof.lint import lint\n"
        f"r = lint([{str(path)!r}], all_functions=True)\n"
        "assert len(r.hazards) == 1, r.hazards\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


def test_speed_regression_guard(tmp_path):
    """A guard against order-of-magnitude slowdowns, on dense generated code (a finding every
    eight lines, slower than real code), that cannot flake on a loaded shared runner.

    Lint's cost is compared with Python's own ``ast.parse`` of the same file, timed in turns
    with it, so a busy machine slows both alike: lint reads the tree once and walks it once,
    about twice the parse alone (docs/lint-speed.md). The absolute floor is generous:
    at a load of 7 on 2 cores this file still lints at about 9,000 lines/s.
    """
    block = textwrap.dedent(
        """
        class Layer{i}(torch.nn.Module):
            def __init__(self, dim: int) -> None:
                super().__init__()
                self.lin = torch.nn.Linear(dim, dim)
                self.register_buffer("scale", torch.ones(dim))

            def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
                b, d = x.shape[0], x.size(-1)
                h = F.gelu(self.lin(x)) * self.scale
                if mask is not None:
                    h = h.masked_fill(~mask, 0.0)
                h = torch.where(h > 0, h, h * 0.01)
                return (x + h).view(b, d)


        def step{i}(x: torch.Tensor, lr: float, n: int = 4) -> torch.Tensor:
            for _ in range(n):
                x = F.layer_norm(x, (x.shape[-1],))
            x.add_(lr)
            return x * x.sum().item()
        """
    )
    source = "import torch\nimport torch.nn.functional as F\n" + "".join(block.format(i=i) for i in range(1200))
    path = write(tmp_path, "big.py", source)
    lines = source.count("\n")
    assert lines > 25000
    lint_times, parse_times = [], []
    for _ in range(3):
        lint_times.append(_timed(lambda: lint([path], all_functions=True)))
        start = time.perf_counter()
        ast.parse(source)
        parse_times.append(time.perf_counter() - start)
    ratio = min(lint_times) / min(parse_times)
    assert ratio < 8, f"lint takes {ratio:.1f}x as long as parsing the file"
    assert lines / min(lint_times) >= 2000, f"{lines / min(lint_times):.0f} lines/s"


def _timed(fn) -> float:
    start = time.perf_counter()
    result = fn()
    assert len(result.hazards) == 3600  # per block: frozen lr, .item(), the loop bound n
    return time.perf_counter() - start


def test_deeply_nested_code_is_checked_or_named_never_a_traceback(tmp_path):
    """Generated code nests deep: a long chain is still checked; one too deep to walk is named in the result."""
    def chain(depth: int) -> str:
        return "import torch\n\ndef f(x: torch.Tensor):\n    y = x" + " + x" * depth + "\n    return y.item()\n"

    deep = lint([write(tmp_path, "deep.py", chain(3000))], all_functions=True)
    assert [(h.line, h.kind) for h in deep.hazards] == [(5, "hidden-sync")] and deep.skipped == ()
    too_deep = lint([write(tmp_path, "deep.py", chain(30000))], all_functions=True)
    assert too_deep.hazards == () and too_deep.skipped == ("deep:f (nested too deeply)",)


def test_all_in_worker_processes_gives_what_one_process_gives(tmp_path, monkeypatch):
    from launchprof.lint import parallel

    for i in range(12):
        write(tmp_path, f"pkg/m{i:02d}.py", f"import torch\n\ndef f{i}(x: torch.Tensor, n: int):\n    x.add_(n)\n    return x.item()\n")
    write(tmp_path, "pkg/zz_bad.py", "def f(:\n")
    alone = lint([tmp_path / "pkg"], all_functions=True)
    monkeypatch.setattr(parallel, "PARALLEL_MIN_FILES", 4)
    monkeypatch.setattr(parallel, "CHUNK_FILES", 3)
    monkeypatch.setattr(parallel, "usable_cores", lambda: 2)
    assert parallel.workers_for(13) == 2
    together = lint([tmp_path / "pkg"], all_functions=True)
    assert together.hazards == alone.hazards and len(together.hazards) == 24
    assert (together.files, together.lines, together.unreadable) == (alone.files, alone.lines, alone.unreadable)
    assert together.targets == alone.targets


def test_a_branch_on_a_tensor_is_one_hidden_sync_that_says_it_is_data_dependent(tmp_path):
    result = check(
        tmp_path,
        """
        import torch
        import launchprof

        @launchprof.target
        def step(x: torch.Tensor, n: int):
            if x.sum() > 0:  # !hidden-sync
                x = x * 2
            for _ in range(n):  # !data-dependent-control-flow
                x = x + 1
            for _ in range(4):
                x = x - 1
            return x
        """,
    )
    sync, loop = sorted(result.hazards, key=lambda h: h.line)
    assert "data-dependent" in sync.message
    assert "`n`" in loop.message and "loop bound" in loop.message and loop.severity == "error"


# --- Python counters, numbers shown by their use, tensors formatted as text ----------------


def test_a_global_counter_in_a_tensor_operation_is_frozen(tmp_path):
    result = check(
        tmp_path,
        """
        import torch

        STEP = 0
        SCALE = 0.5
        calls = 0

        def step(x: torch.Tensor):
            global STEP
            STEP += 1
            y = x * STEP  # !frozen-scalar
            return y * SCALE

        def count(x: torch.Tensor):
            global calls
            calls += 1
            if calls % 50 == 0:
                print("step", calls)
            return x * 2
        """,
        all_functions=True,
    )
    (hazard,) = result.hazards
    assert hazard.severity == "warning"
    assert "counter `STEP`" in hazard.message and "changes on every call" in hazard.message
    assert "add_(1)" in hazard.hint


def test_an_attribute_counter_on_self_or_any_object_is_frozen(tmp_path):
    result = check(
        tmp_path,
        """
        import torch
        import launchprof

        class Model(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.t = 0
                self.lin = torch.nn.Linear(4, 4)
                self.register_buffer("seen", torch.zeros(()))

            def forward(self, x: torch.Tensor):
                self.t += 1
                self.seen += 1
                return self.lin(x) * self.t  # !frozen-scalar

            def fill(self, x: torch.Tensor):
                return torch.full_like(x, self.t)  # !frozen-scalar

        def tick(state, x: torch.Tensor):
            state.step += 1
            return x.add(state.step)  # !frozen-scalar

        @launchprof.target
        def marked(state, x):
            state.calls += 1
            if state.calls % 100 == 0:
                print("calls", state.calls)
            return x * state.calls  # !frozen-scalar
        """,
        all_functions=True,
    )
    names = {h.line: h.message.split("`")[1] for h in result.hazards}
    assert names == {14: "self.t", 17: "self.t", 21: "state.step", 28: "state.calls"}
    assert {h.severity for h in result.hazards} == {"warning"}


def test_an_unannotated_argument_used_as_a_python_scalar_is_judged_as_a_number(tmp_path):
    source = """
        import torch
        import launchprof

        def step(x, i):
            return torch.full_like(x, i)  # !frozen-scalar

        def factory(n):
            return torch.full((4,), n)  # !frozen-scalar

        def both(x: torch.Tensor, i):
            y = torch.full_like(x, i)  # !frozen-scalar
            if i % 2:  # !frozen-scalar, data-dependent-control-flow
                y = y * 2
            return y + x * i  # !frozen-scalar

        def as_tensor(x: torch.Tensor, i):
            return x + torch.tensor(i)  # !frozen-scalar

        def fill(buf: torch.Tensor, value):
            buf.fill_(value)  # !frozen-scalar
            return buf

        def a_tensor_after_all(x, t):
            y = torch.full_like(x, t)
            return y + t.sum()

        def a_list(ids):
            return torch.tensor(ids) if len(ids) else None

        def first_argument(x: torch.Tensor, t):
            return torch.full_like(torch.relu(t), 1.0) * x

        def never_a_scalar_use(x: torch.Tensor, w):
            return x * w

        @launchprof.target
        def marked(x, i):
            x.fill_(i)  # !frozen-scalar
            return x * i  # !frozen-scalar
        """
    result = check(tmp_path, source, all_functions=True)
    assert {h.severity for h in result.hazards if h.kind == "frozen-scalar"} == {"warning"}
    by_line = {h.line: h for h in result.hazards if h.kind == "frozen-scalar"}
    assert "Python number `i` (an argument of `step`)" in by_line[5].message
    assert "Python number `value` (an argument of `fill`)" in by_line[20].message
    targeted = lint([tmp_path / "model.py"], target="step")
    assert [(h.line, h.kind) for h in targeted.hazards] == [(5, "frozen-scalar")]


def test_a_tensor_formatted_as_text_is_a_host_read(tmp_path):
    result = check(
        tmp_path,
        """
        import logging
        import torch

        log = logging.getLogger(__name__)

        def step(x: torch.Tensor, w: torch.Tensor):
            loss = (x @ w).sum()
            a = f"{loss:.3f}"  # !hidden-sync
            b = format(loss, ".3f")  # !hidden-sync
            c = "{}".format(loss)  # !hidden-sync
            d = str(loss)  # !hidden-sync
            e = "%f" % loss  # !hidden-sync
            print(f"loss {loss:.3f}")  # !hidden-sync
            log.info("loss %s" % (loss,))  # !hidden-sync
            n = loss.item()  # !hidden-sync
            f = f"{n:.3f} {x.shape} {float(n)}"
            g = str(x.shape) + "{}".format(n) + "%d" % x.dim()
            h = format(3.5, ".1f")
            return loss

        def unknown(loss):
            return f"{loss:.3f}" + str(loss)
        """,
        all_functions=True,
    )
    assert {h.severity for h in result.hazards} == {"error"}
    messages = {h.line: h.message for h in result.hazards}
    assert messages[8] == "`f'{loss:.3f}'` formats a tensor as text: it copies a device value to the host and waits for the GPU"
    assert messages[12].startswith("`'%f' % loss` formats a tensor as text")
    assert len([h for h in result.hazards if h.line == 13]) == 1  # the f-string is reported, not the print as well
