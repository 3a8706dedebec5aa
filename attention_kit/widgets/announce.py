"""Notebooks 01-09: what an explorer's live region reads after a control changes (issue 34): the
control and its new value first, then the few lines of the figure's description that changed.
The whole description stays on the picture for a screen reader to read at will."""

from __future__ import annotations

import difflib
import re
from collections import Counter

from ..i18n import N_, _, language

__all__ = ["ANNOUNCE_LINES", "ANNOUNCE_WORDS", "announcement_for", "by_change", "change_size", "changed_lines"]


#: An announcement says at most this many changed lines, and at most about this many words of them.
ANNOUNCE_LINES = 3
ANNOUNCE_WORDS = 40


def _bare(word: str) -> str:
    return word.strip(".,;:()[]").lower()


def _phrases(title: str) -> list[str]:
    """A title cut at its ": " and "; " outside brackets."""
    out, depth, cur = [], 0, ""
    for k, ch in enumerate(title):
        depth += ch in "([（"
        depth -= ch in ")]）"
        if depth <= 0 and (ch in ":;" and title[k + 1:k + 2] in (" ", "") or ch in "：；"):
            out.append(cur.strip())
            cur = ""
            continue
        cur += ch
    out.append(cur.strip().rstrip(".").rstrip("。"))
    return [p for p in out if p]


def _title_news(old: str, new: str, cause: str) -> list[str]:
    """What changed in a title (the figure's summary, a panel's heading): its new phrases (cut at
    ": " and "; "), at most 20 words each; a phrase whose changed words only repeat the control's
    new value (already said first) is left out."""
    said = {_bare(w) for w in cause.split()}
    was = _phrases(old)
    out = []
    for ph in _phrases(new):
        if ph in was or all(_bare(w) in said or not _bare(w) for w in ph.split()):
            continue
        if "x axis" in ph or "y axis" in ph or ph.startswith(("A figure of", "heatmap of")) or (
                language() != "en" and (_("x axis: {label}").split("{")[0] in ph
                                        or _("y axis: {label}").split("{")[0] in ph
                                        or ph.startswith(_("A figure of {n} panels").split("{")[0]))):
            continue  # what a panel holds, not what it shows
        near = difflib.get_close_matches(ph, was, n=1, cutoff=0.5)
        if near:
            a, b = near[0].split(), ph.split()
            diff = [w for op, _, _, j1, j2 in difflib.SequenceMatcher(None, a, b).get_opcodes()
                    if op != "equal" for w in b[j1:j2]]
            if all(_bare(w) in said or not _bare(w) for w in diff):
                continue
        words = ph.split()
        out.append(" ".join(words[:20]) + (" …" if len(words) > 20 else ""))
    return out


def _repeats_cause(line: str, olds: list[str], cause: str) -> bool:
    """True when ``line`` differs from the line it replaced only by the control's new value."""
    near = difflib.get_close_matches(line, olds, n=1, cutoff=0.8)
    if not near or not cause:
        return False
    said = {_bare(w) for w in cause.split()}
    a, b = near[0].split(), line.split()
    diff = [w for op, _, _, j1, j2 in difflib.SequenceMatcher(None, a, b).get_opcodes()
            if op != "equal" for w in b[j1:j2]]
    return bool(diff) and all(_bare(w) in said or not _bare(w) for w in diff)


#: Facts that say what a mask, a target or a skipped tile covers: said first among the facts.
_KEY_FACTS = ("asked", "Target cells", "Outlined cells", "skipped", "Exactly 0", "Also drawn")
#: The same in another language: the words its descriptions start those facts with.
_KEY_FACTS_SAID = (N_("Outlined cells"), N_("(outlined boxes)"), N_("Also drawn"))


def _key_facts() -> tuple:
    if language() == "en":
        return _KEY_FACTS
    return _KEY_FACTS + tuple(_(w) for w in _KEY_FACTS_SAID)


def _panel_said() -> tuple:
    """How a panel's line starts ("Panel "), in English and in the learner's language."""
    return ("Panel ", _("Panel {k}: {fact}").split("{")[0])


def changed_lines(before: list[str], after: list[str], titles: set, cause: str = "") -> list[str]:
    """The lines an announcement may say, in the order it says them: first what changed in the
    titles (only the changed words, with their context: in 05, 07, 08 and 09 the result is in a
    title), then changed mask and target facts, then what disappeared that mattered ("No longer:
    masked …"), then the other changed lines. Unchanged lines, and titles that changed only by
    repeating the control's value, are not said."""
    news, keys, gone, rest = [], [], [], []
    key_facts, panel = _key_facts(), _panel_said()
    seen = set()
    old_set = set(before)
    sm = difflib.SequenceMatcher(None, before, after, autojunk=False)
    for op, i1, i2, j1, j2 in sm.get_opcodes():
        if op == "equal":
            continue
        olds = before[i1:i2]
        for k, line in enumerate(after[j1:j2]):
            if not line.strip() or line in old_set:
                continue
            if line in titles:
                was = olds[k] if k < len(olds) else ""
                if line.startswith(panel):
                    line, was = _COLON.split(line, 1)[-1].lstrip(), _COLON.split(was, 1)[-1].lstrip()
                for piece in _title_news(was, line, cause):
                    if piece.lower() not in seen:
                        seen.add(piece.lower())
                        news.append(piece)
            elif _repeats_cause(line, olds, cause):
                continue  # "vertical line at training step = 175" after "step 175": said already
            elif any(w in line for w in key_facts):
                keys.append(line)
            else:
                rest.append(line)
    new_heads = {_COLON.split(ln, 1)[0] for ln in after}
    for line in before:  # a mask, target or reference line that went away: said briefly
        head = _COLON.split(line, 1)[0]
        if any(w in line for w in key_facts) and head not in new_heads:
            # (English: after "Panel 2, "; Chinese: after "子图 2，", and a "，" inside a fact kept)
            words = (line.split(", ", 1)[-1] if language() == "en" else _PANEL.sub("", line)).split()
            gone.append(_("No longer: {what}").format(what=" ".join(words[:9]).rstrip(".,;:。，；：")
                                                      + (" …" if len(words) > 9 else _("."))))
    out = []
    if news:
        out.append(_("; ").join(news) + _("."))
    return out + keys + gone + by_change(rest, before)


_NUMBER = re.compile(r"[-+−]?\d+(?:\.\d+)?(?:e[-+]?\d+)?")
#: What ends a line's head: ":" (or the Chinese "：")
_COLON = re.compile("[:：]")


#: What a line is about when it has no ":": its panel ("Panel 2, values range from ...").
_PANEL = re.compile(r"^(?:Panel \d+, |子图 \d+，)")
#: Numbers that name rather than measure: a token's position ("the (3)"), an index ("out[0]"),
#: a name's digits ("k1"); not amounts, so not compared.
_LABEL = re.compile(r"\(\d+\)|\[\d+\]|(?<=[A-Za-z_])\d+")


def _shape(line: str) -> str:
    """``line`` with its amounts as "#" and its names kept: "on key the (3)" and "on key the (0)"
    (04's repeated "the") are other words, not other numbers."""
    return re.sub(f"({_LABEL.pattern})|{_NUMBER.pattern}", lambda m: m.group(1) or "#", line)


def _tail(line: str) -> str:
    """What ``line`` says about its subject: after its head's ":", or without its panel."""
    return _COLON.split(line, 1)[1] if _COLON.search(line) else _PANEL.sub("", line)


def _amounts(line: str) -> list[float]:
    """The numbers ``line`` says about its subject: after its head (:func:`_head`), the names'
    numbers left out (a panel's, a query's or a key's position)."""
    return [float(x.replace("−", "-")) for x in _NUMBER.findall(_LABEL.sub(" ", _tail(line)))]


def change_size(line: str, olds: list[str]) -> float:
    """How much ``line`` changed from the line it replaced, among ``olds`` (the lines before with
    the same head, :func:`_head`): 2 for a new line, 1.5 when its words changed (another key has
    the largest weight), else the largest change of its amounts (:func:`_amounts`) over the
    largest of them (0 to 1)."""
    shape = _shape(line)
    same = [o for o in olds if _shape(o) == shape]
    if not same:
        if not olds:
            return 2.0
        w_old, w_new = _words(olds[0]), _words(line)
        if not (w_old <= w_new or w_new <= w_old):
            return 1.5
        same = olds  # only words added or dropped ("about", "tied", "and x2": a near tie) with
        # the same keys still named: by its amounts, not as another key (02's temperature 3)
    a, b = _amounts(same[0]), _amounts(line)
    big = max([abs(v) for v in a + b] + [1e-12])
    return max((abs(x - y) for x, y in zip(a, b)), default=0.0) / big  # noqa: B905 - same shape


def _words(line: str) -> Counter:
    """``line``'s words after its head, counted (04's key "on" in "on key on" is a word of its
    own), numbers left out, plurals as singulars ("keys": "key")."""
    words = (w.strip(".,;:").lower() for w in _tail(line).split())  # (a position "(4)" kept)
    return Counter(w[:-1] if w.endswith("s") and len(w) > 3 else w for w in words
                   if w and not _NUMBER.fullmatch(w))


def _head(line: str) -> str:
    """What a line is about: its words before the first ":" ("Panel 1, query sat"), or, when it
    has none, its panel and its words with the numbers left out ("Panel 2, values range from #
    to #.": another panel's range is another line)."""
    if _COLON.search(line):
        return _COLON.split(line, 1)[0]
    panel = _PANEL.match(line)
    cut = panel.end() if panel else 0
    return line[:cut] + _NUMBER.sub("#", line[cut:])


def by_change(lines: list[str], before: list[str]) -> list[str]:
    """``lines`` with the ones that changed most first (:func:`change_size`; ties keep their order in
    the description): in 04, the query whose largest weight moved to another key, then the
    output rows' bars, before the rows whose weights changed in the second decimal."""
    heads: dict[str, list[str]] = {}
    for line in before:
        heads.setdefault(_head(line), []).append(line)
    size = {line: change_size(line, heads.get(_head(line), [])) for line in lines}
    return sorted(lines, key=lambda line: -size[line])


def announcement_for(cause: str, changed: list[str]) -> str:
    """What the live region reads after a change: ``cause`` (the control and its new value, as the
    learner sees it: "temperature 1.20.") first, then the first lines of the description that
    changed, at most ANNOUNCE_LINES of them and about ANNOUNCE_WORDS words (a longer first line is
    cut with "…"), then, when some were left out, "N more changes; Describe this figure lists
    all." The whole description stays on the canvas (its ``aria-describedby``)."""
    out = []
    if cause:
        out.append(cause.rstrip(".").rstrip("。") + _("."))
    if not changed:
        if cause:
            out.append(_("The description did not change."))
        return " ".join(out)
    said, words, cut = 0, 0, False
    for line in changed[:ANNOUNCE_LINES]:
        n = len(line.split())
        if said and words + n > ANNOUNCE_WORDS:
            break
        if n > ANNOUNCE_WORDS:  # one very long line: its start
            line = " ".join(line.split()[:ANNOUNCE_WORDS]).rstrip(",;:") + " …"
            n, cut = ANNOUNCE_WORDS, True
        out.append(line)
        said += 1
        words += n
    left = len(changed) - said
    if left:
        out.append((_("{n} more change; Describe this figure lists all.") if left == 1 else
                    _("{n} more changes; Describe this figure lists all.")).format(n=left))
    elif cut:
        out.append(_("Describe this figure lists all."))
    return " ".join(out)
