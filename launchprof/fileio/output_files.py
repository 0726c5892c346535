"""Where reports go: pairing ``-f``/``-o`` options, guessing formats, and the one writer.

Files are written here and nowhere else (``commands/emit.py`` writes the streams):

- a regular file is replaced atomically (temporary file beside it, then rename), so a
  reader never sees half a report;
- a symlink is written *through*: its target is replaced, the link stays;
- anything else (a FIFO, a character device, a pty) is opened and written directly:
  renaming over it would replace the node and its reader gets nothing;
- a path that is standard output (``/dev/stdout``, ``/dev/fd/1``) is ``-o -``: written
  through the stream, never opened a second time behind it.

What is never written: one of the command's inputs, an existing Python file, a file
without its owner's write permission, the same file twice (:func:`plan_outputs`).

Streams that cannot encode UTF-8, or whose locale is not UTF-8, get the same report in
ASCII (:func:`for_stream`, :func:`stream_is_utf8`).
"""

from __future__ import annotations

import codecs
import errno
import io
import json
import os
import stat
import sys
import tempfile
from collections.abc import Mapping, Sequence
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
    """``-o -``, or a path that is standard output itself (``/dev/stdout``, ``/dev/fd/1``, the
    file the shell redirected fd 1 to): opened a second time it would be written behind the
    stream's back, beside the text report, and a reader that leaves early would be an error."""
    if str(path) == "-":
        return True
    try:
        return os.path.samestat(os.stat(path), os.fstat(1))
    except (OSError, ValueError):
        return False


def same_file(a: Path, b: Path) -> bool:
    """Whether two paths name one file: by device and inode when both exist (so a symlink, a
    hard link or another spelling counts), else by their resolved paths."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def plan_outputs(
    formats: list[str], paths: list[Path], allowed: tuple[str, ...] = FORMATS, inputs: Sequence[Path] = ()
) -> list[Output]:
    """Pair the i-th ``-f`` with the i-th ``-o``; a path without ``-f`` has its format guessed.

    A ``-f`` that contradicts its path's extension (``-f md -o report.json``) is refused
    rather than writing Markdown into a .json file. Formats beyond the last path, and a
    path that is standard output, go there (at most one may). A path that is one of the
    command's ``inputs`` (the run file, the script), or named twice, is refused. Checked up
    front so that a typo fails in a second, not after a long measurement.
    """
    for given in formats:
        fmt = ALIASES.get(given, given)
        if fmt not in allowed:
            known = f" ({given} is {fmt}, which this command does not write)" if fmt != given and fmt in FORMATS else ""
            raise UsageError(f"unknown format {given!r}{known}: choose from {', '.join(allowed)}")
    formats = [ALIASES.get(fmt, fmt) for fmt in formats]
    outputs: list[Output] = []
    for i, path in enumerate(paths):
        if is_stdout(path):
            if i >= len(formats):
                raise UsageError(f"-o {path} (standard output) needs its format: give it a -f (the i-th -f pairs with the i-th -o)")
            outputs.append(Output(formats[i], None))
            continue
        # Refusals first: `-o run.lprun` is refused as the input it is, not as a format to guess.
        refuse_overwriting(path, inputs, [o.path for o in outputs if o.path is not None])
        outputs.append(Output(file_format(path, formats[i] if i < len(formats) else None, allowed), path))
    extra = formats[len(paths) :]
    to_stdout = len(extra) + sum(1 for o in outputs if o.path is None)
    if to_stdout > 1:
        raise UsageError(f"{to_stdout} outputs to standard output (-o - or -f without -o); only one can go there: add -o PATH")
    outputs.extend(Output(fmt, None) for fmt in extra)
    return outputs


def file_format(path: Path, given: str | None, allowed: tuple[str, ...]) -> str:
    """The format of the file output ``path``: ``given`` (its ``-f``) or its extension's."""
    refuse_folder(path)  # before its format is guessed: a folder has no extension to guess from
    fmt = given or guess_format(path)
    named = known_format(path)
    # `-f json -o x.sarif.json` is a JSON report in a file named like SARIF's JSON: allowed.
    # `-f json -o x.sarif` would feed a non-SARIF file to code scanning: refused.
    json_named_sarif = named == "sarif" and fmt == "json" and path.name.lower().endswith(".sarif.json")
    if named is not None and fmt != named and not json_named_sarif:
        raise UsageError(f"-f {fmt} does not match -o {path} (a {named} file): give -f {named}, or drop -f to infer each file's format")
    if fmt not in allowed:
        raise UsageError(f"format {fmt!r} (from {path}) is not available here: choose from {', '.join(allowed)}")
    return fmt


def refuse_overwriting(path: Path, inputs: Sequence[Path], earlier: Sequence[Path], flag: str = "-o") -> None:
    """Refuse, with one line, an output that would destroy a file the user needs: one of the
    command's ``inputs`` (a run file holds a GPU run that cannot be redone on this machine),
    or one already written by an ``earlier`` output; then prove it writable."""
    for inp in inputs:
        if same_file(path, inp):
            raise UsageError(f"{flag} {path} is the input {inp}: launchprof never writes over its input; choose another output file")
    for other in earlier:
        if same_file(path, other):
            raise UsageError(f"{flag} {path} names the same file as -o {other}: give each output its own file")
    check_writable(path)


def check_writable(path: Path) -> None:
    """Fail now, with one line, if ``path`` cannot or must not be written later."""
    refuse_folder(path)
    if os.path.exists(path) and not _is_regular(path):  # False, not a crash, in a folder we may not look into
        if not os.access(path, os.W_OK):
            raise UsageError(f"output path {path} is not writable")
        return  # a FIFO, pty or device is written in place: its folder need not be writable
    if not os.path.exists(path) and _names_python(path):
        raise UsageError(f"output path {path} is named as Python source: launchprof never writes a report as code; choose another name")
    if _is_regular(path):
        refuse_replacing(path)
    path = Path(os.path.realpath(path))  # a symlink is written through, beside its target
    parent = path.parent if str(path.parent) else Path(".")
    if not os.path.isdir(parent):
        raise UsageError(f"output folder {parent} does not exist")
    probe_folder(parent, path)


def refuse_replacing(path: Path) -> None:
    """An existing file that no report replaces: Python source (``-o script.py`` was a typo
    for ``script.json``, and the code would be gone), and a file whose owner may not write
    it. The mode bits decide, not ``os.access``: root may write anything, and the atomic
    rename would replace a read-only file that the shell's ``>`` refuses."""
    from launchprof.fileio.input_files import is_python_script

    real = Path(os.path.realpath(path))  # a symlink is written through: its target is what goes
    if _names_python(path) or is_python_script(real):  # a .py/.pyw name, or a python shebang
        raise UsageError(f"output path {path} is an existing Python file: launchprof never writes a report over code; choose another file")
    mode = os.stat(path).st_mode
    if not mode & stat.S_IWUSR:
        raise UsageError(f"output path {path} is not writable (read-only, mode {stat.S_IMODE(mode):04o}): chmod u+w it or choose another file")


def _names_python(path: Path) -> bool:
    """Named as lint names Python source (``.py``, ``.pyw``)."""
    from launchprof.fileio.input_files import SOURCE_SUFFIXES

    return path.name.lower().endswith(SOURCE_SUFFIXES)


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
    if mode is not None and stat.S_ISREG(mode) and not mode & stat.S_IWUSR:
        raise PermissionError(errno.EACCES, "Permission denied (a read-only file)", str(path))  # see refuse_replacing
    if mode is not None and not stat.S_ISREG(mode):
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(21, "Is a directory", str(path))
        with open(path, "wb") as fh:  # FIFO, pty, character device
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
    """Whether ``stream`` can take any Unicode text and the terminal show it: its encoding is
    a UTF codec, and the user's locale does not say otherwise (:func:`locale_is_utf8`)."""
    encoding = getattr(stream, "encoding", None) or "utf-8"
    try:
        utf = codecs.lookup(encoding).name.startswith("utf")
    except LookupError:
        return False
    return utf and locale_is_utf8() is not False


# What Python sets LC_CTYPE to when it coerces a C locale (PEP 538); the stream then says UTF-8.
_COERCED = frozenset({"C.UTF-8", "C.utf8", "UTF-8"})


def locale_is_utf8() -> bool | None:
    """What the user's locale says the terminal shows: False for ``C``, ``POSIX`` or a named
    encoding that is not UTF-8, True for UTF-8, None when it says nothing (no variable set,
    or no encoding named). The first set of ``LC_ALL``, ``LC_CTYPE``, ``LANG`` decides, as in
    setlocale. Python coerces a C locale to UTF-8 for its own streams (PEP 538/540), so
    under ``LANG=C`` the stream's encoding says UTF-8 while the terminal shows ASCII: the
    variables are read as the user set them (:func:`_user_environ`)."""
    environ = _user_environ()
    for name in ("LC_ALL", "LC_CTYPE", "LANG"):
        value = environ.get(name)
        if not value:
            continue
        if value in ("C", "POSIX"):
            return False
        encoding = value.partition(".")[2].partition("@")[0]
        if not encoding:
            return None
        return encoding.lower().replace("-", "").replace("_", "") == "utf8"
    return None


def _user_environ() -> Mapping[str, str]:
    """The environment as the user set it. Coercing a C locale, Python rewrote ``LC_CTYPE``
    (to ``C.UTF-8``); the process's initial environment, which Linux keeps in
    /proc/self/environ, still has the user's value (elsewhere it is taken as unset)."""
    if not _coerced(os.environ.get("LC_CTYPE", "")):
        return os.environ
    try:
        raw = Path("/proc/self/environ").read_bytes()
    except OSError:
        return {k: v for k, v in os.environ.items() if k != "LC_CTYPE"}
    pairs = (item.partition(b"=") for item in raw.split(b"\0") if item)
    return {k.decode(errors="replace"): v.decode(errors="replace") for k, _, v in pairs}


def _coerced(lc_ctype: str) -> bool:
    """Whether Python set ``LC_CTYPE`` itself: it did when it started in a C locale, which
    also turned on UTF-8 mode without the user asking for it (PYTHONUTF8, -X utf8)."""
    asked = os.environ.get("PYTHONUTF8") or "utf8" in getattr(sys, "_xoptions", {})
    return lc_ctype in _COERCED and bool(sys.flags.utf8_mode) and not asked


# Below this many columns nothing of a report fits; a COLUMNS that says so is a mistake.
NARROWEST_COLUMNS = 20
FALLBACK_COLUMNS = 80


def terminal_width() -> int | None:
    """The width for a rich console: None lets rich read ``COLUMNS`` or the terminal, unless
    ``COLUMNS`` is under :data:`NARROWEST_COLUMNS` or not a number: rich would then print
    nothing (``COLUMNS=0``) or a letter a line, so the report is laid out 80 wide."""
    columns = os.environ.get("COLUMNS")
    if not columns:
        return None
    try:
        return None if int(columns) >= NARROWEST_COLUMNS else FALLBACK_COLUMNS
    except ValueError:
        return FALLBACK_COLUMNS


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
    from launchprof.render.words.format import to_ascii

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
