"""What the RoPE page, its help texts and the odd-RoPE pitfall say, in both languages, checked against what the code
computes: the slowest pair's wavelength, the layouts of Meta's LLaMA code and of transformers' port, the decay."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from posviz.encodings import rope

I18N = Path(__file__).resolve().parents[2] / "assets" / "i18n"


def catalog(lang: str, page: str) -> dict[str, str]:
    return json.loads((I18N / lang / f"{page}.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize(("d", "base"), [(64, 10_000.0), (128, 500_000.0), (8, 100.0)])
def test_base_help_gives_the_slowest_wavelength_the_code_computes(d, base):
    """The slowest pair turns once every 2π·base^((d−2)/d) positions, a little under 2π·base, not 2π·base."""
    slowest = float(rope.rope_wavelength(rope.rope_inv_freq(d, base=base)[0])[-1])
    assert slowest == pytest.approx(2 * math.pi * base ** ((d - 2) / d), rel=1e-12)
    assert slowest < 2 * math.pi * base
    for lang in ("en", "zh"):
        text = catalog(lang, "common")["help.base"]
        assert "2π·base^((d−2)/d)" in text and "2π·base^(2i/d)" in text
    assert "a little under 2π·base" in catalog("en", "common")["help.base"]
    assert "略小于 2π·base" in catalog("zh", "common")["help.base"]


def test_no_catalog_calls_2pi_base_the_slowest_wavelength():
    """No help or notice (the sinusoidal page's own catalog aside) says the slowest pair turns every 2π·base."""
    for lang, wrong in (("en", "every 2π·base positions"), ("zh", "每 2π·base 个位置")):
        for path in (I18N / lang).glob("*.json"):
            if path.stem == "sinusoidal":
                continue
            for key, text in json.loads(path.read_text(encoding="utf-8")).items():
                assert wrong not in text, (path.name, key)


def test_layouts_name_meta_s_llama_interleaved_and_transformers_port_half_split():
    """Meta's reference LLaMA code multiplies adjacent pairs as complex numbers (interleaved); transformers' port
    permutes the q/k weights to use rotate_half (half-split)."""
    en, zh = catalog("en", "rope"), catalog("zh", "rope")
    assert "LLaMA" in en["rope.layout.interleaved"] and "Meta" in en["rope.layout.interleaved"]
    assert "transformers' LLaMA" in en["rope.layout.half"]
    assert "Meta 的 LLaMA" in zh["rope.layout.interleaved"] and "transformers 的 LLaMA" in zh["rope.layout.half"]
    interleaved, half = en["rope.layouts.notice"].split("; half-split")
    assert "Meta's reference LLaMA" in interleaved and "transformers' LLaMA" in half
    interleaved, half = zh["rope.layouts.notice"].split("；前后两半排布")
    assert "Meta 官方的 LLaMA" in interleaved and "transformers 里的 LLaMA" in half
    # the permutation the check shows is the one that turns interleaved pairs into half-split ones
    perm = rope.interleaved_to_half(8)
    x = np.random.default_rng(0).normal(size=(5, 8))
    inv, _ = rope.rope_inv_freq(8)
    np.testing.assert_allclose(
        rope.apply_rope(x, np.arange(5), inv, layout="interleaved")[:, perm],
        rope.apply_rope(x[:, perm], np.arange(5), inv, layout="half"),
        atol=1e-12,
    )


def test_decay_notice_says_only_smaller_and_the_envelope_never_rises():
    _, _, envelope = rope.rope_decay_profile(2000, 64)
    assert np.all(np.diff(envelope) <= 0)
    assert "can reach only smaller scores" in catalog("en", "rope")["rope.decay.notice"]
    assert "只会更小" in catalog("zh", "rope")["rope.decay.notice"]


def test_chinese_extension_notice_keeps_from_none_to_full():
    assert "from none to full" in catalog("en", "rope")["rope.ext.classes.notice"]
    assert "从完全不动平滑地增长到完全插值" in catalog("zh", "rope")["rope.ext.classes.notice"]


def test_usage_intro_calls_the_weight_norms_a_counterpart_of_barbero_s_activation_norms():
    """posviz measures the norms of W_q / W_k rows per pair; Barbero et al. (2025) measured query and key norms on
    activations (Gemma 7B run on text). The intro says usage is a weight-only counterpart of theirs."""
    en, zh = catalog("en", "usage")["usage.intro"], catalog("zh", "usage")["usage.intro"]
    assert "weight-only counterpart" in en and "activations" in en
    assert "the quantity Barbero" not in en
    assert "只看权重的对应版本" in zh and "激活" in zh
    assert "也就是 Barbero" not in zh


def test_p_rope_share_sentence_describes_the_squared_mean_curve_it_computes():
    """The share above the p-RoPE plot is sum over the dropped pairs of mean_i^2 / sum of mean_i^2, mean_i the usage
    averaged over heads and layers (what the inspector passes to ``p_rope_share``). That is not the share of the
    heads' squared norms, which do add up across pairs: the two differ, so the notice must name the first."""
    from posviz.lessons import frequency_usage as fu

    rng = np.random.default_rng(0)
    usage = rng.gamma(2.0, size=(3, 4, 8))  # layers x heads x pairs, each a row-pair norm
    dropped = np.arange(8) >= 6
    mean = usage.mean(axis=(0, 1))
    drawn = float(fu.p_rope_share(mean, dropped))
    assert drawn == pytest.approx((mean[dropped] ** 2).sum() / (mean**2).sum(), rel=1e-12)
    heads = float((usage[..., dropped] ** 2).sum() / (usage**2).sum())
    assert abs(drawn - heads) > 1e-3
    en, zh = catalog("en", "usage"), catalog("zh", "usage")
    assert "squares the mean usage drawn here" in en["usage.prope.notice"]
    assert "(squared norms add up across pairs)" not in en["usage.prope.notice"]
    assert "squared mean usage" in en["usage.prope.share"]
    assert "平均使用量逐一平方再求和" in zh["usage.prope.notice"]
    assert "（范数的平方可以按维度对相加）" not in zh["usage.prope.notice"]
    assert "平均使用量平方和" in zh["usage.prope.share"]
