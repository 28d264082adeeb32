"""The pure helpers of benchmarks/pages.py: how it finds pages and tabs, judges targets, sizes payloads and writes
its table. Each is checked against an independent derivation (the files themselves, base64, plotly's JSON)."""

import base64
import importlib.util
import json
import re
import sys
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from posviz.pages import script

ROOT = Path(__file__).resolve().parents[2]


def _load():
    spec = importlib.util.spec_from_file_location("posviz_page_benchmarks", ROOT / "benchmarks" / "pages.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


bench = _load()


def test_app_pages_are_the_page_table():
    from posviz.pages import PAGES

    assert bench.app_pages() == tuple((p.key, p.file) for p in PAGES)
    assert all((ROOT / path).is_file() for _, path in bench.app_pages())


def test_tab_codes_are_the_keys_of_draw_in_order(tmp_path):
    page = tmp_path / "page.py"
    page.write_text('def a(): ...\nOTHER = {"x": 1}\nDRAW = {"table": a, "shift": a, "norms": a}\n')
    assert bench.tab_codes(page) == ("table", "shift", "norms")
    page.write_text('OTHER = {"x": 1}\n')
    assert bench.tab_codes(page) == ()


def test_every_tab_code_of_a_tabbed_page_has_its_label_in_the_catalog():
    catalog = json.loads((ROOT / "assets/i18n/en/sinusoidal.json").read_text(encoding="utf-8"))
    labelled = [key.removeprefix("sinusoidal.tab.") for key in catalog if key.startswith("sinusoidal.tab.")]
    codes = bench.tab_codes(ROOT / script("sinusoidal"))
    assert sorted(codes) == sorted(labelled)
    assert codes[0] == "table"  # the page's first tab, which its default view opens


@pytest.mark.parametrize(
    ("value", "limit", "at_least", "expected"),
    [
        (5.0, 5.0, False, "PASS"),
        (5.01, 5.0, False, "FAIL"),
        (20.0, 20.0, True, "PASS"),
        (19.9, 20.0, True, "FAIL"),
        (None, 1.0, False, "—"),
        (float("nan"), 1.0, False, "—"),
    ],
)
def test_verdict(value, limit, at_least, expected):
    assert bench.verdict(value, limit, at_least=at_least) == expected


@settings(max_examples=50)
@given(st.integers(min_value=0, max_value=5000))
def test_base64_length_is_that_of_the_encoded_bytes(n):
    assert bench.base64_length(n) == len(base64.b64encode(bytes(n)))


@settings(max_examples=20)
@given(st.integers(min_value=1, max_value=40), st.integers(min_value=1, max_value=40), st.integers(0, 2**32 - 1))
def test_plotly_z_length_is_the_length_of_the_values_in_plotly_json(rows, cols, seed):
    """The characters of ``z`` in plotly's own JSON of the heatmap, escapes included."""
    z = np.random.default_rng(seed).standard_normal((rows, cols)).astype(np.float32)
    text = go.Figure(go.Heatmap(z=z)).to_json()
    (written,) = re.findall(r'"bdata":"([^"]*)"', text)
    assert bench.plotly_z_length(z) == len(written)


def test_plotly_z_length_joins_blocks_exactly():
    """Above one block (4 MiB of float32) the blocks' texts add up to the text of the whole array."""
    z = np.random.default_rng(0).standard_normal((700, 2000))
    encoded = base64.b64encode(z.astype(np.float32).tobytes())
    assert bench.plotly_z_length(z) == len(encoded) + 5 * encoded.count(b"/")


@pytest.mark.parametrize(
    ("n", "text"),
    [(None, "—"), (999, "999 B"), (1000, "1 kB"), (1_500_000, "1.5 MB"), (2_147_483_648, "2.15 GB")],
)
def test_human_bytes(n, text):
    assert bench.human_bytes(n) == text


def test_markdown_table_aligns_numbers_and_escapes_cells():
    lines = bench.markdown_table(["page", "ms", "note"], [["a|b", 1.5, None], ["c", None, "x\ny"]])
    assert lines == ["| page | ms | note |", "|---|---:|---|", "| a\\|b | 1.5 | — |", "| c | — | x y |"]
