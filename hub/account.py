"""The unprivileged account the course's hub runs as when root starts it, and the folders it must
enter (hub/hubctl.py).

Started by root (a CI container, an admin's shell), the proxy, the hub and every learner's server
run as ``$HUB_USER`` (default ``nobody``). That account must enter every folder on the way to the
course, its ``.venv`` and the Python the venv links to (``/root`` when Python lives in
``/root/.pyenv``): each such folder that others cannot enter gets the search bit for others
(``o+x``: enter, not list) while a hub needs it. Several hubs may run at once (a lecturer's and a
test's): a machine-wide record, ``/tmp/attention-hub-opened.json`` (root's, mode 600, under a
lock), lists each folder opened, its mode before, and the hubs holding it; the last holder to
let go restores the mode. A holder whose process is gone (a hub killed without stopping) is
dropped the next time any hub opens or lets go, so a folder is never left open for good.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import pwd
import secrets
import stat
from pathlib import Path

__all__ = ["AccountError", "unprivileged_account", "new_holder", "open_folders", "let_go"]

RECORD = Path("/tmp/attention-hub-opened.json")
LOCK = Path("/tmp/attention-hub-opened.lock")


class AccountError(RuntimeError):
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
        raise AccountError(f"started as root, the hub runs as the unprivileged user {name!r}, which "
                           "does not exist: set HUB_USER to an existing user other than root, or "
                           "start it as a non-root user") from None
    if account.pw_uid == 0:
        raise AccountError(f"HUB_USER={name!r} is root: name an unprivileged user (the hub and the "
                           "learners' servers never run as root)")
    return account


def new_holder() -> str:
    """This hub's name in the record: its process id and a token (two hubs of one process differ)."""
    return f"{os.getpid()}:{secrets.token_hex(4)}"


def _alive(holder: str) -> bool:
    try:
        os.kill(int(holder.split(":", 1)[0]), 0)
        return True
    except (ProcessLookupError, ValueError):
        return False
    except PermissionError:  # another user's process: alive
        return True


@contextlib.contextmanager
def _record():
    fd = os.open(LOCK, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            held = json.loads(RECORD.read_text())
        except (OSError, ValueError):
            held = {}
        yield held
        restored = _sweep(held)
        tmp = RECORD.with_suffix(".tmp")
        tmp.write_text(json.dumps(held, indent=1))
        os.chmod(tmp, 0o600)
        os.replace(tmp, RECORD)
        held["__restored__"] = restored
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def _sweep(held: dict) -> list[str]:
    """Drop holders whose process is gone; restore the folders nobody holds any more."""
    restored = []
    for folder, entry in list(held.items()):
        entry["holders"] = [h for h in entry["holders"] if _alive(h)]
        if not entry["holders"]:
            with contextlib.suppress(OSError):
                os.chmod(folder, entry["mode"])
                restored.append(folder)
            del held[folder]
    return restored


def open_folders(paths: set[Path], holder: str) -> list[Path]:
    """Give o+x to every folder on the way to ``paths`` that lacks it (or that another hub opened),
    held by ``holder``; the folders this call changed."""
    folders = sorted({a for p in paths for a in (p, *p.parents) if a.is_dir()})
    changed = []
    with _record() as held:
        for folder in folders:
            key = str(folder)
            if key in held:
                if holder not in held[key]["holders"]:
                    held[key]["holders"].append(holder)
                continue
            mode = stat.S_IMODE(folder.stat().st_mode)
            if not mode & stat.S_IXOTH:
                os.chmod(folder, mode | stat.S_IXOTH)
                held[key] = {"mode": mode, "holders": [holder]}
                changed.append(folder)
    return changed


def let_go(holder: str | None) -> list[str]:
    """``holder`` no longer needs its folders (None: only drop holders that are gone); the folders
    restored to their mode because no hub holds them now."""
    with _record() as held:
        for entry in held.values():
            if holder in entry["holders"]:
                entry["holders"].remove(holder)
    return held.get("__restored__", [])
