"""A damaged run file is one line naming the file and the part that is wrong (exit 2)."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from launchprof.errors import UsageError
from launchprof.run import load_run
from tests.recorded import RUNS

SOURCE = RUNS / "side_effects.lprun"


def damaged(tmp_path: Path, **replace: bytes) -> Path:
    """A copy of a recorded run with some members replaced."""
    out = tmp_path / "damaged.lprun"
    with zipfile.ZipFile(SOURCE) as src, zipfile.ZipFile(out, "w") as dst:
        for name in src.namelist():
            dst.writestr(name, replace.get(name.replace(".", "_"), src.read(name)))
    return out


def test_the_recorded_run_itself_loads():
    with zipfile.ZipFile(SOURCE) as zf:
        assert "profile.json" in zf.namelist(), "the recorded run should carry a profile for these tests"
    assert load_run(SOURCE).profile is not None


def test_a_carried_profile_with_wrong_fields_is_named(tmp_path):
    bad = json.dumps({"schema_version": 1, "machine": "not a machine", "coefficients": 3}).encode()
    with pytest.raises(UsageError, match=r"damaged\.lprun: the device profile the run carries \(profile\.json\) is malformed"):
        load_run(damaged(tmp_path, profile_json=bad))


@pytest.mark.parametrize("bad", [b"[1, 2]", b"42", b'"profile"'])
def test_a_carried_profile_that_is_not_an_object_is_malformed_not_a_python_error(tmp_path, bad):
    with pytest.raises(UsageError) as caught:
        load_run(damaged(tmp_path, profile_json=bad))
    assert str(caught.value) == (
        f"{tmp_path / 'damaged.lprun'}: the device profile the run carries (profile.json) is malformed: "
        "not a launchprof device profile (top level is not an object)"
    )


def test_garbage_in_the_profile_is_blamed_on_the_profile(tmp_path):
    with pytest.raises(UsageError, match=r"profile\.json in the run is not valid JSON"):
        load_run(damaged(tmp_path, profile_json=b"\x00garbage{"))


def test_a_run_with_only_unknown_events_is_refused_but_an_empty_log_is_a_run(tmp_path):
    """Event lines of which none is known: not a run. No event lines at all: a worker that
    stopped (timeout, Ctrl-C, killed) before its first event, which analyze still reports."""
    unknown = b'{"type": "no-such-event", "t": 1.0}\n'
    with pytest.raises(UsageError, match="holds no events this launchprof knows"):
        load_run(damaged(tmp_path, events_jsonl=unknown))
    empty = load_run(damaged(tmp_path, events_jsonl=b""))
    assert empty.events == []
    from launchprof.analysis import analyse

    assert analyse(empty).verdict  # still a report, as before this check existed


def test_header_errors_name_the_file(tmp_path):
    with pytest.raises(UsageError, match=r"damaged\.lprun: not a launchprof run \(its header is not an object\)"):
        load_run(damaged(tmp_path, header_json=b"[1, 2]"))
    newer = json.loads(zipfile.ZipFile(SOURCE).read("header.json"))
    newer["format_version"] = 999
    with pytest.raises(UsageError, match=r"damaged\.lprun: .*999"):
        load_run(damaged(tmp_path, header_json=json.dumps(newer).encode()))
