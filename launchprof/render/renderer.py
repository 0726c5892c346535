"""The renderer interface: one class per format (pyinstrument's ``renderers/``).

A renderer turns a :class:`~launchprof.model.core.Report` into text. It never measures
and never analyses; everything it shows is already in the report, so a session saved
on a GPU machine renders the same on a CI runner without one.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only
    from launchprof.crossover.profile import DeviceProfile
    from launchprof.model.core import Report


@dataclass(frozen=True)
class RenderOptions:
    """Options every renderer may use; each ignores what does not apply to it."""

    project_root: Path | None = None  # hazard paths in every format are relative to it
    color: bool = False  # text: keep ANSI colour codes
    width: int = 100  # text: console width when not writing to a terminal
    device_profile: DeviceProfile | None = None  # html: crossover curve to place the workload on
    ascii: bool = False  # text: the stream cannot encode Unicode; use ASCII symbols and boxes
    snippet: bool = False  # text: show the capture snippet (--snippet); md and html always do
    explain: bool = False  # text, md: every figure, the descriptive notes and the legend of terms; html always has them
    # text: every finding, when the terminal shows only the first ones (the rest are in a file):
    # the closing counts are of all of them
    counted_hazards: list | None = None


class Renderer(ABC):
    format: str = ""
    extension: str = ""

    def __init__(self, options: RenderOptions | None = None) -> None:
        self.options = options or RenderOptions()

    @abstractmethod
    def render(self, report: Report) -> str:
        """Return the whole document."""
