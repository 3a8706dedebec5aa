"""JupyterHub configuration of ``make hub`` (hub/hubctl.py starts the proxy and the hub with it).

A real JupyterHub on this machine, for trying the course as a class meets it and for the tests of
``make hub-test`` and the load test (benchmarks/hub_load.py); not a production deployment (docs/
teaching.md, "On a JupyterHub", has The Littlest JupyterHub and Zero to JupyterHub):

* every address on 127.0.0.1: the proxy's public port (what a learner's browser opens), its REST
  API, the hub itself; the ports come from hubctl.py (free ports it found);
* the proxy is external (configurable-http-proxy from npm in node_modules/, started by hubctl.py,
  not by the hub), so that the hub can be restarted while learners work: the proxy keeps routing
  to the single-user servers, and ``cleanup_servers = False`` leaves those running;
* SharedPasswordAuthenticator (JupyterHub >= 5.3; it replaces DummyAuthenticator's deprecated
  password): any user name, one shared password (``$HUB_PASSWORD``);
* SimpleLocalProcessSpawner: each learner's single-user server is a local process, without a
  system user, running as the hub's own user, which is never root (hubctl.py, started by root,
  runs the hub as ``$HUB_USER``, default ``nobody``; this file refuses root); the learner's home is ``<state>/homes/<name>``, into which the course's notebooks
  are copied once, before the first start (a learner's work is never overwritten);
* the single-user server is the course's own ``.venv`` (``jupyterhub-singleuser`` from the hub's
  lock, requirements/hub.txt, beside the course's lock), with attention_kit's server extension
  enabled in it (``make install``), opening JupyterLab.

The hub's state (its sqlite database, cookie secret, the learners' homes) is in ``$HUB_STATE``
(default ``.hub/`` in the repository, git-ignored).
"""

import os
import shutil
import sys
from pathlib import Path

c = get_config()  # noqa: F821 - JupyterHub's config loader provides it

if hasattr(os, "geteuid") and os.geteuid() == 0:
    # SimpleLocalProcessSpawner runs every learner's server as the hub's own user: as root, a
    # learner's notebook could do anything to the machine. hubctl.py, started by root, runs the hub
    # as $HUB_USER (default nobody).
    raise SystemExit("hub/jupyterhub_config.py: this hub does not run as root; start it with "
                     "`make hub` (hub/hubctl.py runs it as an unprivileged user, $HUB_USER, "
                     "default nobody)")

ROOT = Path(__file__).resolve().parents[1]
STATE = Path(os.environ.get("HUB_STATE", ROOT / ".hub")).resolve()
COURSE = Path(os.environ.get("HUB_COURSE", ROOT / "notebooks")).resolve()
VENV_BIN = Path(sys.executable).parent  # hubctl.py starts the hub with the course's .venv python


def _env(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        raise SystemExit(f"hub/jupyterhub_config.py: ${name} is not set; start the hub with "
                         "`make hub` (hub/hubctl.py sets it)")
    return value


# -- addresses: loopback only ----------------------------------------------------------------
c.JupyterHub.bind_url = f"http://127.0.0.1:{_env('HUB_PUBLIC_PORT')}/"
c.JupyterHub.hub_bind_url = f"http://127.0.0.1:{_env('HUB_PORT')}"
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{_env('HUB_PROXY_API_PORT')}"
c.ConfigurableHTTPProxy.should_start = False  # hubctl.py runs it; it outlives a hub restart
# the proxy's token comes from $CONFIGPROXY_AUTH_TOKEN, which hubctl.py gives both processes

# -- state ---------------------------------------------------------------------------------
c.JupyterHub.db_url = f"sqlite:///{STATE / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(STATE / "jupyterhub_cookie_secret")
c.JupyterHub.pid_file = str(STATE / "jupyterhub.pid")
c.JupyterHub.cleanup_servers = False  # a hub restart leaves learners' servers (and kernels) running

# -- who logs in -----------------------------------------------------------------------------
c.JupyterHub.authenticator_class = "shared-password"
c.SharedPasswordAuthenticator.user_password = _env("HUB_PASSWORD")
c.Authenticator.allow_all = True

# -- hubctl.py's admin service: adds learners, starts and stops their servers, makes their tokens
c.JupyterHub.services = [{"name": "hubctl", "api_token": _env("HUB_API_TOKEN")}]
c.JupyterHub.load_roles = [{
    "name": "hubctl",
    "scopes": ["admin:users", "admin:servers", "tokens", "list:users", "read:users"],
    "services": ["hubctl"],
}]

# -- learners' servers -------------------------------------------------------------------------
c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = str(STATE / "homes" / "{username}")
c.Spawner.cmd = [str(VENV_BIN / "jupyterhub-singleuser")]
c.Spawner.ip = "127.0.0.1"
c.Spawner.default_url = "/lab"
c.Spawner.notebook_dir = "~"
c.Spawner.start_timeout = 120  # 30 learners' servers starting at once on 2 cores
c.Spawner.http_timeout = 120
c.Spawner.args = [
    # no news or update pop-ups over a learner's notebook
    "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    "--LabApp.extension_manager=readonly",
    "--ServerApp.terminals_enabled=False",
    # JupyterLab's defaults for the learners (hub/lab-settings/overrides.json): no "Would you like
    # to get notified about official Jupyter news?" over the first notebook
    f"--LabApp.app_settings_dir={ROOT / 'hub' / 'lab-settings'}",
]
if os.environ.get("HUB_EXPOSE_APP"):  # the browser tests and the load test read the page's app
    c.Spawner.args.append("--LabApp.expose_app_in_browser=True")
# The learner's server finds the course's venv first (the hub passes on only a few variables of
# its own environment: no MPLBACKEND, so the kernel draws inline, as for a learner).
c.Spawner.environment = {"PATH": f"{VENV_BIN}:/usr/local/bin:/usr/bin:/bin"}
c.JupyterHub.concurrent_spawn_limit = 40
c.JupyterHub.active_server_limit = 0  # no limit: the load test measures where one machine ends


def copy_course(spawner) -> None:
    """Copy the course's notebooks into the learner's home before the first start only."""
    home = Path(spawner.home_dir)
    if (home / ".attention-course-copied").exists():
        return
    home.mkdir(parents=True, exist_ok=True)
    shutil.copytree(COURSE, home, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
    (home / ".attention-course-copied").write_text(f"copied from {COURSE}\n")


c.Spawner.pre_spawn_hook = copy_course
