"""Notebooks 01-09: what an explorer's live region reads after a control changes (issue 34): the
control and its new value first, then the few lines of the figure's description that changed.
The whole description stays on the picture for a screen reader to read at will."""

from __future__ import annotations

__all__ = ["ANNOUNCE_LINES", "ANNOUNCE_WORDS", "announcement_for"]


#: An announcement says at most this many changed lines, and at most about this many words of them.
ANNOUNCE_LINES = 3
ANNOUNCE_WORDS = 40


def announcement_for(cause: str, changed: list[str]) -> str:
    """What the live region reads after a change: ``cause`` (the control and its new value, as the
    learner sees it: "temperature 1.20.") first, then the first lines of the description that
    changed, at most ANNOUNCE_LINES of them and about ANNOUNCE_WORDS words (a longer first line is
    cut with "…"), then, when some were left out, "N more changes; Describe this figure lists
    all." The whole description stays on the canvas (its ``aria-describedby``)."""
    out = []
    if cause:
        out.append(cause.rstrip(".") + ".")
    if not changed:
        if cause:
            out.append("The description did not change.")
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
        out.append(f"{left} more {'change' if left == 1 else 'changes'}; Describe this figure lists all.")
    elif cut:
        out.append("Describe this figure lists all.")
    return " ".join(out)
