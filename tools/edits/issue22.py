"""Issue 22: point the notebooks at attention_kit's new layout (mechanism/, learn/, scale/).

Rewrites only ``attention_kit.<old module>`` paths in cell sources (import lines and the
Markdown that names a module); safe to run twice. Usage: python tools/edits/issue22.py
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat

MOVED = {
    "scores": "mechanism.scores", "alignment": "mechanism.alignment",
    "attention": "mechanism.attention", "masks": "mechanism.masks",
    "positions": "mechanism.positions", "multihead": "mechanism.multi_head_attention",
    "backward": "learn.backward", "optim": "learn.optim", "layers": "learn.layers",
    "tiny_lm": "learn.tiny_lm", "corpus": "learn.corpus", "lm_training": "learn.lm_training",
    "training": "learn.toy_tasks", "online": "scale.online", "tiled": "scale.tiled",
    "kvcache": "scale.kvcache", "gqa": "scale.grouped_query", "sliding": "scale.sliding_window",
    "decoding": "scale.tiny_decoder", "parsing": "widgets.parsing",
}
DOTTED = re.compile(r"attention_kit\.(" + "|".join(MOVED) + r")\b")
FROM = re.compile(r"^from attention_kit import ([\w, ]+)$", re.M)


def _split_from(m: re.Match) -> str:
    """``from attention_kit import check, layers`` -> one import line per package."""
    by_package: dict[str, list[str]] = {}
    for item in (n.strip() for n in m.group(1).split(",")):
        name, _, alias = item.partition(" as ")
        package, _, leaf = ("attention_kit." + MOVED.get(name, name)).rpartition(".")
        by_package.setdefault(package, []).append(f"{leaf} as {alias}" if alias else leaf)
    return "\n".join(f"from {p} import {', '.join(names)}" for p, names in by_package.items())


# multi_head_forward is the one multi-head forward pass, in mechanism/multi_head_attention.py
FORWARD = re.compile(r"^(from attention_kit\.learn\.backward import .*?)multi_head_forward, (.*)$", re.M)


def rewrite(src: str) -> str:
    src = DOTTED.sub(lambda m: "attention_kit." + MOVED[m.group(1)], src)
    src = FROM.sub(_split_from, src)
    src = FORWARD.sub(r"\1\2\nfrom attention_kit.mechanism.multi_head_attention import multi_head_forward", src)
    # one cross-entropy, in learn/layers.py
    return src.replace("from attention_kit.learn.toy_tasks import WORDS, Trainer, cross_entropy",
                       "from attention_kit.learn.layers import cross_entropy\n"
                       "from attention_kit.learn.toy_tasks import WORDS, Trainer")


def main(paths: list[str]) -> None:
    root = Path(__file__).resolve().parents[2]
    for path in paths or sorted((root / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        changed = 0
        for cell in nb.cells:
            new = rewrite(cell.source)
            if new != cell.source:
                cell.source, changed = new, changed + 1
        if changed:
            nbformat.write(nb, path)
        print(f"{Path(path).name}: {changed} cell(s) changed")


if __name__ == "__main__":
    main(sys.argv[1:])
