"""A learner's page on the hub: log in through the hub's form; the learner's server as the browser
helpers of tests/browser/jlab.py see a server."""

from __future__ import annotations

import hubctl


class UserServer:
    """What the browser helpers (tests/browser/jlab.py) need of a server: its address and a
    notebook's JupyterLab address; here a learner's single-user server behind the hub's proxy."""

    def __init__(self, hub: hubctl.Hub, name: str):
        self.hub, self.name = hub, name
        self.base = hub.user_url(name)

    def lab_url(self, notebook: str) -> str:
        return f"{self.base}/lab/tree/{notebook}?reset"


def log_in(page, hub: hubctl.Hub, name: str) -> UserServer:
    """Log ``name`` in through the hub's login form, as a learner does; wait for their JupyterLab."""
    page.goto(f"{hub.url}/hub/login")
    page.fill("input[name=username]", name)
    page.fill("input[name=password]", hub.password)
    page.click("input[type=submit], button[type=submit]")
    page.wait_for_url(f"{hub.user_url(name)}/**", timeout=180_000)
    page.wait_for_function("() => !!(window.jupyterapp && window.jupyterapp.shell)", timeout=120_000)
    return UserServer(hub, name)
