"""Python state a step writes (outside variables, ``self`` attributes, containers kept
across calls), saved before the extra calls launchprof makes around capture and put back
after them: a step counter in the script advances exactly as it would without launchprof.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

_MISSING = object()


@dataclass
class HostState:
    values: list[tuple[Any, str, Any]] = field(default_factory=list)  # (dict or object, key, saved value)
    containers: list[tuple[Any, Any]] = field(default_factory=list)  # (container, shallow copy)

    @classmethod
    def save(cls, writes: list[tuple[Any, str]], containers: list[Any]) -> HostState:
        state = cls()
        for owner, key in writes:
            try:
                value = owner.get(key, _MISSING) if isinstance(owner, dict) else getattr(owner, key, _MISSING)
                state.values.append((owner, key, copy.copy(value) if value is not _MISSING else _MISSING))
            except Exception:  # an object that will not be copied: leave it as the step left it
                continue
        seen: set[int] = set()
        for c in containers:
            if id(c) not in seen and isinstance(c, (list, dict, set)):
                seen.add(id(c))
                state.containers.append((c, copy.copy(c)))
        return state

    def restore(self) -> None:
        for owner, key, value in self.values:
            if isinstance(owner, dict):
                if value is _MISSING:
                    owner.pop(key, None)
                else:
                    owner[key] = value
            elif value is _MISSING:
                if hasattr(owner, key):
                    delattr(owner, key)
            else:
                setattr(owner, key, value)
        for live, saved in self.containers:
            if isinstance(live, list):
                live[:] = saved
            else:
                live.clear()
                live.update(saved)
