// The page side of attention_kit's LiveFigure (an anywidget): a <canvas> showing the figure's
// PNG background with the moving artists drawn on top from the kernel's "ops" (see draw_ops.py
// for their format). Each new picture sets data-frame (a counter) and data-picture (a hash of
// what was drawn) on the canvas and fires "ak-frame" (tests and benchmarks/ watch for it). The
// description's element gets data-frame too, once the words of that frame are in it (the
// kernel's `described`): a test waits for the two to match instead of for a quiet period.

function clipTo(ctx, clip) {
  if (clip) {
    ctx.beginPath();
    ctx.rect(clip[0], clip[1], clip[2], clip[3]);
    ctx.clip();
  }
}

function pathOf(codes, xy) {
  const p = new Path2D();
  let k = 0;
  for (const c of codes) {
    if (c === "M") { p.moveTo(xy[k], xy[k + 1]); k += 2; }
    else if (c === "L") { p.lineTo(xy[k], xy[k + 1]); k += 2; }
    else if (c === "Q") { p.quadraticCurveTo(xy[k], xy[k + 1], xy[k + 2], xy[k + 3]); k += 4; }
    else if (c === "C") {
      p.bezierCurveTo(xy[k], xy[k + 1], xy[k + 2], xy[k + 3], xy[k + 4], xy[k + 5]); k += 6;
    } else if (c === "Z") { p.closePath(); }
  }
  return p;
}

function hash(text, h = 0x811c9dc5) {  // FNV-1a, 32 bits
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

const cellCanvas = document.createElement("canvas");

function paintPath(ctx, p, fill, stroke, width, dashes, cap, join) {
  if (fill) { ctx.fillStyle = fill; ctx.fill(p); }
  if (stroke) {
    ctx.strokeStyle = stroke;
    ctx.lineWidth = width;
    ctx.lineCap = cap;
    ctx.lineJoin = join;
    ctx.setLineDash(dashes || []);
    ctx.stroke(p);
  }
}

function drawOp(ctx, op, fonts) {
  ctx.save();
  if (op[0] === "p") {
    const [, codes, xy, fill, stroke, width, dashes, cap, join, clip] = op;
    clipTo(ctx, clip);
    paintPath(ctx, pathOf(codes, xy), fill, stroke, width, dashes, cap, join);
  } else if (op[0] === "m") {  // one marker path, drawn at every point of `at`
    const [, codes, xy, at, fill, stroke, width, dashes, cap, join, clip] = op;
    clipTo(ctx, clip);
    const p = pathOf(codes, xy);
    for (let k = 0; k < at.length; k += 2) {
      ctx.translate(at[k], at[k + 1]);
      paintPath(ctx, p, fill, stroke, width, dashes, cap, join);
      ctx.translate(-at[k], -at[k + 1]);
    }
  } else if (op[0] === "t") {
    const [, x, y, text, font, colour, align, baseline, angle, clip] = op;
    clipTo(ctx, clip);
    ctx.font = fonts[font];
    ctx.fillStyle = colour;
    ctx.textAlign = align;
    ctx.textBaseline = baseline;
    ctx.translate(x, y);
    if (angle) ctx.rotate(-angle * Math.PI / 180);
    ctx.fillText(text, 0, 0);
  } else if (op[0] === "i") {
    const [, x, y, w, h, nx, ny, rgba, clip] = op;
    clipTo(ctx, clip);
    const bytes = Uint8ClampedArray.from(atob(rgba), (ch) => ch.charCodeAt(0));
    cellCanvas.width = nx;
    cellCanvas.height = ny;
    cellCanvas.getContext("2d").putImageData(new ImageData(bytes, nx, ny), 0, 0);
    ctx.imageSmoothingEnabled = false;
    ctx.drawImage(cellCanvas, x, y, w, h);
  }
  ctx.restore();
}

// ---- accessibility (issue 34) ----------------------------------------------------------------
// The canvas is an image with a name (the figure's summary); the description the kernel writes
// from the same figure (attention_kit.plotting.describe) goes to a polite live region, at most once
// per ANNOUNCE_MS (the last text wins), so that dragging a slider does not flood a screen reader.
// The explorer's controls get accessible names: ipywidgets' slider handles (role="slider") are not
// tied to their description label, so each is labelled by it here (or by the widget's tooltip,
// which the vector editor sets to say which vector a "[0]" slider belongs to).
// Keys pressed on a control are the control's: each gets data-lm-suppress-shortcuts, which tells
// the application's shortcut handler (Lumino's CommandRegistry, in JupyterLab and Notebook 7)
// to leave the event alone, so that Notebook 7's command-mode arrow keys do not take ArrowRight
// from a slider.
const ANNOUNCE_MS = 500;
const SR_ONLY = "position:absolute;width:1px;height:1px;padding:0;margin:-1px;overflow:hidden;" +
  "clip:rect(0,0,0,0);white-space:nowrap;border:0;";
const FOCUS_CSS = `
.ak-explorer-a11y :is([role="slider"], select, input, button, textarea, [contenteditable="true"]):focus-visible {
  outline: 3px solid #0b57d0 !important; outline-offset: 2px !important;
}`;

function textOf(node) {
  return node ? (node.textContent || "").replace(/\s+/g, " ").trim() : "";
}

const CONTROLS = 'select, input, textarea, button, [role="slider"], [contenteditable="true"]';

function sliderName(node, words) {
  // a widget's tooltip (ipywidgets puts it on the description label) names it when set, else its label
  const widget = node.closest(".widget-slider, .jupyter-widgets");
  const label = widget && widget.querySelector(".widget-label");
  const tip = label && label.getAttribute("title");  // ("null" when no tooltip was set)
  return (tip && tip !== "null" ? tip : "") || textOf(label) || (widget && widget.getAttribute("title")) || words.slider || "slider";
}

// words: the kernel's words for the names made up here, in the course's language (LiveFigure.words)
function nameControls(root, words) {
  // ipywidgets makes a SelectionSlider's readout editable but reads nothing typed into it: there it
  // is a plain label, out of the Tab order (the handle's arrow keys choose); the explorer marks
  // such sliders with the class ak-choice-slider
  for (const ro of root.querySelectorAll('.ak-choice-slider .widget-readout[contenteditable="true"]')) {
    ro.setAttribute("contenteditable", "false");
  }
  for (const control of root.querySelectorAll(CONTROLS)) {
    if (!control.hasAttribute("data-lm-suppress-shortcuts")) control.setAttribute("data-lm-suppress-shortcuts", "true");
  }
  for (const handle of root.querySelectorAll('[role="slider"]')) {
    const off = !!handle.closest("[disabled]");  // a disabled slider says so
    if (handle.getAttribute("aria-disabled") !== String(off)) handle.setAttribute("aria-disabled", String(off));
    // the value a screen reader says is the one the learner sees: the readout's text. (noUiSlider's
    // own text is the raw position: a log slider's exponent, or 0.3999999999999999.)
    const box = handle.closest(".widget-slider");
    const shown = textOf(box && box.querySelector(".widget-readout"));
    if (shown && handle.getAttribute("aria-valuetext") !== shown) handle.setAttribute("aria-valuetext", shown);
    if (handle.getAttribute("aria-label") || handle.getAttribute("aria-labelledby")) continue;
    handle.setAttribute("aria-label", sliderName(handle, words));
  }
  for (const ro of root.querySelectorAll('.widget-readout[contenteditable="true"]')) {
    if (ro.getAttribute("aria-label")) continue;
    ro.setAttribute("role", "textbox");
    ro.setAttribute("aria-label", (words.value || "{name} value").replace("{name}", sliderName(ro, words)));
  }
  for (const field of root.querySelectorAll("select, input, textarea, button")) {
    if (field.getAttribute("aria-label") || field.getAttribute("aria-labelledby")) continue;
    if (field.tagName === "BUTTON" && textOf(field)) continue;
    if (field.id && root.querySelector(`label[for="${CSS.escape(field.id)}"]`) && textOf(
      root.querySelector(`label[for="${CSS.escape(field.id)}"]`))) continue;
    if (field.closest("label") && textOf(field.closest("label"))) continue;
    const widget = field.closest(".jupyter-widgets");
    const label = widget && widget.querySelector(".widget-label");
    const name = textOf(label) || field.getAttribute("title") || field.getAttribute("placeholder") ||
      (widget && widget.getAttribute("title"));
    if (name) field.setAttribute("aria-label", name);
  }
}

function watchControls(el, words) {
  // once the view is in the page: label the controls of the output it is in, now and whenever
  // ipywidgets re-renders them. A view can be rendered long before it is attached (a notebook
  // opened in a background tab, a busy page): it keeps looking, every 50 ms for 10 s, then
  // every second, until it is attached or closed.
  let tries = 0;
  let observer = null;
  let timer = null;
  let closed = false;
  function attach() {
    timer = null;
    if (closed || observer) return;
    if (!el.isConnected) {
      timer = setTimeout(attach, tries++ < 200 ? 50 : 1000);
      return;
    }
    const root = el.closest(".jp-OutputArea-output, .output_subarea, .widget-subarea") || el.parentElement;
    if (!root) return;
    root.classList.add("ak-explorer-a11y");
    if (!document.getElementById("ak-a11y-style")) {
      const style = document.createElement("style");
      style.id = "ak-a11y-style";
      style.textContent = FOCUS_CSS;
      document.head.appendChild(style);
    }
    let queued = false;
    const run = () => { queued = false; nameControls(root, words); };
    run();
    observer = new MutationObserver(() => {
      if (!queued) { queued = true; requestAnimationFrame(run); }
    });
    observer.observe(root, { childList: true, subtree: true, attributes: true, attributeFilter: ["disabled", "title", "contenteditable"] });
  }
  attach();
  return () => {
    closed = true;
    if (timer !== null) clearTimeout(timer);
    if (observer) observer.disconnect();
  };
}

function describer(model, canvas, full, region) {
  // `full` (the canvas's aria-describedby) holds the whole description; `region` (aria-live,
  // polite) gets the kernel's short announcement of what changed
  let last = 0;
  let timer = null;
  let said = (model.get("description") || "").split("\n");
  let spoken = model.get("announcement") || "";
  function say() {
    timer = null;
    last = performance.now();
    const text = model.get("description") || "";
    const summary = model.get("summary") || "";
    if (summary && canvas.getAttribute("aria-label") !== summary) canvas.setAttribute("aria-label", summary);
    full.textContent = text.replace(/\n/g, " ");
    full.dataset.frame = String(model.get("described"));
    const lines = text.split("\n");
    const before = new Set(said);
    const changed = lines.filter((line) => !before.has(line));
    said = lines;
    // the kernel's announcement (the control and its new value, then the first few changes);
    // the lines that changed when it sends none
    const announcement = model.get("announcement") || "";
    const fresh = announcement && announcement !== spoken;
    if (announcement ? !fresh : !changed.length) return;
    spoken = announcement;
    region.textContent = model.get("announce") === false ? "" : (fresh ? announcement : changed.join(" "));
    region.dataset.frame = String(model.get("frame"));
  }
  function changed() {
    if (timer !== null) return;  // a text is due: the newest one will be read then
    const wait = ANNOUNCE_MS - (performance.now() - last);
    timer = setTimeout(say, Math.max(0, wait));  // (0: after this frame's paint, not before it)
  }
  function marked() {
    // the kernel described a frame in words it had written already (or is about to write): with
    // no text due and the words in place, they are this frame's; else say() marks them
    const text = (model.get("description") || "").replace(/\n/g, " ");
    if (timer === null && full.textContent === text) full.dataset.frame = String(model.get("described"));
  }
  return { changed, marked };
}

// When the kernel is gone (killed, crashed, restarted), ipywidgets marks every view of its widgets
// with the class "jupyter-widgets-disconnected" (on the model's "comm_live_update"): only a faint
// icon. The explorer says so in words instead, under its picture (a status, read out once, with
// a warning sign and a border: not colour alone), and dims the picture; the words come from the
// kernel (LiveFigure.kernel_lost, in the learner's language). A view made by a new kernel (the
// cells run again) is a new, live one.
const LOST_CSS = "margin:0.4em 0;padding:0.4em 0.6em;border:2px solid #8a4b00;border-left-width:6px;" +
  "background:#fff4e5;color:#2b1700;font-size:0.95em;max-width:40em;";

function kernelWatch(model, el, canvas) {
  const note = document.createElement("div");
  note.className = "ak-kernel-lost";
  note.setAttribute("role", "status");
  note.style.cssText = LOST_CSS;
  note.hidden = true;
  el.appendChild(note);
  let timer = null;
  function check() {
    timer = null;
    const lost = el.classList.contains("jupyter-widgets-disconnected") ||
      !!el.closest(".jupyter-widgets-disconnected");
    if (lost === !note.hidden) return;
    note.hidden = !lost;
    note.textContent = lost ? "\u26a0 " + (model.get("kernel_lost") ||
      "The kernel stopped: restart it and run the cells again.") : "";
    canvas.style.opacity = lost ? "0.45" : "";
    canvas.dataset.kernel = lost ? "lost" : "live";
  }
  function changed() {  // after ipywidgets' own listener has set (or removed) the class
    if (timer === null) timer = setTimeout(check, 0);
  }
  model.on("comm_live_update", changed);
  canvas.dataset.kernel = "live";
  return () => {
    model.off("comm_live_update", changed);
    if (timer !== null) clearTimeout(timer);
  };
}

function render({ model, el }) {
  const canvas = document.createElement("canvas");
  canvas.className = "ak-live-figure";
  canvas.style.maxWidth = "100%";
  canvas.style.display = "block";
  canvas.setAttribute("role", "img");
  const words = model.get("words") || {};
  canvas.setAttribute("aria-label", model.get("summary") || words.figure || "attention figure");
  el.appendChild(canvas);
  const full = document.createElement("div");
  full.className = "ak-description";
  full.style.cssText = SR_ONLY;
  full.id = "ak-desc-" + Math.random().toString(36).slice(2);
  full.textContent = (model.get("description") || "").replace(/\n/g, " ");
  full.dataset.frame = String(model.get("described"));
  canvas.setAttribute("aria-describedby", full.id);
  el.appendChild(full);
  const region = document.createElement("div");
  region.className = "ak-live-description";
  region.setAttribute("aria-live", "polite");
  region.setAttribute("aria-atomic", "true");
  region.style.cssText = SR_ONLY;
  el.appendChild(region);
  const describe = describer(model, canvas, full, region);
  const unwatch = watchControls(el, words);
  const unwatchKernel = kernelWatch(model, el, canvas);
  const ctx = canvas.getContext("2d");
  let background = null;  // the decoded background image
  let backgroundUrl = null;  // the URL it was decoded from, or is being decoded from

  function paint() {
    // on a high-density screen the canvas has more pixels than the figure: the commands (text,
    // lines, cells) are drawn sharp at that density, the background PNG is scaled up
    const [w, h] = model.get("size");
    const r = window.devicePixelRatio || 1;
    if (canvas.width !== Math.round(w * r) || canvas.height !== Math.round(h * r)) {
      canvas.width = Math.round(w * r);
      canvas.height = Math.round(h * r);
      canvas.style.width = w + "px";
    }
    ctx.setTransform(r, 0, 0, r, 0, 0);
    ctx.clearRect(0, 0, w, h);
    if (background) ctx.drawImage(background, 0, 0, w, h);
    const text = model.get("ops");
    try {
      const { fonts, ops } = JSON.parse(text);
      for (const op of ops) drawOp(ctx, op, fonts);
    } catch (err) {  // a command this page cannot draw: keep what was drawn, say so once
      if (!canvas.dataset.error) console.error("attention_kit LiveFigure:", err);
      canvas.dataset.error = String(err);
    }
    const frame = model.get("frame");
    canvas.dataset.frame = String(frame);
    canvas.dataset.picture = hash(text, hash(backgroundUrl.slice(-64))).toString(16);
    canvas.dispatchEvent(new CustomEvent("ak-frame", { bubbles: true, detail: { frame } }));
  }

  function update() {
    const url = model.get("background");
    if (url === backgroundUrl) {
      paint();
      return;
    }
    // a new background: keep the old picture until it is decoded, then draw the newest ops
    backgroundUrl = url;
    const img = new Image();
    img.onload = () => {
      if (backgroundUrl !== url) return;
      background = img;
      paint();
    };
    img.onerror = () => {  // a background this page cannot decode: the newest commands on the old one
      if (backgroundUrl !== url) return;
      canvas.dataset.error = "background image could not be decoded";
      paint();
    };
    img.src = url;
  }

  model.on("change:frame", update);
  model.on("change:description", describe.changed);
  model.on("change:announcement", describe.changed);
  model.on("change:described", describe.marked);
  update();
  // the kernel may now use its idle time to prepare pictures a control will ask for
  if (typeof model.send === "function") model.send({ event: "shown" });
  return () => {
    model.off("change:frame", update);
    model.off("change:description", describe.changed);
    model.off("change:announcement", describe.changed);
    model.off("change:described", describe.marked);
    unwatch();
    unwatchKernel();
  };
}

export default { render };
