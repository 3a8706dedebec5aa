"""The teacher's material: every question to ask in class has an answer (docs/class-answers.md),
and `make answers` (tools/make_answers.py) writes a key with every exercise's worked solution."""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import make_answers  # noqa: E402

from attention_kit.check import registry  # noqa: E402


def _words(text: str, n: int = 3) -> list[str]:
    return re.sub(r"[*$`\"“”:;,.?!()]", " ", text).lower().split()[:n]


def _questions() -> dict[str, list[str]]:
    """Notebook number -> its "Questions to ask in class", from docs/teaching.md."""
    guide = (ROOT / "docs" / "teaching.md").read_text(encoding="utf-8")
    out = {}
    for part in re.split(r"^## (?=\d\d · )", guide, flags=re.M)[1:]:
        number = part[:2]
        if "**Questions to ask in class**" not in part:
            continue
        block = part.split("**Questions to ask in class**", 1)[1].split("\n---", 1)[0]
        block = block.split("\n## ", 1)[0]
        out[number] = re.findall(r"^\d+\. (.+)$", block, re.M)
    return out


def _answers() -> dict[str, list[str]]:
    text = (ROOT / "docs" / "class-answers.md").read_text(encoding="utf-8")
    out = {}
    for part in re.split(r"^## (?=\d\d · )", text, flags=re.M)[1:]:
        out[part[:2]] = re.findall(r"^\d+\. \*\*(.+?)\*\*", part, re.M)
    return out


def test_every_question_to_ask_in_class_has_an_answer():
    questions, answers = _questions(), _answers()
    assert set(questions) == {nb.number for nb in registry.NOTEBOOKS}
    assert sum(len(q) for q in questions.values()) >= 40
    for number, asked in questions.items():
        given = answers.get(number, [])
        assert len(given) == len(asked), (
            f"notebook {number}: {len(asked)} questions in docs/teaching.md, {len(given)} answers in "
            "docs/class-answers.md")
        for k, (q, a) in enumerate(zip(asked, given, strict=True), start=1):
            assert _words(q) == _words(a), (
                f"notebook {number}, question {k}: the answer should open with the question "
                f"({q[:50]!r}), not {a[:50]!r}")


def test_answer_key_has_every_exercise_with_its_solution(tmp_path):
    out = tmp_path / "key.md"
    assert make_answers.main(["-o", str(out)]) == 0
    key = out.read_text(encoding="utf-8")
    sections = re.split(r"^### (?=\d\d\.\d )", key, flags=re.M)[1:]
    ids = [s.split()[0] for s in sections]
    assert ids == [ex_id for ex_id, _, _ in registry.exercises()]
    for section in sections:
        assert "```python" in section, f"exercise {section.split()[0]} has no worked solution"
    assert "answer = [1, 2, 3, 4, 5, 0]" in key          # 05.4, a prediction
    assert "def my_softmax_rows(S):" in key                # 02.1, a function
    assert "## Answers to the questions to ask in class" in key
    assert "32 × 4095 = 131,040" in key
