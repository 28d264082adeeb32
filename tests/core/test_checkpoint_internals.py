"""The one private torch call of the core (``torch_format.weights_only_allowlist``) agrees with torch's own
weights-only loader on the installed torch: every global of an old-style (pre-zip) checkpoint of tensors is on the
list and the file loads; a checkpoint that pickles a class of its own names a global that is not on it, and torch
refuses that file. A torch release that moves the list fails here by name."""

from __future__ import annotations

import collections
import io

import pytest
import torch

from posviz.checkpoint.torch_format import pickle_globals, weights_only_allowlist


class Custom:  # a class torch's weights-only loader has never heard of
    pass


def legacy_bytes(obj) -> bytes:
    buffer = io.BytesIO()
    torch.save(obj, buffer, _use_new_zipfile_serialization=False)
    return buffer.getvalue()


def test_a_legacy_checkpoint_of_tensors_asks_only_for_allowed_globals():
    state = collections.OrderedDict(weight=torch.arange(12.0).reshape(3, 4), bias=torch.zeros(3, dtype=torch.float16))
    data = legacy_bytes(state)
    asked = pickle_globals(io.BytesIO(data))
    assert asked and asked <= weights_only_allowlist()
    loaded = torch.load(io.BytesIO(data), weights_only=True)
    assert torch.equal(loaded["weight"], state["weight"])


def test_a_legacy_checkpoint_with_a_class_of_its_own_asks_for_one_torch_refuses():
    data = legacy_bytes({"weight": torch.ones(2), "extra": Custom()})
    unsafe = pickle_globals(io.BytesIO(data)) - weights_only_allowlist()
    assert unsafe == {f"{__name__}.Custom"}
    with pytest.raises(Exception, match="Custom"):
        torch.load(io.BytesIO(data), weights_only=True)
