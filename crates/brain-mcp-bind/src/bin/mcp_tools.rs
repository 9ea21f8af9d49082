//! `mcp-tools`: discover an MCP server's tools and print Brain bindings. See `mcp-tools -h`.

fn main() {
    brain_mcp_bind::cmd::tools::program()
}
