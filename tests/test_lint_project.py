"""lint follows the user's code across the modules of a project (tests/data/lint/project).

Only ``train.py`` is named; its targets reach into ``pkg/`` through absolute, relative
and ``import a.b as c`` imports, methods, a model factory and an optimizer. A line lint
must report for target T carries ``# finds(T): KIND``; each ``T_ok`` twin must stay silent.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from launchprof.hazards.kinds import KINDS
from launchprof.lint import lint
from launchprof.lint.lint_rules import KINDS_FOUND, RULES

PROJECT = Path(__file__).resolve().parent / "data" / "lint" / "project"
TRAIN = PROJECT / "train.py"
CASES = ["helper", "relative", "method", "sched", "branch", "factory", "argument"]


def expected(case: str) -> set[tuple[str, int, str]]:
    """``(file, line, kind)`` marked ``# finds(case): ...`` anywhere in the project."""
    marks: set[tuple[str, int, str]] = set()
    for path in sorted(PROJECT.rglob("*.py")):
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            match = re.search(rf"# finds\({case}\): (.*)$", line)
            if match:
                rel = path.relative_to(PROJECT).as_posix()
                marks |= {(rel, number, kind.strip()) for kind in match.group(1).split(",")}
    return marks


def test_every_case_has_marks():
    for case in CASES:
        assert expected(case), case


@pytest.mark.parametrize("case", CASES)
def test_each_case_is_found_at_its_file_and_line(case):
    result = lint([TRAIN], target=case)
    assert {(h.file, h.line, h.kind) for h in result.hazards} == expected(case)


@pytest.mark.parametrize("case", CASES)
def test_the_clean_twin_stays_silent(case):
    result = lint([TRAIN], target=f"{case}_ok")
    assert result.hazards == ()


def test_a_helper_finding_carries_the_call_chain():
    (hazard,) = lint([TRAIN], target="helper").hazards
    assert hazard.file == "pkg/stats.py"
    assert hazard.details["call_chain"] == "helper → running_mean → stats.py:8"
    assert "helper → running_mean → stats.py:8" in hazard.message
    (branch, *_) = [h for h in lint([TRAIN], target="branch").hazards if h.kind == "data-dependent-control-flow"]
    assert "`use_residual`" in branch.message and "`if use % 2`" in branch.message


def test_the_optimizer_fix_names_capturable():
    (hazard,) = lint([TRAIN], target="sched").hazards
    assert "capturable=True" in hazard.hint and "param_groups" in hazard.message


def test_unresolved_calls_are_listed_and_strict_makes_them_warnings():
    lines = [n for n, text in enumerate(TRAIN.read_text().splitlines(), 1) if re.search(r"fn\(x\)|getattr\(|HANDLERS\[", text)]
    assert len(lines) == 3
    result = lint([TRAIN], target="unresolved")
    assert result.hazards == ()
    assert [u.split(" ", 1)[0] for u in result.unresolved] == [f"train.py:{n}" for n in lines]
    assert "passed in as `fn`" in result.unresolved[0]
    assert "getattr" in result.unresolved[1]
    assert "lookup table" in result.unresolved[2]
    strict = lint([TRAIN], target="unresolved", strict=True)
    assert [(h.line, h.kind, h.severity) for h in strict.hazards] == [(n, "unresolved-call", "warning") for n in lines]


def test_files_are_relative_to_the_project_root_and_it_can_be_overridden(tmp_path):
    result = lint([TRAIN], target="relative")
    assert Path(result.root) == PROJECT
    assert {h.file for h in result.hazards} == {"pkg/layers/util.py"}
    moved = lint([TRAIN], target="relative", project_root=PROJECT / "pkg")
    assert {h.file for h in moved.hazards} == {"layers/util.py"}


def test_imports_are_not_followed_outside_the_project(tmp_path):
    """A module beside the project (as installed packages are) is never read; calls into it are assumed safe."""
    outside = tmp_path / "outside"
    project = tmp_path / "proj"
    (outside / "extlib").mkdir(parents=True)
    (outside / "extlib" / "__init__.py").write_text("def helper(x):\n    return x.item()\n")
    project.mkdir()
    (project / "pyproject.toml").write_text("")
    (project / "site-packages").mkdir()
    (project / "site-packages" / "vendored.py").write_text("def helper(x):\n    return x.item()\n")
    step = project / "step.py"
    step.write_text(
        "import sys\nimport torch\nfrom extlib import helper\nimport vendored\n\n"
        "def step(x: torch.Tensor):\n    return helper(x) + vendored.helper(x)\n"
    )
    result = lint([step], target="step")
    assert result.hazards == () and result.unresolved == ()


def test_kinds_found_is_exactly_what_the_rules_report():
    assert len(set(KINDS_FOUND)) == len(KINDS_FOUND) and set(KINDS_FOUND) <= set(KINDS)
    rule_kinds: set[str] = set()
    for rule in RULES:
        source = Path(rule.__code__.co_filename).read_text()
        body = source[source.index(f"def {rule.__name__}(") :].split("\ndef ", 1)[0]
        rule_kinds |= set(re.findall(r'Finding\(\s*"([a-z-]+)"', body))
    assert rule_kinds == set(KINDS_FOUND)
    assert "unresolved-call" in KINDS and "unresolved-call" not in KINDS_FOUND  # --strict's note, not a rule


def test_a_call_into_an_unparsable_module_is_named_as_not_followed(tmp_path):
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "helpers.py").write_text("def norm(x):\n    return x.item(\n")
    step = tmp_path / "step.py"
    step.write_text("import torch\nimport helpers\n\ndef step(x: torch.Tensor):\n    return helpers.norm(torch.relu(x))\n")
    result = lint([step], target="step")
    assert result.unresolved == ("step.py:5 `helpers.norm(torch.relu(x))` (defined in a module of the project that lint could not read)",)
    assert any("helpers.py:2: cannot parse" in n or "helpers.py" in n for n in result.unreadable)


def test_excluded_modules_are_not_followed(tmp_path):
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "gen").mkdir()
    (tmp_path / "gen" / "__init__.py").write_text("")
    (tmp_path / "gen" / "ops.py").write_text("import torch\n\ndef norm(x: torch.Tensor):\n    return x.item()\n")
    step = tmp_path / "step.py"
    step.write_text("import torch\nfrom gen.ops import norm\n\ndef step(x: torch.Tensor):\n    return norm(x)\n")
    assert {(h.file, h.line) for h in lint([step], target="step").hazards} == {("gen/ops.py", 4)}
    assert lint([step], target="step", exclude=("gen/*",)).hazards == ()
