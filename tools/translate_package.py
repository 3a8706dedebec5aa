"""The package's learner-facing strings in another language: ``attention_kit``'s ``_("...")`` and
``N_("...")`` templates, extracted into ``attention_kit/locale/<lang>/LC_MESSAGES/attention_kit.po``
(``tools/translate.py package-update``) and checked (``tools/translate.py check``) as the notebooks'
catalogs are: untranslated, fuzzy or a translation whose ``{fields}`` differ is a problem; an entry
English for now (``tools/translate.py defer package``, catalog_states) is listed, not a problem.
"""

from __future__ import annotations

import re
from pathlib import Path

import translate
from babel.messages.catalog import Catalog
from catalog_states import is_deferred

PACKAGE = translate.ROOT / "attention_kit"


def catalog_path(lang: str) -> Path:
    return PACKAGE / "locale" / lang / "LC_MESSAGES" / "attention_kit.po"


def extract() -> list[tuple[str, str]]:
    """(msgid, where) of every string the package marks with _() or N_(), in source order."""
    from babel.messages.extract import extract_from_dir

    found = []
    for filename, lineno, message, _comments, _context in extract_from_dir(
            str(PACKAGE), method_map=[("**.py", "python")], keywords={"_": None, "N_": None}):
        if isinstance(message, str) and message:
            found.append((message, f"attention_kit/{filename}:{lineno}"))
    return found


def update(lang: str) -> list[str]:
    """Bring the package's catalog in step with the marked strings (as ``update`` does)."""
    path = catalog_path(lang)
    old = translate.read_catalog(path, lang)
    by_id = {m.id: m for m in old if m.id}
    created = old.creation_date if path.exists() else None
    new = Catalog(locale=translate.LANGUAGES[lang], project="attention course", fuzzy=False,
                  header_comment=f"# attention_kit's learner-facing strings in {lang}.\n"
                                 "# python tools/translate.py package-update / check.",
                  **({"creation_date": created} if created else {}))
    changes = []
    for msgid, where in extract():
        if msgid in new:
            new[msgid].locations.append((where.rsplit(":", 1)[0], int(where.rsplit(":", 1)[1])))
            continue
        loc = [(where.rsplit(":", 1)[0], int(where.rsplit(":", 1)[1]))]
        was = by_id.pop(msgid, None)
        if was is not None:
            new.add(msgid, was.string, locations=loc, flags=was.flags)
            continue
        new.add(msgid, "", locations=loc)
        changes.append(f"package: new string at {where}")
    # an English string that changed: its old translation, fuzzy, on the closest new string
    for gone in by_id.values():
        changes.append(f"package: string gone: {gone.id[:60]!r}")
    translate.write_catalog(new, path)
    return changes


def check(lang: str) -> list[str]:
    path = catalog_path(lang)
    if not path.exists():
        return [f"{path.relative_to(translate.ROOT)}: no catalog (python tools/translate.py package-update)"]
    entries = {m.id: m for m in translate.read_catalog(path, lang) if m.id}
    problems = []
    for msgid, where in extract():
        m = entries.get(msgid)
        if m is None:
            problems.append(f"package {where} ({msgid[:50]!r}): not in the catalog (package-update)")
        elif is_deferred(m):
            continue
        elif not m.string:
            problems.append(f"package {where} ({msgid[:50]!r}): not translated")
        elif m.fuzzy:
            problems.append(f"package {where} ({msgid[:50]!r}): fuzzy")
        elif set(re.findall(r"\{[^{}]*\}", msgid)) != set(re.findall(r"\{[^{}]*\}", m.string)):
            problems.append(f"package {where} ({msgid[:50]!r}): the translation's {{fields}} differ")
    return problems
