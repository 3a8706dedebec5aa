"""The course in another language: gettext catalogs of the notebooks' text, and the notebooks built
from them.

The English notebooks are the source. Each one has a catalog, ``translations/<lang>/<stem>.po``:
one entry per markdown cell, its context (``msgctxt``) the cell's id and its ``msgid`` the English
text; ``msgstr`` is the translation; so has each literal a code cell prints (tools/translate_prints.py).
``notebooks/<lang>/<stem>.ipynb`` has the English notebook's code cells, unchanged but for those, and its own
executed outputs (``make notebooks-<lang>`` runs them; the package prints in the notebook's
language, ``attention_kit.i18n``).

    python tools/translate.py update [--lang zh] [STEM ...]   bring the catalogs in step
    python tools/translate.py build  [--lang zh] [STEM ...]   write notebooks/<lang>/ from them
    python tools/translate.py check  [--lang zh]              list everything out of step; exit 1
    python tools/translate.py package-update [--lang zh]      the package's _() strings -> its catalog
    python tools/translate.py defer  [--lang zh] [STEM ...]   publish what is untranslated in English
                                                              for now, marked so (README, package too)
    python tools/translate.py dump STEM --file F              the catalog as '@@ <cell id>' blocks
                                                              (STEM README: README.md's sections)
    python tools/translate.py load STEM --file F              set the translations from such blocks

A notebook is published in a language once its catalog is complete (``build`` then writes it);
from then on ``check`` fails on any of its cells out of step. ``update`` works as gettext's ``msgmerge`` and Sphinx's gettext builder do: a new cell gets an
empty entry, a cell whose English text changed keeps its old translation marked *fuzzy* with the
old English beside it (``#| msgid``), a removed cell's entry goes; a change of numbers alone is
carried into the translation, and ``defer`` publishes what is untranslated in English for now, marked
so (``catalog_states.py``). ``build`` never guesses: an
untranslated or fuzzy cell is written in English and ``check`` (run by ``make test``, in
``tests/test_translations.py``) names it, with every other way the two editions can drift: a
translated notebook missing, its code cells not the English ones, a markdown cell not its
catalog's translation, a code cell not executed, a relative link that leads nowhere.
"""

from __future__ import annotations

import argparse
import copy
import io
import re
import sys
from pathlib import Path

import nbformat
from babel.messages.catalog import Catalog
from babel.messages.pofile import read_po, write_po

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
TRANSLATIONS = ROOT / "translations"
LANGUAGES = {"zh": "zh_Hans_CN"}  # our folder name -> the catalog's locale
HTML_LANG = {"zh": "zh-CN"}  # a translated cell's lang attribute (JupyterLab's zh-CN language pack says the same)
sys.path.insert(0, str(ROOT))
import translate_prints  # noqa: E402 - the code cells' printed literals (its docstring)
from catalog_states import DEFERRED, defer, english_for_now, is_deferred, merge_entries  # noqa: E402,F401

from attention_kit.i18n import MARKER  # noqa: E402 - in notebooks/<lang>/: the kernel's folder says which


def english_notebooks() -> list[Path]:
    return sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))


def catalog_path(lang: str, stem: str) -> Path:
    return TRANSLATIONS / lang / f"{stem}.po"


def read_catalog(path: Path, lang: str) -> Catalog:
    if not path.exists():
        return Catalog(locale=LANGUAGES[lang], project="attention course", fuzzy=False)
    with open(path, "rb") as f:
        return read_po(f, locale=LANGUAGES[lang])


def write_catalog(catalog: Catalog, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    buf = io.BytesIO()
    write_po(buf, catalog, width=0, omit_header=False, include_previous=True, sort_output=False)
    path.write_bytes(buf.getvalue())


def markdown_cells(nb) -> list:
    return [c for c in nb.cells if c.cell_type == "markdown" and c.source.strip()]


def update(lang: str, stems: list[str]) -> list[str]:
    """Bring each catalog in step with its English notebook; return one line per change."""
    changes = []
    for src in english_notebooks():
        if stems and src.stem not in stems:
            continue
        nb = nbformat.read(src, as_version=4)
        path = catalog_path(lang, src.stem)
        old = read_catalog(path, lang)
        created = old.creation_date if path.exists() else None
        new = Catalog(locale=LANGUAGES[lang], project="attention course",
                      header_comment=f"# {src.name} in {lang}: one entry per markdown cell, keyed by "
                                     f"the cell's id.\n# tools/translate.py update / build / check.",
                      fuzzy=False, **({"creation_date": created} if created else {}))
        changes += merge_entries(old, new, translate_prints.pairs(nb, old), src.stem, "cell")
        write_catalog(new, path)
    return changes


def translated_markdown(message) -> str | None:
    """The translation to use, or None (untranslated or fuzzy: the English stays)."""
    if message is None or not message.string or message.fuzzy:
        return None
    return message.string


def in_language(text: str, lang: str) -> str:
    """A translated markdown cell as the notebook holds it: inside ``<div lang="zh-CN">``, so a screen
    reader speaks it with a Chinese voice (WCAG 3.1.2, language of parts: JupyterLab's page is
    ``lang="en"`` unless its own language pack is chosen). The blank lines keep the text markdown
    (CommonMark ends an HTML block at a blank line); JupyterLab's sanitizer keeps ``lang`` on any
    element."""
    return f'<div lang="{HTML_LANG[lang]}">\n\n{text}\n\n</div>'


def shown_markdown(m, english: str, lang: str) -> str:
    """A markdown cell as the translated notebook shows it: the translation, or the English marked
    English for now (catalog_states), or the English as it is (untranslated or fuzzy)."""
    text = translated_markdown(m) if m is not None and m.id == english else None
    if text is not None:
        return in_language(text, lang)
    if is_deferred(m) and m.id == english:
        return english_for_now(_one_deeper(english, lang), lang, HTML_LANG[lang])
    return english


def _one_deeper(text: str, lang: str) -> str:
    """English text's relative links as they lead from notebooks/<lang>/, one folder deeper."""
    def fix(match):
        target = match.group(1).split("#")[0].split("?")[0]
        moved = target and (NOTEBOOKS / target).exists() and not (NOTEBOOKS / lang / target).exists()
        return f"](../{match.group(1)}" if moved else match.group(0)
    return re.sub(r"\]\((?!\w+://|mailto:)([^)\s]+)", fix, text)


def build(lang: str, stems: list[str]) -> list[str]:
    """Write notebooks/<lang>/<stem>.ipynb; keep outputs of code cells that did not change."""
    out_dir = NOTEBOOKS / lang
    out_dir.mkdir(exist_ok=True)
    (out_dir / MARKER).write_text(lang + "\n")
    notes = []
    for src in english_notebooks():
        if stems and src.stem not in stems:
            continue
        nb = nbformat.read(src, as_version=4)
        catalog = read_catalog(catalog_path(lang, src.stem), lang)
        entries = {m.context: m for m in catalog if m.id and m.context}
        dest = out_dir / src.name
        complete = all(translated_markdown(entries.get(c.id)) for c in markdown_cells(nb))
        if not (dest.exists() or complete or src.stem in stems):
            notes.append(f"{src.stem}: not translated yet, not published in notebooks/{lang}/")
            continue
        previous = {}
        if dest.exists():
            previous = {c.id: c for c in nbformat.read(dest, as_version=4).cells}
        built = copy.deepcopy(nb)
        built.metadata["language_info_course"] = lang
        for cell in built.cells:
            if cell.cell_type == "markdown" and cell.source.strip():
                cell.source = shown_markdown(entries.get(cell.id), cell.source, lang)
            elif cell.cell_type == "code":
                cell.source = translate_prints.translated_code(cell, entries)
                was = previous.get(cell.id)
                if was is not None and was.cell_type == "code" and was.source == cell.source:
                    cell.outputs, cell.execution_count = was.outputs, was.execution_count
                else:
                    cell.outputs, cell.execution_count = [], None
                    notes.append(f"{lang}/{src.name} {cell.id}: code changed, outputs cleared until it runs (make notebooks-{lang})")
        nbformat.write(built, dest)
    return notes


def published(lang: str) -> list[str]:
    """The notebooks of ``lang``'s edition: those in notebooks/<lang>/ (``build`` writes one once its
    catalog is complete; from then on ``check`` holds it to every English change)."""
    return [src.stem for src in english_notebooks() if (NOTEBOOKS / lang / src.name).exists()]


def relative_links(text: str) -> list[str]:
    return [t for t in re.findall(r"\]\(([^)#\s]+)", text) if "://" not in t and not t.startswith("mailto:")]


def kept_verbatim(text: str) -> dict[str, set[str]]:
    """What a translation keeps as it is: inline code, formulas, link targets and numbers."""
    fenced = re.findall(r"```.*?```", text, flags=re.S)
    rest = re.sub(r"```.*?```", " ", text, flags=re.S)
    code = re.findall(r"`([^`]+?)`", rest)
    prose = re.sub(r"`[^`]+?`", " ", rest)
    maths = re.findall(r"\$\$.+?\$\$|\$[^$]+?\$", prose, flags=re.S)
    words = re.sub(r"\$\$.+?\$\$|\$[^$]+?\$|\]\([^)]*\)", " ", prose, flags=re.S)
    def squeeze(items):  # a line break inside a formula or a code span is not a change
        return {" ".join(x.split()) for x in items}

    return {"code block": {_uncommented(block) for block in fenced}, "inline code": squeeze(code),
            "formula": squeeze(maths),
            # by file name: notebooks/<lang>/ is one folder deeper, so ../README.md becomes ../../;
            # a link to a heading of the same page ('#...') follows the heading's translated words
            "link": {t.rstrip("/").rsplit("/", 1)[-1] for t in re.findall(r"\]\(([^)\s]+)", prose)
                     if not t.startswith("#")},
            "number": set(re.findall(r"(?<![\w.])\d+(?:\.\d+)?(?![\w])", words))}


def _uncommented(block: str) -> str:
    """A fenced code block without its comments (a translator translates a ``# ...`` comment; the
    code itself stays as it is)."""
    lines = [re.sub(r"(^|\s)#.*$", "", line).rstrip() for line in block.splitlines()]
    return "\n".join(line for line in lines if line)


def _prose(text: str) -> bool:
    """Whether ``text`` has words to translate beyond code, formulas and links."""
    bare = re.sub(r"```.*?```|`[^`]+?`|\$\$.+?\$\$|\$[^$]+?\$|\]\([^)]*\)", " ", text, flags=re.S)
    return len(re.findall(r"[A-Za-z]{3,}", bare)) >= 3


def lost_in_translation(english: str, translated: str) -> list[str]:
    """What the translation dropped or changed of what it must keep verbatim."""
    want, got = kept_verbatim(english), kept_verbatim(translated)
    return [f"{kind} {item!r}" for kind in want for item in sorted(want[kind] - got[kind])]


def check(lang: str) -> list[str]:
    """Everything the translated edition lacks or has out of step: one line each; [] when none."""
    problems = []
    out_dir = NOTEBOOKS / lang
    if published(lang) and not (out_dir / MARKER).exists():
        problems.append(f"notebooks/{lang}/{MARKER} missing: the kernel would print in English")
    for src in english_notebooks():
        if not (out_dir / src.name).exists():
            continue  # not published in this language yet: see published()
        nb = nbformat.read(src, as_version=4)
        path = catalog_path(lang, src.stem)
        if not path.exists():
            problems.append(f"{path.relative_to(ROOT)}: no catalog (python tools/translate.py update)")
            continue
        fresh = {m.context: m for m in read_catalog(path, lang) if m.id and m.context}
        entries = dict(fresh)  # what is left after the cells have taken theirs: entries for no cell
        for cell in markdown_cells(nb):
            where = f"{src.stem} cell {cell.id} ({cell.source.strip().splitlines()[0][:50]!r})"
            problems += entry_problems(where, cell.source, entries.pop(cell.id, None))
        problems += translate_prints.check_entries(src.stem, nb, entries)  # and the entries for no cell
        dest = out_dir / src.name
        built = nbformat.read(dest, as_version=4)
        if [c.id for c in built.cells] != [c.id for c in nb.cells]:
            problems.append(f"notebooks/{lang}/{src.name}: not the English notebook's cells (build)")
            continue
        for eng, tr in zip(nb.cells, built.cells, strict=True):
            if eng.cell_type != tr.cell_type:
                problems.append(f"{lang}/{src.name} {eng.id}: cell type differs (build)")
            elif eng.cell_type == "code":
                if code := translate_prints.code_problems(f"{lang}/{src.name} {eng.id}", eng, tr, fresh):
                    problems += code
                elif eng.get("execution_count") is not None and tr.get("execution_count") is None:
                    problems.append(f"{lang}/{src.name} {eng.id}: not executed (make notebooks-{lang})")
            elif eng.cell_type == "markdown" and eng.source.strip():
                if tr.source != shown_markdown(fresh.get(eng.id), eng.source, lang):
                    problems.append(f"{lang}/{src.name} {eng.id}: markdown is not the catalog's (build)")
                for link in relative_links(tr.source):
                    if not (out_dir / link.split("?")[0]).resolve().exists():
                        problems.append(f"{lang}/{src.name} {eng.id}: link {link!r} leads nowhere")
    return problems


def entry_problems(where: str, english: str, m) -> list[str]:
    """What is wrong with the catalog entry ``m`` for this English text: [] when nothing."""
    if m is None or m.id != english:
        return [f"{where}: catalog out of step (python tools/translate.py update)"]
    if is_deferred(m):
        return []  # English for now: listed by waiting(), not a problem
    if not m.string:
        return [f"{where}: not translated"]
    if m.fuzzy:
        return [f"{where}: the English changed since it was translated (fuzzy)"]
    if _prose(english) and not re.search(r"[\u4e00-\u9fff]", m.string):
        return [f"{where}: still in English"]
    return [f"{where}: the translation lost {lost}" for lost in lost_in_translation(english, m.string)]


def defer_all(lang: str, stems: list[str]) -> list[str]:
    """Flag the untranslated and fuzzy entries of the published notebooks named (all when none;
    ``README`` and ``package`` too) English for now (catalog_states); one line per entry."""
    import translate_package
    import translate_readme

    named = [(s, catalog_path(lang, s)) for s in published(lang) if not stems or s in stems]
    if translate_readme.output_path(lang).exists() and (not stems or translate_readme.STEM in stems):
        named.append((translate_readme.STEM, catalog_path(lang, translate_readme.STEM)))
    if not stems or "package" in stems:
        named.append(("package", translate_package.catalog_path(lang)))
    lines = []
    for name, path in named:
        catalog = read_catalog(path, lang)
        flagged = defer(catalog)
        if flagged:
            write_catalog(catalog, path)
        lines += [f"{name} {m.context or repr(m.id[:50])}: English for now" for m in flagged]
    return lines


def waiting(lang: str) -> list[str]:
    """The entries published in English for now, one line each."""
    import translate_package
    import translate_readme

    stems = published(lang) + [translate_readme.STEM] * translate_readme.output_path(lang).exists()
    lines = [f"{s} {m.context}" for s in stems for m in read_catalog(catalog_path(lang, s), lang) if is_deferred(m)]
    return lines + [f"package {m.id[:50]!r}" for m in read_catalog(translate_package.catalog_path(lang), lang)
                    if is_deferred(m)]


def dump(lang: str, stem: str) -> str:
    """The catalog as blocks a translator can edit: '@@ <cell id>' and then the text."""
    entries = [m for m in read_catalog(catalog_path(lang, stem), lang) if m.id and m.context]
    return "".join(translate_prints.dump_block(m) for m in entries)


def load(lang: str, stem: str, text: str) -> list[str]:
    """Set the translations of the '@@ <cell id>' blocks in ``text``; they are no longer fuzzy."""
    path = catalog_path(lang, stem)
    catalog = read_catalog(path, lang)
    entries = {m.context: m for m in catalog if m.id and m.context}
    notes = []
    for block in re.split(r"^@@ ", text, flags=re.M)[1:]:
        head, _, body = block.partition("\n")
        cell_id, _, flag = head.strip().partition(" ")  # '@@ <id>:print:<k> keep-english'
        m = entries.get(cell_id.strip())
        if m is None:
            notes.append(f"{cell_id.strip()}: no such cell in {stem}")
            continue
        translate_prints.load_block(m, flag, body.strip("\n"))
        m.flags.discard("fuzzy")
        m.flags.discard(DEFERRED)
        m.previous_id = []
    write_catalog(catalog, path)
    return notes


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("command", choices=["update", "build", "check", "dump", "load", "package-update", "defer"])
    ap.add_argument("--file", help="dump: write the blocks here; load: read them from here")
    ap.add_argument("stems", nargs="*", help="notebooks by file stem (default: all)")
    ap.add_argument("--lang", default="zh", choices=sorted(LANGUAGES))
    args = ap.parse_args(argv)
    import translate_package  # the package's _() strings (it imports this module)
    import translate_readme  # README.md's sections, the same way (it imports this module)

    readme = not args.stems or translate_readme.STEM in args.stems
    stems = [s for s in args.stems if s != translate_readme.STEM]
    if args.command == "update":
        for line in update(args.lang, stems) if stems or not args.stems else []:
            print(line)
        for line in translate_readme.update(args.lang) if readme else []:
            print(line)
        return 0
    if args.command == "package-update":
        for line in translate_package.update(args.lang):
            print(line)
        return 0
    if args.command == "defer":
        print("\n".join(defer_all(args.lang, args.stems)) or "nothing untranslated to defer")
        return 0
    if args.command in ("dump", "load"):
        if len(args.stems) != 1 or not args.file:
            ap.error(f"{args.command} takes one notebook stem and --file")
        if args.command == "dump":
            Path(args.file).write_text(dump(args.lang, args.stems[0]), encoding="utf-8")
            return 0
        notes = load(args.lang, args.stems[0], Path(args.file).read_text(encoding="utf-8"))
        print("\n".join(notes) or "loaded")
        return 1 if notes else 0
    if args.command == "build":
        for line in (build(args.lang, stems) if stems or not args.stems else []) + (
                translate_readme.build(args.lang) if readme else []):
            print(line)
        return 0
    problems = check(args.lang) + translate_package.check(args.lang) + translate_readme.check(args.lang)
    for line in problems:
        print(line)
    done = published(args.lang)
    todo = [src.stem for src in english_notebooks() if src.stem not in done]
    print(f"published in {args.lang}: {', '.join(done) or 'none'}; not yet: {', '.join(todo) or 'none'}")
    later = waiting(args.lang)
    if later:
        print(f"English for now, waiting for a translator ({len(later)}; tools/translate.py dump / load):")
        print("\n".join(f"  {line}" for line in later))
    print(f"{len(problems)} problem(s) in the {args.lang} edition" if problems
          else f"the {args.lang} edition is in step with the English one")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
