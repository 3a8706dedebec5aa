"""How a catalog entry follows its English (tools/translate.py's notebooks, README and package).

``merge_entries`` works as gettext's ``msgmerge`` does: a new English text gets an empty entry, a
changed one keeps its old translation marked *fuzzy* with the old English beside it (``#| msgid``),
a removed one's entry goes. Two rules go beyond msgmerge:

* **A change of numbers only is carried over.** When the English differs from the translated
  English in its numbers alone (a notebook's time in its header, a row of README's table of
  notebooks), the translation gets the same new numbers and stays translated: nothing in it needs a
  translator. It is carried over only when it is unambiguous: each changed number maps to one new
  number (a markdown table is taken row by row, the rows paired in order), and the translation
  holds every changed number as often as the English did; otherwise the entry turns fuzzy.
* **An entry can be published in English for now** (flag ``english-for-now``, set by
  ``tools/translate.py defer``): an untranslated or fuzzy entry so marked is no problem for
  ``check``, which lists it as waiting for a translator; ``build`` shows the English inside
  ``<div lang="en">`` with a note, in the edition's language, that it is not translated yet. A
  contributor who cannot translate lands an English change this way; the translation clears the
  flag (``load``).
"""

from __future__ import annotations

import re
from collections import Counter

from babel.messages.catalog import Catalog

DEFERRED = "english-for-now"
# "(The text above is not translated into Chinese yet; it is shown in English for now.)"
NOTE = {"zh": "（上面这一段还没有译成中文，暂以英文原文显示。）"}
NUMBER = re.compile(r"(?<![A-Za-z0-9_.])\d+(?:\.\d+)?(?![A-Za-z0-9_])")


def merge_entries(old: Catalog, new: Catalog, pairs: list[tuple[str, str]], name: str, part: str) -> list[str]:
    """Fill ``new`` with an entry per (key, English) pair as msgmerge would (numbers carried over,
    ``english-for-now`` kept); return one line per change (keys gone included)."""
    changes = []
    by_context = {m.context: m for m in old if m.id and m.context}
    for key, english in pairs:
        was = by_context.pop(key, None)
        if was is None:
            new.add(english, "", context=key)
            changes.append(f"{name} {key}: new")
            continue
        if was.id == english:
            new.add(english, was.string, context=key, flags=was.flags,
                    previous_id=was.previous_id, user_comments=was.user_comments)
            continue
        carried = carry_numbers(was.id, english, was.string) if was.string and not was.fuzzy else None
        if carried is not None:
            new.add(english, carried, context=key, flags=was.flags, user_comments=was.user_comments)
            changes.append(f"{name} {key}: numbers changed, carried into the translation")
            continue
        # the English changed: keep the translation to edit, marked fuzzy (and English for now if it was)
        new.add(english, was.string, context=key, flags={"fuzzy"} | (was.flags & {DEFERRED}),
                previous_id=[was.id] if was.string else [], user_comments=was.user_comments)
        changes.append(f"{name} {key}: English changed (fuzzy)")
    return changes + [f"{name} {ctx}: {part} gone, entry removed" for ctx in by_context]


def carry_numbers(old_english: str, new_english: str, translation: str) -> str | None:
    """The translation with ``old_english``'s numbers changed as ``new_english`` changed them, or
    None when the texts differ in more than numbers or the change is ambiguous (see above)."""
    if NUMBER.sub("#", old_english) != NUMBER.sub("#", new_english):
        return None
    units = _units(old_english, new_english, translation)
    out = []
    for old_u, new_u, tr_u in units:
        mapping: dict[str, str] = {}
        for a, b in zip(NUMBER.findall(old_u), NUMBER.findall(new_u), strict=True):
            if mapping.setdefault(a, b) != b:
                return None  # one number became two different ones: which is which in the translation?
        changed = {a for a, b in mapping.items() if a != b}
        had, has = Counter(NUMBER.findall(old_u)), Counter(NUMBER.findall(tr_u))
        if any(had[a] != has[a] for a in changed):
            return None
        out.append(NUMBER.sub(lambda m, mp=mapping: mp.get(m.group(), m.group()), tr_u))
    return _join(units, out, translation)


def _rows(text: str) -> list[int]:
    return [i for i, line in enumerate(text.split("\n")) if line.lstrip().startswith("|")]


def _units(old: str, new: str, tr: str) -> list[tuple[str, str, str]]:
    """The texts cut into pieces that correspond: each markdown table row (paired in order) and the
    rest; the whole texts when the translation's table rows do not pair with the English's."""
    rows_en, rows_tr = _rows(old), _rows(tr)
    if not rows_en or len(rows_en) != len(rows_tr):
        return [(old, new, tr)]
    lo, ln, lt = old.split("\n"), new.split("\n"), tr.split("\n")
    units = [(lo[i], ln[i], lt[j]) for i, j in zip(rows_en, rows_tr, strict=True)]
    rest = [("\n".join(x for k, x in enumerate(lines) if k not in set(rows))) for lines, rows in
            ((lo, rows_en), (ln, rows_en), (lt, rows_tr))]
    return [*units, (rest[0], rest[1], rest[2])]


def _join(units: list, pieces: list[str], translation: str) -> str:
    if len(units) == 1:
        return pieces[0]
    lines = translation.split("\n")
    rows = _rows(translation)
    rest = iter(pieces[-1].split("\n"))
    for i in range(len(lines)):
        lines[i] = pieces[rows.index(i)] if i in rows else next(rest)
    return "\n".join(lines)


def is_deferred(m) -> bool:
    """Whether entry ``m`` is published in English for now (flagged, and not translated)."""
    return m is not None and DEFERRED in m.flags and (not m.string or m.fuzzy)


def defer(catalog: Catalog, keep=lambda m: True) -> list:
    """Flag every untranslated or fuzzy entry of ``catalog`` (that ``keep`` accepts) English for
    now; return the entries flagged."""
    flagged = []
    for m in catalog:
        if m.id and (not m.string or m.fuzzy) and DEFERRED not in m.flags and keep(m):
            m.flags.add(DEFERRED)
            flagged.append(m)
    return flagged


def english_for_now(english: str, lang: str, html_lang: str) -> str:
    """A deferred markdown text as the translated edition shows it: the English, marked as English
    for a screen reader (WCAG 3.1.2), then the note that it is not translated yet."""
    return f'<div lang="en">\n\n{english}\n\n</div>\n\n<div lang="{html_lang}">\n\n{NOTE[lang]}\n\n</div>'
