"""One rule picks the device profile for analyze, report, compare and the API
(analysis.load.choose_profile): given, exact cached, carried by the run, other cached."""

from __future__ import annotations

import dataclasses

import pytest

from launchprof.analysis.load import choose_profile
from launchprof.crossover import profile as prof
from launchprof.errors import UsageError
from tests.test_profile import H100, H200, cache, profile  # noqa: F401 - the shared fixtures


def test_nothing_cached_nothing_carried_is_no_profile(cache):
    assert choose_profile(H200) is None


def test_a_given_file_wins_and_a_bad_one_is_a_usage_error(cache, profile, tmp_path):
    prof.save_to_cache(profile)
    given = tmp_path / "other.json"
    given.write_text(dataclasses.replace(profile, machine=H100).to_json())
    chosen = choose_profile(H200, given)
    assert chosen.profile.machine == H100 and chosen.source.startswith("given")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(UsageError):
        choose_profile(H200, bad)


def test_the_exact_cached_profile_comes_before_the_runs_own(cache, profile):
    carried = dataclasses.replace(profile, created="1999-01-01T00:00:00+00:00").to_dict()
    assert choose_profile(H200, None, carried).source == "carried by the run file"
    prof.save_to_cache(profile)
    chosen = choose_profile(H200, None, carried)
    assert chosen.source.startswith("cached") and chosen.warnings == ()
    assert chosen.profile.created == profile.created


def test_another_gpus_cached_profile_is_the_last_resort_and_says_so(cache, profile):
    prof.save_to_cache(dataclasses.replace(profile, machine=H100))
    carried = profile.to_dict()
    assert choose_profile(H200, None, carried).source == "carried by the run file"
    chosen = choose_profile(H200)
    assert chosen.profile.machine == H100 and chosen.warnings and "NVIDIA H100" in chosen.warnings[0]
