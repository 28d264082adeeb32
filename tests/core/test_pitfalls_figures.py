"""The Pitfalls page's error plots show zero as zero: a linear axis from 0 that reaches the level meaning "large",
or a log axis that stops at a floor on which smaller errors and exact zeros are drawn."""

from __future__ import annotations

import numpy as np
import pytest

from posviz.figures import pitfalls as pfig

TITLES = {"title": "t", "x_title": "x", "y_title": "y"}


def test_a_linear_error_plot_starts_at_zero_and_reaches_its_reference():
    noise = np.array([1.1e-16, 2.2e-16, 1.1e-16])
    fig = pfig.versus(range(3), ("correct", noise), ("buggy", noise), scale=(1.0, "large"), **TITLES)
    low, high = fig.layout.yaxis.range
    assert low == 0 and high >= 1.0  # rounding noise is 2e-16 of the axis: flat on zero
    assert fig.data[2].name == "large" and set(fig.data[2].y) == {1.0}
    big = np.array([0.0, 0.5, 3.0])
    fig = pfig.versus(range(3), ("correct", noise), ("buggy", big), scale=(1.0, "large"), **TITLES)
    assert fig.layout.yaxis.range[0] == 0 and fig.layout.yaxis.range[1] >= 3.0  # data above the level still shows


def test_a_log_error_plot_draws_zeros_on_its_floor():
    errors = np.array([0.0, 1e-12, 1e-7, 1e-3])
    fig = pfig.versus(range(4), ("float32", errors), ("float16", errors * 100), floor=(1e-10, "floor"), **TITLES)
    assert fig.layout.yaxis.type == "log"
    np.testing.assert_array_equal(fig.data[0].y, [1e-10, 1e-10, 1e-7, 1e-3])  # 0 and 1e-12 sit on the floor
    low, high = fig.layout.yaxis.range
    assert 10**low < 1e-10 and 10**high > 1e-1
    assert fig.data[2].name == "floor" and set(fig.data[2].y) == {1e-10}


def test_an_error_plot_is_linear_or_log_not_both():
    with pytest.raises(ValueError, match="either"):
        pfig.versus([0], ("a", [0.0]), ("b", [0.0]), scale=(1.0, "s"), floor=(1e-9, "f"), **TITLES)


def test_plain_plots_are_unchanged():
    fig = pfig.versus(range(2), ("a", [1.0, 2.0]), ("b", [3.0, 4.0]), **TITLES)
    assert len(fig.data) == 2 and fig.layout.yaxis.range is None
