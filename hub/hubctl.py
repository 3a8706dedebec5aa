"""Start, restart and stop the course's JupyterHub on this machine (``make hub``; the tests of
``make hub-test`` and benchmarks/hub_load.py use :class:`Hub`).

    .venv/bin/python hub/hubctl.py run          # the proxy and the hub, until Ctrl-C
    .venv/bin/python hub/hubctl.py run --state /tmp/hub1 --password s3cret-pass

Two processes, each on 127.0.0.1 on a free port: configurable-http-proxy (``node_modules/``,
``npm ci`` installs it from package-lock.json) and JupyterHub with ``hub/jupyterhub_config.py``.
The proxy is started here, not by the hub, so the hub can be restarted (``Hub.restart_hub``)
while learners work: the proxy keeps their routes and their single-user servers keep running.

:class:`Hub` also talks to the hub's REST API as a service with an admin token (made here, given
to the hub in ``$HUB_API_TOKEN``): add a learner, start and stop their server, make a token for
them. Only the standard library and psutil (a dependency of ipykernel).
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "hub" / "jupyterhub_config.py"
PROXY = ROOT / "node_modules" / ".bin" / "configurable-http-proxy"
DEFAULT_STATE = ROOT / ".hub"


def free_port() -> int:
    """A port on 127.0.0.1 free now (the OS's pick; closed again, so another process could take
    it before the proxy or the hub binds it: each start checks that its process is the one
    answering)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class HubError(RuntimeError):
    pass


class Hub:
    """The proxy and the hub, with their state (sqlite, cookie secret, learners' homes) in
    ``state``. A context manager: on exit every learner's server is stopped, then the hub, then
    the proxy (the state folder is kept unless ``remove_state``)."""

    def __init__(self, state: Path | str = DEFAULT_STATE, *, password: str | None = None,
                 python: str | None = None, course: Path | None = None,
                 remove_state: bool = False, startup_timeout: float = 90.0,
                 expose_app: bool = False):
        self.state = Path(state).resolve()
        self.password = password or secrets.token_urlsafe(12)
        self.python = python or sys.executable
        self.course = course
        self.remove_state = remove_state
        self.expose_app = expose_app  # window.jupyterapp in the learners' JupyterLab (tests)
        self.startup_timeout = startup_timeout
        self.proxy_token = secrets.token_hex(32)
        self.api_token = secrets.token_hex(32)
        self.public_port = self.hub_port = self.proxy_api_port = None
        self.proxy: subprocess.Popen | None = None
        self.hub: subprocess.Popen | None = None
        self._logs: list = []

    # -- addresses -----------------------------------------------------------------------------
    @property
    def url(self) -> str:
        """What a learner's browser opens: the proxy's public address."""
        return f"http://127.0.0.1:{self.public_port}"

    def user_url(self, name: str) -> str:
        return f"{self.url}/user/{name}"

    @property
    def hub_log(self) -> Path:
        return self.state / "hub.log"

    @property
    def proxy_log(self) -> Path:
        return self.state / "proxy.log"

    # -- lifecycle -----------------------------------------------------------------------------
    def _check_installed(self) -> None:
        if not PROXY.exists():
            raise HubError(f"{PROXY} is missing: run `npm ci` in {ROOT} (make hub does)")
        try:
            subprocess.run([self.python, "-c", "import jupyterhub"], check=True,
                           capture_output=True)
        except subprocess.CalledProcessError as exc:
            raise HubError(f"{self.python} cannot import jupyterhub: install requirements/hub.txt "
                           "(make hub does)") from exc

    def start(self) -> Hub:
        self._check_installed()
        self.state.mkdir(parents=True, exist_ok=True)
        self.public_port, self.hub_port, self.proxy_api_port = free_port(), free_port(), free_port()
        self.start_proxy()
        self.start_hub()
        return self

    def start_proxy(self) -> None:
        env = dict(os.environ, CONFIGPROXY_AUTH_TOKEN=self.proxy_token)
        log = open(self.proxy_log, "ab")  # noqa: SIM115 - closed in stop()
        self._logs.append(log)
        self.proxy = subprocess.Popen(
            [str(PROXY), "--ip", "127.0.0.1", "--port", str(self.public_port),
             "--api-ip", "127.0.0.1", "--api-port", str(self.proxy_api_port),
             "--default-target", f"http://127.0.0.1:{self.hub_port}",
             "--error-target", f"http://127.0.0.1:{self.hub_port}/hub/error",
             "--log-level", "warn"],
            stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        self._wait(lambda: self._get(f"http://127.0.0.1:{self.proxy_api_port}/api/routes",
                                     token=self.proxy_token) is not None,
                   self.proxy, self.proxy_log, "the proxy")

    def start_hub(self) -> None:
        env = dict(os.environ)
        env.pop("MPLBACKEND", None)
        env.update(CONFIGPROXY_AUTH_TOKEN=self.proxy_token, HUB_API_TOKEN=self.api_token,
                   HUB_STATE=str(self.state), HUB_PASSWORD=self.password,
                   HUB_PUBLIC_PORT=str(self.public_port), HUB_PORT=str(self.hub_port),
                   HUB_PROXY_API_PORT=str(self.proxy_api_port))
        if self.expose_app:
            env["HUB_EXPOSE_APP"] = "1"
        if self.course is not None:
            env["HUB_COURSE"] = str(Path(self.course).resolve())
        log = open(self.hub_log, "ab")  # noqa: SIM115 - closed in stop()
        self._logs.append(log)
        self.hub = subprocess.Popen([self.python, "-m", "jupyterhub", "-f", str(CONFIG)],
                                    stdout=log, stderr=subprocess.STDOUT, env=env,
                                    cwd=self.state, start_new_session=True)
        self._wait(lambda: self._get(f"{self.url}/hub/api/", token=self.api_token) is not None,
                   self.hub, self.hub_log, "JupyterHub")

    def _wait(self, ready, proc, log: Path, what: str) -> None:
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise HubError(f"{what} exited with status {proc.returncode}:\n{tail(log)}")
            if ready():
                return
            time.sleep(0.25)
        raise HubError(f"{what} did not answer in {self.startup_timeout:.0f} s:\n{tail(log)}")

    def stop_hub(self) -> None:
        """Stop the hub alone (SIGTERM, as systemd does): the proxy and the learners' servers
        keep running (``cleanup_servers = False``)."""
        if self.hub is not None and self.hub.poll() is None:
            self.hub.send_signal(signal.SIGTERM)
            try:
                self.hub.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.hub.kill()
                self.hub.wait(timeout=10)
        self.hub = None

    def restart_hub(self) -> None:
        self.stop_hub()
        self.start_hub()

    def stop(self) -> None:
        if self.hub is not None and self.hub.poll() is None:
            try:
                for user in self.api("GET", "/users") or []:
                    if user.get("servers"):
                        self.api("DELETE", f"/users/{user['name']}/server", ok=(202, 204, 400))
                deadline = time.monotonic() + 30
                while time.monotonic() < deadline and any(
                        u.get("servers") for u in self.api("GET", "/users") or []):
                    time.sleep(0.5)
            except (HubError, OSError) as exc:
                print(f"hubctl: could not stop the learners' servers through the hub: {exc}",
                      file=sys.stderr)
        self.stop_hub()
        self._kill_leftovers()
        if self.proxy is not None and self.proxy.poll() is None:
            self.proxy.terminate()
            try:
                self.proxy.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proxy.kill()
        self.proxy = None
        for log in self._logs:
            log.close()
        self._logs = []
        if self.remove_state:
            shutil.rmtree(self.state, ignore_errors=True)

    def _kill_leftovers(self) -> None:
        """Single-user servers (and their kernels) still running in this hub's homes, e.g. after
        the hub was killed: ended by their process id."""
        import psutil

        homes = str(self.state / "homes") + os.sep
        for p in psutil.process_iter(["pid", "cwd", "cmdline"]):
            try:
                if (p.info["cwd"] or "").startswith(homes) or (p.info["cwd"] or "") + os.sep == homes:
                    if any("jupyterhub-singleuser" in a for a in p.info["cmdline"] or []):
                        for child in p.children(recursive=True):
                            child.kill()
                        p.kill()
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                continue

    def __enter__(self) -> Hub:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- the REST API --------------------------------------------------------------------------
    def _get(self, url: str, token: str):
        try:
            req = urllib.request.Request(url, headers={"Authorization": f"token {token}"})
            with urllib.request.urlopen(req, timeout=5) as r:
                return json.load(r) if r.status == 200 else None
        except (OSError, ValueError):
            return None

    def api(self, method: str, path: str, body=None, *, ok=(200, 201, 202, 204)):
        """The hub's REST API (``/hub/api`` + ``path``) as the admin service; the JSON reply."""
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(f"{self.url}/hub/api{path}", data=data, method=method,
                                     headers={"Authorization": f"token {self.api_token}",
                                              "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                raw = r.read()
                status = r.status
        except urllib.error.HTTPError as exc:
            raw, status = exc.read(), exc.code
        if status not in ok:
            raise HubError(f"{method} /hub/api{path}: HTTP {status}: {raw[:300]!r}")
        return json.loads(raw) if raw.strip() else None

    def add_learner(self, name: str) -> str:
        """Create learner ``name`` (if new) and return an API token of theirs."""
        self.api("POST", f"/users/{name}", ok=(201, 409))
        return self.api("POST", f"/users/{name}/tokens",
                        {"note": "hubctl", "expires_in": 6 * 3600})["token"]

    def start_server(self, name: str, timeout: float = 180.0) -> str:
        """Start learner ``name``'s single-user server and wait until it answers; its URL."""
        self.api("POST", f"/users/{name}/server", ok=(201, 202, 400))  # 400: already running
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            user = self.api("GET", f"/users/{name}")
            server = (user.get("servers") or {}).get("")
            if server and server.get("ready"):
                return self.user_url(name)
            time.sleep(0.5)
        raise HubError(f"{name}'s server did not start in {timeout:.0f} s:\n{tail(self.hub_log)}")

    def home(self, name: str) -> Path:
        return self.state / "homes" / name


def tail(path: Path, n: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-n:])
    except OSError:
        return "(no log)"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    run = sub.add_parser("run", help="start the proxy and the hub, until Ctrl-C")
    run.add_argument("--state", default=str(DEFAULT_STATE), help="state folder (default .hub/)")
    run.add_argument("--password", default=os.environ.get("HUB_PASSWORD"),
                     help="the learners' shared password (default $HUB_PASSWORD or a random one)")
    run.add_argument("--course", default=None,
                     help="the folder copied into each new learner's home (default notebooks/; "
                          "student/ after make student)")
    args = ap.parse_args(argv)
    hub = Hub(args.state, password=args.password, course=args.course)
    try:
        hub.start()
    except HubError as exc:
        hub.stop()
        print(f"make hub: {exc}", file=sys.stderr)
        return 1
    print(f"JupyterHub is up at {hub.url}/ (127.0.0.1 only)\n"
          f"  log in with any name and the password {hub.password}\n"
          f"  state and logs: {hub.state} (hub.log, proxy.log, homes/)\n"
          f"  Ctrl-C stops the learners' servers, the hub and the proxy", flush=True)
    try:
        while hub.hub.poll() is None and hub.proxy.poll() is None:
            time.sleep(1)
        print(f"make hub: a process ended:\n{tail(hub.hub_log)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0
    finally:
        hub.stop()


if __name__ == "__main__":
    sys.exit(main())
