"""Replays MCP exchanges against the real peers and writes them as fixtures.

usage: python3 peers/capture/capture.py [OUT_DIR]
    OUT_DIR defaults to crates/brain-mcp-proto/tests/fixtures

Runs peers/install.sh first, starts each peer on a free port, and writes one
<peer>/<scenario>.jsonl per scenario: one JSON object per line,
{"dir": "send"|"recv", "http": {"status", "content_type"}, "message": <verbatim>}
(`http` on recv lines only). Standard library only; the peers do the rest.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

import mcpwire as w

ROOT = Path(__file__).resolve().parents[2]
PEERS = ROOT / "target" / "peers"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port: int, proc: subprocess.Popen[bytes], what: str) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"{what} exited early with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise SystemExit(f"{what} did not listen on {port}")


def start(kind: str) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    env = dict(os.environ)
    if kind == "everything":
        cmd = ["node", str(PEERS / "everything/node_modules/@modelcontextprotocol/server-everything/dist/index.js"),
               "streamableHttp"]
        env["PORT"] = str(port)
    elif kind == "python":
        cmd = [str(PEERS / "python-venv/bin/python"), str(ROOT / "peers/python/server.py"), str(port)]
    else:
        cmd = [str(PEERS / "rmcp/debug/rmcp-peer-server"), str(port)]
    log = open(PEERS / f"capture-{kind}.log", "wb")
    proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)
    wait_port(port, proc, kind)
    return proc, f"http://127.0.0.1:{port}/mcp"


def write(out: Path, peer: str, name: str, sessions: list[w.Session], index: list[str], what: str) -> None:
    path = out / peer / f"{name}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as f:
        for s in sessions:
            for entry in s.transcript:
                f.write(line(entry) + "\n")
    index.append(f"{peer}/{name}.jsonl\t{what}")
    print(f"wrote {path.relative_to(ROOT)}", file=sys.stderr)


def line(entry: dict[str, Any]) -> str:
    """One fixture line; a received message is written as the exact JSON text the server sent."""
    compact = {"ensure_ascii": False, "separators": (",", ":")}
    head = {k: v for k, v in entry.items() if k not in ("message", "raw")}
    text = entry.get("raw") or json.dumps(entry["message"], **compact)
    return json.dumps(head, **compact)[:-1] + ',"message":' + text + "}"


def decline(_s: w.Session, req: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": req["id"], "result": {"action": "decline"}}


def refuse(_s: w.Session, req: dict[str, Any]) -> dict[str, Any]:
    # What Brain's bindings do: refuse user-input requests so the server can unwind.
    return {"jsonrpc": "2.0", "id": req["id"],
            "error": {"code": -32601, "message": "this client does not answer user-input requests"}}


ELICIT_CAPS = {"elicitation": {"form": {}}}


def handshake(url: str, caps: dict[str, Any] | None = None) -> w.Session:
    s = w.Session(url, w.V_2025, caps)
    s.initialize()
    return s


def capture_everything(url: str, out: Path, index: list[str]) -> None:
    p = "everything"
    s = handshake(url)
    s.delete()
    write(out, p, "initialize", [s], index, "initialize (no client capabilities), initialized notification")

    s = w.Session(url, w.V_2026)
    s.request("server/discover")
    write(out, p, "discover-refused", [s], index, "server/discover without a session: HTTP 400, -32000, id null")

    def scenario(name: str, what: str, body: Callable[[w.Session], None], caps: dict[str, Any] | None = None):
        s = handshake(url, caps)
        s.transcript.clear()  # the initialize exchange is in initialize.jsonl
        body(s)
        s.delete()
        write(out, p, name, [s], index, what)

    scenario("tools-list", "tools/list for a client without capabilities (one page, no nextCursor)",
             lambda s: s.request("tools/list"))
    scenario("tools-list-elicitation-client",
             "tools/list for a client declaring elicitation+sampling (extra trigger-* tools)",
             lambda s: s.request("tools/list"), {"elicitation": {}, "sampling": {}})
    scenario("call-echo", "tools/call echo answered as SSE (priming event skipped)",
             lambda s: s.request("tools/call", {"name": "echo", "arguments": {"message": "hello"}}))
    scenario("call-get-sum", "tools/call get-sum",
             lambda s: s.request("tools/call", {"name": "get-sum", "arguments": {"a": 2, "b": 3}}))
    scenario("call-annotated-message", "tools/call get-annotated-message with an image (annotations on blocks)",
             lambda s: s.request("tools/call", {"name": "get-annotated-message",
                                                "arguments": {"messageType": "error", "includeImage": True}}))
    scenario("call-progress", "tools/call trigger-long-running-operation with a progress token: SSE with progress",
             lambda s: s.request("tools/call", {"name": "trigger-long-running-operation",
                                                "arguments": {"duration": 1, "steps": 3}}, progress_token="brain-call-1"))
    scenario("call-image", "tools/call get-tiny-image: text + image + text blocks",
             lambda s: s.request("tools/call", {"name": "get-tiny-image", "arguments": {}}))
    scenario("call-structured", "tools/call get-structured-content: structuredContent + text",
             lambda s: s.request("tools/call", {"name": "get-structured-content", "arguments": {"location": "New York"}}))
    scenario("call-resource-links", "tools/call get-resource-links: resource_link blocks",
             lambda s: s.request("tools/call", {"name": "get-resource-links", "arguments": {"count": 2}}))
    scenario("call-resource-reference", "tools/call get-resource-reference: embedded resource block",
             lambda s: s.request("tools/call", {"name": "get-resource-reference",
                                                "arguments": {"resourceType": "Text", "resourceId": 1}}))
    scenario("call-is-error", "tools/call get-sum with bad arguments: isError result (not a JSON-RPC error)",
             lambda s: s.request("tools/call", {"name": "get-sum", "arguments": {"a": "x"}}))
    scenario("call-unknown-tool", "tools/call of a tool that does not exist: isError result",
             lambda s: s.request("tools/call", {"name": "no-such-tool", "arguments": {}}))
    scenario("call-research-needs-tasks", "tools/call simulate-research-query without task support",
             lambda s: s.request("tools/call", {"name": "simulate-research-query",
                                                "arguments": {"topic": "mcp", "ambiguous": False}}))
    scenario("elicitation",
             "trigger-elicitation-request (elicitation declared): server sends elicitation/create, client declines",
             lambda s: s.request("tools/call", {"name": "trigger-elicitation-request", "arguments": {}},
                                 on_request=decline), {"elicitation": {}})
    scenario("sampling-refused",
             "trigger-sampling-request (sampling declared): server sends sampling/createMessage, "
             "client answers an error",
             lambda s: s.request("tools/call", {"name": "trigger-sampling-request",
                                                "arguments": {"prompt": "hi", "maxTokens": 10}},
                                 on_request=refuse), {"sampling": {}})
    scenario("tools-list-roots-client", "tools/list for a client declaring roots",
             lambda s: s.request("tools/list"), {"roots": {"listChanged": True}})
    scenario("ping", "ping", lambda s: s.request("ping"))


def capture_python(url: str, out: Path, index: list[str]) -> None:
    p = "python"
    s = handshake(url)
    s.delete()
    write(out, p, "initialize", [s], index, "handshake era: initialize, initialized notification")

    s = w.Session(url, w.V_2026)
    s.request("server/discover")
    write(out, p, "discover", [s], index, "2026-07-28 server/discover (JSON reply, resultType complete)")

    def modern(name: str, what: str, body: Callable[[w.Session], None], caps: dict[str, Any] | None = None):
        s = w.Session(url, w.V_2026, caps)
        body(s)
        write(out, p, name, [s], index, what)

    def paged(s: w.Session) -> None:
        cursor = None
        for _ in range(10):
            r = s.request("tools/list", {"cursor": cursor} if cursor else None)
            cursor = (r or {}).get("result", {}).get("nextCursor")
            if not cursor:
                break

    modern("tools-list-paginated", "2026 era tools/list followed through every nextCursor (5 per page)", paged)
    modern("call-echo-json", "2026 era tools/call echo answered as application/json",
           lambda s: s.request("tools/call", {"name": "echo", "arguments": {"text": "hello"}}))
    modern("call-progress-sse", "2026 era tools/call progress with a progress token: SSE, 3 progress notifications",
           lambda s: s.request("tools/call", {"name": "progress", "arguments": {"steps": 3}},
                               progress_token="brain-call-1"))
    modern("call-structured", "2026 era tools/call add: structuredContent from a pydantic model",
           lambda s: s.request("tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}}))
    modern("call-image", "2026 era tools/call image: one image block",
           lambda s: s.request("tools/call", {"name": "image", "arguments": {}}))
    modern("call-is-error", "2026 era tools/call fail: isError result",
           lambda s: s.request("tools/call", {"name": "fail", "arguments": {"reason": "on purpose"}}))
    modern("ask-no-elicitation", "2026 era tools/call ask, client declared no elicitation: JSON-RPC error -32600",
           lambda s: s.request("tools/call", {"name": "ask", "arguments": {"question": "go on?"}}))
    modern("confirm-missing-capability",
           "2026 era tools/call confirm, client declared no elicitation: -32021 with requiredCapabilities",
           lambda s: s.request("tools/call", {"name": "confirm", "arguments": {"question": "go on?"}}))

    def input_required(s: w.Session) -> None:
        r = s.request("tools/call", {"name": "confirm", "arguments": {"question": "go on?"}})
        res = (r or {}).get("result", {})
        if res.get("resultType") != "input_required":
            return
        responses = {key: {"action": "accept", "content": {"ok": True}} for key in res.get("inputRequests", {})}
        params: dict[str, Any] = {"name": "confirm", "arguments": {"question": "go on?"}, "inputResponses": responses}
        if "requestState" in res:
            params["requestState"] = res["requestState"]
        s.request("tools/call", params)

    modern("input-required", "2026 era tools/call confirm with elicitation declared: input_required, "
           "then the retry with inputResponses + requestState completes", input_required, ELICIT_CAPS)

    def handshake_scenario(name: str, what: str, body: Callable[[w.Session], None],
                           caps: dict[str, Any] | None = None):
        s = handshake(url, caps)
        s.transcript.clear()
        body(s)
        s.delete()
        write(out, p, name, [s], index, what)

    handshake_scenario("handshake-tools-list-paginated", "handshake era tools/list, every page", paged)
    handshake_scenario("handshake-call-echo", "handshake era tools/call echo (SSE reply)",
                       lambda s: s.request("tools/call", {"name": "echo", "arguments": {"text": "hello"}}))
    handshake_scenario("handshake-call-progress", "handshake era tools/call progress: SSE with progress",
                       lambda s: s.request("tools/call", {"name": "progress", "arguments": {"steps": 3}},
                                           progress_token="brain-call-1"))
    handshake_scenario("elicitation-refused",
                       "handshake era tools/call ask from a client that declared no capabilities: the server "
                       "still sends elicitation/create; the client answers an error, which becomes the call's error",
                       lambda s: s.request("tools/call", {"name": "ask", "arguments": {"question": "go on?"}},
                                           on_request=refuse))
    handshake_scenario("handshake-confirm-missing-capability",
                       "handshake era tools/call confirm, no elicitation declared: -32021",
                       lambda s: s.request("tools/call", {"name": "confirm", "arguments": {"question": "go on?"}},
                                           on_request=refuse))
    handshake_scenario("elicitation-declined",
                       "handshake era tools/call ask (elicitation declared): elicitation/create, client declines",
                       lambda s: s.request("tools/call", {"name": "ask", "arguments": {"question": "go on?"}},
                                           on_request=decline), ELICIT_CAPS)


def capture_rmcp(url: str, out: Path, index: list[str]) -> None:
    p = "rmcp"
    s = handshake(url)
    s.delete()
    write(out, p, "initialize", [s], index, "handshake era: initialize (SSE with a priming event), initialized")

    s = w.Session(url, w.V_2026)
    s.request("server/discover")
    write(out, p, "discover", [s], index, "server/discover without a session (rmcp answers it, as SSE)")

    def scenario(name: str, what: str, body: Callable[[w.Session], None]):
        s = handshake(url)
        s.transcript.clear()
        body(s)
        s.delete()
        write(out, p, name, [s], index, what)

    scenario("tools-list", "tools/list", lambda s: s.request("tools/list"))
    scenario("call-echo", "tools/call echo",
             lambda s: s.request("tools/call", {"name": "echo", "arguments": {"text": "hello"}}))
    scenario("call-structured", "tools/call add: structuredContent",
             lambda s: s.request("tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}}))
    scenario("call-progress", "tools/call progress with a progress token: SSE with progress",
             lambda s: s.request("tools/call", {"name": "progress", "arguments": {"steps": 3}},
                                 progress_token="brain-call-1"))
    scenario("call-is-error", "tools/call fail: isError result",
             lambda s: s.request("tools/call", {"name": "fail", "arguments": {}}))
    scenario("call-unknown-tool", "tools/call of a tool that does not exist: JSON-RPC error",
             lambda s: s.request("tools/call", {"name": "no-such-tool", "arguments": {}}))

    s = w.Session(url, w.V_2026)
    s.request("tools/call", {"name": "echo", "arguments": {"text": "hello"}})
    write(out, p, "modern-call-echo", [s], index, "2026 era tools/call echo without a session")


README_HEAD = """# Captured MCP traffic

Real exchanges with real MCP servers, for the round-trip tests of `brain-mcp-proto`.
Generated by `python3 peers/capture/capture.py` (do not edit by hand; re-run it). The
script installs the peers with `peers/install.sh`, starts each on a free port, replays
the scenarios below with a small stdlib HTTP client (`peers/capture/mcpwire.py`) and
rewrites this folder.

Peers:
- `everything/`: npm `@modelcontextprotocol/server-everything@2026.8.31` (reports
  itself as `mcp-servers/everything` 2.0.0), `streamableHttp` mode, handshake era
  (2025-11-25) only.
- `python/`: PyPI `mcp==2.3.0`, the server in `peers/python/server.py`; both eras on
  one endpoint. Its `tools/list` pages 5 tools at a time (`PEER_PAGE_SIZE`).
- `rmcp/`: crate `rmcp` 3.11.0, the server in `peers/rmcp-server/`; sessions plus
  session-less 2026-07-28 requests.

Format: one JSON object per line, in the order the client saw them:
`{"dir":"send"|"recv","http":{"status":N,"content_type":"..."},"message":{...}}`.
`http` is only on `recv` lines; `content_type` is the media type without parameters.
A received `message` is the exact JSON text the server sent (one SSE event's `data`,
or the whole JSON body). Sent messages are what the capture client wrote.

What is left out:
- SSE events without data. The everything server sends one (an `id` and empty
  `data`) before each reply; rmcp sends one (`data:` empty, `id: 0`, `retry: 3000`)
  at the start of each stream. The Python SDK sends none.
- Replies without a body: `notifications/initialized` and a client's answer to a
  server request get HTTP 202 with an empty body from all three peers.
- HTTP headers (session ids, `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`); the
  client sends them as the 2025-11-25 and 2026-07-28 transports require, and DELETEs
  each handshake session at the end.

In the handshake-era scenarios after `initialize.jsonl` the initialize exchange is
omitted: each file starts at the first request after `notifications/initialized`.
The capabilities that session declared are named in the file's line below (none
unless stated).

Re-running the capture changes a few values and nothing else: timestamps and session
ids inside tool texts, and the sealed `requestState` of `python/input-required.jsonl`.

Files:
"""


def readme(index: list[str]) -> str:
    rows = []
    for entry in index:
        name, what = entry.split("\t", 1)
        rows.append(f"- `{name}`: {what}")
    return README_HEAD + "\n".join(rows) + "\n"


def main(argv: list[str]) -> int:
    out = Path(argv[1]) if len(argv) > 1 else ROOT / "crates/brain-mcp-proto/tests/fixtures"
    subprocess.run([str(ROOT / "peers/install.sh")], check=True)
    index: list[str] = []
    for kind, fn in (("everything", capture_everything), ("python", capture_python), ("rmcp", capture_rmcp)):
        proc, url = start(kind)
        try:
            fn(url, out, index)
        finally:
            proc.terminate()
            proc.wait(timeout=10)
    (out / "README.md").write_text(readme(index))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
