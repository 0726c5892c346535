"""Host side effects in library code (issue 33, item 3): a write to an object the call made is
not one; a write to long-lived state inside a library is filed at the user's line that called
into it, with the library's line kept as detail. The library here is a package placed in a
temporary ``site-packages`` folder; probe_call runs on CPU (no sync-debug mode there)."""

from __future__ import annotations

import gc
import importlib
import sys
import textwrap
from pathlib import Path

import pytest
import torch

from launchprof.events.observation_events import ProbeEntry
from launchprof.events.record import event_dict
from launchprof.hazards.common import hazard
from launchprof.model.hazard_codes import HazardCode
from launchprof.run.event_log import validate_events
from launchprof.worker.frames import Site, is_project, is_runtime, placed_site
from launchprof.worker.probe import probe_call
from launchprof.worker.probe_objects import CallObjects

LIBRARY = '''
COUNTER = 0


class Cache:
    def __init__(self):
        self.length = 0
        self.items = []

    def update(self, x):
        self.length += 1
        self.items.append(x)
        return x


class Runner:
    def __init__(self):
        self.calls = 0
        self.compiling = False

    def run(self, model, x):
        cache = Cache()
        cache.update(x)
        if self.compiling:
            self.calls = -1
        return model(x), cache


def run_counting(model, x):
    global COUNTER
    COUNTER += 1
    model.seen = COUNTER
    return model(x)
'''


@pytest.fixture
def lib(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    folder = tmp_path / "site-packages" / "lp_fakelib"
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text(textwrap.dedent(LIBRARY), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path / "site-packages"))
    module = importlib.import_module("lp_fakelib")
    yield module
    sys.modules.pop("lp_fakelib", None)


def _line_of(module: object, text: str) -> int:
    source = Path(module.__file__).read_text(encoding="utf-8").splitlines()
    return next(i for i, line in enumerate(source, 1) if line.strip() == text)


def _here(text: str) -> int:
    return _line_of(sys.modules[__name__], text)


def _probe(step, *args):
    step(*args)  # the probe call is never a script's first
    return probe_call(step, args, {})[1]


class Counter:
    def __init__(self) -> None:
        self.count = 0
        self.verbose = False

    def tick(self) -> None:
        self.count += 1
        if self.verbose:
            self.noted = True


def test_a_cache_the_library_makes_per_call_is_no_side_effect(lib) -> None:
    model, runner = torch.nn.Linear(4, 4), lib.Runner()

    def step(x):
        out, _ = runner.run(model, x)
        return out

    found = _probe(step, torch.randn(2, 4))
    assert found.effects == [] and found.writes == [] and found.containers == []
    assert runner.calls == 0  # the branch that would write the long-lived runner never ran


def test_a_library_branch_that_runs_on_long_lived_state_is_reported(lib) -> None:
    model, runner = torch.nn.Linear(4, 4), lib.Runner()
    runner.compiling = True

    def step(x):
        out, _ = runner.run(model, x)  # the runner's line
        return out

    found = _probe(step, torch.randn(2, 4))
    [effect] = found.effects
    assert effect["what"] == "write to `self.calls` (a Python value, not a device tensor)"
    assert (effect["file"], effect["line"]) == (__file__, _here("out, _ = runner.run(model, x)  # the runner's line"))
    assert effect["library_site"].line == _line_of(lib, "self.calls = -1")
    assert found.writes == [(runner, "calls")]


def test_long_lived_writes_in_a_library_are_filed_at_the_users_line(lib) -> None:
    model = torch.nn.Linear(4, 4)

    def step(x):
        return lib.run_counting(model, x)

    found = _probe(step, torch.randn(2, 4))
    line = _here("return lib.run_counting(model, x)")
    by_what = {e["what"]: e for e in found.effects}
    assert set(by_what) == {"write to outside variable `COUNTER`", "write to `model.seen` (a Python value, not a device tensor)"}
    for e in by_what.values():
        assert (e["file"], e["line"], e["function"]) == (__file__, line, "step")
        assert e["library_site"].file == lib.__file__ and e["library_site"].function == "run_counting"
    assert by_what["write to outside variable `COUNTER`"]["library_site"].line == _line_of(lib, "COUNTER += 1")
    assert by_what["write to outside variable `COUNTER`"]["library_site"].code == "COUNTER += 1"
    assert by_what["write to `model.seen` (a Python value, not a device tensor)"]["library_site"].line == _line_of(lib, "model.seen = COUNTER")
    assert {(id(o), k) for o, k in found.writes} == {(id(model), "seen"), (id(vars(lib)), "COUNTER")}


def test_the_users_own_write_is_reported_at_its_line_as_before() -> None:
    counter, model = Counter(), torch.nn.Linear(4, 4)

    def step(x):
        counter.tick()
        return model(x)

    found = _probe(step, torch.randn(2, 4))
    whats = sorted((e["what"], e["line"]) for e in found.effects)
    # In the user's own code a branch counts whether it ran or not: the user reads it.
    assert whats == [
        ("write to `self.count` (a Python value, not a device tensor)", _here("self.count += 1")),
        ("write to `self.noted` (a Python value, not a device tensor)", _here("self.noted = True")),
    ]
    assert all("library_site" not in e and e["file"] == __file__ for e in found.effects)
    assert (counter, "count") in found.writes


def test_one_method_on_a_fresh_and_a_long_lived_object(lib) -> None:
    """Cache.update runs on a cache made in the call and on one kept across calls: only the
    kept one's writes count, every call's object is looked at, not only the first's."""
    model, runner, kept = torch.nn.Linear(4, 4), lib.Runner(), lib.Cache()

    def step(x):
        out, _ = runner.run(model, x)
        kept.update(out)
        return out

    found = _probe(step, torch.randn(2, 4))
    line = _here("kept.update(out)")
    assert sorted((e["what"], e["line"], e["library_site"].line) for e in found.effects) == [
        ("list.append() on state kept across calls", line, _line_of(lib, "self.items.append(x)")),
        ("write to `self.length` (a Python value, not a device tensor)", line, _line_of(lib, "self.length += 1")),
    ]
    assert found.writes == [(kept, "length")] and found.containers == [kept.items]


def test_a_library_entry_survives_the_event_log_and_reaches_the_hazard(lib) -> None:
    model = torch.nn.Linear(4, 4)

    def step(x):
        return lib.run_counting(model, x)  # logged

    event = _probe(step, torch.randn(2, 4)).event(0, max_functions=200)
    [read] = validate_events([event_dict(event)])
    entry = next(e for e in read.effects if "COUNTER" in (e.what or ""))
    assert entry.library_site is not None and entry.library_site.file == lib.__file__
    h = hazard("host-side-effect", HazardCode.HOST_SIDE_EFFECT, {"what": entry.what, "code": entry.code}, entry)
    assert (h.file, h.line) == (__file__, _here("return lib.run_counting(model, x)  # logged"))
    assert h.library_site is not None and (h.library_site.file, h.library_site.line, h.library_site.code) == (
        lib.__file__, _line_of(lib, "COUNTER += 1"), "COUNTER += 1")
    assert [f.function.rsplit(".", 1)[-1] for f in read.functions] == ["step"]  # the user's functions only
    old = ProbeEntry(file="a.py", line=3, code="x", what="print()")  # recorded before library sites
    assert hazard("host-side-effect", HazardCode.HOST_SIDE_EFFECT, {"what": "print()", "code": "x"}, old).library_site is None


def test_objects_made_during_a_call_are_told_by_identity() -> None:
    before, objects = Counter(), CallObjects()
    objects.begin()
    try:
        during, plain_dict = Counter(), {"n": 1}
        holding = {"k": during}
    finally:
        objects.end()
    assert gc.get_freeze_count() == 0
    assert objects.existed(before) is True and objects.existed(during) is False
    assert objects.existed(plain_dict) is True  # never tracked: counted as kept, the safe side
    assert objects.existed(holding) is None  # tracked now: new, or kept and tracked since; its owner decides


def test_a_process_that_froze_objects_of_its_own_still_tells_new_ones() -> None:
    """torch 2.11 with CUDA on Python 3.12 had 375 frozen objects before the probe (H200): a
    probe that refused then counted a per-call cache's writes as side effects. The freeze
    now holds anyway; the process's own frozen objects are thawed (collectable again)."""
    kept = Counter()
    gc.freeze()
    try:
        objects = CallObjects()
        objects.begin()
        made = Counter()
        objects.end()
        assert objects.existed(made) is False and objects.existed(kept) is True
        assert gc.get_freeze_count() == 0 and any(o is kept for o in gc.get_objects())
    finally:
        gc.unfreeze()


def test_frames_of_a_package_installed_beside_the_stdlib_are_not_runtime(tmp_path: Path) -> None:
    import sysconfig

    venv_package = str(Path(sysconfig.get_paths()["platstdlib"]) / "site-packages" / "somepkg" / "mod.py")
    assert not is_runtime(venv_package) and not is_project(venv_package)
    assert is_runtime(torch.__file__) and is_runtime(gc.__file__ if hasattr(gc, "__file__") else "<built-in>")
    lib_file = str(tmp_path / "site-packages" / "pkg" / "m.py")
    site = placed_site([(__file__, 10, "main"), (lib_file, 5, "inner"), (torch.__file__, 1, "op")])
    assert isinstance(site, Site) and (site.file, site.line) == (__file__, 10)
    assert site.library is not None and (site.library.file, site.library.line, site.library.function) == (lib_file, 5, "inner")
    assert "library_site" in site.as_dict()
    assert placed_site([(__file__, 10, "main"), (textwrap.__file__, 1, "dedent")]).library is None  # the stdlib's is no library
    alone = placed_site([(lib_file, 5, "inner")])
    assert (alone.file, alone.library) == (lib_file, None)


def test_a_sync_inside_torch_keeps_torch_s_frame_and_not_launchprof_s() -> None:
    """GradScaler.step reads found_inf on the host inside torch: the sync-debug warning's stack
    runs on through launchprof's dispatch mode into torch's op plumbing, which is not the
    user's call; the frame kept is the scaler's."""
    import torch.amp.grad_scaler as scaler
    import torch._ops as ops
    import launchprof.worker.probe as probe

    site = placed_site([
        (probe.__file__, 300, "probe_call"), (__file__, 20, "step"),
        (scaler.__file__, 478, "step"), (scaler.__file__, 371, "_maybe_opt_step"),
        (probe.__file__, 90, "__torch_dispatch__"), (ops.__file__, 800, "__call__"),
    ])
    assert (site.file, site.line) == (__file__, 20)
    assert (site.library.file, site.library.line, site.library.function) == (str(Path(scaler.__file__).resolve()), 371, "_maybe_opt_step")


def test_a_transformers_next_token_step_has_no_host_side_effect() -> None:
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    config = transformers.GPT2Config(n_layer=2, n_embd=64, n_head=4, vocab_size=100, n_positions=64, bos_token_id=0, eos_token_id=0)
    model = transformers.GPT2LMHeadModel(config).eval()
    ids = torch.randint(0, 100, (1, 8))

    def step(ids):
        with torch.no_grad():
            return model(ids, use_cache=True)

    found = _probe(step, ids)
    assert found.effects == [], found.effects
    assert found.writes == [] and found.containers == []


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_on_a_gpu_a_grad_scaler_sync_keeps_the_scalers_line() -> None:
    model = torch.nn.Linear(8, 8).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cuda")

    def step(x):
        loss = model(x).float().square().mean()
        scaler.scale(loss).backward()
        scaler.step(opt)  # the scaler's step
        scaler.update()
        opt.zero_grad()
        return loss

    found = _probe(step, torch.randn(4, 8, device="cuda"))
    at = [s for s in found.syncs if s["line"] == _here("scaler.step(opt)  # the scaler's step")]
    assert at and all(s["library_site"].file.endswith("torch/amp/grad_scaler.py") for s in at), found.syncs


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_on_a_gpu_the_library_sites_hold_under_sync_debug_mode(lib) -> None:
    model, runner = torch.nn.Linear(4, 4).cuda(), lib.Runner()

    def step(x):
        out, _ = runner.run(model, x)
        lib.run_counting(model, x)
        return out

    found = _probe(step, torch.randn(2, 4, device="cuda"))
    assert {e["line"] for e in found.effects} == {_here("lib.run_counting(model, x)")}
    assert {e["library_site"].line for e in found.effects} == {_line_of(lib, "COUNTER += 1"), _line_of(lib, "model.seen = COUNTER")}
    assert found.syncs == []


def test_a_package_installed_with_pip_target_is_a_library(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``pip install --target DIR`` makes no ``site-packages`` folder: its ``*.dist-info``
    says the folder holds installed packages (on the H200 the carried wheels lie in one, and
    typing_extensions' caches read as the user's own writes before this)."""
    from launchprof.worker import frames

    target = tmp_path / "site"
    (target / "somelib").mkdir(parents=True)
    (target / "somelib" / "__init__.py").write_text("X = 0\n", encoding="utf-8")
    module = str(target / "somelib" / "__init__.py")
    monkeypatch.setattr(frames, "SCRIPT_ROOT", [])
    monkeypatch.syspath_prepend(str(target))
    assert frames.is_project(module)  # a plain folder on the path: the user's own code
    (target / "somelib-1.0.dist-info").mkdir()
    frames._install_dirs.cache_clear()
    assert not frames.is_project(module) and frames.is_installed(module)
    (target / "somelib-1.0.dist-info").rmdir()
    (target / "somelib.egg-info").mkdir()  # an editable install's folder in a project
    frames._install_dirs.cache_clear()
    assert frames.is_project(module)
