"""Reading a captured graph through ``cuda.bindings``: node count and node types.

``torch.cuda.CUDAGraph(keep_graph=True)`` keeps the cudaGraph_t template alive, and
``raw_cuda_graph()`` hands out its handle. cuda.bindings is optional: without it the
report simply has no node count.
"""

from __future__ import annotations

from collections import Counter
from typing import Any


def graph_nodes(raw_graph: int) -> tuple[int | None, dict[str, int], str | None]:
    """(node count, {node type: count}, problem) for a raw cudaGraph_t handle."""
    try:
        from cuda.bindings import runtime as cudart
    except ImportError:
        try:
            from cuda import cudart  # type: ignore[no-redef]
        except ImportError:
            return None, {}, "cuda-bindings is not installed"
    try:
        graph = cudart.cudaGraph_t(init_value=int(raw_graph))
    except Exception:
        graph = int(raw_graph)
    try:
        err, _, count = cudart.cudaGraphGetNodes(graph, 0)
        _check(err, "cudaGraphGetNodes")
        err, nodes, count = cudart.cudaGraphGetNodes(graph, count)
        _check(err, "cudaGraphGetNodes")
        types: Counter[str] = Counter()
        for node in nodes[:count]:
            err, kind = cudart.cudaGraphNodeGetType(node)
            _check(err, "cudaGraphNodeGetType")
            types[_type_name(kind)] += 1
        return int(count), dict(types), None
    except Exception as exc:  # a different cuda-bindings signature: report, do not crash
        return None, {}, f"graph introspection failed: {exc}"


def _check(err: Any, what: str) -> None:
    if int(err) != 0:
        raise RuntimeError(f"{what} returned {err}")


def _type_name(kind: Any) -> str:
    name = getattr(kind, "name", str(kind))
    return name.removeprefix("cudaGraphNodeType").lower() or str(kind)
