"""The training lab: train a micro BERT with each positional encoding on a CPU and watch positions being learned.

    corpus.py    noisy wrap-around counting, whose tokens depend on their order and position (numpy)
    model.py     the micro BERT and its six ways of knowing where a token is (ENCODINGS)
    train.py     TrainConfig, train(config, progress, snapshot_every, should_stop) -> RunResult, save, load,
                 load_run (a whole RunResult from a file saved with history=True)
    evaluate.py  evaluate_lengths(result, lengths) -> LengthAccuracy; position_accuracy(encoding, config)
    queue.py     TrainingQueue: one run per configuration for many clients, in worker processes, kept on disk

Example::

    from posviz import lab
    result = lab.train(lab.TrainConfig(encoding="learned", steps=300))
    result.mlm_accuracy, result.probe_before, result.probe_after
    lab.evaluate_lengths(result, [16, 32, 64]).errors[-1]     # torch's IndexError past the table's end
    lab.save(result, "learned.safetensors")                    # opens with posviz.load_position_embeddings

Importing this package imports torch; ``import posviz`` alone does not.
"""

from .corpus import IGNORE, bag_of_tokens_ceiling, counting, mlm_batch
from .evaluate import LengthAccuracy, evaluate_lengths, position_accuracy
from .model import ENCODINGS, LEARNED_TABLES, TABLE_ENCODINGS, TABLE_KEY, MicroBert
from .queue import Status, TrainingQueue
from .train import RunResult, TrainConfig, load, load_run, save, train

__all__ = [
    "ENCODINGS",
    "IGNORE",
    "LEARNED_TABLES",
    "TABLE_ENCODINGS",
    "TABLE_KEY",
    "LengthAccuracy",
    "MicroBert",
    "RunResult",
    "Status",
    "TrainConfig",
    "TrainingQueue",
    "bag_of_tokens_ceiling",
    "counting",
    "evaluate_lengths",
    "load",
    "load_run",
    "mlm_batch",
    "position_accuracy",
    "save",
    "train",
]
