"""Drive a real JupyterLab in headless Chromium (shared by the browser tests and the benchmark).

Plain functions, no pytest: ``LabServer`` starts JupyterLab from this Python environment on
127.0.0.1 with a free port, a random token and throw-away settings/workspace directories;
``launch_browser`` starts the system Chromium through playwright; the ``Notebook*`` helpers open a
notebook, run every cell through the Run menu and inspect the result through the notebook model
(the app is exposed to the page with ``LabApp.expose_app_in_browser``).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

from lab_server import (  # noqa: E402,F401  (the server half, re-exported)
    CHROMIUM_ARGS,
    CHROMIUM_CANDIDATES,
    PICTURE,
    ROOT,
    SETTINGS_OVERRIDES,
    SHOTS,
    WIDGET_MIME,
    LabServer,
    course_notebooks,
    find_chromium,
    launch_browser,
)

# ---------------------------------------------------------------------------------------------
# In-page JavaScript. `jupyterapp` is exposed by --LabApp.expose_app_in_browser=True.
# ---------------------------------------------------------------------------------------------
_JS_PANEL = """
() => {
  const app = window.jupyterapp;
  if (!app || !app.shell) return null;
  const w = app.shell.currentWidget;
  if (!w || !w.content || !w.sessionContext) return null;
  const k = w.sessionContext.session && w.sessionContext.session.kernel;
  return {ready: !!w.context && w.context.isReady, kernel: k ? k.status : null,
          cells: w.content.widgets.length};
}
"""

_JS_HOOK_IOPUB = """
() => {
  const w = window.jupyterapp.shell.currentWidget;
  const k = w.sessionContext.session.kernel;
  window.__iopubErrors = window.__iopubErrors || {};
  if (!(k.id in window.__iopubErrors)) {
    window.__iopubErrors[k.id] = [];
    k.iopubMessage.connect((_, msg) => {
      const t = msg.header.msg_type, errs = window.__iopubErrors[k.id];
      if (t === 'error') errs.push(msg.content.ename + ': ' + msg.content.evalue);
      if (t === 'stream' && msg.content.name === 'stderr' && /Traceback|Error/.test(msg.content.text))
        errs.push(msg.content.text);
    });
  }
  return k.id;
}
"""

# The kernel of the notebook in front (the errors above are kept per kernel).
_JS_KERNEL_ID = """
() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.id
"""

_JS_PROGRESS = """
() => {
  const w = window.jupyterapp.shell.currentWidget;
  const k = w.sessionContext.session && w.sessionContext.session.kernel;
  let code = 0, missing = 0, pending = 0, errors = 0;
  for (const c of w.content.widgets) {
    if (c.model.type !== 'code') continue;
    code++;
    // JupyterLab does not send an empty cell to the kernel: it never gets a count
    if (c.model.executionCount === null && c.model.sharedModel.getSource().trim()) missing++;
    const prompt = c.node.querySelector('.jp-InputPrompt');
    if ((c.model.executionState === 'running') || (prompt && prompt.textContent.includes('*'))) pending++;
    const tags = c.model.getMetadata('tags') || [];
    if (!tags.includes('raises-exception'))
      for (const o of c.model.outputs.toJSON()) if (o.output_type === 'error') errors++;
  }
  return {kernel: k ? k.status : null, code, missing, pending, errors};
}
"""

_JS_CELLS = """
(picture) => {
  const w = window.jupyterapp.shell.currentWidget;
  const out = [];
  w.content.widgets.forEach((c, i) => {
    c.node.dataset.testCell = w.id + '/' + i;
    if (c.model.type !== 'code') return;
    const tags = c.model.getMetadata('tags') || [];
    const outputs = c.model.outputs.toJSON().map(o => ({
      type: o.output_type,
      mimes: o.data ? Object.keys(o.data) : [],
      error: o.output_type === 'error' ? (o.ename + ': ' + o.evalue) : null,
      plain: (o.data && typeof o.data['text/plain'] === 'string') ? o.data['text/plain'] : null,
    }));
    const area = c.node.querySelector('.jp-OutputArea');
    out.push({index: i, tags, outputs, count: c.model.executionCount,
              source: c.model.sharedModel.getSource().slice(0, 200),
              text: area ? area.innerText : '',
              widgetViews: area ? area.querySelectorAll('.jupyter-widgets').length : 0,
              images: area ? area.querySelectorAll(picture).length : 0});
  });
  return out;
}
"""


@dataclass
class Cell:
    index: int
    count: int | None
    tags: list[str]
    outputs: list[dict]
    source: str
    text: str
    widget_views: int
    images: int

    @property
    def expects_error(self) -> bool:
        return "raises-exception" in self.tags

    @property
    def errors(self) -> list[str]:
        return [o["error"] for o in self.outputs if o["error"]]

    @property
    def widget_outputs(self) -> int:
        return sum(WIDGET_MIME in o["mimes"] for o in self.outputs)

    @property
    def is_interactive(self) -> bool:
        return self.widget_outputs > 0 and self.images > 0


@dataclass
class RunResult:
    seconds: float
    cells: list[Cell] = field(default_factory=list)


def wait_for_notebook(page, *, timeout: float = 300.0) -> None:
    """Wait until the notebook panel exists, its context is ready and the kernel is idle."""
    deadline = time.monotonic() + timeout
    state = None
    while time.monotonic() < deadline:
        state = page.evaluate(_JS_PANEL)
        if state and state["ready"] and state["kernel"] == "idle" and state["cells"] > 0:
            return
        page.wait_for_timeout(200)
    raise TimeoutError(f"notebook/kernel not ready after {timeout:.0f} s: {state}")


def _menu(page, menu: str, item: str) -> None:
    page.get_by_role("menuitem", name=menu, exact=True).click()
    page.get_by_role("menuitem", name=re.compile("^" + re.escape(item))).click()


def start_run_all(page) -> None:
    """Clear the saved outputs and run every cell, as a person does with the menus
    (Edit > Clear Outputs of All Cells, then Run > Run All Cells); returns at once.

    Clearing first matters: the saved execution counts would otherwise look like cells that ran.
    """
    page.evaluate(_JS_HOOK_IOPUB)
    _menu(page, "Edit", "Clear Outputs of All Cells")
    page.wait_for_function(
        """() => window.jupyterapp.shell.currentWidget.content.widgets.every(
             c => c.model.type !== 'code' || c.model.executionCount === null)""", timeout=10_000)
    _menu(page, "Run", "Run All Cells")
    page.evaluate("""() => { window.__runAllStart = window.__runAllStart || {};
        window.__runAllStart[window.jupyterapp.shell.currentWidget.id] = performance.now(); }""")


def start_run_all_by_command(page) -> None:
    """start_run_all through the application's commands instead of its menus (the same commands
    the menu items run): for Jupyter Notebook 7, whose menus are laid out differently."""
    page.evaluate(_JS_HOOK_IOPUB)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:clear-all-cell-outputs')")
    page.wait_for_function(
        """() => window.jupyterapp.shell.currentWidget.content.widgets.every(
             c => c.model.type !== 'code' || c.model.executionCount === null)""", timeout=10_000)
    page.evaluate("""() => { window.__runAllStart = window.__runAllStart || {};
        window.__runAllStart[window.jupyterapp.shell.currentWidget.id] = performance.now();
        window.jupyterapp.commands.execute('notebook:run-all-cells'); }""")


def wait_run_all(page, *, timeout: float = 180.0) -> float:
    """Wait until every code cell has run and the kernel is idle, or run all stopped at an
    unexpected error. Returns the seconds since Run All was clicked (in the page's clock); after
    ``timeout`` it returns anyway and the caller reports the cells that did not run."""
    deadline = time.monotonic() + timeout
    stable = 0
    while time.monotonic() < deadline:
        prog = page.evaluate(_JS_PROGRESS)
        done = (prog["kernel"] == "idle" and prog["pending"] == 0
                and (prog["missing"] == 0 or prog["errors"] > 0))
        stable = stable + 1 if done else 0
        if stable >= 3:  # idle for 0.75 s with nothing queued
            break
        page.wait_for_timeout(250)
    return page.evaluate("""() => (performance.now() -
        window.__runAllStart[window.jupyterapp.shell.currentWidget.id]) / 1000""")


def run_all_cells(page, *, timeout: float = 180.0) -> float:
    """start_run_all, then wait_run_all."""
    start_run_all(page)
    return wait_run_all(page, timeout=timeout)


def cells(page) -> list[Cell]:
    raw = page.evaluate(_JS_CELLS, PICTURE)
    return [Cell(index=c["index"], count=c["count"], tags=c["tags"], outputs=c["outputs"], source=c["source"],
                 text=c["text"], widget_views=c["widgetViews"], images=c["images"]) for c in raw]


def wait_widgets_rendered(page, *, timeout: float = 30.0) -> list[Cell]:
    """Wait until every widget output has a rendered view; return the cells."""
    deadline = time.monotonic() + timeout
    bad: list = []
    while True:
        cs = cells(page)
        bad = [c.index for c in cs if c.widget_outputs and (
            c.widget_views < c.widget_outputs or "Loading widget" in c.text)]
        if not bad or time.monotonic() > deadline:
            return cs
        page.wait_for_timeout(250)


def iopub_errors(page, *, reset: bool = False) -> list[str]:
    """Errors the kernel of the notebook in front reported (and forget them when ``reset``)."""
    return page.evaluate("""(reset) => {
        const id = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.id;
        const all = window.__iopubErrors || {};
        const errs = all[id] || [];
        if (reset) all[id] = [];
        return errs;
    }""", reset)


def cell_selector(page, index: int) -> str:
    """CSS selector of cell ``index`` of the notebook in front (after ``cells()`` tagged them)."""
    panel = page.evaluate("() => window.jupyterapp.shell.currentWidget.id")
    return f'[data-test-cell="{panel}/{index}"]'


def cell_locator(page, index: int):
    return page.locator(cell_selector(page, index))


def open_notebook(page, server: LabServer, name: str) -> None:
    """Open ``name`` (a path under the server's root, e.g. ``zh/02_self_attention.ipynb``): load
    JupyterLab on it the first time, later double-click it in the file browser, which shows the
    folder of the first (it opens in a new tab, in front); wait until its kernel is idle."""
    if not page.url.startswith(server.base):
        page.goto(server.lab_url(name))
    else:
        page.locator(".jp-DirListing-item", has_text=name.rsplit("/", 1)[-1]).first.dblclick()
    page.wait_for_function(
        """(p) => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
                    return !!(w && w.context && w.context.path === p); }""",
        arg=name, timeout=120_000)
    wait_for_notebook(page)


def activate(page, name: str) -> None:
    """Bring the tab of notebook ``name`` (its path under the server's root) to the front, as a
    person clicks on it."""
    page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab", has_text=name.rsplit("/", 1)[-1]).first.click()
    page.wait_for_function(
        "(p) => window.jupyterapp.shell.currentWidget.context.path === p", arg=name)


def image_srcs(cell) -> list[str]:
    """What each picture in a cell's widget views shows, and whether it is ready.

    An ``<img>`` gives its ``src``; a long ``data:`` URL is shortened to its start, its length and
    its last 64 characters (those hold the PNG's checksums, which change with any pixel). A live
    figure's ``<canvas>`` gives the hash of what it drew (``data-picture``); "#unloaded" marks a
    picture not shown yet."""
    return cell.locator(PICTURE).evaluate_all(
        """els => els.map(e => e.tagName === 'CANVAS'
            ? 'canvas:' + (e.dataset.picture || '#unloaded')
            : (e.src.length > 256
               ? e.src.slice(0, 32) + '…' + e.src.length + '…' + e.src.slice(-64)
               : e.src) + (e.complete && e.naturalWidth > 0 ? '' : '#unloaded'))""")


def wait_image_change(page, cell, before: list[str], *, timeout: float = 30.0) -> float | None:
    """Seconds until an image src differs from ``before`` and the new image is loaded; None if
    nothing changed within ``timeout``."""
    t0 = time.monotonic()
    while True:
        now = image_srcs(cell)
        if now != before and not any(s.endswith("#unloaded") for s in now):
            return time.monotonic() - t0
        if time.monotonic() - t0 > timeout:
            return None
        page.wait_for_timeout(20)


def text_box(cell, looks_like):
    """The first visible text box of a cell's widgets whose value ``looks_like(value)``, or None."""
    for box in cell.locator(".jupyter-widgets input[type=text]").all():
        if box.is_visible() and looks_like(box.input_value() or ""):
            return box
    return None


def type_text(box, text: str) -> None:
    """Click a text box, replace what it holds with ``text`` (typed key by key), press Enter."""
    box.click()
    box.press("Control+a")
    box.press_sequentially(text)
    box.press("Enter")


VECTOR_TEXT = re.compile(r"^\s*[\[(]?\s*-?\d[\d.eE+-]*(\s*[,; ]\s*-?\d[\d.eE+-]*)+\s*[\])]?\s*$")


def nudged_vector(text: str, delta: float = 0.1) -> str:
    """The vector in ``text`` with ``delta`` added to its first component, as ``a, b, ...``."""
    nums = [float(x) for x in re.findall(r"-?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?", text)]
    nums[0] = round(nums[0] + delta, 6)
    return ", ".join(f"{x:g}" for x in nums)
