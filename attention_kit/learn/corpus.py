"""Notebook 06, *A tiny language model*.

The tiny language model's text: eight public-domain nursery rhymes, split into word tokens.

Tokens are **words** (with ``,`` ``.`` ``?`` as tokens of their own and ``/`` for a line break), not
characters: a vocabulary of about 150 words keeps the model and its attention pictures small
enough to read, and a phrase such as "humpty dumpty sat on" is four tokens, one per heatmap row.
"""

from __future__ import annotations

import re
from importlib import resources

import numpy as np

from ..errors import ParameterError
from ..i18n import _

__all__ = ["load_rhymes", "tokenize", "Vocab", "UnknownWordError"]

_TOKEN = re.compile(r"[a-z']+|[,.?/]")


class UnknownWordError(ParameterError):
    """Words that are not in the model's vocabulary.

    Attributes
    ----------
    unknown : list of str
        The unknown words, in the order typed (each once).
    known : str
        The vocabulary, ready to show: the words sorted, then the punctuation marks.
    """

    def __init__(self, unknown: list[str], known: str, size: int):
        self.unknown, self.known = unknown, known
        self.headline = _("the model does not know {words}").format(words=", ".join(repr(u) for u in unknown))
        self.size = size
        super().__init__(_("{headline}; it knows only the {size} words of its rhymes: {known}")
                         .format(headline=self.headline, size=size, known=known))


def load_rhymes() -> list[str]:
    """The rhymes of ``attention_kit/data/rhymes.txt``, one string per rhyme (lines kept)."""
    text = resources.files("attention_kit").joinpath("data/rhymes.txt").read_text(encoding="utf-8")
    lines = [ln.rstrip() for ln in text.splitlines() if not ln.startswith("#")]
    return [b.strip() for b in "\n".join(lines).split("\n\n") if b.strip()]


def tokenize(text: str) -> list[str]:
    """Lower-case word tokens; punctuation ``, . ?`` are tokens, and each line break is ``/``.

    >>> tokenize("Humpty Dumpty sat on a wall,\\nHumpty Dumpty had a great fall.")[:8]
    ['humpty', 'dumpty', 'sat', 'on', 'a', 'wall', ',', '/']
    """
    if not isinstance(text, str):
        raise ParameterError(_("text must be a string, got {kind}").format(kind=type(text).__name__))
    return _TOKEN.findall(text.lower().replace("\n", " / "))


class Vocab:
    """Words to ids and back. Ids follow the order of first appearance in ``tokens``.

    Parameters
    ----------
    tokens : sequence of str
    """

    def __init__(self, tokens):
        self.words: list[str] = list(dict.fromkeys(tokens))
        if not self.words:
            raise ParameterError(_("a vocabulary needs at least one token"))
        self.index = {w: i for i, w in enumerate(self.words)}

    def __len__(self) -> int:
        return len(self.words)

    def __contains__(self, word: str) -> bool:
        return word in self.index

    def encode(self, text) -> np.ndarray:
        """Token ids, shape (n,), of a string (tokenized first) or a list of tokens.

        An unknown word raises :class:`UnknownWordError` naming it and listing the known words.
        """
        toks = tokenize(text) if isinstance(text, str) else list(text)
        if not toks:
            raise ParameterError(_("the text holds no words: type a few words of the rhymes, "
                                 "e.g. 'humpty dumpty sat on'"))
        unknown = [t for t in toks if t not in self.index]
        if unknown:
            words = sorted(w for w in self.words if w[0].isalpha())
            marks = " ".join(f"“{w}”" for w in self.words if not w[0].isalpha())
            shown = ", ".join(words) + (_("; and the marks {marks}").format(marks=marks) if marks else "")
            raise UnknownWordError(list(dict.fromkeys(unknown)), shown, len(self))
        return np.array([self.index[t] for t in toks], dtype=np.int64)

    def decode(self, ids) -> list[str]:
        """The words of token ids."""
        return [self.words[int(i)] for i in np.asarray(ids).reshape(-1)]

    @staticmethod
    def join(words) -> str:
        """Words back to readable text: no space before punctuation, a new line for ``/``."""
        out = ""
        for w in words:
            if w == "/":
                out = out.rstrip() + "\n"
            elif w in ",.?" or not out or out.endswith("\n"):
                out += w
            else:
                out += " " + w
        return out
