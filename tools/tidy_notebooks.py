"""Drop the per-cell execution timestamps that nbconvert records (metadata.execution), and join
consecutive pieces of one stream (a busy machine splits a cell's prints at random places).

They change on every run, so every re-execution touched every cell of a notebook and merges of
two branches that both edited a notebook conflicted on lines nobody meant to change.
`make notebooks` executes with record_timing off and runs this afterwards.

    python tools/tidy_notebooks.py notebooks/*.ipynb
"""
from __future__ import annotations

import json
import sys


def tidy(path: str) -> bool:
    with open(path, encoding="utf-8") as f:
        nb = json.load(f)
    changed = False
    for cell in nb["cells"]:
        if "execution" in cell.get("metadata", {}):
            del cell["metadata"]["execution"]
            changed = True
        outputs, joined = cell.get("outputs", []), []
        for o in outputs:
            prev = joined[-1] if joined else None
            if (o.get("output_type") == "stream" and prev is not None
                    and prev.get("output_type") == "stream" and prev.get("name") == o.get("name")):
                text = "".join(prev["text"]) + "".join(o["text"])
                prev["text"] = text.splitlines(keepends=True)
                changed = True
            else:
                joined.append(o)
        if len(joined) != len(outputs):
            cell["outputs"] = joined
    if changed:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(nb, f, indent=1, ensure_ascii=False)
            f.write("\n")
    return changed


if __name__ == "__main__":
    for p in sys.argv[1:]:
        if tidy(p):
            print(f"tidied {p}")
