"""Start, restart and stop the course's JupyterHub on this machine (``make hub``; the tests of
``make hub-test`` and benchmarks/hub_load.py use :class:`Hub`).

    .venv/bin/python hub/hubctl.py run          # the proxy and the hub, until Ctrl-C
    .venv/bin/python hub/hubctl.py run --state /tmp/hub1 --password s3cret-pass
    .venv/bin/python hub/hubctl.py restart      # restart the hub of a running `run` (make hub-restart)

``run`` keeps the hub up: when the hub process ends on its own (killed, crashed), it is started
again (the learners' servers keep running); ``restart`` (SIGHUP to ``run``) restarts it on purpose.
A run's process ids and the folders it opened are in ``<state>/hubctl.json`` until it stops; a run
that was killed without stopping leaves that file, and the next ``run`` on the same state first ends
what is left (proxy, hub, learners' servers and kernels) and restores those folders.

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

import concurrent.futures
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
import account  # noqa: E402  (hub/account.py)

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
        self.password = password or self._kept_password()
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
        try:
            self.account = account.unprivileged_account()  # None: run as this (non-root) user
        except account.AccountError as exc:
            raise HubError(str(exc)) from None
        self.holder = account.new_holder()  # this hub in the record of opened folders

    def _kept_password(self) -> str:
        """The state's password (made once, kept in ``<state>/password``, readable by this user
        only), so that a second ``make hub`` on the same state keeps the learners' password."""
        path = self.state / "password"
        try:
            return path.read_text().strip()
        except OSError:
            password = secrets.token_urlsafe(12)
            try:
                self.state.mkdir(parents=True, exist_ok=True)
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                with os.fdopen(fd, "w") as f:
                    f.write(password + "\n")
            except OSError:
                pass
            return password

    @property
    def record(self) -> Path:
        """This run's process ids and opened folders, while it runs (see the module's docstring)."""
        return self.state / "hubctl.json"

    def _write_record(self) -> None:
        self.record.write_text(json.dumps({
            "hubctl": os.getpid(),
            "proxy": self.proxy.pid if self.proxy else None,
            "hub": self.hub.pid if self.hub else None,
            "holder": self.holder}, indent=1))

    def recover(self) -> list[str]:
        """What a run killed without stopping left on this state: end its proxy, hub, learners'
        servers and kernels, restore the folders it opened. Returns what was done (printed)."""
        import psutil

        try:
            old = json.loads(self.record.read_text())
        except (OSError, ValueError):
            return []
        if old.get("hubctl") and old["hubctl"] != os.getpid() and psutil.pid_exists(old["hubctl"]):
            try:
                alive = "hubctl" in " ".join(psutil.Process(old["hubctl"]).cmdline())
            except psutil.Error:
                alive = False
            if alive:
                raise HubError(f"a hub is already running on {self.state} (hubctl, process "
                               f"{old['hubctl']}): stop it first (Ctrl-C in its terminal), or give "
                               "this one another --state")
        done = []
        for what, marker in (("hub", "jupyterhub"), ("proxy", "configurable-http-proxy")):
            pid = old.get(what)
            try:
                proc = psutil.Process(pid) if pid else None
                if proc is not None and marker in " ".join(proc.cmdline()):
                    proc.kill()
                    done.append(f"ended the {what} left running (process {pid})")
            except psutil.Error:
                pass
        n = self._kill_leftovers()
        if n:
            done.append(f"ended {n} learners' server or kernel process(es) left running")
        if self.account is not None:
            for folder in account.let_go(old.get("holder")):
                done.append(f"restored {folder}'s permissions")
        self.record.unlink(missing_ok=True)
        return done

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
        """Root starting the hub for an unprivileged account: the folders on the way to the
        course, the state, the .venv, the Python it runs and the proxy get o+x while this hub runs
        (hub/account.py); the state folder becomes the account's."""
        paths = {ROOT, self.state, Path(self.python).parent, Path(os.path.realpath(self.python)).parent,
                 Path(os.path.realpath(PROXY)).parent}
        if self.course is not None:
            paths.add(Path(self.course).resolve())
        opened = account.open_folders(paths, self.holder)
        if opened:
            print("hubctl: so that user {} can reach the course, o+x (enter, not list) until the "
                  "hub stops: {}".format(self.account.pw_name, ", ".join(str(f) for f in opened)),
                  file=sys.stderr)
        for path in (self.state, *self.state.rglob("*")):
            os.chown(path, self.account.pw_uid, self.account.pw_gid, follow_symlinks=False)

    def _close_the_way(self) -> None:
        if self.account is not None:
            account.let_go(self.holder)

    def start(self) -> Hub:
        self.state.mkdir(parents=True, exist_ok=True)
        for line in self.recover():
            print(f"hubctl: the last run on {self.state} did not stop: {line}", file=sys.stderr)
        if self.account is not None:
            self._open_the_way()
        self._write_record()
        self._check_installed()
        self.public_port, self.hub_port, self.proxy_api_port = free_port(), free_port(), free_port()
        self.start_proxy()
        self._write_record()
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
        self._write_record()
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
                running = [u["name"] for u in self.api("GET", "/users") or [] if u.get("servers")]
                with concurrent.futures.ThreadPoolExecutor(max_workers=16) as pool:
                    list(pool.map(lambda name: self.api("DELETE", f"/users/{name}/server",
                                                        ok=(202, 204, 400)), running))
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
        self.record.unlink(missing_ok=True)
        if self.remove_state:
            shutil.rmtree(self.state, ignore_errors=True)

    def _kill_leftovers(self) -> int:
        """Single-user servers and kernels still running in this hub's homes, e.g. after the hub
        was killed (a kernel whose server is gone too: its connection file is in a home): ended
        by their process id. Returns how many."""
        import psutil

        homes = str(self.state / "homes") + os.sep
        n = 0
        for p in psutil.process_iter(["pid", "cwd", "cmdline"]):
            try:
                cmd = p.info["cmdline"] or []
                in_home = (p.info["cwd"] or "").startswith(homes) or any(homes in a for a in cmd)
                if in_home and any("jupyterhub-singleuser" in a or "ipykernel" in a for a in cmd):
                    for child in p.children(recursive=True):
                        child.kill()
                    p.kill()
                    n += 1
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                continue
        return n

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


if __name__ == "__main__":
    from run import main  # hub/run.py: the command line (run, restart)

    sys.exit(main())
