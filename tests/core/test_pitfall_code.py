"""The code the Pitfalls page shows (``assets/code/pitfalls.toml``) is Python, every mistake has its buggy and fixed
versions, and the snippet that computes something computes it right: the fixed ``get_slopes`` is the ALiBi paper's
slopes (``posviz.alibi_slopes``, itself checked against the paper's code), the buggy one is not for a head count
that is no power of two."""

from __future__ import annotations

import ast
import math
import string
import tomllib
from pathlib import Path

import numpy as np
import pytest

import posviz

ROOT = Path(__file__).resolve().parents[2]
CODE = tomllib.loads((ROOT / "assets" / "code" / "pitfalls.toml").read_text(encoding="utf-8"))


def filled(snippet: str) -> str:
    """The snippet with each ``{field}`` filled by a number, as the page fills it with the values in use."""
    fields = {name for _, name, _, _ in string.Formatter().parse(snippet) if name}
    return snippet.format(**dict.fromkeys(fields, 7))


@pytest.mark.parametrize("key", list(CODE))
def test_every_snippet_is_python(key):
    ast.parse(filled(CODE[key]))


def test_every_mistake_has_both_versions():
    bugs = {key.removesuffix(".bug") for key in CODE if key.endswith(".bug")}
    fixes = {key.removesuffix(".fix") for key in CODE if key.endswith(".fix")}
    assert bugs == fixes and len(bugs) >= 8


def slopes(snippet: str, n: int) -> list[float]:
    scope: dict = {"math": math, "n": n}
    exec(snippet, scope)
    return scope["get_slopes"](n) if "get_slopes" in scope else scope["slopes"]


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 12, 16, 24, 64])
def test_the_fixed_alibi_code_gives_the_papers_slopes(n):
    np.testing.assert_allclose(slopes(CODE["alibi.fix"], n), posviz.alibi_slopes(n), rtol=1e-15)


@pytest.mark.parametrize("n", [3, 5, 12, 24])
def test_the_buggy_alibi_code_differs_where_the_page_says(n):
    buggy, right = np.asarray(slopes(CODE["alibi.bug"], n)), posviz.alibi_slopes(n)
    assert buggy.shape == right.shape and not np.allclose(buggy, right)
    for power in (8, 16):  # for a power of two the two agree, which is why the mistake survives
        np.testing.assert_allclose(slopes(CODE["alibi.bug"], power), posviz.alibi_slopes(power), rtol=1e-15)
