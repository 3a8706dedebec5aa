"""Notebooks 01-02 (and 08's tokens): the vectors a learner types into an explorer.

Parse what a learner types into a vector: an allow-list, a length cap, finite numbers only.

No ``eval``, ``exec`` or ``literal_eval``: the text is matched against regular expressions and
only plain decimal numbers are turned into floats.
"""

from __future__ import annotations

import re

import numpy as np

from ..errors import AttentionError
from ..i18n import N_, _

__all__ = ["VectorParseError", "parse_vector", "format_vector", "parse_tokens"]


class VectorParseError(AttentionError, ValueError):
    """The text typed for a vector is not a list of finite numbers of the right length."""


_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_ALLOWED = re.compile(r"[0-9eE+\-.,;\s\[\]()]*")
_SEPARATOR = re.compile(r"\s*[,;]\s*|\s+")
_NONFINITE = {"nan", "+nan", "-nan", "inf", "+inf", "-inf", "infinity", "+infinity", "-infinity"}
EXAMPLE = N_("e.g. 0.1, 0.5")


def _show(s: str, limit: int = 20) -> str:
    return repr(s if len(s) <= limit else s[: limit - 1] + "…")


def parse_vector(text, *, length: int | None = None, max_chars: int = 200) -> np.ndarray:
    """Turn typed text such as ``"0.1, 0.5"``, ``"[0.1 0.5]"``, ``"(0.1, 0.5)"`` or ``"-1e-2; 3"``
    into a float vector.

    Numbers are separated by commas, semicolons or spaces, optionally inside one pair of ``[]`` or
    ``()``. Only plain decimal numbers (with an optional exponent) are accepted.

    Parameters
    ----------
    text : str
        What was typed.
    length : int, optional
        The number of components required (for example 2 for a 2-D vector).
    max_chars : int
        Longer text is refused before it is looked at.

    Returns
    -------
    ndarray, shape (length,)

    Raises
    ------
    VectorParseError
        With a short message that names the problem and the fix.
    """
    if not isinstance(text, str):
        raise VectorParseError(_("expected text, got {kind}; type numbers, {example}").format(kind=type(text).__name__, example=_(EXAMPLE)))
    if len(text) > max_chars:
        raise VectorParseError(_("too long ({n_chars} characters, at most {max_chars}); "
                               "type just the numbers, {example}").format(n_chars=len(text), max_chars=max_chars, example=_(EXAMPLE)))
    s = text.strip()
    if not s:
        raise VectorParseError((_("empty: type {length} numbers, {example}") if length else _("empty: type some numbers, {example}")).format(length=length, example=_(EXAMPLE)))
    if not _ALLOWED.fullmatch(s):
        for tok in _SEPARATOR.split(s.strip("[]() ")):
            if tok.lower() in _NONFINITE:
                raise VectorParseError(_("{text} is not a finite number; "
                                       "use ordinary numbers only, {example}").format(text=_show(tok), example=_(EXAMPLE)))
        bad = next((t for t in _SEPARATOR.split(s) if not _ALLOWED.fullmatch(t)), s)
        raise VectorParseError(_("{text} is not a number; type plain numbers "
                               "separated by commas, {example}").format(text=_show(bad), example=_(EXAMPLE)))
    if s[0] in "[(":
        close = "]" if s[0] == "[" else ")"
        if not s.endswith(close):
            raise VectorParseError(_("{bracket!r} is not closed; end with {close!r} or drop the brackets").format(bracket=s[0], close=close))
        s = s[1:-1].strip()
    elif s[-1] in ")]":
        raise VectorParseError(_("{bracket!r} has no opening bracket; drop it, {example}").format(bracket=s[-1], example=_(EXAMPLE)))
    if not s:
        raise VectorParseError((_("empty: type {length} numbers, {example}") if length else _("empty: type some numbers, {example}")).format(length=length, example=_(EXAMPLE)))
    tokens = _SEPARATOR.split(s)
    if "" in tokens:
        raise VectorParseError(_("two separators in a row (or a stray one at an end); {example}").format(example=_(EXAMPLE)))
    values = []
    for tok in tokens:
        if not _NUMBER.fullmatch(tok):
            if any(c in tok for c in "[]()"):
                raise VectorParseError(_("{text}: only one pair of brackets around the whole "
                                       "vector is allowed, {example}").format(text=_show(tok), example=_(EXAMPLE)))
            raise VectorParseError(_("{text} is not a number; type plain numbers "
                                   "separated by commas, {example}").format(text=_show(tok), example=_(EXAMPLE)))
        v = float(tok)
        if not np.isfinite(v):
            raise VectorParseError(_("{text} is too large (it overflows to infinity); "
                                   "use a number below 1e308").format(text=_show(tok)))
        values.append(v)
    if length is not None and len(values) != length:
        raise VectorParseError((_("expected {length} numbers (one per component), got {got}") if length != 1 else
                               _("expected {length} number (one per component), got {got}")).format(length=length, got=len(values)))
    return np.array(values, dtype=float)


def format_vector(v) -> str:
    """Format a vector the way the text boxes show it, e.g. ``"0.1, 0.5"``."""
    return ", ".join(f"{round(float(x), 6) + 0.0:g}" for x in np.asarray(v).ravel())


def parse_tokens(text, vocabulary, *, max_tokens: int, min_tokens: int = 1) -> np.ndarray:
    """Turn typed tokens such as ``"A B C A B"`` into their ids in ``vocabulary`` (notebook 08).

    Tokens are separated by spaces or commas and matched without regard to case; each must be
    one of ``vocabulary`` (a sequence of names). Raises VectorParseError naming the problem.
    """
    if not isinstance(text, str):
        raise VectorParseError(_("expected text, got {kind}; type tokens such as "
                               "{some}").format(kind=type(text).__name__, some=' '.join(vocabulary[:3])))
    if len(text) > 10 * max_tokens:
        raise VectorParseError(_("too long ({n_chars} characters); type at most {max_tokens} tokens").format(n_chars=len(text), max_tokens=max_tokens))
    known = {str(v).lower(): i for i, v in enumerate(vocabulary)}
    tokens = [t for t in re.split(r"[\s,]+", text.strip()) if t]
    if len(tokens) < min_tokens:
        raise VectorParseError(_("type at least {min_tokens} tokens, such as {some}").format(min_tokens=min_tokens, some=' '.join(vocabulary[:3])))
    if len(tokens) > max_tokens:
        raise VectorParseError(_("{n_tokens} tokens, but the model reads at most {max_tokens}; "
                               "drop some").format(n_tokens=len(tokens), max_tokens=max_tokens))
    bad = [t for t in tokens if t.lower() not in known]
    if bad:
        raise VectorParseError(_("{word} is not a token of this model; it knows "
                               "{vocabulary}").format(word=_show(bad[0]), vocabulary=' '.join(map(str, vocabulary))))
    return np.array([known[t.lower()] for t in tokens], dtype=np.int64)
