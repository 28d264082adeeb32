"""The Chinese glossary (``assets/i18n/glossary.json``) is kept: each English term has one Chinese term, the catalogs
and teaching texts use it, and none of them uses a variant the glossary rules out. Captions open with one prefix."""

from __future__ import annotations

import json
import re

import pytest

from ._support import I18N, TEXTS, catalog

GLOSSARY = json.loads((I18N / "glossary.json").read_text(encoding="utf-8"))
TERMS = GLOSSARY["terms"]


def prose(text: str) -> str:
    """``text`` without its code spans and ``{fields}``, where code names keep their spelling."""
    return re.sub(r"`[^`]*`|\{[^{}]*\}", " ", text)


def zh_sources() -> dict[str, str]:
    """Every Chinese text of the app, by where it lives: catalog keys and teaching texts."""
    sources = {f"zh catalog {key!r}": text for key, text in catalog("zh").items()}
    sources |= {f"texts/{path.name}": path.read_text(encoding="utf-8") for path in sorted(TEXTS.glob("*.zh.md"))}
    return sources


def variants(term: dict) -> list[re.Pattern]:
    return [re.compile(re.escape(v)) for v in term.get("forbidden", ())] + [
        re.compile(v) for v in term.get("forbidden_regex", ())
    ]


def violations(sources: dict[str, str], terms=TERMS) -> list[str]:
    """Where a source uses a variant a term rules out, or opens with a prefix it rules out."""
    found = []
    for term in terms:
        for where, text in sources.items():
            plain = prose(text)
            for pattern in variants(term):
                for match in pattern.finditer(plain):
                    context = plain[max(0, match.start() - 12) : match.end() + 12]
                    said = f"{where} uses {match.group(0)!r} for {term['en']!r}"
                    found.append(f"{said} (say {term['zh']!r}): …{context}…")
            for prefix in term.get("forbidden_prefixes", ()):
                if text.startswith(prefix):
                    found.append(f"{where} opens with {prefix!r} (say {term['zh']!r})")
    return found


def test_the_glossary_is_one_chinese_term_per_english_term():
    english = [term["en"] for term in TERMS]
    assert len(english) == len(set(english)), "an English term is listed twice"
    for term in TERMS:
        assert term["zh"] and not any(v in term["zh"] for v in term.get("forbidden", ())), term
        assert not any(re.search(v, term["zh"]) for v in term.get("forbidden_regex", ())), term


def test_every_glossary_term_is_used():
    """A term nobody uses is a term nobody checked; its Chinese is found in the catalogs or the texts."""
    everything = "\n".join(zh_sources().values())
    unused = [term["en"] for term in TERMS if term["zh"] not in everything]
    assert not unused, unused


def test_no_catalog_or_text_uses_a_variant_the_glossary_rules_out():
    problems = violations(zh_sources())
    assert not problems, "\n".join(problems)


def test_captions_open_with_the_one_prefix():
    """Every caption that starts "What to notice:" in English starts with the glossary's prefix in Chinese."""
    en, zh = catalog("en"), catalog("zh")
    for term in (t for t in TERMS if t.get("prefix")):
        keys = [key for key, text in en.items() if text.startswith(term["en"])]
        assert len(keys) > 100, "the scan finds the captions"
        wrong = {key: zh[key][:12] for key in keys if not zh[key].startswith(term["zh"])}
        assert not wrong, wrong


@pytest.mark.parametrize(
    ("text", "variant"),
    [
        ("注意看：RoPE 的基数越大，波长越长。", "基数"),
        ("每个 token 都有自己的向量。", "token"),
        ("前后半配对", "前后半"),
        ("两半排布把 i 和 i + d/2 配成一对", "两半排布"),
        ("看点：右图就是左图", "看点："),
        ("遮罩语言模型", "遮罩"),
    ],
)
def test_the_check_finds_a_variant_planted_in_a_catalog(text, variant):
    """The check itself: a catalog string with a ruled-out variant is reported, code spans and fields are not."""
    assert any(variant in problem for problem in violations({"planted": text}))
    assert not violations({"planted": "用 `token_type_ids` 和 {token} 的 `base` 写代码"})
