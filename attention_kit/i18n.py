"""The package's words in the learner's language: gettext catalogs, read with Babel.

Text a learner reads is written in English and marked ``_("...")``; ``_`` returns its translation
in the course's language, or the English when the catalog has none (or only a fuzzy one). Text
with values in it marks the template, never the finished sentence::

    report(False, _("expected shape {want}, got {got}").format(want=..., got=...))

The language: ``ATTENTION_KIT_LANG`` (``en``, ``zh``) if set, else the file
``.attention-kit-language`` in the working folder (``notebooks/zh/`` has one, so its notebooks
print in Chinese while their code cells stay the English ones), else English. The grader sets
``ATTENTION_KIT_LANG`` for the kernels of a class graded in another language.

The catalogs are ``attention_kit/locale/<lang>/LC_MESSAGES/attention_kit.po``;
the course's translation tool (in the course's repository, not in a student edition) extracts the
marked strings into them (changed English marked fuzzy, as for the notebooks) and lists what is missing.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

__all__ = ["_", "N_", "gettext", "language", "LANGUAGES", "MARKER", "catalog_file"]

LOCALE = Path(__file__).resolve().parent / "locale"
DOMAIN = "attention_kit"
MARKER = ".attention-kit-language"
LANGUAGES = ("en", "zh")
#: A string a contributor published untranslated, flagged English for now: shown in English,
#: followed by this note in the course's language ("this sentence is not translated yet").
ENGLISH_FOR_NOW = "english-for-now"
NOT_YET = {"zh": "（此句尚未译成中文）"}


def catalog_file(lang: str) -> Path:
    return LOCALE / lang / "LC_MESSAGES" / f"{DOMAIN}.po"


@lru_cache(maxsize=8)
def _marker_language(folder: str) -> str | None:
    try:
        text = (Path(folder) / MARKER).read_text(encoding="utf-8").strip()
    except OSError:
        return None
    return text if text in LANGUAGES else None


def language() -> str:
    """The course's language here: ``ATTENTION_KIT_LANG``, the folder's marker file, or ``en``."""
    env = os.environ.get("ATTENTION_KIT_LANG", "").strip()
    if env:
        if env not in LANGUAGES:
            raise ValueError(f"ATTENTION_KIT_LANG={env!r}: the course speaks {', '.join(LANGUAGES)}; "
                             "set one of them, or unset it for English")
        return env
    try:
        here = os.getcwd()
    except OSError:  # the working folder was removed
        return "en"
    return _marker_language(here) or "en"


@lru_cache(maxsize=4)
def _translations(lang: str) -> dict[str, str]:
    """msgid -> msgstr of ``lang``'s catalog, without untranslated and fuzzy entries."""
    path = catalog_file(lang)
    if lang == "en" or not path.exists():
        return {}
    from babel.messages.pofile import read_po

    with open(path, "rb") as f:
        catalog = read_po(f)
    out = {}
    for m in catalog:
        if not (m.id and isinstance(m.id, str)):
            continue
        if m.string and not m.fuzzy:
            out[m.id] = m.string
        elif ENGLISH_FOR_NOW in m.flags and lang in NOT_YET:  # published in English, said so
            out[m.id] = m.id + NOT_YET[lang]
    return out


def gettext(message: str) -> str:
    """``message`` in the course's language (the English itself when there is no translation)."""
    lang = language()
    if lang == "en":
        return message
    return _translations(lang).get(message, message)


_ = gettext


def N_(message: str) -> str:
    """Mark ``message`` for the catalog without translating it now: a hint stored in a table
    (``check/*_cases.py``, recorded when the student edition is built) is translated by ``_``
    when it is shown."""
    return message
