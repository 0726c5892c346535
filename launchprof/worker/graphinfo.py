"""Reading a captured graph through ``cuda.bindings``: its nodes, their types, its edges.

``torch.cuda.CUDAGraph(keep_graph=True)`` keeps the cudaGraph_t template alive, and
``raw_cuda_graph()`` hands out its handle. cuda.bindings is optional: without it the
report simply has no node count and no anatomy. Kernel names come from the driver API
(``cuGraphKernelNodeGetParams`` + ``cuFuncGetName``): the runtime's
``cudaGraphKernelNodeGetParams`` returned no parameters on an H200 (docs/architecture.md). Where the
driver cannot name a kernel, the analysis joins it to the replay trace by order.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

MAX_NODES = 20000  # a larger graph is counted, but its structure is not written out


def _runtime() -> Any:
    try:
        from cuda.bindings import runtime as cudart
    except ImportError:
        from cuda import cudart  # type: ignore[no-redef]  # older cuda-python layout
    return cudart


def graph_nodes(raw_graph: int) -> tuple[int | None, dict[str, int], str | None]:
    """(node count, {node type: count}, problem) for a raw cudaGraph_t handle."""
    anatomy, problem = graph_anatomy(raw_graph, with_edges=False)
    count, types = counts_of(anatomy)
    return count, types, problem


def counts_of(anatomy: dict[str, Any] | None) -> tuple[int | None, dict[str, int]]:
    """(node count, {node type: count}) of an anatomy, the figures the capture event keeps."""
    if anatomy is None:
        return None, {}
    types = anatomy.get("types")  # counted before a graph too large to write out lost its nodes
    return anatomy["node_count"], dict(types) if types is not None else dict(Counter(n["type"] for n in anatomy["nodes"]))


def graph_anatomy(raw_graph: int, with_edges: bool = True) -> tuple[dict[str, Any] | None, str | None]:
    """``({nodes: [{id, type, name}], edges: [[from, to]], node_count, types: {type: count}}, problem)``.

    Node ids are positions in ``cudaGraphGetNodes``' order (the order capture added them).
    A failure of one part (edges, names) leaves the others and says so in ``problem``."""
    try:
        cudart = _runtime()
    except ImportError:
        return None, "cuda-bindings is not installed"
    try:
        graph = cudart.cudaGraph_t(init_value=int(raw_graph))
    except Exception:
        graph = int(raw_graph)
    try:
        err, _, count = cudart.cudaGraphGetNodes(graph, 0)
        _check(err, "cudaGraphGetNodes")
        err, handles, count = cudart.cudaGraphGetNodes(graph, count)
        _check(err, "cudaGraphGetNodes")
        handles = list(handles[: int(count)])
        nodes = []
        for i, node in enumerate(handles):
            err, kind = cudart.cudaGraphNodeGetType(node)
            _check(err, "cudaGraphNodeGetType")
            nodes.append({"id": i, "type": _type_name(kind), "name": None})
    except Exception as exc:  # a different cuda-bindings signature: report, do not crash
        return None, f"graph introspection failed: {exc}"
    types = dict(Counter(n["type"] for n in nodes))
    out: dict[str, Any] = {"node_count": len(nodes), "nodes": nodes, "edges": [], "types": types}
    if not with_edges:
        return out, None
    if len(nodes) > MAX_NODES:
        out["nodes"] = []
        return out, f"the graph has {len(nodes)} nodes: its structure was not read (limit {MAX_NODES})"
    problems = []
    try:
        out["edges"] = _edges(cudart, graph, handles)
    except Exception as exc:
        out["edges"] = None
        problems.append(f"graph edges could not be read: {exc}")
    named = _kernel_names(handles, nodes)
    if named is not None:
        problems.append(named)
    return out, "; ".join(problems) or None


def _edges(cudart: Any, graph: Any, handles: list[Any]) -> list[list[int]]:
    """Edges as [from id, to id]. cuda-bindings 12 returns (err, from, to, n); 13 adds the
    edge data before n, so the count is always last and the endpoints second and third."""
    first = cudart.cudaGraphGetEdges(graph, 0)
    _check(first[0], "cudaGraphGetEdges")
    count = int(first[-1])
    if count == 0:
        return []
    res = cudart.cudaGraphGetEdges(graph, count)
    _check(res[0], "cudaGraphGetEdges")
    index = {int(h): i for i, h in enumerate(handles)}
    return [[index[int(a)], index[int(b)]] for a, b in zip(res[1][: int(res[-1])], res[2][: int(res[-1])], strict=True)]


def _kernel_names(handles: list[Any], nodes: list[dict[str, Any]]) -> str | None:
    """Fill ``name`` of kernel nodes through the driver API; a problem line, or None."""
    try:
        from cuda.bindings import driver
    except ImportError:
        return "kernel names need cuda.bindings.driver: kernels are matched by order"
    failed = 0
    for node, info in zip(handles, nodes, strict=True):
        if info["type"] != "kernel":
            continue
        try:
            err, params = driver.cuGraphKernelNodeGetParams(driver.CUgraphNode(init_value=int(node)))
            _check(err, "cuGraphKernelNodeGetParams")
            if int(params.func):
                err, name = driver.cuFuncGetName(params.func)
            else:  # a library kernel (CUkernel) rather than a context function
                err, name = driver.cuKernelGetName(params.kern)
            _check(err, "cuFuncGetName")
            info["name"] = name.decode() if isinstance(name, bytes) else str(name)
        except Exception:
            failed += 1
    return f"{failed} kernel node name(s) could not be read: those are matched by order" if failed else None


def _check(err: Any, what: str) -> None:
    if int(err) != 0:
        raise RuntimeError(f"{what} returned {err}")


def _type_name(kind: Any) -> str:
    name = getattr(kind, "name", str(kind))
    return name.removeprefix("cudaGraphNodeType").lower() or str(kind)
