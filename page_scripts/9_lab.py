"""Training lab: a micro BERT trained with each encoding, through the server's shared training queue."""

import functools
import tempfile
from pathlib import Path

import streamlit as st

from posviz import lab
from posviz.lab.queue import overall
from posviz.ui import (
    controls,
    errors_shown,
    fragment,
    intro,
    lazy_tabs,
    menu,
    session_tables,
    t,
    training,
    views,
)
from posviz.ui.views import lab as lab_views
from posviz.ui.widgets import numeric

SESSION_PREFIX = "lab · "
POLL_SECONDS = 1.0  # how often an open page asks the queue how its runs are going


def statuses(task: str, configs) -> dict:
    """Every run's Status in the queue, for this session, by its encoding."""
    configs = list(configs)
    found = training.queue().statuses(configs, training.waiter(), task)
    return {config.encoding: status for config, status in zip(configs, found, strict=True)}


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


def queue_panel(task: str, configs, polling: bool, button: str) -> None:
    """The one display of the runs of ``configs``: all of them together (share of the steps done, time left at
    the measured speed), then each one (queued with its place, training step x of y with its loss, done, failed).
    While ``polling`` (run every POLL_SECONDS as a fragment), the whole page reruns once nothing is coming any more,
    to show what came. ``button`` is the label of the button that starts them."""
    now = statuses(task, configs)
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


def runs_controls(task: str, configs, start_key: str, start_label: str) -> None:
    """Start (or join) and Stop for the runs of ``configs`` not done yet, and the display of the runs while any
    is coming or has failed."""
    now = statuses(task, configs)
    pending = [c for c in configs if now[c.encoding].state != "done"]
    mine = [c for c in pending if now[c.encoding].waiting and now[c.encoding].active]
    with st.container(horizontal=True):
        if any(not now[c.encoding].waiting or now[c.encoding].state == "failed" for c in pending):
            st.button(
                start_label,
                type="primary",
                icon=":material/play_arrow:",
                key=start_key,
                help=t("lab.start.help"),
                on_click=submit,
                args=(task, pending),
            )
        if mine:
            st.button(
                t("lab.stop"),
                icon=":material/stop:",
                key=f"{start_key}-stop",
                help=t("lab.stop.help"),
                on_click=cancel,
                args=(task, mine),
            )
    if any(s.active or s.state == "failed" for s in now.values()):
        polling = any(s.active for s in now.values())
        fragment(queue_panel, run_every=POLL_SECONDS if polling else None)(task, configs, polling, start_label)


def side_by_side(output: views.Output) -> None:
    """``output``'s first two items in two columns, the rest under both."""
    for column, item in zip(st.columns(2), output.items[:2], strict=True):
        with column:
            views.draw(views.Output(output.page, (item,)))
    views.draw(views.Output(output.page, output.items[2:]))


def training_tab(configs: tuple[lab.TrainConfig, ...]) -> None:
    """Loss curves and held-out MLM accuracy of every trained encoding."""
    views.draw(lab_views.loss_and_accuracy(configs))


def tables_tab(configs: tuple[lab.TrainConfig, ...]) -> None:
    """For the learned tables: similarity at initialisation and after training, the way there, and the probe."""
    learned = tuple(config for config in configs if config.encoding in lab.LEARNED_TABLES)
    if not learned:
        st.info(t("lab.tables.none"))
        return
    for config in learned:
        st.subheader(t(f"lab.tables.{config.encoding}"))
        side_by_side(lab_views.similarity(config))
    views.draw(lab_views.probe(learned))


def lengths_tab(configs: tuple[lab.TrainConfig, ...]) -> None:
    """Accuracy against the sequence length, shorter and longer than the training length, and the learned table's
    hard limit."""
    lengths = lab_views.lengths_around(configs[0].seq_len)
    views.draw(lab_views.by_length(configs, lengths))


def isolation_tab(configs: tuple[lab.TrainConfig, ...]) -> None:
    """The isolation check: predict each token's position from random tokens, per encoding, trained through the
    queue like the runs."""
    st.markdown(t("lab.isolation.intro"))
    queue = training.queue()
    if any(queue.result(config, task="isolation") is None for config in configs):
        runs_controls("isolation", configs, "isolation", t("lab.isolation.run"))
        return
    views.draw(lab_views.isolation(configs))


def files_tab(runs: dict[str, lab.RunResult]) -> None:
    """Each trained model as a safetensors file, and its table handed to the other pages."""
    for encoding, run in runs.items():
        with tempfile.TemporaryDirectory() as folder:
            data = Path(lab.save(run, Path(folder) / f"{encoding}.safetensors")).read_bytes()
        st.download_button(
            t("lab.download", encoding=encoding),
            data=data,
            file_name=f"posviz-lab-{encoding}-seed{run.config.seed}-steps{run.config.steps}.safetensors",
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
configs: tuple[lab.TrainConfig, ...] = ()
runs = {}
with errors_shown("lab"):
    configs = tuple(lab.TrainConfig(encoding=encoding, steps=steps, seed=seed) for encoding in chosen)
    runs = {c.encoding: r for c in configs if (r := training.queue().result(c)) is not None}
    absent = [
        e for e, s in statuses("train", [c for c in configs if c.encoding not in runs]).items() if s.state == "absent"
    ]
    if absent:
        named = [t("lab.encoding", code=e, name=t(f"lab.name.{e}")) for e in absent]
        st.info(t("lab.missing", missing=t("list.sep").join(named), steps=steps))
    if len(runs) < len(chosen):
        runs_controls("train", configs, "start", t("lab.start"))
if runs:
    trained = tuple(config for config in configs if config.encoding in runs)
    DRAW = {
        "training": functools.partial(training_tab, trained),
        "tables": functools.partial(tables_tab, trained),
        "lengths": functools.partial(lengths_tab, trained),
        "isolation": functools.partial(isolation_tab, configs),
        "files": functools.partial(files_tab, runs),
    }
    lazy_tabs("lab", DRAW)  # only the open tab computes
elif not chosen:
    st.info(t("lab.none"))
