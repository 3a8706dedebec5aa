"""Values as data, for the grader's calls into a learner's kernel (``remote.py``, ``in_kernel.py``).

:func:`encode` turns a value into JSON text's building blocks; :func:`decode` turns them back.
Only data crosses: ``None``, booleans, numbers (Python and numpy scalars, with ``nan`` and
``inf``), strings, ``...``, lists, tuples, sets, frozensets, ranges, dicts, numpy arrays of numbers,
booleans or text (as ``.npy`` bytes, read back with ``allow_pickle=False``), numpy random generators
(their state) and functions
of ``attention_kit`` itself (by name, for the grader's own test functions). Anything else a
learner's function returns comes back as an :class:`Opaque` marker that names its type: it runs no
code on the grader's side, and a checker treats it as a wrong answer. Every container an exercise
accepts in class crosses as itself (a set as a set, a range as a range, an array of text as that
array), so that the grader's checker sees what the in-class one saw and gives the same verdict.

Decoding never imports or calls anything the data names except, on the kernel's side only
(``allow_functions=True``), an ``attention_kit`` function the grader sent.
"""

from __future__ import annotations

import base64
import importlib
import io
import math
from typing import Any

import numpy as np

__all__ = ["encode", "decode", "Opaque", "WireError"]

_MAX_DEPTH = 20
_PACKAGE = "attention_kit"


class WireError(ValueError):
    """The data is not a value this module writes."""


class Opaque:
    """A value that is not data (an object of the learner's class, a module, a generator...):
    only its type's name and a short text cross."""

    def __init__(self, type_name: str, text: str = ""):
        self.type_name, self.text = type_name, text

    def __repr__(self) -> str:
        return f"<{self.type_name} from your kernel: {self.text}>"


def _float(x: float):
    if math.isfinite(x):
        return x
    return {"float": "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")}


def _npy(arr: np.ndarray) -> str:
    buf = io.BytesIO()
    np.save(buf, np.ascontiguousarray(arr), allow_pickle=False)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def encode(value: Any, depth: int = 0) -> Any:
    """``value`` as JSON-ready data (see the module's docstring for what crosses)."""
    if depth > _MAX_DEPTH:
        return {"opaque": type(value).__name__, "text": "nested too deeply"}
    if value is None or isinstance(value, (bool, str)):
        return value
    if value is Ellipsis:
        return {"ellipsis": True}
    if isinstance(value, int) and type(value) is int:
        return value if abs(value) < 2 ** 62 else {"bigint": str(value)}
    if type(value) is float:
        return _float(value)
    if type(value) is complex:
        return {"complex": [_float(value.real), _float(value.imag)]}
    if isinstance(value, np.generic) and not isinstance(value, np.object_):
        arr = np.asarray(value)
        if arr.dtype.kind in "biufc":
            return {"scalar": _npy(arr)}
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "biufcUS":  # text too: a checker names it (no pickle needed for either)
            return {"array": _npy(value), **({} if value.flags.writeable else {"readonly": True})}
        if value.dtype.kind == "O" and value.size <= 10_000:
            return {"objarray": [encode(v, depth + 1) for v in value.ravel().tolist()],
                    "shape": list(value.shape)}
    if type(value) is list:
        return {"list": [encode(v, depth + 1) for v in value]}
    if type(value) is tuple:
        return {"tuple": [encode(v, depth + 1) for v in value]}
    if type(value) in (set, frozenset):
        items = [encode(v, depth + 1) for v in value]
        return {"set" if type(value) is set else "frozenset": items}
    if type(value) is range:
        return {"range": [encode(value.start), encode(value.stop), encode(value.step)]}
    if type(value) is dict:
        return {"dict": [[encode(k, depth + 1), encode(v, depth + 1)] for k, v in value.items()]}
    if isinstance(value, np.random.Generator):
        bg = value.bit_generator
        return {"rng": type(bg).__name__, "state": encode(bg.state, depth + 1)}
    module = getattr(value, "__module__", None)
    if callable(value) and isinstance(module, str) and (module == _PACKAGE or module.startswith(_PACKAGE + ".")) \
            and "<" not in getattr(value, "__qualname__", "<"):
        return {"function": [module, value.__qualname__]}
    try:
        text = repr(value)[:80]
    except Exception:  # the learner's __repr__
        text = ""
    return {"opaque": type(value).__name__, "text": text}


def _load(text: str) -> np.ndarray:
    try:
        return np.load(io.BytesIO(base64.b64decode(text)), allow_pickle=False)
    except Exception as exc:  # malformed bytes: never let them through as a value
        raise WireError(f"not an array: {exc}") from None


def _unfloat(x):
    if isinstance(x, dict) and "float" in x:
        return float(x["float"])
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        return float(x)
    raise WireError(f"not a float: {x!r}")


def decode(data: Any, *, allow_functions: bool = False, depth: int = 0) -> Any:
    """The value :func:`encode` wrote. ``allow_functions``: import the ``attention_kit``
    functions named in the data (the kernel's side); otherwise they decode as :class:`Opaque`."""
    if depth > _MAX_DEPTH + 1:
        raise WireError("nested too deeply")
    if data is None or isinstance(data, (bool, str, int, float)):
        return data
    if not isinstance(data, dict) or len(data) == 0:
        raise WireError(f"unexpected data {type(data).__name__}")
    sub = lambda v: decode(v, allow_functions=allow_functions, depth=depth + 1)  # noqa: E731
    if "ellipsis" in data:
        return Ellipsis
    if "float" in data:
        return _unfloat(data)
    if "bigint" in data:
        return int(str(data["bigint"]))
    if "complex" in data:
        re_, im = data["complex"]
        return complex(_unfloat(re_), _unfloat(im))
    if "scalar" in data:
        arr = _load(data["scalar"])
        return arr.reshape(()).dtype.type(arr.reshape(())[()])
    if "array" in data:
        arr = _load(data["array"])
        if data.get("readonly"):  # a checker that passes an input read-only sees a change in place fail
            arr.setflags(write=False)
        return arr
    if "objarray" in data:
        items = [sub(v) for v in data["objarray"]]
        out = np.empty(len(items), dtype=object)
        out[:] = items
        return out.reshape([int(s) for s in data["shape"]])
    if "list" in data:
        return [sub(v) for v in data["list"]]
    if "tuple" in data:
        return tuple(sub(v) for v in data["tuple"])
    if "set" in data or "frozenset" in data:
        kind = set if "set" in data else frozenset
        items = [sub(v) for v in data["set" if kind is set else "frozenset"]]
        try:
            return kind(items)
        except TypeError:  # an element that is not hashable here: not data this module writes
            raise WireError("a set of unhashable values") from None
    if "range" in data:
        bounds = [sub(v) for v in data["range"]]
        if len(bounds) != 3 or not all(type(b) is int for b in bounds):
            raise WireError(f"not a range: {bounds!r}")
        try:
            return range(*bounds)
        except ValueError as exc:  # a step of 0
            raise WireError(f"not a range: {exc}") from None
    if "dict" in data:
        out = {}
        for k, v in data["dict"]:
            key = sub(k)
            try:
                hash(key)
            except TypeError:
                key = repr(key)
            out[key] = sub(v)
        return out
    if "rng" in data:
        name = str(data["rng"])
        bg_type = getattr(np.random, name, None)
        if name not in ("PCG64", "PCG64DXSM", "MT19937", "Philox", "SFC64") or bg_type is None:
            return Opaque("Generator", name)
        bg = bg_type()
        bg.state = sub(data["state"])
        return np.random.Generator(bg)
    if "function" in data:
        module, qualname = (str(x) for x in data["function"])
        if not allow_functions or not (module == _PACKAGE or module.startswith(_PACKAGE + ".")):
            return Opaque("function", f"{module}.{qualname}")
        obj: Any = importlib.import_module(module)
        for part in qualname.split("."):
            obj = getattr(obj, part)
        return obj
    if "opaque" in data:
        return Opaque(str(data["opaque"])[:60], str(data.get("text", ""))[:80])
    raise WireError(f"unknown data {sorted(data)[:3]}")
