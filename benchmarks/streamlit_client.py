"""A Streamlit client that talks to the server the way the browser's frontend does, for load tests.

The frontend of a Streamlit app opens one websocket per browser tab (``/_stcore/stream``, subprotocol
``streamlit``), sends a ``BackMsg`` with ``rerun_script`` (the page, its query string and the widget states) and
receives ``ForwardMsg`` protobufs until ``script_finished``. :class:`Tab` does exactly that, so many tabs can be
driven from one asyncio loop without a browser each, and records what a browser would receive: the time from the
request to the end of the run, the bytes on the wire, the charts drawn, the exceptions and error boxes shown.

Widgets are addressed by the key the page gives them (``Tab.widgets`` maps each key, and each button's label, to the
widget's id, read from the elements of the runs so far); ``Tab.click(key)`` presses a button as the frontend does,
by sending its trigger value.
"""

from __future__ import annotations

import asyncio
import http.cookiejar
import time
import urllib.request
from dataclasses import dataclass, field

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

#: Elements that hold a widget whose value the frontend sends back, and the WidgetState field of each value.
_WIDGET_ELEMENTS = {
    "button": None,
    "checkbox": "bool_value",
    "toggle": "bool_value",
    "download_button": None,
    "number_input": None,
    "radio": "int_value",
    "selectbox": "int_value",
    "slider": "double_array_value",
    "text_input": "string_value",
    "text_area": "string_value",
}


@dataclass
class Run:
    """What one script run sent to the tab."""

    seconds: float = 0.0
    bytes: int = 0
    messages: int = 0
    charts: int = 0
    exceptions: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    markdown: list[str] = field(default_factory=list)
    widgets: set[str] = field(default_factory=set)  # the keys (or button labels) of the widgets this run drew
    finished: bool = False
    failure: str | None = None

    @property
    def ok(self) -> bool:
        return self.finished and self.failure is None


class Tab:
    """One browser tab: an HTTP visit for the page (which sets the XSRF cookie, as the browser's does) and a
    websocket session on which the page is run."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url.rstrip("/")
        self.ws = None
        self.widgets: dict[str, str] = {}
        self.page = ""
        self.query = ""
        self.cookies = http.cookiejar.CookieJar()
        self.page_hash = ""
        self.http_bytes = 0

    async def connect(self, page: str = "", query: str = "") -> None:
        """Load the page's HTML (without its static files; see ``first_visit_bytes`` for those) and open the
        websocket with the cookies the server set."""
        url = f"{self.base_url}/{page}" + (f"?{query}" if query else "")
        self.http_bytes += await asyncio.to_thread(self._get, url)
        cookie = "; ".join(f"{c.name}={c.value}" for c in self.cookies)
        ws_url = self.base_url.replace("http://", "ws://", 1).replace("https://", "wss://", 1) + "/_stcore/stream"
        origin = self.base_url
        headers = {"Cookie": cookie} if cookie else {}
        self.ws = await websockets.connect(
            ws_url,
            subprotocols=["streamlit"],
            origin=origin,
            additional_headers=headers,
            max_size=None,
            open_timeout=60,
            ping_interval=None,
        )

    def _get(self, url: str) -> int:
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.cookies))
        with opener.open(url, timeout=60) as response:
            return len(response.read())

    async def open(self, page: str, query: str = "", *, timeout: float = 120.0) -> Run:
        """Run ``page`` with ``query`` as a browser opening that link does."""
        self.page, self.query = page, query
        msg = BackMsg()
        msg.rerun_script.query_string = query
        msg.rerun_script.page_name = page
        return await self._run(msg, timeout)

    async def click(self, key: str, *, timeout: float = 120.0) -> Run:
        """Press the button whose key is ``key`` (a trigger value, as the frontend sends it)."""
        if key not in self.widgets:
            raise KeyError(f"no widget with key {key!r} on {self.page}; found {sorted(self.widgets)}")
        msg = BackMsg()
        msg.rerun_script.query_string = self.query
        msg.rerun_script.page_name = self.page
        msg.rerun_script.page_script_hash = self.page_hash
        state = WidgetState(id=self.widgets[key], trigger_value=True)
        msg.rerun_script.widget_states.widgets.append(state)
        return await self._run(msg, timeout)

    async def rerun(self, *, timeout: float = 120.0) -> Run:
        """Run the page again with nothing changed (what a fragment's or a progress poll's rerun costs)."""
        msg = BackMsg()
        msg.rerun_script.query_string = self.query
        msg.rerun_script.page_name = self.page
        msg.rerun_script.page_script_hash = self.page_hash
        return await self._run(msg, timeout)

    async def _run(self, msg: BackMsg, timeout: float) -> Run:
        run = Run()
        start = time.perf_counter()
        try:
            await self.ws.send(msg.SerializeToString())
            await asyncio.wait_for(self._receive(run), timeout)
        except TimeoutError:
            run.failure = f"no script_finished within {timeout:g} s"
        except Exception as exc:  # a dropped connection is a failure of this run, reported, not raised
            run.failure = f"{type(exc).__name__}: {exc}"
        run.seconds = time.perf_counter() - start
        return run

    async def _receive(self, run: Run) -> None:
        while True:
            data = await self.ws.recv()
            run.bytes += len(data)
            run.messages += 1
            fm = ForwardMsg()
            fm.ParseFromString(data)
            kind = fm.WhichOneof("type")
            if kind == "new_session":
                continue
            if kind == "page_info_changed" or kind == "navigation":
                if kind == "navigation":
                    self.page_hash = fm.navigation.page_script_hash
                continue
            if kind == "delta" and fm.delta.WhichOneof("type") == "new_element":
                self._element(fm.delta.new_element, run)
            elif kind == "script_finished":
                status = fm.script_finished
                if status == ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                    continue  # the run was interrupted by a rerun it asked for; the next one follows
                run.finished = True
                if status == ForwardMsg.FINISHED_WITH_COMPILE_ERROR:
                    run.failure = "the page did not compile"
                return

    def _element(self, element, run: Run) -> None:
        kind = element.WhichOneof("type")
        if kind == "plotly_chart":
            run.charts += 1
        elif kind == "exception":
            run.exceptions.append(f"{element.exception.type}: {element.exception.message}")
        elif kind == "alert" and element.alert.format == 1:  # Alert.ERROR
            run.errors.append(element.alert.body)
        elif kind == "markdown":
            run.markdown.append(element.markdown.body)
        elif kind in _WIDGET_ELEMENTS:
            widget = getattr(element, kind)
            ident = getattr(widget, "id", "")
            if ident:
                self.widgets[_user_key(ident)] = ident
                run.widgets.add(_user_key(ident))
                if kind == "button":  # a button without a key is found by its label
                    self.widgets.setdefault(widget.label, ident)

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()
            self.ws = None


def _user_key(widget_id: str) -> str:
    """The key a page gave a widget, read from Streamlit's widget id (``$$ID-<hash>-<user key>``); the whole id when
    the widget has no key."""
    parts = widget_id.split("-", 2)
    return parts[2] if len(parts) == 3 and parts[2] not in ("", "None") else widget_id
