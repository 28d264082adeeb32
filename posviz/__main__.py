"""Command line: ``python -m posviz families``, ``python -m posviz table FAMILY [name=value ...]``,
``python -m posviz inspect PATH [--key KEY]`` and
``python -m posviz train --encoding ENCODING [--steps N] [--seed S] --out FILE``."""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np

from .checkpoint import RopeModel, list_position_candidates, load_position_embeddings
from .encodings.registry import FAMILIES, family


def _families(_args) -> int:
    rows = []
    for fam in FAMILIES.values():
        params = ", ".join(
            f"{p.name}={p.default!r}"
            + (
                f" [{p.minimum:g}..{p.maximum:g}]"
                if p.minimum is not None
                else f" {{{', '.join(map(str, p.options))}}}"
            )
            for p in fam.params
        )
        rows.append(
            f"{fam.key:<11} {fam.summary}\n{'':<11} enters: {fam.enters}; relative: {fam.relative}; "
            f"learnable: {fam.learnable}\n{'':<11} {params}"
        )
    print("\n".join(rows))
    return 0


def _parse_assignment(fam, text: str):
    name, sep, raw = text.partition("=")
    if not sep:
        raise ValueError(f"parameters are written name=value; got {text!r}")
    param = fam.param(name) if name in {p.name for p in fam.params} else None
    if param is None:
        raise ValueError(f"{fam.key} has no parameter {name!r}; it has {', '.join(p.name for p in fam.params)}")
    if param.options:
        lookup = {str(o).lower(): o for o in param.options}
        if raw.lower() not in lookup:
            raise ValueError(f"{name} must be one of {', '.join(map(str, param.options))}; got {raw!r}")
        return name, lookup[raw.lower()]
    try:
        value = type(param.default)(float(raw)) if isinstance(param.default, int) else float(raw)
    except ValueError:
        raise ValueError(f"{name} must be a number; got {raw!r}") from None
    return name, value


def _table(args) -> int:
    fam = family(args.family)
    params = fam.defaults()
    params.update(dict(_parse_assignment(fam, a) for a in args.params))
    matrix = np.asarray(fam.build(**params), dtype=np.float64)
    if args.out:
        if args.out.endswith(".npy"):
            np.save(args.out, matrix)
        else:
            np.savetxt(args.out, matrix, delimiter=",", fmt="%.17g")
    summary = {
        "family": fam.key,
        "params": params,
        "shape": list(matrix.shape),
        "min": float(np.min(matrix[np.isfinite(matrix)])),
        "max": float(np.max(matrix[np.isfinite(matrix)])),
    }
    print(json.dumps(summary))
    return 0


def _inspect(args) -> int:
    candidates = list_position_candidates(args.path)
    print(f"{len(candidates)} candidate tables in {args.path}:")
    for c in candidates:
        print(f"  {c.key:<60} {str(list(c.shape)):<14} {c.dtype:<9} {c.known or ''}")
    try:
        table = load_position_embeddings(args.path, key=args.key)
    except RopeModel as exc:
        print(f"no position table: {exc}")
        return 0
    s = table.summary()
    print(
        f"table: {s['key']}\n"
        f"  shape {s['shape'][0]} x {s['shape'][1]} ({s['dtype']}, {s['format']}), offset {s['offset']}, "
        f"kind {s['kind']}\n"
        f"  row norm min {s['row_norm_min']:.4g}, mean {s['row_norm_mean']:.4g}, max {s['row_norm_max']:.4g}\n"
        f"  neighbour cosine mean {s['neighbour_cosine_mean']:.4g}"
    )
    return 0


def _train(args) -> int:
    from pathlib import Path

    out = Path(args.out)
    if not out.parent.is_dir():
        raise ValueError(f"cannot write {out}: the folder {out.parent} does not exist")
    from . import lab

    options = {name: value for name, value in (("steps", args.steps), ("seed", args.seed)) if value is not None}
    config = lab.TrainConfig(encoding=args.encoding, **options)
    every = max(1, config.steps // 10)

    def progress(step: int, total: int, loss: float) -> None:
        if step % every == 0 or step == total:
            print(f"step {step:>6}/{total}  loss {loss:.4f}", file=sys.stderr, flush=True)

    result = lab.train(config, progress=progress)
    lab.save(result, out)
    print(json.dumps({**result.metrics(), "out": str(out)}))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m posviz", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("families", help="list the encoding families and their parameters").set_defaults(run=_families)
    table = sub.add_parser("table", help="compute a family's matrix; print a JSON summary, optionally save it")
    table.add_argument("family", choices=list(FAMILIES))
    table.add_argument("params", nargs="*", metavar="name=value")
    table.add_argument("--out", help="write the matrix to FILE (.npy, otherwise CSV)")
    table.set_defaults(run=_table)
    inspect = sub.add_parser(
        "inspect", help="list a model file's candidate position tables and summarise the chosen one"
    )
    inspect.add_argument("path", help="a model file (safetensors, PyTorch, .npy, .npz) or a model folder")
    inspect.add_argument("--key", help="the full name of the tensor to summarise (default: the best known key)")
    inspect.set_defaults(run=_inspect)
    train = sub.add_parser("train", help="train the lab's micro BERT with one encoding; print its metrics as JSON")
    train.add_argument("--encoding", required=True, help="sinusoidal, learned, sin-init, rope, alibi or nope")
    train.add_argument("--steps", type=int, help="training steps (default: the lab's default budget)")
    train.add_argument("--seed", type=int, help="seed of the weights and the corpus (default 0)")
    train.add_argument("--out", required=True, help="write the trained model to FILE (safetensors)")
    train.set_defaults(run=_train)
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
