"""One pass over a function body that turns its code into *facts* the rules read.

The walker is a small abstract interpreter: it visits statements in source order,
gives every expression a kind (:mod:`launchprof.lint.values`) from the kinds of its
parts, and keeps a name -> kind environment that assignments update as they happen,
so ``t = torch.tensor(xs); t = t.cuda()`` is understood line by line. Each
expression is visited once, which keeps lint linear in the size of the code.

What it records is only what some rule needs (calls, truth tests of device values,
boolean-mask indexing, numbers meeting tensors in operators, stream forks and joins,
and the calls into other linted functions to follow). Rules never walk the AST
themselves; they read these facts (docs/architecture.md "Lint": each rule maps observations to hazards).
"""

from __future__ import annotations

import ast
from collections.abc import Callable

import launchprof.lint.calls as calls
import launchprof.lint.values as v
from launchprof.lint.facts import Arith, Condition, FunctionFacts, ParamWrite, StreamEvent
from launchprof.lint.call_walker import CallWalker
from launchprof.lint.definitions import ClassInfo, FunctionRef, is_number_constant
from launchprof.lint.modules import import_names
from launchprof.lint.values import Val


_TENSOR_META_ATTRS = frozenset(
    "shape ndim dtype device is_cuda requires_grad layout names is_leaf grad_fn is_sparse is_quantized is_meta itemsize nbytes".split()
)
# Optimizer settings that are flags, not numbers a schedule changes.
_FLAG_SETTINGS = frozenset({"params", "capturable", "foreach", "fused", "differentiable", "maximize", "nesterov", "amsgrad", "name"})
_TENSOR_SAME_ATTRS = frozenset("T mT H mH data grad real imag".split())


class Walker(CallWalker):
    """Walk one function body once and return its :class:`FunctionFacts`."""

    def __init__(self, ref: FunctionRef, params: dict[str, Val], follow: bool) -> None:
        self.ref = ref
        self.module = ref.module
        self.index = ref.module.index
        self.env: dict[str, Val] = dict(params)
        self.follow = follow
        self.facts = FunctionFacts(ref, params)
        self.stream_blocks: list[str] = []
        self.counters: dict[str, Val] = {}  # `state.step += 1` in this function: "state.step" -> its counter
        args = ref.node.args
        self.arg_names = frozenset(a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs))

    def run(self) -> FunctionFacts:
        self.block(self.ref.node.body)
        return self.facts

    # --- statements ----------------------------------------------------------------
    def block(self, body: list[ast.stmt]) -> None:
        for node in body:
            handler = _STATEMENTS.get(type(node))
            if handler is not None:
                handler(self, node)
            else:
                self.generic(node)

    def generic(self, node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                self.ev(child)
            elif isinstance(child, ast.stmt):
                self.block([child])
            elif isinstance(child, ast.match_case):
                if child.guard is not None:
                    self.cond(child.guard, "case guard")
                self.block(child.body)

    def s_expr(self, node: ast.Expr) -> None:
        self.ev(node.value)

    def s_assign(self, node: ast.Assign) -> None:
        val = self.ev(node.value)
        for t in node.targets:
            self.bind(t, val)

    def s_annassign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.bind(node.target, self.ev(node.value))

    def s_augassign(self, node: ast.AugAssign) -> None:
        old = self.ev(node.target)
        new = self.ev(node.value)
        result = self.arith(node, node.op, old, new)
        if isinstance(node.target, ast.Subscript):
            self.param_write(node.target, new if new.kind != v.LIT else result)
        elif isinstance(node.target, ast.Attribute) and old.kind not in v.TENSOR_LIKE:
            self.count(node)
        self.bind(node.target, result)

    def count(self, node: ast.AugAssign) -> None:
        """``state.step += 1`` on any object: a Python number that changes on every call."""
        key = v.dotted_name(node.target)
        if key is not None and isinstance(node.op, ast.Add | ast.Sub) and is_number_constant(node.value):
            self.counters[key] = v.counter(key)

    def s_return(self, node: ast.Return) -> None:
        if node.value is not None:
            self.ev(node.value)

    def s_if(self, node: ast.If) -> None:
        guard = len(node.body) == 1 and isinstance(node.body[0], ast.Raise) and not node.orelse
        self.cond(node.test, "if", numbers=not guard)
        self.block(node.body)
        self.block(node.orelse)

    def s_while(self, node: ast.While) -> None:
        self.cond(node.test, "while")
        self.block(node.body)
        self.block(node.orelse)

    def s_for(self, node: ast.For | ast.AsyncFor) -> None:
        it = self.ev(node.iter)
        bound = self.loop_bound(node.iter)
        if bound is not None:
            self.facts.conditions.append(Condition(node.iter, "for", bound))
        self.bind(node.target, calls.element(it))
        self.block(node.body)
        self.block(node.orelse)

    def s_with(self, node: ast.With | ast.AsyncWith) -> None:
        pushed = 0
        for item in node.items:
            val = self.ev(item.context_expr)
            if val.kind == v.STREAM_CONTEXT:
                self.facts.streams.append(StreamEvent("block", val.origin or "?", node))
                self.stream_blocks.append(val.origin or "?")
                pushed += 1
            if item.optional_vars is not None:
                self.bind(item.optional_vars, v.V_UNKNOWN)
        self.block(node.body)
        del self.stream_blocks[len(self.stream_blocks) - pushed :]

    def s_assert(self, node: ast.Assert) -> None:
        self.cond(node.test, "assert", numbers=False)

    def s_try(self, node: ast.Try) -> None:
        self.block(node.body)
        for h in node.handlers:
            if h.name:
                self.env[h.name] = v.V_UNKNOWN
            self.block(h.body)
        self.block(node.orelse)
        self.block(node.finalbody)

    def s_def(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        ref = FunctionRef(self.module, f"{self.ref.qualname}.{node.name}", node)
        self.env[node.name] = Val(v.FUNC, ref=ref)
        self.facts.nested.append(ref)

    def s_class(self, node: ast.ClassDef) -> None:
        info = ClassInfo(self.module, node.name, node)
        for item in node.body:
            if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                ref = FunctionRef(self.module, f"{self.ref.qualname}.{node.name}.{item.name}", item, info)
                info.methods[item.name] = ref
                self.facts.nested.append(ref)
        self.env[node.name] = Val(v.CLASS, ref=info)

    def s_import(self, node: ast.Import | ast.ImportFrom) -> None:
        for name, path in import_names(node, self.module.name, self.module.source.is_package).items():
            self.env[name] = self.index.path_val(path)

    def s_global(self, node: ast.Global) -> None:
        """``global STEP``: a module-level number the function rebinds is a counter (``STEP += 1``)."""
        for name in node.names:
            val = self.module.global_val(name)
            if val is not None and val.kind == v.LIT:
                self.env[name] = v.counter(name)

    def s_skip(self, node: ast.stmt) -> None:
        """Raise, delete, nonlocal, pass...: nothing a rule needs (error paths are not the step)."""

    # --- bookkeeping -------------------------------------------------------------
    def cond(self, test: ast.expr, construct: str, numbers: bool = True) -> Val:
        """Record a truth test of a device value, or (``numbers``) a branch on an argument's number.

        Numbers are recorded for whole tests of ``if``/``while``/conditional expressions
        only; checks that only raise (``if lr < 0: raise``) and asserts are validation,
        not a branch of the step, so their numbers are not recorded. Nor are counters:
        ``if calls % 50 == 0: print(...)`` gates host work, not kernels, in practice.
        """
        val = self.ev(test)
        if val.kind in v.DEVICE_VALUES or (numbers and val.kind == v.NUMBER and not v.is_counter(val)):
            self.facts.conditions.append(Condition(test, construct, val))
        return val

    def loop_bound(self, it: ast.expr) -> Val | None:
        """The argument's number that sets how often ``for ... in range(n)`` runs, if any."""
        if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range"):
            return None
        if "range" in self.env or "range" in self.module.functions or not self.facts.calls:
            return None
        call = self.facts.calls[-1]  # the range() call itself: a call is recorded after its arguments
        if call.node is not it:
            return None
        return next((val for val in call.args if val.kind == v.NUMBER and not v.is_counter(val)), None)

    def param_write(self, target: ast.Subscript, val: Val) -> None:
        """``group["lr"] = value`` on an optimizer's param group: a setting the graph freezes."""
        key = target.slice
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str)) or key.value in _FLAG_SETTINGS:
            return
        if self.ev(target.value).kind == v.PGROUP:
            self.facts.param_writes.append(ParamWrite(target, key.value, val))

    def bind(self, target: ast.expr, val: Val) -> None:
        if isinstance(target, ast.Name):
            self.env[target.id] = val
            if val.kind == v.EVENT and val.origin:
                self.facts.streams.append(StreamEvent("record", target.id, target, val.origin))
        elif isinstance(target, ast.Tuple | ast.List):
            elts = target.elts
            parts: tuple = val.ref if val.kind == v.TUPLE and isinstance(val.ref, tuple) else ()
            for i, e in enumerate(elts):
                if isinstance(e, ast.Starred):
                    self.bind(e.value, v.V_UNKNOWN)
                elif len(parts) == len(elts):
                    self.bind(e, parts[i])
                else:
                    self.bind(e, v.V_TENSOR if val.kind == v.TENSORS else v.V_UNKNOWN)
        elif isinstance(target, ast.Attribute):
            self.ev(target.value)
        elif isinstance(target, ast.Subscript):
            self.param_write(target, val)
            self.ev(target.slice)
        elif isinstance(target, ast.Starred):
            self.bind(target.value, v.V_UNKNOWN)

    def arith(self, node: ast.BinOp | ast.AugAssign, op: ast.operator, left: Val, right: Val) -> Val:
        lk, rk = left.kind, right.kind
        if lk == v.NUMBER and rk in v.TENSOR_LIKE:
            self.facts.arith.append(Arith(node, left))
        elif rk == v.NUMBER and lk in v.TENSOR_LIKE:
            self.facts.arith.append(Arith(node, right))
        if lk == v.STR and isinstance(op, ast.Mod):  # "%.3f" % loss
            if v.holds_tensor(right):
                self.facts.formats.append(node)
            return v.V_TSTR if v.carries_tensor(right) else v.V_STR
        kinds = (lk, rk)
        if isinstance(op, ast.BitAnd | ast.BitOr | ast.BitXor):
            if v.MASK in kinds:
                return v.V_MASK
            if v.ARGCMP in kinds:
                return v.V_ARGCMP
        if v.TENSOR in kinds or v.MASK in kinds:
            return v.V_TENSOR
        if v.HOST in kinds:
            return left if lk == v.HOST else right
        if v.ARG in kinds or v.ARGCMP in kinds:
            return v.V_ARG
        if lk == v.NUMBER or rk == v.NUMBER:
            return left if lk == v.NUMBER else right
        if lk in (v.LIT, v.META) and rk in (v.LIT, v.META):
            return left if lk == rk else v.V_META
        return v.V_UNKNOWN

    # --- expressions -------------------------------------------------------------
    def ev(self, node: ast.expr) -> Val:
        handler = _EXPRESSIONS.get(type(node))
        if handler is not None:
            return handler(self, node)
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                self.ev(child)
        return v.V_UNKNOWN

    def e_name(self, node: ast.Name) -> Val:
        val = self.env.get(node.id)
        if val is None:
            val = self.module.global_val(node.id) or Val(v.PATH, origin=node.id)
        return val

    def e_constant(self, node: ast.Constant) -> Val:
        value = node.value
        if isinstance(value, bool):
            return v.V_META
        if isinstance(value, int | float | complex):
            return v.V_LIT
        if isinstance(value, str):
            return v.V_STR
        return v.V_NONE if value is None else v.V_UNKNOWN

    def e_attribute(self, node: ast.Attribute) -> Val:
        recv = self.ev(node.value)
        k = recv.kind
        if self.counters:
            found = self.counters.get(v.dotted_name(node) or "")
            if found is not None:
                return found
        if node.attr == "param_groups":  # an optimizer's (tensors have no such attribute)
            return Val(v.PGROUPS)
        if k == v.PATH:
            return self.index.path_val(f"{recv.origin}.{node.attr}")
        if k in v.TENSOR_LIKE:
            if node.attr in _TENSOR_META_ATTRS:
                return v.V_META
            if node.attr in _TENSOR_SAME_ATTRS:
                return recv if k in (v.HOST, v.ARG) else v.V_TENSOR
            return v.V_UNKNOWN
        if k == v.TENSORS and node.attr in ("values", "indices"):
            return v.V_TENSOR
        if k in (v.SELF, v.INSTANCE) and isinstance(recv.ref, ClassInfo):
            val = recv.ref.attr(node.attr) or v.V_UNKNOWN
            return v.counter(v.dotted_name(node) or node.attr) if v.is_counter(val) else val
        if k == v.META:
            return v.V_META
        return v.V_UNKNOWN

    def e_binop(self, node: ast.BinOp) -> Val:
        return self.arith(node, node.op, self.ev(node.left), self.ev(node.right))

    def e_unaryop(self, node: ast.UnaryOp) -> Val:
        if isinstance(node.op, ast.Not):
            val = self.cond(node.operand, "not", numbers=False)
            return val if val.kind == v.NUMBER else v.V_META  # `if not n:` is still decided by n
        return self.ev(node.operand)

    def e_boolop(self, node: ast.BoolOp) -> Val:
        """``a and b``: ``bool(a)`` is taken here; the whole is decided by a number if any part is."""
        construct = "and" if isinstance(node.op, ast.And) else "or"
        vals = [self.cond(value, construct, numbers=False) for value in node.values[:-1]]
        last = self.ev(node.values[-1])
        if last.kind in v.DEVICE_VALUES:
            return last
        return next((val for val in (*vals, last) if val.kind == v.NUMBER), last)

    def e_compare(self, node: ast.Compare) -> Val:
        vals = [self.ev(node.left), *(self.ev(c) for c in node.comparators)]
        kinds = {val.kind for val in vals}
        if all(isinstance(op, ast.Is | ast.IsNot | ast.In | ast.NotIn) for op in node.ops):
            return v.V_META
        if kinds & v.DEVICE_VALUES:
            return v.V_MASK
        if v.HOST in kinds:
            return Val(v.HOST, origin="comparison")
        if v.ARG in kinds:
            return v.V_ARGCMP
        if v.NUMBER in kinds:  # `step > 10`: still decided by the argument
            return next(val for val in vals if val.kind == v.NUMBER)
        return v.V_META

    def e_ifexp(self, node: ast.IfExp) -> Val:
        self.cond(node.test, "conditional expression")
        body, orelse = self.ev(node.body), self.ev(node.orelse)
        if body.kind == v.NONE:
            return orelse
        if orelse.kind == v.NONE or body.kind == orelse.kind:
            return body
        return v.V_UNKNOWN

    def e_subscript(self, node: ast.Subscript) -> Val:
        value = self.ev(node.value)
        index = self.ev(node.slice)
        k = value.kind
        if k in (v.TENSOR, v.MASK, v.ARG) and isinstance(node.ctx, ast.Load) and self._is_mask(index):
            self.facts.masks.append(node)
        if k in (v.TENSOR, v.MASK, v.TENSORS):
            return v.V_TENSOR
        if k in (v.HOST, v.ARG, v.META, v.NUMPY, v.STR):
            return value
        if k == v.PGROUPS:
            return Val(v.PGROUP)
        if k == v.TUPLE and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, int):
            parts = value.ref
            if isinstance(parts, tuple) and -len(parts) <= node.slice.value < len(parts):
                return parts[node.slice.value]
        return v.V_UNKNOWN

    @staticmethod
    def _is_mask(index: Val) -> bool:
        if index.kind in (v.MASK, v.ARGCMP):
            return True
        return index.kind == v.TUPLE and any(p.kind in (v.MASK, v.ARGCMP) for p in index.ref)  # type: ignore[union-attr]

    def e_tuple(self, node: ast.Tuple | ast.List) -> Val:
        return Val(v.TUPLE, ref=tuple(self.ev(e) for e in node.elts))

    def e_joinedstr(self, node: ast.JoinedStr) -> Val:
        carries = reads = False
        for part in node.values:
            if isinstance(part, ast.FormattedValue):
                val = self.ev(part.value)
                reads = reads or v.holds_tensor(val)
                carries = carries or v.carries_tensor(val)
        if reads:
            self.facts.formats.append(node)
        return v.V_TSTR if carries else v.V_STR

    def e_comprehension(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp) -> Val:
        for gen in node.generators:
            self.bind(gen.target, calls.element(self.ev(gen.iter)))
            for test in gen.ifs:
                self.cond(test, "comprehension condition")
        if isinstance(node, ast.DictComp):
            self.ev(node.key)
            self.ev(node.value)
        else:
            self.ev(node.elt)
        return v.V_UNKNOWN

    def e_namedexpr(self, node: ast.NamedExpr) -> Val:
        val = self.ev(node.value)
        self.bind(node.target, val)
        return val

    def e_opaque(self, node: ast.expr) -> Val:
        """Lambdas run later, not here: their bodies belong to whoever calls them."""
        return v.V_UNKNOWN


def _method(name: str) -> Callable[[Walker, ast.AST], object]:
    return getattr(Walker, name)


_STATEMENTS: dict[type, Callable] = {
    ast.Expr: _method("s_expr"),
    ast.Assign: _method("s_assign"),
    ast.AnnAssign: _method("s_annassign"),
    ast.AugAssign: _method("s_augassign"),
    ast.Return: _method("s_return"),
    ast.If: _method("s_if"),
    ast.While: _method("s_while"),
    ast.For: _method("s_for"),
    ast.AsyncFor: _method("s_for"),
    ast.With: _method("s_with"),
    ast.AsyncWith: _method("s_with"),
    ast.Assert: _method("s_assert"),
    ast.Try: _method("s_try"),
    ast.TryStar: _method("s_try"),
    ast.FunctionDef: _method("s_def"),
    ast.AsyncFunctionDef: _method("s_def"),
    ast.ClassDef: _method("s_class"),
    ast.Import: _method("s_import"),
    ast.ImportFrom: _method("s_import"),
    ast.Raise: _method("s_skip"),
    ast.Delete: _method("s_skip"),
    ast.Global: _method("s_global"),
    ast.Nonlocal: _method("s_skip"),
    ast.Pass: _method("s_skip"),
    ast.Break: _method("s_skip"),
    ast.Continue: _method("s_skip"),
}

_EXPRESSIONS: dict[type, Callable] = {
    ast.Name: _method("e_name"),
    ast.Constant: _method("e_constant"),
    ast.Attribute: _method("e_attribute"),
    ast.Call: _method("e_call"),
    ast.BinOp: _method("e_binop"),
    ast.UnaryOp: _method("e_unaryop"),
    ast.BoolOp: _method("e_boolop"),
    ast.Compare: _method("e_compare"),
    ast.IfExp: _method("e_ifexp"),
    ast.Subscript: _method("e_subscript"),
    ast.Tuple: _method("e_tuple"),
    ast.List: _method("e_tuple"),
    ast.JoinedStr: _method("e_joinedstr"),
    ast.ListComp: _method("e_comprehension"),
    ast.SetComp: _method("e_comprehension"),
    ast.GeneratorExp: _method("e_comprehension"),
    ast.DictComp: _method("e_comprehension"),
    ast.NamedExpr: _method("e_namedexpr"),
    ast.Lambda: _method("e_opaque"),
}
