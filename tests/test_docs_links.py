"""The user's guide and the docs link to each other by relative paths and heading anchors;
a moved section or a renamed heading must not leave a link that leads nowhere on GitHub.
The README is the user's guide, kept short enough to read: at most 450 lines."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md"), ROOT / "benchmarks" / "README.md",
               ROOT / "sample_models" / "README.md"])
MAX_README_LINES = 450

FENCE = re.compile(r"^(```|~~~)")
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
CODE_SPAN = re.compile(r"`[^`]*`")


def prose_lines(text: str) -> list[str]:
    """The lines outside fenced code blocks: a `# comment` in a bash block is no heading."""
    lines, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line.strip()):
            fenced = not fenced
            continue
        if not fenced:
            lines.append(line)
    return lines


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped (hyphens and
    underscores kept), each space a hyphen."""
    text = heading.strip().lower().replace("`", "")
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    found = set()
    for line in prose_lines(path.read_text(encoding="utf-8")):
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        base = slug(m[1])
        n = seen.get(base, 0)
        seen[base] = n + 1
        found.add(base if n == 0 else f"{base}-{n}")
    return found


def relative_links(path: Path) -> list[str]:
    links = []
    for line in prose_lines(path.read_text(encoding="utf-8")):
        for target in LINK.findall(CODE_SPAN.sub("", line)):
            if not re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto: are not checked
                links.append(target)
    return links


def test_slug_follows_github() -> None:
    assert slug("Several GPUs (`--nproc-per-node`)") == "several-gpus---nproc-per-node"
    assert slug("The report (JSON, `schema_version: 3`)") == "the-report-json-schema_version-3"
    assert slug("torch.compile side by side") == "torchcompile-side-by-side"
    assert slug("Measured on the H200, and what varies") == "measured-on-the-h200-and-what-varies"


def test_a_broken_link_is_found(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("# Title\n\n[ok](#title) [gone](#nowhere) [file](missing.md)\n\n```\n[code](skipped.md)\n```\n")
    assert broken(page) == ["#nowhere", "missing.md"]


def broken(path: Path) -> list[str]:
    bad = []
    for target in relative_links(path):
        file_part, _, anchor = target.partition("#")
        dest = (path.parent / file_part).resolve() if file_part else path
        if not dest.exists():
            bad.append(target)
        elif anchor and dest.is_file() and dest.suffix == ".md" and anchor not in anchors(dest):
            bad.append(target)
    return bad


@pytest.mark.parametrize("path", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(path: Path) -> None:
    assert path.exists()
    assert broken(path) == []


def test_the_readme_is_short_and_links_the_docs() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= MAX_README_LINES
    targets = {t.partition("#")[0] for t in relative_links(ROOT / "README.md")}
    assert {"docs/architecture.md", "docs/measurements.md", "benchmarks/README.md"} <= targets


# A log of past measurements may name a module that has since gone; the guides may not.
HISTORY = {"lint-speed.md"}
MODULE = re.compile(r"`((?:launchprof/)?(?:[a-z_]+/)+[a-z_]+\.py)`")


def missing_modules(text: str) -> list[str]:
    """Module paths written in backticks (`run/file.py`, `launchprof/cli.py`) that name no file
    of the package: a doc that still names a file by its old place."""
    package = ROOT / "launchprof"
    files = {p.relative_to(package).as_posix() for p in package.rglob("*.py")}
    out = []
    for path in MODULE.findall(text):
        rel = path.removeprefix("launchprof/")
        if rel.split("/")[0] in ("tests", "sample_models", "scripts", "benchmarks", "docs", "torch"):
            continue
        if not any(f == rel or f.endswith("/" + rel) for f in files):
            out.append(path)
    return out


def test_a_moved_module_is_found() -> None:
    assert missing_modules("see `run/file.py` and `analysis/nowhere.py`") == ["analysis/nowhere.py"]


@pytest.mark.parametrize("path", [p for p in DOCS if p.name not in HISTORY], ids=lambda p: str(p.relative_to(ROOT)))
def test_module_paths_in_docs_exist(path: Path) -> None:
    assert missing_modules(path.read_text(encoding="utf-8")) == []
