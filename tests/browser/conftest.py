"""One JupyterLab server and one headless Chromium for the whole browser check.

Both are started once per session and skipped, with the reason, when Chromium or Playwright is
missing. JupyterLab serves a temporary copy of notebooks/ (it autosaves what it serves) with its
config, data, runtime, settings and workspace folders in the same temporary directory.
"""

from __future__ import annotations

import pytest
from labcheck import CHROMIUM_ARGS, find_chromium, open_lab, start_lab, stop_lab


@pytest.fixture(scope="session")
def chromium_path() -> str:
    path, why = find_chromium()
    if path is None:
        pytest.skip(why)
    return path


@pytest.fixture(scope="session")
def lab(chromium_path, tmp_path_factory):
    server = start_lab(tmp_path_factory.mktemp("jupyterlab"))
    try:
        yield server
    finally:
        stop_lab(server)


@pytest.fixture(scope="session")
def browser(chromium_path):
    sync_api = pytest.importorskip(
        "playwright.sync_api",
        reason="playwright not installed: make test installs it (see README, Browser check)",
    )
    with sync_api.sync_playwright() as p:
        chromium = p.chromium.launch(
            executable_path=chromium_path, headless=True, args=CHROMIUM_ARGS
        )
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture(scope="session")
def page(browser, lab):
    """One JupyterLab tab for every notebook: it loads once, notebooks open and close in it."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    tab = context.new_page()
    open_lab(tab, lab)
    try:
        yield tab
    finally:
        context.close()
