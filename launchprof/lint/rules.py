"""One rule per hazard family, all with one signature: ``rule(fn, tree) -> findings``.

A rule reads the facts the walker recorded for one function (``fn``) and, where a
hazard needs a wider view (a stream forked in one function may be joined by its
caller), the facts of every function reached from the same target (``tree``). Rules
never walk the AST and never print; they return findings that the engine turns into
:class:`~launchprof.models.Hazard` records with the kind's fix hint.

Each rule fires only on what it is sure of: lint runs in CI, where a false alarm
costs more trust than a miss on code it cannot read.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import launchprof.lint.values as v
from launchprof.lint.facts import CallFact, FunctionFacts, text
from launchprof.lint.definitions import FunctionRef
from launchprof.lint.values import Val


@dataclass(frozen=True)
class Finding:
    """One hazard at one line of the function's file; ``hint`` is appended to the kind's hint."""

    kind: str
    line: int
    message: str
    hint: str = ""


@dataclass(frozen=True)
class Tree:
    """The checked target and the facts of every function reached from it (itself included)."""

    root: FunctionRef
    functions: tuple[FunctionFacts, ...]


Rule = Callable[[FunctionFacts, Tree], Iterator[Finding]]

# Receivers on which .item()/.tolist()/.nonzero() are not a GPU sync (host values).
_HOST_RECEIVERS = frozenset({v.NUMPY, v.STR, v.TUPLE, v.META, v.LIT, v.NUMBER, v.HOST, v.SELF, v.INSTANCE, v.TORCHMOD, v.MODULES, v.NONE})
_WAITS = "copies a device value to the host and waits for the GPU"
_FORMATS = f"formats a tensor as text: it {_WAITS}"
_BRANCHES = frozenset({"if", "while", "conditional expression"})
# Where a Python number is written into an optimizer, the fix is a tensor setting.
_CAPTURABLE_HINT = (
    "Here: make `{key}` a tensor (e.g. torch.tensor({key}, device='cuda')) and create the optimizer with "
    "capturable=True where it supports it (Adam, AdamW, SGD ...); update it with fill_() outside the graph."
)


# --- hidden-sync ----------------------------------------------------------------


def hidden_sync(fn: FunctionFacts, tree: Tree) -> Iterator[Finding]:
    """``.item()``, ``.cpu()``, ``nonzero``, ``synchronize``, ``if tensor``, ``x[mask]``, ``print(tensor)``."""
    for call in fn.calls:
        why = _sync_call(call)
        if why:
            yield Finding("hidden-sync", call.node.lineno, f"`{text(call.node)}` {why}")
    for c in fn.conditions:
        if c.val.kind not in v.DEVICE_VALUES:
            continue
        branch = "; the branch is also data-dependent (the graph keeps the one taken at capture)" if c.construct in _BRANCHES else ""
        yield Finding("hidden-sync", c.node.lineno, f"`{c.construct}` on the tensor value `{text(c.node)}` {_WAITS}{branch}")
    for node in fn.formats:
        yield Finding("hidden-sync", node.lineno, f"`{text(node)}` {_FORMATS}")
    for node in fn.masks:
        yield Finding(
            "hidden-sync",
            node.lineno,
            f"boolean-mask indexing `{text(node)}` has a data-dependent size: it runs nonzero and waits for the GPU",
            "Use torch.where(mask, x, 0) or masked_fill to keep the shape fixed.",
        )


def _sync_call(call: CallFact) -> str | None:
    """Why this call waits for the GPU (the message after the call's text), or None."""
    node = call.node
    if call.method is not None:
        m = call.method
        r = call.receiver.kind if call.receiver is not None else v.UNKNOWN
        if m == "item" and r not in _HOST_RECEIVERS:
            return _WAITS
        if m in ("tolist", "numpy", "nonzero", "argwhere") and r in (v.TENSOR, v.MASK, v.ARG):  # numpy has them too
            return _WAITS
        if m == "cpu" and r not in _HOST_RECEIVERS:
            return "copies the tensor to the host and waits for the GPU"
        if m == "to" and r in (v.TENSOR, v.MASK, v.ARG) and v.device_arg(node) == "cpu":
            return "copies the tensor to the host and waits for the GPU"
        if m in ("masked_select", "unique", "unique_consecutive", "equal", "allclose") and r in (v.TENSOR, v.MASK, v.ARG):
            return "has a data-dependent result on the host: it waits for the GPU"
        if m == "synchronize" and not node.args:
            return "waits for the GPU, which a capturing stream cannot do"
        if m == "query" and r in (v.STREAM, v.CURRENT, v.EVENT):
            return "queries a stream or event, which is invalid while capturing"
        if m in v.LOG_METHODS and _is_logger(node) and r not in v.TENSOR_LIKE and _prints_tensor(call):
            return f"formats a tensor for the log: {_WAITS}"
        if m == "format" and r == v.STR and _prints_tensor(call):
            return _FORMATS
        return None
    p = call.path
    if p is None:
        return None
    if p.endswith(".synchronize"):  # torch.cuda.synchronize, torch.accelerator.synchronize, ...
        return "waits for the GPU, which a capturing stream cannot do"
    if p in v.SYNC_FNS or (p == "torch.where" and len(node.args) == 1 and not node.keywords):
        return "needs its result (a size or a Python bool) on the host: it waits for the GPU"
    if p in ("bool", "int", "float", "complex") and call.args and call.args[0].kind in v.DEVICE_VALUES:
        return f"converts a tensor to a Python {p}: it {_WAITS}"
    if (p == "print" or (p.startswith("logging.") and p[8:] in v.LOG_METHODS)) and _prints_tensor(call):
        return f"formats a tensor on the host: it {_WAITS}"
    if p in ("str", "repr", "format") and call.args and v.holds_tensor(call.args[0]):
        return _FORMATS
    return None


def _is_logger(node: ast.Call) -> bool:
    """``log.info``, ``logger.warning``, ``self._logger.debug``: a receiver named like a logger."""
    recv = node.func.value if isinstance(node.func, ast.Attribute) else None
    return recv is not None and "log" in (v.terminal_name(recv) or "").lower()


def _prints_tensor(call: CallFact) -> bool:
    """A tensor among the arguments; text already made from one was reported where it was formatted."""
    return any(v.holds_tensor(a) for a in (*call.args, *call.kwargs.values()))


# --- pageable-copy ----------------------------------------------------------------


def pageable_copy(fn: FunctionFacts, tree: Tree) -> Iterator[Finding]:
    """Host data copied to the device inside the step: ``torch.tensor([...]).cuda()`` and kin."""
    for call in fn.calls:
        message = _pageable(call)
        if message:
            yield Finding("pageable-copy", call.node.lineno, message)


def _pageable(call: CallFact) -> str | None:
    node = call.node
    m = call.method
    r = call.receiver or v.V_UNKNOWN
    if m is not None:
        copies = (m == "cuda" or (m == "to" and v.device_arg(node) == "device")) and r.kind == v.HOST
        if copies:
            return f"`{text(node)}` copies a tensor built on the host ({r.origin}) from pageable memory to the device"
        if m == "copy_" and call.args and call.args[0].kind == v.HOST and r.kind != v.HOST:
            return f"`{text(node)}` copies from a host tensor ({call.args[0].origin}) in pageable memory"
        if m == "new_tensor" and r.kind in (v.TENSOR, v.MASK, v.ARG) and v.device_keyword(node) != "cpu":
            return f"`{text(node)}` builds a device tensor from host data: a copy from pageable memory"
        return None
    p = call.path or ""
    if p[6:] in v.FROM_DATA_FNS and p.startswith("torch.") and v.device_keyword(node) == "device":
        if not call.args or call.args[0].kind not in (v.TENSOR, v.MASK, v.ARG):
            return f"`{text(node)}` copies host data from pageable memory to the device"
    return None


# --- frozen-scalar ----------------------------------------------------------------


def frozen_scalar(fn: FunctionFacts, tree: Tree) -> Iterator[Finding]:
    """A Python number from the target's arguments that becomes a kernel argument or picks a branch."""
    seen: set[tuple[int, str]] = set()
    for node, number in _number_uses(fn):
        name = number.origin or "?"
        if (node.lineno, name) in seen:
            continue
        seen.add((node.lineno, name))
        if v.is_counter(number):
            yield Finding(
                "frozen-scalar",
                node.lineno,
                f"Python counter `{name}` (it changes on every call) is passed to a tensor operation in "
                f"`{text(node)}`: the graph keeps the value it had at capture",
                f"Here: keep `{name}` in a device tensor (torch.zeros((), device='cuda')) and count it with add_(1) "
                "inside the step, so that every replay advances it.",
            )
            continue
        yield Finding(
            "frozen-scalar",
            node.lineno,
            f"Python number `{name}` (an argument of `{tree.root.qualname}`) is passed to a tensor operation in "
            f"`{text(node)}`: the graph keeps the value it had at capture",
            f"Here: pass `{name}` as a device tensor and update it with fill_()/copy_().",
        )
    for w in fn.param_writes:
        if w.val.kind in v.TENSOR_LIKE or w.val.kind in (v.TENSORS, v.LIT, v.NONE):
            continue  # a tensor setting is read at replay; a constant never changes
        what = f"Python number `{w.val.origin}`" if w.val.kind == v.NUMBER else "a Python value"
        yield Finding(
            "frozen-scalar",
            w.node.lineno,
            f"{what} is written into the optimizer's param_groups (`{text(w.node)}`): a captured optimizer step keeps "
            "the value it had at capture",
            _CAPTURABLE_HINT.format(key=w.key),
        )
    for c in fn.conditions:
        name = c.val.origin or "?"
        if c.val.kind != v.NUMBER or c.construct == "for" or (c.node.lineno, name) in seen:
            continue
        seen.add((c.node.lineno, name))
        yield Finding(
            "frozen-scalar",
            c.node.lineno,
            f"Python number `{name}` (an argument of `{tree.root.qualname}`) decides the host branch "
            f"`{c.construct} {text(c.node)}`: the graph keeps the branch taken at capture",
            "Here: compute both branches and select with torch.where on a device tensor, or capture one graph per value.",
        )


def _number_uses(fn: FunctionFacts) -> Iterator[tuple[ast.AST, Val]]:
    for a in fn.arith:
        yield a.node, a.number
    for call in fn.calls:
        for val in _value_arguments(call):
            if val.kind == v.NUMBER:
                yield call.node, val


def _value_arguments(call: CallFact) -> Iterator[Val]:
    """Arguments of a call that become kernel *values* (not shapes, dims or dtypes)."""
    if call.method is not None:
        if call.receiver is None or call.receiver.kind not in v.TENSOR_LIKE:
            return
        if call.method in v.VALUE_METHODS:
            yield from call.args
        yield from (val for key, val in call.kwargs.items() if key in v.VALUE_KEYWORDS)
        return
    p = call.path or ""
    name = p[6:]
    if not p.startswith("torch.") or name not in v.TORCH_VALUE_FNS:
        return
    position = v.VALUE_POSITION.get(name)
    if position is None:
        yield from call.args
    elif len(call.args) > position:
        yield call.args[position]
    yield from (val for key, val in call.kwargs.items() if key in v.VALUE_KEYWORDS)


# --- data-dependent-control-flow ----------------------------------------------------


def data_dependent_control_flow(fn: FunctionFacts, tree: Tree) -> Iterator[Finding]:
    """A branch or a loop bound decided by a Python number from the target's arguments."""
    seen: set[int] = set()
    for c in fn.conditions:
        if c.val.kind != v.NUMBER or c.node.lineno in seen:
            continue
        seen.add(c.node.lineno)
        name = c.val.origin or "?"
        shape = f"the loop bound `{text(c.node)}`" if c.construct == "for" else f"the host branch `{c.construct} {text(c.node)}`"
        yield Finding(
            "data-dependent-control-flow",
            c.node.lineno,
            f"`{name}` (an argument of `{tree.root.qualname}`) decides {shape}: calls with other values run "
            "other kernels, but the graph replays the ones recorded at capture",
            "Here: capture one graph per value (or per loop count) and pick it on the host outside the step.",
        )


# --- unjoined-stream --------------------------------------------------------------


def unjoined_stream(fn: FunctionFacts, tree: Tree) -> Iterator[Finding]:
    """Work forked to a side stream that never rejoins the current (capturing) stream."""
    if not fn.streams:
        return
    recorded = {e.key: e.stream for f in tree.functions for e in f.streams if e.action == "record"}
    joined, join_any = _joined_streams(tree, recorded)
    if join_any:
        return
    first: dict[str, ast.AST] = {}
    blocks: dict[str, list[ast.AST]] = {}
    for e in fn.streams:
        if e.action == "fork" or (e.action == "fork-event" and recorded.get(e.stream or "") == "current"):
            first.setdefault(e.key, e.node)
        elif e.action == "block":
            blocks.setdefault(e.key, []).append(e.node)
            first.setdefault(e.key, e.node)
    for key, node in first.items():
        if key in joined:
            continue
        if fn.ref is not tree.root and key.partition(".")[0] in fn.params and joined:
            continue  # a stream passed in: the caller that owns it joins it
        where = ", ".join(f"lines {b.lineno}-{b.end_lineno}" for b in blocks.get(key, []))  # type: ignore[attr-defined]
        side = f"the side work (`with torch.cuda.stream({key})`, {where})" if where else "the work queued on it"
        yield Finding(
            "unjoined-stream",
            node.lineno,  # type: ignore[attr-defined]
            f"stream `{key}` is forked from the current stream here, and {side} never rejoins it: "
            "capture ends with cudaErrorStreamCaptureUnjoined",
            f"Here: after the side work, call torch.cuda.current_stream().wait_stream({key}).",
        )


def _joined_streams(tree: Tree, recorded: dict[str, str | None]) -> tuple[set[str], bool]:
    """Streams the current stream waits on anywhere in the tree; True when a join cannot be placed."""
    joined: set[str] = set()
    join_any = False
    for f in tree.functions:
        for e in f.streams:
            if e.action == "join":
                joined.add(e.key)
            elif e.action == "join-event":
                stream = recorded.get(e.key)
                if stream is None:
                    join_any = True  # an event from elsewhere: it may well join this stream
                else:
                    joined.add(stream)
    return joined, join_any


# --- rng-state --------------------------------------------------------------------

_NOT_A_DRAW = frozenset({"seed", "getstate", "setstate", "get_state", "set_state"})


def rng_state(fn: FunctionFacts, tree: Tree) -> Iterator[Finding]:
    """numpy / Python ``random`` / a custom ``torch.Generator`` inside the step."""
    for call in fn.calls:
        for why in _rng_uses(call):
            yield Finding("rng-state", call.node.lineno, f"`{text(call.node)}` {why}")


def _rng_uses(call: CallFact) -> Iterator[str]:
    p = call.path or ""
    if (p.startswith("numpy.random.") or p.startswith("random.")) and p.rpartition(".")[2] not in _NOT_A_DRAW:
        source = "numpy's" if p.startswith("numpy.") else "Python's"
        yield f"draws from {source} random generator on the host: replay repeats the captured numbers"
    elif p == "torch.Generator":
        yield "creates a generator the graph does not know"
    gen = call.kwargs.get("generator")
    if gen is not None and gen.kind != v.NONE and (p.startswith("torch.") or call.method is not None):
        yield "draws from a generator passed in (`generator=`), not torch's default one"


RULES: tuple[Rule, ...] = (hidden_sync, pageable_copy, frozen_scalar, data_dependent_control_flow, unjoined_stream, rng_state)
# The hazard kinds lint's rules can report (JUnit lists exactly these as lint checks).
# ``unresolved-call`` is not a rule's: it says where lint could not look (``--strict``).
KINDS_FOUND: tuple[str, ...] = (
    "hidden-sync",
    "pageable-copy",
    "frozen-scalar",
    "data-dependent-control-flow",
    "unjoined-stream",
    "rng-state",
)
