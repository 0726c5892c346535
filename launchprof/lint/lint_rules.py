"""One rule per hazard family, all with one signature: ``rule(fn, tree) -> findings``.

A rule reads the facts the walker recorded for one function (``fn``) and, where a
hazard needs a wider view (a stream forked in one function may be joined by its
caller), the facts of every function reached from the same target (``tree``). Rules
never walk the AST and never print; they return findings that the engine turns into
:class:`~launchprof.model.hazard_records.Hazard` records with the kind's fix hint.

Each rule fires only on what it is sure of: lint runs in CI, where a false alarm
costs more trust than a miss on code it cannot read.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from launchprof.model.findings import Param
from launchprof.model.hazard_codes import HazardCode, SyncReason
import launchprof.lint.values as v
from launchprof.lint.facts import CallFact, FunctionFacts, text
from launchprof.lint.definitions import FunctionRef
from launchprof.lint.values import Val


@dataclass(frozen=True)
class Finding:
    """One hazard at one line of the function's file: what was found (``code``, ``params``);
    launchprof.render.words.hazard_text writes its message and the hint it adds to its kind's."""

    kind: str
    line: int
    code: HazardCode
    params: dict[str, Param] = field(default_factory=dict)


@dataclass(frozen=True)
class Tree:
    """The checked target and the facts of every function reached from it (itself included)."""

    root: FunctionRef
    functions: tuple[FunctionFacts, ...]


Rule = Callable[[FunctionFacts, Tree], Iterator[Finding]]

# Receivers on which .item()/.tolist()/.nonzero() are not a GPU sync (host values).
_HOST_RECEIVERS = frozenset({v.NUMPY, v.STR, v.TUPLE, v.META, v.LIT, v.NUMBER, v.HOST, v.SELF, v.INSTANCE, v.TORCHMOD, v.MODULES, v.NONE})
_BRANCHES = frozenset({"if", "while", "conditional expression"})


# --- hidden-sync ----------------------------------------------------------------


def hidden_sync(fn: FunctionFacts, tree: Tree) -> Iterator[Finding]:
    """``.item()``, ``.cpu()``, ``nonzero``, ``synchronize``, ``if tensor``, ``x[mask]``, ``print(tensor)``."""
    for call in fn.calls:
        why = _sync_call(call)
        if why:
            yield Finding("hidden-sync", call.node.lineno, HazardCode.LINT_SYNC_CALL, {"call": text(call.node), **why})
    for c in fn.conditions:
        if c.val.kind not in v.DEVICE_VALUES:
            continue
        params: dict[str, Param] = {"construct": c.construct, "expr": text(c.node), "branch": c.construct in _BRANCHES}
        yield Finding("hidden-sync", c.node.lineno, HazardCode.LINT_SYNC_CONDITION, params)
    for node in fn.formats:
        yield Finding("hidden-sync", node.lineno, HazardCode.LINT_SYNC_FORMAT, {"expr": text(node)})
    for node in fn.masks:
        yield Finding("hidden-sync", node.lineno, HazardCode.LINT_SYNC_MASK, {"expr": text(node)})


def _sync_call(call: CallFact) -> dict[str, Param] | None:
    """Why this call waits for the GPU (``lint-sync-call``'s reason), or None."""
    node = call.node
    if call.method is not None:
        m = call.method
        r = call.receiver.kind if call.receiver is not None else v.UNKNOWN
        if m == "item" and r not in _HOST_RECEIVERS:
            return _because(SyncReason.WAITS)
        if m in ("tolist", "numpy", "nonzero", "argwhere") and r in (v.TENSOR, v.MASK, v.ARG):  # numpy has them too
            return _because(SyncReason.WAITS)
        if m == "cpu" and r not in _HOST_RECEIVERS:
            return _because(SyncReason.TO_HOST)
        if m == "to" and r in (v.TENSOR, v.MASK, v.ARG) and v.device_arg(node) == "cpu":
            return _because(SyncReason.TO_HOST)
        if m in ("masked_select", "unique", "unique_consecutive", "equal", "allclose") and r in (v.TENSOR, v.MASK, v.ARG):
            return _because(SyncReason.HOST_RESULT)
        if m == "synchronize" and not node.args:
            return _because(SyncReason.SYNCHRONIZE)
        if m == "query" and r in (v.STREAM, v.CURRENT, v.EVENT):
            return _because(SyncReason.QUERY)
        if m in v.LOG_METHODS and _is_logger(node) and r not in v.TENSOR_LIKE and _prints_tensor(call):
            return _because(SyncReason.LOGS_TENSOR)
        if m == "format" and r == v.STR and _prints_tensor(call):
            return _because(SyncReason.FORMATS_TENSOR)
        return None
    p = call.path
    if p is None:
        return None
    if p.endswith(".synchronize"):  # torch.cuda.synchronize, torch.accelerator.synchronize, ...
        return _because(SyncReason.SYNCHRONIZE)
    if p in v.SYNC_FNS or (p == "torch.where" and len(node.args) == 1 and not node.keywords):
        return _because(SyncReason.SIZE_ON_HOST)
    if p in ("bool", "int", "float", "complex") and call.args and call.args[0].kind in v.DEVICE_VALUES:
        return {"reason": SyncReason.CONVERTS.value, "to": p}
    if (p == "print" or (p.startswith("logging.") and p[8:] in v.LOG_METHODS)) and _prints_tensor(call):
        return _because(SyncReason.PRINTS_TENSOR)
    if p in ("str", "repr", "format") and call.args and v.holds_tensor(call.args[0]):
        return _because(SyncReason.FORMATS_TENSOR)
    return None


def _because(reason: SyncReason) -> dict[str, Param]:
    return {"reason": reason.value}


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
        found = _pageable(call)
        if found:
            yield Finding("pageable-copy", call.node.lineno, *found)


def _pageable(call: CallFact) -> tuple[HazardCode, dict[str, Param]] | None:
    node = call.node
    m = call.method
    r = call.receiver or v.V_UNKNOWN
    if m is not None:
        copies = (m == "cuda" or (m == "to" and v.device_arg(node) == "device")) and r.kind == v.HOST
        if copies:
            return HazardCode.LINT_PAGEABLE_HOST_TENSOR, {"call": text(node), "origin": r.origin}
        if m == "copy_" and call.args and call.args[0].kind == v.HOST and r.kind != v.HOST:
            return HazardCode.LINT_PAGEABLE_COPY_FROM_HOST, {"call": text(node), "origin": call.args[0].origin}
        if m == "new_tensor" and r.kind in (v.TENSOR, v.MASK, v.ARG) and v.device_keyword(node) != "cpu":
            return HazardCode.LINT_PAGEABLE_NEW_TENSOR, {"call": text(node)}
        return None
    p = call.path or ""
    if p[6:] in v.FROM_DATA_FNS and p.startswith("torch.") and v.device_keyword(node) == "device":
        if not call.args or call.args[0].kind not in (v.TENSOR, v.MASK, v.ARG):
            return HazardCode.LINT_PAGEABLE_FROM_DATA, {"call": text(node)}
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
            yield Finding("frozen-scalar", node.lineno, HazardCode.LINT_FROZEN_COUNTER, {"name": name, "call": text(node)})
            continue
        params: dict[str, Param] = {"name": name, "target": tree.root.qualname, "call": text(node)}
        yield Finding("frozen-scalar", node.lineno, HazardCode.LINT_FROZEN_NUMBER, params)
    for w in fn.param_writes:
        if w.val.kind in v.TENSOR_LIKE or w.val.kind in (v.TENSORS, v.LIT, v.NONE):
            continue  # a tensor setting is read at replay; a constant never changes
        # Where a Python number is written into an optimizer, the fix is a tensor setting.
        setting: dict[str, Param] = {"number": w.val.kind == v.NUMBER, "name": w.val.origin, "call": text(w.node), "key": w.key}
        yield Finding("frozen-scalar", w.node.lineno, HazardCode.LINT_FROZEN_OPTIMIZER_SETTING, setting)
    for c in fn.conditions:
        name = c.val.origin or "?"
        if c.val.kind != v.NUMBER or c.construct == "for" or (c.node.lineno, name) in seen:
            continue
        seen.add((c.node.lineno, name))
        branch: dict[str, Param] = {"name": name, "target": tree.root.qualname, "construct": c.construct, "expr": text(c.node)}
        yield Finding("frozen-scalar", c.node.lineno, HazardCode.LINT_FROZEN_BRANCH, branch)


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
        params: dict[str, Param] = {"name": c.val.origin or "?", "target": tree.root.qualname, "construct": c.construct, "expr": text(c.node)}
        yield Finding("data-dependent-control-flow", c.node.lineno, HazardCode.LINT_ARGUMENT_DECIDES, params)


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
        side = blocks.get(key, [])
        params: dict[str, Param] = {
            "stream": key,
            "block_starts": [b.lineno for b in side],  # type: ignore[attr-defined]
            "block_ends": [b.end_lineno for b in side],  # type: ignore[attr-defined]
        }
        yield Finding("unjoined-stream", node.lineno, HazardCode.LINT_STREAM_NOT_JOINED, params)  # type: ignore[attr-defined]


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
        for code, params in _rng_uses(call):
            yield Finding("rng-state", call.node.lineno, code, {"call": text(call.node), **params})


def _rng_uses(call: CallFact) -> Iterator[tuple[HazardCode, dict[str, Param]]]:
    p = call.path or ""
    if (p.startswith("numpy.random.") or p.startswith("random.")) and p.rpartition(".")[2] not in _NOT_A_DRAW:
        yield HazardCode.LINT_HOST_RNG, {"source": "numpy" if p.startswith("numpy.") else "python"}
    elif p == "torch.Generator":
        yield HazardCode.LINT_NEW_GENERATOR, {}
    gen = call.kwargs.get("generator")
    if gen is not None and gen.kind != v.NONE and (p.startswith("torch.") or call.method is not None):
        yield HazardCode.LINT_PASSED_GENERATOR, {}


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
