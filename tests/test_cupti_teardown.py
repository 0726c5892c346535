"""CUPTI teardown: the plan's profiler must not slow the bursts timed after it."""

from __future__ import annotations

import os

from launchprof.worker.cupti import TEARDOWN_CUPTI, cuda_version, tear_down_after_profiling


def test_teardown_is_asked_for_when_the_user_did_not_choose(monkeypatch):
    monkeypatch.delenv(TEARDOWN_CUPTI, raising=False)
    assert tear_down_after_profiling("13.0") is None
    assert os.environ[TEARDOWN_CUPTI] == "1"


def test_the_users_own_choice_is_kept_and_a_zero_is_noted(monkeypatch):
    monkeypatch.setenv(TEARDOWN_CUPTI, "1")
    assert tear_down_after_profiling("13.0") is None
    monkeypatch.setenv(TEARDOWN_CUPTI, "0")  # the user's, or torch inductor's with cudagraphs
    note = tear_down_after_profiling("13.0")
    assert os.environ[TEARDOWN_CUPTI] == "0"
    assert note is not None and "TEARDOWN_CUPTI=0" in note and "read high" in note


def test_before_cuda_12_6_teardown_stays_off_and_the_run_says_why(monkeypatch):
    monkeypatch.delenv(TEARDOWN_CUPTI, raising=False)
    note = tear_down_after_profiling("12.4")
    assert TEARDOWN_CUPTI not in os.environ
    assert note is not None and "12.4" in note and "read high" in note
    assert tear_down_after_profiling("12.6") is None and os.environ[TEARDOWN_CUPTI] == "1"


def test_cuda_versions_parse():
    assert cuda_version("12.10") == (12, 10) and cuda_version("13.0") == (13, 0)
    assert cuda_version(None) is None and cuda_version("x") is None
