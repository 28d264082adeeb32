"""Models: any model's positions layer by layer, read from its config.json as transformers reads it; two models side
by side; Qwen2-VL's three positions per token (M-RoPE) and a vision encoder's 2-D RoPE, axial and mixed."""

import json
from pathlib import Path

import numpy as np
import streamlit as st

from posviz import checkpoint as ckpt
from posviz import models
from posviz.encodings import rope
from posviz.ui import cache, controls, errors_shown, intro, lazy_tabs, show, t, unused_controls, widgets

CTL = widgets.Controls("models")
SOURCES = ("preset", "paste", "upload", "path", "cache")
#: What a source gives, for the first words of an error about it (``errors_shown``).
ERROR_KIND = {"preset": "config", "paste": "config", "upload": "config", "path": "path", "cache": "cached"}
DEFAULT_MODEL = "llama4_scout"
DEFAULT_MODEL_B = "gemma3_4b"
#: The M-RoPE settings used when the chosen model has none: Qwen2-VL's.
MROPE_FALLBACK = "qwen2_vl_7b"
AXES = ("time", "height", "width")
#: The longest pasted config.json kept in the link (a published config is a few kB, Phi-3.5's about 7 kB).
LINK_CHARS = 64_000
#: The directions of the 2-D similarity profiles from the patch: (row step, column step).
DIRECTIONS = {"diagonal": (1, 1), "antidiagonal": (1, -1)}


def preset_name(name: str) -> str:
    return t(f"models.preset.{name}")


def pick_preset(key: str, default: str, label_key: str) -> str:
    return widgets.url_select(
        t(label_key),
        list(models.PRESETS),
        key=key,
        default=default,
        format_func=preset_name,
        help=t(f"{label_key}.help"),
    )


def pick_config() -> tuple[str | None, str, str]:
    """The config chosen with the source controls: ``(config text or path, its name, source)``; the text is None
    while nothing is given."""
    source = widgets.url_radio(
        t("models.ctl.from"),
        list(SOURCES),
        key="from",
        default="preset",
        horizontal=True,
        format_func=lambda s: t(f"models.from.{s}"),
    )
    if source in ("preset", "paste"):
        label = "models.ctl.model" if source == "preset" else "models.ctl.start"
        name = pick_preset("model", DEFAULT_MODEL, label)
        if source == "preset":
            return cache.model_preset_text(name), preset_name(name), source
        # a link carries an edited config.json as ?cfg=... (read once per link); the box starts from the preset
        given = st.query_params.get("cfg")
        if given and given != st.session_state.get("models.cfg_link"):
            st.session_state["cfg"] = given
            st.session_state["models.cfg_link"] = given
            st.session_state["models.cfg_preset"] = name
        elif "cfg" not in st.session_state or st.session_state.get("models.cfg_preset") != name:
            st.session_state["cfg"] = cache.model_preset_text(name)
            st.session_state["models.cfg_preset"] = name
        text = st.text_area(t("models.ctl.cfg"), key="cfg", height=220, help=t("models.ctl.cfg.help"))
        if text.strip() == cache.model_preset_text(name).strip():
            st.query_params.pop("cfg", None)
        elif len(text) > LINK_CHARS:  # a browser, and Streamlit, would drop the whole query string
            st.query_params.pop("cfg", None)
            st.caption(t("models.cfg.unlinked", n=f"{LINK_CHARS:,}"))
        else:
            st.query_params["cfg"] = text
        return text, t("models.name.pasted"), source
    if source == "upload":
        upload = st.file_uploader(t("models.ctl.upload"), type=["json"], key="upload", help=t("models.ctl.upload.help"))
        if upload is None:
            return None, "", source
        return upload.getvalue().decode("utf-8", errors="replace"), t("models.name.uploaded"), source
    if source == "path":
        path = st.text_input(
            t("models.ctl.path"),
            key="path",
            bind="query-params",
            placeholder="~/models/Qwen3-8B",
            help=t("models.ctl.path.help"),
        ).strip()
        return (path or None), t("models.name.folder"), source
    found = ckpt.list_cached_models()  # read anew, so a new download shows up
    if not found:
        st.info(t("inspect.cache.empty", folder=str(ckpt.hf_cache_dir())))
        return None, "", source
    names = [m.name for m in found]
    name = st.selectbox(t("models.ctl.cached"), names, key="cached", bind="query-params")
    return str(found[names.index(name)].path), name, source


def read_config(config: str, source: str):
    """The positions of the chosen config: its text as it is, or for a folder (typed, or of the cache) the
    config.json the checkpoint inspector reads there (``checkpoint.load_model_config``: a sentence-transformers
    folder's Transformer module, or the folder holding a model file)."""
    if source not in ("path", "cache"):
        return cache.model_positions(config)
    found = ckpt.load_model_config(str(Path(config).expanduser()))
    if found is None:
        raise ValueError(t("models.no_config", path=config))
    return cache.model_positions(json.dumps(found))


# ------------------------------------------------------------------------------------------------ words


def number(value) -> str:
    return widgets.shown(value)


def style_of(layer, first_theta) -> str:
    """The layer map's colour code of a layer (``figures.models.STYLE_COLOURS``)."""
    if layer.kind != "rope":
        return layer.kind
    if layer.rope_type not in (None, "default"):
        return "rope_scaled"
    return "rope" if layer.rope_theta == first_theta else "rope_other_base"


def attention_words(layer) -> str:
    if layer.attention in ("sliding", "chunked"):
        return t(f"models.attention.{layer.attention}", window=number(layer.window))
    return t(f"models.attention.{layer.attention}")


def details(layer) -> list[str]:
    """What else a group of layers does to positions, each in a few words."""
    out = [] if layer.kind == "none" else [attention_words(layer)]
    if layer.kind == "rope":
        out.append(t("models.detail.base", base=number(layer.rope_theta)))
        if layer.rope_type != "default":
            out.append(t("models.detail.scaled", type=layer.rope_type))
        if layer.partial:
            out.append(t("models.detail.partial", r=layer.rotary_dim, d=layer.head_dim))
        if layer.layout == "interleaved":
            out.append(t("models.detail.interleaved"))
        if layer.mrope_section is not None:
            out.append(t("models.detail.mrope", section=", ".join(map(str, layer.mrope_section))))
    if layer.temperature_tuning is not None:
        out.append(t("models.detail.temperature"))
    if layer.kind == "alibi" and layer.num_heads:
        out.append(t("models.detail.alibi", heads=layer.num_heads))
    if layer.kind == "relative_bias" and layer.relative_buckets:
        out.append(t("models.detail.buckets", buckets=layer.relative_buckets, distance=layer.relative_max_distance))
    return out


def group_label(layer) -> str:
    return " · ".join([t(f"models.kind.{layer.kind}"), *details(layer)])


def summary_sentence(positions) -> str:
    parts = []
    for g in positions.summary():
        kind, said = t(f"models.kind.{g.layer.kind}"), details(g.layer)
        if said:
            parts.append(t("models.summary.part", count=g.count, kind=kind, details=t("list.sep").join(said)))
        else:
            parts.append(t("models.summary.plain", count=g.count, kind=kind))
    return t("models.summary", n=positions.num_layers, parts=t("models.summary.sep").join(parts))


def map_rows(named: dict[str, object]) -> dict[str, list[dict]]:
    """The layer map's rows: for each model, its groups of layers with their label, layers and colour code."""
    rows = {}
    for name, positions in named.items():
        first = next((x.rope_theta for x in positions.layers if x.kind == "rope"), None)
        rows[name] = [
            {
                "label": group_label(g.layer),
                "indices": np.asarray(g.indices),
                "style": style_of(g.layer, first),
                "kind": g.layer.kind,
                "attention": g.layer.attention,
                "window": g.layer.window,
            }
            for g in positions.summary()
        ]
    return rows


def ignored_notice(positions) -> None:
    if positions.ignored:
        listed = t("list.sep").join(
            t("models.ignored.item", name=key, why=t(f"models.ignored.{why}")) for key, why in positions.ignored
        )
        st.info(t("models.ignored", keys=listed), icon=":material/info:")


def layer_map(named: dict[str, object], key: str) -> None:
    rows = map_rows(named)
    fig = cache.layer_map_figure(
        rows, title=t("models.map"), x_title=t("models.axis.layer"), layer_label=t("models.axis.layer")
    )
    data = {"model": [], "layer": [], "kind": [], "attention": [], "window": [], "group": []}
    for name, groups in rows.items():
        for group in groups:
            for index in group["indices"]:
                data["model"].append(name)
                data["layer"].append(int(index))
                data["kind"].append(group["kind"])
                data["attention"].append(group["attention"])
                data["window"].append(group["window"])
                data["group"].append(group["label"])
    show(fig, notice=t("models.map.notice"), key=key, data=data, name=f"models-{key}")


# ------------------------------------------------------------------------------------------------ tabs


def map_tab() -> None:
    st.markdown(summary_sentence(positions))
    ignored_notice(positions)
    layer_map({name: positions}, "map")


def rope_groups(found) -> list:
    return [g for g in found.summary() if g.layer.kind == "rope"]


def contexts_of(found) -> tuple[int | None, int | None]:
    """The pre-training context the config names (original_max_position_embeddings, else None) and the longest
    (max_position_embeddings, else None)."""
    return found.original_max_position_embeddings, found.max_position_embeddings


def layers_tab() -> None:
    groups = rope_groups(positions)
    if not groups:
        st.info(t("models.layers.none", kinds=t("list.sep").join(t(f"models.kind.{k}") for k in positions.counts())))
        return
    labels = {str(i): group_label(g.layer) for i, g in enumerate(groups)}
    with controls():
        choice = widgets.url_select(
            t("models.ctl.group"),
            list(labels),
            key="group",
            default="0",
            format_func=labels.get,
            help=t("models.ctl.group.help"),
        )
    layer = groups[int(choice)].layer
    st.markdown(
        t(
            "models.layers.facts",
            count=groups[int(choice)].count,
            type=layer.rope_type,
            factor=f"{layer.attention_factor:.4g}",
            softmax=f"{layer.softmax_scale:.4g}",
            r=layer.rotary_dim,
            d=layer.head_dim,
            pairs=layer.inv_freq.size,
        )
    )
    plain = cache.plain_inv_freq(layer)
    original, longest = contexts_of(positions)
    pairs = np.arange(layer.inv_freq.size)
    series = {t("models.layers.plain"): rope.rope_wavelength(plain)}
    scaled = not np.array_equal(plain, layer.inv_freq)
    if scaled:
        series[t("models.layers.scaled", type=layer.rope_type)] = rope.rope_wavelength(layer.inv_freq)
    if layer.long_inv_freq is not None:
        series[t("models.layers.long")] = rope.rope_wavelength(layer.long_inv_freq)
    contexts = {}
    if original:
        contexts[t("rope.ext.orig", L=number(original))] = original
    if longest and longest != original:
        contexts[t("models.layers.longest", L=number(longest))] = longest
    if layer.window:
        contexts[t(f"models.layers.{layer.attention}", L=number(layer.window))] = layer.window
    show(
        cache.model_wavelengths_figure(
            pairs,
            series,
            contexts,
            title=t("models.layers.wavelength"),
            x_title=t("axis.pair"),
            y_title=t("rope.axis.wavelength"),
        ),
        notice=t("models.layers.wavelength.notice"),
        key="wavelength",
        data={"pair": pairs, "inv_freq_plain": plain, "inv_freq_layer": layer.inv_freq},
        name="models-wavelengths",
    )
    if original:  # the config names the pre-training context: what the pairs saw there, and what they meet at the end
        seen = {t("models.layers.seen", L=number(original)): cache.turn_share(plain, original)}
        if longest and longest != original:
            seen[t("models.layers.reach", L=number(longest))] = cache.turn_share(layer.inv_freq, longest)
        notice = "models.layers.turns.notice"
    elif longest:  # it does not: how far each pair turns within the longest context
        seen = {t("models.layers.within", L=number(longest)): cache.turn_share(layer.inv_freq, longest)}
        notice = "models.layers.turns.notice_context"
        if scaled:
            st.caption(t("models.layers.unknown_original", type=layer.rope_type))
    else:
        return
    show(
        cache.lines_figure(
            pairs,
            seen,
            title=t("models.layers.turns"),
            x_title=t("axis.pair"),
            y_title=t("models.axis.turn"),
            y_range=(0.0, 1.05),
        ),
        notice=t(notice, never=int((seen[next(iter(seen))] < 1).sum()), pairs=pairs.size),
        key="turns",
        data={"pair": pairs, **seen},
        name="models-turns",
    )


def compare_tab() -> None:
    with controls():
        other = pick_preset("model_b", DEFAULT_MODEL_B, "models.ctl.model_b")
    found_b = cache.model_positions(cache.model_preset_text(other))
    name_b = preset_name(other)
    names = {f"A · {name}": positions, f"B · {name_b}": found_b}
    if name_b == name:
        names = {f"A · {name}": positions, f"B · {name}": found_b}
    for side, found in names.items():
        st.markdown(t("models.compare.summary", side=side, summary=summary_sentence(found)))
    layer_map(names, "compare_map")
    series, data = {}, {}
    for side, found in names.items():
        for g in rope_groups(found):
            label = f"{side[0]} · {group_label(g.layer)}"
            wave = rope.rope_wavelength(g.layer.inv_freq)
            series[label] = wave
            data[label] = wave
    if series:
        width = max(len(v) for v in series.values())
        padded = {k: np.pad(v, (0, width - len(v)), constant_values=np.nan) for k, v in series.items()}
        show(
            cache.model_wavelengths_figure(
                np.arange(width),
                padded,
                {},
                title=t("models.compare.wavelength"),
                x_title=t("axis.pair"),
                y_title=t("rope.axis.wavelength"),
            ),
            notice=t("models.compare.wavelength.notice"),
            key="compare_wavelength",
            data={"pair": np.arange(width), **padded},
            name="models-compare-wavelengths",
        )


def mrope_settings():
    """The chosen model's M-RoPE layer, else Qwen2-VL's, and whether it is the chosen model's."""
    own = None if positions is None else next((x for x in positions.layers if x.mrope_section is not None), None)
    if own is not None:
        return own, True
    fallback = cache.model_positions(cache.model_preset_text(MROPE_FALLBACK))
    return fallback.layers[0], False


def mrope_tab() -> None:
    st.latex(r"(t, h, w)_{\text{patch}} = (p + k,\ p + r,\ p + c),\qquad p_{\text{next text}} = p + \max(h, w)/m")
    layer, own = mrope_settings()
    st.caption(
        t("models.mrope.own" if own else "models.mrope.fallback", model=name if own else preset_name(MROPE_FALLBACK))
    )
    with controls():
        c = st.columns(4)
        with c[0]:
            text1 = CTL.numeric("text1", 1, 256, 4, slider=False)
            text2 = CTL.numeric("text2", 1, 256, 3, slider=False)
        with c[1]:
            img_h = CTL.numeric("img_h", 2, 64, 4, step=2, grid=2, slider=False)
            img_w = CTL.numeric("img_w", 2, 64, 6, step=2, grid=2, slider=False)
        with c[2]:
            vid_t = CTL.numeric("vid_t", 1, 16, 2, slider=False)
            vid_h = CTL.numeric("vid_h", 2, 64, 4, step=2, grid=2, slider=False)
        with c[3]:
            vid_w = CTL.numeric("vid_w", 2, 64, 4, step=2, grid=2, slider=False)
            reach = CTL.numeric("reach", 1, 512, 64, slider=False)
    segments = (
        int(text1),
        ("image", 1, int(img_h), int(img_w)),
        int(text2),
        ("video", int(vid_t), int(vid_h), int(vid_w)),
    )
    ids = cache.mrope_position_ids(segments)
    axis_names = tuple(t(f"models.axis.{a}") for a in AXES)
    show(
        cache.position_grid_figure(
            ids,
            list(axis_names),
            title=t("models.mrope.grid", n=ids.shape[1]),
            x_title=t("models.axis.token"),
            colorbar_title=t("models.axis.position_id"),
        ),
        notice=t("models.mrope.grid.notice"),
        key="mrope_grid",
        data={"token": np.arange(ids.shape[1]), **{a: ids[i] for i, a in enumerate(AXES)}},
        name="models-mrope-positions",
    )
    layouts = {
        t("models.mrope.sectioned"): cache.mrope_axes(layer.head_dim, layer.mrope_section, interleaved=False),
        t("models.mrope.interleaved"): cache.mrope_axes(layer.head_dim, layer.mrope_section, interleaved=True),
    }
    show(
        cache.axis_strips_figure(
            layouts,
            axis_names,
            title=t("models.mrope.axes", section=", ".join(map(str, layer.mrope_section))),
            x_title=t("axis.pair"),
        ),
        notice=t("models.mrope.axes.notice"),
        key="mrope_axes",
        data={"pair": np.arange(layer.inv_freq.size), **{k: v for k, v in layouts.items()}},
        name="models-mrope-axes",
    )
    distances = np.arange(int(reach) + 1)
    scores = {}
    for layout, axes in layouts.items():
        for axis in (1, 2):
            label = t("models.mrope.score.series", layout=layout, axis=axis_names[axis])
            scores[label] = cache.mrope_axis_score(layer.inv_freq, axes, axis, distances)
    show(
        cache.lines_figure(
            distances,
            scores,
            title=t("models.mrope.score"),
            x_title=t("models.axis.patches_apart"),
            y_title=t("models.axis.score"),
        ),
        notice=t("models.mrope.score.notice"),
        key="mrope_score",
        data={"distance": distances, **scores},
        name="models-mrope-score",
    )


def profile(grid: np.ndarray, row: int, col: int, step: tuple[int, int], length: int) -> np.ndarray:
    """The similarity from (row, col) stepping ``step`` at a time, NaN once the steps leave the grid."""
    out = np.full(length, np.nan)
    rows, cols = grid.shape
    for k in range(length):
        r, c = row + k * step[0], col + k * step[1]
        if 0 <= r < rows and 0 <= c < cols:
            out[k] = grid[r, c]
    return out


def rope2d_tab() -> None:
    unused_controls(t("models.ctl.from"), t("models.ctl.model"), reason=t("models.unused.rope2d"))
    st.latex(
        r"\text{axial: } \phi_{t} = r\,\theta_{2k}\ \text{or}\ c\,\theta_{2k+1},\qquad"
        r"\text{mixed: } \phi_t = \theta_t\,(r \sin\varphi_t + c \cos\varphi_t),\ "
        r"\varphi_t = \tfrac{\pi}{2} - \tfrac{\pi (t \bmod D)}{D}"
    )
    with controls():
        c = st.columns(3)
        with c[0]:
            rows = CTL.numeric("rows", 2, 32, 15, slider=False)
            cols = CTL.numeric("cols", 2, 32, 15, slider=False)
        with c[1]:
            head_dim = CTL.numeric("hd", 4, 256, 64, step=4, grid=4, slider=False)
            base = CTL.numeric("b2d", 2.0, 1_000_000.0, 10.0, log=True)
        with c[2]:
            row = CTL.numeric("pr", 0, int(rows) - 1, min(7, int(rows) - 1), slider=False)
            col = CTL.numeric("pc", 0, int(cols) - 1, min(7, int(cols) - 1), slider=False)
            directions = CTL.numeric("dirs", 2, 16, 8, step=2, grid=2, slider=False)
    patch = int(row) * int(cols) + int(col)
    axial = cache.rope_2d_similarity("axial", int(rows), int(cols), int(head_dim), patch, base=float(base)).reshape(
        rows, cols
    )
    mixed = cache.rope_2d_similarity("mixed", int(rows), int(cols), int(head_dim), patch, base=float(base)).reshape(
        rows, cols
    )
    show(
        cache.heatmap_pair_figure(
            axial,
            mixed,
            subtitles=(t("models.rope2d.axial"), t("models.rope2d.mixed", D=int(directions))),
            title=t("models.rope2d.similarity", r=int(row), c=int(col)),
            x_title=t("models.axis.column"),
            y_title=t("models.axis.row"),
            zmin=-1.0,
            zmax=1.0,
            colorbar_title="S",
        ),
        notice=t("models.rope2d.similarity.notice"),
        key="rope2d_similarity",
        data={"axial": axial.ravel(), "mixed": mixed.ravel()},
        name="models-rope2d-similarity",
    )
    rows, cols, row, col = int(rows), int(cols), int(row), int(col)
    length = max(min(rows - row, cols - col), min(rows - row, col + 1))  # the longer of the two diagonals' reach
    steps = np.arange(length)
    series = {}
    for variant, grid in ((t("models.rope2d.axial"), axial), (t("models.rope2d.mixed", D=int(directions)), mixed)):
        for code in ("diagonal", "antidiagonal"):
            series[f"{variant} · {t(f'models.direction.{code}')}"] = profile(
                grid, int(row), int(col), DIRECTIONS[code], length
            )
    show(
        cache.lines_figure(
            steps,
            series,
            title=t("models.rope2d.directions"),
            x_title=t("models.axis.steps"),
            y_title=t("models.axis.score"),
        ),
        notice=t("models.rope2d.directions.notice"),
        key="rope2d_directions",
        data={"steps": steps, **series},
        name="models-rope2d-directions",
    )


intro("models")
positions = None
with controls():
    config, name, source = pick_config()
if config is None:
    st.info(t(f"models.empty.{source}"))
else:
    with errors_shown(ERROR_KIND[source]):
        positions = read_config(config, source)
DRAW = {"map": map_tab, "layers": layers_tab, "compare": compare_tab, "mrope": mrope_tab, "rope2d": rope2d_tab}
if positions is None:  # the error above says what is wrong; M-RoPE and 2-D RoPE have their own settings
    DRAW = {code: draw if code in ("mrope", "rope2d") else st.empty for code, draw in DRAW.items()}
lazy_tabs("models", DRAW)
