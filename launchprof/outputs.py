"""Where reports go: pairing ``-f``/``-o`` options, guessing formats, and the one writer.

Files are written here and nowhere else (``commands/emit.py`` writes the streams):

- a regular file is replaced atomically (temporary file beside it, then rename), so a
  reader never sees half a report;
- a symlink is written *through*: its target is replaced, the link stays;
- anything else (a FIFO, a character device, a pty, ``/dev/stdout``) is opened and
  written directly: renaming over it would replace the node and its reader gets nothing.

Streams that cannot encode UTF-8 get the same report in ASCII (:func:`for_stream`).
"""

from __future__ import annotations

import codecs
import io
import json
import os
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from launchprof.errors import UsageError

FORMATS = ("text", "json", "md", "sarif", "junit", "html")
ALIASES = {"markdown": "md", "txt": "text", "xml": "junit"}  # what a -o suffix already accepts, as a -f name

_BY_EXTENSION = {
    ".txt": "text",
    ".json": "json",
    ".md": "md",
    ".markdown": "md",
    ".sarif": "sarif",
    ".xml": "junit",
    ".html": "html",
    ".htm": "html",
}


@dataclass(frozen=True)
class Output:
    """One rendering of the report: a format, and a path (None means standard output)."""

    format: str
    path: Path | None


def guess_format(path: Path) -> str:
    name = path.name.lower()
    if name.endswith(".sarif.json"):
        return "sarif"
    fmt = _BY_EXTENSION.get(path.suffix.lower())
    if fmt is None:
        raise UsageError(
            f"cannot guess the format of {path}: give -f ({', '.join(FORMATS)}) "
            f"or use one of the extensions {', '.join(sorted(_BY_EXTENSION))}"
        )
    return fmt


def known_format(path: Path) -> str | None:
    """The format ``path``'s extension names, or None when it names none."""
    try:
        return guess_format(path)
    except UsageError:
        return None


def is_stdout(path: Path | str) -> bool:
    """``-o -``: the usual name for standard output, never a file named "-"."""
    return str(path) == "-"


def plan_outputs(formats: list[str], paths: list[Path], allowed: tuple[str, ...] = FORMATS) -> list[Output]:
    """Pair the i-th ``-f`` with the i-th ``-o``; a path without ``-f`` has its format guessed.

    A ``-f`` that contradicts its path's extension (``-f md -o report.json``) is refused
    rather than writing Markdown into a .json file. Formats beyond the last path, and a
    path ``-``, go to standard output (at most one may). Checked up front so that a typo fails in a
    second, not after a long measurement.
    """
    formats = [ALIASES.get(fmt, fmt) for fmt in formats]
    for fmt in formats:
        if fmt not in allowed:
            raise UsageError(f"unknown format {fmt!r}: choose from {', '.join(allowed)}")
    outputs: list[Output] = []
    for i, path in enumerate(paths):
        if is_stdout(path):
            if i >= len(formats):
                raise UsageError("-o - (standard output) needs its format: give it a -f (the i-th -f pairs with the i-th -o)")
            outputs.append(Output(formats[i], None))
            continue
        refuse_folder(path)  # before its format is guessed: a folder has no extension to guess from
        fmt = formats[i] if i < len(formats) else guess_format(path)
        named = known_format(path)
        # `-f json -o x.sarif.json` is a JSON report in a file named like SARIF's JSON: allowed.
        # `-f json -o x.sarif` would feed a non-SARIF file to code scanning: refused.
        json_named_sarif = named == "sarif" and fmt == "json" and path.name.lower().endswith(".sarif.json")
        if named is not None and fmt != named and not json_named_sarif:
            raise UsageError(f"-f {fmt} does not match -o {path} (a {named} file): give -f {named}, or drop -f to infer each file's format")
        if fmt not in allowed:
            raise UsageError(f"format {fmt!r} (from {path}) is not available here: choose from {', '.join(allowed)}")
        check_writable(path)
        outputs.append(Output(fmt, path))
    extra = formats[len(paths) :]
    to_stdout = len(extra) + sum(1 for o in outputs if o.path is None)
    if to_stdout > 1:
        raise UsageError(f"{to_stdout} outputs to standard output (-o - or -f without -o); only one can go there: add -o PATH")
    outputs.extend(Output(fmt, None) for fmt in extra)
    return outputs


def check_writable(path: Path) -> None:
    """Fail now, with one line, if ``path`` cannot be written later."""
    refuse_folder(path)
    if os.path.exists(path) and not _is_regular(path):  # False, not a crash, in a folder we may not look into
        if not os.access(path, os.W_OK):
            raise UsageError(f"output path {path} is not writable")
        return  # a FIFO, pty or device is written in place: its folder need not be writable
    path = Path(os.path.realpath(path))  # a symlink is written through, beside its target
    parent = path.parent if str(path.parent) else Path(".")
    if not os.path.isdir(parent):
        raise UsageError(f"output folder {parent} does not exist")
    probe_folder(parent, path)


def refuse_folder(path: Path) -> None:
    """The one message for ``-o`` naming a folder, with or without ``-f``."""
    if os.path.isdir(path):
        raise UsageError(f"output path {path} is a directory")


def probe_folder(folder: Path, path: Path) -> None:
    """Create and remove a file in ``folder``, or raise UsageError naming ``path``.

    ``os.access`` says yes to root everywhere, also in /proc or on a read-only mount:
    only creating a file there shows that the output can be written after the run."""
    try:
        fd, probe = tempfile.mkstemp(prefix=".launchprof-probe-", dir=folder)
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None
    os.close(fd)
    os.unlink(probe)


def _is_regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def write_output(path: Path, data: str | bytes) -> None:
    """Write a report to ``path``: through symlinks, in place for non-regular files,
    atomically replaced for regular ones. Text is UTF-8."""
    path = Path(path)
    try:
        mode = os.stat(path).st_mode  # follows symlinks
    except FileNotFoundError:
        mode = None
    if mode is not None and not stat.S_ISREG(mode):
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(21, "Is a directory", str(path))
        with open(path, "wb") as fh:  # FIFO, pty, character device, /dev/stdout
            fh.write(data if isinstance(data, bytes) else data.encode("utf-8"))
        return
    _replace_regular(Path(os.path.realpath(path)), data, None if mode is None else stat.S_IMODE(mode))




def _replace_regular(path: Path, data: str | bytes, keep_mode: int | None) -> None:
    """Write to a temporary file beside ``path``, then rename: readers never see half a file."""
    mode = "wb" if isinstance(data, bytes) else "w"
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent or ".")
    try:
        with os.fdopen(fd, mode, **({} if mode == "wb" else {"encoding": "utf-8"})) as fh:
            fh.write(data)
        os.chmod(tmp, 0o644 if keep_mode is None else keep_mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


# --- streams --------------------------------------------------------------------------------


def stream_is_utf8(stream: object) -> bool:
    """Whether ``stream`` can take any Unicode text (its encoding is a UTF codec)."""
    encoding = getattr(stream, "encoding", None) or "utf-8"
    try:
        return codecs.lookup(encoding).name.startswith("utf")
    except LookupError:
        return False


def for_stream(fmt: str, text: str, utf8: bool) -> str:
    """``text`` of format ``fmt`` made safe for a stream; unchanged when the stream is UTF-8.

    Data formats keep their data exactly: JSON and SARIF escape non-ASCII as ``\\uXXXX``,
    XML and HTML as character references. Text and Markdown spell symbols in ASCII.
    """
    if utf8 or text.isascii():
        return text
    if fmt in ("json", "sarif"):
        return json.dumps(json.loads(text), indent=2, ensure_ascii=True) + "\n"
    if fmt in ("junit", "html"):
        return text.encode("ascii", "xmlcharrefreplace").decode("ascii")
    from launchprof.render.format import to_ascii

    return to_ascii(text)


class StreamWrapper(io.TextIOBase):
    """A text stream that passes what it is given on to another, changed by ``write``:
    the base of the ASCII fallback (render.console.AsciiStream) and of TrimmedLines."""

    def __init__(self, inner: Any) -> None:
        super().__init__()
        self._inner = inner

    def write(self, text: str) -> int:
        self._inner.write(text)
        return len(text)

    def flush(self) -> None:
        self._inner.flush()

    def isatty(self) -> bool:
        isatty = getattr(self._inner, "isatty", None)
        return bool(isatty and isatty())

    def fileno(self) -> int:
        return self._inner.fileno()


class TrimmedLines(StreamWrapper):
    """A text stream that drops the spaces rich pads table cells and panels with at the end
    of each line: a report piped or redirected to a file then diffs and greps cleanly.
    A terminal gets the stream itself (see ``commands.emit.stream_console``)."""

    def __init__(self, inner: Any) -> None:
        super().__init__(inner)
        self._tail = ""

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self._inner, "encoding", None) or "utf-8"

    def write(self, text: str) -> int:
        lines = (self._tail + text).split("\n")
        self._tail = lines.pop()
        if lines:
            self._inner.write("".join(line.rstrip(" ") + "\n" for line in lines))
        return len(text)

    def flush(self) -> None:
        if self._tail:  # a line without its newline yet: written as it is
            self._inner.write(self._tail)
            self._tail = ""
        self._inner.flush()
