"""Training lab: a micro BERT trained on the CPU with each positional encoding, and what it learned."""

import tempfile
from pathlib import Path

import numpy as np
import streamlit as st

from posviz import analysis, figures, lab
from posviz.figures import lab as lab_figures
from posviz.ui import cache, controls, errors_shown, heatmap, intro, lazy_tabs, session_tables, show, t

LENGTH_FACTORS = (0.25, 0.5, 0.75, 1, 1.25, 1.5, 2, 3, 4)  # evaluation lengths, in multiples of the training length
SESSION_PREFIX = "lab · "
TRAIN_REQUEST = "lab.train"
ISOLATION_REQUEST = "lab.isolation"


def config_of(encoding: str) -> lab.TrainConfig:
    return lab.TrainConfig(encoding=encoding, steps=steps, seed=seed)


def progress_bar(encoding: str, index: int, total: int):
    """A callback for ``lab.train`` that moves one bar over all the runs, with the current loss in its text."""
    bar = st.progress(index / total, text=t("lab.training", encoding=encoding, step=0, steps=steps, loss="…"))
    every = max(1, steps // 50)

    def update(step: int, steps_total: int, loss: float) -> None:
        if step % every == 0 or step == steps_total:
            text = t("lab.training", encoding=encoding, step=step, steps=steps_total, loss=f"{loss:.3f}")
            bar.progress((index + step / steps_total) / total, text=text)

    return update


def train_missing(missing: list[str]) -> None:
    for index, encoding in enumerate(missing):  # each run is cached as soon as it ends, so a stop keeps them
        cache.lab_run(config_of(encoding), progress=progress_bar(encoding, index, len(missing)))


def training_tab() -> None:
    """Loss curves and held-out MLM accuracy of every trained encoding."""
    show(
        figures.lines(
            np.arange(1, steps + 1),
            {encoding: runs[encoding].losses for encoding in runs},
            title=t("lab.loss"),
            x_title=t("lab.axis.step"),
            y_title=t("lab.axis.loss"),
        ),
        notice=t("lab.loss.notice"),
        key="loss",
        data={"step": np.arange(1, steps + 1), **{e: r.losses for e, r in runs.items()}},
        name="lab_loss",
    )
    show(
        figures.bars(
            list(runs),
            [r.mlm_accuracy for r in runs.values()],
            title=t("lab.accuracy"),
            x_title=t("lab.axis.encoding"),
            y_title=t("lab.axis.accuracy"),
        ),
        notice=t("lab.accuracy.notice"),
        key="accuracy",
        data={"encoding": list(runs), "mlm_accuracy": [r.mlm_accuracy for r in runs.values()]},
        name="lab_accuracy",
    )


def tables_tab() -> None:
    """For the learned tables: similarity at initialisation and after training, the way there, and the probe."""
    learned = {e: r for e, r in runs.items() if e in lab.LEARNED_TABLES}
    if not learned:
        st.info(t("lab.tables.none"))
        return
    for encoding, run in learned.items():
        st.subheader(t(f"lab.tables.{encoding}"))
        similarities = cache.on_table(analysis.similarity_stack, f"lab:{run.config}", run.snapshots)
        left, right = st.columns(2)
        for column, index, label in ((left, 0, "init"), (right, -1, "trained")):
            with column:
                show(
                    heatmap(
                        similarities[index],
                        title=t(f"lab.similarity.{label}", step=int(run.snapshot_steps[index])),
                        x_title=t("axis.position"),
                        y_title=t("axis.position"),
                        zmin=-1.0,
                        zmax=1.0,
                        colorbar_title="cos",
                        height=380,
                    ),
                    key=f"{encoding}-{label}",
                    data=similarities[index],
                    name=f"lab_{encoding}_{label}_similarity",
                )
        st.caption(t(f"lab.similarity.notice.{encoding}"))
        show(
            lab_figures.similarity_animation(
                run.snapshot_steps,
                similarities,
                title=t("lab.animation", encoding=encoding),
                axis_title=t("axis.position"),
                play=t("rope.anim.play"),
                pause=t("rope.anim.pause"),
                slider_prefix=t("lab.axis.step") + ": ",
            ),
            notice=t("lab.animation.notice"),
            key=f"{encoding}-animation",
            data={"step": run.snapshot_steps},
            name=f"lab_{encoding}_snapshots",
        )
    names = list(learned)
    before = [learned[e].probe_before for e in names]
    after = [learned[e].probe_after for e in names]
    fig = figures.bars(
        names, before, title=t("lab.probe"), x_title=t("lab.axis.encoding"), y_title=t("learned.axis.probe")
    )
    fig.data[0].name = t("lab.probe.before")
    fig.add_bar(x=names, y=after, name=t("lab.probe.after"))
    guess = analysis.constant_guess_error(learned[names[0]].config.seq_len)
    figures.hline(fig, guess, t("lab.probe.guess", guess=guess), dash="dot")
    fig.update_layout(barmode="group", showlegend=True)
    show(
        fig,
        notice=t("lab.probe.notice"),
        key="probe",
        data={"encoding": names, "probe_before": before, "probe_after": after},
        name="lab_probe",
    )


def lengths_tab() -> None:
    """Accuracy against the sequence length, shorter and longer than the training length, and the learned table's
    hard limit."""
    config = next(iter(runs.values())).config
    train_len = config.seq_len
    lengths = tuple(int(train_len * f) for f in LENGTH_FACTORS)
    scores = {
        e: cache.STORE.get(("lab-lengths", r.config, lengths), lambda r=r: lab.evaluate_lengths(r, list(lengths)))
        for e, r in runs.items()
    }
    fig = lab_figures.accuracy_by_length(
        lengths,
        {e: s.accuracy for e, s in scores.items()},
        min_len=config.min_len,
        train_len=train_len,
        title=t("lab.lengths"),
        x_title=t("lab.axis.length"),
        y_title=t("lab.axis.accuracy"),
        trained_label=t("lab.lengths.trained", low=config.min_len, n=train_len),
        train_line_label=t("lab.lengths.train", n=train_len),
    )
    show(
        fig,
        notice=t("lab.lengths.notice", low=config.min_len, n=train_len),
        key="lengths",
        data={"length": lengths, **{e: s.accuracy for e, s in scores.items()}},
        name="lab_lengths",
    )
    for encoding, s in scores.items():
        failed = [(n, err) for n, err in zip(s.lengths.tolist(), s.errors, strict=True) if err]
        if failed:
            st.markdown(t("lab.lengths.error", encoding=encoding, length=failed[0][0], n=train_len))
            st.code(failed[0][1], language=None, wrap_lines=True)


def isolation_tab() -> None:
    """The isolation check: predict each token's position from random tokens, per encoding."""
    st.markdown(t("lab.isolation.intro"))
    key = ("lab-isolation", steps, seed, tuple(chosen))
    result = cache.STORE.peek(key)
    if result is None:
        st.button(
            t("lab.isolation.run"),
            key="isolation",
            icon=":material/play_arrow:",
            on_click=st.session_state.__setitem__,
            args=(ISOLATION_REQUEST, True),
        )
        if not st.session_state.pop(ISOLATION_REQUEST, False):
            return
        with st.spinner(t("lab.isolation.running")):
            result = cache.STORE.get(
                key, lambda: tuple(lab.position_accuracy(e, lab.TrainConfig(steps=steps, seed=seed)) for e in chosen)
            )
    chance = 1.0 / config_of(chosen[0]).seq_len
    fig = figures.bars(
        list(chosen),
        list(result),
        title=t("lab.isolation"),
        x_title=t("lab.axis.encoding"),
        y_title=t("lab.axis.accuracy"),
    )
    figures.hline(fig, chance, t("lab.isolation.chance", chance=f"{chance:.3f}"), dash="dot")
    show(
        fig,
        notice=t("lab.isolation.notice"),
        key="isolation_chart",
        data={"encoding": list(chosen), "position_accuracy": list(result)},
        name="lab_isolation",
    )


def files_tab() -> None:
    """Each trained model as a safetensors file, and its table handed to the other pages."""
    for encoding, run in runs.items():
        with tempfile.TemporaryDirectory() as folder:
            data = Path(lab.save(run, Path(folder) / f"{encoding}.safetensors")).read_bytes()
        st.download_button(
            t("lab.download", encoding=encoding),
            data=data,
            file_name=f"posviz-lab-{encoding}-seed{seed}-steps{steps}.safetensors",
            mime="application/octet-stream",
            key=f"file-{encoding}",
            icon=":material/download:",
            on_click="ignore",
        )
    tables = session_tables()
    for encoding in (e for e in runs if e in lab.LEARNED_TABLES):
        tables[SESSION_PREFIX + encoding] = runs[encoding].model.position_table()
        st.page_link(
            "pages/3_learned.py",
            label=t("lab.open.learned", encoding=encoding),
            icon=":material/school:",
            query_params={"init": "session:" + SESSION_PREFIX + encoding},
        )
    st.caption(t("lab.files.notice", table_key=lab.TABLE_KEY))


intro("lab")
with controls():
    c1, c2, c3 = st.columns([1, 1, 3])
    with c1:
        steps = st.number_input(
            t("lab.ctl.steps"),
            10,
            5000,
            lab.TrainConfig().steps,
            step=50,
            key="steps",
            bind="query-params",
            help=t("lab.ctl.steps.help"),
        )
    with c2:
        seed = st.number_input(
            t("lab.ctl.seed"), 0, 1_000_000, 0, key="seed", bind="query-params", help=t("lab.ctl.seed.help")
        )
    with c3:
        chosen = st.multiselect(
            t("lab.ctl.encodings"),
            list(lab.ENCODINGS),
            default=list(lab.ENCODINGS),
            key="enc",
            bind="query-params",
            help=t("lab.ctl.encodings.help"),
        )
runs = {}
with errors_shown():
    runs = {e: r for e in chosen if (r := cache.lab_done(config_of(e))) is not None}
    missing = [e for e in chosen if e not in runs]
    if missing:
        st.info(t("lab.missing", missing=", ".join(missing), steps=steps))
        st.button(
            t("lab.start"),
            type="primary",
            icon=":material/play_arrow:",
            key="start",
            help=t("lab.start.help"),
            on_click=st.session_state.__setitem__,  # remembered until the run that trains, whatever reruns first
            args=(TRAIN_REQUEST, True),
        )
        if st.session_state.pop(TRAIN_REQUEST, False):
            st.button(t("lab.stop"), icon=":material/stop:", key="stop", help=t("lab.stop.help"))
            train_missing(missing)
            st.rerun()
if runs:
    DRAW = {
        "training": training_tab,
        "tables": tables_tab,
        "lengths": lengths_tab,
        "isolation": isolation_tab,
        "files": files_tab,
    }
    lazy_tabs("lab", DRAW)  # only the open tab computes
elif not chosen:
    st.info(t("lab.none"))
