"""Every relative link and launch link in README.md, docs/ and the notebooks points to a file
that exists (and, for links into a Markdown file, to a heading that exists).

Checked: Markdown links and images ``[text](target)``, HTML ``href``/``src`` attributes, and
Binder launch links (``urlpath=lab/tree/<path>``, ``labpath=<path>``), also inside code blocks,
where the README shows the badge URL pattern. Links to other sites are not fetched (no network).
"""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[1]

MD_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HTML_LINK = re.compile(r"""\b(?:href|src)\s*=\s*["']([^"']+)["']""", re.IGNORECASE)
FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)
INLINE_CODE = re.compile(r"`[^`\n]*`")
BINDER = re.compile(r"https?://mybinder\.org/v2/[^\s)\"']+")
# The student edition's repository in docs/teaching.md (`make student`): its notebooks sit at its
# root, where this repository has them in notebooks/.
STUDENT_REPO = "/<course-student>/"
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)


def documents() -> list[Path]:
    docs = [ROOT / "README.md"]
    docs += sorted((ROOT / "docs").rglob("*.md")) if (ROOT / "docs").is_dir() else []
    docs += sorted((ROOT / "notebooks").glob("*.md"))
    docs += sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    return [d for d in docs if d.exists()]


def markdown_of(path: Path) -> str:
    if path.suffix == ".ipynb":
        nb = json.loads(path.read_text(encoding="utf-8"))
        return "\n\n".join("".join(c["source"]) if isinstance(c["source"], list) else c["source"]
                           for c in nb["cells"] if c["cell_type"] == "markdown")
    return path.read_text(encoding="utf-8")


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to '-'."""
    text = re.sub(r"`|\*\*|__|\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    kept = "".join(ch for ch in text if ch in " -_" or unicodedata.category(ch)[0] in "LN")
    return kept.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = FENCE.sub("", markdown_of(path))
    out: set[str] = set()
    for h in HEADING.findall(text):
        s, n = slug(h), 1
        while s in out:  # GitHub numbers repeated headings
            s, n = f"{slug(h)}-{n}", n + 1
        out.add(s)
    out |= set(re.findall(r"""\b(?:id|name)\s*=\s*["']([^"']+)["']""", text))
    return out


def links(text: str) -> tuple[list[str], list[str]]:
    """(relative targets, launch-link paths) in a Markdown text."""
    launch = []
    for url in BINDER.findall(text):
        query = parse_qs(urlsplit(url.replace("&amp;", "&")).query)
        for value in query.get("urlpath", []):
            m = re.match(r"/?(?:lab|doc)/tree/(.+)", unquote(value))
            if m:
                launch.append(("notebooks/" if STUDENT_REPO in url else "") + m.group(1))
        launch += [unquote(v) for v in query.get("labpath", [])]
    prose = INLINE_CODE.sub("", FENCE.sub("", text))
    rel = []
    for target in MD_LINK.findall(prose) + HTML_LINK.findall(prose):
        scheme = urlsplit(target).scheme
        if scheme or target.startswith("//"):
            continue  # http(s), mailto, data: another site, not checked here
        rel.append(target)
    return rel, launch


def broken(path: Path) -> list[str]:
    rel, launch = links(markdown_of(path))
    problems = []
    for target in rel:
        parts = urlsplit(target)
        dest = path if not parts.path else (path.parent / unquote(parts.path)).resolve()
        if not dest.exists():
            problems.append(f"{target!r}: {dest.relative_to(ROOT) if dest.is_relative_to(ROOT) else dest} does not exist")
            continue
        if parts.fragment and dest.suffix == ".md" and parts.fragment not in anchors(dest):
            problems.append(f"{target!r}: no heading #{parts.fragment} in {dest.name}")
        if not dest.resolve().is_relative_to(ROOT):
            problems.append(f"{target!r} leaves the repository")
    for rel_path in launch:
        if not (ROOT / rel_path).exists():
            problems.append(f"launch link opens {rel_path!r}, which does not exist")
    return problems


def test_the_link_checker_finds_broken_links(tmp_path):
    text = ("[ok](README.md) [gone](nope.md) ![img](pics/x.png) `[code](skip.md)` "
            "<a href=\"also-gone.html\">x</a> [web](https://example.org/a.md) [top](#title)\n"
            "```\nhttps://mybinder.org/v2/gh/o/r/HEAD?urlpath=lab/tree/notebooks/99_missing.ipynb\n"
            "```\n")
    rel, launch = links(text)
    assert rel == ["README.md", "nope.md", "pics/x.png", "#title", "also-gone.html"]
    assert launch == ["notebooks/99_missing.ipynb"]
    assert slug("2 · Self-attention, by hand (`X @ X.T`)") == "2--self-attention-by-hand-x--xt"


@pytest.mark.parametrize("doc", documents(), ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_and_launch_links_resolve(doc):
    problems = broken(doc)
    assert not problems, f"{doc.relative_to(ROOT)}:\n" + "\n".join(problems)


def test_readme_has_a_binder_launch_link_to_the_first_notebook():
    _, launch = links(markdown_of(ROOT / "README.md"))
    assert "notebooks/01_general_attention_model.ipynb" in launch
