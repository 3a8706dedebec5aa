"""The grader's side door into a learner's kernel: it runs there, after the learner's notebook,
and answers the grader's requests with data only. It decides nothing.

The grader (``execute.py``) appends :func:`setup_cell` to the executed notebook. That cell uses
only Python statements (``def``, ``import``, ``del``): no name the learner could have redefined.
It drops every ``attention_kit`` module from ``sys.modules`` and loads the package again from the
course's own folder (by its path, so an ``attention_kit.py`` the notebook wrote into its working
folder is never picked up). Then the grader sends one :func:`request_cell` per request:

* ``describe``: for each answer name, whether it is missing, a function, or a value (the value as
  data, ``wire.encode``);
* ``call``: call the learner's function on arguments sent as data (``wire.decode``), with a time
  limit, everything it prints captured and dropped, and send back its result (as data), the
  exception it raised (type name and message), and its arguments as they are after the call (a
  function that changes its input in place shows it). For an exercise that asks for plain numpy,
  every ``attention_kit`` function the answer reaches, by whatever route (``ak.softmax``,
  ``sys.modules[...]``, ``importlib``, ``__import__``, a copy made before grading), refuses to
  run while the answer runs (:func:`_watch`: a profile hook on the code of the package's files)
  and the reply names it.

Each reply is one line ``<nonce> <json>``; the nonce is drawn by the grader for this notebook.
The grader computes every verdict itself from these replies, in its own process: what the
learner's code does to numpy, builtins, ``attention_kit`` or this module in the kernel can change
only the data its own functions return.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import sys
import threading
import time
import types
from pathlib import Path

from . import wire

__all__ = ["setup_cell", "request_cell", "serve", "ready_reply", "replaced_names", "replaced_note"]

_SETUP = '''\
def __attention_kit_setup__():
    import importlib.util
    import sys
    for __name in [__m for __m in sys.modules if __m == "attention_kit" or __m.startswith("attention_kit.")]:
        del sys.modules[__name]
    __spec = importlib.util.spec_from_file_location(
        "attention_kit", {init!r}, submodule_search_locations=[{package!r}])
    sys.modules["attention_kit"] = importlib.util.module_from_spec(__spec)
    __spec.loader.exec_module(sys.modules["attention_kit"])
    import attention_kit.grading.in_kernel
    attention_kit.grading.in_kernel.serve(sys._getframe(0).f_globals, {nonce!r}, '{{"op": "ready"}}')
__attention_kit_setup__()
'''

_REQUEST = '''\
def __attention_kit_request__():
    import sys
    sys.modules["attention_kit.grading.in_kernel"].serve(sys._getframe(0).f_globals, {nonce!r}, {request!r})
__attention_kit_request__()
'''

PACKAGE_DIR = str(Path(__file__).resolve().parents[1]) + os.sep
_HERE = __file__  # this module's code (the time limit's signal handler) is never the learner's call


def setup_cell(nonce: str) -> str:
    """Source of the cell that loads a fresh ``attention_kit`` in the learner's kernel."""
    package = Path(__file__).resolve().parents[1]
    return _SETUP.format(init=str(package / "__init__.py"), package=str(package), nonce=nonce)


def request_cell(nonce: str, request: dict) -> str:
    """Source of the cell that sends ``request`` to :func:`serve`."""
    return _REQUEST.format(nonce=nonce, request=json.dumps(request))


class _TimeLimit(BaseException):
    """The learner's function ran past its time limit (a BaseException: ``except Exception`` in the
    learner's code does not swallow it)."""


class _Refused(BaseException):
    """An ``attention_kit`` function was called while a plain-numpy answer ran."""


@contextlib.contextmanager
def _time_limit(seconds: float):
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_alarm(signum, frame):
        raise _TimeLimit()

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, max(0.01, seconds))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


class _Watch:
    """While a plain-numpy answer runs: refuse every call into the package's files made from
    outside them, except the functions ``allow`` names and the grader's own test functions."""

    def __init__(self, allow, codes):
        self.allow, self.codes = set(allow), set(codes)
        self.used: str | None = None

    def __call__(self, frame, event, arg):
        if event != "call" or self.used is not None:
            return
        code = frame.f_code
        if not code.co_filename.startswith(PACKAGE_DIR) or code in self.codes or code.co_filename == _HERE:
            return  # not the package's, a test function the grader sent, or this module (its time limit)
        caller = frame.f_back
        if caller is not None and caller.f_code.co_filename.startswith(PACKAGE_DIR):
            return  # the package's own inner call, or this module's
        if code.co_name in self.allow:
            return
        module = frame.f_globals.get("__name__", "attention_kit")
        self.used = f"{module}.{getattr(code, 'co_qualname', code.co_name)}"
        raise _Refused(f"{self.used} may not be used in this exercise")


_NUMPY_MODULES = ("numpy", "numpy.testing", "numpy.linalg", "numpy.random", "math")


def _foreign(value, home: str) -> bool:
    """True when ``value``, found in numpy's (or math's) namespace, is not that library's own: a
    function whose code lives elsewhere (a learner's ``lambda``), a partial, a callable object of
    another module. A decorator's wrapper counts as the function it wraps."""
    if isinstance(value, (type, types.ModuleType)) or not callable(value):
        return False
    if isinstance(value, types.FunctionType):
        seen = 0
        while hasattr(value, "__wrapped__") and seen < 5:  # contextmanager, functools.wraps
            value, seen = value.__wrapped__, seen + 1
        code = getattr(value, "__code__", None)
        return code is None or not code.co_filename.startswith(home)
    owners = (getattr(value, "__module__", None), type(value).__module__,
              type(getattr(value, "__self__", None)).__module__)  # numpy's C, Cython and bound functions
    return not any(str(m or "").startswith(("numpy", "math")) for m in owners)


def replaced_library_functions() -> list[str]:
    """The public functions of numpy (and ``math``) that the notebook replaced, as ``np.name``:
    reported to the teacher. It cannot change a verdict: the checkers run with the grader's own
    numpy."""
    import numpy

    home = os.path.dirname(numpy.__file__)
    out = []
    for name in _NUMPY_MODULES:
        module = sys.modules.get(name)
        if module is None:
            continue
        short = "math" if name == "math" else "np" + name[len("numpy"):]
        for attr, value in list(vars(module).items()):
            if attr.startswith("_"):
                continue
            if name == "math":
                bad = not isinstance(value, (float, types.BuiltinFunctionType, types.ModuleType, type))
            else:
                bad = _foreign(value, home)
            if bad:
                out.append(f"{short}.{attr}")
    return sorted(out)


def ready_reply(outputs: list, nonce: str) -> dict | None:
    """The grader's side: the reply to the setup cell's ``ready`` (None when the kernel sent none)."""
    for out in outputs:
        if out.get("output_type") != "stream":
            continue
        for line in str(out.get("text", "")).splitlines():
            if line.startswith(nonce + " "):
                try:
                    reply = json.loads(line[len(nonce) + 1:])
                except ValueError:
                    return {}
                return reply if isinstance(reply, dict) else {}
    return None


def replaced_names(reply: dict | None) -> list[str]:
    """The grader's side: the numpy functions the ``ready`` reply says the notebook replaced."""
    names = (reply or {}).get("replaced", [])
    return [str(n)[:60] for n in names][:40] if isinstance(names, list) else []


def replaced_note(names: list[str]) -> str:
    """The note for the teacher on a notebook that replaced numpy functions."""
    from ..i18n import _  # the grader's side only: this module also runs in the learner's kernel

    more = _(" and {n} more").format(n=len(names) - 8) if len(names) > 8 else ""
    return _("the notebook replaced {names}{more} with code of its own; the grade is not affected (the "
             "answers were checked with the grader's own numpy), but you may want to ask why").format(
        names=", ".join(names[:8]), more=more)


def _short(dotted: str) -> str:
    parts = dotted.split(".")
    return "ak." + parts[-1] if len(parts) > 1 else "attention_kit"


def _describe(namespace: dict, names) -> dict:
    out = {}
    for name in names:
        if name not in namespace:
            out[name] = {"kind": "missing"}
            continue
        value = namespace[name]
        if callable(value) and not isinstance(value, type):
            out[name] = {"kind": "function"}
        else:
            out[name] = {"kind": "value", "value": wire.encode(value)}
    return out


def _call(namespace: dict, request: dict) -> dict:
    name = request["name"]
    fn = namespace.get(name)
    if fn is None or not callable(fn):
        return {"raised": ["NameError", f"{name} is not a function in your notebook"]}
    args = wire.decode(request.get("args"), allow_functions=True)
    kwargs = wire.decode(request.get("kwargs"), allow_functions=True)
    reply: dict = {}
    watch = None
    if request.get("allow") is not None:
        from ..check.plain import library_use

        allow = tuple(request["allow"])
        static = library_use(fn, allow)
        if static is not None:
            reply["used"] = static
        codes = [getattr(a, "__code__", None) for a in (*args, *kwargs.values())]
        watch = _Watch(allow, [c for c in codes if c is not None])
    captured = io.StringIO()
    started = time.perf_counter()
    try:
        with _time_limit(float(request.get("timeout", 10.0))), \
                contextlib.redirect_stdout(captured), contextlib.redirect_stderr(captured):
            if watch is not None:
                threading.setprofile(watch)
                sys.setprofile(watch)
            try:
                if request.get("repeat") is None:
                    result = fn(*args, **kwargs)
                else:  # n calls on the same arguments: arrays fresh each time, the rest shared
                    result = []
                    for _ in range(int(request["repeat"])):
                        result.append(fn(*[a.copy() if hasattr(a, "copy") and hasattr(a, "shape") else a
                                           for a in args], **kwargs))
            finally:
                if watch is not None:
                    hook = sys.getprofile()
                    sys.setprofile(None)
                    threading.setprofile(None)
                    if hook is not watch and watch.used is None:
                        reply["tampered"] = True
        reply["result"] = wire.encode(result)
    except _TimeLimit:
        reply["timeout"] = True
    except _Refused:
        pass
    except MemoryError:
        reply["raised"] = ["MemoryError", "ran out of memory"]
    except BaseException as exc:  # the learner's exception (SystemExit from exit() too): report it
        try:
            message = str(exc)[:400]
        except BaseException:
            message = ""
        reply["raised"] = [type(exc).__name__[:60], message]
    reply["elapsed"] = time.perf_counter() - started
    if watch is not None and watch.used is not None:
        reply.setdefault("used", _short(watch.used))  # the learner's own words first, if read
    reply["args_after"] = wire.encode(list(args))
    return reply


def serve(namespace: dict, nonce: str, request_text: str) -> None:
    """Answer one request of the grader: write ``<nonce> <json reply>`` to the cell's output."""
    out = sys.stdout
    try:
        request = json.loads(request_text)
        op = request.get("op")
        if op == "ready":
            reply = {"ready": True}
            try:
                reply["replaced"] = replaced_library_functions()
            except BaseException:  # a namespace the learner broke: nothing to report, still ready
                reply["replaced"] = []
        elif op == "describe":
            reply = {"answers": _describe(namespace, request["names"])}
        elif op == "call":
            reply = _call(namespace, request)
        else:
            reply = {"error": f"unknown request {op!r}"}
    except BaseException as exc:  # a reply always goes back: the grader never waits for nothing
        reply = {"error": f"{type(exc).__name__}: {exc}"[:400]}
    try:
        text = json.dumps(reply)
    except (TypeError, ValueError) as exc:
        text = json.dumps({"error": f"the reply could not be written: {exc}"[:400]})
    out.write(f"{nonce} {text}\n")
    out.flush()
