"""Share this view: the dialog shows the view's link and its QR code, the code reads back as that link, and the link
reopens the same view. In presentation mode the Slides switch, the share button and the slide counter are in the
page, not in the folded sidebar.

The QR code is read back independently: its SVG (segno's) is rasterised here from the path it draws, and decoded by
ZXing (``zxing-cpp``), a decoder that shares no code with the encoder.
"""

from __future__ import annotations

import base64
import re
from urllib.parse import parse_qsl, urlsplit

import numpy as np
import pytest
import zxingcpp

from ._support import assert_clean, figures, open_page, tr
from .test_handout import Handout, download  # noqa: F401  (a fixture)

SHARE, SWITCH = "posviz-share", "posviz-slides"
#: The view shared in the tests: values of the page's controls and a tab, so that a link that dropped one would show.
VIEWS = [
    ("alibi", {"heads": "12", "len": "48", "tab": "origin"}),
    ("sinusoidal", {"n": "64", "d": "32", "base": "100", "tab": "shift", "k": "5"}),
]


def share_dialog(at):
    """Press "Share this view"; the dialog's link (its code box) and its QR image (``src`` and ``width``)."""
    (button,) = [b for b in at.button if b.key == SHARE]
    button.click().run()
    assert_clean(at)
    (link,) = [c.value for c in at.code]
    images = [h.proto.body for h in at.get("html") if 'class="posviz-qr"' in h.proto.body]
    assert len(images) == 1, "one QR code in the dialog"
    src = re.search(r'src="([^"]+)"', images[0]).group(1)
    width = int(re.search(r'width="(\d+)"', images[0]).group(1))
    return link, src, width


def svg_of(src: str) -> str:
    prefix = "data:image/svg+xml;base64,"
    assert src.startswith(prefix), src[:40]
    return base64.b64decode(src[len(prefix) :]).decode("utf-8")


def rasterise(svg: str, pixels_per_module: int = 8) -> np.ndarray:
    """The SVG's picture as a grey image: its view box white, every dark stroke drawn. segno draws each row of dark
    modules as one path of moves and horizontal runs, a stroke one module wide centred half a module below the
    row's top; any other drawing command fails the test rather than being drawn wrong."""
    box = [float(v) for v in re.search(r'viewBox="([^"]+)"', svg).group(1).split()]
    assert box[:2] == [0, 0] and box[2] == box[3]
    side = int(box[2])
    dark = np.zeros((side, side), dtype=bool)
    paths = re.findall(r"<path ([^>]*)/?>", svg)
    strokes = [p for p in paths if 'stroke="#000"' in p]
    assert len(strokes) == 1 and all('stroke="#000"' in p or 'fill="#fff"' in p for p in paths), paths
    d = re.search(r'd="([^"]+)"', strokes[0]).group(1)
    x = y = 0.0
    for command, numbers in re.findall(r"([A-Za-z])([^A-Za-z]*)", d):
        values = [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?", numbers)]
        if command == "M":
            x, y = values
        elif command == "m":
            x, y = x + values[0], y + values[1]
        elif command == "h":
            (run,) = values
            row = int(y - 0.5)
            assert y - row == 0.5, "a stroke centred on a module's middle"
            lo, hi = sorted((x, x + run))
            dark[row, int(lo) : int(hi)] = True
            x += run
        else:
            raise AssertionError(f"an SVG command the test does not draw: {command}")
    image = np.where(dark, 0, 255).astype(np.uint8)
    return np.kron(image, np.ones((pixels_per_module, pixels_per_module), dtype=np.uint8))


def decoded(src: str) -> str:
    results = zxingcpp.read_barcodes(rasterise(svg_of(src)))
    assert len(results) == 1, f"{len(results)} codes read"
    assert results[0].format == zxingcpp.BarcodeFormat.QRCode
    return results[0].text


def test_the_rasteriser_and_decoder_read_a_code_and_see_a_damaged_one():
    """The check can fail: a code drawn from another link reads as that link, and one with its finder patterns
    erased does not read at all."""
    from posviz.ui import share

    src = share.qr_data_url("/rope?base=500000&lang=zh")
    assert decoded(src) == "/rope?base=500000&lang=zh"
    image = rasterise(svg_of(src))
    image[: 8 * 12, : 8 * 12] = 255  # the top-left finder pattern and more, erased
    image[-8 * 12 :, : 8 * 12] = 255
    assert zxingcpp.read_barcodes(image) == []


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize(("name", "query"), VIEWS, ids=[name for name, _ in VIEWS])
def test_the_qr_code_reads_as_the_views_link_and_the_link_reopens_the_view(download, name, query, lang):  # noqa: F811
    at = open_page(name, query={**query, "lang": lang})
    assert_clean(at)
    shown = figures(at)
    handout_links = Handout(download(at)).links  # the handout's "Open this view", made from the same record
    link, src, width = share_dialog(at)
    assert decoded(src) == link
    assert handout_links == [link]
    assert width >= 250
    texts = [c.value for c in at.caption]
    assert any(tr(lang, "share.scan") in text for text in texts), texts
    parts = urlsplit(link)
    assert parts.path == f"/{name}"
    assert dict(parse_qsl(parts.query)) == {**query, "lang": lang}
    again = open_page(name, query=dict(parse_qsl(parts.query)))
    assert_clean(again)
    assert figures(again) == shown  # the same figures, data and titles alike


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_in_presentation_mode_the_switch_share_and_counter_are_in_the_page_and_the_code_is_large(lang):
    at = open_page("alibi", query={"present": "true", "heads": "12", "lang": lang})
    assert_clean(at)
    main_keys = {w.key for w in at.main.toggle} | {b.key for b in at.main.button}
    side_keys = {w.key for w in at.sidebar.toggle} | {b.key for b in at.sidebar.button}
    assert {SWITCH, SHARE} <= main_keys and not {SWITCH, SHARE} & side_keys
    n = len(figures(at))  # the open tab's figures: the slides of this view
    assert n >= 2
    assert tr(lang, "slides.counter", k="–", n=n) in [m.value for m in at.main.markdown]
    link, src, width = share_dialog(at)
    assert width >= 0.6 * 720  # scanned from the back of the room on a 720-pixel projector
    assert decoded(src) == link and "present=true" in link and "heads=12" in link


def test_on_a_slide_the_counter_says_which_slide_and_share_keeps_the_view():
    at = open_page("alibi", query={"present": "true", "heads": "12", "tab": "row"})
    n = len(figures(at))
    (switch,) = [w for w in at.main.toggle if w.key == SWITCH]
    switch.set_value(True).run()
    assert_clean(at)
    assert tr("en", "slides.counter", k=1, n=n) in [m.value for m in at.main.markdown]
    (step,) = [b for b in at.button if b.key == "posviz-slide-next"]
    step.click().run()
    assert tr("en", "slides.counter", k=2, n=n) in [m.value for m in at.main.markdown]
    link, src, _ = share_dialog(at)
    assert decoded(src) == link
    assert dict(parse_qsl(urlsplit(link).query)) == {"present": "true", "heads": "12", "tab": "row", "lang": "en"}


@pytest.mark.parametrize(
    ("link", "host"),
    [
        ("http://localhost:8501/rope?lang=zh", "localhost"),
        ("http://127.0.0.1:8501/alibi", "127.0.0.1"),
        ("http://[::1]:8501/", "::1"),
        ("http://192.168.1.20:8501/rope", None),
        ("https://posviz.school.example/rope", None),
        ("/rope?base=500000", None),
    ],
)
def test_a_link_that_names_this_computer_only_is_flagged(link, host):
    """A phone that scans ``localhost`` opens itself: such links are told apart from the network's addresses."""
    from posviz.ui import share

    assert share.local_host(link) == host


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_dialog_warns_when_its_link_names_this_computer_only(monkeypatch, lang):
    from posviz.ui import handout

    monkeypatch.setattr(handout, "page_address", lambda page: f"http://localhost:8501/{page}")
    at = open_page("alibi", query={"lang": lang})
    share_dialog(at)
    assert [w.value for w in at.warning] == [tr(lang, "share.local", host="localhost")]
