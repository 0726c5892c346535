"""Installing the measurement in place of the target, wherever the script keeps it."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import torch

import launchprof.marker
from launchprof.events.lifecycle_events import TargetEvent
from launchprof.common.targets import TargetSpec
from launchprof.worker.frames import definition_of


class Hook:
    """Resolves the target and swaps in ``make(fn)``; idempotent, retried after each top-level
    statement of the script until the name exists."""

    def __init__(
        self,
        spec: TargetSpec | None,
        make: Callable[[Callable[..., Any], str], Callable[..., Any]],
        on_install: Callable[[], None] | None = None,
    ) -> None:
        self.spec = spec
        self.make = make
        self.on_install = on_install
        self.installed: TargetEvent | None = None
        self.problem: str | None = None
        self._wrappers: set[int] = set()

    # ----------------------------------------------------------------- decorator path
    def install_decorator(self) -> None:
        """With no --target, the first function marked @launchprof.target is measured."""

        def hook(fn: Callable[..., Any]) -> Callable[..., Any]:
            if self.installed is not None:
                return fn
            wrapper = self._wrap(fn, getattr(fn, "__qualname__", "target"))
            self.installed = _describe(fn, f"@launchprof.target {getattr(fn, '__qualname__', '')}".strip())
            if self.on_install is not None:
                self.on_install()
            return wrapper

        launchprof.marker._target_hook = hook

    # ----------------------------------------------------------------- named targets
    def import_module_target(self) -> None:
        """``pkg.mod:fn`` is patched before the script runs, so ``from pkg.mod import fn`` sees it."""
        assert self.spec is not None and self.spec.module is not None
        try:
            module = importlib.import_module(self.spec.module)
        except Exception as exc:
            self.problem = f"cannot import module {self.spec.module!r} for --target {self.spec.raw!r}: {type(exc).__name__}: {exc}"
            return
        self._install_in(vars(module), module)

    def try_globals(self, namespace: dict[str, Any]) -> None:
        if self.installed is not None or self.spec is None or self.spec.module is not None:
            return
        if self.spec.parts[0] not in namespace:
            return
        self._install_in(namespace, None)

    def _install_in(self, namespace: dict[str, Any], module: Any) -> None:
        assert self.spec is not None
        parts = self.spec.parts
        if parts[0] not in namespace:
            self.problem = f"unknown target {self.spec.raw!r}: {parts[0]!r} not found"
            return
        owner: Any = module
        obj: Any = namespace[parts[0]]
        for part in parts[1:]:
            owner = obj
            if not hasattr(obj, part):
                self.problem = f"unknown target {self.spec.raw!r}: {type(obj).__name__} has no attribute {part!r}"
                return
            obj = getattr(obj, part)
        if id(obj) in self._wrappers:
            return
        if isinstance(obj, torch.nn.Module):  # --target model: measure model(...) via its forward
            owner, obj, parts = obj, obj.forward, (*parts, "forward")
        if not callable(obj):
            self.problem = f"target {self.spec.raw!r} is a {type(obj).__name__}, not a function"
            return
        name = parts[-1]
        if isinstance(owner, type):
            # A class attribute: wrap the plain function so it still binds as a method.
            raw = owner.__dict__.get(name, obj)
            wrapper = self._wrap(raw, self.spec.raw)
            setattr(owner, name, wrapper)
        elif owner is None:
            wrapper = self._wrap(obj, self.spec.raw)
            namespace[name] = wrapper
        else:
            wrapper = self._wrap(obj, self.spec.raw)
            setattr(owner, name, wrapper)
        self.installed = _describe(obj, self.spec.raw)
        self.problem = None

    def _wrap(self, fn: Callable[..., Any], name: str) -> Callable[..., Any]:
        wrapper = self.make(fn, name)
        self._wrappers.add(id(wrapper))
        return wrapper


def _describe(fn: Any, name: str) -> TargetEvent:
    target = getattr(fn, "__func__", fn)
    file, line = definition_of(fn)
    return TargetEvent(name=name, qualname=getattr(target, "__qualname__", type(fn).__name__), file=file, line=line)
