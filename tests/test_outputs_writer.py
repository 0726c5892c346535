"""The one output writer: symlinks, FIFOs and ptys as ``-o``; annotations on stderr;
ASCII-only streams; ``-f`` against ``-o`` extensions (issue 14 items 1, 2, 3, 13)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest
from typer.testing import CliRunner

import reports
from launchprof.cli import app
from launchprof.errors import UsageError
from launchprof.fileio.output_files import Output, check_writable, for_stream, plan_outputs, write_output

ROOT = Path(__file__).resolve().parents[1]
FORMATS = ("text", "json", "md", "sarif", "junit", "html")


@pytest.fixture
def session(tmp_path: Path) -> Path:
    path = tmp_path / "decode.report.json"
    path.write_text(reports.graphs_help(tmp_path).to_json(), encoding="utf-8")  # its project root exists: --project-root is checked
    return path


def test_symlink_is_written_through_to_its_target(tmp_path: Path) -> None:
    target = tmp_path / "real" / "report.md"
    target.parent.mkdir()
    target.write_text("old", encoding="utf-8")
    os.chmod(target, 0o600)
    link = tmp_path / "report.md"
    link.symlink_to(target)
    check_writable(link)
    write_output(link, "new ✅\n")
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text(encoding="utf-8") == "new ✅\n"
    assert (target.stat().st_mode & 0o777) == 0o600  # the file keeps its mode
    assert sorted(p.name for p in target.parent.iterdir()) == ["report.md"]  # no temp file left


def test_dangling_symlink_creates_its_target(tmp_path: Path) -> None:
    link = tmp_path / "r.json"
    link.symlink_to(tmp_path / "made.json")
    write_output(link, "{}\n")
    assert link.is_symlink() and (tmp_path / "made.json").read_text() == "{}\n"


def test_fifo_is_written_in_place_for_its_reader(tmp_path: Path) -> None:
    fifo = tmp_path / "report.json"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    check_writable(fifo)
    write_output(fifo, '{"verdict": "graphs-help"}\n')
    reader.join(timeout=10)
    assert not reader.is_alive()
    assert json.loads(got[0]) == {"verdict": "graphs-help"}
    assert fifo.is_fifo()  # not replaced by a regular file


def test_pty_is_written_in_place() -> None:
    master, slave = os.openpty()
    try:
        path = Path(os.ttyname(slave))
        check_writable(path)  # /dev/pts itself is not writable: the node is what counts
        write_output(path, "hello µs\n")
        data = os.read(master, 1024)
        assert "hello µs".encode() in data
        assert path.is_char_device()
    finally:
        os.close(master)
        os.close(slave)


def test_regular_file_is_replaced_atomically(tmp_path: Path) -> None:
    path = tmp_path / "r.md"
    path.write_text("old", encoding="utf-8")
    inode = path.stat().st_ino
    write_output(path, "new")
    assert path.read_text() == "new" and path.stat().st_ino != inode  # renamed over, not truncated


@pytest.mark.parametrize(
    ("formats", "paths", "expected"),
    [
        ([], ["a.json", "b.md", "c.sarif"], ["json", "md", "sarif"]),
        (["json", "md"], ["a.json", "b.md"], ["json", "md"]),
        (["md"], ["report.out"], ["md"]),  # an extension that names no format: -f decides
        (["json"], ["r.sarif.json"], ["json"]),  # SARIF is JSON
        (["md"], [], ["md"]),
    ],
)
def test_formats_from_extensions(formats: list[str], paths: list[str], expected: list[str], tmp_path: Path) -> None:
    outs = plan_outputs(formats, [tmp_path / p for p in paths])
    assert [o.format for o in outs] == expected


@pytest.mark.parametrize(("formats", "paths"), [(["md"], ["report.json"]), (["json", "md"], ["a.json", "b.html"]), (["sarif"], ["x.xml"])])
def test_format_contradicting_extension_is_refused(formats: list[str], paths: list[str], tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="does not match"):
        plan_outputs(formats, [tmp_path / p for p in paths])


def test_mismatch_is_exit_2_in_one_line(session: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["report", str(session), "-f", "md", "-o", str(tmp_path / "report.json")], env={"GITHUB_ACTIONS": ""})
    assert result.exit_code == 2
    assert "does not match" in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "report.json").exists()


class _Html(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:  # type: ignore[type-arg]
        self.tags.append(tag)


def parse_back(fmt: str, text: str) -> None:
    """Fail unless ``text`` is one whole document of ``fmt`` and nothing else."""
    if fmt in ("json", "sarif"):
        json.loads(text)
    elif fmt == "junit":
        ET.fromstring(text)
    elif fmt == "html":
        page = _Html()
        page.feed(text)
        assert text.rstrip().endswith("</html>") and page.tags[0] == "html"
    assert "::warning" not in text and "::error" not in text and "::notice" not in text


@pytest.mark.parametrize("fmt", FORMATS)
def test_github_actions_annotations_never_reach_stdout(session: Path, fmt: str) -> None:
    result = CliRunner().invoke(app, ["report", str(session), "-f", fmt, "--project-root", str(session.parent)], env={"GITHUB_ACTIONS": "true"})
    assert result.exit_code == 0, result.output
    parse_back(fmt, result.stdout)
    notes = [line for line in result.stderr.splitlines() if line.startswith("::")]
    assert len(notes) == 3 and notes[0].startswith("::warning file=decode.py,line=42,")


def _run(session: Path, *args: str, encoding: str) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONIOENCODING": encoding, "GITHUB_ACTIONS": "true", "COLUMNS": "80"}
    return subprocess.run([sys.executable, "-m", "launchprof", "report", str(session), *args], env=env, capture_output=True, timeout=120)


@pytest.mark.parametrize("fmt", FORMATS)
def test_ascii_stdout_gets_ascii_not_exit_70(session: Path, fmt: str) -> None:
    proc = _run(session, "-f", fmt, "--project-root", str(session.parent), encoding="ascii")
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    out, err = proc.stdout.decode("ascii"), proc.stderr.decode("ascii")  # both streams stay ASCII
    parse_back(fmt, out)
    assert "::warning file=decode.py,line=42," in err
    if fmt in ("json", "sarif"):  # data formats keep their data exactly, escaped
        doc = json.loads(out)
        assert json.loads(out) == json.loads(_run(session, "-f", fmt, "--project-root", str(session.parent), encoding="utf-8").stdout)
        assert doc
    if fmt == "text":  # symbols spelled out, boxes drawn in ASCII
        assert "speedup 2.32x (95% interval 2.27-2.35x)" in out
        assert out.startswith("+- launchprof analyze -")
    if fmt == "md":
        assert "**[ok] CUDA graphs help**" in out


def test_latin1_stdout_and_a_file_that_stays_utf8(session: Path, tmp_path: Path) -> None:
    md = tmp_path / "r.md"
    proc = _run(session, "-o", str(md), "-f", "md", encoding="latin-1")
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    proc.stdout.decode("ascii")  # the terminal report fell back to ASCII
    assert "✅" in md.read_text(encoding="utf-8")  # the file written with -o stays UTF-8


def test_for_stream_keeps_utf8_text_unchanged() -> None:
    assert for_stream("md", "✅ 2.32×", utf8=True) == "✅ 2.32×"
    assert for_stream("junit", "<a>µ</a>", utf8=False) == "<a>&#181;</a>"
    assert Output("md", None).path is None


def test_json_into_a_sarif_file_is_refused_but_a_sarif_json_name_is_not(tmp_path):
    from launchprof.errors import UsageError
    from launchprof.fileio.output_files import plan_outputs

    with pytest.raises(UsageError, match="does not match"):
        plan_outputs(["json"], [tmp_path / "x.sarif"])
    assert plan_outputs(["json"], [tmp_path / "x.sarif.json"])[0].format == "json"
    assert plan_outputs([], [tmp_path / "x.sarif.json"])[0].format == "sarif"


def test_a_format_named_as_its_file_suffix_is_accepted():
    """`-o x.markdown` was a Markdown report while `-f markdown` was "unknown format"."""
    from launchprof.fileio.output_files import plan_outputs

    outs = plan_outputs(["markdown"], [])
    assert [o.format for o in outs] == ["md"]
    assert [o.format for o in plan_outputs(["xml"], [Path("r.xml")])] == ["junit"]
    with pytest.raises(UsageError, match="unknown format 'mark'"):
        plan_outputs(["mark"], [])


def test_dash_is_standard_output(tmp_path: Path) -> None:
    """``-o -`` is standard output in its ``-f`` format, never a file named "-"."""
    assert plan_outputs(["json"], [Path("-")]) == [Output("json", None)]
    assert plan_outputs(["md", "json"], [tmp_path / "r.md", Path("-")]) == [Output("md", tmp_path / "r.md"), Output("json", None)]
    with pytest.raises(UsageError, match="needs its format"):
        plan_outputs([], [Path("-")])
    with pytest.raises(UsageError, match="only one can go there"):
        plan_outputs(["json", "md"], [Path("-")])
    proc = subprocess.run([sys.executable, "-m", "launchprof", "report", "tests/data/runs/decode_loop.lprun", "-f", "json", "-o", "-"],
                          capture_output=True, text=True, cwd=Path(__file__).resolve().parent.parent, timeout=120)
    assert proc.returncode == 0 and json.loads(proc.stdout)["verdict"] == "graphs-help"
    assert not (Path(__file__).resolve().parent.parent / "-").exists()


def test_crossover_refuses_a_dash_output_with_one_line(tmp_path: Path) -> None:
    """crossover's -o names the profile file; `-o -` is refused before anything is measured."""
    root = Path(__file__).resolve().parent.parent
    proc = subprocess.run([sys.executable, "-m", "launchprof", "crossover", "-o", "-"], capture_output=True, text=True,
                          cwd=tmp_path, timeout=120, env={**os.environ, "PYTHONPATH": str(root)})
    assert proc.returncode == 2 and "drop -o -" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "-").exists()
