"""Fixtures for the browser tests: a JupyterLab server and the system Chromium via playwright.

Without Chromium (or playwright) the tests are skipped with the reason; when the environment
variable ``CI`` is set a missing browser is a failure instead. ``BROWSER_NOTEBOOKS`` (a glob)
points the tests at other notebooks, e.g. a scratch one; ``BROWSER_DISABLE_EXTENSIONS``
(comma-separated) disables JupyterLab extensions, e.g. ``@jupyter-widgets/jupyterlab-manager`` to
see that the tests notice widgets that do not render. ``BROWSER_PYTHON`` names the python whose
JupyterLab (or Notebook 7) serves the notebooks, with its own kernel: e.g. ``.venv-binder/bin/python``
(make binder-browser: Binder's mixture of packages); this venv's python when unset.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import jlab  # noqa: E402

SHOTS = jlab.SHOTS

def _missing(reason: str):
    if os.environ.get("CI"):
        pytest.fail(f"CI is set but {reason}: the browser tests must run in CI "
                    "(.ci/run installs Chromium with apt-get when it runs as root)")
    pytest.skip(f"{reason}; install it with `apt-get install -y chromium` to run the browser tests")


@pytest.fixture(scope="session")
def chromium_path() -> str:
    path = jlab.find_chromium()
    if path is None:
        _missing(f"no Chromium found at {os.environ.get('CHROMIUM') or '/usr/bin/chromium'}")
    return path


#: The Chinese edition (test_zh_in_lab.py), served by the same JupyterLab as ``zh/``, as the
#: course ships it: its own folder, whose marker file makes the kernels there speak Chinese.
ZH = jlab.ROOT / "notebooks" / "zh"


@pytest.fixture(scope="session")
def lab():
    notebooks = jlab.course_notebooks()
    if not notebooks:
        pytest.skip("no notebooks/NN_*.ipynb to open yet")
    disabled = tuple(x for x in os.environ.get("BROWSER_DISABLE_EXTENSIONS", "").split(",") if x)
    subfolders = {"zh": ZH} if ZH.is_dir() else {}
    with jlab.LabServer(notebooks, disabled_extensions=disabled, subfolders=subfolders) as server:
        yield server


@pytest.fixture(scope="session")
def browser(chromium_path):
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("the Python package playwright is not installed (pip install -e '.[test]')")
    with sync_playwright() as pw:
        b = jlab.launch_browser(pw, chromium_path)
        try:
            yield b
        finally:
            b.close()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    setattr(item, f"rep_{rep.when}", rep)


@pytest.fixture(scope="session")
def lab_page(browser, lab):
    """One JupyterLab with every notebook open in its own tab and Run All already clicked in
    each, so that the kernels run side by side while the tests look at one tab after the other
    (one JupyterLab front end instead of three: two cores)."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = context.new_page()
    pg.console_errors = []
    pg.on("pageerror", lambda exc: pg.console_errors.append(str(exc)))
    try:
        notebooks = jlab.course_notebooks()
        for nb in notebooks:
            jlab.open_notebook(pg, lab, nb.name)
            jlab.start_run_all(pg)
        # Let every kernel finish before the first key press (a press queued behind a running
        # notebook waits for it).
        for nb in notebooks:
            jlab.activate(pg, nb.name)
            jlab.wait_run_all(pg)
        yield pg
    finally:
        context.close()
        lab.shutdown_kernels()


@pytest.fixture
def page(request, notebook, lab_page, lab):
    """The JupyterLab page; a screenshot is kept when the test fails."""
    pg = lab_page
    yield pg
    rep = getattr(request.node, "rep_call", None)
    if rep is not None and rep.failed:
        SHOTS.mkdir(parents=True, exist_ok=True)
        name = request.node.name.replace("/", "_").replace("[", "-").rstrip("]")
        shot = SHOTS / f"FAILED-{name}-{time.strftime('%Y%m%dT%H%M%S')}.png"
        try:
            pg.screenshot(path=str(shot))
            print(f"failure screenshot: {shot}")
        except Exception as exc:  # the page may be gone
            print(f"could not save a failure screenshot: {exc}")
        print("JupyterLab log (last lines):\n" + lab.log_tail())
    # The kernels stay up until the page is closed (an idle kernel costs no CPU; shutting one
    # down under an open notebook makes JupyterLab throw "Kernel is dead" into the page).
