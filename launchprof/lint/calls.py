"""What a call returns, by what is called: the torch API, builtins, tensor methods.

These are pure functions of a :class:`~launchprof.lint.facts.CallFact` (the call and
the kinds of its receiver and arguments). They hold the knowledge of the API; the
walker holds the mechanics of the walk (environment, following calls, streams).
"""

from __future__ import annotations

import launchprof.lint.values as v
from launchprof.lint.facts import CallFact, text
from launchprof.lint.definitions import ClassInfo
from launchprof.lint.values import Val


def element(it: Val) -> Val:
    """The kind of one item when iterating over a value."""
    k = it.kind
    if k in (v.TENSOR, v.MASK, v.TENSORS):
        return v.V_TENSOR
    if k in (v.HOST, v.META, v.NUMPY, v.MODULES):
        return it
    if k == v.ZIPPED:
        return Val(v.TUPLE, ref=it.ref)
    if k == v.PGROUPS:
        return Val(v.PGROUP)
    return v.V_UNKNOWN


def tensor_method(m: str, fact: CallFact) -> Val:
    """``t.m(...)`` on a device tensor: most methods give tensors; sizes, flags and ``.cpu()`` do not."""
    if m in v.NON_TENSOR_METHODS or m.startswith(v.NON_TENSOR_PREFIXES):
        return v.V_META
    if m.startswith("_"):
        return v.V_UNKNOWN
    if m == "numpy":
        return v.V_NUMPY
    if m == "cpu" or (m == "to" and v.device_arg(fact.node) == "cpu"):
        return Val(v.HOST, origin=f".{m}()")
    if m in v.MASK_METHODS:
        return v.V_MASK
    if m in v.TUPLE_METHODS:
        return v.V_TENSORS
    if m in v.DIM_TUPLE_METHODS and ("dim" in fact.kwargs or (fact.args and fact.args[0].kind not in v.TENSOR_LIKE)):
        return v.V_TENSORS
    if m == "type" and not fact.args:
        return v.V_STR
    return v.V_TENSOR


def host_method(m: str, fact: CallFact) -> Val:
    """``t.m(...)`` on a host tensor: it stays on the host until ``.cuda()``/``.to(device)``."""
    if m in ("cuda", "pin_memory") or (m == "to" and v.device_arg(fact.node) == "device"):
        return v.V_TENSOR  # pinned memory is not pageable: a later .cuda() of it is fine
    if m in v.NON_TENSOR_METHODS or m == "numpy":
        return tensor_method(m, fact)
    return fact.receiver or v.V_UNKNOWN


def path_result(fact: CallFact, cls: ClassInfo | None) -> Val:
    """A call of an importable path: torch, numpy, math, builtins (``cls``: for ``super()``)."""
    p = fact.path or ""
    if p.startswith("torch."):
        return torch_result(p, fact)
    if p.startswith("numpy."):
        return v.V_NUMPY
    if p == "super" and cls is not None:
        return Val(v.SELF, origin="super", ref=cls)
    if p in v.NUMBER_BUILTINS or p.startswith("math."):
        return number_of(fact)
    if p in ("str", "repr", "format"):
        return v.V_TSTR if any(v.carries_tensor(a) for a in fact.args) else v.V_STR
    if p in ("enumerate", "zip") and fact.args:
        items = (v.V_META, element(fact.args[0])) if p == "enumerate" else tuple(element(a) for a in fact.args)
        return Val(v.ZIPPED, ref=items)
    if p in v.META_BUILTINS or p == "bool":
        return v.V_META
    return v.V_UNKNOWN


def number_of(fact: CallFact) -> Val:
    """``float(lr)``, ``min(lr, 1.0)``, ``math.sqrt(step)``: still the argument's number."""
    for a in fact.args:
        if a.kind == v.NUMBER:
            return a
    return v.V_LIT if fact.args and all(a.kind == v.LIT for a in fact.args) else v.V_META


def torch_result(p: str, fact: CallFact) -> Val:
    """``torch.*``: streams and events, ``torch.nn`` modules, and the tensor functions."""
    if p in v.CURRENT_STREAM_FNS:
        return v.V_CURRENT
    if p in v.STREAM_CONTEXTS:
        if not fact.node.args or v.is_current(fact.args[0], fact.node.args[0]):
            return v.V_UNKNOWN  # `with torch.cuda.stream(torch.cuda.current_stream())` forks nothing
        return Val(v.STREAM_CONTEXT, origin=text(fact.node.args[0]))
    made = v.torch_object(p)
    if made is not None:
        return made
    name = p[6:]
    if "." not in name:
        return torch_function(name, fact)
    return v.V_TENSOR if p.startswith(v.TENSOR_NAMESPACES) else v.V_UNKNOWN


def torch_function(name: str, fact: CallFact) -> Val:
    """``torch.<name>(...)``: a tensor, a host tensor, a mask, a tuple of tensors or a plain value."""
    if name in v.NON_TENSOR_FNS or name.startswith(v.NON_TENSOR_PREFIXES):
        return v.V_META
    if name in v.CREATION_FNS:
        if v.device_keyword(fact.node) == "device":
            return v.V_TENSOR
        if name in v.FROM_DATA_FNS and fact.args and fact.args[0].kind in v.DEVICE_VALUES:
            return fact.args[0]
        return Val(v.HOST, origin=f"torch.{name}")
    if name in v.MASK_FNS:
        return host_only(fact, v.V_MASK)
    if name in v.TUPLE_FNS or (name == "where" and len(fact.args) == 1):
        return host_only(fact, v.V_TENSORS)
    if name in v.DIM_TUPLE_METHODS and ("dim" in fact.kwargs or (len(fact.args) > 1 and fact.args[1].kind not in v.TENSOR_LIKE)):
        return host_only(fact, v.V_TENSORS)
    if name[:1].isupper() or name.startswith("_"):
        return v.V_UNKNOWN
    return host_only(fact, v.V_TENSOR)


def host_only(fact: CallFact, result: Val) -> Val:
    """``torch.cumsum(host_tensor, 0)`` stays on the host: its ``.tolist()`` waits for no GPU."""
    kinds = {a.kind for a in fact.args}
    if v.HOST in kinds and not kinds & {v.TENSOR, v.MASK, v.ARG, v.ARGCMP}:
        return Val(v.HOST, origin=fact.path)
    return result
