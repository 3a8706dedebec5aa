"""The faults a class meets, tried against a real JupyterHub (issue 48; ``make hub-test``).

* a learner's kernel killed in the middle of a press: the explorer says so in words, the learner
  restarts and runs the cells again and the explorer answers again; nothing of the notebook lost;
* the hub restarted during a session: the learner's server and kernel keep running, the open
  page keeps working (a press redraws, a save reaches the disk), the login survives, the saved
  work is intact;
* one learner with the same notebook open in two tabs: both tabs' explorers answer (one kernel,
  both tabs get its pictures), and a save over the other tab's newer save is not silent.

Each learner logs in through the hub's login form in headless Chromium (tests/hub/conftest.py).
Nothing here is timed.
"""

from __future__ import annotations

import json
import os
import signal
import time
import urllib.request

import jlab
import psutil
import pytest
from hubpage import log_in

pytestmark = pytest.mark.hub  # make hub-test; make unit and make check leave it out

NB = "01_general_attention_model.ipynb"
NOTE = ".ak-kernel-lost"
LEARNER_CELL = "my_note = 'a learner typed this'  # kept through every fault"


def open_and_run(page, server) -> jlab.Cell:
    """Open NB, Run All, wait for its widgets; the first explorer (a widget with a picture)."""
    jlab.open_notebook(page, server, NB)
    jlab.run_all_cells(page)
    cells = jlab.wait_widgets_rendered(page)
    bad = [(c.index, c.errors) for c in cells if c.errors and not c.expects_error]
    assert not bad, f"Run All failed in {NB}: {bad}"
    return next(c for c in cells if c.is_interactive)


def press_slider(page, index: int, *, wait: bool = True) -> float | None:
    """ArrowRight on the first slider of cell ``index``; seconds to a changed picture (None when
    ``wait`` is False or nothing changed within 10 s)."""
    cell = jlab.cell_locator(page, index)
    cell.evaluate("el => el.scrollIntoView({block: 'start'})")
    handle = cell.locator(".jupyter-widgets [role=slider]").first
    before = jlab.image_srcs(cell)
    handle.focus()
    page.keyboard.press("ArrowRight")
    return jlab.wait_image_change(page, cell, before, timeout=10.0) if wait else None


def add_learner_cell(page) -> None:
    """The learner's own work: a cell inserted at the top of the notebook in front."""
    page.evaluate("""(src) => window.jupyterapp.shell.currentWidget.content.model.sharedModel
                     .insertCell(0, {cell_type: 'code', source: src})""", LEARNER_CELL)


def save(page) -> None:
    """File > Save, as the learner does; returns at once (the save may wait on a dialog)."""
    page.evaluate("() => { window.jupyterapp.commands.execute('docmanager:save'); }")


def sources_in_page(page) -> list[str]:
    return page.evaluate("""() => window.jupyterapp.shell.currentWidget.content.widgets
                            .map(c => c.model.sharedModel.getSource())""")


def on_disk(hub, name: str) -> dict:
    return json.loads((hub.home(name) / NB).read_text(encoding="utf-8"))


def wait_saved(hub, name: str, text: str, timeout: float = 30.0) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        nb = on_disk(hub, name)
        if any(text in "".join(c["source"]) for c in nb["cells"]):
            return nb
        assert time.monotonic() < deadline, f"{text!r} never reached {NB} on disk"
        time.sleep(0.5)


def kernel_process(hub, name: str, kernel_id: str) -> psutil.Process:
    """The learner's kernel: the ipykernel process below their home whose connection file is
    kernel-<id>.json."""
    home = str(hub.home(name))
    for p in psutil.process_iter(["cwd", "cmdline"]):
        try:
            cmd = " ".join(p.info["cmdline"] or [])
            if (p.info["cwd"] or "").startswith(home) and "ipykernel" in cmd and kernel_id in cmd:
                return p
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    raise AssertionError(f"no kernel process {kernel_id} for {name}")


def dismiss_dialogs(page) -> list[str]:
    """Close JupyterLab's dialogs ("Kernel Restarting" ...) with their default button; their titles."""
    titles = []
    for _ in range(5):
        dialog = page.locator(".jp-Dialog")
        if not dialog.count():
            break
        titles.append(dialog.first.locator(".jp-Dialog-header").inner_text())
        dialog.first.locator(".jp-Dialog-button.jp-mod-accept").last.click()
        page.wait_for_timeout(300)
    return titles


def test_a_kernel_killed_mid_press_is_said_and_comes_back(hub, context):
    page = context.new_page()
    server = log_in(page, hub, "kim")
    explorer = open_and_run(page, server)
    add_learner_cell(page)
    jlab.cells(page)  # number the cells again: the learner's cell went in above the explorer
    explorer_index = explorer.index + 1
    kernel_id = page.evaluate(jlab._JS_KERNEL_ID)
    kernel = kernel_process(hub, "kim", kernel_id)
    assert page.locator(f"{NOTE}:visible").count() == 0  # a live explorer shows no note

    press_slider(page, explorer_index, wait=False)  # the press is on its way ...
    os.kill(kernel.pid, signal.SIGKILL)  # ... when the kernel dies
    note = page.locator(f"{NOTE}:visible").first
    note.wait_for(timeout=60_000)  # the server restarts the kernel; the page is told
    text = note.inner_text()
    assert "kernel stopped" in text and "Restart Kernel and Run All Cells" in text, text
    assert note.get_attribute("role") == "status"  # read out once by a screen reader
    cell = jlab.cell_locator(page, explorer_index)
    assert cell.locator("canvas.ak-live-figure").first.get_attribute("data-kernel") == "lost"
    try:  # JupyterLab's own "Kernel Restarting" dialog
        page.locator(".jp-Dialog").first.wait_for(timeout=15_000)
    except Exception:  # noqa: BLE001 - not shown (yet): nothing to dismiss
        pass
    dismiss_dialogs(page)
    assert LEARNER_CELL in sources_in_page(page)  # nothing of the notebook lost

    # the learner runs the cells again (the server has started a new kernel already)
    jlab.wait_for_notebook(page, timeout=120)
    jlab.run_all_cells(page)
    jlab.wait_widgets_rendered(page)
    assert page.locator(f"{NOTE}:visible").count() == 0, "the note stayed after the cells ran again"
    assert press_slider(page, explorer_index) is not None, "the explorer did not come back"
    assert kernel_process(hub, "kim", kernel_id).pid != kernel.pid  # a new kernel answered
    sources = sources_in_page(page)
    assert sources[0] == LEARNER_CELL
    save(page)
    wait_saved(hub, "kim", LEARNER_CELL)


def test_a_hub_restart_leaves_the_session_working(hub, context):
    page = context.new_page()
    server = log_in(page, hub, "lee")
    explorer = open_and_run(page, server)
    add_learner_cell(page)
    save(page)
    wait_saved(hub, "lee", LEARNER_CELL)
    before = hub.api("GET", "/users/lee")["servers"][""]
    kernel_id = page.evaluate(jlab._JS_KERNEL_ID)
    kernel_pid = kernel_process(hub, "lee", kernel_id).pid

    hub.restart_hub()

    after = hub.api("GET", "/users/lee")["servers"][""]
    assert after["ready"] and after["state"]["pid"] == before["state"]["pid"], (before, after)
    assert psutil.pid_exists(before["state"]["pid"])
    assert kernel_process(hub, "lee", kernel_id).pid == kernel_pid  # the same kernel, its state kept
    nb = on_disk(hub, "lee")
    assert any(LEARNER_CELL in "".join(c["source"]) for c in nb["cells"])
    # the open page goes on: a press redraws, the next save reaches the disk
    jlab.cells(page)  # number the cells again (the learner's cell is the first)
    assert press_slider(page, explorer.index + 1) is not None, "no new picture after the restart"
    page.evaluate("""(src) => window.jupyterapp.shell.currentWidget.content.model.sharedModel
                     .insertCell(1, {cell_type: 'markdown', source: src})""", "written after the restart")
    save(page)
    wait_saved(hub, "lee", "written after the restart")
    # no JupyterLab news prompt over the learner's notebook (hub/lab-settings/overrides.json)
    assert page.get_by_text("official Jupyter news").count() == 0
    # and the learner is still logged in at the hub (the cookie secret is kept in the state)
    page.goto(f"{hub.url}/hub/home")
    assert "/hub/login" not in page.url, page.url


def test_the_same_notebook_in_two_tabs(hub, context):
    first = context.new_page()
    server = log_in(first, hub, "max")
    explorer = open_and_run(first, server)
    save(first)
    # the same learner (cookies), a second tab on the same notebook; JupyterLab gives a second
    # window a workspace of its own (/lab/workspaces/auto-...): opened so at once
    second = context.new_page()
    second.goto(f"{server.base}/lab/workspaces/second-tab/tree/{NB}?reset")
    second.bring_to_front()  # the tab a learner looks at: the page in front draws its frames
    second.wait_for_function(
        "(p) => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;"
        " return !!(w && w.context && w.context.path === p); }", arg=NB, timeout=120_000)
    jlab.wait_for_notebook(second)
    # one kernel for the notebook: both tabs talk to it
    assert second.evaluate(jlab._JS_KERNEL_ID) == first.evaluate(jlab._JS_KERNEL_ID)
    cells = jlab.wait_widgets_rendered(second)
    assert any(c.is_interactive for c in cells), "the second tab shows no explorer"
    # a press in either tab redraws that tab's explorer
    assert press_slider(second, explorer.index) is not None, "no new picture in the second tab"
    first.bring_to_front()
    assert press_slider(first, explorer.index) is not None, "no new picture in the first tab"
    second.bring_to_front()
    # the second tab saves a change; the first tab, which has not loaded it, saves over it:
    # JupyterLab asks instead of overwriting silently
    second.evaluate("""() => window.jupyterapp.shell.currentWidget.content.model.sharedModel
                       .insertCell(0, {cell_type: 'markdown', source: 'from the second tab'})""")
    save(second)
    wait_saved(hub, "max", "from the second tab")
    time.sleep(1.1)  # a later modification time on disk than the first tab's copy
    first.bring_to_front()
    first.evaluate("""() => window.jupyterapp.shell.currentWidget.content.model.sharedModel
                      .insertCell(0, {cell_type: 'markdown', source: 'from the first tab'})""")
    save(first)
    dialog = first.locator(".jp-Dialog")
    dialog.wait_for(timeout=30_000)
    assert "changed" in dialog.inner_text().lower(), dialog.inner_text()
    nb = on_disk(hub, "max")
    assert any("from the second tab" in "".join(c["source"]) for c in nb["cells"])


@pytest.fixture(autouse=True)
def _server_log_on_failure(request, hub):
    yield
    rep = getattr(request.node, "rep_call", None)
    if rep is not None and rep.failed:
        print("hub log (last lines):\n" + hubctl_tail(hub.hub_log))


def hubctl_tail(path) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-40:])
    except OSError:
        return "(no log)"


def test_the_learners_servers_run_the_course_environment(hub):
    """The single-user server is the course's venv with attention_kit's server extension on."""
    token = hub.add_learner("env-check")
    base = hub.start_server("env-check")
    req = urllib.request.Request(f"{base}/api/contents/{NB}?content=0",
                                 headers={"Authorization": f"token {token}"})
    with urllib.request.urlopen(req, timeout=30) as r:
        assert json.load(r)["name"] == NB  # the course was copied into the new home
    assert (hub.home("env-check") / "zh" / ".attention-kit-language").exists()
    log = hub.hub_log.read_text(errors="replace")
    assert "attention_kit: kernel messages go to the page without Nagle's delay" in log


def test_no_process_of_the_hub_runs_as_root(hub):
    """The proxy, the hub, a learner's server and its kernel run as an unprivileged user, never as
    root (hubctl.py, started by root, runs them as $HUB_USER, default nobody), and nothing of
    theirs asks Jupyter to allow root."""
    token = hub.add_learner("uid-check")
    base = hub.start_server("uid-check")
    req = urllib.request.Request(f"{base}/api/kernels", data=b"{}", method="POST",
                                 headers={"Authorization": f"token {token}",
                                          "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        kernel_id = json.load(r)["id"]
    home = str(hub.home("uid-check"))
    procs = {"proxy": psutil.Process(hub.proxy.pid), "hub": psutil.Process(hub.hub.pid)}
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and ("server" not in procs or "kernel" not in procs):
        for p in psutil.process_iter(["cmdline", "cwd"]):
            cmd = " ".join(p.info["cmdline"] or [])
            if "jupyterhub-singleuser" in cmd and (p.info["cwd"] or "").startswith(home):
                procs["server"] = p
            if "ipykernel" in cmd and kernel_id in cmd:
                procs["kernel"] = p
        time.sleep(0.5)
    assert set(procs) == {"proxy", "hub", "server", "kernel"}, f"found only {sorted(procs)}"
    expected = hub.account.pw_uid if hub.account is not None else os.getuid()
    for what, p in procs.items():
        assert p.uids().real != 0 and p.uids().effective != 0, f"the {what} runs as root"
        assert p.uids().effective == expected, f"the {what} runs as uid {p.uids().effective}"
        assert not any("allow_root" in a or "allow-root" in a for a in p.cmdline()), what
    with urllib.request.urlopen(urllib.request.Request(
            f"{base}/api/kernels/{kernel_id}", method="DELETE",
            headers={"Authorization": f"token {token}"}), timeout=30):
        pass
