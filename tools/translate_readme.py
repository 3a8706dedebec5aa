"""README.md's translated edition (README.zh-CN.md), kept in step the way the notebooks are.

README.md is cut into sections: the text before the first ``## `` heading, then each ``## ``
section. Each section is one entry of ``translations/<lang>/README.po`` (``msgctxt`` = the
section's key, its heading as a slug; ``msgid`` = its English), merged by ``translate.merge_entries``
as the notebooks' cells are: a changed section keeps its translation, marked fuzzy. ``build`` writes
``README.<tag>.md`` once every section is translated, an untranslated or fuzzy section in English;
``check`` names every section out of step (``translate.entry_problems``), a built file that is not
the catalog's, and every relative link that leads nowhere. ``tools/translate.py`` calls these with
the notebooks' (``update``, ``build``, ``check``; ``dump README`` / ``load README`` for translators).
"""

from __future__ import annotations

import re
from pathlib import Path

import translate
from babel.messages.catalog import Catalog

ROOT = translate.ROOT
README = ROOT / "README.md"
STEM = "README"
OUTPUT = {"zh": "README.zh-CN.md"}


def output_path(lang: str, root: Path = ROOT) -> Path:
    return root / OUTPUT[lang]


def sections(text: str) -> list[tuple[str, str]]:
    """(key, English) per section, in order; joined with blank lines they give the README again."""
    pairs, seen = [], set()
    for part in re.split(r"(?m)^(?=## )", text):
        body = part.strip("\n")
        if not body:
            continue
        head = body.splitlines()[0][3:] if body.startswith("## ") else "intro"
        key = re.sub(r"[^a-z0-9]+", "-", head.lower()).strip("-") or "section"
        while key in seen:
            key += "-2"
        seen.add(key)
        pairs.append((key, body))
    return pairs


def update(lang: str, readme: Path = README) -> list[str]:
    path = translate.catalog_path(lang, STEM)
    old = translate.read_catalog(path, lang)
    created = old.creation_date if path.exists() else None
    new = Catalog(locale=translate.LANGUAGES[lang], project="attention course",
                  header_comment=f"# README.md in {lang}: one entry per section, keyed by its heading.\n"
                                 "# tools/translate.py update / build / check.",
                  fuzzy=False, **({"creation_date": created} if created else {}))
    changes = translate.merge_entries(old, new, sections(readme.read_text(encoding="utf-8")), STEM, "section")
    translate.write_catalog(new, path)
    return changes


def _header(lang: str) -> str:
    return (f"<!-- README.md in {lang}, built by tools/translate.py from translations/{lang}/README.po: "
            "edit the catalog, not this file -->")


def built_text(lang: str, readme: Path = README) -> tuple[str, bool]:
    """The translated README as ``build`` writes it, and whether every section is translated."""
    path = translate.catalog_path(lang, STEM)
    entries = {m.context: m for m in translate.read_catalog(path, lang) if m.id and m.context}
    parts, complete = [_header(lang)], True
    for key, english in sections(readme.read_text(encoding="utf-8")):
        m = entries.get(key)
        text = translate.translated_markdown(m) if m is not None and m.id == english else None
        complete &= text is not None
        if text is None and translate.is_deferred(m) and m.id == english:  # English for now, marked so
            text = translate.english_for_now(english, lang, translate.HTML_LANG[lang])
        parts.append(text or english)
    return "\n\n".join(parts) + "\n", complete


def build(lang: str, readme: Path = README, root: Path = ROOT) -> list[str]:
    out = output_path(lang, root)
    text, complete = built_text(lang, readme)
    if not (complete or out.exists()):
        return [f"README: not translated yet, {out.name} not written"]
    out.write_text(text, encoding="utf-8")
    return []


def check(lang: str, readme: Path = README, root: Path = ROOT) -> list[str]:
    out = output_path(lang, root)
    if not out.exists():
        return []  # not published in this language yet
    path = translate.catalog_path(lang, STEM)
    if not path.exists():
        return [f"{path.relative_to(ROOT)}: no catalog (python tools/translate.py update)"]
    entries = {m.context: m for m in translate.read_catalog(path, lang) if m.id and m.context}
    problems = []
    for key, english in sections(readme.read_text(encoding="utf-8")):
        problems += translate.entry_problems(f"README section {key}", english, entries.pop(key, None))
    problems += [f"README {key}: catalog entry for a section that is gone (update)" for key in entries]
    shown = out.read_text(encoding="utf-8")
    if shown != built_text(lang, readme)[0]:
        problems.append(f"{out.name}: not the catalog's text (python tools/translate.py build)")
    for link in translate.relative_links(shown):
        if not (root / link.split("?")[0]).exists():
            problems.append(f"{out.name}: link {link!r} leads nowhere")
    headings = {github_anchor(h) for h in re.findall(r"(?m)^#+ (.+)$", re.sub(r"```.*?```", "", shown, flags=re.S))}
    for anchor in re.findall(r"\]\(#([^)\s]+)\)", shown):
        if anchor not in headings:
            problems.append(f"{out.name}: link '#{anchor}' names no heading of the page")
    return problems


def github_anchor(heading: str) -> str:
    """The id GitHub gives a heading: lower case, punctuation dropped (letters of any script, digits,
    '-' and '_' kept), spaces to '-'."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
