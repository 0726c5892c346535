"""The worker's events (docs/worker-events.md), validated into their records.

The records are :mod:`launchprof.events`' dataclasses, the same the worker writes; pydantic
checks each line against its class. Tolerant as a reader of another version's log must be:
fields a record does not declare are ignored, missing optional ones take their defaults, and
an event type this launchprof does not know is skipped, never an error. A known event whose
fields have the wrong type (a ``wall_us`` that is a string) is an error:
:func:`validate_events` names it.
"""

from __future__ import annotations

from typing import Any

from pydantic import TypeAdapter, ValidationError

from launchprof.events import RECORDS, Event

# Built on first use: a validator costs milliseconds to build, and a run holds only some types.
_ADAPTERS: dict[str, TypeAdapter[Any]] = {}


def _adapter(kind: str) -> TypeAdapter[Any] | None:
    adapter = _ADAPTERS.get(kind)
    if adapter is None and kind in RECORDS:
        adapter = _ADAPTERS[kind] = TypeAdapter(RECORDS[kind])
    return adapter


def build_validators() -> None:
    """Build every event type's validator ahead of the first read: ``analyze`` does it in its
    import thread while the worker runs, so that reading the worker's events costs no build."""
    for kind in RECORDS:
        _adapter(kind)


def _checked(number: int, raw: Any) -> Event | None:
    """One event validated into its record; None when its type is unknown."""
    if not isinstance(raw, dict):
        raise ValueError(f"event {number} is not an object")
    adapter = _adapter(str(raw.get("type")))
    if adapter is None:
        return None
    try:
        return adapter.validate_python(raw)  # type: ignore[no-any-return]
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        raise ValueError(f"event {number} ({raw.get('type')}) field {where}: {err['msg']}") from None


def validate_events(events: list[Any]) -> list[Event]:
    """Known events, checked; unknown types dropped. ValueError names the first bad one."""
    out: list[Event] = []
    for number, raw in enumerate(events, start=1):
        checked = _checked(number, raw)
        if checked is not None:
            out.append(checked)
    return out


def known_events(events: list[Any]) -> list[dict[str, Any]]:
    """The events of known types as written (a run keeps its log as lines), each checked
    as :func:`validate_events` does; ValueError names the first bad one."""
    return [raw for number, raw in enumerate(events, start=1) if _checked(number, raw) is not None]
