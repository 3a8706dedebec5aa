"""Words for the figures' text alternatives: labels as a screen reader should read them (mathtext
without its commands), numbers as the picture prints them, lists and plurals."""

from __future__ import annotations

import re

import numpy as np

from ..i18n import _, language

__all__ = ["plain", "title_words", "figure_number", "listing", "plural", "noun", "dash_means", "short_list"]


_TEX = [(r"\\mathrm\{([^{}]*)\}", r"\1"), (r"\\mathbf\{([^{}]*)\}", r"\1"),
        (r"\\text\{([^{}]*)\}", r"\1"), (r"\\hat\{([^{}]*)\}", r"\1 hat"),
        (r"\\sqrt\{([^{}]*)\}", r"√\1"), (r"\\frac\{([^{}]*)\}\{([^{}]*)\}", r"\1 / \2"),
        (r"\\sum_\{?(\w)\}?", r"sum over \1 of "), (r"\\(?:,|;|!|quad| )", " ")]


_SYMBOLS = {"cdot": "·", "times": "×", "sigma": "σ", "theta": "θ", "alpha": "α", "beta": "β",
            "mu": "μ", "pi": "π", "top": "ᵀ", "to": "→", "rightarrow": "→", "leftarrow": "←",
            "approx": "≈", "le": "≤", "ge": "≥", "infty": "∞", "lambda": "λ", "ell": "ℓ", "dots": "…",
            "ldots": "…", "in": "∈", "log": "log", "exp": "exp", "max": "max", "min": "min"}


def plain(text: str) -> str:
    """A label as a screen reader should read it: mathtext (``$\\mathrm{softmax}(W_c c)$``)
    without its dollar signs and commands, whitespace collapsed."""

    text = str(text)
    if "$" in text:
        for pat, rep in _TEX:
            text = re.sub(pat, rep, text)
        text = re.sub(r"\\([A-Za-z]+)", lambda m: _SYMBOLS.get(m.group(1), m.group(1)), text)
        text = text.replace("$", "").replace("{", "").replace("}", "")
    return " ".join(text.split())


#: A title's line starting with one of these goes on with the line before (a sentence wrapped).
_GOES_ON = frozenset("when where while which that and or but of for in on with without to from at by as "
                     "than after before if because".split())
#: A sign that links what is before it to what is after (at the end of a line or the start of the next).
_BETWEEN = ("→", "=", "≈", "+", "×", "—", "–")


def title_words(text: str) -> str:
    """A title of several lines as words: each line :func:`plain`, the lines joined by "; " (a
    line that ends in a stop, colon, semicolon or comma, a line in brackets, one that goes on
    with "when", "of", ..., a line inside an open bracket, and lines linked by "→", "=", "—", ...,
    by a space): "tile 6 of 12: query block 1, key block 1; 0 of 12 tiles
    skipped", never "key block 1 0 of 12" (the line break lost)."""
    out = ""
    for line in str(text).split("\n"):
        line = plain(line)
        if not line:
            continue
        # a line that goes on with the one before: "...\n(each row sums to 1)", "which rows move\nwhen ...",
        # "(each row\nsums to 1)" (a bracket still open), "loss 2.3 →\n0.1" (a sign between them)
        joined = out.endswith((".", ":", ";", ",") + _BETWEEN) or (line.startswith("(") and line.endswith(")")) or \
            line.split()[0] in _GOES_ON or line.startswith(_BETWEEN) or out.count("(") > out.count(")")
        out = line if not out else out + (" " if joined else "; ") + line
    return out


def figure_number(v: float, scale: float = 0.0) -> str:
    v = float(v)
    if v == 0 or abs(v) < 1e-9 * scale:  # rounding noise next to the data's size: 0
        return "0"
    if abs(v) >= 1000:  # written plainly (1024, 2000, 1100), never "1e+03"
        if abs(v) >= 1e15:
            return f"{v:.3g}"
        return str(int(round(v))) if v == round(v) else str(int(round(v, 2 - int(np.floor(np.log10(abs(v)))))))
    if abs(v) < 0.01:
        return f"{v:.2g}"
    return f"{v:.3g}"


def listing(items: list[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    return _("{items} and {last}").format(items=_(", ").join(items[:-1]), last=items[-1])


def plural(noun: str) -> str:
    """ "query" -> "queries", "score function" -> "score functions" (the last word); in Chinese,
    which has no plurals, the noun itself."""
    if language() != "en" or (noun and "\u3400" <= noun[-1] <= "\u9fff"):  # a Chinese label: no plural
        return noun
    if noun.endswith("y") and noun[-2:-1] not in tuple("aeiou"):
        return noun[:-1] + "ies"
    if noun.endswith(("s", "x", "ch", "sh")):
        return noun + "es"
    return noun + "s"


def noun(label: str, default: str) -> str:
    """What an axis label says its rows or columns are, singular: "queries" -> "query",
    "score function" -> "score function", "key (position s = 0 … 5); — = exactly 0" -> "key";
    ``default`` when the label is empty or too long to be a name."""

    words = re.split(r"[(;:,]", plain(label), maxsplit=1)[0].strip()
    if not words or len(words.split()) > 4:
        return default
    first = words.split()[0].lower()
    if first in ("query", "queries"):
        return "query"
    if first in ("key", "keys"):
        return "key"
    if words.endswith("ies"):
        return words[:-3] + "y"
    if words.endswith("s") and not words.endswith("ss"):
        return words[:-1]
    return words


def dash_means(*labels: str) -> str | None:
    """What a figure says its "—" cells are ("— = exactly 0" in a label: "exactly 0"), or None."""

    for t in labels:
        m = re.search(r"—\s*=\s*([^;,()]+)", plain(t or ""))
        if m and m.group(1).strip():
            return m.group(1).strip()
    return None


def short_list(labels: list[str], limit: int = 10) -> str:
    sep = "; " if any("," in x for x in labels) else ", "  # "soft, T = 1; soft, T = 4"
    if len(labels) <= limit:
        return sep.join(labels)
    return sep.join(labels[:limit // 2]) + f"{sep}…{sep}" + sep.join(labels[-(limit // 2):])
