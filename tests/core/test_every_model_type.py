"""``posviz.model_positions`` against transformers 5.24 on every model type it registers, layer by layer.

The truth (``_transformers_truth``) is what transformers' own modules do with the type's default config: its rotary
module's ``inv_freq``, its apply-rotary function's pairing, and its attention modules run on the CPU (RoPE or
NoPE, sliding window, chunks, no attention at all). posviz reads the same config, as a config.json's text. A type
posviz does not read must be listed in NOT_READ with the reason, and posviz must refuse it with a sentence; every
other type of the universe must match in kind, attention, window, rotary_dim, layout and inv_freq (to float32's
rounding of transformers' buffers, ``inv_freq_rtol``).
"""

from __future__ import annotations

import json

import pytest

import posviz

from . import _transformers_truth as truth_

pytestmark = pytest.mark.slow

#: model_type -> why posviz does not read it (posviz must refuse it with a ValueError)
NOT_READ: dict[str, str] = {
    "ernie4_5_vl_moe": "its rotary module reorders its frequencies for M-RoPE (height and width first, then time)",
    "ernie4_5_vl_moe_text": "the same text model as ernie4_5_vl_moe",
    "unlimited_ocr": "reference_sliding_attention: a sliding window plus reference tokens, through a mask of its own",
    "unlimited_ocr_text": "the same text model as unlimited_ocr",
}

#: every type's truth is computed once per process; this only names the types
TYPES = truth_.model_types()


@pytest.mark.parametrize("model_type", TYPES)
def test_model_type_matches_transformers(model_type):
    t = truth_.truth(model_type)
    if isinstance(t, truth_.OutOfScope):
        assert model_type not in NOT_READ, f"NOT_READ names {model_type}, which is out of scope: {t.reason}"
        return
    if model_type in NOT_READ:
        with pytest.raises(ValueError, match="posviz does not read model_type") as info:
            posviz.model_positions(t.config_json)
        assert "\n" not in str(info.value)
        return
    got = posviz.model_positions(t.config_json)
    assert got.model_type == json.loads(t.config_json)["model_type"]  # EvollaModel's class says "evolla"
    assert truth_.differences(t, got) == []


def test_coverage_of_the_universe():
    universe = truth_.universe(jobs=1)  # in this process: the truths the test above computed are cached here
    assert len(universe) > 270, "the truth finds far fewer model types than transformers 5.24 holds"
    assert set(NOT_READ) <= set(universe), sorted(set(NOT_READ) - set(universe))
    assert (len(universe) - len(NOT_READ)) / len(universe) >= 0.95


@pytest.mark.parametrize("model_type", sorted(truth_._REPAIRS))
def test_each_repair_is_one_transformers_needs(model_type, monkeypatch):
    """A repaired default is one transformers cannot build or run without the repair, and can with it: the repairs
    widen the universe, they never change a default that works."""
    assert isinstance(truth_.truth(model_type), truth_.TypeTruth)
    monkeypatch.setattr(truth_, "_REPAIRS", {})
    assert isinstance(truth_._compute(model_type), truth_.OutOfScope)


def test_the_truth_sees_the_schemes_it_must():
    """A few types whose positions are known from their papers, as a check on the truth itself."""
    llama = truth_.truth("llama")
    assert {(x.kind, x.attention, x.layout, x.rotary_dim) for x in llama.layers} == {("rope", "full", "half", 128)}
    llama4 = truth_.truth("llama4")
    assert [x.kind for x in llama4.layers[:4]] == ["rope", "rope", "rope", "nope"]
    assert llama4.layers[0].attention == "chunked" and llama4.layers[0].layout == "interleaved"
    gptj = truth_.truth("gptj")
    assert gptj.layers[0].layout == "interleaved" and gptj.layers[0].rotary_dim == 64
    qwen3_next = truth_.truth("qwen3_next")
    assert {x.kind for x in qwen3_next.layers} == {"none", "rope"}
    assert {x.rotary_dim for x in qwen3_next.layers if x.kind == "rope"} == {64}
    cohere2 = truth_.truth("cohere2")
    assert [(x.kind, x.attention) for x in cohere2.layers[:4]] == [("rope", "sliding")] * 3 + [("nope", "full")]
    deepseek = truth_.truth("deepseek_v3")
    assert deepseek.layers[0].head_dim == 192 and deepseek.layers[0].rotary_dim == 64
