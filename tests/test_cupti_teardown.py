"""CUPTI teardown: the plan's profiler must not slow the bursts timed after it."""

from __future__ import annotations

import os

from launchprof.worker.cupti import TEARDOWN_CUPTI, tear_down_after_profiling


def test_teardown_is_asked_for_when_the_user_did_not_choose(monkeypatch):
    monkeypatch.delenv(TEARDOWN_CUPTI, raising=False)
    assert tear_down_after_profiling() is True
    assert os.environ[TEARDOWN_CUPTI] == "1"


def test_the_users_own_choice_is_kept(monkeypatch):
    monkeypatch.setenv(TEARDOWN_CUPTI, "0")
    assert tear_down_after_profiling() is False
    assert os.environ[TEARDOWN_CUPTI] == "0"
