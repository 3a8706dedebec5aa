"""``make hub`` as a lecturer runs it (``hub/hubctl.py run``), not through the test fixture:

* the hub process ends on its own (killed, as a crash or an admin's ``kill`` ends it): ``run``
  starts it again and a learner's server keeps running; ``make hub-restart`` (``hubctl.py
  restart``, SIGHUP) restarts it on purpose; Ctrl-C then stops everything, once, and a second
  Ctrl-C meanwhile does not leave anything running;
* a run killed without stopping (SIGKILL: nothing of it could clean up): the next run on the same
  state ends the proxy, the hub, the learner's server and kernel it left, and restores the
  folders the first run opened for the hub's unprivileged user (as root);
* the learners' password is kept in the state: a second run gives the same one.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path

import psutil
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "hub"))
import hubctl  # noqa: E402

pytestmark = pytest.mark.hub


class Run:
    """``hubctl.py run`` in a process of its own, its output collected line by line."""

    def __init__(self, state: Path):
        self.proc = subprocess.Popen([sys.executable, str(ROOT / "hub" / "hubctl.py"), "run",
                                      "--state", str(state)], stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True, start_new_session=True)
        self.lines: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))

    def up_with_learner(self, state: Path, name: str) -> tuple[str, str, dict, int]:
        """Wait until the hub is up, log ``name`` in: the hub's address, the password, this run's
        record and the learner's server's process id."""
        up = self.wait_for("JupyterHub is up at")
        url = up.split(" at ", 1)[1].split("/ ", 1)[0]
        password = self.wait_for("the password").rsplit(" ", 1)[1]
        record = json.loads((state / "hubctl.json").read_text())
        return url, password, record, _learner_server(state, url, password, name)

    def wait_for(self, text: str, timeout: float = 180.0, after: int = 0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in self.lines[after:]:
                if text in line:
                    return line
            if self.proc.poll() is not None and not any(text in ln for ln in self.lines[after:]):
                time.sleep(0.5)
                break
            time.sleep(0.2)
        raise AssertionError(f"no {text!r} from hubctl run:\n" + "\n".join(self.lines[-40:]))


def _alive(pid: int | None) -> bool:
    try:
        return pid is not None and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _learner_server(state: Path, url: str, password: str, name: str) -> int:
    """Log ``name`` in with the shared password (the hub's login form, as a browser posts it) and
    wait for their server; its process id."""
    import http.cookiejar

    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    opener.open(f"{url}/hub/login", timeout=60).read()
    xsrf = next((c.value for c in jar if c.name == "_xsrf"), "")
    data = urllib.parse.urlencode({"username": name, "password": password, "_xsrf": xsrf}).encode()
    opener.open(urllib.request.Request(f"{url}/hub/login?next=", data=data), timeout=180).read()
    home = str(state / "homes" / name)
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        for p in psutil.process_iter(["cmdline", "cwd"]):
            try:
                if "jupyterhub-singleuser" in " ".join(p.info["cmdline"] or []) and \
                        (p.info["cwd"] or "").startswith(home):
                    return p.pid
            except psutil.Error:
                continue
        time.sleep(0.5)
    raise AssertionError(f"{name}'s server did not start")



def test_run_restarts_a_hub_that_ended_and_stops_once(state_dir):
    if not hubctl.PROXY.exists():
        pytest.skip("no configurable-http-proxy (make hub-install)")
    state = state_dir / "state"
    run = Run(state)
    try:
        url, password, record, server = run.up_with_learner(state, "ada")

        # the hub ends on its own: run starts it again, ada's server keeps running
        n = len(run.lines)
        os.kill(record["hub"], signal.SIGKILL)
        run.wait_for("the hub ended", after=n)
        run.wait_for("the hub is back", after=n)
        assert _alive(server), "ada's server ended with the hub"
        urllib.request.urlopen(f"{url}/hub/login", timeout=60).read()

        # make hub-restart
        n = len(run.lines)
        out = subprocess.run([sys.executable, str(ROOT / "hub" / "hubctl.py"), "restart",
                              "--state", str(state)], capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        run.wait_for("restarting the hub", after=n)
        run.wait_for("the hub is back", after=n)
        assert _alive(server)
        new_hub = json.loads((state / "hubctl.json").read_text())["hub"]
        assert new_hub != record["hub"] and _alive(new_hub)

        # Ctrl-C twice, as an impatient lecturer does: everything stops all the same
        n = len(run.lines)
        os.killpg(run.proc.pid, signal.SIGINT)
        run.wait_for("stopping the learners' servers", after=n, timeout=60)
        os.killpg(run.proc.pid, signal.SIGINT)
        assert run.proc.wait(timeout=120) == 0, "\n".join(run.lines[-30:])
        run.wait_for("make hub: stopped", after=n, timeout=10)
        for pid in (new_hub, record["proxy"], server):
            assert not _alive(pid), f"process {pid} still running after Ctrl-C"
        assert not (state / "hubctl.json").exists()
    finally:
        if run.proc.poll() is None:
            os.killpg(run.proc.pid, signal.SIGKILL)
        hubctl.Hub(state).recover()


def test_the_next_run_cleans_up_after_a_killed_one(state_dir):
    if not hubctl.PROXY.exists():
        pytest.skip("no configurable-http-proxy (make hub-install)")
    base = state_dir
    closed = base / "closed"  # a folder others cannot enter, on the way to the state (as /root)
    closed.mkdir(mode=0o700)
    os.chmod(closed, 0o700)
    state = closed / "state"
    first = Run(state)
    try:
        _url, password, record, server = first.up_with_learner(state, "bo")
        os.killpg(first.proc.pid, signal.SIGKILL)  # nothing of hubctl can clean up
        first.proc.wait(timeout=30)
        assert _alive(record["hub"]) and _alive(record["proxy"]) and _alive(server)
        if hubctl.account.unprivileged_account() is not None:
            assert os.stat(closed).st_mode & 0o001, "the first run did not open the folder"

        second = Run(state)
        try:
            second.wait_for("JupyterHub is up at")
            said = "\n".join(second.lines)
            assert "did not stop: ended the hub left running" in said, said
            assert "did not stop: ended the proxy left running" in said, said
            for pid in (record["hub"], record["proxy"], server):
                assert not _alive(pid), f"process {pid} of the killed run still running"
            assert f"the password {password}" in said  # the learners' password is kept
        finally:
            os.killpg(second.proc.pid, signal.SIGINT)
            assert second.proc.wait(timeout=120) == 0, "\n".join(second.lines[-30:])
        assert os.stat(closed).st_mode & 0o777 == 0o700, oct(os.stat(closed).st_mode)
    finally:
        if first.proc.poll() is None:
            os.killpg(first.proc.pid, signal.SIGKILL)
        hubctl.Hub(state).recover()
