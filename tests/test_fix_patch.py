"""Applying a written fix to a copy of its function (worker/fix_patch.py), on CPU: the source
replaced, compiled in the module's own globals with the file's line numbers, installed where
the step looks it up (the target itself, a module, a class) and the original put back."""

from __future__ import annotations

import importlib.util
import sys
import textwrap
import types
from pathlib import Path

import pytest

from launchprof.model.fix_scope import TrialReason
from launchprof.worker.fix_patch import NotPatchable, compile_patched, find_holder, installed, patch_of, patched_source, trial_callable

SOURCE = '''\
from __future__ import annotations

import functools

SCALE = 3.0


def helper(x: Undefined):
    m = max(x, 1.0)
    return x / m


def step(x):
    y = helper(x)
    if y > 0:
        return y * 2.0
    else:
        return y - 1.0


class Model:
    def forward(self, x):
        return x + 1

    @staticmethod
    def twice(x):
        return 2 * x


class Child(Model):
    def forward(self, x):
        return super().forward(x) * SCALE


def outer():
    k = 5

    def inner(x):
        return x + k

    return inner


@functools.lru_cache(maxsize=None)
def cached(x):
    return x * 10
'''


@pytest.fixture
def user_module(tmp_path: Path):
    path = tmp_path / "user_code.py"
    path.write_text(SOURCE, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("user_code_fix_patch", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    yield module
    del sys.modules[spec.name]


def line_of(text: str) -> int:
    return next(i for i, line in enumerate(SOURCE.splitlines(), start=1) if line.strip() == text)


def test_patch_of_reindents_and_counts_the_statement():
    p = patch_of("f.py", 13, "if y > 0:\n    return y * 2.0\nelse:\n    return y - 1.0", "return torch.where(y > 0, y * 2.0, y - 1.0)", "    ")
    assert (p.first, p.last) == (13, 16)
    assert p.lines == ("    return torch.where(y > 0, y * 2.0, y - 1.0)",)
    insertion = patch_of("f.py", 7, "", "a = 1\n\nb = 2", "  ")
    assert (insertion.first, insertion.last) == (7, 6)
    assert insertion.lines == ("  a = 1", "", "  b = 2")


def test_a_module_function_is_patched_installed_and_put_back(user_module):
    line = line_of("m = max(x, 1.0)")
    patch = patch_of(user_module.__file__, line, "m = max(x, 1.0)", "m = max(x, 4.0)", "    ")
    holder = find_holder(patch, user_module.step, lambda fn: True)
    assert holder.fn is user_module.helper and holder.owner is user_module
    new = compile_patched(holder, patch)
    assert new.__code__.co_firstlineno == line_of("def helper(x: Undefined):")  # the file's own line numbers; the annotation stays a string (__future__)
    assert new.__globals__ is user_module.__dict__
    original = user_module.helper
    call = trial_callable(holder, new, user_module.step)
    assert call is user_module.step  # the target runs unchanged; its callee is the copy
    with installed(holder, new):
        assert user_module.helper is new
        assert call(8.0) == pytest.approx(2 * 8.0 / 8.0)
        assert call(2.0) == pytest.approx(2 * 2.0 / 4.0)
    assert user_module.helper is original
    assert user_module.step(2.0) == pytest.approx(2.0 * 2.0 / 2.0)


def test_a_function_imported_elsewhere_is_replaced_there_too(user_module):
    other = types.ModuleType("other_user_module")
    other.helper = user_module.helper
    sys.modules[other.__name__] = other
    try:
        line = line_of("m = max(x, 1.0)")
        patch = patch_of(user_module.__file__, line, "m = max(x, 1.0)", "m = 100.0", "    ")
        holder = find_holder(patch, user_module.step, lambda fn: True)
        new = compile_patched(holder, patch)
        with installed(holder, new):
            assert other.helper is new
        assert other.helper is user_module.helper
    finally:
        del sys.modules[other.__name__]


def test_the_target_itself_is_called_as_the_patched_copy(user_module):
    first = line_of("if y > 0:")
    before = "if y > 0:\n    return y * 2.0\nelse:\n    return y - 1.0"
    patch = patch_of(user_module.__file__, first, before, "return y * 2.0 if y > 0 else y - 7.0", "    ")
    holder = find_holder(patch, user_module.step, lambda fn: True)
    assert holder.owner is None and holder.fn is user_module.step
    text, start = patched_source(holder.fn, patch)
    assert start == line_of("def step(x):")
    assert "y - 7.0" in text and "else:" not in text
    new = compile_patched(holder, patch)
    call = trial_callable(holder, new, user_module.step)
    assert call is new
    assert call(-4.0) == pytest.approx(-4.0 - 7.0)  # helper(-4) = -4 / max(-4, 1)
    assert user_module.step(-4.0) == pytest.approx(-5.0)  # the original is untouched


def test_a_method_is_installed_on_its_class_and_put_back(user_module):
    line = line_of("return x + 1")
    patch = patch_of(user_module.__file__, line, "return x + 1", "return x + 100", "        ")
    model = user_module.Model()
    holder = find_holder(patch, user_module.step, lambda fn: True)
    assert holder.owner is user_module.Model and holder.name == "forward"
    new = compile_patched(holder, patch)
    with installed(holder, new):
        assert model.forward(1) == 101
    assert model.forward(1) == 2
    # A bound-method target whose own line is patched is called bound to the same instance.
    target_holder = find_holder(patch, model.forward, lambda fn: True)
    assert target_holder.owner is None
    assert trial_callable(target_holder, compile_patched(target_holder, patch), model.forward)(1) == 101


def test_a_staticmethod_stays_one(user_module):
    line = line_of("return 2 * x")
    patch = patch_of(user_module.__file__, line, "return 2 * x", "return 3 * x", "        ")
    holder = find_holder(patch, user_module.step, lambda fn: True)
    new = compile_patched(holder, patch)
    assert isinstance(new, staticmethod)
    with installed(holder, new):
        assert user_module.Model.twice(2) == 6
    assert user_module.Model.twice(2) == 4


def test_decorators_are_applied_again(user_module):
    line = line_of("return x * 10")
    patch = patch_of(user_module.__file__, line, "return x * 10", "return x * 20", "    ")
    holder = find_holder(patch, user_module.step, lambda fn: True)
    new = compile_patched(holder, patch)
    assert hasattr(new, "cache_info")  # the lru_cache of the copy, not the original's
    with installed(holder, new):
        assert user_module.cached(2) == 40
    assert user_module.cached(2) == 20


def test_a_method_calling_super_is_refused_as_a_closure(user_module):
    line = line_of("return super().forward(x) * SCALE")
    patch = patch_of(user_module.__file__, line, "return super().forward(x) * SCALE", "return super().forward(x)", "        ")
    with pytest.raises(NotPatchable) as caught:
        find_holder(patch, user_module.step, lambda fn: True)
    assert caught.value.reason is TrialReason.CLOSURE


def test_a_nested_function_is_not_found(user_module):
    line = line_of("return x + k")
    patch = patch_of(user_module.__file__, line, "return x + k", "return x - k", "        ")
    with pytest.raises(NotPatchable) as caught:
        find_holder(patch, lambda x: x, lambda fn: True)
    # ``outer`` spans the line, but the line is ``inner``'s: a closure.
    assert caught.value.reason is TrialReason.CLOSURE
    inner = user_module.outer()
    with pytest.raises(NotPatchable) as caught:
        find_holder(patch, inner, lambda fn: False)
    assert caught.value.reason is TrialReason.CLOSURE


def test_only_functions_the_step_ran_are_patched(user_module):
    line = line_of("m = max(x, 1.0)")
    patch = patch_of(user_module.__file__, line, "m = max(x, 1.0)", "m = 2.0", "    ")
    with pytest.raises(NotPatchable) as caught:
        find_holder(patch, lambda x: x, lambda fn: fn.__name__ != "helper")
    assert caught.value.reason is TrialReason.NOT_IN_A_FUNCTION


def test_a_patch_that_does_not_parse_is_not_compiled(user_module):
    line = line_of("m = max(x, 1.0)")
    patch = patch_of(user_module.__file__, line, "m = max(x, 1.0)", "m = max(x,", "    ")
    holder = find_holder(patch, user_module.step, lambda fn: True)
    with pytest.raises(NotPatchable) as caught:
        compile_patched(holder, patch)
    assert caught.value.reason is TrialReason.NOT_COMPILED


def test_an_insertion_keeps_the_anchor_line(user_module):
    line = line_of("return x / m")
    patch = patch_of(user_module.__file__, line, "", "m = m + 1.0", "    ")
    holder = find_holder(patch, user_module.step, lambda fn: True)
    text, _ = patched_source(holder.fn, patch)
    assert textwrap.dedent(text).splitlines()[1:4] == ["    m = max(x, 1.0)", "    m = m + 1.0", "    return x / m"]
