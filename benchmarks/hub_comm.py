"""The learners of benchmarks/hub_load.py without a browser: each notebook's kernel as JupyterLab
talks to it, through the hub's proxy (a session made through the REST API, then the kernel's
websocket), Run All, and a control's ``comm_msg`` update timed to the new picture it brings back.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
import uuid

import every_control

PRESS_TIMEOUT = 10.0
#: How long a learner waits for a kernel to start or a notebook to load before it is an error
#: (a browser has no shorter limit of its own; JupyterLab shows "Kernel starting" meanwhile).
OPEN_TIMEOUT = 180.0


class OpenError(RuntimeError):
    """A notebook that could not be opened: which step, after how long, and why."""
#: the widgets a comm learner presses, and how (the state the page sends)
SLIDERS = {"FloatSliderModel", "IntSliderModel", "FloatLogSliderModel"}
CHOICES = {"DropdownModel", "SelectionSliderModel", "ToggleButtonsModel", "RadioButtonsModel"}
CHECKS = {"CheckboxModel", "ToggleButtonModel"}
NOTEBOOKS = ("02_self_attention.ipynb", "04_masks_and_positions.ipynb")


# -- a learner without a browser: the kernel's websocket through the proxy ------------------------
def _decode(raw) -> dict:
    """A message from jupyter_server's kernel websocket (JSON text, or its binary framing when the
    message carries buffers: offsets, then the JSON, then the buffers)."""
    if isinstance(raw, str):
        return json.loads(raw)
    n = int.from_bytes(raw[:4], "little")
    offsets = [int.from_bytes(raw[4 + 4 * i: 8 + 4 * i], "little") for i in range(n)]
    end = offsets[1] if n > 1 else len(raw)
    return json.loads(raw[offsets[0]:end].decode())


class KernelLink:
    """One notebook's kernel, as JupyterLab talks to it: a session made through the REST API, then
    the kernel's websocket. Keeps every widget's state from the kernel's comm messages."""

    def __init__(self, base: str, token: str, path: str):
        self.base, self.token, self.path = base, token, path
        self.session = uuid.uuid4().hex
        self.widgets: dict[str, dict] = {}
        self.waiters: dict[str, asyncio.Future] = {}
        self.replies: dict[str, asyncio.Future] = {}
        self.frames: dict[str, float] = {}
        self.ws = None
        self.closed: str | None = None  # why the websocket closed, once it has

    async def open(self, client) -> None:
        from tornado.httpclient import HTTPRequest
        from tornado.websocket import websocket_connect

        body = json.dumps({"path": self.path, "name": self.path, "type": "notebook",
                           "kernel": {"name": "python3"}})
        t0 = time.perf_counter()
        try:
            r = await client.fetch(f"{self.base}/api/sessions", method="POST", body=body,
                                   headers=self._auth(), request_timeout=OPEN_TIMEOUT)
        except Exception as exc:  # noqa: BLE001 - said with the step and how long it waited
            raise OpenError(f"{self.path}: starting its kernel (POST /api/sessions) failed after "
                            f"{time.perf_counter() - t0:.0f} s: {type(exc).__name__}: {exc}") from exc
        self.kernel_id = json.loads(r.body)["kernel"]["id"]
        url = (f"{self.base}/api/kernels/{self.kernel_id}/channels?session_id={self.session}"
               ).replace("http://", "ws://")
        t1 = time.perf_counter()
        try:  # a browser waits for its websocket as long as this (no 20/60 s client limit)
            self.ws = await websocket_connect(HTTPRequest(url, headers=self._auth(),
                                                          connect_timeout=OPEN_TIMEOUT,
                                                          request_timeout=OPEN_TIMEOUT))
        except Exception as exc:  # noqa: BLE001
            raise OpenError(f"{self.path}: connecting to its kernel (websocket) failed after "
                            f"{time.perf_counter() - t1:.0f} s: {type(exc).__name__}: {exc}") from exc
        self.open_seconds = time.perf_counter() - t0
        self.opened_at = time.perf_counter()
        self.reader = asyncio.ensure_future(self._read())

    def _auth(self) -> dict:
        return {"Authorization": f"token {self.token}"}

    async def _read(self) -> None:
        while True:
            raw = await self.ws.read_message()
            if raw is None:
                self.closed = (f"{self.path}: the kernel's websocket was closed by the other end "
                               f"(code {self.ws.close_code}, reason {self.ws.close_reason!r}) "
                               f"{time.perf_counter() - self.opened_at:.0f} s after it opened")
                for fut in list(self.waiters.values()) + list(self.replies.values()):
                    if not fut.done():
                        fut.set_exception(ConnectionError(self.closed))
                return
            msg = _decode(raw)
            kind, content = msg["header"]["msg_type"], msg["content"]
            parent = msg.get("parent_header", {}).get("msg_id")
            if kind == "comm_open" and content.get("target_name") == "jupyter.widget":
                self.widgets[content["comm_id"]] = dict(content["data"].get("state", {}))
            elif kind == "comm_msg":
                state = content.get("data", {}).get("state") or {}
                self.widgets.setdefault(content["comm_id"], {}).update(state)
                if "frame" in state and parent in self.waiters and not self.waiters[parent].done():
                    self.waiters[parent].set_result(time.perf_counter())
            elif kind == "status" and content.get("execution_state") == "idle" \
                    and parent in self.waiters and not self.waiters[parent].done():
                self.waiters[parent].set_result(None)  # handled, no new picture
            elif kind == "execute_reply" and parent in self.replies:
                self.replies.pop(parent).set_result(msg)

    def _msg(self, msg_type: str, content: dict, channel: str = "shell") -> dict:
        mid = uuid.uuid4().hex
        return {"header": {"msg_id": mid, "msg_type": msg_type, "session": self.session,
                           "username": "learner", "version": "5.3",
                           "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())},
                "parent_header": {}, "metadata": {}, "content": content, "channel": channel,
                "buffers": []}

    async def run_all(self, client) -> list[str]:
        """Every code cell, all sent at once; the errors of cells not tagged raises-exception."""
        t0 = time.perf_counter()
        try:
            r = await client.fetch(f"{self.base}/api/contents/{self.path}?content=1",
                                   headers=self._auth(), request_timeout=OPEN_TIMEOUT)
        except Exception as exc:  # noqa: BLE001
            raise OpenError(f"{self.path}: loading the notebook (GET /api/contents) failed after "
                            f"{time.perf_counter() - t0:.0f} s: {type(exc).__name__}: {exc}") from exc
        cells = [c for c in json.loads(r.body)["content"]["cells"] if c["cell_type"] == "code"]
        futures = []
        for c in cells:
            # as JupyterLab: a cell tagged raises-exception does not stop the cells after it
            expected = "raises-exception" in c.get("metadata", {}).get("tags", [])
            msg = self._msg("execute_request", {"code": c["source"], "silent": False,
                                                "store_history": True, "user_expressions": {},
                                                "allow_stdin": False, "stop_on_error": not expected})
            fut = asyncio.get_running_loop().create_future()
            self.replies[msg["header"]["msg_id"]] = fut
            futures.append((c, fut))
            await self.ws.write_message(json.dumps(msg))
        errors = []
        for c, fut in futures:
            reply = await asyncio.wait_for(fut, 300)
            content = reply["content"]
            expected = "raises-exception" in c.get("metadata", {}).get("tags", [])
            if content.get("status") == "error" and not expected:
                errors.append(f"{self.path}: {content.get('ename')}: {content.get('evalue')}")
        return errors

    def controls(self) -> dict[str, str]:
        """name -> comm id of every enabled slider, menu and checkbox the kernel made."""
        out = {}
        for cid, st in self.widgets.items():
            model = st.get("_model_name")
            if model in SLIDERS | CHOICES | CHECKS and not st.get("disabled"):
                name = f"{st.get('description') or model} #{len(out)}"
                out[name] = cid
        return out

    def next_state(self, cid: str, forward: bool) -> dict | None:
        st = self.widgets[cid]
        model = st["_model_name"]
        if model in SLIDERS:
            step = st.get("step") or 1
            v = st["value"] + (step if forward else -step)
            if not st["min"] <= v <= st["max"]:
                v = st["value"] - (step if forward else -step)
            return {"value": v}
        if model in CHOICES:
            n = len(st.get("_options_labels") or [])
            if n < 2:
                return None
            i = st.get("index") or 0
            return {"index": (i + (1 if forward else -1)) % n}
        return {"value": not st.get("value")}

    async def press(self, cid: str, forward: bool) -> float | None:
        """One control's new value as the page sends it; seconds to the new picture (None: handled
        without a new picture). Raises TimeoutError when the kernel does not answer."""
        state = self.next_state(cid, forward)
        if state is None:
            return None
        self.widgets[cid].update(state)
        msg = self._msg("comm_msg", {"comm_id": cid, "data": {"method": "update", "state": state,
                                                              "buffer_paths": []}})
        fut = asyncio.get_running_loop().create_future()
        self.waiters[msg["header"]["msg_id"]] = fut
        t0 = time.perf_counter()
        await self.ws.write_message(json.dumps(msg))
        try:
            t1 = await asyncio.wait_for(fut, PRESS_TIMEOUT)
        finally:
            self.waiters.pop(msg["header"]["msg_id"], None)
        return None if t1 is None else t1 - t0

    def close(self) -> None:
        if self.ws is not None:
            self.ws.close()


async def comm_learner(hub, name: str, token: str, presses: int, seed: int,
                       start: asyncio.Event, result: dict) -> None:
    from tornado.httpclient import AsyncHTTPClient

    client = AsyncHTTPClient(max_clients=4)
    base = hub.user_url(name)
    links = []
    try:
        await start.wait()
        for nb in NOTEBOOKS:
            link = KernelLink(base, token, nb)
            await link.open(client)
            links.append(link)
            result["open_s"] = max(result.get("open_s", 0.0), link.open_seconds)
            result["errors"] += await link.run_all(client)
        result["ran_all"] = time.perf_counter()
        for link in links:
            found = link.controls()
            result.setdefault("controls", {})[link.path] = len(found)
            plan = every_control.learner_plan(list(found), rounds=2, seed=seed)[:presses]
            rng = random.Random(f"{seed} {link.path}")
            for control, forward, _pause in plan:
                await asyncio.sleep(rng.uniform(*every_control.PAUSE_S))
                try:
                    dt = await link.press(found[control], forward)
                except (TimeoutError, asyncio.TimeoutError):
                    result["errors"].append(f"{link.path} / {control}: no answer in {PRESS_TIMEOUT:.0f} s")
                    continue
                if dt is None:
                    result["unchanged"] += 1
                else:
                    result["ms"].append(dt * 1000)
    except Exception as exc:  # noqa: BLE001 - a learner that fails is counted, the class goes on
        closed = "; ".join(link.closed for link in links if link.closed)
        result["errors"].append(f"{name}: {type(exc).__name__}: {exc}" + (f" ({closed})" if closed else ""))
    finally:
        for link in links:
            link.close()
