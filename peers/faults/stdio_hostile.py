"""A hostile MCP server over stdio, for the red-team tests (tests/it/redteam2_*.rs).

usage: python3 stdio_hostile.py ERA MODE [--marker=TEXT]

ERA is `2026` (answers `server/discover`, one child serves every call) or `handshake`
(refuses `server/discover`, a child per call). Every mode offers the tools `work`,
`trap` and `big`; MODE says how `tools/call` (or the process) misbehaves:

    progress   `work` sends `count` progress notifications whose message is `pad`
               characters long, then answers (arguments `count`, `pad`)
    pair       holds each `tools/call` until two are waiting, then sends each one a
               progress notification (1 for the first, 2 for the second) whose message
               is its argument `secret`, and answers each with its `secret`
    pings      `work` writes `ping` requests without end and never reads stdin again
    big        `work` is held until a `big` call comes; `big` answers with one line
               of 10 MiB, then the `work` calls held are answered
    stall      `trap` answers `input_required` with a 1 MiB `requestState`, then sends
               40 progress notifications for its token, answers the `work` calls
               waiting (after 1 s), and never reads stdin again
    orphan     `work` starts a grandchild that keeps stdout open (its command line holds
               the marker), then exits with status 3
    env        `work` answers with the value of the environment variable named by its
               argument `name` (empty when unset): a server that reads its environment
    mute       reads every line and answers none
    noexit     answers normally, but outlives the end of stdin by 60 s

--marker is passed to grandchildren; tests find processes by it. Needs only python3.
"""

import json
import os
import subprocess
import sys
import time

ERA = sys.argv[1]
MODE = sys.argv[2]
MARKER = next((a for a in sys.argv[3:] if a.startswith("--marker=")), "--marker=none")

STATELESS = "2026-07-28"

TOOLS = [
    {"name": name, "description": "A tool of the hostile server.", "inputSchema": {"type": "object"}}
    for name in ("work", "trap", "big")
]


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def result(request_id, value):
    if ERA == "2026" and "resultType" not in value:
        value["resultType"] = "complete"
    send({"jsonrpc": "2.0", "id": request_id, "result": value})


def error(request_id, code, message):
    send({"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}})


def text(request_id, words):
    result(request_id, {"content": [{"type": "text", "text": words}], "isError": False})


def progress(token, n, message):
    send(
        {
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": {"progressToken": token, "progress": n, "message": message},
        }
    )


def token_of(params):
    return (params.get("_meta") or {}).get("progressToken")


WAITING = []  # (id, params) of `work` calls held back


def call(request_id, params):
    name = params.get("name")
    args = params.get("arguments") or {}
    token = token_of(params)
    if MODE == "progress":
        pad = "p" * int(args.get("pad", 100))
        for n in range(1, int(args.get("count", 10)) + 1):
            progress(token, n, pad)
        text(request_id, "worked")
    elif MODE == "pair":
        WAITING.append((request_id, params))
        if len(WAITING) < 2:
            return
        held = list(WAITING)
        WAITING.clear()
        for n, (rid, p) in enumerate(held, 1):
            secret = (p.get("arguments") or {}).get("secret", "")
            progress(token_of(p), n, secret)
        time.sleep(0.2)
        for rid, p in held:
            text(rid, (p.get("arguments") or {}).get("secret", ""))
    elif MODE == "pings":
        n = 0
        while True:
            n += 1
            send({"jsonrpc": "2.0", "id": "ping-%d" % n, "method": "ping"})
    elif MODE == "big" and name == "big":
        sys.stdout.write('{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"' % json.dumps(request_id))
        chunk = "x" * (1 << 20)
        for _ in range(10):
            sys.stdout.write(chunk)
        sys.stdout.write('"}],"resultType":"complete"}}\n')
        sys.stdout.flush()
        time.sleep(0.2)
        for rid, _ in WAITING:
            text(rid, "worked")
        WAITING.clear()
    elif MODE == "big":
        WAITING.append((request_id, params))
    elif MODE == "stall" and name == "trap":
        if "inputResponses" in params:
            text(request_id, "answered")
            return
        result(
            request_id,
            {
                "resultType": "input_required",
                "inputRequests": {
                    "confirm": {
                        "method": "elicitation/create",
                        "params": {
                            "mode": "form",
                            "message": "Proceed?",
                            "requestedSchema": {"type": "object", "properties": {}},
                        },
                    }
                },
                "requestState": "s" * (1 << 20),
            },
        )
        for n in range(1, 41):
            progress(token, n, "after the result")
        time.sleep(1)
        for rid, _ in WAITING:
            text(rid, "worked")
        WAITING.clear()
        time.sleep(120)
    elif MODE == "stall":
        WAITING.append((request_id, params))
    elif MODE == "env":
        text(request_id, os.environ.get(str(args.get("name", "")), ""))
    elif MODE == "orphan":
        subprocess.Popen(
            [sys.executable, "-c", "import time; time.sleep(30)", MARKER + "-grandchild"],
            stdin=subprocess.DEVNULL,
        )
        os._exit(3)
    else:
        text(request_id, "worked")


for raw in sys.stdin:
    try:
        msg = json.loads(raw)
    except ValueError:
        continue
    if MODE == "mute":
        continue
    method = msg.get("method")
    request_id = msg.get("id")
    params = msg.get("params") or {}
    if method == "server/discover":
        if ERA == "2026":
            result(request_id, {"supportedVersions": [STATELESS], "capabilities": {"tools": {}}})
        else:
            error(request_id, -32601, "Method not found")
    elif method == "initialize":
        result(
            request_id,
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "stdio-hostile", "version": "1.0"},
            },
        )
    elif method == "tools/list":
        value = {"tools": TOOLS}
        if ERA == "2026":
            value.update({"ttlMs": 0, "cacheScope": "public"})
        result(request_id, value)
    elif method == "tools/call":
        call(request_id, params)
    elif request_id is not None and method is not None:
        error(request_id, -32601, "Method not found")

if MODE == "noexit":
    time.sleep(60)
