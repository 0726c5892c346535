"""Host driver code: the ``if __name__ == "__main__":`` block and what it alone runs.

Under ``--all`` every function is checked as if it were captured, but a script's
``main()`` is the loop that calls the step, logs its loss and parses its arguments: no
graph captures it, and a host read there (``print(f"{float(loss):.3f}")``) costs one
sync per logged step, not a broken capture. Its findings are reported as information.

A function is driver code when every reference to it is a plain call from driver code
(the block, or another driver function), outside any loop. A call inside a loop is what
a graph would replay (the step), a call inside ``with`` may be a capture
(``with torch.cuda.graph(g): step(x)``), and a function passed as a value (to
``torch.compile``, a callback) may run anywhere: each keeps the function's severity, as
does any reference from other code, a class, a nested function or module level.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from launchprof.lint.modules import ModuleInfo

BLOCK = ""  # the owner of the `if __name__ == "__main__":` block's own code
_OTHER = None  # module-level code outside that block, classes, methods: never driver code
_NOT_PLAIN = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def driver_functions(module: ModuleInfo) -> dict[str, str]:
    """Module-level functions that only driver code runs, each with one driver that calls it
    (:data:`BLOCK` for the ``__main__`` block). Empty for a module without that block."""
    body = module.source.tree.body
    if not any(_is_main_block(node) for node in body):
        return {}
    refs: dict[str, list[tuple[str | None, bool]]] = {}
    for name, owner, plain in _references(body, frozenset(module.functions)):
        if owner != name:  # a function calling itself says nothing about who runs it
            refs.setdefault(name, []).append((owner, plain))
    drivers: dict[str, str] = {}
    changed = True
    while changed:
        changed = False
        for name, uses in refs.items():
            if name in drivers:
                continue
            if all(plain and (owner == BLOCK or owner in drivers) for owner, plain in uses):
                drivers[name] = uses[0][0]  # type: ignore[assignment]
                changed = True
    return drivers


def _is_main_block(node: ast.stmt) -> bool:
    """``if __name__ == "__main__":`` (either way round)."""
    if not isinstance(node, ast.If) or not isinstance(node.test, ast.Compare):
        return False
    test = node.test
    if len(test.ops) != 1 or not isinstance(test.ops[0], ast.Eq):
        return False
    sides = {_side(test.left), _side(test.comparators[0])}
    return sides == {"name:__name__", "str:__main__"}


def _side(e: ast.expr) -> str:
    if isinstance(e, ast.Name):
        return f"name:{e.id}"
    if isinstance(e, ast.Constant) and isinstance(e.value, str):
        return f"str:{e.value}"
    return ""


def _references(body: list[ast.stmt], names: frozenset[str]) -> Iterator[tuple[str, str | None, bool]]:
    """``(function, owner, plain call)`` for every reference to one of ``names`` in the module.

    ``owner`` is the module-level function whose body holds the reference, :data:`BLOCK`,
    or None; ``plain call`` is True for ``name(...)`` outside loops, ``with`` blocks,
    lambdas, comprehensions and nested functions. A function's own local of the same
    name (``main = torch.cuda.current_stream()``) is no reference.
    """
    stack: list[tuple[ast.AST, str | None, bool, frozenset[str]]] = [(node, _OTHER, True, frozenset()) for node in reversed(body)]
    while stack:
        node, owner, plain, local = stack.pop()
        if isinstance(node, ast.If) and owner is _OTHER and plain and _is_main_block(node):
            stack.extend((child, BLOCK, True, local) for child in reversed(node.body))
            stack.extend((child, _OTHER, True, local) for child in reversed(node.orelse))
            continue
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            stack.extend(_function_parts(node, owner, plain, local, names))
            continue
        if isinstance(node, ast.ClassDef):
            stack.extend((child, _OTHER, False, local) for child in ast.iter_child_nodes(node))
            continue
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in names:
            if node.func.id not in local:
                yield node.func.id, owner, plain
            stack.extend((child, owner, plain, local) for child in (*node.args, *node.keywords))
            continue
        if isinstance(node, ast.Name):
            if node.id in names and node.id not in local and isinstance(node.ctx, ast.Load):
                yield node.id, owner, False  # passed or stored as a value: it may run anywhere
            continue
        stack.extend((child, o, p, local) for child, o, p in _children(node, owner, plain))


def _function_parts(
    node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda, owner: str | None, plain: bool, local: frozenset[str], names: frozenset[str]
) -> Iterator[tuple[ast.AST, str | None, bool, frozenset[str]]]:
    """A definition's decorators and defaults (run where it is defined), then its body.

    The body of a module-level function is owned by it; any other body (a nested
    function, a lambda) is not plain code of its owner: it runs whenever it is called.
    """
    args = node.args
    outer = [*getattr(node, "decorator_list", ()), *args.defaults, *(d for d in args.kw_defaults if d is not None)]
    yield from ((child, owner, plain, local) for child in outer)
    top = (owner is _OTHER or owner == BLOCK) and plain and not isinstance(node, ast.Lambda)
    inner: tuple[str | None, bool] = (node.name, True) if top and node.name in names else (owner, False)  # type: ignore[union-attr]
    body = node.body if isinstance(node.body, list) else [node.body]
    bound = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg) if a is not None}
    bound |= {n.id for part in body for n in ast.walk(part) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    shadowed = local | (bound & names)
    yield from ((child, *inner, shadowed) for child in reversed(body))


def _children(node: ast.AST, owner: str | None, plain: bool) -> Iterator[tuple[ast.AST, str | None, bool]]:
    """The children of ``node``; a loop's body and a ``with`` block's body are not plain code."""
    if isinstance(node, ast.For | ast.AsyncFor):
        yield node.iter, owner, plain
        yield from ((child, owner, False) for child in (node.target, *node.body, *node.orelse))
    elif isinstance(node, ast.While):
        yield from ((child, owner, False) for child in (node.test, *node.body, *node.orelse))
    elif isinstance(node, ast.With | ast.AsyncWith):
        yield from ((item, owner, plain) for item in node.items)
        yield from ((child, owner, False) for child in node.body)
    else:
        not_plain = isinstance(node, _NOT_PLAIN)
        yield from ((child, owner, plain and not not_plain) for child in ast.iter_child_nodes(node))
