"""A built figure as a projector or a colour-blind reader needs it: larger type everywhere (``large``), and the
colour-blind-safe, high-contrast colours of ``colours`` (``safe``).

Figures are built once and shared between sessions, so nothing here changes a figure: ``restyle`` takes the
figure's dictionary (``fig.to_dict()``) and returns a new one that shares every array with it and copies only
the small dictionaries it changes. A heatmap drawn as a palette PNG gets the same pixels with another palette:
only the PNG's PLTE chunk is rewritten, near the start of the file, so the image is never decoded.
"""

from __future__ import annotations

import base64
import functools
import math
import struct
import zlib

import numpy as np
from plotly.colors import sample_colorscale

from . import colours

#: The smallest type a figure may have in presentation mode (px), and the sizes given to its texts: everything
#: inherits ``FONT_SIZE``; a title holds a 70% ``<sup>`` note, and a tick label of an axis with powers of ten a
#: 70% exponent, so those are large enough for the small part to stay at least ``MIN_FONT_SIZE``.
MIN_FONT_SIZE = 18
FONT_SIZE = 20
TITLE_SIZE = 26
POWER_TICK_SIZE = 26
#: Figures in presentation mode are at least this tall (px): a 1280 x 720 projector shows most of one at a time.
MIN_HEIGHT = 540
#: Lines in the high-contrast mode are at least this wide (px).
SAFE_LINE_WIDTH = 3.0

_COLOUR_KEYS = frozenset(
    {"color", "bgcolor", "bordercolor", "fillcolor", "linecolor", "activecolor", "outlinecolor", "colorway"}
)
_FONT_KEYS = frozenset({"font", "tickfont", "textfont", "insidetextfont", "outsidetextfont", "grouptitlefont"})
_SKIP = frozenset({"template"})  # plotly's default template: large, and it sets no size or colour that shows


def restyle(figure: dict, *, large: bool, safe: bool) -> dict:
    """``figure`` (a plotly figure dictionary, left unchanged) in presentation type (``large``) and/or the safe
    colours (``safe``); the dictionary itself when neither is asked for."""
    if not (large or safe):
        return figure
    walk = functools.partial(_walk, large=large, safe=safe)
    out = dict(figure)
    out["data"] = [walk(trace, "") for trace in figure.get("data", ())]
    layout = walk(figure.get("layout", {}), "")
    if "frames" in figure:
        out["frames"] = [walk(frame, "") for frame in figure["frames"]]
    if large:
        layout = _legend_with_room(_large_layout(layout), out["data"])
        out["data"] = [_large_trace(trace) for trace in out["data"]]
    if safe:
        layout["colorway"] = list(colours.SAFE_COLORWAY)
        out["data"] = [_safe_trace(trace, out["data"]) for trace in out["data"]]
    out["layout"] = layout
    return out


#: The least plot area a figure cut to a screen's height keeps (px), between its title and its axis and legend.
MIN_PLOT = 240
#: One entry of a legend at presentation type (px): a row of a legend beside the plot, or under it.
LEGEND_ENTRY = 30
#: The room under the plot for the x axis's tick labels and title at presentation type (px), above a legend there.
X_AXIS_ROOM = 100
#: The width a legend under the plot fills its rows to (px): the main column of a 1280 px projector (1,216 px), less
#: a little for the estimate of the texts' widths.
LEGEND_ROW_WIDTH = 1180


#: The widest a one-line title may be at presentation type (px): the main column of a 1280 px projector, less margins.
TITLE_WIDTH = 1150


def wrapped_title(text: str) -> str:
    """A title too wide for a projector's figure at presentation type, broken into two lines at the space nearest its
    middle (plotly does not wrap titles: the end would be cut off). A title that already has lines, or holds markup
    before its end (a ``<sup>`` note), is left as it is, as is one with no space to break at."""
    if "<" in text or text_width(text, TITLE_SIZE) <= TITLE_WIDTH:
        return text
    spaces = [i for i, c in enumerate(text) if c == " "]
    if not spaces:
        return text
    middle = len(text) / 2
    at = min(spaces, key=lambda i: abs(i - middle))
    return f"{text[:at]}<br>{text[at + 1 :]}"


def text_width(text: str, size: float) -> float:
    """About how wide ``text`` is in ``size`` px type, in pixels: half the size a character, the whole size a Chinese
    one (the figures' sans-serif type draws Latin text at about 0.48 of its size a character, seen in Chromium)."""
    return sum(size if "\u2e80" <= c <= "\uffef" else 0.5 * size for c in text)


def legend_rows(names: list[str], size: float, width: float) -> int:
    """How many rows a horizontal legend of ``names`` in ``size`` px type fills at ``width`` px, as plotly lays it
    out: one row when every entry (its text, a 40 px sample of the line and a gap) fits in it, and otherwise a grid
    of columns as wide as the widest entry."""
    entries = [40.0 + text_width(name, size) for name in names]
    if sum(entries) <= width:
        return 1
    per_row = max(1, int(width // max(entries)))
    return math.ceil(len(entries) / per_row)


def _legend_with_room(layout: dict, data: list[dict], *, grow: bool = True) -> dict:
    """A legend at presentation type with room of its own.

    One beside the plot whose entries are more than the plot's height holds (plotly would give it a scroll bar:
    eight ALiBi heads on a figure cut to the first screen's 360 px) goes under the plot in rows; one already under
    the plot (sized by its figure for 13 px type) gets the rows its larger type fills, under the x axis's room. The
    bottom margin grows to hold the rows, and the figure by as much when ``grow``. Figures with legends of their own
    per panel (``legend2`` …) keep them."""
    legend = layout.get("legend", {})
    if layout.get("showlegend") is False or "legend2" in layout:
        return layout
    names = [str(t["name"]) for t in data if t.get("name") and t.get("showlegend", True) is not False]
    if len(names) < 2:
        return layout
    margin = layout.get("margin", {})
    bottom = margin.get("b", 80)
    rows = legend_rows(names, FONT_SIZE, LEGEND_ROW_WIDTH) * LEGEND_ENTRY + 10  # the legend's rows, in px
    if legend.get("orientation") == "h":
        if legend.get("yref") != "container" or (legend.get("y") or 0) > 0:
            return layout  # above the plot, or in it: where its figure put it
        wanted = max(bottom, X_AXIS_ROOM + rows)  # under the x axis, whatever room its figure made for smaller type
    elif len(names) * LEGEND_ENTRY <= layout["height"] - margin.get("t", 100) - bottom:
        return layout
    else:
        wanted = bottom + rows
    layout["legend"] = {
        **legend,
        **{"orientation": "h", "x": 0.0, "xanchor": "left", "y": 0.0, "yref": "container", "yanchor": "bottom"},
    }
    layout["margin"] = {**margin, "b": wanted}
    if grow:
        layout["height"] += wanted - bottom
    return layout


def shorter(figure: dict, height: int) -> dict:
    """``figure`` (a presentation-type figure dictionary, left unchanged) at most ``height`` px tall, its legend
    under the plot when the shorter plot no longer holds it beside, and never so short that the plot area under the
    title and over the axis and the legend is less than ``MIN_PLOT`` (a log axis's labels would pile up) or than its
    y axis's title is long."""
    layout = dict(figure.get("layout", {}))
    layout["height"] = min(layout.get("height") or MIN_HEIGHT, height)
    layout = _legend_with_room(layout, figure.get("data", []), grow=False)
    margin = layout.get("margin", {})
    title = (layout.get("yaxis") or {}).get("title") or ""
    y_title = str((title.get("text") or "") if isinstance(title, dict) else title)
    longest = max((text_width(line, FONT_SIZE) for line in y_title.split("<br>")), default=0.0)
    plot = max(MIN_PLOT, longest + 20)  # the y axis's title, written upwards, no longer than the plot is tall
    layout["height"] = max(layout["height"], round(margin.get("t", 100) + margin.get("b", 80) + plot))
    return {**figure, "layout": layout}


def _walk(value, key: str, *, large: bool, safe: bool):
    """``value`` (found under ``key``) with its colours made safe and its font sizes raised, copied where changed."""
    if isinstance(value, dict):
        if "bdata" in value or key in _SKIP:  # a typed array, or the template: shared as it is
            return value
        out = {k: _walk(v, k, large=large, safe=safe) for k, v in value.items()}
        if large and key in _FONT_KEYS and isinstance(out.get("size"), (int, float)):
            out["size"] = max(out["size"], FONT_SIZE)
        return out
    if isinstance(value, list):
        if safe and key == "colorscale":
            return colours.safe_scale(value)
        if value and isinstance(value[0], dict):
            return [_walk(v, key, large=large, safe=safe) for v in value]
        if safe and key in _COLOUR_KEYS:
            return [colours.safe_colour(v) if isinstance(v, str) else v for v in value]
        return value
    if safe and isinstance(value, str) and key in _COLOUR_KEYS:
        return colours.safe_colour(value)
    if safe and isinstance(value, str) and key == "colorscale":
        return colours.safe_scale(value)
    return value


def _large_layout(layout: dict) -> dict:
    """Sizes for the back row: base font, title, hover labels, texts on bars never shrunk below the minimum, the
    figure's height, and axes that make room for their larger labels."""
    layout["font"] = {**layout.get("font", {}), "size": FONT_SIZE}
    title = layout.get("title", {})
    if isinstance(title, dict):
        title = {**title, "text": wrapped_title(str(title.get("text") or ""))} if title.get("text") else title
        layout["title"] = {**title, "font": {**title.get("font", {}), "size": TITLE_SIZE}}
    hover = layout.get("hoverlabel", {})
    layout["hoverlabel"] = {**hover, "font": {**hover.get("font", {}), "size": FONT_SIZE}}
    layout["uniformtext"] = {"minsize": MIN_FONT_SIZE, "mode": "show"}
    layout["height"] = max(layout.get("height") or 450, MIN_HEIGHT)
    margin = layout.get("margin", {})
    two_line_title = "<br>" in str(title.get("text", "") if isinstance(title, dict) else "")
    layout["margin"] = {**margin, "t": max(margin.get("t", 0), 110 if two_line_title else 80)}
    # Streamlit's theme gives axes, legends and annotations sizes of their own, which win over the figure's font:
    # every text is sized here explicitly.
    for name, axis in list(layout.items()):
        if (name.startswith("xaxis") or name.startswith("yaxis")) and isinstance(axis, dict):
            tick = POWER_TICK_SIZE if axis.get("exponentformat") == "power" else FONT_SIZE
            layout[name] = {**_sized(axis, tick), "automargin": True, **_decade_ticks(axis, name, layout, tick)}
        elif name.startswith("coloraxis") and isinstance(axis, dict) and "colorbar" in axis:
            layout[name] = {**axis, "colorbar": _sized(axis["colorbar"], FONT_SIZE)}
    legend = layout.get("legend", {})
    layout["legend"] = {**legend, "font": _at_least(legend.get("font"))}
    if isinstance(legend.get("title"), dict):
        layout["legend"]["title"] = {**legend["title"], "font": _at_least(legend["title"].get("font"))}
    for group in ("annotations", "updatemenus", "sliders"):
        if layout.get(group):
            layout[group] = [{**item, "font": _at_least(item.get("font"))} for item in layout[group]]
    for slider in layout.get("sliders", ()):
        slider["currentvalue"] = {**slider.get("currentvalue", {}), "font": _at_least(None)}
    return layout


def _decade_ticks(axis: dict, name: str, layout: dict, tick: int) -> dict:
    """A log axis labelled at every power of ten: at presentation size, every k-th power, so that labels do not
    overlap (about two label heights apart on a y axis, four on an x axis); unchanged when the axis has no fixed
    range to count decades on. A log axis that sets no step of its own is labelled at 2 and 5 between decades."""
    if axis.get("type") == "log" and axis.get("dtick") is None:
        return {"dtick": "D2"}  # plotly's own labels write every digit between decades, piled up in larger type
    if axis.get("type") != "log" or axis.get("dtick") not in (1, 1.0):
        return {}
    span = axis.get("range")
    if not span or len(span) != 2 or None in span:
        return {}  # plotly's own spacing would label the digits between decades, in smaller type
    decades = abs(float(span[1]) - float(span[0]))
    vertical = name.startswith("yaxis")
    length = (layout["height"] - 200) if vertical else 900  # the plot area, under the title and over the x labels
    room = (2 if vertical else 4) * tick
    return {"dtick": max(1, math.ceil(decades * room / max(length, 1)))}


def _at_least(font: dict | None, size: int = FONT_SIZE) -> dict:
    font = font or {}
    return {**font, "size": max(font.get("size") or 0, size)}


def _sized(owner: dict, tick: int) -> dict:
    """An axis or colour bar with its tick labels at ``tick`` px and its title at ``FONT_SIZE`` at least."""
    out = {**owner, "tickfont": _at_least(owner.get("tickfont"), tick)}
    title = owner.get("title")
    out["title"] = {**(title if isinstance(title, dict) else {"text": title or ""}), "font": _at_least(None)}
    if isinstance(title, dict) and title.get("font"):
        out["title"]["font"] = _at_least(title["font"])
    return out


def _large_trace(trace: dict) -> dict:
    """A trace's colour bar and texts at presentation size."""
    for owner in (trace, trace.get("marker")):
        if isinstance(owner, dict) and isinstance(owner.get("colorbar"), dict):
            owner["colorbar"] = _sized(owner["colorbar"], FONT_SIZE)
    if "text" in trace or "texttemplate" in trace:
        trace["textfont"] = _at_least(trace.get("textfont"))
    return trace


def _safe_trace(trace: dict, traces: list[dict]) -> dict:
    """Thicker lines; a palette image gets the palette of its figure's (now safe) colour scale."""
    kind = trace.get("type", "scatter")
    if kind in ("scatter", "scattergl") and "lines" in str(trace.get("mode", "lines")):
        line = trace.get("line", {})
        trace["line"] = {**line, "width": max(line.get("width", 2.0), SAFE_LINE_WIDTH)}
    if kind == "image" and str(trace.get("source", "")).startswith(_PNG_URI):
        scale = next((t["marker"]["colorscale"] for t in traces if "colorscale" in t.get("marker", {})), None)
        if scale is not None:
            trace["source"] = repaint(trace["source"], scale)
    return trace


# ------------------------------------------------------------------------------------------ palette images

_PNG_URI = "data:image/png;base64,"
_LEVELS = 255  # base.LEVELS: colour levels; index 255 is the transparent blank


@functools.lru_cache(maxsize=32)
def _palette_bytes(scale: tuple) -> bytes:
    """``_LEVELS`` RGB colours sampled evenly from ``scale`` (as tuples), then black for the transparent index."""
    sampled = sample_colorscale([list(s) for s in scale], np.linspace(0, 1, _LEVELS), colortype="rgb")
    rgb = [int(round(float(c))) for s in sampled for c in s[s.index("(") + 1 : -1].split(",")]
    return bytes(rgb) + b"\x00\x00\x00"


def repaint(uri: str, scale) -> str:
    """The palette PNG ``uri`` (as ``base._png_data_uri`` writes it) with its palette sampled from ``scale`` instead:
    the same cells, the same transparency. Only the head of the file (signature, IHDR, PLTE) is decoded again."""
    encoded = uri[len(_PNG_URI) :]
    head_chars = 4 * ((8 + 25 + 12 + 3 * 256 + 2) // 3 + 1)  # whole base64 groups covering the PLTE chunk
    head = bytearray(base64.b64decode(encoded[:head_chars]))
    at = 8
    while at + 8 <= len(head) and head[at + 4 : at + 8] != b"PLTE":
        at += 12 + struct.unpack(">I", head[at : at + 4])[0]
    length = struct.unpack(">I", head[at : at + 4])[0] if at + 8 <= len(head) else 0
    palette = _palette_bytes(tuple(tuple(s) for s in scale))
    if head[at + 4 : at + 8] != b"PLTE" or length != len(palette) or at + 12 + length > len(head):
        raise ValueError("not a palette PNG of 256 colours as the heatmaps write them")
    head[at + 8 : at + 8 + length] = palette
    head[at + 8 + length : at + 12 + length] = struct.pack(">I", zlib.crc32(head[at + 4 : at + 8 + length]))
    return _PNG_URI + base64.b64encode(bytes(head)).decode("ascii") + encoded[head_chars:]
