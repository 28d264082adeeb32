"""Training lab: a micro BERT trained with each encoding, through the server's shared training queue."""

import tempfile
from pathlib import Path

import numpy as np
import streamlit as st

from posviz import analysis, figures, lab
from posviz.figures import lab as lab_figures
from posviz.lab.queue import overall
from posviz.ui import (
    Figures,
    cache,
    controls,
    errors_shown,
    fragment,
    heatmap,
    intro,
    lazy_tabs,
    menu,
    session_tables,
    t,
    training,
)
from posviz.ui.widgets import numeric

LENGTH_FACTORS = (0.25, 0.5, 0.75, 1, 1.25, 1.5, 2, 3, 4)  # evaluation lengths, in multiples of the training length
SESSION_PREFIX = "lab · "
POLL_SECONDS = 1.0  # how often an open page asks the queue how its runs are going
FIG = Figures("lab")


def config_of(encoding: str) -> lab.TrainConfig:
    return lab.TrainConfig(encoding=encoding, steps=steps, seed=seed)


def statuses(task: str, encodings) -> dict:
    """Every encoding's Status in the queue, for this session."""
    encodings = list(encodings)
    found = training.queue().statuses([config_of(e) for e in encodings], training.waiter(), task)
    return dict(zip(encodings, found, strict=True))


def submit(task: str, configs: list[lab.TrainConfig]) -> None:
    """Start (or join) the runs of ``configs``, in order; a click callback, so a hundred clicks are one run."""
    for config in configs:
        training.queue().submit(config, training.waiter(), task)


def cancel(task: str, configs: list[lab.TrainConfig]) -> None:
    """Stop waiting for the runs of ``configs``; the queue stops those nobody else waits for."""
    for config in configs:
        training.queue().cancel(config, training.waiter(), task)


def duration(seconds: float) -> str:
    minutes, rest = divmod(max(1, round(seconds)), 60)
    return t("lab.minutes", minutes=minutes, seconds=rest) if minutes else t("lab.seconds", seconds=rest)


def state_text(encoding: str, status) -> tuple[float, str]:
    """How far one run is, as a bar's value and its text."""
    if status.state == "done":
        return 1.0, t("lab.state.done", encoding=encoding)
    if status.state == "queued":
        key = {0: "lab.state.next", 1: "lab.state.queued.one"}.get(status.ahead, "lab.state.queued")
        return 0.0, t(key, encoding=encoding, ahead=status.ahead)
    if status.state == "running" and status.step == 0:
        return 0.0, t("lab.state.starting", encoding=encoding)
    if status.state == "running" and status.step == status.total:
        return 1.0, t("lab.state.finishing", encoding=encoding, steps=status.total)
    if status.state == "running":
        text = t(
            "lab.state.running", encoding=encoding, step=status.step, steps=status.total, loss=f"{status.loss:.3f}"
        )
        return status.step / status.total, text
    return 0.0, t("lab.state.absent", encoding=encoding)


def queue_panel(task: str, encodings: list[str], polling: bool, button: str) -> None:
    """The one display of the runs of ``encodings``: all of them together (share of the steps done, time left at
    the measured speed), then each one (queued with its place, training step x of y with its loss, done, failed).
    While ``polling`` (run every POLL_SECONDS as a fragment), the whole page reruns once nothing is coming any more,
    to show what came. ``button`` is the label of the button that starts them."""
    now = statuses(task, encodings)
    if polling and not any(s.active for s in now.values()):
        st.rerun(scope="app")
    share, left = overall(now.values())
    parts = [t("lab.overall", done=sum(s.state == "done" for s in now.values()), total=len(now), share=f"{share:.0%}")]
    if any(s.active for s in now.values()):
        parts.append(t("lab.left", time=duration(left)) if left is not None else t("lab.left.unknown"))
    st.progress(share, text=" · ".join(parts))
    columns = st.columns(2)
    for index, (encoding, status) in enumerate(now.items()):
        with columns[index % 2]:
            if status.state == "failed":
                key = "lab.state.crashed" if status.exit_code is not None else "lab.state.failed"
                message = (status.error or "").rstrip(".")
                st.error(t(key, encoding=encoding, message=message, code=status.exit_code, button=button))
            else:
                value, text = state_text(encoding, status)
                st.progress(value, text=text)
    if any(s.active and not s.waiting for s in now.values()):
        st.caption(t("lab.joinable", button=button))


def runs_controls(task: str, encodings: list[str], start_key: str, start_label: str) -> None:
    """Start (or join) and Stop for the runs of ``encodings`` not done yet, and the display of the runs while any
    is coming or has failed."""
    now = statuses(task, encodings)
    pending = [e for e, s in now.items() if s.state != "done"]
    mine = [e for e in pending if now[e].waiting and now[e].active]
    with st.container(horizontal=True):
        if any(not now[e].waiting or now[e].state == "failed" for e in pending):
            st.button(
                start_label,
                type="primary",
                icon=":material/play_arrow:",
                key=start_key,
                help=t("lab.start.help"),
                on_click=submit,
                args=(task, [config_of(e) for e in pending]),
            )
        if mine:
            st.button(
                t("lab.stop"),
                icon=":material/stop:",
                key=f"{start_key}-stop",
                help=t("lab.stop.help"),
                on_click=cancel,
                args=(task, [config_of(e) for e in mine]),
            )
    if any(s.active or s.state == "failed" for s in now.values()):
        polling = any(s.active for s in now.values())
        fragment(queue_panel, run_every=POLL_SECONDS if polling else None)(task, encodings, polling, start_label)


def training_tab() -> None:
    """Loss curves and held-out MLM accuracy of every trained encoding."""
    losses = {encoding: run.losses for encoding, run in runs.items()}
    fig = figures.lines(
        np.arange(1, steps + 1), losses, title=t("lab.loss"), x_title=t("lab.axis.step"), y_title=t("lab.axis.loss")
    )
    FIG.show("loss", fig, {"step": np.arange(1, steps + 1), **losses})
    accuracy = [run.mlm_accuracy for run in runs.values()]
    fig = figures.bars(
        list(runs), accuracy, title=t("lab.accuracy"), x_title=t("lab.axis.encoding"), y_title=t("lab.axis.accuracy")
    )
    FIG.show("accuracy", fig, {"encoding": list(runs), "mlm_accuracy": accuracy})


def tables_tab() -> None:
    """For the learned tables: similarity at initialisation and after training, the way there, and the probe."""
    learned = {e: r for e, r in runs.items() if e in lab.LEARNED_TABLES}
    if not learned:
        st.info(t("lab.tables.none"))
        return
    for encoding, run in learned.items():
        st.subheader(t(f"lab.tables.{encoding}"))
        similarities = cache.lab_similarities(run.config, run)
        left, right = st.columns(2)
        for column, index, label in ((left, 0, "init"), (right, -1, "trained")):
            with column:
                fig = heatmap(
                    similarities[index],
                    title=t(f"lab.similarity.{label}", step=int(run.snapshot_steps[index])),
                    x_title=t("axis.position"),
                    y_title=t("axis.position"),
                    zmin=-1.0,
                    zmax=1.0,
                    colorbar_title="cos",
                    height=380,
                )
                FIG.show(f"similarity.{label}", fig, similarities[index], each=encoding, captioned=False)
        st.caption(FIG.notice("similarity", encoding))
        fig = lab_figures.similarity_animation(
            run.snapshot_steps,
            similarities,
            title=t("lab.animation", encoding=encoding),
            axis_title=t("axis.position"),
            play=t("rope.anim.play"),
            pause=t("rope.anim.pause"),
            slider_prefix=t("lab.axis.step") + ": ",
        )
        FIG.show("animation", fig, {"step": run.snapshot_steps}, each=encoding)
    names = list(learned)
    before = [learned[e].probe_before for e in names]
    after = [learned[e].probe_after for e in names]
    guess = analysis.constant_guess_error(learned[names[0]].config.seq_len)
    fig = lab_figures.probe_bars(
        names,
        {t("lab.probe.before"): before, t("lab.probe.after"): after},
        guess=(guess, t("lab.probe.guess", guess=guess)),
        title=t("lab.probe"),
        x_title=t("lab.axis.encoding"),
        y_title=t("learned.axis.probe"),
    )
    FIG.show("probe", fig, {"encoding": names, "probe_before": before, "probe_after": after})


def lengths_tab() -> None:
    """Accuracy against the sequence length, shorter and longer than the training length, and the learned table's
    hard limit."""
    config = next(iter(runs.values())).config
    train_len = config.seq_len
    lengths = tuple(int(train_len * f) for f in LENGTH_FACTORS)
    scores = {e: cache.lab_lengths(r.config, lengths, r) for e, r in runs.items()}
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
    FIG.show(
        "lengths",
        fig,
        {"length": lengths, **{e: s.accuracy for e, s in scores.items()}},
        low=config.min_len,
        n=train_len,
    )
    for encoding, s in scores.items():
        failed = [(n, err) for n, err in zip(s.lengths.tolist(), s.errors, strict=True) if err]
        if failed:
            st.markdown(t("lab.lengths.error", encoding=encoding, length=failed[0][0], n=train_len))
            st.code(failed[0][1], language=None, wrap_lines=True)


def isolation_tab() -> None:
    """The isolation check: predict each token's position from random tokens, per encoding, trained through the
    queue like the runs."""
    st.markdown(t("lab.isolation.intro"))
    queue = training.queue()
    result = {e: queue.result(config_of(e), task="isolation") for e in chosen}
    if any(value is None for value in result.values()):
        runs_controls("isolation", list(chosen), "isolation", t("lab.isolation.run"))
        return
    chance = 1.0 / config_of(chosen[0]).seq_len
    fig = figures.bars(
        list(chosen),
        list(result.values()),
        title=t("lab.isolation"),
        x_title=t("lab.axis.encoding"),
        y_title=t("lab.axis.accuracy"),
    )
    figures.hline(fig, chance, t("lab.isolation.chance", chance=f"{chance:.3f}"), dash="dot")
    FIG.show("isolation", fig, {"encoding": list(chosen), "position_accuracy": list(result.values())})


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
            menu.page("learned"),
            label=t("lab.open.learned", encoding=encoding),
            icon=":material/school:",
            query_params={"init": "session:" + SESSION_PREFIX + encoding},
        )
    st.caption(t("lab.files.notice", table_key=lab.TABLE_KEY))


intro("lab")
with controls():
    c1, c2, c3 = st.columns([1, 1, 3])
    with c1:
        steps = numeric(
            t("lab.ctl.steps"),
            10,
            5000,
            lab.TrainConfig().steps,
            key="steps",
            step=50,
            slider=False,
            help=t("lab.ctl.steps.help"),
        )
    with c2:
        seed = numeric(t("lab.ctl.seed"), 0, 1_000_000, 0, key="seed", slider=False, help=t("lab.ctl.seed.help"))
    with c3:
        chosen = st.multiselect(
            t("lab.ctl.encodings"),
            list(lab.ENCODINGS),
            default=list(lab.ENCODINGS),
            key="enc",
            bind="query-params",
            help=t("lab.ctl.encodings.help"),
            wrap=True,  # in a column the chips would stay on one row and scroll: six do not fit at 1280 px
        )
runs = {}
with errors_shown("lab"):
    runs = {e: r for e in chosen if (r := training.queue().result(config_of(e))) is not None}
    absent = [e for e, s in statuses("train", [e for e in chosen if e not in runs]).items() if s.state == "absent"]
    if absent:
        named = [t("lab.encoding", code=e, name=t(f"lab.name.{e}")) for e in absent]
        st.info(t("lab.missing", missing=t("list.sep").join(named), steps=steps))
    if len(runs) < len(chosen):
        runs_controls("train", list(chosen), "start", t("lab.start"))
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
