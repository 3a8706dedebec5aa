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

**Never as root.** Started by root (a CI container, a server's admin shell), hubctl runs the proxy,
the hub and so the learners' servers as an unprivileged account, ``$HUB_USER`` (default
``nobody``): the state folder is given to that account, and any folder on the way to the course,
its ``.venv`` or the Python it links to that others cannot enter (``/root`` when Python lives in
``/root/.pyenv``) gets the search bit for others (``o+x``: enter, not list) while the hub runs,
restored by :meth:`Hub.stop`. ``hub/jupyterhub_config.py`` refuses to run as root.
"""

from __future__ import annotations

import argparse
import json
import os
import pwd
import secrets
import shutil
import signal
import socket
import stat
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


def unprivileged_account() -> pwd.struct_passwd | None:
    """None when this process is not root; else the account the hub runs as (``$HUB_USER``,
    default ``nobody``)."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return None
    name = os.environ.get("HUB_USER") or "nobody"
    try:
        account = pwd.getpwnam(name)
    except KeyError:
        raise HubError(f"started as root, the hub runs as the unprivileged user {name!r}, which "
                       "does not exist: set HUB_USER to an existing user other than root, or "
                       "start it as a non-root user") from None
    if account.pw_uid == 0:
        raise HubError(f"HUB_USER={name!r} is root: name an unprivileged user (the hub and the "
                       "learners' servers never run as root)")
    return account


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
        self.account = unprivileged_account()  # None: run as this (non-root) process's user
        self._opened: list[tuple[Path, int]] = []  # folders given o+x, with their old modes

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
    def _as_account(self) -> dict:
        """Popen's arguments that run a process as the unprivileged account (nothing when this
        process is not root)."""
        if self.account is None:
            return {}
        return {"user": self.account.pw_uid, "group": self.account.pw_gid, "extra_groups": []}

    def _check_installed(self) -> None:
        if not PROXY.exists():
            raise HubError(f"{PROXY} is missing: run `npm ci` in {ROOT} (make hub does)")
        try:
            subprocess.run([self.python, "-c", "import jupyterhub"], check=True,
                           capture_output=True, **self._as_account())
        except subprocess.CalledProcessError as exc:
            who = f" as user {self.account.pw_name}" if self.account else ""
            raise HubError(f"{self.python} cannot import jupyterhub{who}: install "
                           f"requirements/hub.txt (make hub does){self._reach_hint()}") from exc

    def _reach_hint(self) -> str:
        if self.account is None:
            return ""
        return (f"; or user {self.account.pw_name} cannot read the course's files: they must be "
                "readable by others (a clone made with umask 022 is)")

    def _open_the_way(self) -> None:
        """Root starting the hub for an unprivileged account: every folder above the course, the
        state, the .venv and the Python it runs gets the search bit for others (o+x) where it
        lacks it, until stop() restores it; the state folder becomes the account's."""
        paths = {ROOT, self.state, Path(self.python).parent, Path(os.path.realpath(self.python)).parent,
                 Path(os.path.realpath(PROXY)).parent}
        if self.course is not None:
            paths.add(Path(self.course).resolve())
        folders = {a for p in paths for a in (p, *p.parents) if a.is_dir()}
        for folder in sorted(folders):
            mode = folder.stat().st_mode
            if not mode & stat.S_IXOTH:
                os.chmod(folder, stat.S_IMODE(mode) | stat.S_IXOTH)
                self._opened.append((folder, stat.S_IMODE(mode)))
        if self._opened:
            print("hubctl: so that user {} can reach the course, o+x (enter, not list) until the "
                  "hub stops: {}".format(self.account.pw_name, ", ".join(str(f) for f, _ in self._opened)),
                  file=sys.stderr)
        for path in (self.state, *self.state.rglob("*")):
            os.chown(path, self.account.pw_uid, self.account.pw_gid, follow_symlinks=False)

    def _close_the_way(self) -> None:
        for folder, mode in reversed(self._opened):
            try:
                os.chmod(folder, mode)
            except OSError:
                pass
        self._opened = []

    def start(self) -> Hub:
        self.state.mkdir(parents=True, exist_ok=True)
        if self.account is not None:
            self._open_the_way()
        self._check_installed()
        self.public_port, self.hub_port, self.proxy_api_port = free_port(), free_port(), free_port()
        self.start_proxy()
        self.start_hub()
        return self

    def start_proxy(self) -> None:
        env = dict(os.environ, CONFIGPROXY_AUTH_TOKEN=self.proxy_token)
        if self.account is not None:
            env.update(HOME=str(self.state), USER=self.account.pw_name, LOGNAME=self.account.pw_name)
        log = open(self.proxy_log, "ab")  # noqa: SIM115 - closed in stop()
        self._logs.append(log)
        self.proxy = subprocess.Popen(
            [str(PROXY), "--ip", "127.0.0.1", "--port", str(self.public_port),
             "--api-ip", "127.0.0.1", "--api-port", str(self.proxy_api_port),
             "--default-target", f"http://127.0.0.1:{self.hub_port}",
             "--error-target", f"http://127.0.0.1:{self.hub_port}/hub/error",
             "--log-level", "warn"],
            stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True,
            **self._as_account())
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
        if self.account is not None:
            env.update(HOME=str(self.state), USER=self.account.pw_name, LOGNAME=self.account.pw_name)
        log = open(self.hub_log, "ab")  # noqa: SIM115 - closed in stop()
        self._logs.append(log)
        self.hub = subprocess.Popen([self.python, "-m", "jupyterhub", "-f", str(CONFIG)],
                                    stdout=log, stderr=subprocess.STDOUT, env=env,
                                    cwd=self.state, start_new_session=True,
                                    **self._as_account())
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
        self._close_the_way()
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
