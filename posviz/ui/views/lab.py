"""The training lab's views of finished runs: the loss curves and held-out accuracy, a learned table's similarity
at initialisation, after training and along it, the position probe, accuracy against the sequence length and the
isolation check.

A run is fully determined by its configuration (``lab.TrainConfig``), so a view takes the configurations of the runs
it shows and reads their results from the app's training queue by them (``training.queue().result``); it calls the
core (``posviz.analysis``, ``posviz.lab``) and the builders of ``posviz.figures`` itself. The runs' live progress
(the queue's statuses, Start and Stop) stays on the page, which calls a view once the runs it reads are done.
"""

from __future__ import annotations

import numpy as np

from posviz import analysis, figures, lab
from posviz.figures import lab as lab_figures

from .. import training
from ..i18n import t
from . import Figure, Item, Text, heatmap, shared, view

#: The evaluation lengths, in multiples of the training length: shorter, the same and up to four times longer.
LENGTH_FACTORS = (0.25, 0.5, 0.75, 1, 1.25, 1.5, 2, 3, 4)

Configs = tuple[lab.TrainConfig, ...]


def finished(config: lab.TrainConfig, task: str = "train"):
    """The finished run of ``config`` in the app's training queue (``TrainingQueue.result``: a ``lab.RunResult`` for
    "train", the accuracy for "isolation"); a view is only asked for runs that are done."""
    result = training.queue().result(config, task=task)
    if result is None:
        raise LookupError(f"the {task} run of {config} is not done")
    return result


@view("lab")
def loss_and_accuracy(configs: Configs):
    """Each run's training loss at steps 1 .. steps (``RunResult.losses``) and its masked-token accuracy on held-out
    sequences (``RunResult.mlm_accuracy``), by encoding."""
    runs = {config.encoding: finished(config) for config in configs}
    steps = np.arange(1, configs[0].steps + 1)
    losses = {encoding: run.losses for encoding, run in runs.items()}
    loss = figures.lines(steps, losses, title=t("lab.loss"), x_title=t("lab.axis.step"), y_title=t("lab.axis.loss"))
    names, accuracy = list(runs), [run.mlm_accuracy for run in runs.values()]
    bars = figures.bars(
        names, accuracy, title=t("lab.accuracy"), x_title=t("lab.axis.encoding"), y_title=t("lab.axis.accuracy")
    )
    return [
        Figure("loss", loss, {"step": steps, **losses}),
        Figure("accuracy", bars, {"encoding": names, "mlm_accuracy": accuracy}),
    ]


@view("lab")
def similarity(config: lab.TrainConfig):
    """S_k[i, j] = PE_k(i) . PE_k(j) / (||PE_k(i)|| ||PE_k(j)||) of every snapshot k of a learned table along
    training (``analysis.similarity_stack``): the first and the last side by side, their caption, then all of them
    as an animation over the steps."""
    run = finished(config)
    stack = analysis.similarity_stack(run.snapshots)
    encoding = config.encoding
    items: list[Figure | Text] = []
    for index, label in ((0, "init"), (-1, "trained")):
        fig = heatmap(
            stack[index],
            title=t(f"lab.similarity.{label}", step=int(run.snapshot_steps[index])),
            x_title=t("axis.position"),
            y_title=t("axis.position"),
            zmin=-1.0,
            zmax=1.0,
            colorbar_title="cos",
            height=380,
        )
        items.append(Figure(f"similarity.{label}", fig, stack[index], {"each": encoding, "captioned": False}))
    animation = lab_figures.similarity_animation(
        run.snapshot_steps,
        stack,
        title=t("lab.animation", encoding=encoding),
        axis_title=t("axis.position"),
        play=t("rope.anim.play"),
        pause=t("rope.anim.pause"),
        slider_prefix=t("lab.axis.step") + ": ",
    )
    return [
        *items,
        Text(t(f"lab.similarity.notice.{encoding}"), "caption"),
        Figure("animation", animation, {"step": run.snapshot_steps}, {"each": encoding}),
    ]


@view("lab")
def probe(configs: Configs):
    """The position probe's error on each learned table at initialisation and after training
    (``RunResult.probe_before``, ``probe_after``), against always guessing the middle position, floor(n^2/4)/n
    (``analysis.constant_guess_error``)."""
    names = [config.encoding for config in configs]
    runs = [finished(config) for config in configs]
    before, after = [run.probe_before for run in runs], [run.probe_after for run in runs]
    guess = analysis.constant_guess_error(configs[0].seq_len)
    fig = lab_figures.probe_bars(
        names,
        {t("lab.probe.before"): np.asarray(before), t("lab.probe.after"): np.asarray(after)},
        guess=(guess, t("lab.probe.guess", guess=guess)),
        title=t("lab.probe"),
        x_title=t("lab.axis.encoding"),
        y_title=t("learned.axis.probe"),
    )
    return [Figure("probe", fig, {"encoding": names, "probe_before": before, "probe_after": after})]


def lengths_around(train_length: int) -> tuple[int, ...]:
    """The lengths the runs are evaluated at: ``LENGTH_FACTORS`` times the training length, rounded down."""
    return tuple(int(train_length * factor) for factor in LENGTH_FACTORS)


def length_accuracy(config: lab.TrainConfig, lengths: tuple[int, ...]) -> lab.LengthAccuracy:
    """``lab.evaluate_lengths`` of the finished run of ``config`` at ``lengths``."""
    return lab.evaluate_lengths(finished(config), list(lengths))


def _scores(configs: Configs, lengths: tuple[int, ...]) -> dict[str, lab.LengthAccuracy]:
    """Each run's :func:`length_accuracy`, computed once for :func:`by_length` and :func:`length_errors`."""
    return {config.encoding: shared(length_accuracy, config, lengths) for config in configs}


@view("lab")
def by_length(configs: Configs, lengths: tuple[int, ...]):
    """Held-out masked-token accuracy of each run at every length of ``lengths`` (``lab.evaluate_lengths``; NaN
    where a learned table has no row), with the band of training lengths min_len .. seq_len shaded; then, for each
    run that cannot read a length (a learned table past its last row), the sentence that says so and the error
    torch raised at the first such length (``LengthAccuracy.errors``)."""
    scores = _scores(configs, lengths)
    config = configs[0]
    low, n = config.min_len, config.seq_len
    accuracy = {encoding: score.accuracy for encoding, score in scores.items()}
    fig = lab_figures.accuracy_by_length(
        lengths,
        accuracy,
        min_len=low,
        train_len=n,
        title=t("lab.lengths"),
        x_title=t("lab.axis.length"),
        y_title=t("lab.axis.accuracy"),
        trained_label=t("lab.lengths.trained", low=low, n=n),
        train_line_label=t("lab.lengths.train", n=n),
    )
    items: list[Item] = [Figure("lengths", fig, {"length": lengths, **accuracy}, {"low": low, "n": n})]
    for encoding, score in scores.items():
        failed = [(length, error) for length, error in zip(score.lengths.tolist(), score.errors, strict=True) if error]
        if failed:
            length, error = failed[0]
            items += [Text(t("lab.lengths.error", encoding=encoding, length=length, n=n)), Text(error, "code")]
    return items


@view("lab")
def isolation(configs: Configs):
    """The isolation check: each encoding's accuracy at naming a token's position from random tokens (the queue's
    "isolation" task, ``lab.position_accuracy``), against chance, 1 / seq_len."""
    names = [config.encoding for config in configs]
    accuracy = [finished(config, "isolation") for config in configs]
    chance = 1.0 / configs[0].seq_len
    fig = figures.bars(
        names, accuracy, title=t("lab.isolation"), x_title=t("lab.axis.encoding"), y_title=t("lab.axis.accuracy")
    )
    figures.hline(fig, chance, t("lab.isolation.chance", chance=f"{chance:.3f}"), dash="dot")
    return [Figure("isolation", fig, {"encoding": names, "position_accuracy": accuracy})]
