"""The command line of ``make hub`` and ``make hub-restart`` (``hub/hubctl.py run`` / ``restart``;
hubctl.py's docstring says what each does)."""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from pathlib import Path

from hubctl import DEFAULT_STATE, Hub, HubError, tail


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Start, restart and stop the course's JupyterHub on this machine.")
    sub = ap.add_subparsers(dest="cmd", required=True)
    run = sub.add_parser("run", help="start the proxy and the hub, until Ctrl-C")
    run.add_argument("--state", default=str(DEFAULT_STATE), help="state folder (default .hub/)")
    run.add_argument("--password", default=os.environ.get("HUB_PASSWORD"),
                     help="the learners' shared password (default $HUB_PASSWORD, else one made "
                          "once and kept in the state folder)")
    run.add_argument("--course", default=None,
                     help="the folder copied into each new learner's home (default notebooks/; "
                          "student/ after make student)")
    restart = sub.add_parser("restart", help="restart the hub of a running `run` (the learners' "
                                             "servers keep running)")
    restart.add_argument("--state", default=str(DEFAULT_STATE), help="state folder (default .hub/)")
    args = ap.parse_args(argv)
    if args.cmd == "restart":
        return _ask_restart(Path(args.state).resolve())
    try:
        hub = Hub(args.state, password=args.password, course=args.course)
    except HubError as exc:
        print(f"make hub: {exc}", file=sys.stderr)
        return 1
    try:
        hub.start()
    except HubError as exc:
        _stop_quietly(hub)
        print(f"make hub: {exc}", file=sys.stderr)
        return 1
    print(f"JupyterHub is up at {hub.url}/ (127.0.0.1 only)\n"
          f"  log in with any name and the password {hub.password}\n"
          f"  state and logs: {hub.state} (hub.log, proxy.log, homes/)\n"
          f"  make hub-restart restarts the hub (the learners' servers keep running)\n"
          f"  Ctrl-C stops the learners' servers, the hub and the proxy", flush=True)
    wanted = []
    signal.signal(signal.SIGHUP, lambda *_: wanted.append("restart"))
    # Ctrl-C, and a plain `kill` (SIGTERM) too, stop everything; also when started in the
    # background by a shell that ignores SIGINT for its background jobs
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    ended: list[float] = []
    try:
        while hub.proxy.poll() is None:
            if wanted:
                wanted.clear()
                print("make hub: restarting the hub (the learners' servers keep running)", flush=True)
                hub.restart_hub()
                print(f"make hub: the hub is back at {hub.url}/", flush=True)
            elif hub.hub is None or hub.hub.poll() is not None:
                code = None if hub.hub is None else hub.hub.returncode
                ended = [t for t in ended if time.monotonic() - t < 60] + [time.monotonic()]
                if len(ended) > 3:
                    print(f"make hub: the hub ended 4 times within a minute:\n{tail(hub.hub_log)}",
                          file=sys.stderr)
                    return 1
                print(f"make hub: the hub ended (status {code}); starting it again (the learners' "
                      "servers keep running)", file=sys.stderr, flush=True)
                hub.hub = None
                hub.start_hub()
                print(f"make hub: the hub is back at {hub.url}/", flush=True)
            time.sleep(1)
        print(f"make hub: the proxy ended:\n{tail(hub.proxy_log)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0
    except HubError as exc:
        print(f"make hub: {exc}", file=sys.stderr)
        return 1
    finally:
        _stop_quietly(hub)


def _stop_quietly(hub: Hub) -> None:
    """Stop everything, saying so; a second Ctrl-C meanwhile is ignored (it would leave the hub
    and the proxy running)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    print("make hub: stopping the learners' servers, the hub and the proxy (a few seconds; "
          "Ctrl-C again is ignored)", file=sys.stderr, flush=True)
    hub.stop()
    print("make hub: stopped", file=sys.stderr, flush=True)


def _ask_restart(state: Path) -> int:
    """``restart``: SIGHUP to the ``run`` whose record is in ``state``."""
    try:
        pid = json.loads((state / "hubctl.json").read_text())["hubctl"]
        os.kill(pid, signal.SIGHUP)
    except (OSError, ValueError, KeyError, TypeError):
        print(f"make hub-restart: no hub is running on {state} (start one with make hub)",
              file=sys.stderr)
        return 1
    print(f"make hub-restart: asked the hub on {state} (hubctl process {pid}) to restart; its "
          "terminal says when it is back")
    return 0
