"""The code that latency_stages.py puts into the kernel and into the page to stamp a slider press.

Kernel side: ``LiveFigure.trace`` switched on (its refreshes stamp their stages) and a wrapper
around the kernel's ``comm_msg`` handler that stamps every arrival. Page side: the ``keydown``, the
widget message sent, the picture's message received, the new ``src``, the ``load``, the next
animation frame and the end of its paint, one record per press. Both clocks are the epoch in ms.
"""

# Kernel side: switch LiveFigure's stage stamps on and stamp the arrival of every comm_msg.
KERNEL_SETUP = """
import time as _lt_time
from attention_kit.widgets.live_figure import LiveFigure as _LtLive
_LtLive.trace = []
_lt_arrivals = []
_lt_kernel = get_ipython().kernel
if not hasattr(_lt_kernel, "_lt_original_comm_msg"):
    _lt_kernel._lt_original_comm_msg = _lt_kernel.shell_handlers["comm_msg"]
    def _lt_comm_msg(stream, ident, msg, _orig=_lt_kernel._lt_original_comm_msg):
        _lt_arrivals.append(_lt_time.time() * 1e3)
        return _orig(stream, ident, msg)
    _lt_kernel.shell_handlers["comm_msg"] = _lt_comm_msg
"""
KERNEL_FETCH = "__import__('json').dumps({'trace': _LtLive.trace, 'arrivals': _lt_arrivals})"
KERNEL_RESET = "_LtLive.trace.clear(); _lt_arrivals.clear()"

JS_EXECUTE = """
async ([code, expr]) => {
  const k = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
  const f = k.requestExecute({code, silent: true, store_history: false,
                              user_expressions: expr ? {out: expr} : {}});
  const reply = await f.done;
  const c = reply.content;
  if (c.status !== 'ok') return {error: c.ename + ': ' + c.evalue};
  if (!expr) return {};
  const out = c.user_expressions.out;
  if (out.status !== 'ok') return {error: out.ename + ': ' + out.evalue};
  return {value: out.data['text/plain']};
}
"""

# Page side: stamps per press. `cur` is the press under way; a new keydown starts a new one.
JS_INSTALL = """
(sel) => {
  const now = () => performance.timeOrigin + performance.now();
  const st = window.__st = {cur: null, done: [], keys: [], painted: []};
  document.addEventListener('keydown', (e) => {
    if (e.key.startsWith('Arrow') || e.key === 'Enter') { st.cur = {key: now()}; st.keys.push(st.cur.key); }
  }, true);
  const k = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
  // a figure's display_data (the baseline): image/png, or, once attention_kit is imported, HTML
  // with the PNG in an <img alt=...> (issue 34, attention_kit/accessible.py)
  const png = (d) => d && (d['image/png']
    || ((d['text/html'] || '').match(/data:image\\/png;base64,([^"]*)/) || [])[1]);
  k.anyMessage.connect((_, a) => {
    const c = st.cur, m = a.msg, t = m.header.msg_type;
    if (!c) return;
    if (a.direction === 'send' && t === 'comm_msg' && c.send === undefined) c.send = now();
    if (a.direction === 'recv' && c.recv === undefined && c.send !== undefined
        && ((t === 'comm_msg' && m.buffers && m.buffers.length)
            || (t === 'comm_msg' && m.content.data && m.content.data.state
                && m.content.data.state.frame !== undefined)
            || (t === 'display_data' && png(m.content.data)))) {
      c.recv = now();
      const s = t === 'comm_msg' && m.content.data.state;
      c.bytes = (m.buffers && m.buffers.length) ? m.buffers[0].byteLength
                : s ? (s.ops || '').length + (s.background || '').length
                : Math.round(png(m.content.data).length * 3 / 4);
    }
  });
  const loaded = (size) => {
    requestAnimationFrame(() => {  // every new picture, for the bursts
      const ch = new MessageChannel();
      ch.port1.onmessage = () => st.painted.push(now());
      ch.port2.postMessage(0);
    });
    const c = st.cur;
    if (!c || c.src === undefined || c.load !== undefined) return;
    c.load = now();
    c.size = size;
    requestAnimationFrame(() => {
      c.frame = now();
      // a message posted here runs after this frame's style, layout and paint
      const ch = new MessageChannel();
      ch.port1.onmessage = () => {
        c.painted = now();
        st.done.push(c);
        if (st.cur === c) st.cur = null;
      };
      ch.port2.postMessage(0);
    });
  };
  const watch = (img) => {
    if (img.__stWatched) return;
    img.__stWatched = true;
    img.addEventListener('load', () => loaded(img.naturalWidth + 'x' + img.naturalHeight));
  };
  const root = document.querySelector(sel);
  // a LiveFigure's canvas: the picture is drawn (synchronously) when "ak-frame" fires
  root.addEventListener('ak-frame', (e) => {
    const c = st.cur;
    if (c && c.recv !== undefined && c.src === undefined) c.src = now();
    loaded(e.target.width + 'x' + e.target.height);
  });
  root.querySelectorAll('img').forEach(watch);
  new MutationObserver((records) => {
    const c = st.cur;
    for (const r of records) {
      const imgs = r.type === 'attributes' ? [r.target]
        : [...r.addedNodes].flatMap(n => n.nodeType !== 1 ? [] : n.tagName === 'IMG' ? [n]
                                         : [...n.querySelectorAll('img')]);
      for (const img of imgs) {
        watch(img);
        if (c && c.recv !== undefined && c.src === undefined) c.src = now();
      }
    }
  }).observe(root, {subtree: true, childList: true, attributes: true, attributeFilter: ['src']});
}
"""
