"""Exercise checker for notebook 05 (how attention learns): the gradient check.

* ``gradient_check(fn)``: ``fn(f, x, analytic, eps) -> relative error``; catches an absolute error
  (which hides the scale of the gradient), an error measured against one gradient alone (it treats
  the two unlike and can exceed 1) or against the larger of the two (it can exceed 1 too), a one-sided
  difference, a division by eps where the two points are 2 eps apart, a step of its own instead of the
  eps passed (two values of eps are tried), an error that is not bounded when the gradients point
  opposite ways, x perturbed in place, a copy of x whose entries are never put back (a function whose
  entries interact shows it), an error that sees only the gradients' directions (1 - cosine
  similarity) and a numerical gradient of the wrong sign. ``attention_kit.check.backprop`` imports
  it, with notebook 05's other checkers.
"""

from __future__ import annotations

import numpy as np

from ..i18n import N_, _
from . import as_floats, not_attempted, not_done, report, shape_text, try_call
from .plain import plain_numpy
from .recorded import recorded, reference

__all__ = ["gradient_check"]

STUB = N_("no answer yet: replace the `...` after `return` with your code, then run the cell again")


# ---------------------------------------------------------------- gradient check

_EPS = 1e-4  # central differences: ~1e-8 relative here; one-sided: ~1e-4, so the two cannot be confused
_BIG_EPS = 0.1  # a second step, large enough that its central difference's error shows: the eps passed is used


def _curved(z):
    """A lot of curvature (module-level, so the grader can send it to a learner's kernel by name)."""
    return float(np.sum(np.sin(3 * z) * z**2))


def _tiny(z):
    """A gradient of order 1e-9."""
    return 1e-9 * float(np.sum(z**3))


def _huge(z):
    """A gradient of order 1e6."""
    return 1e6 * float(np.sum(np.cos(z)))


def _exp(z):
    """Every entry's central difference is off by the same factor, sinh(eps) / eps: any relative error
    that treats both gradients alike, by norms or entry by entry, gives the same number."""
    return float(np.sum(np.exp(z)))


def _coupled(z):
    """Not a sum of one function per entry: every pair of entries interacts, so a numerical gradient
    taken at a point that has drifted (earlier entries never put back) shows."""
    v = z.ravel()
    k = np.arange(v.size)
    return float(v @ (1.0 / (1.0 + np.abs(k[:, None] - k[None, :]))) @ v + np.sum(np.sin(v)))


_FUNCTIONS = {"curved": _curved, "tiny": _tiny, "huge": _huge, "exp": _exp, "coupled": _coupled}


@reference
def _coupled_grad(x) -> np.ndarray:
    """The gradient of ``_coupled``: its matrix is symmetric, so twice the matrix times x, plus cos."""
    k = np.arange(x.size)
    return (2 / (1.0 + np.abs(k[:, None] - k[None, :])) @ x.ravel()).reshape(x.shape) + np.cos(x)


@reference
def _numeric(f, x, eps, kind: str) -> np.ndarray:
    g = np.zeros_like(x)
    drift, up_all, down_all = x.copy(), x.copy(), x.copy()  # copies never put back (see "never put back")
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += eps
        down[i] -= eps
        if kind == "drift":  # one copy: each entry left at x - eps after its turn
            drift[i] += eps
            fp = f(drift)
            drift[i] -= 2 * eps
            g[i] = (fp - f(drift)) / (2 * eps)
        elif kind == "drift both":  # two copies, one pushed up and one down, entry after entry
            up_all[i] += eps
            down_all[i] -= eps
            g[i] = (f(up_all) - f(down_all)) / (2 * eps)
        elif kind == "central":
            g[i] = (f(up) - f(down)) / (2 * eps)
        elif kind == "one-sided":
            g[i] = (f(up) - f(x)) / eps
        else:  # "over eps": a central difference divided by eps, not 2 eps
            g[i] = (f(up) - f(down)) / eps
    return g


@recorded
def _gradient_table() -> list[dict]:
    """Per case: the function's name, x, the analytic gradient, the band a right checker's answer
    falls in, the relative error itself (a wrong gradient that is a multiple of the right one gives
    the same number with any measure that treats both gradients alike and stays between 0 and 1),
    and what the usual mistakes return (absolute errors, the difference against one gradient alone,
    a one-sided difference, a division by eps); the wrong gradient's case also keeps a second analytic
    gradient, half the right one, on which an error against the larger gradient differs from one
    against the analytic gradient alone; a case uses a large eps, so that an answer which
    ignores the eps it is given shows, and the last one's gradient points the wrong way, where an
    error that is not bounded by 1 shows."""
    from ..learn.backward import relative_error

    x = np.linspace(-1.2, 1.3, 6).reshape(2, 3)  # no 0, where a gradient would vanish
    y = np.linspace(0.4, 1.5, 5)                  # another shape: nothing about the size is fixed
    cases = [(N_("a correct gradient"), "curved", x, np.cos(3 * x) * 3 * x**2 + 2 * x * np.sin(3 * x), "small", _EPS),
             (N_("a wrong gradient of size 1e-9"), "tiny", y, 2 * (3e-9 * y**2), "large", _EPS),  # twice the truth: 1/3
             (N_("a correct gradient of size 1e6"), "huge", x, -1e6 * np.sin(x), "small", _EPS),
             (N_("a correct gradient with a large step, eps = 0.1"), "exp", y, np.exp(y), "step", _BIG_EPS),
             # the right gradient's opposite: the course's error is 1, and a measure whose denominator can
             # vanish (|a - n| / |a + n|) is not bounded
             (N_("a gradient of the wrong sign"), "curved", y, -(np.cos(3 * y) * 3 * y**2 + 2 * y * np.sin(3 * y)),
              "large", _EPS),
             # every pair of entries interacts: a copy of x that is never put back drifts, and shows
             (N_("a correct gradient of a function whose entries interact"), "coupled", x, _coupled_grad(x),
              "small", _EPS)]
    out = []
    for case, name, xc, analytic, band, eps in cases:
        num = {k: _numeric(_FUNCTIONS[name], xc, eps, k)
               for k in ("central", "one-sided", "over eps", "drift", "drift both")}
        diff = analytic - num["central"]
        size = {"analytic": float(np.linalg.norm(analytic)), "numerical": float(np.linalg.norm(num["central"]))}
        half = analytic / 4 if band == "large" else None  # half the truth: the numerical gradient is the larger
        out.append({"case": case, "f": name, "x": xc, "analytic": analytic, "band": band, "eps": eps,
                    "want": relative_error(analytic, num["central"]),
                    "half": half,
                    # on ``half``, the difference against the larger of the two gradients (the numerical one)
                    "half larger": None if half is None else float(np.linalg.norm(half - num["central"])
                                                                   / np.linalg.norm(num["central"])),
                    "absolute": [float(np.max(np.abs(diff))), float(np.linalg.norm(diff))],
                    # the difference against one gradient alone (or the larger: here the analytic one)
                    "one gradient": {k: float(np.linalg.norm(diff)) / v for k, v in size.items()},
                    # 1 - the cosine of the angle between the two: 0 for gradients that point the same way
                    "cosine": float(1 - analytic.ravel() @ num["central"].ravel()
                                    / (size["analytic"] * size["numerical"])),
                    "one-sided": relative_error(analytic, num["one-sided"]),
                    # a copy of x never put back: as right as the central difference on a sum over entries
                    "never put back": [relative_error(analytic, num[k]) for k in ("drift", "drift both")],
                    "over eps": relative_error(analytic, num["over eps"])})
    return out


def _cases():
    """(name, f, x, analytic, wanted band) for the gradient-check checker."""
    return [(c["case"], _FUNCTIONS[c["f"]], c["x"], c["analytic"], c["band"]) for c in _gradient_table()]


def _larger_of_the_two(fn, c) -> bool:
    """True when ``fn`` measures the difference against the larger of the two gradients: on the wrong
    gradient's second analytic gradient (half the truth) the numerical gradient is the larger, and
    that measure gives a number other than the one against the analytic gradient alone."""
    x_in = c["x"].copy()
    x_in.setflags(write=False)
    got, err = try_call(fn, _FUNCTIONS[c["f"]], x_in, c["half"].copy(), c["eps"])
    v = None if err else as_floats(got)
    return v is not None and v.size == 1 and bool(np.isclose(float(v.reshape(())), c["half larger"], rtol=0.01))


def _sign_turned(fn, c) -> bool:
    """True when ``fn``'s numerical gradient has the wrong sign: given the analytic gradient with its
    sign turned, it reports a match (a numerical gradient left at 0 still gives 1)."""
    x_in = c["x"].copy()
    x_in.setflags(write=False)
    got, err = try_call(fn, _FUNCTIONS[c["f"]], x_in, -c["analytic"], c["eps"])
    v = None if err else as_floats(got)
    return v is not None and v.size == 1 and bool(abs(float(v.reshape(()))) <= 1e-6)


@plain_numpy()
def gradient_check(fn) -> bool:
    """Check ``fn(f, x, analytic, eps) -> float``: the relative error between ``analytic`` and a
    numerical gradient of ``f`` at ``x``."""
    if not_done(fn):
        return not_attempted(_("no answer yet: write my_gradient_check(f, x, analytic, eps) and pass it in"))
    for c in _gradient_table():
        case, f, x, analytic, band = _(c["case"]), _FUNCTIONS[c["f"]], c["x"], c["analytic"], c["band"]
        x_in = x.copy()
        x_in.setflags(write=False)  # perturbing x itself (in place) fails here, restored or not
        got, err = try_call(fn, f, x_in, analytic.copy(), c["eps"])
        if got is Ellipsis:
            return not_attempted(_(STUB))
        if err and "read-only" in err:
            return report(False, _("{case}: your function perturbs x itself (in place); the checker passes x "
                                   "read-only to show it. The task says to perturb a copy: changing the caller's x, "
                                   "even if you put it back, leaves it changed after an exception or an early return")
                          .format(case=case))
        if err:
            return report(False, _("{case}: {hint}").format(case=case, hint=err))
        v = as_floats(got)
        if v is None or v.size != 1 or not np.isfinite(v):
            return report(False, _("{case}: return one finite number, the relative error, got {got}").format(
                case=case, got=shape_text(got)))
        v = float(v.reshape(()))
        if band == "large" and abs(v - c["cosine"]) <= 1e-9 and not np.isclose(v, c["want"], rtol=0.01):
            return report(False, _("{case}: got {v}, as if the two gradients agreed. Your error looks only at "
                                   "their directions (the angle between them), and these two point the same way; "
                                   "it misses a gradient of the right direction and the wrong size. Measure the "
                                   "difference between the two gradients against their sizes").format(
                                       case=case, v=f"{v:.3g}"))
        if v < 0:
            return report(False, _("{case}: a relative error compares the size of a difference with the sizes "
                                   "of the gradients, so it is never negative; got {v}").format(case=case, v=f"{v:.3g}"))
        if band == "small" and v <= 1e-6:
            continue
        if band in ("large", "step") and np.isclose(v, c["want"], rtol=0.01):
            continue
        if v > 1e-6 and not np.isclose(v, c["want"], rtol=0.01) and any(
                np.isclose(v, e, rtol=0.01, atol=0) for e in c["never put back"]):
            return report(False, _("{case}: got {v}: your numerical gradient is measured at points that drift "
                                   "away from x. After an entry's difference, that entry is not put back as it "
                                   "was, so each later difference starts from a point where earlier entries are "
                                   "still moved. Restore each entry (or start again from x) before moving to the "
                                   "next one, so that only one entry at a time is ever moved away from x").format(
                                       case=case, v=f"{v:.2e}"))
        if band == "small" and np.isclose(v, 1.0, rtol=1e-3, atol=0) and _sign_turned(fn, c):
            return report(False, _("{case}: got {v}, the error of two gradients of the same size pointing "
                                   "opposite ways: your numerical gradient has the wrong sign. A slope is how much "
                                   "f rises when x grows: which of the two values of f comes first in your "
                                   "difference?").format(case=case, v=f"{v:.3g}"))
        if any(np.isclose(v, e, rtol=0.05, atol=0) for e in c["absolute"]):
            return report(False, _("{case}: you returned an absolute error ({v}). It hides the scale: a "
                                   "gradient of size 1e-9 that is wrong by 100% differs by only 1e-9, and one of size "
                                   "1e6 that is right differs by more than that. Measure the difference against "
                                   "the size of the gradients themselves").format(case=case, v=f"{v:.3g}"))
        if np.isclose(v, c["one-sided"], rtol=0.2):
            return report(False, _("{case}: this is the error of a one-sided difference, {v}: its own error "
                                   "is of order eps. A difference taken symmetrically about x cancels the "
                                   "curvature's term, and its error is of order eps^2").format(case=case, v=f"{v:.1e}"))
        if np.isclose(v, c["over eps"], rtol=0.05):
            return report(False, _("{case}: your numerical gradient is twice too large: how far apart are "
                                   "the two points at which you evaluate f?").format(case=case))
        if band == "large":
            for which, e in c["one gradient"].items():
                if not np.isclose(v, e, rtol=0.01):
                    continue
                if which == "analytic" and _larger_of_the_two(fn, c):
                    msg = _("{case}: your error, {v}, divides by the larger of the two gradients' sizes. It treats "
                            "the two alike, but it is not a relative error in the course's sense: it can exceed 1 "
                            "(up to 2, when the gradients point opposite ways), so the course's thresholds do not "
                            "apply to it. Measure the difference against the sizes of both "
                            "gradients together, so that the result stays between 0 and 1")
                elif which == "analytic":
                    msg = _("{case}: your error, {v}, measures the difference against the analytic gradient alone "
                            "(here the larger of the two). A relative error must treat the two gradients alike (either "
                            "one may be the wrong one) and stay between 0 and 1 whatever they are; against one gradient "
                            "only, it grows past 1 when that gradient is much smaller than the other")
                else:
                    msg = _("{case}: your error, {v}, measures the difference against the numerical gradient alone. "
                            "A relative error must treat the two gradients alike (either one may be the wrong one) and "
                            "stay between 0 and 1 whatever they are; against one gradient only, it grows past 1 when "
                            "that gradient is much smaller than the other")
                return report(False, msg.format(case=case, v=f"{v:.3g}"))
        if v > 1 + 1e-9:
            return report(False, _("{case}: got {v}, more than 1: a relative error measured against the sizes of "
                                   "both gradients, treated alike, stays between 0 and 1 whatever they are").format(
                                       case=case, v=f"{v:.3g}" if v >= 1.005 else f"{v:.10g}"))
        if band == "step":
            if v < c["want"] / 10:
                return report(False, _("{case}: got {v}, far below the {want} that a central difference with "
                                       "this step gives: does your function use the eps it is passed, or a step "
                                       "of its own?").format(case=case, v=f"{v:.2e}", want=f"{c['want']:.2e}"))
            return report(False, _("{case}: expected a relative error of {want} (a central difference with this "
                                   "step is off by that much), got {v}; check your numerical gradient entry by "
                                   "entry, then the error's denominator").format(
                                       case=case, v=f"{v:.2e}", want=f"{c['want']:.2e}"))
        if band == "small":
            return report(False, _("{case}: a correct gradient should give a relative error below 1e-6, got {v}; "
                                   "check your numerical gradient entry by entry, then the error's denominator").format(
                                       case=case, v=f"{v:.2e}"))
        return report(False, _("{case}: this gradient is twice the right one, and your error, {v}, does not judge "
                               "it as a relative error should: measure the difference against the sizes of both "
                               "gradients, treated alike, so that the result stays between 0 and 1 and does not "
                               "depend on their scale").format(case=case, v=f"{v:.3g}"))
    return report(True, _("your gradient check is right: central differences, and an error relative to the "
                          "size of the gradients, so 1e-9 and 1e6 are judged alike"))
