"""The JSON report: the contract of DESIGN.md, and the session file ``report``/``compare`` read."""

from __future__ import annotations

from launchprof.render.base import Renderer
from launchprof.session import Report


class JsonRenderer(Renderer):
    format = "json"
    extension = ".json"

    def render(self, report: Report) -> str:
        return report.to_json() + "\n"
