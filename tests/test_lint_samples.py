"""lint against sample_models/: each ``# expect: KIND`` that lint can see is found at that line.

Every sample marks the lines where ``analyze`` finds a hazard on the GPU. The kinds a
reading of the source can find (below) must be found by lint at exactly those lines,
from the sample's own target (``--target`` in its analyze command, else the function
marked ``@launchprof.target``). Lint must also report nothing else: no finding on a
line without a marker of that kind, so the clean samples give no findings at all.
Only the sample is named: lint follows its imports into the helper modules (``_*.py``).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from launchprof.lint import lint
from launchprof.lint.lint_rules import KINDS_FOUND
from launchprof.common.project import relative_to_root
from test_lint import marked_lines

SAMPLES = Path(__file__).resolve().parent.parent / "sample_models"
STATIC_KINDS = frozenset(KINDS_FOUND)
MODELS = sorted(p for p in SAMPLES.glob("*.py") if not p.name.startswith("_"))
HELPERS = sorted(SAMPLES.glob("_*.py"))


def rel(path: Path) -> str:
    """A sample's file as lint reports it: relative to the project root (the repository)."""
    return relative_to_root(path, SAMPLES.parent)


def target_of(sample: Path) -> str | None:
    """The sample's ``--target`` (README table or its own analyze command), else None for the marked one."""
    readme = SAMPLES / "README.md"
    texts = [readme.read_text()] if readme.is_file() else []
    texts.append(sample.read_text())
    for text in texts:
        match = re.search(rf"{re.escape(sample.name)}\S*\s+(?:-t|--target)[ =](\S+?)[`\s|]", text)
        if match:
            return f"{sample.stem}:{match.group(1)}"
    return None


def expected_for(sample: Path) -> dict[Path, set[tuple[int, str]]]:
    """``# expect:`` marks of the sample and of the helper modules it imports."""
    imported = set(re.findall(r"^\s*(?:from|import)\s+(_\w+)", sample.read_text(), re.M))
    files = [sample, *(h for h in HELPERS if h.stem in imported)]
    return {f: marked_lines(f.read_text(), "expect:") for f in files}


@pytest.mark.skipif(not MODELS, reason="sample_models/ has no models yet")
@pytest.mark.parametrize("sample", MODELS, ids=lambda p: p.stem)
def test_lint_finds_what_analyze_finds_at_the_same_lines(sample):
    target = target_of(sample)
    result = lint([sample], target=target)  # helpers are found through the sample's imports
    assert result.targets, f"no target for {sample.name}: give --target in its analyze command or mark it"
    assert all(t.path == str(sample) for t in result.targets)
    expected = expected_for(sample)
    for path, marks in expected.items():
        found = {(h.line, h.kind) for h in result.hazards if h.file == rel(path)}
        visible = {(line, kind) for line, kind in marks if kind in STATIC_KINDS}
        missing = visible - found
        assert not missing, f"{path.name}: lint missed {sorted(missing)}"
        extra = found - marks
        assert not extra, f"{path.name}: lint reported unmarked {sorted(extra)}"
    stray = {h.file for h in result.hazards} - {rel(p) for p in expected}
    assert not stray, f"findings in files the sample does not import: {stray}"


@pytest.mark.skipif(not MODELS, reason="sample_models/ has no models yet")
def test_the_clean_samples_are_clean():
    clean = [s for s in MODELS if not any(expected_for(s).values())]
    assert clean, "expected at least one clean sample (no # expect: markers)"
    for sample in clean:
        assert lint([sample, *HELPERS], target=target_of(sample)).hazards == (), sample.name


@pytest.mark.skipif(not MODELS, reason="sample_models/ has no models yet")
def test_lint_all_over_the_folder_finds_every_marker():
    """What the sample README promises for `launchprof lint sample_models --all`.

    Every function is checked, so the scripts' own ``main()`` (outside the measured step)
    may add findings; everywhere else, findings and markers must agree.
    """
    result = lint([SAMPLES], all_functions=True)
    for path in [*MODELS, *HELPERS]:
        marks = marked_lines(path.read_text(), "expect:")
        found = {(h.line, h.kind) for h in result.hazards if h.file == rel(path) and h.details["function"] != "main"}
        assert {(line, kind) for line, kind in marks if kind in STATIC_KINDS} <= found, path.name
        assert found <= marks, path.name


@pytest.mark.skipif(not MODELS, reason="sample_models/ has no models yet")
def test_lint_all_reports_the_scripts_main_as_info_and_the_steps_at_their_severity():
    """Each script's ``main()`` runs only from its ``__main__`` block: host driver code, never
    captured. Its host reads are information; the hazards in the steps it calls in its
    loop keep their kinds' severity (so ``--all --fail-on error`` still fails on them)."""
    from launchprof.hazards.kinds import KINDS

    result = lint([SAMPLES], all_functions=True)
    in_main = [h for h in result.hazards if h.details["function"] == "main"]
    elsewhere = [h for h in result.hazards if h.details["function"] != "main"]
    assert in_main and elsewhere
    assert {h.severity for h in in_main} == {"info"}
    assert all("runs only from the `if __name__ == \"__main__\":` block" in h.message for h in in_main)
    assert all(h.severity == KINDS[h.kind].severity for h in elsewhere)
