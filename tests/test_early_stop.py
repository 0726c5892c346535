"""The stop once the measurement is complete (launchprof/worker/early_stop.py), on CPU: with
fake plans, when the wrapper raises and what runs first; with two ranks simulated by threads
and a fake all-reduce, that every rank makes the same agreements and raises at the same call.
The whole worker on a script: tests/test_early_stop_worker.py."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

pytest.importorskip("torch")
from launchprof.worker import early_stop  # noqa: E402
from launchprof.worker.config import WorkerConfig, plan_size  # noqa: E402
from launchprof.worker.early_stop import EarlyStop  # noqa: E402
from launchprof.worker.event_writer import EventWriter  # noqa: E402
from launchprof.worker.plan_phases import Phase  # noqa: E402
from launchprof.worker.script import ScriptDone, ScriptStopped  # noqa: E402


class FakeRun:
    """A plan that closes after ``closes_after`` calls; its stream check is logged."""

    def __init__(self, closes_after: int, log: list[str], name: str = "run") -> None:
        self.closes_after, self.log, self.name = closes_after, log, name
        self.phase, self.busy, self.calls = Phase.WARMUP, False, 0

    def __call__(self) -> None:
        if self.phase is not Phase.DONE:
            self.calls += 1
            if self.calls >= self.closes_after:
                self.phase = Phase.DONE
        self.log.append(f"{self.name} call")

    def final_checks(self) -> None:
        self.log.append(f"{self.name} stream check")


def config(tmp_path: Path, **kw) -> WorkerConfig:
    return WorkerConfig(script="s.py", script_args=[], target="step", events_path=str(tmp_path / "e.jsonl"), trace_path="", **kw)


def script_loop(stop: EarlyStop, runs: list[FakeRun], calls: int, pick=lambda i: 0) -> int:
    """The script: ``calls`` calls, each of ``runs[pick(i)]`` through its wrapper; the calls it made."""
    made = 0
    for i in range(calls):
        stop.before_call()
        runs[pick(i)]()
        made += 1
    return made


def test_the_first_call_after_the_plan_closed_runs_the_stream_check_and_raises_once(tmp_path):
    log: list[str] = []
    run = FakeRun(7, log)
    stop = EarlyStop([run], config(tmp_path), EventWriter(str(tmp_path / "e.jsonl")))
    made = 0
    with pytest.raises(ScriptDone) as raised:
        made = script_loop(stop, [run], 100_000)
    assert isinstance(raised.value, ScriptStopped) and isinstance(raised.value, SystemExit) and raised.value.code == 0
    assert made == 0 and run.calls == 7 and stop.stopped_after == 7
    assert log[-2:] == ["run call", "run stream check"] and log.count("run stream check") == 1
    # A script that catches it goes on: its calls run the function, never raised into again.
    assert script_loop(stop, [run], 50) == 50 and log.count("run stream check") == 1


def test_run_to_end_never_stops(tmp_path):
    log: list[str] = []
    run = FakeRun(7, log)
    stop = EarlyStop([run], config(tmp_path, run_to_end=True), EventWriter(str(tmp_path / "e.jsonl")))
    assert script_loop(stop, [run], 500) == 500
    assert stop.stopped_after is None and "run stream check" not in log


def test_several_targets_stop_when_every_one_is_measured(tmp_path):
    log: list[str] = []
    runs = [FakeRun(5, log, "a"), FakeRun(30, log, "b")]
    stop = EarlyStop(runs, config(tmp_path), EventWriter(str(tmp_path / "e.jsonl")))
    with pytest.raises(ScriptDone):
        script_loop(stop, runs, 1000, pick=lambda i: i % 2)  # a, b, a, b, ...: b closes at the script's call 59
    assert runs[0].phase is Phase.DONE and runs[1].phase is Phase.DONE and stop.stopped_after == 60
    assert log[-2:] == ["a stream check", "b stream check"]


def test_launchprofs_own_nested_calls_and_other_threads_are_never_stopped(tmp_path):
    log: list[str] = []
    run = FakeRun(1, log)
    run()  # closed
    stop = EarlyStop([run], config(tmp_path), EventWriter(str(tmp_path / "e.jsonl")))
    run.busy = True  # a call of the target from inside the plan's own call of the step
    stop.before_call()
    run.busy = False
    errors: list[BaseException] = []

    def other() -> None:
        try:
            stop.before_call()
        except BaseException as exc:  # a SystemExit would end the thread silently
            errors.append(exc)

    thread = threading.Thread(target=other)
    thread.start()
    thread.join()
    assert errors == [] and stop.calls == 0  # neither counted as the script's call
    with pytest.raises(ScriptDone):
        stop.before_call()
    assert stop.stopped_after == 0


# ---------------------------------------------------------------- ranks
class FakeGroup:
    """An all-reduce MAX of a flag over ``ranks`` threads: each waits for all (a barrier, as the
    real one is); a rank that agrees when another does not makes the barrier time out."""

    def __init__(self, ranks: int) -> None:
        self.flags: list[bool] = [False] * ranks
        self.barrier = threading.Barrier(ranks, timeout=10)
        self.agreements = [0] * ranks

    def agreement(self, rank: int):
        def agree(flag: bool) -> bool:
            self.flags[rank] = flag
            self.agreements[rank] += 1
            self.barrier.wait()
            result = any(self.flags)
            self.barrier.wait()  # everyone has read before the next round writes
            return result

        return lambda: agree


def run_ranks(tmp_path: Path, closes_after: list[int], calls: int, grouped: bool = True, **kw) -> tuple[list, FakeGroup]:
    """Each rank's script loop on a thread of its own (the stop's main-thread check answered
    yes); what each rank ended with: the stop's call index, or the calls made."""
    group = FakeGroup(len(closes_after))
    ended: list = [None] * len(closes_after)

    def rank(r: int) -> None:
        log: list[str] = []
        run = FakeRun(closes_after[r], log)
        stop = EarlyStop([run], config(tmp_path, ranks=len(closes_after), **kw), EventWriter(str(tmp_path / f"e{r}.jsonl")),
                         agreement=group.agreement(r), grouped=lambda: grouped)  # fmt: skip
        try:
            ended[r] = ("ran", script_loop(stop, [run], calls))
        except ScriptDone:
            ended[r] = ("stopped", stop.stopped_after, log.count("run stream check"))
        except BaseException as exc:
            ended[r] = ("failed", repr(exc))
            group.barrier.abort()

    threads = [threading.Thread(target=rank, args=(r,)) for r in range(len(closes_after))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return ended, group


@pytest.fixture
def any_thread(monkeypatch):
    monkeypatch.setattr(early_stop, "on_main_thread", lambda: True)


@pytest.mark.parametrize("closes_after", [[40, 40], [12, 47], [47, 12], [40, 41, 55]])
def test_every_rank_stops_at_the_same_call(tmp_path, any_thread, closes_after):
    """A rank whose plan closed early (a failed capture at call 12) waits; one whose plan runs
    longer keeps the others going; all raise at the first call where none still measures."""
    ended, group = run_ranks(tmp_path, closes_after, 100_000)
    first = max(max(closes_after), plan_size(config(tmp_path)))
    assert ended == [("stopped", first, 1)] * len(closes_after), ended
    assert len(set(group.agreements)) == 1  # the same agreements on every rank
    assert group.agreements[0] == first - plan_size(config(tmp_path)) + 1  # none before plan_size calls


def test_ranks_that_never_finish_measuring_run_to_their_end_in_step(tmp_path, any_thread):
    ended, group = run_ranks(tmp_path, [40, 10_000], 300)
    assert ended == [("ran", 300), ("ran", 300)] and len(set(group.agreements)) == 1


def test_ranks_without_a_process_group_run_to_their_end(tmp_path):
    """Under --nproc-per-node with no group to agree through, no rank may stop alone."""
    ended = []
    for r in range(2):
        log: list[str] = []
        run = FakeRun(5, log)
        stop = EarlyStop([run], config(tmp_path, ranks=2), EventWriter(str(tmp_path / f"e{r}.jsonl")),
                         agreement=lambda: None, grouped=lambda: False)  # fmt: skip
        ended.append(script_loop(stop, [run], 200))
    assert ended == [200, 200]


def test_ranks_with_run_to_end_make_no_agreement(tmp_path, any_thread):
    ended, group = run_ranks(tmp_path, [12, 40], 300, run_to_end=True)
    assert ended == [("ran", 300), ("ran", 300)] and group.agreements == [0, 0]


def test_a_failed_agreement_is_a_note_and_the_script_runs_on(tmp_path):
    log: list[str] = []
    run = FakeRun(3, log)
    events = EventWriter(str(tmp_path / "e.jsonl"))

    def agree(flag: bool) -> bool:
        raise RuntimeError("connection reset")

    stop = EarlyStop([run], config(tmp_path, ranks=2), events, agreement=lambda: agree, grouped=lambda: True)
    assert script_loop(stop, [run], 200) == 200
    events.close()
    text = (tmp_path / "e.jsonl").read_text()
    assert text.count('"code":"stop-not-agreed"') == 1 and "connection reset" in text


def test_calls_after_a_caught_stop_are_counted(tmp_path):
    """A script that catches the stop and ends there (torch's @record returns on SystemExit(0))
    was stopped; one that goes on calling was not: the worker tells them apart by this count."""
    log: list[str] = []
    run = FakeRun(5, log)
    stop = EarlyStop([run], config(tmp_path), EventWriter(str(tmp_path / "e.jsonl")))
    with pytest.raises(ScriptDone):
        script_loop(stop, [run], 100)
    assert stop.stopped_after == 5 and stop.calls_after_stop == 0
    script_loop(stop, [run], 3)
    assert stop.calls_after_stop == 3


def test_a_forked_child_is_never_stopped(tmp_path, monkeypatch):
    """A fork-started worker (multiprocessing.Pool) inherits the stop; raising there would hang
    the parent's pool."""
    log: list[str] = []
    run = FakeRun(2, log)
    stop = EarlyStop([run], config(tmp_path), EventWriter(str(tmp_path / "e.jsonl")))
    monkeypatch.setattr(early_stop.os, "getpid", lambda: stop.pid + 1)
    assert script_loop(stop, [run], 50) == 50 and stop.stopped_after is None

