"""Chinese mode reads in Chinese: every page, every tab, rendered with ``?lang=zh``, shows no English word of posviz's
own, whether the sentence came from a catalog entry or was built in code (an f-string, a core error's text, a figure's
legend). What may stay in Latin letters is small and named here: symbols and formulas, code identifiers and file
names, model, paper and people's names, units and abbreviations. Error messages of torch and transformers, which the
Pitfalls and Learned pages quote on purpose, stay as those libraries print them.
"""

from __future__ import annotations

import re

import pytest

import posviz
from posviz.lab import ENCODINGS
from posviz.lessons import attention_demo, claims, pitfalls

from ._support import PAGE_NAMES, _blocks, assert_clean, catalog, open_page, tab_codes, tr, visible_strings

#: Latin words allowed in Chinese text, beyond what ``allowed`` accepts by its form (one letter, a word with a digit,
#: an underscore, a dot or a capital after its first letter: ``d_model``, ``float16``, ``config.json``, ``RoPE``).
NAMES = {
    # people and places of the papers, models and projects
    *"Shaw Transformer Llama Gemma Meta Hugging Face Chen Dai Vaswani Barbero Wang Yang Pythia Pixtral Phi".split(),
    *"Instruct Scout Mistral Marian Okabe Ito Su Lee Press Peng Devlin Haviv Kazemnejad Heo Lan Command Qwen".split(),
    *"Radford Raffel Cohere Flan Music Pixtral Music Zhang Li Liu Jiang Ding Sun Xiong Kitaev Ainslie Bai".split(),
    *"Falcon Mixtral Baichuan Yi Gemini Claude Phi".split(),
    "mini",  # Phi-3.5 mini
    "sentence-transformers",
    "arXiv",
    # libraries, tools and file kinds, as they are spelled
    *"posviz transformers torch numpy plotly safetensors fairseq cividis streamlit".split(),
    # functions and operators of the formulas
    *"sin cos tan ln log exp max min softmax clip round tril argmax mod sup br".split(),
    "pos",  # the position of the papers' formulas: PE(pos + k)
    "dr", "dc",  # the row and column offsets of 2-D RoPE's score, f(dr) + g(dc)
    "base",  # the base of the frequencies, written beside 底数 and in formulas (the glossary)
    # the keys of a keyboard
    "Page", "Up", "Down",
}  # fmt: skip

#: What a cited source is printed with: its authors, title and venue, and every family's paper (``Family.paper``),
#: longest first; the example sentences of Home's demo (data, in their own language).
CITED = sorted(
    {
        *(fam.paper for fam in posviz.FAMILIES.values()),
        *(part for s in claims.SOURCES.values() if s.kind == "paper" for part in (*s.authors, s.title("en"), s.venue)),
        *(s.first_author for s in claims.SOURCES.values() if s.first_author),
        *attention_demo.EXAMPLES.values(),
    },
    key=len,
    reverse=True,
)

#: Text that is not prose: formulas, code, markup, links.
NOT_PROSE = re.compile(
    r"\d{4}，“[^“”]*”(?:，[^，；）]*\d{4})?|"  # a paper cited by its English title (and venue), after its year
    r"\b[A-Za-z]\w*_\w*\([^()]*\)|"  # a call of a code function: apply_rope(x, interleaved)
    r"\$\$.*?\$\$|\$[^$\n]*\$|`[^`]*`|:material/\w+:|:[a-z]+(?:-badge)?\[|<[^<>]*>|https?://\S+|\]\([^)]*\)|&\w+;",
    re.S,
)
WORD = re.compile(r"[A-Za-z][A-Za-z0-9_'’./-]*[A-Za-z0-9]|[A-Za-z]")


#: What torch, numpy and transformers say, quoted on purpose (the pages put posviz's own explanation beside it).
THIRD_PARTY = [
    re.compile(p, re.S)
    for p in (
        r"index out of range in self",
        r"The size of tensor a \(\d+\) must match the size of tensor b",
        r"Sizes of tensors must match",
        r"Tensors must have same number of dimensions",
        r"mat1 and mat2 shapes cannot be multiplied",
        r"operands could not be broadcast together",
        ".+?".join(re.escape(part) for part in re.split(r"\{[^{}]*\}", pitfalls.TRANSFORMERS_ODD_MESSAGE)),
    )
]


def allowed(word: str) -> bool:
    """Whether a Latin ``word`` may stand in Chinese text."""
    return (
        len(word) == 1
        or word in NAMES
        or bool(re.search(r"[\d_.]", word))  # d_model, float16, GPT-2, config.json, e-16
        or bool(re.search(r"[A-Z]", word[1:]))  # abbreviations and names written with capitals: PE, RoPE, NTK-aware
        or (bool(re.search(r"[-/]", word)) and all(allowed(part) for part in re.split(r"[-/]", word) if part))
    )  # the last: GPT-J, sin-init, q/k


def english_words(text: str) -> list[str]:
    """The Latin words of ``text``'s prose that ``allowed`` refuses (a word right before "(" names a function, and
    a source's authors, title and venue are cited as they are printed)."""
    for part in CITED:
        text = text.replace(part, " ")
    for quoted in THIRD_PARTY:
        text = quoted.sub(" ", text)
    prose = NOT_PROSE.sub(" ", text)
    return [
        word
        for match in WORD.finditer(prose)
        for word in [match.group(0).rstrip(".'’")]
        if not allowed(word) and not prose[match.end() : match.end() + 1] == "("
    ]


def test_the_rule_tells_english_from_names_and_symbols():
    assert english_words("动态 NTK（factor 1）") == ["factor"]
    assert english_words("position 512 is outside the learned table") == [
        "position", "is", "outside", "the", "learned", "table"
    ]  # fmt: skip
    assert english_words("Shaw et al.（2018）；its key term alone in Music Transformer") == [
        "et", "al", "its", "key", "term", "alone", "in"
    ]  # fmt: skip
    assert not english_words(
        "RoPE 的 head_dim = 65，`rope_theta` 取 10000；$\\theta_i = b^{-2i/d}$，GPT-J、NTK-aware、Llama 3"
    )
    assert not english_words(":material/info: **sin** 与 cos，config.json，float16，d_model，max |sin² + cos² − 1|")


def shown(at) -> list[tuple[str, str]]:
    """``(where, text)`` of everything the page shows a student: ``visible_strings`` (headings, texts, captions,
    errors, warnings, controls, figure titles, axes, legends, annotations), plus the cells and headers of its
    tables and the plain-text blocks that are not another library's error message."""
    out = [(where, text) for where, text in visible_strings(at) if not where.startswith("radio lang")]
    for _, _, node in [*_blocks(at.main), *_blocks(at.sidebar)]:
        if node.type == "code" and node.language in (None, "", "text", "plaintext"):
            if not any(p.search(node.value) for p in THIRD_PARTY):
                out.append(("code", node.value))
        elif node.type in ("table", "dataframe"):
            frame = node.value
            out += [("table header", str(c)) for c in frame.columns]
            out += [("table index", str(i)) for i in frame.index]
            out += [("table cell", v) for v in frame.astype(str).to_numpy().ravel()]
    return out


#: Whole texts that stay as they are: the training lab's encodings, named as code in its legends.
NEUTRAL = set(ENCODINGS)


def english_shown(at, where_tab: str) -> list[str]:
    return [
        f"{where_tab} {where}: {words} in {text[:160]!r}"
        for where, text in shown(at)
        if text not in NEUTRAL
        for words in [english_words(text)]
        if words
    ]


def visit(page: str, query: dict | None = None) -> list[str]:
    """Open ``page`` in Chinese (``?lang=zh`` and ``query``), open each of its tabs, and list the English found."""
    at = open_page(page, query={"lang": "zh", **(query or {})})
    assert_clean(at)
    found = english_shown(at, "(first tab)")
    label = "{page}.{code}" if page == "relative" else "{page}.tab.{code}"
    if page == "claims":  # a selector of twenty claims, bound to ``tab=`` like tabs: open each by its link
        for code in tab_codes(page)[1:]:
            at = open_page(page, query={"lang": "zh", "tab": code})
            assert_clean(at)
            found += english_shown(at, f"claim {code}")
        return found
    codes = () if page in ("inspect", "lab") else tab_codes(page)
    for code in codes[1:]:
        at.session_state["tab"] = tr("zh", label.format(page=page, code=code))
        at.run()
        assert_clean(at)
        found += english_shown(at, f"tab {code}")
    return found


@pytest.mark.parametrize("page", PAGE_NAMES)
def test_every_page_and_tab_reads_in_chinese(page):
    found = visit(page)
    assert not found, "English in Chinese mode:\n" + "\n".join(found)


@pytest.mark.parametrize(
    ("page", "query"),
    [
        ("learned", {"tab": "past"}),  # the explanation of a missing row
        ("compare", {"tab": "long"}),  # past the training length: the learned table's missing row
        ("pitfalls", {"tab": "index", "rows": "64", "pos": "100"}),  # past the table
        ("pitfalls", {"tab": "rope", "odd": "65"}),  # an odd head_dim: posviz's explanation
        ("pitfalls", {"tab": "rope", "odd": "3"}),  # a tiny odd head, which transformers lets through
        ("rope", {"tab": "extension"}),  # the legends of the scalings and of dynamic NTK's factor
        ("compare", {"tab": "overview"}),  # the feature table
    ],
    ids=lambda v: v if isinstance(v, str) else "-".join(f"{k}={x}" for k, x in v.items()),
)
def test_sentences_built_in_code_read_in_chinese(page, query):
    at = open_page(page, query={"lang": "zh", **query})
    assert_clean(at)
    assert at.session_state["tab.code"] == query["tab"]
    found = english_shown(at, query["tab"])
    assert not found, "English in Chinese mode:\n" + "\n".join(found)


def test_core_messages_are_the_cores_own_text():
    """Each ``core.`` entry's English text is what the core says, so ``core_message`` recognises it and shows the
    same sentence in the chosen language."""
    from posviz.encodings import learned, xlnet

    def raised(func, *args, **kwargs) -> str:
        with pytest.raises(ValueError) as info:
            func(*args, **kwargs)
        return str(info.value)

    said = {
        "core.learned.lookup": (learned.lookup_error(64, 100), {"position": 100, "last": 63, "n": 64}),
        "core.rope.odd_head": (pitfalls.rope_odd_reason(65), {"head_dim": 65, "prf": "1"}),
        "core.rope.odd_apply": (pitfalls.rope_odd_reason(3), {"head_dim": 3}),
        "core.xlnet.order.empty": (raised(xlnet.parse_order, " ", 8), {}),
        "core.xlnet.order.not_index": (raised(xlnet.parse_order, "0,a", 8), {"bad": "'a'"}),
        "core.xlnet.order.too_long": (raised(xlnet.parse_order, "0,1,2", 2), {"most": "2", "got": "3"}),
        "core.xlnet.order.repeated": (raised(xlnet.parse_order, "0,0,1", 8), {"token": 0, "text": "'0,0,1'"}),
        "core.xlnet.order.missing": (
            raised(xlnet.parse_order, "0,2", 8),
            {"n": 2, "last": 1, "missing": 1, "largest": 2},
        ),
        "core.t5.exact_region": (
            raised(posviz.t5_bucket_matrix, 4, 4, num_buckets=128, max_distance=16),
            {"max_distance": 16, "exact": 32},
        ),
        "core.t5.too_few_buckets": (raised(posviz.t5_bucket_matrix, 4, 4, num_buckets=2), {"num_buckets": 2}),
        "core.home.single_token": (raised(attention_demo.shuffle_demo, "狗"), {"token": "'狗'"}),
        "core.home.no_words": (raised(attention_demo.shuffle_demo, "  "), {}),
    }
    assert {key for key in catalog("en") if key.startswith("core.")} == set(said)
    for key, (message, values) in said.items():
        assert tr("en", key, **values) == message
        assert not english_words(tr("zh", key, **values)), tr("zh", key, **values)
