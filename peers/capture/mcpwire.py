"""A tiny recording MCP-over-HTTP client for capturing fixtures (stdlib only).

Every JSON-RPC message sent or received is appended to a transcript as
{"dir": "send"|"recv", "http": {...}, "message": ...}; `http` is on recv lines only.
"""

from __future__ import annotations

import http.client
import json
import threading
from typing import Any, Callable
from urllib.parse import urlsplit

Handler = Callable[["Session", dict[str, Any]], "dict[str, Any] | None"]

V_2025 = "2025-11-25"
V_2026 = "2026-07-28"


class Session:
    """One logical client: an endpoint, an era, an optional session id, and a transcript."""

    def __init__(self, url: str, era: str, client_caps: dict[str, Any] | None = None) -> None:
        parts = urlsplit(url)
        self.host = parts.hostname or "127.0.0.1"
        self.port = parts.port or 80
        self.path = parts.path or "/mcp"
        self.era = era
        self.client_caps = client_caps or {}
        self.session_id: str | None = None
        self.negotiated: str | None = None
        self.transcript: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.next_id = 1
        self.notes: list[str] = []

    # -- recording -----------------------------------------------------------
    def _record(self, entry: dict[str, Any]) -> None:
        with self.lock:
            self.transcript.append(entry)

    def _recv(self, status: int, ctype: str, raw: str) -> Any:
        """Records a received message, keeping the server's own JSON text when it is one line."""
        message = json.loads(raw)
        text = raw.strip()
        if "\n" in text or "\r" in text:
            text = json.dumps(message, ensure_ascii=False, separators=(",", ":"))
        self._record({"dir": "recv", "http": {"status": status, "content_type": ctype}, "message": message,
                      "raw": text})
        return message

    # -- helpers -------------------------------------------------------------
    def new_id(self) -> int:
        with self.lock:
            i = self.next_id
            self.next_id += 1
        return i

    def meta_2026(self) -> dict[str, Any]:
        return {
            "io.modelcontextprotocol/protocolVersion": V_2026,
            "io.modelcontextprotocol/clientCapabilities": self.client_caps,
            "io.modelcontextprotocol/clientInfo": {"name": "brain-fixture-capture", "version": "0.1.0"},
        }

    def headers_for(self, message: dict[str, Any]) -> dict[str, str]:
        h = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        if self.era == V_2026:
            h["MCP-Protocol-Version"] = V_2026
        elif self.negotiated:
            h["MCP-Protocol-Version"] = self.negotiated
        if self.session_id:
            h["Mcp-Session-Id"] = self.session_id
        method = message.get("method")
        if self.era == V_2026 and method:
            h["Mcp-Method"] = method
            params = message.get("params") or {}
            if method == "tools/call" and "name" in params:
                h["Mcp-Name"] = params["name"]
        return h

    # -- exchange ------------------------------------------------------------
    def post(self, message: dict[str, Any], on_request: Handler | None = None) -> list[dict[str, Any]]:
        """POSTs one message, records it, reads the whole reply (JSON or SSE), returns its messages.

        A server-to-client request on the SSE stream is answered with `on_request`'s
        return value, POSTed on a separate connection while the stream stays open.
        """
        self._record({"dir": "send", "message": message})
        conn = http.client.HTTPConnection(self.host, self.port, timeout=30)
        body = json.dumps(message).encode()
        conn.request("POST", self.path, body=body, headers=self.headers_for(message))
        resp = conn.getresponse()
        sid = resp.getheader("mcp-session-id")
        if sid and not self.session_id:
            self.session_id = sid
        ctype = resp.getheader("content-type", "")
        base_ctype = ctype.split(";")[0].strip()
        got: list[dict[str, Any]] = []
        if base_ctype == "text/event-stream":
            for data in _sse_data(resp, self.notes):
                msg = self._recv(resp.status, base_ctype, data)
                got.append(msg)
                if "method" in msg and "id" in msg and on_request is not None:
                    answer = on_request(self, msg)
                    if answer is not None:
                        self.post_side(answer)
                if "id" in msg and "method" not in msg and msg.get("id") == message.get("id"):
                    break
        else:
            raw = resp.read()
            if raw.strip():
                msg = self._recv(resp.status, base_ctype, raw.decode("utf-8"))
                got.append(msg)
            else:
                self.notes.append(f"{message.get('method', 'response')}: HTTP {resp.status}, empty body")
        conn.close()
        return got

    def post_side(self, message: dict[str, Any]) -> None:
        """POSTs a response or notification (expects 202 and no body)."""
        self._record({"dir": "send", "message": message})
        conn = http.client.HTTPConnection(self.host, self.port, timeout=30)
        conn.request("POST", self.path, body=json.dumps(message).encode(), headers=self.headers_for(message))
        resp = conn.getresponse()
        raw = resp.read()
        if raw.strip():
            ctype = (resp.getheader("content-type", "") or "").split(";")[0].strip()
            if ctype == "text/event-stream":
                for data in _sse_data_bytes(raw, self.notes):
                    self._recv(resp.status, ctype, data)
            else:
                self._recv(resp.status, ctype, raw.decode("utf-8"))
        else:
            self.notes.append(f"side POST: HTTP {resp.status}, empty body")
        conn.close()

    def delete(self) -> None:
        if not self.session_id:
            return
        conn = http.client.HTTPConnection(self.host, self.port, timeout=10)
        conn.request("DELETE", self.path, headers=self.headers_for({}))
        resp = conn.getresponse()
        resp.read()
        conn.close()

    # -- MCP conveniences ------------------------------------------------------
    def request(self, method: str, params: dict[str, Any] | None = None, on_request: Handler | None = None,
                progress_token: Any = None) -> dict[str, Any] | None:
        params = dict(params or {})
        meta: dict[str, Any] = dict(params.pop("_meta", {}) or {})
        if progress_token is not None:
            meta["progressToken"] = progress_token
        if self.era == V_2026:
            meta.update(self.meta_2026())
        if meta:
            params["_meta"] = meta
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": self.new_id(), "method": method}
        if params:
            msg["params"] = params
        got = self.post(msg, on_request)
        for m in got:
            if m.get("id") == msg["id"] and "method" not in m:
                return m
        return got[-1] if got else None

    def initialize(self, version: str = V_2025) -> dict[str, Any] | None:
        msg = {
            "jsonrpc": "2.0",
            "id": self.new_id(),
            "method": "initialize",
            "params": {
                "protocolVersion": version,
                "capabilities": self.client_caps,
                "clientInfo": {"name": "brain-fixture-capture", "version": "0.1.0"},
            },
        }
        got = self.post(msg)
        reply = got[-1] if got else None
        if reply and "result" in reply:
            self.negotiated = reply["result"].get("protocolVersion")
        self.post_side({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return reply


def _sse_events(lines: Any, notes: list[str]):
    data: list[str] = []
    seen_field = False
    for raw in lines:
        line = raw.decode("utf-8").rstrip("\r\n")
        if line == "":
            if seen_field:
                yield "\n".join(data)
            data, seen_field = [], False
            continue
        if line.startswith(":"):
            continue
        seen_field = True
        field, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if field == "data":
            data.append(value)
    if seen_field:
        yield "\n".join(data)


def _sse_data(resp: http.client.HTTPResponse, notes: list[str]):
    def lines():
        while True:
            line = resp.readline()
            if not line:
                return
            yield line

    for data in _sse_events(lines(), notes):
        if data.strip():
            yield data
        else:
            notes.append("SSE event without data (priming event) skipped")


def _sse_data_bytes(raw: bytes, notes: list[str]):
    for data in _sse_events(raw.splitlines(keepends=True), notes):
        if data.strip():
            yield data
        else:
            notes.append("SSE event without data (priming event) skipped")
