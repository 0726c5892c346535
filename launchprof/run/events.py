"""The worker's events (docs/worker-events.md), validated into their records.

The records are :mod:`launchprof.events`' dataclasses, the same the worker writes; pydantic
checks each line against its class. Tolerant as a reader of another version's log must be:
fields a record does not declare are ignored, missing optional ones take their defaults, and
an event type this launchprof does not know is skipped, never an error. A known event whose
fields have the wrong type (a ``wall_us`` that is a string) is an error:
:func:`validate_events` names it. Types not yet described by a record are checked by the
pydantic models below and kept as dicts.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError

from launchprof.events import RECORDS
from launchprof.events.base import Event as Record

_ADAPTERS: dict[str, TypeAdapter[Any]] = {name: TypeAdapter(cls) for name, cls in RECORDS.items()}


class Event(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)
    type: str
    t: float | None = None


MODELS: dict[str, type[Event]] = {
    **{name: Event for name in ("compile", "compile-start")},
}


def _checked(number: int, raw: Any) -> Record | dict[str, Any] | None:
    """One event validated: its record, a dict for a type without one, None when unknown."""
    if not isinstance(raw, dict):
        raise ValueError(f"event {number} is not an object")
    kind = str(raw.get("type"))
    adapter = _ADAPTERS.get(kind)
    model = MODELS.get(kind) if adapter is None else None
    if adapter is None and model is None:
        return None
    try:
        if adapter is not None:
            return adapter.validate_python(raw)  # type: ignore[no-any-return]
        return model.model_validate(raw).model_dump(exclude_none=False)  # type: ignore[union-attr]
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        raise ValueError(f"event {number} ({raw.get('type')}) field {where}: {err['msg']}") from None


def validate_events(events: list[Any]) -> list[Record | dict[str, Any]]:
    """Known events, checked; unknown types dropped. ValueError names the first bad one."""
    out: list[Record | dict[str, Any]] = []
    for number, raw in enumerate(events, start=1):
        checked = _checked(number, raw)
        if checked is not None:
            out.append(checked)
    return out


def known_events(events: list[Any]) -> list[dict[str, Any]]:
    """The events of known types as written (a run keeps its log as lines), each checked
    as :func:`validate_events` does; ValueError names the first bad one."""
    return [raw for number, raw in enumerate(events, start=1) if _checked(number, raw) is not None]
