"""What only a browser shows about the pages' words: Streamlit's uploader refuses a file over the limit before the
server sees it, so the inspector says the limit and the way round it beside the uploader; Home's T5 card lands on
the T5 tab; and the inspector, Home and the training lab read as Chinese in the Chinese UI. Screenshots of each
(also in presentation mode at 1280x720) land in ``test-artifacts/screenshots/``."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

import numpy as np
import pytest

from .test_pages import DRAWN, catalog, errors_on, page_url, screenshot, settle, title_of

PROJECTOR = {"width": 1280, "height": 720}


def limit_sentence(lang: str, mb: int) -> str:
    c = catalog(lang)
    return c["inspect.upload.limit"].format(mb=mb, path=c["inspect.origin.path"], cache=c["inspect.origin.cache"])


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_file_over_the_limit_never_reaches_the_server_and_the_page_says_what_to_do(
    page, app_url, screenshot_dir, tmp_path, lang
):
    import posviz

    mb = posviz.MAX_UPLOAD_BYTES // 1024**2
    big = tmp_path / "gpt2-model.safetensors"
    with open(big, "wb") as f:  # 600 MB on paper, nothing on disk: the browser reads only its size
        f.truncate(600 * 1000**2)
    uploads = []
    page.on("request", lambda r: uploads.append(r.url) if "/_stcore/upload_file" in r.url else None)
    page.goto(page_url(app_url, "inspect", "lang=zh" if lang == "zh" else ""), wait_until="domcontentloaded")
    settle(page)
    uploader = page.locator('[data-testid="stFileUploader"]')
    # Streamlit's own words under the drop zone show the same limit as ours (512 read "1GB per file")
    assert uploader.get_by_text(f"{mb}MB per file").count() == 1
    sentence = page.locator('[data-testid="stCaptionContainer"]').filter(has_text=limit_sentence(lang, mb)[:30])
    assert sentence.count() == 1 and limit_sentence(lang, mb) in sentence.inner_text()

    page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(str(big))
    refusal = uploader.get_by_text(re.compile(r"File must be .* or smaller"))
    refusal.wait_for(timeout=30_000)
    assert f"{mb}.0MB" in refusal.inner_text()  # the browser's refusal names the same limit
    page.wait_for_timeout(1500)
    assert uploads == [], "the browser sent a file over the limit to the server"
    info = page.locator('[data-testid="stAlertContentInfo"]').all_inner_texts()
    assert catalog(lang)["inspect.empty"] in info  # the page never saw the file: nothing was loaded
    # the sentence with the way round the limit stays on screen right under the refusal
    chip, said = refusal.bounding_box(), sentence.bounding_box()
    assert 0 <= said["y"] - chip["y"] < 200 and said["y"] + said["height"] <= page.viewport_size["height"]
    for needed in ("BERT-base", "440 MB", "GPT-2", "548 MB", catalog(lang)["inspect.origin.path"]):
        assert needed in sentence.inner_text()
    screenshot(page, screenshot_dir / f"inspect-too-large-{lang}.png")


def test_the_t5_card_on_home_opens_the_t5_tab(page, app_url, screenshot_dir):
    page.goto(page_url(app_url, "home", "lang=zh"), wait_until="domcontentloaded")
    settle(page, min_charts=1, min_links=6)
    page.locator('[data-testid="stPageLink"] a').filter(has_text=catalog("zh")["family.t5.name"]).click()
    page.wait_for_function(
        """(drawn) => new URL(location.href).pathname.endsWith('/relative') &&
             [...document.querySelectorAll('.js-plotly-plot')].some(g => g.querySelector(drawn))""",
        arg=DRAWN,
        timeout=30_000,
    )
    settle(page, min_charts=1)
    screenshot(page, screenshot_dir / "home-t5-card-zh.png")
    assert errors_on(page) == []
    assert parse_qs(urlsplit(page.url).query).get("tab") == ["t5"]
    selected = page.locator('[role="tab"][aria-selected="true"]').inner_text().strip()
    assert selected == catalog("zh")["relative.t5"]


def _random_table_file(tmp_path):
    from safetensors.numpy import save_file

    table = np.random.default_rng(3).normal(0.0, 0.02, size=(64, 32)).astype(np.float32)
    path = tmp_path / "untrained.safetensors"
    save_file({"bert.embeddings.position_embeddings.weight": table}, str(path))
    return path


@pytest.mark.parametrize("present", [False, True], ids=["screen", "projector"])
def test_chinese_inspector_home_and_lab(page, app_url, screenshot_dir, tmp_path, present):
    """The three pages in Chinese, read as a student would see them: Chinese sentences, the Chinese example on Home,
    the lab's status naming each encoding with its Chinese label, the inspector's verdict on an untrained table."""
    zh = catalog("zh")
    query = "lang=zh" + ("&present=true" if present else "")
    suffix = "-present" if present else ""
    if present:
        page.set_viewport_size(PROJECTOR)

    page.goto(page_url(app_url, "home", query), wait_until="domcontentloaded")
    settle(page, min_charts=2, min_links=6)
    screenshot(page, screenshot_dir / f"home-zh{suffix}.png")
    assert errors_on(page) == [] and title_of(page) == zh["page.home"]
    ticks = page.evaluate("() => document.querySelectorAll('.js-plotly-plot')[0].layout.xaxis.ticktext")
    assert "".join(ticks) == "狗咬人不是新闻，人咬狗才是新闻"  # the Chinese example, one token per character

    page.goto(page_url(app_url, "lab", query + "&enc=rope&enc=alibi&steps=37"), wait_until="domcontentloaded")
    settle(page)
    screenshot(page, screenshot_dir / f"lab-status-zh{suffix}.png")
    status = page.locator('[data-testid="stAlertContentInfo"]').first.inner_text()
    assert status == "以下编码还没有用 37 步训练过：rope（旋转位置编码）、alibi（线性偏置）。"

    page.goto(page_url(app_url, "inspect", query), wait_until="domcontentloaded")
    settle(page)
    if present:  # the controls are folded into a panel on a projector
        page.get_by_text(zh["present.controls"]).first.click()
    page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(str(_random_table_file(tmp_path)))
    settle(page, min_charts=2)
    screenshot(page, screenshot_dir / f"inspect-random-zh{suffix}.png")
    assert errors_on(page) == []
    info = " ".join(page.locator('[data-testid="stAlertContentInfo"]').all_inner_texts())
    assert zh["inspect.reading.random"].split("（")[0] in info
    captions = page.locator('[data-testid="stCaptionContainer"]').all_inner_texts()
    assert zh["inspect.table.notice.random"] in captions
    assert all(not c.startswith(("看点", "请注意")) for c in captions)
    z = page.evaluate("() => document.querySelectorAll('.js-plotly-plot')[0]._fullData[0].z")
    assert np.asarray(z, dtype=float).shape == (64, 32)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_feature_table_gives_every_column_room_for_a_word(page, app_url, lang):
    """Compare's feature table at 1280 px: no column so narrow that its header stands one character a line, and the
    table within the main column."""
    page.goto(page_url(app_url, "compare", f"tab=overview&lang={lang}"), wait_until="domcontentloaded")
    settle(page, min_charts=1)
    page.wait_for_selector('[data-testid="stTable"] table')
    seen = page.evaluate(
        """() => { const table = document.querySelector('[data-testid="stTable"] table');
                   const main = document.querySelector('[data-testid="stMainBlockContainer"]').getBoundingClientRect();
                   const cells = [...table.querySelectorAll('thead th')].map(th => {
                     const r = th.getBoundingClientRect(), px = parseFloat(getComputedStyle(th).fontSize);
                     return {text: th.innerText, chars: r.width / px}; });
                   return {cells, right: table.getBoundingClientRect().right, mainRight: main.right}; }"""
    )
    assert all(cell["chars"] >= 4 for cell in seen["cells"] if cell["text"].strip()), seen["cells"]
    assert seen["right"] <= seen["mainRight"] + 1
