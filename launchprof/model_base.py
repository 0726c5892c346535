"""How every report model is made, in one place: a frozen pydantic dataclass that ignores
unknown keys, so that a report written by a newer launchprof with added fields still loads
(fields are added, never renamed). launchprof.models and the feature models it names
(models_buckets, compile_report, ranks.models) all use it, so they cannot drift apart."""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict
from pydantic.dataclasses import dataclass

_CONFIG = ConfigDict(extra="ignore")


def model(cls: type) -> Any:
    """A frozen, validated dataclass that ignores unknown keys."""
    return dataclass(frozen=True, config=_CONFIG)(cls)
