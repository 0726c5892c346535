"""The JSON report: the contract of README "The report", and the session file ``report``/``compare`` read."""

from __future__ import annotations

from typing import TYPE_CHECKING

from launchprof.render.renderer import Renderer

if TYPE_CHECKING:  # annotations only
    from launchprof.model.core import Report


class JsonRenderer(Renderer):
    format = "json"
    extension = ".json"

    def render(self, report: Report) -> str:
        return report.to_json() + "\n"
