"""How the walker reads calls: what each call returns, and which calls lint follows.

A call of a function in the linted code is noted (with the kinds of its arguments)
so the engine walks the callee too; calling a module instance runs its ``forward``;
stream methods feed the fork/join bookkeeping. What a call of the torch API returns
is :mod:`launchprof.lint.calls`'s business; this module holds the mechanics.
"""

from __future__ import annotations

import ast

import launchprof.lint.calls as calls
import launchprof.lint.values as v
from launchprof.lint.definitions import ClassInfo, FunctionRef
from launchprof.lint.index import Index
from launchprof.lint.facts import CallFact, FunctionFacts, StreamEvent, text
from launchprof.lint.params import annotation_kind
from launchprof.lint.values import Val

_STREAM_METHODS = frozenset({"wait_stream", "wait_event", "record"})


class CallWalker:
    """The call half of :class:`~launchprof.lint.walker.Walker` (which supplies ``ev``)."""

    ref: FunctionRef
    index: Index
    facts: FunctionFacts
    follow: bool
    stream_blocks: list[str]
    arg_names: frozenset[str]

    def ev(self, node: ast.expr) -> Val:  # supplied by Walker
        raise NotImplementedError

    def e_call(self, node: ast.Call) -> Val:
        func = node.func
        method: str | None = None
        receiver: Val | None = None
        fval: Val | None = None
        if isinstance(func, ast.Attribute):
            receiver = self.ev(func.value)
            if receiver.kind == v.PATH:
                fval = self.index.path_val(f"{receiver.origin}.{func.attr}")
                receiver = None
            else:
                method = func.attr
        else:
            fval = self.ev(func)
        args = tuple(self.ev(a) for a in node.args)
        kwargs = {k.arg or "**": self.ev(k.value) for k in node.keywords}
        path = fval.origin if fval is not None and fval.kind == v.PATH else None
        fact = CallFact(node, path, method, receiver, args, kwargs)
        self.facts.calls.append(fact)
        if self.follow:
            self.note_unresolved(node, fval, path)
        if method is not None:
            return self.method_result(fact, func)  # type: ignore[arg-type]
        if path == "getattr":
            return Val(v.DYNAMIC, origin="a function looked up with getattr")
        return self.call_result(fact, fval)  # type: ignore[arg-type]

    def note_unresolved(self, node: ast.Call, fval: Val | None, path: str | None) -> None:
        """Record a call lint cannot follow: a callable passed in, getattr, dispatch through a table."""
        func = node.func
        why: str | None = None
        if fval is not None and fval.kind == v.DYNAMIC:
            why = fval.origin
        elif isinstance(func, ast.Subscript):
            why = "dynamic dispatch through a lookup table"
        elif isinstance(func, ast.Name) and func.id in self.arg_names and fval is not None and fval.kind in (v.UNKNOWN, v.ARG):
            why = f"a callable passed in as `{func.id}`"
        elif path is not None and self.index.loader is not None and self.index.loader.unreadable_module(path):
            why = "defined in a module of the project that lint could not read"
        if why:
            self.facts.unresolved.append((node, why))

    def call_result(self, fact: CallFact, fval: Val) -> Val:
        k = fval.kind
        if k == v.FUNC:
            return self.follow_call(fval.ref, fact)  # type: ignore[arg-type]
        if k == v.CLASS:
            return Val(v.INSTANCE, ref=fval.ref)
        if k in (v.INSTANCE, v.MODULES, v.TORCHMOD):
            return self.call_module(fval, fact)
        if k == v.PATH and fact.path is not None:
            return calls.path_result(fact, self.ref.cls)
        return v.V_UNKNOWN

    def follow_call(self, ref: FunctionRef, fact: CallFact, self_val: Val | None = None) -> Val:
        """Note the call for following; its value is a tensor when annotated so, a model when it builds one."""
        if self.follow:
            self.facts.callees.append((ref, self._bind_args(ref, fact, self_val)))
        if annotation_kind(ref.node.returns, ref.module) == "tensor":
            return v.V_TENSOR
        return ref.static_return()

    def call_module(self, fval: Val, fact: CallFact) -> Val:
        """``layer(x)``: torch's own modules give tensors; linted ones run their forward."""
        if fval.kind == v.TORCHMOD:
            return v.V_TENSOR
        classes = (fval.ref,) if fval.kind == v.INSTANCE else fval.ref
        for cls in classes:  # type: ignore[union-attr]
            target = cls.call_method()
            if target is not None:
                self.follow_call(target, fact, Val(v.SELF, ref=cls))
        if any(cls.is_module for cls in classes):  # type: ignore[union-attr]
            return v.V_TENSOR  # an nn.Module's forward gives tensors, whoever built the module
        return v.V_ARG

    def _bind_args(self, ref: FunctionRef, fact: CallFact, self_val: Val | None) -> dict[str, Val]:
        names = [a.arg for a in ref.node.args.posonlyargs + ref.node.args.args]
        bound: dict[str, Val] = {}
        if self_val is not None and ref.is_method and names:
            bound[names[0]] = self_val
            names = names[1:]
        for name, arg_node, val in zip(names, fact.node.args, fact.args):
            if isinstance(arg_node, ast.Starred):
                break
            if val.kind != v.UNKNOWN:
                bound[name] = val
        known = set(names) | {a.arg for a in ref.node.args.kwonlyargs}
        for key, val in fact.kwargs.items():
            if key in known and val.kind != v.UNKNOWN:
                bound[key] = val
        return bound

    def method_result(self, fact: CallFact, func: ast.Attribute) -> Val:
        m = fact.method or ""
        recv = fact.receiver or v.V_UNKNOWN
        k = recv.kind
        if m in _STREAM_METHODS:
            self.stream_call(fact, func)
        if k in (v.SELF, v.INSTANCE) and isinstance(recv.ref, ClassInfo):
            return self.instance_method(recv, m, fact)
        if k in (v.TENSOR, v.MASK) or (k == v.ARG and m in v.TENSOR_METHODS):
            return calls.tensor_method(m, fact)
        if k == v.HOST:
            return calls.host_method(m, fact)
        if m == "record_event":
            return Val(v.EVENT, origin="current" if v.is_current(recv, func.value) else text(func.value))
        if m in ("current_stream", "default_stream"):  # torch.accelerator / device handles
            return v.V_CURRENT
        if m in ("parameters", "buffers") and k in (v.TORCHMOD, v.MODULES, v.UNKNOWN):
            return v.V_TENSORS
        if k == v.STR and m == "format":
            return v.V_TSTR if any(v.carries_tensor(a) for a in (*fact.args, *fact.kwargs.values())) else v.V_STR
        if k == v.NUMPY:
            return v.V_NUMPY
        if m in ("item", "tolist") or m in v.NON_TENSOR_METHODS and k == v.ARG:
            return v.V_META
        return v.V_UNKNOWN

    def instance_method(self, recv: Val, name: str, fact: CallFact) -> Val:
        cls: ClassInfo = recv.ref  # type: ignore[assignment]
        if recv.origin == "super":
            target = next((c.methods[name] for c in list(cls.mro())[1:] if name in c.methods), None)
        else:
            target = cls.method(name)
        if target is not None:
            return self.follow_call(target, fact, Val(v.SELF, ref=cls))
        attr = cls.attr(name)  # self.layer(x): an attribute holding a module
        if attr is not None and attr.kind in (v.INSTANCE, v.MODULES, v.TORCHMOD):
            return self.call_module(attr, fact)
        if name in ("parameters", "buffers") and cls.is_module:
            return v.V_TENSORS
        if attr is None and self.follow and name in cls.assigned_attrs():
            self.facts.unresolved.append((fact.node, f"dynamic dispatch through the attribute `{name}`"))
        return v.V_UNKNOWN

    def stream_call(self, fact: CallFact, func: ast.Attribute) -> None:
        """Fork/join bookkeeping: ``side.wait_stream(cur)`` forks, ``cur.wait_stream(side)`` joins."""
        recv = fact.receiver or v.V_UNKNOWN
        node = fact.node
        m = fact.method
        if m == "record":
            if recv.kind == v.EVENT or (fact.args and fact.args[0].kind in (v.STREAM, v.CURRENT)):
                if node.args:
                    stream = "current" if v.is_current(fact.args[0], node.args[0]) else text(node.args[0])
                else:
                    stream = self.stream_blocks[-1] if self.stream_blocks else "current"
                self.facts.streams.append(StreamEvent("record", text(func.value), node, stream))
            return
        if not node.args or recv.kind in (v.TENSOR, v.MASK, v.HOST, v.NUMPY, v.PATH):
            return
        if v.is_current(recv, func.value, loose=True):
            action = "join" if m == "wait_stream" else "join-event"
            self.facts.streams.append(StreamEvent(action, text(node.args[0]), node))
        elif m == "wait_stream" and v.is_current(fact.args[0], node.args[0]):
            self.facts.streams.append(StreamEvent("fork", text(func.value), node))
        elif m == "wait_event":
            self.facts.streams.append(StreamEvent("fork-event", text(func.value), node, text(node.args[0])))

