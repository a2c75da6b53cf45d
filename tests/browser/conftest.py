"""One JupyterLab server, one headless Chromium and one JupyterLab tab for the whole check.

They start once per session, and the tests skip, saying why, when Chromium or Playwright is
missing. JupyterLab serves a temporary copy of notebooks/ (it autosaves what it serves) with its
config, data, runtime, settings and workspace folders in the same temporary directory.
"""

from __future__ import annotations

import pytest
from labcheck import CHROMIUM_ARGS, Checker, find_chromium, start_lab, stop_lab


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


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "browser_notebook(path): the served notebook that a browser test checks"
    )


@pytest.fixture(scope="session")
def checker(request, browser, lab):
    """One JupyterLab tab for every notebook, which knows the order the tests will take."""
    order = [
        marker.args[0]
        for item in request.session.items
        if (marker := item.get_closest_marker("browser_notebook"))
    ]
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        yield Checker(context.new_page(), lab, order)
    finally:
        context.close()
