"""Fixtures of the tests against a real JupyterHub (``make hub-test``; marked ``hub``, so that
``make unit`` and ``make check`` leave them out).

One hub for the session (hub/hubctl.py: configurable-http-proxy and JupyterHub on 127.0.0.1, the
learners' servers in this venv, state in a temporary folder) and one headless Chromium. Without
the hub's packages, the proxy or Chromium the tests are skipped with the reason; with ``CI`` set,
they fail instead.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "hub"))
sys.path.insert(0, str(ROOT / "tests" / "browser"))
import hubctl  # noqa: E402
import jlab  # noqa: E402


def _missing(reason: str):
    if os.environ.get("CI"):
        pytest.fail(f"CI is set but {reason}: make hub-test installs what the hub needs")
    pytest.skip(f"{reason} (make hub-test installs it)")


def hub_state_dir(name: str):
    """A fresh folder for a hub's state, outside pytest's own temporary folder: pytest makes
    /tmp/pytest-of-<user> private again (mode 700) whenever a pytest session starts, which would
    shut the hub's unprivileged user (hubctl.py, started by root) out of its state mid-test."""
    import shutil
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix=f"attn-{name}-"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def state_dir():
    yield from hub_state_dir("hub-test")


@pytest.fixture(scope="session")
def hub():
    if not hubctl.PROXY.exists():
        _missing(f"no configurable-http-proxy at {hubctl.PROXY}")
    try:
        import jupyterhub  # noqa: F401
    except ImportError:
        _missing("jupyterhub is not installed (requirements/hub.txt)")
    for folder in hub_state_dir("hub"):
        with hubctl.Hub(folder / "state", expose_app=True) as h:
            yield h


@pytest.fixture(scope="session")
def browser():
    chromium = jlab.find_chromium()
    if chromium is None:
        _missing("no Chromium at /usr/bin/chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = jlab.launch_browser(pw, chromium)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture
def context(browser, request):
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    yield ctx
    rep = getattr(request.node, "rep_call", None)
    if rep is not None and rep.failed:
        jlab.SHOTS.mkdir(parents=True, exist_ok=True)
        for i, pg in enumerate(ctx.pages):
            try:
                pg.screenshot(path=str(jlab.SHOTS / f"FAILED-hub-{request.node.name}-{i}.png"))
            except Exception:  # noqa: BLE001 - the page may be gone
                pass
    ctx.close()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    setattr(item, f"rep_{rep.when}", rep)
