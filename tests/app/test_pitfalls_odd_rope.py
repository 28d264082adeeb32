"""The Pitfalls page's odd-RoPE example shows all three messages for a head transformers refuses: torch's shape
error from hand-written code (which does not name RoPE), transformers 5.24's own refusal (which does, quoted as
its config class raises it) and posviz's explanation; a tiny head that transformers lets through says so."""

from __future__ import annotations

import pytest

from ._support import assert_clean, open_page, tr


def codes(at) -> list[str]:
    return [c.value for c in at.code]


def transformers_refusal(head_dim: int) -> str:
    import transformers

    transformers.logging.set_verbosity_error()
    with pytest.raises(Exception) as info:  # noqa: PT011 - the strict dataclass wraps transformers' ValueError
        transformers.LlamaConfig(hidden_size=2 * head_dim, num_attention_heads=2, head_dim=head_dim)
    return str(info.value.__cause__)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_odd_head_shows_torch_s_error_transformers_refusal_and_the_reason(lang):
    at = open_page("pitfalls", query={"tab": "rope", "odd": "65"}, lang=lang)
    assert_clean(at)
    shown = codes(at)
    assert "The size of tensor a (65) must match the size of tensor b (66) at non-singleton dimension 1" in shown
    assert transformers_refusal(65) in shown
    assert tr(lang, "core.rope.odd_head", head_dim=65, prf="1") in shown  # posviz's sentence, in the page's language
    labels = "\n".join(m.value for m in at.markdown)
    assert tr(lang, "pitfalls.rope.transformers", d=65) in labels
    assert tr(lang, "pitfalls.rope.what.odd") in labels


def test_tiny_odd_head_passes_transformers_check_and_the_page_says_so():
    at = open_page("pitfalls", query={"tab": "rope", "odd": "3"})
    assert_clean(at)
    assert tr("en", "pitfalls.rope.transformers.tiny", d=3) in [i.value for i in at.info]
    shown = codes(at)
    assert not any(c.startswith("RoPE requires") for c in shown)
    assert any("head_dim 3 is odd" in c for c in shown)
