"""Hazard rules: each is ``rule(evidence) -> list[Hazard]`` (pyinstrument's processors).

Rules read the worker's observations (launchprof.evidence.Evidence) and never touch a
GPU, so each one is tested on CPU against events recorded on a GPU. They are loaded
on first use (``find_hazards``, ``RULES``), not with the package: ``lint`` needs only
``hazards.kinds`` and ``hazards.identity``, and loading every runtime rule with them cost
each lint run about a twentieth of its instructions.
"""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    if name in ("find_hazards", "RULES", "Rule"):
        from launchprof.hazards import rules

        return getattr(rules, name)
    raise AttributeError(f"module 'launchprof.hazards' has no attribute {name!r}")
