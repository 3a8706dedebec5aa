"""The JupyterLab server and the browser the browser tests drive (part of ``jlab``).

``LabServer`` starts JupyterLab from this Python environment on 127.0.0.1 with a free port, a
random token and throw-away settings/workspace directories; ``launch_browser`` starts the system
Chromium through playwright. ``jlab`` re-exports every name.
"""

from __future__ import annotations

import glob
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "artifacts" / "screenshots"
CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
#: A widget's picture: an ipywidgets Image, or a LiveFigure's canvas (attention_kit.widgets).
PICTURE = ".jupyter-widgets img, .jupyter-widgets canvas.ak-live-figure"

# JupyterLab settings forced for the test server: no news / update pop-ups over the notebook.
SETTINGS_OVERRIDES = {
    "@jupyterlab/apputils-extension:notification": {
        "fetchNews": "false",
        "checkForUpdates": False,
        "doNotDisturbMode": True,
    },
}


def course_notebooks() -> list[Path]:
    """notebooks/NN_*.ipynb, or the notebooks matching the glob in ``$BROWSER_NOTEBOOKS``."""
    pattern = os.environ.get("BROWSER_NOTEBOOKS")
    if pattern:
        return sorted(Path(p) for p in glob.glob(pattern))
    return sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def find_chromium() -> str | None:
    """Path of the system Chromium, or None. ``$CHROMIUM``, when set, is the only candidate."""
    if os.environ.get("CHROMIUM"):
        path = os.environ["CHROMIUM"]
        return path if os.path.isfile(path) and os.access(path, os.X_OK) else None
    for path in CHROMIUM_CANDIDATES:
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return shutil.which("chromium")


def _server_port(runtime: Path, pid: int) -> int | None:
    """The port the server bound, from the jpserver-<pid>.json it writes once it listens."""
    try:
        return int(json.loads((runtime / f"jpserver-{pid}.json").read_text())["port"])
    except (OSError, ValueError, KeyError):  # not written yet, or half written
        return None


class LabServer:
    """A JupyterLab server on 127.0.0.1 serving a temporary copy of some notebooks (and of a
    whole ``folder``, if given, and of each of ``subfolders``, ``{name: folder}``, as ``name/``).

    Use as a context manager; the server is stopped (SIGTERM, then SIGKILL) and the temporary
    directory removed on exit, also when the body raised.
    """

    def __init__(self, notebooks: list[Path], *, python: str | None = None,
                 startup_timeout: float = 60.0, extra_args: tuple[str, ...] = (),
                 disabled_extensions: tuple[str, ...] = (), folder: Path | None = None,
                 subfolders: dict[str, Path] | None = None, app: str = "lab"):
        if app not in ("lab", "notebook"):
            raise ValueError(f"app = {app!r}: 'lab' (JupyterLab) or 'notebook' (Jupyter Notebook 7)")
        self.app = app  # which front end the server serves
        self.sources = [Path(p) for p in notebooks]
        self.folder = None if folder is None else Path(folder)  # served whole (make student's output)
        self.subfolders = {name: Path(f) for name, f in (subfolders or {}).items()}  # e.g. zh/
        # the python whose JupyterLab serves (and whose kernel runs): $BROWSER_PYTHON if set
        self.python = python or os.environ.get("BROWSER_PYTHON") or sys.executable
        self.startup_timeout = startup_timeout
        self.extra_args = list(extra_args)
        self.disabled_extensions = list(disabled_extensions)
        self.token = secrets.token_hex(16)
        # the server picks its own port (port 0) and says which in its runtime file: a port picked
        # here and closed again could be taken by another process before the server binds it
        self.port: int | None = None
        self.base = ""
        self.tmp: Path | None = None
        self.root: Path | None = None
        self.proc: subprocess.Popen | None = None
        self.log_path: Path | None = None

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> LabServer:
        self.tmp = Path(tempfile.mkdtemp(prefix="attn-lab-"))
        self.root = self.tmp / "notebooks"
        self.root.mkdir()
        if self.folder is not None:  # a whole folder, e.g. the student edition with its package
            shutil.copytree(self.folder, self.root, dirs_exist_ok=True)
        for nb in self.sources:  # a COPY: the tests never touch the committed files
            shutil.copy2(nb, self.root / nb.name)
        for name, folder in self.subfolders.items():
            shutil.copytree(folder, self.root / name, dirs_exist_ok=True)
        app_settings = self.tmp / "app-settings"
        app_settings.mkdir()
        (app_settings / "overrides.json").write_text(json.dumps(SETTINGS_OVERRIDES, indent=2))
        env = dict(os.environ)
        for var, sub in (("JUPYTER_CONFIG_DIR", "config"), ("JUPYTER_RUNTIME_DIR", "runtime"),
                         ("JUPYTER_DATA_DIR", "data"), ("IPYTHONDIR", "ipython")):
            (self.tmp / sub).mkdir()
            env[var] = str(self.tmp / sub)
        if self.disabled_extensions:  # what `jupyter labextension disable` writes
            (self.tmp / "config" / "labconfig").mkdir()
            (self.tmp / "config" / "labconfig" / "page_config.json").write_text(json.dumps(
                {"disabledExtensions": {name: True for name in self.disabled_extensions}}))
        env.pop("MPLBACKEND", None)  # the kernel uses the inline backend, as for a learner
        env["JUPYTER_PLATFORM_DIRS"] = "1"
        # Notebook 7 is a JupyterLab-based app of its own (JupyterNotebookApp), with the same
        # settings directories but not LabApp's update check or extension manager
        cls = "LabApp" if self.app == "lab" else "JupyterNotebookApp"
        cmd = [
            self.python, "-m", "jupyterlab" if self.app == "lab" else "notebook",
            "--no-browser",
            "--ServerApp.ip=127.0.0.1",
            "--ServerApp.port=0",
            "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={self.token}",
            f"--ServerApp.root_dir={self.root}",
            "--ServerApp.open_browser=False",
            "--ServerApp.allow_remote_access=False",
            "--ServerApp.terminals_enabled=False",
            f"--{cls}.app_settings_dir={app_settings}",
            f"--{cls}.user_settings_dir={self.tmp / 'user-settings'}",
            f"--{cls}.workspaces_dir={self.tmp / 'workspaces'}",
            f"--{cls}.expose_app_in_browser=True",
        ]
        if self.app == "lab":
            cmd += ["--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
                    "--LabApp.extension_manager=readonly"]
        # kernels on socket files in the runtime folder, not TCP ports another process can take
        # first (attention_kit/grading/sockets.py); TCP where that path is too long for a socket
        if os.name == "posix" and len(str(self.tmp / "runtime")) + len("/kernel--ipc-9") + 36 <= 103:
            cmd.append("--KernelManager.transport=ipc")
        if hasattr(os, "geteuid") and os.geteuid() == 0:  # CI runs as root
            cmd.append("--ServerApp.allow_root=True")
        cmd += self.extra_args
        self.log_path = self.tmp / "server.log"
        log = open(self.log_path, "wb")  # noqa: SIM115 - closed in stop()
        self._log = log
        self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env,
                                     cwd=self.tmp, start_new_session=True)
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"JupyterLab exited early:\n{self.log_tail()}")
            if self.port is None:
                self.port = _server_port(self.tmp / "runtime", self.proc.pid)
                if self.port is None:
                    time.sleep(0.25)
                    continue
                self.base = f"http://127.0.0.1:{self.port}"
            try:
                with urllib.request.urlopen(self.api("status"), timeout=2) as r:
                    if r.status == 200:
                        return self
            except OSError:
                time.sleep(0.25)
        raise RuntimeError(f"JupyterLab did not answer in {self.startup_timeout:.0f} s:\n"
                           f"{self.log_tail()}")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            try:  # the whole session: the server and the kernels it started
                os.killpg(self.proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=5)
        if getattr(self, "_log", None) is not None:
            self._log.close()
        if self.tmp is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)

    def __enter__(self) -> LabServer:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- addresses -------------------------------------------------------------------------
    def api(self, path: str) -> str:
        return f"{self.base}/api/{path}?token={self.token}"

    def shutdown_kernels(self, path: str | None = None) -> None:
        """Stop the kernels of the notebook ``path`` (every kernel when None): two cores, and a
        left-over kernel slows the next notebook down. A server that does not answer is left as it is."""
        try:
            with urllib.request.urlopen(self.api("sessions"), timeout=5) as r:
                sessions = json.load(r)
            for s in sessions:
                if path is None or s.get("path") == path:
                    req = urllib.request.Request(self.api(f"sessions/{s['id']}"), method="DELETE")
                    urllib.request.urlopen(req, timeout=10).close()
        except OSError:
            pass

    def lab_url(self, notebook: str) -> str:
        if self.app == "notebook":  # Notebook 7: one notebook per browser tab
            return f"{self.base}/notebooks/{notebook}?token={self.token}"
        # ?reset: start from an empty workspace (no layout restored from an earlier test)
        return f"{self.base}/lab/tree/{notebook}?token={self.token}&reset"

    def log_tail(self, n: int = 40) -> str:
        if self.log_path is None or not self.log_path.exists():
            return ""
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-n:])


def launch_browser(playwright, executable: str):
    """The system Chromium, headless; never a downloaded browser build."""
    return playwright.chromium.launch(executable_path=executable, headless=True,
                                      args=CHROMIUM_ARGS)
