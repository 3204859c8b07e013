"""A study's tables page in a real browser (headless Chromium, from ``file://``): it loads
without console errors, the Fig. 2 PNG has pixels, published rows are drawn in italics,
the paired tests open on a click, and the index's link leads to the table."""

from __future__ import annotations

from pathlib import Path

import pytest

from posharness.report import build_report
from tests.browser.test_report_browser import (  # the same driver and helpers
    browser,  # noqa: F401 - a fixture
    load_every_image,
    open_page,
    severe,
)
from tests.unit.core.test_report import write_run
from tests.unit.report.test_paper_tables import paper_table

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("paper-browser")
    out = root / "report"
    build_report(
        [write_run(root, "a", False)],
        out,
        cache_dir=root / "cache",
        paper_tables=[paper_table(root)],
        title="study chen2023-mini",
    )
    return out


def test_tables_page_shows_published_rows_apart_and_opens_its_tests(browser, report):  # noqa: F811
    open_page(browser, report / "tables.html")
    assert load_every_image(browser) == []
    published = browser.find_elements("css selector", "table.paper tr.published td")
    ours = browser.find_elements("css selector", "table.paper tbody.ours td")
    assert published and ours
    style = "return getComputedStyle(arguments[0]).fontStyle"
    assert {browser.execute_script(style, cell) for cell in published} == {"italic"}
    assert {browser.execute_script(style, cell) for cell in ours} == {"normal"}
    tests = browser.find_element("css selector", "details.paired-tests")
    assert not tests.find_element("css selector", "table.tests").is_displayed()
    tests.find_element("tag name", "summary").click()
    assert tests.find_element("css selector", "table.tests").is_displayed()
    assert "McNemar exact, n=872" in tests.text
    assert severe(browser) == []


def test_index_link_leads_to_the_table(browser, report):  # noqa: F811
    open_page(browser, report / "index.html")
    assert browser.find_element("tag name", "h1").text == "study chen2023-mini"
    link = 'section.paper-callout a[href$="#chen2023-table1"]'
    browser.find_element("css selector", link).click()
    assert browser.current_url.endswith("tables.html#chen2023-table1")
    assert browser.find_element("id", "chen2023-table1").is_displayed()
    assert severe(browser) == []
