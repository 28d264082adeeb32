"""What tests read out of a plotly figure's JSON (a dict, as ``fig.to_plotly_json()`` or AppTest give it)."""

from __future__ import annotations

from collections.abc import Iterator


def font_sizes(node, inside_font: bool = False) -> Iterator[float]:
    """Every font size set in a figure's layout or traces (not in plotly's template, not inside packed arrays)."""
    if isinstance(node, dict):
        if "bdata" in node:
            return
        for key, value in node.items():
            if key == "template":
                continue
            if inside_font and key == "size" and isinstance(value, (int, float)):
                yield value
            yield from font_sizes(value, key.endswith("font"))
    elif isinstance(node, list):
        for item in node:
            yield from font_sizes(item, inside_font)
