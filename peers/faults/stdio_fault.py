"""A misbehaving MCP server over stdio, for the managed-server fault tests.

usage: python3 stdio_fault.py MODE [--marker=TEXT]

It speaks the handshake era with one tool, `work`, and misbehaves in `tools/call`
(or later) as MODE says:

    exit         writes a line to stderr and exits with status 3 mid-call
    garbage      writes non-JSON lines to stdout without end
    huge         writes one 100 MB line to stdout, then answers
    stderr       writes 20 MB to stderr, then answers
    hang         never answers (and logs each message's method to stderr)
    silent-init  only the first process (FAULT_STATE names a file that marks it)
                 answers initialize; every later one reads and never answers
    ok           answers (`work` returns "worked")

--marker is ignored: tests find the processes by it. Needs only python3.
"""

import json
import os
import sys

MODE = sys.argv[1] if len(sys.argv) > 1 else "ok"

FIRST = True
STATE = os.environ.get("FAULT_STATE")
if STATE:
    FIRST = not os.path.exists(STATE)
    with open(STATE, "a", encoding="utf-8"):
        pass

TOOL = {
    "name": "work",
    "description": "Does some work, unless the server misbehaves.",
    "inputSchema": {"type": "object"},
}


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def result(request_id, value):
    send({"jsonrpc": "2.0", "id": request_id, "result": value})


def answer(request_id):
    result(request_id, {"content": [{"type": "text", "text": "worked"}], "isError": False})


def call(request_id):
    if MODE == "exit":
        sys.stderr.write("fault: exiting in the middle of a call\n")
        sys.stderr.flush()
        os._exit(3)
    if MODE == "garbage":
        line = "this is not JSON-RPC " * 4 + "\n"
        while True:
            sys.stdout.write(line * 64)
            sys.stdout.flush()
    if MODE == "huge":
        chunk = "x" * (1 << 20)
        for _ in range(100):
            sys.stdout.write(chunk)
        sys.stdout.write("\n")
        sys.stdout.flush()
        answer(request_id)
        return
    if MODE == "stderr":
        chunk = "noise on stderr " * 4096 + "\n"
        for _ in range(320):
            sys.stderr.write(chunk)
        sys.stderr.write("fault: the last stderr line\n")
        sys.stderr.flush()
        answer(request_id)
        return
    if MODE == "hang":
        return
    answer(request_id)


for raw in sys.stdin:
    try:
        msg = json.loads(raw)
    except ValueError:
        continue
    method = msg.get("method")
    request_id = msg.get("id")
    if MODE == "hang":
        sys.stderr.write("fault: got %s\n" % method)
        sys.stderr.flush()
    if method == "initialize":
        if MODE == "silent-init" and not FIRST:
            continue
        result(
            request_id,
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "stdio-fault", "version": "1.0"},
            },
        )
    elif method == "tools/list":
        result(request_id, {"tools": [TOOL]})
    elif method == "tools/call":
        call(request_id)
    elif request_id is not None and method is not None:
        send(
            {
                "jsonrpc": "2.0",
                "id": request_id,
                "error": {"code": -32601, "message": "Method not found"},
            }
        )
