"""A real Python MCP SDK server for the project's tests (mcp==2.3.0).

usage:
    python server.py PORT        streamable HTTP on http://127.0.0.1:PORT/mcp
    python server.py stdio       newline-delimited JSON-RPC on stdin/stdout

PORT may also come from the environment variable PORT. Over HTTP the SDK serves
both protocol eras on one endpoint: 2026-07-28 requests without a session, and
the handshake (initialize, Mcp-Session-Id) for older clients.

tools/list is paginated: PEER_PAGE_SIZE tools per page (default 5; 0 turns
pagination off). Besides the tools below, `filler-NN` tools exist only to make
the list span several pages.
"""

from __future__ import annotations

import base64
import os
import sys
from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.resolve import Elicit, Resolve
from mcp.server.mcpserver.utilities.types import Image
from mcp_types import ListToolsResult
from pydantic import BaseModel, Field

# A 1x1 transparent PNG.
TINY_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)

FILLER_TOOLS = 8


class PagedServer(MCPServer):
    """An MCPServer whose tools/list answers in pages, with an opaque numeric cursor."""

    async def _handle_list_tools(self, ctx: Any, params: Any) -> ListToolsResult:
        tools = await self.list_tools()
        size = int(os.environ.get("PEER_PAGE_SIZE", "5"))
        if size <= 0:
            return ListToolsResult(tools=tools)
        cursor = getattr(params, "cursor", None) if params is not None else None
        try:
            start = int(cursor) if cursor else 0
        except ValueError:
            start = 0
        start = max(0, min(start, len(tools)))
        end = start + size
        next_cursor = str(end) if end < len(tools) else None
        return ListToolsResult(tools=tools[start:end], next_cursor=next_cursor)


app = PagedServer(name="brain-python-peer", version="1.0.0")


class Sum(BaseModel):
    """The result of `add`."""

    sum: int = Field(description="a + b")


class Answer(BaseModel):
    """What `ask` and `confirm` ask the user for."""

    ok: bool = Field(description="whether to go on")


@app.tool(description="Returns the given text.")
def echo(text: str) -> str:
    return text


@app.tool(description="Adds two integers; the result is structured.")
def add(a: int, b: int) -> Sum:
    return Sum(sum=a + b)


@app.tool(description="Reports progress `steps` times with a message, then answers with text.")
async def progress(steps: int, ctx: Context) -> str:
    steps = max(0, min(steps, 100))
    for i in range(1, steps + 1):
        await ctx.report_progress(i, steps, f"step {i} of {steps}")
    return f"done after {steps} steps"


@app.tool(description="Asks the user a question with elicitation/create (handshake era).")
async def ask(question: str, ctx: Context) -> str:
    result = await ctx.elicit(question, Answer)
    return f"user said: {result.action}"


def _confirm_resolver(question: str) -> Elicit[Answer]:
    return Elicit(question, Answer)


@app.tool(description="Needs the user's confirmation; in the 2026 era it returns input_required.")
def confirm(question: str, answer: Annotated[Answer, Resolve(_confirm_resolver)]) -> str:
    return f"confirmed: {answer.ok}"


@app.tool(description="Always fails: the result has isError set.")
def fail(reason: str = "requested failure") -> str:
    raise ToolError(reason)


@app.tool(description="Returns a 1x1 PNG image.")
def image() -> Image:
    return Image(data=TINY_PNG, format="png")


def _register_fillers() -> None:
    for n in range(1, FILLER_TOOLS + 1):

        def filler(n: int = n) -> str:
            return f"filler {n}"

        app.add_tool(filler, name=f"filler-{n:02d}", description=f"Filler tool {n} (pagination).")


_register_fillers()


def main(argv: list[str]) -> int:
    arg = argv[1] if len(argv) > 1 else os.environ.get("PORT")
    if arg is None:
        print(__doc__, file=sys.stderr)
        return 2
    if arg == "stdio":
        app.run("stdio")
        return 0
    try:
        port = int(arg)
    except ValueError:
        print(f"server.py: not a port number: {arg!r}", file=sys.stderr)
        return 2
    app.run("streamable-http", host="127.0.0.1", port=port)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
