"""Notebook 05, *How attention learns*.

Two optimisers, SGD and Adam, in a few lines each; they update arrays in place.

``params`` and ``grads`` are either dicts ``{name: ndarray}`` with the same names, or two
``MultiHeadParams`` (the parameters and the gradients from ``multi_head_attention_backward``);
a bias that is None is skipped.

    opt = Adam(lr=0.01)
    for step in range(100):
        grads = ...            # same names and shapes as params
        opt.step(params, grads)
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..errors import NonFiniteError, ParameterError, ShapeError, check_positive
from ..i18n import N_, _

__all__ = ["SGD", "Adam", "check_learning_rate"]


def check_learning_rate(lr) -> float:
    """Return ``lr`` as a float, or raise ParameterError with a fix when it is not a positive number."""
    if isinstance(lr, bool) or not isinstance(lr, (int, float, np.integer, np.floating)):
        raise ParameterError(_("the learning rate must be a number such as 0.01, got {lr!r}").format(lr=lr))
    return check_positive(lr, N_("the learning rate"), hint=N_("try 0.01: 0 would not move the weights, "
                          "and a negative one climbs the loss"))


def _arrays(obj, what: str) -> dict:
    """``{name: array}`` for a dict or a dataclass such as MultiHeadParams (None fields skipped)."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        obj = {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
    if not isinstance(obj, dict):
        raise ParameterError(_("{what} must be a dict of arrays or a MultiHeadParams, got {kind}").format(what=what, kind=type(obj).__name__))
    return {k: v for k, v in obj.items() if v is not None}


def _pairs(params, grads):
    """Yield ``(name, param, grad)``, checking that the names, shapes and values fit."""
    p, g = _arrays(params, "params"), _arrays(grads, "grads")
    if set(p) != set(g):
        raise ParameterError(_("params and grads must have the same names: params has {sorted_p}, "
                             "grads has {sorted_g}").format(sorted_p=sorted(p), sorted_g=sorted(g)))
    for name, w in p.items():
        dw = np.asarray(g[name])
        if not isinstance(w, np.ndarray) or w.shape != dw.shape:
            raise ShapeError(_("the gradient of {name} has shape {dw_shape} but {name} has shape "
                             "{np_shape_w} (and must be a numpy array, updated in place)").format(name=name, dw_shape=dw.shape, np_shape_w=np.shape(w)))
        if not np.isfinite(dw).all():
            raise NonFiniteError(_("the gradient of {name} holds NaN or inf: training has diverged. "
                                 "Lower the learning rate and start again from fresh weights").format(name=name))
        yield name, w, dw


class SGD:
    """Plain gradient descent: ``w -= lr * dw`` (with optional momentum ``v = m v + dw; w -= lr v``)."""

    def __init__(self, lr: float = 0.1, momentum: float = 0.0):
        self.lr = check_learning_rate(lr)
        if not 0 <= momentum < 1:
            raise ParameterError(_("momentum must be in [0, 1), got {momentum!r}; 0.9 is usual, 0 turns it off").format(momentum=momentum))
        self.momentum = float(momentum)
        self.velocity: dict[str, np.ndarray] = {}

    def step(self, params, grads) -> None:
        self.lr = check_learning_rate(self.lr)  # it may have been changed since __init__
        for name, w, dw in list(_pairs(params, grads)):  # validate everything before touching any weight
            if self.momentum:
                v = self.velocity.setdefault(name, np.zeros_like(w))
                v *= self.momentum
                v += dw
                dw = v
            w -= self.lr * dw


class Adam:
    """Adam (Kingma & Ba, 2015): a step of about ``lr`` per weight, in the direction of the recent gradients.

    ``m`` and ``v`` are running means of ``dw`` and ``dw**2``; after the bias correction
    ``w -= lr * m_hat / (sqrt(v_hat) + eps)``.
    """

    def __init__(self, lr: float = 0.01, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8):
        self.lr = check_learning_rate(lr)
        b1, b2 = betas
        if not (0 <= b1 < 1 and 0 <= b2 < 1):
            raise ParameterError(_("betas must both be in [0, 1), got {betas!r}; (0.9, 0.999) is usual").format(betas=betas))
        self.betas, self.eps = (float(b1), float(b2)), float(eps)
        self.t = 0
        self.m: dict[str, np.ndarray] = {}
        self.v: dict[str, np.ndarray] = {}

    def step(self, params, grads) -> None:
        self.lr = check_learning_rate(self.lr)
        pairs = list(_pairs(params, grads))  # validate everything before touching any weight
        self.t += 1
        b1, b2 = self.betas
        c1, c2 = 1 - b1**self.t, 1 - b2**self.t  # the bias corrections
        for name, w, dw in pairs:
            if name not in self.m:
                self.m[name], self.v[name] = np.zeros_like(w), np.zeros_like(w)
            m, v = self.m[name], self.v[name]
            # the same arithmetic, in the same order, as m = b1 m + (1 - b1) dw, v = b2 v + (1 - b2) dw^2,
            # w -= lr (m / c1) / (sqrt(v / c2) + eps), with fewer temporary arrays (bit for bit equal)
            m *= b1
            m += (1 - b1) * dw
            v *= b2
            t = (1 - b2) * dw
            t *= dw
            v += t
            step = np.divide(v, c2, out=t)  # v_hat
            np.sqrt(step, out=step)
            step += self.eps
            np.divide(np.divide(m, c1) * self.lr, step, out=step)
            w -= step
