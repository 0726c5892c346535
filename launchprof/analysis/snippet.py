"""The capture code for a ``graphs-help`` target, ready to paste.

Written from the recorded arguments of the target's first call: static inputs with those
shapes and dtypes, a side-stream warm-up, ``torch.cuda.graph`` capture and a ``run(*args)``
that copies in the inputs that changed, replays, and clones only the outputs. It runs in
the script's own namespace after its definitions (the target's name is looked up there),
and ``run(*args)`` returns what the target returns. Capture happens on the first ``run``,
so the warm-up sees the caller's real data (valid indices, no NaN from empty memory).
"""

from __future__ import annotations

import re
from typing import Any

from launchprof.events.lifecycle_events import TargetEvent
from launchprof.events.observation_events import ArgLeaf, CallEvent

_SEGMENT = re.compile(r"\[('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|-?\d+)\]")
_TEMPLATE = '''\
# launchprof: CUDA graph of `{target}`; paste after the definitions.
import torch

_lp_static = (  # static inputs: the recorded shapes and dtypes
{static}
)
_lp_graph = None
_lp_out = None


def _lp_leaves(tree):
    """Leaves of nested tuples/lists/dicts (dicts by sorted key)."""
    if isinstance(tree, (list, tuple)):
        return [leaf for item in tree for leaf in _lp_leaves(item)]
    if isinstance(tree, dict):
        return [x for key in sorted(tree) for x in _lp_leaves(tree[key])]
    return [tree]


def _lp_clone(tree):
    """Clones: the next replay overwrites the graph's own outputs."""
    if isinstance(tree, torch.Tensor):
        return tree.clone()
    if isinstance(tree, (list, tuple)):
        return type(tree)(_lp_clone(item) for item in tree)
    if isinstance(tree, dict):
        return {{key: _lp_clone(value) for key, value in tree.items()}}
    return tree


def run(*args):
    """Copy in the inputs that changed, replay, clone the outputs."""
    global _lp_graph, _lp_out
    static, new = _lp_leaves(_lp_static), _lp_leaves(args)
    if len(static) != len(new):
        raise TypeError(f"run() takes {{len(static)}} leaves, not {{len(new)}}")
    for s, n in zip(static, new):
        if isinstance(s, torch.Tensor) and s is not n:
            s.copy_(n)  # {scalars}
    if _lp_graph is None:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        # warm-up on a side stream: lazy inits stay out of the graph
        with torch.cuda.stream(side):
            for _ in range(3):
                {call}
        torch.cuda.current_stream().wait_stream(side)
        _lp_graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(_lp_graph):
            _lp_out = {call}
    _lp_graph.replay()
    return _lp_clone(_lp_out)
'''


def _parse_path(path: str) -> tuple[str, list[Any]] | None:
    """``batch['ids']`` -> ``("batch", ["ids"])``; ``xs[2]`` -> ``("xs", [2])``; None for attributes."""
    m = re.match(r"[A-Za-z_]\w*", path)
    if m is None:
        return None
    rest, keys = path[m.end():], []
    while rest:
        seg = _SEGMENT.match(rest)
        if seg is None:
            return None  # a dataclass attribute or an unknown form
        text = seg.group(1)
        keys.append(int(text) if text.lstrip("-").isdigit() else text[1:-1])
        rest = rest[seg.end():]
    return m.group(0), keys


def _leaf_code(leaf: ArgLeaf) -> str:
    if leaf.kind == "tensor":
        shape = tuple(leaf.shape or ())
        device = str(leaf.device or "cuda").replace("cuda:0", "cuda")
        return f"torch.empty({shape!r}, dtype=torch.{leaf.dtype if leaf.dtype is not None else 'float32'}, device={device!r})"
    return repr(leaf.value)


def _render(node: Any, depth: int = 1) -> str:
    """A nested argument as Python, one leaf per line, so pasted lines stay short."""
    if isinstance(node, str):
        return node
    pad, inner = "    " * depth, "    " * (depth + 1)
    if all(isinstance(k, int) for k in node):
        items = [f"{inner}{_render(node[k], depth + 1)}," for k in sorted(node)]
        return "[\n" + "\n".join(items) + f"\n{pad}]"
    items = [f"{inner}{k!r}: {_render(v, depth + 1)}," for k, v in node.items()]
    return "{\n" + "\n".join(items) + f"\n{pad}}}"


def static_arguments(leaves: list[ArgLeaf]) -> list[str] | None:
    """One Python expression per top-level argument, in call order; None when a path cannot be rebuilt."""
    tops: dict[str, Any] = {}
    for leaf in leaves:
        parsed = _parse_path(str(leaf.path if leaf.path is not None else ""))
        if parsed is None or leaf.kind not in ("tensor", "scalar"):
            return None
        name, keys = parsed
        if not keys:
            tops[name] = _leaf_code(leaf)
            continue
        node = tops.setdefault(name, {})
        for key in keys[:-1]:
            node = node.setdefault(key, {})
        node[keys[-1]] = _leaf_code(leaf)
    return [_render(v) for v in tops.values()]


def target_expression(name: str | None, qualname: str | None) -> str | None:
    """How the script's namespace reaches the target: ``step``, ``model.forward``, ``mod.fn``."""
    if not name:
        return None
    if name.startswith("@launchprof.target"):
        return qualname if qualname and "<" not in qualname and "." not in qualname else None
    if ":" in name:
        module, _, attr = name.partition(":")
        return f"__import__({module!r}, fromlist=['_']).{attr}"
    return name


def capture_snippet(target: TargetEvent | None, calls: list[CallEvent]) -> str | None:
    """The snippet for the target of a run, or None when its arguments cannot be rebuilt."""
    expr = target_expression(target.name, target.qualname) if target is not None else None
    if expr is None or not calls:
        return None
    leaves = list(calls[0].args)
    args = static_arguments(leaves)
    if args is None:
        return None
    static = "\n".join(f"    {a}," for a in args)
    scalars = [str(leaf.path) for leaf in leaves if leaf.kind == "scalar"]
    note = f"Python numbers ({', '.join(scalars)}) stay as captured" if scalars else "only tensors are copied in"
    return _TEMPLATE.format(target=expr, static=static, call=f"{expr}(*_lp_static)", scalars=note)
