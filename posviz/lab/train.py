"""Train the micro BERT with one encoding on the counting corpus, and save or load the result.

One run: AdamW, linear warm-up over the first 10% of the steps then cosine decay to a tenth of the learning rate,
a fresh batch from the corpus every step (one generator seeded by ``seed``), and torch's initial weights from the
same seed, so a configuration always gives the same run. The batches mix lengths (:func:`batch_length`): half are
``seq_len`` tokens long, the others any length from ``min_len`` to ``seq_len``, so every sequence up to the training
length is one the model was trained on. Held-out accuracy is measured on batches from a second, independent stream
of the same seed, at ``seq_len``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch
from torch.nn import functional as F

from ..analysis import position_probe
from .corpus import IGNORE, mlm_batch
from .model import ENCODINGS, LEARNED_TABLES, MicroBert

#: Allowed range of every whole-number setting of TrainConfig, both ends included.
WHOLE_NUMBERS = {
    "steps": (1, 100_000),
    "seed": (0, 2**32 - 1),
    "seq_len": (8, 1024),
    "min_len": (1, 1024),
    "batch": (1, 1024),
    "vocab": (2, 4096),
    "max_start": (1, 4096),
    "hidden": (8, 512),
    "heads": (1, 16),
}


@dataclasses.dataclass(frozen=True)
class TrainConfig:
    """Everything that decides a run. The defaults train each of the six encodings in a few seconds on a CPU."""

    encoding: str = "learned"
    steps: int = 500
    seed: int = 0
    seq_len: int = 32
    min_len: int = 8
    batch: int = 32
    lr: float = 1e-2
    weight_decay: float = 0.01
    vocab: int = 32
    max_start: int = 8
    noise: float = 0.1
    mask_rate: float = 0.15
    hidden: int = 64
    heads: int = 4

    def __post_init__(self):
        if self.encoding not in ENCODINGS:
            raise ValueError(f"encoding must be one of {', '.join(ENCODINGS)}; got {self.encoding!r}")
        for name, (low, high) in WHOLE_NUMBERS.items():
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise ValueError(f"{name} must be a whole number from {low:,} to {high:,}; got {value!r}")
        for name in ("lr", "weight_decay", "noise", "mask_rate"):
            value, positive = getattr(self, name), name in ("lr", "mask_rate")
            inside = isinstance(value, (int, float)) and (0 < value < 1 if positive else 0 <= value < 1)
            if isinstance(value, bool) or not inside:
                raise ValueError(f"{name} must be {'above' if positive else 'at least'} 0 and below 1; got {value!r}")
        if self.min_len > self.seq_len:
            raise ValueError(
                f"min_len ({self.min_len}) is the shortest training sequence, so it must be at most seq_len "
                f"({self.seq_len})"
            )
        if self.hidden % self.heads or (self.hidden // self.heads) % 2:
            raise ValueError(
                f"hidden ({self.hidden}) must split into {self.heads} heads of an even size, since RoPE rotates pairs"
            )


@dataclasses.dataclass(eq=False)
class RunResult:
    """What a run produced: plain numbers and arrays, plus the trained model.

    ``losses[i]`` is the training loss at step i; ``snapshot_steps[j]`` the step after which ``snapshots[j]`` (a
    copy of the position table, (max_positions, hidden)) was taken, starting with the initial table at step 0;
    both are empty for encodings without a learned table. ``probe_before``/``probe_after`` are
    ``posviz.position_probe`` errors of the table at initialisation and at the end (NaN without a table).
    ``stopped`` is True when ``should_stop`` ended the run before ``config.steps``.
    """

    config: TrainConfig
    losses: np.ndarray
    mlm_accuracy: float
    snapshot_steps: np.ndarray
    snapshots: np.ndarray
    probe_before: float
    probe_after: float
    stopped: bool
    seconds: float
    model: MicroBert

    @property
    def steps_done(self) -> int:
        return int(self.losses.size)

    @property
    def final_loss(self) -> float:
        """Mean training loss over the last 10% of the steps run (less noisy than the last step's); NaN before any."""
        if self.losses.size == 0:
            return float("nan")
        return float(self.losses[-max(1, self.losses.size // 10) :].mean())

    def metrics(self) -> dict:
        """The run's numbers as a JSON-ready dict (what ``python -m posviz train`` prints)."""
        out = {
            "encoding": self.config.encoding,
            "steps": self.steps_done,
            "seed": self.config.seed,
            "final_loss": round(self.final_loss, 4),
            "mlm_accuracy": round(self.mlm_accuracy, 4),
            "stopped": self.stopped,
            "seconds": round(self.seconds, 2),
        }
        if not math.isnan(self.probe_after):
            out["probe_before"], out["probe_after"] = round(self.probe_before, 3), round(self.probe_after, 3)
        return out


@contextlib.contextmanager
def one_thread():
    """Run torch on one thread inside the block, then restore the caller's setting. A model this small spends more
    time synchronising threads than computing: two threads made training 3 to 5 times slower on a busy 2-core CPU."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def build_model(config: TrainConfig, outputs: int | None = None) -> MicroBert:
    """The model of ``config``, initialised from torch's generator seeded with ``config.seed`` (the caller's
    generator state is restored afterwards). Its table has ``seq_len`` rows (max_position_embeddings = the training
    length, as in BERT); the head has ``outputs`` logits, by default one per counting token."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(config.seed)
        return MicroBert(
            config.encoding, config.vocab + 1, outputs or config.vocab, config.seq_len, config.hidden, config.heads
        )


def learning_rate(step: int, config: TrainConfig) -> float:
    """Linear warm-up for 10% of the steps, then cosine decay from ``lr`` to ``lr / 10``."""
    warmup = max(1, config.steps // 10)
    if step < warmup:
        return config.lr * (step + 1) / warmup
    progress = (step - warmup) / max(1, config.steps - warmup)
    return config.lr * (0.1 + 0.45 * (1 + math.cos(math.pi * progress)))


def fit(model, config: TrainConfig, make_batch, progress=None, should_stop=None, on_step=None) -> tuple[list, bool]:
    """The training loop: ``make_batch()`` -> (inputs, labels) numpy arrays, cross-entropy ignoring IGNORE labels.
    Calls ``progress(step, total, loss)`` and ``on_step(step)`` after every step; stops early when ``should_stop()``
    is true. Returns the losses and whether it stopped early."""
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=config.lr, weight_decay=config.weight_decay)
    losses: list[float] = []
    model.train()
    with one_thread():
        for step in range(config.steps):
            if should_stop is not None and should_stop():
                return losses, True
            for group in optimizer.param_groups:
                group["lr"] = learning_rate(step, config)
            inputs, labels = (torch.from_numpy(a) for a in make_batch())
            logits = model(inputs)
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1), ignore_index=IGNORE)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
            if on_step is not None:
                on_step(step + 1)
            if progress is not None:
                progress(step + 1, config.steps, losses[-1])
        return losses, False


@torch.no_grad()
def accuracy(model, inputs: np.ndarray, labels: np.ndarray) -> float:
    """Share of the labelled positions (labels != IGNORE) where the model's top logit is the label."""
    model.eval()
    with one_thread():
        predicted = model(torch.from_numpy(inputs)).argmax(dim=-1).numpy()
    scored = labels != IGNORE
    return float((predicted[scored] == labels[scored]).mean())


def held_out(config: TrainConfig, length: int | None = None, sequences: int = 512) -> tuple[np.ndarray, np.ndarray]:
    """Evaluation batches for ``config`` from their own stream (never seen in training), at ``length`` tokens."""
    rng = np.random.default_rng([config.seed, 1])
    return _batch(rng, config, length or config.seq_len, sequences)


def _batch(rng: np.random.Generator, config: TrainConfig, length: int, sequences: int):
    return mlm_batch(
        rng, sequences, length, config.vocab, max_start=config.max_start, noise=config.noise, mask_rate=config.mask_rate
    )


def batch_length(rng: np.random.Generator, config: TrainConfig) -> int:
    """The length of one training batch: ``seq_len`` with probability 1/2, otherwise uniform on min_len .. seq_len.

    Trained on ``seq_len`` alone, a model meets a shorter sequence as something new: fewer tokens to attend over and
    a different bag of tokens (at seq_len = vocab every clean sequence holds each token once). Its accuracy then
    drops at half the training length already, where every position was seen, and a drop past the training length
    could not be put down to the positions. With the mix, every length up to ``seq_len`` is in the training
    distribution, and every position (the last rows of a learned table too) is still trained in at least half of the
    batches."""
    full = rng.random() < 0.5
    drawn = int(rng.integers(config.min_len, config.seq_len + 1))
    return config.seq_len if full else drawn


def _probe(table: np.ndarray) -> float:
    return position_probe(table) if table.shape[0] >= 10 else float("nan")


def train(
    config: TrainConfig,
    progress: Callable[[int, int, float], None] | None = None,
    snapshot_every: int | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> RunResult:
    """Train one micro BERT with masked-language modelling on the counting corpus (see ``posviz.lab.corpus``), on
    batches of mixed lengths up to ``seq_len`` (:func:`batch_length`).

    ``progress(step, total, loss)`` is called after every step (for a progress bar); ``should_stop()`` is asked
    before every step and ends the run early when true (the result then has ``stopped=True`` and is evaluated as
    it is). For the learned and sin-init tables a snapshot of the table is kept at step 0, every
    ``snapshot_every`` steps (default: a tenth of the budget) and at the end.
    """
    began = time.perf_counter()
    model = build_model(config)
    rng = np.random.default_rng(config.seed)
    every = snapshot_every or max(1, config.steps // 10)
    learned = config.encoding in LEARNED_TABLES
    snapshot_steps: list[int] = []
    snapshots: list[np.ndarray] = []

    def snapshot(step: int) -> None:
        table = model.position_table()
        if table is None:  # snapshots are taken for LEARNED_TABLES only, which all have a table
            raise RuntimeError(f"a {config.encoding} model has no position table to snapshot")
        snapshot_steps.append(step)
        snapshots.append(table)

    def on_step(step: int) -> None:
        if learned and step % every == 0:
            snapshot(step)

    if learned:
        snapshot(0)
    losses, stopped = fit(
        model,
        config,
        lambda: _batch(rng, config, batch_length(rng, config), config.batch),
        progress,
        should_stop,
        on_step,
    )
    if learned and snapshot_steps[-1] != len(losses):
        snapshot(len(losses))
    table = model.position_table()
    probe_after = _probe(table) if table is not None else float("nan")
    return RunResult(
        config=config,
        losses=np.asarray(losses, dtype=np.float64),
        mlm_accuracy=accuracy(model, *held_out(config)),
        snapshot_steps=np.asarray(snapshot_steps, dtype=np.int64),
        snapshots=np.stack(snapshots) if snapshots else np.zeros((0, config.seq_len, config.hidden)),
        probe_before=_probe(snapshots[0]) if learned else probe_after,
        probe_after=probe_after,
        stopped=stopped,
        seconds=time.perf_counter() - began,
        model=model,
    )


#: Prefix of the tensors that hold a run's history (losses, snapshots) in a file saved with ``history=True``.
HISTORY = "history."


def write_atomically(path, write) -> Path:
    """``write(temporary path)``, then rename the temporary file to ``path``: a reader never sees half a file, and a
    failed write leaves whatever was at ``path`` before."""
    path = Path(path)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        write(temporary)
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)
    return path


def save(result: RunResult, path, *, history: bool = False) -> Path:
    """Write the trained model as safetensors: the state dict (the position table, if any, at TABLE_KEY) and
    metadata ``config`` and ``metrics`` as JSON strings. Opens with ``posviz.load_position_embeddings``.

    With ``history=True`` the file also holds everything else of the run, so that :func:`load_run` gives the whole
    :class:`RunResult` back: the losses, snapshot steps and snapshots as float64 / int64 tensors under ``history.``
    and the exact accuracy, probe errors, ``stopped`` and ``seconds`` in the metadata ``run``. The file is written
    to a temporary name and renamed, so a reader never sees half of it."""
    from safetensors.torch import save_file

    tensors = {key: value.detach().contiguous() for key, value in result.model.state_dict().items()}
    metadata = {
        "format": "pt",
        "posviz": "training lab",
        "config": json.dumps(dataclasses.asdict(result.config)),
        "metrics": json.dumps(result.metrics()),
    }
    if history:
        for name, dtype in (("losses", np.float64), ("snapshot_steps", np.int64), ("snapshots", np.float64)):
            tensors[HISTORY + name] = torch.from_numpy(np.array(getattr(result, name), dtype=dtype))  # a copy
        metadata["run"] = json.dumps(
            {
                "mlm_accuracy": result.mlm_accuracy,
                "probe_before": result.probe_before,
                "probe_after": result.probe_after,
                "stopped": result.stopped,
                "seconds": result.seconds,
            }
        )  # json writes every float so that it reads back exactly (NaN as NaN)
    return write_atomically(path, lambda temporary: save_file(tensors, str(temporary), metadata=metadata))


def _read(path) -> tuple[dict, dict, TrainConfig]:
    from safetensors import safe_open
    from safetensors.torch import load_file

    with safe_open(str(path), framework="pt") as handle:
        metadata = handle.metadata() or {}
    if "config" not in metadata:
        raise ValueError(f"{path} was not written by the posviz training lab: it has no 'config' metadata")
    return load_file(str(path)), metadata, TrainConfig(**json.loads(metadata["config"]))


def _model(config: TrainConfig, tensors: dict) -> MicroBert:
    model = build_model(config)
    model.load_state_dict({key: value for key, value in tensors.items() if not key.startswith(HISTORY)})
    model.eval()
    return model


def load(path) -> tuple[TrainConfig, MicroBert]:
    """The configuration and the trained model of a file written by :func:`save`."""
    tensors, _, config = _read(path)
    return config, _model(config, tensors)


def load_run(path) -> RunResult:
    """The whole run of a file written by ``save(result, path, history=True)``: the same losses, snapshots,
    accuracy, probe errors and model as the run that was saved. The arrays are read-only."""
    tensors, metadata, config = _read(path)
    if "run" not in metadata or HISTORY + "losses" not in tensors:
        raise ValueError(f"{path} holds a trained model but not its history: it was saved without history=True")
    numbers = json.loads(metadata["run"])

    def array(name: str) -> np.ndarray:
        values = tensors[HISTORY + name].numpy().copy()  # numpy's own memory, not a view of torch's
        values.flags.writeable = False
        return values

    return RunResult(
        config=config,
        losses=array("losses"),
        mlm_accuracy=float(numbers["mlm_accuracy"]),
        snapshot_steps=array("snapshot_steps"),
        snapshots=array("snapshots"),
        probe_before=float(numbers["probe_before"]),
        probe_after=float(numbers["probe_after"]),
        stopped=bool(numbers["stopped"]),
        seconds=float(numbers["seconds"]),
        model=_model(config, tensors),
    )
