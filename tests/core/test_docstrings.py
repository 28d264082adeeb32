"""Docstrings are scannable: a function's, a class's or a module's first paragraph (what it is: the formula and the
source) is at most ``SUMMARY_WORDS`` words; what follows goes into paragraphs of its own, or, for a record's fields,
into a comment over each field."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SUMMARY_WORDS = 100


def summaries(path: Path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            doc = ast.get_docstring(node)
            if doc:
                yield getattr(node, "name", "<module>"), getattr(node, "lineno", 1), doc.split("\n\n")[0]


MODULES = sorted((ROOT / "posviz").rglob("*.py"))


@pytest.mark.parametrize("path", MODULES, ids=lambda path: str(path.relative_to(ROOT)))
def test_every_first_paragraph_is_short(path):
    long = [
        f"{name} (line {line}): {len(summary.split())} words"
        for name, line, summary in summaries(path)
        if len(summary.split()) > SUMMARY_WORDS
    ]
    assert not long, f"{path.relative_to(ROOT)}: first paragraphs over {SUMMARY_WORDS} words: {long}"


def test_the_check_sees_a_long_summary(tmp_path):
    """The rule can fail: a 101-word first paragraph is found, a 100-word one is not."""
    words = " ".join(["word"] * 101)
    module = tmp_path / "long.py"
    module.write_text(f'def f():\n    """{words}\n\n    More."""\n', encoding="utf-8")
    assert [len(summary.split()) for _, _, summary in summaries(module)] == [101]
    module.write_text(f'def f():\n    """{" ".join(["word"] * 100)}"""\n', encoding="utf-8")
    assert all(len(summary.split()) <= SUMMARY_WORDS for _, _, summary in summaries(module))
