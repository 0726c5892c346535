"""Renderer registry: format name -> renderer class, imported only when used."""

from __future__ import annotations

import importlib

from launchprof.render.renderer import RenderOptions, Renderer

_REGISTRY: dict[str, str] = {
    "text": "launchprof.render.console:ConsoleRenderer",
    "json": "launchprof.render.json:JsonRenderer",
    "md": "launchprof.render.markdown:MarkdownRenderer",
    "sarif": "launchprof.render.sarif:SarifRenderer",
    "junit": "launchprof.render.junit:JUnitRenderer",
    "html": "launchprof.render.html:HtmlRenderer",
}


def renderer_module(fmt: str) -> str | None:
    """The module that renders ``fmt`` (None for no known format), for a caller that imports
    it ahead of the rendering."""
    entry = _REGISTRY.get(fmt)
    return entry.partition(":")[0] if entry else None


def renderer_for(fmt: str, options: RenderOptions | None = None) -> Renderer:
    module_name, _, class_name = _REGISTRY[fmt].partition(":")
    cls = getattr(importlib.import_module(module_name), class_name)
    return cls(options)


__all__ = ["RenderOptions", "Renderer", "renderer_for", "renderer_module"]
