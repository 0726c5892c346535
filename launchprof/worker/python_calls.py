"""The profiler's Python calls read from its in-memory result tree, not from a Chrome export.

The candidate ranking needs every Python call (name, start, end, nesting) beside the calls
that launch kernels. ``export_chrome_trace`` plus ``json.load`` gives both, at the cost of
writing and parsing every op, flow and metadata row too. ``kineto_results.events()`` is no
substitute on torch 2.11: ``finalizeTrace`` erases the Python calls from that
list ("``kinetoEvents`` does not include Python events", torch/csrc/autograd/
profiler_kineto.cpp), and its events have no ``is_python_function``. The result tree,
``kineto_results.experimental_event_tree()``, keeps them on 2.11 and later: one ``PyCall``
/ ``PyCCall`` node per call, with its code location and the export's ns start and end,
under its caller. These become the export's ``python_function`` rows; the launch and kernel
rows are the timeline's (:func:`launchprof.worker.profiler_tables.read_timeline`), read
once for the table and this. On a CPU profile of 20k calls running two ops each, this and
the ranking's sweep took a median 0.6 s (torch 2.13) and 1.0 s (2.11) on a 2-core machine,
where the export, its parse and the sweep took 1.4 s and 1.8 s; with few ops, about even.

Threads: both sides carry the profiler's own thread id (``start_tid``), not the system id
the export shows. A Python call has its thread's record-queue id, as an op does; a runtime
call linked to an op inherits the op's, an unlinked one the id of the thread that stops the
profiler (``setKinetoTID``, torch/csrc/profiler/collection.cpp). So a launch sorts onto the
thread of the Python calls around it, as in the export.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from launchprof.worker.profiler_tables import Timeline

# More Python calls than this are not ranked: their rows would take about 600 MB.
MAX_PYTHON_CALLS = 1_000_000


class TooManyCalls(ValueError):
    """The script made more Python calls than the ranking reads."""


def python_call_rows(
    roots: list[Any], base_ns: int, is_user_file: Callable[[str], str | None], limit: int = MAX_PYTHON_CALLS
) -> list[dict[str, Any]]:
    """``python_function`` rows, as the Chrome export writes them, for the Python calls in
    the profiler's event tree (``ts`` in µs after ``base_ns``). ``Python id`` and ``Python
    parent id`` follow the tree, so :func:`launchprof.worker.candidates.call_depths` orders
    ns ties exactly.

    Only calls into the user's files get the export's name, ``file(line): function``. The
    tree builds a call's name when asked, from a pointer into its code object's ``co_name``
    that it does not own (``ValueCache::store<CallType::PyCall>``, torch/csrc/autograd/
    profiler_python.cpp), so the name of code freed since (a torch internal, generated code)
    reads freed memory: garbage, or a UnicodeDecodeError. The file name is the tracer's own
    copy, and the user's code lives on: the worker keeps the script's module, and those it
    imports, in ``sys.modules`` (a user function freed before the profile stops reads
    garbage in the export too, which copies names at the stop). Other calls are named
    ``file(line)``, which :func:`launchprof.worker.candidates.user_function` never matches;
    C calls ``<C call>``.

    A depth-first walk with one iterator per open node, not one stack entry per child: the
    tree holds every op too, and each node read makes a Python object (a few µs each; 0.3 to
    0.6 s for 140k nodes on a 2-core machine). Kernels and allocations have no Python call
    below them."""
    from torch._C._profiler import _EventType

    call_tag, c_call_tag = _EventType.PyCall.value, _EventType.PyCCall.value
    leaf_tags = {_EventType.Kineto.value, _EventType.Allocation.value}
    rows: list[dict[str, Any]] = []
    frames: list[tuple[Any, int | None]] = [(iter(roots), None)]
    while frames:
        children, parent_id = frames[-1]
        node = next(children, None)
        if node is None:
            frames.pop()
            continue
        tag = node.tag.value
        if tag in leaf_tags:
            continue
        if tag == call_tag or tag == c_call_tag:
            if len(rows) >= limit:
                raise TooManyCalls(f"the whole-script profile has over {limit:,} Python calls")
            start = node.start_time_ns
            row_id = len(rows) + 1
            rows.append(
                {
                    "ph": "X",
                    "cat": "python_function",
                    "name": _call_name(node.extra_fields, is_user_file) if tag == call_tag else "<C call>",
                    "pid": 0,  # the timeline's host rows are all pid 0
                    "tid": node.start_tid,
                    "ts": (start - base_ns) / 1e3,
                    "dur": (node.end_time_ns - start) / 1e3,
                    "args": {"Python id": row_id, "Python parent id": parent_id},
                }
            )
            parent_id = row_id
        frames.append((iter(node.children), parent_id))
    return rows


def _call_name(fields: Any, is_user_file: Callable[[str], str | None]) -> str:
    """The export's name of a Python call into a user file, else ``file(line)``. An
    ``nn.Module`` or optimizer call is named after its class there, never a user function."""
    site = fields.callsite
    file = site.file_name
    where = f"{file}({site.line_number})"
    if is_user_file(file) is None or fields.module is not None or fields.optimizer is not None:
        return where
    return f"{where}: {site.function_name}"


def tree_rows(prof: Any, table: Timeline, is_user_file: Callable[[str], str | None], limit: int = MAX_PYTHON_CALLS) -> list[dict[str, Any]]:
    """The stopped profile's Python calls plus its timeline rows, in one Chrome-trace-shaped
    list; empty when the tree holds no Python call (no ``with_stack``, or a torch without
    the tree API): the caller then exports."""
    try:
        calls = python_call_rows(prof.profiler.kineto_results.experimental_event_tree(), table.base_ns, is_user_file, limit)
    except TooManyCalls:
        raise
    except Exception:  # this torch's tree differs: the caller exports
        return []
    return calls + table.rows if calls else []
