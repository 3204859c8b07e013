"""The HTML report in a real browser: Debian's headless Chromium driven by Selenium.

Opened from ``file://`` like a user would (no server): no console errors on any page,
every image and SVG loads with pixels, a header click sorts, a number click shows its
provenance, screenshots are not blank. ``POSHARNESS_SCREENSHOTS=DIR`` keeps the index
and MiniLM-board screenshots of a report of the committed leaderboards (docs/img/).
"""

from __future__ import annotations

import io
import os
import shutil
from pathlib import Path

import pytest

from posharness.report import build_report
from tests.unit.core.test_report import COMMITTED, ROOT, write_run

pytestmark = pytest.mark.browser

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
DRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
if not (Path(CHROMIUM).is_file() and Path(DRIVER).is_file()):
    pytest.skip(
        "no Chromium: apt-get install chromium chromium-driver (Debian), as .ci/run does",
        allow_module_level=True,
    )
webdriver = pytest.importorskip(
    "selenium.webdriver", reason="selenium is not installed: pip install -e '.[browser]'"
)

INIT, TRAINED = ROOT / "leaderboards/pe-zoo-mini-init.json", ROOT / "leaderboards/pe-zoo-mini.json"


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("figure-cache")


@pytest.fixture(scope="module")
def report(tmp_path_factory, cache) -> Path:
    """The committed leaderboards and their comparison, plus a small study whose results
    are at hand (so cell figures, summaries and McNemar tests are on the pages too)."""
    root = tmp_path_factory.mktemp("browser")
    a, b = write_run(root, "a", False), write_run(root, "b", True)
    out = root / "report"
    build_report([*COMMITTED, a, b], out, comparisons=[(INIT, TRAINED), (a, b)], cache_dir=cache)
    return out


@pytest.fixture(scope="module")
def browser():
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=1400,1000",
    ):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    driver.set_page_load_timeout(30)
    yield driver
    driver.quit()


def open_page(browser, page: Path) -> None:
    browser.get(page.as_uri())
    browser.get_log("browser")  # start each page with an empty log


def severe(browser) -> list[str]:
    return [e["message"] for e in browser.get_log("browser") if e["level"] == "SEVERE"]


def load_every_image(browser) -> list[str]:
    """Scroll each (lazy) image into view, wait for it; the sources without pixels."""
    from selenium.webdriver.support.ui import WebDriverWait

    images = browser.find_elements("tag name", "img")
    for image in images:
        browser.execute_script("arguments[0].scrollIntoView()", image)
        WebDriverWait(browser, 10).until(
            lambda _, image=image: browser.execute_script("return arguments[0].complete", image)
        )
    return [
        image.get_attribute("src")
        for image in images
        if not browser.execute_script("return arguments[0].naturalWidth > 0", image)
    ]


def column_values(table, index: int) -> list[str]:
    return [
        row.find_elements("tag name", "td")[index].get_attribute("data-v")
        for row in table.find_elements("css selector", "tbody tr")
    ]


def test_every_page_loads_without_console_errors_and_every_image_has_pixels(browser, report):
    pages = sorted(report.rglob("*.html"))
    assert len(pages) == 1 + len(COMMITTED) + 2 + 2
    images = 0
    for page in pages:
        open_page(browser, page)
        assert load_every_image(browser) == [], page
        images += len(browser.find_elements("tag name", "img"))
        assert severe(browser) == [], page
    assert images > 30  # drawn SVGs, the cells' PNGs and the summaries' all counted


def test_clicking_a_header_sorts_the_rows(browser, report):
    open_page(browser, report / "boards" / "a.html")
    table = browser.find_element("css selector", "#kind-attention-geometry table.sortable")
    header = table.find_element("css selector", 'th[data-type="num"] button')
    index = int(header.find_element("xpath", "..").get_attribute("data-col"))
    before = [float(v) for v in column_values(table, index)]
    header.click()
    first = [float(v) for v in column_values(table, index)]
    assert first == sorted(before, reverse=True) and first != before
    header.click()
    assert [float(v) for v in column_values(table, index)] == sorted(before)
    model = table.find_element("css selector", 'th[data-col="1"] button')
    model.click()
    assert column_values(table, 1) == sorted(column_values(table, 1))
    assert severe(browser) == []


def test_clicking_a_number_shows_its_provenance_and_escape_hides_it(browser, report):
    from selenium.webdriver.common.keys import Keys

    open_page(browser, report / "boards" / "a.html")
    panel = browser.find_element("id", "provenance")
    assert not panel.is_displayed()
    number = browser.find_element("css selector", "a.value")
    assert "f1aaaaaaaaaaaaaa" in number.get_attribute("title")  # what a hover shows
    number.click()
    assert panel.is_displayed()
    text = panel.text
    for field in ("f1aaaaaaaaaaaaaa", "PE card", "data hash", "reference corpus", "result JSON"):
        assert field in text, field
    assert panel.find_elements("css selector", "tr.current"), "the clicked metric is marked"
    browser.find_element("tag name", "body").send_keys(Keys.ESCAPE)
    assert not panel.is_displayed()
    open_page(browser, report / "boards" / "minilm-finetune.html")
    browser.find_element("css selector", "a.value").click()
    shown = browser.find_element("id", "provenance").text
    assert "not at hand" in shown or "result JSON" in shown  # results of a committed board
    assert severe(browser) == []


def test_comparison_marks_differences_that_are_not_significant(browser, report):
    open_page(browser, report / "compare" / "a--b.html")
    assert browser.find_elements("css selector", "tr.sig")
    not_significant = browser.find_elements("css selector", "tr.ns span.ns")
    assert not_significant and not_significant[0].text == "n.s."
    assert severe(browser) == []


def blank(png: bytes) -> bool:
    from PIL import Image, ImageStat

    image = Image.open(io.BytesIO(png)).convert("RGB")
    colours = image.getcolors(maxcolors=1 << 16)
    spread = max(ImageStat.Stat(image).stddev)
    return (colours is not None and len(colours) < 16) or spread < 5


def test_screenshots_of_the_committed_leaderboards_are_not_blank(
    browser, tmp_path, cache, monkeypatch
):
    monkeypatch.chdir(ROOT)  # the pages name the boards as a user in the checkout would
    out = tmp_path / "committed"
    boards = [p.relative_to(ROOT) for p in COMMITTED]
    pair = (INIT.relative_to(ROOT), TRAINED.relative_to(ROOT))
    build_report(boards, out, comparisons=[pair], cache_dir=cache)
    keep = os.environ.get("POSHARNESS_SCREENSHOTS")
    for page, name in (
        (out / "index.html", "report-index.png"),
        (out / "boards" / "minilm.html", "report-leaderboard.png"),
    ):
        open_page(browser, page)
        load_every_image(browser)
        browser.execute_script("window.scrollTo(0, 0)")
        height = browser.execute_script("return document.documentElement.scrollHeight")
        browser.set_window_size(1400, min(height, 1500 if "index" in name else 1100))
        png = browser.get_screenshot_as_png()
        browser.set_window_size(1400, 1000)
        assert not blank(png), name
        if keep:
            Path(keep, name).write_bytes(png)
