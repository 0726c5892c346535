"""Foreign random draws in a function's source: numpy's and ``random``'s generators, which
the graph does not know.

numpy's random functions are Cython methods that a profile hook never sees, so they are
found in the source of the functions that ran, resolved against those functions' globals
(``np.random.normal`` is numpy's only if ``np`` is numpy there).
"""

from __future__ import annotations

import ast
import random
import types
from typing import Any


def foreign_rng(func: ast.expr, glb: dict[str, Any]) -> str | None:
    chain: list[str] = []
    node = func
    while isinstance(node, ast.Attribute):
        chain.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or not chain:
        return None
    chain.reverse()
    root = glb.get(node.id)
    name = ".".join([node.id, *chain])
    module = getattr(root, "__name__", "") if isinstance(root, types.ModuleType) else ""
    if module == "numpy" and chain[0] == "random" and len(chain) >= 2:
        return f"numpy random draw {name}()"
    if module == "numpy.random" or module == "random":
        return f"{module} draw {name}()"
    if root is not None and type(root).__module__.startswith("numpy.random") and len(chain) == 1:
        return f"numpy generator draw {name}()"
    if isinstance(root, random.Random) and len(chain) == 1:
        return f"random.Random draw {name}()"
    return None
