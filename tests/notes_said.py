"""What a worker's note event says: the worker writes a code and params, and the sentence
is launchprof.render.words.notes_text's (the one a report shows)."""

from __future__ import annotations

from typing import Any

from launchprof.events.lifecycle_events import NoteEvent
from launchprof.run.evidence import worker_note
from launchprof.render.words.notes_text import note_text


def said(event: dict[str, Any]) -> str:
    """The sentence of a ``note`` event as its JSON line holds it."""
    return note_text(worker_note(NoteEvent(code=event.get("code"), params=event.get("params") or {}, text=event.get("text"))))
