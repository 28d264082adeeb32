"""Short, seeded training runs of every encoding show an honest learning signal: tables that learn neighbourhoods,
encodings that beat a model without positions, a saved file the checkpoint loader opens, and a learned table that
fails past its end the way torch does."""

import math
from pathlib import Path

import numpy as np
import pytest
import torch

import posviz
from posviz import lab
from posviz.encodings.learned import torch_lookup_error
from posviz.lab.train import batch_length, held_out

torch.set_num_threads(1)

BUDGET = lab.TrainConfig(steps=300)  # enough for the learned table to count at every length it trained on
#: The encodings that can count: every one but NoPE.
COUNTING = ("sinusoidal", "learned", "sin-init", "rope", "alibi")


@pytest.fixture(scope="module")
def runs() -> dict[str, lab.RunResult]:
    return {enc: lab.train(lab.TrainConfig(encoding=enc, steps=BUDGET.steps)) for enc in lab.ENCODINGS}


def _neighbour_margin(table: np.ndarray, far: int = 4) -> float:
    """Mean cosine of positions one apart minus the mean cosine of positions at least ``far`` apart."""
    cosine = posviz.offset_profile(table).mean_cosine
    return float(cosine[1] - cosine[far:].mean())


def test_the_learned_table_makes_neighbours_alike(runs):
    run = runs["learned"]
    assert run.snapshot_steps[0] == 0 and run.snapshot_steps[-1] == BUDGET.steps
    assert abs(_neighbour_margin(run.snapshots[0])) < 0.05  # N(0, 0.02^2) rows: no neighbourhood at all
    assert _neighbour_margin(run.snapshots[-1]) > 0.4
    np.testing.assert_array_equal(run.snapshots[-1], run.model.position_table())


def test_the_probe_reads_positions_better_after_training(runs):
    """Before training the random table reads like always guessing the middle (mean |p - 15.5| = 8 for 32 rows); after
    training a linear map reads it partly: well under the guess, far from exact."""
    learned, sin_init = runs["learned"], runs["sin-init"]
    guess = np.mean(np.abs(np.arange(32) - 15.5))
    assert learned.probe_before == pytest.approx(guess, rel=0.06)
    assert 1.0 < learned.probe_after < 0.6 * learned.probe_before
    assert sin_init.probe_before < 0.1  # the sinusoidal start is linearly decodable from the first step
    assert math.isnan(runs["rope"].probe_before) and math.isnan(runs["rope"].probe_after)
    assert "probe_after" in learned.metrics() and "probe_after" not in runs["rope"].metrics()


def test_position_aware_encodings_beat_nope(runs):
    nope = runs["nope"].mlm_accuracy
    _, labels = held_out(runs["nope"].config)
    assert nope <= lab.bag_of_tokens_ceiling(labels) + 1e-3  # what any order-blind model can reach
    for enc in ("sinusoidal", "learned", "sin-init", "rope", "alibi"):
        assert runs[enc].mlm_accuracy > nope + 0.3, (enc, runs[enc].mlm_accuracy, nope)
        assert runs[enc].final_loss < runs["nope"].final_loss - 1.0, enc


def test_the_saved_file_opens_in_the_checkpoint_loader(runs, tmp_path):
    for enc in ("learned", "sin-init"):
        path = lab.save(runs[enc], tmp_path / f"{enc}.safetensors")
        table = posviz.load_position_embeddings(path)
        assert table.key == lab.TABLE_KEY and table.offset == 0 and table.kind == "absolute"
        np.testing.assert_array_equal(table.table, runs[enc].model.position_table())
        config, model = lab.load(path)
        assert config == runs[enc].config
        ids = torch.from_numpy(held_out(config, sequences=4)[0])
        with torch.no_grad():
            torch.testing.assert_close(model(ids), runs[enc].model(ids))
    rope = lab.save(runs["rope"], tmp_path / "rope.safetensors")
    with pytest.raises(posviz.NoPositionTable):
        posviz.load_position_embeddings(rope)


def test_past_the_learned_table_the_result_is_torchs_error(runs):
    lengths = [16, 32, 48]
    learned = lab.evaluate_lengths(runs["learned"], lengths)
    assert np.all(np.isfinite(learned.accuracy[:2])) and learned.errors[:2] == (None, None)
    assert math.isnan(learned.accuracy[2])
    assert learned.errors[2] == f"IndexError: {torch_lookup_error(32, 48)}"
    assert "index out of range" in learned.errors[2]
    for enc in ("sinusoidal", "rope", "alibi", "nope"):
        result = lab.evaluate_lengths(runs[enc], lengths)
        assert np.all(np.isfinite(result.accuracy)) and result.errors == (None, None, None), enc
    assert lab.evaluate_lengths(runs["rope"], [32]).accuracy[0] == pytest.approx(runs["rope"].mlm_accuracy, abs=0.05)


def test_a_run_is_reproducible_and_can_be_stopped():
    config = lab.TrainConfig(encoding="sin-init", steps=12, seed=7)
    calls = []
    stopped = lab.train(
        config, progress=lambda *a: calls.append(a), snapshot_every=2, should_stop=lambda: len(calls) >= 5
    )
    assert stopped.stopped and stopped.losses.size == 5
    assert [c[:2] for c in calls] == [(s, 12) for s in range(1, 6)] and calls[-1][2] == stopped.losses[-1]
    assert stopped.snapshot_steps.tolist() == [0, 2, 4, 5]
    full, again = lab.train(config), lab.train(config)
    assert not full.stopped and full.losses.size == 12
    np.testing.assert_array_equal(full.losses, again.losses)
    np.testing.assert_array_equal(full.snapshots, again.snapshots)
    np.testing.assert_array_equal(full.losses[:5], stopped.losses)


def test_the_isolation_check_finds_positions_only_where_an_encoding_gives_them():
    config = lab.TrainConfig(steps=60)
    assert lab.position_accuracy("sinusoidal", config) > 0.9
    assert lab.position_accuracy("learned", config) > 0.9
    assert lab.position_accuracy("nope", config) < 3 / config.seq_len  # chance is 1 / seq_len


# ------------------------------------------------------------------------------------------------ mixed lengths


def test_batch_lengths_are_half_full_and_half_uniform_up_to_the_training_length():
    config = lab.TrainConfig(seq_len=32, min_len=8)
    rng = np.random.default_rng(0)
    drawn = np.array([batch_length(rng, config) for _ in range(20_000)])
    assert drawn.min() == 8 and drawn.max() == 32
    # P(32) = 1/2 + 1/2 * 1/25; every other length 8 .. 31 has 1/2 * 1/25
    assert np.mean(drawn == 32) == pytest.approx(0.5 + 0.5 / 25, abs=0.015)
    counts = np.bincount(drawn, minlength=33)[8:32] / drawn.size
    np.testing.assert_allclose(counts, 0.5 / 25, atol=0.005)
    single = lab.TrainConfig(seq_len=16, min_len=16)
    assert {batch_length(rng, single) for _ in range(100)} == {16}
    with pytest.raises(ValueError, match="min_len .* at most seq_len"):
        lab.TrainConfig(seq_len=16, min_len=17)


def test_training_draws_its_batches_at_the_mixed_lengths(monkeypatch):
    import sys

    train_module = sys.modules["posviz.lab.train"]  # the package's name ``train`` is the function
    seen = []
    real = train_module.mlm_batch

    def spy(rng, batch, length, vocab, **kw):
        seen.append(length)
        return real(rng, batch, length, vocab, **kw)

    monkeypatch.setattr(train_module, "mlm_batch", spy)
    lab.train(lab.TrainConfig(encoding="rope", steps=40, seq_len=16, min_len=9))
    training = seen[:40]  # then one held-out batch at seq_len
    assert len(seen) == 41 and seen[-1] == 16
    assert min(training) >= 9 and max(training) == 16 and len(set(training)) > 4


def test_accuracy_holds_at_every_length_up_to_the_training_length(runs):
    """Trained on a mix of lengths up to 32, a model that can count is about as accurate at 16 .. 28 tokens as at 32
    (within 0.08): those lengths are in its training distribution. Trained on 32 alone, the same models lose much of
    their accuracy at 16 tokens already, where every position was seen (the confound a drop past the training length
    used to carry)."""
    lengths = [16, 20, 24, 28, 32]
    for encoding in COUNTING:
        accuracy = lab.evaluate_lengths(runs[encoding], lengths).accuracy
        assert np.all(np.abs(accuracy[:-1] - accuracy[-1]) <= 0.08), (encoding, accuracy.round(3))
    for encoding in ("sinusoidal", "alibi"):
        single = lab.train(lab.TrainConfig(encoding=encoding, steps=BUDGET.steps, min_len=32))
        accuracy = lab.evaluate_lengths(single, [16, 32]).accuracy
        assert accuracy[0] < accuracy[1] - 0.15, (encoding, accuracy.round(3))


# ------------------------------------------------------------------------------------------------ whole runs on disk


def test_a_run_saved_with_its_history_loads_back_whole(tmp_path):
    run = lab.train(lab.TrainConfig(encoding="sin-init", steps=15, seed=3))
    path = lab.save(run, tmp_path / "run.safetensors", history=True)
    back = lab.load_run(path)
    assert back.config == run.config and back.stopped is False and back.seconds == run.seconds
    for name in ("losses", "snapshot_steps", "snapshots"):
        np.testing.assert_array_equal(getattr(back, name), getattr(run, name))
        assert getattr(back, name).dtype == getattr(run, name).dtype and not getattr(back, name).flags.writeable
    assert (back.mlm_accuracy, back.probe_before, back.probe_after) == (
        run.mlm_accuracy,
        run.probe_before,
        run.probe_after,
    )
    ids = torch.from_numpy(held_out(run.config, sequences=4)[0])
    with torch.no_grad():
        torch.testing.assert_close(back.model(ids), run.model(ids), rtol=0, atol=0)
    config, model = lab.load(path)  # the model alone, as before
    assert config == run.config and set(model.state_dict()) == set(run.model.state_dict())
    table = posviz.load_position_embeddings(path)  # the inspector still finds the table, not the history
    assert table.key == lab.TABLE_KEY
    np.testing.assert_array_equal(table.table, run.model.position_table())


def test_a_run_without_a_table_keeps_nan_probes_and_empty_snapshots(tmp_path):
    run = lab.train(lab.TrainConfig(encoding="rope", steps=5))
    back = lab.load_run(lab.save(run, tmp_path / "rope.safetensors", history=True))
    assert math.isnan(back.probe_before) and math.isnan(back.probe_after)
    assert back.snapshots.shape == (0, 32, 64) and back.snapshot_steps.size == 0


def test_a_model_file_without_history_is_not_a_run(tmp_path):
    run = lab.train(lab.TrainConfig(encoding="nope", steps=3))
    path = lab.save(run, tmp_path / "model.safetensors")
    with pytest.raises(ValueError, match="holds a trained model but not its history: it was saved without history"):
        lab.load_run(path)


def test_saving_is_atomic(tmp_path, monkeypatch):
    """A save that fails half way leaves the file that was there before, and no temporary file."""
    import safetensors.torch

    run = lab.train(lab.TrainConfig(encoding="nope", steps=3))
    path = lab.save(run, tmp_path / "run.safetensors", history=True)
    before = path.read_bytes()

    def half_written(tensors, filename, metadata=None):
        Path(filename).write_bytes(b"half a file")
        raise OSError("No space left on device")

    monkeypatch.setattr(safetensors.torch, "save_file", half_written)
    with pytest.raises(OSError, match="No space left"):
        lab.save(run, path, history=True)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.safetensors"]
