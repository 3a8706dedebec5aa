"""Exceptions with messages a learner can act on.

Every error names the argument, what was expected (in the row convention), what was received,
and a likely fix. All of them subclass ``AttentionError`` and a builtin (``ValueError`` or
``TypeError``), so a notebook can catch either.
"""

from __future__ import annotations

import functools
import sys
import types

import numpy as np

from .i18n import _

__all__ = [
    "AttentionError",
    "ShapeError",
    "EmptySequenceError",
    "NonFiniteError",
    "MaskError",
    "MaskDtypeError",
    "UnknownNameError",
    "ParameterError",
    "as_float_array",
    "check_matrix",
    "check_finite",
    "check_mask",
    "check_count",
    "check_arrays",
    "code_names",
    "door",
]


class AttentionError(Exception):
    """Base class of every error raised by attention_kit."""


class ShapeError(AttentionError, ValueError):
    """An array has the wrong number of dimensions or the wrong shape."""


class EmptySequenceError(ShapeError):
    """A sequence has no tokens (n = 0) or a vector has no components."""


class NonFiniteError(AttentionError, ValueError):
    """An array holds NaN or inf."""


class MaskError(AttentionError, ValueError):
    """A mask has the wrong shape."""


class MaskDtypeError(MaskError, TypeError):
    """A mask is not boolean."""


class UnknownNameError(AttentionError, ValueError):
    """A score or alignment function was asked for by a name that does not exist."""


class ParameterError(AttentionError, ValueError):
    """A scalar parameter is out of range (temperature, window half-width, head count, ...)."""


def as_float_array(x, name: str) -> np.ndarray:
    """Return ``x`` as a float ndarray: float32/float64 keep their dtype, integers become float64."""
    try:
        arr = np.asarray(x)
    except Exception as exc:  # ragged lists and the like
        raise ShapeError(
            _("{name} could not be turned into an array ({exc}); "
            "give a list of equal-length rows or a numpy array").format(name=name, exc=exc)
        ) from None
    if arr.dtype == object or arr.dtype.kind in "USV":
        raise ShapeError(
            _("{name} must hold numbers, but it has dtype {dtype}; "
            "check for ragged rows or strings").format(name=name, dtype=arr.dtype)
        )
    if arr.dtype.kind == "c":
        raise ShapeError(_("{name} is complex ({dtype}); attention works on real numbers").format(name=name, dtype=arr.dtype))
    if arr.dtype.kind in "biu":
        arr = arr.astype(np.float64)
    elif arr.dtype not in (np.float32, np.float64):
        arr = arr.astype(np.float64)
    return arr


def check_finite(arr: np.ndarray, name: str) -> None:
    """Raise NonFiniteError if ``arr`` holds NaN or inf, saying where."""
    finite = np.isfinite(arr)
    if not finite.all():
        bad = np.argwhere(~finite)
        where = tuple(int(i) for i in bad[0])
        kind = "NaN" if np.isnan(arr[where]) else "inf"
        raise NonFiniteError(
            _("{name} holds {kind} (first at index {where}, {len_bad} bad entries in all); "
            "attention needs finite numbers: look for a division by zero or an overflow upstream").format(name=_(name), kind=kind, where=where, len_bad=len(bad))
        )


def check_matrix(
    x,
    name: str,
    *,
    expected: str = "(n, d)",
    allow_1d: bool = False,
    batch: bool = True,
    n: int | None = None,
    d: int | None = None,
    n_name: str = "n",
    d_name: str = "d",
) -> np.ndarray:
    """Validate a row-convention matrix of shape ``(..., n, d)`` and return it as floats.

    Parameters
    ----------
    x : array_like
        The array to check.
    name : str
        The argument's name, used in messages.
    expected : str
        How to describe the expected shape, for example ``"(n_k, d_k)"``.
    allow_1d : bool
        Accept a single vector of shape ``(d,)``.
    batch : bool
        Accept leading batch dimensions.
    n, d : int, optional
        Required number of rows / columns. A transposed array (shape ``(d, n)``) gets a hint to use
        ``.T``.
    """
    arr = as_float_array(x, name)
    min_nd = 1 if allow_1d else 2
    if arr.ndim < min_nd or (not batch and arr.ndim > 2):
        want = f"{expected}" + (_(" or a single vector (d,)") if allow_1d else "")
        extra = ""
        if arr.ndim == 1 and not allow_1d:
            extra = _("; for a single vector use {name}[None, :] to make it one row").format(name=name)
        if arr.ndim == 0:
            extra = _("; a scalar is not a sequence of vectors")
        if arr.ndim == 3 and not batch:
            extra = _("; a stack of per-head matrices belongs in multi_head_attention / MultiHeadParams")
        raise ShapeError(
            _("{name} has shape {shape} but {want} was expected (rows are tokens){extra}").format(name=name, shape=arr.shape, want=want, extra=extra)
        )
    if arr.size == 0 or (arr.ndim >= 2 and arr.shape[-2] == 0) or arr.shape[-1] == 0:
        raise EmptySequenceError(
            _("{name} is empty (shape {shape}); {expected} needs at least one token "
            "and one feature").format(name=name, shape=arr.shape, expected=expected)
        )
    rows = arr.shape[-2] if arr.ndim >= 2 else None
    cols = arr.shape[-1]
    transposed = arr.ndim >= 2 and (
        (n is not None and d is not None and rows == d and cols == n and n != d)
        or (n is None and d is not None and rows == d and cols != d)
        or (d is None and n is not None and cols == n and rows != n)
    )
    if (n is not None and arr.ndim >= 2 and rows != n) or (d is not None and cols != d):
        want_n = str(n) if n is not None else n_name
        want_d = str(d) if d is not None else d_name
        msg = _(
            "{name} has shape {shape} but ({want_n}, {want_d}) was expected "
            "({expected}, rows are tokens)"
        ).format(name=name, shape=arr.shape, want_n=want_n, want_d=want_d, expected=expected)
        if transposed:
            msg += _("; did you pass the column layout (d, n) of the survey? Use {name}.T").format(name=name)
        elif d is not None and cols != d:
            msg += _("; its last dimension must be {d} ({d_name})").format(d=d, d_name=d_name)
        elif n is not None and rows != n:
            msg += _("; it needs one row per input feature, {n} ({n_name})").format(n=n, n_name=n_name)
        raise ShapeError(msg)
    check_finite(arr, name)
    return arr


def check_mask(mask, shape: tuple, name: str = "mask") -> np.ndarray:
    """Validate a boolean mask that must broadcast to ``shape``; True means "may attend"."""
    m = np.asarray(mask)
    if m.dtype != np.bool_:
        raise MaskDtypeError(
            _("{name} must be boolean with True meaning 'may attend' (the polarity of PyTorch's "
            "scaled_dot_product_attention), but it has dtype {m_dtype}. Convert with "
            "{name}.astype(bool) or build it with causal_mask / padding_mask. Note that "
            "torch.nn.MultiheadAttention's attn_mask uses the opposite polarity (True = blocked); "
            "invert such a mask with ~mask").format(name=name, m_dtype=m.dtype)
        )
    try:
        np.broadcast_shapes(m.shape, tuple(shape))
        ok = np.broadcast_shapes(m.shape, tuple(shape)) == tuple(shape)
    except ValueError:
        ok = False
    if not ok:
        raise MaskError(
            _("{name} has shape {m_shape} but it must broadcast to the scores' shape {tuple_shape} "
            "(..., n_q, n_k): one row per query, one column per key. Build it with "
            "causal_mask(n_q, n_k) or padding_mask(lengths, n_k)").format(name=name, m_shape=m.shape, tuple_shape=tuple(shape))
        )
    return m


def check_positive(value, name: str, *, hint: str) -> float:
    """``value`` as a finite float > 0 (a temperature, a learning rate, a scale, an eps), else a
    ParameterError that names ``name``, what was given and ``hint``. The one validator of positive
    numbers in the package."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = float("nan")
    if isinstance(value, bool) or not np.isfinite(number) or number <= 0:
        raise ParameterError(_("{name} must be a positive number, got {value!r}; {hint}").format(name=_(name), value=value, hint=_(hint)))
    return number


def check_count(value, name: str, *, minimum: int = 1, example: str | None = None) -> int:
    """``value`` as an int >= ``minimum`` (a count or a size: tokens, heads, layers, a block, a
    window), else a ParameterError that names ``name``, what was given and, if given, an example.
    The one validator of whole numbers in the package."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        hint = _("; for example {name}={example}").format(name=name, example=example) if example else ""
        raise ParameterError(_("{name} must be a whole number >= {minimum}, got {value!r}{hint}").format(name=_(name), minimum=minimum, value=value, hint=hint))
    return int(value)


def door(check):
    """Make a function a learner's entry: check the arguments once, then run the unchecked core.

    ``check(*args, **kwargs)`` validates what a learner passed (raising the errors above, with
    their messages) and returns ``(args, kwargs)`` for the core, e.g. converted to float arrays.
    The decorated name validates and runs the core; ``name.unchecked`` is the core alone, what the
    package's own code calls on arrays it made or already checked (one room passing its output to
    the next). This decorator is the one place that says which call is which::

        @door(_check_layer_norm)
        def layer_norm(X, gamma, beta, *, eps=1e-5): ...   # a learner: validated
        layer_norm.unchecked(X, gamma, beta)                 # the package's inner call: not
    """
    def wrap(core):
        def entry(*args, **kwargs):
            args, kwargs = check(*args, **kwargs)
            return core(*args, **kwargs)

        # The entry runs under the core's name and module (its code stays here, so a traceback shows
        # the right lines): tracebacks, ``inspect`` and the grader's watch of plain-numpy answers
        # (it names the package function a learner called) see ``causal_mask``,
        # not a wrapper.
        code = entry.__code__.replace(**code_names(core))
        entry = types.FunctionType(code, core.__globals__, core.__name__, None, entry.__closure__)
        functools.update_wrapper(entry, core)
        entry.unchecked = core
        return entry

    return wrap


def code_names(core) -> dict:
    """The names a door's code object takes from ``core``: its name, and from Python 3.11 on (where
    code objects have one) its qualified name."""
    names = {"co_name": core.__name__}
    if sys.version_info >= (3, 11):
        names["co_qualname"] = core.__qualname__
    return names


def check_arrays(arrays: dict, what: str = "params") -> None:
    """Every value of ``{name: array}`` holds real numbers, all finite; else the error names it.

    One check of a whole set of weights at a model's door (the shapes are the model's business).
    """
    for name, a in arrays.items():
        arr = np.asarray(a)
        if arr.dtype.kind not in "fiub":
            raise ShapeError(_("{what}[{name!r}] must hold numbers, but it has dtype {dtype}").format(what=what, name=name, dtype=arr.dtype))
        if arr.dtype.kind == "f" and not np.isfinite(arr).all():
            check_finite(arr, f"{what}[{name!r}]")
