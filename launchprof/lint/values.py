"""What lint knows about a value, and what the torch API tells it.

Lint cannot run the code, so it tracks a coarse *kind* per expression: a tensor, a
boolean mask, a Python number that came from the target's arguments, a CUDA stream,
and so on. The kinds are deliberately few; everything the walker cannot place is
``UNKNOWN``, and the rules only fire on kinds they are sure of (a false alarm costs a
user more trust than a miss on unclear code).

The tables below are the part of the torch API that decides kinds: which calls give
tensors, which give host (CPU, pageable) tensors, which give masks, which give plain
Python values. They are data, kept here so rules and walker read the same facts.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

# --- kinds -----------------------------------------------------------------------
TENSOR = "tensor"  # a tensor, on the device as far as lint can tell
MASK = "mask"  # a boolean tensor (comparison, isnan, any, ...)
HOST = "host"  # a tensor freshly built on the host in pageable memory
TENSORS = "tensors"  # a tuple of tensors (split, chunk, max(dim=...))
ARG = "arg"  # an unannotated argument of a target: a tensor in practice, not proven
ARGCMP = "argcmp"  # a comparison involving an ARG: a mask when ARG is a tensor
NUMBER = "number"  # a Python number that comes from an argument (origin = its name)
LIT = "literal"  # a Python number from a constant
META = "meta"  # a plain Python value: shapes, sizes, dtypes, flags, .item() results
STR = "str"
TSTR = "tstr"  # text made from a tensor (f"{t}", str(t)): formatting it syncs
NUMPY = "numpy"  # a numpy array
TUPLE = "tuple"  # a tuple display; ref holds the element values
NONE = "none"
STREAM = "stream"  # a torch.cuda.Stream
CURRENT = "current"  # torch.cuda.current_stream() / default_stream()
EVENT = "event"  # a torch.cuda.Event (origin: the stream it was recorded on, if known)
GENERATOR = "generator"  # a torch.Generator
SELF = "self"  # ``self`` inside a method; ref is the ClassInfo
INSTANCE = "instance"  # an instance of a class in the linted files; ref is the ClassInfo
MODULES = "modules"  # nn.ModuleList / nn.Sequential of classes in the linted files (ref: tuple)
TORCHMOD = "torchmod"  # an instance of a torch.nn module (nn.Linear(...)): calling it gives a tensor
FUNC = "func"  # a function in the linted files; ref is the FunctionRef
CLASS = "class"  # a class in the linted files; ref is the ClassInfo
PATH = "path"  # an importable dotted path (origin): torch.cuda, numpy.random.rand, print
UNKNOWN = "unknown"
ZIPPED = "zipped"  # enumerate(...)/zip(...): ref holds one item's element kinds
STREAM_CONTEXT = "stream-context"  # torch.cuda.stream(side); origin: the stream's source text
DYNAMIC = "dynamic"  # a callable lint cannot name (getattr(...)); origin: why
PGROUPS = "param-groups"  # optimizer.param_groups
PGROUP = "param-group"  # one entry of it: writing a Python number into it freezes that number


@dataclass(frozen=True, slots=True)
class Val:
    """The kind of one expression; ``origin`` and ``ref`` carry what the kind needs."""

    kind: str
    origin: str | None = None
    ref: object = None


# ``Val.ref`` of a NUMBER that changes on every call by construction: a module global the
# function declares ``global`` and a ``self.t += 1`` attribute. Unlike an argument, which a
# caller may well keep constant, its use in a tensor operation is always frozen.
COUNTER = "counter"


def counter(name: str) -> Val:
    return Val(NUMBER, origin=name, ref=COUNTER)


def is_counter(val: Val) -> bool:
    return val.kind == NUMBER and val.ref == COUNTER


V_UNKNOWN = Val(UNKNOWN)
V_TENSOR = Val(TENSOR)
V_MASK = Val(MASK)
V_TENSORS = Val(TENSORS)
V_META = Val(META)
V_LIT = Val(LIT)
V_STR = Val(STR)
V_TSTR = Val(TSTR)
V_NONE = Val(NONE)
V_NUMPY = Val(NUMPY)
V_ARG = Val(ARG)
V_ARGCMP = Val(ARGCMP)
V_CURRENT = Val(CURRENT)
V_STREAM = Val(STREAM)
V_GENERATOR = Val(GENERATOR)
V_TORCHMOD = Val(TORCHMOD)
V_EVENT = Val(EVENT)

# Truth-testing these copies a device value to the host.
DEVICE_VALUES = frozenset({TENSOR, MASK})
# These behave like tensors in arithmetic (a number meeting one is a tensor operand).
TENSOR_LIKE = frozenset({TENSOR, MASK, HOST, ARG, ARGCMP})

# --- torch.* functions ------------------------------------------------------------
# Build a tensor from host data or on the default (CPU) device unless given device=.
CREATION_FNS = frozenset(
    """tensor as_tensor asarray from_numpy frombuffer zeros ones empty full arange range linspace
    logspace eye rand randn randint randperm empty_strided scalar_tensor tril_indices triu_indices
    Tensor FloatTensor DoubleTensor HalfTensor BFloat16Tensor LongTensor IntTensor ShortTensor
    ByteTensor CharTensor BoolTensor""".split()
)
# Creation from host *data* (a list, a number, an array): always a host-to-device copy when a device is given.
FROM_DATA_FNS = frozenset({"tensor", "as_tensor", "asarray", "scalar_tensor"})
MASK_FNS = frozenset(
    """eq ne gt lt ge le greater less greater_equal less_equal not_equal isnan isinf isfinite
    isneginf isposinf isreal logical_and logical_or logical_not logical_xor isclose isin signbit
    any all""".split()
)
TUPLE_FNS = frozenset(
    """split chunk unbind sort topk kthvalue aminmax tensor_split split_with_sizes hsplit vsplit
    dsplit meshgrid broadcast_tensors std_mean var_mean frexp histogram slogdet""".split()
)
# torch.X that return plain Python values or objects, not tensors.
NON_TENSOR_FNS = frozenset(
    """is_tensor is_storage is_floating_point is_complex is_nonzero numel get_default_dtype
    set_default_dtype manual_seed seed initial_seed set_rng_state no_grad enable_grad inference_mode
    set_grad_enabled is_grad_enabled is_inference_mode_enabled device dtype Size finfo iinfo compile
    typename is_autocast_enabled autocast broadcast_shapes result_type promote_types can_cast equal
    allclose use_deterministic_algorithms are_deterministic_algorithms_enabled get_num_threads
    set_num_threads save load is_same_size set_printoptions get_device is_inference""".split()
)
# torch.is_grad_enabled(), x.is_contiguous(), torch.get_default_device(): flags and settings.
NON_TENSOR_PREFIXES = ("is_", "are_", "get_", "set_", "use_", "has_")
# torch submodules whose functions return tensors.
TENSOR_NAMESPACES = ("torch.nn.functional.", "torch.linalg.", "torch.fft.", "torch.special.")
# Calls that synchronise by themselves: data-dependent output sizes or Python bools of device data.
SYNC_FNS = frozenset(
    {
        "torch.nonzero",
        "torch.argwhere",
        "torch.masked_select",
        "torch.unique",
        "torch.unique_consecutive",
        "torch.equal",
        "torch.allclose",
        "torch.is_nonzero",
    }
)
CURRENT_STREAM_FNS = frozenset({"torch.cuda.current_stream", "torch.cuda.default_stream"})
STREAM_CLASSES = frozenset({"torch.cuda.Stream", "torch.cuda.streams.Stream", "torch.Stream"})
EVENT_CLASSES = frozenset({"torch.cuda.Event", "torch.cuda.streams.Event", "torch.Event"})
STREAM_CONTEXTS = frozenset({"torch.cuda.stream", "torch.cuda.StreamContext"})
PARAMETER_CLASSES = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter", "torch.nn.Buffer"})
# torch functions where a Python number argument becomes a kernel argument (value, not shape).
TORCH_VALUE_FNS = frozenset(
    """add sub mul div true_divide pow clamp clip lerp addcmul addcdiv where masked_fill fmod remainder
    full full_like fill tensor as_tensor scalar_tensor rsub""".split()
)
# torch.full(size, fill_value): only the value is a frozen scalar, the size is a shape.
VALUE_POSITION = {"full": 1, "full_like": 1}

# --- tensor methods ---------------------------------------------------------------
NON_TENSOR_METHODS = frozenset(
    """size dim ndimension numel nelement stride element_size data_ptr is_contiguous get_device
    storage_offset is_floating_point is_complex is_pinned is_shared untyped_storage storage
    register_hook backward tolist item dim_order has_names dense_dim sparse_dim""".split()
)
MASK_METHODS = MASK_FNS | frozenset({"bool"})
TUPLE_METHODS = frozenset({"split", "chunk", "unbind", "sort", "topk", "kthvalue", "aminmax", "tensor_split", "split_with_sizes"})
# max/min/median(dim) return (values, indices); without a dim they return one tensor.
DIM_TUPLE_METHODS = frozenset({"max", "min", "median", "nanmedian", "mode", "cummax", "cummin"})
# Methods that only tensors have (in practice): calling one on an ARG proves it is a tensor.
TENSOR_METHODS = frozenset(
    """sum mean max min abs any all norm std var prod float half bfloat16 double long int exp log
    sqrt rsqrt pow softmax log_softmax sigmoid relu tanh matmul mm bmm view view_as reshape transpose
    permute unsqueeze squeeze contiguous clone detach to cuda add sub mul div add_ sub_ mul_ div_
    argmax argmin cumsum masked_fill masked_fill_ gather scatter scatter_ index_select expand expand_as
    repeat flatten t clamp clamp_ round floor ceil sign neg eq ne gt lt ge le isnan isinf isfinite
    logical_not logical_and logical_or type_as new_zeros new_ones new_empty new_full fill_ zero_
    copy_ narrow split chunk unbind sort topk amax amin logsumexp square baddbmm addmm lerp lerp_
    where diff roll flip tril triu""".split()
)
# Tensor methods whose Python-number arguments end up as kernel arguments.
VALUE_METHODS = frozenset(
    """add add_ sub sub_ mul mul_ div div_ true_divide true_divide_ pow pow_ fill_ clamp clamp_ clip
    clip_ clamp_min clamp_min_ clamp_max clamp_max_ lerp lerp_ addcmul addcmul_ addcdiv addcdiv_
    masked_fill masked_fill_ fmod fmod_ remainder remainder_ new_full new_tensor rsub""".split()
)
VALUE_KEYWORDS = frozenset({"alpha", "value", "fill_value", "scale", "other"})

# --- Python ---------------------------------------------------------------------
LOG_METHODS = frozenset({"debug", "info", "warning", "warn", "error", "critical", "exception", "log"})
# Unannotated argument names that are numbers by every convention (a learning rate, a step).
NUMBER_NAMES = frozenset(
    """lr learning_rate step step_count num_steps iteration epoch timestep scale alpha beta beta1 beta2
    gamma eps epsilon momentum weight_decay temperature dt seq_len seqlen max_len length start_pos
    cur_pos decay factor threshold tau sigma lam noise_scale grad_scale loss_scale clip_value
    max_norm""".split()
)
# Chained calls that return the same module instance: Net().cuda().eval().
SAME_MODULE_METHODS = frozenset({"cuda", "to", "eval", "train", "half", "float", "bfloat16", "double", "requires_grad_", "cpu"})
NUMBER_BUILTINS = frozenset({"float", "int", "abs", "round", "min", "max"})
META_BUILTINS = frozenset({"len", "isinstance", "issubclass", "range", "hasattr", "callable", "id", "type", "enumerate", "zip"})


# --- values in calls ---------------------------------------------------------------


def is_current(val: Val, node: ast.expr, loose: bool = False) -> bool:
    """The current (capturing) stream: ``torch.cuda.current_stream()``, or a name that says so.

    ``loose`` also accepts ``main``/``default`` names: used where saying "current" means
    reporting *less* (a join), never where it means reporting more (a fork).
    """
    if val.kind == CURRENT:
        return True
    name = (terminal_name(node) or "").lower()
    return "current" in name or (loose and ("main" in name or "default" in name))


def holds_tensor(val: Val) -> bool:
    """A device tensor, or a tuple holding one: formatting it as text reads it on the host."""
    if val.kind in DEVICE_VALUES:
        return True
    return val.kind == TUPLE and any(p.kind in DEVICE_VALUES for p in val.ref)  # type: ignore[union-attr]


def carries_tensor(val: Val) -> bool:
    """A device tensor, text formatted from one, or a tuple holding one."""
    return val.kind == TSTR or holds_tensor(val)


def torch_object(path: str) -> Val | None:
    """What constructing a torch class gives: a stream, an event, a generator, a module, a parameter."""
    if path in STREAM_CLASSES:
        return V_STREAM
    if path in EVENT_CLASSES:
        return V_EVENT
    if path == "torch.Generator":
        return V_GENERATOR
    if path in PARAMETER_CLASSES:
        return V_TENSOR
    if path.startswith("torch.nn.") and path.rpartition(".")[2][:1].isupper():
        return V_TORCHMOD
    return None


# --- devices in calls --------------------------------------------------------------


def device_arg(call: ast.Call) -> str | None:
    """``"cpu"`` or ``"device"`` when a ``.to()``-style call names a device; None for dtype-only calls."""
    exprs = [k.value for k in call.keywords if k.arg == "device"] or call.args[:1]
    for e in exprs:
        if isinstance(e, ast.Call) and terminal_name(e.func) == "device" and e.args:
            e = e.args[0]
        if isinstance(e, ast.Constant) and isinstance(e.value, str):
            if e.value.startswith("meta"):
                return None  # no memory, no copy
            return "cpu" if e.value.startswith("cpu") else "device"
        name = terminal_name(e)
        if name and ("device" in name.lower() or name in ("dev", "cuda")):
            return "device"
    return None


def device_keyword(call: ast.Call) -> str | None:
    """What ``device=`` says: ``"cpu"``, ``"device"`` (anything else that is not ``meta``) or None."""
    value = next((k.value for k in call.keywords if k.arg == "device"), None)
    if value is None:
        return None
    if isinstance(value, ast.Call) and terminal_name(value.func) == "device" and value.args:
        value = value.args[0]
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        return None if value.value.startswith("meta") else "cpu" if value.value.startswith("cpu") else "device"
    return "device"


def dotted_name(e: ast.expr) -> str | None:
    """``self.t``, ``state.step.count``: a chain of names as written, else None."""
    parts: list[str] = []
    while isinstance(e, ast.Attribute):
        parts.append(e.attr)
        e = e.value
    if not isinstance(e, ast.Name):
        return None
    return ".".join([e.id, *reversed(parts)])


def terminal_name(e: ast.expr) -> str | None:
    """The last name of ``x``, ``a.b.x``."""
    if isinstance(e, ast.Name):
        return e.id
    if isinstance(e, ast.Attribute):
        return e.attr
    return None
