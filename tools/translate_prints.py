"""What the notebooks' code cells print, translated: the string literals of their ``print(...)`` calls
as catalog entries beside the markdown cells' (translations/<lang>/<stem>.po).

``tools/translate.py`` calls this module from ``update``, ``build``, ``check``, ``dump`` and ``load``.

* **Which literals.** In each English code cell, every string literal that ``print`` writes: a
  positional argument of a ``print(...)`` call, and, inside one, both sides of ``+``, the left of
  ``%``, both branches of ``x if c else y``, and the string that ``.format`` is called on. Not a
  literal inside an f-string's field, a ``" ".join`` separator, a dictionary key or a keyword
  (``sep=``, ``end=``). A literal is an entry when its text outside ``{fields}`` has an English word
  (two letters or more): ``"  "`` and ``f"{name:<18s}"`` are not entries.
* **The entry.** ``msgctxt`` = ``<cell id>:print:<k>`` (k = 1, 2, ... in the cell's source order),
  ``msgid`` = the literal's text between its quotes *as written in the source* (an f-string's
  ``{fields}`` and ``\\n`` escapes as they are), ``msgstr`` = the same for the translation.
  ``update`` keeps a translation when its English moves to another k of the same cell.
* **build** substitutes each translated literal's text between the quotes of the same token
  (``tokenize`` positions): the prefix, the quotes and the rest of the code are byte for byte the
  English cell's. A translation must parse as the same kind of literal and keep the English one's
  fields (the same ``{expr!conv:spec}`` expressions, in any order; ``{}`` and ``%s`` of a plain
  string); otherwise the English stays and ``check`` names the entry, as it names a translation
  that lost a number of the English text.
* **check** puts each catalog English back into the Chinese cell and compares it with the English
  cell: a cell differing beyond its printed literals is named, as is a literal that is neither the
  catalog's translation nor (untranslated) its English. An untranslated or fuzzy print entry fails
  the check too, unless it is English for now (``tools/translate.py defer``), as does one whose
  translation has no Chinese character and no ``keep-english`` flag.
* **keep-english.** The English text that is data stays English on purpose (nursery rhymes, toy
  sentences, token text, model names, a table's column names over code names): its entry's
  translation is the English itself and carries the flag ``#, keep-english`` (in a dump, the block's
  head says so: ``@@ <id>:print:<k> keep-english``).

    python tools/translate_prints.py survey [--lang zh]   the code cells whose outputs print English
"""

from __future__ import annotations

import ast
import io
import re
import sys
import tokenize
from collections import Counter
from pathlib import Path

import nbformat
from catalog_states import is_deferred

KEEP = "keep-english"  # the flag of an entry whose translation is deliberately its English
CJK = re.compile(r"[\u3400-\u9fff\u3000-\u303f\uff00-\uffef]")


def is_print(context: str | None) -> bool:
    return bool(context) and ":print:" in context


# ---------------------------------------------------------------- finding the literals

def _string_spans(source: str) -> list[tuple[tuple[int, int], tuple[int, int], str]]:
    """(start, end, text) of every string token, an f-string of Python 3.12+ as one span."""
    spans, depth, start = [], 0, None
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        name = tokenize.tok_name[tok.type]
        if name == "STRING" and depth == 0:
            spans.append((tok.start, tok.end, tok.string))
        elif name == "FSTRING_START":
            if depth == 0:
                start = tok.start
            depth += 1
        elif name == "FSTRING_END":
            depth -= 1
            if depth == 0:
                spans.append((start, tok.end, _slice(source, start, tok.end)))
    return spans


def _slice(source: str, start, end) -> str:
    lines = source.splitlines(keepends=True)
    offset = [sum(len(x) for x in lines[:row - 1]) + col for row, col in (start, end)]
    return source[offset[0]:offset[1]]


def _printed_nodes(node) -> list:
    """The string nodes whose text ``print`` writes, inside one argument."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str) or isinstance(node, ast.JoinedStr):
        return [node]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _printed_nodes(node.left) + _printed_nodes(node.right)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        return _printed_nodes(node.left)
    if isinstance(node, ast.IfExp):
        return _printed_nodes(node.body) + _printed_nodes(node.orelse)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
        return _printed_nodes(node.func.value)
    return []


def printed_spans(source: str) -> list[tuple[tuple[int, int], tuple[int, int], str]]:
    """(start, end, token text) of every printed string token of a code cell, in source order
    (positions as ``tokenize`` gives them: line from 1, column in characters)."""
    try:
        tree = ast.parse(source)
        spans = _string_spans(source)
    except (SyntaxError, tokenize.TokenError, IndentationError):
        return []
    lines = source.splitlines()

    def char_pos(line, col):  # ast's columns count UTF-8 bytes
        return line, len(lines[line - 1].encode()[:col].decode())

    wanted = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print":
            for arg in node.args:
                for lit in _printed_nodes(arg):
                    wanted.append((char_pos(lit.lineno, lit.col_offset), char_pos(lit.end_lineno, lit.end_col_offset)))
    found = {s for s in spans for a, b in wanted if a <= s[0] and s[1] <= b}
    return sorted(found)


def split_literal(token: str) -> tuple[str, str, str]:
    """A string token -> (prefix and opening quote, text between the quotes, closing quote)."""
    m = re.match(r"(?is)([rbuf]*)('''|\"\"\"|'|\")", token)
    head = m.group(0)
    quote = m.group(2)
    return head, token[len(head):len(token) - len(quote)], quote


def _outside_fields(head: str, body: str) -> str:
    """The text of a literal without its ``{fields}`` (an f-string's or ``.format``'s)."""
    out, depth, i = [], 0, 0
    while i < len(body):
        ch = body[i]
        if depth == 0 and body.startswith(("{{", "}}"), i):
            out.append(ch)
            i += 2
            continue
        if ch == "{":
            depth += 1
        elif ch == "}" and depth:
            depth -= 1
        elif depth == 0:
            out.append(ch)
        i += 1
    return "".join(out)


def has_words(token: str) -> bool:
    head, body, _ = split_literal(token)
    text = re.sub(r"\\[nt]", " ", _outside_fields(head, body))
    return re.search(r"[A-Za-z]{2,}", text) is not None


def cell_entries(cell) -> list[tuple[str, str]]:
    """(msgctxt, msgid) of a code cell's printed literals that have words."""
    pairs = []
    for _start, _end, token in printed_spans(cell.source):
        if has_words(token):
            pairs.append((f"{cell.id}:print:{len(pairs) + 1}", split_literal(token)[1]))
    return pairs


def pairs(nb, old=None) -> list[tuple[str, str]]:
    """(msgctxt, msgid) of the notebook's entries in cell order: each markdown cell, each printed
    literal; ``old``, the catalog to merge them into, is ``realign``ed first."""
    out = []
    for cell in nb.cells:
        if cell.cell_type == "markdown" and cell.source.strip():
            out.append((cell.id, cell.source))
        elif cell.cell_type == "code":
            out += cell_entries(cell)
    if old is not None:
        realign(old, out)
    return out


def realign(old, new_pairs: list[tuple[str, str]]) -> None:
    """Before a merge: an old print entry whose English now sits at another k of its cell moves
    there, so it keeps its translation (an inserted print does not shift the others' out of step)."""
    olds = {m.context: m for m in old if m.id and is_print(m.context)}
    wanted = {ctx: english for ctx, english in new_pairs if is_print(ctx)}
    free = [m for ctx, m in olds.items() if wanted.get(ctx) != m.id]
    moves = {}
    for ctx, english in wanted.items():
        cell = ctx.rsplit(":print:", 1)[0]
        m = next((m for m in free if m.id == english and m.context.rsplit(":print:", 1)[0] == cell), None)
        if m is not None and not (ctx in olds and olds[ctx].id == english):
            free.remove(m)
            moves[ctx] = m
    for ctx, m in moves.items():
        old.delete(m.id, context=m.context)
        if ctx in olds and olds[ctx] in free:  # the entry that sat there: its English is gone
            old.delete(olds[ctx].id, context=ctx)
    for ctx, m in moves.items():
        old.add(m.id, m.string, context=ctx, flags=m.flags, previous_id=m.previous_id,
                user_comments=m.user_comments)


# ---------------------------------------------------------------- fields, translations

def fields(token: str) -> Counter | None:
    """The fields a literal formats (None when it is not a string literal): an f-string's
    ``{expr!conv:spec}`` as parsed, a plain string's ``{...}`` and ``%`` placeholders."""
    try:
        node = ast.parse(token.strip(), mode="eval").body
    except SyntaxError:
        return None
    if isinstance(node, ast.JoinedStr):
        return Counter(_field(v) for v in node.values if isinstance(v, ast.FormattedValue))
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return Counter(re.findall(r"(?<!\{)\{[^{}]*\}(?!\})|%[-+ 0#]*\d*(?:\.\d+)?[sdifgexr]", node.value))
    return None


def usable(head: str, quote: str, message) -> str | None:
    """The translation to substitute, or None (untranslated, fuzzy, or its fields not the English's)."""
    if message is None or not message.string or message.fuzzy:
        return None
    if fields(head + message.string + quote) != fields(head + message.id + quote):
        return None
    return message.string


def entry_problem(where: str, head: str, quote: str, m, required: bool) -> str | None:
    if m is None:
        return f"{where}: catalog out of step (python tools/translate.py update)"
    if is_deferred(m):
        return None  # English for now (tools/translate.py defer): listed, not a problem
    if not m.string:
        return f"{where}: not translated" if required else None
    if m.fuzzy:
        return f"{where}: the English changed since it was translated (fuzzy)" if required else None
    got = fields(head + m.string + quote)
    if got is None:
        return f"{where}: the translation is no string literal between {head}...{quote}"
    if got != fields(head + m.id + quote):
        want, have = fields(head + m.id + quote), got
        return (f"{where}: the translation's {{fields}} differ from the English "
                f"(missing {sorted(want - have)}, extra {sorted(have - want)})")
    lost = sorted(_numbers(head, m.id) - _numbers(head, m.string))
    if lost:
        return f"{where}: the translation lost number(s) {', '.join(lost)}"
    if KEEP in m.flags:
        return None if m.string == m.id else f"{where}: flagged {KEEP} but not the English"
    if required and not CJK.search(m.string):
        return f"{where}: still in English (translate it, or flag it {KEEP} if it is data)"
    return None


def _numbers(head: str, body: str) -> set[str]:
    return set(re.findall(r"(?<![\w.])\d+(?:\.\d+)?(?![\w])", re.sub(r"\\[nt]", " ", _outside_fields(head, body))))


def _field(v: ast.FormattedValue) -> str:
    """An f-string's field, normalised (``{x+1 :d}`` is ``{x + 1:d}``), as it reads in a message."""
    conversion = f"!{chr(v.conversion)}" if v.conversion != -1 else ""
    spec = f":{ast.unparse(v.format_spec)[2:-1]}" if v.format_spec is not None else ""
    return "{" + ast.unparse(v.value) + conversion + spec + "}"


def _replace(source: str, edits: list[tuple[tuple[int, int], tuple[int, int], str]]) -> str:
    """``source`` with each (start, end) token span replaced by its text (tokenize positions)."""
    lines = source.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    out, last = [], 0
    for (sl, sc), (el, ec), text in sorted(edits):
        a, b = offsets[sl - 1] + sc, offsets[el - 1] + ec
        out += [source[last:a], text]
        last = b
    return "".join(out) + source[last:]


def translated_code(cell, entries: dict) -> str:
    """A code cell's source with each usable translation in place of its printed literal's text."""
    edits, k = [], 0
    for start, end, token in printed_spans(cell.source):
        if not has_words(token):
            continue
        k += 1
        head, _body, quote = split_literal(token)
        text = usable(head, quote, entries.get(f"{cell.id}:print:{k}"))
        if text is not None:
            edits.append((start, end, head + text + quote))
    return _replace(cell.source, edits) if edits else cell.source


def code_problems(where: str, eng, tr, entries: dict) -> list[str]:
    """The Chinese code cell ``tr`` against the English ``eng``: each printed literal must be the
    catalog's translation (or its English), and the code with the English put back the English."""
    mine, theirs = printed_spans(eng.source), printed_spans(tr.source)
    if len(mine) != len(theirs):
        return [f"{where}: code differs from English (build)"]
    problems, edits, k = [], [], 0
    for (_s, _e, token), (tstart, tend, ttoken) in zip(mine, theirs, strict=True):
        head, body, quote = split_literal(token)
        thead, tbody, tquote = split_literal(ttoken)
        if (thead, tquote) != (head, quote):
            return [f"{where}: code differs from English (build)"]
        if has_words(token):
            k += 1
            m = entries.get(f"{eng.id}:print:{k}")
            want = usable(head, quote, m) or body
            if tbody != want:
                problems.append(f"{where}: printed literal {k} is not the catalog's (build)")
        edits.append((tstart, tend, token))
    if _replace(tr.source, edits) != eng.source:
        problems.insert(0, f"{where}: code differs from English beyond its printed literals (build)")
    return problems


def check_entries(stem: str, nb, entries: dict) -> list[str]:
    """The print entries' problems (each popped from ``entries``), then those of the entries left: for no cell."""
    problems = []
    required = True  # a print entry untranslated for now is flagged so (tools/translate.py defer)
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        k = 0
        for _start, _end, token in printed_spans(cell.source):
            if not has_words(token):
                continue
            k += 1
            head, body, quote = split_literal(token)
            ctx = f"{cell.id}:print:{k}"
            m = entries.pop(ctx, None)
            if m is not None and m.id != body:
                m = None
            problem = entry_problem(f"{stem} {ctx} ({body[:50]!r})", head, quote, m, required)
            if problem:
                problems.append(problem)
    return problems + [f"{stem} {ctx}: catalog entry for a cell that is gone (update)" for ctx in entries]


# ---------------------------------------------------------------- dump / load

def dump_block(m) -> str:
    """An entry as a translator edits it; a print entry's text exactly (a trailing space is kept)."""
    if not is_print(m.context):
        return f"@@ {m.context}\n{(m.string or m.id).rstrip()}\n\n"
    flag = f" {KEEP}" if KEEP in m.flags else ""
    return f"@@ {m.context}{flag}\n{m.string or m.id}\n\n"


def load_block(m, flag: str, text: str) -> None:
    """Set an entry from a block; a print entry's ``keep-english`` in its head keeps the English, flagged."""
    if is_print(m.context) and flag.strip() == KEEP:
        m.string = m.id
        m.flags.add(KEEP)
    else:
        m.string = text
        m.flags.discard(KEEP)


# ---------------------------------------------------------------- the survey's detector

def english_lines(cell) -> list[str]:
    """The lines of a code cell's stored outputs that hold an English sentence: no Chinese
    character, and a run of three English words or more (``[A-Za-z]{2,}`` words separated by
    spaces or punctuation) outside arrays, lists and reprs (translations/zh/PRINTS_SURVEY.md)."""
    texts = []
    for out in cell.get("outputs", []):
        if out.output_type == "stream":
            texts.append(out.text)
        elif out.output_type == "error":
            texts.append(f"{out.ename}: {out.evalue}")
        elif out.output_type in ("execute_result", "display_data"):
            data = out.get("data", {})
            if "text/plain" in data and not ({"image/png", "text/html"} & set(data)) \
                    and "application/vnd.jupyter.widget-view+json" not in data:
                texts.append(data["text/plain"])
    found = []
    for line in "\n".join(texts).splitlines():
        if CJK.search(line):
            continue
        bare = re.sub(r"\[[^\[\]]*\]|\([^()]*\)|<[^<>]*>|\{[^{}]*\}|'[^']*'", " ", line)
        bare = re.sub(r"\[[^\[\]]*\]", " ", bare)
        if re.search(r"[A-Za-z]{2,}(?:[ ,.;:!?'\-/=]+[A-Za-z]{2,}){2,}", bare):
            found.append(line)
    return found


def survey(lang: str, root: Path) -> tuple[list[tuple[str, int, int, int]], list[str]]:
    """(stem, code cells, cells printing English, English lines) per notebook of notebooks/<lang>/,
    and a line per such cell: its position among the code cells, its id, its first English line."""
    rows, cells = [], []
    for path in sorted((root / "notebooks" / lang).glob("[0-9][0-9]_*.ipynb")):
        code = [c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]
        hits = [english_lines(c) for c in code]
        rows.append((path.stem, len(code), sum(1 for h in hits if h), sum(len(h) for h in hits)))
        cells += [f"{path.stem} code cell {i} ({c.id}): {h[0][:110]}" + (f" (+{len(h) - 1})" if len(h) > 1 else "")
                  for i, (c, h) in enumerate(zip(code, hits, strict=True)) if h]
    return rows, cells


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(description="the survey of English lines in a translated edition's outputs")
    ap.add_argument("command", choices=["survey"])
    ap.add_argument("--lang", default="zh")
    ap.add_argument("--cells", action="store_true", help="list each cell and its first English line")
    args = ap.parse_args(argv)
    rows, cells = survey(args.lang, Path(__file__).resolve().parents[1])
    print("| notebook | code cells | cells printing English | English lines |\n|---|---:|---:|---:|")
    for row in rows:
        print("| " + " | ".join(str(x) for x in row) + " |")
    print(f"| all | {sum(r[1] for r in rows)} | {sum(r[2] for r in rows)} | {sum(r[3] for r in rows)} |")
    print("\n".join(cells) if args.cells else "", end="\n" if args.cells else "")
    return 0


if __name__ == "__main__":
    sys.exit(main())
