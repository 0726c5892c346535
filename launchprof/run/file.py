"""The ``.lprun`` run file: one zip that holds a measurement, not its conclusions.

Layout (every name relative to the run, so the file moves between machines)::

    header.json              RunHeader: format version, launchprof version, machine, script,
                             target, argv, project root, how the worker ended
    events.jsonl             the worker's events, as written
    samples.json             the raw timed samples per kind (eager, replay, clone, in-loop)
    traces/<name>.json.gz    profiler traces, gzipped
    sources/<relative path>  the user's source files the events point at (under the root)

``analyze``, ``report`` and ``compare`` all read it back through :func:`load_run` and
re-analyse it, so a better rule applies to an old run.
"""

from __future__ import annotations

import gzip
import json
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import ValidationError

from launchprof.common.source import decoded
from launchprof.errors import UsageError
from launchprof.fileio.input_files import check_input_file, starts_like_json
from launchprof.model.records import adapter
from launchprof.run.header_records import RunHeader
from launchprof.model.core import first_error
from launchprof.run.event_log import known_events
from launchprof.run.migrate import migrate_header
from launchprof.run.store import SUFFIX  # noqa: F401 - scripts read the suffix here


@dataclass(frozen=True)
class Run:
    """A loaded run: the header, the validated events (paths mapped to relative names),
    the gzipped traces by member name and the stored sources by relative name."""

    header: RunHeader
    events: list[dict[str, Any]]
    traces: dict[str, bytes] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)
    path: Path | None = None
    # The device profile analyze predicted with (profile.json), so that `report` on a machine
    # without that GPU's cached profile still gives the same prediction.
    profile: dict[str, Any] | None = None

    def trace(self, what: str) -> dict[str, Any] | None:
        """The Chrome trace recorded as ``what`` (eager, replay, whole-script), or None."""
        member = self.header.traces.get(what)
        data = self.traces.get(member) if member else None
        if data is None:
            return None
        try:
            return json.loads(gzip.decompress(data))
        except (OSError, EOFError, ValueError) as exc:  # gzip.BadGzipFile is an OSError
            raise UsageError(f"{self.path or 'run file'}: its {what} trace ({member}) is truncated or corrupt: {exc}") from None


def raw_samples(events: list[dict[str, Any]]) -> dict[str, list[float]]:
    """Every timed wall sample per kind: the bursts and the in-loop calls, never mixed."""
    out: dict[str, list[float]] = {}
    for e in events:
        if e.get("type") == "timing" and isinstance(e.get("wall_us"), list):
            out.setdefault(str(e.get("kind")), []).extend(e["wall_us"])
        elif e.get("type") in ("eager-timing", "replay-timing") and e.get("wall_us") is not None:
            out.setdefault(f"{e['type'].split('-')[0]}-in-loop", []).append(e["wall_us"])
    return out


def source_files(events: list[dict[str, Any]], root: str, local_root: Path | None = None) -> dict[str, Path]:
    """Files under ``root`` that the events name (``file`` fields), by relative name.

    ``root`` is the project root as the events spell it; the files are read from
    ``local_root`` (default: ``root`` itself), for runs recorded on another machine."""
    prefix = root.rstrip("/") + "/"
    local = local_root or Path(root)
    found: dict[str, Path] = {}

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                if key == "file" and isinstance(item, str) and item.startswith(prefix):
                    rel = item[len(prefix) :]
                    if (local / rel).is_file():
                        found[rel] = local / rel
                else:
                    walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(events)
    return found


def write_run(
    header: RunHeader,
    events: list[dict[str, Any]],
    trace_files: dict[str, Path],
    out: Path,
    sources: dict[str, Path] | None = None,
    profile: dict[str, Any] | None = None,
) -> Path:
    """Pack one run. ``trace_files`` maps what (eager, replay) to a trace on disk (plain or
    .gz); ``sources`` maps relative names to files, by default those the events name
    under the header's project root."""
    traces: dict[str, str] = {}
    if sources is None:
        sources = source_files(events, header.project_root) if header.project_root else {}
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for what, path in sorted(trace_files.items()):
            raw = path.read_bytes()
            data = raw if path.suffix == ".gz" else gzip.compress(raw, compresslevel=6, mtime=0)
            member = f"traces/{path.name if path.suffix == '.gz' else path.name + '.gz'}"
            zf.writestr(zipfile.ZipInfo(member), data, compress_type=zipfile.ZIP_STORED)
            traces[what] = member
        for rel, path in sorted(sources.items()):
            zf.writestr(f"sources/{rel}", path.read_bytes())
        headers = adapter(RunHeader)
        header = headers.validate_python({**headers.dump_python(header), "traces": traces, "sources": sorted(sources)})
        zf.writestr("header.json", headers.dump_json(header, indent=2))
        zf.writestr("events.jsonl", "".join(json.dumps(e) + "\n" for e in events))
        zf.writestr("samples.json", json.dumps(raw_samples(events)))
        if profile is not None:
            zf.writestr("profile.json", json.dumps(profile))
    tmp.replace(out)
    return out


def load_run(path: str | Path) -> Run:
    """Read and check a run file; anything missing or malformed is a UsageError (exit 2)
    that names the file and the part of it that is wrong."""
    p = Path(path)
    check_input_file(p, "a run file (.lprun)", f"run file not found: {p}")
    try:
        with zipfile.ZipFile(p) as zf:
            names = set(zf.namelist())
            for needed in ("header.json", "events.jsonl"):
                if needed not in names:
                    raise UsageError(f"{p} is not a launchprof run: it holds no {needed}")
            header_data = _json_member(p, zf, "header.json")
            try:
                lines = zf.read("events.jsonl").decode("utf-8").splitlines()
            except UnicodeDecodeError as exc:
                raise UsageError(f"{p}: its events (events.jsonl) are not UTF-8 text ({exc.reason})") from None
            traces = {n: zf.read(n) for n in names if n.startswith("traces/")}
            sources = {n[len("sources/") :]: decoded(zf.read(n)) for n in names if n.startswith("sources/")}
            profile = _json_member(p, zf, "profile.json") if "profile.json" in names else None
            if "samples.json" in names:
                _check_samples(p, _json_member(p, zf, "samples.json"))
    except (zipfile.BadZipFile, OSError) as exc:
        if starts_like_json(p):
            raise UsageError(f"{p} holds JSON, not a launchprof run file (a zip): name a report FILE.json") from None
        raise UsageError(
            f"{p} is not a launchprof run file (not a readable zip: {exc}); a run file cut short by a full disk or an "
            "interrupted copy reads like this"
        ) from None
    try:
        header = adapter(RunHeader).validate_python(migrate_header(header_data))
    except ValidationError as exc:
        raise UsageError(f"{p}: malformed run header: {first_error(exc)}") from None
    except UsageError as exc:
        raise UsageError(f"{p}: {exc}") from None
    try:
        events = known_events([json.loads(line) for line in lines if line.strip()])
    except (ValueError, json.JSONDecodeError) as exc:
        raise UsageError(f"{p}: malformed run events: {exc}") from None
    if lines and not events:  # an empty log is a worker stopped before its first event: still a run
        raise UsageError(f"{p}: the run holds no events this launchprof knows: the file is not a launchprof run")
    _check_profile(p, profile)
    events = map_paths(events, header)
    return Run(header=header, events=events, traces=traces, sources=sources, path=p, profile=profile)


def _json_member(p: Path, zf: zipfile.ZipFile, name: str) -> Any:
    try:
        return json.loads(zf.read(name))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"{p}: {name} in the run is not valid JSON ({exc})") from None


def _check_samples(p: Path, data: Any) -> None:
    """The raw samples are a view of the events (written beside them for other tools); one
    that is not kind -> list of numbers is a damaged run, as a damaged trace is."""
    if not isinstance(data, dict) or not all(
        isinstance(k, str) and isinstance(v, list) and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v)
        for k, v in data.items()
    ):
        raise UsageError(f"{p}: samples.json in the run is not a mapping of kinds to lists of numbers")


def _check_profile(p: Path, data: Any) -> None:
    """A carried device profile that does not load is a damaged run, said as such: silently
    dropping it would leave a report without a prediction and a note blaming the cache."""
    if data is None:
        return
    from launchprof.crossover.profile import profile_from_dict

    damaged = f"{p}: the device profile the run carries (profile.json) is malformed"
    try:
        profile_from_dict(data)
    except UsageError as exc:
        raise UsageError(f"{damaged}: {exc}") from None
    except (ValueError, TypeError, KeyError, AttributeError) as exc:  # Python's own words would not help the reader
        raise UsageError(f"{damaged} ({type(exc).__name__} while reading it)") from None


def map_paths(events: list[dict[str, Any]], header: RunHeader) -> list[dict[str, Any]]:
    """Absolute paths under the recording machine's project root become relative names;
    trace paths (absolute on old runs) become the member they are stored under."""
    root = (header.project_root or "").rstrip("/")
    by_name = {PurePosixPath(m).name.removesuffix(".gz"): w for w, m in header.traces.items()}

    def fix(value: Any, key: str | None = None) -> Any:
        if isinstance(value, dict):
            return {k: fix(v, k) for k, v in value.items()}
        if isinstance(value, list):
            return [fix(v) for v in value]
        if isinstance(value, str) and root and value.startswith(root + "/"):
            return value[len(root) + 1 :]
        return value

    out = []
    for e in events:
        e = fix(e)
        if e.get("type") == "trace":
            name = PurePosixPath(str(e.get("path", ""))).name.removesuffix(".gz")
            e["path"] = header.traces.get(str(e.get("what")), "") or (header.traces.get(by_name.get(name, ""), ""))
        out.append(e)
    return out
