"""How every report model is made, in one place: a frozen stdlib dataclass that pydantic
validates where a report is read from outside, ignoring unknown keys, so that a report
written by a newer launchprof with added fields still loads (fields are added, never
renamed). launchprof.model.core and the feature models it names (models_buckets,
compile_report, ranks.models) all use it, so they cannot drift apart.

Plain dataclasses, not pydantic ones, because importing pydantic and building its
validators was the largest single cost of a ``launchprof lint --all`` run
(docs/lint-speed.md): a report that launchprof builds from its own typed values needs no
checking, so lint builds and writes the report models without importing pydantic. What
is read from outside (a JSON report, a run file, a worker's event) is validated with a
``TypeAdapter`` (:func:`adapter`), built on first use.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import math
import os
import re
import reprlib
from collections.abc import Callable
from typing import Any

# pydantic reads this from a stdlib dataclass (at every nesting level): a ConfigDict.
_CONFIG = {"extra": "ignore"}
_ANY = re.compile(r"\bAny\b")


def model(cls: type) -> Any:
    """A frozen dataclass that ignores unknown keys when validated.

    ``dataclass(frozen=True)`` would compile six methods for each of the thirty-odd
    models on every start, about as much work as the rest of lint's imports together;
    the methods below behave as the generated ones do (compare, hash and show the fields
    in order; refuse assignment once ``__init__`` has set a field) and are shared."""
    cls.__pydantic_config__ = _CONFIG  # type: ignore[attr-defined]
    made = dataclasses.dataclass(eq=False, repr=False)(cls)
    made.__eq__, made.__hash__, made.__repr__ = _eq, _hash, _repr
    made.__setattr__, made.__delattr__ = _setattr, _delattr
    return made


@functools.cache
def _names(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(cls))


def _values(obj: Any) -> tuple[Any, ...]:
    return tuple(getattr(obj, name) for name in _names(type(obj)))


def _eq(self: Any, other: Any) -> Any:
    if other.__class__ is not self.__class__:
        return NotImplemented
    return _values(self) == _values(other)


def _hash(self: Any) -> int:
    return hash(_values(self))


@reprlib.recursive_repr()
def _repr(self: Any) -> str:
    shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in _names(type(self)))
    return f"{type(self).__qualname__}({shown})"


def _setattr(self: Any, name: str, value: Any) -> None:
    # __init__ sets each field once; anything after that is an assignment to a frozen model.
    if name in self.__dict__ or name not in _names(type(self)):
        raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
    object.__setattr__(self, name, value)


def _delattr(self: Any, name: str) -> None:
    raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")


@functools.cache
def adapter(cls: type) -> Any:
    """pydantic's validator of ``cls`` (a ``TypeAdapter``), built once, on first use."""
    from pydantic import TypeAdapter

    return TypeAdapter(cls)


@dataclasses.dataclass(frozen=True)
class Before:
    """``Annotated`` metadata: ``func`` turns the raw value into what the field's type
    checks, before pydantic validates it (pydantic's ``BeforeValidator``, without
    importing pydantic where the model is defined)."""

    func: Callable[[Any], Any]

    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> Any:
        from pydantic_core import core_schema

        return core_schema.no_info_before_validator_function(self.func, schema=handler(source))


def plain(value: Any, typed: bool = True) -> Any:
    """A model as JSON types, as pydantic's ``dump_python(mode="json")`` gives it: fields in
    declaration order, enums as their values, tuples and sets as lists, keys as strings.

    ``typed`` is False inside a field typed ``Any`` (a hazard's ``details``), where pydantic
    writes infinity and NaN as None; a float field keeps them (``json`` writes Infinity)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {name: plain(getattr(value, name), field_typed) for name, field_typed in _fields(type(value))}
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, dict):
        return {_key(k): plain(v, typed) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [plain(v, typed) for v in value]
    if isinstance(value, float) and not typed and not math.isfinite(value):
        return None
    if isinstance(value, (str, int, float)) or value is None:
        return value
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    raise TypeError(f"cannot write {type(value).__name__} into a report")


def _key(key: Any) -> str:
    return str(key.value) if isinstance(key, enum.Enum) else str(key)


@functools.cache
def _fields(cls: type) -> tuple[tuple[str, bool], ...]:
    """Each field's name, and whether its type is known (annotations are strings here)."""
    return tuple((f.name, _ANY.search(str(f.type)) is None) for f in dataclasses.fields(cls))
